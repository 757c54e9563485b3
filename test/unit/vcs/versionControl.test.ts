/**
 * Version control (issue 6, item 4) on real project files and real git in temp directories: the canonical
 * dump, initialize_version_control, automatic (debounced) snapshots, list_snapshots, view_diff and
 * restore_snapshot through the one pipeline, and the separation from an enclosing workspace repository.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { STATUS_BY_CODE } from '../../../src/adapters/http/httpServer';
import type { Caller } from '../../../src/agent/pipeline';
import { createPipeline, headlessHost, openProjectHandle, type ProjectHandle } from '../../../src/cli/compose';
import { silentLogger } from '../../../src/core/log';
import type { Row } from '../../../src/domain/versionControl';
import { StoreDumpAccess } from '../../../src/store/dumpAccess';
import { canonicalDump, diffDumps, parseDump, planRestore, readProjectTables, type DumpTable } from '../../../src/vcs/canonicalDump';
import { historyDirFor } from '../../../src/vcs/snapshotter';
import { ALICE, fixedClock, openFixture, type Fixture } from '../domain/projectFixture';

const BOB: Caller = { session_id: 'sess-bob', client_type: 'ASSISTANT_A_CLI', client_name: 'unit-test', user: 'bob' };

/** Runs git for the test's own checks, isolated from the machine's git configuration and from GIT_* variables. */
function git(cwd: string, ...args: string[]): string {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^git_/i.test(k)) env[k] = v;
  Object.assign(env, {
    GIT_CONFIG_GLOBAL: os.devNull,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_AUTHOR_NAME: 'Researcher',
    GIT_AUTHOR_EMAIL: 'r@example.org',
    GIT_COMMITTER_NAME: 'Researcher',
    GIT_COMMITTER_EMAIL: 'r@example.org',
  });
  // a history's git directory is beside its working tree (`history.git`, issue 13 item 9), not in it
  if (fs.existsSync(`${cwd}.git`)) Object.assign(env, { GIT_DIR: `${cwd}.git`, GIT_WORK_TREE: cwd });
  return execFileSync('git', args, { cwd, env, encoding: 'utf8' });
}

/** The dump of the project as it is now. */
function dumpOf(handle: ProjectHandle): Map<string, string> {
  return canonicalDump(readProjectTables(new StoreDumpAccess(handle.store)));
}

/** The dump files committed at `ref` in the history repository. */
function dumpAt(historyDir: string, ref: string): Map<string, string> {
  const files = git(historyDir, 'ls-tree', '-r', '--name-only', ref)
    .split('\n')
    .filter((p) => p === 'manifest.json' || p.startsWith('tables/') || p.startsWith('sources/'));
  return new Map(files.map((p) => [p, git(historyDir, 'cat-file', 'blob', `${ref}:${p}`)]));
}

/** What a caller sees of the project through the read tools (codes, categories, sources with texts, folders, segments, cases). */
async function visible(fx: Fixture): Promise<unknown> {
  const sources = await fx.ok<{ sources: { source_id: number }[] }>('list_sources');
  const perSource: unknown[] = [];
  for (const s of sources.sources) {
    perSource.push(await fx.ok('list_segments_for_source', { source_id: s.source_id }));
    perSource.push(await fx.ok('read_source_content', { source_id: s.source_id }));
  }
  return {
    codes: await fx.ok('list_codes'),
    categories: await fx.ok('list_categories'),
    sources,
    folders: await fx.ok('list_folders'),
    cases: await fx.ok('list_cases'),
    perSource,
  };
}

