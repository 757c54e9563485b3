/**
 * Subscriptions (adapter kit, issue 14 item 12): parsing event patterns and sequence numbers, the resumable
 * subscription every stream uses (SSE, WebSocket, gRPC Subscribe, the CLI's watch), and {@link openSubscription},
 * which gives a stream its defaults, its events_per_second pace, the blind-coding filter and its entry in the
 * session's `subscriptions`, in one place.
 */
import { ToolError } from '../../core/errors';
import { newUuid } from '../../core/ids';
import type { EventRecord } from '../../domain/events';
import { isVisible } from '../../domain/teamSettings';
import type { AgentContext } from '../agentContext';
import type { EventHub, EventSubscription } from '../eventHub';
import { EventThrottle } from '../eventThrottle';
import type { Caller, ToolPipeline } from '../pipeline';
import type { Session } from '../sessions';

/** Longest accepted list of patterns in one subscription. */
export const MAX_PATTERNS = 50;

const PATTERN = /^(\*|[a-z][a-z0-9_]*\.(\*|[a-z][a-z0-9_]*))$/;

/**
 * Parses event patterns given as a comma-separated string (`coding.*,source.imported`), an array of
 * strings, or a mix (repeated query parameters). Each pattern is `*`, a category wildcard (`coding.*`)
 * or an exact dotted type (`source.imported`). Empty input gives `[]` (the caller's default applies).
 * Errors: INVALID_ARGUMENTS naming the bad pattern.
 */
export function parsePatterns(value: unknown): string[] {
  if (value === undefined || value === null) return [];
  const items = Array.isArray(value) ? value : [value];
  const out: string[] = [];
  for (const item of items) {
    if (typeof item !== 'string') throw new ToolError('INVALID_ARGUMENTS', 'patterns must be strings such as "coding.*" or "source.imported"');
    for (const raw of item.split(',')) {
      const p = raw.trim();
      if (!p) continue;
      if (!PATTERN.test(p))
        throw new ToolError(
          'INVALID_ARGUMENTS',
          `Invalid event pattern "${p.slice(0, 100)}": use "*", a category wildcard such as "coding.*", or a type such as "source.imported"`,
        );
      if (!out.includes(p)) out.push(p);
    }
  }
  if (out.length > MAX_PATTERNS) throw new ToolError('INVALID_ARGUMENTS', `At most ${MAX_PATTERNS} patterns per subscription`);
  return out;
}

/**
 * Parses a sequence number (`since`, `Last-Event-ID`): a non-negative integer given as a number or a
 * decimal string; undefined when absent or empty. Errors: INVALID_ARGUMENTS.
 */
export function parseSeq(value: unknown, what: string): number | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  const text = typeof value === 'number' ? String(value) : typeof value === 'string' ? value.trim() : '';
  if (!/^\d{1,15}$/.test(text)) throw new ToolError('INVALID_ARGUMENTS', `${what} must be a non-negative integer sequence number`);
  return Number(text);
}

/** What a {@link ResumableSubscription} hands its transport. */
export interface StreamSink {
  /** sends one event; returns false when the transport's buffer is full (delivery pauses) */
  event(e: EventRecord): boolean;
  /** tells the client the hub's buffer overflowed; the subscription then replays the gap by itself */
  overflow(notice: { last_delivered_seq: number; dropped: number }): void;
}

/**
 * A hub subscription that survives backpressure and overflow without losing an event: it remembers the
 * sequence number of the last event it handed on and, when paused (the transport's buffer is full) or
 * after an overflow notice, resumes by subscribing again from that number, so the event store replays
 * what was missed (EventHub replays a page at a time). The id is stable across those re-subscriptions.
 */
export class ResumableSubscription {
  readonly id = newUuid();
  private sub: EventSubscription | undefined;
  private last: number;
  private paused = false;
  private closed = false;
  /** the stream's own pace (src/agent/eventThrottle.ts): its budget survives re-subscriptions; undefined: the hub's alone */
  private readonly throttle: EventThrottle | undefined;
  private throttleTimer: NodeJS.Timeout | undefined;

  /**
   * A subscription to events matching `patterns` (empty: the hub's default subscriptions) with a sequence
   * number above `fromSeq` (the stored ones first, then live ones; pass the store's head for live only).
   * Nothing is delivered before {@link open}, so the transport can announce the id first. `perSecond`
   * (`rate_limits.events_per_second`; SSE and WebSocket pass it) paces the stream itself: past the budget
   * of a second, delivery pauses until the second ends and resumes from {@link lastSeq}, so neither a
   * transport's backpressure nor a hub overflow (both re-subscribe) starts a fresh budget. `visible`: events it
   * refuses are passed over (never handed on, no budget spent; {@link lastSeq} moves past them).
   */
  constructor(
    private readonly hub: EventHub,
    readonly patterns: readonly string[],
    fromSeq: number,
    private readonly sink: StreamSink,
    defaults: readonly string[] = [],
    perSecond?: () => number,
    now?: () => number,
    private readonly visible?: (e: EventRecord) => boolean,
  ) {
    this.last = fromSeq;
    this.throttle = perSecond ? new EventThrottle(perSecond, now) : undefined;
    this.effectivePatterns = patterns.length > 0 ? [...patterns] : [...defaults];
  }

  /** The patterns in force: the given ones, or the defaults passed to the constructor. */
  readonly effectivePatterns: readonly string[];

  /** Starts delivery (replay first, synchronously as far as the hub's rate allows, then live). */
  open(): this {
    if (!this.sub && !this.paused && !this.closed) this.start();
    return this;
  }

