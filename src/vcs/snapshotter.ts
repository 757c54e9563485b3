import * as path from 'node:path';
import { ToolError } from '../core/errors';
import type { Logger } from '../core/log';
import { silentLogger } from '../core/log';
import type { EventRecord, EventType } from '../domain/events';
import type { Actor } from '../domain/model';
import type { ProjectRepository } from '../domain/ports';
import type { InitializeResult, PreparedRestore, ProjectRows, RestoreResult, SnapshotDiff, SnapshotInfo, VersionControl } from '../domain/versionControl';
import { canonicalDump, diffDumps, MANIFEST_PATH, parseDump, planRestore, readProjectTables, type ParsedDump } from './canonicalDump';
import { describeDumpDiff } from './diffInWords';
import { COMMITTER, HistoryRepo } from './historyRepo';
import type { HistoryErasure, HistoryErasureRequest, HistoryErasureResult } from '../domain/erasure';
import type { RemoteSyncPort } from '../domain/remoteSync';
import { eraseFromDump, eraseFromHistoryRepo, type DumpErasure } from './historyErasure';
import {
  authorOf,
  changeLine,
  describeChanges,
  fallbackToolName,
  inWords,
  isBookkeeping,
  summarizeEvents,
  type CallNote,
  type PendingChange,
} from './snapshotWords';

export { authorOf, describeChanges, summarizeEvents, type CallNote, type PendingChange } from './snapshotWords';

/** The event a successful restore_snapshot stores; its publication triggers the "Restored" commit. */
export const SNAPSHOT_RESTORED_EVENT: EventType = 'project.snapshot_restored';

/**
 * Where a project's history lives: its working tree `<project dir>/.marginalia/history`; its git directory is
 * beside it, `.marginalia/history.git` (see gitDirOf in historyRepo.ts: kept out of VS Code's Source Control).
 */
export function historyDirFor(projectPath: string): string {
  return path.join(path.dirname(path.resolve(projectPath)), '.marginalia', 'history');
}

/** Options of {@link Snapshotter}. */
export interface SnapshotterOptions {
  /** commit this many milliseconds after the last change (default 2000) */
  debounceMs?: number;
  /** ... but no later than this many milliseconds after the first uncommitted change (default 30000) */
  maxWaitMs?: number;
  /** cut `view_diff`'s raw diff at this many characters (default 200,000) */
  rawDiffLimit?: number;
  /** the project's repository, read to name codes, sources and categories in snapshot titles (without it: tool names and counts) */
  repo?: ProjectRepository;
  logger?: Logger;
}

/** What {@link Snapshotter.prepareRestore} keeps for {@link Snapshotter.applyRestore}, beyond the port's fields. */
interface RestorePlan {
  target: ParsedDump;
  /** the dump committed as the "Before restoring" snapshot: the state the restore expects to replace */
  before: Map<string, string>;
}

const DEFAULT_DEBOUNCE_MS = 2000;
const DEFAULT_MAX_WAIT_MS = 30_000;
const DEFAULT_RAW_DIFF_LIMIT = 200_000;

/**
 * The project's version history (the {@link VersionControl} port) and its automatic snapshots.
 *
 * Every git operation of one project runs through one queue, one at a time, and reads the project's rows
 * synchronously at the moment it starts, so each snapshot is one consistent state. Automatic snapshots:
 * the composition root feeds it every finished call ({@link noteCall}) and the events each successful call
 * stored ({@link noteEvents}, which the pipeline publishes right after `onDidCall`); once no change has
 * arrived for `debounceMs` (or `maxWaitMs` after the first), it commits the project's dump with a title
 * saying what changed in words ("Coded 3 passages with 'Belonging' in Interview A"), authored by whoever
 * made the changes (the researcher's coder name, an agent's name: {@link authorOf}). Nothing is recorded while the history does not exist. A restore's event
 * commits "Restored <short ref>" at once. Failures of automatic snapshots are logged, never thrown.
 *
 * Git never runs inside a store transaction: tools do git work in `prepare` (async) and only
 * {@link applyRestore} runs in `run`.
 */
export class Snapshotter implements VersionControl, HistoryErasure {
  readonly historyDir: string;
  private readonly repo: HistoryRepo;
  private readonly debounceMs: number;
  private readonly maxWaitMs: number;
  private readonly rawDiffLimit: number;
  private readonly logger: Logger;
  private readonly names: ProjectRepository | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private pending: PendingChange[] = [];
  private timer: NodeJS.Timeout | undefined;
  private firstPendingAt = 0;
  private lastCall: CallNote | undefined;
  private started = false;
  private ownerChecked = false;
  private closed = false;
  private readonly plans = new WeakMap<PreparedRestore, RestorePlan>();
  /** a source being erased: every dump leaves it out until the project no longer holds it (see eraseFromHistory) */
  private erasing: DumpErasure | undefined;
  /** the history's git remote (src/vcs/remote.ts), set by the composition root */
  remote?: RemoteSyncPort;

