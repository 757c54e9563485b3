import * as fs from 'node:fs';
import * as nodePath from 'node:path';
import { z } from 'zod';
import type { Clock } from '../core/clock';
import { isoTime, systemClock } from '../core/clock';
import { fail, ok, type Envelope } from '../core/envelope';
import { isToolError, type ErrorCode } from '../core/errors';
import { newUuid } from '../core/ids';
import { PathPolicy } from '../core/pathPolicy';
import { shareResult } from '../core/sharedResult';
import type { Disposable } from '../core/lifecycle';
import { toDisposable } from '../core/lifecycle';
import type { Logger } from '../core/log';
import { silentLogger } from '../core/log';
import type { DomainEvent, EventRecord } from '../domain/events';
import type { Actor } from '../domain/model';
import type { ApprovalRecord, EmbeddingsPort, EntityRef } from '../domain/ports';
import type { HostPort, OpenProject, ToolContext, ToolProgress } from '../tools/context';
import type { AnyTool, Effect, ToolGroup, TrustCategory } from '../tools/defineTool';
import { describeInvalidArguments } from '../tools/argumentErrors';
import type { AuditDecision, AuditLog } from './auditLog';
import { describeRequest } from './describeRequest';
import type { AgentContextConfig, TrustLevel } from './config';
import type { RateLimiter } from './rateLimits';
import type { Session, SessionManager } from './sessions';
import type { TrustPolicy } from './trust';

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
  /** set by {@link ToolPipeline.approve}: the researcher's session that approved this pending call (see `Actor.approved_by`) */
  approved_by?: string;
  /**
   * true for the researcher: the local UI, or a client authenticated with the reviewer token. The
   * researcher's calls skip the trust layer and rate limits, and only the researcher may approve.
   */
  researcher?: boolean;
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
  /**
   * The trust level that applies to the caller who asked for the listing ({@link ToolPipeline.listTools}
   * with a viewer): auto and notify run, suggest and require are held for the researcher's approval (HTTP
   * 202 pending_approval), `researcher_only`: refused to agents (403 APPROVAL_FORBIDDEN). Absent in a
   * listing made for nobody in particular.
   */
  trust_level?: TrustLevel | 'researcher_only';
}

/** Who a tool listing is for ({@link ToolPipeline.listTools}): the researcher, or an agent with its session's trust floor. */
export interface ToolViewer {
  researcher: boolean;
  /** the agent session's own trust level (`context.trust_level`), the least level of every tool; default auto */
  floor?: TrustLevel;
}

/** A call as the audit stage sees it. */
export interface CallRecord {
  tool: string;
  caller: Caller;
  status: InvokeOutcome['status'];
  /** permitted, notified (ran at trust level notify), pending (held for approval), denied (by a session, rate-limit or trust check), failed */
  decision: AuditDecision;
  trust_level?: TrustLevel;
  request_id?: string;
  error_code?: ErrorCode;
  durationMs: number;
  arguments: unknown;
}

/** Per-call options of {@link ToolPipeline.invoke}. */
export interface InvokeOptions {
  /**
   * Receives the call's progress (long imports), at most every {@link PROGRESS_INTERVAL_MS} plus the final
   * report of each step. The pipeline also logs progress at most once a second. A listener that throws is
   * logged and ignored.
   */
  onProgress?: (p: ToolProgress) => void;
}

/** Least time between two progress reports forwarded to a caller, in milliseconds. */
export const PROGRESS_INTERVAL_MS = 200;
/** Most inputs one memoized read keeps per project and write generation (ToolDef.memo). */
export const MEMO_ENTRIES = 64;
/** Least time between two progress lines in the log, in milliseconds. */
const PROGRESS_LOG_INTERVAL_MS = 1000;

/** An extra observer of finished calls (the agent layer's JSONL audit log is built in). */
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
  /**
   * The agent-context layer: sessions, trust, rate limits, approvals. Without it every stage permits
   * everything (unit tests of tools, the seeding of a sample study).
   */
  agent?: AgentLayer;
  /** the text-embedding model handed to `prepare` (search_semantic, find_similar_segments); none when absent */
  embeddings?: EmbeddingsPort | null;
}

/** The agent-context services the pipeline's stages use (built by createAgentLayer). */
export interface AgentLayer {
  config: () => AgentContextConfig;
  sessions: SessionManager;
  trust: TrustPolicy;
  limiter: RateLimiter;
  audit?: AuditLog;
}

/** What an agent learns when its call waits for approval (`data` of the envelope, HTTP 202). */
export interface PendingApproval {
  status: 'pending_approval';
  request_id: string;
  tool: string;
  trust_level: 'suggest' | 'require';
  expires_at: string;
  /**
   * How long to wait before asking get_approval_status, in milliseconds (`approvals.poll_after_ms`, default
   * 2000; HTTP also sends it as `Retry-After` in whole seconds, at least 1). Polling one's own request at
   * this pace never spends the rate budget; `wait_ms` (up to {@link MAX_APPROVAL_WAIT_MS}) makes one call
   * wait for the decision instead.
   */
  poll_after_ms: number;
  message: string;
}

/** Longest `wait_ms` of get_approval_status (a long poll), in milliseconds. */
export const MAX_APPROVAL_WAIT_MS = 30_000;

/**
 * What the dry run of a held call found ({@link ToolDef.dryRun} `full`): the data the call would return
 * and the events it would raise, in order, against the project as it was when the call was held.
 */
export interface DryRunOutcome {
  data: unknown;
  events: DomainEvent[];
}

/** A tool's dry-run mode ({@link ToolDef.dryRun}): its own, else `validate` when it works outside the database (prepare, paths), else `full`. */
export function dryRunMode(tool: AnyTool): 'full' | 'validate' | 'none' {
  return tool.dryRun ?? (tool.prepare || tool.paths ? 'validate' : 'full');
}

/** One line for a progress report, e.g. `Reading file: 45% (94.1 of 209.7 MB)` or `Writing: 1000 of 2400 items`. */
export function describeProgress(p: ToolProgress): string {
  if (p.unit === 'bytes') {
    const mb = (n: number) => (n / 1e6).toFixed(1);
    return p.total ? `${p.message}: ${Math.floor((100 * p.done) / p.total)}% (${mb(p.done)} of ${mb(p.total)} MB)` : `${p.message}: ${mb(p.done)} MB`;
  }
  return p.total !== null ? `${p.message}: ${p.done} of ${p.total} items` : `${p.message}: ${p.done} items`;
}

