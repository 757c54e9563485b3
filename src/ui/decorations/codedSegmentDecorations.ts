import * as vscode from 'vscode';
import { OffsetMap } from '../../core/offsets';
import type { EventRecord, EventType } from '../../domain/events';
import type { Segment, SegmentMark } from '../../domain/model';
import type { ProjectRepository } from '../../domain/ports';
import type { SourceDocuments } from '../documents/sourceDocuments';
import { madeByAgent, type Workbench } from '../workbench';
import {
  CODING_DISPLAYS,
  DEFAULT_CODING_DISPLAY,
  layoutCodings,
  marksForLines,
  safeColour,
  stripesKey,
  stripesSvg,
  tintAlpha,
  tintPieces,
  type CodeLook,
  type CodingDisplay,
  type CodingLayout,
  type LineLabel,
} from './codingLayout';
import { lineLabelDecorations } from './lineLabels';
import { LineIndex, segmentHover } from './segmentDecorationModel';
import { researcherRepo } from '../teamScope';

/** What was last drawn in one editor: code id -> its segments' ranges (UTF-16 editor ranges), in any display. For tests. */
export type DrawnSegments = Map<number, vscode.Range[]>;

/**
 * Everything last drawn in one editor, per kind of mark, for tests and benchmarks ({@link CodedSegmentDecorations.drawnFor}).
 * Ranges are editor ranges (UTF-16); colours `#RRGGBB` upper case; lines 0-based.
 */
export interface DrawnDecorations {
  source_id: number;
  display: CodingDisplay;
  /** background tints, one entry per tint decoration type: its colour, the CSS background (colour + alpha) and its ranges */
  tints: { color: string; background: string; code_ids: number[]; ranges: vscode.Range[] }[];
  /** underlines, one entry per decoration type: lane 0 is drawn as the line box's bottom border, lane 1 as a text underline; both opaque, 2px */
  underlines: { color: string; lane: number; style: 'bottom-border' | 'underline'; code_ids: number[]; ranges: vscode.Range[] }[];
  /** labels at the ends of coded lines: the name on the code's colour, the text colour from the WCAG contrast */
  labels: (LineLabel & { line: number; text: string })[];
  /** "+N" chips of lines with more codes than are named (src/ui/decorations/lineLabels.ts): N and every code name of the line */
  more: { line: number; count: number; names: string[] }[];
  /** gutter stripes, one entry per decoration type (stripe combination): column colours and the lines drawn */
  stripes: { key: string; columns: (string | null)[]; lines: number[] }[];
  /** the document lines labels and stripes were computed for (visible lines and a margin), inclusive */
  window: { from: number; to: number };
}

/** One finished paint ({@link CodedSegmentDecorations.onDidPaint}). */
export interface PaintReport {
  source_id: number;
  /** the document's URI, as a string */
  uri: string;
  /** why: `data` (segments, codes or text changed, or the editor became visible), `scroll` (labels and stripes for newly visible lines), `display` (the setting changed) */
  reason: 'data' | 'scroll' | 'display';
  /** segments drawn */
  segments: number;
  /** milliseconds from the start of the paint to the last setDecorations call (extension host side) */
  ms: number;
}

/** Lines above and below the visible ones that get labels and stripes, so that scrolling rarely repaints. */
const WINDOW_MARGIN = 200;

/** Events that change no segment of any source (the cached segment lists stay valid; codes are read on every paint). */
const KEEPS_SEGMENTS: ReadonlySet<EventType> = new Set<EventType>([
  'approval.requested',
  'approval.granted',
  'approval.denied',
  'approval.failed',
  'session.connected',
  'session.disconnected',
  'coding.code_created',
  'coding.code_renamed',
  'coding.code_updated',
  'coding.code_moved',
  'coding.category_created',
  'coding.category_deleted',
  'coding.category_renamed',
  'coding.category_updated',
  'coding.av_segment_coded',
  'coding.av_segment_uncoded',
  'source.imported',
  'source.renamed',
  'source.moved',
  'source.updated',
  'source.attribute_set',
  'source.attributes_set',
  'source.metadata_suggested',
  'source.folder_created',
  'source.folder_renamed',
  'source.folder_deleted',
  'case.created',
  'case.deleted',
  'case.member_added',
  'case.member_removed',
  'case.attribute_set',
  'case.updated',
  'case.attributes_set',
  'case.renamed',
  'case.attribute_renamed',
  'suggestion.code_suggested',
  'suggestion.coding_suggested',
  'suggestion.batch_created',
  'suggestion.merge_suggested',
  'suggestion.approved',
  'suggestion.rejected',
  'project.opened',
]);

