import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { simpleGit, type SimpleGit } from 'simple-git';
import { ToolError } from '../core/errors';
import type { SnapshotInfo } from '../domain/versionControl';

/** The committer of every snapshot, and the author of the first one. */
export const COMMITTER = { name: 'Marginalia', email: 'marginalia@localhost' };

/** The start of an agent author's e-mail address: how {@link HistoryRepo.log} tells agents' snapshots from the researcher's. */
export const AGENT_EMAIL_PREFIX = 'agent.';

/** The directories of the working tree that hold the dump (besides `manifest.json`); nothing else is ever deleted. */
const MANAGED_DIRS = ['tables', 'sources'];

/** The environment variables passed to git (case-insensitive); everything else, GIT_* above all, is withheld. */
const PASSED_ENV = /^(path|home|userprofile|systemroot|windir|comspec|temp|tmp|tmpdir|lang|language|lc_[a-z]+)$/i;

/** Files written once by {@link HistoryRepo.init} and left alone afterwards. */
const GITATTRIBUTES = '# Written by Marginalia: keep every file byte for byte (no line-ending conversion).\n* -text\n';
const README = `# Marginalia project history

This git repository is written by Marginalia: every commit is a snapshot of the project, as a canonical
text dump (\`manifest.json\`; \`tables/<table>.jsonl\`, one JSON row per line, sorted by primary key;
\`sources/<id>.txt\`, the text of each source). Commits are made automatically after changes, titled in words ("Coded 3 passages with 'Food security' in
interview-04") and authored by whoever made them (the researcher's configured coder name, or the agent's name).

Its git directory is \`../history.git\` (not a \`.git\` folder here, so editors do not adopt it as a source-control
repository); use \`git --git-dir=.marginalia/history.git log\` to browse it.

Browse, diff, or push it to a remote to share it. Do not commit here by hand: restore snapshots with the
\`restore_snapshot\` tool, which first snapshots the current state so the restore can be undone.
`;

/** `s` without line breaks and control characters, at most `max` characters. */
function oneLine(s: string, max: number): string {
  // eslint-disable-next-line no-control-regex
  const flat = s.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** A name git accepts in an ident (`Name <email>`): no angle brackets, no control characters, at most 100 characters. */
export function identName(s: string): string {
  return oneLine(s.replace(/[<>]/g, '_'), 100) || 'unknown';
}

/** How long {@link HistoryRepo.exists} trusts that a history is absent before looking again, in milliseconds. */
const ABSENT_RECHECK_MS = 1000;

/**
 * The git directory of the history whose working tree is `dir`: `<dir>.git` beside it
 * (`<project dir>/.marginalia/history.git`), never `<dir>/.git`. VS Code's git extension finds repositories
 * by a `.git` entry (its workspace scan, and a file watcher on paths containing `/.git`) and by
 * `git rev-parse --show-toplevel`, which looks for `.git` in each enclosing folder; a git directory named
 * `history.git` beside the working tree is found by neither, so the history never shows in Source Control
 * and is never offered for publishing (issue 13, item 9). A history still at `<dir>/.git` (one that
 * {@link migrateHistoryDir} could not move) is used where it is.
 */
export function gitDirOf(dir: string): string {
  const next = `${path.resolve(dir)}.git`;
  // a history not yet moved (migrateHistoryDir failed, e.g. the folder was in use on Windows) stays usable where it is
  if (!fs.existsSync(next)) {
    const old = path.join(dir, '.git');
    try {
      if (fs.statSync(old).isDirectory()) return old;
    } catch {
      // none there either: the new place
    }
  }
  return next;
}

/**
 * Moves a history made before the git directory moved (`<dir>/.git`) to {@link gitDirOf} (`<dir>.git`) and
 * records the working tree in its config; does nothing when there is nothing to move or the new place is
 * taken. Also writes `.gitignore` beside them (see {@link ignoreBeside}). Synchronous (a rename and a config
 * edit); safe to call before every use. Returns true when it moved one.
 */
export function migrateHistoryDir(dir: string): boolean {
  const old = path.join(dir, '.git');
  const next = `${path.resolve(dir)}.git`;
  let moved = false;
  try {
    if (fs.statSync(old).isDirectory() && !fs.existsSync(next)) {
      fs.renameSync(old, next);
      setWorktree(next, dir);
      ignoreBeside(dir);
      moved = true;
    }
  } catch {
    // nothing to move
  }
  return moved;
}

/** Sets `core.worktree` in the config of `gitDir` to the working tree `dir`, relative to the git directory (so the project folder can move). */
function setWorktree(gitDir: string, dir: string): void {
  const config = path.join(gitDir, 'config');
  const rel = path.relative(gitDir, dir).split(path.sep).join('/');
  const text = fs.readFileSync(config, 'utf8').replace(/^\s*worktree\s*=.*\n?/gm, '');
  fs.writeFileSync(config, `${text}${text.endsWith('\n') ? '' : '\n'}[core]\n\tworktree = ${rel}\n`);
}

/**
 * Keeps the history out of an enclosing workspace repository: `<dir's parent>/.gitignore` (the project's
 * `.marginalia` folder) lists the working tree and the git directory, added to what the file already says.
 * The history holds every transcript, so a researcher's `git add .` must not take it.
 */
export function ignoreBeside(dir: string): void {
  const file = path.join(path.dirname(dir), '.gitignore');
  const names = [`${path.basename(dir)}/`, `${path.basename(gitDirOf(dir))}/`];
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    text = '# Written by Marginalia: the project history (every transcript) stays out of your own repository.\n';
  }
  const lines = new Set(text.split(/\r?\n/).map((l) => l.trim()));
  const missing = names.filter((n) => !lines.has(n));
  if (missing.length === 0) return;
  fs.writeFileSync(file, `${text}${text === '' || text.endsWith('\n') ? '' : '\n'}${missing.join('\n')}\n`);
}

