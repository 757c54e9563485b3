/**
 * Unit tests for src/store/projectStore.ts and src/store/lock.ts: migrations, the fsync'd journal
 * (commit, rollback, nesting, replay, torn and damaged lines), checkpoints, and the project lock.
 *
 * A crash is simulated by copying `<file>.qda` and `<file>.qda-journal` elsewhere while the store is still
 * open (so no checkpoint has folded the journal in) and opening the copy.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ToolError } from '../../../src/core/errors';
import type { Logger } from '../../../src/core/log';
import { readLock } from '../../../src/store/lock';
import { LATEST_VERSION } from '../../../src/store/migrations';
import { journalPath, ProjectStore, type StoreOptions } from '../../../src/store/projectStore';

// `import * as fs` in the store reads properties of the one `node:fs` module object at call time, so
// patching that object here reaches the store's calls.
const realFs = require('node:fs') as typeof fs;

const TABLES = ['meta', 'folders', 'sources', 'source_metadata_hints', 'categories', 'codes', 'segments', 'av_segments', 'events'];
const NOW = '2026-01-02T03:04:05.678Z';

let dirs: string[] = [];
let stores: ProjectStore[] = [];
let children: ChildProcess[] = [];

function tmp(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'marginalia-store-'));
  dirs.push(d);
  return d;
}

async function open(file: string, opts: StoreOptions = {}): Promise<ProjectStore> {
  const s = await ProjectStore.open(file, { checkpointIdleMs: 0, ...opts });
  stores.push(s);
  return s;
}

/** A new project `p.qda` in a fresh directory, idle checkpoints off. */
async function fresh(opts: StoreOptions = {}): Promise<{ dir: string; file: string; store: ProjectStore }> {
  const dir = tmp();
  const file = path.join(dir, 'p.qda');
  const store = await open(file, { create: true, ...opts });
  return { dir, file, store };
}

function addCode(store: ProjectStore, name: string): number {
  return store.transaction(
    () =>
      store.run('INSERT INTO codes(name, name_key, color, owner, created_at, updated_at) VALUES (?,?,?,?,?,?)', [
        name,
        name.toLowerCase(),
        '#112233',
        'alice',
        NOW,
        NOW,
      ]).lastId,
  );
}

function codeNames(store: ProjectStore): string[] {
  return store.all<{ name: string }>('SELECT name FROM codes ORDER BY id').map((r) => r.name);
}

function journalLines(file: string): string[] {
  const text = fs.existsSync(journalPath(file)) ? fs.readFileSync(journalPath(file), 'utf8') : '';
  return text.split('\n').filter((l) => l.length > 0);
}

/** Copies the project file and its journal (as a crash would leave them) into a new directory. */
function crashCopy(file: string): string {
  const to = path.join(tmp(), path.basename(file));
  fs.copyFileSync(file, to);
  if (fs.existsSync(journalPath(file))) fs.copyFileSync(journalPath(file), journalPath(to));
  return to;
}

function isCode(code: string): (e: unknown) => boolean {
  return (e: unknown) => {
    assert.ok(e instanceof ToolError, `expected a ToolError ${code}, got ${String(e)}`);
    assert.equal(e.code, code, e.message);
    return true;
  };
}

function capturingLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  return { lines, info: (m) => lines.push(`info ${m}`), warn: (m) => lines.push(`warn ${m}`), error: (m) => lines.push(`error ${m}`) };
}

/** A pid that is certainly dead: a child that has exited and been reaped. */
async function deadPid(): Promise<number> {
  const c = spawn(process.execPath, ['-e', '0'], { stdio: 'ignore' });
  const pid = c.pid;
  await new Promise((r) => c.once('exit', r));
  assert.ok(pid);
  return pid;
}

/** A live process that is not us. */
async function livePid(): Promise<number> {
  const c = spawn('sleep', ['60'], { stdio: 'ignore' });
  children.push(c);
  await new Promise((r) => c.once('spawn', r));
  assert.ok(c.pid);
  return c.pid;
}

function writeLock(file: string, pid: number, hostname = os.hostname()): void {
  fs.writeFileSync(`${file}.lock`, JSON.stringify({ pid, hostname, started_at: '2026-01-01T00:00:00.000Z' }));
}

