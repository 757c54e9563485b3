import { ToolError } from '../../core/errors';
import type { SearchFilter, SearchRepository, SearchSegment, SearchSourceHit, SearchSourceOffsets } from '../../domain/ports';
import type { ProjectStore } from '../projectStore';
import type { SqlParam } from './shared';

/**
 * {@link SearchRepository} over a {@link ProjectStore}: the FTS4 tables `source_fts`, `segment_fts`, `code_fts` and
 * the `segment_embeddings` cache. Every statement has a fixed text (lists travel as one JSON parameter through
 * json_each), so the store's statement cache stays small.
 */
export class SqlSearchRepository implements SearchRepository {
  /** Decoded embedding vectors by `model\ntext_hash`; entries never change once cached (content-addressed). */
  private readonly vectorMemo = new Map<string, Float32Array>();
  constructor(private readonly db: ProjectStore) {}

  searchTokenize(text: string): string[] {
    return this.db.all<{ token: string }>('SELECT token FROM search_tokenizer WHERE input = ? ORDER BY position', [text]).map((r) => r.token);
  }
  searchSourceHits(match: string, filter: SearchFilter): SearchSourceHit[] {
    const rows = ftsQuery(() =>
      hasSourceFilter(filter)
        ? this.db.all<{ source_id: number; mi: Uint8Array }>(
            `SELECT source_fts.docid AS source_id, matchinfo(source_fts, 'y') AS mi FROM source_fts JOIN sources s ON s.id = source_fts.docid
             WHERE source_fts MATCH ? AND ${SOURCE_FILTER} ORDER BY source_fts.docid`,
            [match, ...sourceFilterParams(filter)],
          )
        : this.db.all<{ source_id: number; mi: Uint8Array }>(
            `SELECT docid AS source_id, matchinfo(source_fts, 'y') AS mi FROM source_fts WHERE source_fts MATCH ? ORDER BY docid`,
            [match],
          ),
    );
    return rows.map((r) => ({ source_id: r.source_id, hits: sumUint32s(r.mi) }));
  }
  searchSourceOffsets(match: string, sourceIds: readonly number[]): SearchSourceOffsets[] {
    if (sourceIds.length === 0) return [];
    return ftsQuery(() =>
      this.db.all<SearchSourceOffsets>(
        `SELECT source_fts.docid AS source_id, s.name AS name, s.content AS content, s.content_length AS length, offsets(source_fts) AS offsets
         FROM source_fts JOIN sources s ON s.id = source_fts.docid
         WHERE source_fts MATCH ? AND source_fts.docid BETWEEN ? AND ? AND source_fts.docid IN (SELECT value FROM json_each(?))
         ORDER BY source_fts.docid`,
        [match, Math.min(...sourceIds), Math.max(...sourceIds), JSON.stringify(sourceIds)],
      ),
    );
  }
  getSourceTextsForSearch(sourceIds: readonly number[]): { source_id: number; name: string; content: string; length: number }[] {
    if (sourceIds.length === 0) return [];
    return this.db.all<{ source_id: number; name: string; content: string; length: number }>(
      `SELECT id AS source_id, name, COALESCE(content, '') AS content, content_length AS length FROM sources WHERE id IN (SELECT value FROM json_each(?)) ORDER BY id`,
      [JSON.stringify(sourceIds)],
    );
  }
  searchCodeRows(match: string): { code_id: number; matchinfo: number[] }[] {
    return ftsQuery(() =>
      this.db.all<{ code_id: number; mi: Uint8Array }>(`SELECT docid AS code_id, matchinfo(code_fts, 'pcnx') AS mi FROM code_fts WHERE code_fts MATCH ?`, [
        match,
      ]),
    ).map((r) => ({ code_id: r.code_id, matchinfo: uint32s(r.mi) }));
  }
  searchSegmentRows(match: string, filter: SearchFilter): { segment_id: number; matchinfo: number[] }[] {
    const rows = ftsQuery(() =>
      hasSourceFilter(filter) || (filter.code_ids?.length ?? 0) > 0
        ? this.db.all<{ segment_id: number; mi: Uint8Array }>(
            `SELECT segment_fts.docid AS segment_id, matchinfo(segment_fts, 'pcnalx') AS mi
             FROM segment_fts JOIN segments g ON g.id = segment_fts.docid JOIN sources s ON s.id = g.source_id
             WHERE segment_fts MATCH ? AND ${SOURCE_FILTER} AND ${CODE_FILTER}`,
            [match, ...sourceFilterParams(filter), ...codeFilterParams(filter)],
          )
        : this.db.all<{ segment_id: number; mi: Uint8Array }>(
            `SELECT docid AS segment_id, matchinfo(segment_fts, 'pcnalx') AS mi FROM segment_fts WHERE segment_fts MATCH ?`,
            [match],
          ),
    );
    return rows.map((r) => ({ segment_id: r.segment_id, matchinfo: uint32s(r.mi) }));
  }
  searchSegmentStats(match: string): number[] | undefined {
    const row = ftsQuery(() =>
      this.db.get<{ mi: Uint8Array }>(`SELECT matchinfo(segment_fts, 'pcnx') AS mi FROM segment_fts WHERE segment_fts MATCH ? LIMIT 1`, [match]),
    );
    return row ? uint32s(row.mi) : undefined;
  }
  listSegmentsForSearch(filter: SearchFilter): SearchSegment[] {
    return this.db.all<SearchSegment>(`SELECT ${SEARCH_SEGMENT_COLS} WHERE ${SOURCE_FILTER} AND ${CODE_FILTER} ORDER BY g.id`, [
      ...sourceFilterParams(filter),
      ...codeFilterParams(filter),
    ]);
  }
  getSegmentsForSearch(ids: readonly number[]): SearchSegment[] {
    if (ids.length === 0) return [];
    return this.db.all<SearchSegment>(`SELECT ${SEARCH_SEGMENT_COLS} WHERE g.id IN (SELECT value FROM json_each(?)) ORDER BY g.id`, [JSON.stringify(ids)]);
  }
  embeddedHashes(model: string): Set<string> {
    return new Set(this.db.all<{ h: string }>('SELECT text_hash AS h FROM segment_embeddings WHERE model = ?', [model]).map((r) => r.h));
  }
  getEmbeddings(model: string, hashes: readonly string[]): Map<string, Float32Array> {
    const out = new Map<string, Float32Array>();
    const missing: string[] = [];
    for (const h of new Set(hashes)) {
      const v = this.vectorMemo.get(`${model}\n${h}`);
      if (v) out.set(h, v);
      else missing.push(h);
    }
    for (let i = 0; i < missing.length; i += 1000) {
      const rows = this.db.all<{ h: string; v: string }>(
        'SELECT text_hash AS h, vector AS v FROM segment_embeddings WHERE model = ? AND text_hash IN (SELECT value FROM json_each(?))',
        [model, JSON.stringify(missing.slice(i, i + 1000))],
      );
      for (const r of rows) {
        const v = decodeVector(r.v);
        if (this.vectorMemo.size >= VECTOR_MEMO_MAX) this.vectorMemo.clear();
        this.vectorMemo.set(`${model}\n${r.h}`, v);
        out.set(r.h, v);
      }
    }
    return out;
  }
  putEmbeddings(model: string, vectors: readonly { hash: string; vector: readonly number[] }[], now: string): number {
    let n = 0;
    for (const { hash, vector } of vectors) {
      n += this.db.run(
        'INSERT INTO segment_embeddings(model, text_hash, dims, vector, created_at) VALUES (?,?,?,?,?) ON CONFLICT(model, text_hash) DO NOTHING',
        [model, hash, vector.length, encodeVector(vector), now],
      ).changes;
    }
    return n;
  }
}

