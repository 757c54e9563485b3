/**
 * Speaker detection (detect_speakers and domain/speakers.ts).
 *
 * First on every file of `shared/corpus/transcripts/` and `shared/corpus/subtitles/` (their READMEs aside),
 * through the pipeline: the expected speakers are written below by hand from reading each file (names in the
 * order they first speak; turn counts cross-checked with `grep -c '^P:'`-style counts of the raw files, cited in
 * the comments). The WebVTT files are also read as the sidecar transcript of a video source, which must give the
 * same speakers. Then the rules one by one on small texts.
 *
 * Without the corpus these tests say why and skip; under CI=true they fail instead.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { detectSpeakers, matchLineLabel, sniffLayout, speakerTurns } from '../../../src/domain/speakers';
import { openFixture, type Fixture } from './projectFixture';

const CORPUS = path.resolve(__dirname, '../../../../shared/corpus');

/** A speaker as a reader sees it: name and number of turns. */
type Expected = [name: string, turns: number][];

/**
 * By hand, per file: the speakers in order of their first turn.
 * Spacelog (NASA air-to-ground, `[DD:HH:MM:SS]` blocks then `SPEAKER: text`): the `_page :`/`_tape :`/`_extra :`/
 * `_note:` metadata lines, `# ...` editor comments and indented continuation lines (ma6's "     20. Voltages: ...",
 * "     dizziness: ...") are not speakers.
 */
