import { ToolError } from '../core/errors';
import { codePointLength, sliceCp, toWellFormed } from '../core/text';
import type { DomainContext } from './events';
import type { Segment } from './model';
import type { ProjectRepository } from './ports';
import { requireSource } from './sources';

type Ctx = DomainContext<ProjectRepository>;

/** One replacement of `[start_pos, end_pos)` (code points) by `text`. */
export interface TextEdit {
  start_pos: number;
  end_pos: number;
  text: string;
}

/** A segment removed because the text it covered is gone. */
export interface RemovedSegment {
  segment_id: number;
  code_id: number;
  text: string;
}

/**
 * Where a position moves when `[a, b)` is replaced by `n` code points. Starts inside the replaced range
 * move after the new text, ends inside it move to its start, so a segment never grows over inserted
 * text at its edges: text typed at a segment's start or end stays outside it, text typed inside it
 * becomes part of it.
 */
export function mapStart(p: number, a: number, b: number, n: number): number {
  if (p < a) return p;
  if (p >= b) return p + n - (b - a);
  return a + n;
}

/** See {@link mapStart}; the end of a segment. */
export function mapEnd(p: number, a: number, b: number, n: number): number {
  if (p <= a) return p;
  if (p > b) return p + n - (b - a);
  return a;
}

/**
 * Applies editor edits to a source's stored text and moves its coded segments with them. Edits apply
 * in the given order, each in the coordinates left by the previous ones (send simultaneous editor
 * changes last-first). A segment whose text is deleted entirely is removed (returned in `removed`);
 * segments that overlap an edit get their new range and text. Emits source.text_edited and one
 * coding.segment_uncoded per removed segment.
 *
 * Errors: SOURCE_NOT_FOUND; INVALID_POSITION when an edit lies outside the text or the source has no
 * text; INVALID_ARGUMENTS when `expectedLength` (the editor's length in code points after the edits)
 * disagrees, which means the editor and the project drifted apart (nothing is written).
 */
export function applySourceEdits(
  ctx: Ctx,
  sourceId: number,
  edits: readonly TextEdit[],
  expectedLength?: number,
): { length: number; moved: number; resized: number; removed: RemovedSegment[] } {
  const source = requireSource(ctx, sourceId);
  if (ctx.repo.getSourceText(sourceId) === null) throw new ToolError('INVALID_POSITION', `The source "${source.name}" has no text to edit`);
  let length = source.length;
  let moved = 0;
  let resized = 0;
  const removed: RemovedSegment[] = [];
  for (const raw of edits) {
    const e = { ...raw, text: toWellFormed(raw.text) };
    if (e.start_pos < 0 || e.end_pos < e.start_pos || e.end_pos > length) {
      throw new ToolError('INVALID_POSITION', `The edit [${e.start_pos}, ${e.end_pos}) is outside "${source.name}" (0..${length})`);
    }
    const n = codePointLength(e.text);
    const delta = n - (e.end_pos - e.start_pos);
    // segments that overlap the replaced range, or strictly contain an insertion point
    const overlapping = ctx.repo.segmentsOverlapping(sourceId, e.start_pos, e.end_pos);
    ctx.repo.spliceSourceText(sourceId, e.start_pos, e.end_pos, e.text, n, ctx.now);
    // everything starting at or after the replaced range moves by delta (overlapping ones start before it)
    moved += ctx.repo.shiftSegments(sourceId, e.end_pos, delta);
    const text = overlapping.length > 0 ? (ctx.repo.getSourceText(sourceId) ?? '') : '';
    for (const s of overlapping) {
      const ns = mapStart(s.start_pos, e.start_pos, e.end_pos, n);
      const ne = mapEnd(s.end_pos, e.start_pos, e.end_pos, n);
      if (ns >= ne) {
        ctx.repo.orphanSegment(s, 'its text was deleted in the editor', ctx.now);
        removed.push({ segment_id: s.segment_id, code_id: s.code_id, text: s.text });
      } else {
        ctx.repo.updateSegmentRange(s.segment_id, ns, ne, sliceCp(text, ns, ne), ctx.now);
        resized++;
      }
    }
    moveCaseRanges(ctx, sourceId, e.start_pos, e.end_pos, n);
    length += delta;
  }
  if (expectedLength !== undefined && expectedLength !== length) {
    throw new ToolError(
      'INVALID_ARGUMENTS',
      `After the edits "${source.name}" would hold ${length} code points but the editor holds ${expectedLength}; reopen the source to reconcile`,
    );
  }
  for (const r of removed) {
    ctx.events.emit({
      event_type: 'coding.segment_uncoded',
      aggregate_type: 'segment',
      aggregate_id: String(r.segment_id),
      payload: { segment_id: r.segment_id, code_id: r.code_id, source_id: sourceId, reason: 'text deleted' },
    });
  }
  ctx.events.emit({
    event_type: 'source.text_edited',
    aggregate_type: 'source',
    aggregate_id: String(sourceId),
    payload: {
      source_id: sourceId,
      edits: edits.length,
      length,
      moved_segments: moved,
      resized_segments: resized,
      removed_segment_ids: removed.map((r) => r.segment_id),
    },
  });
  return { length, moved, resized, removed };
}

