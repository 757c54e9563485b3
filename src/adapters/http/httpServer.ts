import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import express, { type NextFunction, type Request, type Response } from 'express';
import { fail, type Envelope } from '../../core/envelope';
import { envelopeText } from '../../core/sharedResult';
import type { ErrorCode } from '../../core/errors';
import type { Logger } from '../../core/log';
import type { AgentContext } from '../../agent/agentContext';
import type { Caller, InvokeOutcome, ToolPipeline } from '../../agent/pipeline';
import type { ClientType } from '../../agent/sessions';
import { CLIENT_TYPES } from '../../agent/sessions';
import { isToolError, ToolError } from '../../core/errors';
import { charsetOf, parseStrictJson } from '../../core/strictJson';
import { httpStatusOf } from '../../agent/errorClasses';
import { approvalOut } from '../../tools/approvalTools';
import { mountAgentRoutes } from './agentRoutes';

/** Default port of the HTTP tool server (spec: localhost, port 8765). */
export const DEFAULT_PORT = 8765;
/** Largest accepted request body. */
export const MAX_BODY = '64mb';

/**
 * HTTP status for each failure code. Success is 200; a call waiting for approval is 202. The HTTP column of
 * the one error classification (src/agent/errorClasses.ts), re-exported here for existing imports;
 * documented in docs/reference/error-codes.md (npm run check:docs keeps the two in step).
 */
export { STATUS_BY_CODE } from '../../agent/errorClasses';

/** The HTTP status of an outcome: 200 ok, 202 pending approval, else the code's status (src/agent/errorClasses.ts). */
export function statusOf(outcome: Pick<InvokeOutcome, 'status' | 'envelope'>): number {
  if (outcome.status === 'pending') return 202;
  if (outcome.envelope.success) return 200;
  return httpStatusOf(outcome.envelope.error_code);
}

/** Options of {@link createHttpApp}. */
export interface HttpOptions {
  pipeline: ToolPipeline;
  /** the port clients use in the Host header (checked against DNS rebinding) */
  port: () => number;
  logger: Logger;
  /** called once per tool call, for the one-line call log */
  onCall?: (line: string, outcome: InvokeOutcome) => void;
  /** product name and version for `GET /` */
  version: string;
  /**
   * The agent-context layer. With it every request needs `Authorization: Bearer <token>` (401
   * otherwise), calls run in the session named by `X-Marginalia-Session` or in an implicit session per
   * token and client name, and the approval routes exist.
   */
  agent?: AgentContext;
  /** mounts further routers (REST, MCP, ...) after the guards, before the 404 handler */
  extend?: (app: express.Express) => void;
  /**
   * WebSocket upgrade handlers by path (e.g. `/ws`), called only after the Host, Origin and bearer-token
   * checks passed (the token may come as `?token=`); any other upgrade is refused.
   */
  upgrades?: Record<string, (req: http.IncomingMessage, socket: Duplex, head: Buffer) => void>;
  /**
   * Paths that skip the bearer-token check (Host, Origin and content type are still checked). Only
   * `marginalia serve --mcp-open` sets it, to `['/mcp']`, for the MCP conformance suite, which cannot send
   * a token; the MCP endpoint then treats requests without a token as the agent's.
   */
  openPaths?: readonly string[];
}

/**
 * Audits a request the guards refused (see AgentContext.auditRefusal): the route without its query
 * string, and the client name it claimed.
 */
export function auditRefused(agent: AgentContext | undefined, req: http.IncomingMessage, code: ErrorCode, decision: 'denied' | 'failed' = 'denied'): void {
  if (!agent) return;
  const path = (req.url ?? '/').split('?')[0] ?? '/';
  const client = req.headers['x-marginalia-client'];
  const correlation = req.headers['x-correlation-id'];
  agent.auditRefusal({
    route: `${req.method ?? 'GET'} ${path}`,
    error_code: code,
    client_name: typeof client === 'string' ? client : undefined,
    correlation_id: typeof correlation === 'string' ? correlation : undefined,
    decision,
  });
}