const TRANSCRIPTS: Record<string, Expected> = {
  // LCC gives the lift-off, the pilot (P) and capsule communicator (CC) talk; UNK, ICC (Indian Cap Com) and the
  // recovery helicopter CARDFILE come in near splashdown. grep -c: P 78, CC 28, CARDFILE 5, ICC 2, LCC 1, UNK 1
  'spacelog_mr3_ATG.txt': [
    ['LCC', 1],
    ['P', 78],
    ['CC', 28],
    ['UNK', 1],
    ['ICC', 2],
    ['CARDFILE', 5],
  ],
  // Liberty Bell 7 (CRLF): STONY's "Lift-off.", then BELL 7 and CC; later the chase plane, ATS, the recovery
  // helicopters. grep -c (after removing CR): BELL 7 105, CC 54, HUNTCLUB 1 15, ATS 11, UKN 10, CARDFILE 9 5,
  // CARDFILE 23 2, STONY 1, CHASE 1 1, HUNTCLUB 3 1
  'spacelog_mr4_ATG.txt': [
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
  // Friendship 7: CC's countdown at [-00:00:00:03], the pilot P; later CT (Com Tech), S (the Zanzibar surgeon),
  // G, SY (Canary Systems), R. grep -c: P 924, CC 703, CT 70, R 39, S 9, SY 3, G 1
  'spacelog_ma6_TEC.txt': [
    ['CC', 703],
    ['P', 924],
    ['CT', 70],
    ['S', 9],
    ['G', 1],
    ['SY', 3],
    ['R', 39],
  ],
  // Otter.ai: "BSR01  00:00" then "Sara Mannheimer  00:13" ...; the header's SPEAKERS line names the same two.
  // grep -cE '^BSR01  [0-9]' 42, '^Sara Mannheimer  [0-9]' 41
  'mannheimer_BSR01_transcript_deidentified.txt': [
    ['BSR01', 42],
    ['Sara Mannheimer', 41],
  ],
  // here the interviewer speaks first ("Sara Mannheimer  00:00"); 36 and 35 turns. The line
  // "[Redacted -- brief discussion of ...]" is a redaction, not a speaker.
  'mannheimer_DC03_transcript_deidentified.txt': [
    ['Sara Mannheimer', 36],
    ['DC03', 35],
  ],
  // "Researcher 1:" and "Ana:" alternate, one turn per line, 123 each; the header line names Ana without a colon
  'sheffield_Ana.txt': [
    ['Researcher 1', 123],
    ['Ana', 123],
  ],
  'sheffield_Peter.txt': [
    ['Researcher 1', 49],
    ['Peter', 49],
  ],
  // [id1] [id2] [id3] [id1] [id3] [id1] [id2]
  'qualcoder_example_transcript.txt': [
    ['id1', 3],
    ['id2', 2],
    ['id3', 2],
  ],
};

/** By hand, per WebVTT file: the voices a viewer is shown. */
const SUBTITLES: Record<string, Expected> = {
  // 15 cues open with <v Kyle Huey>, one with <v Chris Pearce> (which also holds a second voice, Kyle's)
  'vttjs_integration_cycle-collector-talk.vtt': [
    ['Kyle Huey', 15],
    ['Chris Pearce', 1],
  ],
  // Roger Bingham's 11 cues; Neil deGrasse Tyson's 2 (one is just <i>Laughs</i>)
  'vttjs_integration_spec-example.vtt': [
    ['Roger Bingham', 11],
    ['Neil deGrasse Tyson', 2],
  ],
  'vttjs_cuetext_voice_with-annotation.vtt': [['Mary', 1]],
  'vttjs_cuetext_voice_with-closing-span.vtt': [['Joe', 1]],
  'vttjs_cuetext_voice_with-subclass.vtt': [['Joe', 1]],
  'vttjs_cuetext_voice_with-two-subclasses.vtt': [['Joe', 1]],
  // `<v>` without a name: nobody is named
  'vttjs_cuetext_voice_not-closed.vtt': [],
  // `<v It's a blue apple tree!` never closes its tag: a reader sees a broken tag, not a speaker
  'vttjs_cuetext_voice_no-end-gt.vtt': [],
};

/** The corpus files of a folder, READMEs aside. */
function filesOf(dir: string): string[] {
  return fs
    .readdirSync(path.join(CORPUS, dir))
    .filter((f) => f !== 'README.md')
    .sort();
}

describe('domain/speakers: detect_speakers on the shared corpus', function () {
  let fx: Fixture;
  before(function () {
    if (!fs.existsSync(path.join(CORPUS, 'transcripts')) || !fs.existsSync(path.join(CORPUS, 'subtitles'))) {
      const why = `the shared corpus is not at ${CORPUS} (it lives beside the repository as ../shared/corpus)`;
      if (process.env.CI === 'true') throw new Error(`${why}; CI must have it`);
      console.log(`      skipped: ${why}`);
      this.skip();
    }
  });
  beforeEach(async () => {
    fx = await openFixture();
  });
  afterEach(async () => {
    await fx?.close();
  });

  it('has an expectation for every transcript and subtitle file (a new corpus file needs one)', () => {
    assert.deepEqual(filesOf('transcripts'), Object.keys(TRANSCRIPTS).sort());
    assert.deepEqual(filesOf('subtitles'), Object.keys(SUBTITLES).sort());
  });

  for (const [file, expected] of Object.entries(TRANSCRIPTS)) {
    it(`${file}: ${expected.map(([n]) => n).join(', ')}`, async () => {
      const src = await fx.ok('import_file_source', { file_path: path.join(CORPUS, 'transcripts', file) });
      const d = await fx.ok('detect_speakers', { source_id: src.source_id });
      assert.equal(d.read_from, 'source_text');
      assert.deepEqual(
        d.speakers.map((s: any) => [s.name, s.turns]),
        expected,
      );
      assert.equal(d.count, expected.length);
      assert.equal(
        d.total_turns,
        expected.reduce((n, [, t]) => n + t, 0),
      );
      // each first_pos is where that speaker's label starts in the stored text (code points)
      const text: string = (await fx.ok('read_source_content', { source_id: src.source_id, max_length: 1_000_000 })).content;
      const cps = [...text];
      for (const s of d.speakers) {
        const at = cps.slice(s.first_pos, s.first_pos + s.name.length + 1).join('');
        assert.ok(at.startsWith(s.name) || at.startsWith(`[${s.name}`), `${s.name} at ${s.first_pos}: ${JSON.stringify(at)}`);
      }
    });
  }

  it('first positions by hand: mr3 LCC after "\\n[00:00:00:00]\\n" at 15; Sheffield Researcher 1 after the 36-character header line at 37', async () => {
    const mr3 = await fx.ok('import_file_source', { file_path: path.join(CORPUS, 'transcripts', 'spacelog_mr3_ATG.txt') });
    const a = await fx.ok('detect_speakers', { source_id: mr3.source_id });
    assert.deepEqual([a.speakers[0].name, a.speakers[0].first_pos, a.speakers[0].format], ['LCC', 15, 'uppercase']);
    // "12-May-2023 - 10:36 - 1h09m31s – Ana" is 36 code points (the en dash is one), then a line feed
    const ana = await fx.ok('import_file_source', { file_path: path.join(CORPUS, 'transcripts', 'sheffield_Ana.txt') });
    const b = await fx.ok('detect_speakers', { source_id: ana.source_id });
    assert.deepEqual([b.speakers[0].name, b.speakers[0].first_pos, b.speakers[0].format], ['Researcher 1', 37, 'title_case']);
    const otter = await fx.ok('import_file_source', { file_path: path.join(CORPUS, 'transcripts', 'mannheimer_BSR01_transcript_deidentified.txt') });
    assert.equal((await fx.ok('detect_speakers', { source_id: otter.source_id })).speakers[0].format, 'otter');
  });

  for (const [file, expected] of Object.entries(SUBTITLES)) {
    it(`${file}: ${expected.length ? expected.map(([n]) => n).join(', ') : 'no named voice'} (as text, and as a video's sidecar)`, async () => {
      const content = fs.readFileSync(path.join(CORPUS, 'subtitles', file), 'utf8');
      const src = await fx.ok('add_text_source', { name: file, content });
      const d = await fx.ok('detect_speakers', { source_id: src.source_id });
      assert.equal(d.layout, 'webvtt');
      assert.deepEqual(
        d.speakers.map((s: any) => [s.name, s.turns]),
        expected,
      );
      for (const s of d.speakers) assert.equal(s.format, 'webvtt_voice');

      // the same file as the sidecar transcript of a video source
      const dir = path.join(fx.dir, 'media');
      fs.mkdirSync(dir, { recursive: true });
      const base = path.basename(file, '.vtt');
      fs.writeFileSync(path.join(dir, `${base}.mp4`), Buffer.from([0, 0, 0, 0x18, 0x66, 0x74, 0x79, 0x70]));
      fs.writeFileSync(path.join(dir, `${base}.vtt`), content);
      const video = await fx.ok('import_file_source', { file_path: path.join(dir, `${base}.mp4`) });
      const av = await fx.ok('detect_speakers', { source_id: video.source_id });
      assert.equal(av.read_from, 'sidecar');
      assert.deepEqual(
        av.speakers.map((s: any) => [s.name, s.turns]),
        expected,
      );
    });
  }

  it('the spec example as a sidecar: Neil deGrasse Tyson first speaks at 00:30.500, where the cues overlap', async () => {
    const dir = path.join(fx.dir, 'media');
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, 'spec.mp4'), Buffer.from([0]));
    fs.copyFileSync(path.join(CORPUS, 'subtitles', 'vttjs_integration_spec-example.vtt'), path.join(dir, 'spec.vtt'));
    const video = await fx.ok('import_file_source', { file_path: path.join(dir, 'spec.mp4') });
    const d = await fx.ok('detect_speakers', { source_id: video.source_id });
    assert.deepEqual(
      d.speakers.map((s: any) => [s.name, s.first_ms]),
      [
        ['Roger Bingham', 11000],
        ['Neil deGrasse Tyson', 30500],
      ],
    );
  });
});

