/**
 * Undo and redo of a caller's own actions (issue 13 item 1; src/domain/undoRedo.ts) on a real project through
 * the one pipeline: for each supported action, act -> undo gives back exactly the rows before -> redo gives
 * back the rows after (items made again get new ids: compared without their ids, references by name); the
 * stacks are per caller and come from the event log; a new action clears redo; nothing to undo / redo; an
 * action that cannot be undone is refused and not skipped; a later change by someone else blocks an undo and
 * nothing is written.
 */
import assert from 'node:assert/strict';
import * as path from 'node:path';
import type { Caller } from '../../../src/agent/pipeline';
import { createPipeline, headlessHost, openProjectHandle } from '../../../src/cli/compose';
import { silentLogger } from '../../../src/core/log';
import { previewNext } from '../../../src/domain/undoRedo';
import { ALICE, fixedClock, openFixture, storedEvents, type Fixture } from './projectFixture';

const BOB: Caller = { session_id: 'sess-bob', client_type: 'REST_CLIENT', client_name: 'unit-test', user: 'bob' };
/** builds the study, so its imports are on nobody's stack under test */
const SETUP: Caller = { session_id: 'sess-setup', client_type: 'REST_CLIENT', client_name: 'unit-test', user: 'setup' };

type Row = Record<string, unknown>;

/** Every row of `table`, without the columns in `omit`, sorted by their JSON (a stable order independent of ids). */
function rows(fx: Fixture, table: string, omit: string[] = []): Row[] {
  return fx.handle.store
    .all<Row>(`SELECT * FROM ${table}`)
    .map((r) => Object.fromEntries(Object.entries(r).filter(([k]) => !omit.includes(k))))
    .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
}

/**
 * The project's rows that undo restores. Left out: the ids and GUIDs of items undo makes again (references compared
 * by name; a re-made item is a new entity to a merge of two histories), codes' `version` (it counts edits), the session of categories and folders made again (their events
 * keep the owner only) and who set a document attribute (source.attribute_set does not record the previous
 * setter: a value put back is stamped with the caller).
 */
function state(fx: Fixture): Record<string, Row[]> {
  const catName = new Map(fx.handle.store.all<{ id: number; name: string }>('SELECT id, name FROM categories').map((r) => [r.id, r.name]));
  const codeName = new Map(fx.handle.store.all<{ id: number; name: string }>('SELECT id, name FROM codes').map((r) => [r.id, r.name]));
  const caseName = new Map(fx.handle.store.all<{ id: number; name: string }>('SELECT id, name FROM cases').map((r) => [r.id, r.name]));
  const byName = (m: Map<number, string>, v: unknown) => (v === null ? null : (m.get(v as number) ?? `?${String(v)}`));
  return {
    codes: rows(fx, 'codes', ['id', 'guid', 'version']).map((r) => ({ ...r, category_id: byName(catName, r.category_id) })),
    categories: rows(fx, 'categories', ['id', 'guid', 'session_id']).map((r) => ({ ...r, parent_id: byName(catName, r.parent_id) })),
    segments: rows(fx, 'segments', ['id', 'guid']).map((r) => ({ ...r, code_id: byName(codeName, r.code_id) })),
    sources: rows(fx, 'sources'),
    folders: rows(fx, 'folders', ['id', 'guid', 'session_id']),
    source_attributes: rows(fx, 'source_attributes', ['owner', 'session_id']),
    cases: rows(fx, 'cases', ['id', 'guid']),
    case_sources: rows(fx, 'case_sources', ['id', 'guid']).map((r) => ({ ...r, case_id: byName(caseName, r.case_id) })),
    case_segments: rows(fx, 'case_segments', ['id', 'guid']).map((r) => ({ ...r, case_id: byName(caseName, r.case_id) })),
    case_attributes: rows(fx, 'case_attributes').map((r) => ({ ...r, case_id: byName(caseName, r.case_id) })),
  };
}

