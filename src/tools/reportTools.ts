/**
 * Report tools (agent-context spec, capability table): generate_frequency_report,
 * generate_cooccurrence_report and generate_coder_comparison start report jobs (src/domain/reports.ts);
 * get_report and list_reports read them back; export_report writes one to a CSV, JSON or HTML file
 * (src/exchange/reportFormats.ts). Trust category `report` (Autonomous, overridable to Notify).
 *
 * A job completes (or fails) before its call returns: the call answers with `status` completed or failed,
 * the result itself, and `result_uri` (`qda://reports/<id>`), and its analysis.report_started and
 * analysis.report_completed (or analysis.report_failed) events are stored together, in that order.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { ToolError } from '../core/errors';
import { AGENT_PATH_RULE_SHORT } from '../core/pathPolicy';
import {
  checkCoders,
  coderComparisonReport,
  cooccurrenceReport,
  frequencyReport,
  reportView,
  requireReport,
  resolveReportFilter,
  runReportJob,
  type ReportFiltersInput,
  type ReportResult,
} from '../domain/reports';
import type { DomainContext } from '../domain/events';
import type { ProjectRepository, ReportFilter } from '../domain/ports';
import { scopedRepository, type ReadScope } from '../domain/teamSettings';
import { REPORT_FORMATS, renderReport, type ReportFormat } from '../exchange/reportFormats';
import { defineTool } from './defineTool';
import { args, id, text } from './schemas';

/** The `filters` parameter of the report tools. */
const filters = args({
  source_ids: z.array(id('a source')).max(100_000).optional().describe('only segments in these sources'),
  code_ids: z.array(id('a code')).max(100_000).optional().describe('only these codes'),
  case_ids: z
    .array(id('a case'))
    .max(10_000)
    .optional()
    .describe('only segments belonging to these cases (their linked sources, or overlapping one of their ranges)'),
  coder: text(255, 1).optional().describe('only segments coded by this coder (the segment owner)'),
  source_attributes: z
    .record(text(100, 1), z.union([text(10_000), z.number(), z.boolean()]))
    .optional()
    .describe(
      'only segments in sources whose document attributes have these values, e.g. {"Site": "Lagos", "Wave": 2} (every pair must hold; typed: 2 does not match the text "2"; ' +
        'dates as their ISO 8601 text). The stored filters list the matching sources in source_ids.',
    ),
})
  .optional()
  .describe('narrows the report; every given field narrows further; omitted: the whole project');

/**
 * The input, effect, trust and run of a report tool whose only parameter is `filters` (frequency,
 * co-occurrence): resolves the filters (SOURCE_NOT_FOUND, CODE_NOT_FOUND, CASE_NOT_FOUND) and runs
 * `compute` as a report job of `type`, over the codings the caller may see (blind coding: ctx.scope).
 */
function filteredReportJob(type: 'frequency' | 'cooccurrence', compute: (repo: ProjectRepository, f: ReportFilter) => ReportResult) {
  return {
    input: args({ filters }),
    effect: 'create' as const,
    trust: 'report' as const,
    run: (ctx: { domain: DomainContext<ProjectRepository>; scope?: ReadScope }, input: { filters?: ReportFiltersInput }) => {
      const f = resolveReportFilter(ctx.domain, input.filters);
      // blind coding: the report counts only the codings the caller may see (the job itself is written as any write)
      return runReportJob(ctx.domain, type, f, {}, () => compute(scopedRepository(ctx.domain.repo, ctx.scope ?? null), f));
    },
  };
}

const JOB =
  'Runs as a job that completes before the call returns: emits analysis.report_started then analysis.report_completed (result_uri qda://reports/<id>), ' +
  'or analysis.report_failed when computing fails (the report is then stored with status failed and the call still succeeds with status "failed", error_code and error). ' +
  'Returns {job_id, report_id, report_type, status: "completed" | "failed", result_uri, result, error_code, error}; get_report and export_report take the report_id.';

