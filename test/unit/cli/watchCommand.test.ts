/**
 * The pure parts of `marginalia watch` (src/cli/watchCommand.ts): the commands a line means, the SSE parser
 * (split chunks, comments, multi-line data), and an agent action's observer line in words.
 */
import assert from 'node:assert/strict';
import { formatActionLine, formatRequest, isAgentEvent, parseWatchCommand } from '../../../src/cli/watchCommand';
import { createSseParser, type SseMessage } from '../../../src/core/sse';
import type { EventRecord } from '../../../src/domain/events';

function ev(type: string, payload: Record<string, unknown>, causedBy: Partial<EventRecord['caused_by']> & { coder?: string } = {}): EventRecord {
  return {
    event_id: 'e',
    event_type: type as EventRecord['event_type'],
    timestamp: '2026-11-26T14:32:10.123Z',
    aggregate_type: 'segment',
    aggregate_id: '1',
    caused_by: { session_id: 'sess-1234', client_type: 'REST_CLIENT', user: 'claude', role: 'agent', coder: 'claude', ...causedBy } as EventRecord['caused_by'],
    payload,
    metadata: { correlation_id: 'c1', sequence_number: 7 },
  };
}

describe('cli/watchCommand', () => {
  it('parses decisions and commands by letter or word, with the rest of the line as reason or JSON', () => {
    assert.deepEqual(parseWatchCommand('a'), { kind: 'approve' });
    assert.deepEqual(parseWatchCommand('  Approve '), { kind: 'approve' });
    assert.deepEqual(parseWatchCommand('r'), { kind: 'reject' });
    assert.deepEqual(parseWatchCommand('r not that name'), { kind: 'reject', reason: 'not that name' });
    assert.deepEqual(parseWatchCommand('e {"new_name":"X"}'), { kind: 'edit', json: '{"new_name":"X"}' });
    assert.deepEqual(parseWatchCommand('{"new_name":"X"}'), { kind: 'edit', json: '{"new_name":"X"}' });
    assert.deepEqual(parseWatchCommand('e'), { kind: 'edit' });
    assert.deepEqual(parseWatchCommand('p'), { kind: 'pause' });
    assert.deepEqual(parseWatchCommand('u'), { kind: 'resume' });
    assert.deepEqual(parseWatchCommand('unpause'), { kind: 'resume' });
    assert.deepEqual(parseWatchCommand('s'), { kind: 'skip' });
    assert.deepEqual(parseWatchCommand('q'), { kind: 'quit' });
    assert.deepEqual(parseWatchCommand(''), { kind: 'empty' });
    assert.deepEqual(parseWatchCommand('zap'), { kind: 'unknown', text: 'zap' });
  });

  it('parses server-sent events split across chunks, skipping comments and retry lines', () => {
    let got: SseMessage[] = [];
    const p = createSseParser((m) => got.push(m));
    const feed = (chunk: string) => {
      got = [];
      p.feed(chunk);
      return got;
    };
    assert.deepEqual(feed('retry: 2000\n: marginalia event stream\n\nid: 4\nevent: coding.segment_coded\nda'), []);
    assert.deepEqual(feed('ta: {"a":1}\n\n: keep-alive\n\n'), [{ event: 'coding.segment_coded', data: '{"a":1}', id: '4' }]);
    assert.deepEqual(feed('data: one\r\ndata: two\r\n\r\n'), [{ event: 'message', data: 'one\ntwo', id: '4' }]);
  });

  it('writes one line per action: time, agent, what, words with names, outcome', () => {
    const names = { code: (id: number) => (id === 3 ? 'Isolation' : undefined), source: (id: number) => (id === 9 ? 'interview-04' : undefined) };
    const line = formatActionLine([ev('coding.segment_coded', { code_id: 3, source_id: 9, text: 'I felt alone at the   workshops' })], names);
    assert.match(line, /^14:32:10 {2}claude +coding\.segment_coded +coded "I felt alone at the workshops" in interview-04 with 'Isolation' {2}ok$/);
    const unknown = formatActionLine([ev('coding.segment_coded', { code_id: 5, source_id: 6, text: 'x' })], names);
    assert.match(unknown, /coded "x" in source 6 with 'code 5'/);
    const notified = formatActionLine([ev('agent.notified', { tool: 'create_code', summary: "create the code 'Hope'" })], names);
    assert.match(notified, /claude +create_code +create the code 'Hope' \(notify\) {2}NOTIFY$/);
  });

  it('tells agents from the researcher by caused_by.role (the local UI when no role was recorded)', () => {
    assert.equal(isAgentEvent(ev('coding.code_created', {})), true);
    assert.equal(isAgentEvent(ev('coding.code_created', {}, { role: 'researcher' })), false);
    assert.equal(isAgentEvent(ev('coding.code_created', {}, { role: undefined, client_type: 'LOCAL_UI' })), false);
    assert.equal(isAgentEvent(ev('coding.code_created', {}, { role: undefined, client_type: 'REST_CLIENT' })), true);
  });

  it('asks about a request with its words, tool, level and expiry, and says when a pause held it', () => {
    const text = formatRequest({
      request_id: '3f2a9c1e-0000',
      tool: 'rename_code',
      client_name: 'claude',
      description: "rename the code 'A' to 'B'",
      trust_level: 'suggest',
      expires_at: '2026-11-26T14:37:00.000Z',
      arguments: {},
      held_by_pause: true,
    });
    assert.match(text, /^\? claude asks: rename the code 'A' to 'B' \(held: agents paused\) \[rename_code; suggest; request 3f2a9c1e, until 14:37:00\]\n/);
    assert.match(text, /\[a\]pprove/);
  });
});
