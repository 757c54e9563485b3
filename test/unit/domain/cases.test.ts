/**
 * Cases with typed attributes (src/domain/cases.ts, src/tools/caseTools.ts) through the one pipeline on real
 * project files: the HTTP spec's case tools (list_cases, get_case, suggest_case_groupings, compare_cases)
 * and the agent-context spec's case writers (create_case, delete_case, add_source_to_case,
 * add_segment_to_case, set_case_attribute), their error codes, their events, and that a failed call
 * writes nothing. Expected values are worked out by hand.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createPipeline, headlessHost, openProjectHandle } from '../../../src/cli/compose';
import { silentLogger } from '../../../src/core/log';
import { coerceAttributeValue, inferAttributeType, isIsoDate } from '../../../src/domain/cases';
import { ALICE, FIXED_ISO, fixedClock, openFixture, snapshot, storedEvents, type Fixture } from './projectFixture';

const BLUE = '#4E79A7';

/** Everything a caller can see, cases included: the base snapshot plus list_cases and every case in full. */
async function caseSnapshot(fx: Fixture): Promise<unknown> {
  const list = await fx.ok<{ cases: { case_id: number }[] }>('list_cases');
  const details: unknown[] = [];
  for (const c of list.cases) details.push(await fx.ok('get_case', { case_id: c.case_id }));
  return { base: await snapshot(fx), list, details, groupings: await fx.ok('suggest_case_groupings', { min_group_size: 1 }) };
}

/** Calls `name` expecting `code`, and checks that the project (cases included) is unchanged. */
async function failsCleanly(fx: Fixture, name: string, a: unknown, code: string): Promise<void> {
  const before = await caseSnapshot(fx);
  await fx.fails(name, a, code);
  assert.deepEqual(await caseSnapshot(fx), before, `${name} failing with ${code} must write nothing`);
}

