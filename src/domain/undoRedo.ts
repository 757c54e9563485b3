/**
 * Undo and redo of a caller's own actions (issue 13, item 1), derived from the event log.
 *
 * An ACTION is the events of one correlation id: one tool call (src/agent/pipeline.ts stores every event a
 * call raises with the call's correlation id). A caller is identified as the event log records it:
 * `caused_by.client_type` and `caused_by.user` (the researcher in VS Code is LOCAL_UI with the coder name;
 * a client holding the reviewer token is its client type with its user, X-Marginalia-User or its client
 * name), and only the researcher's sessions count: LOCAL_UI ones, and sessions whose stored session.connected
 * event names the token role `researcher` (src/agent/agentContext.ts). A session known to be an agent's (role
 * `agent` or null, or connected before roles were recorded) never counts, even under the same user name; a
 * session with no session.connected in the log ran without the agent layer, where every caller is the
 * researcher (unit tests, the sample seeder). Agents' calls, also those the researcher approved, are
 * recorded as the agent's and are never on the researcher's stacks.
 *
 * Undo applies the INVERSE change of an action through the domain services, in the caller's transaction,
 * recorded as the caller: the services raise their ordinary events, each with `undo_of: <correlation id of
 * the undone action>` added to its payload. Redo applies the inverse of that undo, its events marked
 * `redo_of: <correlation id of the action redone>`. Because the marks are in the stored events, both stacks
 * are derived from the log alone ({@link callerTops}) and survive a restart.
 *
 * Stacks, replaying the caller's actions in order:
 * - an ordinary action is pushed on the undo stack and clears the redo stack ("a new action clears redo");
 * - an undo (`undo_of` X) takes X off the undo stack and pushes (X, the undo) on the redo stack;
 * - a redo (`redo_of` X) takes X's entry off the redo stack and pushes the redo itself on the undo stack (so
 *   undoing it again works like any action); it does not clear the redo stack;
 * - actions with only bookkeeping events (approval.*, session.*, suggestion.*, analysis.*,
 *   source.metadata_suggested, project.opened, project.closed) are not actions here: reads, reports, approvals and suggestion decisions
 *   (their coding events are still undone: the suggestion's record stays decided);
 * - text edits mirrored from the editor (source.text_edited, source.text_reconciled, and the codings a text
 *   edit deleted with its text) belong to the editor's own undo (VS Code's Ctrl+Z) and are not on these
 *   stacks; a removed coding whose text changed since is refused, not put back at the wrong place.
 *
 * What can be undone, and its inverse: coding a passage (the segment is removed); removing a coding (the
 * segment is made again with the same source, positions, code, memo, importance and owner; it gets a NEW
 * segment_id); segment, code, category and source memos (the previous memo); creating (deleted when still
 * empty/unused), renaming, recolouring and moving a code; deleting an unused code (made again, new id);
 * creating, renaming and deleting a category (made again with its name, parent and memo, new id; its codes
 * and sub-categories go back into it); creating and deleting cases (made again with memo, members and
 * attributes, new id), adding sources and ranges to a case and taking them out, setting or removing case
 * attributes, renaming a case, renaming a case attribute on the cases it was renamed on; renaming
 * a source and moving it to another folder; setting or removing a document attribute; creating, renaming
 * and deleting a folder. What undo makes again keeps the coder who made it (`owner`) and gets a new id; a
 * document attribute put back is stamped with the caller (its event does not record the previous setter).
 *
 * Everything else is NOT undoable: merging codes and deleting a code with its codings (the agent-context
 * spec: "merging codes and deleting a code cannot be undone"), imports, deleting sources, AV codings,
 * restoring snapshots, and events stored before their payloads carried what the inverse needs
 * (segment_uncoded without positions, code_deleted without colour, category_deleted without its contents,
 * case.deleted without members, folder_deleted without parent).
 *
 * A not-undoable action on top of the stack is a barrier: undo REFUSES with NOT_UNDOABLE naming the action
 * and why; it does not skip past it to an older action (the safer default: what lies below may depend on
 * it). Undo also refuses (NOT_UNDOABLE, details.reason "blocked") when the state is no longer the action's
 * after-state, e.g. someone else has since coded with a code whose creation would be undone, renamed what
 * would be renamed back, or changed the text a removed coding would be put back into; the message names
 * what blocks it. Undo never deletes other coders' codings. Every check runs before or during the one
 * transaction, so a refusal writes nothing.
 */
import { ToolError } from '../core/errors';
import { sliceCp } from '../core/text';
import { addSegmentToCase, addSourceToCase, createCase, deleteCase, renameCase, renameCaseAttribute, setCaseAttribute } from './cases';
import { deleteCategory, renameCategory, updateCategoryMemo } from './categories';
import { createCategory, createCode, deleteCode, moveCodeToCategory, renameCode, setCodeColor, updateCodeMemo } from './codebook';
import { deleteSegment, updateSegmentMemo } from './coding';
import type { DomainContext, DomainEvent, EventRecord, EventType } from './events';
import { updateCaseMemo, updateProjectBriefing, type BriefingFields } from './memos';
import type { AttributeType, AttributeValue, ProjectRepository } from './ports';
import { setSourceAttribute } from './sourceAttributes';
import { createFolder, deleteFolder, moveSourceToFolder, renameFolder, renameSource, updateSourceMemo } from './sources';

