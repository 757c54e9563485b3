/**
 * Identity of rows across the three dumps of a merge (src/vcs/merge/mergeDumps.ts, module comment "Identity"):
 * {@link entityGuid}, the per-side identity keys, entities created on both sides matched by name, and rows
 * rewritten into key space (references replaced by the referenced row's key).
 */
import { createHash } from 'node:crypto';
import type { ParsedDump } from '../canonicalDump';
import type { Row, RowValue } from '../../domain/versionControl';
import { entityGuid as guidColumn } from '../identity';
import { GUID_KIND, isEntityTable, POLY, REFS, type Side } from './schema';

/**
 * The GUID of `row` of `table` in `dump`, or null when it has none (src/vcs/merge/mergeDumps.ts, "Identity", steps 1 and 2):
 * its `guid` column, else the GUID `exchange_guids` stores for it when that GUID names no other item of the
 * same kind in the dump (dumps written before migration 17; see src/vcs/merge/mergeDumps.ts, "Identity").
 */
export function entityGuid(table: string, row: Row, dump: ParsedDump): string | null {
  const own = guidColumn(table, row);
  if (own !== null) return own;
  const kind = GUID_KIND[table];
  if (kind === undefined || row.id === undefined || row.id === null) return null;
  return exchangeIndex(dump).get(`${kind}\u0000${String(row.id)}`) ?? null;
}

const exchangeCache = new WeakMap<ParsedDump, Map<string, string>>();

/** `kind\0local_id` -> GUID, for the GUIDs of exchange_guids held by exactly one item of their kind. */
function exchangeIndex(dump: ParsedDump): Map<string, string> {
  let idx = exchangeCache.get(dump);
  if (idx) return idx;
  idx = new Map();
  const count = new Map<string, number>();
  const rows = dump.get('exchange_guids')?.rows ?? [];
  for (const r of rows)
    count.set(`${String(r.kind)}\u0000${String(r.guid).toLowerCase()}`, (count.get(`${String(r.kind)}\u0000${String(r.guid).toLowerCase()}`) ?? 0) + 1);
  for (const r of rows) {
    const g = String(r.guid).toLowerCase();
    if (count.get(`${String(r.kind)}\u0000${g}`) === 1) idx.set(`${String(r.kind)}\u0000${String(r.local_id)}`, g);
  }
  exchangeCache.set(dump, idx);
  return idx;
}

/** Per side: table -> local id -> identity key. */
export type KeyMap = Map<string, Map<string, string>>;

/** A row id as the text the identity maps key it by (blobs as hex, null as "null"). */
export function idText(v: RowValue | undefined): string {
  return v instanceof Uint8Array ? Buffer.from(v).toString('hex') : String(v ?? null);
}

/** Keys of the entity rows of one side (module comment, steps 1-4). */
export function keysOf(side: Side, dump: ParsedDump, baseKeys: KeyMap | null): KeyMap {
  const out: KeyMap = new Map();
  for (const [table, t] of dump) {
    if (!isEntityTable(t.primaryKey)) continue;
    const m = new Map<string, string>();
    const baseM = baseKeys?.get(table);
    for (const r of t.rows) {
      const id = idText(r.id);
      const g = entityGuid(table, r, dump);
      m.set(id, g !== null ? `g:${g}` : (baseM?.get(id) ?? `${side}/${table}/${id}`));
    }
    out.set(table, m);
  }
  return out;
}

/** One side in key space: table -> key -> row (references rewritten to keys, marked with {@link REF}). */
export type KeyedTables = Map<string, Map<string, Row>>;

/** The rows of `dump` in key space: each row keyed by its identity, its id and references rewritten to keys. */
export function toKeyed(dump: ParsedDump, km: KeyMap): KeyedTables {
  const out: KeyedTables = new Map();
  for (const [table, t] of dump) {
    const rows = new Map<string, Row>();
    const refs = Object.entries(REFS[table] ?? {});
    const poly = POLY[table];
    const entity = isEntityTable(t.primaryKey);
    const ids = km.get(table);
    for (const r of t.rows) {
      const row: Row = { ...r };
      for (const [col, ref] of refs) {
        const v = r[col];
        if (v === null || v === undefined) continue;
        const key = km.get(ref.table)?.get(idText(v));
        row[col] = key !== undefined ? REF + key : v;
      }
      if (poly) {
        const target = poly.tables[String(r[poly.kindColumn])];
        const v = r[poly.idColumn];
        if (target !== undefined && v !== null && v !== undefined) {
          const key = km.get(target)?.get(idText(v));
          if (key !== undefined) row[poly.idColumn] = REF + key;
        }
      }
      let rk: string;
      if (entity) {
        rk = ids!.get(idText(r.id))!;
        row.id = REF + rk;
      } else rk = t.primaryKey.length === 0 ? JSON.stringify(Object.entries(row).sort()) : t.primaryKey.map((c) => idText(row[c])).join('\u0000');
      rows.set(rk, row);
    }
    out.set(table, rows);
  }
  return out;
}

