/**
 * Blind coding (issue 16 item 5) in the agent context: the ContextBuilder's answers (state summary, briefing,
 * statistics, co-occurrences, one segment) and their caches are scoped to the asking coder, both when a read scope
 * is passed and through AgentContext.redactFor, the path the MCP resources and prompts take. A real sql.js project
 * through the one pipeline; two human coders (Ana, Bo), an agent coder and a lead (Lea) who codes nothing. The
 * expected counts are written out by hand from the codings made here.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { AgentContext } from '../../../src/agent/agentContext';
import { ContextBuilder, inScope } from '../../../src/agent/contextBuilder';
import type { Caller } from '../../../src/agent/pipeline';
import { ALL_TOOLS, createPipeline, headlessHost, openProjectHandle, type ProjectHandle } from '../../../src/cli/compose';
import { silentLogger } from '../../../src/core/log';

const TOKENS = { agent: 'agent-token-context-blind', reviewer: 'reviewer-token-context-blind' };
// 0         1         2         3         4         5
// 012345678901234567890123456789012345678901234567890123
const TEXT = 'We grew beans together. The council never came to see.';

describe('agent/contextBuilder under blind coding', () => {
  let dir: string;
  let handle: ProjectHandle | null;
  let agent: AgentContext;
  let builder: ContextBuilder;
  let ana: Caller;
  let bo: Caller;
  let lea: Caller;
  let bot: Caller;
  let anaSegment = 0;
  let boSegment = 0;

  const ok = async (caller: Caller, tool: string, args: Record<string, unknown>) => {
    const out = await agent.call(caller, tool, args);
    if (!out.envelope.success) assert.fail(`${tool}: ${out.envelope.error_code} ${out.envelope.error}`);
    return out.envelope.data as any;
  };
  const researcher = (user: string) =>
    agent.openSession({ authorization: `Bearer ${TOKENS.reviewer}`, client_type: 'REST_CLIENT', client_name: `${user}-client`, user }).caller;

  /** What `caller` sees of the codings, read the way the MCP resources and prompts read (the builder's answer for everyone, then redactFor). */
  const seen = (caller: Caller) => {
    const state = agent.redactFor(caller, builder.buildStateSummary());
    const stats = agent.redactFor(caller, builder.buildStatistics());
    const briefing = agent.redactFor(caller, builder.buildProjectBriefing());
    return {
      codes: Object.fromEntries(state.codes.map((c) => [c.name, c.segment_count])),
      segments: state.counts.segments,
      source: state.sources[0]!.segment_count,
      coded_sources: state.counts.coded_sources,
      total_segments: briefing.coding_progress.total_segments,
      top_codes: briefing.code_summary.top_codes.map((t) => `${t.name} ${t.count}`),
      coding_events_by: [...new Set(briefing.recent_activity.filter((a) => a.action.startsWith('coding.segment')).map((a) => a.by))].sort(),
      covered: stats.coverage.coded_code_points,
      per_coder: stats.segments_per_coder.map((p) => `${p.owner} ${p.segments}`),
      per_code: stats.segments_per_code.map((p) => `${p.name} ${p.segments}`),
      cooccurrences: agent.redactFor(caller, builder.cooccurrences()).map((p) => `${p.code_a.name}+${p.code_b.name} ${p.count}`),
    };
  };

  /** Everything, as every coder sees it while blind coding is off and the lead sees it while it is on. */
  const ALL = {
    codes: { Belonging: 2, Place: 2 },
    segments: 4,
    source: 4,
    coded_sources: 1,
    total_segments: 4,
    top_codes: ['Belonging 2', 'Place 2'],
    coding_events_by: ['Ana', 'Bo', 'coder-bot'],
    // [0,23) of Bo covers Ana's [0,10) and Bo's [5,15); the agent's [24,35)
    covered: 34,
    per_coder: ['Bo 2', 'Ana 1', 'coder-bot 1'],
    per_code: ['Belonging 2', 'Place 2'],
    // Ana's Belonging [0,10) and Bo's Belonging [5,15) each overlap Bo's Place [0,23)
    cooccurrences: ['Belonging+Place 2'],
  };

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'marginalia-context-blind-'));
    const h = await openProjectHandle(path.join(dir, 'study.qda'), { create: true, checkpointIdleMs: 0 });
    handle = h;
    agent = new AgentContext({ tools: ALL_TOOLS, project: () => handle, tokens: TOKENS, logger: silentLogger });
    createPipeline({ project: () => handle, host: headlessHost, logger: silentLogger, agent, embeddings: null });
    builder = new ContextBuilder({ project: () => handle, hub: agent.hub });
    ana = researcher('Ana');
    bo = researcher('Bo');
    lea = researcher('Lea');
    bot = agent.openSession({ authorization: `Bearer ${TOKENS.agent}`, client_type: 'REST_CLIENT', client_name: 'coder-bot' }).caller;
    const sourceId = (await ok(lea, 'add_text_source', { name: 'interview-01', content: TEXT })).source_id;
    const belonging = (await ok(lea, 'create_code', { name: 'Belonging' })).code_id;
    const place = (await ok(lea, 'create_code', { name: 'Place' })).code_id;
    const code = (caller: Caller, code_id: number, start_position: number, end_position: number) =>
      ok(caller, 'apply_code', { code_id, source_id: sourceId, start_position, end_position });
    anaSegment = (await code(ana, belonging, 0, 10)).segment_id;
    boSegment = (await code(bo, place, 0, 23)).segment_id;
    await code(bo, belonging, 5, 15);
    await code(bot, place, 24, 35);
  });

  afterEach(async () => {
    builder.dispose();
    agent.dispose();
    const h = handle;
    handle = null;
    await h?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('blind coding off: every coder sees every coding', () => {
    assert.equal(ana.user, 'Ana');
    assert.equal(bot.user, 'coder-bot');
    for (const caller of [ana, bo, lea, bot]) assert.deepEqual(seen(caller), ALL, caller.user);
  });

  it('blind coding on: each coder sees only their own counts, segments and coding events; the lead sees all; ending it shows all again', async () => {
    await ok(lea, 'set_blind_coding', { enabled: true, lead: 'Lea' });
    // asked in an order that would leak through a shared cache: a blind coder first, then the lead, then the others
    assert.deepEqual(seen(ana), {
      codes: { Belonging: 1, Place: 0 },
      segments: 1,
      source: 1,
      coded_sources: 1,
      total_segments: 1,
      top_codes: ['Belonging 1', 'Place 0'],
      coding_events_by: ['Ana'],
      covered: 10,
      per_coder: ['Ana 1'],
      per_code: ['Belonging 1', 'Place 0'],
      cooccurrences: [],
    });
    assert.deepEqual(seen(lea), ALL);
    assert.deepEqual(seen(bo), {
      codes: { Belonging: 1, Place: 1 },
      segments: 2,
      source: 2,
      coded_sources: 1,
      total_segments: 2,
      top_codes: ['Belonging 1', 'Place 1'],
      coding_events_by: ['Bo'],
      covered: 23,
      per_coder: ['Bo 2'],
      per_code: ['Belonging 1', 'Place 1'],
      cooccurrences: ['Belonging+Place 1'],
    });
    // the agent is one of the blind coders
    assert.deepEqual(seen(bot), {
      codes: { Belonging: 0, Place: 1 },
      segments: 1,
      source: 1,
      coded_sources: 1,
      total_segments: 1,
      top_codes: ['Place 1', 'Belonging 0'],
      coding_events_by: ['coder-bot'],
      covered: 11,
      per_coder: ['coder-bot 1'],
      per_code: ['Place 1', 'Belonging 0'],
      cooccurrences: [],
    });
    // a second read is served from each coder's own cache, still scoped
    assert.deepEqual(seen(ana).codes, { Belonging: 1, Place: 0 });
    assert.deepEqual(seen(lea).codes, ALL.codes);

    // one segment: the coder's own, or SEGMENT_NOT_FOUND as if it did not exist; the lead reads any
    assert.equal(agent.redactFor(ana, builder.segment(anaSegment)).segment_id, anaSegment);
    assert.throws(
      () => agent.redactFor(ana, builder.segment(boSegment)),
      (e: { code?: string }) => e.code === 'SEGMENT_NOT_FOUND',
    );
    assert.throws(
      () => agent.redactFor(bot, builder.segment(anaSegment)),
      (e: { code?: string }) => e.code === 'SEGMENT_NOT_FOUND',
    );
    assert.equal(agent.redactFor(lea, builder.segment(boSegment)).segment_id, boSegment);

    // the same answers when the scope is passed to the builder directly
    assert.deepEqual(agent.readScopeOf(bo), { coder: 'Bo', role: 'researcher' });
    assert.deepEqual(agent.readScopeOf(bot), { coder: 'coder-bot', role: 'agent' });
    assert.equal(agent.readScopeOf(lea), null);
    assert.deepEqual(
      builder.buildStateSummary(agent.readScopeOf(bo)).codes.map((c) => c.segment_count),
      [1, 1],
    );
    assert.throws(
      () => builder.segment(anaSegment, agent.readScopeOf(bo)),
      (e: { code?: string }) => e.code === 'SEGMENT_NOT_FOUND',
    );
    // data the builder did not make passes unchanged
    const other = { segments: 4 };
    assert.equal(inScope(other, agent.readScopeOf(bo)), other);

    await ok(lea, 'end_blind_coding', {});
    for (const caller of [ana, bo, lea, bot]) assert.deepEqual(seen(caller), ALL, caller.user);
    assert.equal(agent.redactFor(ana, builder.segment(boSegment)).segment_id, boSegment);
  });
});
