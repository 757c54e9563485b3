/**
 * The HTTP tool server (src/adapters/http/httpServer.ts): answers to bodies it cannot decode (regressions
 * found by the fuzz suite, test/fuzz), and the fast path for `POST /tools/{name}` answering byte for byte
 * as the express route does (compared with an express-only server built from the same options).
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { gzipSync } from 'node:zlib';
import { createHttpApp, startHttpServer, type RunningHttpServer } from '../../../src/adapters/http/httpServer';
import type { AgentContext } from '../../../src/agent/agentContext';
import { createAgentContextFor, createPipeline, headlessHost, openProjectHandle, type ProjectHandle } from '../../../src/cli/compose';
import { silentLogger } from '../../../src/core/log';

function post(port: number, headers: Record<string, string>, body: Buffer): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/tools/list_codes',
        headers: { host: `127.0.0.1:${port}`, 'content-length': String(body.length), ...headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('adapters/http: bodies the server cannot decode', () => {
  let server: RunningHttpServer;
  before(async () => {
    const pipeline = createPipeline({ project: () => null, host: headlessHost, logger: silentLogger, embeddings: null });
    server = await startHttpServer({ pipeline, port: 0, logger: silentLogger, version: 'test' });
  });
  after(async () => {
    await server.close();
  });

  const body = Buffer.from('{"arguments":{}}');
  // found by fuzzing: these came back as HTTP 415 with error_code INVALID_ARGUMENTS, whose documented status is 400
  for (const [what, headers] of [
    ['an unknown charset', { 'content-type': 'application/json; charset=x-unknown' }],
    ['an unknown Content-Encoding', { 'content-type': 'application/json', 'content-encoding': 'x-unknown' }],
    ['two stacked encodings', { 'content-type': 'application/json', 'content-encoding': 'gzip, gzip' }],
  ] as const) {
    it(`${what} is 415 UNSUPPORTED_MEDIA_TYPE`, async () => {
      const r = await post(server.port, headers, body);
      assert.equal(r.status, 415);
      assert.equal(r.body.success, false);
      assert.equal(r.body.error_code, 'UNSUPPORTED_MEDIA_TYPE');
    });
  }

  it('a charset other than UTF-8 that iconv-lite knows is decoded and runs the tool (issue 15)', async () => {
    const r = await post(server.port, { 'content-type': 'application/json; charset=latin1' }, body);
    assert.deepEqual([r.status, r.body.error_code], [503, 'NO_PROJECT']);
  });

  it('a gzip-encoded JSON body is decoded and runs the tool', async () => {
    const r = await post(server.port, { 'content-type': 'application/json', 'content-encoding': 'gzip' }, gzipSync(body));
    // no project is open in this test: the tool ran and says so
    assert.deepEqual([r.status, r.body.error_code], [503, 'NO_PROJECT']);
  });
});

/** One raw request; `chunked` sends the body with Transfer-Encoding: chunked (no Content-Length). */
function raw(
  port: number,
  opts: { path?: string; headers?: Record<string, string>; body?: Buffer; chunked?: boolean; host?: string },
): Promise<{ status: number; text: string; headers: http.IncomingHttpHeaders }> {
  const body = opts.body ?? Buffer.alloc(0);
  const headers: Record<string, string> = {
    host: opts.host ?? `127.0.0.1:${port}`,
    ...(opts.chunked ? { 'transfer-encoding': 'chunked' } : { 'content-length': String(body.length) }),
    ...opts.headers,
  };
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method: 'POST', path: opts.path ?? '/tools/list_codes', headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8'), headers: res.headers }));
    });
    req.on('error', reject);
    if (opts.chunked && body.length > 0) req.write(body);
    req.end(opts.chunked ? undefined : body);
  });
}

