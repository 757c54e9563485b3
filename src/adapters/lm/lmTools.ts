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

/** What each trust level means for a chat agent's call, as the confirmation states it. */
const LEVEL_WORDS: Record<string, string> = {
  auto: 'runs at once',
  notify: 'runs at once and the researcher is told',
  suggest: "is held for the researcher's approval in Marginalia",
  require: "is held for the researcher's approval in Marginalia",
  researcher_only: "is refused: it is the researcher's alone",
};

/**
 * The trust level that applies to `who` for `tool` (issue 14 item 6), by the rule of every tool listing
 * (GET /tools, MCP tools/list: ToolPipeline.listTools for the caller's viewer); undefined for a tool the
 * listing does not hold.
 */
export function lmTrustLevel(pipeline: ToolPipeline, tool: AnyTool, who: Caller): string | undefined {
  return pipeline.listTools(pipeline.viewerOf(who)).find((x) => x.name === tool.name)?.trust_level;
}

/**
 * Registers every agent-facing registry tool as `qda_<name>` with `vscode.lm.registerTool`. Each call
 * runs through the one pipeline as `caller()` (an agent session: chat agents are agents, not the
 * researcher); the result carries the same envelope as HTTP (JSON text part).
 * Tools that change data ask for confirmation first (`prepareInvocation` -> `confirmationMessages`);
 * Marginalia's own trust layer still applies, since users can auto-approve in VS Code. The invocation and
 * confirmation messages state the trust level that applies to the chat agent ({@link lmTrustLevel}); the
 * static descriptions (package.json `languageModelTools`) cannot, since they are the same for every project.
 */
export function registerLmTools(pipeline: ToolPipeline, tools: readonly AnyTool[], caller: () => Caller): vscode.Disposable {
  const registrations = tools
    .filter((t) => (t.audience ?? 'agents') === 'agents')
    .map((t) =>
      vscode.lm.registerTool<Record<string, unknown>>(lmToolName(t.name), {
        prepareInvocation: (options) => {
          const level = lmTrustLevel(pipeline, t, caller());
          const invocationMessage = level ? `${t.title}… (trust level ${level})` : `${t.title}…`;
          if (t.effect === 'read' && (level === undefined || level === 'auto')) return { invocationMessage };
          const message = describeCall(t, options.input);
          if (level)
            message.appendMarkdown(`\n\nTrust level for this chat agent: **${level}** (the call ${LEVEL_WORDS[level] ?? 'is decided by Marginalia'}).`);
          return { invocationMessage, confirmationMessages: { title: `Marginalia: ${t.title}?`, message } };
        },
        invoke: async (options) => {
          const outcome = await pipeline.invoke(t.name, options.input, caller());
          return new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(JSON.stringify(outcome.envelope))]);
        },
      }),
    );
  return vscode.Disposable.from(...registrations);
}
