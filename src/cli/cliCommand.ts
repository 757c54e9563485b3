import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { isToolError, ToolError } from '../core/errors';
import { cliExitOf } from '../agent/errorClasses';
import type { Logger } from '../core/log';
import { CLIENT_TYPES, type ClientType } from '../agent/sessions';
import { LocalCliBackend, runLineProtocol, type CliBackend } from '../adapters/cli/cliAdapter';
import { ForwardCliBackend } from '../adapters/cli/forwardBackend';
import { startHttpServer } from '../adapters/http/httpServer';
import { mountRest } from '../adapters/rest/restAdapter';
import { createAgentContextFor, createPipeline, headlessHost, openProjectHandle, type ProjectHandle } from './compose';
import { loadTokens, readDiscovery, writeDiscovery, type DiscoveryInfo } from './credentials';
import { createServeMcp } from './mcpCommand';

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
  const { values } = parseArgs({
    args: argv,
    options: { project: { type: 'string' }, client: { type: 'string' }, 'client-type': { type: 'string' } },
    strict: true,
  });
  const projectPath = values.project ?? process.env.MARGINALIA_PROJECT;
  if (!projectPath) throw new ToolError('INVALID_ARGUMENTS', 'cli needs --project PATH (or MARGINALIA_PROJECT)');
  const clientName = (values.client ?? 'cli').slice(0, 100);
  const types = CLIENT_TYPES.filter((t) => t !== 'LOCAL_UI');
  const clientType = (values['client-type'] ?? 'CUSTOM') as ClientType;
  if (!(types as readonly string[]).includes(clientType)) throw new ToolError('INVALID_ARGUMENTS', `--client-type must be one of ${types.join(', ')}`);
  const abs = path.resolve(projectPath);
  const logger = jsonLogger();

  let backend: CliBackend | undefined;
  let project: ProjectHandle | undefined;
  let cleanup: () => Promise<void> = async () => {};
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
  try {
    const owner = readDiscovery(abs);
    if (owner) backend = await forward(owner);
    if (!backend) {
      try {
        project = await openProjectHandle(abs, { create: false, logger });
      } catch (e) {
        // an owner that started meanwhile: forward to it after all
        const late = isToolError(e) && e.code === 'PROJECT_LOCKED' ? readDiscovery(abs) : undefined;
        backend = late ? await forward(late) : undefined;
        if (!backend) throw e;
      }
    }
    if (!backend && project) {
      const open = project;
      const tokens = loadTokens();
      const { token, role } = cliToken(process.env, tokens.agent);
      const agent = createAgentContextFor(abs, { project: () => open, logger, tokens });
      const pipeline = createPipeline({ project: () => open, host: headlessHost, logger, agent });
      const sweeper = setInterval(() => {
        agent.sessions.sweep();
        pipeline.sweepApprovals();
      }, 1000);
      sweeper.unref();
      // while the CLI owns the project, the researcher (and other processes: marginalia mcp, another cli) reach it over HTTP
      let rest: { dispose(): void } | undefined;
      const mcp = createServeMcp({ agent, project: () => open, projectPath: abs, version, logger });
      const server = await startHttpServer({
        pipeline,
        port: 0,
        logger,
        version,
        agent,
        extend: (app) => {
          rest = mountRest(app, { agent, pipeline, logger });
          mcp.endpoint.mount(app);
        },
      });
      const url = `http://127.0.0.1:${server.port}`;
      const removeDiscovery = writeDiscovery({
        project: abs,
        pid: process.pid,
        url,
        port: server.port,
        token: tokens.agent,
        mcp_url: `${url}/mcp`,
        started_at: new Date().toISOString(),
      });
      cleanup = async () => {
        clearInterval(sweeper);
        removeDiscovery();
        rest?.dispose();
        await mcp.dispose();
        agent.dispose();
        await server.close();
      };
      backend = new LocalCliBackend({ agent, pipeline, authorization: `Bearer ${token}`, clientName, clientType });
      stderrJson({ type: 'ready', mode: 'local', project: abs, session_id: backend.sessionId, role, url });
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
      await cleanup();
      await project?.close();
      await flushed();
      process.exit(cliExitOf(e.code));
    }
    throw e;
  }
  await backend.close();
  await cleanup();
  // checkpoint: everything acknowledged is in the project file, the journal is empty
  await project?.close();
  await flushed();
  process.exit(0);
}
