import type { MergeConflict, MergeConflictChoice, StoredMergeConflict } from './mergeConflicts';
import type { EventRecord } from './events';
import type { Category, Code, CoderRole, Folder, Segment, SegmentMark, SourceInfo, SourceType } from './model';

/** A code with its usage counts. */
export interface CodeWithCounts extends Code {
  segment_count: number;
  av_segment_count: number;
}

/** A category with the number of codes directly in it. */
export interface CategoryWithCount extends Category {
  code_count: number;
}

/** A source with its usage counts. */
export interface SourceWithCounts extends SourceInfo {
  segment_count: number;
  av_segment_count: number;
}

/** Fields of a new code. */
export interface NewCode {
  name: string;
  color: string;
  memo: string | null;
  category_id: number | null;
}

/** Fields of a new text segment (positions in code points). */
export interface NewSegment {
  code_id: number;
  source_id: number;
  start_pos: number;
  end_pos: number;
  text: string;
  memo: string | null;
  importance: number;
}

/** Fields of a new source. `text` is null for media; `length` counts its code points. */
export interface NewSource {
  name: string;
  type: SourceType;
  text: string | null;
  length: number;
  memo: string | null;
  origin: string | null;
  file_path: string | null;
  mime: string | null;
  size_bytes: number | null;
  folder_id: number | null;
}

/** Stamp of who and when, written on every row a change creates. */
export interface Stamp {
  owner: string;
  session_id: string;
  now: string;
  /** the owner's coder role, stored as `coder_role` (migration 14); absent: unknown (NULL) */
  coder_role?: 'researcher' | 'agent' | null;
}

/**
 * The persistence port the domain services use. The store implements it over SQLite; every write
 * runs inside the caller's transaction. Names compare through `name_key` (see `nameKey` in rules.ts).
 */
