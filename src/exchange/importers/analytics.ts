import * as fs from 'node:fs';
import * as readline from 'node:readline';
import { ToolError } from '../../core/errors';
import { MAX_ATTRIBUTE_NAME, MAX_CASE_NAME } from '../../domain/cases';
import { checkImportFile, emptyPlan, fitName, skip, warn, type Importer, type ImportOptions, type ImportPlan, type PlannedAttribute } from './plan';

/**
 * Analytics-event import (`import_analytics`, and `import_data` with format `analytics_json`, which delegates
 * here): a raw GA4 export in newline-delimited JSON, one event per line, in the row shape of Google's
 * "[GA4] BigQuery Export schema" (see shared/corpus/ga4/README.md and shared/notes/corpus.md): `event_name`,
 * `event_timestamp` (microseconds since the epoch; INT64 values arrive as strings), `user_pseudo_id`, and
 * `event_params: [{key, value: {string_value, int_value, float_value, double_value}}]`.
 *
 * The file is streamed line by line (node:readline over a file stream), so memory grows with the number of
 * users, never with the size of the file. Per `user_pseudo_id` it aggregates a profile, which becomes a case
 * named by the id (an existing case of that name is updated: these attributes overwritten, others kept):
 * - `event_count` (number): events of the user;
 * - `session_count` (number): distinct `ga_session_id` values of the user's `event_params` (GA4 identifies a
 *   session by user_pseudo_id + ga_session_id; events without one belong to no session);
 * - `first_event`, `last_event` (date): the earliest and latest `event_timestamp`, as ISO 8601 UTC datetimes
 *   with milliseconds (microseconds are truncated);
 * - `top_event` (text): the user's most frequent event, leaving out GA4's automatic `session_start`,
 *   `first_visit`, `first_open` and `user_engagement` unless the user has nothing else (QualCoder-v2's
 *   aggregation template does the same); ties go to the alphabetically first name;
 * - `event_<name>_count` (number): one count per event name (characters other than letters, digits and `_`
 *   become `_`).
 * Lines that are blank are ignored; lines that are not a JSON object, or lack `user_pseudo_id` or
 * `event_name`, are skipped and counted (with the first few line numbers as warnings).
 *
 * Errors: ANALYTICS_NOT_IMPORTED/FILE_NOT_FOUND (no readable file at an absolute path),
 * ANALYTICS_NOT_IMPORTED/NO_PROFILES (not one line with a user_pseudo_id and an event_name).
 */
export const analyticsJsonImporter: Importer = {
  format: 'analytics_json',
  extensions: ['.json', '.ndjson', '.jsonl'],
  description: 'raw GA4 analytics export (newline-delimited JSON, BigQuery row shape), aggregated per user_pseudo_id into cases; the same as import_analytics',
  plan: (filePath, options) => planAnalyticsJson(filePath, options),
};

/** GA4's automatic events, left out of `top_event` when a user has any other event. */
export const AUTOMATIC_EVENTS: ReadonlySet<string> = new Set(['session_start', 'first_visit', 'first_open', 'user_engagement']);

/** One user's aggregate while a file is read. */
export interface AnalyticsProfile {
  user_pseudo_id: string;
  event_count: number;
  /** distinct ga_session_id values */
  sessions: Set<string>;
  /** earliest and latest event_timestamp, in microseconds; NaN when no event had a valid one */
  first_us: number;
  last_us: number;
  /** events per event_name */
  counts: Map<string, number>;
}

/** What reading an export found. */
export interface AnalyticsReadResult {
  /** profiles by user_pseudo_id, in order of first appearance */
  profiles: Map<string, AnalyticsProfile>;
  lines: number;
  events: number;
  bytes: number;
  skipped: { invalid_json_lines: number; lines_without_user_pseudo_id: number; lines_without_event_name: number };
  /** line numbers (1-based) of the first skipped lines */
  first_skipped_lines: number[];
}

/** How often (bytes) reading reports progress. */
const PROGRESS_EVERY = 16 * 1024 * 1024;

/**
 * Streams a GA4 NDJSON export and aggregates it per `user_pseudo_id` (see {@link analyticsJsonImporter}).
 * Errors: ANALYTICS_NOT_IMPORTED/FILE_NOT_FOUND.
 */