  /**
   * @param projectPath the project's `.qda` file; the history is `<its dir>/.marginalia/history`
   * @param rows the store's rows (read for every snapshot, written by a restore)
   */
  constructor(
    private readonly projectPath: string,
    private readonly rows: ProjectRows,
    opts: SnapshotterOptions = {},
  ) {
    this.historyDir = historyDirFor(projectPath);
    this.repo = new HistoryRepo(this.historyDir);
    this.debounceMs = opts.debounceMs ?? DEFAULT_DEBOUNCE_MS;
    this.maxWaitMs = Math.max(opts.maxWaitMs ?? DEFAULT_MAX_WAIT_MS, this.debounceMs);
    this.rawDiffLimit = opts.rawDiffLimit ?? DEFAULT_RAW_DIFF_LIMIT;
    this.logger = opts.logger ?? silentLogger;
    this.names = opts.repo;
  }

  // ---- automatic snapshots -------------------------------------------------------------------------

  /** Records a finished call, so the events that follow it can be named by its tool. */
  noteCall(call: CallNote): void {
    this.lastCall = call.status === 'ok' ? call : undefined;
    // the pipeline publishes a call's events synchronously after reporting it: later events are not its own
    queueMicrotask(() => {
      if (this.lastCall === call) this.lastCall = undefined;
    });
  }

  /**
   * Records the events of one successful call (delivered after its commit is durable) and schedules the
   * automatic snapshot; a restore's event commits "Restored <short ref>" at once. Ignored while the
   * history does not exist or after {@link close}.
   */
  noteEvents(events: readonly EventRecord[]): void {
    const call = this.lastCall;
    this.lastCall = undefined;
    if (this.closed || events.length === 0 || !this.repo.exists()) return;
    const restored = events.find((e) => e.event_type === SNAPSHOT_RESTORED_EVENT);
    // sessions, approval bookkeeping and project open/close change nothing a snapshot holds (approval_requests is not dumped)
    const changes = restored ? events : events.filter((e) => !isBookkeeping(e.event_type));
    if (changes.length === 0) return;
    const first = changes[0]!;
    const by = first.caused_by;
    if (restored) {
      this.clearTimer();
      const also = this.takePending();
      const short = String(restored.payload.short_ref ?? restored.aggregate_id);
      const body = [
        `Restored snapshot ${String(restored.payload.ref ?? restored.aggregate_id)} ("${String(restored.payload.message ?? '')}").`,
        `Session ${by.session_id} (${by.client_type}, user ${by.user}).`,
        `Undo: restore_snapshot with ref ${String(restored.payload.before_short_ref ?? restored.payload.before_ref ?? '')}.`,
        ...(also.length > 0 ? ['', 'Also:', ...also.map(changeLine)] : []),
      ].join('\n');
      const author = authorOf(by, call);
      void this.enqueue(() => this.commitCurrent(`Restored ${short}`, body, author.name, true, author.agent)).catch((e) =>
        this.logger.error('the snapshot after a restore failed', e),
      );
      return;
    }
    const tool = call && call.caller.session_id === by.session_id ? call.tool : fallbackToolName(events);
    const author = authorOf(by, call);
    let words: string | undefined;
    try {
      words = this.names ? inWords(this.names, changes) : undefined;
    } catch (e) {
      this.logger.warn(`naming a snapshot's change failed: ${(e as Error).message}`);
    }
    this.pending.push({
      tool,
      summary: summarizeEvents(changes),
      session_id: by.session_id,
      client_type: by.client_type,
      user: by.user,
      words,
      author: author.name,
      agent: author.agent,
    });
    this.schedule();
  }

  /**
   * Commits the waiting changes now (instead of after the debounce) and resolves once every queued git
   * operation has finished. Never rejects: a failed snapshot is logged.
   */
  async flush(): Promise<void> {
    this.clearTimer();
    if (this.pending.length > 0) void this.enqueue(() => this.autoSnapshot()).catch((e) => this.logger.error('automatic snapshot failed', e));
    await this.idle();
  }

  /** Resolves once every queued git operation has finished, including ones queued meanwhile. */
  async idle(): Promise<void> {
    let q: Promise<unknown>;
    do {
      q = this.queue;
      await q.catch(() => undefined);
    } while (q !== this.queue);
  }

