/**
 * Code-by-case and code-by-attribute matrices, and the coded segments behind one cell of a report (what the
 * Reports view lists when a bar or a cell is clicked). Pure reads of the repository; nothing is written.
 *
 * A case's codings are those of `listCaseCodings`: the segments of its linked sources, and the text segments
 * overlapping one of its ranges. Like the other reports (src/domain/reports.ts), the matrices count text
 * segments only; AV segments are left out. Text positions are code points, ranges half-open.
 */
import { compareAttributeValues } from './caseAnalysis';
import type { Segment } from './model';
import type { AttributeType, AttributeValue, ProjectRepository } from './ports';
import type { MatrixCode } from './reports';

/** The repository reads the matrices need. */
export type MatrixRepository = Pick<ProjectRepository, 'listCodeLabels' | 'listCases' | 'listCaseCodings' | 'listCaseAttributes'>;

/** A column of a code matrix: one case, or the cases sharing one attribute value. */
export interface MatrixColumn {
  /** stable key: `case:<id>`, `value:<type>:<json>`, or `unset` (cases without the attribute) */
  key: string;
  /** what the column shows: the case name, the attribute value, or "(not set)" */
  label: string;
  /** the cases of the column, by id */
  case_ids: number[];
  /** text segments belonging to at least one of the column's cases (each counted once) */
  segment_count: number;
}

/** A code-by-case or code-by-attribute matrix. */
export interface CodeMatrixResult {
  kind: 'code_by_case' | 'code_by_attribute';
  /** the attribute of a code-by-attribute matrix, else null */
  attribute_name: string | null;
  /** rows: every code with at least one segment in a column, by name (case-insensitive), then id */
  codes: MatrixCode[];
  columns: MatrixColumn[];
  /** `matrix[i][j]`: text segments of `codes[i]` belonging to the cases of `columns[j]`, each segment counted once per cell */
  matrix: number[][];
}

/** The label of the column of cases that lack the attribute. */
export const UNSET_LABEL = '(not set)';

/** The distinct attribute names of all cases, by name (code unit order). */
export function attributeNames(repo: Pick<ProjectRepository, 'listCaseAttributes'>): string[] {
  return [...new Set(repo.listCaseAttributes().map((a) => a.name))].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * Code by case: a column per case (by name, as `listCases` orders them), a row per code used in any case;
 * each cell counts the case's text codings of the code.
 */
export function codeByCaseMatrix(repo: MatrixRepository): CodeMatrixResult {
  const columns = repo.listCases().map((c) => ({ key: `case:${c.case_id}`, label: c.name, case_ids: [c.case_id] }));
  return buildMatrix(repo, 'code_by_case', null, columns);
}

/**
 * Code by attribute: a column per distinct value of attribute `name` (typed: the number 30 and the text "30"
 * are two values; numbers ascending, booleans false first, text and dates by code unit; mixed types by
 * type name), plus a last column "(not set)" for the cases without it when there are any. A cell counts the
 * distinct text segments of the code that belong to at least one case of the column. An attribute no case
 * has gives one "(not set)" column of all cases.
 */
export function codeByAttributeMatrix(repo: MatrixRepository, name: string): CodeMatrixResult {
  const cases = repo.listCases();
  const groups = new Map<string, { type: AttributeType; value: AttributeValue; case_ids: number[] }>();
  const valued = new Set<number>();
  for (const a of repo.listCaseAttributes()) {
    if (a.name !== name) continue;
    const key = `value:${a.type}:${JSON.stringify(a.value)}`;
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { type: a.type, value: a.value, case_ids: [] }));
    g.case_ids.push(a.case_id);
    valued.add(a.case_id);
  }
  const columns = [...groups.entries()]
    .sort(([, a], [, b]) => compareAttributeValues(a, b))
    .map(([key, g]) => ({ key, label: String(g.value), case_ids: g.case_ids.sort((x, y) => x - y) }));
  const unset = cases.filter((c) => !valued.has(c.case_id)).map((c) => c.case_id);
  if (unset.length > 0) columns.push({ key: 'unset', label: UNSET_LABEL, case_ids: unset.sort((x, y) => x - y) });
  return buildMatrix(repo, 'code_by_attribute', name, columns);
}

