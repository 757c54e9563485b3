/**
 * The coder comparison's computation: from each compared source's coded stretches per code and coder to
 * pattern histograms over the chosen units, every coefficient with its bootstrap interval, the unitizing
 * alpha, and the disagreeing units. Pure, no IO: src/domain/coderComparison.ts reads the project.
 *
 * Positions count code points; ranges are half-open `[start, end)`, flat `[s0, e0, s1, e1, ...]`.
 */
import { binaryAgreement, binaryAgreementInto, coderPairs } from './binary';
import { bootstrapIntervals, mulberry32, percentileInterval, type Interval } from './bootstrap';
import { sortedLengths, unitizingAlpha, type Continuum, type SortedLengths } from './krippendorff';

/** One compared source: its compared extent, its units (null: every character is a unit) and per code each coder's coded stretches (disjoint, sorted, within the extent). */
export interface ComparisonSource {
  source_id: number;
  extent: readonly number[];
  units: readonly number[] | null;
  codes: ReadonlyMap<number, readonly (readonly number[])[]>;
}

/** A coefficient with its seeded percentile bootstrap 95% interval (null bounds: undefined on too many resamples, or not bootstrapped). */
export interface Measure {
  value: number | null;
  ci_low: number | null;
  ci_high: number | null;
}

/** Every measure of one code (or of all codes pooled). `cohen_kappa[p]` belongs to the p-th pair of coderPairs(m). */
export interface MeasureSet {
  units: number;
  percent_agreement: Measure;
  cohen_kappa: Measure[];
  fleiss_kappa: Measure;
  brennan_prediger: Measure;
  gwet_ac1: Measure;
  krippendorff_alpha: Measure;
  unitizing_alpha: Measure;
}

/** A unit (or, for characters, a stretch) on which the coders did not all agree: `mask` bit c = coder c applied the code. */
export interface Disagreement {
  code_id: number;
  source_id: number;
  start: number;
  end: number;
  mask: number;
}

/**
 * The options of {@link compareCoders}: bootstrap draws (0: no intervals) and seed, the most disagreements
 * kept per code, and the unitizing bootstrap budget: the unitizing alpha's intervals are computed only when
 * draws x (sections of all coders over all continua, summed over codes) is at most this (default 2e7),
 * since each draw recomputes the alpha on resampled sources.
 */
export interface CompareOptions {
  draws: number;
  seed: number;
  maxDisagreements: number;
  unitizingBudget?: number;
}

/** The result of {@link compareCoders}: per code its histogram (2^m entries) and measures, the pooled measures, the disagreements (bounded per code). */
export interface Comparison {
  codes: Map<number, { counts: Float64Array; measures: MeasureSet }>;
  overall: MeasureSet | null;
  disagreements: Disagreement[];
}

const MEASURES = 5; // percent, fleiss, bp, ac1, alpha; then the pairs

/** The coefficients of a histogram as a flat list for the bootstrap: the five measures, then each pair's kappa. */
function flat(counts: ArrayLike<number>, m: number): (number | null)[] {
  const a = binaryAgreement(counts, m);
  return [a.percent_agreement, a.fleiss_kappa, a.brennan_prediger, a.gwet_ac1, a.krippendorff_alpha, ...a.cohen];
}

function measure(value: number | null, ci: Interval | null | undefined): Measure {
  return { value, ci_low: ci ? ci.low : null, ci_high: ci ? ci.high : null };
}

/** The measures of a histogram with bootstrap intervals over its units, and the unitizing alpha given. */
function measures(counts: Float64Array, m: number, opts: CompareOptions, unitizing: Measure): MeasureSet {
  const size = MEASURES + coderPairs(m).length;
  const values = flat(counts, m);
  const buf = new Float64Array(size);
  const ci = opts.draws > 0 ? bootstrapIntervals(counts, (b) => (binaryAgreementInto(b, m, buf), buf), size, opts.draws, opts.seed) : [];
  let units = 0;
  for (const c of counts) units += c;
  return {
    units,
    percent_agreement: measure(values[0] ?? null, ci[0]),
    fleiss_kappa: measure(values[1] ?? null, ci[1]),
    brennan_prediger: measure(values[2] ?? null, ci[2]),
    gwet_ac1: measure(values[3] ?? null, ci[3]),
    krippendorff_alpha: measure(values[4] ?? null, ci[4]),
    cohen_kappa: values.slice(MEASURES).map((v, p) => measure(v, ci[MEASURES + p])),
    unitizing_alpha: unitizing,
  };
}

