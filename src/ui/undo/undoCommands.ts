import * as vscode from 'vscode';
import type { EventRecord } from '../../domain/events';
import { callerTops, previewNext, type StackOwner } from '../../domain/undoRedo';
import { redoTool, undoTool } from '../../tools/undoTools';
import type { SourceDocuments } from '../documents/sourceDocuments';
import type { MarginaliaStatusBar } from '../statusBar';
import { LOCAL_SESSION, type Workbench } from '../workbench';
import { editBoundActions, type EditBoundActions } from './editBoundActions';
import { EditorUndoFrames } from './editorUndoFrames';

/**
 * Marginalia: Undo / Redo in VS Code (issue 13, item 1): `marginalia.undo` and `marginalia.redo`, bound to
 * Ctrl+Z / Ctrl+Shift+Z / Ctrl+Y (Cmd+Z / Cmd+Shift+Z on macOS) in the editors of the open project's sources
 * (context key {@link SOURCE_EDITOR_CONTEXT}), and in the command palette anywhere.
 *
 * In a source editor the keys follow the order in which the researcher acted: the researcher's next
 * Marginalia undo (`previewNext`, src/domain/undoRedo.ts, as the researcher's caller: client type LOCAL_UI
 * and the coder name) is compared with the text the editor's own undo would take back (when it was typed,
 * {@link EditorUndoFrames}). When the Marginalia action came later (a coding after typing), the `undo` tool
 * runs through the pipeline (`Workbench.call`) and the text is never touched; otherwise VS Code's own `undo`
 * runs on that editor (codings follow the text as they do for any edit). Redo is symmetric: whichever undo
 * happened LAST is redone first (Marginalia's redo top is the action whose undo has the highest sequence
 * number; the editor's is the time of its last undo). Typed edits not yet stored (the EditTracker batches
 * them) are stored before the `undo`/`redo` tool runs, so the tool sees the editor's text.
 *
 * Outside a source editor (views, other files, the palette with no source open) the commands undo or redo
 * the researcher's Marginalia actions only. The status bar says what was undone or redone for five seconds
 * ("Undid: coded 'Food security' in interview-04", "Undid: typing in interview-04"); nothing left to undo is
 * a quiet status bar message; an action that cannot be undone (a merge, deleting a code with its codings)
 * is a warning naming it; undo stops there (it never skips it).
 *
 * The Marginalia actions the edit tracker makes for a text edit (codings whose text the edit deleted or whose edge
 * it cut, src/ui/undo/editBoundActions.ts) belong to the text: they do not end a frame of typing, and when one of
 * the active editor's document is next to undo or redo, the editor's own undo or redo runs; the edit tracker then
 * undoes or redoes the action with it (stored before the command returns, so the next step sees the result).
 */

/** The context key: the active editor shows a source of the open project (set by {@link UndoCommands}). */
export const SOURCE_EDITOR_CONTEXT = 'marginalia.sourceEditorFocus';

/**
 * What one `marginalia.undo` / `marginalia.redo` did: `marginalia` ran the undo/redo tool (`description` is
 * the action in words), `editor` ran VS Code's own undo/redo in the source editor, `none` found nothing to
 * do, `refused` was told the action cannot be undone or redone (`message` says why; nothing changed).
 */
export type UndoStep =
  | { by: 'marginalia'; description: string; correlation_id: string }
  | { by: 'editor'; source_name: string }
  | { by: 'none' }
  | { by: 'refused'; message: string };

/**
 * Event types that are bookkeeping, not an action of the researcher (as src/domain/undoRedo.ts), and the calls the
 * edit tracker makes for a text edit (`bound`).
 */
function isResearcherAction(e: EventRecord, bound: EditBoundActions): boolean {
  if (e.caused_by.session_id !== LOCAL_SESSION || bound.isBound(e.metadata.correlation_id)) return false;
  if (/^(approval|session|suggestion|analysis)\./.test(e.event_type) || e.event_type === 'source.metadata_suggested') return false;
  if (e.event_type === 'source.text_edited' || e.event_type === 'source.text_reconciled') return false;
  return !(e.event_type === 'coding.segment_uncoded' && e.payload.reason === 'text deleted');
}

/**
 * Keeps the editor's undo order ({@link EditorUndoFrames}) for the open sources' documents, the context key
 * {@link SOURCE_EDITOR_CONTEXT}, and implements the two commands ({@link commands}).
 */
export class UndoCommands implements vscode.Disposable {
  /** the editor's undo order per source document (exposed for tests) */
  readonly frames = new EditorUndoFrames();
  /** the text of each open source document as last seen (UTF-16), by URI string: the text before a change */
  private readonly texts = new Map<string, string>();
  /** the sequence number of the researcher's latest Marginalia action (ends a frame of typing) */
  private lastActionSeq = 0;
  /** undo/redo steps run one after the other (a held Ctrl+Z sends many) */
  private queue: Promise<unknown> = Promise.resolve();
  private readonly subscriptions: vscode.Disposable[] = [];
  /** the Marginalia actions that belong to text edits (shared with the edit tracker) */
  private readonly bound: EditBoundActions;

