import { createMcpHandler, type McpHttpHandler, type McpServer } from '@modelcontextprotocol/server';
import { toNodeHandler } from '@modelcontextprotocol/node';
import express from 'express';
import { isToolError } from '../../core/errors';
import { httpStatusOf, JSONRPC_ERROR, mcpErrorOf } from '../../agent/errorClasses';
import { charsetOf, parseStrictJson } from '../../core/strictJson';
import type { Disposable } from '../../core/lifecycle';
import type { Logger } from '../../core/log';
import { silentLogger } from '../../core/log';
import type { AgentContext, Identity } from '../../agent/agentContext';
import { RESEARCHER_OWNER } from '../../agent/agentCredentials';
import type { ContextBuilder } from '../../agent/contextBuilder';
import type { EventSubscription } from '../../agent/eventHub';
import type { Caller } from '../../agent/pipeline';
import type { ClientType } from '../../agent/sessions';
import { bindCaller, REMOTE_CLIENT_TYPES, type CallLogSink } from '../../agent/kit';
import { createMcpServerFor, type McpCallerHints } from './mcpServer';
import { McpTaskStore } from './mcpTasks';
import { resourcesTouchedBy } from './resourceEvents';

/** Where the MCP endpoint is mounted on the HTTP tool server. */
export const MCP_PATH = '/mcp';
/** Largest MCP request body (the same bound as the HTTP tool interface's 64 MB). */
export const MCP_MAX_BODY_BYTES = 64 * 1024 * 1024;

/** A 2025-era server instance kept for reuse, and the request it serves now. */
interface PooledServer {
  server: McpServer;
  request: { headers?: Headers };
  inUse: boolean;
}
/** Idle 2025-era instances kept at most (one per concurrent request served before). */
const LEGACY_POOL_MAX = 8;

/** Options of {@link createMcpHttpEndpoint}. */
export interface McpHttpOptions {
  agent: AgentContext;
  context: ContextBuilder;
  /** `serverInfo.version` */
  version: string;
  logger?: Logger;
  /**
   * FOR THE CONFORMANCE RUN ONLY (`marginalia serve --mcp-open`): requests to `/mcp` without an
   * `Authorization` header act with this value (`Bearer <agent token>`), so they are agent calls under
   * the full trust layer. The HTTP server must then let `/mcp` through without a token (see
   * `HttpOptions.unauthenticatedPaths`); Host and Origin are still checked.
   */
  openAuthorization?: string;
  /** one call-log line per tools/call (see McpServerForOptions.onCall) */
  onCall?: CallLogSink;
}

/** The MCP Streamable HTTP endpoint: mount it on the express app; dispose it when the server stops. */
export interface McpHttpEndpoint extends Disposable {
  /** the SDK handler (its `notify` reaches 2026-07-28 `subscriptions/listen` streams) */
  readonly handler: McpHttpHandler;
  /** Mounts `ALL /mcp` on `app` (call it from `HttpOptions.extend`, behind the Host/Origin/bearer guards). */
  mount(app: express.Express): void;
}

function header(headers: Headers | undefined, name: string): string | undefined {
  const v = headers?.get(name);
  return v === null || v === undefined || v === '' ? undefined : v;
}

/**
 * The caller of an MCP-over-HTTP request, like the HTTP tool interface's `callerOf`: the session named by
 * `X-Marginalia-Session` (its token must match), or the implicit session of the bearer token and client
 * name, which is `X-Marginalia-Client`, else the MCP `clientInfo.name` (2026-07-28 requests carry it in
 * `_meta`; 2025 requests only on `initialize`), else `mcp-client`. The client type comes from
 * `X-Marginalia-Client-Type` (default CUSTOM; never LOCAL_UI).
 * Errors (thrown ToolError): UNAUTHORIZED, SESSION_NOT_FOUND, SESSION_EXPIRED, SESSION_LIMIT.
 */
export function mcpHttpCaller(agent: AgentContext, headers: Headers | undefined, hints: McpCallerHints, openAuthorization?: string): Caller {
  // an unknown or LOCAL_UI X-Marginalia-Client-Type labels the implicit session CUSTOM (headers are hints here, as on HTTP)
  const typeHeader = header(headers, 'x-marginalia-client-type');
  const clientType = typeHeader !== undefined && (REMOTE_CLIENT_TYPES as readonly string[]).includes(typeHeader) ? (typeHeader as ClientType) : 'CUSTOM';
  return bindCaller(agent, {
    authorization: header(headers, 'authorization') ?? openAuthorization,
    session_id: header(headers, 'x-marginalia-session'),
    client_name: header(headers, 'x-marginalia-client') ?? hints.clientName ?? 'mcp-client',
    client_type: clientType,
    user: header(headers, 'x-marginalia-user'),
    model: header(headers, 'x-marginalia-model'),
    correlation_id: header(headers, 'x-correlation-id'),
  });
}

