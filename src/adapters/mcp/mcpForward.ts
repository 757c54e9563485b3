import type { Readable, Writable } from 'node:stream';
import { parseStrictJsonText, readStrictLines } from '../../core/strictJson';
import type { Logger } from '../../core/log';
import { silentLogger } from '../../core/log';
import type { McpStdioConnection } from './mcpStdio';
import { MCP_MAX_BODY_BYTES } from './mcpHttp';
import { resourcesTouchedBy } from './resourceEvents';
import { createSseParser } from '../../core/sse';

/** Options of {@link forwardMcpStdio}. */
export interface McpForwardOptions {
  /** the owner's MCP endpoint, e.g. `http://127.0.0.1:8765/mcp` (from its discovery file) */
  url: string;
  /** `Bearer <token>` from the owner's discovery file */
  authorization: string;
  /** the client name sent as `X-Marginalia-Client` (default: the client's `clientInfo.name`; without one the owner names the session) */
  clientName?: string;
  /** default: process.stdin / process.stdout */
  input?: Readable;
  output?: Writable;
  logger?: Logger;
  /** how long in-flight requests may finish after stdin ends (default 30 s); `subscriptions/listen` streams end at once */
  drainMs?: number;
  /** how long to wait before reopening the owner's event stream after it ended or failed (default 1000 ms) */
  reconnectMs?: number;
}

/** `_meta` key of the 2026-07-28 per-request envelope carrying the protocol version. */
const PROTOCOL_VERSION_META_KEY = 'io.modelcontextprotocol/protocolVersion';
/** `_meta` key of the 2026-07-28 per-request envelope carrying the client's name and version. */
const CLIENT_INFO_META_KEY = 'io.modelcontextprotocol/clientInfo';
/** Methods whose `params.<field>` the `Mcp-Name` header mirrors (MCP 2026-07-28 Streamable HTTP, SEP-2243). */
const MCP_NAME_SOURCE: Record<string, string> = {
  'tools/call': 'name',
  'prompts/get': 'name',
  'resources/read': 'uri',
  'tasks/get': 'taskId',
  'tasks/update': 'taskId',
  'tasks/cancel': 'taskId',
};

/**
 * A header value as the 2026-07-28 Streamable HTTP binding wants it: printable ASCII as is, anything else
 * (empty, surrounding blanks, control or non-ASCII characters) as `=?base64?<UTF-8 base64>?=`.
 */
export function encodeMcpHeaderValue(value: string): string {
  let plain = value.length > 0 && value === value.trim() && !(value.startsWith('=?base64?') && value.endsWith('?='));
  for (let i = 0; plain && i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (!(c === 9 || (c >= 32 && c <= 126))) plain = false;
  }
  return plain ? value : `=?base64?${Buffer.from(value, 'utf8').toString('base64')}?=`;
}

type Json = Record<string, unknown>;

function isObject(v: unknown): v is Json {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * Forwards an MCP stdio connection to the MCP endpoint of the process that owns the project (docs/architecture.md
 * "The data": a second process never opens the project; it forwards to the owner, so every call passes
 * the owner's trust layer and the researcher sees it live). Each JSON-RPC message read from `input` (one
 * per line, MCP stdio framing) is POSTed to `url` with the owner's bearer token and the Streamable HTTP
 * headers its era needs: 2026-07-28 messages (with the `_meta` envelope) get `MCP-Protocol-Version`,
 * `Mcp-Method` and `Mcp-Name` from their body; 2025 messages get the version the `initialize` answer
 * negotiated (and `Mcp-Session-Id` if the owner gave one). Answers (JSON, or the messages of an SSE
 * stream, including `subscriptions/listen` notifications) are written to `output`, one per line. An HTTP
 * failure of a request (owner gone, 401, ...) is answered with a JSON-RPC error (-32603) naming it.
 * `notifications/cancelled` also aborts the forwarded request it names.
 *
 * Change notifications for 2025-11-25 clients (issue 14 item 10): the owner serves that era over stateless
 * HTTP, without a stream to notify on, so the forwarder stands in. It answers `resources/subscribe` and
 * `resources/unsubscribe` itself (remembering the URIs), tells the client in the `initialize` answer that
 * resources support `subscribe` and `listChanged`, and follows the owner's event stream (`GET /events/stream`
 * with the same token, resumed after the last sequence number it saw): each event becomes
 * `notifications/resources/updated` for the subscribed URIs it touches and `notifications/resources/list_changed`
 * when it adds or removes resources ({@link resourcesTouchedBy}, as a project-owning stdio server does);
 * an overflow notice of the stream becomes `list_changed`. 2026-07-28 clients use `subscriptions/listen`,
 * forwarded as is.
 */
