/**
 * export_data's formats (HTTP spec, section 4, "Exchange"; issue 6, item 1), rendered from a
 * {@link ProjectSnapshot}:
 * - `codebook`: the codebook as plain text (UTF-8): categories and codes indented two spaces per level, codes
 *   with their colour and number of codings, memos under them (optional).
 * - `html`: one self-contained HTML page: a legend of the codes and their colours, then every source with its
 *   coded passages highlighted in their codes' colours and a table of its codings. Every character of every
 *   source, name and memo is escaped; the page has no scripts, and a Content-Security-Policy that forbids them
 *   (htmlExport.ts).
 * - `segments_csv`: one row per coded segment (RFC 4180: comma-separated, CRLF line ends, fields quoted when
 *   they hold a comma, quote or line break, quotes doubled), UTF-8 without a byte-order mark.
 * - `refi_qda`: a REFI-QDA project exchange file (.qdpx; refiQda/refiExport.ts).
 * - `qdc`: the REFI-QDA codebook exchange file (.qdc; refiQda/refiExport.ts).
 * Positions in the text and CSV outputs count Unicode code points of the stored text, end exclusive; AV
 * positions are milliseconds. The formats' extensions and suggest_export_format: exportFormats.ts.
 */
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { ToolError } from '../core/errors';
import { isInside, PathPolicy } from '../core/pathPolicy';
import type { CategoryWithCount, CodeWithCounts } from '../domain/ports';
import { nameKey } from '../domain/rules';
import { EXPORT_FORMATS, type ExportFormat } from './exportFormats';
import { renderHtml } from './htmlExport';
import { categoryPath, type ProjectSnapshot } from './projectSnapshot';
import { exportQdc, exportQdpx } from './refiQda/refiExport';

export { EXPORT_FORMATS, isExportFormat, suggestExportFormat, type ExportFormat, type ExportSuggestion } from './exportFormats';
export { escapeHtml, renderHtml } from './htmlExport';

// ----- output paths ------------------------------------------------------------------------------------------

/**
 * Checks where an export may be written and returns the path to write: absolute; its extension one of the
 * format's (case-insensitive); its folder exists; judged by its real path (every symbolic link followed,
 * resolved once through the call's path policy, `opts.paths`, which for an agent has already checked it
 * against the folders agents may use; src/core/pathPolicy.ts): not a folder, no `node_modules` folder on the
 * way, not the project file, its journal or lock, nor inside the project's `.marginalia` folder; not the file
 * of one of the project's sources (`protectedFiles`), which an export would destroy. An existing file of the
 * right extension is replaced (atomically, see {@link writeAtomically}). Returns the real path.
 * Errors: EXPORT_FAILED with the reason.
 */
export async function checkOutputPath(
  outputPath: string,
  format: ExportFormat,
  opts: { projectPath: string | null; protectedFiles: readonly string[]; paths?: PathPolicy },
): Promise<string> {
  const fail = (why: string): never => {
    throw new ToolError('EXPORT_FAILED', `Cannot export to "${outputPath}": ${why}`);
  };
  if (!path.isAbsolute(outputPath)) fail('output_path must be an absolute path');
  const target = path.resolve(outputPath);
  const ext = path.extname(target).toLowerCase();
  const allowed = EXPORT_FORMATS[format].extensions;
  if (!allowed.includes(ext)) fail(`a ${format} export must end with ${allowed.join(' or ')} (got "${ext || 'no extension'}")`);
  const dir = path.dirname(target);
  try {
    if (!(await fs.stat(dir)).isDirectory()) fail(`${dir} is not a folder`);
  } catch (e) {
    if (e instanceof ToolError) throw e;
    fail(`the folder ${dir} does not exist`);
  }
  const policy = opts.paths ?? PathPolicy.unrestricted();
  const real = policy.realPath(target);
  for (const p of [target, real])
    if (p.split(/[\\/]/).some((seg) => seg.toLowerCase() === 'node_modules')) fail('exports are never written inside node_modules');
  try {
    if ((await fs.stat(real)).isDirectory()) fail('that is a folder');
  } catch (e) {
    if (e instanceof ToolError) throw e;
  }
  if (opts.projectPath) {
    const project = path.resolve(opts.projectPath);
    const realProjectDir = policy.realPath(path.dirname(project));
    const own = [project, `${project}-journal`, `${project}.lock`].map((p) => path.join(realProjectDir, path.basename(p)));
    if (own.some((p) => isInside(real, p))) fail('that is the project file or one of its companions');
    if (isInside(real, path.join(realProjectDir, '.marginalia'))) fail("exports are never written inside the project's .marginalia folder");
  }
  const protectedSet = new Set(opts.protectedFiles.map((p) => path.resolve(p)));
  if (protectedSet.has(target) || protectedSet.has(real)) fail('that file is a source of the project; exporting would overwrite it');
  return real;
}

