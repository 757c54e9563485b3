/**
 * One id space for text and AV segments (issue 15 item 7, migration 11).
 *
 * A project at schema 10 is built on disk with sql.js, as an earlier Marginalia left it: text segments and AV
 * segments numbered by two sequences, so ids 1-3 name a text segment and an AV segment each; events,
 * provenance, stored exchange GUIDs and approval requests refer to them. Opening it runs migration 11. The
 * expected ids are written out: the text high-water mark is 6 (sqlite_sequence; text segment 4 was deleted,
 * 6 is an orphan's), the AV one 4 (AV segment 4 was deleted), so the live AV segments 1, 2, 3 become 7, 8, 9
 * and both sequences stand at 9. Expected derived GUIDs are computed by this file's own UUID v5 (RFC 9562,
 * section 5.5), not by the code under test.
 *
 * Then: text and AV codings interleaved through the real tool pipeline never share an id; the same ids come
 * back after a journal replay (a crash before any checkpoint) and after a checkpoint; the tools refuse an id
 * of the other kind naming the right tool, and change nothing.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Database } from 'sql.js';
import { createPipeline, headlessHost, openProjectHandle, type ProjectHandle } from '../../../src/cli/compose';
import { silentLogger } from '../../../src/core/log';
import { GuidResolver } from '../../../src/domain/exchangeIds';
import { payloadToStored } from '../../../src/store/eventRows';
import { journalPath } from '../../../src/store/projectStore';
import { ALICE, databaseBeforeMigration, fixedClock, FIXED_MS, storedEvents } from '../domain/projectFixture';

const PROJECT_GUID = '0123456789abcdef0123456789abcdef';
const ISO = '2025-06-01T10:00:00.000Z';
const REFI_GUID = '4b2c1a00-1111-4222-8333-444455556666';
const TEXT = 'We argue about the hose rota every week. The council wants three forms before we build a shed. ' + 'Water is scarce. '.repeat(20);

/** UUID v5 of `name` in namespace `ns` (32 hex digits), written here from RFC 9562 section 5.5. */
function v5(ns: string, name: string): string {
  const b = createHash('sha1').update(Buffer.from(ns, 'hex')).update(Buffer.from(name, 'utf8')).digest();
  b[6] = (b[6]! & 0x0f) | 0x50;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = b.subarray(0, 16).toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

function tmpDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'marginalia-segids-'));
}

function ev(db: Database, seq: number, type: string, aggType: string, aggId: string, payload: string): void {
  db.run(
    `INSERT INTO events(seq, event_id, event_type, timestamp, aggregate_type, aggregate_id, session_id, client_type, user, correlation_id, payload)
     VALUES (?, NULL, ?, ?, ?, ?, 'sess-old', 'REST_CLIENT', 'alice', NULL, ?)`,
    [seq, type, FIXED_MS, aggType, aggId, payload],
  );
}

/**
 * A schema-10 project with overlapping ids. Text segments 1, 2, 3, 5 (4 deleted, sequence at 6); AV segments
 * 1, 2, 3 (4 deleted, sequence at 4); AV segment 2 carries a REFI GUID and AV segment 1 a memo.
 */
