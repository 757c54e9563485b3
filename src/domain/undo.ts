import { ToolError } from '../core/errors';
import { countOf } from '../core/plural';
import { deleteCode } from './codebook';
import { deleteSegment } from './coding';
import type { CausedBy, DomainContext } from './events';
import type { ProjectRepository } from './ports';

type Ctx = DomainContext<ProjectRepository>;

/** A coder who coded with a code, as {@link undoAction}'s refusal names them. */
export interface OtherCoder {
  coder: string;
  /** null: a coding from before roles were recorded (migration 14) whose role is unknown */
  coder_role: 'researcher' | 'agent' | null;
  /** how many text and AV codings they made with the code */
  codings: number;
}

/**
 * Undoes an agent's action, identified by the correlation id its events carry (agent-context spec,
 * "Undo behaviour for AI actions"): an applied code's segment is removed, a created code is deleted with the
 * codings its creator made with it (in this action or since). Issue 14, item 8: a created code that another
 * coder (another owner, or the same name in another role) has coded with since is never deleted: the whole undo
 * is refused, naming those coders, and nothing changes. Merges, deletions and everything else cannot be undone.
 * Already-gone items are skipped.
 * Errors: NOT_UNDOABLE (unknown correlation id, or an action that cannot be undone; details.reason `blocked`
 * with `code_id` and `coders` [{coder, coder_role, codings}] when other coders used a code it created; nothing
 * is changed).
 */
export function undoAction(ctx: Ctx, correlationId: string): { undone: { kind: 'code' | 'segment'; id: number }[] } {
  const events = ctx.repo.listEventsByCorrelation(correlationId).filter((e) => !e.event_type.startsWith('approval.') && !e.event_type.startsWith('session.'));
  if (events.length === 0) throw new ToolError('NOT_UNDOABLE', `No action with correlation id ${correlationId}`);
  const blocking = events.filter((e) => e.event_type !== 'coding.code_created' && e.event_type !== 'coding.segment_coded');
  if (blocking.length > 0) {
    throw new ToolError(
      'NOT_UNDOABLE',
      `This action cannot be undone: ${[...new Set(blocking.map((e) => e.event_type))].join(', ')} (only creating a code and applying a code can)`,
    );
  }
  // checked before anything changes: a created code other coders have used blocks the whole undo
  for (const e of events) {
    if (e.event_type !== 'coding.code_created') continue;
    const id = e.payload.code_id as number;
    const code = ctx.repo.getCode(id);
    if (!code) continue;
    const others = otherCoders(ctx.repo, id, e.caused_by);
    if (others.length === 0) continue;
    const named = others.map((o) => `${o.coder} (${o.coder_role ?? 'role unknown'}, ${countOf(o.codings, 'coding')})`).join(', ');
    throw new ToolError(
      'NOT_UNDOABLE',
      `Cannot undo creating the code "${code.name}" (code_id ${id}): other coders have coded with it since: ${named}. ` +
        'Undoing it would delete their codings; nothing was changed. Remove or recode their codings first, or merge the code instead.',
      { reason: 'blocked', code_id: id, coders: others },
    );
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

/**
 * The coders other than `creator` who coded with `codeId`: another owner name, or the same name recorded in
 * another role (when both roles are known).
 */
function otherCoders(repo: ProjectRepository, codeId: number, creator: CausedBy): OtherCoder[] {
  const byCoder = new Map<string, OtherCoder>();
  for (const c of repo.codingCodersOfCode(codeId)) {
    const same = c.owner === creator.user && (!c.coder_role || !creator.role || c.coder_role === creator.role);
    if (same) continue;
    const key = `${c.owner}\u0000${c.coder_role ?? ''}`;
    const seen = byCoder.get(key);
    if (seen) seen.codings += c.count;
    else byCoder.set(key, { coder: c.owner, coder_role: c.coder_role, codings: c.count });
  }
  return [...byCoder.values()];
}
