/**
 * What the importers of QDA project databases (QualCoder's `data.qda`, RQDA's `.rqda`) share once: unique
 * source names, codings re-anchored by their quotes, case links to whole sources or ranges, typed attributes
 * and optional columns. Each importer reads its own tables and hands the rows to these helpers, so the two
 * formats plan codings, case links and attributes by the same rules.
 */
import { codePointLength } from '../../core/text';
import { anchoringWarnings, ImportAnchoring } from '../reanchor';
import type { ForeignDb } from '../sqlite';
import { fitName, skip, warn } from './plan';
import type { ImportOptions, ImportPlan, PlannedAttribute, PlannedCase, PlannedSegment, PlannedSource } from './plan';

/**
 * A source name fitted to `max` code points (`fallback` when blank, see {@link fitName}) and unique among
 * `taken`: a name already taken gets ` (<id>)` appended. The name returned is added to `taken`.
 */
export function uniqueName(taken: Set<string>, raw: unknown, id: number, max: number, fallback: string): string {
  let name = fitName(raw, max, fallback);
  if (taken.has(name)) name = fitName(`${name} (${id})`, max, fallback);
  taken.add(name);
  return name;
}

/** A coding row of a project database: code `cid` on `[start, end)` (code points, as stored) of source `fid`. */
export interface ForeignCoding {
  cid: number;
  fid: number;
  /** the quote stored with the coding, which re-anchors it */
  seltext: string | null;
  start: number;
  end: number;
  memo: string | null;
  importance: number;
  owner: string | null;
}

/**
 * The codings of a project database, each re-anchored by its stored quote (src/exchange/reanchor.ts) as it
 * is planned; {@link finish} stores the anchoring report and its warnings in the plan.
 */
export class PlannedCodings {
  private readonly anchoring: ImportAnchoring;

  /**
   * @param sources the planned sources by the database's source id
   * @param codeNames the planned codes' names by the database's code id (planned as `cid:<id>`)
   * @param missing the `skipped` reasons of a coding whose code, or else source, was not planned
   */
  constructor(
    private readonly plan: ImportPlan,
    options: ImportOptions,
    private readonly sources: ReadonlyMap<number, PlannedSource>,
    private readonly codeNames: ReadonlyMap<number, string>,
    private readonly missing: { code: string; source: string },
  ) {
    this.anchoring = new ImportAnchoring(options.reanchor !== false);
  }

  /**
   * Plans one coding at the place its quote leads to. Counted in `skipped` instead: a coding of a code or
   * source not planned (under `missing`), or one that cannot be placed in its source's text
   * (`codings_outside_their_source`).
   */
  add(g: ForeignCoding): void {
    const code = this.codeNames.get(g.cid);
    if (code === undefined) return skip(this.plan, this.missing.code);
    const source = this.sources.get(g.fid);
    if (source === undefined) return skip(this.plan, this.missing.source);
    const at = this.anchoring.place(source.ref, source.text, { source: source.name, code }, g.seltext, g.start, g.end);
    if (at.status === 'unplaceable') return skip(this.plan, 'codings_outside_their_source');
    const segment: PlannedSegment = {
      code: `cid:${g.cid}`,
      source: source.ref,
      start_pos: at.start_pos,
      end_pos: at.end_pos,
      memo: g.memo,
      importance: g.importance,
      owner: g.owner,
    };
    this.plan.segments.push(segment);
  }

  /** Stores the anchoring report in `plan.anchoring` and adds its warnings to the plan. */
  finish(): void {
    this.plan.anchoring = this.anchoring.report;
    for (const w of anchoringWarnings(this.anchoring.report)) warn(this.plan, w);
  }
}

/** Code point lengths of planned source texts, computed once per source. */
const textLengths = new WeakMap<PlannedSource, number>();

/**
 * Links case `c` to `[rawStart, rawEnd)` (code points, rounded) of `source`: a range covering the whole text
 * (or any range of an empty text) links the source as a whole (once), a range inside the text is added as a
 * range, anything else is counted in `skipped.case_ranges_outside_their_source`.
 */
export function linkCase(plan: ImportPlan, c: PlannedCase, source: PlannedSource, rawStart: unknown, rawEnd: unknown): void {
  let length = textLengths.get(source);
  if (length === undefined) textLengths.set(source, (length = codePointLength(source.text)));
  const start = Math.round(Number(rawStart));
  const end = Math.round(Number(rawEnd));
  if ((start <= 0 && end >= length) || length === 0) {
    if (!c.sources.includes(source.ref)) c.sources.push(source.ref);
  } else if (start >= 0 && end > start && end <= length) {
    c.ranges.push({ source: source.ref, start_pos: start, end_pos: end });
  } else skip(plan, 'case_ranges_outside_their_source');
}

/**
 * A typed attribute from a stored value and its declared type (`numeric` -> a number when the value reads as a
 * finite number; anything else text). Null for no value: NULL or blank (QualCoder stores '' for an attribute
 * not filled in).
 */
export function typedAttribute(name: string, raw: string | null, valueType: string): PlannedAttribute | null {
  if (raw === null || raw.trim() === '') return null;
  const n = Number(raw.trim());
  if (valueType === 'numeric' && Number.isFinite(n)) return { name, type: 'number', value: n };
  return { name, type: 'text', value: raw };
}

/** `column` when `table` has it, else `NULL AS column` (older schemas lack some columns). */
export function optionalColumn(db: ForeignDb, table: string, column: string): string {
  return db.columns(table).includes(column) ? column : `NULL AS ${column}`;
}
