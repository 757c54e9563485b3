/**
 * AV coding tools (HTTP spec, section 4, "AV coding"): code time ranges of audio and video sources, read their
 * transcripts, find speakers, and find code names in transcripts.
 *
 * File I/O (sidecar transcripts, the transcription endpoint) happens in `prepare`, which may await and reads the
 * source's record through `PrepareContext.reader`; `run` stays synchronous and re-checks that the source still
 * exists. Text sources are read in `run`, from the project.
 */
import { z } from 'zod';
import { ToolError } from '../core/errors';
import { applyAvCode, assertAvType, removeAvSegment, segmentAt, transcriptText, findCodeMentions, type LabelledTranscriptSegment } from '../domain/av';
import type { AvSegment, SourceWithCounts } from '../domain/ports';
import { codingOut } from './present';
import { detectSpeakers, speakerTurns, summarizeTurns } from '../domain/speakers';
import { requireSource } from '../domain/sources';
import { loadTranscript, type LoadedTranscript } from '../exchange/transcripts';
import type { PrepareContext } from './defineTool';
import { defineTool } from './defineTool';
import { args, id, memo, text } from './schemas';

/** An AV time in integer milliseconds; negative values pass the schema so the domain can answer INVALID_TIME_RANGE. */
function ms(what: string) {
  return z.number().int().min(-Number.MAX_SAFE_INTEGER).max(Number.MAX_SAFE_INTEGER).describe(`${what}, in integer milliseconds from the start of the media`);
}

/** An AV segment as the tools return it, with its code's name and colour. Times in milliseconds. */
export function avSegmentOut(s: AvSegment, code?: { name: string; color: string }) {
  return {
    ...codingOut(s, code),
    start_ms: s.start_ms,
    end_ms: s.end_ms,
    duration_ms: s.end_ms - s.start_ms,
    transcript: s.transcript,
    memo: s.memo,
    owner: s.owner,
    session_id: s.session_id,
    // who coded it (issue 14, item 1): the owner's coder name and role (null: from before roles)
    coder: s.owner,
    coder_role: s.coder_role ?? null,
    created_at: s.created_at,
  };
}

export const applyAvCodeTool = defineTool({
  name: 'apply_av_code',
  group: 'av',
  title: 'Apply Code to Audio/Video',
  description:
    'Code a time range of an audio or video source: [start_ms, end_ms) in integer milliseconds from the start of the media, end exclusive. ' +
    'Optionally store what is said in the range (transcript) and a memo. Ranges of the same code on the same source may touch (end_ms = next start_ms) but not overlap. ' +
    'Use transcribe_media to find the times of what was said. Returns the AV segment {segment_id, code_id, code_name, source_id, start_ms, end_ms, duration_ms, transcript, memo, owner, ...}. ' +
    'Errors: AV_SEGMENT_NOT_CODED/CODE_NOT_FOUND, SOURCE_NOT_FOUND, INVALID_ARGUMENTS (the source is not audio or video), ' +
    'AV_SEGMENT_NOT_CODED/INVALID_TIME_RANGE (negative, or end_ms not after start_ms), AV_SEGMENT_NOT_CODED/OVERLAPPING_SEGMENT (details.conflicts names the overlapping segments).',
  input: args({
    code_id: id('the code to apply'),
    source_id: id('the audio or video source'),
    start_ms: ms('start of the range'),
    end_ms: ms('end of the range (exclusive), after start_ms'),
    transcript: text(100_000).optional().describe('what is said in the range'),
    memo: memo.optional().describe('memo on the coded range'),
  }),
  effect: 'create',
  trust: 'apply_code',
  run: (ctx, input) => {
    const seg = applyAvCode(ctx.domain, input);
    const code = ctx.domain.repo.getCode(seg.code_id);
    return avSegmentOut(seg, code);
  },
});

export const listAvSegmentsTool = defineTool({
  name: 'list_av_segments',
  group: 'av',
  title: 'List AV Segments',
  description:
    'List the coded time ranges of an audio or video source, by start time, each with its code, start_ms and end_ms (integer milliseconds, end exclusive), ' +
    'transcript, memo and coder. Returns {source_id, source_name, source_type, count, segments: [...]} (a text source has none). Errors: SOURCE_NOT_FOUND.',
  input: args({ source_id: id('the source') }),
  effect: 'read',
  trust: 'read',
  run: (ctx, input) => {
    const source = requireSource(ctx.domain, input.source_id);
    const codes = new Map(ctx.domain.repo.listCodes().map((c) => [c.code_id, c]));
    const segments = ctx.domain.repo.listAvSegmentsForSource(source.source_id).map((s) => avSegmentOut(s, codes.get(s.code_id)));
    return { source_id: source.source_id, source_name: source.name, source_type: source.type, count: segments.length, segments };
  },
});

