/**
 * What Connect an Agent writes (issue 14, item 2), kept free of `vscode` so it is unit-tested in plain Node
 * (test/unit/ui/clientConfig.test.ts): the MCP client configuration of one agent credential, merged into a
 * client's configuration file without touching its other servers, and the words of the Connected Agents view.
 *
 * The configuration must run on a researcher's machine without Node on the PATH:
 * - preferred, whenever the extension's tool server runs: the Streamable HTTP transport,
 *   `http://127.0.0.1:<port>/mcp` with the credential in an `Authorization: Bearer <token>` header;
 * - otherwise stdio through the bundled `bin/marginalia.js mcp --project P`, started with VS Code's own runtime
 *   (`process.execPath` with `ELECTRON_RUN_AS_NODE=1`), the credential in `MARGINALIA_TOKEN`.
 * Formats: Claude Code's project-scoped `.mcp.json` (`{"mcpServers": {name: {"type": "http", "url", "headers"}
 * | {"type": "stdio", "command", "args", "env"}}}`, docs.anthropic.com/en/docs/claude-code/mcp) and Cursor's
 * `.cursor/mcp.json` (same `mcpServers` map; an entry with `url` (+ `headers`) is a remote server, one with
 * `command` a stdio one, cursor.com/docs/context/mcp).
 */

import { AGENT_NAME, BUILTIN_AGENT, RESEARCHER_OWNER } from '../../agent/agentCredentials';

/** The MCP clients Connect an Agent knows; `http` is any other MCP client over Streamable HTTP. */
export const AGENT_CLIENTS = ['claude-code', 'cursor', 'http'] as const;
export type AgentClient = (typeof AGENT_CLIENTS)[number];

/** The researcher-facing name of each client. */
export const CLIENT_LABELS: Record<AgentClient, string> = { 'claude-code': 'Claude Code', cursor: 'Cursor', http: 'Other HTTP client' };

/** The configuration file of a client, relative to the workspace folder (undefined: the client has none we write). */
export const CLIENT_CONFIG_FILES: Record<AgentClient, string | undefined> = { 'claude-code': '.mcp.json', cursor: '.cursor/mcp.json', http: undefined };

/** The key of Marginalia's entry in a client's `mcpServers` map. */
export const MCP_SERVER_KEY = 'marginalia';

/**
 * Why `name` cannot name a new agent credential, or undefined when it can. The rules are the credential
 * store's (src/agent/agentCredentials.ts {@link AGENT_NAME}: 1 to 64 characters, letters of any script, digits,
 * spaces, `.`, `_`, `-`, starting with a letter or digit; `agent` and `researcher` reserved), plus no trailing
 * space (the store would trim it silently) and not the name of an existing agent (`taken`, compared
 * case-insensitively, as the store does). The message is shown under the input box.
 */
export function agentNameProblem(name: string, taken: readonly string[] = []): string | undefined {
  if (name.length === 0) return 'Name the agent, for example "Claude coding pass 2".';
  if (name.trim() !== name) return 'No spaces at the start or end of the name.';
  if ([...name].length > 64) return 'At most 64 characters.';
  if (!AGENT_NAME.test(name)) return 'Use letters, digits, spaces and . _ - (starting with a letter or digit).';
  const key = name.toLowerCase();
  if (key === BUILTIN_AGENT || key === RESEARCHER_OWNER) return `"${name}" is reserved: pick another name.`;
  if (taken.some((t) => t.toLowerCase() === key)) return `An agent named "${name}" exists already: pick another name, or revoke it first.`;
  return undefined;
}

/** Where the agent reaches the project: the running tool server's port (HTTP), else the stdio command. */
export interface ConnectionFacts {
  /** the port of the extension's HTTP tool server on 127.0.0.1, when it runs */
  port: number | undefined;
  /** the agent's credential (the token Connect an Agent issued) */
  token: string;
  /** the project file, for the stdio command's `--project` */
  projectPath: string;
  /** the bundled CLI, `<extension>/bin/marginalia.js` */
  cli: string;
  /** the runtime that runs the CLI: VS Code's own (`process.execPath`), run as Node with ELECTRON_RUN_AS_NODE=1 */
  execPath: string;
}

/** One `mcpServers` entry (see the file's docstring for the formats). */
export type McpServerEntry = Record<string, unknown>;