type Ctx = DomainContext<ProjectRepository>;

/** Who owns a stack: the event log's `caused_by.client_type` and `caused_by.user`. */
export interface StackOwner {
  client_type: string;
  user: string;
}

/** One action: the events of one correlation id, in sequence order. */
export interface HistoryAction {
  correlation_id: string;
  events: EventRecord[];
}

/** An undone action that can be redone: the action and the undo that reversed it. */
export interface RedoEntry {
  action: HistoryAction;
  undo: HistoryAction;
}

/** One change an undo or redo made: one event it raised, in words. */
export interface UndoChange {
  event_type: EventType;
  aggregate_type: string;
  aggregate_id: string;
  /** what changed, with names (e.g. "removed the coding 'Food security' from interview-04") */
  description: string;
}

/** What {@link undoLast} or {@link redoLast} did. */
export interface UndoOutcome {
  /** the correlation id of the action undone or redone (its events in /events/history) */
  correlation_id: string;
  /** the action in words with names, for a status bar: "coded 'Food security' in interview-04" */
  description: string;
  /** the changes this undo or redo made, one per event it raised, in order */
  changes: UndoChange[];
}

/** Event types that are bookkeeping, never an action of their own (see the module comment). */
function isBookkeeping(type: string): boolean {
  return /^(approval|session|suggestion|analysis)\./.test(type) || type === 'source.metadata_suggested' || type === 'project.opened' || type === 'project.closed';
}

/** The undo or redo mark of an action: `undo_of` / `redo_of` in its events' payloads. */
function markOf(action: HistoryAction): { kind: 'undo' | 'redo'; of: string } | null {
  for (const e of action.events) {
    if (typeof e.payload.undo_of === 'string') return { kind: 'undo', of: e.payload.undo_of };
    if (typeof e.payload.redo_of === 'string') return { kind: 'redo', of: e.payload.redo_of };
  }
  return null;
}

/** Events read per query while walking back through a caller's history. */
const PAGE = 256;

/**
 * Per open project, whether a session was the researcher's. A session's session.connected event precedes
 * all of its events and is never changed, so an answer (also "no such event") holds for good.
 */
const SESSION_ROLES = new WeakMap<ProjectRepository, Map<string, boolean>>();

/**
 * The caller's actions, NEWEST FIRST, each with its events in sequence order: the events of `owner`'s
 * researcher sessions (see the module comment), grouped by correlation id (one call's events are stored
 * together, in one transaction). Reads the log backwards in pages, only as far as the consumer iterates.
 */
function* actionsBackward(repo: ProjectRepository, owner: StackOwner): Generator<HistoryAction> {
  // whose sessions were the researcher's: session.connected names the token's role (null: no token; no role key:
  // recorded before roles were; no event at all: a call without the agent layer, where everyone is the researcher)
  let isResearchers = SESSION_ROLES.get(repo);
  if (!isResearchers) SESSION_ROLES.set(repo, (isResearchers = new Map()));
  const known = isResearchers;
  const researchers = (e: EventRecord): boolean => {
    if (owner.client_type === 'LOCAL_UI') return true;
    const session = e.caused_by.session_id;
    let yes = known.get(session);
    if (yes === undefined) {
      const connected = repo.findSessionConnected(session, e.metadata.sequence_number);
      yes = !connected || connected.payload.role === 'researcher';
      known.set(session, yes);
    }
    return yes;
  };
  let before = Number.MAX_SAFE_INTEGER;
  let current: HistoryAction | null = null;
  for (;;) {
    const page = repo.listUndoHistoryBefore(owner.client_type, owner.user, before, PAGE);
    for (const e of page) {
      if (!researchers(e)) continue;
      if (current && current.correlation_id !== e.metadata.correlation_id) {
        yield { correlation_id: current.correlation_id, events: current.events.reverse() };
        current = null;
      }
      // collected newest first, reversed when complete
      current ??= { correlation_id: e.metadata.correlation_id, events: [] };
      current.events.push(e);
    }
    if (page.length < PAGE) break;
    before = (page[page.length - 1] as EventRecord).metadata.sequence_number;
  }
  if (current) yield { correlation_id: current.correlation_id, events: current.events.reverse() };
}

/** The next action to undo and the next to redo of a caller (null: none). */
export interface CallerTops {
  undo: HistoryAction | null;
  redo: RedoEntry | null;
}

/**
 * The tops of `owner`'s undo and redo stacks, derived from the event log by the rules of the module
 * comment, replayed backwards from the newest action: an action later undone (some undo names it) is off
 * the undo stack; the undo top is the newest ordinary or redo action not undone; the redo top is the newest
 * undo whose action was not redone since, unless an ordinary action came after it (that cleared redo).
 * Walks back only until both are known (usually the last few actions; an empty stack reads the caller's
 * whole history once).
 */
