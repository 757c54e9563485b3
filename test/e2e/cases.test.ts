/**
 * End-to-end test of the case tools over HTTP (HTTP spec, section 4 "Case management": list_cases, get_case,
 * suggest_case_groupings, compare_cases; and the agent-context design's create_case, delete_case,
 * add_source_to_case, add_segment_to_case, set_case_attribute) against the real built CLI
 * (`bin/marginalia.js serve`; run `npm run build` first). One server for the file; the `it` blocks run in
 * order and build on each other.
 *
 * Covered: typed attributes (text, number, date, boolean: inferred, converted with `type`, kept on later
 * sets) and their validation errors; groupings by shared values with attribute_names and min_group_size;
 * unique and common themes of compared cases, computed by hand from the codings the test makes; the agent's
 * create_case and delete_case waiting for approval while its set_case_attribute runs (default trust table);
 * every failing call leaving the cases and the event log as they were. Error codes with their HTTP statuses:
 * CASE_NOT_FOUND 404, DUPLICATE_NAME 409, SOURCE_NOT_FOUND 404, CODE_NOT_FOUND 404, INVALID_POSITION 400,
 * INVALID_ARGUMENTS 400, and CASES_NOT_LISTED/NO_CONTEXT 503.
 *
 * CASES_NOT_LISTED/NO_CONTEXT needs a server without an open project. `marginalia serve` always has its
 * project open (it opens it before listening and closes it only after the HTTP server stopped), so that one
 * case runs the same HTTP server code in process (startHttpServer + createPipeline + the agent context, as
 * src/extension.ts composes them) over a project that is then closed: what VS Code's tool server answers
 * while the researcher closes the project (ProjectController.close forgets the project before it stops the
 * server). The texts are ASCII, so UTF-16 indices are code points.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { startHttpServer } from '../../src/adapters/http/httpServer';
import { createAgentContextFor, createPipeline, headlessHost, openProjectHandle, type ProjectHandle } from '../../src/cli/compose';
import { silentLogger } from '../../src/core/log';
import { AGENT_TOKEN, AS_AGENT, callTool, REVIEWER_TOKEN, startServer, tmpDir, type ServerProcess } from '../helpers/serverProcess';
import { toolClient } from '../helpers/toolClient';

const FOCUS = [
  'FOCUS GROUP 3',
  '',
  'ANA: The water tank runs dry every August.',
  '',
  'BEN: The council wants forms for everything.',
  '',
  'ANA: We share tools with the school.',
  '',
].join('\n');
const ANA = ['ANA: I water the beds at dawn. The hose leaks.', '', 'ANA: The council ignored our letter.', ''].join('\n');
const BEN = ['BEN: I lend my spade to neighbours.', '', 'BEN: Water is rationed in July.', ''].join('\n');

/** The range of `part` in `text` (ASCII: UTF-16 index = code point). */
function at(text: string, part: string): { start_pos: number; end_pos: number } {
  const i = text.indexOf(part);
  assert.ok(i >= 0, `"${part}" not in the text`);
  return { start_pos: i, end_pos: i + part.length };
}

const UNKNOWN = 987654;