async function writeOverlappingProject(file: string): Promise<void> {
  const db = await databaseBeforeMigration(11);
  db.run("UPDATE meta SET value = ? WHERE key = 'project_guid'", [PROJECT_GUID]);
  db.run(
    "INSERT INTO codes(id, name, name_key, color, owner, created_at, updated_at) VALUES (1, 'Hose', 'hose', '#4E79A7', 'alice', ?, ?), (2, 'Water', 'water', '#E15759', 'alice', ?, ?)",
    [ISO, ISO, ISO, ISO],
  );
  db.run("INSERT INTO sources(id, name, type, content, content_length, owner, created_at, updated_at) VALUES (1, 'Interview', 'text', ?, ?, 'alice', ?, ?)", [
    TEXT,
    [...TEXT].length,
    ISO,
    ISO,
  ]);
  db.run(
    "INSERT INTO sources(id, name, type, file_path, mime, owner, created_at, updated_at) VALUES (2, 'talk.mp4', 'video', '/nowhere/talk.mp4', 'video/mp4', 'alice', ?, ?)",
    [ISO, ISO],
  );
  for (const [id, s, e] of [
    [1, 0, 8],
    [2, 9, 14],
    [3, 19, 23],
    [5, 41, 52],
  ] as const) {
    db.run('INSERT INTO segments(id, code_id, source_id, start_pos, end_pos, text, owner, created_at, updated_at) VALUES (?, 1, 1, ?, ?, ?, ?, ?, ?)', [
      id,
      s,
      e,
      TEXT.slice(s, e),
      'alice',
      ISO,
      ISO,
    ]);
  }
  db.run("UPDATE sqlite_sequence SET seq = 6 WHERE name = 'segments'");
  const av = [
    [1, 1000, 4500, 'We argue 😀\uFEFF about the hose', 'weekly'],
    [2, 5000, 9000, null, null],
    [3, 10_000, 14_000, 'the council', null],
  ] as const;
  for (const [id, s, e, transcript, memo] of av) {
    db.run(
      'INSERT INTO av_segments(id, code_id, source_id, start_ms, end_ms, transcript, memo, owner, created_at, updated_at) VALUES (?, 2, 2, ?, ?, ?, ?, ?, ?, ?)',
      [id, s, e, transcript, memo, 'alice', ISO, ISO],
    );
  }
  db.run("UPDATE sqlite_sequence SET seq = 4 WHERE name = 'av_segments'");
  db.run(
    "INSERT INTO orphan_segments(segment_id, code_id, source_id, start_pos, end_pos, text, owner, created_at, orphaned_at, reason) VALUES (6, 1, 1, 0, 3, 'Wea', 'alice', ?, ?, 'text changed')",
    [ISO, ISO],
  );
  db.run(
    "INSERT INTO suggestions(id, kind, status, code_id, source_id, start_pos, end_pos, text, rationale, confidence, suggested_by, created_at, result) VALUES (1, 'coding', 'applied', 1, 1, 9, 14, 'about', 'r', 80, 'agent', ?, ?)",
    [ISO, '{"status":"applied","segment_id":2}'],
  );
  db.run("INSERT INTO segment_provenance(segment_id, suggestion_id, approved_by, created_at) VALUES (2, 1, 'alice', ?)", [ISO]);
  db.run("INSERT INTO exchange_guids(kind, local_id, guid) VALUES ('av_coding', '2', ?), ('coding', '2', 'text-coding-guid-kept')", [REFI_GUID]);

  // events in their stored forms: text events as PAYLOAD_SHAPES arrays, AV events as objects
  ev(db, 1, 'coding.segment_coded', 'segment', '1', JSON.stringify([0, 1, 1, 1, 0, 8, TEXT.slice(0, 8)]));
  ev(
    db,
    2,
    'coding.av_segment_coded',
    'av_segment',
    '1',
    JSON.stringify({ segment_id: 1, code_id: 2, source_id: 2, start_ms: 1000, end_ms: 4500, transcript: 'We argue 😀\uFEFF about the hose' }),
  );
  ev(db, 3, 'coding.segment_coded', 'segment', '2', JSON.stringify([0, 2, 1, 1, 9, 14, 'about']));
  ev(
    db,
    4,
    'coding.av_segment_coded',
    'av_segment',
    '2',
    JSON.stringify({ segment_id: 2, code_id: 2, source_id: 2, start_ms: 5000, end_ms: 9000, transcript: null }),
  );
  ev(
    db,
    5,
    'coding.av_segment_coded',
    'av_segment',
    '3',
    JSON.stringify({ segment_id: 3, code_id: 2, source_id: 2, start_ms: 10_000, end_ms: 14_000, transcript: 'the council' }),
  );
  ev(
    db,
    6,
    'coding.av_segment_coded',
    'av_segment',
    '4',
    JSON.stringify({ segment_id: 4, code_id: 2, source_id: 2, start_ms: 20_000, end_ms: 21_000, transcript: null }),
  );
  ev(db, 7, 'coding.av_segment_uncoded', 'av_segment', '4', JSON.stringify({ segment_id: 4, code_id: 2, source_id: 2, start_ms: 20_000, end_ms: 21_000 }));
  ev(db, 8, 'coding.segment_uncoded', 'segment', '3', JSON.stringify([3, 3, 1, 1]));
  ev(
    db,
    9,
    'approval.requested',
    'approval',
    'req-remove',
    JSON.stringify({
      request_id: 'req-remove',
      action_type: 'remove_av_segment',
      description: 'Remove AV Segment: segment_id=3',
      payload: { segment_id: 3 },
      trust_level: 'require',
      expires_at: ISO,
    }),
  );
  ev(
    db,
    10,
    'approval.requested',
    'approval',
    'req-text',
    JSON.stringify({
      request_id: 'req-text',
      action_type: 'delete_segment',
      description: 'Delete Segment: segment_id=3',
      payload: { segment_id: 3 },
      trust_level: 'require',
      expires_at: ISO,
    }),
  );
  ev(db, 11, 'coding.segment_coded', 'segment', '3', JSON.stringify([0, 3, 1, 1, 19, 23, TEXT.slice(19, 23)]));
  ev(db, 12, 'coding.segment_coded', 'segment', '5', JSON.stringify([0, 5, 1, 1, 41, 52, TEXT.slice(41, 52)]));

  const approval = (id: string, tool: string, args: string, description: string, status: string, result: string | null) =>
    db.run(
      `INSERT INTO approval_requests(request_id, tool, arguments, session_id, client_type, client_name, user, trust_level, description, status, created_at, expires_at, result)
       VALUES (?, ?, ?, 'sess-agent', 'AI_AGENT', 'agent', 'alice', 'require', ?, ?, ?, ?, ?)`,
      [id, tool, args, description, status, ISO, '2099-01-01T00:00:00.000Z', result],
    );
  approval('req-remove', 'remove_av_segment', '{"segment_id":3}', 'Remove AV Segment: segment_id=3', 'pending', null);
  approval('req-text', 'delete_segment', '{"segment_id":3}', 'Delete Segment: segment_id=3', 'pending', null);
  approval(
    'req-av-done',
    'apply_av_code',
    '{"code_id":2,"source_id":2,"start_ms":1000,"end_ms":4500}',
    'Apply Code to Audio/Video: code_id=2, ...',
    'completed',
    '{"segment_id":1,"code_id":2,"source_id":2,"start_ms":1000,"end_ms":4500}',
  );
  fs.writeFileSync(file, db.export());
  db.close();
}

