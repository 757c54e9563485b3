/**
 * Who acts (issue 14 items 2-4), against the real server (`marginalia serve`, `npm run build` first) with
 * the spec's default limits (sessions.max_concurrent 5, 60 requests per minute, approvals 10 in all and 5
 * per agent):
 * - one credential per agent: POST/GET/DELETE /agents with the reviewer token only; `marginalia agent
 *   add/list/revoke` against the same project while the server runs;
 * - five agents with distinct credentials fill the session table, a sixth is refused with 429
 *   SESSION_LIMIT and Retry-After, and the researcher is still served over HTTP (tools, approvals, a session of
 *   their own), WebSocket, MCP and the CLI adapter;
 * - agent B using agent A's session id: 403 SESSION_FORBIDDEN for calls, heartbeat and destroy, audited;
 * - revocation ends the agent's sessions and closes its SSE, WebSocket and MCP listen streams at once;
 *   the researcher ending a session (DELETE /sessions/{id}, end_session) closes its MCP listen stream too;
 * - the rate budget is per credential: a new session does not get a fresh one;
 * - at most 5 pending requests per agent; another agent may still ask;
 * - a full table reclaims the agent session idle longest.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import WebSocket from 'ws';
import { AGENT_TOKEN, REPO_ROOT, REVIEWER_TOKEN, request, startServer, tmpDir, type HttpResult, type ServerProcess } from '../helpers/serverProcess';

const AS_RESEARCHER = { authorization: `Bearer ${REVIEWER_TOKEN}` };

/** The HTTP status of each error code met here (README, "HTTP status codes"), written out. */
const STATUS: Record<string, number> = {
  INVALID_ARGUMENTS: 400,
  UNAUTHORIZED: 401,
  SESSION_NOT_FOUND: 401,
  APPROVAL_FORBIDDEN: 403,
  SESSION_FORBIDDEN: 403,
  AGENT_NOT_FOUND: 404,
  AGENT_EXISTS: 409,
  RATE_LIMITED: 429,
  SESSION_LIMIT: 429,
  APPROVAL_QUEUE_FULL: 429,
};

/** Asserts 200 `{success: true, data}` and returns data. */
function ok(r: HttpResult, what: string): any {
  assert.equal(r.status, 200, `${what}: HTTP ${r.status} ${JSON.stringify(r.body).slice(0, 500)}`);
  assert.equal(r.body.success, true, what);
  return r.body.data;
}

/** Asserts the failure envelope with `code` and its status. */
function fails(r: HttpResult, code: string, what: string): { error: string; error_code: string; details?: any } {
  assert.equal(r.body?.error_code, code, `${what}: expected ${code}, got HTTP ${r.status} ${JSON.stringify(r.body).slice(0, 500)}`);
  assert.equal(r.status, STATUS[code], `${what}: the status of ${code}`);
  assert.equal(r.body.success, false);
  return r.body;
}
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

function newProject(config: string): string {
  const dir = tmpDir('marginalia-agents-');
  fs.mkdirSync(path.join(dir, '.marginalia'), { recursive: true });
  fs.writeFileSync(path.join(dir, '.marginalia', 'config.yaml'), config);
  return path.join(dir, 'study.qda');
}

/** `marginalia agent ...` with the server's MARGINALIA_HOME. */
function agentCli(projectPath: string, args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [path.join(REPO_ROOT, 'bin', 'marginalia.js'), 'agent', ...args, '--project', projectPath], {
    env: { ...process.env, MARGINALIA_HOME: path.join(path.dirname(projectPath), '.marginalia-home') },
    encoding: 'utf8',
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** An open server-sent event stream: resolves `ended` when the server ends the response. */
function openSse(port: number, token: string): Promise<{ ended: Promise<void>; close: () => void; text: () => string }> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: '/events/stream?patterns=*', headers: { ...bearer(token), accept: 'text/event-stream' } }, (res) => {
      if (res.statusCode !== 200) {
        reject(new Error(`SSE answered ${res.statusCode}`));
        return;
      }
      let text = '';
      const ended = new Promise<void>((done) => {
        res.on('end', () => done());
        res.on('close', () => done());
      });
      res.on('data', (d: Buffer) => {
        text += d.toString();
        if (text.includes('\n\n')) resolve({ ended, close: () => req.destroy(), text: () => text });
      });
    });
    req.on('error', reject);
  });
}

