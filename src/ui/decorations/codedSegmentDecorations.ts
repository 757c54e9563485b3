import * as vscode from 'vscode';
import { OffsetMap } from '../../core/offsets';
import type { Segment } from '../../domain/model';
import type { CodeWithCounts } from '../../domain/ports';
import type { SourceDocuments } from '../documents/sourceDocuments';
import { computeSegmentDecorations } from './segmentDecorationModel';
import { madeByAgent, type Workbench } from '../workbench';

/** What was last drawn in one editor: code id -> ranges (UTF-16 editor ranges). For tests and hovers. */
export type DrawnSegments = Map<number, vscode.Range[]>;

/**
 * Decorates coded segments in every visible editor that shows a source: a background tint and an
 * overview-ruler mark in the code's colour, and a hover naming the code(s), memo, coder and the session
 * that made it (with an AI badge for agents). Decoration types are owned here, one per code colour,
 * and disposed with this object. {@link flash} highlights a segment briefly (agent activity).
 */
export class CodedSegmentDecorations implements vscode.Disposable {
  private readonly types = new Map<string, vscode.TextEditorDecorationType>();
  private readonly flashType = vscode.window.createTextEditorDecorationType({
    backgroundColor: new vscode.ThemeColor('editor.findMatchHighlightBackground'),
    border: '2px solid',
    borderColor: new vscode.ThemeColor('focusBorder'),
    isWholeLine: false,
  });
  private readonly drawn = new Map<string, DrawnSegments>();
  private readonly subscriptions: vscode.Disposable[] = [];

  constructor(
    private readonly wb: Workbench,
    private readonly docs: SourceDocuments,
  ) {
    this.subscriptions.push(
      vscode.window.onDidChangeVisibleTextEditors(() => this.refreshAll()),
      vscode.workspace.onDidChangeTextDocument((e) => {
        // positions move with edits through the edit tracker; redraw after it has stored them
        if (e.contentChanges.length > 0) setTimeout(() => this.refreshDocument(e.document), 0);
      }),
    );
  }

  /** Redraws every visible editor. */
  refreshAll(): void {
    for (const editor of vscode.window.visibleTextEditors) this.draw(editor);
  }

  /** Redraws the editors showing `doc`. */
  refreshDocument(doc: vscode.TextDocument): void {
    for (const editor of vscode.window.visibleTextEditors) if (editor.document === doc) this.draw(editor);
  }

  /** Redraws the editors showing source `sourceId`. */
  refreshSource(sourceId: number): void {
    for (const editor of vscode.window.visibleTextEditors) if (this.docs.sourceIdFor(editor.document) === sourceId) this.draw(editor);
  }

  /** The ranges last drawn in `editor`, by code id (empty when it shows no source). */
  drawnIn(editor: vscode.TextEditor): DrawnSegments {
    return this.drawn.get(editor.document.uri.toString()) ?? new Map();
  }

  /** Highlights a segment for `ms` milliseconds in the editors that show its source. */
  flash(segment: Pick<Segment, 'source_id' | 'start_pos' | 'end_pos'>, ms: number): void {
    if (ms <= 0) return;
    for (const editor of vscode.window.visibleTextEditors) {
      if (this.docs.sourceIdFor(editor.document) !== segment.source_id) continue;
      const map = new OffsetMap(editor.document.getText());
      const range = new vscode.Range(editor.document.positionAt(map.toUtf16(segment.start_pos)), editor.document.positionAt(map.toUtf16(segment.end_pos)));
      editor.setDecorations(this.flashType, [range]);
      setTimeout(() => editor.setDecorations(this.flashType, []), ms);
    }
  }

  private typeFor(color: string): vscode.TextEditorDecorationType {
    let t = this.types.get(color);
    if (!t) {
      t = vscode.window.createTextEditorDecorationType({
        backgroundColor: `${color}33`,
        borderRadius: '2px',
        overviewRulerColor: color,
        overviewRulerLane: vscode.OverviewRulerLane.Right,
        rangeBehavior: vscode.DecorationRangeBehavior.ClosedClosed,
      });
      this.types.set(color, t);
    }
    return t;
  }

  private draw(editor: vscode.TextEditor): void {
    const repo = this.wb.repo();
    const key = editor.document.uri.toString();
    const sourceId = repo ? this.docs.sourceIdFor(editor.document) : undefined;
    const byColor = new Map<string, vscode.DecorationOptions[]>();
    const drawn: DrawnSegments = new Map();
    if (repo && sourceId !== undefined) {
      const segments = repo.listSegmentMarksForSource(sourceId);
      const codes = new Map<number, CodeWithCounts>(repo.listCodes().map((c) => [c.code_id, c]));
      const doc = editor.document;
      for (const [color, decorations] of computeSegmentDecorations(doc.getText(), segments, codes, madeByAgent)) {
        const options: vscode.DecorationOptions[] = [];
        for (const d of decorations) {
          const range = new vscode.Range(doc.positionAt(d.start), doc.positionAt(d.end));
          options.push({ range, hoverMessage: new vscode.MarkdownString(d.hover, true) });
          const ranges = drawn.get(d.code_id) ?? [];
          ranges.push(range);
          drawn.set(d.code_id, ranges);
        }
        byColor.set(color, options);
      }
    }
    for (const [color, options] of byColor) editor.setDecorations(this.typeFor(color), options);
    for (const [color, type] of this.types) if (!byColor.has(color)) editor.setDecorations(type, []);
    this.drawn.set(key, drawn);
  }

  dispose(): void {
    for (const s of this.subscriptions) s.dispose();
    for (const t of this.types.values()) t.dispose();
    this.types.clear();
    this.flashType.dispose();
  }
}
