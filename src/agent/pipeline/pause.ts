/**
 * Pause agents (issue 14 item 9): while the researcher has paused agents, an agent's call that would run now is
 * held like a suggestion; Resume runs those held calls whose trust level still lets them run.
 */
import type { AnyTool } from '../../tools/defineTool';
import { sweepApprovals } from './approvalQueue';
import { approve } from './approvals';
import type { PipelineCore } from './core';
import { notifyResearcher } from './notify';
import { PAUSE_EXEMPT_TOOLS, PAUSED_REASON, type Caller, type InvokeOutcome } from './types';

/** One held request's outcome of {@link resumeHeld}. */
type ResumedRequest = { request_id: string; tool: string; status: InvokeOutcome['status']; error_code?: string };

/**
 * Pause agents (issue 14 item 9): true when `caller` is an agent, the researcher has paused agents
 * ({@link AgentLayer.paused}) and `tool` is not one an agent follows its held calls with
 * ({@link PAUSE_EXEMPT_TOOLS}). Every other agent call, reads included, is then held as pending.
 */
export function heldByPause(core: PipelineCore, caller: Caller, tool: AnyTool): boolean {
  const agent = core.opts.agent;
  return !!agent?.paused?.() && !caller.researcher && caller.client_type !== 'LOCAL_UI' && !PAUSE_EXEMPT_TOOLS.has(tool.name);
}

/**
 * Resume after a pause (issue 14 item 9): runs every pending request held only because agents were paused
 * (reason {@link PAUSED_REASON}), oldest first, as if `approver` (the researcher) approved it, when its tool's trust
 * level for that agent is still auto or notify (a notify-level one then raises agent.notified); one whose level
 * is now suggest or require stays pending for the researcher's decision. A request that fails
 * (VERSION_CONFLICT, the tool's own error) is reported, not thrown. Returns the counts and each request's outcome.
 */
export async function resumeHeld(
  core: PipelineCore,
  approver: Caller,
): Promise<{ ran: number; failed: number; still_pending: number; requests: ResumedRequest[] }> {
  const project = core.opts.project();
  const agent = core.opts.agent;
  const out = { ran: 0, failed: 0, still_pending: 0, requests: [] as ResumedRequest[] };
  if (!project || !agent) return out;
  sweepApprovals(core);
  for (const record of project.repo.listApprovals('pending').filter((a) => a.reason === PAUSED_REASON)) {
    const tool = core.tools.get(record.tool);
    const level = tool ? agent.trust.decide(tool, agent.sessions.get(record.session_id)?.context.trust_level ?? 'auto').level : 'require';
    if (level === 'suggest' || level === 'require') {
      // the trust table changed during the pause: the researcher decides it like any suggestion
      out.still_pending++;
      out.requests.push({ request_id: record.request_id, tool: record.tool, status: 'pending' });
      continue;
    }
    const outcome = await approve(core, record.request_id, approver);
    if (outcome.status === 'ok') {
      out.ran++;
      if (level === 'notify' && tool) {
        const data = outcome.envelope.success ? (outcome.envelope.data as { result?: unknown } | undefined)?.result : undefined;
        const held: Caller = { session_id: record.session_id, client_type: record.client_type, client_name: record.client_name, user: record.user };
        notifyResearcher(
          core,
          tool,
          JSON.parse(record.arguments) as unknown,
          held,
          data,
          outcome.events.filter((e) => e.aggregate_type !== 'approval'),
        );
      }
    } else out.failed++;
    out.requests.push({
      request_id: record.request_id,
      tool: record.tool,
      status: outcome.status,
      ...(outcome.envelope.success ? {} : { error_code: outcome.envelope.error_code }),
    });
  }
  return out;
}
