/**
 * Speaker detection in transcripts: pure functions over text, no I/O.
 *
 * The label formats are the HTTP spec's (`shared/spec/http-tool-interface.md`, AV coding, rules 1-2):
 * UPPERCASE followed by a colon, Title Case followed by a colon, a label in square brackets, with bracketed
 * timestamps stripped first. The patterns follow the reference detector described in
 * `shared/notes/mission-anchors.md` (b.10: uppercase, then Title Case, then bracket, first match wins,
 * one line at a time), widened for what real transcripts hold (`shared/notes/corpus.md`, "Transcript formats
 * observed"): digits in labels (`BELL 7:`, `Researcher 1:`), one-letter labels (`P:`), Spacelog's negative
 * times (`[-00:00:00:03]`) and metadata lines (`_page : 148`), Otter.ai turn headers (`Sara Mannheimer  00:13`,
 * two spaces, no colon), and WebVTT voices (`<v Name>`, `<v.loud Name>`; W3C WebVTT, "cue text parsing rules").
 *
 * Positions are Unicode code points of the given text (as every Marginalia text position).
 */
import { OffsetMap } from '../core/offsets';

/**
 * How a speaker was marked: a label format of the text, a WebVTT voice, or `transcriber` when a transcription
 * server named the speaker (diarization) rather than the text.
 */
export type SpeakerLabelFormat = 'uppercase' | 'title_case' | 'bracket' | 'otter' | 'webvtt_voice' | 'transcriber';

/** The layout a text was read as: a WebVTT file, an SRT file, or a plain (possibly timestamped) transcript. */
export type TranscriptLayout = 'webvtt' | 'srt' | 'text';

/** One speaker label found in a text. `start`/`end` bound the label itself (code points, end exclusive). */
export interface SpeakerTurn {
  speaker: string;
  format: SpeakerLabelFormat;
  start: number;
  end: number;
}

/** A speaker with how many turns (labels) the text gives it and where its first label starts (code points). */
export interface DetectedSpeaker {
  name: string;
  turns: number;
  first_pos: number;
  format: SpeakerLabelFormat;
}

/** What {@link detectSpeakers} found: speakers in order of first appearance. */
export interface SpeakerDetection {
  layout: TranscriptLayout;
  speakers: DetectedSpeaker[];
  /** all labels found (the sum of the speakers' turns) */
  total_turns: number;
}

/** A label found at the start of one line of text (UTF-16 offsets within that line). */
export interface LineLabel {
  speaker: string;
  format: Exclude<SpeakerLabelFormat, 'webvtt_voice' | 'transcriber'>;
  /** where the label starts in the line */
  start: number;
  /** where the label (with its colon or bracket) ends */
  end: number;
  /** where the spoken text after the label starts (after following blanks) */
  textStart: number;
}

/** Longest label accepted, in characters; longer "labels" are sentences with a colon. */
const MAX_LABEL_LENGTH = 40;
/** Most words in a label. */
const MAX_LABEL_WORDS = 5;

/**
 * A timestamp in square brackets: `[12:34]`, `[00:12:34]`, `[1:02:03.500]`, Spacelog's four-part
 * `[DD:HH:MM:SS]` and negative `[-00:00:00:03]`.
 */
export const BRACKET_TIMESTAMP = /\[-?\d{1,3}(?::\d{1,2}){1,3}(?:[.,]\d{1,3})?\]/g;
/** Timestamps in brackets at the start of a line, with the blanks after them. */
const LEADING_TIMESTAMPS = /^(?:[ \t]*\[-?\d{1,3}(?::\d{1,2}){1,3}(?:[.,]\d{1,3})?\])+[ \t]*/;

const UPPER_WORD = String.raw`\p{Lu}[\p{Lu}\p{N}'’&.\-]*`;
const NUMBER = String.raw`\p{N}+`;
const TITLE_WORD = String.raw`\p{Lu}[\p{L}\p{M}'’]*(?:[\-.][\p{L}\p{M}'’]*)*`;
/** Lower-case name particles allowed inside a Title Case name ("Ludwig van Beethoven", "Neil deGrasse Tyson" is one word). */
const PARTICLE = String.raw`(?:de|da|di|del|della|der|den|des|du|dos|das|van|von|la|le|bin|ibn|al|el|ten|ter)`;

