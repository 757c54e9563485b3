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
import { createSseParser } from '../core/sse';
import type { EventRecord } from '../domain/events';
import { loadTokens, readDiscovery } from './credentials';
import {
  actorOf,
  clock,
  cut,
  formatActionLine,
  formatRequest,
  HELP,
  isAgentEvent,
  parseWatchCommand,
  requestOfRecord,
  type WatchNames,
  type WatchRequest,
} from './watchFormat';

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

// the formatting and parsing of the watcher (re-exported for its tests)
export { actorOf, describeEvent, formatActionLine, formatRequest, isAgentEvent, parseWatchCommand } from './watchFormat';
export type { WatchCommand, WatchNames, WatchRequest } from './watchFormat';

/**
 * Runs one observer session against the server at `opts.url` until the input ends, `q` is entered or the
 * event stream ends (the server stopped). Resolves then; rejects only when the stream cannot be opened (the
 * error names the HTTP status and the server's message).
 */
export async function watchSession(opts: WatchOptions): Promise<void> {
  await new WatchSession(opts).run();
}

/** An HTTP answer of the server as the watcher reads it. */
interface ApiAnswer {
  status: number;
  json: Record<string, unknown>;
}

/** `ERROR_CODE: message` of a failed answer. */
function failureOf(r: ApiAnswer): string {
  return `${String(r.json.error_code ?? r.status)}: ${String(r.json.error ?? 'failed')}`;
}

/** The state and steps of one {@link watchSession}. */
class WatchSession {
  private readonly base: string;
  private readonly headers: Record<string, string>;
  private readonly now: () => Date;
  // names of codes and sources, read with the reviewer token and read again (at most once a second) when an id is new
  private readonly codes = new Map<number, string>();
  private readonly sources = new Map<number, string>();
  private namesAt = 0;
  private readonly names: WatchNames = { code: (id) => this.codes.get(id), source: (id) => this.sources.get(id) };
  // pending requests, asked about one at a time (the head of the queue is the one shown)
  private readonly queue: WatchRequest[] = [];
  private shown: string | undefined;
  // agent actions: the events of one correlation id make one line (they arrive together, one call at a time)
  private group: EventRecord[] = [];
  private groupTimer: NodeJS.Timeout | undefined;
  private printing = Promise.resolve();
  /** true once `e` without JSON and without an editor waits for the JSON line */
  private awaitingJson = false;
  private readonly abort = new AbortController();

  constructor(private readonly opts: WatchOptions) {
    this.base = opts.url.replace(/\/+$/, '');
    this.headers = { authorization: `Bearer ${opts.token}`, 'x-marginalia-client': WATCH_CLIENT };
    this.now = opts.now ?? (() => new Date());
  }

  private out(text: string): void {
    void this.opts.output.write(text);
  }

  private async api(method: 'GET' | 'POST', route: string, body?: unknown): Promise<ApiAnswer> {
    const res = await fetch(`${this.base}${route}`, {
      method,
      headers: { ...this.headers, ...(method === 'POST' ? { 'content-type': 'application/json' } : {}) },
      body: method === 'POST' ? JSON.stringify(body ?? {}) : undefined,
    });
    let json: Record<string, unknown> = {};
    try {
      json = (await res.json()) as Record<string, unknown>;
    } catch {
      // not JSON: the status says enough
    }
    return { status: res.status, json };
  }

  private async loadNames(): Promise<void> {
    this.namesAt = Date.now();
    try {
      const [c, s] = await Promise.all([this.api('POST', '/tools/list_codes', { arguments: {} }), this.api('POST', '/tools/list_sources', { arguments: {} })]);
      for (const x of (c.json.data as { codes?: { code_id: number; name: string }[] } | undefined)?.codes ?? []) this.codes.set(x.code_id, x.name);
      for (const x of (s.json.data as { sources?: { source_id: number; name: string }[] } | undefined)?.sources ?? []) this.sources.set(x.source_id, x.name);
    } catch {
      // names are a courtesy: ids stand in
    }
  }

  private needsNames(events: readonly EventRecord[]): boolean {
    return events.some(
      (e) =>
        (typeof e.payload.code_id === 'number' && !this.codes.has(e.payload.code_id)) ||
        (typeof e.payload.source_id === 'number' && !this.sources.has(e.payload.source_id)),
    );
  }

  private showNext(): void {
    const head = this.queue[0];
    if (!head || this.shown === head.request_id) return;
    this.shown = head.request_id;
    this.out(formatRequest(head));
  }

  private drop(id: string): void {
    const i = this.queue.findIndex((r) => r.request_id === id);
    if (i >= 0) this.queue.splice(i, 1);
    if (this.shown === id) this.shown = undefined;
  }

