import * as path from 'node:path';
import { MAX_ATTRIBUTE_NAME } from '../../domain/cases';
import { MAX_CODE_NAME, MAX_SOURCE_NAME } from '../../domain/rules';
import { requireSchema, type ForeignDb } from '../sqlite';
import { databaseImporter } from './database';
import type { ImportOptions, ImportPlan, PlannedAttribute, PlannedSource } from './plan';
import { emptyPlan, fitName, memoOf, normalizeColor, PlannedCases, skip, warn } from './plan';
import { linkCase, PlannedCodings, typedAttribute, uniqueName } from './projectDatabase';

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
 *   A negative `selfirst` (RQDA stores some whole-file codings so) is clamped to 0. Each coding is
 *   re-anchored by its `seltext` (src/exchange/reanchor.ts): where the text at its offsets differs from the
 *   quote, it lands on the nearest occurrence of the quote; the plan's `anchoring` lists every such coding.
 * - `cases` + `caselinkage` -> cases holding source ranges (a range covering the whole text links the source
 *   as a whole); `caseAttr` with `attributes.class` -> typed case attributes; `fileAttr` -> document
 *   attributes of the source (`fileID`). `class` `numeric` -> number (when the value is a number), else text.
 * - Only rows RQDA shows are read: `status = 1` in every table (RQDA's own queries select `status = 1`; its
 *   Unmark sets a coding's status to -1, deleting sets 0, CleanProject removes both). The others are
 *   counted in `skipped`: `soft_deleted_<rows>` (0), `unmarked_<rows>` (-1), `<rows>_with_unknown_status`
 *   (NULL or any other value); every row that hangs on one of them is skipped too.
 * - R's missing value: a memo or attribute value that is the literal string `NA` is no memo / no value.
 * - Not imported (counted in `skipped`): `annotation`, `journal`, `image`/`imageCoding`, and the rows of
 *   `coding2`.
 */
export const rqdaImporter = databaseImporter(
  {
    format: 'rqda',
    what: 'an RQDA project',
    extensions: ['.rqda'],
    description: 'RQDA project database (.rqda): sources, codes, code categories, codings, cases, case and file attributes; only rows RQDA shows (status 1)',
  },
  planRqda,
);

/** The rows RQDA shows: its queries select `status = 1` (RQDATables.rd: 1 live, 0 deleted; Unmark writes -1). */
const LIVE = 'status = 1';

/** A memo read from RQDA: R's missing value `NA` (stored as that literal string) is no memo. */
function rMemo(raw: unknown): string | null {
  return raw === 'NA' ? null : memoOf(raw);
}

/**
 * A typed attribute from an RQDA value and its `attributes.class`: `numeric` -> number when the value reads as
 * a finite number, anything else text. Null for a missing value (NULL, blank, R's `NA`).
 */
function rAttribute(name: string, raw: string | null, cls: string): PlannedAttribute | null {
  return raw === 'NA' ? null : typedAttribute(name, raw, cls);
}

/** Adds to `plan.skipped` the rows of `table` RQDA does not show, by status: `soft_deleted_<noun>`, `unmarked_<noun>`, `<noun>_with_unknown_status`. */
function countNotLive(db: ForeignDb, plan: ImportPlan, table: string, noun: string): void {
  for (const r of db.all<{ status: number | null; n: number }>(`SELECT status, COUNT(*) AS n FROM ${table} WHERE status IS NOT 1 GROUP BY status`)) {
    const reason = r.status === 0 ? `soft_deleted_${noun}` : r.status === -1 ? `unmarked_${noun}` : `${noun}_with_unknown_status`;
    skip(plan, reason, Number(r.n));
  }
}

interface RqdaSource {
  id: number;
  name: string;
  file: string | null;
  memo: string | null;
  owner: string | null;
}

function planRqda(db: ForeignDb, filePath: string, options: ImportOptions): ImportPlan {
  requireSchema(db, filePath, 'an RQDA project', {
    source: ['name', 'id', 'file', 'status'],
    freecode: ['name', 'id', 'status'],
    coding: ['cid', 'fid', 'selfirst', 'selend', 'status'],
  });
  const plan = emptyPlan('rqda', filePath);
  const has = (t: string) => db.tables().has(t);
  const folderOf = planFolders(db, plan);
  const sources = planSources(db, plan, `RQDA: ${path.basename(filePath)}`, folderOf);
  const categoryOf = planCategories(db, plan);
  const codeNames = planCodes(db, plan, categoryOf);
  const missing = { code: 'codings_of_deleted_codes', source: 'codings_of_deleted_sources' };
  planCodings(db, plan, new PlannedCodings(plan, options, sources, codeNames, missing));

  // -- attribute definitions (shared by case and file attributes)
  const classes = new Map<string, string>();
  if (has('attributes')) {
    for (const a of db.all<{ name: string; class: string | null }>(`SELECT name, class FROM attributes WHERE ${LIVE}`))
      classes.set(a.name, (a.class ?? '').toLowerCase());
    countNotLive(db, plan, 'attributes', 'attribute_definitions');
  }
  if (has('cases')) planCases(db, plan, sources, classes);
  if (has('fileAttr')) planFileAttributes(db, plan, sources, classes);

  // -- what Marginalia does not hold
  const countLive = (table: string, reason: string) => {
    if (has(table)) skip(plan, reason, Number(db.all<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table} WHERE ${LIVE}`)[0]?.n ?? 0));
  };
  countLive('annotation', 'annotations');
  countLive('journal', 'journals');
  countLive('imageCoding', 'image_codings');
  countLive('coding2', 'coding2_rows');
  return plan;
}

/** Plans the live `source` rows as text sources (names made unique, in their folder) and returns them by `id`; a repeated id is counted. */
function planSources(db: ForeignDb, plan: ImportPlan, origin: string, folderOf: Map<number, string>): Map<number, PlannedSource> {
  const plannedSources = new Map<number, PlannedSource>();
  const sourceNames = new Set<string>();
  for (const s of db.all<RqdaSource>(`SELECT id, name, file, memo, owner FROM source WHERE ${LIVE} ORDER BY id`)) {
    if (plannedSources.has(s.id)) {
      skip(plan, 'duplicate_source_ids');
      continue;
    }
    const name = uniqueName(sourceNames, s.name, s.id, MAX_SOURCE_NAME, `Source ${s.id}`);
    const planned: PlannedSource = {
      ref: `fid:${s.id}`,
      name,
      text: s.file ?? '',
      memo: rMemo(s.memo),
      origin,
      folder: folderOf.get(s.id) ?? null,
      owner: s.owner,
    };
    plannedSources.set(s.id, planned);
    plan.sources.push(planned);
  }
  countNotLive(db, plan, 'source', 'sources');
  return plannedSources;
}

/** Plans the live `freecode` rows as codes (colour when valid) in their category (`categoryOf`); returns each code's planned name by `id`. */
function planCodes(db: ForeignDb, plan: ImportPlan, categoryOf: Map<number, string>): Map<number, string> {
  const codeNames = new Map<number, string>();
  const hasColor = db.columns('freecode').includes('color');
  for (const c of db.all<{ id: number; name: string; memo: string | null; owner: string | null; color?: string | null }>(
    `SELECT id, name, memo, owner${hasColor ? ', color' : ''} FROM freecode WHERE ${LIVE} ORDER BY id`,
  )) {
    if (codeNames.has(c.id)) continue;
    const name = fitName(c.name, MAX_CODE_NAME, `Code ${c.id}`);
    codeNames.set(c.id, name);
    plan.codes.push({ ref: `cid:${c.id}`, name, color: normalizeColor(c.color), memo: rMemo(c.memo), category: categoryOf.get(c.id) ?? null, owner: c.owner });
  }
  countNotLive(db, plan, 'freecode', 'codes');
  return codeNames;
}

/** Plans the live `coding` rows as codings, re-anchored by their `seltext`; a negative `selfirst` is clamped to 0. */
function planCodings(db: ForeignDb, plan: ImportPlan, codings: PlannedCodings): void {
  for (const g of db.all<{ cid: number; fid: number; seltext: string | null; selfirst: number; selend: number; owner: string | null; memo: string | null }>(
    `SELECT cid, fid, seltext, selfirst, selend, owner, memo FROM coding WHERE ${LIVE} ORDER BY fid, selfirst, selend, cid`,
  )) {
    // a negative selfirst marks a coding from the start of the file (RQDA stores some whole-file codings so)
    const start = Math.max(0, Math.round(Number(g.selfirst)));
    codings.add({ cid: g.cid, fid: g.fid, seltext: g.seltext, start, end: Math.round(Number(g.selend)), memo: rMemo(g.memo), importance: 0, owner: g.owner });
  }
  countNotLive(db, plan, 'coding', 'codings');
  codings.finish();
}

/** Plans the live `fileAttr` rows as document attributes of their source, typed by the attribute's class. */
function planFileAttributes(db: ForeignDb, plan: ImportPlan, sources: Map<number, PlannedSource>, classes: Map<string, string>): void {
  for (const v of db.all<{ variable: string; value: string | null; fileID: number }>(
    `SELECT variable, value, fileID FROM fileAttr WHERE ${LIVE} ORDER BY fileID, rowid`,
  )) {
    const source = sources.get(v.fileID);
    const cls = classes.get(v.variable);
    if (!source || cls === undefined) {
      skip(plan, 'file_attributes_of_deleted_rows');
      continue;
    }
    const attribute = rAttribute(fitName(v.variable, MAX_ATTRIBUTE_NAME, 'Attribute'), v.value, cls);
    if (attribute) (source.attributes ??= []).push(attribute);
  }
  countNotLive(db, plan, 'fileAttr', 'file_attributes');
}

/** Plans RQDA's live file categories (`filecat`) as root folders; returns each source's folder ref by `fid` (its first category by id; further memberships are counted). */
function planFolders(db: ForeignDb, plan: ImportPlan): Map<number, string> {
  const tables = db.tables();
  const folderOf = new Map<number, string>();
  if (tables.has('filecat') && tables.has('treefile')) {
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
    countNotLive(db, plan, 'filecat', 'file_categories');
    countNotLive(db, plan, 'treefile', 'file_category_memberships');
  }
  return folderOf;
}

/** Plans RQDA's live code categories (`codecat`, not nested); returns each code's category ref by `cid` (its first by id; further memberships are counted, with a warning). */
function planCategories(db: ForeignDb, plan: ImportPlan): Map<number, string> {
  const tables = db.tables();
  const liveCats = new Set<number>();
  if (tables.has('codecat')) {
    for (const c of db.all<{ catid: number; name: string; memo: string | null; owner: string | null }>(
      `SELECT catid, name, memo, owner FROM codecat WHERE ${LIVE} ORDER BY catid`,
    )) {
      if (liveCats.has(c.catid)) continue;
      liveCats.add(c.catid);
      plan.categories.push({
        ref: `catid:${c.catid}`,
        name: fitName(c.name, MAX_CODE_NAME, `Category ${c.catid}`),
        parent: null,
        memo: rMemo(c.memo),
        owner: c.owner,
      });
    }
    countNotLive(db, plan, 'codecat', 'categories');
  }
  const categoryOf = new Map<number, string>();
  if (tables.has('treecode')) {
    for (const t of db.all<{ cid: number; catid: number }>(`SELECT cid, catid FROM treecode WHERE ${LIVE} ORDER BY catid, rowid`)) {
      if (!liveCats.has(t.catid)) continue;
      if (categoryOf.has(t.cid)) {
        if (categoryOf.get(t.cid) !== `catid:${t.catid}`) skip(plan, 'extra_code_category_memberships');
      } else categoryOf.set(t.cid, `catid:${t.catid}`);
    }
    countNotLive(db, plan, 'treecode', 'code_category_memberships');
  }
  if ((plan.skipped.extra_code_category_memberships ?? 0) > 0) {
    warn(plan, `${plan.skipped.extra_code_category_memberships} code(s) sit in more than one RQDA category; Marginalia keeps each in its first category`);
  }
  return categoryOf;
}

/** Plans the live `cases` rows as cases, `caselinkage` rows as their links to whole sources or ranges, and `caseAttr` rows as typed case attributes. */
function planCases(db: ForeignDb, plan: ImportPlan, sources: Map<number, PlannedSource>, classes: Map<string, string>): void {
  const tables = db.tables();
  const cases = new PlannedCases(plan);
  const byId = cases.byId;
  for (const c of db.all<{ id: number; name: string; memo: string | null; owner: string | null }>(
    `SELECT id, name, memo, owner FROM cases WHERE ${LIVE} ORDER BY id`,
  )) {
    if (!byId.has(c.id)) cases.add(c.id, c.name, rMemo(c.memo), c.owner);
  }
  countNotLive(db, plan, 'cases', 'cases');
  if (tables.has('caselinkage')) {
    for (const l of db.all<{ caseid: number; fid: number; selfirst: number; selend: number }>(
      `SELECT caseid, fid, selfirst, selend FROM caselinkage WHERE ${LIVE} ORDER BY caseid, fid, selfirst`,
    )) {
      const c = byId.get(l.caseid);
      const source = sources.get(l.fid);
      if (!c || !source) {
        skip(plan, 'case_links_to_deleted_rows');
        continue;
      }
      linkCase(plan, c, source, l.selfirst, l.selend);
    }
    countNotLive(db, plan, 'caselinkage', 'case_links');
  }
  if (tables.has('caseAttr')) {
    for (const v of db.all<{ variable: string; value: string | null; caseID: number }>(
      `SELECT variable, value, caseID FROM caseAttr WHERE ${LIVE} ORDER BY caseID, rowid`,
    )) {
      const c = byId.get(v.caseID);
      const cls = classes.get(v.variable);
      if (!c || cls === undefined) {
        skip(plan, 'case_attributes_of_deleted_rows');
        continue;
      }
      const attribute = rAttribute(v.variable, v.value, cls);
      if (attribute) c.attributes.push(attribute);
    }
    countNotLive(db, plan, 'caseAttr', 'case_attributes');
  }
}
