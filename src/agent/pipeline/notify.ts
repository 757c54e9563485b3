/**
 * Trust level notify, told apart from auto (issue 14 item 9): after an agent's notify-level call ran, the
 * researcher is told through an `agent.notified` event.
 */
import type { EventRecord } from '../../domain/events';
import type { AnyTool } from '../../tools/defineTool';
import { describeRequest } from '../describeRequest';
import { sourceIdsOf } from './arguments';
import type { PipelineCore } from './core';
import { emitSystemEvents } from './events';
import type { Caller } from './types';

/**
 * Trust level notify, told apart from auto (issue 14 item 9): after an agent's notify-level call ran, stores and
 * publishes `agent.notified` {tool, title, agent (client name), coder, session_id, arguments (a JSON summary of at
 * most 300 code units), summary (what it did, in words: src/agent/describeRequest.ts), outcome 'ok',
 * correlation_id (the call's, for undo_agent_action; null when it stored no events), source_id (the first source it
 * names, or null)}. Its own correlation id, so undoing the call never meets it. Never throws (a failure is logged).
 */
export function notifyResearcher(core: PipelineCore, tool: AnyTool, input: unknown, caller: Caller, data: unknown, events: readonly EventRecord[]): void {
  try {
    const repo = core.opts.project()?.repo;
    let summary = tool.title;
    try {
      if (repo) summary = describeRequest(repo, tool, input, { data, events });
    } catch {
      // words are a courtesy: the title stands in
    }
    let args = JSON.stringify(input ?? {});
    if (args.length > 300) args = `${args.slice(0, 299)}…`;
    const fromEvents = events.map((e) => e.payload.source_id).find((x) => typeof x === 'number');
    const payload = {
      tool: tool.name,
      title: tool.title,
      agent: caller.client_name,
      coder: caller.user,
      session_id: caller.session_id,
      arguments: args,
      summary,
      outcome: 'ok',
      correlation_id: events[0]?.metadata.correlation_id ?? null,
      source_id: (fromEvents as number | undefined) ?? sourceIdsOf(input)[0] ?? null,
    };
    emitSystemEvents(core, caller, [{ event_type: 'agent.notified', aggregate_type: 'agent', aggregate_id: caller.client_name || caller.session_id, payload }]);
  } catch (e) {
    core.logger.error(`could not record agent.notified for ${tool.name}`, e);
  }
}
