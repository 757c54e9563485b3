// Runs in the REAL VS Code extension host (test/integration/run.mjs): merge conflicts in VS Code (issue 16 item 4).
// The researcher (this VS Code) and a second coder, Ana (a second `marginalia serve` process on her own copy of the
// project, bin/marginalia.js), share one bare git remote in a temp dir. Both rename the code 'Trust' differently;
// the researcher's Sync Project (the command) merges Ana's work and the Merge Conflicts view shows the rename
// conflict in words; Keep Theirs (the view's command) renames the code to Ana's name and the Codes tree shows it.
import * as assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { Caller } from '../../../src/agent/pipeline';
import { createPipeline, headlessHost, openProjectHandle } from '../../../src/cli/compose';
import { silentLogger } from '../../../src/core/log';
import type { MarginaliaApi } from '../../../src/extension';
import { until as waitUntil } from './support';

const EXTENSION_ID = 'marginalia.marginalia';
const AGENT_TOKEN = 'it-merge-agent-token-0123456789abcdef';
const REVIEWER_TOKEN = 'it-merge-reviewer-token-fedcba98765432';
/** Ana working in her own editor on her copy (a local session under her coder name). */
const ANA: Caller = { session_id: 'local', client_type: 'LOCAL_UI', client_name: 'vscode', user: 'Ana' };
const TEXT = 'We grew our own food. The council never came in May. Neighbours shared seeds.';
const PASSAGE = 'in May';

/** {@link waitUntil} with this suite's default wait of 20_000 ms. */
const until = <T>(what: string, probe: () => T | undefined | false | Promise<T | undefined | false>, ms = 20_000): Promise<T> => waitUntil(what, probe, ms);

/** git run by the test itself, with no user or system configuration. */
function git(args: string[]): string {
  return execFileSync('git', args, { encoding: 'utf8', env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' } });
}

/** Ana's `marginalia serve` on her copy, called over HTTP as the researcher of that copy (the reviewer token). */
class SecondCoder {
  private constructor(
    private readonly child: ChildProcess,
    private readonly base: string,
    private readonly exited: Promise<unknown>,
  ) {}

  static start(cli: string, projectPath: string, coder: string): Promise<SecondCoder> {
    const child = spawn(process.execPath, [cli, 'serve', '--project', projectPath, '--port', '0'], {
      env: {
        ...process.env,
        ELECTRON_RUN_AS_NODE: '1',
        MARGINALIA_TOKEN: AGENT_TOKEN,
        MARGINALIA_REVIEWER_TOKEN: REVIEWER_TOKEN,
        MARGINALIA_CODER: coder,
        MARGINALIA_HOME: path.join(path.dirname(projectPath), '.marginalia-home'),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    let out = '';
    let err = '';
    child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`marginalia serve did not start within 20 s: ${err}`)), 20_000);
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`marginalia serve exited with ${code}: ${err}`));
      });
      child.stdout?.on('data', (d: Buffer) => {
        out += d.toString();
        const m = /at http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
        if (m) {
          clearTimeout(timer);
          resolve(new SecondCoder(child, `http://127.0.0.1:${m[1]}`, exited));
        }
      });
    });
  }

  async call(tool: string, args: Record<string, unknown> = {}): Promise<any> {
    const r = await fetch(`${this.base}/tools/${tool}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${REVIEWER_TOKEN}` },
      body: JSON.stringify({ arguments: args }),
      signal: AbortSignal.timeout(30_000),
    });
    const body = (await r.json()) as { success: boolean; data: any };
    assert.ok(r.status === 200 && body.success, `Ana's ${tool}: ${r.status} ${JSON.stringify(body)}`);
    return body.data;
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null) return;
    this.child.kill('SIGTERM');
    // a server that does not stop within 10 s is killed: the next step opens its project
    const killer = setTimeout(() => this.child.kill('SIGKILL'), 10_000);
    await this.exited;
    clearTimeout(killer);
  }
}

