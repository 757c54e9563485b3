/**
 * The views and editor parts of the extension, made in the order VS Code must see them (each registers its tree
 * view, webview provider or editor listeners when made, before any command that reveals it is registered):
 * the workbench (the researcher's side of the pipeline), the source editors, the Codes, Sources and Cases
 * trees, Case Attributes, Retrieval, the decorations, the status bar, Undo, then the supervision views
 * (Approvals, Connected Agents, History, Merge Conflicts, Agent Activity), Reports, codebook health and Memos.
 */
import type * as vscode from 'vscode';
import { projectInfoReader } from '../../cli/projectInfo';
import { ActivityLog } from '../activity/activityLog';
import { ActivityView } from '../activity/activityView';
import { ConnectedAgentsView } from '../agents/connectedAgentsView';
import { ApprovalsView } from '../approvals/approvalsView';
import { CaseAttributesPanel } from '../cases/caseAttributesPanel';
import { HasSourcesContext } from '../codebook/hasSourcesContext';
import { CodedSegmentDecorations } from '../decorations/codedSegmentDecorations';
import { CodebookDiagnostics } from '../diagnostics/codebookDiagnostics';
import { EditTracker } from '../documents/editTracker';
import { SourceDocuments } from '../documents/sourceDocuments';
import { HistoryView } from '../history/historyView';
import { SyncCommands } from '../history/syncCommands';
import { createMemos, type Memos } from '../memos/memoCommands';
import { MergeConflictsView } from '../merge/mergeConflictsView';
import { ReportsPanel } from '../reports/reportsPanel';
import { RetrievalView } from '../retrieval/retrievalView';
import { MarginaliaStatusBar } from '../statusBar';
import { BlindCodingStatus } from '../teamScope';
import { CasesTreeProvider } from '../trees/casesTreeProvider';
import { CodesTreeProvider } from '../trees/codesTreeProvider';
import { ColorIcons } from '../trees/colorIcons';
import { SourcesTreeProvider } from '../trees/sourcesTreeProvider';
import { UndoCommands } from '../undo/undoCommands';
import { Workbench } from '../workbench';
import type { AgentCore } from './agentCore';

/** The research side: the workbench, the source editors and the views a researcher codes in. */
export interface ResearchViews {
  wb: Workbench;
  docs: SourceDocuments;
  codesTree: CodesTreeProvider;
  sourcesTree: SourcesTreeProvider;
  casesTree: CasesTreeProvider;
  caseAttributes: CaseAttributesPanel;
  retrieval: RetrievalView;
  decorations: CodedSegmentDecorations;
  editTracker: EditTracker;
  statusBar: MarginaliaStatusBar;
  blindCoding: BlindCodingStatus;
  undo: UndoCommands;
}

/** The supervision side (agents, history, merges) and the panels over the whole project. */
export interface SupervisionViews {
  approvals: ApprovalsView;
  connectedAgents: ConnectedAgentsView;
  history: HistoryView;
  sync: SyncCommands;
  mergeConflicts: MergeConflictsView;
  activity: ActivityLog;
  activityView: ActivityView;
  reports: ReportsPanel;
  codebookHealth: CodebookDiagnostics;
  memos: Memos;
  hasSources: HasSourcesContext;
}

/** Every view and editor part. */
export type Views = ResearchViews & SupervisionViews;

/** Makes every view (research, then supervision) and pushes each to `context.subscriptions`, the project controller last. */
export function createViews(context: vscode.ExtensionContext, core: AgentCore): Views {
  const research = createResearchViews(context, core);
  const supervision = createSupervisionViews(context, core, research);
  const views: Views = { ...research, ...supervision };
  context.subscriptions.push(
    views.history,
    views.approvals,
    views.activity,
    views.activityView,
    views.docs,
    views.codesTree,
    views.sourcesTree,
    views.casesTree,
    views.retrieval,
    views.decorations,
    views.editTracker,
    views.statusBar,
    { dispose: () => void core.controller.dispose() },
  );
  return views;
}

