/**
 * Material for suggesting codes (suggest_codes_for_range, auto_suggest_codes, get_uncoded_segments): the
 * uncoded meaning units of a source, and the codebook ranked for a passage by BM25 against each code's name
 * and memo and by TF-IDF cosine against its coded segments (stemming, BM25 and cosine from the one ranking
 * module, src/domain/ranking). Positions and lengths count Unicode code points.
 */
import { ToolError } from '../core/errors';
import { sliceCp } from '../core/text';
import type { DomainContext } from './events';
import type { Segment } from './model';
import type { CodeWithCounts, ProjectRepository, SourceWithCounts, SuggestionBatchRecord, SuggestionRecord } from './ports';
import { Bm25Index } from './ranking/bm25';
import { cosine, tfidfVector, type SparseVector } from './ranking/similarity';
import { tokenize, type Token } from './ranking/stemmer';
import { requireSource } from './sources';
import { createBatch, requireTextRange, type CodingInput, type TextRange } from './suggestions';
import { mergeRanges, splitUnits, uncoveredParts, type TextUnit } from './textUnits';

type Ctx = DomainContext<ProjectRepository>;

/** How many codes suggest_codes_for_range proposes by default (QualCoder-v2: top 5). */
export const DEFAULT_RANGE_LIMIT = 5;
/** auto_suggest_codes: the least confidence (0-100) a unit's best code needs to be proposed. */
export const DEFAULT_AUTO_MIN_CONFIDENCE = 30;
/** auto_suggest_codes: uncoded parts with fewer distinct content terms than this are not proposed for ("How does that feel?"). */
export const MIN_AUTO_TERMS = 3;
/** Longest text excerpt in analysis results, in code points. */
export const EXCERPT_LENGTH = 200;

// ------------------------------------------------------------------------------------------------
// material: uncoded units

/** A unit's uncoded part, with its length and an excerpt (positions and lengths in code points). */
export interface UncodedRange extends TextUnit {
  length: number;
  text: string;
}

/** Coverage of a text source by coded segments and its uncoded meaning units. */
export interface UncodedAnalysis {
  source: SourceWithCounts;
  total_length: number;
  coded_length: number;
  segment_count: number;
  unit_count: number;
  ranges: UncodedRange[];
}

/**
 * The uncoded parts of a text source's meaning units (speaker turns, else paragraphs, long ones cut at
 * sentence boundaries; see textUnits.ts), in text order, with how much of the text any code covers.
 * Errors: SOURCE_NOT_FOUND, INVALID_POSITION (a source without text).
 */
export function analyzeUncoded(ctx: Ctx, sourceId: number): UncodedAnalysis {
  const source = requireSource(ctx, sourceId);
  const text = ctx.repo.getSourceText(sourceId);
  if (text === null) throw new ToolError('INVALID_POSITION', `The source "${source.name}" (${source.type}) has no text to analyse`);
  const segments = ctx.repo.listSegmentsForSource(sourceId);
  const covered = mergeRanges(segments.map((s) => ({ start: s.start_pos, end: s.end_pos })));
  const units = splitUnits(text);
  const parts = uncoveredParts(text, units, covered);
  return {
    source,
    total_length: source.length,
    coded_length: covered.reduce((n, r) => n + (r.end - r.start), 0),
    segment_count: segments.length,
    unit_count: units.length,
    ranges: parts.map((p) => ({ ...p, length: p.end - p.start, text: sliceCp(text, p.start, p.end) })),
  };
}

/** The first `max` code points of `text`, with "..." when cut. */
export function excerpt(text: string, max = EXCERPT_LENGTH): string {
  const cps = Array.from(text);
  return cps.length <= max ? text : `${cps.slice(0, max).join('')}...`;
}

// ------------------------------------------------------------------------------------------------
// material: ranking codes for a passage

/** A code's relevance to a passage: confidence 0-100 and the measures behind it. */
export interface RankedCode {
  code_id: number;
  name: string;
  color: string;
  /** round(100 x score) */
  confidence: number;
  /** 1 - (1 - relevance) x (1 - segment_similarity), 0..1 */
  score: number;
  /** BM25 of the passage against the code's name (weighted twice) and memo */
  bm25: number;
  /** bm25 / the code's BM25 self-score: the share of the code's term weight the passage holds, 0..1 */
  relevance: number;
  /** TF-IDF cosine between the passage and the code's coded segments, 0..1 (0 for an unused code) */
  segment_similarity: number;
  /** words of the passage found in the code's name or memo */
  matched_terms: string[];
  /** segments compared (the code's segments, less those overlapping the passage itself) */
  segment_count: number;
  rationale: string;
}

