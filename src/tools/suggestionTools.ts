import { z } from 'zod';
import {
  approveBatch,
  approveCodeSuggestion,
  approveCodingSuggestion,
  approveMergeSuggestion,
  rejectSuggestion,
  respondToBatch,
  type BatchDecision,
} from '../domain/suggestionDecisions';
import { excerpt } from '../domain/codeRanking';
import { batchStatus, requireBatch, suggestCoding, suggestMerge, suggestNewCode } from '../domain/suggestions';
import { requireSource } from '../domain/sources';
import type { ProjectRepository, SuggestionBatchRecord, SuggestionRecord } from '../domain/ports';
import { MAX_CODE_NAME } from '../domain/rules';
import { defineTool } from './defineTool';
import { args, color, id, memo, nameText, position, text } from './schemas';
import { confidence, rationale } from './suggestionSchemas';

/**
 * AI code suggestions, AI text coding and batch operations (HTTP spec, section 4): the tools that record
 * what an agent proposes and apply a proposal when it is approved. The tools that rank (material to propose
 * from, and ranked batches of codings) are in src/tools/rankedSuggestionTools.ts.
 * Marginalia embeds no language model. States and transitions: src/domain/suggestions.ts and
 * docs/reference/suggestions.md.
 */

const STATES =
  'Suggestion states: pending -> approved (new code created, or codes merged) | applied (coding made) | rejected | failed (approved in a batch but not applicable; error_code says why). ' +
  'Approving again returns the stored result with already: true and writes nothing. ';

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

function decisionOut(d: BatchDecision) {
  const { status, ...counts } = batchSummary(d.batch);
  return { ...counts, batch_status: status, errors: d.errors.length > 0 ? d.errors : null, already: d.already };
}

// ------------------------------------------------------------------------------------------------
// AI code suggestions

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
    const suggestions = repo
      .listSuggestions({ kind: 'coding', status: 'pending', source_id: input.source_id, batch_id: input.batch_id })
      .map((s) => suggestionOut(s, repo, names));
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