/** Prefix of a reference value rewritten to a key. */
export const REF = '\u0001ref:';

/** A stable conflict id: the first 24 hex digits of SHA-1 over kind, table, entity GUID and field, so a conflict keeps its id across merges. */
export function conflictId(kind: string, table: string, guid: string, field: string): string {
  return createHash('sha1').update(`${kind}\u0000${table}\u0000${guid}\u0000${field}`).digest('hex').slice(0, 24);
}

/** A row's range as text: `start-end` of the two columns. */
function spanOf(r: Row, start: string, end: string): string {
  return `${String(r[start])}-${String(r[end])}`;
}

/**
 * Entities created on both sides matched (module comment of mergeDumps.ts): codes, cases by name; categories and
 * folders by name and parent; sources by name and text; codings by code, source, range, text and coder (the same
 * coder's identical coding made on two copies, or a coding and its copy under a new GUID); AV codings by code,
 * source, time range and coder; case ranges by case, source, range and text. The theirs key of each is replaced by
 * the ours key. Returns how many were matched.
 */
export function unifyNew(
  base: ParsedDump,
  ours: ParsedDump,
  theirs: ParsedDump,
  kBase: KeyMap,
  kOurs: KeyMap,
  kTheirs: KeyMap,
  baseKeySet: (t: string) => Set<string>,
): number {
  let n = 0;
  const refKey = (km: KeyMap, table: string, v: RowValue | undefined) =>
    v === null || v === undefined ? '' : (km.get(table)?.get(idText(v)) ?? `?${idText(v)}`);
  const plan: [string, (r: Row, km: KeyMap) => string][] = [
    ['folders', (r, km) => `${refKey(km, 'folders', r.parent_id)}\u0000${String(r.name)}`],
    ['categories', (r, km) => `${refKey(km, 'categories', r.parent_id)}\u0000${String(r.name_key)}`],
    ['codes', (r) => String(r.name_key)],
    ['cases', (r) => String(r.name_key)],
    ['sources', (r) => `${String(r.name)}\u0000${String(r.content)}`],
    // one coder's identical coding made on two copies is one coding; different coders' codings stay apart
    [
      'segments',
      (r, km) =>
        `${refKey(km, 'codes', r.code_id)}\u0000${refKey(km, 'sources', r.source_id)}\u0000${spanOf(r, 'start_pos', 'end_pos')}\u0000${String(r.owner)}\u0000${String(r.text)}`,
    ],
    [
      'av_segments',
      (r, km) => `${refKey(km, 'codes', r.code_id)}\u0000${refKey(km, 'sources', r.source_id)}\u0000${spanOf(r, 'start_ms', 'end_ms')}\u0000${String(r.owner)}`,
    ],
    // a case range is the case's, whoever marked it
    [
      'case_segments',
      (r, km) =>
        `${refKey(km, 'cases', r.case_id)}\u0000${refKey(km, 'sources', r.source_id)}\u0000${spanOf(r, 'start_pos', 'end_pos')}\u0000${String(r.text)}`,
    ],
  ];
  void base;
  for (const [table, sig] of plan) {
    const inBase = baseKeySet(table);
    // parents before children (folders, categories): repeat until nothing more matches
    for (let again = true; again;) {
      again = false;
      const oursNew = new Map<string, string>();
      for (const r of ours.get(table)?.rows ?? []) {
        const key = kOurs.get(table)!.get(idText(r.id))!;
        if (!inBase.has(key)) oursNew.set(sig(r, kOurs), key);
      }
      const tm = kTheirs.get(table);
      const oursKeys = new Set(kOurs.get(table)?.values() ?? []);
      for (const r of theirs.get(table)?.rows ?? []) {
        const id = idText(r.id);
        const key = tm!.get(id)!;
        if (inBase.has(key) || oursKeys.has(key)) continue;
        const match = oursNew.get(sig(r, kTheirs));
        if (match !== undefined && match !== key) {
          tm!.set(id, match);
          n++;
          again = table === 'folders' || table === 'categories';
        }
      }
    }
  }
  void kBase;
  return n;
}
