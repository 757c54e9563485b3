/**
 * The inverse of an action's events for undo and redo (undoRedo.ts; the module comment there lists what can be
 * undone and how): which events can be inverted ({@link notInvertible}), and applying the inverse through the
 * domain services in the caller's transaction ({@link applyInverse}), refusing with NOT_UNDOABLE "blocked"
 * when the state is no longer the action's after-state.
 */
import { ToolError } from '../core/errors';
import { sliceCp } from '../core/text';
import { addSegmentToCase, addSourceToCase, createCase, deleteCase, renameCase, renameCaseAttribute, setCaseAttribute } from './cases';
import { deleteCategory, renameCategory, updateCategoryMemo } from './categories';
import { createCategory, createCode, deleteCode, moveCodeToCategory, renameCode, setCodeColor, updateCodeMemo } from './codebook';
import { deleteSegment, updateSegmentMemo } from './coding';
import type { DomainContext, DomainEvent, EventRecord, EventType } from './events';
import { updateCaseMemo, updateProjectBriefing, type BriefingFields } from './memos';
import type { Actor, CoderRole } from './model';
import type { AttributeType, AttributeValue, ProjectRepository } from './ports';
import { setSourceAttribute } from './sourceAttributes';
import { createFolder, deleteFolder, moveSourceToFolder, renameFolder, renameSource, updateSourceMemo } from './sources';
import { describeEvent, formatValue, Names, num, quoteMemo, str } from './undoWords';

type Ctx = DomainContext<ProjectRepository>;

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

/** New ids given to items an inverse made again, by kind and old id (later events of the same action name the old ids). */
class IdMap {
  private readonly maps = new Map<string, Map<number, number>>();
  set(kind: string, from: number, to: number): void {
    let m = this.maps.get(kind);
    if (!m) this.maps.set(kind, (m = new Map()));
    m.set(from, to);
  }
  get(kind: string, id: number): number {
    return this.maps.get(kind)?.get(id) ?? id;
  }
  /** `id` remapped, null staying null */
  opt(kind: string, id: unknown): number | null {
    return id === null || id === undefined ? null : this.get(kind, id as number);
  }
}

