/**
 * The canonical, line-oriented text dump of a project that the history repository holds (docs/architecture.md,
 * "The data"), and the pure functions over it: build it from rows, read it back, compare two dumps, plan
 * the row changes that restore one.
 *
 * Layout (every path relative to the history repository):
 * - `manifest.json`: the format and, per dumped table, its primary key and columns (canonical order).
 * - `tables/<table>.jsonl`: one line per row, rows sorted by primary key, each row a JSON object whose
 *   keys are the primary-key columns in key order followed by the other columns sorted by name. Blobs are
 *   `{"$blob": "<base64>"}`, non-finite numbers `{"$real": "Infinity"}`. Every line ends with `\n`.
 * - `sources/<id>.txt`: the text of source `<id>`, exactly as stored (CRLF kept), in place of the
 *   `content` column of `tables/sources.jsonl`. A source without text (media) has no file; a text that is
 *   not well-formed UTF-16 (lone surrogates) stays in the row instead, so no text is ever altered.
 *
 * Left out: the `events` table (history is about the project's state, not its event log, which is
 * append-only and would make every snapshot differ), `approval_requests` (the trust layer's bookkeeping of
 * pending calls, not research data: restoring it would revive or re-open decided requests),
 * `schema_migrations` (which migrations ran when: restoring an older list would make them run again),
 * `segment_embeddings` (a cache of vectors derived from segment texts, large and recomputable),
 * `entity_versions` (the trust layer's change counters for the version check on approval: a restore must not
 * wind them back, and its own writes count as changes), the search
 * indexes (FTS virtual tables and their shadow tables: the store never lists them), SQLite's own
 * tables (`sqlite_sequence`), `meta.journal_seq` (the durability layer's counter) and `meta.project_guid` (the
 * project's identity, which REFI-QDA exports derive GUIDs from; see EXCLUDED_META_KEYS). Every other table,
 * including ones later migrations add, is dumped.
 *
 * Identical project states give byte-identical dumps whatever order the rows were written in.
 */
import type { DumpDiffSummary, CountedChanges, NamedChanges, ProjectRows, Row, RowValue, TableChange, TableInfo } from '../domain/versionControl';

/** Tables never dumped (see the module comment for why). */
export const EXCLUDED_TABLES: ReadonlySet<string> = new Set(['events', 'approval_requests', 'schema_migrations', 'segment_embeddings', 'entity_versions']);

/**
 * Rows of `meta` never dumped, by key: volatile counters of the store, and `project_guid` (migration 8), the
 * project's identity for REFI-QDA exports: it is no project data, and a restore must never change it.
 */
export const EXCLUDED_META_KEYS: ReadonlySet<string> = new Set(['journal_seq', 'project_guid']);

/** The dump format written in `manifest.json`. */
export const DUMP_FORMAT = 'marginalia-dump';
export const DUMP_VERSION = 1;

/** Path of the manifest in a dump. */
export const MANIFEST_PATH = 'manifest.json';

/** A table's rows as the dump takes them. */
export interface DumpTable extends TableInfo {
  rows: Row[];
}

/** A dump read back: per table, its primary key and rows (source texts put back into `sources.content`). */
export type ParsedDump = Map<string, { primaryKey: string[]; rows: Row[] }>;

/** True when table `name` belongs in the dump. */
export function isDumpedTable(name: string): boolean {
  return !EXCLUDED_TABLES.has(name) && !name.startsWith('sqlite_');
}

/** Path of a table's JSONL file in the dump. */
export function tablePath(table: string): string {
  return `tables/${table}.jsonl`;
}

/** Path of a source's text file in the dump. */
export function sourceTextPath(id: RowValue): string {
  return `sources/${String(id)}.txt`;
}

/**
 * Reads every dumped table of the project through the {@link ProjectRows} port (synchronously, so the
 * result is one consistent state), dropping the excluded `meta` rows.
 */
export function readProjectTables(rows: ProjectRows): DumpTable[] {
  return rows
    .tables()
    .filter((t) => isDumpedTable(t.name))
    .map((t) => ({ ...t, rows: dropExcludedRows(t.name, rows.readRows(t.name)) }));
}

function dropExcludedRows(table: string, rows: Row[]): Row[] {
  if (table !== 'meta') return rows;
  return rows.filter((r) => !EXCLUDED_META_KEYS.has(String(r.key)));
}

/**
 * The canonical dump of `tables`: path -> file content (see the module comment for the layout), paths in
 * sorted order. Pure: the same tables give byte-identical files, in whatever order tables, rows and
 * columns arrive. Excluded tables and `meta` keys passed in are left out here too.
 */
