/**
 * Credentials on every adapter (docs/agents.md, "Tokens"; agent-context spec, section 5):
 * - HTTP, REST, server-sent events, approvals, MCP over Streamable HTTP: no token, an empty one, a wrong one,
 *   a prefix, a token in the query string where only headers count: 401 UNAUTHORIZED with
 *   `WWW-Authenticate: Bearer`, audited as denied;
 * - WebSocket: the upgrade is refused with 401 before the handshake (header or `?token=`);
 * - sessions: a session named with another credential's token (an agent borrowing the researcher's session id,
 *   which every event's caused_by shows) is 403 SESSION_FORBIDDEN; an unknown session 401 SESSION_NOT_FOUND;
 * - gRPC (mutual TLS): no client certificate or one from another CA never completes the handshake; a
 *   certificate of our CA without a known role (OU) is UNAUTHENTICATED; another certificate's session is
 *   SESSION_NOT_FOUND;
 * - the CLI adapter: a wrong or missing token is UNAUTHORIZED, locally and when forwarding to a server;
 * - reviewer-only actions (approve, reject) with the agent token are 403 APPROVAL_FORBIDDEN on HTTP, WebSocket,
 *   gRPC and the CLI adapter; claiming the client type LOCAL_UI gives no rights.
 * Every refusal that reaches the server is in the audit log.
 */
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import WebSocket from 'ws';
import { LocalCliBackend, runCommand } from '../../src/adapters/cli/cliAdapter';
import { ForwardCliBackend } from '../../src/adapters/cli/forwardBackend';
import { isToolError } from '../../src/core/errors';
import {
  AS_AGENT,
  AS_RESEARCHER,
  TOKENS,
  clientCert,
  grpcClient,
  grpcUnary,
  oddCert,
  raw,
  startStack,
  tmp,
  upgrade,
  type GrpcClient,
  type Stack,
} from './stack';

const MCP_INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'probe', version: '1' } },
};

/** Every HTTP route that needs a token. */
const ROUTES: { method: string; path: string; body?: unknown; headers?: Record<string, string> }[] = [
  { method: 'POST', path: '/tools/list_codes', body: { arguments: {} } },
  { method: 'POST', path: '/tools/create_code', body: { arguments: { name: 'X', color: '#123456' } } },
  { method: 'GET', path: '/state/codes' },
  { method: 'GET', path: '/state/sources/1/content' },
  { method: 'POST', path: '/commands/coding/create_code', body: { name: 'Y', color: '#123456' } },
  { method: 'GET', path: '/events/history' },
  { method: 'GET', path: '/events/stream' },
  { method: 'POST', path: '/session/create', body: { client_name: 'probe' } },
  { method: 'POST', path: '/session/heartbeat', body: { session_id: 'x' } },
  { method: 'GET', path: '/approvals' },
  { method: 'POST', path: '/approvals/abc/approve', body: {} },
  { method: 'POST', path: '/approvals/abc/reject', body: {} },
  { method: 'POST', path: '/mcp', body: MCP_INIT, headers: { accept: 'application/json, text/event-stream' } },
  { method: 'DELETE', path: '/mcp' },
];

/** Authorization header values that must not get in (undefined: no header at all). */
const BAD_AUTH: (string | undefined)[] = [
  undefined,
  '',
  'Bearer',
  'Bearer ',
  'Bearer wrong-token',
  `Bearer ${TOKENS.agent}x`,
  `Bearer ${TOKENS.agent.slice(0, -1)}`,
  `Bearer ${TOKENS.agent.toUpperCase()}`,
  `Basic ${Buffer.from(`agent:${TOKENS.agent}`).toString('base64')}`,
  `Bearer ${TOKENS.agent} ${TOKENS.agent}`,
  `Bearer ${TOKENS.reviewer.slice(0, 20)}`,
];

function unauthorized(r: { status: number; headers: Record<string, unknown>; body: any }, what: string): void {
  assert.equal(r.status, 401, `${what}: ${JSON.stringify(r.body)}`);
  assert.equal(r.body?.error_code, 'UNAUTHORIZED', what);
  assert.match(String(r.headers['www-authenticate']), /^Bearer /, `${what}: WWW-Authenticate`);
}

