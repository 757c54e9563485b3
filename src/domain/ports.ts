import type { EventRecord } from './events';
import type { Category, Code, Folder, Segment, SourceInfo, SourceType } from './model';

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
  // segments
  listSegmentsForSource(sourceId: number): Segment[];
  /** Segments of a code across all sources, by source then position. */
  listSegmentsForCode(codeId: number): Segment[];
  getSegment(id: number): Segment | undefined;
  findSegment(codeId: number, sourceId: number, start: number, end: number): Segment | undefined;
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
  // events
  /** Stores an event (its metadata.sequence_number is ignored) and returns its sequence number. */
  insertEvent(event: EventRecord): number;
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
  /** Deletes a case with its member sources, member ranges and attributes. */
  deleteCase(id: number): void;
  /** The sources linked to a case as wholes, by name. */
  listCaseSources(caseId: number): CaseSourceLink[];
  /** Links a whole source to a case; false when it was linked already (nothing written). */
  insertCaseSource(caseId: number, sourceId: number, stamp: Stamp): boolean;
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
  /**
   * The codings that belong to a case, each once: text and AV segments of its linked sources, and text
   * segments overlapping one of its ranges (same source, `start_pos < range.end_pos` and `end_pos > range.start_pos`).
   */
  listCaseCodings(caseId: number): CaseCoding[];
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
