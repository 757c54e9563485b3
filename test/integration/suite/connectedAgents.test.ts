// Runs in the REAL VS Code extension host (test/integration/run.mjs): Connect an Agent and the Connected Agents
// view (issue 14, items 2 and 3). Connect an Agent, given its answers as arguments (name, client, target), issues a
// named credential and writes Claude Code's .mcp.json beside the other servers already there; the official MCP
// client, configured from nothing but that file's url and headers, reaches the extension's tool server as that
// agent; the view lists the agent as connected with its client, its session and its pending request; End Session
// ends the session (event reason ended_by_researcher) and Revoke Agent takes the credential away (the client is
// refused after). The clipboard target writes Cursor's format, never an editor. The suites share one extension
// host: what this suite creates (agents, .mcp.json, the project) is removed again.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as os from 'node:os';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import * as vscode from 'vscode';
import { agentCredentialsPath } from '../../../src/cli/credentials';
import type { MarginaliaApi } from '../../../src/extension';
import { mcpServerEntry } from '../../../src/ui/agents/clientConfig';
import type { AgentsNode } from '../../../src/ui/agents/connectedAgentsView';
import { until } from './support';

const EXTENSION_ID = 'marginalia.marginalia';
const AGENT = 'Claude coding pass 2';
const CLIP_AGENT = 'Cursor helper';
const STDIO_AGENT = 'Stdio agent';

function labelOf(item: vscode.TreeItem): string {
  return typeof item.label === 'string' ? item.label : (item.label?.label ?? '');
}

