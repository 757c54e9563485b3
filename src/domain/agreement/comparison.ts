/**
 * The coder comparison's computation: from each compared source's coded stretches per code and coder to
 * pattern histograms over the chosen units, every coefficient with its bootstrap interval, the unitizing
 * alpha, and the disagreeing units. Pure, no IO: src/domain/coderComparison.ts reads the project.
 *
 * Positions count code points; ranges are half-open `[start, end)`, flat `[s0, e0, s1, e1, ...]`.
 */
import { binaryAgreement, binaryAgreementInto, coderPairs } from './binary';
import { bootstrapIntervals, mulberry32, percentileInterval, type Interval } from './bootstrap';
import { packComparison, type CodePack, type ComparisonSource, type PackedComparison } from './packing';
import { packContinua, sortedLengths, unitizingPacked, type Continuum, type PackedContinua, type SortedLengths } from './unitizing';

export type { ComparisonSource } from './packing';

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

/** Where the pattern walks keep each coder's next boundary and the end of its stretches (grown on demand). */
let walk = { at: new Int32Array(0), end: new Int32Array(0) };

/** Sets `walk` to entry e's coders' stretches: coder c's boundaries are pos[at[c] .. end[c]). */
function startWalk(pack: CodePack, e: number, m: number): typeof walk {
  if (walk.at.length < m) walk = { at: new Int32Array(m), end: new Int32Array(m) };
  for (let c = 0; c < m; c++) {
    walk.at[c] = pack.bounds[e * (m + 1) + c] as number;
    walk.end[c] = pack.bounds[e * (m + 1) + c + 1] as number;
  }
  return walk;
}

/** Adds entry e's character patterns (its code on its source of `characters` characters) to `counts` (uncovered characters to mask 0) and its disagreeing stretches to `found`: a merge of the coders' sorted stretches. */
function characterPatterns(pack: CodePack, e: number, m: number, characters: number, counts: Float64Array, found: Found): void {
  const pos = pack.continua.pos;
  const { at, end } = startWalk(pack, e, m);
  let covered = 0;
  const full = (1 << m) - 1;
  // mask: the coders inside one of their stretches at `here` (bit c flips at each boundary of coder c)
  let mask = 0;
  let here = -1;
  let next = Infinity;
  for (let c = 0; c < m; c++) if ((at[c] as number) < (end[c] as number) && (pos[at[c] as number] as number) < next) next = pos[at[c] as number] as number;
  while (next !== Infinity) {
    if (mask !== 0) {
      counts[mask] = (counts[mask] as number) + (next - here);
      covered += next - here;
      if (mask !== full) found.add(here, next, mask);
    }
    here = next;
    // pass every boundary at here, and find the next one
    next = Infinity;
    for (let c = 0; c < m; c++) {
      let i = at[c] as number;
      const r = end[c] as number;
      while (i < r && pos[i] === here) {
        i++;
        mask ^= 1 << c;
      }
      at[c] = i;
      if (i < r && (pos[i] as number) < next) next = pos[i] as number;
    }
  }
  counts[0] = (counts[0] as number) + characters - covered;
}

/** Adds entry e's unit patterns (its code on its source, with `units` flat) to `counts` (a coder applied the code to a unit when one of their stretches overlaps it) and its disagreeing units to `found`. */
function unitPatterns(pack: CodePack, e: number, m: number, units: readonly number[], counts: Float64Array, found: Found): void {
  const pos = pack.continua.pos;
  const { at, end } = startWalk(pack, e, m);
  const full = (1 << m) - 1;
  for (let u = 0; u < units.length; u += 2) {
    const s = units[u] as number;
    const t = units[u + 1] as number;
    let mask = 0;
    for (let c = 0; c < m; c++) {
      const r = end[c] as number;
      let k = at[c] as number;
      while (k < r && (pos[k + 1] as number) <= s) k += 2;
      at[c] = k;
      if (k < r && (pos[k] as number) < t) mask |= 1 << c;
    }
    counts[mask] = (counts[mask] as number) + 1;
    if (mask !== 0 && mask !== full) found.add(s, t, mask);
  }
}

/** A code's disagreements as they are found on one source, at most `keep`. */
class Found {
  readonly list: Disagreement[] = [];
  source = 0;
  constructor(
    readonly code: number,
    readonly keep: number,
  ) {}

  add(start: number, end: number, mask: number): void {
    if (this.list.length < this.keep) this.list.push({ code_id: this.code, source_id: this.source, start, end, mask });
  }
}

