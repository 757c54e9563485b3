/**
 * The VS Code composition root: the only file (with cli/) that wires the layers together. It owns the
 * two lifetimes of docs/architecture.md: the extension's (everything registered here) and the open project's
 * (ProjectController.scope).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { startSurfaces } from './cli/surfaces';
import { LM_CLIENT_NAME, registerLmTools } from './adapters/lm/lmTools';
import type { EventRecord } from './domain/events';
import { AgentContext } from './agent/agentContext';
import { TrustPolicy } from './agent/trust';
import { ALL_TOOLS, announceProject, createPipeline, openProjectHandle } from './cli/compose';
import { fileAgentCredentialStorage, fileAuditStorage, readConfigText, writeDiscovery } from './cli/credentials';
import { VERSION } from './cli/main';
import { EDITOR_TOOLS } from './tools/editorTools';
import { TOOLS } from './tools/registry';
import { commandTable, registerCommands } from './ui/commands';
import { codebookCommands } from './ui/codebook/codebookCommands';
import { HasSourcesContext } from './ui/codebook/hasSourcesContext';
import { lastStatusFeedback } from './ui/codebook/statusFeedback';
import { CodedSegmentDecorations } from './ui/decorations/codedSegmentDecorations';
import { EditTracker } from './ui/documents/editTracker';
import { SourceDocuments } from './ui/documents/sourceDocuments';
import { OutputLogger } from './ui/host/outputLogger';
import { applySettingOverrides, settings } from './ui/host/settings';
import { AgentTokenSecrets, loadSecretTokens } from './ui/host/tokens';
import { ApprovalsView } from './ui/approvals/approvalsView';
import { ActivityLog } from './ui/activity/activityLog';
import { ActivityView } from './ui/activity/activityView';
import { AgentFollower, readMode } from './ui/observer/agentFollower';
import { AgentNotices } from './ui/observer/agentNotices';
import { PauseCommands } from './ui/observer/pauseCommands';
import { undoAgentActionTool } from './tools/editorTools';
import { HistoryView, type SnapshotItem } from './ui/history/historyView';
import { SyncCommands } from './ui/history/syncCommands';
import { mergeCommands } from './ui/merge/mergeCommands';
import { MergeConflictsView } from './ui/merge/mergeConflictsView';
import { registerAgentCommands, registerMcpProvider } from './ui/agents/agentCommands';
import { ConnectedAgentsView } from './ui/agents/connectedAgentsView';
import { openProjectCredentialStorage } from './ui/agents/credentialStore';
import { ProjectController } from './ui/projectController';
import { isReportsView, ReportsPanel } from './ui/reports/reportsPanel';
import { CodebookDiagnostics } from './ui/diagnostics/codebookDiagnostics';
import { MarginaliaStatusBar } from './ui/statusBar';
import { BlindCodingStatus } from './ui/teamScope';
import { createMemos, type Memos } from './ui/memos/memoCommands';
import { projectInfoReader } from './cli/projectInfo';
import { UndoCommands } from './ui/undo/undoCommands';
import { CasesTreeProvider } from './ui/trees/casesTreeProvider';
import { CaseAttributesPanel } from './ui/cases/caseAttributesPanel';
import { casesCommands } from './ui/cases/casesCommands';
import { retrievalCommands } from './ui/retrieval/retrievalCommands';
import { RetrievalView } from './ui/retrieval/retrievalView';
import { CodesTreeProvider } from './ui/trees/codesTreeProvider';
import { ColorIcons } from './ui/trees/colorIcons';
import { SourcesTreeProvider } from './ui/trees/sourcesTreeProvider';
import { causedByAgent, LOCAL_SESSION, Workbench } from './ui/workbench';
import type { NavigationTarget } from './tools/context';

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

let controllerRef: ProjectController | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<MarginaliaApi> {
  const activationStarted = performance.now();
  const logger = new OutputLogger();
  context.subscriptions.push(logger);
  await vscode.workspace.fs.createDirectory(context.globalStorageUri);

  // the host's navigation needs the document service, which needs the pipeline the host is part of
  const late: { docs?: SourceDocuments; editTracker?: EditTracker } = {};
  const host = {
    mode: 'desktop' as const,
    currentScreen: () => {
      const ed = vscode.window.activeTextEditor;
      return ed ? `editor: ${vscode.workspace.asRelativePath(ed.document.uri)}` : 'workbench';
    },
    navigate: (t: NavigationTarget) => {
      if (!late.docs) return { navigated: false, detail: 'The editor is not ready.' };
      void late.docs.open(t.source_id, { start: t.start_pos, end: t.end_pos }, true).then((ed) => {
        if (ed && t.highlight) api.decorations.flash({ source_id: t.source_id, start_pos: t.start_pos, end_pos: t.end_pos }, 1500);
      });
      return { navigated: true, detail: `Opened "${t.source_name}" in the researcher's editor.` };
    },
    get transcriptionEndpoint() {
      return settings.transcriptionEndpoint();
    },
    // agents' import and export paths may lie in the workspace folders too (src/core/pathPolicy.ts)
    allowedRoots: () => (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file').map((f) => f.uri.fsPath),
    requestSourceAccess: (ids: readonly number[], who: { session_id: string; client_name: string; tool: string }) => askSourceAccess(ids, who),
  };
  /** sessions the researcher let work on a source they are editing (observer mode), as `session:source` */
  const observed = new Set<string>();
  const askSourceAccess = async (ids: readonly number[], who: { session_id: string; client_name: string; tool: string }): Promise<boolean> => {
    const tracker = late.editTracker;
    if (!tracker) return true;
    const busy = ids.filter((id) => tracker.isBeingEdited(id) && !observed.has(`${who.session_id}:${id}`));
    if (busy.length === 0) return true;
    const names = busy.map((id) => controller.current()?.repo.getSource(id)?.name ?? `source ${id}`).join(', ');
    const answer = await Promise.race([
      vscode.window.showWarningMessage(
        `${who.client_name} wants to ${who.tool.replace(/_/g, ' ')} in ${names}, which you are editing. Let the agent work on it?`,
        'Allow',
        'Not Now',
      ),
      new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 30_000)),
    ]);
    if (answer !== 'Allow') return false;
    for (const id of busy) observed.add(`${who.session_id}:${id}`);
    return true;
  };
  const tokens = await loadSecretTokens(context.secrets);
  const configProblems: string[] = [];
  const agent: AgentContext = new AgentContext({
    tools: ALL_TOOLS,
    project: () => controller.current(),
    tokens,
    researcherName: () => settings.coderName(),
    // the open project's agent credentials, in the file `marginalia agent add|list|revoke --project P` uses
    credentials: openProjectCredentialStorage(() => controllerRef?.current()?.path, fileAgentCredentialStorage),
    overrides: (cfg) =>
      applySettingOverrides(
        cfg,
        (p, l) => TrustPolicy.checkOverride(ALL_TOOLS, p, l, cfg.trust.default_level),
        (m) => configProblems.push(m),
      ),
    audit: {
      append: (line) => {
        const current = controller.current();
        if (current) fileAuditStorage(current.path, () => agent.config.audit.log_path).append(line);
      },
      read: async () => {
        const current = controller.current();
        return current ? fileAuditStorage(current.path, () => agent.config.audit.log_path).read() : '';
      },
      rewrite: (transform) => {
        const current = controller.current();
        return current ? (fileAuditStorage(current.path, () => agent.config.audit.log_path).rewrite?.(transform) ?? null) : null;
      },
    },
    logger,
  });
  context.subscriptions.push(agent);
  const pipeline = createPipeline({ project: () => controller.current(), host, logger, agent });
  const controller = new ProjectController(
    async (file, create) => {
      const handle = await openProjectHandle(file, { create, logger });
      reloadConfig(file);
      return handle;
    },
    async (port) => {
      // the same composition as `marginalia serve` (src/cli/surfaces.ts): the surfaces agent_context.protocols turns on
      const project = controller.current();
      const server = await startSurfaces({
        agent,
        pipeline,
        project: () => controller.current(),
        projectPath: project?.path ?? '',
        tokens,
        logger,
        version: VERSION,
        port,
        onCall: (line: string) => logger.line(line),
      });
      const base = `http://127.0.0.1:${server.port}`;
      const removeDiscovery = project
        ? writeDiscovery({
            project: project.path,
            pid: process.pid,
            url: base,
            port: server.port,
            token: tokens.agent,
            mcp_url: `${base}/mcp`,
            started_at: new Date().toISOString(),
          })
        : () => undefined;
      return {
        port: server.port,
        close: async () => {
          removeDiscovery();
          await server.close();
        },
      };
    },
    logger,
    { serverEnabled: settings.serverEnabled, serverPort: settings.serverPort },
  );
  /** Loads `.marginalia/config.yaml` beside the project with the settings on top; problems are shown, defaults kept. */
  const reloadConfig = (file: string) => {
    configProblems.length = 0;
    try {
      agent.reload(readConfigText(file));
    } catch (e) {
      configProblems.push((e as Error).message);
      agent.reload(undefined);
    }
    if (configProblems.length > 0) void vscode.window.showErrorMessage(`Marginalia configuration: ${configProblems.join('; ')}`);
  };
  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration((e) => {
      const current = controller.current();
      if (
        current &&
        (e.affectsConfiguration('marginalia.trust') || e.affectsConfiguration('marginalia.rateLimits') || e.affectsConfiguration('marginalia.audit'))
      )
        reloadConfig(current.path);
    }),
  );
  // expired sessions end and unanswered approval requests are rejected on time
  const sweeper = setInterval(() => {
    agent.sessions.sweep();
    pipeline.sweepApprovals();
  }, 1000);
  context.subscriptions.push({ dispose: () => clearInterval(sweeper) });
  controllerRef = controller;
  const wb = new Workbench(controller, pipeline, logger, context.globalStorageUri);
  const docs = new SourceDocuments(wb);
  late.docs = docs;
  const codesTree = new CodesTreeProvider(wb, new ColorIcons(context.globalStorageUri));
  const sourcesTree = new SourcesTreeProvider(wb);
  const casesTree = new CasesTreeProvider(wb);
  const caseAttributes = new CaseAttributesPanel(context.extensionUri, wb);
  context.subscriptions.push(caseAttributes);
  const retrieval = new RetrievalView(context.extensionUri, wb, docs);
  const decorations = new CodedSegmentDecorations(wb, docs);
  const editTracker = new EditTracker(wb, docs);
  late.editTracker = editTracker;
  const statusBar = new MarginaliaStatusBar(controller);
  // blind coding's status bar hint; the Codes tree and the decorations read through the researcher's scope (src/ui/teamScope.ts)
  const blindCoding = new BlindCodingStatus(wb, () => {
    codesTree.refresh();
    decorations.refreshAll();
  });
  context.subscriptions.push(blindCoding);
  const undo = new UndoCommands(wb, docs, () => editTracker.flush(), statusBar);
  context.subscriptions.push(undo);
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
    codesTree.refresh();
    sourcesTree.refresh();
    casesTree.refresh();
    decorations.refreshAll();
    docs.refreshAll();
    void retrieval.refresh();
    void history.refresh();
  });
  context.subscriptions.push(sync);
  const mergeConflicts = new MergeConflictsView(wb);
  context.subscriptions.push(mergeConflicts);
  const activity = new ActivityLog(() => wb.repo());
  const activityView = new ActivityView(context.extensionUri, activity, wb, approvals);
  const reports = new ReportsPanel(context.extensionUri, wb, docs, decorations);
  const codebookHealth = new CodebookDiagnostics(wb, docs);
  // memo tabs save through the pipeline; the briefing falls back to .marginalia/project.yaml beside the project
  const infoReaders = new Map<string, ReturnType<typeof projectInfoReader>>();
  const briefingFallback = (file: string) => {
    let read = infoReaders.get(file);
    if (!read) infoReaders.set(file, (read = projectInfoReader(file, logger)));
    return read();
  };
  const memos = createMemos({ wb, docs, logger, onEvents: (l) => pipeline.onEvents(l), briefingFallback, flushEdits: () => editTracker.flush() });
  context.subscriptions.push(memos);
  const hasSources = new HasSourcesContext(wb);
  context.subscriptions.push(reports, codebookHealth, hasSources);
  context.subscriptions.push(
    history,
    approvals,
    activity,
    activityView,
    docs,
    codesTree,
    sourcesTree,
    casesTree,
    retrieval,
    decorations,
    editTracker,
    statusBar,
    { dispose: () => void controller.dispose() },
  );

  // the history view follows the automatic snapshots, which land shortly after changes (debounced)
  let historyTimer: NodeJS.Timeout | undefined;
  const historyRefresh = () => {
    if (historyTimer) clearTimeout(historyTimer);
    historyTimer = setTimeout(() => void history.refresh(), 3000);
  };

  // hybrid mode (issue 14 item 9, src/ui/observer/): follow agents, notify-level calls as messages with Undo and Show, Pause Agents
  agent.mode = readMode();
  const follower = new AgentFollower({
    open: (id, range) => docs.open(id, range, true),
    flash: (seg, ms) => decorations.flash(seg, ms),
    mode: readMode,
    flashMs: settings.flashMs,
  });
  const agentNotices = new AgentNotices({
    undo: async (correlation_id) => {
      let problem: string | undefined;
      await wb.call(undoAgentActionTool, { correlation_id }, { onFailure: (_code, message) => (problem = message) });
      return problem;
    },
    show: async (n) => {
      const coded = n.correlation_id
        ? wb
            .repo()
            ?.listEventsByCorrelation(n.correlation_id)
            .find((e) => e.event_type === 'coding.segment_coded')
        : undefined;
      if (coded) await docs.open(coded.payload.source_id as number, { start: coded.payload.start as number, end: coded.payload.end as number });
      else if (n.source_id !== null) await docs.open(n.source_id);
      else await vscode.commands.executeCommand('marginalia.activity.focus');
    },
    showActivity: () => vscode.commands.executeCommand('marginalia.activity.focus'),
  });
  const pauseCommands = new PauseCommands({ agent, caller: () => wb.caller(), mode: readMode });
  context.subscriptions.push(
    follower,
    agentNotices,
    pauseCommands,
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (!e.affectsConfiguration('marginalia.mode')) return;
      agent.mode = readMode();
      pauseCommands.update();
    }),
  );

  // Domain events from every session (UI, HTTP, LM tools) update the views: at once after a quiet spell (a
  // researcher's action is drawn without waiting for a frame), else batched per 16 ms frame (an agent's burst).
  let pending: EventRecord[] = [];
  let flushTimer: NodeJS.Timeout | undefined;
  let lastFlush = -Infinity;
  let settledWaiters: (() => void)[] = [];
  const flushEvents = () => {
    flushTimer = undefined;
    lastFlush = performance.now();
    const events = pending;
    pending = [];
    const sources = new Set<number>();
    let codes = false;
    let sourceList = false;
    for (const e of events) {
      if (e.event_type.startsWith('coding.')) codes = true;
      if (e.event_type.startsWith('source.')) sourceList = true;
      const sid = e.payload.source_id;
      if (typeof sid === 'number') sources.add(sid);
      // a code's name or colour is drawn in the editors: redraw them when it changes (not when a code is made or moved)
      if (
        e.event_type === 'coding.code_renamed' ||
        e.event_type === 'coding.code_updated' ||
        e.event_type === 'coding.code_deleted' ||
        e.event_type === 'coding.codes_merged'
      ) {
        for (const ed of vscode.window.visibleTextEditors) {
          const s = docs.sourceIdFor(ed.document);
          if (s !== undefined) sources.add(s);
        }
      }
    }
    if (codes) {
      // codings added or removed change only their codes' counts: redraw those rows, not the whole tree
      const segmentOnly = events.every(
        (e) =>
          !e.event_type.startsWith('coding.') ||
          ((e.event_type === 'coding.segment_coded' || e.event_type === 'coding.segment_uncoded') && typeof e.payload.code_id === 'number'),
      );
      if (segmentOnly) codesTree.refreshCodeRows(events.filter((e) => e.event_type.startsWith('coding.')).map((e) => e.payload.code_id as number));
      else codesTree.update();
    }
    if (codes || sourceList || events.some((e) => e.event_type.startsWith('case.'))) void retrieval.refresh();
    // the Sources view counts codings: only changes of passages move those counts (not a code made, renamed or moved)
    const passages = events.some((e) => e.event_type.includes('segment_') || e.event_type === 'coding.code_deleted' || e.event_type === 'coding.codes_merged');
    if (passages || sourceList) sourcesTree.refresh();
    if (events.some((e) => e.event_type.startsWith('case.') || e.event_type === 'source.deleted')) casesTree.refresh();
    for (const s of sources) decorations.refreshSource(s);
    if (events.some((e) => e.event_type.startsWith('approval.'))) approvals.refresh();
    if (events.some((e) => e.event_type === 'project.snapshot_restored')) {
      // a restore changes everything: redraw every view and editor
      codesTree.refresh();
      sourcesTree.refresh();
      casesTree.refresh();
      void retrieval.refresh();
      decorations.refreshAll();
      void mergeConflicts.refresh();
    }
    if (events.length > 0) historyRefresh();
    for (const e of events) {
      if (e.event_type === 'approval.requested') void approvals.notify(e.aggregate_id);
      if (e.event_type === 'coding.segment_coded' && causedByAgent(e.caused_by)) {
        decorations.flash(
          { source_id: e.payload.source_id as number, start_pos: e.payload.start as number, end_pos: e.payload.end as number },
          settings.flashMs(),
        );
      }
      if (e.event_type === 'source.text_edited' || e.event_type === 'source.text_reconciled') {
        const src = wb.repo()?.getSource(e.payload.source_id as number);
        if (src) docs.refresh(src.source_id, src.name);
      }
    }
    void follower.onEvents(events);
    agentNotices.onEvents(events);
    const waiters = settledWaiters;
    settledWaiters = [];
    for (const w of waiters) w();
  };
  context.subscriptions.push(
    pipeline.onEvents((events) => {
      activity.recordEvents(events);
      pending.push(...events);
      flushTimer ??= setTimeout(flushEvents, performance.now() - lastFlush > 100 ? 0 : 16);
    }),
    pipeline.onDidCall((call) => {
      activity.recordCall(call);
      // role agent marks an AI action (issue 14 item 1): the researcher's own calls over HTTP are not an active agent
      if (call.caller.session_id !== LOCAL_SESSION && !call.caller.researcher) statusBar.agentActive(call.caller.session_id);
    }),
    controller.onDidChangeProject((opened) => {
      if (opened) announceProject(pipeline, opened, 'opened', 'vscode', settings.coderName(), logger);
    }),
    controller.onWillClose((closing) => announceProject(pipeline, closing, 'closed', 'vscode', settings.coderName(), logger)),
    controller.onDidChangeProject(() => {
      codesTree.refresh();
      sourcesTree.refresh();
      casesTree.refresh();
      approvals.refresh();
      activity.reload();
      void history.refresh();
      void retrieval.show(undefined);
      decorations.refreshAll();
      docs.refreshAll();
      void editTracker.trackOpenDocuments();
    }),
    registerLmTools(pipeline, [...TOOLS, ...EDITOR_TOOLS], () => agent.implicitCaller(`Bearer ${tokens.agent}`, LM_CLIENT_NAME, 'CUSTOM', 'vscode-chat-agent')),
    registerMcpProvider({ controller, tokens, enabled: settings.provideMcpServer, version: VERSION }),
    registerCommands(
      {
        ...commandTable({
          wb,
          docs,
          codesTree,
          sourcesTree,
          retrieval,
          decorations,
          flushEdits: () => editTracker.flush(),
          state: context.workspaceState,
          showLog: () => logger.channel.show(),
        }),
        ...codebookCommands({ wb, codesTree }),
        ...casesCommands({ wb, docs, casesTree, attributesPanel: caseAttributes, flushEdits: () => editTracker.flush() }),
        'marginalia.project.new': (file?: string) => newProject(controller, file),
        'marginalia.project.open': (file?: string) => openProject(controller, file),
        'marginalia.project.close': () => controller.close(),
        ...memos.commands,
        'marginalia.history.initialize': () => history.initialize(),
        'marginalia.reports.open': (view?: unknown) => reports.open(isReportsView(view) ? view : undefined),
        'marginalia.history.refresh': () => history.refresh(),
        'marginalia.history.showChanges': (s?: SnapshotItem) => (s ? history.showChanges(s) : undefined),
        'marginalia.history.showRawDiff': (s?: SnapshotItem) => history.showRawDiff(s),
        'marginalia.history.restore': (s?: SnapshotItem) => (s ? history.restore(s) : undefined),
        ...retrievalCommands({ wb, docs, retrieval }),
        ...registerAgentCommands({
          wb,
          agent,
          approvals,
          tokens,
          controller,
          extensionPath: context.extensionPath,
          connectedAgents,
          agentSecrets: new AgentTokenSecrets(context.secrets),
        }),
        ...undo.commands(),
        ...pauseCommands.commands(),
        ...blindCoding.commands(),
        ...sync.commands(),
        ...mergeCommands({ wb, view: mergeConflicts }),
      },
      (id, e) => {
        logger.error(`${id} failed`, e);
        void vscode.window.showErrorMessage(`Marginalia: ${(e as Error).message}`);
      },
    ),
  );

  const api: MarginaliaApi = {
    controller,
    workbench: wb,
    codesTree,
    sourcesTree,
    casesTree,
    caseAttributes,
    retrieval,
    decorations,
    editTracker,
    documents: docs,
    statusBar,
    blindCoding,
    undo,
    agent,
    approvals,
    connectedAgents,
    activity,
    history,
    mergeConflicts,
    reports,
    codebookHealth,
    tokens,
    memos,
    observer: { follower, notices: agentNotices, pause: pauseCommands },
    settled: () =>
      new Promise<void>((resolve) => {
        if (!flushTimer && pending.length === 0) resolve();
        else settledWaiters.push(resolve);
      }),
    lastStatusFeedback,
    hasSources,
    activation: { projectReadyMs: Promise.resolve(undefined) },
  };

  await vscode.commands.executeCommand('setContext', 'marginalia.projectOpen', false);
  api.activation.projectReadyMs = autoOpen(controller, logger).then(async (opened) => {
    if (!opened) return undefined;
    await Promise.all([codesTree.getChildren(), sourcesTree.getChildren(), casesTree.getChildren()]);
    return performance.now() - activationStarted;
  });
  return api;
}

