/**
 * The project history's git remote (issue 16 item 2): configure it, synchronise with it, report ahead/behind.
 *
 * The history (`.marginalia/history`, its git directory `history.git`; src/vcs/historyRepo.ts) is an ordinary
 * git repository, so any git remote works: a path, `file://`, ssh, https, `git://`. The remote's URL is kept in
 * the history's own git config (`remote.<name>.url`), the remote sync uses in `marginalia.remote`, the last sync
 * in `marginalia.lastSync` / `marginalia.lastOutcome`. Marginalia stores no credentials: fetch and push run with
 * the researcher's own git configuration (credential helpers, `~/.ssh`, the SSH agent, proxies), which the
 * history's other git commands switch off; git never prompts (`GIT_TERMINAL_PROMPT=0`), so a missing
 * credential fails the sync with git's message instead of hanging. Nothing is ever pushed unless a remote was
 * configured.
 *
 * A sync, in the history's queue (no automatic snapshot runs meanwhile; Snapshotter.exclusive):
 * 1. snapshot now: the current state is committed if it differs from the last snapshot (by the coder);
 * 2. `git fetch <remote> main`;
 * 3. local head L, remote head R: remote has nothing or R is in L → push; L is in R → fast-forward: R's dump is
 *    applied to the project; both moved on → three-way merge of the dumps (base = merge base) by the merge
 *    engine, applied to the project, committed as a merge snapshot with parents L and R authored by the coder;
 *    without a merge engine: SYNC_DIVERGED (nothing changes). Two heads with identical trees (a sync killed after
 *    its project change and before its git update) need no merge: the history moves to R;
 * 4. the project change is one journaled store transaction (planRestore over the dumps), made only while the
 *    project still equals L's snapshot (else the sync starts over, at most three times);
 * 5. the history's branch moves (after the project changed: a crash in between leaves the project at the new
 *    state and the history at L, which the next sync snapshots and finds identical to R), then `git push`.
 * The remote only ever receives complete commits (git's push is atomic per ref), so it stays intact whatever
 * moment a sync is killed.
 */
import { execFile } from 'node:child_process';
import * as path from 'node:path';
import { ToolError } from '../core/errors';
import type { Actor } from '../domain/model';
import type { RemoteStatus, RemoteSyncPort, SyncResult } from '../domain/remoteSync';
import type { ProjectRows, Row, TableChange } from '../domain/versionControl';
import {
  canonicalDump,
  EXCLUDED_META_KEYS,
  isDumpedTable,
  MANIFEST_PATH,
  parseDump,
  planRestore,
  readProjectTables,
  type DumpTable,
  type ParsedDump,
} from './canonicalDump';
import { parseForMerge, planMergeChanges } from './syncMerge';
import { COMMITTER, gitEnvironment, identEmail, identName, type HistoryRepo } from './historyRepo';

/** The branch every history uses (historyRepo.ts init). */
const BRANCH = 'main';
/** The remote's name when none is given. */
export const DEFAULT_REMOTE = 'origin';
/** A remote name git accepts and no option: letters, digits, `.`, `_`, `-`, at most 64. */
export const REMOTE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
/** Environment variables the network commands (fetch, push) also get: the researcher's own SSH, credential and proxy setup. */
const NETWORK_ENV =
  /^(ssh_auth_sock|ssh_agent_pid|git_ssh|git_ssh_command|git_askpass|ssh_askpass|display|xdg_config_home|user|logname|(http|https|all|no)_proxy|git_ssl_cainfo|git_ssl_capath)$/i;

/** What a merge engine returns for three dumps (src/vcs/merge). */
export interface MergeOutcome {
  merged: ParsedDump;
  conflicts: unknown[];
  summary: unknown;
}
/** A three-way merge of dumps: base (the merge base's), ours (local head's), theirs (the remote's). */
export type MergeFn = (base: ParsedDump, ours: ParsedDump, theirs: ParsedDump) => MergeOutcome;

/** What {@link RemoteSync} needs from the history (the Snapshotter). */
export interface HistoryAccess {
  readonly historyDir: string;
  flush(): Promise<void>;
  exclusive<T>(job: (repo: HistoryRepo, currentDump: () => Map<string, string>) => Promise<T>): Promise<T>;
}

