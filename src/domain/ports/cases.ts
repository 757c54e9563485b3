import type { SourceType } from '../model';
import type { AttributeType, AttributeValue, Stamp } from './common';

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
 * Cases (tables `cases`, `case_sources`, `case_segments`, `case_attributes`): a case holds whole sources, ranges
 * of sources (code points, half-open) and typed attributes. Names are unique by `name_key` (`nameKey`).
 */
export interface CaseRepository {
  /** Every case with its member and attribute counts, by name (case-insensitive), then id. */
  listCases(): CaseWithCounts[];
  /** One case with its counts; undefined for an unknown id. */
  getCase(id: number): CaseWithCounts | undefined;
  /** The case whose `name_key` is `key`. */
  findCaseByKey(key: string): CaseRecord | undefined;
  /** Inserts a case and returns its id. */
  insertCase(name: string, key: string, memo: string | null, stamp: Stamp): number;
  /** Sets a case's `updated_at` (after a member or attribute change). */
  touchCase(id: number, now: string): void;
  /** Renames a case (`key` is `nameKey(name)`) and sets its `updated_at`. */
  renameCase(id: number, name: string, key: string, now: string): void;
  /** Sets (or with null clears) a case's memo and its `updated_at`. */
  updateCaseMemo(id: number, memo: string | null, now: string): void;
  /** Deletes a case with its member sources, member ranges and attributes. */
  deleteCase(id: number): void;
  /** The sources linked to a case as wholes, by name (case-insensitive), then id. */
  listCaseSources(caseId: number): CaseSourceLink[];
  /** Links a whole source to a case; false when it was linked already (nothing written). */
  insertCaseSource(caseId: number, sourceId: number, stamp: Stamp): boolean;
  /** Unlinks a whole source from a case; false when it was not linked (nothing written). */
  deleteCaseSource(caseId: number, sourceId: number): boolean;
  /** The source ranges held by a case, by source name, source id, then position. */
  listCaseSegments(caseId: number): CaseSegment[];
  /** The ranges of one source held by any case, by start, then id. */
  listCaseSegmentsOfSource(sourceId: number): CaseSegment[];
  /** One case range; undefined for an unknown id. */
  getCaseSegment(id: number): CaseSegment | undefined;
  /** The range `[start, end)` of `sourceId` held by `caseId`, if any. */
  findCaseSegment(caseId: number, sourceId: number, start: number, end: number): CaseSegment | undefined;
  /** Inserts a case range and returns its id. */
  insertCaseSegment(seg: NewCaseSegment, stamp: Stamp): number;
  /** Sets a case range's positions and the text it now covers (a text edit moved it). */
  updateCaseSegmentRange(id: number, start: number, end: number, text: string): void;
  /** Deletes one case range. */
  deleteCaseSegment(id: number): void;
  /** Attributes of one case by name (of all cases when undefined, by case then name). */
  listCaseAttributes(caseId?: number): CaseAttribute[];
  /** Inserts or replaces attribute `name` of a case with a value of `type` (the value must already be of that type). */
  setCaseAttribute(caseId: number, name: string, type: AttributeType, value: AttributeValue, now: string): void;
  /** Deletes attribute `name` of a case; false when the case had none of that name (nothing written). */
  deleteCaseAttribute(caseId: number, name: string): boolean;
  /**
   * The codings that belong to a case, each once, text before AV, then by segment id: text and AV segments of its
   * linked sources, and text segments overlapping one of its ranges (same source, `start_pos < range.end_pos`
   * and `end_pos > range.start_pos`).
   */
  listCaseCodings(caseId: number): CaseCoding[];
  /**
   * Where the given cases lie in their sources: a row with `whole` true for each source linked to one of them,
   * and a row per range they hold; by source, whole rows first, then by start and end.
   */
  caseExtents(caseIds: readonly number[]): { source_id: number; whole: boolean; start_pos: number; end_pos: number }[];
}
