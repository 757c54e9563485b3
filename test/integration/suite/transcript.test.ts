// Runs in the REAL VS Code extension host (test/integration/run.mjs): transcripts read as prose. A source
// imported from the workspace and opened from the Sources view is in the transcript language, with word wrap
// on, no minimap and no line numbers (package.json configurationDefaults); so is an imported source opened
// from the Explorer and a source kept only in the project (qda:). Other .txt files stay plain text. The
// marginalia.transcript.* settings reach the editor.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { MarginaliaApi } from '../../../src/extension';
import { until as waitUntil } from './support';

const EXTENSION_ID = 'marginalia.marginalia';
const LANGUAGE = 'marginalia-transcript';

/** {@link waitUntil} with this suite's default wait of 10_000 ms. */
const until = <T>(what: string, probe: () => T | undefined | false | Promise<T | undefined | false>, ms = 10_000): Promise<T> => waitUntil(what, probe, ms);

const TRANSCRIPT = [
  '[00:00:04] INTERVIEWER: How did you first get involved with the community garden, and what did you expect from it before you went along that first Saturday morning?',
  'Participant A: My neighbour Zoë asked me to help with the raised beds one Saturday in spring. I stayed because it felt like the one place on our street where people actually talk to each other, and the tomatoes did not hurt either.',
  '[id2] (00:41) Honestly, knowing someone will notice if I do not show up.',
  '',
].join('\n');

