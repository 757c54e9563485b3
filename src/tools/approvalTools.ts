import { z } from 'zod';
import { ToolError } from '../core/errors';
import type { ApprovalRecord } from '../domain/ports';
import { defineTool } from './defineTool';
import { args, text } from './schemas';

/**
 * Reading the trust layer's approval requests (agent-context spec, section 5 "Approval" and section 3
 * "Approval flow"): a call held at trust level suggest or require answers `pending_approval` with a
 * `request_id`; these tools let the agent that asked see what became of it. They only read: deciding is
 * the researcher's (the VS Code UI, or a client holding the reviewer token).
 */

/** What became of a request: approved (it ran: completed, or failed while running), rejected, or not yet decided. */
function decisionOf(a: ApprovalRecord): 'approved' | 'rejected' | null {
  if (a.status === 'completed' || a.status === 'failed') return 'approved';
  if (a.status === 'rejected') return 'rejected';
  return null;
}

function parseJson(text: string | null): unknown {
  if (text === null) return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** Longest wait_ms of get_approval_status, in milliseconds (the pipeline's MAX_APPROVAL_WAIT_MS). */
const MAX_WAIT_MS = 30_000;

/**
 * A stored request as the approval routes list it (HTTP `GET /approvals`, `GET /approvals/{id}`, the CLI's
 * `approvals`): the record with `arguments` and `result` as the JSON values they hold (objects, as
 * get_approval_status gives them), not the JSON text the store keeps.
 */
export function approvalOut(a: ApprovalRecord): Omit<ApprovalRecord, 'arguments' | 'result'> & { arguments: unknown; result: unknown } {
  return { ...a, arguments: parseJson(a.arguments), result: parseJson(a.result) };
}

const approvalStatus = z.enum(['pending', 'completed', 'failed', 'rejected']);

/** The output of get_approval_status (also its MCP outputSchema). */
export const approvalStatusOutput = z.object({
  request_id: z.string(),
  tool: z.string(),
  status: approvalStatus.describe('pending: waiting; completed: approved and ran; failed: approved but the call failed; rejected: refused, or timed out'),
  decision: z.enum(['approved', 'rejected']).nullable().describe('null while pending'),
  timed_out: z.boolean().describe('true when nobody decided in time and the request was rejected automatically'),
  expired: z.boolean().describe('true when the request is still marked pending but its time is up (it is rejected on the next sweep)'),
  trust_level: z.enum(['suggest', 'require']),
  description: z.string(),
  arguments: z.unknown().describe('the arguments as approved (after any edit by the researcher)'),
  session_id: z.string(),
  client_name: z.string(),
  created_at: z.string(),
  expires_at: z.string(),
  decided_at: z.string().nullable(),
  decided_by_coder: z
    .string()
    .nullable()
    .describe("who decided: the researcher's coder name (issue 14 item 1); null while pending and for an automatic timeout"),
  decided_by_role: z.enum(['researcher', 'agent']).nullable().describe('the role of who decided (researcher); null while pending and for an automatic timeout'),
  reason: z.string().nullable().describe("the researcher's reason for a rejection, `timeout`, or the failure message"),
  result: z.unknown().describe('the data the approved call returned (null unless completed)'),
  error_code: z.string().nullable().describe('the error code of an approved call that failed'),
});

function statusOut(a: ApprovalRecord, now: string): z.output<typeof approvalStatusOutput> {
  return {
    request_id: a.request_id,
    tool: a.tool,
    status: a.status,
    decision: decisionOf(a),
    timed_out: a.status === 'rejected' && a.reason === 'timeout',
    expired: a.status === 'pending' && a.expires_at <= now,
    trust_level: a.trust_level,
    description: a.description,
    arguments: parseJson(a.arguments),
    session_id: a.session_id,
    client_name: a.client_name,
    created_at: a.created_at,
    expires_at: a.expires_at,
    decided_at: a.decided_at,
    decided_by_coder: a.decided_by_coder ?? null,
    decided_by_role: a.decided_by_role ?? null,
    reason: a.reason,
    result: parseJson(a.result),
    error_code: a.error_code,
  };
}

export const getApprovalStatusTool = defineTool({
  name: 'get_approval_status',
  group: 'project',
  title: 'Get Approval Status',
  description:
    "Where a call that waits for the researcher's approval stands. A call at trust level suggest or require answers " +
    '{status: "pending_approval", request_id}; ask this tool with that request_id until status is no longer pending. ' +
    'Returns {request_id, tool, status: pending|completed|failed|rejected, decision: approved|rejected|null, timed_out, expired, trust_level, description, ' +
    'arguments (as approved, possibly edited by the researcher), created_at, expires_at, decided_at, decided_by_coder and decided_by_role (who decided), reason, result (the data the approved call returned), error_code}. ' +
    'wait_ms (0 to 30000) waits for the decision in this one call (a long poll): the answer comes as soon as the researcher decides, or when wait_ms has passed, still pending. ' +
    "Polling your own request no more often than the pending answer's poll_after_ms never spends your rate budget. " +
    'Unanswered requests are rejected automatically after 5 minutes (reason "timeout"). Errors: APPROVAL_NOT_FOUND.',
  input: args({
    request_id: text(100, 1).describe('the request_id a pending_approval answer gave'),
    wait_ms: z
      .number()
      .int()
      .min(0)
      .max(MAX_WAIT_MS)
      .optional()
      .describe('milliseconds to wait for the decision before answering (a long poll; default 0: answer at once)'),
  }),
  output: approvalStatusOutput,
  effect: 'read',
  trust: 'read',
  // a long poll: waits (writing nothing) until the request is decided or wait_ms has passed; run then reads the outcome
  prepare: async (input, pctx) => {
    if (input.wait_ms && pctx.awaitDecision) await pctx.awaitDecision(input.request_id, input.wait_ms);
  },
  // reads only: never run twice, never held
  dryRun: 'none',
  run: (ctx, input) => {
    const a = ctx.domain.repo.getApproval(input.request_id);
    if (!a)
      throw new ToolError(
        'APPROVAL_NOT_FOUND',
        `No approval request ${input.request_id}; use the request_id of a pending_approval answer (list_pending_approvals lists the open ones)`,
      );
    return statusOut(a, ctx.domain.now);
  },
});

/** The output of list_pending_approvals (also its MCP outputSchema). */
export const pendingApprovalsOutput = z.object({
  count: z.number().int(),
  approvals: z.array(
    z.object({
      request_id: z.string(),
      tool: z.string(),
      description: z.string(),
      trust_level: z.enum(['suggest', 'require']),
      session_id: z.string(),
      client_name: z.string(),
      mine: z.boolean().describe('true when the calling session asked for it'),
      created_at: z.string(),
      expires_at: z.string(),
      expired: z.boolean(),
    }),
  ),
});

export const listPendingApprovalsTool = defineTool({
  name: 'list_pending_approvals',
  group: 'project',
  title: 'List Pending Approvals',
  description:
    "The calls waiting for the researcher's approval, oldest first (at most 10 wait at once; a call beyond that fails with APPROVAL_QUEUE_FULL). " +
    'only_mine: true lists just the requests of the calling session. Returns {count, approvals: [{request_id, tool, description, trust_level, session_id, ' +
    'client_name, mine, created_at, expires_at, expired}]}. Follow one with get_approval_status.',
  input: args({ only_mine: z.boolean().optional().describe('only the requests of the calling session (default false)') }),
  output: pendingApprovalsOutput,
  effect: 'read',
  trust: 'read',
  run: (ctx, input) => {
    const mine = ctx.actor.session_id;
    const approvals = ctx.domain.repo
      .listApprovals('pending')
      .filter((a) => !input.only_mine || a.session_id === mine)
      .map((a) => ({
        request_id: a.request_id,
        tool: a.tool,
        description: a.description,
        trust_level: a.trust_level,
        session_id: a.session_id,
        client_name: a.client_name,
        mine: a.session_id === mine,
        created_at: a.created_at,
        expires_at: a.expires_at,
        expired: a.expires_at <= ctx.domain.now,
      }));
    return { count: approvals.length, approvals };
  },
});