describe('domain/cases through the pipeline', () => {
  let fx: Fixture;
  beforeEach(async () => {
    fx = await openFixture();
  });
  afterEach(async () => {
    await fx.close();
  });

  describe('create_case, list_cases, get_case, delete_case', () => {
    it('creates a case, lists it with summary info and reports it in get_project_context', async () => {
      const out = await fx.call('create_case', { name: '  P01 ', memo: 'first interview' });
      assert.ok(out.envelope.success);
      const c = out.envelope.data as any;
      assert.equal(c.name, 'P01', 'trimmed');
      assert.equal(c.memo, 'first interview');
      assert.equal(c.owner, 'alice');
      assert.equal(c.created_at, FIXED_ISO);
      assert.equal(out.events.length, 1);
      assert.equal(out.events[0]!.event_type, 'case.created');
      assert.equal(out.events[0]!.aggregate_type, 'case');
      assert.equal(out.events[0]!.aggregate_id, String(c.case_id));
      assert.deepEqual(out.events[0]!.payload, { case_id: c.case_id, name: 'P01', memo: 'first interview' });

      const p02 = await fx.ok('create_case', { name: 'p02' });
      assert.equal(p02.memo, null);

      const list = await fx.ok('list_cases');
      assert.equal(list.count, 2);
      assert.deepEqual(
        list.cases.map((x: any) => [x.case_id, x.name, x.source_count, x.segment_count, x.attribute_count, x.attributes]),
        [
          [c.case_id, 'P01', 0, 0, 0, {}],
          [p02.case_id, 'p02', 0, 0, 0, {}],
        ],
      );

      const ctx = await fx.ok('get_project_context');
      assert.equal(ctx.case_count, 2);
      assert.deepEqual(ctx.cases, [
        { id: c.case_id, case_id: c.case_id, name: 'P01' },
        { id: p02.case_id, case_id: p02.case_id, name: 'p02' },
      ]);

      const got = await fx.ok('get_case', { case_id: String(c.case_id) });
      assert.equal(got.case_id, c.case_id);
      assert.deepEqual([got.attributes, got.attribute_values, got.sources, got.segments], [[], {}, [], []]);
    });

    it('names are unique case-insensitively: DUPLICATE_NAME writes nothing', async () => {
      await fx.ok('create_case', { name: 'Site Alpha' });
      await failsCleanly(fx, 'create_case', { name: ' site alpha ' }, 'DUPLICATE_NAME');
      await failsCleanly(fx, 'create_case', { name: 'SITE ALPHA' }, 'DUPLICATE_NAME');
      await failsCleanly(fx, 'create_case', { name: '   ' }, 'INVALID_ARGUMENTS');
      await failsCleanly(fx, 'create_case', { name: 'x'.repeat(256) }, 'INVALID_ARGUMENTS');
      await fx.ok('create_case', { name: 'x'.repeat(255) });
    });

    it('CASE_NOT_FOUND from every tool that takes a case, writing nothing', async () => {
      const c = await fx.ok('create_case', { name: 'P01' });
      const s = await fx.ok('add_text_source', { name: 'S', content: 'hello world' });
      const missing = c.case_id + 100;
      await failsCleanly(fx, 'get_case', { case_id: missing }, 'CASE_NOT_FOUND');
      await failsCleanly(fx, 'delete_case', { case_id: missing }, 'CASE_NOT_FOUND');
      await failsCleanly(fx, 'add_source_to_case', { case_id: missing, source_id: s.source_id }, 'CASE_NOT_FOUND');
      await failsCleanly(fx, 'add_segment_to_case', { case_id: missing, source_id: s.source_id, start_pos: 0, end_pos: 5 }, 'CASE_NOT_FOUND');
      await failsCleanly(fx, 'set_case_attribute', { case_id: missing, attribute_name: 'age', value: 3 }, 'CASE_NOT_FOUND');
      await failsCleanly(fx, 'compare_cases', { case_ids: [c.case_id, missing] }, 'CASE_NOT_FOUND');
    });

    it('delete_case removes the case with its memberships and attributes; sources and codings stay', async () => {
      const c = await fx.ok('create_case', { name: 'P01' });
      const s = await fx.ok('add_text_source', { name: 'S', content: 'hello world' });
      const code = await fx.ok('create_code', { name: 'Greeting', color: BLUE });
      await fx.ok('batch_apply_codes', { operations: [{ code_id: code.code_id, source_id: s.source_id, start_pos: 0, end_pos: 5 }] });
      await fx.ok('add_source_to_case', { case_id: c.case_id, source_id: s.source_id });
      await fx.ok('add_segment_to_case', { case_id: c.case_id, source_id: s.source_id, start_pos: 6, end_pos: 11 });
      await fx.ok('set_case_attribute', { case_id: c.case_id, attribute_name: 'age', value: 34 });

      const out = await fx.call('delete_case', { case_id: c.case_id });
      assert.ok(out.envelope.success);
      assert.deepEqual(out.envelope.data, { deleted: true, case_id: c.case_id, name: 'P01', source_count: 1, segment_count: 1, attribute_count: 1 });
      assert.deepEqual(
        out.events.map((e) => [e.event_type, e.payload]),
        [
          [
            'case.deleted',
            {
              case_id: c.case_id,
              name: 'P01',
              source_count: 1,
              segment_count: 1,
              attribute_count: 1,
              // what undo needs to make the case again
              memo: null,
              owner: 'alice',
              session_id: 'sess-alice',
              sources: [{ source_id: s.source_id, owner: 'alice', session_id: 'sess-alice' }],
              segments: [{ source_id: s.source_id, start: 6, end: 11, owner: 'alice', session_id: 'sess-alice' }],
              attributes: [{ name: 'age', type: 'number', value: 34 }],
            },
          ],
        ],
      );
      await fx.fails('get_case', { case_id: c.case_id }, 'CASE_NOT_FOUND');
      assert.equal((await fx.ok('list_cases')).count, 0);
      for (const table of ['cases', 'case_sources', 'case_segments', 'case_attributes']) {
        assert.equal(fx.handle.store.all(`SELECT * FROM ${table}`).length, 0, `${table} is empty`);
      }
      assert.equal((await fx.ok('list_sources')).count, 1);
      assert.equal((await fx.ok('list_segments_for_source', { source_id: s.source_id })).count, 1);
      // the name is free again
      await fx.ok('create_case', { name: 'p01' });
    });
  });

  describe('members', () => {
    it('add_source_to_case links a whole source once (idempotent) and emits case.member_added with segment_range null', async () => {
      const c = await fx.ok('create_case', { name: 'P01' });
      const s = await fx.ok('add_text_source', { name: 'Interview 1', content: 'hello world' });
      const out = await fx.call('add_source_to_case', { case_id: c.case_id, source_id: s.source_id });
      assert.ok(out.envelope.success);
      assert.deepEqual(out.envelope.data, { case_id: c.case_id, source_id: s.source_id, source_name: 'Interview 1', added: true, source_count: 1 });
      assert.deepEqual(
        out.events.map((e) => [e.event_type, e.aggregate_type, e.aggregate_id, e.payload]),
        [['case.member_added', 'case', String(c.case_id), { case_id: c.case_id, source_id: s.source_id, source_name: 'Interview 1', segment_range: null }]],
      );
      const seq = fx.handle.store.journalSeq;
      const again = await fx.call('add_source_to_case', { case_id: c.case_id, source_id: s.source_id });
      assert.ok(again.envelope.success);
      assert.equal((again.envelope.data as any).added, false);
      assert.deepEqual(again.events, [], 'linking again emits nothing');
      assert.equal(fx.handle.store.journalSeq, seq, 'linking again writes nothing');

      const got = await fx.ok('get_case', { case_id: c.case_id });
      assert.deepEqual(got.sources, [{ source_id: s.source_id, name: 'Interview 1', type: 'text', added_at: FIXED_ISO, added_by: 'alice' }]);
      assert.equal(got.source_count, 1);

      await failsCleanly(fx, 'add_source_to_case', { case_id: c.case_id, source_id: s.source_id + 9 }, 'SOURCE_NOT_FOUND');
    });

    it('add_segment_to_case holds a range in code points, accepts start/end aliases and is idempotent', async () => {
      const c = await fx.ok('create_case', { name: 'P01' });
      // code points: a=0 😀=1 b=2 😀=3 c=4 d=5
      const s = await fx.ok('add_text_source', { name: 'Focus group', content: 'a😀b😀cd' });
      assert.equal(s.length, 6);
      const out = await fx.call('add_segment_to_case', { case_id: c.case_id, source_id: s.source_id, start_pos: 1, end_pos: 4 });
      assert.ok(out.envelope.success);
      const seg = out.envelope.data as any;
      assert.equal(seg.text, '😀b😀');
      assert.equal(seg.created, true);
      assert.deepEqual([seg.case_id, seg.source_id, seg.source_name, seg.start_pos, seg.end_pos], [c.case_id, s.source_id, 'Focus group', 1, 4]);
      assert.deepEqual(
        out.events.map((e) => [e.event_type, e.payload]),
        [
          [
            'case.member_added',
            { case_id: c.case_id, source_id: s.source_id, segment_range: { start: 1, end: 4 }, case_segment_id: seg.case_segment_id, text: '😀b😀' },
          ],
        ],
      );

      const alias = await fx.call('add_segment_to_case', { case_id: c.case_id, source_id: s.source_id, start: 1, end: 4 });
      assert.ok(alias.envelope.success);
      assert.equal((alias.envelope.data as any).case_segment_id, seg.case_segment_id, 'the same range is the same member');
      assert.equal((alias.envelope.data as any).created, false);
      assert.deepEqual(alias.events, []);

      const tail = await fx.ok('add_segment_to_case', { case_id: c.case_id, source_id: s.source_id, start: 4, end_pos: 6 });
      assert.equal(tail.text, 'cd');

      const got = await fx.ok('get_case', { case_id: c.case_id });
      assert.deepEqual(
        got.segments.map((g: any) => [g.case_segment_id, g.source_name, g.start_pos, g.end_pos, g.text]),
        [
          [seg.case_segment_id, 'Focus group', 1, 4, '😀b😀'],
          [tail.case_segment_id, 'Focus group', 4, 6, 'cd'],
        ],
      );
      assert.equal(got.segment_count, 2);
      assert.equal(got.source_count, 0, 'a range does not link the whole source');
    });

    it('INVALID_POSITION for ranges outside the text and for sources without text; INVALID_ARGUMENTS without positions', async () => {
      const c = await fx.ok('create_case', { name: 'P01' });
      const s = await fx.ok('add_text_source', { name: 'S', content: 'a😀b' });
      const base = { case_id: c.case_id, source_id: s.source_id };
      await failsCleanly(fx, 'add_segment_to_case', { ...base, start_pos: 0, end_pos: 4 }, 'INVALID_POSITION');
      await failsCleanly(fx, 'add_segment_to_case', { ...base, start_pos: 2, end_pos: 2 }, 'INVALID_POSITION');
      await failsCleanly(fx, 'add_segment_to_case', { ...base, start_pos: 3, end_pos: 1 }, 'INVALID_POSITION');
      await failsCleanly(fx, 'add_segment_to_case', { ...base, start_pos: -1, end_pos: 1 }, 'INVALID_ARGUMENTS');
      await failsCleanly(fx, 'add_segment_to_case', { ...base, start_pos: 0 }, 'INVALID_ARGUMENTS');
      await failsCleanly(fx, 'add_segment_to_case', { ...base, start_pos: 0, start: 1, end_pos: 2 }, 'INVALID_ARGUMENTS');
      await failsCleanly(fx, 'add_segment_to_case', { ...base, source_id: s.source_id + 9, start_pos: 0, end_pos: 1 }, 'SOURCE_NOT_FOUND');

      const png = path.join(fx.dir, 'photo.png');
      fs.writeFileSync(png, Buffer.from([0x89, 0x50, 0x4e, 0x47]));
      const img = await fx.ok('import_file_source', { file_path: png });
      assert.equal(img.type, 'image');
      await failsCleanly(fx, 'add_segment_to_case', { case_id: c.case_id, source_id: img.source_id, start_pos: 0, end_pos: 1 }, 'INVALID_POSITION');
      // a media source can still be linked whole
      assert.equal((await fx.ok('add_source_to_case', { case_id: c.case_id, source_id: img.source_id })).added, true);
    });

    it("deleting a source removes it from every case's sources and ranges", async () => {
      const c = await fx.ok('create_case', { name: 'P01' });
      const s = await fx.ok('add_text_source', { name: 'S', content: 'hello world' });
      const t = await fx.ok('add_text_source', { name: 'T', content: 'kept' });
      await fx.ok('add_source_to_case', { case_id: c.case_id, source_id: s.source_id });
      await fx.ok('add_source_to_case', { case_id: c.case_id, source_id: t.source_id });
      await fx.ok('add_segment_to_case', { case_id: c.case_id, source_id: s.source_id, start_pos: 0, end_pos: 5 });
      await fx.ok('remove_source', { source_id: s.source_id, confirm: true });
      const got = await fx.ok('get_case', { case_id: c.case_id });
      assert.deepEqual(
        got.sources.map((x: any) => x.name),
        ['T'],
      );
      assert.deepEqual(got.segments, []);
      assert.deepEqual([got.source_count, got.segment_count], [1, 0]);
      assert.equal(fx.handle.store.all('SELECT * FROM case_sources WHERE source_id = ?', [s.source_id]).length, 0);
      assert.equal(fx.handle.store.all('SELECT * FROM case_segments WHERE source_id = ?', [s.source_id]).length, 0);
    });
  });

  describe('typed attributes', () => {
    it('infers the type from the value when none is given', async () => {
      const c = await fx.ok('create_case', { name: 'P01' });
      const set = (attribute_name: string, value: unknown) => fx.ok('set_case_attribute', { case_id: c.case_id, attribute_name, value });
      const cases: [string, unknown, string, unknown][] = [
        ['consented', true, 'boolean', true],
        ['age', 34, 'number', 34],
        ['score', -2.5, 'number', -2.5],
        ['interviewed', '2024-03-01', 'date', '2024-03-01'],
        ['started', ' 2024-03-01T09:30:00Z ', 'date', '2024-03-01T09:30:00Z'],
        ['zone', '2024-03-01T09:30+01:00', 'date', '2024-03-01T09:30+01:00'],
        ['not_a_day', '2024-02-30', 'text', '2024-02-30'],
        ['leap', '2024-02-29', 'date', '2024-02-29'],
        ['code', '42', 'text', '42'],
        ['flag', 'true', 'text', 'true'],
        ['gender', 'female', 'text', 'female'],
        ['empty', '', 'text', ''],
      ];
      for (const [name, value, type, stored] of cases) {
        const r = await set(name, value);
        assert.deepEqual([r.name, r.type, r.value, r.inferred, r.changed, r.old_type, r.old_value], [name, type, stored, true, true, null, null], name);
      }
      const got = await fx.ok('get_case', { case_id: c.case_id });
      const sorted = [...cases].sort((a, b) => (a[0] < b[0] ? -1 : 1));
      assert.deepEqual(
        got.attributes.map((a: any) => [a.name, a.type, a.value]),
        sorted.map(([name, , type, stored]) => [name, type, stored]),
      );
      for (const a of got.attributes) assert.equal(a.updated_at, FIXED_ISO);
      const list = await fx.ok('list_cases');
      assert.deepEqual(list.cases[0].attributes, Object.fromEntries(sorted.map(([name, , , stored]) => [name, stored])));
      assert.equal(list.cases[0].attribute_count, cases.length);

      // each value sits in the column of its type
      const rows = fx.handle.store.all<Record<string, unknown>>(
        'SELECT name, type, value_text, value_number, value_date, value_boolean FROM case_attributes WHERE name IN (?,?,?,?) ORDER BY name',
        ['age', 'consented', 'gender', 'interviewed'],
      );
      assert.deepEqual(rows, [
        { name: 'age', type: 'number', value_text: null, value_number: 34, value_date: null, value_boolean: null },
        { name: 'consented', type: 'boolean', value_text: null, value_number: null, value_date: null, value_boolean: 1 },
        { name: 'gender', type: 'text', value_text: 'female', value_number: null, value_date: null, value_boolean: null },
        { name: 'interviewed', type: 'date', value_text: null, value_number: null, value_date: '2024-03-01', value_boolean: null },
      ]);
    });

    it('an attribute keeps its type; an explicit type converts or changes it; a value not of the type fails and writes nothing', async () => {
      const c = await fx.ok('create_case', { name: 'P01' });
      const set = (a: Record<string, unknown>) => fx.call('set_case_attribute', { case_id: c.case_id, ...a });

      let out = await set({ attribute_name: 'age', value: 34 });
      assert.deepEqual(
        out.events.map((e) => [e.event_type, e.aggregate_type, e.aggregate_id, e.payload]),
        [['case.attribute_set', 'case', String(c.case_id), { case_id: c.case_id, name: 'age', type: 'number', value: 34, old_type: null, old_value: null }]],
      );
      // keeps its type: the string "35" becomes the number 35
      out = await set({ attribute_name: 'age', value: ' 35 ' });
      assert.deepEqual(out.envelope.success && out.envelope.data, {
        case_id: c.case_id,
        name: 'age',
        type: 'number',
        value: 35,
        old_type: 'number',
        old_value: 34,
        changed: true,
        inferred: false,
      });
      assert.deepEqual(out.events[0]!.payload, { case_id: c.case_id, name: 'age', type: 'number', value: 35, old_type: 'number', old_value: 34 });
      // not a number: refused, nothing written
      await failsCleanly(fx, 'set_case_attribute', { case_id: c.case_id, attribute_name: 'age', value: 'thirty' }, 'INVALID_ARGUMENTS');
      await failsCleanly(fx, 'set_case_attribute', { case_id: c.case_id, attribute_name: 'age', value: true }, 'INVALID_ARGUMENTS');
      // the same value again: nothing written, no event
      const seq = fx.handle.store.journalSeq;
      out = await set({ attribute_name: 'age', value: 35 });
      assert.equal(out.envelope.success && (out.envelope.data as any).changed, false);
      assert.deepEqual(out.events, []);
      assert.equal(fx.handle.store.journalSeq, seq);
      // changing the type explicitly is allowed
      out = await set({ attribute_name: 'age', value: 'mid thirties', type: 'text' });
      assert.deepEqual(out.events[0]!.payload, { case_id: c.case_id, name: 'age', type: 'text', value: 'mid thirties', old_type: 'number', old_value: 35 });
      // an explicit type converts strings
      assert.deepEqual(
        await fx.ok('set_case_attribute', { case_id: c.case_id, attribute_name: 'code', value: '42', type: 'number' }).then((r) => [r.type, r.value]),
        ['number', 42],
      );
      assert.deepEqual(
        await fx.ok('set_case_attribute', { case_id: c.case_id, attribute_name: 'ok', value: ' TRUE ', type: 'boolean' }).then((r) => [r.type, r.value]),
        ['boolean', true],
      );
      assert.deepEqual(await fx.ok('set_case_attribute', { case_id: c.case_id, attribute_name: 'n', value: 7, type: 'text' }).then((r) => [r.type, r.value]), [
        'text',
        '7',
      ]);
      // keeps boolean: "false" is false
      assert.equal((await fx.ok('set_case_attribute', { case_id: c.case_id, attribute_name: 'ok', value: 'false' })).value, false);
      await failsCleanly(fx, 'set_case_attribute', { case_id: c.case_id, attribute_name: 'when', value: 'yesterday', type: 'date' }, 'INVALID_ARGUMENTS');
      await failsCleanly(fx, 'set_case_attribute', { case_id: c.case_id, attribute_name: 'when', value: '2023-02-29', type: 'date' }, 'INVALID_ARGUMENTS');
      await failsCleanly(fx, 'set_case_attribute', { case_id: c.case_id, attribute_name: 'when', value: 20240301, type: 'date' }, 'INVALID_ARGUMENTS');
      await failsCleanly(fx, 'set_case_attribute', { case_id: c.case_id, attribute_name: 'x', value: 'maybe', type: 'boolean' }, 'INVALID_ARGUMENTS');
      await failsCleanly(fx, 'set_case_attribute', { case_id: c.case_id, attribute_name: 'x', value: 1, type: 'colour' }, 'INVALID_ARGUMENTS');
      await failsCleanly(fx, 'set_case_attribute', { case_id: c.case_id, attribute_name: 'x', value: null }, 'INVALID_ARGUMENTS');
      await failsCleanly(fx, 'set_case_attribute', { case_id: c.case_id, attribute_name: ' ', value: 1 }, 'INVALID_ARGUMENTS');

      const got = await fx.ok('get_case', { case_id: c.case_id });
      assert.deepEqual(got.attribute_values, { age: 'mid thirties', code: 42, n: '7', ok: false });
      assert.deepEqual(
        got.attributes.map((a: any) => [a.name, a.type]),
        [
          ['age', 'text'],
          ['code', 'number'],
          ['n', 'text'],
          ['ok', 'boolean'],
        ],
      );
    });

    it('types are per case: the same attribute may be a number on one case and text on another', async () => {
      const a = await fx.ok('create_case', { name: 'A' });
      const b = await fx.ok('create_case', { name: 'B' });
      await fx.ok('set_case_attribute', { case_id: a.case_id, attribute_name: 'age', value: 30 });
      const r = await fx.ok('set_case_attribute', { case_id: b.case_id, attribute_name: 'age', value: 'unknown' });
      assert.deepEqual([r.type, r.inferred], ['text', true]);
    });

    it('typed values survive closing and reopening the project', async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'marginalia-cases-'));
      const file = path.join(dir, 'p.qda');
      try {
        let handle = await openProjectHandle(file, { create: true, checkpointIdleMs: 0 });
        let pipeline = createPipeline({ project: () => handle, host: headlessHost, logger: silentLogger, clock: fixedClock });
        const ok = async (name: string, a: unknown) => {
          const out = await pipeline.invoke(name, a, ALICE);
          assert.ok(out.envelope.success, JSON.stringify(out.envelope));
          return out.envelope.data as any;
        };
        const c = await ok('create_case', { name: 'P01' });
        const values = { age: 34, ratio: 0.125, consented: false, interviewed: '2024-03-01', gender: 'female' };
        for (const [attribute_name, value] of Object.entries(values)) await ok('set_case_attribute', { case_id: c.case_id, attribute_name, value });
        await handle.close();

        handle = await openProjectHandle(file, { checkpointIdleMs: 0 });
        pipeline = createPipeline({ project: () => handle, host: headlessHost, logger: silentLogger, clock: fixedClock });
        const got = await ok('get_case', { case_id: c.case_id });
        assert.deepEqual(got.attribute_values, values);
        assert.deepEqual(
          got.attributes.map((a: any) => [a.name, a.type]),
          [
            ['age', 'number'],
            ['consented', 'boolean'],
            ['gender', 'text'],
            ['interviewed', 'date'],
            ['ratio', 'number'],
          ],
        );
        await handle.close();
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });

    it('isIsoDate, inferAttributeType and coerceAttributeValue', () => {
      for (const s of ['2024-01-31', '2000-02-29', '2024-12-31T23:59', '2024-12-31T23:59:59.123Z', '2024-06-01T00:00:00-05:30']) assert.ok(isIsoDate(s), s);
      for (const s of ['2024-1-31', '1900-02-29', '2024-13-01', '2024-04-31', '2024-01-01T24:00', '2024-01-01 10:00', '2024-01-01T10:60', 'yesterday', ''])
        assert.ok(!isIsoDate(s), s);
      assert.equal(inferAttributeType(false), 'boolean');
      assert.equal(inferAttributeType(0), 'number');
      assert.equal(inferAttributeType('1999-12-31'), 'date');
      assert.equal(inferAttributeType('0'), 'text');
      assert.equal(coerceAttributeValue('1e3', 'number'), 1000);
      assert.equal(coerceAttributeValue(false, 'text'), 'false');
      assert.throws(
        () => coerceAttributeValue('0x10', 'number'),
        (e: any) => e.code === 'INVALID_ARGUMENTS',
      );
      assert.throws(
        () => coerceAttributeValue(1, 'boolean'),
        (e: any) => e.code === 'INVALID_ARGUMENTS',
      );
    });
  });

  describe('suggest_case_groupings', () => {
    /** Five cases with gender, age and site; P05 has no site. */
    async function seed(): Promise<number[]> {
      const rows: [string, Record<string, unknown>][] = [
        ['P01', { gender: 'female', age: 30, site: 'North' }],
        ['P02', { gender: 'male', age: 30, site: 'North' }],
        ['P03', { gender: 'female', age: 30.5, site: 'South' }],
        ['P04', { gender: 'female', age: '30', site: 'North' }],
        ['P05', { gender: 'Female', age: 41 }],
      ];
      const ids: number[] = [];
      for (const [name, attrs] of rows) {
        const c = await fx.ok('create_case', { name });
        ids.push(c.case_id);
        for (const [attribute_name, value] of Object.entries(attrs)) await fx.ok('set_case_attribute', { case_id: c.case_id, attribute_name, value });
      }
      return ids;
    }

    it('groups cases by exact typed value per attribute, dropping groups smaller than min_group_size (default 2)', async () => {
      const [p1, p2, p3, p4, p5] = (await seed()) as [number, number, number, number, number];
      const r = await fx.ok('suggest_case_groupings');
      assert.equal(r.min_group_size, 2);
      assert.equal(r.case_count, 5);
      assert.deepEqual(r.unknown_attributes, []);
      const summary = r.groupings.map((g: any) => ({
        attribute: g.attribute_name,
        case_count: g.case_count,
        groups: g.groups.map((x: any) => [x.label, x.type, x.value, x.size, x.case_ids]),
        ungrouped: g.ungrouped_case_ids,
      }));
      assert.deepEqual(summary, [
        // 30 twice (numbers by exact value); 30.5, the text "30" and 41 alone
        { attribute: 'age', case_count: 5, groups: [['age = 30', 'number', 30, 2, [p1, p2]]], ungrouped: [p3, p4, p5] },
        // exact text: "Female" is not "female"
        { attribute: 'gender', case_count: 5, groups: [['gender = female', 'text', 'female', 3, [p1, p3, p4]]], ungrouped: [p2, p5] },
        { attribute: 'site', case_count: 4, groups: [['site = North', 'text', 'North', 3, [p1, p2, p4]]], ungrouped: [p3] },
      ]);
      assert.equal(r.group_count, 3);
      assert.deepEqual(r.groupings[2].groups[0].cases, [
        { case_id: p1, name: 'P01' },
        { case_id: p2, name: 'P02' },
        { case_id: p4, name: 'P04' },
      ]);
    });

    it('min_group_size and attribute_names narrow the suggestions', async () => {
      const [p1, p2, p3, p4, p5] = (await seed()) as [number, number, number, number, number];
      const three = await fx.ok('suggest_case_groupings', { min_group_size: 3 });
      assert.deepEqual(
        three.groupings.map((g: any) => [g.attribute_name, g.groups.map((x: any) => x.label)]),
        [
          ['age', []],
          ['gender', ['gender = female']],
          ['site', ['site = North']],
        ],
      );
      assert.equal(three.group_count, 2);

      const one = await fx.ok('suggest_case_groupings', { attribute_names: ['site', 'region'], min_group_size: 1 });
      assert.deepEqual(one.unknown_attributes, ['region']);
      assert.deepEqual(
        one.groupings.map((g: any) => [g.attribute_name, g.groups.map((x: any) => [x.value, x.case_ids])]),
        [
          [
            'site',
            [
              ['North', [p1, p2, p4]],
              ['South', [p3]],
            ],
          ],
        ],
      );
      const ages = await fx.ok('suggest_case_groupings', { attribute_names: ['age'], min_group_size: 1 });
      // largest first, then by type name, then by value: number 30 (2), then number 30.5, number 41, text "30"
      assert.deepEqual(
        ages.groupings[0].groups.map((x: any) => [x.type, x.value, x.case_ids]),
        [
          ['number', 30, [p1, p2]],
          ['number', 30.5, [p3]],
          ['number', 41, [p5]],
          ['text', '30', [p4]],
        ],
      );
      await fx.fails('suggest_case_groupings', { min_group_size: 0 }, 'INVALID_ARGUMENTS');
      await fx.fails('suggest_case_groupings', { min_group_size: 1.5 }, 'INVALID_ARGUMENTS');
    });

    it('with no cases suggests nothing', async () => {
      assert.deepEqual(await fx.ok('suggest_case_groupings'), { min_group_size: 2, case_count: 0, groupings: [], group_count: 0, unknown_attributes: [] });
    });
  });

  describe('compare_cases', () => {
    /**
     * By hand. Sources (30 code points each): S1 belongs to P1 whole; S2 is a focus group where P2 holds
     * [0,10) and P3 holds [10,20) and [15,22); S3 belongs to P3 whole. Codings:
     *   S1: Anxiety [0,5), Belonging [5,10), Anxiety [10,15), Everyday [15,20)
     *   S2: Belonging [2,6) -> P2;  Coping [8,12) -> P2 and P3;  Everyday [9,11) -> P2 and P3;
     *       Distance [15,18) -> P3 (overlaps both P3 ranges, counted once);  Anxiety [22,26) -> nobody (touches P3's end);
     *       Coping [25,30) -> nobody
     *   S3: Anxiety [0,4), Distance [4,8), Everyday [8,10)
     * Themes: P1 Anxiety 2, Belonging 1, Everyday 1
     *         P2 Belonging 1, Coping 1, Everyday 1
     *         P3 Anxiety 1, Coping 1, Distance 2, Everyday 2
     */
    async function seed() {
      const code = async (name: string) => (await fx.ok('create_code', { name, color: BLUE })).code_id as number;
      const A = await code('Anxiety');
      const B = await code('Belonging');
      const C = await code('Coping');
      const D = await code('Distance');
      const E = await code('Everyday');
      const text = 'abcdefghijklmnopqrstuvwxyz0123';
      const S1 = (await fx.ok('add_text_source', { name: 'S1', content: text })).source_id as number;
      const S2 = (await fx.ok('add_text_source', { name: 'S2', content: text })).source_id as number;
      const S3 = (await fx.ok('add_text_source', { name: 'S3', content: text })).source_id as number;
      const op = (code_id: number, source_id: number, start_pos: number, end_pos: number) => ({ code_id, source_id, start_pos, end_pos });
      await fx.ok('batch_apply_codes', {
        operations: [
          op(A, S1, 0, 5),
          op(B, S1, 5, 10),
          op(A, S1, 10, 15),
          op(E, S1, 15, 20),
          op(B, S2, 2, 6),
          op(C, S2, 8, 12),
          op(E, S2, 9, 11),
          op(D, S2, 15, 18),
          op(A, S2, 22, 26),
          op(C, S2, 25, 30),
          op(A, S3, 0, 4),
          op(D, S3, 4, 8),
          op(E, S3, 8, 10),
        ],
      });
      const P1 = (await fx.ok('create_case', { name: 'P1' })).case_id as number;
      const P2 = (await fx.ok('create_case', { name: 'P2' })).case_id as number;
      const P3 = (await fx.ok('create_case', { name: 'P3' })).case_id as number;
      await fx.ok('add_source_to_case', { case_id: P1, source_id: S1 });
      await fx.ok('add_segment_to_case', { case_id: P2, source_id: S2, start_pos: 0, end_pos: 10 });
      await fx.ok('add_segment_to_case', { case_id: P3, source_id: S2, start_pos: 10, end_pos: 20 });
      await fx.ok('add_segment_to_case', { case_id: P3, source_id: S2, start_pos: 15, end_pos: 22 });
      await fx.ok('add_source_to_case', { case_id: P3, source_id: S3 });
      return { A, B, C, D, E, P1, P2, P3 };
    }
    const themes = (list: any[]) => list.map((t) => [t.name, t.segment_count]);

    it('finds the themes unique to each case and common to all, with counts', async () => {
      const { A, E, P1, P2, P3 } = await seed();
      const r = await fx.ok('compare_cases', { case_ids: [P1, P2, P3] });
      assert.deepEqual(r.case_ids, [P1, P2, P3]);
      assert.equal(r.code_ids, null);
      assert.deepEqual(
        r.cases.map((c: any) => [c.name, themes(c.themes), themes(c.unique_themes), c.theme_count, c.coding_count]),
        [
          [
            'P1',
            [
              ['Anxiety', 2],
              ['Belonging', 1],
              ['Everyday', 1],
            ],
            [],
            3,
            4,
          ],
          [
            'P2',
            [
              ['Belonging', 1],
              ['Coping', 1],
              ['Everyday', 1],
            ],
            [],
            3,
            3,
          ],
          [
            'P3',
            [
              ['Anxiety', 1],
              ['Coping', 1],
              ['Distance', 2],
              ['Everyday', 2],
            ],
            [['Distance', 2]],
            4,
            6,
          ],
        ],
      );
      assert.deepEqual(r.common_themes, [
        {
          code_id: E,
          name: 'Everyday',
          color: BLUE,
          total_segment_count: 4,
          counts: [
            { case_id: P1, segment_count: 1 },
            { case_id: P2, segment_count: 1 },
            { case_id: P3, segment_count: 2 },
          ],
        },
      ]);
      assert.equal(r.common_theme_count, 1);
      assert.equal(r.unique_theme_count, 1);
      assert.ok(A > 0);
    });

    it('two cases: unique and common themes change with the set compared; code_ids narrows the themes', async () => {
      const { A, D, P1, P2, P3 } = await seed();
      const two = await fx.ok('compare_cases', { case_ids: [String(P1), P2] });
      assert.deepEqual(
        two.cases.map((c: any) => [c.name, themes(c.unique_themes)]),
        [
          ['P1', [['Anxiety', 2]]],
          ['P2', [['Coping', 1]]],
        ],
      );
      assert.deepEqual(
        two.common_themes.map((t: any) => [t.name, t.total_segment_count, t.counts.map((x: any) => x.segment_count)]),
        [
          ['Belonging', 2, [1, 1]],
          ['Everyday', 2, [1, 1]],
        ],
      );
      assert.deepEqual([two.common_theme_count, two.unique_theme_count], [2, 2]);

      const narrowed = await fx.ok('compare_cases', { case_ids: [P1, P3], code_ids: [A, D] });
      assert.deepEqual(narrowed.code_ids, [A, D]);
      assert.deepEqual(
        narrowed.cases.map((c: any) => [c.name, themes(c.themes), themes(c.unique_themes)]),
        [
          ['P1', [['Anxiety', 2]], []],
          [
            'P3',
            [
              ['Anxiety', 1],
              ['Distance', 2],
            ],
            [['Distance', 2]],
          ],
        ],
      );
      assert.deepEqual(
        narrowed.common_themes.map((t: any) => [t.name, t.total_segment_count]),
        [['Anxiety', 3]],
      );
    });

    it('needs at least 2 distinct existing cases and existing codes; writes nothing', async () => {
      const { P1, P2 } = await seed();
      await failsCleanly(fx, 'compare_cases', { case_ids: [P1] }, 'INVALID_ARGUMENTS');
      await failsCleanly(fx, 'compare_cases', { case_ids: [P1, P1] }, 'INVALID_ARGUMENTS');
      await failsCleanly(fx, 'compare_cases', { case_ids: [P1, 999] }, 'CASE_NOT_FOUND');
      await failsCleanly(fx, 'compare_cases', { case_ids: [P1, P2], code_ids: [999] }, 'CODE_NOT_FOUND');
      const seq = fx.handle.store.journalSeq;
      const out = await fx.call('compare_cases', { case_ids: [P1, P2] });
      assert.deepEqual(out.events, []);
      assert.equal(fx.handle.store.journalSeq, seq, 'a comparison writes nothing');
    });

    it('cases without codings have no themes, and nothing is common', async () => {
      const a = await fx.ok('create_case', { name: 'A' });
      const b = await fx.ok('create_case', { name: 'B' });
      const r = await fx.ok('compare_cases', { case_ids: [a.case_id, b.case_id] });
      assert.deepEqual(
        r.cases.map((c: any) => [c.theme_count, c.coding_count, c.themes, c.unique_themes]),
        [
          [0, 0, [], []],
          [0, 0, [], []],
        ],
      );
      assert.deepEqual(r.common_themes, []);
    });
  });

  describe('events and project gating', () => {
    it('stores every case event in the events table in order, one correlation id per call', async () => {
      const c = await fx.ok('create_case', { name: 'P01' });
      const s = await fx.ok('add_text_source', { name: 'S', content: 'hello world' });
      await fx.ok('add_source_to_case', { case_id: c.case_id, source_id: s.source_id });
      await fx.ok('add_segment_to_case', { case_id: c.case_id, source_id: s.source_id, start: 0, end: 5 });
      await fx.ok('set_case_attribute', { case_id: c.case_id, attribute_name: 'site', value: 'North' });
      await fx.ok('delete_case', { case_id: c.case_id });
      const stored = storedEvents(fx.handle).filter((e) => e.aggregate_type === 'case');
      assert.deepEqual(
        stored.map((e) => [e.event_type, e.aggregate_id, e.user, e.session_id, e.timestamp]),
        ['case.created', 'case.member_added', 'case.member_added', 'case.attribute_set', 'case.deleted'].map((t) => [
          t,
          String(c.case_id),
          'alice',
          'sess-alice',
          FIXED_ISO,
        ]),
      );
      assert.deepEqual(stored[2]!.payload.segment_range, { start: 0, end: 5 });
      assert.equal(new Set(stored.map((e) => e.correlation_id)).size, stored.length);
      for (let i = 1; i < stored.length; i++) assert.ok(stored[i]!.seq > stored[i - 1]!.seq);
    });

    it('every case tool fails with CASES_NOT_LISTED/NO_CONTEXT when no project is open', async () => {
      const none = createPipeline({ project: () => null, host: headlessHost, logger: silentLogger, clock: fixedClock });
      const calls: Record<string, unknown> = {
        list_cases: {},
        get_case: { case_id: 1 },
        suggest_case_groupings: { min_group_size: 2 },
        compare_cases: { case_ids: [1, 2], code_ids: [1] },
        create_case: { name: 'P01', memo: 'm' },
        delete_case: { case_id: 1 },
        add_source_to_case: { case_id: 1, source_id: 1 },
        add_segment_to_case: { case_id: 1, source_id: 1, start: 0, end: 1 },
        set_case_attribute: { case_id: 1, attribute_name: 'age', value: 30, type: 'number' },
        // managing cases from the workbench (src/tools/caseManagementTools.ts)
        rename_case: { case_id: 1, new_name: 'P02' },
        remove_source_from_case: { case_id: 1, source_id: 1 },
        remove_case_attribute: { case_id: 1, attribute_name: 'age' },
        list_case_attributes: {},
        rename_case_attribute: { attribute_name: 'age', new_name: 'Age' },
        // the case memo (src/tools/memoTools.ts)
        update_case_memo: { case_id: 1, memo: 'm' },
      };
      const caseTools = none
        .listTools()
        .filter((t) => t.group === 'case')
        .map((t) => t.name);
      assert.deepEqual(caseTools.sort(), Object.keys(calls).sort());
      for (const [name, a] of Object.entries(calls)) {
        const out = await none.invoke(name, a, ALICE);
        assert.equal(out.status, 'failed', name);
        assert.ok(!out.envelope.success && out.envelope.error_code === 'CASES_NOT_LISTED/NO_CONTEXT', `${name}: ${JSON.stringify(out.envelope)}`);
        assert.deepEqual(out.events, []);
      }
    });
  });
});