/**
 * A `subscriptions/listen` stream ends when its session ends (issue 14 item 3: the researcher's DELETE
 * /sessions/{id} or end_session, like a revocation): the session `X-Marginalia-Session` names, else the
 * credential's implicit session (its tool calls over MCP open it; listening alone opens none), whenever it
 * ends. An idle session's expiry leaves the stream open (the client listens, it does not call).
 */
function closeWithSession(agent: AgentContext, req: express.Request, res: express.Response, who: Identity): void {
  const named = req.get('x-marginalia-session');
  const owner = who.role === 'researcher' ? RESEARCHER_OWNER : who.agent;
  const watch = agent.onSessionEnded((s, reason) => {
    if (reason === 'expired') return;
    if (named ? s.session_id === named : s.implicit && s.owner === owner) res.destroy();
  });
  res.once('close', () => watch.dispose());
}

/**
 * MCP over Streamable HTTP at `/mcp` (MCP 2025-11-25 "Transports" and 2026-07-28 "Streamable HTTP"),
 * through the v2 SDK's `createMcpHandler`, which serves both revisions from one factory:
 * - 2025-11-25 and earlier (what VS Code speaks): the `initialize` handshake, served statelessly per
 *   request (no `Mcp-Session-Id`; `GET` and `DELETE` answer 405), so these clients get no push
 *   notifications and re-read instead;
 * - 2026-07-28: `server/discover`, the per-request `_meta` envelope, `Mcp-Method`/`Mcp-Name` header
 *   validation (-32020), `ttlMs`/`cacheScope` on list and read results, and `subscriptions/listen`,
 *   on which committed events arrive as `notifications/resources/updated` and `list_changed`.
 * Host, Origin and the bearer token are checked by the HTTP server's guards before a request gets here.
 * Each request's caller (session) comes from {@link mcpHttpCaller}; tool calls then run through the one
 * pipeline.
 */
export function createMcpHttpEndpoint(opts: McpHttpOptions): McpHttpEndpoint {
  const logger = opts.logger ?? silentLogger;
  // the tasks of held calls (2025 era): one store for every stateless request of this endpoint
  const tasks = new McpTaskStore(opts.agent);
  const build = (era: 'legacy' | 'modern', request: { headers?: Headers }) =>
    createMcpServerFor(opts.agent, (hints) => mcpHttpCaller(opts.agent, request.headers, hints, opts.openAuthorization), {
      version: opts.version,
      context: opts.context,
      era,
      subscribe: era === 'modern',
      logger,
      onCall: opts.onCall,
      tasks: era === 'legacy' ? tasks : undefined,
    });
  // 2025-era requests are served statelessly by a server instance each. Building one registers every tool,
  // resource and prompt (~0.4 ms, and garbage per request; bench/mcp.ts), so a finished instance goes back to
  // a small pool and serves a later request: only its request (the headers its caller comes from) changes.
  // An instance that served `initialize` holds that client's name and capabilities and is not reused.
  // 2026-07-28 instances carry per-request protocol state the SDK seeds, so each is still built fresh.
  const legacyPool: PooledServer[] = [];
  let disposed = false;
  const legacyServer = (headers: Headers | undefined): McpServer => {
    const pooled = legacyPool.pop();
    if (pooled) {
      pooled.request.headers = headers;
      pooled.inUse = true;
      return pooled.server;
    }
    const entry: PooledServer = { request: { headers }, inUse: true, server: undefined as unknown as McpServer };
    entry.server = build('legacy', entry.request);
    entry.server.server.onclose = () => {
      if (!entry.inUse) return;
      entry.inUse = false;
      entry.request.headers = undefined;
      if (!disposed && legacyPool.length < LEGACY_POOL_MAX && entry.server.server.getClientVersion() === undefined) legacyPool.push(entry);
    };
    return entry.server;
  };
  const handler = createMcpHandler(
    ({ era, requestInfo }) => (era === 'legacy' ? legacyServer(requestInfo?.headers) : build(era, { headers: requestInfo?.headers })),
    {
      legacy: 'stateless',
      maxRequestBodySize: MCP_MAX_BODY_BYTES,
      onerror: (e) => logger.warn(`MCP: ${e.message}`),
    },
  );
  const subscription: EventSubscription = opts.agent.hub.subscribe(
    (d) => {
      if (d.kind !== 'event') {
        handler.notify.resourcesChanged();
        return;
      }
      const changes = resourcesTouchedBy([d.event]);
      for (const uri of changes.updated) handler.notify.resourceUpdated(uri);
      if (changes.listChanged) handler.notify.resourcesChanged();
    },
    { patterns: ['*'] },
  );
  const node = toNodeHandler(handler, { maxRequestBodySize: MCP_MAX_BODY_BYTES, onerror: (e) => logger.error('MCP request failed', e) });
  return {
    handler,
    mount(app) {
      app.all(MCP_PATH, (req, res, next) => {
        // a long-lived answer (a subscriptions/listen stream) of an agent whose credential is revoked ends at once (issue 14 item 2)
        const who = opts.agent.identify(req.get('authorization'));
        if (who?.role === 'agent') {
          const watch = opts.agent.credentials.onRevoked((name) => {
            if (name === who.agent) res.destroy();
          });
          res.once('close', () => watch.dispose());
        }
        if (req.method !== 'POST') {
          node(req, res).catch(next);
          return;
        }
        postMcp(opts, node, who, req, res, next);
      });
    },
    async dispose() {
      disposed = true;
      legacyPool.length = 0;
      subscription.close();
      tasks.dispose();
      await handler.close();
    },
  };
}

