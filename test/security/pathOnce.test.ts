/**
 * Every agent path argument is resolved once per call (issue 17, item 2): the pipeline builds one path policy
 * per call (src/agent/pipeline.ts), its check before the trust decision, the real-path substitution before the
 * tool runs and export_data's own output rules (src/exchange/exports.ts checkOutputPath) share that policy's
 * resolution (src/core/pathPolicy.ts PathPolicy.realPath). Counted on fs.realpathSync.native, which
 * realPathOf resolves with, on a real sql.js project through an agent session.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { AgentContext } from '../../src/agent/agentContext';
import type { Caller, ToolPipeline } from '../../src/agent/pipeline';
import { ALL_TOOLS, createPipeline, headlessHost, openProjectHandle, type ProjectHandle } from '../../src/cli/compose';
import { silentLogger } from '../../src/core/log';
import { tmp } from './stack';

const TOKENS = { agent: 'agent-token-for-path-once-tests', reviewer: 'reviewer-token-for-path-once-tests' };

describe('security: each agent path is resolved once per call', () => {
  let dir: string;
  let handle: ProjectHandle;
  let agentContext: AgentContext;
  let pipeline: ToolPipeline;
  let agent: Caller;
  let lookups: string[];
  let original: typeof fs.realpathSync.native;

  beforeEach(async () => {
    dir = fs.realpathSync(tmp('marginalia-sec-once-'));
    handle = await openProjectHandle(path.join(dir, 'study.qda'), { create: true, checkpointIdleMs: 0 });
    agentContext = new AgentContext({
      tools: ALL_TOOLS,
      project: () => handle,
      tokens: TOKENS,
      logger: silentLogger,
      configText: 'agent_context:\n  trust:\n    overrides:\n      export_data: auto\n',
    });
    pipeline = createPipeline({ project: () => handle, host: headlessHost, logger: silentLogger, agent: agentContext, embeddings: null });
    agent = agentContext.openSession({ authorization: `Bearer ${TOKENS.agent}`, client_type: 'REST_CLIENT', client_name: 'path-once' }).caller;
    const researcher = agentContext.openSession({ authorization: `Bearer ${TOKENS.reviewer}`, client_type: 'REST_CLIENT', client_name: 'researcher' }).caller;
    const made = await pipeline.invoke('create_code', { name: 'Water' }, researcher);
    assert.ok(made.envelope.success, JSON.stringify(made.envelope));
    lookups = [];
    original = fs.realpathSync.native;
    fs.realpathSync.native = ((p: fs.PathLike) => {
      lookups.push(String(p));
      return original(p);
    }) as typeof fs.realpathSync.native;
  });

  afterEach(async () => {
    fs.realpathSync.native = original;
    agentContext.dispose();
    await handle.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('export_data: the output path (an existing file and a new one) is looked up once, by the pipeline, and written where it was checked', async () => {
    const existing = path.join(dir, 'codebook.txt');
    fs.writeFileSync(existing, 'old');
    for (const target of [existing, path.join(dir, 'new-codebook.txt')]) {
      lookups = [];
      const out = await pipeline.invoke('export_data', { format: 'codebook', output_path: target }, agent);
      assert.ok(out.envelope.success, JSON.stringify(out.envelope));
      assert.equal(
        lookups.filter((p) => p === target).length,
        1,
        `${target} looked up ${lookups.filter((p) => p === target).length} times: ${lookups.join(', ')}`,
      );
      assert.equal((out.envelope as { data: { output_path: string } }).data.output_path, target);
      assert.match(fs.readFileSync(target, 'utf8'), /Water/);
    }
  });

  it('a refused path is looked up once and nothing is written', async () => {
    const outside = fs.realpathSync(tmp('marginalia-sec-once-outside-'));
    try {
      fs.symlinkSync(outside, path.join(dir, 'elsewhere'));
      const target = path.join(dir, 'elsewhere', 'codebook.txt');
      const out = await pipeline.invoke('export_data', { format: 'codebook', output_path: target }, agent);
      assert.equal(!out.envelope.success && out.envelope.error_code, 'EXPORT_FAILED');
      assert.equal(lookups.filter((p) => p === target).length, 1, lookups.join(', '));
      assert.ok(!fs.existsSync(path.join(outside, 'codebook.txt')));
    } finally {
      fs.rmSync(outside, { recursive: true, force: true });
    }
  });
});
