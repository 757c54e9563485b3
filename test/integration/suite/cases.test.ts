// Runs in the REAL VS Code extension host (test/integration/run.mjs): cases in VS Code (issue 13 item 5).
// A case is made from two sources selected in the Sources view, given a number and a date attribute through
// the Cases commands (with arguments, no prompts), and read back through the pipeline's own list tools; the
// Cases view lists it with its attributes and sources; the Case Attributes table's model (what the webview is
// fed) lists the case with typed values, and a cell saved with a value of the wrong type keeps the value and
// returns the tool's message; a case and an attribute are renamed; the passage selected in an editor goes
// into the case with code-point positions; a source is taken out; the case is deleted and its sources stay.
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { MarginaliaApi } from '../../../src/extension';
import type { CasesNode } from '../../../src/ui/trees/casesTreeProvider';
import type { SourcesNode } from '../../../src/ui/trees/sourcesTreeProvider';

const EXTENSION_ID = 'marginalia.marginalia';
// "Zo\u00eb \u{1F331} said: " is 12 code points (13 UTF-16 code units: the seedling is outside the BMP)
const GARDEN = 'Zo\u00eb \u{1F331} said: the garden keeps us together.';

describe('Cases in VS Code', function () {
  this.timeout(90_000);
  let api: MarginaliaApi;
  const ids = { garden: 0, market: 0, notes: 0, kase: 0 };

  async function call(tool: string, args: Record<string, unknown> = {}): Promise<any> {
    const out = await api.workbench.pipeline.invoke(tool, args, api.workbench.caller());
    assert.ok(out.envelope.success, `${tool}: ${JSON.stringify(out.envelope).slice(0, 400)}`);
    return out.envelope.data;
  }

  before(async () => {
    const ext = vscode.extensions.getExtension<MarginaliaApi>(EXTENSION_ID);
    assert.ok(ext);
    api = await ext.activate();
    await vscode.commands.executeCommand('marginalia.project.new', path.join(vscode.workspace.workspaceFolders![0]!.uri.fsPath, 'cases.qda'));
    ids.garden = (await call('import_text', { name: 'Garden talk', content: GARDEN })).source_id;
    ids.market = (await call('import_text', { name: 'Market talk', content: 'The market is busy on Saturdays.' })).source_id;
    ids.notes = (await call('import_text', { name: 'Field notes', content: 'Rain all day.' })).source_id;
    await api.settled();
  });

  after(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await vscode.commands.executeCommand('marginalia.project.close');
  });

  it('the Cases view is empty (its welcome content offers New Case from Sources) before any case', async () => {
    assert.deepEqual(api.casesTree.getChildren(), []);
    const pkg = vscode.extensions.getExtension(EXTENSION_ID)!.packageJSON as { contributes: { viewsWelcome: { view: string; contents: string }[] } };
    const welcome = pkg.contributes.viewsWelcome.filter((w) => w.view === 'marginalia.cases');
    assert.equal(welcome.length, 1);
    assert.match(welcome[0]!.contents, /\[New Case from Sources\.\.\.\]\(command:marginalia\.cases\.newFromSources\)/);
    assert.doesNotMatch(welcome[0]!.contents, /create_case/);
  });

  it('New Case from Sources with two sources selected in the Sources view makes one case holding both', async () => {
    const nodes = (await api.sourcesTree.getChildren()) as SourcesNode[];
    const node = (id: number) => nodes.find((n) => n.kind === 'source' && n.source.source_id === id)!;
    assert.ok(node(ids.garden) && node(ids.market));
    // the context menu passes the clicked node and the whole selection
    const caseId = (await vscode.commands.executeCommand(
      'marginalia.cases.newFromSources',
      node(ids.garden),
      [node(ids.garden), node(ids.market)],
      'Participant A',
    )) as number;
    assert.equal(typeof caseId, 'number');
    ids.kase = caseId;
    const got = await call('get_case', { case_id: caseId });
    assert.equal(got.name, 'Participant A');
    assert.deepEqual(got.sources.map((s: any) => s.name).sort(), ['Garden talk', 'Market talk']);
    assert.equal(got.segment_count, 0);
  });

  it('Set Case Attribute with arguments stores a number and a date, read back typed through list_cases and get_case', async () => {
    await vscode.commands.executeCommand('marginalia.cases.setAttribute', ids.kase, 'Age', 42, 'number');
    await vscode.commands.executeCommand('marginalia.cases.setAttribute', ids.kase, 'Interviewed', '2024-03-05', 'date');
    const listed = (await call('list_cases')).cases;
    assert.deepEqual(
      listed.map((c: any) => [c.name, c.attributes]),
      [['Participant A', { Age: 42, Interviewed: '2024-03-05' }]],
    );
    const got = await call('get_case', { case_id: ids.kase });
    assert.deepEqual(
      got.attributes.map((a: any) => [a.name, a.type, a.value]),
      [
        ['Age', 'number', 42],
        ['Interviewed', 'date', '2024-03-05'],
      ],
    );
    assert.deepEqual(await call('list_case_attributes'), {
      count: 2,
      attributes: [
        { name: 'Age', type: 'number', types: { number: 1 }, case_count: 1 },
        { name: 'Interviewed', type: 'date', types: { date: 1 }, case_count: 1 },
      ],
    });
  });

  it('the Cases view lists the case with its attributes and sources as children', async () => {
    await api.settled();
    const roots = api.casesTree.getChildren();
    assert.equal(roots.length, 1);
    const caseItem = api.casesTree.getTreeItem(roots[0]!);
    assert.equal(caseItem.label, 'Participant A');
    assert.equal(caseItem.contextValue, 'case');
    assert.equal(caseItem.description, '2 sources · 2 attributes');
    const children = api.casesTree.getChildren(roots[0]) as CasesNode[];
    const labels = children.map((c) => [api.casesTree.getTreeItem(c).label, api.casesTree.getTreeItem(c).contextValue]);
    assert.deepEqual(labels, [
      ['Age = 42', 'caseAttribute'],
      ['Interviewed = 2024-03-05', 'caseAttribute'],
      ['Garden talk', 'caseSource'],
      ['Market talk', 'caseSource'],
    ]);
  });

  it('the Case Attributes table is fed the case as a row and the attributes as typed columns; a bad cell keeps the value and shows the message', async () => {
    await vscode.commands.executeCommand('marginalia.cases.openAttributes');
    assert.ok(api.caseAttributes.isOpen, 'the panel opened');
    assert.deepEqual(api.caseAttributes.model(), {
      columns: [
        { name: 'Age', type: 'number', case_count: 1 },
        { name: 'Interviewed', type: 'date', case_count: 1 },
      ],
      rows: [
        {
          case_id: ids.kase,
          name: 'Participant A',
          values: { Age: { type: 'number', value: 42 }, Interviewed: { type: 'date', value: '2024-03-05' } },
        },
      ],
    });
    // what the webview's setCell runs: a date cell given something that is not a date
    const error = await api.caseAttributes.saveCell(ids.kase, 'Interviewed', 'date', 'next Tuesday');
    assert.ok(error && /date/i.test(error), `the tool's message comes back for the cell: ${error}`);
    assert.equal((await call('get_case', { case_id: ids.kase })).attribute_values.Interviewed, '2024-03-05', 'nothing was written');
    // a boolean cell saved, then cleared
    assert.equal(await api.caseAttributes.saveCell(ids.kase, 'Urban', 'boolean', true), null);
    assert.equal((await call('get_case', { case_id: ids.kase })).attribute_values.Urban, true);
    assert.equal(await api.caseAttributes.saveCell(ids.kase, 'Urban', 'boolean', null), null);
    assert.ok(!('Urban' in (await call('get_case', { case_id: ids.kase })).attribute_values));
    await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
  });

  it('rename a case and an attribute definition through the commands', async () => {
    await vscode.commands.executeCommand('marginalia.cases.rename', ids.kase, 'Participant Alpha');
    await vscode.commands.executeCommand('marginalia.cases.renameAttribute', 'Age', 'Age at interview');
    const listed = (await call('list_cases')).cases;
    assert.deepEqual(
      listed.map((c: any) => [c.name, c.attributes]),
      [['Participant Alpha', { 'Age at interview': 42, Interviewed: '2024-03-05' }]],
    );
    await api.settled();
    assert.equal(api.casesTree.getTreeItem(api.casesTree.getChildren()[0]!).label, 'Participant Alpha');
    assert.deepEqual(
      api.caseAttributes.model().columns.map((c) => c.name),
      ['Age at interview', 'Interviewed'],
    );
  });

  it('Add Selected Passage to Case adds the editor selection with code-point positions', async () => {
    const editor = (await vscode.commands.executeCommand('marginalia.sources.open', ids.garden)) as vscode.TextEditor;
    assert.ok(editor);
    const doc = editor.document;
    assert.equal(doc.getText(), GARDEN);
    const at = doc.getText().indexOf('the garden'); // UTF-16: 13
    editor.selection = new vscode.Selection(doc.positionAt(at), doc.positionAt(at + 'the garden'.length));
    const r = (await vscode.commands.executeCommand('marginalia.cases.addSelectedPassage', ids.kase)) as { created: boolean };
    assert.equal(r.created, true);
    const got = await call('get_case', { case_id: ids.kase });
    assert.deepEqual(
      got.segments.map((s: any) => [s.source_name, s.start_pos, s.end_pos, s.text]),
      [['Garden talk', 12, 22, 'the garden']],
    );
  });

  it('Remove Source from Case takes one source out; the source stays in the project', async () => {
    await vscode.commands.executeCommand('marginalia.cases.removeSource', ids.kase, ids.market);
    const got = await call('get_case', { case_id: ids.kase });
    assert.deepEqual(
      got.sources.map((s: any) => s.name),
      ['Garden talk'],
    );
    assert.equal((await call('list_sources')).sources.length, 3);
    // and Add Sources to Case puts a source in again (with arguments)
    assert.equal(await vscode.commands.executeCommand('marginalia.cases.addSources', ids.kase, [ids.notes]), 1);
    assert.deepEqual((await call('get_case', { case_id: ids.kase })).sources.map((s: any) => s.name).sort(), ['Field notes', 'Garden talk']);
  });

  it('Delete Case (confirmed) deletes the case; its sources and the other cases stay', async () => {
    await vscode.commands.executeCommand('marginalia.cases.delete', ids.kase, true);
    assert.equal((await call('list_cases')).count, 0);
    assert.equal((await call('list_sources')).sources.length, 3);
    await api.settled();
    assert.deepEqual(api.casesTree.getChildren(), []);
    assert.deepEqual(api.caseAttributes.model(), { columns: [], rows: [] });
  });
});
