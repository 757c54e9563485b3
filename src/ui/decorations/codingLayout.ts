/**
 * The pure part of "codes you can see" (no vscode import; test/unit/ui/codingLayout.test.ts,
 * bench/decorations.ts): where each coded segment of one source is drawn.
 *
 * - **Underlines in the text.** Each segment is underlined in its code's colour. Segments that overlap in
 *   the text get different *underline lanes* (greedy interval partitioning: by start, longer first, the
 *   lowest free lane): lane 0 is a line at the bottom of the line box, lane 1 an underline just below the
 *   letters, so two overlapping codes are two separate lines, never a blended tint. A line of text has room
 *   for {@link UNDERLINE_LANES} such lines; a third code overlapping the same characters has no underline
 *   (lane -1) but keeps its coding stripe and label.
 * - **Coding stripes in the gutter.** Each segment gets a *stripe column* (the same partitioning over the
 *   document lines it covers, so two segments sharing a line never share a column and a segment keeps its
 *   column on every line): a vertical bar in its code's colour beside each line it covers, like MAXQDA's
 *   and NVivo's coding stripes. {@link STRIPE_COLUMNS} columns fit the gutter; a segment beyond them has
 *   column -1 (label only).
 * - **Labels.** At the end of every document line that carries codes, one label per code (its name on its
 *   colour, text colour from {@link labelTextColour}), in stripe-column order. A line with more than
 *   {@link LABELS_SHOWN} codes shows the first one or two names and a "+N" chip for the rest
 *   ({@link compactLabels}): the editor does not wrap a line again for text injected at its end, so a row of
 *   long names would run past the right edge and be cut.
 *
 * Offsets: segments come in code points (what Marginalia stores); everything here is UTF-16 (what editors
 * use), converted with one {@link OffsetMap}. Lines are 0-based document lines (`\n`, `\r\n`, `\r`).
 */
import { OffsetMap } from '../../core/offsets';
import type { SegmentMark } from '../../domain/model';
import { labelTextColour, parseHexColour } from './colourContrast';
import { LineIndex } from './segmentDecorationModel';

/** How codings are painted (setting `marginalia.coding.display`): background tints, stripes (underlines, gutter stripes, labels), or both. */
export type CodingDisplay = 'tints' | 'stripes' | 'both';

/** The values of {@link CodingDisplay}, the setting's enum. */
export const CODING_DISPLAYS: readonly CodingDisplay[] = ['tints', 'stripes', 'both'];

/** The default display: stripes for telling codes apart, plus a light tint showing each passage's extent. */
export const DEFAULT_CODING_DISPLAY: CodingDisplay = 'both';

/** Underline lanes one line of text has room for (0: bottom border of the line box, 1: underline below the letters). */
export const UNDERLINE_LANES = 2;

/** Stripe columns the gutter has room for. */
export const STRIPE_COLUMNS = 4;

/** Background alpha (0-255) of a tint: stronger when tints are the only mark, lighter beside the stripes. */
export function tintAlpha(display: CodingDisplay): number {
  return display === 'tints' ? 0x33 : 0x1a;
}

/** What a code needs to be drawn: its id, name and `#RRGGBB` colour. */
export interface CodeLook {
  code_id: number;
  name: string;
  color: string;
}

/** One segment placed for drawing. */
export interface PlacedSegment {
  /** the segment as read from the project (for the hover) */
  segment: SegmentMark;
  code: CodeLook;
  /** UTF-16 offsets in the document, end exclusive */
  start: number;
  end: number;
  /** first and last document line (0-based, inclusive) holding characters of the segment */
  startLine: number;
  endLine: number;
  /** 0 .. UNDERLINE_LANES-1, or -1: no room for an underline (more codes overlap these characters) */
  underline: number;
  /** 0 .. STRIPE_COLUMNS-1, or -1: no room in the gutter */
  column: number;
}

/** The placed segments of one source, ordered by start (then longer first). */
export interface CodingLayout {
  segments: PlacedSegment[];
  /** document lines of the text */
  lineCount: number;
}

