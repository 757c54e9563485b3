import * as http from 'node:http';
import { newUuid } from '../../core/ids';
import { fail, ok, type Envelope } from '../../core/envelope';
import { ERROR_CODES, ToolError, type ErrorCode } from '../../core/errors';
import type { EventRecord } from '../../domain/events';
import type { ClientType } from '../../agent/sessions';
import type { CliBackend, CliEventSink, CliSubscription } from './cliAdapter';
import { createSseParser } from '../../core/sse';

/** Longest answer read from the owner, bytes. */
const MAX_ANSWER_BYTES = 256 * 1024 * 1024;
/** How long a subscribe waits for the stream's first line (which names the patterns in force), ms. */
const FIRST_LINE_MS = 2000;

// the one parser of server-sent events (re-exported for its tests)

/** Options of {@link ForwardCliBackend.connect}. */
export interface ForwardOptions {
  /** the owner's base URL from its discovery file, e.g. http://127.0.0.1:8765 */
  url: string;
  /** the token presented (agent or reviewer) */
  token: string;
  clientName: string;
  clientType: ClientType;
}

interface Answer {
  status: number;
  body: unknown;
}

/** True for a `{success, ...}` envelope with a known error code when failing. */
function isEnvelope(v: unknown): v is Envelope {
  if (v === null || typeof v !== 'object') return false;
  const e = v as { success?: unknown; error_code?: unknown };
  return e.success === true || (e.success === false && typeof e.error_code === 'string');
}

/**
 * The backend of a CLI process whose project is owned by another process (`marginalia serve`, or VS Code
 * with its HTTP server): every command is forwarded to the owner's HTTP server with the presented token,
 * so the owner's agent context (sessions, trust, rate limits, approvals, audit) decides, and the
 * researcher sees the calls live. Calls: `POST /tools/{name}`; approvals: `POST /approvals/{id}/approve`
 * and `/reject`, `GET /approvals`; events: `GET /events/stream` (server-sent events); the session:
 * `POST /session/create|heartbeat|destroy` (an owner without them is used through its implicit session
 * per token and client name). When the owner cannot be reached a command answers NO_PROJECT naming it.
 */
export class ForwardCliBackend implements CliBackend {
  readonly mode = 'forward' as const;
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
  private session: string | undefined;
  private readonly streams = new Map<string, { req: http.ClientRequest; res?: http.IncomingMessage; end: () => void }>();
  private beat: NodeJS.Timeout | undefined;

  private constructor(private readonly opts: ForwardOptions) {}

  /**
   * Connects to the owner and opens a session there. Errors (thrown ToolError): UNAUTHORIZED (the owner
   * refused the token), SESSION_LIMIT, NO_PROJECT (the owner does not answer).
   */
  static async connect(opts: ForwardOptions): Promise<ForwardCliBackend> {
    const b = new ForwardCliBackend(opts);
    const created = await b.request('POST', '/session/create', { client_type: opts.clientType, client_name: opts.clientName });
    if (created.status === 404) {
      // an owner without the REST session routes: its implicit session per token and client name; check the token
      const probe = await b.request('GET', '/tools');
      if (probe.status === 401) throw new ToolError('UNAUTHORIZED', 'The owner refused the token (set MARGINALIA_TOKEN or MARGINALIA_REVIEWER_TOKEN)');
      return b;
    }
    const env = b.envelopeOf(created);
    if (!env.success) throw new ToolError(env.error_code, env.error, env.details);
    const data = env.data as { session_id: string; heartbeat_interval_seconds?: number };
    b.session = data.session_id;
    b.beat = setInterval(
      () => void b.request('POST', '/session/heartbeat', { session_id: b.session }).catch(() => undefined),
      (data.heartbeat_interval_seconds ?? 30) * 1000,
    );
    b.beat.unref();
    return b;
  }

  /** The owner's session id (empty when the owner has no session routes and an implicit session is used). */
  get sessionId(): string {
    return this.session ?? '';
  }