export interface ProjectRepository {
  // codes
  listCodes(): CodeWithCounts[];
  getCode(id: number): CodeWithCounts | undefined;
  findCodeByKey(key: string): Code | undefined;
  insertCode(code: NewCode, key: string, stamp: Stamp): number;
  updateCode(id: number, fields: Partial<Pick<Code, 'name' | 'color' | 'memo' | 'category_id'>>, key: string | null, now: string): void;
  deleteCode(id: number): void;
  // categories
  listCategories(): CategoryWithCount[];
  getCategory(id: number): Category | undefined;
  findCategoryByKey(key: string): Category | undefined;
  insertCategory(name: string, key: string, parentId: number | null, memo: string | null, stamp: Stamp): number;
  /** Changes a category's name (with its `name_key`), memo or parent; `key` is null unless the name changes. */
  updateCategory(id: number, fields: Partial<Pick<Category, 'name' | 'memo' | 'parent_id'>>, key: string | null): void;
  /** Deletes a category row; the caller has moved its codes and sub-categories first (foreign keys). */
  deleteCategory(id: number): void;
  // segments
  listSegmentsForSource(sourceId: number): Segment[];
  /**
   * The segments of a source without their text, by position: what the editor's decorations draw
   * (reading 5,000 segments' text was most of a redraw; bench/decorations.ts).
   */
  listSegmentMarksForSource(sourceId: number): SegmentMark[];
  /** Segments of a code across all sources, by source then position. */
  listSegmentsForCode(codeId: number): Segment[];
  /**
   * Who has coded with `codeId` (text and AV segments): one row per owner, session and coder role with the number
   * of codings, most first (undo_agent_action, src/domain/undo.ts).
   */
  codingCodersOfCode(codeId: number): { owner: string; session_id: string | null; coder_role: 'researcher' | 'agent' | null; count: number }[];
  getSegment(id: number): Segment | undefined;
  findSegment(codeId: number, sourceId: number, start: number, end: number, owner: string): Segment | undefined;
  insertSegment(seg: NewSegment, stamp: Stamp): number;
  deleteSegment(id: number): void;
  setSegmentMemo(id: number, memo: string | null, now: string): void;
  /** Moves every text and AV segment of `fromCode` to `toCode`; returns how many rows moved. */
  reassignSegments(fromCode: number, toCode: number, now: string): number;
  /** Deletes segments of `toCode` that duplicate another segment of it exactly; returns how many. */
  dedupeSegments(codeId: number): number;
  /** Deletes every text and AV segment of a code; returns how many. */
  deleteSegmentsOfCode(codeId: number): number;
  /** Deletes every text and AV segment of a source; returns how many. */
  deleteSegmentsOfSource(sourceId: number): number;
  // sources
  listSources(type?: SourceType): SourceWithCounts[];
  getSource(id: number): SourceWithCounts | undefined;
  /** The stored text, or null for media sources and unknown ids. */
  getSourceText(id: number): string | null;
  findSourceByName(name: string): SourceInfo | undefined;
  /** The source imported from `filePath` (absolute), if any. */
  findSourceByPath(filePath: string): SourceInfo | undefined;
  insertSource(src: NewSource, stamp: Stamp): number;
  deleteSource(id: number): void;
  setSourceFolder(id: number, folderId: number | null, now: string): void;
  insertMetadataHint(
    sourceId: number,
    hint: { language: string | null; topics: string[] | null; organization_suggestion: string | null },
    stamp: Stamp,
  ): number;
  // folders
  listFolders(): (Folder & { source_count: number })[];
  getFolder(id: number): Folder | undefined;
  findFolder(parentId: number | null, name: string): Folder | undefined;
  insertFolder(name: string, parentId: number | null, stamp: Stamp): number;
  renameFolder(id: number, name: string): void;
  deleteFolder(id: number): void;
  /** Sources and sub-folders directly inside a folder. */
  folderContents(id: number): { sources: number; folders: number };
  // source text edits (positions in code points)
  /** Replaces `[start, end)` of the stored text with `text`; `insertedLength` is its code point length. */
  spliceSourceText(id: number, start: number, end: number, text: string, insertedLength: number, now: string): void;
  /** Replaces the whole stored text. */
  replaceSourceText(id: number, text: string, length: number, now: string): void;
  /** Adds `delta` to both positions of every segment of a source starting at or after `from`; returns how many. */
  shiftSegments(sourceId: number, from: number, delta: number): number;
  /** Segments of a source with start < `end` and end_pos > `start`. */
  segmentsOverlapping(sourceId: number, start: number, end: number): Segment[];
  /** Sets a segment's range and text. */
  updateSegmentRange(id: number, start: number, end: number, text: string, now: string): void;
  /** Moves a segment into orphan_segments (it lost its anchor) with a reason; returns the orphan id. */
  orphanSegment(seg: Segment, reason: string, now: string): number;
  /** Orphaned segments of a source (all sources when undefined). */
  listOrphans(sourceId?: number): (Segment & { orphan_id: number; reason: string; orphaned_at: string })[];
  // approval requests of the trust layer
  insertApproval(a: ApprovalRecord): void;
  getApproval(requestId: string): ApprovalRecord | undefined;
  /** Requests with `status`, oldest first (all when undefined), at most `limit`. */
  listApprovals(status?: ApprovalRecord['status'], limit?: number): ApprovalRecord[];
  /** Records a decision and its outcome. */
  decideApproval(
    requestId: string,
    d: Pick<ApprovalRecord, 'status' | 'decided_at' | 'decided_by' | 'decided_by_coder' | 'decided_by_role' | 'reason' | 'result' | 'error_code' | 'arguments'>,
  ): void;
  // events
  /** Stored events with a sequence number above `afterSeq`, in order, at most `limit`. */
  listEventsSince(afterSeq: number, limit: number): EventRecord[];
  /** Stored events with one correlation id (the events of one call), in order. */
  listEventsByCorrelation(correlationId: string): EventRecord[];
  /**
   * Stored events raised by one caller (`caused_by.client_type` and `caused_by.user`, exact) with a sequence
   * number below `beforeSeq`, NEWEST FIRST, at most `limit`, leaving out the editor's text edits (events
   * source.text_edited and source.text_reconciled, and coding.segment_uncoded with reason "text deleted",
   * which a text edit raises): the history undo and redo walk back through (src/domain/undoRedo.ts).
   */
  listUndoHistoryBefore(clientType: string, user: string, beforeSeq: number, limit: number): EventRecord[];
  /** The newest `session.connected` event of session `sessionId` with a sequence number below `beforeSeq`, if any. */
  findSessionConnected(sessionId: string, beforeSeq: number): EventRecord | undefined;
  /** The highest stored sequence number (0 when none). */
  lastEventSeq(): number;
  /** The version of each entity of `refs`, in order (migration 13, table entity_versions). */
  entityVersions(refs: readonly EntityRef[]): EntityVersion[];
  /**
   * Stores an event and returns its sequence number and its id, both given by the store (the event's own
   * `event_id` and `metadata.sequence_number` are ignored).
   */
  insertEvent(event: EventRecord): { seq: number; event_id: string };
  // project
  counts(): { sources: number; codes: number; categories: number; segments: number; av_segments: number; folders: number };
  // cases (positions in code points; see the case types below)
  /** Every case with its member and attribute counts, by name (case-insensitive). */
  listCases(): CaseWithCounts[];
  getCase(id: number): CaseWithCounts | undefined;
  findCaseByKey(key: string): CaseRecord | undefined;
  insertCase(name: string, key: string, memo: string | null, stamp: Stamp): number;
  /** Sets a case's `updated_at` (after a member or attribute change). */
  touchCase(id: number, now: string): void;
  /** Renames a case (`key` is `nameKey(name)`) and sets its `updated_at`. */
  renameCase(id: number, name: string, key: string, now: string): void;
  /** Deletes a case with its member sources, member ranges and attributes. */
  deleteCase(id: number): void;
  /** The sources linked to a case as wholes, by name. */
  listCaseSources(caseId: number): CaseSourceLink[];
  /** Links a whole source to a case; false when it was linked already (nothing written). */
  insertCaseSource(caseId: number, sourceId: number, stamp: Stamp): boolean;
  /** Unlinks a whole source from a case; false when it was not linked (nothing written). */
  deleteCaseSource(caseId: number, sourceId: number): boolean;
  /** The source ranges held by a case, by source then position. */
  listCaseSegments(caseId: number): CaseSegment[];
  /** The ranges of one source held by any case, by position. */
  listCaseSegmentsOfSource(sourceId: number): CaseSegment[];
  updateCaseSegmentRange(id: number, start: number, end: number, text: string): void;
  deleteCaseSegment(id: number): void;
  getCaseSegment(id: number): CaseSegment | undefined;
  findCaseSegment(caseId: number, sourceId: number, start: number, end: number): CaseSegment | undefined;
  insertCaseSegment(seg: NewCaseSegment, stamp: Stamp): number;
  /** Attributes of one case (all cases when undefined), by case then name. */
  listCaseAttributes(caseId?: number): CaseAttribute[];
  /** Inserts or replaces attribute `name` of a case with a value of `type` (the value must already be of that type). */
  setCaseAttribute(caseId: number, name: string, type: AttributeType, value: AttributeValue, now: string): void;
  /** Deletes attribute `name` of a case; false when the case had none of that name (nothing written). */
  deleteCaseAttribute(caseId: number, name: string): boolean;
  /**
   * The codings that belong to a case, each once: text and AV segments of its linked sources, and text
   * segments overlapping one of its ranges (same source, `start_pos < range.end_pos` and `end_pos > range.start_pos`).
   */
  listCaseCodings(caseId: number): CaseCoding[];
  // AV segments (integer milliseconds, half-open [start_ms, end_ms))
  /** AV segments of a source, by start, end, id. */
  listAvSegmentsForSource(sourceId: number): AvSegment[];
  getAvSegment(id: number): AvSegment | undefined;
  /** AV segments of `codeId` on `sourceId` overlapping `[startMs, endMs)`: `start_ms < endMs AND end_ms > startMs`, by start. */
  avSegmentsOverlapping(codeId: number, sourceId: number, startMs: number, endMs: number): AvSegment[];
  insertAvSegment(seg: NewAvSegment, stamp: Stamp): number;
  deleteAvSegment(id: number): void;
  // search (migration 5: FTS4 indexes source_fts, segment_fts, code_fts and the segment_embeddings cache).
  // FTS4 reports `offsets()` in UTF-8 bytes; the domain converts them to code points (see domain/search.ts).
  // Every `match` is an FTS4 MATCH expression; a malformed one fails with INVALID_ARGUMENTS.
  /** The tokens of `text` as the search indexes' tokenizer makes them (unicode61, lower case, diacritics removed). */
  searchTokenize(text: string): string[];
  /**
   * Every source matching `match` within `filter`, by source_id, with `hits`: the number of phrase matches in
   * it (the sum of FTS4 `matchinfo(..., 'y')` over the query's phrases).
   */
  searchSourceHits(match: string, filter: SearchFilter): SearchSourceHit[];
  /** For the given sources matching `match`: name, text and FTS4 `offsets()` (UTF-8 byte offsets), by source_id. */
  searchSourceOffsets(match: string, sourceIds: readonly number[]): SearchSourceOffsets[];
  /** Name, text and length in code points of the given sources, by source_id (unknown ids are left out). */
  getSourceTextsForSearch(sourceIds: readonly number[]): { source_id: number; name: string; content: string; length: number }[];
  /** Codes matching `match` (columns 0 name, 1 memo) with FTS4 `matchinfo(..., 'pcnx')` as integers. */
  searchCodeRows(match: string): { code_id: number; matchinfo: number[] }[];
  /** Segments matching `match` within `filter`, with FTS4 `matchinfo(..., 'pcnalx')` as integers (the inputs of BM25). */
  searchSegmentRows(match: string, filter: SearchFilter): { segment_id: number; matchinfo: number[] }[];
  /**
   * FTS4 `matchinfo(..., 'pcnx')` of the segment index for `match` (global counts per phrase), taken from any one
   * matching row; undefined when no segment matches.
   */
  searchSegmentStats(match: string): number[] | undefined;
  /** Text segments within `filter` (all when empty), by id, with their code's and source's names. */
  listSegmentsForSearch(filter: SearchFilter): SearchSegment[];
  /** Segments by id, with their code's and source's names (unknown ids are left out). */
  getSegmentsForSearch(ids: readonly number[]): SearchSegment[];
  /** The text hashes of `model` in the embedding cache. */
  embeddedHashes(model: string): Set<string>;
  /** Cached vectors of `model` for `hashes` (missing ones are left out). */
  getEmbeddings(model: string, hashes: readonly string[]): Map<string, Float32Array>;
  /** Caches vectors of `model` by text hash (an existing entry is kept). Runs inside the caller's transaction. */
  putEmbeddings(model: string, vectors: readonly { hash: string; vector: readonly number[] }[], now: string): number;
}