export function canonicalDump(tables: readonly DumpTable[]): Map<string, string> {
  const files = new Map<string, string>();
  const manifestTables: Record<string, { primary_key: string[]; columns: string[] }> = {};
  for (const t of [...tables].sort((a, b) => compareText(a.name, b.name))) {
    if (!isDumpedTable(t.name)) continue;
    const keys = canonicalColumns(t);
    manifestTables[t.name] = { primary_key: [...t.primaryKey], columns: keys };
    const lines: string[] = [];
    for (const row of sortRows(dropExcludedRows(t.name, t.rows), t.primaryKey, keys)) {
      let out = row;
      if (t.name === 'sources' && typeof row.content === 'string' && isWellFormed(row.content)) {
        files.set(sourceTextPath(row.id ?? null), row.content);
        out = { ...row };
        delete out.content;
      }
      lines.push(rowLine(out, keys));
    }
    files.set(tablePath(t.name), lines.map((l) => `${l}\n`).join(''));
  }
  const manifest = { format: DUMP_FORMAT, version: DUMP_VERSION, excluded_tables: [...EXCLUDED_TABLES].sort(compareText), tables: manifestTables };
  files.set(MANIFEST_PATH, `${JSON.stringify(manifest, null, 2)}\n`);
  return new Map([...files.entries()].sort(([a], [b]) => compareText(a, b)));
}

/** True when `s` has no lone surrogate, so UTF-8 keeps it exactly. */
function isWellFormed(s: string): boolean {
  return !/\p{Surrogate}/u.test(s);
}

/** The columns of a table in canonical order: primary key in key order, then the rest by name. */
function canonicalColumns(t: TableInfo): string[] {
  const pk = new Set(t.primaryKey);
  return [...t.primaryKey, ...t.columns.filter((c) => !pk.has(c)).sort(compareText)];
}

/** One row as its canonical JSON line: keys in `keys` order (those it has), then any others by name. */
function rowLine(row: Row, keys: readonly string[]): string {
  const known = new Set(keys);
  const order = [
    ...keys.filter((k) => k in row),
    ...Object.keys(row)
      .filter((k) => !known.has(k))
      .sort(compareText),
  ];
  return `{${order.map((k) => `${JSON.stringify(k)}:${encodeValue(row[k] ?? null)}`).join(',')}}`;
}

function encodeValue(v: RowValue): string {
  if (v === null) return 'null';
  if (typeof v === 'number') return Number.isFinite(v) ? JSON.stringify(v) : `{"$real":${JSON.stringify(String(v))}}`;
  if (typeof v === 'string') return JSON.stringify(v);
  return `{"$blob":${JSON.stringify(Buffer.from(v).toString('base64'))}}`;
}

function decodeValue(v: unknown): RowValue {
  if (v === null || typeof v === 'number' || typeof v === 'string') return v;
  if (typeof v === 'object' && v !== null) {
    const o = v as Record<string, unknown>;
    if (typeof o.$blob === 'string') return new Uint8Array(Buffer.from(o.$blob, 'base64'));
    if (typeof o.$real === 'string') return Number(o.$real);
  }
  throw new Error(`unreadable value in dump: ${JSON.stringify(v)}`);
}

/** Rows sorted by primary key (SQLite's order of storage classes: NULL, numbers, text, blobs), or by their canonical line. */
function sortRows(rows: readonly Row[], primaryKey: readonly string[], keys: readonly string[]): Row[] {
  if (primaryKey.length === 0) {
    return rows
      .map((r) => ({ r, line: rowLine(r, keys) }))
      .sort((a, b) => compareText(a.line, b.line))
      .map((x) => x.r);
  }
  return [...rows].sort((a, b) => {
    for (const k of primaryKey) {
      const c = compareValues(a[k] ?? null, b[k] ?? null);
      if (c !== 0) return c;
    }
    return 0;
  });
}

function rank(v: RowValue): number {
  if (v === null) return 0;
  if (typeof v === 'number') return 1;
  if (typeof v === 'string') return 2;
  return 3;
}

function compareValues(a: RowValue, b: RowValue): number {
  const ra = rank(a);
  const rb = rank(b);
  if (ra !== rb) return ra - rb;
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'string' && typeof b === 'string') return compareText(a, b);
  if (a instanceof Uint8Array && b instanceof Uint8Array) return Buffer.compare(Buffer.from(a), Buffer.from(b));
  return 0;
}

/** Compares by Unicode code point (the order of UTF-8 bytes, as SQLite's BINARY collation), not by UTF-16 unit. */
function compareText(a: string, b: string): number {
  if (a === b) return 0;
  const ia = a[Symbol.iterator]();
  const ib = b[Symbol.iterator]();
  for (;;) {
    const x = ia.next();
    const y = ib.next();
    if (x.done) return y.done ? 0 : -1;
    if (y.done) return 1;
    const cx = x.value.codePointAt(0)!;
    const cy = y.value.codePointAt(0)!;
    if (cx !== cy) return cx - cy;
  }
}

