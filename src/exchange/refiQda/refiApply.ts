/**
 * Writes a REFI-QDA import plan (refiImport.ts) through the domain services, in the caller's one transaction
 * (import_data's `run`): all of it, or, when anything fails, nothing (the error rolls the transaction back).
 *
 * The merge rules are those of the other formats (../importers/applyPlan.ts), with GUIDs first:
 * - an item whose GUID the project already knows (stored from an earlier import, or derived from the project's
 *   own GUID: a Marginalia export imported back) is that item;
 * - else categories, codes and cases of the same name (case-insensitive) are used as they are (an existing
 *   uncategorised code is put into the planned category); a source of the same name is used when its text is
 *   exactly the planned one (media: when of the same type); any other source name clash fails the import,
 *   listing every clash;
 * - two different items of the file with the same name are kept apart: the later one gets its parent's name
 *   (or a number) in brackets, and the report says so;
 * - an identical coding (same code, source and range) is kept once; an AV coding overlapping another of the same
 *   code on the same source is left out (Marginalia's rule 5) and counted.
 * - a source's `VariableValue`s become its document attributes (setSourceAttributes: one event per source; a value
 *   that does not fit its type is written as text), on a created or a reused source alike;
 * - names are fitted to Marginalia's rules (a code or category name cut to 100 code points, a source or case name to
 *   255, ...); every name that changed is listed in the report's `renamed`, with a warning for each cut one;
 * - text sources whose text file is missing were left out by the reader (refiImport.ts) and are listed in the
 *   report's `missing_sources`; the re-anchoring of quoted selections is reported in `anchoring`, named as imported.
 * What is created keeps the file's coders as owners and the file's creation times (sources, segments, AV
 * segments, case ranges); the session is always the importing one. The file's GUIDs are stored for what the
 * import created, and for what it reused when that had no stored GUID yet, so a later export names them as the
 * file did. Errors: IMPORT_FAILED (details.cause_code holds the domain's code).
 */
import { isToolError, ToolError } from '../../core/errors';
import { addSegmentToCase, addSourceToCase, createCase, MAX_ATTRIBUTE_NAME, MAX_CASE_NAME, setCaseAttribute, coerceAttributeValue } from '../../domain/cases';
import { createCategory, createCode, moveCodeToCategory } from '../../domain/codebook';
import { CodeColourPicker } from '../../domain/codeColours';
import { applyCode } from '../../domain/coding';
import { applyAvCode } from '../../domain/av';
import type { DomainContext } from '../../domain/events';
import { deriveGuid } from '../../domain/exchangeIds';
import type { ExchangeGuidKind, ProjectRepository } from '../../domain/ports';
import { MAX_CODE_NAME, MAX_SOURCE_NAME, nameKey } from '../../domain/rules';
import { setSourceAttributes } from '../../domain/sourceAttributes';
import { addSource } from '../../domain/sources';
import type { ImportCounts, ImportReport } from '../importers/applyPlan';
import { fitName, MAX_WARNINGS, type PlannedAttribute, type PlanRef } from '../importers/plan';
import { codePointLength, sliceCp } from '../../core/text';
import { anchoringCounts, emptyAnchoringReport, recordAnchoring, type AnchoringCounts, type AnchoringReport } from '../reanchor';
import type { OffsetConvention } from './offsets';
import type { RefiFileCounts, RefiImportPlan, RefiMissingSource } from './refiImport';

type Ctx = DomainContext<ProjectRepository>;

