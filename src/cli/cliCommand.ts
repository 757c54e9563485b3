import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { isToolError, ToolError } from '../core/errors';
import { cliExitOf } from '../agent/errorClasses';
import type { Logger } from '../core/log';
import type { AgentContext } from '../agent/agentContext';
import { CLIENT_TYPES, type ClientType } from '../agent/sessions';
import { LocalCliBackend, runLineProtocol, type CliBackend } from '../adapters/cli/cliAdapter';
import { ForwardCliBackend } from '../adapters/cli/forwardBackend';
import { createAgentContextFor, createPipeline, headlessHost, openProjectHandle, type ProjectHandle } from './compose';
import { loadTokens, readDiscovery, type DiscoveryInfo } from './credentials';
import { OWNED_SURFACES } from './mcpCommand';
import { startSurfaces, type RunningSurfaces } from './surfaces';

/** The usage lines of `marginalia cli` (main.ts prints them in its help). */
export const CLI_USAGE = `  marginalia cli --project PATH [--client NAME] [--client-type TYPE]
      The CLI adapter: one JSON command per stdin line ({"id":1,"op":"call","tool":"list_codes","arguments":{}};
      ops call, subscribe, unsubscribe, approve, reject, list_tools, list_approvals, heartbeat), one JSON
      response per stdout line, events as JSON lines on stderr. MARGINALIA_PROJECT may give PATH. When a
      server owns the project, commands are forwarded to it; otherwise the CLI owns it and serves HTTP on
      a free 127.0.0.1 port meanwhile (so the researcher can approve). Authenticates with
      MARGINALIA_REVIEWER_TOKEN (the researcher) or MARGINALIA_TOKEN (an agent), else the install's agent token.`;

/** Writes one JSON line to stderr (the CLI adapter's stderr carries only JSON lines). */
function stderrJson(value: Record<string, unknown>): void {
  process.stderr.write(`${JSON.stringify(value)}\n`);
}

/** A logger that writes warnings and errors as `{"type":"log",...}` JSON lines on stderr (info is dropped). */
function jsonLogger(): Logger {
  return {
    info: () => {},
    warn: (message) => stderrJson({ type: 'log', level: 'warn', message }),
    error: (message, err) => stderrJson({ type: 'log', level: 'error', message: err instanceof Error ? `${message}: ${err.message}` : message }),
  };
}

/**
 * The token the CLI presents and the role it claims: `MARGINALIA_REVIEWER_TOKEN` (the researcher) when
 * set, else `MARGINALIA_TOKEN` (an agent), else the install's agent token (`fallback`).
 */
export function cliToken(env: NodeJS.ProcessEnv, fallback: string): { token: string; role: 'agent' | 'researcher' } {
  if (env.MARGINALIA_REVIEWER_TOKEN) return { token: env.MARGINALIA_REVIEWER_TOKEN, role: 'researcher' };
  return { token: env.MARGINALIA_TOKEN || fallback, role: 'agent' };
}

/** Waits until everything written to stdout and stderr has been handed to the OS. */
function flushed(): Promise<void> {
  const one = (s: NodeJS.WriteStream) => new Promise<void>((resolve) => (s.writableLength === 0 ? resolve() : s.write('', () => resolve())));
  return Promise.all([one(process.stdout), one(process.stderr)]).then(() => undefined);
}

/**
 * Runs `marginalia cli` (see {@link CLI_USAGE}; `version` is the product version its HTTP server reports) until stdin ends, then ends the session, checkpoints a
 * project it opened itself, and exits 0. When the discovery file names a live owner of the project, every
 * command is forwarded to the owner's HTTP server (its trust layer applies and the researcher sees the
 * calls); otherwise the process opens the project (taking its lock) with an agent context of its own and,
 * while it runs, serves the HTTP tool interface (with REST and SSE) on a free 127.0.0.1 port with a
 * discovery file, so the researcher can approve what the CLI's agent asks for and other processes
 * (`marginalia mcp`, another `marginalia cli`) forward to it instead of finding the project locked.
 * The first stderr line is `{"type":"ready","mode":"local"|"forward",...}` (local: with `url`).
 * Errors (a `{"type":"error"}` line, exit code from src/agent/errorClasses.ts: 2 refused, 3 retry later): INVALID_ARGUMENTS
 * (usage), NO_PROJECT, PROJECT_LOCKED, UNAUTHORIZED, INVALID_CONFIG (2); SESSION_LIMIT, RATE_LIMITED (3).
 */