export function callerTops(repo: ProjectRepository, owner: StackOwner): CallerTops {
  const undone = new Set<string>();
  const redone = new Set<string>();
  let undo: HistoryAction | null = null;
  let redo: RedoEntry | null = null;
  // the redo top's undo, while its action (older) is still being looked for
  let pending: { of: string; undo: HistoryAction } | null = null;
  let redoKnown = false;
  for (const a of actionsBackward(repo, owner)) {
    // (the store leaves the editor's text edits out: listUndoHistoryBefore)
    a.events = a.events.filter((e) => !isBookkeeping(e.event_type));
    if (a.events.length === 0) continue;
    const mark = markOf(a);
    if (mark?.kind === 'undo') {
      if (!redoKnown && !redone.has(mark.of)) {
        pending = { of: mark.of, undo: a };
        redoKnown = true;
      }
      undone.add(mark.of);
    } else {
      if (mark?.kind === 'redo') redone.add(mark.of);
      // an ordinary action cleared whatever was undone before it
      else redoKnown = true;
      if (pending && pending.of === a.correlation_id) {
        redo = { action: a, undo: pending.undo };
        pending = null;
      }
      if (!undo && !undone.has(a.correlation_id)) undo = a;
    }
    if (undo && redoKnown && !pending) break;
  }
  return { undo, redo };
}

/**
 * Undoes the caller's (`ctx.actor`: client_type and user) most recent action: applies its inverse in the
 * current transaction, every event raised marked `undo_of`. Returns what was undone, in words.
 *
 * Errors: NOTHING_TO_UNDO (no action of the caller's left); NOT_UNDOABLE when the most recent action cannot
 * be undone (details.reason "unsupported": merges, deletions with codings, imports, ...; "recorded_before":
 * an event stored before its payload kept the previous state) or something done since blocks it
 * (details.reason "blocked", the message names it). Undo does not skip a refused action (see the module
 * comment); nothing is written on any error.
 */
export function undoLast(ctx: Ctx): UndoOutcome {
  const top = callerTops(ctx.repo, ctx.actor).undo;
  if (!top) throw new ToolError('NOTHING_TO_UNDO', `Nothing to undo: ${ctx.actor.user} has no action of their own left to undo in this project`);
  const names = new Names(ctx.repo, top.events);
  const description = describeAction(top.events, names);
  checkInvertible(top.events, `undo "${description}"`);
  const changes = applyInverse(ctx, top.events, { undo_of: top.correlation_id }, `undo "${description}"`, names);
  return { correlation_id: top.correlation_id, description, changes };
}

/**
 * Redoes the caller's most recently undone action, when they have done nothing new since: applies the
 * inverse of the undo, every event raised marked `redo_of`. Returns what was redone, in words.
 *
 * Errors: NOTHING_TO_REDO (nothing undone since the caller's last action); NOT_UNDOABLE (details.reason
 * "blocked") when something done since by someone else blocks it (e.g. the code it codes with was
 * deleted, or the name it gives is now taken). Nothing is written on any error.
 */
export function redoLast(ctx: Ctx): UndoOutcome {
  const top = callerTops(ctx.repo, ctx.actor).redo;
  if (!top) throw new ToolError('NOTHING_TO_REDO', `Nothing to redo: ${ctx.actor.user} has undone nothing since their last action`);
  const names = new Names(ctx.repo, [...top.action.events, ...top.undo.events]);
  const description = describeAction(top.action.events, names);
  checkInvertible(top.undo.events, `redo "${description}"`);
  const changes = applyInverse(ctx, top.undo.events, { redo_of: top.action.correlation_id }, `redo "${description}"`, names);
  return { correlation_id: top.action.correlation_id, description, changes };
}

/** What the next undo or redo of a caller would do, without doing it (for a UI: a menu label, a key binding's choice). */
export interface UndoPreview {
  correlation_id: string;
  /** the action in words, as {@link UndoOutcome.description} */
  description: string;
  /**
   * the sequence number of the action's last event: a UI compares it with its own latest text edit's
   * (source.text_edited) to decide whether Ctrl+Z undoes this action or the editor's typing
   */
  sequence_number: number;
  /** null when it can be tried; else why it cannot (a later change by someone else is only found when tried) */
  not_undoable: { reason: 'unsupported' | 'recorded_before'; message: string } | null;
}

/**
 * The caller's next undo (`kind` "undo") or redo, as {@link undoLast} / {@link redoLast} would take it, or
 * null when there is none. Reads only; never throws for an action that cannot be undone (see `not_undoable`).
 */
export function previewNext(repo: ProjectRepository, owner: StackOwner, kind: 'undo' | 'redo'): UndoPreview | null {
  const tops = callerTops(repo, owner);
  const action = kind === 'undo' ? tops.undo : tops.redo?.action;
  if (!action) return null;
  const inverted = kind === 'undo' ? action.events : (tops.redo as RedoEntry).undo.events;
  const names = new Names(repo, kind === 'undo' ? action.events : [...action.events, ...inverted]);
  const description = describeAction(action.events, names);
  const blocking = inverted.map(notInvertible).find((x) => x !== null) ?? null;
  return {
    correlation_id: action.correlation_id,
    description,
    sequence_number: (action.events[action.events.length - 1] as EventRecord).metadata.sequence_number,
    not_undoable: blocking ? { reason: blocking.reason, message: `Cannot ${kind} "${description}": ${blocking.why}.` } : null,
  };
}

// ---------------------------------------------------------------------------------------------------------
// what can be inverted

