/**
 * Configuration that means what it says (issue 14, item 7): `agent_context.protocols.<name>.enabled: false`
 * removes that surface from `marginalia serve` (src/cli/surfaces.ts): REST and SSE routes answer 404, the
 * WebSocket upgrade is refused, /mcp answers 404, while the HTTP tool interface still works; the start-up log
 * names the surfaces on and off; `qda://project/settings` says what is served (gRPC from --grpc-port included).
 * Real CLI processes on 127.0.0.1, the `ws` client and the official MCP client.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import WebSocket from 'ws';
import { AGENT_TOKEN, AS_AGENT, request, startServer, tmpDir, type ServerProcess } from '../helpers/serverProcess';

/** Resolves with the HTTP status of a refused upgrade, or 101 when the WebSocket opened. */
function upgradeStatus(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers: AS_AGENT });
    ws.once('open', () => {
      ws.close();
      resolve(101);
    });
    ws.once('unexpected-response', (_req, res) => {
      resolve(res.statusCode ?? 0);
      ws.terminate();
    });
    ws.once('error', (e) => reject(e));
  });
}

describe('e2e: protocols.<name>.enabled switches surfaces', function () {
  this.timeout(120_000);
  let dir: string;
  const servers: ServerProcess[] = [];

  before(() => {
    dir = tmpDir('marginalia-surfaces-');
  });
  after(async () => {
    for (const s of servers) await s.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('with rest, websocket and mcp off: 404 on their routes, a refused upgrade, the tool interface still answers, and the log says so', async () => {
    const project = path.join(dir, 'off', 'p.qda');
    fs.mkdirSync(path.join(dir, 'off', '.marginalia'), { recursive: true });
    fs.writeFileSync(
      path.join(dir, 'off', '.marginalia', 'config.yaml'),
      'agent_context:\n  protocols:\n    rest:\n      enabled: false\n    websocket:\n      enabled: false\n    mcp:\n      enabled: false\n',
    );
    const s = await startServer(project);
    servers.push(s);
    assert.equal((await request(s.base, 'POST', '/tools/list_codes', { arguments: {} }, AS_AGENT)).status, 200);
    assert.equal((await request(s.base, 'GET', '/state/project', undefined, AS_AGENT)).status, 404);
    assert.equal((await request(s.base, 'GET', '/events/history', undefined, AS_AGENT)).status, 404);
    assert.equal((await request(s.base, 'POST', '/session/create', { client_type: 'CUSTOM', client_name: 'x' }, AS_AGENT)).status, 404);
    assert.equal(
      (await request(s.base, 'POST', '/mcp', { jsonrpc: '2.0', id: 1, method: 'ping' }, { ...AS_AGENT, accept: 'application/json, text/event-stream' })).status,
      404,
    );
    assert.equal(await upgradeStatus(`ws://127.0.0.1:${s.port}/ws`), 404);
    await new Promise((r) => setTimeout(r, 200));
    assert.match(s.stderr(), /serving http on 127\.0\.0\.1:\d+; off: rest, websocket, mcp, grpc/);
    assert.match(s.stdout(), /Surfaces: +http \(agent_context.protocols/);
  });

  it("records project.opened when serve starts and project.closed when it stops (the spec's ProjectOpened / ProjectClosed)", async () => {
    const project = path.join(dir, 'events', 'p.qda');
    fs.mkdirSync(path.dirname(project), { recursive: true });
    const first = await startServer(project, [], { MARGINALIA_CODER: 'Dr Rivera' });
    const history = async (s: ServerProcess) =>
      (await request(s.base, 'GET', '/events/history?since=0&patterns=project.*', undefined, AS_AGENT)).body.data.events as {
        event_type: string;
        payload: Record<string, unknown>;
        caused_by: { user: string };
      }[];
    const atStart = await history(first);
    assert.deepEqual(
      atStart.map((e) => e.event_type),
      ['project.opened'],
    );
    assert.deepEqual(atStart[0]?.payload, { project_name: 'p', host: 'serve' });
    assert.equal(atStart[0]?.caused_by.user, 'Dr Rivera');
    assert.equal(await first.stop(), 0);
    const second = await startServer(project);
    servers.push(second);
    assert.deepEqual(
      (await history(second)).map((e) => e.event_type),
      ['project.opened', 'project.closed', 'project.opened'],
    );
  });

  it('by default: REST, SSE, WebSocket and MCP on; gRPC from --grpc-port is on, and qda://project/settings says so', async () => {
    const project = path.join(dir, 'on', 'p.qda');
    fs.mkdirSync(path.dirname(project), { recursive: true });
    const s = await startServer(project, ['--grpc-port', '0', '--grpc-certs', path.join(dir, 'certs')]);
    servers.push(s);
    assert.equal((await request(s.base, 'GET', '/state/project', undefined, AS_AGENT)).status, 200);
    assert.equal(await upgradeStatus(`ws://127.0.0.1:${s.port}/ws`), 101);
    const grpcPort = Number(/gRPC \(mutual TLS\) at 127\.0\.0\.1:(\d+)/.exec(s.stdout())?.[1]);
    assert.ok(grpcPort > 0, s.stdout());
    const client = new Client({ name: 'surfaces-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${s.base}/mcp`), { requestInit: { headers: { authorization: `Bearer ${AGENT_TOKEN}` } } }));
    try {
      const read = await client.readResource({ uri: 'qda://project/settings' });
      const settings = JSON.parse((read.contents[0] as { text: string }).text) as {
        agent_context: { protocols: Record<string, { enabled: boolean; port: number }> };
        served: { port: number; grpc_port: number; surfaces: string[] };
      };
      assert.deepEqual(settings.served.surfaces, ['http', 'rest', 'sse', 'websocket', 'mcp', 'grpc']);
      assert.equal(settings.served.port, s.port);
      assert.equal(settings.served.grpc_port, grpcPort);
      // the file says grpc is off (the default); what runs is on, on the port given
      assert.deepEqual(settings.agent_context.protocols.grpc, { enabled: true, port: grpcPort });
      assert.equal(settings.agent_context.protocols.mcp?.enabled, true);
    } finally {
      await client.close();
    }
  });
});
