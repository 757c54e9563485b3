/**
 * Deciding suggestions (src/domain/suggestions.ts records them): approving a new code, a merge or a coding,
 * rejecting one, and approving or answering a batch of codings. A proposal is applied through the same
 * domain functions a direct call uses (createCode, mergeCodes, applyCode), so the same rules and the same
 * coding.* events apply; the states and their moves are described in src/domain/suggestions.ts.
 */
import { ToolError } from '../core/errors';
import { applyCode } from './coding';
import { createCode, mergeCodes, requireCode } from './codebook';
import type { DomainContext } from './events';
import type { ProjectRepository, SuggestionBatchRecord, SuggestionRecord } from './ports';
import { batchStatus, checkApprover, DEFAULT_SUGGESTION_COLOR, mustGetSuggestion, requireBatch, requireSuggestion, requireTextRange } from './suggestions';

type Ctx = DomainContext<ProjectRepository>;

/** The outcome of an approval: the JSON result it stored, the suggestion after it, and `already` (nothing was done now). */
export interface Approval {
  result: Record<string, unknown>;
  suggestion: SuggestionRecord;
  already: boolean;
}

function storedResult(s: SuggestionRecord): Record<string, unknown> {
  const base = s.result ? (JSON.parse(s.result) as Record<string, unknown>) : {};
  if (s.status === 'failed') return { status: 'failed', error_code: s.error_code, error: s.error, ...base };
  return base;
}

/** The second approval of a decided suggestion: its stored result, or SUGGESTION_ALREADY_DECIDED when it was rejected. */
function alreadyDecided(s: SuggestionRecord): Approval {
  if (s.status === 'rejected') {
    throw new ToolError('SUGGESTION_ALREADY_DECIDED', `Suggestion ${s.suggestion_id} was rejected${s.reason ? ` (${s.reason})` : ''}; it cannot be approved`, {
      suggestion_id: s.suggestion_id,
      status: s.status,
    });
  }
  return { result: storedResult(s), suggestion: s, already: true };
}

/** The session that decided: the researcher's, when an agent's approve_/reject_ call ran after the researcher approved it. */
function deciderSession(ctx: Ctx): string {
  return ctx.actor.approved_by ?? ctx.actor.session_id;
}

function recordApproval(
  ctx: Ctx,
  s: SuggestionRecord,
  status: 'approved' | 'applied' | 'failed',
  result: Record<string, unknown> | null,
  error?: ToolError,
): void {
  // checkApprover ran before the change; true when the researcher decided a suggestion of their own session
  const check = { self_approval: ctx.actor.approved_by === undefined && s.suggested_by_session !== null && s.suggested_by_session === ctx.actor.session_id };
  ctx.repo.decideSuggestion(s.suggestion_id, {
    status,
    by: ctx.actor.user,
    session_id: deciderSession(ctx),
    at: ctx.now,
    result: result === null ? null : JSON.stringify(result),
    error_code: error?.code ?? null,
    error: error?.message ?? null,
  });
  if (s.batch_id !== null) ctx.repo.touchSuggestionBatch(s.batch_id, ctx.now);
  ctx.events.emit({
    event_type: 'suggestion.approved',
    aggregate_type: 'suggestion',
    aggregate_id: String(s.suggestion_id),
    payload: {
      suggestion_id: s.suggestion_id,
      kind: s.kind,
      status,
      batch_id: s.batch_id,
      suggested_by_session: s.suggested_by_session,
      approved_by_session: deciderSession(ctx),
      self_approval: check.self_approval,
      ...(result ?? {}),
      ...(error ? { error_code: error.code } : {}),
    },
  });
}

/**
 * Approves a suggested new code: creates it with createCode (emits coding.code_created, then
 * suggestion.approved). Approving again returns the stored result with `already: true`.
 * Errors: SUGGESTION_NOT_FOUND, SUGGESTION_ALREADY_DECIDED (rejected), DUPLICATE_NAME (a code of that
 * name was created meanwhile), CATEGORY_NOT_FOUND, INVALID_ARGUMENTS.
 */
export function approveCodeSuggestion(ctx: Ctx, id: number): Approval {
  const s = requireSuggestion(ctx, id, ['code']);
  if (s.status !== 'pending') return alreadyDecided(s);
  checkApprover(s, ctx.actor);
  const code = createCode(ctx, { name: s.name ?? '', color: s.color ?? DEFAULT_SUGGESTION_COLOR, memo: s.memo, category_id: s.category_id });
  const result = { status: 'created', code_id: code.code_id, name: code.name, color: code.color, category_id: code.category_id };
  recordApproval(ctx, s, 'approved', result);
  return { result, suggestion: mustGetSuggestion(ctx, id), already: false };
}

/**
 * Approves a suggested merge: merges with mergeCodes (emits coding.codes_merged, then suggestion.approved).
 * Approving again returns the stored result with `already: true`.
 * Errors: SUGGESTION_NOT_FOUND, SUGGESTION_ALREADY_DECIDED, CODE_NOT_FOUND (a code is gone), MERGE_SAME_CODE.
 */