export const removeAvSegmentTool = defineTool({
  name: 'remove_av_segment',
  group: 'av',
  title: 'Remove AV Segment',
  description:
    'Remove one coded time range of an audio or video source (the coding, not the media). Returns the removed segment with deleted: true. ' +
    "Text and AV segments share one id space: a text segment's id is refused (use delete_segment). Errors: AV_SEGMENT_NOT_REMOVED/NOT_FOUND (also for a text segment's id).",
  input: args({ segment_id: id('the AV segment') }),
  effect: 'destroy',
  trust: 'apply_code',
  run: (ctx, input) => {
    const seg = removeAvSegment(ctx.domain, input.segment_id);
    return { deleted: true, ...avSegmentOut(seg, ctx.domain.repo.getCode(seg.code_id)) };
  },
});

/** The source of a transcript tool, read in `prepare`. Errors: NO_PROJECT, SOURCE_NOT_FOUND. */
function preparedSource(sourceId: number, pctx: PrepareContext): SourceWithCounts {
  if (!pctx.reader) throw new ToolError('NO_PROJECT', 'No project is open. Ask the researcher to open one (Marginalia: Open Project).');
  const source = pctx.reader.getSource(sourceId);
  if (!source) throw new ToolError('SOURCE_NOT_FOUND', `No source with source_id ${sourceId}`);
  return source;
}

/**
 * What the transcript tools work on: a text source's stored text (read in `run`), or the transcript of an audio
 * or video source (loaded in `prepare`). Errors: SOURCE_NOT_FOUND, INVALID_ARGUMENTS (an image, or a source
 * without text), TRANSCRIPT_NOT_FOUND, TRANSCRIPTION_FAILED.
 */
async function prepareTranscriptOrText(
  sourceId: number,
  pctx: PrepareContext,
): Promise<{ kind: 'text' } | { kind: 'transcript'; transcript: LoadedTranscript }> {
  const source = preparedSource(sourceId, pctx);
  if (source.type === 'audio' || source.type === 'video')
    return { kind: 'transcript', transcript: await loadTranscript(source, pctx.transcriptionEndpoint, pctx.paths) };
  if (pctx.reader?.getSourceText(sourceId) == null) {
    throw new ToolError(
      'INVALID_ARGUMENTS',
      `The source "${source.name}" (${source.type}) has no text and no transcript; use a text, pdf, audio or video source`,
      { source_id: sourceId, type: source.type },
    );
  }
  return { kind: 'text' };
}

/** The transcript as tools return it: segments without the internal label format, and its plain text. */
function transcriptOut(t: LoadedTranscript) {
  const segments = t.segments.map((s) => ({ start_ms: s.start_ms, end_ms: s.end_ms, speaker: s.speaker, text: s.text }));
  return { segments, text: transcriptText(t.segments).text };
}

/** Where a transcript came from, as tools return it. */
function originOut(t: LoadedTranscript) {
  return t.origin.kind === 'sidecar'
    ? { read_from: 'sidecar' as const, sidecar_path: t.origin.path }
    : { read_from: 'endpoint' as const, endpoint: t.origin.url };
}

export const transcribeMediaTool = defineTool({
  name: 'transcribe_media',
  group: 'av',
  title: 'Transcribe Media',
  description:
    'The transcript of an audio or video source, from a sidecar file beside the media file (same base name with .vtt, .srt or .txt with timestamps, tried in that order), ' +
    'or, when none exists and the researcher configured a local Whisper-compatible server (marginalia.transcription.endpoint), from that server. ' +
    "For agents, a sidecar that is a symbolic link out of the media file's folder (and the folders an agent may use) is not read. " +
    'Returns {source_id, source_name, format ("webvtt" | "srt" | "timestamped_text" | "whisper"), read_from ("sidecar" | "endpoint"), count, ' +
    'segments: [{start_ms, end_ms, speaker, text}], text, language, duration_ms, warnings}; times are integer milliseconds (end_ms null when the transcript gives no end), ' +
    "text is the segments' texts joined by line feeds. Errors: SOURCE_NOT_FOUND, INVALID_ARGUMENTS (not an audio or video source), " +
    'TRANSCRIPT_NOT_FOUND (no sidecar and no endpoint; the message names the files looked for), TRANSCRIPTION_FAILED (the endpoint failed).',
  input: args({ source_id: id('the audio or video source') }),
  effect: 'read',
  trust: 'read',
  prepare: async (input, pctx) => {
    const source = preparedSource(input.source_id, pctx);
    assertAvType(source);
    return loadTranscript(source, pctx.transcriptionEndpoint, pctx.paths);
  },
  run: (ctx, input, transcript) => {
    const source = requireSource(ctx.domain, input.source_id);
    const out = transcriptOut(transcript);
    return {
      source_id: source.source_id,
      source_name: source.name,
      format: transcript.format,
      ...originOut(transcript),
      count: out.segments.length,
      segments: out.segments,
      text: out.text,
      language: transcript.language,
      duration_ms: transcript.duration_ms,
      warnings: transcript.warnings,
    };
  },
});

