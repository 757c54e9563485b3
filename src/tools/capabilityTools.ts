/**
 * Tools named after the agent-context spec's capability table (section 4) where the HTTP interface names them differently:
 * apply_code, remove_code, move_code, import_source, import_text,
 * rename_source, delete_source, update_memo. Each is a thin shape over the same domain functions the HTTP
 * interface's tools use (applyCode, deleteSegment, moveCodeToCategory, addSource, deleteSource, ...), so the
 * rules and events are the same; only the parameters and trust levels are the design's.
 *
 * Trust (the capability table): apply_code, remove_code, move_code Notify (category apply_code);
 * import_source, import_text Suggest (category create, whose default is `trust.default_level`, suggest);
 * rename_source Notify: the table says Notify, so it is in the apply_code category (Notify, overridable to
 * suggest or auto) and not in `rename` (Suggest, the level of rename_code and rename_folder); delete_source
 * Require (delete); update_memo Auto (category memo: auto, overridable to notify or suggest).
 */
import { AGENT_PATH_RULE_SHORT } from '../core/pathPolicy';
import { applyCode, deleteSegment } from '../domain/coding';
import { moveCodeToCategory } from '../domain/codebook';
import { addSource, deleteSource, renameSource, updateSourceMemo } from '../domain/sources';
import { MAX_SOURCE_NAME } from '../domain/rules';
import { defineTool } from './defineTool';
import { codingOperation } from './coreTools';
import { sourceOut } from './present';
import { importFileSource } from './sourceTools';
import { args, id, memo, nameText, text } from './schemas';

export const applyCodeTool = defineTool({
  name: 'apply_code',
  group: 'core',
  title: 'Apply Code',
  description:
    'Apply a code to a range of a text source: [start_position, end_position) in Unicode code points, end exclusive (start_pos/end_pos are accepted as aliases). ' +
    "Optional memo on the coded segment and importance 0-2 (2 most important, default 0). Applying a code to a range you (the same coder) already coded with it returns the existing segment (created: false); another coder's coding of the range is separate. " +
    'Returns {segment_id, created, code_id, source_id, start_pos, end_pos, text, memo, importance}. Errors: CODE_NOT_FOUND, SOURCE_NOT_FOUND, INVALID_POSITION, INVALID_ARGUMENTS.',
  input: codingOperation,
  effect: 'create',
  trust: 'apply_code',
  run: (ctx, input) => {
    const r = applyCode(ctx.domain, {
      code_id: input.code_id,
      source_id: input.source_id,
      start_pos: input.start_position ?? input.start_pos ?? 0,
      end_pos: input.end_position ?? input.end_pos ?? 0,
      memo: input.memo,
      importance: input.importance,
    });
    const s = r.segment;
    return {
      segment_id: s.segment_id,
      created: r.created,
      code_id: s.code_id,
      source_id: s.source_id,
      start_pos: s.start_pos,
      end_pos: s.end_pos,
      text: s.text,
      memo: s.memo,
      importance: s.importance,
    };
  },
});

export const removeCodeTool = defineTool({
  name: 'remove_code',
  group: 'core',
  title: 'Remove Code',
  description:
    "Remove one coding (a coded text segment; the text stays). Returns {removed: true, segment_id, code_id, source_id, start_pos, end_pos}. An AV segment's id is refused (use remove_av_segment). Errors: SEGMENT_NOT_FOUND (also for an AV segment's id).",
  input: args({ segment_id: id('the coded segment') }),
  effect: 'destroy',
  trust: 'apply_code',
  run: (ctx, input) => {
    const s = deleteSegment(ctx.domain, input.segment_id);
    return { removed: true, segment_id: s.segment_id, code_id: s.code_id, source_id: s.source_id, start_pos: s.start_pos, end_pos: s.end_pos };
  },
});

export const moveCodeTool = defineTool({
  name: 'move_code',
  group: 'code',
  title: 'Move Code',
  description:
    'Put a code into a category (category_id null takes it out of any category). Returns {code_id, old_category_id, new_category_id}. Errors: CODE_NOT_FOUND, CATEGORY_NOT_FOUND.',
  input: args({ code_id: id('the code'), category_id: id('the target category; null uncategorises').nullable() }),
  effect: 'modify',
  trust: 'apply_code',
  run: (ctx, input) => {
    const r = moveCodeToCategory(ctx.domain, input.code_id, input.category_id);
    return { code_id: input.code_id, old_category_id: r.old_category_id, new_category_id: input.category_id };
  },
});

