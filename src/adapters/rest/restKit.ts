/**
 * What the REST routes share (./restAdapter.ts, ./eventRoutes.ts, ./sessionRoutes.ts): their options and limits,
 * query helpers, and the route kit (the caller of a request, a tool call logged through the adapter kit's call
 * log, a reply with its status and Retry-After).
 */
import type { NextFunction, Request, Response } from 'express';
import { ok } from '../../core/envelope';
import { isToolError, ToolError, type ErrorCode } from '../../core/errors';
import type { Logger } from '../../core/log';
import type { AgentContext } from '../../agent/agentContext';
import { logCall, type CallLogSink } from '../../agent/kit';
import type { Caller, InvokeOutcome, ToolPipeline } from '../../agent/pipeline';
import { callerOf, send, sendError, statusOf, strictJsonBody } from '../http/httpServer';

/** Keep-alive comment interval of `GET /events/stream`, milliseconds. */
export const SSE_KEEP_ALIVE_MS = 15_000;
/** Reconnection delay the SSE stream asks EventSource clients to wait (`retry:`), milliseconds. */
export const SSE_RETRY_MS = 2_000;
/** Most concurrent SSE streams per server. */
export const MAX_SSE_STREAMS = 100;
/** Default page of `GET /events/history` (events). */
export const HISTORY_DEFAULT_LIMIT = 100;
/** Largest page of `GET /events/history` (events). */
export const HISTORY_MAX_LIMIT = 1000;

/**
 * The `qda://` resources the agent context offers (agent-context spec, section 2, with Marginalia's
 * scheme), as `POST /session/create` lists them in `capabilities.resources`.
 */
export const RESOURCE_URIS: readonly string[] = [
  'qda://project/state',
  'qda://project/briefing',
  'qda://project/statistics',
  'qda://project/settings',
  'qda://codes',
  'qda://codes/{id}',
  'qda://codes/{id}/segments',
  'qda://categories',
  'qda://categories/{id}',
  'qda://sources',
  'qda://sources/{id}',
  'qda://sources/{id}/content',
  'qda://sources/{id}/segments',
  'qda://segments?code_id={id}',
  'qda://segments?source_id={id}',
  'qda://segments?case_id={id}',
  'qda://cases',
  'qda://cases/{id}',
  'qda://reports',
  'qda://reports/{id}',
];

/** Options of {@link mountRest}. */
export interface RestOptions {
  agent: AgentContext;
  pipeline: ToolPipeline;
  logger: Logger;
  /** called once per tool call, for the one-line call log (same format as `POST /tools/...`) */
  onCall?: CallLogSink;
  /** the protocols this server speaks, for `capabilities.protocols` (default http, rest, sse, websocket) */
  protocols?: readonly string[];
  /** keep-alive comment interval of SSE streams (default {@link SSE_KEEP_ALIVE_MS}) */
  keepAliveMs?: number;
}

export type Query = Record<string, unknown>;

/** Refuses query parameters a route does not take. Errors: INVALID_ARGUMENTS naming them. */
export function refuseUnknownQuery(query: Query, allowed: readonly string[]): void {
  const extra = Object.keys(query).filter((k) => !allowed.includes(k));
  if (extra.length > 0)
    throw new ToolError(
      'INVALID_ARGUMENTS',
      `Unknown query parameter(s) ${extra.join(', ')}${allowed.length > 0 ? `; this route takes ${allowed.join(', ')}` : '; this route takes none'}`,
    );
}

/** The query parameter `key` given once (undefined when absent). Errors: INVALID_ARGUMENTS when repeated. */
export function single(query: Query, key: string): string | undefined {
  const v = query[key];
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw new ToolError('INVALID_ARGUMENTS', `Give ${key} once, as a plain value`);
  return v;
}

/** A query value as a tool argument: digits become a number, anything else stays a string for the tool's validation to report. */
export function intArg(value: string | undefined): number | string | undefined {
  if (value === undefined || value === '') return undefined;
  return /^\d{1,15}$/.test(value) ? Number(value) : value;
}

/** What the REST routes share: the agent layer, open streams, the JSON parser, and the route helpers below. */
export function restKit(opts: RestOptions) {
  const { agent, pipeline } = opts;
  const streams = new Set<() => void>();
  // strict JSON (valid UTF-8, no lone surrogate escape, no duplicated key): the same parser as POST /tools
  const json = strictJsonBody();

  /**
   * Audits a request this adapter refused before any tool ran (unknown route or parameter, bad session):
   * session and credential problems as `denied`, the rest as `failed`.
   */
  const auditFailure = (req: Request, code: ErrorCode, caller?: Caller) =>
    agent.auditRefusal({
      route: `${req.method} ${req.path}`,
      error_code: code,
      client_name: caller?.client_name ?? req.get('x-marginalia-client'),
      session_id: caller?.session_id,
      correlation_id: req.get('x-correlation-id'),
      decision: ['UNAUTHORIZED', 'SESSION_NOT_FOUND', 'SESSION_EXPIRED', 'SESSION_LIMIT'].includes(code) ? 'denied' : 'failed',
    });

  /** Runs `fn` with the request's caller, turning thrown ToolErrors into their envelope (and an audit line). */
  const route =
    (fn: (req: Request, res: Response, caller: Caller) => Promise<void> | void, needsCaller = true) =>
    async (req: Request, res: Response, next: NextFunction) => {
      let caller: Caller | undefined;
      try {
        if (needsCaller) caller = callerOf(req, agent);
        await fn(req, res, caller as Caller);
      } catch (e) {
        if (!isToolError(e)) return next(e);
        // session and token refusals of the agent context are audited there already
        if (!agent.wasAudited(e)) auditFailure(req, e.code, caller);
        sendError(res, e);
      }
    };

  /** Calls one tool as `caller` and returns the outcome (logged like POST /tools). */
  const call = async (caller: Caller, tool: string, args: Record<string, unknown>): Promise<InvokeOutcome> => {
    const outcome = await agent.call(caller, tool, args);
    const status = statusOf(outcome);
    logCall(opts.onCall, caller, tool, status, outcome);
    return outcome;
  };

  /** Sends an outcome with its status (and Retry-After when rate-limited, or held: its poll_after_ms). */
  const reply = (res: Response, outcome: InvokeOutcome, data?: unknown) => {
    const env = outcome.envelope;
    const retry = !env.success
      ? (env.details as { retry_after_ms?: number } | undefined)?.retry_after_ms
      : outcome.status === 'pending'
        ? (env.data as { poll_after_ms?: number } | undefined)?.poll_after_ms
        : undefined;
    if (retry !== undefined) res.set('Retry-After', String(Math.ceil(retry / 1000)));
    send(res, statusOf(outcome), env.success && data !== undefined ? ok(data) : env);
  };

  /** A state route: one read tool, its envelope as is. */
  const state = (tool: string, args: (req: Request) => Record<string, unknown>, allowed: readonly string[] = []) =>
    route(async (req, res, caller) => {
      refuseUnknownQuery(req.query as Query, allowed);
      reply(res, await call(caller, tool, args(req)));
    });
  return { opts, agent, pipeline, streams, json, auditFailure, route, call, reply, state };
}

export type RestKit = ReturnType<typeof restKit>;
