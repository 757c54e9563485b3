import express, { type NextFunction, type Request, type Response } from 'express';
import { fail, ok, type Envelope } from '../../core/envelope';
import { isToolError, ToolError, type ErrorCode } from '../../core/errors';
import type { Disposable } from '../../core/lifecycle';
import type { Logger } from '../../core/log';
import type { EventRecord } from '../../domain/events';
import type { AgentContext } from '../../agent/agentContext';
import type { Caller, InvokeOutcome, ToolListing, ToolPipeline } from '../../agent/pipeline';
import { CLIENT_TYPES, type ClientType } from '../../agent/sessions';
import { TRUST_LEVELS, type TrustLevel } from '../../agent/config';
import { COMMAND_CATEGORY_OF_GROUP, COMMAND_ROUTES, STATE_TOOLS, type CommandRoute } from '../../tools/restRoutes';
import { callerOf, send, sendError, statusOf, strictJsonBody } from '../http/httpServer';
import { httpStatusOf } from '../../agent/errorClasses';
import { parsePatterns, parseSeq, ResumableSubscription } from './eventStreams';

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
  onCall?: (line: string, outcome: InvokeOutcome) => void;
  /** the protocols this server speaks, for `capabilities.protocols` (default http, rest, sse, websocket) */
  protocols?: readonly string[];
  /** keep-alive comment interval of SSE streams (default {@link SSE_KEEP_ALIVE_MS}) */
  keepAliveMs?: number;
}

type Query = Record<string, unknown>;

function refuseUnknownQuery(query: Query, allowed: readonly string[]): void {
  const extra = Object.keys(query).filter((k) => !allowed.includes(k));
  if (extra.length > 0)
    throw new ToolError(
      'INVALID_ARGUMENTS',
      `Unknown query parameter(s) ${extra.join(', ')}${allowed.length > 0 ? `; this route takes ${allowed.join(', ')}` : '; this route takes none'}`,
    );
}

function single(query: Query, key: string): string | undefined {
  const v = query[key];
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw new ToolError('INVALID_ARGUMENTS', `Give ${key} once, as a plain value`);
  return v;
}

/** A query value as a tool argument: digits become a number, anything else stays a string for the tool's validation to report. */
function intArg(value: string | undefined): number | string | undefined {
  if (value === undefined || value === '') return undefined;
  return /^\d{1,15}$/.test(value) ? Number(value) : value;
}

/**
 * Parses the segment filter of `GET /state/segments`: `filter=code_id:3,source_id:2` (pairs separated by
 * commas, key and value by `:` or `=`), and/or the separate query parameters `code_id`, `source_id`,
 * `case_id`. The same key given twice with different values is an error. Errors: INVALID_ARGUMENTS.
 */
export function parseSegmentFilter(query: Query): Record<'code_id' | 'source_id' | 'case_id', number | string | undefined> {
  const keys = ['code_id', 'source_id', 'case_id'] as const;
  const out: Record<(typeof keys)[number], number | string | undefined> = { code_id: undefined, source_id: undefined, case_id: undefined };
  const put = (key: string, value: string) => {
    if (!(keys as readonly string[]).includes(key))
      throw new ToolError('INVALID_ARGUMENTS', `Unknown segment filter "${key.slice(0, 50)}": use code_id, source_id or case_id`);
    const k = key as (typeof keys)[number];
    const v = intArg(value.trim());
    if (v === undefined) throw new ToolError('INVALID_ARGUMENTS', `The segment filter ${k} needs a value`);
    if (out[k] !== undefined && out[k] !== v) throw new ToolError('INVALID_ARGUMENTS', `The segment filter ${k} is given twice with different values`);
    out[k] = v;
  };
  const filter = single(query, 'filter');
  if (filter !== undefined) {
    for (const part of filter.split(',')) {
      if (!part.trim()) continue;
      const m = /^\s*([a-z_]+)\s*[:=]\s*(.*)$/.exec(part);
      if (!m)
        throw new ToolError(
          'INVALID_ARGUMENTS',
          `Invalid segment filter "${part.slice(0, 50)}": write key:value pairs separated by commas, e.g. filter=code_id:3,source_id:2`,
        );
      put(m[1] as string, m[2] as string);
    }
  }
  for (const k of keys) {
    const v = single(query, k);
    if (v !== undefined) put(k, v);
  }
  return out;
}

