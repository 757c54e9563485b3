import type { AttributeValue, Stamp } from './common';

/** The three report types (agent-context spec, capability table: generate_*_report, generate_coder_comparison). */
export type ReportType = 'frequency' | 'cooccurrence' | 'coder_comparison';
/** A report job's state: running -> completed | failed (see migration 7). */
export type ReportStatus = 'running' | 'completed' | 'failed';

/**
 * Which coded text segments a report looks at. Every given field narrows further; empty or absent fields
 * do not restrict. `case_ids`: segments that belong to one of the cases as `listCaseCodings` defines it
 * (the case's linked sources whole, and segments overlapping one of its ranges). `coder`: the segments'
 * owner.
 */
export interface ReportFilter {
  source_ids?: readonly number[];
  code_ids?: readonly number[];
  case_ids?: readonly number[];
  coder?: string;
  /**
   * The document attributes a caller filtered by (`{name: value}`), kept as given for the record; the
   * repository does not read it: `resolveReportFilter` (src/domain/reports.ts) turns it into `source_ids`.
   */
  source_attributes?: Readonly<Record<string, AttributeValue>>;
}

/**
 * Text segments in column arrays (one entry per segment), ordered by source_id, then start_pos. Positions in
 * code points, half-open. `owner` indexes into `owners` (the coders' names; -1: another coder, or none asked for).
 */
export interface CodedRanges {
  source_id: Int32Array;
  code_id: Int32Array;
  start_pos: Int32Array;
  end_pos: Int32Array;
  owner: Int32Array;
  owners: string[];
}

/** A stored report (a row of `reports`): `filters`, `params` and `result` are JSON text. */
export interface ReportRecord {
  report_id: number;
  type: ReportType;
  status: ReportStatus;
  filters: string;
  params: string;
  /** null while running and when failed */
  result: string | null;
  error_code: string | null;
  error: string | null;
  owner: string;
  session_id: string | null;
  created_at: string;
  completed_at: string | null;
}

/**
 * Report jobs (table `reports`: a job runs, then completes with its result JSON or fails) and the column reads
 * the frequency, co-occurrence and coder comparison reports compute from (src/domain/reports.ts).
 */
export interface ReportRepository {
  /** Stores a new report job (status running) and returns its id. */
  insertReport(r: { type: ReportType; filters: string; params: string }, stamp: Stamp): number;
  /** Records the end of a running report: completed with its result JSON, or failed with an error. */
  finishReport(
    id: number,
    end: { status: 'completed' | 'failed'; result: string | null; error_code: string | null; error: string | null; completed_at: string },
  ): void;
  /** One stored report with its result; undefined for an unknown id. */
  getReport(id: number): ReportRecord | undefined;
  /** Reports newest first (`result` left null, it can be large), optionally of one type or status; at most `limit` after `offset`, with the total. */
  listReports(q: { type?: ReportType; status?: ReportStatus; limit: number; offset: number }): { total: number; reports: ReportRecord[] };
  /** The text segments within `filter` as column arrays (see {@link CodedRanges}); `owners` restricts them to those coders. */
  reportCodedRanges(filter: ReportFilter, owners?: readonly string[]): CodedRanges;
  /**
   * The text segments within `filter` ordered by code_id, owner (binary order) and source_id: `groups`, one
   * per code and coder in that order with its number of segments, and `source_id`, the source of every
   * segment in that order (so the first `groups[0].segments` are the first group's, and so on).
   */
  reportCodeSources(filter: ReportFilter): { groups: { code_id: number; owner: string; segments: number }[]; source_id: Int32Array };
}
