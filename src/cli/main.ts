import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { isToolError } from '../core/errors';
import { cliExitOf } from '../agent/errorClasses';
import { stderrLogger } from '../core/log';
import { DEFAULT_PORT } from '../adapters/http/httpServer';
import { announceProject, createAgentContextFor, createPipeline, headlessHost, openProjectHandle } from './compose';
import { loadTokens } from './credentials';
import { researcherCoderName } from './coderName';
import { seedProject } from './seed';
import { MCP_USAGE, McpUsageError, runMcp } from './mcpCommand';
import { startSurfaces, type RunningSurfaces } from './surfaces';
import { CLI_USAGE, runCli } from './cliCommand';
import { CERTS_USAGE, runCerts } from './grpcCommands';
import { AGENT_USAGE, AgentUsageError, runAgent } from './agentCommand';
import { runWatch, WATCH_USAGE, WatchUsageError } from './watchCommand';
import { runSync, SYNC_USAGE, SyncUsageError } from './syncCommand';

/** The version printed by `marginalia --version` and `GET /`. */
export const VERSION = '0.1.0';

const USAGE = `marginalia ${VERSION}: qualitative data analysis for people and agents

Usage:
  marginalia serve --project PATH [--port N] [--host 127.0.0.1] [--seed DIR] [--allow-path DIR ...] [--coder NAME] [--ai-primary]
      Open (or create) the project PATH (.qda) and serve the HTTP tool interface.
      --coder NAME is the researcher's name, recorded on everything done with the reviewer token (default:
      MARGINALIA_CODER, else git's user.name, else the OS user).
      Agents' import and export paths must lie in the project's folder, a folder given with --allow-path
      (repeatable) or one listed in agent_context.allowed_paths (.marginalia/config.yaml); symbolic links
      are followed before the check. The researcher's token may use any path.
      MARGINALIA_PROJECT may give PATH. --seed DIR fills a new, empty project from a sample study
      (DIR/codebook.yaml, DIR/transcripts/*.txt, DIR/codings.yaml).
      Once initialize_version_control has run, changes are snapshotted into .marginalia/history
      --snapshot-debounce-ms N (default 2000) after the last change.
      MARGINALIA_TRANSCRIPTION_ENDPOINT may name a local Whisper-compatible server (e.g.
      http://127.0.0.1:8000) that transcribe_media uses when a media file has no sidecar transcript.
      --grpc-port N (0: a free port) also serves the gRPC adapter with mutual TLS on 127.0.0.1, as does
      agent_context.protocols.grpc.enabled in .marginalia/config.yaml (port protocols.grpc.port);
      --grpc-certs DIR names the certificate folder (default <MARGINALIA_HOME>/certs).
      MCP (Streamable HTTP, protocol revisions 2025-11-25 and 2026-07-28) is served at /mcp with the same
      token. --ai-primary runs in hybrid mode: agents lead and the researcher observes and approves from
      \`marginalia watch\` (qda://project/settings reports mode "hybrid"). --mcp-open (ONLY for the MCP conformance suite, which cannot send a token) lets /mcp requests
      without a token through as the agent; Host and Origin are still checked.
${MCP_USAGE}
${CLI_USAGE}
${CERTS_USAGE}
${AGENT_USAGE}
${WATCH_USAGE}
${SYNC_USAGE}
  marginalia token [--reviewer]
      Print this install's agent token, or with --reviewer the researcher's reviewer token (serve never
      prints it): REVIEWER=$(marginalia token --reviewer).
  marginalia --version
  marginalia --help
`;

/**
 * A line writer that batches: lines written within {@link CALL_LOG_FLUSH_MS} go out in one write (or at
 * once past 16 KB), and whatever is left goes out when the process exits. Writing stderr is synchronous
 * for pipes and files, so one write per call was a sixth of a list_codes HTTP call (bench/run.ts).
 */
export function batchedLineWriter(write: (text: string) => void, flushMs = CALL_LOG_FLUSH_MS): (line: string) => void {
  let pending = '';
  let timer: NodeJS.Timeout | undefined;
  const flush = () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (!pending) return;
    const text = pending;
    pending = '';
    write(text);
  };
  process.once('exit', flush);
  return (line) => {
    pending += `${line}\n`;
    if (pending.length > 16_384) flush();
    else if (!timer) {
      timer = setTimeout(flush, flushMs);
      timer.unref();
    }
  };
}
/** How long a call-log line may wait for others to share its write. */
const CALL_LOG_FLUSH_MS = 25;

