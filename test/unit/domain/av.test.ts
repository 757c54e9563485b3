/**
 * AV coding through the one pipeline on a real project file: apply_av_code, list_av_segments,
 * remove_av_segment (every error code, the overlap rule with half-open ranges), transcribe_media from sidecar
 * files (WebVTT, SRT, timestamped text) written here at test time, and from a Whisper-compatible endpoint: a
 * small node:http server started by the test stands in for a real Whisper server (which cannot run here) and
 * checks the request as OpenAI's `/v1/audio/transcriptions` API defines it. Expected values are written by hand
 * from the fixtures below.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { createPipeline, headlessHost } from '../../../src/cli/compose';
import { silentLogger } from '../../../src/core/log';
import { ALICE, FIXED_ISO, fixedClock, openFixture, snapshot, storedEvents, type Fixture } from './projectFixture';

/** A few bytes standing in for an MP3 file (the content is never decoded, only registered and uploaded). */
const FAKE_MP3 = Buffer.from([0x49, 0x44, 0x33, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0a, 0xff, 0xfb, 0x90, 0x64, 0x00]);

/** Writes `name` into `dir` and imports it with import_file_source; returns the source. */
async function importMedia(fx: Fixture, dir: string, name: string, bytes: Buffer = FAKE_MP3): Promise<{ source_id: number; type: string; file_path: string }> {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, name);
  fs.writeFileSync(file, bytes);
  return fx.ok('import_file_source', { file_path: file });
}

