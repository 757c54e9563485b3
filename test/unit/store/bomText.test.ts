/**
 * Text exactly as stored (issue #15, item 1): texts that begin with one or two U+FEFF keep them through the
 * store, a journal replay, a checkpoint, a foreign SQLite file, and read_source_content, with lengths that
 * agree with SQLite's own `length()` and pages that concatenate to the text.
 *
 * Before the fix, sql.js's TextDecoder dropped one leading U+FEFF on every read: `'\ufeff\ufeffabc'` came
 * back 4 characters long where SQLite counts 5 (src/core/bomKeepingDecoder.ts).
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { openProjectHandle } from '../../../src/cli/compose';
import { BOM_PROBE, withBomKeepingTextDecoder } from '../../../src/core/bomKeepingDecoder';
import { withForeignDb } from '../../../src/exchange/sqlite';
import { loadSqlJs } from '../../../src/store/sqljs';
import { tmpDir } from '../../helpers/serverProcess';
import { openFixture, type Fixture } from '../domain/projectFixture';

const ONE = '\uFEFFThe biggest issues were water and soil.\nSecond line: 🌱 gardens.';
const TWO = '\uFEFF\uFEFFInterviewer: How did it start?\nRespondent: With a workshop.';

/** The texts a project holds, read back through the store, and SQLite's own count of their code points. */
function storedTexts(h: { store: { all<T>(sql: string): T[] } }) {
  return h.store.all<{ name: string; content: string; sqlite_length: number }>(
    'SELECT name, content, length(content) AS sqlite_length FROM sources ORDER BY id',
  );
}

/** Reads a source page by page with read_source_content and returns the pages and the reported total. */
async function readInPages(fx: Fixture, sourceId: number, maxLength: number) {
  const pages: string[] = [];
  let start = 0;
  let total: number;
  for (;;) {
    const page = await fx.ok('read_source_content', { source_id: sourceId, start_pos: start, max_length: maxLength });
    pages.push(page.content);
    total = page.total_length;
    if (!page.has_more) break;
    start = page.end_pos;
  }
  return { pages, total };
}

