/**
 * Meaning units of a text: the ranges the suggestion tools work on, so that a suggestion never covers a
 * whole document. A transcript is split at speaker turns; other text at paragraphs; any unit longer than
 * {@link MAX_UNIT_LENGTH} code points is split further at sentence boundaries. Positions count Unicode
 * code points, ranges are half-open `[start, end)` and never include the surrounding white space.
 *
 * Speaker turns are recognised line by line, in the forms the shared corpus holds:
 * - `NAME: text`, `Name Surname: text`, `Researcher 1: text` (UPPERCASE or Title Case words, then a colon),
 *   optionally after a bracketed timestamp: `[00:01:12] INTERVIEWER: text`;
 * - `[id1] text` (a bracketed label holding a capital or a digit, then the utterance; `[laughs]` is not one);
 * - `Name Surname  00:13` on a line of its own, the utterance on the following lines (Otter.ai exports).
 * A line holding only a bracketed timestamp (`[00:00:00:03]`, Spacelog) belongs to the next turn. The
 * label and timestamps are not part of the unit. Sentences come from `Intl.Segmenter` (Unicode UAX #29
 * sentence boundaries), which ships with Node.
 */
import { hasAstral } from '../core/text';

/** Longest unit, in code points, before it is split at sentence boundaries. */
export const MAX_UNIT_LENGTH = 800;

/** How a unit was delimited. */
export type UnitKind = 'turn' | 'paragraph' | 'sentences';

/** One meaning unit: `[start, end)` in code points, how it was delimited, and the speaker of a turn. */
export interface TextUnit {
  start: number;
  end: number;
  kind: UnitKind;
  speaker: string | null;
}

const TIMESTAMP = String.raw`\[[0-9]{1,2}(?::[0-9]{1,2}){1,3}(?:[.,][0-9]+)?\]|\[-[0-9:]+\]`;
const NAME = String.raw`[\p{Lu}\p{Lt}][\p{L}\p{M}\p{N}'’.\-]*(?: [\p{Lu}\p{Lt}\p{N}][\p{L}\p{M}\p{N}'’.\-]*){0,3}`;
/** `[ts] NAME: text` */
const LABEL_LINE = new RegExp(String.raw`^[ \t]*(?:(?:${TIMESTAMP})[ \t]*)?(${NAME})[ \t]*:(?![0-9/])[ \t]*`, 'u');
/** `[ts] [label] text` with a non-timestamp label */
const BRACKET_LINE = new RegExp(String.raw`^[ \t]*(?:(?:${TIMESTAMP})[ \t]*)?\[([^\]\n:]{1,30})\][ \t]*(?=\S)`, 'u');
/** `Name  00:13` alone on a line (Otter.ai) */
const HEADER_LINE = new RegExp(String.raw`^[ \t]*(${NAME})[ \t]{2,}[0-9]{1,2}:[0-9]{2}(?::[0-9]{2})?[ \t]*$`, 'u');
/** a line holding only a bracketed timestamp */
const TIMESTAMP_LINE = new RegExp(String.raw`^[ \t]*(?:${TIMESTAMP})[ \t]*$`, 'u');

interface Turn {
  /** where the previous unit must end (UTF-16): the start of the label line or of a timestamp line before it */
  breakAt: number;
  /** where the utterance starts (UTF-16) */
  contentStart: number;
  speaker: string;
}

/** Speaker turns found line by line (UTF-16 offsets). */
function findTurns(text: string): Turn[] {
  const turns: Turn[] = [];
  let lineStart = 0;
  let pendingBreak: number | null = null;
  while (lineStart <= text.length) {
    let lineEnd = text.indexOf('\n', lineStart);
    if (lineEnd < 0) lineEnd = text.length;
    const line = text.slice(lineStart, lineEnd).replace(/\r$/, '');
    let m: RegExpExecArray | null;
    if (TIMESTAMP_LINE.test(line)) {
      pendingBreak ??= lineStart;
    } else if ((m = HEADER_LINE.exec(line))) {
      turns.push({ breakAt: pendingBreak ?? lineStart, contentStart: Math.min(text.length, lineEnd + 1), speaker: m[1]! });
      pendingBreak = null;
    } else if ((m = LABEL_LINE.exec(line))) {
      turns.push({ breakAt: pendingBreak ?? lineStart, contentStart: lineStart + m[0].length, speaker: m[1]!.trim() });
      pendingBreak = null;
    } else if ((m = BRACKET_LINE.exec(line)) && /[\p{Lu}\p{N}]/u.test(m[1]!) && !/^[0-9:.,-]+$/.test(m[1]!.trim())) {
      // a bracketed label names a speaker only with a capital or a digit ([id1], [P2], [Interviewer]);
      // [laughs] or [percent] at the start of a line is an annotation, [00:12] a timestamp
      turns.push({ breakAt: pendingBreak ?? lineStart, contentStart: lineStart + m[0].length, speaker: m[1]!.trim() });
      pendingBreak = null;
    } else if (line.trim() !== '') {
      pendingBreak = null;
    }
    if (lineEnd >= text.length) break;
    lineStart = lineEnd + 1;
  }
  return turns;
}

/** `[start, end)` (UTF-16) without leading and trailing white space, or null when nothing is left. */
function trimRange(text: string, start: number, end: number): [number, number] | null {
  while (start < end && /\s/.test(text[start]!)) start++;
  while (end > start && /\s/.test(text[end - 1]!)) end--;
  return end > start ? [start, end] : null;
}

