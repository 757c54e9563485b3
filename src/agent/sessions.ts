import type { Clock } from '../core/clock';
import { isoTime } from '../core/clock';
import { ToolError } from '../core/errors';
import { newUuid } from '../core/ids';
import type { AgentContextConfig, TrustLevel } from './config';

/** The spec's ClientType values (agent-context spec, section 2). */
export const CLIENT_TYPES = ['ASSISTANT_A_CLI', 'ASSISTANT_B_CLI', 'REST_CLIENT', 'LOCAL_UI', 'CUSTOM'] as const;
export type ClientType = (typeof CLIENT_TYPES)[number];

/**
 * Session states (spec section 3, "Session lifecycle"): CONNECTING -> AUTHENTICATING -> ACTIVE, or FAILED
 * (the session ends); ACTIVE <-> IDLE; IDLE -> EXPIRED after the timeout; ACTIVE/IDLE/EXPIRED ->
 * DISCONNECTING -> ended (removed).
 */
export type SessionStatus = 'CONNECTING' | 'AUTHENTICATING' | 'ACTIVE' | 'IDLE' | 'EXPIRED' | 'DISCONNECTING' | 'FAILED';

/** A subscription of a session to event patterns (`coding.*`, `source.imported`, `*`). */
export interface Subscription {
  subscription_id: string;
  event_patterns: string[];
  created_at: string;
}

/** SessionContext of the spec: the project, the user, the session's own trust floor, preferences. */
export interface SessionContext {
  project_id: string;
  user_id: string;
  /** the session's floor: calls run at least at this level (Watch = auto, Collaborate = notify, Supervise = suggest/require) */
  trust_level: TrustLevel;
  preferences: Record<string, unknown>;
}

/** A session (spec section 2). Times are ISO 8601 UTC. */
export interface Session {
  session_id: string;
  client_type: ClientType;
  client_name: string;
  created_at: string;
  last_activity: string;
  status: SessionStatus;
  subscriptions: Subscription[];
  context: SessionContext;
  /** true for sessions created implicitly (a plain HTTP client identified by its token) */
  implicit: boolean;
  /**
   * Whose session it is (issue 14 item 3): the agent credential's name (`agent` for the install's own token),
   * or `researcher` (the reviewer token, the local UI). Only the same credential may use, heartbeat or
   * destroy it; the researcher may end any.
   */
  owner: string;
  /** the model the client says it runs (`/session/create {model}`, `X-Marginalia-Model`, MCP clientInfo), when stated */
  model?: string;
}

/** How a session ended, for session.disconnected. */
export type EndReason =
  | 'client_disconnected'
  | 'expired'
  | 'authentication_failed'
  | 'server_shutdown'
  /** the agent's credential was revoked */
  | 'revoked'
  /** the researcher ended it (DELETE /sessions/{id}, end_session) */
  | 'ended_by_researcher'
  /** an idle agent session ended to make room for a new one (sessions.max_concurrent) */
  | 'reclaimed';

/** Session lifecycle notifications, turned into session.connected / session.disconnected events. */
export interface SessionListener {
  connected(s: Session): void;
  disconnected(s: Session, reason: EndReason): void;
}

/** Input of {@link SessionManager.create}. */
export interface NewSession {
  client_type: ClientType;
  client_name: string;
  /** whether the client's credentials were valid (checked by the adapter) */
  authenticated: boolean;
  user_id?: string;
  trust_level?: TrustLevel;
  preferences?: Record<string, unknown>;
  /** a stable id for implicit sessions (e.g. `http:<client>`); random otherwise */
  session_id?: string;
  implicit?: boolean;
  /** the credential's name, or `researcher` (default: `researcher` for LOCAL_UI, else `agent`) */
  owner?: string;
  model?: string;
}

/** True when `s` is an agent's session (counted by `sessions.max_concurrent`): not the researcher's, not the local UI. */
export function isAgentSession(s: Pick<Session, 'owner' | 'client_type'>): boolean {
  return s.owner !== 'researcher' && s.client_type !== 'LOCAL_UI';
}

/** Most ended sessions whose owner {@link SessionManager.ownerOf} still knows (for approval requests that outlive their session). */
const REMEMBERED_OWNERS = 10_000;

/**
 * Sessions of every client connected to the project. A session becomes IDLE after two heartbeat
 * intervals without activity and EXPIRED after `sessions.timeout_minutes`; expired sessions are ended on
 * the next {@link sweep}. At most `sessions.max_concurrent` agent sessions exist at once; the researcher's
 * sessions (reviewer token, local UI) never count and are never refused (issue 14 item 4). A full table
 * first reclaims the agent session idle longest (IDLE: no activity for two heartbeat intervals), else
 * refuses the newcomer with SESSION_LIMIT and `details.retry_after_ms`.
 */