/** Runs `marginalia serve`: resolves when the server is up; the process exits on SIGINT/SIGTERM after a checkpoint. */
async function serve(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      project: { type: 'string' },
      port: { type: 'string' },
      host: { type: 'string' },
      seed: { type: 'string' },
      'checkpoint-idle-ms': { type: 'string' },
      'snapshot-debounce-ms': { type: 'string' },
      'grpc-port': { type: 'string' },
      'grpc-certs': { type: 'string' },
      'mcp-open': { type: 'boolean' },
      'allow-path': { type: 'string', multiple: true },
      coder: { type: 'string' },
      'ai-primary': { type: 'boolean' },
    },
    strict: true,
  });
  const projectPath = values.project ?? process.env.MARGINALIA_PROJECT;
  if (!projectPath) throw new UsageError('serve needs --project PATH (or MARGINALIA_PROJECT)');
  const port = values.port === undefined ? DEFAULT_PORT : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--port must be 0..65535 (got ${values.port})`);
  const grpcPortArg = values['grpc-port'] === undefined ? undefined : Number(values['grpc-port']);
  if (grpcPortArg !== undefined && !(Number.isInteger(grpcPortArg) && grpcPortArg >= 0 && grpcPortArg <= 65535))
    throw new UsageError(`--grpc-port must be 0..65535 (got ${values['grpc-port']})`);
  const logger = stderrLogger();
  const abs = path.resolve(projectPath);
  const existed = fs.existsSync(abs);
  const idle = values['checkpoint-idle-ms'] === undefined ? undefined : Number(values['checkpoint-idle-ms']);
  const debounce = values['snapshot-debounce-ms'] === undefined ? undefined : Number(values['snapshot-debounce-ms']);
  if (debounce !== undefined && !(Number.isInteger(debounce) && debounce >= 0))
    throw new UsageError(`--snapshot-debounce-ms must be a whole number of milliseconds (got ${values['snapshot-debounce-ms']})`);
  const project = await openProjectHandle(abs, { create: true, logger, checkpointIdleMs: idle, snapshotDebounceMs: debounce });
  logger.info(`${existed ? 'opened' : 'created'} project ${project.name} at ${abs}`);
  // a local Whisper-compatible server for transcribe_media (the headless counterpart of marginalia.transcription.endpoint)
  const transcriptionEndpoint = process.env.MARGINALIA_TRANSCRIPTION_ENDPOINT?.trim() || undefined;
  const tokens = loadTokens();
  // the researcher's name on everything done with the reviewer token (--coder, MARGINALIA_CODER, git user.name, the OS user)
  const coder = researcherCoderName({ flag: values.coder, cwd: path.dirname(abs) });
  let agent;
  try {
    agent = createAgentContextFor(abs, { project: () => project, logger, tokens, researcherName: () => coder });
  } catch (e) {
    await project.close();
    throw e;
  }
  // folders agents' file paths may use besides the project's folder and agent_context.allowed_paths (src/core/pathPolicy.ts)
  const allowPaths = (values['allow-path'] ?? []).map((p) => path.resolve(p));
  for (const p of allowPaths) if (!fs.existsSync(p)) logger.warn(`--allow-path ${p} does not exist (yet)`);
  // --ai-primary: hybrid mode (issue 14 item 9): agents lead, the researcher observes and approves with `marginalia watch`
  const hybrid = values['ai-primary'] === true;
  agent.mode = hybrid ? 'hybrid' : 'headless';
  const pipeline = createPipeline({
    project: () => project,
    host: { ...headlessHost, ...(hybrid ? { mode: 'hybrid' as const } : {}), transcriptionEndpoint, allowedRoots: () => allowPaths },
    logger,
    agent,
  });
  if (values.seed) {
    const seeded = await seedProject(pipeline, path.resolve(values.seed));
    if (seeded) logger.info(`seeded from ${values.seed}: ${seeded.sources} sources, ${seeded.codes} codes, ${seeded.segments} codings`);
  }
  announceProject(pipeline, project, 'opened', 'serve', coder, logger);
  // every surface the configuration turns on (src/cli/surfaces.ts, the same composition as the extension's);
  // --mcp-open drops the token on /mcp for the conformance suite only
  const callLog = batchedLineWriter((text) => void process.stderr.write(text));
  const mcpOpen = values['mcp-open'] === true;
  if (mcpOpen) logger.warn('--mcp-open: /mcp accepts requests WITHOUT a token (as the agent). Use it only for the MCP conformance suite.');
  let server: RunningSurfaces;
  try {
    server = await startSurfaces({
      agent,
      pipeline,
      project: () => project,
      projectPath: abs,
      tokens,
      logger,
      version: VERSION,
      port,
      host: values.host,
      onCall: callLog,
      grpcPort: grpcPortArg,
      grpcCertDir: values['grpc-certs'],
      mcpOpen,
      // the discovery file (marginalia mcp, cli and watch find this server there) and the one-second sweeper
      headless: true,
    });
  } catch (e) {
    await project.close();
    if ((e as NodeJS.ErrnoException).code === 'EADDRINUSE')
      throw new UsageError(`Port ${port} is in use. Stop the other server or pass --port N (0 picks a free port).`);
    if ((e as Error).message.startsWith('gRPC')) throw new UsageError(`${(e as Error).message}. Pass --grpc-port N (0 picks a free port).`);
    throw e;
  }
  // handlers first: a client that stops the server as soon as it reads the banner still gets a checkpoint
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info(`${signal}: stopping`);
    announceProject(pipeline, project, 'closed', 'serve', coder, logger);
    await server.close();
    agent.dispose();
    await project.close();
    logger.info('checkpointed and closed; bye');
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
  printBanner(server, project.name, pipeline.listTools().length, tokens.agent, hybrid ? abs : undefined);
}

/**
 * What `marginalia serve` prints on stdout once it listens: where it serves (the first line, which tests and scripts
 * wait for), the agent token, MCP and the surfaces on, hybrid mode (`hybridProject`: the project path), and curl
 * examples for an agent and for the researcher.
 */
function printBanner(server: RunningSurfaces, projectName: string, toolCount: number, agentToken: string, hybridProject: string | undefined): void {
  const auth = `-H 'Authorization: Bearer ${agentToken}'`;
  const json = `-H 'Content-Type: application/json'`;
  if (server.grpcPort !== undefined)
    process.stdout.write(`gRPC (mutual TLS) at 127.0.0.1:${server.grpcPort} (client certificates: marginalia certs --client NAME --role agent|researcher)\n`);
  process.stdout.write(
    `Marginalia is serving "${projectName}" at ${server.base} (${toolCount} tools). Ctrl+C stops it.\n\n` +
      `Agent token:    ${agentToken}\n` +
      `Reviewer token: not shown (the researcher's: approves what agents propose; do not give it to agents). \`marginalia token --reviewer\` prints it.\n` +
      (server.surfaces.includes('mcp')
        ? `MCP:            ${server.base}/mcp  (Streamable HTTP, MCP 2025-11-25 and 2026-07-28; same Authorization header)\n`
        : '') +
      `Surfaces:       ${server.surfaces.join(', ')} (agent_context.protocols in .marginalia/config.yaml)\n` +
      (hybridProject
        ? `Mode:           hybrid (--ai-primary): watch agents and decide their requests with \`marginalia watch --project ${hybridProject}\`\n`
        : '') +
      `\n` +
      `Try (as an agent):\n` +
      `  curl -s ${server.base}/tools ${auth}\n` +
      `  curl -s -X POST ${server.base}/tools/get_project_context ${auth} ${json} -d '{"arguments":{}}'\n` +
      `  curl -s -X POST ${server.base}/tools/list_codes ${auth} ${json} -d '{"arguments":{}}'\n` +
      `  curl -s -X POST ${server.base}/tools/read_source_content ${auth} ${json} -d '{"arguments":{"source_id":1,"max_length":400}}'\n` +
      `  curl -s -X POST ${server.base}/tools/create_code ${auth} ${json} -d '{"arguments":{"name":"Hope","color":"#59A14F"}}'   # waits for approval (202)\n` +
      `Then, as the researcher:\n` +
      `  REVIEWER=$(npx marginalia token --reviewer)\n` +
      `  curl -s ${server.base}/approvals?status=pending -H "Authorization: Bearer $REVIEWER"\n` +
      `  curl -s -X POST ${server.base}/approvals/REQUEST_ID/approve -H "Authorization: Bearer $REVIEWER" ${json} -d '{}'\n`,
  );
}

