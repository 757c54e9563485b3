/**
 * The CLI adapter's pieces in process: line splitting (chunk boundaries inside a UTF-8 character, CRLF,
 * over-long lines), the SSE parser of the forwarding backend, and the line protocol over a real agent
 * context: ids echoed, bad lines answered and skipped, and events on a slow stderr delivered in order
 * without loss or duplicates (backpressure).
 */
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { LocalCliBackend, readLines, runLineProtocol, type LineItem, type LineOutput } from '../../../src/adapters/cli/cliAdapter';
import { createSseParser, type SseMessage } from '../../../src/core/sse';
import { AgentContext } from '../../../src/agent/agentContext';
import type { ToolPipeline } from '../../../src/agent/pipeline';
import { ALL_TOOLS, createPipeline, headlessHost, openProjectHandle, type ProjectHandle } from '../../../src/cli/compose';
import { silentLogger } from '../../../src/core/log';

const TOKENS = { agent: 'agent-token-for-unit-tests', reviewer: 'reviewer-token-for-unit-tests' };

async function collect(chunks: (Buffer | string)[], max?: number): Promise<LineItem[]> {
  const out: LineItem[] = [];
  async function* gen() {
    for (const c of chunks) yield c;
  }
  for await (const item of readLines(gen(), max)) out.push(item);
  return out;
}

/** A LineOutput that records lines and says "full" after `capacity` writes until drain() is called. */
class SlowOutput extends EventEmitter implements LineOutput {
  lines: string[] = [];
  private pending = 0;
  constructor(private readonly capacity = Infinity) {
    super();
  }
  write(chunk: string): boolean {
    this.lines.push(...chunk.split('\n').filter(Boolean));
    this.pending++;
    return this.pending < this.capacity;
  }
  drain(): void {
    this.pending = 0;
    this.emit('drain');
  }
}

