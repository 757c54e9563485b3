/**
 * src/domain/codebook.ts through the pipeline: create, rename, memo, categories, merge and delete of codes,
 * on a real sql.js project file.
 */
import assert from 'node:assert/strict';
import { openFixture, snapshot, type Fixture } from './projectFixture';

const RED = '#E15759';
const BLUE = '#4E79A7';
const GREEN = '#59A14F';
// positions:      0    5 6  10 11  16 17  22
const TEXT = 'alpha beta gamma delta';

interface Seg {
  segment_id: number;
  code_id: number;
  start_pos: number;
  end_pos: number;
  text: string;
}

describe('domain/codebook through the pipeline', () => {
  let fx: Fixture;
  let sourceId: number;

  beforeEach(async () => {
    fx = await openFixture();
    sourceId = (await fx.ok('add_text_source', { name: 'Notes', content: TEXT })).source_id;
  });
  afterEach(async () => {
    await fx.close();
  });

  async function code(name: string, extra: Record<string, unknown> = {}): Promise<number> {
    return (await fx.ok('create_code', { name, color: RED, ...extra })).code_id;
  }
  async function apply(codeId: number, start: number, end: number): Promise<void> {
    await fx.ok('batch_apply_codes', { operations: [{ code_id: codeId, source_id: sourceId, start_position: start, end_position: end }] });
  }
  async function segments(): Promise<Seg[]> {
    return (await fx.ok('list_segments_for_source', { source_id: sourceId })).segments;
  }

  describe('create_code', () => {
    it('returns the new code with its fields and an owner from the caller', async () => {
      const cat = await fx.ok('create_category', { name: 'Feelings' });
      const c = await fx.ok('create_code', { name: 'Trust', color: BLUE, memo: 'when people rely on each other', category_id: cat.category_id });
      assert.equal(typeof c.code_id, 'number');
      assert.equal(c.name, 'Trust');
      assert.equal(c.color.toUpperCase(), BLUE);
      assert.equal(c.memo, 'when people rely on each other');
      assert.equal(c.category_id, cat.category_id);
      assert.deepEqual(c.category, { id: cat.category_id, name: 'Feelings' });
      assert.equal(c.segment_count, 0);
      assert.equal(c.owner, 'alice');
      const again = await fx.ok('get_code', { code_id: c.code_id });
      assert.equal(again.name, 'Trust');
      assert.equal(again.memo, 'when people rely on each other');
    });

    it('rejects an unknown category and a malformed colour without creating anything', async () => {
      await fx.fails('create_code', { name: 'X', color: RED, category_id: 77 }, 'CATEGORY_NOT_FOUND');
      await fx.fails('create_code', { name: 'X', color: 'red' }, 'INVALID_ARGUMENTS');
      await fx.fails('create_code', { name: 'X', color: '#12345' }, 'INVALID_ARGUMENTS');
      assert.equal((await fx.ok('list_codes')).count, 0);
    });

    it('get_code on an unknown id fails with CODE_NOT_FOUND', async () => {
      await fx.fails('get_code', { code_id: 12345 }, 'CODE_NOT_FOUND');
    });
  });

  describe('update_code_memo and move_code_to_category', () => {
    it('sets, then clears a memo with null; a call without memo is refused and keeps the memo', async () => {
      const id = await code('Hope');
      assert.deepEqual(await fx.ok('update_code_memo', { code_id: id, memo: 'first' }), { code_id: id, old_memo: null, new_memo: 'first' });
      assert.deepEqual(await fx.ok('update_code_memo', { code_id: id, memo: null }), { code_id: id, old_memo: 'first', new_memo: null });
      assert.equal((await fx.ok('get_code', { code_id: id })).memo, null);
      await fx.ok('update_code_memo', { code_id: id, memo: 'second' });
      const out = await fx.fails('update_code_memo', { code_id: id }, 'INVALID_ARGUMENTS');
      assert.match(out.envelope.success ? '' : out.envelope.error, /memo is required/);
      assert.equal((await fx.ok('get_code', { code_id: id })).memo, 'second');
      await fx.fails('update_code_memo', { code_id: 999, memo: 'x' }, 'CODE_NOT_FOUND');
    });

    it('moves a code into a category and out again; counts follow', async () => {
      const parent = await fx.ok('create_category', { name: 'Feelings' });
      const child = await fx.ok('create_category', { name: 'Negative', parent_id: parent.category_id });
      const id = await code('Anger');
      await code('Other');
      const r = await fx.ok('move_code_to_category', { code_id: id, category_id: child.category_id });
      assert.deepEqual(r, { code_id: id, old_category_id: null, new_category_id: child.category_id });
      let cats = await fx.ok('list_categories');
      const byName = (n: string) => cats.categories.find((c: { name: string }) => c.name === n);
      assert.equal(byName('Negative').code_count, 1);
      assert.equal(byName('Feelings').code_count, 0);
      assert.equal(byName('Feelings').total_code_count, 1);
      assert.equal(byName('Negative').path, 'Feelings / Negative');
      assert.equal(cats.uncategorized_code_count, 1);
      await fx.ok('move_code_to_category', { code_id: id, category_id: null });
      cats = await fx.ok('list_categories');
      assert.equal(byName('Negative').code_count, 0);
      assert.equal(cats.uncategorized_code_count, 2);
      assert.equal((await fx.ok('get_code', { code_id: id })).category_id, null);
      await fx.fails('move_code_to_category', { code_id: id, category_id: 999 }, 'CATEGORY_NOT_FOUND');
      await fx.fails('move_code_to_category', { code_id: 999, category_id: child.category_id }, 'CODE_NOT_FOUND');
    });
  });

  describe('delete_code', () => {
    it('deletes an unused code without delete_segments', async () => {
      const id = await code('Unused');
      const r = await fx.ok('delete_code', { code_id: id });
      assert.equal(r.deleted, true);
      assert.equal(r.segments_removed, 0);
      await fx.fails('get_code', { code_id: id }, 'CODE_NOT_FOUND');
    });

    it('refuses a code with segments unless delete_segments is true, then deletes the segments with it', async () => {
      const id = await code('Used');
      const keep = await code('Keep');
      await apply(id, 0, 5);
      await apply(id, 6, 10);
      await apply(keep, 0, 5);
      const before = await snapshot(fx);
      await fx.fails('delete_code', { code_id: id }, 'CODE_HAS_SEGMENTS');
      await fx.fails('delete_code', { code_id: id, delete_segments: false }, 'CODE_HAS_SEGMENTS');
      assert.deepEqual(await snapshot(fx), before, 'a refused delete changes nothing');

      const r = await fx.ok('delete_code', { code_id: id, delete_segments: true });
      assert.equal(r.segments_removed, 2);
      assert.equal(r.name, 'Used');
      await fx.fails('get_code', { code_id: id }, 'CODE_NOT_FOUND');
      const left = await segments();
      assert.deepEqual(
        left.map((s) => [s.code_id, s.start_pos, s.end_pos]),
        [[keep, 0, 5]],
      );
    });

    it('fails with CODE_NOT_FOUND for an unknown id', async () => {
      await fx.fails('delete_code', { code_id: 4242, delete_segments: true }, 'CODE_NOT_FOUND');
    });
  });

  describe('merge_codes', () => {
    it('moves every segment to the target, drops exact duplicates, appends the memo, deletes the source code', async () => {
      const a = await code('Alpha', { memo: 'memo of A' });
      const b = await code('Beta', { memo: 'memo of B', color: GREEN });
      const c = await code('Gamma');
      await apply(a, 0, 5); // alpha  (the target has this range too)
      await apply(a, 6, 10); // beta
      await apply(b, 0, 5); // alpha
      await apply(b, 11, 16); // gamma
      await apply(c, 0, 5); // another code on the same range: untouched

      const r = await fx.ok('merge_codes', { source_code_id: a, target_code_id: b });
      assert.equal(r.source_code_id, a);
      assert.equal(r.target_code_id, b);
      assert.equal(r.source_code_name, 'Alpha');
      assert.equal(r.target_code_name, 'Beta');
      assert.equal(r.segments_moved, 2);
      assert.equal(r.duplicates_removed, 1);

      await fx.fails('get_code', { code_id: a }, 'CODE_NOT_FOUND');
      const target = await fx.ok('get_code', { code_id: b });
      assert.equal(target.segment_count, 3);
      assert.equal(target.name, 'Beta');
      assert.ok(target.memo.startsWith('memo of B'), target.memo);
      assert.ok(target.memo.includes('memo of A'), target.memo);
      assert.equal((await fx.ok('get_code', { code_id: c })).segment_count, 1);

      const segs = (await segments()).map((s) => [s.code_id, s.start_pos, s.end_pos, s.text]);
      segs.sort((x, y) => (x[1] as number) - (y[1] as number) || (x[0] as number) - (y[0] as number));
      const expected = [
        [b, 0, 5, 'alpha'],
        [c, 0, 5, 'alpha'],
        [b, 6, 10, 'beta'],
        [b, 11, 16, 'gamma'],
      ];
      expected.sort((x, y) => (x[1] as number) - (y[1] as number) || (x[0] as number) - (y[0] as number));
      assert.deepEqual(segs, expected);
      assert.equal((await fx.ok('list_codes')).count, 2);
    });

    it("gives the target the source's memo when the target has none, and keeps the target's when the source has none", async () => {
      const a = await code('A', { memo: 'only memo' });
      const b = await code('B');
      await fx.ok('merge_codes', { source_code_id: a, target_code_id: b });
      const merged = (await fx.ok('get_code', { code_id: b })).memo as string;
      assert.ok(merged.includes('only memo'), merged);

      const c = await code('C');
      const d = await code('D', { memo: 'keep me' });
      await fx.ok('merge_codes', { source_code_id: c, target_code_id: d });
      assert.equal((await fx.ok('get_code', { code_id: d })).memo, 'keep me');
    });

    it('fails with CODE_NOT_FOUND when either code is unknown, changing nothing', async () => {
      const a = await code('A', { memo: 'm' });
      await apply(a, 0, 5);
      const before = await snapshot(fx);
      await fx.fails('merge_codes', { source_code_id: a, target_code_id: 999 }, 'CODE_NOT_FOUND');
      await fx.fails('merge_codes', { source_code_id: 999, target_code_id: a }, 'CODE_NOT_FOUND');
      assert.deepEqual(await snapshot(fx), before);
    });
  });

  describe('create_category', () => {
    it('nests categories under parent_id and reports the hierarchy', async () => {
      const root = await fx.ok('create_category', { name: 'Place', memo: 'where things happen' });
      assert.equal(root.parent_id, null);
      assert.equal(root.memo, 'where things happen');
      assert.equal(root.owner, 'alice');
      const child = await fx.ok('create_category', { name: 'Garden', parent_id: root.category_id });
      assert.equal(child.parent_id, root.category_id);
      const grand = await fx.ok('create_category', { name: 'Beds', parent_id: String(child.category_id) });
      assert.equal(grand.parent_id, child.category_id);
      const list = await fx.ok('list_categories');
      assert.deepEqual(
        list.categories.map((c: { name: string; depth: number; path: string }) => [c.name, c.depth, c.path]),
        [
          ['Place', 0, 'Place'],
          ['Garden', 1, 'Place / Garden'],
          ['Beds', 2, 'Place / Garden / Beds'],
        ],
      );
      assert.equal(list.tree.length, 1);
      assert.equal(list.tree[0].children[0].children[0].name, 'Beds');
    });
  });
});
