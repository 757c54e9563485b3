/**
 * Domain events (agent-context spec, section 6): every mutation emits the right dotted event types with the
 * spec's payload fields, in the spec's envelope, with increasing sequence numbers, one correlation id per
 * call, persisted in the `events` table in the same transaction. A failed call emits nothing and writes
 * nothing.
 */
import assert from 'node:assert/strict';
import type { Caller, InvokeOutcome } from '../../../src/agent/pipeline';
import { createPipeline, headlessHost, openProjectHandle } from '../../../src/cli/compose';
import { silentLogger } from '../../../src/core/log';
import type { EventRecord } from '../../../src/domain/events';
import { ALICE, FIXED_ISO, openFixture, snapshot, storedEvents, type Fixture } from './projectFixture';

const BLUE = '#4E79A7';
const RED = '#E15759';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The spec's payload fields per event type (agent-context spec, section 6, "Event types and payloads"). */
const SPEC_PAYLOAD: Record<string, string[]> = {
  'coding.code_created': ['code_id', 'name', 'color', 'memo', 'category_id'],
  'coding.code_renamed': ['code_id', 'old_name', 'new_name'],
  'coding.code_deleted': ['code_id', 'name', 'segment_count'],
  'coding.codes_merged': ['source_code_id', 'target_code_id', 'segments_moved'],
  'coding.segment_coded': ['segment_id', 'code_id', 'source_id', 'start', 'end', 'text'],
  'coding.segment_uncoded': ['segment_id', 'code_id', 'source_id'],
  'coding.category_created': ['category_id', 'name', 'parent_id'],
  'source.imported': ['source_id', 'name', 'type', 'size'],
  'source.deleted': ['source_id', 'name'],
};

/** The one event of a successful call, after checking its type and the spec payload fields' values. */
function single(out: InvokeOutcome, type: string, payload: Record<string, unknown>): EventRecord {
  assert.ok(out.envelope.success, JSON.stringify(out.envelope));
  assert.equal(out.events.length, 1, `${out.tool} should emit exactly one event, got ${out.events.map((e) => e.event_type).join(', ')}`);
  const e = out.events[0]!;
  assert.equal(e.event_type, type);
  checkPayload(e, payload);
  return e;
}

/** Checks that the event carries every spec field of its type and that the given fields have these values. */
function checkPayload(e: EventRecord, payload: Record<string, unknown>): void {
  for (const field of SPEC_PAYLOAD[e.event_type] ?? []) assert.ok(field in e.payload, `${e.event_type} payload lacks ${field}: ${JSON.stringify(e.payload)}`);
  for (const [k, v] of Object.entries(payload)) assert.deepEqual(e.payload[k], v, `${e.event_type}.payload.${k}`);
}

function data<T = any>(out: InvokeOutcome): T {
  assert.ok(out.envelope.success, JSON.stringify(out.envelope));
  return out.envelope.data as T;
}

