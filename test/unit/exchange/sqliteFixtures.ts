/**
 * Helpers for the importer tests that build foreign SQLite projects (RQDA, QualCoder) with sql.js and read
 * back what Marginalia made of them. Not a test file itself (no `.test.ts`), so mocha does not run it.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Database, SqlValue } from 'sql.js';
import { loadSqlJs } from '../../../src/store/sqljs';
import type { Fixture } from '../domain/projectFixture';

/** A row as sql.js's `getAsObject` gives it. */
export type Row = Record<string, any>;

/** A new SQLite file `name` in `dir` holding the tables of `schema` (SQL), with `fill` run on it. Returns its path. */
export async function sqliteFile(dir: string, name: string, schema: string, fill: (db: Database) => void): Promise<string> {
  const SQL = await loadSqlJs();
  const db = new SQL.Database();
  try {
    db.exec(schema);
    fill(db);
    const file = path.join(dir, name);
    fs.writeFileSync(file, db.export());
    return file;
  } finally {
    db.close();
  }
}

/** Rows of `sql` (with bound `params`) on the SQLite file `file`, read into memory; the file is never written. */
export async function query(file: string, sql: string, params: SqlValue[] = []): Promise<Row[]> {
  const SQL = await loadSqlJs();
  const db = new SQL.Database(fs.readFileSync(file));
  try {
    const st = db.prepare(sql);
    st.bind(params);
    const rows: Row[] = [];
    while (st.step()) rows.push(st.getAsObject());
    st.free();
    return rows;
  } finally {
    db.close();
  }
}

/** Runs the statement `sql` once for each row of bound values. */
export function run(db: Database, sql: string, ...rows: SqlValue[][]): void {
  for (const r of rows) db.run(sql, r);
}

/** Every coded segment of the project, through list_segments (paged). */
export async function allSegments(fx: Fixture): Promise<Row[]> {
  const out: Row[] = [];
  for (let offset = 0; ;) {
    const page = await fx.ok('list_segments', { limit: 5000, offset });
    out.push(...page.segments);
    if (!page.has_more) return out;
    offset += page.count;
  }
}

/** Length of `s` in code points (counted independently of src/core/text.ts). */
export const cpLength = (s: string): number => [...s].length;
/** Code points `[a, b)` of `s` (independently of src/core/text.ts). */
export const cpSlice = (s: string, a: number, b: number): string => [...s].slice(a, b).join('');
