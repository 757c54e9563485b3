import { timingSafeEqual } from 'node:crypto';
import type { Clock } from '../core/clock';
import { isoTime, systemClock } from '../core/clock';
import { isToolError, ToolError, type ErrorCode } from '../core/errors';
import type { Disposable } from '../core/lifecycle';
import type { Logger } from '../core/log';
import { silentLogger } from '../core/log';
import type { EventRecord } from '../domain/events';
import type { ReadScope } from '../domain/teamSettings';
import type { OpenProject } from '../tools/context';
import type { AnyTool } from '../tools/defineTool';
import { AgentCredentials, BUILTIN_AGENT, RESEARCHER_OWNER, type AgentCredentialStorage } from './agentCredentials';
import { AuditLog, type AuditStorage } from './auditLog';
import { inScope } from './contextBuilder';
import { defaultConfig, parseConfig, type AgentContextConfig } from './config';
import { EventHub } from './eventHub';
import type { AgentLayer, Caller, InvokeOptions, ToolPipeline } from './pipeline';
import { budgetKey, RateLimiter } from './rateLimits';
import { SessionManager, type ClientType, type EndReason, type Session } from './sessions';
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

/** Who a bearer token proves to be (issue 14 item 2): the researcher, or an agent with its credential's name. */
export type Identity = { role: 'researcher' } | { role: 'agent'; agent: string };

/**
 * Who `authorization` (`Bearer <token>` or the bare token) proves to be, or null for a missing or wrong
 * token: the reviewer token is the researcher, the install's agent token the agent named `agent`, and an
 * issued credential ({@link AgentCredentials.identify}, constant time) the agent of its name.
 */
export function identityOf(tokens: Tokens, credentials: AgentCredentials | undefined, authorization: string | undefined): Identity | null {
  if (!authorization) return null;
  const token = authorization.replace(/^Bearer\s+/i, '').trim();
  if (!token) return null;
  if (same(token, tokens.reviewer)) return { role: 'researcher' };
  if (same(token, tokens.agent)) return { role: 'agent', agent: BUILTIN_AGENT };
  const name = credentials?.identify(token) ?? null;
  return name === null ? null : { role: 'agent', agent: name };
}

