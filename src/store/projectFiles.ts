/**
 * File-system chores around a project file: checkpoint temp files (`<file>.tmp-<pid>`) left by a process that
 * died, and fsync of a directory after an atomic rename. Used by ProjectStore (projectStore.ts).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

/** True when `pid` is a live process other than this one. */
function isAliveOther(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Removes checkpoint temp files (`<file>.tmp-<pid>`) left by a process that died mid-checkpoint. */
export function removeStaleTemps(projectPath: string): void {
  const dir = path.dirname(projectPath);
  const prefix = `${path.basename(projectPath)}.tmp-`;
  for (const f of fs.readdirSync(dir)) {
    if (!f.startsWith(prefix)) continue;
    const pid = Number(f.slice(prefix.length));
    if (!isAliveOther(pid)) fs.rmSync(path.join(dir, f), { force: true });
  }
}

/** fsync of a directory, so a rename in it is durable (ignored where the filesystem refuses). */
export function fsyncDir(dir: string): void {
  try {
    const fd = fs.openSync(dir, 'r');
    try {
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    // Some filesystems refuse fsync on directories; the rename is still atomic.
  }
}