describe('vcs/canonicalDump', () => {
  const tables = (): DumpTable[] => [
    {
      name: 'codes',
      columns: ['id', 'name', 'color', 'memo'],
      primaryKey: ['id'],
      rows: [
        { id: 2, name: 'Trust', color: '#E15759', memo: null },
        { id: 1, name: 'Belonging', color: '#4E79A7', memo: 'a "quoted"\nmemo' },
      ],
    },
    {
      name: 'sources',
      columns: ['id', 'name', 'content', 'type'],
      primaryKey: ['id'],
      rows: [
        { id: 1, name: 'A', content: 'line one\r\nline two 😀\n', type: 'text' },
        { id: 2, name: 'Clip', content: null, type: 'audio' },
        { id: 3, name: 'Empty', content: '', type: 'text' },
      ],
    },
    {
      name: 'meta',
      columns: ['key', 'value'],
      primaryKey: ['key'],
      rows: [
        { key: 'journal_seq', value: '41' },
        { key: 'created_with', value: 'marginalia' },
      ],
    },
    { name: 'events', columns: ['seq', 'event_type'], primaryKey: ['seq'], rows: [{ seq: 1, event_type: 'coding.code_created' }] },
    {
      name: 'case_attributes',
      columns: ['case_id', 'name', 'value_number', 'value_text'],
      primaryKey: ['case_id', 'name'],
      rows: [
        { case_id: 2, name: 'age', value_number: 31.5, value_text: null },
        { case_id: 1, name: 'role', value_number: null, value_text: 'nurse' },
        { case_id: 1, name: 'age', value_number: 40, value_text: null },
      ],
    },
  ];

  /** The same tables with tables, rows and columns in a different order. */
  function shuffled(): DumpTable[] {
    return tables()
      .reverse()
      .map((t) => ({
        ...t,
        columns: [...t.columns].reverse(),
        rows: [...t.rows].reverse().map((r) => Object.fromEntries(Object.entries(r).reverse()) as Row),
      }));
  }

  it('is byte-identical for equal tables whatever the order of tables, rows and columns', () => {
    const a = canonicalDump(tables());
    const b = canonicalDump(shuffled());
    assert.deepEqual([...a.keys()], [...b.keys()]);
    for (const [p, content] of a) assert.equal(b.get(p), content, p);
    assert.deepEqual([...a.keys()], [...a.keys()].sort(), 'paths come sorted');
  });

  it('writes one sorted JSONL file per table, primary key first, other keys by name', () => {
    const d = canonicalDump(shuffled());
    assert.equal(
      d.get('tables/codes.jsonl'),
      '{"id":1,"color":"#4E79A7","memo":"a \\"quoted\\"\\nmemo","name":"Belonging"}\n{"id":2,"color":"#E15759","memo":null,"name":"Trust"}\n',
    );
    assert.equal(
      d.get('tables/case_attributes.jsonl'),
      '{"case_id":1,"name":"age","value_number":40,"value_text":null}\n{"case_id":1,"name":"role","value_number":null,"value_text":"nurse"}\n{"case_id":2,"name":"age","value_number":31.5,"value_text":null}\n',
    );
    const manifest = JSON.parse(d.get('manifest.json')!);
    assert.deepEqual(manifest.tables.case_attributes.primary_key, ['case_id', 'name']);
  });

  it('puts source texts in sources/<id>.txt byte for byte, not in the JSONL; media have no file', () => {
    const d = canonicalDump(tables());
    assert.equal(d.get('sources/1.txt'), 'line one\r\nline two 😀\n');
    assert.equal(d.get('sources/3.txt'), '');
    assert.equal(d.has('sources/2.txt'), false);
    assert.equal(
      d.get('tables/sources.jsonl'),
      '{"id":1,"name":"A","type":"text"}\n{"id":2,"content":null,"name":"Clip","type":"audio"}\n{"id":3,"name":"Empty","type":"text"}\n',
    );
  });

  it('leaves out the events table and meta.journal_seq', () => {
    const d = canonicalDump(tables());
    assert.equal(d.has('tables/events.jsonl'), false);
    assert.equal(d.get('tables/meta.jsonl'), '{"key":"created_with","value":"marginalia"}\n');
    const other = tables();
    other[2]!.rows[0]!.value = '999';
    other[3]!.rows.push({ seq: 2, event_type: 'coding.code_renamed' });
    assert.deepEqual(canonicalDump(other), d, 'the journal counter and the event log do not change the dump');
  });

  it('reads back what it wrote (parseDump), texts, nulls and blobs included', () => {
    const t = tables();
    t.push({ name: 'blobs', columns: ['id', 'data'], primaryKey: ['id'], rows: [{ id: 1, data: new Uint8Array([0, 255, 10]) }] });
    t[1]!.rows.push({ id: 4, name: 'Lone', content: 'bad \ud800 surrogate', type: 'text' });
    const parsed = parseDump(canonicalDump(t));
    const sources = parsed.get('sources')!.rows;
    assert.deepEqual(
      sources.map((r) => r.content),
      ['line one\r\nline two 😀\n', null, '', 'bad \ud800 surrogate'],
    );
    assert.deepEqual(parsed.get('blobs')!.rows[0]!.data, new Uint8Array([0, 255, 10]));
    assert.equal(parsed.has('events'), false);
  });

  it('plans the row changes that turn one state into another, never touching meta.journal_seq', () => {
    const now = tables();
    const target = parseDump(
      canonicalDump([
        {
          ...now[0]!,
          rows: [
            { id: 1, name: 'Home', color: '#4E79A7', memo: null },
            { id: 3, name: 'New', color: '#000000', memo: null },
          ],
        },
        { ...now[2]!, rows: [] },
      ]),
    );
    const plan = planRestore(now, target);
    const codes = plan.find((c) => c.table === 'codes')!;
    assert.deepEqual(
      codes.delete.map((r) => r.id),
      [2],
    );
    assert.deepEqual(
      codes.update.map((r) => r.name),
      ['Home'],
    );
    assert.deepEqual(
      codes.insert.map((r) => r.name),
      ['New'],
    );
    const meta = plan.find((c) => c.table === 'meta')!;
    assert.deepEqual(
      meta.delete.map((r) => r.key),
      ['created_with'],
      'journal_seq stays',
    );
    assert.equal(
      plan.some((c) => c.table === 'events'),
      false,
    );
    assert.deepEqual(plan.find((c) => c.table === 'sources')!.delete.length, 3, 'a table the snapshot lacks is emptied');
  });

  it('summarises differences by name and by id (diffDumps)', () => {
    const a = canonicalDump(tables());
    const t = tables();
    t[0]!.rows[1]!.name = 'Home';
    t[0]!.rows.push({ id: 3, name: 'Hope', color: '#59A14F', memo: null });
    t[1]!.rows[0]!.content = 'changed text';
    const d = diffDumps(a, canonicalDump(t));
    assert.deepEqual(d.codes.added, ['Hope']);
    assert.deepEqual(d.codes.changed, ['Home']);
    assert.deepEqual(d.codes.renamed, [{ from: 'Belonging', to: 'Home' }]);
    assert.deepEqual(d.sources.changed, ['A'], 'a changed text counts as a changed source');
    assert.deepEqual(d.tables, { codes: { added: 1, removed: 0, changed: 1 }, sources: { added: 0, removed: 0, changed: 1 } });
  });
});

