import * as vscode from 'vscode';
import type { CallRecord } from '../../agent/pipeline';
import type { EventRecord } from '../../domain/events';
import type { ProjectRepository } from '../../domain/ports';
import type { ActivityItem, ActivityStatus } from '../../protocol/activity';
import { causedByAgent, LOCAL_SESSION } from '../workbench';
import { describeCall, describeDone, describeRead, MAX_ACTIVITY_ITEMS, rebuildActivity, requeue, toolTitle } from './activityHistory';

export { MAX_ACTIVITY_ITEMS } from './activityHistory';

/**
 * The agents' activity, newest first, at most 1000 items: every call from a session that is not the
 * researcher's (COMPLETED, PENDING_APPROVAL, REJECTED, FAILED), updated by approval events; a pending
 * request of a session that already waits on an earlier one is QUEUED behind it. Items are in words
 * (activityHistory.ts): what a call asks while it waits or failed, what it did once its events arrive.
 * {@link reload} rebuilds the list from the project's event log and approval requests (after a window
 * reload, or when another project opens).
 */
export class ActivityLog implements vscode.Disposable {
  private items: ActivityItem[] = [];
  private readonly changed = new vscode.EventEmitter<ActivityItem | undefined>();
  /** Fires with the changed item, or undefined when many changed. */
  readonly onDidChange = this.changed.event;
  private counter = 0;
  /** set by {@link reload}: the list is rebuilt when next read (the view may never be shown) */
  private stale = false;

  /** `repo`: the open project's repository (null when none), read to name things. */
  constructor(private readonly repo: () => ProjectRepository | null = () => null) {}

  /** Every item, newest first (rebuilt from the project first when {@link reload} asked for it). */
  all(): readonly ActivityItem[] {
    if (this.stale) {
      this.stale = false;
      const repo = this.repo();
      this.items = repo ? rebuildActivity(repo) : [];
    }
    return this.items;
  }

  /**
   * Replaces the list with the one rebuilt from the open project's events and approvals (empty without a
   * project), lazily: the rebuild reads up to REBUILD_EVENT_WINDOW events, so it runs when the list is next
   * read (the Agent Activity view shown), not while a project opens.
   */
  reload(): void {
    this.stale = true;
    this.changed.fire(undefined);
  }

  /** Records a finished call (researcher calls and approval decisions are skipped). */
  recordCall(call: CallRecord): void {
    if (call.caller.session_id === LOCAL_SESSION || call.caller.researcher || call.tool.startsWith('approve:') || call.tool === 'reject') return;
    this.all(); // a pending rebuild first: it reads the log as it was before this call
    const status: ActivityStatus =
      call.decision === 'pending' ? 'PENDING_APPROVAL' : call.decision === 'denied' ? 'REJECTED' : call.status === 'failed' ? 'FAILED' : 'COMPLETED';
    const repo = this.repo();
    const stored = call.request_id ? repo?.getApproval(call.request_id)?.description : undefined;
    const item: ActivityItem = {
      id: call.request_id ?? `call-${++this.counter}`,
      time: new Date().toISOString(),
      session_id: call.caller.session_id,
      client_name: call.caller.client_name,
      tool: call.tool,
      title: toolTitle(call.tool),
      // a completed call in the past tense (a read keeps these words: it stores no events to describe it by)
      description: (status === 'COMPLETED' ? describeRead : describeCall)(repo, call.tool, call.arguments, stored),
      status,
      error_code: call.error_code,
      request_id: call.request_id,
      correlation_id: call.request_id,
      undoable: false,
    };
    // a rebuild just now may have read this request from the log already: one item per request
    this.items = [item, ...this.items.filter((x) => x.id !== item.id)].slice(0, MAX_ACTIVITY_ITEMS);
    requeue(this.items);
    this.changed.fire(undefined);
  }

  /**
   * Updates items from a call's stored events: approval decisions set the status of their request; the
   * events of a completed call give its words, its correlation id (what Undo needs) and whether Undo applies.
   */
  recordEvents(events: readonly EventRecord[]): void {
    if (this.stale) return; // the rebuild will read these events from the log
    const repo = this.repo();
    const byCorrelation = new Map<string, EventRecord[]>();
    for (const e of events) {
      if (e.event_type === 'approval.granted' || e.event_type === 'approval.denied' || e.event_type === 'approval.failed') {
        const item = this.items.find((x) => x.id === e.aggregate_id);
        if (!item) continue;
        item.status = e.event_type === 'approval.denied' ? 'REJECTED' : e.event_type === 'approval.failed' ? 'FAILED' : 'COMPLETED';
        item.correlation_id = e.aggregate_id;
        const done = item.status === 'COMPLETED' && repo ? describeDone(repo, repo.listEventsByCorrelation(e.aggregate_id)) : undefined;
        if (done?.words) item.description = done.words;
        item.undoable = done?.undoable ?? false;
        requeue(this.items);
        this.changed.fire(item);
      } else if (!/^(approval|session|agent|agents)\./.test(e.event_type) && causedByAgent(e.caused_by)) {
        const list = byCorrelation.get(e.metadata.correlation_id);
        if (list) list.push(e);
        else byCorrelation.set(e.metadata.correlation_id, [e]);
      }
    }
    for (const [cid, group] of byCorrelation) {
      const sid = group[0]!.caused_by.session_id;
      // an approved request's events carry its request id; a direct call's attach to its session's newest completed item
      const item =
        this.items.find((x) => x.id === cid) ??
        this.items.find((x) => x.session_id === sid && x.status === 'COMPLETED' && !x.request_id && x.correlation_id === undefined);
      if (!item) continue;
      item.correlation_id = cid;
      // a rebuild while this call was being recorded read its events from the log as an item of their own
      const before = this.items.length;
      this.items = this.items.filter((x) => x.id !== `events:${cid}`);
      const done = describeDone(repo, group);
      if (done.words) item.description = done.words;
      item.undoable = item.status === 'COMPLETED' && done.undoable;
      this.changed.fire(this.items.length === before ? item : undefined);
    }
  }

  /** Marks an item undone (it stays, described as such). */
  markUndone(id: string): void {
    const item = this.items.find((x) => x.id === id);
    if (!item) return;
    item.undoable = false;
    item.description = `${item.description} (undone)`;
    this.changed.fire(item);
  }

  dispose(): void {
    this.changed.dispose();
  }
}
