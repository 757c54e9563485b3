import type { Readable, Writable } from 'node:stream';
import { parseStrictJsonText, readStrictLines } from '../../core/strictJson';
import type { Logger } from '../../core/log';
import { silentLogger } from '../../core/log';
import type { McpStdioConnection } from './mcpStdio';
import { MCP_MAX_BODY_BYTES } from './mcpHttp';
import { resourcesTouchedBy } from './resourceEvents';

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
  const logger = opts.logger ?? silentLogger;
  const input = opts.input ?? process.stdin;
  const output = opts.output ?? process.stdout;
  const inFlight = new Map<string, { abort: AbortController; listen: boolean; done: Promise<void> }>();
  let negotiated: string | undefined;
  let sessionId: string | undefined;
  let clientName = opts.clientName;
  let resolveClosed!: () => void;
  const closed = new Promise<void>((r) => (resolveClosed = r));
  let ended = false;
  /** 2025-era clients: the URIs subscribed with resources/subscribe, and the owner's event stream followed for them */
  const subscribed = new Set<string>();
  let watcher: AbortController | undefined;
  /** settles once the owner's event stream first answered (or failed): a subscription is confirmed only then */
  let streamReady: Promise<void> = Promise.resolve();

  const write = (msg: unknown) => {
    if (!output.writable) return;
    output.write(`${JSON.stringify(msg)}\n`);
  };
  const failRequest = (id: unknown, message: string, data?: unknown) => {
    if (id === undefined || id === null) return;
    write({ jsonrpc: '2.0', id, error: { code: -32603, message, ...(data !== undefined ? { data } : {}) } });
  };
  /**
   * Watches answers for the 2025 handshake's negotiated version; the `initialize` answer then offers resource
   * subscriptions and list changes (served here, see {@link watchEvents}) and the owner's events are followed.
   */
  const observe = (msg: unknown, initializeIds: Set<unknown>) => {
    for (const m of Array.isArray(msg) ? msg : [msg]) {
      if (isObject(m) && initializeIds.has(m.id) && isObject(m.result) && typeof m.result.protocolVersion === 'string') {
        negotiated = m.result.protocolVersion;
        const caps = m.result.capabilities;
        if (isObject(caps) && isObject(caps.resources)) {
          caps.resources = { ...caps.resources, subscribe: true, listChanged: true };
          if (!watcher) void watchEvents();
        }
      }
    }
  };

  /** Follows the owner's event stream while the connection lasts, turning events into resource notifications. */
  const watchEvents = async (): Promise<void> => {
    const abort = new AbortController();
    watcher = abort;
    let since: number | undefined;
    let markReady!: () => void;
    streamReady = new Promise<void>((r) => (markReady = r));
    while (!ended && !abort.signal.aborted) {
      const url = new URL(`/events/stream?patterns=*${since !== undefined ? `&since=${since}` : ''}`, opts.url);
      try {
        const headers: Record<string, string> = { authorization: opts.authorization, accept: 'text/event-stream' };
        if (clientName) headers['x-marginalia-client'] = clientName.replace(/[^\x20-\x7e]/g, '?').trim() || 'mcp-stdio';
        const res = await fetch(url, { headers, signal: abort.signal }).finally(markReady);
        if (res.status !== 200 || !res.body) {
          await res.body?.cancel();
          logger.warn(`the owner's event stream (${url.pathname}) answered HTTP ${res.status}: resource change notifications are off`);
          return;
        }
        await readSse(res.body, (data) => {
          let e: unknown;
          try {
            e = JSON.parse(data);
          } catch {
            return;
          }
          if (!isObject(e)) return;
          if (typeof e.event_type !== 'string') {
            // an overflow notice: events were dropped, anything may have changed
            write({ jsonrpc: '2.0', method: 'notifications/resources/list_changed' });
            return;
          }
          const seq = isObject(e.metadata) ? e.metadata.sequence_number : undefined;
          if (typeof seq === 'number') since = seq;
          const changes = resourcesTouchedBy([e as unknown as Parameters<typeof resourcesTouchedBy>[0][number]]);
          for (const uri of changes.updated) if (subscribed.has(uri)) write({ jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri } });
          if (changes.listChanged) write({ jsonrpc: '2.0', method: 'notifications/resources/list_changed' });
        });
      } catch (e) {
        if (abort.signal.aborted) return;
        logger.warn(`the owner's event stream failed: ${(e as Error).message}`);
      }
      await new Promise((r) => setTimeout(r, opts.reconnectMs ?? 1000).unref());
    }
  };

  /** 2025-era resources/subscribe and resources/unsubscribe, answered here (the owner's stateless HTTP cannot notify). */
  const subscription = (m: unknown): boolean => {
    if (!isObject(m) || (m.method !== 'resources/subscribe' && m.method !== 'resources/unsubscribe') || m.id === undefined) return false;
    const uri = isObject(m.params) ? m.params.uri : undefined;
    if (typeof uri !== 'string' || uri.length === 0) {
      write({ jsonrpc: '2.0', id: m.id, error: { code: -32602, message: `${m.method} needs params.uri (a qda:// resource URI)` } });
      return true;
    }
    if (m.method === 'resources/subscribe') subscribed.add(uri);
    else subscribed.delete(uri);
    // answered once the event stream is open: every change after the answer is notified
    void streamReady.then(() => write({ jsonrpc: '2.0', id: m.id, result: {} }));
    return true;
  };

  const forward = async (msg: unknown): Promise<void> => {
    const list = Array.isArray(msg) ? msg : [msg];
    const first = list[0];
    const requestIds = list.filter((m) => isObject(m) && typeof m.method === 'string' && m.id !== undefined).map((m) => (m as Json).id);
    const initializeIds = new Set(list.filter((m) => isObject(m) && m.method === 'initialize').map((m) => (m as Json).id));
    for (const m of list) {
      if (
        isObject(m) &&
        m.method === 'initialize' &&
        !opts.clientName &&
        isObject(m.params) &&
        isObject(m.params.clientInfo) &&
        typeof m.params.clientInfo.name === 'string'
      )
        clientName = m.params.clientInfo.name.slice(0, 100);
    }
    const params = isObject(first) && isObject(first.params) ? first.params : undefined;
    const meta = params && isObject(params._meta) ? params._meta : undefined;
    const envelopeInfo = meta?.[CLIENT_INFO_META_KEY];
    if (!opts.clientName && isObject(envelopeInfo) && typeof envelopeInfo.name === 'string') clientName = envelopeInfo.name.slice(0, 100);
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: opts.authorization,
    };
    // the owner names the implicit session after it (printable ASCII only in a header)
    if (clientName) headers['x-marginalia-client'] = clientName.replace(/[^\x20-\x7e]/g, '?').trim() || 'mcp-stdio';
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
      if (negotiated) headers['mcp-protocol-version'] = negotiated;
      if (sessionId) headers['mcp-session-id'] = sessionId;
    }
    const abort = new AbortController();
    const key = requestIds.length === 1 ? JSON.stringify(requestIds[0]) : undefined;
    let settle!: () => void;
    const done = new Promise<void>((r) => (settle = r));
    if (key !== undefined) inFlight.set(key, { abort, listen: isObject(first) && first.method === 'subscriptions/listen', done });
    try {
      const res = await fetch(opts.url, { method: 'POST', headers, body: JSON.stringify(msg), signal: abort.signal });
      const sid = res.headers.get('mcp-session-id');
      if (sid && initializeIds.size > 0) sessionId = sid;
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
          observe(parsed, initializeIds);
          write(parsed);
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
        observe(parsed, initializeIds);
        write(parsed);
        return;
      }
      const why = isObject(parsed) && typeof parsed.error_code === 'string' ? `${parsed.error_code}: ${String(parsed.error)}` : text.slice(0, 300);
      for (const id of requestIds)
        failRequest(id, `The Marginalia server that owns the project (${opts.url}) answered HTTP ${res.status}: ${why}`, { http_status: res.status });
    } catch (e) {
      if (abort.signal.aborted) return;
      logger.warn(`MCP forward to ${opts.url} failed: ${(e as Error).message}`);
      for (const id of requestIds)
        failRequest(id, `The Marginalia server that owns the project (${opts.url}) cannot be reached: ${(e as Error).message}. Is it still running?`);
    } finally {
      if (key !== undefined && inFlight.get(key)?.abort === abort) inFlight.delete(key);
      settle();
    }
  };

  /** A JSON-RPC parse error (-32700) for a line that is not strict JSON; `data.error_code` is INVALID_JSON. */
  const parseError = (message: string, data?: unknown) =>
    write({ jsonrpc: '2.0', id: null, error: { code: -32700, message: `Parse error: ${message}`, ...(data !== undefined ? { data } : {}) } });
  const onLine = (line: string) => {
    const text = line.trim();
    if (!text) return;
    let msg: unknown;
    try {
      // strict: no lone surrogate escape, no duplicated key (the bytes were checked as UTF-8 by readLines)
      msg = parseStrictJsonText(text, 'The line');
    } catch (e) {
      const err = e as { message: string; code?: string; details?: object };
      parseError(err.message, { error_code: err.code ?? 'INVALID_JSON', ...err.details });
      return;
    }
    if (isObject(msg) && msg.method === 'notifications/cancelled' && isObject(msg.params)) {
      const target = inFlight.get(JSON.stringify(msg.params.requestId));
      if (target) target.abort.abort();
    }
    // 2025 era (no per-request envelope): subscriptions are this process's to serve
    if (watcher && isObject(msg) && !(isObject(msg.params) && isObject(msg.params._meta) && PROTOCOL_VERSION_META_KEY in msg.params._meta) && subscription(msg))
      return;
    void forward(msg);
  };
  // lines split and decoded from bytes, strictly (MCP stdio framing: one message per \n-terminated line)
  const reading = (async () => {
    for await (const item of readStrictLines(input as AsyncIterable<Buffer | string>, MCP_MAX_BODY_BYTES)) {
      if (ended) break;
      if ('tooLong' in item)
        parseError(`a line of ${item.tooLong} bytes is longer than the ${MCP_MAX_BODY_BYTES} bytes accepted`, { error_code: 'INVALID_ARGUMENTS' });
      else if ('invalid' in item) parseError(item.invalid.message, { error_code: item.invalid.code, ...(item.invalid.details as object | undefined) });
      else onLine(item.line);
    }
  })();
  const finish = async () => {
    if (ended) return;
    ended = true;
    watcher?.abort();
    for (const f of inFlight.values()) if (f.listen) f.abort.abort();
    const pending = [...inFlight.values()].map((f) => f.done);
    const timer = new Promise<void>((r) => setTimeout(r, opts.drainMs ?? 30_000).unref());
    await Promise.race([Promise.all(pending), timer]);
    for (const f of inFlight.values()) f.abort.abort();
    resolveClosed();
  };
  reading.then(
    () => void finish(),
    (e: unknown) => {
      logger.warn(`MCP stdio input failed: ${(e as Error).message}`);
      void finish();
    },
  );
  return {
    closed,
    async close() {
      for (const f of inFlight.values()) f.abort.abort();
      watcher?.abort();
      ended = true;
      resolveClosed();
    },
  };
}

/** Reads a `text/event-stream` body and calls `onData` with each event's data (multi-line data joined by \n). */
async function readSse(body: ReadableStream<Uint8Array>, onData: (data: string) => void): Promise<void> {
  const decoder = new TextDecoder();
  let buffer = '';
  let data: string[] = [];
  const flushLine = (line: string) => {
    if (line === '') {
      if (data.length > 0) onData(data.join('\n'));
      data = [];
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') data.push(value);
  };
  const reader = body.getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let nl: number;
      while ((nl = buffer.search(/\r\n|\n|\r/)) >= 0) {
        if (buffer[nl] === '\r' && nl === buffer.length - 1) break; // maybe the first half of \r\n
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + (buffer.startsWith('\r\n', nl) ? 2 : 1));
        flushLine(line);
      }
    }
    if (buffer) flushLine(buffer);
    flushLine('');
  } finally {
    reader.releaseLock();
  }
}