  private flushGroup(): void {
    if (this.groupTimer) clearTimeout(this.groupTimer);
    this.groupTimer = undefined;
    const events = this.group;
    this.group = [];
    if (events.length === 0) return;
    this.printing = this.printing.then(async () => {
      if (this.needsNames(events) && Date.now() - this.namesAt > 1000) await this.loadNames();
      this.out(`${formatActionLine(events, this.names)}\n`);
    });
  }

  private onEvent(e: EventRecord): void {
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
      if (!this.queue.some((r) => r.request_id === request.request_id)) this.queue.push(request);
      this.printing = this.printing.then(() => this.showNext());
      return;
    }
    if (e.event_type === 'approval.granted' || e.event_type === 'approval.denied' || e.event_type === 'approval.failed') {
      this.onDecided(e);
      return;
    }
    if (e.event_type === 'agents.paused' || e.event_type === 'agents.resumed') {
      this.printing = this.printing.then(() =>
        this.out(
          `${clock(e.timestamp)}  agents ${e.event_type === 'agents.paused' ? 'PAUSED' : 'RESUMED'} by ${String(p.by ?? actorOf(e))}${e.event_type === 'agents.resumed' ? ` (${String(p.ran ?? 0)} held calls ran, ${String(p.still_pending ?? 0)} still pending)` : ''}\n`,
        ),
      );
      return;
    }
    if (!isAgentEvent(e)) return;
    if (this.group.length > 0 && this.group[0]?.metadata.correlation_id !== e.metadata.correlation_id) this.flushGroup();
    this.group.push(e);
    this.groupTimer ??= setTimeout(() => this.flushGroup(), 40);
  }

  /** approval.granted, .denied or .failed: the request leaves the queue with one line saying how. */
  private onDecided(e: EventRecord): void {
    const p = e.payload;
    const id = String(p.request_id ?? e.aggregate_id);
    this.drop(id);
    const verdict =
      e.event_type === 'approval.granted'
        ? 'approved'
        : e.event_type === 'approval.denied'
          ? `rejected${p.reason ? ` (${String(p.reason)})` : ''}`
          : `failed (${String(p.error_code ?? '')})`;
    this.printing = this.printing.then(() => {
      this.out(`${clock(e.timestamp)}  ${String(p.action_type ?? '')} request ${id.slice(0, 8)} ${verdict}\n`);
      this.showNext();
    });
  }

  /** The event stream: every event from now on (SSE; the server's events_per_second applies). Errors: it cannot be opened. */
  private async openStream(): Promise<ReadableStream<Uint8Array>> {
    const stream = await fetch(`${this.base}/events/stream?patterns=*`, {
      headers: { ...this.headers, accept: 'text/event-stream' },
      signal: this.abort.signal,
    });
    if (!stream.ok || !stream.body) {
      let message = `${stream.status}`;
      try {
        const j = (await stream.json()) as { error_code?: string; error?: string };
        message = `${stream.status} ${j.error_code ?? ''}: ${j.error ?? ''}`;
      } catch {
        // no JSON body
      }
      throw new Error(`The event stream of ${this.base} could not be opened (${message})`);
    }
    return stream.body;
  }

  /** Reads the stream's events until it ends, then calls `finish`. */
  private async readStream(body: ReadableStream<Uint8Array>, finish: () => void): Promise<void> {
    const parser = createSseParser((m) => {
      if (m.event === 'overflow') return;
      try {
        this.onEvent(JSON.parse(m.data) as EventRecord);
      } catch {
        // not an event record
      }
    });
    const decoder = new TextDecoder();
    const reader = body.getReader();
    try {
      for (;;) {
        const { value, done: end } = await reader.read();
        if (end) break;
        parser.feed(decoder.decode(value, { stream: true }));
      }
      if (!this.abort.signal.aborted) this.out('The server closed the event stream.\n');
    } catch {
      if (!this.abort.signal.aborted) this.out('The event stream broke off.\n');
    }
    finish();
  }

  /** What was pending and whether agents are paused when the session starts. */
  private async greet(): Promise<void> {
    await this.loadNames();
    this.out(`Watching ${this.base} as the researcher (${clock(this.now())} UTC). h for help.\n`);
    const pending = await this.api('GET', '/approvals?status=pending');
    for (const a of (pending.json.data as { approvals?: Record<string, unknown>[] } | undefined)?.approvals ?? []) this.queue.push(requestOfRecord(a));
    const paused = await this.api('GET', '/agents/pause');
    if ((paused.json.data as { paused?: boolean } | undefined)?.paused) this.out('Agents are PAUSED: u resumes them.\n');
    if (this.queue.length > 0) this.out(`${this.queue.length} request(s) pending.\n`);
    this.showNext();
  }

  async run(): Promise<void> {
    const body = await this.openStream();
    await this.greet();
    let finish: () => void = () => undefined;
    const done = new Promise<void>((resolve) => (finish = resolve));
    const reading = this.readStream(body, () => finish());
    const rl = readline.createInterface({ input: this.opts.input, terminal: false });
    let lines = Promise.resolve(true);
    rl.on('line', (line) => {
      lines = lines.then(async (go) => {
        if (!go) return false;
        await this.printing;
        const more = await this.handle(line).catch((e: unknown) => {
          this.out(`! ${(e as Error).message}\n`);
          return true;
        });
        if (!more) finish();
        return more;
      });
    });
    rl.on('close', () => void lines.then(() => finish()));
    await done;
    rl.close();
    this.flushGroup();
    await this.printing;
    this.abort.abort();
    await reading.catch(() => undefined);
  }

  private editInEditor(args: unknown): string | undefined {
    if (!this.opts.editor) return undefined;
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'marginalia-watch-')), 'arguments.json');
    fs.writeFileSync(file, `${JSON.stringify(args ?? {}, null, 2)}\n`);
    try {
      const r = spawnSync(this.opts.editor, [file], { stdio: 'inherit', shell: true });
      if (r.status !== 0) return undefined;
      return fs.readFileSync(file, 'utf8');
    } finally {
      fs.rmSync(path.dirname(file), { recursive: true, force: true });
    }
  }

  private async approve(r: WatchRequest, edited?: unknown): Promise<void> {
    const res = await this.api('POST', `/approvals/${encodeURIComponent(r.request_id)}/approve`, edited === undefined ? {} : { arguments: edited });
    if (res.status >= 400) this.out(`! could not approve ${r.request_id.slice(0, 8)}: ${failureOf(res)}\n`);
    else this.drop(r.request_id);
  }

  private async approveEdited(r: WatchRequest, text: string): Promise<void> {
    let edited: unknown;
    try {
      edited = JSON.parse(text);
    } catch (e) {
      this.out(`! not JSON (${(e as Error).message}); the request still waits\n`);
      this.shown = undefined;
      this.showNext();
      return;
    }
    await this.approve(r, edited);
    this.showNext();
  }

  /** One input line; false ends the session. */
  private async handle(line: string): Promise<boolean> {
    const head = this.queue[0];
    if (this.awaitingJson) {
      this.awaitingJson = false;
      if (head) await this.approveEdited(head, line);
      return true;
    }
    const cmd = parseWatchCommand(line);
    if (cmd.kind === 'quit') return false;
    if (await this.handleGeneral(cmd)) return true;
    if (!head) {
      this.out('No request is pending.\n');
      return true;
    }
    if (cmd.kind === 'approve') await this.approve(head);
    else if (cmd.kind === 'reject') {
      const res = await this.api('POST', `/approvals/${encodeURIComponent(head.request_id)}/reject`, cmd.reason ? { reason: cmd.reason } : {});
      if (res.status >= 400) this.out(`! could not reject ${head.request_id.slice(0, 8)}: ${failureOf(res)}\n`);
      else this.drop(head.request_id);
    } else if (cmd.kind === 'skip') {
      this.queue.push(this.queue.shift() as WatchRequest);
      this.shown = undefined;
    } else if (cmd.kind === 'edit') {
      const text = cmd.json ?? this.editInEditor(head.arguments);
      if (text === undefined) {
        this.out(`arguments now: ${JSON.stringify(head.arguments ?? {})}\narguments JSON> `);
        this.awaitingJson = true;
        return true;
      }
      await this.approveEdited(head, text);
    }
    this.showNext();
    return true;
  }

  /** The commands that need no pending request (empty, help, pause, resume, list, unknown); false for the others. */
  private async handleGeneral(cmd: ReturnType<typeof parseWatchCommand>): Promise<boolean> {
    switch (cmd.kind) {
      case 'empty':
        return true;
      case 'help':
        this.out(HELP);
        return true;
      case 'pause': {
        const r = await this.api('POST', '/agents/pause');
        this.out(
          r.status >= 400 ? `! could not pause: ${failureOf(r)}\n` : (r.json.data as { changed?: boolean }).changed ? '' : 'Agents were paused already.\n',
        );
        return true;
      }
      case 'resume': {
        const r = await this.api('POST', '/agents/resume');
        if (r.status >= 400) this.out(`! could not resume: ${failureOf(r)}\n`);
        else if (!(r.json.data as { changed?: boolean }).changed && ((r.json.data as { requests?: unknown[] }).requests ?? []).length === 0)
          this.out('Agents were not paused.\n');
        return true;
      }
      case 'list':
        this.out(
          this.queue.length === 0
            ? 'No request is pending.\n'
            : `${this.queue.map((r, i) => `  ${i + 1}. ${r.client_name}: ${cut(r.description, 100)} [${r.request_id.slice(0, 8)}]`).join('\n')}\n`,
        );
        return true;
      case 'unknown':
        this.out(`? "${cut(cmd.text, 40)}": h for help\n`);
        return true;
      default:
        return false;
    }
  }
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