/**
 * True when a request may carry what it carries: GET, HEAD and OPTIONS always; any other method only with a
 * JSON body (`Content-Type: application/json`, parameters such as `charset` allowed) or with no body and no
 * Content-Type at all. So the "simple" bodies a foreign web page can send without a CORS preflight
 * (`text/plain`, `application/x-www-form-urlencoded`, `multipart/form-data`) are refused even when empty.
 */
export function isJsonOrBodiless(req: http.IncomingMessage): boolean {
  const method = req.method ?? 'GET';
  if (method === 'GET' || method === 'HEAD' || method === 'OPTIONS') return true;
  const type = req.headers['content-type'];
  if (type !== undefined) return type.split(';')[0]?.trim().toLowerCase() === 'application/json';
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] === undefined && (length === undefined || length === '0');
}

/** Paths where `?token=` may stand in for the Authorization header (EventSource and WebSocket clients cannot set headers). */
export const QUERY_TOKEN_PATHS: readonly string[] = ['/events/stream', '/ws'];

/**
 * For a GET on one of {@link QUERY_TOKEN_PATHS} without an Authorization header, turns `?token=` into
 * `Authorization: Bearer <token>` so every later check sees one credential. The token is never logged.
 */
export function adoptQueryToken(req: http.IncomingMessage): void {
  if (req.headers.authorization || req.method !== 'GET' || !req.url?.includes('token=')) return;
  const url = new URL(req.url, 'http://localhost');
  const token = url.searchParams.get('token');
  if (token && QUERY_TOKEN_PATHS.includes(url.pathname)) req.headers.authorization = `Bearer ${token}`;
}

const LOOPBACK_HOSTS = ['127.0.0.1', 'localhost', '[::1]'];

/** True when `host` (a Host header value) names a loopback address on `port`. */
export function isLoopbackHost(host: string | undefined, port: number): boolean {
  if (!host) return false;
  return LOOPBACK_HOSTS.some((h) => host === `${h}:${port}` || (port === 80 && host === h));
}

/** True when `origin` is absent or a loopback origin on `port` (http). */
export function isAllowedOrigin(origin: string | undefined, port: number): boolean {
  if (origin === undefined) return true;
  return LOOPBACK_HOSTS.some((h) => origin === `http://${h}:${port}`);
}

/**
 * The caller of an HTTP request. Without the agent layer: client name and coder from headers. With it:
 * the session named by `X-Marginalia-Session` (its token must match), or the implicit session of the
 * token and `X-Marginalia-Client` (client type from `X-Marginalia-Client-Type`, default REST_CLIENT).
 * Errors (thrown): UNAUTHORIZED, SESSION_NOT_FOUND, SESSION_LIMIT.
 */
export function callerOf(req: http.IncomingMessage, agent: AgentContext | undefined): Caller {
  const client = (header(req, 'x-marginalia-client') ?? 'http-client').slice(0, 100);
  const user = (header(req, 'x-marginalia-user') ?? client).slice(0, 100);
  const correlation = header(req, 'x-correlation-id')?.slice(0, 100);
  if (!agent) return { session_id: `http:${client}`, client_type: 'REST_CLIENT', client_name: client, user, correlation_id: correlation };
  const auth = header(req, 'authorization');
  const sessionId = header(req, 'x-marginalia-session');
  const typeHeader = header(req, 'x-marginalia-client-type') as ClientType | undefined;
  const clientType: ClientType =
    typeHeader && (CLIENT_TYPES as readonly string[]).includes(typeHeader) && typeHeader !== 'LOCAL_UI' ? typeHeader : 'REST_CLIENT';
  const caller = sessionId
    ? agent.callerFor(sessionId, auth)
    : agent.implicitCaller(auth, client, clientType, header(req, 'x-marginalia-user')?.slice(0, 100), header(req, 'x-marginalia-model')?.slice(0, 200));
  return { ...caller, correlation_id: correlation };
}

