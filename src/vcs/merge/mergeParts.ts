/**
 * Small pieces of the merge of two histories (src/vcs/merge/mergeDumps.ts): per-table maps and counts, the conflict
 * kind of a field edited on both sides, and conflict values made readable (keys back to local ids, blobs as base64).
 */
import type { Row, RowValue } from '../../domain/versionControl';
import { REF } from './keys';
import { KIND } from './schema';
import type { MergeConflictKind } from './types';

/** Per table, a map (nested maps instead of joined string keys: the merge touches every row several times). */
export class PerTable<V> {
  private readonly m = new Map<string, Map<string, V>>();
  get(table: string, key: string): V | undefined {
    return this.m.get(table)?.get(key);
  }
  set(table: string, key: string, v: V): void {
    let t = this.m.get(table);
    if (!t) this.m.set(table, (t = new Map()));
    t.set(key, v);
  }
}

/** Adds one to `rec[table]`. */
export function bump(rec: Record<string, number>, table: string): void {
  rec[table] = (rec[table] ?? 0) + 1;
}

/** The delete-versus-use conflict kinds. */
export const DELETED_USED = new Set(['code_deleted_used', 'category_deleted_used', 'source_deleted_used', 'folder_deleted_used', 'case_deleted_used']);

/** The conflict kind of a field edited on both sides. */
export function fieldConflictKind(table: string, col: string): MergeConflictKind {
  if (col === 'memo') return 'memo_edited_both';
  const k = KIND[table];
  if (col === 'name' && k !== undefined && ['code', 'category', 'source', 'case', 'folder'].includes(k)) return `${k}_renamed_both` as MergeConflictKind;
  if ((col === 'category_id' && table === 'codes') || (col === 'parent_id' && table === 'categories') || (col === 'folder_id' && table === 'sources'))
    return `${k}_moved_both` as MergeConflictKind;
  if (col === 'code_id' && table === 'segments') return 'segment_recoded_both';
  return 'field_edited_both';
}

/** A deleted-or-kept entity as a conflict keeps it: its row without the source text. */
export function summarizeRow(row: Row): Row {
  const r: Row = { ...row };
  if ('content' in r) delete r.content;
  return r;
}

/** A conflict value with its keys resolved to local ids by `resolve` (deeply) and blobs as base64. */
export function unrefDeep(v: unknown, resolve: (table: string, v: RowValue) => RowValue): unknown {
  if (typeof v === 'string' && v.startsWith(REF)) {
    // the referenced table is not known here: try every table a key can name
    const key = v.slice(REF.length);
    const m = /^(?:base|ours|theirs)\/([^/]+)\//.exec(key);
    if (m) return resolve(m[1]!, v);
    for (const t of ['codes', 'categories', 'sources', 'folders', 'cases', 'segments', 'av_segments', 'suggestion_batches', 'suggestions', 'case_segments']) {
      const r = resolve(t, v);
      if (r !== null) return r;
    }
    return null;
  }
  if (v instanceof Uint8Array) return Buffer.from(v).toString('base64');
  if (v && typeof v === 'object' && !Array.isArray(v)) {
    const o: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) o[k] = unrefDeep(x, resolve);
    return o;
  }
  return v;
}
