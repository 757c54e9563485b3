/**
 * The MCP Streamable HTTP endpoint of a host with the ContextBuilder behind its resources (the composition,
 * src/cli/surfaces.ts, mounts it on the HTTP server; `marginalia mcp` also serves its stdio client from the builder).
 */
import type { Logger } from '../core/log';
import type { AgentContext } from '../agent/agentContext';
import type { CallLogSink } from '../agent/kit';
import { ContextBuilder } from '../agent/contextBuilder';
import { createMcpHttpEndpoint, type McpHttpEndpoint } from '../adapters/mcp/mcpHttp';
import type { OpenProject } from '../tools/context';
import { projectInfoReader } from './projectInfo';

/** The MCP endpoint of `marginalia serve` and the ContextBuilder behind its resources. */
export interface ServeMcp {
  readonly endpoint: McpHttpEndpoint;
  readonly context: ContextBuilder;
  dispose(): Promise<void>;
}

/**
 * The MCP Streamable HTTP endpoint for a headless server or the VS Code host: a ContextBuilder over the
 * open project (its research frame from `.marginalia/project.yaml` beside whichever project `project()`
 * returns, else beside `projectPath`) and the `/mcp` endpoint (mount it with
 * `endpoint.mount(app)` in `HttpOptions.extendFirst`). `openAgentToken` is for `--mcp-open` only (conformance
 * runs): requests without a token then act as the agent.
 */
export function createServeMcp(opts: {
  agent: AgentContext;
  project: () => OpenProject | null;
  projectPath: string;
  version: string;
  logger: Logger;
  openAgentToken?: string;
  onCall?: CallLogSink;
}): ServeMcp {
  const context = createMcpContext(opts);
  const endpoint = createMcpHttpEndpoint({
    agent: opts.agent,
    context,
    version: opts.version,
    logger: opts.logger,
    openAuthorization: opts.openAgentToken === undefined ? undefined : `Bearer ${opts.openAgentToken}`,
    onCall: opts.onCall,
  });
  return {
    endpoint,
    context,
    async dispose() {
      await endpoint.dispose();
      context.dispose();
    },
  };
}

/**
 * The ContextBuilder behind the MCP resources and prompts (briefing, state, statistics): over the open project,
 * with its research frame from `.marginalia/project.yaml` beside whichever project `project()` returns (in VS Code
 * it changes while the server runs), else beside `projectPath`. Dispose it when done.
 */
export function createMcpContext(opts: { agent: AgentContext; project: () => OpenProject | null; projectPath: string; logger: Logger }): ContextBuilder {
  const readers = new Map<string, ReturnType<typeof projectInfoReader>>();
  const info = () => {
    const file = opts.project()?.path ?? (opts.projectPath || undefined);
    if (!file) return undefined;
    let read = readers.get(file);
    if (!read) readers.set(file, (read = projectInfoReader(file, opts.logger)));
    return read();
  };
  return new ContextBuilder({ project: opts.project, hub: opts.agent.hub, info });
}