export const generateFrequencyReportTool = defineTool({
  name: 'generate_frequency_report',
  group: 'analysis',
  title: 'Generate Frequency Report',
  description:
    'Code frequencies: for every code of the codebook (or of filters.code_ids) the number of coded text segments, the number of distinct sources they are in, and the coders who made them (each with their counts); ' +
    'most used first. result: {totals: {codes, codes_used, segments, sources, coders}, codes: [{code_id, name, color, category_id, segment_count, source_count, coders: [{coder, segment_count, source_count}]}]}. ' +
    `${JOB} Errors: SOURCE_NOT_FOUND, CODE_NOT_FOUND, CASE_NOT_FOUND (an id in filters that does not exist).`,
  ...filteredReportJob('frequency', frequencyReport),
});

export const generateCooccurrenceReportTool = defineTool({
  name: 'generate_cooccurrence_report',
  group: 'analysis',
  title: 'Generate Co-occurrence Report',
  description:
    'Code co-occurrence: for every pair of codes, the number of places where a segment of one overlaps a segment of the other on the same source ' +
    '(half-open ranges; touching ranges do not overlap), as a symmetric matrix whose diagonal counts overlapping segments of the same code. ' +
    'result: {codes: [{code_id, name, color}] (rows and columns: filters.code_ids, else every code with a segment), matrix: number[][], total_overlaps, same_code_overlaps, top_pairs: [{code_a_id, code_a_name, code_b_id, code_b_name, count}]}. ' +
    `${JOB} Errors: SOURCE_NOT_FOUND, CODE_NOT_FOUND, CASE_NOT_FOUND (an id in filters that does not exist).`,
  ...filteredReportJob('cooccurrence', cooccurrenceReport),
});

export const generateCoderComparisonTool = defineTool({
  name: 'generate_coder_comparison',
  group: 'analysis',
  title: 'Generate Coder Comparison',
  description:
    'Inter-coder agreement of two or more coders (segment owners; an agent is a coder like a person) per code and over all codes: for each code every unit of the compared sources is coded or not by each coder. ' +
    'unit: character (default; every code point), segment (the stretches covered by overlapping segments of the coders, merged), sentence (Unicode UAX #29) or paragraph (a non-blank line); a coder coded a unit when one of their segments of the code overlaps it. ' +
    "Measures, each {value, ci_low, ci_high} with a seeded percentile bootstrap 95% interval (bootstrap.draws resamples of the units, default 1000, 0 for none; bootstrap.seed default 1): percent agreement (Fleiss' mean agreeing pairs), Cohen's kappa of each pair (Cohen 1960), " +
    "Fleiss' kappa (1971), Brennan-Prediger kappa (1981), Gwet's AC1 (2008), Krippendorff's alpha nominal (2011) and the unitizing alpha on the coded stretches (Krippendorff 1995/2004; its interval resamples sources). " +
    'Compared sources: the text sources (within filters) on which at least two of the coders coded something. With exactly two coders each code also has the 2x2 table {both, only_a, only_b, neither, coded_a, coded_b, characters (units), po, pe, kappa, percent_agreement}. ' +
    'result: {coders, unit, bootstrap, method, sources: [{source_id, name, characters, units}], total_characters, codes: [{code_id, name, measures: {units, percent_agreement, cohen_kappa: [{coders, value, ci_low, ci_high}], fleiss_kappa, brennan_prediger, gwet_ac1, krippendorff_alpha, unitizing_alpha}, ...2x2 table}], overall, ' +
    'disagreements: [{code_id, code, source_id, source, start_pos, end_pos, text, coded_by, not_coded_by}] (at most max_disagreements_per_code per code), suggestions: {by_code: [{coder, code_id, code, suggested, accepted, edited, rejected, pending, acceptance_rate, edit_rate, rejection_rate}], by_month: [{coder, month, ...}], by_week: [{coder, week (the Monday of the ISO week, YYYY-MM-DD, UTC), ...}]} ' +
    "(each suggesting coder's, usually an agent's, coding suggestions: accepted unchanged, edited = changed or removed after approval, rejected, pending; rates of the decided)}. " +
    `${JOB} Errors: INVALID_ARGUMENTS (fewer than two different coders, more than 12, a coder with no segments, filters.coder given), SOURCE_NOT_FOUND, CODE_NOT_FOUND, CASE_NOT_FOUND.`,
  input: args({
    coder_ids: z.array(text(255, 1)).min(2).max(12).describe('the coders to compare (two or more): segment owners, e.g. ["alice", "bob", "claude-agent"]'),
    unit: z.enum(['character', 'segment', 'sentence', 'paragraph']).optional().describe('what one unit of agreement is (default character)'),
    bootstrap: args({
      draws: z.number().int().min(0).max(10_000).optional().describe('bootstrap resamples for the 95% intervals (default 1000; 0: no intervals)'),
      seed: z.number().int().min(0).max(4_294_967_295).optional().describe('seed of the resampling (default 1): the same seed gives the same intervals'),
    })
      .optional()
      .describe('the confidence intervals: seeded percentile bootstrap resampling units'),
    filters,
  }),
  effect: 'create',
  trust: 'report',
  run: (ctx, input) => {
    const f = resolveReportFilter(ctx.domain, input.filters);
    const coders = checkCoders(ctx.domain.repo, input.coder_ids, f);
    const options = { unit: input.unit ?? 'character', draws: input.bootstrap?.draws ?? 1000, seed: input.bootstrap?.seed ?? 1 } as const;
    return runReportJob(
      ctx.domain,
      'coder_comparison',
      f,
      { coder_ids: coders, unit: options.unit, bootstrap: { draws: options.draws, seed: options.seed } },
      () => coderComparisonReport(ctx.domain.repo, coders, f, options),
    );
  },
});

