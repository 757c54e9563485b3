/**
 * The codebook read cache of SqlProjectRepository (listCodes / getCode), keyed by the store's write
 * generation: a hit returns the same data without a query; every write path (the tools, a rolled-back
 * transaction, an import, a restore's row changes, writes inside a transaction) is visible to the next
 * read, with the right segment counts; callers cannot change what the cache holds.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { CodeWithCounts } from '../../../src/domain/ports';
import { nameKey } from '../../../src/domain/rules';
import { StoreDumpAccess } from '../../../src/store/dumpAccess';
import type { ProjectStore } from '../../../src/store/projectStore';
import { openFixture, type Fixture } from '../domain/projectFixture';

/** The codebook as SQL says it is right now, by name, without the repository (the ground truth). */
function truth(store: ProjectStore): { code_id: number; name: string; color: string; segment_count: number; av_segment_count: number }[] {
  return store.all(
    `SELECT c.id AS code_id, c.name, c.color,
       (SELECT count(*) FROM segments s WHERE s.code_id = c.id) AS segment_count,
       (SELECT count(*) FROM av_segments a WHERE a.code_id = c.id) AS av_segment_count
     FROM codes c ORDER BY c.name COLLATE NOCASE`,
  );
}

const brief = (codes: CodeWithCounts[]) =>
  codes.map((c) => ({ code_id: c.code_id, name: c.name, color: c.color, segment_count: c.segment_count, av_segment_count: c.av_segment_count }));