/** The session owner an identity stands for: the agent's name, or `researcher`. */
function ownerOf(who: Identity | null): string {
  return who === null ? '' : who.role === 'researcher' ? RESEARCHER_OWNER : who.agent;
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
  /** where the agents' named credentials are kept (issue 14 item 2); default: in memory */
  credentials?: AgentCredentialStorage;
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
  /** the agents' named credentials; revoking one ends its sessions (and so their streams) at once */
  readonly credentials: AgentCredentials;
  /**
   * What the server composition actually serves (src/cli/surfaces.ts), for `qda://project/settings`: host, HTTP
   * port, gRPC port (null when off) and the surfaces on; undefined while no server runs.
   */
  served: { host: string; port: number; grpc_port: number | null; surfaces: string[] } | undefined;
  /**
   * The mode the host runs in, for `qda://project/settings` (issue 14 item 9): `hybrid` under `marginalia serve
   * --ai-primary` or the VS Code setting `marginalia.mode: hybrid` (agents lead, the researcher observes and
   * approves: `marginalia watch`, VS Code's observer mode); undefined: the host's own (desktop, headless).
   */
  mode: 'desktop' | 'headless' | 'hybrid' | undefined;
  /** Pause agents: since when and by whom, or null while agents run ({@link pause}). */
  private pauseState: { since: string; by: string } | null = null;
  private readonly pauseListeners = new Set<(paused: boolean) => void>();
  private pipelineRef: ToolPipeline | undefined;
  private cfg: AgentContextConfig;
  private readonly implicit = new Map<string, string>();
  private readonly clock: Clock;
  private readonly subscriptions: Disposable[] = [];
  private readonly auditedErrors = new WeakSet<object>();
  private readonly endListeners = new Set<(session: Session, reason: EndReason) => void>();

  /** Errors: INVALID_CONFIG when `configText` does not validate. */
  constructor(private readonly opts: AgentContextOptions) {
    this.clock = opts.clock ?? systemClock;
    this.cfg = this.load(opts.configText);
    this.credentials = new AgentCredentials(opts.credentials, this.clock);
    const config = () => this.cfg;
    this.trust = new TrustPolicy(config, opts.tools);
    this.sessions = new SessionManager(config, this.clock, () => opts.project()?.path ?? '', {
      // role: the token's role (researcher, agent, null), so the event log tells whose actions a session's are (undo: src/domain/undoRedo.ts)
      connected: (s) =>
        this.sessionEvent(s, 'session.connected', {
          session_id: s.session_id,
          client_type: s.client_type,
          client_name: s.client_name,
          role: (s.context.preferences.role as string | undefined) ?? null,
        }),
      disconnected: (s, reason) => {
        this.layer.limiter.forget(budgetKey({ session_id: s.session_id }));
        for (const [k, v] of this.implicit) if (v === s.session_id) this.implicit.delete(k);
        this.sessionEvent(s, 'session.disconnected', { session_id: s.session_id, reason });
        for (const l of [...this.endListeners]) {
          try {
            l(s, reason);
          } catch {
            // a listener's failure does not stop the others
          }
        }
      },
    });
    this.layer = {
      config,
      sessions: this.sessions,
      trust: this.trust,
      limiter: new RateLimiter(config, this.clock),
      audit: opts.audit ? new AuditLog(opts.audit, config) : undefined,
      paused: () => this.pauseState !== null,
    };
    // a revoked credential's sessions end at once (their SSE and WebSocket streams watch the session), its budget with them
    this.subscriptions.push(
      this.credentials.onRevoked((name) => {
        this.sessions.endOwnedBy(name, 'revoked');
        this.layer.limiter.forget(budgetKey({ session_id: '', agent: name }));
      }),
    );
    this.hub = new EventHub((after, limit) => opts.project()?.repo.listEventsSince(after, limit) ?? [], config, this.clock);
  }

  /**
   * Listens for the end of every session, whatever ended it (the client, the researcher: DELETE /sessions/{id}
   * and end_session, revocation, expiry, reclaiming); streams that belong to a session but name none (MCP
   * `subscriptions/listen` over HTTP on an implicit session) close with it.
   */
  onSessionEnded(listener: (session: Session, reason: EndReason) => void): Disposable {
    this.endListeners.add(listener);
    return { dispose: () => void this.endListeners.delete(listener) };
  }

  /** The current configuration. */
  get config(): AgentContextConfig {
    return this.cfg;
  }

  /** Connects the pipeline built with {@link layer}; its events then reach the hub. */
  attach(pipeline: ToolPipeline): void {
    this.pipelineRef = pipeline;
    this.subscriptions.push(pipeline.onEvents((events) => this.hub.publish(events)));
    // sources closed to agents (issue 14 item 11): streamed events carry no word of them
    this.hub.redactor = (e) => pipeline.redactEvent(e);
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
    return this.identify(authorization)?.role ?? null;
  }

  /** Who a bearer token proves to be (the researcher, or an agent and its name), or null ({@link identityOf}). */
  identify(authorization: string | undefined): Identity | null {
    return identityOf(this.opts.tokens, this.credentials, authorization);
  }

  /**
   * Opens a session for a client that presented `authorization` (spec section 3: a failed
   * authentication ends the session). Errors: UNAUTHORIZED, SESSION_LIMIT.
   */
  openSession(input: {
    authorization: string | undefined;
    client_type: ClientType;
    client_name: string;
    user?: string;
    trust_level?: Session['context']['trust_level'];
    model?: string;
  }): {
    session: Session;
    caller: Caller;
  } {
    const who = this.identify(input.authorization);
    const role = who?.role ?? null;
    const session = this.audited('session:open', { client_type: input.client_type, client_name: input.client_name }, () =>
      this.sessions.create({
        client_type: input.client_type,
        client_name: input.client_name,
        authenticated: who !== null,
        user_id: input.user,
        trust_level: input.trust_level,
        preferences: { role },
        owner: ownerOf(who),
        model: input.model,
      }),
    );
    return { session, caller: this.callerOf(session) };
  }

  /**
   * The caller of a request that names no session: one implicit session per credential (issue 14 item 3:
   * whatever client name or type it states; the first request's name and type label the session), so plain
   * HTTP clients keep working. `model`: the model the client states (`X-Marginalia-Model`), recorded on the
   * session. Errors: UNAUTHORIZED, SESSION_LIMIT.
   */
  implicitCaller(authorization: string | undefined, clientName: string, clientType: ClientType = 'REST_CLIENT', user?: string, model?: string): Caller {
    return this.audited('session:open', { client_type: clientType, client_name: clientName }, () =>
      this.implicit_(authorization, clientName, clientType, user, model),
    );
  }

  private implicit_(authorization: string | undefined, clientName: string, clientType: ClientType, user?: string, model?: string): Caller {
    const who = this.identify(authorization);
    if (who === null) this.sessions.create({ client_type: clientType, client_name: clientName, authenticated: false });
    const owner = ownerOf(who);
    const existing = this.implicit.get(owner);
    const live = existing ? this.sessions.get(existing) : undefined;
    if (live && live.status !== 'EXPIRED') {
      if (model && live.model !== model) live.model = model.slice(0, 200);
      return this.callerOf(live, user);
    }
    const session = this.sessions.create({
      client_type: clientType,
      client_name: clientName,
      authenticated: true,
      user_id: user ?? clientName,
      implicit: true,
      preferences: { role: who?.role ?? null },
      owner,
      model,
    });
    this.implicit.set(owner, session.session_id);
    return this.callerOf(session, user);
  }

  /**
   * The caller of an existing session, checking that `authorization` is the credential that opened it
   * (issue 14 item 3: a session id seen in an event grants nothing). Errors: SESSION_NOT_FOUND, UNAUTHORIZED
   * (no or a wrong token), SESSION_FORBIDDEN (another credential's session; audited).
   */
  callerFor(sessionId: string, authorization: string | undefined): Caller {
    return this.callerOf(this.ownSession(sessionId, authorization, 'session:resume'));
  }

  /**
   * Session `sessionId` if `authorization` is the credential that opened it. `stage` names the step in the
   * audit line of a refusal. Errors: SESSION_NOT_FOUND, UNAUTHORIZED, SESSION_FORBIDDEN (audited).
   */
  private ownSession(sessionId: string, authorization: string | undefined, stage: string): Session {
    const session = this.sessions.get(sessionId);
    const who = { session_id: sessionId.slice(0, 100), client_type: session?.client_type, client_name: session?.client_name };
    return this.audited(stage, who, () => {
      if (!session) throw new ToolError('SESSION_NOT_FOUND', `No session ${sessionId.slice(0, 100)}: create one first, or it has ended`);
      const id = this.identify(authorization);
      if (id === null) throw new ToolError('UNAUTHORIZED', 'Send the token as Authorization: Bearer <token>');
      if (ownerOf(id) !== session.owner)
        throw new ToolError('SESSION_FORBIDDEN', 'This session belongs to another credential: use your own session (or none: your token has an implicit one)');
      return session;
    });
  }

  /**
   * Heartbeat of session `sessionId` by its own credential. Errors: SESSION_NOT_FOUND, SESSION_EXPIRED,
   * UNAUTHORIZED, SESSION_FORBIDDEN.
   */
  heartbeatAs(sessionId: string, authorization: string | undefined): { session: Session; heartbeat_interval_seconds: number } {
    this.ownSession(sessionId, authorization, 'session:heartbeat');
    return this.sessions.heartbeat(sessionId);
  }

  /**
   * Ends session `sessionId` for the credential that opened it (reason `client_disconnected`) or for the
   * researcher, who may end any session (`ended_by_researcher`). Errors: SESSION_NOT_FOUND, UNAUTHORIZED,
   * SESSION_FORBIDDEN (another agent's session; audited).
   */
  endSessionAs(sessionId: string, authorization: string | undefined): { session: Session; reason: EndReason } {
    const id = this.identify(authorization);
    const session = this.sessions.get(sessionId);
    if (id?.role === 'researcher' && session && session.owner !== RESEARCHER_OWNER) {
      return { session: this.sessions.end(sessionId, 'ended_by_researcher'), reason: 'ended_by_researcher' };
    }
    this.ownSession(sessionId, authorization, 'session:destroy');
    return { session: this.sessions.end(sessionId, 'client_disconnected'), reason: 'client_disconnected' };
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
    const agentName = !researcher && session.client_type !== 'LOCAL_UI' ? session.owner : undefined;
    const name = researcher ? this.opts.researcherName?.() : undefined;
    // an agent with a named credential codes as that name (issue 14 item 1), whatever client or user it states;
    // the install's shared token (`agent`) keeps its client's name (or X-Marginalia-User), which says more
    const credential = agentName && agentName !== BUILTIN_AGENT && agentName !== RESEARCHER_OWNER ? agentName : undefined;
    return {
      session_id: session.session_id,
      client_type: session.client_type,
      client_name: session.client_name,
      // the researcher may name another human coder explicitly (X-Marginalia-User: entering a colleague's codings
      // for an agreement check); otherwise the researcher's own coder name, never the client's name
      user: credential ?? user ?? (name || session.context.user_id),
      researcher,
      ...(agentName !== undefined ? { agent: agentName } : {}),
    };
  }

  /** Calls a tool through the pipeline (every stage applies); `options.onProgress` receives long work's progress. */
  call(caller: Caller, tool: string, args: unknown, options?: InvokeOptions) {
    return this.pipeline.invoke(tool, args, caller, options);
  }

  /**
   * `data` read on `caller`'s behalf outside a tool call (the MCP resources and prompts the ContextBuilder
   * answers), as `caller` may see it: under blind coding a ContextBuilder answer made for everyone is made again
   * from the caller's own codings (inScope, ./contextBuilder.ts; the lead and everyone while blind coding is off
   * get it unchanged), and the words of sources closed to that agent are replaced by a marker
   * (ToolPipeline.redactFor, src/agent/agentAccess.ts; unchanged for the researcher). Errors: SEGMENT_NOT_FOUND
   * for another coder's segment under blind coding.
   */
  redactFor<T>(caller: Caller, data: T): T {
    return this.pipeline.redactFor(caller, inScope(data, this.pipeline.readScopeOf(caller)));
  }

  /**
   * What `caller` may read of the coders' codings now (blind coding, src/domain/teamSettings.ts): null (everything)
   * while blind coding is off, for the lead, or with no project open; else the caller's own. The scope the
   * ContextBuilder's reads take.
   */
  readScopeOf(caller: Caller): ReadScope {
    return this.pipeline.readScopeOf(caller);
  }

  /** Approves a request (see ToolPipeline.approve). */
  approve(caller: Caller, requestId: string, editedArguments?: unknown) {
    return this.pipeline.approve(requestId, caller, editedArguments);
  }

  /** True while the researcher has paused every agent ({@link pause}). */
  get paused(): boolean {
    return this.pauseState !== null;
  }

  /** The pause: since when (ISO 8601) and by which coder, or null while agents run. */
  get pauseInfo(): { since: string; by: string } | null {
    return this.pauseState ? { ...this.pauseState } : null;
  }

  /** Subscribes to pause and resume (listener gets the new state); also told by the `agents.paused` / `agents.resumed` events. */
  onDidChangePaused(listener: (paused: boolean) => void): Disposable {
    this.pauseListeners.add(listener);
    return { dispose: () => void this.pauseListeners.delete(listener) };
  }

  /**
   * Pause agents (issue 14 item 9): from now every agent call that would run (auto, notify; reads too) is held
   * as a pending request with reason `agents paused` (pipeline stage 5, ToolPipeline.heldByPause) until
   * {@link resume}; suggestions are held as ever. Emits `agents.paused` {paused: true, by, since}. Pausing again
   * changes nothing (`changed: false`). In memory: a restarted server runs agents again, and what a pause held
   * stays pending for the researcher. Errors: APPROVAL_FORBIDDEN unless `caller` is the researcher.
   */
  pause(caller: Caller): { paused: true; since: string; by: string; changed: boolean } {
    this.checkResearcher(caller, 'pause');
    if (this.pauseState) return { paused: true, ...this.pauseState, changed: false };
    this.pauseState = { since: isoTime(this.clock.now()), by: caller.user };
    this.pauseEvent(caller, 'agents.paused', { paused: true, by: caller.user, since: this.pauseState.since });
    for (const l of this.pauseListeners) l(true);
    return { paused: true, ...this.pauseState, changed: true };
  }

  /**
   * Resumes agents after {@link pause}: new calls run again, and every request the pause held whose trust level
   * would have run it is approved and run now, oldest first (ToolPipeline.resumeHeld), as approved by `caller`;
   * real suggestions stay pending. Emits `agents.resumed` {paused: false, by, ran, failed, still_pending}.
   * Errors: APPROVAL_FORBIDDEN unless `caller` is the researcher.
   */
  async resume(caller: Caller): Promise<{
    paused: false;
    changed: boolean;
    ran: number;
    failed: number;
    still_pending: number;
    requests: { request_id: string; tool: string; status: string; error_code?: string }[];
  }> {
    this.checkResearcher(caller, 'resume');
    const changed = this.pauseState !== null;
    this.pauseState = null;
    if (changed) for (const l of this.pauseListeners) l(false);
    // run what the pause held even when not paused now (a restart while paused leaves such requests behind)
    const held = await this.pipeline.resumeHeld(caller);
    if (changed || held.requests.length > 0)
      this.pauseEvent(caller, 'agents.resumed', { paused: false, by: caller.user, ran: held.ran, failed: held.failed, still_pending: held.still_pending });
    return { paused: false, changed, ...held };
  }

  private checkResearcher(caller: Caller, what: string): void {
    if (!caller.researcher)
      throw new ToolError('APPROVAL_FORBIDDEN', `Only the researcher (the VS Code UI, or a client holding the reviewer token) may ${what} agents`);
  }

  private pauseEvent(caller: Caller, type: 'agents.paused' | 'agents.resumed', payload: Record<string, unknown>): void {
    try {
      this.pipelineRef?.emitSystemEvents(caller, [{ event_type: type, aggregate_type: 'agents', aggregate_id: 'agents', payload }]);
    } catch (e) {
      (this.opts.logger ?? silentLogger).error(`could not record ${type}`, e);
    }
  }

  /** Rejects a request (see ToolPipeline.reject). */
  reject(caller: Caller, requestId: string, reason?: string) {
    return this.pipeline.reject(requestId, caller, reason);
  }

  /** Withdraws a pending request of the asking agent's own (see ToolPipeline.withdraw). */
  withdraw(caller: Caller, requestId: string) {
    return this.pipeline.withdraw(requestId, caller);
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
  auditRefusal(input: {
    route: string;
    error_code: ErrorCode;
    client_name?: string;
    client_type?: string;
    session_id?: string;
    correlation_id?: string;
    decision?: 'denied' | 'failed';
  }): void {
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

  /**
   * Stored events after `afterSeq` matching `patterns` (all when empty), at most `limit`; the words of sources
   * closed to agents are replaced by a marker, as on the live streams (EventHub.redactor).
   */
  history(afterSeq: number, limit: number, patterns: string[] = []): EventRecord[] {
    const repo = this.opts.project()?.repo;
    if (!repo) return [];
    const out: EventRecord[] = [];
    let after = afterSeq;
    while (out.length < limit) {
      const page = repo.listEventsSince(after, 500);
      for (const e of page)
        if (patterns.length === 0 || patterns.some((p) => p === '*' || (p.endsWith('.*') ? e.event_type.startsWith(p.slice(0, -1)) : p === e.event_type)))
          out.push(e);
      if (page.length < 500) break;
      after = page[page.length - 1]?.metadata.sequence_number ?? after;
    }
    const redact = this.hub.redactor;
    return redact ? out.slice(0, limit).map(redact) : out.slice(0, limit);
  }

  private sessionEvent(s: Session, type: 'session.connected' | 'session.disconnected', payload: Record<string, unknown>): void {
    if (!this.pipelineRef) return;
    try {
      this.pipelineRef.emitSystemEvents(
        {
          session_id: s.session_id,
          client_type: s.client_type,
          client_name: s.client_name,
          user: s.context.user_id,
          researcher: s.context.preferences.role === 'researcher',
        },
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
