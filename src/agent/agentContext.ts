import { timingSafeEqual } from 'node:crypto';
import type { Clock } from '../core/clock';
import { isoTime, systemClock } from '../core/clock';
import { isToolError, ToolError, type ErrorCode } from '../core/errors';
import type { Disposable } from '../core/lifecycle';
import type { Logger } from '../core/log';
import { silentLogger } from '../core/log';
import type { EventRecord } from '../domain/events';
import type { OpenProject } from '../tools/context';
import type { AnyTool } from '../tools/defineTool';
import { AuditLog, type AuditStorage } from './auditLog';
import { defaultConfig, parseConfig, type AgentContextConfig } from './config';
import { EventHub } from './eventHub';
import type { AgentLayer, Caller, InvokeOptions, ToolPipeline } from './pipeline';
import { RateLimiter } from './rateLimits';
import { SessionManager, type ClientType, type Session } from './sessions';
import { TrustPolicy } from './trust';

/** What a bearer token proves: an agent, or the researcher (reviewer token). */
export type Role = 'agent' | 'researcher';

/**
 * The two secrets of an install: the agent token (given to agents through the discovery file or
 * MARGINALIA_TOKEN) and the reviewer token (the researcher's; never written to the discovery file).
 */
export interface Tokens {
  agent: string;
  reviewer: string;
}

