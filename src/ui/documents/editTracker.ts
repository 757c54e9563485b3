import * as vscode from 'vscode';
import { OffsetMap } from '../../core/offsets';
import type { TextEdit } from '../../domain/sourceEdits';
import { applySourceEditsTool, reconcileSourceTextTool } from '../../tools/editorTools';
import { editBoundActions } from '../undo/editBoundActions';
import type { Workbench } from '../workbench';
import { EditedCodings, type EditBatch } from './editedCodings';
import type { SourceDocuments } from './sourceDocuments';

/**
 * Keeps codings attached to their text while the researcher edits a source's workspace file:
 * - every document change is converted from UTF-16 ranges to code points (against the text before the
 *   change) and sent through the pipeline (`apply_source_edits`), which updates the stored text and moves,
 *   resizes or removes segments; removed segments are announced;
 * - a file that changed outside VS Code is reconciled when it is opened (`reconcile_source_text`):
 *   segments are re-anchored by their quoted text, and those that cannot be are listed for the
 *   researcher (they are kept aside, never silently dropped).
 * - codings an edit deletes or cuts at an edge are taken off as undoable actions of the researcher, and put back
 *   (or taken off again) when VS Code's own undo (or redo) reverses the edit: {@link EditedCodings}.
 * Calls are serialised so edits reach the project in the order they were typed.
 */
export class EditTracker implements vscode.Disposable {
  /** the text of each tracked document as the project last stored it (UTF-16 string) */
  private readonly shadow = new Map<string, { sourceId: number; text: string }>();
  private queue: Promise<unknown> = Promise.resolve();
  /** when the researcher last edited each source (ms since epoch) */
  private readonly lastEdit = new Map<number, number>();
  /** edits typed but not yet stored, per document: sent together after a short pause (or on flush) */
  private readonly pendingEdits = new Map<string, EditBatch>();
  /** keeps the codings an edit takes away undoable with it */
  private readonly codings: EditedCodings;
  private sendTimer: NodeJS.Timeout | undefined;
  /** how long typing may pause before its edits are stored, in milliseconds (one store call per burst) */
  static readonly BATCH_MS = 250;
  private readonly subscriptions: vscode.Disposable[] = [];
  private readonly removedEmitter = new vscode.EventEmitter<{ sourceId: number; count: number }>();
  /** Fires after segments were removed because their text was deleted. */
  readonly onDidRemoveSegments = this.removedEmitter.event;

  constructor(
    private readonly wb: Workbench,
    private readonly docs: SourceDocuments,
  ) {
    this.codings = new EditedCodings(wb, editBoundActions(wb));
    this.subscriptions.push(
      vscode.workspace.onDidOpenTextDocument((d) => this.enqueue(() => this.track(d))),
      vscode.workspace.onDidCloseTextDocument((d) => {
        this.shadow.delete(d.uri.toString());
        editBoundActions(wb).forgetDocument(d.uri.toString());
      }),
      vscode.workspace.onDidChangeTextDocument((e) => this.onChange(e)),
    );
  }

  /** Starts tracking the open documents of the (newly opened) project. */
  trackOpenDocuments(): Promise<void> {
    this.shadow.clear();
    // source ids of the previous project mean nothing in this one
    this.lastEdit.clear();
    editBoundActions(this.wb).clear();
    return this.enqueue(async () => {
      for (const d of vscode.workspace.textDocuments) await this.track(d);
    });
  }

  /**
   * True while the researcher is editing source `sourceId`: a document of it has unsaved changes, or it
   * was edited within the last `windowMs` milliseconds (default 10 s).
   */
  isBeingEdited(sourceId: number, windowMs = 10_000): boolean {
    const last = this.lastEdit.get(sourceId);
    if (last !== undefined && Date.now() - last < windowMs) return true;
    for (const [uri, t] of this.shadow)
      if (t.sourceId === sourceId && vscode.workspace.textDocuments.some((d) => d.uri.toString() === uri && d.isDirty)) return true;
    return false;
  }

  /** Stores every edit typed so far (without waiting for the pause) and resolves when they are stored. */
  flush(): Promise<void> {
    if (this.sendTimer) clearTimeout(this.sendTimer);
    this.sendTimer = undefined;
    for (const batch of [...this.pendingEdits.values()]) this.sendNow(batch);
    return this.enqueue(async () => undefined);
  }

  private enqueue(job: () => Promise<void> | void): Promise<void> {
    const next = this.queue.then(job, job).catch((e) => this.wb.logger.error('edit tracking failed', e));
    this.queue = next;
    return next;
  }

  private async track(doc: vscode.TextDocument): Promise<void> {
    if (doc.uri.scheme !== 'file' || !this.wb.repo()) return;
    const sourceId = this.docs.sourceIdFor(doc);
    if (sourceId === undefined) return;
    const stored = this.wb.repo()?.getSourceText(sourceId);
    if (stored === null || stored === undefined) return;
    const text = doc.getText();
    if (text !== stored) await this.reconcile(sourceId, doc, text);
    this.shadow.set(doc.uri.toString(), { sourceId, text });
  }