export function forwardMcpStdio(opts: McpForwardOptions): McpStdioConnection {
  return new McpForwarder(opts).start();
}

/** A request forwarded to the owner and not yet answered. */
interface InFlight {
  abort: AbortController;
  /** a `subscriptions/listen` stream (ends at once when stdin ends) */
  listen: boolean;
  done: Promise<void>;
}

/** The state and steps of one forwarded stdio connection ({@link forwardMcpStdio}). */
class McpForwarder {
  private readonly logger: Logger;
  private readonly input: Readable;
  private readonly output: Writable;
  private readonly inFlight = new Map<string, InFlight>();
  private negotiated: string | undefined;
  private sessionId: string | undefined;
  private clientName: string | undefined;
  private resolveClosed!: () => void;
  private readonly closed = new Promise<void>((r) => (this.resolveClosed = r));
  private ended = false;
  /** 2025-era clients: the URIs subscribed with resources/subscribe, and the owner's event stream followed for them */
  private readonly subscribed = new Set<string>();
  private watcher: AbortController | undefined;
  /** settles once the owner's event stream first answered (or failed): a subscription is confirmed only then */
  private streamReady: Promise<void> = Promise.resolve();

  constructor(private readonly opts: McpForwardOptions) {
    this.logger = opts.logger ?? silentLogger;
    this.input = opts.input ?? process.stdin;
    this.output = opts.output ?? process.stdout;
    this.clientName = opts.clientName;
  }

  /** Starts reading stdin; the connection's handle. */
  start(): McpStdioConnection {
    // lines split and decoded from bytes, strictly (MCP stdio framing: one message per \n-terminated line)
    const reading = (async () => {
      for await (const item of readStrictLines(this.input as AsyncIterable<Buffer | string>, MCP_MAX_BODY_BYTES)) {
        if (this.ended) break;
        if ('tooLong' in item)
          this.parseError(`a line of ${item.tooLong} bytes is longer than the ${MCP_MAX_BODY_BYTES} bytes accepted`, { error_code: 'INVALID_ARGUMENTS' });
        else if ('invalid' in item) this.parseError(item.invalid.message, { error_code: item.invalid.code, ...(item.invalid.details as object | undefined) });
        else this.onLine(item.line);
      }
    })();
    reading.then(
      () => void this.finish(),
      (e: unknown) => {
        this.logger.warn(`MCP stdio input failed: ${(e as Error).message}`);
        void this.finish();
      },
    );
    return {
      closed: this.closed,
      close: async () => {
        for (const f of this.inFlight.values()) f.abort.abort();
        this.watcher?.abort();
        this.ended = true;
        this.resolveClosed();
      },
    };
  }

  private write(msg: unknown): void {
    if (!this.output.writable) return;
    this.output.write(`${JSON.stringify(msg)}\n`);
  }

  private failRequest(id: unknown, message: string, data?: unknown): void {
    if (id === undefined || id === null) return;
    this.write({ jsonrpc: '2.0', id, error: { code: -32603, message, ...(data !== undefined ? { data } : {}) } });
  }

