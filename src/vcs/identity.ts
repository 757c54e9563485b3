/**
 * Stable identity of project entities across copies of a project (issue 16 item 1).
 *
 * Integer ids (`id`, `code_id`, ...) are local to one project file: two copies of a project that each create
 * a code may both call it `codes.id = 7`. What identifies an entity on every machine is its GUID, stored in a
 * `guid` column of the entity's own row (migration "stable entity GUIDs", see src/store/migrations.ts), so it
 * is part of the canonical dump (`tables/<table>.jsonl`) and travels with the history through any git remote.
 *
 * - Tables with a `guid` column ({@link GUID_TABLES}): codes, categories, sources, folders, segments,
 *   av_segments, cases, case_segments. The GUID is a lower-case hyphenated UUID.
 * - Rows that existed before the migration got the GUID REFI-QDA exports already gave them (the GUID an
 *   imported REFI file gave, from `exchange_guids`, else the one derived from `meta.project_guid` + kind + id;
 *   src/domain/exchangeIds.ts), so earlier exports and the entity GUID agree. The REFI kind of each table is
 *   {@link GUID_TABLES}' value (a segment is its REFI `coding`, whose GUID is unique per segment).
 * - A row inserted later with no GUID gets a random UUID v4 from an AFTER INSERT trigger (every insert path:
 *   tools, importers, restores of dumps written before the migration). A row inserted with a GUID (a restore
 *   or merge of a dump that has them) keeps it.
 * - Memos are columns of their entity (`codes.memo`, `sources.memo`, `segments.memo`, ...): a memo's identity
 *   is its entity's GUID.
 * - Rows without a GUID of their own are identified through the GUIDs of the entities they hang on
 *   ({@link REFERENCES}) plus their own key columns: `case_attributes` = case GUID + `name`,
 *   `source_attributes` = source GUID + `name`, `case_sources` = case GUID + source GUID. See {@link rowIdentity}.
 *
 * The merge engine (src/vcs/merge) matches rows of two dumps by {@link rowIdentity}, never by integer id, and
 * renumbers the foreign keys listed in {@link REFERENCES} when it gives an entity from the other side a local id.
 */
import type { Row } from '../domain/versionControl';

/** Tables whose rows carry their own `guid` column, each with the REFI-QDA exchange kind its GUID was seeded from. */
export const GUID_TABLES: Readonly<Record<string, string>> = {
  codes: 'code',
  categories: 'category',
  sources: 'source',
  folders: 'folder',
  segments: 'coding',
  av_segments: 'av_coding',
  cases: 'case',
  case_segments: 'case_selection',
};

/**
 * Foreign-key columns between dumped entity tables: `table -> column -> referenced table` (the referenced
 * column is always `id`). A null value references nothing.
 */
export const REFERENCES: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  folders: { parent_id: 'folders' },
  sources: { folder_id: 'folders' },
  categories: { parent_id: 'categories' },
  codes: { category_id: 'categories' },
  segments: { code_id: 'codes', source_id: 'sources' },
  av_segments: { code_id: 'codes', source_id: 'sources' },
  case_sources: { case_id: 'cases', source_id: 'sources' },
  case_segments: { case_id: 'cases', source_id: 'sources' },
  case_attributes: { case_id: 'cases' },
  source_attributes: { source_id: 'sources' },
  source_metadata_hints: { source_id: 'sources' },
};

/** Own key columns (besides the references) that identify a row of a table without a GUID. */
const NATURAL_KEYS: Readonly<Record<string, readonly string[]>> = {
  case_attributes: ['case_id', 'name'],
  source_attributes: ['source_id', 'name'],
  case_sources: ['case_id', 'source_id'],
};

/** True when rows of `table` carry their own `guid` column. */
export function hasGuid(table: string): boolean {
  return Object.prototype.hasOwnProperty.call(GUID_TABLES, table);
}

/**
 * The GUID of an entity row: its `guid` column (lower case) when `table` is one of {@link GUID_TABLES} and
 * the row has one, else null (a table without GUIDs, or a row of a dump written before the migration).
 */
export function entityGuid(table: string, row: Row): string | null {
  if (!hasGuid(table)) return null;
  const g = row.guid;
  return typeof g === 'string' && g !== '' ? g.toLowerCase() : null;
}

/**
 * The identity of a row that holds on every copy of the project: `<table>:<guid>` for an entity with a GUID;
 * for the tables in NATURAL_KEYS (attributes, case membership), the referenced entities' GUIDs (through
 * `guidOf(table, id)`) plus the row's own key values; else null (match such rows by their primary key, or
 * not at all). `guidOf` returns null for an unknown id, which makes the identity null.
 */
export function rowIdentity(table: string, row: Row, guidOf: (table: string, id: number) => string | null): string | null {
  const own = entityGuid(table, row);
  if (own !== null) return `${table}:${own}`;
  const key = NATURAL_KEYS[table];
  if (!key) return null;
  const refs = REFERENCES[table] ?? {};
  const parts: string[] = [];
  for (const col of key) {
    const target = refs[col];
    const v = row[col] ?? null;
    if (target !== undefined) {
      const g = typeof v === 'number' ? guidOf(target, v) : null;
      if (g === null) return null;
      parts.push(g);
    } else parts.push(JSON.stringify(v));
  }
  return `${table}:${parts.join('/')}`;
}