describe('store: text exactly as stored (leading byte-order marks)', () => {
  let fx: Fixture;
  beforeEach(async () => {
    fx = await openFixture();
  });
  afterEach(async () => {
    await fx.close();
  });

  it('the sql.js engine returns a selected text with both of its leading marks', async () => {
    const SQL = await loadSqlJs();
    const db = new SQL.Database();
    try {
      db.run('CREATE TABLE t(x TEXT)');
      db.run('INSERT INTO t VALUES (?)', ['\uFEFF\uFEFFabc']);
      const [x, len] = db.exec('SELECT x, length(x) FROM t')[0]!.values[0]!;
      assert.equal(x, '\uFEFF\uFEFFabc');
      assert.equal(len, 5);
      assert.equal((x as string).length, 5, 'the same length as SQLite counts');
    } finally {
      db.close();
    }
    assert.equal(new TextDecoder().decode(Buffer.from('\uFEFFa')), 'a', 'the process keeps the standard TextDecoder (only sql.js gets the BOM-keeping one)');
  });

  it('withBomKeepingTextDecoder gives decoders that keep the mark, and restores the global after a throw', () => {
    const Original = globalThis.TextDecoder;
    const decoded = withBomKeepingTextDecoder(() => new TextDecoder().decode(Buffer.from(BOM_PROBE)));
    assert.equal(decoded, BOM_PROBE);
    assert.throws(() =>
      withBomKeepingTextDecoder(() => {
        throw new Error('boom');
      }),
    );
    assert.equal(globalThis.TextDecoder, Original);
  });

  it('sources and codings beginning with one and two U+FEFF keep them through the store, a replay and a checkpoint', async () => {
    const one = await fx.ok('add_text_source', { name: 'one-bom', content: ONE });
    const two = await fx.ok('add_text_source', { name: 'two-boms', content: TWO });
    const code = await fx.ok('create_code', { name: 'Water', color: '#1f77b4' });
    // "The" is at code points 1..4 of ONE (after one mark); "Interviewer" at 2..13 of TWO (after two)
    const s1 = await fx.ok('apply_code', { code_id: code.code_id, source_id: one.source_id, start_pos: 1, end_pos: 4 });
    const s2 = await fx.ok('apply_code', { code_id: code.code_id, source_id: two.source_id, start_pos: 2, end_pos: 13 });
    const s0 = await fx.ok('apply_code', { code_id: code.code_id, source_id: two.source_id, start_pos: 0, end_pos: 3 });
    assert.equal(s1.text, 'The');
    assert.equal(s2.text, 'Interviewer');
    assert.equal(s0.text, '\uFEFF\uFEFFI');

    const check = (h: { store: { all<T>(sql: string): T[] } }, when: string) => {
      const rows = storedTexts(h);
      assert.deepEqual(
        rows.map((r) => r.content),
        [ONE, TWO],
        `${when}: texts read back exactly`,
      );
      for (const r of rows) assert.equal([...r.content].length, r.sqlite_length, `${when}: ${r.name} has SQLite's length`);
      const segs = h.store.all<{ text: string; start_pos: number; end_pos: number }>('SELECT text, start_pos, end_pos FROM segments ORDER BY id');
      assert.deepEqual(
        segs.map((s) => s.text),
        ['The', 'Interviewer', '\uFEFF\uFEFFI'],
        `${when}: segment texts read back exactly`,
      );
    };
    check(fx.handle, 'open store');

    // the state a crash leaves: the file without a checkpoint plus the journal, replayed on open
    const dir = tmpDir('marginalia-bom-');
    const crashed = path.join(dir, 'crashed.qda');
    fs.copyFileSync(fx.handle.path, crashed);
    fs.copyFileSync(`${fx.handle.path}-journal`, `${crashed}-journal`);
    assert.ok(fs.statSync(`${crashed}-journal`).size > 0, 'the writes are in the journal');
    const replayed = await openProjectHandle(crashed, { checkpointIdleMs: 0 });
    try {
      check(replayed, 'after the journal replay');
    } finally {
      await replayed.close();
    }

    // a checkpoint writes the file (and empties the journal); a copy of that file alone holds the same texts
    fx.handle.store.checkpoint();
    assert.equal(fx.handle.store.journalSize, 0, 'the checkpoint emptied the journal');
    const checkpointed = path.join(dir, 'checkpointed.qda');
    fs.copyFileSync(fx.handle.path, checkpointed);
    const reopened = await openProjectHandle(checkpointed, { checkpointIdleMs: 0 });
    try {
      check(reopened, 'after a checkpoint');
    } finally {
      await reopened.close();
    }
  });

  it('read_source_content reports the length of the text it returns, and its pages concatenate to the text', async () => {
    for (const [name, text] of [
      ['one', ONE],
      ['two', TWO],
    ] as const) {
      const src = await fx.ok('add_text_source', { name, content: text });
      const whole = await fx.ok('read_source_content', { source_id: src.source_id });
      assert.equal(whole.content, text);
      assert.equal(whole.total_length, [...text].length);
      for (const size of [1, 2, 7]) {
        const { pages, total } = await readInPages(fx, src.source_id, size);
        assert.equal(pages.join(''), text, `${name}: pages of ${size} concatenate to the text`);
        assert.equal(total, [...text].length);
        assert.equal(pages[0], [...text].slice(0, size).join(''), `${name}: the first page starts with the marks`);
      }
    }
  });

  it('a foreign SQLite file (as RQDA, QualCoder and Taguette importers read them) returns its texts with their marks', async () => {
    const SQL = await loadSqlJs();
    const db = new SQL.Database();
    db.run('CREATE TABLE source (id INTEGER, file TEXT)');
    db.run('INSERT INTO source VALUES (1, ?), (2, ?)', [ONE, TWO]);
    const file = path.join(tmpDir('marginalia-bom-foreign-'), 'foreign.sqlite');
    fs.writeFileSync(file, db.export());
    db.close();
    const rows = await withForeignDb(file, 'a test database', (f) =>
      f.all<{ file: string; n: number }>('SELECT file, length(file) AS n FROM source ORDER BY id'),
    );
    assert.deepEqual(
      rows.map((r) => r.file),
      [ONE, TWO],
    );
    for (const r of rows) assert.equal([...r.file].length, r.n);
  });
});
