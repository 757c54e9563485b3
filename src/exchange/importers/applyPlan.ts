import { isToolError, ToolError } from '../../core/errors';
import { toWellFormed } from '../../core/text';
import { addSegmentToCase, addSourceToCase, createCase, MAX_ATTRIBUTE_NAME, MAX_CASE_NAME, setCaseAttributes } from '../../domain/cases';
import { createCategory, createCode, moveCodeToCategory } from '../../domain/codebook';
import { CodeColourPicker } from '../../domain/codeColours';
import { applyCode } from '../../domain/coding';
import type { DomainContext } from '../../domain/events';
import type { ProjectRepository } from '../../domain/ports';
import { cleanFolderName, cleanName, MAX_CODE_NAME, MAX_SOURCE_NAME, nameKey } from '../../domain/rules';
import { setSourceAttributes } from '../../domain/sourceAttributes';
import { addSource, createFolder } from '../../domain/sources';
import { anchoringCounts, type AnchoringCounts, type AnchoringReport } from '../reanchor';
import { fitName, MAX_WARNINGS, type ImportPlan, type ImportProgress, type PlanRef } from './plan';

type Ctx = DomainContext<ProjectRepository>;

/** Counts per kind of item. */
export interface ImportCounts {
  categories: number;
  codes: number;
  folders: number;
  sources: number;
  segments: number;
  cases: number;
}

/** What {@link applyImportPlan} did. */
export interface ImportReport {
  format: string;
  file: string;
  /** items the import created */
  created: ImportCounts;
  /**
   * items that were already in the project and were used as they are: codes, categories, cases and folders
   * of the same name, sources of the same name and identical text, identical codings
   */
  reused: ImportCounts;
  /** existing uncategorised codes the import put into a category */
  codes_moved: number;
  /** whole sources linked to cases (new links) */
  case_sources_linked: number;
  /** source ranges added to cases (new ranges) */
  case_ranges_added: number;
  /** case attributes written (new or changed values) */
  attributes_set: number;
  /** document (source) attributes written (new or changed values) */
  source_attributes_set: number;
  /** what the file held but the import left out, by reason */
  skipped: Record<string, number>;
  warnings: string[];
  /**
   * formats that store each coding's quote (RQDA, QualCoder, REFI-QDA): the codings whose quote disagreed with
   * their offsets, `{reanchored, kept_offsets, unplaceable}` each a list of `{source, code, start_pos, end_pos,
   * stored_start_pos, stored_end_pos, quote}` (code points; src/exchange/reanchor.ts)
   */
  anchoring?: AnchoringReport;
  /** how many codings each list of `anchoring` holds */
  anchoring_counts?: AnchoringCounts;
}

const zero = (): ImportCounts => ({ categories: 0, codes: 0, folders: 0, sources: 0, segments: 0, cases: 0 });

/**
 * Writes an import plan (plan.ts) through the domain services, inside the caller's transaction (a tool's
 * `run`), and returns what it created and reused. Merge rules, by name as the spec's rules compare names:
 * - categories and codes: an existing one with the same name (case-insensitive) is used as it is; an existing
 *   uncategorised code is put into the planned category; a code in another category stays there (warning).
 *   New codes without a colour take the next palette colour.
 * - folders: an existing folder of the same name within the same parent is used.
 * - sources: an existing source of the same name is used only when its text is exactly the planned text
 *   (so re-importing a file is harmless); any other clash fails the whole import, listing every clash.
 * - segments: an identical coding (same code, source and range) is kept, not duplicated.
 * - cases: an existing case of the same name (case-insensitive) gets the planned sources, ranges and
 *   attributes; attributes of the same name are overwritten, others kept. A case's attributes are written in
 *   one step (`setCaseAttributes`: one case.attributes_set event per case, listing the values that changed).
 * - document attributes of a source (created or reused) are written in one step after it (`setSourceAttributes`:
 *   one source.attributes_set event per source); attributes of the same name are overwritten, others kept.
 * Owners named by the foreign file are recorded as the owners (coders) of what is created; the session is
 * always the importing one.
 *
 * Every domain error is turned into IMPORT_FAILED naming the item, and thrown: the caller's transaction then
 * rolls back, so nothing of the plan stays. Errors: IMPORT_FAILED (details.cause_code holds the domain code).
 */
