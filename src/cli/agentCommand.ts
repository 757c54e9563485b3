import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { AgentCredentials } from '../agent/agentCredentials';
import { ToolError } from '../core/errors';
import { agentCredentialsPath, fileAgentCredentialStorage } from './credentials';

/** Usage lines of `marginalia agent`. */
export const AGENT_USAGE = `  marginalia agent add NAME --project PATH
      Issue a credential for the agent NAME (1-64 characters: letters, digits, space, . _ -) and print its
      token ONCE on stdout (stored only as a SHA-256 hash, in <MARGINALIA_HOME>/agents/). Give it to that agent
      as Authorization: Bearer <token> (or MARGINALIA_TOKEN). A running server accepts it at once.
  marginalia agent list --project PATH
      The project's agent credentials: name, created, last used (never a token).
  marginalia agent revoke NAME --project PATH
      Revoke NAME's credential: a running server ends its sessions and closes its streams within a second.
  (MARGINALIA_PROJECT may give PATH. The install's own agent token, MARGINALIA_TOKEN, stays valid as the agent "agent".)`;

/** A wrong use of `marginalia agent` (exit 2 with the usage). */
export class AgentUsageError extends Error {}

/**
 * `marginalia agent add|list|revoke` (issue 14 item 2): the headless way to manage a project's named agent
 * credentials, through the same file a running `marginalia serve` reads (src/cli/credentials.ts
 * `fileAgentCredentialStorage`). `out` receives stdout text. Errors: AgentUsageError; ToolError
 * INVALID_ARGUMENTS, AGENT_EXISTS, AGENT_NOT_FOUND (printed with their code, exit 2).
 */
export function runAgent(argv: string[], out: (text: string) => void = (t) => void process.stdout.write(t)): void {
  const [sub, ...rest] = argv;
  const { values, positionals } = parseArgs({ args: rest, options: { project: { type: 'string' } }, allowPositionals: true, strict: true });
  const projectPath = values.project ?? process.env.MARGINALIA_PROJECT;
  if (!projectPath) throw new AgentUsageError('agent needs --project PATH (or MARGINALIA_PROJECT)');
  const abs = path.resolve(projectPath);
  const credentials = new AgentCredentials(fileAgentCredentialStorage(abs));
  if (sub === 'add') {
    if (positionals.length !== 1) throw new AgentUsageError('agent add takes one NAME (quote a name with spaces)');
    const { name, token } = credentials.issue(positionals[0] as string);
    out(`${token}\n`);
    process.stderr.write(`Agent "${name}" may now call Marginalia with this token (Authorization: Bearer <token>). It is not shown again.\n`);
    return;
  }
  if (sub === 'list') {
    if (positionals.length !== 0) throw new AgentUsageError('agent list takes no NAME');
    const list = credentials.list();
    if (list.length === 0) {
      out(`No agent credentials for ${abs} (${agentCredentialsPath(abs)}). The install's own token is the agent "agent".\n`);
      return;
    }
    const width = Math.max(4, ...list.map((a) => a.name.length));
    out(`${'NAME'.padEnd(width)}  CREATED                   LAST USED\n`);
    for (const a of list) out(`${a.name.padEnd(width)}  ${a.created_at.padEnd(24)}  ${a.last_used_at ?? 'never'}\n`);
    return;
  }
  if (sub === 'revoke') {
    if (positionals.length !== 1) throw new AgentUsageError('agent revoke takes one NAME');
    const name = positionals[0] as string;
    if (!credentials.revoke(name)) throw new ToolError('AGENT_NOT_FOUND', `No agent credential named "${name}" for ${abs} (marginalia agent list)`);
    out(`Revoked "${name}".\n`);
    return;
  }
  throw new AgentUsageError(sub === undefined ? 'agent needs add, list or revoke' : `unknown agent subcommand "${sub}" (add, list, revoke)`);
}