/** A refusal because the state changed since the action. */
function blocked(what: string, why: string, extra: Record<string, unknown> = {}): ToolError {
  return new ToolError('NOT_UNDOABLE', `Cannot ${what}: ${why}.`, { reason: 'blocked', ...extra });
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

/**
 * `ctx` acting as the owner (and session) an event recorded for an item, so what undo makes again keeps the
 * coder who made it (stored as `owner`); without them (an event of undo's own), the caller.
 */
function ownedBy(ctx: Ctx, p: Record<string, unknown>): Ctx {
  const user = typeof p.owner === 'string' ? p.owner : ctx.actor.user;
  const session = typeof p.session_id === 'string' ? p.session_id : ctx.actor.session_id;
  const role = roleOfSession(ctx, session);
  const actor: Actor = { ...ctx.actor, user, session_id: session };
  if (role) actor.role = role;
  else delete actor.role;
  return { ...ctx, actor };
}

/**
 * The coder role of what `session` made, for an item undo makes again (migration 14's `coder_role`): the caller's
 * own session → the caller's role; the local UI → researcher; else the role its session.connected event names;
 * a session with no such event ran without the agent layer (tests, the sample seeder): the caller's role. Null:
 * a session connected before roles were recorded.
 */
function roleOfSession(ctx: Ctx, session: string | null): CoderRole | null {
  if (session === null || session === ctx.actor.session_id) return ctx.actor.role ?? null;
  if (session === 'local') return 'researcher';
  const connected = ctx.repo.findSessionConnected(session, Number.MAX_SAFE_INTEGER);
  // no agent layer: the role followed the client type, as the caller's own did
  if (!connected) return ctx.actor.role ?? null;
  const role = connected.payload.role;
  return role === 'researcher' || role === 'agent' ? role : null;
}

const nullableStr = (v: unknown) => (v === null || v === undefined ? null : String(v));

/** What the inverse of one event works with. */
interface Inversion {
  ctx: Ctx;
  p: Record<string, unknown>;
  repo: ProjectRepository;
  ids: IdMap;
  what: string;
  names: Names;
  /** the refusal for a thing that no longer has the value the event gave it */
  changedSince: (thing: string, now: string) => ToolError;
}

/** Applies the inverse of one event (checked by {@link notInvertible}). */
function invert(ctx: Ctx, e: EventRecord, ids: IdMap, what: string, names: Names): void {
  const changedSince = (thing: string, now: string) => blocked(what, `${thing} has been changed since (it is now ${now})`);
  const x: Inversion = { ctx, p: e.payload, repo: ctx.repo, ids, what, names, changedSince };
  const t = e.event_type;
  if (invertCodingEvent(x, t) || invertCategoryEvent(x, t) || invertCaseEvent(x, t) || invertSourceEvent(x, t)) return;
  throw new ToolError('NOT_UNDOABLE', `Cannot ${what}: ${e.event_type} cannot be undone.`, { reason: 'unsupported', event_type: e.event_type });
}

/** Inverse of a segment or code event (coding, memo, code created/deleted/renamed/recoloured/moved); false for other events. */
function invertCodingEvent(x: Inversion, type: EventType): boolean {
  const { ctx, p, repo, ids, what, names, changedSince } = x;
  switch (type) {
    case 'coding.segment_coded': {
      const id = ids.get('segment', num(p.segment_id));
      const seg = repo.getSegment(id);
      if (!seg) throw blocked(what, `the coding '${names.code(num(p.code_id))}' in ${names.source(num(p.source_id))} has been removed since`);
      if (seg.code_id !== ids.get('code', num(p.code_id)))
        throw blocked(what, `that coding now carries the code '${names.code(seg.code_id)}' (merged or moved since)`);
      deleteSegment(ctx, id);
      return true;
    }
    case 'coding.segment_uncoded': {
      const codeId = ids.get('code', num(p.code_id));
      const sourceId = num(p.source_id);
      const code = repo.getCode(codeId);
      if (!code) throw blocked(what, `the code '${names.code(codeId)}' has been deleted since`);
      const source = repo.getSource(sourceId);
      if (!source) throw blocked(what, `the source ${names.source(sourceId)} has been deleted since`);
      const start = num(p.start);
      const end = num(p.end);
      const text = repo.getSourceText(sourceId);
      if (text === null || end > source.length || sliceCp(text, start, end) !== p.text) {
        throw blocked(what, `the text of ${source.name} at [${start}, ${end}) has changed since (the editor's own undo may put it back first)`);
      }
      const owner = str(p.owner);
      if (repo.findSegment(codeId, sourceId, start, end, owner)) throw blocked(what, `${owner} has coded the same passage with '${code.name}' again since`);
      const id = repo.insertSegment(
        {
          code_id: codeId,
          source_id: sourceId,
          start_pos: start,
          end_pos: end,
          text: str(p.text),
          memo: nullableStr(p.memo),
          importance: num(p.importance ?? 0),
        },
        {
          owner,
          session_id: typeof p.session_id === 'string' ? p.session_id : ctx.actor.session_id,
          now: ctx.now,
          coder_role: roleOfSession(ctx, typeof p.session_id === 'string' ? p.session_id : ctx.actor.session_id),
        },
      );
      ctx.events.emit({
        event_type: 'coding.segment_coded',
        aggregate_type: 'segment',
        aggregate_id: String(id),
        payload: { segment_id: id, code_id: codeId, source_id: sourceId, start, end, text: p.text },
      });
      ids.set('segment', num(p.segment_id), id);
      return true;
    }
    case 'coding.segment_updated': {
      const id = ids.get('segment', num(p.segment_id));
      const seg = repo.getSegment(id);
      if (!seg) throw blocked(what, `the coded passage has been removed since`);
      if (seg.memo !== p.new_value) throw changedSince(`the memo of that coded passage`, quoteMemo(seg.memo));
      updateSegmentMemo(ctx, id, nullableStr(p.old_value));
      return true;
    }
    case 'coding.code_created': {
      const id = ids.get('code', num(p.code_id));
      const code = repo.getCode(id);
      if (!code) throw blocked(what, `the code '${str(p.name)}' has been deleted since`);
      if (code.name !== p.name) throw changedSince(`the code '${str(p.name)}'`, `named '${code.name}'`);
      const used = code.segment_count + code.av_segment_count;
      if (used > 0) {
        const coders = new Map<string, number>();
        for (const s of repo.listSegmentsForCode(id)) coders.set(s.owner, (coders.get(s.owner) ?? 0) + 1);
        const who = [...coders].map(([o, n]) => `${o} (${n})`).join(', ');
        throw blocked(
          what,
          `the code '${code.name}' has since been applied ${used} time(s)${who ? ` by ${who}` : ''}; remove those codings first (undo never deletes codings)`,
          { segment_count: code.segment_count, av_segment_count: code.av_segment_count },
        );
      }
      deleteCode(ctx, id, false);
      return true;
    }
    case 'coding.code_deleted': {
      const categoryId = ids.opt('category', p.category_id);
      if (categoryId !== null && !repo.getCategory(categoryId)) throw blocked(what, `its category '${names.category(categoryId)}' has been deleted since`);
      const code = createCode(ownedBy(ctx, p), { name: str(p.name), color: str(p.color), memo: nullableStr(p.memo), category_id: categoryId });
      ids.set('code', num(p.code_id), code.code_id);
      return true;
    }
    case 'coding.code_renamed': {
      const id = ids.get('code', num(p.code_id));
      const code = repo.getCode(id);
      if (!code) throw blocked(what, `the code '${str(p.new_name)}' has been deleted since`);
      if (code.name !== p.new_name) throw changedSince(`the code '${str(p.new_name)}'`, `named '${code.name}'`);
      renameCode(ctx, id, str(p.old_name));
      return true;
    }
    case 'coding.code_updated': {
      const id = ids.get('code', num(p.code_id));
      const code = repo.getCode(id);
      if (!code) throw blocked(what, `the code '${names.code(id)}' has been deleted since`);
      if (p.field === 'memo') {
        if (code.memo !== p.new_value) throw changedSince(`the memo of the code '${code.name}'`, quoteMemo(code.memo));
        updateCodeMemo(ctx, id, nullableStr(p.old_value));
      } else {
        if (code.color.toUpperCase() !== String(p.new_value).toUpperCase()) throw changedSince(`the colour of the code '${code.name}'`, code.color);
        setCodeColor(ctx, id, str(p.old_value));
      }
      return true;
    }
    case 'coding.code_moved': {
      const id = ids.get('code', num(p.code_id));
      const code = repo.getCode(id);
      if (!code) throw blocked(what, `the code '${names.code(id)}' has been deleted since`);
      if (code.category_id !== ids.opt('category', p.new_category_id))
        throw changedSince(`the place of the code '${code.name}'`, names.place(code.category_id));
      const back = ids.opt('category', p.old_category_id);
      if (back !== null && !repo.getCategory(back)) throw blocked(what, `the category '${names.category(back)}' has been deleted since`);
      moveCodeToCategory(ctx, id, back);
      return true;
    }
    default:
      return false;
  }
}

/** Inverse of a category event (created, renamed, memo or place changed, deleted); false for other events. */
function invertCategoryEvent(x: Inversion, type: EventType): boolean {
  const { ctx, p, repo, ids, what, names, changedSince } = x;
  switch (type) {
    case 'coding.category_created': {
      const id = ids.get('category', num(p.category_id));
      const category = repo.getCategory(id);
      if (!category) throw blocked(what, `the category '${str(p.name)}' has been deleted since`);
      if (category.name !== p.name) throw changedSince(`the category '${str(p.name)}'`, `named '${category.name}'`);
      const codes = repo.listCodes().filter((c) => c.category_id === id);
      const subs = repo.listCategories().filter((c) => c.parent_id === id);
      if (codes.length > 0 || subs.length > 0) {
        const held = [...codes.map((c) => `the code '${c.name}'`), ...subs.map((c) => `the category '${c.name}'`)];
        throw blocked(
          what,
          `the category '${category.name}' has since been given ${held.slice(0, 3).join(', ')}${held.length > 3 ? ` and ${held.length - 3} more` : ''}`,
        );
      }
      deleteCategory(ctx, id, undefined);
      return true;
    }
    case 'coding.category_renamed': {
      const id = ids.get('category', num(p.category_id));
      const category = repo.getCategory(id);
      if (!category) throw blocked(what, `the category '${str(p.new_name)}' has been deleted since`);
      if (category.name !== p.new_name) throw changedSince(`the category '${str(p.new_name)}'`, `named '${category.name}'`);
      renameCategory(ctx, id, str(p.old_name));
      return true;
    }
    case 'coding.category_updated': {
      const id = ids.get('category', num(p.category_id));
      const category = repo.getCategory(id);
      if (!category) throw blocked(what, `the category '${names.category(id)}' has been deleted since`);
      if (p.field === 'memo') {
        if (category.memo !== p.new_value) throw changedSince(`the memo of the category '${category.name}'`, quoteMemo(category.memo));
        updateCategoryMemo(ctx, id, nullableStr(p.old_value));
        return true;
      }
      // parent_id: raised by the undo of a category deletion (its sub-categories going back into it)
      if (category.parent_id !== ids.opt('category', p.new_value))
        throw changedSince(`the place of the category '${category.name}'`, names.place(category.parent_id));
      moveCategory(ctx, id, ids.opt('category', p.old_value), what, names);
      return true;
    }
    case 'coding.category_deleted': {
      const parent = ids.opt('category', p.parent_id);
      if (parent !== null && !repo.getCategory(parent)) throw blocked(what, `its parent category '${names.category(parent)}' has been deleted since`);
      const category = createCategory(ownedBy(ctx, p), { name: str(p.name), parent_id: parent, memo: nullableStr(p.memo) });
      ids.set('category', num(p.category_id), category.category_id);
      const movedTo = ids.opt('category', p.moved_to);
      for (const subId of (p.sub_category_ids as number[] | undefined) ?? []) {
        const sid = ids.get('category', subId);
        const sub = repo.getCategory(sid);
        if (!sub) throw blocked(what, `its sub-category '${names.category(sid)}' has been deleted since`);
        if (sub.parent_id !== movedTo) throw changedSince(`the place of the category '${sub.name}'`, names.place(sub.parent_id));
        moveCategory(ctx, sid, category.category_id, what, names);
      }
      return true;
    }
    default:
      return false;
  }
}

/** Inverse of a case event (created, deleted, members, attributes, renamed, memo); false for other events. */
function invertCaseEvent(x: Inversion, type: EventType): boolean {
  const { ctx, p, repo, ids, what, names, changedSince } = x;
  switch (type) {
    case 'case.created': {
      const id = ids.get('case', num(p.case_id));
      const c = repo.getCase(id);
      if (!c) throw blocked(what, `the case '${str(p.name)}' has been deleted since`);
      if (c.name !== p.name) throw changedSince(`the case '${str(p.name)}'`, `named '${c.name}'`);
      if (c.source_count + c.segment_count + c.attribute_count > 0) {
        throw blocked(
          what,
          `the case '${c.name}' has since been given ${c.source_count} source(s), ${c.segment_count} passage(s) and ${c.attribute_count} attribute(s)`,
        );
      }
      deleteCase(ctx, id);
      return true;
    }
    case 'case.deleted': {
      const c = createCase(ownedBy(ctx, p), { name: str(p.name), memo: nullableStr(p.memo) });
      ids.set('case', num(p.case_id), c.case_id);
      for (const m of p.sources as { source_id: number; owner: string; session_id: string | null }[]) addSourceToCase(ownedBy(ctx, m), c.case_id, m.source_id);
      for (const g of p.segments as { source_id: number; start: number; end: number; owner: string; session_id: string | null }[]) {
        addSegmentToCase(ownedBy(ctx, g), { case_id: c.case_id, source_id: g.source_id, start_pos: g.start, end_pos: g.end });
      }
      for (const a of p.attributes as { name: string; type: AttributeType; value: AttributeValue }[])
        setCaseAttribute(ctx, { case_id: c.case_id, attribute_name: a.name, value: a.value, type: a.type });
      return true;
    }
    case 'case.member_added': {
      const caseId = ids.get('case', num(p.case_id));
      const c = repo.getCase(caseId);
      if (!c) throw blocked(what, `the case '${names.caseName(caseId)}' has been deleted since`);
      const range = p.segment_range as { start: number; end: number } | null;
      const segmentId = range === null ? null : ids.get('case_segment', num(p.case_segment_id));
      // who linked it, so that undoing this keeps them
      let owner: { owner: string; session_id: string | null };
      if (segmentId === null) {
        const link = repo.listCaseSources(caseId).find((l) => l.source_id === p.source_id);
        if (!link) throw blocked(what, `${names.source(num(p.source_id))} has been taken out of the case '${c.name}' since`);
        owner = link;
        repo.deleteCaseSource(caseId, num(p.source_id));
      } else {
        const g = repo.getCaseSegment(segmentId);
        if (!g) throw blocked(what, `that passage has been taken out of the case '${c.name}' since`);
        owner = g;
        repo.deleteCaseSegment(segmentId);
      }
      repo.touchCase(caseId, ctx.now);
      const payload: Record<string, unknown> = { case_id: caseId, source_id: p.source_id, segment_range: range };
      if (segmentId !== null) Object.assign(payload, { case_segment_id: segmentId, text: p.text });
      Object.assign(payload, { owner: owner.owner, session_id: owner.session_id });
      ctx.events.emit({ event_type: 'case.member_removed', aggregate_type: 'case', aggregate_id: String(caseId), payload });
      return true;
    }
    case 'case.member_removed': {
      const caseId = ids.get('case', num(p.case_id));
      if (!repo.getCase(caseId)) throw blocked(what, `the case '${names.caseName(caseId)}' has been deleted since`);
      const range = p.segment_range as { start: number; end: number } | null;
      if (range === null) {
        if (!addSourceToCase(ownedBy(ctx, p), caseId, num(p.source_id)).added)
          throw blocked(what, `${names.source(num(p.source_id))} has been added to that case again since`);
      } else {
        const added = addSegmentToCase(ownedBy(ctx, p), { case_id: caseId, source_id: num(p.source_id), start_pos: range.start, end_pos: range.end });
        if (!added.created) throw blocked(what, 'that passage has been added to the case again since');
        ids.set('case_segment', num(p.case_segment_id), added.segment.case_segment_id);
      }
      return true;
    }
    case 'case.attribute_set': {
      const caseId = ids.get('case', num(p.case_id));
      const c = repo.getCase(caseId);
      if (!c) throw blocked(what, `the case '${names.caseName(caseId)}' has been deleted since`);
      const name = str(p.name);
      const now = repo.listCaseAttributes(caseId).find((a) => a.name === name) ?? null;
      if ((now?.type ?? null) !== p.type || (now?.value ?? null) !== p.value)
        throw changedSince(`the attribute '${name}' of the case '${c.name}'`, now ? formatValue(now.value) : 'not set');
      if (p.old_type === null) {
        repo.deleteCaseAttribute(caseId, name);
        repo.touchCase(caseId, ctx.now);
        ctx.events.emit({
          event_type: 'case.attribute_set',
          aggregate_type: 'case',
          aggregate_id: String(caseId),
          payload: { case_id: caseId, name, type: null, value: null, old_type: p.type, old_value: p.value },
        });
      } else {
        setCaseAttribute(ctx, { case_id: caseId, attribute_name: name, value: p.old_value as AttributeValue, type: p.old_type as AttributeType });
      }
      return true;
    }
    case 'case.renamed': {
      const id = ids.get('case', num(p.case_id));
      const c = repo.getCase(id);
      if (!c) throw blocked(what, `the case '${str(p.new_name)}' has been deleted since`);
      if (c.name !== p.new_name) throw changedSince(`the case '${str(p.new_name)}'`, `named '${c.name}'`);
      renameCase(ctx, id, str(p.old_name));
      return true;
    }
    case 'case.attribute_renamed': {
      const caseIds = (p.case_ids as number[]).map((id) => ids.get('case', id));
      const holders = new Set(
        repo
          .listCaseAttributes()
          .filter((a) => a.name === p.new_name)
          .map((a) => a.case_id),
      );
      if (holders.size !== caseIds.length || caseIds.some((id) => !holders.has(id))) {
        throw changedSince(`the attribute '${str(p.new_name)}'`, `held by ${holders.size} case(s), not the ${caseIds.length} it was renamed on`);
      }
      renameCaseAttribute(ctx, str(p.new_name), str(p.old_name));
      return true;
    }
    case 'case.updated': {
      const id = ids.get('case', num(p.case_id));
      const c = repo.getCase(id);
      if (!c) throw blocked(what, `the case '${str(p.name)}' has been deleted since`);
      if (c.memo !== p.new_value) throw changedSince(`the memo of the case '${c.name}'`, quoteMemo(c.memo));
      updateCaseMemo(ctx, id, nullableStr(p.old_value));
      return true;
    }
    default:
      return false;
  }
}

/** Inverse of a source, folder or project-briefing event; false for other events. */
function invertSourceEvent(x: Inversion, type: EventType): boolean {
  const { ctx, p, repo, ids, what, names, changedSince } = x;
  switch (type) {
    case 'source.renamed': {
      const id = num(p.source_id);
      const source = repo.getSource(id);
      if (!source) throw blocked(what, `the source ${str(p.new_name)} has been deleted since`);
      if (source.name !== p.new_name) throw changedSince(`the source ${str(p.new_name)}`, `named ${source.name}`);
      renameSource(ctx, id, str(p.old_name));
      return true;
    }
    case 'source.moved': {
      const id = num(p.source_id);
      const source = repo.getSource(id);
      if (!source) throw blocked(what, `the source ${names.source(id)} has been deleted since`);
      if (source.folder_id !== ids.opt('folder', p.new_folder_id)) throw changedSince(`the folder of ${source.name}`, names.folderPlace(source.folder_id));
      const back = ids.opt('folder', p.old_folder_id);
      if (back !== null && !repo.getFolder(back)) throw blocked(what, `the folder '${names.folder(back)}' has been deleted since`);
      moveSourceToFolder(ctx, id, back);
      return true;
    }
    case 'project.briefing_updated': {
      // the fields this save changed must still hold what it stored; then each gets its value from before (null: never saved)
      const stored = repo.projectBriefing() as Record<string, unknown> | undefined;
      const changed = (p.changed as string[]).filter(
        (f) => JSON.stringify(stored?.[f] ?? null) !== JSON.stringify((p.new as Record<string, unknown>)[f] ?? null),
      );
      if (changed.length > 0) throw blocked(what, `the project briefing's ${changed.join(', ').replace(/_/g, ' ')} has been changed since`);
      updateProjectBriefing(ctx, p.old as BriefingFields);
      return true;
    }
    case 'source.updated': {
      const id = num(p.source_id);
      const source = repo.getSource(id);
      if (!source) throw blocked(what, `the source ${names.source(id)} has been deleted since`);
      if (source.memo !== p.new_value) throw changedSince(`the memo of ${source.name}`, quoteMemo(source.memo));
      updateSourceMemo(ctx, id, nullableStr(p.old_value));
      return true;
    }
    case 'source.attribute_set': {
      const id = num(p.source_id);
      const source = repo.getSource(id);
      if (!source) throw blocked(what, `the source ${names.source(id)} has been deleted since`);
      const name = str(p.attribute_name);
      const now = repo.listSourceAttributes(id).find((a) => a.name === name) ?? null;
      if ((now?.type ?? null) !== p.type || (now?.value ?? null) !== p.value)
        throw changedSince(`the document attribute '${name}' of ${source.name}`, now ? formatValue(now.value) : 'not set');
      setSourceAttribute(ctx, {
        source_id: id,
        attribute_name: name,
        value: p.old_value as AttributeValue | null,
        ...(p.old_type === null ? {} : { type: p.old_type as AttributeType }),
      });
      return true;
    }
    case 'source.folder_created': {
      const id = ids.get('folder', num(p.folder_id));
      const folder = repo.getFolder(id);
      if (!folder) throw blocked(what, `the folder '${str(p.name)}' has been deleted since`);
      if (folder.name !== p.name) throw changedSince(`the folder '${str(p.name)}'`, `named '${folder.name}'`);
      deleteFolder(ctx, id);
      return true;
    }
    case 'source.folder_deleted': {
      const parent = ids.opt('folder', p.parent_id);
      if (parent !== null && !repo.getFolder(parent)) throw blocked(what, `its parent folder has been deleted since`);
      const folder = createFolder(ownedBy(ctx, p), str(p.name), parent);
      ids.set('folder', num(p.folder_id), folder.folder_id);
      return true;
    }
    case 'source.folder_renamed': {
      const id = ids.get('folder', num(p.folder_id));
      const folder = repo.getFolder(id);
      if (!folder) throw blocked(what, `the folder '${str(p.new_name)}' has been deleted since`);
      if (folder.name !== p.new_name) throw changedSince(`the folder '${str(p.new_name)}'`, `named '${folder.name}'`);
      renameFolder(ctx, id, str(p.old_name));
      return true;
    }
    default:
      return false;
  }
}

/**
 * Moves category `id` under `parentId` (null: the top level), refusing a move into its own subtree, and
 * emits coding.category_updated {category_id, field: 'parent_id', old_value, new_value}.
 */
function moveCategory(ctx: Ctx, id: number, parentId: number | null, what: string, names: Names): void {
  const category = ctx.repo.getCategory(id);
  if (!category) throw blocked(what, `the category '${names.category(id)}' has been deleted since`);
  if (parentId !== null) {
    const parentOf = new Map(ctx.repo.listCategories().map((c) => [c.category_id, c.parent_id]));
    const seen = new Set<number>();
    for (let at: number | null | undefined = parentId; at != null && !seen.has(at); at = parentOf.get(at)) {
      seen.add(at);
      if (at === id) throw blocked(what, `the category '${category.name}' would end up inside itself`);
    }
    if (!ctx.repo.getCategory(parentId)) throw blocked(what, `the category '${names.category(parentId)}' has been deleted since`);
  }
  ctx.repo.updateCategory(id, { parent_id: parentId }, null);
  ctx.events.emit({
    event_type: 'coding.category_updated',
    aggregate_type: 'category',
    aggregate_id: String(id),
    payload: { category_id: id, field: 'parent_id', old_value: category.parent_id, new_value: parentId },
  });
}