/** The value of request header `name` (lower case), as express's `req.get` gives it: repeated headers joined by ", ". */
export function header(req: http.IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v.join(', ') : v;
}

/** Sends a thrown error as its envelope with its status (and Retry-After for RATE_LIMITED). */
export function sendError(res: Response, e: unknown): void {
  sendReply(res, errorReply(e));
}

/** Sends `body` as JSON with `status`; a 401 names the scheme (`WWW-Authenticate`, RFC 9110 section 11.6.1). */
export function send(res: Response, status: number, body: Envelope | Record<string, unknown>): void {
  if (status === 401) res.setHeader('WWW-Authenticate', 'Bearer realm="marginalia"');
  res.status(status).type('application/json').send(envelopeText(body));
}

/**
 * The body parser of every JSON route (POST /tools, the approval routes, REST): reads the body as bytes
 * (a Content-Encoding inflated by body-parser, at most {@link MAX_BODY}) and parses it with
 * `parseStrictJson` (src/core/strictJson.ts) in the charset the Content-Type declares (UTF-8 when none):
 * not valid UTF-8 (or not the declared charset), a lone surrogate escape or a duplicated key is
 * 400 INVALID_JSON with the byte offset, an unknown charset 415 UNSUPPORTED_MEDIA_TYPE, both through the
 * app's error handler, before any tool runs. `req.body` is the parsed value, `{}` for an empty body (as
 * express.json gives it). Shared by the fast path's rules, so a body is refused the same way on every route.
 */
export function strictJsonBody(): express.RequestHandler[] {
  return [
    express.raw({ type: () => true, limit: MAX_BODY }),
    (req: Request, _res: Response, next: NextFunction) => {
      if (!Buffer.isBuffer(req.body)) {
        next();
        return;
      }
      try {
        const value = parseStrictJson(req.body, { charset: charsetOf(header(req, 'content-type')) });
        req.body = value === undefined ? {} : value;
      } catch (e) {
        next(e);
        return;
      }
      next();
    },
  ];
}

/**
 * The express app of the HTTP tool server (spec section 4):
 * - `GET /` server info; `GET /tools` every tool with its JSON Schema;
 * - `POST /tools/{tool_name}` with body `{"arguments": {...}}` and `Content-Type: application/json`,
 *   answering the spec envelope with the status of {@link statusOf}.
 * Requests whose Host is not a loopback name on our port, or whose Origin is foreign, are refused with
 * 403 FORBIDDEN_HOST (DNS rebinding). No CORS headers are ever sent.
 */
