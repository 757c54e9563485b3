/**
 * Agreement of m coders on binary decisions (a code applied to a unit or not), from the pattern
 * histogram: `counts[mask]` is the number of units where exactly the coders whose bits are set in `mask`
 * (bit c = coder c) applied the code. Every coefficient of ./coefficients.ts and ./krippendorff.ts depends
 * on the units only through this histogram, so the report and its bootstrap work on 2^m numbers instead of
 * the units. Pure, no IO. Every coder rated every unit (no missing values).
 */
import { alphaFromCoincidences } from './krippendorff';

/** The coefficients of one histogram, in {@link BINARY_MEASURES} order after the pairwise kappas. */
export interface BinaryAgreement {
  units: number;
  /** 100 · Fleiss' P̄: the mean share of agreeing coder pairs per unit (two coders: units coded alike / units) */
  percent_agreement: number | null;
  /** Cohen's kappa of each pair (i, j), i < j, in the order (0,1), (0,2), ..., (1,2), ... */
  cohen: (number | null)[];
  fleiss_kappa: number | null;
  brennan_prediger: number | null;
  gwet_ac1: number | null;
  krippendorff_alpha: number | null;
}

/** The pairs (i, j), i < j, of m coders, in the order of {@link BinaryAgreement.cohen}. */
export function coderPairs(m: number): [number, number][] {
  const out: [number, number][] = [];
  for (let i = 0; i < m; i++) for (let j = i + 1; j < m; j++) out.push([i, j]);
  return out;
}

/** The number of set bits of a mask. */
function bits(x: number): number {
  let n = 0;
  for (let v = x; v; v &= v - 1) n++;
  return n;
}

/**
 * All coefficients of a pattern histogram of m ≥ 2 coders (definitions and sources: percentAgreement,
 * cohensKappa, fleissKappa, brennanPrediger, gwetAC1 with q = 2 in ./coefficients.ts; krippendorffAlpha
 * nominal in ./krippendorff.ts), computed from the histogram in O(2^m · m²).
 */
export function binaryAgreement(counts: ArrayLike<number>, m: number): BinaryAgreement {
  // by number of coders who applied the code: byOnes[k] units
  const byOnes = new Float64Array(m + 1);
  let n = 0;
  for (let mask = 0; mask < counts.length; mask++) {
    const c = counts[mask] as number;
    if (c === 0) continue;
    byOnes[bits(mask)] = (byOnes[bits(mask)] as number) + c;
    n += c;
  }
  const none: BinaryAgreement = {
    units: n,
    percent_agreement: null,
    cohen: coderPairs(m).map(() => null),
    fleiss_kappa: null,
    brennan_prediger: null,
    gwet_ac1: null,
    krippendorff_alpha: null,
  };
  if (n <= 0 || m < 2) return none;
  let pa = 0;
  let ones = 0;
  const o = [
    [0, 0],
    [0, 0],
  ];
  for (let k = 0; k <= m; k++) {
    const w = byOnes[k] as number;
    if (w === 0) continue;
    pa += (w * (k * (k - 1) + (m - k) * (m - k - 1))) / (m * (m - 1));
    ones += w * k;
    (o[1] as number[])[1] = ((o[1] as number[])[1] as number) + (w * k * (k - 1)) / (m - 1);
    (o[0] as number[])[0] = ((o[0] as number[])[0] as number) + (w * (m - k) * (m - k - 1)) / (m - 1);
    const cross = (w * k * (m - k)) / (m - 1);
    (o[0] as number[])[1] = ((o[0] as number[])[1] as number) + cross;
    (o[1] as number[])[0] = ((o[1] as number[])[0] as number) + cross;
  }
  pa /= n;
  const p1 = ones / (n * m);
  const peFleiss = p1 * p1 + (1 - p1) * (1 - p1);
  // Gwet: π_k = mean over units of the share of ratings in k; every unit has m ratings, so π_1 = p1
  const peGwet = 2 * p1 * (1 - p1);
  return {
    units: n,
    percent_agreement: 100 * pa,
    cohen: coderPairs(m).map(([i, j]) => pairKappa(counts, i, j, n)),
    fleiss_kappa: peFleiss >= 1 - 1e-12 ? null : (pa - peFleiss) / (1 - peFleiss),
    brennan_prediger: 2 * pa - 1,
    gwet_ac1: peGwet >= 1 - 1e-12 ? null : (pa - peGwet) / (1 - peGwet),
    krippendorff_alpha: alphaFromCoincidences(o, [0, 1], 'nominal'),
  };
}

