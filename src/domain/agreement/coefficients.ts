/**
 * Agreement coefficients for nominal data from any number of coders, pure functions without IO.
 *
 * Input: {@link Ratings}, a reliability data matrix (Krippendorff 2011's layout transposed: one row per
 * unit, one column per coder), each cell a category (an integer, 0-based) or null when that coder did not
 * rate the unit, with an optional weight per row (how many identical units the row stands for; the report
 * folds its units into patterns this way). Every coefficient returns null when it is undefined (0/0).
 */

/** Units x coders: `values[u][c]` the category coder c gave unit u (integer ≥ 0) or null; `weights[u]` the multiplicity of row u (default 1). */
export interface Ratings {
  values: readonly (readonly (number | null)[])[];
  weights?: readonly number[];
}

/** Per unit the number of ratings in each category (`counts[u][k]`), with weights; categories = 1 + the largest category seen (at least `q`). */
export function categoryCounts(r: Ratings, q = 0): { counts: number[][]; weights: number[]; q: number } {
  let max = q - 1;
  for (const row of r.values) for (const v of row) if (v !== null && v > max) max = v;
  const k = max + 1;
  const counts = r.values.map((row) => {
    const c = new Array<number>(k).fill(0);
    for (const v of row) if (v !== null) c[v] = (c[v] as number) + 1;
    return c;
  });
  return { counts, weights: r.values.map((_, u) => r.weights?.[u] ?? 1), q: k };
}

/**
 * The observed agreement Pa: over units rated at least twice, the share of agreeing ordered pairs of
 * ratings, Pa_u = Σ_k n_uk (n_uk − 1) / (n_u (n_u − 1)), averaged over those units (weighted). With two
 * coders and no missing values this is the share of units both coders put in the same category (simple
 * percent agreement / 100). Source: J. L. Fleiss, "Measuring nominal scale agreement among many raters",
 * Psychological Bulletin 76(5), 1971, pp. 378-382 (his P-bar), the observed agreement of Gwet (2008) and
 * Brennan & Prediger (1981) alike. Null without a unit rated twice.
 */
export function observedAgreement(counts: readonly (readonly number[])[], weights: readonly number[]): number | null {
  let sum = 0;
  let w = 0;
  for (let u = 0; u < counts.length; u++) {
    const c = counts[u] as readonly number[];
    let n = 0;
    let agree = 0;
    for (const x of c) {
      n += x;
      agree += x * (x - 1);
    }
    if (n < 2) continue;
    const wu = weights[u] ?? 1;
    sum += (wu * agree) / (n * (n - 1));
    w += wu;
  }
  return w > 0 ? sum / w : null;
}

/** Percent agreement: 100 · {@link observedAgreement} (Fleiss 1971's P-bar in percent; for two coders, the share of units coded alike). Null without a unit rated twice. */
export function percentAgreement(r: Ratings): number | null {
  const { counts, weights } = categoryCounts(r);
  const pa = observedAgreement(counts, weights);
  return pa === null ? null : 100 * pa;
}

/**
 * Cohen's kappa of coders i and j over the units both rated: κ = (po − pe) / (1 − pe), po the share of
 * those units with the same category, pe = Σ_k p_ik · p_jk from each coder's own category shares.
 * Source: J. Cohen, "A coefficient of agreement for nominal scales", Educational and Psychological
 * Measurement 20(1), 1960, pp. 37-46 (equations 1-3). Null when pe = 1 or no unit was rated by both.
 */
export function cohensKappa(r: Ratings, i: number, j: number): number | null {
  const pi = new Map<number, number>();
  const pj = new Map<number, number>();
  let n = 0;
  let agree = 0;
  for (let u = 0; u < r.values.length; u++) {
    const row = r.values[u] as readonly (number | null)[];
    const a = row[i];
    const b = row[j];
    if (a === null || a === undefined || b === null || b === undefined) continue;
    const w = r.weights?.[u] ?? 1;
    n += w;
    if (a === b) agree += w;
    pi.set(a, (pi.get(a) ?? 0) + w);
    pj.set(b, (pj.get(b) ?? 0) + w);
  }
  if (n <= 0) return null;
  let pe = 0;
  for (const [k, x] of pi) pe += (x / n) * ((pj.get(k) ?? 0) / n);
  const po = agree / n;
  return pe >= 1 - 1e-12 ? null : (po - pe) / (1 - pe);
}

