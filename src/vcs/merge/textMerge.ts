/**
 * Three-way merge of one transcript's text (issue 16, item 3) and the edit lists that carry each side's codings
 * onto the merged text. Pure: no I/O.
 *
 * The text is cut into tokens (a run of letters, marks, digits and `_`; a run of white space; any other single
 * code point) and each side is compared with the base by jsdiff's `diffArrays` (the `diff` package, Myers' O(ND)
 * algorithm, https://github.com/kpdecker/jsdiff) after stripping the common prefix and suffix. Each side then
 * is a list of {@link Hunk}s: base ranges and what replaced them. Hunks of the two sides that overlap or touch (share a base code
 * point, meet at a point, or insert at the same point or inside or at the edge of the other's range) form a
 * cluster, as diff3 treats adjacent changes: a cluster with hunks of one side only takes that side's text; equal texts on both sides are taken
 * once; different texts are an overlap conflict, and the merged text keeps ours (theirs is in the conflict).
 *
 * Codings follow the text through the editor's own edit tracking ({@link mapStart} / {@link mapEnd} of
 * src/domain/sourceEdits.ts): for each side, {@link mergeText} returns the edits that turn that side's text
 * into the merged one, and {@link mapRange} moves a `[start, end)` through them exactly as typing them in
 * the editor would. All positions are Unicode code points, ranges half-open.
 */
import { diffArrays } from 'diff';
import { mapEnd, mapStart, type TextEdit } from '../../domain/sourceEdits';

/** One replacement of base code points `[a, b)` by `text` (`a === b`: an insertion). */
export interface Hunk {
  a: number;
  b: number;
  text: string;
}

/** Two sides' overlapping edits of one passage. Positions are code points. */
export interface TextOverlap {
  /** the passage in the base text */
  base: string;
  /** ours' version of the passage (what the merged text holds) */
  ours: string;
  /** theirs' version of the passage (left out of the merged text) */
  theirs: string;
  /** where ours' version lies in the merged text */
  start_pos: number;
  end_pos: number;
  /** where theirs' version lies in theirs' text */
  theirs_start_pos: number;
  theirs_end_pos: number;
}

/**
 * An edit of a merge: typed text ({@link TextEdit}, moved through by the editor's rules), or, with `passage`, one
 * side's version of a conflicting passage replaced by the merged text's version of the same passage: a range that
 * covered any of the replaced words covers the whole replacement (see {@link mapRange}).
 */
export interface MergeEdit extends TextEdit {
  passage?: boolean;
}

/** The result of {@link mergeText}. */
export interface TextMergeResult {
  text: string;
  /** edits (in order, each in the coordinates the previous ones left) turning ours' text into `text` */
  oursEdits: MergeEdit[];
  /** the same for theirs' text */
  theirsEdits: MergeEdit[];
  overlaps: TextOverlap[];
}

const TOKEN = /[\p{L}\p{M}\p{N}_]+|\s+|[^]/gsu;

/** `text` cut into tokens (see the module comment); joined they give `text` back. */
export function tokenize(text: string): string[] {
  return text.match(TOKEN) ?? [];
}

function cpLen(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0xd800 || c > 0xdbff || i + 1 >= s.length) n++;
    else {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
      n++;
    }
  }
  return n;
}

/** Edits turning `from` into `to`, as base ranges of `from` (code points) in ascending order, none overlapping. */
export function diffHunks(from: string, to: string): Hunk[] {
  if (from === to) return [];
  const a = tokenize(from);
  const b = tokenize(to);
  let pre = 0;
  while (pre < a.length && pre < b.length && a[pre] === b[pre]) pre++;
  let suf = 0;
  while (suf < a.length - pre && suf < b.length - pre && a[a.length - 1 - suf] === b[b.length - 1 - suf]) suf++;
  let pos = 0;
  for (let i = 0; i < pre; i++) pos += cpLen(a[i]!);
  const midA = a.slice(pre, a.length - suf);
  const midB = b.slice(pre, b.length - suf);
  const changes = diffArrays(midA, midB);
  const hunks: Hunk[] = [];
  let cur: Hunk | null = null;
  for (const ch of changes) {
    const text = ch.value.join('');
    if (!ch.added && !ch.removed) {
      if (cur) hunks.push(cur);
      cur = null;
      pos += cpLen(text);
      continue;
    }
    cur ??= { a: pos, b: pos, text: '' };
    if (ch.removed) {
      pos += cpLen(text);
      cur.b = pos;
    } else cur.text += text;
  }
  if (cur) hunks.push(cur);
  return hunks;
}

/** True when hunk `h` touches or overlaps the cluster `[A, B)`: edits of neighbouring tokens are one passage. */
function overlaps(h: Hunk, A: number, B: number): boolean {
  return h.a <= B && A <= h.b;
}

/** `cps[a, b)` with `hunks` (inside that range, ascending) applied. */
function applyIn(cps: readonly string[], a: number, b: number, hunks: readonly Hunk[]): string {
  let out = '';
  let p = a;
  for (const h of hunks) {
    out += cps.slice(p, h.a).join('') + h.text;
    p = h.b;
  }
  return out + cps.slice(p, b).join('');
}

/**
 * Three-way merge of `base`, `ours` and `theirs` (see the module comment). Identical inputs on a side give
 * no edits for it; when neither side changed the text, `text` is `base`.
 */
