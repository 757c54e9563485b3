import { z } from 'zod';
import type { Clock } from '../core/clock';
import { isoTime, systemClock } from '../core/clock';
import { fail, ok, type Envelope } from '../core/envelope';
import { isToolError, type ErrorCode } from '../core/errors';
import { newUuid } from '../core/ids';
import type { Disposable } from '../core/lifecycle';
import { toDisposable } from '../core/lifecycle';
import type { Logger } from '../core/log';
import { silentLogger } from '../core/log';
import type { DomainEvent, EventRecord } from '../domain/events';
import type { Actor } from '../domain/model';
import type { HostPort, OpenProject, ToolContext } from '../tools/context';
import type { AnyTool, Effect, ToolGroup, TrustCategory } from '../tools/defineTool';

/** Who is calling: the session and client a call arrives through. */
export interface Caller {
  session_id: string;
  /** the spec's ClientType: ASSISTANT_A_CLI, ASSISTANT_B_CLI, REST_CLIENT, LOCAL_UI, CUSTOM */
  client_type: string;
  client_name: string;
  /** the coder recorded as owner of what this call creates */
  user: string;
  /** ties the events of one request together; generated when absent */
  correlation_id?: string;
}

/** The result of one {@link ToolPipeline.invoke}: the spec envelope plus what the adapters need. */
export interface InvokeOutcome {
  envelope: Envelope;
  /** ok: ran; failed: an error envelope; pending: waiting for the researcher's approval */
  status: 'ok' | 'failed' | 'pending';
  tool: string;
  durationMs: number;
  /** the events this call stored, in sequence order */
  events: EventRecord[];
}

/** One entry of a tool listing (`GET /tools`, MCP `tools/list`): `inputSchema` is JSON Schema. */
export interface ToolListing {
  name: string;
  title: string;
  description: string;
  group: ToolGroup;
  effect: Effect;
  trust_category: TrustCategory;
  inputSchema: Record<string, unknown>;
}

/** A call as the audit stage sees it. */
export interface CallRecord {
  tool: string;
  caller: Caller;
  status: InvokeOutcome['status'];
  error_code?: ErrorCode;
  durationMs: number;
  arguments: unknown;
}

/** Where finished calls are recorded (the agent-context issue adds the JSONL audit log). */
export interface AuditSink {
  record(call: CallRecord): void;
}

/** Options of the pipeline: the registry, how to reach the open project, and the host. */
export interface PipelineOptions {
  tools: readonly AnyTool[];
  /** the open project, or null when none is open */
  project: () => OpenProject | null;
  host: HostPort;
  clock?: Clock;
  logger?: Logger;
  audit?: AuditSink;
}

/** Internal: a failure that ends the pipeline early with an envelope. */
class StageFailure {
  constructor(
    readonly code: ErrorCode,
    readonly message: string,
    readonly details?: unknown,
  ) {}
}

/**
 * The one call pipeline every surface uses (DESIGN.md, "One registry of tools"):
 * resolve session -> look up tool -> validate input once -> rate limit -> trust check -> prepare ->
 * run in one store transaction (events stored in the same transaction, journal fsync'd) -> audit ->
 * publish events -> envelope.
 *
 * The session, rate-limit and trust stages allow everything for now; the agent-context layer fills them.
 */
export class ToolPipeline {
  private readonly tools: ReadonlyMap<string, AnyTool>;
  private readonly listeners = new Set<(events: EventRecord[]) => void>();
  private readonly callListeners = new Set<(call: CallRecord) => void>();
  private readonly clock: Clock;
  private readonly logger: Logger;
  private listing: ToolListing[] | undefined;

  constructor(private readonly opts: PipelineOptions) {
    this.tools = new Map(opts.tools.map((t) => [t.name, t]));
    this.clock = opts.clock ?? systemClock;
    this.logger = opts.logger ?? silentLogger;
  }

  /** Every tool with its JSON Schema (draft 2020-12, from `z.toJSONSchema`), in registry order. */
  listTools(): ToolListing[] {
    this.listing ??= this.opts.tools.filter((t) => (t.audience ?? 'agents') === 'agents').map((t) => ({
      name: t.name,
      title: t.title,
      description: t.description,
      group: t.group,
      effect: t.effect,
      trust_category: t.trust,
      inputSchema: toJsonSchema(t.input),
    }));
    return this.listing;
  }

  /** Subscribes to the events of every successful call, delivered after the commit is durable. */
  onEvents(listener: (events: EventRecord[]) => void): Disposable {
    this.listeners.add(listener);
    return toDisposable(() => void this.listeners.delete(listener));
  }

  /** Subscribes to every finished call (after audit), e.g. to count active agent sessions. */
  onDidCall(listener: (call: CallRecord) => void): Disposable {
    this.callListeners.add(listener);
    return toDisposable(() => void this.callListeners.delete(listener));
  }

  /**
   * Calls tool `name` with `args` (an object; undefined counts as `{}`) on behalf of `caller`.
   * Never throws: every failure is an envelope with the spec's error code (TOOL_NOT_FOUND,
   * INVALID_ARGUMENTS, NO_PROJECT, the tool's own codes, TOOL_EXECUTION_ERROR for the unexpected).
   */
  async invoke(name: string, args: unknown, caller: Caller): Promise<InvokeOutcome> {
    const started = performance.now();
    let events: EventRecord[] = [];
    let envelope: Envelope;
    let status: InvokeOutcome['status'] = 'ok';
    try {
      this.resolveSession(caller);
      const tool = this.lookupTool(name, caller);
      const input = this.validateInput(tool, args);
      this.checkRateLimit(caller, tool);
      this.checkTrust(caller, tool);
      const result = await this.execute(tool, input, caller);
      events = result.events;
      envelope = ok(result.data);
    } catch (e) {
      status = 'failed';
      envelope = this.toFailure(name, e);
    }
    const durationMs = performance.now() - started;
    this.audit({ tool: name, caller, status, error_code: envelope.success ? undefined : envelope.error_code, durationMs, arguments: args });
    if (events.length > 0) this.publish(events);
    return { envelope, status, tool: name, durationMs, events };
  }

