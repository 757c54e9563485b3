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
  /** true for sessions created implicitly (a plain HTTP client identified by its token and name) */
  implicit: boolean;
}

/** How a session ended, for session.disconnected. */
export type EndReason = 'client_disconnected' | 'expired' | 'authentication_failed' | 'server_shutdown';

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
}

/**
 * Sessions of every client connected to the project. A session becomes IDLE after two heartbeat
 * intervals without activity and EXPIRED after `sessions.timeout_minutes`; expired sessions are ended on
 * the next {@link sweep}. At most `sessions.max_concurrent` client sessions exist at once (the
 * researcher's own LOCAL_UI session does not count).
 */
export class SessionManager {
  private readonly sessions = new Map<string, Session>();
  private readonly lastMs = new Map<string, number>();

  constructor(
    private readonly config: () => AgentContextConfig,
    private readonly clock: Clock,
    private readonly projectId: () => string,
    private readonly listener?: SessionListener,
  ) {}

  /**
   * Creates a session, passing through CONNECTING and AUTHENTICATING. Failed authentication ends it at
   * once (status FAILED, error UNAUTHORIZED). Errors: UNAUTHORIZED, SESSION_LIMIT.
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
      context: { project_id: this.projectId(), user_id: input.user_id ?? input.client_name, trust_level: input.trust_level ?? 'auto', preferences: input.preferences ?? {} },
      implicit: input.implicit ?? false,
    };
    session.status = 'AUTHENTICATING';
    if (!input.authenticated) {
      session.status = 'FAILED';
      this.listener?.disconnected(session, 'authentication_failed');
      throw new ToolError('UNAUTHORIZED', 'Authentication failed: send the bearer token from the discovery file (or MARGINALIA_TOKEN) as Authorization: Bearer <token>');
    }
    if (input.client_type !== 'LOCAL_UI' && this.clientCount() >= this.config().sessions.max_concurrent) {
      throw new ToolError('SESSION_LIMIT', `At most ${this.config().sessions.max_concurrent} agent sessions may be connected at once (sessions.max_concurrent); end one first`);
    }
    session.status = 'ACTIVE';
    this.sessions.set(session.session_id, session);
    this.lastMs.set(session.session_id, now);
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
      this.end(s, 'expired');
      throw new ToolError('SESSION_EXPIRED', `Session ${id} expired after ${this.config().sessions.timeout_minutes} minutes without activity; create a new one`);
    }
    s.status = 'ACTIVE';
    s.last_activity = isoTime(now);
    this.lastMs.set(id, now);
    return s;
  }

  /** Heartbeat: activity without a call. Returns the next interval. Errors as {@link touch}. */
  heartbeat(id: string): { session: Session; heartbeat_interval_seconds: number } {
    return { session: this.touch(id), heartbeat_interval_seconds: this.config().sessions.heartbeat_interval_seconds };
  }

  /** Ends a session (client disconnect). Errors: SESSION_NOT_FOUND. */
  destroy(id: string, reason: EndReason = 'client_disconnected'): Session {
    const s = this.sessions.get(id);
    if (!s) throw new ToolError('SESSION_NOT_FOUND', `No session ${id}`);
    this.end(s, reason);
    return s;
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
      if (s.status === 'EXPIRED') this.end(s, 'expired');
    }
  }

  /** Ends every session (server shutdown). */
  endAll(): void {
    for (const s of [...this.sessions.values()]) this.end(s, 'server_shutdown');
  }

  private clientCount(): number {
    let n = 0;
    for (const s of this.sessions.values()) if (s.client_type !== 'LOCAL_UI') n++;
    return n;
  }

  private updateStatus(s: Session, now: number): void {
    if (s.client_type === 'LOCAL_UI' || s.status === 'DISCONNECTING' || s.status === 'FAILED') return;
    const idleMs = now - (this.lastMs.get(s.session_id) ?? now);
    const cfg = this.config().sessions;
    if (idleMs >= cfg.timeout_minutes * 60_000) s.status = 'EXPIRED';
    else if (idleMs >= cfg.heartbeat_interval_seconds * 2000) s.status = 'IDLE';
  }

  private end(s: Session, reason: EndReason): void {
    s.status = 'DISCONNECTING';
    this.sessions.delete(s.session_id);
    this.lastMs.delete(s.session_id);
    this.listener?.disconnected(s, reason);
  }
}
