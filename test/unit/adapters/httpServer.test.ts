/**
 * The HTTP tool server's answers to bodies it cannot decode (src/adapters/http/httpServer.ts): regressions
 * found by the fuzz suite (test/fuzz).
 */
import assert from 'node:assert/strict';
import * as http from 'node:http';
import { gzipSync } from 'node:zlib';
import { startHttpServer, type RunningHttpServer } from '../../../src/adapters/http/httpServer';
import { createPipeline, headlessHost } from '../../../src/cli/compose';
import { silentLogger } from '../../../src/core/log';

function post(port: number, headers: Record<string, string>, body: Buffer): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method: 'POST', path: '/tools/list_codes', headers: { host: `127.0.0.1:${port}`, 'content-length': String(body.length), ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }));
    });
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
    ['a charset other than UTF-8', { 'content-type': 'application/json; charset=latin1' }],
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

  it('a gzip-encoded JSON body is decoded and runs the tool', async () => {
    const r = await post(server.port, { 'content-type': 'application/json', 'content-encoding': 'gzip' }, gzipSync(body));
    // no project is open in this test: the tool ran and says so
    assert.deepEqual([r.status, r.body.error_code], [503, 'NO_PROJECT']);
  });
});
