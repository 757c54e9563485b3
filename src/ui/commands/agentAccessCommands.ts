/**
 * The Sources view's "Close to Agents…" and "Open to Agents" (issue 14 item 11): the researcher closes a source
 * or a folder to every agent or to named agents, or opens it again, through set_agent_access on the one
 * pipeline as the researcher (Workbench.call), so it is audited like every other call; the view then shows a
 * lock. Each command takes its answers as optional arguments (tests, keybindings), which skip the dialogs: the
 * target as a Sources view node or `{source_id}`/`{folder_id}`/`{case_id}`, and `agents` as a list of names
 * (empty or absent with `all: true`: every agent).
 */
import * as vscode from 'vscode';
import { setAgentAccessTool } from '../../tools/agentAccessTools';
import type { SourcesNode, SourcesTreeProvider } from '../trees/sourcesTreeProvider';
import type { Workbench } from '../workbench';

/** A command's target: a Sources view node, or the ids set_agent_access takes. */
type Target = SourcesNode | { source_id?: number; folder_id?: number; case_id?: number } | undefined;

/** The set_agent_access target of a command argument, with its name for messages, or undefined. */
function targetOf(t: Target): { args: { source_id?: number; folder_id?: number; case_id?: number }; name: string } | undefined {
  if (!t || typeof t !== 'object') return undefined;
  if ('kind' in t && t.kind === 'source') return { args: { source_id: t.source.source_id }, name: `"${t.source.name}"` };
  if ('kind' in t && t.kind === 'folder') return { args: { folder_id: t.folder.folder_id }, name: `folder "${t.folder.name}"` };
  const ids = t as { source_id?: number; folder_id?: number; case_id?: number };
  if (ids.source_id !== undefined) return { args: { source_id: ids.source_id }, name: `source ${ids.source_id}` };
  if (ids.folder_id !== undefined) return { args: { folder_id: ids.folder_id }, name: `folder ${ids.folder_id}` };
  if (ids.case_id !== undefined) return { args: { case_id: ids.case_id }, name: `case ${ids.case_id}` };
  return undefined;
}

/** Asks which agents to shut out: every agent, or names typed by the researcher. Undefined when cancelled. */
async function askAgents(name: string): Promise<string[] | null | undefined> {
  const all = 'All agents';
  const some = 'Only some agents…';
  const pick = await vscode.window.showQuickPick([all, some], {
    title: `Close ${name} to agents`,
    placeHolder: 'Agents will not read its text: reads are refused (SOURCE_CLOSED) or shown as "[closed to agents]". You are unaffected.',
  });
  if (pick === undefined) return undefined;
  if (pick === all) return null;
  const typed = await vscode.window.showInputBox({
    title: `Close ${name} to some agents`,
    prompt: 'Agent names, separated by commas (as in Connect an Agent)',
    validateInput: (v) => (v.split(',').some((x) => x.trim()) ? undefined : 'Name at least one agent'),
  });
  if (typed === undefined) return undefined;
  return [
    ...new Set(
      typed
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean),
    ),
  ];
}

/** The commands `marginalia.sources.closeToAgents` and `marginalia.sources.openToAgents`. */
export function agentAccessCommands(wb: Workbench, sourcesTree: SourcesTreeProvider): Record<string, (...args: any[]) => unknown> {
  return {
    'marginalia.sources.closeToAgents': async (node?: Target, agents?: string[] | null) => {
      const target = targetOf(node);
      if (!target) return undefined;
      const who = agents === undefined ? await askAgents(target.name) : agents && agents.length > 0 ? agents : null;
      if (who === undefined) return undefined;
      const out = await wb.call(setAgentAccessTool, { ...target.args, access: 'closed', ...(who ? { agents: who } : {}) });
      sourcesTree.refresh();
      if (out) void vscode.window.setStatusBarMessage(`$(lock) ${target.name} is closed to ${who ? who.join(', ') : 'every agent'}`, 4000);
      return out;
    },
    'marginalia.sources.openToAgents': async (node?: Target) => {
      const target = targetOf(node);
      if (!target) return undefined;
      const out = await wb.call(setAgentAccessTool, { ...target.args, access: 'open' });
      sourcesTree.refresh();
      if (!out) return out;
      // a source closed through its folder or a case stays closed until that is opened
      if (target.args.source_id !== undefined && out.closed_source_ids.includes(target.args.source_id)) {
        void vscode.window.showInformationMessage(
          `${target.name} is still closed to agents through its folder or a case: open that to agents (Sources view or Cases view).`,
        );
      } else void vscode.window.setStatusBarMessage(`$(unlock) ${target.name} is open to agents`, 4000);
      return out;
    },
  };
}