/** What {@link applyRefiPlan} did: the common import report, plus what only REFI-QDA carries. */
export interface RefiImportReport extends ImportReport {
  /** the tool that wrote the file (its `origin`) */
  producer: string | null;
  /** how the file counted text positions (they were converted to code points) */
  offset_convention: OffsetConvention;
  /** what the file holds, as it counts it */
  file_counts: RefiFileCounts;
  av_segments: { created: number; reused: number };
  /**
   * names the import changed, from the file's name to the name given: to keep two items of the file apart, or to
   * fit Marginalia's rules (a code or category name over {@link MAX_CODE_NAME} code points, a source or case name
   * over 255, an attribute name over 100, control characters); each cut name also has a warning naming it
   */
  renamed: { kind: RenamedKind; from: string; to: string }[];
  /** where embedded media files were extracted, or null */
  media_dir: string | null;
  /** text sources not imported because their text is missing, with the codings (selections, code names) that could not be placed */
  missing_sources: RefiMissingSource[];
  /**
   * codings whose selection carried a quote (ATLAS.ti's selection `name`, a `Description` that is the coded
   * text) that disagreed with the offsets: moved to the quote (`reanchored`), kept at the offsets (quote not
   * found), or left out (`unplaceable`: outside the text, quote not found); each with the source's and code's
   * names as imported, positions in code points (src/exchange/reanchor.ts)
   */
  anchoring: AnchoringReport;
  /** how many codings each list of `anchoring` holds */
  anchoring_counts: AnchoringCounts;
}

/** What kind of item {@link RefiImportReport.renamed} names. */
export type RenamedKind = 'category' | 'code' | 'source' | 'case' | 'attribute' | 'coder';

const zero = (): ImportCounts => ({ categories: 0, codes: 0, folders: 0, sources: 0, segments: 0, cases: 0 });

/** `ctx` acting as coder `owner` at time `at` (the file's), or `ctx` itself for what the file does not say. */
function stamped(ctx: Ctx, owner: string | null | undefined, at: string | null | undefined): Ctx {
  const user = owner ? fitName(owner, 100, ctx.actor.user) : ctx.actor.user;
  const now = at ?? ctx.now;
  if (user === ctx.actor.user && now === ctx.now) return ctx;
  return { ...ctx, actor: { ...ctx.actor, user }, now };
}

/** Finds existing items by GUID: stored GUIDs, then those derived from the project's GUID. */
class GuidIndex {
  /** kind -> guid -> local id, from exchange_guids (kept up to date by {@link keep}) */
  private readonly stored = new Map<string, Map<string, string>>();
  /** kind -> local ids that have a stored GUID */
  private readonly hasStored = new Map<string, Set<string>>();
  /** kind -> derived guid -> id, of the items that existed when the kind was first looked up */
  private readonly derived = new Map<string, Map<string, number>>();
  constructor(
    private readonly ctx: Ctx,
    private readonly projectGuid: string,
  ) {
    for (const g of ctx.repo.listExchangeGuids()) this.remember(g.kind, g.local_id, g.guid);
  }

  private remember(kind: string, localId: string, guid: string): void {
    let m = this.stored.get(kind);
    if (!m) this.stored.set(kind, (m = new Map()));
    if (!m.has(guid)) m.set(guid, localId);
    let ids = this.hasStored.get(kind);
    if (!ids) this.hasStored.set(kind, (ids = new Set()));
    ids.add(localId);
  }

  /**
   * The id of the existing item of `kind` named by `guid`, or undefined. `items.has` says whether an item exists;
   * `items.ids` lists the existing ones (called once per kind, for the derived GUIDs).
   */
  find(kind: ExchangeGuidKind, guid: string | null, items: { has: (id: number) => boolean; ids: () => number[] }): number | undefined {
    if (!guid) return undefined;
    const stored = this.stored.get(kind)?.get(guid);
    if (stored !== undefined && items.has(Number(stored))) return Number(stored);
    let d = this.derived.get(kind);
    if (!d) {
      d = new Map(items.ids().map((id) => [deriveGuid(this.projectGuid, kind, id), id]));
      this.derived.set(kind, d);
    }
    const id = d.get(guid);
    return id !== undefined && items.has(id) ? id : undefined;
  }

  /**
   * Stores `guid` for `(kind, localId)`: always for what the import created (`created`), else only when the item
   * has no stored GUID yet; never when it equals the item's derived GUID (that one needs no storing).
   */
  keep(kind: ExchangeGuidKind, localId: string | number, guid: string | null, created: boolean): void {
    if (!guid) return;
    const key = String(localId);
    if (!created && this.hasStored.get(kind)?.has(key)) return;
    if (deriveGuid(this.projectGuid, kind, key) === guid) return;
    this.ctx.repo.setExchangeGuid(kind, key, guid);
    this.remember(kind, key, guid);
  }
}