export function applyImportPlan(ctx: Ctx, plan: ImportPlan, onProgress?: (p: ImportProgress) => void): ImportReport {
  const report: ImportReport = {
    format: plan.format,
    file: plan.file,
    created: zero(),
    reused: zero(),
    codes_moved: 0,
    case_sources_linked: 0,
    case_ranges_added: 0,
    attributes_set: 0,
    source_attributes_set: 0,
    skipped: { ...plan.skipped },
    warnings: [...plan.warnings],
    ...(plan.anchoring ? { anchoring: plan.anchoring, anchoring_counts: anchoringCounts(plan.anchoring) } : {}),
  };
  const total = plan.categories.length + plan.codes.length + plan.folders.length + plan.sources.length + plan.segments.length + plan.cases.length;
  let done = 0;
  const tick = () => {
    done++;
    if (onProgress && (done % 1000 === 0 || done === total)) onProgress({ phase: 'apply', done, total, unit: 'items' });
  };
  let item = '';
  try {
    // -- sources first checked for clashes, so a clash fails before anything else is reported
    item = 'sources';
    const sourceIds = new Map<PlanRef, number>();
    const reuseSource = new Map<PlanRef, number>();
    const clashes: string[] = [];
    const planned = new Map<string, string>();
    for (const s of plan.sources) {
      const name = cleanName(s.name, MAX_SOURCE_NAME, 'source', 'IMPORT_FAILED');
      const text = toWellFormed(s.text);
      const inPlan = planned.get(name);
      if (inPlan !== undefined) {
        if (inPlan !== text) clashes.push(`"${name}" (twice in the file, with different texts)`);
        continue;
      }
      planned.set(name, text);
      const existing = ctx.repo.findSourceByName(name);
      if (!existing) continue;
      if (ctx.repo.getSourceText(existing.source_id) === text) reuseSource.set(s.ref, existing.source_id);
      else clashes.push(`"${name}" (source_id ${existing.source_id}, different text)`);
    }
    if (clashes.length > 0) {
      throw new ToolError(
        'IMPORT_FAILED',
        `${clashes.length} source name(s) of the file already exist in the project with other content: ${clashes.slice(0, 20).join(', ')}${clashes.length > 20 ? ', ...' : ''}. ` +
          'Rename or remove those sources, or import into another project; nothing was imported.',
        { clashes },
      );
    }

    // -- categories (parents first, whatever the plan's order)
    const byRef = new Map(plan.categories.map((c) => [c.ref, c]));
    const categoryIds = new Map<PlanRef, number>();
    const resolving = new Set<PlanRef>();
    const resolveCategory = (ref: PlanRef): number => {
      const known = categoryIds.get(ref);
      if (known !== undefined) return known;
      const c = byRef.get(ref);
      if (!c) throw new ToolError('IMPORT_FAILED', `The file refers to a category ${ref} it does not hold`);
      if (resolving.has(ref)) throw new ToolError('IMPORT_FAILED', `The categories of the file nest in a cycle (at "${c.name}")`);
      resolving.add(ref);
      const parentId = c.parent === null ? null : resolveCategory(c.parent);
      item = `category "${c.name}"`;
      const name = fitName(c.name, MAX_CODE_NAME, 'Unnamed category');
      const existing = ctx.repo.findCategoryByKey(nameKey(name));
      let id: number;
      if (existing) {
        id = existing.category_id;
        report.reused.categories++;
      } else {
        id = createCategory(withOwner(ctx, c.owner), { name, parent_id: parentId, memo: c.memo }).category_id;
        report.created.categories++;
      }
      resolving.delete(ref);
      categoryIds.set(ref, id);
      tick();
      return id;
    };
    for (const c of plan.categories) resolveCategory(c.ref);

    // -- codes
    const codeIds = new Map<PlanRef, number>();
    // codes without a colour in the file take palette colours no code uses yet (then the least used)
    const colours = CodeColourPicker.of(ctx.repo);
    for (const c of plan.codes) {
      item = `code "${c.name}"`;
      const name = fitName(c.name, MAX_CODE_NAME, 'Unnamed code');
      const categoryId = c.category === null ? null : (categoryIds.get(c.category) ?? resolveCategory(c.category));
      const existing = ctx.repo.findCodeByKey(nameKey(name));
      if (existing) {
        codeIds.set(c.ref, existing.code_id);
        report.reused.codes++;
        if (categoryId !== null && existing.category_id === null) {
          moveCodeToCategory(ctx, existing.code_id, categoryId);
          report.codes_moved++;
        } else if (categoryId !== null && existing.category_id !== categoryId && report.warnings.length < MAX_WARNINGS) {
          report.warnings.push(`The existing code "${existing.name}" stays in its category (the file puts it in another one)`);
        }
      } else {
        const color = c.color ?? colours.next();
        if (c.color) colours.take(c.color);
        codeIds.set(c.ref, createCode(withOwner(ctx, c.owner), { name, color, memo: c.memo, category_id: categoryId }).code_id);
        report.created.codes++;
      }
      tick();
    }

    // -- folders
    const folderIds = new Map<PlanRef, number>();
    for (const f of plan.folders) {
      item = `folder "${f.name}"`;
      const parentId = f.parent === null ? null : folderIds.get(f.parent);
      if (parentId === undefined) throw new ToolError('IMPORT_FAILED', `The folder "${f.name}" comes before its parent ${f.parent}`);
      const name = cleanFolderName(fitName(f.name, 255, 'Unnamed folder').replace(/\//g, '-'), 'IMPORT_FAILED');
      const existing = ctx.repo.findFolder(parentId, name);
      if (existing) {
        folderIds.set(f.ref, existing.folder_id);
        report.reused.folders++;
      } else {
        folderIds.set(f.ref, createFolder(ctx, name, parentId).folder_id);
        report.created.folders++;
      }
      tick();
    }

    // -- sources
    for (const s of plan.sources) {
      item = `source "${s.name}"`;
      const reused = reuseSource.get(s.ref);
      if (reused !== undefined) {
        sourceIds.set(s.ref, reused);
        report.reused.sources++;
      } else {
        const name = cleanName(s.name, MAX_SOURCE_NAME, 'source', 'IMPORT_FAILED');
        const again = ctx.repo.findSourceByName(name); // the same name twice in the plan, with the same text
        if (again) {
          sourceIds.set(s.ref, again.source_id);
          report.reused.sources++;
        } else {
          const folderId = s.folder === null ? null : (folderIds.get(s.folder) ?? null);
          const src = addSource(withOwner(ctx, s.owner), { name, type: 'text', text: s.text, memo: s.memo, origin: s.origin, folder_id: folderId });
          sourceIds.set(s.ref, src.source_id);
          report.created.sources++;
        }
      }
      if (s.attributes && s.attributes.length > 0) {
        item = `the document attributes of source "${s.name}"`;
        const attributes = s.attributes.map((a) => ({ attribute_name: fitName(a.name, MAX_ATTRIBUTE_NAME, 'attribute'), value: a.value, type: a.type }));
        report.source_attributes_set += setSourceAttributes(ctx, sourceIds.get(s.ref) as number, attributes).changed;
      }
      tick();
    }

    // -- segments
    const textCache = new Map<number, string | null>();
    for (const g of plan.segments) {
      const codeId = codeIds.get(g.code);
      const sourceId = sourceIds.get(g.source);
      item = `coding [${g.start_pos}, ${g.end_pos}) of ${g.source}`;
      if (codeId === undefined || sourceId === undefined) throw new ToolError('IMPORT_FAILED', `A coding refers to ${codeId === undefined ? `code ${g.code}` : `source ${g.source}`}, which the file does not hold`);
      const r = applyCode(withOwner(ctx, g.owner), { code_id: codeId, source_id: sourceId, start_pos: g.start_pos, end_pos: g.end_pos, memo: g.memo, importance: g.importance }, textCache);
      if (r.created) report.created.segments++;
      else report.reused.segments++;
      tick();
    }

    // -- cases
    for (const c of plan.cases) {
      item = `case "${c.name}"`;
      const name = fitName(c.name, MAX_CASE_NAME, 'Unnamed case');
      const existing = ctx.repo.findCaseByKey(nameKey(name));
      let caseId: number;
      if (existing) {
        caseId = existing.case_id;
        report.reused.cases++;
      } else {
        caseId = createCase(withOwner(ctx, c.owner), { name, memo: c.memo }).case_id;
        report.created.cases++;
      }
      for (const ref of c.sources) {
        const sourceId = sourceIds.get(ref);
        if (sourceId === undefined) throw new ToolError('IMPORT_FAILED', `The case "${name}" refers to source ${ref}, which the file does not hold`);
        if (addSourceToCase(ctx, caseId, sourceId).added) report.case_sources_linked++;
      }
      for (const r of c.ranges) {
        const sourceId = sourceIds.get(r.source);
        if (sourceId === undefined) throw new ToolError('IMPORT_FAILED', `The case "${name}" refers to source ${r.source}, which the file does not hold`);
        if (addSegmentToCase(ctx, { case_id: caseId, source_id: sourceId, start_pos: r.start_pos, end_pos: r.end_pos }).created) report.case_ranges_added++;
      }
      if (c.attributes.length > 0) {
        item = `the attributes of case "${name}"`;
        const attributes = c.attributes.map((a) => ({ attribute_name: fitName(a.name, MAX_ATTRIBUTE_NAME, 'attribute'), value: a.value, type: a.type }));
        report.attributes_set += setCaseAttributes(ctx, caseId, attributes).changed;
      }
      tick();
    }
  } catch (e) {
    if (isToolError(e) && e.code === 'IMPORT_FAILED') throw e;
    if (isToolError(e)) throw new ToolError('IMPORT_FAILED', `Import failed at ${item}: ${e.message} (${e.code}); nothing was imported`, { cause_code: e.code, item });
    throw e;
  }
  return report;
}

/** `ctx` acting as coder `owner` (the foreign file's coder), or `ctx` itself when there is none. */
function withOwner(ctx: Ctx, owner: string | null | undefined): Ctx {
  if (!owner) return ctx;
  const user = fitName(owner, 100, ctx.actor.user);
  return user === ctx.actor.user ? ctx : { ...ctx, actor: { ...ctx.actor, user } };
}
