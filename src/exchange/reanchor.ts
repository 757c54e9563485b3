import { OffsetMap } from '../core/offsets';
import { sliceCp } from '../core/text';

/**
 * Re-anchoring a foreign coding by its stored quote (issue 15, item 3). QualCoder (`code_text.seltext`),
 * RQDA (`coding.seltext`), ATLAS.ti (a selection's `name`) and some REFI-QDA producers keep the coded text
 * beside the offsets. When the source text was edited after coding, the offsets drift from the words they
 * coded; the quote says where the coding belongs. Pure: no I/O, no state beyond a per-text cache.
 *
 * Order of the search (the first that succeeds wins):
 * 1. the text at the offsets equals the quote: `exact`, offsets unchanged;
 * 2. the exact occurrence of the quote nearest to the stored start (searching outward with the engine's
 *    `indexOf` / `lastIndexOf`; a tie goes to the earlier one): `reanchored`;
 * 3. the nearest occurrence with white space normalised (every run of white space, as JavaScript's `\s`
 *    defines it, counts as one space in both the text and the quote; the match is mapped back to the
 *    original text, a run at its end covered whole): `reanchored`;
 * 4. not found: the stored offsets are kept (`kept_offsets`) when they lie inside the text
 *    (`0 <= start < end <= length`), else the coding cannot be placed (`unplaceable`).
 *
 * All positions are Unicode code points of `text`, half-open `[start_pos, end_pos)`.
 */

/** What re-anchoring did with one coding. */
export type AnchorStatus = 'exact' | 'reanchored' | 'kept_offsets' | 'unplaceable';

/** Where a coding lands: code points of the source text, half-open. For `unplaceable` the stored offsets, unusable. */
export interface AnchorResult {
  status: AnchorStatus;
  start_pos: number;
  end_pos: number;
}

/** One coding whose quote disagreed with its offsets, for the import report. Positions are code points. */
export interface AnchoringEntry {
  /** the source's name (as imported) */
  source: string;
  /** the code's name (as imported) */
  code: string;
  /** where the coding was placed (equal to the stored offsets unless reanchored) */
  start_pos: number;
  end_pos: number;
  /** the offsets the foreign file stored */
  stored_start_pos: number;
  stored_end_pos: number;
  /** the stored quote, its first {@link QUOTE_PREVIEW} code points */
  quote: string;
}

/** The codings of one import whose quotes disagreed with their offsets, by what became of them. */
export interface AnchoringReport {
  reanchored: AnchoringEntry[];
  kept_offsets: AnchoringEntry[];
  unplaceable: AnchoringEntry[];
}

/** Code points of the quote kept in an {@link AnchoringEntry}. */
export const QUOTE_PREVIEW = 80;

/** A report with no entries. */
export function emptyAnchoringReport(): AnchoringReport {
  return { reanchored: [], kept_offsets: [], unplaceable: [] };
}

/**
 * Adds one coding to `report` under `result.status` (nothing for `exact`). `stored` are the offsets the
 * foreign file held; `quote` is cut to {@link QUOTE_PREVIEW} code points.
 */
export function recordAnchoring(
  report: AnchoringReport,
  result: AnchorResult,
  names: { source: string; code: string },
  stored: { start_pos: number; end_pos: number },
  quote: string | null,
): void {
  if (result.status === 'exact') return;
  report[result.status].push({
    source: names.source,
    code: names.code,
    start_pos: result.start_pos,
    end_pos: result.end_pos,
    stored_start_pos: stored.start_pos,
    stored_end_pos: stored.end_pos,
    quote: sliceCp(quote ?? '', 0, QUOTE_PREVIEW),
  });
}

/** How many codings of an {@link AnchoringReport} each status holds. */
export interface AnchoringCounts {
  reanchored: number;
  kept_offsets: number;
  unplaceable: number;
}

/** The counts of `report`, for an import result beside the report itself. */
export function anchoringCounts(report: AnchoringReport): AnchoringCounts {
  return { reanchored: report.reanchored.length, kept_offsets: report.kept_offsets.length, unplaceable: report.unplaceable.length };
}

/** Entries a warning names before referring to the full list. */
const NAMED_IN_WARNING = 3;

/**
 * One warning per non-empty status of `report`, naming the source and code (and positions) of its first
 * codings and pointing to `anchoring` in the result for the rest. Says what happened, not why: the quote and
 * the text disagree, which the file alone does not explain.
 */
