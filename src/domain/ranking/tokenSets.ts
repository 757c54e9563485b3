/**
 * Token-set similarity for near-duplicate codes (detect_duplicate_codes; src/domain/ranking): the Dice
 * coefficient of stemmed token sets and an exact similarity join over them (PPJoin, Xiao et al. 2008).
 */

/** Interns terms as small integers, so token sets can be compared as sorted integer arrays. */
export class Vocabulary {
  private readonly ids = new Map<string, number>();
  /** The id of `term`, assigning the next one when new. */
  id(term: string): number {
    let i = this.ids.get(term);
    if (i === undefined) this.ids.set(term, (i = this.ids.size));
    return i;
  }
  get size(): number {
    return this.ids.size;
  }
}

/** The distinct ids of `ts` in `vocab`, sorted ascending. */
export function tokenSet(ts: readonly string[], vocab: Vocabulary): Int32Array {
  const ids = Int32Array.from(new Set(ts.map((t) => vocab.id(t))));
  return ids.sort();
}

/**
 * Size of the intersection of two ascending integer arrays (a linear merge). With `need`, the merge stops as
 * soon as the elements left cannot bring the overlap to `need` and returns -1 (the positional filter of
 * PPJoin, Xiao et al. 2008, applied while verifying).
 */
export function intersectionSize(a: Int32Array, b: Int32Array, need = 0): number {
  let i = 0;
  let j = 0;
  let n = 0;
  while (i < a.length && j < b.length) {
    if (n + Math.min(a.length - i, b.length - j) < need) return -1;
    const x = a[i]!;
    const y = b[j]!;
    if (x === y) {
      n++;
      i++;
      j++;
    } else if (x < y) i++;
    else j++;
  }
  return n < need ? -1 : n;
}

/** The Dice coefficient of two token sets, 2|A ∩ B| / (|A| + |B|): 1 for equal sets, 0 for disjoint or empty ones. */
export function dice(a: Int32Array, b: Int32Array): number {
  if (a.length === 0 || b.length === 0) return 0;
  return (2 * intersectionSize(a, b)) / (a.length + b.length);
}

/**
 * {@link dice} of two ascending token sets when it is at least `min`, else -1, found out early: the merge
 * stops as soon as the tokens left cannot supply the overlap `min` needs ({@link intersectionSize}'s `need`).
 */
export function diceAtLeast(a: Int32Array, b: Int32Array, min: number): number {
  const la = a.length;
  const lb = b.length;
  if (la === 0 || lb === 0) return min <= 0 ? 0 : -1;
  const n = intersectionSize(a, b, Math.ceil((min * (la + lb)) / 2 - 1e-9));
  return n < 0 ? -1 : (2 * n) / (la + lb);
}

/** One item of {@link similarPairs}: its name's token set and, when it has one, its memo's. */
export interface SimilarityItem {
  name: Int32Array;
  memo: Int32Array | null;
}

/** A pair found by {@link similarPairs}: indexes `a < b`, the combined similarity and its parts (0..1). */
export interface SimilarPair {
  a: number;
  b: number;
  similarity: number;
  name: number;
  /** null unless both items have a memo */
  memo: number | null;
  /**
   * what `similarity` is: `name` (Dice of the names; not both have a memo), `name_and_memo` (0.6 x name +
   * 0.4 x memo), or `memo` (the memos' Dice alone, higher than the weighted score; both memos long enough)
   */
  basis: 'name' | 'name_and_memo' | 'memo';
}

/** Weights of name and memo similarity when both items have a memo (QualCoder-v2's 60 / 40). */
export const NAME_WEIGHT = 0.6;
export const MEMO_WEIGHT = 0.4;

/**
 * Distinct terms (stemmed, stop words dropped) each memo needs for the memos' similarity to count on its own
 * (issue 13, item 11): two differently named codes with near-identical memos of a sentence or more describe
 * the same thing; two short memos ("TODO", "see memo") prove nothing.
 */
export const MEMO_ALONE_MIN_TERMS = 6;

/**
 * The similarity of two items as {@link similarPairs} scores them, or null when it cannot reach `threshold`
 * (checked on the name alone before the memos are compared).
 */
function scorePair(x: SimilarityItem, y: SimilarityItem, threshold: number): Omit<SimilarPair, 'a' | 'b'> | null {
  const name = dice(x.name, y.name);
  const bothMemos = x.memo !== null && y.memo !== null && x.memo.length > 0 && y.memo.length > 0;
  const longMemos = bothMemos && x.memo!.length >= MEMO_ALONE_MIN_TERMS && y.memo!.length >= MEMO_ALONE_MIN_TERMS;
  if (Math.max(bothMemos ? NAME_WEIGHT * name + MEMO_WEIGHT : name, longMemos ? 1 : 0) + 1e-12 < threshold) return null; // cannot reach it
  let memo: number | null = null;
  if (bothMemos) {
    // the least memo similarity that reaches the threshold, weighted or (long memos) alone
    const weightedNeed = (threshold - NAME_WEIGHT * name) / MEMO_WEIGHT;
    const need = (longMemos ? Math.min(weightedNeed, threshold) : weightedNeed) - 1e-9;
    memo = need <= 0 ? dice(x.memo!, y.memo!) : diceAtLeast(x.memo!, y.memo!, need);
    if (memo < 0) return null;
  }
  const weighted = memo === null ? name : NAME_WEIGHT * name + MEMO_WEIGHT * memo;
  if (longMemos && memo! > weighted) return { similarity: memo!, name, memo, basis: 'memo' };
  return { similarity: weighted, name, memo, basis: memo === null ? 'name' : 'name_and_memo' };
}

