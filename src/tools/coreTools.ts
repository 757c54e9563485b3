import { z } from 'zod';
import { ToolError } from '../core/errors';
import { applyCode, deleteSegment, updateSegmentMemo } from '../domain/coding';
import { createCode, requireCode } from '../domain/codebook';
import { colourNoteFor } from '../domain/codeColours';
import { MAX_CODE_NAME } from '../domain/rules';
import { requireSource } from '../domain/sources';
import { defineTool } from './defineTool';
import { codeLookup, codeOut, segmentOut } from './present';
import { args, color, id, memo, nameText, position, requiredAliases } from './schemas';

/** Largest batch_apply_codes request. */
export const MAX_BATCH_OPERATIONS = 1000;

export const listCodes = defineTool({
  name: 'list_codes',
  group: 'core',
  title: 'List Codes',
  description:
    'List every code of the codebook with its colour, memo, category and how many segments use it. ' +
    'Returns {count, codes: [{code_id, name, color, memo, category_id, category, segment_count, av_segment_count, owner, created_at, ...}]}, sorted by name.',
  input: args({}),
  effect: 'read',
  trust: 'read',
  memo: true,
  run: (ctx) => {
    const repo = ctx.domain.repo;
    const categories = new Map(repo.listCategories().map((c) => [c.category_id, c]));
    const codes = repo.listCodes().map((c) => codeOut(c, repo, categories));
    return { count: codes.length, codes };
  },
});

export const getCode = defineTool({
  name: 'get_code',
  group: 'core',
  title: 'Get Code',
  description: 'Details of one code: name, colour, memo, category, segment counts, owner. Errors: CODE_NOT_FOUND.',
  input: args({ code_id: id('the code') }),
  effect: 'read',
  trust: 'read',
  run: (ctx, input) => codeOut(requireCode(ctx.domain, input.code_id), ctx.domain.repo),
});

export const createCodeTool = defineTool({
  name: 'create_code',
  group: 'core',
  title: 'Create Code',
  description:
    `Create a code in the codebook. Names are unique (case-insensitive), 1-${MAX_CODE_NAME} characters, not blank, without control characters. ` +
    'Without color the code gets a palette colour no other code uses (the least used one when all 20 are taken). ' +
    "Returns the new code with its code_id; when the chosen color is already another code's, the code is still created and the result adds " +
    'colour_note (which code has it), other_codes_with_colour and free_colours (palette colours no code uses). Errors: DUPLICATE_NAME, CATEGORY_NOT_FOUND, INVALID_ARGUMENTS.',
  input: args({
    name: nameText(MAX_CODE_NAME).describe(`the code name, 1-${MAX_CODE_NAME} characters, unique in the codebook (case-insensitive)`),
    color: color.optional().describe('hex colour #RRGGBB, e.g. #4E79A7; omit it for a palette colour no other code uses'),
    memo: memo.optional().describe('what the code means and when to apply it'),
    category_id: id('category to put the code in').nullable().optional(),
  }),
  effect: 'create',
  trust: 'create_code',
  run: (ctx, input) => {
    const code = createCode(ctx.domain, input);
    const note = input.color === undefined ? undefined : colourNoteFor(ctx.domain.repo, code.color, code.code_id);
    return { ...codeOut(code, ctx.domain.repo), ...note };
  },
});

export const listSegmentsForSource = defineTool({
  name: 'list_segments_for_source',
  group: 'core',
  title: 'List Segments of a Source',
  description:
    'List the coded text segments of a source in text order, each with its code, positions (code points, end exclusive), ' +
    'the coded text, memo, coder (owner; also as coder), coder_role (researcher | agent: agent marks an AI coding; null when unknown) and session. Errors: SOURCE_NOT_FOUND.',
  input: args({ source_id: id('the source') }),
  effect: 'read',
  trust: 'read',
  run: (ctx, input) => {
    const source = requireSource(ctx.domain, input.source_id);
    const codeOf = codeLookup(ctx.domain.repo);
    const segments = ctx.domain.repo.listSegmentsForSource(input.source_id).map((s) => segmentOut(s, codeOf(s.code_id)));
    return { source_id: source.source_id, source_name: source.name, count: segments.length, segments };
  },
});