describe('ProjectStore', function () {
  afterEach(async () => {
    for (const s of stores) await s.close().catch(() => undefined);
    for (const c of children) c.kill('SIGKILL');
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
    stores = [];
    children = [];
    dirs = [];
  });

  describe('create and migrations', () => {
    it('creates a fresh project at the latest schema with every table', async () => {
      const { dir, file, store } = await fresh();
      assert.equal(store.get<{ user_version: number }>('PRAGMA user_version')?.user_version, LATEST_VERSION);
      const tables = store.all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table'").map((r) => r.name);
      for (const t of TABLES) assert.ok(tables.includes(t), `table ${t} missing (have ${tables.join(', ')})`);
      assert.equal(store.integrityCheck(), 'ok');
      assert.equal(store.get<{ foreign_keys: number }>('PRAGMA foreign_keys')?.foreign_keys, 1);
      assert.equal(store.name, 'p');
      assert.equal(store.filePath, file);
      // The creation is checkpointed: the file on disk is a migrated database, the journal is empty.
      assert.ok(fs.statSync(file).size > 0);
      assert.equal(store.journalSize, 0);
      assert.equal(fs.statSync(journalPath(file)).size, 0);
      assert.equal(store.journalSeq, 0);
      assert.deepEqual(fs.readdirSync(dir).sort(), ['p.qda', 'p.qda-journal', 'p.qda.lock']);
      await store.close();
      const again = await open(file);
      assert.equal(again.get<{ user_version: number }>('PRAGMA user_version')?.user_version, LATEST_VERSION);
      assert.equal(again.get<{ value: string }>("SELECT value FROM meta WHERE key = 'journal_seq'")?.value, '0');
    });

    it('creates missing parent directories', async () => {
      const file = path.join(tmp(), 'a', 'b', 'p.qda');
      const store = await open(file, { create: true });
      assert.ok(fs.existsSync(file));
      assert.equal(store.integrityCheck(), 'ok');
    });

    it('starts clean when a journal is left without its database', async () => {
      const dir = tmp();
      const file = path.join(dir, 'p.qda');
      fs.writeFileSync(journalPath(file), '{"s":1,"q":[["INSERT INTO nowhere VALUES (1)",[]]]}\n');
      const store = await open(file, { create: true });
      assert.equal(store.journalSeq, 0);
      assert.equal(fs.statSync(journalPath(file)).size, 0);
    });
  });

  describe('transactions and the journal', () => {
    it('journals one fsynced line per committed transaction before returning', async () => {
      const { file, store } = await fresh();
      const journalIno = fs.statSync(journalPath(file)).ino;
      const synced: number[] = [];
      const origSync = realFs.fdatasyncSync;
      realFs.fdatasyncSync = (fd: number) => {
        if (fs.fstatSync(fd).ino === journalIno) synced.push(fs.fstatSync(fd).size);
        return origSync(fd);
      };
      let id: number;
      try {
        id = store.transaction(() => {
          const a = store.run('INSERT INTO codes(name, name_key, color, owner, created_at, updated_at) VALUES (?,?,?,?,?,?)', [
            'Hope',
            'hope',
            '#112233',
            'alice',
            NOW,
            NOW,
          ]);
          store.run('UPDATE codes SET memo = ? WHERE id = ?', ['m', a.lastId]);
          assert.equal(journalLines(file).length, 0, 'nothing is journaled before the transaction ends');
          return a.lastId;
        });
      } finally {
        realFs.fdatasyncSync = origSync;
      }
      assert.equal(id, 1);
      const lines = journalLines(file);
      assert.equal(lines.length, 1);
      assert.equal(synced.length, 1, 'the journal is fdatasync-ed exactly once per commit');
      assert.equal(synced[0], fs.statSync(journalPath(file)).size, 'the sync covered the whole line');
      assert.equal(store.journalSize, fs.statSync(journalPath(file)).size);
      const entry = JSON.parse(lines[0] ?? '') as { s: number; q: [string, unknown[]][] };
      assert.equal(entry.s, 1);
      assert.equal(entry.q.length, 2);
      assert.match(entry.q[0]?.[0] ?? '', /^INSERT INTO codes/);
      assert.deepEqual(entry.q[1], ['UPDATE codes SET memo = ? WHERE id = ?', ['m', 1]]);
      assert.equal(store.journalSeq, 1);

      addCode(store, 'Fear');
      assert.equal(journalLines(file).length, 2);
      assert.equal(JSON.parse(journalLines(file)[1] ?? '').s, 2);
      assert.equal(store.journalSeq, 2);
    });

    it('replays the journal when reopened after a crash (no checkpoint)', async () => {
      const { file, store } = await fresh();
      addCode(store, 'Hope');
      addCode(store, 'Fear');
      store.transaction(() => store.run('UPDATE codes SET memo = ? WHERE name = ?', ['afraid', 'Fear']));
      const crashed = crashCopy(file);
      const logger = capturingLogger();
      const reopened = await open(crashed, { logger });
      assert.deepEqual(codeNames(reopened), ['Hope', 'Fear']);
      assert.equal(reopened.get<{ memo: string }>("SELECT memo FROM codes WHERE name = 'Fear'")?.memo, 'afraid');
      assert.equal(reopened.journalSeq, 3);
      assert.equal(reopened.integrityCheck(), 'ok');
      assert.ok(
        logger.lines.some((l) => /replayed 3 journal entries/.test(l)),
        logger.lines.join('\n'),
      );
      // Writing goes on from the replayed sequence, and a second crash replays everything again.
      addCode(reopened, 'Joy');
      assert.equal(JSON.parse(journalLines(crashed).at(-1) ?? '').s, 4);
      const twice = await open(crashCopy(crashed));
      assert.deepEqual(codeNames(twice), ['Hope', 'Fear', 'Joy']);
      assert.equal(twice.journalSeq, 4);
    });

    it('replays bound values exactly (unicode, newlines, null, numbers, DDL)', async () => {
      const { file, store } = await fresh();
      const values: (string | number | null)[] = [
        '',
        'line\nbreak\r\n',
        'tab\tquote"back\\slash',
        'é 日本 😀 \u2028\u2029',
        '\ud800 lone',
        null,
        0,
        -1,
        2 ** 53 - 1,
        0.1,
        -1.5e300,
        'x'.repeat(100_000),
      ];
      store.transaction(() => {
        store.run('CREATE TABLE vals (k INTEGER PRIMARY KEY, v)');
        values.forEach((v, k) => store.run('INSERT INTO vals(k, v) VALUES (?, ?)', [k, v]));
      });
      const before = store.all('SELECT k, v, typeof(v) AS t FROM vals ORDER BY k');
      const reopened = await open(crashCopy(file));
      assert.deepEqual(reopened.all('SELECT k, v, typeof(v) AS t FROM vals ORDER BY k'), before);
    });

    it('run with journaled parameters: a text bound as UTF-8 bytes to CAST(? AS TEXT) is stored and replayed as the same text', async () => {
      const { file, store } = await fresh();
      const texts = ['{"matrix":[[1,2],[2,0]]}', 'é 日本 😀 "quoted" \\ back', 'x'.repeat(200_000)];
      store.transaction(() => {
        store.run('CREATE TABLE docs (k INTEGER PRIMARY KEY, v TEXT)');
        texts.forEach((t, k) => store.run('INSERT INTO docs(k, v) VALUES (?, CAST(? AS TEXT))', [k, Buffer.from(t, 'utf8')], [k, t]));
        store.run('INSERT INTO docs(k, v) VALUES (?, CAST(? AS TEXT))', [9, null], [9, null]);
      });
      const expected = [...texts.map((v, k) => ({ k, v, t: 'text' })), { k: 9, v: null, t: 'null' }];
      assert.deepEqual(store.all('SELECT k, v, typeof(v) AS t FROM docs ORDER BY k'), expected);
      // the journal holds the strings, not the bytes
      const line = JSON.parse(journalLines(file).at(-1) ?? '') as { q: [string, unknown[]][] };
      assert.deepEqual(line.q[2]?.[1], [1, texts[1]]);
      const reopened = await open(crashCopy(file));
      assert.deepEqual(reopened.all('SELECT k, v, typeof(v) AS t FROM docs ORDER BY k'), expected);
    });

    it('intColumns returns each column of integers as an Int32Array, in row order (none for no rows)', async () => {
      const { store } = await fresh();
      store.transaction(() => {
        store.run('CREATE TABLE nums (a INTEGER, b INTEGER)');
        for (let i = 0; i < 10_000; i++) store.run('INSERT INTO nums(a, b) VALUES (?, ?)', [i, i % 7 === 0 ? null : -i * 3]);
      });
      const [a, b] = store.intColumns('SELECT a, b FROM nums WHERE a >= ? ORDER BY a DESC', [5]);
      assert.ok(a instanceof Int32Array && b instanceof Int32Array);
      assert.equal(a.length, 9_995);
      assert.deepEqual([...a.subarray(0, 4)], [9_999, 9_998, 9_997, 9_996]);
      assert.deepEqual([...b.subarray(0, 4)], [-29_997, -29_994, -29_991, 0]); // 9,996 = 7 x 1,428: NULL reads as 0
      assert.equal(a.at(-1), 5);
      assert.deepEqual(store.intColumns('SELECT a, b FROM nums WHERE a < 0'), [new Int32Array(0), new Int32Array(0)]);
    });

    it('rolls back and journals nothing when the function throws', async () => {
      const { file, store } = await fresh();
      addCode(store, 'Hope');
      const size = fs.statSync(journalPath(file)).size;
      assert.throws(
        () =>
          store.transaction(() => {
            store.run('INSERT INTO codes(name, name_key, color, owner, created_at, updated_at) VALUES (?,?,?,?,?,?)', [
              'Gone',
              'gone',
              '#112233',
              'a',
              NOW,
              NOW,
            ]);
            store.run('DELETE FROM codes WHERE name = ?', ['Hope']);
            throw new Error('boom');
          }),
        /boom/,
      );
      assert.equal(fs.statSync(journalPath(file)).size, size);
      assert.equal(store.journalSize, size);
      assert.equal(store.journalSeq, 1);
      assert.equal(store.inTransaction, false);
      assert.deepEqual(codeNames(store), ['Hope']);
      // A failing statement (constraint) rolls back the same way.
      assert.throws(() => addCode(store, 'HOPE'), /UNIQUE/);
      assert.equal(fs.statSync(journalPath(file)).size, size);
      // The store is still usable and the sequence has no gap.
      addCode(store, 'Fear');
      assert.equal(JSON.parse(journalLines(file).at(-1) ?? '').s, 2);
      const reopened = await open(crashCopy(file));
      assert.deepEqual(codeNames(reopened), ['Hope', 'Fear']);
    });

    it('writes a large transaction to the journal while it runs: a crash mid-way leaves a torn tail the replay cuts, a rollback takes it back, a commit leaves exactly its line', async () => {
      const { file, store } = await fresh();
      addCode(store, 'Hope');
      const before = fs.statSync(journalPath(file)).size;
      const memo = (c: string) => c.repeat(700_000); // two statements pass the 1 Mi characters of a piece
      const insert = (name: string, m: string) =>
        store.run('INSERT INTO codes(name, name_key, color, memo, owner, created_at, updated_at) VALUES (?,?,?,?,?,?,?)', [
          name,
          name.toLowerCase(),
          '#112233',
          m,
          'a',
          NOW,
          NOW,
        ]);
      let midway = '';
      assert.throws(
        () =>
          store.transaction(() => {
            insert('Big one', memo('x'));
            insert('Big two', memo('y'));
            insert('Big three', memo('z'));
            assert.ok(fs.statSync(journalPath(file)).size > before + 1_000_000, 'the first pieces are in the file before the commit');
            midway = crashCopy(file);
            throw new Error('boom');
          }),
        /boom/,
      );
      assert.equal(fs.statSync(journalPath(file)).size, before, 'the rollback cut its part of the line back');
      assert.equal(store.journalSize, before);
      // the crash copy: the committed line, then a torn one (no newline) that the replay cuts off
      const crashed = await open(midway);
      assert.deepEqual(codeNames(crashed), ['Hope']);
      // the torn tail is cut and the replayed line checkpointed: nothing of the three big statements is left
      assert.equal(fs.statSync(journalPath(midway)).size, 0, 'the torn tail was cut');
      assert.equal(crashed.journalSeq, 1);
      // committed, the line is the whole transaction as one JSON line, and it replays
      store.transaction(() => {
        insert('Big one', memo('x'));
        insert('Big two', memo('y'));
      });
      const lines = journalLines(file);
      assert.equal(lines.length, 2);
      const entry = JSON.parse(lines[1] ?? '') as { s: number; q: [string, unknown[]][] };
      assert.equal(entry.s, 2);
      assert.deepEqual(
        entry.q.map(([, p]) => p[0]),
        ['Big one', 'Big two'],
      );
      assert.equal(fs.statSync(journalPath(file)).size, store.journalSize);
      const reopened = await open(crashCopy(file));
      assert.deepEqual(codeNames(reopened), ['Hope', 'Big one', 'Big two']);
      assert.equal(reopened.get<{ m: string }>('SELECT memo AS m FROM codes WHERE name = ?', ['Big two'])?.m, memo('y'));
    });

    it('journals nothing for a transaction without writes, and refuses async functions', async () => {
      const { file, store } = await fresh();
      let hooks = 0;
      store.onDidCommit(() => hooks++);
      assert.equal(
        store.transaction(() => store.all('SELECT * FROM codes').length),
        0,
      );
      assert.equal(fs.statSync(journalPath(file)).size, 0);
      assert.equal(store.journalSeq, 0);
      assert.equal(hooks, 0);
      assert.throws(() => store.transaction(async () => 1), /synchronous/);
      assert.equal(store.inTransaction, false);
      addCode(store, 'Hope');
      assert.equal(hooks, 1);
    });

    it('joins nested transactions into the outer one', async () => {
      const { file, store } = await fresh();
      store.transaction(() => {
        addCode(store, 'Outer');
        assert.equal(store.inTransaction, true);
        store.transaction(() => addCode(store, 'Inner'));
        assert.equal(journalLines(file).length, 0, 'the inner transaction does not commit on its own');
      });
      assert.equal(journalLines(file).length, 1);
      assert.equal(JSON.parse(journalLines(file)[0] ?? '').q.length, 2);
      assert.equal(store.journalSeq, 1);

      // An inner throw that escapes the outer rolls back both.
      assert.throws(() =>
        store.transaction(() => {
          addCode(store, 'Outer2');
          store.transaction(() => {
            addCode(store, 'Inner2');
            throw new Error('inner');
          });
        }),
      );
      assert.equal(journalLines(file).length, 1);
      assert.deepEqual(codeNames(store), ['Outer', 'Inner']);
      const reopened = await open(crashCopy(file));
      assert.deepEqual(codeNames(reopened), ['Outer', 'Inner']);
    });

    it('throws when run is called outside a transaction', async () => {
      const { store } = await fresh();
      assert.throws(() => store.run('DELETE FROM codes'), /outside a transaction/);
    });

    it('refuses transactions after close, and close is idempotent', async () => {
      const { file, store } = await fresh();
      addCode(store, 'Hope');
      await store.close();
      await store.close();
      assert.throws(() => addCode(store, 'Late'), isCode('NO_PROJECT'));
      assert.ok(!fs.existsSync(`${file}.lock`), 'close releases the lock');
      assert.equal(fs.statSync(journalPath(file)).size, 0, 'close checkpoints');
    });
  });

  describe('torn and damaged journals', () => {
    it('a row a replay re-made keeps its GUID through a second crash (the open checkpoints after a replay)', async () => {
      const { file, store } = await fresh();
      addCode(store, 'Hope');
      const guidOf = (s: ProjectStore) => s.get<{ guid: string }>("SELECT guid FROM codes WHERE name = 'Hope'")?.guid;
      assert.match(guidOf(store) ?? '', /^[0-9a-f-]{36}$/, 'the insert trigger drew a GUID');
      // first crash: the replay runs the INSERT again and its trigger draws a GUID anew
      const first = await open(crashCopy(file));
      const drawn = guidOf(first);
      assert.ok(drawn);
      // second crash before anything else happened: the GUID the first restart showed (to a snapshot, a sync) stays
      const second = await open(crashCopy(first.filePath));
      assert.equal(guidOf(second), drawn);
    });

    it('ignores and cuts a torn last line (a crash mid-append)', async () => {
      const { file, store } = await fresh();
      addCode(store, 'Hope');
      addCode(store, 'Fear');
      const crashed = crashCopy(file);
      const good = fs.statSync(journalPath(crashed)).size;
      fs.appendFileSync(journalPath(crashed), '{"s":3,"q":[["INSERT INTO codes(name, name_key, color, owner, cre');
      const logger = capturingLogger();
      const reopened = await open(crashed, { logger });
      assert.deepEqual(codeNames(reopened), ['Hope', 'Fear']);
      assert.equal(reopened.journalSeq, 2);
      assert.ok(good > 0);
      // the open checkpoints after a replay: the replayed lines are in the file, the journal is empty, the tail gone
      assert.equal(fs.statSync(journalPath(crashed)).size, 0, 'the torn tail is cut off and the replay checkpointed');
      assert.equal(Number(reopened.get<{ v: string }>("SELECT value AS v FROM meta WHERE key = 'journal_seq'")?.v), 2);
      assert.ok(
        logger.lines.some((l) => /^warn cut a torn journal tail/.test(l)),
        logger.lines.join('\n'),
      );
      // New commits follow the cut, and the next replay reads them.
      addCode(reopened, 'Joy');
      assert.equal(JSON.parse(journalLines(crashed).at(-1) ?? '').s, 3);
      const again = await open(crashCopy(crashed));
      assert.deepEqual(codeNames(again), ['Hope', 'Fear', 'Joy']);
    });

    it('ignores a torn tail that is a complete JSON value without its newline', async () => {
      const { file, store } = await fresh();
      addCode(store, 'Hope');
      const crashed = crashCopy(file);
      const line = JSON.stringify({ s: 2, q: [["UPDATE codes SET memo = 'x'", []]] });
      fs.appendFileSync(journalPath(crashed), line);
      const reopened = await open(crashed);
      assert.equal(reopened.journalSeq, 1);
      assert.equal(reopened.get<{ memo: string | null }>('SELECT memo FROM codes')?.memo, null);
    });

    it('fails with PROJECT_CORRUPT on a damaged line before the last, and releases the lock', async () => {
      const { file, store } = await fresh();
      addCode(store, 'Hope');
      addCode(store, 'Fear');
      addCode(store, 'Joy');
      const crashed = crashCopy(file);
      const lines = journalLines(crashed);
      lines[1] = (lines[1] ?? '').slice(0, 20) + '#garbage#';
      fs.writeFileSync(journalPath(crashed), lines.join('\n') + '\n');
      await assert.rejects(ProjectStore.open(crashed), isCode('PROJECT_CORRUPT'));
      assert.ok(!fs.existsSync(`${crashed}.lock`), 'a failed open leaves no lock behind');
      assert.equal(fs.readFileSync(journalPath(crashed), 'utf8'), lines.join('\n') + '\n', 'a failed open does not touch the journal');
    });

    it('fails with PROJECT_CORRUPT on a gap in the sequence', async () => {
      const { file, store } = await fresh();
      addCode(store, 'Hope');
      addCode(store, 'Fear');
      addCode(store, 'Joy');
      const crashed = crashCopy(file);
      const lines = journalLines(crashed);
      fs.writeFileSync(journalPath(crashed), `${lines[0]}\n${lines[2]}\n`);
      await assert.rejects(ProjectStore.open(crashed), isCode('PROJECT_CORRUPT'));
    });

    it('fails with PROJECT_CORRUPT on an entry that does not apply', async () => {
      const { file, store } = await fresh();
      addCode(store, 'Hope');
      const crashed = crashCopy(file);
      fs.appendFileSync(journalPath(crashed), `${JSON.stringify({ s: 2, q: [['INSERT INTO no_such_table VALUES (?)', [1]]] })}\n`);
      await assert.rejects(ProjectStore.open(crashed), isCode('PROJECT_CORRUPT'));
    });
  });

  describe('checkpoints', () => {
    it('keeps foreign keys on and the rollback journal in memory, after open and after a checkpoint; a rollback still undoes', async () => {
      const { store } = await fresh();
      const settings = () => [
        store.get<{ journal_mode: string }>('PRAGMA journal_mode')?.journal_mode,
        store.get<{ foreign_keys: number }>('PRAGMA foreign_keys')?.foreign_keys,
      ];
      assert.deepEqual(settings(), ['memory', 1]);
      addCode(store, 'Hope');
      store.checkpoint();
      assert.deepEqual(settings(), ['memory', 1]);
      const before = store.all('SELECT name FROM codes');
      assert.throws(() =>
        store.transaction(() => {
          addCode(store, 'Fear');
          throw new Error('undo');
        }),
      );
      assert.deepEqual(store.all('SELECT name FROM codes'), before);
    });

    it('writes the file atomically, records journal_seq and truncates the journal', async () => {
      const { dir, file, store } = await fresh();
      addCode(store, 'Hope');
      addCode(store, 'Fear');
      assert.ok(store.journalSize > 0);
      const inoBefore = fs.statSync(file).ino;
      store.checkpoint();
      assert.notEqual(fs.statSync(file).ino, inoBefore, 'the file is replaced by a rename, not rewritten in place');
      assert.equal(store.journalSize, 0);
      assert.equal(fs.statSync(journalPath(file)).size, 0);
      assert.deepEqual(
        fs.readdirSync(dir).filter((f) => f.includes('.tmp')),
        [],
        'no temp file is left',
      );
      // The checkpointed file alone holds everything.
      const copy = path.join(tmp(), 'c.qda');
      fs.copyFileSync(file, copy);
      const reopened = await open(copy);
      assert.deepEqual(codeNames(reopened), ['Hope', 'Fear']);
      assert.equal(reopened.get<{ value: string }>("SELECT value FROM meta WHERE key = 'journal_seq'")?.value, '2');
      assert.equal(reopened.journalSeq, 2);
      // The sequence continues across the checkpoint.
      addCode(store, 'Joy');
      assert.equal(JSON.parse(journalLines(file)[0] ?? '').s, 3);
      const crashed = await open(crashCopy(file));
      assert.deepEqual(codeNames(crashed), ['Hope', 'Fear', 'Joy']);
      assert.equal(crashed.journalSeq, 3);
    });

    it('skips journal entries already in the checkpoint (crash between rename and truncate)', async () => {
      const { file, store } = await fresh();
      addCode(store, 'Hope');
      addCode(store, 'Fear');
      const oldJournal = fs.readFileSync(journalPath(file));
      store.checkpoint();
      addCode(store, 'Joy');
      // The file has journal_seq 2; the journal still holds 1 and 2 (never truncated) and then 3.
      const crashed = crashCopy(file);
      fs.writeFileSync(journalPath(crashed), Buffer.concat([oldJournal, fs.readFileSync(journalPath(file))]));
      assert.equal(journalLines(crashed).length, 3);
      const logger = capturingLogger();
      const reopened = await open(crashed, { logger });
      assert.deepEqual(codeNames(reopened), ['Hope', 'Fear', 'Joy'], 'entries 1 and 2 are not applied twice');
      assert.equal(reopened.journalSeq, 3);
      assert.ok(
        logger.lines.some((l) => /replayed 1 journal entries/.test(l)),
        logger.lines.join('\n'),
      );
      assert.equal(reopened.integrityCheck(), 'ok');
    });

    it('checkpoints after the idle time, and never with checkpointIdleMs 0', async () => {
      const { file, store } = await fresh({ checkpointIdleMs: 15 });
      addCode(store, 'Hope');
      assert.ok(fs.statSync(journalPath(file)).size > 0);
      await new Promise((r) => setTimeout(r, 150));
      assert.equal(fs.statSync(journalPath(file)).size, 0, 'idle checkpoint ran');
      assert.equal(store.journalSize, 0);

      const off = await fresh({ checkpointIdleMs: 0 });
      addCode(off.store, 'Hope');
      await new Promise((r) => setTimeout(r, 150));
      assert.ok(fs.statSync(journalPath(off.file)).size > 0, 'no idle checkpoint');
    });

    it('checkpoints right after a commit that pushes the journal over journalMaxBytes', async () => {
      const { file, store } = await fresh({ journalMaxBytes: 600 });
      addCode(store, 'A');
      assert.ok(store.journalSize > 0 && store.journalSize < 600);
      for (let i = 0; store.journalSize > 0; i++) {
        assert.ok(i < 20, 'no checkpoint happened');
        addCode(store, `code ${i}`);
      }
      assert.equal(fs.statSync(journalPath(file)).size, 0);
      const copy = path.join(tmp(), 'c.qda');
      fs.copyFileSync(file, copy);
      assert.equal((await open(copy)).journalSeq, store.journalSeq);
    });

    it('a failing size-triggered checkpoint does not fail the durable commit', async () => {
      const { file, store } = await fresh({ journalMaxBytes: 1 });
      // A directory where the checkpoint's temp file goes makes the checkpoint fail.
      fs.mkdirSync(`${file}.tmp-${process.pid}`);
      let hooks = 0;
      store.onDidCommit(() => hooks++);
      const id = addCode(store, 'Hope');
      assert.equal(id, 1, 'the transaction returns its result');
      assert.equal(hooks, 1, 'commit hooks still run');
      assert.equal(store.journalSeq, 1);
      assert.ok(store.journalSize > 0, 'the journal still holds the commit');
      const reopened = await open(crashCopy(file));
      assert.deepEqual(codeNames(reopened), ['Hope']);
      fs.rmdirSync(`${file}.tmp-${process.pid}`);
    });
  });

  describe('journal write failures', () => {
    it('a failed append leaves no partial line behind and rolls back', async () => {
      const { file, store } = await fresh();
      addCode(store, 'Hope');
      const size = fs.statSync(journalPath(file)).size;
      const origWrite = realFs.writeSync;
      // Half the line reaches the file, then the disk is full.
      (realFs as any).writeSync = (fd: number, buf: Buffer, off: number, len: number) => {
        const n = origWrite(fd, buf, off, Math.max(1, Math.floor(len / 2)));
        (realFs as any).writeSync = () => {
          throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
        };
        return n;
      };
      try {
        assert.throws(() => addCode(store, 'Lost'), /ENOSPC/);
      } finally {
        realFs.writeSync = origWrite;
      }
      assert.equal(fs.statSync(journalPath(file)).size, size, 'the partial line is removed');
      assert.deepEqual(codeNames(store), ['Hope']);
      assert.equal(store.journalSeq, 1);
      addCode(store, 'Fear');
      const reopened = await open(crashCopy(file));
      assert.deepEqual(codeNames(reopened), ['Hope', 'Fear'], 'later commits stay readable');
    });

    it('a failed fdatasync un-journals the rolled-back transaction', async () => {
      const { file, store } = await fresh();
      addCode(store, 'Hope');
      const size = fs.statSync(journalPath(file)).size;
      const origSync = realFs.fdatasyncSync;
      realFs.fdatasyncSync = () => {
        throw Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' });
      };
      try {
        assert.throws(() => addCode(store, 'Lost'), /EIO/);
      } finally {
        realFs.fdatasyncSync = origSync;
      }
      assert.equal(fs.statSync(journalPath(file)).size, size);
      assert.deepEqual(codeNames(store), ['Hope']);
      const reopened = await open(crashCopy(file));
      assert.deepEqual(codeNames(reopened), ['Hope'], 'a call that reported failure leaves nothing after a restart');
    });
  });

  describe('opening errors', () => {
    it('NO_PROJECT for a missing file without create, leaving nothing behind', async () => {
      const dir = tmp();
      await assert.rejects(ProjectStore.open(path.join(dir, 'missing.qda')), isCode('NO_PROJECT'));
      assert.deepEqual(fs.readdirSync(dir), []);
    });

    it('PROJECT_CORRUPT for a file that is not SQLite, leaving it untouched', async () => {
      const dir = tmp();
      const file = path.join(dir, 'p.qda');
      const junk = Buffer.from('this is not a database, just some text that is long enough to have a header\n'.repeat(20));
      fs.writeFileSync(file, junk);
      await assert.rejects(ProjectStore.open(file), isCode('PROJECT_CORRUPT'));
      await assert.rejects(ProjectStore.open(file, { create: true }), isCode('PROJECT_CORRUPT'));
      assert.deepEqual(fs.readFileSync(file), junk);
      assert.ok(!fs.existsSync(`${file}.lock`));
    });
  });

  describe('lock', () => {
    it('writes a lock file naming this process, removed on close', async () => {
      const { file, store } = await fresh();
      const held = readLock(`${file}.lock`);
      assert.equal(held?.pid, process.pid);
      assert.equal(held?.hostname, os.hostname());
      assert.ok(!Number.isNaN(Date.parse(held?.started_at ?? '')));
      await store.close();
      assert.ok(!fs.existsSync(`${file}.lock`));
    });

    it('refuses PROJECT_LOCKED when a live process on this host holds the lock', async () => {
      const { file, store } = await fresh();
      await store.close();
      const pid = await livePid();
      writeLock(file, pid);
      await assert.rejects(ProjectStore.open(file), (e: unknown) => {
        isCode('PROJECT_LOCKED')(e);
        assert.match((e as Error).message, new RegExp(`pid ${pid}`));
        assert.equal(((e as ToolError).details as { pid: number }).pid, pid);
        return true;
      });
      assert.equal(readLock(`${file}.lock`)?.pid, pid, 'the owner keeps its lock');
    });

    it('refuses PROJECT_LOCKED when a process on another host holds the lock', async () => {
      const { file, store } = await fresh();
      await store.close();
      writeLock(file, await deadPid(), `not-${os.hostname()}`);
      await assert.rejects(ProjectStore.open(file), isCode('PROJECT_LOCKED'));
    });

    it('takes over a stale lock whose owner died', async () => {
      const { file, store } = await fresh();
      addCode(store, 'Hope');
      const crashed = crashCopy(file);
      writeLock(crashed, await deadPid());
      const reopened = await open(crashed);
      assert.deepEqual(codeNames(reopened), ['Hope']);
      assert.equal(readLock(`${crashed}.lock`)?.pid, process.pid);
      await reopened.close();
      assert.ok(!fs.existsSync(`${crashed}.lock`));
    });

    it('takes over an unreadable (half-written) lock', async () => {
      const { file, store } = await fresh();
      await store.close();
      fs.writeFileSync(`${file}.lock`, '{"pid": 12');
      const reopened = await open(file);
      assert.equal(readLock(`${file}.lock`)?.pid, process.pid);
      await reopened.close();
    });

    it('refuses a second open of the same project in the same process', async () => {
      const { file, store } = await fresh();
      addCode(store, 'Hope');
      await assert.rejects(ProjectStore.open(file), isCode('PROJECT_LOCKED'));
      await assert.rejects(ProjectStore.open(path.join(path.dirname(file), '.', 'p.qda')), isCode('PROJECT_LOCKED'));
      // The refused open changed nothing: the first store still owns the project and its journal.
      assert.equal(readLock(`${file}.lock`)?.pid, process.pid);
      addCode(store, 'Fear');
      await store.close();
      assert.ok(!fs.existsSync(`${file}.lock`));
      const reopened = await open(file);
      assert.deepEqual(codeNames(reopened), ['Hope', 'Fear']);
    });

    it('noLock opens without touching the lock file', async () => {
      const { file, store } = await fresh();
      addCode(store, 'Hope');
      const copy = crashCopy(file);
      const pid = await livePid();
      writeLock(copy, pid);
      const ro = await open(copy, { noLock: true });
      assert.deepEqual(codeNames(ro), ['Hope']);
      await ro.close();
      assert.equal(readLock(`${copy}.lock`)?.pid, pid);
    });
  });
});