/**
 * What an agent's tool description adds for its trust level: nothing for auto; a line for notify; for
 * suggest and require what the held answer looks like and how to follow it.
 */
export function heldWords(level: TrustLevel, pollAfterMs: number): string {
  if (level === 'auto') return '';
  if (level === 'notify') return ' Trust level for you: notify (it runs at once and the researcher is told).';
  return (
    ` Trust level for you: ${level}. Your call is held for the researcher's approval: it answers HTTP 202 with ` +
    `{status: "pending_approval", request_id, tool, trust_level, expires_at, poll_after_ms: ${pollAfterMs}, message} instead of the result ` +
    "(a call that would fail answers its own error at once: it was dry-run first). Follow it with get_approval_status {request_id, wait_ms} " +
    'until status is completed (result holds this tool\'s answer), failed or rejected.'
  );
}

/** Internal: a failure that ends the pipeline early with an envelope. */
class StageFailure {
  constructor(
    readonly code: ErrorCode,
    readonly message: string,
    readonly details?: unknown,
    /** refused by the session, rate-limit or trust stage (audited as denied) */
    readonly denied = false,
  ) {}
}

/**
 * True when a failure is a refusal (audited as `denied`): a stage's (session, rate limit, path, trust,
 * source access, the approval rule) or a tool's own APPROVAL_FORBIDDEN (an approval tool called by someone
 * who may not decide, src/domain/suggestions.ts checkApprover).
 */
function isDenial(e: unknown): boolean {
  return e instanceof StageFailure ? e.denied : isToolError(e) && e.code === 'APPROVAL_FORBIDDEN';
}

/** The source ids a call's arguments name: `source_id`, and `source_id` inside array items (batch operations). */
export function sourceIdsOf(input: unknown): number[] {
  const ids = new Set<number>();
  const visit = (v: unknown, depth: number) => {
    if (depth > 3 || v === null || typeof v !== 'object') return;
    if (Array.isArray(v)) {
      for (const x of v) visit(x, depth + 1);
      return;
    }
    for (const [k, x] of Object.entries(v)) {
      if (k === 'source_id' && typeof x === 'number') ids.add(x);
      else if (typeof x === 'object') visit(x, depth + 1);
    }
  };
  visit(input, 0);
  return [...ids];
}

/**
 * The codes, categories, sources and text segments a call's arguments name (the entities whose versions a
 * held call records, issue 14 item 5): `code_id`, `source_code_id`, `target_code_id` (codes), `source_id`,
 * `category_id`, `move_codes_to` and `parent_id` (categories, except for folder tools), `segment_id` (text
 * segments, except for AV tools), also inside array items (batch operations), at most 3 levels deep, each once.
 */
export function entityRefsOf(toolName: string, input: unknown): EntityRef[] {
  const refs = new Map<string, EntityRef>();
  const kindOf = (key: string): EntityRef['kind'] | undefined => {
    if (key === 'code_id' || key === 'source_code_id' || key === 'target_code_id') return 'code';
    if (key === 'source_id') return 'source';
    if (key === 'category_id' || key === 'move_codes_to') return 'category';
    if (key === 'parent_id') return toolName.includes('folder') ? undefined : 'category';
    if (key === 'segment_id') return toolName.includes('av_') ? undefined : 'segment';
    return undefined;
  };
  const visit = (v: unknown, depth: number) => {
    if (depth > 3 || v === null || typeof v !== 'object') return;
    if (Array.isArray(v)) {
      for (const x of v) visit(x, depth + 1);
      return;
    }
    for (const [k, x] of Object.entries(v)) {
      const kind = kindOf(k);
      if (kind && typeof x === 'number' && Number.isInteger(x)) refs.set(`${kind}:${x}`, { kind, id: x });
      else if (typeof x === 'object') visit(x, depth + 1);
    }
  };
  visit(input, 0);
  return [...refs.values()];
}

/** What a held call read (ApprovalRecord.read_versions): the newest event's sequence number then, and `kind:id` -> version. */
interface ReadVersions {
  seq: number;
  versions: Record<string, number>;
}

/** One entity that changed between holding a call and approving it (VERSION_CONFLICT `details.changes`). */
export interface VersionChange {
  kind: EntityRef['kind'];
  id: number;
  name: string | null;
  read_version: number;
  /** null: it was deleted */
  version: number | null;
  /** the newest stored event about it since the call was held: its type and who caused it; null when none names it */
  changed_by: { event_type: string; user: string; client_type: string; session_id: string; at: string } | null;
}

/**
 * The one call pipeline every surface uses (DESIGN.md, "One registry of tools"):
 * resolve session -> look up tool -> validate input once -> rate limit -> trust check -> prepare ->
 * run in one store transaction (events stored in the same transaction, journal fsync'd) -> audit ->
 * publish events -> envelope.
 *
 * Without `agent` the session, rate-limit and trust stages allow everything. With it (createAgentLayer):
 * calls need a live session, are rate-limited per session, and run (auto, notify) or wait for the
 * researcher's approval (suggest, require) by the trust layer's decision; every call is audited.
 */
export class ToolPipeline {
  private readonly tools: ReadonlyMap<string, AnyTool>;
  private readonly listeners = new Set<(events: EventRecord[]) => void>();
  /** memoized reads (ToolDef.memo) per open project, valid for one write generation */
  private readonly memos = new WeakMap<OpenProject, { generation: number; results: Map<string, unknown> }>();
  private readonly callListeners = new Set<(call: CallRecord) => void>();
  private readonly clock: Clock;
  private readonly logger: Logger;
  private listing: ToolListing[] | undefined;
  /** request id -> resolvers of get_approval_status long polls waiting for its decision ({@link awaitDecision}) */
  private readonly decisionWaiters = new Map<string, Set<() => void>>();

  constructor(private readonly opts: PipelineOptions) {
    this.tools = new Map(opts.tools.map((t) => [t.name, t]));
    this.clock = opts.clock ?? systemClock;
    this.logger = opts.logger ?? silentLogger;
  }

