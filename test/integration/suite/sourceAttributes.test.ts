// Runs in the REAL VS Code extension host (test/integration/run.mjs): document (source) attributes set from
// the Sources view's "Set Document Attribute..." command (with its answers as arguments, and once through its
// quick pick), shown in the source's tooltip, and reported in the Reports view's Code × document attribute.
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { MarginaliaApi } from '../../../src/extension';
import { valueProblem } from '../../../src/ui/commands/sourceAttributeCommands';

const EXTENSION_ID = 'marginalia.marginalia';

describe('Document attributes in VS Code', function () {
  this.timeout(90_000);
  let api: MarginaliaApi;
  const ids = { s1: 0, s2: 0, food: 0 };

  async function call(tool: string, args: Record<string, unknown>): Promise<any> {
    const out = await api.workbench.pipeline.invoke(tool, args, api.workbench.caller());
    assert.ok(out.envelope.success, `${tool}: ${JSON.stringify(out.envelope)}`);
    return out.envelope.data;
  }
  const attributesOf = async (id: number) => ((await call('list_sources', {})).sources as any[]).find((s) => s.source_id === id);

  before(async () => {
    const ext = vscode.extensions.getExtension<MarginaliaApi>(EXTENSION_ID);
    assert.ok(ext);
    api = await ext.activate();
    const file = path.join(vscode.workspace.workspaceFolders![0]!.uri.fsPath, 'attributes.qda');
    await vscode.commands.executeCommand('marginalia.project.new', file);
    ids.s1 = (await call('import_text', { name: 'North interview', content: 'We grow beans and share the water.' })).source_id;
    ids.s2 = (await call('import_text', { name: 'South interview', content: 'The market sells our beans.' })).source_id;
    ids.food = (await call('create_code', { name: 'Food', color: '#59A14F' })).code_id;
    await call('apply_code', { code_id: ids.food, source_id: ids.s1, start_pos: 9, end_pos: 14 });
    await call('apply_code', { code_id: ids.food, source_id: ids.s2, start_pos: 21, end_pos: 26 });
    await api.settled();
  });

  after(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await vscode.commands.executeCommand('marginalia.project.close');
  });

  it("Set Document Attribute... with its answers as arguments sets typed values, shown in the source's tooltip", async () => {
    const r = await vscode.commands.executeCommand<any>('marginalia.sources.setAttribute', ids.s1, 'Region', 'North', 'text');
    assert.deepEqual([r.attribute_name, r.type, r.value, r.changed], ['Region', 'text', 'North', true]);
    await vscode.commands.executeCommand('marginalia.sources.setAttribute', ids.s2, 'Region', 'South');
    await vscode.commands.executeCommand('marginalia.sources.setAttribute', ids.s1, 'Interviewed', '2024-05-01', 'date');
    await vscode.commands.executeCommand('marginalia.sources.setAttribute', ids.s1, 'Wave', 2);
    const s1 = await attributesOf(ids.s1);
    assert.deepEqual(s1.attributes, { Interviewed: '2024-05-01', Region: 'North', Wave: 2 });
    assert.deepEqual(s1.attribute_types, { Interviewed: 'date', Region: 'text', Wave: 'number' });
    await api.settled();
    const node = api.sourcesTree.getChildren().find((n) => n.kind === 'source' && n.source.source_id === ids.s1)!;
    // MarkdownString.appendText escapes: spaces as &nbsp;, punctuation with a backslash
    const tooltip = (api.sourcesTree.getTreeItem(node).tooltip as vscode.MarkdownString).value.replace(/&nbsp;/g, ' ').replace(/\\(.)/g, '$1');
    assert.ok(tooltip.includes('Interviewed: 2024-05-01') && tooltip.includes('Region: North') && tooltip.includes('Wave: 2'), tooltip);
  });

  it('refuses a date that is not ISO 8601 (in the input box, and from the tool), leaving the attribute unchanged', async () => {
    assert.match(valueProblem('1 May 2024', 'date') ?? '', /ISO 8601/);
    assert.equal(valueProblem('2024-05-01T09:30:00Z', 'date'), undefined);
    assert.match(valueProblem('many', 'number') ?? '', /number/);
    assert.equal(valueProblem(' 3.5 ', 'number'), undefined);
    const r = await vscode.commands.executeCommand<any>('marginalia.sources.setAttribute', ids.s1, 'Interviewed', '01/05/2024', 'date');
    assert.equal(r, undefined, 'the failure is shown, nothing returned');
    assert.equal((await attributesOf(ids.s1)).attributes.Interviewed, '2024-05-01');
  });

  it('asks for a boolean in a quick pick', async () => {
    const done = vscode.commands.executeCommand<any>('marginalia.sources.setAttribute', ids.s2, 'Consent', undefined, 'boolean');
    await new Promise((r) => setTimeout(r, 800));
    await vscode.commands.executeCommand('workbench.action.acceptSelectedQuickOpenItem');
    const r = await done;
    assert.deepEqual([r.type, r.value], ['boolean', true]);
  });

  it('reports code × document attribute in the Reports view', async () => {
    const drawn = api.reports.whenRendered('document_attribute', 30_000);
    await vscode.commands.executeCommand('marginalia.reports.open', 'document_attribute');
    const rendered = await drawn;
    assert.equal(rendered.items, 2, 'the first attribute, "Consent": one code x two columns, true (South) and (not set) (North)');
    const data = api.reports.compute({ view: 'document_attribute', attribute: 'Region' });
    assert.equal(data.type, 'document_attribute');
    if (data.type === 'document_attribute') {
      assert.deepEqual(data.attributes, ['Consent', 'Interviewed', 'Region', 'Wave']);
      assert.deepEqual(
        data.heat.columns.map((c) => c.label),
        ['North', 'South'],
      );
      assert.deepEqual(data.heat.matrix, [[1, 1]]);
    }
  });
});
