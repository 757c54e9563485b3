/**
 * Document (source) attributes (migration 10, src/domain/sourceAttributes.ts, src/tools/sourceAttributeTools.ts)
 * through the one pipeline on real project files: set_source_attribute's typing rules, errors and events;
 * list_sources and read_source_content returning the attributes; remove_source taking them along; the
 * stored rows after a journal replay and a checkpoint; a project at schema 9 migrated; and import plans
 * carrying `PlannedSource.attributes`. Expected values are worked out by hand.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { ToolPipeline } from '../../../src/agent/pipeline';
import { ALL_TOOLS, headlessHost, openProjectHandle } from '../../../src/cli/compose';
import type { DomainEvent } from '../../../src/domain/events';
import { listSourceAttributes, listSourceAttributesTyped, setSourceAttributes } from '../../../src/domain/sourceAttributes';
import { applyImportPlan } from '../../../src/exchange/importers/applyPlan';
import { emptyPlan } from '../../../src/exchange/importers/plan';
import { defineTool } from '../../../src/tools/defineTool';
import { tmpDir } from '../../helpers/serverProcess';
import { ALICE, databaseBeforeMigration, FIXED_ISO, fixedClock, openFixture, snapshot, storedEvents, type Fixture } from './projectFixture';

type Row = Record<string, unknown>;

/** The raw stored rows of source_attributes, by source then name. */
function rows(fx: { handle: Fixture['handle'] }): Row[] {
  return fx.handle.store.all<Row>('SELECT * FROM source_attributes ORDER BY source_id, name');
}