/** Options of {@link RemoteSync}. */
export interface RemoteSyncOptions {
  history: HistoryAccess;
  /**
   * the store's rows (read for the dump, written by a fast-forward or merge); with `writeGeneration` (the store's,
   * StoreDumpAccess), "the project still holds the dump just taken" is checked by it instead of by dumping again
   */
  rows: ProjectRows & { readonly writeGeneration?: number };
  /** runs `fn` as one durable, journaled store transaction */
  transaction: <T>(fn: () => T) => T;
  /** the three-way merge of dumps; absent: diverged histories fail with SYNC_DIVERGED */
  merge?: MergeFn;
  /**
   * Stores a merge's conflicts for the researcher (merge_conflicts), inside the transaction that applies the
   * merge, so they persist exactly when the merge does; `mergeRef` is the remote snapshot merged in.
   */
  recordConflicts?: (conflicts: readonly unknown[], mergeRef: string) => void;
  /** called after a sync changed the project (so the host can refresh its views) */
  onProjectChanged?: () => void;
}

/** The git commands that talk to the remote: their failures are REMOTE_UNREACHABLE. */
const REMOTE_COMMANDS: ReadonlySet<string> = new Set(['ls-remote', 'fetch', 'push', 'clone']);

/** Runs git in `dir` with `env`; resolves stdout, rejects with git's stderr (REMOTE_UNREACHABLE for the remote's commands, else TOOL_EXECUTION_ERROR). */
function git(dir: string, env: Record<string, string>, args: string[], timeoutMs = 120_000): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('git', args, { cwd: dir, env, maxBuffer: 1 << 30, timeout: timeoutMs, encoding: 'utf8' }, (err, stdout, stderr) => {
      if (err) {
        const e = err as NodeJS.ErrnoException;
        if (e.code === 'ENOENT') reject(new ToolError('TOOL_EXECUTION_ERROR', 'Syncing needs git, which is not installed or not on PATH.'));
        // what reads or writes the remote fails for reasons outside the project (not a repository, no access, no network)
        else if (REMOTE_COMMANDS.has(args[0] ?? ''))
          reject(new ToolError('REMOTE_UNREACHABLE', `The remote could not be reached: git ${args[0]} failed: ${(stderr || e.message).trim().slice(0, 800)}`));
        else reject(new ToolError('TOOL_EXECUTION_ERROR', `git ${args[0]} failed: ${(stderr || e.message).trim().slice(0, 800)}`));
      } else resolve(stdout);
    });
  });
}

/** A URL or path git can use as a remote, or a ToolError INVALID_ARGUMENTS saying why not. */
export function checkRemoteUrl(url: string): string {
  const u = url.trim();
  if (u === '' || u.length > 2000) throw new ToolError('INVALID_ARGUMENTS', 'url must be a git URL or path of 1 to 2000 characters.');
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(u)) throw new ToolError('INVALID_ARGUMENTS', 'url must not contain control characters or line breaks.');
  if (u.startsWith('-')) throw new ToolError('INVALID_ARGUMENTS', 'url must not start with "-".');
  if (/^[a-z][a-z0-9+.-]*::/i.test(u) || /^ext::/i.test(u))
    throw new ToolError('INVALID_ARGUMENTS', 'url must be a path or a file://, ssh://, git://, http(s):// or user@host:path URL, not a git remote helper.');
  const m = /^[a-z][a-z0-9+.-]*:\/\/([^/@]*)@/i.exec(u);
  if (m && m[1]!.includes(':')) {
    throw new ToolError(
      'INVALID_ARGUMENTS',
      'url must not contain a password: Marginalia stores no credentials. Use your git credential helper or an SSH key.',
    );
  }
  return u;
}

/** The project history's git remote. */
export class RemoteSync implements RemoteSyncPort {
  private readonly dir: string;
  private readonly localEnv: Record<string, string>;
  private readonly netEnv: Record<string, string>;

