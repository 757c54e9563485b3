/**
 * Approval decisions (adapter kit, issue 14 item 12): the researcher's approve (optionally of edited arguments),
 * reject and list, as every surface offers them (HTTP `/approvals`, WebSocket `approve` / `reject`, gRPC `Approve`
 * / `Reject` / `ListApprovals`). Decisions go to the pipeline (AgentContext.approve / reject), which refuses an
 * agent with 403 APPROVAL_FORBIDDEN and audits it; each decision writes one call-log line.
 */
import { ToolError } from '../../core/errors';
import type { ApprovalRecord } from '../../domain/ports';
import type { AgentContext } from '../agentContext';
import type { Caller, InvokeOutcome } from '../pipeline';
import { logCall, type CallLogSink } from './callLog';

/** The statuses an approval request can be listed by. */
export const APPROVAL_STATUSES = ['pending', 'completed', 'failed', 'rejected'] as const;
/** One of {@link APPROVAL_STATUSES}. */
export type ApprovalStatus = (typeof APPROVAL_STATUSES)[number];
/** Longest kept reason of a rejection (characters). */
export const MAX_REASON_LENGTH = 2000;

/** A decision on one approval request, as a client sent it (checked by {@link decideApproval}). */
export type ApprovalDecision =
  { decision: 'approve'; request_id: unknown; arguments?: unknown } | { decision: 'reject'; request_id: unknown; reason?: unknown };

/** How a decision is logged: the sink, and the surface's word for the status (see callLog.ts). */
export interface DecisionLog {
  sink?: CallLogSink;
  status: (outcome: InvokeOutcome) => string | number;
}

/**
 * Runs a decision as `caller`: approve (with edited `arguments` when given) or reject (with a `reason`, cut to
 * {@link MAX_REASON_LENGTH}). The outcome is the pipeline's (APPROVAL_FORBIDDEN for an agent or for the
 * researcher's own session's request, APPROVAL_NOT_FOUND, VERSION_CONFLICT ...), logged as `approve:<tool>`
 * or `reject`. Errors (thrown): INVALID_ARGUMENTS (no request_id, a reason that is not a string).
 */
export async function decideApproval(agent: AgentContext, caller: Caller, d: ApprovalDecision, log?: DecisionLog): Promise<InvokeOutcome> {
  if (typeof d.request_id !== 'string' || !d.request_id) throw new ToolError('INVALID_ARGUMENTS', `${d.decision} needs "request_id"`);
  let outcome: InvokeOutcome;
  let name: string;
  if (d.decision === 'approve') {
    outcome = await agent.approve(caller, d.request_id, d.arguments);
    name = outcome.tool === 'approve' ? 'approve' : `approve:${outcome.tool}`;
  } else {
    if (d.reason !== undefined && d.reason !== null && typeof d.reason !== 'string') throw new ToolError('INVALID_ARGUMENTS', '"reason" must be a string');
    outcome = agent.reject(caller, d.request_id, typeof d.reason === 'string' && d.reason ? d.reason.slice(0, MAX_REASON_LENGTH) : undefined);
    name = 'reject';
  }
  if (log) logCall(log.sink, caller, name, log.status(outcome), outcome);
  return outcome;
}

/** `text` as an approval status filter: undefined when absent (empty). Errors: INVALID_ARGUMENTS. */
export function approvalStatusOf(text: unknown): ApprovalStatus | undefined {
  if (text === undefined || text === null || text === '') return undefined;
  if (typeof text !== 'string' || !(APPROVAL_STATUSES as readonly string[]).includes(text))
    throw new ToolError('INVALID_ARGUMENTS', `status must be one of ${APPROVAL_STATUSES.join(', ')}`);
  return text as ApprovalStatus;
}

/** The stored approval requests with status `status` (all when absent), oldest first. Errors: INVALID_ARGUMENTS (unknown status). */
export function listApprovals(agent: AgentContext, status?: unknown): ApprovalRecord[] {
  return agent.listApprovals(approvalStatusOf(status));
}
