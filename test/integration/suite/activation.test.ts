// Runs in the REAL VS Code extension host (test/integration/run.mjs).
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import * as vscode from 'vscode';

const EXTENSION_ID = 'marginalia.marginalia';
const PROJECT_COMMANDS = ['marginalia.project.new', 'marginalia.project.open', 'marginalia.project.close'];

describe('activation', () => {
  it('opens the fixture workspace with its two transcripts', async () => {
    const folders = vscode.workspace.workspaceFolders ?? [];
    assert.equal(folders.length, 1, 'exactly one workspace folder');
    const txt = await vscode.workspace.findFiles('*.txt');
    assert.deepEqual(txt.map((u) => path.basename(u.fsPath)).sort(), ['interview-a.txt', 'interview-b.txt']);
  });

  it(`finds the extension ${EXTENSION_ID}`, () => {
    assert.ok(vscode.extensions.getExtension(EXTENSION_ID), `${EXTENSION_ID} is not loaded`);
  });

  it('activates it', async () => {
    const ext = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(ext, `${EXTENSION_ID} is not loaded`);
    await ext.activate();
    assert.equal(ext.isActive, true);
  });

  it('registers the project commands', async () => {
    await vscode.extensions.getExtension(EXTENSION_ID)?.activate();
    const all = new Set(await vscode.commands.getCommands(true));
    const missing = PROJECT_COMMANDS.filter((c) => !all.has(c));
    assert.deepEqual(missing, [], `commands not registered: ${missing.join(', ')}`);
  });
});