  /** A JSON-RPC parse error (-32700) for a line that is not strict JSON; `data.error_code` is INVALID_JSON. */
  private parseError(message: string, data?: unknown): void {
    this.write({ jsonrpc: '2.0', id: null, error: { code: -32700, message: `Parse error: ${message}`, ...(data !== undefined ? { data } : {}) } });
  }

  /**
   * Watches answers for the 2025 handshake's negotiated version; the `initialize` answer then offers resource
   * subscriptions and list changes (served here, see {@link watchEvents}) and the owner's events are followed.
   */
  private observe(msg: unknown, initializeIds: Set<unknown>): void {
    for (const m of Array.isArray(msg) ? msg : [msg]) {
      if (isObject(m) && initializeIds.has(m.id) && isObject(m.result) && typeof m.result.protocolVersion === 'string') {
        this.negotiated = m.result.protocolVersion;
        const caps = m.result.capabilities;
        if (isObject(caps) && isObject(caps.resources)) {
          caps.resources = { ...caps.resources, subscribe: true, listChanged: true };
          if (!this.watcher) void this.watchEvents();
        }
      }
    }
  }

  /** The `X-Marginalia-Client` header value: the client's name in printable ASCII (the owner names the implicit session after it). */
  private clientHeader(): string | undefined {
    return this.clientName ? this.clientName.replace(/[^\x20-\x7e]/g, '?').trim() || 'mcp-stdio' : undefined;
  }

  /** Follows the owner's event stream while the connection lasts, turning events into resource notifications. */
  private async watchEvents(): Promise<void> {
    const abort = new AbortController();
    this.watcher = abort;
    const since: { seq?: number } = {};
    let markReady!: () => void;
    this.streamReady = new Promise<void>((r) => (markReady = r));
    while (!this.ended && !abort.signal.aborted) {
      const url = new URL(`/events/stream?patterns=*${since.seq !== undefined ? `&since=${since.seq}` : ''}`, this.opts.url);
      try {
        const headers: Record<string, string> = { authorization: this.opts.authorization, accept: 'text/event-stream' };
        const client = this.clientHeader();
        if (client) headers['x-marginalia-client'] = client;
        const res = await fetch(url, { headers, signal: abort.signal }).finally(markReady);
        if (res.status !== 200 || !res.body) {
          await res.body?.cancel();
          this.logger.warn(`the owner's event stream (${url.pathname}) answered HTTP ${res.status}: resource change notifications are off`);
          return;
        }
        await readSse(res.body, (data) => this.onOwnerEvent(data, since));
      } catch (e) {
        if (abort.signal.aborted) return;
        this.logger.warn(`the owner's event stream failed: ${(e as Error).message}`);
      }
      await new Promise((r) => setTimeout(r, this.opts.reconnectMs ?? 1000).unref());
    }
  }

