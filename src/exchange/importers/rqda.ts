import * as path from 'node:path';
import { codePointLength, sliceCp } from '../../core/text';
import { MAX_CASE_NAME } from '../../domain/cases';
import { MAX_CODE_NAME, MAX_SOURCE_NAME } from '../../domain/rules';
import { requireSchema, withForeignDb, type ForeignDb } from '../sqlite';
import { checkImportFile, emptyPlan, fitName, memoOf, normalizeColor, skip, warn, type Importer, type ImportPlan, type PlannedCase } from './plan';

/**
 * RQDA project import (`.rqda`, written by the RQDA R package; schema 0.2.2 as summarised in
 * shared/notes/corpus.md, official column descriptions in r-forge/rqda `pkg/man/RQDATables.rd`).
 *
 * - `source` -> text sources (`file` holds the text); `filecat` + `treefile` -> root folders (a source in
 *   several file categories goes into the first by id; the others are counted as skipped memberships).
 * - `freecode` -> codes (colour when valid); `codecat` -> categories (RQDA does not nest them); `treecode`
 *   -> the code's category (RQDA allows several: the first by id is kept, the others are counted).
 * - `coding` -> segments. `selfirst`/`selend` are REAL, 0-based character offsets into `source.file`;
 *   characters are code points (verified on the corpus project: each `seltext` equals the text there).
 * - `cases` + `caselinkage` -> cases holding source ranges (a range covering the whole text links the source
 *   as a whole); `caseAttr` with `attributes.class` -> typed case attributes (`numeric` -> number).
 * - Soft deletes are honoured: a row with `status = 0` is skipped (and every row that hangs on a deleted row).
 *   A NULL status counts as live.
 * - Not imported (counted in `skipped`): `fileAttr` (Marginalia has no source attributes), `annotation`,
 *   `journal`, `image`/`imageCoding`, and the rows of `coding2`.
 */
export const rqdaImporter: Importer = {
  format: 'rqda',
  extensions: ['.rqda'],
  description: 'RQDA project database (.rqda): sources, codes, code categories, codings, cases and case attributes; soft-deleted rows are skipped',
  plan: async (filePath) => {
    checkImportFile(filePath);
    return withForeignDb(filePath, 'an RQDA project', (db) => planRqda(db, filePath));
  },
};

const LIVE = 'COALESCE(status, 1) <> 0';

interface RqdaSource {
  id: number;
  name: string;
  file: string | null;
  memo: string | null;
  owner: string | null;
}