describe('case tools over HTTP (real CLI)', function () {
  this.timeout(120_000);
  let dir = '';
  let server: ServerProcess | undefined;
  let base = '';
  const t = toolClient(() => base);
  const src: Record<string, any> = {};
  const code: Record<string, any> = {};
  const kase: Record<string, any> = {};

  /** Every case in detail plus the list: what a failing call must leave unchanged. */
  const casesSnapshot = async () => {
    const list = await t.ok('list_cases');
    const details = [];
    for (const c of list.cases) details.push(await t.ok('get_case', { case_id: c.case_id }));
    return { list, details };
  };

  before(async () => {
    dir = tmpDir('marginalia-cases-e2e-');
    server = await startServer(path.join(dir, 'study.qda'));
    base = server.base;
    src.focus = (await t.ok('add_text_source', { name: 'Focus group 3', content: FOCUS })).source_id;
    src.ana = (await t.ok('add_text_source', { name: 'Interview Ana', content: ANA })).source_id;
    src.ben = (await t.ok('add_text_source', { name: 'Interview Ben', content: BEN })).source_id;
    fs.writeFileSync(path.join(dir, 'walk.mp3'), 'not really audio');
    src.audio = (await t.ok('import_source', { file_path: path.join(dir, 'walk.mp3') })).source_id;
    for (const [key, name, color] of [
      ['water', 'Water', '#4E79A7'],
      ['council', 'Council', '#E15759'],
      ['tools', 'Tools', '#59A14F'],
      ['dawn', 'Dawn routines', '#F28E2B'],
    ] as const) {
      code[key] = (await t.ok('create_code', { name, color })).code_id;
    }
    const ops = [
      { code_id: code.water, source_id: src.ana, ...at(ANA, 'I water the beds at dawn.') },
      { code_id: code.dawn, source_id: src.ana, ...at(ANA, 'I water the beds at dawn.') },
      { code_id: code.water, source_id: src.ana, ...at(ANA, 'The hose leaks.') },
      { code_id: code.council, source_id: src.ana, ...at(ANA, 'The council ignored our letter.') },
      { code_id: code.tools, source_id: src.ben, ...at(BEN, 'I lend my spade to neighbours.') },
      { code_id: code.water, source_id: src.ben, ...at(BEN, 'Water is rationed in July.') },
      { code_id: code.water, source_id: src.focus, ...at(FOCUS, 'The water tank runs dry every August.') },
      { code_id: code.council, source_id: src.focus, ...at(FOCUS, 'The council wants forms for everything.') },
      { code_id: code.tools, source_id: src.focus, ...at(FOCUS, 'We share tools with the school.') },
    ];
    for (const op of ops) await t.ok('apply_code', op);
  });

  after(async () => {
    if (server) await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('create_case creates cases; list_cases and get_case show them; a name in any case is DUPLICATE_NAME (409)', async () => {
    assert.deepEqual(await t.ok('list_cases'), { count: 0, cases: [] });
    for (const name of ['Ana', 'Ben', 'Cara']) {
      const c = await t.ok('create_case', { name, memo: `participant ${name}` });
      assert.equal(c.name, name);
      assert.equal(c.memo, `participant ${name}`);
      assert.deepEqual([c.source_count, c.segment_count, c.attribute_count], [0, 0, 0]);
      kase[name.toLowerCase()] = c.case_id;
    }
    const list = await t.ok('list_cases');
    assert.deepEqual(
      list.cases.map((c: any) => [c.case_id, c.name, c.attributes]),
      [
        [kase.ana, 'Ana', {}],
        [kase.ben, 'Ben', {}],
        [kase.cara, 'Cara', {}],
      ],
    );
    const d = await t.ok('get_case', { case_id: kase.ben });
    assert.deepEqual([d.case_id, d.name, d.memo, d.attributes, d.sources, d.segments], [kase.ben, 'Ben', 'participant Ben', [], [], []]);

    await t.writesNothing(casesSnapshot, () => t.fails('create_case', { name: 'ana ' }, 'DUPLICATE_NAME'), 'duplicate case name');
    await t.fails('get_case', { case_id: UNKNOWN }, 'CASE_NOT_FOUND');
    await t.fails('create_case', { name: '' }, 'INVALID_ARGUMENTS');
  });

  it('set_case_attribute stores typed values: text, number, date and boolean, inferred or converted by type', async () => {
    const set = (c: string, attribute_name: string, value: unknown, type?: string) =>
      t.ok('set_case_attribute', { case_id: kase[c], attribute_name, value, ...(type ? { type } : {}) });
    // inferred from the JSON value
    let r = await set('ana', 'role', 'gardener');
    assert.deepEqual([r.type, r.value, r.inferred, r.changed, r.old_value], ['text', 'gardener', true, true, null]);
    r = await set('ana', 'age', 34);
    assert.deepEqual([r.type, r.value], ['number', 34]);
    r = await set('ana', 'joined', '2021-04-12');
    assert.deepEqual([r.type, r.value], ['date', '2021-04-12']);
    r = await set('ana', 'volunteer', true);
    assert.deepEqual([r.type, r.value], ['boolean', true]);
    // converted with an explicit type
    await set('ben', 'role', 'gardener');
    r = await set('ben', 'age', '51', 'number');
    assert.deepEqual([r.type, r.value, r.inferred], ['number', 51, false]);
    r = await set('ben', 'joined', '2021-04-12', 'date');
    assert.deepEqual([r.type, r.value], ['date', '2021-04-12']);
    r = await set('ben', 'volunteer', 'FALSE', 'boolean');
    assert.deepEqual([r.type, r.value], ['boolean', false]);
    await set('cara', 'role', 'coordinator');
    await set('cara', 'age', 34);
    r = await set('cara', 'joined', '2022-01-03T09:30:00Z');
    assert.deepEqual([r.type, r.value], ['date', '2022-01-03T09:30:00Z']);
    await set('cara', 'volunteer', true);
    // a string that is not a date stays text, and "42" stays text without a type
    r = await set('cara', 'shoe', '42');
    assert.deepEqual([r.type, r.value], ['text', '42']);
    // an existing attribute keeps its type: "35" becomes the number 35
    r = await set('ana', 'age', '35');
    assert.deepEqual([r.type, r.value, r.old_type, r.old_value, r.changed], ['number', 35, 'number', 34, true]);
    r = await set('ana', 'age', 34);
    assert.deepEqual([r.value, r.old_value], [34, 35]);
    // the same value again changes nothing
    r = await set('ana', 'age', 34);
    assert.equal(r.changed, false);

    const d = await t.ok('get_case', { case_id: kase.ana });
    assert.deepEqual(d.attributes.map((a: any) => [a.name, a.type, a.value]).sort(), [
      ['age', 'number', 34],
      ['joined', 'date', '2021-04-12'],
      ['role', 'text', 'gardener'],
      ['volunteer', 'boolean', true],
    ]);
    assert.deepEqual(d.attribute_values, { age: 34, joined: '2021-04-12', role: 'gardener', volunteer: true });
    const list = await t.ok('list_cases');
    assert.deepEqual(
      list.cases.map((c: any) => [c.name, c.attribute_count, c.attributes]),
      [
        ['Ana', 4, { age: 34, joined: '2021-04-12', role: 'gardener', volunteer: true }],
        ['Ben', 4, { age: 51, joined: '2021-04-12', role: 'gardener', volunteer: false }],
        ['Cara', 5, { age: 34, joined: '2022-01-03T09:30:00Z', role: 'coordinator', volunteer: true, shoe: '42' }],
      ],
    );
  });

  it('refuses values that are not of the type (INVALID_ARGUMENTS, 400) and unknown cases (CASE_NOT_FOUND, 404), writing nothing', async () => {
    const failing = async () => {
      // a number attribute keeps its type: "old" is not a number
      const bad = await t.fails('set_case_attribute', { case_id: kase.ana, attribute_name: 'age', value: 'old' }, 'INVALID_ARGUMENTS');
      assert.match(bad.error, /number/);
      await t.fails('set_case_attribute', { case_id: kase.ana, attribute_name: 'age', value: true }, 'INVALID_ARGUMENTS');
      // not a calendar date (no 30 February), not ISO 8601
      await t.fails('set_case_attribute', { case_id: kase.ana, attribute_name: 'joined', value: '2023-02-30' }, 'INVALID_ARGUMENTS');
      await t.fails('set_case_attribute', { case_id: kase.ana, attribute_name: 'left', value: '12/04/2021', type: 'date' }, 'INVALID_ARGUMENTS');
      await t.fails('set_case_attribute', { case_id: kase.ana, attribute_name: 'joined', value: 20210412, type: 'date' }, 'INVALID_ARGUMENTS');
      await t.fails('set_case_attribute', { case_id: kase.ana, attribute_name: 'volunteer', value: 'maybe' }, 'INVALID_ARGUMENTS');
      await t.fails('set_case_attribute', { case_id: kase.ana, attribute_name: 'score', value: 'high', type: 'number' }, 'INVALID_ARGUMENTS');
      // not a type, not a value, no name
      await t.fails('set_case_attribute', { case_id: kase.ana, attribute_name: 'colour', value: 'red', type: 'colour' }, 'INVALID_ARGUMENTS');
      await t.fails('set_case_attribute', { case_id: kase.ana, attribute_name: 'colour', value: { r: 1 } }, 'INVALID_ARGUMENTS');
      await t.fails('set_case_attribute', { case_id: kase.ana, attribute_name: '', value: 'x' }, 'INVALID_ARGUMENTS');
      await t.fails('set_case_attribute', { case_id: UNKNOWN, attribute_name: 'role', value: 'x' }, 'CASE_NOT_FOUND');
      await t.fails('add_source_to_case', { case_id: UNKNOWN, source_id: src.ana }, 'CASE_NOT_FOUND');
      await t.fails('add_source_to_case', { case_id: kase.ana, source_id: UNKNOWN }, 'SOURCE_NOT_FOUND');
      await t.fails('add_segment_to_case', { case_id: UNKNOWN, source_id: src.focus, start_pos: 0, end_pos: 5 }, 'CASE_NOT_FOUND');
      await t.fails('add_segment_to_case', { case_id: kase.ana, source_id: UNKNOWN, start_pos: 0, end_pos: 5 }, 'SOURCE_NOT_FOUND');
      await t.fails('add_segment_to_case', { case_id: kase.ana, source_id: src.focus, start_pos: 10, end_pos: FOCUS.length + 1 }, 'INVALID_POSITION');
      await t.fails('add_segment_to_case', { case_id: kase.ana, source_id: src.focus, start_pos: 10, end_pos: 4 }, 'INVALID_POSITION');
      await t.fails('add_segment_to_case', { case_id: kase.ana, source_id: src.focus, start_pos: 10 }, 'INVALID_ARGUMENTS');
      // an audio source has no text to take a range of
      await t.fails('add_segment_to_case', { case_id: kase.ana, source_id: src.audio, start_pos: 0, end_pos: 1 }, 'INVALID_POSITION');
      await t.fails('delete_case', { case_id: UNKNOWN }, 'CASE_NOT_FOUND');
    };
    await t.writesNothing(casesSnapshot, failing, 'invalid attribute values and unknown ids');
  });

  it('add_source_to_case links whole sources once; add_segment_to_case adds ranges of a focus group with their text', async () => {
    let r = await t.ok('add_source_to_case', { case_id: kase.ana, source_id: src.ana });
    assert.deepEqual([r.added, r.source_count, r.source_name], [true, 1, 'Interview Ana']);
    r = await t.ok('add_source_to_case', { case_id: kase.ana, source_id: src.ana });
    assert.deepEqual([r.added, r.source_count], [false, 1]);
    r = await t.ok('add_source_to_case', { case_id: kase.ben, source_id: src.ben });
    assert.equal(r.added, true);

    const anaTurn = 'ANA: The water tank runs dry every August.';
    const s = await t.ok('add_segment_to_case', { case_id: kase.ana, source_id: src.focus, ...at(FOCUS, anaTurn) });
    assert.deepEqual([s.text, s.created, s.source_name], [anaTurn, true, 'Focus group 3']);
    const again = await t.ok('add_segment_to_case', { case_id: kase.ana, source_id: src.focus, ...at(FOCUS, anaTurn) });
    assert.deepEqual([again.case_segment_id, again.created], [s.case_segment_id, false]);
    // start/end are accepted as aliases
    const benTurn = 'BEN: The council wants forms for everything.';
    const b = await t.ok('add_segment_to_case', {
      case_id: kase.ben,
      source_id: src.focus,
      start: at(FOCUS, benTurn).start_pos,
      end: at(FOCUS, benTurn).end_pos,
    });
    assert.equal(b.text, benTurn);

    const d = await t.ok('get_case', { case_id: kase.ana });
    assert.deepEqual(
      d.sources.map((x: any) => [x.source_id, x.name, x.type]),
      [[src.ana, 'Interview Ana', 'text']],
    );
    assert.deepEqual(
      d.segments.map((x: any) => [x.source_id, x.start_pos, x.end_pos, x.text]),
      [[src.focus, at(FOCUS, anaTurn).start_pos, at(FOCUS, anaTurn).end_pos, anaTurn]],
    );
    const list = await t.ok('list_cases');
    assert.deepEqual(
      list.cases.map((c: any) => [c.name, c.source_count, c.segment_count]),
      [
        ['Ana', 1, 1],
        ['Ben', 1, 1],
        ['Cara', 0, 0],
      ],
    );
  });

  it('suggest_case_groupings groups cases by shared typed values; attribute_names narrows; min_group_size drops small groups', async () => {
    const g = await t.ok('suggest_case_groupings');
    assert.equal(g.min_group_size, 2, 'the spec default');
    assert.equal(g.case_count, 3);
    const shape = (x: any) =>
      x.groupings.map((a: any) => [a.attribute_name, a.groups.map((gr: any) => [gr.type, gr.value, gr.case_ids]), a.ungrouped_case_ids]);
    // by hand: age 34 = Ana, Cara (Ben 51); joined 2021-04-12 = Ana, Ben; role gardener = Ana, Ben; shoe only Cara; volunteer true = Ana, Cara
    assert.deepEqual(shape(g), [
      ['age', [['number', 34, [kase.ana, kase.cara]]], [kase.ben]],
      ['joined', [['date', '2021-04-12', [kase.ana, kase.ben]]], [kase.cara]],
      ['role', [['text', 'gardener', [kase.ana, kase.ben]]], [kase.cara]],
      ['shoe', [], [kase.cara]],
      ['volunteer', [['boolean', true, [kase.ana, kase.cara]]], [kase.ben]],
    ]);
    assert.equal(g.group_count, 4);

    const narrowed = await t.ok('suggest_case_groupings', { attribute_names: ['role', 'height'] });
    assert.deepEqual(shape(narrowed), [['role', [['text', 'gardener', [kase.ana, kase.ben]]], [kase.cara]]]);
    assert.deepEqual(narrowed.unknown_attributes, ['height']);

    const singles = await t.ok('suggest_case_groupings', { attribute_names: ['age'], min_group_size: 1 });
    assert.deepEqual(shape(singles), [
      [
        'age',
        [
          ['number', 34, [kase.ana, kase.cara]],
          ['number', 51, [kase.ben]],
        ],
        [],
      ],
    ]);
    const none = await t.ok('suggest_case_groupings', { min_group_size: 3 });
    assert.equal(none.group_count, 0);
    await t.fails('suggest_case_groupings', { min_group_size: 0 }, 'INVALID_ARGUMENTS');
  });

  it('compare_cases finds the themes unique to each case and common to all, from whole sources and ranges', async () => {
    // by hand: Ana = Interview Ana (Water x2, Dawn routines, Council) + her focus-group turn (Water);
    // Ben = Interview Ben (Tools, Water) + his focus-group turn (Council); Cara has no sources.
    const c = await t.ok('compare_cases', { case_ids: [kase.ana, kase.ben] });
    const themes = (x: any[]) => x.map((th) => [th.name, th.segment_count]);
    const byId = (id: number) => c.cases.find((x: any) => x.case_id === id);
    assert.deepEqual(themes(byId(kase.ana).themes), [
      ['Council', 1],
      ['Dawn routines', 1],
      ['Water', 3],
    ]);
    assert.deepEqual(themes(byId(kase.ana).unique_themes), [['Dawn routines', 1]]);
    assert.equal(byId(kase.ana).coding_count, 5);
    assert.deepEqual(themes(byId(kase.ben).themes), [
      ['Council', 1],
      ['Tools', 1],
      ['Water', 1],
    ]);
    assert.deepEqual(themes(byId(kase.ben).unique_themes), [['Tools', 1]]);
    assert.deepEqual(
      c.common_themes.map((x: any) => [x.name, x.total_segment_count, x.counts.map((k: any) => [k.case_id, k.segment_count])]),
      [
        [
          'Council',
          2,
          [
            [kase.ana, 1],
            [kase.ben, 1],
          ],
        ],
        [
          'Water',
          4,
          [
            [kase.ana, 3],
            [kase.ben, 1],
          ],
        ],
      ],
    );
    assert.deepEqual([c.common_theme_count, c.unique_theme_count], [2, 2]);

    // narrowed to two codes
    const n = await t.ok('compare_cases', { case_ids: [kase.ana, kase.ben], code_ids: [code.water, code.tools] });
    assert.deepEqual(
      n.common_themes.map((x: any) => x.name),
      ['Water'],
    );
    assert.deepEqual(themes(n.cases.find((x: any) => x.case_id === kase.ben).unique_themes), [['Tools', 1]]);
    assert.deepEqual(n.cases.find((x: any) => x.case_id === kase.ana).unique_themes, []);

    // with Cara (no codings) nothing is common, and Water (Ana and Ben) is unique to no one
    const three = await t.ok('compare_cases', { case_ids: [kase.ana, kase.ben, kase.cara] });
    assert.deepEqual(three.common_themes, []);
    assert.deepEqual(
      three.cases.map((x: any) => [x.name, x.unique_themes.map((th: any) => th.name)]),
      [
        ['Ana', ['Dawn routines']],
        ['Ben', ['Tools']],
        ['Cara', []],
      ],
    );

    await t.fails('compare_cases', { case_ids: [kase.ana] }, 'INVALID_ARGUMENTS');
    await t.fails('compare_cases', { case_ids: [kase.ana, kase.ana] }, 'INVALID_ARGUMENTS');
    await t.fails('compare_cases', { case_ids: [kase.ana, UNKNOWN] }, 'CASE_NOT_FOUND');
    await t.fails('compare_cases', { case_ids: [kase.ana, kase.ben], code_ids: [UNKNOWN] }, 'CODE_NOT_FOUND');
  });

  it("an agent's create_case and delete_case wait for approval (HTTP 202); its set_case_attribute runs (notify)", async () => {
    const before = await casesSnapshot();
    const create = await t.pending('create_case', { name: 'Dev' }, AS_AGENT);
    const del = await t.pending('delete_case', { case_id: kase.cara }, AS_AGENT);
    assert.deepEqual(await casesSnapshot(), before, 'nothing ran yet');
    const created = await t.approve(create);
    assert.equal(created.name, 'Dev');
    kase.dev = created.case_id;
    const attr = await t.ok('set_case_attribute', { case_id: kase.dev, attribute_name: 'age', value: 29 }, AS_AGENT);
    assert.deepEqual([attr.type, attr.value], ['number', 29]);
    const deleted = await t.approve(del);
    assert.deepEqual([deleted.deleted, deleted.name, deleted.attribute_count], [true, 'Cara', 5]);
    assert.deepEqual(
      (await t.ok('list_cases')).cases.map((c: any) => c.name),
      ['Ana', 'Ben', 'Dev'],
    );
  });

  it('delete_case removes the case with its links and attributes, keeping its sources and codings', async () => {
    const segsBefore = await t.ok('list_segments_for_source', { source_id: src.ana });
    const r = await t.ok('delete_case', { case_id: kase.ana });
    assert.deepEqual([r.deleted, r.case_id, r.name, r.source_count, r.segment_count, r.attribute_count], [true, kase.ana, 'Ana', 1, 1, 4]);
    await t.fails('get_case', { case_id: kase.ana }, 'CASE_NOT_FOUND');
    await t.fails('delete_case', { case_id: kase.ana }, 'CASE_NOT_FOUND');
    assert.deepEqual(
      (await t.ok('list_cases')).cases.map((c: any) => c.name),
      ['Ben', 'Dev'],
    );
    assert.deepEqual(await t.ok('list_segments_for_source', { source_id: src.ana }), segsBefore, 'the codings stay');
    assert.equal((await t.ok('list_sources')).count, 4, 'the sources stay');
    // the groupings no longer see Ana
    const g = await t.ok('suggest_case_groupings', { attribute_names: ['age'], min_group_size: 1 });
    assert.deepEqual(
      g.groupings[0].groups.map((x: any) => [x.value, x.case_ids]),
      [
        [29, [kase.dev]],
        [51, [kase.ben]],
      ],
    );
  });

  it('has answered every case error code it set out to', () => {
    for (const c of ['CASE_NOT_FOUND', 'DUPLICATE_NAME', 'SOURCE_NOT_FOUND', 'CODE_NOT_FOUND', 'INVALID_POSITION', 'INVALID_ARGUMENTS'])
      assert.ok(t.seen.has(c), c);
  });
});

describe('case tools over HTTP without an open project (in-process server, as VS Code serves while a project closes)', function () {
  this.timeout(60_000);
  let dir = '';
  let current: ProjectHandle | null = null;
  let handle: ProjectHandle | undefined;
  let server: Awaited<ReturnType<typeof startHttpServer>> | undefined;
  let agent: ReturnType<typeof createAgentContextFor> | undefined;
  let base = '';
  const t = toolClient(() => base);

  before(async () => {
    dir = tmpDir('marginalia-cases-noproject-');
    const file = path.join(dir, 'closed.qda');
    handle = await openProjectHandle(file, { create: true, logger: silentLogger });
    current = handle;
    agent = createAgentContextFor(file, { project: () => current, logger: silentLogger, tokens: { agent: AGENT_TOKEN, reviewer: REVIEWER_TOKEN } });
    const pipeline = createPipeline({ project: () => current, host: headlessHost, logger: silentLogger, agent, embeddings: null });
    server = await startHttpServer({ pipeline, port: 0, logger: silentLogger, version: 'test', agent });
    base = `http://127.0.0.1:${server.port}`;
  });

  after(async () => {
    await server?.close();
    agent?.dispose();
    if (current) await current.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('every case tool answers CASES_NOT_LISTED/NO_CONTEXT (503) once the project is closed; other tools NO_PROJECT (503)', async () => {
    // with the project open the same server answers
    const created = await t.ok('create_case', { name: 'P1' });
    assert.equal((await t.ok('list_cases')).count, 1);
    // the researcher closes the project: the server is still up for a moment, without a project
    current = null;
    await handle?.close();
    const calls: [string, Record<string, unknown>][] = [
      ['list_cases', {}],
      ['get_case', { case_id: created.case_id }],
      ['suggest_case_groupings', {}],
      ['compare_cases', { case_ids: [1, 2] }],
      ['create_case', { name: 'P2' }],
      ['delete_case', { case_id: created.case_id }],
      ['add_source_to_case', { case_id: created.case_id, source_id: 1 }],
      ['add_segment_to_case', { case_id: created.case_id, source_id: 1, start_pos: 0, end_pos: 1 }],
      ['set_case_attribute', { case_id: created.case_id, attribute_name: 'age', value: 3 }],
    ];
    for (const [name, args] of calls) await t.fails(name, args, 'CASES_NOT_LISTED/NO_CONTEXT');
    // an agent gets the same answer (not a pending approval) for a case tool its trust level would hold
    const agentCall = await callTool(base, 'create_case', { name: 'P3' }, AS_AGENT);
    assert.deepEqual([agentCall.status, agentCall.body.error_code], [503, 'CASES_NOT_LISTED/NO_CONTEXT']);
    await t.fails('list_codes', {}, 'NO_PROJECT');
    await t.fails('list_av_segments', { source_id: 1 }, 'NO_PROJECT');
  });
});