describe('domain/av: AV coding through the pipeline', () => {
  let fx: Fixture;
  let audio: { source_id: number; type: string };
  let video: { source_id: number; type: string };
  let textSource: { source_id: number };
  let code: { code_id: number };
  let other: { code_id: number };

  beforeEach(async () => {
    fx = await openFixture();
    audio = await importMedia(fx, path.join(fx.dir, 'media'), 'interview.mp3');
    video = await importMedia(fx, path.join(fx.dir, 'media'), 'walk.mp4');
    textSource = await fx.ok('add_text_source', { name: 'Notes', content: 'Field notes.' });
    code = await fx.ok('create_code', { name: 'Trust', color: '#4E79A7' });
    other = await fx.ok('create_code', { name: 'Doubt', color: '#E15759' });
  });
  afterEach(async () => {
    await fx.close();
  });

  it('import_file_source registers .mp3 as audio and .mp4 as video (the sources AV coding works on)', () => {
    assert.equal(audio.type, 'audio');
    assert.equal(video.type, 'video');
  });

  describe('apply_av_code', () => {
    it('stores the coded range, returns it, lists it, counts it and emits coding.av_segment_coded', async () => {
      const seg = await fx.ok('apply_av_code', {
        code_id: code.code_id,
        source_id: audio.source_id,
        start_ms: 1500,
        end_ms: 4250,
        transcript: 'I trust them.',
        memo: 'key moment',
      });
      assert.equal(seg.code_id, code.code_id);
      assert.equal(seg.code_name, 'Trust');
      assert.equal(seg.start_ms, 1500);
      assert.equal(seg.end_ms, 4250);
      assert.equal(seg.duration_ms, 2750);
      assert.equal(seg.transcript, 'I trust them.');
      assert.equal(seg.memo, 'key moment');
      assert.equal(seg.owner, 'alice');
      assert.equal(seg.session_id, ALICE.session_id);
      assert.equal(seg.created_at, FIXED_ISO);

      // the row as SQLite holds it
      const row = fx.handle.store.get<Record<string, unknown>>(
        'SELECT code_id, source_id, start_ms, end_ms, transcript, memo, owner FROM av_segments WHERE id = ?',
        [seg.segment_id],
      );
      assert.deepEqual(
        { ...row },
        { code_id: code.code_id, source_id: audio.source_id, start_ms: 1500, end_ms: 4250, transcript: 'I trust them.', memo: 'key moment', owner: 'alice' },
      );

      const list = await fx.ok('list_av_segments', { source_id: audio.source_id });
      assert.equal(list.count, 1);
      assert.equal(list.source_type, 'audio');
      assert.equal(list.segments[0].segment_id, seg.segment_id);

      const codes = await fx.ok('list_codes');
      assert.equal(codes.codes.find((c: any) => c.code_id === code.code_id).av_segment_count, 1);
      const sources = await fx.ok('list_sources');
      assert.equal(sources.sources.find((s: any) => s.source_id === audio.source_id).av_segment_count, 1);

      const ev = storedEvents(fx.handle).filter((e) => e.event_type === 'coding.av_segment_coded');
      assert.equal(ev.length, 1);
      assert.equal(ev[0]!.aggregate_type, 'av_segment');
      assert.equal(ev[0]!.aggregate_id, String(seg.segment_id));
      assert.deepEqual(ev[0]!.payload, {
        segment_id: seg.segment_id,
        code_id: code.code_id,
        source_id: audio.source_id,
        start_ms: 1500,
        end_ms: 4250,
        transcript: 'I trust them.',
      });
    });

    it('codes video sources too, and lists segments by start time', async () => {
      await fx.ok('apply_av_code', { code_id: code.code_id, source_id: video.source_id, start_ms: 9000, end_ms: 10000 });
      await fx.ok('apply_av_code', { code_id: other.code_id, source_id: video.source_id, start_ms: 0, end_ms: 500 });
      const list = await fx.ok('list_av_segments', { source_id: video.source_id });
      assert.deepEqual(
        list.segments.map((s: any) => [s.code_name, s.start_ms, s.end_ms]),
        [
          ['Doubt', 0, 500],
          ['Trust', 9000, 10000],
        ],
      );
    });

    it('fails with AV_SEGMENT_NOT_CODED/CODE_NOT_FOUND for an unknown code', async () => {
      const before = await snapshot(fx);
      const out = await fx.fails(
        'apply_av_code',
        { code_id: 9999, source_id: audio.source_id, start_ms: 0, end_ms: 10 },
        'AV_SEGMENT_NOT_CODED/CODE_NOT_FOUND',
      );
      assert.match((out.envelope as any).error, /9999/);
      assert.deepEqual(await snapshot(fx), before);
    });

    it('fails with SOURCE_NOT_FOUND for an unknown source', async () => {
      await fx.fails('apply_av_code', { code_id: code.code_id, source_id: 9999, start_ms: 0, end_ms: 10 }, 'SOURCE_NOT_FOUND');
    });

    it('fails with INVALID_ARGUMENTS naming the type when the source is not audio or video', async () => {
      const out = await fx.fails('apply_av_code', { code_id: code.code_id, source_id: textSource.source_id, start_ms: 0, end_ms: 10 }, 'INVALID_ARGUMENTS');
      assert.match((out.envelope as any).error, /"Notes".*text source.*audio or video/);
    });

    it('fails with AV_SEGMENT_NOT_CODED/INVALID_TIME_RANGE when end is not after start, or start is negative', async () => {
      const before = await snapshot(fx);
      for (const [start_ms, end_ms] of [
        [1000, 1000],
        [2000, 1000],
        [-1, 500],
        [-500, -100],
      ]) {
        await fx.fails('apply_av_code', { code_id: code.code_id, source_id: audio.source_id, start_ms, end_ms }, 'AV_SEGMENT_NOT_CODED/INVALID_TIME_RANGE');
      }
      assert.deepEqual(await snapshot(fx), before);
      assert.equal((await fx.ok('list_av_segments', { source_id: audio.source_id })).count, 0);
    });

    it('accepts only integer milliseconds (INVALID_ARGUMENTS for fractions and strings)', async () => {
      await fx.fails('apply_av_code', { code_id: code.code_id, source_id: audio.source_id, start_ms: 0.5, end_ms: 10 }, 'INVALID_ARGUMENTS');
      await fx.fails('apply_av_code', { code_id: code.code_id, source_id: audio.source_id, start_ms: '0', end_ms: 10 }, 'INVALID_ARGUMENTS');
      await fx.fails('apply_av_code', { code_id: code.code_id, source_id: audio.source_id, start_ms: 0 }, 'INVALID_ARGUMENTS');
    });

    it('rejects an overlap of the same code on the same source with AV_SEGMENT_NOT_CODED/OVERLAPPING_SEGMENT (half-open ranges)', async () => {
      const first = await fx.ok('apply_av_code', { code_id: code.code_id, source_id: audio.source_id, start_ms: 1000, end_ms: 2000 });
      const overlapping = [
        [1500, 2500], // overlaps the end
        [500, 1001], // overlaps the first millisecond
        [1999, 3000], // overlaps the last millisecond
        [1200, 1800], // inside
        [0, 5000], // around
        [1000, 2000], // the same range again
      ];
      for (const [start_ms, end_ms] of overlapping) {
        const out = await fx.fails(
          'apply_av_code',
          { code_id: code.code_id, source_id: audio.source_id, start_ms, end_ms },
          'AV_SEGMENT_NOT_CODED/OVERLAPPING_SEGMENT',
        );
        assert.deepEqual((out.envelope as any).details.conflicts, [{ segment_id: first.segment_id, start_ms: 1000, end_ms: 2000 }], `[${start_ms}, ${end_ms})`);
      }
      // touching ranges share no millisecond: allowed on both sides
      await fx.ok('apply_av_code', { code_id: code.code_id, source_id: audio.source_id, start_ms: 2000, end_ms: 3000 });
      await fx.ok('apply_av_code', { code_id: code.code_id, source_id: audio.source_id, start_ms: 0, end_ms: 1000 });
      // another code on the same range, and the same code on another source, are not overlaps
      await fx.ok('apply_av_code', { code_id: other.code_id, source_id: audio.source_id, start_ms: 1000, end_ms: 2000 });
      await fx.ok('apply_av_code', { code_id: code.code_id, source_id: video.source_id, start_ms: 1000, end_ms: 2000 });
      // [500, 2500) now overlaps three segments of the code: all are named
      const out = await fx.fails(
        'apply_av_code',
        { code_id: code.code_id, source_id: audio.source_id, start_ms: 500, end_ms: 2500 },
        'AV_SEGMENT_NOT_CODED/OVERLAPPING_SEGMENT',
      );
      assert.deepEqual(
        (out.envelope as any).details.conflicts.map((c: any) => [c.start_ms, c.end_ms]),
        [
          [0, 1000],
          [1000, 2000],
          [2000, 3000],
        ],
      );
      assert.equal((await fx.ok('list_av_segments', { source_id: audio.source_id })).count, 4);
    });
  });

  describe('remove_av_segment', () => {
    it('removes the segment, emits coding.av_segment_uncoded, and frees the range', async () => {
      const seg = await fx.ok('apply_av_code', { code_id: code.code_id, source_id: audio.source_id, start_ms: 100, end_ms: 200 });
      const removed = await fx.ok('remove_av_segment', { segment_id: seg.segment_id });
      assert.equal(removed.deleted, true);
      assert.equal(removed.segment_id, seg.segment_id);
      assert.equal(removed.start_ms, 100);
      assert.equal((await fx.ok('list_av_segments', { source_id: audio.source_id })).count, 0);
      assert.equal(fx.handle.store.get<{ n: number }>('SELECT count(*) AS n FROM av_segments')?.n, 0);
      const ev = storedEvents(fx.handle).filter((e) => e.event_type === 'coding.av_segment_uncoded');
      assert.deepEqual(
        ev.map((e) => e.payload),
        [{ segment_id: seg.segment_id, code_id: code.code_id, source_id: audio.source_id, start_ms: 100, end_ms: 200 }],
      );
      await fx.ok('apply_av_code', { code_id: code.code_id, source_id: audio.source_id, start_ms: 100, end_ms: 200 });
    });

    it('fails with AV_SEGMENT_NOT_REMOVED/NOT_FOUND for an unknown or already removed segment', async () => {
      await fx.fails('remove_av_segment', { segment_id: 4242 }, 'AV_SEGMENT_NOT_REMOVED/NOT_FOUND');
      const seg = await fx.ok('apply_av_code', { code_id: code.code_id, source_id: audio.source_id, start_ms: 100, end_ms: 200 });
      await fx.ok('remove_av_segment', { segment_id: seg.segment_id });
      await fx.fails('remove_av_segment', { segment_id: seg.segment_id }, 'AV_SEGMENT_NOT_REMOVED/NOT_FOUND');
    });
  });

  it('list_av_segments fails with SOURCE_NOT_FOUND for an unknown source', async () => {
    await fx.fails('list_av_segments', { source_id: 9999 }, 'SOURCE_NOT_FOUND');
  });
});