export function createHttpApp(opts: HttpOptions): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);

  app.use((req: Request, res: Response, next: NextFunction) => {
    const refusal = guardRequest(req, req.path, opts);
    if (refusal) sendReply(res, refusal);
    else next();
  });

  app.get('/', (_req, res) => {
    send(res, 200, {
      name: 'marginalia',
      version: opts.version,
      tools_endpoint: 'GET /tools',
      call_endpoint: 'POST /tools/{tool_name}',
      tool_count: opts.pipeline.listTools().length,
    });
  });

  app.get('/tools', (req, res) => {
    // each tool with the trust level that applies to the caller (issue 14 item 6): the token's role, and an agent session's own floor
    const role = opts.agent?.authenticate(header(req, 'authorization'));
    const sessionId = header(req, 'x-marginalia-session');
    const floor = sessionId ? opts.agent?.sessions.get(sessionId)?.context.trust_level : undefined;
    const tools = opts.pipeline.listTools(role ? { researcher: role === 'researcher', floor } : undefined);
    send(res, 200, { count: tools.length, tools });
  });

  app.post(
    '/tools/:name',
    (req: Request, res: Response, next: NextFunction) => {
      if (!req.is('application/json')) {
        auditRefused(opts.agent, req, 'UNSUPPORTED_MEDIA_TYPE');
        send(res, 415, fail('UNSUPPORTED_MEDIA_TYPE', 'Send the body as JSON with the header Content-Type: application/json'));
        return;
      }
      next();
    },
    ...strictJsonBody(),
    async (req: Request, res: Response) => {
      sendReply(res, await answerToolCall(opts, req, String(req.params.name), req.body));
    },
  );

  if (opts.agent) mountApprovals(app, opts.agent);
  // the researcher's agent credentials and the sessions of every client (issue 14 items 2, 3)
  if (opts.agent) mountAgentRoutes(app, opts.agent, opts.pipeline);
  if (opts.agent) mountPause(app, opts.agent);
  opts.extend?.(app);

  app.use((req: Request, res: Response) => {
    send(res, 404, fail('TOOL_NOT_FOUND', `No route ${req.method} ${req.path}. Use GET /tools or POST /tools/{tool_name}.`));
  });

  // express's error handler signature needs all four parameters
  app.use((err: Error & { type?: string; status?: number }, req: Request, res: Response, _next: NextFunction) => {
    // a body that could not be read is a refused call too: audited as failed
    if (isToolError(err)) {
      // parseStrictJson (strictJsonBody): INVALID_JSON 400, UNSUPPORTED_MEDIA_TYPE 415
      auditRefused(opts.agent, req, err.code, 'failed');
      send(res, httpStatusOf(err.code), fail(err.code, err.message, err.details));
    } else if (err.type === 'entity.parse.failed') {
      auditRefused(opts.agent, req, 'INVALID_JSON', 'failed');
      send(res, 400, fail('INVALID_JSON', `The body is not valid JSON: ${err.message}`));
    } else if (err.type === 'entity.too.large') {
      auditRefused(opts.agent, req, 'INVALID_ARGUMENTS', 'failed');
      send(res, 413, fail('INVALID_ARGUMENTS', `The body is larger than ${MAX_BODY}`));
    } else if (err.status === 415) {
      // body-parser: a charset or Content-Encoding it cannot decode (the status docs/reference/error-codes.md documents for UNSUPPORTED_MEDIA_TYPE)
      auditRefused(opts.agent, req, 'UNSUPPORTED_MEDIA_TYPE', 'failed');
      send(res, 415, fail('UNSUPPORTED_MEDIA_TYPE', `${err.message}: send the body as UTF-8 JSON with Content-Type: application/json`));
    } else if (err.status && err.status >= 400 && err.status < 500) {
      auditRefused(opts.agent, req, 'INVALID_ARGUMENTS', 'failed');
      send(res, err.status, fail('INVALID_ARGUMENTS', err.message));
    } else {
      opts.logger.error('HTTP request failed', err);
      send(res, 500, fail('TOOL_EXECUTION_ERROR', 'The request failed unexpectedly'));
    }
  });
  return app;
}

/** An answer ready to send: status, envelope or other JSON body, extra headers. */
export interface Reply {
  status: number;
  body: Envelope | Record<string, unknown>;
  headers?: Record<string, string>;
}

/** Sends `reply` through express (see {@link send}). */
function sendReply(res: Response, reply: Reply): void {
  if (reply.headers) res.set(reply.headers);
  send(res, reply.status, reply.body);
}

/**
 * The checks every request passes before any route (spec section 4, docs/architecture.md "Security"), shared by the
 * express app and the fast path of {@link startHttpServer}: Host must be a loopback name on our port and
 * Origin absent or loopback on our port (403 FORBIDDEN_HOST, DNS rebinding), a bearer token unless the route
 * is the public tool listing or an `openPaths` path (401 UNAUTHORIZED), a JSON body or none (415
 * UNSUPPORTED_MEDIA_TYPE). Returns the refusal to send (already audited), or undefined to go on. May
 * rewrite `?token=` into the Authorization header ({@link adoptQueryToken}). `path` is the URL's path
 * without its query string.
 */