function same(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * The role a bearer token proves (compared in constant time), or null for a missing or wrong token.
 * `authorization` is the raw header value (`Bearer <token>`) or the bare token.
 */
export function roleOf(tokens: Tokens, authorization: string | undefined): Role | null {
  if (!authorization) return null;
  const token = authorization.replace(/^Bearer\s+/i, '').trim();
  if (!token) return null;
  if (same(token, tokens.reviewer)) return 'researcher';
  if (same(token, tokens.agent)) return 'agent';
  return null;
}

/** Options of {@link createAgentContext}. */
export interface AgentContextOptions {
  tools: readonly AnyTool[];
  project: () => OpenProject | null;
  /** the text of `.marginalia/config.yaml`, or undefined for the defaults */
  configText?: string;
  /** VS Code settings that override the file (same shape, partial) */
  overrides?: (cfg: AgentContextConfig) => AgentContextConfig;
  tokens: Tokens;
  /**
   * The researcher's coder name (issue 14, item 1): calls made with the reviewer token are recorded as this
   * coder (segment owners, events' `caused_by.user`, approval decisions, snapshot authors), whatever client
   * name the request carries; an explicit user (`X-Marginalia-User`) from the reviewer token names another
   * human coder the researcher enters work for. Default: the client's user as before.
   */
  researcherName?: () => string;
  audit?: AuditStorage;
  clock?: Clock;
  logger?: Logger;
}

/**
 * The agent-context layer (shared/spec/agent-context-design.md) around the one pipeline: configuration,
 * sessions, trust, rate limits, audit, the event hub and approvals. Adapters (HTTP, REST+SSE, MCP,
 * WebSocket, gRPC, CLI) only authenticate, open sessions and call through {@link call}; none of them can
 * bypass a stage.
 */
export class AgentContext implements Disposable {
  readonly layer: AgentLayer;
  readonly hub: EventHub;
  readonly sessions: SessionManager;
  readonly trust: TrustPolicy;
  /**
   * What the server composition actually serves (src/cli/surfaces.ts), for `qda://project/settings`: host, HTTP
   * port, gRPC port (null when off) and the surfaces on; undefined while no server runs.
   */
  served: { host: string; port: number; grpc_port: number | null; surfaces: string[] } | undefined;
  private pipelineRef: ToolPipeline | undefined;
  private cfg: AgentContextConfig;
  private readonly implicit = new Map<string, string>();
  private readonly clock: Clock;
  private readonly subscriptions: Disposable[] = [];
  private readonly auditedErrors = new WeakSet<object>();

  /** Errors: INVALID_CONFIG when `configText` does not validate. */
  constructor(private readonly opts: AgentContextOptions) {
    this.clock = opts.clock ?? systemClock;
    this.cfg = this.load(opts.configText);
    const config = () => this.cfg;
    this.trust = new TrustPolicy(config, opts.tools);
    this.sessions = new SessionManager(config, this.clock, () => opts.project()?.path ?? '', {
      // role: the token's role (researcher, agent, null), so the event log tells whose actions a session's are (undo: src/domain/undoRedo.ts)
      connected: (s) =>
        this.sessionEvent(s, 'session.connected', { session_id: s.session_id, client_type: s.client_type, client_name: s.client_name, role: (s.context.preferences.role as string | undefined) ?? null }),
      disconnected: (s, reason) => {
        this.layer.limiter.forget(s.session_id);
        for (const [k, v] of this.implicit) if (v === s.session_id) this.implicit.delete(k);
        this.sessionEvent(s, 'session.disconnected', { session_id: s.session_id, reason });
      },
    });
    this.layer = {
      config,
      sessions: this.sessions,
      trust: this.trust,
      limiter: new RateLimiter(config, this.clock),
      audit: opts.audit ? new AuditLog(opts.audit, config) : undefined,
    };
    this.hub = new EventHub((after, limit) => opts.project()?.repo.listEventsSince(after, limit) ?? [], config, this.clock);
  }

  /** The current configuration. */
  get config(): AgentContextConfig {
    return this.cfg;
  }

  /** Connects the pipeline built with {@link layer}; its events then reach the hub. */
  attach(pipeline: ToolPipeline): void {
    this.pipelineRef = pipeline;
    this.subscriptions.push(pipeline.onEvents((events) => this.hub.publish(events)));
  }

  /** Replaces the configuration (the file or VS Code settings changed). Errors: INVALID_CONFIG. */
  reload(configText: string | undefined): void {
    this.cfg = this.load(configText);
  }

  private load(text: string | undefined): AgentContextConfig {
    const base = text === undefined ? defaultConfig() : parseConfig(text, (p, l) => TrustPolicy.checkOverride(this.opts.tools, p, l));
    return this.opts.overrides ? this.opts.overrides(base) : base;
  }

  private get pipeline(): ToolPipeline {
    if (!this.pipelineRef) throw new Error('AgentContext.attach(pipeline) was not called');
    return this.pipelineRef;
  }

  /** The role a bearer token proves, or null. */
  authenticate(authorization: string | undefined): Role | null {
    return roleOf(this.opts.tokens, authorization);
  }

  /**
   * Opens a session for a client that presented `authorization` (spec section 3: a failed
   * authentication ends the session). Errors: UNAUTHORIZED, SESSION_LIMIT.
   */
  openSession(input: { authorization: string | undefined; client_type: ClientType; client_name: string; user?: string; trust_level?: Session['context']['trust_level'] }): {
    session: Session;
    caller: Caller;
  } {
    const role = this.authenticate(input.authorization);
    const session = this.audited('session:open', { client_type: input.client_type, client_name: input.client_name }, () =>
      this.sessions.create({
        client_type: input.client_type,
        client_name: input.client_name,
        authenticated: role !== null,
        user_id: input.user,
        trust_level: input.trust_level,
        preferences: { role },
      }),
    );
    return { session, caller: this.callerOf(session) };
  }

  /**
   * The caller of a request that names no session: one implicit session per (token, client name), so
   * plain HTTP clients keep working. Errors: UNAUTHORIZED, SESSION_LIMIT.
   */
  implicitCaller(authorization: string | undefined, clientName: string, clientType: ClientType = 'REST_CLIENT', user?: string): Caller {
    return this.audited('session:open', { client_type: clientType, client_name: clientName }, () => this.implicit_(authorization, clientName, clientType, user));
  }

  private implicit_(authorization: string | undefined, clientName: string, clientType: ClientType, user?: string): Caller {
    const role = this.authenticate(authorization);
    if (role === null) this.sessions.create({ client_type: clientType, client_name: clientName, authenticated: false });
    const key = `${role}:${clientType}:${clientName}`;
    const existing = this.implicit.get(key);
    const live = existing ? this.sessions.get(existing) : undefined;
    if (live && live.status !== 'EXPIRED') return this.callerOf(live, user);
    const session = this.sessions.create({ client_type: clientType, client_name: clientName, authenticated: true, user_id: user ?? clientName, implicit: true, preferences: { role } });
    this.implicit.set(key, session.session_id);
    return this.callerOf(session, user);
  }

  /**
   * The caller of an existing session, checking that `authorization` proves the same role the session
   * was opened with. Errors: SESSION_NOT_FOUND, UNAUTHORIZED.
   */
  callerFor(sessionId: string, authorization: string | undefined): Caller {
    const session = this.sessions.get(sessionId);
    const who = { session_id: sessionId.slice(0, 100), client_type: session?.client_type, client_name: session?.client_name };
    return this.audited('session:resume', who, () => {
      if (!session) throw new ToolError('SESSION_NOT_FOUND', `No session ${sessionId.slice(0, 100)}: create one first, or it has ended`);
      const role = this.authenticate(authorization);
      if (role === null || role !== session.context.preferences.role) throw new ToolError('UNAUTHORIZED', 'The token does not belong to this session');
      return this.callerOf(session);
    });
  }

  /**
   * Runs `fn` (a session or authentication step of an adapter) and audits its refusal (a ToolError:
   * UNAUTHORIZED, SESSION_NOT_FOUND, SESSION_EXPIRED, SESSION_LIMIT) as `denied` with `stage` as the tool,
   * then rethrows it. These refusals happen before the pipeline, which audits everything after.
   */
  private audited<T>(stage: string, who: { session_id?: string; client_type?: string; client_name?: string }, fn: () => T): T {
    try {
      return fn();
    } catch (e) {
      if (isToolError(e)) {
        this.auditRefusal({ route: stage, error_code: e.code, ...who });
        this.auditedErrors.add(e);
      }
      throw e;
    }
  }

  /** True when `e` is a refusal this context has audited already (adapters then do not audit it again). */
  wasAudited(e: unknown): boolean {
    return typeof e === 'object' && e !== null && this.auditedErrors.has(e);
  }

  private callerOf(session: Session, user?: string): Caller {
    const researcher = session.context.preferences.role === 'researcher';
    const name = researcher ? this.opts.researcherName?.() : undefined;
    return {
      session_id: session.session_id,
      client_type: session.client_type,
      client_name: session.client_name,
      // the researcher may name another human coder explicitly (X-Marginalia-User: entering a colleague's codings
      // for an agreement check); otherwise the researcher's own coder name, never the client's name
      user: user ?? (name || session.context.user_id),
      researcher,
    };
  }

  /** Calls a tool through the pipeline (every stage applies); `options.onProgress` receives long work's progress. */
  call(caller: Caller, tool: string, args: unknown, options?: InvokeOptions) {
    return this.pipeline.invoke(tool, args, caller, options);
  }

  /** Approves a request (see ToolPipeline.approve). */
  approve(caller: Caller, requestId: string, editedArguments?: unknown) {
    return this.pipeline.approve(requestId, caller, editedArguments);
  }

  /** Rejects a request (see ToolPipeline.reject). */
  reject(caller: Caller, requestId: string, reason?: string) {
    return this.pipeline.reject(requestId, caller, reason);
  }

  /** Stored approval requests, oldest first (expired ones are rejected first). */
  listApprovals(status?: 'pending' | 'completed' | 'failed' | 'rejected') {
    return this.pipeline.listApprovals(status);
  }

  /**
   * Audits a request refused before it reached the pipeline: by the server's guards (bad Host or Origin,
   * no or bad token, a body that is not JSON; decision `denied`, no session) or by an adapter (an unknown
   * route or query parameter; decision `failed`). `tool` is the route (`POST /tools/list_codes`; never the
   * query string, which may hold a token).
   */
  auditRefusal(input: { route: string; error_code: ErrorCode; client_name?: string; client_type?: string; session_id?: string; correlation_id?: string; decision?: 'denied' | 'failed' }): void {
    try {
      this.layer.audit?.record({
        timestamp: isoTime(this.clock.now()),
        session_id: input.session_id ?? '',
        client_type: input.client_type ?? '',
        client_name: (input.client_name ?? '').slice(0, 100),
        user: '',
        tool: input.route.slice(0, 300),
        decision: input.decision ?? 'denied',
        error_code: input.error_code,
        correlation_id: input.correlation_id?.slice(0, 100),
        duration_ms: 0,
      });
    } catch (e) {
      (this.opts.logger ?? silentLogger).error('audit failed', e);
    }
  }

  /** The sequence number of the newest stored event (0 when none, or no project is open). */
  headSeq(): number {
    return this.opts.project()?.repo.lastEventSeq() ?? 0;
  }

  /** Stored events after `afterSeq` matching `patterns` (all when empty), at most `limit`. */
  history(afterSeq: number, limit: number, patterns: string[] = []): EventRecord[] {
    const repo = this.opts.project()?.repo;
    if (!repo) return [];
    const out: EventRecord[] = [];
    let after = afterSeq;
    while (out.length < limit) {
      const page = repo.listEventsSince(after, 500);
      for (const e of page) if (patterns.length === 0 || patterns.some((p) => p === '*' || (p.endsWith('.*') ? e.event_type.startsWith(p.slice(0, -1)) : p === e.event_type))) out.push(e);
      if (page.length < 500) break;
      after = page[page.length - 1]?.metadata.sequence_number ?? after;
    }
    return out.slice(0, limit);
  }

  private sessionEvent(s: Session, type: 'session.connected' | 'session.disconnected', payload: Record<string, unknown>): void {
    if (!this.pipelineRef) return;
    try {
      this.pipelineRef.emitSystemEvents(
        { session_id: s.session_id, client_type: s.client_type, client_name: s.client_name, user: s.context.user_id },
        [{ event_type: type, aggregate_type: 'session', aggregate_id: s.session_id, payload }],
      );
    } catch (e) {
      (this.opts.logger ?? silentLogger).error(`could not record ${type}`, e);
    }
  }

  dispose(): void {
    this.sessions.endAll();
    this.hub.closeAll();
    for (const s of this.subscriptions) void s.dispose();
  }
}
