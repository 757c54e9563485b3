/**
 * The suggestion tools that rank (src/domain/ranking, through src/domain/codeRanking.ts, similarContent.ts and
 * duplicateCodes.ts): material for proposing (analyze_content_for_codes, analyze_uncoded_text,
 * detect_duplicate_codes, find_similar_content) and the tools that record ranked codings as a batch for the
 * researcher (suggest_codes_for_range, auto_suggest_codes, suggest_batch_coding). Recording and deciding
 * single suggestions: src/tools/suggestionTools.ts.
 */

import { z } from 'zod';
import {
  analyzeUncoded,
  autoSuggestCodes,
  CodeRanker,
  DEFAULT_AUTO_MIN_CONFIDENCE,
  DEFAULT_RANGE_LIMIT,
  excerpt,
  MIN_AUTO_TERMS,
  suggestCodesForRange,
  uncoveredTerms,
} from '../domain/codeRanking';
import type { RankedCode, UncodedAnalysis, UncodedRange } from '../domain/codeRanking';
import { DEFAULT_DUPLICATE_THRESHOLD, detectDuplicateCodes } from '../domain/duplicateCodes';
import { DEFAULT_SIMILAR_LIMIT, findSimilarContent, suggestBatchCoding } from '../domain/similarContent';
import { MAX_UNIT_LENGTH } from '../domain/textUnits';
import { defineTool } from './defineTool';
import { args, id, position, text } from './schemas';
import { confidence, rationale } from './suggestionSchemas';

const pageOffset = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional().describe('skip this many ranges (paging; default 0)');
const pageLimit = z.number().int().min(1).max(5000).optional().describe('return at most this many ranges (default 200)');
const DEFAULT_PAGE = 200;

const UNITS =
  `Text is split into meaning units: speaker turns (lines like "NAME:", "Name Surname:", "[00:01:02] NAME:", "[id1]", or an Otter.ai "Name  00:13" line), ` +
  `else paragraphs; units longer than ${MAX_UNIT_LENGTH} code points are cut at sentence boundaries. Positions count Unicode code points, end exclusive. `;

function rangeOut(r: UncodedRange) {
  return { start_pos: r.start, end_pos: r.end, length: r.length, unit: r.kind, speaker: r.speaker, text_excerpt: excerpt(r.text) };
}

function coverage(a: UncodedAnalysis) {
  return {
    source_id: a.source.source_id,
    source_name: a.source.name,
    total_length: a.total_length,
    coded_length: a.coded_length,
    uncoded_length: a.total_length - a.coded_length,
    uncoded_percentage: a.total_length === 0 ? 0 : Math.round((1000 * (a.total_length - a.coded_length)) / a.total_length) / 10,
    segment_count: a.segment_count,
    unit_count: a.unit_count,
    range_count: a.ranges.length,
  };
}

function page<T>(items: readonly T[], offset = 0, limit = DEFAULT_PAGE): { items: T[]; offset: number; has_more: boolean } {
  return { items: items.slice(offset, offset + limit), offset, has_more: offset + limit < items.length };
}

/** Arguments of the two uncoded-text analyses: a text source and a page of its uncoded ranges. */
const uncodedInput = args({ source_id: id('the text source'), offset: pageOffset, limit: pageLimit });

/** The uncoded analysis of the source `input` names (SOURCE_NOT_FOUND, INVALID_POSITION) and the page of its ranges asked for. */
function uncodedPage(
  ctx: Parameters<typeof analyzeUncoded>[0],
  input: z.output<typeof uncodedInput>,
): { a: UncodedAnalysis; p: { items: UncodedRange[]; offset: number; has_more: boolean } } {
  const a = analyzeUncoded(ctx, input.source_id);
  return { a, p: page(a.ranges, input.offset, input.limit) };
}

function rankedOut(r: RankedCode) {
  return {
    code_id: r.code_id,
    code_name: r.name,
    confidence: r.confidence,
    score: r.score,
    bm25: r.bm25,
    relevance: r.relevance,
    segment_similarity: r.segment_similarity,
    matched_terms: r.matched_terms,
    rationale: r.rationale,
  };
}

