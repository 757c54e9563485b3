import * as path from 'node:path';
import { z } from 'zod';
import { ToolError } from '../core/errors';
import { AGENT_PATH_RULE_SHORT } from '../core/pathPolicy';
import { sliceCp } from '../core/text';
import { SOURCE_TYPES } from '../domain/model';
import type { AttributeType, AttributeValue, SourceAttribute } from '../domain/ports';
import { MAX_SOURCE_NAME } from '../domain/rules';
import { addSource, checkSourceName, deleteSource, requireSource, suggestSourceMetadata } from '../domain/sources';
import { extractFile, SUPPORTED_EXTENSIONS, type ExtractedFile } from '../exchange/textExtraction';
import { defineTool } from './defineTool';
import { sourceOut } from './present';
import { args, id, memo, nameText, position, text } from './schemas';

/** The document attributes of sources as tools return them: `attributes` {name: value} and `attribute_types` {name: type}, by source_id. */
function sourceAttributesById(
  rows: readonly SourceAttribute[],
): Map<number, { attributes: Record<string, AttributeValue>; attribute_types: Record<string, AttributeType> }> {
  const out = new Map<number, { attributes: Record<string, AttributeValue>; attribute_types: Record<string, AttributeType> }>();
  for (const a of rows) {
    let o = out.get(a.source_id);
    if (!o) out.set(a.source_id, (o = { attributes: {}, attribute_types: {} }));
    o.attributes[a.name] = a.value;
    o.attribute_types[a.name] = a.type;
  }
  return out;
}
const NO_ATTRIBUTES = Object.freeze({ attributes: Object.freeze({}), attribute_types: Object.freeze({}) });

/** Default and largest page of read_source_content, in code points (HTTP spec section 8). */
export const DEFAULT_MAX_LENGTH = 50_000;
export const MAX_MAX_LENGTH = 1_000_000;

export const listSources = defineTool({
  name: 'list_sources',
  group: 'source',
  title: 'List Sources',
  description:
    'List the sources of the project (no text), optionally only one type. Each has source_id, name, type, memo, origin, folder_id, ' +
    'length (code points), segment_count, coded, attributes (the document attributes as {name: value}: strings for text and ISO 8601 dates, numbers, booleans) ' +
    'and attribute_types ({name: "text"|"number"|"date"|"boolean"}). Returns {count, sources}.',
  input: args({ source_type: z.enum(SOURCE_TYPES).optional().describe('only sources of this type') }),
  effect: 'read',
  trust: 'read',
  run: (ctx, input) => {
    const attributes = sourceAttributesById(ctx.domain.repo.listSourceAttributes());
    const sources = ctx.domain.repo.listSources(input.source_type).map((s) => ({ ...sourceOut(s), ...(attributes.get(s.source_id) ?? NO_ATTRIBUTES) }));
    return { count: sources.length, sources };
  },
});

export const readSourceContent = defineTool({
  name: 'read_source_content',
  group: 'source',
  title: 'Read Source Content',
  description:
    `Read a source's text, one page at a time. Positions count Unicode code points; end_pos is exclusive. A page holds at most max_length (default ${DEFAULT_MAX_LENGTH}) code points. ` +
    'Returns {source_id, source_name, source_type, content, start_pos, end_pos, total_length, has_more, attributes, attribute_types} (attributes: the document attributes as {name: value}, ' +
    'attribute_types: {name: type}); while has_more is true, call again with start_pos = the returned end_pos. ' +
    'Errors: SOURCE_NOT_FOUND, INVALID_POSITION (start_pos past the end, or end_pos before start_pos).',
  input: args({
    source_id: id('the source'),
    start_pos: position('first position to read').optional().describe('first position to read, in code points (default 0)'),
    end_pos: position('position to stop before').optional().describe('stop before this position, in code points (default: the end of the text)'),
    max_length: z.number().int().min(1).max(MAX_MAX_LENGTH).optional().describe(`largest page in code points (default ${DEFAULT_MAX_LENGTH})`),
  }),
  effect: 'read',
  trust: 'read',
  run: (ctx, input) => {
    const source = requireSource(ctx.domain, input.source_id);
    const text = ctx.domain.repo.getSourceText(input.source_id) ?? '';
    const total = source.length;
    const start = input.start_pos ?? 0;
    const stop = Math.min(input.end_pos ?? total, total);
    if (start > total) throw new ToolError('INVALID_POSITION', `start_pos ${start} is past the end of "${source.name}" (${total} code points)`);
    if (stop < start) throw new ToolError('INVALID_POSITION', `end_pos ${input.end_pos} is before start_pos ${start}`);
    const end = Math.min(stop, start + (input.max_length ?? DEFAULT_MAX_LENGTH));
    return {
      source_id: source.source_id,
      source_name: source.name,
      source_type: source.type,
      content: sliceCp(text, start, end),
      start_pos: start,
      end_pos: end,
      total_length: total,
      has_more: end < stop,
      ...(sourceAttributesById(ctx.domain.repo.listSourceAttributes(source.source_id)).get(source.source_id) ?? NO_ATTRIBUTES),
    };
  },
});

