/**
 * export_data's formats (HTTP spec, section 4, "Exchange"; issue 6, item 1), rendered from a
 * {@link ProjectSnapshot}:
 * - `codebook`: the codebook as plain text (UTF-8): categories and codes indented two spaces per level, codes
 *   with their colour and number of codings, memos under them (optional).
 * - `html`: one self-contained HTML page: a legend of the codes and their colours, then every source with its
 *   coded passages highlighted in their codes' colours and a table of its codings. Every character of every
 *   source, name and memo is escaped; the page has no scripts, and a Content-Security-Policy that forbids them.
 * - `segments_csv`: one row per coded segment (RFC 4180: comma-separated, CRLF line ends, fields quoted when
 *   they hold a comma, quote or line break, quotes doubled), UTF-8 without a byte-order mark.
 * - `refi_qda`: a REFI-QDA project exchange file (.qdpx; refiQda/refiExport.ts).
 * - `qdc`: the REFI-QDA codebook exchange file (.qdc; refiQda/refiExport.ts).
 * Positions in the text and CSV outputs count Unicode code points of the stored text, end exclusive; AV
 * positions are milliseconds.
 */
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { ToolError } from '../core/errors';
import { isInside, PathPolicy } from '../core/pathPolicy';
import { OffsetMap } from '../core/offsets';
import type { Segment } from '../domain/model';
import type { AvSegment, CategoryWithCount, CodeWithCounts } from '../domain/ports';
import { nameKey } from '../domain/rules';
import { categoryPath, type ProjectSnapshot, type SnapshotSource } from './projectSnapshot';
import { exportQdc, exportQdpx } from './refiQda/refiExport';

/** A format export_data writes. */
export type ExportFormat = 'codebook' | 'html' | 'segments_csv' | 'refi_qda' | 'qdc';

/** Every export format with the file extensions its output path may have and what it holds. */
export const EXPORT_FORMATS: Readonly<Record<ExportFormat, { extensions: readonly string[]; description: string }>> = {
  codebook: {
    extensions: ['.txt'],
    description: 'the codebook as plain text: categories and codes indented, colours, coding counts and (include_memos) memos',
  },
  html: {
    extensions: ['.html', '.htm'],
    description: 'a self-contained web page: every source with its coded passages highlighted, a legend of codes and colours, no scripts',
  },
  segments_csv: {
    extensions: ['.csv'],
    description: 'one CSV row per coded segment (source, code, start, end, text, memo, coder, created_at, ...) for R, Python or a spreadsheet',
  },
  refi_qda: { extensions: ['.qdpx'], description: 'the whole project as a REFI-QDA exchange file (.qdpx) for NVivo, ATLAS.ti, MAXQDA, QualCoder and others' },
  qdc: { extensions: ['.qdc'], description: 'the codebook alone as a REFI-QDA codebook file (.qdc), for another QDA tool' },
};

/** True when `format` names an export format. */
export function isExportFormat(format: string): format is ExportFormat {
  return Object.prototype.hasOwnProperty.call(EXPORT_FORMATS, format);
}

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

// ----- HTML ------------------------------------------------------------------------------------------------

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** `s` with every character HTML gives a meaning to (`& < > " '`) escaped; safe in text and quoted attributes. */
export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c] as string);
}

/** A stored colour, checked again (`#RRGGBB`) before it goes into a style; anything else becomes grey. */
function safeColor(c: string): string {
  return /^#[0-9A-Fa-f]{6}$/.test(c) ? c.toUpperCase() : '#999999';
}

/** Milliseconds as `H:MM:SS.mmm` (hours only when there are any). */
function clock(ms: number): string {
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const sec = Math.floor((ms % 60_000) / 1000);
  const rest = ms % 1000;
  const mm = String(m).padStart(h > 0 ? 2 : 1, '0');
  return `${h > 0 ? `${h}:` : ''}${mm}:${String(sec).padStart(2, '0')}.${String(rest).padStart(3, '0')}`;
}

/**
 * The text of a source with its segments as `<mark>` runs: one run per stretch covered by the same codes (a sweep
 * over the segments' boundaries, so many segments stay cheap). Positions are code points; the text is escaped.
 */
