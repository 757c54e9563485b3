import { z } from 'zod';
import { RETRIEVAL_COMBINATIONS, retrievePassages } from '../domain/retrieval';
import { defineTool } from './defineTool';
import { args, id, text } from './schemas';

/** Default page of retrieve_segments (passages). */
export const RETRIEVE_DEFAULT_LIMIT = 500;
/** Largest page of retrieve_segments (passages). */
export const RETRIEVE_MAX_LIMIT = 5000;

const attributeValues = (what: string) =>
  z
    .record(text(100, 1), z.union([text(10_000), z.number(), z.boolean()]))
    .optional()
    .describe(
      `only segments ${what} have these values, e.g. {"Site": "Lagos", "Wave": 2} (every pair must hold; typed: 2 does not match the text "2"; dates as their ISO 8601 text)`,
    );

/**
 * retrieve_segments: the coded passages of one or several codes combined with OR, AND (same source) or
 * overlapping, narrowed by source, folder, case, document attribute, case attribute and coder
 * (src/domain/retrieval.ts). The mechanism behind the researcher's Retrieval view. Reads only.
 * Errors: INVALID_ARGUMENTS, CODE_NOT_FOUND, SOURCE_NOT_FOUND, FOLDER_NOT_FOUND, CASE_NOT_FOUND.
 */
export const retrieveSegmentsTool = defineTool({
  name: 'retrieve_segments',
  group: 'core',
  title: 'Retrieve Coded Passages',
  description:
    'Retrieve the coded text passages of one or several codes, as the researcher\'s Retrieval view shows them: combine "or" (default: every segment of any code), ' +
    '"and" (only in sources holding a segment of every code) or "overlap" (only where segments of every code overlap; each passage spans the whole overlapping segments, ' +
    'and overlapping passages merge). In "or" and "and", segments of several codes on exactly the same range are one passage. ' +
    'filters narrow the segments first (every given field narrows further): source_ids, folder_id (with its sub-folders), case_ids, source_attributes (document attributes), case_attributes, coder. ' +
    'Each passage has its whole text, source name, speaker (the speaker label of the turn it starts in; null outside transcripts) and paragraph (1-based, blank-line separated), ' +
    'positions in code points (end exclusive). Ordered by source name, then position. ' +
    `Pages of limit (default ${RETRIEVE_DEFAULT_LIMIT}, at most ${RETRIEVE_MAX_LIMIT}) from offset. ` +
    'Returns {combine, codes: [{code_id, name, color}], total, count, offset, has_more, source_count, passages: [{source_id, source_name, start_pos, end_pos, text, speaker, paragraph, codes, coders, segments: [{segment_id, code_id, start_pos, end_pos, owner, coder, coder_role, memo}]}]}. ' +
    'Errors: INVALID_ARGUMENTS, CODE_NOT_FOUND, SOURCE_NOT_FOUND, FOLDER_NOT_FOUND, CASE_NOT_FOUND.',
  input: args({
    code_ids: z.array(id('a code')).min(1).max(1000).describe('the codes to retrieve (one or more)'),
    combine: z.enum(RETRIEVAL_COMBINATIONS).optional().describe('how the codes combine: or (default), and (same source), overlap'),
    filters: args({
      source_ids: z.array(id('a source')).max(100_000).optional().describe('only segments in these sources'),
      folder_id: id('a folder').optional().describe('only segments in sources of this folder or its sub-folders'),
      case_ids: z
        .array(id('a case'))
        .max(10_000)
        .optional()
        .describe('only segments belonging to one of these cases (their linked sources, or overlapping one of their ranges)'),
      source_attributes: attributeValues('in sources whose document attributes'),
      case_attributes: attributeValues('belonging to a case whose attributes'),
      coder: text(255, 1).optional().describe('only segments coded by this coder (the segment owner)'),
    })
      .optional()
      .describe('narrows the segments; every given field narrows further'),
    limit: z.number().int().min(1).max(RETRIEVE_MAX_LIMIT).optional().describe(`largest number of passages returned (default ${RETRIEVE_DEFAULT_LIMIT})`),
    offset: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional().describe('passages to skip, for the next page (default 0)'),
  }),
  effect: 'read',
  trust: 'read',
  run: (ctx, input) => {
    const r = retrievePassages(ctx.domain, { code_ids: input.code_ids, combine: input.combine, filters: input.filters });
    const offset = input.offset ?? 0;
    const passages = r.passages.slice(offset, offset + (input.limit ?? RETRIEVE_DEFAULT_LIMIT));
    return {
      combine: r.combine,
      codes: r.codes,
      total: r.passages.length,
      count: passages.length,
      offset,
      has_more: offset + passages.length < r.passages.length,
      source_count: r.source_count,
      passages,
    };
  },
});