/**
 * The `mcpServers` entry that connects `client` with the credential of `facts`: Streamable HTTP with an
 * `Authorization` header (and for Claude Code and Cursor `X-Marginalia-Client` naming the client) when the
 * tool server runs (Claude Code and other clients `{"type": "http", url, headers}`, Cursor `{url, headers}`), else stdio through the bundled CLI under VS Code's runtime
 * (`{command: execPath, args: [cli, "mcp", "--project", P], env: {ELECTRON_RUN_AS_NODE: "1", MARGINALIA_TOKEN}}`,
 * with `"type": "stdio"` for Claude Code).
 */
export function mcpServerEntry(client: AgentClient, facts: ConnectionFacts): McpServerEntry {
  if (facts.port !== undefined) {
    // MCP 2025-era clients over HTTP state their clientInfo on `initialize` only, and each later request stands
    // alone: the header names the client on every request, so Connected Agents shows "Claude Code", not "mcp-client"
    const named = client === 'http' ? {} : { 'X-Marginalia-Client': CLIENT_LABELS[client] };
    const remote = { url: `http://127.0.0.1:${facts.port}/mcp`, headers: { Authorization: `Bearer ${facts.token}`, ...named } };
    return client === 'cursor' ? remote : { type: 'http', ...remote };
  }
  const stdio = {
    command: facts.execPath,
    args: [facts.cli, 'mcp', '--project', facts.projectPath],
    env: { ELECTRON_RUN_AS_NODE: '1', MARGINALIA_TOKEN: facts.token },
  };
  return client === 'cursor' ? stdio : { type: 'stdio', ...stdio };
}

/** The whole configuration text of `client` (`{"mcpServers": {"marginalia": entry}}`, 2-space JSON), for the clipboard. */
export function mcpClientConfig(client: AgentClient, facts: ConnectionFacts): string {
  return `${JSON.stringify({ mcpServers: { [MCP_SERVER_KEY]: mcpServerEntry(client, facts) } }, null, 2)}\n`;
}

/** Thrown by {@link mergeMcpConfig} when the existing file is not a JSON object (it is then left as it is). */
export class ConfigFileError extends Error {}

/**
 * The text of a client's configuration file with `entry` set as `mcpServers[key]`: every other key and every
 * other server of `existing` kept as they were (order too), the file created when `existing` is undefined or
 * blank. Returns 2-space JSON ending in a newline, and whether an entry named `key` was replaced.
 * Errors: {@link ConfigFileError} when `existing` is not JSON, not an object, or its `mcpServers` is not an
 * object; nothing should be written then.
 */
export function mergeMcpConfig(existing: string | undefined, entry: McpServerEntry, key: string = MCP_SERVER_KEY): { text: string; replaced: boolean } {
  let root: Record<string, unknown> = {};
  if (existing !== undefined && existing.trim() !== '') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(existing.replace(/^\uFEFF/, ''));
    } catch (e) {
      throw new ConfigFileError(`it is not valid JSON (${(e as Error).message})`);
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new ConfigFileError('it is not a JSON object');
    root = parsed as Record<string, unknown>;
  }
  const servers = Object.prototype.hasOwnProperty.call(root, 'mcpServers') ? root.mcpServers : {};
  if (typeof servers !== 'object' || servers === null || Array.isArray(servers)) throw new ConfigFileError('its "mcpServers" is not an object');
  const replaced = Object.prototype.hasOwnProperty.call(servers, key);
  const merged = { ...root, mcpServers: { ...(servers as Record<string, unknown>), [key]: entry } };
  return { text: `${JSON.stringify(merged, null, 2)}\n`, replaced };
}

/**
 * A time before `nowMs` in words: "just now" (under 45 s), "N min ago", "N h ago", "yesterday", "N days ago"
 * (up to 30), else the date (YYYY-MM-DD). `iso` is an ISO 8601 time; an unreadable one yields "unknown".
 */
