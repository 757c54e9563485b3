import type * as http from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer, type RawData } from 'ws';
import { isToolError, ToolError, type ErrorCode } from '../../core/errors';
import { parseStrictJson } from '../../core/strictJson';
import { classify } from '../../agent/errorClasses';
import type { Logger } from '../../core/log';
import type { AgentContext } from '../../agent/agentContext';
import type { Caller, InvokeOutcome, ToolPipeline } from '../../agent/pipeline';
import { CLIENT_TYPES, type ClientType, type Session } from '../../agent/sessions';
import { parsePatterns, parseSeq, ResumableSubscription } from '../rest/eventStreams';

/** The path the WebSocket adapter answers on. */
export const WS_PATH = '/ws';
/** Largest message a client may send, bytes. */
export const WS_MAX_PAYLOAD = 16 * 1024 * 1024;
/** Delivery pauses when this many bytes wait in a socket's send buffer ... */
export const WS_HIGH_WATER_BYTES = 1024 * 1024;
/** ... and resumes (replaying from the event store) once fewer than this many wait. */
export const WS_LOW_WATER_BYTES = 256 * 1024;
/** Ping interval, milliseconds; a pong counts as session activity. */
export const WS_PING_MS = 15_000;
/** Most concurrent WebSocket connections per server. */
export const MAX_WS_CONNECTIONS = 100;
/** Most subscriptions per connection. */
export const MAX_WS_SUBSCRIPTIONS = 20;

/** Close codes: policy (authentication failed, session ended) and try-again-later (session limit). */
const CLOSE_POLICY = 1008;
const CLOSE_TRY_LATER = 1013;

/** Options of {@link createWsAdapter}. */
export interface WsOptions {
  agent: AgentContext;
  pipeline: ToolPipeline;
  logger: Logger;
  /** called once per tool call, for the one-line call log */
  onCall?: (line: string, outcome: InvokeOutcome) => void;
  /** ping interval (default {@link WS_PING_MS}) */
  pingMs?: number;
}

/** The WebSocket adapter: hand it upgrade requests for {@link WS_PATH} that passed the server's guards. */
export interface WsAdapter {
  /** completes the WebSocket handshake of a request whose Host, Origin and token were checked */
  handleUpgrade(req: http.IncomingMessage, socket: Duplex, head: Buffer): void;
  /** open connections */
  readonly size: number;
  /** closes every connection (1001) and the server */
  dispose(): void;
}

/** A reply to a client message. */
type Reply =
  | { type: 'reply'; id: unknown; ok: true; status?: string; data: unknown }
  | { type: 'reply'; id: unknown; ok: false; status?: string; error: string; error_code: ErrorCode; details?: unknown };

function replyOf(id: unknown, outcome: InvokeOutcome): Reply {
  const env = outcome.envelope;
  if (env.success) return { type: 'reply', id, ok: true, status: outcome.status, data: env.data };
  return {
    type: 'reply',
    id,
    ok: false,
    status: outcome.status,
    error: env.error,
    error_code: env.error_code,
    ...(env.details === undefined ? {} : { details: env.details }),
  };
}

function errorReply(id: unknown, e: ToolError): Reply {
  return { type: 'reply', id, ok: false, error: e.message, error_code: e.code, ...(e.details === undefined ? {} : { details: e.details }) };
}

/**
 * The WebSocket adapter of the agent-context spec (section 4): one JSON message per frame. Each
 * connection is its own session, opened on connect with the bearer token (header, or `?token=`) and
 * ended with session.disconnected on close. Client messages (`id` is echoed in the reply):
 * `{id, op: 'call', tool, arguments}`, `{id, op: 'subscribe', patterns, since?}`,
 * `{id, op: 'unsubscribe', subscription_id}`, `{id, op: 'approve', request_id, arguments?}`,
 * `{id, op: 'reject', request_id, reason?}`, `{id, op: 'heartbeat'}`, `{id, op: 'list_tools'}`.
 * Server messages: `{type: 'welcome', session_id, ...}`, `{type: 'reply', id, ok, status?, data | error,
 * error_code}`, `{type: 'event', subscription_id, event}`, `{type: 'overflow', subscription_id,
 * last_delivered_seq, dropped, resumed: true}`.
 * Backpressure: when more than {@link WS_HIGH_WATER_BYTES} wait in the socket's send buffer a
 * subscription pauses, and it resumes from its last delivered sequence number (the event store replays
 * the rest) once the buffer is under {@link WS_LOW_WATER_BYTES}: nothing is lost, memory stays bounded.
 */