export const navigateToSegment = defineTool({
  name: 'navigate_to_segment',
  group: 'source',
  title: 'Navigate to Segment',
  description:
    'Show a range of a source to the researcher: opens the source in the editor, scrolls to it and (by default) highlights it. Positions in code points. ' +
    'In headless mode nothing is shown and navigated is false. Returns {navigated, detail, navigated_to, text, current_screen}. Errors: SOURCE_NOT_FOUND, INVALID_POSITION.',
  input: args({
    source_id: id('the source'),
    start_pos: position('start of the range'),
    end_pos: position('end of the range (exclusive)'),
    highlight: z.boolean().optional().describe('highlight the range (default true)'),
  }),
  effect: 'read',
  trust: 'read',
  run: (ctx, input) => {
    const source = requireSource(ctx.domain, input.source_id);
    if (input.end_pos < input.start_pos || input.end_pos > source.length) {
      throw new ToolError('INVALID_POSITION', `The range [${input.start_pos}, ${input.end_pos}) is not inside "${source.name}" (0..${source.length})`);
    }
    const target = {
      source_id: source.source_id,
      source_name: source.name,
      start_pos: input.start_pos,
      end_pos: input.end_pos,
      highlight: input.highlight ?? true,
    };
    const result = ctx.host.navigate(target);
    const text = sliceCp(ctx.domain.repo.getSourceText(source.source_id) ?? '', input.start_pos, input.end_pos);
    return { ...result, navigated_to: target, text, current_screen: ctx.host.currentScreen() };
  },
});

export const suggestSourceMetadataTool = defineTool({
  name: 'suggest_source_metadata',
  group: 'source',
  title: 'Suggest Source Metadata',
  description:
    'Record metadata hints for a source (its language, topics, where to file it) for the researcher to review. Changes nothing about the source. ' +
    'Returns {hint_id, source_id, source_name, suggested, status: "recorded"}. Errors: SOURCE_NOT_FOUND.',
  input: args({
    source_id: id('the source'),
    language: text(64, 1).optional().describe('language of the text, e.g. "en" or "English"'),
    topics: z.array(text(200, 1)).max(50).optional().describe('topics the source covers'),
    organization_suggestion: text(2000, 1).optional().describe('where to file it, e.g. a folder or case'),
  }),
  effect: 'create',
  trust: 'create',
  run: (ctx, input) => {
    const hint = { language: input.language ?? null, topics: input.topics ?? null, organization_suggestion: input.organization_suggestion ?? null };
    const r = suggestSourceMetadata(ctx.domain, input.source_id, hint);
    return { hint_id: r.hint_id, source_id: r.source.source_id, source_name: r.source.name, suggested: hint, status: 'recorded' };
  },
});

export const addTextSource = defineTool({
  name: 'add_text_source',
  group: 'source',
  title: 'Add Text Source',
  description:
    'Add a text source from a string (stored exactly; later positions count its code points). Names are unique in the project. ' +
    'Returns the source with its source_id and length. Errors: SOURCE_DUPLICATE_NAME, INVALID_ARGUMENTS.',
  input: args({
    name: nameText(MAX_SOURCE_NAME).describe(`source name, 1-${MAX_SOURCE_NAME} characters, unique in the project`),
    content: text(50_000_000).describe('the full text'),
    memo: memo.optional().describe('memo about the source'),
    origin: text(2000).optional().describe('where the text came from'),
  }),
  effect: 'create',
  trust: 'create',
  run: (ctx, input) => sourceOut(addSource(ctx.domain, { name: input.name, type: 'text', text: input.content, memo: input.memo, origin: input.origin })),
});

