/**
 * Only valid UTF-8 gets in (issue 15, item 6; item 8 for duplicated keys), on every surface, through real
 * clients against the whole server in process (test/security/stack.ts): raw node:http for POST /tools (the
 * fast path and, chunked, the express route) and REST, the `ws` client for WebSocket, raw HTTP POSTs to the
 * MCP endpoint, the strict stdio transport and the stdio forwarder over pipes, @grpc/grpc-js with raw
 * protobuf bytes in a string field, and the CLI line protocol over a byte stream as stdin gives it.
 *
 * Each hostile body is a `create_code` whose name carries the defect; each must be refused with the
 * surface's INVALID_JSON answer, and afterwards no code exists but the ones the positive controls created
 * (the same requests with a valid name, which prove each channel would have written). Last, the built CLI
 * (`npm run build` first) is spawned as `marginalia cli` and `marginalia mcp` and fed the same bytes on its
 * real stdin.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { PassThrough } from 'node:stream';
import * as grpc from '@grpc/grpc-js';
import WebSocket from 'ws';
import { LocalCliBackend, runLineProtocol, type LineOutput } from '../../src/adapters/cli/cliAdapter';
import { forwardMcpStdio } from '../../src/adapters/mcp/mcpForward';
import { serveMcpStdio, StrictStdioServerTransport } from '../../src/adapters/mcp/mcpStdio';
import { ContextBuilder } from '../../src/agent/contextBuilder';
import { openProjectHandle } from '../../src/cli/compose';
import { REPO_ROOT } from '../helpers/serverProcess';
import { AS_RESEARCHER, clientCert, grpcClient, grpcUnary, startStack, tmp, TOKENS, type GrpcClient, type Stack } from './stack';

/** The bytes of a name that are not allowed in, and the byte offset each defect has in `{"arguments":{"name":"x<defect>"}}`. */
const DEFECTS: { what: string; bytes: Buffer; reason: string }[] = [
  { what: 'an invalid byte (FF)', bytes: Buffer.from([0xff]), reason: 'invalid_utf8' },
  { what: 'an overlong "/" (C0 AF)', bytes: Buffer.from([0xc0, 0xaf]), reason: 'invalid_utf8' },
  { what: 'an overlong 3-byte form (E0 80 AF)', bytes: Buffer.from([0xe0, 0x80, 0xaf]), reason: 'invalid_utf8' },
  { what: 'a surrogate in CESU-8 (ED A0 80)', bytes: Buffer.from([0xed, 0xa0, 0x80]), reason: 'invalid_utf8' },
  { what: 'a truncated sequence (E2 82)', bytes: Buffer.from([0xe2, 0x82]), reason: 'invalid_utf8' },
  { what: 'a code point above U+10FFFF (F4 90 80 80)', bytes: Buffer.from([0xf4, 0x90, 0x80, 0x80]), reason: 'invalid_utf8' },
  { what: 'cp1252 "é" sent as UTF-8 (E9)', bytes: Buffer.from([0xe9]), reason: 'invalid_utf8' },
  { what: 'an escaped lone high surrogate', bytes: Buffer.from('\\ud800'), reason: 'lone_surrogate' },
  { what: 'an escaped lone low surrogate', bytes: Buffer.from('\\udc00'), reason: 'lone_surrogate' },
];

/** `{"arguments":{"color":"#112233","name":"utf8-probe-<defect>"}}`; the defect starts at byte {@link AT}. */
const PREFIX = Buffer.from('{"arguments":{"color":"#112233","name":"utf8-probe-');
const AT = PREFIX.length;
function toolBody(defect: Buffer): Buffer {
  return Buffer.concat([PREFIX, defect, Buffer.from('"}}')]);
}
const DUPLICATE = Buffer.from('{"arguments":{"color":"#112233","name":"utf8-probe-a","name":"utf8-probe-b"}}');
/** where the second "name" starts */
const DUPLICATE_AT = DUPLICATE.lastIndexOf('"name"');

