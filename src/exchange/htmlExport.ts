/**
 * export_data's `html` format: the project as one self-contained HTML page, a legend of the codes and their
 * colours, then every source with its coded passages highlighted in their codes' colours and a table of its
 * codings. Every character of every source, name and memo is escaped; the page has no scripts, and a
 * Content-Security-Policy that forbids them. Positions count Unicode code points; AV positions are milliseconds.
 */
import { ToolError } from '../core/errors';
import { OffsetMap } from '../core/offsets';
import type { Segment } from '../domain/model';
import type { AvSegment, CodeWithCounts } from '../domain/ports';
import { categoryPath, type ProjectSnapshot, type SnapshotSource } from './projectSnapshot';

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