/** A JSON-RPC error answer written before the SDK sees the request (id null: the request could not be read). */
function rpcError(res: express.Response, status: number, code: number, message: string, data: Record<string, unknown>): void {
  res
    .status(status)
    .type('application/json')
    .send(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code, message, data } }));
}

const rawBody = express.raw({ type: () => true, limit: MCP_MAX_BODY_BYTES });

/**
 * A POST to `/mcp`: the body is read and parsed here, strictly, then handed to the SDK's node handler `node`
 * parsed; a `subscriptions/listen` stream of `who` ends with its session ({@link closeWithSession}).
 */
function postMcp(
  opts: McpHttpOptions,
  node: (req: express.Request, res: express.Response, parsed?: unknown) => Promise<void>,
  who: Identity | null,
  req: express.Request,
  res: express.Response,
  next: express.NextFunction,
): void {
  // The body is read and parsed here, strictly (src/core/strictJson.ts: valid UTF-8 or the declared
  // charset, no lone surrogate escape, no duplicated key), and handed to the SDK parsed; a body that
  // fails is a JSON-RPC parse error (-32700, HTTP 400, data.error_code INVALID_JSON with the byte
  // offset) and reaches no server instance.
  rawBody(req, res, (err?: unknown) => {
    if (err) {
      const e = err as { status?: number; message?: string };
      const status = e.status ?? 400;
      rpcError(res, status, status === 413 ? -32000 : -32700, e.message ?? 'The body could not be read', {
        error_code: status === 415 ? 'UNSUPPORTED_MEDIA_TYPE' : 'INVALID_ARGUMENTS',
      });
      return;
    }
    const bytes: unknown = req.body;
    let parsed: unknown;
    try {
      parsed = Buffer.isBuffer(bytes) ? parseStrictJson(bytes, { charset: charsetOf(req.get('content-type')) }) : undefined;
    } catch (e) {
      if (!isToolError(e)) return next(e);
      opts.agent.auditRefusal({
        route: `POST ${MCP_PATH}`,
        error_code: e.code,
        client_name: req.get('x-marginalia-client'),
        correlation_id: req.get('x-correlation-id'),
        decision: 'failed',
      });
      // the status and JSON-RPC code of the one error classification (INVALID_JSON 400, UNSUPPORTED_MEDIA_TYPE 415; both -32700)
      const shape = mcpErrorOf(e.code);
      rpcError(res, httpStatusOf(e.code), shape.kind === 'jsonrpc' ? shape.code : JSONRPC_ERROR.PARSE_ERROR, `Parse error: ${e.message}`, {
        error_code: e.code,
        ...(e.details as Record<string, unknown> | undefined),
      });
      return;
    }
    if (parsed === undefined) {
      rpcError(res, 400, -32700, 'Parse error: the body is empty; send a JSON-RPC message', { error_code: 'INVALID_JSON' });
      return;
    }
    if (who !== null && typeof parsed === 'object' && parsed !== null && (parsed as { method?: unknown }).method === 'subscriptions/listen')
      closeWithSession(opts.agent, req, res, who);
    node(req, res, parsed).catch(next);
  });
}
