/**
 * Suggestions: what an agent proposes and the researcher decides. Marginalia embeds no language model;
 * these services record proposals (new codes, codings, merges, batches of codings), give the agent
 * material to propose from (uncoded meaning units, codes ranked by BM25 against a passage, similar
 * passages, near-duplicate codes), and apply a proposal only when it is approved, through the same
 * domain functions a direct call uses (createCode, applyCode, mergeCodes), so the same rules and the
 * same coding.* events apply.
 *
 * States (stored in the project, so they survive a restart):
 * - a suggestion: `pending` -> `approved` (a new code was created / two codes were merged),
 *   `applied` (a coding became a segment), `rejected` (with reason and feedback), or `failed` (approved
 *   as part of a batch but could not be applied; error_code and error say why). Only `pending` moves.
 *   Approving an approved/applied/failed suggestion again returns the stored result with `already: true`
 *   and writes nothing; rejecting a rejected one likewise. Approving a rejected one, or rejecting a
 *   decided one, fails with SUGGESTION_ALREADY_DECIDED. A single approval that cannot be applied fails
 *   with the domain's error code and leaves the suggestion pending.
 * - a batch (of coding suggestions): `pending_review` (no item decided) -> `partially_reviewed` (some
 *   decided) -> `completed` (none pending). The status is computed from the items' statuses on every
 *   read, so it always reflects each item (QualCoder-v2 froze it at creation).
 *
 * Provenance: a coding applied from a suggestion gets the rationale as its segment memo (QualCoder-v2's
 * behaviour) and a `segment_provenance` row naming the suggestion, its batch, who suggested it in which
 * session and who approved it in which session.
 */
import { ToolError } from '../core/errors';
import { sliceCp } from '../core/text';
import { applyCode } from './coding';
import { nextCodeColour } from './codeColours';
import { createCode, mergeCodes, requireCategory, requireCode, stampOf } from './codebook';
import type { DomainContext } from './events';
import type { Actor, Segment } from './model';
import type {
  CodeWithCounts,
  NewSuggestion,
  ProjectRepository,
  SourceWithCounts,
  SuggestionBatchKind,
  SuggestionBatchRecord,
  SuggestionKind,
  SuggestionRecord,
} from './ports';
import { cleanName, COLOR_PATTERN, MAX_CODE_NAME, nameKey } from './rules';
import { requireSource } from './sources';
import {
  Bm25Index,
  cosine,
  similarPairs,
  tfidfVector,
  tokenize,
  tokenSet,
  Vocabulary,
  type SparseVector,
  type Token,
} from './textRanking';
import { mergeRanges, splitUnits, uncoveredParts, type TextUnit } from './textUnits';

type Ctx = DomainContext<ProjectRepository>;

/** Confidence (0-100) a suggestion gets when the caller gives none (QualCoder-v2's default). */
export const DEFAULT_CONFIDENCE = 70;
/** QualCoder-v2's colour of a suggested code given none. Marginalia gives a free palette colour instead (see nextCodeColour); kept for stored suggestions without one. */
export const DEFAULT_SUGGESTION_COLOR = '#808080';
/** detect_duplicate_codes threshold default (QualCoder-v2's). */
export const DEFAULT_DUPLICATE_THRESHOLD = 0.8;
/** How many codes suggest_codes_for_range proposes by default (QualCoder-v2: top 5). */
export const DEFAULT_RANGE_LIMIT = 5;
/** auto_suggest_codes: the least confidence (0-100) a unit's best code needs to be proposed. */
export const DEFAULT_AUTO_MIN_CONFIDENCE = 30;
/** auto_suggest_codes: uncoded parts with fewer distinct content terms than this are not proposed for ("How does that feel?"). */
export const MIN_AUTO_TERMS = 3;
/** find_similar_content: matches returned by default. */
export const DEFAULT_SIMILAR_LIMIT = 10;
/** Longest text excerpt in analysis results, in code points. */
export const EXCERPT_LENGTH = 200;

// ------------------------------------------------------------------------------------------------
// approval rule