describe('domain/av: transcribe_media from sidecar files', () => {
  let fx: Fixture;
  let media: string;
  beforeEach(async () => {
    fx = await openFixture();
    media = path.join(fx.dir, 'media');
    fs.mkdirSync(media);
  });
  afterEach(async () => {
    await fx.close();
  });

  it('reads a WebVTT sidecar with the same base name: voices, classes, several voices in a cue, entities, NOTE/STYLE blocks, cue ids, times without hours', async () => {
    const src = await importMedia(fx, media, 'talk.mp3');
    fs.writeFileSync(
      path.join(media, 'talk.vtt'),
      [
        'WEBVTT',
        'Kind: captions',
        '',
        'STYLE',
        '::cue { color: yellow }',
        '',
        'NOTE recorded in the garden',
        '',
        'intro',
        '00:01.000 --> 00:04.500',
        '<v Ana>Welcome to the garden &amp; the shed.</v>',
        '',
        '00:04.500 --> 00:07.250 align:start',
        '<v.loud Researcher 1>Thank you.</v>',
        '<v Ana>You are <i>very</i> welcome.',
        '',
        '1:02:03.500 --> 1:02:05.000',
        'No voice here, just text',
        'on two lines.',
        '',
      ].join('\n'),
    );
    const t = await fx.ok('transcribe_media', { source_id: src.source_id });
    assert.equal(t.format, 'webvtt');
    assert.equal(t.read_from, 'sidecar');
    assert.equal(t.sidecar_path, path.join(media, 'talk.vtt'));
    assert.deepEqual(t.segments, [
      { start_ms: 1000, end_ms: 4500, speaker: 'Ana', text: 'Welcome to the garden & the shed.' },
      { start_ms: 4500, end_ms: 7250, speaker: 'Researcher 1', text: 'Thank you.' },
      { start_ms: 4500, end_ms: 7250, speaker: 'Ana', text: 'You are very welcome.' },
      { start_ms: 3723500, end_ms: 3725000, speaker: null, text: 'No voice here, just text on two lines.' },
    ]);
    assert.equal(t.count, 4);
    assert.equal(t.text, 'Welcome to the garden & the shed.\nThank you.\nYou are very welcome.\nNo voice here, just text on two lines.');
  });

  it('reads an SRT sidecar: CRLF, byte-order mark, formatting tags, speaker labels in the cue text', async () => {
    const src = await importMedia(fx, media, 'call.mp4');
    const srt =
      '\uFEFF1\r\n00:00:01,000 --> 00:00:02,500\r\nJOHN: Hello there.\r\n\r\n2\r\n00:00:03,000 --> 00:00:05,040\r\n<i>Mary Jones:</i> Hi,\r\nhow are you?\r\n\r\n3\r\n01:00:00,250 --> 01:00:01,000\r\n[Music]\r\n';
    fs.writeFileSync(path.join(media, 'call.srt'), srt);
    const t = await fx.ok('transcribe_media', { source_id: src.source_id });
    assert.equal(t.format, 'srt');
    assert.deepEqual(t.segments, [
      { start_ms: 1000, end_ms: 2500, speaker: 'JOHN', text: 'Hello there.' },
      { start_ms: 3000, end_ms: 5040, speaker: 'Mary Jones', text: 'Hi, how are you?' },
      { start_ms: 3600250, end_ms: 3601000, speaker: null, text: '[Music]' },
    ]);
  });

  it('reads a .txt sidecar with timestamps: Spacelog blocks (negative and four-part times, metadata lines, two speakers in a block, continuation lines)', async () => {
    const src = await importMedia(fx, media, 'mission.mp3');
    const txt = [
      '[-00:00:00:03]',
      '_page : 148',
      '_tape : ',
      'CC: 3, 2, 1, 0',
      '',
      '[00:00:00:03]',
      'P: Roger. The clock is operating.',
      '     We are underway.',
      'CC: Hear loud and clear.',
      '',
      '[00:01:02:03]',
      'P: Fine.',
      '',
    ].join('\n');
    fs.writeFileSync(path.join(media, 'mission.txt'), txt);
    const t = await fx.ok('transcribe_media', { source_id: src.source_id });
    assert.equal(t.format, 'timestamped_text');
    // [DD:HH:MM:SS]: 00:01:02:03 is 1 h 2 min 3 s = 3,723,000 ms; the last turn has no end
    assert.deepEqual(t.segments, [
      { start_ms: -3000, end_ms: 3000, speaker: 'CC', text: '3, 2, 1, 0' },
      { start_ms: 3000, end_ms: 3723000, speaker: 'P', text: 'Roger. The clock is operating. We are underway.' },
      { start_ms: 3000, end_ms: 3723000, speaker: 'CC', text: 'Hear loud and clear.' },
      { start_ms: 3723000, end_ms: null, speaker: 'P', text: 'Fine.' },
    ]);
  });

  it('reads .txt sidecars in the [HH:MM:SS] Speaker: and Otter.ai (Name  MM:SS) layouts, skipping the header', async () => {
    const a = await importMedia(fx, media, 'a.mp3');
    fs.writeFileSync(
      path.join(media, 'a.txt'),
      'Interview 3\n[00:00:05] INTERVIEWER: How did it start?\n[00:00:09.5] Maria: With a seed swap.\nWe met weekly.\n',
    );
    const ta = await fx.ok('transcribe_media', { source_id: a.source_id });
    assert.deepEqual(ta.segments, [
      { start_ms: 5000, end_ms: 9500, speaker: 'INTERVIEWER', text: 'How did it start?' },
      { start_ms: 9500, end_ms: null, speaker: 'Maria', text: 'With a seed swap. We met weekly.' },
    ]);
    assert.deepEqual(ta.warnings, ['1 line(s) before the first timestamp were skipped (title or header)']);

    const b = await importMedia(fx, media, 'b.m4a');
    fs.writeFileSync(
      path.join(media, 'b.txt'),
      '\nb_transcript\nSUMMARY KEYWORDS\ngarden, seeds\nSPEAKERS\nBSR01, Sara Mannheimer\n\nBSR01  00:00\nI have the email.\n\nSara Mannheimer  01:13\nGreat.\n\nBSR01  1:02:03\nBye.\n',
    );
    const tb = await fx.ok('transcribe_media', { source_id: b.source_id });
    assert.deepEqual(tb.segments, [
      { start_ms: 0, end_ms: 73000, speaker: 'BSR01', text: 'I have the email.' },
      { start_ms: 73000, end_ms: 3723000, speaker: 'Sara Mannheimer', text: 'Great.' },
      { start_ms: 3723000, end_ms: null, speaker: 'BSR01', text: 'Bye.' },
    ]);
  });

  it('tries .vtt, then .srt, then .txt; finds <file>.vtt and a differently cased extension', async () => {
    const a = await importMedia(fx, media, 'order.mp3');
    fs.writeFileSync(path.join(media, 'order.txt'), '[00:00:01] T: from txt\n');
    assert.equal((await fx.ok('transcribe_media', { source_id: a.source_id })).format, 'timestamped_text');
    fs.writeFileSync(path.join(media, 'order.srt'), '1\n00:00:01,000 --> 00:00:02,000\nfrom srt\n');
    assert.equal((await fx.ok('transcribe_media', { source_id: a.source_id })).format, 'srt');
    fs.writeFileSync(path.join(media, 'order.vtt'), 'WEBVTT\n\n00:01.000 --> 00:02.000\nfrom vtt\n');
    const t = await fx.ok('transcribe_media', { source_id: a.source_id });
    assert.equal(t.format, 'webvtt');
    assert.equal(t.text, 'from vtt');

    const b = await importMedia(fx, media, 'clip.mp4');
    fs.writeFileSync(path.join(media, 'clip.mp4.vtt'), 'WEBVTT\n\n00:01.000 --> 00:02.000\nfull-name sidecar\n');
    assert.equal((await fx.ok('transcribe_media', { source_id: b.source_id })).text, 'full-name sidecar');

    const c = await importMedia(fx, media, 'shout.wav');
    fs.writeFileSync(path.join(media, 'shout.SRT'), '1\n00:00:01,000 --> 00:00:02,000\nupper-case extension\n');
    assert.equal((await fx.ok('transcribe_media', { source_id: c.source_id })).text, 'upper-case extension');
  });

  it('reads a sidecar that is not UTF-8 as Windows-1252 and says so', async () => {
    const src = await importMedia(fx, media, 'old.mp3');
    // "café" with é as the single Windows-1252 byte 0xE9 (invalid UTF-8)
    fs.writeFileSync(
      path.join(media, 'old.srt'),
      Buffer.concat([Buffer.from('1\n00:00:01,000 --> 00:00:02,000\ncaf'), Buffer.from([0xe9]), Buffer.from('\n')]),
    );
    const t = await fx.ok('transcribe_media', { source_id: src.source_id });
    assert.equal(t.text, 'café');
    assert.ok(
      t.warnings.some((w: string) => w.includes('Windows-1252')),
      t.warnings.join('; '),
    );
  });

  it('fails with TRANSCRIPT_NOT_FOUND naming the files looked for when there is no sidecar and no endpoint', async () => {
    const src = await importMedia(fx, media, 'silent.mp3');
    const out = await fx.fails('transcribe_media', { source_id: src.source_id }, 'TRANSCRIPT_NOT_FOUND');
    const env = out.envelope as any;
    assert.match(env.error, /silent\.vtt, silent\.srt, silent\.txt/);
    assert.match(env.error, /marginalia\.transcription\.endpoint/);
    assert.deepEqual(
      env.details.looked_for,
      ['.vtt', '.srt', '.txt'].map((e) => path.join(media, `silent${e}`)),
    );
  });

  it('fails with TRANSCRIPT_NOT_FOUND when the only sidecar has no timed turns, saying why it was not used', async () => {
    const src = await importMedia(fx, media, 'plain.mp3');
    fs.writeFileSync(path.join(media, 'plain.txt'), 'Researcher 1: no times anywhere\nAna: none\n');
    const out = await fx.fails('transcribe_media', { source_id: src.source_id }, 'TRANSCRIPT_NOT_FOUND');
    assert.match((out.envelope as any).error, /plain\.txt: no timed turns/);
  });

  it('fails with INVALID_ARGUMENTS for a text source and SOURCE_NOT_FOUND for an unknown one', async () => {
    const text = await fx.ok('add_text_source', { name: 'T', content: 'P: hello' });
    const out = await fx.fails('transcribe_media', { source_id: text.source_id }, 'INVALID_ARGUMENTS');
    assert.match((out.envelope as any).error, /text source.*audio or video/);
    await fx.fails('transcribe_media', { source_id: 777 }, 'SOURCE_NOT_FOUND');
  });

  it('detect_speakers and suggest_codes_for_transcript read an audio source through its sidecar, with times', async () => {
    const src = await importMedia(fx, media, 'garden.mp3');
    fs.writeFileSync(
      path.join(media, 'garden.vtt'),
      'WEBVTT\n\n00:00.000 --> 00:02.000\n<v Ana>We share the seeds.\n\n00:02.000 --> 00:05.000\n<v Bo>Sharing builds trust.\n\n00:05.000 --> 00:06.000\n<v Ana>Trust, yes.\n',
    );
    const d = await fx.ok('detect_speakers', { source_id: src.source_id });
    assert.equal(d.read_from, 'sidecar');
    // transcribe_media's text is "We share the seeds.\nSharing builds trust.\nTrust, yes." : Bo's turn starts at 20
    assert.deepEqual(d.speakers, [
      { name: 'Ana', turns: 2, first_pos: 0, first_ms: 0, format: 'webvtt_voice' },
      { name: 'Bo', turns: 1, first_pos: 20, first_ms: 2000, format: 'webvtt_voice' },
    ]);
    await fx.ok('create_code', { name: 'trust', color: '#000000' });
    const s = await fx.ok('suggest_codes_for_transcript', { source_id: src.source_id });
    assert.equal(s.count, 1);
    assert.deepEqual(
      s.suggestions[0].matches.map((m: any) => [m.start_pos, m.end_pos, m.match, m.start_ms, m.end_ms, m.speaker]),
      [
        [35, 40, 'trust', 2000, 5000, 'Bo'],
        [42, 47, 'Trust', 5000, 6000, 'Ana'],
      ],
    );
  });
});

