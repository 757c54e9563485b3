import type { SqlValue } from 'sql.js';
import type { ProjectRows, Row, TableChange, TableInfo } from '../domain/versionControl';
import type { ProjectStore } from './projectStore';

/** Rows per multi-row INSERT of {@link StoreDumpAccess.applyChanges}. */
const INSERT_ROWS = 500;
/** Bound values per statement, below SQLite's SQLITE_MAX_VARIABLE_NUMBER (32,766). */
const MAX_PARAMS = 30_000;

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
  private readonly guids: TriggerGuids;
  /** per table, the columns of its unique indexes (re-read with the table list) */
  private readonly unique = new Map<string, string[]>();

  /** Also makes the GUIDs the store's triggers draw durable across a journal replay ({@link TriggerGuids}). */
  constructor(private readonly store: ProjectStore) {
    this.guids = TriggerGuids.of(store);
  }

  /** The store's write generation (ProjectStore.writeGeneration): equal values mean unchanged rows, so a sync can check the project is still the state it dumped without dumping it again. */
  get writeGeneration(): number {
    return this.store.writeGeneration;
  }

  /** Every ordinary table (`PRAGMA table_list` type `table`, without `sqlite_*`), by name; columns in schema order. */
  tables(): TableInfo[] {
    // a dump is about to be read: the GUIDs the triggers drew become durable first (TriggerGuids)
    this.guids.flush();
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
   * in the order given. Columns a row carries that the table lacks are ignored. Rows of one table with the same
   * columns are inserted by multi-row `INSERT` statements ({@link INSERT_ROWS} rows, at most {@link MAX_PARAMS}
   * values each), so a merge of 100,000 rows is a few hundred statements in the journal. Throws outside a
   * transaction (programming error) and on constraint failures (the caller's transaction rolls back).
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
      // two rows trading unique values (a fast-forward renumbering codes: 2 'A', 3 'B' -> 2 'B', 3 'A') must not
      // collide on the way: the unique columns being written first get a placeholder unique to the row
      const unique = c.update.length > 1 ? this.uniqueColumns(t.name).filter((col) => !pk.has(col)) : [];
      if (unique.length > 0) {
        const where = c.primaryKey.map((k) => `${ident(k)} IS ?`).join(' AND ');
        for (const row of c.update) {
          const cols = unique.filter((col) => col in row);
          if (cols.length === 0) continue;
          const hold = `\u0001${c.primaryKey.map((k) => String(row[k])).join('\u0001')}`;
          this.store.run(`UPDATE ${ident(t.name)} SET ${cols.map((col) => `${ident(col)} = ?`).join(', ')} WHERE ${where}`, [
            ...cols.map(() => hold),
            ...c.primaryKey.map((k) => value(row[k])),
          ]);
        }
      }
      for (const row of c.update) {
        const cols = t.columns.filter((col) => !pk.has(col) && col in row);
        if (cols.length === 0) continue;
        const sql = `UPDATE ${ident(t.name)} SET ${cols.map((col) => `${ident(col)} = ?`).join(', ')} WHERE ${c.primaryKey.map((k) => `${ident(k)} IS ?`).join(' AND ')}`;
        this.store.run(sql, [...cols.map((col) => value(row[col])), ...c.primaryKey.map((k) => value(row[k]))]);
      }
    }
    for (const c of changes) this.insertRows(this.table(c.table), c.insert);
  }

  /** Inserts `rows` into `t` by multi-row statements, rows with the same columns together (see {@link applyChanges}). */
  private insertRows(t: TableInfo, rows: readonly Row[]): void {
    const byColumns = new Map<string, { cols: string[]; rows: Row[] }>();
    for (const row of rows) {
      const cols = t.columns.filter((col) => col in row);
      const key = cols.join('\u0000');
      let group = byColumns.get(key);
      if (!group) byColumns.set(key, (group = { cols, rows: [] }));
      group.rows.push(row);
    }
    const withGuid = t.columns.includes('guid');
    for (const { cols, rows: group } of byColumns.values()) {
      const per = Math.max(1, Math.min(INSERT_ROWS, Math.floor(MAX_PARAMS / Math.max(1, cols.length))));
      const tuple = `(${cols.map(() => '?').join(',')})`;
      const head = `INSERT INTO ${ident(t.name)} (${cols.map(ident).join(', ')}) VALUES `;
      for (let i = 0; i < group.length; i += per) {
        const batch = group.slice(i, i + per);
        const params: SqlValue[] = [];
        for (const row of batch) for (const col of cols) params.push(value(row[col]));
        this.store.run(head + Array(batch.length).fill(tuple).join(','), params);
        if (withGuid) for (const row of batch) if (typeof row.id === 'number') this.guids.inserted(t.name, row.id, typeof row.guid === 'string');
      }
    }
  }

  /** The columns of `table` in a UNIQUE index or constraint (not expressions), text-valued in practice (names, keys, GUIDs). */
  private uniqueColumns(table: string): string[] {
    this.tableMap();
    let cols = this.unique.get(table);
    if (!cols) {
      const set = new Set<string>();
      for (const idx of this.store.all<{ name: string; unique: number }>('SELECT name, "unique" FROM pragma_index_list(?)', [table])) {
        if (!idx.unique) continue;
        for (const c of this.store.all<{ name: string | null }>('SELECT name FROM pragma_index_info(?)', [idx.name])) if (c.name) set.add(c.name);
      }
      cols = [...set];
      this.unique.set(table, cols);
    }
    return cols;
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
    this.unique.clear();
    return info;
  }
}

