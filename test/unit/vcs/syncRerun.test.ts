/**
 * A sync interrupted at each of its durable steps (issue 16 item 3: "a crash (SIGKILL) at any moment leaves both
 * the project and the remote consistent"), then run again: no spurious conflicts, no lost or duplicated entity,
 * the remote's history intact. Two real projects on disk with their real histories share one bare git remote.
 * A crash between two steps is reproduced exactly by rewinding what the later steps wrote (the history's branch,
 * the remote's branch) with plain git after a complete sync, then closing and reopening the project (a new
 * process's objects): the project file keeps what its journaled transaction wrote, git keeps what it wrote.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Caller } from '../../../src/agent/pipeline';
import { createPipeline, headlessHost, openProjectHandle, type ProjectHandle } from '../../../src/cli/compose';
import { silentLogger } from '../../../src/core/log';
import { StoreDumpAccess } from '../../../src/store/dumpAccess';
import { canonicalDump, readProjectTables } from '../../../src/vcs/canonicalDump';
import { fixedClock, storedEvents } from '../domain/projectFixture';

const RESEARCHER = (user: string): Caller => ({ session_id: 'local', client_type: 'LOCAL_UI', client_name: 'vscode', user });

function git(args: string[], gitDir: string): string {
  return execFileSync('git', ['--git-dir', gitDir, ...args], {
    encoding: 'utf8',
    env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' },
  }).trim();
}

/** One coder's copy: its project file, its history, a pipeline over it; reopen() is a restart. */
class Copy {
  handle!: ProjectHandle;
  private invoke!: (name: string, args?: unknown) => Promise<any>;
  constructor(
    readonly file: string,
    readonly coder: string,
  ) {}
  get gitDir(): string {
    return path.join(path.dirname(this.file), '.marginalia', 'history.git');
  }
  async open(create = false): Promise<void> {
    this.handle = await openProjectHandle(this.file, { create, checkpointIdleMs: 600_000, snapshotDebounceMs: 60_000 });
    const handle = this.handle;
    const pipeline = createPipeline({ project: () => handle, host: headlessHost, logger: silentLogger, clock: fixedClock });
    this.invoke = async (name, args = {}) => {
      const out = await pipeline.invoke(name, args, RESEARCHER(this.coder));
      if (!out.envelope.success) assert.fail(`${this.coder}: ${name} failed: ${out.envelope.error_code}: ${out.envelope.error}`);
      return out.envelope.data;
    };
  }
  ok(name: string, args: unknown = {}): Promise<any> {
    return this.invoke(name, args);
  }
  async reopen(): Promise<void> {
    await this.handle.close();
    await this.open();
  }
  async codeNames(): Promise<string[]> {
    return ((await this.ok('list_codes')).codes as { name: string }[]).map((c) => c.name).sort();
  }
  async segmentTexts(sourceId: number): Promise<string[]> {
    return ((await this.ok('list_segments_for_source', { source_id: sourceId })).segments as { text: string; coder?: string }[])
      .map((s) => `${s.coder ?? ''}:${s.text}`)
      .sort();
  }
  async openConflicts(): Promise<{ kind: string; entity: { name: string } }[]> {
    return (await this.ok('list_merge_conflicts')).conflicts;
  }
}

/** Copies the project file and its journal as they are on disk now (what a SIGKILL leaves), to `dir`. */
function crashCopy(file: string, dir: string): string {
  fs.mkdirSync(dir, { recursive: true });
  for (const f of fs.readdirSync(path.dirname(file)))
    if (f.startsWith(path.basename(file))) fs.copyFileSync(path.join(path.dirname(file), f), path.join(dir, f));
  return path.join(dir, path.basename(file));
}