  /**
   * Every tool with its JSON Schema (draft 2020-12, from `z.toJSONSchema`), in registry order. With `viewer`
   * (issue 14 item 6), each tool also says the trust level that applies to that caller (`trust_level`), and
   * for an agent the description of a tool it would see held ends with what the pending answer looks like.
   */
  listTools(viewer?: ToolViewer): ToolListing[] {
    const listing = this.baseListing();
    if (!viewer) return listing;
    const agent = this.opts.agent;
    return listing.map((t) => {
      const tool = this.tools.get(t.name) as AnyTool;
      if (!agent || viewer.researcher) return { ...t, trust_level: 'auto' as const };
      if (tool.researcherOnly) return { ...t, trust_level: 'researcher_only' as const };
      const level = agent.trust.decide(tool, viewer.floor ?? 'auto').level;
      return { ...t, trust_level: level, description: `${t.description}${heldWords(level, agent.config().approvals.poll_after_ms)}` };
    });
  }

  /**
   * The viewer of {@link listTools} for `caller`: the researcher, or an agent with its session's own trust
   * floor (`context.trust_level`; auto when the session is unknown). Reads only: touches no session.
   */
  viewerOf(caller: Caller): ToolViewer {
    if (caller.researcher || !this.opts.agent) return { researcher: true };
    return { researcher: false, floor: this.opts.agent.sessions.get(caller.session_id)?.context.trust_level ?? 'auto' };
  }