  constructor(
    private readonly wb: Workbench,
    private readonly docs: SourceDocuments,
    private readonly flushEdits: () => Promise<void>,
    private readonly statusBar: MarginaliaStatusBar,
  ) {
    this.bound = editBoundActions(wb);
    this.subscriptions.push(
      vscode.workspace.onDidOpenTextDocument((d) => this.track(d)),
      vscode.workspace.onDidCloseTextDocument((d) => this.texts.delete(d.uri.toString())),
      vscode.workspace.onDidChangeTextDocument((e) => this.onChange(e)),
      vscode.window.onDidChangeActiveTextEditor(() => this.updateContext()),
      wb.pipeline.onEvents((events) => this.onEvents(events)),
      wb.controller.onDidChangeProject(() => {
        this.frames.clear();
        this.texts.clear();
        this.lastActionSeq = 0;
        this.retrack();
      }),
    );
    this.retrack();
  }

  /** The command handlers, by command id, for registerCommands. */
  commands(): Record<string, () => Promise<UndoStep>> {
    return {
      'marginalia.undo': () => this.serial(() => this.undo()),
      'marginalia.redo': () => this.serial(() => this.redo()),
    };
  }

  private serial(step: () => Promise<UndoStep>): Promise<UndoStep> {
    const next = this.queue.then(step, step);
    this.queue = next.catch(() => undefined);
    return next;
  }

  private owner(): StackOwner {
    const c = this.wb.caller();
    return { client_type: c.client_type, user: c.user };
  }

  /** The active editor when it shows a tracked source document. */
  private sourceEditor(): vscode.TextEditor | undefined {
    const ed = vscode.window.activeTextEditor;
    return ed && this.texts.has(ed.document.uri.toString()) ? ed : undefined;
  }

  /**
   * The editor to step in: the one showing the document of the edit-bound action `correlationId` when it is
   * visible (its text goes back with the action, wherever the focus is), else the active source editor.
   */
  private editorFor(correlationId: string | undefined): vscode.TextEditor | undefined {
    const key = correlationId === undefined ? undefined : this.bound.get(correlationId)?.key;
    const shown = key === undefined ? undefined : vscode.window.visibleTextEditors.find((e) => e.document.uri.toString() === key);
    return shown ?? this.sourceEditor();
  }

  private async undo(): Promise<UndoStep> {
    const repo = this.wb.repo();
    if (!repo) return this.nothing('Nothing to undo: no project is open');
    const next = previewNext(repo, this.owner(), 'undo');
    const editor = this.editorFor(next?.correlation_id);
    if (editor) {
      const key = editor.document.uri.toString();
      const typedAt = this.frames.undoStamp(key);
      // the editor's text goes first when it was typed after the researcher's last Marginalia action, or when
      // that action belongs to a text edit of this document (the tracker undoes it with the text)
      const ofThisText = next !== null && this.bound.get(next.correlation_id)?.key === key;
      if (next === null || ofThisText || (typedAt !== null && next.sequence_number <= typedAt)) {
        if (await this.editorStep(editor, 'undo')) return this.editorDone(editor, 'Undid');
        // the editor had nothing to undo after all (its stack was lost): Marginalia's turn
        this.frames.forgetUndo(key);
      }
    }
    if (!next) return this.nothing('Nothing to undo');
    if (next.not_undoable) return this.refused(next.not_undoable.message);
    await this.flushEdits();
    let failure: { code: string; message: string } | undefined;
    const r = await this.wb.call(undoTool, {}, { onFailure: (code, message) => (failure = { code, message }) });
    if (r) return this.done('Undid', r.undone);
    if (failure?.code === 'NOTHING_TO_UNDO') return this.nothing('Nothing to undo');
    return this.refused(failure?.message ?? 'Undo failed.');
  }

  private async redo(): Promise<UndoStep> {
    const repo = this.wb.repo();
    if (!repo) return this.nothing('Nothing to redo: no project is open');
    const top = callerTops(repo, this.owner()).redo;
    // when the researcher's Marginalia undo happened: its last event's sequence number
    const undoneAt = top ? (top.undo.events[top.undo.events.length - 1] as EventRecord).metadata.sequence_number : null;
    const editor = this.editorFor(top?.action.correlation_id);
    if (editor) {
      const key = editor.document.uri.toString();
      const textUndoneAt = this.frames.redoStamp(key);
      // whichever was undone last is redone first; an action of a text edit of this document comes back with its text
      const ofThisText = top !== null && this.bound.get(top.action.correlation_id)?.key === key;
      if (undoneAt === null || ofThisText || (textUndoneAt !== null && textUndoneAt >= undoneAt)) {
        if (await this.editorStep(editor, 'redo')) return this.editorDone(editor, 'Redid');
        this.frames.forgetRedo(key);
      }
    }
    if (undoneAt === null) return this.nothing('Nothing to redo');
    await this.flushEdits();
    let failure: { code: string; message: string } | undefined;
    const r = await this.wb.call(redoTool, {}, { onFailure: (code, message) => (failure = { code, message }) });
    if (r) return this.done('Redid', r.redone);
    if (failure?.code === 'NOTHING_TO_REDO') return this.nothing('Nothing to redo');
    return this.refused(failure?.message ?? 'Redo failed.');
  }

