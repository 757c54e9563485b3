/**
 * What `marginalia watch` (src/cli/watchCommand.ts) shows and reads: pending requests and agent actions in one
 * line each, the commands typed at its prompt, and the event stream's SSE framing. Pure functions, tested alone.
 */
import type { EventRecord } from '../domain/events';
import { oneLineExcerpt } from '../core/text';

/** A pending request as the watcher shows it (from GET /approvals or an approval.requested event). */
export interface WatchRequest {
  request_id: string;
  tool: string;
  client_name: string;
  description: string;
  trust_level: string;
  expires_at: string;
  arguments: unknown;
  held_by_pause?: boolean;
}

/** A line of input parsed: a decision on the current request, or a command. */
export type WatchCommand =
  | { kind: 'approve' }
  | { kind: 'reject'; reason?: string }
  | { kind: 'edit'; json?: string }
  | { kind: 'skip' }
  | { kind: 'pause' }
  | { kind: 'resume' }
  | { kind: 'list' }
  | { kind: 'quit' }
  | { kind: 'help' }
  | { kind: 'empty' }
  | { kind: 'unknown'; text: string };

/**
 * Parses one input line: its first word (a letter or the whole word: `a`/`approve`, `r`/`reject` [reason],
 * `e`/`edit` [json], `s`/`skip`, `p`/`pause`, `u`/`resume`/`unpause`, `l`/`list`, `q`/`quit`, `h`/`?`/`help`),
 * case-insensitive; the rest of the line is the reason or the JSON.
 */
export function parseWatchCommand(line: string): WatchCommand {
  const text = line.trim();
  if (!text) return { kind: 'empty' };
  const m = /^(\S+)\s*([\s\S]*)$/.exec(text) as RegExpExecArray;
  const word = (m[1] as string).toLowerCase();
  const rest = (m[2] ?? '').trim();
  if (word === 'a' || word === 'approve' || word === 'y' || word === 'yes') return { kind: 'approve' };
  if (word === 'r' || word === 'reject' || word === 'n' || word === 'no') return rest ? { kind: 'reject', reason: rest } : { kind: 'reject' };
  if (word === 'e' || word === 'edit') return rest ? { kind: 'edit', json: rest } : { kind: 'edit' };
  if (word.startsWith('{')) return { kind: 'edit', json: text };
  if (word === 's' || word === 'skip') return { kind: 'skip' };
  if (word === 'p' || word === 'pause') return { kind: 'pause' };
  if (word === 'u' || word === 'resume' || word === 'unpause') return { kind: 'resume' };
  if (word === 'l' || word === 'list') return { kind: 'list' };
  if (word === 'q' || word === 'quit' || word === 'exit') return { kind: 'quit' };
  if (word === 'h' || word === '?' || word === 'help') return { kind: 'help' };
  return { kind: 'unknown', text };
}

/** Names of codes and sources by id, for lines in words. */
export interface WatchNames {
  code(id: number): string | undefined;
  source(id: number): string | undefined;
}

/** `text` cut to `max` code points with "…". */
export function cut(text: string, max: number): string {
  return oneLineExcerpt(text, max);
}

/** HH:MM:SS of an ISO time (or of `d`), in UTC. */
export function clock(iso: string | Date): string {
  const d = typeof iso === 'string' ? new Date(iso) : iso;
  return Number.isNaN(d.getTime()) ? '--:--:--' : d.toISOString().slice(11, 19);
}

/** Who caused an event, as a line names them: the coder (an agent's credential name), else the client, else the user. */
export function actorOf(e: EventRecord): string {
  const c = e.caused_by as EventRecord['caused_by'] & { coder?: string; client?: string };
  return c.coder || c.client || c.user || c.session_id.slice(0, 8);
}

/** True when an event was caused by an agent (`caused_by.role`; for events without a role, any client but the local UI). */
export function isAgentEvent(e: EventRecord): boolean {
  const role = (e.caused_by as { role?: string }).role;
  return role ? role === 'agent' : e.caused_by.client_type !== 'LOCAL_UI';
}

