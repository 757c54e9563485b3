/**
 * Unit tests for the event log's stored form (migration 9, src/store/eventRows.ts): what a row holds, that
 * every envelope reads back as it was emitted, and that a project written before migration 9 keeps its
 * events, their ids and their sequence numbers.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createPipeline, headlessHost, openProjectHandle } from '../../../src/cli/compose';
import { silentLogger } from '../../../src/core/log';
import { deriveGuid } from '../../../src/domain/exchangeIds';
import { PAYLOAD_SHAPES, payloadFromStored, payloadToStored, timestampToStored, uuidFromStored, uuidParams } from '../../../src/store/eventRows';
import { tmpDir } from '../../helpers/serverProcess';
import { ALICE, databaseBeforeMigration, FIXED_ISO, FIXED_MS, openFixture, storedEvents, type Fixture } from '../domain/projectFixture';

const RED = '#ff0000';
const UUID_V5 = /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('store: the event log (migration 9)', () => {
  let fx: Fixture;
  beforeEach(async () => {
    fx = await openFixture();
  });
  afterEach(async () => {
    await fx.close();
  });

  it('stores no event id, the timestamp as milliseconds and UUIDs as 16 bytes; reads back the emitted envelopes', async () => {
    const uuidSession = { ...ALICE, session_id: '3f1c2b9e-8d4a-4c6f-9a1b-2c3d4e5f6a7b' };
    const calls = [
      await fx.call('create_code', { name: 'A', color: RED }),
      await fx.call('create_code', { name: 'B', color: RED }, { ...uuidSession, correlation_id: 'Caller-Chosen id 7' }),
      await fx.call('create_code', { name: 'C', color: RED }, { ...uuidSession, correlation_id: '0A1B2C3D-4E5F-4A6B-8C7D-9E0F1A2B3C4D' }),
    ];
    const emitted = calls.flatMap((c) => c.events);
    assert.equal(emitted.length, 3);
    const raw = fx.handle.store.all<Record<string, unknown>>('SELECT * FROM events ORDER BY seq');
    assert.equal(raw.length, 3);
    for (const r of raw) {
      assert.equal(r.event_id, null, 'the id is derived, not stored');
      assert.equal(r.timestamp, FIXED_MS);
    }
    // ALICE's session id is no UUID: text; a UUID session is its 16 bytes
    assert.equal(raw[0]!.session_id, 'sess-alice');
    assert.ok(raw[1]!.session_id instanceof Uint8Array && raw[1]!.session_id.length === 16);
    assert.equal(Buffer.from(raw[1]!.session_id).toString('hex'), '3f1c2b9e8d4a4c6f9a1b2c3d4e5f6a7b');
    // the pipeline's own correlation id is a UUID (blob); a caller's text stays text, upper case included
    assert.ok(raw[0]!.correlation_id instanceof Uint8Array);
    assert.equal(raw[1]!.correlation_id, 'Caller-Chosen id 7');
    assert.equal(raw[2]!.correlation_id, '0A1B2C3D-4E5F-4A6B-8C7D-9E0F1A2B3C4D');

    const guid = fx.handle.repo.projectGuid();
    emitted.forEach((e, i) => {
      assert.match(e.event_id, UUID_V5);
      assert.equal(e.event_id, deriveGuid(guid, 'event', raw[i]!.seq as number), 'the id is the UUID v5 of the project GUID and event:<seq>');
      assert.equal(e.timestamp, FIXED_ISO);
    });
    assert.deepEqual(fx.handle.repo.listEventsSince(0, 10), emitted);
    assert.equal(emitted[1]!.caused_by.session_id, uuidSession.session_id);
    assert.deepEqual(fx.handle.repo.listEventsByCorrelation('Caller-Chosen id 7'), [emitted[1]]);
    assert.deepEqual(fx.handle.repo.listEventsByCorrelation(emitted[0]!.metadata.correlation_id), [emitted[0]]);
    assert.deepEqual(fx.handle.repo.listEventsByCorrelation('0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d'), [], 'a caller id in another case is another id');
  });

  it('a journal replay stores the same rows: the ids and envelopes survive a crash', async () => {
    await fx.ok('create_code', { name: 'A', color: RED });
    await fx.ok('rename_code', { code_id: 1, new_name: 'A – renamed 🌱' });
    const before = storedEvents(fx.handle);
    assert.deepEqual(
      before.map((e) => e.event_type),
      ['coding.code_created', 'coding.code_renamed'],
    );
    // copy the file and its journal while the store is open (no checkpoint since): the state a crash leaves
    const dir = tmpDir('marginalia-events-');
    const copy = path.join(dir, 'crashed.qda');
    fs.copyFileSync(fx.handle.path, copy);
    fs.copyFileSync(`${fx.handle.path}-journal`, `${copy}-journal`);
    assert.ok(fs.statSync(`${copy}-journal`).size > 0, 'the events are in the journal, not yet in the file');
    const h = await openProjectHandle(copy, { checkpointIdleMs: 0 });
    try {
      const guidCopy = h.repo.projectGuid();
      assert.equal(guidCopy, fx.handle.repo.projectGuid());
      assert.deepEqual(storedEvents(h), before);
    } finally {
      await h.close();
    }
  });

  it('stores the frequent payloads as arrays of values and reads them back as the objects emitted', async () => {
    const code = (await fx.ok<{ code_id: number }>('create_code', { name: 'Trust "quoted" é🌱', color: RED, memo: 'a\nmemo' })).code_id;
    const source = (await fx.ok<{ source_id: number }>('add_text_source', { name: 'S', content: 'Gardens 🌱 and trust' })).source_id;
    const seg = await fx.ok<{ segment_id: number }>('apply_code', { code_id: code, source_id: source, start_position: 8, end_position: 19 });
    await fx.ok('update_memo', { source_id: source, memo: 'why 🌱' });
    await fx.ok('remove_code', { segment_id: seg.segment_id });
    const events = storedEvents(fx.handle);
    const raw = new Map(fx.handle.store.all<{ seq: number; payload: string }>('SELECT seq, payload FROM events').map((r) => [r.seq, r.payload]));
    const byType = (t: string) => events.find((e) => e.event_type === t)!;
    for (const [type, shape] of [
      ['coding.code_created', 1],
      ['coding.segment_coded', 0],
      ['source.updated', 2],
      // shape 3 ({segment_id, code_id, source_id}) is how it was stored before undo; since then it carries the removed coding (shape 5)
      ['coding.segment_uncoded', 5],
    ] as const) {
      const e = byType(type);
      const stored = JSON.parse(raw.get(e.seq)!);
      assert.ok(Array.isArray(stored), `${type} is stored as an array`);
      assert.equal(stored[0], shape);
      assert.deepEqual(Object.keys(e.payload), PAYLOAD_SHAPES[shape], `${type} reads back with its keys in order`);
    }
    assert.deepEqual(byType('coding.segment_coded').payload, {
      segment_id: seg.segment_id,
      code_id: code,
      source_id: source,
      start: 8,
      end: 19,
      text: '🌱 and trust',
    });
    assert.deepEqual(byType('coding.code_created').payload, {
      code_id: code,
      name: 'Trust "quoted" é🌱',
      color: '#FF0000',
      memo: 'a\nmemo',
      category_id: null,
    });
    assert.deepEqual(byType('source.updated').payload, { source_id: source, field: 'memo', old_value: null, new_value: 'why 🌱' });
    // source.imported has no shape: stored as its object
    assert.ok(raw.get(byType('source.imported').seq)!.startsWith('{'));
  });

  it('payloadToStored keeps an object for other keys, another key order or an undefined value; an unknown shape reads as its values', () => {
    const cases: Record<string, unknown>[] = [
      { segment_id: 1, code_id: 2, source_id: 3 },
      { code_id: 2, segment_id: 1, source_id: 3 },
      { segment_id: 1, code_id: 2, source_id: 3, reason: 'text deleted' },
      { segment_id: 1, code_id: undefined, source_id: 3 },
      { nested: { a: [1, { b: null }] } },
      {},
    ];
    for (const p of cases) {
      const text = payloadToStored(p);
      assert.deepEqual(payloadFromStored(text), JSON.parse(JSON.stringify(p)));
      assert.deepEqual(Object.keys(payloadFromStored(text)), Object.keys(JSON.parse(JSON.stringify(p))));
    }
    assert.equal(payloadToStored(cases[0]!), '[3,1,2,3]');
    assert.ok(payloadToStored(cases[1]!).startsWith('{'));
    assert.deepEqual(payloadFromStored('[999,"x",1]'), { payload_shape: 999, values: ['x', 1] });
  });

  it('timestampToStored keeps any text that is not exactly an instant of Date#toISOString', () => {
    assert.equal(timestampToStored('2026-01-02T03:04:05.678Z'), FIXED_MS);
    for (const text of ['2026-01-02T03:04:05Z', '2026-01-02T03:04:05.678+00:00', '2026-02-30T00:00:00.000Z', 'yesterday', '']) {
      assert.equal(timestampToStored(text), text);
    }
    assert.deepEqual(uuidParams(null), [null, null]);
    assert.deepEqual(uuidParams('3f1c2b9e-8d4a-4c6f-9a1b-2c3d4e5f6a7b'), ['3f1c2b9e8d4a4c6f9a1b2c3d4e5f6a7b', null]);
    assert.deepEqual(uuidParams('{3f1c2b9e-8d4a-4c6f-9a1b-2c3d4e5f6a7b}'), [null, '{3f1c2b9e-8d4a-4c6f-9a1b-2c3d4e5f6a7b}']);
    assert.equal(uuidFromStored(Buffer.from('3f1c2b9e8d4a4c6f9a1b2c3d4e5f6a7b', 'hex')), '3f1c2b9e-8d4a-4c6f-9a1b-2c3d4e5f6a7b');
    assert.equal(uuidFromStored(null), null);
  });

  it('migrates a project written before it: every event reads back as stored, ids kept, no sequence number given twice', async () => {
    const dir = tmpDir('marginalia-events-');
    const file = path.join(dir, 'old.qda');
    const db = await databaseBeforeMigration(9);
    const old = [
      // seq, event_id, timestamp, session_id, correlation_id
      [1, '11111111-2222-4333-8444-555555555555', '2025-12-31T23:59:59.999Z', '3f1c2b9e-8d4a-4c6f-9a1b-2c3d4e5f6a7b', '9e8d7c6b-5a49-4837-a625-140312f0e1d2'],
      [2, 'not-a-uuid-event', '2026-01-02T03:04:05Z', 'sess-old', 'Corr 😀'],
      [3, 'AAAAAAAA-BBBB-4CCC-8DDD-EEEEEEEEEEEE', '2026-02-30T00:00:00.000Z', null, null],
    ] as const;
    for (const [seq, id, ts, session, corr] of old) {
      db.run(
        `INSERT INTO events(seq, event_id, event_type, timestamp, aggregate_type, aggregate_id, session_id, client_type, user, correlation_id, payload)
         VALUES (?, ?, 'coding.code_created', ?, 'code', ?, ?, 'REST_CLIENT', 'bob', ?, ?)`,
        [seq, id, ts, String(seq), session, corr, JSON.stringify({ code_id: seq, name: `Old ${seq} é🌱` })],
      );
    }
    // events 4-9 were given out once (a rolled-back tail): the sequence must not hand them out again
    db.run("UPDATE sqlite_sequence SET seq = 9 WHERE name = 'events'");
    fs.writeFileSync(file, db.export());
    db.close();

    const h = await openProjectHandle(file, { checkpointIdleMs: 0 });
    try {
      assert.deepEqual(h.store.all('PRAGMA integrity_check'), [{ integrity_check: 'ok' }]);
      const read = storedEvents(h);
      assert.deepEqual(
        read.map((e) => [e.seq, e.event_id, e.timestamp, e.session_id, e.correlation_id, e.payload.name]),
        [
          [
            1,
            '11111111-2222-4333-8444-555555555555',
            '2025-12-31T23:59:59.999Z',
            '3f1c2b9e-8d4a-4c6f-9a1b-2c3d4e5f6a7b',
            '9e8d7c6b-5a49-4837-a625-140312f0e1d2',
            'Old 1 é🌱',
          ],
          [2, 'not-a-uuid-event', '2026-01-02T03:04:05Z', 'sess-old', 'Corr 😀', 'Old 2 é🌱'],
          [3, 'AAAAAAAA-BBBB-4CCC-8DDD-EEEEEEEEEEEE', '2026-02-30T00:00:00.000Z', '', '', 'Old 3 é🌱'],
        ],
      );
      const raw = h.store.all<Record<string, unknown>>('SELECT seq, timestamp, session_id, correlation_id FROM events ORDER BY seq');
      assert.equal(raw[0]!.timestamp, Date.UTC(2025, 11, 31, 23, 59, 59, 999), 'a canonical timestamp became milliseconds');
      assert.ok(raw[0]!.session_id instanceof Uint8Array && raw[0]!.correlation_id instanceof Uint8Array, 'canonical UUIDs became 16 bytes');
      assert.equal(raw[1]!.timestamp, '2026-01-02T03:04:05Z');
      assert.equal(raw[2]!.timestamp, '2026-02-30T00:00:00.000Z', 'a date that does not exist stays text');
      assert.deepEqual(
        h.repo.listEventsByCorrelation('9e8d7c6b-5a49-4837-a625-140312f0e1d2').map((e) => e.metadata.sequence_number),
        [1],
      );
      assert.deepEqual(
        h.repo.listEventsByCorrelation('Corr 😀').map((e) => e.metadata.sequence_number),
        [2],
      );

      const p = createPipeline({ project: () => h, host: headlessHost, logger: silentLogger });
      const next = (await p.invoke('create_code', { name: 'New', color: RED }, ALICE)).events[0]!;
      assert.equal(next.metadata.sequence_number, 10);
      assert.equal(next.event_id, deriveGuid(h.repo.projectGuid(), 'event', 10));
      assert.deepEqual(storedEvents(h).at(-1)!.event_id, next.event_id);
    } finally {
      await h.close();
    }
  });
});