function planRqda(db: ForeignDb, filePath: string): ImportPlan {
  requireSchema(db, filePath, 'an RQDA project', {
    source: ['name', 'id', 'file', 'status'],
    freecode: ['name', 'id', 'status'],
    coding: ['cid', 'fid', 'selfirst', 'selend', 'status'],
  });
  const plan = emptyPlan('rqda', filePath);
  const tables = db.tables();
  const has = (t: string) => tables.has(t);
  const origin = `RQDA: ${path.basename(filePath)}`;
  const countDeleted = (table: string, reason: string) => {
    if (has(table)) skip(plan, reason, Number(db.all<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table} WHERE NOT (${LIVE})`)[0]?.n ?? 0));
  };

  // -- file categories -> folders
  const folderOf = new Map<number, string>();
  if (has('filecat') && has('treefile')) {
    const cats = db.all<{ catid: number; name: string }>(`SELECT catid, name FROM filecat WHERE ${LIVE} ORDER BY catid`);
    const live = new Set<number>();
    for (const c of cats) {
      live.add(c.catid);
      plan.folders.push({ ref: `filecat:${c.catid}`, name: fitName(c.name, 255, `File category ${c.catid}`).replace(/\//g, '-'), parent: null });
    }
    for (const t of db.all<{ fid: number; catid: number }>(`SELECT fid, catid FROM treefile WHERE ${LIVE} ORDER BY catid, rowid`)) {
      if (!live.has(t.catid)) continue;
      if (folderOf.has(t.fid)) skip(plan, 'extra_file_category_memberships');
      else folderOf.set(t.fid, `filecat:${t.catid}`);
    }
    countDeleted('filecat', 'soft_deleted_file_categories');
  }

  // -- sources
  const texts = new Map<number, string>();
  const sourceNames = new Set<string>();
  for (const s of db.all<RqdaSource>(`SELECT id, name, file, memo, owner FROM source WHERE ${LIVE} ORDER BY id`)) {
    if (texts.has(s.id)) {
      skip(plan, 'duplicate_source_ids');
      continue;
    }
    const text = s.file ?? '';
    texts.set(s.id, text);
    let name = fitName(s.name, MAX_SOURCE_NAME, `Source ${s.id}`);
    if (sourceNames.has(name)) name = fitName(`${name} (${s.id})`, MAX_SOURCE_NAME, `Source ${s.id}`);
    sourceNames.add(name);
    plan.sources.push({ ref: `fid:${s.id}`, name, text, memo: memoOf(s.memo), origin, folder: folderOf.get(s.id) ?? null, owner: s.owner });
  }
  countDeleted('source', 'soft_deleted_sources');

  // -- code categories
  const liveCats = new Set<number>();
  if (has('codecat')) {
    for (const c of db.all<{ catid: number; name: string; memo: string | null; owner: string | null }>(`SELECT catid, name, memo, owner FROM codecat WHERE ${LIVE} ORDER BY catid`)) {
      if (liveCats.has(c.catid)) continue;
      liveCats.add(c.catid);
      plan.categories.push({ ref: `catid:${c.catid}`, name: fitName(c.name, MAX_CODE_NAME, `Category ${c.catid}`), parent: null, memo: memoOf(c.memo), owner: c.owner });
    }
    countDeleted('codecat', 'soft_deleted_categories');
  }
  const categoryOf = new Map<number, string>();
  if (has('treecode')) {
    for (const t of db.all<{ cid: number; catid: number }>(`SELECT cid, catid FROM treecode WHERE ${LIVE} ORDER BY catid, rowid`)) {
      if (!liveCats.has(t.catid)) continue;
      if (categoryOf.has(t.cid)) {
        if (categoryOf.get(t.cid) !== `catid:${t.catid}`) skip(plan, 'extra_code_category_memberships');
      } else categoryOf.set(t.cid, `catid:${t.catid}`);
    }
  }
  if ((plan.skipped.extra_code_category_memberships ?? 0) > 0) {
    warn(plan, `${plan.skipped.extra_code_category_memberships} code(s) sit in more than one RQDA category; Marginalia keeps each in its first category`);
  }

  // -- codes
  const liveCodes = new Set<number>();
  const hasColor = db.columns('freecode').includes('color');
  for (const c of db.all<{ id: number; name: string; memo: string | null; owner: string | null; color?: string | null }>(
    `SELECT id, name, memo, owner${hasColor ? ', color' : ''} FROM freecode WHERE ${LIVE} ORDER BY id`,
  )) {
    if (liveCodes.has(c.id)) continue;
    liveCodes.add(c.id);
    plan.codes.push({ ref: `cid:${c.id}`, name: fitName(c.name, MAX_CODE_NAME, `Code ${c.id}`), color: normalizeColor(c.color), memo: memoOf(c.memo), category: categoryOf.get(c.id) ?? null, owner: c.owner });
  }
  countDeleted('freecode', 'soft_deleted_codes');

  // -- codings
  let mismatched = 0;
  const lengths = new Map([...texts].map(([id, t]) => [id, codePointLength(t)]));
  for (const g of db.all<{ cid: number; fid: number; seltext: string | null; selfirst: number; selend: number; owner: string | null; memo: string | null }>(
    `SELECT cid, fid, seltext, selfirst, selend, owner, memo FROM coding WHERE ${LIVE} ORDER BY fid, selfirst, selend, cid`,
  )) {
    if (!liveCodes.has(g.cid)) {
      skip(plan, 'codings_of_deleted_codes');
      continue;
    }
    const text = texts.get(g.fid);
    if (text === undefined) {
      skip(plan, 'codings_of_deleted_sources');
      continue;
    }
    const start = Math.round(Number(g.selfirst));
    const end = Math.round(Number(g.selend));
    if (!(start >= 0 && end > start && end <= (lengths.get(g.fid) ?? 0))) {
      skip(plan, 'codings_outside_their_source');
      continue;
    }
    if (g.seltext !== null && sliceCp(text, start, end) !== g.seltext) mismatched++;
    plan.segments.push({ code: `cid:${g.cid}`, source: `fid:${g.fid}`, start_pos: start, end_pos: end, memo: memoOf(g.memo), importance: 0, owner: g.owner });
  }
  countDeleted('coding', 'soft_deleted_codings');
  if (mismatched > 0) warn(plan, `${mismatched} coding(s) store a seltext that differs from the source text at their offsets; the offsets were kept`);

  // -- cases, their ranges and attributes
  if (has('cases')) planCases(db, plan, texts);

  // -- what Marginalia does not hold
  const countLive = (table: string, reason: string) => {
    if (has(table)) skip(plan, reason, Number(db.all<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table} WHERE ${LIVE}`)[0]?.n ?? 0));
  };
  countLive('fileAttr', 'file_attributes');
  countLive('annotation', 'annotations');
  countLive('journal', 'journals');
  countLive('imageCoding', 'image_codings');
  countLive('coding2', 'coding2_rows');
  countDeleted('attributes', 'soft_deleted_attribute_definitions');
  countDeleted('fileAttr', 'soft_deleted_file_attributes');
  if ((plan.skipped.file_attributes ?? 0) > 0) warn(plan, `${plan.skipped.file_attributes} file attribute value(s) were not imported: Marginalia keeps attributes on cases only`);
  return plan;
}