  /** Stage 1: the session the call belongs to. Allows every caller until sessions land. */
  private resolveSession(_caller: Caller): void {}

  /** Stage 2: the tool, or TOOL_NOT_FOUND (editor-only tools exist only for the researcher's own session). */
  private lookupTool(name: string, caller: Caller): AnyTool {
    const tool = this.tools.get(name);
    if (!tool || (tool.audience === 'editor' && caller.client_type !== 'LOCAL_UI')) throw new StageFailure('TOOL_NOT_FOUND', `Unknown tool "${name}". GET /tools lists the ${this.listTools().length} tools.`);
    return tool;
  }

  /** Stage 3: validate the arguments once against the tool's schema, or INVALID_ARGUMENTS. */
  private validateInput(tool: AnyTool, args: unknown): unknown {
    const parsed = tool.input.safeParse(args ?? {});
    if (parsed.success) return parsed.data;
    const issues = parsed.error.issues.map((i) => ({ path: i.path.map(String).join('.'), message: i.message, code: i.code }));
    const summary = issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join('; ');
    throw new StageFailure('INVALID_ARGUMENTS', `Invalid arguments for ${tool.name}: ${summary}`, { issues });
  }

  /** Stage 4: requests and mutations per minute. Allows everything until rate limits land. */
  private checkRateLimit(_caller: Caller, _tool: AnyTool): void {}

  /** Stage 5: the trust decision (auto, notify, suggest, require). Permits everything until trust lands. */
  private checkTrust(_caller: Caller, _tool: AnyTool): void {}

  /** Stage 6: prepare, then run in one transaction that also stores the call's events. */
  private async execute(tool: AnyTool, input: unknown, caller: Caller): Promise<{ data: unknown; events: EventRecord[] }> {
    const needsProject = tool.needsProject ?? true;
    let project = this.opts.project();
    if (needsProject && !project) throw new StageFailure(tool.noProjectCode ?? 'NO_PROJECT', 'No project is open. Ask the researcher to open one (Marginalia: Open Project).');
    const prepared = tool.prepare ? await tool.prepare(input, { projectPath: project?.path ?? null }) : undefined;
    project = this.opts.project();
    if (needsProject && !project) throw new StageFailure(tool.noProjectCode ?? 'NO_PROJECT', 'The project was closed while the call was prepared.');
    const actor: Actor = { user: caller.user, session_id: caller.session_id, client_type: caller.client_type };
    const raised: DomainEvent[] = [];
    const now = this.clock.now();
    const ctx: ToolContext = {
      project: project as OpenProject,
      domain: { repo: (project as OpenProject | null)?.repo as OpenProject['repo'], events: { emit: (e) => void raised.push(e) }, actor, now: isoTime(now) },
      actor,
      host: this.opts.host,
      clock: this.clock,
    };
    if (!project || tool.effect === 'read') return { data: tool.run(ctx, input, prepared), events: [] };
    const correlation = caller.correlation_id ?? newUuid();
    return project.transaction(() => {
      const data = tool.run(ctx, input, prepared);
      const events = raised.map((e) => {
        const record: EventRecord = {
          event_id: newUuid(),
          event_type: e.event_type,
          timestamp: isoTime(now),
          aggregate_type: e.aggregate_type,
          aggregate_id: e.aggregate_id,
          caused_by: { session_id: caller.session_id, client_type: caller.client_type, user: caller.user },
          payload: e.payload,
          metadata: { correlation_id: correlation, sequence_number: 0 },
        };
        record.metadata.sequence_number = project.repo.insertEvent(record);
        return record;
      });
      return { data, events };
    });
  }

  /** Stage 7: record the call. */
  private audit(call: CallRecord): void {
    try {
      this.opts.audit?.record(call);
    } catch (e) {
      this.logger.error('audit failed', e);
    }
    for (const l of this.callListeners) {
      try {
        l(call);
      } catch (e) {
        this.logger.error('call listener failed', e);
      }
    }
  }

  /** Stage 8: hand the committed events to subscribers (trees, SSE, WebSocket, ...). */
  private publish(events: EventRecord[]): void {
    for (const l of this.listeners) {
      try {
        l(events);
      } catch (e) {
        this.logger.error('event listener failed', e);
      }
    }
  }

  private toFailure(tool: string, e: unknown): Envelope {
    if (e instanceof StageFailure) return fail(e.code, e.message, e.details);
    if (isToolError(e)) return fail(e.code, e.message, e.details);
    this.logger.error(`${tool} failed unexpectedly`, e);
    return fail('TOOL_EXECUTION_ERROR', `${tool} failed unexpectedly; nothing was changed. The server log has the details.`);
  }
}

/** JSON Schema (draft 2020-12) of a tool's input, describing what callers send (`io: 'input'`). */
export function toJsonSchema(schema: z.ZodType): Record<string, unknown> {
  return z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
}
