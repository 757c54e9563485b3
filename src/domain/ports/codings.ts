import type { Segment, SegmentMark } from '../model';
import type { Stamp } from './common';

/** Fields of a new text segment (positions in code points, half-open). */
export interface NewSegment {
  code_id: number;
  source_id: number;
  start_pos: number;
  end_pos: number;
  /** the text `[start_pos, end_pos)` covers */
  text: string;
  memo: string | null;
  /** 0 to 2, 2 most important */
  importance: number;
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
  /** the owner's coder role; null when unknown */
  coder_role?: 'researcher' | 'agent' | null;
  created_at: string;
}

/** Fields of a new AV segment (integer milliseconds, half-open). */
export interface NewAvSegment {
  code_id: number;
  source_id: number;
  start_ms: number;
  end_ms: number;
  transcript: string | null;
  memo: string | null;
}

/**
 * Codings: text segments (table `segments`, positions in code points, half-open `[start_pos, end_pos)`), AV
 * segments (table `av_segments`, integer milliseconds, half-open `[start_ms, end_ms)`; one id space with text
 * segments) and orphaned segments (table `orphan_segments`: text segments whose text was deleted).
 */
export interface CodingRepository {
  /** The text segments of a source, by start, end, id. */
  listSegmentsForSource(sourceId: number): Segment[];
  /**
   * The text segments of a source without their text, by start, end, id: what the editor's decorations draw
   * (reading 5,000 segments' text was most of a redraw; bench/decorations.ts).
   */
  listSegmentMarksForSource(sourceId: number): SegmentMark[];
  /** The text segments of a code across all sources, by source, start, id. */
  listSegmentsForCode(codeId: number): Segment[];
  /** One text segment; undefined for an unknown id. */
  getSegment(id: number): Segment | undefined;
  /** The text segment of `codeId` on exactly `[start, end)` of `sourceId` owned by `owner`, if any. */
  findSegment(codeId: number, sourceId: number, start: number, end: number, owner: string): Segment | undefined;
  /** Text segments of a source with `start_pos < end` and `end_pos > start` (they overlap `[start, end)`), by start, id. */
  segmentsOverlapping(sourceId: number, start: number, end: number): Segment[];
  /**
   * Who has coded with `codeId` (text and AV segments): one row per owner, session and coder role with the number
   * of codings, most first, then by owner (undo_agent_action, src/domain/undo.ts).
   */
  codingCodersOfCode(codeId: number): { owner: string; session_id: string | null; coder_role: 'researcher' | 'agent' | null; count: number }[];
  /** The coders (text segment owners) of the project with their text segment counts, by name. */
  listCoders(): { coder: string; segments: number }[];
  /** Inserts a text segment and returns its id. */
  insertSegment(seg: NewSegment, stamp: Stamp): number;
  /** Deletes one text segment. */
  deleteSegment(id: number): void;
  /** Sets (or with null clears) a text segment's memo and its `updated_at`. */
  setSegmentMemo(id: number, memo: string | null, now: string): void;
  /** Sets a text segment's range and the text it now covers. */
  updateSegmentRange(id: number, start: number, end: number, text: string, now: string): void;
  /** Adds `delta` to both positions of every text segment of a source starting at or after `from`; returns how many moved (0 when `delta` is 0). */
  shiftSegments(sourceId: number, from: number, delta: number): number;
  /** Moves every text, AV and orphaned segment of `fromCode` to `toCode`; returns how many text and AV segments moved. */
  reassignSegments(fromCode: number, toCode: number, now: string): number;
  /** Deletes the text and AV segments of `codeId` that repeat an older one (lower id) of it on the same source and range; returns how many. */
  dedupeSegments(codeId: number): number;
  /** Deletes every text and AV segment of a code; returns how many. */
  deleteSegmentsOfCode(codeId: number): number;
  /** Deletes every text and AV segment of a source; returns how many. */
  deleteSegmentsOfSource(sourceId: number): number;
  /** Moves a text segment into `orphan_segments` (its text was deleted) with a reason; returns the orphan's id. */
  orphanSegment(seg: Segment, reason: string, now: string): number;
  /** Orphaned segments of a source by start (of all sources when undefined, by source then start). */
  listOrphans(sourceId?: number): (Segment & { orphan_id: number; reason: string; orphaned_at: string })[];
  /** The AV segments of a source, by start, end, id. */
  listAvSegmentsForSource(sourceId: number): AvSegment[];
  /** One AV segment; undefined for an unknown id. */
  getAvSegment(id: number): AvSegment | undefined;
  /** AV segments of `codeId` on `sourceId` overlapping `[startMs, endMs)` (`start_ms < endMs AND end_ms > startMs`), by start, end, id. */
  avSegmentsOverlapping(codeId: number, sourceId: number, startMs: number, endMs: number): AvSegment[];
  /** Inserts an AV segment and returns its id. */
  insertAvSegment(seg: NewAvSegment, stamp: Stamp): number;
  /** Deletes one AV segment. */
  deleteAvSegment(id: number): void;
}
