// Runs in the REAL VS Code extension host (test/integration/run.mjs): the Reports webview draws its charts
// (the page reports what it drew on the canvas), a click's segments open in the editor, exports go through
// export_report, and codebook health shows in the Problems panel (vscode.languages.getDiagnostics).
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { MarginaliaApi } from '../../../src/extension';
import { invokeAs, until } from './support';

const EXTENSION_ID = 'marginalia.marginalia';

/** The codebook diagnostics of `uri`, as [code, message] pairs. */
function codebookDiagnostics(uri: vscode.Uri): vscode.Diagnostic[] {
  return vscode.languages.getDiagnostics(uri).filter((d) => d.source === 'marginalia-codebook');
}

/** The codebook-level diagnostics: on the codes' cards (marginalia-codebook: documents), never on the binary .qda. */
function codebookLevelDiagnostics(): vscode.Diagnostic[] {
  return vscode.languages
    .getDiagnostics()
    .filter(([uri]) => uri.scheme === 'marginalia-codebook')
    .flatMap(([, list]) => list.filter((d) => d.source === 'marginalia-codebook'));
}

describe('Reports and codebook health in VS Code', function () {
  this.timeout(90_000);
  let api: MarginaliaApi;
  const ws = () => vscode.workspace.workspaceFolders![0]!.uri.fsPath;
  let projectFile: string;
  const ids = { s1: 0, s2: 0, meeting: 0, meetingPlace: 0, food: 0, case: 0 };

  /** Calls a tool through the pipeline as the researcher, or as another coder (support.ts invokeAs). */
  const call = (tool: string, args: Record<string, unknown>, user?: string) => invokeAs(api, tool, args, user);

  before(async () => {
    const ext = vscode.extensions.getExtension<MarginaliaApi>(EXTENSION_ID);
    assert.ok(ext);
    api = await ext.activate();
    projectFile = path.join(ws(), 'reports.qda');
    await vscode.commands.executeCommand('marginalia.project.new', projectFile);
    assert.equal(api.controller.current()?.path, projectFile);
    // two transcripts; a code whose name is markup, its near-duplicate without a memo, and a code used once
    ids.s1 = (
      await call('import_text', { name: 'Garden talk', content: 'We meet at the garden every Sunday. It is the one place where people actually talk.' })
    ).source_id;
    ids.s2 = (await call('import_text', { name: 'Market talk', content: 'The market is busy.\nPeople come for the food, and stay to talk.' })).source_id;
    ids.meeting = (await call('create_code', { name: 'Meeting <b>places</b>', color: '#4E79A7', memo: 'where people meet' })).code_id;
    ids.meetingPlace = (await call('create_code', { name: 'meeting place', color: '#F28E2B' })).code_id;
    ids.food = (await call('create_code', { name: 'Food', color: '#59A14F', memo: 'food and eating' })).code_id;
    const apply = (code: number, source: number, start: number, end: number, user?: string) =>
      call('apply_code', { code_id: code, source_id: source, start_pos: start, end_pos: end }, user);
    await apply(ids.meeting, ids.s1, 0, 34); // "We meet at the garden every Sunday."
    await apply(ids.meeting, ids.s1, 15, 60); // overlaps the first on [15, 34): a same-code overlap
    await apply(ids.meetingPlace, ids.s1, 3, 21); // co-occurs with both
    await apply(ids.meeting, ids.s2, 0, 19, 'bob'); // a second coder
    await apply(ids.meetingPlace, ids.s2, 0, 10, 'bob');
    await apply(ids.food, ids.s2, 20, 40); // used once
    // a case with an attribute
    ids.case = (await call('create_case', { name: 'Participant <i>A</i>' })).case_id;
    await call('add_source_to_case', { case_id: ids.case, source_id: ids.s1 });
    await call('set_case_attribute', { case_id: ids.case, attribute_name: 'site', value: 'North' });
    await api.settled();
  });

  after(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await vscode.commands.executeCommand('marginalia.project.close');
  });

  it('opens the Reports webview with Marginalia: Open Reports and draws the frequency bar chart', async () => {
    const drawn = api.reports.whenRendered('frequency', 30_000);
    await vscode.commands.executeCommand('marginalia.reports.open');
    const r = await drawn;
    assert.equal(r.items, 3, 'one bar per used code');
    assert.ok(r.painted > 500, `the canvas is painted (${r.painted} pixels)`);
    assert.ok(api.reports.isOpen);
  });

  it('draws the co-occurrence heat map: one cell per pair of codes', async () => {
    const drawn = api.reports.whenRendered('cooccurrence');
    api.reports.open('cooccurrence');
    const r = await drawn;
    assert.equal(r.items, 9);
    assert.ok(r.painted > 500);
    const data = api.reports.compute({ view: 'cooccurrence' });
    assert.equal(data.type, 'cooccurrence');
    if (data.type === 'cooccurrence')
      assert.deepEqual(
        data.heat.rows.map((c) => c.name),
        ['Food', 'Meeting <b>places</b>', 'meeting place'],
      );
  });

  it('draws the coder agreement table with kappa for two coders', async () => {
    const drawn = api.reports.whenRendered('agreement');
    api.reports.open('agreement');
    const r = await drawn;
    assert.ok(r.items >= 2, `rows: ${r.items}`);
    const data = api.reports.compute({ view: 'agreement', coders: ['bob', 'test-researcher'] });
    assert.equal(data.type, 'agreement');
    if (data.type === 'agreement') {
      assert.deepEqual(data.pair, ['bob', 'test-researcher']);
      assert.ok(data.rows.every((row) => row.percent_agreement !== null));
    }
  });

  it('draws the code-by-case and code-by-attribute heat maps', async () => {
    let drawn = api.reports.whenRendered('case');
    api.reports.open('case');
    assert.equal((await drawn).items, 2, 'two codes x one case');
    drawn = api.reports.whenRendered('attribute');
    api.reports.open('attribute');
    const r = await drawn;
    assert.equal(r.items, 2, 'two codes x one value of "site"');
    assert.ok(r.painted > 100);
  });

  it('redraws the open view when the project changes', async () => {
    const drawn = api.reports.whenRendered('attribute');
    await call('add_source_to_case', { case_id: ids.case, source_id: ids.s2 });
    const r = await drawn;
    assert.equal(r.items, 3, 'Food is in the case now too');
  });

  it('lists the segments behind a cell and opens the chosen one at its range', async () => {
    const behind = api.reports.segmentsBehind({ kind: 'pair', code_a: ids.meeting, code_b: ids.meetingPlace });
    // s1: [0,34) x [3,21) and [15,60) x [3,21); s2 (bob): [0,19) x [0,10)
    assert.deepEqual(
      behind.items.map((i) => [i.source_name, i.start_pos, i.end_pos]),
      [
        ['Garden talk', 3, 21],
        ['Garden talk', 15, 21],
        ['Market talk', 0, 10],
      ],
    );
    const code = api.reports.segmentsBehind({ kind: 'cases', code_id: ids.food, case_ids: [ids.case], column: 'North' });
    assert.deepEqual(
      code.items.map((i) => i.text),
      ['People come for the '],
    );
    // the click's quick pick: accept the first passage, which opens its source with the range selected
    const picked = api.reports.drill({ kind: 'code', code_id: ids.food });
    await new Promise((r) => setTimeout(r, 800));
    await vscode.commands.executeCommand('workbench.action.acceptSelectedQuickOpenItem');
    await picked;
    const editor = await until('the source to open', () => {
      const ed = vscode.window.activeTextEditor;
      return ed && api.documents.sourceIdFor(ed.document) === ids.s2 ? ed : undefined;
    });
    assert.equal(editor.document.getText(editor.selection), 'People come for the ');
  });

  it('exports the frequency report through export_report, names escaped in HTML', async () => {
    const dir = fs.mkdtempSync(path.join(ws(), 'exports-'));
    const csv = await api.reports.exportReport('csv', { view: 'frequency' }, path.join(dir, 'freq.csv'));
    assert.ok(csv && fs.existsSync(csv));
    assert.match(fs.readFileSync(csv, 'utf8'), /Meeting <b>places<\/b>,3,2/);
    const html = await api.reports.exportReport('html', { view: 'agreement', coders: ['bob', 'test-researcher'] }, path.join(dir, 'agreement.html'));
    const text = fs.readFileSync(html!, 'utf8');
    assert.ok(text.includes('Meeting &lt;b&gt;places&lt;/b&gt;') && !text.includes('<b>places'), 'code names escaped');
    const json = await api.reports.exportReport('json', { view: 'cooccurrence' }, path.join(dir, 'cooc.json'));
    assert.equal(JSON.parse(fs.readFileSync(json!, 'utf8')).report_type, 'cooccurrence');
  });

  it('draws the code-by-document-attribute heat map and lists the segments behind one of its cells', async () => {
    await call('set_source_attribute', { source_id: ids.s1, attribute_name: 'Region', value: 'North' });
    await call('set_source_attribute', { source_id: ids.s2, attribute_name: 'Region', value: 'South' });
    const drawn = api.reports.whenRendered('document_attribute');
    api.reports.open('document_attribute');
    const r = await drawn;
    assert.equal(r.items, 6, 'three codes x two values of "Region"');
    assert.ok(r.painted > 100);
    const data = api.reports.compute({ view: 'document_attribute', attribute: 'Region' });
    assert.equal(data.type, 'document_attribute');
    if (data.type === 'document_attribute') {
      assert.deepEqual(data.attributes, ['Region']);
      assert.deepEqual(
        data.heat.columns.map((c) => [c.label, c.source_ids]),
        [
          ['North', [ids.s1]],
          ['South', [ids.s2]],
        ],
      );
      // s1: Meeting x2, meeting place x1; s2 (bob and the researcher): Meeting, meeting place, Food
      assert.deepEqual(
        data.heat.rows.map((c) => c.name),
        ['Food', 'Meeting <b>places</b>', 'meeting place'],
      );
      assert.deepEqual(data.heat.matrix, [
        [0, 1],
        [2, 1],
        [1, 1],
      ]);
    }
    const behind = api.reports.segmentsBehind({ kind: 'sources', code_id: ids.meeting, source_ids: [ids.s1], column: 'Region = North' });
    assert.deepEqual(
      behind.items.map((i) => [i.source_name, i.start_pos, i.end_pos]),
      [
        ['Garden talk', 0, 34],
        ['Garden talk', 15, 60],
      ],
    );
  });

  it("lists codebook problems in the Problems panel: codebook-level on the codes' cards, overlaps on the source", async () => {
    const onProject = await until("codebook diagnostics on the codes' cards", () => {
      const list = codebookLevelDiagnostics();
      return list.some((d) => d.code === 'near_duplicate_names') ? list : undefined;
    });
    const kinds = onProject.map((d) => `${String(d.code)}: ${d.message}`);
    assert.ok(
      kinds.some((k) => k.startsWith('code_without_memo') && k.includes('"meeting place"')),
      kinds.join('\n'),
    );
    // 6 coded passages, fewer than marginalia.codebookHealth.usedOnceAfter (default 50): "used only once" stays quiet
    assert.ok(!kinds.some((k) => k.startsWith('code_used_once')), kinds.join('\n'));
    assert.ok(
      kinds.some((k) => k.startsWith('near_duplicate_names') && k.includes('"Meeting <b>places</b>"') && k.includes('"meeting place"')),
      kinds.join('\n'),
    );
    const source = api.workbench.repo()!.getSource(ids.s1)!;
    const overlaps = codebookDiagnostics(api.documents.uriFor(source));
    assert.equal(overlaps.length, 1);
    assert.equal(overlaps[0]!.code, 'same_code_overlap');
    assert.equal(overlaps[0]!.severity, vscode.DiagnosticSeverity.Warning);
    assert.ok(overlaps[0]!.range.isEqual(new vscode.Range(0, 15, 0, 34)), JSON.stringify(overlaps[0]!.range));
    // fixing a problem clears it (debounced refresh)
    await call('update_code_memo', { code_id: ids.meetingPlace, memo: 'a place to meet' });
    assert.deepEqual(codebookDiagnostics(vscode.Uri.file(projectFile)), [], 'nothing on the binary .qda (a click would open it)');
    await until('the memo problem to go', () => !codebookLevelDiagnostics().some((d) => d.code === 'code_without_memo') || undefined);
  });

  it('names codes used only once after marginalia.codebookHealth.usedOnceAfter coded passages (6 here)', async () => {
    const config = vscode.workspace.getConfiguration('marginalia');
    const usedOnce = () => codebookLevelDiagnostics().filter((d) => d.code === 'code_used_once');
    try {
      await config.update('codebookHealth.usedOnceAfter', 6, vscode.ConfigurationTarget.Global);
      const listed = await until('"Food" used only once', () => (usedOnce().length > 0 ? usedOnce() : undefined));
      assert.deepEqual(
        listed.map((d) => d.message.match(/"([^"]+)"/)?.[1]),
        ['Food'],
      );
      await config.update('codebookHealth.usedOnceAfter', 7, vscode.ConfigurationTarget.Global);
      await until('the used-once problem to go at 7', () => usedOnce().length === 0 || undefined);
    } finally {
      await config.update('codebookHealth.usedOnceAfter', undefined, vscode.ConfigurationTarget.Global);
    }
  });

  it('clears the list when marginalia.codebookHealth.enabled is off', async () => {
    const config = vscode.workspace.getConfiguration('marginalia');
    await config.update('codebookHealth.enabled', false, vscode.ConfigurationTarget.Global);
    try {
      await until('the list to clear', () => codebookLevelDiagnostics().length === 0 || undefined);
    } finally {
      await config.update('codebookHealth.enabled', undefined, vscode.ConfigurationTarget.Global);
    }
    await until('the list to come back', () => codebookLevelDiagnostics().length > 0 || undefined);
  });
});