describe('Transcripts in VS Code', function () {
  this.timeout(90_000);
  let api: MarginaliaApi;
  const ws = () => vscode.workspace.workspaceFolders![0]!.uri.fsPath;
  const file = (name: string) => path.join(ws(), name);
  const ids = { interview: 0, explorer: 0, stored: 0 };
  let transcriptDoc: vscode.TextDocument;

  before(async () => {
    const ext = vscode.extensions.getExtension<MarginaliaApi>(EXTENSION_ID);
    assert.ok(ext);
    api = await ext.activate();
    await vscode.commands.executeCommand('marginalia.project.new', file('transcripts.qda'));
    fs.writeFileSync(file('garden-interview.txt'), TRANSCRIPT);
    fs.writeFileSync(file('opened-from-explorer.txt'), 'LCC: Lift-off.\nP: Roger.\n');
    fs.writeFileSync(file('notes-not-a-source.txt'), 'A to-do list, not a transcript.\n');
    const imported = (await vscode.commands.executeCommand('marginalia.sources.import', [
      vscode.Uri.file(file('garden-interview.txt')),
      vscode.Uri.file(file('opened-from-explorer.txt')),
    ])) as number[];
    assert.equal(imported.length, 2);
    [ids.interview, ids.explorer] = imported as [number, number];
    const stored = await api.workbench.pipeline.invoke('import_text', { name: 'phone call', content: 'Sara Mannheimer: Hello?\n' }, api.workbench.caller());
    assert.ok(stored.envelope.success);
    ids.stored = (stored.envelope.data as { source_id: number }).source_id;
    await api.settled();
  });

  after(async () => {
    const cfg = vscode.workspace.getConfiguration('marginalia.transcript');
    await cfg.update('lineNumbers', undefined, vscode.ConfigurationTarget.Global);
    await cfg.update('fontFamily', undefined, vscode.ConfigurationTarget.Global);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await vscode.commands.executeCommand('marginalia.project.close');
  });

  it('Open Source opens an imported transcript in the transcript language: word wrap on, no minimap, no line numbers', async () => {
    const editor = (await vscode.commands.executeCommand('marginalia.sources.open', ids.interview)) as vscode.TextEditor;
    assert.ok(editor);
    transcriptDoc = editor.document;
    assert.equal(transcriptDoc.uri.fsPath, file('garden-interview.txt'), 'the workspace file itself, so edits move the codings');
    assert.equal(transcriptDoc.languageId, LANGUAGE);
    assert.equal(transcriptDoc.getText(), TRANSCRIPT, 'the text is unchanged');
    const editorCfg = vscode.workspace.getConfiguration('editor', transcriptDoc);
    // wrapped at the window or at 80 columns, whichever is narrower: long turns never run off screen, and the
    // coding labels at line ends (src/ui/decorations) have room to the right of a full line
    assert.equal(editorCfg.get('wordWrap'), 'bounded');
    assert.equal(editorCfg.get('wordWrapColumn'), 80);
    assert.equal(editorCfg.get('wrappingStrategy'), 'advanced', 'the browser wraps, right for a proportional font');
    assert.equal(editorCfg.get('minimap.enabled'), false);
    assert.equal(editorCfg.get('lineNumbers'), 'off');
    assert.equal(editorCfg.get('wordBasedSuggestions'), 'off');
    assert.equal(editorCfg.get('occurrencesHighlight'), 'off');
    // the editor on screen took them: no line numbers
    assert.equal(vscode.window.activeTextEditor?.document, transcriptDoc);
    assert.equal(vscode.window.activeTextEditor?.options.lineNumbers, vscode.TextEditorLineNumbersStyle.Off);
  });

  it('a .txt file that is not a source stays plain text, with the editor defaults', async () => {
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(file('notes-not-a-source.txt')));
    await vscode.window.showTextDocument(doc, { preview: false });
    assert.equal(doc.languageId, 'plaintext');
    assert.equal(vscode.workspace.getConfiguration('editor', doc).get('wordWrap'), 'off');
    assert.equal(vscode.workspace.getConfiguration('editor', doc).get('minimap.enabled'), true);
  });

  it('an imported source opened from the Explorer becomes a transcript; one switched back to plain text stays so', async () => {
    await vscode.commands.executeCommand('vscode.open', vscode.Uri.file(file('opened-from-explorer.txt')));
    const doc = await until('the Explorer-opened source', () => vscode.workspace.textDocuments.find((d) => d.uri.fsPath === file('opened-from-explorer.txt')));
    await until('the transcript language', () => doc.languageId === LANGUAGE);
    assert.equal(vscode.workspace.getConfiguration('editor', doc).get('wordWrap'), 'bounded');
    // the researcher chooses plain text from the status bar: Marginalia does not switch it back
    await vscode.languages.setTextDocumentLanguage(doc, 'plaintext');
    await new Promise((r) => setTimeout(r, 1000));
    assert.equal(doc.languageId, 'plaintext');
  });

  it('a source kept only in the project (qda:) opens as a transcript too', async () => {
    const editor = (await vscode.commands.executeCommand('marginalia.sources.open', ids.stored)) as vscode.TextEditor;
    assert.equal(editor.document.uri.scheme, 'qda');
    assert.equal(editor.document.languageId, LANGUAGE);
    assert.equal(vscode.workspace.getConfiguration('editor', editor.document).get('wordWrap'), 'bounded');
  });

  it('marginalia.transcript.lineNumbers and .fontFamily reach the transcript editor, and clearing them restores the defaults', async () => {
    const cfg = vscode.workspace.getConfiguration('marginalia.transcript');
    const lang = () => vscode.workspace.getConfiguration('editor', { languageId: LANGUAGE });
    await cfg.update('lineNumbers', 'on', vscode.ConfigurationTarget.Global);
    await cfg.update('fontFamily', "Georgia, 'Noto Serif', serif", vscode.ConfigurationTarget.Global);
    await until('line numbers on for transcripts', () => lang().get('lineNumbers') === 'on');
    await until('the transcript font', () => vscode.workspace.getConfiguration('editor', transcriptDoc).get('fontFamily') === "Georgia, 'Noto Serif', serif");
    const editor = await vscode.window.showTextDocument(transcriptDoc, { preview: false });
    await until('the editor showing line numbers', () => editor.options.lineNumbers === vscode.TextEditorLineNumbersStyle.On);
    // other languages keep the editor font
    assert.notEqual(vscode.workspace.getConfiguration('editor', { languageId: 'plaintext' }).get('fontFamily'), "Georgia, 'Noto Serif', serif");

    await cfg.update('lineNumbers', 'off', vscode.ConfigurationTarget.Global);
    await cfg.update('fontFamily', '', vscode.ConfigurationTarget.Global);
    await until('line numbers off again', () => lang().get('lineNumbers') === 'off');
    await until('the editor font again', () => lang().inspect('fontFamily')?.globalLanguageValue === undefined);
    assert.equal(lang().get('fontFamily'), vscode.workspace.getConfiguration('editor').get('fontFamily'));

    // set in the workspace settings: the override goes there too, not into the user settings
    await cfg.update('fontFamily', 'DejaVu Serif', vscode.ConfigurationTarget.Workspace);
    await until('the workspace font', () => lang().inspect('fontFamily')?.workspaceLanguageValue === 'DejaVu Serif');
    assert.equal(lang().inspect('fontFamily')?.globalLanguageValue, undefined);
    await cfg.update('fontFamily', undefined, vscode.ConfigurationTarget.Workspace);
    await until('no workspace font', () => lang().inspect('fontFamily')?.workspaceLanguageValue === undefined);
  });
});
