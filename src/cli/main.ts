import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { isToolError } from '../core/errors';
import type { Logger } from '../core/log';
import { startHttpServer, DEFAULT_PORT } from '../adapters/http/httpServer';
import { createPipeline, headlessHost, openProjectHandle } from './compose';
import { seedProject } from './seed';

/** The version printed by `marginalia --version` and `GET /`. */
export const VERSION = '0.1.0';

const USAGE = `marginalia ${VERSION}: qualitative data analysis for people and agents

Usage:
  marginalia serve --project PATH [--port N] [--host 127.0.0.1] [--seed DIR]
      Open (or create) the project PATH (.qda) and serve the HTTP tool interface.
      MARGINALIA_PROJECT may give PATH. --seed DIR fills a new, empty project from a sample study
      (DIR/codebook.yaml, DIR/transcripts/*.txt, DIR/codings.yaml).
  marginalia --version
  marginalia --help
`;

function stderrLogger(): Logger {
  const line = (level: string, msg: string) => process.stderr.write(`${new Date().toISOString()} ${level} ${msg}\n`);
  return {
    info: (m) => line('info', m),
    warn: (m) => line('warn', m),
    error: (m, e) => line('error', e instanceof Error ? `${m}: ${e.stack ?? e.message}` : m),
  };
}

/** Runs `marginalia serve`: resolves when the server is up; the process exits on SIGINT/SIGTERM after a checkpoint. */
async function serve(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: { project: { type: 'string' }, port: { type: 'string' }, host: { type: 'string' }, seed: { type: 'string' }, 'checkpoint-idle-ms': { type: 'string' } },
    strict: true,
  });
  const projectPath = values.project ?? process.env.MARGINALIA_PROJECT;
  if (!projectPath) throw new UsageError('serve needs --project PATH (or MARGINALIA_PROJECT)');
  const port = values.port === undefined ? DEFAULT_PORT : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--port must be 0..65535 (got ${values.port})`);
  const logger = stderrLogger();
  const abs = path.resolve(projectPath);
  const existed = fs.existsSync(abs);
  const idle = values['checkpoint-idle-ms'] === undefined ? undefined : Number(values['checkpoint-idle-ms']);
  const project = await openProjectHandle(abs, { create: true, logger, checkpointIdleMs: idle });
  logger.info(`${existed ? 'opened' : 'created'} project ${project.name} at ${abs}`);
  const pipeline = createPipeline({ project: () => project, host: headlessHost, logger });
  if (values.seed) {
    const seeded = await seedProject(pipeline, path.resolve(values.seed));
    if (seeded) logger.info(`seeded from ${values.seed}: ${seeded.sources} sources, ${seeded.codes} codes, ${seeded.segments} codings`);
  }
  let server;
  try {
    server = await startHttpServer({ pipeline, port, host: values.host, logger, version: VERSION, onCall: (l) => process.stderr.write(`${l}\n`) });
  } catch (e) {
    await project.close();
    if ((e as NodeJS.ErrnoException).code === 'EADDRINUSE') throw new UsageError(`Port ${port} is in use. Stop the other server or pass --port N (0 picks a free port).`);
    throw e;
  }
  const base = `http://${server.host === '::1' ? '[::1]' : server.host}:${server.port}`;
  process.stdout.write(
    `Marginalia is serving "${project.name}" at ${base} (${pipeline.listTools().length} tools). Ctrl+C stops it.\n\n` +
      `Try:\n` +
      `  curl -s ${base}/tools\n` +
      `  curl -s -X POST ${base}/tools/get_project_context -H 'Content-Type: application/json' -d '{"arguments":{}}'\n` +
      `  curl -s -X POST ${base}/tools/list_codes -H 'Content-Type: application/json' -d '{"arguments":{}}'\n` +
      `  curl -s -X POST ${base}/tools/read_source_content -H 'Content-Type: application/json' -d '{"arguments":{"source_id":1,"max_length":400}}'\n` +
      `  curl -s -X POST ${base}/tools/create_code -H 'Content-Type: application/json' -d '{"arguments":{"name":"Hope","color":"#59A14F"}}'\n`,
  );
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info(`${signal}: stopping`);
    await server.close();
    await project.close();
    logger.info('checkpointed and closed; bye');
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

class UsageError extends Error {}

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
    throw new UsageError(`unknown command "${command}"`);
  } catch (e) {
    if (e instanceof UsageError || isToolError(e) || (e as { code?: string }).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
      process.stderr.write(`marginalia: ${(e as Error).message}${e instanceof UsageError ? `\n\n${USAGE}` : ''}\n`);
      process.exit(2);
    }
    throw e;
  }
}
