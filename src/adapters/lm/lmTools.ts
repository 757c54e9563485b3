import * as vscode from 'vscode';
import type { Caller, ToolPipeline } from '../../agent/pipeline';
import type { AnyTool } from '../../tools/defineTool';
import { lmToolName } from '../../tools/lmContributions';

/** The client name chat agents calling through VS Code's language-model tools are recorded under. */
export const LM_CLIENT_NAME = 'VS Code chat';

/**
 * A Markdown description of what a call will change, for VS Code's confirmation: the tool, its
 * effect, and every argument it was given.
 */
export function describeCall(tool: AnyTool, input: unknown): vscode.MarkdownString {
  const md = new vscode.MarkdownString();
  md.appendMarkdown(`**${tool.title}** (${tool.effect === 'destroy' ? 'deletes data, cannot be undone' : tool.effect} in the open Marginalia project)\n\n`);
  const entries = Object.entries((input ?? {}) as Record<string, unknown>);
  if (entries.length === 0) md.appendMarkdown('No arguments.');
  for (const [k, v] of entries) {
    const shown = typeof v === 'string' ? (v.length > 300 ? `${v.slice(0, 300)}… (${v.length} characters)` : v) : JSON.stringify(v).slice(0, 300);
    // the model chooses the keys too: anything but a plain name is shown as text, never as Markdown
    if (/^[A-Za-z0-9_]{1,64}$/.test(k)) md.appendMarkdown(`- \`${k}\`: `);
    else md.appendMarkdown('- ').appendText(`${k.slice(0, 64)}: `);
    md.appendText(String(shown)).appendMarkdown('\n');
  }
  return md;
}

/**
 * Registers every agent-facing registry tool as `qda_<name>` with `vscode.lm.registerTool`. Each call
 * runs through the one pipeline as `caller()` (an agent session: chat agents are agents, not the
 * researcher); the result carries the same envelope as HTTP (JSON text part).
 * Tools that change data ask for confirmation first (`prepareInvocation` -> `confirmationMessages`);
 * Marginalia's own trust layer still applies, since users can auto-approve in VS Code.
 */
export function registerLmTools(pipeline: ToolPipeline, tools: readonly AnyTool[], caller: () => Caller): vscode.Disposable {
  const registrations = tools
    .filter((t) => (t.audience ?? 'agents') === 'agents')
    .map((t) =>
      vscode.lm.registerTool<Record<string, unknown>>(lmToolName(t.name), {
        prepareInvocation: (options) =>
          t.effect === 'read'
            ? { invocationMessage: `${t.title}…` }
            : { invocationMessage: `${t.title}…`, confirmationMessages: { title: `Marginalia: ${t.title}?`, message: describeCall(t, options.input) } },
        invoke: async (options) => {
          const outcome = await pipeline.invoke(t.name, options.input, caller());
          return new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(JSON.stringify(outcome.envelope))]);
        },
      }),
    );
  return vscode.Disposable.from(...registrations);
}
