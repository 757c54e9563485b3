// Helpers shared by the integration suites (bundled into each suite by build.mjs; not a suite itself).
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { MarginaliaApi } from '../../../src/extension';

/**
 * Polls `probe` every 50 ms until it answers something other than undefined or false, and resolves with that.
 * Rejects after `ms` milliseconds (default 15 s) with "timed out waiting for <what>"; `what` may be a function
 * so the message can say what was seen last.
 */
export async function until<T>(what: string | (() => string), probe: () => T | undefined | false | Promise<T | undefined | false>, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined && v !== false) return v as T;
    if (Date.now() > end) throw new Error(`timed out waiting for ${typeof what === 'string' ? what : what()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Calls `tool` through the extension's pipeline as the researcher (the UI's caller), or as another human coder
 * `user`, and returns its data; fails the test (assert) with the envelope when the call fails.
 */
export async function invokeAs(api: MarginaliaApi, tool: string, args: Record<string, unknown>, user?: string): Promise<any> {
  const caller = { ...api.workbench.caller(), ...(user ? { user } : {}) };
  const out = await api.workbench.pipeline.invoke(tool, args, caller);
  assert.ok(out.envelope.success, `${tool}: ${JSON.stringify(out.envelope)}`);
  return out.envelope.data;
}

/** What {@link openInterview} set up: the imported source, each code's id by name, and the source open in an editor. */
export interface OpenedInterview {
  sourceId: number;
  codeIds: Record<string, number>;
  editor: vscode.TextEditor;
}

/**
 * The setup most editor suites share, through the researcher's own commands: a new project `project` (a file name in
 * the workspace folder), `text` written to `sourceFile` there and imported, one code per name of `codes` (created
 * through the pipeline as the researcher), and the source opened. Fails the suite (assert) when a step fails.
 */
export async function openInterview(
  api: MarginaliaApi,
  opts: { project: string; sourceFile: string; text: string; codes: readonly string[] },
): Promise<OpenedInterview> {
  const ws = vscode.workspace.workspaceFolders![0]!.uri.fsPath;
  await vscode.commands.executeCommand('marginalia.project.new', path.join(ws, opts.project));
  const source = path.join(ws, opts.sourceFile);
  fs.writeFileSync(source, opts.text);
  const [sourceId] = (await vscode.commands.executeCommand('marginalia.sources.import', [vscode.Uri.file(source)])) as number[];
  assert.ok(sourceId, `importing ${opts.sourceFile}`);
  const codeIds: Record<string, number> = {};
  for (const name of opts.codes) codeIds[name] = ((await invokeAs(api, 'create_code', { name })) as { code_id: number }).code_id;
  const editor = (await vscode.commands.executeCommand('marginalia.sources.open', sourceId)) as vscode.TextEditor;
  assert.ok(editor, `opening ${opts.sourceFile}`);
  return { sourceId, codeIds, editor };
}
