/**
 * Domain events from every session (UI, HTTP, LM tools, ...) update the views. Events are batched: drawn at once
 * after a quiet spell (a researcher's action is drawn without waiting for a frame), else per 16 ms frame (an
 * agent's burst). Each view redraws only what the batch changed.
 */
import * as vscode from 'vscode';
import { announceProject } from '../../cli/compose';
import { replacesProjectState, type EventRecord } from '../../domain/events';
import { settings } from '../host/settings';
import { causedByAgent, LOCAL_SESSION } from '../workbench';
import type { AgentCore } from './agentCore';
import type { Observer } from './observer';
import type { Views } from './views';

/** A batch waits this long for more events when the last one was drawn less than {@link QUIET_MS} ago (milliseconds: one frame). */
const FRAME_MS = 16;
/** After this long without a batch (milliseconds), the next one is drawn at once. */
const QUIET_MS = 100;
/** The History view refreshes this long after the last batch, once the automatic snapshot (debounced) has landed (milliseconds). */
const HISTORY_REFRESH_MS = 3000;

/** Code events that change what the editors draw (a code's name or colour; not a code made or moved). */
const REDRAWN_CODE_EVENTS = new Set(['coding.code_renamed', 'coding.code_updated', 'coding.code_deleted', 'coding.codes_merged']);

/** The sources whose decorations a batch changes: those its events name, and every visible editor's when a code's look changed. */
function sourcesToRedraw(views: Views, events: readonly EventRecord[]): Set<number> {
  const sources = new Set<number>();
  for (const e of events) {
    const sid = e.payload.source_id;
    if (typeof sid === 'number') sources.add(sid);
    if (REDRAWN_CODE_EVENTS.has(e.event_type)) {
      for (const ed of vscode.window.visibleTextEditors) {
        const s = views.docs.sourceIdFor(ed.document);
        if (s !== undefined) sources.add(s);
      }
    }
  }
  return sources;
}

/** Redraws the trees, Retrieval, the decorations and Approvals for what a batch of events changed. */
function refreshViews(views: Views, events: readonly EventRecord[]): void {
  const { codesTree, sourcesTree, casesTree, retrieval, decorations, approvals } = views;
  const codes = events.some((e) => e.event_type.startsWith('coding.'));
  const sourceList = events.some((e) => e.event_type.startsWith('source.'));
  const sources = sourcesToRedraw(views, events);
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
  if (events.some((e) => replacesProjectState(e.event_type))) {
    // a restore or a sync may change everything: redraw every view and editor
    codesTree.refresh();
    sourcesTree.refresh();
    casesTree.refresh();
    void retrieval.refresh();
    decorations.refreshAll();
    void views.mergeConflicts.refresh();
  }
}

/** What single events do: an approval request notifies, an agent's coding flashes, an edited source's open document re-reads its text. */
function applyEventEffects(views: Views, events: readonly EventRecord[]): void {
  for (const e of events) {
    if (e.event_type === 'approval.requested') void views.approvals.notify(e.aggregate_id);
    if (e.event_type === 'coding.segment_coded' && causedByAgent(e.caused_by)) {
      views.decorations.flash(
        { source_id: e.payload.source_id as number, start_pos: e.payload.start as number, end_pos: e.payload.end as number },
        settings.flashMs(),
      );
    }
    if (e.event_type === 'source.text_edited' || e.event_type === 'source.text_reconciled') {
      const src = views.wb.repo()?.getSource(e.payload.source_id as number);
      if (src) views.docs.refresh(src.source_id, src.name);
    }
  }
}

/** The event routing's handle (MarginaliaApi.settled). */
export interface EventRouting {
  /** resolves once the views have caught up with every event published so far */
  settled(): Promise<void>;
}

/**
 * Routes the pipeline's events to the views, the Agent Activity log, the observer and the status bar's agent
 * indicator; pushes its listeners to `context.subscriptions`.
 */
export function routeEvents(context: vscode.ExtensionContext, core: AgentCore, views: Views, observer: Observer): EventRouting {
  let pending: EventRecord[] = [];
  let flushTimer: NodeJS.Timeout | undefined;
  let lastFlush = -Infinity;
  let settledWaiters: (() => void)[] = [];
  // the history view follows the automatic snapshots, which land shortly after changes (debounced)
  let historyTimer: NodeJS.Timeout | undefined;
  const historyRefresh = () => {
    if (historyTimer) clearTimeout(historyTimer);
    historyTimer = setTimeout(() => void views.history.refresh(), HISTORY_REFRESH_MS);
  };
  const flushEvents = () => {
    flushTimer = undefined;
    lastFlush = performance.now();
    const events = pending;
    pending = [];
    refreshViews(views, events);
    if (events.length > 0) historyRefresh();
    applyEventEffects(views, events);
    void observer.follower.onEvents(events);
    observer.notices.onEvents(events);
    const waiters = settledWaiters;
    settledWaiters = [];
    for (const w of waiters) w();
  };
  context.subscriptions.push(
    core.pipeline.onEvents((events) => {
      views.activity.recordEvents(events);
      pending.push(...events);
      flushTimer ??= setTimeout(flushEvents, performance.now() - lastFlush > QUIET_MS ? 0 : FRAME_MS);
    }),
    core.pipeline.onDidCall((call) => {
      views.activity.recordCall(call);
      // role agent marks an AI action (issue 14 item 1): the researcher's own calls over HTTP are not an active agent
      if (call.caller.session_id !== LOCAL_SESSION && !call.caller.researcher) views.statusBar.agentActive(call.caller.session_id);
    }),
  );
  return {
    settled: () =>
      new Promise<void>((resolve) => {
        if (!flushTimer && pending.length === 0) resolve();
        else settledWaiters.push(resolve);
      }),
  };
}

/**
 * Follows the open project: records `project.opened` / `project.closed` (as the researcher, host vscode) and
 * redraws every view and editor when another project opens or the project closes. Pushes its listeners.
 */
export function followProject(context: vscode.ExtensionContext, core: AgentCore, views: Views): void {
  const { controller, pipeline, logger } = core;
  context.subscriptions.push(
    controller.onDidChangeProject((opened) => {
      if (opened) announceProject(pipeline, opened, 'opened', 'vscode', settings.coderName(), logger);
    }),
    controller.onWillClose((closing) => announceProject(pipeline, closing, 'closed', 'vscode', settings.coderName(), logger)),
    controller.onDidChangeProject(() => {
      views.codesTree.refresh();
      views.sourcesTree.refresh();
      views.casesTree.refresh();
      views.approvals.refresh();
      views.activity.reload();
      void views.history.refresh();
      void views.retrieval.show(undefined);
      views.decorations.refreshAll();
      views.docs.refreshAll();
      void views.editTracker.trackOpenDocuments();
    }),
  );
}
