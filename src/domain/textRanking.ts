/**
 * Text relevance for the suggestion tools: tokenising with stemming, BM25 ranking, TF-IDF cosine
 * similarity, and a fast token-set similarity join for near-duplicate code names. Pure functions and
 * small classes over strings; nothing here reads the project.
 *
 * Stemming: the Porter stemmer (M. F. Porter, "An algorithm for suffix stripping", Program 14(3), 1980)
 * as implemented by the npm package `stemmer` (Titus Wormer; MIT, no dependencies, no native code).
 *
 * Ranking: Okapi BM25 as given by S. Robertson and H. Zaragoza, "The Probabilistic Relevance Framework:
 * BM25 and Beyond", Foundations and Trends in Information Retrieval 3(4), 2009, with the non-negative
 * IDF variant ln(1 + (N - df + 0.5) / (df + 0.5)) that Lucene uses, k1 = 1.2 and b = 0.75.
 */
import { stemmer } from 'stemmer';

/**
 * English function words dropped before ranking (they say nothing about what a passage is about).
 * A compact list in the spirit of the SMART and Snowball stop lists, contractions included.
 */
export const STOP_WORDS: ReadonlySet<string> = new Set(
  (
    "a about above after again against all also am an and any are aren't as at be because been before being below between both but by " +
    "can can't cannot could couldn't did didn't do does doesn't doing don't down during each else ever every few for from further get " +
    "gets got had hadn't has hasn't have haven't having he he'd he'll he's her here here's hers herself him himself his how how's i i'd " +
    "i'll i'm i've if in into is isn't it it's its itself just let's like me more most much mustn't my myself no nor not now of off on " +
    "once only or other ought our ours ourselves out over own really same shan't she she'd she'll she's should shouldn't so some such " +
    "than that that's the their theirs them themselves then there there's these they they'd they'll they're they've this those through " +
    'to too under until up upon us very was wasn\'t we we\'d we\'ll we\'re we\'ve well were weren\'t what what\'s when when\'s where ' +
    "where's which while who who's whom why why's will with won't would wouldn't yeah yes yet you you'd you'll you're you've your yours " +
    'yourself yourselves um uh oh okay ok'
  ).split(/\s+/),
);

/** A word token: its normalised, stemmed term and the word as written (lower-cased). */
export interface Token {
  term: string;
  word: string;
}