/** One event in a few words, with names where `names` knows them. */
export function describeEvent(e: EventRecord, names: WatchNames): string {
  const p = e.payload;
  const code = (id: unknown) => (typeof id === 'number' ? `'${names.code(id) ?? `code ${id}`}'` : '');
  const source = (id: unknown) => (typeof id === 'number' ? (names.source(id) ?? `source ${id}`) : '');
  switch (e.event_type) {
    case 'coding.segment_coded':
      return `coded "${cut(String(p.text ?? ''), 40)}" in ${source(p.source_id)} with ${code(p.code_id)}`;
    case 'coding.segment_uncoded':
      return `uncoded ${code(p.code_id)} in ${source(p.source_id)}`;
    case 'coding.code_created':
      return `created code '${String(p.name ?? '')}'`;
    case 'coding.code_renamed':
      return `renamed code '${String(p.old_name ?? '')}' to '${String(p.new_name ?? '')}'`;
    case 'coding.code_deleted':
      return `deleted code ${code(p.code_id)}`;
    case 'coding.codes_merged':
      return `merged ${code(p.source_code_id)} into ${code(p.target_code_id)}`;
    case 'agent.notified':
      return `${String(p.summary ?? p.title ?? p.tool)} (notify)`;
    case 'session.connected':
      return `connected (${String(p.client_type ?? '')})`;
    case 'session.disconnected':
      return `disconnected (${String(p.reason ?? '')})`;
    default: {
      const bits = ['name', 'new_name', 'title', 'source_name'].map((k) => p[k]).filter((v) => typeof v === 'string') as string[];
      return `${e.event_type.replace(/^[a-z]+\./, '').replace(/_/g, ' ')}${bits.length ? ` '${cut(bits[0] as string, 40)}'` : ''}`;
    }
  }
}

/**
 * One observer line for the events of one agent action (one correlation id): time, agent, what (the event
 * type of its first event, or the tool of an agent.notified), the summary in words, and the outcome.
 */
export function formatActionLine(events: readonly EventRecord[], names: WatchNames): string {
  const first = events[0] as EventRecord;
  const what = first.event_type === 'agent.notified' ? String(first.payload.tool ?? 'notify') : first.event_type;
  const words = events.map((e) => describeEvent(e, names));
  const summary = words.length > 3 ? `${words.slice(0, 3).join('; ')}; and ${words.length - 3} more` : words.join('; ');
  const outcome = first.event_type === 'agent.notified' ? 'NOTIFY' : 'ok';
  return `${clock(first.timestamp)}  ${actorOf(first).padEnd(14)}  ${what.padEnd(22)}  ${summary}  ${outcome}`;
}

/** The prompt block of a pending request. */
export function formatRequest(r: WatchRequest): string {
  const paused = r.held_by_pause ? ' (held: agents paused)' : '';
  return (
    `? ${r.client_name} asks: ${cut(r.description, 160)}${paused} [${r.tool}; ${r.trust_level}; request ${r.request_id.slice(0, 8)}, until ${clock(r.expires_at)}]\n` +
    `  [a]pprove  [r]eject [reason]  [e]dit [json]  [s]kip   ·   [p]ause  [u] resume  [l]ist  [q]uit\n`
  );
}

/** The watcher's help text (`h`). */
export const HELP =
  'Commands: a = approve the request shown, r [reason] = reject it, e [json] = approve with edited arguments, s = skip (ask later),\n' +
  '          p = pause every agent, u = resume agents, l = list pending requests, q = quit.\n';

/** The request out of an approval record as GET /approvals lists it. */
export function requestOfRecord(a: Record<string, unknown>): WatchRequest {
  return {
    request_id: String(a.request_id),
    tool: String(a.tool),
    client_name: String(a.client_name ?? ''),
    description: String(a.description ?? a.tool),
    trust_level: String(a.trust_level ?? ''),
    expires_at: String(a.expires_at ?? ''),
    arguments: a.arguments,
    held_by_pause: a.reason === 'agents paused',
  };
}
