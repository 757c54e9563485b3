/**
 * Transcripts of audio and video sources: a sidecar file next to the media file, or a local
 * Whisper-compatible transcription server.
 *
 * - Sidecars: the media file's base name with `.vtt`, `.srt` or `.txt` (`interview.mp3` -> `interview.vtt`, also
 *   `interview.mp3.vtt` as some tools write it), tried in that order; the extension is matched case-insensitively.
 *   UTF-8 (a byte-order mark dropped); a file that is not valid UTF-8 is read as Windows-1252, with a warning.
 * - WebVTT and SRT are parsed with `media-captions` (vidstack; W3C WebVTT parsing and cue text rules, SRT),
 *   which also gives each cue's voice spans (`<v Name>`).
 * - `.txt` is a timestamped transcript: turns start at a line with a leading time (`[00:12:34]`, `[12:34]`,
 *   `[1:02:03.500]`, Spacelog's `[DD:HH:MM:SS]` and `[-00:00:00:03]`, or an unbracketed `00:12:34` / `12:34`) or an
 *   Otter.ai header `Name  MM:SS`; speaker labels are found by `matchLineLabel` (domain/speakers.ts).
 *   Formats observed in `shared/notes/corpus.md`, "Transcript formats observed".
 * - The endpoint: OpenAI's audio transcription API shape (`POST {base}/v1/audio/transcriptions`, multipart
 *   `file` + `model` + `response_format=verbose_json`, answer `{text, language, duration, segments: [{start, end,
 *   text}]}` in seconds), which whisper.cpp's server, faster-whisper-server/speaches and LocalAI also serve.
 *
 * Times are integer milliseconds (rounded from the files' or the server's seconds).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseText, tokenizeVTTCue, type VTTNode } from 'media-captions';
import { ToolError } from '../core/errors';
import { realPathOf, type PathPolicy } from '../core/pathPolicy';
import type { LabelledTranscriptSegment } from '../domain/av';
import { matchLineLabel, normalizeSpeaker, sniffLayout } from '../domain/speakers';

/** The sidecar extensions, in the order they are tried. */
export const SIDECAR_EXTENSIONS = ['.vtt', '.srt', '.txt'] as const;

/** Where a transcript came from. */
export type TranscriptOrigin = { kind: 'sidecar'; path: string } | { kind: 'endpoint'; url: string };

/** The formats a transcript can come in. */
export type TranscriptFormat = 'webvtt' | 'srt' | 'timestamped_text' | 'whisper';

/** A transcript read from a sidecar or an endpoint. Times in integer milliseconds. */
export interface LoadedTranscript {
  format: TranscriptFormat;
  origin: TranscriptOrigin;
  segments: LabelledTranscriptSegment[];
  /** language the server detected (endpoint only) */
  language: string | null;
  /** media duration the server reported (endpoint only) */
  duration_ms: number | null;
  /** parse problems that did not stop reading (skipped cues, a fallback encoding, skipped header lines) */
  warnings: string[];
}

/** Largest sidecar read, in bytes. */
export const MAX_SIDECAR_BYTES = 64 * 1024 * 1024;
/** How long the endpoint may take for one file, in milliseconds (transcription runs at a few times real time). */
export const DEFAULT_ENDPOINT_TIMEOUT_MS = 30 * 60 * 1000;
/** The model name sent to the endpoint unless its URL names one with `?model=`. */
export const DEFAULT_TRANSCRIPTION_MODEL = 'whisper-1';

/**
 * The sidecar files that exist beside `mediaPath`, in the order they are tried: `<base>.vtt`, `<base>.srt`,
 * `<base>.txt`, then `<file>.vtt`, `<file>.srt`, `<file>.txt` (`<base>` is the name without its extension,
 * `<file>` the whole name). A name matches exactly or, failing that, case-insensitively.
 */
