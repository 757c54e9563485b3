import type { Clock } from '../core/clock';
import { ToolError } from '../core/errors';
import type { AgentContextConfig } from './config';

/** Most poll keys (request ids) {@link RateLimiter.freePoll} remembers per budget. */
export const MAX_POLL_KEYS = 64;

/**
 * The budget a call spends (issue 14 item 4): an agent's credential across all its sessions
 * (`agent:<name>`, so a new session does not get a fresh budget), else the session (`session:<id>`: callers
 * without a credential name, e.g. the pipeline without an agent context).
 */
export function budgetKey(caller: { session_id: string; agent?: string }): string {
  return caller.agent !== undefined ? `agent:${caller.agent}` : `session:${caller.session_id}`;
}

/**
 * Sliding one-minute windows per budget ({@link budgetKey}: per agent credential) for `rate_limits.requests_per_minute` (every call) and
 * `rate_limits.mutations_per_minute` (calls of tools that change data). The researcher's own calls are
 * not limited, nor is an agent's polling of its own held call at the advised pace ({@link RateLimiter.freePoll}).
 */
export class RateLimiter {
  private readonly requests = new Map<string, number[]>();
  private readonly mutations = new Map<string, number[]>();
  /** per session: key (request id) -> time of the last free poll, in milliseconds ({@link freePoll}) */
  private readonly polls = new Map<string, Map<string, number>>();

  constructor(
    private readonly config: () => AgentContextConfig,
    private readonly clock: Clock,
  ) {}

  /**
   * Counts a call of `budget` (a mutation when `mutation`). Errors: RATE_LIMITED with
   * `details: {limit, window_ms: 60000, retry_after_ms}` when a limit is reached; the call is not counted.
   */
  check(budget: string, mutation: boolean): void {
    const now = this.clock.now();
    const cfg = this.config().rate_limits;
    const req = this.window(this.requests, budget, now);
    if (req.length >= cfg.requests_per_minute) this.refuse('requests_per_minute', cfg.requests_per_minute, req, now);
    if (mutation) {
      const mut = this.window(this.mutations, budget, now);
      if (mut.length >= cfg.mutations_per_minute) this.refuse('mutations_per_minute', cfg.mutations_per_minute, mut, now);
      mut.push(now);
    }
    req.push(now);
  }

  /**
   * True when a poll of `key` by `budget` (get_approval_status of the session's own held call) is free: it
   * comes at least `intervalMs / 2` after the last free poll of the same key (the advised pace, with room for
   * timer jitter; a long poll's wait counts as time between polls). A free poll is not counted by
   * {@link check}; a faster one is not free and is counted as any call. At most {@link MAX_POLL_KEYS} keys per
   * session are remembered (the oldest forgotten first).
   */
  freePoll(budget: string, key: string, intervalMs: number): boolean {
    const now = this.clock.now();
    let polls = this.polls.get(budget);
    if (!polls) {
      polls = new Map();
      this.polls.set(budget, polls);
    }
    const last = polls.get(key);
    if (last !== undefined && now - last < intervalMs / 2) return false;
    polls.delete(key);
    if (polls.size >= MAX_POLL_KEYS) polls.delete(polls.keys().next().value as string);
    polls.set(key, now);
    return true;
  }

  /** Forgets a budget's windows (a session without a credential ended, or a credential was revoked). */
  forget(budget: string): void {
    this.requests.delete(budget);
    this.mutations.delete(budget);
    this.polls.delete(budget);
  }

  private window(map: Map<string, number[]>, id: string, now: number): number[] {
    let w = map.get(id);
    if (!w) {
      w = [];
      map.set(id, w);
    }
    while (w.length > 0 && (w[0] as number) <= now - 60_000) w.shift();
    return w;
  }

  private refuse(key: string, limit: number, w: number[], now: number): never {
    const retry = Math.max(1, (w[0] as number) + 60_000 - now);
    throw new ToolError('RATE_LIMITED', `Rate limit reached: ${limit} ${key.replace(/_/g, ' ')} (rate_limits.${key}); retry in ${Math.ceil(retry / 1000)} s`, {
      limit,
      limit_key: key,
      window_ms: 60_000,
      retry_after_ms: retry,
    });
  }
}