/**
 * Writes a file atomically: `write` fills a temporary file beside `file`, which is then flushed to disk and
 * renamed over `file`; on any failure the temporary file is removed and `file` is left as it was.
 */
export async function atomically(file: string, write: (tmp: string) => Promise<void>): Promise<void> {
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.${Date.now()}.tmp`);
  try {
    await write(tmp);
    const handle = await fs.open(tmp, 'r+');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
    await fs.rename(tmp, file);
  } catch (e) {
    await fs.rm(tmp, { force: true });
    throw e;
  }
}

/** Writes `data` (a string as UTF-8) to `file` {@link atomically}. */
export async function writeAtomically(file: string, data: string | Uint8Array): Promise<void> {
  await atomically(file, (tmp) => fs.writeFile(tmp, data));
}

// ----- codebook (plain text) --------------------------------------------------------------------------------

/** The codebook as plain text (see the module comment). Errors: EXPORT_FAILED "no codes" for an empty codebook. */
export function renderCodebook(s: ProjectSnapshot, opts: { includeMemos: boolean }): string {
  if (s.codes.length === 0) throw new ToolError('EXPORT_FAILED', 'The project has no codes: there is no codebook to export');
  const lines: string[] = [];
  lines.push(`Codebook: ${oneLine(s.name)}`);
  lines.push(
    `${s.codes.length} code(s) in ${s.categories.length} categor${s.categories.length === 1 ? 'y' : 'ies'}; exported ${s.taken_at} by ${oneLine(s.user)} from Marginalia`,
  );
  lines.push('');
  const memo = (text: string | null, depth: number) => {
    if (!opts.includeMemos || !text || text.trim() === '') return;
    const pad = '  '.repeat(depth);
    const memoLines = text.replace(/\r\n?/g, '\n').split('\n');
    memoLines.forEach((l, i) => lines.push(`${pad}${i === 0 ? 'Memo: ' : '      '}${l}`.trimEnd()));
  };
  const code = (c: CodeWithCounts, depth: number) => {
    const n = c.segment_count + c.av_segment_count;
    lines.push(`${'  '.repeat(depth)}${oneLine(c.name)}  [${c.color}]  (${n} coding${n === 1 ? '' : 's'})`);
    memo(c.memo, depth + 1);
  };
  const { roots, children, codesOf } = codebookTree(s);
  const category = (k: CategoryWithCount, depth: number, seen: Set<number>) => {
    if (seen.has(k.category_id)) return;
    seen.add(k.category_id);
    // a category holding a code of its own name (an imported codable parent code) is one line: `Name/  [colour]  (n)`
    const own = codesOf.get(k.category_id) ?? [];
    const twin = own.find((c) => nameKey(c.name) === nameKey(k.name));
    const n = twin ? twin.segment_count + twin.av_segment_count : 0;
    lines.push(`${'  '.repeat(depth)}${oneLine(k.name)}/${twin ? `  [${twin.color}]  (${n} coding${n === 1 ? '' : 's'})` : ''}`);
    memo(k.memo, depth + 1);
    if (twin && twin.memo !== k.memo) memo(twin.memo, depth + 1);
    for (const sub of children.get(k.category_id) ?? []) category(sub, depth + 1, seen);
    for (const c of own) if (c !== twin) code(c, depth + 1);
  };
  const seen = new Set<number>();
  for (const k of roots) category(k, 0, seen);
  for (const c of codesOf.get(null) ?? []) code(c, 0);
  return `${lines.join('\n')}\n`;
}

/** Categories as a forest (by name) and codes by category (by name); codes of unknown categories count as uncategorised. */
function codebookTree(s: ProjectSnapshot): {
  roots: CategoryWithCount[];
  children: Map<number, CategoryWithCount[]>;
  codesOf: Map<number | null, CodeWithCounts[]>;
} {
  const byName = <T extends { name: string }>(a: T, b: T) => a.name.localeCompare(b.name);
  const known = new Set(s.categories.map((c) => c.category_id));
  const children = new Map<number, CategoryWithCount[]>();
  const roots: CategoryWithCount[] = [];
  for (const c of [...s.categories].sort(byName)) {
    if (c.parent_id !== null && known.has(c.parent_id)) {
      const l = children.get(c.parent_id) ?? [];
      l.push(c);
      children.set(c.parent_id, l);
    } else roots.push(c);
  }
  const codesOf = new Map<number | null, CodeWithCounts[]>();
  for (const c of [...s.codes].sort(byName)) {
    const k = c.category_id !== null && known.has(c.category_id) ? c.category_id : null;
    const l = codesOf.get(k) ?? [];
    l.push(c);
    codesOf.set(k, l);
  }
  return { roots, children, codesOf };
}

/** `s` on one line: line breaks and tabs as spaces. */
function oneLine(s: string): string {
  return s.replace(/[\r\n\t]+/g, ' ');
}

// ----- segments CSV ------------------------------------------------------------------------------------------

/** The columns of the segments CSV, in order. */
export const SEGMENTS_CSV_COLUMNS = [
  'source',
  'code',
  'start',
  'end',
  'text',
  'memo',
  'coder',
  'created_at',
  'category',
  'unit',
  'segment_id',
  'source_id',
  'code_id',
] as const;

/** One CSV field (RFC 4180, section 2): quoted when it holds a comma, a quote, CR or LF; quotes doubled. */
export function csvField(v: string | number | null): string {
  const s = v === null ? '' : String(v);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/**
 * Every coded segment as one CSV row (columns {@link SEGMENTS_CSV_COLUMNS}): text segments first (unit
 * `code_points`: start and end count code points, end exclusive; text is the coded passage), then AV segments
 * (unit `ms`: milliseconds; text is the transcript), each by source then position. Errors: EXPORT_FAILED when
 * there are no coded segments.
 */
export function renderSegmentsCsv(s: ProjectSnapshot): string {
  if (s.segments.length + s.av_segments.length === 0) throw new ToolError('EXPORT_FAILED', 'The project has no coded segments: there are no rows to export');
  const sources = new Map(s.sources.map((x) => [x.source_id, x.name]));
  const codes = new Map(s.codes.map((c) => [c.code_id, c]));
  const rows: string[] = [SEGMENTS_CSV_COLUMNS.join(',')];
  const row = (cells: (string | number | null)[]) => rows.push(cells.map(csvField).join(','));
  for (const g of s.segments) {
    const c = codes.get(g.code_id);
    row([
      sources.get(g.source_id) ?? '',
      c?.name ?? '',
      g.start_pos,
      g.end_pos,
      g.text,
      g.memo,
      g.owner,
      g.created_at,
      categoryPath(s, c?.category_id ?? null),
      'code_points',
      g.segment_id,
      g.source_id,
      g.code_id,
    ]);
  }
  for (const g of s.av_segments) {
    const c = codes.get(g.code_id);
    row([
      sources.get(g.source_id) ?? '',
      c?.name ?? '',
      g.start_ms,
      g.end_ms,
      g.transcript,
      g.memo,
      g.owner,
      g.created_at,
      categoryPath(s, c?.category_id ?? null),
      'ms',
      g.segment_id,
      g.source_id,
      g.code_id,
    ]);
  }
  return `${rows.join('\r\n')}\r\n`;
}

// ----- all formats -------------------------------------------------------------------------------------------

/** What an export wrote: its size in bytes; `counts` says what the file holds, `warnings` what it could not carry. */
export interface WrittenExport {
  bytes: number;
  counts: Record<string, number>;
  warnings: string[];
}

/**
 * Renders `snapshot` in `format` and writes it to `file` (a path {@link checkOutputPath} returned), atomically.
 * `includeMemos` applies to `codebook` only (the spec's rule). Reads media files for `refi_qda`.
 * Errors: EXPORT_FAILED (an empty codebook for codebook and qdc, no sources for html, no coded segments for
 * segments_csv; a failed write).
 */
export async function writeExport(format: ExportFormat, snapshot: ProjectSnapshot, file: string, opts: { includeMemos: boolean }): Promise<WrittenExport> {
  const text = async (data: string, counts: Record<string, number>, warnings: string[] = []): Promise<WrittenExport> => {
    await guardWrite(file, () => writeAtomically(file, data));
    return { bytes: Buffer.byteLength(data, 'utf8'), counts, warnings };
  };
  switch (format) {
    case 'codebook':
      return text(renderCodebook(snapshot, opts), { codes: snapshot.codes.length, categories: snapshot.categories.length });
    case 'html':
      return text(renderHtml(snapshot), {
        sources: snapshot.sources.length,
        codes: snapshot.codes.length,
        segments: snapshot.segments.length,
        av_segments: snapshot.av_segments.length,
      });
    case 'segments_csv':
      return text(renderSegmentsCsv(snapshot), { rows: snapshot.segments.length + snapshot.av_segments.length });
    case 'qdc': {
      if (snapshot.codes.length === 0) throw new ToolError('EXPORT_FAILED', 'The project has no codes: there is no codebook to export');
      const r = exportQdc(snapshot);
      return text(r.xml, r.counts, r.warnings);
    }
    case 'refi_qda': {
      let result: WrittenExport | undefined;
      await guardWrite(file, async () => {
        const r = await exportQdpx(snapshot, file, atomically);
        result = { bytes: r.bytes, counts: { ...r.counts }, warnings: r.warnings };
      });
      return result as WrittenExport;
    }
  }
}

/** Runs a write, turning a file-system failure into EXPORT_FAILED naming the file. */
async function guardWrite(file: string, write: () => Promise<void>): Promise<void> {
  try {
    await write();
  } catch (e) {
    if (e instanceof ToolError) throw e;
    throw new ToolError('EXPORT_FAILED', `Writing ${file} failed: ${(e as Error).message}`);
  }
}
