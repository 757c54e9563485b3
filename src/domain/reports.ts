/**
 * Reports: code frequencies, code co-occurrence and coder agreement (agent-context spec, capability table:
 * generate_frequency_report, generate_cooccurrence_report, generate_coder_comparison), run as report jobs.
 *
 * A report job is a row of `reports` (migration 7) and three events: analysis.report_started, then
 * analysis.report_completed with `result_uri` `qda://reports/<id>`, or analysis.report_failed. The job runs
 * inside the call that starts it (tools run synchronously in one transaction), so by the time the caller
 * hears back the job has completed or failed, and both of its events are stored, in order, in the same
 * transaction as the row. A job that fails while computing is still written (status failed, with its error
 * code and message) and reported with analysis.report_failed; invalid arguments fail the call instead, before
 * any job exists.
 *
 * Text positions count code points; ranges are half-open `[start_pos, end_pos)`. AV segments are not part
 * of these reports.
 */
import { isToolError, ToolError, type ErrorCode } from '../core/errors';
import type { CoderComparisonResult } from './coderComparison';
import { requireCode } from './codebook';
import type { DomainContext } from './events';
import type { AttributeValue, CodedRanges, ProjectRepository, ReportFilter, ReportRecord, ReportStatus, ReportType } from './ports';
import { requireSource } from './sources';

type Ctx = DomainContext<ProjectRepository>;

/** The URI of a report's result (`qda://reports/<id>`, the spec's `app://reports/:id`). */
export function reportUri(id: number): string {
  return `qda://reports/${id}`;
}

/** A report's filters as a caller gives them (every field optional; see {@link ReportFilter}). */
export interface ReportFiltersInput {
  source_ids?: readonly number[];
  code_ids?: readonly number[];
  case_ids?: readonly number[];
  coder?: string;
  /** only segments in sources whose document attributes have these values, `{name: value}` (every pair must hold) */
  source_attributes?: Readonly<Record<string, AttributeValue>>;
}

/**
 * Checks a report's filters and returns them normalised: ids deduplicated and sorted, empty lists and a
 * blank coder dropped. `source_attributes` (`{name: value}`, names exact after NFC and trimming) is kept as
 * given and resolved into `source_ids`: the sources whose document attribute of each name has that value (a
 * number matches a number attribute of equal value, a boolean a boolean one, a string a text or date attribute
 * with exactly that text), intersected with the given `source_ids`; no matching source gives `source_ids: []`
 * (an empty report), so the stored filters record which sources a report covered.
 * Errors: SOURCE_NOT_FOUND, CODE_NOT_FOUND, CASE_NOT_FOUND (an id that does not exist).
 */
