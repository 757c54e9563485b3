import { ToolError } from '../core/errors';
import type { ProjectRepository } from './ports';

/**
 * Text segments and AV segments share the name `segment_id` and, since migration 11, one id space: an id names
 * at most one segment of either kind. A tool given the id of the other kind is refused with an error that
 * names the tool for it, and changes nothing (issue 15 item 7: `delete_segment` with an AV segment's id had
 * deleted an unrelated text coding).
 */

/** What the not-found errors look up: a text segment and an AV segment by id. */
type SegmentLookup = Pick<ProjectRepository, 'getSegment' | 'getAvSegment'>;

/**
 * The error for a text segment id `id` that names no text segment, for tool `tool`. When `id` is an AV
 * segment's, the message says so and what to use instead (`instead`, e.g. "use remove_av_segment"), and
 * details are `{segment_id, kind: 'av'}`. Error code SEGMENT_NOT_FOUND either way.
 */
export function textSegmentNotFound(repo: SegmentLookup, id: number, instead: string): ToolError {
  if (repo.getAvSegment(id)) {
    return new ToolError('SEGMENT_NOT_FOUND', `segment ${id} is an AV segment, not a text segment: ${instead}`, {
      segment_id: id,
      kind: 'av',
    });
  }
  return new ToolError('SEGMENT_NOT_FOUND', `No text segment with segment_id ${id}`);
}

/**
 * The error for an AV segment id `id` that names no AV segment (remove_av_segment). When `id` is a text
 * segment's, the message says so and names delete_segment, and details are `{segment_id, kind: 'text'}`.
 * Error code AV_SEGMENT_NOT_REMOVED/NOT_FOUND either way.
 */
export function avSegmentNotFound(repo: SegmentLookup, id: number): ToolError {
  if (repo.getSegment(id)) {
    return new ToolError('AV_SEGMENT_NOT_REMOVED/NOT_FOUND', `segment ${id} is a text segment, not an AV segment: use delete_segment`, {
      segment_id: id,
      kind: 'text',
    });
  }
  return new ToolError('AV_SEGMENT_NOT_REMOVED/NOT_FOUND', `No AV segment with segment_id ${id}`);
}

/** What {@link textSegmentNotFound} tells a caller of delete_segment or remove_code given an AV segment's id. */
export const USE_REMOVE_AV_SEGMENT = 'use remove_av_segment';
