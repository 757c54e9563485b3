import type { CodedRanges, ReportFilter, ReportRecord, ReportRepository, ReportStatus, ReportType, Stamp } from '../../domain/ports';
import type { ProjectStore } from '../projectStore';
import type { SqlParam } from './shared';

const REPORT_COLS = 'id AS report_id, type, status, filters, params, error_code, error, owner, session_id, created_at, completed_at';

/** {@link ReportRepository} over a {@link ProjectStore}: table `reports`, and the segment reads reports compute from. */
export class SqlReportRepository implements ReportRepository {
  constructor(private readonly db: ProjectStore) {}

  insertReport(r: { type: ReportType; filters: string; params: string }, st: Stamp): number {
    return this.db.run("INSERT INTO reports(type, filters, params, status, owner, session_id, created_at) VALUES (?,?,?,'running',?,?,?)", [
      r.type,
      r.filters,
      r.params,
      st.owner,
      st.session_id,
      st.now,
    ]).lastId;
  }
  finishReport(
    id: number,
    e: { status: 'completed' | 'failed'; result: string | null; error_code: string | null; error: string | null; completed_at: string },
  ): void {
    // The result (8 MB of JSON for a co-occurrence matrix of 2,000 codes) goes in as its UTF-8 bytes, cast
    // back to text, and is journaled as the string (see ProjectStore.run).
    const values = [e.status, e.error_code, e.error, e.completed_at, id];
    this.db.run(
      'UPDATE reports SET result = CAST(? AS TEXT), status = ?, error_code = ?, error = ?, completed_at = ? WHERE id = ?',
      [e.result === null ? null : Buffer.from(e.result, 'utf8'), ...values],
      [e.result, ...values],
    );
  }
  getReport(id: number): ReportRecord | undefined {
    return this.db.get<ReportRecord>(`SELECT ${REPORT_COLS}, result FROM reports WHERE id = ?`, [id]);
  }
  listReports(q: { type?: ReportType; status?: ReportStatus; limit: number; offset: number }): { total: number; reports: ReportRecord[] } {
    const where = 'WHERE (? IS NULL OR type = ?) AND (? IS NULL OR status = ?)';
    const params = [q.type ?? null, q.type ?? null, q.status ?? null, q.status ?? null];
    const total = Number(this.db.get<{ n: number }>(`SELECT count(*) AS n FROM reports ${where}`, params)?.n ?? 0);
    const reports = this.db.all<ReportRecord>(`SELECT ${REPORT_COLS}, NULL AS result FROM reports ${where} ORDER BY id DESC LIMIT ? OFFSET ?`, [
      ...params,
      q.limit,
      q.offset,
    ]);
    return { total, reports };
  }
  reportCodedRanges(filter: ReportFilter, owners?: readonly string[]): CodedRanges {
    // Only the needed columns, stepped into typed arrays (ProjectStore.intColumns); segments_source covers
    // them all, so no table row (with its text) is read, and without filters its scan is already in the
    // ORDER BY's order (no sort). The owners, when asked for, come as their index in `owners` (-1: another).
    const f = reportSegmentFilter(filter, owners);
    // no owners (a project nobody has coded in yet): a constant, since CASE needs at least one WHEN
    const ownerCol = owners ? (owners.length > 0 ? `, CASE g.owner ${owners.map(() => 'WHEN ? THEN ?').join(' ')} ELSE -1 END` : ', -1') : '';
    const ownerParams: SqlParam[] = owners ? owners.flatMap((o, i) => [o, i]) : [];
    const cols = this.db.intColumns(
      `SELECT g.source_id, g.code_id, g.start_pos, g.end_pos${ownerCol} FROM segments g ${f.where} ORDER BY g.source_id, g.start_pos`,
      [...ownerParams, ...f.params],
    );
    const [source_id, code_id, start_pos, end_pos] = cols as [Int32Array, Int32Array, Int32Array, Int32Array];
    const owner = owners ? (cols[4] as Int32Array) : new Int32Array(source_id.length).fill(-1);
    return { source_id, code_id, start_pos, end_pos, owner, owners: [...(owners ?? [])] };
  }
  reportCodeSources(filter: ReportFilter): { groups: { code_id: number; owner: string; segments: number }[]; source_id: Int32Array } {
    // Both scan the covering index segments_code (code_id, owner, source_id) in its order, without a sort.
    // Counting distinct sources in JavaScript from these is about twice as fast as count(DISTINCT ...) per
    // code and per code and coder in SQL, which fills a temporary b-tree per group (bench/reports.ts).
    const f = reportSegmentFilter(filter);
    const groups = this.db.all<{ code_id: number; owner: string; segments: number }>(
      `SELECT g.code_id, g.owner, count(*) AS segments FROM segments g ${f.where} GROUP BY g.code_id, g.owner ORDER BY g.code_id, g.owner`,
      f.params,
    );
    const [source_id] = this.db.intColumns(`SELECT g.source_id FROM segments g ${f.where} ORDER BY g.code_id, g.owner, g.source_id`, f.params) as [Int32Array];
    return { groups, source_id };
  }
}

/**
 * The WHERE clause (alias `g`) of the segments within a report filter, and its parameters. Only the given
 * fields become conditions (an unused `? IS NULL OR ...` would still cost a test per row on a million rows).
 * case_ids: the case's linked sources, or overlapping one of its ranges (as listCaseCodings).
 */
function reportSegmentFilter(f: ReportFilter, owners?: readonly string[]): { where: string; params: SqlParam[] } {
  const conds: string[] = [];
  const params: SqlParam[] = [];
  if (f.source_ids) {
    conds.push('g.source_id IN (SELECT value FROM json_each(?))');
    params.push(JSON.stringify(f.source_ids));
  }
  if (f.code_ids) {
    conds.push('g.code_id IN (SELECT value FROM json_each(?))');
    params.push(JSON.stringify(f.code_ids));
  }
  if (f.coder !== undefined) {
    conds.push('g.owner = ?');
    params.push(f.coder);
  }
  if (owners) {
    conds.push('g.owner IN (SELECT value FROM json_each(?))');
    params.push(JSON.stringify(owners));
  }
  if (f.case_ids) {
    const ids = JSON.stringify(f.case_ids);
    conds.push(`(g.source_id IN (SELECT source_id FROM case_sources WHERE case_id IN (SELECT value FROM json_each(?)))
      OR EXISTS (SELECT 1 FROM case_segments k WHERE k.case_id IN (SELECT value FROM json_each(?)) AND k.source_id = g.source_id AND k.start_pos < g.end_pos AND k.end_pos > g.start_pos))`);
    params.push(ids, ids);
  }
  return { where: conds.length > 0 ? `WHERE ${conds.join(' AND ')}` : '', params };
}