export class SessionManager {
  private readonly sessions = new Map<string, Session>();
  private readonly lastMs = new Map<string, number>();
  /** owner of every live session and of the last {@link REMEMBERED_OWNERS} ended ones */
  private readonly owners = new Map<string, string>();
  private readonly watchers = new Map<string, Set<(reason: EndReason) => void>>();

  constructor(
    private readonly config: () => AgentContextConfig,
    private readonly clock: Clock,
    private readonly projectId: () => string,
    private readonly listener?: SessionListener,
  ) {}

  /**
   * Creates a session, passing through CONNECTING and AUTHENTICATING. Failed authentication ends it at
   * once (status FAILED, error UNAUTHORIZED). An agent's session on a full table reclaims the agent session
   * idle longest, else fails. Errors: UNAUTHORIZED, SESSION_LIMIT (`details: {limit, retry_after_ms}`).
   */
  create(input: NewSession): Session {
    this.sweep();
    const now = this.clock.now();
    const session: Session = {
      session_id: input.session_id ?? newUuid(),
      client_type: input.client_type,
      client_name: input.client_name,
      created_at: isoTime(now),
      last_activity: isoTime(now),
      status: 'CONNECTING',
      subscriptions: [],
      context: {
        project_id: this.projectId(),
        user_id: input.user_id ?? input.client_name,
        trust_level: input.trust_level ?? 'auto',
        preferences: input.preferences ?? {},
      },
      implicit: input.implicit ?? false,
      owner: input.owner ?? (input.client_type === 'LOCAL_UI' ? 'researcher' : 'agent'),
      ...(input.model ? { model: input.model.slice(0, 200) } : {}),
    };
    session.status = 'AUTHENTICATING';
    if (!input.authenticated) {
      session.status = 'FAILED';
      this.listener?.disconnected(session, 'authentication_failed');
      throw new ToolError(
        'UNAUTHORIZED',
        'Authentication failed: send the bearer token from the discovery file (or MARGINALIA_TOKEN) as Authorization: Bearer <token>',
      );
    }
    if (isAgentSession(session)) this.makeRoom(now);
    session.status = 'ACTIVE';
    this.sessions.set(session.session_id, session);
    this.lastMs.set(session.session_id, now);
    this.owners.delete(session.session_id);
    this.owners.set(session.session_id, session.owner);
    if (this.owners.size > REMEMBERED_OWNERS + this.sessions.size) {
      for (const id of this.owners.keys()) {
        if (this.owners.size <= REMEMBERED_OWNERS + this.sessions.size) break;
        if (!this.sessions.has(id)) this.owners.delete(id);
      }
    }
    this.listener?.connected(session);
    return session;
  }

  /** The session, or undefined. Does not count as activity. */
  get(id: string): Session | undefined {
    const s = this.sessions.get(id);
    if (s) this.updateStatus(s, this.clock.now());
    return s;
  }

  /**
   * Marks activity on a session (a call, a heartbeat) and returns it: IDLE becomes ACTIVE again.
   * Errors: SESSION_NOT_FOUND (unknown or ended), SESSION_EXPIRED (it timed out; it is ended now).
   */
  touch(id: string): Session {
    const s = this.sessions.get(id);
    if (!s) throw new ToolError('SESSION_NOT_FOUND', `No session ${id}: create one first (POST /session/create), or it has ended`);
    const now = this.clock.now();
    this.updateStatus(s, now);
    if (s.status === 'EXPIRED') {
      this.finish(s, 'expired');
      throw new ToolError(
        'SESSION_EXPIRED',
        `Session ${id} expired after ${this.config().sessions.timeout_minutes} minutes without activity; create a new one`,
      );
    }
    s.status = 'ACTIVE';
    if (this.lastMs.get(id) !== now) s.last_activity = isoTime(now);
    this.lastMs.set(id, now);
    return s;
  }

  /** Heartbeat: activity without a call. Returns the next interval. Errors as {@link touch}. */
  heartbeat(id: string): { session: Session; heartbeat_interval_seconds: number } {
    return { session: this.touch(id), heartbeat_interval_seconds: this.config().sessions.heartbeat_interval_seconds };
  }

  /** Ends a session (client disconnect). Errors: SESSION_NOT_FOUND. */
  destroy(id: string, reason: EndReason = 'client_disconnected'): Session {
    return this.end(id, reason);
  }