function planCases(db: ForeignDb, plan: ImportPlan, texts: Map<number, string>): void {
  const tables = db.tables();
  const byId = new Map<number, PlannedCase>();
  const names = new Set<string>();
  for (const c of db.all<{ id: number; name: string; memo: string | null; owner: string | null }>(`SELECT id, name, memo, owner FROM cases WHERE ${LIVE} ORDER BY id`)) {
    if (byId.has(c.id)) continue;
    const name = fitName(c.name, MAX_CASE_NAME, `Case ${c.id}`);
    if (names.has(name.toLowerCase())) {
      skip(plan, 'duplicate_case_names');
      continue;
    }
    names.add(name.toLowerCase());
    const planned: PlannedCase = { name, memo: memoOf(c.memo), sources: [], ranges: [], attributes: [], owner: c.owner };
    byId.set(c.id, planned);
    plan.cases.push(planned);
  }
  skip(plan, 'soft_deleted_cases', Number(db.all<{ n: number }>(`SELECT COUNT(*) AS n FROM cases WHERE NOT (${LIVE})`)[0]?.n ?? 0));
  if (tables.has('caselinkage')) {
    for (const l of db.all<{ caseid: number; fid: number; selfirst: number; selend: number }>(`SELECT caseid, fid, selfirst, selend FROM caselinkage WHERE ${LIVE} ORDER BY caseid, fid, selfirst`)) {
      const c = byId.get(l.caseid);
      const text = texts.get(l.fid);
      if (!c || text === undefined) {
        skip(plan, 'case_links_to_deleted_rows');
        continue;
      }
      const length = codePointLength(text);
      const start = Math.round(Number(l.selfirst));
      const end = Math.round(Number(l.selend));
      if ((start <= 0 && end >= length) || length === 0) {
        if (!c.sources.includes(`fid:${l.fid}`)) c.sources.push(`fid:${l.fid}`);
      } else if (start >= 0 && end > start && end <= length) {
        c.ranges.push({ source: `fid:${l.fid}`, start_pos: start, end_pos: end });
      } else skip(plan, 'case_ranges_outside_their_source');
    }
  }
  if (tables.has('caseAttr')) {
    const classes = new Map<string, string>();
    if (tables.has('attributes')) {
      for (const a of db.all<{ name: string; class: string | null }>(`SELECT name, class FROM attributes WHERE ${LIVE}`)) classes.set(a.name, (a.class ?? '').toLowerCase());
    }
    for (const v of db.all<{ variable: string; value: string | null; caseID: number }>(`SELECT variable, value, caseID FROM caseAttr WHERE ${LIVE} ORDER BY caseID, rowid`)) {
      const c = byId.get(v.caseID);
      const cls = classes.get(v.variable);
      if (!c || cls === undefined) {
        skip(plan, 'case_attributes_of_deleted_rows');
        continue;
      }
      if (v.value === null || v.value.trim() === '' || v.value === 'NA') continue;
      const n = Number(v.value.trim());
      if (cls === 'numeric' && Number.isFinite(n)) c.attributes.push({ name: v.variable, type: 'number', value: n });
      else c.attributes.push({ name: v.variable, type: 'text', value: v.value });
    }
    skip(plan, 'soft_deleted_case_attributes', Number(db.all<{ n: number }>(`SELECT COUNT(*) AS n FROM caseAttr WHERE NOT (${LIVE})`)[0]?.n ?? 0));
  }
}