interface CodeProfile {
  code: CodeWithCounts;
  docTerms: string[];
  selfScore: number;
  segments: { segment: Segment; terms: string[] }[];
  segVector: SparseVector | null;
}

/**
 * Ranks the codebook for passages of text with two measures (see {@link RankedCode}): BM25 (Robertson &
 * Zaragoza 2009) of the passage against each code's name (counted twice, a simple BM25F-style field
 * weight) and memo, normalised by the code's self-score; and the TF-IDF cosine between the passage and
 * the code's coded segments, IDF over the codes' segment collections. Terms are Porter-stemmed
 * (src/domain/ranking/stemmer.ts), so "watering" meets "Water disputes".
 */
export class CodeRanker {
  private readonly profiles: CodeProfile[];
  private readonly bm25: Bm25Index;
  private readonly segIndex: Bm25Index;
  private readonly segIdf: (t: string) => number;

  /** Reads every code and its segments from the repository. */
  constructor(repo: ProjectRepository) {
    const codes = repo.listCodes();
    this.profiles = codes.map((code) => {
      const nameTerms = tokenize(code.name).map((t) => t.term);
      const memoTerms = code.memo ? tokenize(code.memo).map((t) => t.term) : [];
      const segments =
        code.segment_count > 0 ? repo.listSegmentsForCode(code.code_id).map((segment) => ({ segment, terms: tokenize(segment.text).map((t) => t.term) })) : [];
      return { code, docTerms: [...nameTerms, ...nameTerms, ...memoTerms], selfScore: 0, segments, segVector: null };
    });
    this.bm25 = new Bm25Index(this.profiles.map((p) => p.docTerms));
    this.profiles.forEach((p, i) => (p.selfScore = this.bm25.selfScore(p.docTerms, i)));
    const withSegments = this.profiles.filter((p) => p.segments.length > 0);
    this.segIndex = new Bm25Index(withSegments.map((p) => p.segments.flatMap((s) => s.terms)));
    this.segIdf = (t) => this.segIndex.idf(t);
    for (const p of withSegments)
      p.segVector = tfidfVector(
        p.segments.flatMap((s) => s.terms),
        this.segIdf,
      );
  }

  /** Number of codes in the codebook. */
  get codeCount(): number {
    return this.profiles.length;
  }

  /** True when `term` occurs in some code's name or memo. */
  knows(term: string): boolean {
    return this.bm25.df(term) > 0;
  }

  /**
   * Codes with a score above 0 for `passage`, best first (ties by name). When `exclude` names the
   * passage's own place, segments overlapping it are left out of the segment similarity (a passage is
   * not similar to itself).
   */
  rank(passage: string | Token[], exclude?: { source_id: number; start: number; end: number }): RankedCode[] {
    const tokens = typeof passage === 'string' ? tokenize(passage) : passage;
    const words = new Map<string, string>();
    for (const t of tokens) if (!words.has(t.term)) words.set(t.term, t.word);
    const query = tokens.map((t) => t.term);
    const hits = new Map(this.bm25.search(query).map((h) => [h.doc, h]));
    const qVector = tfidfVector(query, this.segIdf);
    const out: RankedCode[] = [];
    this.profiles.forEach((p, i) => {
      const hit = hits.get(i);
      const bm25 = hit?.score ?? 0;
      const relevance = p.selfScore > 0 ? Math.min(1, bm25 / p.selfScore) : 0;
      let segVector = p.segVector;
      let segCount = p.segments.length;
      if (exclude && p.segments.some((s) => overlaps(s.segment, exclude))) {
        const kept = p.segments.filter((s) => !overlaps(s.segment, exclude));
        segCount = kept.length;
        segVector =
          kept.length > 0
            ? tfidfVector(
                kept.flatMap((s) => s.terms),
                this.segIdf,
              )
            : null;
      }
      const similarity = segVector ? cosine(qVector, segVector) : 0;
      const score = 1 - (1 - relevance) * (1 - similarity);
      if (score <= 0) return;
      const matched = (hit?.matched ?? []).map((t) => words.get(t) ?? t);
      out.push({
        code_id: p.code.code_id,
        name: p.code.name,
        color: p.code.color,
        confidence: Math.round(100 * score),
        score: round(score),
        bm25: round(bm25),
        relevance: round(relevance),
        segment_similarity: round(similarity),
        matched_terms: matched,
        segment_count: segCount,
        rationale: rationaleOf(p.code.name, matched, bm25, relevance, similarity, segCount),
      });
    });
    return out.sort((a, b) => b.score - a.score || a.name.localeCompare(b.name));
  }
}

