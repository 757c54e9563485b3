import {
  CLIENT_INFO_META_KEY,
  McpServer,
  ProtocolError,
  ProtocolErrorCode,
  ResourceNotFoundError,
  type CallToolResult,
  type ListToolsResult,
  type ServerContext,
  type StandardSchemaWithJSON,
  type ToolAnnotations,
} from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { FailureEnvelope } from '../../core/envelope';
import { isToolError, type ErrorCode } from '../../core/errors';
import type { Logger } from '../../core/log';
import { silentLogger } from '../../core/log';
import { jsonText } from '../../core/sharedResult';
import type { AgentContext } from '../../agent/agentContext';
import { classify } from '../../agent/errorClasses';
import { logCall, type CallLogSink } from '../../agent/kit';
import type { ContextBuilder } from '../../agent/contextBuilder';
import {
  describeProgress,
  toJsonSchema,
  trustForViewer,
  type Caller,
  type InvokeOptions,
  type InvokeOutcome,
  type PendingApproval,
  type ToolViewer,
} from '../../agent/pipeline';
import type { AnyTool, Effect } from '../../tools/defineTool';
import { TOOLS } from '../../tools/registry';
import { registerPrompts } from './mcpPrompts';
import { registerResources } from './mcpResources';
import { asStructured, MCP_TASKS_CAPABILITY, registerTaskHandlers, type McpTaskStore } from './mcpTasks';

/** The server name MCP clients see (`serverInfo.name`). */
export const MCP_SERVER_NAME = 'marginalia';

/** What an MCP request tells about its client: `clientInfo` of the 2025 handshake or of the 2026-07-28 `_meta` envelope. */
export interface McpCallerHints {
  clientName?: string;
  clientVersion?: string;
}

/**
 * Maps an MCP request to the pipeline's caller (its session). HTTP: the `X-Marginalia-Session` header, or
 * the implicit session of the bearer token and client name; stdio: the implicit session of the process's
 * agent token. Throws ToolError UNAUTHORIZED, SESSION_NOT_FOUND, SESSION_EXPIRED or SESSION_LIMIT.
 */
export type McpCallerResolver = (hints: McpCallerHints) => Caller;

/** Options of {@link createMcpServerFor}. */
export interface McpServerForOptions {
  /** `serverInfo.version` */
  version: string;
  /** briefing, state summary, statistics and the reads no tool offers */
  context: ContextBuilder;
  /** the protocol era this instance serves (`McpRequestContext.era` of the SDK) */
  era: 'legacy' | 'modern';
  /**
   * Whether this instance's client can receive `notifications/resources/updated`: true on stdio (2025:
   * after `resources/subscribe`; 2026-07-28: through `subscriptions/listen`) and for 2026-07-28 HTTP
   * (`subscriptions/listen`); false for 2025 HTTP, which the SDK serves statelessly with no stream.
   */
  subscribe: boolean;
  /** 2025-era `resources/subscribe` / `resources/unsubscribe` of this instance's client (stdio) */
  onSubscribe?: (uri: string, subscribed: boolean) => void;
  /** the registry (default: every agent-facing tool of TOOLS) */
  tools?: readonly AnyTool[];
  logger?: Logger;
  /** the call log (adapter kit): one line per tools/call, with the status `mcp` (`mcp:pending_approval` for a held call) */
  onCall?: CallLogSink;
  /**
   * MCP tasks for held calls (2025-11-25 era only; mcpTasks.ts): declares `capabilities.tasks`, lists every tool
   * with `execution.taskSupport: "optional"`, and answers task-augmented calls and `tasks/*` from this store.
   */
  tasks?: McpTaskStore;
}