/** One POST with raw bytes; `chunked` leaves out Content-Length (express serves it, not the fast path). */
function post(port: number, urlPath: string, body: Buffer, headers: Record<string, string> = {}, chunked = false): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const h: Record<string, string> = { 'content-type': 'application/json', ...AS_RESEARCHER, accept: 'application/json, text/event-stream', ...headers };
    if (!chunked) h['content-length'] = String(body.length);
    const req = http.request({ host: '127.0.0.1', port, method: 'POST', path: urlPath, headers: h, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed: unknown = text;
        try {
          parsed = JSON.parse(text);
        } catch {
          // an SSE answer or plain text: kept as text
        }
        resolve({ status: res.statusCode ?? 0, body: parsed });
      });
    });
    req.on('error', reject);
    if (chunked) req.write(body);
    req.end(chunked ? undefined : body);
  });
}

describe('security: only valid UTF-8 gets in, on every surface (issue 15)', function () {
  this.timeout(60_000);
  let s: Stack;
  const clients: GrpcClient[] = [];
  /** names the positive controls created */
  const created: string[] = [];

  before(async () => {
    s = await startStack({ grpc: true });
  });
  after(async () => {
    for (const c of clients) c.close();
    await s.close();
  });

  const probeCodes = async (): Promise<string[]> => {
    const data = await s.asResearcher('list_codes', {});
    const codes = (data.codes ?? data) as { name: string }[];
    return codes.map((c) => c.name).filter((n) => n.startsWith('utf8-probe') || n.startsWith('Caf'));
  };
  const assertNothingWritten = async () => assert.deepEqual((await probeCodes()).sort(), [...created].sort());

  describe('HTTP POST /tools (fast path and express) and REST', () => {
    for (const d of DEFECTS) {
      it(`${d.what}: 400 INVALID_JSON at the defect's byte offset on every route, nothing written`, async () => {
        for (const [route, chunked] of [
          ['/tools/create_code', false],
          ['/tools/create_code', true],
          ['/commands/codes/create_code', false],
        ] as const) {
          const r = await post(s.port, route, toolBody(d.bytes), {}, chunked);
          assert.equal(r.status, 400, `${route} chunked=${chunked}: ${JSON.stringify(r.body)}`);
          assert.equal(r.body.error_code, 'INVALID_JSON', route);
          assert.equal(r.body.details.reason, d.reason, route);
          assert.equal(r.body.details.byte_offset, AT, route);
          assert.match(r.body.error, new RegExp(`byte offset ${AT}\\b`));
        }
        await assertNothingWritten();
      });
    }

    it('a duplicated key: 400 INVALID_JSON naming the key, on the fast path, express and REST', async () => {
      for (const [route, chunked] of [
        ['/tools/create_code', false],
        ['/tools/create_code', true],
        ['/commands/codes/create_code', false],
      ] as const) {
        const r = await post(s.port, route, DUPLICATE, {}, chunked);
        assert.deepEqual([r.status, r.body.error_code, r.body.details.key, r.body.details.byte_offset], [400, 'INVALID_JSON', 'name', DUPLICATE_AT], route);
      }
      await assertNothingWritten();
    });

    it('cp1252 bytes declared as windows-1252 are decoded; the same bytes declared as UTF-8 are 400 INVALID_JSON', async () => {
      // "Café naïve – “q”" in windows-1252, byte by byte
      const cp1252 = Buffer.concat([
        Buffer.from('{"arguments":{"color":"#112233","name":"Caf'),
        Buffer.from([0xe9, 0x20, 0x6e, 0x61, 0xef, 0x76, 0x65, 0x20, 0x96, 0x20, 0x93, 0x71, 0x94]),
        Buffer.from('"}}'),
      ]);
      const asUtf8 = await post(s.port, '/tools/create_code', cp1252, { 'content-type': 'application/json; charset=utf-8' });
      assert.deepEqual([asUtf8.status, asUtf8.body.error_code, asUtf8.body.details.byte_offset], [400, 'INVALID_JSON', cp1252.indexOf(0xe9)]);
      await assertNothingWritten();
      const declared = await post(s.port, '/tools/create_code', cp1252, { 'content-type': 'application/json; charset=windows-1252' });
      assert.equal(declared.status, 200, JSON.stringify(declared.body));
      assert.equal(declared.body.data.name, 'Café naïve – “q”');
      created.push('Café naïve – “q”');
      const undefinedByte = await post(s.port, '/tools/create_code', Buffer.concat([PREFIX, Buffer.from([0x81]), Buffer.from('"}}')]), {
        'content-type': 'application/json; charset=windows-1252',
      });
      assert.deepEqual([undefinedByte.status, undefinedByte.body.error_code], [400, 'INVALID_JSON']);
      const unknown = await post(s.port, '/tools/create_code', toolBody(Buffer.from('x')), { 'content-type': 'application/json; charset=x-klingon' });
      assert.deepEqual([unknown.status, unknown.body.error_code], [415, 'UNSUPPORTED_MEDIA_TYPE']);
      await assertNothingWritten();
    });

    it('positive control: the same body with a valid name is created (200)', async () => {
      const r = await post(s.port, '/tools/create_code', toolBody(Buffer.from('http-ok')));
      assert.equal(r.status, 200, JSON.stringify(r.body));
      created.push('utf8-probe-http-ok');
      await assertNothingWritten();
    });
  });

  describe('WebSocket', () => {
    let ws: WebSocket;
    const replies: any[] = [];
    before(async () => {
      ws = new WebSocket(`ws://127.0.0.1:${s.port}/ws`, { headers: AS_RESEARCHER });
      await new Promise<void>((resolve, reject) => {
        ws.on('message', (d) => {
          const m = JSON.parse(String(d));
          replies.push(m);
          if (m.type === 'welcome') resolve();
        });
        ws.on('error', reject);
      });
    });
    after(() => ws.close());

    const next = () =>
      new Promise<any>((resolve) => {
        const n = replies.length;
        const tick = () => (replies.length > n ? resolve(replies[n]) : setTimeout(tick, 5));
        tick();
      });
    const WS_PREFIX = Buffer.from('{"id":7,"op":"call","tool":"create_code","arguments":{"color":"#112233","name":"utf8-probe-');
    const message = (defect: Buffer) => Buffer.concat([WS_PREFIX, defect, Buffer.from('"}}')]);

    it('binary frames with each defect: an INVALID_JSON reply each, the connection stays, nothing written', async () => {
      for (const d of DEFECTS) {
        const got = next();
        ws.send(message(d.bytes), { binary: true });
        const r = await got;
        assert.deepEqual([r.type, r.ok, r.error_code, r.details?.reason], ['reply', false, 'INVALID_JSON', d.reason], d.what);
      }
      const dup = next();
      ws.send('{"id":8,"op":"call","tool":"create_code","arguments":{"color":"#112233","name":"utf8-probe-a","name":"utf8-probe-b"}}');
      assert.deepEqual([(await dup).error_code, (await dup).details.key], ['INVALID_JSON', 'name']);
      await assertNothingWritten();
      const ok = next();
      ws.send(message(Buffer.from('ws-ok')));
      assert.equal((await ok).ok, true, JSON.stringify(await ok));
      created.push('utf8-probe-ws-ok');
      await assertNothingWritten();
    });

    it('a text frame that is not UTF-8: an INVALID_JSON reply, then the connection fails with 1007 (RFC 6455 8.1)', async () => {
      const closed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
      const got = next();
      ws.send(message(Buffer.from([0xc0, 0xaf])), { binary: false });
      const r = await got;
      assert.deepEqual([r.ok, r.error_code, r.details.byte_offset], [false, 'INVALID_JSON', WS_PREFIX.length]);
      assert.equal(await closed, 1007);
      await assertNothingWritten();
    });
  });

  describe('MCP', () => {
    const rpc = (defect: Buffer) =>
      Buffer.concat([
        Buffer.from('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"create_code","arguments":{"color":"#112233","name":"utf8-probe-'),
        defect,
        Buffer.from('"}}}'),
      ]);

    it('Streamable HTTP: each defect is HTTP 400 with a JSON-RPC parse error (-32700, data.error_code INVALID_JSON)', async () => {
      for (const d of [
        ...DEFECTS.map((x) => ({ what: x.what, body: rpc(x.bytes) })),
        { what: 'a duplicated key', body: Buffer.from('{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}') },
      ]) {
        const r = await post(s.port, '/mcp', d.body);
        assert.equal(r.status, 400, `${d.what}: ${JSON.stringify(r.body)}`);
        assert.deepEqual([r.body.jsonrpc, r.body.id, r.body.error.code, r.body.error.data.error_code], ['2.0', null, -32700, 'INVALID_JSON'], d.what);
      }
      // control: a valid request is served by the SDK (not refused as a parse error)
      const init = await post(
        s.port,
        '/mcp',
        Buffer.from(
          JSON.stringify({
            jsonrpc: '2.0',
            id: 1,
            method: 'initialize',
            params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'utf8-test', version: '1' } },
          }),
        ),
      );
      assert.equal(init.status, 200, JSON.stringify(init.body));
      await assertNothingWritten();
    });

    /** Lines written to `out`, parsed, as they arrive. */
    function lines(out: PassThrough): any[] {
      const got: any[] = [];
      let buf = '';
      out.on('data', (c: Buffer) => {
        buf += c.toString('utf8');
        let nl: number;
        while ((nl = buf.indexOf('\n')) >= 0) {
          got.push(JSON.parse(buf.slice(0, nl)));
          buf = buf.slice(nl + 1);
        }
      });
      return got;
    }
    const waitFor = async (got: any[], n: number) => {
      while (got.length < n) await new Promise((r) => setTimeout(r, 5));
    };
    const stdioCases = () => [...DEFECTS.map((d) => rpc(d.bytes)), Buffer.from('{"jsonrpc":"2.0","id":1,"method":"ping","method":"ping"}')];

    it('stdio (the strict transport of `marginalia mcp`): each bad line gets -32700 with INVALID_JSON; a valid line is served', async () => {
      const input = new PassThrough();
      const output = new PassThrough();
      const got = lines(output);
      const context = new ContextBuilder({ project: () => s.handle, hub: s.agent.hub, info: () => undefined });
      const conn = serveMcpStdio({
        agent: s.agent,
        context,
        version: 'utf8-test',
        authorization: `Bearer ${TOKENS.reviewer}`,
        transport: new StrictStdioServerTransport(input, output),
      });
      try {
        const cases = stdioCases();
        for (const c of cases) input.write(Buffer.concat([c, Buffer.from('\n')]));
        await waitFor(got, cases.length);
        for (const m of got) assert.deepEqual([m.id, m.error?.code, m.error?.data?.error_code], [null, -32700, 'INVALID_JSON'], JSON.stringify(m));
        input.write(
          `${JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'utf8-stdio', version: '1' } } })}\n`,
        );
        await waitFor(got, cases.length + 1);
        assert.equal(got[cases.length].id, 9);
        assert.ok(got[cases.length].result, JSON.stringify(got[cases.length]));
        await assertNothingWritten();
      } finally {
        await conn.close();
        context.dispose();
      }
    });

    it('stdio forwarded to the owner (`marginalia mcp` beside a running server): refused before forwarding', async () => {
      const input = new PassThrough();
      const output = new PassThrough();
      const got = lines(output);
      const conn = forwardMcpStdio({ url: `${s.base}/mcp`, authorization: `Bearer ${TOKENS.reviewer}`, input, output, drainMs: 100 });
      try {
        const cases = stdioCases();
        for (const c of cases) input.write(Buffer.concat([c, Buffer.from('\n')]));
        await waitFor(got, cases.length);
        for (const m of got) assert.deepEqual([m.id, m.error?.code, m.error?.data?.error_code], [null, -32700, 'INVALID_JSON'], JSON.stringify(m));
        await assertNothingWritten();
      } finally {
        input.end();
        await conn.close();
      }
    });
  });

  describe('gRPC (raw protobuf bytes)', () => {
    /** A CallToolRequest written by hand: field 2 `tool`, field 3 `arguments_json` (wire type 2 each). */
    const callTool = (tool: Buffer, argumentsJson: Buffer) =>
      Buffer.concat([Buffer.from([0x12, tool.length]), tool, Buffer.from([0x1a, argumentsJson.length]), argumentsJson]);
    const send = (client: GrpcClient, bytes: Buffer) =>
      new Promise<{ err: grpc.ServiceError | null; res: any }>((resolve) => {
        const def = (client.constructor as unknown as { service: grpc.ServiceDefinition }).service.CallTool as grpc.MethodDefinition<unknown, unknown>;
        client.makeUnaryRequest(
          '/marginalia.v1.Marginalia/CallTool',
          (b: Buffer) => b,
          (b: Buffer) => def.responseDeserialize(b),
          bytes,
          new grpc.Metadata(),
          { deadline: Date.now() + 10_000 },
          (err, res) => resolve({ err, res }),
        );
      });

    it('a string field that is not UTF-8 is INVALID_ARGUMENT (error_code INVALID_JSON); lone surrogates and duplicated keys in arguments_json are INVALID_JSON', async () => {
      const client = grpcClient(s.grpc!.port, s.grpc!.dir, clientCert(s.grpc!.dir, 'utf8-researcher', 'researcher'));
      clients.push(client);
      for (const d of DEFECTS) {
        const args = Buffer.concat([Buffer.from('{"color":"#112233","name":"utf8-probe-'), d.bytes, Buffer.from('"}')]);
        const { err, res } = await send(client, callTool(Buffer.from('create_code'), args));
        if (d.reason === 'invalid_utf8') {
          assert.equal(err?.code, grpc.status.INVALID_ARGUMENT, `${d.what}: ${err?.details}`);
          assert.deepEqual(err?.metadata.get('error_code'), ['INVALID_JSON']);
          assert.match(err?.details ?? '', /arguments_json is not valid UTF-8: at byte offset 38 of the field/);
        } else {
          assert.equal(err, null, d.what);
          assert.deepEqual([res.success, res.error_code], [false, 'INVALID_JSON'], d.what);
        }
      }
      // invalid UTF-8 in the tool name: refused before any handler
      const { err } = await send(client, callTool(Buffer.from([0x6c, 0x69, 0x73, 0x74, 0xff]), Buffer.from('{}')));
      assert.equal(err?.code, grpc.status.INVALID_ARGUMENT);
      assert.match(err?.details ?? '', /^tool is not valid UTF-8/);
      const dup = await grpcUnary(client, 'CallTool', {
        tool: 'create_code',
        arguments_json: '{"color":"#112233","name":"utf8-probe-a","name":"utf8-probe-b"}',
      });
      assert.deepEqual([dup.success, dup.error_code], [false, 'INVALID_JSON']);
      await assertNothingWritten();
      const ok = await send(client, callTool(Buffer.from('create_code'), Buffer.from('{"color":"#112233","name":"utf8-probe-grpc-ok"}')));
      assert.equal(ok.res?.success, true, JSON.stringify(ok));
      created.push('utf8-probe-grpc-ok');
      await assertNothingWritten();
    });
  });

  describe('CLI (the line protocol over stdin bytes)', () => {
    it('each bad line is an INVALID_JSON response line; the next line still runs', async () => {
      const backend = new LocalCliBackend({
        agent: s.agent,
        pipeline: s.pipeline,
        authorization: AS_RESEARCHER.authorization,
        clientName: 'utf8-cli',
        clientType: 'CUSTOM',
      });
      const out: string[] = [];
      const sink: LineOutput = { write: (c: string) => (out.push(c), true), once: () => undefined, on: () => undefined, off: () => undefined };
      const line = (defect: Buffer) =>
        Buffer.concat([
          Buffer.from('{"id":1,"op":"call","tool":"create_code","arguments":{"color":"#112233","name":"utf8-probe-'),
          defect,
          Buffer.from('"}}\n'),
        ]);
      const stdin = new PassThrough();
      for (const d of DEFECTS) stdin.write(line(d.bytes));
      stdin.write('{"id":2,"op":"call","tool":"create_code","arguments":{"color":"#112233","name":"utf8-probe-a","name":"utf8-probe-b"}}\n');
      stdin.end(line(Buffer.from('cli-ok')));
      try {
        await runLineProtocol(stdin, backend, sink, sink);
      } finally {
        await backend.close();
      }
      const responses = out
        .join('')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      assert.equal(responses.length, DEFECTS.length + 2);
      for (const [i, d] of DEFECTS.entries()) {
        assert.deepEqual([responses[i].success, responses[i].error_code, responses[i].details.reason], [false, 'INVALID_JSON', d.reason], d.what);
      }
      assert.deepEqual([responses[DEFECTS.length].error_code, responses[DEFECTS.length].details.key], ['INVALID_JSON', 'name']);
      assert.equal(responses[DEFECTS.length + 1].success, true, JSON.stringify(responses[DEFECTS.length + 1]));
      created.push('utf8-probe-cli-ok');
      await assertNothingWritten();
    });
  });

  describe('the built CLI on its real stdin (`npm run build` first)', () => {
    const BIN = path.join(REPO_ROOT, 'bin', 'marginalia.js');
    let dir: string;
    let project: string;
    before(async () => {
      dir = tmp('marginalia-utf8-cli-');
      project = path.join(dir, 'cli.qda');
      const handle = await openProjectHandle(project, { create: true, checkpointIdleMs: 0 });
      await handle.close();
    });
    after(() => fs.rmSync(dir, { recursive: true, force: true }));

    /**
     * Runs `marginalia <args>` with `input` on stdin, then EOF (at once, or once a stdout line satisfies
     * `endWhen`); resolves with its stdout lines (parsed) and exit code.
     */
    const run = (args: string[], input: Buffer, endWhen?: (line: any) => boolean) =>
      new Promise<{ lines: any[]; code: number | null; stderr: string }>((resolve, reject) => {
        const env: NodeJS.ProcessEnv = {};
        for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('MARGINALIA_')) env[k] = v;
        const child = spawn(process.execPath, [BIN, ...args], { env: { ...env, MARGINALIA_HOME: path.join(dir, 'home') }, stdio: ['pipe', 'pipe', 'pipe'] });
        const out: Buffer[] = [];
        let stderr = '';
        child.stdout.on('data', (d: Buffer) => {
          out.push(d);
          if (
            endWhen &&
            Buffer.concat(out)
              .toString('utf8')
              .split('\n')
              .slice(0, -1)
              .some((l) => endWhen(JSON.parse(l)))
          )
            child.stdin.end();
        });
        child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
        child.on('error', reject);
        child.on('exit', (code) => {
          const text = Buffer.concat(out).toString('utf8').trim();
          resolve({ lines: text ? text.split('\n').map((l) => JSON.parse(l)) : [], code, stderr });
        });
        if (endWhen) child.stdin.write(input);
        else child.stdin.end(input);
      });

    it('marginalia cli: each bad line is an INVALID_JSON line, nothing is written, exit code 0', async () => {
      const bad = DEFECTS.map((d) =>
        Buffer.concat([
          Buffer.from('{"id":1,"op":"call","tool":"create_code","arguments":{"color":"#112233","name":"utf8-probe-'),
          d.bytes,
          Buffer.from('"}}\n'),
        ]),
      );
      const input = Buffer.concat([
        ...bad,
        Buffer.from('{"id":2,"op":"call","tool":"create_code","arguments":{"color":"#112233","name":"utf8-probe-a","name":"utf8-probe-b"}}\n'),
        Buffer.from('{"id":3,"op":"call","tool":"list_codes","arguments":{}}\n'),
      ]);
      const r = await run(['cli', '--project', project], input);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.lines.length, DEFECTS.length + 2, JSON.stringify(r.lines));
      for (const [i, d] of DEFECTS.entries())
        assert.deepEqual([r.lines[i].success, r.lines[i].error_code, r.lines[i].details.reason], [false, 'INVALID_JSON', d.reason], d.what);
      assert.equal(r.lines[DEFECTS.length].details.key, 'name');
      const listed = r.lines[DEFECTS.length + 1];
      assert.equal(listed.id, 3);
      assert.deepEqual(listed.data.codes, []);
    });

    it('marginalia mcp: each bad line is a -32700 parse error with INVALID_JSON; initialize still works', async () => {
      const bad = DEFECTS.map((d) =>
        Buffer.concat([
          Buffer.from('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"create_code","arguments":{"color":"#112233","name":"utf8-probe-'),
          d.bytes,
          Buffer.from('"}}}\n'),
        ]),
      );
      const init = `${JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'utf8-mcp', version: '1' } } })}\n`;
      const r = await run(['mcp', '--project', project], Buffer.concat([...bad, Buffer.from(init)]), (m) => m.id === 9);
      const errors = r.lines.filter((m) => m.id === null);
      assert.equal(errors.length, DEFECTS.length, JSON.stringify(r.lines));
      for (const m of errors) assert.deepEqual([m.error.code, m.error.data.error_code], [-32700, 'INVALID_JSON']);
      const answer = r.lines.find((m) => m.id === 9);
      assert.ok(answer?.result, `${JSON.stringify(r.lines)} ${r.stderr}`);
    });
  });
});
