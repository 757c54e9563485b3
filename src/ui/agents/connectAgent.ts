import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { BUILTIN_AGENT } from '../../agent/agentCredentials';
import { isToolError } from '../../core/errors';
import type { AgentCommandDeps } from './agentCommands';
import {
  AGENT_CLIENTS,
  agentNameProblem,
  CLIENT_CONFIG_FILES,
  CLIENT_LABELS,
  ConfigFileError,
  gitignoreCovers,
  mcpClientConfig,
  mcpServerEntry,
  mergeMcpConfig,
  type AgentClient,
  type ConnectionFacts,
} from './clientConfig';
import type { AgentsNode } from './connectedAgentsView';

/** Where Connect an Agent puts the client configuration: the client's file in the workspace, or the clipboard. */
export type ConfigTarget = 'file' | 'clipboard';

/** What Connect an Agent (and Copy Client Configuration) did; never the token. */
export interface ConnectResult {
  name: string;
  client: AgentClient;
  target: ConfigTarget;
  /** `http` (Streamable HTTP, the tool server runs) or `stdio` (the bundled CLI under VS Code's runtime) */
  transport: 'http' | 'stdio';
  /** the configuration file written (absolute), when `target` is `file` */
  file?: string;
}

/** A client's configuration file in the workspace folder of the project (undefined: none for this client, or no folder). */
function configFileOf(client: AgentClient, projectPath: string): { folder: string; rel: string; file: string } | undefined {
  const rel = CLIENT_CONFIG_FILES[client];
  if (!rel) return undefined;
  const folder = vscode.workspace.getWorkspaceFolder(vscode.Uri.file(projectPath)) ?? vscode.workspace.workspaceFolders?.[0];
  if (!folder || folder.uri.scheme !== 'file') return undefined;
  return { folder: folder.uri.fsPath, rel, file: path.join(folder.uri.fsPath, ...rel.split('/')) };
}

function isClient(x: unknown): x is AgentClient {
  return typeof x === 'string' && (AGENT_CLIENTS as readonly string[]).includes(x);
}

/**
 * The text the client's file will have, checked before anything is issued: Errors (thrown as plain Errors
 * with the researcher's words) when the file is open with unsaved changes, cannot be read, or is not a JSON
 * object (it is left as it is).
 */