describe('document attributes (set_source_attribute, migration 10)', () => {
  let fx: Fixture;
  let s1: number;
  let s2: number;
  beforeEach(async () => {
    fx = await openFixture();
    s1 = (await fx.ok<{ source_id: number }>('add_text_source', { name: 'interview-01', content: 'We grow beans 🌱.' })).source_id;
    s2 = (await fx.ok<{ source_id: number }>('add_text_source', { name: 'interview-02', content: 'Nothing here.' })).source_id;
  });
  afterEach(async () => {
    await fx.close();
  });

  it('infers number, boolean and text from the JSON value; date only when asked; stores exactly the column of the type', async () => {
    const out = await fx.call('set_source_attribute', { source_id: s1, attribute_name: 'Age', value: 34 });
    assert.ok(out.envelope.success, JSON.stringify(out.envelope));
    assert.deepEqual(out.envelope.data, {
      source_id: s1,
      source_name: 'interview-01',
      attribute_name: 'Age',
      type: 'number',
      value: 34,
      old_type: null,
      old_value: null,
      changed: true,
      inferred: true,
    });
    assert.equal(out.events.length, 1);
    assert.equal(out.events[0]!.event_type, 'source.attribute_set');
    assert.equal(out.events[0]!.aggregate_type, 'source');
    assert.equal(out.events[0]!.aggregate_id, String(s1));
    assert.deepEqual(out.events[0]!.payload, {
      source_id: s1,
      source_name: 'interview-01',
      attribute_name: 'Age',
      type: 'number',
      value: 34,
      old_type: null,
      old_value: null,
    });

    assert.equal((await fx.ok('set_source_attribute', { source_id: s1, attribute_name: 'Consent', value: true })).type, 'boolean');
    const t = await fx.ok('set_source_attribute', { source_id: s1, attribute_name: 'Site', value: '2024-05-01' });
    assert.equal(t.type, 'text', 'a date-like string stays text without type: "date"');
    const d = await fx.ok('set_source_attribute', { source_id: s1, attribute_name: 'Interviewed', value: ' 2024-02-29 ', type: 'date' });
    assert.deepEqual([d.type, d.value, d.inferred], ['date', '2024-02-29', false], 'trimmed, a leap day exists');
    await fx.ok('set_source_attribute', { source_id: s1, attribute_name: 'Recorded', value: '2024-05-01T09:30:00Z', type: 'date' });

    assert.deepEqual(rows(fx), [
      {
        source_id: s1,
        name: 'Age',
        type: 'number',
        value_text: null,
        value_number: 34,
        value_date: null,
        value_boolean: null,
        updated_at: FIXED_ISO,
        owner: 'alice',
        session_id: 'sess-alice',
      },
      {
        source_id: s1,
        name: 'Consent',
        type: 'boolean',
        value_text: null,
        value_number: null,
        value_date: null,
        value_boolean: 1,
        updated_at: FIXED_ISO,
        owner: 'alice',
        session_id: 'sess-alice',
      },
      {
        source_id: s1,
        name: 'Interviewed',
        type: 'date',
        value_text: null,
        value_number: null,
        value_date: '2024-02-29',
        value_boolean: null,
        updated_at: FIXED_ISO,
        owner: 'alice',
        session_id: 'sess-alice',
      },
      {
        source_id: s1,
        name: 'Recorded',
        type: 'date',
        value_text: null,
        value_number: null,
        value_date: '2024-05-01T09:30:00Z',
        value_boolean: null,
        updated_at: FIXED_ISO,
        owner: 'alice',
        session_id: 'sess-alice',
      },
      {
        source_id: s1,
        name: 'Site',
        type: 'text',
        value_text: '2024-05-01',
        value_number: null,
        value_date: null,
        value_boolean: null,
        updated_at: FIXED_ISO,
        owner: 'alice',
        session_id: 'sess-alice',
      },
    ]);
  });

  it("keeps an attribute's type, converts to it, changes it only when asked; the same value again writes nothing", async () => {
    await fx.ok('set_source_attribute', { source_id: s1, attribute_name: 'Age', value: 34 });
    const again = await fx.call('set_source_attribute', { source_id: s1, attribute_name: 'Age', value: 34 });
    assert.ok(again.envelope.success);
    assert.equal((again.envelope.data as Row).changed, false);
    assert.deepEqual(again.events, [], 'no change, no event');
    const kept = await fx.call('set_source_attribute', { source_id: s1, attribute_name: 'Age', value: '35' });
    assert.deepEqual((kept.envelope as { data: Row }).data, {
      source_id: s1,
      source_name: 'interview-01',
      attribute_name: 'Age',
      type: 'number',
      value: 35,
      old_type: 'number',
      old_value: 34,
      changed: true,
      inferred: false,
    });
    assert.deepEqual(kept.events[0]!.payload, {
      source_id: s1,
      source_name: 'interview-01',
      attribute_name: 'Age',
      type: 'number',
      value: 35,
      old_type: 'number',
      old_value: 34,
    });
    const retyped = await fx.ok('set_source_attribute', { source_id: s1, attribute_name: 'Age', value: 'thirty-five', type: 'text' });
    assert.deepEqual([retyped.type, retyped.value, retyped.old_type, retyped.old_value], ['text', 'thirty-five', 'number', 35]);
    assert.deepEqual(
      rows(fx).map((r) => [r.type, r.value_text, r.value_number]),
      [['text', 'thirty-five', null]],
    );
    const b = await fx.ok('set_source_attribute', { source_id: s1, attribute_name: 'Consent', value: 'TRUE', type: 'boolean' });
    assert.equal(b.value, true);
    assert.equal((await fx.ok('set_source_attribute', { source_id: s1, attribute_name: 'Consent', value: false })).value, false);
    // "age" is another attribute than "Age"
    await fx.ok('set_source_attribute', { source_id: s1, attribute_name: 'age', value: 1 });
    assert.deepEqual(Object.keys(listAttrs(fx, s1)), ['Age', 'Consent', 'age']);
  });

  it('value null deletes the attribute (an event with type and value null); deleting an absent one writes nothing', async () => {
    await fx.ok('set_source_attribute', { source_id: s1, attribute_name: 'Age', value: 34 });
    const del = await fx.call('set_source_attribute', { source_id: s1, attribute_name: 'Age', value: null });
    assert.ok(del.envelope.success);
    assert.deepEqual((del.envelope as { data: Row }).data, {
      source_id: s1,
      source_name: 'interview-01',
      attribute_name: 'Age',
      type: null,
      value: null,
      old_type: 'number',
      old_value: 34,
      changed: true,
      inferred: false,
    });
    assert.deepEqual(del.events[0]!.payload, {
      source_id: s1,
      source_name: 'interview-01',
      attribute_name: 'Age',
      type: null,
      value: null,
      old_type: 'number',
      old_value: 34,
    });
    assert.deepEqual(rows(fx), []);
    const none = await fx.call('set_source_attribute', { source_id: s1, attribute_name: 'Age', value: null });
    assert.ok(none.envelope.success);
    assert.equal((none.envelope.data as Row).changed, false);
    assert.deepEqual(none.events, []);
  });

  it('refuses an unknown source, a bad date, a value not of the type and bad names, writing nothing', async () => {
    await fx.ok('set_source_attribute', { source_id: s1, attribute_name: 'Age', value: 34 });
    const before = await snapshot(fx);
    const rowsBefore = rows(fx);
    const cases: [unknown, string, RegExp][] = [
      [{ source_id: 999, attribute_name: 'Age', value: 1 }, 'SOURCE_NOT_FOUND', /source_id 999/],
      [{ source_id: s1, attribute_name: 'Date', value: '2023-02-29', type: 'date' }, 'INVALID_ARGUMENTS', /not an ISO 8601 date/],
      [{ source_id: s1, attribute_name: 'Date', value: '01/05/2024', type: 'date' }, 'INVALID_ARGUMENTS', /not an ISO 8601 date/],
      [{ source_id: s1, attribute_name: 'Date', value: 20240501, type: 'date' }, 'INVALID_ARGUMENTS', /not an ISO 8601 date/],
      [{ source_id: s1, attribute_name: 'Age', value: 'old' }, 'INVALID_ARGUMENTS', /of type number .*"old" is not a number/],
      [{ source_id: s1, attribute_name: 'N', value: 'abc', type: 'number' }, 'INVALID_ARGUMENTS', /not a number/],
      [{ source_id: s1, attribute_name: 'B', value: 'yes', type: 'boolean' }, 'INVALID_ARGUMENTS', /not a boolean/],
      [{ source_id: s1, attribute_name: 'X', value: 1, type: 'integer' }, 'INVALID_ARGUMENTS', /type/],
      [{ source_id: s1, attribute_name: '   ', value: 1 }, 'INVALID_ARGUMENTS', /attribute_name/],
      [{ source_id: s1, attribute_name: 'x'.repeat(101), value: 1 }, 'INVALID_ARGUMENTS', /attribute_name/],
      [{ source_id: s1, attribute_name: 'Age', value: { a: 1 } }, 'INVALID_ARGUMENTS', /value/],
      [{ source_id: s1, attribute_name: 'Age' }, 'INVALID_ARGUMENTS', /value/],
    ];
    for (const [args, code, message] of cases) {
      const out = await fx.fails('set_source_attribute', args, code);
      assert.ok(!out.envelope.success && message.test(out.envelope.error), `${JSON.stringify(args)}: ${JSON.stringify(out.envelope)}`);
    }
    assert.deepEqual(await snapshot(fx), before);
    assert.deepEqual(rows(fx), rowsBefore);
  });

  it('list_sources and read_source_content return attributes {name: value} and attribute_types; remove_source takes them along', async () => {
    await fx.ok('set_source_attribute', { source_id: s1, attribute_name: 'Age', value: 34 });
    await fx.ok('set_source_attribute', { source_id: s1, attribute_name: 'Consent', value: true });
    await fx.ok('set_source_attribute', { source_id: s1, attribute_name: 'Interviewed', value: '2024-05-01', type: 'date' });
    await fx.ok('set_source_attribute', { source_id: s1, attribute_name: 'Site', value: 'Nairobi é🌱' });
    await fx.ok('set_source_attribute', { source_id: s2, attribute_name: 'Site', value: 'Lagos' });
    const list = await fx.ok<{ sources: Row[] }>('list_sources');
    const byName = new Map(list.sources.map((s) => [s.name, s]));
    assert.deepEqual(byName.get('interview-01')!.attributes, { Age: 34, Consent: true, Interviewed: '2024-05-01', Site: 'Nairobi é🌱' });
    assert.deepEqual(byName.get('interview-01')!.attribute_types, { Age: 'number', Consent: 'boolean', Interviewed: 'date', Site: 'text' });
    assert.deepEqual(byName.get('interview-02')!.attributes, { Site: 'Lagos' });
    const page = await fx.ok('read_source_content', { source_id: s1 });
    assert.deepEqual(page.attributes, { Age: 34, Consent: true, Interviewed: '2024-05-01', Site: 'Nairobi é🌱' });
    assert.deepEqual(page.attribute_types, { Age: 'number', Consent: 'boolean', Interviewed: 'date', Site: 'text' });
    const plain = await fx.ok('add_text_source', { name: 'interview-03', content: 'x' });
    assert.deepEqual((await fx.ok('read_source_content', { source_id: plain.source_id })).attributes, {});

    await fx.ok('remove_source', { source_id: s1, confirm: true });
    assert.deepEqual(
      rows(fx).map((r) => [r.source_id, r.name]),
      [[s2, 'Site']],
    );
  });

  it('the stored attributes come back the same after a journal replay (crash) and after a checkpoint', async () => {
    await fx.ok('set_source_attribute', { source_id: s1, attribute_name: 'Age', value: 34.5 });
    await fx.ok('set_source_attribute', { source_id: s1, attribute_name: 'Consent', value: false });
    await fx.ok('set_source_attribute', { source_id: s2, attribute_name: 'Interviewed', value: '2024-05-01T09:30:00+02:00', type: 'date' });
    await fx.ok('set_source_attribute', { source_id: s2, attribute_name: 'Site', value: '\ufeff\ufeffNairobi' });
    await fx.ok('set_source_attribute', { source_id: s2, attribute_name: 'Gone', value: 1 });
    await fx.ok('set_source_attribute', { source_id: s2, attribute_name: 'Gone', value: null });
    const expected = fx.handle.repo.listSourceAttributes();
    assert.deepEqual(
      expected.map((a) => [a.source_id, a.name, a.type, a.value]),
      [
        [s1, 'Age', 'number', 34.5],
        [s1, 'Consent', 'boolean', false],
        [s2, 'Interviewed', 'date', '2024-05-01T09:30:00+02:00'],
        [s2, 'Site', 'text', '\ufeff\ufeffNairobi'],
      ],
    );
    const dir = tmpDir('marginalia-source-attrs-');
    const copy = path.join(dir, 'crashed.qda');
    fs.copyFileSync(fx.handle.path, copy);
    fs.copyFileSync(`${fx.handle.path}-journal`, `${copy}-journal`);
    assert.ok(fs.statSync(`${copy}-journal`).size > 0, 'the attributes are in the journal, not yet in the file');
    const h = await openProjectHandle(copy, { checkpointIdleMs: 0 });
    try {
      assert.deepEqual(h.repo.listSourceAttributes(), expected, 'after the journal replay');
      h.store.checkpoint();
      assert.equal(fs.statSync(`${copy}-journal`).size, 0);
    } finally {
      await h.close();
    }
    const again = await openProjectHandle(copy, { checkpointIdleMs: 0 });
    try {
      assert.deepEqual(again.repo.listSourceAttributes(), expected, 'after the checkpoint');
      assert.deepEqual(again.store.all('PRAGMA integrity_check'), [{ integrity_check: 'ok' }]);
    } finally {
      await again.close();
    }
  });

  it('the domain functions: listSourceAttributes as {name: value}, setSourceAttributes with one event per source', async () => {
    const raised: DomainEvent[] = [];
    const ctx = {
      repo: fx.handle.repo,
      events: { emit: (e: DomainEvent) => void raised.push(e) },
      actor: { user: 'bob', session_id: 'sess-bob', client_type: 'REST_CLIENT' as const },
      now: FIXED_ISO,
    };
    await fx.ok('set_source_attribute', { source_id: s1, attribute_name: 'Keep', value: 'k' });
    await fx.ok('set_source_attribute', { source_id: s1, attribute_name: 'Drop', value: 2 });
    const r = fx.handle.transaction(() =>
      setSourceAttributes(ctx, s1, [
        { attribute_name: 'Age', value: '41', type: 'number' },
        { attribute_name: 'Age', value: 42 },
        { attribute_name: 'Keep', value: 'k' },
        { attribute_name: 'Drop', value: null },
        { attribute_name: 'When', value: '2024-01-31', type: 'date' },
      ]),
    );
    assert.equal(r.changed, 3, 'Age (set twice: counted once), Drop deleted, When; Keep unchanged');
    assert.equal(raised.length, 1);
    assert.equal(raised[0]!.event_type, 'source.attributes_set');
    assert.deepEqual(raised[0]!.payload, {
      source_id: s1,
      source_name: 'interview-01',
      attributes: [
        { attribute_name: 'Drop', type: null, value: null, old_type: 'number', old_value: 2 },
        { attribute_name: 'Age', type: 'number', value: 42, old_type: null, old_value: null },
        { attribute_name: 'When', type: 'date', value: '2024-01-31', old_type: null, old_value: null },
      ],
    });
    assert.deepEqual(listSourceAttributes(ctx, s1), { Age: 42, Keep: 'k', When: '2024-01-31' });
    assert.deepEqual(
      listSourceAttributesTyped(ctx, s1).map((a) => [a.name, a.owner]),
      [
        ['Age', 'bob'],
        ['Keep', 'alice'],
        ['When', 'bob'],
      ],
    );
    // a bad value anywhere writes nothing
    raised.length = 0;
    const before = rows(fx);
    assert.throws(
      () =>
        fx.handle.transaction(() =>
          setSourceAttributes(ctx, s1, [
            { attribute_name: 'Fine', value: 1 },
            { attribute_name: 'When', value: 'soon' },
          ]),
        ),
      (e: { code?: string; message?: string }) => e.code === 'INVALID_ARGUMENTS' && /When.* is of type date/.test(e.message ?? ''),
    );
    assert.deepEqual(rows(fx), before);
    assert.deepEqual(raised, []);
    assert.throws(
      () => listSourceAttributes(ctx, 999),
      (e: { code?: string }) => e.code === 'SOURCE_NOT_FOUND',
    );
  });

  it('an import plan sets PlannedSource.attributes on created and reused sources, one event per source', async () => {
    const plan = emptyPlan('test', path.join(fx.dir, 'x'));
    plan.sources.push({
      ref: 'a',
      name: 'interview-01',
      text: 'We grow beans 🌱.',
      memo: null,
      origin: null,
      folder: null,
      attributes: [{ name: 'Age', type: 'number', value: 30 }],
    });
    plan.sources.push({
      ref: 'b',
      name: 'new one',
      text: 'fresh',
      memo: null,
      origin: null,
      folder: null,
      attributes: [
        { name: 'Interviewed', type: 'date', value: '2023-11-02' },
        { name: 'Consent', type: 'boolean', value: true },
      ],
    });
    plan.sources.push({ ref: 'c', name: 'no attributes', text: 'plain', memo: null, origin: null, folder: null });
    const tool = defineTool({
      name: 'apply_test_plan',
      group: 'exchange',
      title: 'Apply a test plan',
      description: 'test only',
      input: z.object({}),
      effect: 'bulk',
      trust: 'bulk',
      run: (ctx) => applyImportPlan(ctx.domain, plan),
    });
    const pipeline = new ToolPipeline({ tools: [...ALL_TOOLS, tool], project: () => fx.handle, host: headlessHost, clock: fixedClock });
    const out = await pipeline.invoke('apply_test_plan', {}, ALICE);
    assert.ok(out.envelope.success, JSON.stringify(out.envelope));
    const report = out.envelope.data as Row;
    assert.equal(report.source_attributes_set, 3);
    assert.deepEqual([(report.created as Row).sources, (report.reused as Row).sources], [2, 1]);
    const list = await fx.ok<{ sources: Row[] }>('list_sources');
    const byName = new Map(list.sources.map((s) => [s.name, s.attributes]));
    assert.deepEqual(byName.get('interview-01'), { Age: 30 });
    assert.deepEqual(byName.get('new one'), { Consent: true, Interviewed: '2023-11-02' });
    assert.deepEqual(byName.get('no attributes'), {});
    assert.deepEqual(
      out.events.filter((e) => e.event_type === 'source.attributes_set').map((e) => (e.payload as Row).source_name),
      ['interview-01', 'new one'],
    );
    // applying the same plan again changes no attribute
    const again = await pipeline.invoke('apply_test_plan', {}, ALICE);
    assert.ok(again.envelope.success);
    assert.equal((again.envelope.data as Row).source_attributes_set, 0);
    assert.equal(storedEvents(fx.handle).filter((e) => e.event_type === 'source.attributes_set').length, 2);
  });
});

