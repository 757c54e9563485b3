// Runs in the REAL VS Code extension host (test/integration/run.mjs): supervision in words and history for
// researchers (issue 13, items 8 and 9). An agent (the agent token over the extension's HTTP server, client
// "Claude") asks to merge two codes: Pending Approvals names both codes and the passage count. Agent Activity
// is rebuilt from the project's event log when the project is closed and opened again (as after a window
// reload). The history's snapshots are authored by the researcher's configured coder name
// (marginalia.coder.name) and titled in words; its changes read in words with the raw diff one click away.
// The history repository never shows in Source Control: asserted through the built-in git extension's API.
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { MarginaliaApi } from '../../../src/extension';
import { until } from './support';

const EXTENSION_ID = 'marginalia.marginalia';
const CODER = 'Ana Researcher';
const TEXT = 'Nobody trusted the council after the flood.\nWe felt at home in the garden.\nThe council never came back to us.\n';

function post(port: number, tool: string, args: Record<string, unknown>, token: string): Promise<any> {
  const body = JSON.stringify({ arguments: args });
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path: `/tools/${tool}`,
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          'x-marginalia-client': 'Claude',
          authorization: `Bearer ${token}`,
        },
      },
      (res) => {
        let text = '';
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve(JSON.parse(text)));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** git as a shell runs it, without this process's GIT_* variables or the user's configuration. */
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

