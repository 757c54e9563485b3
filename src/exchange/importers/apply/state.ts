/**
 * The state of one import being written (../applyPlan.ts): the report it fills, the ids given to the plan's
 * refs, the merge rules, and the helpers every step shares (warnings, skips, renames, coders and times, progress).
 */
import { ToolError } from '../../../core/errors';
import { codePointLength, sliceCp } from '../../../core/text';
import type { DomainContext } from '../../../domain/events';
import { coerceAttributeValue, MAX_ATTRIBUTE_NAME } from '../../../domain/cases';
import type { AttributeType, AttributeValue, ExchangeGuidKind, ProjectRepository } from '../../../domain/ports';
import { nameKey } from '../../../domain/rules';
import type { AnchoringCounts, AnchoringReport } from '../../reanchor';
import type { OffsetConvention } from '../../refiQda/offsets';
import type { RefiFileCounts, RefiMissingSource } from '../../refiQda/refiImport';
import { DEFAULT_RULES, fitName, MAX_WARNINGS, type ImportPlan, type ImportProgress, type MergeRules, type PlannedAttribute, type PlanRef } from '../plan';
import { GuidIndex } from './guids';

export type Ctx = DomainContext<ProjectRepository>;

/** Counts per kind of item. */
export interface ImportCounts {
  categories: number;
  codes: number;
  folders: number;
  sources: number;
  segments: number;
  cases: number;
}

/** What kind of item {@link ImportReport.renamed} names. */
export type RenamedKind = 'category' | 'code' | 'source' | 'case' | 'attribute' | 'coder';

/** What {@link applyImportPlan} (../applyPlan.ts) did. */
export interface ImportReport {
  format: string;
  file: string;
  /** items the import created */
  created: ImportCounts;
  /**
   * items that were already in the project and were used as they are: codes, categories, cases and folders
   * of the same name (or GUID), sources of the same name and identical text, identical codings
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
  /** refi_qda: the tool that wrote the file (its `origin`) */
  producer?: string | null;
  /** refi_qda: how the file counted text positions (they were converted to code points) */
  offset_convention?: OffsetConvention;
  /** refi_qda: what the file holds, as it counts it */
  file_counts?: RefiFileCounts;
  /** refi_qda: audio and video codings created and reused (an identical one) */
  av_segments?: { created: number; reused: number };
  /**
   * refi_qda: names the import changed, from the file's name to the name given: to keep two items of the file
   * apart, or to fit Marginalia's rules (a code or category name over 100 code points, a source or case name over
   * 255, an attribute name over 100, control characters); each cut name also has a warning naming it
   */
  renamed?: { kind: RenamedKind; from: string; to: string }[];
  /** refi_qda: where embedded media files were extracted, or null */
  media_dir?: string | null;
  /** refi_qda: text sources not imported because their text is missing, with the codings that could not be placed */
  missing_sources?: RefiMissingSource[];
  /**
   * formats that store each coding's quote (RQDA, QualCoder, REFI-QDA): the codings whose quote disagreed with
   * their offsets, `{reanchored, kept_offsets, unplaceable}` each a list of `{source, code, start_pos, end_pos,
   * stored_start_pos, stored_end_pos, quote}` (code points; src/exchange/reanchor.ts), named as imported
   */
  anchoring?: AnchoringReport;
  /** how many codings each list of `anchoring` holds */
  anchoring_counts?: AnchoringCounts;
}

export const zeroCounts = (): ImportCounts => ({ categories: 0, codes: 0, folders: 0, sources: 0, segments: 0, cases: 0 });

/** Gives items of one kind distinct names within the plan (case-insensitive): `name (hint)`, else `name (2)`. */
export class NameKeeper {
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

/** One import being written: what the steps (codebook.ts, sources.ts, segments.ts, cases.ts) share. */
export class Applying {
  readonly rules: MergeRules;
  readonly guids: GuidIndex;
  /** plan ref -> project id, per kind */
  readonly categoryIds = new Map<PlanRef, number>();
  readonly codeIds = new Map<PlanRef, number>();
  readonly folderIds = new Map<PlanRef, number>();
  readonly sourceIds = new Map<PlanRef, number>();
  /** plan ref -> the name a source to be created gets (decided before anything is written) */
  readonly sourceNames = new Map<PlanRef, string>();
  /** what is being written, for the message of a domain error (built only when one happens) */
  at: () => string = () => 'the project';
  private readonly reportedRenames = new Set<string>();
  private done = 0;
  private readonly total: number;

