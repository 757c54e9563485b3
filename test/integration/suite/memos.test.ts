// Runs in the REAL VS Code extension host (test/integration/run.mjs): memos as documents (issue 13, item 6).
// A code memo opens in a Markdown tab (marginalia-memo:), is edited and saved with the workbench's Save
// command, and is read back over the extension's HTTP tool server; an agent's change to a case memo while its
// tab is open is shown (a clean tab reloads; a dirty tab keeps the researcher's text, and saving asks instead
// of overwriting); the project briefing edited in its tab is what qda://project/briefing returns (MCP over the
// same server); a missing briefing heading fails the save and stores nothing; the Memos view lists every memo
// with what it belongs to; "Open Memo" at the cursor opens the coded passage's memo.
import * as assert from 'node:assert/strict';
import * as http from 'node:http';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { MarginaliaApi } from '../../../src/extension';
import type { MemoConflict, MemoConflictChoice } from '../../../src/ui/memos/memoFileSystem';
import type { MemosNode } from '../../../src/ui/memos/memosTreeProvider';
import { until as waitUntil } from './support';

const EXTENSION_ID = 'marginalia.marginalia';

function httpPost(
  port: number,
  urlPath: string,
  payload: unknown,
  token: string,
  extra: Record<string, string> = {},
): Promise<{ status: number; text: string }> {
  const body = JSON.stringify(payload);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path: urlPath,
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          'x-marginalia-client': 'memo-agent',
          authorization: `Bearer ${token}`,
          ...extra,
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** {@link waitUntil} with this suite's default wait of 10_000 ms. */
const until = <T>(what: string, probe: () => T | undefined | false | Promise<T | undefined | false>, ms = 10_000): Promise<T> => waitUntil(what, probe, ms);

/** Replaces the whole text of the active editor (the memo tab), leaving it dirty. */
async function typeInto(editor: vscode.TextEditor, text: string): Promise<void> {
  const doc = editor.document;
  const all = new vscode.Range(doc.positionAt(0), doc.positionAt(doc.getText().length));
  assert.ok(await editor.edit((b) => b.replace(all, text)));
  assert.equal(doc.isDirty, true);
}

/** The workbench's own Save on the memo tab (as Ctrl+S does). */
async function saveWithWorkbench(editor: vscode.TextEditor): Promise<void> {
  await vscode.window.showTextDocument(editor.document, { preview: false });
  await vscode.commands.executeCommand('workbench.action.files.save');
}

describe('Memos in VS Code', function () {
  this.timeout(120_000);
  let api: MarginaliaApi;
  let port = 0;
  const ws = () => vscode.workspace.workspaceFolders![0]!.uri.fsPath;
  const ids = { source: 0, code: 0, segment: 0, caseId: 0 };
  const TEXT = 'INTERVIEWER: Why the garden?\nP1: Because my neighbour asked me, and I stayed for the tomatoes.\n';

  /** A tool call over the extension's HTTP server: the agent's token unless `as` says otherwise. */
  async function tool(name: string, args: Record<string, unknown>, as: 'agent' | 'researcher' = 'agent'): Promise<any> {
    const r = await httpPost(port, `/tools/${name}`, { arguments: args }, as === 'agent' ? api.tokens.agent : api.tokens.reviewer);
    const body = JSON.parse(r.text);
    assert.equal(body.success, true, `${name}: HTTP ${r.status} ${r.text.slice(0, 300)}`);
    return body.data;
  }

  /** qda://project/briefing over MCP (Streamable HTTP, one request) on the same server, as an agent. */
  async function briefing(): Promise<any> {
    const r = await httpPost(port, '/mcp', { jsonrpc: '2.0', id: 1, method: 'resources/read', params: { uri: 'qda://project/briefing' } }, api.tokens.agent, {
      accept: 'application/json, text/event-stream',
    });
    assert.equal(r.status, 200, r.text.slice(0, 300));
    const rpc = r.text.trimStart().startsWith('{') ? JSON.parse(r.text) : JSON.parse(/^data: (.*)$/m.exec(r.text)?.[1] ?? 'null');
    return JSON.parse(rpc.result.contents[0].text);
  }

  before(async () => {
    const ext = vscode.extensions.getExtension<MarginaliaApi>(EXTENSION_ID);
    assert.ok(ext);
    api = await ext.activate();
    // the suites share one window: a workspace file left with unsaved typing by an earlier suite would make this
    // project's source of the same file "being edited", and an agent's change to it wait for the researcher
    for (const d of vscode.workspace.textDocuments.filter((x) => x.isDirty && x.uri.scheme === 'file')) {
      await vscode.window.showTextDocument(d);
      await vscode.commands.executeCommand('workbench.action.files.revert');
    }
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await vscode.commands.executeCommand('marginalia.project.new', path.join(ws(), 'memos.qda'));
    const state = api.controller.serverState;
    assert.equal(state.state, 'running', 'the HTTP tool server runs (marginalia.server.enabled)');
    port = state.state === 'running' ? state.port : 0;
    const call = async (name: string, args: Record<string, unknown>) => {
      const o = await api.workbench.pipeline.invoke(name, args, api.workbench.caller());
      assert.ok(o.envelope.success, `${name}: ${JSON.stringify(o.envelope).slice(0, 300)}`);
      return o.envelope.data as any;
    };
    ids.source = (await call('import_text', { name: 'garden-interview', content: TEXT })).source_id;
    ids.code = (await call('create_code', { name: 'Food security' })).code_id;
    const start = [...TEXT].indexOf('B');
    ids.segment = (
      await call('batch_apply_codes', { operations: [{ code_id: ids.code, source_id: ids.source, start_position: start, end_position: start + 31 }] })
    ).results[0].segment_id;
    await call('update_segment_memo', { segment_id: ids.segment, memo: 'Reciprocity, not food.' });
    ids.caseId = (await call('create_case', { name: 'Participant 1' })).case_id;
    await api.settled();
  });

  after(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await vscode.commands.executeCommand('marginalia.project.close');
  });

  it('Open Memo on a code opens a Markdown tab; edited and saved with the workbench Save, it reads back over HTTP', async () => {
    const node = { kind: 'code', code: api.codesTree.allCodes.find((c) => c.code_id === ids.code) };
    assert.ok(node.code, 'the Codes tree knows the code');
    const editor = (await vscode.commands.executeCommand('marginalia.memos.open', node)) as vscode.TextEditor;
    assert.ok(editor, 'a tab opened');
    assert.equal(editor.document.uri.scheme, 'marginalia-memo');
    assert.equal(editor.document.uri.path, '/Codes/Food security.md', 'the tab is named after the code');
    assert.equal(editor.document.uri.query, `code=${ids.code}`);
    assert.match(editor.document.uri.authority, /^[0-9a-f]{32}$/, "the project's GUID: a tab never writes another project's memo");
    assert.equal(editor.document.languageId, 'markdown');
    assert.equal(editor.document.getText(), '', 'no memo yet');
    const memo = '# When to apply\n\nAny talk of **food** as a reason to join — not the harvest itself. \u{1F345}\n';
    await typeInto(editor, memo);
    await saveWithWorkbench(editor);
    await until('the tab saved', () => !editor.document.isDirty);
    const stored = await tool('get_code', { code_id: ids.code });
    assert.equal(stored.memo, memo, 'the memo over HTTP is the tab text, byte for byte');
    // recorded as the researcher's change
    assert.equal(api.workbench.repo()?.getCode(ids.code)?.memo, memo);
  });

  it("an agent's change to an open memo is shown, never overwritten: a clean tab reloads, a dirty tab asks on save", async () => {
    const editor = (await vscode.commands.executeCommand('marginalia.memos.open', {
      kind: 'case',
      item: api.workbench.repo()!.getCase(ids.caseId),
    })) as vscode.TextEditor;
    assert.equal(editor.document.uri.query, `case=${ids.caseId}`);
    assert.equal(editor.document.uri.path, '/Cases/Participant 1.md', 'names, not ids, in the tab title and breadcrumbs');
    const doc = editor.document;
    assert.equal(doc.getText(), '');
    // clean tab: the agent's memo appears in it
    await tool('update_case_memo', { case_id: ids.caseId, memo: 'Agent: retired teacher.' });
    await until('the clean tab reloaded', () => doc.getText() === 'Agent: retired teacher.');
    assert.equal(doc.isDirty, false);

    // dirty tab: the researcher's text stays, the agent's change is stored
    await typeInto(editor, 'Mine: a retired teacher who runs the compost.');
    await tool('update_case_memo', { case_id: ids.caseId, memo: 'Agent: teacher, joined 2019.' });
    await api.settled();
    assert.equal(doc.getText(), 'Mine: a retired teacher who runs the compost.', 'the tab keeps the researcher text');
    assert.equal(doc.isDirty, true);

    // save: the conflict is put to the researcher; no answer keeps theirs stored and the tab dirty
    const asked: MemoConflict[] = [];
    const answers: (MemoConflictChoice | undefined)[] = [undefined, 'overwrite'];
    const original = api.memos.files.resolveConflict;
    api.memos.files.resolveConflict = async (c) => {
      asked.push(c);
      return answers.shift();
    };
    try {
      await saveWithWorkbench(editor);
      await until('the first save was asked about', () => asked.length === 1);
      assert.equal(asked[0]!.theirs, 'Agent: teacher, joined 2019.');
      assert.equal(asked[0]!.yours, 'Mine: a retired teacher who runs the compost.');
      assert.equal(asked[0]!.what, 'case "Participant 1"');
      assert.equal((await tool('get_case', { case_id: ids.caseId })).memo, 'Agent: teacher, joined 2019.', 'not overwritten');
      assert.equal(doc.isDirty, true, 'the unsaved text stays in the tab');
      // "Overwrite" stores the researcher's text
      await saveWithWorkbench(editor);
      await until('the overwrite saved', () => !doc.isDirty);
      assert.equal(asked.length, 2);
      assert.equal((await tool('get_case', { case_id: ids.caseId })).memo, 'Mine: a retired teacher who runs the compost.');
    } finally {
      api.memos.files.resolveConflict = original;
    }
  });

  it('"Keep theirs" stores nothing and reloads the tab with the stored memo', async () => {
    const editor = (await vscode.commands.executeCommand('marginalia.memos.open', {
      kind: 'source',
      source: api.workbench.repo()!.getSource(ids.source),
    })) as vscode.TextEditor;
    const doc = editor.document;
    await typeInto(editor, 'Mine about the interview.');
    await tool('update_memo', { source_id: ids.source, memo: 'Agent: recorded in the garden shed.' });
    const original = api.memos.files.resolveConflict;
    api.memos.files.resolveConflict = async () => 'keepTheirs';
    try {
      await saveWithWorkbench(editor);
      await until('the tab shows theirs', () => !doc.isDirty && doc.getText() === 'Agent: recorded in the garden shed.');
      assert.equal(api.workbench.repo()?.getSource(ids.source)?.memo, 'Agent: recorded in the garden shed.');
    } finally {
      api.memos.files.resolveConflict = original;
    }
  });

  it('the project briefing edited in its tab is what qda://project/briefing returns; a missing heading stores nothing', async () => {
    const editor = (await vscode.commands.executeCommand('marginalia.memos.openBriefing')) as vscode.TextEditor;
    const doc = editor.document;
    assert.match(doc.getText(), /## Description[\s\S]*## Research questions[\s\S]*## Methodology/);
    const md = [
      '# Project briefing',
      '',
      '## Description',
      '',
      'How community gardens make neighbours.',
      '',
      '## Research questions',
      '',
      '1. How do gardens build trust?',
      '2. Who stays, and why?',
      '',
      '## Methodology',
      '',
      'Reflexive thematic analysis.',
      '',
    ].join('\n');
    await typeInto(editor, md);
    await saveWithWorkbench(editor);
    await until('the briefing saved', () => !doc.isDirty);
    const b = await briefing();
    assert.deepEqual(
      [b.description, b.research_questions, b.methodology],
      ['How community gardens make neighbours.', ['How do gardens build trust?', 'Who stays, and why?'], 'Reflexive thematic analysis.'],
    );
    assert.equal(b.project_name, 'memos');

    // a document without the Methodology heading is refused: the tab stays dirty, the stored frame is unchanged
    await typeInto(editor, md.replace('## Methodology', 'Methodology'));
    const saved = await doc.save();
    assert.equal(saved, false, 'the save failed');
    assert.equal(doc.isDirty, true);
    const after = await briefing();
    assert.equal(after.methodology, 'Reflexive thematic analysis.');
    await vscode.commands.executeCommand('workbench.action.files.revert');
  });

  it('Open Memo at the cursor opens the coded passage memo', async () => {
    const src = (await vscode.commands.executeCommand('marginalia.sources.open', ids.source)) as vscode.TextEditor;
    const at = src.document.positionAt(TEXT.indexOf('neighbour'));
    src.selection = new vscode.Selection(at, at);
    const editor = (await vscode.commands.executeCommand('marginalia.memos.openAtCursor')) as vscode.TextEditor;
    assert.ok(editor, 'a memo tab opened');
    assert.equal(editor.document.uri.query, `segment=${ids.segment}`);
    assert.equal(editor.document.getText(), 'Reciprocity, not food.');
    assert.equal(path.posix.basename(editor.document.uri.path), 'Food security in garden-interview.md');
  });

  it('the Memos view lists every memo with what it belongs to', async () => {
    await api.settled();
    const groups = (await api.memos.tree.getChildren()) as MemosNode[];
    const shown = groups.map((g) => {
      assert.equal(g.kind, 'group');
      const items = api.memos.tree.getChildren(g).map((n) => api.memos.tree.getTreeItem(n));
      return [g.kind === 'group' ? g.label : '', items.map((i) => [i.label, i.description])];
    });
    assert.deepEqual(shown, [
      ['Project', [['Project briefing', 'How community gardens make neighbours. · How do gardens build trust? · Who stay…']]],
      ['Codes', [['Food security', '# When to apply Any talk of **food** as a reason to join — not the harvest itse…']]],
      ['Sources', [['garden-interview', 'Agent: recorded in the garden shed.']]],
      ['Cases', [['Participant 1', 'Mine: a retired teacher who runs the compost.']]],
      ['Coded passages', [['Food security in garden-interview', '“Because my neighbour asked me,”']]],
    ]);
    // the view is registered in the Marginalia container and clicking an item opens its memo
    const item = api.memos.tree.getTreeItem({ kind: 'memo', entry: { target: { kind: 'code', id: ids.code }, label: 'Food security', memo: 'x' } });
    assert.equal(item.command?.command, 'marginalia.memos.open');
    const opened = (await vscode.commands.executeCommand(item.command!.command, ...(item.command!.arguments ?? []))) as vscode.TextEditor;
    assert.equal(path.posix.basename(opened.document.uri.path), 'Food security.md');
  });

  it('a memo tab of a project that is no longer open never writes the open one', async () => {
    const editor = (await vscode.commands.executeCommand('marginalia.memos.open', { kind: 'code', id: ids.code })) as vscode.TextEditor;
    await typeInto(editor, 'Written for the first project.');
    await vscode.commands.executeCommand('marginalia.project.new', path.join(ws(), 'other.qda'));
    const o = await api.workbench.pipeline.invoke('create_code', { name: 'Other code' }, api.workbench.caller());
    assert.ok(o.envelope.success);
    const otherCode = (o.envelope.data as { code_id: number }).code_id;
    assert.equal(otherCode, ids.code, 'the same id in the other project, so only the project tells the two memos apart');
    assert.equal(await editor.document.save(), false, 'the stale tab is not saved');
    assert.equal(api.workbench.repo()?.getCode(otherCode)?.memo, null, "the open project's code keeps its (empty) memo");
    await vscode.commands.executeCommand('workbench.action.files.revert');
  });
});