  private baseListing(): ToolListing[] {
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
  async invoke(name: string, args: unknown, caller: Caller, options: InvokeOptions = {}): Promise<InvokeOutcome> {
    const started = performance.now();
    let events: EventRecord[] = [];
    let envelope: Envelope;
    let status: InvokeOutcome['status'] = 'ok';
    let decision: AuditDecision = 'permitted';
    let level: TrustLevel | undefined;
    let requestId: string | undefined;
    try {
      const session = this.resolveSession(caller);
      const tool = this.lookupTool(name, caller);
      const input = this.validateInput(tool, args);
      this.checkRateLimit(caller, tool, input);
      this.checkPaths(tool, input, this.pathPolicy(caller));
      level = this.checkTrust(caller, tool, session);
      if (level === 'suggest' || level === 'require') {
        // a held call is a real proposal: one that would fail answers now with its own error (issue 14 item 5)
        const preview = this.dryRun(tool, input, caller);
        const pending = this.requestApproval(tool, input, caller, level, preview);
        events = pending.events;
        requestId = pending.data.request_id;
        envelope = ok(pending.data);
        status = 'pending';
        decision = 'pending';
      } else {
        await this.checkSourceAccess(tool, input, caller);
        const result = await this.execute(tool, input, caller, undefined, options.onProgress);
        events = result.events;
        envelope = ok(result.data);
        if (level === 'notify') decision = 'notified';
      }
    } catch (e) {
      status = 'failed';
      decision = isDenial(e) ? 'denied' : 'failed';
      envelope = this.toFailure(name, e);
    }
    const durationMs = performance.now() - started;
    this.audit({ tool: name, caller, status, decision, trust_level: level, request_id: requestId, error_code: envelope.success ? undefined : envelope.error_code, durationMs, arguments: args });
    if (events.length > 0) this.publish(events);
    return { envelope, status, tool: name, durationMs, events };
  }

  /**
   * Stage 1: the session the call belongs to. The researcher's local session is created on first use;
   * any other caller must name a live session (adapters create implicit ones for plain HTTP clients).
   * Errors: SESSION_NOT_FOUND, SESSION_EXPIRED (both denied).
   */
  private resolveSession(caller: Caller): Session | undefined {
    const agent = this.opts.agent;
    if (!agent) return undefined;
    try {
      if (caller.client_type === 'LOCAL_UI' && !agent.sessions.get(caller.session_id)) {
        return agent.sessions.create({ client_type: 'LOCAL_UI', client_name: caller.client_name, authenticated: true, session_id: caller.session_id, user_id: caller.user });
      }
      return agent.sessions.touch(caller.session_id);
    } catch (e) {
      if (isToolError(e)) throw new StageFailure(e.code, e.message, e.details, true);
      throw e;
    }
  }

  /** Stage 2: the tool, or TOOL_NOT_FOUND (editor-only tools exist only for the researcher's own session). */
  private lookupTool(name: string, caller: Caller): AnyTool {
    const tool = this.tools.get(name);
    if (!tool || (tool.audience === 'editor' && caller.client_type !== 'LOCAL_UI')) throw new StageFailure('TOOL_NOT_FOUND', `Unknown tool "${name}". GET /tools lists the ${this.baseListing().length} tools.`);
    // researcher-only tools (erase_source): refused to agents before validation and trust, never queued for approval
    if (tool.researcherOnly && this.opts.agent && !caller.researcher) {
      throw new StageFailure('APPROVAL_FORBIDDEN', `${tool.name} is the researcher's alone (the VS Code UI, or a client holding the reviewer token); agents cannot call it or ask for it`, undefined, true);
    }
    return tool;
  }

  /** Stage 3: validate the arguments once against the tool's schema, or INVALID_ARGUMENTS. */
  private validateInput(tool: AnyTool, args: unknown): unknown {
    const input = args ?? {};
    const parsed = tool.input.safeParse(input);
    if (parsed.success) return parsed.data;
    // messages that say what was expected ("code_id must be a positive integer"), src/tools/argumentErrors.ts
    const { message, issues } = describeInvalidArguments(tool.name, parsed.error.issues, input);
    throw new StageFailure('INVALID_ARGUMENTS', message, { issues });
  }

  /**
   * Stage 4: requests and mutations per minute per session (not for the researcher). An agent's
   * get_approval_status of its own request at the advised pace (`approvals.poll_after_ms`) is free
   * (RateLimiter.freePoll). Errors: RATE_LIMITED (denied).
   */
  private checkRateLimit(caller: Caller, tool: AnyTool, input: unknown): void {
    const agent = this.opts.agent;
    if (!agent || caller.researcher) return;
    if (tool.name === 'get_approval_status') {
      const id = (input as { request_id?: unknown } | null)?.request_id;
      const own = typeof id === 'string' && this.opts.project()?.repo.getApproval(id)?.session_id === caller.session_id;
      if (own && agent.limiter.freePoll(caller.session_id, id, agent.config().approvals.poll_after_ms)) return;
    }
    try {
      agent.limiter.check(caller.session_id, tool.effect !== 'read');
    } catch (e) {
      if (isToolError(e)) throw new StageFailure(e.code, e.message, e.details, true);
      throw e;
    }
  }

  /**
   * Where `caller`'s file paths may lie (README, "Agents, trust and approvals": paths; src/core/pathPolicy.ts):
   * unrestricted for the researcher and without the agent layer; for agents the open project's folder, the
   * host's allowed roots (VS Code workspace folders, `marginalia serve --allow-path`) and
   * `agent_context.allowed_paths` (relative to the project's folder), never writing into its `.marginalia`.
   */
  pathPolicy(caller: Caller): PathPolicy {
    const agent = this.opts.agent;
    if (!agent || caller.researcher) return PathPolicy.unrestricted();
    const projectPath = this.opts.project()?.path;
    const allowed = agent.config().allowed_paths;
    return PathPolicy.deferred(() => {
      const projectDir = projectPath ? nodePath.dirname(nodePath.resolve(projectPath)) : undefined;
      const roots = [...(projectDir ? [projectDir] : []), ...(this.opts.host.allowedRoots?.() ?? []), ...allowed];
      return { roots, base: projectDir, noWrite: projectDir ? [nodePath.join(projectDir, '.marginalia')] : [] };
    });
  }

  /**
   * Stage 4b: the file paths a tool's arguments name ({@link ToolDef.paths}) against `policy`, before the
   * trust decision, so a refused path is never queued for approval. Errors: the tool's own code (denied).
   */
  private checkPaths(tool: AnyTool, input: unknown, policy: PathPolicy): void {
    if (!tool.paths || !policy.restricted) return;
    for (const p of tool.paths) {
      const value = (input as Record<string, unknown> | null)?.[p.arg];
      if (typeof value !== 'string') continue;
      try {
        policy.check(value, p.access, p.code);
      } catch (e) {
        if (isToolError(e)) throw new StageFailure(e.code, e.message, e.details, true);
        throw e;
      }
    }
  }

  /**
   * The arguments a call runs with under `policy`: each path argument checked again (it may have changed
   * since the request was queued) and replaced by its real path, so the tool reads or writes exactly what
   * was checked. Unrestricted: `input` unchanged. Errors: the tool's own code (denied).
   */
  private resolvePaths(tool: AnyTool, input: unknown, policy: PathPolicy): unknown {
    if (!tool.paths || !policy.restricted || input === null || typeof input !== 'object') return input;
    this.checkPaths(tool, input, policy);
    const out: Record<string, unknown> = { ...(input as Record<string, unknown>) };
    for (const p of tool.paths) {
      const value = out[p.arg];
      if (typeof value === 'string') out[p.arg] = policy.check(value, p.access, p.code);
    }
    return out;
  }

  /**
   * Stage 5: the trust decision (agent-context spec, section 5): auto and notify run, suggest and require
   * wait for approval. The researcher's own calls run at auto.
   */
  private checkTrust(caller: Caller, tool: AnyTool, session: Session | undefined): TrustLevel {
    const agent = this.opts.agent;
    if (!agent || caller.researcher) return 'auto';
    return agent.trust.decide(tool, session?.context.trust_level ?? 'auto').level;
  }

  /**
   * Stage 5b: an agent's change to a source the researcher is editing needs the researcher's consent
   * (HostPort.requestSourceAccess). Errors: SOURCE_BUSY (denied) when declined.
   */
  private async checkSourceAccess(tool: AnyTool, input: unknown, caller: Caller): Promise<void> {
    const ask = this.opts.host.requestSourceAccess;
    if (!ask || caller.researcher || tool.effect === 'read' || !this.opts.agent) return;
    const ids = sourceIdsOf(input);
    if (ids.length === 0) return;
    const allowed = await ask.call(this.opts.host, ids, { session_id: caller.session_id, client_name: caller.client_name, tool: tool.name });
    if (!allowed) throw new StageFailure('SOURCE_BUSY', 'The researcher is editing this source and declined to let an agent change it now; try again later', { source_ids: ids }, true);
  }

  /**
   * Stage 5c: the dry run of a call about to be held ({@link dryRunMode}). `full`: the tool runs against the
   * open project inside a transaction that is always rolled back (OpenProject.dryRun: nothing journaled, no
   * event stored or published, no snapshot; caches keyed by the write generation are dropped), with a host
   * that navigates nowhere; returns what it would return and raise. `validate`: the files its read paths name
   * must exist. `none`, no project, or a host without dry runs: nothing checked (undefined).
   * Errors: the tool's own (the call would fail now: it is not queued); TOOL_EXECUTION_ERROR for an
   * unexpected failure of the tool.
   */
  private dryRun(tool: AnyTool, input: unknown, caller: Caller): DryRunOutcome | undefined {
    const mode = dryRunMode(tool);
    if (mode === 'none') return undefined;
    const paths = this.pathPolicy(caller);
    if (mode === 'validate') {
      this.checkFilesExist(tool, input, paths);
      return undefined;
    }
    const project = this.opts.project();
    if (!project?.dryRun) return undefined;
    const host = this.opts.host;
    const quietHost: HostPort = {
      mode: host.mode,
      currentScreen: () => host.currentScreen(),
      navigate: (t) => ({ navigated: false, detail: `dry run: "${t.source_name}" was not opened` }),
      transcriptionEndpoint: host.transcriptionEndpoint,
      allowedRoots: () => host.allowedRoots?.() ?? [],
    };
    const actor: Actor = { user: caller.user, session_id: caller.session_id, client_type: caller.client_type, can_approve: false };
    const raised: DomainEvent[] = [];
    const ctx: ToolContext = {
      project,
      domain: { repo: project.repo, events: { emit: (e) => void raised.push(e) }, actor, now: isoTime(this.clock.now()) },
      actor,
      host: quietHost,
      clock: this.clock,
      progress: () => undefined,
      paths,
    };
    const data = project.dryRun(() => tool.run(ctx, input, undefined));
    return { data, events: raised };
  }

  /**
   * The `validate` dry run: every absolute path a tool reads ({@link ToolDef.paths}, access `read`) names an
   * existing file. Relative paths are left to the tool (it refuses them with its own message). Errors: the
   * path's `missing` code, else its `code`, naming the path.
   */
  private checkFilesExist(tool: AnyTool, input: unknown, policy: PathPolicy): void {
    for (const p of tool.paths ?? []) {
      const value = (input as Record<string, unknown> | null)?.[p.arg];
      if (p.access !== 'read' || typeof value !== 'string' || !nodePath.isAbsolute(value)) continue;
      const real = policy.restricted ? policy.check(value, 'read', p.code) : value;
      let isFile: boolean;
      try {
        isFile = fs.statSync(real).isFile();
      } catch {
        isFile = false;
      }
      if (!isFile) throw new StageFailure(p.missing ?? p.code, `${p.arg}: no file at "${value}"; nothing was queued for approval`, { path: value });
    }
  }

  /**
   * Holds a call for the researcher: stores the request (it survives a restart) and emits
   * approval.requested. Errors: NO_PROJECT, APPROVAL_QUEUE_FULL (denied).
   */
  private requestApproval(tool: AnyTool, input: unknown, caller: Caller, level: 'suggest' | 'require', preview?: DryRunOutcome): { data: PendingApproval; events: EventRecord[] } {
    const agent = this.opts.agent as AgentLayer;
    const project = this.opts.project();
    if (!project) throw new StageFailure(tool.noProjectCode ?? 'NO_PROJECT', 'No project is open. Ask the researcher to open one (Marginalia: Open Project).');
    this.sweepApprovals();
    const cfg = agent.config().approvals;
    const pending = project.repo.listApprovals('pending', cfg.max_pending + 1).length;
    if (pending >= cfg.max_pending) {
      throw new StageFailure('APPROVAL_QUEUE_FULL', `${pending} requests already wait for the researcher (approvals.max_pending = ${cfg.max_pending}); wait for decisions before asking for more`, { pending }, true);
    }
    const now = this.clock.now();
    const record: ApprovalRecord = {
      request_id: newUuid(),
      tool: tool.name,
      arguments: JSON.stringify(input ?? {}),
      session_id: caller.session_id,
      client_type: caller.client_type,
      client_name: caller.client_name,
      user: caller.user,
      trust_level: level,
      // in words, from the project as it is now and what the dry run did (agent/describeRequest.ts): names, counts, a passage excerpt
      description: describeRequest(project.repo, tool, input, preview),
      status: 'pending',
      created_at: isoTime(now),
      expires_at: isoTime(now + cfg.timeout_minutes * 60_000),
      decided_at: null,
      decided_by: null,
      reason: null,
      result: null,
      error_code: null,
      read_versions: this.readVersions(project, tool, input),
    };
    const events = project.transaction(() => {
      project.repo.insertApproval(record);
      return this.storeEvents(project, caller, record.request_id, now, [
        {
          event_type: 'approval.requested',
          aggregate_type: 'approval',
          aggregate_id: record.request_id,
          payload: { request_id: record.request_id, action_type: tool.name, description: record.description, payload: input ?? {}, trust_level: level, expires_at: record.expires_at },
        },
      ]);
    });
    return {
      data: {
        status: 'pending_approval',
        request_id: record.request_id,
        tool: tool.name,
        trust_level: level,
        expires_at: record.expires_at,
        poll_after_ms: cfg.poll_after_ms,
        message:
          `${tool.title} waits for the researcher's approval (trust level ${level})${preview ? '; a dry run found it would succeed now' : ''}. It runs when approved. ` +
          `Ask get_approval_status with this request_id no more often than every ${cfg.poll_after_ms} ms (that never spends your rate budget), or pass wait_ms (up to ${MAX_APPROVAL_WAIT_MS}) to wait for the decision in one call.`,
      },
      events,
    };
  }

  /**
   * Approves a pending request and runs the stored call (with `editedArguments` when the researcher
   * changed them) on behalf of the agent that asked, in one transaction with approval.granted. Only the
   * researcher may approve, and never a request of their own session.
   * Errors: APPROVAL_NOT_FOUND, APPROVAL_NOT_PENDING, APPROVAL_FORBIDDEN, INVALID_ARGUMENTS (edited
   * arguments), and the tool's own errors (the request is then marked failed and approval.failed emitted).
   */
  async approve(requestId: string, approver: Caller, editedArguments?: unknown): Promise<InvokeOutcome> {
    const started = performance.now();
    let events: EventRecord[] = [];
    let envelope: Envelope;
    let status: InvokeOutcome['status'] = 'ok';
    let toolName = 'approve';
    // refused by the permission rule (not the researcher, or its own request): audited as denied
    let refused = false;
    try {
      const { project, record } = this.decidable(requestId, approver);
      toolName = record.tool;
      const tool = this.tools.get(record.tool);
      if (!tool) throw new StageFailure('TOOL_NOT_FOUND', `The requested tool ${record.tool} no longer exists`);
      const args = editedArguments === undefined ? (JSON.parse(record.arguments) as unknown) : editedArguments;
      const input = this.validateInput(tool, args);
      // the call as held: refused when what it named changed since (an edited call is the researcher's own, as the project is now)
      if (editedArguments === undefined) this.checkVersions(project, record);
      const agentCaller: Caller = { session_id: record.session_id, client_type: record.client_type, client_name: record.client_name, user: record.user, correlation_id: requestId, approved_by: approver.session_id };
      const decidedAt = isoTime(this.clock.now());
      try {
        const result = await this.execute(tool, input, agentCaller, (raise, data) => {
          project.repo.decideApproval(requestId, {
            status: 'completed',
            decided_at: decidedAt,
            decided_by: approver.session_id,
            reason: null,
            result: JSON.stringify(data ?? null),
            error_code: null,
            arguments: JSON.stringify(input ?? {}),
          });
          raise({ event_type: 'approval.granted', aggregate_type: 'approval', aggregate_id: requestId, payload: { request_id: requestId, approved: true, action_type: tool.name, approved_by: approver.session_id, edited: editedArguments !== undefined } }, true);
        });
        events = result.events;
        envelope = ok({ request_id: requestId, status: 'completed', tool: tool.name, result: result.data });
      } catch (e) {
        const failure = this.toFailure(tool.name, e);
        const code = failure.success ? 'TOOL_EXECUTION_ERROR' : failure.error_code;
        events = project.transaction(() => {
          project.repo.decideApproval(requestId, { status: 'failed', decided_at: decidedAt, decided_by: approver.session_id, reason: failure.success ? null : failure.error, result: null, error_code: code, arguments: JSON.stringify(input ?? {}) });
          return this.storeEvents(project, approver, requestId, this.clock.now(), [
            { event_type: 'approval.granted', aggregate_type: 'approval', aggregate_id: requestId, payload: { request_id: requestId, approved: true, action_type: tool.name, approved_by: approver.session_id } },
            { event_type: 'approval.failed', aggregate_type: 'approval', aggregate_id: requestId, payload: { request_id: requestId, action_type: tool.name, error_code: code } },
          ]);
        });
        throw e;
      }
    } catch (e) {
      status = 'failed';
      refused = isDenial(e);
      envelope = this.toFailure(toolName, e);
    }
    const durationMs = performance.now() - started;
    this.audit({ tool: `approve:${toolName}`, caller: approver, status, decision: status === 'ok' ? 'permitted' : refused ? 'denied' : 'failed', request_id: requestId, error_code: envelope.success ? undefined : envelope.error_code, durationMs, arguments: editedArguments });
    if (events.length > 0) this.publish(events);
    return { envelope, status, tool: toolName, durationMs, events };
  }

  /**
   * Rejects a pending request with an optional reason (approval.denied). Same permission rules as
   * {@link approve}. Errors: APPROVAL_NOT_FOUND, APPROVAL_NOT_PENDING, APPROVAL_FORBIDDEN.
   */
  reject(requestId: string, approver: Caller, reason?: string): InvokeOutcome {
    const started = performance.now();
    let events: EventRecord[] = [];
    let envelope: Envelope;
    let status: InvokeOutcome['status'] = 'ok';
    let refused = false;
    try {
      const { project, record } = this.decidable(requestId, approver);
      events = this.decideRejected(project, record, approver, reason ?? null);
      envelope = ok({ request_id: requestId, status: 'rejected', tool: record.tool, reason: reason ?? null });
    } catch (e) {
      status = 'failed';
      refused = isDenial(e);
      envelope = this.toFailure('reject', e);
    }
    const durationMs = performance.now() - started;
    this.audit({ tool: 'reject', caller: approver, status, decision: status === 'ok' ? 'permitted' : refused ? 'denied' : 'failed', request_id: requestId, error_code: envelope.success ? undefined : envelope.error_code, durationMs, arguments: { reason } });
    if (events.length > 0) this.publish(events);
    return { envelope, status, tool: 'reject', durationMs, events };
  }

  /**
   * Rejects every pending request whose time is up (approvals.timeout_minutes, spec: 5 minutes) with the
   * reason `timeout`. Hosts call it on a timer; the pipeline also calls it before queueing. Returns how many.
   */
  sweepApprovals(): number {
    const project = this.opts.project();
    if (!project || !this.opts.agent) return 0;
    const now = isoTime(this.clock.now());
    const expired = project.repo.listApprovals('pending').filter((a) => a.expires_at <= now);
    const system: Caller = { session_id: 'marginalia', client_type: 'LOCAL_UI', client_name: 'marginalia', user: 'marginalia' };
    const events: EventRecord[] = [];
    for (const a of expired) events.push(...this.decideRejected(project, a, system, 'timeout'));
    if (events.length > 0) this.publish(events);
    return expired.length;
  }

  /** Stored approval requests (all, or with one status), oldest first. */
  listApprovals(status?: ApprovalRecord['status']): ApprovalRecord[] {
    const project = this.opts.project();
    if (!project) return [];
    this.sweepApprovals();
    return project.repo.listApprovals(status);
  }

  /**
   * Stores and publishes events that no tool call raised (session.connected, session.disconnected).
   * Without an open project they are published unstored, with sequence number 0.
   */
  emitSystemEvents(caller: Caller, raised: DomainEvent[]): EventRecord[] {
    const project = this.opts.project();
    const now = this.clock.now();
    let events: EventRecord[];
    if (project) events = project.transaction(() => this.storeEvents(project, caller, newUuid(), now, raised));
    else events = raised.map((e) => this.toRecord(e, caller, newUuid(), now, newUuid()));
    this.publish(events);
    return events;
  }

  private decidable(requestId: string, approver: Caller): { project: OpenProject; record: ApprovalRecord } {
    const project = this.opts.project();
    if (!project) throw new StageFailure('NO_PROJECT', 'No project is open.');
    this.sweepApprovals();
    const record = project.repo.getApproval(requestId);
    if (!record) throw new StageFailure('APPROVAL_NOT_FOUND', `No approval request ${requestId}`);
    if (record.status !== 'pending') {
      throw new StageFailure('APPROVAL_NOT_PENDING', `Request ${requestId} was already decided: ${record.status}${record.reason ? ` (${record.reason})` : ''}`, { status: record.status, reason: record.reason });
    }
    if (!approver.researcher) throw new StageFailure('APPROVAL_FORBIDDEN', 'Only the researcher (the VS Code UI, or a client holding the reviewer token) may approve or reject requests', undefined, true);
    if (approver.session_id === record.session_id) throw new StageFailure('APPROVAL_FORBIDDEN', 'A session cannot approve or reject its own request', undefined, true);
    return { project, record };
  }

  private decideRejected(project: OpenProject, record: ApprovalRecord, by: Caller, reason: string | null): EventRecord[] {
    const now = this.clock.now();
    return project.transaction(() => {
      project.repo.decideApproval(record.request_id, { status: 'rejected', decided_at: isoTime(now), decided_by: by.session_id, reason, result: null, error_code: null, arguments: record.arguments });
      return this.storeEvents(project, by, record.request_id, now, [
        { event_type: 'approval.denied', aggregate_type: 'approval', aggregate_id: record.request_id, payload: { request_id: record.request_id, approved: false, action_type: record.tool, reason, session_id: record.session_id } },
      ]);
    });
  }

  /** The envelope of `e`; `eventId` is a random UUID for an event that is not stored, else set by the store. */
  private toRecord(e: DomainEvent, caller: Caller, correlation: string, now: number, eventId: string): EventRecord {
    return {
      event_id: eventId,
      event_type: e.event_type,
      timestamp: isoTime(now),
      aggregate_type: e.aggregate_type,
      aggregate_id: e.aggregate_id,
      caused_by: { session_id: caller.session_id, client_type: caller.client_type, user: caller.user },
      payload: e.payload,
      metadata: { correlation_id: correlation, sequence_number: 0 },
    };
  }

  /** Stores events in the current transaction; the store gives each its sequence number and id. */
  private storeEvents(project: OpenProject, caller: Caller, correlation: string, now: number, raised: DomainEvent[]): EventRecord[] {
    return raised.map((e) => {
      const record = this.toRecord(e, caller, correlation, now, '');
      const stored = project.repo.insertEvent(record);
      record.metadata.sequence_number = stored.seq;
      record.event_id = stored.event_id;
      return record;
    });
  }

  /**
   * Stage 6: prepare, then run in one transaction that also stores the call's events. `also` runs in the
   * same transaction after the tool (approvals record their decision there); events it raises with
   * `first` are stored before the tool's own.
   */
  private async execute(
    tool: AnyTool,
    input: unknown,
    caller: Caller,
    also?: (raise: (e: DomainEvent, first?: boolean) => void, data: unknown) => void,
    onProgress?: (p: ToolProgress) => void,
  ): Promise<{ data: unknown; events: EventRecord[] }> {
    const needsProject = tool.needsProject ?? true;
    const paths = this.pathPolicy(caller);
    input = this.resolvePaths(tool, input, paths);
    const progress = this.progressReporter(tool, caller, onProgress);
    let project = this.opts.project();
    if (needsProject && !project) throw new StageFailure(tool.noProjectCode ?? 'NO_PROJECT', 'No project is open. Ask the researcher to open one (Marginalia: Open Project).');
    const prepared = tool.prepare
      ? await tool.prepare(input, { progress, projectPath: project?.path ?? null, vcs: project?.vcs ?? null, actor: { user: caller.user, session_id: caller.session_id, client_type: caller.client_type }, reader: project?.repo ?? null, embeddings: this.opts.embeddings ?? null, transcriptionEndpoint: this.opts.host.transcriptionEndpoint, paths, erasure: project ? { store: project.erasure ?? null, history: project.historyErasure ?? null, audit: this.opts.agent?.audit ?? null } : null, awaitDecision: (id, ms) => this.awaitDecision(id, ms) })
      : undefined;
    project = this.opts.project();
    if (needsProject && !project) throw new StageFailure(tool.noProjectCode ?? 'NO_PROJECT', 'The project was closed while the call was prepared.');
    const actor: Actor = { user: caller.user, session_id: caller.session_id, client_type: caller.client_type, can_approve: caller.researcher === true || !this.opts.agent, ...(caller.approved_by !== undefined ? { approved_by: caller.approved_by } : {}) };
    const raised: DomainEvent[] = [];
    const now = this.clock.now();
    const ctx: ToolContext = {
      project: project as OpenProject,
      domain: { repo: (project as OpenProject | null)?.repo as OpenProject['repo'], events: { emit: (e) => void raised.push(e) }, actor, now: isoTime(now) },
      actor,
      host: this.opts.host,
      clock: this.clock,
      progress,
      paths,
    };
    if (!project || (tool.effect === 'read' && !also)) return { data: tool.memo && !tool.prepare ? this.memoRead(project, tool, input, ctx) : tool.run(ctx, input, prepared), events: [] };
    const correlation = caller.correlation_id ?? newUuid();
    const open = project;
    return open.transaction(() => {
      const data = tool.run(ctx, input, prepared);
      const leading: DomainEvent[] = [];
      also?.((e, first) => void (first ? leading.push(e) : raised.push(e)), data);
      return { data, events: this.storeEvents(open, caller, correlation, now, [...leading, ...raised]) };
    });
  }

  /**
   * A memoized read (ToolDef.memo): the result of `tool` for `input` made at the project's current write
   * generation, else a fresh run, kept (deep-frozen, {@link shareResult}) until the generation changes. At
   * most {@link MEMO_ENTRIES} inputs per project; without a generation (a project port that has none) it
   * always runs.
   */
  private memoRead(project: OpenProject | null, tool: AnyTool, input: unknown, ctx: ToolContext): unknown {
    const generation = project?.writeGeneration;
    if (!project || generation === undefined) return tool.run(ctx, input, undefined);
    let memo = this.memos.get(project);
    if (memo?.generation !== generation) {
      memo = { generation, results: new Map() };
      this.memos.set(project, memo);
    }
    const key = `${tool.name}\u0000${JSON.stringify(input)}`;
    if (memo.results.has(key)) return memo.results.get(key);
    const data = shareResult(tool.run(ctx, input, undefined));
    // the generation is read again: a read never writes, but a tool that did would not be cached stale
    if (project.writeGeneration === generation) {
      if (memo.results.size >= MEMO_ENTRIES) memo.results.clear();
      memo.results.set(key, data);
    }
    return data;
  }

  /**
   * The progress function a call's `prepare` and `run` get: forwards to `sink` at most every
   * {@link PROGRESS_INTERVAL_MS} (a step's last report, done = total, always), and logs at most once a second.
   */
  private progressReporter(tool: AnyTool, caller: Caller, sink: ((p: ToolProgress) => void) | undefined): (p: ToolProgress) => void {
    let lastSent = -Infinity;
    let lastLogged = -Infinity;
    return (p) => {
      const now = performance.now();
      const final = p.total !== null && p.done >= p.total;
      if (sink && (final || now - lastSent >= PROGRESS_INTERVAL_MS)) {
        lastSent = now;
        try {
          sink(p);
        } catch (e) {
          this.logger.warn(`progress listener of ${tool.name} failed: ${e instanceof Error ? e.message : String(e)}`);
        }
      }
      if (now - lastLogged >= PROGRESS_LOG_INTERVAL_MS) {
        lastLogged = now;
        this.logger.info(`${tool.name} (${caller.client_name}): ${describeProgress(p)}`);
      }
    };
  }

  /** Stage 7: record the call. */
  private audit(call: CallRecord): void {
    try {
      this.opts.audit?.record(call);
      this.opts.agent?.audit?.record({
        timestamp: isoTime(this.clock.now()),
        session_id: call.caller.session_id,
        client_type: call.caller.client_type,
        client_name: call.caller.client_name,
        user: call.caller.user,
        tool: call.tool,
        decision: call.decision,
        trust_level: call.trust_level,
        error_code: call.error_code,
        request_id: call.request_id,
        correlation_id: call.caller.correlation_id,
        duration_ms: Math.round(call.durationMs * 1000) / 1000,
        arguments: call.arguments,
      });
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

  /**
   * ApprovalRecord.read_versions of a call about to be held: the newest event's sequence number and the
   * version of every entity its arguments name ({@link entityRefsOf}) that exists now; null when it names none
   * or the repository has no versions.
   */
  private readVersions(project: OpenProject, tool: AnyTool, input: unknown): string | null {
    const refs = entityRefsOf(tool.name, input);
    if (refs.length === 0 || !project.repo.entityVersions) return null;
    const versions: Record<string, number> = {};
    for (const v of project.repo.entityVersions(refs)) if (v.version !== null) versions[`${v.kind}:${v.id}`] = v.version;
    const read: ReadVersions = { seq: project.repo.lastEventSeq(), versions };
    return JSON.stringify(read);
  }

  /**
   * The version check on approval (issue 14 item 5; agent-context spec, conflict table: "the same code renamed
   * by two sessions: version check"): every code, category and source the held call named must still be at
   * the version it had when the call was held, and every text segment must still exist (a segment modified
   * meanwhile is "last write wins" in that table: the approved call's write is the last). Errors: VERSION_CONFLICT (409) naming each change, what it was and who made it
   * (`details.changes`: {@link VersionChange}[]); the request stays pending, so the researcher can approve an
   * edited call or reject it.
   */
  private checkVersions(project: OpenProject, record: ApprovalRecord): void {
    if (!record.read_versions || !project.repo.entityVersions) return;
    let read: ReadVersions;
    try {
      read = JSON.parse(record.read_versions) as ReadVersions;
    } catch {
      return;
    }
    const refs: EntityRef[] = Object.keys(read.versions).map((key) => {
      const [kind, id] = key.split(':');
      return { kind: kind as EntityRef['kind'], id: Number(id) };
    });
    // a text segment changed meanwhile is last write wins (the spec's conflict table); only its deletion conflicts
    const changed = project.repo.entityVersions(refs).filter((v) => (v.kind === 'segment' ? v.version === null : v.version !== read.versions[`${v.kind}:${v.id}`]));
    if (changed.length === 0) return;
    const causes = this.lastEventsAbout(project, read.seq, changed);
    const changes: VersionChange[] = changed.map((v) => ({
      kind: v.kind,
      id: v.id,
      name: v.name,
      read_version: read.versions[`${v.kind}:${v.id}`] as number,
      version: v.version,
      changed_by: causes.get(`${v.kind}:${v.id}`) ?? null,
    }));
    const words = changes.map((c) => {
      const what = c.name !== null ? `${c.kind} '${c.name}'` : `${c.kind} ${c.id}`;
      const how = c.version === null ? 'was deleted' : `changed (version ${c.read_version} -> ${c.version}${c.changed_by ? `: ${c.changed_by.event_type}` : ''})`;
      return `${what} ${how}${c.changed_by ? ` by ${c.changed_by.user} (${c.changed_by.client_type})` : ''}`;
    });
    throw new StageFailure(
      'VERSION_CONFLICT',
      `Since ${record.client_name} asked for this, ${words.join('; ')}. The request still waits: approve it with edited arguments, or reject it.`,
      { request_id: record.request_id, changes },
    );
  }

  /** The newest stored event after `afterSeq` about each entity of `refs` (aggregate type = kind, aggregate id = id), by `kind:id`; scans at most 20 000 events. */
  private lastEventsAbout(project: OpenProject, afterSeq: number, refs: readonly EntityRef[]): Map<string, NonNullable<VersionChange['changed_by']>> {
    const wanted = new Set(refs.map((r) => `${r.kind}:${r.id}`));
    const found = new Map<string, NonNullable<VersionChange['changed_by']>>();
    let after = afterSeq;
    for (let scanned = 0; scanned < 20_000; ) {
      const page = project.repo.listEventsSince(after, 500);
      for (const e of page) {
        const key = `${e.aggregate_type}:${e.aggregate_id}`;
        if (wanted.has(key)) found.set(key, { event_type: e.event_type, user: e.caused_by.user, client_type: e.caused_by.client_type, session_id: e.caused_by.session_id, at: e.timestamp });
      }
      scanned += page.length;
      if (page.length < 500) break;
      after = page[page.length - 1]?.metadata.sequence_number ?? after;
    }
    return found;
  }

  /**
   * Resolves once approval request `requestId` is decided (approval.granted, approval.denied, approval.failed
   * published; a timeout sweep counts), after `waitMs` milliseconds (at most {@link MAX_APPROVAL_WAIT_MS}), or
   * when it expires, whichever comes first; at once when it is unknown or not pending. Never rejects.
   * get_approval_status's `wait_ms` long poll (PrepareContext.awaitDecision).
   */
  awaitDecision(requestId: string, waitMs: number): Promise<void> {
    const project = this.opts.project();
    if (!project) return Promise.resolve();
    this.sweepApprovals();
    const record = project.repo.getApproval(requestId);
    if (!record || record.status !== 'pending') return Promise.resolve();
    const left = Date.parse(record.expires_at) - this.clock.now();
    const ms = Math.max(0, Math.min(waitMs, MAX_APPROVAL_WAIT_MS, Number.isFinite(left) ? left : MAX_APPROVAL_WAIT_MS));
    if (ms === 0) return Promise.resolve();
    return new Promise((resolve) => {
      let waiters = this.decisionWaiters.get(requestId);
      if (!waiters) {
        waiters = new Set();
        this.decisionWaiters.set(requestId, waiters);
      }
      const set = waiters;
      const done = (): void => {
        clearTimeout(timer);
        set.delete(done);
        if (set.size === 0 && this.decisionWaiters.get(requestId) === set) this.decisionWaiters.delete(requestId);
        resolve();
      };
      const timer = setTimeout(done, ms);
      set.add(done);
    });
  }

  /** Stage 8: hand the committed events to subscribers (trees, SSE, WebSocket, ...). */
  private publish(events: EventRecord[]): void {
    if (this.decisionWaiters.size > 0) {
      for (const e of events) {
        if (e.aggregate_type !== 'approval' || e.event_type === 'approval.requested') continue;
        for (const wake of [...(this.decisionWaiters.get(e.aggregate_id) ?? [])]) wake();
      }
    }
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