export function anchoringWarnings(report: AnchoringReport): string[] {
  const name = (e: AnchoringEntry, moved: boolean) =>
    `"${e.source}" / "${e.code}" ${moved ? `${e.stored_start_pos}-${e.stored_end_pos} -> ${e.start_pos}-${e.end_pos}` : `${e.stored_start_pos}-${e.stored_end_pos}`}`;
  const list = (entries: AnchoringEntry[], moved: boolean, key: keyof AnchoringReport) =>
    entries
      .slice(0, NAMED_IN_WARNING)
      .map((e) => name(e, moved))
      .join('; ') + (entries.length > NAMED_IN_WARNING ? `; ... (all in anchoring.${key})` : '');
  const out: string[] = [];
  const { reanchored: r, kept_offsets: k, unplaceable: u } = report;
  if (r.length > 0)
    out.push(
      `${r.length} coding(s) were placed where their stored quote is, because the text at their stored offsets differs from it (source / code, stored -> placed): ${list(r, true, 'reanchored')}`,
    );
  if (k.length > 0)
    out.push(
      `${k.length} coding(s) keep their stored offsets although their stored quote is not in the source text (source / code, offsets): ${list(k, false, 'kept_offsets')}`,
    );
  if (u.length > 0)
    out.push(
      `${u.length} coding(s) were not imported: their offsets lie outside the source text and their quote, if any, is not in it (source / code, offsets): ${list(u, false, 'unplaceable')}`,
    );
  return out;
}

/** JavaScript's white space (`\s`: includes U+00A0, U+2028, U+FEFF ...), in runs. */
const WHITE_RUN = /\s+/g;

/**
 * Re-anchors codings on one text. Build one per source and call {@link QuoteAnchorer.anchor} for each of its
 * codings: the code point / UTF-16 map is built once (one scan), the white-space-normalised copy of the text
 * only when a coding needs it (one more scan). Each coding then costs at most a few native substring
 * searches over the text; no O(text x quote) work in JavaScript.
 */
export class QuoteAnchorer {
  private readonly map: OffsetMap;
  private normalised: { text: string; /** UTF-16 index in the original of each unit of `text`, then text.length */ at: Int32Array } | undefined;

  constructor(readonly text: string) {
    this.map = new OffsetMap(text);
  }

  /** Length of the text in code points. */
  get length(): number {
    return this.map.cpLength;
  }

  /**
   * Where the coding stored as `[start_pos, end_pos)` (code points) with the quote `quote` belongs; see the
   * module comment for the order of the search. A null or empty quote cannot contradict its offsets: they
   * are `exact` when inside the text, else `unplaceable`. Offsets that are not integers count as outside
   * the text (the quote is still searched near their clamped start).
   */
  anchor(quote: string | null, start_pos: number, end_pos: number): AnchorResult {
    const inside = Number.isInteger(start_pos) && Number.isInteger(end_pos) && start_pos >= 0 && start_pos < end_pos && end_pos <= this.map.cpLength;
    if (quote === null || quote === '') return { status: inside ? 'exact' : 'unplaceable', start_pos, end_pos };
    const text = this.text;
    const u0 = this.map.toUtf16(Number.isFinite(start_pos) ? start_pos : 0);
    if (inside) {
      const u1 = this.map.toUtf16(end_pos);
      if (u1 - u0 === quote.length && text.startsWith(quote, u0)) return { status: 'exact', start_pos, end_pos };
    }
    const at = this.nearest(text, quote, u0);
    if (at >= 0) return this.placed(at, at + quote.length);
    const found = this.nearestNormalised(quote, u0);
    if (found) return this.placed(found[0], found[1]);
    return { status: inside ? 'kept_offsets' : 'unplaceable', start_pos, end_pos };
  }

  private placed(u0: number, u1: number): AnchorResult {
    return { status: 'reanchored', start_pos: this.map.toCp(u0), end_pos: this.map.toCp(u1) };
  }

  /** True when UTF-16 index `u` of the original text falls between the two halves of a surrogate pair. */
  private splitsPair(u: number): boolean {
    if (u <= 0 || u >= this.text.length) return false;
    const lo = this.text.charCodeAt(u);
    const hi = this.text.charCodeAt(u - 1);
    return lo >= 0xdc00 && lo <= 0xdfff && hi >= 0xd800 && hi <= 0xdbff;
  }

  /**
   * UTF-16 index of the occurrence of `needle` in `hay` nearest to `from` (ties: the earlier), skipping
   * occurrences whose mapped ends would split a surrogate pair; -1 when there is none.
   * `toOriginal` maps an index of `hay` to the original text (identity for the text itself).
   */
  private nearest(hay: string, needle: string, from: number, toOriginal: (i: number) => number = (i) => i): number {
    const ok = (i: number) => !this.splitsPair(toOriginal(i)) && !this.splitsPair(toOriginal(i + needle.length));
    let back = hay.lastIndexOf(needle, from);
    while (back >= 0 && !ok(back)) back = back > 0 ? hay.lastIndexOf(needle, back - 1) : -1;
    let fwd = hay.indexOf(needle, from + 1);
    while (fwd >= 0 && !ok(fwd)) fwd = hay.indexOf(needle, fwd + 1);
    if (back < 0) return fwd;
    if (fwd < 0) return back;
    const origin = toOriginal(Math.min(from, hay.length));
    const dBack = this.map.toCp(origin) - this.map.toCp(toOriginal(back));
    const dFwd = this.map.toCp(toOriginal(fwd)) - this.map.toCp(origin);
    return dFwd < dBack ? fwd : back;
  }