export function resolveReportFilter(ctx: Ctx, input: ReportFiltersInput | undefined): ReportFilter {
  const out: ReportFilter = {};
  const ids = (xs: readonly number[] | undefined) => (xs && xs.length > 0 ? [...new Set(xs)].sort((a, b) => a - b) : undefined);
  const sources = ids(input?.source_ids);
  if (sources) {
    for (const id of sources) requireSource(ctx, id);
    out.source_ids = sources;
  }
  const codes = ids(input?.code_ids);
  if (codes) {
    for (const id of codes) requireCode(ctx, id);
    out.code_ids = codes;
  }
  const cases = ids(input?.case_ids);
  if (cases) {
    for (const id of cases) if (!ctx.repo.getCase(id)) throw new ToolError('CASE_NOT_FOUND', `No case with case_id ${id}`);
    out.case_ids = cases;
  }
  const coder = input?.coder?.trim();
  if (coder) out.coder = coder;
  const wanted = Object.entries(input?.source_attributes ?? {}).map(([name, value]) => [name.normalize('NFC').trim(), value] as const);
  if (wanted.length > 0) {
    out.source_attributes = Object.fromEntries(wanted);
    const values = new Map<number, Map<string, AttributeValue>>();
    for (const a of ctx.repo.listSourceAttributes()) {
      let m = values.get(a.source_id);
      if (!m) values.set(a.source_id, (m = new Map()));
      m.set(a.name, a.value);
    }
    const within = out.source_ids ? new Set(out.source_ids) : null;
    out.source_ids = [...values.entries()]
      .filter(([id, m]) => (!within || within.has(id)) && wanted.every(([name, value]) => m.get(name) === value))
      .map(([id]) => id)
      .sort((a, b) => a - b);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------
// Frequency

/** One code of a frequency report. */
export interface CodeFrequency {
  code_id: number;
  name: string;
  color: string;
  category_id: number | null;
  /** coded text segments of the code within the filters */
  segment_count: number;
  /** distinct sources holding at least one of them */
  source_count: number;
  /** who coded them (segment owners), by name, each with its own segment and source counts */
  coders: { coder: string; segment_count: number; source_count: number }[];
}

/** The result of a frequency report. */
export interface FrequencyResult {
  report_type: 'frequency';
  filters: ReportFilter;
  /** segments, distinct coded sources and coders within the filters; `codes`: rows below */
  totals: { codes: number; codes_used: number; segments: number; sources: number; coders: string[] };
  /** every code of the codebook (or of `filters.code_ids`), unused ones with zero counts; most segments first, then by name */
  codes: CodeFrequency[];
}

/**
 * Code frequencies: for each code, its coded text segments within `filter`, the distinct sources they are
 * in, and the coders (segment owners) who made them. Counted in one pass over the segments' sources in
 * code, coder and source order (`reportCodeSources`).
 */
export function frequencyReport(repo: ProjectRepository, filter: ReportFilter): FrequencyResult {
  const counted = countCodeSources(repo.reportCodeSources(filter));
  const wanted = filter.code_ids ? new Set(filter.code_ids) : undefined;
  const codes: CodeFrequency[] = repo
    .listCodeLabels()
    .filter((c) => !wanted || wanted.has(c.code_id))
    .map((c) => {
      const n = counted.perCode.get(c.code_id);
      return {
        code_id: c.code_id,
        name: c.name,
        color: c.color,
        category_id: c.category_id,
        segment_count: n?.segments ?? 0,
        source_count: n?.sources ?? 0,
        coders: (n?.coders ?? []).sort((a, b) => compareText(a.coder, b.coder)),
      };
    })
    .sort((a, b) => b.segment_count - a.segment_count || compareText(a.name, b.name) || a.code_id - b.code_id);
  let segments = 0;
  for (const c of codes) segments += c.segment_count;
  return {
    report_type: 'frequency',
    filters: filter,
    totals: {
      codes: codes.length,
      codes_used: codes.filter((c) => c.segment_count > 0).length,
      segments,
      sources: counted.sources,
      coders: [...counted.coders].sort(compareText),
    },
    codes,
  };
}

/**
 * Per code: segments, distinct sources and per coder the same; and the distinct sources and the coders of
 * all of them. Within a group (one code and coder) the sources come sorted, so a group's distinct sources
 * are its changes of source; across a code's groups, and across codes, a source is counted the first time
 * it is stamped with the code's (or any) mark.
 */
function countCodeSources(rows: { groups: { code_id: number; owner: string; segments: number }[]; source_id: Int32Array }): {
  perCode: Map<number, { segments: number; sources: number; coders: CodeFrequency['coders'] }>;
  sources: number;
  coders: Set<string>;
} {
  const src = rows.source_id;
  let maxSource = 0;
  for (let k = 0; k < src.length; k++) maxSource = Math.max(maxSource, src[k] as number);
  // source ids are AUTOINCREMENT row ids, so these arrays are about as long as the project has had sources
  const codeMark = new Int32Array(maxSource + 1).fill(-1);
  const seen = new Uint8Array(maxSource + 1);
  const perCode = new Map<number, { segments: number; sources: number; coders: CodeFrequency['coders'] }>();
  const coders = new Set<string>();
  let sources = 0;
  let k = 0;
  let mark = -1;
  let currentCode = -1;
  let current = { segments: 0, sources: 0, coders: [] as CodeFrequency['coders'] };
  for (const g of rows.groups) {
    if (g.code_id !== currentCode) {
      currentCode = g.code_id;
      current = { segments: 0, sources: 0, coders: [] };
      perCode.set(g.code_id, current);
      mark++;
    }
    const end = k + g.segments;
    if (end > src.length) throw new Error('reportCodeSources: the groups count more segments than there are sources');
    let groupSources = 0;
    let previous = -1;
    for (; k < end; k++) {
      const s = src[k] as number;
      if (s === previous) continue;
      previous = s;
      groupSources++;
      if (codeMark[s] === mark) continue;
      codeMark[s] = mark;
      current.sources++;
      if (seen[s] === 0) {
        seen[s] = 1;
        sources++;
      }
    }
    current.segments += g.segments;
    current.coders.push({ coder: g.owner, segment_count: g.segments, source_count: groupSources });
    coders.add(g.owner);
  }
  if (k !== src.length) throw new Error('reportCodeSources: the groups count fewer segments than there are sources');
  return { perCode, sources, coders };
}

// ---------------------------------------------------------------------------------------------------
// Co-occurrence

/** A code on an axis of the co-occurrence matrix. */
export interface MatrixCode {
  code_id: number;
  name: string;
  color: string;
}

/** The result of a co-occurrence report. */
export interface CooccurrenceResult {
  report_type: 'cooccurrence';
  filters: ReportFilter;
  /** the axis (rows and columns alike): the codes of `filters.code_ids`, else every code with a segment within the filters; by name */
  codes: MatrixCode[];
  /**
   * `matrix[i][j]`: the number of overlapping pairs of segments, one of `codes[i]` and one of `codes[j]`, on
   * the same source (half-open ranges overlap when `a.start < b.end && b.start < a.end`; touching ranges do
   * not). Symmetric. The diagonal counts pairs of overlapping segments of the same code.
   */
  matrix: number[][];
  /** sum of the upper triangle without the diagonal: overlapping pairs of segments of two different codes */
  total_overlaps: number;
  /** sum of the diagonal: overlapping pairs of segments of the same code */
  same_code_overlaps: number;
  /** the largest off-diagonal cells, most first (ties by names), at most {@link TOP_PAIRS} */
  top_pairs: { code_a_id: number; code_a_name: string; code_b_id: number; code_b_name: string; count: number }[];
}

/** How many of the largest pairs a co-occurrence report lists beside its matrix. */
export const TOP_PAIRS = 50;

/** Above this many codes on the axis, pair counts go to a Map instead of a dense n*n array. */
const DENSE_LIMIT = 4096;

/** For each segment of `ranges`, the axis position of its code (from `index`, code_id -> position), or -1. */
function axisPositions(ranges: CodedRanges, index: Map<number, number>): Int32Array {
  let maxId = 0;
  for (const id of index.keys()) maxId = Math.max(maxId, id);
  const byId = new Int32Array(maxId + 1).fill(-1);
  for (const [id, i] of index) byId[id] = i;
  const codes = ranges.code_id;
  const pos = new Int32Array(codes.length);
  for (let k = 0; k < codes.length; k++) {
    const c = codes[k] as number;
    pos[k] = c <= maxId ? (byId[c] as number) : -1;
  }
  return pos;
}

/**
 * Counts overlapping pairs of segments per pair of codes: a sweep over each source's segments in start
 * order; segment j (starting at or after segment i) overlaps i exactly when `start_j < end_i`, so each
 * unordered pair is visited once and the work is proportional to the number of segments plus the number
 * of overlapping pairs (not to the square of the segments per source, as a self-join is). `ranges` must be
 * ordered by source_id then start_pos (as the repository returns them). `index` maps a code_id to its axis
 * position (segments of other codes are skipped); `add(i, j)` is called once per overlapping pair, i <= j.
 */
export function sweepOverlaps(ranges: CodedRanges, index: Map<number, number>, add: (i: number, j: number) => void): void {
  overlapPairs(ranges, axisPositions(ranges, index), (i, j) => {
    add(i, j);
    return true;
  });
}

/**
 * The sweep of {@link sweepOverlaps} over axis positions `pos` (one per segment of `ranges`, −1: skipped):
 * `visit(i, j)` (i <= j) for each overlapping pair; stops, returning false, when `visit` returns false.
 */
function overlapPairs(ranges: CodedRanges, pos: Int32Array, visit: (i: number, j: number) => boolean): boolean {
  const { source_id: src, start_pos: start, end_pos: end } = ranges;
  const n = src.length;
  for (let i = 0; i < n; i++) {
    const pi = pos[i] as number;
    if (pi < 0) continue;
    const s = src[i] as number;
    const e = end[i] as number;
    for (let j = i + 1; j < n && src[j] === s && (start[j] as number) < e; j++) {
      const pj = pos[j] as number;
      if (pj < 0) continue;
      if (!(pi <= pj ? visit(pi, pj) : visit(pj, pi))) return false;
    }
  }
  return true;
}

/**
 * Where row `i` of the upper triangle of an m*m matrix starts when the rows (each from column i to m - 1)
 * lie one after another: cell (i, j), i <= j, is at `rowStart[i] + j - i`.
 */
function triangleRows(m: number): Int32Array {
  const rowStart = new Int32Array(m + 1);
  for (let i = 0; i < m; i++) rowStart[i + 1] = (rowStart[i] as number) + m - i;
  return rowStart;
}

/** Counts of pairs: the narrowest array that holds them (see {@link triangleOverlaps}). */
type Counts = Uint16Array | Uint32Array | Float64Array;

/**
 * {@link sweepOverlaps} into the upper triangle of the m*m matrix (layout of {@link triangleRows}). Each overlapping pair increments a cell at random, so the smaller the array the fewer
 * the cache misses: the triangle of 2,000 codes in 16-bit counts is 4 MB, where the full square in doubles
 * was 32 MB. Returns false, leaving `counts` incomplete, as soon as a cell would exceed `max`; the caller
 * then counts again into a wider array.
 */
function triangleOverlaps(ranges: CodedRanges, pos: Int32Array, rowStart: Int32Array, counts: Counts, max: number): boolean {
  return overlapPairs(ranges, pos, (pi, pj) => {
    const k = (rowStart[pi] as number) + pj - pi;
    const v = (counts[k] as number) + 1;
    if (v > max) return false;
    counts[k] = v;
    return true;
  });
}

/** The full symmetric m*m matrix (row-major) of the upper triangle `tri` (layout of {@link triangleRows}), in `square`. */
function mirror(tri: Counts, rowStart: Int32Array, m: number, square: Counts): Counts {
  for (let i = 0; i < m; i++) {
    const base = (rowStart[i] as number) - i;
    for (let j = i; j < m; j++) {
      const v = tri[base + j] as number;
      square[i * m + j] = v;
      square[j * m + i] = v;
    }
  }
  return square;
}

/**
 * Code co-occurrence: for every pair of codes, the number of places where a segment of one overlaps a
 * segment of the other on the same source (see {@link CooccurrenceResult.matrix}). Reads the segments once,
 * ordered by source and start (`reportCodedRanges`, four integer columns), and counts with a sweep
 * ({@link sweepOverlaps}) into the upper triangle of the matrix.
 */
export function cooccurrenceReport(repo: ProjectRepository, filter: ReportFilter): CooccurrenceResult {
  const ranges = repo.reportCodedRanges(filter);
  const all = repo.listCodeLabels();
  let axisCodes: typeof all;
  if (filter.code_ids) {
    const wanted = new Set(filter.code_ids);
    axisCodes = all.filter((c) => wanted.has(c.code_id));
  } else {
    // the codes with a segment: marks by code_id (a Set of a million ids costs 20 ms more)
    let maxId = 0;
    for (const c of all) maxId = Math.max(maxId, c.code_id);
    const used = new Uint8Array(maxId + 1);
    const ids = ranges.code_id;
    for (let k = 0; k < ids.length; k++) {
      const c = ids[k] as number;
      if (c <= maxId) used[c] = 1;
    }
    axisCodes = all.filter((c) => used[c.code_id] === 1);
  }
  axisCodes.sort((a, b) => compareText(a.name, b.name) || a.code_id - b.code_id);
  const m = axisCodes.length;
  const index = new Map(axisCodes.map((c, i) => [c.code_id, i]));
  /** row i of the matrix */
  let fullRow: (i: number) => ArrayLike<number>;
  if (m <= DENSE_LIMIT) {
    const rowStart = triangleRows(m);
    const size = rowStart[m] as number;
    const pos = axisPositions(ranges, index);
    let tri: Counts = new Uint16Array(size);
    if (!triangleOverlaps(ranges, pos, rowStart, tri, 0xffff)) {
      tri = new Uint32Array(size);
      if (!triangleOverlaps(ranges, pos, rowStart, tri, 0xffffffff)) triangleOverlaps(ranges, pos, rowStart, (tri = new Float64Array(size)), Infinity);
    }
    // Mirrored once into a square of the same type, so that every row below is read in order (reading the
    // left part of a row from the triangle, a column of it, was slower).
    const square = mirror(
      tri,
      rowStart,
      m,
      tri instanceof Uint16Array ? new Uint16Array(m * m) : tri instanceof Uint32Array ? new Uint32Array(m * m) : new Float64Array(m * m),
    );
    fullRow = (i) => square.subarray(i * m, (i + 1) * m);
  } else {
    const counts = new Map<number, number>();
    sweepOverlaps(ranges, index, (i, j) => void counts.set(i * m + j, (counts.get(i * m + j) ?? 0) + 1));
    fullRow = (i) => Array.from({ length: m }, (_, j) => counts.get(i <= j ? i * m + j : j * m + i) ?? 0);
  }
  const name = (i: number) => (axisCodes[i] as MatrixCode).name;
  // the largest cells, most first, ties by the two names: a bounded insertion, since there can be millions of cells
  const ranks = (a: { i: number; j: number; count: number }, b: { i: number; j: number; count: number }) =>
    b.count - a.count || compareText(name(a.i), name(b.i)) || compareText(name(a.j), name(b.j)) || a.i - b.i || a.j - b.j;
  const top: { i: number; j: number; count: number }[] = [];
  const matrix: number[][] = [];
  let total = 0;
  let same = 0;
  for (let i = 0; i < m; i++) {
    // Each row a packed array of small integers, built by push: JSON.stringify writes those about 3x faster
    // than an array made with new Array(m) (holey) or holding doubles.
    const full = fullRow(i);
    const row: number[] = [];
    for (let j = 0; j < m; j++) row.push(full[j] as number);
    matrix.push(row);
    same += full[i] as number;
    for (let j = i + 1; j < m; j++) {
      const v = full[j] as number;
      if (v === 0) continue;
      total += v;
      if (top.length === TOP_PAIRS && v < (top[TOP_PAIRS - 1] as (typeof top)[number]).count) continue;
      const cand = { i, j, count: v };
      if (top.length === TOP_PAIRS && ranks(cand, top[TOP_PAIRS - 1] as (typeof top)[number]) >= 0) continue;
      let at = top.length;
      while (at > 0 && ranks(cand, top[at - 1] as (typeof top)[number]) < 0) at--;
      top.splice(at, 0, cand);
      if (top.length > TOP_PAIRS) top.pop();
    }
  }
  return {
    report_type: 'cooccurrence',
    filters: filter,
    codes: axisCodes.map((c) => ({ code_id: c.code_id, name: c.name, color: c.color })),
    matrix,
    total_overlaps: total,
    same_code_overlaps: same,
    top_pairs: top.map((p) => ({
      code_a_id: (axisCodes[p.i] as MatrixCode).code_id,
      code_a_name: name(p.i),
      code_b_id: (axisCodes[p.j] as MatrixCode).code_id,
      code_b_name: name(p.j),
      count: p.count,
    })),
  };
}

// ---------------------------------------------------------------------------------------------------
// Coder comparison: src/domain/coderComparison.ts (statistics in src/domain/agreement)

export { checkCoders, coderComparisonReport, CODER_COMPARISON_METHOD, COMPARISON_UNITS } from './coderComparison';
export type { AgreementMeasures, CodeAgreement, CoderComparisonResult, ComparisonOptions, ComparisonUnit, DisagreementView } from './coderComparison';

// ---------------------------------------------------------------------------------------------------
// Jobs

/** A report result of any type. */
export type ReportResult = FrequencyResult | CooccurrenceResult | CoderComparisonResult;

/** What starting a report job returns (the tools' answer). */
export interface ReportJob {
  job_id: number;
  report_id: number;
  report_type: ReportType;
  status: Exclude<ReportStatus, 'running'>;
  result_uri: string;
  /** the report; null when it failed */
  result: ReportResult | null;
  error_code: string | null;
  error: string | null;
}

/**
 * Runs a report as a job: writes the report row (running) and emits analysis.report_started (payload:
 * job_id, report_id, report_type, filters); computes it; then writes the result and emits
 * analysis.report_completed (job_id, report_id, report_type, result_uri), or, when `compute` throws, writes
 * the report as failed and emits analysis.report_failed (job_id, report_id, report_type, error_code, error:
 * the ToolError's code, else TOOL_EXECUTION_ERROR). Everything happens in the caller's transaction, so the
 * job has ended when this returns. `job_id` and `report_id` are the same number.
 */
export function runReportJob(ctx: Ctx, type: ReportType, filter: ReportFilter, params: Record<string, unknown>, compute: () => ReportResult): ReportJob {
  const id = ctx.repo.insertReport(
    { type, filters: JSON.stringify(filter), params: JSON.stringify(params) },
    { owner: ctx.actor.user, session_id: ctx.actor.session_id, now: ctx.now },
  );
  const uri = reportUri(id);
  const base = { job_id: id, report_id: id, report_type: type };
  ctx.events.emit({
    event_type: 'analysis.report_started',
    aggregate_type: 'report',
    aggregate_id: String(id),
    payload: { ...base, filters: filter, ...params },
  });
  try {
    const result = compute();
    ctx.repo.finishReport(id, { status: 'completed', result: JSON.stringify(result), error_code: null, error: null, completed_at: ctx.now });
    ctx.events.emit({ event_type: 'analysis.report_completed', aggregate_type: 'report', aggregate_id: String(id), payload: { ...base, result_uri: uri } });
    return { ...base, status: 'completed', result_uri: uri, result, error_code: null, error: null };
  } catch (e) {
    const code: ErrorCode = isToolError(e) ? e.code : 'TOOL_EXECUTION_ERROR';
    const message = e instanceof Error ? e.message : String(e);
    ctx.repo.finishReport(id, { status: 'failed', result: null, error_code: code, error: message, completed_at: ctx.now });
    ctx.events.emit({
      event_type: 'analysis.report_failed',
      aggregate_type: 'report',
      aggregate_id: String(id),
      payload: { ...base, error_code: code, error: message },
    });
    return { ...base, status: 'failed', result_uri: uri, result: null, error_code: code, error: message };
  }
}

/** A stored report as the tools return it (JSON fields parsed). */
export interface ReportView {
  report_id: number;
  job_id: number;
  report_type: ReportType;
  status: ReportStatus;
  filters: ReportFilter;
  params: Record<string, unknown>;
  result_uri: string;
  owner: string;
  session_id: string | null;
  created_at: string;
  completed_at: string | null;
  error_code: string | null;
  error: string | null;
  /** the report; absent in lists, null unless completed */
  result?: ReportResult | null;
}

/** A report row as a {@link ReportView}; `withResult` parses and includes the result. */
export function reportView(r: ReportRecord, withResult: boolean): ReportView {
  const view: ReportView = {
    report_id: r.report_id,
    job_id: r.report_id,
    report_type: r.type,
    status: r.status,
    filters: JSON.parse(r.filters) as ReportFilter,
    params: JSON.parse(r.params) as Record<string, unknown>,
    result_uri: reportUri(r.report_id),
    owner: r.owner,
    session_id: r.session_id,
    created_at: r.created_at,
    completed_at: r.completed_at,
    error_code: r.error_code,
    error: r.error,
  };
  if (withResult) view.result = r.result === null ? null : (JSON.parse(r.result) as ReportResult);
  return view;
}

/** The report with id `id`. Errors: REPORT_NOT_FOUND. */
export function requireReport(repo: ProjectRepository, id: number): ReportRecord {
  const r = repo.getReport(id);
  if (!r) throw new ToolError('REPORT_NOT_FOUND', `No report with report_id ${id}`);
  return r;
}

/** Case-insensitive, then exact, comparison of names (stable order for reports). */
function compareText(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  return x < y ? -1 : x > y ? 1 : a < b ? -1 : a > b ? 1 : 0;
}
