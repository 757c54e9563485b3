/**
 * `marginalia watch --project P` (issue 14 item 9): the headless researcher's observer. It finds the running
 * server through the project's discovery file (src/cli/credentials.ts), authenticates with the reviewer token
 * (MARGINALIA_REVIEWER_TOKEN or the install's credentials.json), follows the event stream (SSE
 * `GET /events/stream?patterns=*`), prints one line per agent action and asks about every pending request:
 *
 *   14:32:10  claude          apply_code   code "I felt alone…" in interview-04 with 'Isolation'   ok
 *   ? 14:32:11 claude asks: create code 'Hope' (suggest; request 3f2a…, until 14:37)
 *     [a]pprove  [r]eject [reason]  [e]dit [json]  [s]kip   ·   [p]ause  [u] resume  [l]ist  [q]uit
 *
 * Decisions go through the HTTP approval routes (`POST /approvals/{id}/approve` with optional edited
 * `arguments`, `POST /approvals/{id}/reject` with an optional reason), pause and resume through
 * `POST /agents/pause` and `/agents/resume`. The session logic is {@link watchSession}, which takes its input and
 * output streams, so tests drive it without a terminal.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as readline from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { parseArgs } from 'node:util';
import type { EventRecord } from '../domain/events';
import { loadTokens, readDiscovery } from './credentials';
import { oneLineExcerpt } from '../core/text';

/** The usage lines of `marginalia watch` (main.ts prints them in its help). */
export const WATCH_USAGE = `  marginalia watch --project PATH [--url URL]
      A terminal observer for the researcher (hybrid mode, \`serve --ai-primary\`): finds the server that owns
      PATH (its discovery file; --url names one instead), prints one line per agent action, and asks about each
      pending request: [a]pprove, [r]eject [reason], [e]dit [json] (the arguments in $EDITOR, or a JSON line),
      [s]kip; at any time [p]ause agents, [u] resume them, [l]ist pending requests, [q]uit. Uses the reviewer
      token (MARGINALIA_REVIEWER_TOKEN, else this install's).`;

/** The client name the watcher's calls and stream are recorded under. */
export const WATCH_CLIENT = 'marginalia-watch';

/** Options of {@link watchSession}. */
export interface WatchOptions {
  /** the server's base URL, e.g. `http://127.0.0.1:8765` */
  url: string;
  /** the reviewer token (the researcher's) */
  token: string;
  /** commands and answers, one per line */
  input: Readable;
  /** where lines and prompts go */
  output: Writable;
  /**
   * The editor `e` opens the arguments in (a command line; $EDITOR); undefined: `e` without JSON asks for one
   * JSON line instead.
   */
  editor?: string;
  /** the clock of printed times (default: now) */
  now?: () => Date;
}

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

/**
 * An incremental parser of a server-sent event stream (WHATWG HTML, "event stream interpretation"): feed it
 * text as it arrives; it returns the complete events (`event` type, `data` joined by newlines, `id`). Comments
 * (`: keep-alive`) and `retry:` lines are skipped.
 */
export class SseParser {
  private buffer = '';
  private data: string[] = [];
  private event = '';
  private id: string | undefined;

