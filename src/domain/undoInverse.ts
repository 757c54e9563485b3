/**
 * The inverse of an action's events for undo and redo (undoRedo.ts; the module comment there lists what can be
 * undone and how): which events can be inverted ({@link notInvertible}), and applying the inverse through the
 * domain services in the caller's transaction ({@link applyInverse}), refusing with NOT_UNDOABLE "blocked"
 * when the state is no longer the action's after-state.
 */
import { ToolError } from '../core/errors';
import type { DomainEvent, EventRecord, EventType } from './events';
import { invertCaseEvent } from './undo/invertCase';
import { invertCategoryEvent } from './undo/invertCategory';
import { invertCodingEvent } from './undo/invertCoding';
import { invertSourceEvent } from './undo/invertSource';
import { blocked, IdMap, type Ctx, type Inversion } from './undo/inversion';
import { describeEvent, type Names } from './undoWords';

/** One change an undo or redo made: one event it raised, in words. */
export interface UndoChange {
  event_type: EventType;
  aggregate_type: string;
  aggregate_id: string;
  /** what changed, with names (e.g. "removed the coding 'Food security' from interview-04") */
  description: string;
}

// ---------------------------------------------------------------------------------------------------------
// what can be inverted

/** Why an event cannot be inverted, or null when it can. */
export function notInvertible(e: EventRecord): { reason: 'unsupported' | 'recorded_before'; why: string } | null {
  const p = e.payload;
  const unsupported = (why: string) => ({ reason: 'unsupported' as const, why });
  const before = (what: string) => ({ reason: 'recorded_before' as const, why: `it was recorded before Marginalia kept ${what} in its event` });
  switch (e.event_type) {
    case 'coding.segment_coded':
    case 'coding.code_created':
    case 'coding.code_renamed':
    case 'coding.code_moved':
    case 'coding.category_created':
    case 'coding.category_renamed':
    case 'case.created':
    case 'case.member_added':
    case 'case.member_removed':
    case 'case.attribute_set':
    case 'case.renamed':
    case 'case.attribute_renamed':
    case 'source.renamed':
    case 'source.moved':
    case 'source.attribute_set':
    case 'source.folder_created':
    case 'source.folder_renamed':
    case 'project.briefing_updated':
      return null;
    case 'coding.segment_uncoded':
      if (p.reason === 'text deleted') return unsupported("its text was deleted in the editor (the editor's own undo puts it back)");
      return 'start' in p && 'owner' in p ? null : before("the removed coding's positions");
    case 'coding.segment_updated':
    case 'coding.code_updated':
    case 'coding.category_updated':
    case 'source.updated':
    case 'case.updated':
      return p.field === 'memo' || p.field === 'color' || p.field === 'parent_id' ? null : unsupported(`changing ${String(p.field)} cannot be undone`);
    case 'coding.code_deleted':
      if (typeof p.segment_count === 'number' && p.segment_count > 0) return unsupported('deleting a code with its codings cannot be undone');
      return 'color' in p ? null : before("the deleted code's colour and memo");
    case 'coding.category_deleted':
      return 'sub_category_ids' in p ? null : before("the deleted category's contents");
    case 'case.deleted':
      return 'sources' in p ? null : before("the deleted case's members and attributes");
    case 'coding.codes_merged':
      return unsupported('merging codes cannot be undone');
    case 'source.imported':
      return unsupported('imports cannot be undone (remove the source instead)');
    case 'source.deleted':
      return unsupported('deleting a source cannot be undone');
    case 'source.folder_deleted':
      return 'parent_id' in p ? null : before("the deleted folder's parent");
    case 'coding.av_segment_coded':
    case 'coding.av_segment_uncoded':
      return unsupported('AV codings cannot be undone yet (remove or apply the AV coding again)');
    case 'case.attributes_set':
    case 'source.attributes_set':
      return unsupported('attributes set by an import cannot be undone');
    case 'project.snapshot_restored':
      return unsupported('restoring a snapshot cannot be undone here (restore the snapshot taken before it)');
    default:
      return unsupported(`${e.event_type} cannot be undone`);
  }
}

/** NOT_UNDOABLE unless every event of `events` can be inverted. */
export function checkInvertible(events: EventRecord[], what: string): void {
  for (const e of events) {
    const no = notInvertible(e);
    if (no)
      throw new ToolError('NOT_UNDOABLE', `Cannot ${what}: ${no.why}. Undo stops here; older actions stay as they are.`, {
        reason: no.reason,
        event_type: e.event_type,
      });
  }
}

/**
 * Applies the inverse of `events` (last first) through the domain services, each raised event marked with
 * `mark`. A domain error on the way (a name taken since, a code gone) becomes NOT_UNDOABLE "blocked".
 */
export function applyInverse(ctx: Ctx, events: EventRecord[], mark: Record<string, string>, what: string, names: Names): UndoChange[] {
  const raised: DomainEvent[] = [];
  const sub: Ctx = {
    ...ctx,
    events: {
      emit: (e) => {
        const marked = { ...e, payload: { ...e.payload, ...mark } };
        raised.push(marked);
        names.learn(marked);
        ctx.events.emit(marked);
      },
    },
  };
  const ids = new IdMap();
  for (const e of [...events].reverse()) {
    try {
      invert(sub, e, ids, what, names);
    } catch (err) {
      if (err instanceof ToolError && err.code !== 'NOT_UNDOABLE') {
        throw blocked(what, `${err.message} (changed since)`, { error_code: err.code });
      }
      throw err;
    }
  }
  names.forgetCurrent();
  return raised.map((e) => ({
    event_type: e.event_type,
    aggregate_type: e.aggregate_type,
    aggregate_id: e.aggregate_id,
    description: describeEvent(e, names),
  }));
}

/** Applies the inverse of one event (checked by {@link notInvertible}). */
function invert(ctx: Ctx, e: EventRecord, ids: IdMap, what: string, names: Names): void {
  const changedSince = (thing: string, now: string) => blocked(what, `${thing} has been changed since (it is now ${now})`);
  const x: Inversion = { ctx, p: e.payload, repo: ctx.repo, ids, what, names, changedSince };
  const t = e.event_type;
  if (invertCodingEvent(x, t) || invertCategoryEvent(x, t) || invertCaseEvent(x, t) || invertSourceEvent(x, t)) return;
  throw new ToolError('NOT_UNDOABLE', `Cannot ${what}: ${e.event_type} cannot be undone.`, { reason: 'unsupported', event_type: e.event_type });
}
