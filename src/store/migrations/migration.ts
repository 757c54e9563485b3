import type { SqlValue } from 'sql.js';

/**
 * Numbered schema migrations, run on open while `PRAGMA user_version` is below their number.
 * Never edit a released migration: add a new one.
 *
 * Text positions (`start_pos`, `end_pos`) count Unicode code points of `sources.content`;
 * AV positions (`start_ms`, `end_ms`) are integer milliseconds; timestamps are ISO 8601 UTC strings.
 */
export interface Migration {
  version: number;
  description: string;
  sql: string;
  /**
   * SQL functions the migration's `sql` calls, registered on the connection (sql.js `create_function`) just
   * before it runs: for a step SQLite cannot compute, such as a SHA-1 based GUID (migration 11). Each must be
   * deterministic, so a migration run again on the same file (a crash before its checkpoint) gives the same result.
   */
  functions?: Readonly<Record<string, (...args: SqlValue[]) => SqlValue>>;
}
