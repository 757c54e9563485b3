/**
 * Stage 4c and the redaction hook (issue 14 item 11, src/agent/agentAccess.ts): sources the researcher closed to
 * agents refuse the calls that name them, and their words are redacted from answers, reads made on an agent's
 * behalf and the event streams.
 */
import { isToolError } from '../../core/errors';
import type { EventRecord } from '../../domain/events';
import type { AnyTool } from '../../tools/defineTool';
import { agentNameOf, agentViewOf, type AgentView } from '../agentAccess';
import type { PipelineCore } from './core';
import { StageFailure } from './stageFailure';
import type { Caller } from './types';

/**
 * Stage 4c: sources the researcher closed to agents (issue 14 item 11, src/agent/agentAccess.ts): an agent's
 * call that names a closed source or a segment of one, or that writes a file while a source is closed to it,
 * is refused before the trust decision (never queued). Returns the agent's view of the closed sources, which
 * redacts the call's answer ({@link AgentView.redact}), or null (the researcher; nothing closed to it).
 * Errors: SOURCE_CLOSED (denied).
 */
export function checkClosedSources(core: PipelineCore, caller: Caller, tool: AnyTool, input: unknown): AgentView | null {
  const view = closedSourcesOf(core, caller);
  try {
    view?.check(tool, input);
  } catch (e) {
    if (isToolError(e)) throw new StageFailure(e.code, e.message, e.details, true);
    throw e;
  }
  return view;
}

/** The sources closed to `caller` in the open project (agentViewOf), or null: the researcher, no agent layer, no project, nothing closed to it. */
export function closedSourcesOf(core: PipelineCore, caller: Caller): AgentView | null {
  if (!core.opts.agent || caller.researcher) return null;
  const project = core.opts.project();
  return project ? agentViewOf(project, agentNameOf(caller)) : null;
}

/**
 * `data` as `caller` may see it: the words of sources closed to it replaced by a marker naming the source
 * ({@link AgentView.redact}); unchanged for the researcher. For reads made outside ToolPipeline.invoke on an
 * agent's behalf (the MCP resources and prompts the ContextBuilder answers).
 */
export function redactFor<T>(core: PipelineCore, caller: Caller, data: T): T {
  const view = closedSourcesOf(core, caller);
  return view ? (view.redact(data) as T) : data;
}

/**
 * `event` as the event streams deliver it (EventHub.redactor): the words of sources closed to any agent
 * replaced by a marker; unchanged when nothing is closed or no project is open.
 */
export function redactEvent(core: PipelineCore, event: EventRecord): EventRecord {
  const project = core.opts.project();
  const view = project && core.opts.agent ? agentViewOf(project, null) : null;
  return view ? (view.redact(event) as EventRecord) : event;
}