/**
 * Enforces the approval rule of the agent-context spec: only the researcher (the local UI, or a session
 * holding the reviewer token: `caller.can_approve`) may approve a suggestion; the researcher may decide a
 * suggestion made under their own credential (issue 14 item 6: agents propose, the researcher decides, and
 * a researcher working only over HTTP must be able to decide what they suggested). An agent's approve_* call
 * that the researcher approved (`caller.approved_by`, a request stored before approve_* became the
 * researcher's alone) is the researcher's decision: it passes, unless the approving session made the
 * suggestion itself. Errors: APPROVAL_FORBIDDEN (nothing is changed). Returns `self_approval`: true when the
 * researcher decided a suggestion of their own session (recorded in suggestion.approved).
 */
export function checkApprover(suggestion: SuggestionRecord, caller: Actor): { self_approval: boolean } {
  if (caller.approved_by !== undefined) {
    if (suggestion.suggested_by_session !== null && suggestion.suggested_by_session === caller.approved_by) {
      throw new ToolError('APPROVAL_FORBIDDEN', `A session cannot approve its own suggestion (${suggestion.suggestion_id})`, { suggestion_id: suggestion.suggestion_id });
    }
    return { self_approval: false };
  }
  if (!caller.can_approve) {
    throw new ToolError('APPROVAL_FORBIDDEN', 'Only the researcher (the VS Code UI, or a client holding the reviewer token) may approve suggestions; agents propose, the researcher decides', {
      suggestion_id: suggestion.suggestion_id,
    });
  }
  // the researcher may decide suggestions made under their own credential (issue 14 item 6): agents never decide
  const self = suggestion.suggested_by_session !== null && suggestion.suggested_by_session === caller.session_id;
  return { self_approval: self };
}

// ------------------------------------------------------------------------------------------------
// lookups

const KIND_TOOL: Record<SuggestionKind, string> = {
  code: 'approve_suggestion',
  coding: 'approve_coding_suggestion',
  merge: 'approve_merge',
};
const KIND_LABEL: Record<SuggestionKind, string> = { code: 'new-code', coding: 'coding', merge: 'merge' };

/**
 * The suggestion with id `id`, of one of `kinds` when given. Errors: SUGGESTION_NOT_FOUND (unknown id, or
 * a suggestion of another kind: the message names the tool that takes it).
 */
export function requireSuggestion(ctx: Ctx, id: number, kinds?: readonly SuggestionKind[]): SuggestionRecord {
  const s = ctx.repo.getSuggestion(id);
  if (!s) throw new ToolError('SUGGESTION_NOT_FOUND', `No suggestion with id ${id}`);
  if (kinds && !kinds.includes(s.kind)) {
    throw new ToolError(
      'SUGGESTION_NOT_FOUND',
      `No ${kinds.map((k) => KIND_LABEL[k]).join(' or ')} suggestion with id ${id}: ${id} is a ${KIND_LABEL[s.kind]} suggestion (decide it with ${KIND_TOOL[s.kind]})`,
      { kind: s.kind },
    );
  }
  return s;
}

/** The batch with id `id`. Errors: BATCH_NOT_FOUND. */
export function requireBatch(ctx: Ctx, id: number): SuggestionBatchRecord {
  const b = ctx.repo.getSuggestionBatch(id);
  if (!b) throw new ToolError('BATCH_NOT_FOUND', `No suggestion batch with batch_id ${id}`);
  return b;
}

/** A batch's status, derived from its items: pending_review, partially_reviewed or completed. */
export function batchStatus(b: Pick<SuggestionBatchRecord, 'total_count' | 'pending_count'>): 'pending_review' | 'partially_reviewed' | 'completed' {
  if (b.pending_count === 0) return 'completed';
  return b.pending_count === b.total_count ? 'pending_review' : 'partially_reviewed';
}

/** A range of a text source, checked: the source, its full text and the range's text (positions in code points). */
export interface TextRange {
  source: SourceWithCounts;
  fullText: string;
  text: string;
}

/**
 * Checks `[start, end)` (code points) against a text source; `textCache` (source id -> text) saves
 * re-reading a source for many ranges. Errors: SOURCE_NOT_FOUND, INVALID_POSITION (a source without text,
 * a negative or empty range, or one past the end).
 */