function value(v: Row[string] | undefined): SqlValue {
  return v === undefined ? null : v;
}

/**
 * Makes the GUIDs that the store's `<table>_guid_ai` triggers draw (migration 17: a random UUID v4 for a row
 * inserted without one) durable across a journal replay. The journal records a transaction's statements, not the
 * rows they made; replaying an INSERT fires the trigger again, which draws a different GUID, so after a crash
 * (SIGKILL before the next checkpoint) every entity created since the checkpoint would come back under a new
 * identity while the history and the other copies know it under the old one: the next merge would see it
 * deleted here and created anew (spurious `*_deleted_used` and `name_clash` conflicts, duplicated entities).
 *
 * After each commit the tables whose highest row id grew are noted, as a range of ids (one query asks every table's
 * highest id); before the project's rows are next read for a dump ({@link StoreDumpAccess.tables}, outside a
 * transaction: every snapshot and sync reads through it), one journaled transaction writes the GUIDs of those rows
 * explicitly (`UPDATE <table> SET guid = ? WHERE id = ?`: no change now, the original GUID on replay). A checkpoint
 * makes them durable as they are, so it clears what is noted. Rows a replay re-made draw their GUIDs again (no
 * history or copy saw the ones drawn before the crash: they were not yet written explicitly); the open checkpoints
 * right after such a replay ({@link ProjectStore.open}), so a second crash cannot draw others.
 * So no snapshot, and no copy, ever holds a GUID a crash could change, an ordinary write pays no second journal
 * append, and what is noted stays a few numbers per table however much is written. One per store
 * ({@link TriggerGuids.of}).
 */
export class TriggerGuids {
  private static readonly byStore = new WeakMap<ProjectStore, TriggerGuids>();
  /** per table with a GUID trigger: the highest row id looked at */
  private readonly seen = new Map<string, number>();
  /** per table: rows with an id above this and at most {@link seen} may hold a drawn GUID not yet written explicitly */
  private readonly pendingAbove = new Map<string, number>();
  /** ids inserted without a GUID at or below the table's highest id (a restore of an older dump), by table */
  private readonly belowSeen = new Map<string, Set<number>>();
  /** how many rows above the highest id looked at were inserted with their own GUID since the last commit, by table */
  private readonly explicitAbove = new Map<string, number>();

  /** The instance of `store`, created (and hooked into its commits and checkpoints) on first use. */
  static of(store: ProjectStore): TriggerGuids {
    let g = TriggerGuids.byStore.get(store);
    if (!g) {
      g = new TriggerGuids(store);
      TriggerGuids.byStore.set(store, g);
    }
    return g;
  }