describe('domain events through the pipeline', () => {
  let fx: Fixture;
  beforeEach(async () => {
    fx = await openFixture();
  });
  afterEach(async () => {
    await fx.close();
  });

  it('each mutation emits its dotted event type with the spec payload fields', async () => {
    // categories
    let out = await fx.call('create_category', { name: 'Feelings' });
    const feelings = data(out).category_id as number;
    single(out, 'coding.category_created', { category_id: feelings, name: 'Feelings', parent_id: null });
    out = await fx.call('create_category', { name: 'Anger', parent_id: feelings });
    const anger = data(out).category_id as number;
    single(out, 'coding.category_created', { category_id: anger, name: 'Anger', parent_id: feelings });

    // codes
    out = await fx.call('create_code', { name: '  Trust ', color: BLUE, memo: 'reliance', category_id: feelings });
    const trust = data(out).code_id as number;
    let e = single(out, 'coding.code_created', { code_id: trust, name: 'Trust', color: BLUE, memo: 'reliance', category_id: feelings });
    assert.equal(e.aggregate_type, 'code');
    assert.equal(e.aggregate_id, String(trust));
    out = await fx.call('create_code', { name: 'Fear', color: RED });
    const fear = data(out).code_id as number;
    single(out, 'coding.code_created', { code_id: fear, name: 'Fear', color: RED, memo: null, category_id: null });

    out = await fx.call('rename_code', { code_id: fear, new_name: 'Worry' });
    single(out, 'coding.code_renamed', { code_id: fear, old_name: 'Fear', new_name: 'Worry' });

    // sources
    out = await fx.call('add_text_source', { name: 'Interview', content: 'I trust my neighbours \u{1F331}' });
    const src = data(out).source_id as number;
    e = single(out, 'source.imported', { source_id: src, name: 'Interview', type: 'text' });
    assert.equal(typeof e.payload.size, 'number');
    assert.ok((e.payload.size as number) > 0);

    // segments: one event per created segment, in operation order
    out = await fx.call('batch_apply_codes', {
      operations: [
        { code_id: trust, source_id: src, start_position: 2, end_position: 7 },
        { code_id: fear, source_id: src, start_position: 22, end_position: 23 },
        { code_id: fear, source_id: src, start_position: 0, end_position: 1 },
      ],
    });
    const results = data(out).results as { segment_id: number }[];
    assert.deepEqual(
      out.events.map((x) => x.event_type),
      ['coding.segment_coded', 'coding.segment_coded', 'coding.segment_coded'],
    );
    checkPayload(out.events[0]!, { segment_id: results[0]!.segment_id, code_id: trust, source_id: src, start: 2, end: 7, text: 'trust' });
    checkPayload(out.events[1]!, { segment_id: results[1]!.segment_id, code_id: fear, source_id: src, start: 22, end: 23, text: '\u{1F331}' });
    checkPayload(out.events[2]!, { segment_id: results[2]!.segment_id, code_id: fear, source_id: src, start: 0, end: 1, text: 'I' });
    assert.equal(out.events[0]!.aggregate_type, 'segment');
    assert.equal(out.events[0]!.aggregate_id, String(results[0]!.segment_id));

    out = await fx.call('delete_segment', { segment_id: results[2]!.segment_id });
    single(out, 'coding.segment_uncoded', { segment_id: results[2]!.segment_id, code_id: fear, source_id: src });

    // merge: Worry (1 segment) into Trust
    out = await fx.call('merge_codes', { source_code_id: fear, target_code_id: trust });
    single(out, 'coding.codes_merged', { source_code_id: fear, target_code_id: trust, segments_moved: 1 });

    // delete with segments
    out = await fx.call('delete_code', { code_id: trust, delete_segments: true });
    single(out, 'coding.code_deleted', { code_id: trust, name: 'Trust', segment_count: 2 });

    // source deletion (a preview emits nothing)
    out = await fx.call('remove_source', { source_id: src });
    assert.deepEqual(out.events, []);
    out = await fx.call('remove_source', { source_id: src, confirm: true });
    single(out, 'source.deleted', { source_id: src, name: 'Interview' });
  });

  it("Marginalia's further mutations emit dotted events too (memo, category move, folders, source move, hints)", async () => {
    const code = data(await fx.call('create_code', { name: 'C', color: RED })).code_id as number;
    const cat = data(await fx.call('create_category', { name: 'K' })).category_id as number;
    const src = data(await fx.call('add_text_source', { name: 'S', content: 'x' })).source_id as number;
    const types = async (name: string, args: unknown) => (await fx.call(name, args)).events.map((x) => x.event_type);
    assert.deepEqual(await types('update_code_memo', { code_id: code, memo: 'm' }), ['coding.code_updated']);
    assert.deepEqual(await types('move_code_to_category', { code_id: code, category_id: cat }), ['coding.code_moved']);
    const folderOut = await fx.call('create_folder', { name: 'F' });
    assert.deepEqual(
      folderOut.events.map((x) => x.event_type),
      ['source.folder_created'],
    );
    const folder = data(folderOut).folder_id as number;
    assert.deepEqual(await types('rename_folder', { folder_id: folder, new_name: 'G' }), ['source.folder_renamed']);
    assert.deepEqual(await types('move_source_to_folder', { source_id: src, folder_id: folder }), ['source.moved']);
    assert.deepEqual(await types('move_source_to_folder', { source_id: src }), ['source.moved']);
    assert.deepEqual(await types('delete_folder', { folder_id: folder }), ['source.folder_deleted']);
    assert.deepEqual(await types('suggest_source_metadata', { source_id: src, language: 'en' }), ['source.metadata_suggested']);
    for (const e of storedEvents(fx.handle)) assert.match(e.event_type, /^[a-z]+\.[a-z_]+$/);
  });

  it('fills the envelope: uuid event ids, ISO timestamp, caused_by from the caller, increasing sequence numbers, one correlation id per call', async () => {
    const bob: Caller = { session_id: 'sess-bob', client_type: 'ASSISTANT_B_CLI', client_name: 'b', user: 'bob' };
    const calls: InvokeOutcome[] = [];
    calls.push(await fx.call('create_code', { name: 'A', color: RED }));
    calls.push(await fx.call('create_code', { name: 'B', color: RED }, bob));
    calls.push(await fx.call('add_text_source', { name: 'S', content: 'hello world' }));
    const a = data(calls[0]!).code_id;
    const s = data(calls[2]!).source_id;
    calls.push(
      await fx.call(
        'batch_apply_codes',
        {
          operations: [
            { code_id: a, source_id: s, start_position: 0, end_position: 5 },
            { code_id: a, source_id: s, start_position: 6, end_position: 11 },
          ],
        },
        bob,
      ),
    );
    calls.push(await fx.call('create_code', { name: 'C', color: RED }, { ...ALICE, correlation_id: 'corr-fixed-1' }));

    const all = calls.flatMap((c) => c.events);
    assert.equal(all.length, 6);
    for (let i = 1; i < all.length; i++) {
      assert.ok(all[i]!.metadata.sequence_number > all[i - 1]!.metadata.sequence_number, 'sequence numbers increase');
    }
    for (const e of all) {
      assert.match(e.event_id, UUID);
      assert.equal(e.timestamp, FIXED_ISO);
      assert.ok(Number.isInteger(e.metadata.sequence_number));
    }
    assert.equal(new Set(all.map((e) => e.event_id)).size, all.length, 'event ids are unique');
    // a caller that is neither the local UI nor the reviewer token is an agent (issue 14 item 1), named by its client
    assert.deepEqual(calls[0]!.events[0]!.caused_by, {
      session_id: 'sess-alice',
      client_type: 'REST_CLIENT',
      user: 'alice',
      role: 'agent',
      coder: 'unit-test',
      client: 'unit-test',
    });
    assert.deepEqual(calls[1]!.events[0]!.caused_by, {
      session_id: 'sess-bob',
      client_type: 'ASSISTANT_B_CLI',
      user: 'bob',
      role: 'agent',
      coder: 'b',
      client: 'b',
    });

    // one correlation id per call: shared inside the batch, distinct between calls, the caller's when given
    const batch = calls[3]!.events;
    assert.equal(batch.length, 2);
    assert.equal(batch[0]!.metadata.correlation_id, batch[1]!.metadata.correlation_id);
    const perCall = calls.map((c) => c.events[0]!.metadata.correlation_id);
    assert.equal(new Set(perCall).size, calls.length);
    assert.equal(calls[4]!.events[0]!.metadata.correlation_id, 'corr-fixed-1');

    // persisted: the events table holds exactly these, in the same order, with the same values
    const rows = storedEvents(fx.handle);
    assert.deepEqual(
      rows.map((r) => ({
        event_id: r.event_id,
        event_type: r.event_type,
        timestamp: r.timestamp,
        aggregate_type: r.aggregate_type,
        aggregate_id: r.aggregate_id,
        caused_by: { session_id: r.session_id, client_type: r.client_type, user: r.user, role: r.role, coder: r.coder, client: r.client },
        payload: r.payload,
        metadata: { correlation_id: r.correlation_id, sequence_number: r.seq },
      })),
      all,
    );
  });

  it('sequence numbers keep increasing after a reopen of the project', async () => {
    const first = await fx.call('create_code', { name: 'A', color: RED });
    const seq = first.events[0]!.metadata.sequence_number;
    await fx.handle.close();
    const h = await openProjectHandle(fx.handle.path, { checkpointIdleMs: 0 });
    try {
      const p = createPipeline({ project: () => h, host: headlessHost, logger: silentLogger });
      const next = await p.invoke('create_code', { name: 'B', color: RED }, ALICE);
      assert.ok(next.events[0]!.metadata.sequence_number > seq);
      assert.equal(h.store.all('SELECT * FROM events').length, 2);
    } finally {
      await h.close();
    }
  });

  it('read tools emit no events and write nothing', async () => {
    const c = data(await fx.call('create_code', { name: 'A', color: RED })).code_id;
    const s = data(await fx.call('add_text_source', { name: 'S', content: 'hello' })).source_id;
    const journal = fx.handle.store.journalSeq;
    const reads: [string, unknown][] = [
      ['list_codes', {}],
      ['get_code', { code_id: c }],
      ['list_segments_for_source', { source_id: s }],
      ['get_project_context', {}],
      ['list_sources', {}],
      ['read_source_content', { source_id: s }],
      ['navigate_to_segment', { source_id: s, start_pos: 0, end_pos: 2 }],
      ['list_folders', {}],
      ['list_categories', {}],
      ['open_project', { path: '/tmp/x.qda' }],
      ['close_project', {}],
    ];
    for (const [name, args] of reads) {
      const out = await fx.call(name, args);
      assert.ok(out.envelope.success, `${name}: ${JSON.stringify(out.envelope)}`);
      assert.deepEqual(out.events, [], name);
    }
    assert.equal(fx.handle.store.journalSeq, journal);
    assert.equal(storedEvents(fx.handle).length, 2);
  });

  it('a failed call emits no events and writes nothing', async () => {
    const a = data(await fx.call('create_code', { name: 'A', color: RED, memo: 'memo' })).code_id as number;
    const b = data(await fx.call('create_code', { name: 'B', color: RED })).code_id as number;
    const cat = data(await fx.call('create_category', { name: 'K' })).category_id as number;
    const s = data(await fx.call('add_text_source', { name: 'S', content: 'hello world' })).source_id as number;
    const f = data(await fx.call('create_folder', { name: 'F' })).folder_id as number;
    await fx.call('create_folder', { name: 'G' });
    await fx.call('move_source_to_folder', { source_id: s, folder_id: f });
    const seg = data(await fx.call('batch_apply_codes', { operations: [{ code_id: a, source_id: s, start_position: 0, end_position: 5 }] })).results[0]
      .segment_id as number;

    let heard = 0;
    const sub = fx.pipeline.onEvents(() => heard++);
    const before = await snapshot(fx);
    const failing: [string, unknown, string][] = [
      ['create_code', { name: 'a', color: BLUE }, 'DUPLICATE_NAME'],
      ['create_code', { name: 'Z', color: BLUE, category_id: 999 }, 'CATEGORY_NOT_FOUND'],
      ['create_code', { name: 'Z', color: 'blue' }, 'INVALID_ARGUMENTS'],
      ['rename_code', { code_id: b, new_name: ' A ' }, 'DUPLICATE_NAME'],
      ['rename_code', { code_id: 999, new_name: 'Q' }, 'CODE_NOT_FOUND'],
      ['update_code_memo', { code_id: 999, memo: 'x' }, 'CODE_NOT_FOUND'],
      ['move_code_to_category', { code_id: a, category_id: 999 }, 'CATEGORY_NOT_FOUND'],
      ['create_category', { name: 'k' }, 'DUPLICATE_NAME'],
      ['create_category', { name: 'New', parent_id: cat + 100 }, 'CATEGORY_NOT_FOUND'],
      ['merge_codes', { source_code_id: a, target_code_id: a }, 'MERGE_SAME_CODE'],
      ['merge_codes', { source_code_id: a, target_code_id: 999 }, 'CODE_NOT_FOUND'],
      ['delete_code', { code_id: a }, 'CODE_HAS_SEGMENTS'],
      ['delete_segment', { segment_id: seg + 100 }, 'SEGMENT_NOT_FOUND'],
      [
        'batch_apply_codes',
        {
          operations: [
            { code_id: b, source_id: s, start_position: 6, end_position: 11 },
            { code_id: b, source_id: s, start_position: 0, end_position: 12 },
          ],
        },
        'INVALID_POSITION',
      ],
      [
        'batch_apply_codes',
        {
          operations: [
            { code_id: b, source_id: s, start_position: 6, end_position: 11 },
            { code_id: 999, source_id: s, start_position: 0, end_position: 1 },
          ],
        },
        'CODE_NOT_FOUND',
      ],
      ['add_text_source', { name: 'S', content: 'dup' }, 'SOURCE_DUPLICATE_NAME'],
      ['remove_source', { source_id: 999, confirm: true }, 'SOURCE_NOT_FOUND'],
      ['create_folder', { name: 'F' }, 'FOLDER_NOT_CREATED'],
      ['create_folder', { name: 'x/y' }, 'FOLDER_NOT_CREATED'],
      ['rename_folder', { folder_id: f, new_name: 'G' }, 'FOLDER_RENAME_FAILED'],
      ['delete_folder', { folder_id: f }, 'FOLDER_NOT_EMPTY'],
      ['move_source_to_folder', { source_id: s, folder_id: 999 }, 'FOLDER_NOT_FOUND'],
      ['suggest_source_metadata', { source_id: 999, language: 'en' }, 'SOURCE_NOT_FOUND'],
      ['import_file_source', { file_path: '/definitely/not/here.txt' }, 'SOURCE_IMPORT_FAILED'],
      ['no_such_tool', {}, 'TOOL_NOT_FOUND'],
    ];
    for (const [name, args, code] of failing) await fx.fails(name, args, code);
    assert.deepEqual(await snapshot(fx), before);
    assert.equal(heard, 0, 'listeners hear nothing from failed calls');
    await sub.dispose();
  });
});
