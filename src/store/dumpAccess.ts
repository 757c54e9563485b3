import type { SqlValue } from 'sql.js';
import type { ProjectRows, Row, TableChange, TableInfo } from '../domain/versionControl';
import type { ProjectStore } from './projectStore';

/** `name` as an SQL identifier (double quotes, inner quotes doubled). */
function ident(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/**
 * The store's side of version control (the {@link ProjectRows} port): reads whole tables in primary-key
 * order for the canonical dump, and applies a snapshot's row changes inside the current transaction, so a
 * restore is journaled like any other write and is atomic.
 */
export class StoreDumpAccess implements ProjectRows {
  private info: Map<string, TableInfo> | undefined;
  private infoVersion = -1;

  constructor(private readonly store: ProjectStore) {}

  /** Every ordinary table (`PRAGMA table_list` type `table`, without `sqlite_*`), by name; columns in schema order. */
  tables(): TableInfo[] {
    return [...this.tableMap().values()];
  }

  /** Every row of `table` ordered by its primary key (by all columns without one). Throws for an unknown table. */
  readRows(table: string): Row[] {
    const t = this.table(table);
    const order = (t.primaryKey.length > 0 ? t.primaryKey : t.columns).map(ident).join(', ');
    return this.store.all<Row>(`SELECT ${t.columns.map(ident).join(', ')} FROM ${ident(t.name)} ORDER BY ${order}`);
  }

  /**
   * Applies `changes` inside the current transaction with foreign keys deferred to the commit
   * (`PRAGMA defer_foreign_keys`, journaled with the rest): deletes, then updates, then inserts, each table
   * in the order given. Columns a row carries that the table lacks are ignored. Throws outside a transaction
   * (programming error) and on constraint failures (the caller's transaction rolls back).
   */
  applyChanges(changes: readonly TableChange[]): void {
    if (!this.store.inTransaction) throw new Error('StoreDumpAccess.applyChanges must run inside a store transaction');
    if (changes.every((c) => c.delete.length + c.update.length + c.insert.length === 0 && !c.replace_all)) return;
    this.store.run('PRAGMA defer_foreign_keys = ON');
    for (const c of changes) {
      const t = this.table(c.table);
      if (c.replace_all) {
        this.store.run(`DELETE FROM ${ident(t.name)}`);
        continue;
      }
      if (c.delete.length === 0) continue;
      const where = c.primaryKey.map((k) => `${ident(k)} IS ?`).join(' AND ');
      const sql = `DELETE FROM ${ident(t.name)} WHERE ${where}`;
      for (const row of c.delete)
        this.store.run(
          sql,
          c.primaryKey.map((k) => value(row[k])),
        );
    }
    for (const c of changes) {
      const t = this.table(c.table);
      const pk = new Set(c.primaryKey);
      for (const row of c.update) {
        const cols = t.columns.filter((col) => !pk.has(col) && col in row);
        if (cols.length === 0) continue;
        const sql = `UPDATE ${ident(t.name)} SET ${cols.map((col) => `${ident(col)} = ?`).join(', ')} WHERE ${c.primaryKey.map((k) => `${ident(k)} IS ?`).join(' AND ')}`;
        this.store.run(sql, [...cols.map((col) => value(row[col])), ...c.primaryKey.map((k) => value(row[k]))]);
      }
    }
    for (const c of changes) {
      const t = this.table(c.table);
      for (const row of c.insert) {
        const cols = t.columns.filter((col) => col in row);
        const sql = `INSERT INTO ${ident(t.name)} (${cols.map(ident).join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`;
        this.store.run(
          sql,
          cols.map((col) => value(row[col])),
        );
      }
    }
  }

  private table(name: string): TableInfo {
    const t = this.tableMap().get(name);
    if (!t) throw new Error(`No table "${name}" in the project`);
    return t;
  }

  /** The table list, re-read when the schema changes (`PRAGMA schema_version`). */
  private tableMap(): Map<string, TableInfo> {
    const version = Number(this.store.get<{ schema_version: number }>('PRAGMA schema_version')?.schema_version ?? 0);
    if (this.info && version === this.infoVersion) return this.info;
    const names = this.store
      .all<{ name: string }>(
        "SELECT name FROM pragma_table_list WHERE schema = 'main' AND type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name",
      )
      .map((r) => r.name);
    const info = new Map<string, TableInfo>();
    for (const name of names) {
      const cols = this.store.all<{ name: string; pk: number; cid: number }>('SELECT name, pk, cid FROM pragma_table_info(?) ORDER BY cid', [name]);
      info.set(name, {
        name,
        columns: cols.map((c) => c.name),
        primaryKey: cols
          .filter((c) => c.pk > 0)
          .sort((a, b) => a.pk - b.pk)
          .map((c) => c.name),
      });
    }
    this.info = info;
    this.infoVersion = version;
    return info;
  }
}

function value(v: Row[string] | undefined): SqlValue {
  return v === undefined ? null : v;
}
