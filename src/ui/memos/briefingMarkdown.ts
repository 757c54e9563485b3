/**
 * The project briefing's research frame (agent-context spec, section 2: description, research_questions,
 * methodology) as one Markdown document the researcher edits in a tab, and back (issue 13, item 6). Pure: no
 * `vscode`, so plain Node tests cover it.
 *
 * The document:
 *
 * ```markdown
 * # Project briefing
 *
 * ## Description
 *
 * <free Markdown text>
 *
 * ## Research questions
 *
 * 1. <one question per list item>
 * 2. ...
 *
 * ## Methodology
 *
 * <free Markdown text>
 * ```
 *
 * Parsing is forgiving where it can be: the three headings are found at any level (`#` to `######`), in any
 * order, case-insensitively, with or without a trailing colon or closing `#`s; anything before the first of
 * them (the title, a note) is ignored; a section's text is kept exactly, less the blank lines around it.
 * Research questions are the section's list items (`-`, `*`, `+`, `1.`, `1)`), each with its continuation
 * lines joined by one space; a section with no list marker gives one question per non-empty line. Headings
 * inside fenced code blocks are not headings.
 */

/** The research frame as the briefing tab edits it. */
export interface BriefingFrame {
  description: string;
  research_questions: string[];
  methodology: string;
}

/** The three section headings, in the document's order. */
export const BRIEFING_HEADINGS = { description: 'Description', research_questions: 'Research questions', methodology: 'Methodology' } as const;

type Field = keyof typeof BRIEFING_HEADINGS;
const FIELDS: readonly Field[] = ['description', 'research_questions', 'methodology'];

/** Why a briefing document could not be read back: names the missing or repeated heading. */
export class BriefingFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BriefingFormatError';
  }
}

/**
 * The briefing document of `frame` (see the module comment), lines ending in `\n`. Research questions
 * are numbered items; a question with line breaks gets indented continuation lines (read back joined by spaces).
 */
export function renderBriefing(frame: BriefingFrame): string {
  const questions = frame.research_questions.map((q, i) => `${i + 1}. ${q.replace(/\r?\n/g, '\n   ')}`).join('\n');
  const section = (title: string, body: string) => `## ${title}\n\n${body.trim() === '' ? '' : `${body.replace(/\s+$/, '')}\n\n`}`;
  return (
    '# Project briefing\n\n' +
    '<!-- What agents read as qda://project/briefing. Keep the three headings; save (Ctrl+S) to store it in the project. -->\n\n' +
    section(BRIEFING_HEADINGS.description, frame.description) +
    section(BRIEFING_HEADINGS.research_questions, questions) +
    section(BRIEFING_HEADINGS.methodology, frame.methodology)
  ).replace(/\n+$/, '\n');
}

const HEADING = /^ {0,3}(#{1,6})[ \t]+(.*?)[ \t]*(?:#+[ \t]*)?$/;
const FENCE = /^ {0,3}(`{3,}|~{3,})/;
const LIST_ITEM = /^[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+(.*)$/;

/** The field a heading's text names, if any (case-insensitive, a trailing colon allowed). */
function fieldOf(title: string): Field | undefined {
  const t = title.replace(/:$/, '').trim().toLowerCase();
  return FIELDS.find((f) => BRIEFING_HEADINGS[f].toLowerCase() === t);
}

/**
 * Reads a briefing document back (see the module comment). CRLF line ends are accepted.
 * Throws {@link BriefingFormatError} when a heading is missing or given twice, naming it.
 */
export function parseBriefing(markdown: string): BriefingFrame {
  const lines = markdown.split(/\r?\n/);
  const starts = new Map<Field, number>();
  let fence: string | undefined;
  lines.forEach((line, i) => {
    const f = FENCE.exec(line);
    if (f) {
      const marker = f[1] ?? '';
      if (fence === undefined) fence = marker[0];
      else if (marker[0] === fence) fence = undefined;
      return;
    }
    if (fence !== undefined) return;
    const h = HEADING.exec(line);
    if (!h) return;
    const field = fieldOf(h[2] ?? '');
    if (!field) return;
    if (starts.has(field)) throw new BriefingFormatError(`The heading "## ${BRIEFING_HEADINGS[field]}" appears twice; keep one.`);
    starts.set(field, i);
  });
  const missing = FIELDS.filter((f) => !starts.has(f));
  if (missing.length > 0) {
    const names = missing.map((f) => `"## ${BRIEFING_HEADINGS[f]}"`).join(', ');
    throw new BriefingFormatError(
      `The briefing needs the heading${missing.length > 1 ? 's' : ''} ${names}: the three sections are Description, Research questions and Methodology.`,
    );
  }
  // a section runs to the next heading of one of the three fields (sub-headings inside a section belong to it)
  const fieldStarts = [...starts.values()].sort((a, b) => a - b);
  const body = (field: Field): string => {
    const from = (starts.get(field) ?? 0) + 1;
    const to = fieldStarts.find((s) => s >= from) ?? lines.length;
    const part = lines.slice(from, to);
    while (part.length > 0 && (part[0] ?? '').trim() === '') part.shift();
    while (part.length > 0 && (part[part.length - 1] ?? '').trim() === '') part.pop();
    return part.join('\n');
  };
  return { description: body('description'), research_questions: questionsOf(body('research_questions')), methodology: body('methodology') };
}

/** The research questions of a section's text: its list items, else its non-empty lines. */
function questionsOf(text: string): string[] {
  const lines = text.split('\n').filter((l) => !/^\s*<!--.*-->\s*$/.test(l));
  if (!lines.some((l) => LIST_ITEM.test(l))) return lines.map((l) => l.trim()).filter((l) => l !== '');
  const out: string[] = [];
  for (const line of lines) {
    const item = LIST_ITEM.exec(line);
    if (item) out.push((item[1] ?? '').trim());
    else if (line.trim() !== '' && out.length > 0) out[out.length - 1] = `${out[out.length - 1]} ${line.trim()}`.trim();
  }
  return out.filter((q) => q !== '');
}