export function requireTextRange(ctx: Ctx, sourceId: number, start: number, end: number, textCache?: Map<number, string | null>): TextRange {
  const source = requireSource(ctx, sourceId);
  let fullText = textCache?.get(sourceId);
  if (fullText === undefined) {
    fullText = ctx.repo.getSourceText(sourceId);
    textCache?.set(sourceId, fullText);
  }
  if (fullText === null) throw new ToolError('INVALID_POSITION', `The source "${source.name}" (${source.type}) has no text`);
  if (!Number.isInteger(start) || !Number.isInteger(end) || start < 0 || end <= start || end > source.length) {
    throw new ToolError(
      'INVALID_POSITION',
      `The range [${start}, ${end}) is not inside the source "${source.name}" (0..${source.length} code points, end after start)`,
      { start_pos: start, end_pos: end, source_length: source.length },
    );
  }
  return { source, fullText, text: sliceCp(fullText, start, end) };
}

function clampConfidence(c: number | undefined): number {
  const v = c ?? DEFAULT_CONFIDENCE;
  if (!Number.isFinite(v) || v < 0 || v > 100) throw new ToolError('INVALID_ARGUMENTS', `confidence must be 0 to 100 (got ${v})`);
  return Math.round(v);
}

function emptyNew(): Omit<NewSuggestion, 'kind' | 'rationale' | 'confidence'> {
  return {
    batch_id: null,
    name: null,
    name_key: null,
    color: null,
    memo: null,
    category_id: null,
    sample_contexts: null,
    code_id: null,
    target_code_id: null,
    source_id: null,
    start_pos: null,
    end_pos: null,
    text: null,
    details: null,
  };
}

function mustGetSuggestion(ctx: Ctx, id: number): SuggestionRecord {
  const s = ctx.repo.getSuggestion(id);
  if (!s) throw new Error(`suggestion ${id} vanished`);
  return s;
}

// ------------------------------------------------------------------------------------------------
// recording suggestions

/** A recorded suggestion and whether this call created it (false: an identical pending one existed). */
export interface Recorded {
  suggestion: SuggestionRecord;
  created: boolean;
}

/**
 * Records a suggested new code (pending). A pending suggestion of the same name (compared as code names
 * are) is returned instead (created: false). Emits suggestion.code_suggested.
 * Errors: DUPLICATE_NAME (a code of that name exists), CATEGORY_NOT_FOUND, INVALID_ARGUMENTS (name,
 * colour, confidence outside 0-100).
 */
export function suggestNewCode(
  ctx: Ctx,
  input: { name: string; rationale: string; color?: string; memo?: string | null; category_id?: number | null; confidence?: number; sample_contexts?: string[] },
): Recorded {
  const name = cleanName(input.name, MAX_CODE_NAME, 'code', 'INVALID_ARGUMENTS');
  // no colour given: the palette colour no code uses yet (as create_code gives), not QualCoder's grey
  const color = (input.color ?? nextCodeColour(ctx.repo)).toUpperCase();
  if (!COLOR_PATTERN.test(color)) throw new ToolError('INVALID_ARGUMENTS', `The colour "${input.color}" is not #RRGGBB`);
  const confidence = clampConfidence(input.confidence);
  const key = nameKey(name);
  const clash = ctx.repo.findCodeByKey(key);
  if (clash) throw new ToolError('DUPLICATE_NAME', `A code named "${clash.name}" already exists (code_id ${clash.code_id})`, { code_id: clash.code_id });
  if (input.category_id !== undefined && input.category_id !== null) requireCategory(ctx, input.category_id);
  const existing = ctx.repo.findPendingSuggestion('code', { name_key: key });
  if (existing) return { suggestion: existing, created: false };
  const id = ctx.repo.insertSuggestion(
    {
      ...emptyNew(),
      kind: 'code',
      name,
      name_key: key,
      color,
      memo: input.memo ?? null,
      category_id: input.category_id ?? null,
      sample_contexts: input.sample_contexts && input.sample_contexts.length > 0 ? JSON.stringify(input.sample_contexts) : null,
      rationale: input.rationale,
      confidence,
    },
    stampOf(ctx),
  );
  ctx.events.emit({
    event_type: 'suggestion.code_suggested',
    aggregate_type: 'suggestion',
    aggregate_id: String(id),
    payload: { suggestion_id: id, name, color, memo: input.memo ?? null, category_id: input.category_id ?? null, rationale: input.rationale, confidence },
  });
  return { suggestion: mustGetSuggestion(ctx, id), created: true };
}

/**
 * Records a suggested merge of `source_code_id` into `target_code_id` (pending). A pending suggestion for
 * the same pair is returned instead (created: false). Emits suggestion.merge_suggested.
 * Errors: MERGE_SAME_CODE, CODE_NOT_FOUND, INVALID_ARGUMENTS (confidence).
 */