export async function readAnalyticsExport(filePath: string, onProgress?: ImportOptions['onProgress']): Promise<AnalyticsReadResult> {
  const size = checkImportFile(filePath, 'ANALYTICS_NOT_IMPORTED/FILE_NOT_FOUND');
  const result: AnalyticsReadResult = {
    profiles: new Map(),
    lines: 0,
    events: 0,
    bytes: size,
    skipped: { invalid_json_lines: 0, lines_without_user_pseudo_id: 0, lines_without_event_name: 0 },
    first_skipped_lines: [],
  };
  const skipLine = (reason: keyof AnalyticsReadResult['skipped'], line: number) => {
    result.skipped[reason]++;
    if (result.first_skipped_lines.length < 5) result.first_skipped_lines.push(line);
  };
  const onLine = (raw: string) => {
    const n = ++result.lines;
    const line = raw.trim();
    if (line === '') return;
    let row: unknown;
    try {
      row = JSON.parse(line);
    } catch {
      skipLine('invalid_json_lines', n);
      return;
    }
    if (row === null || typeof row !== 'object' || Array.isArray(row)) {
      skipLine('invalid_json_lines', n);
      return;
    }
    const r = row as { user_pseudo_id?: unknown; event_name?: unknown; event_timestamp?: unknown; event_params?: unknown };
    const user = typeof r.user_pseudo_id === 'string' ? r.user_pseudo_id.trim() : typeof r.user_pseudo_id === 'number' ? String(r.user_pseudo_id) : '';
    if (user === '') {
      skipLine('lines_without_user_pseudo_id', n);
      return;
    }
    const name = typeof r.event_name === 'string' ? r.event_name.trim() : '';
    if (name === '') {
      skipLine('lines_without_event_name', n);
      return;
    }
    let p = result.profiles.get(user);
    if (!p) result.profiles.set(user, (p = { user_pseudo_id: user, event_count: 0, sessions: new Set(), first_us: NaN, last_us: NaN, counts: new Map() }));
    p.event_count++;
    result.events++;
    p.counts.set(name, (p.counts.get(name) ?? 0) + 1);
    const ts = Number(r.event_timestamp);
    if (r.event_timestamp !== null && r.event_timestamp !== '' && Number.isFinite(ts)) {
      if (!(ts >= p.first_us)) p.first_us = ts;
      if (!(ts <= p.last_us)) p.last_us = ts;
    }
    const session = sessionIdOf(r.event_params);
    if (session !== null) p.sessions.add(session);
  };
  // Lines are handled synchronously as readline emits them (no async iterator queue), over 64 KiB reads,
  // so at most one chunk of text and one parsed row are alive at a time.
  const input = fs.createReadStream(filePath, { highWaterMark: 64 * 1024 });
  const lines = readline.createInterface({ input, crlfDelay: Infinity });
  let nextReport = PROGRESS_EVERY;
  await new Promise<void>((resolve, reject) => {
    input.on('error', (e) => reject(new ToolError('ANALYTICS_NOT_IMPORTED/FILE_NOT_FOUND', `${filePath} cannot be read: ${e.message}`)));
    lines.on('line', (raw) => {
      onLine(raw);
      if (onProgress && input.bytesRead >= nextReport) {
        nextReport = input.bytesRead + PROGRESS_EVERY;
        onProgress({ phase: 'read', done: input.bytesRead, total: size, unit: 'bytes' });
      }
    });
    lines.on('close', () => resolve());
  }).finally(() => {
    lines.close();
    input.destroy();
  });
  onProgress?.({ phase: 'read', done: size, total: size, unit: 'bytes' });
  return result;
}

/** The `ga_session_id` of an event's `event_params` (int, string, or float value), or null. */
function sessionIdOf(params: unknown): string | null {
  if (!Array.isArray(params)) return null;
  for (const p of params) {
    if (!p || typeof p !== 'object' || (p as { key?: unknown }).key !== 'ga_session_id') continue;
    const v = (p as { value?: Record<string, unknown> | null }).value;
    if (!v || typeof v !== 'object') return null;
    for (const k of ['int_value', 'string_value', 'double_value', 'float_value']) {
      const x = v[k];
      if (x !== null && x !== undefined && x !== '') return String(x);
    }
    return null;
  }
  return null;
}

