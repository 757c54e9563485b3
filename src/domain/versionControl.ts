/**
 * Ports of version control (issue 6, item 4; docs/architecture.md "The data": `.marginalia/history`).
 *
 * Two ports keep the layers apart: {@link ProjectRows} is what version control needs from the store
 * (read every row of a table, apply row changes), implemented by `store/dumpAccess.ts`; {@link VersionControl}
 * is what the version-control tools need, implemented by `vcs/snapshotter.ts` and handed to tools by the
 * composition root through `OpenProject.vcs` and `PrepareContext.vcs`. Neither tools nor vcs import the store.
 */
import type { Actor } from './model';
import type { RemoteSyncPort } from './remoteSync';

/** A stored value: one of SQLite's storage classes (INTEGER and REAL as number, TEXT, BLOB, NULL). */
export type RowValue = number | string | Uint8Array | null;

/** One row: column name -> value. */
export type Row = Record<string, RowValue>;

/** A table of the project: its columns in schema order and its primary-key columns in key order. */
export interface TableInfo {
  name: string;
  columns: string[];
  /** empty for a table without a declared primary key */
  primaryKey: string[];
}

/**
 * The row changes that turn one table into the state of a snapshot. `delete` rows carry at least the
 * primary-key columns; `update` rows are matched by primary key and set every other column they carry;
 * `insert` rows are inserted with the columns they carry (the schema's defaults fill the rest).
 * `replace_all` (tables without a primary key) deletes every row first and then inserts.
 */
export interface TableChange {
  table: string;
  primaryKey: string[];
  delete: Row[];
  update: Row[];
  insert: Row[];
  replace_all?: boolean;
}

/**
 * Read and write access to the project's rows, for the canonical dump and for restoring a snapshot.
 * Implemented by the store (`store/dumpAccess.ts`).
 */
export interface ProjectRows {
  /** Every ordinary table of the project (no `sqlite_*` tables, views, virtual or shadow tables), by name. */
  tables(): TableInfo[];
  /** Every row of `table`, ordered by its primary key (by all columns when it has none). */
  readRows(table: string): Row[];
  /**
   * Applies `changes` inside the caller's store transaction (so they are journaled and atomic), with
   * foreign-key checks deferred to the commit: first every delete, then every update, then every insert.
   * Throws (a programming error) outside a transaction; a constraint failure throws and the caller's
   * transaction rolls back.
   */
  applyChanges(changes: readonly TableChange[]): void;
}

/** One snapshot (commit) of the history, newest first in listings. */
export interface SnapshotInfo {
  /** the full commit SHA */
  ref: string;
  /** the abbreviated SHA git prints */
  short_ref: string;
  /** the subject line: what changed, in words ("Coded 3 passages with 'Trust' in interview-04") */
  message: string;
  /** who made the change: the researcher's coder name or an agent's name; `Marginalia` for the first snapshot */
  author: string;
  /** true when an agent made the change (its author e-mail starts with `agent.`) */
  by_agent?: boolean;
  /** ISO 8601 UTC time of the commit */
  date: string;
}

/** Items of one kind that differ between two snapshots, by name (sorted). */
export interface NamedChanges {
  added: string[];
  removed: string[];
  /** the name in `to_ref` of every item whose row (or, for sources, text) differs */
  changed: string[];
  /** the items among `changed` whose name differs */
  renamed: { from: string; to: string }[];
}

/** Rows of one kind that differ between two snapshots, by count and primary key. */
export interface CountedChanges {
  added: number;
  removed: number;
  changed: number;
  added_ids: (number | string)[];
  removed_ids: (number | string)[];
  changed_ids: (number | string)[];
}

/** What differs between two dumps, summarised per kind of item. */
export interface DumpDiffSummary {
  codes: NamedChanges;
  categories: NamedChanges;
  folders: NamedChanges;
  sources: NamedChanges;
  cases: NamedChanges;
  segments: CountedChanges;
  av_segments: CountedChanges;
  /** every dumped table whose rows differ, with counts (source texts count as rows of `sources`) */
  tables: Record<string, { added: number; removed: number; changed: number }>;
}

