/**
 * The one BM25 of Marginalia's ranking (src/domain/ranking): Okapi BM25 as given by S. Robertson and
 * H. Zaragoza, "The Probabilistic Relevance Framework: BM25 and Beyond", Foundations and Trends in
 * Information Retrieval 3(4), 333-389, 2009 (eq. 3.15), with the non-negative IDF variant
 * ln(1 + (N - df + 0.5) / (df + 0.5)) that Lucene uses, k1 = 1.2 and b = 0.75.
 *
 * Two callers feed it: {@link Bm25Index} ranks documents held in memory (meaning units, codes' names and
 * memos); the similar-segments search (src/domain/similarSegments.ts) ranks rows of the FTS4 segment index
 * with statistics from SQLite's `matchinfo`, through {@link bm25Idf} and {@link bm25TermWeight}.
 */

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

/** IDF of a term held by `df` of `n` documents: ln(1 + (n - df + 0.5) / (df + 0.5)), always positive. */
export function bm25Idf(n: number, df: number): number {
  return Math.log(1 + (n - df + 0.5) / (df + 0.5));
}

/**
 * The BM25 weight of one term in one document: idf x tf (k1 + 1) / (tf + k1 (1 - b + b len / avgdl)), where
 * `tf` is the term's count in the document, `len` the document's length and `avgdl` the mean length (both in
 * terms).
 */
export function bm25TermWeight(idf: number, tf: number, len: number, avgdl: number, params: Bm25Params = BM25_DEFAULTS): number {
  const { k1, b } = params;
  return (idf * (tf * (k1 + 1))) / (tf + k1 * (1 - b + (b * len) / avgdl));
}

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

  /** IDF of a term ({@link bm25Idf} over this index's documents), always positive. */
  idf(term: string): number {
    return bm25Idf(this.size, this.df(term));
  }

  /** The BM25 weight of a term occurring `tf` times in document `doc`. */
  private weight(term: string, tf: number, doc: number): number {
    return bm25TermWeight(this.idf(term), tf, this.lengths[doc] ?? 0, this.avgdl, this.params);
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
