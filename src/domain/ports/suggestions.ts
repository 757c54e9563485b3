import type { Stamp } from './common';

/** The three kinds of suggestion: a new code, a coding (code on a text range), a merge of two codes. */
export type SuggestionKind = 'code' | 'coding' | 'merge';
/**
 * A suggestion's state. pending -> approved (a new code was created, or two codes merged) | applied (a
 * coding suggestion became a segment) | rejected | failed (approved inside a batch, but could not be applied).
 */
export type SuggestionStatus = 'pending' | 'approved' | 'applied' | 'rejected' | 'failed';

/**
 * A stored suggestion. Which fields are set depends on `kind`: code -> name, color, memo, category_id,
 * sample_contexts; coding -> code_id, source_id, start_pos, end_pos (code points, end exclusive), text
 * (the range's text when suggested); merge -> code_id (the code to merge away) and target_code_id.
 * `details` and `sample_contexts` are JSON text; `result` is the JSON the approval returned.
 */
export interface SuggestionRecord {
  suggestion_id: number;
  kind: SuggestionKind;
  status: SuggestionStatus;
  batch_id: number | null;
  name: string | null;
  color: string | null;
  memo: string | null;
  category_id: number | null;
  sample_contexts: string | null;
  code_id: number | null;
  target_code_id: number | null;
  source_id: number | null;
  start_pos: number | null;
  end_pos: number | null;
  text: string | null;
  rationale: string;
  /** 0 to 100 */
  confidence: number;
  details: string | null;
  suggested_by: string;
  suggested_by_session: string | null;
  created_at: string;
  approved_by: string | null;
  approved_by_session: string | null;
  approved_at: string | null;
  rejected_by: string | null;
  rejected_by_session: string | null;
  rejected_at: string | null;
  reason: string | null;
  feedback: string | null;
  result: string | null;
  error_code: string | null;
  error: string | null;
}

/** Fields of a new suggestion (status pending); `name_key` is set for code suggestions. */
export type NewSuggestion = Pick<
  SuggestionRecord,
  | 'kind'
  | 'batch_id'
  | 'name'
  | 'color'
  | 'memo'
  | 'category_id'
  | 'sample_contexts'
  | 'code_id'
  | 'target_code_id'
  | 'source_id'
  | 'start_pos'
  | 'end_pos'
  | 'text'
  | 'rationale'
  | 'confidence'
  | 'details'
> & { name_key: string | null };

/** A decision on a suggestion: approval (approved, applied or failed) or rejection, with who, when and the outcome. */
export type SuggestionDecision =
  | {
      status: 'approved' | 'applied' | 'failed';
      by: string;
      session_id: string;
      at: string;
      result: string | null;
      error_code: string | null;
      error: string | null;
    }
  | { status: 'rejected'; by: string; session_id: string; at: string; reason: string | null; feedback: string | null };

/** Which suggestions to list (all given fields must match), oldest first. */
export interface SuggestionFilter {
  kind?: SuggestionKind;
  status?: SuggestionStatus;
  source_id?: number;
  batch_id?: number;
}

/** The three kinds of batch: codes for one range, codes for a source's uncoded text, one code for many ranges. */
export type SuggestionBatchKind = 'range' | 'auto' | 'batch_coding';

/** A stored batch with the counts of its items by status (its status is derived from them). */
export interface SuggestionBatchRecord {
  batch_id: number;
  kind: SuggestionBatchKind;
  source_id: number | null;
  code_id: number | null;
  start_pos: number | null;
  end_pos: number | null;
  rationale: string | null;
  /** JSON of the parameters the batch was made with */
  params: string | null;
  response: 'accept' | 'reject' | null;
  response_reason: string | null;
  responded_by: string | null;
  responded_by_session: string | null;
  responded_at: string | null;
  owner: string;
  session_id: string | null;
  created_at: string;
  updated_at: string;
  total_count: number;
  pending_count: number;
  applied_count: number;
  approved_count: number;
  rejected_count: number;
  failed_count: number;
}

/** Fields of a new batch. */
export type NewSuggestionBatch = Pick<SuggestionBatchRecord, 'kind' | 'source_id' | 'code_id' | 'start_pos' | 'end_pos' | 'rationale' | 'params'>;

/** Where an approved coding came from: the suggestion, who suggested it and who approved it. */
export interface SegmentProvenance {
  segment_id: number;
  suggestion_id: number;
  batch_id: number | null;
  rationale: string | null;
  confidence: number | null;
  suggested_by: string | null;
  suggested_by_session: string | null;
  approved_by: string;
  approved_by_session: string | null;
  created_at: string;
}

/**
 * Suggestions an agent makes for the researcher to decide (table `suggestions`), the batches that group them
 * (table `suggestion_batches`), and where an approved coding came from (table `segment_provenance`).
 */
export interface SuggestionRepository {
  /** Stores a new suggestion (status pending) and returns its id. */
  insertSuggestion(s: NewSuggestion, stamp: Stamp): number;
  /** One suggestion; undefined for an unknown id. */
  getSuggestion(id: number): SuggestionRecord | undefined;
  /** Suggestions matching every given field of `filter`, by id. */
  listSuggestions(filter: SuggestionFilter): SuggestionRecord[];
  /** The oldest pending suggestion of `kind` with exactly the given identifying fields (name_key for code suggestions), if any. */
  findPendingSuggestion(
    kind: SuggestionKind,
    match: { name_key?: string; code_id?: number; target_code_id?: number; source_id?: number; start_pos?: number; end_pos?: number },
  ): SuggestionRecord | undefined;
  /** Records a decision on a pending suggestion: its new status, who decided, when, and the outcome or the reason. */
  decideSuggestion(id: number, d: SuggestionDecision): void;
  /** Stores a new batch and returns its id. */
  insertSuggestionBatch(b: NewSuggestionBatch, stamp: Stamp): number;
  /** One batch with the counts of its items by status; undefined for an unknown id. */
  getSuggestionBatch(id: number): SuggestionBatchRecord | undefined;
  /** Records the response given to a batch (respond_to_code_suggestion) and sets its `updated_at`. */
  respondToSuggestionBatch(id: number, r: { response: 'accept' | 'reject'; reason: string | null; by: string; session_id: string; at: string }): void;
  /** Sets a batch's `updated_at` (after one of its items was decided). */
  touchSuggestionBatch(id: number, now: string): void;
  /** Records where an approved coding came from (one row per segment). */
  insertSegmentProvenance(p: SegmentProvenance): void;
  /** Where a text segment came from, when it was an approved suggestion. */
  getSegmentProvenance(segmentId: number): SegmentProvenance | undefined;
}
