import * as path from 'node:path';
import { z } from 'zod';
import { ToolError } from '../core/errors';
import { AGENT_PATH_RULE_SHORT } from '../core/pathPolicy';
import { checkOutputPath, EXPORT_FORMATS, isExportFormat, suggestExportFormat, writeExport, type ExportFormat } from '../exchange/exports';
import { applyImportPlan } from '../exchange/importers/applyPlan';
import { IMPORTERS, type ImportPlan } from '../exchange/importers/index';
import { readingProgress, writingProgress } from './importProgress';
import { checkImportFile } from '../exchange/importers/plan';
import { readProjectSnapshot } from '../exchange/projectSnapshot';
import { defineTool } from './defineTool';
import { args, text } from './schemas';

/**
 * Exchange (HTTP spec, section 4, "Exchange"; issue 6): suggest_export_format, export_data, import_data.
 *
 * Both file tools do their file work in the asynchronous `prepare`: export_data reads the project into one
 * snapshot (synchronously, so it is one consistent state), renders it and writes the file; import_data reads and
 * parses the file into a plan. import_data's synchronous `run` then writes the whole plan in the call's one
 * transaction through the domain services, so rules and events apply and a failure leaves the project as it was.
 * The import formats are the table in src/exchange/importers/index.ts; a format not in it is UNKNOWN_FORMAT.
 */

/** The import formats the HTTP spec names, plus Marginalia's (for messages; the table decides what runs). */
const SPEC_IMPORT_FORMATS = ['code_list', 'csv', 'analytics_csv', 'analytics_json', 'refi_qda', 'rqda', 'qualcoder', 'taguette'];
/** Formats that take name_column (HTTP spec: "csv and analytics_csv only"). */
const NAME_COLUMN_FORMATS = new Set(['csv', 'analytics_csv']);

const exportFormats = Object.keys(EXPORT_FORMATS) as ExportFormat[];

export const suggestExportFormatTool = defineTool({
  name: 'suggest_export_format',
  group: 'exchange',
  title: 'Suggest Export Format',
  description:
    'Recommend an export format for what the researcher wants to do, described in words (e.g. "send the project to a colleague who uses NVivo", "review the codebook with my supervisor", ' +
    '"print the coded interviews", "count codes per participant in R"). Sharing with NVivo, ATLAS.ti, MAXQDA or another QDA tool -> refi_qda; reviewing the codebook -> codebook ' +
    '(qdc to move it into another tool); reading or printing -> html; statistics, R, Python, spreadsheets -> segments_csv. Writes nothing. ' +
    'Returns {use_case, recommended, extension, reasons, matched, alternatives: [{format, extension, reason, matched}], formats: [{format, extensions, description}], notes (what this project would give)}. ' +
    'Then call export_data with the recommended format.',
  input: args({ use_case: text(2000, 1).describe('what the export is for, in a few words') }),
  effect: 'read',
  trust: 'read',
  run: (ctx, input) => {
    const suggestion = suggestExportFormat(input.use_case);
    const n = ctx.domain.repo.counts();
    const notes: string[] = [];
    if (n.codes === 0) notes.push('The project has no codes yet: codebook and qdc exports would fail with EXPORT_FAILED.');
    if (n.sources === 0) notes.push('The project has no sources yet: an html export would fail with EXPORT_FAILED.');
    if (n.segments + n.av_segments === 0) notes.push('The project has no coded segments yet: a segments_csv export would fail with EXPORT_FAILED.');
    if (n.av_segments > 0)
      notes.push(
        `The project has ${n.av_segments} AV coding(s): refi_qda carries them as audio/video selections; html and segments_csv list them with times in milliseconds.`,
      );
    return { ...suggestion, notes };
  },
});

