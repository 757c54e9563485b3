/**
 * DNS rebinding (docs/architecture.md, Security: "They check the Host and Origin headers"): a page on a foreign site whose
 * name a resolver points at 127.0.0.1 sends that foreign name as Host; a page served by some other local
 * server (another port of localhost) sends its own Origin. Both are refused with 403 FORBIDDEN_HOST on every
 * HTTP-based surface — plain tool calls, the public listing, REST, server-sent events, the approval routes,
 * MCP over Streamable HTTP and the WebSocket upgrade — before any token is looked at, with no CORS header,
 * and each refusal is in the audit log. Our own names (127.0.0.1, localhost, [::1] on our port) pass.
 */
import assert from 'node:assert/strict';
import { AS_AGENT, raw, startStack, upgrade, type Stack } from './stack';

const MCP_INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'probe', version: '1' } },
};

/** Every HTTP surface: method, path, body. */
const ROUTES: { method: string; path: string; body?: unknown; headers?: Record<string, string> }[] = [
  { method: 'GET', path: '/' },
  { method: 'GET', path: '/tools' },
  { method: 'POST', path: '/tools/list_codes', body: { arguments: {} } },
  { method: 'GET', path: '/state/codes' },
  { method: 'GET', path: '/state/project' },
  { method: 'POST', path: '/commands/coding/create_code', body: { name: 'Rebound', color: '#112233' } },
  { method: 'GET', path: '/events/history' },
  { method: 'GET', path: '/events/stream' },
  { method: 'POST', path: '/session/create', body: { client_name: 'probe' } },
  { method: 'GET', path: '/approvals?status=pending' },
  { method: 'POST', path: '/mcp', body: MCP_INIT, headers: { accept: 'application/json, text/event-stream' } },
  { method: 'OPTIONS', path: '/tools/create_code' },
];