export function guardRequest(req: http.IncomingMessage, path: string, opts: Pick<HttpOptions, 'port' | 'agent' | 'openPaths'>): Reply | undefined {
  const port = opts.port();
  const host = header(req, 'host');
  if (!isLoopbackHost(host, port)) {
    auditRefused(opts.agent, req, 'FORBIDDEN_HOST');
    return { status: 403, body: fail('FORBIDDEN_HOST', `Host "${host ?? ''}" is not this server (DNS rebinding protection); use 127.0.0.1:${port}`) };
  }
  const origin = header(req, 'origin');
  if (!isAllowedOrigin(origin, port)) {
    auditRefused(opts.agent, req, 'FORBIDDEN_HOST');
    return { status: 403, body: fail('FORBIDDEN_HOST', `Origin "${origin ?? ''}" may not call this server`) };
  }
  adoptQueryToken(req);
  // The tool listing (GET /tools, GET /) is public: it is the registry's schemas, the same text
  // package.json ships, and holds nothing of the project. Everything else needs the token.
  const publicListing = (req.method === 'GET' || req.method === 'HEAD') && (path === '/tools' || path === '/');
  if (opts.agent && !publicListing && !opts.openPaths?.includes(path) && opts.agent.authenticate(header(req, 'authorization')) === null) {
    auditRefused(opts.agent, req, 'UNAUTHORIZED');
    return {
      status: 401,
      body: fail('UNAUTHORIZED', 'Send the token from the discovery file (or MARGINALIA_TOKEN) as Authorization: Bearer <token>'),
      headers: { 'WWW-Authenticate': 'Bearer realm="marginalia"' },
    };
  }
  if (!isJsonOrBodiless(req)) {
    auditRefused(opts.agent, req, 'UNSUPPORTED_MEDIA_TYPE');
    return { status: 415, body: fail('UNSUPPORTED_MEDIA_TYPE', 'Send the body as JSON with the header Content-Type: application/json') };
  }
  return undefined;
}

/**
 * `POST /tools/{name}` once the guards passed and the body is parsed (`body`: the parsed JSON, `{}` for an
 * empty body): checks the body's shape (`{"arguments": {...}}`, else 400 INVALID_ARGUMENTS, audited as
 * failed), resolves the caller ({@link callerOf}: 401 UNAUTHORIZED, SESSION_NOT_FOUND, 429 SESSION_LIMIT),
 * runs the pipeline and writes the call-log line. Shared by the express route and the fast path.
 */
async function answerToolCall(opts: HttpOptions, req: http.IncomingMessage, name: string, body: unknown): Promise<Reply> {
  const badBody = (message: string): Reply => {
    auditRefused(opts.agent, req, 'INVALID_ARGUMENTS', 'failed');
    return { status: 400, body: fail('INVALID_ARGUMENTS', message) };
  };
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return badBody('The body must be a JSON object {"arguments": {...}}');
  for (const k in body) {
    if (k !== 'arguments')
      return badBody(
        `Unexpected body member(s) ${Object.keys(body)
          .filter((x) => x !== 'arguments')
          .join(', ')}: send {"arguments": {...}}`,
      );
  }
  const argsValue = (body as { arguments?: unknown }).arguments;
  if (argsValue !== undefined && (argsValue === null || typeof argsValue !== 'object' || Array.isArray(argsValue)))
    return badBody('"arguments" must be a JSON object');
  let caller: Caller;
  try {
    caller = callerOf(req, opts.agent);
  } catch (e) {
    return errorReply(e);
  }
  const outcome = await opts.pipeline.invoke(name, argsValue ?? {}, caller);
  // Retry-After: when to try again (RATE_LIMITED), or when to ask about a held call (202: its poll_after_ms)
  const retry = !outcome.envelope.success
    ? (outcome.envelope.details as { retry_after_ms?: number } | undefined)?.retry_after_ms
    : outcome.status === 'pending'
      ? (outcome.envelope.data as { poll_after_ms?: number } | undefined)?.poll_after_ms
      : undefined;
  const status = statusOf(outcome);
  opts.onCall?.(
    `${new Date().toISOString()} ${caller.client_name} ${name} ${status} ${outcome.envelope.success ? 'ok' : outcome.envelope.error_code} ${outcome.durationMs.toFixed(2)}ms`,
    outcome,
  );
  const headers: Record<string, string> = {};
  if (retry !== undefined) headers['Retry-After'] = String(Math.ceil(retry / 1000));
  // a tool's own 401 (SESSION_NOT_FOUND for a session it was asked about) names the scheme like the guard's
  if (status === 401) headers['WWW-Authenticate'] = 'Bearer realm="marginalia"';
  return { status, body: outcome.envelope, headers: Object.keys(headers).length > 0 ? headers : undefined };
}