export const exportDataTool = defineTool({
  name: 'export_data',
  group: 'exchange',
  title: 'Export Data',
  description:
    `Write the project, or part of it, to a file. format: ${exportFormats.map((f) => `${f} (${EXPORT_FORMATS[f].extensions.join('/')}: ${EXPORT_FORMATS[f].description})`).join('; ')}. ` +
    "output_path must be absolute, end with the format's extension, and be in an existing folder (not inside node_modules or the project's .marginalia folder, not the project file or a source's file); " +
    'an existing file there is replaced. ' +
    AGENT_PATH_RULE_SHORT +
    " include_memos (default true) applies to the codebook format only. Positions in the outputs count Unicode code points (REFI-QDA's unit), end exclusive; AV times are milliseconds. " +
    'Returns {format, output_path, bytes, counts (what the file holds), warnings (what the format could not carry)}. ' +
    'Errors: UNKNOWN_FORMAT (a format not listed), EXPORT_FAILED (bad output path or one outside the folders an agent may use, an empty codebook ("no codes") for codebook and qdc, no sources for html, no coded segments for segments_csv, a write failure; the message says which).',
  input: args({
    format: text(64, 1).describe(`the export format: ${exportFormats.join(', ')}`),
    output_path: text(4096, 1).describe("absolute path of the file to write, with the format's extension"),
    include_memos: z.boolean().optional().describe('codebook format only: include code and category memos (default true)'),
  }),
  effect: 'read',
  trust: 'report',
  paths: [{ arg: 'output_path', access: 'write', code: 'EXPORT_FAILED' }],
  prepare: async (input, pctx) => {
    if (!isExportFormat(input.format))
      throw new ToolError('UNKNOWN_FORMAT', `Unknown export format "${input.format}"; the formats are ${exportFormats.join(', ')}`);
    if (!pctx.reader) throw new ToolError('NO_PROJECT', 'No project is open.');
    const name = pctx.projectPath ? path.basename(pctx.projectPath).replace(/\.qda$/i, '') : 'project';
    // one consistent state: every read happens before the first await
    const snapshot = readProjectSnapshot(pctx.reader, { name, now: new Date().toISOString(), user: pctx.actor?.user ?? 'unknown' });
    const target = await checkOutputPath(input.output_path, input.format, {
      projectPath: pctx.projectPath,
      protectedFiles: snapshot.sources.flatMap((s) => (s.file_path ? [s.file_path] : [])),
      paths: pctx.paths,
    });
    const written = await writeExport(input.format, snapshot, target, { includeMemos: input.include_memos ?? true });
    return { format: input.format, output_path: target, ...written };
  },
  run: (_ctx, _input, done) => done,
});