function highlightedText(text: string, segments: Segment[], codes: Map<number, CodeWithCounts>): string {
  const map = new OffsetMap(text);
  const length = map.cpLength;
  const clamp = (p: number) => Math.min(Math.max(p, 0), length);
  const opening = new Map<number, Segment[]>();
  const closing = new Map<number, Segment[]>();
  const bounds = new Set<number>([0, length]);
  for (const g of segments) {
    const a = clamp(g.start_pos);
    const b = clamp(g.end_pos);
    if (b <= a) continue;
    bounds.add(a);
    bounds.add(b);
    opening.set(a, [...(opening.get(a) ?? []), g]);
    closing.set(b, [...(closing.get(b) ?? []), g]);
  }
  const points = [...bounds].sort((x, y) => x - y);
  const active = new Set<Segment>();
  const out: string[] = [];
  for (let i = 0; i + 1 < points.length; i++) {
    const from = points[i] as number;
    const to = points[i + 1] as number;
    for (const g of closing.get(from) ?? []) active.delete(g);
    for (const g of opening.get(from) ?? []) active.add(g);
    const piece = escapeHtml(text.slice(map.toUtf16(from), map.toUtf16(to)));
    if (active.size === 0) {
      out.push(piece);
      continue;
    }
    const ids = [...new Set([...active].sort((x, y) => x.start_pos - y.start_pos || x.segment_id - y.segment_id).map((g) => g.code_id))];
    const colors = ids.map((id) => safeColor(codes.get(id)?.color ?? '#999999'));
    const names = ids.map((id) => codes.get(id)?.name ?? `code ${id}`);
    const shadows = colors.slice(1).map((c, k) => `inset 0 -${3 * (k + 1)}px 0 ${c}`);
    const style = `background-color:${colors[0]}40;${shadows.length > 0 ? `box-shadow:${shadows.join(',')};` : ''}border-bottom:2px solid ${colors[0]}`;
    out.push(`<mark style="${style}" title="${escapeHtml(names.join('; '))}">${piece}</mark>`);
  }
  return out.join('');
}

/**
 * The project as one self-contained HTML page (see the module comment). Errors: EXPORT_FAILED when the project
 * has no sources.
 */
export function renderHtml(s: ProjectSnapshot): string {
  if (s.sources.length === 0) throw new ToolError('EXPORT_FAILED', 'The project has no sources: there is nothing to show in an HTML export');
  const codes = new Map(s.codes.map((c) => [c.code_id, c]));
  const segBySource = new Map<number, Segment[]>();
  for (const g of s.segments) segBySource.set(g.source_id, [...(segBySource.get(g.source_id) ?? []), g]);
  const avBySource = new Map<number, AvSegment[]>();
  for (const g of s.av_segments) avBySource.set(g.source_id, [...(avBySource.get(g.source_id) ?? []), g]);
  const e = escapeHtml;
  const swatch = (color: string) => `<span class="sw" style="background-color:${safeColor(color)}"></span>`;
  const codeCell = (id: number) => {
    const c = codes.get(id);
    return c ? `${swatch(c.color)}${e(c.name)}` : e(`code ${id}`);
  };
  const parts: string[] = [];
  parts.push('<!DOCTYPE html>');
  parts.push('<html lang="und">');
  parts.push('<head>');
  parts.push('<meta charset="utf-8">');
  parts.push(`<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">`);
  parts.push('<meta name="viewport" content="width=device-width, initial-scale=1">');
  parts.push(`<meta name="generator" content="Marginalia">`);
  parts.push(`<title>${e(s.name)}: coded sources</title>`);
  parts.push(`<style>
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:2rem auto;max-width:60rem;padding:0 1rem;color:#222;line-height:1.5}
h1{font-size:1.6rem}h2{font-size:1.25rem;margin-top:2.5rem;border-bottom:1px solid #ccc}h3{font-size:1rem}
.meta{color:#666;font-size:.9rem}
.legend ul{list-style:none;padding:0;columns:2}.legend li{margin:.15rem 0;break-inside:avoid}
.sw{display:inline-block;width:.9em;height:.9em;border-radius:2px;margin-right:.4em;vertical-align:-.1em;border:1px solid #0003}
.text{white-space:pre-wrap;overflow-wrap:anywhere;font-family:Georgia,serif;background:#fafafa;border:1px solid #eee;padding:1rem}
mark{color:inherit;border-radius:2px}
table{border-collapse:collapse;width:100%;font-size:.9rem}th,td{border:1px solid #ddd;padding:.25rem .4rem;text-align:left;vertical-align:top}
td.q{white-space:pre-wrap}
@media print{.text{border:none;background:none}h2{page-break-before:always}}
</style>`);
  parts.push('</head>');
  parts.push('<body>');
  parts.push(`<h1>${e(s.name)}</h1>`);
  parts.push(
    `<p class="meta">${s.sources.length} source(s), ${s.codes.length} code(s), ${s.segments.length + s.av_segments.length} coding(s). Exported ${e(s.taken_at)} by ${e(s.user)} from Marginalia. Positions count characters (Unicode code points) from 0.</p>`,
  );
  parts.push('<section class="legend"><h2>Codes</h2>');
  if (s.codes.length === 0) parts.push('<p>No codes.</p>');
  else {
    parts.push('<ul>');
    for (const c of [...s.codes].sort((a, b) => categoryPath(s, a.category_id).localeCompare(categoryPath(s, b.category_id)) || a.name.localeCompare(b.name))) {
      const where = categoryPath(s, c.category_id);
      const n = c.segment_count + c.av_segment_count;
      parts.push(
        `<li>${swatch(c.color)}<strong>${e(c.name)}</strong> <span class="meta">${where ? `${e(where)} · ` : ''}${e(c.color)} · ${n} coding(s)</span>${c.memo ? `<br><span class="meta">${e(c.memo)}</span>` : ''}</li>`,
      );
    }
    parts.push('</ul>');
  }
  parts.push('</section>');
  parts.push('<nav><h2>Sources</h2><ol>');
  for (const src of s.sources) parts.push(`<li><a href="#source-${src.source_id}">${e(src.name)}</a> <span class="meta">(${e(src.type)})</span></li>`);
  parts.push('</ol></nav>');
  for (const src of s.sources) parts.push(renderSourceHtml(src, segBySource.get(src.source_id) ?? [], avBySource.get(src.source_id) ?? [], codes, codeCell));
  parts.push('</body>');
  parts.push('</html>');
  return `${parts.join('\n')}\n`;
}

