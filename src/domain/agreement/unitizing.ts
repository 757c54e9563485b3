/**
 * Krippendorff's unitizing alpha for coded stretches of continua (texts), pure functions without IO. The
 * continua are packed into typed arrays ({@link PackedContinua}) so that a comparison of many codes on many
 * sources, and a bootstrap resampling whole continua, read compact arrays instead of nested lists.
 *
 * Positions are integers (code points); stretches are half-open `[start, end)`.
 */

/** One continuum (a source's text) for {@link unitizingAlpha}: its length and per coder the coded stretches, flat `[s0, e0, s1, e1, ...]`, disjoint, sorted, within `[0, length)`. */
export interface Continuum {
  length: number;
  coders: readonly (readonly number[])[];
}

/** The parts of the unitizing alpha: observed and expected disagreement (alpha = 1 − observed / expected). */
export interface UnitizingParts {
  observed: number;
  expected: number;
  alpha: number | null;
}

/**
 * Continua of m coders packed in typed arrays: continuum k has length `length[k]`, and coder c's stretches
 * (flat, sorted, disjoint, within `[0, length[k])`) are `pos[bounds[k·(m+1) + c] .. bounds[k·(m+1) + c + 1])`.
 */
export interface PackedContinua {
  m: number;
  length: Float64Array;
  bounds: Int32Array;
  pos: Int32Array;
}

/** {@link PackedContinua} of continua of m coders (a coder missing from a continuum's list coded nothing there). */
export function packContinua(continua: readonly Continuum[], m: number): PackedContinua {
  let size = 0;
  for (const c of continua) for (let i = 0; i < m; i++) size += c.coders[i]?.length ?? 0;
  const pos = new Int32Array(size);
  const bounds = new Int32Array(continua.length * (m + 1));
  const length = new Float64Array(continua.length);
  let at = 0;
  continua.forEach((c, k) => {
    length[k] = c.length;
    for (let i = 0; i < m; i++) {
      bounds[k * (m + 1) + i] = at;
      for (const x of c.coders[i] ?? []) pos[at++] = x;
    }
    bounds[k * (m + 1) + m] = at;
  });
  return { m, length, bounds, pos };
}

/**
 * Krippendorff's unitizing alpha (his α_U / "|u α" for one category): how reliably m coders mark the same
 * stretches of a continuum. Each coder's continuum is a sequence of sections, coded units (w = 1) and gaps
 * (w = 0). Observed disagreement Do = Σ over ordered coder pairs (i, j) and overlapping sections g of i,
 * h of j of δ²(g, h) / (m (m − 1) L²), where δ² = (b_g − b_h)² + (e_g − e_h)² for two overlapping units,
 * l_g² when unit g lies within gap h (and l_h² the other way round), else 0. Expected disagreement
 * De = (2/L) Σ_units [ (N − 1)/3 · (2l³ − 3l² + l) + l² Σ_{gaps γ ≥ l} (γ − l + 1) ] /
 * (mL (mL − 1) − Σ_units l (l − 1)), N the number of units of all coders. Sources: K. Krippendorff, "On
 * the reliability of unitizing contiguous data", Sociological Methodology 25, 1995, pp. 47-76; K.
 * Krippendorff, "Measuring the reliability of qualitative text analysis data", Quality & Quantity 38, 2004,
 * pp. 787-800 (worked example: 2 observers on a continuum of 300, category c: Do = .0144, De = .0532);
 * K. Krippendorff, Content Analysis (4th ed., 2019), ch. 12. Several continua (sources) are pooled: L is
 * their total length, sections never cross from one to the next. With `background` (every continuum's
 * length) `continua` may hold only those where something was coded: the others count as whole gaps.
 * Null without units or when De = 0. m is the number of coders of the first continuum.
 */
export function unitizingAlpha(continua: readonly Continuum[], background?: SortedLengths): UnitizingParts {
  const m = continua[0]?.coders.length ?? 0;
  return unitizingPacked(packContinua(continua, m), null, continua.length, background);
}

/**
 * {@link unitizingAlpha} of the continua `pick[0..n)` of `p` (indices, repeats allowed, as a bootstrap draws
 * them; null: continua 0..n−1), with the same optional background.
 */
