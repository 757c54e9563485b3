import * as path from 'node:path';
import { MAX_ATTRIBUTE_NAME } from '../../domain/cases';
import { MAX_CODE_NAME, MAX_SOURCE_NAME } from '../../domain/rules';
import { requireSchema, type ForeignDb } from '../sqlite';
import { databaseImporter } from './database';
import { emptyPlan, fitName, memoOf, normalizeColor, PlannedCases, skip, warn, type ImportOptions, type ImportPlan, type PlannedSource } from './plan';
import { linkCase, optionalColumn as col, PlannedCodings, typedAttribute, uniqueName } from './projectDatabase';

/**
 * QualCoder project import: the `data.qda` SQLite database inside a QualCoder project folder (schema `v8`,
 * QualCoder 3.x; tables as summarised in shared/notes/corpus.md).
 *
 * - `source` rows with `fulltext` -> text sources (media sources without text are counted as skipped);
 *   `mediapath` goes into the origin.
 * - `code_cat` -> categories, nested through `supercatid` (a cycle is broken at the first category met
 *   again, with a warning); `code_name` -> codes with colour, memo and category (`catid`).
 * - `code_text` -> segments. `pos0`/`pos1` are code point offsets into `source.fulltext` (QualCoder counts
 *   Python characters; on the corpus project every `seltext` equals `substr(fulltext, pos0+1, pos1-pos0)`).
 *   `important = 1` becomes importance 1. The coder (`owner`) is kept as the segment's owner. Each coding is
 *   re-anchored by its `seltext` (src/exchange/reanchor.ts): where the text at its offsets differs from the
 *   quote, it lands on the nearest occurrence of the quote; the plan's `anchoring` lists every such coding.
 * - `cases` + `case_text` -> cases with ranges (a range covering the whole text links the source whole);
 *   `attribute` rows of `attr_type` `case` -> typed case attributes, of `attr_type` `file` (`id` = the source's
 *   id) -> document attributes of the source. `attribute_type.valuetype` `numeric` -> number (when the value
 *   reads as one), else text; an empty value (QualCoder keeps '' for unset ones) is no value.
 * - Not imported (counted in `skipped`): attributes of media sources, `annotation`, `journal`, `code_image`,
 *   `code_av`.
 */
export const qualcoderImporter = databaseImporter(
  {
    format: 'qualcoder',
    what: 'a QualCoder project',
    extensions: ['.qda'],
    description: 'QualCoder project database (data.qda, schema v8): text sources, nested code categories, codes, codings, cases, case and file attributes',
  },
  planQualCoder,
);