/** Sources within a SearchFilter (alias `s`); parameters from {@link sourceFilterParams}. */
const SOURCE_FILTER = `(? IS NULL OR s.id IN (SELECT value FROM json_each(?)))
  AND (? IS NULL OR s.type = ?)
  AND (? IS NULL OR s.folder_id IN (WITH RECURSIVE sub(id) AS (SELECT ? UNION SELECT f.id FROM folders f JOIN sub ON f.parent_id = sub.id) SELECT id FROM sub))`;

/** Segments (alias `g`) of the filter's codes; parameters from {@link codeFilterParams}. */
const CODE_FILTER = `(? IS NULL OR g.code_id IN (SELECT value FROM json_each(?)))`;

const SEARCH_SEGMENT_COLS = `g.id AS segment_id, g.code_id, c.name AS code_name, g.source_id, s.name AS source_name, g.start_pos, g.end_pos, g.text
  FROM segments g JOIN codes c ON c.id = g.code_id JOIN sources s ON s.id = g.source_id`;

/** Decoded vectors kept in memory per repository (about 3 KB each at 768 dimensions). */
const VECTOR_MEMO_MAX = 200_000;

function hasSourceFilter(f: SearchFilter): boolean {
  return (f.source_ids?.length ?? 0) > 0 || f.source_type !== undefined || f.folder_id !== undefined;
}