  /** one query for every table's highest id (after each commit): a statement per table was a tenth of a small write */
  private readonly topsSql: string;
  private readonly topsParams: string[];

  private constructor(private readonly store: ProjectStore) {
    const names = store
      .all<{ tbl_name: string }>("SELECT tbl_name FROM sqlite_master WHERE type = 'trigger' AND name LIKE '%\\_guid\\_ai' ESCAPE '\\'")
      .map((r) => r.tbl_name);
    // AUTOINCREMENT tables: new ids are above the sequence; any other table is asked for its highest id
    this.topsSql =
      names.length === 0
        ? ''
        : `SELECT ${names.map((t, i) => `coalesce((SELECT seq FROM sqlite_sequence WHERE name = ?), (SELECT max(id) FROM ${ident(t)}), 0) AS t${i}`).join(', ')}`;
    this.topsParams = names;
    const tops = this.tops();
    names.forEach((t, i) => this.seen.set(t, tops[i] as number));
    store.onDidCommit(() => this.afterCommit());
    store.onDidCheckpoint(() => {
      this.pendingAbove.clear();
      this.belowSeen.clear();
    });
  }

  /** Notes that row `id` of `table` was inserted with its own GUID (true) or without one (false). */
  inserted(table: string, id: number, withGuid: boolean): void {
    const from = this.seen.get(table);
    if (from === undefined) return;
    if (withGuid) {
      if (id > from) this.explicitAbove.set(table, (this.explicitAbove.get(table) ?? 0) + 1);
      return;
    }
    if (id > from) return;
    let s = this.belowSeen.get(table);
    if (!s) this.belowSeen.set(table, (s = new Set()));
    s.add(id);
  }

  /** Writes the noted rows' GUIDs explicitly in one journaled transaction (see the class comment); nothing when none is noted. */
  flush(): void {
    if ((this.pendingAbove.size === 0 && this.belowSeen.size === 0) || this.store.inTransaction) return;
    const ranges = [...this.pendingAbove].map(([table, above]) => [table, above, this.seen.get(table) ?? above] as const);
    const below = [...this.belowSeen].map(([table, ids]) => [table, [...ids]] as const);
    this.pendingAbove.clear();
    this.belowSeen.clear();
    this.store.transaction(() => {
      const write = (table: string, rows: { id: number; guid: string | null }[]) => {
        for (const r of rows) this.store.run(`UPDATE ${ident(table)} SET guid = ? WHERE id = ?`, [r.guid, r.id]);
      };
      for (const [table, above, upTo] of ranges)
        write(table, this.store.all<{ id: number; guid: string | null }>(`SELECT id, guid FROM ${ident(table)} WHERE id > ? AND id <= ?`, [above, upTo]));
      for (const [table, ids] of below)
        write(table, this.store.all<{ id: number; guid: string | null }>(`SELECT id, guid FROM ${ident(table)} WHERE id IN (${ids.join(',')})`));
    });
  }

  /** Every GUID table's highest id, in the order of {@link topsParams} (a table's sequence when it has one). */
  private tops(): number[] {
    if (this.topsParams.length === 0) return [];
    const row = this.store.get<Record<string, number | null>>(this.topsSql, this.topsParams) ?? {};
    return this.topsParams.map((_, i) => Number(row[`t${i}`] ?? 0));
  }

  private afterCommit(): void {
    const tops = this.tops();
    let i = 0;
    for (const [table, from] of this.seen) {
      const top = tops[i++] as number;
      if (top <= from) continue;
      this.seen.set(table, top);
      // every new row came with its own GUID (a merge or a restore): nothing was drawn
      const explicit = this.explicitAbove.get(table) ?? 0;
      if (explicit > 0 && Number(this.store.get<{ n: number }>(`SELECT count(*) AS n FROM ${ident(table)} WHERE id > ?`, [from])?.n ?? 0) === explicit)
        continue;
      if (!this.pendingAbove.has(table)) this.pendingAbove.set(table, from);
    }
    this.explicitAbove.clear();
  }
}