  /** The nearest white-space-normalised occurrence of `quote` as UTF-16 `[start, end)` of the original text, or undefined. */
  private nearestNormalised(quote: string, u0: number): [number, number] | undefined {
    const q = quote.replace(WHITE_RUN, ' ');
    if (!/\s/.test(quote)) return undefined; // no white space: the exact search already looked for it
    if (q.trim() === '') return undefined; // white space alone matches any run: no evidence of place
    const n = (this.normalised ??= normalise(this.text));
    // the normalised index of u0: the first unit that starts at or after it
    let lo = 0;
    let hi = n.text.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((n.at[mid] as number) < u0) lo = mid + 1;
      else hi = mid;
    }
    const toOriginal = (i: number) => n.at[Math.min(i, n.text.length)] as number;
    const k = this.nearest(n.text, q, lo, toOriginal);
    if (k < 0) return undefined;
    return [toOriginal(k), toOriginal(k + q.length)];
  }
}

/** `text` with each run of white space replaced by one space, and where each unit of the result came from. */
function normalise(text: string): { text: string; at: Int32Array } {
  const parts: string[] = [];
  const at = new Int32Array(text.length + 1);
  let k = 0;
  let i = 0;
  const copy = (from: number, to: number) => {
    parts.push(text.slice(from, to));
    for (let j = from; j < to; j++) at[k++] = j;
  };
  WHITE_RUN.lastIndex = 0;
  for (let m = WHITE_RUN.exec(text); m !== null; m = WHITE_RUN.exec(text)) {
    copy(i, m.index);
    parts.push(' ');
    at[k++] = m.index;
    i = m.index + m[0].length;
  }
  copy(i, text.length);
  at[k] = text.length;
  return { text: parts.join(''), at: at.subarray(0, k + 1) };
}

let last: QuoteAnchorer | undefined;

/**
 * Where a coding stored as `[start_pos, end_pos)` (code points of `text`) with the quote `quote` belongs:
 * `exact` (unchanged), `reanchored` (the nearest exact, then white-space-normalised, occurrence of the
 * quote), `kept_offsets` (quote not found, offsets inside the text) or `unplaceable` (quote not found,
 * offsets outside the text). A null or empty quote: `exact` when the offsets are inside the text, else
 * `unplaceable`. Calls for the same text in a row share one {@link QuoteAnchorer} (its maps are built once);
 * importers that interleave texts should hold one anchorer per source instead. Throws nothing.
 */
export function reanchorByQuote(text: string, quote: string | null, start_pos: number, end_pos: number): AnchorResult {
  if (last?.text !== text) last = new QuoteAnchorer(text);
  return last.anchor(quote, start_pos, end_pos);
}

/**
 * Re-anchoring for one import: a {@link QuoteAnchorer} for the source at hand and the {@link AnchoringReport}
 * of the codings whose quote disagreed with their offsets. Only the last source's anchorer is kept (its maps
 * can be as large as the text): pass codings grouped by source, as the importers read them (ORDER BY the
 * source id), and each source's maps are built once; any other order is correct, only slower. Disabled
 * (`enabled: false`, the bench's baseline), quotes are ignored: offsets inside the text are `exact`, others
 * `unplaceable`.
 */
export class ImportAnchoring {
  readonly report: AnchoringReport = emptyAnchoringReport();
  private current: { source: string; anchorer: QuoteAnchorer } | undefined;

  constructor(readonly enabled = true) {}

  /**
   * Where the coding of `names.code` stored at `[start_pos, end_pos)` (code points) of the source `source`
   * (any key unique per source; `text` is that source's text, the same on every call for the key) with the
   * quote `quote` belongs; anything but `exact` is added to {@link report} under its status.
   */
  place(source: string, text: string, names: { source: string; code: string }, quote: string | null, start_pos: number, end_pos: number): AnchorResult {
    if (this.current?.source !== source) this.current = { source, anchorer: new QuoteAnchorer(text) };
    const result = this.current.anchorer.anchor(this.enabled ? quote : null, start_pos, end_pos);
    recordAnchoring(this.report, result, names, { start_pos, end_pos }, quote);
    return result;
  }
}