export function unitizingPacked(p: PackedContinua, pick: Int32Array | null, n: number, background?: SortedLengths): UnitizingParts {
  const { m, length, bounds, pos } = p;
  const w = m + 1;
  let L = 0;
  let observed = 0;
  let N = 0;
  let longest = 0;
  for (let q = 0; q < n; q++) {
    const k = pick ? (pick[q] as number) : q;
    const len = length[k] as number;
    L += len;
    if (len > longest) longest = len;
    N += ((bounds[k * w + m] as number) - (bounds[k * w] as number)) >> 1;
    // two gaps over the whole continuum disagree nowhere
    for (let i = 0; i < m; i++) {
      const a0 = bounds[k * w + i] as number;
      const a1 = bounds[k * w + i + 1] as number;
      for (let j = i + 1; j < m; j++) {
        const b0 = bounds[k * w + j] as number;
        const b1 = bounds[k * w + j + 1] as number;
        if (a1 > a0 || b1 > b0) observed += 2 * pairDisagreement(pos, a0, a1, b0, b1, len);
      }
    }
  }
  if (background) L = background.total;
  if (m < 2 || L <= 0 || N === 0) return { observed: 0, expected: 0, alpha: null };
  const dO = observed / (m * (m - 1) * L * L);
  const fit = gapFit(p, pick, n, longest, N, background);
  let num = 0;
  let squares = 0;
  for (let q = 0; q < n; q++) {
    const k = pick ? (pick[q] as number) : q;
    const end = bounds[k * w + m] as number;
    for (let x = bounds[k * w] as number; x < end; x += 2) {
      const l = (pos[x + 1] as number) - (pos[x] as number);
      num += ((N - 1) / 3) * (2 * l * l * l - 3 * l * l + l) + l * l * fit(l);
      squares += l * (l - 1);
    }
  }
  const dE = ((2 / L) * num) / (m * L * (m * L - 1) - squares);
  return { observed: dO, expected: dE, alpha: dE > 0 ? 1 - dO / dE : null };
}

/** Lengths up to this (plus 8 per gap or unit, and at most {@link DENSE_MAX}) get suffix sums indexed by length instead of a sorted list. */
const DENSE_SLACK = 65_536;

/** The longest length indexed (the reused arrays then take 16 MB). */
const DENSE_MAX = 1 << 20;

/** True when suffix sums indexed by length up to `longest` pay for `items` lengths. */
function dense(longest: number, items: number): boolean {
  return longest <= Math.min(DENSE_MAX, DENSE_SLACK + 8 * items);
}

/** The reused arrays of dense suffix sums, grown on demand: count (then Σ count) and Σ count · length by length. */
let scratch = { count: new Float64Array(0), sum: new Float64Array(0) };

/**
 * fit(l) = Σ_{gaps γ ≥ l} (γ − l + 1) of the unitizing alpha's expected disagreement: over every coder's gaps
 * in the picked continua and, with a background, m whole-continuum gaps per background length less the picked
 * continua's own. All terms are integers, so however they are summed the result is the same: dense suffix
 * sums by length when the longest continuum is short enough for the number of units, else sorted lengths and
 * binary search.
 */
function gapFit(p: PackedContinua, pick: Int32Array | null, n: number, longest: number, units: number, background?: SortedLengths): (l: number) => number {
  const { m } = p;
  const bg = background ? denseOf(background) : undefined;
  const outside = (l: number): number => (background ? m * (bg ? atDense(bg, l) : atLeast(background, l)) : 0);
  if (!dense(longest, units + n * m)) {
    const gaps: number[] = [];
    const own: number[] = [];
    for (let q = 0; q < n; q++) {
      const k = pick ? (pick[q] as number) : q;
      forEachGap(p, k, (g) => gaps.push(g));
      own.push(p.length[k] as number);
    }
    const added = sortedLengths(gaps);
    const removed = background ? sortedLengths(own) : undefined;
    return (l) => atLeast(added, l) + (removed ? outside(l) - m * atLeast(removed, l) : 0);
  }
  if (scratch.count.length < longest + 2) scratch = { count: new Float64Array(longest + 2), sum: new Float64Array(longest + 2) };
  const { count, sum } = scratch;
  count.fill(0, 0, longest + 2);
  const add = (g: number): void => {
    count[g] = (count[g] as number) + 1;
  };
  for (let q = 0; q < n; q++) {
    const k = pick ? (pick[q] as number) : q;
    forEachGap(p, k, add);
    if (background) count[p.length[k] as number] = (count[p.length[k] as number] as number) - m;
  }
  const table = suffixSums(count, sum, longest);
  return (l) => atDense(table, l) + outside(l);
}

/** Calls `f` with the length of every gap of every coder of continuum k. */
function forEachGap(p: PackedContinua, k: number, f: (gap: number) => void): void {
  const { m, bounds, pos } = p;
  const len = p.length[k] as number;
  for (let c = 0; c < m; c++) {
    const end = bounds[k * (m + 1) + c + 1] as number;
    let at = 0;
    for (let x = bounds[k * (m + 1) + c] as number; x < end; x += 2) {
      const s = pos[x] as number;
      if (s > at) f(s - at);
      at = pos[x + 1] as number;
    }
    if (len > at) f(len - at);
  }
}

