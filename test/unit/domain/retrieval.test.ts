/**
 * Retrieval of coded passages (src/domain/retrieval.ts) through the retrieve_segments tool on a real sql.js
 * project, and its exports (src/exchange/retrievalFormats.ts). Every expected passage, speaker, paragraph and
 * exported line is written out by hand from the texts below.
 */
import assert from 'node:assert/strict';
import { describeRetrieval, locator, retrievePassages, type RetrievalResult } from '../../../src/domain/retrieval';
import { escapeMarkdown, renderRetrieval } from '../../../src/exchange/retrievalFormats';
import { openFixture, type Fixture } from './projectFixture';

const I01 =
  'INTERVIEWER: How do you get water?\nROSA: We walk to the well every morning. The rota helps.\nINTERVIEWER: And food?\nROSA: The garden feeds us in summer.';
const I02 = 'INTERVIEWER: Tell me about the well.\nAMADOU: The well is far. We share the rota with neighbours.';
const I03 = 'INTERVIEWER: Water?\nFATIMA: Always the tap.';
const ESSAY = 'Water is scarce.\n\nThe garden and the well are both communal. Everyone helps.';

const BOB = { session_id: 'sess-bob', client_type: 'REST_CLIENT', client_name: 'unit-test', user: 'bob' } as const;