/**
 * Reads a dump back (the inverse of {@link canonicalDump}): the tables the manifest lists with their rows,
 * each source's text put back into `content` (null when it has no text file and no inline content). With
 * `keep`, only the row lines it accepts are parsed (src/vcs/syncMerge.ts leaves out rows a merge cannot change).
 * Throws (an Error naming the file) when a file is unreadable.
 */
export function parseDump(files: ReadonlyMap<string, string>, keep?: (table: string, line: string) => boolean): ParsedDump {
  const manifestText = files.get(MANIFEST_PATH);
  if (manifestText === undefined) throw new Error(`the snapshot has no ${MANIFEST_PATH}`);
  const manifest = JSON.parse(manifestText) as { format?: string; tables?: Record<string, { primary_key?: string[] }> };
  if (manifest.format !== DUMP_FORMAT) throw new Error(`${MANIFEST_PATH} is not a ${DUMP_FORMAT} manifest`);
  const out: ParsedDump = new Map();
  for (const [name, spec] of Object.entries(manifest.tables ?? {})) {
    const text = files.get(tablePath(name)) ?? '';
    const rows: Row[] = [];
    let lineNo = 0;
    for (const line of text.split('\n')) {
      lineNo++;
      if (line === '' || (keep && !keep(name, line))) continue;
      let parsed: Record<string, unknown>;
      try {
        parsed = JSON.parse(line) as Record<string, unknown>;
      } catch {
        throw new Error(`${tablePath(name)} line ${lineNo} is not JSON`);
      }
      // plain JSON values are row values as they are: only blobs and non-finite numbers ({"$blob"}, {"$real"}) are decoded
      const row = parsed as Row;
      for (const k in parsed) {
        const v = parsed[k];
        if (v !== null && typeof v === 'object') row[k] = decodeValue(v);
        else if (typeof v === 'boolean' || v === undefined) throw new Error(`unreadable value in dump: ${JSON.stringify(v)}`);
      }
      if (name === 'sources' && !('content' in row)) row.content = files.get(sourceTextPath(row.id ?? null)) ?? null;
      rows.push(row);
    }
    out.set(name, { primaryKey: spec.primary_key ?? [], rows });
  }
  return out;
}

/** The identity of a row in its table: its primary-key values as JSON (its whole line without a key). */
function rowId(row: Row, primaryKey: readonly string[]): string {
  if (primaryKey.length === 0) return rowLine(row, Object.keys(row).sort(compareText));
  return primaryKey.map((k) => encodeValue(row[k] ?? null)).join('\u0000');
}

/** A row as comparable text: its canonical line over `columns` only. */
function rowText(row: Row, columns: readonly string[]): string {
  const r: Row = {};
  for (const c of columns) r[c] = row[c] ?? null;
  return rowLine(r, columns);
}

/**
 * The row changes that turn the `current` tables into the `target` dump, table by table: rows of a table
 * the target lacks are deleted (the snapshot predates the table), columns the current schema lacks are
 * ignored, and a column the snapshot lacks keeps its current value (its default on insert). Rows are
 * compared on the columns both sides have. Tables without a primary key are replaced whole when they differ.
 * Only dumped tables are touched; `meta.journal_seq` is never.
 */
export function planRestore(current: readonly DumpTable[], target: ParsedDump): TableChange[] {
  const changes: TableChange[] = [];
  for (const t of current) {
    if (!isDumpedTable(t.name)) continue;
    const cols = new Set(t.columns);
    const wanted = (target.get(t.name)?.rows ?? []).map((r) => {
      const row: Row = {};
      for (const [k, v] of Object.entries(r)) if (cols.has(k)) row[k] = v;
      return row;
    });
    const wantedRows = dropExcludedRows(t.name, wanted);
    const currentRows = dropExcludedRows(t.name, t.rows);
    const change: TableChange = { table: t.name, primaryKey: [...t.primaryKey], delete: [], update: [], insert: [] };
    if (t.primaryKey.length === 0) {
      const a = currentRows.map((r) => rowText(r, t.columns)).sort(compareText);
      const b = wantedRows.map((r) => rowText(r, t.columns)).sort(compareText);
      if (a.join('\n') !== b.join('\n')) changes.push({ ...change, replace_all: true, insert: wantedRows });
      continue;
    }
    const byId = new Map(currentRows.map((r) => [rowId(r, t.primaryKey), r]));
    const seen = new Set<string>();
    for (const w of wantedRows) {
      const id = rowId(w, t.primaryKey);
      seen.add(id);
      const have = byId.get(id);
      if (!have) change.insert.push(w);
      else {
        const shared = Object.keys(w);
        if (rowText(have, shared) !== rowText(w, shared)) change.update.push(w);
      }
    }
    for (const [id, r] of byId) if (!seen.has(id)) change.delete.push(r);
    if (change.delete.length + change.update.length + change.insert.length > 0) changes.push(change);
  }
  return changes;
}