/**
 * The e-mail address of an author known only by name: `Marginalia`'s own, else the name in lower case with
 * every run of other characters than a-z, 0-9, `.`, `_` and `-` made one `-`, at `marginalia.invalid` (a
 * reserved domain, RFC 2606, so it never reaches anyone): "Ana María" -> `ana-mar-a@marginalia.invalid`;
 * an agent's starts with {@link AGENT_EMAIL_PREFIX} ("Claude" -> `agent.claude@marginalia.invalid`).
 */
export function identEmail(name: string, agent = false): string {
  if (name === COMMITTER.name && !agent) return COMMITTER.email;
  const local = name
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[-.]+|[-.]+$/g, '')
    .slice(0, 64);
  return `${agent ? AGENT_EMAIL_PREFIX : ''}${local || 'coder'}@marginalia.invalid`;
}

/**
 * The environment every git command of the history at `dir` runs with: only what git needs to run (finding
 * programs, temp files, locale), `GIT_DIR` = {@link gitDirOf} and `GIT_WORK_TREE` = `dir`, and the user's
 * global and system configuration switched off (see {@link HistoryRepo}). Also used by the history's
 * erasure (src/vcs/historyErasure.ts).
 */
export function gitEnvironment(dir: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && PASSED_ENV.test(k)) env[k] = v;
  env.GIT_DIR = gitDirOf(dir);
  env.GIT_WORK_TREE = path.resolve(dir);
  env.GIT_CONFIG_GLOBAL = os.devNull;
  env.GIT_CONFIG_NOSYSTEM = '1';
  return env;
}

/**
 * The history repository at `<project dir>/.marginalia/history`: a git repository of its own, driven
 * through simple-git, its git directory beside it (`history.git`, see {@link gitDirOf}; a history made with
 * `history/.git` is moved there on first use). Never the researcher's workspace repository: every git command
 * runs with `GIT_DIR` set to that directory and `GIT_WORK_TREE` to this one (so git never searches upwards into an enclosing repository, and a
 * `GIT_DIR` or `GIT_INDEX_FILE` inherited from a git hook is never passed on: git gets only PATH, HOME,
 * temp and locale variables from the environment), and with the
 * user's global and system git configuration switched off (`GIT_CONFIG_GLOBAL` = the null device,
 * `GIT_CONFIG_NOSYSTEM`), so signing, hooks, line-ending conversion or a pager configured for the
 * researcher's own work never apply here; commits also pass `--no-verify`. The identity is set in the
 * repository's local config (`Marginalia <marginalia@localhost>`), so commits work on a machine without git
 * configuration. Callers serialise the calls (see Snapshotter's queue).
 *
 * Errors: TOOL_EXECUTION_ERROR when git is missing or fails.
 */