export function suggestMerge(ctx: Ctx, input: { source_code_id: number; target_code_id: number; rationale: string; confidence?: number }): Recorded {
  if (input.source_code_id === input.target_code_id) {
    throw new ToolError('MERGE_SAME_CODE', `A code cannot be merged into itself (code_id ${input.source_code_id})`);
  }
  const source = requireCode(ctx, input.source_code_id);
  const target = requireCode(ctx, input.target_code_id);
  const confidence = clampConfidence(input.confidence);
  const existing = ctx.repo.findPendingSuggestion('merge', { code_id: source.code_id, target_code_id: target.code_id });
  if (existing) return { suggestion: existing, created: false };
  const id = ctx.repo.insertSuggestion(
    {
      ...emptyNew(),
      kind: 'merge',
      code_id: source.code_id,
      target_code_id: target.code_id,
      rationale: input.rationale,
      confidence,
      details: JSON.stringify({ source_code_name: source.name, target_code_name: target.name }),
    },
    stampOf(ctx),
  );
  ctx.events.emit({
    event_type: 'suggestion.merge_suggested',
    aggregate_type: 'suggestion',
    aggregate_id: String(id),
    payload: { suggestion_id: id, source_code_id: source.code_id, target_code_id: target.code_id, rationale: input.rationale, confidence },
  });
  return { suggestion: mustGetSuggestion(ctx, id), created: true };
}

/** Input of one coding suggestion (positions in code points). */
export interface CodingInput {
  source_id: number;
  code_id: number;
  start_pos: number;
  end_pos: number;
  rationale?: string;
  confidence?: number;
  /** JSON-able scores and matched terms, stored with the suggestion */
  details?: unknown;
}

/**
 * Records a suggested coding (pending), in batch `batchId` when given. A pending suggestion of the same
 * code on the same range (outside any batch, when `batchId` is null) is returned instead (created: false).
 * Emits suggestion.coding_suggested unless it belongs to a batch (the batch's event lists its items).
 * Errors: CODE_NOT_FOUND, SOURCE_NOT_FOUND, INVALID_POSITION, INVALID_ARGUMENTS (confidence).
 */
export function suggestCoding(ctx: Ctx, input: CodingInput, batchId: number | null = null, range?: TextRange): Recorded {
  requireCode(ctx, input.code_id);
  const r = range ?? requireTextRange(ctx, input.source_id, input.start_pos, input.end_pos);
  const confidence = clampConfidence(input.confidence);
  if (batchId === null) {
    const existing = ctx.repo.findPendingSuggestion('coding', { code_id: input.code_id, source_id: input.source_id, start_pos: input.start_pos, end_pos: input.end_pos });
    if (existing) return { suggestion: existing, created: false };
  }
  const id = ctx.repo.insertSuggestion(
    {
      ...emptyNew(),
      kind: 'coding',
      batch_id: batchId,
      code_id: input.code_id,
      source_id: input.source_id,
      start_pos: input.start_pos,
      end_pos: input.end_pos,
      text: r.text,
      rationale: input.rationale ?? '',
      confidence,
      details: input.details === undefined ? null : JSON.stringify(input.details),
    },
    stampOf(ctx),
  );
  if (batchId === null) {
    ctx.events.emit({
      event_type: 'suggestion.coding_suggested',
      aggregate_type: 'suggestion',
      aggregate_id: String(id),
      payload: {
        suggestion_id: id,
        code_id: input.code_id,
        source_id: input.source_id,
        start: input.start_pos,
        end: input.end_pos,
        rationale: input.rationale ?? '',
        confidence,
      },
    });
  }
  return { suggestion: mustGetSuggestion(ctx, id), created: true };
}

/**
 * Creates a batch of coding suggestions, one per item (items must already be checked by the caller or are
 * checked here: CODE_NOT_FOUND, SOURCE_NOT_FOUND, INVALID_POSITION). Emits suggestion.batch_created with
 * the item ids. Returns the batch and its items in order.
 */
