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

/** How many uniforms a {@link Stream} keeps (with their normal pairs: 1.5 MB); deviates further on are drawn as they come. */
const KEPT = 1 << 16;

/**
 * The first {@link KEPT} uniforms a generator gave, kept in order, and the Box-Muller normal pairs made from them,
 * by the position of the pair's first uniform. Every bootstrap of a comparison starts from the same seed and
 * mostly draws the same way, so replaying one stream makes each normal pair (a logarithm, a square root, a sine
 * and a cosine) once instead of once per histogram; the deviates are the same numbers either way.
 */
class Stream {
  private u = new Float64Array(1024);
  private cos = new Float64Array(1024).fill(NaN);
  private sin = new Float64Array(1024);
  private made = 0;
  /**
   * `gen`: the generator (drawn from only as far as a reader asked, in order); `rest()`: a generator positioned
   * after the first {@link KEPT} uniforms, for a reader that goes on.
   */
  constructor(
    readonly gen: () => number,
    readonly rest: () => () => number,
  ) {}

  /** The i-th uniform, i < KEPT (drawing up to it). */
  at(i: number): number {
    if (i >= this.made) this.draw(i);
    return this.u[i] as number;
  }

  private draw(i: number): void {
    if (i >= this.u.length) {
      const n = Math.min(KEPT, Math.max(2 * this.u.length, i + 1));
      const grow = (a: Float64Array, fill: number) => {
        const b = new Float64Array(n).fill(fill);
        b.set(a);
        return b;
      };
      this.u = grow(this.u, 0);
      this.cos = grow(this.cos, NaN);
      this.sin = grow(this.sin, 0);
    }
    while (this.made <= i) this.u[this.made++] = this.gen();
  }

  /** The normal pair of the uniforms at i and i + 1 (i + 1 < KEPT): r·cos t (returned) and r·sin t (into `out.spare`), r = √(−2 ln(1 − u_i)), t = 2π·u_(i+1). */
  pair(i: number, out: { spare: number }): number {
    this.at(i + 1);
    let c = this.cos[i] as number;
    if (Number.isNaN(c)) {
      const r = Math.sqrt(-2 * Math.log(1 - (this.u[i] as number)));
      const t = 2 * Math.PI * (this.u[i + 1] as number);
      c = this.cos[i] = r * Math.cos(t);
      this.sin[i] = r * Math.sin(t);
    }
    out.spare = this.sin[i] as number;
    return c;
  }
}

/** The stream of the last seed a bootstrap used (a comparison bootstraps every histogram with one seed). */
let seeded: { seed: number; stream: Stream } | undefined;

function streamOf(seed: number): Stream {
  const rest = () => {
    const g = mulberry32(seed);
    for (let k = 0; k < KEPT; k++) g();
    return g;
  };
  if (seeded?.seed !== seed) seeded = { seed, stream: new Stream(mulberry32(seed), rest) };
  return seeded.stream;
}

/**
 * Deviates read from a {@link Stream} from its start: uniforms, standard normals (Box-Muller, both deviates of a
 * pair used: the spare is kept for the next call) and binomials. The bootstrap's inner loop draws from one of
 * these without allocating.
 */
class Deviates {
  spare = NaN;
  private pos = 0;
  private rest: (() => number) | undefined;
  constructor(readonly stream: Stream) {}

  /** The next uniform. */
  uniform(): number {
    const i = this.pos++;
    return i < KEPT ? this.stream.at(i) : (this.rest ??= this.stream.rest())();
  }

  /** A standard normal deviate. */
  normal(): number {
    if (!Number.isNaN(this.spare)) {
      const z = this.spare;
      this.spare = NaN;
      return z;
    }
    if (this.pos + 1 < KEPT) {
      const z = this.stream.pair(this.pos, this);
      this.pos += 2;
      return z;
    }
    const r = Math.sqrt(-2 * Math.log(1 - this.uniform()));
    const t = 2 * Math.PI * this.uniform();
    this.spare = r * Math.sin(t);
    return r * Math.cos(t);
  }

  /** A Binomial(n, p) deviate; see {@link binomial}. */
  binomial(n: number, p: number): number {
    if (n <= 0 || p <= 0) return 0;
    if (p >= 1) return n;
    if (p > 0.5) return n - this.binomial(n, 1 - p);
    const variance = n * p * (1 - p);
    if (variance >= 50) {
      const x = Math.round(n * p + Math.sqrt(variance) * this.normal());
      return Math.min(n, Math.max(0, x));
    }
    const q = 1 - p;
    const s = p / q;
    const a = (n + 1) * s;
    let r = Math.pow(q, n);
    let u = this.uniform();
    let x = 0;
    while (u > r && x < n) {
      u -= r;
      x++;
      r *= a / x - s;
    }
    return x;
  }
}

/** The deviates of the last generator given to {@link binomial}: its spare normal belongs to it. */
let lastDeviates: Deviates | undefined;

function deviatesOf(rand: () => number): Deviates {
  // one reader: when it passes the kept uniforms, `rand` has given exactly those and goes on from there
  if (lastDeviates?.stream.gen !== rand) lastDeviates = new Deviates(new Stream(rand, () => rand));
  return lastDeviates;
}

