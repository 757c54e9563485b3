import * as fs from 'node:fs';
import * as os from 'node:os';
import { ToolError } from '../core/errors';

/** A held project lock; {@link release} removes the lock file. */
export interface ProjectLock {
  readonly path: string;
  release(): void;
}

/** What the lock file holds (JSON). */
export interface LockInfo {
  pid: number;
  hostname: string;
  started_at: string;
}

/** Lock files this process holds: the file names our pid, so only this set tells a second open apart. */
const heldHere = new Set<string>();

/**
 * Takes `<project>.lock`, created exclusively and holding {@link LockInfo}. A lock whose pid is no longer
 * alive on this host (a crashed owner) is taken over.
 *
 * Errors: PROJECT_LOCKED when a live process owns the project, or this process has it open already;
 * the message names the pid.
 */
export function acquireLock(projectPath: string): ProjectLock {
  const lockPath = `${projectPath}.lock`;
  const info: LockInfo = { pid: process.pid, hostname: os.hostname(), started_at: new Date().toISOString() };
  if (heldHere.has(lockPath)) {
    throw new ToolError(
      'PROJECT_LOCKED',
      `The project ${projectPath} is already open in this process (pid ${process.pid}). Close it before opening it again.`,
      info,
    );
  }
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = fs.openSync(lockPath, 'wx', 0o600);
      fs.writeSync(fd, JSON.stringify(info));
      fs.closeSync(fd);
      heldHere.add(lockPath);
      return {
        path: lockPath,
        release: () => {
          if (!heldHere.delete(lockPath)) return;
          const held = readLock(lockPath);
          if (held?.pid === process.pid) fs.rmSync(lockPath, { force: true });
        },
      };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      const held = readLock(lockPath);
      if (held && held.pid !== process.pid && isAlive(held.pid) && held.hostname === info.hostname) {
        throw new ToolError(
          'PROJECT_LOCKED',
          `The project ${projectPath} is open in another process (pid ${held.pid}, since ${held.started_at}). ` +
            'Close it there, or connect to that process instead of opening the file twice.',
          held,
        );
      }
      if (held && held.pid !== process.pid && held.hostname !== info.hostname) {
        throw new ToolError('PROJECT_LOCKED', `The project ${projectPath} is locked by pid ${held.pid} on ${held.hostname}.`, held);
      }
      fs.rmSync(lockPath, { force: true }); // stale: its owner died, or a half-written lock
    }
  }
  throw new ToolError('PROJECT_LOCKED', `Could not take the lock ${lockPath}`);
}

/** Reads a lock file; undefined when missing or unreadable. */
export function readLock(lockPath: string): LockInfo | undefined {
  try {
    return JSON.parse(fs.readFileSync(lockPath, 'utf8')) as LockInfo;
  } catch {
    return undefined;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