export async function findSidecars(mediaPath: string): Promise<string[]> {
  const dir = path.dirname(mediaPath);
  const file = path.basename(mediaPath);
  const base = path.basename(mediaPath, path.extname(mediaPath));
  let names: string[];
  try {
    names = await fs.promises.readdir(dir);
  } catch {
    return [];
  }
  const wanted = [...SIDECAR_EXTENSIONS.map((e) => base + e), ...SIDECAR_EXTENSIONS.map((e) => file + e)];
  const found: string[] = [];
  for (const w of wanted) {
    const hit = names.find((n) => n === w) ?? names.find((n) => n.toLowerCase() === w.toLowerCase());
    if (hit && !found.includes(hit)) found.push(hit);
  }
  const files: string[] = [];
  for (const n of found) {
    const p = path.join(dir, n);
    if ((await fs.promises.stat(p).catch(() => undefined))?.isFile()) files.push(p);
  }
  return files;
}

/** `bytes` as text: UTF-8 (byte-order mark dropped), or Windows-1252 when it is not valid UTF-8. */
export function decodeTranscriptBytes(bytes: Uint8Array): { text: string; encoding: 'utf-8' | 'windows-1252' } {
  try {
    return { text: new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes), encoding: 'utf-8' };
  } catch {
    return { text: new TextDecoder('windows-1252').decode(bytes), encoding: 'windows-1252' };
  }
}

/**
 * Reads and parses one sidecar by its extension (`.vtt`: WebVTT, `.srt`: SRT, `.txt`: timestamped text, or
 * WebVTT/SRT when the text says so). A file with no timed turn gives no segments and a warning saying why.
 */
export async function readSidecar(file: string): Promise<LoadedTranscript> {
  const stat = await fs.promises.stat(file);
  if (stat.size > MAX_SIDECAR_BYTES) {
    return {
      format: 'timestamped_text',
      origin: { kind: 'sidecar', path: file },
      segments: [],
      language: null,
      duration_ms: null,
      warnings: [`${stat.size} bytes is more than the ${MAX_SIDECAR_BYTES} a transcript may have`],
    };
  }
  const { text, encoding } = decodeTranscriptBytes(await fs.promises.readFile(file));
  const warnings = encoding === 'utf-8' ? [] : [`not valid UTF-8; read as Windows-1252`];
  const ext = path.extname(file).toLowerCase();
  const layout = ext === '.vtt' ? 'webvtt' : ext === '.srt' ? 'srt' : sniffLayout(text);
  const parsed = layout === 'text' ? parseTimestampedText(text) : await parseSubtitles(text, layout === 'webvtt' ? 'vtt' : 'srt');
  return {
    format: layout === 'webvtt' ? 'webvtt' : layout === 'srt' ? 'srt' : 'timestamped_text',
    origin: { kind: 'sidecar', path: file },
    segments: parsed.segments,
    language: null,
    duration_ms: null,
    warnings: [...warnings, ...parsed.warnings],
  };
}

/** All text of a cue node and its children (timestamp tags dropped), as the tokenizer decoded it. */
function nodeText(node: VTTNode): string {
  if (node.type === 'text') return node.data;
  return node.children.map(nodeText).join('');
}

/** A cue's text as one line: line breaks and runs of blanks as one space, trimmed. */
function oneLine(s: string): string {
  return s.replace(/\s+/gu, ' ').trim();
}

/**
 * Parses WebVTT (`type: 'vtt'`) or SRT (`'srt'`) with `media-captions`. Each cue gives one segment per voice
 * span (`<v Name>...`, so a cue with two voices gives two segments with the cue's times); text outside any
 * voice span gives a segment of its own. A segment without a voice takes its speaker from a label at its
 * start (`JOHN: ...`, `Sara Mannheimer: ...`, `[id1] ...`), which is then removed from its text. Cues the
 * library rejects (e.g. seconds above 59) are skipped and named in `warnings`; a cue whose text a malformed tag
 * swallowed (`<v It's a blue apple tree!` without `>`) keeps its words, without a speaker, with a warning.
 */
