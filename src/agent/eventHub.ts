import type { Clock } from '../core/clock';
import { newUuid } from '../core/ids';
import type { EventRecord } from '../domain/events';
import type { AgentContextConfig } from './config';

/**
 * True when `eventType` matches `pattern`: `*` (everything), an exact dotted type (`source.imported`),
 * or a category wildcard (`coding.*`) (agent-context spec, section 6, "Subscription").
 */
export function matchesEvent(pattern: string, eventType: string): boolean {
  if (pattern === '*') return true;
  if (pattern.endsWith('.*')) return eventType.startsWith(pattern.slice(0, -1));
  return pattern === eventType;
}

/** What a subscriber receives: an event, or a notice that it fell behind and must replay. */
export type Delivery = { kind: 'event'; event: EventRecord } | { kind: 'overflow'; last_delivered_seq: number; dropped: number };

/** A live subscription; `close` ends it. */
export interface EventSubscription {
  readonly subscription_id: string;
  readonly patterns: readonly string[];
  /** the sequence number of the last event delivered (or replayed) */
  readonly lastSeq: number;
  close(): void;
}

interface Subscriber {
  id: string;
  patterns: string[];
  deliver: (d: Delivery) => void;
  /** last sequence delivered */
  lastSeq: number;
  /** highest sequence delivered or queued: anything at or below it is a duplicate */
  highest: number;
  queue: EventRecord[];
  windowStart: number;
  sentInWindow: number;
  timer: NodeJS.Timeout | undefined;
  /**
   * While replaying: the last sequence number read from the event store (live events are then skipped,
   * since the store holds them too); undefined once caught up and live.
   */
  catchUp: number | undefined;
}

/**
 * Fans committed events out to subscribers (SSE, WebSocket, gRPC streams, the CLI, the VS Code UI).
 * Guarantees (spec section 6): events are persisted before they are published (the pipeline stores them
 * in the call's transaction); each subscriber gets matching events exactly once, in sequence order (so
 * per aggregate too); replay from a sequence number reads the project's event store and then continues
 * live without a gap or a duplicate; a replay reads the store a page at a time as the subscriber's queue
 * drains (at most `events.buffer_size` queued), so resuming after any number of missed events never
 * overflows. Backpressure: at most `rate_limits.events_per_second` events per
 * subscriber per second are sent, the rest wait in a queue of `events.buffer_size`; when the queue
 * overflows it is dropped and the subscriber gets an `overflow` notice naming the last sequence it got,
 * so it can replay the rest from history.
 */
export class EventHub {
  private readonly subs = new Map<string, Subscriber>();
  /**
   * Applied to every event just before it is delivered, live or replayed (identity when unset): the agent layer
   * replaces the words of sources closed to agents (AgentContext.attach, src/agent/agentAccess.ts).
   */
  redactor: ((e: EventRecord) => EventRecord) | undefined;

  constructor(
    private readonly history: (afterSeq: number, limit: number) => EventRecord[],
    private readonly config: () => AgentContextConfig,
    private readonly clock: Clock,
  ) {}

  /** Number of live subscriptions. */
  get size(): number {
    return this.subs.size;
  }

  /**
   * Subscribes `deliver` to events matching `patterns` (default: `events.default_subscriptions`). With
   * `fromSeq`, first replays stored events after that sequence number, then continues live.
   */
  subscribe(deliver: (d: Delivery) => void, opts: { patterns?: string[]; fromSeq?: number } = {}): EventSubscription {
    const sub: Subscriber = {
      id: newUuid(),
      patterns: opts.patterns && opts.patterns.length > 0 ? [...opts.patterns] : [...this.config().events.default_subscriptions],
      deliver,
      lastSeq: Math.max(opts.fromSeq ?? 0, 0),
      highest: opts.fromSeq ?? -1,
      queue: [],
      windowStart: this.clock.now(),
      sentInWindow: 0,
      timer: undefined,
      catchUp: opts.fromSeq,
    };
    this.subs.set(sub.id, sub);
    // replay from the event store (page by page, see refill); live events join once it has caught up
    this.refill(sub);
    this.drain(sub);
    const close = () => this.unsubscribe(sub.id);
    return {
      subscription_id: sub.id,
      patterns: sub.patterns,
      get lastSeq() {
        return sub.lastSeq;
      },
      close,
    };
  }

  /** Ends a subscription; false when unknown. */
  unsubscribe(id: string): boolean {
    const sub = this.subs.get(id);
    if (!sub) return false;
    if (sub.timer) clearTimeout(sub.timer);
    this.subs.delete(id);
    return true;
  }

  /** Publishes committed events (in sequence order) to every matching subscriber. */
  publish(events: readonly EventRecord[]): void {
    for (const sub of this.subs.values()) {
      for (const e of events) this.enqueue(sub, e);
      this.drain(sub);
    }
  }

  /** Ends every subscription. */
  closeAll(): void {
    for (const id of [...this.subs.keys()]) this.unsubscribe(id);
  }

  /**
   * Reads stored events after the replay cursor into the queue until it holds `events.buffer_size` or
   * the store has no more (then the subscriber is live). Pages never overfill the queue.
   */
  private refill(sub: Subscriber): void {
    const buffer = this.config().events.buffer_size;
    while (sub.catchUp !== undefined && sub.queue.length < buffer) {
      const want = Math.min(500, buffer - sub.queue.length);
      const page = this.history(sub.catchUp, want);
      for (const e of page) {
        const seq = e.metadata.sequence_number;
        sub.catchUp = Math.max(sub.catchUp, seq);
        if (seq <= sub.highest) continue;
        sub.highest = seq;
        if (sub.patterns.some((p) => matchesEvent(p, e.event_type))) sub.queue.push(e);
      }
      if (page.length < want) sub.catchUp = undefined;
    }
  }

  private enqueue(sub: Subscriber, e: EventRecord): void {
    // still replaying: the store holds this event too, and refill reads it in order
    if (sub.catchUp !== undefined) return;
    const seq = e.metadata.sequence_number;
    if (seq <= sub.highest) return;
    sub.highest = seq;
    if (!sub.patterns.some((p) => matchesEvent(p, e.event_type))) return;
    sub.queue.push(e);
    if (sub.queue.length > this.config().events.buffer_size) {
      const dropped = sub.queue.length;
      sub.queue = [];
      sub.deliver({ kind: 'overflow', last_delivered_seq: sub.lastSeq, dropped });
    }
  }

  private drain(sub: Subscriber): void {
    if (!this.subs.has(sub.id)) return;
    const cfg = this.config();
    const now = this.clock.now();
    if (now - sub.windowStart >= 1000) {
      sub.windowStart = now;
      sub.sentInWindow = 0;
    }
    for (;;) {
      while (sub.queue.length > 0 && sub.sentInWindow < cfg.rate_limits.events_per_second) {
        const e = sub.queue.shift() as EventRecord;
        sub.lastSeq = e.metadata.sequence_number;
        sub.sentInWindow++;
        sub.deliver({ kind: 'event', event: this.redactor ? this.redactor(e) : e });
        if (!this.subs.has(sub.id)) return;
      }
      if (sub.queue.length > 0 || sub.catchUp === undefined) break;
      this.refill(sub);
      if (sub.queue.length === 0) break;
    }
    if (sub.queue.length > 0 && !sub.timer) {
      const wait = Math.max(1000 - (now - sub.windowStart), cfg.events.batch_interval_ms, 1);
      sub.timer = setTimeout(() => {
        sub.timer = undefined;
        this.drain(sub);
      }, wait);
      sub.timer.unref?.();
    }
  }
}
