import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { isToolError, ToolError } from '../core/errors';
import { stderrLogger, type Logger } from '../core/log';
import type { AgentContext } from '../agent/agentContext';
import { ContextBuilder } from '../agent/contextBuilder';
import { CLIENT_TYPES, type ClientType } from '../agent/sessions';
import { startHttpServer } from '../adapters/http/httpServer';
import { forwardMcpStdio } from '../adapters/mcp/mcpForward';
import { mountRest } from '../adapters/rest/restAdapter';
import { createMcpHttpEndpoint, MCP_PATH, type McpHttpEndpoint } from '../adapters/mcp/mcpHttp';
import { serveMcpStdio } from '../adapters/mcp/mcpStdio';
import type { OpenProject } from '../tools/context';
import { createAgentContextFor, createPipeline, headlessHost, openProjectHandle } from './compose';
import { AgentCredentials } from '../agent/agentCredentials';
import { fileAgentCredentialStorage, loadTokens, readDiscovery, writeDiscovery } from './credentials';
import { projectInfoReader } from './projectInfo';

/** The `marginalia mcp` lines of the usage text. */
export const MCP_USAGE = `  marginalia mcp --project PATH [--create] [--client-type TYPE]
      MCP over stdio for assistants that launch a command (Claude Code, Cursor, ...); MARGINALIA_PROJECT
      may give PATH. When another process owns the project (VS Code or marginalia serve; see its
      discovery file), every MCP message is forwarded to that process's /mcp with MARGINALIA_TOKEN (an
      agent's own credential acts under its name) or else that process's token, so calls pass its trust
      layer and the researcher sees them live. Otherwise this process opens the project
      itself (--create makes a missing one), serves stdio, and also serves HTTP (tools, approvals, /mcp)
      on a free 127.0.0.1 port named in the discovery file. stdout carries only the protocol; logs go
      to stderr. --client-type (or MARGINALIA_CLIENT_TYPE) sets the session's client type
      (ASSISTANT_A_CLI, ASSISTANT_B_CLI, CUSTOM; default CUSTOM).`;

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
 * `endpoint.mount(app)` in `HttpOptions.extend`). `openAgentToken` is for `--mcp-open` only (conformance
 * runs): requests without a token then act as the agent.
 */