/** Adds one source's character patterns of one code to `counts` (uncovered characters to mask 0) and its disagreeing stretches to `out`: a merge of the coders' sorted stretches. */
function characterPatterns(
  src: ComparisonSource,
  code: number,
  coders: readonly (readonly number[])[],
  m: number,
  counts: Float64Array,
  out: Disagreement[],
  keep: number,
): void {
  const at = new Int32Array(m);
  let extent = 0;
  for (let k = 0; k < src.extent.length; k += 2) extent += (src.extent[k + 1] as number) - (src.extent[k] as number);
  let covered = 0;
  const full = (1 << m) - 1;
  let pos = -1;
  for (;;) {
    // the next boundary after pos: the least start or end of a stretch not yet passed
    let next = Infinity;
    for (let c = 0; c < m; c++) {
      const r = coders[c] as readonly number[];
      const i = at[c] as number;
      if (i < r.length) {
        const x = r[i] as number;
        if (x < next) next = x;
      }
    }
    if (next === Infinity) break;
    if (pos >= 0 && next > pos) {
      let mask = 0;
      for (let c = 0; c < m; c++) if ((at[c] as number) & 1) mask |= 1 << c;
      if (mask !== 0) {
        counts[mask] = (counts[mask] as number) + (next - pos);
        covered += next - pos;
        if (mask !== full && out.length < keep) out.push({ code_id: code, source_id: src.source_id, start: pos, end: next, mask });
      }
    }
    pos = next;
    // pass every boundary at pos (an odd index: inside the coder's stretch)
    for (let c = 0; c < m; c++) {
      const r = coders[c] as readonly number[];
      while ((at[c] as number) < r.length && r[at[c] as number] === pos) at[c] = (at[c] as number) + 1;
    }
  }
  counts[0] = (counts[0] as number) + extent - covered;
}

/** Adds one source's unit patterns of one code to `counts` (a coder applied the code to a unit when one of their stretches overlaps it) and its disagreeing units to `out`. */
function unitPatterns(
  src: ComparisonSource,
  code: number,
  coders: readonly (readonly number[])[],
  m: number,
  counts: Float64Array,
  out: Disagreement[],
  keep: number,
): void {
  const units = src.units as readonly number[];
  const at = new Array<number>(m).fill(0);
  const full = (1 << m) - 1;
  for (let u = 0; u < units.length; u += 2) {
    const s = units[u] as number;
    const e = units[u + 1] as number;
    let mask = 0;
    for (let c = 0; c < m; c++) {
      const r = coders[c] ?? [];
      let k = at[c] as number;
      while (k < r.length && (r[k + 1] as number) <= s) k += 2;
      at[c] = k;
      if (k < r.length && (r[k] as number) < e) mask |= 1 << c;
    }
    counts[mask] = (counts[mask] as number) + 1;
    if (mask !== 0 && mask !== full && out.length < keep) out.push({ code_id: code, source_id: src.source_id, start: s, end: e, mask });
  }
}

/** A code's continua for the unitizing alpha: every extent range of every source, its coders' stretches shifted into it (sources without the code share empty coders). */
function continua(sources: readonly ComparisonSource[], code: number, m: number): Continuum[] {
  const out: Continuum[] = [];
  const empty: number[][] = Array.from({ length: m }, () => []);
  for (const src of sources) {
    const coders = src.codes.get(code);
    for (let k = 0; k < src.extent.length; k += 2) {
      const s = src.extent[k] as number;
      const e = src.extent[k + 1] as number;
      if (!coders) {
        out.push({ length: e - s, coders: empty });
        continue;
      }
      if (s === 0 && src.extent.length === 2) {
        // one extent from 0: the stretches are already within it
        out.push({ length: e, coders: coders.map((r) => r ?? []) });
        continue;
      }
      const shifted = Array.from({ length: m }, (_, c) => {
        const r = coders[c] ?? [];
        const x: number[] = [];
        for (let i = 0; i < r.length; i += 2) {
          const a = Math.max(s, r[i] as number);
          const b = Math.min(e, r[i + 1] as number);
          if (a < b) x.push(a - s, b - s);
        }
        return x;
      });
      out.push({ length: e - s, coders: shifted });
    }
  }
  return out;
}