/** One label at the end of a document line: a code's name on its colour. */
export interface LineLabel {
  code_id: number;
  name: string;
  /** the chip's background: the code's colour */
  color: string;
  /** the name's colour on it (WCAG contrast ≥ 4.5:1) */
  textColor: '#000000' | '#FFFFFF';
}

/** What one coded document line shows: its labels and its gutter stripes. */
export interface LineMarks {
  line: number;
  /** one per code on the line, in stripe-column order (codes without a column last, by name) */
  labels: LineLabel[];
  /** colour per stripe column (null: empty column), trailing empty columns dropped; empty when no segment here has a column */
  stripes: (string | null)[];
}

/**
 * Greedy interval partitioning with at most `lanes` lanes: for half-open spans `[from, to)`, taken by
 * `from`, then longer first, then input order, each gets the lowest lane whose last span ended at or before
 * its `from`, or -1 when all `lanes` are busy. Two spans with the same lane never overlap. Returns the lane
 * per input index. O(n log n + n·lanes).
 */
export function assignLanes(spans: readonly { from: number; to: number }[], lanes: number): number[] {
  const order = spans.map((_, i) => i);
  order.sort((a, b) => {
    const x = spans[a] as { from: number; to: number };
    const y = spans[b] as { from: number; to: number };
    return x.from - y.from || y.to - y.from - (x.to - x.from) || a - b;
  });
  const laneEnds: number[] = new Array<number>(lanes).fill(-Infinity);
  const out = new Array<number>(spans.length).fill(-1);
  for (const i of order) {
    const s = spans[i] as { from: number; to: number };
    for (let l = 0; l < lanes; l++) {
      if ((laneEnds[l] as number) <= s.from) {
        laneEnds[l] = s.to;
        out[i] = l;
        break;
      }
    }
  }
  return out;
}

/**
 * Places the segments of one source whose text is `text` (the editor's text; UTF-16): offsets, lines,
 * underline lanes and stripe columns. Segments whose code is not in `codes` are left out; positions are
 * clamped to the text. `lines` may be passed when the caller already has a {@link LineIndex} of `text`.
 */
export function layoutCodings(
  text: string,
  segments: readonly SegmentMark[],
  codes: ReadonlyMap<number, CodeLook>,
  lines: LineIndex = new LineIndex(text),
): CodingLayout {
  const map = new OffsetMap(text);
  const placed: PlacedSegment[] = [];
  for (const s of segments) {
    const code = codes.get(s.code_id);
    if (!code) continue;
    const start = map.toUtf16(s.start_pos);
    const end = Math.max(start, map.toUtf16(s.end_pos));
    const a = lines.positionAt(start);
    const b = lines.positionAt(end);
    let startLine = a.line;
    let endLine = b.line;
    // a segment ending at the start of a line does not cover that line; one starting at a line's end begins on the next
    if (endLine > startLine && b.character === 0) endLine--;
    if (endLine > startLine && start >= lines.lineEnd(startLine)) startLine++;
    placed.push({ segment: s, code, start, end, startLine, endLine, underline: -1, column: -1 });
  }
  placed.sort((x, y) => x.start - y.start || y.end - x.end || x.segment.segment_id - y.segment.segment_id);
  const underline = assignLanes(
    placed.map((p) => ({ from: p.start, to: p.end })),
    UNDERLINE_LANES,
  );
  const column = assignLanes(
    placed.map((p) => ({ from: p.startLine, to: p.endLine + 1 })),
    STRIPE_COLUMNS,
  );
  placed.forEach((p, i) => {
    p.underline = p.end > p.start ? (underline[i] as number) : -1;
    p.column = column[i] as number;
  });
  return { segments: placed, lineCount: lines.lineCount };
}