export class HistoryRepo {
  private clients: { git: SimpleGit; batch: SimpleGit } | undefined;
  /** what the next `git cat-file --batch` reads from stdin (one batch at a time: see readFiles) */
  private batchInput = '';
  private batchLock: Promise<unknown> = Promise.resolve();
  /** sha1 of each dump file as last written, so unchanged files are not rewritten (and git need not rehash them) */
  private written: Map<string, string> | undefined;

  /** `dir`: the history directory; nothing is created before {@link init} or the first git command. */
  constructor(readonly dir: string) {}

  /** The simple-git clients (created on first use, with the directory): one for commands, one for batch reads. */
  private get git(): { git: SimpleGit; batch: SimpleGit } {
    if (this.clients) return this.clients;
    const env = gitEnvironment(this.dir);
    fs.mkdirSync(this.dir, { recursive: true });
    const options = {
      baseDir: this.dir,
      allowEnvironment: ['GIT_DIR', 'GIT_WORK_TREE', 'GIT_CONFIG_GLOBAL', 'GIT_CONFIG_NOSYSTEM'],
      // GIT_CONFIG_GLOBAL names a config path: the null device, to switch the user's configuration off
      unsafe: { allowUnsafeConfigPaths: true },
    };
    this.clients = {
      git: simpleGit({ ...options, maxConcurrentProcesses: 4 }).env(env),
      batch: simpleGit({ ...options, maxConcurrentProcesses: 1, input: () => this.batchInput }).env(env),
    };
    return this.clients;
  }

  /**
   * True when the history's git directory ({@link gitDirOf}) exists, after moving an old `<dir>/.git` there. No git
   * call. Asked after every change, so answered from memory: a history once found stays (nothing removes it), and
   * a missing one is looked for again at most every {@link ABSENT_RECHECK_MS} milliseconds (or at once after {@link init}).
   */
  exists(): boolean {
    const known = this.existsKnown;
    if (known && (known.value || Date.now() - known.at < ABSENT_RECHECK_MS)) return known.value;
    migrateHistoryDir(this.dir);
    let value: boolean;
    try {
      value = fs.statSync(gitDirOf(this.dir)).isDirectory();
    } catch {
      value = false;
    }
    this.existsKnown = { value, at: Date.now() };
    return value;
  }
  private existsKnown: { value: boolean; at: number } | undefined;