  constructor(private readonly opts: RemoteSyncOptions) {
    this.dir = opts.history.historyDir;
    this.localEnv = gitEnvironment(this.dir);
    // fetch and push: the researcher's own git configuration (credentials), and never a prompt
    const net: Record<string, string> = { ...this.localEnv };
    delete net.GIT_CONFIG_GLOBAL;
    delete net.GIT_CONFIG_NOSYSTEM;
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined && NETWORK_ENV.test(k)) net[k] = v;
    net.GIT_TERMINAL_PROMPT = '0';
    this.netEnv = net;
  }

  private run(args: string[]): Promise<string> {
    return git(this.dir, this.localEnv, args);
  }

  private async config(key: string): Promise<string | null> {
    const out = await this.run(['config', '--local', '--default', '', '--get', key]);
    return out.trim() || null;
  }

  private async remote(): Promise<{ name: string; url: string } | null> {
    const name = await this.config('marginalia.remote');
    if (!name) return null;
    const url = await this.config(`remote.${name}.url`);
    return url ? { name, url } : null;
  }

  private async mustRemote(): Promise<{ name: string; url: string }> {
    const r = await this.remote();
    if (!r)
      throw new ToolError(
        'REMOTE_NOT_CONFIGURED',
        'No remote is configured for this project history. Configure one with configure_remote {url} (the researcher only).',
      );
    return r;
  }

  private async resolve(ref: string): Promise<string | null> {
    const out = await this.run(['rev-parse', '--verify', '--quiet', `${ref}^{commit}`]).catch(() => '');
    const sha = out.trim();
    return /^[0-9a-f]{40,64}$/.test(sha) ? sha : null;
  }

  private async isAncestor(a: string, b: string): Promise<boolean> {
    return this.run(['merge-base', '--is-ancestor', a, b]).then(
      () => true,
      () => false,
    );
  }

  private async count(range: string): Promise<number> {
    return Number((await this.run(['rev-list', '--count', range])).trim()) || 0;
  }

  private async fetch(name: string): Promise<void> {
    // the remote's branch, if it has one yet (an empty bare repository has none: nothing is fetched)
    const heads = await git(this.dir, this.netEnv, ['ls-remote', '--heads', name, BRANCH]);
    if (heads.trim() === '') {
      await this.run(['update-ref', '-d', `refs/remotes/${name}/${BRANCH}`]).catch(() => undefined);
      return;
    }
    await git(this.dir, this.netEnv, ['fetch', '--quiet', '--no-tags', name, `+refs/heads/${BRANCH}:refs/remotes/${name}/${BRANCH}`]);
  }

  private async push(name: string): Promise<void> {
    await git(this.dir, this.netEnv, ['push', '--quiet', '--no-verify', name, `refs/heads/${BRANCH}:refs/heads/${BRANCH}`]);
  }

  /** Reads the dump files of commit `sha`. */
  private async filesAt(repo: HistoryRepo, sha: string): Promise<Map<string, string>> {
    const paths = [...(await repo.listTree(sha)).keys()].filter((p) => p === MANIFEST_PATH || p.startsWith('tables/') || p.startsWith('sources/'));
    return repo.readFiles(sha, paths);
  }

  async configure(url: string, name: string = DEFAULT_REMOTE): Promise<{ name: string; url: string; replaced: boolean }> {
    const u = checkRemoteUrl(url);
    if (!REMOTE_NAME.test(name))
      throw new ToolError('INVALID_ARGUMENTS', 'name must be 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit.');
    // a local path is stored absolute, so the remote stays the same whatever the working directory
    const stored = /^[a-z][a-z0-9+.-]*:\/\//i.test(u) || /^[^/\\]+@[^/\\]+:/.test(u) || path.isAbsolute(u) ? u : path.resolve(u);
    return this.opts.history.exclusive(async () => {
      const existing = await this.config(`remote.${name}.url`);
      if (existing === null) await this.run(['remote', 'add', name, stored]);
      else await this.run(['remote', 'set-url', name, stored]);
      await this.run(['config', '--local', 'marginalia.remote', name]);
      return { name, url: stored, replaced: existing !== null };
    });
  }

  async status(fetch = true): Promise<RemoteStatus> {
    return this.opts.history.exclusive(async () => {
      const r = await this.remote();
      const lastSync = await this.config('marginalia.lastSync');
      const lastOutcome = await this.config('marginalia.lastOutcome');
      if (!r) return { configured: false, name: null, url: null, ahead: 0, behind: 0, last_sync: lastSync, last_outcome: lastOutcome, reachable: false };
      let reachable = true;
      let fetchError: string | undefined;
      if (fetch) {
        try {
          await this.fetch(r.name);
        } catch (e) {
          reachable = false;
          fetchError = (e as Error).message;
        }
      }
      const local = await this.resolve('HEAD');
      const remote = await this.resolve(`refs/remotes/${r.name}/${BRANCH}`);
      const ahead = local ? (remote ? await this.count(`${remote}..${local}`) : await this.count(local)) : 0;
      const behind = remote ? (local ? await this.count(`${local}..${remote}`) : await this.count(remote)) : 0;
      return {
        configured: true,
        name: r.name,
        url: r.url,
        ahead,
        behind,
        last_sync: lastSync,
        last_outcome: lastOutcome,
        reachable,
        ...(fetchError ? { fetch_error: fetchError } : {}),
      };
    });
  }

  async sync(actor: Actor): Promise<SyncResult> {
    await this.opts.history.flush();
    for (let attempt = 1; ; attempt++) {
      const out = await this.opts.history.exclusive((repo, currentDump) => this.syncOnce(repo, currentDump, actor));
      if (out !== 'retry') {
        if (Object.keys(out.changes).length > 0) this.opts.onProjectChanged?.();
        return out;
      }
      if (attempt >= 3)
        throw new ToolError('TOOL_EXECUTION_ERROR', 'The project kept changing while the sync was being prepared, so nothing was applied. Sync again.');
    }
  }

  private async syncOnce(repo: HistoryRepo, currentDump: () => Map<string, string>, actor: Actor): Promise<SyncResult | 'retry'> {
    const r = await this.mustRemote();
    const author = actor.user || 'researcher';
    // 1. snapshot now
    const before = currentDump();
    // read after the dump (reading it may first make drawn GUIDs durable: a write)
    const generation = this.opts.rows.writeGeneration;
    repo.writeTree(before);
    await repo.commit('Snapshot before syncing', `Taken by ${author} before syncing with ${r.name}.`, author, false);
    const local = (await this.resolve('HEAD'))!;
    // 2. fetch
    await this.fetch(r.name);
    const remote = await this.resolve(`refs/remotes/${r.name}/${BRANCH}`);
    const result = (
      outcome: SyncResult['outcome'],
      head: string,
      received: number,
      sent: number,
      pushed: boolean,
      changes: SyncResult['changes'] = {},
      extra: Partial<SyncResult> = {},
    ): SyncResult => ({
      outcome,
      remote: r,
      ref: head,
      short_ref: head.slice(0, 7),
      received,
      sent,
      pushed,
      changes,
      conflicts: [],
      in_words: '',
      ...extra,
    });
    let res: SyncResult;
    if (remote === null || remote === local || (await this.isAncestor(remote, local))) {
      // 3a. nothing new on the remote
      const sent = remote === null ? await this.count(local) : await this.count(`${remote}..${local}`);
      if (sent > 0) await this.push(r.name);
      res = result(sent > 0 ? 'pushed' : 'up_to_date', local, 0, sent, true);
    } else {
      const sameTree = (await this.run(['rev-parse', `${local}^{tree}`])).trim() === (await this.run(['rev-parse', `${remote}^{tree}`])).trim();
      const baseSha = (await this.run(['merge-base', local, remote]).catch(() => '')).trim();
      // joining: a project with nothing in it whose history is unrelated to the remote's takes the remote's
      const joining = baseSha === '' && isEmptyProject(before);
      const fastForward = sameTree || joining || (await this.isAncestor(local, remote));
      const received = await this.count(`${local}..${remote}`);
      const theirsFiles = await this.filesAt(repo, remote);
      if (fastForward) {
        // 3b. fast-forward: the remote's state becomes the project's
        const theirs = unreadable(remote, () => parseDump(theirsFiles));
        const changes = this.apply(before, generation, (current) => planRestore(current, theirs));
        if (changes === 'retry') return 'retry';
        await this.moveTo(repo, currentDump, remote, null, author);
        res = result('fast_forward', (await this.resolve('HEAD'))!, received, 0, true, changes);
        const head = res.ref;
        if (head !== remote) {
          await this.push(r.name);
          res.sent = 1;
        }
      } else {
        // 3c. both moved on: three-way merge of the dumps
        const merge = this.opts.merge;
        if (!merge) {
          throw new ToolError(
            'SYNC_DIVERGED',
            `This project and ${r.name} both have new snapshots (${await this.count(`${remote}..${local}`)} here, ${received} there) and this version of Marginalia cannot merge them yet; nothing was changed.`,
            { ahead: await this.count(`${remote}..${local}`), behind: received },
          );
        }
        const baseFiles = baseSha ? await this.filesAt(repo, baseSha) : new Map<string, string>();
        // rows identical in the three dumps are left out: the merge cannot change them (src/vcs/syncMerge.ts)
        const input = unreadable(baseSha || remote, () =>
          baseSha ? parseForMerge(baseFiles, before, theirsFiles) : { base: new Map(), ours: parseDump(before), theirs: parseDump(theirsFiles) },
        );
        const outcome = merge(input.base, input.ours, input.theirs);
        const changes = this.apply(
          before,
          generation,
          (current) => planMergeChanges(current, input.ours, outcome.merged),
          () => {
            if (outcome.conflicts.length > 0) this.opts.recordConflicts?.(outcome.conflicts, remote);
          },
        );
        if (changes === 'retry') return 'retry';
        const sent = await this.count(`${remote}..${local}`);
        await this.moveTo(repo, currentDump, remote, local, author, outcome.conflicts.length);
        await this.push(r.name);
        res = result('merged', (await this.resolve('HEAD'))!, received, sent + 1, true, changes, { merge: outcome.summary, conflicts: outcome.conflicts });
      }
    }
    res.in_words = describe(res);
    await this.run(['config', '--local', 'marginalia.lastSync', new Date().toISOString()]);
    await this.run(['config', '--local', 'marginalia.lastOutcome', res.outcome]);
    return res;
  }

  /**
   * Applies the row changes `plan` makes (given the project's tables, with their rows when the project was read
   * for the check) in one journaled transaction, if the project still holds `before` (the dump just snapshotted, at
   * write generation `generation`); returns the counts per table, or 'retry' when the project changed meanwhile.
   */
  private apply(
    before: ReadonlyMap<string, string>,
    generation: number | undefined,
    plan: (current: DumpTable[]) => TableChange[],
    alsoInTransaction?: () => void,
  ): SyncResult['changes'] | 'retry' {
    return this.opts.transaction(() => {
      const rows = this.opts.rows;
      const cheap = generation !== undefined && rows.writeGeneration !== undefined;
      if (cheap && rows.writeGeneration !== generation) return 'retry' as const;
      // with the generation unchanged, the rows are read only when the plan needs them (planRestore's do)
      const current = cheap ? lazyTables(rows) : readProjectTables(rows);
      if (!cheap) {
        const now = canonicalDump(current);
        if (now.size !== before.size || [...now].some(([k, v]) => before.get(k) !== v)) return 'retry' as const;
      }
      const changes: TableChange[] = plan(current);
      rows.applyChanges(changes);
      alsoInTransaction?.();
      const out: SyncResult['changes'] = {};
      for (const c of changes) {
        const deleted = c.replace_all ? (current.find((t) => t.name === c.table)?.rows.length ?? 0) : c.delete.length;
        out[c.table] = { inserted: c.insert.length, updated: c.update.length, deleted };
      }
      return out;
    });
  }

  /**
   * After the project holds the new state: writes its dump to the working tree and moves the branch. With
   * `mergeParent` (a merge), commits the tree as a merge of it and `remote` authored by `author`; else, when the
   * dump equals `remote`'s tree, the branch moves to `remote`; otherwise (the dump differs, e.g. a schema the
   * remote's snapshot predates) it is committed on top of `remote`.
   */
  private async moveTo(
    repo: HistoryRepo,
    currentDump: () => Map<string, string>,
    remote: string,
    mergeParent: string | null,
    author: string,
    conflicts = 0,
  ): Promise<void> {
    repo.writeTree(currentDump());
    await this.run(['add', '--all']);
    const tree = (await this.run(['write-tree'])).trim();
    const remoteTree = (await this.run(['rev-parse', `${remote}^{tree}`])).trim();
    let head = remote;
    if (mergeParent !== null || tree !== remoteTree) {
      const subject =
        mergeParent !== null
          ? `Merged ${remote.slice(0, 7)} from the remote${conflicts > 0 ? ` (${conflicts} conflict${conflicts === 1 ? '' : 's'} to resolve)` : ''}`
          : `Applied ${remote.slice(0, 7)} from the remote`;
      const parents = mergeParent !== null ? ['-p', mergeParent, '-p', remote] : ['-p', remote];
      const env = {
        ...this.localEnv,
        GIT_AUTHOR_NAME: identName(author),
        GIT_AUTHOR_EMAIL: identEmail(author),
        GIT_COMMITTER_NAME: COMMITTER.name,
        GIT_COMMITTER_EMAIL: COMMITTER.email,
      };
      head = (await git(this.dir, env, ['commit-tree', tree, ...parents, '-m', subject])).trim();
    }
    await this.run(['update-ref', `refs/heads/${BRANCH}`, head]);
    await this.run(['read-tree', head]);
  }
}