describe('security: DNS rebinding (Host and Origin) on every HTTP surface', function () {
  this.timeout(60_000);
  let s: Stack;

  before(async () => {
    s = await startStack();
  });
  after(async () => {
    await s?.close();
  });

  const foreignHosts = (port: number): (string | null)[] => [
    `evil.example:${port}`,
    'evil.example',
    `127.0.0.1:${port + 1}`,
    `localhost:${port === 65535 ? 1 : port + 1}`,
    `localhost.evil.example:${port}`,
    `127.0.0.1.nip.io:${port}`,
    `127.0.0.1:${port}.evil.example`,
    `LOCALHOST:${port}x`,
  ];
  const foreignOrigins = (port: number): string[] => [
    'http://evil.example',
    `http://evil.example:${port}`,
    `http://localhost:${port + 1}`,
    `http://127.0.0.1:${port + 1}`,
    `http://localhost:${port === 80 ? 8080 : 80}`,
    'http://localhost',
    `https://127.0.0.1:${port}`,
    `http://127.0.0.1:${port}.evil.example`,
    `http://[::1]:${port + 1}`,
    'null',
    'file://',
    'vscode-webview://abc',
  ];

  function refused(r: { status: number; headers?: Record<string, unknown>; body: any }, what: string): void {
    assert.equal(r.status, 403, `${what}: ${JSON.stringify(r.body)}`);
    assert.equal(r.body?.success, false, what);
    assert.equal(r.body?.error_code, 'FORBIDDEN_HOST', what);
    if (r.headers) assert.equal(r.headers['access-control-allow-origin'], undefined, `${what}: no CORS header`);
  }

  it('a foreign Host header is refused on every route, the refusal audited with the route', async () => {
    for (const route of ROUTES) {
      for (const host of foreignHosts(s.port)) {
        const mark = s.auditMark();
        const what = `${route.method} ${route.path} Host ${host}`;
        const r = await raw(s.port, route.method, route.path, {
          headers: { ...AS_AGENT, 'content-type': 'application/json', ...route.headers, host },
          body: route.body,
        });
        refused(r, what);
        const audited = s.auditSince(mark);
        assert.equal(audited.length, 1, `${what}: one audit line, got ${JSON.stringify(audited)}`);
        assert.deepEqual(
          [audited[0]?.tool, audited[0]?.decision, audited[0]?.error_code],
          [`${route.method} ${route.path.split('?')[0]}`, 'denied', 'FORBIDDEN_HOST'],
          what,
        );
      }
    }
  });

  it('a request without a Host header is refused: Node answers 400 (HTTP/1.1 requires one), the upgrade guard 403', async () => {
    for (const route of ROUTES) {
      const r = await raw(s.port, route.method, route.path, {
        headers: { ...AS_AGENT, 'content-type': 'application/json', ...route.headers, host: null },
        body: route.body,
      });
      assert.equal(r.status, 400, `${route.method} ${route.path}`);
    }
    // an upgrade without Host does reach the server's upgrade handler, whose guard refuses it
    refused(await upgrade(s.port, '/ws', { ...AS_AGENT, host: null }), 'upgrade without Host');
  });

  it('a foreign Origin, and localhost or 127.0.0.1 Origins of other ports, are refused on every route', async () => {
    for (const route of ROUTES) {
      for (const origin of foreignOrigins(s.port)) {
        const mark = s.auditMark();
        const what = `${route.method} ${route.path} Origin ${origin}`;
        const r = await raw(s.port, route.method, route.path, {
          headers: { ...AS_AGENT, 'content-type': 'application/json', ...route.headers, origin },
          body: route.body,
        });
        refused(r, what);
        assert.deepEqual(
          s.auditSince(mark).map((e) => [e.decision, e.error_code]),
          [['denied', 'FORBIDDEN_HOST']],
          what,
        );
      }
    }
  });

  it('the WebSocket upgrade is refused for a foreign Host or Origin before the handshake', async () => {
    for (const host of foreignHosts(s.port)) {
      const mark = s.auditMark();
      const r = await upgrade(s.port, `/ws`, { ...AS_AGENT, host });
      refused(r, `upgrade Host ${host}`);
      assert.deepEqual(
        s.auditSince(mark).map((e) => [e.tool, e.error_code]),
        [['GET /ws', 'FORBIDDEN_HOST']],
      );
    }
    for (const origin of foreignOrigins(s.port)) {
      const r = await upgrade(s.port, '/ws', { ...AS_AGENT, origin });
      refused(r, `upgrade Origin ${origin}`);
    }
    // with the token in the query string (browsers cannot set headers on a WebSocket): still refused
    const q = await upgrade(s.port, `/ws?token=${encodeURIComponent(AS_AGENT.authorization.slice(7))}`, { origin: 'http://evil.example' });
    refused(q, 'upgrade with ?token= and a foreign Origin');
  });

  it('our own names pass: 127.0.0.1, localhost and [::1] on our port, with or without a matching Origin', async () => {
    for (const host of [`127.0.0.1:${s.port}`, `localhost:${s.port}`, `[::1]:${s.port}`]) {
      for (const origin of [undefined, `http://${host}`]) {
        const r = await raw(s.port, 'POST', '/tools/list_codes', {
          headers: { ...AS_AGENT, 'content-type': 'application/json', host, ...(origin ? { origin } : {}) },
          body: { arguments: {} },
        });
        assert.equal(r.status, 200, `${host} ${origin}: ${r.text}`);
        assert.equal(r.headers['access-control-allow-origin'], undefined, 'never a CORS header');
      }
    }
    const ws = await upgrade(s.port, '/ws', { ...AS_AGENT, origin: `http://localhost:${s.port}` });
    assert.equal(ws.status, 101);
    const sse = await raw(s.port, 'GET', '/events/stream', { headers: { ...AS_AGENT, origin: `http://127.0.0.1:${s.port}` } });
    assert.equal(sse.status, 200);
  });

  it('the answer to a CORS preflight from anywhere carries no Access-Control-Allow-* header', async () => {
    const r = await raw(s.port, 'OPTIONS', '/tools/create_code', {
      headers: {
        origin: `http://127.0.0.1:${s.port}`,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type',
      },
    });
    for (const h of Object.keys(r.headers)) assert.ok(!h.startsWith('access-control-'), `${h} must not be sent`);
  });
});