export function createBatch(
  ctx: Ctx,
  batch: { kind: SuggestionBatchKind; source_id?: number | null; code_id?: number | null; start_pos?: number | null; end_pos?: number | null; rationale?: string | null; params?: unknown },
  items: readonly (CodingInput & { range?: TextRange })[],
): { batch: SuggestionBatchRecord; items: SuggestionRecord[] } {
  const id = ctx.repo.insertSuggestionBatch(
    {
      kind: batch.kind,
      source_id: batch.source_id ?? null,
      code_id: batch.code_id ?? null,
      start_pos: batch.start_pos ?? null,
      end_pos: batch.end_pos ?? null,
      rationale: batch.rationale ?? null,
      params: batch.params === undefined ? null : JSON.stringify(batch.params),
    },
    stampOf(ctx),
  );
  const recorded = items.map((it) => suggestCoding(ctx, it, id, it.range).suggestion);
  ctx.events.emit({
    event_type: 'suggestion.batch_created',
    aggregate_type: 'suggestion_batch',
    aggregate_id: String(id),
    payload: {
      batch_id: id,
      kind: batch.kind,
      source_id: batch.source_id ?? null,
      code_id: batch.code_id ?? null,
      count: recorded.length,
      suggestion_ids: recorded.map((s) => s.suggestion_id),
    },
  });
  return { batch: requireBatch(ctx, id), items: recorded };
}

// ------------------------------------------------------------------------------------------------
// deciding suggestions

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

