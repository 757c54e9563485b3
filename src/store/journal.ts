/**
 * The project journal (`<file>-journal`, beside the `.qda`): one JSON line per committed transaction, its
 * sequence number and statements, appended by ProjectStore (projectStore.ts) before a commit is acknowledged
 * and replayed on open over the last checkpointed file. See docs/architecture.md, "Store and journal".
 */
import * as fs from 'node:fs';
import type { Database, SqlValue } from 'sql.js';
import { ToolError } from '../core/errors';
import type { Logger } from '../core/log';
import type { Params } from './projectStore';

/** One committed transaction as the journal holds it: its sequence number and its statements. */
export interface JournalEntry {
  /** sequence number, strictly increasing across the project's life */
  s: number;
  /** the statements with their bound values, in execution order */
  q: [string, Params][];
}

/** The journal beside a project file: `<file>-journal`. */
export function journalPath(projectPath: string): string {
  return `${projectPath}-journal`;
}

/** The journal sequence number a database file was checkpointed at (meta `journal_seq`; 0 before migration 1). */
export function readJournalSeq(db: Database): number {
  try {
    const res = db.exec("SELECT value FROM meta WHERE key = 'journal_seq'");
    return Number(res[0]?.values[0]?.[0] ?? 0);
  } catch {
    return 0; // a database from before migration 1 has no meta table
  }
}

/**
 * Applies the journal's complete lines with a sequence above `baseSeq`. Bytes after the last newline are
 * a torn append that was never acknowledged: they are cut off. An unreadable complete line is
 * corruption (PROJECT_CORRUPT).
 */
export function replayJournal(db: Database, projectPath: string, baseSeq: number, logger: Logger): { seq: number; count: number } {
  const jp = journalPath(projectPath);
  if (!fs.existsSync(jp)) return { seq: baseSeq, count: 0 };
  const buf = fs.readFileSync(jp);
  let seq = baseSeq;
  let count = 0;
  let start = 0;
  let validEnd = 0;
  while (start < buf.length) {
    const nl = buf.indexOf(0x0a, start);
    if (nl < 0) break; // torn tail
    const text = buf.toString('utf8', start, nl);
    let entry: JournalEntry;
    try {
      entry = JSON.parse(text) as JournalEntry;
    } catch {
      // Appends are sequential, so a newline-terminated line was written whole; an unreadable one is damage.
      throw new ToolError('PROJECT_CORRUPT', `Journal ${jp} is damaged at byte ${start}`);
    }
    if (entry.s > seq) {
      if (entry.s !== seq + 1) throw new ToolError('PROJECT_CORRUPT', `Journal ${jp} skips from ${seq} to ${entry.s}`);
      db.exec('BEGIN');
      try {
        for (const [sql, params] of entry.q) db.run(sql, params as SqlValue[]);
        db.exec('COMMIT');
      } catch (e) {
        db.exec('ROLLBACK');
        throw new ToolError('PROJECT_CORRUPT', `Journal entry ${entry.s} does not apply: ${(e as Error).message}`);
      }
      seq = entry.s;
      count++;
    }
    start = nl + 1;
    validEnd = start;
  }
  if (validEnd < buf.length) {
    logger.warn(`cut a torn journal tail of ${buf.length - validEnd} bytes`);
    fs.truncateSync(jp, validEnd);
  }
  return { seq, count };
}