export function mergeText(base: string, ours: string, theirs: string): TextMergeResult {
  if (ours === theirs) return { text: ours, oursEdits: [], theirsEdits: [], overlaps: [] };
  if (theirs === base) return { text: ours, oursEdits: [], theirsEdits: toEdits(diffHunks(theirs, ours)), overlaps: [] };
  if (ours === base) return { text: theirs, oursEdits: toEdits(diffHunks(ours, theirs)), theirsEdits: [], overlaps: [] };
  const hO = diffHunks(base, ours).map((h) => ({ ...h, side: 0 }));
  const hT = diffHunks(base, theirs).map((h) => ({ ...h, side: 1 }));
  const all = [...hO, ...hT].sort((x, y) => x.a - y.a || x.b - y.b || x.side - y.side);
  const cps = Array.from(base);
  // clusters of overlapping hunks
  const clusters: { A: number; B: number; o: Hunk[]; t: Hunk[] }[] = [];
  for (const h of all) {
    const last = clusters[clusters.length - 1];
    if (last && overlaps(h, last.A, last.B)) {
      last.A = Math.min(last.A, h.a);
      last.B = Math.max(last.B, h.b);
      (h.side === 0 ? last.o : last.t).push(h);
    } else clusters.push({ A: h.a, B: h.b, o: h.side === 0 ? [h] : [], t: h.side === 1 ? [h] : [] });
  }
  let text = '';
  let p = 0;
  let dO = 0; // ours' position minus base position, before the current cluster
  let dT = 0;
  let dM = 0;
  const oursEdits: MergeEdit[] = [];
  const theirsEdits: MergeEdit[] = [];
  const found: TextOverlap[] = [];
  for (const c of clusters) {
    const baseRegion = cps.slice(c.A, c.B).join('');
    const oRegion = applyIn(cps, c.A, c.B, c.o);
    const tRegion = applyIn(cps, c.A, c.B, c.t);
    const merged = c.t.length === 0 ? oRegion : c.o.length === 0 ? tRegion : oRegion;
    text += cps.slice(p, c.A).join('') + merged;
    p = c.B;
    const mStart = c.A + dM;
    const oStart = c.A + dO;
    const tStart = c.A + dT;
    const conflict = c.o.length > 0 && c.t.length > 0 && oRegion !== tRegion;
    // a conflicting passage: the side left out has its version replaced as a whole, so its codings keep the passage
    if (conflict) theirsEdits.push({ start_pos: tStart, end_pos: tStart + cpLen(tRegion), text: merged, passage: true });
    else if (tRegion !== merged) for (const h of diffHunks(tRegion, merged)) theirsEdits.push({ start_pos: tStart + h.a, end_pos: tStart + h.b, text: h.text });
    if (oRegion !== merged) for (const h of diffHunks(oRegion, merged)) oursEdits.push({ start_pos: oStart + h.a, end_pos: oStart + h.b, text: h.text });
    if (conflict) {
      found.push({
        base: baseRegion,
        ours: oRegion,
        theirs: tRegion,
        start_pos: mStart,
        end_pos: mStart + cpLen(merged),
        theirs_start_pos: tStart,
        theirs_end_pos: tStart + cpLen(tRegion),
      });
    }
    const len = c.B - c.A;
    dO += cpLen(oRegion) - len;
    dT += cpLen(tRegion) - len;
    dM += cpLen(merged) - len;
  }
  text += cps.slice(p).join('');
  return { text, oursEdits: shiftSequential(oursEdits), theirsEdits: shiftSequential(theirsEdits), overlaps: found };
}

/** The edits (in order, as {@link mapRange} takes them) turning `from` into `to`. */
export function editsBetween(from: string, to: string): MergeEdit[] {
  return toEdits(diffHunks(from, to));
}

/** Hunks of one text (ascending, in its coordinates) as edits to apply in order, each in the coordinates the previous ones left. */
function toEdits(hunks: readonly Hunk[]): MergeEdit[] {
  return shiftSequential(hunks.map((h) => ({ start_pos: h.a, end_pos: h.b, text: h.text })));
}

/** Ascending edits in the original coordinates -> the same edits in the coordinates each previous one left. */
function shiftSequential(edits: readonly MergeEdit[]): MergeEdit[] {
  let d = 0;
  return edits.map((e) => {
    const out: MergeEdit = { ...e, start_pos: e.start_pos + d, end_pos: e.end_pos + d };
    d += cpLen(e.text) - (e.end_pos - e.start_pos);
    return out;
  });
}

/**
 * Moves `[start, end)` through `edits` (in order, as {@link applySourceEdits} applies them) with the editor's
 * rules (`mapStart`/`mapEnd` of src/domain/sourceEdits.ts: text typed at a range's edges stays outside it); a
 * `passage` edit (a conflicting passage replaced by the other side's version) is taken in whole instead: a range
 * starting or ending inside or at the edge of the replaced words covers the replacement, so a coding spanning the
 * passage keeps covering it and one of words inside it stays on that passage. Null when the range's text was
 * deleted entirely (the editor orphans such a coding).
 */
export function mapRange(edits: readonly MergeEdit[], start: number, end: number): { start_pos: number; end_pos: number } | null {
  let s = start;
  let e = end;
  for (const ed of edits) {
    const n = cpLen(ed.text);
    const a = ed.start_pos;
    const b = ed.end_pos;
    if (ed.passage && a < b) {
      s = s < a ? s : s >= b ? s + n - (b - a) : a;
      e = e <= a ? e : e > b ? e + n - (b - a) : a + n;
    } else {
      s = mapStart(s, a, b, n);
      e = mapEnd(e, a, b, n);
    }
    if (s >= e) return null;
  }
  return { start_pos: s, end_pos: e };
}
