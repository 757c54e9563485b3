import type { SourceInfo, SourceType } from '../model';
import type { AttributeType, AttributeValue, Stamp } from './common';

/** A source with the number of text and AV segments coded in it. */
export interface SourceWithCounts extends SourceInfo {
  segment_count: number;
  av_segment_count: number;
}

/** Fields of a new source. `text` is null for media; `length` counts its code points. */
export interface NewSource {
  name: string;
  type: SourceType;
  text: string | null;
  length: number;
  memo: string | null;
  /** where it came from, free text (e.g. the imported file and row) */
  origin: string | null;
  /** the absolute path of the workspace file it was imported from, if any */
  file_path: string | null;
  mime: string | null;
  size_bytes: number | null;
  folder_id: number | null;
}

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

/**
 * Sources (table `sources`): their stored text, folder, memo and typed document attributes. Names are unique
 * by `nameKey` (src/domain/rules.ts). Text positions and lengths count code points.
 */
export interface SourceRepository {
  /** Every source (of `type`, when given) with its segment counts, by name (case-insensitive). */
  listSources(type?: SourceType): SourceWithCounts[];
  /** One source with its segment counts; undefined for an unknown id. */
  getSource(id: number): SourceWithCounts | undefined;
  /** The stored text, or null for media sources and unknown ids. */
  getSourceText(id: number): string | null;
  /** The source named `name`: the exact name first, else the one whose `nameKey` matches. */
  findSourceByName(name: string): SourceInfo | undefined;
  /** The source imported from `filePath` (absolute), if any (the oldest when several were). */
  findSourceByPath(filePath: string): SourceInfo | undefined;
  /** Text sources (type text) with their names and lengths in code points: the given ids, or all when undefined; by id. */
  textSourceLengths(sourceIds?: readonly number[]): { source_id: number; name: string; length: number }[];
  /** Inserts a source and returns its id. */
  insertSource(src: NewSource, stamp: Stamp): number;
  /**
   * Deletes a source with its metadata hints, orphaned segments, attributes and case memberships; the caller has
   * deleted its segments first (foreign keys).
   */
  deleteSource(id: number): void;
  /** Moves a source into a folder (null: the top level) and sets its `updated_at`. */
  setSourceFolder(id: number, folderId: number | null, now: string): void;
  /** Sets a source's name (the caller checked it is free) and its `updated_at`. */
  renameSource(id: number, name: string, now: string): void;
  /** Sets (or with null clears) a source's memo and its `updated_at`. */
  setSourceMemo(id: number, memo: string | null, now: string): void;
  /** Stores an agent's metadata hint about a source (`topics` kept as a JSON array) and returns its id. */
  insertMetadataHint(
    sourceId: number,
    hint: { language: string | null; topics: string[] | null; organization_suggestion: string | null },
    stamp: Stamp,
  ): number;
  /**
   * Replaces `[start, end)` (code points) of the stored text with `text`, whose length in code points is
   * `insertedLength`, adjusting the stored length; segments are not moved (see `CodingRepository.shiftSegments`).
   */
  spliceSourceText(id: number, start: number, end: number, text: string, insertedLength: number, now: string): void;
  /** Replaces the whole stored text; `length` is its length in code points. */
  replaceSourceText(id: number, text: string, length: number, now: string): void;
  /** Attributes of one source (all sources when undefined), by source_id then name (binary order). */
  listSourceAttributes(sourceId?: number): SourceAttribute[];
  /** Inserts or replaces attribute `name` of a source with a value of `type` (the value must already be of that type). */
  setSourceAttribute(sourceId: number, name: string, type: AttributeType, value: AttributeValue, stamp: Stamp): void;
  /** Deletes attribute `name` of a source; false when it had none (nothing written). */
  deleteSourceAttribute(sourceId: number, name: string): boolean;
}
