import { z } from 'zod';
import {
  analyzeUncoded,
  approveBatch,
  approveCodeSuggestion,
  approveCodingSuggestion,
  approveMergeSuggestion,
  autoSuggestCodes,
  batchStatus,
  CodeRanker,
  DEFAULT_AUTO_MIN_CONFIDENCE,
  DEFAULT_CONFIDENCE,
  DEFAULT_DUPLICATE_THRESHOLD,
  DEFAULT_RANGE_LIMIT,
  DEFAULT_SIMILAR_LIMIT,
  MIN_AUTO_TERMS,
  detectDuplicateCodes,
  excerpt,
  findSimilarContent,
  rejectSuggestion,
  requireBatch,
  respondToBatch,
  suggestBatchCoding,
  suggestCodesForRange,
  suggestCoding,
  suggestMerge,
  suggestNewCode,
  uncoveredTerms,
  type BatchDecision,
  type RankedCode,
  type UncodedAnalysis,
  type UncodedRange,
} from '../domain/suggestions';
import { requireSource } from '../domain/sources';
import { MAX_UNIT_LENGTH } from '../domain/textUnits';
import type { ProjectRepository, SuggestionBatchRecord, SuggestionRecord } from '../domain/ports';
import { MAX_CODE_NAME } from '../domain/rules';
import { defineTool } from './defineTool';
import { args, color, id, memo, nameText, position, text } from './schemas';

/**
 * AI code suggestions, AI text coding and batch operations (HTTP spec, section 4): 19 tools that record
 * what an agent proposes, give it material to propose from, and apply a proposal when it is approved.
 * Marginalia embeds no language model. States and transitions: src/domain/suggestions.ts and the README
 * section "Suggestions".
 */

const STATES =
  'Suggestion states: pending -> approved (new code created, or codes merged) | applied (coding made) | rejected | failed (approved in a batch but not applicable; error_code says why). ' +
  'Approving again returns the stored result with already: true and writes nothing. ';

const confidence = z.number().min(0).max(100).describe(`how sure the suggester is, 0 to 100 (default ${DEFAULT_CONFIDENCE})`);
const rationale = text(100_000);
const pageOffset = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional().describe('skip this many ranges (paging; default 0)');
const pageLimit = z.number().int().min(1).max(5000).optional().describe('return at most this many ranges (default 200)');
const DEFAULT_PAGE = 200;

/** JSON text from the store, parsed (null stays null). */
function parsed(json: string | null): unknown {
  return json === null ? null : JSON.parse(json);
}

/** Code and source names by id (null when gone), each looked up once per call. */
interface Names {
  code(id: number): string | null;
  source(id: number): string | null;
}

function namesOf(repo: ProjectRepository): Names {
  const codes = new Map<number, string | null>();
  const sources = new Map<number, string | null>();
  const cached = (m: Map<number, string | null>, id: number, get: () => string | null) => {
    if (!m.has(id)) m.set(id, get());
    return m.get(id) ?? null;
  };
  return {
    code: (id) => cached(codes, id, () => repo.getCode(id)?.name ?? null),
    source: (id) => cached(sources, id, () => repo.getSource(id)?.name ?? null),
  };
}

/**
 * A suggestion as tools return it: its id, kind, status, the kind's fields, rationale and confidence,
 * and its provenance (who suggested it in which session, who approved or rejected it in which session).
 */
export function suggestionOut(s: SuggestionRecord, repo: ProjectRepository, names: Names = namesOf(repo)) {
  const kindFields =
    s.kind === 'code'
      ? { name: s.name, color: s.color, memo: s.memo, category_id: s.category_id, sample_contexts: parsed(s.sample_contexts) }
      : s.kind === 'coding'
        ? {
            code_id: s.code_id,
            code_name: s.code_id === null ? null : names.code(s.code_id),
            source_id: s.source_id,
            source_name: s.source_id === null ? null : names.source(s.source_id),
            start_pos: s.start_pos,
            end_pos: s.end_pos,
            text: s.text,
          }
        : {
            merge_suggestion_id: s.suggestion_id,
            source_code_id: s.code_id,
            target_code_id: s.target_code_id,
            ...((parsed(s.details) as Record<string, unknown> | null) ?? {}),
          };
  return {
    suggestion_id: s.suggestion_id,
    kind: s.kind,
    status: s.status,
    batch_id: s.batch_id,
    ...kindFields,
    rationale: s.rationale,
    confidence: s.confidence,
    ...(s.kind === 'coding' ? { scores: parsed(s.details) } : {}),
    suggested_by: s.suggested_by,
    suggested_by_session: s.suggested_by_session,
    suggested_at: s.created_at,
    approved_by: s.approved_by,
    approved_by_session: s.approved_by_session,
    approved_at: s.approved_at,
    rejected_by: s.rejected_by,
    rejected_by_session: s.rejected_by_session,
    rejected_at: s.rejected_at,
    reason: s.reason,
    feedback: s.feedback,
    result: parsed(s.result),
    error_code: s.error_code,
    error: s.error,
  };
}