/** The four attribute types of a case (HTTP spec, section 2). */
export type AttributeType = 'text' | 'number' | 'date' | 'boolean';
/** An attribute value: a string for text and date (ISO 8601), a finite number, or a boolean. */
export type AttributeValue = string | number | boolean;

/** A case: a unit of analysis (a participant, a site) that holds sources, ranges of sources and attributes. */
export interface CaseRecord {
  case_id: number;
  name: string;
  memo: string | null;
  owner: string;
  session_id: string | null;
  created_at: string;
  updated_at: string;
}

/** A case with the number of its linked sources, its ranges and its attributes. */
export interface CaseWithCounts extends CaseRecord {
  source_count: number;
  segment_count: number;
  attribute_count: number;
}

/** A source linked to a case as a whole. */
export interface CaseSourceLink {
  case_id: number;
  source_id: number;
  name: string;
  type: SourceType;
  owner: string;
  session_id: string | null;
  /** when it was linked */
  created_at: string;
}

/** A range `[start_pos, end_pos)` (code points) of a source held by a case, with the text it covered when added. */
export interface CaseSegment {
  case_segment_id: number;
  case_id: number;
  source_id: number;
  source_name: string;
  start_pos: number;
  end_pos: number;
  text: string;
  owner: string;
  session_id: string | null;
  created_at: string;
}

