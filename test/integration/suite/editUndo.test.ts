// Runs in the REAL VS Code extension host (test/integration/run.mjs): VS Code's own undo of a text edit puts
// back the codings the edit took away (issue 13, item 1). The researcher types over the end of one coded
// passage (its coding is cut at the edge) and deletes another coded passage (its coding goes); Ctrl+Z brings
// the text back byte for byte AND the codings exactly as they were (code, positions, text, memo, importance,
// coder); redo takes them away again as after the edit. Expected texts and segment lists are the ones read
// before each step (never computed by the code under test).
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { Segment } from '../../../src/domain/model';
import type { MarginaliaApi } from '../../../src/extension';
import type { UndoStep } from '../../../src/ui/undo/undoCommands';
import { openInterview, until } from './support';

const EXTENSION_ID = 'marginalia.marginalia';

const INTERVIEW = [
  'INTERVIEWER: What changed for your household this year?',
  'Participant 7: We went to the workshops - were they useful? Yes. The food bank ran out twice in March, so we grow beans now.',
  'Participant 7: Zoë says the garden feeds three families on our street.',
  '',
].join('\n');

describe('Undo of a text edit puts back its codings', function () {
  this.timeout(120_000);
  let api: MarginaliaApi;
  const ws = () => vscode.workspace.workspaceFolders![0]!.uri.fsPath;
  const file = (name: string) => path.join(ws(), name);
  let sourceId = 0;
  let foodSecurity = 0;
  let gardening = 0;
  let editor: vscode.TextEditor;

  /** The source's segments as the store has them, without what a coding made again cannot keep (its id and creation time). */
  const segments = () =>
    api.workbench
      .repo()!
      .listSegmentsForSource(sourceId)
      .map(({ segment_id: _id, created_at: _at, ...rest }: Segment) => rest)
      .sort((a, b) => a.start_pos - b.start_pos || a.code_id - b.code_id);
  const rangeOf = (phrase: string) => {
    const doc = editor.document;
    const at = doc.getText().indexOf(phrase);
    assert.ok(at >= 0, phrase);
    return new vscode.Range(doc.positionAt(at), doc.positionAt(at + phrase.length));
  };
  const select = (phrase: string) => {
    const r = rangeOf(phrase);
    editor.selection = new vscode.Selection(r.start, r.end);
  };
  const code = async (phrase: string, codeId: number) => {
    select(phrase);
    await vscode.commands.executeCommand('marginalia.coding.codeSelection', { codeId });
  };
  /** Waits until the store holds the editor's text and every edit and coding that follows it is stored. */
  const stored = async () => {
    await api.editTracker.flush();
    await until('the stored text to equal the editor', () => api.workbench.repo()!.getSourceText(sourceId) === editor.document.getText());
    await api.editTracker.flush();
  };

  before(async () => {
    api = await vscode.extensions.getExtension<MarginaliaApi>(EXTENSION_ID)!.activate();
    const opened = await openInterview(api, {
      project: 'edit-undo.qda',
      sourceFile: 'interview-07.txt',
      text: INTERVIEW,
      codes: ['Food security', 'Gardening'],
    });
    ({ sourceId, editor } = opened);
    foodSecurity = opened.codeIds['Food security']!;
    gardening = opened.codeIds.Gardening!;
  });

  after(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await vscode.commands.executeCommand('marginalia.project.close');
  });

  it('VS Code undo (the `undo` command) restores the text and the codings the edit cut or removed; redo removes them again', async () => {
    await code('We went to the workshops - were they useful?', gardening);
    await code('The food bank ran out twice in March', foodSecurity);
    await code('The food bank ran out twice in March', gardening);
    await code('Zoë says the garden feeds three families', gardening);
    // a memo and an importance on the coding that will be deleted: both must come back
    const food = api.workbench
      .repo()!
      .listSegmentsForSource(sourceId)
      .find((s) => s.code_id === foodSecurity)!;
    const memo = await api.workbench.pipeline.invoke('update_segment_memo', { segment_id: food.segment_id, memo: 'ran out: March' }, api.workbench.caller());
    assert.ok(memo.envelope.success, JSON.stringify(memo.envelope));
    await api.settled();
    const textBefore = editor.document.getText();
    const before = segments();
    assert.equal(before.length, 4);

    // one edit (one undo step): type over the end of the first coded passage, delete the second coded passage
    const overEnd = rangeOf('useful? Yes.');
    const deleted = rangeOf('The food bank ran out twice in March, ');
    assert.ok(
      await editor.edit((b) => {
        b.replace(overEnd, 'helpful. Yes.');
        b.delete(deleted);
      }),
    );
    await stored();
    const textAfter = editor.document.getText();
    const after = segments();
    assert.equal(after.length, 2, `the two codings of the deleted passage went: ${JSON.stringify(after)}`);
    assert.ok(
      after.some((s) => s.code_id === gardening && s.text === 'We went to the workshops - were they '),
      `the first coding was cut at its end: ${JSON.stringify(after)}`,
    );

    await vscode.commands.executeCommand('undo');
    assert.equal(editor.document.getText(), textBefore, 'the text is back byte for byte');
    await stored();
    assert.equal(api.workbench.repo()!.getSourceText(sourceId), textBefore);
    assert.deepEqual(segments(), before, 'the codings are back: same code, positions, text, memo, importance, coder');

    await vscode.commands.executeCommand('redo');
    assert.equal(editor.document.getText(), textAfter);
    await stored();
    assert.deepEqual(segments(), after, 'redo takes them away again as after the edit');

    // and undo once more (the restore is repeatable)
    await vscode.commands.executeCommand('undo');
    await stored();
    assert.equal(editor.document.getText(), textBefore);
    assert.deepEqual(segments(), before);
    await api.settled();
    assert.equal((api.decorations.drawnIn(editor).get(foodSecurity) ?? []).length, 1, 'the Food security decoration is back');
  });

  it('Ctrl+Z (Marginalia: Undo) follows the order: the typing with its codings first, then the coding made before it; redo in reverse', async () => {
    const textStart = editor.document.getText();
    const start = segments();
    await code('so we grow beans now', foodSecurity);
    const coded = segments();
    assert.equal(coded.length, start.length + 1);
    // the researcher types over the start of an earlier coded passage and deletes the coded sentence about the garden
    select('7: We went');
    await vscode.commands.executeCommand('type', { text: '7 - we went' });
    assert.ok(await editor.edit((b) => b.delete(rangeOf('Zoë says the garden feeds three families'))));
    await stored();
    const textEdited = editor.document.getText();
    const edited = segments();
    assert.ok(!edited.some((s) => s.text.startsWith('Zoë')), 'the garden coding went with its text');
    assert.ok(
      edited.some((s) => s.text === ' to the workshops - were they useful?'),
      `the workshops coding was cut at its start: ${JSON.stringify(edited)}`,
    );

    const undo = async () => (await vscode.commands.executeCommand('marginalia.undo')) as UndoStep;
    const redo = async () => (await vscode.commands.executeCommand('marginalia.redo')) as UndoStep;
    // the text edits go first (VS Code's own undo, as many steps as it keeps), with the codings they took
    for (let i = 0; i < 6 && editor.document.getText() !== textStart; i++) {
      const step = await undo();
      assert.equal(step.by, 'editor', `step ${i}: ${JSON.stringify(step)}`);
    }
    await stored();
    assert.equal(editor.document.getText(), textStart, 'the text before the typing');
    assert.deepEqual(segments(), coded, 'the codings as right after the coding');
    // then the coding made before the typing
    const last = await undo();
    assert.equal(last.by, 'marginalia', JSON.stringify(last));
    assert.deepEqual(segments(), start);
    assert.equal(editor.document.getText(), textStart);

    // redo: the coding, then the edits with their codings
    assert.equal((await redo()).by, 'marginalia');
    assert.deepEqual(segments(), coded);
    for (let i = 0; i < 6 && editor.document.getText() !== textEdited; i++) assert.equal((await redo()).by, 'editor');
    await stored();
    assert.equal(editor.document.getText(), textEdited);
    assert.deepEqual(segments(), edited, 'as after the edit');
  });

  it('Marginalia: Undo from another editor: the source beside it gets its text and codings back; redo likewise', async () => {
    const textBefore = editor.document.getText();
    const before = segments();
    assert.ok(await editor.edit((b) => b.delete(rangeOf('The food bank ran out twice in March, '))));
    await stored();
    const textAfter = editor.document.getText();
    const after = segments();
    assert.equal(after.length, before.length - 2, 'both codings of the food bank sentence went');
    fs.writeFileSync(file('notes.txt'), 'my own notes\n');
    const notes = await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(file('notes.txt')), {
      viewColumn: vscode.ViewColumn.Beside,
      preview: false,
    });
    assert.equal(vscode.window.activeTextEditor?.document, notes.document, 'the focus is in the notes');

    const step = (await vscode.commands.executeCommand('marginalia.undo')) as UndoStep;
    assert.equal(step.by, 'editor', JSON.stringify(step));
    assert.equal(editor.document.getText(), textBefore);
    assert.deepEqual(segments(), before, 'the codings are back');
    assert.equal(notes.document.getText(), 'my own notes\n');

    const again = (await vscode.commands.executeCommand('marginalia.redo')) as UndoStep;
    assert.equal(again.by, 'editor', JSON.stringify(again));
    assert.equal(editor.document.getText(), textAfter);
    assert.deepEqual(segments(), after);
  });
});