export async function runCli(argv: string[], version: string): Promise<void> {
  const { abs, clientName, clientType } = cliArgs(argv);
  const logger = jsonLogger();
  let backend: CliBackend | undefined;
  let owned: OwnedCli | undefined;
  try {
    const found = await connectOrOpen(abs, clientName, clientType, logger);
    backend = found.backend;
    if (found.project) {
      owned = await ownCli(found.project, abs, { clientName, clientType, version, logger });
      backend = owned.backend;
    }
    if (!backend) throw new ToolError('NO_PROJECT', `Could not open ${abs}`);
    const active = backend;
    let stopping = false;
    const stop = () => {
      if (stopping) return;
      stopping = true;
      // SIGINT/SIGTERM end input like EOF does
      process.stdin.destroy();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
    await runLineProtocol(process.stdin, active, process.stdout, process.stderr).catch((e: unknown) => {
      if (!stopping) throw e;
    });
  } catch (e) {
    if (isToolError(e)) {
      stderrJson({ type: 'error', error: e.message, error_code: e.code });
      await backend?.close().catch(() => undefined);
      await owned?.close();
      await flushed();
      process.exit(cliExitOf(e.code));
    }
    throw e;
  }
  await backend.close();
  // checkpoint: everything acknowledged is in the project file, the journal is empty
  await owned?.close();
  await flushed();
  process.exit(0);
}

/** The arguments of `marginalia cli`. Errors: INVALID_ARGUMENTS. */
function cliArgs(argv: string[]): { abs: string; clientName: string; clientType: ClientType } {
  const { values } = parseArgs({
    args: argv,
    options: { project: { type: 'string' }, client: { type: 'string' }, 'client-type': { type: 'string' } },
    strict: true,
  });
  const projectPath = values.project ?? process.env.MARGINALIA_PROJECT;
  if (!projectPath) throw new ToolError('INVALID_ARGUMENTS', 'cli needs --project PATH (or MARGINALIA_PROJECT)');
  const types = CLIENT_TYPES.filter((t) => t !== 'LOCAL_UI');
  const clientType = (values['client-type'] ?? 'CUSTOM') as ClientType;
  if (!(types as readonly string[]).includes(clientType)) throw new ToolError('INVALID_ARGUMENTS', `--client-type must be one of ${types.join(', ')}`);
  return { abs: path.resolve(projectPath), clientName: (values.client ?? 'cli').slice(0, 100), clientType };
}

/**
 * A backend forwarding to the live owner of `abs` (its discovery file), or else the project opened here (its lock
 * taken); an owner that started meanwhile is forwarded to after all. Errors: NO_PROJECT, PROJECT_LOCKED, UNAUTHORIZED.
 */
async function connectOrOpen(
  abs: string,
  clientName: string,
  clientType: ClientType,
  logger: Logger,
): Promise<{ backend?: CliBackend; project?: ProjectHandle }> {
  /** Forwards to `owner`; undefined when it does not answer (it died after writing its discovery file). */
  const forward = async (owner: DiscoveryInfo): Promise<CliBackend | undefined> => {
    const { token, role } = cliToken(process.env, owner.token);
    try {
      const b = await ForwardCliBackend.connect({ url: owner.url, token, clientName, clientType });
      stderrJson({ type: 'ready', mode: 'forward', project: abs, owner: { url: owner.url, pid: owner.pid }, session_id: b.sessionId || null, role });
      return b;
    } catch (e) {
      if (!(isToolError(e) && e.code === 'NO_PROJECT')) throw e;
      logger.warn(`the owner at ${owner.url} does not answer; opening the project directly`);
      return undefined;
    }
  };
  const owner = readDiscovery(abs);
  const backend = owner ? await forward(owner) : undefined;
  if (backend) return { backend };
  try {
    return { project: await openProjectHandle(abs, { create: false, logger }) };
  } catch (e) {
    const late = isToolError(e) && e.code === 'PROJECT_LOCKED' ? readDiscovery(abs) : undefined;
    const after = late ? await forward(late) : undefined;
    if (!after) throw e;
    return { backend: after };
  }
}

/** The CLI owning its project: the local backend, and close() for everything it started and the project. */
interface OwnedCli {
  backend: CliBackend;
  close(): Promise<void>;
}

/**
 * The CLI owning `project`: an agent context of its own, the surfaces of the one composition it wants while it runs
 * (src/cli/surfaces.ts: the HTTP tool interface with REST and `/mcp`, a discovery file, the sweeper), so the
 * researcher can approve what the CLI's agent asks for and other processes forward to it; and the local backend.
 * The project is closed again when this fails. Errors: INVALID_CONFIG, UNAUTHORIZED, SESSION_LIMIT.
 */
async function ownCli(
  project: ProjectHandle,
  abs: string,
  o: { clientName: string; clientType: ClientType; version: string; logger: Logger },
): Promise<OwnedCli> {
  const tokens = loadTokens();
  const { token, role } = cliToken(process.env, tokens.agent);
  let agent: AgentContext | undefined;
  let running: RunningSurfaces | undefined;
  try {
    agent = createAgentContextFor(abs, { project: () => project, logger: o.logger, tokens });
    const pipeline = createPipeline({ project: () => project, host: headlessHost, logger: o.logger, agent });
    running = await startSurfaces({
      agent,
      pipeline,
      project: () => project,
      projectPath: abs,
      tokens,
      logger: o.logger,
      version: o.version,
      port: 0,
      ...OWNED_SURFACES,
    });
    const backend = new LocalCliBackend({ agent, pipeline, authorization: `Bearer ${token}`, clientName: o.clientName, clientType: o.clientType });
    stderrJson({ type: 'ready', mode: 'local', project: abs, session_id: backend.sessionId, role, url: running.base });
    const [a, r] = [agent, running];
    return {
      backend,
      close: async () => {
        await r.close();
        a.dispose();
        await project.close();
      },
    };
  } catch (e) {
    await running?.close();
    agent?.dispose();
    await project.close();
    throw e;
  }
}
