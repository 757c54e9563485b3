import type * as vscode from 'vscode';
import { newUuid } from '../../core/ids';
import type { Segment } from '../../domain/model';
import type { TextEdit } from '../../domain/sourceEdits';
import { callerTops, type StackOwner } from '../../domain/undoRedo';
import { applyCodeTool } from '../../tools/capabilityTools';
import { deleteSegmentTool } from '../../tools/coreTools';
import { redoTool, undoTool } from '../../tools/undoTools';
import { codingsUndoCannotRestore, type EditBoundAction, type EditBoundActions, type EditedCoding } from '../undo/editBoundActions';
import type { Workbench } from '../workbench';

/** Edits of one document stored in one `apply_source_edits` call: typed by the researcher, or one undo or redo step of the editor. */
export interface EditBatch {
  /** the document's URI as a string */
  key: string;
  sourceId: number;
  doc: vscode.TextDocument;
  /** in order, each in the coordinates the previous left (code points) */
  edits: TextEdit[];
  /** the document text (UTF-16) before the first edit and after the last */
  before: string;
  after: string;
  reason: 'typed' | 'undo' | 'redo';
}

/** What {@link EditedCodings.beforeStore} did for a typed batch (empty for an undo or redo). */
export interface PreparedBatch {
  /** codings taken off because their whole text goes */
  removed: Segment[];
  /** codings taken off because an edge is edited: coded again on what is left once the edit is stored */
  reshaped: EditedCoding<Segment>[];
  /** the correlation ids of the actions made */
  actions: string[];
}

/**
 * Keeps the codings that a text edit takes away undoable with the edit (see src/ui/undo/editBoundActions.ts for
 * the design): around the `apply_source_edits` call of each batch,
 * - a TYPED batch: before it is stored, the codings whose text it deletes and the researcher's codings whose edge
 *   it edits are taken off in one removal action (delete_segment, as the researcher, so their events hold them
 *   whole); after it is stored, what is left of the latter is coded in one reshape action (apply_code, with memo
 *   and importance);
 * - an UNDO step of the editor: before it is stored, a reshape action whose text after is the text the undo starts
 *   from is undone (what is left of the codings is taken off where it was made); after it is stored, a removal
 *   action whose text before is the document's text now is undone (the `undo` tool puts the codings back whole);
 * - a REDO step: before it is stored, a removal action whose text before is the text the redo starts from is redone
 *   (its codings are still whole, so the redo records them whole for the next undo); after it is stored, a reshape
 *   action whose text after is the document's text now (its codings are made on the text after the edit).
 * Another coder's coding whose edge is edited is left to shrink as before (it could not be coded again as theirs).
 * Every call goes through the pipeline as the researcher, with its events; failures are logged and leave the
 * text edit alone.
 */
export class EditedCodings {
  constructor(
    private readonly wb: Workbench,
    private readonly bound: EditBoundActions,
  ) {}

  private owner(): StackOwner {
    const c = this.wb.caller();
    return { client_type: c.client_type, user: c.user };
  }

  /** Calls a tool as the researcher with a given correlation id; false (logged) when it failed. */
  private async invoke(tool: string, args: Record<string, unknown>, correlationId: string): Promise<boolean> {
    const out = await this.wb.pipeline.invoke(tool, args, { ...this.wb.caller(), correlation_id: correlationId });
    if (!out.envelope.success) this.wb.logger.warn(`${tool} for an edit's codings failed: ${out.envelope.error_code} ${out.envelope.error}`);
    return out.envelope.success;
  }