export const importSourceTool = defineTool({
  name: 'import_source',
  group: 'source',
  title: 'Import Source',
  description:
    'Import a file as a source, as import_file_source does: text is extracted from .txt .md .docx .pdf .odt .rtf (kept exactly); audio, video and image files are registered without text. ' +
    'name defaults to the file name. ' +
    AGENT_PATH_RULE_SHORT +
    ' Returns the source with its source_id. Errors: SOURCE_IMPORT_FAILED (relative path, a path outside the folders an agent may use, missing file, unsupported type, unreadable), SOURCE_DUPLICATE_NAME.',
  input: args({
    file_path: text(4096, 1).describe('absolute path of the file'),
    name: nameText(MAX_SOURCE_NAME).optional().describe(`source name, 1-${MAX_SOURCE_NAME} characters (default: the file name)`),
  }),
  effect: 'create',
  trust: 'create',
  paths: [{ arg: 'file_path', access: 'read', code: 'SOURCE_IMPORT_FAILED' }],
  prepare: (input, pctx) => importFileSource.prepare!({ file_path: input.file_path }, pctx),
  run: (ctx, input, file) => {
    const out = importFileSource.run(ctx, { file_path: input.file_path, name: input.name, dry_run: false }, file);
    const { dry_run: _dry, ...source } = out as { dry_run: false } & Record<string, unknown>;
    return source;
  },
});

export const importTextTool = defineTool({
  name: 'import_text',
  group: 'source',
  title: 'Import Text',
  description:
    'Add a text source from a string (stored exactly; positions count its code points). Names are unique in the project, 1-255 characters. ' +
    'Returns the source with its source_id and length. Errors: SOURCE_DUPLICATE_NAME, INVALID_ARGUMENTS.',
  input: args({
    content: text(50_000_000).describe('the full text'),
    name: nameText(MAX_SOURCE_NAME).describe(`source name, 1-${MAX_SOURCE_NAME} characters, unique in the project`),
  }),
  effect: 'create',
  trust: 'create',
  run: (ctx, input) => sourceOut(addSource(ctx.domain, { name: input.name, type: 'text', text: input.content })),
});

export const renameSourceTool = defineTool({
  name: 'rename_source',
  group: 'source',
  title: 'Rename Source',
  description:
    'Rename a source (1-255 characters, unique in the project); its text, file link and codings stay. Returns {source_id, old_name, new_name}. ' +
    'Errors: SOURCE_NOT_FOUND, SOURCE_DUPLICATE_NAME, INVALID_ARGUMENTS.',
  input: args({ source_id: id('the source'), new_name: nameText(MAX_SOURCE_NAME).describe(`the new name, 1-${MAX_SOURCE_NAME} characters`) }),
  effect: 'modify',
  trust: 'apply_code',
  run: (ctx, input) => {
    const r = renameSource(ctx.domain, input.source_id, input.new_name);
    return { source_id: r.source.source_id, old_name: r.old_name, new_name: r.source.name };
  },
});

export const deleteSourceTool = defineTool({
  name: 'delete_source',
  group: 'source',
  title: 'Delete Source',
  description:
    'Delete a source with all its coded segments (text and AV), at once (remove_source with confirm true). Cannot be undone. ' +
    'Returns {deleted: true, source_id, name, type, segments_removed}. Errors: SOURCE_NOT_FOUND.',
  input: args({ source_id: id('the source') }),
  effect: 'destroy',
  trust: 'delete',
  run: (ctx, input) => {
    const r = deleteSource(ctx.domain, input.source_id);
    return { deleted: true, source_id: r.source.source_id, name: r.source.name, type: r.source.type, segments_removed: r.segments_removed };
  },
});

export const updateMemoTool = defineTool({
  name: 'update_memo',
  group: 'source',
  title: 'Update Source Memo',
  description: "Set a source's memo; null or an empty string clears it. Returns {source_id, old_memo, new_memo}. Errors: SOURCE_NOT_FOUND.",
  input: args({ source_id: id('the source'), memo: memo.nullable().describe('the new memo; null or "" clears it') }),
  effect: 'modify',
  trust: 'memo',
  run: (ctx, input) => ({ source_id: input.source_id, ...updateSourceMemo(ctx.domain, input.source_id, input.memo) }),
});
