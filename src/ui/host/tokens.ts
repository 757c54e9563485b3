import { randomBytes } from 'node:crypto';
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