/** The reply for a thrown ToolError: its envelope with its status, Retry-After for RATE_LIMITED; rethrows anything else. */
function errorReply(e: unknown): Reply {
  if (!isToolError(e)) throw e;
  const status = httpStatusOf(e.code);
  const retry = (e.details as { retry_after_ms?: number } | undefined)?.retry_after_ms;
  const headers: Record<string, string> = {};
  if (retry !== undefined) headers['Retry-After'] = String(Math.ceil(retry / 1000));
  if (status === 401) headers['WWW-Authenticate'] = 'Bearer realm="marginalia"';
  return { status, body: fail(e.code, e.message, e.details), headers };
}

/** `/tools/{name}` with a name of registry characters and no query string: the fast path's URLs. */
const FAST_TOOL_URL = /^\/tools\/([A-Za-z0-9_.-]{1,200})$/;
/** {@link MAX_BODY} in bytes (body-parser reads "64mb" as 64 MiB). */
const MAX_BODY_BYTES = 64 * 1024 * 1024;

/**
 * The fast path for the plain tool call: `POST /tools/{name}` with `Content-Type: application/json`
 * (charset absent or UTF-8), a Content-Length within {@link MAX_BODY} and no Content-Encoding. It runs
 * the same guards ({@link guardRequest}) and the same handler ({@link answerToolCall}) as the express route
 * and answers the same bytes and headers, without express's routing and body-parser (half of a small
 * call's server time; bench/RESULTS.md). Returns false, having touched nothing, for any other request:
 * express then serves it, with its own handling of encodings, charsets, chunked bodies and every error.
 */
