/**
 * The port of a project history's git remote (issue 16 item 2): configure it, synchronise with it, ask how far
 * apart the two are. Implemented by src/vcs/remote.ts; tools reach it as `VersionControl.remote`.
 * Marginalia stores no credentials: fetch and push use the researcher's own git setup (credential helpers,
 * SSH keys and agent, proxies), and nothing is ever pushed unless a remote was configured.
 */
import type { Actor } from './model';

/** How the project's history stands against its remote. Times ISO 8601 UTC. */
export interface RemoteStatus {
  /** false when no remote is configured (every other field is then null or 0) */
  configured: boolean;
  /** the remote's name in the history repository (default `origin`) */
  name: string | null;
  /** the remote's URL as configured (a path, `file://`, ssh or https URL) */
  url: string | null;
  /** snapshots here that the remote does not have */
  ahead: number;
  /** snapshots on the remote that are not here (as of the last fetch) */
  behind: number;
  /** when the last sync finished successfully, or null */
  last_sync: string | null;
  /** the outcome of the last sync (see {@link SyncResult.outcome}), or null */
  last_outcome: string | null;
  /** false when the remote could not be reached for this answer (then ahead and behind are from the last fetch) */
  reachable: boolean;
  /** why the remote could not be reached, when it could not */
  fetch_error?: string;
}

/** What one sync did. */
export interface SyncResult {
  /**
   * `up_to_date`: nothing to do; `pushed`: the remote lacked local snapshots and got them; `fast_forward`: the
   * remote's snapshots were applied here (nothing local was new); `merged`: both had new snapshots and were
   * merged (a merge snapshot authored by the coder, then pushed).
   */
  outcome: 'up_to_date' | 'pushed' | 'fast_forward' | 'merged';
  remote: { name: string; url: string };
  /** the local history's head after the sync (full SHA) */
  ref: string;
  short_ref: string;
  /** snapshots taken from the remote, and sent to it */
  received: number;
  sent: number;
  /** true when the remote holds `ref` after the sync */
  pushed: boolean;
  /** row changes applied to the project, per table */
  changes: Record<string, { inserted: number; updated: number; deleted: number }>;
  /** what the merge did (outcome `merged` only): the merge engine's summary */
  merge?: unknown;
  /** the merge's conflicts, for the researcher to resolve (empty unless merged) */
  conflicts: unknown[];
  /** the result in words, for a notification ("Received 2 snapshots from origin (Ana: Coded 3 passages …)") */
  in_words: string;
}

/** A project history's remote (src/vcs/remote.ts). Errors are ToolErrors (REMOTE_NOT_CONFIGURED, SYNC_DIVERGED, VERSION_CONTROL_NOT_INITIALIZED, TOOL_EXECUTION_ERROR). */
export interface RemoteSyncPort {
  /** Sets (or replaces) remote `name`'s URL and makes it the one sync uses. Checks nothing over the network. */
  configure(url: string, name: string): Promise<{ name: string; url: string; replaced: boolean }>;
  /** Ahead/behind (after a fetch when `fetch`, the default) and the last sync. */
  status(fetch: boolean): Promise<RemoteStatus>;
  /** Snapshot now, fetch, fast-forward or merge, apply to the project in one transaction, push. */
  sync(actor: Actor): Promise<SyncResult>;
}
