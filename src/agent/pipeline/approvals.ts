/**
 * Held calls and the researcher's decisions: holding a call as a stored approval request (approval.requested,
 * the queue's limits), approving it (the version check, then the stored call run on behalf of the agent that
 * asked, with approval.granted or approval.failed) and rejecting it, under the rule of who may decide.
 */
import { isoTime } from '../../core/clock';
import { ok, type Envelope } from '../../core/envelope';
import { newUuid } from '../../core/ids';
import type { EventRecord } from '../../domain/events';
import type { ApprovalRecord } from '../../domain/ports';
import type { OpenProject } from '../../tools/context';
import type { AnyTool } from '../../tools/defineTool';
import type { AgentContextConfig } from '../config';
import { describeRequest } from '../describeRequest';
import { validateInput } from './admission';
import { decideRejected, sweepApprovals } from './approvalQueue';
import { audit } from './audit';
import type { PipelineCore } from './core';
import { publish, storeEvents } from './events';
import { execute } from './execute';
import { decider } from './provenance';
import { isDenial, StageFailure, toFailure } from './stageFailure';
import { MAX_APPROVAL_WAIT_MS, PAUSED_REASON, type AgentLayer, type Caller, type DryRunOutcome, type InvokeOutcome, type PendingApproval } from './types';
import { checkVersions, readVersions } from './versions';

type ApprovalsConfig = AgentContextConfig['approvals'];

/**
 * Holds a call for the researcher: stores the request (it survives a restart) and emits
 * approval.requested. Errors: NO_PROJECT, APPROVAL_QUEUE_FULL (denied).
 */
export function requestApproval(
  core: PipelineCore,
  tool: AnyTool,
  input: unknown,
  caller: Caller,
  level: 'suggest' | 'require',
  preview?: DryRunOutcome,
  pausedHold = false,
): { data: PendingApproval; events: EventRecord[] } {
  const agent = core.opts.agent as AgentLayer;
  const project = core.opts.project();
  if (!project) throw new StageFailure(tool.noProjectCode ?? 'NO_PROJECT', 'No project is open. Ask the researcher to open one (Marginalia: Open Project).');
  sweepApprovals(core);
  const cfg = agent.config().approvals;
  checkQueueRoom(agent, project, caller, cfg);
  const now = core.clock.now();
  const record = newApprovalRecord(project, tool, input, caller, level, now, cfg, preview, pausedHold);
  const events = project.transaction(() => {
    project.repo.insertApproval(record);
    return storeEvents(core, project, caller, record.request_id, now, [
      {
        event_type: 'approval.requested',
        aggregate_type: 'approval',
        aggregate_id: record.request_id,
        payload: {
          request_id: record.request_id,
          action_type: tool.name,
          description: record.description,
          payload: input ?? {},
          trust_level: level,
          expires_at: record.expires_at,
          ...(pausedHold ? { held_by_pause: true } : {}),
        },
      },
    ]);
  });
  return { data: pendingAnswer(tool, record, level, cfg, preview, pausedHold), events };
}

/** The queue's limits: at most `max_pending` requests, and `max_pending_per_agent` of them from one credential. Errors: APPROVAL_QUEUE_FULL (denied). */
function checkQueueRoom(agent: AgentLayer, project: OpenProject, caller: Caller, cfg: ApprovalsConfig): void {
  const pendingList = project.repo.listApprovals('pending', cfg.max_pending + 1);
  const pending = pendingList.length;
  // at most approvals.max_pending_per_agent of them from one credential (issue 14 item 4), so one agent cannot fill the queue for all
  if (caller.agent !== undefined) {
    const mine = pendingList.filter((a) => a.session_id === caller.session_id || agent.sessions.ownerOf(a.session_id) === caller.agent).length;
    if (mine >= cfg.max_pending_per_agent) {
      throw new StageFailure(
        'APPROVAL_QUEUE_FULL',
        `${mine} of your requests already wait for the researcher (approvals.max_pending_per_agent = ${cfg.max_pending_per_agent}); wait for decisions before asking for more`,
        { pending, pending_for_agent: mine, limit: cfg.max_pending_per_agent, limit_key: 'max_pending_per_agent' },
        true,
      );
    }
  }
  if (pending >= cfg.max_pending) {
    throw new StageFailure(
      'APPROVAL_QUEUE_FULL',
      `${pending} requests already wait for the researcher (approvals.max_pending = ${cfg.max_pending}); wait for decisions before asking for more`,
      { pending },
      true,
    );
  }
}