function planQualCoder(db: ForeignDb, filePath: string, options: ImportOptions): ImportPlan {
  requireSchema(db, filePath, 'a QualCoder project', {
    source: ['id', 'name', 'fulltext'],
    code_name: ['cid', 'name', 'catid'],
    code_cat: ['catid', 'name', 'supercatid'],
    code_text: ['cid', 'fid', 'pos0', 'pos1'],
  });
  const plan = emptyPlan('qualcoder', filePath);
  const tables = db.tables();
  const count = (table: string) => (tables.has(table) ? Number(db.all<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table}`)[0]?.n ?? 0) : 0);
  if (tables.has('project')) {
    const version = db.all<{ databaseversion: string | null }>('SELECT databaseversion FROM project LIMIT 1')[0]?.databaseversion ?? null;
    if (version !== null && version !== 'v8')
      warn(plan, `The project's schema is ${version}; this importer was written for QualCoder's v8 and read what it recognises`);
  }
  const origin = `QualCoder: ${path.basename(path.dirname(filePath))}/${path.basename(filePath)}`;
  const sources = planSources(db, plan, origin);
  const parentOf = planCategories(db, plan);
  const codeNames = planCodes(db, plan, parentOf);
  const missing = 'codings_of_missing_codes_or_sources';
  planCodings(db, new PlannedCodings(plan, options, sources, codeNames, { code: missing, source: missing }));

  // -- attribute types (valuetype by name; QualCoder's attribute_type.name is its primary key)
  const types = new Map<string, string>();
  if (tables.has('attribute_type')) {
    for (const t of db.all<{ name: string; valuetype: string | null }>('SELECT name, valuetype FROM attribute_type'))
      types.set(t.name, (t.valuetype ?? '').toLowerCase());
  }
  if (tables.has('cases')) planCases(db, plan, sources, types);
  if (tables.has('attribute')) planFileAttributes(db, plan, sources, types);

  skip(plan, 'annotations', count('annotation'));
  skip(plan, 'journals', count('journal'));
  skip(plan, 'image_codings', count('code_image'));
  skip(plan, 'av_codings', count('code_av'));
  return plan;
}

/**
 * Plans the `source` rows with a `fulltext` as text sources (names made unique, `mediapath` in the origin) and
 * returns them by `id`; media sources (no text) are counted, with a warning.
 */
function planSources(db: ForeignDb, plan: ImportPlan, origin: string): Map<number, PlannedSource> {
  const plannedSources = new Map<number, PlannedSource>();
  const names = new Set<string>();
  for (const s of db.all<{ id: number; name: string; fulltext: string | null; mediapath: string | null; memo: string | null; owner: string | null }>(
    `SELECT id, name, fulltext, ${col(db, 'source', 'mediapath')}, ${col(db, 'source', 'memo')}, ${col(db, 'source', 'owner')} FROM source ORDER BY id`,
  )) {
    if (s.fulltext === null) {
      skip(plan, 'media_sources');
      continue;
    }
    const planned: PlannedSource = {
      ref: `fid:${s.id}`,
      name: uniqueName(names, s.name, s.id, MAX_SOURCE_NAME, `Source ${s.id}`),
      text: s.fulltext,
      memo: memoOf(s.memo),
      origin: s.mediapath ? `${origin} (${s.mediapath})` : origin,
      folder: null,
      owner: s.owner,
    };
    plannedSources.set(s.id, planned);
    plan.sources.push(planned);
  }
  if ((plan.skipped.media_sources ?? 0) > 0)
    warn(plan, `${plan.skipped.media_sources} audio, video or image source(s) were not imported (their files are outside the database)`);
  return plannedSources;
}

/** Plans the `code_name` rows as codes in their category (`catid`, as planned in `parentOf`); returns each code's planned name by `cid`. */
function planCodes(db: ForeignDb, plan: ImportPlan, parentOf: Map<number, number | null>): Map<number, string> {
  const codeNames = new Map<number, string>();
  for (const c of db.all<{ cid: number; name: string; memo: string | null; catid: number | null; owner: string | null; color: string | null }>(
    `SELECT cid, name, ${col(db, 'code_name', 'memo')}, catid, ${col(db, 'code_name', 'owner')}, ${col(db, 'code_name', 'color')} FROM code_name ORDER BY cid`,
  )) {
    const name = fitName(c.name, MAX_CODE_NAME, `Code ${c.cid}`);
    codeNames.set(c.cid, name);
    const category = c.catid !== null && parentOf.has(c.catid) ? `catid:${c.catid}` : null;
    if (c.catid !== null && category === null) skip(plan, 'codes_with_missing_category');
    plan.codes.push({ ref: `cid:${c.cid}`, name, color: normalizeColor(c.color), memo: memoOf(c.memo), category, owner: c.owner });
  }
  return codeNames;
}

/** Plans the `code_text` rows as codings, re-anchored by their `seltext`; `important = 1` becomes importance 1. */
function planCodings(db: ForeignDb, codings: PlannedCodings): void {
  const rows = db.all<{
    cid: number;
    fid: number;
    seltext: string | null;
    pos0: number;
    pos1: number;
    owner: string | null;
    memo: string | null;
    important: number | null;
  }>(
    `SELECT cid, fid, ${col(db, 'code_text', 'seltext')}, pos0, pos1, ${col(db, 'code_text', 'owner')}, ${col(db, 'code_text', 'memo')}, ${col(db, 'code_text', 'important')} FROM code_text ORDER BY fid, pos0, pos1, cid`,
  );
  for (const g of rows) {
    const start = Math.round(Number(g.pos0));
    codings.add({ ...g, start, end: Math.round(Number(g.pos1)), memo: memoOf(g.memo), importance: g.important ? 1 : 0 });
  }
  codings.finish();
}

/** Plans the `attribute` rows of `attr_type` `file` as document attributes of their (text) source; other kinds are counted. */
function planFileAttributes(db: ForeignDb, plan: ImportPlan, sources: Map<number, PlannedSource>, types: Map<string, string>): void {
  for (const a of db.all<{ name: string; value: string | null; id: number }>(
    "SELECT name, value, id FROM attribute WHERE attr_type = 'file' ORDER BY id, name",
  )) {
    const source = sources.get(a.id);
    if (!source) {
      skip(plan, db.all('SELECT 1 FROM source WHERE id = ?', [a.id]).length > 0 ? 'file_attributes_of_media_sources' : 'file_attributes_of_missing_sources');
      continue;
    }
    const attribute = typedAttribute(fitName(a.name, MAX_ATTRIBUTE_NAME, 'Attribute'), a.value, types.get(a.name) ?? '');
    if (attribute) (source.attributes ??= []).push(attribute);
  }
  skip(
    plan,
    'attributes_of_other_kinds',
    Number(db.all<{ n: number }>("SELECT COUNT(*) AS n FROM attribute WHERE attr_type IS NOT 'file' AND attr_type IS NOT 'case'")[0]?.n ?? 0),
  );
}

/**
 * Plans the `code_cat` rows as categories nested through `supercatid` (a missing parent puts a category at the
 * root, counted; a cycle is broken at the first category met again, with a warning) and returns each category's
 * parent by `catid` (null at the root), as planned.
 */
function planCategories(db: ForeignDb, plan: ImportPlan): Map<number, number | null> {
  const cats = db.all<{ catid: number; name: string; memo: string | null; owner: string | null; supercatid: number | null }>(
    `SELECT catid, name, ${col(db, 'code_cat', 'memo')}, ${col(db, 'code_cat', 'owner')}, supercatid FROM code_cat ORDER BY catid`,
  );
  const parentOf = new Map(cats.map((c) => [c.catid, c.supercatid]));
  for (const c of cats) {
    let parent = c.supercatid !== null && parentOf.has(c.supercatid) ? c.supercatid : null;
    if (c.supercatid !== null && parent === null) skip(plan, 'categories_with_missing_parent');
    // break a cycle: walk up; meeting this category again means its parent link closes a loop
    const seen = new Set<number>([c.catid]);
    for (let p = parent; p !== null; p = parentOf.get(p) ?? null) {
      if (seen.has(p)) {
        warn(plan, `The categories around "${c.name}" nest in a cycle; "${c.name}" was put at the root`);
        parent = null;
        parentOf.set(c.catid, null);
        break;
      }
      seen.add(p);
    }
    plan.categories.push({
      ref: `catid:${c.catid}`,
      name: fitName(c.name, MAX_CODE_NAME, `Category ${c.catid}`),
      parent: parent === null ? null : `catid:${parent}`,
      memo: memoOf(c.memo),
      owner: c.owner,
    });
  }
  return parentOf;
}

/**
 * Plans the `cases` rows as cases, `case_text` rows as their links to whole sources or ranges, and the
 * `attribute` rows of `attr_type` `case` as typed case attributes.
 */
function planCases(db: ForeignDb, plan: ImportPlan, sources: Map<number, PlannedSource>, types: Map<string, string>): void {
  const tables = db.tables();
  const cases = new PlannedCases(plan);
  for (const c of db.all<{ caseid: number; name: string; memo: string | null; owner: string | null }>(
    `SELECT caseid, name, memo, owner FROM cases ORDER BY caseid`,
  )) {
    cases.add(c.caseid, c.name, memoOf(c.memo), c.owner);
  }
  const byId = cases.byId;
  if (tables.has('case_text')) {
    for (const l of db.all<{ caseid: number; fid: number; pos0: number; pos1: number }>(
      'SELECT caseid, fid, pos0, pos1 FROM case_text ORDER BY caseid, fid, pos0',
    )) {
      const c = byId.get(l.caseid);
      const source = sources.get(l.fid);
      if (!c || !source) {
        skip(plan, 'case_links_to_missing_rows');
        continue;
      }
      linkCase(plan, c, source, l.pos0, l.pos1);
    }
  }
  if (tables.has('attribute')) {
    for (const a of db.all<{ name: string; value: string | null; id: number }>(
      "SELECT name, value, id FROM attribute WHERE attr_type = 'case' ORDER BY id, name",
    )) {
      const c = byId.get(a.id);
      if (!c) {
        skip(plan, 'case_attributes_of_missing_cases');
        continue;
      }
      const attribute = typedAttribute(a.name, a.value, types.get(a.name) ?? '');
      if (attribute) c.attributes.push(attribute);
    }
  }
}
