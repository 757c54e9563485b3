/**
 * Seeded bootstrap confidence intervals for agreement coefficients, pure functions without IO.
 *
 * Units are resampled with replacement (B. Efron & R. J. Tibshirani, An Introduction to the Bootstrap,
 * 1993, ch. 6 and 13: the percentile interval). Every coefficient here depends on the units only through
 * how many units show each rating pattern, so one draw is a multinomial draw of the N units over the
 * patterns, taken as successive binomials; the same seed gives the same interval.
 */
export { mulberry32 } from '../../core/random';
import { mulberry32 } from '../../core/random';

let spare = NaN;
let spareOf: (() => number) | undefined;

/** A standard normal deviate (Box-Muller, both deviates of a pair used; the spare belongs to the generator that made it). */
function normal(rand: () => number): number {
  if (spareOf === rand && !Number.isNaN(spare)) {
    const z = spare;
    spare = NaN;
    return z;
  }
  const r = Math.sqrt(-2 * Math.log(1 - rand()));
  const t = 2 * Math.PI * rand();
  spare = r * Math.sin(t);
  spareOf = rand;
  return r * Math.cos(t);
}

/**
 * A Binomial(n, p) deviate: inversion (the BINV algorithm of V. Kachitvichyanukul & B. W. Schmeiser,
 * "Binomial random variate generation", Communications of the ACM 31(2), 1988) on the rarer side when
 * n·p·(1 − p) < 50, else the normal approximation with continuity correction (de Moivre-Laplace), whose
 * error there is far below the bootstrap's own Monte Carlo error.
 */
export function binomial(n: number, p: number, rand: () => number): number {
  if (n <= 0 || p <= 0) return 0;
  if (p >= 1) return n;
  if (p > 0.5) return n - binomial(n, 1 - p, rand);
  const variance = n * p * (1 - p);
  if (variance >= 50) {
    const x = Math.round(n * p + Math.sqrt(variance) * normal(rand));
    return Math.min(n, Math.max(0, x));
  }
  const q = 1 - p;
  const s = p / q;
  const a = (n + 1) * s;
  let r = Math.pow(q, n);
  let u = rand();
  let x = 0;
  while (u > r && x < n) {
    u -= r;
    x++;
    r *= a / x - s;
  }
  return x;
}

/** One bootstrap draw: `counts[k]` units resampled from N = Σ counts over the patterns (a multinomial draw), into `out`. */
export function resampleCounts(counts: ArrayLike<number>, rand: () => number, out: Float64Array): void {
  let left = 0;
  let last = -1;
  for (let k = 0; k < counts.length; k++) {
    out[k] = 0;
    if ((counts[k] as number) > 0) {
      left += counts[k] as number;
      last = k;
    }
  }
  let mass = left;
  for (let k = 0; k <= last && left > 0; k++) {
    const c = counts[k] as number;
    if (c <= 0) continue;
    const x = k === last ? left : binomial(left, c / mass, rand);
    out[k] = x;
    left -= x;
    mass -= c;
  }
}

/** A 95% percentile interval: `[low, high]`, from `draws` resamples (`valid`: how many gave a defined value). */
export interface Interval {
  low: number;
  high: number;
  draws: number;
  valid: number;
}

/**
 * The seeded percentile bootstrap 95% intervals of several statistics over pattern counts `counts` (units
 * per pattern, integers): `draws` multinomial resamples of the units, each giving `stats(resampled)` (one
 * value per statistic, null when undefined on that resample), then per statistic the 2.5th and 97.5th
 * percentiles of its defined values (null or NaN: undefined; linear interpolation between order statistics, Hyndman & Fan 1996
 * type 7). Null for a statistic when fewer than half the draws gave a value.
 */
export function bootstrapIntervals(
  counts: ArrayLike<number>,
  stats: (resampled: Float64Array) => ArrayLike<number | null>,
  size: number,
  draws: number,
  seed: number,
): (Interval | null)[] {
  const rand = mulberry32(seed);
  const values = Array.from({ length: size }, () => new Float64Array(draws));
  const valid = new Array<number>(size).fill(0);
  const buf = new Float64Array(counts.length);
  for (let d = 0; d < draws; d++) {
    resampleCounts(counts, rand, buf);
    const got = stats(buf);
    for (let s = 0; s < size; s++) {
      const v = got[s];
      if (v !== null && v !== undefined && Number.isFinite(v)) (values[s] as Float64Array)[(valid[s] as number)++] = v;
    }
  }
  return values.map((all, s) => percentileInterval(all.subarray(0, valid[s]), draws));
}

/** The 2.5th and 97.5th percentiles (type 7) of `xs` (sorted here, in place); null when fewer than half of `draws`. */
export function percentileInterval(xs: Float64Array, draws: number): Interval | null {
  const n = xs.length;
  if (n === 0 || n < draws / 2) return null;
  xs.sort();
  const q = (p: number): number => {
    const h = (n - 1) * p;
    const lo = Math.floor(h);
    const hi = Math.min(n - 1, lo + 1);
    return (xs[lo] as number) + (h - lo) * ((xs[hi] as number) - (xs[lo] as number));
  };
  return { low: q(0.025), high: q(0.975), draws, valid: n };
}