export const analyzeContentForCodes = defineTool({
  name: 'analyze_content_for_codes',
  group: 'ai_code_suggestions',
  title: 'Analyze Content for Codes',
  description:
    'Material for proposing new codes: the uncoded meaning units of a text source, each with the existing code that fits it best (BM25 over stemmed terms; ' +
    'a low best_code confidence means the codebook does not cover it yet), plus uncovered_terms: frequent words of the uncoded text that no code name or memo contains. ' +
    UNITS +
    'Writes nothing. Returns {source_id, source_name, segment_count, total_length, coded_length, uncoded_percentage, analysis, unit_count, range_count, offset, has_more, ' +
    'uncoded_segments: [{start_pos, end_pos, length, unit, speaker, text_excerpt, best_code: {code_id, code_name, confidence} | null}], uncovered_terms: [{term, unit_count}]}. ' +
    'Follow up with suggest_new_code. Errors: SOURCE_NOT_FOUND, INVALID_POSITION (a source without text).',
  input: uncodedInput,
  effect: 'read',
  trust: 'read',
  run: (ctx, input) => {
    const { a, p } = uncodedPage(ctx.domain, input);
    const ranker = new CodeRanker(ctx.domain.repo);
    const c = coverage(a);
    return {
      ...c,
      analysis: `${c.uncoded_percentage}% uncoded: ${a.ranges.length} uncoded range(s) in ${a.unit_count} meaning unit(s); ${a.segment_count} coded segment(s); ${ranker.codeCount} code(s) in the codebook`,
      offset: p.offset,
      has_more: p.has_more,
      uncoded_segments: p.items.map((r) => {
        const best = ranker.rank(r.text)[0];
        return { ...rangeOut(r), best_code: best ? { code_id: best.code_id, code_name: best.name, confidence: best.confidence } : null };
      }),
      uncovered_terms: uncoveredTerms(ranker, a.ranges),
    };
  },
});

export const detectDuplicateCodesTool = defineTool({
  name: 'detect_duplicate_codes',
  group: 'ai_code_suggestions',
  title: 'Detect Duplicate Codes',
  description:
    'Find pairs of codes that look like duplicates, token-level and memo-aware: names are split into words, stop words dropped and words Porter-stemmed ' +
    '("Water dispute" = "Disputes over water"); similarity is the Dice coefficient of the two names\' word sets, or, when both codes have a memo, ' +
    '0.6 x name + 0.4 x memo similarity, or the memo similarity alone when that is higher and both memos have at least 6 distinct words besides stop words ' +
    `(near-identical memos under different names). Pairs at or above threshold (0 to 1, default ${DEFAULT_DUPLICATE_THRESHOLD}) are returned best first. Writes nothing; ` +
    'follow up with suggest_merge_codes. Returns {codes_analyzed, threshold, method, candidate_count, candidates: [{code_a_id, code_a_name, code_b_id, code_b_name, ' +
    'similarity (0-1), similarity_percent, name_similarity, memo_similarity, shared_terms, rationale, code_a_segments, code_b_segments, suggested_merge: {source_code_id, target_code_id}}], elapsed_ms}.',
  input: args({
    threshold: z.number().gt(0).max(1).optional().describe(`least similarity, 0 to 1 (default ${DEFAULT_DUPLICATE_THRESHOLD})`),
    limit: z.number().int().min(1).max(100_000).optional().describe('return at most this many pairs (default 500)'),
  }),
  effect: 'read',
  trust: 'read',
  run: (ctx, input) => {
    const started = performance.now();
    const codes = ctx.domain.repo.listCodes();
    const threshold = input.threshold ?? DEFAULT_DUPLICATE_THRESHOLD;
    const found = detectDuplicateCodes(codes, threshold, input.limit ?? 500);
    const candidates = found.map((d) => {
      const usedA = d.code_a.segment_count + d.code_a.av_segment_count;
      const usedB = d.code_b.segment_count + d.code_b.av_segment_count;
      // merge the less-used code into the more-used one (older code on a tie)
      const [from, into] = usedA < usedB || (usedA === usedB && d.code_a.code_id > d.code_b.code_id) ? [d.code_a, d.code_b] : [d.code_b, d.code_a];
      return {
        code_a_id: d.code_a.code_id,
        code_a_name: d.code_a.name,
        code_b_id: d.code_b.code_id,
        code_b_name: d.code_b.name,
        similarity: d.similarity,
        similarity_percent: Math.round(100 * d.similarity),
        name_similarity: d.name_similarity,
        memo_similarity: d.memo_similarity,
        shared_terms: d.shared_terms,
        rationale: d.rationale,
        code_a_segments: usedA,
        code_b_segments: usedB,
        suggested_merge: { source_code_id: from.code_id, target_code_id: into.code_id },
      };
    });
    return {
      codes_analyzed: codes.length,
      threshold,
      method: 'dice_token_set_stemmed',
      candidate_count: candidates.length,
      candidates,
      elapsed_ms: Math.round(performance.now() - started),
    };
  },
});

