/**
 * Krippendorff's alpha: over units with missing values (nominal, ordinal, interval metrics) and the
 * unitizing alpha for coded stretches of a continuum (text, in ./unitizing.ts), pure functions without IO.
 */
export { sortedLengths, unitizingAlpha, type Continuum, type SortedLengths, type UnitizingParts } from './unitizing';

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
