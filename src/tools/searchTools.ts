/**
 * The search tools of the agent-context spec's capability table (section 4; trust "Search", Autonomous):
 * search_text, search_semantic, search_codes and find_similar_segments. The algorithms are in
 * src/domain/search.ts and src/domain/similarSegments.ts (stemming, BM25 and cosine: src/domain/ranking);
 * the indexes are the FTS4 tables of migration 5.
 *
 * How the similarity searches split their work between `prepare` and `run`: `run` is synchronous (it may run
 * inside a store transaction), so every network call to the embedding endpoint happens in `prepare`, which
 * reads (never writes) the segments in scope through `PrepareContext.reader`, finds the texts whose vector is
 * not cached yet (by SHA-256 of the text, per model), and embeds at most {@link MAX_EMBED_PER_CALL} of them
 * (plus the query). `run` then stores those vectors in `segment_embeddings` in one transaction of its own (the
 * project's data is not changed; the cache is journaled like any write), re-reads the segments (they may have
 * changed while `prepare` waited), and ranks those that have a vector by cosine similarity. Segments still
 * without a vector are counted in `index.not_embedded`; the next call embeds the next batch.
 * Without an embedding model, or when the endpoint fails, both tools rank by BM25 over the FTS4 segment index
 * and say so in `method` (and `fallback_reason`).
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { SOURCE_TYPES } from '../domain/model';
import type { EmbeddingsPort, SearchFilter, SearchSegment } from '../domain/ports';
import { checkFilter, searchCodes, searchText } from '../domain/search';
import { QUERY_SYNTAX_HELP } from '../domain/searchQuery';
import { bm25Segments, cosineSegments, cutPassageText, overlapsSegment, requireSearchSegment, toPassages } from '../domain/similarSegments';
import type { ToolContext } from './context';
import { defineTool, type PrepareContext, type ProjectReader } from './defineTool';
import { codeOut } from './present';
import { args, id, text } from './schemas';

/** Default and largest page of search_text. */
export const DEFAULT_SEARCH_LIMIT = 50;
export const MAX_SEARCH_LIMIT = 500;
/** Default and largest k of the similarity searches. */
export const DEFAULT_K = 10;
export const MAX_K = 100;
/** Segment texts embedded in one call at most (the rest on later calls). */
export const MAX_EMBED_PER_CALL = 256;
/** Longest text sent to the embedding model, in UTF-16 units (longer segment texts are cut). */
export const MAX_EMBED_TEXT = 8000;
/** The method a lexical similarity search reports. */
export const LEXICAL_METHOD = 'lexical:bm25';

const sourceFilterFields = {
  source_ids: z.array(id('a source')).min(1).max(1000).optional().describe('only these sources'),
  source_type: z.enum(SOURCE_TYPES).optional().describe('only sources of this type'),
  folder_id: id('a folder').optional().describe('only sources in this folder or its sub-folders'),
};
const textFilters = args(sourceFilterFields).describe(
  '{source_ids?, source_type?, folder_id? (with its sub-folders)}: restricts the search; every field narrows it',
);
const segmentFilters = args({
  ...sourceFilterFields,
  code_ids: z.array(id('a code')).min(1).max(1000).optional().describe('only segments of these codes'),
}).describe('{source_ids?, source_type?, folder_id? (with its sub-folders), code_ids?}: restricts the search; every field narrows it');

function toFilter(f: { source_ids?: number[]; source_type?: SearchFilter['source_type']; folder_id?: number; code_ids?: number[] } | undefined): SearchFilter {
  return { source_ids: f?.source_ids, source_type: f?.source_type, folder_id: f?.folder_id, code_ids: f?.code_ids };
}