/**
 * The tool a command route runs: `{tool}` when found, or why not. Named routes ({@link COMMAND_ROUTES})
 * take the first candidate the registry holds (or pick by their `by` field); any other
 * `<category>/<tool>` must name a registry tool of that category ({@link COMMAND_CATEGORY_OF_GROUP}).
 */
export function resolveCommand(
  category: string,
  name: string,
  body: Record<string, unknown>,
  tools: readonly ToolListing[],
): { tool: string; args: Record<string, unknown> } | { status: number; envelope: Envelope } {
  const byName = new Map(tools.map((t) => [t.name, t]));
  const route: CommandRoute | undefined = Object.prototype.hasOwnProperty.call(COMMAND_ROUTES, `${category}/${name}`)
    ? COMMAND_ROUTES[`${category}/${name}`]
    : undefined;
  if (route) {
    let candidates = route.tools;
    let args = body;
    if (route.by) {
      const choice = body[route.by.field];
      const options = Object.keys(route.by.tools);
      if (typeof choice !== 'string' || !Object.prototype.hasOwnProperty.call(route.by.tools, choice)) {
        return {
          status: httpStatusOf('INVALID_ARGUMENTS'),
          envelope: fail('INVALID_ARGUMENTS', `${route.by.field} must be one of ${options.join(', ')}`, {
            issues: [{ path: route.by.field, message: `one of ${options.join(', ')}`, code: 'invalid_value' }],
          }),
        };
      }
      candidates = route.by.tools[choice] ?? [];
      const { [route.by.field]: _picked, ...rest } = body;
      args = rest;
    }
    const tool = candidates.find((t) => byName.has(t));
    if (!tool) {
      return {
        status: httpStatusOf('HANDLER_NOT_FOUND'),
        envelope: fail(
          'HANDLER_NOT_FOUND',
          `POST /commands/${category}/${name} needs the tool ${candidates.join(' or ')}, which this server does not have yet`,
          { route: `${category}/${name}`, tools: candidates },
        ),
      };
    }
    return { tool, args };
  }
  const tool = byName.get(name);
  if (!tool)
    return {
      status: httpStatusOf('TOOL_NOT_FOUND'),
      envelope: fail('TOOL_NOT_FOUND', `No command ${category}/${name}: GET /commands lists the routes, GET /tools the tools`),
    };
  const right = COMMAND_CATEGORY_OF_GROUP[tool.group];
  if (right !== category)
    return {
      status: httpStatusOf('TOOL_NOT_FOUND'),
      envelope: fail('TOOL_NOT_FOUND', `${name} is a ${right} command: POST /commands/${right}/${name}`, { path: `/commands/${right}/${name}` }),
    };
  return { tool: name, args: body };
}

/**
 * Mounts the REST adapter of the agent-context spec (section 4) on the HTTP tool server's express app
 * (after its Host, Origin, bearer-token and JSON guards):
 * - `GET /commands`; `POST /commands/{category}/{name}`: a tool through the pipeline (trust, approvals,
 *   rate limits and audit apply), answering the envelope with 200, 202 (pending approval), 501
 *   (HANDLER_NOT_FOUND: the route's tool does not exist yet) or the error's status;
 * - `GET /state/project|codes|codes/{id}|sources|sources/{id}/content|segments|cases`: read tools;
 * - `GET /events/stream` (server-sent events) and `GET /events/history`;
 * - `POST /session/create|destroy|heartbeat`.
 * Returns a Disposable that ends every open event stream.
 */
export function mountRest(app: express.Express, opts: RestOptions): Disposable {
  const kit = restKit(opts);
  mountCommands(app, kit);
  mountState(app, kit);
  mountEvents(app, kit);
  mountSessions(app, kit);
  const { streams } = kit;
  return {
    dispose: () => {
      for (const end of [...streams]) end();
    },
  };
}