export function approveMergeSuggestion(ctx: Ctx, id: number): Approval {
  const s = requireSuggestion(ctx, id, ['merge']);
  if (s.status !== 'pending') return alreadyDecided(s);
  checkApprover(s, ctx.actor);
  const m = mergeCodes(ctx, s.code_id ?? 0, s.target_code_id ?? 0);
  const result = {
    status: 'merged',
    merged_from: m.source.code_id,
    merged_into: m.target.code_id,
    source_code_name: m.source.name,
    target_code_name: m.target.name,
    segments_moved: m.segments_moved,
    duplicates_removed: m.duplicates_removed,
  };
  recordApproval(ctx, s, 'approved', result);
  return { result, suggestion: mustGetSuggestion(ctx, id), already: false };
}

/**
 * Applies one pending coding suggestion with applyCode (memo = rationale) and records its provenance.
 * Throws the domain's ToolError without writing when it cannot be applied: CODE_NOT_FOUND,
 * SOURCE_NOT_FOUND, INVALID_POSITION (also when the text of the range changed since the suggestion).
 */
function applyCodingSuggestion(ctx: Ctx, s: SuggestionRecord, cache: Map<number, string | null>): Record<string, unknown> {
  const codeId = s.code_id ?? 0;
  const sourceId = s.source_id ?? 0;
  const start = s.start_pos ?? 0;
  const end = s.end_pos ?? 0;
  requireCode(ctx, codeId);
  const r = requireTextRange(ctx, sourceId, start, end, cache);
  if (s.text !== null && r.text !== s.text) {
    throw new ToolError('INVALID_POSITION', `The text at [${start}, ${end}) of "${r.source.name}" changed since suggestion ${s.suggestion_id} was made`, {
      suggested_text: s.text,
      current_text: r.text,
    });
  }
  const applied = applyCode(
    ctx,
    { code_id: codeId, source_id: sourceId, start_pos: start, end_pos: end, memo: s.rationale === '' ? null : s.rationale },
    cache,
  );
  if (applied.created) {
    ctx.repo.insertSegmentProvenance({
      segment_id: applied.segment.segment_id,
      suggestion_id: s.suggestion_id,
      batch_id: s.batch_id,
      rationale: s.rationale === '' ? null : s.rationale,
      confidence: s.confidence,
      suggested_by: s.suggested_by,
      suggested_by_session: s.suggested_by_session,
      approved_by: ctx.actor.user,
      approved_by_session: deciderSession(ctx),
      created_at: ctx.now,
    });
  }
  return {
    status: 'applied',
    segment_id: applied.segment.segment_id,
    created: applied.created,
    code_id: codeId,
    source_id: sourceId,
    start_pos: start,
    end_pos: end,
  };
}

/**
 * Approves one coding suggestion: applies it (see the module comment; emits coding.segment_coded when the
 * segment is new, then suggestion.approved). Approving again returns the stored result with `already: true`.
 * Errors: SUGGESTION_NOT_FOUND, SUGGESTION_ALREADY_DECIDED (rejected), CODE_NOT_FOUND, SOURCE_NOT_FOUND,
 * INVALID_POSITION; on these the suggestion stays pending and nothing is written.
 */
export function approveCodingSuggestion(ctx: Ctx, id: number): Approval {
  const s = requireSuggestion(ctx, id, ['coding']);
  if (s.status !== 'pending') return alreadyDecided(s);
  checkApprover(s, ctx.actor);
  const result = applyCodingSuggestion(ctx, s, new Map());
  recordApproval(ctx, s, 'applied', result);
  return { result, suggestion: mustGetSuggestion(ctx, id), already: false };
}

/**
 * Rejects a pending suggestion of any kind, storing `reason` and `feedback`. Emits suggestion.rejected.
 * Rejecting a rejected suggestion again returns it with `already: true` (the first reason is kept).
 * Errors: SUGGESTION_NOT_FOUND, SUGGESTION_ALREADY_DECIDED (it was approved, applied or failed).
 */
export function rejectSuggestion(
  ctx: Ctx,
  id: number,
  input: { reason?: string | null; feedback?: string | null },
): { suggestion: SuggestionRecord; already: boolean } {
  const s = requireSuggestion(ctx, id);
  if (s.status === 'rejected') return { suggestion: s, already: true };
  if (s.status !== 'pending') {
    throw new ToolError('SUGGESTION_ALREADY_DECIDED', `Suggestion ${id} is already ${s.status}; it cannot be rejected`, {
      suggestion_id: id,
      status: s.status,
    });
  }
  rejectOne(ctx, s, input.reason ?? null, input.feedback ?? null);
  return { suggestion: mustGetSuggestion(ctx, id), already: false };
}