export function relativeTime(iso: string | null | undefined, nowMs: number): string {
  if (!iso) return 'never';
  const then = Date.parse(iso);
  if (Number.isNaN(then)) return 'unknown';
  const s = Math.max(0, (nowMs - then) / 1000);
  if (s < 45) return 'just now';
  const min = Math.round(s / 60);
  if (min < 60) return `${Math.max(1, min)} min ago`;
  const h = Math.round(s / 3600);
  if (h < 24) return `${h} h ago`;
  const d = Math.round(s / 86_400);
  if (d === 1) return 'yesterday';
  if (d <= 30) return `${d} days ago`;
  return iso.slice(0, 10);
}

/** A live session as the Connected Agents view needs it (a subset of src/agent/sessions.ts Session). */
export interface SessionFacts {
  session_id: string;
  client_name: string;
  status: string;
  last_activity: string;
  model?: string | null;
}

/** The state of an agent: `connected` (a session active), `idle` (sessions, none active) or `not connected`. */
export type AgentState = 'connected' | 'idle' | 'not connected';

/** The state of an agent from its live sessions' statuses (ACTIVE counts as connected; IDLE, EXPIRED... as idle). */
export function agentState(sessions: readonly Pick<SessionFacts, 'status'>[]): AgentState {
  if (sessions.length === 0) return 'not connected';
  return sessions.some((s) => s.status === 'ACTIVE') ? 'connected' : 'idle';
}

/**
 * The description of an agent's row in Connected Agents, parts joined by " · ": state; the clients and models
 * of its sessions (distinct, in session order); the last activity in words (the newest of the sessions'
 * activity and the credential's `last_used_at`; "never used" when neither exists); the pending request count
 * when above 0 ("1 request waits" / "N requests wait").
 */
export function agentDescription(a: { last_used_at?: string | null }, sessions: readonly SessionFacts[], pending: number, nowMs: number): string {
  const parts: string[] = [agentState(sessions)];
  const clients = [...new Set(sessions.map((s) => s.client_name).filter(Boolean))];
  const models = [...new Set(sessions.map((s) => s.model).filter((m): m is string => !!m))];
  if (clients.length > 0) parts.push(clients.join(', '));
  if (models.length > 0) parts.push(models.join(', '));
  const last = latest([a.last_used_at, ...sessions.map((s) => s.last_activity)]);
  parts.push(last ? `active ${relativeTime(last, nowMs)}` : 'never used');
  if (pending > 0) parts.push(pending === 1 ? '1 request waits' : `${pending} requests wait`);
  return parts.join(' · ');
}

/** The description of a session row: status in words, model, last activity. */
export function sessionDescription(s: SessionFacts, nowMs: number): string {
  const parts = [s.status.toLowerCase()];
  if (s.model) parts.push(s.model);
  parts.push(`active ${relativeTime(s.last_activity, nowMs)}`);
  return parts.join(' · ');
}

function latest(times: readonly (string | null | undefined)[]): string | undefined {
  let best: string | undefined;
  let bestMs = -Infinity;
  for (const t of times) {
    if (!t) continue;
    const ms = Date.parse(t);
    if (!Number.isNaN(ms) && ms > bestMs) {
      bestMs = ms;
      best = t;
    }
  }
  return best;
}

/**
 * Whether a `.gitignore` text (at the workspace folder's root) plainly ignores `rel` (a path relative to that
 * folder, `/`-separated, e.g. `.cursor/mcp.json`): a line naming the file or one of its folders, with or
 * without a leading `/` or trailing `/`, or a `*`-pattern on the file's base name (`*.json`). Negations and
 * deeper glob forms are not read: when this says false, Connect an Agent offers to add the line.
 */
export function gitignoreCovers(gitignore: string, rel: string): boolean {
  const parts = rel.split('/');
  const prefixes = parts.map((_, i) => parts.slice(0, i + 1).join('/'));
  const base = parts[parts.length - 1] ?? rel;
  for (const raw of gitignore.split(/\r?\n/)) {
    const line = raw.trim();
    if (!line || line.startsWith('#') || line.startsWith('!')) continue;
    const p = line.replace(/^\//, '').replace(/\/$/, '');
    if (prefixes.includes(p)) return true;
    if (!line.startsWith('/') && !p.includes('/') && (p === base || parts.slice(0, -1).includes(p))) return true;
    if (!p.includes('/') && p.includes('*') && new RegExp(`^${p.split('*').map(escapeRe).join('[^/]*')}$`).test(base)) return true;
  }
  return false;
}

function escapeRe(s: string): string {
  return s.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
}
