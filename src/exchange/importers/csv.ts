import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse } from 'csv-parse/sync';
import { ToolError } from '../../core/errors';
import { codePointLength } from '../../core/text';
import { isIsoDate, MAX_CASE_NAME } from '../../domain/cases';
import type { AttributeType, AttributeValue } from '../../domain/ports';
import { MAX_SOURCE_NAME, nameKey } from '../../domain/rules';
import {
  checkImportFile,
  emptyPlan,
  fitName,
  skip,
  warn,
  type Importer,
  type ImportOptions,
  type ImportPlan,
  type PlannedCase,
  type PlannedSource,
} from './plan';

/**
 * CSV imports: `csv` (survey data) and `analytics_csv` (pre-aggregated analytics, one row per user).
 *
 * Reading: UTF-8 (a byte-order mark ignored; a file that is not UTF-8 is read as Windows-1252, with a
 * warning). The delimiter is sniffed from the header line: the most frequent of `,` `;` tab `|` outside
 * quotes (comma when none). Quoting follows RFC 4180 (csv-parse). The first row is the header; empty
 * header cells are named `column_<n>`, repeated ones get ` (2)`, ` (3)`. Rows that are entirely empty are
 * skipped; a row with more non-empty cells than the header fails the import (a sign of broken quoting).
 *
 * One case per row, named by `name_column` (default: `csv` the first column; `analytics_csv` the first of
 * `user_pseudo_id`, `participant_id`, `user_id`, else the first column). Names compare case-insensitively;
 * a name repeated in the file, or a row with data but no name, fails the import. Existing cases of the
 * same name are updated (attributes of the same name overwritten, others kept).
 *
 * Attribute types are inferred per column from its non-empty cells (trimmed), in order: all decimal
 * numbers -> number (unless a value has a leading zero such as `007`, which marks an identifier: text);
 * all ISO 8601 dates or datetimes -> date; all `true`/`false` (any case) -> boolean; else text. Empty cells
 * set nothing.
 *
 * Open-ended answers (`csv` only): a text column whose non-empty answers are on average longer than
 * {@link OPEN_ENDED_MEAN_LENGTH} code points, or that holds one longer than {@link OPEN_ENDED_MAX_LENGTH},
 * is free text, not a category: each answer becomes a text source `<case> - <column>` (the answer exactly as
 * in the file) in a folder named after the file, linked to its case. Short text columns (gender, interest,
 * a city) stay attributes, however many distinct values they have: distinctness says nothing in small samples.
 * Where a row's answers are sources, they are documents of that respondent: each such source also gets the
 * row's other non-empty columns as typed document attributes (src/domain/sourceAttributes.ts; the same
 * names, types and values as the case's attributes: numbers as number, ISO 8601 dates as date, true/false as
 * boolean, short text as text), so reports by document attribute (code x document attribute, report filters)
 * work on the answers without going through the cases.
 *
 * Errors: IMPORT_FAILED (missing or unparseable file, no rows, unknown name_column, repeated or missing names).
 */
export const csvImporter: Importer = {
  format: 'csv',
  extensions: ['.csv'],
  description:
    'survey CSV: one case per row (name_column, default the first column), typed attributes per column, long free-text answers as text sources linked to their case',
  plan: async (filePath, options) => planCsvFile(filePath, options, 'csv'),
};

/** The `analytics_csv` importer: like `csv`, without open-ended sources and with analytics id columns preferred as names. */
export const analyticsCsvImporter: Importer = {
  format: 'analytics_csv',
  extensions: ['.csv'],
  description:
    'pre-aggregated analytics CSV: one row per user (name_column, default user_pseudo_id or participant_id or the first column), every other column a typed case attribute',
  plan: async (filePath, options) => planCsvFile(filePath, options, 'analytics_csv'),
};

/** Mean length (code points) above which a text column holds open-ended answers. */
export const OPEN_ENDED_MEAN_LENGTH = 60;
/** A text column holding a value longer than this (code points) holds open-ended answers. */
export const OPEN_ENDED_MAX_LENGTH = 255;
/** Largest CSV file read, in bytes. */
export const MAX_CSV_BYTES = 200 * 1024 * 1024;

const ANALYTICS_ID_COLUMNS = ['user_pseudo_id', 'participant_id', 'user_id'];
const NUMERIC = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
const LEADING_ZERO = /^[+-]?0\d/;