describe('migration 10: a project at schema 9 gains source_attributes', () => {
  it("opens with integrity_check ok, keeps its sources, and stores typed attributes with the table's checks", async () => {
    const dir = tmpDir('marginalia-migration10-');
    const file = path.join(dir, 'old.qda');
    const db = await databaseBeforeMigration(10);
    assert.equal(db.exec('PRAGMA user_version')[0]!.values[0]![0] as number, 9);
    db.run(
      `INSERT INTO sources(id, name, type, content, content_length, owner, created_at, updated_at) VALUES (7, 'old source', 'text', 'text é🌱', 6, 'bob', '2025-01-01T00:00:00.000Z', '2025-01-01T00:00:00.000Z')`,
    );
    fs.writeFileSync(file, db.export());
    db.close();
    const h = await openProjectHandle(file, { checkpointIdleMs: 0 });
    try {
      assert.deepEqual(h.store.all('PRAGMA integrity_check'), [{ integrity_check: 'ok' }]);
      assert.deepEqual(h.store.all('PRAGMA foreign_key_check'), []);
      assert.ok(h.store.get<{ user_version: number }>('PRAGMA user_version')!.user_version >= 10);
      assert.deepEqual(
        h.store.all<{ name: string }>("SELECT name FROM sqlite_master WHERE tbl_name = 'source_attributes' ORDER BY name").map((r) => r.name),
        ['source_attributes', 'source_attributes_name', 'sqlite_autoindex_source_attributes_1'],
      );
      assert.deepEqual(h.repo.listSourceAttributes(), []);
      const p = new ToolPipeline({ tools: ALL_TOOLS, project: () => h, host: headlessHost, clock: fixedClock });
      const out = await p.invoke('set_source_attribute', { source_id: 7, attribute_name: 'Wave', value: 2 }, ALICE);
      assert.ok(out.envelope.success, JSON.stringify(out.envelope));
      assert.deepEqual(
        h.repo.listSourceAttributes().map((a) => [a.source_id, a.name, a.type, a.value]),
        [[7, 'Wave', 'number', 2]],
      );
      // the table's checks: a value in the wrong column, a type it does not know, a source that does not exist
      for (const bad of [
        "INSERT INTO source_attributes(source_id, name, type, value_text, updated_at, owner) VALUES (7, 'x', 'number', 'one', 'now', 'bob')",
        "INSERT INTO source_attributes(source_id, name, type, value_text, updated_at, owner) VALUES (7, 'x', 'integer', 'one', 'now', 'bob')",
        "INSERT INTO source_attributes(source_id, name, type, value_boolean, updated_at, owner) VALUES (7, 'x', 'boolean', 2, 'now', 'bob')",
        "INSERT INTO source_attributes(source_id, name, type, value_text, updated_at, owner) VALUES (8, 'x', 'text', 'one', 'now', 'bob')",
      ]) {
        assert.throws(() => h.transaction(() => h.store.run(bad)), /constraint/i, bad);
      }
    } finally {
      await h.close();
    }
  });
});

/** `{name: value}` of a source as list_sources shows it, read from the repository. */
function listAttrs(fx: Fixture, sourceId: number): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  for (const a of fx.handle.repo.listSourceAttributes(sourceId)) o[a.name] = a.value;
  return o;
}