/** Labels named on one line before the others are summed up as "+N". */
export const LABELS_SHOWN = 2;
/** Longest label text in characters on a line with up to {@link LABELS_SHOWN} codes; longer names end in "…". */
export const LABEL_MAX = 40;
/**
 * Characters the named labels of a line with more codes may take (the "+N" chip and the gaps come on top): with
 * transcripts wrapped at 80 columns (package.json configurationDefaults), what fits right of a full line in an
 * editor about 900 pixels wide (seen in the rig's screenshots).
 */
export const CROWDED_NAMES_BUDGET = 26;

/** `name` cut to `max` characters (UTF-16 units, never splitting a surrogate pair), ending in "…" when cut. */
export function labelText(name: string, max: number): string {
  if (name.length <= max) return name;
  let cut = max - 1;
  const c = name.charCodeAt(cut - 1);
  if (c >= 0xd800 && c <= 0xdbff) cut--;
  return `${name.slice(0, cut).trimEnd()}…`;
}

/**
 * What one line's labels become: the names shown, in the given order, and the codes after them summed up as one
 * "+N" chip (`more`, empty when all are shown). Up to {@link LABELS_SHOWN} codes: every name, each up to
 * {@link LABEL_MAX} characters. More codes: the first {@link LABELS_SHOWN} names when together they fit
 * {@link CROWDED_NAMES_BUDGET} characters, else only the first (cut to the budget), so that the row never runs
 * past the editor's edge; the chip's hover names them all.
 */
export function compactLabels(labels: readonly LineLabel[]): { shown: { label: LineLabel; text: string }[]; more: LineLabel[] } {
  if (labels.length <= LABELS_SHOWN) return { shown: labels.map((label) => ({ label, text: labelText(label.name, LABEL_MAX) })), more: [] };
  const two = labels.slice(0, LABELS_SHOWN);
  const named = two.reduce((n, l) => n + l.name.length, 0) <= CROWDED_NAMES_BUDGET ? two : two.slice(0, 1);
  return {
    shown: named.map((label) => ({ label, text: labelText(label.name, CROWDED_NAMES_BUDGET) })),
    more: labels.slice(named.length),
  };
}

/** {@link labelTextColour}, remembered per colour (a window of lines has thousands of labels in a few dozen colours). */
const textColours = new Map<string, '#000000' | '#FFFFFF'>();
function textColourOf(color: string): '#000000' | '#FFFFFF' {
  let c = textColours.get(color);
  if (!c) {
    if (textColours.size > 10_000) textColours.clear();
    textColours.set(color, (c = labelTextColour(color)));
  }
  return c;
}

/**
 * The labels and stripes of the coded lines from `fromLine` to `toLine` (inclusive, 0-based), ascending.
 * A code with several segments on a line gets one label (at its leftmost column; ties by name, code unit order). Lines `isBlank` says
 * are blank get stripes but no labels. One pass over the layout's segments.
 */
export function marksForLines(layout: CodingLayout, fromLine: number, toLine: number, isBlank: (line: number) => boolean = () => false): LineMarks[] {
  const byLine = new Map<number, PlacedSegment[]>();
  for (const p of layout.segments) {
    if (p.endLine < fromLine || p.startLine > toLine) continue;
    for (let l = Math.max(p.startLine, fromLine); l <= Math.min(p.endLine, toLine); l++) {
      let list = byLine.get(l);
      if (!list) byLine.set(l, (list = []));
      list.push(p);
    }
  }
  const out: LineMarks[] = [];
  for (const line of [...byLine.keys()].sort((a, b) => a - b)) {
    const here = byLine.get(line) as PlacedSegment[];
    const stripes: (string | null)[] = [];
    for (const p of here) {
      if (p.column < 0) continue;
      while (stripes.length <= p.column) stripes.push(null);
      stripes[p.column] = p.code.color;
    }
    const rank = (p: PlacedSegment): number => (p.column < 0 ? STRIPE_COLUMNS : p.column);
    const sorted = here.length > 1 ? [...here].sort((x, y) => rank(x) - rank(y) || (x.code.name < y.code.name ? -1 : x.code.name > y.code.name ? 1 : 0)) : here;
    const seen = new Set<number>();
    const labels: LineLabel[] = [];
    if (!isBlank(line)) {
      for (const p of sorted) {
        if (seen.has(p.code.code_id)) continue;
        seen.add(p.code.code_id);
        labels.push({ code_id: p.code.code_id, name: p.code.name, color: p.code.color, textColor: textColourOf(p.code.color) });
      }
    }
    out.push({ line, labels, stripes });
  }
  return out;
}