function plannedFileText(file: string, rel: string, entry: Record<string, unknown>): { text: string; replaced: boolean } {
  const open = vscode.workspace.textDocuments.find((doc) => doc.uri.scheme === 'file' && path.resolve(doc.uri.fsPath) === path.resolve(file));
  if (open?.isDirty) throw new Error(`${rel} has unsaved changes in an editor: save or revert them first, then connect the agent again.`);
  let existing: string | undefined;
  try {
    existing = fs.readFileSync(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw new Error(`Could not read ${rel}: ${(e as Error).message}`, { cause: e });
  }
  try {
    return mergeMcpConfig(existing, entry);
  } catch (e) {
    if (e instanceof ConfigFileError)
      throw new Error(`${rel} was left as it is: ${e.message}. Fix it, or copy the configuration to the clipboard instead.`, { cause: e });
    throw e;
  }
}

/** Writes the client's file (created user-only: it holds a token) and offers to keep it out of git. */
function writeConfigFile(where: { folder: string; rel: string; file: string }, text: string): void {
  fs.mkdirSync(path.dirname(where.file), { recursive: true });
  const tmp = `${where.file}.${process.pid}.tmp`;
  let mode = 0o600;
  try {
    mode = fs.statSync(where.file).mode & 0o777;
  } catch {
    // a new file: user-only
  }
  fs.writeFileSync(tmp, text, { mode });
  fs.renameSync(tmp, where.file);
}

/** Whether the workspace folder is a git working tree whose .gitignore does not cover `rel`. */
function needsGitignore(folder: string, rel: string): boolean {
  if (!fs.existsSync(path.join(folder, '.git'))) return false;
  let text = '';
  try {
    text = fs.readFileSync(path.join(folder, '.gitignore'), 'utf8');
  } catch {
    // none yet
  }
  return !gitignoreCovers(text, rel);
}

/**
 * Puts the configuration of agent `name` for `client` where the researcher chose: the client's file (merged:
 * the other servers are kept) or the clipboard. Never opens an editor with the token.
 */
async function deliver(
  d: AgentCommandDeps,
  name: string,
  client: AgentClient,
  facts: ConnectionFacts,
  target: ConfigTarget,
  where: ReturnType<typeof configFileOf>,
  planned: { text: string; replaced: boolean } | undefined,
): Promise<ConnectResult> {
  const transport = facts.port !== undefined ? 'http' : 'stdio';
  const label = CLIENT_LABELS[client];
  if (target === 'file' && where && planned) {
    writeConfigFile(where, planned.text);
    const gitignore = needsGitignore(where.folder, where.rel);
    const buttons = gitignore ? ['Add to .gitignore', `Open ${where.rel}`] : [`Open ${where.rel}`];
    void vscode.window
      .showInformationMessage(
        `${name} is connected: ${label} finds Marginalia in ${where.rel}${planned.replaced ? ' (its earlier Marginalia entry replaced)' : ''}. Start or reload ${label} in this folder. The file holds the agent's token${gitignore ? ': keep it out of version control' : ''}.`,
        ...buttons,
      )
      .then((choice) => {
        if (choice === 'Add to .gitignore') {
          const gi = path.join(where.folder, '.gitignore');
          const before = fs.existsSync(gi) ? fs.readFileSync(gi, 'utf8') : '';
          fs.appendFileSync(gi, `${before && !before.endsWith('\n') ? '\n' : ''}${where.rel}\n`);
        } else if (choice?.startsWith('Open ')) void vscode.window.showTextDocument(vscode.Uri.file(where.file));
      });
    return { name, client, target, transport, file: where.file };
  }
  await vscode.env.clipboard.writeText(mcpClientConfig(client, facts));
  const hint = CLIENT_CONFIG_FILES[client] ? ` Paste it into ${CLIENT_CONFIG_FILES[client]}` : " Paste it into your client's MCP configuration";
  void vscode.window.showInformationMessage(
    `The ${label} configuration of ${name} is on the clipboard, with its token.${hint}${transport === 'http' ? ' (Streamable HTTP; the tool server must be running).' : '.'} Its actions are recorded as ${name}'s, at the trust levels you set.`,
  );
  return { name, client, target: 'clipboard', transport };
}

/** Asks which client (unless given); undefined when the researcher cancels. Errors: an unknown client. */
async function askClient(client: string | undefined, title: string, port: number | undefined): Promise<AgentClient | undefined> {
  if (client !== undefined) {
    if (!isClient(client)) throw new Error(`Unknown client "${client}": use ${AGENT_CLIENTS.join(', ')}.`);
    return client;
  }
  const transport = port !== undefined ? `Streamable HTTP on 127.0.0.1:${port}` : "stdio, through VS Code's own runtime";
  const pick = await vscode.window.showQuickPick(
    [
      { label: CLIENT_LABELS['claude-code'], description: `.mcp.json · ${transport}`, id: 'claude-code' as const },
      { label: CLIENT_LABELS.cursor, description: `.cursor/mcp.json · ${transport}`, id: 'cursor' as const },
      {
        label: CLIENT_LABELS.http,
        description: port !== undefined ? `http://127.0.0.1:${port}/mcp with an Authorization header` : 'needs the tool server (marginalia.server.enabled)',
        id: 'http' as const,
      },
    ],
    { title, placeHolder: 'Which client will the agent use?' },
  );
  return pick?.id;
}

/** Asks where the configuration goes (unless given): consent to write the client's file, or the clipboard. */
async function askTarget(
  target: string | undefined,
  client: AgentClient,
  where: ReturnType<typeof configFileOf>,
  title: string,
): Promise<ConfigTarget | undefined> {
  if (target !== undefined) {
    if (target !== 'file' && target !== 'clipboard') throw new Error(`Unknown target "${target}": use file or clipboard.`);
    if (target === 'file' && !where)
      throw new Error(
        `${CLIENT_LABELS[client]} has no configuration file Marginalia can write${CLIENT_CONFIG_FILES[client] ? ' (no workspace folder is open)' : ''}: use the clipboard.`,
      );
    return target;
  }
  if (!where) return 'clipboard';
  const pick = await vscode.window.showQuickPick(
    [
      {
        label: `$(file) Write it into ${where.rel}`,
        detail: `Adds a "marginalia" server to ${where.rel} in ${path.basename(where.folder)}, keeping its other servers. The file will hold the agent's token.`,
        id: 'file' as const,
      },
      { label: '$(clippy) Copy it to the clipboard', detail: 'Paste it into the client yourself; the token is not shown again.', id: 'clipboard' as const },
    ],
    { title, placeHolder: `Where should ${CLIENT_LABELS[client]}'s configuration go?` },
  );
  return pick?.id;
}

/** From the Command Palette: which agent session to end (undefined when none or cancelled). */
async function pickSession(d: AgentCommandDeps): Promise<string | undefined> {
  const rows = d.connectedAgents.agents().flatMap((a) =>
    a.sessions.map((s) => ({
      label: a.name,
      description: `${s.client_name} · ${s.status.toLowerCase()}`,
      detail: `session ${s.session_id}`,
      id: s.session_id,
    })),
  );
  if (rows.length === 0) return void vscode.window.showInformationMessage('No agent is connected.');
  return (await vscode.window.showQuickPick(rows, { title: 'End Session', placeHolder: 'Which agent session should end?' }))?.id;
}

/** From the Command Palette: which agent to revoke (undefined when none or cancelled). */
async function pickAgent(d: AgentCommandDeps): Promise<string | undefined> {
  const rows = d.agent.credentials.list().map((c) => ({ label: c.name, description: `issued ${c.created_at.slice(0, 10)}` }));
  if (rows.length === 0) return void vscode.window.showInformationMessage('No agent has a credential for this project.');
  return (await vscode.window.showQuickPick(rows, { title: 'Revoke Agent', placeHolder: 'Which agent should lose its credential?' }))?.label;
}

function agentNameOf(arg: AgentsNode | string | undefined): string | undefined {
  if (typeof arg === 'string') return arg;
  return arg?.kind === 'agent' ? arg.name : arg?.agent;
}

/**
 * The commands of Connected Agents (issue 14 items 2 and 3), merged into the one command table:
 * - `marginalia.agents.connect(name?, client?, target?)`: Connect an Agent. Asks (unless given) the agent's name
 *   (validated as the credential store does), the client (`claude-code`, `cursor`, `http`) and where the
 *   configuration goes (`file`: the client's file in the workspace, with the researcher's consent; `clipboard`);
 *   issues the credential, keeps its token in SecretStorage and writes the configuration. Resolves to a
 *   {@link ConnectResult} (never the token), undefined when cancelled.
 * - `marginalia.agents.copyConfiguration(agent, client?, target?)`: the same configuration again from the kept token.
 * - `marginalia.agents.endSession(session | sessionId)`: ends a session through the researcher's `end_session` tool
 *   (the agent may connect again); without an argument (Command Palette) asks which; resolves to true when one ended.
 * - `marginalia.agents.revoke(agent | name, confirmed?)`: without an argument asks which agent; after a modal confirmation naming the agent (skipped
 *   when `confirmed` is true), revokes its credential, which ends its sessions; resolves to true when revoked.
 */
export function connectedAgentsCommands(d: AgentCommandDeps): Record<string, (...args: any[]) => unknown> {
  return {
    'marginalia.agents.connect': (name?: string, client?: string, target?: string) => connectAgent(d, name, client, target),
    'marginalia.agents.copyConfiguration': (arg?: AgentsNode | string, client?: string, target?: string) => copyConfiguration(d, arg, client, target),
    'marginalia.agents.endSession': (arg?: AgentsNode | string) => endSession(d, arg),
    'marginalia.agents.revoke': (arg?: AgentsNode | string, confirmed?: boolean) => revokeAgent(d, arg, confirmed),
  };
}

/** What a client needs to reach the open project: the tool server's port when it runs (else stdio through the bundled CLI), the token. */
function connectionFacts(d: AgentCommandDeps, projectPath: string, token: string): ConnectionFacts {
  const s = d.controller.serverState;
  return {
    port: s.state === 'running' ? s.port : undefined,
    token,
    projectPath,
    cli: path.join(d.extensionPath, 'bin', 'marginalia.js'),
    execPath: process.execPath,
  };
}

/** The new agent's name: `given` checked as the credential store does (an Error when refused), else asked; undefined when cancelled. */
async function askAgentName(d: AgentCommandDeps, given: string | undefined, title: string): Promise<string | undefined> {
  const taken = d.agent.credentials.list().map((c) => c.name);
  if (given !== undefined) {
    const problem = agentNameProblem(given, taken);
    if (problem) throw new Error(problem);
    return given;
  }
  return vscode.window.showInputBox({
    title,
    prompt: "The agent's name: its codings, memos and requests are recorded under it, and you can end its sessions or revoke it by name.",
    placeHolder: 'e.g. Claude coding pass 2',
    ignoreFocusOut: true,
    validateInput: (v) => agentNameProblem(v, taken),
  });
}

/** Issues the agent's credential (a ToolError from the store becomes a plain Error with its message). */
function issueCredential(d: AgentCommandDeps, name: string): { name: string; token: string } {
  try {
    return d.agent.credentials.issue(name);
  } catch (e) {
    if (isToolError(e)) throw new Error(e.message, { cause: e });
    throw e;
  }
}

/** `marginalia.agents.connect`: see {@link connectedAgentsCommands}. */
async function connectAgent(d: AgentCommandDeps, nameArg?: string, clientArg?: string, targetArg?: string): Promise<ConnectResult | undefined> {
  const project = d.controller.current();
  if (!project) return void vscode.window.showInformationMessage('Open a project first: agents connect to an open project.');
  const title = 'Connect an Agent';
  const name = await askAgentName(d, nameArg, title);
  if (name === undefined) return undefined;
  const port = connectionFacts(d, project.path, '').port;
  const client = await askClient(clientArg, `${title}: ${name}`, port);
  if (!client) return undefined;
  if (client === 'http' && port === undefined)
    throw new Error('Other HTTP clients need the tool server, which is off (marginalia.server.enabled): turn it on, or pick Claude Code or Cursor (stdio).');
  const where = configFileOf(client, project.path);
  const target = await askTarget(targetArg, client, where, `${title}: ${name}`);
  if (!target) return undefined;
  // everything that could refuse the file is checked before the credential exists
  const planned = target === 'file' && where ? plannedFileText(where.file, where.rel, mcpServerEntry(client, connectionFacts(d, project.path, ''))) : undefined;
  const issued = issueCredential(d, name);
  await d.agentSecrets.store(project.path, issued.name, issued.token);
  d.connectedAgents.refresh();
  const facts = connectionFacts(d, project.path, issued.token);
  const withToken =
    planned && where ? mergeMcpConfig(fs.existsSync(where.file) ? fs.readFileSync(where.file, 'utf8') : undefined, mcpServerEntry(client, facts)) : undefined;
  return deliver(d, issued.name, client, facts, target, where, withToken);
}

/** `marginalia.agents.copyConfiguration`: see {@link connectedAgentsCommands}. */
async function copyConfiguration(d: AgentCommandDeps, arg?: AgentsNode | string, clientArg?: string, targetArg?: string): Promise<ConnectResult | undefined> {
  const project = d.controller.current();
  const name = agentNameOf(arg);
  if (!project || !name) return undefined;
  const token = await d.agentSecrets.get(project.path, name);
  if (!token) {
    void vscode.window.showWarningMessage(
      `The token of ${name} was not kept in this VS Code (it was issued elsewhere, e.g. by \`marginalia agent add\`): revoke it and connect the agent again.`,
    );
    return undefined;
  }
  const facts = connectionFacts(d, project.path, token);
  const client = await askClient(clientArg, `Client configuration of ${name}`, facts.port);
  if (!client) return undefined;
  if (client === 'http' && facts.port === undefined) throw new Error('Other HTTP clients need the tool server, which is off (marginalia.server.enabled).');
  const where = configFileOf(client, project.path);
  const target = await askTarget(targetArg, client, where, `Client configuration of ${name}`);
  if (!target) return undefined;
  const planned = target === 'file' && where ? plannedFileText(where.file, where.rel, mcpServerEntry(client, facts)) : undefined;
  return deliver(d, name, client, facts, target, where, planned);
}

/** `marginalia.agents.endSession`: see {@link connectedAgentsCommands}. */
async function endSession(d: AgentCommandDeps, arg?: AgentsNode | string): Promise<boolean> {
  const id = typeof arg === 'string' ? arg : arg?.kind === 'session' ? arg.session_id : arg === undefined ? await pickSession(d) : undefined;
  if (!id) return false;
  const s = d.agent.sessions.get(id);
  if (!s) {
    d.connectedAgents.refresh();
    void vscode.window.showInformationMessage('That session has ended already.');
    return false;
  }
  // the researcher's end_session tool (src/tools/sessionTools.ts) through the pipeline, audited like every call
  const out = await d.wb.pipeline.invoke('end_session', { session_id: id }, d.wb.caller());
  d.connectedAgents.refresh();
  if (!out.envelope.success) {
    if (out.envelope.error_code !== 'TOOL_NOT_FOUND') throw new Error(out.envelope.error);
    d.agent.sessions.end(id, 'ended_by_researcher');
  }
  void vscode.window.showInformationMessage(
    `Ended ${s.owner}'s session with ${s.client_name}. The agent may connect again with its credential; Revoke Agent stops that.`,
  );
  return true;
}

/** `marginalia.agents.revoke`: see {@link connectedAgentsCommands}. */
async function revokeAgent(d: AgentCommandDeps, arg?: AgentsNode | string, confirmed?: boolean): Promise<boolean> {
  const project = d.controller.current();
  const name = arg === undefined ? await pickAgent(d) : agentNameOf(arg);
  if (!project || !name) return false;
  if (name === BUILTIN_AGENT) {
    void vscode.window.showInformationMessage(
      '"agent" is the install\'s own token (MARGINALIA_TOKEN, the discovery file): it cannot be revoked here. End its sessions instead.',
    );
    return false;
  }
  if (!d.agent.credentials.list().some((c) => c.name === name)) {
    d.connectedAgents.refresh();
    return false;
  }
  if (confirmed !== true && !(await confirmRevoke(d, name))) return false;
  const revoked = d.agent.credentials.revoke(name);
  await d.agentSecrets.delete(project.path, name);
  d.connectedAgents.refresh();
  return revoked;
}

/** The modal confirmation of Revoke Agent, naming the agent and how many of its sessions end. */
async function confirmRevoke(d: AgentCommandDeps, name: string): Promise<boolean> {
  const live = d.agent.sessions.list().filter((s) => s.owner === name).length;
  const answer = await vscode.window.showWarningMessage(
    `Revoke the agent "${name}"?`,
    {
      modal: true,
      detail: `${live > 0 ? `Its ${live === 1 ? 'session ends' : `${live} sessions end`} now and its` : 'Its'} token stops working for good. What it coded and wrote stays, recorded as ${name}'s.`,
    },
    'Revoke Agent',
  );
  return answer === 'Revoke Agent';
}
