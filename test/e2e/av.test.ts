/**
 * End-to-end test of the AV coding tools over HTTP (HTTP spec, section 4 "AV coding": apply_av_code,
 * list_av_segments, remove_av_segment, transcribe_media, detect_speakers, suggest_codes_for_transcript)
 * against the real built CLI (`bin/marginalia.js serve`; run `npm run build` first).
 *
 * The media files are tiny stand-ins written to a temporary folder (the tools never decode audio) with
 * sidecar transcripts beside them: WebVTT with `<v Name>` voices, SRT with UPPERCASE labels, and timestamped
 * text with Title Case labels. detect_speakers also runs over real transcripts of
 * ../shared/corpus/transcripts, imported as text sources; the expected speakers and turn counts are the
 * labels a reader sees at the start of the lines (checked with grep when the test was written, and for
 * the Otter.ai file read from its own SPEAKERS header).
 *
 * transcribe_media from a Whisper-compatible endpoint runs against a fake endpoint served by this test
 * (a second `marginalia serve` with MARGINALIA_TRANSCRIPTION_ENDPOINT), which answers a transcript or HTTP
 * 500. Error codes with their HTTP statuses: AV_SEGMENT_NOT_CODED/CODE_NOT_FOUND 404,
 * AV_SEGMENT_NOT_CODED/INVALID_TIME_RANGE 400, AV_SEGMENT_NOT_CODED/OVERLAPPING_SEGMENT 409,
 * AV_SEGMENT_NOT_REMOVED/NOT_FOUND 404, SOURCE_NOT_FOUND 404, INVALID_ARGUMENTS 400 (a text source, a
 * fractional millisecond), TRANSCRIPT_NOT_FOUND 404 (no sidecar and no endpoint), TRANSCRIPTION_FAILED 502.
 * Failing calls are checked to leave the AV segments and the event log unchanged.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { AS_AGENT, requireCorpus, startServer, tmpDir, type ServerProcess } from '../helpers/serverProcess';
import { toolClient } from '../helpers/toolClient';

const VTT = [
  'WEBVTT',
  '',
  '00:00:01.000 --> 00:00:04.500',
  '<v Rosa>We argue about the hose rota every week.',
  '',
  '00:00:05.000 --> 00:00:09.250',
  '<v Interviewer>And the council?',
  '',
  '00:00:10.000 --> 00:00:14.000',
  '<v Rosa>The Council wants three forms before we build a shed.',
  '',
].join('\n');
const SRT = [
  '1',
  '00:00:00,500 --> 00:00:02,000',
  'MAYA: Water is scarce here.',
  '',
  '2',
  '00:00:02,000 --> 00:00:03,750',
  'TOM: The council never answers.',
  '',
].join('\n');
const TIMED = [
  '[00:00:05] Researcher 1: Tell me about the shed.',
  '[00:01:10] Sam Lee: The shed was built in May.',
  '[01:02:03] Researcher 1: Thanks.',
  '',
].join('\n');
/** A text transcript with bracketed timestamps before its labels (spec rule 2) and a code name in a label. */
const NOTES = [
  '[00:00:01] INTERVIEWER: How is the water?',
  '[00:00:04] ROSA: The water tank runs dry; the interviewer knows.',
  '[00:00:09] INTERVIEWER: Thank you.',
  '',
].join('\n');

const UNKNOWN = 987654;