/** A stand-in for a Whisper-compatible server: records each request and answers with `reply`. */
interface FakeWhisper {
  url: string;
  requests: { method: string; url: string; contentType: string; body: Buffer }[];
  reply: { status: number; body: string };
  close(): Promise<void>;
}

async function startFakeWhisper(): Promise<FakeWhisper> {
  const fake: FakeWhisper = { url: '', requests: [], reply: { status: 200, body: '{}' }, close: async () => {} };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      fake.requests.push({ method: req.method ?? '', url: req.url ?? '', contentType: String(req.headers['content-type'] ?? ''), body: Buffer.concat(chunks) });
      res.writeHead(fake.reply.status, { 'Content-Type': 'application/json' });
      res.end(fake.reply.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fake.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return fake;
}

/** The parts of a multipart/form-data body (RFC 7578): name -> {filename, content}. */
function multipartParts(body: Buffer, contentType: string): Map<string, { filename: string | null; content: Buffer }> {
  const boundary = /boundary=(?:"([^"]+)"|([^;]+))/.exec(contentType);
  assert.ok(boundary, `multipart boundary in ${contentType}`);
  const delimiter = Buffer.from(`--${boundary[1] ?? boundary[2]}`);
  const parts = new Map<string, { filename: string | null; content: Buffer }>();
  let at = body.indexOf(delimiter);
  while (at >= 0) {
    const next = body.indexOf(delimiter, at + delimiter.length);
    if (next < 0) break;
    const part = body.subarray(at + delimiter.length + 2, next - 2); // skip CRLF after the delimiter and before the next
    const headerEnd = part.indexOf('\r\n\r\n');
    const headers = part.subarray(0, headerEnd).toString('utf8');
    const name = /name="([^"]*)"/.exec(headers)?.[1] ?? '';
    const filename = /filename="([^"]*)"/.exec(headers)?.[1] ?? null;
    parts.set(name, { filename, content: part.subarray(headerEnd + 4) });
    at = next;
  }
  return parts;
}