  /** The sequence number of the last event handed to the sink (or the starting point). */
  get lastSeq(): number {
    return this.last;
  }

  /** True while delivery waits for the transport to drain. */
  get isPaused(): boolean {
    return this.paused;
  }

  /** Stops delivery until {@link resume}; nothing after {@link lastSeq} is lost. */
  pause(): void {
    if (this.paused || this.closed) return;
    this.paused = true;
    this.sub?.close();
    this.sub = undefined;
  }

  /** Resumes after {@link pause}: replays from {@link lastSeq}, then continues live. */
  resume(): void {
    if (!this.paused || this.closed) return;
    this.paused = false;
    this.start();
  }

  /** Ends the subscription for good. */
  close(): void {
    this.closed = true;
    if (this.throttleTimer) clearTimeout(this.throttleTimer);
    this.throttleTimer = undefined;
    this.sub?.close();
    this.sub = undefined;
  }

  private start(): void {
    const deliver = (d: Parameters<Parameters<EventHub['subscribe']>[0]>[0]) => {
      if (this.closed || this.paused) return;
      if (d.kind === 'event') {
        if (this.visible && !this.visible(d.event)) {
          this.last = d.event.metadata.sequence_number;
          return;
        }
        if (this.throttle && !this.throttle.take()) {
          // this second's budget is spent: stop here (the event is not handed on) and go on from lastSeq when it ends
          this.pause();
          this.throttleTimer ??= setTimeout(() => {
            this.throttleTimer = undefined;
            this.resume();
          }, this.throttle.waitMs() || 1);
          this.throttleTimer.unref?.();
          return;
        }
        this.last = d.event.metadata.sequence_number;
        if (!this.sink.event(d.event)) this.pause();
        return;
      }
      this.sink.overflow({ last_delivered_seq: d.last_delivered_seq, dropped: d.dropped });
      // the hub dropped its queue: start again from the last event the client got (not from inside the hub's publish loop)
      this.pause();
      setImmediate(() => this.resume());
    };
    const current = this.hub.subscribe(deliver, { patterns: [...this.effectivePatterns], fromSeq: this.last });
    // a pause during the synchronous replay: the hub could not be told yet, so end it now
    if (this.paused || this.closed) current.close();
    else this.sub = current;
  }
}

/** Event types about one coding (a text or AV segment): under blind coding only its coder (and the lead) sees them. */
const SEGMENT_EVENT = /^coding\.(av_)?segment_/;

/**
 * The blind-coding filter of `caller`'s streams (issue 16 item 5; src/domain/teamSettings.ts): while blind coding
 * is on, a segment event (`coding.segment_*`, `coding.av_segment_*`) is visible only when its coding is the
 * caller's own (the payload's `owner` / `coder_role` when it names them, else the event's `caused_by` user and
 * role), as the read tools answer; every other event, and every event for the lead or while blind coding is off,
 * passes. The setting is read per event (cached per write generation), so switching blind coding applies at once.
 */
export function blindFilter(pipeline: Pick<ToolPipeline, 'readScopeOf'>, caller: Caller): (e: EventRecord) => boolean {
  return (e) => {
    if (!SEGMENT_EVENT.test(e.event_type)) return true;
    const scope = pipeline.readScopeOf(caller);
    if (scope === null) return true;
    const owner = typeof e.payload.owner === 'string' ? e.payload.owner : e.caused_by.user;
    const role = e.payload.coder_role === 'agent' || e.payload.coder_role === 'researcher' ? e.payload.coder_role : e.caused_by.role;
    return isVisible(scope, { owner, coder_role: role ?? null });
  };
}

/** One open stream's subscription: the resumable subscription and its entry in the session's `subscriptions`. */
export interface KitSubscription {
  readonly sub: ResumableSubscription;
  /** the entry listed by get_session / GET /sessions/{id} while the stream is open */
  readonly record: { subscription_id: string; event_patterns: string[]; created_at: string };
  /** ends the subscription and removes its entry from the session */
  close(): void;
}

/** Options of {@link openSubscription}. */
export interface OpenSubscriptionOptions {
  caller: Caller;
  /** the patterns asked for (empty: the configuration's `events.default_subscriptions`) */
  patterns: readonly string[];
  /** replay events after this sequence number (the store's head for live only) */
  fromSeq: number;
  sink: StreamSink;
  /** false: the stream is not paced by `rate_limits.events_per_second` (default true) */
  paced?: boolean;
}

/**
 * A subscription for one stream of `caller` (SSE, WebSocket, gRPC Subscribe): the configured default patterns, the
 * `rate_limits.events_per_second` pace, the {@link blindFilter} and the closed-source redaction of the hub, listed
 * in the caller's session until closed. Not started: call `sub.open()` once the client knows the id.
 */
export function openSubscription(agent: AgentContext, pipeline: Pick<ToolPipeline, 'readScopeOf'>, o: OpenSubscriptionOptions): KitSubscription {
  const sub = new ResumableSubscription(
    agent.hub,
    o.patterns,
    o.fromSeq,
    o.sink,
    agent.config.events.default_subscriptions,
    o.paced === false ? undefined : () => agent.config.rate_limits.events_per_second,
    undefined,
    blindFilter(pipeline, o.caller),
  );
  const record = { subscription_id: sub.id, event_patterns: [...sub.effectivePatterns], created_at: new Date().toISOString() };
  const session: Session | undefined = agent.sessions.get(o.caller.session_id);
  session?.subscriptions.push(record);
  return {
    sub,
    record,
    close: () => {
      sub.close();
      if (session) session.subscriptions = session.subscriptions.filter((s) => s !== record);
    },
  };
}
