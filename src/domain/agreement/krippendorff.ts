/**
 * Krippendorff's alpha: over units with missing values (nominal, ordinal, interval metrics) and the
 * unitizing alpha for coded stretches of a continuum (text), pure functions without IO.
 */

/** The metric of Krippendorff's alpha: the difference function δ² between two values. */
export type AlphaMetric = 'nominal' | 'ordinal' | 'interval';

/**
 * Krippendorff's alpha over reliability data with missing values: α = 1 − Do/De = 1 − (n − 1) ·
 * Σ o_ck δ²_ck / Σ n_c n_k δ²_ck, from the coincidence matrix o_ck = Σ_u (number of c-k pairs in u) /
 * (m_u − 1) over units with m_u ≥ 2 values (pairable values), n_c its marginals and n = Σ n_c.
 * δ²: nominal 0/1; ordinal (Σ_{g=c..k} n_g − (n_c + n_k)/2)² over the ordered distinct values; interval
 * (c − k)². Source: K. Krippendorff, "Computing Krippendorff's Alpha-Reliability", University of
 * Pennsylvania, 2011 (sections C-E; its example of 4 observers x 12 units gives nominal 0.743, ordinal
 * 0.815, interval 0.849). `values[u][c]`: coder c's value of unit u, null when missing; `weights[u]` the
 * multiplicity of row u (default 1). Null when no value is pairable or De = 0 (one value throughout).
 */
export function krippendorffAlpha(
  values: readonly (readonly (number | null)[])[],
  metric: AlphaMetric = 'nominal',
  weights?: readonly number[],
): number | null {
  const distinct = [...new Set(values.flatMap((row) => row.filter((v): v is number => v !== null)))].sort((a, b) => a - b);
  const index = new Map(distinct.map((v, i) => [v, i]));
  const V = distinct.length;
  const o = Array.from({ length: V }, () => new Array<number>(V).fill(0));
  values.forEach((row, u) => {
    const present = row.filter((v): v is number => v !== null);
    const m = present.length;
    if (m < 2) return;
    const w = (weights?.[u] ?? 1) / (m - 1);
    const count = new Array<number>(V).fill(0);
    for (const v of present) {
      const i = index.get(v) as number;
      count[i] = (count[i] as number) + 1;
    }
    for (let c = 0; c < V; c++) {
      const nc = count[c] as number;
      if (nc === 0) continue;
      for (let k = 0; k < V; k++) {
        const nk = count[k] as number;
        if (nk === 0) continue;
        (o[c] as number[])[k] = ((o[c] as number[])[k] as number) + w * nc * (c === k ? nc - 1 : nk);
      }
    }
  });
  return alphaFromCoincidences(o, distinct, metric);
}

/** Krippendorff's alpha from a coincidence matrix `o` (values `levels`, ascending) and a metric; see {@link krippendorffAlpha}. */
export function alphaFromCoincidences(o: readonly (readonly number[])[], levels: readonly number[], metric: AlphaMetric): number | null {
  const V = levels.length;
  const nc = o.map((row) => row.reduce((a, b) => a + b, 0));
  const n = nc.reduce((a, b) => a + b, 0);
  if (n <= 1) return null;
  const delta = (c: number, k: number): number => {
    if (c === k) return 0;
    if (metric === 'nominal') return 1;
    if (metric === 'interval') return ((levels[c] as number) - (levels[k] as number)) ** 2;
    const lo = Math.min(c, k);
    const hi = Math.max(c, k);
    let s = 0;
    for (let g = lo; g <= hi; g++) s += nc[g] as number;
    return (s - ((nc[c] as number) + (nc[k] as number)) / 2) ** 2;
  };
  let dO = 0;
  let dE = 0;
  for (let c = 0; c < V; c++) {
    for (let k = 0; k < V; k++) {
      const d = delta(c, k);
      dO += ((o[c] as number[])[k] as number) * d;
      dE += (nc[c] as number) * (nc[k] as number) * d;
    }
  }
  if (dE <= 0) return null;
  return 1 - ((n - 1) * dO) / dE;
}

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
 * Null without units or when De = 0.
 */
export function unitizingAlpha(continua: readonly Continuum[], background?: SortedLengths): UnitizingParts {
  const m = continua[0]?.coders.length ?? 0;
  let L = 0;
  let observed = 0;
  const units: number[] = [];
  const gaps: number[] = [];
  const own: number[] = [];
  for (const c of continua) {
    L += c.length;
    own.push(c.length);
    for (const flat of c.coders) {
      let pos = 0;
      for (let k = 0; k < flat.length; k += 2) {
        const s = flat[k] as number;
        const e = flat[k + 1] as number;
        if (s > pos) gaps.push(s - pos);
        units.push(e - s);
        pos = e;
      }
      if (c.length > pos) gaps.push(c.length - pos);
    }
    // two gaps over the whole continuum disagree nowhere
    for (let i = 0; i < m; i++) {
      for (let j = i + 1; j < m; j++) {
        const a = c.coders[i] ?? [];
        const b = c.coders[j] ?? [];
        if (a.length > 0 || b.length > 0) observed += 2 * pairDisagreement(a, b, c.length);
      }
    }
  }
  if (background) L = background.total;
  if (m < 2 || L <= 0 || units.length === 0) return { observed: 0, expected: 0, alpha: null };
  const dO = observed / (m * (m - 1) * L * L);
  // Σ_{γ ≥ l} (γ − l + 1) over the gaps: these continua's gaps, plus with a background every other continuum
  // as m gaps of its whole length (the background's lengths less these continua's own)
  const added = sortedLengths(gaps);
  const removed = background ? sortedLengths(own) : undefined;
  const N = units.length;
  let num = 0;
  let squares = 0;
  for (const l of units) {
    let fit = atLeast(added, l);
    if (background && removed) fit += m * (atLeast(background, l) - atLeast(removed, l));
    num += ((N - 1) / 3) * (2 * l * l * l - 3 * l * l + l) + l * l * fit;
    squares += l * (l - 1);
  }
  const dE = ((2 / L) * num) / (m * L * (m * L - 1) - squares);
  return { observed: dO, expected: dE, alpha: dE > 0 ? 1 - dO / dE : null };
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
 * Σ δ² over the overlapping sections of two coders' continua of `length` (each: coded stretches, flat,
 * sorted, disjoint), walking both coders' sections (gaps and coded stretches alternately) without building them.
 */
function pairDisagreement(a: readonly number[], b: readonly number[], length: number): number {
  let ia = 0;
  let pa = 0;
  let ib = 0;
  let pb = 0;
  let sum = 0;
  while (pa < length && pb < length) {
    const w1 = ia < a.length && pa === a[ia];
    const b1 = pa;
    const e1 = w1 ? (a[ia + 1] as number) : ia < a.length ? (a[ia] as number) : length;
    const w2 = ib < b.length && pb === b[ib];
    const b2 = pb;
    const e2 = w2 ? (b[ib + 1] as number) : ib < b.length ? (b[ib] as number) : length;
    if (w1 && w2) {
      if (b1 < e2 && b2 < e1) sum += (b1 - b2) ** 2 + (e1 - e2) ** 2;
    } else if (w1) {
      if (b1 >= b2 && e1 <= e2) sum += (e1 - b1) ** 2;
    } else if (w2) {
      if (b2 >= b1 && e2 <= e1) sum += (e2 - b2) ** 2;
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