class UsageError extends Error {}

/**
 * `marginalia token [--reviewer]`: prints this install's agent token, or with --reviewer the researcher's
 * reviewer token (never printed by `serve`), followed by a newline, for `$(marginalia token --reviewer)`.
 * Tokens come from MARGINALIA_TOKEN / MARGINALIA_REVIEWER_TOKEN or <MARGINALIA_HOME>/credentials.json.
 */
function printToken(argv: string[]): void {
  const { values } = parseArgs({ args: argv, options: { reviewer: { type: 'boolean', default: false } }, strict: true });
  const tokens = loadTokens();
  process.stdout.write(`${values.reviewer ? tokens.reviewer : tokens.agent}\n`);
}

/** Entry point of the `marginalia` command. */
export async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  try {
    if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
      process.stdout.write(USAGE);
      return;
    }
    if (command === '--version' || command === '-v') {
      process.stdout.write(`${VERSION}\n`);
      return;
    }
    if (command === 'serve') return await serve(rest);
    if (command === 'mcp') return await runMcp(rest, VERSION);
    if (command === 'cli') return await runCli(rest, VERSION);
    if (command === 'certs') return runCerts(rest);
    if (command === 'token') return printToken(rest);
    if (command === 'agent') return runAgent(rest);
    if (command === 'watch') return await runWatch(rest);
    if (command === 'sync') return await runSync(rest);
    throw new UsageError(`unknown command "${command}"`);
  } catch (e) {
    if (
      e instanceof UsageError ||
      e instanceof McpUsageError ||
      e instanceof AgentUsageError ||
      e instanceof WatchUsageError ||
      e instanceof SyncUsageError ||
      isToolError(e) ||
      (e as { code?: string }).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION'
    ) {
      // a ToolError names its code (e.g. INVALID_CONFIG, PROJECT_LOCKED) so scripts can tell failures apart
      process.stderr.write(
        `marginalia: ${isToolError(e) ? `${e.code}: ` : ''}${(e as Error).message}${e instanceof UsageError || e instanceof McpUsageError || e instanceof AgentUsageError ? `\n\n${USAGE}` : ''}\n`,
      );
      process.exit(isToolError(e) ? cliExitOf(e.code) : 2);
    }
    throw e;
  }
}