const WORD = /[\p{L}\p{N}]+(?:['’][\p{L}\p{N}]+)*/gu;
const ASCII_WORD = /^[a-z]+$/;
const stemCache = new Map<string, string>();
const STEM_CACHE_MAX = 200_000;

/** The Porter stem of a lower-case ASCII word (other words are returned unchanged). Memoised. */
export function stem(word: string): string {
  let s = stemCache.get(word);
  if (s !== undefined) return s;
  s = ASCII_WORD.test(word) ? stemmer(word) : word;
  if (stemCache.size >= STEM_CACHE_MAX) stemCache.clear();
  stemCache.set(word, s);
  return s;
}

/**
 * The word tokens of `text`, in order: NFC-normalised and lower-cased; runs of letters and digits with
 * inner apostrophes ("don't"); a possessive "'s" dropped; stop words, one-letter words and pure numbers
 * (timestamps) dropped unless `keepStopWords`; each word stemmed with the Porter stemmer.
 */
export function tokenize(text: string, opts: { keepStopWords?: boolean } = {}): Token[] {
  const out: Token[] = [];
  for (const m of text.normalize('NFC').toLowerCase().matchAll(WORD)) {
    let w = m[0].replace(/’/g, "'");
    if (w.endsWith("'s")) w = w.slice(0, -2);
    if (!opts.keepStopWords && (w.length < 2 || STOP_WORDS.has(w) || /^[0-9]+$/.test(w))) continue;
    if (w.length === 0) continue;
    out.push({ term: stem(w.replace(/'/g, '')), word: w });
  }
  return out;
}

/** Term frequencies of a list of terms. */
export function termFrequencies(ts: readonly string[]): Map<string, number> {
  const tf = new Map<string, number>();
  for (const t of ts) tf.set(t, (tf.get(t) ?? 0) + 1);
  return tf;
}

/** BM25 parameters: `k1` saturates term frequency, `b` normalises by document length. */
export interface Bm25Params {
  k1: number;
  b: number;
}

/** The usual values (Robertson & Zaragoza 2009, section 3.5): k1 = 1.2, b = 0.75. */
export const BM25_DEFAULTS: Bm25Params = { k1: 1.2, b: 0.75 };

/** One scored document of a {@link Bm25Index} search: its index, BM25 score and the query terms it holds. */
export interface Bm25Hit {
  doc: number;
  score: number;
  matched: string[];
}

/**
 * An Okapi BM25 index over documents given as term lists (Robertson & Zaragoza 2009, eq. 3.15, with
 * Lucene's non-negative IDF). Scoring walks an inverted index, so a query costs time in proportion to
 * the postings of its terms, not to the number of documents.
 */
export class Bm25Index {
  private readonly postings = new Map<string, { docs: number[]; tfs: number[] }>();
  private readonly lengths: Float64Array;
  private readonly avgdl: number;
  readonly size: number;

  constructor(
    docs: readonly (readonly string[])[],
    private readonly params: Bm25Params = BM25_DEFAULTS,
  ) {
    this.size = docs.length;
    this.lengths = new Float64Array(docs.length);
    let total = 0;
    docs.forEach((d, i) => {
      this.lengths[i] = d.length;
      total += d.length;
      for (const [t, f] of termFrequencies(d)) {
        let p = this.postings.get(t);
        if (!p) this.postings.set(t, (p = { docs: [], tfs: [] }));
        p.docs.push(i);
        p.tfs.push(f);
      }
    });
    this.avgdl = docs.length > 0 ? total / docs.length || 1 : 1;
  }

  /** Number of documents holding `term`. */
  df(term: string): number {
    return this.postings.get(term)?.docs.length ?? 0;
  }

  /** IDF of a term: ln(1 + (N - df + 0.5) / (df + 0.5)), always positive. */
  idf(term: string): number {
    const df = this.df(term);
    return Math.log(1 + (this.size - df + 0.5) / (df + 0.5));
  }

  /** The BM25 weight of a term occurring `tf` times in document `doc`. */
  private weight(term: string, tf: number, doc: number): number {
    const { k1, b } = this.params;
    const norm = k1 * (1 - b + (b * (this.lengths[doc] ?? 0)) / this.avgdl);
    return (this.idf(term) * (tf * (k1 + 1))) / (tf + norm);
  }

  /**
   * Scores every document holding at least one of the query's terms (each distinct term counted once)
   * and returns them best first (ties by document index), at most `limit`.
   */
  search(query: readonly string[], limit = Number.POSITIVE_INFINITY): Bm25Hit[] {
    const scores = new Map<number, Bm25Hit>();
    for (const term of new Set(query)) {
      const p = this.postings.get(term);
      if (!p) continue;
      for (let i = 0; i < p.docs.length; i++) {
        const doc = p.docs[i]!;
        let hit = scores.get(doc);
        if (!hit) scores.set(doc, (hit = { doc, score: 0, matched: [] }));
        hit.score += this.weight(term, p.tfs[i]!, doc);
        hit.matched.push(term);
      }
    }
    return [...scores.values()].sort((a, b) => b.score - a.score || a.doc - b.doc).slice(0, limit);
  }

  /**
   * The score document `doc` would get from a query holding all its own terms: the most any query can
   * reach for it. `score / selfScore` is the share of the document's term weight a query matched (0..1).
   */
  selfScore(docTerms: readonly string[], doc: number): number {
    let s = 0;
    for (const [t, f] of termFrequencies(docTerms)) s += this.weight(t, f, doc);
    return s;
  }
}

/** A sparse vector: term -> weight. */
export type SparseVector = Map<string, number>;

/** The TF-IDF vector of `ts` (raw term frequency times `idf(term)`), scaled to unit length. */
export function tfidfVector(ts: readonly string[], idf: (term: string) => number): SparseVector {
  const v: SparseVector = new Map();
  let norm = 0;
  for (const [t, f] of termFrequencies(ts)) {
    const w = f * idf(t);
    if (w <= 0) continue;
    v.set(t, w);
    norm += w * w;
  }
  norm = Math.sqrt(norm);
  if (norm > 0) for (const [t, w] of v) v.set(t, w / norm);
  return v;
}

/** Cosine similarity of two unit-length sparse vectors (0..1 for non-negative weights). */
export function cosine(a: SparseVector, b: SparseVector): number {
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  let dot = 0;
  for (const [t, w] of small) dot += w * (large.get(t) ?? 0);
  return Math.min(1, dot);
}

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
  if (nameMin <= 0) diceJoin(items.map((it) => it.memo), threshold / MEMO_WEIGHT, verify);
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