describe('Supervision in VS Code', function () {
  this.timeout(120_000);
  let api: MarginaliaApi;
  let port = 0;
  const ws = () => vscode.workspace.workspaceFolders![0]!.uri.fsPath;
  const projectFile = () => path.join(ws(), 'supervision', 'supervision.qda');
  const ids = { source: 0, trust: 0, belonging: 0 };
  let savedCoder: string | undefined;

  const invoke = async (tool: string, args: Record<string, unknown>) => {
    const out = await api.workbench.pipeline.invoke(tool, args, api.workbench.caller());
    assert.ok(out.envelope.success, `${tool}: ${JSON.stringify(out.envelope)}`);
    return out.envelope.data as Record<string, any>;
  };
  const flushHistory = async () => {
    const vcs = api.controller.current()?.vcs as { flush?: () => Promise<void> } | undefined;
    await vcs?.flush?.();
  };

  before(async () => {
    const ext = vscode.extensions.getExtension<MarginaliaApi>(EXTENSION_ID);
    assert.ok(ext);
    api = await ext.activate();
    // the fixture workspace sets its own coder name (.vscode/settings.json): the researcher changes it there
    savedCoder = vscode.workspace.getConfiguration('marginalia').inspect<string>('coder.name')?.workspaceValue;
    await vscode.workspace.getConfiguration('marginalia').update('coder.name', CODER, vscode.ConfigurationTarget.Workspace);
    fs.mkdirSync(path.dirname(projectFile()), { recursive: true });
    // the suites share one extension host, each agent client its own implicit session: room for all of them
    fs.mkdirSync(path.join(path.dirname(projectFile()), '.marginalia'), { recursive: true });
    fs.writeFileSync(path.join(path.dirname(projectFile()), '.marginalia', 'config.yaml'), 'agent_context:\n  sessions:\n    max_concurrent: 50\n');
    await vscode.commands.executeCommand('marginalia.project.new', projectFile());
    const state = api.controller.serverState;
    assert.equal(state.state, 'running');
    port = state.state === 'running' ? state.port : 0;
    // the shared agent token has one implicit session, named by its first client: an earlier suite's must not name
    // this suite's agent
    api.agent.sessions.endOwnedBy('agent', 'client_disconnected');
    await vscode.commands.executeCommand('marginalia.history.initialize');
    ids.source = (await invoke('add_text_source', { name: 'interview-04', content: TEXT })).source_id;
    ids.trust = (await invoke('create_code', { name: 'Trust', color: '#E15759' })).code_id;
    ids.belonging = (await invoke('create_code', { name: 'Belonging', color: '#4E79A7' })).code_id;
    const at = (s: string) => ({ start_position: TEXT.indexOf(s), end_position: TEXT.indexOf(s) + s.length });
    await invoke('batch_apply_codes', {
      operations: [
        { code_id: ids.trust, source_id: ids.source, ...at('Nobody trusted the council after the flood.') },
        { code_id: ids.trust, source_id: ids.source, ...at('The council never came back to us.') },
      ],
    });
    await api.settled();
    await flushHistory(); // the researcher's changes so far are one snapshot of their own
  });

  after(async () => {
    await vscode.commands.executeCommand('marginalia.project.close');
    await vscode.workspace.getConfiguration('marginalia').update('coder.name', savedCoder, vscode.ConfigurationTarget.Workspace);
  });

  it("an agent's merge request shows both code names and the passage count in Pending Approvals", async () => {
    const r = await post(port, 'merge_codes', { source_code_id: ids.trust, target_code_id: ids.belonging }, api.tokens.agent);
    assert.equal(r.data?.status, 'pending_approval', JSON.stringify(r));
    const pending = await until('the request in Pending Approvals', () => api.approvals.pending().find((a) => a.request_id === r.data.request_id));
    const item = api.approvals.getTreeItem(pending);
    const label = typeof item.label === 'string' ? item.label : (item.label?.label ?? '');
    assert.match(label, /^Merge 'Trust' \(2 passages\) into 'Belonging'/, label);
    assert.doesNotMatch(label, /_id|=\d/, 'no bare ids');
    // MarkdownString.appendText escapes spaces and punctuation; the researcher sees the plain text
    const tooltip = (item.tooltip as vscode.MarkdownString).value.replace(/&nbsp;/g, ' ').replace(/\\(.)/g, '$1');
    assert.match(tooltip, /Claude asks to merge 'Trust' \(2 passages\) into 'Belonging'/, tooltip);
    assert.match(String(item.description), /^Claude/);
    // Agent Activity shows the same words while the request waits
    const live = await until('the request in Agent Activity', () => api.activity.all().find((i) => i.request_id === r.data.request_id));
    assert.equal(live.status, 'PENDING_APPROVAL');
    assert.match(live.description, /^Merge 'Trust' \(2 passages\) into 'Belonging'/);
    assert.equal(live.title, 'Merge Codes');
  });

  it('Agent Activity repopulates from the event log after the project is closed and opened again', async () => {
    // a completed agent action besides the pending merge
    const start = TEXT.indexOf('We felt at home in the garden.');
    const coded = await post(
      port,
      'batch_apply_codes',
      { operations: [{ code_id: ids.belonging, source_id: ids.source, start_position: start, end_position: start + 30 }] },
      api.tokens.agent,
    );
    assert.equal(coded.success, true, JSON.stringify(coded));
    if (coded.data?.status === 'pending_approval') assert.ok(await api.approvals.approve(coded.data.request_id));
    await api.settled();
    await until('the coding in Agent Activity', () => api.activity.all().find((i) => /^Coded 'Belonging' in interview-04/.test(i.description)));

    await vscode.commands.executeCommand('marginalia.project.close');
    await until('an empty Agent Activity without a project', () => api.activity.all().length === 0);
    await vscode.commands.executeCommand('marginalia.project.open', projectFile());
    await api.settled();
    const items = await until('Agent Activity rebuilt', () => (api.activity.all().length >= 2 ? api.activity.all() : undefined));
    const merge = items.find((i) => i.title === 'Merge Codes');
    assert.ok(merge, JSON.stringify(items));
    assert.equal(merge.status, 'PENDING_APPROVAL');
    assert.equal(merge.client_name, 'Claude');
    assert.match(merge.description, /^Merge 'Trust' \(2 passages\) into 'Belonging'/);
    const coding = items.find((i) => /^Coded 'Belonging' in interview-04/.test(i.description));
    assert.ok(coding, JSON.stringify(items));
    assert.equal(coding.status, 'COMPLETED');
    assert.equal(coding.undoable, true);
    assert.equal(
      items.some((i) => /Researcher|create the code 'Trust'|Created the code 'Trust'/.test(i.description)),
      false,
      "the researcher's own actions are not agent activity",
    );
  });

  it("the history's author is the researcher's configured name; titles and changes are in words", async () => {
    await flushHistory();
    await invoke('rename_code', { code_id: ids.belonging, new_name: 'Home' });
    await flushHistory();
    await api.history.refresh();
    const snaps = api.history.all();
    const mine = snaps.find((s) => s.message === "Renamed the code 'Belonging' to 'Home'");
    assert.ok(mine, snaps.map((s) => `${s.message} | ${s.author}`).join('\n'));
    assert.equal(mine.author, CODER);
    assert.equal(mine.by_agent, false);
    assert.ok(
      snaps.every((s) => !s.author.startsWith('agent:')),
      'never agent:<session>',
    );
    // the first changes were snapshotted together (one debounce): in words, in order, by the researcher
    const coded = snaps.find((s) => /coded 2 passages with 'Trust' in interview-04/i.test(s.message));
    assert.ok(coded, snaps.map((s) => s.message).join('\n'));
    assert.match(
      coded.message,
      /^Imported interview-04; created the code 'Trust'; created the code 'Belonging'; coded 2 passages with 'Trust' in interview-04/,
    );
    assert.equal(coded.author, CODER);
    const byAgent = snaps.find((s) => /coded 'Belonging' in interview-04/i.test(s.message));
    assert.ok(byAgent, snaps.map((s) => `${s.message} | ${s.author}`).join('\n'));
    assert.equal(byAgent.author, 'Claude', "the agent's coding is authored by its name");
    assert.equal(byAgent.by_agent, true);
    const item = api.history.getTreeItem(mine);
    assert.match(String(item.description), new RegExp(`^${CODER}`));
    // git's own record: the author's name and a synthetic address
    const historyGit = path.join(path.dirname(projectFile()), '.marginalia', 'history.git');
    assert.equal(git(ws(), `--git-dir=${historyGit}`, 'log', '-1', '--format=%an <%ae>', mine.ref).trim(), `${CODER} <ana-researcher@marginalia.invalid>`);

    const words = await api.history.showChanges(coded);
    assert.ok(words);
    assert.match(words, /## Passages coded \(2\)/);
    assert.match(words, /'Trust' in interview-04: "Nobody trusted the council after the flood\."/);
    const raw = await vscode.commands.executeCommand<string | undefined>('marginalia.history.showRawDiff');
    assert.ok(raw, 'Show Raw Diff from the changes tab');
    assert.match(raw, /^\+\{.*"text":"Nobody trusted the council after the flood\."/m);
  });

  it('the Source Control view lists no Marginalia repository', async () => {
    const historyDir = path.join(path.dirname(projectFile()), '.marginalia', 'history');
    // the mechanism: no .git entry under the history's working tree; the git directory is history.git beside it
    assert.equal(fs.existsSync(path.join(historyDir, '.git')), false);
    assert.ok(fs.statSync(`${historyDir}.git`).isDirectory());
    assert.match(fs.readFileSync(path.join(path.dirname(historyDir), '.gitignore'), 'utf8'), /^history\/$/m);

    const gitExt = vscode.extensions.getExtension<any>('vscode.git');
    if (!gitExt) {
      console.log('[supervision] the built-in git extension is not installed in this rig: asserted on the history layout only');
      return;
    }
    const exports = gitExt.isActive ? gitExt.exports : await gitExt.activate();
    const gitApi = exports.getAPI(1);
    // the workspace is a git repository of its own, as a researcher's often is
    if (!fs.existsSync(path.join(ws(), '.git'))) git(ws(), 'init', '--quiet');
    await gitApi.openRepository(vscode.Uri.file(ws()));
    // what the git extension does when files change under a path containing "/.git" (its watcher), done at once
    const opened = await gitApi.openRepository(vscode.Uri.file(historyDir));
    await until('the git extension to settle', () => gitApi.state === 'initialized');
    const roots: string[] = gitApi.repositories.map((r: { rootUri: vscode.Uri }) => r.rootUri.fsPath);
    assert.ok(roots.length >= 1, 'the git extension sees the workspace repository');
    assert.deepEqual(
      roots.filter((r) => r.includes('.marginalia')),
      [],
      `repositories: ${roots.join(', ')}`,
    );
    if (opened) assert.ok(!opened.rootUri.fsPath.includes('.marginalia'), 'opening the history folder finds the workspace repository, not the history');
    // the workspace repository is not offered the history's files either
    const status = git(ws(), 'status', '--porcelain', '--untracked-files=all');
    assert.doesNotMatch(status, /\.marginalia\/history/);
  });
});