  private async reconcile(sourceId: number, doc: vscode.TextDocument, text: string): Promise<void> {
    const r = await this.wb.call(reconcileSourceTextTool, { source_id: sourceId, text });
    if (!r) return;
    const name = vscode.workspace.asRelativePath(doc.uri);
    this.wb.logger.info(`reconciled ${name}: ${r.kept} kept, ${r.relocated} re-anchored, ${r.orphaned.length} could not be re-anchored`);
    if (r.orphaned.length > 0) {
      const show = 'Show Them';
      const choice = await vscode.window.showWarningMessage(
        `${name} changed outside VS Code. ${r.orphaned.length} coding(s) could not be found in the new text and were set aside (not deleted).`,
        show,
      );
      if (choice === show) {
        await vscode.window.showQuickPick(
          r.orphaned.map((o) => ({
            label: o.text.replace(/\s+/g, ' ').slice(0, 100),
            description: `was at ${o.start_pos}–${o.end_pos}`,
            detail: `code ${o.code_id}`,
          })),
          { title: 'Codings set aside (their text is no longer in the file)' },
        );
      }
    } else if (r.relocated > 0) {
      void vscode.window.showInformationMessage(`${name} changed outside VS Code; ${r.relocated} coding(s) were re-anchored to their text.`);
    }
  }

  /**
   * Converts a change to code point edits against the text before it (synchronously, so every change is
   * measured against the right text) and adds them to the document's pending batch; the batch is stored
   * after a pause of {@link EditTracker.BATCH_MS} (typing a word is one store call, not one per key). An
   * undo or redo of the editor is a batch of its own, stored at once (its codings follow it: {@link EditedCodings}).
   */
  private onChange(e: vscode.TextDocumentChangeEvent): void {
    if (e.contentChanges.length === 0) return;
    const key = e.document.uri.toString();
    const tracked = this.shadow.get(key);
    if (!tracked) return;
    this.lastEdit.set(tracked.sourceId, Date.now());
    const before = new OffsetMap(tracked.text);
    // ranges refer to the text before the event; applying from the end keeps earlier offsets valid
    const changes = [...e.contentChanges].sort((a, b) => b.rangeOffset - a.rangeOffset);
    const edits: TextEdit[] = changes.map((c) => ({
      start_pos: before.toCp(c.rangeOffset),
      end_pos: before.toCp(c.rangeOffset + c.rangeLength),
      text: c.text,
    }));
    const after = e.document.getText();
    this.shadow.set(key, { sourceId: tracked.sourceId, text: after });
    const reason = e.reason === vscode.TextDocumentChangeReason.Undo ? 'undo' : e.reason === vscode.TextDocumentChangeReason.Redo ? 'redo' : 'typed';
    const batch = this.pendingEdits.get(key);
    if (batch && batch.reason === 'typed' && reason === 'typed') {
      batch.edits.push(...edits);
      batch.after = after;
    } else {
      // typing before an undo is stored before it
      if (batch) this.sendNow(batch);
      const next: EditBatch = { key, sourceId: tracked.sourceId, doc: e.document, edits, before: tracked.text, after, reason };
      if (reason !== 'typed') {
        this.sendNow(next);
        return;
      }
      this.pendingEdits.set(key, next);
    }
    if (this.sendTimer) clearTimeout(this.sendTimer);
    this.sendTimer = setTimeout(() => void this.flush(), EditTracker.BATCH_MS);
  }

  /** Takes a batch out of the pending ones and queues it for storing. */
  private sendNow(batch: EditBatch): void {
    if (this.pendingEdits.get(batch.key) === batch) this.pendingEdits.delete(batch.key);
    void this.enqueue(() => this.send(batch));
  }

  /**
   * Stores one batch through the pipeline, with the codings it takes away or that follow an undo or redo
   * ({@link EditedCodings}); on drift, reconciles by quoted text.
   */
  private async send(batch: EditBatch): Promise<void> {
    const prepared = await this.codings.beforeStore(batch);
    const expected = new OffsetMap(batch.after).cpLength;
    const r = await this.wb.call(applySourceEditsTool, { source_id: batch.sourceId, edits: batch.edits, expected_length: expected }, { quiet: true });
    if (!r) {
      // the editor and the project drifted apart: store the editor's text and re-anchor by quotes
      this.codings.abandon(prepared);
      await this.reconcile(batch.sourceId, batch.doc, batch.after);
      return;
    }
    await this.codings.afterStore(batch, prepared);
    const removed = [...r.removed.map((x) => x.text), ...prepared.removed.map((x) => x.text)];
    if (removed.length > 0) {
      this.removedEmitter.fire({ sourceId: batch.sourceId, count: removed.length });
      const undoable = prepared.removed.length > 0 ? ' (Undo puts them back)' : '';
      void vscode.window.showInformationMessage(
        `Removed ${removed.length} coding(s) whose text was deleted: ${removed.map((x) => `“${x.slice(0, 40)}”`).join(', ')}${undoable}`,
      );
    }
  }

  dispose(): void {
    if (this.sendTimer) clearTimeout(this.sendTimer);
    for (const s of this.subscriptions) s.dispose();
    this.removedEmitter.dispose();
  }
}