function buildMatrix(
  repo: MatrixRepository,
  kind: CodeMatrixResult['kind'],
  attribute: string | null,
  cols: { key: string; label: string; case_ids: number[] }[],
): CodeMatrixResult {
  const codingsOf = new Map<number, { segment_id: number; code_id: number }[]>();
  const codings = (caseId: number) => {
    let list = codingsOf.get(caseId);
    if (!list) codingsOf.set(caseId, (list = repo.listCaseCodings(caseId).filter((k) => k.kind === 'text')));
    return list;
  };
  // per column: code_id -> distinct segment ids
  const perColumn = cols.map((col) => {
    const byCode = new Map<number, Set<number>>();
    const all = new Set<number>();
    for (const caseId of col.case_ids) {
      for (const k of codings(caseId)) {
        let set = byCode.get(k.code_id);
        if (!set) byCode.set(k.code_id, (set = new Set()));
        set.add(k.segment_id);
        all.add(k.segment_id);
      }
    }
    return { byCode, total: all.size };
  });
  const used = new Set<number>();
  for (const c of perColumn) for (const id of c.byCode.keys()) used.add(id);
  const codes = repo
    .listCodeLabels()
    .filter((c) => used.has(c.code_id))
    .sort((a, b) => compareText(a.name, b.name) || a.code_id - b.code_id)
    .map((c) => ({ code_id: c.code_id, name: c.name, color: c.color }));
  const matrix = codes.map((code) => perColumn.map((c) => c.byCode.get(code.code_id)?.size ?? 0));
  const columns = cols.map((c, j) => ({ ...c, segment_count: (perColumn[j] as (typeof perColumn)[number]).total }));
  return { kind, attribute_name: attribute, codes, columns, matrix };
}

// ---------------------------------------------------------------------------------------------------
// The segments behind a cell

/** The segments of `codeId` belonging to at least one of `caseIds` (text only), each once, by source then position. */
export function caseCellSegments(repo: Pick<ProjectRepository, 'listCaseCodings' | 'getSegment'>, codeId: number, caseIds: readonly number[]): Segment[] {
  const ids = new Set<number>();
  for (const caseId of caseIds) for (const k of repo.listCaseCodings(caseId)) if (k.kind === 'text' && k.code_id === codeId) ids.add(k.segment_id);
  const out: Segment[] = [];
  for (const id of ids) {
    const s = repo.getSegment(id);
    if (s) out.push(s);
  }
  return out.sort(bySourceAndPosition);
}

/** The segments of `codeId` made by one of `coders` (segment owners), by source then position. */
export function codedBySegments(repo: Pick<ProjectRepository, 'listSegmentsForCode'>, codeId: number, coders: readonly string[]): Segment[] {
  const who = new Set(coders);
  return repo
    .listSegmentsForCode(codeId)
    .filter((s) => who.has(s.owner))
    .sort(bySourceAndPosition);
}

/** Two overlapping segments and where they overlap (`[start_pos, end_pos)`, code points). */
export interface SegmentOverlap {
  source_id: number;
  start_pos: number;
  end_pos: number;
  a: Segment;
  b: Segment;
}

/**
 * The overlapping pairs behind a co-occurrence cell: every segment of `codeA` that overlaps a segment of
 * `codeB` on the same source (half-open: `a.start < b.end && b.start < a.end`), as the co-occurrence report
 * counts them. For `codeA === codeB` (the diagonal), every pair of two distinct overlapping segments of the
 * code, once. By source, then overlap start.
 */
export function cooccurringSegments(repo: Pick<ProjectRepository, 'listSegmentsForCode'>, codeA: number, codeB: number): SegmentOverlap[] {
  const same = codeA === codeB;
  const as = bySource(repo.listSegmentsForCode(codeA));
  const bs = same ? as : bySource(repo.listSegmentsForCode(codeB));
  const out: SegmentOverlap[] = [];
  for (const [source, listA] of as) {
    const listB = bs.get(source);
    if (!listB) continue;
    for (let i = 0; i < listA.length; i++) {
      const a = listA[i] as Segment;
      // listB is in start order: past a's end nothing more overlaps a
      for (let j = same ? i + 1 : 0; j < listB.length; j++) {
        const b = listB[j] as Segment;
        if (b.start_pos >= a.end_pos) break;
        if (b.end_pos > a.start_pos)
          out.push({ source_id: source, start_pos: Math.max(a.start_pos, b.start_pos), end_pos: Math.min(a.end_pos, b.end_pos), a, b });
      }
    }
  }
  return out.sort(
    (x, y) =>
      x.source_id - y.source_id || x.start_pos - y.start_pos || x.end_pos - y.end_pos || x.a.segment_id - y.a.segment_id || x.b.segment_id - y.b.segment_id,
  );
}

/** Segments grouped by source, each group in {@link bySourceAndPosition} order. */
function bySource(segments: readonly Segment[]): Map<number, Segment[]> {
  const out = new Map<number, Segment[]>();
  for (const s of [...segments].sort(bySourceAndPosition)) {
    let list = out.get(s.source_id);
    if (!list) out.set(s.source_id, (list = []));
    list.push(s);
  }
  return out;
}

/** Orders segments by source, start, end, id. */
export function bySourceAndPosition(a: Segment, b: Segment): number {
  return a.source_id - b.source_id || a.start_pos - b.start_pos || a.end_pos - b.end_pos || a.segment_id - b.segment_id;
}

/** Case-insensitive, then exact, comparison of names (the order of the other reports). */
function compareText(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  return x < y ? -1 : x > y ? 1 : a < b ? -1 : a > b ? 1 : 0;
}