describe('domain/retrieval', () => {
  let fx: Fixture;
  const id = { i01: 0, i02: 0, i03: 0, essay: 0, water: 0, coop: 0, food: 0, round1: 0, lagos: 0, rosa: 0, amadou: 0 };

  /** a coding of `phrase` (its first occurrence) in `content` */
  const op = (code: number, source: number, content: string, phrase: string) => {
    const at = content.indexOf(phrase);
    assert.ok(at >= 0, phrase);
    return { code_id: code, source_id: source, start_position: at, end_position: at + phrase.length };
  };

  before(async () => {
    fx = await openFixture();
    id.i01 = (await fx.ok('add_text_source', { name: 'interview-01', content: I01 })).source_id;
    id.i02 = (await fx.ok('add_text_source', { name: 'interview-02', content: I02 })).source_id;
    id.i03 = (await fx.ok('add_text_source', { name: 'interview-03', content: I03 })).source_id;
    id.essay = (await fx.ok('add_text_source', { name: 'essay', content: ESSAY })).source_id;
    id.water = (await fx.ok('create_code', { name: 'Water' })).code_id;
    id.coop = (await fx.ok('create_code', { name: 'Cooperation' })).code_id;
    id.food = (await fx.ok('create_code', { name: 'Food' })).code_id;
    await fx.ok('batch_apply_codes', {
      operations: [
        op(id.water, id.i01, I01, 'We walk to the well every morning.'),
        op(id.coop, id.i01, I01, 'The rota helps.'),
        op(id.food, id.i01, I01, 'The garden feeds us in summer.'),
        op(id.water, id.i02, I02, 'The well is far. We share the rota'),
        op(id.water, id.i03, I03, 'Always the tap.'),
        op(id.water, id.essay, ESSAY, 'The garden and the well are both communal.'),
        op(id.coop, id.essay, ESSAY, 'The garden and the well are both communal.'),
        op(id.food, id.essay, ESSAY, 'The garden'),
      ],
    });
    await fx.ok('batch_apply_codes', { operations: [op(id.coop, id.i02, I02, 'We share the rota with neighbours.')] }, BOB);
    await fx.ok('set_source_attribute', { source_id: id.i01, attribute_name: 'Site', value: 'Lagos' });
    await fx.ok('set_source_attribute', { source_id: id.i03, attribute_name: 'Site', value: 'Lagos' });
    await fx.ok('set_source_attribute', { source_id: id.i02, attribute_name: 'Site', value: 'Kano' });
    await fx.ok('set_source_attribute', { source_id: id.i01, attribute_name: 'Wave', value: 2 });
    id.round1 = (await fx.ok('create_folder', { name: 'Round 1' })).folder_id;
    id.lagos = (await fx.ok('create_folder', { name: 'Lagos', parent_id: id.round1 })).folder_id;
    await fx.ok('move_source_to_folder', { source_id: id.i01, folder_id: id.lagos });
    id.rosa = (await fx.ok('create_case', { name: 'Rosa' })).case_id;
    await fx.ok('add_source_to_case', { case_id: id.rosa, source_id: id.i01 });
    await fx.ok('set_case_attribute', { case_id: id.rosa, attribute_name: 'gender', value: 'female' });
    id.amadou = (await fx.ok('create_case', { name: 'Amadou' })).case_id;
    const far = I02.indexOf('The well is far.');
    await fx.ok('add_segment_to_case', { case_id: id.amadou, source_id: id.i02, start_pos: far, end_pos: far + 'The well is far.'.length });
    await fx.ok('set_case_attribute', { case_id: id.amadou, attribute_name: 'gender', value: 'male' });
  });
  after(() => fx.close());

  /** each passage as "source | place | codes | text" */
  const rows = (r: { passages: RetrievalResult['passages'] }) =>
    r.passages.map((p) => `${p.source_name} | ${p.speaker ?? `¶${p.paragraph}`} | ${p.codes.map((c) => c.name).join('+')} | ${p.text}`);
  const retrieve = (args: Record<string, unknown>) => fx.ok<RetrievalResult & { total: number }>('retrieve_segments', args);

  it('OR: every passage of any code, one passage for codes on the same range, with source name and speaker or paragraph', async () => {
    const r = await retrieve({ code_ids: [id.water, id.coop], combine: 'or' });
    assert.deepEqual(rows(r), [
      'essay | ¶2 | Water+Cooperation | The garden and the well are both communal.',
      'interview-01 | ROSA | Water | We walk to the well every morning.',
      'interview-01 | ROSA | Cooperation | The rota helps.',
      'interview-02 | AMADOU | Water | The well is far. We share the rota',
      'interview-02 | AMADOU | Cooperation | We share the rota with neighbours.',
      'interview-03 | FATIMA | Water | Always the tap.',
    ]);
    assert.equal(r.total, 6);
    assert.equal(r.source_count, 4);
    assert.deepEqual(r.passages[0]!.coders, ['alice']);
    assert.deepEqual(r.passages[4]!.coders, ['bob']);
    assert.deepEqual(
      (await retrieve({ code_ids: [id.water] })).passages.map((p) => p.text),
      ['The garden and the well are both communal.', 'We walk to the well every morning.', 'The well is far. We share the rota', 'Always the tap.'],
      'one code, default or',
    );
  });

  it('AND: only sources holding a segment of every code', async () => {
    assert.deepEqual(rows(await retrieve({ code_ids: [id.water, id.coop], combine: 'and' })), [
      'essay | ¶2 | Water+Cooperation | The garden and the well are both communal.',
      'interview-01 | ROSA | Water | We walk to the well every morning.',
      'interview-01 | ROSA | Cooperation | The rota helps.',
      'interview-02 | AMADOU | Water | The well is far. We share the rota',
      'interview-02 | AMADOU | Cooperation | We share the rota with neighbours.',
    ]);
    assert.deepEqual(rows(await retrieve({ code_ids: [id.water, id.coop, id.food], combine: 'and' })), [
      'essay | ¶2 | Food | The garden',
      'essay | ¶2 | Water+Cooperation | The garden and the well are both communal.',
      'interview-01 | ROSA | Water | We walk to the well every morning.',
      'interview-01 | ROSA | Cooperation | The rota helps.',
      'interview-01 | ROSA | Food | The garden feeds us in summer.',
    ]);
  });

  it('overlap: the whole overlapping segments as one passage; codes side by side never overlap', async () => {
    const r = await retrieve({ code_ids: [id.water, id.coop], combine: 'overlap' });
    assert.deepEqual(rows(r), [
      'essay | ¶2 | Water+Cooperation | The garden and the well are both communal.',
      'interview-02 | AMADOU | Water+Cooperation | The well is far. We share the rota with neighbours.',
    ]);
    assert.deepEqual(
      r.passages[1]!.segments.map((s) => [s.code_id, s.owner]),
      [
        [id.water, 'alice'],
        [id.coop, 'bob'],
      ],
    );
    assert.deepEqual(rows(await retrieve({ code_ids: [id.water, id.food], combine: 'overlap' })), [
      'essay | ¶2 | Water+Food | The garden and the well are both communal.',
    ]);
    assert.deepEqual(rows(await retrieve({ code_ids: [id.coop, id.food], combine: 'overlap', filters: { source_ids: [id.i01] } })), []);
  });

  it('overlap of three codes: only where all three meet, with the whole segments that meet there; touching segments do not overlap', async () => {
    const text = 'aaaa bbbb cccc dddd eeee';
    const src = (await fx.ok('add_text_source', { name: 'zz letters', content: text })).source_id;
    const [x, y, z, w] = await Promise.all(['X', 'Y', 'Z', 'W'].map(async (name) => (await fx.ok('create_code', { name })).code_id as number));
    const at = (code: number, start: number, end: number) => ({ code_id: code, source_id: src, start_position: start, end_position: end });
    await fx.ok('batch_apply_codes', {
      operations: [
        at(x!, 0, 14), // aaaa bbbb cccc
        at(y!, 5, 19), // bbbb cccc dddd
        at(z!, 10, 14), // cccc: all three meet here
        at(z!, 20, 24), // eeee: no X, no Y
        at(y!, 0, 4), // aaaa: Y again, but not where Z is
        at(w!, 15, 20), // "dddd ": ends where Z's eeee begins
      ],
    });
    const r = await retrieve({ code_ids: [x, y, z], combine: 'overlap' });
    assert.deepEqual(rows(r), ['zz letters | ¶1 | X+Y+Z | aaaa bbbb cccc dddd']);
    assert.deepEqual(
      r.passages[0]!.segments.map((s) => text.slice(s.start_pos, s.end_pos)),
      ['aaaa bbbb cccc', 'bbbb cccc dddd', 'cccc'],
      "Y's aaaa does not reach where the three meet",
    );
    assert.deepEqual(rows(await retrieve({ code_ids: [w, z], combine: 'overlap' })), [], 'touching ranges do not overlap');
    assert.deepEqual(
      rows(await retrieve({ code_ids: [w, y], combine: 'overlap' })),
      ['zz letters | ¶1 | W+Y | bbbb cccc dddd '],
      'the union of the overlapping segments',
    );
  });

  it('filters: document attribute (typed), folder with sub-folders, case, case attribute, coder, source', async () => {
    const both = { code_ids: [id.water, id.coop] };
    assert.deepEqual(rows(await retrieve({ ...both, filters: { source_attributes: { Site: 'Lagos' } } })), [
      'interview-01 | ROSA | Water | We walk to the well every morning.',
      'interview-01 | ROSA | Cooperation | The rota helps.',
      'interview-03 | FATIMA | Water | Always the tap.',
    ]);
    assert.deepEqual(rows(await retrieve({ ...both, filters: { source_attributes: { Site: 'Lagos' } }, combine: 'and' })), [
      'interview-01 | ROSA | Water | We walk to the well every morning.',
      'interview-01 | ROSA | Cooperation | The rota helps.',
    ]);
    assert.deepEqual(rows(await retrieve({ ...both, filters: { source_attributes: { Wave: '2' } } })), [], 'the text "2" is not the number 2');
    assert.equal((await retrieve({ ...both, filters: { source_attributes: { Wave: 2, Site: 'Lagos' } } })).total, 2);
    assert.deepEqual(rows(await retrieve({ ...both, filters: { folder_id: id.round1 } })), [
      'interview-01 | ROSA | Water | We walk to the well every morning.',
      'interview-01 | ROSA | Cooperation | The rota helps.',
    ]);
    assert.deepEqual(rows(await retrieve({ ...both, filters: { case_ids: [id.amadou] } })), [
      'interview-02 | AMADOU | Water | The well is far. We share the rota',
    ]);
    assert.deepEqual(rows(await retrieve({ ...both, filters: { case_attributes: { gender: 'female' } } })), [
      'interview-01 | ROSA | Water | We walk to the well every morning.',
      'interview-01 | ROSA | Cooperation | The rota helps.',
    ]);
    assert.deepEqual(rows(await retrieve({ ...both, filters: { coder: 'bob' } })), [
      'interview-02 | AMADOU | Cooperation | We share the rota with neighbours.',
    ]);
    assert.deepEqual(
      rows(await retrieve({ ...both, combine: 'and', filters: { coder: 'bob' } })),
      [],
      "bob coded no Water: AND needs both within bob's codings",
    );
    assert.deepEqual(rows(await retrieve({ ...both, filters: { source_ids: [id.i03, id.essay] } })), [
      'essay | ¶2 | Water+Cooperation | The garden and the well are both communal.',
      'interview-03 | FATIMA | Water | Always the tap.',
    ]);
  });

  it('pages with limit and offset', async () => {
    const r = await fx.ok('retrieve_segments', { code_ids: [id.water, id.coop], limit: 2, offset: 3 });
    assert.deepEqual([r.total, r.count, r.offset, r.has_more], [6, 2, 3, true]);
    assert.deepEqual(
      r.passages.map((p: { text: string }) => p.text),
      ['The well is far. We share the rota', 'We share the rota with neighbours.'],
    );
  });

  it('refuses unknown ids and bad combinations with their error codes, and no codes', async () => {
    await fx.fails('retrieve_segments', { code_ids: [999] }, 'CODE_NOT_FOUND');
    await fx.fails('retrieve_segments', { code_ids: [id.water], filters: { folder_id: 999 } }, 'FOLDER_NOT_FOUND');
    await fx.fails('retrieve_segments', { code_ids: [id.water], filters: { source_ids: [999] } }, 'SOURCE_NOT_FOUND');
    await fx.fails('retrieve_segments', { code_ids: [id.water], filters: { case_ids: [999] } }, 'CASE_NOT_FOUND');
    await fx.fails('retrieve_segments', { code_ids: [] }, 'INVALID_ARGUMENTS');
    await fx.fails('retrieve_segments', { code_ids: [id.water], combine: 'xor' }, 'INVALID_ARGUMENTS');
    await fx.fails('retrieve_segments', { code_ids: [id.water], filters: { speaker: 'ROSA' } }, 'INVALID_ARGUMENTS');
  });

  it('locates speaker and paragraph in code points (an emoji counts once)', () => {
    // "Title 😀" is 7 code points; "\n\n" brings 9; "ANA: one\n" 18; "BEN: " 23
    const at = locator('Title 😀\n\nANA: one\nBEN: two');
    assert.deepEqual(at(0), { speaker: null, paragraph: 1 });
    assert.deepEqual(at(14), { speaker: 'ANA', paragraph: 2 });
    assert.deepEqual(at(23), { speaker: 'BEN', paragraph: 2 });
    assert.deepEqual(locator('NOTE: one label only\n\nsecond')(25), { speaker: null, paragraph: 2 }, 'one label is not a transcript');
  });

  it('names the query in words', () => {
    assert.deepEqual(
      describeRetrieval(fx.handle.repo, {
        code_ids: [id.water, id.coop],
        combine: 'and',
        filters: {
          folder_id: id.round1,
          case_ids: [id.rosa],
          source_attributes: { Site: 'Lagos' },
          case_attributes: { gender: 'female' },
          coder: 'alice',
          source_ids: [id.i01],
        },
      }),
      {
        title: 'Water AND Cooperation',
        filters: [
          'source: interview-01',
          'folder: Round 1 (with its sub-folders)',
          'case: Rosa',
          'document attribute Site = Lagos',
          'case attribute gender = female',
          'coder: alice',
        ],
      },
    );
  });

  it('exports CSV, Markdown and HTML without positions', async () => {
    const r = retrievePassages({ repo: fx.handle.repo } as never, { code_ids: [id.water, id.coop], combine: 'overlap' });
    const heading = { title: 'Water overlapping Cooperation', filters: ['document attribute Site = Kano'] };
    assert.equal(
      renderRetrieval(r, heading, 'csv'),
      'Source,Speaker,Paragraph,Codes,Coders,Text\r\n' +
        'essay,,2,Water; Cooperation,alice,The garden and the well are both communal.\r\n' +
        'interview-02,AMADOU,1,Water; Cooperation,alice; bob,The well is far. We share the rota with neighbours.\r\n',
    );
    assert.equal(
      renderRetrieval(r, heading, 'md'),
      [
        '# Water overlapping Cooperation',
        '',
        'codes overlapping each other; 2 passages in 2 sources.',
        '',
        '- document attribute Site = Kano',
        '',
        '## essay',
        '',
        '**¶ 2** · Water, Cooperation',
        '',
        '> The garden and the well are both communal.',
        '',
        '## interview-02',
        '',
        '**AMADOU** · Water, Cooperation',
        '',
        '> The well is far. We share the rota with neighbours.',
        '',
      ].join('\n'),
    );
    const html = renderRetrieval(r, heading, 'html');
    assert.match(
      html,
      /<h2>interview-02<\/h2>\n<p><span class="where">AMADOU<\/span> · <span class="codes">Water, Cooperation<\/span><\/p>\n<blockquote>The well is far. We share the rota with neighbours.<\/blockquote>/,
    );
    assert.match(html, /<title>Water overlapping Cooperation<\/title>/);
    assert.doesNotMatch(html, /<script/);
  });

  it('escapes what a format could read as markup or a formula', () => {
    const r: RetrievalResult = {
      combine: 'or',
      codes: [{ code_id: 1, name: '<b>', color: '#000000' }],
      source_count: 1,
      passages: [
        {
          source_id: 1,
          source_name: 'a, "b"',
          start_pos: 0,
          end_pos: 1,
          text: '=SUM(A1)\n# not a heading <script>',
          speaker: null,
          paragraph: 1,
          codes: [{ code_id: 1, name: '<b>', color: '#000000' }],
          coders: ['x'],
          segments: [],
        },
      ],
    };
    assert.equal(renderRetrieval(r, { title: 't', filters: [] }, 'csv').split('\r\n')[1], '"a, ""b""",,1,<b>,x,"\'=SUM(A1)\n# not a heading <script>"');
    assert.match(renderRetrieval(r, { title: 't', filters: [] }, 'md'), /> \\=SUM\(A1\)\n> \\# not a heading \\<script\\>\n/);
    assert.match(renderRetrieval(r, { title: 't', filters: [] }, 'html'), /<blockquote>=SUM\(A1\)\n# not a heading &lt;script&gt;<\/blockquote>/);
    assert.equal(escapeMarkdown('1. x *y*'), '1\\. x \\*y\\*');
  });
});
