/**
 * Codings that a text edit takes away, kept undoable with the edit (issue 13, item 1: "Ctrl+Z restores the text but
 * not a coding removed by typing").
 *
 * When the researcher types over or deletes coded text, the store moves, resizes or removes the codings
 * (`apply_source_edits`, src/domain/sourceEdits.ts). Most of that the editor's own undo reverses by itself: the
 * inverse edit moves the codings back, and a coding that grew or shrank because text was typed or deleted strictly
 * inside it grows or shrinks back. Two cases it cannot reverse: a coding whose whole text was deleted (it is gone)
 * and a coding whose EDGE was edited (text replaced across its start or end: the inverse edit puts the text back
 * outside it, since text inserted at a coding's edge stays outside it).
 *
 * For those the edit tracker (src/ui/documents/editTracker.ts) takes the codings off as the researcher's own
 * Marginalia actions, through the pipeline: before it stores the edit, a REMOVAL action (delete_segment of each
 * such coding, whole), and after it, a RESHAPE action (apply_code of what is left of each coding whose edge was
 * edited, with its memo and importance). Two actions, so that a redo can take the codings off while the text still
 * holds them whole and code the rest once the text is edited. Both are ordinary actions
 * with full event payloads, so the domain's undo (src/domain/undoRedo.ts) can put the codings back exactly: same
 * code, positions, text, memo, importance and coder (a new segment id). This module remembers, per action, which
 * document it belongs to and the document text before and after the edit. When VS Code's own undo brings the text
 * back to an action's `before`, the tracker runs the `undo` tool for it; when VS Code's redo brings the text to
 * `after`, the `redo` tool. The undo/redo key bindings (src/ui/undo/undoCommands.ts) treat these actions as part of
 * the text: they neither end a frame of typing nor are undone before it, so the order in which the researcher
 * acted stays the one Ctrl+Z follows. Pure bookkeeping, no `vscode`; offsets are code points.
 */
import { codePointLength } from '../../core/text';
import { mapEnd, mapStart, type TextEdit } from '../../domain/sourceEdits';

/** An action the edit tracker made for a text edit (see the module comment). */
export interface EditBoundAction {
  /** the action's correlation id (every call of it carries it) */
  correlation_id: string;
  /** removal: codings taken off before the edit is stored; reshape: what is left of those whose edge was edited, coded after it */
  kind: 'removal' | 'reshape';
  /** the document (its URI as a string) */
  key: string;
  /** the document text (UTF-16) before the edit and after it */
  before: string;
  after: string;
}

/** Per workbench (one per window), the edit-bound actions and the correlation ids of the undo/redo calls following them. */
export class EditBoundActions {
  private readonly actions = new Map<string, EditBoundAction>();
  private readonly followers = new Set<string>();

  /** Remembers an action (before its first call is made, so listeners of its events already know it). */
  add(action: EditBoundAction): void {
    this.actions.set(action.correlation_id, action);
  }

  /** The action with this correlation id, or undefined. */
  get(correlationId: string): EditBoundAction | undefined {
    return this.actions.get(correlationId);
  }

  /** Forgets an action (its edit could not be stored: from now on it is an ordinary action). */
  delete(correlationId: string): void {
    this.actions.delete(correlationId);
  }

  /** Remembers the correlation id of an undo or redo call made to follow the editor's undo or redo. */
  addFollower(correlationId: string): void {
    this.followers.add(correlationId);
  }

  /** True for the calls of an edit-bound action and of the undo/redo calls that followed the editor. */
  isBound(correlationId: string): boolean {
    return this.actions.has(correlationId) || this.followers.has(correlationId);
  }

  /** Forgets a document's actions (it was closed: VS Code dropped its undo stack). */
  forgetDocument(key: string): void {
    for (const [id, a] of this.actions) if (a.key === key) this.actions.delete(id);
  }

  /** Forgets everything (another project was opened). */
  clear(): void {
    this.actions.clear();
    this.followers.clear();
  }
}

const REGISTRIES = new WeakMap<object, EditBoundActions>();

/** The registry of a workbench (the edit tracker and the undo commands share it). */
export function editBoundActions(workbench: object): EditBoundActions {
  let r = REGISTRIES.get(workbench);
  if (!r) REGISTRIES.set(workbench, (r = new EditBoundActions()));
  return r;
}

/** A coding as far as the edit check needs it: its range in code points. */
export interface CodedRange {
  start_pos: number;
  end_pos: number;
}

/** What a batch of edits does to a coding that its inverse would not undo. */
export interface EditedCoding<S extends CodedRange> {
  segment: S;
  /** its range after the edits, or null when its whole text is deleted */
  after: { start_pos: number; end_pos: number } | null;
}

/**
 * The codings among `segments` that the editor's undo of `edits` would NOT bring back by itself: those whose
 * text the edits delete entirely (`after` null) and those whose range after the edits, moved back through the
 * inverse edits, is not their range before (an edge was edited; `after` is the range left). `edits` apply in
 * order, each in the coordinates the previous left (as `apply_source_edits` takes them); positions move as the
 * store moves them ({@link mapStart} / {@link mapEnd}). The inverse of edit `[a, b) → n code points` is
 * `[a, a + n) → b - a code points`, applied last edit first.
 */
export function codingsUndoCannotRestore<S extends CodedRange>(segments: readonly S[], edits: readonly TextEdit[]): EditedCoding<S>[] {
  const sizes = edits.map((e) => ({ a: e.start_pos, b: e.end_pos, n: codePointLength(e.text) }));
  const out: EditedCoding<S>[] = [];
  for (const s of segments) {
    let start = s.start_pos;
    let end = s.end_pos;
    let gone = false;
    for (const { a, b, n } of sizes) {
      start = mapStart(start, a, b, n);
      end = mapEnd(end, a, b, n);
      if (start >= end) {
        gone = true;
        break;
      }
    }
    if (gone) {
      out.push({ segment: s, after: null });
      continue;
    }
    let backStart = start;
    let backEnd = end;
    for (let i = sizes.length - 1; i >= 0; i--) {
      const { a, b, n } = sizes[i] as { a: number; b: number; n: number };
      backStart = mapStart(backStart, a, a + n, b - a);
      backEnd = mapEnd(backEnd, a, a + n, b - a);
    }
    if (backStart !== s.start_pos || backEnd !== s.end_pos) out.push({ segment: s, after: { start_pos: start, end_pos: end } });
  }
  return out;
}