export const detectSpeakersTool = defineTool({
  name: 'detect_speakers',
  group: 'av',
  title: 'Detect Speakers',
  description:
    "Find the speakers of a transcript: a text source's text, or an audio/video source's transcript (as transcribe_media reads it). " +
    'Recognises UPPERCASE labels with a colon (LCC:, BELL 7:), Title Case labels with a colon (Researcher 1:, Sara Mannheimer:), labels in square brackets ([id1] text), ' +
    'Otter.ai turn headers (Sara Mannheimer  00:13) and WebVTT voices (<v Name>); timestamps in square brackets ([00:12:34]) are stripped first, and indented continuation lines are never labels. ' +
    'Returns {source_id, source_name, source_type, read_from ("source_text" | "sidecar" | "endpoint"), count, total_turns, speakers: [{name, turns, first_pos, first_ms?, format}]} in order of first appearance; ' +
    "first_pos counts code points of the source text (or of transcribe_media's text for audio/video, where first_ms gives the time). " +
    'Errors: SOURCE_NOT_FOUND, INVALID_ARGUMENTS (a source with neither text nor transcript), TRANSCRIPT_NOT_FOUND, TRANSCRIPTION_FAILED.',
  input: args({ source_id: id('the text, audio or video source') }),
  effect: 'read',
  trust: 'read',
  prepare: (input, pctx) => prepareTranscriptOrText(input.source_id, pctx),
  run: (ctx, input, prepared) => {
    const source = requireSource(ctx.domain, input.source_id);
    const head = { source_id: source.source_id, source_name: source.name, source_type: source.type };
    if (prepared.kind === 'text') {
      const text = ctx.domain.repo.getSourceText(source.source_id) ?? '';
      const d = detectSpeakers(text);
      return { ...head, read_from: 'source_text' as const, layout: d.layout, count: d.speakers.length, total_turns: d.total_turns, speakers: d.speakers };
    }
    const t = prepared.transcript;
    const { starts } = transcriptText(t.segments);
    const summary = summarizeTurns(t.segments.map((s, i) => ({ speaker: s.speaker, format: s.speaker_format ?? 'uppercase', start: starts[i] as number })));
    const speakers = summary.speakers.map((s) => ({ ...s, first_ms: (t.segments.find((g) => g.speaker === s.name) as LabelledTranscriptSegment).start_ms }));
    return { ...head, ...originOut(t), format: t.format, count: speakers.length, total_turns: summary.total_turns, speakers };
  },
});

/** Most matches returned per code by suggest_codes_for_transcript. */
export const MAX_MATCHES_PER_CODE = 50;

export const suggestCodesForTranscriptTool = defineTool({
  name: 'suggest_codes_for_transcript',
  group: 'av',
  title: 'Suggest Codes for Transcript',
  description:
    "Keyword matching: find where the codebook's code names occur in a transcript (a text source's text, or an audio/video source's transcript as transcribe_media reads it), " +
    'case-insensitively and as whole words (a blank in a name matches any whitespace; speaker labels are skipped). Records nothing: it gives candidates to review or apply. ' +
    `Returns {source_id, source_name, read_from, codes_checked, count, suggestions: [{code_id, code_name, count, truncated, matches: [{start_pos, end_pos, match, excerpt, start_ms?, end_ms?, speaker?}]}]}, ` +
    `codes with most matches first, at most ${MAX_MATCHES_PER_CODE} matches per code; positions are code points of the source text (or of transcribe_media's text, with the segment's times). ` +
    'Errors: SOURCE_NOT_FOUND, INVALID_ARGUMENTS (a source with neither text nor transcript), TRANSCRIPT_NOT_FOUND, TRANSCRIPTION_FAILED.',
  input: args({ source_id: id('the text, audio or video source') }),
  effect: 'read',
  trust: 'search',
  prepare: (input, pctx) => prepareTranscriptOrText(input.source_id, pctx),
  run: (ctx, input, prepared) => {
    const source = requireSource(ctx.domain, input.source_id);
    const codes = ctx.domain.repo.listCodes();
    const head = { source_id: source.source_id, source_name: source.name, source_type: source.type };
    if (prepared.kind === 'text') {
      const text = ctx.domain.repo.getSourceText(source.source_id) ?? '';
      const labels = speakerTurns(text).turns;
      const suggestions = findCodeMentions(text, codes, { maxPerCode: MAX_MATCHES_PER_CODE, exclude: labels });
      return { ...head, read_from: 'source_text' as const, codes_checked: codes.length, count: suggestions.length, suggestions };
    }
    const t = prepared.transcript;
    const { text, starts } = transcriptText(t.segments);
    const suggestions = findCodeMentions(text, codes, { maxPerCode: MAX_MATCHES_PER_CODE }).map((s) => ({
      ...s,
      matches: s.matches.map((m) => {
        const seg = t.segments[segmentAt(starts, m.start_pos)] as LabelledTranscriptSegment;
        return { ...m, start_ms: seg.start_ms, end_ms: seg.end_ms, speaker: seg.speaker };
      }),
    }));
    return { ...head, ...originOut(t), format: t.format, codes_checked: codes.length, count: suggestions.length, suggestions };
  },
});