  /**
   * Runs before a batch is stored: after typing, takes off (through the pipeline, as one undoable action) the
   * researcher's codings the edits delete whole or cut at an edge, which the editor's own undo could not bring back;
   * before an undo or redo of such typing, follows the matching Marginalia action. Returns what it took off and the
   * actions it bound to the batch. A failing call is logged and skipped, never thrown.
   */
  async beforeStore(batch: EditBatch): Promise<PreparedBatch> {
    const prepared: PreparedBatch = { removed: [], reshaped: [], actions: [] };
    const repo = this.wb.repo();
    if (!repo) return prepared;
    // taken off while the text is still the one they were recorded in: a removal (whole codings) before a redo, a
    // reshape (the codings left by the edit) before an undo
    if (batch.reason === 'redo') await this.follow(batch, 'redo', (a) => a.kind === 'removal' && a.before === batch.before);
    if (batch.reason === 'undo') await this.follow(batch, 'undo', (a) => a.kind === 'reshape' && a.after === batch.before);
    if (batch.reason !== 'typed') return prepared;
    // typing that only inserts cuts no coding (codingsUndoCannotRestore finds none): the source's codings are not read
    if (batch.edits.every((e) => e.start_pos === e.end_pos)) return prepared;
    const user = this.wb.caller().user;
    const edited = codingsUndoCannotRestore(repo.listSegmentsForSource(batch.sourceId), batch.edits).filter(
      (x) => x.after === null || x.segment.owner === user,
    );
    if (edited.length === 0) return prepared;
    const id = this.bind(batch, 'removal', prepared);
    for (const x of edited) {
      if (!(await this.invoke(deleteSegmentTool.name, { segment_id: x.segment.segment_id }, id))) continue;
      if (x.after) prepared.reshaped.push(x);
      else prepared.removed.push(x.segment);
    }
    return prepared;
  }

  /** Remembers a new edit-bound action of `batch` (before its first call) and returns its correlation id. */
  private bind(batch: EditBatch, kind: EditBoundAction['kind'], prepared: PreparedBatch): string {
    const id = newUuid();
    this.bound.add({ correlation_id: id, kind, key: batch.key, before: batch.before, after: batch.after });
    prepared.actions.push(id);
    return id;
  }

  /** Runs after a batch is stored. */
  async afterStore(batch: EditBatch, prepared: PreparedBatch): Promise<void> {
    // made again once the text is the one they were recorded in: a removal after an undo, a reshape after a redo
    if (batch.reason === 'undo') await this.follow(batch, 'undo', (a) => a.kind === 'removal' && a.before === batch.after);
    else if (batch.reason === 'redo') await this.follow(batch, 'redo', (a) => a.kind === 'reshape' && a.after === batch.after);
    else if (prepared.reshaped.length > 0) {
      const id = this.bind(batch, 'reshape', prepared);
      for (const { segment: s, after } of prepared.reshaped) {
        if (!after) continue;
        const args: Record<string, unknown> = {
          code_id: s.code_id,
          source_id: s.source_id,
          start_pos: after.start_pos,
          end_pos: after.end_pos,
          importance: s.importance,
        };
        if (s.memo !== null) args.memo = s.memo;
        await this.invoke(applyCodeTool.name, args, id);
      }
    }
  }

  /** The batch could not be stored (the editor and the project drifted apart): its actions are ordinary ones from now on. */
  abandon(prepared: PreparedBatch): void {
    for (const id of prepared.actions) this.bound.delete(id);
  }

  /**
   * Undoes (or redoes) the researcher's Marginalia actions bound to this document while the top of the undo (redo)
   * stack is one and `matches` it. Never touches an action that is not edit-bound, nor one of another document.
   */
  private async follow(batch: EditBatch, kind: 'undo' | 'redo', matches: (a: EditBoundAction) => boolean): Promise<void> {
    for (let guard = 0; guard < 16; guard++) {
      const repo = this.wb.repo();
      if (!repo) return;
      const tops = callerTops(repo, this.owner());
      const top = kind === 'undo' ? tops.undo : tops.redo?.action;
      const action = top ? this.bound.get(top.correlation_id) : undefined;
      if (!action || action.key !== batch.key || !matches(action)) return;
      const id = newUuid();
      // a redo is itself on the undo stack from now on (src/domain/undoRedo.ts): bound to the text like the action
      if (kind === 'redo') this.bound.add({ ...action, correlation_id: id });
      else this.bound.addFollower(id);
      if (!(await this.invoke(kind === 'undo' ? undoTool.name : redoTool.name, {}, id))) return;
    }
  }
}