describe('adapters/http: the fast path for POST /tools/{name} answers as the express route does', () => {
  const tokens = { agent: 'fast-path-agent-token-0123456789', reviewer: 'fast-path-researcher-token-0123456789' };
  let dir: string;
  let handle: ProjectHandle;
  let full: RunningHttpServer;
  let plain: http.Server;
  let plainPort = 0;
  let agent: AgentContext;
  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'marginalia-fastpath-'));
    handle = await openProjectHandle(path.join(dir, 'p.qda'), { create: true, checkpointIdleMs: 0, logger: silentLogger });
    agent = createAgentContextFor(handle.path, { project: () => handle, logger: silentLogger, tokens });
    const pipeline = createPipeline({ project: () => handle, host: headlessHost, logger: silentLogger, agent, embeddings: null });
    await pipeline.invoke('create_code', { name: 'Belonging', color: '#112233' }, agent.implicitCaller(`Bearer ${tokens.reviewer}`, 'setup'));
    full = await startHttpServer({ pipeline, port: 0, logger: silentLogger, version: 'test', agent });
    // the same options served by express alone: no fast path in front
    plain = http.createServer(createHttpApp({ pipeline, port: () => plainPort, logger: silentLogger, version: 'test', agent }));
    await new Promise<void>((r) => plain.listen(0, '127.0.0.1', r));
    plainPort = (plain.address() as AddressInfo).port;
  });
  after(async () => {
    await full.close();
    plain.closeAllConnections();
    await new Promise((r) => plain.close(r));
    agent.dispose();
    await handle.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const auth = { authorization: `Bearer ${tokens.agent}`, 'x-marginalia-client': 'fast-path-test' };
  const json = { 'content-type': 'application/json' };
  const cases: [string, { path?: string; headers?: Record<string, string>; body?: Buffer; host?: (port: number) => string }, number, string?][] = [
    ['a plain call', { headers: { ...json, ...auth }, body: Buffer.from('{"arguments":{}}') }, 200],
    ['charset=utf-8', { headers: { 'content-type': 'application/json; charset=UTF-8', ...auth }, body: Buffer.from('{"arguments":{}}') }, 200],
    ['an empty body', { headers: { ...json, ...auth } }, 200],
    ['a body with a byte order mark', { headers: { ...json, ...auth }, body: Buffer.from('\uFEFF{"arguments":{}}') }, 200],
    ['arguments for get_code', { path: '/tools/get_code', headers: { ...json, ...auth }, body: Buffer.from('{"arguments":{"code_id":1}}') }, 200],
    ['invalid JSON', { headers: { ...json, ...auth }, body: Buffer.from('{"arguments":') }, 400, 'INVALID_JSON'],
    [
      'invalid UTF-8 (issue 15)',
      { headers: { ...json, ...auth }, body: Buffer.from([...Buffer.from('{"arguments":{"x":"'), 0xc3, 0x28, ...Buffer.from('"}}')]) },
      400,
      'INVALID_JSON',
    ],
    ['a lone surrogate escape (issue 15)', { headers: { ...json, ...auth }, body: Buffer.from('{"arguments":{"x":"\\ud800"}}') }, 400, 'INVALID_JSON'],
    ['a duplicated key (issue 15)', { headers: { ...json, ...auth }, body: Buffer.from('{"arguments":{},"arguments":{}}') }, 400, 'INVALID_JSON'],
    ['a JSON array', { headers: { ...json, ...auth }, body: Buffer.from('[1]') }, 400, 'INVALID_ARGUMENTS'],
    ['an unexpected member', { headers: { ...json, ...auth }, body: Buffer.from('{"arguments":{},"x":1}') }, 400, 'INVALID_ARGUMENTS'],
    ['arguments that are null', { headers: { ...json, ...auth }, body: Buffer.from('{"arguments":null}') }, 400, 'INVALID_ARGUMENTS'],
    [
      'arguments the schema refuses',
      { path: '/tools/get_code', headers: { ...json, ...auth }, body: Buffer.from('{"arguments":{"code_id":"x"}}') },
      400,
      'INVALID_ARGUMENTS',
    ],
    ['an unknown tool', { path: '/tools/no_such_tool', headers: { ...json, ...auth }, body: Buffer.from('{}') }, 404, 'TOOL_NOT_FOUND'],
    ['an unknown code', { path: '/tools/get_code', headers: { ...json, ...auth }, body: Buffer.from('{"arguments":{"code_id":999}}') }, 404, 'CODE_NOT_FOUND'],
    ['no token', { headers: json, body: Buffer.from('{}') }, 401, 'UNAUTHORIZED'],
    ['a wrong token', { headers: { ...json, authorization: 'Bearer nope' }, body: Buffer.from('{}') }, 401, 'UNAUTHORIZED'],
    ['a foreign Host', { headers: { ...json, ...auth }, body: Buffer.from('{}'), host: () => 'evil.example:80' }, 403, 'FORBIDDEN_HOST'],
    ['a foreign Origin', { headers: { ...json, ...auth, origin: 'http://evil.example' }, body: Buffer.from('{}') }, 403, 'FORBIDDEN_HOST'],
    ['a text/plain body', { headers: { 'content-type': 'text/plain', ...auth }, body: Buffer.from('{}') }, 415, 'UNSUPPORTED_MEDIA_TYPE'],
    [
      'a session that does not exist',
      { headers: { ...json, ...auth, 'x-marginalia-session': 'no-such-session' }, body: Buffer.from('{}') },
      401,
      'SESSION_NOT_FOUND',
    ],
  ];
  for (const [what, req, status, code] of cases) {
    it(`${what}: ${status}${code ? ` ${code}` : ''}, the same bytes and headers either way`, async () => {
      const fast = await raw(full.port, { ...req, host: req.host?.(full.port) });
      const viaExpress = await raw(plainPort, { ...req, host: req.host?.(plainPort), chunked: true });
      assert.equal(fast.status, status, fast.text);
      if (code) assert.equal(JSON.parse(fast.text).error_code, code);
      else assert.equal(JSON.parse(fast.text).success, true);
      assert.equal(fast.status, viaExpress.status);
      assert.equal(fast.text.replaceAll(String(full.port), 'PORT'), viaExpress.text.replaceAll(String(plainPort), 'PORT'));
      for (const h of ['content-type', 'content-length', 'www-authenticate', 'retry-after', 'x-powered-by', 'etag', 'access-control-allow-origin']) {
        assert.equal(
          fast.headers[h] === undefined,
          viaExpress.headers[h] === undefined,
          `header ${h}: ${String(fast.headers[h])} vs ${String(viaExpress.headers[h])}`,
        );
      }
      assert.equal(fast.headers['content-type'], viaExpress.headers['content-type']);
      assert.equal(fast.headers['www-authenticate'], viaExpress.headers['www-authenticate']);
    });
  }

  it('a list_codes answered from the memo still sees the next write', async () => {
    const list = async () =>
      JSON.parse((await raw(full.port, { headers: { ...json, ...auth }, body: Buffer.from('{}') })).text).data as { count: number; codes: { name: string }[] };
    const before = await list();
    assert.deepEqual(await list(), before);
    const created = await raw(full.port, {
      path: '/tools/create_code',
      headers: { ...json, authorization: `Bearer ${tokens.reviewer}` },
      body: Buffer.from('{"arguments":{"name":"Trust","color":"#445566"}}'),
    });
    assert.equal(created.status, 200, created.text);
    const after = await list();
    assert.equal(after.count, before.count + 1);
    assert.ok(after.codes.some((c) => c.name === 'Trust'));
  });
});
