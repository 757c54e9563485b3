/**
 * The research frame of the project briefing (issue 13, item 6): what update_project_briefing stores in the
 * project wins over `.marginalia/project.yaml` (the `info` reader) field by field; a field never saved comes
 * from the file; the cached briefing follows a save at once (project.briefing_updated invalidates it); the
 * stored frame is in the project file after a close and reopen. Real sql.js project on disk, real pipeline.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { AgentContext } from '../../../src/agent/agentContext';
import { ContextBuilder, researchFrame } from '../../../src/agent/contextBuilder';
import type { Caller } from '../../../src/agent/pipeline';
import { ALL_TOOLS, createPipeline, headlessHost, openProjectHandle, type ProjectHandle } from '../../../src/cli/compose';
import { silentLogger } from '../../../src/core/log';

const TOKENS = { agent: 'agent-token-briefing-frame', reviewer: 'reviewer-token-briefing-frame' };

describe('agent/contextBuilder: the stored research frame', () => {
  let dir: string;
  let file: string;
  let handle: ProjectHandle | null;
  let agent: AgentContext;
  let researcher: Caller;
  let builder: ContextBuilder;
  const fromFile = { description: 'From the file', research_questions: ['File question?'], methodology: 'File method' };

  const open = async (create: boolean) => {
    handle = await openProjectHandle(file, { create, checkpointIdleMs: 0 });
    agent = new AgentContext({ tools: ALL_TOOLS, project: () => handle, tokens: TOKENS, logger: silentLogger });
    createPipeline({ project: () => handle, host: headlessHost, logger: silentLogger, agent, embeddings: null });
    researcher = agent.openSession({ authorization: `Bearer ${TOKENS.reviewer}`, client_type: 'REST_CLIENT', client_name: 'researcher' }).caller;
    builder = new ContextBuilder({ project: () => handle, hub: agent.hub, info: () => fromFile });
  };
  const close = async () => {
    builder.dispose();
    agent.dispose();
    const h = handle;
    handle = null;
    await h?.close();
  };

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'marginalia-briefing-frame-'));
    file = path.join(dir, 'study.qda');
    await open(true);
  });

  afterEach(async () => {
    await close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('researchFrame: stored fields win one by one; absent or mistyped fields are empty', () => {
    assert.deepEqual(researchFrame(undefined, undefined), { description: '', research_questions: [], methodology: '' });
    assert.deepEqual(researchFrame({ methodology: '' }, fromFile), { description: 'From the file', research_questions: ['File question?'], methodology: '' });
    assert.deepEqual(researchFrame({ research_questions: ['Mine?'] }, { description: 7 as unknown as string }), {
      description: '',
      research_questions: ['Mine?'],
      methodology: '',
    });
  });

  it('a save shows in the cached briefing at once; fields never saved still come from the file; it survives a reopen', async () => {
    assert.deepEqual(builder.buildProjectBriefing().research_questions, ['File question?'], 'the file before any save');
    const before = builder.invalidations;
    const out = await agent.call(researcher, 'update_project_briefing', { research_questions: ['Why do people stay?', 'Who decides?'] });
    assert.ok(out.envelope.success, JSON.stringify(out.envelope));
    await new Promise((r) => setImmediate(r));
    assert.ok(builder.invalidations > before, 'project.briefing_updated invalidated the cache');
    const b = builder.buildProjectBriefing();
    assert.deepEqual([b.description, b.research_questions, b.methodology], ['From the file', ['Why do people stay?', 'Who decides?'], 'File method']);
    await close();
    await open(false);
    assert.deepEqual(builder.buildProjectBriefing().research_questions, ['Why do people stay?', 'Who decides?'], 'stored in the project file');
  });
});
