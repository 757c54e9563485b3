/**
 * `marginalia mcp` (stdio) with an agent's own credential (issue 14 item 2): the official MCP SDK client
 * launches the built CLI with `MARGINALIA_TOKEN` set to a named agent's token, as Connect an Agent's stdio
 * configuration does. Whether the process forwards to the project's owner (`marginalia serve`, found
 * through its discovery file) or owns the project itself, the agent's session belongs to its own name,
 * never to the install's shared `agent` token; a token nobody issued is refused, never replaced.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { AS_RESEARCHER, REPO_ROOT, REVIEWER_TOKEN, request, startServer, tmpDir, type ServerProcess } from '../helpers/serverProcess';

const BIN = path.join(REPO_ROOT, 'bin', 'marginalia.js');

describe('e2e: marginalia mcp over stdio acts as the named agent whose token it is given', function () {
  this.timeout(120_000);
  let dir = '';
  let home = '';

  beforeEach(() => {
    dir = tmpDir('marginalia-mcp-stdio-agent-');
    home = path.join(dir, '.marginalia-home');
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  /** The SDK client over stdio: `marginalia mcp --project P --create` with `token` as MARGINALIA_TOKEN. */
  async function stdioClient(project: string, token: string): Promise<{ client: Client; stderr: () => string }> {
    const env = { ...process.env, MARGINALIA_HOME: home, MARGINALIA_TOKEN: token, MARGINALIA_REVIEWER_TOKEN: REVIEWER_TOKEN } as Record<string, string>;
    const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp', '--project', project, '--create'], env, stderr: 'pipe' });
    let err = '';
    transport.stderr?.on('data', (d: Buffer) => (err += d.toString()));
    const client = new Client({ name: 'Claude Code', version: '1.0.0' });
    await client.connect(transport);
    return { client, stderr: () => err };
  }

  /** The researcher's view of the agent sessions of a server. */
  async function agentSessions(base: string): Promise<{ agent: string | null; client_name: string }[]> {
    const r = await request(base, 'GET', '/sessions', undefined, AS_RESEARCHER);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return (r.body.data.sessions as { role: string; agent: string | null; client_name: string }[]).filter((s) => s.role === 'agent');
  }

  it("forwarding to the owner: the session is the named agent's, its held call is its own; an unknown token is refused", async () => {
    const project = path.join(dir, 'owned.qda');
    let owner: ServerProcess | undefined;
    try {
      owner = await startServer(project, [], { MARGINALIA_HOME: home });
      const issued = await request(owner.base, 'POST', '/agents', { name: 'Stdio Agent' }, AS_RESEARCHER);
      assert.equal(issued.status, 201, JSON.stringify(issued.body));
      const { client, stderr } = await stdioClient(project, issued.body.data.token);
      try {
        const r = await client.callTool({ name: 'create_code', arguments: { name: 'Forwarded', color: '#59A14F' } });
        const pending = r.structuredContent as { status: string; request_id: string };
        assert.equal(pending.status, 'pending_approval', JSON.stringify(r));
        assert.match(stderr(), /forwarding MCP to http:\/\/127\.0\.0\.1:\d+\/mcp/);
        const sessions = await agentSessions(owner.base);
        assert.deepEqual(
          sessions.map((s) => s.agent),
          ['Stdio Agent'],
          JSON.stringify(sessions),
        );
        // the request is the agent's: approving it records the named agent as its author
        const approved = await request(owner.base, 'POST', `/approvals/${pending.request_id}/approve`, {}, AS_RESEARCHER);
        assert.equal(approved.status, 200, JSON.stringify(approved.body));
        const history = await request(owner.base, 'GET', '/events/history?patterns=coding.*', undefined, AS_RESEARCHER);
        const created = (history.body.data.events as { event_type: string; caused_by: { role?: string; coder?: string } }[]).find(
          (e) => e.event_type === 'coding.code_created',
        );
        assert.equal(created?.caused_by.role, 'agent', JSON.stringify(history.body).slice(0, 1500));
        assert.equal(created?.caused_by.coder, 'Stdio Agent', JSON.stringify(created));
      } finally {
        await client.close();
      }
      // a token nobody issued is refused by the owner, not replaced by the owner's own token
      const stranger = await stdioClient(project, 'not-a-token-anybody-issued-0123456789').catch((e: unknown) => e as Error);
      if (!(stranger instanceof Error)) {
        try {
          const r = await stranger.client.callTool({ name: 'list_codes', arguments: {} }).catch((e: unknown) => ({ isError: true, thrown: String(e) }));
          assert.equal(r.isError, true, JSON.stringify(r));
        } finally {
          await stranger.client.close();
        }
      }
      assert.deepEqual(
        (await agentSessions(owner.base)).map((s) => s.agent),
        ['Stdio Agent'],
        'no session was opened for the unknown token',
      );
    } finally {
      await owner?.stop();
    }
  });

  it("owning the project: the session is the named agent's; the install token stays the built-in agent", async () => {
    const project = path.join(dir, 'own.qda');
    const token = execFileSync(process.execPath, [BIN, 'agent', 'add', 'Owner Agent', '--project', project], {
      env: { ...process.env, MARGINALIA_HOME: home },
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    }).trim();
    assert.match(token, /^[A-Za-z0-9_-]{43}$/);
    const { client, stderr } = await stdioClient(project, token);
    try {
      const r = await client.callTool({ name: 'create_code', arguments: { name: 'Owned', color: '#59A14F' } });
      assert.equal((r.structuredContent as { status: string }).status, 'pending_approval', JSON.stringify(r));
      assert.match(stderr(), /serving MCP on stdio/);
      const discovery = JSON.parse(fs.readFileSync(fs.readdirSync(path.join(home, 'servers')).map((f) => path.join(home, 'servers', f))[0]!, 'utf8')) as {
        url: string;
        token: string;
      };
      assert.notEqual(discovery.token, token, "the discovery file names the install's token, never the agent's");
      const sessions = await agentSessions(discovery.url);
      assert.deepEqual(
        sessions.map((s) => s.agent),
        ['Owner Agent'],
        JSON.stringify(sessions),
      );
      // the install's own token is still the agent named `agent`
      const builtin = await request(
        discovery.url,
        'POST',
        '/tools/list_codes',
        { arguments: {} },
        { authorization: `Bearer ${discovery.token}`, 'x-marginalia-client': 'builtin' },
      );
      assert.equal(builtin.status, 200, JSON.stringify(builtin.body));
      assert.deepEqual((await agentSessions(discovery.url)).map((s) => s.agent).sort(), ['Owner Agent', 'agent']);
    } finally {
      await client.close();
    }
  });
});
