// Runs in the REAL VS Code extension host (test/integration/run.mjs): the whole coding loop of a
// researcher, checked through the extension's API, the editor, and the HTTP tool server it runs.
import * as assert from 'node:assert/strict';
import * as http from 'node:http';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { MarginaliaApi } from '../../../src/extension';
import { until as waitUntil } from './support';

const EXTENSION_ID = 'marginalia.marginalia';

/** The token the next post() sends: the agent's unless a test switches to the researcher's. */
let token = '';

function post(port: number, tool: string, args: Record<string, unknown>, as = token): Promise<any> {
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
          'x-marginalia-client': 'integration-agent',
          authorization: `Bearer ${as}`,
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

/** {@link waitUntil} with this suite's default wait of 10_000 ms. */
const until = <T>(what: string, probe: () => T | undefined | false | Promise<T | undefined | false>, ms = 10_000): Promise<T> => waitUntil(what, probe, ms);

describe('Marginalia in VS Code', function () {
  this.timeout(60_000);
  let api: MarginaliaApi;
  let port: number;
  const ws = () => vscode.workspace.workspaceFolders![0]!.uri.fsPath;
  let sourceId: number;
  let codeId: number;
  let segmentId: number;

  before(async () => {
    const ext = vscode.extensions.getExtension<MarginaliaApi>(EXTENSION_ID);
    assert.ok(ext);
    api = await ext.activate();
    token = api.tokens.agent;
  });

  after(async () => {
    await vscode.commands.executeCommand('marginalia.project.close');
  });

  it('registers every contributed command and view', async () => {
    const pkg = vscode.extensions.getExtension(EXTENSION_ID)!.packageJSON;
    const all = new Set(await vscode.commands.getCommands(true));
    const commands: string[] = pkg.contributes.commands.map((c: { command: string }) => c.command);
    assert.ok(commands.length >= 20);
    assert.deepEqual(
      commands.filter((c) => !all.has(c)),
      [],
    );
    // two containers: Marginalia (the research views) and Marginalia Supervision (issue 13, item 10)
    const views: string[] = Object.values(pkg.contributes.views as Record<string, { id: string }[]>)
      .flat()
      .map((v) => v.id);
    assert.deepEqual(views.sort(), [
      'marginalia.activity',
      'marginalia.agents',
      'marginalia.approvals',
      'marginalia.cases',
      'marginalia.codes',
      'marginalia.history',
      'marginalia.memos',
      'marginalia.mergeConflicts',
      'marginalia.retrieval',
      'marginalia.sources',
    ]);
    // VS Code creates a focus command for every registered view
    assert.deepEqual(
      views.filter((v) => !all.has(`${v}.focus`)),
      [],
    );
    // the Agent Activity webview resolves when shown
    await vscode.commands.executeCommand('marginalia.activity.focus');
  });

  it('contributes every registry tool to vscode.lm.tools', () => {
    const pkg = vscode.extensions.getExtension(EXTENSION_ID)!.packageJSON;
    const contributed: string[] = pkg.contributes.languageModelTools.map((t: { name: string }) => t.name);
    const available = new Set(vscode.lm.tools.map((t) => t.name));
    assert.ok(contributed.length >= 28);
    assert.deepEqual(
      contributed.filter((n) => !available.has(n)),
      [],
    );
  });

  it('creates a project with Marginalia: New Project and serves it over HTTP', async () => {
    const file = path.join(ws(), 'study.qda');
    await vscode.commands.executeCommand('marginalia.project.new', file);
    assert.equal(api.controller.current()?.path, file);
    const state = api.controller.serverState;
    assert.equal(state.state, 'running');
    port = state.state === 'running' ? state.port : 0;
    const ctx = await post(port, 'get_project_context', {});
    assert.equal(ctx.success, true);
    assert.equal(ctx.data.project_name, 'study');
    assert.match(api.statusBar.text, /study/);
  });

  it('imports a workspace transcript and shows it in the Sources tree', async () => {
    const file = vscode.Uri.file(path.join(ws(), 'interview-a.txt'));
    const ids = (await vscode.commands.executeCommand('marginalia.sources.import', [file])) as number[];
    assert.equal(ids.length, 1);
    sourceId = ids[0]!;
    await api.settled();
    const names = api.sourcesTree.getChildren().map((n) => (n.kind === 'source' ? n.source.name : n.folder.name));
    assert.deepEqual(names, ['interview-a.txt']);
  });

  it('holds a code an agent creates over HTTP for approval, and the notification command approves it into the Codes tree', async () => {
    const asked = await post(port, 'create_code', { name: 'Belonging', color: '#4E79A7', memo: 'Feeling part of the place' });
    assert.equal(asked.success, true);
    assert.equal(asked.data.status, 'pending_approval', 'create_code is Suggest for agents');
    const requestId: string = asked.data.request_id;
    await until('the request in the Pending Approvals view', () => api.approvals.pending().some((a) => a.request_id === requestId) || undefined);
    assert.equal(api.codesTree.getChildren().length, 0, 'nothing is created before approval');
    // the agent cannot approve its own request
    const self = await new Promise<number>((resolve, reject) => {
      const req = http.request(
        {
          host: '127.0.0.1',
          port,
          path: `/approvals/${requestId}/approve`,
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': 2 },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.end('{}');
    });
    assert.equal(self, 403);
    await vscode.commands.executeCommand('marginalia.approvals.approve', requestId);
    const node = await until('the Codes tree to show the code', async () => {
      await api.settled();
      return api.codesTree.getChildren().find((n) => n.kind === 'code' && n.code.name === 'Belonging');
    });
    codeId = node.kind === 'code' ? node.code.code_id : 0;
    const item = await api.codesTree.getTreeItem(node);
    assert.equal(item.label, 'Belonging');
    assert.match(String(item.description), /AI/, 'made by an agent: AI badge');
    assert.equal(api.approvals.pending().length, 0);
  });

  it('invokes qda_list_codes through vscode.lm.invokeTool', async () => {
    const result = await vscode.lm.invokeTool('qda_list_codes', { input: {}, toolInvocationToken: undefined });
    const part = result.content[0] as vscode.LanguageModelTextPart;
    const envelope = JSON.parse(part.value);
    assert.equal(envelope.success, true);
    assert.deepEqual(
      envelope.data.codes.map((c: { name: string }) => c.name),
      ['Belonging'],
    );
  });

  it('shows a case created over HTTP with its typed attributes in the Cases tree', async () => {
    token = api.tokens.reviewer; // as the researcher: cases are created at once
    const created = await post(port, 'create_case', { name: 'Participant A' });
    assert.equal(created.success, true);
    const caseId = created.data.case_id;
    assert.equal((await post(port, 'set_case_attribute', { case_id: caseId, attribute_name: 'age', value: 34 })).success, true);
    assert.equal((await post(port, 'add_source_to_case', { case_id: caseId, source_id: sourceId })).success, true);
    token = api.tokens.agent;
    const node = await until('the Cases tree to show the case', async () => {
      await api.settled();
      return api.casesTree.getChildren().find((n) => n.kind === 'case' && n.item.name === 'Participant A');
    });
    const children = api.casesTree.getChildren(node).map((n) => api.casesTree.getTreeItem(n));
    assert.deepEqual(
      children.map((i) => [i.label, i.description ?? null]),
      [
        ['age = 34', 'number'],
        ['interview-a.txt', null],
      ],
    );
  });

  it('codes a selection with the last code, visible over HTTP and as a decoration', async () => {
    const doc = await vscode.workspace.openTextDocument(path.join(ws(), 'interview-a.txt'));
    const editor = await vscode.window.showTextDocument(doc);
    const text = doc.getText();
    // first coding names the code explicitly (as a keybinding with args would), which makes it the last code
    const first = 'the one place on our street where people actually talk';
    let at = text.indexOf(first);
    editor.selection = new vscode.Selection(doc.positionAt(at), doc.positionAt(at + first.length));
    await vscode.commands.executeCommand('marginalia.coding.codeSelection', { codeId });
    // then Code Selection with Last Code on another passage, after the non-ASCII "Zoë"
    const second = 'someone will notice if I don';
    at = text.indexOf(second);
    editor.selection = new vscode.Selection(doc.positionAt(at), doc.positionAt(at + second.length));
    await vscode.commands.executeCommand('marginalia.coding.codeSelectionWithLastCode');
    const listed = await post(port, 'list_segments_for_source', { source_id: sourceId });
    assert.equal(listed.success, true);
    const texts = listed.data.segments.map((s: { text: string }) => s.text);
    assert.deepEqual(texts, [first, second]);
    const seg = listed.data.segments[1];
    segmentId = seg.segment_id;
    assert.equal(seg.start_pos, [...text.slice(0, at)].length, 'positions count code points');
    assert.equal(seg.owner, 'test-researcher');
    await api.settled();
    const drawn = api.decorations.drawnIn(editor).get(codeId) ?? [];
    const want = new vscode.Range(doc.positionAt(at), doc.positionAt(at + second.length));
    assert.ok(
      drawn.some((r) => r.isEqual(want)),
      `decoration on ${JSON.stringify(want)}; drawn ${JSON.stringify(drawn)}`,
    );
  });

  it('moves a segment by the inserted length when text is inserted before it', async () => {
    const editor = vscode.window.activeTextEditor!;
    const before = (await post(port, 'list_segments_for_source', { source_id: sourceId })).data.segments.find((s: any) => s.segment_id === segmentId);
    const inserted = '[inserted 🌱 note] ';
    await editor.edit((b) => b.insert(new vscode.Position(0, 0), inserted));
    await api.editTracker.flush();
    const after = (await post(port, 'list_segments_for_source', { source_id: sourceId })).data.segments.find((s: any) => s.segment_id === segmentId);
    const n = [...inserted].length;
    assert.equal(after.start_pos, before.start_pos + n);
    assert.equal(after.end_pos, before.end_pos + n);
    assert.equal(after.text, before.text);
    const content = await post(port, 'read_source_content', { source_id: sourceId });
    assert.equal(content.data.content, editor.document.getText(), 'the stored text follows the editor');
    await editor.document.save();
  });

  it('removes a segment whose text is deleted, and keeps the others', async () => {
    const editor = vscode.window.activeTextEditor!;
    const doc = editor.document;
    const phrase = 'someone will notice if I don';
    const at = doc.getText().indexOf(phrase);
    await editor.edit((b) => b.delete(new vscode.Range(doc.positionAt(at - 1), doc.positionAt(at + phrase.length + 1))));
    await api.editTracker.flush();
    const listed = await post(port, 'list_segments_for_source', { source_id: sourceId });
    assert.deepEqual(
      listed.data.segments.map((s: { text: string }) => s.text),
      ['the one place on our street where people actually talk'],
    );
    await doc.save();
  });

  it('imports a codebook with Import Data and exports the project with Export Data', async () => {
    const fs = await import('node:fs');
    const list = path.join(ws(), 'codebook-import.txt');
    fs.writeFileSync(list, 'Place\n  Street life\n  Shared spaces\n');
    const imported = (await vscode.commands.executeCommand('marginalia.project.importData', 'code_list', list)) as
      { created: { categories: number; codes: number } } | undefined;
    assert.ok(imported, 'import_data ran');
    assert.deepEqual([imported.created.categories, imported.created.codes], [1, 2]);
    await api.settled();
    const names = api.codesTree.allCodes.map((c) => c.name);
    assert.ok(names.includes('Street life') && names.includes('Shared spaces'), names.join(', '));
    const out = path.join(ws(), 'study-export.qdpx');
    const exported = (await vscode.commands.executeCommand('marginalia.project.exportData', 'refi_qda', out)) as
      { bytes: number; counts: Record<string, number> } | undefined;
    assert.ok(exported, 'export_data ran');
    assert.equal(fs.statSync(out).size, exported.bytes);
    assert.ok(exported.bytes > 0);
    // a failed import (a missing file) shows an error, writes nothing and resolves undefined
    const before = api.codesTree.allCodes.length;
    assert.equal(await vscode.commands.executeCommand('marginalia.project.importData', 'code_list', path.join(ws(), 'no-such-file.txt')), undefined);
    assert.equal(api.codesTree.allCodes.length, before);
  });
});
