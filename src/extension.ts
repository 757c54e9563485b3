/**
 * The VS Code composition root: the only file (with cli/) that wires the layers together. It owns the
 * two lifetimes of DESIGN.md: the extension's (everything registered here) and the open project's
 * (ProjectController.scope).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { startHttpServer } from './adapters/http/httpServer';
import { registerLmTools } from './adapters/lm/lmTools';
import type { EventRecord } from './domain/events';
import { createPipeline, openProjectHandle } from './cli/compose';
import { VERSION } from './cli/main';
import { EDITOR_TOOLS } from './tools/editorTools';
import { TOOLS } from './tools/registry';
import { commandTable, registerCommands } from './ui/commands';
import { CodedSegmentDecorations } from './ui/decorations/codedSegmentDecorations';
import { EditTracker } from './ui/documents/editTracker';
import { SourceDocuments } from './ui/documents/sourceDocuments';
import { OutputLogger } from './ui/host/outputLogger';
import { settings } from './ui/host/settings';
import { ProjectController } from './ui/projectController';
import { MarginaliaStatusBar } from './ui/statusBar';
import { CasesTreeProvider } from './ui/trees/casesTreeProvider';
import { CodedSegmentsTreeProvider } from './ui/trees/codedSegmentsTreeProvider';
import { CodesTreeProvider } from './ui/trees/codesTreeProvider';
import { ColorIcons } from './ui/trees/colorIcons';
import { SourcesTreeProvider } from './ui/trees/sourcesTreeProvider';
import { LOCAL_SESSION, Workbench } from './ui/workbench';
import type { NavigationTarget } from './tools/context';

/** What activate() returns: the extension's parts, for integration tests and other extensions. */
export interface MarginaliaApi {
  controller: ProjectController;
  workbench: Workbench;
  codesTree: CodesTreeProvider;
  sourcesTree: SourcesTreeProvider;
  casesTree: CasesTreeProvider;
  segmentsTree: CodedSegmentsTreeProvider;
  decorations: CodedSegmentDecorations;
  editTracker: EditTracker;
  documents: SourceDocuments;
  statusBar: MarginaliaStatusBar;
  /** resolves once the trees and decorations have caught up with every event published so far */
  settled(): Promise<void>;
}

let controllerRef: ProjectController | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<MarginaliaApi> {
  const logger = new OutputLogger();
  context.subscriptions.push(logger);
  await vscode.workspace.fs.createDirectory(context.globalStorageUri);

  // the host's navigation needs the document service, which needs the pipeline the host is part of
  const late: { docs?: SourceDocuments } = {};
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
  };
  const pipeline = createPipeline({ project: () => controller.current(), host, logger });
  const controller = new ProjectController(
    (file, create) => openProjectHandle(file, { create, logger }),
    (port) => startHttpServer({ pipeline, port, logger, version: VERSION, onCall: (line) => logger.line(line) }),
    logger,
    { serverEnabled: settings.serverEnabled, serverPort: settings.serverPort },
  );
  controllerRef = controller;
  const wb = new Workbench(controller, pipeline, logger, context.globalStorageUri);
  const docs = new SourceDocuments(wb);
  late.docs = docs;
  const codesTree = new CodesTreeProvider(wb, new ColorIcons(context.globalStorageUri));
  const sourcesTree = new SourcesTreeProvider(wb);
  const casesTree = new CasesTreeProvider(wb);
  const segmentsTree = new CodedSegmentsTreeProvider(wb);
  const decorations = new CodedSegmentDecorations(wb, docs);
  const editTracker = new EditTracker(wb, docs);
  const statusBar = new MarginaliaStatusBar(controller);
  context.subscriptions.push(docs, codesTree, sourcesTree, casesTree, segmentsTree, decorations, editTracker, statusBar, { dispose: () => void controller.dispose() });

  // Domain events from every session (UI, HTTP, LM tools) update the views; batched per 16 ms frame.
  let pending: EventRecord[] = [];
  let flushTimer: NodeJS.Timeout | undefined;
  let settledWaiters: (() => void)[] = [];
  const flushEvents = () => {
    flushTimer = undefined;
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
      if (e.event_type.startsWith('coding.code') || e.event_type === 'coding.codes_merged') {
        for (const ed of vscode.window.visibleTextEditors) {
          const s = docs.sourceIdFor(ed.document);
          if (s !== undefined) sources.add(s);
        }
      }
    }
    if (codes) {
      codesTree.refresh();
      segmentsTree.refresh();
    }
    if (codes || sourceList) sourcesTree.refresh();
    if (events.some((e) => e.event_type.startsWith('case.') || e.event_type === 'source.deleted')) casesTree.refresh();
    for (const s of sources) decorations.refreshSource(s);
    for (const e of events) {
      if (e.event_type === 'coding.segment_coded' && e.caused_by.session_id !== LOCAL_SESSION) {
        decorations.flash({ source_id: e.payload.source_id as number, start_pos: e.payload.start as number, end_pos: e.payload.end as number }, settings.flashMs());
      }
      if (e.event_type === 'source.text_edited' || e.event_type === 'source.text_reconciled') {
        const src = wb.repo()?.getSource(e.payload.source_id as number);
        if (src) docs.refresh(src.source_id, src.name);
      }
    }
    const waiters = settledWaiters;
    settledWaiters = [];
    for (const w of waiters) w();
  };
  context.subscriptions.push(
    pipeline.onEvents((events) => {
      pending.push(...events);
      flushTimer ??= setTimeout(flushEvents, 16);
    }),
    pipeline.onDidCall((call) => {
      if (call.caller.session_id !== LOCAL_SESSION) statusBar.agentActive(call.caller.session_id);
    }),
    controller.onDidChangeProject(() => {
      codesTree.refresh();
      sourcesTree.refresh();
      casesTree.refresh();
      segmentsTree.show(undefined);
      decorations.refreshAll();
      void editTracker.trackOpenDocuments();
    }),
    registerLmTools(pipeline, [...TOOLS, ...EDITOR_TOOLS]),
    registerCommands(
      {
        ...commandTable({ wb, docs, codesTree, sourcesTree, segmentsTree, decorations, state: context.workspaceState, showLog: () => logger.channel.show() }),
        'marginalia.project.new': (file?: string) => newProject(controller, file),
        'marginalia.project.open': (file?: string) => openProject(controller, file),
        'marginalia.project.close': () => controller.close(),
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
    segmentsTree,
    decorations,
    editTracker,
    documents: docs,
    statusBar,
    settled: () =>
      new Promise<void>((resolve) => {
        if (!flushTimer && pending.length === 0) resolve();
        else settledWaiters.push(resolve);
      }),
  };

  await vscode.commands.executeCommand('setContext', 'marginalia.projectOpen', false);
  void autoOpen(controller, logger);
  return api;
}

export async function deactivate(): Promise<void> {
  await controllerRef?.close();
}

/** A workspace with exactly one `.qda` file opens it automatically. */
async function autoOpen(controller: ProjectController, logger: OutputLogger): Promise<void> {
  const found = await vscode.workspace.findFiles('**/*.qda', '**/node_modules/**', 2);
  if (found.length !== 1 || !found[0]) return;
  try {
    await controller.open(found[0].fsPath);
  } catch (e) {
    logger.error('could not open the workspace project', e);
    void vscode.window.showErrorMessage(`Marginalia could not open ${vscode.workspace.asRelativePath(found[0])}: ${(e as Error).message}`);
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
