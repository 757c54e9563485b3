import * as path from 'node:path';
import { codePointLength } from '../../core/text';
import { MAX_ATTRIBUTE_NAME } from '../../domain/cases';
import { MAX_CODE_NAME, MAX_SOURCE_NAME } from '../../domain/rules';
import { anchoringWarnings, ImportAnchoring } from '../reanchor';
import { requireSchema, type ForeignDb } from '../sqlite';
import { databaseImporter } from './database';
import {
  emptyPlan,
  fitName,
  memoOf,
  normalizeColor,
  PlannedCases,
  skip,
  warn,
  type ImportOptions,
  type ImportPlan,
  type PlannedAttribute,
  type PlannedSource,
} from './plan';

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

  // -- sources
  const texts = new Map<number, string>();
  const plannedSources = new Map<number, PlannedSource>();
  const names = new Set<string>();
  for (const s of db.all<{ id: number; name: string; fulltext: string | null; mediapath: string | null; memo: string | null; owner: string | null }>(
    `SELECT id, name, fulltext, ${col(db, 'source', 'mediapath')}, ${col(db, 'source', 'memo')}, ${col(db, 'source', 'owner')} FROM source ORDER BY id`,
  )) {
    if (s.fulltext === null) {
      skip(plan, 'media_sources');
      continue;
    }
    texts.set(s.id, s.fulltext);
    let name = fitName(s.name, MAX_SOURCE_NAME, `Source ${s.id}`);
    if (names.has(name)) name = fitName(`${name} (${s.id})`, MAX_SOURCE_NAME, `Source ${s.id}`);
    names.add(name);
    const planned: PlannedSource = {
      ref: `fid:${s.id}`,
      name,
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

  // -- categories, nested through supercatid
  const parentOf = planCategories(db, plan);

  // -- codes
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

  // -- codings, re-anchored by their seltext
  const lengths = new Map([...texts].map(([id, t]) => [id, codePointLength(t)]));
  const anchoring = new ImportAnchoring(options.reanchor !== false);
  for (const g of db.all<{
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
  )) {
    const source = plannedSources.get(g.fid);
    const code = codeNames.get(g.cid);
    if (code === undefined || source === undefined) {
      skip(plan, 'codings_of_missing_codes_or_sources');
      continue;
    }
    const at = anchoring.place(source.ref, source.text, { source: source.name, code }, g.seltext, Math.round(Number(g.pos0)), Math.round(Number(g.pos1)));
    if (at.status === 'unplaceable') {
      skip(plan, 'codings_outside_their_source');
      continue;
    }
    plan.segments.push({
      code: `cid:${g.cid}`,
      source: source.ref,
      start_pos: at.start_pos,
      end_pos: at.end_pos,
      memo: memoOf(g.memo),
      importance: g.important ? 1 : 0,
      owner: g.owner,
    });
  }
  plan.anchoring = anchoring.report;
  for (const w of anchoringWarnings(anchoring.report)) warn(plan, w);

  // -- attribute types (valuetype by name; QualCoder's attribute_type.name is its primary key)
  const types = new Map<string, string>();
  if (tables.has('attribute_type')) {
    for (const t of db.all<{ name: string; valuetype: string | null }>('SELECT name, valuetype FROM attribute_type'))
      types.set(t.name, (t.valuetype ?? '').toLowerCase());
  }

  // -- cases
  if (tables.has('cases')) planCases(db, plan, texts, lengths, types);

  // -- file attributes -> document attributes
  if (tables.has('attribute')) {
    for (const a of db.all<{ name: string; value: string | null; id: number }>(
      "SELECT name, value, id FROM attribute WHERE attr_type = 'file' ORDER BY id, name",
    )) {
      const source = plannedSources.get(a.id);
      if (!source) {
        skip(
          plan,
          texts.has(a.id) || db.all('SELECT 1 FROM source WHERE id = ?', [a.id]).length > 0
            ? 'file_attributes_of_media_sources'
            : 'file_attributes_of_missing_sources',
        );
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

  skip(plan, 'annotations', count('annotation'));
  skip(plan, 'journals', count('journal'));
  skip(plan, 'image_codings', count('code_image'));
  skip(plan, 'av_codings', count('code_av'));
  return plan;
}

/**
 * A typed attribute from a QualCoder value and its `attribute_type.valuetype`: `numeric` -> number when the
 * value reads as a finite number, anything else text. Null for no value (NULL or blank: QualCoder stores ''
 * for an attribute not filled in).
 */
function typedAttribute(name: string, raw: string | null, valuetype: string): PlannedAttribute | null {
  if (raw === null || raw.trim() === '') return null;
  const n = Number(raw.trim());
  if (valuetype === 'numeric' && Number.isFinite(n)) return { name, type: 'number', value: n };
  return { name, type: 'text', value: raw };
}

/** `column` when `table` has it, else `NULL AS column` (older schemas lack some columns). */
function col(db: ForeignDb, table: string, column: string): string {
  return db.columns(table).includes(column) ? column : `NULL AS ${column}`;
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
function planCases(db: ForeignDb, plan: ImportPlan, texts: Map<number, string>, lengths: Map<number, number>, types: Map<string, string>): void {
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
      const length = lengths.get(l.fid);
      if (!c || length === undefined || !texts.has(l.fid)) {
        skip(plan, 'case_links_to_missing_rows');
        continue;
      }
      const start = Math.round(Number(l.pos0));
      const end = Math.round(Number(l.pos1));
      if ((start <= 0 && end >= length) || length === 0) {
        if (!c.sources.includes(`fid:${l.fid}`)) c.sources.push(`fid:${l.fid}`);
      } else if (start >= 0 && end > start && end <= length) c.ranges.push({ source: `fid:${l.fid}`, start_pos: start, end_pos: end });
      else skip(plan, 'case_ranges_outside_their_source');
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