export function createServeMcp(opts: {
  agent: AgentContext;
  project: () => OpenProject | null;
  projectPath: string;
  version: string;
  logger: Logger;
  openAgentToken?: string;
  onCall?: (line: string) => void;
}): ServeMcp {
  // the research frame follows the open project (in VS Code it changes while the server runs); projectPath is the fallback
  const readers = new Map<string, ReturnType<typeof projectInfoReader>>();
  const info = () => {
    const file = opts.project()?.path ?? (opts.projectPath || undefined);
    if (!file) return undefined;
    let read = readers.get(file);
    if (!read) readers.set(file, (read = projectInfoReader(file, opts.logger)));
    return read();
  };
  const context = new ContextBuilder({ project: opts.project, hub: opts.agent.hub, info });
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

/** Errors of `marginalia mcp`'s arguments (the caller prints the usage). */
export class McpUsageError extends Error {}

/**
 * Runs `marginalia mcp --project PATH`: forwards to the project's owner when its discovery file names a
 * live process, else owns the project and serves MCP over stdio (and HTTP on a free loopback port, with a
 * discovery file, so further `marginalia mcp` processes and the researcher's reviewer token reach it).
 * Resolves when the client closes stdin, after the project is checkpointed and closed.
 * Errors: McpUsageError (arguments), NO_PROJECT (missing project without --create), PROJECT_LOCKED
 * (another process holds the lock but publishes no discovery file), INVALID_CONFIG.
 */
export async function runMcp(argv: string[], version: string): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: { project: { type: 'string' }, create: { type: 'boolean' }, 'client-type': { type: 'string' } },
    strict: true,
  });
  const projectPath = values.project ?? process.env.MARGINALIA_PROJECT;
  if (!projectPath) throw new McpUsageError('mcp needs --project PATH (or MARGINALIA_PROJECT)');
  const typeArg = values['client-type'] ?? process.env.MARGINALIA_CLIENT_TYPE ?? 'CUSTOM';
  if (!(CLIENT_TYPES as readonly string[]).includes(typeArg) || typeArg === 'LOCAL_UI')
    throw new McpUsageError(`--client-type must be one of ${CLIENT_TYPES.filter((t) => t !== 'LOCAL_UI').join(', ')} (got ${typeArg})`);
  const clientType = typeArg as ClientType;
  const logger = stderrLogger('marginalia-mcp: ');
  const abs = path.resolve(projectPath);

  const owner = readDiscovery(abs);
  if (owner && owner.pid !== process.pid) return forwardTo(owner, logger);

  if (values.create !== true && !fs.existsSync(abs)) throw new ToolError('NO_PROJECT', `${abs} does not exist; pass --create to make a new project there`);
  let project;
  try {
    project = await openProjectHandle(abs, { create: values.create === true, logger });
  } catch (e) {
    // the owner may have started between our look and the lock
    const late = isToolError(e) && e.code === 'PROJECT_LOCKED' ? readDiscovery(abs) : undefined;
    if (late) return forwardTo(late, logger);
    throw e;
  }
  logger.info(`opened project ${project.name} at ${abs}; serving MCP on stdio`);
  // MARGINALIA_TOKEN may be a named agent's own credential (Connect an Agent, `marginalia agent add`): the stdio
  // client then acts as that agent; any other value is the install's own agent token, as in `marginalia serve`
  const envToken = process.env.MARGINALIA_TOKEN || undefined;
  const named = envToken !== undefined && new AgentCredentials(fileAgentCredentialStorage(abs)).identify(envToken) !== null;
  const tokens = loadTokens({ isNamed: () => named });
  let agent: AgentContext;
  try {
    agent = createAgentContextFor(abs, { project: () => project, logger, tokens });
  } catch (e) {
    await project.close();
    throw e;
  }
  const pipeline = createPipeline({ project: () => project, host: headlessHost, logger, agent });
  const mcp = createServeMcp({ agent, project: () => project, projectPath: abs, version, logger, onCall: (l) => logger.info(l) });
  let server;
  // the REST routes too: their event stream (GET /events/stream) is how a `marginalia mcp` forwarding here
  // tells its 2025-era client of resource changes
  let rest: { dispose(): void } | undefined;
  try {
    server = await startHttpServer({
      pipeline,
      port: 0,
      logger,
      version,
      agent,
      onCall: (l) => logger.info(l),
      extend: (app) => {
        mcp.endpoint.mount(app);
        rest = mountRest(app, { agent, pipeline, logger });
      },
    });
  } catch (e) {
    rest?.dispose();
    await mcp.dispose();
    await project.close();
    throw e;
  }
  const base = `http://127.0.0.1:${server.port}`;
  const removeDiscovery = writeDiscovery({
    project: abs,
    pid: process.pid,
    url: base,
    port: server.port,
    token: tokens.agent,
    mcp_url: `${base}${MCP_PATH}`,
    started_at: new Date().toISOString(),
  });
  logger.info(`also serving HTTP at ${base} (approve requests there with the reviewer token: GET ${base}/approvals?status=pending)`);
  const sweeper = setInterval(() => {
    agent.sessions.sweep();
    pipeline.sweepApprovals();
  }, 1000);
  sweeper.unref();
  const stdio = serveMcpStdio({
    agent,
    context: mcp.context,
    version,
    authorization: `Bearer ${named ? envToken : tokens.agent}`,
    clientType,
    logger,
    onCall: (l) => logger.info(l),
  });
  let stopping: Promise<void> | undefined;
  const stop = (why: string) =>
    (stopping ??= (async () => {
      logger.info(`${why}: stopping`);
      clearInterval(sweeper);
      removeDiscovery();
      await stdio.close().catch(() => undefined);
      rest?.dispose();
      await mcp.dispose();
      agent.dispose();
      await server.close();
      await project.close();
      logger.info('checkpointed and closed');
    })());
  process.once('SIGINT', () => void stop('SIGINT').then(() => process.exit(0)));
  process.once('SIGTERM', () => void stop('SIGTERM').then(() => process.exit(0)));
  await stdio.closed;
  await stop('stdin closed');
  process.exit(0);
}

/**
 * Forwards stdio to the owner's `/mcp`. The credential is the agent's own: `MARGINALIA_TOKEN` when set (a named
 * agent's token acts under its name there; a wrong one is refused there, never replaced), else the owner's
 * install token from its discovery file.
 */
async function forwardTo(owner: { pid: number; mcp_url: string; token: string }, logger: Logger): Promise<void> {
  logger.info(`the project is open in process ${owner.pid}; forwarding MCP to ${owner.mcp_url}`);
  const conn = forwardMcpStdio({ url: owner.mcp_url, authorization: `Bearer ${process.env.MARGINALIA_TOKEN || owner.token}`, logger });
  process.once('SIGINT', () => void conn.close().then(() => process.exit(0)));
  process.once('SIGTERM', () => void conn.close().then(() => process.exit(0)));
  await conn.closed;
  process.exit(0);
}
