/**
 * src/adapters/rest/eventStreams.ts: the subscription the SSE and WebSocket adapters share. It pauses when
 * the transport's buffer is full and resumes from the last event it handed on, and after the hub's
 * overflow notice it replays the dropped events from the store by itself: either way the client gets
 * every matching event exactly once, in order. Also the pattern and sequence-number parsers.
 */
import assert from 'node:assert/strict';
import { parsePatterns, parseSeq, ResumableSubscription } from '../../../src/adapters/rest/eventStreams';
import { defaultConfig } from '../../../src/agent/config';
import { EventHub } from '../../../src/agent/eventHub';
import { isToolError } from '../../../src/core/errors';
import type { EventRecord } from '../../../src/domain/events';

function event(seq: number, type = 'coding.code_created'): EventRecord {
  return {
    event_id: `e${seq}`,
    event_type: type as EventRecord['event_type'],
    timestamp: new Date(seq).toISOString(),
    aggregate_type: 'code',
    aggregate_id: String(seq),
    caused_by: { session_id: 's', client_type: 'CUSTOM', user: 'u' },
    payload: { n: seq },
    metadata: { correlation_id: 'c', sequence_number: seq },
  };
}

describe('adapters/rest/eventStreams', () => {
  const cfg = defaultConfig();
  cfg.events.buffer_size = 5;
  cfg.rate_limits.events_per_second = 1_000_000;
  let store: EventRecord[];
  let hub: EventHub;
  const publish = (...seqs: number[]) => {
    const batch = seqs.map((s) => event(s, s % 3 === 0 ? 'source.imported' : 'coding.code_created'));
    store.push(...batch);
    hub.publish(batch);
  };

  beforeEach(() => {
    store = [];
    hub = new EventHub(
      (after, limit) => store.filter((e) => e.metadata.sequence_number > after).slice(0, limit),
      () => cfg,
      { now: () => Date.now() },
    );
  });
  afterEach(() => hub.closeAll());

  it('delivers nothing before open, pauses when the sink is full and resumes from the last event handed on', () => {
    const got: number[] = [];
    let room = 2;
    const sub = new ResumableSubscription(hub, ['coding.*'], 0, {
      event: (e) => {
        got.push(e.metadata.sequence_number);
        return --room > 0;
      },
      overflow: () => assert.fail('no overflow expected'),
    });
    publish(1, 2);
    assert.deepEqual(got, [], 'not open yet');
    sub.open();
    assert.deepEqual(got, [1, 2], 'replayed from the store on open');
    assert.equal(sub.isPaused, true, 'the sink said it is full');
    publish(4, 5, 6, 7);
    assert.deepEqual(got, [1, 2], 'nothing while paused');
    room = 100;
    sub.resume();
    assert.deepEqual(got, [1, 2, 4, 5, 7], 'the gap replayed from the store, source.* filtered out');
    publish(8);
    assert.deepEqual(got, [1, 2, 4, 5, 7, 8], 'then live');
    assert.equal(sub.lastSeq, 8);
    sub.close();
    publish(10);
    assert.equal(got.length, 6, 'nothing after close');
  });

  it('after an overflow notice replays the dropped events itself: every event once, in order', async () => {
    const got: number[] = [];
    const notices: { last_delivered_seq: number; dropped: number }[] = [];
    const sub = new ResumableSubscription(hub, ['*'], 0, {
      event: (e) => (got.push(e.metadata.sequence_number), true),
      overflow: (n) => notices.push(n),
    }).open();
    publish(1);
    const big: number[] = [];
    for (let s = 2; s <= 20; s++) big.push(s);
    publish(...big); // one transaction with more events than the buffer holds
    assert.equal(notices.length, 1);
    assert.equal(notices[0]?.last_delivered_seq, 1);
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(
      got,
      Array.from({ length: 20 }, (_, i) => i + 1),
    );
    publish(21);
    assert.equal(got[got.length - 1], 21);
    sub.close();
  });

  it('live from the head: a subscription starting at the head sees only later events', () => {
    publish(1, 2);
    const got: number[] = [];
    new ResumableSubscription(hub, [], 2, { event: (e) => (got.push(e.metadata.sequence_number), true), overflow: () => undefined }, ['coding.*']).open();
    publish(4);
    assert.deepEqual(got, [4]);
  });

  it('parsePatterns accepts *, category wildcards and exact types, comma-separated or as arrays; refuses anything else', () => {
    assert.deepEqual(parsePatterns('coding.*, source.imported'), ['coding.*', 'source.imported']);
    assert.deepEqual(parsePatterns(['*', 'coding.*', 'coding.*']), ['*', 'coding.*']);
    assert.deepEqual(parsePatterns(undefined), []);
    for (const bad of ['coding', 'coding.**', 'Coding.*', '*.created', 'a.b.c', 'coding.*;drop', 3]) {
      assert.throws(
        () => parsePatterns(bad),
        (e: unknown) => isToolError(e) && e.code === 'INVALID_ARGUMENTS',
        String(bad),
      );
    }
  });

  it('parseSeq takes non-negative integers as numbers or digit strings', () => {
    assert.equal(parseSeq('42', 'since'), 42);
    assert.equal(parseSeq(7, 'since'), 7);
    assert.equal(parseSeq(undefined, 'since'), undefined);
    assert.equal(parseSeq('', 'since'), undefined);
    for (const bad of ['-1', '1.5', 'abc', -3, '1e3']) assert.throws(() => parseSeq(bad, 'Last-Event-ID'), /Last-Event-ID must be/);
  });
});