describe('Connected Agents in VS Code', function () {
  this.timeout(120_000);
  let api: MarginaliaApi;
  let port = 0;
  const ws = () => vscode.workspace.workspaceFolders![0]!.uri.fsPath;
  const projectFile = () => path.join(ws(), 'connected-agents', 'agents.qda');
  const mcpJson = () => path.join(ws(), '.mcp.json');
  let savedMcpJson: string | undefined;
  let client: Client | undefined;
  let entry: { type: string; url: string; headers: Record<string, string> };
  const ids = { trust: 0, belonging: 0, session: '', request: '' };
  let sessionsBefore = new Set<string>();

  const invoke = async (tool: string, args: Record<string, unknown>) => {
    const out = await api.workbench.pipeline.invoke(tool, args, api.workbench.caller());
    assert.ok(out.envelope.success, `${tool}: ${JSON.stringify(out.envelope)}`);
    return out.envelope.data as Record<string, any>;
  };
  const row = (name: string) => api.connectedAgents.agents().find((a) => a.name === name);
  const connectClient = async (e: { url: string; headers: Record<string, string> }, name: string) => {
    const c = new Client({ name, version: '1.0.0' });
    await c.connect(new StreamableHTTPClientTransport(new URL(e.url), { requestInit: { headers: e.headers } }));
    return c;
  };

  before(async () => {
    const ext = vscode.extensions.getExtension<MarginaliaApi>(EXTENSION_ID);
    assert.ok(ext);
    api = await ext.activate();
    sessionsBefore = new Set(api.agent.sessions.list().map((s) => s.session_id));
    fs.mkdirSync(path.join(path.dirname(projectFile()), '.marginalia'), { recursive: true });
    // the suites share one extension host, each agent client its own session: room for all of them
    fs.writeFileSync(path.join(path.dirname(projectFile()), '.marginalia', 'config.yaml'), 'agent_context:\n  sessions:\n    max_concurrent: 50\n');
    if (fs.existsSync(projectFile())) fs.rmSync(projectFile());
    await vscode.commands.executeCommand('marginalia.project.new', projectFile());
    const state = api.controller.serverState;
    assert.equal(state.state, 'running');
    port = state.state === 'running' ? state.port : 0;
    ids.trust = (await invoke('create_code', { name: 'Trust', color: '#E15759' })).code_id;
    ids.belonging = (await invoke('create_code', { name: 'Belonging', color: '#4E79A7' })).code_id;
    savedMcpJson = fs.existsSync(mcpJson()) ? fs.readFileSync(mcpJson(), 'utf8') : undefined;
    // the researcher's Claude Code already knows another server
    fs.writeFileSync(mcpJson(), `${JSON.stringify({ mcpServers: { github: { command: 'github-mcp', args: ['--read-only'] } } }, null, 2)}\n`);
  });

  after(async () => {
    await client?.close().catch(() => undefined);
    // the suites share one extension host and an agent token's implicit session is labelled by its first client:
    // sessions this suite opened (the stdio forward acts with the install's token) end here
    for (const s of api.agent.sessions.list())
      if (s.owner !== 'researcher' && !sessionsBefore.has(s.session_id)) api.agent.sessions.end(s.session_id, 'ended_by_researcher');
    for (const name of [AGENT, CLIP_AGENT, STDIO_AGENT]) if (api.agent.credentials.list().some((c) => c.name === name)) api.agent.credentials.revoke(name);
    if (ids.request && api.agent.listApprovals('pending').some((a) => a.request_id === ids.request)) await api.approvals.reject(ids.request, 'test cleanup');
    if (savedMcpJson === undefined) fs.rmSync(mcpJson(), { force: true });
    else fs.writeFileSync(mcpJson(), savedMcpJson);
    await vscode.commands.executeCommand('marginalia.project.close');
  });

  it('Connect an Agent issues a named credential and merges its configuration into .mcp.json', async () => {
    const before = new Set(vscode.workspace.textDocuments.map((d) => d.uri.toString()));
    const result = await vscode.commands.executeCommand<any>('marginalia.agents.connect', AGENT, 'claude-code', 'file');
    assert.deepEqual(result, { name: AGENT, client: 'claude-code', target: 'file', transport: 'http', file: mcpJson() });
    const listed = api.agent.credentials.list().find((c) => c.name === AGENT);
    assert.ok(listed, JSON.stringify(api.agent.credentials.list()));
    assert.equal(listed.last_used_at, null);

    const written = JSON.parse(fs.readFileSync(mcpJson(), 'utf8'));
    assert.deepEqual(Object.keys(written.mcpServers), ['github', 'marginalia'], 'the other server is kept');
    assert.deepEqual(written.mcpServers.github, { command: 'github-mcp', args: ['--read-only'] });
    entry = written.mcpServers.marginalia;
    assert.equal(entry.type, 'http');
    assert.equal(entry.url, `http://127.0.0.1:${port}/mcp`);
    assert.equal(entry.headers['X-Marginalia-Client'], 'Claude Code');
    const token = /^Bearer (\S+)$/.exec(entry.headers.Authorization ?? '')?.[1];
    assert.ok(token && token.length >= 40, entry.headers.Authorization);
    assert.notEqual(token, api.tokens.agent, "the agent's own credential, not the install's shared token");
    assert.notEqual(token, api.tokens.reviewer);
    // kept where `marginalia agent list --project P` reads it, as a hash only
    const stored = fs.readFileSync(agentCredentialsPath(projectFile()), 'utf8');
    assert.deepEqual(
      (JSON.parse(stored).agents as { name: string }[]).map((a) => a.name),
      [AGENT],
    );
    assert.ok(!stored.includes(token), 'the token itself is not stored');
    // the token is in no editor: no document was opened, and no open document holds it
    const opened = vscode.workspace.textDocuments.filter((d) => !before.has(d.uri.toString()));
    assert.deepEqual(
      opened.map((d) => d.uri.toString()),
      [],
    );
    assert.ok(vscode.workspace.textDocuments.every((d) => !d.getText().includes(token)));
    // the same name again is refused (the command reports it and issues nothing)
    assert.equal(await vscode.commands.executeCommand('marginalia.agents.connect', AGENT.toUpperCase(), 'claude-code', 'clipboard'), undefined);
    assert.equal(await vscode.commands.executeCommand('marginalia.agents.connect', 'researcher', 'http', 'clipboard'), undefined);
    assert.equal(api.agent.credentials.list().filter((c) => c.name.toLowerCase() === AGENT.toLowerCase() || c.name === 'researcher').length, 1);
  });

  it('an MCP client configured from .mcp.json connects as the agent; the view lists it with its session and request', async () => {
    client = await connectClient(entry, 'Claude Code');
    const listedCodes = await client.callTool({ name: 'list_codes', arguments: {} });
    assert.notEqual(listedCodes.isError, true, JSON.stringify(listedCodes));
    // a call held for the researcher: counted on the agent's row
    const merge = await client.callTool({ name: 'merge_codes', arguments: { source_code_id: ids.trust, target_code_id: ids.belonging } });
    ids.request = (merge.structuredContent as { request_id?: string } | undefined)?.request_id ?? '';
    assert.ok(ids.request, JSON.stringify(merge));

    const agentRow = await until('the agent connected, with its pending request', () => {
      const r = row(AGENT);
      return r && r.state === 'connected' && r.pending === 1 ? r : undefined;
    });
    assert.equal(agentRow.sessions.length, 1, JSON.stringify(agentRow.sessions.map((s) => [s.client_name, s.owner])));
    const session = agentRow.sessions[0]!;
    assert.equal(session.owner, AGENT);
    assert.equal(session.client_name, 'Claude Code');
    ids.session = session.session_id;
    assert.ok(api.agent.credentials.list().find((c) => c.name === AGENT)?.last_used_at, 'the credential records its use');

    // what VS Code draws: the agent's row among the roots, its session as the child
    const roots = api.connectedAgents.getChildren();
    const node = roots.find((n) => n.kind === 'agent' && n.name === AGENT);
    assert.ok(node, JSON.stringify(roots));
    const item = api.connectedAgents.getTreeItem(node);
    assert.equal(labelOf(item), AGENT);
    assert.equal(item.contextValue, 'agent');
    assert.equal(item.collapsibleState, vscode.TreeItemCollapsibleState.Expanded);
    assert.match(String(item.description), /^connected · Claude Code · active just now · 1 request waits$/, String(item.description));
    const children = api.connectedAgents.getChildren(node);
    assert.deepEqual(children, [{ kind: 'session', agent: AGENT, session_id: ids.session }]);
    const sessionItem = api.connectedAgents.getTreeItem(children[0]!);
    assert.equal(labelOf(sessionItem), 'Claude Code');
    assert.equal(sessionItem.contextValue, 'agentSession');
    assert.match(String(sessionItem.description), /^active · active just now$/);
  });

  it('End Session ends the agent session; the agent shows as not connected', async () => {
    const seq = api.agent.headSeq();
    const sessionNode: AgentsNode = { kind: 'session', agent: AGENT, session_id: ids.session };
    assert.equal(await vscode.commands.executeCommand('marginalia.agents.endSession', sessionNode), true);
    assert.equal(api.agent.sessions.get(ids.session), undefined);
    const ended = await until('session.disconnected', () =>
      api.agent.history(seq, 50, ['session.disconnected']).find((e) => e.payload.session_id === ids.session),
    );
    assert.equal(ended.payload.reason, 'ended_by_researcher');
    const r = await until('the row without sessions', () => (row(AGENT)?.sessions.length === 0 ? row(AGENT) : undefined));
    assert.equal(r.state, 'not connected');
    const item = api.connectedAgents.getTreeItem({ kind: 'agent', name: AGENT });
    assert.match(String(item.description), /^not connected · active (just now|1 min ago) · 1 request waits$/, String(item.description));
    assert.equal(item.collapsibleState, vscode.TreeItemCollapsibleState.None);
    // ending is not revoking: the credential still works and opens a new session
    const again = await client!.callTool({ name: 'list_codes', arguments: {} });
    assert.notEqual(again.isError, true, JSON.stringify(again));
    await until('a new session', () => row(AGENT)?.sessions.some((s) => s.session_id !== ids.session));
  });

  it('Revoke Agent ends its sessions and refuses its token', async () => {
    const live = row(AGENT)!.sessions.map((s) => s.session_id);
    assert.ok(live.length > 0);
    assert.equal(await vscode.commands.executeCommand('marginalia.agents.revoke', { kind: 'agent', name: AGENT } satisfies AgentsNode, true), true);
    assert.equal(
      api.agent.credentials.list().some((c) => c.name === AGENT),
      false,
    );
    for (const id of live) assert.equal(api.agent.sessions.get(id), undefined, 'its sessions ended at once');
    await until('the agent gone from the view', () => !api.connectedAgents.getChildren().some((n) => n.kind === 'agent' && n.name === AGENT));
    // the same client, the same configuration: refused now
    const refused = await client!.callTool({ name: 'list_codes', arguments: {} }).then(
      (r) => (r.isError ? 'error result' : `accepted: ${JSON.stringify(r)}`),
      (e: Error) => `thrown: ${e.message}`,
    );
    assert.doesNotMatch(refused, /^accepted/, refused);
    assert.equal(
      api.agent.sessions.list().some((s) => s.owner === AGENT),
      false,
    );
  });

  it("the clipboard target holds Cursor's configuration, and the welcome state offers Connect an Agent", async () => {
    const result = await vscode.commands.executeCommand<any>('marginalia.agents.connect', CLIP_AGENT, 'cursor', 'clipboard');
    assert.deepEqual(result, { name: CLIP_AGENT, client: 'cursor', target: 'clipboard', transport: 'http' });
    const text = await vscode.env.clipboard.readText();
    const cursor = JSON.parse(text).mcpServers.marginalia;
    assert.equal(cursor.type, undefined, 'Cursor infers the transport from url');
    assert.equal(cursor.url, `http://127.0.0.1:${port}/mcp`);
    assert.match(cursor.headers.Authorization, /^Bearer \S{40,}$/);
    assert.equal(cursor.headers['X-Marginalia-Client'], 'Cursor');
    await vscode.env.clipboard.writeText('');
    await until('the agent listed', () => row(CLIP_AGENT)?.state === 'not connected');
    assert.equal(await vscode.commands.executeCommand('marginalia.agents.revoke', CLIP_AGENT, true), true);
    const pkg = vscode.extensions.getExtension(EXTENSION_ID)!.packageJSON as { contributes: { viewsWelcome: { view: string; contents: string }[] } };
    assert.ok(pkg.contributes.viewsWelcome.some((w) => w.view === 'marginalia.agents' && w.contents.includes('(command:marginalia.agents.connect)')));
  });

  it("the stdio configuration (made while the tool server is off) runs under VS Code's own runtime with no node on the PATH", async function () {
    this.timeout(60_000);
    const result = await vscode.commands.executeCommand<any>('marginalia.agents.connect', STDIO_AGENT, 'claude-code', 'clipboard');
    assert.equal(result?.name, STDIO_AGENT);
    const token = /^Bearer (\S+)$/.exec(JSON.parse(await vscode.env.clipboard.readText()).mcpServers.marginalia.headers.Authorization)?.[1];
    await vscode.env.clipboard.writeText('');
    assert.ok(token);
    // what Connect an Agent writes when the tool server is off (marginalia.server.enabled false)
    const ext = vscode.extensions.getExtension(EXTENSION_ID)!;
    const stdio = mcpServerEntry('claude-code', {
      port: undefined,
      token,
      projectPath: projectFile(),
      cli: path.join(ext.extensionPath, 'bin', 'marginalia.js'),
      execPath: process.execPath,
    }) as {
      type: string;
      command: string;
      args: string[];
      env: Record<string, string>;
    };
    assert.equal(stdio.type, 'stdio');
    assert.equal(stdio.command, process.execPath);
    assert.equal(stdio.env.ELECTRON_RUN_AS_NODE, '1');
    // an empty PATH: nothing named node can be found; `marginalia mcp` forwards to this window's server (discovery file)
    const emptyBin = fs.mkdtempSync(path.join(os.tmpdir(), 'no-node-'));
    const c = new Client({ name: 'Claude Code', version: '1.0.0' });
    try {
      await c.connect(
        new StdioClientTransport({ command: stdio.command, args: stdio.args, env: { HOME: os.homedir(), ...stdio.env, PATH: emptyBin }, stderr: 'pipe' }),
      );
      const r = await c.callTool({ name: 'list_codes', arguments: {} });
      assert.notEqual(r.isError, true, JSON.stringify(r));
      const names = ((r.structuredContent as { codes?: { name: string }[] }).codes ?? []).map((x) => x.name);
      assert.ok(names.includes('Trust'), JSON.stringify(r.structuredContent));
    } finally {
      await c.close().catch(() => undefined);
      fs.rmSync(emptyBin, { recursive: true, force: true });
    }
    assert.equal(await vscode.commands.executeCommand('marginalia.agents.revoke', STDIO_AGENT, true), true);
  });

  // `marginalia mcp` forwards to the window's server with MARGINALIA_TOKEN, the agent's own credential
  it('the stdio configuration connects as the named agent, not as the install token', async () => {
    const result = await vscode.commands.executeCommand<any>('marginalia.agents.connect', STDIO_AGENT, 'claude-code', 'clipboard');
    const token = /^Bearer (\S+)$/.exec(JSON.parse(await vscode.env.clipboard.readText()).mcpServers.marginalia.headers.Authorization)?.[1];
    assert.ok(result && token);
    const ext = vscode.extensions.getExtension(EXTENSION_ID)!;
    const stdio = mcpServerEntry('claude-code', {
      port: undefined,
      token,
      projectPath: projectFile(),
      cli: path.join(ext.extensionPath, 'bin', 'marginalia.js'),
      execPath: process.execPath,
    }) as { command: string; args: string[]; env: Record<string, string> };
    const c = new Client({ name: 'Claude Code', version: '1.0.0' });
    try {
      await c.connect(
        new StdioClientTransport({
          command: stdio.command,
          args: stdio.args,
          env: { HOME: os.homedir(), PATH: process.env.PATH ?? '', ...stdio.env },
          stderr: 'pipe',
        }),
      );
      await c.callTool({ name: 'list_codes', arguments: {} });
      const mine = await until('the stdio agent connected', () => row(STDIO_AGENT)?.sessions[0]);
      assert.equal(mine.owner, STDIO_AGENT);
    } finally {
      await c.close().catch(() => undefined);
      await vscode.commands.executeCommand('marginalia.agents.revoke', STDIO_AGENT, true);
    }
  });
});
