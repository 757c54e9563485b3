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

/** About how many characters of a transaction's line {@link JournalLine} gathers before it writes them (1 Mi). */
const JOURNAL_PIECE_CHARS = 1 << 20;

/**
 * One transaction's journal line, written while the transaction runs: each statement is serialized as it runs
 * ({@link add}) and the line goes to the file in pieces of about 1 Mi characters, so an import of many thousand
 * rows holds neither its statements nor its whole line in memory (issue 6's 300 MB). {@link finish} ends the line
 * (`]}` and a newline) and fdatasyncs it before the transaction commits. Until then the file ends in a torn
 * line, which a replay cuts off ({@link replayJournal}): a crash mid-transaction loses only that transaction, never
 * acknowledged. A transaction that rolls back takes its part back with {@link abort}. The bytes are exactly
 * `JSON.stringify({s, q}) + "\n"` of the {@link JournalEntry}.
 */
export class JournalLine {
  private piece: string;
  private count = 0;
  private written = 0;

  /** `fd`: the journal, open for appending; `seq`: the transaction's sequence number. */
  constructor(
    private readonly fd: number,
    seq: number,
  ) {
    this.piece = `{"s":${JSON.stringify(seq)},"q":[`;
  }

  /** How many statements the line holds. */
  get statements(): number {
    return this.count;
  }

  /** Adds a statement and its bound values; writes a piece when enough has gathered (errors: the file system's). */
  add(sql: string, params: Params): void {
    this.piece += (this.count > 0 ? ',' : '') + JSON.stringify([sql, params]);
    this.count++;
    if (this.piece.length >= JOURNAL_PIECE_CHARS) this.flush();
  }

  /** Ends the line and makes it durable (fdatasync); returns the bytes it took in the file. */
  finish(): number {
    this.piece += ']}\n';
    this.flush();
    fs.fdatasyncSync(this.fd);
    return this.written;
  }

  /**
   * Takes back what reached the file (it is cut to `committedBytes`, the journal's size before the transaction),
   * or a replay would apply a whole line or every later line would follow the fragment. A failing cut is logged.
   */
  abort(committedBytes: number, logger: Logger): void {
    if (this.written === 0) return;
    try {
      fs.ftruncateSync(this.fd, committedBytes);
    } catch (e) {
      logger.error('could not cut a failed journal append', e);
    }
  }

  private flush(): void {
    const buf = Buffer.from(this.piece, 'utf8');
    this.piece = '';
    let off = 0;
    // counted before the write: a failing write may still have put part of the buffer in the file
    this.written += buf.length;
    while (off < buf.length) off += fs.writeSync(this.fd, buf, off, buf.length - off);
  }
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
