/**
 * Document attributes in the version history (migration 10, src/vcs/canonicalDump.ts): the canonical dump holds
 * them as one JSONL table sorted by (source_id, name), view_diff counts their changes, and restore_snapshot
 * brings back a removed source with its attributes. Real project files and real git in temp directories.
 */
import assert from 'node:assert/strict';
import { StoreDumpAccess } from '../../../src/store/dumpAccess';
import { canonicalDump, diffDumps, readProjectTables } from '../../../src/vcs/canonicalDump';
import { summarizeEvents } from '../../../src/vcs/snapshotter';
import { FIXED_ISO, openFixture, type Fixture } from '../domain/projectFixture';

describe('vcs: document attributes in the canonical dump and the history', function () {
  this.timeout(60_000);
  let fx: Fixture;
  beforeEach(async () => {
    fx = await openFixture();
  });
  afterEach(async () => {
    await fx.close();
  });
  const dump = () => canonicalDump(readProjectTables(new StoreDumpAccess(fx.handle.store)));

  it('dumps tables/source_attributes.jsonl sorted by source_id then name, whatever the order of writing; lists it in the manifest', async () => {
    const a = (await fx.ok('add_text_source', { name: 'A', content: 'alpha' })).source_id;
    const b = (await fx.ok('add_text_source', { name: 'B', content: 'beta' })).source_id;
    await fx.ok('set_source_attribute', { source_id: b, attribute_name: 'Site', value: 'Lagos' });
    await fx.ok('set_source_attribute', { source_id: a, attribute_name: 'Wave', value: 2 });
    await fx.ok('set_source_attribute', { source_id: a, attribute_name: 'Consent', value: true });
    await fx.ok('set_source_attribute', { source_id: a, attribute_name: 'Date', value: '2024-05-01', type: 'date' });
    const files = dump();
    const manifest = JSON.parse(files.get('manifest.json')!) as { tables: Record<string, { primary_key: string[]; columns: string[] }> };
    assert.deepEqual(manifest.tables.source_attributes, {
      primary_key: ['source_id', 'name'],
      columns: ['source_id', 'name', 'owner', 'session_id', 'type', 'updated_at', 'value_boolean', 'value_date', 'value_number', 'value_text'],
    });
    const stamp = `"owner":"alice","session_id":"sess-alice"`;
    assert.equal(
      files.get('tables/source_attributes.jsonl'),
      `{"source_id":${a},"name":"Consent",${stamp},"type":"boolean","updated_at":"${FIXED_ISO}","value_boolean":1,"value_date":null,"value_number":null,"value_text":null}\n` +
        `{"source_id":${a},"name":"Date",${stamp},"type":"date","updated_at":"${FIXED_ISO}","value_boolean":null,"value_date":"2024-05-01","value_number":null,"value_text":null}\n` +
        `{"source_id":${a},"name":"Wave",${stamp},"type":"number","updated_at":"${FIXED_ISO}","value_boolean":null,"value_date":null,"value_number":2,"value_text":null}\n` +
        `{"source_id":${b},"name":"Site",${stamp},"type":"text","updated_at":"${FIXED_ISO}","value_boolean":null,"value_date":null,"value_number":null,"value_text":"Lagos"}\n`,
    );
    const before = dump();
    await fx.ok('set_source_attribute', { source_id: a, attribute_name: 'Wave', value: 3 });
    await fx.ok('set_source_attribute', { source_id: b, attribute_name: 'Site', value: null });
    await fx.ok('set_source_attribute', { source_id: b, attribute_name: 'Age', value: 50 });
    assert.deepEqual(diffDumps(before, dump()).tables.source_attributes, { added: 1, removed: 1, changed: 1 });
  });

  it('names a document attribute change in a snapshot title as "source: attribute"', async () => {
    const a = (await fx.ok('add_text_source', { name: 'Interview A', content: 'alpha' })).source_id;
    const out = await fx.call('set_source_attribute', { source_id: a, attribute_name: 'Wave', value: 2 });
    assert.equal(summarizeEvents(out.events), 'Interview A: Wave');
  });

  it('restore_snapshot brings back a removed source with its typed attributes', async () => {
    const a = (await fx.ok('add_text_source', { name: 'A', content: 'alpha' })).source_id;
    await fx.ok('set_source_attribute', { source_id: a, attribute_name: 'Wave', value: 2 });
    await fx.ok('set_source_attribute', { source_id: a, attribute_name: 'Date', value: '2024-05-01', type: 'date' });
    const init = await fx.ok('initialize_version_control');
    const before = await fx.ok('list_sources');
    await fx.ok('remove_source', { source_id: a, confirm: true });
    assert.equal((await fx.ok('list_sources')).count, 0);
    assert.deepEqual(fx.handle.repo.listSourceAttributes(), []);
    await fx.ok('restore_snapshot', { ref: init.ref });
    assert.deepEqual(await fx.ok('list_sources'), before);
    assert.deepEqual((await fx.ok('read_source_content', { source_id: a })).attribute_types, { Date: 'date', Wave: 'number' });
    assert.equal(fx.handle.store.get('PRAGMA foreign_key_check'), undefined);
  });
});