/** What resources and prompts need to read the project on behalf of the requesting client. */
export interface McpReadDeps {
  agent: AgentContext;
  context: ContextBuilder;
  /** the caller of the request being served (throws ToolError, see {@link McpCallerResolver}) */
  caller(ctx: ServerContext): Caller;
  /**
   * Calls a read tool through the pipeline as the caller and returns its data. A failure becomes the
   * MCP protocol error {@link protocolErrorOf} gives (not-found codes: ResourceNotFoundError for `uri`).
   */
  read(ctx: ServerContext, tool: string, args: Record<string, unknown>, uri?: string): Promise<any>;
  /** whether the registry offers the agent-facing tool `name` (optional surfaces such as reports) */
  hasTool(name: string): boolean;
}

/**
 * The MCP protocol error for a failed read (resources/read, prompts/get), by the code's class in the one error
 * classification (src/agent/errorClasses.ts): `not_found` codes become `ResourceNotFoundError` for `uri`
 * (-32602 with `data.uri`, MCP 2026-07-28 "resources/read" and the SDK's choice for 2025-11-25) or
 * InvalidParams without a uri; `invalid` codes (INVALID_ARGUMENTS, INVALID_POSITION, ...) InvalidParams
 * (-32602); everything else InternalError (-32603). `data.error_code` carries Marginalia's code.
 */
export function protocolErrorOf(failure: Pick<FailureEnvelope, 'error' | 'error_code' | 'details'>, uri?: string): ProtocolError {
  const cls = classify(failure.error_code).class;
  if (cls === 'not_found') {
    if (uri !== undefined) return new ResourceNotFoundError(uri, `${failure.error_code}: ${failure.error}`);
    return new ProtocolError(ProtocolErrorCode.InvalidParams, `${failure.error_code}: ${failure.error}`, { error_code: failure.error_code });
  }
  const code = cls === 'invalid' ? ProtocolErrorCode.InvalidParams : ProtocolErrorCode.InternalError;
  return new ProtocolError(code, `${failure.error_code}: ${failure.error}`, {
    error_code: failure.error_code,
    ...(failure.details !== undefined ? { details: failure.details } : {}),
  });
}

/** A thrown error (ToolError or other) as a protocol error (see {@link protocolErrorOf}). */
export function toProtocolError(e: unknown, uri?: string): unknown {
  if (isToolError(e)) return protocolErrorOf({ error: e.message, error_code: e.code, details: e.details }, uri);
  return e;
}

/** The caller hints of a request: the 2026-07-28 envelope's clientInfo, else the 2025 handshake's. */
export function hintsOf(server: McpServer, ctx: ServerContext | undefined): McpCallerHints {
  const envelope = ctx?.mcpReq.envelope as Record<string, { name?: unknown; version?: unknown } | undefined> | undefined;
  const info = envelope?.[CLIENT_INFO_META_KEY] ?? envelope?.clientInfo ?? server.server.getClientVersion();
  return {
    clientName: typeof info?.name === 'string' && info.name.trim() ? info.name.trim().slice(0, 100) : undefined,
    clientVersion: typeof info?.version === 'string' ? info.version.slice(0, 50) : undefined,
  };
}

/**
 * A Standard Schema whose JSON Schema is `json` and whose validation is `validate` (default: accept as
 * is). Tool inputs use the accepting form: the pipeline validates every call once against the tool's zod
 * schema (docs/architecture.md "validate input (once)"), so invalid arguments are audited, rate-limited and answered
 * with INVALID_ARGUMENTS like on every other surface, instead of being refused by the SDK before the
 * pipeline sees them.
 */
export function jsonSchemaOnly(
  json: Record<string, unknown>,
  validate?: (value: unknown) => { value: unknown } | { issues: { message: string }[] },
): StandardSchemaWithJSON {
  const { $schema: _drop, ...schema } = json;
  return {
    '~standard': {
      version: 1,
      vendor: 'marginalia',
      validate: validate ?? ((value: unknown) => ({ value })),
      jsonSchema: { input: () => schema, output: () => schema },
    },
  } as StandardSchemaWithJSON;
}

/** The `data` of a call that waits for approval (PendingApproval of the pipeline), as an output schema. */
export const pendingApprovalOutput = z.object({
  status: z.literal('pending_approval'),
  request_id: z.string(),
  tool: z.string(),
  trust_level: z.enum(['suggest', 'require']),
  expires_at: z.string(),
  message: z.string(),
});