export async function parseSubtitles(text: string, type: 'vtt' | 'srt'): Promise<{ segments: LabelledTranscriptSegment[]; warnings: string[] }> {
  const body = text.startsWith('\uFEFF') ? text.slice(1) : text;
  const result = await parseText(body, { type, errors: true });
  const segments: LabelledTranscriptSegment[] = [];
  const malformed: number[] = [];
  for (const cue of result.cues) {
    const start_ms = Math.round(cue.startTime * 1000);
    const end_ms = Math.round(cue.endTime * 1000);
    const pieces: { voice: string | null; text: string }[] = [];
    let outside: { voice: null; text: string } | null = null;
    for (const node of tokenizeVTTCue(cue)) {
      if (node.type === 'v') {
        outside = null;
        pieces.push({ voice: normalizeSpeaker(node.voice ?? '') || null, text: nodeText(node) });
      } else {
        if (!outside) pieces.push((outside = { voice: null, text: '' }));
        outside.text += nodeText(node);
      }
    }
    if (pieces.every((p) => !oneLine(p.text)) && cue.text.trim()) {
      // a malformed tag swallowed the text (`<v It's a blue apple tree!`, no `>`): keep the words as written
      const words = oneLine(cue.text.replace(/<[^>]*>/g, '').replace(/^<v(?:\.\S*)?\s*/, ''));
      if (words) {
        pieces.length = 0;
        pieces.push({ voice: null, text: words });
        malformed.push(start_ms);
      }
    }
    for (const p of pieces) {
      let t = oneLine(p.text);
      if (!t) continue;
      let speaker: string | null = p.voice;
      let speaker_format: LabelledTranscriptSegment['speaker_format'] = speaker ? 'webvtt_voice' : null;
      if (!speaker) {
        const label = matchLineLabel(t);
        if (label && label.format !== 'otter' && label.textStart < t.length) {
          speaker = label.speaker;
          speaker_format = label.format;
          t = t.slice(label.textStart).trim();
        }
      }
      segments.push({ start_ms, end_ms, speaker, speaker_format, text: t });
    }
  }
  const warnings = result.errors.map((e) => `${e.message}${e.line ? ` (line ${e.line})` : ''}`);
  for (const at of malformed) warnings.push(`the cue at ${at} ms has a malformed tag; its text is kept as written, without a speaker`);
  return { segments, warnings };
}

/** A time at the start of a line, in brackets. */
const LEADING_BRACKET_TIME = /^[ \t]*\[(-?\d{1,3}(?::\d{1,2}){1,3}(?:[.,]\d{1,3})?)\][ \t]*/;
/** A time at the start of a line without brackets, followed by a blank or the line end. */
const LEADING_PLAIN_TIME = /^(\d{1,2}:\d{2}(?::\d{2})?(?:[.,]\d{1,3})?)(?=[ \t]|$)[ \t]*/;
/** The time at the end of an Otter.ai header line. */
const OTTER_TIME = /((?:\d{1,2}:)?\d{1,2}:\d{2})[ \t]*$/;
/** Spacelog metadata lines inside a block: `_page : 148`, `_tape : `, `_extra : BERMUDA (FIRST ORBIT)`. */
const METADATA_LINE = /^_[A-Za-z]+[ \t]*:/;

/**
 * Milliseconds of a clock time: `MM:SS`, `HH:MM:SS`, `DD:HH:MM:SS` (Spacelog's mission elapsed time), each with
 * an optional fraction (`.5` = 500 ms) and a leading minus. Fields are taken as written (no check that seconds
 * are below 60, as real transcripts break that rule). Null when it is not such a time.
 */
export function parseClockTime(s: string): number | null {
  const m = /^(-?)(\d+(?::\d+){1,3})(?:[.,](\d{1,3}))?$/.exec(s.trim());
  if (!m) return null;
  const parts = (m[2] as string).split(':').map(Number);
  const unit = parts.length === 4 ? [86_400_000, 3_600_000, 60_000, 1000] : parts.length === 3 ? [3_600_000, 60_000, 1000] : [60_000, 1000];
  let ms = parts.reduce((sum, v, i) => sum + v * (unit[i] as number), 0);
  if (m[3]) ms += Number(m[3].padEnd(3, '0'));
  return m[1] === '-' ? -ms : ms;
}

