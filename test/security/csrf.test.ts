/**
 * Cross-site request forgery through "simple" requests (docs/architecture.md, Security: "accept only JSON content
 * types"): a foreign page may POST `text/plain`, `application/x-www-form-urlencoded` and `multipart/form-data`
 * without a CORS preflight. Every state-changing route refuses them with 415 UNSUPPORTED_MEDIA_TYPE — also
 * when the body is empty, also with the researcher's own token — and audits the refusal; nothing changes.
 * A JSON body (with parameters such as charset), or no body and no Content-Type at all, is accepted.
 */
import assert from 'node:assert/strict';
import { AS_AGENT, AS_RESEARCHER, raw, startStack, type Stack } from './stack';

const MCP_INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'probe', version: '1' } },
};

/** Content types a form or a `fetch(..., {mode: 'no-cors'})` can send, and near misses of JSON. */
const SIMPLE_BODIES: { type: string | null; body: (json: string) => string }[] = [
  { type: 'text/plain', body: (j) => j },
  { type: 'text/plain;charset=UTF-8', body: (j) => j },
  { type: 'application/x-www-form-urlencoded', body: (j) => `arguments=${encodeURIComponent(j)}` },
  { type: 'application/x-www-form-urlencoded', body: (j) => `${j}=` },
  { type: 'multipart/form-data; boundary=XyZ', body: (j) => `--XyZ\r\nContent-Disposition: form-data; name="arguments"\r\n\r\n${j}\r\n--XyZ--\r\n` },
  { type: 'text/plain', body: () => '' },
  { type: 'application/x-www-form-urlencoded', body: () => '' },
  { type: 'multipart/form-data; boundary=XyZ', body: () => '' },
  { type: 'text/plain; x=application/json', body: (j) => j },
  { type: 'application/jsonp', body: (j) => j },
  { type: 'application/json-patch+json', body: (j) => j },
  { type: 'text/json', body: (j) => j },
  { type: null, body: (j) => j },
];

describe('security: text/plain and form bodies (CSRF through simple requests)', function () {
  this.timeout(60_000);
  let s: Stack;
  let requestId: string;

  before(async () => {
    s = await startStack();
    const r = await raw(s.port, 'POST', '/tools/create_code', {
      headers: { ...AS_AGENT, 'content-type': 'application/json' },
      body: { arguments: { name: 'Held', color: '#123456' } },
    });
    assert.equal(r.status, 202, r.text);
    requestId = r.body.data.request_id;
  });
  after(async () => {
    await s?.close();
  });

  /** Every route that changes something, with a JSON body it would accept. */
  const routes = () => [
    { path: '/tools/create_code', json: { arguments: { name: 'Forged', color: '#654321' } } },
    { path: '/tools/delete_code', json: { arguments: { code_id: 1, delete_segments: true } } },
    { path: '/commands/coding/create_code', json: { name: 'Forged2', color: '#654321' } },
    { path: '/session/create', json: { client_name: 'forged' } },
    { path: `/approvals/${requestId}/approve`, json: {} },
    { path: `/approvals/${requestId}/reject`, json: { reason: 'forged' } },
    { path: '/mcp', json: MCP_INIT },
  ];

  it('refuses every simple body on every POST route with 415, even with the reviewer token; audited; nothing changes', async () => {
    const codesBefore = s.handle.repo.listCodes().length;
    for (const route of routes()) {
      for (const variant of SIMPLE_BODIES) {
        for (const auth of [AS_AGENT, AS_RESEARCHER]) {
          const what = `${route.path} as ${variant.type} (${auth === AS_AGENT ? 'agent' : 'researcher'})`;
          const mark = s.auditMark();
          const body = variant.body(JSON.stringify(route.json));
          const r = await raw(s.port, 'POST', route.path, {
            headers: { ...auth, ...(variant.type ? { 'content-type': variant.type } : {}), accept: 'application/json, text/event-stream' },
            body,
          });
          assert.equal(r.status, 415, `${what}: ${r.text}`);
          assert.equal(r.body.error_code, 'UNSUPPORTED_MEDIA_TYPE', what);
          assert.deepEqual(
            s.auditSince(mark).map((e) => [e.tool, e.decision, e.error_code]),
            [[`POST ${route.path}`, 'denied', 'UNSUPPORTED_MEDIA_TYPE']],
            what,
          );
        }
      }
    }
    assert.equal(s.handle.repo.listCodes().length, codesBefore, 'no code was created');
    assert.equal(s.agent.listApprovals().find((a) => a.request_id === requestId)?.status, 'pending', 'the request was neither approved nor rejected');
  });

  it('a chunked body without Content-Type is refused too', async () => {
    const r = await raw(s.port, 'POST', '/tools/create_code', {
      headers: { ...AS_RESEARCHER, 'transfer-encoding': 'chunked' },
      body: JSON.stringify({ arguments: { name: 'Chunked', color: '#123456' } }),
    });
    assert.equal(r.status, 415, r.text);
  });

  it('accepts JSON with parameters, and a bodiless POST without Content-Type (curl -X POST)', async () => {
    const ok = await raw(s.port, 'POST', '/tools/list_codes', {
      headers: { ...AS_AGENT, 'content-type': 'application/json; charset=utf-8' },
      body: { arguments: {} },
    });
    assert.equal(ok.status, 200, ok.text);
    const upper = await raw(s.port, 'POST', '/tools/list_codes', { headers: { ...AS_AGENT, 'content-type': 'Application/JSON' }, body: { arguments: {} } });
    assert.equal(upper.status, 200, upper.text);
    const bodiless = await raw(s.port, 'POST', `/approvals/${requestId}/reject`, { headers: AS_RESEARCHER });
    assert.equal(bodiless.status, 200, bodiless.text);
    assert.equal(bodiless.body.data.status, 'rejected');
  });
});