/** The stored record of a call about to be held at `now` (ms since the epoch): pending, expiring after approvals.timeout_minutes. */
function newApprovalRecord(
  project: OpenProject,
  tool: AnyTool,
  input: unknown,
  caller: Caller,
  level: 'suggest' | 'require',
  now: number,
  cfg: ApprovalsConfig,
  preview: DryRunOutcome | undefined,
  pausedHold: boolean,
): ApprovalRecord {
  return {
    request_id: newUuid(),
    tool: tool.name,
    arguments: JSON.stringify(input ?? {}),
    session_id: caller.session_id,
    client_type: caller.client_type,
    client_name: caller.client_name,
    user: caller.user,
    trust_level: level,
    // in words, from the project as it is now and what the dry run did (agent/describeRequest.ts): names, counts, a passage excerpt
    description: describeRequest(project.repo, tool, input, preview),
    status: 'pending',
    created_at: isoTime(now),
    expires_at: isoTime(now + cfg.timeout_minutes * 60_000),
    decided_at: null,
    decided_by: null,
    // held only because agents are paused: Resume runs it (resumeHeld); else the researcher decides
    reason: pausedHold ? PAUSED_REASON : null,
    result: null,
    error_code: null,
    read_versions: readVersions(project, tool, input),
  };
}

/** What the agent whose call was held learns ({@link PendingApproval}). */
function pendingAnswer(
  tool: AnyTool,
  record: ApprovalRecord,
  level: 'suggest' | 'require',
  cfg: ApprovalsConfig,
  preview: DryRunOutcome | undefined,
  pausedHold: boolean,
): PendingApproval {
  return {
    status: 'pending_approval',
    request_id: record.request_id,
    tool: tool.name,
    trust_level: level,
    expires_at: record.expires_at,
    poll_after_ms: cfg.poll_after_ms,
    ...(pausedHold ? { held_by_pause: true } : {}),
    message:
      (pausedHold
        ? `The researcher has paused agents: ${tool.title} is held and runs when they resume (or when approved)${preview ? '; a dry run found it would succeed now' : ''}. `
        : `${tool.title} waits for the researcher's approval (trust level ${level})${preview ? '; a dry run found it would succeed now' : ''}. It runs when approved. `) +
      `Ask get_approval_status with this request_id no more often than every ${cfg.poll_after_ms} ms (that never spends your rate budget), or pass wait_ms (up to ${MAX_APPROVAL_WAIT_MS}) to wait for the decision in one call.`,
  };
}

/**
 * Approves a pending request and runs the stored call (with `editedArguments` when the researcher
 * changed them) on behalf of the agent that asked, in one transaction with approval.granted. Only the
 * researcher may approve, and never a request of their own session.
 * Errors: APPROVAL_NOT_FOUND, APPROVAL_NOT_PENDING, APPROVAL_FORBIDDEN, INVALID_ARGUMENTS (edited
 * arguments), and the tool's own errors (the request is then marked failed and approval.failed emitted).
 */
