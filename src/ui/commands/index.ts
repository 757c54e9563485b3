/**
 * THE command table (rust-analyzer's `editors/code` style): every command the extension contributes, one entry
 * per command id, joined from the areas' tables by {@link commandTable} and registered once by
 * {@link registerCommands}. test/unit/ui/commandTable.test.ts compares the registered ids with package.json
 * `contributes.commands`: each contributed command registered exactly once, nothing registered that is not
 * contributed.
 */
import * as vscode from 'vscode';
import type { AgentContext, Tokens } from '../../agent/agentContext';
import { registerAgentCommands } from '../agents/agentCommands';
import type { ConnectedAgentsView } from '../agents/connectedAgentsView';
import type { ApprovalsView } from '../approvals/approvalsView';
import type { CaseAttributesPanel } from '../cases/caseAttributesPanel';
import { casesCommands } from '../cases/casesCommands';
import { codebookCommands } from '../codebook/codebookCommands';
import type { HistoryView } from '../history/historyView';
import type { SyncCommands } from '../history/syncCommands';
import type { AgentTokenSecrets } from '../host/tokens';
import type { Memos } from '../memos/memoCommands';
import { mergeCommands } from '../merge/mergeCommands';
import type { MergeConflictsView } from '../merge/mergeConflictsView';
import type { PauseCommands } from '../observer/pauseCommands';
import type { ProjectController } from '../projectController';
import { isReportsView, type ReportsPanel } from '../reports/reportsPanel';
import { retrievalCommands } from '../retrieval/retrievalCommands';
import type { BlindCodingStatus } from '../teamScope';
import type { CasesTreeProvider } from '../trees/casesTreeProvider';
import type { UndoCommands } from '../undo/undoCommands';
import { agentAccessCommands } from './agentAccessCommands';
import { codesCommands } from './codesCommands';
import { codingCommands } from './codingCommands';
import type { CommandDeps } from './deps';
import { historyCommands } from './historyCommands';
import { projectCommands } from './projectCommands';
import { sourcesCommands } from './sourcesCommands';
import { concatTables, type CommandTable } from './table';

export type { CommandDeps } from './deps';
export type { CommandHandler, CommandTable } from './table';

/** Everything the commands of every area use: the editor commands' deps plus the views and services that own commands. */
export interface CommandParts extends CommandDeps {
  controller: ProjectController;
  casesTree: CasesTreeProvider;
  caseAttributes: CaseAttributesPanel;
  memos: Memos;
  history: HistoryView;
  sync: SyncCommands;
  reports: ReportsPanel;
  mergeConflicts: MergeConflictsView;
  agent: AgentContext;
  approvals: ApprovalsView;
  connectedAgents: ConnectedAgentsView;
  tokens: Tokens;
  /** where the tokens of the agent credentials Connect an Agent issued are kept */
  agentSecrets: AgentTokenSecrets;
  /** the extension's folder (for the bundled `bin/marginalia.js`) */
  extensionPath: string;
  undo: UndoCommands;
  pause: PauseCommands;
  blindCoding: BlindCodingStatus;
  /** shows the Marginalia output channel */
  showLog: () => void;
}

/**
 * THE table: command id -> handler, one entry per command, area by area (each area's file names its commands).
 * Throws (at activation) when two areas define the same id.
 */
export function commandTable(p: CommandParts): CommandTable {
  const { wb } = p;
  return concatTables({
    coding: codingCommands(p),
    codes: codesCommands(p),
    codebook: codebookCommands({ wb, codesTree: p.codesTree }),
    sources: sourcesCommands(p),
    // sources closed to agents (issue 14 item 11): Close to Agents…, Open to Agents
    agentAccess: agentAccessCommands(wb, p.sourcesTree),
    cases: casesCommands({ wb, docs: p.docs, casesTree: p.casesTree, attributesPanel: p.caseAttributes, flushEdits: p.flushEdits }),
    project: projectCommands(p),
    memos: p.memos.commands,
    history: historyCommands(p.history),
    sync: p.sync.commands(),
    merge: mergeCommands({ wb, view: p.mergeConflicts }),
    reports: { 'marginalia.reports.open': (view?: unknown) => p.reports.open(isReportsView(view) ? view : undefined) },
    retrieval: retrievalCommands({ wb, docs: p.docs, retrieval: p.retrieval }),
    agents: registerAgentCommands(p),
    undo: p.undo.commands(),
    pause: p.pause.commands(),
    blindCoding: p.blindCoding.commands(),
  });
}

/** Registers every command of the table, reporting failures through `onError` instead of throwing into VS Code. */
export function registerCommands(table: CommandTable, onError: (id: string, e: unknown) => void): vscode.Disposable {
  return vscode.Disposable.from(
    ...Object.entries(table).map(([id, handler]) =>
      vscode.commands.registerCommand(id, async (...args: unknown[]) => {
        try {
          return await handler(...args);
        } catch (e) {
          onError(id, e);
          return undefined;
        }
      }),
    ),
  );
}
