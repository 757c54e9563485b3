import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type NextFunction, type Request, type Response } from 'express';
import { fail, type Envelope } from '../../core/envelope';
import type { ErrorCode } from '../../core/errors';
import type { Logger } from '../../core/log';
import type { Caller, InvokeOutcome, ToolPipeline } from '../../agent/pipeline';

/** Default port of the HTTP tool server (spec: localhost, port 8765). */
export const DEFAULT_PORT = 8765;
/** Largest accepted request body. */
export const MAX_BODY = '64mb';

/**
 * HTTP status for each failure code. Success is 200; a call waiting for approval is 202.
 * Documented in the README ("HTTP status codes").
 */
export const STATUS_BY_CODE: Partial<Record<ErrorCode, number>> = {
  INVALID_ARGUMENTS: 400,
  INVALID_JSON: 400,
  INVALID_POSITION: 400,
  MERGE_SAME_CODE: 400,
  UNKNOWN_FORMAT: 400,
  'AV_SEGMENT_NOT_CODED/INVALID_TIME_RANGE': 400,
  FORBIDDEN_HOST: 403,
  TOOL_NOT_FOUND: 404,
  CODE_NOT_FOUND: 404,
  SOURCE_NOT_FOUND: 404,
  SEGMENT_NOT_FOUND: 404,
  FOLDER_NOT_FOUND: 404,
  CATEGORY_NOT_FOUND: 404,
  CASE_NOT_FOUND: 404,
  'AV_SEGMENT_NOT_CODED/CODE_NOT_FOUND': 404,
  'AV_SEGMENT_NOT_REMOVED/NOT_FOUND': 404,
  'ANALYTICS_NOT_IMPORTED/FILE_NOT_FOUND': 404,
  DUPLICATE_NAME: 409,
  SOURCE_DUPLICATE_NAME: 409,
  FOLDER_NOT_CREATED: 409,
  FOLDER_NOT_EMPTY: 409,
  FOLDER_RENAME_FAILED: 409,
  CODE_HAS_SEGMENTS: 409,
  CATEGORY_CYCLE: 409,
  PROJECT_LOCKED: 409,
  'AV_SEGMENT_NOT_CODED/OVERLAPPING_SEGMENT': 409,
  UNSUPPORTED_MEDIA_TYPE: 415,
  SOURCE_IMPORT_FAILED: 422,
  IMPORT_FAILED: 422,
  EXPORT_FAILED: 422,
  'ANALYTICS_NOT_IMPORTED/NO_PROFILES': 422,
  NO_PROJECT: 503,
  'CASES_NOT_LISTED/NO_CONTEXT': 503,
  HANDLER_NOT_FOUND: 500,
  TOOL_EXECUTION_ERROR: 500,
  PROJECT_CORRUPT: 500,
};

/** The HTTP status of an outcome: 200 ok, 202 pending approval, else {@link STATUS_BY_CODE} (400 by default). */
export function statusOf(outcome: Pick<InvokeOutcome, 'status' | 'envelope'>): number {
  if (outcome.status === 'pending') return 202;
  if (outcome.envelope.success) return 200;
  return STATUS_BY_CODE[outcome.envelope.error_code] ?? 400;
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

/** The caller of an HTTP request: client name and coder from headers, one implicit session per client. */
function callerOf(req: Request): Caller {
  const client = (req.get('x-marginalia-client') ?? 'http-client').slice(0, 100);
  const user = (req.get('x-marginalia-user') ?? client).slice(0, 100);
  return { session_id: `http:${client}`, client_type: 'REST_CLIENT', client_name: client, user, correlation_id: req.get('x-correlation-id')?.slice(0, 100) };
}

function send(res: Response, status: number, body: Envelope | Record<string, unknown>): void {
  res.status(status).type('application/json').send(JSON.stringify(body));
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
    const port = opts.port();
    if (!isLoopbackHost(req.get('host'), port)) {
      send(res, 403, fail('FORBIDDEN_HOST', `Host "${req.get('host') ?? ''}" is not this server (DNS rebinding protection); use 127.0.0.1:${port}`));
      return;
    }
    if (!isAllowedOrigin(req.get('origin'), port)) {
      send(res, 403, fail('FORBIDDEN_HOST', `Origin "${req.get('origin') ?? ''}" may not call this server`));
      return;
    }
    next();
  });

  app.get('/', (_req, res) => {
    send(res, 200, { name: 'marginalia', version: opts.version, tools_endpoint: 'GET /tools', call_endpoint: 'POST /tools/{tool_name}', tool_count: opts.pipeline.listTools().length });
  });

  app.get('/tools', (_req, res) => {
    const tools = opts.pipeline.listTools();
    send(res, 200, { count: tools.length, tools });
  });

  app.post(
    '/tools/:name',
    (req: Request, res: Response, next: NextFunction) => {
      if (!req.is('application/json')) {
        send(res, 415, fail('UNSUPPORTED_MEDIA_TYPE', 'Send the body as JSON with the header Content-Type: application/json'));
        return;
      }
      next();
    },
    express.json({ limit: MAX_BODY, strict: false }),
    async (req: Request, res: Response) => {
      const name = String(req.params.name);
      const body: unknown = req.body;
      if (body === null || typeof body !== 'object' || Array.isArray(body)) {
        send(res, 400, fail('INVALID_ARGUMENTS', 'The body must be a JSON object {"arguments": {...}}'));
        return;
      }
      const extra = Object.keys(body).filter((k) => k !== 'arguments');
      if (extra.length > 0) {
        send(res, 400, fail('INVALID_ARGUMENTS', `Unexpected body member(s) ${extra.join(', ')}: send {"arguments": {...}}`));
        return;
      }
      const argsValue = (body as { arguments?: unknown }).arguments;
      if (argsValue !== undefined && (argsValue === null || typeof argsValue !== 'object' || Array.isArray(argsValue))) {
        send(res, 400, fail('INVALID_ARGUMENTS', '"arguments" must be a JSON object'));
        return;
      }
      const caller = callerOf(req);
      const outcome = await opts.pipeline.invoke(name, argsValue ?? {}, caller);
      const status = statusOf(outcome);
      opts.onCall?.(
        `${new Date().toISOString()} ${caller.client_name} ${name} ${status} ${outcome.envelope.success ? 'ok' : outcome.envelope.error_code} ${outcome.durationMs.toFixed(2)}ms`,
        outcome,
      );
      send(res, status, outcome.envelope);
    },
  );

  app.use((req: Request, res: Response) => {
    send(res, 404, fail('TOOL_NOT_FOUND', `No route ${req.method} ${req.path}. Use GET /tools or POST /tools/{tool_name}.`));
  });

  // express's error handler signature needs all four parameters
  app.use((err: Error & { type?: string; status?: number }, _req: Request, res: Response, _next: NextFunction) => {
    if (err.type === 'entity.parse.failed') send(res, 400, fail('INVALID_JSON', `The body is not valid JSON: ${err.message}`));
    else if (err.type === 'entity.too.large') send(res, 413, fail('INVALID_ARGUMENTS', `The body is larger than ${MAX_BODY}`));
    else if (err.status && err.status >= 400 && err.status < 500) send(res, err.status, fail('INVALID_ARGUMENTS', err.message));
    else {
      opts.logger.error('HTTP request failed', err);
      send(res, 500, fail('TOOL_EXECUTION_ERROR', 'The request failed unexpectedly'));
    }
  });
  return app;
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
  const server = http.createServer(app);
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