export async function approve(core: PipelineCore, requestId: string, approver: Caller, editedArguments?: unknown): Promise<InvokeOutcome> {
  const started = performance.now();
  let events: EventRecord[] = [];
  let envelope: Envelope;
  let status: InvokeOutcome['status'] = 'ok';
  let toolName = 'approve';
  // refused by the permission rule (not the researcher, or its own request): audited as denied
  let refused = false;
  try {
    const { project, record } = decidable(core, requestId, approver);
    toolName = record.tool;
    const tool = core.tools.get(record.tool);
    if (!tool) throw new StageFailure('TOOL_NOT_FOUND', `The requested tool ${record.tool} no longer exists`);
    const args = editedArguments === undefined ? (JSON.parse(record.arguments) as unknown) : editedArguments;
    const input = validateInput(tool, args);
    // the call as held: refused when what it named changed since (an edited call is the researcher's own, as the project is now)
    if (editedArguments === undefined) checkVersions(project, record);
    const agentCaller: Caller = {
      session_id: record.session_id,
      client_type: record.client_type,
      client_name: record.client_name,
      user: record.user,
      correlation_id: requestId,
      approved_by: approver.session_id,
    };
    const decidedAt = isoTime(core.clock.now());
    try {
      const result = await execute(core, tool, input, agentCaller, (raise, data) => {
        project.repo.decideApproval(requestId, {
          status: 'completed',
          decided_at: decidedAt,
          decided_by: approver.session_id,
          ...decider(core, approver),
          reason: null,
          result: JSON.stringify(data ?? null),
          error_code: null,
          arguments: JSON.stringify(input ?? {}),
        });
        raise(
          {
            event_type: 'approval.granted',
            aggregate_type: 'approval',
            aggregate_id: requestId,
            payload: { request_id: requestId, approved: true, action_type: tool.name, approved_by: approver.session_id, edited: editedArguments !== undefined },
          },
          true,
        );
      });
      events = result.events;
      envelope = ok({ request_id: requestId, status: 'completed', tool: tool.name, result: result.data });
    } catch (e) {
      const failure = toFailure(core.logger, tool.name, e);
      const code = failure.success ? 'TOOL_EXECUTION_ERROR' : failure.error_code;
      events = project.transaction(() => {
        project.repo.decideApproval(requestId, {
          status: 'failed',
          decided_at: decidedAt,
          decided_by: approver.session_id,
          ...decider(core, approver),
          reason: failure.success ? null : failure.error,
          result: null,
          error_code: code,
          arguments: JSON.stringify(input ?? {}),
        });
        return storeEvents(core, project, approver, requestId, core.clock.now(), [
          {
            event_type: 'approval.granted',
            aggregate_type: 'approval',
            aggregate_id: requestId,
            payload: { request_id: requestId, approved: true, action_type: tool.name, approved_by: approver.session_id },
          },
          {
            event_type: 'approval.failed',
            aggregate_type: 'approval',
            aggregate_id: requestId,
            payload: { request_id: requestId, action_type: tool.name, error_code: code },
          },
        ]);
      });
      throw e;
    }
  } catch (e) {
    status = 'failed';
    refused = isDenial(e);
    envelope = toFailure(core.logger, toolName, e);
  }
  const durationMs = performance.now() - started;
  audit(core, {
    tool: `approve:${toolName}`,
    caller: approver,
    status,
    decision: status === 'ok' ? 'permitted' : refused ? 'denied' : 'failed',
    request_id: requestId,
    error_code: envelope.success ? undefined : envelope.error_code,
    durationMs,
    arguments: editedArguments,
  });
  if (events.length > 0) publish(core, events);
  return { envelope, status, tool: toolName, durationMs, events };
}

/**
 * Rejects a pending request with an optional reason (approval.denied). Same permission rules as
 * {@link approve}. Errors: APPROVAL_NOT_FOUND, APPROVAL_NOT_PENDING, APPROVAL_FORBIDDEN.
 */
export function reject(core: PipelineCore, requestId: string, approver: Caller, reason?: string): InvokeOutcome {
  return closeRequest(core, requestId, approver, 'reject', reason ?? null, decidable);
}

/** The reason stored on a request its own agent withdrew ({@link withdraw}). */
export const WITHDRAWN_REASON = 'withdrawn by the agent';

/**
 * Withdraws a pending request on behalf of the agent that asked (issue 14 item 6: an MCP task's `tasks/cancel`):
 * it is marked rejected with the reason {@link WITHDRAWN_REASON} and approval.denied is emitted, as for a
 * rejection. Only the asking agent may: the same session, or another session of the same agent credential.
 * Errors: NO_PROJECT, APPROVAL_NOT_FOUND, APPROVAL_NOT_PENDING, APPROVAL_FORBIDDEN (another caller's request).
 */
