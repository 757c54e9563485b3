/**
 * The merge step of a sync (src/vcs/remote.ts), made to scale with what changed rather than with the project:
 * rows byte-identical in the three dumps (base, ours, theirs) are left out before parsing, since the merge cannot
 * change them, and the merged rows are applied as the changes from ours, so a merge of 50,000 new codings on each
 * side into a project of 100,000 parses, merges and writes 100,000 rows, not 300,000 (bench/merge.ts).
 *
 * Why an identical row is safe to leave out: it exists on both sides, so no side deleted it or anything it
 * references (the store's foreign keys), and both sides keep its local id (ours' and the base's ids are kept; it is
 * in all three). What could still change it, and is therefore never left out:
 * - rows of tables whose names must stay unique (codes, categories, cases, sources, folders: {@link UNIQUE}), which
 *   the merge needs to see to rename a clashing newcomer, and its own bookkeeping ({@link LOCAL_TABLES});
 * - codings and case ranges ({@link ANCHORED}) of a source whose text differs between the three dumps: they are
 *   re-anchored onto the merged text;
 * - rows of tables without a primary key (the restore replaces such a table whole).
 * References from the rows that are parsed to rows left out stay local ids, which are the same on all sides.
 */
import type { ParsedDump } from './canonicalDump';
import { EXCLUDED_META_KEYS, isDumpedTable, parseDump, sourceTextPath, tablePath } from './canonicalDump';
import type { Row, TableChange, TableInfo } from '../domain/versionControl';
import { ANCHORED, LOCAL_TABLES, UNIQUE, valueEq } from './merge/schema';

/** The three dumps parsed for a merge, without the rows identical in all three; `skipped` counts those rows per table. */
export interface MergeInput {
  base: ParsedDump;
  ours: ParsedDump;
  theirs: ParsedDump;
  skipped: Record<string, number>;
}

/** `"source_id":<n>` in a canonical row line (keys are quoted, values plain JSON). */
const SOURCE_ID = /"source_id":(-?\d+)[,}]/;
/** How a row line of a table keyed by an integer `id` starts (the key comes first: canonicalDump). */
const ID_PREFIX = '{"id":';

/** The integer id a row line starts with, or NaN. */
function lineId(line: string): number {
  if (!line.startsWith(ID_PREFIX)) return NaN;
  let n = 0;
  let i = ID_PREFIX.length;
  const neg = line.charCodeAt(i) === 45;
  if (neg) i++;
  const from = i;
  for (let c = line.charCodeAt(i); c >= 48 && c <= 57; c = line.charCodeAt(++i)) n = n * 10 + (c - 48);
  const end = line.charCodeAt(i);
  return i > from && (end === 44 || end === 125) ? (neg ? -n : n) : NaN;
}

/**
 * Marks the lines of `o` that equal a line of both `b` and `t`, and those lines in `b` and `t` (the returned sets of
 * line indexes). Tables keyed by `id` are walked in step (rows are sorted by id), others compared through sets.
 */
function commonLines(b: string[], o: string[], t: string[], byId: boolean, eligible: (line: string) => boolean): [Set<number>, Set<number>, Set<number>] {
  const cb = new Set<number>();
  const co = new Set<number>();
  const ct = new Set<number>();
  if (byId) {
    let ib = 0;
    let it = 0;
    for (let io = 0; io < o.length; io++) {
      const line = o[io]!;
      const id = lineId(line);
      if (Number.isNaN(id)) continue;
      while (ib < b.length && !(lineId(b[ib]!) >= id)) ib++;
      while (it < t.length && !(lineId(t[it]!) >= id)) it++;
      if (ib < b.length && it < t.length && b[ib] === line && t[it] === line && eligible(line)) {
        cb.add(ib);
        co.add(io);
        ct.add(it);
      }
    }
    return [cb, co, ct];
  }
  const index = (lines: string[]) => new Map(lines.map((l, i) => [l, i]));
  const inB = index(b);
  const inT = index(t);
  for (let io = 0; io < o.length; io++) {
    const line = o[io]!;
    const ib = inB.get(line);
    const it = inT.get(line);
    if (line === '' || ib === undefined || it === undefined || !eligible(line)) continue;
    cb.add(ib);
    co.add(io);
    ct.add(it);
  }
  return [cb, co, ct];
}

/**
 * Parses three dumps (path -> content, as canonicalDump writes them) for mergeDumps, leaving out the rows identical
 * in all three that the merge cannot change (module comment). Throws like parseDump on unreadable files.
 */