/** The setting `marginalia.coding.display` (tints, stripes or both; invalid values read as the default). */
export function codingDisplaySetting(): CodingDisplay {
  const v = vscode.workspace.getConfiguration('marginalia').get<string>('coding.display', DEFAULT_CODING_DISPLAY);
  return (CODING_DISPLAYS as readonly string[]).includes(v) ? (v as CodingDisplay) : DEFAULT_CODING_DISPLAY;
}

interface EditorState {
  sourceId: number;
  repo: ProjectRepository;
  /** the decorations' event generation and the document version this paint drew */
  generation: number;
  docVersion: number;
  layout: CodingLayout;
  lines: LineIndex;
  text: string;
  display: CodingDisplay;
  drawn: DrawnDecorations;
  byCode: DrawnSegments;
  /** decoration type keys this editor uses for segments (tints, underlines) and for its window (stripes) */
  segmentKeys: Set<string>;
  windowKeys: Set<string>;
}

/**
 * Paints codings in every visible editor that shows a source so that a researcher sees which codes each
 * line carries without hovering (issue 13, item 2), in the display the setting `marginalia.coding.display`
 * chooses:
 * - `stripes`: each segment underlined in its code's colour, overlapping segments on separate lines (lane 0:
 *   the line box's bottom border, lane 1: a text underline); coding stripes in the gutter (one bar per
 *   segment, in a column it keeps on every line); at the end of each coded line a label per code, the
 *   code's name on its colour in black or white, whichever contrasts more (WCAG ≥ 4.5:1 in any theme);
 * - `tints`: a translucent background per segment (overlaps blend);
 * - `both` (default): stripes, plus a light tint per stretch of text in the colour of one of its codes
 *   (never blended).
 * The layout is src/ui/decorations/codingLayout.ts. Every segment gets an overview-ruler mark; a hover
 * names the code(s), memo, coder and session (AI badge for agents).
 *
 * Decoration types: per code colour one tint type (per alpha) and one per underline lane; one per stripe
 * combination in use; one for all labels (their look is per instance). Types no visible editor uses any
 * more (a code deleted or recoloured, an editor closed) are disposed after each paint. Tints and underlines
 * cover the whole document (the overview ruler shows all); labels and stripes cover the visible lines and
 * {@link WINDOW_MARGIN} lines around them, and follow scrolling.
 *
 * Hooks for tests and benchmarks: {@link drawnFor}, {@link drawnIn}, {@link onDidPaint}, {@link painted}, {@link lastPaint}.
 * {@link flash} highlights a segment briefly (agent activity).
 */
export class CodedSegmentDecorations implements vscode.Disposable {
  private readonly types = new Map<string, vscode.TextEditorDecorationType>();
  private readonly labelType = vscode.window.createTextEditorDecorationType({ rangeBehavior: vscode.DecorationRangeBehavior.ClosedOpen });
  /** the "+N" chips after the labels (a type of their own, made after the labels' type, so they come after them) */
  private readonly moreType = vscode.window.createTextEditorDecorationType({ rangeBehavior: vscode.DecorationRangeBehavior.ClosedOpen });
  private readonly flashType = vscode.window.createTextEditorDecorationType({
    backgroundColor: new vscode.ThemeColor('editor.findMatchHighlightBackground'),
    border: '2px solid',
    borderColor: new vscode.ThemeColor('focusBorder'),
    isWholeLine: false,
  });
  private readonly states = new Map<vscode.TextEditor, EditorState>();
  private readonly paintEmitter = new vscode.EventEmitter<PaintReport>();
  /** source id -> performance.now() at the end of its last `data` or `display` paint */
  private readonly lastPaints = new Map<number, number>();
  private readonly subscriptions: vscode.Disposable[] = [];
  /** source id -> its segments as last read and kept up to date from coding events (see {@link onEvents}) */
  private readonly marks = new Map<number, SegmentMark[]>();
  private marksRepo: ProjectRepository | null = null;
  /** bumped by every batch of events: a paint at the current generation and document version is up to date */
  private generation = 0;
  private readonly paintSoon = new Set<number>();
  private paintTimer: NodeJS.Immediate | undefined;

  /** Fires after every paint of an editor showing a source (see {@link PaintReport}). */
  readonly onDidPaint: vscode.Event<PaintReport> = this.paintEmitter.event;