export function withdraw(core: PipelineCore, requestId: string, asker: Caller): InvokeOutcome {
  return closeRequest(core, requestId, asker, 'withdraw', WITHDRAWN_REASON, withdrawable);
}

/** Rejects request `requestId` as `by` with `reason` when `check` allows it; audited as `what`. */
function closeRequest(
  core: PipelineCore,
  requestId: string,
  by: Caller,
  what: 'reject' | 'withdraw',
  reason: string | null,
  check: (core: PipelineCore, requestId: string, by: Caller) => { project: OpenProject; record: ApprovalRecord },
): InvokeOutcome {
  const started = performance.now();
  let events: EventRecord[] = [];
  let envelope: Envelope;
  let status: InvokeOutcome['status'] = 'ok';
  let refused = false;
  try {
    const { project, record } = check(core, requestId, by);
    events = decideRejected(core, project, record, by, reason);
    envelope = ok({ request_id: requestId, status: 'rejected', tool: record.tool, reason });
  } catch (e) {
    status = 'failed';
    refused = isDenial(e);
    envelope = toFailure(core.logger, what, e);
  }
  const durationMs = performance.now() - started;
  audit(core, {
    tool: what,
    caller: by,
    status,
    decision: status === 'ok' ? 'permitted' : refused ? 'denied' : 'failed',
    request_id: requestId,
    error_code: envelope.success ? undefined : envelope.error_code,
    durationMs,
    arguments: { reason: reason ?? undefined },
  });
  if (events.length > 0) publish(core, events);
  return { envelope, status, tool: what, durationMs, events };
}

/** The open project and request `requestId` while it is pending. Errors: NO_PROJECT, APPROVAL_NOT_FOUND, APPROVAL_NOT_PENDING. */
function pendingRequest(core: PipelineCore, requestId: string): { project: OpenProject; record: ApprovalRecord } {
  const project = core.opts.project();
  if (!project) throw new StageFailure('NO_PROJECT', 'No project is open.');
  sweepApprovals(core);
  const record = project.repo.getApproval(requestId);
  if (!record) throw new StageFailure('APPROVAL_NOT_FOUND', `No approval request ${requestId}`);
  if (record.status !== 'pending') {
    throw new StageFailure('APPROVAL_NOT_PENDING', `Request ${requestId} was already decided: ${record.status}${record.reason ? ` (${record.reason})` : ''}`, {
      status: record.status,
      reason: record.reason,
    });
  }
  return { project, record };
}

/** The pending request `requestId` when `asker` made it: its session, or a session of the same agent credential. Errors: see {@link withdraw}. */
function withdrawable(core: PipelineCore, requestId: string, asker: Caller): { project: OpenProject; record: ApprovalRecord } {
  const found = pendingRequest(core, requestId);
  const sessions = core.opts.agent?.sessions;
  const own = found.record.session_id === asker.session_id || (asker.agent !== undefined && sessions?.ownerOf(found.record.session_id) === asker.agent);
  if (!own) throw new StageFailure('APPROVAL_FORBIDDEN', 'Only the agent that asked may withdraw its request', undefined, true);
  return found;
}

/**
 * The open project and pending request `requestId`, when `approver` may decide it: the researcher, and never
 * for a request of their own session. Errors: NO_PROJECT, APPROVAL_NOT_FOUND, APPROVAL_NOT_PENDING,
 * APPROVAL_FORBIDDEN (denied).
 */
function decidable(core: PipelineCore, requestId: string, approver: Caller): { project: OpenProject; record: ApprovalRecord } {
  const { project, record } = pendingRequest(core, requestId);
  if (!approver.researcher)
    throw new StageFailure(
      'APPROVAL_FORBIDDEN',
      'Only the researcher (the VS Code UI, or a client holding the reviewer token) may approve or reject requests',
      undefined,
      true,
    );
  if (approver.session_id === record.session_id)
    throw new StageFailure('APPROVAL_FORBIDDEN', 'A session cannot approve or reject its own request', undefined, true);
  return { project, record };
}