describe('AV coding tools over HTTP (real CLI)', function () {
  this.timeout(120_000);
  let dir = '';
  let media = '';
  let server: ServerProcess | undefined;
  let base = '';
  const t = toolClient(() => base);
  const src: Record<string, any> = {};
  const code: Record<string, any> = {};
  const seg: Record<string, any> = {};

  const write = (name: string, content: string) => fs.writeFileSync(path.join(media, name), content);
  /** Both AV sources' segments: what a failing call must leave unchanged. */
  const avSnapshot = async () => [await t.ok('list_av_segments', { source_id: src.interview }), await t.ok('list_av_segments', { source_id: src.talk })];

  before(async () => {
    dir = tmpDir('marginalia-av-e2e-');
    media = path.join(dir, 'media');
    fs.mkdirSync(media);
    write('interview.mp3', 'ID3 stand-in');
    write('interview.vtt', VTT);
    write('talk.mp4', 'mp4 stand-in');
    write('talk.srt', SRT);
    write('memo.wav', 'RIFF stand-in');
    write('memo.txt', TIMED);
    write('both.mp3', 'ID3 stand-in');
    write('both.srt', SRT);
    write('both.vtt', VTT);
    write('silent.wav', 'RIFF stand-in');
    write('photo.png', 'PNG stand-in');
    server = await startServer(path.join(dir, 'study.qda'));
    base = server.base;
    for (const name of ['interview.mp3', 'talk.mp4', 'memo.wav', 'both.mp3', 'silent.wav', 'photo.png']) {
      const s = await t.ok('import_source', { file_path: path.join(media, name) });
      src[name.split('.')[0] as string] = s.source_id;
    }
    src.notes = (await t.ok('add_text_source', { name: 'Notes', content: NOTES })).source_id;
    for (const [key, name] of [
      ['water', 'Water'],
      ['council', 'Council'],
      ['shed', 'Shed'],
      ['hose', 'Hose rota'],
      ['interviewer', 'Interviewer'],
    ] as const) {
      code[key] = (await t.ok('create_code', { name, color: '#4E79A7' })).code_id;
    }
  });

  after(async () => {
    if (server) await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('imports the stand-in media as audio and video sources', async () => {
    const list = await t.ok('list_sources');
    const types = Object.fromEntries(list.sources.map((s: any) => [s.name, s.type]));
    assert.deepEqual(types, {
      'interview.mp3': 'audio',
      'talk.mp4': 'video',
      'memo.wav': 'audio',
      'both.mp3': 'audio',
      'silent.wav': 'audio',
      'photo.png': 'image',
      Notes: 'text',
    });
  });

  it('apply_av_code codes half-open millisecond ranges; ranges of one code may touch, other codes may overlap', async () => {
    const a = await t.ok('apply_av_code', {
      code_id: code.hose,
      source_id: src.interview,
      start_ms: 1000,
      end_ms: 4500,
      transcript: 'We argue about the hose rota every week.',
      memo: 'weekly',
    });
    assert.deepEqual(
      [a.code_id, a.code_name, a.source_id, a.start_ms, a.end_ms, a.duration_ms, a.transcript, a.memo],
      [code.hose, 'Hose rota', src.interview, 1000, 4500, 3500, 'We argue about the hose rota every week.', 'weekly'],
    );
    seg.hose = a.segment_id;
    // touching: [4500, 5000) starts where [1000, 4500) ends
    seg.touch = (await t.ok('apply_av_code', { code_id: code.hose, source_id: src.interview, start_ms: 4500, end_ms: 5000 })).segment_id;
    // another code on the same range
    seg.council = (await t.ok('apply_av_code', { code_id: code.council, source_id: src.interview, start_ms: 1000, end_ms: 14000 })).segment_id;
    // an agent's AV coding runs at once (apply_code category: notify)
    const byAgent = await t.ok(
      'apply_av_code',
      { code_id: code.water, source_id: src.talk, start_ms: 500, end_ms: 2000, transcript: 'Water is scarce here.' },
      AS_AGENT,
    );
    seg.water = byAgent.segment_id;
    assert.equal(byAgent.end_ms - byAgent.start_ms, 1500);
  });

  it("list_av_segments lists a source's ranges by start time with their codes; a text source has none", async () => {
    const l = await t.ok('list_av_segments', { source_id: src.interview });
    assert.deepEqual([l.source_name, l.source_type, l.count], ['interview.mp3', 'audio', 3]);
    assert.deepEqual(
      l.segments.map((s: any) => [s.segment_id, s.code_name, s.start_ms, s.end_ms]),
      [
        [seg.hose, 'Hose rota', 1000, 4500],
        [seg.council, 'Council', 1000, 14000],
        [seg.touch, 'Hose rota', 4500, 5000],
      ].sort((x, y) => (x[2] as number) - (y[2] as number)),
    );
    const v = await t.ok('list_av_segments', { source_id: src.talk });
    assert.deepEqual([v.source_type, v.count, v.segments[0].segment_id, v.segments[0].transcript], ['video', 1, seg.water, 'Water is scarce here.']);
    assert.deepEqual([(await t.ok('list_av_segments', { source_id: src.notes })).count], [0]);
    await t.fails('list_av_segments', { source_id: UNKNOWN }, 'SOURCE_NOT_FOUND');
    // list_sources counts them
    const interview = (await t.ok('list_sources')).sources.find((s: any) => s.source_id === src.interview);
    assert.equal(interview.av_segment_count, 3);
  });

  it("refuses unknown codes, bad time ranges and overlaps with the spec's error codes, writing nothing", async () => {
    await t.writesNothing(
      avSnapshot,
      async () => {
        await t.fails('apply_av_code', { code_id: UNKNOWN, source_id: src.interview, start_ms: 20000, end_ms: 21000 }, 'AV_SEGMENT_NOT_CODED/CODE_NOT_FOUND');
        // end not after start, and a negative start
        for (const [start_ms, end_ms] of [
          [20000, 20000],
          [21000, 20000],
          [-5, 100],
        ]) {
          const f = await t.fails(
            'apply_av_code',
            { code_id: code.shed, source_id: src.interview, start_ms, end_ms },
            'AV_SEGMENT_NOT_CODED/INVALID_TIME_RANGE',
          );
          assert.deepEqual(f.details, { start_ms, end_ms });
        }
        // [4000, 6000) overlaps both Hose rota ranges; the same range again is an overlap too
        const o = await t.fails(
          'apply_av_code',
          { code_id: code.hose, source_id: src.interview, start_ms: 4000, end_ms: 6000 },
          'AV_SEGMENT_NOT_CODED/OVERLAPPING_SEGMENT',
        );
        assert.deepEqual(o.details.conflicts.map((c: any) => c.segment_id).sort(), [seg.hose, seg.touch].sort());
        await t.fails(
          'apply_av_code',
          { code_id: code.hose, source_id: src.interview, start_ms: 1000, end_ms: 4500 },
          'AV_SEGMENT_NOT_CODED/OVERLAPPING_SEGMENT',
        );
        await t.fails('apply_av_code', { code_id: code.water, source_id: src.talk, start_ms: 1999, end_ms: 2500 }, 'AV_SEGMENT_NOT_CODED/OVERLAPPING_SEGMENT');
        await t.fails('apply_av_code', { code_id: code.shed, source_id: UNKNOWN, start_ms: 0, end_ms: 10 }, 'SOURCE_NOT_FOUND');
        // a text source cannot take time ranges; milliseconds are integers
        const txt = await t.fails('apply_av_code', { code_id: code.shed, source_id: src.notes, start_ms: 0, end_ms: 10 }, 'INVALID_ARGUMENTS');
        assert.match(txt.error, /text source/);
        await t.fails('apply_av_code', { code_id: code.shed, source_id: src.interview, start_ms: 0.5, end_ms: 10 }, 'INVALID_ARGUMENTS');
        await t.fails('remove_av_segment', { segment_id: UNKNOWN }, 'AV_SEGMENT_NOT_REMOVED/NOT_FOUND');
      },
      'failing AV calls',
    );
  });

  it('remove_av_segment removes one range (coding.av_segment_uncoded); removing it again is AV_SEGMENT_NOT_REMOVED/NOT_FOUND (404)', async () => {
    const seq = await t.headSeq();
    const r = await t.ok('remove_av_segment', { segment_id: seg.touch });
    assert.deepEqual([r.deleted, r.segment_id, r.start_ms, r.end_ms, r.code_name], [true, seg.touch, 4500, 5000, 'Hose rota']);
    const events = await t.events(seq, 'coding.*');
    assert.deepEqual(
      events.map((e) => [e.event_type, e.payload.segment_id]),
      [['coding.av_segment_uncoded', seg.touch]],
    );
    assert.deepEqual(
      (await t.ok('list_av_segments', { source_id: src.interview })).segments.map((s: any) => s.segment_id).sort(),
      [seg.hose, seg.council].sort(),
    );
    await t.fails('remove_av_segment', { segment_id: seg.touch }, 'AV_SEGMENT_NOT_REMOVED/NOT_FOUND');
    // the freed range can be coded again
    const again = await t.ok('apply_av_code', { code_id: code.hose, source_id: src.interview, start_ms: 4500, end_ms: 5000 });
    assert.notEqual(again.segment_id, seg.touch);
  });

  it('transcribe_media reads a WebVTT, an SRT or a timestamped-text sidecar into millisecond segments', async () => {
    const v = await t.ok('transcribe_media', { source_id: src.interview });
    assert.deepEqual([v.format, v.read_from, v.sidecar_path, v.count], ['webvtt', 'sidecar', path.join(media, 'interview.vtt'), 3]);
    assert.deepEqual(
      v.segments.map((s: any) => [s.start_ms, s.end_ms, s.speaker, s.text]),
      [
        [1000, 4500, 'Rosa', 'We argue about the hose rota every week.'],
        [5000, 9250, 'Interviewer', 'And the council?'],
        [10000, 14000, 'Rosa', 'The Council wants three forms before we build a shed.'],
      ],
    );
    assert.equal(v.text, 'We argue about the hose rota every week.\nAnd the council?\nThe Council wants three forms before we build a shed.');

    const s = await t.ok('transcribe_media', { source_id: src.talk });
    assert.deepEqual([s.format, s.sidecar_path], ['srt', path.join(media, 'talk.srt')]);
    assert.deepEqual(
      s.segments.map((x: any) => [x.start_ms, x.end_ms, x.speaker, x.text]),
      [
        [500, 2000, 'MAYA', 'Water is scarce here.'],
        [2000, 3750, 'TOM', 'The council never answers.'],
      ],
    );

    const m = await t.ok('transcribe_media', { source_id: src.memo });
    assert.equal(m.format, 'timestamped_text');
    assert.deepEqual(
      m.segments.map((x: any) => [x.start_ms, x.speaker, x.text]),
      [
        [5000, 'Researcher 1', 'Tell me about the shed.'],
        [70000, 'Sam Lee', 'The shed was built in May.'],
        [3723000, 'Researcher 1', 'Thanks.'],
      ],
    );
    // .vtt is tried before .srt
    assert.equal((await t.ok('transcribe_media', { source_id: src.both })).format, 'webvtt');
  });

  it('transcribe_media without a sidecar and without an endpoint fails clearly: TRANSCRIPT_NOT_FOUND (404) naming the files looked for', async () => {
    const f = await t.fails('transcribe_media', { source_id: src.silent }, 'TRANSCRIPT_NOT_FOUND');
    for (const name of ['silent.vtt', 'silent.srt', 'silent.txt']) assert.ok(f.error.includes(name), `${name} in "${f.error}"`);
    assert.match(f.error, /no transcription endpoint is configured/);
    assert.deepEqual(
      f.details.looked_for,
      ['silent.vtt', 'silent.srt', 'silent.txt'].map((n) => path.join(media, n)),
    );
    await t.fails('transcribe_media', { source_id: src.notes }, 'INVALID_ARGUMENTS');
    await t.fails('transcribe_media', { source_id: UNKNOWN }, 'SOURCE_NOT_FOUND');
    await t.fails('detect_speakers', { source_id: src.silent }, 'TRANSCRIPT_NOT_FOUND');
    await t.fails('suggest_codes_for_transcript', { source_id: src.silent }, 'TRANSCRIPT_NOT_FOUND');
    await t.fails('detect_speakers', { source_id: UNKNOWN }, 'SOURCE_NOT_FOUND');
    // an image has neither text nor transcript
    await t.fails('detect_speakers', { source_id: src.photo }, 'INVALID_ARGUMENTS');
    await t.fails('suggest_codes_for_transcript', { source_id: src.photo }, 'INVALID_ARGUMENTS');
    await t.fails('transcribe_media', { source_id: src.photo }, 'INVALID_ARGUMENTS');
    await t.fails('apply_av_code', { code_id: code.shed, source_id: src.photo, start_ms: 0, end_ms: 10 }, 'INVALID_ARGUMENTS');
    await t.fails('suggest_codes_for_transcript', { source_id: UNKNOWN }, 'SOURCE_NOT_FOUND');
  });

  it('detect_speakers finds WebVTT voices, UPPERCASE and Title Case labels, and strips bracketed timestamps', async () => {
    const speakers = async (id: number) => (await t.ok('detect_speakers', { source_id: id })).speakers.map((s: any) => [s.name, s.turns]);
    assert.deepEqual(await speakers(src.interview), [
      ['Rosa', 2],
      ['Interviewer', 1],
    ]);
    const v = await t.ok('detect_speakers', { source_id: src.interview });
    assert.deepEqual(
      v.speakers.map((s: any) => [s.first_ms, s.format]),
      [
        [1000, 'webvtt_voice'],
        [5000, 'webvtt_voice'],
      ],
    );
    assert.deepEqual(await speakers(src.talk), [
      ['MAYA', 1],
      ['TOM', 1],
    ]);
    assert.deepEqual(await speakers(src.memo), [
      ['Researcher 1', 2],
      ['Sam Lee', 1],
    ]);
    const n = await t.ok('detect_speakers', { source_id: src.notes });
    assert.equal(n.read_from, 'source_text');
    assert.deepEqual(
      n.speakers.map((s: any) => [s.name, s.turns, s.format]),
      [
        ['INTERVIEWER', 2, 'uppercase'],
        ['ROSA', 1, 'uppercase'],
      ],
    );
    assert.equal(n.total_turns, 3);
  });

  it('detect_speakers over real transcripts of the shared corpus returns the speakers a reader sees', async function () {
    const dirT = requireCorpus(this, 'transcripts');
    const detect = async (file: string) => {
      const s = await t.ok('import_source', { file_path: path.join(dirT, file) });
      return t.ok('detect_speakers', { source_id: s.source_id });
    };
    // [id1] / [id2] / [id3] labels in square brackets
    const q = await detect('qualcoder_example_transcript.txt');
    assert.deepEqual(
      q.speakers.map((s: any) => [s.name, s.turns, s.format]),
      [
        ['id1', 3, 'bracket'],
        ['id2', 2, 'bracket'],
        ['id3', 2, 'bracket'],
      ],
    );
    // "Researcher 1:" and "Ana:", 123 turns each
    const a = await detect('sheffield_Ana.txt');
    assert.deepEqual(
      a.speakers.map((s: any) => [s.name, s.turns]),
      [
        ['Researcher 1', 123],
        ['Ana', 123],
      ],
    );
    // Spacelog: [DD:HH:MM:SS] timestamps, then UPPERCASE call signs (some with digits), CRLF line ends
    const mr4 = await detect('spacelog_mr4_ATG.txt');
    assert.deepEqual(
      mr4.speakers.map((s: any) => [s.name, s.turns]),
      [
        ['STONY', 1],
        ['BELL 7', 105],
        ['CC', 54],
        ['CHASE 1', 1],
        ['UKN', 10],
        ['ATS', 11],
        ['CARDFILE 23', 2],
        ['HUNTCLUB 1', 15],
        ['CARDFILE 9', 5],
        ['HUNTCLUB 3', 1],
      ],
    );
    assert.equal(mr4.total_turns, 205);
    // Otter.ai: the speakers its own header lists, with the turns its "Name  MM:SS" lines open
    const file = 'mannheimer_BSR01_transcript_deidentified.txt';
    const text = fs.readFileSync(path.join(dirT, file), 'utf8');
    const header = /^SPEAKERS\r?\n(.+)$/m.exec(text);
    assert.ok(header, 'the SPEAKERS header');
    const listed = (header[1] as string).split(',').map((x) => x.trim());
    const turns = new Map<string, number>();
    for (const m of text.matchAll(/^(.+?) {2}\d{1,2}:\d\d(?::\d\d)?\r?$/gm)) turns.set(m[1] as string, (turns.get(m[1] as string) ?? 0) + 1);
    const o = await detect(file);
    assert.deepEqual(o.speakers.map((s: any) => s.name).sort(), [...listed].sort());
    assert.deepEqual(Object.fromEntries(o.speakers.map((s: any) => [s.name, s.turns])), Object.fromEntries(turns));
  });

  it('suggest_codes_for_transcript finds code names case-insensitively with positions into the transcript, skipping speaker labels', async () => {
    const v = await t.ok('suggest_codes_for_transcript', { source_id: src.interview });
    const transcript = (await t.ok('transcribe_media', { source_id: src.interview })).text as string;
    const found = Object.fromEntries(v.suggestions.map((s: any) => [s.code_name, s.matches]));
    assert.deepEqual(Object.keys(found).sort(), ['Council', 'Hose rota', 'Shed']);
    for (const matches of Object.values(found) as any[][]) {
      for (const m of matches) assert.equal(transcript.slice(m.start_pos, m.end_pos).toLowerCase(), m.match.toLowerCase());
    }
    assert.deepEqual(
      (found.Council as any[]).map((m) => [m.match, m.start_ms, m.speaker]),
      [
        ['council', 5000, 'Interviewer'],
        ['Council', 10000, 'Rosa'],
      ],
    );
    assert.deepEqual(
      (found['Hose rota'] as any[]).map((m) => [m.start_pos, m.end_pos, m.start_ms]),
      [[transcript.indexOf('hose rota'), transcript.indexOf('hose rota') + 9, 1000]],
    );
    // a text source: positions into its stored text; "INTERVIEWER:" is a label, "interviewer" in the text is not
    const n = await t.ok('suggest_codes_for_transcript', { source_id: src.notes });
    const byName = Object.fromEntries(n.suggestions.map((s: any) => [s.code_name, s.matches.map((m: any) => [m.start_pos, m.end_pos, m.match])]));
    const water1 = NOTES.indexOf('water');
    const water2 = NOTES.indexOf('water', water1 + 1);
    const interviewer = NOTES.indexOf('interviewer');
    assert.deepEqual(byName, {
      Water: [
        [water1, water1 + 5, 'water'],
        [water2, water2 + 5, 'water'],
      ],
      Interviewer: [[interviewer, interviewer + 11, 'interviewer']],
    });
    assert.equal(n.codes_checked, 5);
  });

  describe('with a Whisper-compatible transcription endpoint (MARGINALIA_TRANSCRIPTION_ENDPOINT)', () => {
    let fake: http.Server | undefined;
    let second: ServerProcess | undefined;
    let secondBase = '';
    const t2 = toolClient(() => secondBase);
    let answer: 'ok' | 'fail' = 'ok';
    const requests: { url: string; body: string }[] = [];

    before(async () => {
      fake = http.createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          requests.push({ url: req.url ?? '', body: Buffer.concat(chunks).toString('latin1') });
          if (answer === 'fail') {
            res.writeHead(500, { 'content-type': 'text/plain' }).end('model not loaded');
            return;
          }
          res.writeHead(200, { 'content-type': 'application/json' }).end(
            JSON.stringify({
              text: 'MAYA: The shed is ours. TOM: Only on Sundays.',
              language: 'en',
              duration: 6.5,
              segments: [
                { start: 0, end: 2.25, text: ' MAYA: The shed is ours.' },
                { start: 2.25, end: 6.5, text: ' TOM: Only on Sundays.' },
              ],
            }),
          );
        });
      });
      await new Promise<void>((resolve) => fake?.listen(0, '127.0.0.1', resolve));
      const port = (fake.address() as AddressInfo).port;
      const dir2 = path.join(dir, 'second');
      fs.mkdirSync(dir2);
      second = await startServer(path.join(dir2, 'endpoint.qda'), [], { MARGINALIA_TRANSCRIPTION_ENDPOINT: `http://127.0.0.1:${port}` });
      secondBase = second.base;
    });

    after(async () => {
      if (second) await second.stop();
      await new Promise<void>((resolve) => (fake ? fake.close(() => resolve()) : resolve()));
    });

    it('sends the media file when there is no sidecar and returns its segments in milliseconds; a failing endpoint is TRANSCRIPTION_FAILED (502)', async () => {
      const silent = (await t2.ok('import_source', { file_path: path.join(media, 'silent.wav') })).source_id;
      const r = await t2.ok('transcribe_media', { source_id: silent });
      assert.deepEqual([r.format, r.read_from, r.language, r.duration_ms], ['whisper', 'endpoint', 'en', 6500]);
      assert.deepEqual(
        r.segments.map((s: any) => [s.start_ms, s.end_ms, s.speaker, s.text]),
        [
          [0, 2250, 'MAYA', 'The shed is ours.'],
          [2250, 6500, 'TOM', 'Only on Sundays.'],
        ],
      );
      assert.equal(requests.length, 1);
      assert.equal(requests[0]?.url, '/v1/audio/transcriptions');
      assert.ok(requests[0]?.body.includes('RIFF stand-in'), 'the media file was sent');
      assert.ok(requests[0]?.body.includes('verbose_json'));
      // a sidecar still wins over the endpoint
      const interview = (await t2.ok('import_source', { file_path: path.join(media, 'interview.mp3') })).source_id;
      assert.equal((await t2.ok('transcribe_media', { source_id: interview })).read_from, 'sidecar');
      assert.equal(requests.length, 1);
      // detect_speakers reads the endpoint's transcript the same way
      const sp = await t2.ok('detect_speakers', { source_id: silent });
      assert.deepEqual(
        sp.speakers.map((s: any) => [s.name, s.first_ms]),
        [
          ['MAYA', 0],
          ['TOM', 2250],
        ],
      );
      answer = 'fail';
      const f = await t2.fails('transcribe_media', { source_id: silent }, 'TRANSCRIPTION_FAILED');
      assert.match(f.error, /500/);
    });
  });

  it('has answered every AV error code of the spec', () => {
    for (const c of [
      'AV_SEGMENT_NOT_CODED/CODE_NOT_FOUND',
      'AV_SEGMENT_NOT_CODED/INVALID_TIME_RANGE',
      'AV_SEGMENT_NOT_CODED/OVERLAPPING_SEGMENT',
      'AV_SEGMENT_NOT_REMOVED/NOT_FOUND',
      'SOURCE_NOT_FOUND',
      'TRANSCRIPT_NOT_FOUND',
    ])
      assert.ok(t.seen.has(c), c);
  });
});