/** The project's dumped tables with their rows read on first use (a merge's plan needs only the columns). */
function lazyTables(rows: ProjectRows): DumpTable[] {
  return rows
    .tables()
    .filter((t) => isDumpedTable(t.name))
    .map((t) => {
      let read: Row[] | undefined;
      return {
        ...t,
        get rows(): Row[] {
          read ??= rows.readRows(t.name).filter((r) => t.name !== 'meta' || !EXCLUDED_META_KEYS.has(String(r.key)));
          return read;
        },
      };
    });
}

/** `parse()`, its failure a TOOL_EXECUTION_ERROR naming snapshot `sha`. */
function unreadable<T>(sha: string, parse: () => T): T {
  try {
    return parse();
  } catch (e) {
    throw new ToolError('TOOL_EXECUTION_ERROR', `Snapshot ${sha.slice(0, 7)} is unreadable: ${(e as Error).message}`);
  }
}

/** Tables whose rows make a project non-empty (a project with none of them joins a remote by taking its history). */
const CONTENT_TABLES = ['codes', 'categories', 'sources', 'folders', 'segments', 'av_segments', 'cases'];

/** True when the dump holds no codes, categories, sources, folders, segments or cases. */
export function isEmptyProject(dump: ReadonlyMap<string, string>): boolean {
  return CONTENT_TABLES.every((t) => (dump.get(`tables/${t}.jsonl`) ?? '') === '');
}

/** A sync's result in words, for a notification. */
export function describe(r: SyncResult): string {
  const snaps = (n: number) => `${n} snapshot${n === 1 ? '' : 's'}`;
  const changed = Object.values(r.changes).reduce((n, c) => n + c.inserted + c.updated + c.deleted, 0);
  switch (r.outcome) {
    case 'up_to_date':
      return `Already in sync with ${r.remote.name}: nothing to send or receive.`;
    case 'pushed':
      return `Sent ${snaps(r.sent)} to ${r.remote.name}; nothing new there.`;
    case 'fast_forward':
      return `Received ${snaps(r.received)} from ${r.remote.name} (${changed} row change${changed === 1 ? '' : 's'} applied to the project).`;
    case 'merged':
      return (
        `Merged ${snaps(r.received)} from ${r.remote.name} with ${snaps(r.sent - 1)} made here (${changed} row change${changed === 1 ? '' : 's'} applied) and sent the merge` +
        (r.conflicts.length > 0
          ? `; ${r.conflicts.length} conflict${r.conflicts.length === 1 ? '' : 's'} to resolve in the Merge Conflicts view (or with list_merge_conflicts).`
          : '; no conflicts.')
      );
  }
}
