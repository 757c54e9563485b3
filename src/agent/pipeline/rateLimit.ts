/** Stage 4: an agent credential's budget of requests and mutations per minute, with free polls of its own held calls. */
import { isToolError } from '../../core/errors';
import type { AnyTool } from '../../tools/defineTool';
import { budgetKey } from '../rateLimits';
import type { PipelineCore } from './core';
import { StageFailure } from './stageFailure';
import type { Caller } from './types';

/**
 * Stage 4: requests and mutations per minute per agent credential, across its sessions (not for the researcher). An agent's
 * get_approval_status of its own request at the advised pace (`approvals.poll_after_ms`) is free
 * (RateLimiter.freePoll). Errors: RATE_LIMITED (denied).
 */
export function checkRateLimit(core: PipelineCore, caller: Caller, tool: AnyTool, input: unknown): void {
  const agent = core.opts.agent;
  if (!agent || caller.researcher) return;
  if (tool.name === 'get_approval_status') {
    const id = (input as { request_id?: unknown } | null)?.request_id;
    const asker = typeof id === 'string' ? core.opts.project()?.repo.getApproval(id)?.session_id : undefined;
    // one's own request: asked in the same session, or in another session of the same credential
    const own = asker !== undefined && (asker === caller.session_id || (caller.agent !== undefined && agent.sessions.ownerOf(asker) === caller.agent));
    if (own && agent.limiter.freePoll(budgetKey(caller), id as string, agent.config().approvals.poll_after_ms)) return;
  }
  try {
    // one budget per agent credential across its sessions (issue 14 item 4)
    agent.limiter.check(budgetKey(caller), tool.effect !== 'read');
  } catch (e) {
    if (isToolError(e)) throw new StageFailure(e.code, e.message, e.details, true);
    throw e;
  }
}
