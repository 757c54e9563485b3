/**
 * Pause agents (issue 14 item 9), in process with an injectable clock: only the researcher may pause; while
 * paused an agent's notify-level apply_code is held (pending, `held_by_pause`), writes nothing and does not time
 * out however long the pause lasts; get_approval_status is not held; Resume runs it (with agent.notified, as a
 * notify-level call) and leaves a real suggestion pending; agents.paused and agents.resumed are stored.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { AgentContext } from '../../../src/agent/agentContext';
import type { ToolPipeline } from '../../../src/agent/pipeline';
import { ALL_TOOLS, createPipeline, headlessHost, openProjectHandle, type ProjectHandle } from '../../../src/cli/compose';
import { silentLogger } from '../../../src/core/log';
import type { EventRecord } from '../../../src/domain/events';

const TOKENS = { agent: 'agent-token-for-unit-tests', reviewer: 'reviewer-token-for-unit-tests' };
const MINUTE = 60_000;

describe('agent/pause agents (fake clock)', () => {
  let dir: string;
  let handle: ProjectHandle;
  let agent: AgentContext;
  let pipeline: ToolPipeline;
  let events: EventRecord[];
  const clock = {
    t: Date.UTC(2026, 10, 26, 9, 0, 0, 0),
    now(): number {
      return this.t;
    },
  };

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'marginalia-pause-'));
    handle = await openProjectHandle(path.join(dir, 'p.qda'), { create: true, checkpointIdleMs: 0 });
    agent = new AgentContext({ tools: ALL_TOOLS, project: () => handle, tokens: TOKENS, clock, logger: silentLogger });
    pipeline = createPipeline({ project: () => handle, host: headlessHost, logger: silentLogger, clock, agent, embeddings: null });
    events = [];
    pipeline.onEvents((e) => events.push(...e));
  });

  afterEach(async () => {
    agent.dispose();
    await handle.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const bot = () => agent.openSession({ authorization: `Bearer ${TOKENS.agent}`, client_type: 'ASSISTANT_A_CLI', client_name: 'bot' }).caller;
  const researcher = () => agent.openSession({ authorization: `Bearer ${TOKENS.reviewer}`, client_type: 'REST_CLIENT', client_name: 'researcher' }).caller;
  const data = (out: { envelope: unknown }) => (out.envelope as { data: Record<string, any> }).data;

  async function study(): Promise<{ code_id: number; source_id: number }> {
    const me = researcher();
    const code = await agent.call(me, 'create_code', { name: 'Tension' });
    const source = await agent.call(me, 'add_text_source', { name: 'interview-04', content: 'We argued about the shed for months.' });
    return { code_id: data(code).code_id as number, source_id: data(source).source_id as number };
  }

  it('only the researcher may pause or resume (APPROVAL_FORBIDDEN)', async () => {
    assert.throws(
      () => agent.pause(bot()),
      (e: { code?: string }) => e.code === 'APPROVAL_FORBIDDEN',
    );
    await assert.rejects(agent.resume(bot()), (e: { code?: string }) => e.code === 'APPROVAL_FORBIDDEN');
    assert.equal(agent.paused, false);
  });

  it('holds a notify-level call until Resume (no timeout), then runs it with agent.notified', async () => {
    const ids = await study();
    const me = researcher();
    const b = bot();
    const paused = agent.pause(me);
    assert.deepEqual([paused.paused, paused.changed], [true, true]);
    assert.equal(agent.pause(me).changed, false, 'pausing again changes nothing');
    const before = handle.repo.listSegmentsForSource(ids.source_id).length;
    const held = await agent.call(b, 'apply_code', { ...ids, start_position: 3, end_position: 9 });
    assert.equal(held.status, 'pending', JSON.stringify(held.envelope));
    assert.equal(data(held).held_by_pause, true);
    assert.equal(handle.repo.listSegmentsForSource(ids.source_id).length, before, 'nothing written');
    // following one's held call is never held
    const status = await agent.call(b, 'get_approval_status', { request_id: data(held).request_id });
    assert.equal(status.status, 'ok', JSON.stringify(status.envelope));
    // a pause longer than the approval timeout: the held call still waits
    clock.t += 10 * MINUTE;
    assert.equal(pipeline.sweepApprovals(), 0);
    assert.equal(agent.listApprovals('pending').length, 1);

    const resumed = await agent.resume(me);
    assert.deepEqual([resumed.paused, resumed.changed, resumed.ran, resumed.failed, resumed.still_pending], [false, true, 1, 0, 0]);
    assert.equal(handle.repo.listSegmentsForSource(ids.source_id).length, before + 1, 'resume ran it');
    assert.equal(agent.listApprovals('completed').length, 1);
    const types = events.map((e) => e.event_type);
    assert.ok(types.indexOf('agents.paused') < types.indexOf('approval.requested'));
    const notified = events.filter((e) => e.event_type === 'agent.notified');
    assert.equal(notified.length, 1, 'apply_code is notify by default: resuming it tells the researcher');
    assert.equal(notified[0]!.payload.tool, 'apply_code');
    assert.equal(notified[0]!.payload.agent, 'bot');
    assert.equal(types[types.length - 1], 'agents.resumed');
    // agents run again
    const after = await agent.call(b, 'apply_code', { ...ids, start_position: 10, end_position: 15 });
    assert.equal(after.status, 'ok', JSON.stringify(after.envelope));
  });

  it('a suggestion made while paused is held as ever and stays pending after Resume; the researcher is never held', async () => {
    const me = researcher();
    agent.pause(me);
    const suggested = await agent.call(bot(), 'create_code', { name: 'Hope' });
    assert.equal(suggested.status, 'pending');
    assert.equal(data(suggested).held_by_pause, undefined);
    assert.equal((await agent.call(me, 'create_code', { name: 'Mine' })).status, 'ok', "the researcher's own call runs");
    const resumed = await agent.resume(me);
    assert.equal(resumed.ran, 0);
    assert.deepEqual(
      agent.listApprovals('pending').map((a) => a.tool),
      ['create_code'],
    );
  });
});