  /** One event of the owner's stream: resources/updated for the subscribed URIs it touches, list_changed when it adds or removes. */
  private onOwnerEvent(data: string, since: { seq?: number }): void {
    let e: unknown;
    try {
      e = JSON.parse(data);
    } catch {
      return;
    }
    if (!isObject(e)) return;
    if (typeof e.event_type !== 'string') {
      // an overflow notice: events were dropped, anything may have changed
      this.write({ jsonrpc: '2.0', method: 'notifications/resources/list_changed' });
      return;
    }
    const seq = isObject(e.metadata) ? e.metadata.sequence_number : undefined;
    if (typeof seq === 'number') since.seq = seq;
    const changes = resourcesTouchedBy([e as unknown as Parameters<typeof resourcesTouchedBy>[0][number]]);
    for (const uri of changes.updated) if (this.subscribed.has(uri)) this.write({ jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri } });
    if (changes.listChanged) this.write({ jsonrpc: '2.0', method: 'notifications/resources/list_changed' });
  }

  /** 2025-era resources/subscribe and resources/unsubscribe, answered here (the owner's stateless HTTP cannot notify). */
  private subscription(m: unknown): boolean {
    if (!isObject(m) || (m.method !== 'resources/subscribe' && m.method !== 'resources/unsubscribe') || m.id === undefined) return false;
    const uri = isObject(m.params) ? m.params.uri : undefined;
    if (typeof uri !== 'string' || uri.length === 0) {
      this.write({ jsonrpc: '2.0', id: m.id, error: { code: -32602, message: `${m.method} needs params.uri (a qda:// resource URI)` } });
      return true;
    }
    if (m.method === 'resources/subscribe') this.subscribed.add(uri);
    else this.subscribed.delete(uri);
    // answered once the event stream is open: every change after the answer is notified
    void this.streamReady.then(() => this.write({ jsonrpc: '2.0', id: m.id, result: {} }));
    return true;
  }

  /** The headers of a forwarded message: the era's Streamable HTTP headers (2026-07-28 from its envelope, 2025 from the handshake). */
  private headersFor(msg: unknown, list: unknown[]): Record<string, string> {
    const first = list[0];
    for (const m of list) {
      if (
        isObject(m) &&
        m.method === 'initialize' &&
        !this.opts.clientName &&
        isObject(m.params) &&
        isObject(m.params.clientInfo) &&
        typeof m.params.clientInfo.name === 'string'
      )
        this.clientName = m.params.clientInfo.name.slice(0, 100);
    }
    const params = isObject(first) && isObject(first.params) ? first.params : undefined;
    const meta = params && isObject(params._meta) ? params._meta : undefined;
    const envelopeInfo = meta?.[CLIENT_INFO_META_KEY];
    if (!this.opts.clientName && isObject(envelopeInfo) && typeof envelopeInfo.name === 'string') this.clientName = envelopeInfo.name.slice(0, 100);
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: this.opts.authorization,
    };
    const client = this.clientHeader();
    if (client) headers['x-marginalia-client'] = client;
    const envelopeVersion = meta && typeof meta[PROTOCOL_VERSION_META_KEY] === 'string' ? (meta[PROTOCOL_VERSION_META_KEY] as string) : undefined;
    if (!Array.isArray(msg) && isObject(first) && envelopeVersion !== undefined) {
      headers['mcp-protocol-version'] = envelopeVersion;
      if (typeof first.method === 'string' && first.id !== undefined) {
        headers['mcp-method'] = first.method;
        const field = MCP_NAME_SOURCE[first.method];
        const value = field && params ? params[field] : undefined;
        if (typeof value === 'string') headers['mcp-name'] = encodeMcpHeaderValue(value);
      }
    } else {
      if (this.negotiated) headers['mcp-protocol-version'] = this.negotiated;
      if (this.sessionId) headers['mcp-session-id'] = this.sessionId;
    }
    return headers;
  }

  /** POSTs one message (or batch) to the owner and writes its answers; an HTTP failure answers each request with -32603. */
  private async forward(msg: unknown): Promise<void> {
    const list = Array.isArray(msg) ? msg : [msg];
    const first = list[0];
    const requestIds = list.filter((m) => isObject(m) && typeof m.method === 'string' && m.id !== undefined).map((m) => (m as Json).id);
    const initializeIds = new Set(list.filter((m) => isObject(m) && m.method === 'initialize').map((m) => (m as Json).id));
    const headers = this.headersFor(msg, list);
    const abort = new AbortController();
    const key = requestIds.length === 1 ? JSON.stringify(requestIds[0]) : undefined;
    let settle!: () => void;
    const done = new Promise<void>((r) => (settle = r));
    if (key !== undefined) this.inFlight.set(key, { abort, listen: isObject(first) && first.method === 'subscriptions/listen', done });
    try {
      const res = await fetch(this.opts.url, { method: 'POST', headers, body: JSON.stringify(msg), signal: abort.signal });
      const sid = res.headers.get('mcp-session-id');
      if (sid && initializeIds.size > 0) this.sessionId = sid;
      await this.answer(res, requestIds, initializeIds);
    } catch (e) {
      if (abort.signal.aborted) return;
      this.logger.warn(`MCP forward to ${this.opts.url} failed: ${(e as Error).message}`);
      for (const id of requestIds)
        this.failRequest(id, `The Marginalia server that owns the project (${this.opts.url}) cannot be reached: ${(e as Error).message}. Is it still running?`);
    } finally {
      if (key !== undefined && this.inFlight.get(key)?.abort === abort) this.inFlight.delete(key);
      settle();
    }
  }

  /** Writes the owner's answer: JSON-RPC as JSON or an SSE stream; anything else fails each request with the HTTP status. */
  private async answer(res: Response, requestIds: unknown[], initializeIds: Set<unknown>): Promise<void> {
    const type = res.headers.get('content-type') ?? '';
    if (res.status === 202 || res.status === 204) {
      await res.body?.cancel();
      return;
    }
    if (type.includes('text/event-stream') && res.body) {
      await readSse(res.body, (data) => {
        let parsed: unknown;
        try {
          parsed = JSON.parse(data);
        } catch {
          return;
        }
        this.observe(parsed, initializeIds);
        this.write(parsed);
      });
      return;
    }
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    const isRpc = (v: unknown) => isObject(v) && v.jsonrpc === '2.0';
    if (parsed !== undefined && (isRpc(parsed) || (Array.isArray(parsed) && parsed.every(isRpc)))) {
      this.observe(parsed, initializeIds);
      this.write(parsed);
      return;
    }
    const why = isObject(parsed) && typeof parsed.error_code === 'string' ? `${parsed.error_code}: ${String(parsed.error)}` : text.slice(0, 300);
    for (const id of requestIds)
      this.failRequest(id, `The Marginalia server that owns the project (${this.opts.url}) answered HTTP ${res.status}: ${why}`, { http_status: res.status });
  }

  private onLine(line: string): void {
    const text = line.trim();
    if (!text) return;
    let msg: unknown;
    try {
      // strict: no lone surrogate escape, no duplicated key (the bytes were checked as UTF-8 by readLines)
      msg = parseStrictJsonText(text, 'The line');
    } catch (e) {
      const err = e as { message: string; code?: string; details?: object };
      this.parseError(err.message, { error_code: err.code ?? 'INVALID_JSON', ...err.details });
      return;
    }
    if (isObject(msg) && msg.method === 'notifications/cancelled' && isObject(msg.params)) {
      const target = this.inFlight.get(JSON.stringify(msg.params.requestId));
      if (target) target.abort.abort();
    }
    // 2025 era (no per-request envelope): subscriptions are this process's to serve
    if (
      this.watcher &&
      isObject(msg) &&
      !(isObject(msg.params) && isObject(msg.params._meta) && PROTOCOL_VERSION_META_KEY in msg.params._meta) &&
      this.subscription(msg)
    )
      return;
    void this.forward(msg);
  }

  /** stdin ended: listen streams end at once, other requests may finish for `drainMs`. */
  private async finish(): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    this.watcher?.abort();
    for (const f of this.inFlight.values()) if (f.listen) f.abort.abort();
    const pending = [...this.inFlight.values()].map((f) => f.done);
    const timer = new Promise<void>((r) => setTimeout(r, this.opts.drainMs ?? 30_000).unref());
    await Promise.race([Promise.all(pending), timer]);
    for (const f of this.inFlight.values()) f.abort.abort();
    this.resolveClosed();
  }
}

/**
 * Reads a `text/event-stream` body and calls `onData` with each event's data (multi-line data joined by \n; the one
 * parser, src/core/sse.ts); an event the stream ends without a blank line after is still delivered.
 */
async function readSse(body: ReadableStream<Uint8Array>, onData: (data: string) => void): Promise<void> {
  const decoder = new TextDecoder();
  const parser = createSseParser((m) => onData(m.data));
  const reader = body.getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      parser.feed(decoder.decode(value, { stream: true }));
    }
    // the stream ended: what is left is a last line and a last event
    parser.feed(`${decoder.decode()}\n\n`);
  } finally {
    reader.releaseLock();
  }
}