describe('vcs identity: the GUIDs the triggers draw survive a crash (journal replay)', function () {
  this.timeout(60_000);
  it('entities created and coded since the last checkpoint come back from the journal with the GUIDs a dump of them showed', async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'marginalia-guids-'));
    const c = new Copy(path.join(root, 'live', 'study.qda'), 'Ana');
    fs.mkdirSync(path.dirname(c.file), { recursive: true });
    try {
      await c.open(true);
      c.handle.store.checkpoint();
      const src = await c.ok('add_text_source', { name: 'i1', content: 'We grew our own food.' });
      const cat = await c.ok('create_category', { name: 'Place' });
      const code = await c.ok('create_code', { name: 'Food', color: '#112233', category_id: cat.category_id });
      await c.ok('batch_apply_codes', { operations: [{ code_id: code.code_id, source_id: src.source_id, start_position: 0, end_position: 7 }] });
      const guids = (h: ProjectHandle) =>
        ['sources', 'categories', 'codes', 'segments'].map((t) => h.store.all<{ id: number; guid: string }>(`SELECT id, guid FROM ${t} ORDER BY id`));
      const live = guids(c.handle);
      assert.ok(
        live.every((rows) => rows.length === 1 && /^[0-9a-f-]{36}$/.test(rows[0]!.guid)),
        JSON.stringify(live),
      );
      // what a snapshot or sync reads: the dump, which holds these GUIDs
      const dumped = canonicalDump(readProjectTables(new StoreDumpAccess(c.handle.store)));
      assert.ok(dumped.get('tables/codes.jsonl')!.includes(live[2]![0]!.guid));
      assert.ok(c.handle.store.journalSize > 0, 'the changes are in the journal only');
      const replayed = await openProjectHandle(crashCopy(c.file, path.join(root, 'after-crash')), {});
      try {
        assert.deepEqual(guids(replayed), live);
      } finally {
        await replayed.close();
      }
    } finally {
      await c.handle.close();
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});

/** The interruptions: where the killed sync stopped (what it had made durable). */
type Crash = 'after_project_change' | 'after_branch_move';

