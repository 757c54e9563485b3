/**
 * AV coding: codes applied to time ranges of audio and video sources, and the timed transcripts of those
 * sources. Pure rules over the repository port; no I/O (transcript files and the transcription endpoint are
 * read in `src/exchange/transcripts.ts`).
 *
 * Units: AV positions are integer milliseconds from the start of the media, ranges half-open
 * `[start_ms, end_ms)`; text positions are Unicode code points. Rules are the HTTP spec's
 * (`shared/spec/http-tool-interface.md`, section 2 rule 5, and the AV coding table): end after start, and two
 * segments with the same code on the same source may not overlap (touching ranges, `a.end_ms == b.start_ms`,
 * do not overlap).
 */
import { ToolError } from '../core/errors';
import { OffsetMap } from '../core/offsets';
import { codePointLength, sliceCp } from '../core/text';
import { stampOf } from './codebook';
import type { DomainContext } from './events';
import type { AvSegment, ProjectRepository, SourceWithCounts } from './ports';
import type { SpeakerLabelFormat } from './speakers';
import { requireSource } from './sources';
import { avSegmentNotFound } from './segmentKinds';

type Ctx = DomainContext<ProjectRepository>;

/** The source types AV coding and transcription apply to. */
export const AV_SOURCE_TYPES = ['audio', 'video'] as const;

/** True when two half-open millisecond ranges share at least one millisecond (touching ranges do not). */
export function rangesOverlap(a: { start_ms: number; end_ms: number }, b: { start_ms: number; end_ms: number }): boolean {
  return a.start_ms < b.end_ms && b.start_ms < a.end_ms;
}

/**
 * Checks an AV time range: integers, `start_ms >= 0`, `end_ms > start_ms`.
 * Errors: AV_SEGMENT_NOT_CODED/INVALID_TIME_RANGE.
 */
export function checkTimeRange(start_ms: number, end_ms: number): void {
  if (!Number.isSafeInteger(start_ms) || !Number.isSafeInteger(end_ms) || start_ms < 0 || end_ms <= start_ms) {
    throw new ToolError(
      'AV_SEGMENT_NOT_CODED/INVALID_TIME_RANGE',
      `The time range [${start_ms}, ${end_ms}) ms is invalid: times are non-negative integer milliseconds and end_ms must be after start_ms`,
      { start_ms, end_ms },
    );
  }
}

/**
 * The source `id` when it is an audio or video source. Errors: SOURCE_NOT_FOUND, INVALID_ARGUMENTS (a text,
 * image or pdf source, with a message naming its type).
 */
export function requireAvSource(ctx: Ctx, id: number): SourceWithCounts {
  const source = requireSource(ctx, id);
  assertAvType(source);
  return source;
}

/** Throws INVALID_ARGUMENTS unless `source` is audio or video. */
export function assertAvType(source: { source_id: number; name: string; type: string }): void {
  if (!(AV_SOURCE_TYPES as readonly string[]).includes(source.type)) {
    throw new ToolError(
      'INVALID_ARGUMENTS',
      `The source "${source.name}" (source_id ${source.source_id}) is a ${source.type} source; AV coding and transcription need an audio or video source. ` +
        'Code text sources with batch_apply_codes.',
      { source_id: source.source_id, type: source.type },
    );
  }
}

/** Input of {@link applyAvCode}: milliseconds, half-open. */
export interface ApplyAvCodeInput {
  code_id: number;
  source_id: number;
  start_ms: number;
  end_ms: number;
  transcript?: string | null;
  memo?: string | null;
}

/**
 * Codes `[start_ms, end_ms)` of an audio or video source with a code, keeping an optional transcript of the
 * range and a memo. Emits coding.av_segment_coded.
 *
 * Errors, checked in this order: AV_SEGMENT_NOT_CODED/CODE_NOT_FOUND, SOURCE_NOT_FOUND, INVALID_ARGUMENTS (not
 * an audio or video source), AV_SEGMENT_NOT_CODED/INVALID_TIME_RANGE (negative, or end not after start),
 * AV_SEGMENT_NOT_CODED/OVERLAPPING_SEGMENT (the same code already covers part of the range on this source;
 * `details.conflicts` lists those segments). Applying exactly the same coding twice is an overlap too.
 */