/** A code's continua over every source for the unitizing bootstrap: every extent range of every source, its coders' stretches shifted into it (sources without the code share empty coders). */
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
      } else if (s === 0 && src.extent.length === 2) {
        out.push({ length: e, coders });
      } else {
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
  }
  return out;
}

/** The unitizing alpha of a code over continua `cs`, with a bootstrap interval over continua (sources resampled whole) when `bootstrap` and there are two or more continua. */
function unitizing(
  cs: PackedContinua,
  opts: CompareOptions,
  bootstrap: boolean,
  background?: SortedLengths,
): { measure: Measure; observed: number; expected: number } {
  const n = cs.length.length;
  const parts = unitizingPacked(cs, null, n, background);
  if (!bootstrap || opts.draws <= 0 || parts.alpha === null || n < 2) {
    return { measure: measure(parts.alpha, null), observed: parts.observed, expected: parts.expected };
  }
  const rand = mulberry32(opts.seed);
  const xs = new Float64Array(opts.draws);
  const pick = new Int32Array(n);
  let valid = 0;
  for (let d = 0; d < opts.draws; d++) {
    for (let q = 0; q < n; q++) pick[q] = Math.floor(rand() * n);
    const a = unitizingPacked(cs, pick, n).alpha;
    if (a !== null && Number.isFinite(a)) xs[valid++] = a;
  }
  return { measure: measure(parts.alpha, percentileInterval(xs.subarray(0, valid), opts.draws)), observed: parts.observed, expected: parts.expected };
}

/** A code's pattern histogram over every source where it occurs (plus the units of the others as pattern 0), its disagreements into `found`. */
function patterns(p: PackedComparison, pack: CodePack, sources: readonly ComparisonSource[], allUnits: number, found: Found): Float64Array {
  const m = p.m;
  const counts = new Float64Array(1 << m);
  // units of sources where nobody applied the code are pattern 0
  counts[0] = allUnits;
  for (let e = 0; e < pack.sources.length; e++) {
    const s = pack.sources[e] as number;
    const src = sources[s] as ComparisonSource;
    counts[0] = (counts[0] as number) - (p.units[s] as number);
    found.source = src.source_id;
    if (src.units === null) characterPatterns(pack, e, m, p.units[s] as number, counts, found);
    else unitPatterns(pack, e, m, src.units, counts, found);
  }
  return counts;
}

/**
 * Compares m ≥ 2 coders on `codeIds` over `sources`: per code the pattern histogram over the units
 * (characters of the extents when a source has no `units`, else its units), every coefficient of
 * ./binary.ts with a seeded percentile bootstrap 95% interval resampling units, and the unitizing alpha
 * (./unitizing.ts) with an interval resampling sources; overall: the histograms summed (every code and
 * unit one decision) and the unitizing alpha 1 − ΣDo / ΣDe over codes (no interval). Disagreements: at
 * most `maxDisagreements` per code, in source and position order. The sources are packed once into typed
 * arrays (./packing.ts); each code then visits only the sources where it occurs.
 */
export function compareCoders(sources: readonly ComparisonSource[], codeIds: readonly number[], m: number, opts: CompareOptions): Comparison {
  const codes: Comparison['codes'] = new Map();
  const disagreements: Disagreement[] = [];
  const pooled = new Float64Array(1 << m);
  let dO = 0;
  let dE = 0;
  const p = packComparison(sources, codeIds, m);
  let allUnits = 0;
  for (const u of p.units) allUnits += u;
  const background = sortedLengths(p.extentLengths);
  // the unitizing bootstrap's work: per code and source every coder's sections (stretches and gaps)
  const work = codeIds.length * m * p.extentLengths.length + p.stretches;
  const bootstrapUnitizing = opts.draws > 0 && opts.draws * work <= (opts.unitizingBudget ?? 2e7);
  for (const code of codeIds) {
    const pack = p.codes.get(code) as CodePack;
    const found = new Found(code, opts.maxDisagreements);
    const counts = patterns(p, pack, sources, allUnits, found);
    const u = bootstrapUnitizing ? unitizing(packContinua(continua(sources, code, m), m), opts, true) : unitizing(pack.continua, opts, false, background);
    dO += u.observed;
    dE += u.expected;
    codes.set(code, { counts, measures: measures(counts, m, opts, u.measure) });
    for (let k = 0; k < pooled.length; k++) pooled[k] = (pooled[k] as number) + (counts[k] as number);
    for (const d of found.list) disagreements.push(d);
  }
  const overall = codeIds.length > 0 ? measures(pooled, m, opts, measure(dE > 0 ? 1 - dO / dE : null, null)) : null;
  return { codes, overall, disagreements };
}