export function createWsAdapter(opts: WsOptions): WsAdapter {
  // UTF-8 of text frames is checked by parseStrictJson below (so the client hears INVALID_JSON with the byte
  // offset before the connection is failed with 1007, RFC 6455 section 8.1), not silently by ws
  const wss = new WebSocketServer({ noServer: true, maxPayload: WS_MAX_PAYLOAD, perMessageDeflate: false, clientTracking: true, skipUTF8Validation: true });

  return {
    handleUpgrade(req, socket, head) {
      if (wss.clients.size >= MAX_WS_CONNECTIONS) {
        refuseUpgrade(socket, 429, 'SESSION_LIMIT', `At most ${MAX_WS_CONNECTIONS} WebSocket connections may be open at once`);
        return;
      }
      wss.handleUpgrade(req, socket, head, (ws) => {
        try {
          connection(opts, ws, req);
        } catch (e) {
          opts.logger.error('WebSocket connection failed', e);
          ws.close(1011, 'internal error');
        }
      });
    },
    get size() {
      return wss.clients.size;
    },
    dispose() {
      for (const ws of wss.clients) ws.close(1001, 'server shutting down');
      wss.close();
    },
  };
}

function refuseUpgrade(socket: Duplex, status: number, code: ErrorCode, message: string): void {
  const body = JSON.stringify({ success: false, error: message, error_code: code });
  socket.end(
    `HTTP/1.1 ${status} ${status === 429 ? 'Too Many Requests' : 'Error'}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/** One WebSocket connection: its session, opened on connect and ended on close, and its messages. */
function connection(opts: WsOptions, ws: WebSocket, req: http.IncomingMessage): void {
  const { agent, pipeline } = opts;
  const url = new URL(req.url ?? '/', 'http://localhost');
  const header = (h: string) => {
    const v = req.headers[h];
    return typeof v === 'string' ? v : undefined;
  };
  // as POST /session/create and gRPC OpenSession: a stated client_type must be one of the spec's ClientType values (never LOCAL_UI)
  const typeText = header('x-marginalia-client-type') ?? url.searchParams.get('client_type') ?? 'CUSTOM';
  const clientTypes = CLIENT_TYPES.filter((t) => t !== 'LOCAL_UI');
  const clientType = typeText as ClientType;
  const clientName = (header('x-marginalia-client') ?? url.searchParams.get('client_name') ?? 'ws-client').slice(0, 100);
  const user = (header('x-marginalia-user') ?? url.searchParams.get('user') ?? undefined)?.slice(0, 100);
  const send = (msg: unknown): boolean => {
    if (ws.readyState !== WebSocket.OPEN) return false;
    ws.send(JSON.stringify(msg));
    return ws.bufferedAmount < WS_HIGH_WATER_BYTES;
  };

  let session: Session;
  let caller: Caller;
  try {
    if (!(clientTypes as readonly string[]).includes(typeText))
      throw new ToolError('INVALID_ARGUMENTS', `client_type must be one of ${clientTypes.join(', ')}`);
    const model = (header('x-marginalia-model') ?? url.searchParams.get('model') ?? undefined)?.slice(0, 200);
    ({ session, caller } = agent.openSession({ authorization: req.headers.authorization, client_type: clientType, client_name: clientName, user, model }));
  } catch (e) {
    if (!isToolError(e)) throw e;
    send({ type: 'error', ok: false, error: e.message, error_code: e.code });
    // a refusal for now (SESSION_LIMIT: src/agent/errorClasses.ts class retry_later) is 1013 Try Again Later; any other 1008
    ws.close(classify(e.code).class === 'retry_later' ? CLOSE_TRY_LATER : CLOSE_POLICY, e.code);
    return;
  }
  const sessionId = session.session_id;
  const subs = new Map<string, ResumableSubscription>();
  let drainWatch: NodeJS.Timeout | undefined;

  /** Resumes paused subscriptions once the socket's buffer has drained. */
  const watchDrain = () => {
    if (drainWatch) return;
    drainWatch = setInterval(() => {
      if (ws.readyState !== WebSocket.OPEN) return;
      if (ws.bufferedAmount >= WS_LOW_WATER_BYTES) return;
      clearInterval(drainWatch);
      drainWatch = undefined;
      for (const s of subs.values()) s.resume();
    }, 25);
    drainWatch.unref();
  };

  const touch = () => agent.sessions.touch(sessionId);
  const endSession = (why: string) => {
    if (ws.readyState === WebSocket.OPEN) ws.close(CLOSE_POLICY, why.slice(0, 120));
  };
  // the session ending elsewhere (the researcher ended it, its credential was revoked) closes the socket at once
  const unwatch = agent.sessions.watch(sessionId, (reason) => endSession(`session ended: ${reason}`));

  send(welcomeOf(opts, session));

  const logCall = (tool: string, outcome: InvokeOutcome) =>
    opts.onCall?.(
      `${new Date().toISOString()} ${caller.client_name} ${tool} ws ${outcome.envelope.success ? 'ok' : outcome.envelope.error_code} ${outcome.durationMs.toFixed(2)}ms`,
      outcome,
    );

  const conn: WsConnection = { agent, pipeline, caller, session, sessionId, subs, send, watchDrain, touch, logCall };
  const handle = (msg: Record<string, unknown>) => handleOp(conn, msg);

  ws.on('message', (raw: RawData, isBinary: boolean) => {
    const msg = readFrame(ws, send, raw, isBinary);
    if (!msg) return;
    const id = (msg as { id?: unknown }).id ?? null;
    handle(msg).then(
      (r) => {
        if (r) send(r);
      },
      (e: unknown) => {
        if (isToolError(e)) {
          send(errorReply(id, e));
          if (e.code === 'SESSION_NOT_FOUND' || e.code === 'SESSION_EXPIRED') endSession(e.code);
        } else {
          opts.logger.error('WebSocket message failed', e);
          send({
            type: 'reply',
            id,
            ok: false,
            error: 'The message failed unexpectedly; the server log has the details',
            error_code: 'TOOL_EXECUTION_ERROR',
          } satisfies Reply);
        }
      },
    );
  });

  // a live connection is activity: each pong touches the session; an ended session closes the socket
  const ping = setInterval(() => {
    if (!agent.sessions.get(sessionId)) {
      endSession('SESSION_NOT_FOUND');
      return;
    }
    if (ws.readyState === WebSocket.OPEN) ws.ping();
  }, opts.pingMs ?? WS_PING_MS);
  ping.unref();
  ws.on('pong', () => {
    try {
      touch();
    } catch (e) {
      endSession(isToolError(e) ? e.code : 'session ended');
    }
  });

  ws.on('close', () => {
    unwatch();
    clearInterval(ping);
    if (drainWatch) clearInterval(drainWatch);
    for (const s of subs.values()) s.close();
    subs.clear();
    if (agent.sessions.get(sessionId)) {
      try {
        agent.sessions.destroy(sessionId, 'client_disconnected');
      } catch (e) {
        opts.logger.warn(`could not end WebSocket session ${sessionId}: ${(e as Error).message}`);
      }
    }
  });
  ws.on('error', (e) => opts.logger.warn(`WebSocket ${sessionId}: ${e.message}`));
}

/** What one connection's message handling works with. */
interface WsConnection {
  agent: WsOptions['agent'];
  pipeline: WsOptions['pipeline'];
  caller: Caller;
  session: Session;
  sessionId: string;
  subs: Map<string, ResumableSubscription>;
  send: (msg: unknown) => boolean;
  watchDrain: () => void;
  touch: () => void;
  logCall: (tool: string, outcome: InvokeOutcome) => void;
}

/** Handles one client message; resolves with its reply, or null when it has replied already. */
async function handleOp(c: WsConnection, msg: Record<string, unknown>): Promise<Reply | null> {
  const { agent, pipeline, caller, session, sessionId, subs, send, watchDrain, touch, logCall } = c;
  const id = msg.id ?? null;
  const op = msg.op;
  const allowedKeys: Record<string, string[]> = {
    call: ['tool', 'arguments'],
    subscribe: ['patterns', 'since'],
    unsubscribe: ['subscription_id'],
    approve: ['request_id', 'arguments'],
    reject: ['request_id', 'reason'],
    heartbeat: [],
    list_tools: [],
  };
  if (typeof op !== 'string' || !Object.prototype.hasOwnProperty.call(allowedKeys, op)) {
    throw new ToolError('INVALID_ARGUMENTS', `op must be one of ${Object.keys(allowedKeys).join(', ')}`);
  }
  const extra = Object.keys(msg).filter((k) => k !== 'id' && k !== 'op' && !(allowedKeys[op] as string[]).includes(k));
  if (extra.length > 0) throw new ToolError('INVALID_ARGUMENTS', `Unexpected member(s) ${extra.join(', ')} for op ${op}`);
  switch (op) {
    case 'call': {
      if (typeof msg.tool !== 'string' || !msg.tool) throw new ToolError('INVALID_ARGUMENTS', 'call needs "tool" (a tool name from list_tools)');
      const args = msg.arguments ?? {};
      if (args === null || typeof args !== 'object' || Array.isArray(args)) throw new ToolError('INVALID_ARGUMENTS', '"arguments" must be a JSON object');
      const outcome = await agent.call(caller, msg.tool, args);
      logCall(msg.tool, outcome);
      return replyOf(id, outcome);
    }
    case 'approve':
    case 'reject': {
      if (typeof msg.request_id !== 'string' || !msg.request_id) throw new ToolError('INVALID_ARGUMENTS', `${op} needs "request_id"`);
      touch();
      if (op === 'approve') {
        const outcome = await agent.approve(caller, msg.request_id, msg.arguments);
        logCall(outcome.tool === 'approve' ? 'approve' : `approve:${outcome.tool}`, outcome);
        return replyOf(id, outcome);
      }
      if (msg.reason !== undefined && typeof msg.reason !== 'string') throw new ToolError('INVALID_ARGUMENTS', '"reason" must be a string');
      const outcome = agent.reject(caller, msg.request_id, msg.reason === undefined ? undefined : msg.reason.slice(0, 2000));
      logCall('reject', outcome);
      return replyOf(id, outcome);
    }
    case 'subscribe': {
      touch();
      const patterns = parsePatterns(msg.patterns);
      const since = parseSeq(msg.since, 'since');
      if (subs.size >= MAX_WS_SUBSCRIPTIONS)
        throw new ToolError('INVALID_ARGUMENTS', `At most ${MAX_WS_SUBSCRIPTIONS} subscriptions per connection; unsubscribe one first`);
      const head = agent.headSeq();
      const push = (m: unknown): boolean => {
        const more = send(m);
        if (!more) watchDrain();
        return more;
      };
      const s: ResumableSubscription = new ResumableSubscription(
        agent.hub,
        patterns,
        since ?? head,
        {
          event: (event) => push({ type: 'event', subscription_id: s.id, event }),
          overflow: (n) => void push({ type: 'overflow', subscription_id: s.id, ...n, resumed: true }),
        },
        agent.config.events.default_subscriptions,
        // the stream's own pace, kept across re-subscriptions (src/agent/eventThrottle.ts; issue 14 item 10)
        () => agent.config.rate_limits.events_per_second,
      );
      subs.set(s.id, s);
      session.subscriptions.push({ subscription_id: s.id, event_patterns: [...s.effectivePatterns], created_at: new Date().toISOString() });
      // the reply goes first, so the client knows the subscription id before replayed events arrive
      send({
        type: 'reply',
        id,
        ok: true,
        data: { subscription_id: s.id, patterns: s.effectivePatterns, since: since ?? null, head_seq: head },
      } satisfies Reply);
      s.open();
      return null;
    }
    case 'unsubscribe': {
      touch();
      const sid = msg.subscription_id;
      const s = typeof sid === 'string' ? subs.get(sid) : undefined;
      if (!s) throw new ToolError('INVALID_ARGUMENTS', `No subscription ${String(sid).slice(0, 100)} on this connection`);
      s.close();
      subs.delete(s.id);
      session.subscriptions = session.subscriptions.filter((x) => x.subscription_id !== s.id);
      return { type: 'reply', id, ok: true, data: { subscription_id: s.id, unsubscribed: true, last_seq: s.lastSeq } };
    }
    case 'heartbeat': {
      const { session: s, heartbeat_interval_seconds } = agent.sessions.heartbeat(sessionId);
      return { type: 'reply', id, ok: true, data: { session_id: s.session_id, status: s.status, last_activity: s.last_activity, heartbeat_interval_seconds } };
    }
    default: {
      touch();
      // with the trust level that applies to this connection's caller (issue 14 item 6)
      const tools = pipeline.listTools(pipeline.viewerOf(caller));
      return { type: 'reply', id, ok: true, data: { count: tools.length, tools } };
    }
  }
}

/**
 * One frame as a client message: a JSON object, strictly parsed. Anything else is answered with an INVALID_JSON
 * or INVALID_ARGUMENTS reply (and a text frame that is not UTF-8 fails the connection): undefined.
 */
function readFrame(ws: WebSocket, send: (msg: unknown) => boolean, raw: RawData, isBinary: boolean): Record<string, unknown> | undefined {
  let msg: unknown;
  const bytes = Buffer.isBuffer(raw) ? raw : Array.isArray(raw) ? Buffer.concat(raw) : Buffer.from(raw);
  try {
    // strict: valid UTF-8, no lone surrogate escape, no duplicated key (src/core/strictJson.ts)
    msg = parseStrictJson(bytes, { what: 'The message' });
    if (msg === undefined) throw new ToolError('INVALID_JSON', 'The message is empty: send one JSON object {id, op, ...}');
  } catch (e) {
    const err = isToolError(e) ? e : new ToolError('INVALID_JSON', `The message is not valid JSON: ${(e as Error).message}`);
    send({
      type: 'reply',
      id: null,
      ok: false,
      error: err.message,
      error_code: err.code,
      ...(err.details === undefined ? {} : { details: err.details }),
    } satisfies Reply);
    // a text frame that is not UTF-8 fails the connection (RFC 6455 section 8.1), after the reply said why
    if (!isBinary && (err.details as { reason?: string } | undefined)?.reason === 'invalid_utf8') ws.close(1007, 'Invalid UTF-8 in a text frame');
    return undefined;
  }
  if (msg === null || typeof msg !== 'object' || Array.isArray(msg)) {
    send({ type: 'reply', id: null, ok: false, error: 'Each message must be a JSON object {id, op, ...}', error_code: 'INVALID_ARGUMENTS' } satisfies Reply);
    return undefined;
  }
  return msg as Record<string, unknown>;
}

/** The first message of a connection: its session and the settings a client needs. */
function welcomeOf({ agent, pipeline }: WsOptions, session: Session) {
  return {
    type: 'welcome',
    session_id: session.session_id,
    client_type: session.client_type,
    client_name: session.client_name,
    role: session.context.preferences.role,
    heartbeat_interval_seconds: agent.config.sessions.heartbeat_interval_seconds,
    default_subscriptions: agent.config.events.default_subscriptions,
    head_seq: agent.headSeq(),
    tool_count: pipeline.listTools().length,
  };
}