/**
 * A Binomial(n, p) deviate: inversion (the BINV algorithm of V. Kachitvichyanukul & B. W. Schmeiser,
 * "Binomial random variate generation", Communications of the ACM 31(2), 1988) on the rarer side when
 * n·p·(1 − p) < 50, else the normal approximation with continuity correction (de Moivre-Laplace), whose
 * error there is far below the bootstrap's own Monte Carlo error. Normals come from Box-Muller, both
 * deviates of a pair used (the spare belongs to `rand`).
 */
export function binomial(n: number, p: number, rand: () => number): number {
  return deviatesOf(rand).binomial(n, p);
}

/**
 * A multinomial resampler of pattern counts: the patterns with units, visited in order, each drawing a
 * binomial of the units left (the last takes the rest).
 */
class Resampler {
  private readonly index: Int32Array;
  private readonly count: Float64Array;
  private readonly total: number;

  constructor(counts: ArrayLike<number>) {
    const index: number[] = [];
    let total = 0;
    for (let k = 0; k < counts.length; k++) {
      if ((counts[k] as number) > 0) {
        index.push(k);
        total += counts[k] as number;
      }
    }
    this.index = Int32Array.from(index);
    this.count = Float64Array.from(index, (k) => counts[k] as number);
    this.total = total;
  }

  /** One draw into `out` (patterns without units stay as they are: zero). */
  draw(dev: Deviates, out: Float64Array): void {
    const { index, count } = this;
    const last = index.length - 1;
    let left = this.total;
    let mass = left;
    for (let j = 0; j <= last; j++) {
      if (left <= 0) {
        out[index[j] as number] = 0;
        continue;
      }
      const c = count[j] as number;
      const x = j === last ? left : dev.binomial(left, c / mass);
      out[index[j] as number] = x;
      left -= x;
      mass -= c;
    }
  }
}

/** A 95% percentile interval: `[low, high]`, from `draws` resamples (`valid`: how many gave a defined value). */
export interface Interval {
  low: number;
  high: number;
  draws: number;
  valid: number;
}

/** The draws' values of every statistic, reused from call to call (grown on demand): a comparison bootstraps hundreds of histograms. */
let scratch = new Float64Array(0);

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
  const dev = new Deviates(streamOf(seed));
  lastDeviates = dev;
  const resampler = new Resampler(counts);
  if (scratch.length < size * draws) scratch = new Float64Array(size * draws);
  const values = Array.from({ length: size }, (_, s) => scratch.subarray(s * draws, (s + 1) * draws));
  const valid = new Int32Array(size);
  const buf = new Float64Array(counts.length);
  for (let d = 0; d < draws; d++) {
    resampler.draw(dev, buf);
    const got = stats(buf);
    for (let s = 0; s < size; s++) {
      const v = got[s];
      if (v !== null && v !== undefined && Number.isFinite(v)) (values[s] as Float64Array)[(valid[s] as number)++] = v;
    }
  }
  return values.map((all, s) => percentileInterval(all.subarray(0, valid[s]), draws));
}

/** The 2.5th and 97.5th percentiles (type 7) of `xs` (reordered here, in place: not sorted); null when fewer than half of `draws`. */
export function percentileInterval(xs: Float64Array, draws: number): Interval | null {
  const n = xs.length;
  if (n === 0 || n < draws / 2) return null;
  // the order statistics each percentile needs, selected in increasing order: each selection leaves the
  // larger values to its right, so the next looks only there
  let from = 0;
  const q = (p: number): number => {
    const h = (n - 1) * p;
    const lo = Math.floor(h);
    const at = select(xs, lo, from, n - 1);
    from = lo;
    let next = at;
    if (lo + 1 < n) {
      next = Infinity;
      for (let i = lo + 1; i < n; i++) if ((xs[i] as number) < next) next = xs[i] as number;
    }
    return at + (h - lo) * (next - at);
  };
  const low = q(0.025);
  const high = q(0.975);
  return { low, high, draws, valid: n };
}

/**
 * The k-th smallest of `xs[left..right]` (0-based, k within), moved to index k with smaller or equal values
 * before it and larger or equal ones after it, up to `right` (Hoare's FIND, C. A. R. Hoare, "Algorithm 65:
 * find", Communications of the ACM 4(7), 1961, with the median of three as pivot). No NaN in `xs`.
 */
function select(xs: Float64Array, k: number, left: number, right: number): number {
  let l = left;
  let r = right;
  while (r > l) {
    const mid = (l + r) >> 1;
    // median of xs[l], xs[mid], xs[r] as pivot
    const a = xs[l] as number;
    const b = xs[mid] as number;
    const c = xs[r] as number;
    const pivot = a < b ? (b < c ? b : a < c ? c : a) : a < c ? a : b < c ? c : b;
    let i = l;
    let j = r;
    while (i <= j) {
      while ((xs[i] as number) < pivot) i++;
      while ((xs[j] as number) > pivot) j--;
      if (i <= j) {
        const t = xs[i] as number;
        xs[i] = xs[j] as number;
        xs[j] = t;
        i++;
        j--;
      }
    }
    if (k <= j) r = j;
    else if (k >= i) l = i;
    else break;
  }
  return xs[k] as number;
}
