import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { isToolError, ToolError } from '../core/errors';
import { stderrLogger, type Logger } from '../core/log';
import type { AgentContext } from '../agent/agentContext';
import { CLIENT_TYPES, type ClientType } from '../agent/sessions';
import { forwardMcpStdio } from '../adapters/mcp/mcpForward';
import { serveMcpStdio } from '../adapters/mcp/mcpStdio';
import { createAgentContextFor, createPipeline, headlessHost, openProjectHandle, type ProjectHandle } from './compose';
import { AgentCredentials } from '../agent/agentCredentials';
import { fileAgentCredentialStorage, loadTokens, readDiscovery } from './credentials';
import { createMcpContext } from './serveMcp';
import { startSurfaces, type RunningSurfaces, type SurfaceOptions } from './surfaces';

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

// the /mcp endpoint of every host (src/cli/surfaces.ts composes it); re-exported for the hosts and tests that build one
export { createServeMcp, type ServeMcp } from './serveMcp';

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
  await serveOwned(project, abs, typeArg as ClientType, version, logger);
}

/**
 * `marginalia mcp` owning the project: the surfaces of the one composition (src/cli/surfaces.ts) that this host
 * wants (the HTTP tool interface, REST with its event stream for forwarding 2025-era clients, `/mcp`), with the
 * discovery file and the sweeper, and MCP on stdio. Resolves never: exits when stdin closes or on SIGINT/SIGTERM,
 * after the project is checkpointed and closed. Errors: INVALID_CONFIG; the HTTP server's.
 */
async function serveOwned(project: ProjectHandle, abs: string, clientType: ClientType, version: string, logger: Logger): Promise<void> {
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
  const onCall = (l: string) => logger.info(l);
  let running: RunningSurfaces;
  try {
    running = await startSurfaces({ agent, pipeline, project: () => project, projectPath: abs, tokens, logger, version, port: 0, onCall, ...OWNED_SURFACES });
  } catch (e) {
    agent.dispose();
    await project.close();
    throw e;
  }
  logger.info(`also serving HTTP at ${running.base} (approve requests there with the reviewer token: GET ${running.base}/approvals?status=pending)`);
  // the resources' builder of /mcp, or one of its own when the configuration turned /mcp off
  const context = running.mcp?.context ?? createMcpContext({ agent, project: () => project, projectPath: abs, logger });
  const stdio = serveMcpStdio({ agent, context, version, authorization: `Bearer ${named ? envToken : tokens.agent}`, clientType, logger, onCall });
  let stopping: Promise<void> | undefined;
  const stop = (why: string) =>
    (stopping ??= (async () => {
      logger.info(`${why}: stopping`);
      await stdio.close().catch(() => undefined);
      if (!running.mcp) context.dispose();
      await running.close();
      agent.dispose();
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
 * What `marginalia mcp` and `marginalia cli` serve over HTTP while they own a project (the configuration may turn
 * some off): the tool interface, REST with `GET /events/stream` (how a forwarding `marginalia mcp` tells its
 * 2025-era client of changes) and `/mcp`; with the discovery file and the sweeper of a headless host.
 */
export const OWNED_SURFACES = { surfaces: ['http', 'rest', 'sse', 'mcp'], headless: true } as const satisfies Pick<SurfaceOptions, 'surfaces' | 'headless'>;

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
