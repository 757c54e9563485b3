/**
 * src/domain/coding.ts through the pipeline: applying codes (batch_apply_codes), idempotent re-application,
 * code point positions on astral text, the owner/session/time stamp, and deleting segments.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Caller } from '../../../src/agent/pipeline';
import { openProjectHandle } from '../../../src/cli/compose';
import { FIXED_ISO, openFixture, snapshot, storedEvents, type Fixture } from './projectFixture';

const RED = '#E15759';
const BOB: Caller = { session_id: 'sess-bob-42', client_type: 'ASSISTANT_A_CLI', client_name: 'bob-agent', user: 'bob' };

/**
 * 23 code points, 25 UTF-16 units. Positions (code points):
 *   G0 r1 ü2 ß3 e4 _5 🌱6 _7 a8 u9 s10 _11 𝄞12 _13 K14 ö15 l16 n17 _18 “19 h20 i21 ”22
 */
const ASTRAL = 'Gr\u00FC\u00DFe \u{1F331} aus \u{1D11E} K\u00F6ln \u201Chi\u201D';

describe('domain/coding through the pipeline', () => {
  let fx: Fixture;
  let codeId: number;
  let otherCodeId: number;

  beforeEach(async () => {
    fx = await openFixture();
    codeId = (await fx.ok('create_code', { name: 'Place', color: RED })).code_id;
    otherCodeId = (await fx.ok('create_code', { name: 'Joy', color: RED })).code_id;
  });
  afterEach(async () => {
    await fx.close();
  });

  const op = (code_id: number, source_id: number, start: number, end: number, extra: Record<string, unknown> = {}) => ({
    code_id,
    source_id,
    start_position: start,
    end_position: end,
    ...extra,
  });

  it('stores the exact text of each range of an astral-character source, positions in code points', async () => {
    const src = await fx.ok('add_text_source', { name: 'Brief', content: ASTRAL });
    assert.equal(src.length, 23, 'length counts code points');
    // the reader agrees with the same positions
    const page = await fx.ok('read_source_content', { source_id: src.source_id, start_pos: 12, end_pos: 18 });
    assert.equal(page.content, '\u{1D11E} K\u00F6ln');
    const ranges: [number, number, string][] = [
      [6, 7, '\u{1F331}'],
      [12, 18, '\u{1D11E} K\u00F6ln'],
      [14, 23, 'K\u00F6ln \u201Chi\u201D'],
      [22, 23, '\u201D'],
      [0, 23, ASTRAL],
      [0, 5, 'Gr\u00FC\u00DFe'],
    ];
    const r = await fx.ok('batch_apply_codes', { operations: ranges.map(([s, e]) => op(codeId, src.source_id, s, e)) });
    assert.equal(r.total, 6);
    assert.equal(r.created, 6);
    assert.deepEqual(
      r.results.map((x: { text: string }) => x.text),
      ranges.map(([, , t]) => t),
    );
    const listed = (await fx.ok('list_segments_for_source', { source_id: src.source_id })).segments as { start_pos: number; end_pos: number; text: string }[];
    const got = listed.map((s) => [s.start_pos, s.end_pos, s.text]).sort((a, b) => (a[0] as number) - (b[0] as number) || (a[1] as number) - (b[1] as number));
    const want = [...ranges].sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    assert.deepEqual(got, want);
    // the rows hold the exact text, and it survives both journal replay and a checkpoint of the project file
    const texts = (h: { store: { all<T>(sql: string): T[] } }) =>
      h.store.all<{ text: string }>('SELECT text FROM segments ORDER BY start_pos, end_pos').map((x) => x.text);
    const wantTexts = want.map(([, , t]) => t);
    assert.deepEqual(texts(fx.handle), wantTexts);
    const reopenAndCheck = async (file: string) => {
      const h = await openProjectHandle(file, { checkpointIdleMs: 0, noLock: true });
      try {
        assert.deepEqual(texts(h), wantTexts);
        assert.equal(h.repo.getSourceText(src.source_id), ASTRAL);
      } finally {
        await h.close();
      }
    };
    // 1. a copy taken now holds the writes only in its journal (no idle checkpoint ran)
    assert.ok(fs.statSync(`${fx.handle.path}-journal`).size > 0, 'the writes are in the journal');
    const copy = path.join(fx.dir, 'copy.qda');
    fs.copyFileSync(fx.handle.path, copy);
    fs.copyFileSync(`${fx.handle.path}-journal`, `${copy}-journal`);
    await reopenAndCheck(copy);
    // 2. closing checkpoints into the database file itself
    await fx.handle.close();
    await reopenAndCheck(fx.handle.path);
  });

  it('keeps positions right when the text holds unpaired surrogates (stored as U+FFFD, one code point each)', async () => {
    // a JSON client may send "\\ud83d" alone; UTF-8 storage cannot hold it
    const sent = 'ab\uD83Dcd\uDE00ef';
    const src = await fx.ok('add_text_source', { name: 'Lone', content: sent });
    assert.equal(src.length, 8);
    const r = await fx.ok('batch_apply_codes', {
      operations: [op(codeId, src.source_id, 3, 5), op(codeId, src.source_id, 6, 8), op(otherCodeId, src.source_id, 2, 3)],
    });
    assert.deepEqual(
      r.results.map((x: { text: string }) => x.text),
      ['cd', 'ef', '\uFFFD'],
    );
    const page = await fx.ok('read_source_content', { source_id: src.source_id });
    assert.equal(page.content, 'ab\uFFFDcd\uFFFDef');
    assert.equal(page.total_length, 8);
    assert.equal([...page.content].length, page.total_length, 'the stored text is as long as the reported length');
    const listed = (await fx.ok('list_segments_for_source', { source_id: src.source_id })).segments.map((s: { text: string }) => s.text);
    assert.deepEqual(listed, ['\uFFFD', 'cd', 'ef']);
    // names too
    const named = await fx.ok('create_code', { name: 'x\uD83Dy', color: RED });
    assert.equal(named.name, 'x\uFFFDy');
    assert.equal((await fx.ok('get_code', { code_id: named.code_id })).name, 'x\uFFFDy');
  });

  it('accepts start_pos/end_pos as aliases and ids as numeric strings', async () => {
    const src = await fx.ok('add_text_source', { name: 'S', content: 'hello world' });
    const r = await fx.ok('batch_apply_codes', {
      operations: [{ code_id: String(codeId), source_id: String(src.source_id), start_pos: 6, end_pos: 11 }],
    });
    assert.equal(r.results[0].text, 'world');
    assert.equal(r.results[0].code_id, codeId);
  });

  it('rejects ranges outside the text with INVALID_POSITION: empty, reversed, past the end', async () => {
    const src = await fx.ok('add_text_source', { name: 'Brief', content: ASTRAL });
    for (const [s, e] of [
      [5, 5],
      [7, 6],
      [20, 24],
      [23, 24],
      [0, 25], // 25 is the UTF-16 length, past the 23 code points
    ]) {
      const out = await fx.fails('batch_apply_codes', { operations: [op(codeId, src.source_id, s!, e!)] }, 'INVALID_POSITION');
      assert.ok(!out.envelope.success && /0\.\.23/.test(out.envelope.error), `[${s}, ${e}) message should give the length in code points`);
    }
    await fx.fails('batch_apply_codes', { operations: [op(codeId, src.source_id, -1, 3)] }, 'INVALID_ARGUMENTS');
    assert.equal((await fx.ok('list_segments_for_source', { source_id: src.source_id })).count, 0);
  });

  it('fails with CODE_NOT_FOUND / SOURCE_NOT_FOUND for unknown ids', async () => {
    const src = await fx.ok('add_text_source', { name: 'S', content: 'hello' });
    await fx.fails('batch_apply_codes', { operations: [op(999, src.source_id, 0, 1)] }, 'CODE_NOT_FOUND');
    await fx.fails('batch_apply_codes', { operations: [op(codeId, 999, 0, 1)] }, 'SOURCE_NOT_FOUND');
    await fx.fails('list_segments_for_source', { source_id: 999 }, 'SOURCE_NOT_FOUND');
  });

  it('a second coder applying the same code to the same range gets a segment of their own; their retry is idempotent', async () => {
    const src = await fx.ok('add_text_source', { name: 'S', content: 'hello world' });
    const alice = await fx.ok('batch_apply_codes', { operations: [op(codeId, src.source_id, 0, 5)] });
    const bob = await fx.ok('batch_apply_codes', { operations: [op(codeId, src.source_id, 0, 5)] }, BOB);
    assert.equal(bob.results[0].created, true);
    assert.notEqual(bob.results[0].segment_id, alice.results[0].segment_id);
    const again = await fx.ok('batch_apply_codes', { operations: [op(codeId, src.source_id, 0, 5)] }, BOB);
    assert.deepEqual([again.results[0].created, again.results[0].segment_id], [false, bob.results[0].segment_id]);
    const owners = (await fx.ok('list_segments_for_source', { source_id: src.source_id })).segments.map((s: { owner: string }) => s.owner).sort();
    assert.deepEqual(owners, ['alice', 'bob']);
  });

  it('applying the same code to the same range twice returns the existing segment (created false) and emits nothing', async () => {
    const src = await fx.ok('add_text_source', { name: 'S', content: 'hello world' });
    const first = await fx.call('batch_apply_codes', { operations: [op(codeId, src.source_id, 0, 5)] });
    assert.ok(first.envelope.success);
    const firstData = first.envelope.data as { results: { segment_id: number; created: boolean }[] };
    assert.equal(firstData.results[0]!.created, true);
    assert.equal(first.events.length, 1);

    const second = await fx.call('batch_apply_codes', { operations: [op(codeId, src.source_id, 0, 5, { memo: 'again' })] });
    assert.ok(second.envelope.success);
    const secondData = second.envelope.data as { created: number; existing: number; results: { segment_id: number; created: boolean }[] };
    assert.equal(secondData.results[0]!.created, false);
    assert.equal(secondData.results[0]!.segment_id, firstData.results[0]!.segment_id);
    assert.equal(secondData.created, 0);
    assert.equal(secondData.existing, 1);
    assert.deepEqual(second.events, []);

    // within one batch too
    const third = await fx.ok('batch_apply_codes', { operations: [op(codeId, src.source_id, 6, 11), op(codeId, src.source_id, 6, 11)] });
    assert.deepEqual(
      third.results.map((x: { created: boolean }) => x.created),
      [true, false],
    );
    assert.equal(third.results[0].segment_id, third.results[1].segment_id);

    // a different code, or an overlapping but different range, is a new segment
    const fourth = await fx.ok('batch_apply_codes', { operations: [op(otherCodeId, src.source_id, 0, 5), op(codeId, src.source_id, 0, 4)] });
    assert.deepEqual(
      fourth.results.map((x: { created: boolean }) => x.created),
      [true, true],
    );
    const segs = (await fx.ok('list_segments_for_source', { source_id: src.source_id })).segments;
    assert.equal(segs.length, 4);
    assert.equal(storedEvents(fx.handle).filter((e) => e.event_type === 'coding.segment_coded').length, 4);
  });

  it('records the caller as owner and session, and the pipeline clock as created_at, on every segment', async () => {
    const src = await fx.ok('add_text_source', { name: 'S', content: 'one two three' });
    await fx.ok('batch_apply_codes', { operations: [op(codeId, src.source_id, 0, 3)] }, BOB);
    await fx.ok('batch_apply_codes', { operations: [op(codeId, src.source_id, 4, 7), op(otherCodeId, src.source_id, 8, 13)] });
    const segs = (await fx.ok('list_segments_for_source', { source_id: src.source_id })).segments as {
      text: string;
      owner: string;
      session_id: string;
      created_at: string;
    }[];
    assert.deepEqual(
      segs.map((s) => [s.text, s.owner, s.session_id, s.created_at]),
      [
        ['one', 'bob', 'sess-bob-42', FIXED_ISO],
        ['two', 'alice', 'sess-alice', FIXED_ISO],
        ['three', 'alice', 'sess-alice', FIXED_ISO],
      ],
    );
    // the rows themselves carry the stamp
    const rows = fx.handle.store.all<{ owner: string; session_id: string; created_at: string }>(
      'SELECT owner, session_id, created_at FROM segments ORDER BY start_pos',
    );
    assert.deepEqual(rows[0], { owner: 'bob', session_id: 'sess-bob-42', created_at: FIXED_ISO });
  });

  it('stores memo and importance and rejects importance outside 0..2', async () => {
    const src = await fx.ok('add_text_source', { name: 'S', content: 'hello world' });
    await fx.ok('batch_apply_codes', { operations: [op(codeId, src.source_id, 0, 5, { memo: 'greeting', importance: 2 })] });
    const seg = (await fx.ok('list_segments_for_source', { source_id: src.source_id })).segments[0];
    assert.equal(seg.memo, 'greeting');
    assert.equal(seg.importance, 2);
    await fx.fails('batch_apply_codes', { operations: [op(codeId, src.source_id, 6, 11, { importance: 3 })] }, 'INVALID_ARGUMENTS');
  });

  it('is all-or-nothing: one bad operation fails the batch, names its index, and writes nothing', async () => {
    const src = await fx.ok('add_text_source', { name: 'S', content: 'hello world' });
    const before = await snapshot(fx);
    const out = await fx.fails(
      'batch_apply_codes',
      { operations: [op(codeId, src.source_id, 0, 5), op(otherCodeId, src.source_id, 6, 11), op(codeId, src.source_id, 3, 99)] },
      'INVALID_POSITION',
    );
    assert.ok(!out.envelope.success);
    assert.equal((out.envelope.details as { index: number }).index, 2);
    assert.match(out.envelope.error, /Operation 2/);
    assert.deepEqual(await snapshot(fx), before);
  });

  it('refuses to text-code a media source (no text)', async () => {
    const file = path.join(fx.dir, 'clip.mp3');
    fs.writeFileSync(file, Buffer.from([0xff, 0xfb, 0x90, 0x00]));
    const media = await fx.ok('import_file_source', { file_path: file });
    assert.equal(media.type, 'audio');
    await fx.fails('batch_apply_codes', { operations: [op(codeId, media.source_id, 0, 1)] }, 'INVALID_POSITION');
  });

  it('delete_segment removes one coding and leaves the others; an unknown id is SEGMENT_NOT_FOUND', async () => {
    const src = await fx.ok('add_text_source', { name: 'S', content: 'hello world' });
    const r = await fx.ok('batch_apply_codes', { operations: [op(codeId, src.source_id, 0, 5), op(otherCodeId, src.source_id, 0, 5)] });
    const gone = r.results[0].segment_id;
    const d = await fx.ok('delete_segment', { segment_id: gone });
    assert.deepEqual(d, { deleted: true, segment_id: gone, code_id: codeId, source_id: src.source_id, start_pos: 0, end_pos: 5 });
    const left = (await fx.ok('list_segments_for_source', { source_id: src.source_id })).segments;
    assert.deepEqual(
      left.map((s: { segment_id: number }) => s.segment_id),
      [r.results[1].segment_id],
    );
    await fx.fails('delete_segment', { segment_id: gone }, 'SEGMENT_NOT_FOUND');
    // the code is still there, now unused
    assert.equal((await fx.ok('get_code', { code_id: codeId })).segment_count, 0);
  });
});