export async function deactivate(): Promise<void> {
  await controllerRef?.close();
}

/**
 * A workspace with exactly one `.qda` file opens it automatically, unless a project was opened or created
 * while the workspace was searched (else the project just created would be closed and reopened under the
 * researcher's first actions). Resolves to whether it opened one.
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

async function newProject(controller: ProjectController, file?: string): Promise<string | undefined> {
  let target = file;
  if (!target) {
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
    const uri = await vscode.window.showSaveDialog({
      title: 'New Marginalia project',
      filters: { 'Marginalia project': ['qda'] },
      defaultUri: folder ? vscode.Uri.joinPath(folder, 'study.qda') : undefined,
    });
    target = uri?.fsPath;
  }
  if (!target) return undefined;
  if (!target.endsWith('.qda')) target += '.qda';
  if (fs.existsSync(target)) {
    void vscode.window.showErrorMessage(`${path.basename(target)} already exists: use Marginalia: Open Project.`);
    return undefined;
  }
  await controller.open(target, true);
  return target;
}

async function openProject(controller: ProjectController, file?: string): Promise<string | undefined> {
  let target = file;
  if (!target) {
    const uris = await vscode.window.showOpenDialog({ title: 'Open Marginalia project', canSelectMany: false, filters: { 'Marginalia project': ['qda'] } });
    target = uris?.[0]?.fsPath;
  }
  if (!target) return undefined;
  await controller.open(target, false);
  return target;
}
