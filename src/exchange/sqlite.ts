import * as fs from 'node:fs';
import * as path from 'node:path';
import initSqlJs from 'sql.js';
import type { Database, SqlJsStatic, SqlValue } from 'sql.js';
import { assertKeepsLeadingBom, withBomKeepingTextDecoder } from '../core/bomKeepingDecoder';
import { ToolError } from '../core/errors';

/**
 * Reading foreign SQLite files (RQDA `.rqda`, QualCoder `data.qda`, Taguette `.sqlite3`) in memory with sql.js.
 *
 * Exchange may not import the store (docs/architecture.md, Layers), so this module loads its own sql.js instance, with
 * the wasm found the same way the store finds it (beside the bundle, else in node_modules). The duplication
 * is a few lines and buys isolation: a foreign database lives in a separate WebAssembly heap, so a large or
 * malformed file never grows or disturbs the heap that holds the open project, and the instance is created
 * only when the first SQLite import runs.
 */

let sqlPromise: Promise<SqlJsStatic> | undefined;

/**
 * The sql.js module for foreign databases, loaded once per process, decoding TEXT without dropping a
 * leading U+FEFF (src/core/bomKeepingDecoder.ts: QualCoder texts may begin with two, RQDA texts with one,
 * and every coding's position counts them). Rejects when the engine would still drop them.
 */
function loadForeignSqlJs(): Promise<SqlJsStatic> {
  sqlPromise ??= withBomKeepingTextDecoder(() => initSqlJs({ wasmBinary: wasmBytes() })).then(assertKeepsLeadingBom);
  return sqlPromise;
}

function wasmBytes(): ArrayBuffer {
  const beside = path.join(__dirname, 'sql-wasm.wasm');
  // Built at run time so the bundler leaves it alone (the bundle finds the copy beside it first).
  const file = fs.existsSync(beside) ? beside : require.resolve(['sql.js', 'dist', 'sql-wasm.wasm'].join('/'));
  const buf = fs.readFileSync(file);
  return buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength) as ArrayBuffer;
}

/** The 16-byte header every SQLite 3 database file starts with. */
const SQLITE_HEADER = 'SQLite format 3\u0000';

/** A foreign database opened read-only in memory (the file on disk is never written). */
export interface ForeignDb {
  /** Rows of a query as objects keyed by column name. */
  all<T = Record<string, SqlValue>>(sql: string, params?: SqlValue[]): T[];
  /** The names of the tables the database holds. */
  tables(): Set<string>;
  /** The column names of `table` (empty when there is no such table). */
  columns(table: string): string[];
  close(): void;
}

/**
 * Opens the SQLite file `filePath` in memory, checks its header and runs `fn` on it, closing it afterwards.
 * `what` names the expected format in messages (e.g. "an RQDA project").
 * Errors: IMPORT_FAILED when the file is not a SQLite database or sql.js cannot read it.
 */
export async function withForeignDb<T>(filePath: string, what: string, fn: (db: ForeignDb) => T): Promise<T> {
  const bytes = fs.readFileSync(filePath);
  if (bytes.length < 100 || bytes.subarray(0, 16).toString('latin1') !== SQLITE_HEADER) {
    throw new ToolError('IMPORT_FAILED', `${path.basename(filePath)} is not ${what}: it is not a SQLite database`);
  }
  const SQL = await loadForeignSqlJs();
  let db: Database;
  try {
    db = new SQL.Database(bytes);
    db.exec('PRAGMA schema_version');
  } catch (e) {
    throw new ToolError('IMPORT_FAILED', `${path.basename(filePath)} cannot be read as ${what}: ${(e as Error).message}`);
  }
  const foreign: ForeignDb = {
    all<R>(sql: string, params: SqlValue[] = []): R[] {
      const st = db.prepare(sql);
      try {
        st.bind(params);
        const rows: R[] = [];
        while (st.step()) rows.push(st.getAsObject() as R);
        return rows;
      } finally {
        st.free();
      }
    },
    tables() {
      return new Set(foreign.all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table'").map((r) => r.name));
    },
    columns(table: string) {
      return foreign.all<{ name: string }>('SELECT name FROM pragma_table_info(?)', [table]).map((r) => r.name);
    },
    close() {
      db.close();
    },
  };
  try {
    return fn(foreign);
  } catch (e) {
    if (e instanceof ToolError) throw e;
    throw new ToolError('IMPORT_FAILED', `${path.basename(filePath)} cannot be read as ${what}: ${(e as Error).message}`);
  } finally {
    foreign.close();
  }
}

/**
 * Checks that the database holds every table of `required` with (at least) the given columns.
 * Errors: IMPORT_FAILED naming the missing tables or columns.
 */
export function requireSchema(db: ForeignDb, filePath: string, what: string, required: Record<string, string[]>): void {
  const tables = db.tables();
  const missing: string[] = [];
  for (const [table, cols] of Object.entries(required)) {
    if (!tables.has(table)) {
      missing.push(`table ${table}`);
      continue;
    }
    const have = new Set(db.columns(table));
    for (const c of cols) if (!have.has(c)) missing.push(`${table}.${c}`);
  }
  if (missing.length > 0) throw new ToolError('IMPORT_FAILED', `${path.basename(filePath)} is not ${what}: it lacks ${missing.join(', ')}`);
}
