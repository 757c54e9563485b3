import * as vscode from 'vscode';
import type { CallRecord } from '../../agent/pipeline';
import type { EventRecord } from '../../domain/events';
import type { ActivityItem, ActivityStatus } from '../../protocol/activity';
import { LOCAL_SESSION } from '../workbench';
import { batchApplyCodes, createCodeTool } from '../../tools/coreTools';
import { applyCodeTool } from '../../tools/designTools';
import { approveCodingSuggestionTool, approveSuggestionTool } from '../../tools/suggestionTools';

/** Most items kept (agent-context spec, section 8). */
export const MAX_ACTIVITY_ITEMS = 1000;

/** Tools whose calls Undo can reverse (their events are only code creations and codings). */
const UNDOABLE = new Set([createCodeTool.name, batchApplyCodes.name, applyCodeTool.name, approveCodingSuggestionTool.name, approveSuggestionTool.name]);

/**
 * The agents' activity, newest first, at most 1000 items: every call from a session that is not the
 * researcher's (COMPLETED, PENDING_APPROVAL, REJECTED, FAILED), updated by approval events; a pending
 * request of a session that already waits on an earlier one is QUEUED behind it.
 */
export class ActivityLog implements vscode.Disposable {
  private items: ActivityItem[] = [];
  private readonly changed = new vscode.EventEmitter<ActivityItem | undefined>();
  /** Fires with the changed item, or undefined when many changed. */
  readonly onDidChange = this.changed.event;
  private counter = 0;

  /** Every item, newest first. */
  all(): readonly ActivityItem[] {
    return this.items;
  }

  /** Records a finished call (researcher calls and approval decisions are skipped). */
  recordCall(call: CallRecord): void {
    if (call.caller.session_id === LOCAL_SESSION || call.caller.researcher || call.tool.startsWith('approve:') || call.tool === 'reject') return;
    const status: ActivityStatus =
      call.decision === 'pending' ? 'PENDING_APPROVAL' : call.decision === 'denied' ? 'REJECTED' : call.status === 'failed' ? 'FAILED' : 'COMPLETED';
    const item: ActivityItem = {
      id: call.request_id ?? `call-${++this.counter}`,
      time: new Date().toISOString(),
      session_id: call.caller.session_id,
      client_name: call.caller.client_name,
      tool: call.tool,
      description: summarize(call.tool, call.arguments),
      status,
      error_code: call.error_code,
      request_id: call.request_id,
      correlation_id: call.request_id ?? call.caller.correlation_id,
      undoable: status === 'COMPLETED' && UNDOABLE.has(call.tool),
    };
    this.items = [item, ...this.items].slice(0, MAX_ACTIVITY_ITEMS);
    this.requeue();
    this.changed.fire(undefined);
  }

  /** Attaches the correlation id of a completed call's events (what Undo needs). */
  recordEvents(events: readonly EventRecord[]): void {
    for (const e of events) {
      if (e.event_type === 'approval.granted' || e.event_type === 'approval.denied' || e.event_type === 'approval.failed') {
        const id = e.aggregate_id;
        const item = this.items.find((x) => x.id === id);
        if (!item) continue;
        if (e.event_type === 'approval.denied') item.status = 'REJECTED';
        else if (e.event_type === 'approval.failed') item.status = 'FAILED';
        else item.status = 'COMPLETED';
        item.undoable = item.status === 'COMPLETED' && UNDOABLE.has(item.tool);
        item.correlation_id = id;
        this.requeue();
        this.changed.fire(item);
      } else if (e.caused_by.session_id !== LOCAL_SESSION) {
        const latest = this.items.find((x) => x.session_id === e.caused_by.session_id && x.status === 'COMPLETED' && !x.request_id);
        if (latest && latest.correlation_id === undefined) latest.correlation_id = e.metadata.correlation_id;
      }
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

  private requeue(): void {
    const waiting = new Set<string>();
    for (const item of [...this.items].reverse()) {
      if (item.status !== 'PENDING_APPROVAL' && item.status !== 'QUEUED') continue;
      item.status = waiting.has(item.session_id) ? 'QUEUED' : 'PENDING_APPROVAL';
      waiting.add(item.session_id);
    }
  }

  dispose(): void {
    this.changed.dispose();
  }
}

function summarize(tool: string, args: unknown): string {
  const a = (args ?? {}) as Record<string, unknown>;
  const name = typeof a.name === 'string' ? ` "${a.name}"` : '';
  const ops = Array.isArray(a.operations) ? ` (${a.operations.length} coding${a.operations.length === 1 ? '' : 's'})` : '';
  const ids = ['code_id', 'source_id', 'segment_id', 'case_id'].filter((k) => a[k] !== undefined).map((k) => `${k.replace('_id', '')} ${String(a[k])}`);
  return `${tool.replace(/_/g, ' ')}${name}${ops}${ids.length ? ` — ${ids.join(', ')}` : ''}`;
}