/**
 * Every pair of items whose similarity reaches `threshold` (0 < threshold <= 1), best first. The
 * similarity is the Dice coefficient of the name token sets, or, when both items have a memo,
 * 0.6 x name Dice + 0.4 x memo Dice (the weighting QualCoder-v2 uses for its token-set ratio); when both
 * memos have at least {@link MEMO_ALONE_MIN_TERMS} terms, the memo Dice alone if that is higher, so
 * near-identical memos flag a pair whatever the names (with the weighting alone, memos 91% alike under
 * unrelated names scored 0.36).
 *
 * Exact and fast: candidate pairs come from a set-similarity join (PPJoin: C. Xiao, W. Wang, X. Lin and
 * J. X. Yu, "Efficient Similarity Joins for Near Duplicate Detection", WWW 2008): tokens are ordered
 * rarest first, only each set's prefix is indexed and probed (the prefix filter of Chaudhuri, Ganti &
 * Kaushik, ICDE 2006), partners too small to reach the threshold are skipped (size filter), and a
 * partner whose remaining tokens cannot supply the overlap needed is dropped (positional filter). Only
 * the surviving candidates are verified (`stats.candidates` counts them, when given). A pair reaching the
 * threshold through the names has name Dice of at least (threshold - 0.4) / 0.6; when that bound is 0 or
 * below, memos are joined as well. Pairs reaching it through the memos alone come from a join of the long
 * memos at Dice >= threshold.
 */
export function similarPairs(items: readonly SimilarityItem[], threshold: number, stats?: { candidates: number }): SimilarPair[] {
  if (!(threshold > 0 && threshold <= 1)) throw new RangeError(`threshold must be in (0, 1], got ${threshold}`);
  const nameMin = (threshold - MEMO_WEIGHT) / NAME_WEIGHT;
  const seen = new Set<number>();
  const out: SimilarPair[] = [];
  const n = items.length;
  const verify = (a: number, b: number) => {
    const lo = Math.min(a, b);
    const hi = Math.max(a, b);
    const key = lo * n + hi;
    if (seen.has(key)) return;
    seen.add(key);
    if (stats) stats.candidates++;
    const s = scorePair(items[lo]!, items[hi]!, threshold);
    if (s && s.similarity + 1e-12 >= threshold) out.push({ a: lo, b: hi, ...s });
  };
  diceJoin(
    items.map((it) => it.name),
    Math.max(0, nameMin),
    verify,
  );
  if (nameMin <= 0)
    diceJoin(
      items.map((it) => it.memo),
      threshold / MEMO_WEIGHT,
      verify,
    );
  diceJoin(
    items.map((it) => (it.memo && it.memo.length >= MEMO_ALONE_MIN_TERMS ? it.memo : null)),
    threshold,
    verify,
  );
  return out.sort((p, q) => q.similarity - p.similarity || p.a - q.a || p.b - q.b);
}

/**
 * Calls `found(i, j)` for every pair of non-empty sets that may have Dice >= `diceMin` (a superset of the
 * pairs that do; `diceMin` 0 means: sharing any token). PPJoin with prefix, size and positional filters.
 */
function diceJoin(sets: readonly (Int32Array | null)[], diceMin: number, found: (i: number, j: number) => void): void {
  // order tokens rarest first (ties by id) and rewrite every set in that order
  const df = new Map<number, number>();
  for (const s of sets) if (s) for (const t of s) df.set(t, (df.get(t) ?? 0) + 1);
  const rank = new Map([...df.keys()].sort((x, y) => df.get(x)! - df.get(y)! || x - y).map((t, i) => [t, i]));
  const ordered = sets.map((s) => (s && s.length > 0 ? Int32Array.from(s, (t) => rank.get(t)!).sort() : null));
  const order = ordered.map((_, i) => i).filter((i) => ordered[i] !== null);
  order.sort((i, j) => ordered[i]!.length - ordered[j]!.length || i - j);
  const j = diceMin <= 0 ? 0 : diceMin / (2 - diceMin); // the Jaccard bound Dice >= diceMin implies
  const postings = new Map<number, { rec: number[]; pos: number[] }>();
  const count = new Int32Array(sets.length);
  const touched: number[] = [];
  for (const x of order) {
    const xs = ordered[x]!;
    const lx = xs.length;
    const minSize = Math.ceil(j * lx - 1e-9);
    const prefix = j <= 0 ? lx : lx - minSize + 1;
    for (let i = 0; i < prefix && i < lx; i++) {
      const p = postings.get(xs[i]!);
      if (!p) continue;
      for (let k = 0; k < p.rec.length; k++) {
        const y = p.rec[k]!;
        if (count[y] === -1) continue;
        const ly = ordered[y]!.length;
        if (ly < minSize) continue;
        if (count[y] === 0) touched.push(y);
        // overlap needed for Dice >= diceMin, and the most this pair can still reach
        const need = Math.max(1, Math.ceil((diceMin * (lx + ly)) / 2 - 1e-9));
        const reach = count[y]! + 1 + Math.min(lx - i - 1, ly - p.pos[k]! - 1);
        count[y] = reach >= need ? count[y]! + 1 : -1;
      }
    }
    for (const y of touched) {
      if (count[y]! > 0) found(x, y);
      count[y] = 0;
    }
    touched.length = 0;
    // index only the shorter mid-prefix: partners probing later are at least as large (PPJoin, lemma 3)
    const indexPrefix = j <= 0 ? lx : lx - Math.ceil(((2 * j) / (1 + j)) * lx - 1e-9) + 1;
    for (let i = 0; i < indexPrefix && i < lx; i++) {
      let p = postings.get(xs[i]!);
      if (!p) postings.set(xs[i]!, (p = { rec: [], pos: [] }));
      p.rec.push(x);
      p.pos.push(i);
    }
  }
}
