/**
 * Issue 14 item 10: a 2025-11-25 (legacy) MCP client over stdio gets change notifications also when
 * `marginalia mcp` forwards to the process that owns the project. The official SDK client (legacy era, its
 * default) launches the built CLI; the owner is `marginalia serve` or another `marginalia mcp` that opened
 * the project. The researcher changes the codebook over the owner's HTTP server; the client sees
 * `notifications/resources/updated` for the URI it subscribed (and only for subscribed URIs) and
 * `notifications/resources/list_changed`.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { AGENT_TOKEN, callTool, REPO_ROOT, REVIEWER_TOKEN, startServer, tmpDir, type ServerProcess } from '../helpers/serverProcess';

const BIN = path.join(REPO_ROOT, 'bin', 'marginalia.js');

async function until(what: string, fn: () => boolean, ms = 8000): Promise<void> {
  const end = Date.now() + ms;
  while (!fn()) {
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('e2e: legacy MCP stdio clients get change notifications through a forwarding marginalia mcp', function () {
  this.timeout(120_000);
  let dir = '';
  let home = '';

  beforeEach(() => {
    dir = tmpDir('marginalia-mcp-forward-events-');
    home = path.join(dir, '.marginalia-home');
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  async function stdioClient(project: string, name: string): Promise<{ client: Client; stderr: () => string }> {
    const env = { ...process.env, MARGINALIA_HOME: home, MARGINALIA_TOKEN: AGENT_TOKEN, MARGINALIA_REVIEWER_TOKEN: REVIEWER_TOKEN } as Record<string, string>;
    const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp', '--project', project, '--create'], env, stderr: 'pipe' });
    let err = '';
    transport.stderr?.on('data', (d: Buffer) => (err += d.toString()));
    const client = new Client({ name, version: '1.0.0' });
    await client.connect(transport);
    return { client, stderr: () => err };
  }

  for (const ownerKind of ['marginalia serve', 'marginalia mcp'] as const) {
    it(`owner ${ownerKind}: subscribed URIs are updated, others not; list changes are told; unsubscribe stops them`, async () => {
      const project = path.join(dir, 'owned.qda');
      let serve: ServerProcess | undefined;
      let owningClient: Client | undefined;
      try {
        let base: string;
        if (ownerKind === 'marginalia serve') {
          serve = await startServer(project, [], { MARGINALIA_HOME: home });
          base = serve.base;
        } else {
          owningClient = (await stdioClient(project, 'owner')).client;
          const discovery = JSON.parse(fs.readFileSync(fs.readdirSync(path.join(home, 'servers')).map((f) => path.join(home, 'servers', f))[0]!, 'utf8')) as {
            url: string;
          };
          base = discovery.url;
        }
        const { client, stderr } = await stdioClient(project, 'legacy-forwarded');
        try {
          assert.match(stderr(), /forwarding MCP to http:\/\/127\.0\.0\.1:\d+\/mcp/);
          assert.equal(client.getProtocolEra(), 'legacy');
          const caps = client.getServerCapabilities();
          assert.equal(caps?.resources?.subscribe, true, JSON.stringify(caps));
          assert.equal(caps?.resources?.listChanged, true, JSON.stringify(caps));
          const updates: string[] = [];
          let listChanges = 0;
          client.setNotificationHandler('notifications/resources/updated', (n) => void updates.push(n.params.uri));
          client.setNotificationHandler('notifications/resources/list_changed', () => void listChanges++);
          await client.subscribeResource({ uri: 'qda://codes' });

          // the researcher adds a code on the owner
          const first = await callTool(base, 'create_code', { name: 'Belonging', color: '#4E79A7' });
          assert.equal(first.status, 200, JSON.stringify(first.body));
          await until('qda://codes updated and the list changed', () => updates.includes('qda://codes') && listChanges >= 1).catch((e: Error) =>
            assert.fail(`${e.message}; forwarder stderr:\n${stderr()}`),
          );
          assert.deepEqual([...new Set(updates)], ['qda://codes'], 'only the subscribed URI is updated (not qda://project/state, qda://codes/1, ...)');

          // after unsubscribing, the next change still changes the list but updates nothing
          await client.unsubscribeResource({ uri: 'qda://codes' });
          const seen = updates.length;
          const lists = listChanges;
          const second = await callTool(base, 'create_code', { name: 'Care', color: '#F28E2B' });
          assert.equal(second.status, 200, JSON.stringify(second.body));
          await until('the second list change', () => listChanges > lists);
          await new Promise((r) => setTimeout(r, 200));
          assert.equal(updates.length, seen, `no update after unsubscribing: ${JSON.stringify(updates.slice(seen))}`);

          // the forwarded calls still reach the owner
          const codes = await client.callTool({ name: 'list_codes', arguments: {} });
          assert.equal((codes.structuredContent as { count: number }).count, 2);
        } finally {
          await client.close();
        }
      } finally {
        await owningClient?.close();
        await serve?.stop();
      }
    });
  }
});
