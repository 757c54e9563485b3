/**
 * One credential on every surface (issue 14 items 2-3): gRPC accepts a per-agent bearer token in the call's metadata
 * (`authorization: Bearer <token>`) exactly as HTTP does, on the in-process server (security/stack.ts) with the
 * gRPC adapter (mutual TLS still carries the connection):
 * - the token's credential is the caller: the session it opened over HTTP can be used over gRPC, its implicit
 *   session is the one HTTP uses, and its calls are audited under its name;
 * - another credential's token, or a certificate without a token, in that session: SESSION_FORBIDDEN, audited;
 * - a wrong or revoked token: UNAUTHENTICATED, audited as UNAUTHORIZED; an agent's token may not approve.
 */
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { clientCert, grpcClient, startStack, TOKENS, type GrpcClient, type Stack } from './stack';

/** One unary call with `token` in the metadata (none: the certificate alone). */
function call<T = any>(client: GrpcClient, method: string, req: Record<string, unknown>, token?: string): Promise<T> {
  const md = new grpc.Metadata();
  if (token !== undefined) md.set('authorization', `Bearer ${token}`);
  return new Promise((resolve, reject) => {
    client[method](req, md, { deadline: Date.now() + 10_000 }, (err: grpc.ServiceError | null, res: T) => (err ? reject(err) : resolve(res)));
  });
}

async function http(s: Stack, path: string, token: string, body: unknown): Promise<{ status: number; body: any }> {
  const r = await fetch(`${s.base}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'x-marginalia-client': 'bearer-test' },
    body: JSON.stringify(body),
  });
  return { status: r.status, body: await r.json() };
}

describe('security: gRPC takes the per-agent bearer token like HTTP', function () {
  this.timeout(60_000);
  let s: Stack;
  let carrier: GrpcClient;
  let alpha = '';
  let beta = '';

  before(async () => {
    s = await startStack({ grpc: true });
    // the connection's certificate: an agent's, named "carrier"; the bearer token says which agent calls
    carrier = grpcClient(s.grpc!.port, s.grpc!.dir, clientCert(s.grpc!.dir, 'carrier', 'agent'));
    alpha = s.agent.credentials.issue('alpha').token;
    beta = s.agent.credentials.issue('beta').token;
  });
  after(async () => {
    carrier?.close();
    await s?.close();
  });

  it("runs a call as the token's agent, in the session the credential opened over HTTP", async () => {
    const opened = await http(s, '/session/create', alpha, { client_name: 'alpha-cli' });
    assert.equal(opened.status, 200, JSON.stringify(opened.body));
    const sid = opened.body.data.session_id as string;
    const mark = s.auditMark();
    const res = await call(carrier, 'CallTool', { session_id: sid, tool: 'list_codes', arguments_json: '{}' }, alpha);
    assert.equal(res.success, true, JSON.stringify(res));
    const line = s.auditSince(mark).find((e) => e.tool === 'list_codes');
    assert.equal(line?.session_id, sid);
    assert.equal(line?.coder, 'alpha');
    assert.equal(line?.role, 'agent');
  });

  it('without a session id, uses the credential’s one implicit session (the same as over HTTP)', async () => {
    const overHttp = await http(s, '/tools/list_codes', beta, { arguments: {} });
    assert.equal(overHttp.status, 200);
    const mark = s.auditMark();
    await call(carrier, 'CallTool', { tool: 'list_codes', arguments_json: '{}' }, beta);
    const httpMark = s.auditMark();
    await http(s, '/tools/list_codes', beta, { arguments: {} });
    const viaGrpc = s.auditSince(mark).find((e) => e.tool === 'list_codes');
    const viaHttp = s.auditSince(httpMark).find((e) => e.tool === 'list_codes');
    assert.ok(viaGrpc?.session_id);
    assert.equal(viaGrpc?.session_id, viaHttp?.session_id);
    assert.equal(viaGrpc?.coder, 'beta');
  });

  it("refuses another credential's token, or the certificate alone, in that session: SESSION_FORBIDDEN, audited", async () => {
    const sid = (await http(s, '/session/create', alpha, { client_name: 'alpha-2' })).body.data.session_id as string;
    const mark = s.auditMark();
    const stolen = await call(carrier, 'CallTool', { session_id: sid, tool: 'list_codes', arguments_json: '{}' }, beta);
    assert.equal(stolen.success, false);
    assert.equal(stolen.error_code, 'SESSION_FORBIDDEN');
    const certOnly = await call(carrier, 'CallTool', { session_id: sid, tool: 'list_codes', arguments_json: '{}' });
    assert.equal(certOnly.error_code, 'SESSION_FORBIDDEN');
    const heartbeat = await call(carrier, 'Heartbeat', { session_id: sid }, beta);
    assert.equal(heartbeat.error_code, 'SESSION_FORBIDDEN');
    const refusals = s.auditSince(mark).filter((e) => e.error_code === 'SESSION_FORBIDDEN' && e.decision === 'denied');
    assert.ok(refusals.length >= 3, JSON.stringify(refusals));
    // its own credential still may
    const own = await call(carrier, 'Heartbeat', { session_id: sid }, alpha);
    assert.equal(own.success, true, JSON.stringify(own));
  });

  it('a wrong token is UNAUTHENTICATED (audited as UNAUTHORIZED); so is a revoked one', async () => {
    const mark = s.auditMark();
    await assert.rejects(
      call(carrier, 'CallTool', { tool: 'list_codes', arguments_json: '{}' }, 'not-a-credential-0000000000000000'),
      (e: grpc.ServiceError) => {
        assert.equal(e.code, grpc.status.UNAUTHENTICATED);
        return true;
      },
    );
    assert.ok(s.auditSince(mark).some((e) => e.error_code === 'UNAUTHORIZED' && e.tool.startsWith('grpc /marginalia.v1.Marginalia/CallTool')));
    const gamma = s.agent.credentials.issue('gamma').token;
    assert.equal((await call(carrier, 'CallTool', { tool: 'list_codes', arguments_json: '{}' }, gamma)).success, true);
    assert.equal(s.agent.credentials.revoke('gamma'), true);
    await assert.rejects(call(carrier, 'ListTools', {}, gamma), (e: grpc.ServiceError) => e.code === grpc.status.UNAUTHENTICATED);
  });

  it("an agent's token may not approve (APPROVAL_FORBIDDEN); the reviewer token may", async () => {
    const held = await http(s, '/tools/create_code', beta, { arguments: { name: 'Held over HTTP' } });
    assert.equal(held.status, 202, JSON.stringify(held.body));
    const requestId = held.body.data.request_id as string;
    const refused = await call(carrier, 'Approve', { request_id: requestId }, alpha);
    assert.equal(refused.success, false);
    assert.equal(refused.error_code, 'APPROVAL_FORBIDDEN');
    const approved = await call(carrier, 'Approve', { request_id: requestId }, TOKENS.reviewer);
    assert.equal(approved.success, true, JSON.stringify(approved));
    assert.equal(approved.request_id, requestId);
  });
});
