/**
 * The pace of one event stream (issue 14 item 10: SSE honours `rate_limits.events_per_second` like WebSocket).
 * The hub (src/agent/eventHub.ts) already paces each of its subscriptions, but a stream re-subscribes whenever
 * its transport's buffer fills or the hub overflows (src/agent/kit/subscriptions.ts ResumableSubscription),
 * and every new hub subscription starts with a fresh second. This throttle belongs to the stream itself, so
 * its budget survives those re-subscriptions: SSE (`GET /events/stream`) and WebSocket subscriptions both
 * pass it the same setting.
 */

/**
 * At most `perSecond()` events in each one-second window (windows start at the first event after the previous
 * window ended, in the clock's milliseconds). Reads the limit on every call, so a reloaded configuration
 * applies at once.
 */
export class EventThrottle {
  private windowStart = Number.NEGATIVE_INFINITY;
  private sent = 0;

  /** `perSecond`: the limit (`rate_limits.events_per_second`, at least 1 is used); `now`: milliseconds (default Date.now). */
  constructor(
    private readonly perSecond: () => number,
    private readonly now: () => number = Date.now,
  ) {}

  /** True when one more event may be sent now (it is counted); false when the window's budget is spent. */
  take(): boolean {
    const t = this.now();
    if (t - this.windowStart >= 1000) {
      this.windowStart = t;
      this.sent = 0;
    }
    if (this.sent >= Math.max(1, this.perSecond())) return false;
    this.sent++;
    return true;
  }

  /** Milliseconds until the current window ends (0 when a new one may start now). */
  waitMs(): number {
    return Math.max(0, 1000 - (this.now() - this.windowStart));
  }
}
