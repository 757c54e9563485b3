import { ToolError } from '../core/errors';
import { deleteCode } from './codebook';
import { deleteSegment } from './coding';
import type { DomainContext } from './events';
import type { ProjectRepository } from './ports';

type Ctx = DomainContext<ProjectRepository>;

/**
 * Undoes an agent's action, identified by the correlation id its events carry (agent-context spec,
 * "Undo behaviour for AI actions"): a created code is deleted (with any segments it got since), an
 * applied code's segment is removed. Merges, deletions and everything else cannot be undone.
 * Already-gone items are skipped. Errors: NOT_UNDOABLE (unknown correlation id, or an action that
 * cannot be undone; nothing is changed).
 */
export function undoAction(ctx: Ctx, correlationId: string): { undone: { kind: 'code' | 'segment'; id: number }[] } {
  const events = ctx.repo.listEventsByCorrelation(correlationId).filter((e) => !e.event_type.startsWith('approval.') && !e.event_type.startsWith('session.'));
  if (events.length === 0) throw new ToolError('NOT_UNDOABLE', `No action with correlation id ${correlationId}`);
  const blocking = events.filter((e) => e.event_type !== 'coding.code_created' && e.event_type !== 'coding.segment_coded');
  if (blocking.length > 0) {
    throw new ToolError('NOT_UNDOABLE', `This action cannot be undone: ${[...new Set(blocking.map((e) => e.event_type))].join(', ')} (only creating a code and applying a code can)`);
  }
  const undone: { kind: 'code' | 'segment'; id: number }[] = [];
  for (const e of [...events].reverse()) {
    if (e.event_type === 'coding.segment_coded') {
      const id = e.payload.segment_id as number;
      if (ctx.repo.getSegment(id)) {
        deleteSegment(ctx, id);
        undone.push({ kind: 'segment', id });
      }
    } else {
      const id = e.payload.code_id as number;
      if (ctx.repo.getCode(id)) {
        deleteCode(ctx, id, true);
        undone.push({ kind: 'code', id });
      }
    }
  }
  return { undone };
}
