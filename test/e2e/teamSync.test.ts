import { strict as assert } from 'node:assert';
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { AS_AGENT, callTool, REPO_ROOT, startServer, tmpDir, type ServerProcess } from '../helpers/serverProcess';

/**
 * Issue 16 items 1 and 2: two projects in two folders, each served by its own `marginalia serve` with its own
 * coder identity, share one bare git remote; sync both ways over a path remote and over git's own network
 * transport (`git daemon` on 127.0.0.1); a sync killed with SIGKILL loses and duplicates nothing.
 * Everything is checked through the tools and through plain git on the remote.
 */

/** git run by the test itself, with no user or system configuration. */
function gitOut(args: string[], cwd?: string): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' } });
}

/** A file of the newest commit of `gitDir`'s branch main. */
function showAt(gitDir: string, file: string, ref = 'main'): string {
  return gitOut(['--git-dir', gitDir, 'show', `${ref}:${file}`]);
}

function rows(jsonl: string): Record<string, unknown>[] {
  return jsonl
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

async function ok<T = any>(base: string, tool: string, args: Record<string, unknown> = {}, headers: Record<string, string> = {}): Promise<T> {
  const r = await callTool<T>(base, tool, args, headers);
  assert.equal(r.status, 200, `${tool}: ${JSON.stringify(r.body)}`);
  return r.body.data;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

async function waitForPort(port: number, ms: number): Promise<void> {
  const until = Date.now() + ms;
  for (;;) {
    const up = await new Promise<boolean>((resolve) => {
      const c = net.connect(port, '127.0.0.1', () => {
        c.end();
        resolve(true);
      });
      c.once('error', () => resolve(false));
    });
    if (up) return;
    if (Date.now() > until) throw new Error(`nothing listens on 127.0.0.1:${port}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('e2e: teams on a git remote (two servers, two coders, one bare remote)', function () {
  this.timeout(120_000);
  let root: string;
  let remoteDir: string;
  let aFile: string;
  let bFile: string;
  let a: ServerProcess;
  let b: ServerProcess;
  let sourceId: number;

  before(async () => {
    root = tmpDir('marginalia-team-');
    remoteDir = path.join(root, 'remote', 'study.git');
    fs.mkdirSync(remoteDir, { recursive: true });
    gitOut(['init', '--quiet', '--initial-branch=main', '--bare', remoteDir]);
    aFile = path.join(root, 'ana', 'study.qda');
    bFile = path.join(root, 'ben', 'study.qda');
    fs.mkdirSync(path.dirname(aFile), { recursive: true });
    fs.mkdirSync(path.dirname(bFile), { recursive: true });
    a = await startServer(aFile, [], { MARGINALIA_CODER: 'Ana' });
    b = await startServer(bFile, [], { MARGINALIA_CODER: 'Ben' });
  });

  after(async () => {
    await a?.stop();
    await b?.stop();
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('refuses to sync before a remote is configured, a URL with a password, and agents configuring or syncing on their own', async () => {
    await ok(a.base, 'initialize_version_control');
    const none = await callTool(a.base, 'sync_project', {});
    assert.equal(none.status, 409);
    assert.equal(none.body.error_code, 'REMOTE_NOT_CONFIGURED');
    const status = await ok(a.base, 'get_remote_status');
    assert.equal(status.configured, false);

    const pw = await callTool(a.base, 'configure_remote', { url: 'https://ana:secret@example.org/study.git' });
    assert.equal(pw.status, 400);
    assert.equal(pw.body.error_code, 'INVALID_ARGUMENTS');
    assert.match(pw.body.error!, /credentials/);

    const agentConfigures = await callTool(a.base, 'configure_remote', { url: remoteDir }, AS_AGENT);
    assert.equal(agentConfigures.status, 403);
    assert.equal(agentConfigures.body.error_code, 'APPROVAL_FORBIDDEN');
    // nothing was configured by the refused calls
    assert.equal((await ok(a.base, 'get_remote_status')).configured, false);
  });

  it('Ana pushes her project; Ben, starting empty, receives it with the same GUIDs; GUIDs are in the history, not derived per copy', async () => {
    const src = await ok(a.base, 'add_text_source', {
      name: 'interview-01',
      content: 'We grew our own food. The council never came. Neighbours shared seeds.',
    });
    sourceId = src.source_id;
    const food = await ok(a.base, 'create_code', { name: 'Food security', color: '#336699' });
    await ok(a.base, 'batch_apply_codes', { operations: [{ code_id: food.code_id, source_id: sourceId, start_position: 0, end_position: 21 }] });

    const conf = await ok(a.base, 'configure_remote', { url: remoteDir });
    assert.equal(conf.name, 'origin');
    assert.equal(conf.url, remoteDir);
    const pushed = await ok(a.base, 'sync_project');
    assert.equal(pushed.outcome, 'pushed');
    assert.equal(pushed.pushed, true);
    assert.match(pushed.in_words, /Sent \d+ snapshots? to origin/);
    // the remote holds Ana's history, her snapshots authored by her coder name
    const authors = gitOut(['--git-dir', remoteDir, 'log', '--format=%an', 'main']).split('\n');
    assert.ok(authors.includes('Ana'), authors.join(','));
    const remoteCodes = rows(showAt(remoteDir, 'tables/codes.jsonl'));
    assert.deepEqual(
      remoteCodes.map((c) => c.name),
      ['Food security'],
    );
    const foodGuid = remoteCodes[0]!.guid as string;
    assert.match(foodGuid, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    const segGuid = rows(showAt(remoteDir, 'tables/segments.jsonl'))[0]!.guid as string;
    assert.match(segGuid, /^[0-9a-f-]{36}$/);

    // Ben: an empty project joins by taking the remote's history
    await ok(b.base, 'initialize_version_control');
    await ok(b.base, 'configure_remote', { url: `file://${remoteDir}` });
    const joined = await ok(b.base, 'sync_project');
    assert.equal(joined.outcome, 'fast_forward');
    assert.ok(joined.received >= 1);
    assert.match(joined.in_words, /Received \d+ snapshots? from origin/);
    const codes = await ok(b.base, 'list_codes');
    assert.deepEqual(
      codes.codes.map((c: { name: string }) => c.name),
      ['Food security'],
    );
    const segs = await ok(b.base, 'list_segments_for_source', { source_id: sourceId });
    assert.equal(segs.segments.length, 1);
    assert.equal(segs.segments[0].text, 'We grew our own food.');
    // the same GUIDs on Ben's side (his own project GUID would derive others)
    const bGit = path.join(path.dirname(bFile), '.marginalia', 'history.git');
    assert.equal(rows(showAt(bGit, 'tables/codes.jsonl'))[0]!.guid, foodGuid);
    assert.equal(rows(showAt(bGit, 'tables/segments.jsonl'))[0]!.guid, segGuid);
    // and REFI-QDA exports of either copy name the code by that GUID
    const codeGuidIn = async (base: string, file: string) => {
      await ok(base, 'export_data', { format: 'qdc', output_path: file });
      return /<Code guid="([^"]+)" name="Food security"/.exec(fs.readFileSync(file, 'utf8'))?.[1];
    };
    assert.equal(await codeGuidIn(a.base, path.join(path.dirname(aFile), 'book.qdc')), foodGuid);
    assert.equal(await codeGuidIn(b.base, path.join(path.dirname(bFile), 'book.qdc')), foodGuid);
    const st = await ok(b.base, 'get_remote_status');
    assert.equal(st.configured, true);
    assert.equal(st.ahead, 0);
    assert.equal(st.behind, 0);
    assert.equal(st.reachable, true);
    assert.ok(st.last_sync && !Number.isNaN(Date.parse(st.last_sync)));
  });

  it("Ben codes and pushes; Ana fast-forwards to Ben's coding, authored by Ben; ahead and behind count snapshots", async () => {
    const trust = await ok(b.base, 'create_code', { name: 'Institutional distrust', color: '#993333' });
    await ok(b.base, 'batch_apply_codes', { operations: [{ code_id: trust.code_id, source_id: sourceId, start_position: 22, end_position: 45 }] });
    // Ana learns she is behind once Ben pushed
    const sent = await ok(b.base, 'sync_project');
    assert.equal(sent.outcome, 'pushed');
    const before = await ok(a.base, 'get_remote_status');
    assert.ok(before.behind >= 1, JSON.stringify(before));
    assert.equal(before.ahead, 0);

    const got = await ok(a.base, 'sync_project');
    assert.equal(got.outcome, 'fast_forward');
    assert.ok(got.changes.codes.inserted === 1 && got.changes.segments.inserted === 1, JSON.stringify(got.changes));
    const segs = await ok(a.base, 'list_segments_for_source', { source_id: sourceId });
    assert.deepEqual(segs.segments.map((s: { text: string }) => s.text).sort(), ['The council never came.', 'We grew our own food.']);
    const authors = gitOut(['--git-dir', remoteDir, 'log', '--format=%an', 'main']).split('\n');
    assert.ok(authors.includes('Ben'), authors.join(','));
    const after = await ok(a.base, 'get_remote_status');
    assert.equal(after.behind, 0);
    assert.equal(after.ahead, 0);
    // nothing new on either side: up to date
    assert.equal((await ok(a.base, 'sync_project')).outcome, 'up_to_date');
  });

  it('both code different passages (and both create the same code) while apart: the merge keeps every coding, one code per name, a merge authored by Ben', async () => {
    const codeId = async (base: string, name: string) =>
      ((await ok(base, 'list_codes')).codes as { name: string; code_id: number }[]).find((c) => c.name === name)!.code_id;
    // Ana: a new code on the first sentence; Ben: another new code on the third; both make 'Trust' on the second
    const hope = await ok(a.base, 'create_code', { name: 'Hope', color: '#aaaa00' });
    await ok(a.base, 'batch_apply_codes', { operations: [{ code_id: hope.code_id, source_id: sourceId, start_position: 0, end_position: 21 }] });
    const fear = await ok(b.base, 'create_code', { name: 'Fear', color: '#550000' });
    await ok(b.base, 'batch_apply_codes', { operations: [{ code_id: fear.code_id, source_id: sourceId, start_position: 46, end_position: 70 }] });
    for (const s of [a, b]) {
      const trust = await ok(s.base, 'create_code', { name: 'Trust', color: '#000099' });
      await ok(s.base, 'batch_apply_codes', { operations: [{ code_id: trust.code_id, source_id: sourceId, start_position: 22, end_position: 45 }] });
    }
    assert.equal((await ok(a.base, 'sync_project')).outcome, 'pushed');
    const merged = await ok(b.base, 'sync_project');
    assert.equal(merged.outcome, 'merged', JSON.stringify(merged));
    assert.equal(merged.pushed, true);
    assert.match(merged.in_words, /Merged \d+ snapshots? from origin/);
    // the merge snapshot on the remote: two parents, authored by Ben
    const [parents, author] = gitOut(['--git-dir', remoteDir, 'log', '-1', '--format=%P%x09%an', 'main']).trim().split('\t');
    assert.equal(parents!.split(' ').length, 2);
    assert.equal(author, 'Ben');
    assert.equal((await ok(a.base, 'sync_project')).outcome, 'fast_forward');

    for (const s of [a, b]) {
      const names = ((await ok(s.base, 'list_codes')).codes as { name: string }[]).map((c) => c.name).sort();
      assert.deepEqual(names, ['Fear', 'Food security', 'Hope', 'Institutional distrust', 'Trust']);
      const segs = (await ok(s.base, 'list_segments_for_source', { source_id: sourceId })).segments as { code_id: number; text: string; coder?: string }[];
      const coded = (name: string, id: number) =>
        segs
          .filter((g) => g.code_id === id)
          .map((g) => g.text)
          .sort();
      assert.deepEqual(coded('Hope', await codeId(s.base, 'Hope')), ['We grew our own food.']);
      assert.deepEqual(coded('Fear', await codeId(s.base, 'Fear')), ['Neighbours shared seeds.']);
      // one 'Trust' code holding both coders' codings of the same passage
      assert.deepEqual(coded('Trust', await codeId(s.base, 'Trust')), ['The council never came.', 'The council never came.']);
    }
    const st = await ok(b.base, 'get_remote_status');
    assert.equal(st.ahead + st.behind, 0);
  });

  it("an agent's sync waits for the researcher's approval (trust: Require)", async () => {
    const held = await callTool(a.base, 'sync_project', {}, AS_AGENT);
    assert.equal(held.status, 202, JSON.stringify(held.body));
  });

  it("syncs over git's own network transport (git daemon on 127.0.0.1)", async function () {
    const base = path.join(root, 'daemon');
    fs.mkdirSync(base, { recursive: true });
    gitOut(['init', '--quiet', '--initial-branch=main', '--bare', path.join(base, 'shared.git')]);
    const port = await freePort();
    const daemon: ChildProcess = spawn(
      'git',
      ['daemon', '--export-all', '--enable=receive-pack', `--base-path=${base}`, '--listen=127.0.0.1', `--port=${port}`, '--reuseaddr', base],
      {
        stdio: 'ignore',
      },
    );
    try {
      await waitForPort(port, 10_000);
      const url = `git://127.0.0.1:${port}/shared.git`;
      await ok(a.base, 'configure_remote', { url, name: 'lab' });
      const pushed = await ok(a.base, 'sync_project');
      assert.equal(pushed.outcome, 'pushed');
      assert.equal(pushed.remote.name, 'lab');
      assert.deepEqual(
        rows(showAt(path.join(base, 'shared.git'), 'tables/codes.jsonl'))
          .map((c) => c.name)
          .sort(),
        ['Fear', 'Food security', 'Hope', 'Institutional distrust', 'Trust'],
      );
      // Ben adds a code, syncs it through the daemon; Ana receives it the same way
      await ok(b.base, 'configure_remote', { url, name: 'lab' });
      const bFirst = await ok(b.base, 'sync_project');
      assert.ok(['up_to_date', 'fast_forward', 'pushed'].includes(bFirst.outcome), bFirst.outcome);
      await ok(b.base, 'create_code', { name: 'Mutual aid', color: '#339933' });
      assert.equal((await ok(b.base, 'sync_project')).outcome, 'pushed');
      const got = await ok(a.base, 'sync_project');
      assert.equal(got.outcome, 'fast_forward');
      const names = (await ok(a.base, 'list_codes')).codes.map((c: { name: string }) => c.name).sort();
      assert.deepEqual(names, ['Fear', 'Food security', 'Hope', 'Institutional distrust', 'Mutual aid', 'Trust']);
    } finally {
      daemon.kill('SIGTERM');
    }
  });

  it('a sync killed with SIGKILL loses and duplicates nothing: after a restart the next sync completes and the remote history is intact', async () => {
    // back to the path remote; Ben adds work for Ana to receive, then Ana's server dies mid-sync
    await ok(a.base, 'configure_remote', { url: remoteDir });
    await ok(b.base, 'configure_remote', { url: remoteDir });
    await ok(b.base, 'sync_project');
    await ok(b.base, 'create_code', { name: 'Seeds', color: '#999933' });
    await ok(b.base, 'batch_apply_codes', {
      operations: [
        {
          code_id: (await ok(b.base, 'list_codes')).codes.find((c: { name: string }) => c.name === 'Seeds').code_id,
          source_id: sourceId,
          start_position: 46,
          end_position: 70,
        },
      ],
    });
    assert.equal((await ok(b.base, 'sync_project')).outcome, 'pushed');
    const remoteHead = gitOut(['--git-dir', remoteDir, 'rev-parse', 'main']).trim();

    const killDuringSync = async (afterMs: number) => {
      const pending = callTool(a.base, 'sync_project', {}).catch(() => undefined);
      await new Promise((r) => setTimeout(r, afterMs));
      await a.kill();
      await pending;
      a = await startServer(aFile, [], { MARGINALIA_CODER: 'Ana' });
    };
    // a fast-forward killed
    await killDuringSync(150);
    const again = await ok(a.base, 'sync_project');
    // merged too: the killed sync may have snapshotted Ana's copy (her remote setting changed it) before it died
    assert.ok(['fast_forward', 'up_to_date', 'pushed', 'merged'].includes(again.outcome), again.outcome);
    // merges killed at different moments: each round both sides make a code while apart
    const rounds = [40, 120, 250, 500];
    for (const [i, ms] of rounds.entries()) {
      await ok(b.base, 'create_code', { name: `Round ${i} Ben`, color: '#123456' });
      // merged when Ana's killed sync of the round before had already pushed its merge
      const benSync = (await ok(b.base, 'sync_project')).outcome;
      assert.ok(['pushed', 'merged'].includes(benSync), benSync);
      await ok(a.base, 'create_code', { name: `Round ${i} Ana`, color: '#654321' });
      await killDuringSync(ms);
    }
    assert.ok(['merged', 'pushed', 'up_to_date', 'fast_forward'].includes((await ok(a.base, 'sync_project')).outcome));
    await ok(b.base, 'sync_project');
    assert.equal((await ok(a.base, 'sync_project')).outcome, 'up_to_date');
    const roundCodes = rounds.flatMap((_, i) => [`Round ${i} Ana`, `Round ${i} Ben`]);
    for (const s of [a, b]) {
      const names = ((await ok(s.base, 'list_codes')).codes as { name: string }[]).map((c) => c.name).sort();
      assert.deepEqual(names, ['Fear', 'Food security', 'Hope', 'Institutional distrust', 'Mutual aid', ...roundCodes, 'Seeds', 'Trust'].sort());
    }
    const codes = (await ok(a.base, 'list_codes')).codes.map((c: { name: string }) => c.name).sort();
    assert.equal(codes.length, 15);
    const segs = (await ok(a.base, 'list_segments_for_source', { source_id: sourceId })).segments.map((s: { text: string }) => s.text).sort();
    assert.equal(segs.length, 7, segs.join(' | '));
    assert.deepEqual([...new Set(segs)], ['Neighbours shared seeds.', 'The council never came.', 'We grew our own food.']);
    // the remote: intact, and its old head still in its history
    gitOut(['--git-dir', remoteDir, 'fsck', '--no-dangling']);
    gitOut(['--git-dir', remoteDir, 'merge-base', '--is-ancestor', remoteHead, 'main']);
    const remoteSegs = rows(showAt(remoteDir, 'tables/segments.jsonl'));
    assert.equal(new Set(remoteSegs.map((s) => s.guid)).size, remoteSegs.length, 'no duplicated segment GUIDs');
    // nobody renamed or deleted anything: the restarts (journal replays) left no spurious conflict behind
    for (const s of [a, b]) assert.deepEqual((await ok(s.base, 'list_merge_conflicts')).conflicts, []);
  });

  it('headless: marginalia sync --project P syncs a project no server owns and prints the result in words', async () => {
    await ok(b.base, 'create_code', { name: 'Reciprocity', color: '#333399' });
    await ok(b.base, 'sync_project');
    await b.stop();
    await a.stop();
    const r = spawnSync(process.execPath, [path.join(REPO_ROOT, 'bin', 'marginalia.js'), 'sync', '--project', aFile], {
      encoding: 'utf8',
      env: { ...process.env, MARGINALIA_CODER: 'Ana', MARGINALIA_HOME: path.join(root, 'home') },
      timeout: 60_000,
    });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /Received \d+ snapshots? from origin/);
    const codes = rows(showAt(path.join(path.dirname(aFile), '.marginalia', 'history.git'), 'tables/codes.jsonl')).map((c) => c.name);
    assert.ok(codes.includes('Reciprocity'), codes.join(','));
    a = await startServer(aFile, [], { MARGINALIA_CODER: 'Ana' });
    b = await startServer(bFile, [], { MARGINALIA_CODER: 'Ben' });
    const listed = (await ok(a.base, 'list_codes')).codes.map((c: { name: string }) => c.name);
    assert.ok(listed.includes('Reciprocity'));
  });
  it('renaming one code differently on both sides is a conflict the merge stores for the researcher (list_merge_conflicts), the project keeping ours', async () => {
    const idOf = async (base: string, name: string) =>
      ((await ok(base, 'list_codes')).codes as { name: string; code_id: number }[]).find((c) => c.name === name)!.code_id;
    assert.equal((await ok(b.base, 'sync_project')).outcome, 'up_to_date');
    await ok(a.base, 'rename_code', { code_id: await idOf(a.base, 'Reciprocity'), new_name: 'Give and take' });
    await ok(b.base, 'rename_code', { code_id: await idOf(b.base, 'Reciprocity'), new_name: 'Mutual obligation' });
    assert.equal((await ok(a.base, 'sync_project')).outcome, 'pushed');
    const merged = await ok(b.base, 'sync_project');
    assert.equal(merged.outcome, 'merged');
    assert.equal(merged.conflicts.length, 1, JSON.stringify(merged.conflicts));
    assert.equal(merged.conflicts[0].kind, 'code_renamed_both');
    assert.match(merged.in_words, /1 conflict to resolve/);
    const listed = await ok(b.base, 'list_merge_conflicts');
    const open = (listed.conflicts as { kind: string; status: string }[]).filter((c) => c.status === 'open');
    // this merge's conflict is the only one: the earlier merges of this suite made none
    assert.deepEqual(
      open.map((c) => c.kind),
      ['code_renamed_both'],
    );
    const names = ((await ok(b.base, 'list_codes')).codes as { name: string }[]).map((c) => c.name);
    assert.ok(names.includes('Mutual obligation') && !names.includes('Give and take'), names.join(','));
  });
});