describe('domain/av: transcribe_media through a Whisper-compatible endpoint (a local stand-in server)', () => {
  let fx: Fixture;
  let fake: FakeWhisper;
  let media: string;
  /** invoke through a pipeline whose host has `endpoint` configured */
  let callWith: (endpoint: string, name: string, args: unknown) => Promise<any>;

  beforeEach(async () => {
    fx = await openFixture();
    fake = await startFakeWhisper();
    media = path.join(fx.dir, 'media');
    callWith = async (endpoint, name, args) => {
      const pipeline = createPipeline({
        project: () => fx.handle,
        host: { ...headlessHost, transcriptionEndpoint: endpoint },
        logger: silentLogger,
        clock: fixedClock,
      });
      return (await pipeline.invoke(name, args, ALICE)).envelope;
    };
  });
  afterEach(async () => {
    await fake.close();
    await fx.close();
  });

  const VERBOSE_JSON = JSON.stringify({
    task: 'transcribe',
    language: 'english',
    duration: 7.2,
    text: ' We planted beans. SPEAKER_1: Good.',
    segments: [
      {
        id: 0,
        seek: 0,
        start: 0.0,
        end: 2.5004,
        text: ' We planted beans.',
        tokens: [],
        temperature: 0,
        avg_logprob: -0.2,
        compression_ratio: 1.1,
        no_speech_prob: 0.01,
      },
      { id: 1, seek: 0, start: 2.5004, end: 7.2, text: ' Good.', speaker: 'SPEAKER_1' },
      { id: 2, seek: 0, start: 7.2, end: 7.2, text: '   ' },
    ],
  });

  it('POSTs the media file as multipart with model and response_format=verbose_json, and maps the segments to milliseconds', async () => {
    const src = await importMedia(fx, media, 'beans.mp3');
    fake.reply = { status: 200, body: VERBOSE_JSON };
    const env = await callWith(fake.url, 'transcribe_media', { source_id: src.source_id });
    assert.equal(env.success, true, JSON.stringify(env));
    assert.equal(fake.requests.length, 1);
    const req = fake.requests[0]!;
    assert.equal(req.method, 'POST');
    assert.equal(req.url, '/v1/audio/transcriptions');
    assert.match(req.contentType, /^multipart\/form-data; boundary=/);
    const parts = multipartParts(req.body, req.contentType);
    assert.equal(parts.get('file')?.filename, 'beans.mp3');
    assert.ok(parts.get('file')?.content.equals(FAKE_MP3), 'the uploaded bytes are the media file');
    assert.equal(parts.get('model')?.content.toString(), 'whisper-1');
    assert.equal(parts.get('response_format')?.content.toString(), 'verbose_json');
    assert.equal(parts.get('timestamp_granularities[]')?.content.toString(), 'segment');

    const d = env.data;
    assert.equal(d.format, 'whisper');
    assert.equal(d.read_from, 'endpoint');
    assert.equal(d.endpoint, `${fake.url}/v1/audio/transcriptions`);
    assert.equal(d.language, 'english');
    assert.equal(d.duration_ms, 7200);
    // 2.5004 s rounds to 2500 ms; the blank third segment is dropped; a diarized speaker is kept
    assert.deepEqual(d.segments, [
      { start_ms: 0, end_ms: 2500, speaker: null, text: 'We planted beans.' },
      { start_ms: 2500, end_ms: 7200, speaker: 'SPEAKER_1', text: 'Good.' },
    ]);
    assert.equal(d.text, 'We planted beans.\nGood.');
  });

  it('uses a ?model= of the endpoint URL, and an endpoint that already ends in /v1/audio/transcriptions as it is', async () => {
    const src = await importMedia(fx, media, 'beans.mp3');
    fake.reply = { status: 200, body: VERBOSE_JSON };
    await callWith(`${fake.url}/v1/audio/transcriptions?model=Systran/faster-whisper-small`, 'transcribe_media', { source_id: src.source_id });
    assert.equal(fake.requests[0]!.url, '/v1/audio/transcriptions');
    assert.equal(multipartParts(fake.requests[0]!.body, fake.requests[0]!.contentType).get('model')?.content.toString(), 'Systran/faster-whisper-small');
    await callWith(`${fake.url}/whisper/`, 'transcribe_media', { source_id: src.source_id });
    assert.equal(fake.requests[1]!.url, '/whisper/v1/audio/transcriptions');
  });

  it('prefers a sidecar: the endpoint is not called when one exists', async () => {
    const src = await importMedia(fx, media, 'beans.mp3');
    fs.writeFileSync(path.join(media, 'beans.vtt'), 'WEBVTT\n\n00:01.000 --> 00:02.000\n<v Ana>From the sidecar.\n');
    const env = await callWith(fake.url, 'transcribe_media', { source_id: src.source_id });
    assert.equal(env.data.read_from, 'sidecar');
    assert.equal(fake.requests.length, 0);
  });

  it('fails with TRANSCRIPTION_FAILED when the endpoint answers an error, is unreachable, or answers no transcript', async () => {
    const src = await importMedia(fx, media, 'beans.mp3');
    fake.reply = { status: 500, body: '{"error":"model not loaded"}' };
    let env = await callWith(fake.url, 'transcribe_media', { source_id: src.source_id });
    assert.equal(env.error_code, 'TRANSCRIPTION_FAILED');
    assert.match(env.error, /500.*model not loaded/);

    fake.reply = { status: 200, body: 'not json' };
    env = await callWith(fake.url, 'transcribe_media', { source_id: src.source_id });
    assert.equal(env.error_code, 'TRANSCRIPTION_FAILED');

    fake.reply = { status: 200, body: '{"task":"transcribe"}' };
    env = await callWith(fake.url, 'transcribe_media', { source_id: src.source_id });
    assert.equal(env.error_code, 'TRANSCRIPTION_FAILED');

    const closedUrl = fake.url;
    await fake.close();
    fake = await startFakeWhisper(); // so afterEach has a server to close
    env = await callWith(closedUrl, 'transcribe_media', { source_id: src.source_id });
    assert.equal(env.error_code, 'TRANSCRIPTION_FAILED');
    assert.match(env.error, /could not be reached/);

    env = await callWith('ftp://127.0.0.1/x', 'transcribe_media', { source_id: src.source_id });
    assert.equal(env.error_code, 'TRANSCRIPTION_FAILED');
  });

  it('fails with TRANSCRIPT_NOT_FOUND when the media file is gone and no sidecar exists', async () => {
    const src = await importMedia(fx, media, 'gone.mp3');
    fs.rmSync(path.join(media, 'gone.mp3'));
    const env = await callWith(fake.url, 'transcribe_media', { source_id: src.source_id });
    assert.equal(env.error_code, 'TRANSCRIPT_NOT_FOUND');
    assert.match(env.error, /missing/);
    assert.equal(fake.requests.length, 0);
  });
});