export const searchTextTool = defineTool({
  name: 'search_text',
  group: 'search',
  title: 'Search Text',
  description:
    'Full-text search of the source texts (SQLite FTS4 index, kept in sync with every change). ' +
    `${QUERY_SYNTAX_HELP} ` +
    'Returns every occurrence in source order then text order, paged: {count, total (occurrences in all sources; a phrase counts once), sources_matched, offset, has_more, next_offset, ' +
    'fts_query (how the query was read), matches: [{source_id, source_name, start_pos, end_pos, text, snippet}]}. Positions count Unicode code points, end_pos exclusive ' +
    '(read_source_content with the same positions returns `text`); the snippet marks the match «like this». ' +
    'Errors: INVALID_ARGUMENTS (query syntax), SOURCE_NOT_FOUND, FOLDER_NOT_FOUND (filters).',
  input: args({
    query: text(1000, 1).describe('the search query, e.g. "water rota", garden*, (trust OR faith) NOT church'),
    filters: textFilters.optional(),
    limit: z
      .number()
      .int()
      .min(1)
      .max(MAX_SEARCH_LIMIT)
      .optional()
      .describe(`largest number of matches returned (default ${DEFAULT_SEARCH_LIMIT}, at most ${MAX_SEARCH_LIMIT})`),
    offset: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional().describe('matches to skip, for the next page (default 0)'),
  }),
  effect: 'read',
  trust: 'search',
  run: (ctx, input) => ({
    query: input.query,
    limit: input.limit ?? DEFAULT_SEARCH_LIMIT,
    ...searchText(ctx.domain, { query: input.query, filter: toFilter(input.filters), limit: input.limit ?? DEFAULT_SEARCH_LIMIT, offset: input.offset ?? 0 }),
  }),
});

export const searchCodesTool = defineTool({
  name: 'search_codes',
  group: 'search',
  title: 'Search Codes',
  description:
    'Find codes whose name or memo contains words starting with the words of the query (case- and accent-insensitive; "conflict wat" finds "Water conflicts"). ' +
    'Best first: a word in the name counts twice a word in the memo, rarer words count more, an exact name comes first. ' +
    'Returns {query, count, total, codes: [{code_id, name, color, memo, category, segment_count, ..., score, matched_in: ["name"|"memo"]}]}. ' +
    'Errors: INVALID_ARGUMENTS (no word with letters or digits).',
  input: args({
    query: text(500, 1).describe('words to look for; each matches as a word prefix'),
    limit: z.number().int().min(1).max(MAX_SEARCH_LIMIT).optional().describe(`largest number of codes returned (default 20, at most ${MAX_SEARCH_LIMIT})`),
  }),
  effect: 'read',
  trust: 'search',
  run: (ctx, input) => {
    const hits = searchCodes(ctx.domain, input.query);
    const page = hits.slice(0, input.limit ?? 20);
    const categories = new Map(ctx.domain.repo.listCategories().map((c) => [c.category_id, c]));
    return {
      query: input.query,
      count: page.length,
      total: hits.length,
      codes: page.map((h) => ({ ...codeOut(h.code, ctx.domain.repo, categories), score: h.score, matched_in: h.matched_in })),
    };
  },
});

/** What a similarity search's `prepare` hands to its `run`. */
interface SimilarityPrep {
  /** null: rank lexically */
  embeddings: null | {
    model: string;
    /** the query's vector (search_semantic) */
    query: number[] | null;
    /** vectors embedded in prepare, to cache */
    fresh: { hash: string; vector: number[] }[];
  };
  /** why an embedding model that is configured was not used */
  fallback_reason: string | null;
}