/** Gives items of one kind distinct names within the plan (case-insensitive): `name (hint)`, else `name (2)`. */
class NameKeeper {
  private readonly used = new Set<string>();
  constructor(private readonly max: number) {}
  take(name: string, hint: string | null): string {
    const candidates = [name, ...(hint ? [`${name} (${hint})`] : [])];
    for (const c of candidates) {
      const fitted = fitName(c, this.max, c);
      if (!this.used.has(nameKey(fitted))) {
        this.used.add(nameKey(fitted));
        return fitted;
      }
    }
    for (let i = 2; ; i++) {
      const fitted = fitName(`${name} (${i})`, this.max, name);
      if (!this.used.has(nameKey(fitted))) {
        this.used.add(nameKey(fitted));
        return fitted;
      }
    }
  }
}

/**
 * Writes `plan` into the project (see the module comment for the rules) and reports what it created and reused.
 * Runs inside the caller's transaction. Errors: IMPORT_FAILED.
 */
export function applyRefiPlan(ctx: Ctx, plan: RefiImportPlan): RefiImportReport {
  const report: RefiImportReport = {
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
    producer: plan.refi.producer,
    offset_convention: plan.refi.offset_convention,
    file_counts: plan.refi.file_counts,
    av_segments: { created: 0, reused: 0 },
    renamed: [],
    media_dir: plan.refi.media_dir,
    missing_sources: plan.refi.missing_sources,
    anchoring: emptyAnchoringReport(),
    anchoring_counts: { reanchored: 0, kept_offsets: 0, unplaceable: 0 },
  };
  const skipped = (reason: string, n = 1) => {
    if (n > 0) report.skipped[reason] = (report.skipped[reason] ?? 0) + n;
  };
  /** Renames already reported, by kind and file name (a name met twice, e.g. a coder, is reported once). */
  const reportedRenames = new Set<string>();
  /**
   * Records that the item of `kind` the file calls `from` is called `to` in the project (nothing when equal up to
   * surrounding white space), with a warning naming it when the file's name was longer than `max` code points.
   */
  const renamed = (kind: RenamedKind, from: string, to: string, max: number) => {
    if (from.trim() === to) return;
    const key = `${kind}\u0000${from}\u0000${to}`;
    if (reportedRenames.has(key)) return;
    reportedRenames.add(key);
    report.renamed.push({ kind, from, to });
    const n = codePointLength(from.trim());
    if (n > max) {
      const say = `The ${kind} name '${sliceCp(from.trim(), 0, 60)}...' has ${n} characters, more than the ${max} a ${kind} name may have: it was imported as '${to}' (see renamed)`;
      if (report.warnings.length < MAX_WARNINGS) report.warnings.push(say);
      else skipped('more_warnings');
    }
  };
  const guids = new GuidIndex(ctx, ctx.repo.projectGuid());
  let item = 'the project';
  try {
    // -- users: keep the file's GUID of each coder name
    for (const u of plan.refi.users) {
      const name = fitName(u.name, 100, u.name);
      renamed('coder', u.name, name, 100);
      guids.keep('user', name, u.guid, false);
    }

    // -- sources: decide reuse or creation first, so a clash fails before anything is written
    item = 'sources';
    type AnySource = { ref: PlanRef; name: string; guid: string | null; type: string; text: string | null };
    const all: AnySource[] = [...plan.sources.map((s) => ({ ...s })), ...plan.refi.media_sources.map((s) => ({ ...s, text: null }))];
    const sourceNames = new NameKeeper(MAX_SOURCE_NAME);
    const sourceIds = new Map<PlanRef, number>();
    const finalName = new Map<PlanRef, string>();
    const clashes: string[] = [];
    const existingSources = { has: (id: number) => ctx.repo.getSource(id) !== undefined, ids: () => ctx.repo.listSources().map((s) => s.source_id) };
    for (const s of all) {
      const byGuid = guids.find('source', s.guid, existingSources);
      const wanted = fitName(s.name, MAX_SOURCE_NAME, 'Unnamed source');
      const match = byGuid !== undefined ? ctx.repo.getSource(byGuid) : undefined;
      const same = (id: number, type: string) => (s.text === null ? ctx.repo.getSource(id)?.type === type : ctx.repo.getSourceText(id) === s.text);
      if (match && same(match.source_id, s.type)) {
        sourceIds.set(s.ref, match.source_id);
        sourceNames.take(match.name, null);
        continue;
      }
      const name = sourceNames.take(wanted, null);
      renamed('source', s.name, name, MAX_SOURCE_NAME);
      finalName.set(s.ref, name);
      const existing = ctx.repo.findSourceByName(name);
      if (!existing) continue;
      if (same(existing.source_id, s.type)) sourceIds.set(s.ref, existing.source_id);
      else clashes.push(`"${name}" (source_id ${existing.source_id}, different ${s.text === null ? 'type' : 'text'})`);
    }
    if (clashes.length > 0) {
      throw new ToolError(
        'IMPORT_FAILED',
        `${clashes.length} source name(s) of the file already exist in the project with other content: ${clashes.slice(0, 20).join(', ')}${clashes.length > 20 ? ', ...' : ''}. ` +
          'Rename or remove those sources, or import into another project; nothing was imported.',
        { clashes },
      );
    }

    // -- categories, parents first
    const categoryByRef = new Map(plan.categories.map((c) => [c.ref, c]));
    const categoryIds = new Map<PlanRef, number>();
    const categoryNames = new NameKeeper(MAX_CODE_NAME);
    const existingCategories = { has: (id: number) => ctx.repo.getCategory(id) !== undefined, ids: () => ctx.repo.listCategories().map((c) => c.category_id) };
    const resolving = new Set<PlanRef>();
    const resolveCategory = (ref: PlanRef): number => {
      const known = categoryIds.get(ref);
      if (known !== undefined) return known;
      const c = categoryByRef.get(ref);
      if (!c) throw new ToolError('IMPORT_FAILED', `The file refers to a category ${ref} it does not hold`);
      if (resolving.has(ref)) throw new ToolError('IMPORT_FAILED', `The codes of the file nest in a cycle (at "${c.name}")`);
      resolving.add(ref);
      const parentId = c.parent === null ? null : resolveCategory(c.parent);
      item = `category "${c.name}"`;
      const parentName = c.parent === null ? null : (categoryByRef.get(c.parent)?.name ?? null);
      const byGuid = guids.find('category', c.guid, existingCategories);
      let id: number;
      if (byGuid !== undefined) {
        id = byGuid;
        categoryNames.take(ctx.repo.getCategory(id)?.name ?? c.name, null);
        report.reused.categories++;
      } else {
        const wanted = fitName(c.name, MAX_CODE_NAME, 'Unnamed category');
        const name = categoryNames.take(wanted, parentName);
        renamed('category', c.name, name, MAX_CODE_NAME);
        const existing = ctx.repo.findCategoryByKey(nameKey(name));
        if (existing) {
          id = existing.category_id;
          report.reused.categories++;
        } else {
          id = createCategory(ctx, { name, parent_id: parentId, memo: c.memo }).category_id;
          report.created.categories++;
          guids.keep('category', id, c.guid, true);
        }
      }
      guids.keep('category', id, c.guid, false);
      resolving.delete(ref);
      categoryIds.set(ref, id);
      return id;
    };
    for (const c of plan.categories) resolveCategory(c.ref);

    // -- codes
    const codeIds = new Map<PlanRef, number>();
    const codeNames = new NameKeeper(MAX_CODE_NAME);
    const existingCodes = { has: (id: number) => ctx.repo.getCode(id) !== undefined, ids: () => ctx.repo.listCodes().map((c) => c.code_id) };
    // codes without a colour in the file take palette colours no code uses yet (then the least used)
    const colours = CodeColourPicker.of(ctx.repo);
    for (const c of plan.codes) {
      item = `code "${c.name}"`;
      const categoryId = c.category === null ? null : resolveCategory(c.category);
      const byGuid = guids.find('code', c.guid, existingCodes);
      let id: number;
      let existing = byGuid !== undefined ? ctx.repo.getCode(byGuid) : undefined;
      if (existing) codeNames.take(existing.name, null);
      else {
        // the code of a codable Code with children takes the name its category got (kept apart from another
        // category's name, say), so that the two stay one element of the file when exported
        const twinCategory = c.twin_of !== undefined && categoryId !== null ? ctx.repo.getCategory(categoryId) : undefined;
        const wanted = twinCategory ? twinCategory.name : fitName(c.name, MAX_CODE_NAME, 'Unnamed code');
        const hint = c.category === null ? null : (categoryByRef.get(c.category)?.name ?? null);
        const name = codeNames.take(wanted, hint && nameKey(hint) !== nameKey(wanted) ? hint : null);
        renamed('code', c.name, name, MAX_CODE_NAME);
        existing = ctx.repo.findCodeByKey(nameKey(name)) as typeof existing;
        if (!existing) {
          const color = c.color ?? colours.next();
          if (c.color) colours.take(c.color);
          id = createCode(ctx, { name, color, memo: c.memo, category_id: categoryId }).code_id;
          report.created.codes++;
          guids.keep('code', id, c.guid, true);
          codeIds.set(c.ref, id);
          continue;
        }
      }
      id = existing.code_id;
      report.reused.codes++;
      if (categoryId !== null && existing.category_id === null) {
        moveCodeToCategory(ctx, id, categoryId);
        report.codes_moved++;
      } else if (categoryId !== existing.category_id && categoryId !== null) {
        report.warnings.push(`The existing code "${existing.name}" stays in its category (the file puts it in another one)`);
      }
      guids.keep('code', id, c.guid, false);
      codeIds.set(c.ref, id);
    }

    // -- sources, each with its document attributes
    /** Writes the document attributes of source `sourceId` in one step (one event), typed as planned (text when the value does not fit its type). */
    const sourceAttributes = (sourceId: number, name: string, attributes: readonly PlannedAttribute[] | undefined) => {
      if (!attributes || attributes.length === 0) return;
      item = `the document attributes of source "${name}"`;
      const values = attributes.map((a) => {
        const attributeName = fitName(a.name, MAX_ATTRIBUTE_NAME, 'attribute');
        renamed('attribute', a.name, attributeName, MAX_ATTRIBUTE_NAME);
        try {
          return { attribute_name: attributeName, type: a.type, value: coerceAttributeValue(a.value, a.type) };
        } catch {
          return { attribute_name: attributeName, type: 'text' as const, value: String(a.value) };
        }
      });
      report.source_attributes_set += setSourceAttributes(ctx, sourceId, values).changed;
    };
    for (const s of plan.sources) {
      item = `source "${s.name}"`;
      const reused = sourceIds.get(s.ref);
      if (reused !== undefined) {
        report.reused.sources++;
        guids.keep('source', reused, s.guid, false);
        guids.keep('note', `source:${reused}`, s.note_guid, false);
        sourceAttributes(reused, s.name, s.attributes);
        continue;
      }
      const src = addSource(stamped(ctx, s.owner, s.created_at), {
        name: finalName.get(s.ref) as string,
        type: s.type,
        text: s.text,
        memo: s.memo,
        origin: s.origin,
        file_path: s.file_path,
        mime: s.mime,
      });
      sourceIds.set(s.ref, src.source_id);
      report.created.sources++;
      guids.keep('source', src.source_id, s.guid, true);
      guids.keep('note', `source:${src.source_id}`, s.note_guid, true);
      sourceAttributes(src.source_id, s.name, s.attributes);
    }
    for (const s of plan.refi.media_sources) {
      item = `source "${s.name}"`;
      const reused = sourceIds.get(s.ref);
      if (reused !== undefined) {
        report.reused.sources++;
        guids.keep('source', reused, s.guid, false);
        guids.keep('note', `source:${reused}`, s.note_guid, false);
        sourceAttributes(reused, s.name, s.attributes);
        continue;
      }
      const src = addSource(stamped(ctx, s.owner, s.created_at), {
        name: finalName.get(s.ref) as string,
        type: s.type,
        text: null,
        memo: s.memo,
        origin: s.origin,
        file_path: s.file_path,
        mime: s.mime,
        size_bytes: s.size_bytes,
      });
      sourceIds.set(s.ref, src.source_id);
      report.created.sources++;
      guids.keep('source', src.source_id, s.guid, true);
      guids.keep('note', `source:${src.source_id}`, s.note_guid, true);
      sourceAttributes(src.source_id, s.name, s.attributes);
    }

    // -- text segments
    const textCache = new Map<number, string | null>();
    // the names of sources and codes as imported, for messages; looked up once per item (a lookup is a query)
    const sourceNameCache = new Map<PlanRef, string>();
    const sourceNameOf = (ref: PlanRef): string => {
      let name = sourceNameCache.get(ref);
      if (name === undefined) {
        const id = sourceIds.get(ref);
        name = (id !== undefined ? ctx.repo.getSource(id)?.name : undefined) ?? finalName.get(ref) ?? planSourceNames.get(ref) ?? ref;
        sourceNameCache.set(ref, name);
      }
      return name;
    };
    const codeNameCache = new Map<PlanRef, string>();
    const codeNameOf = (ref: PlanRef | null, fallback: string): string => {
      if (ref === null) return fallback;
      let name = codeNameCache.get(ref);
      if (name === undefined) {
        const id = codeIds.get(ref);
        name = (id !== undefined ? ctx.repo.getCode(id)?.name : undefined) ?? fallback;
        codeNameCache.set(ref, name);
      }
      return name;
    };
    const planSourceNames = new Map(all.map((x) => [x.ref, x.name]));
    const planCodeNames = new Map(plan.codes.map((c) => [c.ref, c.name]));
    for (const g of plan.segments) {
      const codeId = codeIds.get(g.code);
      const sourceId = sourceIds.get(g.source);
      item = `the coding [${g.start_pos}, ${g.end_pos}) of code '${codeNameOf(g.code, planCodeNames.get(g.code) ?? g.code)}' in source '${sourceNameOf(g.source)}'`;
      if (codeId === undefined || sourceId === undefined) {
        skipped('codings_of_unknown_codes_or_sources');
        continue;
      }
      const r = applyCode(stamped(ctx, g.owner, g.created_at), { code_id: codeId, source_id: sourceId, start_pos: g.start_pos, end_pos: g.end_pos, memo: g.memo, importance: g.importance }, textCache);
      if (r.created) {
        report.created.segments++;
        guids.keep('coding', r.segment.segment_id, g.guid, true);
        guids.keep('selection', r.segment.segment_id, g.selection_guid, true);
        guids.keep('note', `segment:${r.segment.segment_id}`, g.note_guid, true);
      } else report.reused.segments++;
    }

    // -- AV segments
    for (const g of plan.refi.av_segments) {
      const codeId = codeIds.get(g.code);
      const sourceId = sourceIds.get(g.source);
      item = `the AV coding [${g.start_ms}, ${g.end_ms}) ms of code '${codeNameOf(g.code, planCodeNames.get(g.code) ?? g.code)}' in source '${sourceNameOf(g.source)}'`;
      if (codeId === undefined || sourceId === undefined) {
        skipped('codings_of_unknown_codes_or_sources');
        continue;
      }
      const source = ctx.repo.getSource(sourceId);
      if (source?.type !== 'audio' && source?.type !== 'video') {
        skipped('av_codings_of_non_media_sources');
        continue;
      }
      const overlapping = ctx.repo.avSegmentsOverlapping(codeId, sourceId, g.start_ms, g.end_ms);
      if (overlapping.some((o) => o.start_ms === g.start_ms && o.end_ms === g.end_ms)) {
        report.av_segments.reused++;
        continue;
      }
      if (overlapping.length > 0) {
        skipped('av_codings_overlapping_the_same_code');
        continue;
      }
      const seg = applyAvCode(stamped(ctx, g.owner, g.created_at), { code_id: codeId, source_id: sourceId, start_ms: g.start_ms, end_ms: g.end_ms, transcript: g.transcript, memo: g.memo });
      report.av_segments.created++;
      guids.keep('av_coding', seg.segment_id, g.guid, true);
      guids.keep('av_selection', seg.segment_id, g.selection_guid, true);
      guids.keep('note', `av_segment:${seg.segment_id}`, g.note_guid, true);
    }

    // -- cases
    const existingCases = { has: (id: number) => ctx.repo.getCase(id) !== undefined, ids: () => ctx.repo.listCases().map((c) => c.case_id) };
    for (const k of plan.refi.cases) {
      item = `case "${k.name}"`;
      let caseId = guids.find('case', k.guid, existingCases);
      if (caseId !== undefined) report.reused.cases++;
      else {
        const name = fitName(k.name, MAX_CASE_NAME, 'Unnamed case');
        renamed('case', k.name, name, MAX_CASE_NAME);
        const existing = ctx.repo.findCaseByKey(nameKey(name));
        if (existing) {
          caseId = existing.case_id;
          report.reused.cases++;
        } else {
          caseId = createCase(ctx, { name, memo: k.memo }).case_id;
          report.created.cases++;
          guids.keep('case', caseId, k.guid, true);
        }
      }
      guids.keep('case', caseId, k.guid, false);
      for (const ref of k.sources) {
        const sourceId = sourceIds.get(ref);
        if (sourceId === undefined) {
          skipped('case_refs_to_unknown_sources');
          continue;
        }
        if (addSourceToCase(ctx, caseId, sourceId).added) report.case_sources_linked++;
      }
      for (const r of k.ranges) {
        const sourceId = sourceIds.get(r.source);
        if (sourceId === undefined) {
          skipped('case_refs_to_unknown_sources');
          continue;
        }
        const added = addSegmentToCase(stamped(ctx, r.owner, r.created_at), { case_id: caseId, source_id: sourceId, start_pos: r.start_pos, end_pos: r.end_pos });
        if (added.created) {
          report.case_ranges_added++;
          guids.keep('case_selection', added.segment.case_segment_id, r.selection_guid, true);
        }
      }
      for (const a of k.attributes) {
        item = `attribute "${a.name}" of case "${k.name}"`;
        const attributeName = fitName(a.name, MAX_ATTRIBUTE_NAME, 'attribute');
        renamed('attribute', a.name, attributeName, MAX_ATTRIBUTE_NAME);
        let value = a.value;
        let type = a.type;
        try {
          value = coerceAttributeValue(a.value, a.type);
        } catch {
          type = 'text';
          value = String(a.value);
        }
        if (setCaseAttribute(ctx, { case_id: caseId, attribute_name: attributeName, value, type }).changed) report.attributes_set++;
      }
    }
    for (const v of plan.refi.variables) guids.keep('variable', fitName(v.name, MAX_ATTRIBUTE_NAME, 'attribute'), v.guid, false);

    // -- what re-anchoring by quote did, named as imported
    for (const a of plan.refi.anchoring) {
      recordAnchoring(
        report.anchoring,
        { status: a.status, start_pos: a.start_pos, end_pos: a.end_pos },
        { source: sourceNameOf(a.source), code: codeNameOf(a.code, a.code_name) },
        { start_pos: a.stored_start_pos, end_pos: a.stored_end_pos },
        a.quote,
      );
    }
    report.anchoring_counts = anchoringCounts(report.anchoring);
  } catch (e) {
    if (isToolError(e) && e.code === 'IMPORT_FAILED') throw e;
    if (isToolError(e)) throw new ToolError('IMPORT_FAILED', `Import failed at ${item}: ${e.message} (${e.code}); nothing was imported`, { cause_code: e.code, item });
    throw e;
  }
  return report;
}