  /** Stops recording, commits what is waiting and waits for the queue. Call before the store closes. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.flush();
  }

  // ---- the VersionControl port ---------------------------------------------------------------------

  /** True when `<project dir>/.marginalia/history/.git` exists. */
  isInitialized(): boolean {
    return this.repo.exists();
  }

  /**
   * Creates the history repository (git init, local identity, the dump, commit "Initial snapshot" by
   * Marginalia). When it exists already, commits the current state if it differs from the last snapshot
   * and returns `created: false`. Errors: VERSION_CONTROL_NOT_INITIALIZED (the folder's history belongs to
   * another project file), TOOL_EXECUTION_ERROR (git missing or failing).
   */
  initialize(actor: Actor): Promise<InitializeResult> {
    return this.enqueue(async () => {
      const projectFile = path.basename(this.projectPath);
      let created = false;
      if (this.repo.exists()) {
        await this.checkOwner();
        await this.commitCurrent(
          'Snapshot of the project as it was when version history was started again',
          `Session ${actor.session_id} (${actor.client_type}, user ${actor.user}).`,
          actorName(actor),
          false,
        );
      } else {
        await this.repo.init(projectFile);
        this.ownerChecked = true;
        created = true;
        const dump = this.currentDump();
        this.repo.writeTree(dump);
        await this.repo.commit(
          'Initial snapshot',
          `Version control initialized for ${projectFile} by session ${actor.session_id} (${actor.client_type}, user ${actor.user}).`,
          COMMITTER.name,
          true,
        );
        this.pending = [];
      }
      const [head] = await this.repo.log(1);
      const tree = await this.repo.listTree(head!.ref);
      const dumpFiles = [...tree.keys()].filter((p) => p === MANIFEST_PATH || p.startsWith('tables/') || p.startsWith('sources/'));
      return { created, history_dir: this.historyDir, ref: head!.ref, short_ref: head!.short_ref, file_count: dumpFiles.length };
    });
  }

  /** The newest `limit` snapshots, newest first. Errors: VERSION_CONTROL_NOT_INITIALIZED, TOOL_EXECUTION_ERROR. */
  listSnapshots(limit: number): Promise<SnapshotInfo[]> {
    return this.enqueue(async () => {
      await this.ensureRepo();
      return this.repo.log(limit);
    });
  }

  /**
   * What differs from `fromRef` to `toRef`: codes, categories, folders, sources and cases by name, segments
   * by count and id, per-table counts, the same in words for the researcher (`in_words`: passages with their
   * code, source and text; src/vcs/diffInWords.ts), and the raw `git diff` (cut at the raw-diff limit). Both trees are
   * read with `git ls-tree`/`git cat-file`; source texts are compared by blob id.
   * Errors: VERSION_CONTROL_NOT_INITIALIZED, SNAPSHOT_NOT_FOUND (naming the ref), TOOL_EXECUTION_ERROR.
   */
  viewDiff(fromRef: string, toRef: string): Promise<SnapshotDiff> {
    return this.enqueue(async () => {
      await this.ensureRepo();
      const from = await this.mustResolve(fromRef);
      const to = await this.mustResolve(toRef);
      const [a, b] = await Promise.all([this.readForDiff(from), this.readForDiff(to)]);
      let summary;
      let inWords;
      try {
        summary = diffDumps(a, b);
        inWords = describeDumpDiff(a, b);
      } catch (e) {
        throw new ToolError('TOOL_EXECUTION_ERROR', `A snapshot is unreadable: ${(e as Error).message}`);
      }
      const raw = await this.repo.diff(from, to, this.rawDiffLimit);
      return { from_ref: from, to_ref: to, ...summary, in_words: inWords, raw_diff: raw.text, raw_diff_truncated: raw.truncated };
    });
  }