export const importDataTool = defineTool({
  name: 'import_data',
  group: 'exchange',
  title: 'Import Data',
  description:
    `Import a file into the open project. format: ${Object.entries(IMPORTERS)
      .map(([f, imp]) => `${f} (${imp.description})`)
      .join('; ')}. ` +
    'source_path must be an absolute path of a readable, non-empty file. ' +
    AGENT_PATH_RULE_SHORT +
    " A REFI-QDA project's references to files outside those folders are treated as missing for agents. name_column (csv and analytics_csv only) names the column that holds each case's name. " +
    'refi_qda: a source whose text file is missing is left out and listed in missing_sources with the codings that could not be placed, everything else is imported; strict: true refuses the import instead. ' +
    'All or nothing: the whole file is imported in one step, or nothing is. Codes, categories and cases merge with existing ones of the same name (case-insensitive); ' +
    'a source merges with an existing one of the same name only when the texts are identical (any other clash fails the import); identical codings are kept once. ' +
    "Positions are converted from each producer's convention to code points (NVivo counts UTF-16 units). " +
    'Returns {format, file, created: {categories, codes, folders, sources, segments, cases}, reused: {...}, codes_moved, case_sources_linked, case_ranges_added, attributes_set, ' +
    'skipped (what the file held that was left out, by reason), warnings} plus, for rqda and qualcoder, {anchoring, anchoring_counts} (as for refi_qda: codings whose stored quote (seltext) disagreed with their offsets), and, for refi_qda, {producer, offset_convention, file_counts, av_segments, renamed ({kind, from, to}: names kept apart or cut to fit, e.g. code names over 100 characters), media_dir, ' +
    'missing_sources ([{source, guid, where, file_missing, selections: [{selection_guid, start_position, end_position, codes}]}]), anchoring ({reanchored, kept_offsets, unplaceable}: codings whose quoted text disagreed with their offsets or that lie outside their text, each with source and code names), anchoring_counts}. ' +
    'Errors: UNKNOWN_FORMAT (a format not listed), IMPORT_FAILED (relative path, a path outside the folders an agent may use, missing, empty, unreadable or malformed file, a name clash; the message says which),; for analytics_json the codes of import_analytics: ANALYTICS_NOT_IMPORTED/FILE_NOT_FOUND (relative path, missing or unreadable file), ANALYTICS_NOT_IMPORTED/NO_PROFILES), ' +
    'INVALID_ARGUMENTS (name_column with a format other than csv and analytics_csv, strict with a format other than refi_qda).',
  input: args({
    format: text(64, 1).describe(`the import format: ${SPEC_IMPORT_FORMATS.join(', ')}`),
    source_path: text(4096, 1).describe('absolute path of the file to import'),
    name_column: text(500, 1).optional().describe('csv and analytics_csv only: the column holding the case name'),
    strict: z
      .boolean()
      .optional()
      .describe(
        "refi_qda only: true refuses the whole import when a source's text file is missing (default false: everything else is imported and missing_sources lists them)",
      ),
  }),
  effect: 'bulk',
  trust: 'bulk',
  paths: [{ arg: 'source_path', access: 'read', code: 'IMPORT_FAILED' }],
  prepare: async (input, pctx): Promise<ImportPlan> => {
    const importer = Object.prototype.hasOwnProperty.call(IMPORTERS, input.format) ? IMPORTERS[input.format] : undefined;
    if (!importer) {
      const known = Object.keys(IMPORTERS);
      throw new ToolError(
        'UNKNOWN_FORMAT',
        `Unknown import format "${input.format}"; the formats are ${known.join(', ')}` +
          (SPEC_IMPORT_FORMATS.includes(input.format) && !known.includes(input.format) ? ' (this build does not have that importer yet)' : ''),
      );
    }
    if (input.name_column !== undefined && !NAME_COLUMN_FORMATS.has(input.format)) {
      throw new ToolError('INVALID_ARGUMENTS', `name_column applies to the csv and analytics_csv formats only, not to ${input.format}`);
    }
    if (input.strict !== undefined && input.format !== 'refi_qda') {
      throw new ToolError('INVALID_ARGUMENTS', `strict applies to the refi_qda format only, not to ${input.format}`);
    }
    // analytics_json delegates to import_analytics, so a relative, missing or unreadable file is its
    // ANALYTICS_NOT_IMPORTED/FILE_NOT_FOUND and an empty one its ANALYTICS_NOT_IMPORTED/NO_PROFILES (HTTP spec, Exchange)
    const analytics = input.format === 'analytics_json';
    const size = checkImportFile(input.source_path, analytics ? 'ANALYTICS_NOT_IMPORTED/FILE_NOT_FOUND' : 'IMPORT_FAILED');
    if (size === 0 && !analytics) throw new ToolError('IMPORT_FAILED', `${input.source_path} is empty`);
    const reading = readingProgress(pctx, input.format, input.source_path, size);
    reading.start();
    const plan = await importer.plan(input.source_path, {
      ...(input.name_column === undefined ? {} : { name_column: input.name_column }),
      ...(input.strict === undefined ? {} : { strict: input.strict }),
      onProgress: reading.onProgress,
      paths: pctx.paths,
    });
    reading.end();
    return plan;
  },
  run: (ctx, _input, plan) => applyImportPlan(ctx.domain, plan, writingProgress(ctx, plan.format)),
});