async function planCsvFile(filePath: string, options: ImportOptions, format: 'csv' | 'analytics_csv'): Promise<ImportPlan> {
  const size = checkImportFile(filePath);
  if (size > MAX_CSV_BYTES)
    throw new ToolError('IMPORT_FAILED', `${filePath} is ${Math.round(size / 1048576)} MB; CSV imports take at most ${MAX_CSV_BYTES / 1048576} MB`);
  const bytes = fs.readFileSync(filePath);
  let text: string;
  let latin = false;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    text = new TextDecoder('windows-1252').decode(bytes);
    latin = true;
  }
  const plan = planCsv(text, filePath, format, options.name_column);
  if (latin) warn(plan, 'The file is not UTF-8; it was read as Windows-1252');
  return plan;
}

/** The delimiter of a CSV text: the most frequent of `,` `;` tab `|` outside quotes on its first line. */
export function sniffDelimiter(text: string): string {
  const counts = new Map<string, number>([
    [',', 0],
    [';', 0],
    ['\t', 0],
    ['|', 0],
  ]);
  let quoted = false;
  for (const ch of text.replace(/^\uFEFF/, '')) {
    if (ch === '"') quoted = !quoted;
    else if (!quoted && (ch === '\n' || ch === '\r')) break;
    else if (!quoted && counts.has(ch)) counts.set(ch, (counts.get(ch) as number) + 1);
  }
  let best = ',';
  let most = 0;
  for (const [d, n] of counts) if (n > most) [best, most] = [d, n];
  return best;
}

/** A column's inferred type and whether it holds open-ended answers. */
export interface ColumnKind {
  type: AttributeType;
  open_ended: boolean;
}

/** Infers the kind of a column from its cells (see {@link csvImporter}); null when every cell is empty. */
export function inferColumn(cells: readonly string[], allowOpenEnded: boolean): ColumnKind | null {
  const values = cells.map((c) => c.trim()).filter((c) => c !== '');
  if (values.length === 0) return null;
  if (values.every((v) => NUMERIC.test(v) && Number.isFinite(Number(v))) && !values.some((v) => LEADING_ZERO.test(v)))
    return { type: 'number', open_ended: false };
  if (values.every((v) => isIsoDate(v))) return { type: 'date', open_ended: false };
  if (values.every((v) => /^(true|false)$/i.test(v))) return { type: 'boolean', open_ended: false };
  if (!allowOpenEnded) return { type: 'text', open_ended: false };
  const lengths = values.map((v) => codePointLength(v));
  const mean = lengths.reduce((a, b) => a + b, 0) / lengths.length;
  return { type: 'text', open_ended: mean > OPEN_ENDED_MEAN_LENGTH || Math.max(...lengths) > OPEN_ENDED_MAX_LENGTH };
}

function valueOf(cell: string, type: AttributeType): AttributeValue {
  const v = cell.trim();
  if (type === 'number') return Number(v);
  if (type === 'boolean') return v.toLowerCase() === 'true';
  return v;
}