  /**
   * Reads snapshot `ref` (never checking it out: the branch stays attached) and commits the current state
   * as "Before restoring <short ref>" by the actor's user name (always a new commit), folding in the changes
   * that were waiting for an automatic snapshot. Errors: VERSION_CONTROL_NOT_INITIALIZED,
   * SNAPSHOT_NOT_FOUND, TOOL_EXECUTION_ERROR (git failing, or an unreadable snapshot).
   */
  prepareRestore(ref: string, actor: Actor): Promise<PreparedRestore> {
    return this.enqueue(async () => {
      await this.ensureRepo();
      const sha = await this.mustResolve(ref);
      const [info] = await this.repo.log(1, sha);
      const paths = [...(await this.repo.listTree(sha)).keys()].filter((p) => p === MANIFEST_PATH || p.startsWith('tables/') || p.startsWith('sources/'));
      let target: ParsedDump;
      try {
        target = parseDump(await this.repo.readFiles(sha, paths));
      } catch (e) {
        throw new ToolError('TOOL_EXECUTION_ERROR', `Snapshot ${info?.short_ref ?? sha} is unreadable: ${(e as Error).message}`);
      }
      this.clearTimer();
      const waiting = this.takePending();
      const before = this.currentDump();
      this.repo.writeTree(before);
      const shortRef = info?.short_ref ?? sha.slice(0, 7);
      const body = [
        `The state before session ${actor.session_id} (${actor.client_type}, user ${actor.user}) restored ${sha}.`,
        `Restoring this snapshot undoes that restore.`,
        ...(waiting.length > 0 ? ['', 'Changes since the previous snapshot:', ...waiting.map(changeLine)] : []),
      ].join('\n');
      const beforeSha = (await this.repo.commit(`Before restoring ${shortRef}`, body, actorName(actor), true))!;
      const [beforeInfo] = await this.repo.log(1, beforeSha);
      const prepared: PreparedRestore = {
        ref: sha,
        short_ref: shortRef,
        message: info?.message ?? '',
        before_ref: beforeSha,
        before_short_ref: beforeInfo?.short_ref ?? beforeSha.slice(0, 7),
      };
      this.plans.set(prepared, { target, before });
      return prepared;
    });
  }

  /**
   * Inside the caller's store transaction: applies the row changes that turn the project into the prepared
   * snapshot (journaled and atomic with the transaction) and returns their counts per table.
   * Errors: TOOL_EXECUTION_ERROR when the project changed since {@link prepareRestore} took the "Before
   * restoring" snapshot (nothing is restored; call restore_snapshot again), or when `prepared` did not come
   * from this history.
   */
  applyRestore(prepared: PreparedRestore): RestoreResult {
    const plan = this.plans.get(prepared);
    if (!plan) throw new ToolError('TOOL_EXECUTION_ERROR', 'This restore was not prepared by the project history.');
    this.plans.delete(prepared);
    const current = readProjectTables(this.rows);
    if (!sameFiles(canonicalDump(current), plan.before)) {
      throw new ToolError(
        'TOOL_EXECUTION_ERROR',
        `The project changed while the restore of ${prepared.short_ref} was being prepared, so nothing was restored. Call restore_snapshot again.`,
      );
    }
    const changes = planRestore(current, plan.target);
    this.rows.applyChanges(changes);
    const out: RestoreResult['changes'] = {};
    for (const c of changes) {
      const deleted = c.replace_all ? (current.find((t) => t.name === c.table)?.rows.length ?? 0) : c.delete.length;
      out[c.table] = { inserted: c.insert.length, updated: c.update.length, deleted };
    }
    return { changes: out };
  }

  /**
   * Erasure (erase_source): rewrites every snapshot without the source and prunes (src/vcs/historyErasure.ts),
   * in the queue, so no snapshot runs meanwhile. From the call on, every dump this history writes leaves the
   * source out, until a dump finds the project without it (the erasure's transaction committed), so no snapshot
   * taken between the rewrite and that commit brings the text back. Errors: TOOL_EXECUTION_ERROR.
   */
  eraseFromHistory(request: HistoryErasureRequest): Promise<HistoryErasureResult> {
    this.erasing = { ...request, segmentIdSet: new Set(request.segment_ids) };
    return this.enqueue(async () => {
      if (!this.repo.exists()) return { initialized: false, snapshots: 0, snapshots_rewritten: 0, files_rewritten: 0, duration_ms: 0, prune_ms: 0 };
      await this.checkOwner();
      try {
        return await eraseFromHistoryRepo(this.historyDir, request);
      } finally {
        // the working tree now holds the rewritten HEAD, not what this object last wrote
        this.repo.forgetWritten();
      }
    });
  }

  /**
   * Runs `job` in this history's queue (after every snapshot queued before it, none meanwhile) with the history
   * repository and a reader of the project's current dump; afterwards the working-tree cache is forgotten, since
   * the job may have moved HEAD or the index (the remote's sync, src/vcs/remote.ts).
   * Errors: VERSION_CONTROL_NOT_INITIALIZED, and whatever `job` throws.
   */
  exclusive<T>(job: (repo: HistoryRepo, currentDump: () => Map<string, string>) => Promise<T>): Promise<T> {
    return this.enqueue(async () => {
      await this.ensureRepo();
      try {
        return await job(this.repo, () => this.currentDump());
      } finally {
        this.repo.forgetWritten();
      }
    });
  }

