/**
 * The similarity searches over coded segments (search_semantic, find_similar_segments; src/tools/searchTools.ts):
 * by the cosine similarity of embedding vectors when a model is configured, else lexically by BM25 over the
 * FTS4 segment index. Stemming, BM25 and cosine come from the one ranking module, src/domain/ranking.
 * Positions count Unicode code points; scores are rounded to 4 decimals in the passages returned.
 */
import type { DomainContext } from './events';
import type { ProjectRepository, SearchFilter, SearchSegment } from './ports';
import { bm25Idf, bm25TermWeight } from './ranking/bm25';
import { cosine } from './ranking/similarity';
import { stemForms } from './ranking/stemmer';
import { textSegmentNotFound } from './segmentKinds';

type Ctx = DomainContext<ProjectRepository>;

/** A segment with its similarity score. */
export interface ScoredSegment {
  segment: SearchSegment;
  score: number;
}

/** A passage (one range of one source) in a similarity result; `codes` lists each segment coding it. */
export interface SimilarPassage {
  segment_id: number;
  source_id: number;
  source_name: string;
  start_pos: number;
  end_pos: number;
  text: string;
  /** true when `text` was cut to {@link MAX_PASSAGE_TEXT} code points */
  text_truncated: boolean;
  score: number;
  codes: { code_id: number; code_name: string; segment_id: number }[];
}

/** Longest passage text in a similarity result, in code points (read_source_content gives the rest). */
export const MAX_PASSAGE_TEXT = 1000;

/** Query terms kept for a lexical similarity query (the most selective ones). */
const MAX_LEXICAL_TERMS = 24;
/**
 * Budget of segments the chosen terms may match (the sum of their document frequencies), so a query of common
 * words does not score most of the project (BM25 rows cost about 10 us each in sql.js).
 */
const MAX_LEXICAL_ROWS = 20_000;

/**
 * Segments lexically similar to `text` by Okapi BM25 ({@link bm25TermWeight}, src/domain/ranking/bm25.ts) over
 * the FTS4 segment index `segment_fts`. The query's terms are its words and, for inflected words, their
 * Porter stems ({@link stemForms}: "rotas" also looks for "rota", "sharing" for "share"), all matched
 * exactly (prefix queries would expand to every indexed word with that prefix, which is slow and
 * unselective); each term is weighted by its frequency in `text`.
 * Terms found in more than half of all segments are dropped; then the most selective (highest idf x query
 * frequency) are used, at most {@link MAX_LEXICAL_TERMS} and only while their document frequencies add up to
 * at most {@link MAX_LEXICAL_ROWS} segments (at least the rarest term). idf as {@link bm25Idf}; statistics
 * from FTS4 matchinfo 'pcnx' and 'pcnalx' (https://sqlite.org/fts3.html#matchinfo).
 *
 * Returns the segments with a positive score that `keep` accepts, best first (ties by segment_id), enough of
 * them to form the best `k` passages (see {@link toPassages}).
 */
export function bm25Segments(ctx: Ctx, text: string, filter: SearchFilter, k: number, keep: (s: SearchSegment) => boolean = () => true): ScoredSegment[] {
  const freq = new Map<string, number>();
  for (const t of ctx.repo.searchTokenize(text)) {
    for (const f of stemForms(t)) freq.set(f, (freq.get(f) ?? 0) + 1);
  }
  const forms = [...freq.keys()].slice(0, 256);
  if (forms.length === 0) return [];
  const stats = ctx.repo.searchSegmentStats(forms.map((f) => `"${f}"`).join(' OR '));
  if (!stats) return [];
  const n = stats[2] as number;
  const idf = (df: number) => bm25Idf(n, df);
  const ranked = forms
    .map((f, i) => ({ f, df: stats[3 + 3 * i + 2] as number, qf: freq.get(f) as number }))
    .filter((c) => c.df > 0)
    .map((c) => ({ ...c, w: idf(c.df) * c.qf }))
    .sort((a, b) => b.w - a.w || a.f.localeCompare(b.f));
  const terms: typeof ranked = [];
  let budget = 0;
  for (const c of ranked) {
    if (terms.length >= MAX_LEXICAL_TERMS) break;
    if (c.df > n / 2 || (terms.length > 0 && budget + c.df > MAX_LEXICAL_ROWS)) continue;
    terms.push(c);
    budget += c.df;
  }
  if (terms.length === 0) {
    const rarest = [...ranked].sort((a, b) => a.df - b.df || a.f.localeCompare(b.f))[0];
    if (rarest) terms.push(rarest);
  }
  if (terms.length === 0) return [];
  const scored: { id: number; score: number }[] = [];
  for (const row of ctx.repo.searchSegmentRows(terms.map((t) => `"${t.f}"`).join(' OR '), filter)) {
    const mi = row.matchinfo; // p, c (1), n, a (avg tokens), l (tokens of this row), then 3 integers per phrase
    const p = mi[0] as number;
    const avg = Math.max(mi[3] as number, 1);
    const len = mi[4] as number;
    let score = 0;
    for (let ph = 0; ph < p; ph++) {
      const tf = mi[5 + 3 * ph] as number;
      if (tf === 0) continue;
      const t = terms[ph] as (typeof terms)[number];
      score += t.qf * bm25TermWeight(idf(t.df), tf, len, avg);
    }
    if (score > 0) scored.push({ id: row.segment_id, score });
  }
  scored.sort((a, b) => b.score - a.score || a.id - b.id);
  return takeSegments(ctx, scored, keep, k);
}