  constructor(
    readonly ctx: Ctx,
    readonly plan: ImportPlan,
    readonly report: ImportReport,
    private readonly onProgress?: (p: ImportProgress) => void,
  ) {
    this.rules = plan.rules ?? DEFAULT_RULES;
    this.guids = new GuidIndex(ctx);
    this.total =
      plan.categories.length +
      plan.codes.length +
      plan.folders.length +
      plan.sources.length +
      (plan.media_sources?.length ?? 0) +
      plan.segments.length +
      (plan.av_segments?.length ?? 0) +
      plan.cases.length;
  }

  /** Whether two items of the file with the same name stay two (see MergeRules). */
  get keepApart(): boolean {
    return this.rules.same_names === 'keep_apart';
  }

  /** One more item written: reports progress every 1000 items and at the end. */
  tick(): void {
    this.done++;
    if (this.onProgress && (this.done % 1000 === 0 || this.done === this.total))
      this.onProgress({ phase: 'apply', done: this.done, total: this.total, unit: 'items' });
  }

  /** Adds `n` to `skipped[reason]`. */
  skip(reason: string, n = 1): void {
    if (n > 0) this.report.skipped[reason] = (this.report.skipped[reason] ?? 0) + n;
  }

  /** Adds a warning, keeping at most {@link MAX_WARNINGS} (further ones are counted in `skipped.more_warnings`). */
  warn(message: string): void {
    if (this.report.warnings.length < MAX_WARNINGS) this.report.warnings.push(message);
    else this.skip('more_warnings');
  }

  /**
   * Records, when the report lists renames, that the item of `kind` the file calls `from` is called `to` in the
   * project (nothing when equal up to surrounding white space; a rename met twice is reported once), with a
   * warning naming it when the file's name was longer than `max` code points.
   */
  renamed(kind: RenamedKind, from: string, to: string, max: number): void {
    const list = this.report.renamed;
    if (!list || from.trim() === to) return;
    const key = `${kind}\u0000${from}\u0000${to}`;
    if (this.reportedRenames.has(key)) return;
    this.reportedRenames.add(key);
    list.push({ kind, from, to });
    const n = codePointLength(from.trim());
    if (n > max)
      this.warn(
        `The ${kind} name '${sliceCp(from.trim(), 0, 60)}...' has ${n} characters, more than the ${max} a ${kind} name may have: it was imported as '${to}' (see renamed)`,
      );
  }

  /**
   * `existingId` when the project has the item (counted as reused in `count`), else the id of the item `create`
   * makes (counted as created; the file's `guid` stored for it as `kind`).
   */
  existingOrNew(
    count: keyof ImportCounts,
    kind: ExchangeGuidKind,
    guid: string | null | undefined,
    existingId: number | undefined,
    create: () => number,
  ): number {
    if (existingId !== undefined) {
      this.report.reused[count]++;
      return existingId;
    }
    const id = create();
    this.report.created[count]++;
    this.guids.keep(kind, id, guid, true);
    return id;
  }

  /**
   * Planned attributes as the domain's setters take them: names fitted (and reported when changed); under the
   * `as_text` rule a value that does not fit its type becomes text, else it is passed as it is (and a mistyped
   * one fails in the setter).
   */
  attributeValues(attributes: readonly PlannedAttribute[]): { attribute_name: string; type: AttributeType; value: AttributeValue }[] {
    return attributes.map((x) => {
      const attributeName = fitName(x.name, MAX_ATTRIBUTE_NAME, 'attribute');
      this.renamed('attribute', x.name, attributeName, MAX_ATTRIBUTE_NAME);
      if (this.rules.mistyped_values === 'fail') return { attribute_name: attributeName, value: x.value, type: x.type };
      try {
        return { attribute_name: attributeName, type: x.type, value: coerceAttributeValue(x.value, x.type) };
      } catch {
        return { attribute_name: attributeName, type: 'text' as const, value: String(x.value) };
      }
    });
  }

  /**
   * An item refers to one the plan does not hold: fails the import (IMPORT_FAILED, `message`), or, under the
   * `skip` rule, counts it under `reason` and returns (the caller leaves the item out).
   */
  unknownRef(reason: string, message: () => string): void {
    if (this.rules.unknown_refs === 'skip') this.skip(reason);
    else throw new ToolError('IMPORT_FAILED', message());
  }
}

/** `ctx` acting as coder `owner` at time `at` (the file's), or `ctx` itself for what the file does not say. */
export function stamped(ctx: Ctx, owner: string | null | undefined, at?: string | null): Ctx {
  const user = owner ? fitName(owner, 100, ctx.actor.user) : ctx.actor.user;
  const now = at ?? ctx.now;
  if (user === ctx.actor.user && now === ctx.now) return ctx;
  return { ...ctx, actor: { ...ctx.actor, user }, now };
}
