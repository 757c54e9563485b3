import { createHash, randomBytes } from 'node:crypto';
import type * as vscode from 'vscode';
import type { Tokens } from '../../agent/agentContext';

const AGENT_KEY = 'marginalia.agentToken';
const REVIEWER_KEY = 'marginalia.reviewerToken';

/**
 * The install's tokens, kept in VS Code SecretStorage and generated (32 random bytes, base64url) on first
 * use. The agent token goes to agents (discovery file, MCP definitions); the reviewer token stays here.
 */
export async function loadSecretTokens(secrets: vscode.SecretStorage): Promise<Tokens> {
  let agent = await secrets.get(AGENT_KEY);
  let reviewer = await secrets.get(REVIEWER_KEY);
  if (!agent) {
    agent = randomBytes(32).toString('base64url');
    await secrets.store(AGENT_KEY, agent);
  }
  if (!reviewer) {
    reviewer = randomBytes(32).toString('base64url');
    await secrets.store(REVIEWER_KEY, reviewer);
  }
  return { agent, reviewer };
}

/**
 * The SecretStorage key of an agent credential's token (issue 14 item 2): one per project and agent name, so
 * agents of the same name in two projects keep apart. `projectPath` is the project file's path; the key holds
 * a SHA-256 prefix of it, never the path itself.
 */
export function agentTokenKey(projectPath: string, name: string): string {
  return `marginalia.agentToken/${createHash('sha256').update(projectPath, 'utf8').digest('hex').slice(0, 16)}/${name}`;
}

/**
 * The tokens of the named agent credentials Connect an Agent issued, kept in VS Code SecretStorage (the
 * credential store itself keeps only their hashes), so the client configuration can be produced again later.
 */
export class AgentTokenSecrets {
  constructor(private readonly secrets: vscode.SecretStorage) {}

  /** Keeps `token` as the token of agent `name` of the project `projectPath`. */
  store(projectPath: string, name: string, token: string): Thenable<void> {
    return this.secrets.store(agentTokenKey(projectPath, name), token);
  }

  /** The token kept for agent `name`, or undefined (never issued here, or revoked). */
  get(projectPath: string, name: string): Thenable<string | undefined> {
    return this.secrets.get(agentTokenKey(projectPath, name));
  }

  /** Forgets the token of agent `name` (after its revocation). */
  delete(projectPath: string, name: string): Thenable<void> {
    return this.secrets.delete(agentTokenKey(projectPath, name));
  }
}