  /** Ends session `id` for `reason` (its watchers are told at once). Errors: SESSION_NOT_FOUND. */
  end(id: string, reason: EndReason): Session {
    const s = this.sessions.get(id);
    if (!s) throw new ToolError('SESSION_NOT_FOUND', `No session ${id.slice(0, 100)}`);
    this.finish(s, reason);
    return s;
  }

  /** Ends every live session of `owner` (an agent's credential was revoked); returns how many ended. */
  endOwnedBy(owner: string, reason: EndReason): number {
    let n = 0;
    for (const s of [...this.sessions.values()]) {
      if (s.owner !== owner || s.client_type === 'LOCAL_UI') continue;
      this.finish(s, reason);
      n++;
    }
    return n;
  }

  /** The owner of session `id`, live or one of the last 10 000 ended, or undefined. */
  ownerOf(id: string): string | undefined {
    return this.owners.get(id);
  }

  /**
   * Calls `fn` once when session `id` ends (any reason: destroyed, expired, revoked, reclaimed, ended by the
   * researcher), so streams of the session close at once. Returns a function that stops watching.
   */
  watch(id: string, fn: (reason: EndReason) => void): () => void {
    let set = this.watchers.get(id);
    if (!set) {
      set = new Set();
      this.watchers.set(id, set);
    }
    set.add(fn);
    return () => {
      const current = this.watchers.get(id);
      current?.delete(fn);
      if (current?.size === 0) this.watchers.delete(id);
    };
  }

  /** Every live session. */
  list(): Session[] {
    this.sweep();
    return [...this.sessions.values()];
  }

  /** Ends every expired session. Called before listings and creations; hosts may call it on a timer. */
  sweep(): void {
    const now = this.clock.now();
    for (const s of [...this.sessions.values()]) {
      this.updateStatus(s, now);
      if (s.status === 'EXPIRED') this.finish(s, 'expired');
    }
  }

  /** Ends every session (server shutdown). */
  endAll(): void {
    for (const s of [...this.sessions.values()]) this.finish(s, 'server_shutdown');
  }

  /**
   * Room for one more agent session: when `sessions.max_concurrent` agent sessions exist, ends the one idle
   * longest (status IDLE, oldest last activity) as `reclaimed`, else refuses. Errors: SESSION_LIMIT with
   * `details: {limit, retry_after_ms}` (when the first of them would become idle and reclaimable).
   */
  private makeRoom(now: number): void {
    const limit = this.config().sessions.max_concurrent;
    const agents = [...this.sessions.values()].filter(isAgentSession);
    if (agents.length < limit) return;
    let oldest: Session | undefined;
    for (const s of agents) {
      this.updateStatus(s, now);
      if (s.status !== 'IDLE' && s.status !== 'EXPIRED') continue;
      if (!oldest || (this.lastMs.get(s.session_id) ?? now) < (this.lastMs.get(oldest.session_id) ?? now)) oldest = s;
    }
    if (oldest && agents.length - 1 < limit) {
      this.finish(oldest, 'reclaimed');
      return;
    }
    const idleMs = this.config().sessions.heartbeat_interval_seconds * 2000;
    const first = Math.min(...agents.map((s) => (this.lastMs.get(s.session_id) ?? now) + idleMs));
    const retry = Math.max(1000, first - now);
    throw new ToolError(
      'SESSION_LIMIT',
      `At most ${limit} agent sessions may be connected at once (sessions.max_concurrent) and none is idle; retry in ${Math.ceil(retry / 1000)} s, or end a session you hold`,
      { limit, retry_after_ms: retry },
    );
  }

  private updateStatus(s: Session, now: number): void {
    if (s.client_type === 'LOCAL_UI' || s.status === 'DISCONNECTING' || s.status === 'FAILED') return;
    const idleMs = now - (this.lastMs.get(s.session_id) ?? now);
    const cfg = this.config().sessions;
    if (idleMs >= cfg.timeout_minutes * 60_000) s.status = 'EXPIRED';
    else if (idleMs >= cfg.heartbeat_interval_seconds * 2000) s.status = 'IDLE';
  }

  private finish(s: Session, reason: EndReason): void {
    s.status = 'DISCONNECTING';
    this.sessions.delete(s.session_id);
    this.lastMs.delete(s.session_id);
    this.listener?.disconnected(s, reason);
    const watchers = this.watchers.get(s.session_id);
    this.watchers.delete(s.session_id);
    for (const fn of watchers ?? []) {
      try {
        fn(reason);
      } catch {
        // a watcher's failure does not stop the others
      }
    }
  }
}