export function parseForMerge(base: ReadonlyMap<string, string>, ours: ReadonlyMap<string, string>, theirs: ReadonlyMap<string, string>): MergeInput {
  const manifest = (files: ReadonlyMap<string, string>) =>
    (JSON.parse(files.get('manifest.json') ?? '{}') as { tables?: Record<string, { primary_key?: string[] }> }).tables ?? {};
  const specs = { ...manifest(base), ...manifest(theirs), ...manifest(ours) };
  // sources whose text is the same in all three: their codings need no re-anchoring
  const stableText = (id: string) => {
    const p = sourceTextPath(id);
    const b = base.get(p);
    return b !== undefined && ours.get(p) === b && theirs.get(p) === b;
  };
  const files = [new Map(base), new Map(ours), new Map(theirs)];
  const skipped: Record<string, number> = {};
  for (const [table, spec] of Object.entries(specs)) {
    const pk = spec.primary_key ?? [];
    if (!isDumpedTable(table) || UNIQUE[table] || LOCAL_TABLES.has(table) || pk.length === 0) continue;
    const path = tablePath(table);
    const texts = files.map((f) => f.get(path));
    if (texts.some((x) => !x)) continue;
    const lines = texts.map((x) => x!.split('\n'));
    const stable = new Map<string, boolean>();
    const eligible = !ANCHORED.has(table)
      ? () => true
      : (line: string) => {
          const id = SOURCE_ID.exec(line)?.[1];
          if (id === undefined) return false;
          let ok = stable.get(id);
          if (ok === undefined) stable.set(id, (ok = stableText(id)));
          return ok;
        };
    const marks = commonLines(lines[0]!, lines[1]!, lines[2]!, pk.length === 1 && pk[0] === 'id', eligible);
    if (marks[1].size === 0) continue;
    skipped[table] = marks[1].size;
    files.forEach((f, i) => {
      const drop = marks[i]!;
      f.set(path, lines[i]!.filter((l, j) => l !== '' && !drop.has(j)).join('\n'));
    });
  }
  return { base: parseDump(files[0]!), ours: parseDump(files[1]!), theirs: parseDump(files[2]!), skipped };
}

/**
 * The row changes that turn `from` into `to`, two dumps of the same subset of the project's rows (ours and the
 * merge's result of {@link parseForMerge}), for the tables of `tables` (the current schema: columns a table lacks
 * are ignored, as planRestore does). Rows are matched by primary key and compared column by column; a table without
 * a primary key (never left out by parseForMerge) is replaced whole when its rows differ.
 */
export function planMergeChanges(tables: readonly TableInfo[], from: ParsedDump, to: ParsedDump): TableChange[] {
  const changes: TableChange[] = [];
  for (const t of tables) {
    if (!isDumpedTable(t.name)) continue;
    const cols = t.columns;
    if (t.primaryKey.length === 0) {
      const lines = (d: ParsedDump) => (d.get(t.name)?.rows ?? []).map((r) => JSON.stringify(cols.map((c) => valueText(r[c])))).sort();
      const want = to.get(t.name)?.rows ?? [];
      if (lines(from).join('\n') !== lines(to).join('\n'))
        changes.push({ table: t.name, primaryKey: [], delete: [], update: [], insert: [...want], replace_all: true });
      continue;
    }
    const key = t.primaryKey.length === 1 ? (r: Row) => r[t.primaryKey[0]!] : (r: Row) => t.primaryKey.map((k) => JSON.stringify(r[k] ?? null)).join('\u0000');
    const have = new Map<unknown, Row>();
    for (const r of from.get(t.name)?.rows ?? []) if (!(t.name === 'meta' && isExcludedMeta(r))) have.set(key(r), r);
    const change: TableChange = { table: t.name, primaryKey: [...t.primaryKey], delete: [], update: [], insert: [] };
    const seen = new Set<unknown>();
    const known = new Set(cols);
    for (const w of to.get(t.name)?.rows ?? []) {
      if (t.name === 'meta' && isExcludedMeta(w)) continue;
      let row = w;
      for (const c in w) {
        if (known.has(c)) continue;
        // a column the current schema lacks: left out
        row = {};
        for (const k of cols) if (k in w) row[k] = w[k]!;
        break;
      }
      const k = key(row);
      seen.add(k);
      const old = have.get(k);
      if (!old) change.insert.push(row);
      else if (cols.some((c) => c in row && !valueEq(old[c], row[c]))) change.update.push(row);
    }
    for (const [k, r] of have) if (!seen.has(k)) change.delete.push(r);
    if (change.delete.length + change.update.length + change.insert.length > 0) changes.push(change);
  }
  return changes;
}

/** A cell as comparable text (blobs as hex). */
function valueText(v: Row[string] | undefined): string {
  return v instanceof Uint8Array ? `x${Buffer.from(v).toString('hex')}` : JSON.stringify(v ?? null);
}

/** The `meta` rows the dump leaves out (journal_seq, project_guid): never written by a merge. */
function isExcludedMeta(r: Row): boolean {
  return EXCLUDED_META_KEYS.has(String(r.key));
}
