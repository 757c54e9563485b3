/**
 * Agent Activity in words and from the project's event log (issue 13, item 8). Free of `vscode`, so unit
 * tests run it on real project files.
 *
 * - {@link describeCall}: a call in words while it is recorded (what it asks, by describeRequest: names,
 *   counts, an excerpt of the passage);
 * - {@link describeDone}: a completed call in words from the events it stored (past tense, names as the
 *   project has them, or as the events carry them for things deleted since), with whether Undo applies;
 * - {@link rebuildActivity}: the activity list after a window reload, from the stored events whose
 *   `caused_by` is an agent's session (grouped by correlation id: one item per call) and the stored
 *   approval requests (pending, completed, failed, rejected), newest first.
 *
 * Which sessions are agents': every session but the researcher's own (`local`), the pipeline's
 * housekeeping (`marginalia`) and sessions whose `session.connected` event gives the role `researcher`
 * (the reviewer token).
 */
import { describeRequest } from '../../agent/describeRequest';
import type { EventRecord } from '../../domain/events';
import type { ApprovalRecord, ProjectRepository } from '../../domain/ports';
import type { ActivityItem, ActivityStatus } from '../../protocol/activity';
import { EDITOR_TOOLS } from '../../tools/editorTools';
import { TOOLS_BY_NAME } from '../../tools/registry';
import { describeActivityEvents, eventTitle, humanizeEventType, pastTense } from './activityWords';

/** Most items kept (agent-context spec, section 8). */
export const MAX_ACTIVITY_ITEMS = 1000;
/** How many of the newest stored events a rebuild reads at most (bounds the work on a long-lived project). */
export const REBUILD_EVENT_WINDOW = 5_000;

/** The researcher's UI session and the pipeline's own (src/ui/workbench.ts LOCAL_SESSION; src/agent/pipeline.ts). */
const NOT_AGENTS = new Set(['local', 'marginalia']);

/** The event types undo_agent_action can reverse (src/domain/undo.ts): a call made only of these is undoable. */
const UNDOABLE_EVENTS = new Set(['coding.code_created', 'coding.segment_coded']);

/** A tool's title by its registry name ("merge_codes" -> "Merge Codes"); the name in words when unknown. */
export function toolTitle(tool: string): string {
  const t = TOOLS_BY_NAME.get(tool) ?? EDITOR_TOOLS.find((x) => x.name === tool);
  return t ? t.title : tool.replace(/_/g, ' ');
}

/** The verbs a request's words start with: the first words of the tools' titles in lower case ("list", "apply"), and "code". */
let verbs: ReadonlySet<string> | undefined;
function toolVerbs(): ReadonlySet<string> {
  verbs ??= new Set(['code', ...[...TOOLS_BY_NAME.values(), ...EDITOR_TOOLS].map((t) => t.title.split(' ')[0]!.toLowerCase())]);
  return verbs;
}

/** What a call that completed without events did (a read): its request words in the past tense ("Listed codes"). */
export function describeRead(repo: ProjectRepository | null, tool: string, args: unknown, stored?: string): string {
  return pastTense(describeCall(repo, tool, args, stored), toolVerbs());
}