/** The colour a mark uses for `color`: itself when `#RRGGBB`, else a neutral grey (a colour from an old project or a hand-edited file). */
export function safeColour(color: string): string {
  return parseHexColour(color) ? color.toUpperCase() : '#808080';
}

/**
 * The gutter image of one line's stripes: an SVG, 16×16 user units stretched to the gutter cell
 * (`preserveAspectRatio="none"`, so stripes of consecutive lines join into continuous bars), one bar 3
 * units wide per column at x = 4·column, each with a thin dark edge so light colours show on a light theme.
 * `stripes` as in {@link LineMarks.stripes}.
 */
export function stripesSvg(stripes: readonly (string | null)[]): string {
  const bars = stripes
    .map((c, i) =>
      c
        ? `<rect x="${4 * i}" y="0" width="3" height="16" fill="${safeColour(c)}"/><rect x="${4 * i + 2.6}" y="0" width="0.4" height="16" fill="#000" fill-opacity="0.25"/>`
        : '',
    )
    .join('');
  return `<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 16 16" preserveAspectRatio="none">${bars}</svg>`;
}

/** A key naming a stripes combination (one decoration type each): the column colours joined, `-` for an empty column. */
export function stripesKey(stripes: readonly (string | null)[]): string {
  return stripes.map((c) => (c ? safeColour(c) : '-')).join(',');
}

/** A stretch of text tinted in one code's colour (see {@link tintPieces}); UTF-16 offsets, end exclusive. */
export interface TintPiece {
  start: number;
  end: number;
  code_id: number;
  color: string;
}

/**
 * The tints of the "both" display, which never blend: the text cut where the set of covering segments
 * changes, each piece tinted in the colour of one covering segment, the one with the lowest underline lane
 * (a segment without one counts last; then the earlier, longer one). So an overlap takes one of its codes'
 * colours (the others show as their own underline, stripe and label), not a brown mix of translucent tints.
 * Adjacent pieces of the same segment are joined. Ascending; one sort of the segments' ends.
 */
export function tintPieces(layout: CodingLayout): TintPiece[] {
  const segs = layout.segments;
  const ev: [number, number][] = [];
  segs.forEach((p, i) => {
    if (p.end > p.start) ev.push([p.start, i], [p.end, -1 - i]);
  });
  ev.sort((a, b) => a[0] - b[0]);
  const rank = (i: number): number => {
    const u = (segs[i] as PlacedSegment).underline;
    return (u < 0 ? UNDERLINE_LANES : u) * segs.length + i;
  };
  const active = new Set<number>();
  const out: TintPiece[] = [];
  let owner = -1;
  let k = 0;
  while (k < ev.length) {
    const pos = (ev[k] as [number, number])[0];
    for (; k < ev.length && (ev[k] as [number, number])[0] === pos; k++) {
      const e = (ev[k] as [number, number])[1];
      if (e >= 0) active.add(e);
      else active.delete(-1 - e);
    }
    let best = -1;
    for (const i of active) if (best < 0 || rank(i) < rank(best)) best = i;
    const next = k < ev.length ? (ev[k] as [number, number])[0] : pos;
    if (best < 0 || next <= pos) {
      owner = -1;
      continue;
    }
    const last = out[out.length - 1];
    if (best === owner && last && last.end === pos) last.end = next;
    else {
      const p = segs[best] as PlacedSegment;
      out.push({ start: pos, end: next, code_id: p.code.code_id, color: p.code.color });
    }
    owner = best;
  }
  return out;
}