/** A batch's summary: status (derived from its items) and counts. */
function batchSummary(b: SuggestionBatchRecord) {
  return {
    batch_id: b.batch_id,
    suggestion_batch_id: b.batch_id,
    kind: b.kind,
    status: batchStatus(b),
    total_count: b.total_count,
    pending_count: b.pending_count,
    reviewed_count: b.total_count - b.pending_count,
    applied_count: b.applied_count,
    rejected_count: b.rejected_count,
    failed_count: b.failed_count,
  };
}

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

function decisionOut(d: BatchDecision) {
  const { status, ...counts } = batchSummary(d.batch);
  return { ...counts, batch_status: status, errors: d.errors.length > 0 ? d.errors : null, already: d.already };
}

const UNITS =
  `Text is split into meaning units: speaker turns (lines like "NAME:", "Name Surname:", "[00:01:02] NAME:", "[id1]", or an Otter.ai "Name  00:13" line), ` +
  `else paragraphs; units longer than ${MAX_UNIT_LENGTH} code points are cut at sentence boundaries. Positions count Unicode code points, end exclusive. `;

// ------------------------------------------------------------------------------------------------
// AI code suggestions

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
  input: args({ source_id: id('the text source'), offset: pageOffset, limit: pageLimit }),
  effect: 'read',
  trust: 'read',
  run: (ctx, input) => {
    const a = analyzeUncoded(ctx.domain, input.source_id);
    const ranker = new CodeRanker(ctx.domain.repo);
    const p = page(a.ranges, input.offset, input.limit);
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

export const suggestNewCodeTool = defineTool({
  name: 'suggest_new_code',
  group: 'ai_code_suggestions',
  title: 'Suggest New Code',
  description:
    'Record a proposed new code for the researcher to approve (approve_suggestion) or reject (reject_coding_suggestion takes its suggestion_id too). Nothing is added to the codebook yet. ' +
    "color defaults to a palette colour no code uses yet (the least used one when all are taken); memo (or its alias description) becomes the code's memo. A pending suggestion with the same name is returned instead (created: false). " +
    'Returns {status: "pending_approval", requires_approval: true, suggestion_id, name, color, rationale, confidence, created, suggestion}. ' +
    'Errors: DUPLICATE_NAME (a code with that name exists), CATEGORY_NOT_FOUND, INVALID_ARGUMENTS.',
  input: args({
    name: nameText(MAX_CODE_NAME).describe(`the proposed code name, 1-${MAX_CODE_NAME} characters`),
    rationale: rationale.describe('why the codebook needs this code'),
    color: color.optional(),
    memo: memo.optional().describe("the proposed code's memo: what it means and when to apply it"),
    description: memo.optional().describe('alias of memo (QualCoder-v2)'),
    category_id: id('category to put the code in when approved').nullable().optional(),
    confidence: confidence.optional(),
    sample_contexts: z.array(text(10_000)).max(100).optional().describe('example passages the code would apply to'),
  }),
  effect: 'create',
  trust: 'approval',
  run: (ctx, input) => {
    const r = suggestNewCode(ctx.domain, { ...input, memo: input.memo ?? input.description ?? null });
    const s = r.suggestion;
    return {
      status: 'pending_approval',
      requires_approval: true,
      suggestion_id: s.suggestion_id,
      name: s.name,
      color: s.color,
      rationale: s.rationale,
      confidence: s.confidence,
      created: r.created,
      suggestion: suggestionOut(s, ctx.domain.repo),
    };
  },
});

export const listPendingSuggestions = defineTool({
  name: 'list_pending_suggestions',
  group: 'ai_code_suggestions',
  title: 'List Pending Suggestions',
  description:
    'The pending new-code suggestions (suggestions) and pending merge suggestions (merge_suggestions), oldest first, each with its rationale, confidence and ' +
    'provenance (suggested_by, suggested_by_session, suggested_at). They survive restarts. Returns {count, suggestions: [...], merge_count, merge_suggestions: [...]}.',
  input: args({}),
  effect: 'read',
  trust: 'read',
  run: (ctx) => {
    const repo = ctx.domain.repo;
    const names = namesOf(repo);
    const suggestions = repo.listSuggestions({ kind: 'code', status: 'pending' }).map((s) => suggestionOut(s, repo, names));
    const merges = repo.listSuggestions({ kind: 'merge', status: 'pending' }).map((s) => suggestionOut(s, repo, names));
    return { count: suggestions.length, suggestions, merge_count: merges.length, merge_suggestions: merges };
  },
});

export const approveSuggestionTool = defineTool({
  name: 'approve_suggestion',
  group: 'ai_code_suggestions',
  title: 'Approve Code Suggestion',
  description:
    "The researcher's decision alone (the VS Code UI, or a client holding the reviewer token): an agent's call answers 403 APPROVAL_FORBIDDEN and is never queued. " +
    'Approve a pending new-code suggestion: the code is created (as create_code would) and the suggestion becomes approved. ' +
    STATES +
    'Returns {status: "created", code_id, name, color, category_id, suggestion_id, already, suggestion}. ' +
    'Errors: SUGGESTION_NOT_FOUND (unknown id, or not a new-code suggestion), SUGGESTION_ALREADY_DECIDED (it was rejected), DUPLICATE_NAME (a code of that name was created meanwhile), CATEGORY_NOT_FOUND.',
  input: args({ suggestion_id: id('the new-code suggestion') }),
  effect: 'create',
  trust: 'create_code',
  // deciding a suggestion is the researcher's: refused to agents before the trust stage (issue 14 item 6)
  researcherOnly: true,
  run: (ctx, input) => {
    const a = approveCodeSuggestion(ctx.domain, input.suggestion_id);
    return { ...a.result, suggestion_id: input.suggestion_id, already: a.already, suggestion: suggestionOut(a.suggestion, ctx.domain.repo) };
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

export const suggestMergeCodesTool = defineTool({
  name: 'suggest_merge_codes',
  group: 'ai_code_suggestions',
  title: 'Suggest Merging Codes',
  description:
    'Record a proposed merge of source_code_id into target_code_id for the researcher to approve (approve_merge) or reject (reject_coding_suggestion with the merge_suggestion_id). ' +
    'Nothing is merged yet. A pending suggestion for the same pair is returned instead (created: false). ' +
    'Returns {status: "pending_approval", requires_approval: true, merge_suggestion_id, merge_source_id, merge_target_id, source_code_name, target_code_name, rationale, created, suggestion}. ' +
    'Errors: MERGE_SAME_CODE, CODE_NOT_FOUND.',
  input: args({
    source_code_id: id('the code to merge away'),
    target_code_id: id('the code that remains'),
    rationale: rationale.describe('why the two codes are one'),
    confidence: confidence.optional(),
  }),
  effect: 'create',
  trust: 'approval',
  run: (ctx, input) => {
    const r = suggestMerge(ctx.domain, input);
    const out = suggestionOut(r.suggestion, ctx.domain.repo) as Record<string, unknown>;
    return {
      status: 'pending_approval',
      requires_approval: true,
      merge_suggestion_id: r.suggestion.suggestion_id,
      merge_source_id: r.suggestion.code_id,
      merge_target_id: r.suggestion.target_code_id,
      source_code_name: out.source_code_name,
      target_code_name: out.target_code_name,
      rationale: r.suggestion.rationale,
      created: r.created,
      suggestion: out,
    };
  },
});

export const approveMergeTool = defineTool({
  name: 'approve_merge',
  group: 'ai_code_suggestions',
  title: 'Approve Merge',
  description:
    "The researcher's decision alone (the VS Code UI, or a client holding the reviewer token): an agent's call answers 403 APPROVAL_FORBIDDEN and is never queued. " +
    'Approve a pending merge suggestion: all segments of the source code move to the target code and the source code is deleted (as merge_codes does). ' +
    STATES +
    'Returns {status: "merged", merged_from, merged_into, source_code_name, target_code_name, segments_moved, duplicates_removed, merge_suggestion_id, already, suggestion}. ' +
    'Errors: SUGGESTION_NOT_FOUND (unknown id, or not a merge suggestion), SUGGESTION_ALREADY_DECIDED (it was rejected), CODE_NOT_FOUND (a code was deleted meanwhile).',
  input: args({ merge_suggestion_id: id('the merge suggestion') }),
  effect: 'destroy',
  trust: 'merge',
  // deciding a suggestion is the researcher's: refused to agents before the trust stage (issue 14 item 6)
  researcherOnly: true,
  run: (ctx, input) => {
    const a = approveMergeSuggestion(ctx.domain, input.merge_suggestion_id);
    return { ...a.result, merge_suggestion_id: input.merge_suggestion_id, already: a.already, suggestion: suggestionOut(a.suggestion, ctx.domain.repo) };
  },
});

// ------------------------------------------------------------------------------------------------
// AI text coding

export const suggestCodeApplication = defineTool({
  name: 'suggest_code_application',
  group: 'ai_text_coding',
  title: 'Suggest Coding',
  description:
    'Record a proposed coding (code_id on [start_pos, end_pos) of a text source; code points, end exclusive) for the researcher to approve (approve_coding_suggestion) ' +
    'or reject (reject_coding_suggestion). Nothing is coded yet. A pending suggestion of the same code on the same range is returned instead (created: false). ' +
    'Returns {status: "pending_approval", requires_approval: true, suggestion_id, source_id, code_id, start_pos, end_pos, rationale, confidence, created, text_excerpt (with include_text), suggestion}. ' +
    'Errors: CODE_NOT_FOUND, SOURCE_NOT_FOUND, INVALID_POSITION.',
  input: args({
    source_id: id('the text source'),
    code_id: id('the code to apply'),
    start_pos: position('start of the range'),
    end_pos: position('end of the range (exclusive)'),
    rationale: rationale.optional().describe('why the code fits; becomes the segment memo when approved'),
    confidence: confidence.optional(),
    include_text: z.boolean().optional().describe('return the range text as text_excerpt (default false)'),
  }),
  effect: 'create',
  trust: 'approval',
  run: (ctx, input) => {
    const r = suggestCoding(ctx.domain, input);
    const s = r.suggestion;
    return {
      status: 'pending_approval',
      requires_approval: true,
      suggestion_id: s.suggestion_id,
      source_id: s.source_id,
      code_id: s.code_id,
      start_pos: s.start_pos,
      end_pos: s.end_pos,
      rationale: s.rationale,
      confidence: s.confidence,
      created: r.created,
      ...(input.include_text ? { text_excerpt: excerpt(s.text ?? '') } : {}),
      suggestion: suggestionOut(s, ctx.domain.repo),
    };
  },
});

export const listPendingCodingSuggestions = defineTool({
  name: 'list_pending_coding_suggestions',
  group: 'ai_text_coding',
  title: 'List Pending Coding Suggestions',
  description:
    'The pending coding suggestions (single ones and batch items), oldest first, optionally of one source or one batch, each with code, range, text, rationale, ' +
    'confidence, batch_id and provenance. They survive restarts. Returns {count, suggestions: [{suggestion_id, source_id, code_id, code_name, start_pos, end_pos, text, rationale, confidence, status, batch_id, suggested_by_session, ...}]}. ' +
    'Errors: SOURCE_NOT_FOUND, BATCH_NOT_FOUND.',
  input: args({ source_id: id('only this source').optional(), batch_id: id('only this batch').optional() }),
  effect: 'read',
  trust: 'read',
  run: (ctx, input) => {
    if (input.source_id !== undefined) requireSource(ctx.domain, input.source_id);
    if (input.batch_id !== undefined) requireBatch(ctx.domain, input.batch_id);
    const repo = ctx.domain.repo;
    const names = namesOf(repo);
    const suggestions = repo.listSuggestions({ kind: 'coding', status: 'pending', source_id: input.source_id, batch_id: input.batch_id }).map((s) => suggestionOut(s, repo, names));
    return { count: suggestions.length, suggestions };
  },
});

export const approveCodingSuggestionTool = defineTool({
  name: 'approve_coding_suggestion',
  group: 'ai_text_coding',
  title: 'Approve Coding Suggestion',
  description:
    "The researcher's decision alone (the VS Code UI, or a client holding the reviewer token): an agent's call answers 403 APPROVAL_FORBIDDEN and is never queued. " +
    'Approve a pending coding suggestion: the code is applied to the range (as apply_code would; the rationale becomes the segment memo) and the suggestion becomes applied. ' +
    'The segment keeps its provenance (suggestion_id, suggested_by_session, approved_by_session) in the suggestion record. ' +
    STATES +
    'If the code, the source or the range text changed since the suggestion, it fails and stays pending. ' +
    'Returns {status: "applied", segment_id, created (false when that coding already existed), code_id, source_id, start_pos, end_pos, suggestion_id, already, suggestion}. ' +
    'Errors: SUGGESTION_NOT_FOUND, SUGGESTION_ALREADY_DECIDED (it was rejected), CODE_NOT_FOUND, SOURCE_NOT_FOUND, INVALID_POSITION.',
  input: args({ suggestion_id: id('the coding suggestion') }),
  effect: 'create',
  trust: 'apply_code',
  // deciding a suggestion is the researcher's: refused to agents before the trust stage (issue 14 item 6)
  researcherOnly: true,
  run: (ctx, input) => {
    const a = approveCodingSuggestion(ctx.domain, input.suggestion_id);
    return { ...a.result, suggestion_id: input.suggestion_id, already: a.already, suggestion: suggestionOut(a.suggestion, ctx.domain.repo) };
  },
});

export const rejectCodingSuggestionTool = defineTool({
  name: 'reject_coding_suggestion',
  group: 'ai_text_coding',
  title: 'Reject Suggestion',
  description:
    "The researcher's decision alone (the VS Code UI, or a client holding the reviewer token): an agent's call answers 403 APPROVAL_FORBIDDEN and is never queued. " +
    'Reject a pending suggestion with a reason and feedback for the suggester (both stored and returned by the list and batch tools). Takes a coding suggestion id, ' +
    'and also the suggestion_id of a new-code suggestion or the merge_suggestion_id of a merge suggestion (their ids are one sequence). Rejecting it again returns it with already: true. ' +
    'Returns {status: "rejected", suggestion_id, kind, reason, feedback, batch_id, already, suggestion}. ' +
    'Errors: SUGGESTION_NOT_FOUND, SUGGESTION_ALREADY_DECIDED (it was approved, applied or failed).',
  input: args({
    suggestion_id: id('the suggestion'),
    reason: text(10_000).optional().describe('why it is rejected'),
    feedback: text(100_000).optional().describe('what the suggester should do differently'),
  }),
  effect: 'modify',
  trust: 'approval',
  // deciding a suggestion is the researcher's: refused to agents before the trust stage (issue 14 item 6)
  researcherOnly: true,
  run: (ctx, input) => {
    const r = rejectSuggestion(ctx.domain, input.suggestion_id, input);
    const s = r.suggestion;
    return {
      status: 'rejected',
      suggestion_id: s.suggestion_id,
      kind: s.kind,
      reason: s.reason,
      feedback: s.feedback,
      batch_id: s.batch_id,
      already: r.already,
      suggestion: suggestionOut(s, ctx.domain.repo),
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
  input: args({ source_id: id('the text source'), offset: pageOffset, limit: pageLimit }),
  effect: 'read',
  trust: 'read',
  run: (ctx, input) => {
    const a = analyzeUncoded(ctx.domain, input.source_id);
    const p = page(a.ranges, input.offset, input.limit);
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

export const getSuggestionBatchStatus = defineTool({
  name: 'get_suggestion_batch_status',
  group: 'ai_text_coding',
  title: 'Get Suggestion Batch Status',
  description:
    'The status of a batch, computed from its items on every call: pending_review (nothing decided) -> partially_reviewed (some decided) -> completed (nothing pending); ' +
    'with counts and every item (status, result segment_id, error, provenance: suggested_by_session, approved_by_session, rejected_by_session, reason, feedback). ' +
    'Returns {batch_id, kind, status, total_count, pending_count, reviewed_count, applied_count, rejected_count, failed_count, source_id, code_id, start_pos, end_pos, rationale, ' +
    'response, response_reason, created_by, created_by_session, created_at, updated_at, suggestions: [...]}. Errors: BATCH_NOT_FOUND.',
  input: args({ batch_id: id('the batch') }),
  effect: 'read',
  trust: 'read',
  run: (ctx, input) => {
    const b = requireBatch(ctx.domain, input.batch_id);
    const repo = ctx.domain.repo;
    const names = namesOf(repo);
    return {
      ...batchSummary(b),
      source_id: b.source_id,
      code_id: b.code_id,
      start_pos: b.start_pos,
      end_pos: b.end_pos,
      rationale: b.rationale,
      params: parsed(b.params),
      response: b.response,
      response_reason: b.response_reason,
      responded_by_session: b.responded_by_session,
      responded_at: b.responded_at,
      created_by: b.owner,
      created_by_session: b.session_id,
      created_at: b.created_at,
      updated_at: b.updated_at,
      suggestions: repo.listSuggestions({ batch_id: b.batch_id }).map((s) => {
        const out = suggestionOut(s, repo, names);
        const seg = (out.result as { segment_id?: number } | null)?.segment_id;
        return { ...out, provenance: seg === undefined ? null : (repo.getSegmentProvenance(seg) ?? null) };
      }),
    };
  },
});

export const respondToCodeSuggestion = defineTool({
  name: 'respond_to_code_suggestion',
  group: 'ai_text_coding',
  title: 'Respond to Code Suggestions',
  description:
    "The researcher's decision alone (the VS Code UI, or a client holding the reviewer token): an agent's call answers 403 APPROVAL_FORBIDDEN and is never queued. " +
    'Accept or reject the pending items of a batch. response "accept" applies them (only the items whose code is in selected_code_ids when given; the other pending items are ' +
    'then rejected with reason, default "not selected"); items that cannot be applied become failed and the rest go on. response "reject" rejects every pending item with reason. ' +
    'With nothing pending, nothing is written and already is true. ' +
    'Returns {status: "accepted" | "rejected", batch_id, batch_status, total_count, pending_count, applied_count, rejected_count, failed_count, reason, errors: [{suggestion_id, error_code, error}] | null, already}. ' +
    'Errors: BATCH_NOT_FOUND, INVALID_ARGUMENTS (a selected code the batch does not suggest).',
  input: args({
    suggestion_batch_id: id('the batch'),
    response: z.enum(['accept', 'reject']).describe('accept or reject'),
    selected_code_ids: z.array(id('a code')).max(1000).optional().describe('accept only the items suggesting these codes'),
    reason: text(10_000).optional().describe('why (stored on rejected items and on the batch)'),
  }),
  effect: 'bulk',
  trust: 'bulk',
  // deciding a suggestion is the researcher's: refused to agents before the trust stage (issue 14 item 6)
  researcherOnly: true,
  run: (ctx, input) => {
    const d = respondToBatch(ctx.domain, input.suggestion_batch_id, input.response, input.selected_code_ids, input.reason ?? null);
    const response = d.already ? (d.batch.response ?? input.response) : input.response;
    return { status: response === 'accept' ? 'accepted' : 'rejected', ...decisionOut(d), reason: d.batch.response_reason ?? input.reason ?? null };
  },
});

export const approveBatchCoding = defineTool({
  name: 'approve_batch_coding',
  group: 'ai_text_coding',
  title: 'Approve Batch',
  description:
    "The researcher's decision alone (the VS Code UI, or a client holding the reviewer token): an agent's call answers 403 APPROVAL_FORBIDDEN and is never queued. " +
    'Approve every pending item of a batch: each is applied as approve_coding_suggestion would; an item that cannot be applied becomes failed (its error is kept) and the rest go on. ' +
    'Items already decided stay as they are. With nothing pending, nothing is written and already is true (the counts are the same as the first time). ' +
    'Returns {status: "applied" | "partial" (some failed), batch_id, batch_status, total_count, applied_count, rejected_count, failed_count, errors: [{suggestion_id, error_code, error}] | null, already}. ' +
    'Errors: BATCH_NOT_FOUND.',
  input: args({ batch_id: id('the batch') }),
  effect: 'bulk',
  trust: 'bulk',
  // deciding a suggestion is the researcher's: refused to agents before the trust stage (issue 14 item 6)
  researcherOnly: true,
  run: (ctx, input) => {
    const d = approveBatch(ctx.domain, input.batch_id);
    return { status: d.batch.failed_count > 0 ? 'partial' : 'applied', ...decisionOut(d) };
  },
});

// ------------------------------------------------------------------------------------------------
// batch operations

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
    return { search_text: input.search_text, method: 'bm25', terms: r.terms, units_searched: r.units_searched, match_count: r.matches.length, matches: r.matches };
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