const rows = <T = Record<string, unknown>>(h: ProjectHandle, sql: string, params: (string | number | null)[] = []) => h.store.all<T>(sql, params);
const sequences = (h: ProjectHandle) =>
  Object.fromEntries(
    rows<{ name: string; seq: number }>(h, "SELECT name, seq FROM sqlite_sequence WHERE name IN ('segments', 'av_segments') ORDER BY name").map((r) => [
      r.name,
      r.seq,
    ]),
  );

function assertSound(h: ProjectHandle): void {
  assert.deepEqual(rows(h, 'PRAGMA integrity_check'), [{ integrity_check: 'ok' }]);
  assert.deepEqual(rows(h, 'PRAGMA foreign_key_check'), []);
  assert.deepEqual(rows(h, 'SELECT s.id FROM segments s JOIN av_segments a ON a.id = s.id'), [], 'no id names both a text and an AV segment');
}

function pipelineOver(h: ProjectHandle) {
  const p = createPipeline({ project: () => h, host: headlessHost, logger: silentLogger, clock: fixedClock });
  return {
    async ok(name: string, args: unknown): Promise<any> {
      const out = await p.invoke(name, args, ALICE);
      if (!out.envelope.success) assert.fail(`${name} failed: ${out.envelope.error_code}: ${out.envelope.error}`);
      return out.envelope.data;
    },
    async fails(name: string, args: unknown, code: string): Promise<{ error: string; details: unknown }> {
      const out = await p.invoke(name, args, ALICE);
      assert.equal(out.envelope.success, false, `${name} should fail: ${JSON.stringify(out.envelope)}`);
      if (out.envelope.success) throw new Error('unreachable');
      assert.equal(out.envelope.error_code, code, out.envelope.error);
      assert.deepEqual(out.events, []);
      return { error: out.envelope.error, details: (out.envelope as { details?: unknown }).details };
    },
  };
}

