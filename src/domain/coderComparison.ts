/**
 * The coder comparison report (generate_coder_comparison): agreement of two or more coders (segment
 * owners) per code and over all codes, on characters, segments, sentences or paragraphs, with every
 * coefficient of src/domain/agreement and its seeded bootstrap 95% interval, plus the disagreements with
 * their text. Reads the project through the repository port; the statistics are pure (src/domain/agreement).
 *
 * Text positions count code points; ranges are half-open `[start_pos, end_pos)`. AV segments are not compared.
 */
import { ToolError } from '../core/errors';
import { hasAstral } from '../core/text';
import { coderPairs } from './agreement/binary';
import { compareCoders, type ComparisonSource, type Measure } from './agreement/comparison';
import type { CodedRanges, ProjectRepository, ReportFilter } from './ports';
import { suggestionRates, type SuggestionRates } from './suggestionRates';

/** What one unit of the comparison is. */
export type ComparisonUnit = 'character' | 'segment' | 'sentence' | 'paragraph';
export const COMPARISON_UNITS: readonly ComparisonUnit[] = ['character', 'segment', 'sentence', 'paragraph'];

/** Cohen's kappa of one pair of coders, with its interval. */
export interface PairMeasure extends Measure {
  coders: [string, string];
}

/** Every coefficient of one code (or of all codes pooled), each a {@link Measure} (value, ci_low, ci_high). */
export interface AgreementMeasures {
  /** units compared (characters, segments, sentences or paragraphs), summed over the compared sources */
  units: number;
  percent_agreement: Measure;
  cohen_kappa: PairMeasure[];
  fleiss_kappa: Measure;
  brennan_prediger: Measure;
  gwet_ac1: Measure;
  krippendorff_alpha: Measure;
  unitizing_alpha: Measure;
}

/** The two-coder table (A = coders[0], B = coders[1]) and Cohen's kappa as before issue 16: present with exactly two coders. */
export interface TwoCoderTable {
  both: number;
  only_a: number;
  only_b: number;
  neither: number;
  coded_a: number;
  coded_b: number;
  /** units compared (named for the character unit it was first) */
  characters: number;
  po: number | null;
  pe: number | null;
  kappa: number | null;
  percent_agreement: number | null;
}

/** One code of a coder comparison: its id and name, its measures, and with two coders the 2x2 table. */
export type CodeAgreement = { code_id: number; name: string; measures: AgreementMeasures } & Partial<TwoCoderTable>;

/** A unit (for characters: a stretch) on which the coders disagree, with its text (at most 200 code points, then "…"). */
export interface DisagreementView {
  code_id: number;
  code: string;
  source_id: number;
  source: string;
  start_pos: number;
  end_pos: number;
  text: string;
  coded_by: string[];
  not_coded_by: string[];
}

/** The result of a coder comparison. */
export interface CoderComparisonResult {
  report_type: 'coder_comparison';
  filters: ReportFilter;
  /** the coders (segment owners) compared, as given; coder pairs follow this order */
  coders: string[];
  unit: ComparisonUnit;
  bootstrap: { draws: number; seed: number };
  method: string;
  /** the text sources compared: those within the filters on which at least two of the coders coded something; by id */
  sources: { source_id: number; name: string; characters: number; units: number }[];
  /** characters of the compared sources (within the cases' extents when case_ids filter) */
  total_characters: number;
  /** per code (the filter's codes, else every code one of the coders applied on the compared sources), by name */
  codes: CodeAgreement[];
  /** all codes pooled: every (code, unit) pair is one decision; null without codes */
  overall: ({ measures: AgreementMeasures } & Partial<TwoCoderTable>) | null;
  /** the disagreements, at most `max_disagreements_per_code` per code, by code then position */
  disagreements: DisagreementView[];
  max_disagreements_per_code: number;
  /** each suggesting coder's (agent's) coding suggestions per code and month: accepted, edited, rejected, pending (src/domain/suggestionRates.ts) */
  suggestions: SuggestionRates;
}