  /**
   * Runs VS Code's own `undo` or `redo` on `editor` (focused first, so the command reaches it and not a view
   * that had focus), then has the edit tracker store the change (and the codings that follow it). True when the
   * document changed.
   */
  private async editorStep(editor: vscode.TextEditor, kind: 'undo' | 'redo'): Promise<boolean> {
    const doc = editor.document;
    const version = doc.version;
    await vscode.window.showTextDocument(doc, { viewColumn: editor.viewColumn, preserveFocus: false });
    await vscode.commands.executeCommand(kind);
    if (doc.version === version) return false;
    await this.flushEdits();
    return true;
  }

  private editorDone(editor: vscode.TextEditor, verb: 'Undid' | 'Redid'): UndoStep {
    const id = this.docs.sourceIdFor(editor.document);
    const name = (id !== undefined ? this.wb.repo()?.getSource(id)?.name : undefined) ?? vscode.workspace.asRelativePath(editor.document.uri);
    this.statusBar.showNotice(`${verb}: typing in ${name}`, 5000, verb === 'Undid' ? '$(discard)' : '$(redo)');
    return { by: 'editor', source_name: name };
  }

  private done(verb: 'Undid' | 'Redid', outcome: { correlation_id: string; description: string }): UndoStep {
    this.statusBar.showNotice(`${verb}: ${outcome.description}`, 5000, verb === 'Undid' ? '$(discard)' : '$(redo)');
    return { by: 'marginalia', description: outcome.description, correlation_id: outcome.correlation_id };
  }

  private nothing(message: string): UndoStep {
    this.statusBar.showNotice(message, 3000, '$(info)');
    return { by: 'none' };
  }

  private refused(message: string): UndoStep {
    void vscode.window.showWarningMessage(message);
    this.statusBar.showNotice(message, 5000, '$(warning)');
    return { by: 'refused', message };
  }

  // ------------------------------------------------------------------------------------------ tracking

  /** Starts following a document when it shows a source of the open project. */
  private track(doc: vscode.TextDocument): void {
    if (!this.wb.repo() || this.docs.sourceIdFor(doc) === undefined) return;
    this.texts.set(doc.uri.toString(), doc.getText());
    this.updateContext();
  }

  /** Follows exactly the open documents that show a source (after a project opened, a source came or went). */
  private retrack(): void {
    const open = new Set<string>();
    for (const d of vscode.workspace.textDocuments) {
      const key = d.uri.toString();
      if (this.wb.repo() && this.docs.sourceIdFor(d) !== undefined) {
        open.add(key);
        if (!this.texts.has(key)) this.texts.set(key, d.getText());
      }
    }
    for (const key of [...this.texts.keys()]) if (!open.has(key)) this.texts.delete(key);
    this.updateContext();
  }

  private updateContext(): void {
    void vscode.commands.executeCommand('setContext', SOURCE_EDITOR_CONTEXT, this.sourceEditor() !== undefined);
  }

  private onChange(e: vscode.TextDocumentChangeEvent): void {
    if (e.contentChanges.length === 0) return;
    const key = e.document.uri.toString();
    const before = this.texts.get(key);
    const repo = this.wb.repo();
    if (before === undefined || !repo) return;
    const after = e.document.getText();
    this.texts.set(key, after);
    // a read-only `qda:` document changes only when its stored text does: nothing of the editor's own to undo
    if (e.document.uri.scheme !== 'file') return;
    const clock = repo.lastEventSeq();
    if (e.reason === vscode.TextDocumentChangeReason.Undo) this.frames.undone(key, after, clock);
    else if (e.reason === vscode.TextDocumentChangeReason.Redo) this.frames.redone(key, after);
    else this.frames.typed(key, before, after, clock, this.lastActionSeq);
  }

  private onEvents(events: EventRecord[]): void {
    let sources = false;
    for (const e of events) {
      if (isResearcherAction(e, this.bound)) this.lastActionSeq = Math.max(this.lastActionSeq, e.metadata.sequence_number);
      if (/^source\.(imported|deleted|renamed|moved)$/.test(e.event_type)) sources = true;
    }
    if (sources) this.retrack();
  }

  dispose(): void {
    for (const s of this.subscriptions) s.dispose();
  }
}
