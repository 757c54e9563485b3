/**
 * What activate() returns (MarginaliaApi: the extension's parts, for integration tests, the rig bench and other
 * extensions), and the last step of activation: opening the workspace's one `.qda` project.
 */
import * as vscode from 'vscode';
import type { AgentContext } from '../../agent/agentContext';
import type { ActivityLog } from '../activity/activityLog';
import type { ConnectedAgentsView } from '../agents/connectedAgentsView';
import type { ApprovalsView } from '../approvals/approvalsView';
import type { CaseAttributesPanel } from '../cases/caseAttributesPanel';
import type { HasSourcesContext } from '../codebook/hasSourcesContext';
import { lastStatusFeedback } from '../codebook/statusFeedback';
import type { CodedSegmentDecorations } from '../decorations/codedSegmentDecorations';
import type { CodebookDiagnostics } from '../diagnostics/codebookDiagnostics';
import type { EditTracker } from '../documents/editTracker';
import type { SourceDocuments } from '../documents/sourceDocuments';
import type { HistoryView } from '../history/historyView';
import type { OutputLogger } from '../host/outputLogger';
import type { Memos } from '../memos/memoCommands';
import type { MergeConflictsView } from '../merge/mergeConflictsView';
import type { AgentFollower } from '../observer/agentFollower';
import type { AgentNotices } from '../observer/agentNotices';
import type { PauseCommands } from '../observer/pauseCommands';
import type { ProjectController } from '../projectController';
import type { ReportsPanel } from '../reports/reportsPanel';
import type { RetrievalView } from '../retrieval/retrievalView';
import type { MarginaliaStatusBar } from '../statusBar';
import type { BlindCodingStatus } from '../teamScope';
import type { CasesTreeProvider } from '../trees/casesTreeProvider';
import type { CodesTreeProvider } from '../trees/codesTreeProvider';
import type { SourcesTreeProvider } from '../trees/sourcesTreeProvider';
import type { UndoCommands } from '../undo/undoCommands';
import type { Workbench } from '../workbench';
import type { AgentCore } from './agentCore';
import type { EventRouting } from './eventRouting';
import type { Observer } from './observer';
import type { Views } from './views';

/** What activate() returns: the extension's parts, for integration tests and other extensions. */
export interface MarginaliaApi {
  controller: ProjectController;
  workbench: Workbench;
  codesTree: CodesTreeProvider;
  sourcesTree: SourcesTreeProvider;
  casesTree: CasesTreeProvider;
  /** the Case Attributes table (marginalia.cases.openAttributes) */
  caseAttributes: CaseAttributesPanel;
  /** the Retrieval view (marginalia.retrieval; replaced Coded Segments): codes combined, filtered, whole passages, export */
  retrieval: RetrievalView;
  decorations: CodedSegmentDecorations;
  editTracker: EditTracker;
  documents: SourceDocuments;
  statusBar: MarginaliaStatusBar;
  /** blind coding's status bar hint (issue 16 item 5; src/ui/teamScope.ts) */
  blindCoding: BlindCodingStatus;
  /** Marginalia: Undo / Redo and the editor's undo order (Ctrl+Z in a source editor) */
  undo: UndoCommands;
  agent: AgentContext;
  approvals: ApprovalsView;
  /** the Connected Agents view (marginalia.agents): agent credentials, their sessions, End Session, Revoke */
  connectedAgents: ConnectedAgentsView;
  activity: ActivityLog;
  history: HistoryView;
  /** the Merge Conflicts view (marginalia.mergeConflicts, issue 16 item 4; src/ui/merge/) */
  mergeConflicts: MergeConflictsView;
  /** the Reports webview panel (marginalia.reports.open) */
  reports: ReportsPanel;
  /** codebook health in the Problems panel */
  codebookHealth: CodebookDiagnostics;
  /** the install's tokens (agent, reviewer), for tests and Connect an Agent */
  tokens: { agent: string; reviewer: string };
  /** memos as Markdown tabs (marginalia-memo:), the Memos view and its commands (issue 13 item 6) */
  memos: Memos;
  /** hybrid mode (issue 14 item 9): the agent follower, notify-level messages, Pause / Resume Agents */
  observer: { follower: AgentFollower; notices: AgentNotices; pause: PauseCommands };
  /** resolves once the trees and decorations have caught up with every event published so far */
  settled(): Promise<void>;
  /** the last short confirmation shown in the status bar ("Coded with 'X' in interview-04"), for tests */
  lastStatusFeedback(): { text: string; at: number } | undefined;
  /** the `marginalia.hasSources` context key (the walkthrough's import step completes on it) */
  hasSources: HasSourcesContext;
  /**
   * Activation timing (bench/rig.ts): `projectReadyMs` resolves, after the automatic open of the workspace's
   * one `.qda` project, to the milliseconds from the start of activate() to the Codes, Sources and Cases trees'
   * first children computed; to undefined when no project was opened automatically.
   */
  activation: { projectReadyMs: Promise<number | undefined> };
}

/** The API object of the running extension; `activation.projectReadyMs` is set by the caller after {@link openWorkspaceProject}. */
export function marginaliaApi(core: AgentCore, v: Views, observer: Observer, events: EventRouting): MarginaliaApi {
  return {
    controller: core.controller,
    workbench: v.wb,
    codesTree: v.codesTree,
    sourcesTree: v.sourcesTree,
    casesTree: v.casesTree,
    caseAttributes: v.caseAttributes,
    retrieval: v.retrieval,
    decorations: v.decorations,
    editTracker: v.editTracker,
    documents: v.docs,
    statusBar: v.statusBar,
    blindCoding: v.blindCoding,
    undo: v.undo,
    agent: core.agent,
    approvals: v.approvals,
    connectedAgents: v.connectedAgents,
    activity: v.activity,
    history: v.history,
    mergeConflicts: v.mergeConflicts,
    reports: v.reports,
    codebookHealth: v.codebookHealth,
    tokens: core.tokens,
    memos: v.memos,
    observer: { follower: observer.follower, notices: observer.notices, pause: observer.pause },
    settled: () => events.settled(),
    lastStatusFeedback,
    hasSources: v.hasSources,
    activation: { projectReadyMs: Promise.resolve(undefined) },
  };
}

/**
 * A workspace with exactly one `.qda` file opens it automatically, unless a project was opened or created
 * while the workspace was searched (else the project just created would be closed and reopened under the
 * researcher's first actions). Resolves to whether it opened one; a failure is logged and shown, not thrown.
 */
async function autoOpen(controller: ProjectController, logger: OutputLogger): Promise<boolean> {
  const found = await vscode.workspace.findFiles('**/*.qda', '**/node_modules/**', 2);
  if (found.length !== 1 || !found[0] || controller.current()) return false;
  try {
    await controller.open(found[0].fsPath);
    return true;
  } catch (e) {
    logger.error('could not open the workspace project', e);
    void vscode.window.showErrorMessage(`Marginalia could not open ${vscode.workspace.asRelativePath(found[0])}: ${(e as Error).message}`);
    return false;
  }
}

/**
 * Opens the workspace's one `.qda` project (see {@link autoOpen}); resolves to the milliseconds from
 * `activationStarted` (performance.now()) to the Codes, Sources and Cases trees' first children computed, or
 * undefined when no project was opened.
 */
export async function openWorkspaceProject(core: AgentCore, views: Views, activationStarted: number): Promise<number | undefined> {
  if (!(await autoOpen(core.controller, core.logger))) return undefined;
  await Promise.all([views.codesTree.getChildren(), views.sourcesTree.getChildren(), views.casesTree.getChildren()]);
  return performance.now() - activationStarted;
}
