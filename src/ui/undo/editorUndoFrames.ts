/**
 * Where the editor's own undo stands in the order of the researcher's actions (issue 13, item 1).
 *
 * VS Code keeps one undo stack per document and does not expose it; Marginalia keeps the researcher's
 * actions (codings, memos, code changes ...) in the event log (src/domain/undoRedo.ts). For Ctrl+Z in a
 * source editor to follow the order in which the researcher acted, the UI needs to know, per document, WHEN
 * the text edits it would undo were typed, relative to the researcher's Marginalia actions. Only that order
 * matters, so typed edits are grouped into FRAMES: a frame is a run of typed edits of one document with no
 * Marginalia action of the researcher in between. A frame records
 * - `startClock`: the store's last event sequence number when its first edit was typed (an action with a
 *   higher sequence number came after the whole frame, because an action ends the frame);
 * - `before` / `after`: the document text before its first edit and after its last one, so the editor's undo
 *   and redo steps (whose size VS Code decides) can be followed by comparing texts: a frame is fully undone
 *   when the text is back at `before`, fully redone at `after`;
 * - `undoneClock`: the store's last event sequence number when the editor's undo last took something of it
 *   back (null while nothing of it is undone), which orders editor redo against Marginalia redo.
 *
 * Pure bookkeeping (no `vscode`): src/ui/undo/undoCommands.ts feeds it the document changes (typed, undo,
 * redo) and asks it {@link EditorUndoFrames.undoStamp} / {@link EditorUndoFrames.redoStamp}. Texts are
 * UTF-16 strings as the editor has them; clocks are event sequence numbers (`ProjectRepository.lastEventSeq`).
 */

/** One run of typed edits of a document between two Marginalia actions of the researcher. */
export interface UndoFrame {
  /** the store's last event sequence number when the frame's first edit was typed */
  startClock: number;
  /** the sequence number of the researcher's latest Marginalia action when the frame's edits were typed */
  actionSeq: number;
  /** the document text before the frame's first edit */
  before: string;
  /** the document text after the frame's last edit */
  after: string;
  /** the store's last event sequence number when the editor's undo last took part of it back; null: none undone */
  undoneClock: number | null;
}

interface DocFrames {
  undo: UndoFrame[];
  redo: UndoFrame[];
}

/** Frames kept per document; older ones are dropped (their text stays undoable with VS Code's own undo after Marginalia's). */
export const MAX_FRAMES = 100;

/** The frames of every tracked document, by a document key (its URI as a string). */
export class EditorUndoFrames {
  private readonly docs = new Map<string, DocFrames>();

  private of(key: string): DocFrames {
    let d = this.docs.get(key);
    if (!d) this.docs.set(key, (d = { undo: [], redo: [] }));
    return d;
  }

  /**
   * The researcher typed (or pasted, or a file reload changed) the document from `before` to `after`, when
   * the store's last sequence number was `clock` and the researcher's latest Marginalia action was
   * `actionSeq`. Continues the top frame when no action came since its last edit and none of it was undone;
   * otherwise starts a frame. Like the editor's own, the redo side is cleared.
   */
  typed(key: string, before: string, after: string, clock: number, actionSeq: number): void {
    const d = this.of(key);
    d.redo = [];
    const top = d.undo[d.undo.length - 1];
    if (top && top.actionSeq === actionSeq && top.undoneClock === null) {
      top.after = after;
      return;
    }
    if (top && top.undoneClock !== null) {
      // the editor dropped the undone part of it: what is left of it ends here
      top.undoneClock = null;
      top.after = before;
    }
    d.undo.push({ startClock: clock, actionSeq, before, after, undoneClock: null });
    if (d.undo.length > MAX_FRAMES) d.undo.shift();
  }

  /**
   * The editor's undo changed the document to `text` at store clock `clock`. The frames it went back past
   * (the text is at one's `before`) move to the redo side, newest first; a frame only partly undone stays,
   * marked with `undoneClock`.
   */
  undone(key: string, text: string, clock: number): void {
    const d = this.docs.get(key);
    if (!d || d.undo.length === 0) return;
    let at = -1;
    for (let i = d.undo.length - 1; i >= 0; i--) {
      if ((d.undo[i] as UndoFrame).before === text) {
        at = i;
        break;
      }
    }
    if (at < 0) {
      (d.undo[d.undo.length - 1] as UndoFrame).undoneClock = clock;
      return;
    }
    while (d.undo.length > at) {
      const f = d.undo.pop() as UndoFrame;
      f.undoneClock = clock;
      d.redo.push(f);
    }
  }

  /**
   * The editor's redo changed the document to `text`. A partly undone top frame is redone first; else frames
   * come back from the redo side (as far as one whose `after` the text is at, else the next one, partly).
   */
  redone(key: string, text: string): void {
    const d = this.docs.get(key);
    if (!d) return;
    const top = d.undo[d.undo.length - 1];
    if (top && top.undoneClock !== null) {
      if (top.after === text) top.undoneClock = null;
      return;
    }
    if (d.redo.length === 0) return;
    let at = -1;
    for (let i = d.redo.length - 1; i >= 0; i--) {
      if ((d.redo[i] as UndoFrame).after === text) {
        at = i;
        break;
      }
    }
    if (at < 0) {
      // partly redone: back on the undo side, still marked undone
      d.undo.push(d.redo.pop() as UndoFrame);
      return;
    }
    while (d.redo.length > at) {
      const f = d.redo.pop() as UndoFrame;
      f.undoneClock = null;
      d.undo.push(f);
    }
  }

  /**
   * When the text the editor's undo would take back was typed: the top frame's `startClock`, or null when
   * nothing typed is known to be undoable in this document. A Marginalia action with a higher sequence
   * number came after it (undo that first).
   */
  undoStamp(key: string): number | null {
    const d = this.docs.get(key);
    const top = d?.undo[d.undo.length - 1];
    return top ? top.startClock : null;
  }

  /**
   * When the editor's undo last took back what its redo would put back: the store clock of that undo, or
   * null when the editor has nothing known to redo. A Marginalia undo with a sequence number at or below it
   * came before it (redo the text first).
   */
  redoStamp(key: string): number | null {
    const d = this.docs.get(key);
    if (!d) return null;
    const top = d.undo[d.undo.length - 1];
    if (top && top.undoneClock !== null) return top.undoneClock;
    const r = d.redo[d.redo.length - 1];
    return r ? r.undoneClock : null;
  }

  /** The editor had nothing to undo although frames were known (its stack was lost, e.g. the file was closed): forget them. */
  forgetUndo(key: string): void {
    const d = this.docs.get(key);
    if (d) d.undo = [];
  }

  /** The editor had nothing to redo: forget the redo side and any partly undone mark. */
  forgetRedo(key: string): void {
    const d = this.docs.get(key);
    if (!d) return;
    d.redo = [];
    const top = d.undo[d.undo.length - 1];
    if (top) top.undoneClock = null;
  }

  /** Forgets every document (another project was opened). */
  clear(): void {
    this.docs.clear();
  }
}