// The agreement views on a project of their own: two human coders who disagree in two places, and an agent
// that codes what neither human did. Expected counts and passages are worked out by hand from the codings.
describe('Reports: disagreements and human vs AI in VS Code', function () {
  this.timeout(90_000);
  let api: MarginaliaApi;
  let researcher = '';
  let agentName = '';
  const ids = { garden: 0, committee: 0, water: 0, food: 0, trust: 0 };
  // one line per passage: a disagreement's passage is its line (agreementViews: the window stops at line breaks)
  const GARDEN = ['Notes from the garden meeting.', 'We share water from the well on Sundays.', 'The beans feed six families this year.'];
  const COMMITTEE = ['Committee notes.', 'Bob trusts the committee with the keys.', 'The agent thinks food is the point.', 'End of notes.'];
  const lineAt = (lines: string[], i: number): [number, number] => {
    const start = lines.slice(0, i).reduce((n, l) => n + l.length + 1, 0);
    return [start, start + lines[i]!.length];
  };

  /** Calls a tool through the pipeline as the researcher, or as another coder (support.ts invokeAs). */
  const call = (tool: string, args: Record<string, unknown>, user?: string) => invokeAs(api, tool, args, user);

  before(async () => {
    api = await vscode.extensions.getExtension<MarginaliaApi>(EXTENSION_ID)!.activate();
    const file = path.join(vscode.workspace.workspaceFolders![0]!.uri.fsPath, 'agreement-views.qda');
    await vscode.commands.executeCommand('marginalia.project.new', file);
    assert.equal(api.controller.current()?.path, file);
    researcher = api.workbench.caller().user;
    ids.garden = (await call('import_text', { name: 'Garden notes', content: GARDEN.join('\n') })).source_id;
    ids.committee = (await call('import_text', { name: 'Committee notes', content: COMMITTEE.join('\n') })).source_id;
    ids.water = (await call('create_code', { name: 'Water', color: '#4E79A7' })).code_id;
    ids.food = (await call('create_code', { name: 'Food', color: '#59A14F' })).code_id;
    ids.trust = (await call('create_code', { name: 'Trust', color: '#E15759' })).code_id;
    const apply = (code: number, source: number, [start, end]: [number, number], user?: string) =>
      call('apply_code', { code_id: code, source_id: source, start_pos: start, end_pos: end }, user);
    // Garden notes: both code line 1 "Water" (agreement); only the researcher codes line 2 "Food" (disagreement 1)
    await apply(ids.water, ids.garden, lineAt(GARDEN, 1));
    await apply(ids.water, ids.garden, lineAt(GARDEN, 1), 'bob');
    await apply(ids.food, ids.garden, lineAt(GARDEN, 2));
    // Committee notes: bob codes the whole line "Trust", the researcher its first 24 characters (disagreement 2: " with the keys.")
    const [t0, t1] = lineAt(COMMITTEE, 1);
    await apply(ids.trust, ids.committee, [t0, t1], 'bob');
    await apply(ids.trust, ids.committee, [t0, t0 + 'Bob trusts the committee'.length]);
    // the agent codes line 3 "Food", which no human coded; one segment, so the two humans stay the compared pair
    const agent = api.agent.implicitCaller(`Bearer ${api.tokens.agent}`, 'reports-test-agent', 'CUSTOM');
    const [f0, f1] = lineAt(COMMITTEE, 2);
    const out = await api.workbench.pipeline.invoke('apply_code', { code_id: ids.food, source_id: ids.committee, start_pos: f0, end_pos: f1 }, agent);
    assert.ok(out.envelope.success, JSON.stringify(out.envelope));
    const held = out.envelope.data as { request_id?: string };
    if (out.status === 'pending') assert.ok(await api.approvals.approve(held.request_id!), 'the researcher approves the agent coding');
    await api.settled();
    const coders = api.workbench.repo()!.listCoders();
    assert.equal(coders.length, 3, JSON.stringify(coders));
    agentName = coders.find((c) => c.coder !== researcher && c.coder !== 'bob')!.coder;
  });

  after(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await vscode.commands.executeCommand('marginalia.project.close');
  });

  it('draws the disagreements view: one card per disputed passage, the two humans side by side', async () => {
    const drawn = api.reports.whenRendered('disagreements', 30_000);
    api.reports.open('disagreements');
    const r = await drawn;
    // Food on Garden notes line 2, Trust on Committee notes line 1: two codes, so two passages
    assert.equal(r.items, 2, 'two disagreement passages drawn');
    const data = api.reports.compute({ view: 'disagreements' });
    assert.equal(data.type, 'disagreements');
    if (data.type !== 'disagreements') return;
    assert.deepEqual([...(data.selected ?? [])].sort(), ['bob', researcher].sort(), 'the two coders with the most segments: the humans');
    assert.equal(data.total, 2);
    assert.deepEqual(
      data.passages.map((p) => [p.code, p.source, p.start_pos, p.end_pos, p.text]),
      [
        ['Food', 'Garden notes', ...lineAt(GARDEN, 2), 'The beans feed six families this year.'],
        ['Trust', 'Committee notes', ...lineAt(COMMITTEE, 1), 'Bob trusts the committee with the keys.'],
      ],
    );
    const trust = data.passages[1]!;
    assert.deepEqual(
      trust.coders.map((c) => [c.coder, c.coded, c.spans.map((s) => [s.start, s.end, s.code])]),
      [researcher, 'bob']
        .sort((a, b) => data.selected!.indexOf(a) - data.selected!.indexOf(b))
        .map((c) => (c === 'bob' ? ['bob', true, [[0, 39, 'Trust']]] : [researcher, false, [[0, 24, 'Trust']]])),
    );
    // "coded": coded the disputed stretch " with the keys." [24, 39), which only bob did
    assert.deepEqual(trust.disputed, [{ start: 24, end: 39 }], '" with the keys." is the disputed stretch');
  });

  it('draws the human vs AI view: the agent against each human, per code', async () => {
    const drawn = api.reports.whenRendered('human_ai', 30_000);
    api.reports.open('human_ai');
    const r = await drawn;
    // the agent coded only Committee notes; there the pair (agent, human) used Food (the agent) and Trust (the human):
    // 2 codes x 2 humans, and no coding suggestions
    assert.equal(r.items, 4);
    const data = api.reports.compute({ view: 'human_ai' });
    assert.equal(data.type, 'human_ai');
    if (data.type !== 'human_ai') return;
    assert.deepEqual(data.agents, [agentName]);
    assert.deepEqual([...data.humans].sort(), ['bob', researcher].sort());
    assert.equal(data.pairs.length, 2);
    for (const p of data.pairs) {
      assert.equal(p.sources, 1, `${p.agent} and ${p.human} both coded Committee notes only`);
      assert.deepEqual(p.codes.map((c) => c.code).sort(), ['Food', 'Trust']);
    }
  });

  it('"Open in source" opens the passage\'s source with the passage selected', async () => {
    const data = api.reports.compute({ view: 'disagreements' });
    assert.equal(data.type, 'disagreements');
    if (data.type !== 'disagreements') return;
    const trust = data.passages.find((p) => p.code === 'Trust')!;
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await api.reports.openSource(trust.source_id, trust.start_pos, trust.end_pos);
    const editor = await until('Committee notes to open', () => {
      const ed = vscode.window.activeTextEditor;
      return ed && api.documents.sourceIdFor(ed.document) === ids.committee ? ed : undefined;
    });
    assert.equal(editor.document.getText(editor.selection), 'Bob trusts the committee with the keys.');
    assert.equal(editor.selection.start.line, 1);
    assert.ok(
      editor.visibleRanges.some((v) => v.contains(editor.selection)),
      'the passage is revealed',
    );
    // numbers the page could not have sent open nothing
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await api.reports.openSource(ids.committee, 10, 5);
    await api.reports.openSource(999_999, 0, 5);
    await api.reports.openSource(String(ids.committee), 0, 5);
    assert.equal(vscode.window.activeTextEditor, undefined);
  });
});