function overlaps(s: Segment, r: { source_id: number; start: number; end: number }): boolean {
  return s.source_id === r.source_id && s.start_pos < r.end && s.end_pos > r.start;
}

function round(x: number): number {
  return Math.round(x * 1000) / 1000;
}

function rationaleOf(name: string, matched: string[], bm25: number, relevance: number, similarity: number, segCount: number): string {
  const parts: string[] = [];
  if (matched.length > 0) {
    parts.push(
      `The passage shares ${matched.map((w) => `"${w}"`).join(', ')} with the name or memo of "${name}" (BM25 ${bm25.toFixed(2)}, ${Math.round(100 * relevance)}% of the code's term weight)`,
    );
  }
  if (similarity > 0) parts.push(`it reads like the code's ${segCount} coded segment(s) (TF-IDF cosine ${similarity.toFixed(2)})`);
  return parts.length > 0 ? `${parts.join('; ')}.` : '';
}

/**
 * Codes for one range of a text source, best first (at most `limit`, confidence at least `minConfidence`),
 * leaving out codes whose segment already covers the whole range. Errors: SOURCE_NOT_FOUND, INVALID_POSITION.
 */
export function rankCodesForRange(
  ctx: Ctx,
  sourceId: number,
  start: number,
  end: number,
  opts: { limit?: number; minConfidence?: number } = {},
): { range: TextRange; ranked: RankedCode[]; already_coded: number[] } {
  const range = requireTextRange(ctx, sourceId, start, end);
  const ranker = new CodeRanker(ctx.repo);
  const covering = new Set(
    ctx.repo
      .segmentsOverlapping(sourceId, start, end)
      .filter((s) => s.start_pos <= start && s.end_pos >= end)
      .map((s) => s.code_id),
  );
  const ranked = ranker
    .rank(range.text, { source_id: sourceId, start, end })
    .filter((r) => !covering.has(r.code_id) && r.confidence >= (opts.minConfidence ?? 1))
    .slice(0, opts.limit ?? DEFAULT_RANGE_LIMIT);
  return { range, ranked, already_coded: [...covering] };
}

/**
 * Proposes codes for a range as a batch (suggest_codes_for_range): one pending coding suggestion per
 * ranked code, skipping codes already pending for exactly this range. No batch is made when no code
 * qualifies. Emits suggestion.batch_created. Errors: SOURCE_NOT_FOUND, INVALID_POSITION.
 */
export function suggestCodesForRange(
  ctx: Ctx,
  input: { source_id: number; start_pos: number; end_pos: number; limit?: number; min_confidence?: number },
): { batch: SuggestionBatchRecord | null; items: { suggestion: SuggestionRecord; ranked: RankedCode }[]; already_pending: number[]; already_coded: number[] } {
  const { range, ranked, already_coded } = rankCodesForRange(ctx, input.source_id, input.start_pos, input.end_pos, {
    limit: input.limit,
    minConfidence: input.min_confidence,
  });
  const alreadyPending: number[] = [];
  const fresh = ranked.filter((r) => {
    const p = ctx.repo.findPendingSuggestion('coding', { code_id: r.code_id, source_id: input.source_id, start_pos: input.start_pos, end_pos: input.end_pos });
    if (p) alreadyPending.push(p.suggestion_id);
    return !p;
  });
  if (fresh.length === 0) return { batch: null, items: [], already_pending: alreadyPending, already_coded };
  const made = createBatch(
    ctx,
    {
      kind: 'range',
      source_id: input.source_id,
      start_pos: input.start_pos,
      end_pos: input.end_pos,
      params: { limit: input.limit ?? DEFAULT_RANGE_LIMIT, min_confidence: input.min_confidence ?? 1 },
    },
    fresh.map((r) => ({ ...codingFromRank(input.source_id, input.start_pos, input.end_pos, r), range })),
  );
  return { batch: made.batch, items: made.items.map((suggestion, i) => ({ suggestion, ranked: fresh[i]! })), already_pending: alreadyPending, already_coded };
}

function codingFromRank(sourceId: number, start: number, end: number, r: RankedCode): CodingInput {
  return {
    source_id: sourceId,
    code_id: r.code_id,
    start_pos: start,
    end_pos: end,
    rationale: r.rationale,
    confidence: r.confidence,
    details: { score: r.score, bm25: r.bm25, relevance: r.relevance, segment_similarity: r.segment_similarity, matched_terms: r.matched_terms },
  };
}