  constructor(
    private readonly wb: Workbench,
    private readonly docs: SourceDocuments,
  ) {
    this.subscriptions.push(
      this.paintEmitter,
      vscode.window.onDidChangeVisibleTextEditors((editors) => {
        for (const ed of [...this.states.keys()]) if (!editors.includes(ed)) this.states.delete(ed);
        this.refreshAll();
      }),
      vscode.workspace.onDidChangeTextDocument((e) => {
        // positions move with edits through the edit tracker; redraw after it has stored them
        if (e.contentChanges.length > 0) setTimeout(() => this.refreshDocument(e.document), 0);
      }),
      vscode.window.onDidChangeTextEditorVisibleRanges((e) => this.followScroll(e.textEditor)),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration('marginalia.coding.display')) this.refreshAll('display');
      }),
      vscode.languages.registerHoverProvider('*', { provideHover: (doc, pos) => this.hover(doc, pos) }),
      wb.pipeline.onEvents((events) => this.onEvents(events)),
      { dispose: () => this.paintTimer && clearImmediate(this.paintTimer) },
    );
  }

  /**
   * Keeps the cached segment lists current and paints a coded or uncoded segment's source at once (the
   * extension's 16 ms event batch then finds it up to date): a segment coded, uncoded or given a memo is
   * read or dropped by id; an event in {@link KEEPS_SEGMENTS} changes nothing; any other event (text
   * edited, codes merged or deleted, a snapshot restored, ...) drops the cache of its source, or of all
   * sources when it names none, so the next paint reads them again.
   */
  private onEvents(events: readonly EventRecord[]): void {
    this.generation++;
    const repo = researcherRepo(this.wb);
    if (!repo || repo !== this.marksRepo) {
      this.marks.clear();
      this.marksRepo = repo;
    }
    for (const e of events) {
      const sid = typeof e.payload.source_id === 'number' ? e.payload.source_id : undefined;
      const type = e.event_type;
      if (type === 'coding.segment_coded' || type === 'coding.segment_uncoded' || type === 'coding.segment_updated') {
        if (sid === undefined) {
          this.marks.clear();
          continue;
        }
        const cached = this.marks.get(sid);
        if (cached && repo) {
          const id = Number(e.payload.segment_id);
          const at = cached.findIndex((m) => m.segment_id === id);
          if (at >= 0) cached.splice(at, 1);
          const seg = type === 'coding.segment_uncoded' ? undefined : repo.getSegment(id);
          if (seg && seg.source_id === sid) {
            const { text: _text, ...mark } = seg;
            cached.push(mark);
          }
        }
        this.paintSoon.add(sid);
      } else if (!KEEPS_SEGMENTS.has(type)) {
        if (sid === undefined) this.marks.clear();
        else this.marks.delete(sid);
      }
    }
    if (this.paintSoon.size > 0) {
      this.paintTimer ??= setImmediate(() => {
        this.paintTimer = undefined;
        const sources = [...this.paintSoon];
        this.paintSoon.clear();
        for (const sid of sources) this.refreshSource(sid);
      });
    }
  }

  /** The segments of a source: the cached list, or read from the project (and cached). */
  private segmentsOf(repo: ProjectRepository, sourceId: number): SegmentMark[] {
    if (repo !== this.marksRepo) {
      this.marks.clear();
      this.marksRepo = repo;
    }
    let list = this.marks.get(sourceId);
    if (!list) this.marks.set(sourceId, (list = repo.listSegmentMarksForSource(sourceId)));
    return list;
  }

  /** Redraws every visible editor. */
  refreshAll(reason: PaintReport['reason'] = 'data'): void {
    for (const editor of vscode.window.visibleTextEditors) this.draw(editor, reason);
  }

  /** Redraws the editors showing `doc`, reading its segments again (a text edit moves them through the edit tracker). */
  refreshDocument(doc: vscode.TextDocument): void {
    const sid = this.docs.sourceIdFor(doc);
    if (sid !== undefined) this.marks.delete(sid);
    for (const editor of vscode.window.visibleTextEditors) if (editor.document === doc) this.draw(editor, 'data');
  }

  /** Redraws the editors showing source `sourceId`. */
  refreshSource(sourceId: number): void {
    for (const editor of vscode.window.visibleTextEditors) if (this.docs.sourceIdFor(editor.document) === sourceId) this.draw(editor, 'data');
  }

  /** The segment ranges last drawn in `editor`, by code id, whatever the display (empty when it shows no source). */
  drawnIn(editor: vscode.TextEditor): DrawnSegments {
    return this.states.get(editor)?.byCode ?? new Map();
  }

  /** Every mark last drawn in `editor` (undefined when it shows no source or was not painted). */
  drawnFor(editor: vscode.TextEditor): DrawnDecorations | undefined {
    return this.states.get(editor)?.drawn;
  }

  /**
   * Resolves with the next paint of an editor showing source `sourceId` for which `accept` (default: any)
   * returns true, e.g. `painted(id, (r) => r.reason === 'data' && r.segments === before + 1)` to time
   * "code a selection -> its decoration painted" from the command to `Date.now()` at resolution.
   * Create the promise before starting the action. Never rejects; it waits until such a paint happens.
   */
  painted(sourceId: number, accept: (r: PaintReport) => boolean = () => true): Promise<PaintReport> {
    return new Promise((resolve) => {
      const sub = this.onDidPaint((r) => {
        if (r.source_id !== sourceId || !accept(r)) return;
        sub.dispose();
        resolve(r);
      });
    });
  }

  /**
   * `performance.now()` (this extension host's clock, milliseconds) at the end of the last paint of source
   * `sourceId` that drew its data (reason `data` or `display`; scrolling does not count), or undefined
   * when none happened yet. For benchmarks polling "painted after t0" (bench/rig/suite.ts).
   */
  lastPaint(sourceId: number): number | undefined {
    return this.lastPaints.get(sourceId);
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

  // ------------------------------------------------------------------------------------------ painting

  private draw(editor: vscode.TextEditor, reason: PaintReport['reason']): void {
    const t0 = performance.now();
    const repo = researcherRepo(this.wb);
    const sourceId = repo ? this.docs.sourceIdFor(editor.document) : undefined;
    const old = this.states.get(editor);
    // already drawn from the same data (the segment events painted it at once; the event batch asks again)
    if (
      reason === 'data' &&
      old &&
      repo &&
      old.repo === repo &&
      old.sourceId === sourceId &&
      old.generation === this.generation &&
      old.docVersion === editor.document.version
    )
      return;
    if (!repo || sourceId === undefined) {
      if (old) {
        for (const k of [...old.segmentKeys, ...old.windowKeys]) {
          const t = this.types.get(k);
          if (t) editor.setDecorations(t, []);
        }
        editor.setDecorations(this.labelType, []);
        editor.setDecorations(this.moreType, []);
        this.states.delete(editor);
        this.collect();
      }
      return;
    }
    const looks = new Map<number, CodeLook>();
    for (const c of repo.listCodeLabels()) looks.set(c.code_id, { code_id: c.code_id, name: c.name, color: safeColour(c.color) });
    const text = editor.document.getText();
    const lines = new LineIndex(text);
    const layout = layoutCodings(text, this.segmentsOf(repo, sourceId), looks, lines);
    const display = codingDisplaySetting();
    const state: EditorState = {
      sourceId,
      repo,
      generation: this.generation,
      docVersion: editor.document.version,
      layout,
      lines,
      text,
      display,
      drawn: { source_id: sourceId, display, tints: [], underlines: [], labels: [], more: [], stripes: [], window: { from: 0, to: -1 } },
      byCode: new Map(),
      segmentKeys: new Set(),
      windowKeys: new Set(),
    };
    this.paintSegments(editor, state, old);
    this.paintWindow(editor, state, old);
    this.states.set(editor, state);
    this.collect();
    const t1 = performance.now();
    this.lastPaints.set(sourceId, t1);
    this.paintEmitter.fire({ source_id: sourceId, uri: editor.document.uri.toString(), reason, segments: layout.segments.length, ms: t1 - t0 });
  }

  private range(lines: LineIndex, start: number, end: number): vscode.Range {
    const a = lines.positionAt(start);
    const b = lines.positionAt(end);
    return new vscode.Range(a.line, a.character, b.line, b.character);
  }

  /** Tints and underlines over the whole document. */
  private paintSegments(editor: vscode.TextEditor, s: EditorState, old: EditorState | undefined): void {
    const sets = new Map<string, { ranges: vscode.Range[]; codes: Set<number> }>();
    const add = (key: string, range: vscode.Range, codeId: number) => {
      let e = sets.get(key);
      if (!e) sets.set(key, (e = { ranges: [], codes: new Set() }));
      e.ranges.push(range);
      e.codes.add(codeId);
    };
    const stripes = s.display !== 'tints';
    const alpha = tintAlpha(s.display).toString(16).padStart(2, '0').toUpperCase();
    for (const p of s.layout.segments) {
      const range = this.range(s.lines, p.start, p.end);
      const list = s.byCode.get(p.code.code_id);
      if (list) list.push(range);
      else s.byCode.set(p.code.code_id, [range]);
      if (s.display === 'tints') add(`tint|${p.code.color}|${alpha}`, range, p.code.code_id);
      if (stripes && p.underline >= 0) add(`u${p.underline}|${p.code.color}`, range, p.code.code_id);
    }
    if (s.display === 'both') for (const t of tintPieces(s.layout)) add(`tint|${t.color}|${alpha}`, this.range(s.lines, t.start, t.end), t.code_id);
    for (const [key, e] of sets) {
      editor.setDecorations(this.typeFor(key), e.ranges);
      s.segmentKeys.add(key);
      const [kind, color] = key.split('|') as [string, string];
      if (kind === 'tint') s.drawn.tints.push({ color, background: `${color}${alpha}`, code_ids: [...e.codes], ranges: e.ranges });
      else {
        const lane = Number(kind.slice(1));
        s.drawn.underlines.push({ color, lane, style: lane === 0 ? 'bottom-border' : 'underline', code_ids: [...e.codes], ranges: e.ranges });
      }
    }
    for (const k of old?.segmentKeys ?? []) {
      const t = this.types.get(k);
      if (t && !s.segmentKeys.has(k)) editor.setDecorations(t, []);
    }
  }

  /** Labels and gutter stripes for the visible lines and a margin around them. */
  private paintWindow(editor: vscode.TextEditor, s: EditorState, old: EditorState | undefined): void {
    const visible = editor.visibleRanges;
    const first = visible.length > 0 ? Math.min(...visible.map((r) => r.start.line)) : 0;
    const last = visible.length > 0 ? Math.max(...visible.map((r) => r.end.line)) : 0;
    const from = Math.max(0, first - WINDOW_MARGIN);
    const to = Math.min(s.lines.lineCount - 1, last + WINDOW_MARGIN);
    s.drawn.window = { from, to };
    s.drawn.labels = [];
    s.drawn.more = [];
    s.drawn.stripes = [];
    const labels: vscode.DecorationOptions[] = [];
    const more: vscode.DecorationOptions[] = [];
    const stripeSets = new Map<string, { columns: (string | null)[]; ranges: vscode.Range[]; lines: number[] }>();
    if (s.display !== 'tints') {
      const blank = (line: number) => !/\S/.test(s.text.slice(s.lines.lineStart(line), s.lines.lineEnd(line)));
      for (const m of marksForLines(s.layout, from, to, blank)) {
        const endChar = s.lines.lineEnd(m.line) - s.lines.lineStart(m.line);
        // labels at the line's end, after its text. VS Code 1.139 does not wrap a line again when injected text
        // changes (seen with wrappingStrategy "advanced"), so labels on a nearly full last visual line run past
        // the right edge; at the line's start they would push the text itself out of view instead
        const at = new vscode.Range(m.line, endChar, m.line, endChar);
        const line = lineLabelDecorations(at, m.labels);
        labels.push(...line.labels);
        more.push(...line.more);
        for (const { label, text } of line.drawn.shown) s.drawn.labels.push({ ...label, line: m.line, text });
        if (line.drawn.more) s.drawn.more.push({ line: m.line, ...line.drawn.more });
        if (m.stripes.length > 0) {
          const key = `stripes|${stripesKey(m.stripes)}`;
          let e = stripeSets.get(key);
          if (!e) stripeSets.set(key, (e = { columns: m.stripes, ranges: [], lines: [] }));
          const prev = e.ranges[e.ranges.length - 1];
          // consecutive lines with the same stripes share one range
          if (prev && prev.end.line === m.line - 1) e.ranges[e.ranges.length - 1] = new vscode.Range(prev.start, new vscode.Position(m.line, endChar));
          else e.ranges.push(new vscode.Range(m.line, 0, m.line, endChar));
          e.lines.push(m.line);
        }
      }
    }
    editor.setDecorations(this.labelType, labels);
    editor.setDecorations(this.moreType, more);
    for (const [key, e] of stripeSets) {
      editor.setDecorations(this.typeFor(key, e.columns), e.ranges);
      s.windowKeys.add(key);
      s.drawn.stripes.push({ key: key.slice('stripes|'.length), columns: e.columns, lines: e.lines });
    }
    for (const k of old?.windowKeys ?? []) {
      const t = this.types.get(k);
      if (t && !s.windowKeys.has(k)) editor.setDecorations(t, []);
    }
  }

  /** Repaints labels and stripes when the visible lines come near the edge of the painted window. */
  private followScroll(editor: vscode.TextEditor): void {
    const s = this.states.get(editor);
    if (!s || s.display === 'tints' || editor.visibleRanges.length === 0) return;
    const first = Math.min(...editor.visibleRanges.map((r) => r.start.line));
    const last = Math.max(...editor.visibleRanges.map((r) => r.end.line));
    const { from, to } = s.drawn.window;
    const slack = WINDOW_MARGIN / 4;
    if ((first - from >= slack || from === 0) && (to - last >= slack || to >= s.lines.lineCount - 1)) return;
    const t0 = performance.now();
    const old: EditorState = { ...s, windowKeys: s.windowKeys };
    s.windowKeys = new Set();
    this.paintWindow(editor, s, old);
    this.collect();
    this.paintEmitter.fire({
      source_id: s.sourceId,
      uri: editor.document.uri.toString(),
      reason: 'scroll',
      segments: s.layout.segments.length,
      ms: performance.now() - t0,
    });
  }

  /** The decoration type for a key (created on first use): `tint|#RRGGBB|AA`, `u0|#RRGGBB`, `u1|#RRGGBB`, `stripes|...`. */
  private typeFor(key: string, columns?: (string | null)[]): vscode.TextEditorDecorationType {
    let t = this.types.get(key);
    if (t) return t;
    const [kind, color] = key.split('|') as [string, string];
    const ruler = { overviewRulerColor: color, overviewRulerLane: vscode.OverviewRulerLane.Right };
    const closed = vscode.DecorationRangeBehavior.ClosedClosed;
    // `cursor: text` (the editor's own cursor) gives tints and lane-0 underlines an inline class too, so the
    // rendered text is cut into spans at every coded passage's ends, as it is for lane-1 underlines
    if (kind === 'tint')
      t = vscode.window.createTextEditorDecorationType({
        backgroundColor: `${color}${key.split('|')[2]}`,
        borderRadius: '2px',
        cursor: 'text',
        rangeBehavior: closed,
        ...ruler,
      });
    else if (kind === 'u0')
      t = vscode.window.createTextEditorDecorationType({
        borderStyle: 'none none solid none',
        borderWidth: '0 0 2px 0',
        borderColor: color,
        cursor: 'text',
        rangeBehavior: closed,
        ...ruler,
      });
    else if (kind === 'u1')
      t = vscode.window.createTextEditorDecorationType({ textDecoration: `underline solid ${color} 2px`, rangeBehavior: closed, ...ruler });
    else {
      const svg = stripesSvg(columns ?? []);
      t = vscode.window.createTextEditorDecorationType({
        gutterIconPath: vscode.Uri.parse(`data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}`),
        gutterIconSize: '100% 100%',
        rangeBehavior: closed,
      });
    }
    this.types.set(key, t);
    return t;
  }

  /** Disposes the decoration types no painted editor uses. */
  private collect(): void {
    const used = new Set<string>();
    for (const s of this.states.values()) for (const k of [...s.segmentKeys, ...s.windowKeys]) used.add(k);
    for (const [k, t] of this.types) {
      if (used.has(k)) continue;
      t.dispose();
      this.types.delete(k);
    }
  }

  // ------------------------------------------------------------------------------------------ hover

  /** The hover over coded text: one section per segment under the pointer (code, memos, coder, session). */
  private hover(doc: vscode.TextDocument, pos: vscode.Position): vscode.Hover | undefined {
    const repo = this.wb.repo();
    let state: EditorState | undefined;
    for (const [ed, s] of this.states) if (ed.document === doc) state = s;
    if (!repo || !state) return undefined;
    const at = doc.offsetAt(pos);
    const here = state.layout.segments.filter((p) => p.start <= at && at < p.end);
    if (here.length === 0) return undefined;
    const parts: vscode.MarkdownString[] = [];
    for (const p of here) {
      const code = repo.getCode(p.code.code_id);
      if (code) parts.push(new vscode.MarkdownString(segmentHover(p.segment, code, madeByAgent), true));
    }
    const first = here[0] as (typeof here)[number];
    return new vscode.Hover(parts, this.range(state.lines, first.start, first.end));
  }

  dispose(): void {
    for (const s of this.subscriptions) s.dispose();
    for (const t of this.types.values()) t.dispose();
    this.types.clear();
    this.labelType.dispose();
    this.moreType.dispose();
    this.flashType.dispose();
  }
}
