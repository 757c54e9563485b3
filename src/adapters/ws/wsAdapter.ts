import type * as http from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer, type RawData } from 'ws';
import { isToolError, ToolError, type ErrorCode } from '../../core/errors';
import { parseStrictJson } from '../../core/strictJson';
import { classify } from '../../agent/errorClasses';
import type { Logger } from '../../core/log';
import type { AgentContext } from '../../agent/agentContext';
import {
  decideApproval,
  logCall as logKitCall,
  openSubscription,
  parsePatterns,
  parseSeq,
  remoteClientType,
  type ApprovalDecision,
  type CallLogSink,
  type KitSubscription,
} from '../../agent/kit';
import type { Caller, InvokeOutcome, ToolPipeline } from '../../agent/pipeline';
import type { Session } from '../../agent/sessions';

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
  onCall?: CallLogSink;
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

/**
 * Opens the session of a new connection with its bearer token and the client it states (headers, or `?client_type=`,
 * `?client_name=`, `?user=`, `?model=`); a refusal is sent as an `error` message and closes the socket (1013 for a
 * retry-later refusal such as SESSION_LIMIT, else 1008): undefined.
 */
function openWsSession(
  agent: AgentContext,
  ws: WebSocket,
  req: http.IncomingMessage,
  send: (msg: unknown) => boolean,
): { session: Session; caller: Caller } | undefined {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const header = (h: string) => {
    const v = req.headers[h];
    return typeof v === 'string' ? v : undefined;
  };
  // as POST /session/create and gRPC OpenSession: a stated client_type must be one of the spec's ClientType values (never LOCAL_UI)
  const typeText = header('x-marginalia-client-type') ?? url.searchParams.get('client_type') ?? undefined;
  const clientName = (header('x-marginalia-client') ?? url.searchParams.get('client_name') ?? 'ws-client').slice(0, 100);
  const user = (header('x-marginalia-user') ?? url.searchParams.get('user') ?? undefined)?.slice(0, 100);

  try {
    const clientType = remoteClientType(typeText, 'CUSTOM');
    const model = (header('x-marginalia-model') ?? url.searchParams.get('model') ?? undefined)?.slice(0, 200);
    return agent.openSession({ authorization: req.headers.authorization, client_type: clientType, client_name: clientName, user, model });
  } catch (e) {
    if (!isToolError(e)) throw e;
    send({ type: 'error', ok: false, error: e.message, error_code: e.code });
    // a refusal for now (SESSION_LIMIT: src/agent/errorClasses.ts class retry_later) is 1013 Try Again Later; any other 1008
    ws.close(classify(e.code).class === 'retry_later' ? CLOSE_TRY_LATER : CLOSE_POLICY, e.code);
    return undefined;
  }
}

/** One WebSocket connection: its session, opened on connect and ended on close, and its messages. */
function connection(opts: WsOptions, ws: WebSocket, req: http.IncomingMessage): void {
  const { agent, pipeline } = opts;
  const send = (msg: unknown): boolean => {
    if (ws.readyState !== WebSocket.OPEN) return false;
    ws.send(JSON.stringify(msg));
    return ws.bufferedAmount < WS_HIGH_WATER_BYTES;
  };
  const opened = openWsSession(agent, ws, req, send);
  if (!opened) return;
  const { session, caller } = opened;
  const sessionId = session.session_id;
  const subs = new Map<string, KitSubscription>();
  let drainWatch: NodeJS.Timeout | undefined;

  /** Resumes paused subscriptions once the socket's buffer has drained. */
  const watchDrain = () => {
    if (drainWatch) return;
    drainWatch = setInterval(() => {
      if (ws.readyState !== WebSocket.OPEN) return;
      if (ws.bufferedAmount >= WS_LOW_WATER_BYTES) return;
      clearInterval(drainWatch);
      drainWatch = undefined;
      for (const s of subs.values()) s.sub.resume();
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

  const logCall = (tool: string, outcome: InvokeOutcome) => logKitCall(opts.onCall, caller, tool, 'ws', outcome);

  const conn: WsConnection = { agent, pipeline, caller, sessionId, subs, send, watchDrain, touch, logCall, onCall: opts.onCall };
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
  sessionId: string;
  subs: Map<string, KitSubscription>;
  send: (msg: unknown) => boolean;
  watchDrain: () => void;
  touch: () => void;
  logCall: (tool: string, outcome: InvokeOutcome) => void;
  onCall: CallLogSink | undefined;
}

/** Handles one client message; resolves with its reply, or null when it has replied already. */
async function handleOp(c: WsConnection, msg: Record<string, unknown>): Promise<Reply | null> {
  const { agent, pipeline, caller, sessionId, subs, send, watchDrain, touch, logCall, onCall } = c;
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
      touch();
      const decision: ApprovalDecision =
        op === 'approve'
          ? { decision: 'approve', request_id: msg.request_id, arguments: msg.arguments }
          : { decision: 'reject', request_id: msg.request_id, reason: msg.reason };
      return replyOf(id, await decideApproval(agent, caller, decision, { sink: onCall, status: () => 'ws' }));
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
      const k = openSubscription(agent, pipeline, {
        caller,
        patterns,
        fromSeq: since ?? head,
        sink: {
          event: (event) => push({ type: 'event', subscription_id: k.sub.id, event }),
          overflow: (n) => void push({ type: 'overflow', subscription_id: k.sub.id, ...n, resumed: true }),
        },
      });
      const s = k.sub;
      subs.set(s.id, k);
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
      const k = typeof sid === 'string' ? subs.get(sid) : undefined;
      if (!k) throw new ToolError('INVALID_ARGUMENTS', `No subscription ${String(sid).slice(0, 100)} on this connection`);
      k.close();
      subs.delete(k.sub.id);
      return { type: 'reply', id, ok: true, data: { subscription_id: k.sub.id, unsubscribed: true, last_seq: k.sub.lastSeq } };
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