function sourceFilterParams(f: SearchFilter): SqlParam[] {
  const ids = f.source_ids?.length ? JSON.stringify(f.source_ids) : null;
  return [ids, ids, f.source_type ?? null, f.source_type ?? null, f.folder_id ?? null, f.folder_id ?? null];
}

function codeFilterParams(f: SearchFilter): SqlParam[] {
  const ids = f.code_ids?.length ? JSON.stringify(f.code_ids) : null;
  return [ids, ids];
}

/** An FTS4 matchinfo() BLOB as its unsigned 32-bit integers (machine byte order, little-endian in WebAssembly). */
function uint32s(blob: Uint8Array): number[] {
  const view = new DataView(blob.buffer, blob.byteOffset, blob.byteLength);
  const out = new Array<number>(blob.byteLength >> 2);
  for (let i = 0; i < out.length; i++) out[i] = view.getUint32(i * 4, true);
  return out;
}

/** The sum of a blob's little-endian unsigned 32-bit integers, without a view or an array per blob (one per matching source). */
function sumUint32s(blob: Uint8Array): number {
  let n = 0;
  for (let i = 0; i + 3 < blob.length; i += 4)
    n += ((blob[i] as number) | ((blob[i + 1] as number) << 8) | ((blob[i + 2] as number) << 16) | ((blob[i + 3] as number) << 24)) >>> 0;
  return n;
}

/**
 * Runs an FTS4 query; SQLite's "malformed MATCH expression" (and other errors of the query text) become
 * INVALID_ARGUMENTS, since they describe the caller's query and not a failure of the project.
 */
function ftsQuery<T>(fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    if (/malformed MATCH|MATCH expression|unable to use function MATCH|fts/i.test(msg)) {
      throw new ToolError('INVALID_ARGUMENTS', `The search query is not valid FTS4 syntax: ${msg}`);
    }
    throw e;
  }
}

/** A vector as stored: base64 of its little-endian float32 values (TEXT, so the JSON journal carries it unchanged). */
function encodeVector(v: readonly number[]): string {
  const buf = Buffer.alloc(v.length * 4);
  for (let i = 0; i < v.length; i++) buf.writeFloatLE(v[i] as number, i * 4);
  return buf.toString('base64');
}

function decodeVector(text: string): Float32Array {
  const buf = Buffer.from(text, 'base64');
  const out = new Float32Array(buf.length >> 2);
  for (let i = 0; i < out.length; i++) out[i] = buf.readFloatLE(i * 4);
  return out;
}
