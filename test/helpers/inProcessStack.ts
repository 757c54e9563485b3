/**
 * The whole tool stack in the test's own process: a new project file on disk (sql.js), the agent layer with the
 * tests' tokens (AGENT_TOKEN, REVIEWER_TOKEN), the one pipeline and the real HTTP server on 127.0.0.1 (port 0).
 * For tests that call over HTTP as an agent and also read the store or the pipeline directly.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { startHttpServer } from '../../src/adapters/http/httpServer';
import { createAgentContextFor, createPipeline, headlessHost, openProjectHandle, type ProjectHandle } from '../../src/cli/compose';
import { silentLogger } from '../../src/core/log';
import { AGENT_TOKEN, REVIEWER_TOKEN, tmpDir } from './serverProcess';

/** A running {@link startInProcessStack}: its parts, the server's base URL (`http://127.0.0.1:PORT`) and `close`. */
export interface InProcessStack {
  dir: string;
  handle: ProjectHandle;
  agent: ReturnType<typeof createAgentContextFor>;
  pipeline: ReturnType<typeof createPipeline>;
  base: string;
  /** Stops the server, the agent layer and the project, and removes the folder. */
  close(): Promise<void>;
}

/** Starts {@link InProcessStack} on a new project `p.qda` in a new temporary folder named with `prefix`. */
export async function startInProcessStack(prefix: string): Promise<InProcessStack> {
  const dir = tmpDir(prefix);
  const file = path.join(dir, 'p.qda');
  const handle = await openProjectHandle(file, { create: true, logger: silentLogger });
  const agent = createAgentContextFor(file, { project: () => handle, logger: silentLogger, tokens: { agent: AGENT_TOKEN, reviewer: REVIEWER_TOKEN } });
  const pipeline = createPipeline({ project: () => handle, host: headlessHost, logger: silentLogger, agent, embeddings: null });
  const server = await startHttpServer({ pipeline, port: 0, logger: silentLogger, version: 'test', agent });
  return {
    dir,
    handle,
    agent,
    pipeline,
    base: `http://127.0.0.1:${server.port}`,
    close: async () => {
      await server.close();
      agent.dispose();
      await handle.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