export const deleteSegmentTool = defineTool({
  name: 'delete_segment',
  group: 'core',
  title: 'Delete Segment',
  description:
    "Remove one coded text segment (the coding, not the text). An AV segment's id is refused (use remove_av_segment). Errors: SEGMENT_NOT_FOUND (also for an AV segment's id).",
  input: args({ segment_id: id('the coded segment') }),
  effect: 'destroy',
  trust: 'apply_code',
  run: (ctx, input) => {
    const seg = deleteSegment(ctx.domain, input.segment_id);
    return { deleted: true, segment_id: seg.segment_id, code_id: seg.code_id, source_id: seg.source_id, start_pos: seg.start_pos, end_pos: seg.end_pos };
  },
});

/**
 * One coding of a text range: `{code_id, source_id, start_position, end_position, memo?, importance?}`,
 * positions in code points (end exclusive), `start_pos`/`end_pos` accepted as aliases (QualCoder-v2's
 * naming); an alias that disagrees with its long name is refused. Shared by batch_apply_codes and apply_code.
 */
export const codingOperation = requiredAliases(
  args({
    code_id: id('the code to apply'),
    source_id: id('the text source'),
    start_position: position('start of the range (required, or its alias start_pos)').optional(),
    end_position: position('end of the range, exclusive (required, or its alias end_pos)').optional(),
    start_pos: position('alias of start_position').optional(),
    end_pos: position('alias of end_position').optional(),
    memo: memo.optional().describe('memo on the coded segment'),
    importance: z.number().int().min(0).max(2).optional().describe('0 to 2, 2 most important; default 0'),
  }),
  [
    ['start_position', 'start_pos'],
    ['end_position', 'end_pos'],
  ],
);

export const batchApplyCodes = defineTool({
  name: 'batch_apply_codes',
  group: 'core',
  title: 'Apply Codes (Batch)',
  description:
    'Apply codes to text ranges in one all-or-nothing step: either every operation is applied or none is. ' +
    'Each operation is {code_id, source_id, start_position, end_position, memo?, importance?}; positions count Unicode code points, end exclusive ' +
    `(start_pos/end_pos are accepted as aliases). At most ${MAX_BATCH_OPERATIONS} operations. Applying a code to a range you (the same coder) already coded with it returns the existing segment (created: false); another coder's coding of the range is separate. ` +
    'Returns {total, created, existing, results: [{index, segment_id, created, ...}]}. Errors (naming the failing operation index in details): CODE_NOT_FOUND, SOURCE_NOT_FOUND, INVALID_POSITION, INVALID_ARGUMENTS.',
  input: args({ operations: z.array(codingOperation).min(1).max(MAX_BATCH_OPERATIONS).describe('the codings to apply') }),
  effect: 'bulk',
  trust: 'bulk',
  run: (ctx, input) => {
    const cache = new Map<number, string | null>();
    const results = input.operations.map((op, index) => {
      const start = op.start_position ?? op.start_pos ?? 0;
      const end = op.end_position ?? op.end_pos ?? 0;
      try {
        const r = applyCode(
          ctx.domain,
          { code_id: op.code_id, source_id: op.source_id, start_pos: start, end_pos: end, memo: op.memo, importance: op.importance },
          cache,
        );
        return {
          index,
          segment_id: r.segment.segment_id,
          created: r.created,
          code_id: op.code_id,
          source_id: op.source_id,
          start_pos: start,
          end_pos: end,
          text: r.segment.text,
        };
      } catch (e) {
        if (e instanceof ToolError)
          throw new ToolError(e.code, `Operation ${index}: ${e.message}. Nothing was applied.`, { index, ...(e.details as object | undefined) });
        throw e;
      }
    });
    const created = results.filter((r) => r.created).length;
    return { total: results.length, created, existing: results.length - created, results };
  },
});

export const updateSegmentMemoTool = defineTool({
  name: 'update_segment_memo',
  group: 'core',
  title: 'Update Segment Memo',
  description:
    'Set the memo of one coded segment; memo is required, null clears it. Returns {segment_id, old_memo, new_memo}. Errors: SEGMENT_NOT_FOUND, INVALID_ARGUMENTS (memo missing).',
  input: args({ segment_id: id('the coded segment'), memo: memo.nullable().describe('the new memo (required); null clears it') }),
  effect: 'modify',
  trust: 'apply_code',
  run: (ctx, input) => {
    const r = updateSegmentMemo(ctx.domain, input.segment_id, input.memo ?? null);
    return { segment_id: r.segment.segment_id, old_memo: r.old_memo, new_memo: r.segment.memo };
  },
});