describe('store/SqlProjectRepository codebook cache', () => {
  let fx: Fixture;
  let src = 0;
  let a = 0;
  let b = 0;

  /** listCodes and getCode of every code agree with SQL. */
  function assertFresh(): void {
    const repo = fx.handle.repo;
    const want = truth(fx.handle.store);
    assert.deepEqual(brief(repo.listCodes()), want);
    for (const w of want) assert.deepEqual(brief([repo.getCode(w.code_id) as CodeWithCounts]), [w]);
  }

  beforeEach(async () => {
    fx = await openFixture();
    src = (await fx.ok('add_text_source', { name: 'one', content: 'aaaa bbbb cccc dddd' })).source_id;
    a = (await fx.ok('create_code', { name: 'Alpha', color: '#111111' })).code_id;
    b = (await fx.ok('create_code', { name: 'beta', color: '#222222' })).code_id;
    await fx.ok('batch_apply_codes', {
      operations: [
        { code_id: a, source_id: src, start_position: 0, end_position: 4 },
        { code_id: a, source_id: src, start_position: 5, end_position: 9 },
        { code_id: b, source_id: src, start_position: 10, end_position: 14 },
      ],
    });
  });
  afterEach(() => fx.close());

  it('a hit returns equal data without querying, in a fresh array each time', () => {
    const repo = fx.handle.repo;
    const first = repo.listCodes();
    assert.deepEqual(brief(first), truth(fx.handle.store));
    assert.deepEqual(
      brief(first).map((c) => [c.name, c.segment_count]),
      [
        ['Alpha', 2],
        ['beta', 1],
      ],
    );
    const store = fx.handle.store;
    const realAll = store.all.bind(store);
    const realGet = store.get.bind(store);
    let queries = 0;
    store.all = ((...args: Parameters<ProjectStore['all']>) => (queries++, realAll(...args))) as ProjectStore['all'];
    store.get = ((...args: Parameters<ProjectStore['get']>) => (queries++, realGet(...args))) as ProjectStore['get'];
    try {
      const second = repo.listCodes();
      assert.deepEqual(second, first);
      assert.notEqual(second, first, 'a fresh array');
      assert.deepEqual(repo.getCode(a), first[0]);
      assert.equal(repo.getCode(9999), undefined);
      assert.equal(queries, 0, 'served from the cache');
    } finally {
      store.all = realAll;
      store.get = realGet;
    }
  });

  it('callers cannot corrupt the cache: the array is theirs, the code objects are frozen', () => {
    const repo = fx.handle.repo;
    const list = repo.listCodes();
    list.pop();
    list.reverse();
    assert.throws(() => {
      (list[0] as { name: string }).name = 'changed';
    }, TypeError);
    assert.throws(() => {
      (repo.getCode(a) as { segment_count: number }).segment_count = 99;
    }, TypeError);
    assertFresh();
    assert.equal(repo.listCodes().length, 2);
  });

  it('every tool write is visible to the next read, with the right counts', async () => {
    const repo = fx.handle.repo;
    assertFresh();
    const c = (await fx.ok('create_code', { name: 'Gamma', color: '#333333' })).code_id;
    assertFresh();
    assert.equal(repo.getCode(c)?.name, 'Gamma');

    const applied = await fx.ok('batch_apply_codes', { operations: [{ code_id: c, source_id: src, start_position: 15, end_position: 19 }] });
    assertFresh();
    assert.equal(repo.getCode(c)?.segment_count, 1);

    await fx.ok('delete_segment', { segment_id: applied.results[0].segment_id });
    assertFresh();
    assert.equal(repo.getCode(c)?.segment_count, 0);

    await fx.ok('merge_codes', { source_code_id: b, target_code_id: a });
    assertFresh();
    assert.equal(repo.getCode(b), undefined);
    assert.equal(repo.getCode(a)?.segment_count, 3);

    await fx.ok('rename_code', { code_id: a, new_name: 'Zeta' });
    assertFresh();
    assert.deepEqual(
      repo.listCodes().map((k) => k.name),
      ['Gamma', 'Zeta'],
    );
  });

  it('apply_av_code and remove_av_segment change av_segment_count at once', async () => {
    const repo = fx.handle.repo;
    const audioFile = path.join(fx.dir, 'walk.mp3');
    fs.writeFileSync(audioFile, Buffer.from('ID3\u0003\u0000fake mp3 bytes for the test', 'latin1'));
    const audio = (await fx.ok('import_file_source', { file_path: audioFile })).source_id;
    assert.equal(repo.getCode(b)?.av_segment_count, 0);
    const seg = await fx.ok('apply_av_code', { code_id: b, source_id: audio, start_ms: 0, end_ms: 1000 });
    assertFresh();
    assert.equal(repo.getCode(b)?.av_segment_count, 1);
    assert.equal(repo.listCodes().find((k) => k.code_id === b)?.av_segment_count, 1);
    await fx.ok('remove_av_segment', { segment_id: seg.segment_id });
    assertFresh();
    assert.equal(repo.getCode(b)?.av_segment_count, 0);
  });

  it('a transaction reads its own writes, and a rollback is visible to the next read', () => {
    const repo = fx.handle.repo;
    const st = { owner: 'alice', session_id: 's', now: '2026-01-01T00:00:00.000Z' };
    const before = brief(repo.listCodes());
    assert.throws(
      () =>
        fx.handle.transaction(() => {
          const id = repo.insertCode({ name: 'Temp', color: '#444444', memo: null, category_id: null }, nameKey('Temp'), st);
          assert.equal(repo.getCode(id)?.name, 'Temp', 'getCode after a write in the same transaction');
          assert.ok(
            repo.listCodes().some((k) => k.name === 'Temp'),
            'listCodes after a write in the same transaction',
          );
          repo.insertSegment({ code_id: id, source_id: src, start_pos: 0, end_pos: 4, text: 'aaaa', memo: null, importance: 0 }, st);
          assert.equal(repo.getCode(id)?.segment_count, 1, 'the cached codebook of before the segment is not served');
          // the last read caches the transaction's own writes: the rollback must invalidate them
          assert.equal(repo.listCodes().find((k) => k.code_id === id)?.segment_count, 1);
          assert.equal(repo.getCode(id)?.segment_count, 1);
          throw new Error('roll back');
        }),
      /roll back/,
    );
    assert.deepEqual(brief(repo.listCodes()), before);
    assert.equal(
      repo.listCodes().find((k) => k.name === 'Temp'),
      undefined,
    );
    assertFresh();
  });

  it('the write generation: every write statement, commit and rollback changes it; reads and checkpoints do not', () => {
    const store = fx.handle.store;
    const g0 = store.writeGeneration;
    store.transaction(() => store.all('SELECT * FROM codes'));
    store.checkpoint();
    assert.equal(store.writeGeneration, g0, 'a read-only transaction and a checkpoint');
    let inside = 0;
    store.transaction(() => {
      store.run("UPDATE codes SET memo = 'm' WHERE id = ?", [a]);
      inside = store.writeGeneration;
      assert.ok(inside > g0, 'a write statement, before its commit');
    });
    assert.ok(store.writeGeneration > inside, 'the commit');
    const g1 = store.writeGeneration;
    assert.throws(() =>
      store.transaction(() => {
        throw new Error('nothing written');
      }),
    );
    assert.ok(store.writeGeneration > g1, 'a rollback');
  });

  it('an import and a restore of rows are visible to the next read', async () => {
    const repo = fx.handle.repo;
    repo.listCodes();
    const file = path.join(fx.dir, 'codebook.txt');
    fs.writeFileSync(file, 'Belonging\n  Home\n  Welcome\nConflict\n');
    await fx.ok('import_data', { format: 'code_list', source_path: file });
    assertFresh();
    assert.deepEqual(
      repo.listCodes().map((k) => k.name),
      ['Alpha', 'beta', 'Conflict', 'Home', 'Welcome'],
    );

    // a restore applies a snapshot's row changes through StoreDumpAccess in one transaction
    repo.listCodes();
    const rows = new StoreDumpAccess(fx.handle.store);
    fx.handle.transaction(() =>
      rows.applyChanges([
        { table: 'segments', primaryKey: ['id'], replace_all: true, delete: [], update: [], insert: [] },
        { table: 'codes', primaryKey: ['id'], delete: [], update: [{ id: a, name: 'Restored', name_key: nameKey('Restored') }], insert: [] },
      ]),
    );
    assertFresh();
    assert.equal(repo.getCode(a)?.name, 'Restored');
    assert.equal(repo.getCode(a)?.segment_count, 0);
  });
});
