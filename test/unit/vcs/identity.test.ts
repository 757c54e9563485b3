import { strict as assert } from 'node:assert';
import type { Database, SqlValue } from 'sql.js';
import { loadSqlJs } from '../../../src/store/sqljs';
import { MIGRATIONS } from '../../../src/store/migrations';
import { deriveGuid } from '../../../src/domain/exchangeIds';
import { entityGuid, hasGuid, rowIdentity } from '../../../src/vcs/identity';

/** UUID v4 as RFC 9562 writes it: version nibble 4, variant 10xx. */
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** A database migrated up to and including `upTo`, with each migration's SQL functions registered. */
async function migratedTo(upTo: number): Promise<Database> {
  const SQL = await loadSqlJs();
  const db = new SQL.Database();
  for (const m of MIGRATIONS.filter((x) => x.version <= upTo)) runMigration(db, m.version);
  return db;
}

function runMigration(db: Database, version: number): void {
  const m = MIGRATIONS.find((x) => x.version === version)!;
  for (const [name, fn] of Object.entries(m.functions ?? {})) db.create_function(name, fn as (...a: SqlValue[]) => SqlValue);
  db.exec(m.sql);
}

function column(db: Database, sql: string): SqlValue[] {
  const r = db.exec(sql)[0];
  return r ? r.values.map((v) => v[0]!) : [];
}

const NOW = '2026-01-01T00:00:00.000Z';

describe('vcs/identity: entity GUIDs (migration 17)', () => {
  it('gives rows that existed the GUID REFI-QDA exports gave them: a stored exchange GUID, else the one derived from the project GUID', async () => {
    const db = await migratedTo(16);
    db.run("INSERT INTO categories(id, name, name_key, owner, created_at) VALUES (1, 'Place', 'place', 'ana', ?)", [NOW]);
    db.run("INSERT INTO codes(id, name, name_key, color, category_id, owner, created_at, updated_at) VALUES (1, 'Home', 'home', '#000000', 1, 'ana', ?, ?)", [
      NOW,
      NOW,
    ]);
    db.run("INSERT INTO codes(id, name, name_key, color, owner, created_at, updated_at) VALUES (2, 'Work', 'work', '#000000', 'ana', ?, ?)", [NOW, NOW]);
    db.run(
      "INSERT INTO sources(id, name, type, content, content_length, owner, created_at, updated_at) VALUES (1, 'i1', 'text', 'hello world', 11, 'ana', ?, ?)",
      [NOW, NOW],
    );
    db.run(
      "INSERT INTO segments(id, code_id, source_id, start_pos, end_pos, text, owner, created_at, updated_at) VALUES (1, 1, 1, 0, 5, 'hello', 'ana', ?, ?)",
      [NOW, NOW],
    );
    // code 2 came from a REFI-QDA file, which named it
    db.run("INSERT INTO exchange_guids(kind, local_id, guid) VALUES ('code', '2', '0a1b2c3d-0000-4000-8000-000000000002')");
    const projectGuid = String(column(db, "SELECT value FROM meta WHERE key = 'project_guid'")[0]);

    runMigration(db, 17);
    assert.deepEqual(column(db, 'SELECT guid FROM codes ORDER BY id'), [deriveGuid(projectGuid, 'code', 1), '0a1b2c3d-0000-4000-8000-000000000002']);
    assert.deepEqual(column(db, 'SELECT guid FROM categories'), [deriveGuid(projectGuid, 'category', 1)]);
    assert.deepEqual(column(db, 'SELECT guid FROM sources'), [deriveGuid(projectGuid, 'source', 1)]);
    assert.deepEqual(column(db, 'SELECT guid FROM segments'), [deriveGuid(projectGuid, 'coding', 1)]);
    db.close();
  });

  it('gives a new row without a GUID a random UUID v4 of its own, and keeps the GUID a row is inserted with (a restored or merged dump)', async () => {
    const db = await migratedTo(17);
    for (let i = 1; i <= 50; i++)
      db.run("INSERT INTO codes(name, name_key, color, owner, created_at, updated_at) VALUES (?, ?, '#000000', 'ana', ?, ?)", [`C${i}`, `c${i}`, NOW, NOW]);
    const guids = column(db, 'SELECT guid FROM codes').map(String);
    assert.equal(guids.length, 50);
    for (const g of guids) assert.match(g, UUID_V4);
    assert.equal(new Set(guids).size, 50);
    db.run(
      "INSERT INTO codes(name, name_key, color, owner, created_at, updated_at, guid) VALUES ('Kept', 'kept', '#000000', 'ana', ?, ?, 'feedface-0000-4000-8000-000000000001')",
      [NOW, NOW],
    );
    assert.deepEqual(column(db, "SELECT guid FROM codes WHERE name = 'Kept'"), ['feedface-0000-4000-8000-000000000001']);
    // the trigger does not count as a change of the code (entity_versions: name, color, memo, category_id only)
    assert.deepEqual(column(db, "SELECT count(*) FROM entity_versions WHERE kind = 'code'"), [0]);
    // every entity table of the identity module has the column and the trigger
    for (const t of ['codes', 'categories', 'sources', 'folders', 'segments', 'av_segments', 'cases', 'case_segments']) {
      assert.ok(hasGuid(t), t);
      assert.ok(column(db, `SELECT name FROM pragma_table_info('${t}')`).includes('guid'), t);
      assert.deepEqual(column(db, `SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND name = '${t}_guid_ai'`), [1], t);
    }
    db.close();
  });

  it("identifies entities by GUID and attributes and memberships by their entities' GUIDs and name, never by local id", () => {
    assert.equal(entityGuid('codes', { id: 7, guid: 'ABCDEF01-0000-4000-8000-000000000001' }), 'abcdef01-0000-4000-8000-000000000001');
    assert.equal(entityGuid('codes', { id: 7 }), null);
    assert.equal(entityGuid('case_attributes', { case_id: 1, name: 'age' }), null);
    const guids: Record<string, Record<number, string>> = { cases: { 1: 'case-guid-on-a', 9: 'case-guid-on-b' }, sources: { 3: 'src-guid' } };
    const guidOf = (t: string, id: number) => guids[t]?.[id] ?? null;
    // the same attribute on two copies where the case has different local ids
    const onA = rowIdentity('case_attributes', { case_id: 1, name: 'age' }, (t, id) => (t === 'cases' && id === 1 ? 'shared' : guidOf(t, id)));
    const onB = rowIdentity('case_attributes', { case_id: 9, name: 'age' }, (t, id) => (t === 'cases' && id === 9 ? 'shared' : guidOf(t, id)));
    assert.equal(onA, onB);
    assert.equal(rowIdentity('case_sources', { case_id: 1, source_id: 3 }, guidOf), 'case_sources:case-guid-on-a/src-guid');
    assert.equal(rowIdentity('case_sources', { case_id: 1, source_id: 4 }, guidOf), null, 'an unknown entity gives no identity');
    assert.equal(rowIdentity('segments', { id: 1, guid: 'g' }, guidOf), 'segments:g');
    assert.equal(rowIdentity('meta', { key: 'x' }, guidOf), null);
  });
});