export const analyzeUncodedText = defineTool({
  name: 'analyze_uncoded_text',
  group: 'ai_text_coding',
  title: 'Analyze Uncoded Text',
  description:
    'Find the uncoded ranges of a text source: the parts of its meaning units that no code covers, in text order. ' +
    UNITS +
    'Writes nothing. Returns {source_id, source_name, total_length, coded_length, uncoded_length, uncoded_percentage, segment_count, unit_count, range_count, offset, has_more, ' +
    'uncoded_ranges: [{start_pos, end_pos, length, unit (turn | paragraph | sentences), speaker, text_excerpt}]}. Errors: SOURCE_NOT_FOUND, INVALID_POSITION (a source without text).',
  input: uncodedInput,
  effect: 'read',
  trust: 'read',
  run: (ctx, input) => {
    const { a, p } = uncodedPage(ctx.domain, input);
    return { ...coverage(a), offset: p.offset, has_more: p.has_more, uncoded_ranges: p.items.map(rangeOut) };
  },
});

export const suggestCodesForRangeTool = defineTool({
  name: 'suggest_codes_for_range',
  group: 'ai_text_coding',
  title: 'Suggest Codes for a Range',
  description:
    'Rank the codebook for one range of a text source and record the best codes as a batch of pending coding suggestions. Ranking: BM25 (Porter-stemmed terms) of the ' +
    "range against each code's name and memo, normalised by the code's best possible score, combined with the TF-IDF cosine similarity to the code's coded segments; " +
    `confidence = 100 x (1 - (1 - relevance) x (1 - segment_similarity)). Keeps the top limit (default ${DEFAULT_RANGE_LIMIT}) with confidence >= min_confidence (default 1); ` +
    'codes already covering the range, or already pending for it, are left out. No batch is made when no code qualifies (suggestion_batch_id null). ' +
    'Decide with respond_to_code_suggestion (accept selected_code_ids / reject), approve_batch_coding, or per item. ' +
    'Returns {source_id, start_pos, end_pos, suggestion_batch_id, batch_id, text_excerpt, suggestions: [{suggestion_id, code_id, code_name, confidence, score, bm25, relevance, segment_similarity, matched_terms, rationale}], already_pending, already_coded}. ' +
    'Errors: SOURCE_NOT_FOUND, INVALID_POSITION.',
  input: args({
    source_id: id('the text source'),
    start_pos: position('start of the range'),
    end_pos: position('end of the range (exclusive)'),
    limit: z.number().int().min(1).max(100).optional().describe(`at most this many codes (default ${DEFAULT_RANGE_LIMIT})`),
    min_confidence: z.number().min(0).max(100).optional().describe('least confidence, 0 to 100 (default 1)'),
  }),
  effect: 'create',
  trust: 'approval',
  run: (ctx, input) => {
    const r = suggestCodesForRange(ctx.domain, input);
    const batchId = r.batch?.batch_id ?? null;
    const range = r.items[0]?.suggestion.text;
    return {
      source_id: input.source_id,
      start_pos: input.start_pos,
      end_pos: input.end_pos,
      suggestion_batch_id: batchId,
      batch_id: batchId,
      ...(range !== undefined && range !== null ? { text_excerpt: excerpt(range) } : {}),
      suggestions: r.items.map((i) => ({ suggestion_id: i.suggestion.suggestion_id, ...rankedOut(i.ranked) })),
      already_pending: r.already_pending,
      already_coded: r.already_coded,
    };
  },
});

export const autoSuggestCodesTool = defineTool({
  name: 'auto_suggest_codes',
  group: 'ai_text_coding',
  title: 'Auto-suggest Codes',
  description:
    "Propose codes for a text source's uncoded text: each uncoded part of a meaning unit (never the whole document) is ranked against the codebook as in " +
    `suggest_codes_for_range, and its best code (per_range best codes, default 1) becomes a pending coding suggestion when its confidence reaches min_confidence (default ${DEFAULT_AUTO_MIN_CONFIDENCE}). ` +
    UNITS +
    `Parts with fewer than ${MIN_AUTO_TERMS} distinct content words are skipped (skipped_short), and so are parts with a pending suggestion of that code (skipped_pending). ` +
    'All go into one batch (none is made when nothing qualifies: batch_id null). ' +
    'Returns {batch_id, suggestion_batch_id, source_id, ranges_analyzed, total_suggested, skipped_pending, skipped_short, suggestions: [{suggestion_id, code_id, code_name, start_pos, end_pos, unit, speaker, confidence, rationale, matched_terms, text_excerpt}]}. ' +
    'Errors: SOURCE_NOT_FOUND, INVALID_POSITION (a source without text).',
  input: args({
    source_id: id('the text source'),
    min_confidence: z.number().min(0).max(100).optional().describe(`least confidence, 0 to 100 (default ${DEFAULT_AUTO_MIN_CONFIDENCE})`),
    per_range: z.number().int().min(1).max(10).optional().describe('best codes proposed per uncoded range (default 1)'),
    max_suggestions: z.number().int().min(1).max(10_000).optional().describe('stop after this many suggestions'),
  }),
  effect: 'create',
  trust: 'approval',
  run: (ctx, input) => {
    const r = autoSuggestCodes(ctx.domain, input);
    const batchId = r.batch?.batch_id ?? null;
    return {
      batch_id: batchId,
      suggestion_batch_id: batchId,
      source_id: input.source_id,
      ranges_analyzed: r.ranges_analyzed,
      total_suggested: r.items.length,
      skipped_pending: r.skipped_pending,
      skipped_short: r.skipped_short,
      suggestions: r.items.map((i) => ({
        suggestion_id: i.suggestion.suggestion_id,
        code_id: i.ranked.code_id,
        code_name: i.ranked.name,
        start_pos: i.unit.start,
        end_pos: i.unit.end,
        unit: i.unit.kind,
        speaker: i.unit.speaker,
        confidence: i.ranked.confidence,
        rationale: i.ranked.rationale,
        matched_terms: i.ranked.matched_terms,
        text_excerpt: excerpt(i.unit.text),
      })),
    };
  },
});

