/**
 * src/store/erasureStore.ts on real sql.js project files: what erase_source does in the database (rows
 * keyed by the source deleted, event payloads redacted in place and kept in sequence, no bound value of the
 * journal holding the text, the file rewritten so no free page holds it), and the recovery when the process
 * died between the erasure's commit and the rewrite (simulated as in projectStore.test.ts: the .qda and its
 * journal copied while the store is open, and the copy opened).
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { TextRedactor } from '../../../src/domain/erasure';
import { payloadToStored } from '../../../src/store/eventRows';
import { StoreErasure } from '../../../src/store/erasureStore';
import { journalPath, ProjectStore } from '../../../src/store/projectStore';

const MARKER = 'qzxerasuremarker4411';
const TEXT = `Interview P07. They call me ${MARKER} at the allotment since the flood, and we rebuilt the shed together.`;
const OTHER = 'Interview P08. I grow beans near the fence and never argue about the water tank at all.';
const NOW = '2026-01-02T03:04:05.678Z';

describe('store/erasureStore', () => {
  let dir = '';
  const open: ProjectStore[] = [];
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'marginalia-erasure-store-'));
  });
  afterEach(async () => {
    for (const s of open.splice(0)) await s.close().catch(() => undefined);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** A project with two sources, a coding on each, and their events; returns the store and the erased source's id. */
  async function project(file: string): Promise<{ store: ProjectStore; p07: number }> {
    const store = await ProjectStore.open(file, { create: true, checkpointIdleMs: 0 });
    open.push(store);
    let p07 = 0;
    store.transaction(() => {
      const code = store.run("INSERT INTO codes(name, name_key, color, owner, created_at, updated_at) VALUES ('C', 'c', '#000000', 'r', ?, ?)", [
        NOW,
        NOW,
      ]).lastId;
      const add = (name: string, text: string) =>
        store.run("INSERT INTO sources(name, type, content, content_length, owner, created_at, updated_at) VALUES (?, 'text', ?, ?, 'r', ?, ?)", [
          name,
          text,
          text.length,
          NOW,
          NOW,
        ]).lastId;
      p07 = add('P07', TEXT);
      const p08 = add('P08', OTHER);
      for (const [src, text] of [
        [p07, TEXT],
        [p08, OTHER],
      ] as const) {
        const segText = text.slice(15, 70);
        const seg = store.run(
          'INSERT INTO segments(code_id, source_id, start_pos, end_pos, text, owner, created_at, updated_at) VALUES (?, ?, 15, 70, ?, ?, ?, ?)',
          [code, src, segText, 'r', NOW, NOW],
        ).lastId;
        store.run("INSERT INTO events(event_type, timestamp, aggregate_type, aggregate_id, payload) VALUES ('coding.segment_coded', 0, 'segment', ?, ?)", [
          String(seg),
          payloadToStored({ segment_id: seg, code_id: code, source_id: src, start: 15, end: 70, text: segText }),
        ]);
      }
    });
    return { store, p07 };
  }

  function erase(store: ProjectStore, erasure: StoreErasure, id: number, compact: boolean) {
    const texts = erasure.sourceTexts(id)!;
    return store.transaction(() => {
      const rows = erasure.eraseSource(id, new TextRedactor(id, texts.texts));
      if (compact) erasure.compactAfterCommit();
      return rows;
    });
  }

  it('deletes the source and its rows, redacts its events in place, and leaves no byte of the text in the file or the journal', async () => {
    const file = path.join(dir, 'p.qda');
    const { store, p07 } = await project(file);
    const erasure = new StoreErasure(store);
    // an agent's code suggestion quoting the transcript as a sample context (no source_id: a code suggestion)
    store.transaction(() =>
      store.run(
        "INSERT INTO suggestions(kind, status, name, name_key, color, sample_contexts, rationale, confidence, suggested_by, created_at) VALUES ('code', 'pending', 'Nicknames', 'nicknames', '#123456', ?, 'seen twice', 80, 'agent', ?)",
        [JSON.stringify([TEXT.slice(10, 80), OTHER.slice(0, 40)]), NOW],
      ),
    );
    const rows = erase(store, erasure, p07, true);
    assert.equal(rows.suggestions_redacted, 1);
    assert.deepEqual(
      JSON.parse(String(store.get<{ s: string }>('SELECT sample_contexts AS s FROM suggestions')?.s)),
      ['[erased]', OTHER.slice(0, 40)],
      "the quote is erased whole, the other source's is kept",
    );
    assert.equal(rows.segments, 1);
    assert.equal(rows.events_redacted, 1);
    assert.equal(store.get<{ n: number }>('SELECT count(*) AS n FROM sources')?.n, 1);
    assert.deepEqual(
      store.all<{ seq: number }>('SELECT seq FROM events ORDER BY seq').map((r) => r.seq),
      [1, 2],
      'both events kept, in sequence',
    );
    assert.ok(String(store.get<{ payload: string }>('SELECT payload FROM events WHERE seq = 1')?.payload).includes('[erased]'));
    assert.equal(store.get('SELECT 1 AS x FROM meta WHERE key = ?', ['erasure_pending']), undefined, 'the pending mark is cleared after the rewrite');
    assert.equal(fs.readFileSync(file).includes(Buffer.from(MARKER)), false, 'the project file');
    assert.equal(fs.readFileSync(journalPath(file)).includes(Buffer.from(MARKER)), false, 'the journal');
    assert.ok(fs.readFileSync(file).includes(Buffer.from('beans near the fence')), 'the other source stays');
    assert.equal(store.get<{ n: number }>('SELECT freelist_count AS n FROM pragma_freelist_count()')?.n, 0);
  });

  it('a project reopened after the erasure committed but before its rewrite is rewritten when it opens', async () => {
    const file = path.join(dir, 'p.qda');
    const { store, p07 } = await project(file);
    store.checkpoint(); // the text is now in the file on disk
    erase(store, new StoreErasure(store), p07, false); // committed and journaled, never rewritten: the "crash"
    const crashed = path.join(dir, 'crashed.qda');
    fs.copyFileSync(file, crashed);
    fs.copyFileSync(journalPath(file), journalPath(crashed));
    assert.ok(fs.readFileSync(crashed).includes(Buffer.from(MARKER)), 'the file on disk still holds the text');
    assert.equal(fs.readFileSync(journalPath(crashed)).includes(Buffer.from(MARKER)), false, 'the erasure journaled no text');
    const reopened = await ProjectStore.open(crashed, { checkpointIdleMs: 0 });
    open.push(reopened);
    new StoreErasure(reopened);
    assert.equal(fs.readFileSync(crashed).includes(Buffer.from(MARKER)), false, 'rewritten on open');
    assert.equal(reopened.get('SELECT 1 AS x FROM meta WHERE key = ?', ['erasure_pending']), undefined);
    assert.equal(reopened.get<{ n: number }>('SELECT count(*) AS n FROM sources')?.n, 1);
  });
});
