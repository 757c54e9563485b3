/**
 * Report exports (export_report): a stored report (src/domain/reports.ts) as CSV, JSON or a standalone HTML
 * page. Pure functions from the report to text; the tool writes the file.
 *
 * - CSV: RFC 4180 (comma separated, CRLF line ends, fields with a comma, quote or line break quoted, quotes
 *   doubled), one header row per table (the coder comparison has several, one after another). Text cells that a spreadsheet would read as a formula (starting with `=`, `+`,
 *   `-`, `@`, tab or carriage return) get a leading apostrophe (OWASP, "CSV Injection").
 * - JSON: the report as get_report returns it, indented.
 * - HTML: one self-contained page, no scripts (a Content-Security-Policy meta forbids them), every text
 *   escaped (`& < > " '`), so a code named `<script>` shows as text.
 */
import { countOf } from '../core/plural';
import type { Measure } from '../domain/agreement/comparison';
import type { AgreementMeasures, TwoCoderTable } from '../domain/coderComparison';
import type { CoderComparisonResult, CooccurrenceResult, FrequencyResult, ReportView } from '../domain/reports';

/** The export formats and their file extensions. */
export const REPORT_FORMATS = ['csv', 'json', 'html'] as const;
/** One of {@link REPORT_FORMATS}. */
export type ReportFormat = (typeof REPORT_FORMATS)[number];

/** Renders a completed report (`view.result` set) in `format`. Throws a plain Error when it has no result. */
export function renderReport(view: ReportView, format: ReportFormat): string {
  const result = view.result;
  if (!result) throw new Error(`report ${view.report_id} has no result (status ${view.status})`);
  if (format === 'json') return `${JSON.stringify(view, null, 2)}\n`;
  const tables = tablesOf(result);
  return format === 'csv' ? toCsv(tables) : toHtml(view, tables);
}

/** A titled table of cells (strings are text, numbers are numbers, null is empty). */
interface Table {
  title: string;
  header: string[];
  rows: (string | number | null)[][];
}

function tablesOf(result: FrequencyResult | CooccurrenceResult | CoderComparisonResult): Table[] {
  switch (result.report_type) {
    case 'frequency':
      return [
        {
          title: `Code frequencies: ${result.totals.segments} segments in ${result.totals.sources} sources, ${result.totals.codes_used} of ${result.totals.codes} codes used`,
          header: ['code_id', 'code', 'segments', 'sources', 'coders'],
          rows: result.codes.map((c) => [
            c.code_id,
            c.name,
            c.segment_count,
            c.source_count,
            c.coders.map((k) => `${k.coder} (${k.segment_count})`).join('; '),
          ]),
        },
      ];
    case 'cooccurrence':
      return [
        {
          title: `Code co-occurrence: overlapping segments of two codes on the same source (${countOf(result.total_overlaps, 'pair')} of different codes, ${result.same_code_overlaps} of the same code)`,
          header: ['code', ...result.codes.map((c) => c.name)],
          rows: result.codes.map((c, i) => [c.name, ...(result.matrix[i] ?? [])]),
        },
      ];
    case 'coder_comparison':
      return comparisonTables(result);
  }
}

/**
 * The coder comparison's tables: with two coders first the 2x2 table per code (as before multi-coder
 * agreement), then every measure per code with its 95% interval, then the disagreements with their text.
 */
