/**
 * Where the project history lives (issue 13, item 9): its git directory is `.marginalia/history.git`, beside
 * the working tree `.marginalia/history`, so nothing that looks for a `.git` entry (VS Code's git extension,
 * `git rev-parse` run in the history folder) finds it; `.marginalia/.gitignore` keeps its files out of an
 * enclosing workspace repository; a history made with `history/.git` is moved there on first use. Real git,
 * real project files in temp folders.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createPipeline, headlessHost, openProjectHandle, type ProjectHandle } from '../../../src/cli/compose';
import { silentLogger } from '../../../src/core/log';
import { gitDirOf, identEmail } from '../../../src/vcs/historyRepo';
import { ALICE, fixedClock } from '../domain/projectFixture';

/** git as a researcher's shell runs it: no GIT_* from this process, no user configuration. */
function git(cwd: string, ...args: string[]): string {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^git_/i.test(k)) env[k] = v;
  Object.assign(env, {
    GIT_CONFIG_GLOBAL: os.devNull,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_AUTHOR_NAME: 'R',
    GIT_AUTHOR_EMAIL: 'r@example.org',
    GIT_COMMITTER_NAME: 'R',
    GIT_COMMITTER_EMAIL: 'r@example.org',
  });
  return execFileSync('git', args, { cwd, env, encoding: 'utf8' });
}

describe('vcs: the history is kept where Source Control does not look', function () {
  this.timeout(60_000);
  let ws: string;
  let handle: ProjectHandle | undefined;
  beforeEach(() => {
    ws = fs.mkdtempSync(path.join(os.tmpdir(), 'marginalia-loc-'));
    git(ws, 'init', '--quiet');
    fs.writeFileSync(path.join(ws, 'notes.md'), 'my notes\n');
    git(ws, 'add', 'notes.md');
    git(ws, 'commit', '--quiet', '-m', 'workspace commit');
  });
  afterEach(async () => {
    await handle?.close();
    handle = undefined;
    fs.rmSync(ws, { recursive: true, force: true });
  });

  async function started(): Promise<{ history: string; call: (tool: string, args?: unknown) => Promise<unknown> }> {
    handle = await openProjectHandle(path.join(ws, 'p.qda'), { create: true, checkpointIdleMs: 0 });
    const h = handle;
    const p = createPipeline({ project: () => h, host: headlessHost, logger: silentLogger, clock: fixedClock });
    const call = async (tool: string, args: unknown = {}) => {
      const out = await p.invoke(tool, args, ALICE);
      assert.ok(out.envelope.success, `${tool}: ${JSON.stringify(out.envelope)}`);
      return out.envelope.data;
    };
    return { history: path.join(ws, '.marginalia', 'history'), call };
  }

  it('has no .git entry in the history folder: git run there finds the workspace, never the history', async () => {
    const { history, call } = await started();
    await call('initialize_version_control');
    await call('add_text_source', { name: 'Interview A', content: 'We felt at home in the garden.' });
    await handle!.snapshotter.flush();
    assert.equal(fs.existsSync(path.join(history, '.git')), false, 'no .git in the working tree');
    assert.ok(fs.statSync(path.join(ws, '.marginalia', 'history.git')).isDirectory(), 'the git directory is history.git beside it');
    assert.equal(gitDirOf(history), path.join(ws, '.marginalia', 'history.git'));
    assert.equal(
      git(history, 'rev-parse', '--show-toplevel').trim(),
      fs.realpathSync(ws),
      'discovery from the history folder ends at the workspace repository',
    );
    // the workspace repository sees none of the history's files (they hold every transcript)
    const untracked = git(ws, 'status', '--porcelain', '--untracked-files=all').split('\n').filter(Boolean);
    assert.ok(untracked.includes('?? .marginalia/.gitignore'), untracked.join('\n'));
    assert.deepEqual(
      untracked.filter((l) => l.includes('.marginalia/history')),
      [],
      'no history file is offered to the workspace repository',
    );
    assert.deepEqual(
      fs
        .readFileSync(path.join(ws, '.marginalia', '.gitignore'), 'utf8')
        .split('\n')
        .filter((l) => l && !l.startsWith('#')),
      ['history/', 'history.git/'],
    );
    // and the history still works by hand, the way its README says
    assert.equal(git(ws, '--git-dir=.marginalia/history.git', 'rev-list', '--count', 'HEAD').trim(), '2');
    assert.equal(git(ws, '--git-dir=.marginalia/history.git', 'status', '--porcelain').trim(), '', 'core.worktree points at the working tree');
  });

  it('moves a history made with history/.git to history.git on first use, keeping its snapshots', async () => {
    const { history, call } = await started();
    await call('initialize_version_control');
    await call('create_code', { name: 'Belonging', color: '#4E79A7' });
    await handle!.close();
    handle = undefined;
    // the old layout: the git directory inside the working tree, no core.worktree
    fs.renameSync(gitDirOf(history), path.join(history, '.git'));
    const config = path.join(history, '.git', 'config');
    fs.writeFileSync(config, fs.readFileSync(config, 'utf8').replace(/^\s*worktree\s*=.*$/m, ''));
    fs.rmSync(path.join(ws, '.marginalia', '.gitignore'));
    assert.equal(git(history, 'rev-list', '--count', 'HEAD').trim(), '2', 'an old-layout history, as git finds it');

    const again = await started();
    const list = (await again.call('list_snapshots')) as { count: number; snapshots: { message: string }[] };
    assert.equal(list.count, 2);
    assert.equal(list.snapshots[0]!.message, "Created the code 'Belonging'");
    assert.equal(fs.existsSync(path.join(history, '.git')), false, 'moved away');
    assert.ok(fs.existsSync(path.join(ws, '.marginalia', '.gitignore')), 'and ignored by the workspace');
    await again.call('create_code', { name: 'Trust', color: '#E15759' });
    await handle!.snapshotter.flush();
    assert.equal(git(ws, '--git-dir=.marginalia/history.git', 'log', '-1', '--format=%s').trim(), "Created the code 'Trust'");
  });

  it('gives authors known only by name a synthetic address at the reserved domain marginalia.invalid', () => {
    assert.equal(identEmail('Ana María'), 'ana-mar-a@marginalia.invalid');
    assert.equal(identEmail('Claude Code', true), 'agent.claude-code@marginalia.invalid');
    assert.equal(identEmail('Marginalia'), 'marginalia@localhost');
    assert.equal(identEmail('***'), 'coder@marginalia.invalid');
  });
});