/** The unitizing alpha of a code, with a bootstrap interval over continua (sources resampled whole) when `bootstrap` and there are two or more continua. */
function unitizing(
  cs: Continuum[],
  opts: CompareOptions,
  bootstrap: boolean,
  background?: SortedLengths,
): { measure: Measure; observed: number; expected: number } {
  const parts = unitizingAlpha(cs, background);
  if (!bootstrap || opts.draws <= 0 || parts.alpha === null || cs.length < 2) {
    return { measure: measure(parts.alpha, null), observed: parts.observed, expected: parts.expected };
  }
  const rand = mulberry32(opts.seed);
  const xs = new Float64Array(opts.draws);
  let n = 0;
  for (let d = 0; d < opts.draws; d++) {
    const pick = Array.from({ length: cs.length }, () => cs[Math.floor(rand() * cs.length)] as Continuum);
    const a = unitizingAlpha(pick).alpha;
    if (a !== null && Number.isFinite(a)) xs[n++] = a;
  }
  return { measure: measure(parts.alpha, percentileInterval(xs.subarray(0, n), opts.draws)), observed: parts.observed, expected: parts.expected };
}

/**
 * Compares m ≥ 2 coders on `codeIds` over `sources`: per code the pattern histogram over the units
 * (characters of the extents when a source has no `units`, else its units), every coefficient of
 * ./binary.ts with a seeded percentile bootstrap 95% interval resampling units, and the unitizing alpha
 * (./krippendorff.ts) with an interval resampling sources; overall: the histograms summed (every code and
 * unit one decision) and the unitizing alpha 1 − ΣDo / ΣDe over codes (no interval). Disagreements: at
 * most `maxDisagreements` per code, in source and position order.
 */
export function compareCoders(sources: readonly ComparisonSource[], codeIds: readonly number[], m: number, opts: CompareOptions): Comparison {
  const codes: Comparison['codes'] = new Map();
  const disagreements: Disagreement[] = [];
  const pooled = new Float64Array(1 << m);
  let dO = 0;
  let dE = 0;
  // every source's units and extent ranges once; per code only the sources where it occurs are visited
  let allUnits = 0;
  const extentLengths: number[] = [];
  const where = new Map<number, ComparisonSource[]>();
  for (const src of sources) {
    allUnits += unitsOf(src);
    for (let k = 0; k < src.extent.length; k += 2) extentLengths.push((src.extent[k + 1] as number) - (src.extent[k] as number));
    for (const code of src.codes.keys()) {
      let list = where.get(code);
      if (!list) where.set(code, (list = []));
      list.push(src);
    }
  }
  const background = sortedLengths(extentLengths);
  // the unitizing bootstrap's work: per code and source every coder's sections (stretches and gaps)
  let work = codeIds.length * m * extentLengths.length;
  for (const src of sources) for (const per of src.codes.values()) for (const r of per) work += r.length / 2;
  const bootstrapUnitizing = opts.draws > 0 && opts.draws * work <= (opts.unitizingBudget ?? 2e7);
  for (const code of codeIds) {
    const counts = new Float64Array(1 << m);
    const found: Disagreement[] = [];
    const present = where.get(code) ?? [];
    // units of sources where nobody applied the code are pattern 0
    counts[0] = allUnits;
    for (const src of present) {
      counts[0] = (counts[0] as number) - unitsOf(src);
      const coders = src.codes.get(code) as readonly (readonly number[])[];
      if (src.units === null) characterPatterns(src, code, coders, m, counts, found, opts.maxDisagreements);
      else unitPatterns(src, code, coders, m, counts, found, opts.maxDisagreements);
    }
    const u = bootstrapUnitizing ? unitizing(continua(sources, code, m), opts, true) : unitizing(continua(present, code, m), opts, false, background);
    dO += u.observed;
    dE += u.expected;
    codes.set(code, { counts, measures: measures(counts, m, opts, u.measure) });
    for (let k = 0; k < pooled.length; k++) pooled[k] = (pooled[k] as number) + (counts[k] as number);
    disagreements.push(...found);
  }
  const overall = codeIds.length > 0 ? measures(pooled, m, opts, measure(dE > 0 ? 1 - dO / dE : null, null)) : null;
  return { codes, overall, disagreements };
}

/** A source's number of units: characters of its extent, or its units. */
function unitsOf(src: ComparisonSource): number {
  if (src.units !== null) return src.units.length / 2;
  let n = 0;
  for (let k = 0; k < src.extent.length; k += 2) n += (src.extent[k + 1] as number) - (src.extent[k] as number);
  return n;
}
