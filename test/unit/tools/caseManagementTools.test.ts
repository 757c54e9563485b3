/**
 * The case management tools (src/tools/caseManagementTools.ts, domain in src/domain/cases.ts) through the one
 * pipeline over a real sql.js project on disk: attribute definitions when cases disagree on an attribute's
 * type (the most used type, ties in the order text, number, date, boolean), a rename that only changes the
 * letter case of a case or an attribute, a rename onto a name another case already uses for the attribute
 * refused with nothing written, the Case Attributes table's model (src/ui/cases/caseAttributesModel.ts, free
 * of vscode) following the tools, and a remove_source_from_case undone by undo with who had linked it.
 */
import assert from 'node:assert/strict';
import { caseAttributesModel } from '../../../src/ui/cases/caseAttributesModel';
import { openFixture, snapshot, storedEvents, type Fixture } from '../domain/projectFixture';

describe('tools/caseManagementTools', () => {
  let fx: Fixture;
  const kase: Record<string, number> = {};

  beforeEach(async () => {
    fx = await openFixture();
    for (const name of ['P1', 'P2', 'P3', 'P4']) kase[name] = (await fx.ok('create_case', { name })).case_id;
  });
  afterEach(async () => {
    await fx.close();
  });

  it('list_case_attributes: the most used type when cases disagree; a tie goes to the earlier type (text, number, date, boolean)', async () => {
    await fx.ok('set_case_attribute', { case_id: kase.P1, attribute_name: 'Wave', value: 1 });
    await fx.ok('set_case_attribute', { case_id: kase.P2, attribute_name: 'Wave', value: 2 });
    await fx.ok('set_case_attribute', { case_id: kase.P3, attribute_name: 'Wave', value: 'second' });
    await fx.ok('set_case_attribute', { case_id: kase.P1, attribute_name: 'Seen', value: true });
    await fx.ok('set_case_attribute', { case_id: kase.P2, attribute_name: 'Seen', value: '2024-01-01' });
    assert.deepEqual((await fx.ok('list_case_attributes')).attributes, [
      { name: 'Seen', type: 'date', types: { boolean: 1, date: 1 }, case_count: 2 },
      { name: 'Wave', type: 'number', types: { number: 2, text: 1 }, case_count: 3 },
    ]);
  });

  it('renames that only change the letter case are renames; a rename onto an attribute some case has is refused and writes nothing', async () => {
    assert.deepEqual(await fx.ok('rename_case', { case_id: kase.P1, new_name: 'p1' }), { case_id: kase.P1, old_name: 'P1', new_name: 'p1', changed: true });
    await fx.ok('set_case_attribute', { case_id: kase.P1, attribute_name: 'age', value: 30 });
    await fx.ok('set_case_attribute', { case_id: kase.P2, attribute_name: 'Years', value: 4 });
    assert.deepEqual((await fx.ok('rename_case_attribute', { attribute_name: 'age', new_name: 'Age' })).case_ids, [kase.P1]);
    const before = await snapshot(fx);
    const refused = await fx.fails('rename_case_attribute', { attribute_name: 'Age', new_name: 'Years' }, 'DUPLICATE_NAME');
    assert.equal(refused.envelope.success, false);
    assert.deepEqual(await snapshot(fx), before);
  });

  it('the Case Attributes model lists every case (by name) with its typed values and the definitions as columns', async () => {
    await fx.ok('set_case_attribute', { case_id: kase.P2, attribute_name: 'Interviewed', value: '2024-03-05' });
    await fx.ok('set_case_attribute', { case_id: kase.P4, attribute_name: 'Urban', value: false });
    const m = caseAttributesModel(fx.handle.repo);
    assert.deepEqual(m.columns, [
      { name: 'Interviewed', type: 'date', case_count: 1 },
      { name: 'Urban', type: 'boolean', case_count: 1 },
    ]);
    assert.deepEqual(
      m.rows.map((r) => [r.name, r.values]),
      [
        ['P1', {}],
        ['P2', { Interviewed: { type: 'date', value: '2024-03-05' } }],
        ['P3', {}],
        ['P4', { Urban: { type: 'boolean', value: false } }],
      ],
    );
  });

  it('undo of remove_source_from_case links the source again in the name of who had linked it', async () => {
    const source = (await fx.ok('add_text_source', { name: 'Interview', content: 'Hello.' })).source_id;
    await fx.ok('add_source_to_case', { case_id: kase.P1, source_id: source });
    await fx.ok('remove_source_from_case', { case_id: kase.P1, source_id: source });
    const removed = storedEvents(fx.handle).filter((e) => e.event_type === 'case.member_removed');
    assert.deepEqual(
      removed.map((e) => [e.payload.source_id, e.payload.segment_range, e.payload.owner]),
      [[source, null, 'alice']],
    );
    await fx.ok('undo');
    assert.deepEqual(
      (await fx.ok('get_case', { case_id: kase.P1 })).sources.map((s: any) => [s.source_id, s.added_by]),
      [[source, 'alice']],
    );
  });
});