describe('adapters/cli', () => {
  describe('readLines', () => {
    it('splits lines across chunks, also inside a multi-byte character, and drops \\r of CRLF', async () => {
      const text = Buffer.from('{"a":"🌱 é"}\r\n{"b":1}\n\nlast', 'utf8');
      // cut inside the 4-byte emoji and between \r and \n
      const cut1 = text.indexOf(0xf0) + 2;
      const cut2 = text.indexOf(0x0a) - 0;
      const items = await collect([text.subarray(0, cut1), text.subarray(cut1, cut2), text.subarray(cut2)]);
      assert.deepEqual(items, [{ line: '{"a":"🌱 é"}' }, { line: '{"b":1}' }, { line: '' }, { line: 'last' }]);
    });

    it('reports an over-long line without keeping it, and goes on with the next', async () => {
      const items = await collect(['x'.repeat(30), 'y'.repeat(30), '\nok\n', 'z'.repeat(100)], 50);
      assert.deepEqual(items, [{ tooLong: 60 }, { line: 'ok' }, { tooLong: 100 }]);
    });
  });

  describe('createSseParser', () => {
    it('dispatches events with id, name and multi-line data; reports comments; handles CRLF split across chunks', () => {
      const got: SseMessage[] = [];
      const comments: string[] = [];
      const p = createSseParser(
        (m) => got.push(m),
        (c) => comments.push(c),
      );
      p.feed('retry: 2000\r');
      p.feed('\n: marginalia event stream; patterns coding.*\n\nid: 7\nevent: coding.code_created\ndata: {"a":');
      p.feed('1}\ndata:second\n\n');
      p.feed('data: plain\n');
      assert.deepEqual(comments, ['marginalia event stream; patterns coding.*']);
      assert.deepEqual(got, [{ id: '7', event: 'coding.code_created', data: '{"a":1}\nsecond' }]);
      p.feed('\n');
      assert.deepEqual(got[1], { id: '7', event: 'message', data: 'plain' });
    });
  });

  describe('runLineProtocol over a local agent context', () => {
    let dir: string;
    let handle: ProjectHandle;
    let agent: AgentContext;
    let pipeline: ToolPipeline;

    beforeEach(async () => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'marginalia-cliunit-'));
      handle = await openProjectHandle(path.join(dir, 'p.qda'), { create: true, checkpointIdleMs: 0 });
      // no per-second event limit in the way of the backpressure test
      agent = new AgentContext({
        tools: ALL_TOOLS,
        project: () => handle,
        tokens: TOKENS,
        logger: silentLogger,
        configText: 'agent_context:\n  rate_limits:\n    events_per_second: 100000\n',
      });
      pipeline = createPipeline({ project: () => handle, host: headlessHost, logger: silentLogger, agent, embeddings: null });
    });

    afterEach(async () => {
      agent.dispose();
      await handle.close();
      fs.rmSync(dir, { recursive: true, force: true });
    });

    const input = (lines: string[]) =>
      (async function* () {
        for (const l of lines) yield `${l}\n`;
      })();

    it('answers each command with its id, and bad lines with INVALID_JSON / INVALID_ARGUMENTS', async () => {
      const backend = new LocalCliBackend({ agent, pipeline, authorization: `Bearer ${TOKENS.agent}`, clientName: 'cli', clientType: 'CUSTOM' });
      const out = new SlowOutput();
      const err = new SlowOutput();
      await runLineProtocol(
        input([
          '{"id":1,"op":"call","tool":"list_codes","arguments":{}}',
          '{oops',
          '"str"',
          '{"id":"b","op":"call","tool":"create_code","arguments":{"name":"Hope","color":"#59A14F"}}',
          '{"id":3,"op":"reject","request_id":"nope"}',
          '{"id":4,"op":"call","tool":"list_codes","arguments":[]}',
        ]),
        backend,
        out,
        err,
      );
      await backend.close();
      const res = out.lines.map((l) => JSON.parse(l));
      assert.deepEqual(
        res.map((r) => [r.id, r.success, r.error_code ?? r.data?.status ?? 'ok']),
        [
          [1, true, 'ok'],
          [null, false, 'INVALID_JSON'],
          [null, false, 'INVALID_ARGUMENTS'],
          ['b', true, 'pending_approval'],
          [3, false, 'APPROVAL_NOT_FOUND'],
          [4, false, 'INVALID_ARGUMENTS'],
        ],
      );
      assert.equal(handle.repo.listCodes().length, 0, 'the agent call waits for approval');
      assert.equal(agent.sessions.get(backend.sessionId), undefined, 'close ended the session');
    });

    it('delivers events to a slow stderr in order, without loss or duplicates', async () => {
      const backend = new LocalCliBackend({ agent, pipeline, authorization: `Bearer ${TOKENS.reviewer}`, clientName: 'cli', clientType: 'CUSTOM' });
      const out = new SlowOutput();
      const err = new SlowOutput(3);
      const lines = ['{"id":0,"op":"subscribe","patterns":["coding.code_created"],"since":0}'];
      for (let i = 0; i < 40; i++)
        lines.push(JSON.stringify({ id: i + 1, op: 'call', tool: 'create_code', arguments: { name: `Code ${i}`, color: '#59A14F' } }));
      // drain stderr now and then while the commands run
      const drainer = setInterval(() => err.drain(), 5);
      await runLineProtocol(input(lines), backend, out, err);
      const deadline = Date.now() + 5000;
      while (err.lines.length < 40 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      clearInterval(drainer);
      await backend.close();
      const res = out.lines.map((l) => JSON.parse(l));
      assert.ok(
        res.every((r) => r.success),
        JSON.stringify(res.find((r) => !r.success)),
      );
      const events = err.lines.map((l) => JSON.parse(l));
      assert.ok(events.every((e) => e.type === 'event' && e.subscription_id === res[0].data.subscription_id));
      assert.deepEqual(
        events.map((e) => e.event.payload.name),
        Array.from({ length: 40 }, (_, i) => `Code ${i}`),
      );
    });
  });
});