/** `LCC:`, `BELL 7:`, `P:`: uppercase words (and numbers after the first), then a colon and a blank or the line end. */
const UPPER_LABEL = new RegExp(String.raw`^(${UPPER_WORD}(?:[ \t]+(?:${UPPER_WORD}|${NUMBER}))*):(?=\s|$)`, 'u');
/** `Researcher 1:`, `Sara Mannheimer:`, `Ana:`: capitalised words (numbers and particles after the first), then a colon. */
const TITLE_LABEL = new RegExp(String.raw`^(${TITLE_WORD}(?:[ \t]+(?:${TITLE_WORD}|${NUMBER}|${PARTICLE}))*):(?=\s|$)`, 'u');
/** `[id1] text`, `[Interviewer]: text`: a short label in brackets followed by text on the same line. */
const BRACKET_LABEL = /^\[([\p{L}\p{N}][\p{L}\p{M}\p{N} ._'’-]*)\]:?[ \t]+(?=\S)/u;
/** Otter.ai turn header: `Sara Mannheimer  00:13` (two or more spaces or a tab, then `MM:SS` or `H:MM:SS`, nothing after). */
const OTTER_LINE = /^([\p{L}\p{N}][\p{L}\p{M}\p{N}'’._-]*(?: [\p{L}\p{M}\p{N}'’._-]+)*)(?: {2,}|\t+)(?:\d{1,2}:)?\d{1,2}:\d{2}[ \t]*$/u;
/** A WebVTT voice start tag with a name: `<v Name>`, `<v.loud Name>`, `<v.first.loud Joe>` (the name runs to `>`). */
const VOICE_TAG = /<v(?:\.[^\s.>]+)*[ \t]+([^>\r\n]*)>/g;
/** A WebVTT/SRT timing line. */
const TIMING_LINE = /^\s*(?:\d+:)?\d{1,2}:\d{1,2}[.,]\d{1,3}\s+-->\s+(?:\d+:)?\d{1,2}:\d{1,2}[.,]\d{1,3}/;

/**
 * Bracketed words that are transcription annotations, not speakers (`[inaudible] yes`, `[Name Redacted] said`).
 * Common conventions of transcription services and the corpus (`[Name Redacted]` in the Sheffield interviews).
 */
const NON_SPEECH =
  /\b(?:inaudible|unintelligible|unclear|crosstalk|cross-talk|overlapping|laugh\w*|chuckl\w*|cough\w*|sigh\w*|pause\w*|silence|music|applause|noise|redacted|sic|indistinct|phonetic|break|interruption)\b/iu;

/** Whitespace collapsed to single spaces and trimmed: the form speaker names are compared and returned in. */
export function normalizeSpeaker(name: string): string {
  return name.replace(/\s+/gu, ' ').trim();
}

/** True when `label` is short enough (characters and words) to be a speaker label rather than a sentence. */
function labelSized(label: string): boolean {
  return label.length <= MAX_LABEL_LENGTH && label.split(/\s+/u).filter(Boolean).length <= MAX_LABEL_WORDS;
}

/**
 * `line` with every bracketed timestamp ({@link BRACKET_TIMESTAMP}) replaced by as many spaces, so that
 * positions in the line stay valid (as QualCoder's speakers.py blanks them).
 */
export function stripBracketTimestamps(line: string): string {
  return line.replace(BRACKET_TIMESTAMP, (m) => ' '.repeat(m.length));
}

/**
 * The speaker label at the start of one line, or null. Leading bracketed timestamps (and the blanks after
 * them) are skipped first; otherwise the label must start the line, so indented continuation lines (as in
 * the Spacelog transcripts) are never labels. Tried in order, first match wins:
 * 1. Otter.ai turn header `Name  MM:SS` (the whole line);
 * 2. UPPERCASE label and colon (`LCC:`, `BELL 7:`);
 * 3. Title Case label and colon (`Researcher 1:`, `Sara Mannheimer:`);
 * 4. bracketed label followed by text (`[id1] text`), unless the brackets hold an annotation such as
 *    `[inaudible]` or `[Name Redacted]`.
 * Labels longer than 40 characters or 5 words are taken for sentences and ignored.
 */
export function matchLineLabel(line: string): LineLabel | null {
  const prefix = LEADING_TIMESTAMPS.exec(line)?.[0].length ?? 0;
  const rest = stripBracketTimestamps(line.slice(prefix));
  if (rest.length === 0) return null;
  const otter = OTTER_LINE.exec(rest);
  if (otter && labelSized(otter[1] as string) && /\p{L}/u.test(otter[1] as string)) {
    const name = otter[1] as string;
    return { speaker: normalizeSpeaker(name), format: 'otter', start: prefix, end: prefix + rest.trimEnd().length, textStart: line.length };
  }
  for (const [re, format] of [
    [UPPER_LABEL, 'uppercase'],
    [TITLE_LABEL, 'title_case'],
  ] as const) {
    const m = re.exec(rest);
    if (m && labelSized(m[1] as string)) {
      const end = prefix + m[0].length;
      return { speaker: normalizeSpeaker(m[1] as string), format, start: prefix, end, textStart: end + blanksAt(line, end) };
    }
  }
  const b = BRACKET_LABEL.exec(rest);
  if (b && labelSized(b[1] as string) && !NON_SPEECH.test(b[1] as string)) {
    const close = rest.indexOf(']') + 1 + (rest[rest.indexOf(']') + 1] === ':' ? 1 : 0);
    return { speaker: normalizeSpeaker(b[1] as string), format: 'bracket', start: prefix, end: prefix + close, textStart: prefix + b[0].length };
  }
  return null;
}

/** Number of spaces and tabs at `i` in `s`. */
function blanksAt(s: string, i: number): number {
  let n = 0;
  while (i + n < s.length && (s[i + n] === ' ' || s[i + n] === '\t')) n++;
  return n;
}

/** The few character references WebVTT cue text uses (W3C WebVTT, "cue text tokenizer"); others are kept as written. */
const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', nbsp: '\u00a0', lrm: '\u200e', rlm: '\u200f', quot: '"', apos: "'" };

/** `s` with WebVTT's named character references decoded. */
export function decodeVttEntities(s: string): string {
  return s.replace(/&(amp|lt|gt|nbsp|lrm|rlm|quot|apos);/g, (_, n: string) => ENTITIES[n] ?? _);
}

/**
 * The layout of a text: `webvtt` when it starts with the `WEBVTT` signature (a byte-order mark allowed),
 * `srt` when its first non-blank line is a cue number and the next a timing line `00:00:01,000 --> ...`,
 * else `text`.
 */
export function sniffLayout(text: string): TranscriptLayout {
  const t = text.startsWith('\uFEFF') ? text.slice(1) : text;
  if (/^WEBVTT(?:[ \t\r\n]|$)/.test(t)) return 'webvtt';
  const lines = t.split(/\r\n|\r|\n/, 12);
  const first = lines.findIndex((l) => l.trim() !== '');
  if (first >= 0 && /^\d+\s*$/.test(lines[first] as string) && TIMING_LINE.test(lines[first + 1] ?? '')) return 'srt';
  return 'text';
}

/** One line of a text with its UTF-16 start offset. */
interface Line {
  text: string;
  at: number;
}

/** The lines of `text` (CRLF, CR and LF ends), each with its UTF-16 offset. */
function linesOf(text: string): Line[] {
  const out: Line[] = [];
  const re = /\r\n|\r|\n/g;
  let at = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    out.push({ text: text.slice(at, m.index), at });
    at = m.index + m[0].length;
  }
  out.push({ text: text.slice(at), at });
  return out;
}

/** Labels in UTF-16 offsets of the whole text (converted to code points at the end). */
interface RawTurn {
  speaker: string;
  format: SpeakerLabelFormat;
  start: number;
  end: number;
}

/**
 * Labels in one cue payload line of a WebVTT or SRT file: every voice tag with a name, or, when the line
 * has none, a label at its start (matched with tags such as `<i>` removed, so `<i>Mary:</i> Hi` counts).
 */
function cueLineTurns(line: Line, out: RawTurn[]): void {
  let voices = 0;
  VOICE_TAG.lastIndex = 0;
  for (let m = VOICE_TAG.exec(line.text); m; m = VOICE_TAG.exec(line.text)) {
    const name = normalizeSpeaker(decodeVttEntities(m[1] as string));
    voices++;
    if (name) out.push({ speaker: name, format: 'webvtt_voice', start: line.at + m.index, end: line.at + m.index + m[0].length });
  }
  if (voices > 0) return;
  // tags removed, remembering where each kept character was
  const kept: number[] = [];
  let plain = '';
  for (let i = 0; i < line.text.length;) {
    if (line.text[i] === '<') {
      const close = line.text.indexOf('>', i);
      if (close > i) {
        i = close + 1;
        continue;
      }
    }
    kept.push(i);
    plain += line.text[i];
    i++;
  }
  const label = matchLineLabel(plain);
  if (!label || label.format === 'otter') return;
  const start = kept[label.start] ?? 0;
  const end = (kept[label.end - 1] ?? start) + 1;
  out.push({ speaker: normalizeSpeaker(decodeVttEntities(label.speaker)), format: label.format, start: line.at + start, end: line.at + end });
}

/** Labels of a WebVTT or SRT text: cue payload lines only (header, NOTE, STYLE and REGION blocks, ids and timings skipped). */
function subtitleTurns(text: string, layout: 'webvtt' | 'srt'): RawTurn[] {
  const out: RawTurn[] = [];
  const lines = linesOf(text);
  let block: Line[] = [];
  let first = true;
  const flush = () => {
    if (block.length === 0) return;
    const skip = (layout === 'webvtt' && first) || /^(?:NOTE|STYLE|REGION)(?:[ \t]|$)/.test(block[0]!.text);
    first = false;
    const timing = block.findIndex((l) => TIMING_LINE.test(l.text));
    if (!skip && timing >= 0 && timing <= 1) for (const l of block.slice(timing + 1)) cueLineTurns(l, out);
    block = [];
  };
  for (const l of lines) {
    if (l.text.trim() === '') flush();
    else block.push(l);
  }
  flush();
  return out;
}

/** Labels of a plain transcript, one line at a time ({@link matchLineLabel}). */
function textTurns(text: string): RawTurn[] {
  const out: RawTurn[] = [];
  for (const line of linesOf(text)) {
    const t = line.at === 0 && line.text.startsWith('\uFEFF') ? { text: line.text.slice(1), at: 1 } : line;
    const label = matchLineLabel(t.text);
    if (label) out.push({ speaker: label.speaker, format: label.format, start: t.at + label.start, end: t.at + label.end });
  }
  return out;
}

/**
 * Every speaker label of `text`, in text order, with its range in code points. The layout is sniffed
 * ({@link sniffLayout}): WebVTT and SRT files are read cue by cue (voices `<v Name>`, else a label at the start
 * of a payload line); anything else line by line with {@link matchLineLabel}.
 */
export function speakerTurns(text: string): { layout: TranscriptLayout; turns: SpeakerTurn[] } {
  const layout = sniffLayout(text);
  const raw = layout === 'text' ? textTurns(text) : subtitleTurns(text, layout);
  const map = new OffsetMap(text);
  return { layout, turns: raw.map((r) => ({ speaker: r.speaker, format: r.format, start: map.toCp(r.start), end: map.toCp(r.end) })) };
}

/**
 * The speakers of a transcript as a reader sees them: each distinct label (whitespace collapsed, case kept)
 * with its number of turns (labels) and the code point position of its first label, in order of first
 * appearance. `format` is how the speaker's first label was written.
 *
 * Example: `"[00:00:00:00]\nLCC: Lift-off\n\n[00:00:00:02]\nP: Roger"` gives LCC (1 turn, first_pos 14)
 * and P (1 turn, first_pos 43); the bracketed times are never labels.
 */
export function detectSpeakers(text: string): SpeakerDetection {
  const { layout, turns } = speakerTurns(text);
  return { layout, ...summarizeTurns(turns) };
}

/**
 * Speakers from a list of labelled turns (e.g. the segments of a timed transcript): count per name, first
 * position, in order of first appearance. Turns without a speaker are ignored.
 */
export function summarizeTurns(turns: readonly { speaker: string | null; format: SpeakerLabelFormat; start: number }[]): {
  speakers: DetectedSpeaker[];
  total_turns: number;
} {
  const byName = new Map<string, DetectedSpeaker>();
  let total = 0;
  for (const t of turns) {
    if (!t.speaker) continue;
    total++;
    const s = byName.get(t.speaker);
    if (s) s.turns++;
    else byName.set(t.speaker, { name: t.speaker, turns: 1, first_pos: t.start, format: t.format });
  }
  return { speakers: [...byName.values()].sort((a, b) => a.first_pos - b.first_pos), total_turns: total };
}