export const getReportTool = defineTool({
  name: 'get_report',
  group: 'analysis',
  title: 'Get Report',
  description:
    'A stored report with its result (the resource qda://reports/<id>). Returns {report_id, job_id, report_type, status, filters, params, result_uri, owner, session_id, created_at, completed_at, error_code, error, result}. ' +
    'Errors: REPORT_NOT_FOUND.',
  input: args({ report_id: id('the report (the job_id a generate_* tool returned)') }),
  effect: 'read',
  trust: 'read',
  run: (ctx, input) => reportView(requireReport(ctx.domain.repo, input.report_id), true),
});

export const listReportsTool = defineTool({
  name: 'list_reports',
  group: 'analysis',
  title: 'List Reports',
  description:
    'The stored reports, newest first, without their results (get_report has them), optionally of one type or status. Returns {total, count, offset, has_more, reports: [{report_id, report_type, status, filters, result_uri, created_at, ...}]}.',
  input: args({
    report_type: z.enum(['frequency', 'cooccurrence', 'coder_comparison']).optional().describe('only reports of this type'),
    status: z.enum(['running', 'completed', 'failed']).optional().describe('only reports with this status'),
    limit: z.number().int().min(1).max(1000).optional().describe('at most this many (default 100)'),
    offset: z.number().int().min(0).optional().describe('skip this many (default 0)'),
  }),
  effect: 'read',
  trust: 'read',
  run: (ctx, input) => {
    const offset = input.offset ?? 0;
    const r = ctx.domain.repo.listReports({ type: input.report_type, status: input.status, limit: input.limit ?? 100, offset });
    const reports = r.reports.map((x) => reportView(x, false));
    return { total: r.total, count: reports.length, offset, has_more: offset + reports.length < r.total, reports };
  },
});

const EXTENSIONS: Record<ReportFormat, readonly string[]> = { csv: ['.csv'], json: ['.json'], html: ['.html', '.htm'] };

/**
 * Where export_report writes: `outputPath` checked (absolute, extension of the format, parent directory
 * exists, not a directory, not an existing file unless `overwrite`), else
 * `.marginalia/reports/report-<id>-<type>.<format>` beside the project (created; replaced when it exists).
 * Errors: EXPORT_FAILED.
 */