/**
 * Parses a timestamped plain-text transcript into timed turns. A turn starts at a line with a leading time
 * (bracketed or not) or an Otter.ai header (`Sara Mannheimer  00:13`, whose speaker it takes); within a timed
 * block, each further line starting with a speaker label (`P:`, `CC:` in Spacelog) starts a turn at the block's
 * time. Other lines continue the current turn (joined with a space); Spacelog metadata lines (`_page : 148`)
 * are skipped, and so is everything before the first time (titles, Otter's keyword and speaker list), counted in
 * `warnings`. A turn ends where the next later turn starts; the last turn's `end_ms` is null. No time at all:
 * no segments.
 */
export function parseTimestampedText(text: string): { segments: LabelledTranscriptSegment[]; warnings: string[] } {
  const body = text.startsWith('\uFEFF') ? text.slice(1) : text;
  const segments: LabelledTranscriptSegment[] = [];
  let cur: LabelledTranscriptSegment | null = null;
  let blockStart: number | null = null;
  let skipped = 0;
  const open = (start_ms: number, rest: string, speaker: string | null = null, format: LabelledTranscriptSegment['speaker_format'] = null) => {
    let t = rest.trim();
    if (!speaker) {
      const label = matchLineLabel(t);
      if (label && label.format !== 'otter') {
        speaker = label.speaker;
        format = label.format;
        t = t.slice(label.textStart).trim();
      }
    }
    cur = { start_ms, end_ms: null, speaker, speaker_format: speaker ? format : null, text: t };
    segments.push(cur);
  };
  for (const line of body.split(/\r\n|\r|\n/)) {
    if (line.trim() === '') continue;
    const label = matchLineLabel(line);
    if (label?.format === 'otter') {
      const at = parseClockTime(OTTER_TIME.exec(line)?.[1] ?? '');
      if (at !== null) {
        blockStart = at;
        open(at, '', label.speaker, 'otter');
        continue;
      }
    }
    const timed = LEADING_BRACKET_TIME.exec(line) ?? LEADING_PLAIN_TIME.exec(line);
    const at = timed ? parseClockTime(timed[1] as string) : null;
    if (timed && at !== null) {
      blockStart = at;
      open(at, line.slice(timed[0].length));
      continue;
    }
    if (blockStart === null) {
      skipped++;
      continue;
    }
    if (METADATA_LINE.test(line)) continue;
    const c = cur as LabelledTranscriptSegment | null;
    if (label && label.format !== 'otter' && label.start === 0) {
      if (c && c.text === '' && c.speaker === null && c.start_ms === blockStart) {
        c.speaker = label.speaker;
        c.speaker_format = label.format;
        c.text = line.slice(label.textStart).trim();
      } else open(blockStart, line);
      continue;
    }
    if (c) c.text = c.text ? `${c.text} ${line.trim()}` : line.trim();
  }
  const kept = segments.filter((s) => s.text !== '' || s.speaker !== null);
  for (let i = 0; i < kept.length; i++) {
    const s = kept[i] as LabelledTranscriptSegment;
    const next = kept.slice(i + 1).find((n) => n.start_ms > s.start_ms);
    s.end_ms = next ? next.start_ms : null;
  }
  const warnings = skipped > 0 && kept.length > 0 ? [`${skipped} line(s) before the first timestamp were skipped (title or header)`] : [];
  return { segments: kept, warnings };
}

