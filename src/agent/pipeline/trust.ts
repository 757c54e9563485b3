/**
 * Stage 5 (the trust decision) and 5b (the researcher's consent to change a source being edited), plus the
 * one rule of what trust level every tool listing shows a viewer and the words an agent's description gains.
 */
import type { AnyTool } from '../../tools/defineTool';
import type { TrustLevel } from '../config';
import type { Session } from '../sessions';
import { sourceIdsOf } from './arguments';
import type { PipelineCore } from './core';
import { StageFailure } from './stageFailure';
import type { AgentLayer, Caller, ToolViewer } from './types';

/**
 * What an agent's tool description adds for its trust level: nothing for auto; a line for notify; for
 * suggest and require what the held answer looks like and how to follow it.
 */
export function heldWords(level: TrustLevel, pollAfterMs: number): string {
  if (level === 'auto') return '';
  if (level === 'notify') return ' Trust level for you: notify (it runs at once and the researcher is told).';
  return (
    ` Trust level for you: ${level}. Your call is held for the researcher's approval: it answers HTTP 202 with ` +
    `{status: "pending_approval", request_id, tool, trust_level, expires_at, poll_after_ms: ${pollAfterMs}, message} instead of the result ` +
    '(a call that would fail answers its own error at once: it was dry-run first). Follow it with get_approval_status {request_id, wait_ms} ' +
    "until status is completed (result holds this tool's answer), failed or rejected."
  );
}

/**
 * The trust level of `tool` for `viewer` and the words its listed description gains (issue 14 item 6), the one
 * rule of every tool listing (GET /tools through {@link ToolPipeline.listTools}, MCP tools/list, the LM tools):
 * `auto` for the researcher (and without an agent layer), `researcher_only` for tools refused to agents, else
 * the policy's level under the viewer's session floor, with {@link heldWords} as `note` ('' for auto).
 */
export function trustForViewer(
  layer: AgentLayer | undefined,
  tool: AnyTool,
  viewer: ToolViewer,
): { trust_level: TrustLevel | 'researcher_only'; note: string } {
  if (!layer || viewer.researcher) return { trust_level: 'auto', note: '' };
  if (tool.researcherOnly) return { trust_level: 'researcher_only', note: '' };
  const level = layer.trust.decide(tool, viewer.floor ?? 'auto').level;
  return { trust_level: level, note: heldWords(level, layer.config().approvals.poll_after_ms) };
}

/**
 * Stage 5: the trust decision (agent-context spec, section 5): auto and notify run, suggest and require
 * wait for approval. The researcher's own calls run at auto.
 */
export function checkTrust(core: PipelineCore, caller: Caller, tool: AnyTool, session: Session | undefined): TrustLevel {
  const agent = core.opts.agent;
  if (!agent || caller.researcher) return 'auto';
  return agent.trust.decide(tool, session?.context.trust_level ?? 'auto').level;
}

/**
 * Stage 5b: an agent's change to a source the researcher is editing needs the researcher's consent
 * (HostPort.requestSourceAccess). Errors: SOURCE_BUSY (denied) when declined.
 */
export async function checkSourceAccess(core: PipelineCore, tool: AnyTool, input: unknown, caller: Caller): Promise<void> {
  const ask = core.opts.host.requestSourceAccess;
  if (!ask || caller.researcher || tool.effect === 'read' || !core.opts.agent) return;
  const ids = sourceIdsOf(input);
  if (ids.length === 0) return;
  const allowed = await ask.call(core.opts.host, ids, { session_id: caller.session_id, client_name: caller.client_name, tool: tool.name });
  if (!allowed)
    throw new StageFailure(
      'SOURCE_BUSY',
      'The researcher is editing this source and declined to let an agent change it now; try again later',
      { source_ids: ids },
      true,
    );
}