/** What the REST routes share: the agent layer, open streams, the JSON parser, and the route helpers below. */
function restKit(opts: RestOptions) {
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
    opts.onCall?.(
      `${new Date().toISOString()} ${caller.client_name} ${tool} ${status} ${outcome.envelope.success ? 'ok' : outcome.envelope.error_code} ${outcome.durationMs.toFixed(2)}ms`,
      outcome,
    );
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

type RestKit = ReturnType<typeof restKit>;

/** `GET /commands` and `POST /commands/{category}/{name}`. */
function mountCommands(app: express.Express, kit: RestKit): void {
  const { pipeline, auditFailure, route, call, reply, json } = kit;
  // ---- commands ----------------------------------------------------------------------------------

  app.get(
    '/commands',
    route((_req, res) => {
      const tools = pipeline.listTools();
      const routes = Object.entries(COMMAND_ROUTES).map(([key, r]) => {
        const resolved = r.by
          ? Object.fromEntries(Object.entries(r.by.tools).map(([v, c]) => [v, c.find((t) => tools.some((x) => x.name === t)) ?? null]))
          : (r.tools.find((t) => tools.some((x) => x.name === t)) ?? null);
        return {
          method: 'POST',
          path: `/commands/${key}`,
          summary: r.summary,
          tool: r.by ? undefined : resolved,
          by: r.by ? { field: r.by.field, tools: resolved } : undefined,
          available: r.by ? Object.values(resolved as Record<string, string | null>).some((t) => t !== null) : resolved !== null,
        };
      });
      const generic = tools.map((t) => `/commands/${COMMAND_CATEGORY_OF_GROUP[t.group]}/${t.name}`);
      send(res, 200, ok({ routes, generic: { method: 'POST', path: '/commands/{category}/{tool}', count: generic.length, paths: generic } }));
    }, false),
  );

  app.post(
    '/commands/:category/:name',
    ...json,
    route(async (req, res, caller) => {
      refuseUnknownQuery(req.query as Query, []);
      const body: unknown = req.body ?? {};
      if (body === null || typeof body !== 'object' || Array.isArray(body))
        throw new ToolError('INVALID_ARGUMENTS', 'The body must be a JSON object: the arguments, or {"arguments": {...}}');
      const keys = Object.keys(body);
      const wrapped = keys.length === 1 && keys[0] === 'arguments';
      const args = wrapped ? (body as { arguments: unknown }).arguments : body;
      if (args === null || typeof args !== 'object' || Array.isArray(args)) throw new ToolError('INVALID_ARGUMENTS', '"arguments" must be a JSON object');
      const resolved = resolveCommand(String(req.params.category), String(req.params.name), args as Record<string, unknown>, pipeline.listTools());
      if ('envelope' in resolved) {
        if (!resolved.envelope.success) auditFailure(req, resolved.envelope.error_code, caller);
        send(res, resolved.status, resolved.envelope);
        return;
      }
      reply(res, await call(caller, resolved.tool, resolved.args));
    }),
  );
}

/** The `GET /state/...` read routes. */
function mountState(app: express.Express, kit: RestKit): void {
  const { route, call, reply, state } = kit;
  // ---- state -------------------------------------------------------------------------------------

  app.get(
    '/state/project',
    state(STATE_TOOLS.project, () => ({})),
  );

  app.get(
    '/state/codes',
    route(async (req, res, caller) => {
      refuseUnknownQuery(req.query as Query, []);
      const codes = await call(caller, STATE_TOOLS.codes, {});
      if (!codes.envelope.success) return reply(res, codes);
      const categories = await call(caller, STATE_TOOLS.categories, {});
      if (!categories.envelope.success) return reply(res, categories);
      const c = codes.envelope.data as { count: number; codes: unknown[] };
      const k = categories.envelope.data as { count?: number; categories?: unknown[]; tree?: unknown };
      reply(res, codes, { count: c.count, codes: c.codes, categories: k.categories ?? [], category_tree: k.tree ?? [] });
    }),
  );

  app.get(
    '/state/codes/:id',
    state(STATE_TOOLS.code, (req) => ({ code_id: intArg(String(req.params.id)) })),
  );

  app.get(
    '/state/sources',
    route(async (req, res, caller) => {
      const query = req.query as Query;
      refuseUnknownQuery(query, ['coded', 'type']);
      const coded = single(query, 'coded');
      if (coded !== undefined && coded !== 'true' && coded !== 'false') throw new ToolError('INVALID_ARGUMENTS', 'coded must be true or false');
      const type = single(query, 'type');
      const outcome = await call(caller, STATE_TOOLS.sources, type === undefined ? {} : { source_type: type });
      if (!outcome.envelope.success || coded === undefined) return reply(res, outcome);
      const data = outcome.envelope.data as { sources: { coded?: boolean; segment_count?: number }[] };
      const want = coded === 'true';
      const sources = data.sources.filter((s) => (s.coded ?? (s.segment_count ?? 0) > 0) === want);
      reply(res, outcome, { ...data, count: sources.length, sources });
    }),
  );

  app.get(
    '/state/sources/:id/content',
    state(
      STATE_TOOLS.sourceContent,
      (req) => {
        const q = req.query as Query;
        const args: Record<string, unknown> = { source_id: intArg(String(req.params.id)) };
        for (const k of ['start_pos', 'end_pos', 'max_length']) {
          const v = intArg(single(q, k));
          if (v !== undefined) args[k] = v;
        }
        return args;
      },
      ['start_pos', 'end_pos', 'max_length'],
    ),
  );

  app.get(
    '/state/segments',
    state(
      STATE_TOOLS.segments,
      (req) => {
        const q = req.query as Query;
        const args: Record<string, unknown> = {};
        for (const [k, v] of Object.entries(parseSegmentFilter(q))) if (v !== undefined) args[k] = v;
        for (const k of ['limit', 'offset']) {
          const v = intArg(single(q, k));
          if (v !== undefined) args[k] = v;
        }
        return args;
      },
      ['filter', 'code_id', 'source_id', 'case_id', 'limit', 'offset'],
    ),
  );

  app.get(
    '/state/cases',
    state(STATE_TOOLS.cases, () => ({})),
  );
}

/** `GET /events/stream` (server-sent events) and `GET /events/history`. */
function mountEvents(app: express.Express, kit: RestKit): void {
  const { agent, streams, route, opts } = kit;
  // ---- events ------------------------------------------------------------------------------------

  app.get(
    '/events/history',
    route((req, res) => {
      const q = req.query as Query;
      refuseUnknownQuery(q, ['since', 'limit', 'patterns', 'pattern']);
      const since = parseSeq(single(q, 'since'), 'since') ?? 0;
      const limitText = single(q, 'limit');
      const limit = limitText === undefined ? HISTORY_DEFAULT_LIMIT : Number(limitText);
      if (!Number.isInteger(limit) || limit < 1 || limit > HISTORY_MAX_LIMIT) throw new ToolError('INVALID_ARGUMENTS', `limit must be 1..${HISTORY_MAX_LIMIT}`);
      const patterns = [...parsePatterns(q.patterns), ...parsePatterns(q.pattern)];
      const page = agent.history(since, limit + 1, patterns);
      const events = page.slice(0, limit);
      const last = events[events.length - 1]?.metadata.sequence_number ?? since;
      send(res, 200, ok({ since, count: events.length, has_more: page.length > limit, last_seq: last, head_seq: agent.headSeq(), patterns, events }));
    }),
  );

  app.get(
    '/events/stream',
    (req: Request, _res: Response, next: NextFunction) => {
      // EventSource cannot set headers: ?session_id= names the session (the token may come as ?token=)
      const sid = (req.query as Query).session_id;
      if (typeof sid === 'string' && !req.get('x-marginalia-session')) req.headers['x-marginalia-session'] = sid;
      next();
    },
    route((req, res, caller) => {
      const q = req.query as Query;
      refuseUnknownQuery(q, ['patterns', 'pattern', 'since', 'token', 'session_id']);
      if (streams.size >= MAX_SSE_STREAMS)
        throw new ToolError('SESSION_LIMIT', `At most ${MAX_SSE_STREAMS} event streams may be open at once; close one first`);
      const patterns = [...parsePatterns(q.patterns), ...parsePatterns(q.pattern)];
      // Last-Event-ID (what EventSource resends when it reconnects) wins over ?since= (which stays in the URL)
      const header = req.get('last-event-id');
      const from = parseSeq(header, 'Last-Event-ID') ?? parseSeq(single(q, 'since'), 'since');
      const session = agent.sessions.get(caller.session_id);
      openStream(req, res, caller, patterns, from ?? agent.headSeq(), session);
    }),
  );

  function openStream(
    req: Request,
    res: Response,
    caller: Caller,
    patterns: string[],
    fromSeq: number,
    session: ReturnType<AgentContext['sessions']['get']>,
  ): void {
    res.status(200);
    res.set({
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache, no-transform',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
    });
    res.flushHeaders();
    req.socket.setNoDelay(true);
    req.socket.setTimeout(0);
    let ended = false;
    const write = (text: string) => !ended && res.write(text);
    const sub = new ResumableSubscription(
      agent.hub,
      patterns,
      fromSeq,
      {
        event: (e: EventRecord) => write(`id: ${e.metadata.sequence_number}\nevent: ${e.event_type}\ndata: ${JSON.stringify(e)}\n\n`) !== false,
        overflow: (n) => void write(`event: overflow\ndata: ${JSON.stringify({ ...n, subscription_id: sub.id, resumed: true })}\n\n`),
      },
      agent.config.events.default_subscriptions,
      // the stream's own pace, kept across re-subscriptions (src/agent/eventThrottle.ts; issue 14 item 10)
      () => agent.config.rate_limits.events_per_second,
    );
    // the first lines: how long to wait before reconnecting, and what this stream is; then the events
    write(
      `retry: ${SSE_RETRY_MS}\n: marginalia event stream; session ${caller.session_id}; subscription ${sub.id}; after sequence ${fromSeq}; patterns ${sub.effectivePatterns.join(',')}\n\n`,
    );
    const record = { subscription_id: sub.id, event_patterns: [...sub.effectivePatterns], created_at: new Date().toISOString() };
    session?.subscriptions.push(record);
    const onDrain = () => sub.resume();
    res.on('drain', onDrain);
    sub.open();
    const keepAlive = setInterval(() => {
      // an open stream is activity; a session that ended (destroyed, expired) ends its streams
      try {
        agent.sessions.touch(caller.session_id);
      } catch {
        end();
        return;
      }
      write(': keep-alive\n\n');
    }, opts.keepAliveMs ?? SSE_KEEP_ALIVE_MS);
    keepAlive.unref();
    // the session ending (destroyed, ended by the researcher, its credential revoked, reclaimed) ends the stream at once
    const unwatch = agent.sessions.watch(caller.session_id, () => end());
    const end = () => {
      if (ended) return;
      ended = true;
      unwatch();
      clearInterval(keepAlive);
      sub.close();
      streams.delete(end);
      res.off('drain', onDrain);
      if (session) session.subscriptions = session.subscriptions.filter((s) => s !== record);
      res.end();
    };
    streams.add(end);
    // the response closes when the client goes away (IncomingMessage's own 'close' fires earlier on Node >= 16)
    res.on('close', end);
  }
}

/** `POST /session/create|destroy|heartbeat`. */
function mountSessions(app: express.Express, kit: RestKit): void {
  const { agent, pipeline, route, opts, json } = kit;
  // ---- sessions ----------------------------------------------------------------------------------

  const bodyOf = (req: Request): Record<string, unknown> => {
    const body: unknown = req.body ?? {};
    if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new ToolError('INVALID_ARGUMENTS', 'The body must be a JSON object');
    return body as Record<string, unknown>;
  };
  const sessionIdOf = (req: Request): string => {
    const body = bodyOf(req);
    const extra = Object.keys(body).filter((k) => k !== 'session_id');
    if (extra.length > 0) throw new ToolError('INVALID_ARGUMENTS', `Unexpected body member(s) ${extra.join(', ')}: send {"session_id": "..."}`);
    const id = body.session_id ?? req.get('x-marginalia-session');
    if (typeof id !== 'string' || !id) throw new ToolError('INVALID_ARGUMENTS', 'session_id is required (a string from POST /session/create)');
    return id;
  };

  app.post(
    '/session/create',
    ...json,
    route((req, res) => {
      const body = bodyOf(req);
      const allowed = ['client_type', 'client_name', 'user', 'trust_level', 'model'];
      const extra = Object.keys(body).filter((k) => !allowed.includes(k));
      if (extra.length > 0) throw new ToolError('INVALID_ARGUMENTS', `Unexpected body member(s) ${extra.join(', ')}; send ${allowed.join(', ')}`);
      const types = CLIENT_TYPES.filter((t) => t !== 'LOCAL_UI');
      const clientType = body.client_type ?? 'REST_CLIENT';
      if (typeof clientType !== 'string' || !(types as readonly string[]).includes(clientType))
        throw new ToolError('INVALID_ARGUMENTS', `client_type must be one of ${types.join(', ')}`);
      const name = body.client_name;
      if (typeof name !== 'string' || name.trim().length === 0 || name.length > 100)
        throw new ToolError('INVALID_ARGUMENTS', 'client_name is required: 1-100 characters naming the client');
      if (body.user !== undefined && (typeof body.user !== 'string' || body.user.length === 0 || body.user.length > 100))
        throw new ToolError('INVALID_ARGUMENTS', 'user must be 1-100 characters');
      if (body.model !== undefined && (typeof body.model !== 'string' || body.model.length === 0 || body.model.length > 200))
        throw new ToolError('INVALID_ARGUMENTS', 'model must be 1-200 characters naming the model the client runs');
      const level = body.trust_level;
      if (level !== undefined && !(TRUST_LEVELS as readonly unknown[]).includes(level))
        throw new ToolError('INVALID_ARGUMENTS', `trust_level must be one of ${TRUST_LEVELS.join(', ')}`);
      const { session } = agent.openSession({
        authorization: req.get('authorization'),
        client_type: clientType as ClientType,
        client_name: name.trim(),
        user: body.user as string | undefined,
        trust_level: level as TrustLevel | undefined,
        model: (body.model as string | undefined) ?? req.get('x-marginalia-model')?.slice(0, 200),
      });
      const cfg = agent.config;
      send(
        res,
        200,
        ok({
          session_id: session.session_id,
          client_type: session.client_type,
          client_name: session.client_name,
          user: session.context.user_id,
          status: session.status,
          created_at: session.created_at,
          trust_level: session.context.trust_level,
          role: session.context.preferences.role,
          agent: session.owner === 'researcher' ? null : session.owner,
          model: session.model ?? null,
          heartbeat_interval_seconds: cfg.sessions.heartbeat_interval_seconds,
          timeout_minutes: cfg.sessions.timeout_minutes,
          capabilities: {
            tools: pipeline.listTools().map((t) => t.name),
            resources: RESOURCE_URIS,
            protocols: opts.protocols ?? ['http', 'rest', 'sse', 'websocket'],
            default_subscriptions: cfg.events.default_subscriptions,
          },
        }),
      );
    }, false),
  );

  app.post(
    '/session/destroy',
    ...json,
    route((req, res) => {
      const id = sessionIdOf(req);
      // its own credential, or the researcher (any session); another agent's: 403 SESSION_FORBIDDEN
      const { session: s, reason } = agent.endSessionAs(id, req.get('authorization'));
      send(res, 200, ok({ session_id: s.session_id, status: 'ended', reason }));
    }, false),
  );

  app.post(
    '/session/heartbeat',
    ...json,
    route((req, res) => {
      const id = sessionIdOf(req);
      const { session, heartbeat_interval_seconds } = agent.heartbeatAs(id, req.get('authorization'));
      send(
        res,
        200,
        ok({
          session_id: session.session_id,
          status: session.status,
          last_activity: session.last_activity,
          heartbeat_interval_seconds,
          timeout_minutes: agent.config.sessions.timeout_minutes,
        }),
      );
    }, false),
  );
}