function renderSourceHtml(
  src: SnapshotSource,
  segments: Segment[],
  av: AvSegment[],
  codes: Map<number, CodeWithCounts>,
  codeCell: (id: number) => string,
): string {
  const e = escapeHtml;
  const out: string[] = [];
  out.push(`<section class="source" id="source-${src.source_id}">`);
  out.push(`<h2>${e(src.name)}</h2>`);
  out.push(
    `<p class="meta">${e(src.type)} · ${src.length} character(s) · ${segments.length + av.length} coding(s)${src.origin ? ` · from ${e(src.origin)}` : ''}</p>`,
  );
  if (src.memo) out.push(`<p><strong>Memo:</strong> ${e(src.memo)}</p>`);
  if (src.text !== null) out.push(`<div class="text">${highlightedText(src.text, segments, codes)}</div>`);
  else out.push(`<p class="meta">No text: a ${e(src.type)} file${src.file_path ? ` (${e(src.file_path)})` : ''}.</p>`);
  if (segments.length > 0) {
    out.push('<h3>Codings</h3><table><thead><tr><th>Code</th><th>Start</th><th>End</th><th>Text</th><th>Memo</th><th>Coder</th></tr></thead><tbody>');
    for (const g of segments) {
      out.push(
        `<tr><td>${codeCell(g.code_id)}</td><td>${g.start_pos}</td><td>${g.end_pos}</td><td class="q">${e(g.text)}</td><td class="q">${e(g.memo ?? '')}</td><td>${e(g.owner)}</td></tr>`,
      );
    }
    out.push('</tbody></table>');
  }
  if (av.length > 0) {
    out.push('<h3>Time codings</h3><table><thead><tr><th>Code</th><th>From</th><th>To</th><th>Transcript</th><th>Memo</th><th>Coder</th></tr></thead><tbody>');
    for (const g of av) {
      out.push(
        `<tr><td>${codeCell(g.code_id)}</td><td>${clock(g.start_ms)}</td><td>${clock(g.end_ms)}</td><td class="q">${e(g.transcript ?? '')}</td><td class="q">${e(g.memo ?? '')}</td><td>${e(g.owner)}</td></tr>`,
      );
    }
    out.push('</tbody></table>');
  }
  out.push('</section>');
  return out.join('\n');
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

// ----- suggest_export_format ---------------------------------------------------------------------------------

/** Keywords (matched as whole words or word starts, case-insensitively) that point to each format, with why. */
const FORMAT_CUES: readonly { format: ExportFormat; words: readonly string[]; reason: string }[] = [
  {
    format: 'refi_qda',
    words: [
      'nvivo',
      'atlas',
      'atlas.ti',
      'atlasti',
      'maxqda',
      'qualcoder',
      'quirkos',
      'transana',
      'dedoose',
      'refi',
      'qdpx',
      'qde',
      'interoperab',
      'migrat',
      'switch',
      'another tool',
      'other tool',
      'other software',
      'archiv',
      'backup',
      'whole project',
      'colleague using',
      'exchange',
    ],
    reason:
      'REFI-QDA (.qdpx) is the exchange standard NVivo, ATLAS.ti, MAXQDA and QualCoder import: it carries the codebook, the sources with their texts, every coding with its coder and time, memos, cases and their attributes',
  },
  {
    format: 'codebook',
    words: [
      'codebook',
      'code book',
      'code list',
      'list of codes',
      'definitions',
      'review',
      'supervisor',
      'coding manual',
      'coding frame',
      'codeframe',
      'appendix',
      'methods section',
      'plain text',
      'txt',
    ],
    reason:
      'the plain-text codebook lists categories and codes with their colours, how often each was used and their memos: easy to read, review, paste into a methods appendix or compare in a diff',
  },
  {
    format: 'qdc',
    words: ['qdc', 'codebook exchange', 'import the codebook', 'share the codebook', 'codebook into', 'codebook to'],
    reason:
      'the REFI-QDA codebook file (.qdc) moves only the codebook (codes, nesting, colours, definitions) into another QDA tool, without sources or codings',
  },
  {
    format: 'html',
    words: [
      'read',
      'print',
      'browser',
      'web',
      'html',
      'present',
      'show',
      'participant',
      'highlight',
      'view',
      'share with',
      'send',
      'report',
      'pdf',
      'document',
    ],
    reason:
      'the HTML export shows every source with its coded passages highlighted in the codes’ colours and a legend: it opens in any browser, prints well, and needs no QDA software',
  },
  {
    format: 'segments_csv',
    words: [
      'statistic',
      'stats',
      'r',
      'rstudio',
      'tidyverse',
      'python',
      'pandas',
      'jupyter',
      'notebook',
      'spreadsheet',
      'excel',
      'csv',
      'quantitativ',
      'count',
      'frequenc',
      'cross-tab',
      'crosstab',
      'mixed method',
      'regression',
      'analysis',
      'analyse',
      'analyze',
      'table',
      'data frame',
      'dataframe',
      'sql',
    ],
    reason:
      'the segments CSV has one row per coded segment (source, code, positions, text, memo, coder, time): it loads straight into R, Python (pandas) or a spreadsheet for counting and statistics',
  },
];

/** A recommendation of {@link suggestExportFormat}. */
export interface ExportSuggestion {
  use_case: string;
  recommended: ExportFormat;
  extension: string;
  reasons: string[];
  /** the keywords of the use case that pointed to the recommended format */
  matched: string[];
  /** the other formats that fit too, best first, with why */
  alternatives: { format: ExportFormat; extension: string; reason: string; matched: string[] }[];
  /** every format export_data writes */
  formats: { format: ExportFormat; extensions: readonly string[]; description: string }[];
}

/** True when `cue` occurs in `text` as a word or the start of one (`text` lower-cased, words split on non-letters). */
function matchesCue(text: string, cue: string): boolean {
  const escaped = cue.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  // a one- or two-letter cue (R) must be a whole word; longer ones may start a word (statistic -> statistics)
  const tail = cue.length <= 2 ? '(?![\\p{L}\\p{N}])' : '';
  return new RegExp(`(?<![\\p{L}\\p{N}])${escaped}${tail}`, 'u').test(text);
}

/**
 * Recommends an export format for a use case described in words, by keywords: sharing with NVivo, ATLAS.ti,
 * MAXQDA or another QDA tool -> refi_qda; reviewing the codebook -> codebook (or qdc to move it into another
 * tool); reading, printing or showing -> html; statistics, R, Python, spreadsheets -> segments_csv. The format
 * with the most matching cues wins (ties in that order); with no cue at all, refi_qda, the most complete.
 */
export function suggestExportFormat(useCase: string): ExportSuggestion {
  const text = useCase.toLowerCase();
  const scored = FORMAT_CUES.map((cue, order) => ({ ...cue, order, matched: cue.words.filter((w) => matchesCue(text, w)) }));
  const ranked = [...scored].sort((a, b) => b.matched.length - a.matched.length || a.order - b.order);
  const best = ranked[0] as (typeof ranked)[number];
  const none = best.matched.length === 0;
  const reasons = none
    ? ['No keyword of the use case points to a particular format, so the most complete one is recommended: ' + (scored[0] as (typeof scored)[number]).reason]
    : [`The use case mentions ${best.matched.map((m) => `"${m}"`).join(', ')}: ${best.reason}`];
  const recommended = none ? 'refi_qda' : best.format;
  if (recommended === 'refi_qda')
    reasons.push('Positions in the file count Unicode code points, as the standard says; tools that count otherwise may shift codings after emoji.');
  return {
    use_case: useCase,
    recommended,
    extension: EXPORT_FORMATS[recommended].extensions[0] as string,
    reasons,
    matched: none ? [] : best.matched,
    alternatives: ranked
      .filter((r) => r.format !== recommended && r.matched.length > 0)
      .map((r) => ({ format: r.format, extension: EXPORT_FORMATS[r.format].extensions[0] as string, reason: r.reason, matched: r.matched })),
    formats: (Object.keys(EXPORT_FORMATS) as ExportFormat[]).map((f) => ({
      format: f,
      extensions: EXPORT_FORMATS[f].extensions,
      description: EXPORT_FORMATS[f].description,
    })),
  };
}