function fastToolCall(req: http.IncomingMessage, res: http.ServerResponse, opts: HttpOptions): boolean {
  if (req.method !== 'POST' || req.url === undefined || !req.url.startsWith('/tools/')) return false;
  const match = FAST_TOOL_URL.exec(req.url);
  if (!match) return false;
  const encoding = req.headers['content-encoding'];
  if (encoding !== undefined && encoding.toLowerCase() !== 'identity') return false;
  const type = req.headers['content-type'];
  if (type === undefined) return false;
  const [mime, ...params] = type.split(';');
  if (mime?.trim().toLowerCase() !== 'application/json') return false;
  for (const p of params) {
    const [k, v] = p.split('=');
    if (k?.trim().toLowerCase() !== 'charset' || !/^"?utf-8"?$/i.test(v?.trim() ?? '')) return false;
  }
  const lengthHeader = req.headers['content-length'];
  const length = lengthHeader === undefined ? NaN : Number(lengthHeader);
  if (!Number.isSafeInteger(length) || length < 0 || length > MAX_BODY_BYTES || req.headers['transfer-encoding'] !== undefined) return false;

  const reply = (r: Reply): void => {
    const json = Buffer.from(envelopeText(r.body), 'utf8');
    res.writeHead(r.status, { ...r.headers, 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': json.length });
    res.end(json);
  };
  const refusal = guardRequest(req, req.url, opts);
  if (refusal) {
    req.resume();
    reply(refusal);
    return true;
  }
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('error', () => req.destroy());
  req.on('end', () => {
    // strict: valid UTF-8 (a leading BOM skipped), no lone surrogate escape, no duplicated key (as strictJsonBody)
    let body: unknown;
    try {
      body = parseStrictJson(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks));
      if (body === undefined) body = {}; // an empty body (a JSON null stays null: refused by answerToolCall)
    } catch (e) {
      if (!isToolError(e)) throw e;
      auditRefused(opts.agent, req, e.code, 'failed');
      reply({ status: httpStatusOf(e.code), body: fail(e.code, e.message, e.details) });
      return;
    }
    answerToolCall(opts, req, match[1] as string, body).then(reply, (e: unknown) => {
      opts.logger.error('HTTP request failed', e);
      reply({ status: 500, body: fail('TOOL_EXECUTION_ERROR', 'The request failed unexpectedly') });
    });
  });
  return true;
}

/**
 * The approval routes (the spec's abstract operations approve and reject): `GET /approvals?status=`,
 * `GET /approvals/{id}`, `POST /approvals/{id}/approve` with optional `{"arguments": {...}}` (an edit
 * before approval), `POST /approvals/{id}/reject` with optional `{"reason": "..."}`. Only the researcher's
 * token may decide, never on its own session's request (403 APPROVAL_FORBIDDEN).
 */
function mountApprovals(app: express.Express, agent: AgentContext): void {
  const withCaller = (handler: (req: Request, res: Response, caller: Caller) => Promise<void> | void) => async (req: Request, res: Response) => {
    let caller: Caller;
    try {
      caller = callerOf(req, agent);
    } catch (e) {
      sendError(res, e);
      return;
    }
    await handler(req, res, caller);
  };
  const body = strictJsonBody();
  app.get(
    '/approvals',
    withCaller((req, res) => {
      const status = typeof req.query.status === 'string' ? req.query.status : undefined;
      const valid = ['pending', 'completed', 'failed', 'rejected'];
      if (status !== undefined && !valid.includes(status)) {
        send(res, 400, fail('INVALID_ARGUMENTS', `status must be one of ${valid.join(', ')}`));
        return;
      }
      const list = agent.listApprovals(status as 'pending' | undefined).map(approvalOut);
      send(res, 200, { success: true, data: { count: list.length, approvals: list } });
    }),
  );
  app.get(
    '/approvals/:id',
    withCaller((req, res) => {
      const found = agent.listApprovals().find((a) => a.request_id === req.params.id);
      if (!found) send(res, 404, fail('APPROVAL_NOT_FOUND', `No approval request ${String(req.params.id)}`));
      else send(res, 200, { success: true, data: approvalOut(found) });
    }),
  );
  app.post(
    '/approvals/:id/approve',
    ...body,
    withCaller(async (req, res, caller) => {
      const edited = (req.body as { arguments?: unknown } | undefined)?.arguments;
      const outcome = await agent.approve(caller, String(req.params.id), edited);
      send(res, statusOf(outcome), outcome.envelope);
    }),
  );
  app.post(
    '/approvals/:id/reject',
    ...body,
    withCaller((req, res, caller) => {
      const reason = (req.body as { reason?: unknown } | undefined)?.reason;
      const outcome = agent.reject(caller, String(req.params.id), typeof reason === 'string' ? reason.slice(0, 2000) : undefined);
      send(res, statusOf(outcome), outcome.envelope);
    }),
  );
}

/**
 * Pause agents (issue 14 item 9), reviewer token only (403 APPROVAL_FORBIDDEN for an agent): `POST /agents/pause`
 * -> `{paused: true, since, by, changed}`; `POST /agents/resume` -> `{paused: false, changed, ran, failed,
 * still_pending, requests}` (the calls the pause held run now; AgentContext.resume); `GET /agents/pause` ->
 * `{paused, since, by}`. Bodies are ignored (`{}` or none).
 */
function mountPause(app: express.Express, agent: AgentContext): void {
  const researcher = (req: Request): Caller => {
    const caller = callerOf(req, agent);
    if (!caller.researcher) throw new ToolError('APPROVAL_FORBIDDEN', 'Only the researcher (the reviewer token) may pause or resume agents');
    return caller;
  };
  const route = (fn: (caller: Caller) => unknown) => async (req: Request, res: Response) => {
    try {
      send(res, 200, { success: true, data: await fn(researcher(req)) });
    } catch (e) {
      sendError(res, e);
    }
  };
  app.get(
    '/agents/pause',
    route(() => ({ paused: agent.paused, ...(agent.pauseInfo ?? { since: null, by: null }) })),
  );
  app.post(
    '/agents/pause',
    ...strictJsonBody(),
    route((caller) => agent.pause(caller)),
  );
  app.post(
    '/agents/resume',
    ...strictJsonBody(),
    route((caller) => agent.resume(caller)),
  );
}

/** A running HTTP tool server. */
export interface RunningHttpServer {
  /** the port actually bound (useful with port 0) */
  readonly port: number;
  readonly host: string;
  close(): Promise<void>;
}

/**
 * Starts the HTTP tool server on `host:port`. Only loopback addresses are allowed (127.0.0.1, ::1,
 * localhost); anything else throws. Port 0 picks a free port. Rejects with the listen error
 * (EADDRINUSE: the port is taken) so callers can offer another port.
 */
export async function startHttpServer(opts: Omit<HttpOptions, 'port'> & { port: number; host?: string }): Promise<RunningHttpServer> {
  const host = opts.host ?? '127.0.0.1';
  if (!['127.0.0.1', '::1', 'localhost'].includes(host)) throw new Error(`Refusing to listen on ${host}: Marginalia serves loopback addresses only`);
  let bound = opts.port;
  const app = createHttpApp({ ...opts, port: () => bound });
  const fastOpts: HttpOptions = { ...opts, port: () => bound };
  const server = http.createServer((req, res) => {
    if (!fastToolCall(req, res, fastOpts)) app(req, res);
  });
  server.on('upgrade', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => upgrade(req, socket, head, bound, opts));
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  bound = (server.address() as AddressInfo).port;
  return {
    port: bound,
    host,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/**
 * An HTTP upgrade (WebSocket) request: the same Host, Origin and bearer-token checks as every route
 * (403 FORBIDDEN_HOST, 401 UNAUTHORIZED, answered as plain HTTP before any handshake), then the handler
 * of its path in `opts.upgrades` (404 TOOL_NOT_FOUND for any other path).
 */
function upgrade(req: http.IncomingMessage, socket: Duplex, head: Buffer, port: number, opts: Pick<HttpOptions, 'agent' | 'upgrades'>): void {
  const refuse = (status: number, code: ErrorCode, message: string) => {
    auditRefused(opts.agent, req, code);
    const body = JSON.stringify(fail(code, message));
    const extra = status === 401 ? 'WWW-Authenticate: Bearer realm="marginalia"\r\n' : '';
    socket.end(
      `HTTP/1.1 ${status} ${http.STATUS_CODES[status] ?? 'Error'}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extra}Connection: close\r\n\r\n${body}`,
    );
  };
  socket.on('error', () => socket.destroy());
  const host = req.headers.host;
  if (!isLoopbackHost(host, port)) return refuse(403, 'FORBIDDEN_HOST', `Host "${host ?? ''}" is not this server (DNS rebinding protection)`);
  const origin = typeof req.headers.origin === 'string' ? req.headers.origin : undefined;
  if (!isAllowedOrigin(origin, port)) return refuse(403, 'FORBIDDEN_HOST', `Origin "${origin ?? ''}" may not call this server`);
  adoptQueryToken(req);
  if (opts.agent && opts.agent.authenticate(req.headers.authorization) === null)
    return refuse(401, 'UNAUTHORIZED', 'Send the token as Authorization: Bearer <token> (or ?token=<token>)');
  const path = new URL(req.url ?? '/', 'http://localhost').pathname;
  const handler = opts.upgrades && Object.prototype.hasOwnProperty.call(opts.upgrades, path) ? opts.upgrades[path] : undefined;
  if (!handler) return refuse(404, 'TOOL_NOT_FOUND', `No WebSocket endpoint at ${path}`);
  handler(req, socket, head);
}
