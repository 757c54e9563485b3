/**
 * src/agent/eventHub.ts: replay from a sequence number reads the event store a page at a time, so a
 * subscriber resuming after more events than `events.buffer_size` gets every one, once, in order, with
 * no overflow; events published while it catches up are not lost or doubled; pattern filtering applies.
 */
import assert from 'node:assert/strict';
import { defaultConfig } from '../../../src/agent/config';
import { EventHub, type Delivery } from '../../../src/agent/eventHub';
import type { EventRecord } from '../../../src/domain/events';

function event(seq: number): EventRecord {
  return {
    event_id: `e${seq}`,
    event_type: (seq % 2 === 1 ? 'coding.segment_coded' : 'source.imported') as EventRecord['event_type'],
    timestamp: new Date(seq).toISOString(),
    aggregate_type: 'test',
    aggregate_id: String(seq),
    caused_by: { session_id: 's', client_type: 'CUSTOM', user: 'u' },
    payload: {},
    metadata: { correlation_id: 'c', sequence_number: seq },
  };
}

describe('agent/eventHub', () => {
  const clock = {
    t: 1_000_000,
    now(): number {
      return this.t;
    },
  };
  const cfg = defaultConfig();
  cfg.events.buffer_size = 4;
  cfg.rate_limits.events_per_second = 3;
  let store: EventRecord[];
  let hub: EventHub;
  const history = (after: number, limit: number) => store.filter((e) => e.metadata.sequence_number > after).slice(0, limit);
  const append = (seq: number) => {
    const e = event(seq);
    store.push(e);
    return e;
  };

  beforeEach(() => {
    store = [];
    for (let s = 1; s <= 20; s++) append(s);
    hub = new EventHub(history, () => cfg, clock);
  });
  afterEach(() => hub.closeAll());

  /** Lets the per-second window pass and nudges delivery (an empty publish drains every subscriber). */
  const nextSecond = () => {
    clock.t += 1000;
    hub.publish([]);
  };

  it('replays more events than the buffer holds without an overflow, then continues live, each event once', () => {
    const got: Delivery[] = [];
    const sub = hub.subscribe((d) => got.push(d), { patterns: ['coding.*'], fromSeq: 2 });
    assert.equal(got.length, 3, 'at most events_per_second in the first second');
    // published while the subscriber is still replaying: stored first, as the pipeline does
    hub.publish([append(21), append(22)]);
    for (let i = 0; i < 10; i++) nextSecond();
    assert.ok(
      got.every((d) => d.kind === 'event'),
      `no overflow: ${JSON.stringify(got.filter((d) => d.kind === 'overflow'))}`,
    );
    const seqs = got.map((d) => (d.kind === 'event' ? d.event.metadata.sequence_number : -1));
    assert.deepEqual(seqs, [3, 5, 7, 9, 11, 13, 15, 17, 19, 21]);
    assert.equal(sub.lastSeq, 21);
    // now live
    hub.publish([append(23), append(24), append(25)]);
    const after = got.slice(10).map((d) => (d.kind === 'event' ? d.event.metadata.sequence_number : -1));
    assert.deepEqual(after, [23, 25]);
  });

  it('a live subscriber whose queue passes the buffer gets an overflow notice naming the last sequence it got', () => {
    const got: Delivery[] = [];
    // subscribed at the head of the store (as the SSE and WebSocket adapters do for "live only")
    hub.subscribe((d) => got.push(d), { patterns: ['*'], fromSeq: 20 });
    const batch = [];
    for (let s = 21; s <= 30; s++) batch.push(append(s));
    hub.publish(batch);
    const overflow = got.find((d) => d.kind === 'overflow');
    assert.ok(overflow && overflow.kind === 'overflow', JSON.stringify(got));
    // the whole batch is queued before delivery starts, so nothing was delivered: replay from 20 loses nothing
    assert.equal(overflow.last_delivered_seq, 20);
    assert.equal(overflow.dropped, 5);
  });
});