/** Fields of a new case range (positions in code points). */
export interface NewCaseSegment {
  case_id: number;
  source_id: number;
  start_pos: number;
  end_pos: number;
  text: string;
}

/** One typed attribute of a case. */
export interface CaseAttribute {
  case_id: number;
  name: string;
  type: AttributeType;
  value: AttributeValue;
  updated_at: string;
}

/** A coding that belongs to a case (see `listCaseCodings`): `kind` says which segment table `segment_id` is in. */
export interface CaseCoding {
  kind: 'text' | 'av';
  segment_id: number;
  code_id: number;
  source_id: number;
}

/**
 * A call the trust layer holds for the researcher's decision (agent-context spec, "Approval flow").
 * `arguments` is the JSON of the call's arguments (as approved, after any edit); `result` the JSON data of
 * the executed call. Statuses: pending -> completed | failed (approved and executed), or rejected (by the
 * researcher, or automatically at `expires_at`).
 */
export interface ApprovalRecord {
  request_id: string;
  tool: string;
  arguments: string;
  session_id: string;
  client_type: string;
  client_name: string;
  user: string;
  trust_level: 'suggest' | 'require';
  description: string;
  status: 'pending' | 'completed' | 'failed' | 'rejected';
  created_at: string;
  expires_at: string;
  decided_at: string | null;
  decided_by: string | null;
  /** who decided (issue 14 item 1, migration 16): the deciding coder's name and role; null while pending, for timeouts, and when unknown */
  decided_by_coder?: string | null;
  decided_by_role?: 'researcher' | 'agent' | null;
  reason: string | null;
  result: string | null;
  error_code: string | null;
  /**
   * JSON `{"seq": n, "versions": {"code:12": 3, ...}}`: the newest event's sequence number and the version of
   * every entity the call named when it was held ({@link ProjectRepository.entityVersions}); approving
   * re-checks them (VERSION_CONFLICT). Null or absent for requests stored before versions existed.
   */
  read_versions?: string | null;
}

