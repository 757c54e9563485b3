/**
 * End-to-end test of document (source) attributes over HTTP against the real built CLI (`bin/marginalia.js
 * serve`; run `npm run build` first): `set_source_attribute` (issue 13 item 5) for the researcher and for an
 * agent (trust level notify by default: the call runs, answers 200, and the audit log records it as
 * notified), its errors with their HTTP statuses (SOURCE_NOT_FOUND 404, INVALID_ARGUMENTS 400 for a bad date,
 * a value not of the attribute's type, a bad name), `list_sources` and `read_source_content` returning the
 * typed attributes, the `source.attribute_set` events in GET /events/history, a report filtered by a
 * document attribute, and that the attributes survive a server restart. One server; the `it` blocks run in
 * order and build on each other.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { AS_AGENT, request, startServer, tmpDir, type ServerProcess } from '../helpers/serverProcess';
import { toolClient } from '../helpers/toolClient';

const UNKNOWN = 987654;

describe('set_source_attribute over HTTP (real CLI)', function () {
  this.timeout(120_000);
  let dir = '';
  let project = '';
  let server: ServerProcess | undefined;
  let base = '';
  const t = toolClient(() => base);
  const src: Record<string, number> = {};

  /** What a failing call must leave unchanged: the sources with their attributes. */
  const sources = () => t.ok('list_sources');

  before(async () => {
    dir = tmpDir('marginalia-source-attrs-e2e-');
    project = path.join(dir, 'study.qda');
    server = await startServer(project);
    base = server.base;
    src.ana = (await t.ok('add_text_source', { name: 'Interview Ana', content: 'I water the beds at dawn. The hose leaks.' })).source_id;
    src.ben = (await t.ok('add_text_source', { name: 'Interview Ben', content: 'Water is rationed in July.' })).source_id;
  });

  after(async () => {
    if (server) await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('the researcher sets typed attributes (number, boolean and text inferred; date when asked); each emits source.attribute_set', async () => {
    const since = await t.headSeq();
    const age = await t.ok('set_source_attribute', { source_id: src.ana, attribute_name: 'Age', value: 34 });
    assert.deepEqual(age, {
      source_id: src.ana,
      source_name: 'Interview Ana',
      attribute_name: 'Age',
      type: 'number',
      value: 34,
      old_type: null,
      old_value: null,
      changed: true,
      inferred: true,
    });
    assert.equal((await t.ok('set_source_attribute', { source_id: src.ana, attribute_name: 'Consent', value: true })).type, 'boolean');
    assert.equal((await t.ok('set_source_attribute', { source_id: src.ana, attribute_name: 'Site', value: 'Lagos' })).type, 'text');
    const date = await t.ok('set_source_attribute', { source_id: src.ana, attribute_name: 'Interviewed', value: '2024-05-01', type: 'date' });
    assert.deepEqual([date.type, date.value, date.inferred], ['date', '2024-05-01', false]);
    await t.ok('set_source_attribute', { source_id: src.ben, attribute_name: 'Site', value: 'Nairobi' });
    // the same value again: no change, no event
    assert.equal((await t.ok('set_source_attribute', { source_id: src.ana, attribute_name: 'Age', value: 34 })).changed, false);
    // an existing attribute keeps its type: "35" becomes the number 35
    const again = await t.ok('set_source_attribute', { source_id: src.ana, attribute_name: 'Age', value: '35' });
    assert.deepEqual([again.type, again.value, again.old_value], ['number', 35, 34]);

    const events = await t.events(since, 'source.*');
    assert.deepEqual(
      events.map((e) => [e.event_type, e.aggregate_type, e.aggregate_id, e.payload.attribute_name, e.payload.type, e.payload.value, e.payload.old_value]),
      [
        ['source.attribute_set', 'source', String(src.ana), 'Age', 'number', 34, null],
        ['source.attribute_set', 'source', String(src.ana), 'Consent', 'boolean', true, null],
        ['source.attribute_set', 'source', String(src.ana), 'Site', 'text', 'Lagos', null],
        ['source.attribute_set', 'source', String(src.ana), 'Interviewed', 'date', '2024-05-01', null],
        ['source.attribute_set', 'source', String(src.ben), 'Site', 'text', 'Nairobi', null],
        ['source.attribute_set', 'source', String(src.ana), 'Age', 'number', 35, 34],
      ],
    );
    assert.deepEqual(events[0].payload, {
      source_id: src.ana,
      source_name: 'Interview Ana',
      attribute_name: 'Age',
      type: 'number',
      value: 34,
      old_type: null,
      old_value: null,
    });
  });

  it('list_sources and read_source_content return attributes {name: value} with their types', async () => {
    const list = await t.ok('list_sources');
    const byName = new Map(list.sources.map((s: any) => [s.name, s]));
    const ana: any = byName.get('Interview Ana');
    assert.deepEqual(ana.attributes, { Age: 35, Consent: true, Interviewed: '2024-05-01', Site: 'Lagos' });
    assert.deepEqual(ana.attribute_types, { Age: 'number', Consent: 'boolean', Interviewed: 'date', Site: 'text' });
    assert.deepEqual((byName.get('Interview Ben') as any).attributes, { Site: 'Nairobi' });
    const page = await t.ok('read_source_content', { source_id: src.ben });
    assert.deepEqual([page.attributes, page.attribute_types], [{ Site: 'Nairobi' }, { Site: 'text' }]);
  });

  it('errors: unknown source 404, a bad date, a value not of the type and a bad name 400; none writes anything', async () => {
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [{ source_id: UNKNOWN, attribute_name: 'Age', value: 1 }, 'SOURCE_NOT_FOUND', /987654/],
      [{ source_id: src.ana, attribute_name: 'Recorded', value: '2024-13-01', type: 'date' }, 'INVALID_ARGUMENTS', /ISO 8601/],
      [{ source_id: src.ana, attribute_name: 'Recorded', value: '1 May 2024', type: 'date' }, 'INVALID_ARGUMENTS', /ISO 8601/],
      [{ source_id: src.ana, attribute_name: 'Age', value: 'thirty' }, 'INVALID_ARGUMENTS', /of type number/],
      [{ source_id: src.ana, attribute_name: 'Consent', value: 'maybe' }, 'INVALID_ARGUMENTS', /not a boolean/],
      [{ source_id: src.ana, attribute_name: 'Age', value: 3, type: 'integer' }, 'INVALID_ARGUMENTS', /type/],
      [{ source_id: src.ana, attribute_name: '', value: 3 }, 'INVALID_ARGUMENTS', /attribute_name/],
      [{ source_id: src.ana, attribute_name: 'Age', value: [3] }, 'INVALID_ARGUMENTS', /value/],
    ];
    for (const [args, code, message] of cases) {
      await t.writesNothing(
        sources,
        async () => {
          const f = await t.fails('set_source_attribute', args, code);
          assert.match(f.error, message, JSON.stringify(args));
        },
        `set_source_attribute ${JSON.stringify(args)}`,
      );
    }
  });

  it("an agent's set_source_attribute runs without approval (HTTP 200) and is audited as notified at trust level notify", async () => {
    const listing = await request(base, 'GET', '/tools');
    assert.equal(listing.status, 200);
    const tool = (listing.body.tools as any[]).find((x) => x.name === 'set_source_attribute');
    assert.ok(tool, 'GET /tools lists set_source_attribute');
    assert.deepEqual([tool.effect, tool.trust_category], ['modify', 'apply_code']);

    const since = await t.headSeq();
    const r = await t.ok('set_source_attribute', { source_id: src.ben, attribute_name: 'Wave', value: 2 }, AS_AGENT);
    assert.deepEqual([r.type, r.value, r.changed], ['number', 2, true]);
    const events = await t.events(since, 'source.*');
    assert.equal(events.length, 1);
    assert.equal(events[0].event_type, 'source.attribute_set');
    assert.notEqual(events[0].caused_by.client_type, 'LOCAL_UI');
    const audit = fs
      .readFileSync(path.join(dir, '.marginalia', 'audit.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    const agentLines = audit.filter((l) => l.tool === 'set_source_attribute' && l.decision !== 'failed' && l.session_id === events[0].caused_by.session_id);
    assert.equal(agentLines.length, 1, JSON.stringify(audit.filter((l) => l.tool === 'set_source_attribute')));
    assert.deepEqual([agentLines[0].decision, agentLines[0].trust_level], ['notified', 'notify']);
    // the researcher's own calls are not held or notified
    assert.ok(
      audit.filter((l) => l.tool === 'set_source_attribute' && l.session_id !== events[0].caused_by.session_id).every((l) => l.decision !== 'notified'),
    );
  });

  it('value null deletes an attribute; a report filtered by a document attribute counts only those sources', async () => {
    const since = await t.headSeq();
    const del = await t.ok('set_source_attribute', { source_id: src.ana, attribute_name: 'Consent', value: null });
    assert.deepEqual([del.type, del.value, del.old_type, del.old_value, del.changed], [null, null, 'boolean', true, true]);
    const [e] = await t.events(since, 'source.*');
    assert.deepEqual([e.payload.type, e.payload.value, e.payload.old_value], [null, null, true]);
    const water = (await t.ok('create_code', { name: 'Water', color: '#4E79A7' })).code_id;
    await t.ok('apply_code', { code_id: water, source_id: src.ana, start_pos: 2, end_pos: 7 });
    await t.ok('apply_code', { code_id: water, source_id: src.ben, start_pos: 0, end_pos: 5 });
    const lagos = await t.ok('generate_frequency_report', { filters: { source_attributes: { Site: 'Lagos' } } });
    assert.deepEqual(
      lagos.result.codes.map((c: any) => [c.name, c.segment_count, c.source_count]),
      [['Water', 1, 1]],
    );
    assert.deepEqual(lagos.result.filters, { source_attributes: { Site: 'Lagos' }, source_ids: [src.ana] });
    const wave = await t.ok('generate_frequency_report', { filters: { source_attributes: { Wave: '2' } } });
    assert.deepEqual(
      wave.result.codes.map((c: any) => c.segment_count),
      [0],
      'the text "2" is not the number 2',
    );
  });

  it('the attributes survive a restart of the server', async () => {
    const before = await t.ok('list_sources');
    await server!.stop();
    server = await startServer(project);
    base = server.base;
    assert.deepEqual(await t.ok('list_sources'), before);
    assert.deepEqual((await t.ok('read_source_content', { source_id: src.ana })).attributes, { Age: 35, Interviewed: '2024-05-01', Site: 'Lagos' });
  });

  it('has answered every error code it set out to', () => {
    for (const c of ['SOURCE_NOT_FOUND', 'INVALID_ARGUMENTS']) assert.ok(t.seen.has(c), c);
  });
});
