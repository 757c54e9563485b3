/**
 * src/domain/categories.ts through the tools rename_category, update_category_memo and delete_category on a
 * real sql.js project: results, stored state (list_categories, list_codes), events, and every refusal
 * changing nothing (`snapshot` before and after).
 */
import assert from 'node:assert/strict';
import { openFixture, snapshot, storedEvents, type Fixture } from './projectFixture';

const BLUE = '#4E79A7';

describe('categories: rename, memo, delete (src/domain/categories.ts)', () => {
  let fx: Fixture;
  // Feelings > { Anger > {Rage}, Joy-cat }, Places; codes: Fear and Worry in Feelings, Fury in Anger, Park in Places
  let feelings: number, anger: number, rage: number, joyCat: number, places: number;
  let fear: number, worry: number, fury: number, park: number;

  beforeEach(async () => {
    fx = await openFixture();
    const cat = async (name: string, parent_id?: number) =>
      (await fx.ok('create_category', { name, ...(parent_id ? { parent_id } : {}) })).category_id as number;
    const code = async (name: string, category_id?: number) =>
      (await fx.ok('create_code', { name, color: BLUE, ...(category_id ? { category_id } : {}) })).code_id as number;
    feelings = await cat('Feelings');
    anger = await cat('Anger', feelings);
    rage = await cat('Rage', anger);
    joyCat = await cat('Joy', feelings);
    places = await cat('Places');
    fear = await code('Fear', feelings);
    worry = await code('Worry', feelings);
    fury = await code('Fury', anger);
    park = await code('Park', places);
  });
  afterEach(async () => fx.close());

  const categories = async () => (await fx.ok('list_categories')).categories.map((c: any) => [c.name, c.parent_id, c.code_count]).sort();
  const categoryOf = async (codeId: number) => (await fx.ok('get_code', { code_id: codeId })).category_id as number | null;
  const newEvents = (since: number) => storedEvents(fx.handle).filter((e) => e.seq > since);
  const head = () => storedEvents(fx.handle).at(-1)?.seq ?? 0;

  describe('rename_category', () => {
    it('renames, keeps codes and sub-categories, emits coding.category_renamed', async () => {
      const seq = head();
      const r = await fx.ok('rename_category', { category_id: feelings, new_name: '  Emotions ' });
      assert.deepEqual(r, { category_id: feelings, old_name: 'Feelings', new_name: 'Emotions' });
      const list = (await fx.ok('list_categories')).categories;
      assert.equal(list.find((c: any) => c.category_id === feelings).name, 'Emotions');
      assert.equal(list.find((c: any) => c.category_id === anger).path, 'Emotions / Anger');
      assert.equal(await categoryOf(fear), feelings);
      assert.deepEqual(
        newEvents(seq).map((e) => [e.event_type, e.aggregate_type, e.aggregate_id, e.payload]),
        [['coding.category_renamed', 'category', String(feelings), { category_id: feelings, old_name: 'Feelings', new_name: 'Emotions' }]],
      );
    });

    it('a change of case only is a rename of the same category; the old name is then free', async () => {
      await fx.ok('rename_category', { category_id: places, new_name: 'PLACES' });
      await fx.ok('create_category', { name: 'Sites' });
      await fx.ok('rename_category', { category_id: places, new_name: 'Locations' });
      assert.ok((await categories()).some((c: any) => c[0] === 'Locations'));
      await fx.ok('create_category', { name: 'places' });
    });

    it('refuses a duplicate name (DUPLICATE_NAME naming the other), an unknown category, an empty or too long name, changing nothing', async () => {
      const before = await snapshot(fx);
      const dup = await fx.fails('rename_category', { category_id: places, new_name: 'anger' }, 'DUPLICATE_NAME');
      assert.ok(!dup.envelope.success && dup.envelope.error.includes(`"Anger" already exists (category_id ${anger})`), JSON.stringify(dup.envelope));
      await fx.fails('rename_category', { category_id: 999, new_name: 'X' }, 'CATEGORY_NOT_FOUND');
      await fx.fails('rename_category', { category_id: places, new_name: '   ' }, 'INVALID_ARGUMENTS');
      await fx.fails('rename_category', { category_id: places, new_name: 'x'.repeat(101) }, 'INVALID_ARGUMENTS');
      assert.deepEqual(await snapshot(fx), before);
    });
  });

  describe('update_category_memo', () => {
    it('sets and clears (null) the memo, emitting coding.category_updated; memo is required', async () => {
      const seq = head();
      assert.deepEqual(await fx.ok('update_category_memo', { category_id: anger, memo: 'hostile feelings' }), {
        category_id: anger,
        old_memo: null,
        new_memo: 'hostile feelings',
      });
      assert.equal((await fx.ok('list_categories')).categories.find((c: any) => c.category_id === anger).memo, 'hostile feelings');
      assert.deepEqual(await fx.ok('update_category_memo', { category_id: anger, memo: null }), {
        category_id: anger,
        old_memo: 'hostile feelings',
        new_memo: null,
      });
      assert.equal((await fx.ok('list_categories')).categories.find((c: any) => c.category_id === anger).memo, null);
      assert.deepEqual(
        newEvents(seq).map((e) => [e.event_type, e.payload]),
        [
          ['coding.category_updated', { category_id: anger, field: 'memo', old_value: null, new_value: 'hostile feelings' }],
          ['coding.category_updated', { category_id: anger, field: 'memo', old_value: 'hostile feelings', new_value: null }],
        ],
      );
      await fx.fails('update_category_memo', { category_id: anger }, 'INVALID_ARGUMENTS');
      await fx.fails('update_category_memo', { category_id: 999, memo: 'x' }, 'CATEGORY_NOT_FOUND');
    });
  });

  describe('delete_category', () => {
    it('deletes an empty category; move_codes_to is then not needed', async () => {
      const seq = head();
      const r = await fx.ok('delete_category', { category_id: rage });
      assert.deepEqual(r, {
        deleted: true,
        category_id: rage,
        name: 'Rage',
        moved_to: null,
        code_ids: [],
        codes_moved: 0,
        sub_category_ids: [],
        sub_categories_moved: 0,
      });
      assert.ok(!(await categories()).some((c: any) => c[0] === 'Rage'));
      assert.deepEqual(
        newEvents(seq).map((e) => [e.event_type, e.payload]),
        [
          [
            'coding.category_deleted',
            { category_id: rage, name: 'Rage', parent_id: anger, memo: null, moved_to: null, code_ids: [], sub_category_ids: [], owner: 'alice' },
          ],
        ],
      );
    });

    it('refuses a category with codes or sub-categories without move_codes_to (CATEGORY_NOT_EMPTY with both counts), changing nothing', async () => {
      const before = await snapshot(fx);
      const out = await fx.fails('delete_category', { category_id: feelings }, 'CATEGORY_NOT_EMPTY');
      assert.ok(!out.envelope.success);
      assert.match(out.envelope.error, /"Feelings" holds 2 codes and 2 sub-categories; pass move_codes_to/);
      assert.deepEqual((out.envelope as any).details, { code_count: 2, sub_category_count: 2 });
      const one = await fx.fails('delete_category', { category_id: places }, 'CATEGORY_NOT_EMPTY');
      assert.match(one.envelope.success ? '' : one.envelope.error, /"Places" holds 1 code;/);
      const sub = await fx.fails('delete_category', { category_id: anger, move_codes_to: undefined }, 'CATEGORY_NOT_EMPTY');
      assert.match(sub.envelope.success ? '' : sub.envelope.error, /holds 1 code and 1 sub-category;/);
      assert.deepEqual(await snapshot(fx), before);
    });

    it('with move_codes_to a category: its codes and sub-categories go there, no code is deleted', async () => {
      const seq = head();
      const r = await fx.ok('delete_category', { category_id: feelings, move_codes_to: places });
      assert.deepEqual(r, {
        deleted: true,
        category_id: feelings,
        name: 'Feelings',
        moved_to: places,
        code_ids: [fear, worry],
        codes_moved: 2,
        sub_category_ids: [anger, joyCat],
        sub_categories_moved: 2,
      });
      assert.deepEqual(await categories(), [
        ['Anger', places, 1],
        ['Joy', places, 0],
        ['Places', null, 3],
        ['Rage', anger, 0],
      ]);
      for (const c of [fear, worry, park]) assert.equal(await categoryOf(c), places);
      assert.equal(await categoryOf(fury), anger, 'a sub-category keeps its own codes');
      assert.equal((await fx.ok('list_codes')).count, 4);
      assert.deepEqual(
        newEvents(seq).map((e) => [e.event_type, e.payload]),
        [
          ['coding.code_moved', { code_id: fear, old_category_id: feelings, new_category_id: places }],
          ['coding.code_moved', { code_id: worry, old_category_id: feelings, new_category_id: places }],
          [
            'coding.category_deleted',
            {
              category_id: feelings,
              name: 'Feelings',
              parent_id: null,
              memo: null,
              moved_to: places,
              code_ids: [fear, worry],
              sub_category_ids: [anger, joyCat],
              owner: 'alice',
            },
          ],
        ],
      );
    });

    it('with move_codes_to null: codes are uncategorised and sub-categories become roots', async () => {
      const r = await fx.ok('delete_category', { category_id: anger, move_codes_to: null });
      assert.equal(r.moved_to, null);
      assert.deepEqual([r.code_ids, r.sub_category_ids], [[fury], [rage]]);
      assert.equal(await categoryOf(fury), null);
      assert.deepEqual(
        (await categories()).find((c: any) => c[0] === 'Rage'),
        ['Rage', null, 0],
      );
    });

    it('refuses an unknown move_codes_to, the category itself, and a category inside it, changing nothing', async () => {
      const before = await snapshot(fx);
      await fx.fails('delete_category', { category_id: feelings, move_codes_to: 999 }, 'CATEGORY_NOT_FOUND');
      await fx.fails('delete_category', { category_id: rage, move_codes_to: 999 }, 'CATEGORY_NOT_FOUND');
      await fx.fails('delete_category', { category_id: feelings, move_codes_to: feelings }, 'INVALID_ARGUMENTS');
      const cycle = await fx.fails('delete_category', { category_id: feelings, move_codes_to: rage }, 'CATEGORY_CYCLE');
      assert.match(cycle.envelope.success ? '' : cycle.envelope.error, /inside "Feelings"/);
      await fx.fails('delete_category', { category_id: 999 }, 'CATEGORY_NOT_FOUND');
      assert.deepEqual(await snapshot(fx), before);
    });
  });
});