/** How the comparison is made, returned with every result. */
export const CODER_COMPARISON_METHOD =
  "For each code every unit of the compared sources is coded or not coded by each coder: units are characters (code points; as QualCoder's coder comparison counts them), segments (the stretches covered by overlapping segments of any of the coders, merged), " +
  "sentences (Unicode UAX #29) or paragraphs (non-blank lines); a coder coded a unit when one of their segments of the code overlaps it. Percent agreement = Fleiss' mean share of agreeing coder pairs (two coders: units coded alike / units). " +
  "Cohen's kappa per pair (Cohen 1960), Fleiss' kappa (Fleiss 1971), Brennan-Prediger kappa (Brennan & Prediger 1981, q = 2), Gwet's AC1 (Gwet 2008), Krippendorff's alpha nominal (Krippendorff 2011) over the units; " +
  "the unitizing alpha (Krippendorff 1995, 2004) on each coder's coded stretches of the text, pooled over sources. Intervals: seeded percentile bootstrap 95% (Efron & Tibshirani 1993) resampling units " +
  '(for characters neighbouring characters are not independent, so the interval is too narrow: prefer segment, sentence or paragraph units for publication); the unitizing alpha resamples whole sources when there are two or more and the work is small enough. ' +
  'A character inside two overlapping segments of one coder counts once. Compared sources: text sources within the filters on which at least two of the coders coded something.';

/** The union of half-open intervals (flat: [s0, e0, s1, e1, ...], any order) as disjoint sorted ones, clipped to the extents `clip` (disjoint, sorted). */
export function unionClipped(flat: readonly number[], clip: readonly number[]): number[] {
  // already sorted and apart (one stretch, or a coder's stretches in order): no pairs to sort and merge
  let ordered = true;
  for (let k = 0; k < flat.length && ordered; k += 2)
    ordered = (flat[k] as number) < (flat[k + 1] as number) && (k === 0 || (flat[k] as number) > (flat[k - 1] as number));
  let merged: number[];
  if (ordered) merged = flat as number[];
  else {
    const pairs: [number, number][] = [];
    for (let k = 0; k < flat.length; k += 2) pairs.push([flat[k] as number, flat[k + 1] as number]);
    pairs.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    merged = [];
    for (const [s, e] of pairs) {
      const last = merged.length - 1;
      if (last > 0 && s <= (merged[last] as number)) merged[last] = Math.max(merged[last] as number, e);
      else merged.push(s, e);
    }
  }
  // ordered (so none empty) within one extent: nothing to clip
  if (
    ordered &&
    clip.length === 2 &&
    flat.length > 0 &&
    (flat[0] as number) >= (clip[0] as number) &&
    (flat[flat.length - 1] as number) <= (clip[1] as number)
  ) {
    return flat.slice();
  }
  return intersect(merged, clip);
}

/** The intersection of two lists of disjoint sorted half-open intervals (flat). */
function intersect(a: readonly number[], b: readonly number[]): number[] {
  const out: number[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const s = Math.max(a[i] as number, b[j] as number);
    const e = Math.min(a[i + 1] as number, b[j + 1] as number);
    if (s < e) out.push(s, e);
    if ((a[i + 1] as number) < (b[j + 1] as number)) i += 2;
    else j += 2;
  }
  return out;
}

/** The total length of disjoint half-open intervals (flat). */
function measure(flat: readonly number[]): number {
  let n = 0;
  for (let k = 0; k < flat.length; k += 2) n += (flat[k + 1] as number) - (flat[k] as number);
  return n;
}

/** Code-point offsets of a text's UTF-16 indices: identity without astral characters. */
function codePointIndex(text: string): (i: number) => number {
  if (!hasAstral(text)) return (i) => i;
  const at = new Uint32Array(text.length + 1);
  let cp = 0;
  for (let i = 0; i < text.length; i++) {
    at[i] = cp;
    const c = text.charCodeAt(i);
    if (!(c >= 0xdc00 && c <= 0xdfff && i > 0 && text.charCodeAt(i - 1) >= 0xd800 && text.charCodeAt(i - 1) <= 0xdbff)) cp++;
  }
  at[text.length] = cp;
  return (i) => at[i] as number;
}

/**
 * The sentence or paragraph units of a text (flat code-point ranges, sorted, without surrounding white
 * space): sentences by Intl.Segmenter (Unicode UAX #29), paragraphs the non-blank lines.
 */
