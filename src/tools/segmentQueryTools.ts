import { z } from 'zod';
import { requireCase } from '../domain/cases';
import { requireCode } from '../domain/codebook';
import type { Segment } from '../domain/model';
import { requireSource } from '../domain/sources';
import { defineTool } from './defineTool';
import { codeLookup, segmentOut } from './present';
import { args, id } from './schemas';

/** Default page of list_segments (segments). */
export const LIST_SEGMENTS_DEFAULT_LIMIT = 500;
/** Largest page of list_segments (segments). */
export const LIST_SEGMENTS_MAX_LIMIT = 5000;

/**
 * list_segments: the coded text segments matching every given filter (code, source, case), in source
 * then text order. A case's segments are those of its whole sources plus those overlapping one of its
 * source ranges (as compare_cases counts them). Backs `GET /state/segments` and the `qda://segments?...`
 * resources. Errors: CODE_NOT_FOUND, SOURCE_NOT_FOUND, CASE_NOT_FOUND.
 */
export const listSegmentsTool = defineTool({
  name: 'list_segments',
  group: 'core',
  title: 'List Coded Segments',
  description:
    'List coded text segments, filtered by code_id, source_id and/or case_id (all given filters apply; none: every segment). ' +
    "A case's segments are those of its whole sources and those overlapping one of its source ranges. Ordered by source, then position " +
    `(code points, end exclusive). Pages of limit (default ${LIST_SEGMENTS_DEFAULT_LIMIT}, at most ${LIST_SEGMENTS_MAX_LIMIT}) from offset. ` +
    'Returns {total, count, offset, has_more, segments: [{segment_id, code_id, code_name, color, source_id, source_name, start_pos, end_pos, text, memo, importance, owner, session_id, coder, coder_role (researcher | agent; agent marks an AI coding), created_at}]}. ' +
    'Audio/video codings are listed by list_av_segments. Errors: CODE_NOT_FOUND, SOURCE_NOT_FOUND, CASE_NOT_FOUND.',
  input: args({
    code_id: id('only segments of this code').optional(),
    source_id: id('only segments in this source').optional(),
    case_id: id('only segments belonging to this case').optional(),
    limit: z
      .number()
      .int()
      .min(1)
      .max(LIST_SEGMENTS_MAX_LIMIT)
      .optional()
      .describe(`largest number of segments returned (default ${LIST_SEGMENTS_DEFAULT_LIMIT})`),
    offset: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional().describe('segments to skip, for the next page (default 0)'),
  }),
  effect: 'read',
  trust: 'read',
  run: (ctx, input) => {
    const d = ctx.domain;
    const repo = d.repo;
    if (input.code_id !== undefined) requireCode(d, input.code_id);
    if (input.source_id !== undefined) requireSource(d, input.source_id);
    let inCase: Set<number> | undefined;
    if (input.case_id !== undefined) {
      requireCase(d, input.case_id);
      inCase = new Set(
        repo
          .listCaseCodings(input.case_id)
          .filter((k) => k.kind === 'text')
          .map((k) => k.segment_id),
      );
    }
    let base: Segment[];
    if (input.source_id !== undefined) base = repo.listSegmentsForSource(input.source_id);
    else if (input.code_id !== undefined) base = repo.listSegmentsForCode(input.code_id);
    else base = repo.listSources().flatMap((s) => (s.segment_count > 0 ? repo.listSegmentsForSource(s.source_id) : []));
    const matching = base.filter((s) => (input.code_id === undefined || s.code_id === input.code_id) && (inCase === undefined || inCase.has(s.segment_id)));
    matching.sort((a, b) => a.source_id - b.source_id || a.start_pos - b.start_pos || a.end_pos - b.end_pos || a.segment_id - b.segment_id);
    const offset = input.offset ?? 0;
    const page = matching.slice(offset, offset + (input.limit ?? LIST_SEGMENTS_DEFAULT_LIMIT));
    const codeOf = codeLookup(repo);
    const names = new Map<number, string | null>();
    const sourceName = (sid: number) => {
      if (!names.has(sid)) names.set(sid, repo.getSource(sid)?.name ?? null);
      return names.get(sid) ?? null;
    };
    const segments = page.map((s) => ({ ...segmentOut(s, codeOf(s.code_id)), source_name: sourceName(s.source_id) }));
    return { total: matching.length, count: segments.length, offset, has_more: offset + segments.length < matching.length, segments };
  },
});