/** An entity whose version a held call records (issue 14 item 5): a code, category, source or text segment by id. */
export interface EntityRef {
  kind: 'code' | 'category' | 'source' | 'segment';
  id: number;
}

/** An entity's version now: 1 + the number of changes of its row; null when it does not exist (deleted). */
export interface EntityVersion extends EntityRef {
  version: number | null;
  /** its name (a segment: null), null when it does not exist */
  name: string | null;
}

/**
 * Restricts a search to some sources (and, for segment searches, codes). Every field narrows further:
 * `folder_id` includes its sub-folders. Empty or undefined fields do not restrict.
 */
export interface SearchFilter {
  source_ids?: readonly number[];
  source_type?: SourceType;
  folder_id?: number;
  /** segment searches only */
  code_ids?: readonly number[];
}

/** A source matching a text search, with the number of phrase matches in it. */
export interface SearchSourceHit {
  source_id: number;
  hits: number;
}

/** A matching source's name, text and FTS4 `offsets()` string ("column term byte_offset byte_size" quadruples). */
export interface SearchSourceOffsets {
  source_id: number;
  name: string;
  content: string;
  /** the text's length in code points (`content_length`) */
  length: number;
  offsets: string;
}

/** A text segment with its code's and source's names, as the similarity searches return it (positions in code points). */
export interface SearchSegment {
  segment_id: number;
  code_id: number;
  code_name: string;
  source_id: number;
  source_name: string;
  start_pos: number;
  end_pos: number;
  text: string;
}

/**
 * A text-embedding model reached over the network (e.g. a local Ollama), configured by the composition root.
 * Used only from a tool's asynchronous `prepare`, never inside a store transaction.
 */
export interface EmbeddingsPort {
  /** the model's name, reported as `method: "embeddings:<model>"` */
  readonly model: string;
  /** where it is reached, for messages */
  readonly endpoint: string;
  /** One vector per text, in order, all of one dimension. Rejects (a plain Error) when the endpoint fails. */
  embed(texts: readonly string[]): Promise<number[][]>;
}

/** A coded AV segment: `code_id` applied to `[start_ms, end_ms)` (integer milliseconds) of an audio or video source. */
export interface AvSegment {
  segment_id: number;
  code_id: number;
  source_id: number;
  start_ms: number;
  end_ms: number;
  /** what is said in the range, when the coder gave it */
  transcript: string | null;
  memo: string | null;
  owner: string;
  session_id: string | null;
  /** the owner's coder role (migration 14); null when unknown */
  coder_role?: 'researcher' | 'agent' | null;
  created_at: string;
}

/** Fields of a new AV segment (integer milliseconds). */
export interface NewAvSegment {
  code_id: number;
  source_id: number;
  start_ms: number;
  end_ms: number;
  transcript: string | null;
  memo: string | null;
}

// ---------------------------------------------------------------------------------------------------
// Suggestions (issue 5, item 1; src/domain/suggestions.ts). The repository methods are declared in this
// second `ProjectRepository` block (TypeScript merges the two declarations) so this slice appends only.

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

export interface ProjectRepository {
  // suggestions
  insertSuggestion(s: NewSuggestion, stamp: Stamp): number;
  getSuggestion(id: number): SuggestionRecord | undefined;
  /** Suggestions matching every given field of `filter`, by id. */
  listSuggestions(filter: SuggestionFilter): SuggestionRecord[];
  /** The pending suggestion of `kind` with exactly these identifying fields (name_key for code suggestions), if any. */
  findPendingSuggestion(
    kind: SuggestionKind,
    match: { name_key?: string; code_id?: number; target_code_id?: number; source_id?: number; start_pos?: number; end_pos?: number },
  ): SuggestionRecord | undefined;
  /** Records a decision on a pending suggestion. */
  decideSuggestion(id: number, d: SuggestionDecision): void;
  insertSuggestionBatch(b: NewSuggestionBatch, stamp: Stamp): number;
  getSuggestionBatch(id: number): SuggestionBatchRecord | undefined;
  /** Records the response given to a batch (respond_to_code_suggestion) and sets its `updated_at`. */
  respondToSuggestionBatch(id: number, r: { response: 'accept' | 'reject'; reason: string | null; by: string; session_id: string; at: string }): void;
  /** Sets a batch's `updated_at` (after one of its items was decided). */
  touchSuggestionBatch(id: number, now: string): void;
  insertSegmentProvenance(p: SegmentProvenance): void;
  getSegmentProvenance(segmentId: number): SegmentProvenance | undefined;
}

