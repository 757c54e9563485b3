import * as fs from 'node:fs';
import * as path from 'node:path';
import { ToolError } from '../core/errors';
import { AGENT_PATH_RULE_SHORT } from '../core/pathPolicy';
import { planAnalyticsJson } from '../exchange/importers/analytics';
import { applyImportPlan } from '../exchange/importers/applyPlan';
import { defineTool } from './defineTool';
import { readingProgress, writingProgress } from './importProgress';
import { args, text } from './schemas';

/**
 * import_analytics (HTTP spec, section 4, Exchange): imports a raw analytics-event export (GA4, newline-
 * delimited JSON in BigQuery's row shape) as cases, one per user_pseudo_id. `prepare` streams the file and
 * aggregates it (no write, bounded memory); `run` creates or updates the cases in one transaction.
 */
export const importAnalyticsTool = defineTool({
  name: 'import_analytics',
  group: 'exchange',
  title: 'Import Analytics',
  description:
    'Import a raw analytics-event export (GA4 / Firebase BigQuery export: newline-delimited JSON, one event per line with event_name, ' +
    'event_timestamp in microseconds, user_pseudo_id and event_params) as cases. The file is streamed, so large exports are fine. ' +
    'Events are aggregated per user_pseudo_id into one case named by it, with attributes event_count, session_count (distinct ga_session_id), ' +
    'first_event and last_event (ISO 8601 datetimes), top_event (most frequent event besides session_start, first_visit, first_open, user_engagement) ' +
    'and event_<name>_count for each event name. An existing case of the same name is updated (these attributes overwritten, others kept). ' +
    'Lines that are not JSON objects or lack user_pseudo_id or event_name are skipped and counted. All or nothing. ' +
    AGENT_PATH_RULE_SHORT +
    ' ' +
    'Returns {imported: true, source_path, profiles, events, lines, cases_created, cases_updated, attributes_set, skipped, warnings}. ' +
    'Errors: ANALYTICS_NOT_IMPORTED/FILE_NOT_FOUND (relative path, no such file, unreadable), ANALYTICS_NOT_IMPORTED/NO_PROFILES (no line with a user_pseudo_id and an event_name), ' +
    'IMPORT_FAILED (a path outside the folders an agent may use, or the cases could not be written; nothing was).',
  input: args({ source_path: text(4096, 1).describe('absolute path of the newline-delimited JSON export (.json, .ndjson, .jsonl)') }),
  effect: 'bulk',
  trust: 'bulk',
  paths: [{ arg: 'source_path', access: 'read', code: 'IMPORT_FAILED', missing: 'ANALYTICS_NOT_IMPORTED/FILE_NOT_FOUND' }],
  prepare: async (input, pctx) => {
    if (!path.isAbsolute(input.source_path))
      throw new ToolError('ANALYTICS_NOT_IMPORTED/FILE_NOT_FOUND', `source_path must be an absolute path (got "${input.source_path}")`);
    let size: number | null = null;
    try {
      size = fs.statSync(input.source_path).size;
    } catch {
      // planAnalyticsJson names the problem (ANALYTICS_NOT_IMPORTED/FILE_NOT_FOUND)
    }
    const reading = readingProgress(pctx, 'analytics_json', input.source_path, size);
    reading.start();
    const plan = await planAnalyticsJson(input.source_path, { onProgress: reading.onProgress });
    reading.end();
    return plan;
  },
  run: (ctx, input, plan) => {
    const report = applyImportPlan(ctx.domain, plan, writingProgress(ctx, 'analytics_json'));
    return {
      imported: true as const,
      source_path: input.source_path,
      profiles: plan.analytics.profiles,
      events: plan.analytics.events,
      lines: plan.analytics.lines,
      cases_created: report.created.cases,
      cases_updated: report.reused.cases,
      attributes_set: report.attributes_set,
      skipped: report.skipped,
      warnings: report.warnings,
    };
  },
});
