/**
 * Exports of a retrieval (src/domain/retrieval.ts; the Retrieval view's Export): CSV, Markdown and a
 * standalone HTML page. Pure functions from the result to text; the caller writes the file. No positions:
 * a passage is named by its source and speaker or paragraph, as the researcher reads it.
 *
 * - CSV: RFC 4180 with one header row `Source,Speaker,Paragraph,Codes,Coders,Text` (CRLF line ends,
 *   fields with a comma, quote or line break quoted, quotes doubled; text a spreadsheet would read as a
 *   formula gets a leading apostrophe: {@link csvField}, OWASP "CSV Injection"). Codes and coders are
 *   joined with "; ".
 * - Markdown (CommonMark): a title, the filters, then per source a `##` heading and each passage as a block
 *   quote under a bold line with its place and codes. What Markdown could read as markup is backslash-escaped
 *   ({@link escapeMarkdown}; CommonMark 0.31, section 2.4), so the rendered text is the passage's text.
 * - HTML: one page, no scripts (a Content-Security-Policy meta forbids them), every text escaped
 *   (`& < > " '`), line breaks kept (`white-space: pre-wrap`).
 */
import { COMBINATION_WORDS, passagePlace, type RetrievalResult, type RetrievedPassage } from '../domain/retrieval';
import { countOf } from '../core/plural';
import { csvField, escapeHtml } from './reportFormats';

/** The export formats of a retrieval, which are also the file extensions. */
export const RETRIEVAL_FORMATS = ['csv', 'md', 'html'] as const;
/** One of {@link RETRIEVAL_FORMATS}. */
export type RetrievalFormat = (typeof RETRIEVAL_FORMATS)[number];

/** What an export says about the query: a title and the filters in words (describeRetrieval). */
export interface RetrievalHeading {
  title: string;
  filters: readonly string[];
}

/** Renders `result` in `format` (see the module comment). */
export function renderRetrieval(result: RetrievalResult, heading: RetrievalHeading, format: RetrievalFormat): string {
  if (format === 'csv') return toCsv(result);
  if (format === 'md') return toMarkdown(result, heading);
  return toHtml(result, heading);
}

const names = (p: RetrievedPassage) => p.codes.map((c) => c.name).join('; ');

function toCsv(r: RetrievalResult): string {
  const lines = [['Source', 'Speaker', 'Paragraph', 'Codes', 'Coders', 'Text'].join(',')];
  for (const p of r.passages)
    lines.push(
      [csvField(p.source_name), csvField(p.speaker), csvField(p.paragraph), csvField(names(p)), csvField(p.coders.join('; ')), csvField(p.text)].join(','),
    );
  return `${lines.join('\r\n')}\r\n`;
}

/**
 * `text` with what CommonMark could read as markup backslash-escaped: `` \ ` * _ [ ] < > | ~ & `` anywhere, and
 * at the start of the text a `#`, `+`, `-` or `=` (headings, list items, setext underlines) and the dot or
 * parenthesis of a number (ordered list items). Rendered, the result reads as `text`.
 */
export function escapeMarkdown(text: string): string {
  return text
    .replace(/[\\`*_[\]<>|~&]/g, (c) => `\\${c}`)
    .replace(/^(\s*)([#+\-=])/, '$1\\$2')
    .replace(/^(\s*\d+)([.)])/, '$1\\$2');
}

function summary(r: RetrievalResult): string {
  return `${countOf(r.passages.length, 'passage')} in ${countOf(r.source_count, 'source')}`;
}

/** The passages grouped by source, in the result's order. */
function bySource(r: RetrievalResult): { name: string; passages: RetrievedPassage[] }[] {
  const out: { id: number; name: string; passages: RetrievedPassage[] }[] = [];
  for (const p of r.passages) {
    const last = out[out.length - 1];
    if (last && last.id === p.source_id) last.passages.push(p);
    else out.push({ id: p.source_id, name: p.source_name, passages: [p] });
  }
  return out;
}

function toMarkdown(r: RetrievalResult, h: RetrievalHeading): string {
  const lines = [`# ${escapeMarkdown(h.title)}`, '', `${escapeMarkdown(COMBINATION_WORDS[r.combine].label)}; ${escapeMarkdown(summary(r))}.`];
  if (h.filters.length > 0) lines.push('', ...h.filters.map((f) => `- ${escapeMarkdown(f)}`));
  for (const s of bySource(r)) {
    lines.push('', `## ${escapeMarkdown(s.name)}`);
    for (const p of s.passages) {
      lines.push('', `**${escapeMarkdown(passagePlace(p))}** · ${escapeMarkdown(names(p).replace(/; /g, ', '))}`, '');
      for (const line of p.text.split(/\r?\n/)) lines.push(line.trim() === '' ? '>' : `> ${escapeMarkdown(line)}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

function toHtml(r: RetrievalResult, h: RetrievalHeading): string {
  const parts = [
    '<!DOCTYPE html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">`,
    `<title>${escapeHtml(h.title)}</title>`,
    '<style>body{font-family:sans-serif;margin:2em;max-width:50em}blockquote{white-space:pre-wrap;margin:0.3em 0 1em;padding-left:1em;border-left:4px solid #bbb}.where{font-weight:bold}.codes{color:#555}</style>',
    '</head>',
    '<body>',
    `<h1>${escapeHtml(h.title)}</h1>`,
    `<p>${escapeHtml(COMBINATION_WORDS[r.combine].label)}; ${escapeHtml(summary(r))}.</p>`,
  ];
  if (h.filters.length > 0) parts.push(`<ul>${h.filters.map((f) => `<li>${escapeHtml(f)}</li>`).join('')}</ul>`);
  for (const s of bySource(r)) {
    parts.push(`<h2>${escapeHtml(s.name)}</h2>`);
    for (const p of s.passages) {
      parts.push(
        `<p><span class="where">${escapeHtml(passagePlace(p))}</span> · <span class="codes">${escapeHtml(names(p).replace(/; /g, ', '))}</span></p>`,
        `<blockquote>${escapeHtml(p.text)}</blockquote>`,
      );
    }
  }
  parts.push('</body>', '</html>');
  return `${parts.join('\n')}\n`;
}
