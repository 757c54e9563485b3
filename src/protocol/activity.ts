/**
 * Messages between the Agent Activity webview (webview-ui/activity.ts) and the extension
 * (src/ui/activity/activityView.ts). Types only: the webview imports them with `import type`.
 */

/** The spec's activity item statuses (agent-context spec, section 3). */
export type ActivityStatus = 'COMPLETED' | 'PENDING_APPROVAL' | 'QUEUED' | 'REJECTED' | 'FAILED';

/** One agent action as the activity log shows it. Times ISO 8601 UTC. */
export interface ActivityItem {
  /** stable id: the request id for held calls, else a per-call id */
  id: string;
  time: string;
  session_id: string;
  client_name: string;
  tool: string;
  /** what kind of action, for the row's head: the tool's title ("Merge Codes"), or what its first event did when rebuilt from the event log */
  title?: string;
  /** what it did or asks, in words: names of codes, categories and sources, a short excerpt of the passage, never bare ids */
  description: string;
  status: ActivityStatus;
  error_code?: string;
  /** set while the call waits for approval */
  request_id?: string;
  /** the call's correlation id (its events carry it): what Undo removes */
  correlation_id?: string;
  /** whether Undo applies (creating a code, applying a code) */
  undoable: boolean;
}

/** Extension -> webview. */
export type ToActivityWebview = { type: 'items'; items: ActivityItem[] } | { type: 'upsert'; item: ActivityItem };

/** Webview -> extension. */
export type FromActivityWebview =
  { type: 'ready' } | { type: 'undo'; id: string } | { type: 'approve'; request_id: string } | { type: 'reject'; request_id: string };
