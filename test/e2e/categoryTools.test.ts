/**
 * End-to-end test of the category tools of issue 13, item 4 (rename_category, update_category_memo,
 * delete_category) over HTTP against the real built CLI (`bin/marginalia.js serve`; run `npm run build`
 * first). One server for the file; the `it` blocks run in order and build on each other.
 *
 * Covered: each tool succeeding for the researcher, with its events in the event history; an agent's calls
 * held for approval by the default trust table (rename_category and update_category_memo: category rename,
 * Suggest; delete_category: category delete, Require), nothing running before the researcher approves;
 * the error codes with their HTTP statuses (CATEGORY_NOT_FOUND 404 for the category and for move_codes_to,
 * DUPLICATE_NAME 409, CATEGORY_NOT_EMPTY 409 with both counts, CATEGORY_CYCLE 409, INVALID_ARGUMENTS 400),
 * each failing call leaving categories, codes and the event log as they were; after a delete with
 * move_codes_to the codes and sub-categories are under the target and no code is gone.
 */
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { AS_AGENT, callTool, request, RESEARCHER_CODER, startServer, tmpDir, type ServerProcess } from '../helpers/serverProcess';
import { toolClient } from '../helpers/toolClient';

const UNKNOWN = 987654;

describe('category tools over HTTP (real CLI)', function () {
  this.timeout(120_000);
  let server: ServerProcess | undefined;
  let base = '';
  const t = toolClient(() => base);
  const cat: Record<string, any> = {};
  const code: Record<string, any> = {};

  /** What a failing call must leave unchanged: categories and codes. */
  const codebook = async () => ({ categories: await t.ok('list_categories'), codes: await t.ok('list_codes') });
  const categoryOf = async (codeId: number) => (await t.ok('get_code', { code_id: codeId })).category_id as number | null;

  before(async () => {
    const dir = tmpDir('marginalia-categories-e2e-');
    server = await startServer(path.join(dir, 'study.qda'));
    base = server.base;
    // Feelings > {Anger > {Rage}}, Places, Spare (empty); codes Fear, Worry in Feelings; Fury in Anger; Park in Places; Loose at the root
    cat.feelings = (await t.ok('create_category', { name: 'Feelings' })).category_id;
    cat.anger = (await t.ok('create_category', { name: 'Anger', parent_id: cat.feelings })).category_id;
    cat.rage = (await t.ok('create_category', { name: 'Rage', parent_id: cat.anger })).category_id;
    cat.places = (await t.ok('create_category', { name: 'Places' })).category_id;
    cat.spare = (await t.ok('create_category', { name: 'Spare' })).category_id;
    for (const [key, name, category_id] of [
      ['fear', 'Fear', cat.feelings],
      ['worry', 'Worry', cat.feelings],
      ['fury', 'Fury', cat.anger],
      ['park', 'Park', cat.places],
      ['loose', 'Loose', null],
    ] as const) {
      code[key] = (await t.ok('create_code', { name, color: '#4E79A7', category_id })).code_id;
    }
  });

  after(async () => {
    await server?.stop();
  });

  it('rename_category renames for the researcher; coding.category_renamed is in the event history', async () => {
    const seq = await t.headSeq();
    const r = await t.ok('rename_category', { category_id: cat.feelings, new_name: 'Emotions' });
    assert.deepEqual(r, { category_id: cat.feelings, old_name: 'Feelings', new_name: 'Emotions' });
    const list = (await t.ok('list_categories')).categories;
    assert.equal(list.find((c: any) => c.category_id === cat.feelings).name, 'Emotions');
    assert.equal(await categoryOf(code.fear), cat.feelings, 'its codes stay');
    const events = await t.events(seq);
    assert.deepEqual(
      events.map((e) => [e.event_type, e.aggregate_type, e.aggregate_id, e.payload]),
      [['coding.category_renamed', 'category', String(cat.feelings), { category_id: cat.feelings, old_name: 'Feelings', new_name: 'Emotions' }]],
    );
  });

  it('update_category_memo sets and clears a memo for the researcher; coding.category_updated events', async () => {
    const seq = await t.headSeq();
    assert.deepEqual(await t.ok('update_category_memo', { category_id: cat.places, memo: 'where things happen' }), {
      category_id: cat.places,
      old_memo: null,
      new_memo: 'where things happen',
    });
    assert.equal((await t.ok('list_categories')).categories.find((c: any) => c.category_id === cat.places).memo, 'where things happen');
    assert.deepEqual(await t.ok('update_category_memo', { category_id: cat.places, memo: null }), {
      category_id: cat.places,
      old_memo: 'where things happen',
      new_memo: null,
    });
    assert.equal((await t.ok('list_categories')).categories.find((c: any) => c.category_id === cat.places).memo, null);
    assert.deepEqual(
      (await t.events(seq)).map((e) => [e.event_type, e.payload.old_value, e.payload.new_value]),
      [
        ['coding.category_updated', null, 'where things happen'],
        ['coding.category_updated', 'where things happen', null],
      ],
    );
  });

  it('errors: unknown category, duplicate name, non-empty without move_codes_to, unknown or inner move_codes_to, missing memo; each writes nothing', async () => {
    const failsCleanly = (name: string, args: Record<string, unknown>, codeName: string) =>
      t.writesNothing(codebook, () => t.fails(name, args, codeName), `${name} ${codeName}`);
    await failsCleanly('rename_category', { category_id: UNKNOWN, new_name: 'X' }, 'CATEGORY_NOT_FOUND');
    await failsCleanly('update_category_memo', { category_id: UNKNOWN, memo: 'x' }, 'CATEGORY_NOT_FOUND');
    await failsCleanly('delete_category', { category_id: UNKNOWN }, 'CATEGORY_NOT_FOUND');
    await failsCleanly('rename_category', { category_id: cat.places, new_name: 'ANGER' }, 'DUPLICATE_NAME');
    await failsCleanly('rename_category', { category_id: cat.places, new_name: '' }, 'INVALID_ARGUMENTS');
    await failsCleanly('update_category_memo', { category_id: cat.places }, 'INVALID_ARGUMENTS');
    await failsCleanly('delete_category', { category_id: cat.feelings }, 'CATEGORY_NOT_EMPTY');
    const notEmpty = await t.fails('delete_category', { category_id: cat.feelings }, 'CATEGORY_NOT_EMPTY');
    assert.match(notEmpty.error, /"Emotions" holds 2 codes and 1 sub-category/);
    assert.deepEqual(notEmpty.details, { code_count: 2, sub_category_count: 1 });
    const dup = await t.fails('rename_category', { category_id: cat.places, new_name: 'anger' }, 'DUPLICATE_NAME');
    assert.match(dup.error, new RegExp(`"Anger" already exists \\(category_id ${cat.anger}\\)`));
    await failsCleanly('delete_category', { category_id: cat.feelings, move_codes_to: UNKNOWN }, 'CATEGORY_NOT_FOUND');
    await failsCleanly('delete_category', { category_id: cat.feelings, move_codes_to: cat.rage }, 'CATEGORY_CYCLE');
    await failsCleanly('delete_category', { category_id: cat.feelings, move_codes_to: cat.feelings }, 'INVALID_ARGUMENTS');
  });

  it("an agent's rename_category and update_category_memo (Suggest) and delete_category (Require) wait for approval (HTTP 202)", async () => {
    const before = await codebook();
    const seq = await t.headSeq();
    const rename = await t.pending('rename_category', { category_id: cat.places, new_name: 'Locations' }, AS_AGENT);
    const memo = await t.pending('update_category_memo', { category_id: cat.places, memo: 'sites of the study' }, AS_AGENT);
    const del = await t.pending('delete_category', { category_id: cat.spare }, AS_AGENT);
    // the level each was held at, as the pending list reports it
    const held = (await callTool(base, 'list_pending_approvals', {})).body.data;
    const levels = Object.fromEntries(held.approvals.map((p: any) => [p.request_id, p.trust_level]));
    assert.deepEqual([levels[rename], levels[memo], levels[del]], ['suggest', 'suggest', 'require'], JSON.stringify(held).slice(0, 600));
    assert.deepEqual(await codebook(), before, 'nothing ran yet');
    assert.deepEqual(
      (await t.events(seq, 'coding.*')).map((e) => e.event_type),
      [],
      'no coding event before approval',
    );
    assert.deepEqual(await t.approve(rename), { category_id: cat.places, old_name: 'Places', new_name: 'Locations' });
    // the memo request read the category before the rename just approved: the version check names the change
    // (issue 14, item 5), and the researcher approves it as edited (here: the same arguments) after looking
    const stale = await request(base, 'POST', `/approvals/${memo}/approve`, {});
    assert.equal(stale.status, 409, JSON.stringify(stale.body));
    assert.equal(stale.body.error_code, 'VERSION_CONFLICT');
    assert.match(stale.body.error, /category 'Locations' changed .*coding\.category_renamed/);
    const edited = await request(base, 'POST', `/approvals/${memo}/approve`, { arguments: { category_id: cat.places, memo: 'sites of the study' } });
    assert.equal(edited.status, 200, JSON.stringify(edited.body));
    assert.deepEqual(edited.body.data.result, { category_id: cat.places, old_memo: null, new_memo: 'sites of the study' });
    const deleted = await t.approve(del);
    assert.deepEqual([deleted.deleted, deleted.name, deleted.codes_moved], [true, 'Spare', 0]);
    const coding = await t.events(seq, 'coding.*');
    assert.deepEqual(
      coding.map((e) => e.event_type),
      ['coding.category_renamed', 'coding.category_updated', 'coding.category_deleted'],
    );
    assert.ok(
      coding.every((e) => e.caused_by.session_id !== 'local'),
      JSON.stringify(coding.map((e) => e.caused_by)),
    );
    assert.ok(!(await t.ok('list_categories')).categories.some((c: any) => c.category_id === cat.spare));
  });

  it('delete_category with move_codes_to: the codes and the sub-category are under the target, no code is gone; the events are in the history', async () => {
    const seq = await t.headSeq();
    const codesBefore = (await t.ok('list_codes')).count;
    const r = await t.ok('delete_category', { category_id: cat.feelings, move_codes_to: cat.places });
    assert.deepEqual(r, {
      deleted: true,
      category_id: cat.feelings,
      name: 'Emotions',
      moved_to: cat.places,
      code_ids: [code.fear, code.worry].sort((a: number, b: number) => a - b),
      codes_moved: 2,
      sub_category_ids: [cat.anger],
      sub_categories_moved: 1,
    });
    assert.equal((await t.ok('list_codes')).count, codesBefore);
    for (const c of [code.fear, code.worry, code.park]) assert.equal(await categoryOf(c), cat.places);
    assert.equal(await categoryOf(code.fury), cat.anger);
    const cats = (await t.ok('list_categories')).categories;
    // tree order: Locations, then Anger inside it, then Rage inside Anger
    assert.deepEqual(
      cats.map((c: any) => [c.name, c.parent_id, c.code_count]),
      [
        ['Locations', null, 3],
        ['Anger', cat.places, 1],
        ['Rage', cat.anger, 0],
      ],
    );
    const events = await t.events(seq);
    assert.deepEqual(
      events.map((e) => e.event_type),
      ['coding.code_moved', 'coding.code_moved', 'coding.category_deleted'],
    );
    assert.deepEqual(events[2].payload, {
      category_id: cat.feelings,
      name: 'Emotions',
      parent_id: null,
      memo: null,
      moved_to: cat.places,
      code_ids: [code.fear, code.worry].sort((a: number, b: number) => a - b),
      sub_category_ids: [cat.anger],
      // who made it, kept when undo makes it again
      owner: RESEARCHER_CODER,
    });
    assert.equal(new Set(events.map((e) => e.metadata.correlation_id)).size, 1, 'one call, one correlation id');
  });

  it('delete_category with move_codes_to null puts the codes at the root and the sub-categories at the top level', async () => {
    const r = await t.ok('delete_category', { category_id: cat.anger, move_codes_to: null });
    assert.deepEqual([r.moved_to, r.code_ids, r.sub_category_ids], [null, [code.fury], [cat.rage]]);
    assert.equal(await categoryOf(code.fury), null);
    assert.equal((await t.ok('list_categories')).categories.find((c: any) => c.category_id === cat.rage).parent_id, null);
    assert.equal(await categoryOf(code.loose), null);
  });
});
