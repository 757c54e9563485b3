/**
 * The approval queue's upkeep: the stored requests, their timeouts (rejected with the reason `timeout`), a
 * rejection's record and event, and the long polls (get_approval_status `wait_ms`) that wait for a decision.
 */
import { isoTime } from '../../core/clock';
import type { EventRecord } from '../../domain/events';
import type { ApprovalRecord } from '../../domain/ports';
import type { OpenProject } from '../../tools/context';
import type { PipelineCore } from './core';
import { publish, storeEvents } from './events';
import { decider } from './provenance';
import { MAX_APPROVAL_WAIT_MS, PAUSED_REASON, type Caller } from './types';

/**
 * Rejects every pending request whose time is up (approvals.timeout_minutes, spec: 5 minutes) with the
 * reason `timeout`. Hosts call it on a timer; the pipeline also calls it before queueing. Returns how many.
 * A request held only because agents were paused ({@link PAUSED_REASON}) never times out: it waits until
 * Resume runs it (ToolPipeline.resumeHeld) or the researcher decides it.
 */
export function sweepApprovals(core: PipelineCore): number {
  const project = core.opts.project();
  if (!project || !core.opts.agent) return 0;
  const now = isoTime(core.clock.now());
  const expired = project.repo.listApprovals('pending').filter((a) => a.expires_at <= now && a.reason !== PAUSED_REASON);
  const system: Caller = { session_id: 'marginalia', client_type: 'LOCAL_UI', client_name: 'marginalia', user: 'marginalia' };
  const events: EventRecord[] = [];
  for (const a of expired) events.push(...decideRejected(core, project, a, system, 'timeout'));
  if (events.length > 0) publish(core, events);
  return expired.length;
}

/** Stored approval requests (all, or with one status), oldest first. */
export function listApprovals(core: PipelineCore, status?: ApprovalRecord['status']): ApprovalRecord[] {
  const project = core.opts.project();
  if (!project) return [];
  sweepApprovals(core);
  return project.repo.listApprovals(status);
}

/** Marks `record` rejected by `by` with `reason` and stores approval.denied, in one transaction; returns the stored events. */
export function decideRejected(core: PipelineCore, project: OpenProject, record: ApprovalRecord, by: Caller, reason: string | null): EventRecord[] {
  const now = core.clock.now();
  return project.transaction(() => {
    project.repo.decideApproval(record.request_id, {
      status: 'rejected',
      decided_at: isoTime(now),
      decided_by: by.session_id,
      ...decider(core, by),
      reason,
      result: null,
      error_code: null,
      arguments: record.arguments,
    });
    return storeEvents(core, project, by, record.request_id, now, [
      {
        event_type: 'approval.denied',
        aggregate_type: 'approval',
        aggregate_id: record.request_id,
        payload: { request_id: record.request_id, approved: false, action_type: record.tool, reason, session_id: record.session_id },
      },
    ]);
  });
}

/**
 * Resolves once approval request `requestId` is decided (approval.granted, approval.denied, approval.failed
 * published; a timeout sweep counts), after `waitMs` milliseconds (at most {@link MAX_APPROVAL_WAIT_MS}), or
 * when it expires, whichever comes first; at once when it is unknown or not pending. Never rejects.
 * get_approval_status's `wait_ms` long poll (PrepareContext.awaitDecision).
 */
export function awaitDecision(core: PipelineCore, requestId: string, waitMs: number): Promise<void> {
  const project = core.opts.project();
  if (!project) return Promise.resolve();
  sweepApprovals(core);
  const record = project.repo.getApproval(requestId);
  if (!record || record.status !== 'pending') return Promise.resolve();
  const left = Date.parse(record.expires_at) - core.clock.now();
  const ms = Math.max(0, Math.min(waitMs, MAX_APPROVAL_WAIT_MS, Number.isFinite(left) ? left : MAX_APPROVAL_WAIT_MS));
  if (ms === 0) return Promise.resolve();
  return new Promise((resolve) => {
    let waiters = core.decisionWaiters.get(requestId);
    if (!waiters) {
      waiters = new Set();
      core.decisionWaiters.set(requestId, waiters);
    }
    const set = waiters;
    const done = (): void => {
      clearTimeout(timer);
      set.delete(done);
      if (set.size === 0 && core.decisionWaiters.get(requestId) === set) core.decisionWaiters.delete(requestId);
      resolve();
    };
    const timer = setTimeout(done, ms);
    set.add(done);
  });
}