/** SHA-256 (hex) of a segment's text: the key of its cached vector. */
export function textHash(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/**
 * Embeds the texts of `segments` whose vectors `model` has not cached, at most {@link MAX_EMBED_PER_CALL}
 * (`first` always, when given), plus `extra` texts before them. Rejects when the endpoint fails.
 */
async function embedMissing(
  port: EmbeddingsPort,
  reader: ProjectReader,
  segments: readonly SearchSegment[],
  extra: readonly string[],
  first?: SearchSegment,
): Promise<{ extra: number[][]; fresh: { hash: string; vector: number[] }[] }> {
  const cached = reader.embeddedHashes(port.model);
  const todo = new Map<string, string>();
  for (const s of first ? [first, ...segments] : segments) {
    if (todo.size >= MAX_EMBED_PER_CALL && !(first && s === first)) break;
    const h = textHash(s.text);
    if (!cached.has(h) && !todo.has(h)) todo.set(h, s.text.slice(0, MAX_EMBED_TEXT));
  }
  const vectors = await port.embed([...extra, ...todo.values()]);
  const hashes = [...todo.keys()];
  return { extra: vectors.slice(0, extra.length), fresh: hashes.map((hash, i) => ({ hash, vector: vectors[extra.length + i] as number[] })) };
}

function lexical(reason: string | null): SimilarityPrep {
  return { embeddings: null, fallback_reason: reason };
}

/**
 * The `prepare` of both similarity searches: lexical ranking without an embedding model (or an open project);
 * else the vectors `embed` asks for, or lexical ranking with the endpoint's error as `fallback_reason` when
 * `embed` rejects.
 */
async function prepareEmbeddings(
  pctx: PrepareContext,
  embed: (port: EmbeddingsPort, reader: ProjectReader) => Promise<{ query: number[] | null; fresh: { hash: string; vector: number[] }[] }>,
): Promise<SimilarityPrep> {
  const port = pctx.embeddings;
  if (!port || !pctx.reader) return lexical(null);
  try {
    return { embeddings: { model: port.model, ...(await embed(port, pctx.reader)) }, fallback_reason: null };
  } catch (e) {
    return lexical((e as Error).message);
  }
}

/**
 * The vectors of `segments` under `model` after caching `fresh` (in its own transaction; no research data
 * changes), by segment id; segments without one are left out.
 */
function vectorsFor(ctx: ToolContext, model: string, fresh: readonly { hash: string; vector: number[] }[], segments: readonly SearchSegment[]) {
  const repo = ctx.domain.repo;
  if (fresh.length > 0) ctx.project.transaction(() => repo.putEmbeddings(model, fresh, ctx.domain.now));
  const hashOf = new Map(segments.map((s) => [s.segment_id, textHash(s.text)]));
  const cached = repo.getEmbeddings(model, [...hashOf.values()]);
  const byId = new Map<number, Float32Array>();
  for (const [sid, h] of hashOf) {
    const v = cached.get(h);
    if (v) byId.set(sid, v);
  }
  return { byId, hashOf, cached };
}

function segmentSummary(s: SearchSegment) {
  return {
    segment_id: s.segment_id,
    code_id: s.code_id,
    code_name: s.code_name,
    source_id: s.source_id,
    source_name: s.source_name,
    start_pos: s.start_pos,
    end_pos: s.end_pos,
    text: cutPassageText(s.text).text,
  };
}

export const searchSemanticTool = defineTool({
  name: 'search_semantic',
  group: 'search',
  title: 'Search Coded Segments by Meaning',
  description:
    'Find the coded segments closest in meaning to a query. With an embedding model configured (MARGINALIA_EMBEDDINGS_ENDPOINT, an Ollama-style local endpoint) ' +
    'segments are ranked by cosine similarity of their embeddings (method "embeddings:<model>"); otherwise, or when the endpoint fails, by BM25 over their words ' +
    `(method "${LEXICAL_METHOD}", with fallback_reason when a configured endpoint failed). A passage coded with several codes is one match listing each coding. ` +
    'Returns {method, query, k, count, matches: [{segment_id, source_id, source_name, start_pos, end_pos, text, text_truncated, score, codes: [{code_id, code_name, segment_id}]}], ' +
    `index (embeddings only): {segments, embedded, not_embedded}} (at most ${MAX_EMBED_PER_CALL} new segment texts are embedded per call; call again to embed the rest). ` +
    'Errors: SOURCE_NOT_FOUND, FOLDER_NOT_FOUND, CODE_NOT_FOUND (filters).',
  input: args({
    query: text(10_000, 1).describe('what to look for, in natural language'),
    k: z.number().int().min(1).max(MAX_K).optional().describe(`number of passages returned (default ${DEFAULT_K}, at most ${MAX_K})`),
    filters: segmentFilters.optional(),
  }),
  effect: 'read',
  trust: 'search',
  prepare: (input, pctx) =>
    prepareEmbeddings(pctx, async (port, reader) => {
      const r = await embedMissing(port, reader, reader.listSegmentsForSearch(toFilter(input.filters)), [input.query]);
      return { query: r.extra[0] ?? null, fresh: r.fresh };
    }),
  run: (ctx, input, prep) => {
    const filter = toFilter(input.filters);
    checkFilter(ctx.domain, filter);
    const k = input.k ?? DEFAULT_K;
    if (!prep.embeddings?.query) {
      const matches = toPassages(bm25Segments(ctx.domain, input.query, filter, k), k);
      return {
        method: LEXICAL_METHOD,
        ...(prep.fallback_reason ? { fallback_reason: prep.fallback_reason } : {}),
        query: input.query,
        k,
        count: matches.length,
        matches,
      };
    }
    const { model, query, fresh } = prep.embeddings;
    const segments = ctx.domain.repo.listSegmentsForSearch(filter);
    const { byId } = vectorsFor(ctx, model, fresh, segments);
    const matches = toPassages(cosineSegments(ctx.domain, query, byId, k), k);
    return {
      method: `embeddings:${model}`,
      query: input.query,
      k,
      count: matches.length,
      matches,
      index: { segments: segments.length, embedded: byId.size, not_embedded: segments.length - byId.size },
    };
  },
});

export const findSimilarSegmentsTool = defineTool({
  name: 'find_similar_segments',
  group: 'search',
  title: 'Find Similar Segments',
  description:
    'Find the coded passages most similar to a given text segment, in any source (passages overlapping the segment in its own source are left out). ' +
    `Ranked like search_semantic: by embeddings when a model is configured (method "embeddings:<model>"), otherwise by BM25 over the segment's words (method "${LEXICAL_METHOD}"). ` +
    'Returns {method, segment: {segment_id, code_id, code_name, source_id, source_name, start_pos, end_pos, text}, k, count, ' +
    'segments: [{segment_id, source_id, source_name, start_pos, end_pos, text, text_truncated, score, codes: [{code_id, code_name, segment_id}]}], index (embeddings only)}. ' +
    'Errors: SEGMENT_NOT_FOUND.',
  input: args({
    segment_id: id('the text segment to compare with'),
    k: z.number().int().min(1).max(MAX_K).optional().describe(`number of passages returned (default ${DEFAULT_K}, at most ${MAX_K})`),
  }),
  effect: 'read',
  trust: 'search',
  prepare: async (input, pctx) => {
    const target = pctx.embeddings ? pctx.reader?.getSegmentsForSearch([input.segment_id])[0] : undefined;
    // no such text segment: run answers SEGMENT_NOT_FOUND, saying so when the id is an AV segment's
    if (!target) return lexical(null);
    return prepareEmbeddings(pctx, async (port, reader) => ({
      query: null,
      fresh: (await embedMissing(port, reader, reader.listSegmentsForSearch({}), [], target)).fresh,
    }));
  },
  run: (ctx, input, prep) => {
    const target = requireSearchSegment(ctx.domain, input.segment_id);
    const k = input.k ?? DEFAULT_K;
    const others = (s: SearchSegment) => !overlapsSegment(target, s);
    if (prep.embeddings) {
      const { model, fresh } = prep.embeddings;
      const segments = ctx.domain.repo.listSegmentsForSearch({});
      const { byId, hashOf, cached } = vectorsFor(ctx, model, fresh, segments);
      const own = cached.get(hashOf.get(target.segment_id) ?? textHash(target.text));
      if (own) {
        const segmentsOut = toPassages(cosineSegments(ctx.domain, own, byId, k, others), k);
        return {
          method: `embeddings:${model}`,
          segment: segmentSummary(target),
          k,
          count: segmentsOut.length,
          segments: segmentsOut,
          index: { segments: segments.length, embedded: byId.size, not_embedded: segments.length - byId.size },
        };
      }
      prep = lexical(`the segment's text changed while it was being embedded`);
    }
    const segmentsOut = toPassages(bm25Segments(ctx.domain, target.text, {}, k, others), k);
    return {
      method: LEXICAL_METHOD,
      ...(prep.fallback_reason ? { fallback_reason: prep.fallback_reason } : {}),
      segment: segmentSummary(target),
      k,
      count: segmentsOut.length,
      segments: segmentsOut,
    };
  },
});