  // ---- internals -----------------------------------------------------------------------------------

  /** The project's canonical dump now, without a source being erased (see {@link eraseFromHistory}). */
  private currentDump(): Map<string, string> {
    const tables = readProjectTables(this.rows);
    const dump = canonicalDump(tables);
    const erasing = this.erasing;
    if (!erasing) return dump;
    const stillThere = tables.find((t) => t.name === 'sources')?.rows.some((r) => r.id === erasing.source_id) ?? false;
    if (!stillThere) {
      this.erasing = undefined;
      return dump;
    }
    return eraseFromDump(dump, erasing);
  }

  /** Runs `job` after every job queued before it; the first job of this process clears a stale index lock. */
  private enqueue<T>(job: () => Promise<T>): Promise<T> {
    const run = async () => {
      if (!this.started) {
        this.started = true;
        if (this.repo.exists()) this.repo.removeStaleLock();
      }
      return job();
    };
    const result = this.queue.then(run, run);
    this.queue = result.catch(() => undefined);
    return result;
  }

  /** VERSION_CONTROL_NOT_INITIALIZED unless the history exists and belongs to this project. */
  private async ensureRepo(): Promise<void> {
    if (!this.repo.exists()) {
      throw new ToolError(
        'VERSION_CONTROL_NOT_INITIALIZED',
        `Version control is not initialized for this project (no ${this.historyDir}). Call initialize_version_control first.`,
      );
    }
    await this.checkOwner();
  }

  /** Refuses a history that a different project file in the same folder created. */
  private async checkOwner(): Promise<void> {
    if (this.ownerChecked) return;
    const owner = await this.repo.projectFile();
    const mine = path.basename(this.projectPath);
    if (owner !== null && owner !== mine) {
      throw new ToolError(
        'VERSION_CONTROL_NOT_INITIALIZED',
        `The history at ${this.historyDir} belongs to the project ${owner}, not ${mine}. Keep each project in a folder of its own to give it version control.`,
      );
    }
    this.ownerChecked = true;
  }

  private async mustResolve(ref: string): Promise<string> {
    const sha = await this.repo.resolveRef(ref);
    if (!sha) throw new ToolError('SNAPSHOT_NOT_FOUND', `No snapshot "${ref}" in the project history. list_snapshots shows the refs.`, { ref });
    return sha;
  }

  /** The files of commit `sha` for diffing: manifest and tables read, source texts as their blob ids. */
  private async readForDiff(sha: string): Promise<Map<string, string>> {
    const tree = await this.repo.listTree(sha);
    const read = [...tree.keys()].filter((p) => p === MANIFEST_PATH || p.startsWith('tables/'));
    const files = await this.repo.readFiles(sha, read);
    for (const [p, blob] of tree) if (p.startsWith('sources/')) files.set(p, `blob ${blob}`);
    return files;
  }

  /** Writes the current dump and commits it; returns the SHA, or null when nothing changed and `allowEmpty` is false. */
  private async commitCurrent(subject: string, body: string, author: string, allowEmpty: boolean, agent = false): Promise<string | null> {
    if (!this.repo.exists()) return null;
    await this.checkOwner();
    this.repo.writeTree(this.currentDump());
    return this.repo.commit(subject, body, author, allowEmpty, agent);
  }

  /** The automatic snapshot: commits the waiting changes (taken when the job starts, with the dump). */
  private async autoSnapshot(): Promise<void> {
    const changes = this.takePending();
    if (changes.length === 0 || !this.repo.exists()) return;
    const message = describeChanges(changes);
    await this.commitCurrent(
      message.subject,
      message.body,
      message.author,
      false,
      changes.some((c) => c.agent),
    );
  }

  private takePending(): PendingChange[] {
    const p = this.pending;
    this.pending = [];
    return p;
  }

  private schedule(): void {
    const now = Date.now();
    if (!this.timer) this.firstPendingAt = now;
    this.clearTimer();
    const wait = Math.max(0, Math.min(this.debounceMs, this.firstPendingAt + this.maxWaitMs - now));
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.enqueue(() => this.autoSnapshot()).catch((e) => this.logger.error('automatic snapshot failed', e));
    }, wait);
    this.timer.unref();
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}

function sameFiles(a: ReadonlyMap<string, string>, b: ReadonlyMap<string, string>): boolean {
  if (a.size !== b.size) return false;
  for (const [k, v] of a) if (b.get(k) !== v) return false;
  return true;
}

/** The author of a snapshot an actor asked for (restore, initialize): their user name, else their session. */
function actorName(actor: Actor): string {
  return actor.user || `session ${actor.session_id}`;
}