// ---------------------------------------------------------------------------------------------------
// Exchange (issue 6: REFI-QDA export and import; src/domain/exchangeIds.ts, src/exchange/refiQda). Appended
// as a third `ProjectRepository` block, like the suggestions slice above.

/**
 * What a stored exchange GUID names: `user` (local id: the coder's name), `category`, `code`, `source`, `case`
 * (local id: the item's id), `selection` / `coding` (a text segment's REFI selection and coding), `av_selection`
 * / `av_coding` (an AV segment's), `case_selection` (a case range), `variable` (local id: the attribute name),
 * `note` (local id: `<kind>:<id>` of the item whose memo it is).
 */
export type ExchangeGuidKind =
  'user' | 'category' | 'code' | 'source' | 'case' | 'selection' | 'coding' | 'av_selection' | 'av_coding' | 'case_selection' | 'variable' | 'note';

/** A GUID a REFI-QDA file gave to an item (migration 8, table exchange_guids): lower case, no braces. */
export interface ExchangeGuid {
  kind: ExchangeGuidKind;
  local_id: string;
  guid: string;
}

export interface ProjectRepository {
  // exchange GUIDs (migration 8)
  /** The project's own GUID: 32 lower-case hex digits (meta `project_guid`), the namespace of derived item GUIDs. */
  projectGuid(): string;
  /** The stored GUIDs, all or of one kind. */
  listExchangeGuids(kind?: ExchangeGuidKind): ExchangeGuid[];
  /** Stores (or replaces) the GUID of an item. Runs inside the caller's transaction. */
  setExchangeGuid(kind: ExchangeGuidKind, localId: string, guid: string): void;
  /**
   * Every entity's own GUID (migration 17, the `guid` column that travels with the history; src/vcs/identity.ts) as
   * exchange kinds: code, category, source, case, coding (a text segment), av_coding, case_selection. Exports
   * prefer a stored exchange GUID, then this one, then the derived one, so a copy of the project exports the
   * GUIDs the original did.
   */
  listEntityGuids(): ExchangeGuid[];
}

// ---------------------------------------------------------------------------------------------------
// The design's source capabilities and reports (issue 5, item 4; src/domain/sources.ts, src/domain/reports.ts).
// Declared in a third `ProjectRepository` block so this slice appends only.

/** The three report types (agent-context spec, capability table: generate_*_report, generate_coder_comparison). */
export type ReportType = 'frequency' | 'cooccurrence' | 'coder_comparison';
/** A report job's state: running -> completed | failed (see migration 7). */
export type ReportStatus = 'running' | 'completed' | 'failed';

/**
 * Which coded text segments a report looks at. Every given field narrows further; empty or absent fields
 * do not restrict. `case_ids`: segments that belong to one of the cases as `listCaseCodings` defines it
 * (the case's linked sources whole, and segments overlapping one of its ranges). `coder`: the segments'
 * owner.
 */
export interface ReportFilter {
  source_ids?: readonly number[];
  code_ids?: readonly number[];
  case_ids?: readonly number[];
  coder?: string;
  /**
   * The document attributes a caller filtered by (`{name: value}`), kept as given for the record; the
   * repository does not read it: `resolveReportFilter` (src/domain/reports.ts) turns it into `source_ids`.
   */
  source_attributes?: Readonly<Record<string, AttributeValue>>;
}

/**
 * Text segments in column arrays (one entry per segment), ordered by source_id, then start_pos, end_pos,
 * code_id. Positions in code points, half-open. `owner` indexes into `owners` (the coders' names).
 */
export interface CodedRanges {
  source_id: Int32Array;
  code_id: Int32Array;
  start_pos: Int32Array;
  end_pos: Int32Array;
  owner: Int32Array;
  owners: string[];
}

/** A stored report (a row of `reports`): `filters`, `params` and `result` are JSON text. */
export interface ReportRecord {
  report_id: number;
  type: ReportType;
  status: ReportStatus;
  filters: string;
  params: string;
  /** null while running and when failed */
  result: string | null;
  error_code: string | null;
  error: string | null;
  owner: string;
  session_id: string | null;
  created_at: string;
  completed_at: string | null;
}