describe('security: missing and wrong credentials on every adapter; reviewer-only actions', function () {
  this.timeout(120_000);
  let s: Stack;
  let requestId: string;
  const grpcClients: GrpcClient[] = [];

  before(async () => {
    s = await startStack({ grpc: true });
    // a request waiting for the researcher: an agent's create_code (trust: suggest)
    const r = await raw(s.port, 'POST', '/tools/create_code', {
      headers: { ...AS_AGENT, 'content-type': 'application/json' },
      body: { arguments: { name: 'Pending', color: '#123456' } },
    });
    assert.equal(r.status, 202, r.text);
    requestId = r.body.data.request_id;
  });
  after(async () => {
    for (const c of grpcClients) c.close();
    await s?.close();
  });

  describe('HTTP, REST, SSE, approvals and MCP', () => {
    it('refuse every missing or wrong token with 401 UNAUTHORIZED and WWW-Authenticate, each audited as denied', async () => {
      for (const route of ROUTES) {
        for (const auth of BAD_AUTH) {
          const what = `${route.method} ${route.path} with ${auth === undefined ? 'no Authorization' : JSON.stringify(auth.slice(0, 30))}`;
          const mark = s.auditMark();
          const r = await raw(s.port, route.method, route.path, {
            headers: {
              ...(auth === undefined ? {} : { authorization: auth }),
              ...(route.body === undefined ? {} : { 'content-type': 'application/json' }),
              ...route.headers,
            },
            body: route.body,
          });
          unauthorized(r, what);
          assert.deepEqual(
            s.auditSince(mark).map((e) => [e.tool, e.decision, e.error_code]),
            [[`${route.method} ${route.path.split('?')[0]}`, 'denied', 'UNAUTHORIZED']],
            what,
          );
        }
      }
    });

    it('take ?token= only on the event stream and the WebSocket, never on other routes or methods', async () => {
      const agentToken = encodeURIComponent(TOKENS.agent);
      for (const [method, p] of [
        ['GET', `/state/codes?token=${agentToken}`],
        ['GET', `/approvals?token=${agentToken}`],
        ['GET', `/events/history?token=${agentToken}`],
        ['POST', `/tools/list_codes?token=${agentToken}`],
        ['POST', `/events/stream?token=${agentToken}`],
      ] as const) {
        const r = await raw(s.port, method, p, {
          headers: method === 'POST' ? { 'content-type': 'application/json' } : {},
          body: method === 'POST' ? { arguments: {} } : undefined,
        });
        unauthorized(r, `${method} ${p}`);
      }
      const wrong = await raw(s.port, 'GET', '/events/stream?token=wrong');
      unauthorized(wrong, 'SSE ?token=wrong');
      const right = await raw(s.port, 'GET', `/events/stream?token=${agentToken}`);
      assert.equal(right.status, 200, 'the event stream takes the token from the query string');
      // the audit line never holds the query string (it may hold a token)
      assert.ok(!s.audit.some((l) => l.includes(TOKENS.agent) || l.includes(TOKENS.reviewer)), 'no token in the audit log');
    });

    it('refuse the WebSocket upgrade without a valid token (header or ?token=) with 401, audited', async () => {
      for (const auth of BAD_AUTH) {
        const mark = s.auditMark();
        const r = await upgrade(s.port, '/ws', auth === undefined ? {} : { authorization: auth });
        assert.equal(r.status, 401, `upgrade with ${auth}`);
        assert.equal(r.body?.error_code, 'UNAUTHORIZED');
        assert.deepEqual(
          s.auditSince(mark).map((e) => [e.tool, e.error_code]),
          [['GET /ws', 'UNAUTHORIZED']],
        );
      }
      for (const t of ['wrong', `${TOKENS.agent}x`, '']) {
        const r = await upgrade(s.port, `/ws?token=${encodeURIComponent(t)}`, {});
        assert.equal(r.status, 401, `?token=${t}`);
      }
      assert.equal((await upgrade(s.port, `/ws?token=${encodeURIComponent(TOKENS.agent)}`, {})).status, 101);
    });

    it("never let a token act in a session of another credential (an agent borrowing the researcher's session id): 403 SESSION_FORBIDDEN", async () => {
      /** issue 14 item 3: the session exists, the token is valid, but the session is not this credential's */
      const forbidden = (r: { status: number; body: any; text: string }, what: string) => {
        assert.equal(r.status, 403, `${what}: ${r.text}`);
        assert.equal(r.body.error_code, 'SESSION_FORBIDDEN', what);
      };
      const researcherSession = s.researcher.session_id;
      const mark = s.auditMark();
      const hijack = await raw(s.port, 'POST', '/tools/list_codes', {
        headers: { ...AS_AGENT, 'content-type': 'application/json', 'x-marginalia-session': researcherSession },
        body: { arguments: {} },
      });
      forbidden(hijack, 'agent token in the researcher session');
      const approve = await raw(s.port, 'POST', `/approvals/${requestId}/approve`, { headers: { ...AS_AGENT, 'x-marginalia-session': researcherSession } });
      forbidden(approve, 'agent token approving in the researcher session');
      const rest = await raw(s.port, 'GET', '/state/codes', { headers: { ...AS_AGENT, 'x-marginalia-session': researcherSession } });
      forbidden(rest, 'REST with the researcher session');
      const beat = await raw(s.port, 'POST', '/session/heartbeat', {
        headers: { ...AS_AGENT, 'content-type': 'application/json' },
        body: { session_id: researcherSession },
      });
      forbidden(beat, 'heartbeat of the researcher session');
      const destroy = await raw(s.port, 'POST', '/session/destroy', {
        headers: { ...AS_AGENT, 'content-type': 'application/json' },
        body: { session_id: researcherSession },
      });
      forbidden(destroy, 'ending the researcher session');
      assert.ok(s.agent.sessions.get(researcherSession), 'the researcher session lives on');
      // and the other way round: the reviewer token in an agent session (it would otherwise act as that agent)
      const created = await raw(s.port, 'POST', '/session/create', {
        headers: { ...AS_AGENT, 'content-type': 'application/json' },
        body: { client_name: 'bot' },
      });
      assert.equal(created.status, 200, created.text);
      const agentSession = created.body.data.session_id as string;
      const cross = await raw(s.port, 'POST', '/tools/list_codes', {
        headers: { ...AS_RESEARCHER, 'content-type': 'application/json', 'x-marginalia-session': agentSession },
        body: { arguments: {} },
      });
      forbidden(cross, 'reviewer token in an agent session');
      const entries = s.auditSince(mark).filter((e) => e.error_code === 'SESSION_FORBIDDEN');
      assert.ok(entries.length >= 6, `each refusal audited: ${JSON.stringify(s.auditSince(mark))}`);
      assert.ok(entries.every((e) => e.decision === 'denied'));
      assert.ok(
        entries.some((e) => e.tool === 'session:resume' && e.session_id === researcherSession),
        'the session it tried is named',
      );
      // an unknown session
      const unknown = await raw(s.port, 'POST', '/tools/list_codes', {
        headers: { ...AS_AGENT, 'content-type': 'application/json', 'x-marginalia-session': 'no-such-session' },
        body: { arguments: {} },
      });
      assert.equal(unknown.status, 401);
      assert.equal(unknown.body.error_code, 'SESSION_NOT_FOUND');
    });

    it('refuse approving and rejecting with the agent token: 403 APPROVAL_FORBIDDEN, audited as denied, the request still pending', async () => {
      for (const action of ['approve', 'reject']) {
        const mark = s.auditMark();
        const r = await raw(s.port, 'POST', `/approvals/${requestId}/${action}`, { headers: { ...AS_AGENT, 'content-type': 'application/json' }, body: {} });
        assert.equal(r.status, 403, r.text);
        assert.equal(r.body.error_code, 'APPROVAL_FORBIDDEN');
        assert.deepEqual(
          s.auditSince(mark).map((e) => [e.decision, e.error_code, e.request_id]),
          [['denied', 'APPROVAL_FORBIDDEN', requestId]],
        );
      }
      // claiming to be the researcher's own UI changes nothing
      const local = await raw(s.port, 'POST', `/approvals/${requestId}/approve`, {
        headers: { ...AS_AGENT, 'x-marginalia-client-type': 'LOCAL_UI', 'x-marginalia-client': 'vscode' },
      });
      assert.equal(local.status, 403);
      const editorOnly = await raw(s.port, 'POST', '/tools/apply_source_edits', {
        headers: { ...AS_AGENT, 'content-type': 'application/json', 'x-marginalia-client-type': 'LOCAL_UI' },
        body: { arguments: {} },
      });
      assert.equal(editorOnly.status, 404, 'editor-only tools do not exist for agents');
      assert.equal(s.agent.listApprovals().find((a) => a.request_id === requestId)?.status, 'pending');
    });
  });

  describe('WebSocket messages', () => {
    it('refuse approve and reject from an agent connection (APPROVAL_FORBIDDEN), audited', async () => {
      const ws = new WebSocket(`ws://127.0.0.1:${s.port}/ws`, { headers: AS_AGENT });
      const replies: any[] = [];
      await new Promise<void>((resolve, reject) => {
        ws.on('message', (d) => {
          const m = JSON.parse(String(d));
          replies.push(m);
          if (m.type === 'welcome') resolve();
        });
        ws.on('error', reject);
      });
      const ask = (msg: Record<string, unknown>) =>
        new Promise<any>((resolve) => {
          const onMessage = (d: WebSocket.RawData) => {
            const m = JSON.parse(String(d));
            if (m.type === 'reply' && m.id === msg.id) {
              ws.off('message', onMessage);
              resolve(m);
            }
          };
          ws.on('message', onMessage);
          ws.send(JSON.stringify(msg));
        });
      const mark = s.auditMark();
      const a = await ask({ id: 1, op: 'approve', request_id: requestId });
      const r = await ask({ id: 2, op: 'reject', request_id: requestId, reason: 'no' });
      assert.deepEqual([a.ok, a.error_code, r.ok, r.error_code], [false, 'APPROVAL_FORBIDDEN', false, 'APPROVAL_FORBIDDEN']);
      assert.deepEqual(
        s.auditSince(mark).map((e) => [e.decision, e.error_code]),
        [
          ['denied', 'APPROVAL_FORBIDDEN'],
          ['denied', 'APPROVAL_FORBIDDEN'],
        ],
      );
      ws.close();
    });
  });

  describe('gRPC (mutual TLS)', () => {
    let dir: string;
    before(() => {
      dir = s.grpc!.dir;
    });
    const connect = (c?: { cert: string; key: string }, caDir = dir) => {
      const client = grpcClient(s.grpc!.port, caDir, c);
      grpcClients.push(client);
      return client;
    };

    it('no client certificate, or one from another CA: the TLS handshake fails, no RPC runs', async () => {
      const none = connect(undefined);
      await assert.rejects(
        grpcUnary(none, 'CallTool', { tool: 'list_codes', arguments_json: '{}' }),
        (e: grpc.ServiceError) => e.code === grpc.status.UNAVAILABLE,
      );
      const other = tmp('marginalia-sec-otherca-');
      const foreign = clientCert(other, 'intruder', 'researcher');
      const client = grpcClient(s.grpc!.port, dir, foreign);
      grpcClients.push(client);
      await assert.rejects(grpcUnary(client, 'Approve', { request_id: requestId }), (e: grpc.ServiceError) => e.code === grpc.status.UNAVAILABLE);
    });

    it('a certificate of our CA without a known role is UNAUTHENTICATED on every RPC, audited', async () => {
      for (const ou of ['admin', null, 'Researcher ']) {
        const client = connect(oddCert(dir, `odd${ou ? ou.trim() : 'none'}`, ou));
        for (const [method, req] of [
          ['CallTool', { tool: 'list_codes', arguments_json: '{}' }],
          ['Approve', { request_id: requestId }],
          ['ListApprovals', {}],
          ['OpenSession', { client_name: 'x' }],
        ] as const) {
          const mark = s.auditMark();
          await assert.rejects(grpcUnary(client, method, req), (e: grpc.ServiceError) => e.code === grpc.status.UNAUTHENTICATED, `${ou} ${method}`);
          assert.deepEqual(
            s.auditSince(mark).map((e) => [e.tool, e.decision, e.error_code]),
            [[`grpc /marginalia.v1.Marginalia/${method}`, 'denied', 'UNAUTHORIZED']],
            `${ou} ${method}`,
          );
        }
      }
    });

    it('an agent certificate may not approve or reject (APPROVAL_FORBIDDEN), nor use another certificate’s session', async () => {
      const bot = connect(clientCert(dir, 'bot', 'agent'));
      const bot2 = connect(clientCert(dir, 'bot2', 'agent'));
      const mark = s.auditMark();
      const a = await grpcUnary(bot, 'Approve', { request_id: requestId });
      assert.deepEqual([a.success, a.error_code], [false, 'APPROVAL_FORBIDDEN']);
      const r = await grpcUnary(bot, 'Reject', { request_id: requestId, reason: 'x' });
      assert.deepEqual([r.success, r.error_code], [false, 'APPROVAL_FORBIDDEN']);
      assert.deepEqual(
        s.auditSince(mark).map((e) => [e.decision, e.error_code]),
        [
          ['denied', 'APPROVAL_FORBIDDEN'],
          ['denied', 'APPROVAL_FORBIDDEN'],
        ],
      );
      const opened = await grpcUnary(bot, 'OpenSession', { client_name: 'bot' });
      const mark2 = s.auditMark();
      const stolen = await grpcUnary(bot2, 'CallTool', { session_id: opened.session_id, tool: 'list_codes', arguments_json: '{}' });
      assert.deepEqual([stolen.success, stolen.error_code], [false, 'SESSION_FORBIDDEN']);
      assert.deepEqual(
        s.auditSince(mark2).map((e) => [e.decision, e.error_code, e.session_id]),
        [['denied', 'SESSION_FORBIDDEN', opened.session_id]],
      );
      assert.equal(s.agent.listApprovals().find((x) => x.request_id === requestId)?.status, 'pending');
    });
  });

  describe('the CLI adapter', () => {
    it('locally: a missing or wrong token opens no session (UNAUTHORIZED), audited', () => {
      for (const auth of ['', 'Bearer', 'Bearer wrong', `Bearer ${TOKENS.agent}x`]) {
        const mark = s.auditMark();
        assert.throws(
          () => new LocalCliBackend({ agent: s.agent, pipeline: s.pipeline, authorization: auth, clientName: 'cli', clientType: 'CUSTOM' }),
          (e: unknown) => isToolError(e) && e.code === 'UNAUTHORIZED',
          auth,
        );
        assert.deepEqual(
          s.auditSince(mark).map((e) => [e.tool, e.decision, e.error_code, e.client_name]),
          [['session:open', 'denied', 'UNAUTHORIZED', 'cli']],
          auth,
        );
      }
    });

    it('forwarding to a server: a wrong token is UNAUTHORIZED', async () => {
      await assert.rejects(
        ForwardCliBackend.connect({ url: s.base, token: 'wrong', clientName: 'cli', clientType: 'CUSTOM' }),
        (e: unknown) => isToolError(e) && e.code === 'UNAUTHORIZED',
      );
    });

    it('an agent may not approve or reject through the CLI, locally or forwarded (APPROVAL_FORBIDDEN)', async () => {
      const local = new LocalCliBackend({
        agent: s.agent,
        pipeline: s.pipeline,
        authorization: AS_AGENT.authorization,
        clientName: 'cli-agent',
        clientType: 'CUSTOM',
      });
      const forward = await ForwardCliBackend.connect({ url: s.base, token: TOKENS.agent, clientName: 'cli-forward', clientType: 'CUSTOM' });
      try {
        for (const backend of [local, forward]) {
          const sink = () => ({ event: () => true, overflow: () => undefined, ended: () => undefined });
          const a = await runCommand(backend, { op: 'approve', request_id: requestId }, sink);
          const r = await runCommand(backend, { op: 'reject', request_id: requestId }, sink);
          assert.deepEqual(
            [a.success, !a.success && a.error_code, r.success, !r.success && r.error_code],
            [false, 'APPROVAL_FORBIDDEN', false, 'APPROVAL_FORBIDDEN'],
            backend.mode,
          );
        }
      } finally {
        await local.close();
        await forward.close();
      }
      assert.equal(s.agent.listApprovals().find((x) => x.request_id === requestId)?.status, 'pending');
    });
  });
});