/** Why an event cannot be inverted, or null when it can. */
function notInvertible(e: EventRecord): { reason: 'unsupported' | 'recorded_before'; why: string } | null {
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
      if (p.reason === 'text deleted') return unsupported('its text was deleted in the editor (the editor\'s own undo puts it back)');
      return 'start' in p && 'owner' in p ? null : before('the removed coding\'s positions');
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
function checkInvertible(events: EventRecord[], what: string): void {
  for (const e of events) {
    const no = notInvertible(e);
    if (no) throw new ToolError('NOT_UNDOABLE', `Cannot ${what}: ${no.why}. Undo stops here; older actions stay as they are.`, { reason: no.reason, event_type: e.event_type });
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
function applyInverse(ctx: Ctx, events: EventRecord[], mark: Record<string, string>, what: string, names: Names): UndoChange[] {
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
  return raised.map((e) => ({ event_type: e.event_type, aggregate_type: e.aggregate_type, aggregate_id: e.aggregate_id, description: describeEvent(e, names) }));
}

/**
 * `ctx` acting as the owner (and session) an event recorded for an item, so what undo makes again keeps the
 * coder who made it (stored as `owner`); without them (an event of undo's own), the caller.
 */
function ownedBy(ctx: Ctx, p: Record<string, unknown>): Ctx {
  const user = typeof p.owner === 'string' ? p.owner : ctx.actor.user;
  const session = typeof p.session_id === 'string' ? p.session_id : ctx.actor.session_id;
  return { ...ctx, actor: { ...ctx.actor, user, session_id: session } };
}

const num = (v: unknown) => v as number;
const str = (v: unknown) => v as string;
const nullableStr = (v: unknown) => (v === null || v === undefined ? null : String(v));

/** Applies the inverse of one event (checked by {@link notInvertible}). */
function invert(ctx: Ctx, e: EventRecord, ids: IdMap, what: string, names: Names): void {
  const p = e.payload;
  const repo = ctx.repo;
  const changedSince = (thing: string, now: string) => blocked(what, `${thing} has been changed since (it is now ${now})`);
  switch (e.event_type) {
    case 'coding.segment_coded': {
      const id = ids.get('segment', num(p.segment_id));
      const seg = repo.getSegment(id);
      if (!seg) throw blocked(what, `the coding '${names.code(num(p.code_id))}' in ${names.source(num(p.source_id))} has been removed since`);
      if (seg.code_id !== ids.get('code', num(p.code_id))) throw blocked(what, `that coding now carries the code '${names.code(seg.code_id)}' (merged or moved since)`);
      deleteSegment(ctx, id);
      return;
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
        { code_id: codeId, source_id: sourceId, start_pos: start, end_pos: end, text: str(p.text), memo: nullableStr(p.memo), importance: num(p.importance ?? 0) },
        { owner, session_id: typeof p.session_id === 'string' ? p.session_id : ctx.actor.session_id, now: ctx.now },
      );
      ctx.events.emit({ event_type: 'coding.segment_coded', aggregate_type: 'segment', aggregate_id: String(id), payload: { segment_id: id, code_id: codeId, source_id: sourceId, start, end, text: p.text } });
      ids.set('segment', num(p.segment_id), id);
      return;
    }
    case 'coding.segment_updated': {
      const id = ids.get('segment', num(p.segment_id));
      const seg = repo.getSegment(id);
      if (!seg) throw blocked(what, `the coded passage has been removed since`);
      if (seg.memo !== p.new_value) throw changedSince(`the memo of that coded passage`, quoteMemo(seg.memo));
      updateSegmentMemo(ctx, id, nullableStr(p.old_value));
      return;
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
        throw blocked(what, `the code '${code.name}' has since been applied ${used} time(s)${who ? ` by ${who}` : ''}; remove those codings first (undo never deletes codings)`, { segment_count: code.segment_count, av_segment_count: code.av_segment_count });
      }
      deleteCode(ctx, id, false);
      return;
    }
    case 'coding.code_deleted': {
      const categoryId = ids.opt('category', p.category_id);
      if (categoryId !== null && !repo.getCategory(categoryId)) throw blocked(what, `its category '${names.category(categoryId)}' has been deleted since`);
      const code = createCode(ownedBy(ctx, p), { name: str(p.name), color: str(p.color), memo: nullableStr(p.memo), category_id: categoryId });
      ids.set('code', num(p.code_id), code.code_id);
      return;
    }
    case 'coding.code_renamed': {
      const id = ids.get('code', num(p.code_id));
      const code = repo.getCode(id);
      if (!code) throw blocked(what, `the code '${str(p.new_name)}' has been deleted since`);
      if (code.name !== p.new_name) throw changedSince(`the code '${str(p.new_name)}'`, `named '${code.name}'`);
      renameCode(ctx, id, str(p.old_name));
      return;
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
      return;
    }
    case 'coding.code_moved': {
      const id = ids.get('code', num(p.code_id));
      const code = repo.getCode(id);
      if (!code) throw blocked(what, `the code '${names.code(id)}' has been deleted since`);
      if (code.category_id !== ids.opt('category', p.new_category_id)) throw changedSince(`the place of the code '${code.name}'`, names.place(code.category_id));
      const back = ids.opt('category', p.old_category_id);
      if (back !== null && !repo.getCategory(back)) throw blocked(what, `the category '${names.category(back)}' has been deleted since`);
      moveCodeToCategory(ctx, id, back);
      return;
    }
    case 'coding.category_created': {
      const id = ids.get('category', num(p.category_id));
      const category = repo.getCategory(id);
      if (!category) throw blocked(what, `the category '${str(p.name)}' has been deleted since`);
      if (category.name !== p.name) throw changedSince(`the category '${str(p.name)}'`, `named '${category.name}'`);
      const codes = repo.listCodes().filter((c) => c.category_id === id);
      const subs = repo.listCategories().filter((c) => c.parent_id === id);
      if (codes.length > 0 || subs.length > 0) {
        const held = [...codes.map((c) => `the code '${c.name}'`), ...subs.map((c) => `the category '${c.name}'`)];
        throw blocked(what, `the category '${category.name}' has since been given ${held.slice(0, 3).join(', ')}${held.length > 3 ? ` and ${held.length - 3} more` : ''}`);
      }
      deleteCategory(ctx, id, undefined);
      return;
    }
    case 'coding.category_renamed': {
      const id = ids.get('category', num(p.category_id));
      const category = repo.getCategory(id);
      if (!category) throw blocked(what, `the category '${str(p.new_name)}' has been deleted since`);
      if (category.name !== p.new_name) throw changedSince(`the category '${str(p.new_name)}'`, `named '${category.name}'`);
      renameCategory(ctx, id, str(p.old_name));
      return;
    }
    case 'coding.category_updated': {
      const id = ids.get('category', num(p.category_id));
      const category = repo.getCategory(id);
      if (!category) throw blocked(what, `the category '${names.category(id)}' has been deleted since`);
      if (p.field === 'memo') {
        if (category.memo !== p.new_value) throw changedSince(`the memo of the category '${category.name}'`, quoteMemo(category.memo));
        updateCategoryMemo(ctx, id, nullableStr(p.old_value));
        return;
      }
      // parent_id: raised by the undo of a category deletion (its sub-categories going back into it)
      if (category.parent_id !== ids.opt('category', p.new_value)) throw changedSince(`the place of the category '${category.name}'`, names.place(category.parent_id));
      moveCategory(ctx, id, ids.opt('category', p.old_value), what, names);
      return;
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
      return;
    }
    case 'case.created': {
      const id = ids.get('case', num(p.case_id));
      const c = repo.getCase(id);
      if (!c) throw blocked(what, `the case '${str(p.name)}' has been deleted since`);
      if (c.name !== p.name) throw changedSince(`the case '${str(p.name)}'`, `named '${c.name}'`);
      if (c.source_count + c.segment_count + c.attribute_count > 0) {
        throw blocked(what, `the case '${c.name}' has since been given ${c.source_count} source(s), ${c.segment_count} passage(s) and ${c.attribute_count} attribute(s)`);
      }
      deleteCase(ctx, id);
      return;
    }
    case 'case.deleted': {
      const c = createCase(ownedBy(ctx, p), { name: str(p.name), memo: nullableStr(p.memo) });
      ids.set('case', num(p.case_id), c.case_id);
      for (const m of p.sources as { source_id: number; owner: string; session_id: string | null }[]) addSourceToCase(ownedBy(ctx, m), c.case_id, m.source_id);
      for (const g of p.segments as { source_id: number; start: number; end: number; owner: string; session_id: string | null }[]) {
        addSegmentToCase(ownedBy(ctx, g), { case_id: c.case_id, source_id: g.source_id, start_pos: g.start, end_pos: g.end });
      }
      for (const a of p.attributes as { name: string; type: AttributeType; value: AttributeValue }[]) setCaseAttribute(ctx, { case_id: c.case_id, attribute_name: a.name, value: a.value, type: a.type });
      return;
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
      return;
    }
    case 'case.member_removed': {
      const caseId = ids.get('case', num(p.case_id));
      if (!repo.getCase(caseId)) throw blocked(what, `the case '${names.caseName(caseId)}' has been deleted since`);
      const range = p.segment_range as { start: number; end: number } | null;
      if (range === null) {
        if (!addSourceToCase(ownedBy(ctx, p), caseId, num(p.source_id)).added) throw blocked(what, `${names.source(num(p.source_id))} has been added to that case again since`);
      } else {
        const added = addSegmentToCase(ownedBy(ctx, p), { case_id: caseId, source_id: num(p.source_id), start_pos: range.start, end_pos: range.end });
        if (!added.created) throw blocked(what, 'that passage has been added to the case again since');
        ids.set('case_segment', num(p.case_segment_id), added.segment.case_segment_id);
      }
      return;
    }
    case 'case.attribute_set': {
      const caseId = ids.get('case', num(p.case_id));
      const c = repo.getCase(caseId);
      if (!c) throw blocked(what, `the case '${names.caseName(caseId)}' has been deleted since`);
      const name = str(p.name);
      const now = repo.listCaseAttributes(caseId).find((a) => a.name === name) ?? null;
      if ((now?.type ?? null) !== p.type || (now?.value ?? null) !== p.value) throw changedSince(`the attribute '${name}' of the case '${c.name}'`, now ? formatValue(now.value) : 'not set');
      if (p.old_type === null) {
        repo.deleteCaseAttribute(caseId, name);
        repo.touchCase(caseId, ctx.now);
        ctx.events.emit({ event_type: 'case.attribute_set', aggregate_type: 'case', aggregate_id: String(caseId), payload: { case_id: caseId, name, type: null, value: null, old_type: p.type, old_value: p.value } });
      } else {
        setCaseAttribute(ctx, { case_id: caseId, attribute_name: name, value: p.old_value as AttributeValue, type: p.old_type as AttributeType });
      }
      return;
    }
    case 'case.renamed': {
      const id = ids.get('case', num(p.case_id));
      const c = repo.getCase(id);
      if (!c) throw blocked(what, `the case '${str(p.new_name)}' has been deleted since`);
      if (c.name !== p.new_name) throw changedSince(`the case '${str(p.new_name)}'`, `named '${c.name}'`);
      renameCase(ctx, id, str(p.old_name));
      return;
    }
    case 'case.attribute_renamed': {
      const caseIds = (p.case_ids as number[]).map((id) => ids.get('case', id));
      const holders = new Set(repo.listCaseAttributes().filter((a) => a.name === p.new_name).map((a) => a.case_id));
      if (holders.size !== caseIds.length || caseIds.some((id) => !holders.has(id))) {
        throw changedSince(`the attribute '${str(p.new_name)}'`, `held by ${holders.size} case(s), not the ${caseIds.length} it was renamed on`);
      }
      renameCaseAttribute(ctx, str(p.new_name), str(p.old_name));
      return;
    }
    case 'source.renamed': {
      const id = num(p.source_id);
      const source = repo.getSource(id);
      if (!source) throw blocked(what, `the source ${str(p.new_name)} has been deleted since`);
      if (source.name !== p.new_name) throw changedSince(`the source ${str(p.new_name)}`, `named ${source.name}`);
      renameSource(ctx, id, str(p.old_name));
      return;
    }
    case 'source.moved': {
      const id = num(p.source_id);
      const source = repo.getSource(id);
      if (!source) throw blocked(what, `the source ${names.source(id)} has been deleted since`);
      if (source.folder_id !== ids.opt('folder', p.new_folder_id)) throw changedSince(`the folder of ${source.name}`, names.folderPlace(source.folder_id));
      const back = ids.opt('folder', p.old_folder_id);
      if (back !== null && !repo.getFolder(back)) throw blocked(what, `the folder '${names.folder(back)}' has been deleted since`);
      moveSourceToFolder(ctx, id, back);
      return;
    }
    case 'case.updated': {
      const id = ids.get('case', num(p.case_id));
      const c = repo.getCase(id);
      if (!c) throw blocked(what, `the case '${str(p.name)}' has been deleted since`);
      if (c.memo !== p.new_value) throw changedSince(`the memo of the case '${c.name}'`, quoteMemo(c.memo));
      updateCaseMemo(ctx, id, nullableStr(p.old_value));
      return;
    }
    case 'project.briefing_updated': {
      // the fields this save changed must still hold what it stored; then each gets its value from before (null: never saved)
      const stored = repo.projectBriefing() as Record<string, unknown> | undefined;
      const changed = (p.changed as string[]).filter((f) => JSON.stringify(stored?.[f] ?? null) !== JSON.stringify((p.new as Record<string, unknown>)[f] ?? null));
      if (changed.length > 0) throw blocked(what, `the project briefing's ${changed.join(', ').replace(/_/g, ' ')} has been changed since`);
      updateProjectBriefing(ctx, p.old as BriefingFields);
      return;
    }
    case 'source.updated': {
      const id = num(p.source_id);
      const source = repo.getSource(id);
      if (!source) throw blocked(what, `the source ${names.source(id)} has been deleted since`);
      if (source.memo !== p.new_value) throw changedSince(`the memo of ${source.name}`, quoteMemo(source.memo));
      updateSourceMemo(ctx, id, nullableStr(p.old_value));
      return;
    }
    case 'source.attribute_set': {
      const id = num(p.source_id);
      const source = repo.getSource(id);
      if (!source) throw blocked(what, `the source ${names.source(id)} has been deleted since`);
      const name = str(p.attribute_name);
      const now = repo.listSourceAttributes(id).find((a) => a.name === name) ?? null;
      if ((now?.type ?? null) !== p.type || (now?.value ?? null) !== p.value) throw changedSince(`the document attribute '${name}' of ${source.name}`, now ? formatValue(now.value) : 'not set');
      setSourceAttribute(ctx, { source_id: id, attribute_name: name, value: p.old_value as AttributeValue | null, ...(p.old_type === null ? {} : { type: p.old_type as AttributeType }) });
      return;
    }
    case 'source.folder_created': {
      const id = ids.get('folder', num(p.folder_id));
      const folder = repo.getFolder(id);
      if (!folder) throw blocked(what, `the folder '${str(p.name)}' has been deleted since`);
      if (folder.name !== p.name) throw changedSince(`the folder '${str(p.name)}'`, `named '${folder.name}'`);
      deleteFolder(ctx, id);
      return;
    }
    case 'source.folder_deleted': {
      const parent = ids.opt('folder', p.parent_id);
      if (parent !== null && !repo.getFolder(parent)) throw blocked(what, `its parent folder has been deleted since`);
      const folder = createFolder(ownedBy(ctx, p), str(p.name), parent);
      ids.set('folder', num(p.folder_id), folder.folder_id);
      return;
    }
    case 'source.folder_renamed': {
      const id = ids.get('folder', num(p.folder_id));
      const folder = repo.getFolder(id);
      if (!folder) throw blocked(what, `the folder '${str(p.new_name)}' has been deleted since`);
      if (folder.name !== p.new_name) throw changedSince(`the folder '${str(p.new_name)}'`, `named '${folder.name}'`);
      renameFolder(ctx, id, str(p.old_name));
      return;
    }
    default:
      throw new ToolError('NOT_UNDOABLE', `Cannot ${what}: ${e.event_type} cannot be undone.`, { reason: 'unsupported', event_type: e.event_type });
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
  ctx.events.emit({ event_type: 'coding.category_updated', aggregate_type: 'category', aggregate_id: String(id), payload: { category_id: id, field: 'parent_id', old_value: category.parent_id, new_value: parentId } });
}

// ---------------------------------------------------------------------------------------------------------
// in words

/** Names of codes, categories, cases, sources and folders: the project's current ones, else the last seen in events. */
class Names {
  private readonly seen = new Map<string, string>();
  constructor(
    private readonly repo: ProjectRepository,
    events: readonly (EventRecord | DomainEvent)[],
  ) {
    for (const e of events) this.learn(e);
  }

  /** Remembers the names an event carries. */
  learn(e: EventRecord | DomainEvent): void {
    const p = e.payload;
    const put = (kind: string, id: unknown, name: unknown) => {
      if (typeof id === 'number' && typeof name === 'string') this.seen.set(`${kind}:${id}`, name);
    };
    switch (e.event_type) {
      case 'coding.code_created':
      case 'coding.code_deleted':
        put('code', p.code_id, p.name);
        break;
      case 'coding.code_renamed':
        put('code', p.code_id, p.new_name);
        break;
      case 'coding.category_created':
      case 'coding.category_deleted':
        put('category', p.category_id, p.name);
        break;
      case 'coding.category_renamed':
        put('category', p.category_id, p.new_name);
        break;
      case 'case.created':
      case 'case.deleted':
        put('case', p.case_id, p.name);
        break;
      case 'case.renamed':
        put('case', p.case_id, p.new_name);
        break;
      case 'source.renamed':
        put('source', p.source_id, p.new_name);
        break;
      case 'source.folder_created':
      case 'source.folder_deleted':
        put('folder', p.folder_id, p.name);
        break;
      case 'source.folder_renamed':
        put('folder', p.folder_id, p.new_name);
        break;
      default:
        if (typeof p.source_name === 'string') put('source', p.source_id, p.source_name);
    }
  }

  /** current names looked up, per kind and id (one query each); {@link forgetCurrent} after the project changed */
  private readonly current = new Map<string, string | undefined>();

  /** Forgets the current names looked up (call after changing the project). */
  forgetCurrent(): void {
    this.current.clear();
  }

  private name(kind: string, id: number, lookup: () => string | undefined): string {
    const key = `${kind}:${id}`;
    if (!this.current.has(key)) this.current.set(key, lookup());
    return this.current.get(key) ?? this.seen.get(key) ?? `${kind} ${id}`;
  }
  code(id: number): string {
    return this.name('code', id, () => this.repo.getCode(id)?.name);
  }
  category(id: number): string {
    return this.name('category', id, () => this.repo.getCategory(id)?.name);
  }
  caseName(id: number): string {
    return this.name('case', id, () => this.repo.getCase(id)?.name);
  }
  source(id: number): string {
    return this.name('source', id, () => this.repo.getSource(id)?.name);
  }
  folder(id: number): string {
    return this.name('folder', id, () => this.repo.getFolder(id)?.name);
  }
  /** "the top level" or "the category 'X'" */
  place(categoryId: unknown): string {
    return categoryId === null || categoryId === undefined ? 'the top level' : `the category '${this.category(categoryId as number)}'`;
  }
  /** "the top level" or "the folder 'X'" */
  folderPlace(folderId: unknown): string {
    return folderId === null || folderId === undefined ? 'the top level' : `the folder '${this.folder(folderId as number)}'`;
  }
}

/** A value as a sentence shows it. */
function formatValue(v: unknown): string {
  return typeof v === 'string' ? `'${v}'` : String(v);
}

/** A memo as a refusal shows it: shortened, or "empty". */
function quoteMemo(memo: string | null): string {
  if (memo === null) return 'empty';
  return `'${memo.length > 40 ? `${memo.slice(0, 40)}…` : memo}'`;
}

/** One event in words, past tense ("coded 'Food security' in interview-04"). */
function describeEvent(e: EventRecord | DomainEvent, names: Names): string {
  const p = e.payload;
  const code = () => names.code(num(p.code_id));
  const source = () => names.source(num(p.source_id));
  switch (e.event_type) {
    case 'coding.segment_coded':
      return `coded '${code()}' in ${source()}`;
    case 'coding.segment_uncoded':
      return `removed the coding '${code()}' from ${source()}`;
    case 'coding.segment_updated':
      return `changed the memo of a '${code()}' passage in ${source()}`;
    case 'coding.code_created':
      return `created the code '${str(p.name)}'`;
    case 'coding.code_deleted':
      return `deleted the code '${str(p.name)}'`;
    case 'coding.code_renamed':
      return `renamed the code '${str(p.old_name)}' to '${str(p.new_name)}'`;
    case 'coding.code_updated':
      return p.field === 'color' ? `recoloured the code '${code()}' from ${String(p.old_value)} to ${String(p.new_value)}` : `changed the memo of the code '${code()}'`;
    case 'coding.code_moved':
      return `moved the code '${code()}' to ${names.place(p.new_category_id)}`;
    case 'coding.codes_merged':
      return `merged the code '${String(p.source_code_name ?? p.source_code_id)}' into '${names.code(num(p.target_code_id))}'`;
    case 'coding.category_created':
      return `created the category '${str(p.name)}'`;
    case 'coding.category_deleted':
      return `deleted the category '${str(p.name)}'`;
    case 'coding.category_renamed':
      return `renamed the category '${str(p.old_name)}' to '${str(p.new_name)}'`;
    case 'coding.category_updated':
      return p.field === 'parent_id'
        ? `moved the category '${names.category(num(p.category_id))}' to ${names.place(p.new_value)}`
        : `changed the memo of the category '${names.category(num(p.category_id))}'`;
    case 'case.created':
      return `created the case '${str(p.name)}'`;
    case 'case.deleted':
      return `deleted the case '${str(p.name)}'`;
    case 'case.member_added':
      return p.segment_range === null ? `added ${source()} to the case '${names.caseName(num(p.case_id))}'` : `added a passage of ${source()} to the case '${names.caseName(num(p.case_id))}'`;
    case 'case.member_removed':
      return p.segment_range === null ? `took ${source()} out of the case '${names.caseName(num(p.case_id))}'` : `took a passage of ${source()} out of the case '${names.caseName(num(p.case_id))}'`;
    case 'case.attribute_set':
      return p.type === null
        ? `removed the attribute '${str(p.name)}' of the case '${names.caseName(num(p.case_id))}'`
        : `set the attribute '${str(p.name)}' of the case '${names.caseName(num(p.case_id))}' to ${formatValue(p.value)}`;
    case 'case.renamed':
      return `renamed the case '${str(p.old_name)}' to '${str(p.new_name)}'`;
    case 'case.updated':
      return `changed the memo of the case '${names.caseName(num(p.case_id))}'`;
    case 'project.briefing_updated':
      return `changed the project briefing (${(p.changed as string[]).join(', ').replace(/_/g, ' ')})`;
    case 'case.attribute_renamed':
      return `renamed the case attribute '${str(p.old_name)}' to '${str(p.new_name)}'`;
    case 'source.renamed':
      return `renamed the source ${str(p.old_name)} to ${str(p.new_name)}`;
    case 'source.moved':
      return `moved ${source()} to ${names.folderPlace(p.new_folder_id)}`;
    case 'source.updated':
      return `changed the memo of ${source()}`;
    case 'source.attribute_set':
      return p.type === null
        ? `removed the document attribute '${str(p.attribute_name)}' of ${source()}`
        : `set the document attribute '${str(p.attribute_name)}' of ${source()} to ${formatValue(p.value)}`;
    case 'source.imported':
      return `imported ${str(p.name)}`;
    case 'source.deleted':
      return `deleted the source ${str(p.name)}`;
    case 'source.folder_created':
      return `created the folder '${str(p.name)}'`;
    case 'source.folder_renamed':
      return `renamed the folder '${str(p.old_name)}' to '${str(p.new_name)}'`;
    case 'source.folder_deleted':
      return `deleted the folder '${str(p.name)}'`;
    default:
      return e.event_type;
  }
}

/** Distinct items of `xs`, in order, as "'a', 'b' and 2 more". */
function listed(xs: string[], max = 3): string {
  const u = [...new Set(xs)];
  const shown = u.slice(0, max).join(', ');
  return u.length > max ? `${shown} and ${u.length - max} more` : shown;
}

/** An action in words: one event's sentence, a summary of many codings, or the first sentences of a mixed action. */
function describeAction(events: readonly EventRecord[], names: Names): string {
  const types = new Set(events.map((e) => e.event_type));
  if (events.length > 1 && types.size === 1 && (types.has('coding.segment_coded') || types.has('coding.segment_uncoded'))) {
    const codes = listed(events.map((e) => `'${names.code(num(e.payload.code_id))}'`));
    const sources = listed(events.map((e) => names.source(num(e.payload.source_id))));
    return types.has('coding.segment_coded') ? `coded ${events.length} passages with ${codes} in ${sources}` : `removed ${events.length} codings (${codes}) from ${sources}`;
  }
  // a category deletion says itself where its codes went
  const shown = types.has('coding.category_deleted') ? events.filter((e) => e.event_type !== 'coding.code_moved') : events;
  const sentences = [...new Set(shown.map((e) => describeEvent(e, names)))];
  return sentences.length > 3 ? `${sentences.slice(0, 3).join('; ')} and ${sentences.length - 3} more changes` : sentences.join('; ');
}

/**
 * The events of one call (in sequence order) in words, past tense, as {@link undoLast} describes an action:
 * "coded 3 passages with 'Food security' in interview-04", "renamed the code 'A' to 'B'", "deleted the
 * code 'Trust'". Codes, categories, cases, sources and folders are named as the project has them now, else
 * by the last name the events carry (a deleted code's `coding.code_deleted` payload), else "code 12". Reads
 * only; for snapshot titles (src/vcs/snapshotter.ts) and Agent Activity (src/ui/activity).
 */
export function describeEvents(repo: ProjectRepository, events: readonly EventRecord[]): string {
  return describeAction(events, new Names(repo, events));
}