/** The generic output schema of tools without a declared `output`: any JSON object. */
const GENERIC_OUTPUT: Record<string, unknown> = {
  type: 'object',
  additionalProperties: true,
  description:
    'The data of the tool (see its description for the shape), or {status: "pending_approval", request_id, tool, trust_level, expires_at, poll_after_ms, message} when the call waits for the researcher. Precise output schemas per tool are a follow-up.',
};

/**
 * The MCP output schema of a tool: its declared `output` or a pending-approval answer (any call may wait
 * for approval when a session's trust floor asks for it), or {@link GENERIC_OUTPUT} when the tool declares
 * none. The root is always `type: "object"` (MCP Tool.outputSchema).
 */
export function outputSchemaOf(tool: AnyTool): StandardSchemaWithJSON {
  if (!tool.output)
    return jsonSchemaOnly(GENERIC_OUTPUT, (value) =>
      value !== null && typeof value === 'object' && !Array.isArray(value) ? { value } : { issues: [{ message: 'expected an object' }] },
    );
  const union = z.union([tool.output, pendingApprovalOutput]);
  const json = z.toJSONSchema(union, { io: 'output', unrepresentable: 'any' }) as Record<string, unknown>;
  return jsonSchemaOnly({ type: 'object', ...json }, (value) => {
    const r = union.safeParse(value);
    return r.success ? { value } : { issues: r.error.issues.map((i) => ({ message: `${i.path.join('.')}: ${i.message}` })) };
  });
}

/**
 * MCP tool annotations derived from the tool's effect (hints only; MCP 2025-11-25 "Tool annotations"):
 * read: readOnlyHint; create and modify: not destructive; destroy and bulk: destructive. Reads and
 * modifications (setting a value again changes nothing more) are idempotent. Every tool acts on the local
 * project only, so openWorldHint is false.
 */