describe('vcs: version control through the tools', function () {
  this.timeout(60_000);
  let fx: Fixture;
  beforeEach(async () => {
    fx = await openFixture();
  });
  afterEach(async () => {
    await fx.close();
  });
  const flush = () => fx.handle.snapshotter.flush();

  it('maps its error codes to HTTP statuses 409 and 404', () => {
    assert.equal(STATUS_BY_CODE.VERSION_CONTROL_NOT_INITIALIZED, 409);
    assert.equal(STATUS_BY_CODE.SNAPSHOT_NOT_FOUND, 404);
  });

  it('before initialize_version_control: the other tools fail with VERSION_CONTROL_NOT_INITIALIZED and changes make no history', async () => {
    await fx.ok('create_code', { name: 'Belonging', color: '#4E79A7' });
    await flush();
    assert.equal(fs.existsSync(historyDirFor(fx.handle.path)), false);
    await fx.fails('list_snapshots', {}, 'VERSION_CONTROL_NOT_INITIALIZED');
    await fx.fails('view_diff', { from_ref: 'HEAD~1', to_ref: 'HEAD' }, 'VERSION_CONTROL_NOT_INITIALIZED');
    await fx.fails('restore_snapshot', { ref: 'HEAD' }, 'VERSION_CONTROL_NOT_INITIALIZED');
  });

  it('initialize_version_control creates .marginalia/history as its own repository with an initial snapshot; again, it changes nothing', async () => {
    await fx.ok('create_code', { name: 'Belonging', color: '#4E79A7' });
    const init = await fx.ok('initialize_version_control');
    const dir = path.join(fx.dir, '.marginalia', 'history');
    assert.equal(init.history_dir, dir);
    assert.equal(init.created, true);
    assert.equal(git(dir, 'rev-parse', '--show-toplevel').trim(), fs.realpathSync(dir));
    assert.equal(git(dir, 'symbolic-ref', 'HEAD').trim(), 'refs/heads/main');
    assert.equal(git(dir, 'config', 'user.name').trim(), 'Marginalia');
    assert.equal(git(dir, 'log', '--format=%s|%an', '-1').trim(), 'Initial snapshot|Marginalia');
    assert.deepEqual(dumpAt(dir, 'HEAD'), dumpOf(fx.handle), 'the snapshot is the dump of the project');
    assert.match(fs.readFileSync(path.join(dir, 'tables', 'codes.jsonl'), 'utf8'), /"name":"Belonging"/);

    const again = await fx.ok('initialize_version_control');
    assert.equal(again.created, false);
    assert.equal(again.ref, init.ref, 'nothing changed, so no new snapshot');
    assert.equal((await fx.ok('list_snapshots')).count, 1);
  });

  it("the issue's check: after init and three mutations list_snapshots shows them, view_diff names the changed code, restore brings the old state back and restoring the pre-restore snapshot the newer one", async () => {
    const src = await fx.ok('add_text_source', { name: 'Interview A', content: 'We felt at home in the garden.\r\nIt was ours 🌱.' });
    await fx.ok('initialize_version_control');
    const states: unknown[] = [await visible(fx)];

    const code = await fx.ok('create_code', { name: 'Belonging', color: '#4E79A7' });
    await flush();
    states.push(await visible(fx));
    await fx.ok('batch_apply_codes', {
      operations: [0, 10, 20].map((start) => ({ code_id: code.code_id, source_id: src.source_id, start_position: start, end_position: start + 5 })),
    });
    await flush();
    states.push(await visible(fx));
    await fx.ok('rename_code', { code_id: code.code_id, new_name: 'Home' }, BOB);
    await flush();
    states.push(await visible(fx));

    const list = await fx.ok('list_snapshots');
    assert.equal(list.count, 4);
    assert.deepEqual(
      list.snapshots.map((s: { message: string }) => s.message),
      ["Renamed the code 'Belonging' to 'Home'", "Coded 3 passages with 'Belonging' in Interview A", "Created the code 'Belonging'", 'Initial snapshot'],
      'titles in words (issue 13, item 9)',
    );
    assert.deepEqual(
      list.snapshots.map((s: { author: string; by_agent: boolean }) => `${s.author}/${s.by_agent}`),
      ['unit-test/true', 'unit-test/true', 'unit-test/true', 'Marginalia/false'],
      "an agent's snapshots are authored by its client name",
    );
    for (const s of list.snapshots) {
      assert.match(s.ref, /^[0-9a-f]{40}$/);
      assert.ok(s.ref.startsWith(s.short_ref));
      assert.match(s.date, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    }
    assert.equal((await fx.ok('list_snapshots', { limit: 2 })).count, 2);
    const [renamed, coded, created, initial] = list.snapshots as { ref: string; short_ref: string }[];

    const diff = await fx.ok('view_diff', { from_ref: coded!.ref, to_ref: renamed!.short_ref });
    assert.deepEqual(diff.codes, { added: [], removed: [], changed: ['Home'], renamed: [{ from: 'Belonging', to: 'Home' }] });
    assert.match(diff.raw_diff, /^-\{"id":1,.*"name":"Belonging"/m);
    assert.match(diff.raw_diff, /^\+\{"id":1,.*"name":"Home"/m);
    const whole = await fx.ok('view_diff', { from_ref: initial!.ref, to_ref: 'HEAD' });
    assert.deepEqual(whole.codes.added, ['Home']);
    assert.equal(whole.segments.added, 3);
    assert.equal(whole.segments.added_ids.length, 3);
    assert.deepEqual(whole.tables, { codes: { added: 1, removed: 0, changed: 0 }, segments: { added: 3, removed: 0, changed: 0 } });
    // the same in words (issue 13, item 9): names and passage texts, never ids
    assert.deepEqual(diff.in_words, [{ heading: 'Codes', lines: ["Renamed the code 'Belonging' to 'Home'"] }]);
    assert.deepEqual(whole.in_words, [
      { heading: 'Codes', lines: ["Added the code 'Home'"] },
      { heading: 'Passages coded (3)', lines: ['\'Home\' in Interview A: "We fe"', '\'Home\' in Interview A: "home"', '\'Home\' in Interview A: "he ga"'] },
    ]);

    // restore the state after create_code: the codings and the rename disappear
    const restored = await fx.ok('restore_snapshot', { ref: created!.short_ref });
    assert.equal(restored.ref, created!.ref);
    assert.deepEqual(restored.changes.segments, { inserted: 0, updated: 0, deleted: 3 });
    assert.deepEqual(await visible(fx), states[1]);
    await flush();
    assert.deepEqual(dumpOf(fx.handle), dumpAt(historyDirFor(fx.handle.path), created!.ref), 'the project is exactly the snapshot');
    const after = await fx.ok('list_snapshots', { limit: 3 });
    assert.deepEqual(
      after.snapshots.map((s: { message: string }) => s.message),
      [`Restored ${created!.short_ref}`, `Before restoring ${created!.short_ref}`, "Renamed the code 'Belonging' to 'Home'"],
    );
    assert.equal(after.snapshots[1].ref, restored.before_ref);
    assert.equal(git(historyDirFor(fx.handle.path), 'symbolic-ref', 'HEAD').trim(), 'refs/heads/main', 'the branch stays attached');

    // undo the restore by restoring the automatic pre-restore snapshot
    await fx.ok('restore_snapshot', { ref: restored.before_ref });
    assert.deepEqual(await visible(fx), states[3]);
    await flush();
    assert.equal((await fx.ok('list_snapshots')).count, 8);
  });

  it('restore is one journaled transaction: deleted codes, segments, sources, folders and cases come back and survive a reopen', async () => {
    const folder = await fx.ok('create_folder', { name: 'Round 1' });
    const src = await fx.ok('add_text_source', { name: 'Interview B', content: 'Line one\nLine two\n' });
    await fx.ok('move_source_to_folder', { source_id: src.source_id, folder_id: folder.folder_id });
    const code = await fx.ok('create_code', { name: 'Trust', color: '#E15759' });
    await fx.ok('batch_apply_codes', { operations: [{ code_id: code.code_id, source_id: src.source_id, start_position: 0, end_position: 8 }] });
    const c = await fx.ok('create_case', { name: 'P01' });
    await fx.ok('add_source_to_case', { case_id: c.case_id, source_id: src.source_id });
    await fx.ok('set_case_attribute', { case_id: c.case_id, attribute_name: 'age', value: 42 });
    const init = await fx.ok('initialize_version_control');
    const before = await visible(fx);

    await fx.ok('delete_code', { code_id: code.code_id, delete_segments: true });
    await fx.ok('delete_case', { case_id: c.case_id });
    await fx.ok('remove_source', { source_id: src.source_id, confirm: true });
    await fx.ok('delete_folder', { folder_id: folder.folder_id });
    await fx.ok('create_code', { name: 'Later', color: '#000000' });
    await flush();
    assert.notDeepEqual(await visible(fx), before);

    const seq = fx.handle.store.journalSeq;
    const r = await fx.ok('restore_snapshot', { ref: init.ref });
    assert.equal(fx.handle.store.journalSeq, seq + 1, 'the restore is one transaction');
    assert.deepEqual(await visible(fx), before);
    assert.equal(fx.handle.store.get('PRAGMA foreign_key_check'), undefined, 'no dangling references');
    assert.ok(r.changes.codes.inserted === 1 && r.changes.codes.deleted === 1);

    // as after a crash: a copy of the file as last checkpointed plus its journal replays to the restored state
    const copy = path.join(fx.dir, 'crash-copy', 'p.qda');
    fs.mkdirSync(path.dirname(copy));
    fs.copyFileSync(fx.handle.path, copy);
    fs.copyFileSync(`${fx.handle.path}-journal`, `${copy}-journal`);
    assert.ok(fs.statSync(`${copy}-journal`).size > 0, 'the restore is in the journal, not yet checkpointed');
    const h = await openProjectHandle(copy, { checkpointIdleMs: 0, noLock: true });
    try {
      const p = createPipeline({ project: () => h, host: headlessHost, logger: silentLogger, clock: fixedClock });
      const codes = await p.invoke('list_codes', {}, ALICE);
      assert.deepEqual(codes.envelope, { success: true, data: (before as { codes: unknown }).codes });
      assert.deepEqual(dumpOf(h), dumpAt(historyDirFor(fx.handle.path), init.ref));
    } finally {
      await h.close();
    }
  });

  it('view_diff and restore_snapshot refuse unknown refs (SNAPSHOT_NOT_FOUND) and option-like refs (INVALID_ARGUMENTS), changing nothing', async () => {
    await fx.ok('create_code', { name: 'Belonging', color: '#4E79A7' });
    await fx.ok('initialize_version_control');
    const before = await visible(fx);
    const seq = fx.handle.store.journalSeq;
    await fx.fails('view_diff', { from_ref: 'HEAD~5', to_ref: 'HEAD' }, 'SNAPSHOT_NOT_FOUND');
    await fx.fails('view_diff', { from_ref: 'HEAD', to_ref: 'deadbeef' }, 'SNAPSHOT_NOT_FOUND');
    await fx.fails('restore_snapshot', { ref: '0123456789abcdef0123456789abcdef01234567' }, 'SNAPSHOT_NOT_FOUND');
    await fx.fails('restore_snapshot', { ref: '--orphan' }, 'INVALID_ARGUMENTS');
    await fx.fails('list_snapshots', { limit: 0 }, 'INVALID_ARGUMENTS');
    assert.deepEqual(await visible(fx), before);
    assert.equal(fx.handle.store.journalSeq, seq);
    assert.equal((await fx.ok('list_snapshots')).count, 1);
  });

  it('automatic snapshots are debounced: quick changes make one commit naming each of them and every session', async () => {
    const file = path.join(fx.dir, 'debounced', 'p.qda');
    const h = await openProjectHandle(file, { create: true, checkpointIdleMs: 0, snapshotDebounceMs: 500 });
    try {
      const p = createPipeline({ project: () => h, host: headlessHost, logger: silentLogger, clock: fixedClock });
      assert.ok((await p.invoke('initialize_version_control', {}, ALICE)).envelope.success);
      for (const name of ['A', 'B', 'C', 'D']) assert.ok((await p.invoke('create_code', { name, color: '#000000' }, ALICE)).envelope.success);
      assert.ok((await p.invoke('create_category', { name: 'Themes' }, BOB)).envelope.success);
      const last = Date.now();
      assert.ok((await p.invoke('list_codes', {}, BOB)).envelope.success, 'a read makes no snapshot');
      const dir = historyDirFor(file);
      assert.equal(git(dir, 'rev-list', '--count', 'HEAD').trim(), '1', 'nothing is committed before the debounce');
      while (git(dir, 'rev-list', '--count', 'HEAD').trim() === '1' && Date.now() - last < 20_000) await new Promise((r) => setTimeout(r, 50));
      assert.ok(Date.now() - last >= 450, 'the snapshot waited for the debounce');
      await h.snapshotter.idle();
      assert.equal(git(dir, 'rev-list', '--count', 'HEAD').trim(), '2', 'one commit for all five changes');
      assert.equal(
        git(dir, 'log', '-1', '--format=%s').trim(),
        "Created the code 'A'; created the code 'B'; created the code 'C'; created the code 'D'; created the category 'Themes'",
      );
      assert.equal(git(dir, 'log', '-1', '--format=%an <%ae> / %cn').trim(), 'unit-test <agent.unit-test@marginalia.invalid> / Marginalia');
      assert.match(git(dir, 'log', '-1', '--format=%b'), /- Created the code 'D' \(create_code\) \(session sess-alice, REST_CLIENT, user alice\)/);
    } finally {
      await h.close();
    }
  });

  it('closing the project commits the waiting snapshot', async () => {
    await fx.ok('initialize_version_control');
    await fx.ok('create_code', { name: 'Last words', color: '#000000' });
    const dir = historyDirFor(fx.handle.path);
    assert.equal(git(dir, 'rev-list', '--count', 'HEAD').trim(), '1');
    await fx.handle.close();
    assert.equal(git(dir, 'log', '-1', '--format=%s').trim(), "Created the code 'Last words'");
  });

  it('a restore prepared before the project changed restores nothing (TOOL_EXECUTION_ERROR)', async () => {
    await fx.ok('initialize_version_control');
    const vcs = fx.handle.vcs!;
    const prepared = await vcs.prepareRestore('HEAD', { user: 'alice', session_id: 'sess-alice', client_type: 'REST_CLIENT' });
    await fx.ok('create_code', { name: 'Meanwhile', color: '#000000' });
    assert.throws(
      () => fx.handle.transaction(() => vcs.applyRestore(prepared)),
      (e: { code?: string }) => e.code === 'TOOL_EXECUTION_ERROR',
    );
    assert.equal((await fx.ok('list_codes')).count, 1);
  });

  it('a second project in the same folder does not take over the history (VERSION_CONTROL_NOT_INITIALIZED)', async () => {
    await fx.ok('initialize_version_control');
    const other = await openProjectHandle(path.join(fx.dir, 'q.qda'), { create: true, checkpointIdleMs: 0 });
    try {
      const p = createPipeline({ project: () => other, host: headlessHost, logger: silentLogger });
      const out = await p.invoke('list_snapshots', {}, ALICE);
      assert.equal(out.envelope.success, false);
      if (!out.envelope.success) {
        assert.equal(out.envelope.error_code, 'VERSION_CONTROL_NOT_INITIALIZED');
        assert.match(out.envelope.error, /p\.qda/);
      }
    } finally {
      await other.close();
    }
  });

  it('the dump of the same state is byte-identical twice, and equal data written in a different order gives the same dump', async () => {
    const src = await fx.ok('add_text_source', { name: 'S', content: 'Ünïcode text with emoji 🎉\r\n' });
    const code = await fx.ok('create_code', { name: 'C', color: '#000000' });
    await fx.ok('batch_apply_codes', { operations: [{ code_id: code.code_id, source_id: src.source_id, start_position: 0, end_position: 7 }] });
    const first = dumpOf(fx.handle);
    assert.deepEqual(dumpOf(fx.handle), first);
    await fx.ok('list_codes');
    assert.deepEqual(dumpOf(fx.handle), first, 'reads change nothing');

    // two projects with the same rows inserted in opposite orders
    const rowsIn = async (file: string, order: number[]): Promise<Map<string, string>> => {
      const h = await openProjectHandle(file, { create: true, checkpointIdleMs: 0 });
      try {
        h.store.transaction(() => {
          for (const i of order) {
            // equal data includes the entities' GUIDs (migration 17; a row inserted without one gets a random one)
            h.store.run("INSERT INTO categories(id, name, name_key, owner, created_at, guid) VALUES (?, ?, ?, 'alice', '2026-01-01T00:00:00.000Z', ?)", [
              i,
              `Cat ${i}`,
              `cat ${i}`,
              `00000000-0000-4000-8000-00000000010${i}`,
            ]);
            h.store.run(
              "INSERT INTO codes(id, name, name_key, color, category_id, owner, created_at, updated_at, guid) VALUES (?, ?, ?, '#000000', ?, 'alice', 'x', 'x', ?)",
              [i, `Code ${i}`, `code ${i}`, i, `00000000-0000-4000-8000-00000000020${i}`],
            );
          }
        });
        return dumpOf(h);
      } finally {
        await h.close();
      }
    };
    const up = await rowsIn(path.join(fx.dir, 'up', 'p.qda'), [1, 2, 3, 4]);
    const down = await rowsIn(path.join(fx.dir, 'down', 'p.qda'), [4, 2, 3, 1]);
    assert.deepEqual([...down.entries()], [...up.entries()]);
    assert.equal(up.get('tables/codes.jsonl')!.split('\n').length, 5);
  });
});

describe('vcs: the history is never the enclosing workspace repository', function () {
  this.timeout(60_000);
  let ws: string;
  let handle: ProjectHandle | undefined;
  const savedGitDir = process.env.GIT_DIR;
  beforeEach(() => {
    ws = fs.mkdtempSync(path.join(os.tmpdir(), 'marginalia-ws-'));
    git(ws, 'init', '--quiet');
    fs.writeFileSync(path.join(ws, 'notes.md'), 'my notes\n');
    git(ws, 'add', 'notes.md');
    git(ws, 'commit', '--quiet', '-m', 'workspace commit');
  });
  afterEach(async () => {
    if (savedGitDir === undefined) delete process.env.GIT_DIR;
    else process.env.GIT_DIR = savedGitDir;
    await handle?.close();
    handle = undefined;
    fs.rmSync(ws, { recursive: true, force: true });
  });

  it('snapshots of a project inside a workspace repository leave its log, index and tracked files alone, even with GIT_DIR pointing at it', async () => {
    const head = git(ws, 'rev-parse', 'HEAD').trim();
    handle = await openProjectHandle(path.join(ws, 'study', 'p.qda'), { create: true, checkpointIdleMs: 0 });
    const h = handle;
    const p = createPipeline({ project: () => h, host: headlessHost, logger: silentLogger, clock: fixedClock });
    // as inside a git hook of the workspace: an inherited GIT_DIR must not redirect the history
    process.env.GIT_DIR = path.join(ws, '.git');
    assert.ok((await p.invoke('initialize_version_control', {}, ALICE)).envelope.success);
    assert.ok((await p.invoke('create_code', { name: 'Belonging', color: '#4E79A7' }, ALICE)).envelope.success);
    await h.snapshotter.flush();
    const listed = await p.invoke('list_snapshots', {}, ALICE);
    delete process.env.GIT_DIR;

    assert.ok(listed.envelope.success);
    if (listed.envelope.success) assert.equal((listed.envelope.data as { count: number }).count, 2);
    assert.equal(git(ws, 'rev-parse', 'HEAD').trim(), head, 'the workspace HEAD is unchanged');
    assert.equal(git(ws, 'rev-list', '--count', 'HEAD').trim(), '1');
    assert.equal(git(ws, 'diff', '--cached', '--name-only').trim(), '', 'nothing staged in the workspace');
    assert.equal(git(ws, 'status', '--porcelain').trim(), '?? study/', 'only the new project folder is untracked');
    const history = path.join(ws, 'study', '.marginalia', 'history');
    assert.equal(git(history, 'rev-parse', '--show-toplevel').trim(), fs.realpathSync(history));
    assert.equal(git(history, 'rev-list', '--count', 'HEAD').trim(), '2');
    assert.doesNotMatch(git(history, 'log', '--format=%s'), /workspace commit/);
  });
});