/** The plan of a CSV `text` (see {@link csvImporter}); exported for tests. Errors: IMPORT_FAILED. */
export function planCsv(text: string, filePath: string, format: 'csv' | 'analytics_csv', nameColumn?: string): ImportPlan {
  const plan = emptyPlan(format, filePath);
  const delimiter = sniffDelimiter(text);
  let rows: string[][];
  try {
    rows = parse(text, { delimiter, bom: true, relax_column_count: true, skip_empty_lines: true }) as string[][];
  } catch (e) {
    throw new ToolError('IMPORT_FAILED', `${path.basename(filePath)} is not readable CSV: ${(e as Error).message}`);
  }
  rows = rows.filter((r) => r.some((c) => c.trim() !== ''));
  const header = rows.shift();
  if (!header || rows.length === 0)
    throw new ToolError('IMPORT_FAILED', `${path.basename(filePath)} holds no data rows (a header line and at least one row are needed)`);

  // column names: empty ones numbered, repeated ones suffixed
  const seen = new Map<string, number>();
  const columns = header.map((h, i) => {
    const base = fitName(h, 100, `column_${i + 1}`);
    const n = (seen.get(base.toLowerCase()) ?? 0) + 1;
    seen.set(base.toLowerCase(), n);
    return n === 1 ? base : `${base} (${n})`;
  });
  let nameIndex = 0;
  if (nameColumn !== undefined) {
    const wanted = nameColumn.trim();
    nameIndex = columns.findIndex((c) => c === wanted);
    if (nameIndex < 0) nameIndex = columns.findIndex((c) => c.toLowerCase() === wanted.toLowerCase());
    if (nameIndex < 0)
      throw new ToolError(
        'IMPORT_FAILED',
        `name_column "${nameColumn}" is not a column of ${path.basename(filePath)}; its columns are: ${columns.join(', ')}`,
        { columns },
      );
  } else if (format === 'analytics_csv') {
    const lower = columns.map((c) => c.toLowerCase());
    const found = ANALYTICS_ID_COLUMNS.map((c) => lower.indexOf(c)).find((i) => i >= 0);
    nameIndex = found ?? 0;
  }

  // rows: names, and ragged rows
  const names = new Map<string, number>();
  rows.forEach((r, i) => {
    const line = i + 2;
    if (r.length > columns.length && r.slice(columns.length).some((c) => c.trim() !== '')) {
      throw new ToolError(
        'IMPORT_FAILED',
        `Row ${line} of ${path.basename(filePath)} has ${r.length} cells but the header has ${columns.length} (check its quoting)`,
        { row: line },
      );
    }
    const name = fitName(r[nameIndex] ?? '', MAX_CASE_NAME, '');
    if (name === '')
      throw new ToolError('IMPORT_FAILED', `Row ${line} of ${path.basename(filePath)} has no case name in column "${columns[nameIndex]}"`, { row: line });
    const key = nameKey(name);
    const first = names.get(key);
    if (first !== undefined)
      throw new ToolError(
        'IMPORT_FAILED',
        `The case name "${name}" appears in rows ${first} and ${line} of ${path.basename(filePath)}; case names must be unique`,
        { rows: [first, line] },
      );
    names.set(key, line);
  });

  // columns: kinds
  const kinds = columns.map((_, j) =>
    j === nameIndex
      ? null
      : inferColumn(
          rows.map((r) => r[j] ?? ''),
          format === 'csv',
        ),
  );
  kinds.forEach((k, j) => {
    if (k === null && j !== nameIndex) skip(plan, 'empty_columns');
  });
  const openEnded = columns.filter((_, j) => kinds[j]?.open_ended);
  const folderRef = 'folder:survey';
  if (openEnded.length > 0) plan.folders.push({ ref: folderRef, name: path.basename(filePath).replace(/\.[^.]*$/, '') || 'Survey', parent: null });

  const sourceNames = new Set<string>();
  rows.forEach((r, i) => {
    const line = i + 2;
    const name = fitName(r[nameIndex] ?? '', MAX_CASE_NAME, '');
    const c: PlannedCase = { name, memo: null, sources: [], ranges: [], attributes: [] };
    const answers: PlannedSource[] = [];
    columns.forEach((col, j) => {
      const kind = kinds[j];
      const cell = r[j] ?? '';
      if (!kind || cell.trim() === '') return;
      if (kind.open_ended) {
        let sourceName = fitName(`${name} - ${col}`, MAX_SOURCE_NAME, `Row ${line} - ${col}`);
        if (sourceNames.has(sourceName)) sourceName = fitName(`${sourceName} (row ${line})`, MAX_SOURCE_NAME, `Row ${line} - ${col}`);
        sourceNames.add(sourceName);
        const ref = `answer:${line}:${j}`;
        const answer: PlannedSource = {
          ref,
          name: sourceName,
          text: cell,
          memo: null,
          origin: `${path.basename(filePath)}, row ${line}, column ${col}`,
          folder: folderRef,
        };
        plan.sources.push(answer);
        answers.push(answer);
        c.sources.push(ref);
      } else {
        c.attributes.push({ name: col, type: kind.type, value: valueOf(cell, kind.type) });
      }
    });
    // the row's answers are its sources: they carry the row's typed values as document attributes too
    if (c.attributes.length > 0) for (const answer of answers) answer.attributes = c.attributes.map((x) => ({ ...x }));
    plan.cases.push(c);
  });
  if (openEnded.length > 0) warn(plan, `Open-ended column(s) imported as text sources: ${openEnded.join(', ')}`);
  return plan;
}