export const findSimilarContentTool = defineTool({
  name: 'find_similar_content',
  group: 'batch',
  title: 'Find Similar Content',
  description:
    'Find passages like search_text across the text sources (or one source): meaning units ranked by BM25 (Robertson & Zaragoza 2009) over Porter-stemmed terms, best first. ' +
    UNITS +
    'With code_id, passages already coded with that code are left out, so the matches are candidates for suggest_batch_coding with it. Writes nothing. ' +
    `Returns {search_text, method: "bm25", terms, units_searched, match_count, matches: [{source_id, source_name, start_pos, end_pos, text, unit, speaker, score, matched_terms, coded_with: [{code_id, name}]}]} (at most limit, default ${DEFAULT_SIMILAR_LIMIT}). ` +
    'Errors: CODE_NOT_FOUND, SOURCE_NOT_FOUND.',
  input: args({
    search_text: text(100_000, 1).describe('a passage or a few words to find more of'),
    code_id: id('leave out passages already coded with this code').optional(),
    source_id: id('search only this source').optional(),
    limit: z.number().int().min(1).max(1000).optional().describe(`at most this many matches (default ${DEFAULT_SIMILAR_LIMIT})`),
  }),
  effect: 'read',
  trust: 'search',
  run: (ctx, input) => {
    const r = findSimilarContent(ctx.domain, input);
    return {
      search_text: input.search_text,
      method: 'bm25',
      terms: r.terms,
      units_searched: r.units_searched,
      match_count: r.matches.length,
      matches: r.matches,
    };
  },
});

export const suggestBatchCodingTool = defineTool({
  name: 'suggest_batch_coding',
  group: 'batch',
  title: 'Suggest Batch Coding',
  description:
    'Record one code for several ranges as a batch of pending coding suggestions (one per distinct range, all with the rationale). Every range is checked first; a bad one records nothing ' +
    '(details.index names it). Nothing is coded until approved: approve_batch_coding, respond_to_code_suggestion, or per item. ' +
    'Returns {status: "pending_approval", requires_approval: true, batch_id, suggestion_batch_id, code_id, segment_count, duplicates_dropped, suggestions: [{suggestion_id, source_id, start_pos, end_pos, text}]}. ' +
    'Errors: CODE_NOT_FOUND, SOURCE_NOT_FOUND, INVALID_POSITION.',
  input: args({
    code_id: id('the code to apply'),
    segments: z
      .array(args({ source_id: id('the text source'), start_pos: position('start of the range'), end_pos: position('end of the range (exclusive)') }))
      .min(1)
      .max(1000)
      .describe('the ranges to code'),
    rationale: rationale.describe('why the code fits these ranges; becomes each segment memo when approved'),
    confidence: confidence.optional(),
  }),
  effect: 'create',
  trust: 'approval',
  run: (ctx, input) => {
    const r = suggestBatchCoding(ctx.domain, input);
    return {
      status: 'pending_approval',
      requires_approval: true,
      batch_id: r.batch.batch_id,
      suggestion_batch_id: r.batch.batch_id,
      code_id: input.code_id,
      segment_count: r.items.length,
      duplicates_dropped: r.duplicates_dropped,
      suggestions: r.items.map((s) => ({ suggestion_id: s.suggestion_id, source_id: s.source_id, start_pos: s.start_pos, end_pos: s.end_pos, text: s.text })),
    };
  },
});