describe('domain/speakers: the label rules', () => {
  /** Names and turns of `text`. */
  const names = (text: string) => detectSpeakers(text).speakers.map((s) => [s.name, s.turns]);

  it('UPPERCASE labels with a colon, digits after the first word allowed, one letter allowed', () => {
    assert.deepEqual(names('LCC: Lift-off\nBELL 7: Loud and clear.\nP: Roger\nLCC: again'), [
      ['LCC', 2],
      ['BELL 7', 1],
      ['P', 1],
    ]);
  });

  it('Title Case labels with a colon, with numbers and name particles', () => {
    assert.deepEqual(names('Researcher 1: Hello\nSara Mannheimer: Hi\nLudwig van Beethoven: Da-da-da-dum\nJosé Müller-Lüdenscheidt: Guten Tag'), [
      ['Researcher 1', 1],
      ['Sara Mannheimer', 1],
      ['Ludwig van Beethoven', 1],
      ['José Müller-Lüdenscheidt', 1],
    ]);
  });

  it('labels in square brackets followed by text, but not annotations such as [inaudible] or [Name Redacted]', () => {
    assert.deepEqual(names('[id1] hello\n[Interviewer]: How?\n[inaudible] yes\n[Name Redacted] said so\n[laughs] okay\n[id1] bye'), [
      ['id1', 2],
      ['Interviewer', 1],
    ]);
    assert.deepEqual(names('[Redacted -- brief discussion of the details of the workplace]'), []);
  });

  it('strips bracketed timestamps first: [00:12:34] INTERVIEWER:, [12:34] and Spacelog [-00:00:00:03] are times, not labels', () => {
    const text = '[00:12:34] INTERVIEWER: How did it start?\n[12:34] Maria: With seeds.\n[-00:00:00:03]\nCC: 3, 2, 1\n[1:02:03.500] [id2] late';
    const d = detectSpeakers(text);
    assert.deepEqual(
      d.speakers.map((s) => [s.name, s.format]),
      [
        ['INTERVIEWER', 'uppercase'],
        ['Maria', 'title_case'],
        ['CC', 'uppercase'],
        ['id2', 'bracket'],
      ],
    );
    assert.equal(d.speakers[0]!.first_pos, 11, 'the label starts after "[00:12:34] "');
    assert.equal(matchLineLabel('[00:12:34]'), null);
  });

  it('Otter.ai headers: "Name  MM:SS" and "Name  H:MM:SS" on a line of their own, two spaces or a tab', () => {
    assert.deepEqual(names('Sara Mannheimer  00:13\nHello.\n\nBSR01  1:02:03\nYes.\nSpeaker 2\t04:05\nNo.\nSara Mannheimer 00:20\nsingle space: not Otter'), [
      ['Sara Mannheimer', 1],
      ['BSR01', 1],
      ['Speaker 2', 1],
    ]);
  });

  it('never takes indented continuation lines, metadata lines, sentences or lower-case words for labels', () => {
    const text = [
      'P: Voltages are good.',
      '     20. Voltages: main 24, 25.',
      '     CC: an indented line is a continuation',
      '_page : 148',
      '_extra : BERMUDA (FIRST ORBIT)',
      '# Canaveral CC',
      'dizziness: none',
      'The Thing We Talked About Yesterday Afternoon: was fine',
      'Note to self: call back',
      'A VERY LONG SHOUTED SENTENCE THAT GOES ON: and on',
    ].join('\n');
    assert.deepEqual(names(text), [['P', 1]]);
  });

  it('WebVTT: voices with classes and several voices per cue; header fields (Kind:, Language:) are no speakers; labels in cue text count', () => {
    const vtt =
      'WEBVTT\nKind: captions\nLanguage: en\n\nNOTE\nSpeaker: not a cue\n\n1\n00:00:01.000 --> 00:00:02.000\n<v.loud Inglis, Jake>Hi</v> <v Ana>Hello\n\n00:00:03.000 --> 00:00:04.000\nSara Mannheimer: from Zoom\n\n00:00:05.000 --> 00:00:06.000\n<i>JOHN:</i> in italics\n';
    assert.equal(sniffLayout(vtt), 'webvtt');
    assert.deepEqual(
      detectSpeakers(vtt).speakers.map((s) => [s.name, s.format]),
      [
        ['Inglis, Jake', 'webvtt_voice'],
        ['Ana', 'webvtt_voice'],
        ['Sara Mannheimer', 'title_case'],
        ['JOHN', 'uppercase'],
      ],
    );
  });

  it('SRT: labels in the cue text; cue numbers and timings are never labels', () => {
    const srt = '1\r\n00:00:01,000 --> 00:00:02,000\r\nJOHN: Hi\r\n\r\n2\r\n00:00:02,500 --> 00:00:03,000\r\nMary: Hello\r\nJOHN: again?\r\n';
    assert.equal(sniffLayout(srt), 'srt');
    assert.deepEqual(names(srt), [
      ['JOHN', 2],
      ['Mary', 1],
    ]);
  });

  it('counts positions in code points (an emoji before a label counts one) across CRLF, LF and CR line ends', () => {
    const text = '🌱 intro\r\nAna: one\rBo: two\nAna: three';
    const turns = speakerTurns(text).turns;
    // "🌱 intro\r\n" is 9 code points (10 UTF-16 units); "Ana: one\r" 9 more
    assert.deepEqual(
      turns.map((t) => [t.speaker, t.start, t.end]),
      [
        ['Ana', 9, 13],
        ['Bo', 18, 21],
        ['Ana', 26, 30],
      ],
    );
  });

  it('detect_speakers through the pipeline on a text source; SOURCE_NOT_FOUND for an unknown one', async () => {
    const fx = await openFixture();
    try {
      const src = await fx.ok('add_text_source', { name: 'T', content: 'Interviewer: Hi\nAna: Hello\nInterviewer: Bye' });
      const d = await fx.ok('detect_speakers', { source_id: src.source_id });
      assert.deepEqual(d.speakers, [
        { name: 'Interviewer', turns: 2, first_pos: 0, format: 'title_case' },
        { name: 'Ana', turns: 1, first_pos: 16, format: 'title_case' },
      ]);
      assert.equal(d.total_turns, 3);
      await fx.fails('detect_speakers', { source_id: 404 }, 'SOURCE_NOT_FOUND');
    } finally {
      await fx.close();
    }
  });
});
