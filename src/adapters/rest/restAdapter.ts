/**
 * The REST adapter of the agent-context spec (section 4) on the HTTP tool server's express app: commands and state
 * here, events in ./eventRoutes.ts, sessions in ./sessionRoutes.ts, what they share in ./restKit.ts.
 */
import type express from 'express';
import { fail, ok, type Envelope } from '../../core/envelope';
import { ToolError } from '../../core/errors';
import type { Disposable } from '../../core/lifecycle';
import type { ToolListing } from '../../agent/pipeline';
import { COMMAND_CATEGORY_OF_GROUP, COMMAND_ROUTES, STATE_TOOLS, type CommandRoute } from '../../tools/restRoutes';
import { send } from '../http/httpServer';
import { httpStatusOf } from '../../agent/errorClasses';
import { mountEvents } from './eventRoutes';
import { mountSessions } from './sessionRoutes';
import { intArg, refuseUnknownQuery, restKit, single, type Query, type RestKit, type RestOptions } from './restKit';

export { HISTORY_DEFAULT_LIMIT, HISTORY_MAX_LIMIT, MAX_SSE_STREAMS, RESOURCE_URIS, SSE_KEEP_ALIVE_MS, SSE_RETRY_MS, type RestOptions } from './restKit';

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