/** A WebSocket opened with `token`: resolves with its welcome message, its close code and reason. */
function openWs(
  port: number,
  token: string,
  name: string,
): Promise<{ ws: WebSocket; welcome: any; closed: Promise<{ code: number; reason: string }>; call: (msg: Record<string, unknown>) => Promise<any> }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/ws`, { headers: { ...bearer(token), 'x-marginalia-client': name } });
    const closed = new Promise<{ code: number; reason: string }>((done) => ws.on('close', (code, reason) => done({ code, reason: reason.toString() })));
    const waiting = new Map<unknown, (m: any) => void>();
    let welcomed = false;
    ws.on('message', (raw) => {
      const m = JSON.parse(raw.toString());
      if (!welcomed) {
        welcomed = true;
        if (m.type === 'welcome')
          resolve({ ws, welcome: m, closed, call: (msg) => new Promise((r) => (waiting.set(msg.id, r), ws.send(JSON.stringify(msg)))) });
        else reject(new Error(`no welcome: ${JSON.stringify(m)}`));
        return;
      }
      if (m.id !== undefined && waiting.has(m.id)) {
        waiting.get(m.id)?.(m);
        waiting.delete(m.id);
      }
    });
    ws.on('error', reject);
  });
}

function auditLines(projectPath: string): any[] {
  const file = path.join(path.dirname(projectPath), '.marginalia', 'audit.jsonl');
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

async function waitFor(what: string, fn: () => boolean | Promise<boolean>, ms = 5000): Promise<void> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (await fn()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  assert.fail(`timed out waiting for ${what}`);
}

describe('security: one credential per agent, sessions that belong to it, a researcher never locked out', function () {
  this.timeout(120_000);
  let server: ServerProcess;
  let projectPath: string;
  const tokens: Record<string, string> = {};

  const call = (name: string, args: Record<string, unknown>, headers: Record<string, string>) =>
    request(server.base, 'POST', `/tools/${name}`, { arguments: args }, headers);
  const sessionCreate = (token: string, name: string, extra: Record<string, unknown> = {}) =>
    request(server.base, 'POST', '/session/create', { client_type: 'ASSISTANT_A_CLI', client_name: name, ...extra }, bearer(token));
  const sessions = async (): Promise<any[]> => ok(await request(server.base, 'GET', '/sessions', undefined, AS_RESEARCHER), 'GET /sessions').sessions;
  /** The researcher ends every agent session (the table is empty for the next test). */
  const clearTable = async () => {
    for (const s of await sessions())
      if (s.role === 'agent') ok(await request(server.base, 'DELETE', `/sessions/${s.session_id}`, undefined, AS_RESEARCHER), 'end');
  };

  before(async () => {
    // the defaults that matter here are the spec's (max_concurrent 5, 60 requests a minute); a heartbeat of 1 s makes a
    // session idle after 2 s, so reclaiming can be seen
    projectPath = newProject('agent_context:\n  sessions:\n    heartbeat_interval_seconds: 1\n');
    server = await startServer(projectPath);
  });
  after(async () => {
    await server?.stop();
  });
  // each test starts with an empty table (the researcher ends what a failed test left)
  afterEach(async () => {
    if (server) await clearTable();
  });

  it('issues, lists and revokes credentials with the reviewer token only; tokens are shown once and stored hashed', async () => {
    for (const name of ['A', 'B', 'C', 'D', 'E', 'F']) {
      const r = await request(server.base, 'POST', '/agents', { name }, AS_RESEARCHER);
      assert.equal(r.status, 201, JSON.stringify(r.body));
      assert.equal(r.body.data.name, name);
      assert.match(r.body.data.token, /^[A-Za-z0-9_-]{43}$/);
      tokens[name] = r.body.data.token;
    }
    fails(await request(server.base, 'POST', '/agents', { name: 'A' }, AS_RESEARCHER), 'AGENT_EXISTS', 'duplicate');
    fails(await request(server.base, 'POST', '/agents', { name: '' }, AS_RESEARCHER), 'INVALID_ARGUMENTS', 'empty');
    fails(await request(server.base, 'POST', '/agents', { name: 'agent' }, AS_RESEARCHER), 'AGENT_EXISTS', 'reserved');
    // agents may not manage credentials, with the install's token or their own
    for (const token of [AGENT_TOKEN, tokens.A as string]) {
      fails(await request(server.base, 'POST', '/agents', { name: 'Sneaky' }, bearer(token)), 'APPROVAL_FORBIDDEN', 'agent issues');
      fails(await request(server.base, 'GET', '/agents', undefined, bearer(token)), 'APPROVAL_FORBIDDEN', 'agent lists');
      fails(await request(server.base, 'DELETE', '/agents/B', undefined, bearer(token)), 'APPROVAL_FORBIDDEN', 'agent revokes');
    }
    const list = ok(await request(server.base, 'GET', '/agents', undefined, AS_RESEARCHER), 'list');
    assert.deepEqual(
      list.agents.map((a: any) => a.name),
      ['A', 'B', 'C', 'D', 'E', 'F'],
    );
    assert.deepEqual(Object.keys(list.agents[0]).sort(), ['created_at', 'last_used_at', 'name']);
    fails(await request(server.base, 'DELETE', '/agents/Nobody', undefined, AS_RESEARCHER), 'AGENT_NOT_FOUND', 'unknown');
    // stored as hashes only
    const stored = fs
      .readdirSync(path.join(path.dirname(projectPath), '.marginalia-home', 'agents'))
      .map((f) => fs.readFileSync(path.join(path.dirname(projectPath), '.marginalia-home', 'agents', f), 'utf8'));
    assert.equal(stored.length, 1);
    for (const token of Object.values(tokens)) assert.ok(!(stored[0] as string).includes(token));
    // each token works, as its own agent
    ok(await call('list_codes', {}, bearer(tokens.A as string)), 'A calls');
  });

  it("gives a credential one implicit session whatever X-Marginalia-Client says, and records the client's model", async () => {
    for (const client of ['one', 'two', 'three', 'four', 'five', 'six']) {
      ok(await call('list_codes', {}, { ...bearer(tokens.B as string), 'x-marginalia-client': client, 'x-marginalia-model': 'model-x' }), client);
    }
    const mine = (await sessions()).filter((s) => s.agent === 'B');
    assert.equal(mine.length, 1, JSON.stringify(mine));
    assert.equal(mine[0].implicit, true);
    assert.equal(mine[0].model, 'model-x');
    await clearTable();
  });

  it('five agents fill the table; a sixth gets 429 SESSION_LIMIT with Retry-After; the researcher is served on HTTP, WebSocket, MCP and the CLI', async () => {
    const ids: Record<string, string> = {};
    for (const name of ['A', 'B', 'C', 'D', 'E']) {
      const r = await sessionCreate(tokens[name] as string, `client-${name}`, { model: `model-${name}` });
      ids[name] = ok(r, `session of ${name}`).session_id;
    }
    const sixth = await sessionCreate(tokens.F as string, 'client-F');
    fails(sixth, 'SESSION_LIMIT', 'the sixth agent');
    assert.ok(Number(sixth.headers['retry-after']) >= 1, `Retry-After: ${sixth.headers['retry-after']}`);
    fails(await call('list_codes', {}, bearer(AGENT_TOKEN)), 'SESSION_LIMIT', "the install's token's implicit session is an agent's too");

    // the researcher: tools, approvals, a session of their own, repeatedly
    for (let i = 0; i < 3; i++) ok(await call('list_codes', {}, { ...AS_RESEARCHER, 'x-marginalia-client': `researcher-${i}` }), 'researcher list_codes');
    ok(await request(server.base, 'GET', '/approvals?status=pending', undefined, AS_RESEARCHER), 'GET /approvals');
    ok(await sessionCreate(REVIEWER_TOKEN, 'researcher-explicit'), 'researcher session/create');
    const listed = await sessions();
    assert.equal(listed.filter((s) => s.role === 'agent').length, 5);
    const a = listed.find((s) => s.session_id === ids.A);
    assert.equal(a.agent, 'A');
    assert.equal(a.model, 'model-A');
    const one = ok(await request(server.base, 'GET', `/sessions/${ids.A}`, undefined, AS_RESEARCHER), 'GET /sessions/{id}');
    for (const k of ['session_id', 'client_type', 'client_name', 'created_at', 'last_activity', 'status', 'subscriptions', 'context', 'agent', 'model'])
      assert.ok(k in one, k);
    assert.deepEqual(Object.keys(one.context).sort(), ['preferences', 'project_id', 'trust_level', 'user_id']);
    fails(await request(server.base, 'GET', `/sessions/${ids.A}`, undefined, bearer(tokens.A as string)), 'APPROVAL_FORBIDDEN', 'an agent may not look');

    // WebSocket as the researcher: a session, a tool call
    const ws = await openWs(server.port, REVIEWER_TOKEN, 'researcher-ws');
    assert.equal(ws.welcome.role, 'researcher');
    const wsCall = await ws.call({ id: 1, op: 'call', tool: 'list_codes', arguments: {} });
    assert.equal(wsCall.ok, true, JSON.stringify(wsCall));
    ws.ws.close();
    // an agent's WebSocket is refused (try later)
    const refused = await new Promise<number>((resolve) => {
      const w = new WebSocket(`ws://127.0.0.1:${server.port}/ws`, { headers: bearer(tokens.F as string) });
      w.on('close', (code) => resolve(code));
      w.on('error', () => undefined);
    });
    assert.equal(refused, 1013);

    // MCP over Streamable HTTP as the researcher
    const mcpHeaders = { ...AS_RESEARCHER, accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' };
    const init = await request(
      server.base,
      'POST',
      '/mcp',
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'researcher-mcp', version: '1' } },
      },
      mcpHeaders,
    );
    assert.equal(init.status, 200, JSON.stringify(init.body).slice(0, 300));
    const mcpCall = await request(
      server.base,
      'POST',
      '/mcp',
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'list_codes', arguments: {} } },
      mcpHeaders,
    );
    assert.equal(mcpCall.status, 200);
    const text = typeof mcpCall.body === 'string' ? mcpCall.body : JSON.stringify(mcpCall.body);
    assert.ok(text.includes('"result"') && !text.includes('SESSION_LIMIT') && !text.includes('"isError":true'), text.slice(0, 400));

    // the CLI adapter as the researcher (it forwards to this server through the discovery file)
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      MARGINALIA_HOME: path.join(path.dirname(projectPath), '.marginalia-home'),
      MARGINALIA_REVIEWER_TOKEN: REVIEWER_TOKEN,
    };
    delete env.MARGINALIA_TOKEN;
    const cli = spawnSync(process.execPath, [path.join(REPO_ROOT, 'bin', 'marginalia.js'), 'cli', '--project', projectPath, '--client', 'researcher-cli'], {
      env,
      input: `${JSON.stringify({ id: 1, op: 'call', tool: 'list_codes', arguments: {} })}\n${JSON.stringify({ id: 2, op: 'list_approvals' })}\n`,
      encoding: 'utf8',
      timeout: 30_000,
    });
    const replies = cli.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    assert.deepEqual(
      replies.map((r) => [r.id, r.success]),
      [
        [1, true],
        [2, true],
      ],
      `${cli.stdout}\n${cli.stderr}`,
    );

    // the researcher frees a slot: the sixth agent gets in
    ok(await request(server.base, 'DELETE', `/sessions/${ids.E}`, undefined, AS_RESEARCHER), 'end E');
    fails(await request(server.base, 'POST', '/session/heartbeat', { session_id: ids.E }, bearer(tokens.E as string)), 'SESSION_NOT_FOUND', 'E ended');
    ok(await sessionCreate(tokens.F as string, 'client-F'), 'F after a slot was freed');
    await clearTable();
  });

  it("refuses agent B in agent A's session (403 SESSION_FORBIDDEN for calls, heartbeat, destroy) and audits it", async () => {
    const a = ok(await sessionCreate(tokens.A as string, 'client-A'), 'A').session_id as string;
    const before = auditLines(projectPath).length;
    fails(await call('list_codes', {}, { ...bearer(tokens.B as string), 'x-marginalia-session': a }), 'SESSION_FORBIDDEN', 'B calls in A');
    fails(await call('list_codes', {}, { ...bearer(AGENT_TOKEN), 'x-marginalia-session': a }), 'SESSION_FORBIDDEN', "the install's token in A");
    fails(await request(server.base, 'POST', '/session/heartbeat', { session_id: a }, bearer(tokens.B as string)), 'SESSION_FORBIDDEN', 'B heartbeats A');
    fails(await request(server.base, 'POST', '/session/destroy', { session_id: a }, bearer(tokens.B as string)), 'SESSION_FORBIDDEN', 'B destroys A');
    // A's session is untouched and still A's
    ok(await call('list_codes', {}, { ...bearer(tokens.A as string), 'x-marginalia-session': a }), 'A in A');
    ok(await request(server.base, 'POST', '/session/heartbeat', { session_id: a }, bearer(tokens.A as string)), 'A heartbeats');
    await waitFor(
      'the audit lines',
      () =>
        auditLines(projectPath)
          .slice(before)
          .filter((l) => l.error_code === 'SESSION_FORBIDDEN').length >= 4,
    );
    const refusals = auditLines(projectPath)
      .slice(before)
      .filter((l) => l.error_code === 'SESSION_FORBIDDEN');
    assert.ok(
      refusals.every((l) => l.decision === 'denied' && l.session_id === a),
      JSON.stringify(refusals),
    );
    // the researcher may end it (and only ends it: acting in it is refused too)
    fails(await call('list_codes', {}, { ...AS_RESEARCHER, 'x-marginalia-session': a }), 'SESSION_FORBIDDEN', 'the researcher acts in A');
    const ended = ok(await request(server.base, 'POST', '/session/destroy', { session_id: a }, AS_RESEARCHER), 'the researcher ends A');
    assert.equal(ended.reason, 'ended_by_researcher');
    await clearTable();
  });

  it('revoking a credential ends its sessions and closes its SSE, WebSocket and MCP subscriptions/listen streams at once; its token is refused', async () => {
    // the official MCP client (2026-07-28), listening for resource changes with C's credential
    const mcp = new Client({ name: 'agent-C', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${server.base}/mcp`), { requestInit: { headers: bearer(tokens.C as string) } }));
    const listening = await mcp.listen({ resourceSubscriptions: ['qda://codes'], resourcesListChanged: true });
    const explicit = ok(await sessionCreate(tokens.C as string, 'client-C'), 'C').session_id as string;
    const sse = await openSse(server.port, tokens.C as string);
    const ws = await openWs(server.port, tokens.C as string, 'ws-C');
    const other = await openSse(server.port, tokens.D as string);
    assert.ok((await sessions()).filter((s) => s.agent === 'C').length >= 3);
    const started = Date.now();
    const r = ok(await request(server.base, 'DELETE', '/agents/C', undefined, AS_RESEARCHER), 'revoke C');
    assert.equal(r.revoked, true);
    await sse.ended;
    const closed = await ws.closed;
    assert.ok(Date.now() - started < 2000, `closed after ${Date.now() - started} ms`);
    assert.match(closed.reason, /revoked/);
    assert.equal(await listening.closed, 'remote', 'the MCP listen stream ended by the server');
    await mcp.close().catch(() => undefined);
    assert.equal((await sessions()).filter((s) => s.agent === 'C').length, 0);
    fails(await call('list_codes', {}, bearer(tokens.C as string)), 'UNAUTHORIZED', 'the revoked token');
    fails(await request(server.base, 'POST', '/session/heartbeat', { session_id: explicit }, bearer(tokens.C as string)), 'UNAUTHORIZED', 'its session');
    // D's stream is untouched
    let dEnded = false;
    void other.ended.then(() => (dEnded = true));
    await new Promise((res) => setTimeout(res, 200));
    assert.equal(dEnded, false);
    other.close();
    await clearTable();
  });

  it('ending a session (DELETE /sessions/{id}, end_session) closes its MCP subscriptions/listen stream; the agent keeps its credential', async () => {
    for (const [i, end] of ['DELETE /sessions/{id}', 'end_session'].entries()) {
      const mcp = new Client({ name: `agent-D-${i}`, version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
      await mcp.connect(new StreamableHTTPClientTransport(new URL(`${server.base}/mcp`), { requestInit: { headers: bearer(tokens.D as string) } }));
      const listening = await mcp.listen({ resourceSubscriptions: ['qda://codes'], resourcesListChanged: true });
      // a tool call over MCP opens D's implicit session (listening alone opens none)
      await mcp.callTool({ name: 'list_codes', arguments: {} });
      const other = new Client({ name: `agent-E-${i}`, version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
      await other.connect(new StreamableHTTPClientTransport(new URL(`${server.base}/mcp`), { requestInit: { headers: bearer(tokens.E as string) } }));
      const otherListening = await other.listen({ resourceSubscriptions: ['qda://codes'], resourcesListChanged: true });
      let otherClosed = false;
      void otherListening.closed.then(() => (otherClosed = true));
      const mine = (await sessions()).filter((s) => s.agent === 'D');
      assert.equal(mine.length, 1, `D's implicit session: ${JSON.stringify(mine)}`);
      const id = mine[0].session_id as string;
      let settled = false;
      void listening.closed.then(() => (settled = true));
      await new Promise((r) => setTimeout(r, 100));
      assert.equal(settled, false, 'the stream is open before the session ends');
      const started = Date.now();
      if (end === 'end_session') ok(await call('end_session', { session_id: id }, AS_RESEARCHER), end);
      else ok(await request(server.base, 'DELETE', `/sessions/${id}`, undefined, AS_RESEARCHER), end);
      assert.equal(await listening.closed, 'remote', `${end}: the MCP listen stream ended by the server`);
      assert.ok(Date.now() - started < 2000, `${end}: closed after ${Date.now() - started} ms`);
      await new Promise((r) => setTimeout(r, 100));
      assert.equal(otherClosed, false, `${end}: another agent's stream stays open`);
      await mcp.close().catch(() => undefined);
      await other.close().catch(() => undefined);
      ok(await call('list_codes', {}, bearer(tokens.D as string)), `${end}: D's credential still works (a new implicit session)`);
      await clearTable();
    }
  });

  it('spends one rate budget per credential: a new session does not get a fresh one; the researcher is never limited', async () => {
    const first = ok(await sessionCreate(tokens.D as string, 'D-1'), 'D-1').session_id as string;
    let passed = 0;
    let limited: HttpResult | undefined;
    for (let i = 0; i < 70 && !limited; i++) {
      const r = await call('list_codes', {}, { ...bearer(tokens.D as string), 'x-marginalia-session': first });
      if (r.status === 200) passed++;
      else limited = r;
    }
    assert.ok(limited, 'the budget ran out');
    fails(limited, 'RATE_LIMITED', 'D-1');
    assert.ok(passed <= 60, `${passed} calls passed`);
    assert.ok(Number(limited.headers['retry-after']) >= 1);
    // a new explicit session, and the implicit one: the same spent budget
    const second = ok(await sessionCreate(tokens.D as string, 'D-2'), 'D-2').session_id as string;
    fails(await call('list_codes', {}, { ...bearer(tokens.D as string), 'x-marginalia-session': second }), 'RATE_LIMITED', 'D-2');
    fails(await call('list_codes', {}, { ...bearer(tokens.D as string), 'x-marginalia-client': 'fresh-name' }), 'RATE_LIMITED', 'D implicit');
    // another agent has its own budget, and the researcher none
    ok(await call('list_codes', {}, bearer(tokens.E as string)), 'E');
    for (let i = 0; i < 70; i++) ok(await call('list_codes', {}, AS_RESEARCHER), `researcher ${i}`);
    await clearTable();
  });

  it('holds at most 5 pending requests per agent (10 in all); another agent may still ask', async () => {
    const held: string[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await call('create_code', { name: `E-code ${i}`, color: '#59A14F' }, bearer(tokens.E as string));
      assert.equal(r.status, 202, JSON.stringify(r.body));
      held.push(r.body.data.request_id);
    }
    const sixth = await call('create_code', { name: 'E-code 5', color: '#59A14F' }, bearer(tokens.E as string));
    const failure = fails(sixth, 'APPROVAL_QUEUE_FULL', 'the sixth of E');
    assert.equal(failure.details.limit_key, 'max_pending_per_agent');
    // from a new session of the same credential: still refused
    const again = ok(await sessionCreate(tokens.E as string, 'E-2'), 'E-2').session_id as string;
    fails(
      await call('create_code', { name: 'E-code 6', color: '#59A14F' }, { ...bearer(tokens.E as string), 'x-marginalia-session': again }),
      'APPROVAL_QUEUE_FULL',
      'E from a new session',
    );
    // F may still ask
    const f = await call('create_code', { name: 'F-code', color: '#59A14F' }, bearer(tokens.F as string));
    assert.equal(f.status, 202, JSON.stringify(f.body));
    // a decision makes room for E again
    ok(await request(server.base, 'POST', `/approvals/${held[0]}/reject`, { reason: 'not now' }, AS_RESEARCHER), 'reject');
    assert.equal((await call('create_code', { name: 'E-code 7', color: '#59A14F' }, bearer(tokens.E as string))).status, 202);
    await clearTable();
  });

  it('a full table reclaims the agent session idle longest for a newcomer', async () => {
    const ids: string[] = [];
    for (const name of ['A', 'B', 'D', 'E', 'F']) ids.push(ok(await sessionCreate(tokens[name] as string, `r-${name}`), name).session_id);
    // heartbeat_interval_seconds 1: idle after 2 s; keep all but A's active
    await new Promise((r) => setTimeout(r, 1300));
    for (const [i, name] of ['B', 'D', 'E', 'F'].entries())
      ok(await request(server.base, 'POST', '/session/heartbeat', { session_id: ids[i + 1] }, bearer(tokens[name] as string)), `heartbeat ${name}`);
    await new Promise((r) => setTimeout(r, 900));
    const newcomer = await sessionCreate(tokens.A as string, 'newcomer');
    ok(newcomer, 'the newcomer');
    const live = (await sessions()).map((s) => s.session_id);
    assert.ok(!live.includes(ids[0]), "A's idle session was reclaimed");
    for (const id of ids.slice(1)) assert.ok(live.includes(id), 'the active ones stay');
    await clearTable();
  });

  it('marginalia agent add/list/revoke work against the project while the server runs', async () => {
    const add = agentCli(projectPath, ['add', 'cli-bot']);
    assert.equal(add.status, 0, add.stderr);
    const token = add.stdout.trim();
    assert.match(token, /^[A-Za-z0-9_-]{43}$/);
    ok(await call('list_codes', {}, bearer(token)), 'the new token works at once');
    const list = agentCli(projectPath, ['list']);
    assert.equal(list.status, 0, list.stderr);
    assert.match(list.stdout, /cli-bot/);
    assert.ok(!list.stdout.includes(token));
    const dup = agentCli(projectPath, ['add', 'cli-bot']);
    assert.equal(dup.status, 2);
    assert.match(dup.stderr, /AGENT_EXISTS/);
    const session = ok(await sessionCreate(token, 'cli-bot-session'), 'session').session_id as string;
    const revoke = agentCli(projectPath, ['revoke', 'cli-bot']);
    assert.equal(revoke.status, 0, revoke.stderr);
    await waitFor('the server to notice the revocation', async () => !(await sessions()).some((s) => s.session_id === session), 3000);
    fails(await call('list_codes', {}, bearer(token)), 'UNAUTHORIZED', 'revoked by the CLI');
    const unknown = agentCli(projectPath, ['revoke', 'cli-bot']);
    assert.equal(unknown.status, 2);
    assert.match(unknown.stderr, /AGENT_NOT_FOUND/);
  });
});