function recordApproval(ctx: Ctx, s: SuggestionRecord, status: 'approved' | 'applied' | 'failed', result: Record<string, unknown> | null, error?: ToolError): void {
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
  const applied = applyCode(ctx, { code_id: codeId, source_id: sourceId, start_pos: start, end_pos: end, memo: s.rationale === '' ? null : s.rationale }, cache);
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
  return { status: 'applied', segment_id: applied.segment.segment_id, created: applied.created, code_id: codeId, source_id: sourceId, start_pos: start, end_pos: end };
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
export function rejectSuggestion(ctx: Ctx, id: number, input: { reason?: string | null; feedback?: string | null }): { suggestion: SuggestionRecord; already: boolean } {
  const s = requireSuggestion(ctx, id);
  if (s.status === 'rejected') return { suggestion: s, already: true };
  if (s.status !== 'pending') {
    throw new ToolError('SUGGESTION_ALREADY_DECIDED', `Suggestion ${id} is already ${s.status}; it cannot be rejected`, { suggestion_id: id, status: s.status });
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
    payload: { suggestion_id: s.suggestion_id, kind: s.kind, batch_id: s.batch_id, reason, feedback, suggested_by_session: s.suggested_by_session, rejected_by_session: ctx.actor.session_id },
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
  return ctx.repo.listSuggestions({ batch_id: batchId, status: 'failed' }).map((s) => ({ suggestion_id: s.suggestion_id, error_code: s.error_code, error: s.error }));
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
export function respondToBatch(ctx: Ctx, batchId: number, response: 'accept' | 'reject', selectedCodeIds?: readonly number[], reason?: string | null): BatchDecision {
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
      throw new ToolError('INVALID_ARGUMENTS', `selected_code_ids ${unknown.join(', ')} are not suggested by a pending item of batch ${batchId} (pending codes: ${[...offered].join(', ')})`, {
        unknown_code_ids: unknown,
        pending_code_ids: [...offered],
      });
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
 * (textRanking.ts), so "watering" meets "Water disputes".
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
      const segments = code.segment_count > 0 ? repo.listSegmentsForCode(code.code_id).map((segment) => ({ segment, terms: tokenize(segment.text).map((t) => t.term) })) : [];
      return { code, docTerms: [...nameTerms, ...nameTerms, ...memoTerms], selfScore: 0, segments, segVector: null };
    });
    this.bm25 = new Bm25Index(this.profiles.map((p) => p.docTerms));
    this.profiles.forEach((p, i) => (p.selfScore = this.bm25.selfScore(p.docTerms, i)));
    const withSegments = this.profiles.filter((p) => p.segments.length > 0);
    this.segIndex = new Bm25Index(withSegments.map((p) => p.segments.flatMap((s) => s.terms)));
    this.segIdf = (t) => this.segIndex.idf(t);
    for (const p of withSegments) p.segVector = tfidfVector(p.segments.flatMap((s) => s.terms), this.segIdf);
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
        segVector = kept.length > 0 ? tfidfVector(kept.flatMap((s) => s.terms), this.segIdf) : null;
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
    { kind: 'range', source_id: input.source_id, start_pos: input.start_pos, end_pos: input.end_pos, params: { limit: input.limit ?? DEFAULT_RANGE_LIMIT, min_confidence: input.min_confidence ?? 1 } },
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
    { kind: 'auto', source_id: input.source_id, params: { min_confidence: minConfidence, per_range: perRange, max_suggestions: input.max_suggestions ?? null } },
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

// ------------------------------------------------------------------------------------------------
// material: similar passages

/** A passage found by {@link findSimilarContent} (positions in code points). */
export interface SimilarPassage {
  source_id: number;
  source_name: string;
  start_pos: number;
  end_pos: number;
  text: string;
  unit: TextUnit['kind'];
  speaker: string | null;
  score: number;
  matched_terms: string[];
  /** codes with a segment overlapping the passage */
  coded_with: { code_id: number; name: string }[];
}

/**
 * Passages (meaning units of every text source, or of one) ranked by BM25 (Robertson & Zaragoza 2009)
 * against `searchText`, best first, at most `limit`. With `codeId`, passages already overlapping a segment
 * of that code are left out (candidates to code with it). `terms` is the query as stemmed terms; an empty
 * query finds nothing. Errors: SOURCE_NOT_FOUND, CODE_NOT_FOUND.
 */
export function findSimilarContent(
  ctx: Ctx,
  input: { search_text: string; source_id?: number; code_id?: number; limit?: number },
): { matches: SimilarPassage[]; units_searched: number; terms: string[] } {
  const sources = input.source_id !== undefined ? [requireSource(ctx, input.source_id)] : ctx.repo.listSources('text');
  const excludeCode = input.code_id !== undefined ? requireCode(ctx, input.code_id) : undefined;
  const codeNames = new Map(ctx.repo.listCodes().map((c) => [c.code_id, c.name]));
  const query = tokenize(input.search_text);
  const words = new Map<string, string>();
  for (const t of query) if (!words.has(t.term)) words.set(t.term, t.word);
  const units: { source: SourceWithCounts; text: string; unit: TextUnit; segments: Segment[] }[] = [];
  const docs: string[][] = [];
  for (const source of sources) {
    const text = ctx.repo.getSourceText(source.source_id);
    if (text === null) continue;
    const segments = ctx.repo.listSegmentsForSource(source.source_id);
    for (const unit of splitUnits(text)) {
      const unitText = sliceCp(text, unit.start, unit.end);
      const overlapping = segments.filter((s) => s.start_pos < unit.end && s.end_pos > unit.start);
      if (excludeCode && overlapping.some((s) => s.code_id === excludeCode.code_id)) continue;
      units.push({ source, text: unitText, unit, segments: overlapping });
      docs.push(tokenize(unitText).map((t) => t.term));
    }
  }
  const index = new Bm25Index(docs);
  const hits = index.search(
    query.map((t) => t.term),
    input.limit ?? DEFAULT_SIMILAR_LIMIT,
  );
  return {
    units_searched: units.length,
    terms: [...words.keys()],
    matches: hits.map((h) => {
      const u = units[h.doc]!;
      return {
        source_id: u.source.source_id,
        source_name: u.source.name,
        start_pos: u.unit.start,
        end_pos: u.unit.end,
        text: u.text,
        unit: u.unit.kind,
        speaker: u.unit.speaker,
        score: round(h.score),
        matched_terms: h.matched.map((t) => words.get(t) ?? t),
        coded_with: [...new Set(u.segments.map((s) => s.code_id))].map((id) => ({ code_id: id, name: codeNames.get(id) ?? '' })),
      };
    }),
  };
}

/**
 * Records one code for several ranges as a batch (suggest_batch_coding): one pending coding suggestion per
 * distinct range, all with `rationale`. Every range is checked first, so a bad one writes nothing.
 * Emits suggestion.batch_created. Errors (details.index names the range): CODE_NOT_FOUND,
 * SOURCE_NOT_FOUND, INVALID_POSITION, INVALID_ARGUMENTS (confidence).
 */
export function suggestBatchCoding(
  ctx: Ctx,
  input: { code_id: number; segments: { source_id: number; start_pos: number; end_pos: number }[]; rationale: string; confidence?: number },
): { batch: SuggestionBatchRecord; items: SuggestionRecord[]; duplicates_dropped: number } {
  requireCode(ctx, input.code_id);
  const seen = new Set<string>();
  const items: (CodingInput & { range: TextRange })[] = [];
  input.segments.forEach((seg, index) => {
    const key = `${seg.source_id}:${seg.start_pos}:${seg.end_pos}`;
    if (seen.has(key)) return;
    seen.add(key);
    let range: TextRange;
    try {
      range = requireTextRange(ctx, seg.source_id, seg.start_pos, seg.end_pos);
    } catch (e) {
      if (e instanceof ToolError) throw new ToolError(e.code, `segments[${index}]: ${e.message}. Nothing was recorded.`, { index, ...(e.details as object | undefined) });
      throw e;
    }
    items.push({ source_id: seg.source_id, code_id: input.code_id, start_pos: seg.start_pos, end_pos: seg.end_pos, rationale: input.rationale, confidence: input.confidence ?? 80, range });
  });
  const made = createBatch(ctx, { kind: 'batch_coding', code_id: input.code_id, rationale: input.rationale }, items);
  return { batch: made.batch, items: made.items, duplicates_dropped: input.segments.length - items.length };
}

// ------------------------------------------------------------------------------------------------
// material: near-duplicate codes

/** A pair of near-duplicate codes (similarities 0..1). */
export interface DuplicateCandidate {
  code_a: CodeWithCounts;
  code_b: CodeWithCounts;
  similarity: number;
  name_similarity: number;
  memo_similarity: number | null;
  shared_terms: string[];
  rationale: string;
}

/**
 * Pairs of codes whose names (and memos, when both have one) share most of their stemmed tokens:
 * similarity = Dice coefficient of the name token sets, or 0.6 x name + 0.4 x memo Dice when both codes
 * have a memo (QualCoder-v2's weighting), or the memo Dice alone when higher and both memos have at least
 * MEMO_ALONE_MIN_TERMS (6) distinct terms (near-identical memos under different names; textRanking.ts
 * similarPairs), at least `threshold` (0 < threshold <= 1, default 0.8); best
 * first (ties in codebook order), at most `limit`; in each pair `code_a` is the older code (smaller code_id). Stop words are left out of names unless a name has nothing else. Uses the
 * prefix-filtered similarity join of textRanking.ts: thousands of codes take milliseconds.
 */
export function detectDuplicateCodes(codes: readonly CodeWithCounts[], threshold = DEFAULT_DUPLICATE_THRESHOLD, limit = Number.POSITIVE_INFINITY): DuplicateCandidate[] {
  const vocab = new Vocabulary();
  const items = codes.map((c) => {
    let nameTokens = tokenize(c.name);
    if (nameTokens.length === 0) nameTokens = tokenize(c.name, { keepStopWords: true });
    const memoTokens = c.memo ? tokenize(c.memo) : [];
    return {
      name: tokenSet(
        nameTokens.map((t) => t.term),
        vocab,
      ),
      memo:
        memoTokens.length > 0
          ? tokenSet(
              memoTokens.map((t) => t.term),
              vocab,
            )
          : null,
      /** stemmed term -> the word as the name writes it */
      nameWords: new Map(nameTokens.map((t) => [t.term, t.word])),
    };
  });
  const pairs = similarPairs(items, threshold);
  return pairs.slice(0, limit).map((p) => {
    // code_a is the older code (smaller code_id)
    const [ia, ib] = codes[p.a]!.code_id < codes[p.b]!.code_id ? [p.a, p.b] : [p.b, p.a];
    const a = codes[ia]!;
    const b = codes[ib]!;
    const shared = [...items[ia]!.nameWords].filter(([t]) => items[ib]!.nameWords.has(t)).map(([, w]) => w);
    const pct = (x: number) => `${Math.round(100 * x)}%`;
    const names = `The names share ${shared.map((w) => `"${w}"`).join(', ') || 'no words'} (name similarity ${pct(p.name)}`;
    const rationale =
      p.basis === 'memo'
        ? `The memos are ${pct(p.memo ?? 0)} alike, which counts on its own for memos this long. ${names}).`
        : `${names}${p.memo === null ? ')' : `; memo similarity ${pct(p.memo)}, weighted 60/40 to ${pct(p.similarity)})`}.`;
    return { code_a: a, code_b: b, similarity: round(p.similarity), name_similarity: round(p.name), memo_similarity: p.memo === null ? null : round(p.memo), shared_terms: shared, rationale };
  });
}