export function textUnitRanges(text: string, unit: 'sentence' | 'paragraph'): number[] {
  const cp = codePointIndex(text);
  const out: number[] = [];
  const push = (s: number, piece: string): void => {
    const lead = piece.length - piece.trimStart().length;
    const trimmed = piece.trim();
    if (trimmed) out.push(cp(s + lead), cp(s + lead + trimmed.length));
  };
  if (unit === 'sentence') {
    for (const seg of new Intl.Segmenter('und', { granularity: 'sentence' }).segment(text)) push(seg.index, seg.segment);
  } else {
    const re = /[^\r\n]+/g;
    for (let m = re.exec(text); m; m = re.exec(text)) push(m.index, m[0]);
  }
  return out;
}

/**
 * The comparison's input from coded ranges (pure): per compared source its extent, its units, and per code
 * each coder's coded stretches (merged, clipped to the extent). `coderIndex` maps an owner index of
 * `ranges` to the coder's position (−1: not compared); `unitsOf(source, extent)` gives sentence or
 * paragraph units (flat), unused for characters and segments. Codes: `codeIds`, else every code used.
 */
export function comparisonSources(
  ranges: CodedRanges,
  coderIndex: readonly number[],
  m: number,
  extents: ReadonlyMap<number, number[]>,
  unit: ComparisonUnit,
  codeIds: readonly number[] | undefined,
  unitsOf: (sourceId: number, extent: readonly number[]) => number[],
): { sources: ComparisonSource[]; codeIds: number[] } {
  const wanted = codeIds ? new Set(codeIds) : undefined;
  const used = new Set<number>(codeIds ?? []);
  const sources: ComparisonSource[] = [];
  const n = ranges.source_id.length;
  for (let k = 0; k < n;) {
    const s = ranges.source_id[k] as number;
    let end = k;
    while (end < n && ranges.source_id[end] === s) end++;
    const ext = extents.get(s);
    if (ext) {
      const byCode = new Map<number, number[][]>();
      const all: number[] = [];
      for (let x = k; x < end; x++) {
        const c = coderIndex[ranges.owner[x] as number] ?? -1;
        if (c < 0) continue;
        all.push(ranges.start_pos[x] as number, ranges.end_pos[x] as number);
        const code = ranges.code_id[x] as number;
        if (wanted && !wanted.has(code)) continue;
        let per = byCode.get(code);
        if (!per) {
          per = [];
          for (let c = 0; c < m; c++) per.push([]);
          byCode.set(code, per);
        }
        (per[c] as number[]).push(ranges.start_pos[x] as number, ranges.end_pos[x] as number);
      }
      const codes = new Map<number, number[][]>();
      for (const [code, per] of byCode) {
        codes.set(
          code,
          per.map((f) => unionClipped(f, ext)),
        );
        used.add(code);
      }
      const units = unit === 'character' ? null : unit === 'segment' ? unionClipped(all, ext) : unitsOf(s, ext);
      sources.push({ source_id: s, extent: ext, units, codes });
    }
    k = end;
  }
  return { sources, codeIds: [...used] };
}

/** The coders of a comparison, trimmed; INVALID_ARGUMENTS unless two or more distinct coders that have segments, and no `filter.coder`. */
export function checkCoders(repo: ProjectRepository, coderIds: readonly string[], filter: ReportFilter): string[] {
  if (filter.coder !== undefined) throw new ToolError('INVALID_ARGUMENTS', 'filters.coder does not apply to a coder comparison; name the coders in coder_ids');
  const ids = coderIds.map((c) => c.trim());
  if (ids.length < 2 || ids.some((c) => !c) || new Set(ids).size !== ids.length) {
    throw new ToolError('INVALID_ARGUMENTS', `coder_ids must name two different coders or more (got ${JSON.stringify(coderIds)})`);
  }
  if (ids.length > 12) throw new ToolError('INVALID_ARGUMENTS', `coder_ids names at most 12 coders (got ${ids.length})`);
  const known = repo.listCoders();
  const names = new Set(known.map((k) => k.coder));
  for (const c of ids) {
    if (!names.has(c)) {
      throw new ToolError(
        'INVALID_ARGUMENTS',
        `No text segment was coded by "${c}"; the project's coders are ${known.map((k) => JSON.stringify(k.coder)).join(', ') || 'none'}`,
        {
          coders: known,
        },
      );
    }
  }
  return ids;
}

/** The comparison's options: unit (default character), bootstrap draws (default 1000; 0 for none) and seed (default 1). */
export interface ComparisonOptions {
  unit?: ComparisonUnit;
  draws?: number;
  seed?: number;
}