/**
 * Proposes codes for a source's uncoded text (auto_suggest_codes): the source is split into meaning
 * units (speaker turns or paragraphs, long ones cut at sentences), and each uncoded part with at least
 * {@link MIN_AUTO_TERMS} distinct content terms whose best code reaches `min_confidence` gets a pending coding suggestion for its `per_range` best codes (default 1).
 * Parts already holding a pending suggestion of that code are skipped. One batch holds them all; none is
 * made when nothing qualifies. Emits suggestion.batch_created.
 * Errors: SOURCE_NOT_FOUND, INVALID_POSITION (a source without text).
 */
export function autoSuggestCodes(
  ctx: Ctx,
  input: { source_id: number; min_confidence?: number; per_range?: number; max_suggestions?: number },
): {
  batch: SuggestionBatchRecord | null;
  items: { suggestion: SuggestionRecord; ranked: RankedCode; unit: UncodedRange }[];
  ranges_analyzed: number;
  skipped_pending: number;
  skipped_short: number;
} {
  const analysis = analyzeUncoded(ctx, input.source_id);
  const minConfidence = input.min_confidence ?? DEFAULT_AUTO_MIN_CONFIDENCE;
  const perRange = input.per_range ?? 1;
  const max = input.max_suggestions ?? Number.POSITIVE_INFINITY;
  const ranker = new CodeRanker(ctx.repo);
  const chosen: { ranked: RankedCode; unit: UncodedRange }[] = [];
  let skipped = 0;
  let tooShort = 0;
  for (const unit of analysis.ranges) {
    if (chosen.length >= max) break;
    const tokens = tokenize(unit.text);
    if (new Set(tokens.map((t) => t.term)).size < MIN_AUTO_TERMS) {
      tooShort++;
      continue;
    }
    for (const r of ranker.rank(tokens).slice(0, perRange)) {
      if (r.confidence < minConfidence || chosen.length >= max) break;
      if (ctx.repo.findPendingSuggestion('coding', { code_id: r.code_id, source_id: input.source_id, start_pos: unit.start, end_pos: unit.end })) {
        skipped++;
        continue;
      }
      chosen.push({ ranked: r, unit });
    }
  }
  if (chosen.length === 0) return { batch: null, items: [], ranges_analyzed: analysis.ranges.length, skipped_pending: skipped, skipped_short: tooShort };
  const fullText = ctx.repo.getSourceText(input.source_id) ?? '';
  const made = createBatch(
    ctx,
    {
      kind: 'auto',
      source_id: input.source_id,
      params: { min_confidence: minConfidence, per_range: perRange, max_suggestions: input.max_suggestions ?? null },
    },
    chosen.map((c) => ({
      ...codingFromRank(input.source_id, c.unit.start, c.unit.end, c.ranked),
      range: { source: analysis.source, fullText, text: c.unit.text },
    })),
  );
  return {
    batch: made.batch,
    items: made.items.map((suggestion, i) => ({ suggestion, ranked: chosen[i]!.ranked, unit: chosen[i]!.unit })),
    ranges_analyzed: analysis.ranges.length,
    skipped_pending: skipped,
    skipped_short: tooShort,
  };
}

/**
 * Frequent words of a source's uncoded text that no code's name or memo contains: vocabulary the
 * codebook does not cover yet, as material for new codes. Counted once per unit; at most `limit`.
 */
export function uncoveredTerms(ranker: CodeRanker, ranges: readonly UncodedRange[], limit = 20): { term: string; unit_count: number }[] {
  const counts = new Map<string, { word: Map<string, number>; n: number }>();
  for (const r of ranges) {
    const seen = new Set<string>();
    for (const t of tokenize(r.text)) {
      if (seen.has(t.term) || ranker.knows(t.term)) continue;
      seen.add(t.term);
      let c = counts.get(t.term);
      if (!c) counts.set(t.term, (c = { word: new Map(), n: 0 }));
      c.n++;
      c.word.set(t.word, (c.word.get(t.word) ?? 0) + 1);
    }
  }
  return [...counts.values()]
    .filter((c) => c.n >= 2)
    .map((c) => ({ term: [...c.word.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0]![0], unit_count: c.n }))
    .sort((a, b) => b.unit_count - a.unit_count || a.term.localeCompare(b.term))
    .slice(0, limit);
}