describe('domain/av: suggest_codes_for_transcript on text sources', () => {
  let fx: Fixture;
  beforeEach(async () => {
    fx = await openFixture();
  });
  afterEach(async () => {
    await fx.close();
  });

  it('matches code names case-insensitively as whole words, across line breaks, with code point positions and excerpts, skipping speaker labels', async () => {
    // "🌱" is one code point (two UTF-16 units): positions after it differ between the two counts.
    const content = 'Ana: I TRUST the 🌱 group.\nResearcher 1: Trust? Community\ngardens build it; trustworthy start.\nAna: Art.';
    const src = await fx.ok('add_text_source', { name: 'Garden', content });
    const trust = await fx.ok('create_code', { name: 'Trust', color: '#111111' });
    const gardens = await fx.ok('create_code', { name: 'community gardens', color: '#222222' });
    const ana = await fx.ok('create_code', { name: 'Ana', color: '#333333' });
    await fx.ok('create_code', { name: 'Art', color: '#444444' });
    await fx.ok('create_code', { name: 'Absent', color: '#555555' });
    const r = await fx.ok('suggest_codes_for_transcript', { source_id: src.source_id });
    assert.equal(r.read_from, 'source_text');
    assert.equal(r.codes_checked, 5);
    const by = new Map(r.suggestions.map((s: any) => [s.code_name, s]));
    // Trust: "TRUST" at code points 7-12 and "Trust" at 40-45 (line 2 starts at 26, after the 🌱 line; UTF-16 would say 41);
    // not inside "trustworthy"
    assert.deepEqual(
      (by.get('Trust') as any).matches.map((m: any) => [m.start_pos, m.end_pos, m.match]),
      [
        [7, 12, 'TRUST'],
        [40, 45, 'Trust'],
      ],
    );
    assert.equal((by.get('Trust') as any).code_id, trust.code_id);
    // "Community\ngardens" spans the line break: code points 47-64
    assert.deepEqual(
      (by.get('community gardens') as any).matches.map((m: any) => [m.start_pos, m.end_pos, m.match]),
      [[47, 64, 'Community\ngardens']],
    );
    assert.equal((by.get('community gardens') as any).code_id, gardens.code_id);
    // "Ana" only as a speaker label: skipped, so no suggestion; "Art" is a word once, not inside "start"
    assert.equal(by.has('Ana'), false, `labels are not mentions (code ${ana.code_id})`);
    assert.deepEqual(
      (by.get('Art') as any).matches.map((m: any) => m.match),
      ['Art'],
    );
    assert.equal(by.has('Absent'), false);
    // most matches first
    assert.equal(r.suggestions[0].code_name, 'Trust');
    // excerpt: the surrounding text on one line
    assert.match((by.get('community gardens') as any).matches[0].excerpt, /Trust\? Community gardens build it/);
  });

  it('fails with SOURCE_NOT_FOUND, and INVALID_ARGUMENTS for an image source (no text, no transcript)', async () => {
    await fx.fails('suggest_codes_for_transcript', { source_id: 5 }, 'SOURCE_NOT_FOUND');
    const file = path.join(fx.dir, 'photo.png');
    fs.writeFileSync(file, Buffer.from([0x89, 0x50, 0x4e, 0x47]));
    const img = await fx.ok('import_file_source', { file_path: file });
    await fx.fails('suggest_codes_for_transcript', { source_id: img.source_id }, 'INVALID_ARGUMENTS');
    await fx.fails('detect_speakers', { source_id: img.source_id }, 'INVALID_ARGUMENTS');
  });
});