/**
 * Fleiss' kappa for many coders: κ = (P̄ − P̄e) / (1 − P̄e), P̄ the {@link observedAgreement} and
 * P̄e = Σ_j p_j², p_j the share of all ratings in category j. Source: J. L. Fleiss, "Measuring nominal scale
 * agreement among many raters", Psychological Bulletin 76(5), 1971, pp. 378-382 (equations 2-5; his example
 * of 30 subjects, 6 raters, 5 categories gives 0.430). Fleiss assumes the same number of ratings per unit;
 * with missing values units rated fewer than twice are left out of P̄ and p_j counts every rating of the
 * remaining units. Null when P̄e = 1 or no unit was rated twice.
 */
export function fleissKappa(r: Ratings): number | null {
  const { counts, weights } = categoryCounts(r);
  return fleissFromCounts(counts, weights);
}

/** {@link fleissKappa} from per-unit category counts (`counts[u][k]`) and unit weights. */
export function fleissFromCounts(counts: readonly (readonly number[])[], weights: readonly number[]): number | null {
  const pa = observedAgreement(counts, weights);
  if (pa === null) return null;
  const totals: number[] = [];
  let all = 0;
  counts.forEach((c, u) => {
    let n = 0;
    for (const x of c) n += x;
    if (n < 2) return;
    const w = weights[u] ?? 1;
    c.forEach((x, k) => (totals[k] = (totals[k] ?? 0) + w * x));
    all += w * n;
  });
  let pe = 0;
  for (const t of totals) pe += ((t ?? 0) / all) ** 2;
  return pe >= 1 - 1e-12 ? null : (pa - pe) / (1 - pe);
}

/**
 * Brennan-Prediger kappa: κ_n = (Pa − 1/q) / (1 − 1/q), chance agreement taken as uniform over the q
 * categories. Source: R. L. Brennan & D. J. Prediger, "Coefficient kappa: some uses, misuses, and
 * alternatives", Educational and Psychological Measurement 41(3), 1981, pp. 687-699 (equation 12, "free
 * marginals"); the multi-coder Pa as in K. L. Gwet, Handbook of Inter-Rater Reliability (4th ed., 2014),
 * ch. 2. `q` is the number of categories a coder could choose (2 for coded / not coded). Null without a unit
 * rated twice or with q < 2.
 */
export function brennanPrediger(r: Ratings, q: number): number | null {
  const { counts, weights } = categoryCounts(r, q);
  return bpFromCounts(counts, weights, q);
}

/** {@link brennanPrediger} from per-unit category counts. */
export function bpFromCounts(counts: readonly (readonly number[])[], weights: readonly number[], q: number): number | null {
  const pa = observedAgreement(counts, weights);
  if (pa === null || q < 2) return null;
  return (pa - 1 / q) / (1 - 1 / q);
}

/**
 * Gwet's AC1: (Pa − Pe) / (1 − Pe) with Pe = 1/(q − 1) · Σ_k π_k (1 − π_k), π_k the mean over units of
 * the share of a unit's ratings in category k. Source: K. L. Gwet, "Computing inter-rater reliability and
 * its variance in the presence of high agreement", British Journal of Mathematical and Statistical
 * Psychology 61(1), 2008, pp. 29-48 (equations 14-15 for two raters, 18-19 for several). π_k is averaged
 * over units rated at least once, Pa over units rated at least twice (Gwet's handling of missing ratings,
 * Handbook ch. 4). Null without a unit rated twice, with q < 2 or Pe = 1.
 */
export function gwetAC1(r: Ratings, q: number): number | null {
  const { counts, weights } = categoryCounts(r, q);
  return ac1FromCounts(counts, weights, q);
}

/** {@link gwetAC1} from per-unit category counts. */
export function ac1FromCounts(counts: readonly (readonly number[])[], weights: readonly number[], q: number): number | null {
  const pa = observedAgreement(counts, weights);
  if (pa === null || q < 2) return null;
  const pi = new Array<number>(q).fill(0);
  let w = 0;
  counts.forEach((c, u) => {
    let n = 0;
    for (const x of c) n += x;
    if (n < 1) return;
    const wu = weights[u] ?? 1;
    c.forEach((x, k) => (pi[k] = (pi[k] ?? 0) + (wu * x) / n));
    w += wu;
  });
  let pe = 0;
  for (const p of pi) pe += (p / w) * (1 - p / w);
  pe /= q - 1;
  return pe >= 1 - 1e-12 ? null : (pa - pe) / (1 - pe);
}