/**
 * What differs from dump `from` to dump `to` (path -> content; for `sources/*.txt` any fingerprint of the
 * text will do, such as git's blob id, since only equality is used): codes, categories, folders, sources
 * and cases by name, segments and AV segments by count and id, and per-table counts for every table
 * that differs. Throws like {@link parseDump} on unreadable files.
 */
export function diffDumps(from: ReadonlyMap<string, string>, to: ReadonlyMap<string, string>): DumpDiffSummary {
  const a = parseTables(from);
  const b = parseTables(to);
  const tables: DumpDiffSummary['tables'] = {};
  const perTable = new Map<string, { added: Row[]; removed: Row[]; changed: { from: Row; to: Row }[] }>();
  for (const name of [...new Set([...a.keys(), ...b.keys()])].sort(compareText)) {
    const pk = b.get(name)?.primaryKey ?? a.get(name)?.primaryKey ?? [];
    const before = new Map((a.get(name)?.rows ?? []).map((r) => [rowId(r.row, pk), r]));
    const after = new Map((b.get(name)?.rows ?? []).map((r) => [rowId(r.row, pk), r]));
    const d = { added: [] as Row[], removed: [] as Row[], changed: [] as { from: Row; to: Row }[] };
    for (const [id, r] of after) {
      const old = before.get(id);
      if (!old) d.added.push(r.row);
      else if (old.line !== r.line || old.text !== r.text) d.changed.push({ from: old.row, to: r.row });
    }
    for (const [id, r] of before) if (!after.has(id)) d.removed.push(r.row);
    perTable.set(name, d);
    if (d.added.length + d.removed.length + d.changed.length > 0)
      tables[name] = { added: d.added.length, removed: d.removed.length, changed: d.changed.length };
  }
  const named = (table: string): NamedChanges => {
    const d = perTable.get(table);
    const name = (r: Row) => String(r.name ?? `#${String(r.id ?? '?')}`);
    const byName = (x: string, y: string) => compareText(x, y);
    return {
      added: (d?.added ?? []).map(name).sort(byName),
      removed: (d?.removed ?? []).map(name).sort(byName),
      changed: (d?.changed ?? []).map((c) => name(c.to)).sort(byName),
      renamed: (d?.changed ?? [])
        .filter((c) => name(c.from) !== name(c.to))
        .map((c) => ({ from: name(c.from), to: name(c.to) }))
        .sort((x, y) => byName(x.to, y.to)),
    };
  };
  const counted = (table: string): CountedChanges => {
    const d = perTable.get(table);
    const pk = b.get(table)?.primaryKey ?? a.get(table)?.primaryKey ?? ['id'];
    const id = (r: Row): number | string => {
      const v = pk.length === 1 ? r[pk[0]!] : rowId(r, pk);
      return typeof v === 'number' ? v : String(v);
    };
    const ids = (rows: Row[]) => rows.map(id).sort((x, y) => compareValues(x, y));
    return {
      added: d?.added.length ?? 0,
      removed: d?.removed.length ?? 0,
      changed: d?.changed.length ?? 0,
      added_ids: ids(d?.added ?? []),
      removed_ids: ids(d?.removed ?? []),
      changed_ids: ids((d?.changed ?? []).map((c) => c.to)),
    };
  };
  return {
    codes: named('codes'),
    categories: named('categories'),
    folders: named('folders'),
    sources: named('sources'),
    cases: named('cases'),
    segments: counted('segments'),
    av_segments: counted('av_segments'),
    tables,
  };
}

/** Tables of a dump with each row, its line, and (for sources) its text fingerprint. */
function parseTables(files: ReadonlyMap<string, string>): Map<string, { primaryKey: string[]; rows: { row: Row; line: string; text: string | undefined }[] }> {
  const manifestText = files.get(MANIFEST_PATH);
  const out = new Map<string, { primaryKey: string[]; rows: { row: Row; line: string; text: string | undefined }[] }>();
  if (manifestText === undefined) return out;
  const manifest = JSON.parse(manifestText) as { tables?: Record<string, { primary_key?: string[] }> };
  for (const [name, spec] of Object.entries(manifest.tables ?? {})) {
    const rows: { row: Row; line: string; text: string | undefined }[] = [];
    for (const line of (files.get(tablePath(name)) ?? '').split('\n')) {
      if (line === '') continue;
      const parsed = JSON.parse(line) as Record<string, unknown>;
      const row: Row = {};
      for (const [k, v] of Object.entries(parsed)) row[k] = decodeValue(v);
      rows.push({ row, line, text: name === 'sources' ? files.get(sourceTextPath(row.id ?? null)) : undefined });
    }
    out.set(name, { primaryKey: spec.primary_key ?? [], rows });
  }
  return out;
}