export function applyAvCode(ctx: Ctx, input: ApplyAvCodeInput): AvSegment {
  const code = ctx.repo.getCode(input.code_id);
  if (!code) throw new ToolError('AV_SEGMENT_NOT_CODED/CODE_NOT_FOUND', `No code with code_id ${input.code_id}`);
  requireAvSource(ctx, input.source_id);
  checkTimeRange(input.start_ms, input.end_ms);
  const conflicts = ctx.repo.avSegmentsOverlapping(input.code_id, input.source_id, input.start_ms, input.end_ms);
  if (conflicts.length > 0) {
    const first = conflicts[0] as AvSegment;
    throw new ToolError(
      'AV_SEGMENT_NOT_CODED/OVERLAPPING_SEGMENT',
      `The code "${code.name}" already covers [${first.start_ms}, ${first.end_ms}) ms of this source (segment_id ${first.segment_id}), which overlaps [${input.start_ms}, ${input.end_ms}) ms. ` +
        'Ranges of the same code may touch but not overlap.',
      { conflicts: conflicts.map((c) => ({ segment_id: c.segment_id, start_ms: c.start_ms, end_ms: c.end_ms })) },
    );
  }
  const id = ctx.repo.insertAvSegment(
    {
      code_id: input.code_id,
      source_id: input.source_id,
      start_ms: input.start_ms,
      end_ms: input.end_ms,
      transcript: input.transcript ?? null,
      memo: input.memo ?? null,
    },
    stampOf(ctx),
  );
  ctx.events.emit({
    event_type: 'coding.av_segment_coded',
    aggregate_type: 'av_segment',
    aggregate_id: String(id),
    payload: {
      segment_id: id,
      code_id: input.code_id,
      source_id: input.source_id,
      start_ms: input.start_ms,
      end_ms: input.end_ms,
      transcript: input.transcript ?? null,
    },
  });
  const seg = ctx.repo.getAvSegment(id);
  if (!seg) throw new Error(`AV segment ${id} vanished after insert`);
  return seg;
}

/**
 * Removes an AV segment. Emits coding.av_segment_uncoded. Errors: AV_SEGMENT_NOT_REMOVED/NOT_FOUND (also for
 * a text segment's id, naming delete_segment; nothing is removed).
 */
export function removeAvSegment(ctx: Ctx, id: number): AvSegment {
  const seg = ctx.repo.getAvSegment(id);
  if (!seg) throw avSegmentNotFound(ctx.repo, id);
  ctx.repo.deleteAvSegment(id);
  ctx.events.emit({
    event_type: 'coding.av_segment_uncoded',
    aggregate_type: 'av_segment',
    aggregate_id: String(id),
    payload: { segment_id: id, code_id: seg.code_id, source_id: seg.source_id, start_ms: seg.start_ms, end_ms: seg.end_ms },
  });
  return seg;
}

// ----- timed transcripts ------------------------------------------------------------------------------

/**
 * One timed piece of a transcript: `[start_ms, end_ms)` in milliseconds as the transcript states them (Spacelog
 * transcripts even have negative mission times), `end_ms` null when the transcript gives no end (the last turn
 * of a timestamped text). `speaker` null when no speaker is marked.
 */
export interface TranscriptSegment {
  start_ms: number;
  end_ms: number | null;
  speaker: string | null;
  text: string;
}

/** A transcript segment with how its speaker was marked (kept internally for speaker detection). */
export interface LabelledTranscriptSegment extends TranscriptSegment {
  speaker_format: SpeakerLabelFormat | null;
}

/**
 * The plain text of a transcript: the segments' texts joined by line feeds, and the code point offset at
 * which each segment starts in it (`starts[i]` for `segments[i]`).
 */
export function transcriptText(segments: readonly TranscriptSegment[]): { text: string; starts: number[] } {
  const starts: number[] = [];
  let at = 0;
  for (const s of segments) {
    starts.push(at);
    at += codePointLength(s.text) + 1;
  }
  return { text: segments.map((s) => s.text).join('\n'), starts };
}