/** Cohen's kappa of coders i and j from a pattern histogram of n units (Cohen 1960; null when pe = 1). */
function pairKappa(counts: ArrayLike<number>, i: number, j: number, n: number): number | null {
  let both = 0;
  let onlyI = 0;
  let onlyJ = 0;
  const bi = 1 << i;
  const bj = 1 << j;
  for (let mask = 0; mask < counts.length; mask++) {
    const c = counts[mask] as number;
    if (c === 0) continue;
    const a = (mask & bi) !== 0;
    const b = (mask & bj) !== 0;
    if (a && b) both += c;
    else if (a) onlyI += c;
    else if (b) onlyJ += c;
  }
  return kappaOf(both, onlyI, onlyJ, n);
}

/** Cohen's kappa of a 2x2 table of n units: both coders applied the code to `both`, only the first to `onlyI`, only the second to `onlyJ`. */
function kappaOf(both: number, onlyI: number, onlyJ: number, n: number): number | null {
  const neither = n - both - onlyI - onlyJ;
  const pA = (both + onlyI) / n;
  const pB = (both + onlyJ) / n;
  const pe = pA * pB + (1 - pA) * (1 - pB);
  return pe >= 1 - 1e-12 ? null : ((both + neither) / n - pe) / (1 - pe);
}

/** Per m: the popcount of every mask, the pairs (and each pair's two coder bits), and a scratch for the superset sums. */
const TABLES = new Map<number, { ones: Uint8Array; pairs: [number, number][]; pairBits: Int32Array; sup: Float64Array }>();

/**
 * The coefficients of {@link binaryAgreement} written into `out` without allocating (the bootstrap's inner
 * loop): out[0] percent agreement, 1 Fleiss, 2 Brennan-Prediger, 3 AC1, 4 Krippendorff's alpha, then each
 * pair's Cohen kappa; NaN where undefined. Same formulas and sources as binaryAgreement.
 */
export function binaryAgreementInto(counts: ArrayLike<number>, m: number, out: Float64Array): void {
  let t = TABLES.get(m);
  if (!t) {
    const ones = new Uint8Array(1 << m);
    for (let mask = 0; mask < ones.length; mask++) ones[mask] = bits(mask);
    const pairBits = Int32Array.from(coderPairs(m).flatMap(([i, j]) => [1 << i, 1 << j]));
    TABLES.set(m, (t = { ones, pairs: coderPairs(m), pairBits, sup: new Float64Array(1 << m) }));
  }
  let n = 0;
  let agree = 0;
  let onesTotal = 0;
  let o11 = 0;
  let o00 = 0;
  let o01 = 0;
  for (let mask = 0; mask < counts.length; mask++) {
    const w = counts[mask] as number;
    if (w === 0) continue;
    const k = t.ones[mask] as number;
    n += w;
    agree += w * (k * (k - 1) + (m - k) * (m - k - 1));
    onesTotal += w * k;
    o11 += w * k * (k - 1);
    o00 += w * (m - k) * (m - k - 1);
    o01 += w * k * (m - k);
  }
  if (n <= 0) {
    out.fill(NaN);
    return;
  }
  const pa = agree / (m * (m - 1) * n);
  const p1 = onesTotal / (n * m);
  const peF = p1 * p1 + (1 - p1) * (1 - p1);
  const peG = 2 * p1 * (1 - p1);
  out[0] = 100 * pa;
  out[1] = peF >= 1 - 1e-12 ? NaN : (pa - peF) / (1 - peF);
  out[2] = 2 * pa - 1;
  out[3] = peG >= 1 - 1e-12 ? NaN : (pa - peG) / (1 - peG);
  // alpha from the coincidences (all divided by m - 1, which cancels): n1 = o11 + o01, n0 = o00 + o01, total = n·m
  const n1 = o11 + o01;
  const n0 = o00 + o01;
  const total = (n1 + n0) / (m - 1);
  out[4] = n1 > 0 && n0 > 0 ? 1 - ((total - 1) * (2 * o01)) / (m - 1) / ((2 * n0 * n1) / ((m - 1) * (m - 1))) : NaN;
  // Cohen's kappa per pair from the superset sums sup[S] = Σ_{mask ⊇ S} counts[mask] (units where every coder
  // of S applied the code): coder i applied it to sup[{i}] units, i and j both to sup[{i, j}]; the counts are
  // integers, so these sums are exact and equal pairKappa's
  const sup = t.sup;
  for (let mask = 0; mask < sup.length; mask++) sup[mask] = counts[mask] ?? 0;
  for (let b = 1; b < sup.length; b <<= 1) {
    // the masks without bit b, in runs of b between the runs with it
    for (let run = 0; run < sup.length; run += 2 * b) {
      for (let mask = run; mask < run + b; mask++) sup[mask] = (sup[mask] as number) + (sup[mask + b] as number);
    }
  }
  for (let p = 0; p < t.pairs.length; p++) {
    const bi = t.pairBits[2 * p] as number;
    const bj = t.pairBits[2 * p + 1] as number;
    const both = sup[bi | bj] as number;
    out[5 + p] = kappaOf(both, (sup[bi] as number) - both, (sup[bj] as number) - both, n) ?? NaN;
  }
}
