// Runs in the REAL VS Code extension host (test/integration/run.mjs): hybrid mode (issue 14, item 9). With the
// setting `marginalia.mode: hybrid`, an agent's coding over the extension's HTTP tool server makes VS Code follow
// it: the source opens, the coded range is revealed (selected) and flashed; a notify-level call shows a message
// naming the agent with Undo and Show; Pause Agents (the command, and its status bar item) holds the agent's next
// call as pending (HTTP 202, nothing written) and Resume Agents runs it. The suites share one extension host:
// the setting and the project are put back after.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { MarginaliaApi } from '../../../src/extension';
import { until } from './support';

const EXTENSION_ID = 'marginalia.marginalia';
const TEXT = 'P04: The workshops brought people in.\nP04: There was tension about the water.\nP07: We argued about the shed for months.';

describe('Hybrid mode in VS Code: follow the agent, notify, pause', function () {
  this.timeout(120_000);
  let api: MarginaliaApi;
  let port = 0;
  const ws = () => vscode.workspace.workspaceFolders![0]!.uri.fsPath;
  const projectFile = () => path.join(ws(), 'hybrid-mode', 'hybrid.qda');
  const ids = { code: 0, source: 0 };
  const asAgent = async (tool: string, args: Record<string, unknown>) => {
    const res = await fetch(`http://127.0.0.1:${port}/tools/${tool}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${api.tokens.agent}`, 'content-type': 'application/json', 'x-marginalia-client': 'hybrid-test-agent' },
      body: JSON.stringify({ arguments: args }),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  const invoke = async (tool: string, args: Record<string, unknown>) => {
    const out = await api.workbench.pipeline.invoke(tool, args, api.workbench.caller());
    assert.ok(out.envelope.success, `${tool}: ${JSON.stringify(out.envelope)}`);
    return out.envelope.data as Record<string, any>;
  };

  before(async () => {
    const ext = vscode.extensions.getExtension<MarginaliaApi>(EXTENSION_ID);
    assert.ok(ext);
    api = await ext.activate();
    fs.mkdirSync(path.join(path.dirname(projectFile()), '.marginalia'), { recursive: true });
    fs.writeFileSync(
      path.join(path.dirname(projectFile()), '.marginalia', 'config.yaml'),
      'agent_context:\n  sessions:\n    max_concurrent: 50\n  trust:\n    overrides:\n      apply_code: notify\n',
    );
    if (fs.existsSync(projectFile())) fs.rmSync(projectFile());
    await vscode.commands.executeCommand('marginalia.project.new', projectFile());
    const state = api.controller.serverState;
    assert.equal(state.state, 'running');
    port = state.state === 'running' ? state.port : 0;
    ids.code = (await invoke('create_code', { name: 'Tension', color: '#E15759' })).code_id;
    ids.source = (await invoke('add_text_source', { name: 'hybrid-interview', content: TEXT })).source_id;
    await vscode.workspace.getConfiguration('marginalia').update('mode', 'hybrid', vscode.ConfigurationTarget.Global);
    await until('the mode to apply', () => api.agent.mode === 'hybrid');
  });

  after(async () => {
    if (api.agent.paused) await vscode.commands.executeCommand('marginalia.agents.resume');
    // the shared agent token has one implicit session, named by its first client: end it, so the suites after this
    // one see their own client names
    api.agent.sessions.endOwnedBy('agent', 'client_disconnected');
    await vscode.workspace.getConfiguration('marginalia').update('mode', undefined, vscode.ConfigurationTarget.Global);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await vscode.commands.executeCommand('marginalia.project.close');
  });

  it("follows an agent's coding: opens the source, reveals the range and flashes it", async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    const at = Array.from(TEXT.slice(0, TEXT.indexOf('tension about'))).length;
    const r = await asAgent('apply_code', { code_id: ids.code, source_id: ids.source, start_position: at, end_position: at + 7 });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const followed = await until('the follower', () => api.observer.follower.lastFollowed?.start === at && api.observer.follower.lastFollowed);
    assert.deepEqual([followed.source_id, followed.start, followed.end], [ids.source, at, at + 7]);
    const editor = await until('an editor of the source', () =>
      vscode.window.visibleTextEditors.find((e) => api.documents.sourceIdFor(e.document) === ids.source),
    );
    assert.equal(editor.document.getText(editor.selection), 'tension', 'the coded range is revealed and selected');
    // notify level: a message naming the agent, with Undo and Show
    const message = await until('the notify message', () => api.observer.notices.lastMessage, 5_000);
    assert.match(message.text, /hybrid-test-agent|agent/);
    assert.match(message.text, /Tension/);
    assert.deepEqual(message.actions, ['Undo', 'Show']);
  });

  it('Pause Agents holds the next agent call as pending; Resume Agents runs it', async () => {
    await vscode.commands.executeCommand('marginalia.agents.pause');
    assert.equal(api.agent.paused, true);
    assert.match(api.observer.pause.item.text, /Agents paused/);
    const before = (await invoke('list_segments_for_source', { source_id: ids.source })).segments.length as number;
    const r = await asAgent('apply_code', { code_id: ids.code, source_id: ids.source, start_position: 0, end_position: 3 });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    assert.equal(r.body.data.held_by_pause, true);
    assert.equal((await invoke('list_segments_for_source', { source_id: ids.source })).segments.length, before, 'nothing written while paused');
    await vscode.commands.executeCommand('marginalia.agents.resume');
    assert.equal(api.agent.paused, false);
    assert.match(api.observer.pause.item.text, /Observing agents/);
    assert.equal((await invoke('list_segments_for_source', { source_id: ids.source })).segments.length, before + 1, 'resume ran the held call');
  });
});
