// Runs in the REAL VS Code extension host (test/integration/run.mjs): the codebook managed from the Codes
// view (issue 13, items 4, 10 and 11). Category rename, delete (empty; non-empty with its codes moved) and
// memo, New Code here and the title-bar New Code asking where the code goes, the filter and Go to Code,
// codebook-health problems that reveal their code instead of opening the .qda, Ctrl+Alt+L naming the code
// it applied, the walkthrough's import step, and the Marginalia Supervision container with its badge.
// Commands get their prompts' answers as arguments; results are read back through the pipeline's tools.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { Caller } from '../../../src/agent/pipeline';
import type { MarginaliaApi } from '../../../src/extension';
import { until } from './support';

const EXTENSION_ID = 'marginalia.marginalia';

interface CategoryOut {
  category_id: number;
  name: string;
  parent_id: number | null;
  memo: string | null;
}
interface CodeOut {
  code_id: number;
  name: string;
  category_id: number | null;
}

const INTERVIEW = 'We meet at the garden every Sunday. Zoë says it is the one place where people actually talk.\n';

describe('Codebook in VS Code', function () {
  this.timeout(90_000);
  let api: MarginaliaApi;
  const ws = () => vscode.workspace.workspaceFolders![0]!.uri.fsPath;
  const file = (name: string) => path.join(ws(), name);
  const ids = { social: 0, trust: 0, source: 0 };

  /** Calls a tool through the pipeline as the researcher and returns its data (the call must succeed). */
  async function call(tool: string, args: Record<string, unknown>, caller: Caller = api.workbench.caller()): Promise<any> {
    const out = await api.workbench.pipeline.invoke(tool, args, caller);
    assert.ok(out.envelope.success, `${tool}: ${JSON.stringify(out.envelope)}`);
    return out.envelope.data;
  }
  const categories = async (): Promise<CategoryOut[]> => (await call('list_categories', {})).categories;
  const codes = async (): Promise<CodeOut[]> => (await call('list_codes', {})).codes;
  const categoryNamed = async (name: string) => (await categories()).find((c) => c.name === name);
  const codeNamed = async (name: string) => (await codes()).find((c) => c.name === name);
  const selectedCode = () => {
    const s = api.codesTree.view.selection[0];
    return s?.kind === 'code' ? s.code.name : undefined;
  };

  before(async () => {
    const ext = vscode.extensions.getExtension<MarginaliaApi>(EXTENSION_ID);
    assert.ok(ext);
    api = await ext.activate();
    await vscode.commands.executeCommand('marginalia.project.new', file('codebook.qda'));
    ids.social = (await call('create_category', { name: 'Social' })).category_id;
    ids.trust = (await call('create_code', { name: 'Trust', category_id: ids.social, memo: 'who relies on whom' })).code_id;
    await call('create_code', { name: 'Weather', memo: 'rain, sun' });
    await api.settled();
  });

  after(async () => {
    await vscode.commands.executeCommand('marginalia.codes.clearFilter');
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await vscode.commands.executeCommand('marginalia.project.close');
  });

  it('renames a category (the Rename command of a category node)', async () => {
    await api.settled();
    const node = api.codesTree.getChildren().find((n) => n.kind === 'category' && n.category.name === 'Social');
    assert.ok(node, 'the category is in the tree');
    const done = (await vscode.commands.executeCommand('marginalia.categories.rename', node, 'Social ties')) as { old_name: string; new_name: string };
    assert.deepEqual([done.old_name, done.new_name], ['Social', 'Social ties']);
    assert.equal((await categories()).find((c) => c.category_id === ids.social)?.name, 'Social ties');
    // the code menu's Rename passes a category node on to the category rename too
    await vscode.commands.executeCommand('marginalia.codes.rename', api.codesTree.categoryNode(ids.social), 'Social bonds');
    assert.equal((await categories()).find((c) => c.category_id === ids.social)?.name, 'Social bonds');
    await vscode.commands.executeCommand('marginalia.categories.rename', ids.social, 'Social ties');
    await api.settled();
    assert.ok(api.codesTree.rows().includes('Social ties / Trust'), api.codesTree.rows().join('\n'));
  });

  it('deletes an empty category', async () => {
    const empty = (await call('create_category', { name: 'Empty for now' })).category_id;
    await api.settled();
    // the second argument answers the confirmation (any location confirms an empty category's deletion)
    const done = (await vscode.commands.executeCommand('marginalia.categories.delete', empty, null)) as { deleted: boolean; codes_moved: number };
    assert.deepEqual([done.deleted, done.codes_moved], [true, 0]);
    assert.equal(await categoryNamed('Empty for now'), undefined);
  });

  it('deletes a non-empty category after choosing where its codes go; no code is deleted', async () => {
    const old = (await call('create_category', { name: 'Old scheme' })).category_id;
    const sub = (await call('create_category', { name: 'Old sub', parent_id: old })).category_id;
    const a = (await call('create_code', { name: 'Neighbours', category_id: old })).code_id;
    const b = (await call('create_code', { name: 'Strangers', category_id: old })).code_id;
    const deep = (await call('create_code', { name: 'Deep code', category_id: sub })).code_id;
    await api.settled();
    const done = (await vscode.commands.executeCommand('marginalia.categories.delete', api.codesTree.categoryNode(old), ids.social)) as {
      codes_moved: number;
      sub_categories_moved: number;
    };
    assert.deepEqual([done.codes_moved, done.sub_categories_moved], [2, 1]);
    const after = await codes();
    const where = (id: number) => after.find((c) => c.code_id === id)?.category_id;
    assert.deepEqual([where(a), where(b), where(deep)], [ids.social, ids.social, sub]);
    assert.equal(await categoryNamed('Old scheme'), undefined);
    assert.equal((await categoryNamed('Old sub'))?.parent_id, ids.social);
    // and to the top level: null answers "Top level"
    await vscode.commands.executeCommand('marginalia.categories.delete', sub, null);
    assert.equal(await categoryNamed('Old sub'), undefined);
    assert.equal((await codes()).find((c) => c.code_id === deep)?.category_id, null);
  });

  it('edits a category memo, read back through list_categories, and clears it', async () => {
    await vscode.commands.executeCommand('marginalia.categories.editMemo', api.codesTree.categoryNode(ids.social), 'Ties between neighbours — who helps whom.');
    assert.equal((await categories()).find((c) => c.category_id === ids.social)?.memo, 'Ties between neighbours — who helps whom.');
    await api.settled();
    assert.equal(api.codesTree.categoryNode(ids.social)?.category.memo, 'Ties between neighbours — who helps whom.', 'the tree shows the new memo');
    await vscode.commands.executeCommand('marginalia.categories.editMemo', ids.social, '');
    assert.equal((await categories()).find((c) => c.category_id === ids.social)?.memo, null);
  });

  it('New Code here lands in the category; New Sub-category nests', async () => {
    const codeId = (await vscode.commands.executeCommand('marginalia.categories.newCode', api.codesTree.categoryNode(ids.social), 'Reciprocity')) as number;
    assert.equal(typeof codeId, 'number');
    assert.equal((await codeNamed('Reciprocity'))?.category_id, ids.social);
    const sub = (await vscode.commands.executeCommand('marginalia.categories.newSubcategory', ids.social, 'Family')) as { category_id: number };
    assert.equal((await categories()).find((c) => c.category_id === sub.category_id)?.parent_id, ids.social);
  });

  it('the title-bar New Code goes where the researcher answers: "Top level" (null) or a category', async () => {
    // the focused category does not decide any more: the answer does
    await api.settled();
    await api.codesTree.reveal(ids.trust);
    await vscode.commands.executeCommand('marginalia.codes.create', 'Loneliness', null);
    assert.equal((await codeNamed('Loneliness'))?.category_id, null);
    await vscode.commands.executeCommand('marginalia.codes.create', 'Gossip', ids.social);
    assert.equal((await codeNamed('Gossip'))?.category_id, ids.social);
    // New Category from the title bar is a top-level category
    await vscode.commands.executeCommand('marginalia.codes.createCategory', 'Places');
    assert.equal((await categoryNamed('Places'))?.parent_id, null);
  });

  it('the filter shows only matching codes and their categories, in the view description; Clear Filter restores all', async () => {
    await api.settled();
    const all = api.codesTree.rows();
    assert.ok(
      all.includes('Weather') && all.includes('Social ties / Trust'),
      `${all.join('\n')}\n${JSON.stringify(api.codesTree.allCodes.map((c) => [c.name, c.category_id]))}`,
    );
    const shown = await vscode.commands.executeCommand('marginalia.codes.filter', 'TRUS');
    assert.equal(shown, 'TRUS');
    assert.deepEqual(api.codesTree.rows(), ['Social ties', 'Social ties / Trust']);
    assert.equal(api.codesTree.view.description, 'Filter: TRUS');
    // accents and case do not matter; a category name matches its codes
    await vscode.commands.executeCommand('marginalia.codes.filter', 'wéather');
    assert.deepEqual(api.codesTree.rows(), ['Weather']);
    await vscode.commands.executeCommand('marginalia.codes.filter', 'social');
    assert.ok(api.codesTree.rows().includes('Social ties / Gossip') && !api.codesTree.rows().includes('Weather'), api.codesTree.rows().join('\n'));
    await vscode.commands.executeCommand('marginalia.codes.clearFilter');
    assert.equal(api.codesTree.view.description, undefined);
    assert.ok(api.codesTree.rows().includes('Weather'));
  });

  it('Go to Code reveals and selects the code, fuzzy by name, clearing a filter that hides it', async () => {
    await vscode.commands.executeCommand('marginalia.codes.filter', 'Trust');
    const revealed = await vscode.commands.executeCommand('marginalia.codes.goto', 'wthr');
    const weather = await codeNamed('Weather');
    assert.equal(revealed, weather?.code_id);
    await until('Weather selected in the Codes view', () => selectedCode() === 'Weather');
    assert.equal(api.codesTree.filter, undefined, 'the filter that hid it is cleared');
    assert.ok(api.codesTree.view.visible, 'the Codes view is shown');
    // by category path too
    await vscode.commands.executeCommand('marginalia.codes.goto', 'social ties / recip');
    await until('Reciprocity selected', () => selectedCode() === 'Reciprocity');
  });

  it("a codebook-health problem is on the code's card, never on the .qda; opening it (a click) reveals the code", async () => {
    const loneliness = (await codeNamed('Loneliness'))!;
    const [uri, list] = await until('the "no memo" problem of Loneliness', () =>
      vscode.languages
        .getDiagnostics()
        .find(([u, ds]) => u.scheme === 'marginalia-codebook' && ds.some((d) => d.code === 'code_without_memo' && d.message.includes('"Loneliness"'))),
    );
    assert.ok(list.every((d) => d.source === 'marginalia-codebook'));
    assert.equal(path.posix.basename(uri.path), 'Loneliness', 'the Problems panel names the code');
    assert.deepEqual(vscode.languages.getDiagnostics(vscode.Uri.file(file('codebook.qda'))), [], 'nothing on the binary project file');
    await vscode.commands.executeCommand('marginalia.codes.goto', 'Weather');
    await until('Weather selected', () => selectedCode() === 'Weather');
    // what the Problems panel does on a click: open the resource at the problem's range
    await vscode.commands.executeCommand('vscode.open', uri, { selection: list[0]!.range, preview: true });
    await until('Loneliness selected in the Codes view', () => selectedCode() === 'Loneliness');
    const card = vscode.window.activeTextEditor?.document;
    assert.equal(card?.uri.toString(), uri.toString());
    assert.ok(card!.getText().startsWith('Loneliness\n'), card!.getText());
    assert.match(card!.getText(), /• Code "Loneliness" has no memo/);
    // the quick fixes: write the memo, reveal the code
    const actions = (await vscode.commands.executeCommand('vscode.executeCodeActionProvider', uri, list[0]!.range)) as vscode.CodeAction[];
    const titles = actions.map((a) => a.title);
    assert.ok(titles.includes('Reveal "Loneliness" in the Codes view'), titles.join('\n'));
    assert.ok(titles.includes('Write a memo for "Loneliness"…'), titles.join('\n'));
    await vscode.commands.executeCommand('marginalia.codes.goto', 'Trust');
    await until('Trust selected', () => selectedCode() === 'Trust');
    const reveal = actions.find((a) => a.title.startsWith('Reveal'))!;
    await vscode.commands.executeCommand(reveal.command!.command, ...(reveal.command!.arguments ?? []));
    await until('Loneliness selected again', () => selectedCode() === 'Loneliness');
    // fixing the problem updates the card
    await call('update_code_memo', { code_id: loneliness.code_id, memo: 'being alone' });
    await until('the card without the problem', () => card!.getText().includes('being alone') && !card!.getText().includes('has no memo'));
  });

  it("the walkthrough's import step completes only once a source is imported (marginalia.hasSources)", async () => {
    const pkg = vscode.extensions.getExtension(EXTENSION_ID)!.packageJSON;
    const step = pkg.contributes.walkthroughs[0].steps.find((s: { id: string }) => s.id === 'import');
    assert.deepEqual(step.completionEvents, ['onContext:marginalia.hasSources']);
    assert.equal(api.hasSources.hasSources, false, 'a project without sources');
    // the import dialog cancelled: nothing imported, still false
    assert.deepEqual(await vscode.commands.executeCommand('marginalia.sources.import', []), []);
    assert.equal(api.hasSources.hasSources, false);
    fs.writeFileSync(file('codebook-interview.txt'), INTERVIEW);
    const imported = (await vscode.commands.executeCommand('marginalia.sources.import', [vscode.Uri.file(file('codebook-interview.txt'))])) as number[];
    ids.source = imported[0]!;
    await until('marginalia.hasSources', () => api.hasSources.hasSources);
  });

  it('Ctrl+Alt+L (Code Selection with Last Code) says in the status bar which code it applied, and where', async () => {
    const doc = await vscode.workspace.openTextDocument(file('codebook-interview.txt'));
    const editor = await vscode.window.showTextDocument(doc);
    const text = doc.getText();
    const select = (words: string) => {
      const at = text.indexOf(words);
      editor.selection = new vscode.Selection(doc.positionAt(at), doc.positionAt(at + words.length));
    };
    select('We meet at the garden');
    await vscode.commands.executeCommand('marginalia.coding.codeSelection', { codeId: ids.trust });
    select('people actually talk');
    const before = Date.now();
    const seg = (await vscode.commands.executeCommand('marginalia.coding.codeSelectionWithLastCode')) as { code_id: number } | undefined;
    assert.equal(seg?.code_id, ids.trust);
    const shown = api.lastStatusFeedback();
    assert.ok(shown && shown.at >= before, 'a status bar message was shown');
    assert.ok(shown.text.includes("Coded with 'Trust' in codebook-interview"), shown.text);
  });

  it('supervision lives in its own container, whose approvals badge counts a pending agent request', async () => {
    const pkg = vscode.extensions.getExtension(EXTENSION_ID)!.packageJSON;
    const containers = pkg.contributes.viewsContainers.activitybar.map((c: { id: string }) => c.id);
    assert.deepEqual(containers, ['marginalia', 'marginalia-supervision']);
    const ids_ = (c: string) => pkg.contributes.views[c].map((v: { id: string }) => v.id);
    assert.deepEqual(ids_('marginalia-supervision'), [
      'marginalia.approvals',
      'marginalia.agents',
      'marginalia.activity',
      'marginalia.history',
      'marginalia.mergeConflicts',
    ]);
    assert.ok(ids_('marginalia').slice(0, 3).join() === 'marginalia.codes,marginalia.sources,marginalia.cases', ids_('marginalia').join());
    const codesView = pkg.contributes.views.marginalia[0];
    assert.ok(
      codesView.initialSize > Math.max(...pkg.contributes.views.marginalia.slice(1).map((v: { initialSize?: number }) => v.initialSize ?? 1)),
      'the Codes view gets the most room',
    );
    const all = new Set(await vscode.commands.getCommands(true));
    assert.ok(all.has('workbench.view.extension.marginalia-supervision'), 'VS Code made the container');
    await vscode.commands.executeCommand('workbench.view.extension.marginalia-supervision');

    assert.equal(api.approvals.view.badge, undefined, 'no request yet');
    const agent = api.agent.implicitCaller(`Bearer ${api.tokens.agent}`, 'codebook-test-agent', 'CUSTOM');
    const out = await api.workbench.pipeline.invoke('rename_code', { code_id: ids.trust, new_name: 'Mutual trust' }, agent);
    assert.equal(out.status, 'pending', 'rename_code waits for approval (trust level suggest)');
    await api.settled();
    const badge = await until('the approvals badge', () => api.approvals.view.badge);
    assert.equal(badge.value, 1);
    assert.equal(badge.tooltip, '1 agent request waits for your approval');
    const pending = api.approvals.pending();
    assert.equal(pending.length, 1);
    assert.ok(await api.approvals.reject(pending[0]!.request_id, 'not now'));
    await until('the badge to go', () => api.approvals.view.badge === undefined || undefined);
    assert.equal((await codes()).find((c) => c.code_id === ids.trust)?.name, 'Trust', 'the request did not run');
  });

  it('refreshAndWait times a refresh of the Codes tree (the bench uses it)', async () => {
    await vscode.commands.executeCommand('marginalia.codes.focus');
    const timing = await api.codesTree.refreshAndWait();
    const expected = (await codes()).length + (await categories()).length;
    assert.ok(timing.ms >= 0);
    assert.equal(
      timing.rows >= expected,
      true,
      `${timing.rows} rows for ${expected} codes and categories (${timing.drawnByView ? 'drawn by the view' : 'walked'})`,
    );
    assert.equal(timing.complete, true);
  });

  it('another project starts with the Codes filter cleared', async () => {
    await vscode.commands.executeCommand('marginalia.codes.filter', 'Trust');
    assert.equal(api.codesTree.view.description, 'Filter: Trust');
    await vscode.commands.executeCommand('marginalia.project.new', file('codebook-second.qda'));
    await until('the filter to clear', () => api.codesTree.filter === undefined);
    assert.equal(api.codesTree.view.description, undefined);
    assert.deepEqual(api.codesTree.rows(), []);
  });
});