/** The attribute name of the count of event `name`: `event_<name>_count`, other characters than [A-Za-z0-9_] as `_`. */
export function eventCountAttribute(name: string): string {
  return fitName(`event_${name.replace(/[^A-Za-z0-9_]/g, '_')}_count`, MAX_ATTRIBUTE_NAME, 'event_count_unnamed');
}

/** The top event of a profile's counts (see {@link analyticsJsonImporter}). */
export function topEvent(counts: ReadonlyMap<string, number>): string {
  const rank = (onlyManual: boolean) => {
    let best: string | null = null;
    let most = -1;
    for (const [name, n] of counts) {
      if (onlyManual && AUTOMATIC_EVENTS.has(name)) continue;
      if (n > most || (n === most && best !== null && name < best)) [best, most] = [name, n];
    }
    return best;
  };
  return rank(true) ?? rank(false) ?? '';
}

/** The case attributes of a profile, in a fixed order (the five summary attributes, then counts by event name). */
export function profileAttributes(p: AnalyticsProfile): PlannedAttribute[] {
  const attrs: PlannedAttribute[] = [
    { name: 'event_count', type: 'number', value: p.event_count },
    { name: 'session_count', type: 'number', value: p.sessions.size },
  ];
  if (Number.isFinite(p.first_us)) attrs.push({ name: 'first_event', type: 'date', value: new Date(Math.floor(p.first_us / 1000)).toISOString() });
  if (Number.isFinite(p.last_us)) attrs.push({ name: 'last_event', type: 'date', value: new Date(Math.floor(p.last_us / 1000)).toISOString() });
  attrs.push({ name: 'top_event', type: 'text', value: topEvent(p.counts) });
  for (const name of [...p.counts.keys()].sort()) attrs.push({ name: eventCountAttribute(name), type: 'number', value: p.counts.get(name) as number });
  return attrs;
}

/**
 * Reads a GA4 NDJSON export into an import plan of cases (one per user). Errors:
 * ANALYTICS_NOT_IMPORTED/FILE_NOT_FOUND, ANALYTICS_NOT_IMPORTED/NO_PROFILES.
 */
export async function planAnalyticsJson(
  filePath: string,
  options: ImportOptions = {},
): Promise<ImportPlan & { analytics: Omit<AnalyticsReadResult, 'profiles'> & { profiles: number } }> {
  const read = await readAnalyticsExport(filePath, options.onProgress);
  if (read.profiles.size === 0) {
    const s = read.skipped;
    throw new ToolError(
      'ANALYTICS_NOT_IMPORTED/NO_PROFILES',
      `No valid user profiles in ${filePath}: ${read.lines} line(s) read, none with a user_pseudo_id and an event_name ` +
        `(${s.invalid_json_lines} not JSON objects, ${s.lines_without_user_pseudo_id} without user_pseudo_id, ${s.lines_without_event_name} without event_name). ` +
        'import_analytics expects newline-delimited JSON, one GA4 event per line (BigQuery export rows).',
      { lines: read.lines, ...s, first_skipped_lines: read.first_skipped_lines },
    );
  }
  const plan = emptyPlan('analytics_json', filePath);
  for (const [reason, n] of Object.entries(read.skipped)) skip(plan, reason, n);
  if (read.first_skipped_lines.length > 0) warn(plan, `Skipped lines include ${read.first_skipped_lines.join(', ')}`);
  let tooLong = 0;
  for (const p of read.profiles.values()) {
    const name = fitName(p.user_pseudo_id, MAX_CASE_NAME, '');
    if (name !== p.user_pseudo_id) tooLong++;
    plan.cases.push({ name, memo: null, sources: [], ranges: [], attributes: profileAttributes(p) });
  }
  if (tooLong > 0) warn(plan, `${tooLong} user_pseudo_id value(s) were cleaned to be case names (control characters or over ${MAX_CASE_NAME} characters)`);
  const { profiles, ...rest } = read;
  return Object.assign(plan, { analytics: { ...rest, profiles: profiles.size } });
}
