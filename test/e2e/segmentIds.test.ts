/**
 * End-to-end test of the one segment id space (issue 15 item 7) over HTTP against the real built CLI
 * (`bin/marginalia.js serve`; run `npm run build` first).
 *
 * Before migration 11, `delete_segment {segment_id: 6}` meant for AV segment 6 deleted an unrelated text coding
 * and answered 200 (an agent's call, trust `notify`: no approval). Here: text and AV codings made in turn get
 * ids of one sequence; `delete_segment` with an AV segment's id and `remove_av_segment` with a text segment's id
 * are refused (404 with the spec's codes SEGMENT_NOT_FOUND and AV_SEGMENT_NOT_REMOVED/NOT_FOUND), the message
 * naming the right tool, and change nothing (segments, stored events); each tool removes its own kind. A project
 * written before migration 11 (text and AV ids 1-3 each, built with sql.js) is served: its AV segments answer
 * under their new ids and the same refusals hold.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { AS_AGENT, startServer, tmpDir, type ServerProcess } from '../helpers/serverProcess';
import { toolClient } from '../helpers/toolClient';
import { databaseBeforeMigration } from '../unit/domain/projectFixture';

const TEXT = 'We argue about the hose rota every week. The council wants three forms before we build a shed.';
const ISO = '2025-06-01T10:00:00.000Z';

describe('one segment id space over HTTP (real CLI)', function () {
  this.timeout(120_000);
  let dir = '';
  let server: ServerProcess | undefined;
  let base = '';
  const t = toolClient(() => base);

  before(() => {
    dir = tmpDir('marginalia-segids-e2e-');
  });
  afterEach(async () => {
    if (server) await server.stop();
    server = undefined;
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  /** Everything the refused calls must leave unchanged. */
  const state = async (textSource: number, avSource: number) => ({
    text: (await t.ok('list_segments_for_source', { source_id: textSource })).segments.map((s: any) => [s.segment_id, s.start_pos, s.end_pos]),
    av: (await t.ok('list_av_segments', { source_id: avSource })).segments.map((s: any) => [s.segment_id, s.start_ms, s.end_ms]),
    head: await t.headSeq(),
  });

  it('text and AV codings share one sequence; each removal tool refuses the other kind, naming the right tool', async () => {
    const media = path.join(dir, 'media');
    fs.mkdirSync(media);
    fs.writeFileSync(path.join(media, 'talk.mp4'), 'mp4 stand-in');
    server = await startServer(path.join(dir, 'new.qda'));
    base = server.base;
    const code = (await t.ok('create_code', { name: 'Hose', color: '#4E79A7' })).code_id;
    const text = (await t.ok('add_text_source', { name: 'Interview', content: TEXT })).source_id;
    const video = (await t.ok('import_source', { file_path: path.join(media, 'talk.mp4') })).source_id;

    const ids: [string, number][] = [];
    for (let i = 0; i < 4; i++) {
      ids.push(['text', (await t.ok('apply_code', { code_id: code, source_id: text, start_position: i * 10, end_position: i * 10 + 5 })).segment_id]);
      ids.push(['av', (await t.ok('apply_av_code', { code_id: code, source_id: video, start_ms: i * 1000, end_ms: i * 1000 + 500 })).segment_id]);
    }
    assert.deepEqual(
      ids.map(([, id]) => id),
      [1, 2, 3, 4, 5, 6, 7, 8],
      'one sequence in call order, whatever the kind',
    );
    await t.ok('list_codes', {}, AS_AGENT); // the agent's session starts (an event) before the state is taken
    const before = await state(text, video);
    assert.equal(before.text.length, 4);
    assert.equal(before.av.length, 4);

    // the call: an agent (trust notify, runs at once) deletes "segment 6", an AV segment
    const refused = await t.fails('delete_segment', { segment_id: 6 }, 'SEGMENT_NOT_FOUND', AS_AGENT);
    assert.equal(refused.error, 'segment 6 is an AV segment, not a text segment: use remove_av_segment');
    assert.deepEqual(refused.details, { segment_id: 6, kind: 'av' });
    const asResearcher = await t.fails('delete_segment', { segment_id: 2 }, 'SEGMENT_NOT_FOUND');
    assert.match(asResearcher.error, /use remove_av_segment/);
    const avRefused = await t.fails('remove_av_segment', { segment_id: 5 }, 'AV_SEGMENT_NOT_REMOVED/NOT_FOUND', AS_AGENT);
    assert.equal(avRefused.error, 'segment 5 is a text segment, not an AV segment: use delete_segment');
    assert.deepEqual(avRefused.details, { segment_id: 5, kind: 'text' });
    assert.deepEqual(await state(text, video), before, 'nothing was deleted and no event stored');

    // each tool removes its own kind
    const removedAv = await t.ok('remove_av_segment', { segment_id: 6 });
    assert.deepEqual([removedAv.deleted, removedAv.segment_id, removedAv.start_ms], [true, 6, 2000]);
    const removedText = await t.ok('delete_segment', { segment_id: 5 });
    assert.deepEqual([removedText.deleted, removedText.segment_id, removedText.start_pos], [true, 5, 20]);
    const after = await state(text, video);
    assert.deepEqual(
      after.text,
      before.text.filter(([id]: number[]) => id !== 5),
    );
    assert.deepEqual(
      after.av,
      before.av.filter(([id]: number[]) => id !== 6),
    );
    const events = await t.events(before.head);
    assert.deepEqual(
      events.map((e: any) => [e.event_type, e.aggregate_id]),
      [
        ['coding.av_segment_uncoded', '6'],
        ['coding.segment_uncoded', '5'],
      ],
    );
    // the next coding of either kind gets a new id above both
    assert.equal((await t.ok('apply_av_code', { code_id: code, source_id: video, start_ms: 9000, end_ms: 9500 })).segment_id, 9);
    assert.equal((await t.ok('apply_code', { code_id: code, source_id: text, start_position: 50, end_position: 55 })).segment_id, 10);
  });

  it('a project from before migration 11 is served with its AV segments renumbered, and the refusals hold', async () => {
    const file = path.join(dir, 'old.qda');
    const db = await databaseBeforeMigration(11);
    db.run("INSERT INTO codes(id, name, name_key, color, owner, created_at, updated_at) VALUES (1, 'Hose', 'hose', '#4E79A7', 'alice', ?, ?)", [ISO, ISO]);
    db.run("INSERT INTO sources(id, name, type, content, content_length, owner, created_at, updated_at) VALUES (1, 'Interview', 'text', ?, ?, 'alice', ?, ?)", [
      TEXT,
      TEXT.length,
      ISO,
      ISO,
    ]);
    db.run(
      "INSERT INTO sources(id, name, type, file_path, mime, owner, created_at, updated_at) VALUES (2, 'talk.mp4', 'video', '/nowhere/talk.mp4', 'video/mp4', 'alice', ?, ?)",
      [ISO, ISO],
    );
    for (const id of [1, 2, 3]) {
      db.run('INSERT INTO segments(id, code_id, source_id, start_pos, end_pos, text, owner, created_at, updated_at) VALUES (?, 1, 1, ?, ?, ?, ?, ?, ?)', [
        id,
        id * 10,
        id * 10 + 5,
        TEXT.slice(id * 10, id * 10 + 5),
        'alice',
        ISO,
        ISO,
      ]);
      db.run('INSERT INTO av_segments(id, code_id, source_id, start_ms, end_ms, owner, created_at, updated_at) VALUES (?, 1, 2, ?, ?, ?, ?, ?)', [
        id,
        id * 1000,
        id * 1000 + 500,
        'alice',
        ISO,
        ISO,
      ]);
    }
    fs.writeFileSync(file, db.export());
    db.close();

    server = await startServer(file);
    base = server.base;
    const before = await state(1, 2);
    assert.deepEqual(before.text, [
      [1, 10, 15],
      [2, 20, 25],
      [3, 30, 35],
    ]);
    assert.deepEqual(before.av, [
      [4, 1000, 1500],
      [5, 2000, 2500],
      [6, 3000, 3500],
    ]);
    // "segment 2" is the text segment; the AV segment that was 2 is 5 now
    assert.match((await t.fails('remove_av_segment', { segment_id: 2 }, 'AV_SEGMENT_NOT_REMOVED/NOT_FOUND')).error, /use delete_segment$/);
    assert.match((await t.fails('delete_segment', { segment_id: 5 }, 'SEGMENT_NOT_FOUND')).error, /use remove_av_segment$/);
    assert.deepEqual(await state(1, 2), before);
    assert.equal((await t.ok('remove_av_segment', { segment_id: 5 })).start_ms, 2000);
    assert.equal((await t.ok('delete_segment', { segment_id: 2 })).start_pos, 20);
    assert.equal((await t.ok('apply_code', { code_id: 1, source_id: 1, start_position: 40, end_position: 45 })).segment_id, 7);
  });
});
