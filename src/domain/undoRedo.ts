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
 * This file holds the stacks and the undo/redo entry points; undoInverse.ts applies an action's inverse,
 * undoWords.ts says actions in words.
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
import type { DomainContext, EventRecord } from './events';
import type { ProjectRepository } from './ports';
import { applyInverse, checkInvertible, notInvertible, type UndoChange } from './undoInverse';
import { describeAction, Names } from './undoWords';

export type { UndoChange } from './undoInverse';
export { describeEvents } from './undoWords';

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
  return (
    /^(approval|session|suggestion|analysis|agent|agents)\./.test(type) ||
    type === 'source.metadata_suggested' ||
    type === 'project.opened' ||
    type === 'project.closed'
  );
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