describe('Merge Conflicts in VS Code', function () {
  this.timeout(120_000);
  let api: MarginaliaApi;
  let root: string;
  let remote: string;
  let ana: SecondCoder | undefined;
  let trustId = 0;
  let sourceId = 0;

  const invoke = async (tool: string, args: Record<string, unknown> = {}) => {
    const out = await api.workbench.pipeline.invoke(tool, args, api.workbench.caller());
    assert.ok(out.envelope.success, `${tool}: ${JSON.stringify(out.envelope)}`);
    return out.envelope.data as any;
  };

  before(async () => {
    const ext = vscode.extensions.getExtension<MarginaliaApi>(EXTENSION_ID);
    assert.ok(ext);
    api = await ext.activate();
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'marginalia-it-merge-'));
    remote = path.join(root, 'remote', 'study.git');
    fs.mkdirSync(remote, { recursive: true });
    git(['init', '--quiet', '--initial-branch=main', '--bare', remote]);
    fs.mkdirSync(path.join(root, 'mine'));
    fs.mkdirSync(path.join(root, 'ana'));

    // the researcher: a project with the code 'Trust', its history sent to the remote
    await vscode.commands.executeCommand('marginalia.project.new', path.join(root, 'mine', 'study.qda'));
    await vscode.commands.executeCommand('marginalia.history.initialize');
    trustId = (await invoke('create_code', { name: 'Trust', color: '#4E79A7' })).code_id;
    sourceId = (await invoke('add_text_source', { name: 'interview-01', content: TEXT })).source_id;
    const council = TEXT.indexOf('The council'); // ASCII: code points = UTF-16 units
    await invoke('apply_code', { code_id: trustId, source_id: sourceId, start_position: council, end_position: TEXT.indexOf('. Neighbours') });
    await vscode.commands.executeCommand('marginalia.history.configureRemote', remote);
    const pushed = (await vscode.commands.executeCommand('marginalia.history.sync')) as { pushed: boolean };
    assert.equal(pushed?.pushed, true, JSON.stringify(pushed));

    // Ana joins from an empty copy and renames 'Trust' her way, then sends it
    ana = await SecondCoder.start(path.join(ext.extensionPath, 'bin', 'marginalia.js'), path.join(root, 'ana', 'study.qda'), 'Ana');
    await ana.call('initialize_version_control');
    await ana.call('configure_remote', { url: remote });
    await ana.call('sync_project');
    const codes = (await ana.call('list_codes')) as { codes: { code_id: number; name: string }[] };
    const hers = codes.codes.find((c) => c.name === 'Trust');
    assert.ok(hers, `Ana received 'Trust': ${JSON.stringify(codes)}`);
    await ana.call('rename_code', { code_id: hers.code_id, new_name: 'Trust in neighbours' });
    const herSource = ((await ana.call('list_sources')) as { sources: { source_id: number; name: string }[] }).sources.find((x) => x.name === 'interview-01');
    assert.ok(herSource);
    const sent = await ana.call('sync_project');
    assert.equal(sent.pushed, true, JSON.stringify(sent));
    await ana.stop();
    ana = undefined;
    // then she edits the transcript in her editor (apply_source_edits is an editor tool, not served over HTTP):
    // her copy opened in this process with the same composition (store, history, remote), and synced again
    const handle = await openProjectHandle(path.join(root, 'ana', 'study.qda'), { checkpointIdleMs: 0 });
    try {
      const pipeline = createPipeline({ project: () => handle, host: headlessHost, logger: silentLogger });
      const asAna = async (tool: string, args: Record<string, unknown>) => {
        const out = await pipeline.invoke(tool, args, ANA);
        assert.ok(out.envelope.success, `Ana's ${tool}: ${JSON.stringify(out.envelope)}`);
        return out.envelope.data as any;
      };
      const at = TEXT.indexOf(PASSAGE);
      await asAna('apply_source_edits', { source_id: herSource.source_id, edits: [{ start_pos: at, end_pos: at + PASSAGE.length, text: 'in June' }] });
      const again = await asAna('sync_project', {});
      assert.equal(again.pushed, true, JSON.stringify(again));
    } finally {
      await handle.close();
    }

    // meanwhile the researcher renamed it too
    await invoke('rename_code', { code_id: trustId, new_name: 'Mutual trust' });
    await invoke('apply_source_edits', {
      source_id: sourceId,
      edits: [{ start_pos: TEXT.indexOf(PASSAGE), end_pos: TEXT.indexOf(PASSAGE) + PASSAGE.length, text: 'in early May' }],
    });
    await api.settled();
  });

  after(async () => {
    await ana?.stop();
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await vscode.commands.executeCommand('marginalia.project.close');
    if (root) fs.rmSync(root, { recursive: true, force: true });
  });

  it("before syncing the view lists no conflict and the Codes tree shows the researcher's name", async () => {
    await api.mergeConflicts.refresh();
    assert.deepEqual(api.mergeConflicts.getChildren(), []);
    assert.ok(api.codesTree.rows().includes('Mutual trust'), api.codesTree.rows().join(', '));
  });

  it("Sync Project merges Ana's work and the Merge Conflicts view shows the rename conflict in words", async () => {
    const r = (await vscode.commands.executeCommand('marginalia.history.sync')) as { conflicts: unknown[]; in_words: string };
    assert.ok(r, 'the sync returned a result');
    assert.equal(r.conflicts.length, 2, r.in_words);
    const rows = await until('the conflicts listed in the view', () => {
      const c = api.mergeConflicts.getChildren();
      return c.length === 2 ? c : undefined;
    });
    assert.deepEqual(rows.map((x) => x.kind).sort(), ['code_renamed_both', 'source_text_overlap']);
    const c = rows.find((x) => x.kind === 'code_renamed_both')!;
    const item = api.mergeConflicts.getTreeItem(c);
    assert.equal(item.label, "'Trust' renamed on both sides: 'Trust' ← you: 'Mutual trust', Ana: 'Trust in neighbours'");
    // a rename takes mine, theirs or an edit; not both
    assert.match(String(item.contextValue), /^mergeConflict-ours-theirs-edit$/);
    // until resolved the project holds the researcher's name
    await api.settled();
    assert.ok(api.codesTree.rows().includes('Mutual trust'), api.codesTree.rows().join(', '));
  });

  it('the passage both edited: the row names both versions and the coding on it; Compare opens the diff editor between the two texts', async () => {
    const c = api.mergeConflicts.getChildren().find((x) => x.kind === 'source_text_overlap');
    assert.ok(c);
    const item = api.mergeConflicts.getTreeItem(c);
    assert.equal(item.label, "The same passage of 'interview-01' edited on both sides: you: 'early May', Ana: 'June'");
    assert.match(String(item.contextValue), /^mergeConflict-ours-theirs-both-edit-text$/);
    // the coding across the passage (on 'The council never came in May') is listed with its coder
    assert.equal(item.description, '1 coding(s) in its paragraph');
    assert.match(String(item.tooltip), /Codings in the passage's paragraph now: 'Mutual trust' \(/);
    const opened = (await vscode.commands.executeCommand('marginalia.merge.compare', c)) as { left: vscode.Uri; right: vscode.Uri };
    assert.equal(opened.left.scheme, 'marginalia-conflict');
    const tab = await until('the diff editor', () => {
      const input = vscode.window.tabGroups.activeTabGroup.activeTab?.input;
      return input instanceof vscode.TabInputTextDiff ? input : undefined;
    });
    assert.equal(tab.original.toString(), opened.left.toString());
    assert.equal(tab.modified.toString(), opened.right.toString());
    const mine = await vscode.workspace.openTextDocument(opened.left);
    const hers = await vscode.workspace.openTextDocument(opened.right);
    assert.equal(mine.getText(), TEXT.replace(PASSAGE, 'in early May'));
    assert.equal(hers.getText(), TEXT.replace(PASSAGE, 'in June'));
    // Keep Mine leaves the text as it is and closes the conflict
    const r = (await vscode.commands.executeCommand('marginalia.merge.keepMine', c.conflict_id)) as { applied: string };
    assert.equal(r.applied, 'kept ours (nothing changed)');
    assert.equal(api.workbench.repo()?.getSourceText(sourceId), TEXT.replace(PASSAGE, 'in early May'));
    assert.equal(api.mergeConflicts.getChildren().length, 1);
  });

  it("Keep Theirs renames the code to Ana's name, the Codes tree shows it and the view is empty", async () => {
    const c = api.mergeConflicts.getChildren().find((x) => x.kind === 'code_renamed_both');
    assert.ok(c);
    const r = (await vscode.commands.executeCommand('marginalia.merge.keepTheirs', c)) as { applied: string; conflict: { status: string; choice: string } };
    assert.equal(r.applied, 'renamed to "Trust in neighbours"');
    assert.deepEqual([r.conflict.status, r.conflict.choice], ['resolved', 'theirs']);
    await api.settled();
    await until("the Codes tree showing Ana's name", () => (api.codesTree.rows().includes('Trust in neighbours') ? true : undefined));
    assert.ok(!api.codesTree.rows().includes('Mutual trust'), api.codesTree.rows().join(', '));
    assert.deepEqual(api.mergeConflicts.getChildren(), []);
    // the conflict is stored as resolved, none is open
    const listed = await invoke('list_merge_conflicts', { status: 'all' });
    assert.deepEqual([listed.open, listed.resolved], [0, 2]);
  });
});
