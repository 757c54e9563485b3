import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Tokens } from '../agent/agentContext';
import type { AuditStorage } from '../agent/auditLog';

/** Marginalia's per-user folder: `MARGINALIA_HOME`, else `~/.marginalia`. Created user-only (0700). */
export function marginaliaHome(): string {
  const dir = process.env.MARGINALIA_HOME ?? path.join(os.homedir(), '.marginalia');
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  return dir;
}

function writePrivate(file: string, text: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.tmp-${process.pid}`;
  fs.writeFileSync(tmp, text, { mode: 0o600 });
  fs.renameSync(tmp, file);
  fs.chmodSync(file, 0o600);
}

/**
 * The install's tokens: `MARGINALIA_TOKEN` / `MARGINALIA_REVIEWER_TOKEN` when set, else the ones in
 * `<home>/credentials.json` (user-only), generated (32 random bytes, base64url) on first use.
 */
export function loadTokens(): Tokens {
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
  return { agent: process.env.MARGINALIA_TOKEN || (stored.agent_token as string), reviewer: process.env.MARGINALIA_REVIEWER_TOKEN || (stored.reviewer_token as string) };
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

/** Audit files kept open for appending, by absolute path (at most {@link MAX_OPEN_AUDIT_FILES}). */
const openAuditFiles = new Map<string, { fd: number; dev: number; ino: number }>();
/** How many audit files stay open at once (a VS Code window switching projects opens one per project). */
const MAX_OPEN_AUDIT_FILES = 8;

/**
 * Appends `text` to `file` through a descriptor kept open between calls (an open and a close per audited
 * call were a fifth of a small tool call's pipeline time; bench/RESULTS.md). Each append checks with one
 * `stat` that the path still names the open file, and reopens it when it was deleted, moved away or
 * replaced (log rotation), creating the folder when missing. The file is created user-only (0600).
 */
function appendKeptOpen(file: string, text: string): void {
  const st = fs.statSync(file, { throwIfNoEntry: false });
  let entry = openAuditFiles.get(file);
  if (entry && (!st || st.ino !== entry.ino || st.dev !== entry.dev)) {
    openAuditFiles.delete(file);
    fs.closeSync(entry.fd);
    entry = undefined;
  }
  if (!entry) {
    if (!st) fs.mkdirSync(path.dirname(file), { recursive: true });
    const fd = fs.openSync(file, 'a', 0o600);
    const opened = fs.fstatSync(fd);
    entry = { fd, dev: opened.dev, ino: opened.ino };
    if (openAuditFiles.size >= MAX_OPEN_AUDIT_FILES) {
      const [oldest, old] = openAuditFiles.entries().next().value as [string, { fd: number }];
      openAuditFiles.delete(oldest);
      fs.closeSync(old.fd);
    }
    openAuditFiles.set(file, entry);
  }
  fs.writeSync(entry.fd, text);
}

/**
 * The audit log file as {@link AuditStorage}: `logPath` resolved against the project's folder, appended
 * with one synchronous write per line (user-only file) through a descriptor kept open between lines.
 */
export function fileAuditStorage(projectPath: string, logPath: () => string): AuditStorage {
  const resolve = () => path.resolve(path.dirname(path.resolve(projectPath)), logPath());
  return {
    append: (line) => appendKeptOpen(resolve(), `${line}\n`),
    read: async () => {
      try {
        return await fs.promises.readFile(resolve(), 'utf8');
      } catch {
        return '';
      }
    },
    // erase_source: the whole file rewritten atomically (temporary file, fsync, rename); the next append
    // sees the new inode and reopens (appendKeptOpen)
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
      return file;
    },
  };
}
