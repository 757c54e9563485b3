import type { SourceType } from '../model';

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

/**
 * Full-text and similarity search: the FTS4 indexes `source_fts`, `segment_fts` and `code_fts` (kept current by
 * triggers) and the `segment_embeddings` cache of vectors by model and text hash. Every `match` is an FTS4 MATCH
 * expression; a malformed one fails with INVALID_ARGUMENTS. FTS4 reports `offsets()` in UTF-8 bytes; the domain
 * converts them to code points (src/domain/search.ts).
 */
export interface SearchRepository {
  /** The tokens of `text` as the search indexes' tokenizer makes them (unicode61, lower case, diacritics removed). */
  searchTokenize(text: string): string[];
  /**
   * Every source matching `match` within `filter`, by source_id, with `hits`: the number of phrase matches in
   * it (the sum of FTS4 `matchinfo(..., 'y')` over the query's phrases).
   */
  searchSourceHits(match: string, filter: SearchFilter): SearchSourceHit[];
  /** For the given sources matching `match`: name, text and FTS4 `offsets()` (UTF-8 byte offsets), by source_id. */
  searchSourceOffsets(match: string, sourceIds: readonly number[]): SearchSourceOffsets[];
  /** Name, text and length in code points of the given sources, by source_id (unknown ids are left out; media text is ''). */
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
  /** Caches vectors of `model` by text hash (an existing entry is kept); returns how many were added. Runs inside the caller's transaction. */
  putEmbeddings(model: string, vectors: readonly { hash: string; vector: readonly number[] }[], now: string): number;
}