export interface ProjectRepository {
  // sources: the design's rename_source and update_memo
  /** Sets a source's name (the caller checked it is free). */
  renameSource(id: number, name: string, now: string): void;
  /** Sets (or with null clears) a source's memo. */
  setSourceMemo(id: number, memo: string | null, now: string): void;
  // reports (migration 7)
  insertReport(r: { type: ReportType; filters: string; params: string }, stamp: Stamp): number;
  /** Records the end of a running report: completed with its result JSON, or failed with an error. */
  finishReport(
    id: number,
    end: { status: 'completed' | 'failed'; result: string | null; error_code: string | null; error: string | null; completed_at: string },
  ): void;
  getReport(id: number): ReportRecord | undefined;
  /** Reports newest first (`result` left null, it can be large), optionally of one type or status; at most `limit` after `offset`. */
  listReports(q: { type?: ReportType; status?: ReportStatus; limit: number; offset: number }): { total: number; reports: ReportRecord[] };
  /** The text segments within `filter` as column arrays (see {@link CodedRanges}); `owners` restricts them to those coders. */
  reportCodedRanges(filter: ReportFilter, owners?: readonly string[]): CodedRanges;
  /**
   * The text segments within `filter` ordered by code_id, owner (binary order) and source_id: `groups`, one
   * per code and coder in that order with its number of segments, and `source_id`, the source of every
   * segment in that order (so the first `groups[0].segments` are the first group's, and so on).
   */
  reportCodeSources(filter: ReportFilter): { groups: { code_id: number; owner: string; segments: number }[]; source_id: Int32Array };
  /** Every code's id, name, colour and category, without counts (cheap for thousands of codes), by id. */
  listCodeLabels(): { code_id: number; name: string; color: string; category_id: number | null }[];
  /** The coders (segment owners) of the project with their text segment counts, by name. */
  listCoders(): { coder: string; segments: number }[];
  /** Text sources (type text) with their names and lengths in code points: the given ids, or all when undefined; by id. */
  textSourceLengths(sourceIds?: readonly number[]): { source_id: number; name: string; length: number }[];
  /** Membership of sources in cases: `whole` sources linked to a case, else the case ranges on them; by source then start. */
  caseExtents(caseIds: readonly number[]): { source_id: number; whole: boolean; start_pos: number; end_pos: number }[];
}

// ---------------------------------------------------------------------------------------------------
// Document (source) attributes (issue 13 item 5, issue 15 item 5; migration 10, src/domain/sourceAttributes.ts).
// Appended as a further `ProjectRepository` block.

/** One typed attribute of a source (a document attribute), with who set it last. */
export interface SourceAttribute {
  source_id: number;
  name: string;
  type: AttributeType;
  value: AttributeValue;
  /** ISO 8601 UTC time of the last change */
  updated_at: string;
  /** the coder who set it last */
  owner: string;
  session_id: string | null;
}

export interface ProjectRepository {
  // document attributes (migration 10)
  /** Attributes of one source (all sources when undefined), by source_id then name (binary order). */
  listSourceAttributes(sourceId?: number): SourceAttribute[];
  /** Inserts or replaces attribute `name` of a source with a value of `type` (the value must already be of that type). */
  setSourceAttribute(sourceId: number, name: string, type: AttributeType, value: AttributeValue, stamp: Stamp): void;
  /** Deletes attribute `name` of a source; false when it had none (nothing written). */
  deleteSourceAttribute(sourceId: number, name: string): boolean;
}

// ---------------------------------------------------------------------------------------------------
// Memos as documents (issue 13 item 6; src/domain/memos.ts): a case's memo, and the project's research frame
// (the briefing's description, research questions and methodology) stored in the project. Appended as a
// further `ProjectRepository` block.

/**
 * The research frame as the project stores it (meta row `project_briefing`, a JSON object). A field that was
 * never saved is absent (the briefing then falls back to `.marginalia/project.yaml`); an empty string or an
 * empty list is a saved, empty value.
 */
export interface StoredBriefing {
  description?: string;
  research_questions?: string[];
  methodology?: string;
  /** ISO 8601 UTC time of the last save */
  updated_at: string;
  /** the coder who saved it last */
  updated_by: string;
}

export interface ProjectRepository {
  // memos as documents (issue 13 item 6)
  /** Sets a case's memo (null clears it) and its `updated_at`. */
  updateCaseMemo(id: number, memo: string | null, now: string): void;
  /** The stored research frame, or undefined when none was ever saved (or the stored row is not a JSON object). */
  projectBriefing(): StoredBriefing | undefined;
  /** Stores the research frame (replacing the stored one). Runs inside the caller's transaction. */
  setProjectBriefing(briefing: StoredBriefing): void;
}

/** What a researcher closed to agents (issue 14 item 11; table `agent_access`, src/agent/agentAccess.ts). */
export type AgentAccessKind = 'source' | 'folder' | 'case';

