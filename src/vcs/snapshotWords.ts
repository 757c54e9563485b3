/**
 * Automatic snapshots in words (src/vcs/snapshotter.ts): which events a snapshot ignores, who authored a change, and
 * the message of a snapshot ("Coded 3 passages with 'Belonging' in interview-04; Renamed the code 'A' to 'B'").
 */
import type { EventRecord } from '../domain/events';
import type { ProjectRepository } from '../domain/ports';
import { describeEvents } from '../domain/undoRedo';
import { COMMITTER } from './historyRepo';

/** A finished tool call as the pipeline reports it (its `onDidCall` record; only these fields are read). */
export interface CallNote {
  tool: string;
  status: string;
  /** who called: `client_name` names an agent's snapshots; `researcher` (or the session `local`) makes `user` the author */
  caller: { session_id: string; client_type: string; user: string; client_name?: string; researcher?: boolean };
}

/** The session id of the researcher's own UI (src/ui/workbench.ts LOCAL_SESSION; repeated here: vcs does not import the UI). */
const LOCAL_SESSION = 'local';
/** The session id of the pipeline's own housekeeping calls (expiring approvals). */
const SYSTEM_SESSION = 'marginalia';

/** One change waiting for the next automatic snapshot. */
export interface PendingChange {
  tool: string;
  summary: string;
  session_id: string;
  client_type: string;
  user: string;
  /** what the change did in words, past tense, as the project was right after it ("coded 3 passages with 'Trust' in interview-04") */
  words?: string;
  /** who made it: the researcher's coder name or the agent's client name (see {@link authorOf}) */
  author?: string;
  /** true when an agent (not the researcher) made it */
  agent?: boolean;
}

const SUBJECT_MAX = 200;

/** A tool name for events that arrive without their call (e.g. from a pipeline not reporting calls): the first event's type. */
export function fallbackToolName(events: readonly EventRecord[]): string {
  return events[0]?.event_type ?? 'change';
}

function plural(noun: string, n: number): string {
  if (n === 1) return noun;
  if (/[^aeiou]y$/.test(noun)) return `${noun.slice(0, -1)}ies`;
  if (/(s|x|ch|sh)$/.test(noun)) return `${noun}es`;
  return `${noun}s`;
}

/** The label of one event: the item's name ("Old → New" for a rename; "source: attribute" for a document attribute), else "<kind> <id>". */
function eventLabel(e: EventRecord): string {
  const p = e.payload;
  if (typeof p.old_name === 'string' && typeof p.new_name === 'string') return `${p.old_name} → ${p.new_name}`;
  if (typeof p.source_name === 'string' && typeof p.attribute_name === 'string') return `${p.source_name}: ${p.attribute_name}`;
  if (typeof p.name === 'string') return p.name;
  return `${e.aggregate_type} ${e.aggregate_id}`;
}

/**
 * What one call changed, from its events: one event gives the item's name ("Belonging"); several of one
 * kind give a count ("3 segments"); mixed kinds give counts per kind in order of appearance
 * ("1 code, 4 segments").
 */
export function summarizeEvents(events: readonly EventRecord[]): string {
  if (events.length === 1) return eventLabel(events[0]!);
  const counts = new Map<string, number>();
  for (const e of events) counts.set(e.aggregate_type, (counts.get(e.aggregate_type) ?? 0) + 1);
  return [...counts].map(([kind, n]) => `${n} ${plural(kind, n)}`).join(', ');
}

export function changeLine(c: PendingChange): string {
  const what = c.words ? `${capitalize(c.words)} (${c.tool})` : `${c.tool}: ${c.summary}`;
  return `- ${what} (session ${c.session_id}, ${c.client_type}, user ${c.user})`;
}

/** Events that change nothing a snapshot holds: sessions, approval bookkeeping, the project opened or closed, a sync (which commits its own snapshot). */
export function isBookkeeping(type: string): boolean {
  return type.startsWith('session.') || type.startsWith('approval.') || type === 'project.opened' || type === 'project.closed' || type === 'project.synced';
}