let sentenceSegmenter: Intl.Segmenter | undefined;

/** Sentence ranges (UTF-16) of `text.slice(start, end)`, by UAX #29. */
function sentences(text: string, start: number, end: number): [number, number][] {
  sentenceSegmenter ??= new Intl.Segmenter('en', { granularity: 'sentence' });
  const out: [number, number][] = [];
  for (const s of sentenceSegmenter.segment(text.slice(start, end))) {
    const r = trimRange(text, start + s.index, start + s.index + s.segment.length);
    if (r) out.push(r);
  }
  return out;
}

/** Converts UTF-16 offsets of one text to code points in O(1) per call after an O(n) table (only when needed). */
function cpConverter(text: string): (u: number) => number {
  if (!hasAstral(text)) return (u) => u;
  const table = new Int32Array(text.length + 1);
  let cp = 0;
  for (let i = 0; i < text.length; i++) {
    table[i] = cp;
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        table[i + 1] = cp;
        i++;
      }
    }
    cp++;
  }
  table[text.length] = cp;
  return (u) => table[u]!;
}

/**
 * Splits `text` into meaning units (see the module comment): speaker turns when the text has at least
 * two, else paragraphs (blank-line separated); units longer than `maxLength` code points are cut into
 * runs of whole sentences of at most `maxLength` (a single longer sentence stays whole). Text before the
 * first turn (a title, a header) is split into paragraphs. Units are in text order, never overlap, and
 * exclude speaker labels, timestamp lines and surrounding white space. Positions in code points.
 */
export function splitUnits(text: string, opts: { maxLength?: number } = {}): TextUnit[] {
  const maxLength = opts.maxLength ?? MAX_UNIT_LENGTH;
  const toCp = cpConverter(text);
  const units: TextUnit[] = [];
  const push = (start: number, end: number, kind: UnitKind, speaker: string | null) => {
    const r = trimRange(text, start, end);
    if (!r) return;
    const [s, e] = r;
    if (toCp(e) - toCp(s) <= maxLength) {
      units.push({ start: toCp(s), end: toCp(e), kind, speaker });
      return;
    }
    // pack whole sentences into runs of at most maxLength code points
    let runStart = -1;
    let runEnd = -1;
    for (const [a, b] of sentences(text, s, e)) {
      if (runStart >= 0 && toCp(b) - toCp(runStart) > maxLength) {
        units.push({ start: toCp(runStart), end: toCp(runEnd), kind: kind === 'turn' ? 'turn' : 'sentences', speaker });
        runStart = -1;
      }
      if (runStart < 0) runStart = a;
      runEnd = b;
    }
    if (runStart >= 0) units.push({ start: toCp(runStart), end: toCp(runEnd), kind: kind === 'turn' ? 'turn' : 'sentences', speaker });
  };
  const paragraphs = (start: number, end: number) => {
    const re = /\r?\n[ \t]*\r?\n/g;
    re.lastIndex = start;
    let from = start;
    for (let m = re.exec(text); m && m.index < end; m = re.exec(text)) {
      push(from, m.index, 'paragraph', null);
      from = m.index + m[0].length;
    }
    push(from, end, 'paragraph', null);
  };
  const turns = findTurns(text);
  if (turns.length < 2) {
    paragraphs(0, text.length);
    return units;
  }
  paragraphs(0, turns[0]!.breakAt);
  turns.forEach((t, i) => push(t.contentStart, turns[i + 1]?.breakAt ?? text.length, 'turn', t.speaker));
  return units;
}

/**
 * Merges half-open ranges into disjoint, sorted ones (touching ranges join).
 */
export function mergeRanges(ranges: readonly { start: number; end: number }[]): { start: number; end: number }[] {
  const sorted = [...ranges].filter((r) => r.end > r.start).sort((a, b) => a.start - b.start || a.end - b.end);
  const out: { start: number; end: number }[] = [];
  for (const r of sorted) {
    const last = out[out.length - 1];
    if (last && r.start <= last.end) last.end = Math.max(last.end, r.end);
    else out.push({ start: r.start, end: r.end });
  }
  return out;
}

/**
 * The parts of each unit not covered by `covered` (disjoint, sorted ranges as {@link mergeRanges} returns
 * them), with white space trimmed; parts with fewer than `minChars` letters or digits are dropped.
 * `text` is the source text the positions (code points) refer to.
 */
export function uncoveredParts(text: string, units: readonly TextUnit[], covered: readonly { start: number; end: number }[], minChars = 3): TextUnit[] {
  const cps = hasAstral(text) ? Array.from(text) : null;
  const at = (i: number) => (cps ? cps[i]! : text[i]!);
  const out: TextUnit[] = [];
  const emit = (u: TextUnit, start: number, end: number) => {
    while (start < end && /\s/.test(at(start))) start++;
    while (end > start && /\s/.test(at(end - 1))) end--;
    let letters = 0;
    for (let i = start; i < end && letters < minChars; i++) if (/[\p{L}\p{N}]/u.test(at(i))) letters++;
    if (letters >= minChars) out.push({ ...u, start, end });
  };
  let k = 0;
  for (const u of units) {
    while (k < covered.length && covered[k]!.end <= u.start) k++;
    let pos = u.start;
    for (let j = k; j < covered.length && covered[j]!.start < u.end; j++) {
      const c = covered[j]!;
      if (c.start > pos) emit(u, pos, Math.min(c.start, u.end));
      pos = Math.max(pos, c.end);
    }
    if (pos < u.end) emit(u, pos, u.end);
  }
  return out;
}
