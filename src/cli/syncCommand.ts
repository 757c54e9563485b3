/**
 * `marginalia sync --project P [--remote URL] [--name NAME] [--coder NAME] [--json]` (issue 16 item 2): syncs the
 * project's history with its git remote (sync_project), configuring the remote first when --remote is given.
 * When a server owns the project (its discovery file names a live process), the calls go to that server over
 * HTTP with the researcher's reviewer token, so its open project is the one that changes; otherwise this process
 * opens the project itself, runs the calls as the researcher (coder name: --coder, MARGINALIA_CODER, git's
 * user.name, the OS user; src/cli/coderName.ts) and closes it. Prints the result in words (or the JSON result
 * with --json); a failure prints its error code and exits with the code's exit status.
 */
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { silentLogger } from '../core/log';
import { ToolError } from '../core/errors';
import type { Caller } from '../agent/pipeline';
import { createPipeline, headlessHost, openProjectHandle } from './compose';
import { loadTokens, readDiscovery } from './credentials';
import { researcherCoderName } from './coderName';

/** The usage lines of `marginalia sync` (main.ts prints them in its help). */
export const SYNC_USAGE = `  marginalia sync --project PATH [--remote URL] [--name NAME] [--coder NAME] [--json]
      Syncs the project history with its git remote: snapshot, fetch, fast-forward or merge, push (the
      researcher's own git credentials). --remote URL configures the remote first (a path, file://, ssh,
      https). Forwards to the server that owns PATH when one runs. Prints what happened in words.`;

/** A bad command line of `marginalia sync`. */
export class SyncUsageError extends Error {}

type Envelope = { success: true; data: Record<string, unknown> } | { success: false; error: string; error_code: string };

/** Runs `marginalia sync` (see {@link SYNC_USAGE}). */
export async function runSync(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      project: { type: 'string' },
      remote: { type: 'string' },
      name: { type: 'string' },
      coder: { type: 'string' },
      json: { type: 'boolean', default: false },
    },
    strict: true,
  });
  const projectPath = values.project ?? process.env.MARGINALIA_PROJECT;
  if (!projectPath) throw new SyncUsageError('sync needs --project PATH (or MARGINALIA_PROJECT)');
  const abs = path.resolve(projectPath);
  const calls: [string, Record<string, unknown>][] = [];
  if (values.remote !== undefined) calls.push(['configure_remote', { url: values.remote, ...(values.name ? { name: values.name } : {}) }]);
  calls.push(['sync_project', {}]);

  let last: Envelope | undefined;
  const owner = readDiscovery(abs);
  if (owner) {
    const token = loadTokens().reviewer;
    for (const [tool, args] of calls) {
      const res = await fetch(`${owner.url.replace(/\/+$/, '')}/tools/${tool}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'x-marginalia-client': 'marginalia-sync' },
        body: JSON.stringify({ arguments: args }),
      });
      last = (await res.json()) as Envelope;
      if (!last.success) break;
    }
  } else {
    const handle = await openProjectHandle(abs, { create: false, logger: silentLogger });
    try {
      const pipeline = createPipeline({ project: () => handle, host: headlessHost, logger: silentLogger, embeddings: null });
      const caller: Caller = {
        session_id: 'local',
        client_type: 'LOCAL_UI',
        client_name: 'marginalia sync',
        user: researcherCoderName({ flag: values.coder, cwd: path.dirname(abs) }),
        researcher: true,
      };
      for (const [tool, args] of calls) {
        last = (await pipeline.invoke(tool, args, caller)).envelope as Envelope;
        if (!last.success) break;
      }
    } finally {
      await handle.close();
    }
  }
  if (!last) return;
  if (!last.success) throw new ToolError(last.error_code as never, last.error);
  process.stdout.write(values.json ? `${JSON.stringify(last.data)}\n` : `${String(last.data.in_words ?? 'Synced.')}\n`);
}