/** Each compared source's extent: whole, or the union of its case ranges when `filter.case_ids` is given. */
function compareExtents(repo: ProjectRepository, lengths: ReadonlyMap<number, number>, filter: ReportFilter): Map<number, number[]> {
  const extents = new Map<number, number[]>();
  if (!filter.case_ids) {
    for (const [s, len] of lengths) extents.set(s, [0, len]);
    return extents;
  }
  const bySource = new Map<number, number[]>();
  const whole = new Set<number>();
  for (const x of repo.caseExtents(filter.case_ids)) {
    if (x.whole) whole.add(x.source_id);
    else {
      let list = bySource.get(x.source_id);
      if (!list) bySource.set(x.source_id, (list = []));
      list.push(x.start_pos, x.end_pos);
    }
  }
  for (const [s, len] of lengths) extents.set(s, whole.has(s) ? [0, len] : unionClipped(bySource.get(s) ?? [], [0, len]));
  return extents;
}

/** The 2x2 table of two coders from a pattern histogram (bit 0 = A, bit 1 = B), with Cohen's kappa as po, pe and kappa. */
function twoCoderTable(counts: Float64Array): TwoCoderTable {
  const neither = counts[0] as number;
  const onlyA = counts[1] as number;
  const onlyB = counts[2] as number;
  const both = counts[3] as number;
  const n = neither + onlyA + onlyB + both;
  if (n <= 0)
    return { both, only_a: onlyA, only_b: onlyB, neither, coded_a: 0, coded_b: 0, characters: 0, po: null, pe: null, kappa: null, percent_agreement: null };
  const po = (both + neither) / n;
  const pa = (both + onlyA) / n;
  const pb = (both + onlyB) / n;
  const pe = pa * pb + (1 - pa) * (1 - pb);
  return {
    both,
    only_a: onlyA,
    only_b: onlyB,
    neither,
    coded_a: both + onlyA,
    coded_b: both + onlyB,
    characters: n,
    po,
    pe,
    kappa: pe >= 1 ? null : (po - pe) / (1 - pe),
    percent_agreement: 100 * po,
  };
}

const CLIP = 200;

/**
 * Compares two or more coders (segment owners) code by code over the chosen units (see
 * {@link CODER_COMPARISON_METHOD}; statistics in src/domain/agreement). For each code, each compared source
 * contributes its units within its extent (the whole text, or the cases' ranges when `filter.case_ids` is
 * given). With exactly two coders every code also carries the 2x2 table (both / only_a / only_b / neither,
 * po, pe, kappa) as before. Compared sources: text sources within `filter.source_ids` / `filter.case_ids`
 * on which at least two of the coders have a text segment (of any code).
 * Errors: INVALID_ARGUMENTS (fewer than two distinct coders, a coder without any segment, `filter.coder` given).
 */
