/**
 * src/agent/eventThrottle.ts and its use by the streams (src/adapters/rest/eventStreams.ts, SSE and
 * WebSocket): at most `events_per_second` events per one-second window, and a stream whose transport keeps
 * filling up (every re-subscription used to start a fresh hub window) still gets no more than that; nothing is
 * lost or doubled, only paced.
 */
import assert from 'node:assert/strict';
import { defaultConfig } from '../../../src/agent/config';
import { EventHub } from '../../../src/agent/eventHub';
import { EventThrottle } from '../../../src/agent/eventThrottle';
import { ResumableSubscription } from '../../../src/adapters/rest/eventStreams';
import type { EventRecord } from '../../../src/domain/events';

function event(seq: number): EventRecord {
  return {
    event_id: `e${seq}`,
    event_type: 'coding.segment_coded',
    timestamp: new Date(seq).toISOString(),
    aggregate_type: 'segment',
    aggregate_id: String(seq),
    caused_by: { session_id: 's', client_type: 'CUSTOM', user: 'u' },
    payload: {},
    metadata: { correlation_id: `c${seq}`, sequence_number: seq },
  };
}

describe('agent/eventThrottle', () => {
  it('lets at most the limit through in one second, then again after the second ends', () => {
    let t = 5_000;
    const throttle = new EventThrottle(
      () => 3,
      () => t,
    );
    assert.deepEqual([throttle.take(), throttle.take(), throttle.take(), throttle.take()], [true, true, true, false]);
    t += 400;
    assert.equal(throttle.take(), false);
    assert.equal(throttle.waitMs(), 600);
    t += 600;
    assert.equal(throttle.waitMs(), 0);
    assert.equal(throttle.take(), true);
  });

  it('reads the limit on every call (a reloaded configuration applies at once)', () => {
    let limit = 1;
    const t = 0;
    const throttle = new EventThrottle(
      () => limit,
      () => t,
    );
    assert.equal(throttle.take(), true);
    assert.equal(throttle.take(), false);
    limit = 5;
    assert.equal(throttle.take(), true);
  });

  it('a stream whose transport is always full gets no more than events_per_second, each event once, in order', async () => {
    const clock = {
      t: 1_000_000,
      now(): number {
        return this.t;
      },
    };
    const cfg = defaultConfig();
    cfg.rate_limits.events_per_second = 3;
    const store = Array.from({ length: 12 }, (_, i) => event(i + 1));
    const hub = new EventHub(
      (after, limit) => store.filter((e) => e.metadata.sequence_number > after).slice(0, limit),
      () => cfg,
      clock,
    );
    const got: number[] = [];
    let sub: ResumableSubscription | undefined = undefined;
    // the transport reports a full buffer after every event and drains at once (SSE's 'drain' resumes the stream)
    const sink = {
      event: (e: EventRecord) => {
        got.push(e.metadata.sequence_number);
        setImmediate(() => sub?.resume());
        return false;
      },
      overflow: () => undefined,
    };
    sub = new ResumableSubscription(
      hub,
      ['coding.*'],
      0,
      sink,
      [],
      () => cfg.rate_limits.events_per_second,
      () => clock.t,
    ).open();
    for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r));
    assert.deepEqual(got, [1, 2, 3], 'the first second: three events, however often the transport drains');
    clock.t += 1000;
    // the throttle's timer resumes the stream when the second ends (the fake clock moved; the timer is real)
    await new Promise((r) => setTimeout(r, 1100));
    for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r));
    assert.deepEqual(got, [1, 2, 3, 4, 5, 6], 'the next second: three more, none lost or doubled');
    sub.close();
    hub.closeAll();
  });
});
