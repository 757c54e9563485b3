/**
 * Issue 14 item 6: every tool listing an agent sees states the trust level that applies to that agent. MCP
 * tools/list through the official SDK client over Streamable HTTP against `marginalia serve` (the built CLI):
 * an agent with its own credential (POST /agents), the researcher (reviewer token), and an agent session
 * whose own trust floor is `require`. GET /tools with the same credential gives the same levels.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { AS_RESEARCHER, REVIEWER_TOKEN, request, startServer, tmpDir, type ServerProcess } from '../helpers/serverProcess';

const META = 'marginalia/trust_level';

describe('e2e: MCP tools/list states the trust level that applies to the client', function () {
  this.timeout(120_000);
  let dir = '';
  let server: ServerProcess;
  let token = '';

  before(async () => {
    dir = tmpDir('marginalia-mcp-trust-');
    fs.mkdirSync(path.join(dir, '.marginalia'), { recursive: true });
    // create_code held (suggest), apply_code notify, delete_code require, reads auto
    fs.writeFileSync(
      path.join(dir, '.marginalia', 'config.yaml'),
      'agent_context:\n  trust:\n    overrides:\n      create_code: suggest\n      apply_code: notify\n      delete_code: require\n',
    );
    server = await startServer(path.join(dir, 'trust.qda'));
    const r = await request(server.base, 'POST', '/agents', { name: 'Claude' }, AS_RESEARCHER);
    assert.equal(r.status, 201, JSON.stringify(r.body));
    token = r.body.data.token;
  });
  after(async () => {
    await server?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** tools/list through the SDK client with `headers`; the client is closed after. */
  async function listed(
    headers: Record<string, string>,
  ): Promise<Map<string, { description?: string; _meta?: Record<string, unknown>; inputSchema: unknown; outputSchema?: unknown; annotations?: unknown }>> {
    const client = new Client({ name: 'trust-listing-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.base}/mcp`), { requestInit: { headers } }));
    try {
      const { tools } = await client.listTools();
      return new Map(tools.map((t) => [t.name, t]));
    } finally {
      await client.close();
    }
  }

  it("an agent's credential: each tool names its level in _meta and held tools say so in the description", async () => {
    const tools = await listed({ authorization: `Bearer ${token}` });
    assert.equal(tools.get('create_code')?._meta?.[META], 'suggest');
    assert.match(tools.get('create_code')?.description ?? '', /Trust level for you: suggest\. Your call is held .*"pending_approval"/);
    assert.equal(tools.get('apply_code')?._meta?.[META], 'notify');
    assert.match(tools.get('apply_code')?.description ?? '', /Trust level for you: notify/);
    assert.equal(tools.get('delete_code')?._meta?.[META], 'require');
    assert.equal(tools.get('list_codes')?._meta?.[META], 'auto');
    assert.doesNotMatch(tools.get('list_codes')?.description ?? '', /Trust level for you/);
    // a researcher-only tool an agent can see but never call
    const researcherOnly = [...tools].filter(([, t]) => t._meta?.[META] === 'researcher_only').map(([name]) => name);
    assert.ok(researcherOnly.includes('end_session'), researcherOnly.join(', '));
    // every tool carries a level, and the schemas are still there
    for (const [name, t] of tools) {
      assert.ok(['auto', 'notify', 'suggest', 'require', 'researcher_only'].includes(t._meta?.[META] as string), `${name}: ${JSON.stringify(t._meta)}`);
      assert.equal((t.inputSchema as { type?: string }).type, 'object', name);
      assert.equal((t.outputSchema as { type?: string } | undefined)?.type, 'object', name);
    }
    assert.deepEqual(tools.get('list_codes')?.annotations, {
      title: 'List Codes',
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    });

    // GET /tools with the same credential gives the same levels
    const http = await request(server.base, 'GET', '/tools', undefined, { authorization: `Bearer ${token}` });
    const viaHttp = new Map((http.body.tools as { name: string; trust_level: string; description: string }[]).map((t) => [t.name, t]));
    assert.equal(viaHttp.size, tools.size);
    for (const [name, t] of tools) {
      assert.equal(viaHttp.get(name)?.trust_level, t._meta?.[META], name);
      assert.equal(viaHttp.get(name)?.description, t.description, name);
    }
  });

  it('the researcher: every tool auto, descriptions without the held words', async () => {
    const tools = await listed({ authorization: `Bearer ${REVIEWER_TOKEN}` });
    for (const [name, t] of tools) {
      assert.equal(t._meta?.[META], 'auto', name);
      assert.doesNotMatch(t.description ?? '', /Trust level for you/, name);
    }
  });

  it('an agent session whose own trust floor is require: even reads are listed as require', async () => {
    const s = await request(
      server.base,
      'POST',
      '/session/create',
      { client_type: 'ASSISTANT_A_CLI', client_name: 'careful', trust_level: 'require' },
      { authorization: `Bearer ${token}` },
    );
    assert.equal(s.status, 200, JSON.stringify(s.body));
    const tools = await listed({ authorization: `Bearer ${token}`, 'x-marginalia-session': s.body.data.session_id });
    assert.equal(tools.get('list_codes')?._meta?.[META], 'require');
    assert.match(tools.get('list_codes')?.description ?? '', /Trust level for you: require/);
    assert.equal(tools.get('create_code')?._meta?.[META], 'require');
  });
});