  /**
   * Creates the repository: `git init`, branch `main`, local identity and settings, `.gitattributes`
   * (no line-ending conversion) and a README, and records `projectFile` (the project's file name) as
   * `marginalia.project` in the local config.
   */
  async init(projectFile: string): Promise<void> {
    this.existsKnown = undefined;
    await this.run(['init', '--quiet']);
    // Written directly (git's documented repository layout) rather than with eight more git processes:
    // the branch `main` (HEAD of a repository without commits is only this file) and the local settings.
    const gitDir = gitDirOf(this.dir);
    setWorktree(gitDir, this.dir);
    ignoreBeside(this.dir);
    fs.writeFileSync(path.join(gitDir, 'HEAD'), 'ref: refs/heads/main\n');
    const quoted = `"${oneLine(projectFile, 255).replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
    fs.appendFileSync(
      path.join(gitDir, 'config'),
      `[user]\n\tname = ${COMMITTER.name}\n\temail = ${COMMITTER.email}\n` +
        '[core]\n\tautocrlf = false\n\tsafecrlf = false\n\tquotepath = false\n' +
        '[commit]\n\tgpgsign = false\n' +
        `[marginalia]\n\tproject = ${quoted}\n`,
    );
    fs.writeFileSync(path.join(this.dir, '.gitattributes'), GITATTRIBUTES);
    fs.writeFileSync(path.join(this.dir, 'README.md'), README);
    this.existsKnown = undefined;
  }

  /** The project file name recorded at init (`marginalia.project`), or null when none is recorded. */
  async projectFile(): Promise<string | null> {
    const out = await this.run(['config', '--local', '--default', '', '--get', 'marginalia.project']);
    return out.trim() || null;
  }

  /** Forgets which dump files were written (after the working tree was changed behind this object's back, e.g. an erasure). */
  forgetWritten(): void {
    this.written = undefined;
  }

  /** Removes `index.lock` left in the git directory by a process that died mid-commit (call only while no git command runs). */
  removeStaleLock(): void {
    fs.rmSync(path.join(gitDirOf(this.dir), 'index.lock'), { force: true });
  }

  /**
   * Makes the working tree hold exactly `files` (path -> content) in the dump's places: writes what changed
   * since the last call, deletes dump files that are no longer in it. Other files (README, .gitattributes)
   * are left alone.
   */
  writeTree(files: ReadonlyMap<string, string>): void {
    const previous = this.written ?? new Map<string, string>();
    const next = new Map<string, string>();
    for (const [rel, content] of files) {
      const abs = this.resolve(rel);
      const hash = createHash('sha1').update(content, 'utf8').digest('hex');
      next.set(rel, hash);
      if (previous.get(rel) === hash && fs.existsSync(abs)) continue;
      fs.mkdirSync(path.dirname(abs), { recursive: true });
      fs.writeFileSync(abs, content, 'utf8');
    }
    for (const dir of MANAGED_DIRS) {
      const absDir = path.join(this.dir, dir);
      if (!fs.existsSync(absDir)) continue;
      for (const name of fs.readdirSync(absDir)) {
        const rel = `${dir}/${name}`;
        if (!files.has(rel)) fs.rmSync(path.join(absDir, name), { recursive: true, force: true });
      }
    }
    this.written = next;
  }

  /**
   * Stages everything and commits with `subject` (and `body`) as `authorName <email>` ({@link identEmail}:
   * synthetic, `<name>@marginalia.invalid`, since only the name is known; `agent.<name>@…` when `agent`); the
   * committer is Marginalia.
   * Returns the new commit's SHA, or null when nothing changed and `allowEmpty` is false.
   */
  async commit(subject: string, body: string, authorName: string, allowEmpty = false, agent = false): Promise<string | null> {
    await this.run(['add', '--all']);
    if (!allowEmpty && (await this.run(['status', '--porcelain'])).trim() === '') return null;
    const args = [
      'commit',
      '--quiet',
      '--no-verify',
      `--author=${identName(authorName)} <${identEmail(authorName, agent)}>`,
      '-m',
      oneLine(subject, 400) || 'Snapshot',
    ];
    if (body.trim()) args.push('-m', body.trim());
    if (allowEmpty) args.push('--allow-empty');
    await this.run(args);
    return (await this.run(['rev-parse', 'HEAD'])).trim();
  }

  /** The full SHA of the commit `ref` names, or null when it names none. `ref` must not start with `-`. */
  async resolveRef(ref: string): Promise<string | null> {
    if (ref.startsWith('-')) return null;
    try {
      const out = (await this.run(['rev-parse', '--verify', '--quiet', `${ref}^{commit}`])).trim();
      return /^[0-9a-f]{40,64}$/.test(out) ? out : null;
    } catch {
      return null;
    }
  }

  /** The newest `limit` commits reachable from HEAD, newest first (dates in ISO 8601 UTC). */
  async log(limit: number, ref = 'HEAD'): Promise<SnapshotInfo[]> {
    const out = await this.run(['log', `--max-count=${limit}`, '--format=%H%x1f%h%x1f%an%x1f%aI%x1f%ae%x1f%s%x1e', ref]);
    return out
      .split('\x1e')
      .map((r) => r.replace(/^\n/, ''))
      .filter((r) => r.length > 0)
      .map((r) => {
        const [ref = '', short = '', author = '', date = '', email = '', message = ''] = r.split('\x1f');
        return { ref, short_ref: short, message, author, by_agent: email.startsWith(AGENT_EMAIL_PREFIX), date: new Date(date).toISOString() };
      });
  }

  /** Every file of commit `sha` (full SHA): path -> blob id. */
  async listTree(sha: string): Promise<Map<string, string>> {
    const out = await this.run(['ls-tree', '-r', '-z', '--full-tree', sha]);
    const files = new Map<string, string>();
    for (const entry of out.split('\0')) {
      const m = /^\d+ blob ([0-9a-f]+)\t(.+)$/s.exec(entry);
      if (m) files.set(m[2]!, m[1]!);
    }
    return files;
  }

  /**
   * The contents of `paths` in commit `sha` (full SHA), read with one `git cat-file --batch` (the branch is
   * never checked out). Throws TOOL_EXECUTION_ERROR when a path is missing or the output is unreadable.
   */
  async readFiles(sha: string, paths: readonly string[]): Promise<Map<string, string>> {
    if (paths.length === 0) return new Map();
    const read = this.batchLock.then(async () => {
      this.batchInput = paths.map((p) => `${sha}:${p}\n`).join('');
      try {
        return await this.git.batch.binaryCatFile(['--batch']);
      } catch (e) {
        throw new ToolError('TOOL_EXECUTION_ERROR', `git cat-file failed in ${this.dir}: ${oneLine((e as Error).message, 500)}`);
      }
    });
    this.batchLock = read.catch(() => undefined);
    const out = await read;
    // Each object: "<oid> blob <size>\n" + <size> bytes + "\n"; a missing one: "<name> missing\n".
    const files = new Map<string, string>();
    let at = 0;
    for (const p of paths) {
      const nl = out.indexOf(0x0a, at);
      const header = nl < 0 ? '' : out.toString('latin1', at, nl);
      const m = /^[0-9a-f]+ blob (\d+)$/.exec(header);
      if (!m) throw new ToolError('TOOL_EXECUTION_ERROR', `git cat-file could not read ${p} of ${sha}: ${oneLine(header, 200) || 'no answer'}`);
      const size = Number(m[1]);
      files.set(p, out.toString('utf8', nl + 1, nl + 1 + size));
      at = nl + 1 + size + 1;
    }
    return files;
  }

  /** `git diff` between two commits (full SHAs), plain (no colour, no external diff, a/ b/ prefixes), cut at `limit` characters. */
  async diff(fromSha: string, toSha: string, limit: number): Promise<{ text: string; truncated: boolean }> {
    const text = await this.run(['diff', '--no-color', '--no-ext-diff', '--no-renames', '--src-prefix=a/', '--dst-prefix=b/', fromSha, toSha]);
    return text.length > limit ? { text: text.slice(0, limit), truncated: true } : { text, truncated: false };
  }

  /** Path of a dump file inside the repository; refuses anything that could leave it. */
  private resolve(rel: string): string {
    if (!/^[A-Za-z0-9_.-]+(\/[A-Za-z0-9_.-]+)*$/.test(rel) || rel.split('/').some((p) => p === '..' || p === '.') || rel.startsWith('.git')) {
      throw new Error(`refusing to write dump path "${rel}"`);
    }
    return path.join(this.dir, ...rel.split('/'));
  }

  /** Runs one git command; failures become TOOL_EXECUTION_ERROR. */
  private async run(args: string[]): Promise<string> {
    try {
      return await this.git.git.raw(args);
    } catch (e) {
      const err = e as NodeJS.ErrnoException & { message: string };
      if (err.code === 'ENOENT' || /spawn git ENOENT/.test(err.message)) {
        throw new ToolError('TOOL_EXECUTION_ERROR', 'Version control needs git, which is not installed or not on PATH.');
      }
      throw new ToolError('TOOL_EXECUTION_ERROR', `git ${args[0]} failed in ${this.dir}: ${oneLine(err.message, 500)}`);
    }
  }
}