/** One closed target: a source, a folder (with its sub-folders) or a case (its member sources and ranges' sources). */
export interface AgentAccessRule {
  target_kind: AgentAccessKind;
  target_id: number;
  /** the target's name (source name, folder name, case name), or null when it no longer exists */
  target_name: string | null;
  access: 'closed';
  /** the agents it is closed to, by name; null: every agent */
  agents: string[] | null;
  /** the coder who closed it */
  set_by: string;
  /** ISO 8601 UTC time it was closed */
  set_at: string;
}

/** A source closed to agents, and through which rule (a source closed directly and via a folder appears once per rule). */
export interface ClosedSourceRow {
  source_id: number;
  /** the source's name (its title) */
  source_name: string;
  /** the agents it is closed to; null: every agent */
  agents: string[] | null;
  via_kind: AgentAccessKind;
  via_id: number;
}

export interface ProjectRepository {
  // sources closed to agents (issue 14 item 11)
  /** Every closed target, sources first, then folders, then cases, each by id. */
  listAgentAccess(): AgentAccessRule[];
  /**
   * Closes a target to `agents` (null: every agent), replacing an earlier rule of the same target, or opens it
   * again (`access` open: the rule is deleted). Runs inside the caller's transaction.
   */
  setAgentAccess(kind: AgentAccessKind, id: number, access: 'closed' | 'open', agents: string[] | null, setBy: string, now: string): void;
  /** Every source closed by a rule: directly, through a closed folder or an ancestor of its folder, or a closed case it (or a range of it) belongs to. */
  listClosedSources(): ClosedSourceRow[];
}

// ---------------------------------------------------------------------------------------------------
// Blind coding (issue 16 item 5; src/domain/teamSettings.ts): the project's team setting, stored in the meta row
// `team_settings` (a JSON object), and the per-coder counts a blind coder's reads show.

/** The team setting as the project stores it (meta row `team_settings`). */
export interface StoredTeamSettings {
  /** true while blind coding is on: each coder sees only their own codings, the lead sees all */
  blind: boolean;
  /** the researcher's coder name who leads (sees all, may end blind coding); null: nobody named */
  lead: string | null;
  /** ISO 8601 UTC time blind coding was last switched on; null while it never was */
  blind_since: string | null;
  /** ISO 8601 UTC time of the last change */
  updated_at: string;
  /** the coder who changed it last */
  updated_by: string;
}

/**
 * A coder whose own codings a read is limited to: `coder` is the segment owner (the coder name), `role` the coder's
 * role. A segment is that coder's when its owner is `coder` and its `coder_role` is `role` (a NULL role, from before
 * roles, counts as the researcher's), so an agent naming a human's coder name does not see the human's codings.
 */
export interface CoderScope {
  coder: string;
  role: CoderRole;
}

export interface ProjectRepository {
  // blind coding (issue 16 item 5)
  /** The stored team setting, or undefined when none was ever saved (or the row is not a JSON object). */
  teamSettings(): StoredTeamSettings | undefined;
  /** Stores the team setting (replacing the stored one). Runs inside the caller's transaction. */
  setTeamSettings(settings: StoredTeamSettings): void;
  /**
   * The codings of one coder (text and AV segments) counted per code and source: one row per (code_id, source_id)
   * with `text` and `av` counts. `codeId` / `sourceId` narrow it to one code or one source.
   */
  coderCodingCounts(scope: CoderScope, only?: { codeId?: number; sourceId?: number }): { code_id: number; source_id: number; text: number; av: number }[];
  /** The ids of one coder's text segments, ascending. */
  coderSegmentIds(scope: CoderScope): number[];
}

// ---------------------------------------------------------------------------------------------------
// Merge conflicts (issue 16 item 4; migration 18, src/domain/mergeConflicts.ts)

export interface ProjectRepository {
  // merge conflicts (issue 16 item 4)
  /** Stores the conflicts of one merge; a stored conflict with the same id is opened again with the new values. Runs inside the caller's transaction. */
  saveMergeConflicts(conflicts: readonly MergeConflict[], mergeRef: string | null, now: string): void;
  /** The stored conflicts, open ones first, each group oldest first; `status` narrows to open or resolved ones. */
  listMergeConflicts(status?: 'open' | 'resolved'): StoredMergeConflict[];
  /** One stored conflict, or undefined. */
  getMergeConflict(conflictId: string): StoredMergeConflict | undefined;
  /** Marks a conflict resolved (`resolution` is stored as JSON). Runs inside the caller's transaction. */
  markMergeConflictResolved(conflictId: string, r: { choice: MergeConflictChoice; resolution: unknown; resolved_by: string; resolved_at: string }): void;
}