/**
 * Segments ranked by cosine similarity of their vectors to `query` (vectors by segment id; segments without
 * one are skipped). Returns those `keep` accepts, best first (ties by segment_id), enough of them to form the
 * best `k` passages.
 */
export function cosineSegments(
  ctx: Ctx,
  query: readonly number[] | Float32Array,
  vectors: ReadonlyMap<number, Float32Array>,
  k: number,
  keep: (s: SearchSegment) => boolean = () => true,
): ScoredSegment[] {
  const scored: { id: number; score: number }[] = [];
  for (const [id, v] of vectors) scored.push({ id, score: cosine(query, v) });
  scored.sort((a, b) => b.score - a.score || a.id - b.id);
  return takeSegments(ctx, scored, keep, k);
}

/**
 * Loads the scored ids (sorted best first) as segments, in chunks, keeping those `keep` accepts, until `k`
 * distinct passages (source and range) are certain: it stops after a chunk once k passages are in and the
 * chunk ended below the k-th passage's score, so segments tied with it (the same passage under other codes)
 * are all included.
 */
function takeSegments(ctx: Ctx, scored: { id: number; score: number }[], keep: (s: SearchSegment) => boolean, k: number): ScoredSegment[] {
  const out: ScoredSegment[] = [];
  const passages = new Map<string, number>();
  for (let i = 0; i < scored.length; i += 200) {
    const chunk = scored.slice(i, i + 200);
    const byId = new Map(ctx.repo.getSegmentsForSearch(chunk.map((c) => c.id)).map((s) => [s.segment_id, s]));
    for (const c of chunk) {
      const s = byId.get(c.id);
      if (!s || !keep(s)) continue;
      out.push({ segment: s, score: c.score });
      const key = `${s.source_id}:${s.start_pos}:${s.end_pos}`;
      if (!passages.has(key)) passages.set(key, c.score);
    }
    if (passages.size >= k) {
      const kth = [...passages.values()][k - 1] as number;
      if ((chunk[chunk.length - 1] as (typeof chunk)[number]).score < kth) break;
    }
  }
  return out;
}

/**
 * Merges scored segments into passages: segments of the same source and range (one passage coded with
 * several codes) become one entry listing each coding, scored by its best segment. Returns the best `k`
 * passages, best first. Scores are rounded to 4 decimals.
 */
export function toPassages(scored: readonly ScoredSegment[], k: number): SimilarPassage[] {
  const byRange = new Map<string, SimilarPassage>();
  const order: SimilarPassage[] = [];
  for (const { segment: s, score } of scored) {
    const key = `${s.source_id}:${s.start_pos}:${s.end_pos}`;
    const seen = byRange.get(key);
    if (seen) {
      seen.codes.push({ code_id: s.code_id, code_name: s.code_name, segment_id: s.segment_id });
      continue;
    }
    if (order.length >= k) continue;
    const cut = cutPassageText(s.text);
    const p: SimilarPassage = {
      segment_id: s.segment_id,
      source_id: s.source_id,
      source_name: s.source_name,
      start_pos: s.start_pos,
      end_pos: s.end_pos,
      text: cut.text,
      text_truncated: cut.truncated,
      score: round(score),
      codes: [{ code_id: s.code_id, code_name: s.code_name, segment_id: s.segment_id }],
    };
    byRange.set(key, p);
    order.push(p);
  }
  return order;
}

/** `text` cut to its first {@link MAX_PASSAGE_TEXT} code points, and whether it was cut. */
export function cutPassageText(text: string): { text: string; truncated: boolean } {
  const cps = [...text];
  return cps.length > MAX_PASSAGE_TEXT ? { text: cps.slice(0, MAX_PASSAGE_TEXT).join(''), truncated: true } : { text, truncated: false };
}

/**
 * The segment with id `id` as the similarity searches see it, or SEGMENT_NOT_FOUND (for an AV segment's id,
 * saying that only text segments are compared).
 */
export function requireSearchSegment(ctx: Ctx, id: number): SearchSegment {
  const s = ctx.repo.getSegmentsForSearch([id])[0];
  if (!s) throw textSegmentNotFound(ctx.repo, id, 'similarity searches compare text segments only');
  return s;
}

/** True when `s` is `target` or overlaps it in the same source (excluded from "similar to target"). */
export function overlapsSegment(target: SearchSegment, s: SearchSegment): boolean {
  return s.source_id === target.source_id && s.start_pos < target.end_pos && s.end_pos > target.start_pos;
}

function round(x: number): number {
  return Math.round(x * 10_000) / 10_000;
}
