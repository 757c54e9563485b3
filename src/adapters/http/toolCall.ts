/**
 * `POST /tools/{name}`: the caller of a request (session binding through the adapter kit), the tool call itself, and
 * the fast path that answers a plain call without express (half of a small call's server time; bench/RESULTS.md).
 */
import type * as http from 'node:http';
import { fail, type Envelope } from '../../core/envelope';
import { isToolError } from '../../core/errors';
import { envelopeText, jsonText } from '../../core/sharedResult';
import { parseStrictJson } from '../../core/strictJson';
import type { AgentContext } from '../../agent/agentContext';
import { httpStatusOf } from '../../agent/errorClasses';
import { bindCaller, logCall, REMOTE_CLIENT_TYPES } from '../../agent/kit';
import type { Caller } from '../../agent/pipeline';
import type { ClientType } from '../../agent/sessions';
import { auditRefused, errorReply, guardRequest, header, statusOf, type Reply } from './guards';
import type { HttpOptions } from './httpServer';

const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * The UTF-8 bytes of a reply body per shared result (src/core/sharedResult.ts): a memoized read answers many
 * calls with the same frozen `data`, whose JSON text is written once; its bytes are encoded once too. The entry
 * is reused only while `jsonText(data)` is the same text (the same string for a shared result, else compared).
 */
const bytesOfData = new WeakMap<object, { text: string; bytes: Buffer }>();

/** `envelopeText(body)` as UTF-8 bytes, encoded once per shared `data` (see {@link bytesOfData}). */
export function replyBytes(body: Envelope | Record<string, unknown>): Buffer {
  const data = (body as { data?: unknown }).data;
  if (body.success !== true || data === null || typeof data !== 'object' || !Object.isFrozen(data)) return Buffer.from(envelopeText(body), 'utf8');
  const keys = Object.keys(body);
  if (keys.length !== 2 || keys[0] !== 'success' || keys[1] !== 'data') return Buffer.from(envelopeText(body), 'utf8');
  const text = jsonText(data);
  const hit = bytesOfData.get(data);
  if (hit !== undefined && hit.text === text) return hit.bytes;
  const bytes = Buffer.from(`{"success":true,"data":${text}}`, 'utf8');
  bytesOfData.set(data, { text, bytes });
  return bytes;
}

/**
 * The caller of an HTTP request. Without the agent layer: client name and coder from headers. With it:
 * the session named by `X-Marginalia-Session` (its token must match), or the implicit session of the
 * token and `X-Marginalia-Client` (client type from `X-Marginalia-Client-Type`, default REST_CLIENT).
 * Errors (thrown): UNAUTHORIZED, SESSION_NOT_FOUND, SESSION_LIMIT.
 */
export function callerOf(req: http.IncomingMessage, agent: AgentContext | undefined): Caller {
  const client = (header(req, 'x-marginalia-client') ?? 'http-client').slice(0, 100);
  if (!agent) {
    const user = (header(req, 'x-marginalia-user') ?? client).slice(0, 100);
    return {
      session_id: `http:${client}`,
      client_type: 'REST_CLIENT',
      client_name: client,
      user,
      correlation_id: header(req, 'x-correlation-id')?.slice(0, 100),
    };
  }
  // an unknown or LOCAL_UI X-Marginalia-Client-Type labels the implicit session REST_CLIENT (headers are hints here)
  const typeHeader = header(req, 'x-marginalia-client-type');
  const clientType = typeHeader !== undefined && (REMOTE_CLIENT_TYPES as readonly string[]).includes(typeHeader) ? (typeHeader as ClientType) : 'REST_CLIENT';
  return bindCaller(agent, {
    authorization: header(req, 'authorization'),
    session_id: header(req, 'x-marginalia-session'),
    client_name: client,
    client_type: clientType,
    user: header(req, 'x-marginalia-user'),
    model: header(req, 'x-marginalia-model'),
    correlation_id: header(req, 'x-correlation-id'),
  });
}

/**
 * `POST /tools/{name}` once the guards passed and the body is parsed (`body`: the parsed JSON, `{}` for an
 * empty body): checks the body's shape (`{"arguments": {...}}`, else 400 INVALID_ARGUMENTS, audited as
 * failed), resolves the caller ({@link callerOf}: 401 UNAUTHORIZED, SESSION_NOT_FOUND, 429 SESSION_LIMIT),
 * runs the pipeline and writes the call-log line. Shared by the express route and the fast path.
 */
export async function answerToolCall(opts: HttpOptions, req: http.IncomingMessage, name: string, body: unknown): Promise<Reply> {
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
  logCall(opts.onCall, caller, name, status, outcome);
  const headers: Record<string, string> = {};
  if (retry !== undefined) headers['Retry-After'] = String(Math.ceil(retry / 1000));
  // a tool's own 401 (SESSION_NOT_FOUND for a session it was asked about) names the scheme like the guard's
  if (status === 401) headers['WWW-Authenticate'] = 'Bearer realm="marginalia"';
  return { status, body: outcome.envelope, headers: Object.keys(headers).length > 0 ? headers : undefined };
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
export function fastToolCall(req: http.IncomingMessage, res: http.ServerResponse, opts: HttpOptions): boolean {
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
    const json = replyBytes(r.body);
    if (r.headers) res.writeHead(r.status, { ...r.headers, 'Content-Type': JSON_TYPE, 'Content-Length': json.length });
    else res.writeHead(r.status, ['Content-Type', JSON_TYPE, 'Content-Length', String(json.length)]);
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