/** An agent's suggestions in words (describeEvents names coding changes; suggestions are recorded proposals). */
function suggestionWords(events: readonly EventRecord[]): string {
  const n = (type: string) => events.filter((e) => e.event_type === type);
  const parts: string[] = [];
  const codes = n('suggestion.code_suggested').map((e) => `'${String(e.payload.name ?? '')}'`);
  if (codes.length > 0)
    parts.push(
      `suggested the new ${codes.length === 1 ? 'code' : 'codes'} ${codes.slice(0, 3).join(', ')}${codes.length > 3 ? ` and ${codes.length - 3} more` : ''}`,
    );
  const codings = n('suggestion.coding_suggested').length;
  if (codings > 0) parts.push(`suggested ${codings} ${codings === 1 ? 'coding' : 'codings'}`);
  const merges = n('suggestion.merge_suggested').length;
  if (merges > 0) parts.push(`suggested ${merges === 1 ? 'a merge of two codes' : `${merges} merges`}`);
  const approved = n('suggestion.approved').length;
  if (approved > 0) parts.push(`approved ${approved === 1 ? 'a suggestion' : `${approved} suggestions`}`);
  const rejected = n('suggestion.rejected').length;
  if (rejected > 0) parts.push(`rejected ${rejected === 1 ? 'a suggestion' : `${rejected} suggestions`}`);
  return parts.join('; ');
}

/** One call's changes in words: codings, codebook, sources and cases by describeEvents, suggestions by {@link suggestionWords}. */
export function inWords(repo: ProjectRepository, events: readonly EventRecord[]): string | undefined {
  const suggestions = events.filter((e) => e.event_type.startsWith('suggestion.') && e.event_type !== 'suggestion.batch_created');
  const rest = events.filter((e) => !e.event_type.startsWith('suggestion.'));
  const words = [rest.length > 0 ? describeEvents(repo, rest) : '', suggestionWords(suggestions)].filter(Boolean).join('; ');
  return words || undefined;
}

/** `s` with its first letter in upper case. */
function capitalize(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

/**
 * Who made a change, as a snapshot's author: by the event's `caused_by.role` (else: the UI's session `local`,
 * or a researcher's call such as the reviewer token's) the researcher by their coder name (`caused_by.coder`,
 * else `user`: `marginalia.coder.name` in VS Code, `--coder` headless); an agent by its coder name (its
 * credential's name), else its client name (what it called itself when it connected), else its user;
 * the pipeline's own housekeeping as "Marginalia". Never `agent:<session>`.
 */
export function authorOf(
  by: { session_id: string; client_type: string; user: string; role?: 'researcher' | 'agent'; coder?: string },
  call?: CallNote,
): { name: string; agent: boolean } {
  const caller = call && call.caller.session_id === by.session_id ? call.caller : undefined;
  if (by.session_id === SYSTEM_SESSION) return { name: COMMITTER.name, agent: false };
  // the event's coder role decides (issue 14, item 1: role agent marks an AI action); events without one (no
  // agent layer, or stored before roles) fall back to the session
  const researcher = by.role ? by.role === 'researcher' : by.session_id === LOCAL_SESSION || caller?.researcher === true;
  if (researcher) return { name: by.coder || by.user || 'Researcher', agent: false };
  return { name: by.coder || caller?.client_name || by.user || `session ${by.session_id}`, agent: true };
}

/**
 * The message and author of an automatic snapshot. The subject says what changed in words, change by
 * change in order ("Coded 3 passages with 'Food security' in interview-04; Renamed the code 'A' to 'B'"),
 * a change repeated at once given once with "×n", cut at about 200 characters ("; … and 2 more changes");
 * changes without words (no repository to name things) fall back to "<tool>: <what>". The body lists every
 * change with its tool, session, client and user. The author is who made the changes ({@link authorOf}:
 * the researcher's coder name or the agent's name; several joined by " + ").
 */
export function describeChanges(changes: readonly PendingChange[]): { subject: string; body: string; author: string } {
  const parts: { text: string; n: number }[] = [];
  for (const c of changes) {
    const text = c.words ? c.words : `${c.tool}: ${c.summary}`;
    const last = parts[parts.length - 1];
    if (last && last.text === text) last.n++;
    else parts.push({ text, n: 1 });
  }
  const shown = parts.map((p) => (p.n > 1 ? `${p.text} ×${p.n}` : p.text));
  let subject = '';
  let used = 0;
  for (const p of shown) {
    const next = subject ? `${subject}; ${p}` : p;
    if (next.length > SUBJECT_MAX && subject) break;
    subject = next;
    used++;
  }
  if (used < shown.length) subject += `; … and ${shown.length - used} more ${shown.length - used === 1 ? 'change' : 'changes'}`;
  const authors = [...new Set(changes.map((c) => c.author ?? `session ${c.session_id}`))];
  return { subject: capitalize(subject), body: changes.map(changeLine).join('\n'), author: authors.join(' + ') };
}