/**
 * Moves the source ranges that cases hold with an edit of `[a, b)` into `n` code points, as segments
 * move; a range whose text is deleted entirely is dropped from its case.
 */
function moveCaseRanges(ctx: Ctx, sourceId: number, a: number, b: number, n: number): void {
  const ranges = ctx.repo.listCaseSegmentsOfSource(sourceId).filter((r) => r.end_pos > a || r.start_pos >= b);
  if (ranges.length === 0) return;
  const text = ctx.repo.getSourceText(sourceId) ?? '';
  for (const r of ranges) {
    const ns = mapStart(r.start_pos, a, b, n);
    const ne = mapEnd(r.end_pos, a, b, n);
    if (ns >= ne) ctx.repo.deleteCaseSegment(r.case_segment_id);
    else if (ns !== r.start_pos || ne !== r.end_pos) ctx.repo.updateCaseSegmentRange(r.case_segment_id, ns, ne, sliceCp(text, ns, ne));
  }
}

/** A segment that could not be found in the new text. */
export interface OrphanedSegment {
  segment_id: number;
  code_id: number;
  start_pos: number;
  end_pos: number;
  text: string;
}

/**
 * Replaces a source's stored text with `newText` (a file changed outside the editor) and re-anchors
 * each segment by its quoted text: kept where the same text still sits at the same positions, else
 * moved to the occurrence nearest its old start. Segments whose text no longer occurs are moved to
 * orphan_segments and returned, never silently dropped. Emits source.text_reconciled.
 * Errors: SOURCE_NOT_FOUND.
 */
export function reconcileSourceText(ctx: Ctx, sourceId: number, newText: string): { kept: number; relocated: number; orphaned: OrphanedSegment[] } {
  requireSource(ctx, sourceId);
  newText = toWellFormed(newText);
  const segments: Segment[] = ctx.repo.listSegmentsForSource(sourceId);
  const cps = [...newText];
  const length = cps.length;
  ctx.repo.replaceSourceText(sourceId, newText, length, ctx.now);
  let kept = 0;
  let relocated = 0;
  const orphaned: OrphanedSegment[] = [];
  // code point index of each UTF-16 index, computed lazily through a prefix walk
  const cpOfUtf16 = (u: number) => codePointLength(newText.slice(0, u));
  for (const s of segments) {
    if (s.end_pos <= length && sliceCp(newText, s.start_pos, s.end_pos) === s.text) {
      kept++;
      continue;
    }
    let best = -1;
    let bestDist = Infinity;
    for (let i = newText.indexOf(s.text); i >= 0 && s.text.length > 0; i = newText.indexOf(s.text, i + 1)) {
      const cp = cpOfUtf16(i);
      const d = Math.abs(cp - s.start_pos);
      if (d < bestDist) {
        best = cp;
        bestDist = d;
      }
      if (cp > s.start_pos) break;
    }
    if (best >= 0) {
      ctx.repo.updateSegmentRange(s.segment_id, best, best + codePointLength(s.text), s.text, ctx.now);
      relocated++;
    } else {
      ctx.repo.orphanSegment(s, 'text not found after an outside edit', ctx.now);
      orphaned.push({ segment_id: s.segment_id, code_id: s.code_id, start_pos: s.start_pos, end_pos: s.end_pos, text: s.text });
    }
  }
  ctx.events.emit({
    event_type: 'source.text_reconciled',
    aggregate_type: 'source',
    aggregate_id: String(sourceId),
    payload: { source_id: sourceId, length, kept, relocated, orphaned_segment_ids: orphaned.map((o) => o.segment_id) },
  });
  return { kept, relocated, orphaned };
}