function exportTarget(projectPath: string, reportId: number, type: string, format: ReportFormat, outputPath: string | undefined, overwrite: boolean): string {
  if (outputPath === undefined) {
    const dir = path.join(path.dirname(projectPath), '.marginalia', 'reports');
    fs.mkdirSync(dir, { recursive: true });
    return path.join(dir, `report-${reportId}-${type}.${format}`);
  }
  if (!path.isAbsolute(outputPath)) throw new ToolError('EXPORT_FAILED', `output_path must be absolute (got "${outputPath}")`);
  const target = path.normalize(outputPath);
  if (!EXTENSIONS[format].includes(path.extname(target).toLowerCase())) {
    throw new ToolError('EXPORT_FAILED', `output_path must end in ${EXTENSIONS[format].join(' or ')} for format ${format} (got "${path.basename(target)}")`);
  }
  const parent = path.dirname(target);
  if (!fs.existsSync(parent) || !fs.statSync(parent).isDirectory()) throw new ToolError('EXPORT_FAILED', `The folder ${parent} does not exist`);
  if (fs.existsSync(target)) {
    if (fs.statSync(target).isDirectory()) throw new ToolError('EXPORT_FAILED', `${target} is a folder`);
    if (!overwrite) throw new ToolError('EXPORT_FAILED', `${target} exists; pass overwrite: true to replace it`);
  }
  return target;
}

export const exportReportTool = defineTool({
  name: 'export_report',
  group: 'analysis',
  title: 'Export Report',
  description:
    'Write a completed report to a file: csv (RFC 4180, one table), json (the report as get_report returns it) or html (a standalone page, every text escaped, no scripts). ' +
    "output_path must be absolute, end in the format's extension (.csv, .json, .html or .htm) and be in an existing folder; an existing file is replaced only with overwrite true. " +
    'Without output_path the file goes to .marginalia/reports/report-<id>-<type>.<format> beside the project. ' +
    AGENT_PATH_RULE_SHORT +
    ' Returns {report_id, format, file_path, bytes}. ' +
    'Errors: REPORT_NOT_FOUND, UNKNOWN_FORMAT (a format other than csv, json and html), EXPORT_FAILED (a bad output_path or one outside the folders an agent may use, the report failed, or the file cannot be written).',
  input: args({
    report_id: id('the report'),
    // a string, not an enum: an unknown format is the spec's UNKNOWN_FORMAT (section 7), not INVALID_ARGUMENTS
    format: text(64, 1).describe('csv, json or html'),
    output_path: text(4096, 1).optional().describe('absolute path of the file to write (default: under .marginalia/reports/ beside the project)'),
    overwrite: z.boolean().optional().describe('replace output_path when it exists (default false)'),
  }),
  effect: 'create',
  trust: 'report',
  paths: [{ arg: 'output_path', access: 'write', code: 'EXPORT_FAILED' }],
  run: (ctx, input) => {
    const format = input.format as ReportFormat;
    if (!REPORT_FORMATS.includes(format))
      throw new ToolError('UNKNOWN_FORMAT', `Unknown report format "${input.format}"; the formats are ${REPORT_FORMATS.join(', ')}`);
    const record = requireReport(ctx.domain.repo, input.report_id);
    if (record.status !== 'completed') {
      throw new ToolError(
        'EXPORT_FAILED',
        `Report ${record.report_id} has no result to export (status ${record.status}${record.error ? `: ${record.error}` : ''})`,
      );
    }
    const target = exportTarget(ctx.project.path, record.report_id, record.type, format, input.output_path, input.overwrite ?? false);
    const text = renderReport(reportView(record, true), format);
    const tmp = `${target}.tmp-${process.pid}`;
    try {
      fs.writeFileSync(tmp, text, 'utf8');
      fs.renameSync(tmp, target);
    } catch (e) {
      try {
        fs.rmSync(tmp, { force: true });
      } catch {
        // the temporary file could not even be named (ENAMETOOLONG) or removed: the write's error is the one to report
      }
      throw new ToolError('EXPORT_FAILED', `Could not write ${target}: ${(e as Error).message}`);
    }
    return { report_id: record.report_id, report_type: record.type, format, file_path: target, bytes: Buffer.byteLength(text, 'utf8') };
  },
});
