/**
 * Report exports (export_report): a stored report (src/domain/reports.ts) as CSV, JSON or a standalone HTML
 * page. Pure functions from the report to text; the tool writes the file.
 *
 * - CSV: RFC 4180 (comma separated, CRLF line ends, fields with a comma, quote or line break quoted, quotes
 *   doubled), one header row. Text cells that a spreadsheet would read as a formula (starting with `=`, `+`,
 *   `-`, `@`, tab or carriage return) get a leading apostrophe (OWASP, "CSV Injection").
 * - JSON: the report as get_report returns it, indented.
 * - HTML: one self-contained page, no scripts (a Content-Security-Policy meta forbids them), every text
 *   escaped (`& < > " '`), so a code named `<script>` shows as text.
 */
import { countOf } from '../core/plural';
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
          rows: result.codes.map((c) => [c.code_id, c.name, c.segment_count, c.source_count, c.coders.map((k) => `${k.coder} (${k.segment_count})`).join('; ')]),
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
    case 'coder_comparison': {
      const [a, b] = result.coders;
      const fixed = (v: number | null, digits: number) => (v === null ? null : Number(v.toFixed(digits)));
      const row = (label: string, id: number | null, t: { both: number; only_a: number; only_b: number; neither: number; percent_agreement: number | null; kappa: number | null }) => [
        id,
        label,
        t.both,
        t.only_a,
        t.only_b,
        t.neither,
        fixed(t.percent_agreement, 2),
        fixed(t.kappa, 4),
      ];
      const rows = result.codes.map((c) => row(c.name, c.code_id, c));
      if (result.overall) rows.push(row('(all codes)', null, result.overall));
      return [
        {
          title: `Coder comparison of ${a} and ${b}: ${result.total_characters} characters of ${result.sources.length} sources, per code`,
          header: ['code_id', 'code', 'both', `only ${a}`, `only ${b}`, 'neither', 'percent_agreement', 'kappa'],
          rows,
        },
      ];
    }
  }
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
  const cell = (v: string | number | null, tag: 'td' | 'th') => `<${tag}${typeof v === 'number' ? ' class="n"' : ''}>${v === null ? '' : escapeHtml(String(v))}</${tag}>`;
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