  /** The events completed by `chunk`. */
  feed(chunk: string): { event: string; data: string; id?: string }[] {
    this.buffer += chunk;
    const out: { event: string; data: string; id?: string }[] = [];
    for (;;) {
      const nl = this.buffer.search(/\r\n|\n|\r/);
      if (nl < 0) break;
      const line = this.buffer.slice(0, nl);
      this.buffer = this.buffer.slice(nl + (this.buffer.startsWith('\r\n', nl) ? 2 : 1));
      if (line === '') {
        if (this.data.length > 0) out.push({ event: this.event || 'message', data: this.data.join('\n'), ...(this.id !== undefined ? { id: this.id } : {}) });
        this.data = [];
        this.event = '';
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? '' : line.slice(colon + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (field === 'data') this.data.push(value);
      else if (field === 'event') this.event = value;
      else if (field === 'id') this.id = value;
    }
    return out;
  }
}

/** Names of codes and sources by id, for lines in words. */
export interface WatchNames {
  code(id: number): string | undefined;
  source(id: number): string | undefined;
}

/** `text` cut to `max` code points with "…". */
function cut(text: string, max: number): string {
  return oneLineExcerpt(text, max);
}

/** HH:MM:SS of an ISO time (or of `d`), in UTC. */
function clock(iso: string | Date): string {
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

const HELP =
  'Commands: a = approve the request shown, r [reason] = reject it, e [json] = approve with edited arguments, s = skip (ask later),\n' +
  '          p = pause every agent, u = resume agents, l = list pending requests, q = quit.\n';

/** The request out of an approval record as GET /approvals lists it. */
function requestOfRecord(a: Record<string, unknown>): WatchRequest {
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

/**
 * Runs one observer session against the server at `opts.url` until the input ends, `q` is entered or the
 * event stream ends (the server stopped). Resolves then; rejects only when the stream cannot be opened (the
 * error names the HTTP status and the server's message).
 */
export async function watchSession(opts: WatchOptions): Promise<void> {
  const base = opts.url.replace(/\/+$/, '');
  const headers = { authorization: `Bearer ${opts.token}`, 'x-marginalia-client': WATCH_CLIENT };
  const out = (text: string) => void opts.output.write(text);
  const now = opts.now ?? (() => new Date());

  const api = async (method: 'GET' | 'POST', route: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> => {
    const res = await fetch(`${base}${route}`, {
      method,
      headers: { ...headers, ...(method === 'POST' ? { 'content-type': 'application/json' } : {}) },
      body: method === 'POST' ? JSON.stringify(body ?? {}) : undefined,
    });
    let json: Record<string, unknown> = {};
    try {
      json = (await res.json()) as Record<string, unknown>;
    } catch {
      // not JSON: the status says enough
    }
    return { status: res.status, json };
  };
  const failure = (r: { status: number; json: Record<string, unknown> }) => `${String(r.json.error_code ?? r.status)}: ${String(r.json.error ?? 'failed')}`;

  // names of codes and sources, read with the reviewer token and read again (at most once a second) when an id is new
  const codes = new Map<number, string>();
  const sources = new Map<number, string>();
  let namesAt = 0;
  const loadNames = async () => {
    namesAt = Date.now();
    try {
      const [c, s] = await Promise.all([api('POST', '/tools/list_codes', { arguments: {} }), api('POST', '/tools/list_sources', { arguments: {} })]);
      for (const x of (c.json.data as { codes?: { code_id: number; name: string }[] } | undefined)?.codes ?? []) codes.set(x.code_id, x.name);
      for (const x of (s.json.data as { sources?: { source_id: number; name: string }[] } | undefined)?.sources ?? []) sources.set(x.source_id, x.name);
    } catch {
      // names are a courtesy: ids stand in
    }
  };
  const names: WatchNames = { code: (id) => codes.get(id), source: (id) => sources.get(id) };
  const needsNames = (events: readonly EventRecord[]) =>
    events.some(
      (e) =>
        (typeof e.payload.code_id === 'number' && !codes.has(e.payload.code_id)) ||
        (typeof e.payload.source_id === 'number' && !sources.has(e.payload.source_id)),
    );

  // pending requests, asked about one at a time (the head of the queue is the one shown)
  const queue: WatchRequest[] = [];
  let shown: string | undefined;
  const showNext = () => {
    const head = queue[0];
    if (!head || shown === head.request_id) return;
    shown = head.request_id;
    out(formatRequest(head));
  };
  const drop = (id: string) => {
    const i = queue.findIndex((r) => r.request_id === id);
    if (i >= 0) queue.splice(i, 1);
    if (shown === id) shown = undefined;
  };

  // agent actions: the events of one correlation id make one line (they arrive together, one call at a time)
  let group: EventRecord[] = [];
  let groupTimer: NodeJS.Timeout | undefined;
  let printing = Promise.resolve();
  const flushGroup = () => {
    if (groupTimer) clearTimeout(groupTimer);
    groupTimer = undefined;
    const events = group;
    group = [];
    if (events.length === 0) return;
    printing = printing.then(async () => {
      if (needsNames(events) && Date.now() - namesAt > 1000) await loadNames();
      out(`${formatActionLine(events, names)}\n`);
    });
  };
  const onEvent = (e: EventRecord) => {
    const p = e.payload;
    if (e.event_type === 'approval.requested') {
      const request: WatchRequest = {
        request_id: String(p.request_id ?? e.aggregate_id),
        tool: String(p.action_type ?? ''),
        client_name: actorOf(e),
        description: String(p.description ?? p.action_type ?? ''),
        trust_level: String(p.trust_level ?? ''),
        expires_at: String(p.expires_at ?? ''),
        arguments: p.payload,
        held_by_pause: p.held_by_pause === true,
      };
      if (!queue.some((r) => r.request_id === request.request_id)) queue.push(request);
      printing = printing.then(() => showNext());
      return;
    }
    if (e.event_type === 'approval.granted' || e.event_type === 'approval.denied' || e.event_type === 'approval.failed') {
      const id = String(p.request_id ?? e.aggregate_id);
      const wasShown = shown === id;
      drop(id);
      const verdict =
        e.event_type === 'approval.granted'
          ? 'approved'
          : e.event_type === 'approval.denied'
            ? `rejected${p.reason ? ` (${String(p.reason)})` : ''}`
            : `failed (${String(p.error_code ?? '')})`;
      printing = printing.then(() => {
        out(`${clock(e.timestamp)}  ${String(p.action_type ?? '')} request ${id.slice(0, 8)} ${verdict}${wasShown ? '' : ''}\n`);
        showNext();
      });
      return;
    }
    if (e.event_type === 'agents.paused' || e.event_type === 'agents.resumed') {
      printing = printing.then(() =>
        out(
          `${clock(e.timestamp)}  agents ${e.event_type === 'agents.paused' ? 'PAUSED' : 'RESUMED'} by ${String(p.by ?? actorOf(e))}${e.event_type === 'agents.resumed' ? ` (${String(p.ran ?? 0)} held calls ran, ${String(p.still_pending ?? 0)} still pending)` : ''}\n`,
        ),
      );
      return;
    }
    if (!isAgentEvent(e)) return;
    if (group.length > 0 && group[0]?.metadata.correlation_id !== e.metadata.correlation_id) flushGroup();
    group.push(e);
    groupTimer ??= setTimeout(flushGroup, 40);
  };

  // the event stream: every event from now on (SSE; the server's events_per_second applies)
  const abort = new AbortController();
  const stream = await fetch(`${base}/events/stream?patterns=*`, { headers: { ...headers, accept: 'text/event-stream' }, signal: abort.signal });
  if (!stream.ok || !stream.body) {
    let message = `${stream.status}`;
    try {
      const j = (await stream.json()) as { error_code?: string; error?: string };
      message = `${stream.status} ${j.error_code ?? ''}: ${j.error ?? ''}`;
    } catch {
      // no JSON body
    }
    throw new Error(`The event stream of ${base} could not be opened (${message})`);
  }
  await loadNames();
  out(`Watching ${base} as the researcher (${clock(now())} UTC). h for help.\n`);
  const pending = await api('GET', '/approvals?status=pending');
  for (const a of (pending.json.data as { approvals?: Record<string, unknown>[] } | undefined)?.approvals ?? []) queue.push(requestOfRecord(a));
  const paused = await api('GET', '/agents/pause');
  if ((paused.json.data as { paused?: boolean } | undefined)?.paused) out('Agents are PAUSED: u resumes them.\n');
  if (queue.length > 0) out(`${queue.length} request(s) pending.\n`);
  showNext();

  let finish: () => void = () => undefined;
  const done = new Promise<void>((resolve) => (finish = resolve));
  const parser = new SseParser();
  const decoder = new TextDecoder();
  const reading = (async () => {
    const reader = stream.body!.getReader();
    try {
      for (;;) {
        const { value, done: end } = await reader.read();
        if (end) break;
        for (const m of parser.feed(decoder.decode(value, { stream: true }))) {
          if (m.event === 'overflow') continue;
          try {
            onEvent(JSON.parse(m.data) as EventRecord);
          } catch {
            // not an event record
          }
        }
      }
      if (!abort.signal.aborted) out('The server closed the event stream.\n');
    } catch {
      if (!abort.signal.aborted) out('The event stream broke off.\n');
    }
    finish();
  })();

  const editInEditor = (args: unknown): string | undefined => {
    if (!opts.editor) return undefined;
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'marginalia-watch-')), 'arguments.json');
    fs.writeFileSync(file, `${JSON.stringify(args ?? {}, null, 2)}\n`);
    try {
      const r = spawnSync(opts.editor, [file], { stdio: 'inherit', shell: true });
      if (r.status !== 0) return undefined;
      return fs.readFileSync(file, 'utf8');
    } finally {
      fs.rmSync(path.dirname(file), { recursive: true, force: true });
    }
  };

  /** true once `e` without JSON and without an editor waits for the JSON line */
  let awaitingJson = false;
  const approve = async (r: WatchRequest, edited?: unknown) => {
    const res = await api('POST', `/approvals/${encodeURIComponent(r.request_id)}/approve`, edited === undefined ? {} : { arguments: edited });
    if (res.status >= 400) out(`! could not approve ${r.request_id.slice(0, 8)}: ${failure(res)}\n`);
    else drop(r.request_id);
  };
  const handle = async (line: string): Promise<boolean> => {
    const head = queue[0];
    if (awaitingJson) {
      awaitingJson = false;
      if (head) await approveEdited(head, line);
      return true;
    }
    const cmd = parseWatchCommand(line);
    switch (cmd.kind) {
      case 'empty':
        return true;
      case 'quit':
        return false;
      case 'help':
        out(HELP);
        return true;
      case 'pause': {
        const r = await api('POST', '/agents/pause');
        out(r.status >= 400 ? `! could not pause: ${failure(r)}\n` : (r.json.data as { changed?: boolean }).changed ? '' : 'Agents were paused already.\n');
        return true;
      }
      case 'resume': {
        const r = await api('POST', '/agents/resume');
        if (r.status >= 400) out(`! could not resume: ${failure(r)}\n`);
        else if (!(r.json.data as { changed?: boolean }).changed && ((r.json.data as { requests?: unknown[] }).requests ?? []).length === 0)
          out('Agents were not paused.\n');
        return true;
      }
      case 'list':
        out(
          queue.length === 0
            ? 'No request is pending.\n'
            : `${queue.map((r, i) => `  ${i + 1}. ${r.client_name}: ${cut(r.description, 100)} [${r.request_id.slice(0, 8)}]`).join('\n')}\n`,
        );
        return true;
      case 'unknown':
        out(`? "${cut(cmd.text, 40)}": h for help\n`);
        return true;
      default:
        break;
    }
    if (!head) {
      out('No request is pending.\n');
      return true;
    }
    if (cmd.kind === 'approve') await approve(head);
    else if (cmd.kind === 'reject') {
      const res = await api('POST', `/approvals/${encodeURIComponent(head.request_id)}/reject`, cmd.reason ? { reason: cmd.reason } : {});
      if (res.status >= 400) out(`! could not reject ${head.request_id.slice(0, 8)}: ${failure(res)}\n`);
      else drop(head.request_id);
    } else if (cmd.kind === 'skip') {
      queue.push(queue.shift() as WatchRequest);
      shown = undefined;
    } else if (cmd.kind === 'edit') {
      const text = cmd.json ?? editInEditor(head.arguments);
      if (text === undefined) {
        out(`arguments now: ${JSON.stringify(head.arguments ?? {})}\narguments JSON> `);
        awaitingJson = true;
        return true;
      }
      await approveEdited(head, text);
    }
    showNext();
    return true;
  };
  const approveEdited = async (r: WatchRequest, text: string) => {
    let edited: unknown;
    try {
      edited = JSON.parse(text);
    } catch (e) {
      out(`! not JSON (${(e as Error).message}); the request still waits\n`);
      shown = undefined;
      showNext();
      return;
    }
    await approve(r, edited);
    showNext();
  };

  const rl = readline.createInterface({ input: opts.input, terminal: false });
  let lines = Promise.resolve(true);
  rl.on('line', (line) => {
    lines = lines.then(async (go) => {
      if (!go) return false;
      await printing;
      const more = await handle(line).catch((e: unknown) => {
        out(`! ${(e as Error).message}\n`);
        return true;
      });
      if (!more) finish();
      return more;
    });
  });
  rl.on('close', () => void lines.then(() => finish()));

  await done;
  rl.close();
  flushGroup();
  await printing;
  abort.abort();
  await reading.catch(() => undefined);
}

/**
 * Runs `marginalia watch` (see {@link WATCH_USAGE}): resolves when the session ends. Errors (thrown as
 * Error with a message for the terminal): no server owns the project, the stream cannot be opened.
 */
export async function runWatch(argv: string[]): Promise<void> {
  const { values } = parseArgs({ args: argv, options: { project: { type: 'string' }, url: { type: 'string' } }, strict: true });
  const project = values.project ?? process.env.MARGINALIA_PROJECT;
  let url = values.url;
  if (!url) {
    if (!project) throw new WatchUsageError('watch needs --project PATH (or --url URL)');
    const info = readDiscovery(path.resolve(project));
    if (!info)
      throw new WatchUsageError(
        `No running server owns ${path.resolve(project)}: start one with \`marginalia serve --project ${project} --ai-primary\` (or open it in VS Code)`,
      );
    url = info.url;
  }
  const token = loadTokens().reviewer;
  await watchSession({
    url,
    token,
    input: process.stdin,
    output: process.stdout,
    editor: process.stdin.isTTY ? process.env.VISUAL || process.env.EDITOR : undefined,
  });
  process.exit(0);
}

/** A usage error of `marginalia watch` (main.ts prints it with the usage and exits 2). */
export class WatchUsageError extends Error {}