/** Index of the segment whose text holds code point `pos` of {@link transcriptText}'s text (`starts` ascending). */
export function segmentAt(starts: readonly number[], pos: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if ((starts[mid] as number) <= pos) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

// ----- code names in transcripts ------------------------------------------------------------------------

/** One place a code's name occurs: `[start_pos, end_pos)` in code points, with a one-line excerpt around it. */
export interface CodeMention {
  start_pos: number;
  end_pos: number;
  /** the matched text as written */
  match: string;
  /** up to `context` code points either side, line breaks and runs of blanks shown as one space; "…" marks a cut */
  excerpt: string;
}

/** The mentions of one code's name. `count` counts all; `matches` holds at most `maxPerCode` of them. */
export interface CodeMentions {
  code_id: number;
  code_name: string;
  count: number;
  matches: CodeMention[];
  truncated: boolean;
}

/** Escapes `s` for use inside a RegExp. */
function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * The pattern of a code name: case-insensitive (Unicode simple case folding, flags `iu`), blanks in the name
 * matching any run of whitespace (so a name may span a line break), and whole words: a name that starts or
 * ends with a letter or digit does not match inside a longer word ("Art" is not found in "start").
 */
export function codeNamePattern(name: string): RegExp | null {
  const words = name.trim().split(/\s+/u).filter(Boolean);
  if (words.length === 0) return null;
  const body = words.map(escapeRegExp).join(String.raw`\s+`);
  const head = /^[\p{L}\p{N}]/u.test(words[0] as string) ? String.raw`(?<![\p{L}\p{N}_])` : '';
  const tail = /[\p{L}\p{N}]$/u.test(words[words.length - 1] as string) ? String.raw`(?![\p{L}\p{N}_])` : '';
  return new RegExp(head + body + tail, 'giu');
}

/**
 * Where the codes' names occur in `text` (HTTP spec, AV coding rule 3: case-insensitive code name matching
 * with character positions and excerpts). Positions are code points of `text`. Matches that overlap one of
 * `exclude` (e.g. the speaker labels of a transcript, so a code named like a speaker does not match every
 * label) are skipped. Codes without a match are left out; the rest come by count, most first, then by name.
 */
export function findCodeMentions(
  text: string,
  codes: readonly { code_id: number; name: string }[],
  opts: { maxPerCode?: number; context?: number; exclude?: readonly { start: number; end: number }[] } = {},
): CodeMentions[] {
  const maxPerCode = opts.maxPerCode ?? 100;
  const context = opts.context ?? 60;
  const exclude = [...(opts.exclude ?? [])].sort((a, b) => a.start - b.start);
  const map = new OffsetMap(text);
  const length = map.cpLength;
  const excluded = (s: number, e: number) => {
    // ranges are few per line; a linear scan from a binary-searched start keeps this cheap
    let lo = 0;
    let hi = exclude.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((exclude[mid] as { end: number }).end <= s) lo = mid + 1;
      else hi = mid;
    }
    const r = exclude[lo];
    return r !== undefined && r.start < e;
  };
  const out: CodeMentions[] = [];
  for (const code of codes) {
    const re = codeNamePattern(code.name);
    if (!re) continue;
    const matches: CodeMention[] = [];
    let count = 0;
    for (let m = re.exec(text); m; m = re.exec(text)) {
      if (m[0].length === 0) {
        re.lastIndex++;
        continue;
      }
      const start = map.toCp(m.index);
      const end = map.toCp(m.index + m[0].length);
      if (excluded(start, end)) continue;
      count++;
      if (matches.length < maxPerCode) matches.push({ start_pos: start, end_pos: end, match: m[0], excerpt: excerptAround(text, start, end, length, context) });
    }
    if (count > 0) out.push({ code_id: code.code_id, code_name: code.name, count, matches, truncated: count > matches.length });
  }
  return out.sort((a, b) => b.count - a.count || a.code_name.localeCompare(b.code_name));
}

/** `text` around `[start, end)` (code points) with `context` code points either side, on one line. */
function excerptAround(text: string, start: number, end: number, length: number, context: number): string {
  const from = Math.max(0, start - context);
  const to = Math.min(length, end + context);
  const body = sliceCp(text, from, to).replace(/\s+/gu, ' ');
  return `${from > 0 ? '…' : ''}${body}${to < length ? '…' : ''}`;
}
