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
 * Files: recording suggestions and batches (here), deciding them (suggestionDecisions.ts), material to
 * propose from (codeRanking.ts: uncoded units and codes ranked for a passage; similarContent.ts: similar
 * passages; duplicateCodes.ts: near-duplicate codes), all ranked by src/domain/ranking.
 *
 * Provenance: a coding applied from a suggestion gets the rationale as its segment memo (QualCoder-v2's
 * behaviour) and a `segment_provenance` row naming the suggestion, its batch, who suggested it in which
 * session and who approved it in which session.
 */
import { ToolError } from '../core/errors';
import { sliceCp } from '../core/text';
import { nextCodeColour } from './codeColours';
import { requireCategory, requireCode, stampOf } from './codebook';
import type { DomainContext } from './events';
import type { Actor } from './model';
import type { NewSuggestion, ProjectRepository, SourceWithCounts, SuggestionBatchKind, SuggestionBatchRecord, SuggestionKind, SuggestionRecord } from './ports';
import { cleanName, COLOR_PATTERN, MAX_CODE_NAME, nameKey } from './rules';
import { requireRangeInside, requireSource } from './sources';

type Ctx = DomainContext<ProjectRepository>;

/** Confidence (0-100) a suggestion gets when the caller gives none (QualCoder-v2's default). */
export const DEFAULT_CONFIDENCE = 70;
/** QualCoder-v2's colour of a suggested code given none. Marginalia gives a free palette colour instead (see nextCodeColour); kept for stored suggestions without one. */
export const DEFAULT_SUGGESTION_COLOR = '#808080';

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
      throw new ToolError('APPROVAL_FORBIDDEN', `A session cannot approve its own suggestion (${suggestion.suggestion_id})`, {
        suggestion_id: suggestion.suggestion_id,
      });
    }
    return { self_approval: false };
  }
  if (!caller.can_approve) {
    throw new ToolError(
      'APPROVAL_FORBIDDEN',
      'Only the researcher (the VS Code UI, or a client holding the reviewer token) may approve suggestions; agents propose, the researcher decides',
      {
        suggestion_id: suggestion.suggestion_id,
      },
    );
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
  requireRangeInside(source, start, end);
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

/** The stored suggestion `id` just written or decided by this module; a plain Error (an internal fault, TOOL_EXECUTION_ERROR) if it is gone. */
export function mustGetSuggestion(ctx: Ctx, id: number): SuggestionRecord {
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
  input: {
    name: string;
    rationale: string;
    color?: string;
    memo?: string | null;
    category_id?: number | null;
    confidence?: number;
    sample_contexts?: string[];
  },
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
    const existing = ctx.repo.findPendingSuggestion('coding', {
      code_id: input.code_id,
      source_id: input.source_id,
      start_pos: input.start_pos,
      end_pos: input.end_pos,
    });
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
  batch: {
    kind: SuggestionBatchKind;
    source_id?: number | null;
    code_id?: number | null;
    start_pos?: number | null;
    end_pos?: number | null;
    rationale?: string | null;
    params?: unknown;
  },
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