  private headers(body?: string): http.OutgoingHttpHeaders {
    return {
      authorization: `Bearer ${this.opts.token}`,
      'x-marginalia-client': this.opts.clientName,
      'x-marginalia-client-type': this.opts.clientType,
      ...(this.session ? { 'x-marginalia-session': this.session } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }),
    };
  }

  private unreachable(e: Error): ToolError {
    return new ToolError('NO_PROJECT', `The process that owns the project (${this.opts.url}) does not answer: ${e.message}`, { owner_url: this.opts.url });
  }

  /** One request to the owner; the body is parsed as JSON when it is. Errors: NO_PROJECT (unreachable). */
  private request(method: string, urlPath: string, body?: unknown): Promise<Answer> {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    return new Promise((resolve, reject) => {
      const req = http.request(new URL(urlPath, this.opts.url), { method, agent: this.agent, headers: this.headers(payload) }, (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > MAX_ANSWER_BYTES) {
            req.destroy(new Error(`the answer is larger than ${MAX_ANSWER_BYTES} bytes`));
            return;
          }
          chunks.push(c);
        });
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown = text;
          try {
            parsed = JSON.parse(text);
          } catch {
            // not JSON: keep the text
          }
          resolve({ status: res.statusCode ?? 0, body: parsed });
        });
        res.on('error', (e) => reject(this.unreachable(e)));
      });
      req.on('error', (e) => reject(this.unreachable(e)));
      if (payload !== undefined) req.write(payload);
      req.end();
    });
  }

  /** The envelope of an answer (a non-envelope answer becomes TOOL_EXECUTION_ERROR naming the status). */
  private envelopeOf(a: Answer): Envelope {
    if (isEnvelope(a.body)) return a.body;
    return fail('TOOL_EXECUTION_ERROR', `The owner answered HTTP ${a.status} without an envelope`);
  }

  private async send(method: string, urlPath: string, body?: unknown): Promise<Envelope> {
    try {
      return this.envelopeOf(await this.request(method, urlPath, body));
    } catch (e) {
      if (e instanceof ToolError) return fail(e.code, e.message, e.details);
      throw e;
    }
  }

  /** `POST /tools/{tool}` with `{"arguments": args}`. */
  call(tool: string, args: Record<string, unknown>): Promise<Envelope> {
    return this.send('POST', `/tools/${encodeURIComponent(tool)}`, { arguments: args });
  }

  /** `POST /approvals/{id}/approve` (with edited `arguments` when given). */
  approve(requestId: string, editedArguments?: Record<string, unknown>): Promise<Envelope> {
    return this.send('POST', `/approvals/${encodeURIComponent(requestId)}/approve`, editedArguments === undefined ? {} : { arguments: editedArguments });
  }

  /** `POST /approvals/{id}/reject` (with `reason` when given). */
  reject(requestId: string, reason?: string): Promise<Envelope> {
    return this.send('POST', `/approvals/${encodeURIComponent(requestId)}/reject`, reason === undefined ? {} : { reason });
  }

  /** `GET /tools`, as `{count, tools}`. */
  async listTools(): Promise<Envelope> {
    try {
      const a = await this.request('GET', '/tools');
      if (a.status === 200 && a.body && typeof a.body === 'object' && Array.isArray((a.body as { tools?: unknown }).tools)) return ok(a.body);
      return this.envelopeOf(a);
    } catch (e) {
      if (e instanceof ToolError) return fail(e.code, e.message, e.details);
      throw e;
    }
  }

  /** `GET /approvals?status=`. */
  listApprovals(status?: string): Promise<Envelope> {
    return this.send('GET', `/approvals${status ? `?status=${encodeURIComponent(status)}` : ''}`);
  }

  /** `POST /session/heartbeat` (an implicit session answers what it can). */
  async heartbeat(): Promise<Envelope> {
    if (!this.session) return ok({ session_id: null, status: 'ACTIVE', implicit: true });
    return this.send('POST', '/session/heartbeat', { session_id: this.session });
  }

  /**
   * Opens `GET /events/stream?patterns=...&since=N` on the owner. Resolves once the stream is open (and
   * its first line named the patterns in force, or after {@link FIRST_LINE_MS}). Backpressure: when the
   * sink is full the response is paused (TCP pushes back on the owner, whose stream replays from its event
   * store when it resumes). Errors (thrown ToolError): the owner's envelope (INVALID_ARGUMENTS,
   * UNAUTHORIZED, SESSION_LIMIT, ...), NO_PROJECT.
   */
  subscribe(patterns: string[], since: number | undefined, sinkFor: (subscriptionId: string) => CliEventSink): Promise<CliSubscription> {
    const id = newUuid();
    const sink = sinkFor(id);
    const q = new URLSearchParams();
    if (patterns.length > 0) q.set('patterns', patterns.join(','));
    if (since !== undefined) q.set('since', String(since));
    const query = q.toString();
    return new Promise((resolve, reject) => {
      let settled = false;
      let ended = false;
      let inForce: string[] | undefined;
      const settle = () => {
        if (settled) return;
        settled = true;
        resolve({ subscription_id: id, patterns: inForce ?? patterns, since: since ?? null });
      };
      const req = http.request(new URL(`/events/stream${query ? `?${query}` : ''}`, this.opts.url), {
        method: 'GET',
        headers: { ...this.headers(), accept: 'text/event-stream' },
      });
      const entry: { req: http.ClientRequest; res?: http.IncomingMessage; end: () => void } = {
        req,
        end: () => {
          ended = true;
          req.destroy();
        },
      };
      req.on('response', (res) => {
        if (res.statusCode !== 200) {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            let body: unknown;
            try {
              body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
            } catch {
              body = undefined;
            }
            const env =
              isEnvelope(body) && !body.success
                ? body
                : fail(
                    res.statusCode === 404 ? 'TOOL_NOT_FOUND' : 'TOOL_EXECUTION_ERROR',
                    `The owner has no event stream (HTTP ${res.statusCode ?? 0} on GET /events/stream)`,
                  );
            if (!env.success)
              reject(
                new ToolError(
                  (ERROR_CODES as readonly string[]).includes(env.error_code) ? env.error_code : ('TOOL_EXECUTION_ERROR' as ErrorCode),
                  env.error,
                  env.details,
                ),
              );
          });
          return;
        }
        entry.res = res;
        this.streams.set(id, entry);
        res.setEncoding('utf8');
        const parser = createSseParser(
          (m) => {
            if (m.event === 'overflow') {
              try {
                const n = JSON.parse(m.data) as { last_delivered_seq: number; dropped: number };
                sink.overflow({ last_delivered_seq: n.last_delivered_seq, dropped: n.dropped });
              } catch {
                // not ours to fix
              }
              return;
            }
            let e: EventRecord;
            try {
              e = JSON.parse(m.data) as EventRecord;
            } catch {
              return;
            }
            if (!sink.event(e)) res.pause();
          },
          (comment) => {
            const p = /(?:^|;\s*)patterns ([^;\s]*)/.exec(comment);
            if (p && !settled) {
              inForce = (p[1] ?? '').split(',').filter(Boolean);
              settle();
            }
          },
        );
        res.on('data', (chunk: string) => parser.feed(chunk));
        res.on('end', () => {
          this.streams.delete(id);
          if (!ended) sink.ended('the owner closed the event stream');
        });
        res.on('error', () => undefined);
        const timer = setTimeout(settle, FIRST_LINE_MS);
        timer.unref();
      });
      req.on('error', (e) => {
        this.streams.delete(id);
        if (!settled) {
          settled = true;
          reject(this.unreachable(e));
        } else if (!ended) sink.ended(`the event stream failed: ${e.message}`);
      });
      req.end();
    });
  }

  /** Nothing to do: the owner's stream delivers from the moment it opens. */
  startDelivery(): void {}

  /** Closes one event stream; false when unknown. */
  unsubscribe(subscriptionId: string): boolean {
    const s = this.streams.get(subscriptionId);
    if (!s) return false;
    this.streams.delete(subscriptionId);
    s.end();
    return true;
  }

  /** Resumes paused event streams. */
  resumeAll(): void {
    for (const s of this.streams.values()) if (s.res?.isPaused()) s.res.resume();
  }

  /** True while an event stream is paused by a full event output. */
  hasPaused(): boolean {
    return [...this.streams.values()].some((s) => s.res?.isPaused() === true);
  }

  /** Closes the event streams and ends the owner's session (`POST /session/destroy`). */
  async close(): Promise<void> {
    if (this.beat) clearInterval(this.beat);
    for (const id of [...this.streams.keys()]) this.unsubscribe(id);
    if (this.session) {
      await this.request('POST', '/session/destroy', { session_id: this.session }).catch(() => undefined);
      this.session = undefined;
    }
    this.agent.destroy();
  }
}
