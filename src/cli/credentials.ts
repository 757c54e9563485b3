import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Tokens } from '../agent/agentContext';
import type { AuditStorage } from '../agent/auditLog';
import type { AgentCredentialStorage, StoredAgentCredential } from '../agent/agentCredentials';

/** Marginalia's per-user folder: `MARGINALIA_HOME`, else `~/.marginalia`. Created user-only (0700). */
export function marginaliaHome(): string {
  const dir = process.env.MARGINALIA_HOME ?? path.join(os.homedir(), '.marginalia');
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  return dir;
}

/** Writes `text` atomically (temporary file, rename) readable by the user only (0600), in a 0700 folder. */
export function writePrivate(file: string, text: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.tmp-${process.pid}`;
  fs.writeFileSync(tmp, text, { mode: 0o600 });
  fs.renameSync(tmp, file);
  fs.chmodSync(file, 0o600);
}

/**
 * The install's tokens: `MARGINALIA_TOKEN` / `MARGINALIA_REVIEWER_TOKEN` when set, else the ones in
 * `<home>/credentials.json` (user-only), generated (32 random bytes, base64url) on first use.
 * `isNamed(token)`: true when `MARGINALIA_TOKEN` is a named agent's own credential (issue 14 item 2): it is
 * then that agent's token, not the install's, and the built-in `agent` token stays the stored one.
 */
export function loadTokens(opts: { isNamed?: (token: string) => boolean } = {}): Tokens {
  const file = path.join(marginaliaHome(), 'credentials.json');
  let stored: Partial<{ agent_token: string; reviewer_token: string }> = {};
  try {
    stored = JSON.parse(fs.readFileSync(file, 'utf8')) as typeof stored;
  } catch {
    // first run, or unreadable: make new ones
  }
  if (!stored.agent_token || !stored.reviewer_token) {
    stored = { agent_token: stored.agent_token ?? newToken(), reviewer_token: stored.reviewer_token ?? newToken() };
    writePrivate(file, JSON.stringify(stored, null, 2));
  }
  const env = process.env.MARGINALIA_TOKEN;
  const agent = env && !opts.isNamed?.(env) ? env : (stored.agent_token as string);
  return { agent, reviewer: process.env.MARGINALIA_REVIEWER_TOKEN || (stored.reviewer_token as string) };
}

/** A new random token (32 bytes, base64url). */
export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

/** What a discovery file says about a running server (it never holds the reviewer token). */
export interface DiscoveryInfo {
  project: string;
  pid: number;
  url: string;
  port: number;
  token: string;
  mcp_url: string;
  started_at: string;
}

/** The discovery file of a project: `<home>/servers/<sha256(project path)[0..16]>.json`. */
export function discoveryPath(projectPath: string): string {
  const hash = createHash('sha256').update(path.resolve(projectPath)).digest('hex').slice(0, 16);
  return path.join(marginaliaHome(), 'servers', `${hash}.json`);
}

/** The agent credentials file of a project: `<home>/agents/<sha256(project path)[0..16]>.json` (keyed like {@link discoveryPath}). */
export function agentCredentialsPath(projectPath: string): string {
  const hash = createHash('sha256').update(path.resolve(projectPath)).digest('hex').slice(0, 16);
  return path.join(marginaliaHome(), 'agents', `${hash}.json`);
}

/**
 * The named agent credentials of a project as a file (issue 14 item 2; AgentCredentialStorage): a JSON
 * document `{"project": path, "agents": [{name, token_sha256, created_at, last_used_at}]}` at
 * {@link agentCredentialsPath}, written atomically and user-only (0600). Tokens are stored as SHA-256 hashes
 * only. The stamp (mtime, size, inode) lets a running server notice `marginalia agent add/revoke`.
 */
export function fileAgentCredentialStorage(projectPath: string): AgentCredentialStorage {
  const file = agentCredentialsPath(projectPath);
  return {
    read: () => {
      let text: string;
      try {
        text = fs.readFileSync(file, 'utf8');
      } catch {
        return [];
      }
      const doc = JSON.parse(text) as { agents?: StoredAgentCredential[] };
      return Array.isArray(doc.agents) ? doc.agents : [];
    },
    write: (agents) => writePrivate(file, JSON.stringify({ project: path.resolve(projectPath), agents }, null, 2)),
    stamp: () => {
      const st = fs.statSync(file, { throwIfNoEntry: false, bigint: true });
      return st ? `${st.mtimeNs}:${st.size}:${st.ino}` : 'none';
    },
  };
}

/** Writes the discovery file (user-only, 0600) and returns a function that removes it. */
export function writeDiscovery(info: DiscoveryInfo): () => void {
  const file = discoveryPath(info.project);
  writePrivate(file, JSON.stringify(info, null, 2));
  return () => {
    try {
      const current = JSON.parse(fs.readFileSync(file, 'utf8')) as DiscoveryInfo;
      if (current.pid === info.pid) fs.rmSync(file, { force: true });
    } catch {
      // already gone
    }
  };
}

/** The discovery file of a project, when its server is alive. */
export function readDiscovery(projectPath: string): DiscoveryInfo | undefined {
  try {
    const info = JSON.parse(fs.readFileSync(discoveryPath(projectPath), 'utf8')) as DiscoveryInfo;
    process.kill(info.pid, 0);
    return info;
  } catch {
    return undefined;
  }
}

/** `.marginalia/` beside a project file. */
export function projectSideDir(projectPath: string): string {
  return path.join(path.dirname(path.resolve(projectPath)), '.marginalia');
}

/** The text of `.marginalia/config.yaml` beside the project, or undefined when there is none. */
export function readConfigText(projectPath: string): string | undefined {
  try {
    return fs.readFileSync(path.join(projectSideDir(projectPath), 'config.yaml'), 'utf8');
  } catch {
    return undefined;
  }
}

/** An audit file kept open for appending: its descriptor, the file it opened, and when the path was last checked (ms). */
interface OpenAuditFile {
  fd: number;
  dev: number;
  ino: number;
  checkedAt: number;
}
/** Audit files kept open for appending, by absolute path (at most {@link MAX_OPEN_AUDIT_FILES}). */
const openAuditFiles = new Map<string, OpenAuditFile>();
/** How many audit files stay open at once (a VS Code window switching projects opens one per project). */
const MAX_OPEN_AUDIT_FILES = 8;
/**
 * How often (ms) an append checks with a `stat` that the path still names the open file (rotation by another
 * program). A `stat` per line was half the audit's cost per call (bench/RESULTS.md, issue 14).
 */
export const AUDIT_RECHECK_MS = 100;

/** Closes the descriptor kept open for `file`, if any: the next append opens the path again. */
function forgetAuditFile(file: string): void {
  const entry = openAuditFiles.get(file);
  if (!entry) return;
  openAuditFiles.delete(file);
  fs.closeSync(entry.fd);
}

/**
 * Appends `text` to `file` through a descriptor kept open between calls (an open and a close per audited
 * call were a fifth of a small tool call's pipeline time; bench/RESULTS.md), with one synchronous write (the
 * line is in the file when the call answers). At most every `recheckMs` (and on the first append after
 * opening) a `stat` checks that the path still names the open file, and reopens it when it was deleted,
 * moved away or replaced (log rotation by another program), creating the folder when missing: lines written
 * within `recheckMs` of such a rotation land in the file the descriptor holds (the moved-away file). This
 * module's own rewrite ({@link fileAuditStorage} `rewrite`) reopens at once. The file is created user-only (0600).
 */
function appendKeptOpen(file: string, text: string, recheckMs: number): void {
  let entry = openAuditFiles.get(file);
  const now = Date.now();
  if (entry && now - entry.checkedAt >= recheckMs) {
    const st = fs.statSync(file, { throwIfNoEntry: false });
    entry.checkedAt = now;
    if (!st || st.ino !== entry.ino || st.dev !== entry.dev) {
      forgetAuditFile(file);
      entry = undefined;
    }
  }
  if (!entry) {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const fd = fs.openSync(file, 'a', 0o600);
    const opened = fs.fstatSync(fd);
    // checkedAt -Infinity: the next append checks the path again (a rotation between open and now)
    entry = { fd, dev: opened.dev, ino: opened.ino, checkedAt: -Infinity };
    if (openAuditFiles.size >= MAX_OPEN_AUDIT_FILES) forgetAuditFile(openAuditFiles.keys().next().value as string);
    openAuditFiles.set(file, entry);
  }
  fs.writeSync(entry.fd, text);
}

/**
 * The audit log file as {@link AuditStorage}: `logPath` resolved against the project's folder, appended
 * with one synchronous write per line (user-only file) through a descriptor kept open between lines.
 * `recheckMs`: how often the path is checked for rotation by another program ({@link AUDIT_RECHECK_MS};
 * 0: before every line).
 */
export function fileAuditStorage(projectPath: string, logPath: () => string, recheckMs = AUDIT_RECHECK_MS): AuditStorage {
  // resolved once per configured `log_path` (a path.resolve per line was a tenth of the audit's cost per call)
  const folder = path.dirname(path.resolve(projectPath));
  let resolved: { logPath: string; file: string } | undefined;
  const resolve = () => {
    const configured = logPath();
    if (resolved?.logPath !== configured) resolved = { logPath: configured, file: path.resolve(folder, configured) };
    return resolved.file;
  };
  return {
    append: (line) => appendKeptOpen(resolve(), `${line}\n`, recheckMs),
    read: async () => {
      try {
        return await fs.promises.readFile(resolve(), 'utf8');
      } catch {
        return '';
      }
    },
    // erase_source: the whole file rewritten atomically (temporary file, fsync, rename); the descriptor kept
    // open is closed, so the next append opens the new file
    rewrite: (transform) => {
      const file = resolve();
      let text: string;
      try {
        text = fs.readFileSync(file, 'utf8');
      } catch {
        return file;
      }
      const next = transform(text);
      if (next === text) return file;
      const tmp = `${file}.tmp-${process.pid}`;
      const fd = fs.openSync(tmp, 'w', 0o600);
      try {
        fs.writeSync(fd, next);
        fs.fsyncSync(fd);
      } finally {
        fs.closeSync(fd);
      }
      fs.renameSync(tmp, file);
      forgetAuditFile(file);
      return file;
    },
  };
}
