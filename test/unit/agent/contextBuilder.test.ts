/**
 * The Context Builder and State Cache of the agent-context spec (section 1): the project briefing of
 * section 2 built from the project and its stored events, the state summary, statistics and
 * co-occurrences, and a cache that every published event invalidates.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { AgentContext } from '../../../src/agent/agentContext';
import { ContextBuilder } from '../../../src/agent/contextBuilder';
import type { Caller } from '../../../src/agent/pipeline';
import { ALL_TOOLS, createPipeline, headlessHost, openProjectHandle, type ProjectHandle } from '../../../src/cli/compose';
import { silentLogger } from '../../../src/core/log';

const TOKENS = { agent: 'agent-token-context-builder', reviewer: 'reviewer-token-context-builder' };

describe('agent/contextBuilder', () => {
  let dir: string;
  let handle: ProjectHandle | null;
  let agent: AgentContext;
  let researcher: Caller;
  let builder: ContextBuilder;
  let info: { description?: string; research_questions?: string[]; methodology?: string } | undefined;

  const ok = async (tool: string, args: Record<string, unknown>) => {
    const out = await agent.call(researcher, tool, args);
    if (!out.envelope.success) assert.fail(`${tool}: ${out.envelope.error_code} ${out.envelope.error}`);
    return out.envelope.data as any;
  };

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'marginalia-context-'));
    const h = await openProjectHandle(path.join(dir, 'study.qda'), { create: true, checkpointIdleMs: 0 });
    handle = h;
    agent = new AgentContext({ tools: ALL_TOOLS, project: () => handle, tokens: TOKENS, logger: silentLogger });
    createPipeline({ project: () => handle, host: headlessHost, logger: silentLogger, agent, embeddings: null });
    researcher = agent.openSession({ authorization: `Bearer ${TOKENS.reviewer}`, client_type: 'REST_CLIENT', client_name: 'researcher' }).caller;
    info = undefined;
    builder = new ContextBuilder({ project: () => handle, hub: agent.hub, info: () => info });
  });

  afterEach(async () => {
    builder.dispose();
    agent.dispose();
    const h = handle;
    handle = null;
    await h?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('fails with NO_PROJECT when no project is open', async () => {
    const h = handle;
    handle = null;
    assert.throws(() => builder.buildProjectBriefing(), /No project is open/);
    assert.throws(
      () => builder.buildStateSummary(),
      (e: { code?: string }) => e.code === 'NO_PROJECT',
    );
    handle = h;
  });

  it('builds the briefing of an empty project with empty defaults for the research frame', () => {
    const b = builder.buildProjectBriefing();
    assert.deepEqual(b, {
      project_name: 'study',
      description: '',
      research_questions: [],
      methodology: '',
      coding_progress: { total_sources: 0, coded_sources: 0, total_codes: 0, total_segments: 0 },
      code_summary: { top_codes: [], recent_codes: [] },
      recent_activity: [],
    });
  });

  it('fills the briefing from the project, the research frame and the stored events (newest first)', async () => {
    info = { description: 'Why people garden', research_questions: ['Q1?', 'Q2?'], methodology: 'Thematic analysis' };
    const s1 = (await ok('add_text_source', { name: 'one.txt', content: 'alpha beta gamma delta' })).source_id;
    await ok('add_text_source', { name: 'two.txt', content: 'uncoded text' });
    const c1 = (await ok('create_code', { name: 'Alpha', color: '#000000' })).code_id;
    const c2 = (await ok('create_code', { name: 'Beta', color: '#000000' })).code_id;
    await ok('batch_apply_codes', {
      operations: [
        { code_id: c1, source_id: s1, start_position: 0, end_position: 5 },
        { code_id: c2, source_id: s1, start_position: 0, end_position: 10 },
        { code_id: c2, source_id: s1, start_position: 11, end_position: 16 },
      ],
    });
    const b = builder.buildProjectBriefing();
    assert.equal(b.description, 'Why people garden');
    assert.deepEqual(b.research_questions, ['Q1?', 'Q2?']);
    assert.equal(b.methodology, 'Thematic analysis');
    assert.deepEqual(b.coding_progress, { total_sources: 2, coded_sources: 1, total_codes: 2, total_segments: 3 });
    assert.deepEqual(b.code_summary.top_codes, [
      { name: 'Beta', count: 2 },
      { name: 'Alpha', count: 1 },
    ]);
    assert.deepEqual([...b.code_summary.recent_codes].sort(), ['Alpha', 'Beta']);
    const first = b.recent_activity[0]!;
    assert.equal(first.action, 'coding.segment_coded');
    assert.equal(first.source, 'one.txt');
    assert.ok(first.code === 'Alpha' || first.code === 'Beta');
    assert.equal(first.by, 'researcher');
    assert.ok(b.recent_activity.some((a) => a.action === 'coding.code_created' && a.code === 'Alpha'));
    assert.ok(b.recent_activity.some((a) => a.action === 'source.imported' && a.source === 'two.txt'));
    assert.ok(!b.recent_activity.some((a) => a.action.startsWith('session.')));

    const stats = builder.buildStatistics();
    assert.deepEqual(stats.coverage, {
      coded_sources: 1,
      uncoded_sources: 1,
      coded_code_points: 15,
      text_code_points: 22 + 12,
      coded_ratio: Math.round((15 / 34) * 10_000) / 10_000,
    });
    assert.deepEqual(stats.segments_per_coder, [{ owner: 'researcher', segments: 3 }]);
    assert.deepEqual(
      builder.cooccurrences().map((p) => [p.code_a.name, p.code_b.name, p.count, p.sources]),
      [['Alpha', 'Beta', 1, 1]],
      'Alpha [0,5) overlaps Beta [0,10) but not Beta [11,16)',
    );
    const seg = handle!.repo.listSegmentsForCode(c2)[0]!;
    assert.deepEqual(
      { ...builder.segment(seg.segment_id), created_at: undefined },
      { ...builder.segment(seg.segment_id), code_name: 'Beta', source_name: 'one.txt', text: 'alpha beta', created_at: undefined },
    );
    assert.throws(
      () => builder.segment(9999),
      (e: { code?: string }) => e.code === 'SEGMENT_NOT_FOUND',
    );
  });

  it('caches summaries until an event invalidates them', async () => {
    const a = builder.buildStateSummary();
    assert.equal(builder.buildStateSummary(), a, 'the same object while nothing changed');
    const before = builder.invalidations;
    await ok('create_code', { name: 'New', color: '#000000' });
    assert.ok(builder.invalidations > before, 'the event hub invalidated the cache');
    const b = builder.buildStateSummary();
    assert.notEqual(b, a);
    assert.equal(b.counts.codes, 1);
    assert.equal(b.codes[0]?.name, 'New');
    assert.ok(b.last_event_seq > a.last_event_seq);
  });

  it('never serves a stale summary even when an event has not reached it (it checks the last stored sequence)', async () => {
    const quiet = new ContextBuilder({ project: () => handle });
    try {
      assert.equal(quiet.buildStateSummary().counts.codes, 0);
      await ok('create_code', { name: 'Unseen', color: '#000000' });
      assert.equal(quiet.invalidations, 0, 'no hub: nothing told it');
      assert.equal(quiet.buildStateSummary().counts.codes, 1);
    } finally {
      quiet.dispose();
    }
  });

  it('rebuilds the briefing when the research frame changes', () => {
    assert.equal(builder.buildProjectBriefing().methodology, '');
    info = { methodology: 'Grounded theory' };
    assert.equal(builder.buildProjectBriefing().methodology, 'Grounded theory');
  });
});
