import type { Clock } from '../core/clock';
import { ToolError } from '../core/errors';
import type { AgentContextConfig } from './config';

/**
 * Per-session sliding one-minute windows for `rate_limits.requests_per_minute` (every call) and
 * `rate_limits.mutations_per_minute` (calls of tools that change data). The researcher's own calls are
 * not limited.
 */
export class RateLimiter {
  private readonly requests = new Map<string, number[]>();
  private readonly mutations = new Map<string, number[]>();

  constructor(
    private readonly config: () => AgentContextConfig,
    private readonly clock: Clock,
  ) {}

  /**
   * Counts a call of `sessionId` (a mutation when `mutation`). Errors: RATE_LIMITED with
   * `details: {limit, window_ms: 60000, retry_after_ms}` when a limit is reached; the call is not counted.
   */
  check(sessionId: string, mutation: boolean): void {
    const now = this.clock.now();
    const cfg = this.config().rate_limits;
    const req = this.window(this.requests, sessionId, now);
    if (req.length >= cfg.requests_per_minute) this.refuse('requests_per_minute', cfg.requests_per_minute, req, now);
    if (mutation) {
      const mut = this.window(this.mutations, sessionId, now);
      if (mut.length >= cfg.mutations_per_minute) this.refuse('mutations_per_minute', cfg.mutations_per_minute, mut, now);
      mut.push(now);
    }
    req.push(now);
  }

  /** Forgets a session's windows (it ended). */
  forget(sessionId: string): void {
    this.requests.delete(sessionId);
    this.mutations.delete(sessionId);
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