export function coderComparisonReport(
  repo: ProjectRepository,
  coderIds: readonly string[],
  filter: ReportFilter,
  options: ComparisonOptions = {},
): CoderComparisonResult {
  const coders = checkCoders(repo, coderIds, filter);
  const unit = options.unit ?? 'character';
  const draws = options.draws ?? 1000;
  const seed = options.seed ?? 1;
  const m = coders.length;
  const scope: ReportFilter = { ...(filter.source_ids ? { source_ids: filter.source_ids } : {}), ...(filter.case_ids ? { case_ids: filter.case_ids } : {}) };
  const ranges = repo.reportCodedRanges(scope, coders);
  const coderIndex = ranges.owners.map((o) => coders.indexOf(o));
  // sources at least two of the coders coded (any code)
  const codedBy = new Map<number, number>();
  for (let k = 0; k < ranges.source_id.length; k++) {
    const c = coderIndex[ranges.owner[k] as number] ?? -1;
    if (c >= 0) codedBy.set(ranges.source_id[k] as number, (codedBy.get(ranges.source_id[k] as number) ?? 0) | (1 << c));
  }
  const compared = [...codedBy.entries()].filter(([, bits]) => (bits & (bits - 1)) !== 0).map(([s]) => s);
  const texts = repo.textSourceLengths(compared);
  const lengths = new Map(texts.map((r) => [r.source_id, r.length]));
  const sourceNames = new Map(texts.map((r) => [r.source_id, r.name]));
  const extents = compareExtents(repo, lengths, filter);
  const textCache = new Map<number, string>();
  const textOf = (s: number): string => {
    let t = textCache.get(s);
    if (t === undefined) textCache.set(s, (t = repo.getSourceText(s) ?? ''));
    return t;
  };
  const unitsOf = (s: number, ext: readonly number[]): number[] => {
    const all = textUnitRanges(textOf(s), unit as 'sentence' | 'paragraph');
    const out: number[] = [];
    for (let k = 0; k < all.length; k += 2) {
      const a = all[k] as number;
      const b = all[k + 1] as number;
      for (let e = 0; e < ext.length; e += 2)
        if (a < (ext[e + 1] as number) && (ext[e] as number) < b) out.push(Math.max(a, ext[e] as number), Math.min(b, ext[e + 1] as number));
    }
    return out;
  };
  const input = comparisonSources(ranges, coderIndex, m, extents, unit, filter.code_ids, unitsOf);
  const maxDisagreements = 25;
  const result = compareCoders(input.sources, input.codeIds, m, { draws, seed, maxDisagreements });
  const pairs = coderPairs(m).map(([i, j]) => [coders[i], coders[j]] as [string, string]);
  const named = (x: ReturnType<typeof compareCoders>['overall'] & object): AgreementMeasures => ({
    ...x,
    cohen_kappa: x.cohen_kappa.map((k, p) => ({ coders: pairs[p] as [string, string], ...k })),
  });
  const names = new Map(repo.listCodeLabels().map((c) => [c.code_id, c.name]));
  const codes: CodeAgreement[] = [...result.codes.entries()]
    .map(([code_id, c]) => ({ code_id, name: names.get(code_id) ?? `#${code_id}`, ...(m === 2 ? twoCoderTable(c.counts) : {}), measures: named(c.measures) }))
    .sort((x, y) => compareText(x.name, y.name) || x.code_id - y.code_id);
  let overall: CoderComparisonResult['overall'] = null;
  if (result.overall && result.overall.units > 0) {
    const pooled = new Float64Array(1 << m);
    for (const c of result.codes.values()) for (let k = 0; k < pooled.length; k++) pooled[k] = (pooled[k] as number) + (c.counts[k] as number);
    overall = { ...(m === 2 ? twoCoderTable(pooled) : {}), measures: named(result.overall) };
  }
  const unitCount = (s: ComparisonSource): number => (s.units === null ? measure(s.extent) : s.units.length / 2);
  const order = new Map(codes.map((c, i) => [c.code_id, i]));
  const disagreements: DisagreementView[] = [...result.disagreements]
    .sort((a, b) => (order.get(a.code_id) ?? 0) - (order.get(b.code_id) ?? 0) || a.source_id - b.source_id || a.start - b.start)
    .map((d) => {
      const chars = Array.from(sliceCodePoints(textOf(d.source_id), d.start, Math.min(d.end, d.start + CLIP + 1)));
      const text = chars.length > CLIP ? `${chars.slice(0, CLIP).join('')}…` : chars.join('');
      return {
        code_id: d.code_id,
        code: names.get(d.code_id) ?? `#${d.code_id}`,
        source_id: d.source_id,
        source: sourceNames.get(d.source_id) ?? '',
        start_pos: d.start,
        end_pos: d.end,
        text,
        coded_by: coders.filter((_, c) => (d.mask & (1 << c)) !== 0),
        not_coded_by: coders.filter((_, c) => (d.mask & (1 << c)) === 0),
      };
    });
  return {
    report_type: 'coder_comparison',
    filters: filter,
    coders,
    unit,
    bootstrap: { draws, seed },
    method: CODER_COMPARISON_METHOD,
    sources: input.sources
      .map((s) => ({ source_id: s.source_id, name: sourceNames.get(s.source_id) ?? '', characters: measure(s.extent), units: unitCount(s) }))
      .sort((x, y) => x.source_id - y.source_id),
    total_characters: input.sources.reduce((a, s) => a + measure(s.extent), 0),
    codes,
    overall,
    disagreements,
    max_disagreements_per_code: maxDisagreements,
    suggestions: suggestionRates(repo, filter.code_ids),
  };
}

/** The code points `[start, end)` of a text. */
function sliceCodePoints(text: string, start: number, end: number): string {
  if (!hasAstral(text)) return text.slice(start, end);
  return Array.from(text).slice(start, end).join('');
}

/** Case-insensitive order, then binary (as the other reports sort names). */
function compareText(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  return x < y ? -1 : x > y ? 1 : a < b ? -1 : a > b ? 1 : 0;
}