export function annotationsOf(effect: Effect): ToolAnnotations {
  if (effect === 'read') return { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
  if (effect === 'create') return { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false };
  if (effect === 'modify') return { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false };
  return { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false };
}

/** The `_meta` key of a listed tool that names the trust level applying to the client that listed it (issue 14 item 6). */
export const TRUST_LEVEL_META_KEY = 'marginalia/trust_level';

const schemaCache = new WeakMap<AnyTool, { inputSchema: StandardSchemaWithJSON; outputSchema: StandardSchemaWithJSON }>();
type ListedTool = ListToolsResult['tools'][number];
const listedCache = new WeakMap<AnyTool, { inputSchema: ListedTool['inputSchema']; outputSchema: NonNullable<ListedTool['outputSchema']> }>();

/** A tool's input and output JSON Schemas as tools/list sends them (computed once per tool). */
function listedSchemasOf(tool: AnyTool): { inputSchema: ListedTool['inputSchema']; outputSchema: NonNullable<ListedTool['outputSchema']> } {
  let l = listedCache.get(tool);
  if (!l) {
    const s = schemasOf(tool);
    const target = { target: 'draft-2020-12' as const };
    listedCache.set(
      tool,
      (l = {
        inputSchema: s.inputSchema['~standard'].jsonSchema.input(target) as ListedTool['inputSchema'],
        outputSchema: s.outputSchema['~standard'].jsonSchema.output(target) as NonNullable<ListedTool['outputSchema']>,
      }),
    );
  }
  return l;
}

/**
 * tools/list for one viewer (issue 14 item 6): each tool as the SDK lists it (name, title, description, input
 * and output schema, annotations) with the trust level that applies to the viewer, by the one rule of every
 * listing ({@link trustForViewer}, as GET /tools): in the description (the words of a held tool) and as
 * `_meta["marginalia/trust_level"]` (`auto` | `notify` | `suggest` | `require` | `researcher_only`). Without a
 * viewer (the caller could not be resolved) the tools are listed as registered, without a trust level.
 */
export function listToolsFor(agent: AgentContext, tools: readonly AnyTool[], viewer: ToolViewer | undefined, tasks = false): ListToolsResult['tools'] {
  return tools.map((tool) => {
    const trust = viewer ? trustForViewer(agent.layer, tool, viewer) : undefined;
    return {
      name: tool.name,
      title: tool.title,
      description: `${tool.description}${trust?.note ?? ''}`,
      ...listedSchemasOf(tool),
      annotations: { title: tool.title, ...annotationsOf(tool.effect) },
      // any call may be held (a session's trust floor, a pause), so every tool may be called as a task
      ...(tasks ? { execution: { taskSupport: 'optional' as const } } : {}),
      ...(trust ? { _meta: { [TRUST_LEVEL_META_KEY]: trust.trust_level } } : {}),
    };
  });
}

/**
 * A tool's MCP input and output schemas, computed once per tool (a server instance is built per HTTP
 * request, and converting ~75 zod schemas each time would cost far more than the call itself).
 */
function schemasOf(tool: AnyTool): { inputSchema: StandardSchemaWithJSON; outputSchema: StandardSchemaWithJSON } {
  let s = schemaCache.get(tool);
  if (!s) schemaCache.set(tool, (s = { inputSchema: jsonSchemaOnly(toJsonSchema(tool.input)), outputSchema: outputSchemaOf(tool) }));
  return s;
}

/** A failure as an MCP tool result: `isError`, the code in the text, `{error, error_code, details?}` as structuredContent. */
export function errorResult(error_code: ErrorCode | string, error: string, details?: unknown): CallToolResult {
  const structured: Record<string, unknown> = { error, error_code };
  if (details !== undefined) structured.details = details;
  const text = `${error_code}: ${error}${details !== undefined ? `\ndetails: ${JSON.stringify(details)}` : ''}`;
  return { isError: true, content: [{ type: 'text', text }], structuredContent: structured };
}

/**
 * A pipeline outcome as an MCP tool result (both eras): success: `structuredContent` = the envelope's
 * data and the same as JSON text; waiting for approval: not an error, `structuredContent` =
 * `{status: "pending_approval", request_id, ...}` and a text telling the agent to ask get_approval_status;
 * failure: {@link errorResult}.
 */
export function toToolResult(outcome: InvokeOutcome): CallToolResult {
  const env = outcome.envelope;
  if (!env.success) return errorResult(env.error_code, env.error, env.details);
  const data = asStructured(env.data);
  if (outcome.status === 'pending') {
    const p = env.data as PendingApproval;
    const text =
      `PENDING APPROVAL: ${outcome.tool} waits for the researcher's approval (trust level ${p.trust_level}); nothing has changed yet. ` +
      `Call get_approval_status with {"request_id": "${p.request_id}", "wait_ms": 30000} to wait for the decision and what it returned (or poll no more often than every ${p.poll_after_ms} ms, which never spends your rate budget); ` +
      `unanswered, it is rejected at ${p.expires_at}. Carry on with other work meanwhile.\n${JSON.stringify(env.data)}`;
    return { content: [{ type: 'text', text }], structuredContent: data };
  }
  return { content: [{ type: 'text', text: jsonText(env.data) }], structuredContent: data };
}

/** Instructions sent to clients at initialization (2025) or discovery (2026-07-28). */
export const MCP_INSTRUCTIONS = [
  'Marginalia is a qualitative data analysis (QDA) project: interview transcripts (sources) coded with a codebook of codes in categories, grouped into cases.',
  'Start with the resource qda://project/briefing (or the tool get_project_context). Resources under qda:// give the codebook, sources, segments and cases; prompts give analysis workflows (open coding, thematic analysis, ...).',
  'Text positions (start_pos/end_pos, start_position/end_position) count Unicode code points of the stored text, end exclusive.',
  'Every call passes the researcher\'s trust layer: some calls run at once, others answer {status: "pending_approval", request_id} and run only when the researcher approves; follow them with get_approval_status. Errors come back as isError results naming an error_code.',
].join(' ');

/**
 * MCP progress (basic/utilities/progress): when a tools/call carries `_meta.progressToken`, the call's
 * progress goes back as `notifications/progress` with that token. The spec wants `progress` to increase with
 * every notification, and a call may have several steps (reading a file in bytes, then writing items): step k
 * (from 0) reports `100 * k + percent of the step`, with no `total`; `message` says what the step is and how far.
 */
function progressSender(ctx: ServerContext, logger: Logger): InvokeOptions['onProgress'] {
  const token = ctx.mcpReq._meta?.progressToken;
  if (token === undefined) return undefined;
  let step = -1;
  let stepMessage: string | undefined;
  let last = -1;
  let reports = 0;
  return (p) => {
    if (p.message !== stepMessage) {
      step++;
      stepMessage = p.message;
      reports = 0;
    }
    // a step of unknown size moves one point per report, up to 99
    const within = p.total ? Math.min(100, (100 * p.done) / p.total) : Math.min(99, ++reports);
    const progress = 100 * step + within;
    if (progress <= last) return;
    last = progress;
    void ctx.mcpReq
      .notify({ method: 'notifications/progress', params: { progressToken: token, progress, message: describeProgress(p) } })
      .catch((e: unknown) => logger.warn(`MCP progress notification failed: ${e instanceof Error ? e.message : String(e)}`));
  };
}

/**
 * One tools/call of `who` through the pipeline (`agent.call`: sessions, validation, rate limits, trust, approvals
 * and audit as on HTTP), logged through `onCall`: the MCP tool result ({@link toToolResult}) and, for a held call,
 * its pending answer. An unexpected throw is logged and answered TOOL_EXECUTION_ERROR.
 */
export async function runTool(
  agent: AgentContext,
  who: Caller,
  name: string,
  args: unknown,
  ctx: ServerContext,
  opts: { logger: Logger; onCall?: CallLogSink },
): Promise<{ result: CallToolResult; pending?: PendingApproval }> {
  try {
    const outcome = await agent.call(who, name, args ?? {}, { onProgress: progressSender(ctx, opts.logger) });
    logCall(opts.onCall, who, name, outcome.status === 'pending' ? 'mcp:pending_approval' : 'mcp', outcome);
    return {
      result: toToolResult(outcome),
      ...(outcome.status === 'pending' ? { pending: (outcome.envelope as { data: unknown }).data as PendingApproval } : {}),
    };
  } catch (e) {
    opts.logger.error(`MCP tools/call ${name} failed`, e);
    return { result: errorResult('TOOL_EXECUTION_ERROR', `${name} failed unexpectedly; the server log has the details.`) };
  }
}

/**
 * One MCP server instance over the agent context (the SDK's factory product: one per HTTP request, one per
 * stdio connection), for either protocol era (MCP 2025-11-25 and 2026-07-28):
 * - tools: a loop over the registry's agent-facing tools (JSON Schema input from `z.toJSONSchema`, output
 *   schema from {@link outputSchemaOf}, title, annotations from {@link annotationsOf}); every `tools/call`
 *   goes through `agent.call(caller, name, args)`, so sessions, validation, rate limits, trust, approvals
 *   and audit apply exactly as on HTTP; results from {@link toToolResult};
 * - resources: the `qda://` URIs of the agent-context spec, section 2 (mcpResources.ts);
 * - prompts: the eight analysis templates of the spec (mcpPrompts.ts);
 * - tasks (2025 era, with `opts.tasks`): a held call of a client that declared tasks answered as a task (mcpTasks.ts).
 * A caller that cannot be resolved (bad session, session limit) gets an `isError` result with the code.
 */
export function createMcpServerFor(agent: AgentContext, resolveCaller: McpCallerResolver, opts: McpServerForOptions): McpServer {
  const logger = opts.logger ?? silentLogger;
  const server = new McpServer(
    { name: MCP_SERVER_NAME, title: 'Marginalia', version: opts.version },
    {
      capabilities: {
        tools: { listChanged: false },
        resources: { subscribe: opts.subscribe, listChanged: opts.subscribe },
        prompts: { listChanged: false },
        ...(opts.tasks ? { tasks: MCP_TASKS_CAPABILITY } : {}),
      },
      instructions: MCP_INSTRUCTIONS,
      // tools and prompts never change while a server runs; resources change with every edit
      cacheHints: {
        'tools/list': { ttlMs: 300_000, cacheScope: 'private' },
        'prompts/list': { ttlMs: 300_000, cacheScope: 'private' },
        'resources/templates/list': { ttlMs: 300_000, cacheScope: 'private' },
        'resources/list': { ttlMs: 0, cacheScope: 'private' },
        'resources/read': { ttlMs: 0, cacheScope: 'private' },
      },
    },
  );
  const caller = (ctx: ServerContext | undefined): Caller => resolveCaller(hintsOf(server, ctx));
  const tools = (opts.tools ?? TOOLS).filter((t) => (t.audience ?? 'agents') === 'agents');
  const names = new Set(tools.map((t) => t.name));
  const run = (who: Caller, name: string, args: unknown, ctx: ServerContext) => runTool(agent, who, name, args, ctx, { logger, onCall: opts.onCall });
  for (const tool of tools) {
    server.registerTool(
      tool.name,
      {
        title: tool.title,
        description: tool.description,
        ...schemasOf(tool),
        annotations: { title: tool.title, ...annotationsOf(tool.effect) },
      },
      async (args: unknown, ctx: ServerContext) => {
        let who: Caller;
        try {
          who = caller(ctx);
        } catch (e) {
          if (isToolError(e)) return errorResult(e.code, e.message, e.details);
          throw e;
        }
        return (await run(who, tool.name, args, ctx)).result;
      },
    );
  }
  if (opts.tasks) {
    const resolved = (ctx: ServerContext): Caller => {
      try {
        return caller(ctx);
      } catch (e) {
        throw toProtocolError(e);
      }
    };
    registerTaskHandlers(server, { store: opts.tasks, caller: resolved, hasTool: (name) => names.has(name), run });
  }
  // the listing states the trust level that applies to this client (issue 14 item 6), as GET /tools does for its caller
  server.server.setRequestHandler('tools/list', (_request, ctx) => {
    let viewer: ToolViewer | undefined;
    try {
      const who = caller(ctx);
      viewer = { researcher: who.researcher === true, floor: agent.sessions.get(who.session_id)?.context.trust_level ?? 'auto' };
    } catch (e) {
      if (!isToolError(e)) throw e;
    }
    return { tools: listToolsFor(agent, tools, viewer, opts.tasks !== undefined) };
  });
  const deps: McpReadDeps = {
    agent,
    hasTool: (name) => names.has(name),
    context: opts.context,
    caller: (ctx) => caller(ctx),
    read: async (ctx, tool, args, uri) => {
      let who: Caller;
      try {
        who = caller(ctx);
      } catch (e) {
        throw toProtocolError(e, undefined);
      }
      const outcome = await agent.call(who, tool, args);
      if (!outcome.envelope.success) throw protocolErrorOf(outcome.envelope, uri);
      if (outcome.status === 'pending')
        throw new ProtocolError(
          ProtocolErrorCode.InternalError,
          `Reading ${uri ?? tool} waits for the researcher's approval (request ${(outcome.envelope.data as PendingApproval).request_id}); this session's trust floor holds even reads`,
        );
      return outcome.envelope.data;
    },
  };
  registerResources(server, deps);
  registerPrompts(server, deps);
  if (opts.era === 'legacy' && opts.subscribe) {
    // 2025-era resources/subscribe: remember what the client wants; the stdio entry sends resources/updated for it
    server.server.setRequestHandler('resources/subscribe', (request) => {
      opts.onSubscribe?.(request.params.uri, true);
      return {};
    });
    server.server.setRequestHandler('resources/unsubscribe', (request) => {
      opts.onSubscribe?.(request.params.uri, false);
      return {};
    });
  }
  return server;
}
