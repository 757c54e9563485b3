import { ToolError } from '../core/errors';
import { codePointLength, sliceCp } from '../core/text';
import { requireCode, stampOf } from './codebook';
import type { DomainContext } from './events';
import type { Segment } from './model';
import type { ProjectRepository } from './ports';
import { requireSource } from './sources';
import { textSegmentNotFound, USE_REMOVE_AV_SEGMENT } from './segmentKinds';

type Ctx = DomainContext<ProjectRepository>;

/** What {@link applyCode} did: the segment, and whether it was new (false: the same coding existed). */
export interface AppliedCoding {
  segment: Segment;
  created: boolean;
}

/**
 * Codes `[start_pos, end_pos)` (code points) of a text source with a code, storing the text it covers.
 * The segment's owner (coder) is `ctx.actor.user`. The same coder applying the same code to exactly the same
 * range again gets the existing segment back (created: false), so retries are safe; another coder coding
 * the same range gets a segment of their own (coder comparison needs both). Emits coding.segment_coded.
 *
 * Errors: CODE_NOT_FOUND, SOURCE_NOT_FOUND, INVALID_POSITION (negative, empty, past the end, or a
 * source without text), INVALID_ARGUMENTS (importance outside 0..2).
 */
export function applyCode(
  ctx: Ctx,
  input: { code_id: number; source_id: number; start_pos: number; end_pos: number; memo?: string | null; importance?: number },
  textCache?: Map<number, string | null>,
): AppliedCoding {
  requireCode(ctx, input.code_id);
  const source = requireSource(ctx, input.source_id);
  let text = textCache?.get(input.source_id);
  if (text === undefined) {
    text = ctx.repo.getSourceText(input.source_id);
    textCache?.set(input.source_id, text);
  }
  if (text === null) throw new ToolError('INVALID_POSITION', `The source "${source.name}" (${source.type}) has no text to code; use AV coding`);
  const length = source.length;
  const { start_pos: start, end_pos: end } = input;
  if (!Number.isInteger(start) || !Number.isInteger(end) || start < 0 || end <= start || end > length) {
    throw new ToolError(
      'INVALID_POSITION',
      `The range [${start}, ${end}) is not inside the source "${source.name}" (0..${length} code points, end after start)`,
      { start_pos: start, end_pos: end, source_length: length },
    );
  }
  const importance = input.importance ?? 0;
  if (!Number.isInteger(importance) || importance < 0 || importance > 2) {
    throw new ToolError('INVALID_ARGUMENTS', `importance must be 0, 1 or 2 (got ${importance})`);
  }
  const existing = ctx.repo.findSegment(input.code_id, input.source_id, start, end, ctx.actor.user);
  if (existing) return { segment: existing, created: false };
  const segText = sliceCp(text, start, end);
  const id = ctx.repo.insertSegment(
    { code_id: input.code_id, source_id: input.source_id, start_pos: start, end_pos: end, text: segText, memo: input.memo ?? null, importance },
    stampOf(ctx),
  );
  ctx.events.emit({
    event_type: 'coding.segment_coded',
    aggregate_type: 'segment',
    aggregate_id: String(id),
    payload: { segment_id: id, code_id: input.code_id, source_id: input.source_id, start: start, end: end, text: segText },
  });
  const segment = ctx.repo.getSegment(id);
  if (!segment) throw new Error(`segment ${id} vanished after insert`);
  return { segment, created: true };
}

/**
 * Removes a coded text segment. Emits coding.segment_uncoded {segment_id, code_id, source_id, start, end, text,
 * memo, importance, owner, session_id}: everything needed to put the coding back (undo, src/domain/undoRedo.ts; events
 * stored before carry only the first three). Errors: SEGMENT_NOT_FOUND (also for an AV segment's id, naming
 * remove_av_segment; nothing is removed).
 */
export function deleteSegment(ctx: Ctx, id: number): Segment {
  const seg = ctx.repo.getSegment(id);
  if (!seg) throw textSegmentNotFound(ctx.repo, id, USE_REMOVE_AV_SEGMENT);
  ctx.repo.deleteSegment(id);
  ctx.events.emit({
    event_type: 'coding.segment_uncoded',
    aggregate_type: 'segment',
    aggregate_id: String(id),
    payload: {
      segment_id: id,
      code_id: seg.code_id,
      source_id: seg.source_id,
      start: seg.start_pos,
      end: seg.end_pos,
      text: seg.text,
      memo: seg.memo,
      importance: seg.importance,
      owner: seg.owner,
      session_id: seg.session_id,
    },
  });
  return seg;
}

/**
 * Sets (or with null clears) a text segment's memo. Emits coding.segment_updated. Errors: SEGMENT_NOT_FOUND
 * (also for an AV segment's id, saying that its memo is the one given to apply_av_code).
 */
export function updateSegmentMemo(ctx: Ctx, id: number, memo: string | null): { segment: Segment; old_memo: string | null } {
  const seg = ctx.repo.getSegment(id);
  if (!seg) throw textSegmentNotFound(ctx.repo, id, 'segment memos set here are those of text segments; an AV segment keeps the memo given to apply_av_code');
  const next = memo === '' ? null : memo;
  ctx.repo.setSegmentMemo(id, next, ctx.now);
  ctx.events.emit({
    event_type: 'coding.segment_updated',
    aggregate_type: 'segment',
    aggregate_id: String(id),
    payload: { segment_id: id, code_id: seg.code_id, source_id: seg.source_id, field: 'memo', old_value: seg.memo, new_value: next },
  });
  const updated = ctx.repo.getSegment(id);
  if (!updated) throw new Error(`segment ${id} vanished after update`);
  return { segment: updated, old_memo: seg.memo };
}

/** Length of a text in code points (re-exported for tools that report lengths). */
export { codePointLength };