/** The request URL and model for a configured endpoint. Errors: TRANSCRIPTION_FAILED (not an http(s) URL). */
export function endpointRequest(endpoint: string): { url: URL; model: string } {
  let url: URL;
  try {
    url = new URL(endpoint.trim());
  } catch {
    throw new ToolError('TRANSCRIPTION_FAILED', `The transcription endpoint "${endpoint}" is not a URL (expected e.g. http://127.0.0.1:8000)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new ToolError('TRANSCRIPTION_FAILED', `The transcription endpoint must be http or https (got ${url.protocol})`);
  const model = url.searchParams.get('model') || DEFAULT_TRANSCRIPTION_MODEL;
  url.searchParams.delete('model');
  if (!/\/audio\/transcriptions\/?$/.test(url.pathname)) url.pathname = `${url.pathname.replace(/\/+$/, '')}/v1/audio/transcriptions`;
  return { url, model };
}

/** A JSON value as a finite number, or null. */
function num(v: unknown): number | null {
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

/**
 * Sends the media file to a Whisper-compatible server and returns its transcript: `POST {endpoint}/v1/audio/transcriptions`
 * (or the endpoint itself when it already ends in `/audio/transcriptions`), multipart `file`, `model` (`whisper-1`, or
 * the endpoint URL's `?model=`), `response_format=verbose_json`, `timestamp_granularities[]=segment`. Segment times
 * (seconds) become integer milliseconds; a segment's `speaker` string (diarizing servers) is kept, else a label at
 * the start of its text is used. Errors: TRANSCRIPTION_FAILED (bad URL, unreachable, timeout, non-2xx answer, or an
 * answer without `text`/`segments`).
 */
export async function transcribeWithEndpoint(
  endpoint: string,
  mediaPath: string,
  opts: { mime?: string | null; timeoutMs?: number } = {},
): Promise<LoadedTranscript> {
  const { url, model } = endpointRequest(endpoint);
  const shown = url.origin + url.pathname;
  const form = new FormData();
  form.append('file', await fs.openAsBlob(mediaPath, { type: opts.mime ?? 'application/octet-stream' }), path.basename(mediaPath));
  form.append('model', model);
  form.append('response_format', 'verbose_json');
  form.append('timestamp_granularities[]', 'segment');
  let res: Response;
  try {
    res = await fetch(url, { method: 'POST', body: form, signal: AbortSignal.timeout(opts.timeoutMs ?? DEFAULT_ENDPOINT_TIMEOUT_MS) });
  } catch (e) {
    throw new ToolError('TRANSCRIPTION_FAILED', `The transcription endpoint ${shown} could not be reached: ${(e as Error).message}`);
  }
  const body = await res.text();
  if (!res.ok)
    throw new ToolError('TRANSCRIPTION_FAILED', `The transcription endpoint ${shown} answered ${res.status} ${res.statusText}: ${body.slice(0, 300)}`, {
      status: res.status,
    });
  let json: { text?: unknown; language?: unknown; duration?: unknown; segments?: unknown };
  try {
    json = JSON.parse(body) as typeof json;
  } catch {
    throw new ToolError('TRANSCRIPTION_FAILED', `The transcription endpoint ${shown} did not answer JSON: ${body.slice(0, 300)}`);
  }
  const duration = num(json.duration);
  const duration_ms = duration === null ? null : Math.round(duration * 1000);
  const segments: LabelledTranscriptSegment[] = [];
  if (Array.isArray(json.segments)) {
    for (const s of json.segments as { start?: unknown; end?: unknown; text?: unknown; speaker?: unknown }[]) {
      const start = num(s?.start);
      const end = num(s?.end);
      if (start === null || typeof s.text !== 'string') continue;
      let text = oneLine(s.text);
      let speaker = typeof s.speaker === 'string' && s.speaker.trim() ? normalizeSpeaker(s.speaker) : null;
      let speaker_format: LabelledTranscriptSegment['speaker_format'] = speaker ? 'transcriber' : null;
      if (!speaker) {
        const label = matchLineLabel(text);
        if (label && label.format !== 'otter' && label.textStart < text.length) {
          speaker = label.speaker;
          speaker_format = label.format;
          text = text.slice(label.textStart).trim();
        }
      }
      if (text) segments.push({ start_ms: Math.round(start * 1000), end_ms: end === null ? null : Math.round(end * 1000), speaker, speaker_format, text });
    }
  } else if (typeof json.text === 'string' && json.text.trim()) {
    segments.push({ start_ms: 0, end_ms: duration_ms, speaker: null, speaker_format: null, text: oneLine(json.text) });
  } else {
    throw new ToolError('TRANSCRIPTION_FAILED', `The transcription endpoint ${shown} answered without text or segments: ${body.slice(0, 300)}`);
  }
  return {
    format: 'whisper',
    origin: { kind: 'endpoint', url: shown },
    segments,
    language: typeof json.language === 'string' ? json.language : null,
    duration_ms,
    warnings: [],
  };
}

/**
 * The transcript of a media file: the first sidecar ({@link findSidecars}) that yields timed segments, else the
 * configured endpoint ({@link transcribeWithEndpoint}). Errors: TRANSCRIPT_NOT_FOUND (no usable sidecar and no
 * endpoint, or the media file is missing when only the endpoint could help; `details` lists the names looked for
 * and the sidecars rejected), TRANSCRIPTION_FAILED (from the endpoint).
 *
 * `paths` (an agent's path policy, src/core/pathPolicy.ts): a sidecar is read only when, with symbolic links
 * followed, it lies in the media file's own folder (the folder the researcher, or a checked import, chose) or
 * inside the policy's folders; any other (a link pointing elsewhere) is rejected with the reason.
 */
export async function loadTranscript(
  media: { name: string; file_path: string | null; mime: string | null },
  endpoint?: string,
  paths?: PathPolicy,
): Promise<LoadedTranscript> {
  const configured = endpoint?.trim() ? endpoint.trim() : undefined;
  if (!media.file_path) {
    throw new ToolError(
      'TRANSCRIPT_NOT_FOUND',
      `The source "${media.name}" has no file path, so there is no sidecar transcript to read and no file to transcribe`,
    );
  }
  const rejected: { path: string; reason: string }[] = [];
  const mediaDir = realPathOf(path.dirname(media.file_path));
  for (const file of await findSidecars(media.file_path)) {
    if (paths?.restricted) {
      const real = realPathOf(file);
      if (path.dirname(real) !== mediaDir && !paths.allows(real)) {
        rejected.push({ path: file, reason: `refused: it resolves to ${real}, outside the media file's folder and the folders an agent may use` });
        continue;
      }
    }
    const t = await readSidecar(file);
    if (t.segments.length > 0) return t;
    rejected.push({ path: file, reason: t.warnings[0] ?? 'no timed turns (no cue or timestamp found)' });
  }
  const dir = path.dirname(media.file_path);
  const base = path.basename(media.file_path, path.extname(media.file_path));
  const lookedFor = SIDECAR_EXTENSIONS.map((e) => path.join(dir, base + e));
  const rejectedText = rejected.length ? ` (found but unusable: ${rejected.map((r) => `${path.basename(r.path)}: ${r.reason}`).join('; ')})` : '';
  if (configured) {
    if (!fs.existsSync(media.file_path)) {
      throw new ToolError(
        'TRANSCRIPT_NOT_FOUND',
        `The media file ${media.file_path} of "${media.name}" is missing, so it cannot be transcribed, and no sidecar transcript was found${rejectedText}`,
        {
          looked_for: lookedFor,
          rejected,
        },
      );
    }
    return transcribeWithEndpoint(configured, media.file_path, { mime: media.mime });
  }
  throw new ToolError(
    'TRANSCRIPT_NOT_FOUND',
    `No transcript for "${media.name}": no sidecar ${SIDECAR_EXTENSIONS.map((e) => base + e).join(', ')} beside the media file${rejectedText}, ` +
      'and no transcription endpoint is configured (setting marginalia.transcription.endpoint, or MARGINALIA_TRANSCRIPTION_ENDPOINT for marginalia serve).',
    { looked_for: lookedFor, rejected },
  );
}