// ---------------------------------------------------------------------------------------------------
// Code by document attribute (issue 13 item 5; document attributes: src/domain/sourceAttributes.ts)

/** The repository reads the code-by-document-attribute matrix needs. */
export type DocumentMatrixRepository = Pick<ProjectRepository, 'listCodeLabels' | 'listSources' | 'listSourceAttributes' | 'reportCodedRanges'>;

/** A column of a code-by-document-attribute matrix: the sources sharing one value of the attribute, or those without it. */
export interface DocumentMatrixColumn {
  /** stable key: `value:<type>:<json>`, or `unset` (sources without the attribute) */
  key: string;
  /** the attribute value, or "(not set)" */
  label: string;
  /** the sources of the column, by id */
  source_ids: number[];
  /** text segments on the column's sources */
  segment_count: number;
}

/** A code-by-document-attribute matrix: {@link CodeMatrixResult}'s shape with columns of sources instead of cases. */
export interface DocumentAttributeMatrixResult {
  kind: 'code_by_document_attribute';
  attribute_name: string;
  /** rows: every code with at least one segment in a column, by name (case-insensitive), then id */
  codes: MatrixCode[];
  columns: DocumentMatrixColumn[];
  /** `matrix[i][j]`: text segments of `codes[i]` on the sources of `columns[j]` */
  matrix: number[][];
}

/** The distinct document attribute names of all sources, by name (code unit order). */
export function documentAttributeNames(repo: Pick<ProjectRepository, 'listSourceAttributes'>): string[] {
  return [...new Set(repo.listSourceAttributes().map((a) => a.name))].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * Code by document attribute, as {@link codeByAttributeMatrix} is for case attributes: a column per distinct
 * value of the document attribute `name` (exact name; typed: the number 30 and the text "30" are two values;
 * numbers ascending, booleans false first, text and dates by code unit; mixed types by type name), plus a last
 * column "(not set)" for the sources without it when there are any. A source has at most one value of an
 * attribute, so it is in exactly one column, and a cell counts the text segments of the code on the column's
 * sources. An attribute no source has gives one "(not set)" column of all sources. Writes nothing.
 */
export function codeByDocumentAttributeMatrix(repo: DocumentMatrixRepository, name: string): DocumentAttributeMatrixResult {
  const groups = new Map<string, { type: AttributeType; value: AttributeValue; source_ids: number[] }>();
  const columnOf = new Map<number, number>();
  for (const a of repo.listSourceAttributes()) {
    if (a.name !== name) continue;
    const key = `value:${a.type}:${JSON.stringify(a.value)}`;
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { type: a.type, value: a.value, source_ids: [] }));
    g.source_ids.push(a.source_id);
  }
  const columns: DocumentMatrixColumn[] = [...groups.entries()]
    .sort(([, a], [, b]) => compareAttributeValues(a, b))
    .map(([key, g]) => ({ key, label: String(g.value), source_ids: g.source_ids.sort((x, y) => x - y), segment_count: 0 }));
  columns.forEach((c, j) => c.source_ids.forEach((id) => columnOf.set(id, j)));
  const unset = repo
    .listSources()
    .map((s) => s.source_id)
    .filter((id) => !columnOf.has(id))
    .sort((x, y) => x - y);
  if (unset.length > 0) {
    unset.forEach((id) => columnOf.set(id, columns.length));
    columns.push({ key: 'unset', label: UNSET_LABEL, source_ids: unset, segment_count: 0 });
  }
  // one pass over every text segment (source_id, code_id columns; no text read)
  const ranges = repo.reportCodedRanges({});
  const perCode = new Map<number, number[]>();
  for (let i = 0; i < ranges.source_id.length; i++) {
    const j = columnOf.get(ranges.source_id[i] as number);
    if (j === undefined) continue;
    const code = ranges.code_id[i] as number;
    let row = perCode.get(code);
    if (!row) perCode.set(code, (row = new Array<number>(columns.length).fill(0)));
    row[j] = (row[j] as number) + 1;
    (columns[j] as DocumentMatrixColumn).segment_count++;
  }
  const codes = repo
    .listCodeLabels()
    .filter((c) => perCode.has(c.code_id))
    .sort((a, b) => compareText(a.name, b.name) || a.code_id - b.code_id)
    .map((c) => ({ code_id: c.code_id, name: c.name, color: c.color }));
  return { kind: 'code_by_document_attribute', attribute_name: name, codes, columns, matrix: codes.map((c) => perCode.get(c.code_id) as number[]) };
}

/** The text segments of `codeId` on the given sources (a cell of {@link codeByDocumentAttributeMatrix}), by source then position. */
export function sourceCellSegments(repo: Pick<ProjectRepository, 'listSegmentsForCode'>, codeId: number, sourceIds: readonly number[]): Segment[] {
  const wanted = new Set(sourceIds);
  return repo
    .listSegmentsForCode(codeId)
    .filter((s) => wanted.has(s.source_id))
    .sort(bySourceAndPosition);
}