/** `s` with its first letter in upper case. */
function capitalize(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

/** A request description from before descriptions were in words ("Merge Codes: source_code_id=8, target_code_id=7"). */
function developerForm(description: string): boolean {
  return /\b[a-z_]+_id[=:]\s*\d+/.test(description) || description.trim() === '';
}

/**
 * A call in words as it is recorded, before or without its events ("Merge 'Trust' (12 passages) into
 * 'Belonging'"): the approval request's stored description when it is in words, else describeRequest over
 * the project as it is now (`repo` null: the tool's title and arguments without names).
 */
export function describeCall(repo: ProjectRepository | null, tool: string, args: unknown, stored?: string): string {
  if (stored && !developerForm(stored)) return capitalize(stored);
  let a = args;
  if (typeof a === 'string') {
    try {
      a = JSON.parse(a);
    } catch {
      a = {};
    }
  }
  return capitalize(describeRequest(repo ?? undefined, { name: tool, title: toolTitle(tool) }, a));
}

/**
 * What a completed call did, from the events it stored (in order; approval and session events are ignored):
 * its words (activityWords.ts: "Merged the code 'Trust' into 'Belonging'", "Suggested the code 'Water conflict'"; null when it
 * stored none) and whether
 * undo_agent_action can still reverse it (only code creations and codings, with something left to remove).
 */
export function describeDone(repo: ProjectRepository | null, events: readonly EventRecord[]): { words: string | null; undoable: boolean } {
  const own = events.filter((e) => !e.event_type.startsWith('approval.') && !e.event_type.startsWith('session.'));
  if (own.length === 0 || !repo) return { words: null, undoable: false };
  let words: string | null;
  try {
    words = capitalize(describeActivityEvents(repo, own));
  } catch {
    words = null;
  }
  const undoable =
    own.every((e) => UNDOABLE_EVENTS.has(e.event_type)) &&
    own.some(
      (e) =>
        (e.event_type === 'coding.segment_coded' ? repo.getSegment(e.payload.segment_id as number) : repo.getCode(e.payload.code_id as number)) !== undefined,
    );
  return { words, undoable };
}

/** Who a session is, from its `session.connected` event: its client name and token role. */
interface SessionInfo {
  client_name: string;
  role: string | null;
}

/**
 * `repo` with its single-item reads (getCode, getSource, getCategory, getCase, getFolder) remembered for the
 * length of one rebuild: naming hundreds of calls asks for the same few codes again and again, and getCode
 * counts the code's passages each time.
 */
function memoNames(repo: ProjectRepository): ProjectRepository {
  const memo = Object.create(repo) as ProjectRepository;
  for (const method of ['getCode', 'getSource', 'getCategory', 'getCase', 'getFolder'] as const) {
    const seen = new Map<number, unknown>();
    const original = (repo[method] as (id: number) => unknown).bind(repo);
    (memo as unknown as Record<string, unknown>)[method] = (id: number) => {
      if (!seen.has(id)) seen.set(id, original(id));
      return seen.get(id);
    };
  }
  return memo;
}

/** The newest `window` stored events, oldest first, read in pages of 500. */
function recentEvents(repo: ProjectRepository, window: number): EventRecord[] {
  const out: EventRecord[] = [];
  let after = Math.max(0, repo.lastEventSeq() - window);
  for (;;) {
    const page = repo.listEventsSince(after, 500);
    out.push(...page);
    if (page.length < 500) break;
    after = page[page.length - 1]!.metadata.sequence_number;
  }
  return out;
}

const STATUS_OF: Readonly<Record<ApprovalRecord['status'], ActivityStatus>> = {
  pending: 'PENDING_APPROVAL',
  completed: 'COMPLETED',
  failed: 'FAILED',
  rejected: 'REJECTED',
};

/**
 * The Agent Activity list rebuilt from the project (newest first, at most {@link MAX_ACTIVITY_ITEMS}):
 * - one item per approval request stored (`repo.listApprovals`), with its status, its description in
 *   words and, once it ran, what it did (its events share the request id as correlation id);
 * - one COMPLETED item per other correlation id among the newest {@link REBUILD_EVENT_WINDOW} events whose
 *   `caused_by` session is an agent's, titled by its first event, with Undo where it still applies.
 * Pending requests of a session behind an earlier pending one are QUEUED (as live). Reads only.
 */
export function rebuildActivity(project: ProjectRepository, opts: { window?: number } = {}): ActivityItem[] {
  const repo = memoNames(project);
  const events = recentEvents(repo, opts.window ?? REBUILD_EVENT_WINDOW);
  const sessions = new Map<string, SessionInfo>();
  const groups = new Map<string, EventRecord[]>();
  for (const e of events) {
    if (e.event_type === 'session.connected') {
      sessions.set(e.caused_by.session_id, {
        client_name: String(e.payload.client_name ?? e.caused_by.user),
        role: (e.payload.role as string | null | undefined) ?? null,
      });
      continue;
    }
    // hybrid mode's notices and pauses (agent.notified, agents.paused/resumed) are bookkeeping, like sessions and approvals
    if (/^(session|approval|agent|agents)\./.test(e.event_type)) continue;
    const cid = e.metadata.correlation_id;
    const g = groups.get(cid);
    if (g) g.push(e);
    else groups.set(cid, [e]);
  }
  const sessionOf = (id: string, beforeSeq: number): SessionInfo | undefined => {
    if (!sessions.has(id)) {
      const e = repo.findSessionConnected(id, beforeSeq);
      sessions.set(
        id,
        e
          ? { client_name: String(e.payload.client_name ?? e.caused_by.user), role: (e.payload.role as string | null | undefined) ?? null }
          : { client_name: '', role: null },
      );
    }
    return sessions.get(id);
  };
  const isAgent = (id: string, beforeSeq: number) => !NOT_AGENTS.has(id) && sessionOf(id, beforeSeq)?.role !== 'researcher';

  const items: ActivityItem[] = [];
  // listApprovals gives the oldest first: every pending request, and the newest decided ones
  const all = repo.listApprovals(undefined, 100_000);
  const approvals = [...all.filter((a) => a.status === 'pending'), ...all.filter((a) => a.status !== 'pending').slice(-MAX_ACTIVITY_ITEMS)];
  const byRequest = new Set<string>();
  for (const a of approvals) {
    byRequest.add(a.request_id);
    const status = STATUS_OF[a.status];
    const done =
      status === 'COMPLETED' ? describeDone(repo, groups.get(a.request_id) ?? repo.listEventsByCorrelation(a.request_id)) : { words: null, undoable: false };
    const asked = describeCall(repo, a.tool, a.arguments, a.description);
    items.push({
      id: a.request_id,
      time: a.created_at,
      session_id: a.session_id,
      client_name: a.client_name,
      tool: a.tool,
      title: toolTitle(a.tool),
      description:
        status === 'REJECTED' && a.reason
          ? `${asked} — rejected: ${a.reason}`
          : (done.words ?? (status === 'COMPLETED' ? pastTense(asked, toolVerbs()) : asked)),
      status,
      ...(a.error_code ? { error_code: a.error_code } : {}),
      request_id: a.request_id,
      correlation_id: a.request_id,
      undoable: done.undoable,
    });
  }
  for (const [cid, group] of groups) {
    const first = group[0]!;
    if (byRequest.has(cid) || !(first.caused_by.role ? first.caused_by.role === 'agent' : isAgent(first.caused_by.session_id, first.metadata.sequence_number)))
      continue;
    const done = describeDone(repo, group);
    items.push({
      id: `events:${cid}`,
      time: first.timestamp,
      session_id: first.caused_by.session_id,
      client_name: sessionOf(first.caused_by.session_id, first.metadata.sequence_number)?.client_name || first.caused_by.user,
      tool: first.event_type,
      title: eventTitle(first.event_type),
      description: done.words ?? capitalize(humanizeEventType(first.event_type)),
      status: 'COMPLETED',
      correlation_id: cid,
      undoable: done.undoable,
    });
  }
  items.sort((x, y) => (x.time < y.time ? 1 : x.time > y.time ? -1 : 0));
  return requeue(items.slice(0, MAX_ACTIVITY_ITEMS));
}

/** Marks a session's pending requests after its oldest pending one QUEUED (the trust layer runs them in order). Returns `items`. */
export function requeue(items: ActivityItem[]): ActivityItem[] {
  const waiting = new Set<string>();
  for (const item of [...items].reverse()) {
    if (item.status !== 'PENDING_APPROVAL' && item.status !== 'QUEUED') continue;
    item.status = waiting.has(item.session_id) ? 'QUEUED' : 'PENDING_APPROVAL';
    waiting.add(item.session_id);
  }
  return items;
}