/** Dense suffix sums by length: `count[l]` = Σ_{γ ≥ l} count, `sum[l]` = Σ_{γ ≥ l} count · γ, for l ≤ `longest`. */
interface DenseLengths {
  count: Float64Array;
  sum: Float64Array;
  longest: number;
}

/** Turns per-length counts (`count[0..longest]`, `count[longest + 1]` = 0) into {@link DenseLengths}, in place, `sum` written. */
function suffixSums(count: Float64Array, sum: Float64Array, longest: number): DenseLengths {
  sum[longest + 1] = 0;
  for (let l = longest; l >= 0; l--) {
    sum[l] = (sum[l + 1] as number) + (count[l] as number) * l;
    count[l] = (count[l] as number) + (count[l + 1] as number);
  }
  return { count, sum, longest };
}

/** Σ_{γ ≥ l} (γ − l + 1) from dense suffix sums. */
function atDense(x: DenseLengths, l: number): number {
  return l > x.longest ? 0 : (x.sum[l] as number) - (l - 1) * (x.count[l] as number);
}

/** Dense suffix sums of a background's lengths, made once per background (null when its longest is too long or not an integer). */
const DENSE = new WeakMap<SortedLengths, DenseLengths | null>();

function denseOf(x: SortedLengths): DenseLengths | null {
  let d = DENSE.get(x);
  if (d === undefined) {
    const longest = x.sorted.length > 0 ? (x.sorted[x.sorted.length - 1] as number) : 0;
    d = null;
    if (dense(longest, x.sorted.length) && x.sorted.every((l) => Number.isInteger(l) && l >= 0)) {
      const count = new Float64Array(longest + 2);
      for (const l of x.sorted) count[l] = (count[l] as number) + 1;
      d = suffixSums(count, new Float64Array(longest + 2), longest);
    }
    DENSE.set(x, d);
  }
  return d;
}

/** Lengths sorted ascending with suffix sums, for Σ_{γ ≥ l} (γ − l + 1); `total` their sum. */
export interface SortedLengths {
  sorted: Float64Array;
  suffix: Float64Array;
  total: number;
}

/** {@link SortedLengths} of `lengths`: pass every continuum's length as the background of {@link unitizingAlpha} when only the continua where a code occurs are given. */
export function sortedLengths(lengths: readonly number[]): SortedLengths {
  const sorted = Float64Array.from(lengths).sort();
  const suffix = new Float64Array(sorted.length + 1);
  for (let k = sorted.length - 1; k >= 0; k--) suffix[k] = (suffix[k + 1] as number) + (sorted[k] as number);
  return { sorted, suffix, total: suffix[0] as number };
}

/** Σ_{γ ≥ l} (γ − l + 1) over sorted lengths. */
function atLeast(x: SortedLengths, l: number): number {
  let lo = 0;
  let hi = x.sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((x.sorted[mid] as number) >= l) hi = mid;
    else lo = mid + 1;
  }
  return (x.suffix[lo] as number) - (l - 1) * (x.sorted.length - lo);
}

/**
 * Σ δ² over the overlapping sections of two coders' continua of `length` (coder a's stretches at
 * `pos[a0..a1)`, b's at `pos[b0..b1)`: flat, sorted, disjoint), walking both coders' sections (gaps and
 * coded stretches alternately) without building them.
 */
function pairDisagreement(pos: Int32Array, a0: number, a1: number, b0: number, b1: number, length: number): number {
  let ia = a0;
  let pa = 0;
  let ib = b0;
  let pb = 0;
  let sum = 0;
  while (pa < length && pb < length) {
    const w1 = ia < a1 && pa === pos[ia];
    const s1 = pa;
    const e1 = w1 ? (pos[ia + 1] as number) : ia < a1 ? (pos[ia] as number) : length;
    const w2 = ib < b1 && pb === pos[ib];
    const s2 = pb;
    const e2 = w2 ? (pos[ib + 1] as number) : ib < b1 ? (pos[ib] as number) : length;
    if (w1 && w2) {
      if (s1 < e2 && s2 < e1) sum += (s1 - s2) ** 2 + (e1 - e2) ** 2;
    } else if (w1) {
      if (s1 >= s2 && e1 <= e2) sum += (e1 - s1) ** 2;
    } else if (w2) {
      if (s2 >= s1 && e2 <= e1) sum += (e2 - s2) ** 2;
    }
    if (e1 <= e2) {
      pa = e1;
      if (w1) ia += 2;
    }
    if (e2 <= e1) {
      pb = e2;
      if (w2) ib += 2;
    }
  }
  return sum;
}