export const removeSource = defineTool({
  name: 'remove_source',
  group: 'source',
  title: 'Remove Source',
  description:
    'Delete a source and all its coded segments, in two steps: with confirm false (the default) nothing is deleted and a preview is returned ' +
    '{preview: true, source_name, source_type, coded_segments_count}; with confirm true the source is deleted {removed: true, segments_removed}. Errors: SOURCE_NOT_FOUND.',
  input: args({ source_id: id('the source'), confirm: z.boolean().optional().describe('true deletes; false or omitted only previews') }),
  effect: 'destroy',
  trust: 'delete',
  run: (ctx, input) => {
    if (!input.confirm) {
      const s = requireSource(ctx.domain, input.source_id);
      const coded = s.segment_count + s.av_segment_count;
      return {
        preview: true as const,
        removed: false,
        source_id: s.source_id,
        source_name: s.name,
        source_type: s.type,
        coded_segments_count: coded,
        message: `Deleting "${s.name}" would remove it and its ${coded} coded segment(s). Call again with confirm: true to delete.`,
      };
    }
    const r = deleteSource(ctx.domain, input.source_id);
    return {
      preview: false as const,
      removed: true,
      source_id: r.source.source_id,
      source_name: r.source.name,
      source_type: r.source.type,
      segments_removed: r.segments_removed,
    };
  },
});

export const importFileSource = defineTool({
  name: 'import_file_source',
  group: 'source',
  title: 'Import File as Source',
  description:
    `Import a file as a source. Text is extracted from ${['.txt', '.md', '.docx', '.pdf', '.odt', '.rtf'].join(' ')} (text kept exactly, line ends included); ` +
    'audio, video and image files are registered without text. With dry_run true nothing is written and the result says what would be imported. ' +
    AGENT_PATH_RULE_SHORT +
    " A .txt or .md file that is not UTF-8 is decoded from the encoding its byte-order mark names or that is detected (the result's `encoding` says which, with the detection's confidence), or refused naming the likely encoding." +
    ' Returns the source (or the dry-run preview). Errors: SOURCE_IMPORT_FAILED (relative path, a path outside the folders an agent may use, missing file, unsupported type, unreadable, text in an encoding that cannot be decoded exactly), SOURCE_DUPLICATE_NAME.',
  input: args({
    file_path: text(4096, 1).describe('absolute path of the file'),
    name: nameText(MAX_SOURCE_NAME).optional().describe(`source name, 1-${MAX_SOURCE_NAME} characters (default: the file name)`),
    memo: memo.optional().describe('memo about the source'),
    origin: text(2000).optional().describe('where the file came from'),
    dry_run: z.boolean().optional().describe('true: check and preview only, write nothing (default false)'),
  }),
  effect: 'create',
  trust: 'create',
  paths: [{ arg: 'file_path', access: 'read', code: 'SOURCE_IMPORT_FAILED' }],
  prepare: async (input): Promise<ExtractedFile> => {
    if (!path.isAbsolute(input.file_path)) throw new ToolError('SOURCE_IMPORT_FAILED', `file_path must be absolute (got "${input.file_path}")`);
    return extractFile(input.file_path);
  },
  run: (ctx, input, file) => {
    const name = input.name ?? path.basename(input.file_path);
    if (input.dry_run) {
      const checked = checkSourceName(ctx.domain, name);
      return {
        dry_run: true as const,
        would_import: {
          name: checked,
          type: file.type,
          mime: file.mime,
          size_bytes: file.sizeBytes,
          length: file.text === null ? 0 : [...file.text].length,
          preview: file.text === null ? null : sliceCp(file.text, 0, 500),
          ...(file.encoding ? { encoding: file.encoding } : {}),
        },
        supported_extensions: SUPPORTED_EXTENSIONS,
      };
    }
    const source = addSource(ctx.domain, {
      name,
      type: file.type,
      text: file.text,
      memo: input.memo,
      origin: input.origin ?? input.file_path,
      file_path: input.file_path,
      mime: file.mime,
      size_bytes: file.sizeBytes,
    });
    if (file.text !== null && file.mime !== 'text/plain' && file.mime !== 'text/markdown') {
      ctx.domain.events.emit({
        event_type: 'source.text_extracted',
        aggregate_type: 'source',
        aggregate_id: String(source.source_id),
        payload: { source_id: source.source_id, mime: file.mime, length: source.length },
      });
    }
    return { dry_run: false as const, ...sourceOut(source), ...(file.encoding ? { encoding: file.encoding } : {}) };
  },
});