/** Makes the research views; pushes Case Attributes, the blind coding hint and Undo (the rest are pushed by {@link createViews}). */
function createResearchViews(context: vscode.ExtensionContext, core: AgentCore): ResearchViews {
  const wb = new Workbench(core.controller, core.pipeline, core.logger, context.globalStorageUri);
  const docs = new SourceDocuments(wb);
  const codesTree = new CodesTreeProvider(wb, new ColorIcons(context.globalStorageUri));
  const sourcesTree = new SourcesTreeProvider(wb);
  const casesTree = new CasesTreeProvider(wb);
  const caseAttributes = new CaseAttributesPanel(context.extensionUri, wb);
  context.subscriptions.push(caseAttributes);
  const retrieval = new RetrievalView(context.extensionUri, wb, docs);
  const decorations = new CodedSegmentDecorations(wb, docs);
  const editTracker = new EditTracker(wb, docs);
  const statusBar = new MarginaliaStatusBar(core.controller);
  // blind coding's status bar hint; the Codes and Sources trees, Retrieval, the Reports (subscribed in
  // createSupervisionViews) and the decorations read through the researcher's scope (src/ui/teamScope.ts)
  const blindCoding = new BlindCodingStatus(wb, () => {
    codesTree.refresh();
    sourcesTree.refresh();
    void retrieval.refresh();
    decorations.refreshAll();
  });
  context.subscriptions.push(blindCoding);
  const undo = new UndoCommands(wb, docs, () => editTracker.flush(), statusBar);
  context.subscriptions.push(undo);
  return { wb, docs, codesTree, sourcesTree, casesTree, caseAttributes, retrieval, decorations, editTracker, statusBar, blindCoding, undo };
}

/** Makes the supervision views and panels; pushes those {@link createViews} does not. */
function createSupervisionViews(context: vscode.ExtensionContext, core: AgentCore, r: ResearchViews): SupervisionViews {
  const { wb, docs } = r;
  const { agent, pipeline, controller, logger } = core;
  const approvals = new ApprovalsView(wb, agent);
  const connectedAgents = new ConnectedAgentsView(
    agent,
    () => !!controller.current(),
    (l) => pipeline.onEvents(l),
  );
  context.subscriptions.push(
    connectedAgents,
    controller.onDidChangeProject(() => connectedAgents.refresh()),
  );
  const history = new HistoryView(wb);
  // the history's git remote: Configure Remote, Sync Project, the sync state in the status bar (src/ui/history/syncCommands.ts)
  const sync = new SyncCommands(wb, () => {
    r.codesTree.refresh();
    r.sourcesTree.refresh();
    r.casesTree.refresh();
    r.decorations.refreshAll();
    docs.refreshAll();
    void r.retrieval.refresh();
    void history.refresh();
  });
  context.subscriptions.push(sync);
  const mergeConflicts = new MergeConflictsView(wb);
  context.subscriptions.push(mergeConflicts);
  const activity = new ActivityLog(() => wb.repo());
  const activityView = new ActivityView(context.extensionUri, activity, wb, approvals);
  const reports = new ReportsPanel(context.extensionUri, wb, docs, r.decorations);
  // the Reports read through the researcher's scope too: blind coding switched on or off draws them again
  context.subscriptions.push(r.blindCoding.onDidChange(() => reports.refresh()));
  const codebookHealth = new CodebookDiagnostics(wb, docs);
  // memo tabs save through the pipeline; the briefing falls back to .marginalia/project.yaml beside the project
  const infoReaders = new Map<string, ReturnType<typeof projectInfoReader>>();
  const briefingFallback = (file: string) => {
    let read = infoReaders.get(file);
    if (!read) infoReaders.set(file, (read = projectInfoReader(file, logger)));
    return read();
  };
  const memos = createMemos({ wb, docs, logger, onEvents: (l) => pipeline.onEvents(l), briefingFallback, flushEdits: () => r.editTracker.flush() });
  context.subscriptions.push(memos);
  const hasSources = new HasSourcesContext(wb);
  context.subscriptions.push(reports, codebookHealth, hasSources);
  return { approvals, connectedAgents, history, sync, mergeConflicts, activity, activityView, reports, codebookHealth, memos, hasSources };
}
