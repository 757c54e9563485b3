/**
 * Approvals of the trust layer, in process with an injectable clock (agent-context spec, sections 3, 5
 * and 7): a request nobody answers is rejected after 5 minutes with the reason `timeout` and
 * approval.denied; a session can never approve or reject its own request, and an agent can approve
 * nothing; the researcher's approval runs the stored call with approval.granted before the action's event.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { AgentContext } from '../../../src/agent/agentContext';
import type { Caller, ToolPipeline } from '../../../src/agent/pipeline';
import { ALL_TOOLS, createPipeline, headlessHost, openProjectHandle, type ProjectHandle } from '../../../src/cli/compose';
import { silentLogger } from '../../../src/core/log';
import type { EventRecord } from '../../../src/domain/events';

const TOKENS = { agent: 'agent-token-for-unit-tests', reviewer: 'reviewer-token-for-unit-tests' };
const MINUTE = 60_000;

describe('agent/approvals (fake clock)', () => {
  let dir: string;
  let handle: ProjectHandle;
  let agent: AgentContext;
  let pipeline: ToolPipeline;
  let events: EventRecord[];
  const clock = {
    t: Date.UTC(2026, 4, 6, 7, 8, 9, 0),
    now(): number {
      return this.t;
    },
  };

  beforeEach(async () => {
    clock.t = Date.UTC(2026, 4, 6, 7, 8, 9, 0);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'marginalia-approvals-'));
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

  const agentSession = (name = 'bot') =>
    agent.openSession({ authorization: `Bearer ${TOKENS.agent}`, client_type: 'ASSISTANT_A_CLI', client_name: name }).caller;
  const researcherSession = () =>
    agent.openSession({ authorization: `Bearer ${TOKENS.reviewer}`, client_type: 'REST_CLIENT', client_name: 'researcher' }).caller;

  async function requestCode(caller: Caller, name = 'Hope'): Promise<string> {
    const out = await agent.call(caller, 'create_code', { name, color: '#59A14F' });
    assert.equal(out.status, 'pending', JSON.stringify(out.envelope));
    const data = (out.envelope as { data: { status: string; request_id: string; expires_at: string } }).data;
    assert.equal(data.status, 'pending_approval');
    assert.equal(data.expires_at, new Date(clock.t + 5 * MINUTE).toISOString(), 'expires 5 minutes after the request');
    return data.request_id;
  }

  const codeCount = () => handle.repo.listCodes().length;

  it('rejects a request nobody answered after 5 minutes, with reason timeout and approval.denied', async () => {
    const bot = agentSession();
    const id = await requestCode(bot);
    clock.t += 5 * MINUTE - 1;
    assert.equal(pipeline.sweepApprovals(), 0, 'not yet: one millisecond before the deadline');
    assert.equal(agent.listApprovals('pending').length, 1);
    assert.equal(events.filter((e) => e.event_type === 'approval.denied').length, 0);

    clock.t += 1;
    assert.equal(pipeline.sweepApprovals(), 1);
    const [rejected] = agent.listApprovals('rejected');
    assert.equal(rejected?.request_id, id);
    assert.equal(rejected?.reason, 'timeout');
    assert.equal(rejected?.decided_at, new Date(clock.t).toISOString());
    const denied = events.filter((e) => e.event_type === 'approval.denied');
    assert.equal(denied.length, 1);
    assert.equal(denied[0]?.payload.request_id, id);
    assert.equal(denied[0]?.payload.reason, 'timeout');
    assert.equal(denied[0]?.payload.approved, false);
    assert.equal(denied[0]?.payload.session_id, bot.session_id, 'names the session that asked');

    // too late to approve now, and nothing was created
    const late = await agent.approve(researcherSession(), id);
    assert.equal(late.envelope.success, false);
    assert.equal(!late.envelope.success && late.envelope.error_code, 'APPROVAL_NOT_PENDING');
    assert.equal(codeCount(), 0);
    assert.equal(pipeline.sweepApprovals(), 0, 'a rejected request is not rejected twice');
  });

  it('expired requests are rejected before a new one is counted against the limit of 10', async () => {
    // two agents (credentials), five each: approvals.max_pending_per_agent (5) is not what refuses the eleventh
    const bot = agentSession();
    const other = agent.openSession({
      authorization: `Bearer ${agent.credentials.issue('Second').token}`,
      client_type: 'ASSISTANT_B_CLI',
      client_name: 'second',
    }).caller;
    for (let i = 0; i < 10; i++) await requestCode(i < 5 ? bot : other, `Code ${i}`);
    const third = agent.openSession({ authorization: `Bearer ${agent.credentials.issue('Third').token}`, client_type: 'CUSTOM', client_name: 'third' }).caller;
    const full = await agent.call(third, 'create_code', { name: 'Eleven', color: '#59A14F' });
    assert.equal(!full.envelope.success && full.envelope.error_code, 'APPROVAL_QUEUE_FULL');
    assert.equal(
      !full.envelope.success && (full.envelope.details as { limit_key?: string } | undefined)?.limit_key,
      undefined,
      'the global cap, not the per-agent one',
    );
    clock.t += 5 * MINUTE;
    await requestCode(bot, 'After the timeout');
    assert.equal(agent.listApprovals('rejected').length, 10);
    assert.equal(agent.listApprovals('pending').length, 1);
  });

  it('a session can never approve or reject its own request, even as the researcher', async () => {
    const bot = agentSession();
    const id = await requestCode(bot);
    // a researcher caller that shares the requesting session (e.g. a reviewer token used inside that session)
    const sameSession: Caller = { ...bot, researcher: true };
    for (const out of [await agent.approve(sameSession, id), agent.reject(sameSession, id, 'mine')]) {
      assert.equal(out.envelope.success, false);
      assert.equal(!out.envelope.success && out.envelope.error_code, 'APPROVAL_FORBIDDEN');
      assert.match(!out.envelope.success ? out.envelope.error : '', /own request/);
    }
    // an agent (not the researcher) may approve nothing, not even another session's request
    const other = agentSession('other-bot');
    const byAgent = await agent.approve(other, id);
    assert.equal(!byAgent.envelope.success && byAgent.envelope.error_code, 'APPROVAL_FORBIDDEN');
    assert.equal(agent.listApprovals('pending').length, 1, 'still pending');
    assert.equal(codeCount(), 0);

    // the researcher in a session of their own may
    const before = events.length;
    const ok = await agent.approve(researcherSession(), id);
    assert.equal(ok.envelope.success, true, JSON.stringify(ok.envelope));
    assert.equal(codeCount(), 1);
    const types = events.slice(before).map((e) => e.event_type);
    assert.deepEqual(
      types.filter((t) => t !== 'session.connected'),
      ['approval.granted', 'coding.code_created'],
    );
    const created = events.find((e) => e.event_type === 'coding.code_created');
    assert.equal(created?.caused_by.session_id, bot.session_id, "the action is the agent session's");
    assert.equal(created?.metadata.correlation_id, id, 'its events carry the request id as correlation id');
  });

  it("an agent's approve_merge is refused (APPROVAL_FORBIDDEN, never queued); one stored before that rule runs as the researcher's decision once approved", async () => {
    const researcher = researcherSession();
    const a = (await agent.call(researcher, 'create_code', { name: 'Water', color: '#4E79A7' })).envelope as { data: { code_id: number } };
    const b = (await agent.call(researcher, 'create_code', { name: 'Watering', color: '#4E79A7' })).envelope as { data: { code_id: number } };
    const bot = agentSession();
    const merge = await agent.call(bot, 'suggest_merge_codes', { source_code_id: b.data.code_id, target_code_id: a.data.code_id, rationale: 'the same idea' });
    assert.equal(merge.status, 'ok', JSON.stringify(merge.envelope));
    const mergeId = (merge.envelope as { data: { merge_suggestion_id: number } }).data.merge_suggestion_id;
    // deciding a suggestion is the researcher's alone (issue 14 item 6): refused before the trust stage
    const asked = await agent.call(bot, 'approve_merge', { merge_suggestion_id: mergeId });
    assert.equal(!asked.envelope.success && asked.envelope.error_code, 'APPROVAL_FORBIDDEN');
    assert.deepEqual(agent.listApprovals(), [], 'nothing queued');
    assert.equal(codeCount(), 2);
    // a project may hold such a request from before: approving it is the researcher's decision
    const requestId = 'c0ffee00-0000-4000-8000-000000000001';
    const now = new Date(clock.t).toISOString();
    handle.transaction(() =>
      handle.repo.insertApproval({
        request_id: requestId,
        tool: 'approve_merge',
        arguments: JSON.stringify({ merge_suggestion_id: mergeId }),
        session_id: bot.session_id,
        client_type: bot.client_type,
        client_name: bot.client_name,
        user: bot.user,
        trust_level: 'require',
        description: 'approve the merge',
        status: 'pending',
        created_at: now,
        expires_at: new Date(clock.t + 5 * MINUTE).toISOString(),
        decided_at: null,
        decided_by: null,
        reason: null,
        result: null,
        error_code: null,
      }),
    );
    const done = await agent.approve(researcher, requestId);
    assert.equal(done.envelope.success, true, JSON.stringify(done.envelope));
    assert.deepEqual(
      handle.repo.listCodes().map((c) => c.name),
      ['Water'],
      'merged',
    );
    const merged = events.find((e) => e.event_type === 'coding.codes_merged');
    assert.equal(merged?.caused_by.session_id, bot.session_id, "the merge is recorded as the agent session's action");
    const decided = events.find((e) => e.event_type === 'suggestion.approved');
    assert.equal(decided?.payload.approved_by_session, researcher.session_id, 'the researcher decided, not the agent');
    assert.equal(decided?.payload.self_approval, false);

    // an agent approves nothing: its approve_suggestion is refused and the suggestion stays pending
    const code = await agent.call(bot, 'suggest_new_code', { name: 'Shed', rationale: 'the shed comes up often' });
    const suggestionId = (code.envelope as { data: { suggestion_id: number } }).data.suggestion_id;
    const direct = await agent.call(agentSession('other-bot'), 'approve_suggestion', { suggestion_id: suggestionId });
    assert.equal(!direct.envelope.success && direct.envelope.error_code, 'APPROVAL_FORBIDDEN');
    assert.equal(handle.repo.getSuggestion(suggestionId)?.status, 'pending');
    assert.equal(
      handle.repo.listCodes().some((c) => c.name === 'Shed'),
      false,
    );
  });

  it('audits the held call as pending with its request id', async () => {
    const lines: string[] = [];
    agent.dispose();
    agent = new AgentContext({
      tools: ALL_TOOLS,
      project: () => handle,
      tokens: TOKENS,
      clock,
      audit: { append: (l) => void lines.push(l), read: async () => lines.join('\n') },
    });
    pipeline = createPipeline({ project: () => handle, host: headlessHost, logger: silentLogger, clock, agent, embeddings: null });
    const id = await requestCode(agentSession());
    clock.t += 5 * MINUTE;
    pipeline.sweepApprovals();
    const entries = lines.map((l) => JSON.parse(l) as { tool: string; decision: string; request_id?: string });
    assert.ok(
      entries.some((e) => e.tool === 'create_code' && e.decision === 'pending' && e.request_id === id),
      lines.join('\n'),
    );
  });
});
