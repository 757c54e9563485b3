/**
 * The one vector similarity of Marginalia's ranking (src/domain/ranking): cosine similarity,
 * cos(a, b) = a . b / (|a| |b|), for the dense vectors of an embedding model (search_semantic,
 * find_similar_segments) and the sparse TF-IDF vectors of the code ranker (suggest_codes_for_range,
 * auto_suggest_codes). TF-IDF as in C. D. Manning, P. Raghavan and H. Schütze, "Introduction to Information
 * Retrieval", Cambridge University Press, 2008, section 6.3 (raw term frequency times idf).
 */
import { termFrequencies } from './bm25';

/** A sparse vector: term -> weight. */
export type SparseVector = Map<string, number>;

/** A dense vector (an embedding) or a {@link SparseVector}. */
export type Vector = readonly number[] | Float32Array | SparseVector;

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

/** |v|^2 of sparse vectors, computed once per vector (vectors are not changed after they are built). */
const sparseNorms = new WeakMap<SparseVector, number>();

function sparseNormSq(v: SparseVector): number {
  let n = sparseNorms.get(v);
  if (n === undefined) {
    n = 0;
    for (const w of v.values()) n += w * w;
    sparseNorms.set(v, n);
  }
  return n;
}

/** a . b, |a|^2 and |b|^2 of two sparse vectors (terms missing from one count as 0); walks the smaller. */
function sparseProducts(a: SparseVector, b: SparseVector): [number, number, number] {
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  let dot = 0;
  for (const [t, w] of small) dot += w * (large.get(t) ?? 0);
  return [dot, sparseNormSq(a), sparseNormSq(b)];
}

/** a . b, |a|^2 and |b|^2 of two dense vectors of one dimension. */
function denseProducts(a: readonly number[] | Float32Array, b: readonly number[] | Float32Array): [number, number, number] {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] as number;
    const y = b[i] as number;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  return [dot, na, nb];
}

/**
 * Cosine similarity of two vectors of one kind: -1..1 (0..1 for non-negative weights, as TF-IDF vectors
 * have). 0 when either vector is all zeros, when two dense vectors differ in dimension, or when one is
 * dense and the other sparse. Clamped to [-1, 1] against rounding.
 */
export function cosine(a: Vector, b: Vector): number {
  let products: [number, number, number];
  if (a instanceof Map || b instanceof Map) {
    if (!(a instanceof Map && b instanceof Map)) return 0;
    products = sparseProducts(a, b);
  } else {
    if (a.length !== b.length) return 0;
    products = denseProducts(a, b);
  }
  const [dot, na, nb] = products;
  if (na === 0 || nb === 0) return 0;
  return Math.max(-1, Math.min(1, dot / Math.sqrt(na * nb)));
}