function comparisonTables(result: CoderComparisonResult): Table[] {
  const fixed = (v: number | null | undefined, digits: number) => (v === null || v === undefined ? null : Number(v.toFixed(digits)));
  const tables: Table[] = [];
  const unitName = result.unit ?? 'character';
  if (result.coders.length === 2) {
    const [a, b] = result.coders as [string, string];
    const row = (label: string, id: number | null, t: Partial<TwoCoderTable>) => [
      id,
      label,
      t.both ?? 0,
      t.only_a ?? 0,
      t.only_b ?? 0,
      t.neither ?? 0,
      fixed(t.percent_agreement, 2),
      fixed(t.kappa, 4),
    ];
    const rows = result.codes.map((c) => row(c.name, c.code_id, c));
    if (result.overall) rows.push(row('(all codes)', null, result.overall));
    tables.push({
      title: `Coder comparison of ${a} and ${b}: ${result.total_characters} characters of ${result.sources.length} sources, per code (unit: ${unitName})`,
      header: ['code_id', 'code', 'both', `only ${a}`, `only ${b}`, 'neither', 'percent_agreement', 'kappa'],
      rows,
    });
  }
  const measureRows: (string | number | null)[][] = [];
  const add = (id: number | null, label: string, m: AgreementMeasures | undefined) => {
    if (!m) return;
    const one = (name: string, coders: string, x: Measure) =>
      measureRows.push([id, label, name, coders, m.units, fixed(x.value, 4), fixed(x.ci_low, 4), fixed(x.ci_high, 4)]);
    one('percent_agreement', 'all', m.percent_agreement);
    for (const k of m.cohen_kappa) one('cohen_kappa', k.coders.join(' & '), k);
    one('fleiss_kappa', 'all', m.fleiss_kappa);
    one('brennan_prediger', 'all', m.brennan_prediger);
    one('gwet_ac1', 'all', m.gwet_ac1);
    one('krippendorff_alpha', 'all', m.krippendorff_alpha);
    one('unitizing_alpha', 'all', m.unitizing_alpha);
  };
  for (const c of result.codes) add(c.code_id, c.name, c.measures);
  if (result.overall) add(null, '(all codes)', result.overall.measures);
  tables.push({
    title: `Agreement of ${result.coders.join(', ')} per code (unit: ${unitName}; 95% percentile bootstrap intervals, ${result.bootstrap?.draws ?? 0} draws, seed ${result.bootstrap?.seed ?? ''})`,
    header: ['code_id', 'code', 'measure', 'coders', 'units', 'value', 'ci_low', 'ci_high'],
    rows: measureRows,
  });
  tables.push({
    title: `Disagreements (at most ${result.max_disagreements_per_code ?? 0} per code)`,
    header: ['code', 'source', 'start_pos', 'end_pos', 'coded_by', 'not_coded_by', 'text'],
    rows: (result.disagreements ?? []).map((d) => [d.code, d.source, d.start_pos, d.end_pos, d.coded_by.join('; '), d.not_coded_by.join('; '), d.text]),
  });
  const rate = (v: number | null) => fixed(v, 4);
  tables.push({
    title: 'Coding suggestions per suggesting coder (agent) and code: accepted unchanged, edited after approval, rejected, pending; rates of the decided',
    header: ['coder', 'code_id', 'code', 'suggested', 'accepted', 'edited', 'rejected', 'pending', 'acceptance_rate', 'edit_rate', 'rejection_rate'],
    rows: (result.suggestions?.by_code ?? []).map((x) => [
      x.coder,
      x.code_id,
      x.code,
      x.suggested,
      x.accepted,
      x.edited,
      x.rejected,
      x.pending,
      rate(x.acceptance_rate),
      rate(x.edit_rate),
      rate(x.rejection_rate),
    ]),
  });
  return tables;
}

/** A CSV field per RFC 4180, with spreadsheet formulas neutralised. */
export function csvField(v: string | number | null): string {
  if (v === null) return '';
  if (typeof v === 'number') return String(v);
  const text = /^[=+\-@\t\r]/.test(v) ? `'${v}` : v;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

function toCsv(tables: Table[]): string {
  const lines: string[] = [];
  for (const t of tables) {
    lines.push(t.header.map(csvField).join(','));
    for (const r of t.rows) lines.push(r.map(csvField).join(','));
  }
  return `${lines.join('\r\n')}\r\n`;
}

/** `text` with the five HTML-significant characters escaped. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);
}

const TITLES = { frequency: 'Code frequencies', cooccurrence: 'Code co-occurrence', coder_comparison: 'Coder comparison' } as const;

function toHtml(view: ReportView, tables: Table[]): string {
  const cell = (v: string | number | null, tag: 'td' | 'th') =>
    `<${tag}${typeof v === 'number' ? ' class="n"' : ''}>${v === null ? '' : escapeHtml(String(v))}</${tag}>`;
  const meta = [
    ['report', `${view.report_id} (${view.report_type})`],
    ['created', `${view.created_at} by ${view.owner}`],
    ['filters', JSON.stringify(view.filters)],
    ...(Object.keys(view.params).length > 0 ? [['parameters', JSON.stringify(view.params)]] : []),
    ...(view.result?.report_type === 'coder_comparison' ? [['method', view.result.method]] : []),
  ];
  const parts = [
    '<!DOCTYPE html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">`,
    `<title>${escapeHtml(`${TITLES[view.report_type]} (report ${view.report_id})`)}</title>`,
    '<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}th,td{border:1px solid #bbb;padding:2px 6px}td.n{text-align:right}dt{font-weight:bold}</style>',
    '</head>',
    '<body>',
    `<h1>${escapeHtml(TITLES[view.report_type])}</h1>`,
    `<dl>${meta.map(([k, v]) => `<dt>${escapeHtml(k as string)}</dt><dd>${escapeHtml(v as string)}</dd>`).join('')}</dl>`,
  ];
  for (const t of tables) {
    parts.push(`<h2>${escapeHtml(t.title)}</h2>`, '<table>', `<thead><tr>${t.header.map((h) => cell(h, 'th')).join('')}</tr></thead>`, '<tbody>');
    for (const r of t.rows) parts.push(`<tr>${r.map((v) => cell(v, 'td')).join('')}</tr>`);
    parts.push('</tbody>', '</table>');
  }
  parts.push('</body>', '</html>');
  return `${parts.join('\n')}\n`;
}
