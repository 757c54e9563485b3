// Runs in the REAL VS Code extension host (test/integration/run.mjs): Marginalia: Undo / Redo (issue 13,
// item 1). In a source editor, marginalia.undo (Ctrl+Z) follows the order in which the researcher acted: a
// coding made after typing is undone first and the text is not touched; the next undo takes back the typing
// with VS Code's own undo. This is the bug: Ctrl+Z after coding undid an earlier edit inside
// another coded passage ("the workshops - were" became "the - were") and left the coding. Redo puts back
// what was undone, last undone first. The status bar says what was undone. Expected texts and segment
// lists are the ones read before each step (never computed by the code under test).
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { Segment } from '../../../src/domain/model';
import type { MarginaliaApi } from '../../../src/extension';
import type { UndoStep } from '../../../src/ui/undo/undoCommands';
import { openInterview } from './support';

const EXTENSION_ID = 'marginalia.marginalia';

const INTERVIEW = [
  'INTERVIEWER: What changed for your household this year?',
  'Participant 4: We went to the workshops - were they useful? Yes. The food bank ran out twice in March, so we grow beans now.',
  'Participant 4: Zoë says the garden feeds three families on our street.',
  '',
].join('\n');

describe('Undo in VS Code', function () {
  this.timeout(90_000);
  let api: MarginaliaApi;
  const ws = () => vscode.workspace.workspaceFolders![0]!.uri.fsPath;
  const file = (name: string) => path.join(ws(), name);
  let sourceId = 0;
  let sourceName = '';
  let foodSecurity = 0;
  let gardening = 0;
  let editor: vscode.TextEditor;

  /** Every segment of the project, ordered, as the store has it. */
  const segments = (): Segment[] => {
    const repo = api.workbench.repo()!;
    return repo
      .listSources()
      .flatMap((s) => repo.listSegmentsForSource(s.source_id))
      .sort((a, b) => a.segment_id - b.segment_id);
  };
  /** A segment list without ids and creation times (what redo cannot keep: it makes the segment again). */
  const content = (list: Segment[]) =>
    list.map(({ segment_id: _id, created_at: _at, ...rest }) => rest).sort((a, b) => a.start_pos - b.start_pos || a.code_id - b.code_id);
  const select = (phrase: string) => {
    const doc = editor.document;
    const at = doc.getText().indexOf(phrase);
    assert.ok(at >= 0, phrase);
    editor.selection = new vscode.Selection(doc.positionAt(at), doc.positionAt(at + phrase.length));
  };
  const undo = async () => (await vscode.commands.executeCommand('marginalia.undo')) as UndoStep;
  const redo = async () => (await vscode.commands.executeCommand('marginalia.redo')) as UndoStep;

  before(async () => {
    api = await vscode.extensions.getExtension<MarginaliaApi>(EXTENSION_ID)!.activate();
    const opened = await openInterview(api, { project: 'undo.qda', sourceFile: 'interview-04.txt', text: INTERVIEW, codes: ['Food security', 'Gardening'] });
    ({ sourceId, editor } = opened);
    sourceName = api.workbench.repo()!.getSource(sourceId)!.name;
    foodSecurity = opened.codeIds['Food security']!;
    gardening = opened.codeIds.Gardening!;
    // an earlier coding: the passage the researcher will type in
    select('We went to the workshops - were they useful?');
    await vscode.commands.executeCommand('marginalia.coding.codeSelection', { codeId: gardening });
    await api.settled();
  });

  after(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await vscode.commands.executeCommand('marginalia.project.close');
  });

  it('undoes a coding made in the editor without touching the text; redo codes the passage again; the status bar says what was undone', async () => {
    const textBefore = editor.document.getText();
    const before = segments();
    select('The food bank ran out twice in March');
    await vscode.commands.executeCommand('marginalia.coding.codeSelection', { codeId: foodSecurity });
    const coded = segments();
    assert.equal(coded.length, before.length + 1, 'the coding was made');

    const step = await undo();
    assert.equal(step.by, 'marginalia', JSON.stringify(step));
    assert.deepEqual(segments(), before, 'exactly the segments before the coding');
    assert.equal(editor.document.getText(), textBefore, 'the text is unchanged');
    assert.equal(api.workbench.repo()!.getSourceText(sourceId), textBefore, 'the stored text too');
    assert.equal(api.statusBar.notice, `Undid: coded 'Food security' in ${sourceName}`);
    await api.settled();
    assert.deepEqual(api.decorations.drawnIn(editor).get(foodSecurity) ?? [], [], 'the decoration went with the coding');
    assert.equal(api.codesTree.allCodes.find((c) => c.code_id === foodSecurity)?.segment_count, 0, 'the Codes tree counts no coding');

    const again = await redo();
    assert.equal(again.by, 'marginalia', JSON.stringify(again));
    assert.deepEqual(content(segments()), content(coded), 'the same coding again (same code, positions, text, owner, memo)');
    assert.equal(editor.document.getText(), textBefore);
    assert.equal(api.statusBar.notice, `Redid: coded 'Food security' in ${sourceName}`);
    await api.settled();
    // the decorations follow: the passage carries Food security again
    const drawn = api.decorations.drawnIn(editor).get(foodSecurity) ?? [];
    assert.equal(drawn.length, 1, 'one Food security decoration after redo');
    assert.equal(api.codesTree.allCodes.find((c) => c.code_id === foodSecurity)?.segment_count, 1);
  });

  it('type inside a coded passage, then code: Ctrl+Z undoes only the coding; a second Ctrl+Z undoes the typing; redo puts them back in order', async () => {
    // start from a clean editor undo order: remove the Food security coding of the previous test
    assert.equal((await undo()).by, 'marginalia');
    const original = editor.document.getText();
    const segmentsOriginal = segments();

    // the researcher types inside the coded passage "We went to the workshops - were they useful?"
    const at = original.indexOf('workshops - were');
    await editor.edit((b) => b.insert(editor.document.positionAt(at + 'workshops'.length), ' on composting'));
    const typed = editor.document.getText();
    assert.notEqual(typed, original);
    await api.editTracker.flush();
    const segmentsTyped = segments();
    assert.ok(
      segmentsTyped.some((s) => s.text === 'We went to the workshops on composting - were they useful?'),
      'the coding grew with the typing',
    );

    // ... then codes another passage
    select('we grow beans now');
    await vscode.commands.executeCommand('marginalia.coding.codeSelection', { codeId: foodSecurity });
    const segmentsCoded = segments();
    assert.equal(segmentsCoded.length, segmentsTyped.length + 1);

    // Ctrl+Z: the coding goes, the text stays byte for byte
    const first = await undo();
    assert.equal(first.by, 'marginalia', JSON.stringify(first));
    assert.deepEqual(segments(), segmentsTyped);
    assert.equal(editor.document.getText(), typed, 'the typing is still there');
    assert.equal(api.statusBar.notice, `Undid: coded 'Food security' in ${sourceName}`);

    // Ctrl+Z again: now the typing goes (VS Code's own undo); the coding it grew shrinks back
    const second = await undo();
    assert.equal(second.by, 'editor', JSON.stringify(second));
    assert.equal(editor.document.getText(), original, 'the text before the typing, byte for byte');
    await api.editTracker.flush();
    assert.equal(api.workbench.repo()!.getSourceText(sourceId), original);
    assert.deepEqual(segments(), segmentsOriginal, 'exactly the segments before the typing');

    // redo, last undone first: the typing, then the coding
    const r1 = await redo();
    assert.equal(r1.by, 'editor', JSON.stringify(r1));
    assert.equal(editor.document.getText(), typed);
    await api.editTracker.flush();
    assert.deepEqual(segments(), segmentsTyped);
    const r2 = await redo();
    assert.equal(r2.by, 'marginalia', JSON.stringify(r2));
    assert.equal(editor.document.getText(), typed);
    assert.deepEqual(content(segments()), content(segmentsCoded));
    assert.equal(api.statusBar.notice, `Redid: coded 'Food security' in ${sourceName}`);
  });

  it('outside a source editor, Marginalia: Undo undoes the last Marginalia action and leaves the open file alone', async () => {
    fs.writeFileSync(file('notes.txt'), 'my own notes\n');
    const notes = await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(file('notes.txt')), { preview: false });
    await notes.edit((b) => b.insert(new vscode.Position(0, 0), 'typed: '));
    const notesText = notes.document.getText();
    const renamed = await api.workbench.pipeline.invoke('rename_code', { code_id: gardening, new_name: 'Growing food' }, api.workbench.caller());
    assert.ok(renamed.envelope.success, JSON.stringify(renamed.envelope));
    const step = await undo();
    assert.equal(step.by, 'marginalia', JSON.stringify(step));
    assert.equal(api.workbench.repo()!.getCode(gardening)?.name, 'Gardening');
    assert.equal(notes.document.getText(), notesText, 'the notes keep the typing');
    assert.match(api.statusBar.notice ?? '', /^Undid: renamed/);
    // a new action clears redo: nothing to redo is a quiet message, not an error
    const memo = await api.workbench.pipeline.invoke('update_code_memo', { code_id: gardening, memo: 'Beans, tomatoes' }, api.workbench.caller());
    assert.ok(memo.envelope.success);
    assert.deepEqual(await redo(), { by: 'none' });
    assert.equal(api.statusBar.notice, 'Nothing to redo');
  });
});