/** `n` text codings and `n` AV codings, alternating, through the tools; returns [kind, id] in call order. */
async function interleave(h: ProjectHandle, n: number, offset: number): Promise<['text' | 'av', number][]> {
  const t = pipelineOver(h);
  const out: ['text' | 'av', number][] = [];
  for (let i = 0; i < n; i++) {
    const start = offset + i;
    out.push(['text', (await t.ok('apply_code', { code_id: 1, source_id: 1, start_position: start, end_position: start + 3 })).segment_id]);
    out.push([
      'av',
      (await t.ok('apply_av_code', { code_id: 2, source_id: 2, start_ms: 100_000 + start * 1000, end_ms: 100_000 + start * 1000 + 500 })).segment_id,
    ]);
  }
  return out;
}

describe('one segment id space (migration 11)', function () {
  this.timeout(60_000);
  const dirs: string[] = [];
  const open: ProjectHandle[] = [];
  const fresh = () => {
    const d = tmpDir();
    dirs.push(d);
    return d;
  };
  const openHandle = async (file: string) => {
    const h = await openProjectHandle(file, { checkpointIdleMs: 0 });
    open.push(h);
    return h;
  };
  afterEach(async () => {
    for (const h of open.splice(0)) await h.close().catch(() => undefined);
    for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
  });

  it('the AV events this migration rewrites are stored as JSON objects (no PAYLOAD_SHAPES entry has their keys)', () => {
    const coded = payloadToStored({ segment_id: 1, code_id: 2, source_id: 3, start_ms: 0, end_ms: 5, transcript: null });
    const uncoded = payloadToStored({ segment_id: 1, code_id: 2, source_id: 3, start_ms: 0, end_ms: 5 });
    assert.equal(coded[0], '{');
    assert.equal(uncoded[0], '{');
  });

  it('renumbers the AV segments of a schema-10 project above every text id and moves every reference with them', async () => {
    const file = path.join(fresh(), 'old.qda');
    await writeOverlappingProject(file);
    const h = await openHandle(file);
    assertSound(h);

    assert.deepEqual(
      rows(h, 'SELECT id, start_pos, end_pos FROM segments ORDER BY id'),
      [
        { id: 1, start_pos: 0, end_pos: 8 },
        { id: 2, start_pos: 9, end_pos: 14 },
        { id: 3, start_pos: 19, end_pos: 23 },
        { id: 5, start_pos: 41, end_pos: 52 },
      ],
      'text segment ids never change',
    );
    assert.deepEqual(rows(h, 'SELECT id, start_ms, end_ms, transcript, memo FROM av_segments ORDER BY id'), [
      { id: 7, start_ms: 1000, end_ms: 4500, transcript: 'We argue 😀\uFEFF about the hose', memo: 'weekly' },
      { id: 8, start_ms: 5000, end_ms: 9000, transcript: null, memo: null },
      { id: 9, start_ms: 10_000, end_ms: 14_000, transcript: 'the council', memo: null },
    ]);
    assert.deepEqual(sequences(h), { av_segments: 9, segments: 9 });

    // events: AV ones follow their rows (aggregate id and payload), text ones and the deleted AV segment's stay
    const events = storedEvents(h).map((e) => [e.seq, e.aggregate_type, e.aggregate_id, e.payload]);
    assert.deepEqual(events, [
      [1, 'segment', '1', { segment_id: 1, code_id: 1, source_id: 1, start: 0, end: 8, text: TEXT.slice(0, 8) }],
      [2, 'av_segment', '7', { segment_id: 7, code_id: 2, source_id: 2, start_ms: 1000, end_ms: 4500, transcript: 'We argue 😀\uFEFF about the hose' }],
      [3, 'segment', '2', { segment_id: 2, code_id: 1, source_id: 1, start: 9, end: 14, text: 'about' }],
      [4, 'av_segment', '8', { segment_id: 8, code_id: 2, source_id: 2, start_ms: 5000, end_ms: 9000, transcript: null }],
      [5, 'av_segment', '9', { segment_id: 9, code_id: 2, source_id: 2, start_ms: 10_000, end_ms: 14_000, transcript: 'the council' }],
      [6, 'av_segment', '4', { segment_id: 4, code_id: 2, source_id: 2, start_ms: 20_000, end_ms: 21_000, transcript: null }],
      [7, 'av_segment', '4', { segment_id: 4, code_id: 2, source_id: 2, start_ms: 20_000, end_ms: 21_000 }],
      [8, 'segment', '3', { segment_id: 3, code_id: 1, source_id: 1 }],
      [
        9,
        'approval',
        'req-remove',
        {
          request_id: 'req-remove',
          action_type: 'remove_av_segment',
          description: 'Remove AV Segment: segment_id=9',
          payload: { segment_id: 9 },
          trust_level: 'require',
          expires_at: ISO,
        },
      ],
      [
        10,
        'approval',
        'req-text',
        {
          request_id: 'req-text',
          action_type: 'delete_segment',
          description: 'Delete Segment: segment_id=3',
          payload: { segment_id: 3 },
          trust_level: 'require',
          expires_at: ISO,
        },
      ],
      [11, 'segment', '3', { segment_id: 3, code_id: 1, source_id: 1, start: 19, end: 23, text: TEXT.slice(19, 23) }],
      [12, 'segment', '5', { segment_id: 5, code_id: 1, source_id: 1, start: 41, end: 52, text: TEXT.slice(41, 52) }],
    ]);
    assert.equal(rows<{ payload: string }>(h, 'SELECT payload FROM events WHERE seq = 1')[0]!.payload[0], '[', 'a text event keeps its stored array form');

    // text references untouched
    assert.deepEqual(rows(h, 'SELECT segment_id, suggestion_id FROM segment_provenance'), [{ segment_id: 2, suggestion_id: 1 }]);
    assert.deepEqual(rows(h, 'SELECT segment_id FROM orphan_segments'), [{ segment_id: 6 }]);
    assert.deepEqual(rows(h, 'SELECT result FROM suggestions'), [{ result: '{"status":"applied","segment_id":2}' }]);

    // approval requests: the pending AV removal names the renumbered segment; a text request is untouched
    assert.deepEqual(rows(h, 'SELECT request_id, arguments, description, result FROM approval_requests ORDER BY request_id'), [
      {
        request_id: 'req-av-done',
        arguments: '{"code_id":2,"source_id":2,"start_ms":1000,"end_ms":4500}',
        description: 'Apply Code to Audio/Video: code_id=2, ...',
        result: '{"segment_id":7,"code_id":2,"source_id":2,"start_ms":1000,"end_ms":4500}',
      },
      { request_id: 'req-remove', arguments: '{"segment_id":9}', description: 'Remove AV Segment: segment_id=9', result: null },
      { request_id: 'req-text', arguments: '{"segment_id":3}', description: 'Delete Segment: segment_id=3', result: null },
    ]);

    // exchange GUIDs: what an export gave each AV segment before, kept for its new id
    assert.deepEqual(rows(h, 'SELECT kind, local_id, guid FROM exchange_guids ORDER BY kind, local_id'), [
      { kind: 'av_coding', local_id: '7', guid: v5(PROJECT_GUID, 'av_coding:1') },
      { kind: 'av_coding', local_id: '8', guid: REFI_GUID },
      { kind: 'av_coding', local_id: '9', guid: v5(PROJECT_GUID, 'av_coding:3') },
      { kind: 'av_selection', local_id: '7', guid: v5(PROJECT_GUID, 'av_selection:1') },
      { kind: 'av_selection', local_id: '8', guid: v5(PROJECT_GUID, 'av_selection:2') },
      { kind: 'av_selection', local_id: '9', guid: v5(PROJECT_GUID, 'av_selection:3') },
      { kind: 'coding', local_id: '2', guid: 'text-coding-guid-kept' },
      { kind: 'note', local_id: 'av_segment:7', guid: v5(PROJECT_GUID, 'note:av_segment:1') },
    ]);
    // ... and the resolver a REFI-QDA export uses hands them out for the new ids
    const resolver = new GuidResolver(h.repo.projectGuid(), h.repo.listExchangeGuids());
    assert.deepEqual(
      [resolver.guid('av_selection', 7), resolver.guid('av_coding', 8), resolver.guid('note', 'av_segment:7')],
      [v5(PROJECT_GUID, 'av_selection:1'), REFI_GUID, v5(PROJECT_GUID, 'note:av_segment:1')],
    );

    // search index of text segments still answers for their ids
    assert.deepEqual(rows(h, "SELECT docid FROM segment_fts WHERE segment_fts MATCH 'about'"), [{ docid: 2 }]);
    assert.deepEqual(rows(h, 'SELECT version FROM schema_migrations WHERE version = 11'), [{ version: 11 }]);
  });

  it('gives the same result each time it runs on the same file (a crash before its checkpoint runs it again)', async () => {
    const dir = fresh();
    const a = path.join(dir, 'a.qda');
    await writeOverlappingProject(a);
    const b = path.join(dir, 'b.qda');
    fs.copyFileSync(a, b);
    const dump = (h: ProjectHandle) =>
      ['segments', 'av_segments', 'events', 'exchange_guids', 'approval_requests', 'sqlite_sequence'].map((table) =>
        rows(h, `SELECT * FROM ${table} ORDER BY 1, 2`),
      );
    const first = dump(await openHandle(a));
    assert.deepEqual(dump(await openHandle(b)), first);
  });

  it('leaves a project whose AV ids are above every text id as it is, and one without AV segments', async () => {
    const file = path.join(fresh(), 'apart.qda');
    const db = await databaseBeforeMigration(11);
    db.run("INSERT INTO codes(id, name, name_key, color, owner, created_at, updated_at) VALUES (1, 'Hose', 'hose', '#4E79A7', 'alice', ?, ?)", [ISO, ISO]);
    db.run("INSERT INTO sources(id, name, type, content, content_length, owner, created_at, updated_at) VALUES (1, 'T', 'text', 'abcdef', 6, 'alice', ?, ?)", [
      ISO,
      ISO,
    ]);
    db.run("INSERT INTO sources(id, name, type, file_path, owner, created_at, updated_at) VALUES (2, 'a.mp3', 'audio', '/nowhere/a.mp3', 'alice', ?, ?)", [
      ISO,
      ISO,
    ]);
    db.run(
      "INSERT INTO segments(id, code_id, source_id, start_pos, end_pos, text, owner, created_at, updated_at) VALUES (1, 1, 1, 0, 2, 'ab', 'alice', ?, ?), (2, 1, 1, 2, 4, 'cd', 'alice', ?, ?)",
      [ISO, ISO, ISO, ISO],
    );
    db.run(
      "INSERT INTO av_segments(id, code_id, source_id, start_ms, end_ms, owner, created_at, updated_at) VALUES (5, 1, 2, 0, 10, 'alice', ?, ?), (6, 1, 2, 10, 20, 'alice', ?, ?)",
      [ISO, ISO, ISO, ISO],
    );
    ev(
      db,
      1,
      'coding.av_segment_coded',
      'av_segment',
      '5',
      JSON.stringify({ segment_id: 5, code_id: 1, source_id: 2, start_ms: 0, end_ms: 10, transcript: null }),
    );
    fs.writeFileSync(file, db.export());
    db.close();
    const h = await openHandle(file);
    assertSound(h);
    assert.deepEqual(rows(h, 'SELECT id FROM av_segments ORDER BY id'), [{ id: 5 }, { id: 6 }]);
    assert.deepEqual(rows(h, 'SELECT aggregate_id FROM events'), [{ aggregate_id: '5' }]);
    assert.deepEqual(rows(h, 'SELECT * FROM exchange_guids'), []);
    assert.deepEqual(sequences(h), { av_segments: 6, segments: 6 });
    // the next text coding takes 7, not 3
    assert.equal((await pipelineOver(h).ok('apply_code', { code_id: 1, source_id: 1, start_position: 4, end_position: 6 })).segment_id, 7);

    const emptyFile = path.join(fresh(), 'textonly.qda');
    const db2 = await databaseBeforeMigration(11);
    db2.run("INSERT INTO codes(id, name, name_key, color, owner, created_at, updated_at) VALUES (1, 'Hose', 'hose', '#4E79A7', 'alice', ?, ?)", [ISO, ISO]);
    db2.run("INSERT INTO sources(id, name, type, content, content_length, owner, created_at, updated_at) VALUES (1, 'T', 'text', 'abcdef', 6, 'alice', ?, ?)", [
      ISO,
      ISO,
    ]);
    db2.run("INSERT INTO segments(code_id, source_id, start_pos, end_pos, text, owner, created_at, updated_at) VALUES (1, 1, 0, 2, 'ab', 'alice', ?, ?)", [
      ISO,
      ISO,
    ]);
    fs.writeFileSync(emptyFile, db2.export());
    db2.close();
    const h2 = await openHandle(emptyFile);
    assertSound(h2);
    assert.deepEqual(sequences(h2), { av_segments: 1, segments: 1 });
  });

  it('new text and AV codings never share an id, after a journal replay and after a checkpoint', async () => {
    const dir = fresh();
    const file = path.join(dir, 'old.qda');
    await writeOverlappingProject(file);
    const h = await openHandle(file);
    const first = await interleave(h, 40, 60);
    const ids = first.map(([, id]) => id);
    assert.equal(new Set(ids).size, ids.length, 'every new id is new');
    assert.deepEqual(
      ids,
      Array.from({ length: 80 }, (_, i) => 10 + i),
      'one sequence: 10, 11, ... in call order, whatever the kind',
    );
    assertSound(h);
    assert.ok(fs.statSync(journalPath(file)).size > 0, 'the codings are in the journal, not yet in a checkpoint');

    // a crash before any checkpoint: the file as the migration left it plus the journal
    const crashDir = fresh();
    const crashed = path.join(crashDir, 'old.qda');
    fs.copyFileSync(file, crashed);
    fs.copyFileSync(journalPath(file), journalPath(crashed));
    const replayed = await openHandle(crashed);
    assertSound(replayed);
    const kindsOf = (x: ProjectHandle) => [
      ...rows<{ id: number }>(x, 'SELECT id FROM segments ORDER BY id').map((r) => ['text', r.id]),
      ...rows<{ id: number }>(x, 'SELECT id FROM av_segments ORDER BY id').map((r) => ['av', r.id]),
    ];
    assert.deepEqual(kindsOf(replayed), kindsOf(h), 'the replay gives every segment the id it had');
    assert.deepEqual(sequences(replayed), { av_segments: 89, segments: 89 });
    // after the replay both copies hand out the same next ids
    const afterReplay = await interleave(replayed, 3, 200);
    const original = await interleave(h, 3, 200);
    assert.deepEqual(afterReplay, original);
    assert.deepEqual(
      afterReplay.map(([, id]) => id),
      [90, 91, 92, 93, 94, 95],
    );

    // a checkpoint (close), reopened: the sequence and the triggers are in the file
    await h.close();
    assert.equal(fs.statSync(journalPath(file)).size, 0);
    const reopened = await openHandle(file);
    assertSound(reopened);
    assert.deepEqual(sequences(reopened), { av_segments: 95, segments: 95 });
    assert.deepEqual(rows(reopened, "SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE '%one_id_space' ORDER BY name"), [
      { name: 'av_segments_one_id_space' },
      { name: 'segments_one_id_space' },
    ]);
    const later = await interleave(reopened, 5, 300);
    assert.deepEqual(
      later.map(([, id]) => id),
      [96, 97, 98, 99, 100, 101, 102, 103, 104, 105],
    );
    // deleting the highest ids never lets one come back
    const t = pipelineOver(reopened);
    await t.ok('remove_av_segment', { segment_id: 105 });
    await t.ok('delete_segment', { segment_id: 104 });
    assert.equal((await t.ok('apply_av_code', { code_id: 2, source_id: 2, start_ms: 900_000, end_ms: 900_500 })).segment_id, 106);
    assertSound(reopened);
  });

  it('a new project has the one sequence from its first segment on', async () => {
    const file = path.join(fresh(), 'new.qda');
    const h = await openProjectHandle(file, { create: true, checkpointIdleMs: 0 });
    open.push(h);
    const t = pipelineOver(h);
    await t.ok('create_code', { name: 'A', color: '#4E79A7' });
    await t.ok('add_text_source', { name: 'T', content: TEXT });
    h.store.transaction(() =>
      h.store.run("INSERT INTO sources(name, type, file_path, owner, created_at, updated_at) VALUES ('v.mp4', 'video', '/nowhere/v.mp4', 'alice', ?, ?)", [
        ISO,
        ISO,
      ]),
    );
    const av = await t.ok('apply_av_code', { code_id: 1, source_id: 2, start_ms: 0, end_ms: 10 });
    const text = await t.ok('apply_code', { code_id: 1, source_id: 1, start_position: 0, end_position: 2 });
    const av2 = await t.ok('apply_av_code', { code_id: 1, source_id: 2, start_ms: 10, end_ms: 20 });
    assert.deepEqual([av.segment_id, text.segment_id, av2.segment_id], [1, 2, 3]);
  });

  it('the tools refuse an id of the other kind, name the right tool and change nothing', async () => {
    const file = path.join(fresh(), 'old.qda');
    await writeOverlappingProject(file);
    const h = await openHandle(file);
    const t = pipelineOver(h);
    const state = () => [
      rows(h, 'SELECT * FROM segments ORDER BY id'),
      rows(h, 'SELECT * FROM av_segments ORDER BY id'),
      rows(h, 'SELECT count(*) AS n FROM events'),
      h.store.journalSeq,
    ];
    const before = state();

    for (const tool of ['delete_segment', 'remove_code']) {
      const f = await t.fails(tool, { segment_id: 8 }, 'SEGMENT_NOT_FOUND');
      assert.match(f.error, /^segment 8 is an AV segment, not a text segment: use remove_av_segment$/);
      assert.deepEqual(f.details, { segment_id: 8, kind: 'av' });
    }
    const memo = await t.fails('update_segment_memo', { segment_id: 7, memo: 'x' }, 'SEGMENT_NOT_FOUND');
    assert.match(memo.error, /^segment 7 is an AV segment, not a text segment: .*apply_av_code/);
    const similar = await t.fails('find_similar_segments', { segment_id: 9 }, 'SEGMENT_NOT_FOUND');
    assert.match(similar.error, /^segment 9 is an AV segment, not a text segment: similarity searches compare text segments only$/);
    const av = await t.fails('remove_av_segment', { segment_id: 2 }, 'AV_SEGMENT_NOT_REMOVED/NOT_FOUND');
    assert.equal(av.error, 'segment 2 is a text segment, not an AV segment: use delete_segment');
    assert.deepEqual(av.details, { segment_id: 2, kind: 'text' });
    // ids of neither kind keep their plain messages
    assert.equal((await t.fails('delete_segment', { segment_id: 4 }, 'SEGMENT_NOT_FOUND')).error, 'No text segment with segment_id 4');
    assert.equal((await t.fails('remove_av_segment', { segment_id: 4 }, 'AV_SEGMENT_NOT_REMOVED/NOT_FOUND')).error, 'No AV segment with segment_id 4');
    assert.deepEqual(state(), before, 'nothing changed');

    // each tool removes its own kind
    assert.equal((await t.ok('delete_segment', { segment_id: 2 })).segment_id, 2);
    assert.equal((await t.ok('remove_av_segment', { segment_id: 8 })).segment_id, 8);
    assert.deepEqual(rows(h, 'SELECT id FROM segments ORDER BY id'), [{ id: 1 }, { id: 3 }, { id: 5 }]);
    assert.deepEqual(rows(h, 'SELECT id FROM av_segments ORDER BY id'), [{ id: 7 }, { id: 9 }]);
  });
});