describe("undo and redo of the caller's own actions (undo, redo)", () => {
  let fx: Fixture;
  let src: number;
  let src2: number;
  let food: number;
  let trust: number;
  let catA: number;
  let catB: number;

  beforeEach(async () => {
    fx = await openFixture();
    src = (await fx.ok('add_text_source', { name: 'interview-04', content: 'We grew 🌱 beans and we shared food with neighbours.' }, SETUP)).source_id;
    src2 = (await fx.ok('add_text_source', { name: 'interview-05', content: 'Nobody trusted the market.' }, SETUP)).source_id;
    catA = (await fx.ok('create_category', { name: 'Livelihoods' }, SETUP)).category_id;
    catB = (await fx.ok('create_category', { name: 'Social' }, SETUP)).category_id;
    food = (await fx.ok('create_code', { name: 'Food security', color: '#4E79A7', memo: 'having enough', category_id: catA }, SETUP)).code_id;
    trust = (await fx.ok('create_code', { name: 'Trust', color: '#E15759' }, SETUP)).code_id;
  });
  afterEach(async () => {
    await fx.close();
  });

  /** act as ALICE, undo, redo, comparing the state to the before- and after-state each time */
  async function roundTrip(act: () => Promise<unknown>, expected: { description: string | RegExp }) {
    const before = state(fx);
    await act();
    const after = state(fx);
    assert.notDeepEqual(after, before, 'the action changed something');
    const undone = (await fx.ok('undo')).undone;
    if (typeof expected.description === 'string') assert.equal(undone.description, expected.description);
    else assert.match(undone.description, expected.description);
    assert.ok(undone.changes.length > 0);
    assert.deepEqual(state(fx), before, 'undo restores the rows before the action');
    const redone = (await fx.ok('redo')).redone;
    assert.equal(redone.correlation_id, undone.correlation_id);
    assert.equal(redone.description, undone.description);
    assert.deepEqual(state(fx), after, 'redo restores the rows after the action');
    // and once more: the redo is an action that undoes like any other
    await fx.ok('undo');
    assert.deepEqual(state(fx), before, 'undoing the redo restores the rows before');
    await fx.ok('redo');
    assert.deepEqual(state(fx), after);
    return undone;
  }

  it('apply_code: undo removes the coding (the exact segment list before), redo codes it again; the events carry undo_of / redo_of', async () => {
    const before = rows(fx, 'segments');
    const seg = await fx.ok('apply_code', { code_id: food, source_id: src, start_position: 8, end_position: 16, memo: 'first', importance: 2 });
    const applied = storedEvents(fx.handle).at(-1)!;
    const out = await fx.call('undo', {});
    assert.ok(out.envelope.success, JSON.stringify(out.envelope));
    const undone = (out.envelope.data as any).undone;
    assert.deepEqual(undone, {
      correlation_id: applied.correlation_id,
      description: "coded 'Food security' in interview-04",
      changes: [
        {
          event_type: 'coding.segment_uncoded',
          aggregate_type: 'segment',
          aggregate_id: String(seg.segment_id),
          description: "removed the coding 'Food security' from interview-04",
        },
      ],
    });
    assert.deepEqual(rows(fx, 'segments'), before);
    assert.equal(out.events.length, 1);
    assert.equal(out.events[0]!.payload.undo_of, applied.correlation_id);
    assert.equal(out.events[0]!.caused_by.user, 'alice');
    const redo = await fx.call('redo', {});
    assert.ok(redo.envelope.success, JSON.stringify(redo.envelope));
    assert.equal(redo.events[0]!.event_type, 'coding.segment_coded');
    assert.equal(redo.events[0]!.payload.redo_of, applied.correlation_id);
    assert.match(
      String(rows(fx, 'segments')[0]?.guid),
      /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/,
      'the coding made again has a GUID of its own',
    );
    const segs = rows(fx, 'segments', ['id', 'guid']);
    assert.deepEqual(segs, [
      {
        code_id: food,
        source_id: src,
        start_pos: 8,
        end_pos: 16,
        text: '🌱 beans ',
        memo: 'first',
        importance: 2,
        owner: 'alice',
        session_id: 'sess-alice',
        coder_role: 'agent',
        created_at: '2026-01-02T03:04:05.678Z',
        updated_at: '2026-01-02T03:04:05.678Z',
      },
    ]);
  });

  it('batch_apply_codes: one undo removes the whole batch; described as one action', async () => {
    await roundTrip(
      () =>
        fx.ok('batch_apply_codes', {
          operations: [
            { code_id: food, source_id: src, start_position: 0, end_position: 7 },
            { code_id: trust, source_id: src2, start_position: 0, end_position: 14 },
          ],
        }),
      { description: "coded 2 passages with 'Food security', 'Trust' in interview-04, interview-05" },
    );
  });

  it("remove_code: undo puts the coding back with its source, positions, code, memo, importance and owner (bob's coding removed by alice stays bob's); a new segment_id", async () => {
    const seg = await fx.ok('apply_code', { code_id: trust, source_id: src, start_position: 3, end_position: 9, memo: 'bob says', importance: 1 }, BOB);
    const undone = await roundTrip(() => fx.ok('remove_code', { segment_id: seg.segment_id }), { description: "removed the coding 'Trust' from interview-04" });
    assert.equal(undone.changes[0].event_type, 'coding.segment_coded');
    const back = rows(fx, 'segments');
    assert.equal(back.length, 0, 'redo removed it again');
    await fx.ok('undo');
    const restored = rows(fx, 'segments');
    assert.equal(restored.length, 1);
    assert.equal(restored[0]!.owner, 'bob');
    assert.notEqual(restored[0]!.id, seg.segment_id, 'the coding comes back with a new segment_id');
  });

  it('segment, code, category and source memos: undo restores the previous memo, redo the new one', async () => {
    const seg = await fx.ok('apply_code', { code_id: food, source_id: src, start_position: 0, end_position: 2, memo: 'old' }, SETUP);
    await roundTrip(() => fx.ok('update_segment_memo', { segment_id: seg.segment_id, memo: 'new' }), {
      description: "changed the memo of a 'Food security' passage in interview-04",
    });
    await roundTrip(() => fx.ok('update_code_memo', { code_id: food, memo: null }), { description: "changed the memo of the code 'Food security'" });
    await roundTrip(() => fx.ok('update_category_memo', { category_id: catA, memo: 'how people live' }), {
      description: "changed the memo of the category 'Livelihoods'",
    });
    await roundTrip(() => fx.ok('update_memo', { source_id: src, memo: 'garden interview' }), { description: 'changed the memo of interview-04' });
  });

  it('create, rename, recolour and move a code; delete an unused code', async () => {
    await roundTrip(() => fx.ok('create_code', { name: 'Hope', color: '#59A14F', memo: 'm', category_id: catB }), { description: "created the code 'Hope'" });
    await roundTrip(() => fx.ok('rename_code', { code_id: food, new_name: 'Food' }), { description: "renamed the code 'Food security' to 'Food'" });
    await roundTrip(() => fx.ok('set_code_color', { code_id: food, color: '#000000' }), { description: "recoloured the code 'Food' from #4E79A7 to #000000" });
    await roundTrip(() => fx.ok('move_code_to_category', { code_id: food, category_id: catB }), {
      description: "moved the code 'Food' to the category 'Social'",
    });
    await roundTrip(() => fx.ok('move_code', { code_id: food, category_id: null }), { description: "moved the code 'Food' to the top level" });
    await roundTrip(() => fx.ok('delete_code', { code_id: trust }), { description: "deleted the code 'Trust'" });
  });

  it('category create, rename and delete (its codes and sub-categories go back into it)', async () => {
    await roundTrip(() => fx.ok('create_category', { name: 'Emotions', parent_id: catB, memo: 'feelings' }), {
      description: "created the category 'Emotions'",
    });
    await roundTrip(() => fx.ok('rename_category', { category_id: catA, new_name: 'Living' }), {
      description: "renamed the category 'Livelihoods' to 'Living'",
    });
    const sub = (await fx.ok('create_category', { name: 'Farming', parent_id: catA }, SETUP)).category_id;
    await fx.ok('create_code', { name: 'Seeds', color: '#111111', category_id: catA }, SETUP);
    await fx.ok('update_category_memo', { category_id: catA, memo: 'a memo' }, SETUP);
    const undone = await roundTrip(() => fx.ok('delete_category', { category_id: catA, move_codes_to: catB }), {
      description: "deleted the category 'Living'",
    });
    assert.ok(
      undone.changes.some((c: any) => c.event_type === 'coding.category_updated' && c.description === "moved the category 'Farming' to the category 'Living'"),
      JSON.stringify(undone.changes),
    );
    void sub;
  });

  it('cases: create, attributes set and removed, members added, delete (made again with memo, members and attributes)', async () => {
    await roundTrip(() => fx.ok('create_case', { name: 'P01', memo: 'first' }), { description: "created the case 'P01'" });
    const p2 = (await fx.ok('create_case', { name: 'P02', memo: 'second' }, SETUP)).case_id;
    await roundTrip(() => fx.ok('set_case_attribute', { case_id: p2, attribute_name: 'age', value: 34 }), {
      description: "set the attribute 'age' of the case 'P02' to 34",
    });
    await fx.ok('set_case_attribute', { case_id: p2, attribute_name: 'region', value: 'North' }, SETUP);
    await roundTrip(() => fx.ok('set_case_attribute', { case_id: p2, attribute_name: 'region', value: 'South' }), {
      description: "set the attribute 'region' of the case 'P02' to 'South'",
    });
    await roundTrip(() => fx.ok('add_source_to_case', { case_id: p2, source_id: src }), { description: "added interview-04 to the case 'P02'" });
    await roundTrip(() => fx.ok('add_segment_to_case', { case_id: p2, source_id: src2, start_pos: 0, end_pos: 6 }), {
      description: "added a passage of interview-05 to the case 'P02'",
    });
    await fx.ok('add_source_to_case', { case_id: p2, source_id: src }, SETUP);
    await fx.ok('add_segment_to_case', { case_id: p2, source_id: src2, start_pos: 7, end_pos: 14 }, SETUP);
    await roundTrip(() => fx.ok('delete_case', { case_id: p2 }), { description: "deleted the case 'P02'" });
  });

  it('sources: rename, move to a folder, document attributes set and removed', async () => {
    const folder = (await fx.ok('create_folder', { name: 'Round 1' }, SETUP)).folder_id;
    await roundTrip(() => fx.ok('rename_source', { source_id: src, new_name: 'interview-4' }), {
      description: 'renamed the source interview-04 to interview-4',
    });
    await roundTrip(() => fx.ok('move_source_to_folder', { source_id: src, folder_id: folder }), { description: "moved interview-4 to the folder 'Round 1'" });
    await roundTrip(() => fx.ok('set_source_attribute', { source_id: src, attribute_name: 'Region', value: 'North' }), {
      description: "set the document attribute 'Region' of interview-4 to 'North'",
    });
    await fx.ok('set_source_attribute', { source_id: src, attribute_name: 'Year', value: 2024 }, SETUP);
    await roundTrip(() => fx.ok('set_source_attribute', { source_id: src, attribute_name: 'Year', value: null }), {
      description: "removed the document attribute 'Year' of interview-4",
    });
    await roundTrip(() => fx.ok('create_folder', { name: 'Round 2', parent_id: folder }), { description: "created the folder 'Round 2'" });
    await roundTrip(() => fx.ok('rename_folder', { folder_id: folder, new_name: 'First round' }), {
      description: "renamed the folder 'Round 1' to 'First round'",
    });
  });

  it('undoes in reverse order of the actions, one per call, and redoes in the order undone', async () => {
    const s0 = state(fx);
    await fx.ok('rename_code', { code_id: food, new_name: 'Food' });
    const s1 = state(fx);
    await fx.ok('apply_code', { code_id: food, source_id: src, start_position: 0, end_position: 2 });
    const s2 = state(fx);
    assert.equal((await fx.ok('undo')).undone.description, "coded 'Food' in interview-04");
    assert.deepEqual(state(fx), s1);
    assert.equal((await fx.ok('undo')).undone.description, "renamed the code 'Food security' to 'Food'");
    assert.deepEqual(state(fx), s0);
    await fx.fails('undo', {}, 'NOTHING_TO_UNDO');
    assert.equal((await fx.ok('redo')).redone.description, "renamed the code 'Food security' to 'Food'");
    assert.deepEqual(state(fx), s1);
    assert.equal((await fx.ok('redo')).redone.description, "coded 'Food' in interview-04");
    assert.deepEqual(state(fx), s2);
    await fx.fails('redo', {}, 'NOTHING_TO_REDO');
  });

  it('stacks are per caller: each undoes only their own last action', async () => {
    await fx.ok('apply_code', { code_id: food, source_id: src, start_position: 0, end_position: 2 });
    await fx.ok('apply_code', { code_id: trust, source_id: src2, start_position: 0, end_position: 6 }, BOB);
    const undone = (await fx.ok('undo', {}, ALICE)).undone;
    assert.equal(undone.description, "coded 'Food security' in interview-04");
    assert.deepEqual(rows(fx, 'segments', ['id', 'guid', 'created_at', 'updated_at', 'session_id', 'memo', 'importance', 'text']), [
      { code_id: trust, source_id: src2, start_pos: 0, end_pos: 6, owner: 'bob', coder_role: 'agent' },
    ]);
    await fx.fails('undo', {}, 'NOTHING_TO_UNDO', ALICE);
    await fx.fails('redo', {}, 'NOTHING_TO_REDO', BOB);
    assert.equal((await fx.ok('undo', {}, BOB)).undone.description, "coded 'Trust' in interview-05");
    assert.deepEqual(rows(fx, 'segments'), []);
  });

  it('a new action clears the redo stack', async () => {
    await fx.ok('rename_code', { code_id: food, new_name: 'Food' });
    await fx.ok('undo');
    await fx.ok('set_code_color', { code_id: trust, color: '#123456' });
    const out = await fx.fails('redo', {}, 'NOTHING_TO_REDO');
    assert.match((out.envelope as any).error, /Nothing to redo/);
    assert.equal(rows(fx, 'codes').find((c) => c.id === food)!.name, 'Food security');
  });

  it('nothing to undo is NOTHING_TO_UNDO and writes nothing', async () => {
    const before = storedEvents(fx.handle).length;
    const out = await fx.fails('undo', {}, 'NOTHING_TO_UNDO');
    assert.match((out.envelope as any).error, /Nothing to undo/);
    await fx.fails('redo', {}, 'NOTHING_TO_REDO');
    assert.equal(storedEvents(fx.handle).length, before);
  });

  it('an action that cannot be undone (merge_codes) is refused with NOT_UNDOABLE naming why, and undo does not skip past it', async () => {
    await fx.ok('apply_code', { code_id: food, source_id: src, start_position: 0, end_position: 2 });
    await fx.ok('merge_codes', { source_code_id: trust, target_code_id: food });
    const before = state(fx);
    const events = storedEvents(fx.handle).length;
    const out = await fx.fails('undo', {}, 'NOT_UNDOABLE');
    assert.match((out.envelope as any).error, /merging codes cannot be undone/);
    assert.equal((out.envelope as any).details.reason, 'unsupported');
    await fx.fails('undo', {}, 'NOT_UNDOABLE');
    assert.deepEqual(state(fx), before, 'the earlier coding is not undone past the merge');
    assert.equal(storedEvents(fx.handle).length, events);
    // deleting a code with its codings is not undoable either
    await fx.ok('delete_code', { code_id: food, delete_segments: true });
    assert.match(((await fx.fails('undo', {}, 'NOT_UNDOABLE')).envelope as any).error, /deleting a code with its codings cannot be undone/);
  });

  it('imports are not undoable', async () => {
    await fx.ok('add_text_source', { name: 'notes', content: 'x' });
    assert.match(((await fx.fails('undo', {}, 'NOT_UNDOABLE')).envelope as any).error, /imports cannot be undone/);
  });

  it("an undo that another coder's later work depends on is refused, naming it; nothing is written and nobody's coding is deleted", async () => {
    const hope = (await fx.ok('create_code', { name: 'Hope', color: '#59A14F' })).code_id;
    await fx.ok('apply_code', { code_id: hope, source_id: src2, start_position: 0, end_position: 6 }, BOB);
    const before = state(fx);
    const events = storedEvents(fx.handle).length;
    const out = await fx.fails('undo', {}, 'NOT_UNDOABLE');
    assert.match((out.envelope as any).error, /the code 'Hope' has since been applied 1 time\(s\) by bob \(1\)/);
    assert.equal((out.envelope as any).details.reason, 'blocked');
    assert.deepEqual(state(fx), before);
    assert.equal(storedEvents(fx.handle).length, events);
  });

  it('an undo whose after-state someone else changed is refused (a rename renamed again by bob)', async () => {
    await fx.ok('rename_code', { code_id: food, new_name: 'Food' });
    await fx.ok('rename_code', { code_id: food, new_name: 'Nutrition' }, BOB);
    const out = await fx.fails('undo', {}, 'NOT_UNDOABLE');
    assert.match((out.envelope as any).error, /the code 'Food' has been changed since \(it is now named 'Nutrition'\)/);
  });

  it('a redo blocked by a change since (the name it gives back is taken) is refused and writes nothing', async () => {
    await fx.ok('create_code', { name: 'Hope', color: '#59A14F' });
    await fx.ok('undo');
    await fx.ok('create_code', { name: 'hope', color: '#111111' }, BOB);
    const out = await fx.fails('redo', {}, 'NOT_UNDOABLE');
    assert.match((out.envelope as any).error, /already exists/);
    assert.equal((out.envelope as any).details.error_code, 'DUPLICATE_NAME');
  });

  it('putting a removed coding back is refused when its text changed since', async () => {
    const seg = await fx.ok('apply_code', { code_id: food, source_id: src, start_position: 8, end_position: 16 }, SETUP);
    await fx.ok('remove_code', { segment_id: seg.segment_id });
    await fx.ok('apply_source_edits', { source_id: src, edits: [{ start_pos: 0, end_pos: 2, text: 'They' }] }, { ...SETUP, client_type: 'LOCAL_UI' });
    const out = await fx.fails('undo', {}, 'NOT_UNDOABLE');
    assert.match((out.envelope as any).error, /the text of interview-04 at \[8, 16\) has changed since/);
  });

  it("the editor's text edits are not on the stacks: undo reaches past them (and past the codings they deleted) to the last coding", async () => {
    const UI: Caller = { session_id: 'local', client_type: 'LOCAL_UI', client_name: 'vscode', user: 'maria', researcher: true };
    const other = await fx.ok('apply_code', { code_id: trust, source_id: src2, start_position: 0, end_position: 6 }, SETUP);
    await fx.ok('apply_code', { code_id: food, source_id: src, start_position: 8, end_position: 16 }, UI);
    // the researcher deletes "Nobody" in the editor: the text edit takes setup's coding with it (segment_uncoded, reason "text deleted")
    await fx.ok('apply_source_edits', { source_id: src2, edits: [{ start_pos: 0, end_pos: 7, text: '' }] }, UI);
    const edit = storedEvents(fx.handle)
      .filter((e) => e.user === 'maria')
      .slice(-2);
    assert.deepEqual(
      edit.map((e) => [e.event_type, e.payload.reason ?? null]),
      [
        ['coding.segment_uncoded', 'text deleted'],
        ['source.text_edited', null],
      ],
    );
    assert.equal(edit[0]!.payload.segment_id, other.segment_id);
    const undone = (await fx.ok('undo', {}, UI)).undone;
    assert.equal(undone.description, "coded 'Food security' in interview-04");
    assert.deepEqual(rows(fx, 'segments'), [], "maria's coding is undone; setup's went with the deleted text and stays gone");
    await fx.fails('undo', {}, 'NOTHING_TO_UNDO', UI);
  });

  it('events stored before a payload kept the previous state are not undoable (recorded_before)', async () => {
    const seg = await fx.ok('apply_code', { code_id: food, source_id: src, start_position: 0, end_position: 2 }, SETUP);
    fx.handle.store.transaction(() =>
      fx.handle.repo.insertEvent({
        event_id: '',
        event_type: 'coding.segment_uncoded',
        timestamp: '2025-01-01T00:00:00.000Z',
        aggregate_type: 'segment',
        aggregate_id: String(seg.segment_id),
        caused_by: { session_id: ALICE.session_id, client_type: ALICE.client_type, user: ALICE.user },
        payload: { segment_id: seg.segment_id, code_id: food, source_id: src },
        metadata: { correlation_id: 'old-call', sequence_number: 0 },
      }),
    );
    const out = await fx.fails('undo', {}, 'NOT_UNDOABLE');
    assert.equal((out.envelope as any).details.reason, 'recorded_before');
    assert.match((out.envelope as any).error, /recorded before Marginalia kept/);
  });

  it('previewNext says what the next undo or redo would do, without doing it (for the UI)', async () => {
    const owner = { client_type: ALICE.client_type, user: ALICE.user };
    assert.equal(previewNext(fx.handle.repo, owner, 'undo'), null);
    await fx.ok('apply_code', { code_id: food, source_id: src, start_position: 0, end_position: 2 });
    const coded = storedEvents(fx.handle).at(-1)!;
    const before = state(fx);
    assert.deepEqual(previewNext(fx.handle.repo, owner, 'undo'), {
      correlation_id: coded.correlation_id,
      description: "coded 'Food security' in interview-04",
      sequence_number: coded.seq,
      not_undoable: null,
    });
    assert.equal(previewNext(fx.handle.repo, owner, 'redo'), null);
    assert.deepEqual(state(fx), before, 'a preview writes nothing');
    await fx.ok('undo');
    assert.equal(previewNext(fx.handle.repo, owner, 'redo')!.correlation_id, coded.correlation_id);
    await fx.ok('merge_codes', { source_code_id: trust, target_code_id: food });
    const merge = previewNext(fx.handle.repo, owner, 'undo')!;
    assert.deepEqual(merge.not_undoable, {
      reason: 'unsupported',
      message: "Cannot undo \"merged the code 'Trust' into 'Food security'\": merging codes cannot be undone.",
    });
    assert.equal(previewNext(fx.handle.repo, owner, 'redo'), null, 'the merge cleared redo');
  });

  it('the stacks survive a restart (derived from the event log)', async () => {
    await fx.ok('rename_code', { code_id: food, new_name: 'Food' });
    await fx.ok('apply_code', { code_id: food, source_id: src, start_position: 0, end_position: 2 });
    await fx.ok('undo');
    const file = fx.handle.path;
    await fx.handle.close();
    const handle = await openProjectHandle(file, { checkpointIdleMs: 0 });
    try {
      const pipeline = createPipeline({ project: () => handle, host: headlessHost, logger: silentLogger, clock: fixedClock });
      const redo = await pipeline.invoke('redo', {}, ALICE);
      assert.ok(redo.envelope.success, JSON.stringify(redo.envelope));
      assert.equal((redo.envelope.data as any).redone.description, "coded 'Food' in interview-04");
      const u1 = await pipeline.invoke('undo', {}, ALICE);
      const u2 = await pipeline.invoke('undo', {}, ALICE);
      assert.ok(u1.envelope.success && u2.envelope.success);
      assert.match((u1.envelope as any).data.undone.description, /^coded /);
      assert.equal((u2.envelope as any).data.undone.description, "renamed the code 'Food security' to 'Food'");
      assert.equal(handle.repo.getCode(food)!.name, 'Food security');
    } finally {
      await handle.close();
      // fx.close() would close the handle again
      (fx as any).handle = { close: async () => undefined };
    }
    void path;
  });
});
