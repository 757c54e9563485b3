/**
 * The checks and replies every HTTP route shares (spec section 4, docs/architecture.md "Security"): Host, Origin and
 * bearer-token guards, the JSON-or-nothing body rule, `?token=` for streams, and sending envelopes with their
 * status. Used by the express app and the fast path of the HTTP tool server (./httpServer.ts, ./toolCall.ts).
 */
import type * as http from 'node:http';
import express, { type NextFunction, type Request, type Response } from 'express';
import { fail, type Envelope } from '../../core/envelope';
import { isToolError, type ErrorCode } from '../../core/errors';
import { envelopeText } from '../../core/sharedResult';
import { charsetOf, parseStrictJson } from '../../core/strictJson';
import type { AgentContext } from '../../agent/agentContext';
import { httpStatusOf } from '../../agent/errorClasses';
import type { InvokeOutcome } from '../../agent/pipeline';
import type { HttpOptions } from './httpServer';

/** Largest accepted request body. */
export const MAX_BODY = '64mb';

/** The HTTP status of an outcome: 200 ok, 202 pending approval, else the code's status (src/agent/errorClasses.ts). */
export function statusOf(outcome: Pick<InvokeOutcome, 'status' | 'envelope'>): number {
  if (outcome.status === 'pending') return 202;
  if (outcome.envelope.success) return 200;
  return httpStatusOf(outcome.envelope.error_code);
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

/** An answer ready to send: status, envelope or other JSON body, extra headers. */
export interface Reply {
  status: number;
  body: Envelope | Record<string, unknown>;
  headers?: Record<string, string>;
}

/** Sends `reply` through express (see {@link send}). */
export function sendReply(res: Response, reply: Reply): void {
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

/** The reply for a thrown ToolError: its envelope with its status, Retry-After for RATE_LIMITED; rethrows anything else. */
export function errorReply(e: unknown): Reply {
  if (!isToolError(e)) throw e;
  const status = httpStatusOf(e.code);
  const retry = (e.details as { retry_after_ms?: number } | undefined)?.retry_after_ms;
  const headers: Record<string, string> = {};
  if (retry !== undefined) headers['Retry-After'] = String(Math.ceil(retry / 1000));
  if (status === 401) headers['WWW-Authenticate'] = 'Bearer realm="marginalia"';
  return { status, body: fail(e.code, e.message, e.details), headers };
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
