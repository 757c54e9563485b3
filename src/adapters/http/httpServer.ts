/**
 * The HTTP tool server (spec section 4): options, the express app, the listening server with its fast path for
 * plain tool calls (./toolCall.ts) and WebSocket upgrades. Guards and replies live in ./guards.ts, the
 * researcher's approval and pause routes in ./approvalRoutes.ts, agent credentials and sessions in
 * ./agentRoutes.ts; everything they export that callers used from here is re-exported below.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import express, { type NextFunction, type Request, type Response } from 'express';
import { fail } from '../../core/envelope';
import type { ErrorCode } from '../../core/errors';
import type { Logger } from '../../core/log';
import type { AgentContext } from '../../agent/agentContext';
import type { CallLogSink } from '../../agent/kit';
import type { ToolPipeline } from '../../agent/pipeline';
import { isToolError } from '../../core/errors';
import { httpStatusOf } from '../../agent/errorClasses';
import { mountAgentRoutes } from './agentRoutes';
import { mountApprovals, mountPause } from './approvalRoutes';
import { adoptQueryToken, auditRefused, guardRequest, header, isAllowedOrigin, isLoopbackHost, MAX_BODY, send, sendReply, strictJsonBody } from './guards';
import { answerToolCall, fastToolCall } from './toolCall';

export {
  adoptQueryToken,
  auditRefused,
  errorReply,
  guardRequest,
  header,
  isAllowedOrigin,
  isJsonOrBodiless,
  isLoopbackHost,
  MAX_BODY,
  QUERY_TOKEN_PATHS,
  send,
  sendError,
  statusOf,
  strictJsonBody,
  type Reply,
} from './guards';
export { callerOf, replyBytes } from './toolCall';

/** Default port of the HTTP tool server (spec: localhost, port 8765). */
export const DEFAULT_PORT = 8765;

/**
 * HTTP status for each failure code. Success is 200; a call waiting for approval is 202. The HTTP column of
 * the one error classification (src/agent/errorClasses.ts), re-exported here for existing imports;
 * documented in docs/reference/error-codes.md (npm run check:docs keeps the two in step).
 */
export { STATUS_BY_CODE } from '../../agent/errorClasses';

/** Options of {@link createHttpApp}. */
export interface HttpOptions {
  pipeline: ToolPipeline;
  /** the port clients use in the Host header (checked against DNS rebinding) */
  port: () => number;
  logger: Logger;
  /** called once per tool call, for the one-line call log */
  onCall?: CallLogSink;
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
   * mounts routers right after the guards, before every route of this app: for a path no other route serves
   * whose requests should not walk the others first (`/mcp`: an MCP call is a tool call, bench/mcp.ts)
   */
  extendFirst?: (app: express.Express) => void;
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
  opts.extendFirst?.(app);

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

  if (opts.agent) mountApprovals(app, opts.agent, opts.onCall);
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