describe('vcs sync: a sync interrupted at any step and run again is idempotent', function () {
  this.timeout(120_000);
  let root: string;
  let remote: string;
  let ana: Copy;
  let ben: Copy;
  let sourceId: number;

  beforeEach(async () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'marginalia-rerun-'));
    remote = path.join(root, 'remote.git');
    execFileSync('git', ['init', '--quiet', '--bare', '--initial-branch=main', remote]);
    ana = new Copy(path.join(root, 'ana', 'study.qda'), 'Ana');
    ben = new Copy(path.join(root, 'ben', 'study.qda'), 'Ben');
    for (const c of [ana, ben]) {
      fs.mkdirSync(path.dirname(c.file), { recursive: true });
      await c.open(true);
      await c.ok('initialize_version_control');
      await c.ok('configure_remote', { url: remote });
    }
    sourceId = (await ana.ok('add_text_source', { name: 'interview-01', content: 'We grew our own food. The council never came. Neighbours shared seeds.' }))
      .source_id;
    await ana.ok('sync_project');
    assert.equal((await ben.ok('sync_project')).outcome, 'fast_forward');
  });

  afterEach(async () => {
    await ana.handle.close();
    await ben.handle.close();
    fs.rmSync(root, { recursive: true, force: true });
  });

  /** Ana's sync, then undoes what the steps after `crash` wrote, and restarts Ana. */
  async function crashedSync(crash: Crash): Promise<void> {
    const remoteBefore = git(['rev-parse', 'main'], remote);
    assert.equal((await ana.ok('sync_project')).outcome, 'merged');
    // the push never happened
    git(['update-ref', 'refs/heads/main', remoteBefore], remote);
    // nor, for a crash right after the project changed, the branch move: the history stays at the snapshot taken before syncing
    if (crash === 'after_project_change') git(['update-ref', 'refs/heads/main', git(['rev-parse', 'main^1'], ana.gitDir)], ana.gitDir);
    await ana.reopen();
  }

  it('a server killed after a sync and restarted from its journal syncs again without conflicts: its entities keep their GUIDs', async () => {
    const code = (await ana.ok('create_code', { name: 'Before the crash', color: '#123456' })).code_id;
    await ana.ok('batch_apply_codes', { operations: [{ code_id: code, source_id: sourceId, start_position: 0, end_position: 21 }] });
    assert.equal((await ana.ok('sync_project')).outcome, 'pushed');
    // SIGKILL: the project file and journal stay as they are on disk (closing would checkpoint them)
    assert.ok(ana.handle.store.journalSize > 0);
    const saved = crashCopy(ana.file, path.join(root, 'saved'));
    await ana.handle.close();
    for (const f of fs.readdirSync(path.dirname(ana.file))) if (f.startsWith(path.basename(ana.file))) fs.rmSync(path.join(path.dirname(ana.file), f));
    crashCopy(saved, path.dirname(ana.file));
    await ana.open();
    // Ben receives Ana's code and codes with it; the sync tells subscribers what changed (one project.synced event)
    const synced = () => storedEvents(ben.handle).filter((e) => e.event_type === 'project.synced');
    const before = synced().length;
    assert.equal((await ben.ok('sync_project')).outcome, 'fast_forward');
    const ev = synced().slice(before);
    assert.equal(ev.length, 1);
    assert.equal(ev[0]!.payload.outcome, 'fast_forward');
    assert.deepEqual((ev[0]!.payload.changes as Record<string, { inserted: number }>).codes!.inserted, 1);
    assert.equal((await ben.ok('sync_project')).outcome, 'up_to_date');
    assert.equal(synced().length, before + 1, 'a sync that changed nothing emits nothing');
    const benCode = ((await ben.ok('list_codes')).codes as { name: string; code_id: number }[]).find((c) => c.name === 'Before the crash')!.code_id;
    await ben.ok('batch_apply_codes', { operations: [{ code_id: benCode, source_id: sourceId, start_position: 46, end_position: 70 }] });
    await ben.ok('create_code', { name: 'Ben after', color: '#123456' });
    await ben.ok('sync_project');
    await ana.ok('create_code', { name: 'Ana after', color: '#123456' });
    const merged = await ana.ok('sync_project');
    assert.equal(merged.outcome, 'merged');
    assert.deepEqual(merged.conflicts, []);
    await ben.ok('sync_project');
    for (const c of [ana, ben]) {
      assert.deepEqual(await c.codeNames(), ['Ana after', 'Before the crash', 'Ben after'], c.coder);
      assert.deepEqual(await c.segmentTexts(sourceId), ['Ana:We grew our own food.', 'Ben:Neighbours shared seeds.'], c.coder);
      assert.deepEqual(await c.openConflicts(), [], c.coder);
    }
  });

  for (const crash of ['after_project_change', 'after_branch_move'] as Crash[]) {
    it(`rounds of merges, each killed ${crash.replace(/_/g, ' ')}: the reruns make no conflicts and lose or duplicate nothing`, async () => {
      const remoteHeads: string[] = [];
      for (let i = 0; i < 3; i++) {
        const benCode = (await ben.ok('create_code', { name: `Round ${i} Ben`, color: '#123456' })).code_id;
        await ben.ok('batch_apply_codes', { operations: [{ code_id: benCode, source_id: sourceId, start_position: 46, end_position: 70 }] });
        await ben.ok('sync_project');
        const anaCode = (await ana.ok('create_code', { name: `Round ${i} Ana`, color: '#654321' })).code_id;
        await ana.ok('batch_apply_codes', { operations: [{ code_id: anaCode, source_id: sourceId, start_position: 0, end_position: 21 }] });
        remoteHeads.push(git(['rev-parse', 'main'], remote));
        await crashedSync(crash);
      }
      await ana.ok('sync_project');
      await ben.ok('sync_project');
      assert.equal((await ana.ok('sync_project')).outcome, 'up_to_date');
      const expected = [0, 1, 2].flatMap((i) => [`Round ${i} Ana`, `Round ${i} Ben`]).sort();
      for (const c of [ana, ben]) {
        assert.deepEqual(await c.codeNames(), expected, c.coder);
        assert.deepEqual(
          await c.segmentTexts(sourceId),
          [...Array(3).fill('Ana:We grew our own food.'), ...Array(3).fill('Ben:Neighbours shared seeds.')],
          c.coder,
        );
        assert.deepEqual(await c.openConflicts(), [], `${c.coder}: no conflicts`);
      }
      git(['fsck', '--no-dangling'], remote);
      for (const h of remoteHeads) git(['merge-base', '--is-ancestor', h, 'main'], remote);
    });
  }
});
