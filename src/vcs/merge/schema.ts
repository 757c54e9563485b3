/**
 * What the merge (src/vcs/merge/mergeDumps.ts) knows about the tables of the canonical dump: which columns
 * reference which table and what happens to a reference whose target is gone, which columns are bookkeeping,
 * which names must stay unique; and row equality. Tables not listed are merged row by row by primary key.
 */
import type { Row, RowValue } from '../../domain/versionControl';
import { nameKey } from '../../domain/rules';

export type Side = 'base' | 'ours' | 'theirs';
/** How a reference behaves when its target is gone: kept alive (delete versus use), dropped with it, or left as it was. */
export type RefMode = 'keep' | 'cascade' | 'soft';
export interface Ref {
  table: string;
  mode: RefMode;
}

/** References between tables (column -> referenced table), by table. */
export const REFS: Record<string, Record<string, Ref>> = {
  folders: { parent_id: { table: 'folders', mode: 'keep' } },
  sources: { folder_id: { table: 'folders', mode: 'keep' } },
  source_metadata_hints: { source_id: { table: 'sources', mode: 'cascade' } },
  categories: { parent_id: { table: 'categories', mode: 'keep' } },
  codes: { category_id: { table: 'categories', mode: 'keep' } },
  segments: { code_id: { table: 'codes', mode: 'keep' }, source_id: { table: 'sources', mode: 'keep' } },
  av_segments: { code_id: { table: 'codes', mode: 'keep' }, source_id: { table: 'sources', mode: 'keep' } },
  orphan_segments: {
    segment_id: { table: 'segments', mode: 'soft' },
    code_id: { table: 'codes', mode: 'soft' },
    source_id: { table: 'sources', mode: 'soft' },
  },
  case_sources: { case_id: { table: 'cases', mode: 'cascade' }, source_id: { table: 'sources', mode: 'cascade' } },
  case_segments: { case_id: { table: 'cases', mode: 'cascade' }, source_id: { table: 'sources', mode: 'cascade' } },
  case_attributes: { case_id: { table: 'cases', mode: 'cascade' } },
  source_attributes: { source_id: { table: 'sources', mode: 'cascade' } },
  suggestion_batches: { source_id: { table: 'sources', mode: 'soft' }, code_id: { table: 'codes', mode: 'soft' } },
  suggestions: {
    batch_id: { table: 'suggestion_batches', mode: 'soft' },
    category_id: { table: 'categories', mode: 'soft' },
    code_id: { table: 'codes', mode: 'soft' },
    target_code_id: { table: 'codes', mode: 'soft' },
    source_id: { table: 'sources', mode: 'soft' },
  },
  segment_provenance: {
    segment_id: { table: 'segments', mode: 'cascade' },
    suggestion_id: { table: 'suggestions', mode: 'soft' },
    batch_id: { table: 'suggestion_batches', mode: 'soft' },
  },
};

/** Polymorphic references: a kind column says which table an id column points into. */
export const POLY: Record<string, { kindColumn: string; idColumn: string; tables: Record<string, string>; mode: RefMode; text: boolean }> = {
  agent_access: {
    kindColumn: 'target_kind',
    idColumn: 'target_id',
    tables: { source: 'sources', folder: 'folders', case: 'cases' },
    mode: 'cascade',
    text: false,
  },
  exchange_guids: {
    kindColumn: 'kind',
    idColumn: 'local_id',
    tables: {
      category: 'categories',
      code: 'codes',
      source: 'sources',
      case: 'cases',
      selection: 'segments',
      coding: 'segments',
      av_selection: 'av_segments',
      av_coding: 'av_segments',
      case_selection: 'case_segments',
    },
    mode: 'soft',
    text: true,
  },
};

/** The exchange_guids kind whose GUID identifies a row of a table (one GUID per row). */
export const GUID_KIND: Record<string, string> = {
  categories: 'category',
  codes: 'code',
  sources: 'source',
  cases: 'case',
  segments: 'coding',
  av_segments: 'av_coding',
  case_segments: 'case_selection',
};

/** Entity kinds named in conflicts. */
export const KIND: Record<string, string> = {
  codes: 'code',
  categories: 'category',
  sources: 'source',
  cases: 'case',
  folders: 'folder',
  segments: 'segment',
  av_segments: 'av_segment',
};

/** Columns that change as a side effect (timestamps, counters, sessions, derived values): never a conflict. */
export const BOOKKEEPING = new Set([
  'updated_at',
  'created_at',
  'version',
  'session_id',
  'owner',
  'coder_role',
  'content_length',
  'name_key',
  'orphaned_at',
  'decided_at',
  'completed_at',
]);

/** Tables of this copy's own bookkeeping: the merged dump keeps ours' rows as they are. */
export const LOCAL_TABLES = new Set(['merge_conflicts']);

/** Tables whose `start_pos`/`end_pos`/`text` follow the source text. */
export const ANCHORED = new Set(['segments', 'case_segments']);

/** Tables where one id sequence is shared (migration 11). */
export const SHARED_SEQUENCE: Record<string, string> = { segments: 'segment', av_segments: 'segment' };

/** Unique names: table -> the columns that must be unique together (a reference column compared by identity). */
export const UNIQUE: Record<string, { name: string; key: (r: Row) => string }> = {
  codes: { name: 'name', key: (r) => String(r.name_key ?? nameKey(String(r.name ?? ''))) },
  categories: { name: 'name', key: (r) => String(r.name_key ?? nameKey(String(r.name ?? ''))) },
  cases: { name: 'name', key: (r) => String(r.name_key ?? nameKey(String(r.name ?? ''))) },
  sources: { name: 'name', key: (r) => String(r.name ?? '') },
  folders: { name: 'name', key: (r) => `${String(r.parent_id ?? '')}\u0000${String(r.name ?? '')}` },
};

/** True for a table merged entity by entity (an integer `id` primary key). */
export function isEntityTable(pk: readonly string[]): boolean {
  return pk.length === 1 && pk[0] === 'id';
}

/** Equality of two dumped cell values: `===`, null and undefined alike, blobs by bytes. */
export function valueEq(a: RowValue | undefined, b: RowValue | undefined): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined || a === null || b === null) return (a ?? null) === (b ?? null);
  if (a instanceof Uint8Array && b instanceof Uint8Array) return Buffer.compare(Buffer.from(a), Buffer.from(b)) === 0;
  return false;
}

/** Equal apart from bookkeeping columns (and, for codings, the positions a text edit moves). */
export function sameIgnoring(table: string, a: Row, b: Row): boolean {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const k of keys) {
    if (BOOKKEEPING.has(k) || (ANCHORED.has(table) && (k === 'start_pos' || k === 'end_pos' || k === 'text'))) continue;
    if (!valueEq(a[k], b[k])) return false;
  }
  return true;
}

/** Equality of two dumped rows: the same columns with {@link valueEq} values (absent columns count as null). */
export function rowEq(a: Row, b: Row): boolean {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const k of keys) if (!valueEq(a[k], b[k])) return false;
  return true;
}