/** The answer of {@link VersionControl.viewDiff}. */
export interface SnapshotDiff extends DumpDiffSummary {
  from_ref: string;
  to_ref: string;
  /** the changes in words (src/vcs/diffInWords.ts): sections such as "Codes" or "Passages coded (3)", each with sentences naming codes, sources and passage texts */
  in_words: { heading: string; lines: string[] }[];
  /** `git diff from to` of the two dumps, cut at `raw_diff_limit` characters */
  raw_diff: string;
  raw_diff_truncated: boolean;
}

/** The answer of {@link VersionControl.initialize}. */
export interface InitializeResult {
  /** false when the history already existed (then a snapshot of the current state was taken if it differed) */
  created: boolean;
  history_dir: string;
  /** the snapshot holding the current state */
  ref: string;
  short_ref: string;
  /** number of files in the dump */
  file_count: number;
}

/**
 * A restore made ready by {@link VersionControl.prepareRestore}: the target snapshot's rows and the
 * snapshot of the state before the restore. Opaque to tools beyond the fields listed.
 */
export interface PreparedRestore {
  ref: string;
  short_ref: string;
  /** the restored snapshot's subject line */
  message: string;
  /** the automatic "Before restoring <short ref>" snapshot: restoring it undoes the restore */
  before_ref: string;
  before_short_ref: string;
}

/** What {@link VersionControl.applyRestore} changed, per table: rows inserted, updated and deleted. */
export interface RestoreResult {
  changes: Record<string, { inserted: number; updated: number; deleted: number }>;
}

/**
 * The project's version history as tools see it: a git repository of its own at
 * `<project dir>/.marginalia/history` holding a canonical dump of the project.
 *
 * The asynchronous methods do git work and belong in a tool's `prepare`; {@link applyRestore} is synchronous
 * and belongs in `run`, inside the store transaction. Errors (ToolError codes):
 * VERSION_CONTROL_NOT_INITIALIZED (no history yet, or the history belongs to another project),
 * SNAPSHOT_NOT_FOUND (a ref that names no snapshot), TOOL_EXECUTION_ERROR (git missing or failing).
 */
export interface VersionControl {
  /** absolute path of the history repository */
  readonly historyDir: string;
  /** the history's git remote (issue 16 item 2; src/vcs/remote.ts), when the host supplies one */
  remote?: RemoteSyncPort;
  /** True when the history repository exists (cheap: no git call). */
  isInitialized(): boolean;
  /** Creates the history (git init, first snapshot "Initial snapshot"), or snapshots the current state when it exists. */
  initialize(actor: Actor): Promise<InitializeResult>;
  /** The newest `limit` snapshots, newest first. */
  listSnapshots(limit: number): Promise<SnapshotInfo[]>;
  /** The differences from snapshot `fromRef` to snapshot `toRef` (refs: SHAs, short SHAs, `HEAD`, `HEAD~N`). */
  viewDiff(fromRef: string, toRef: string): Promise<SnapshotDiff>;
  /**
   * Reads snapshot `ref` and commits the current state as "Before restoring <short ref>" (always a new
   * commit, empty when nothing changed, so the restore can be undone by restoring it).
   */
  prepareRestore(ref: string, actor: Actor): Promise<PreparedRestore>;
  /**
   * Inside the caller's store transaction: changes the project's rows to those of the prepared snapshot.
   * The commit "Restored <short ref>" follows once the transaction is durable (the composition root feeds
   * the call's events to the snapshotter). Throws TOOL_EXECUTION_ERROR when the project changed between
   * prepare and run (nothing is restored; call again).
   */
  applyRestore(prepared: PreparedRestore): RestoreResult;
}