function rejectOne(ctx: Ctx, s: SuggestionRecord, reason: string | null, feedback: string | null): void {
  ctx.repo.decideSuggestion(s.suggestion_id, { status: 'rejected', by: ctx.actor.user, session_id: deciderSession(ctx), at: ctx.now, reason, feedback });
  if (s.batch_id !== null) ctx.repo.touchSuggestionBatch(s.batch_id, ctx.now);
  ctx.events.emit({
    event_type: 'suggestion.rejected',
    aggregate_type: 'suggestion',
    aggregate_id: String(s.suggestion_id),
    payload: {
      suggestion_id: s.suggestion_id,
      kind: s.kind,
      batch_id: s.batch_id,
      reason,
      feedback,
      suggested_by_session: s.suggested_by_session,
      rejected_by_session: ctx.actor.session_id,
    },
  });
}

/** A failed item of a batch. */
export interface BatchError {
  suggestion_id: number;
  error_code: string | null;
  error: string | null;
}

/** The state of a batch after a batch decision: its record (with counts), derived status, failures, and `already`. */
export interface BatchDecision {
  batch: SuggestionBatchRecord;
  status: 'pending_review' | 'partially_reviewed' | 'completed';
  errors: BatchError[];
  /** true when nothing in the batch was pending, so nothing was done */
  already: boolean;
}

function batchErrors(ctx: Ctx, batchId: number): BatchError[] {
  return ctx.repo
    .listSuggestions({ batch_id: batchId, status: 'failed' })
    .map((s) => ({ suggestion_id: s.suggestion_id, error_code: s.error_code, error: s.error }));
}

/** Applies pending items; an item that cannot be applied is marked failed (with its error) and the others go on. */
function applyItems(ctx: Ctx, items: readonly SuggestionRecord[]): void {
  const cache = new Map<number, string | null>();
  for (const s of items) {
    checkApprover(s, ctx.actor);
    try {
      recordApproval(ctx, s, 'applied', applyCodingSuggestion(ctx, s, cache));
    } catch (e) {
      if (!(e instanceof ToolError)) throw e;
      recordApproval(ctx, s, 'failed', null, e);
    }
  }
}

function decisionOf(ctx: Ctx, batchId: number, already: boolean): BatchDecision {
  const batch = requireBatch(ctx, batchId);
  return { batch, status: batchStatus(batch), errors: batchErrors(ctx, batchId), already };
}

/**
 * Approves every pending item of a batch (approve_batch_coding). Items that cannot be applied become
 * `failed` with their error code; the others are applied. Items already decided are left as they are.
 * With nothing pending, nothing is written and `already` is true. Errors: BATCH_NOT_FOUND.
 */
export function approveBatch(ctx: Ctx, batchId: number): BatchDecision {
  requireBatch(ctx, batchId);
  const pending = ctx.repo.listSuggestions({ batch_id: batchId, status: 'pending' });
  for (const p of pending) checkApprover(p, ctx.actor);
  applyItems(ctx, pending);
  return decisionOf(ctx, batchId, pending.length === 0);
}

/**
 * Responds to a batch (respond_to_code_suggestion). `accept` applies its pending items (only those whose
 * code is in `selectedCodeIds` when given; the other pending items are rejected with `reason`, default
 * "not selected"); `reject` rejects every pending item with `reason`. The response is recorded on the batch.
 * With nothing pending, nothing is written and `already` is true.
 * Errors: BATCH_NOT_FOUND, INVALID_ARGUMENTS (a selected code that no pending item of the batch suggests).
 */
export function respondToBatch(
  ctx: Ctx,
  batchId: number,
  response: 'accept' | 'reject',
  selectedCodeIds?: readonly number[],
  reason?: string | null,
): BatchDecision {
  requireBatch(ctx, batchId);
  const pending = ctx.repo.listSuggestions({ batch_id: batchId, status: 'pending' });
  if (pending.length === 0) return decisionOf(ctx, batchId, true);
  for (const p of pending) checkApprover(p, ctx.actor);
  let apply = response === 'accept' ? pending : [];
  let reject = response === 'reject' ? pending : [];
  if (response === 'accept' && selectedCodeIds && selectedCodeIds.length > 0) {
    const offered = new Set(pending.map((s) => s.code_id));
    const unknown = selectedCodeIds.filter((c) => !offered.has(c));
    if (unknown.length > 0) {
      throw new ToolError(
        'INVALID_ARGUMENTS',
        `selected_code_ids ${unknown.join(', ')} are not suggested by a pending item of batch ${batchId} (pending codes: ${[...offered].join(', ')})`,
        {
          unknown_code_ids: unknown,
          pending_code_ids: [...offered],
        },
      );
    }
    const chosen = new Set(selectedCodeIds);
    apply = pending.filter((s) => chosen.has(s.code_id ?? 0));
    reject = pending.filter((s) => !chosen.has(s.code_id ?? 0));
  }
  applyItems(ctx, apply);
  const why = reason ?? (response === 'accept' ? 'not selected' : null);
  for (const s of reject) rejectOne(ctx, s, why, null);
  ctx.repo.respondToSuggestionBatch(batchId, { response, reason: reason ?? null, by: ctx.actor.user, session_id: ctx.actor.session_id, at: ctx.now });
  return decisionOf(ctx, batchId, false);
}
