/**
 * End-to-end test of the REST + server-sent events and WebSocket adapters (agent-context spec, sections
 * 4 to 8) against the built CLI (`npm run build` first), through real clients: Node's http for REST,
 * `eventsource` 4 for SSE and `ws` 8 for WebSocket.
 *
 * Servers: A runs with the spec's default trust table (only session and rate limits raised so the many
 * test sessions fit) and is restarted once on the same port; B overrides `create_code: auto` and limits
 * requests to 5 a minute; C configures `delete_code: auto` and must refuse to start.
 *
 * Every audited request carries a unique `X-Correlation-Id`; the last test of A checks that each one is
 * in `.marginalia/audit.jsonl` with the decision its answer implies.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { EventSource } from 'eventsource';
import WebSocket from 'ws';
import { AGENT_TOKEN, REVIEWER_TOKEN, request, startServer, tmpDir, type HttpResult, type ServerProcess } from '../helpers/serverProcess';

/** Event types the SSE listeners register for (EventSource dispatches by `event:` name). */
const TYPES = [
  'coding.code_created',
  'coding.code_deleted',
  'coding.codes_merged',
  'coding.segment_coded',
  'coding.segment_uncoded',
  'coding.category_created',
  'source.imported',
  'source.deleted',
  'case.created',
  'approval.requested',
  'approval.granted',
  'approval.denied',
  'approval.failed',
  'session.connected',
  'session.disconnected',
  'overflow',
];

/** Clients the current test opened; closed after each test, so a failing test never leaves one reconnecting. */
const openClients: { close(): void }[] = [];

interface Received {
  type: string;
  id: string;
  data: any;
}

/** An EventSource with the token in a header (v4 takes a fetch wrapper), collecting every event. */
function openSse(url: string, token = AGENT_TOKEN, firstHeaders: Record<string, string> = {}) {
  const got: Received[] = [];
  const errors: { code?: number; message?: string }[] = [];
  let first = true;
  const es = new EventSource(url, {
    fetch: (input, init) => {
      const extra = first ? firstHeaders : {};
      first = false;
      return fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), ...extra, authorization: `Bearer ${token}` } });
    },
  });
  openClients.push(es);
  for (const t of TYPES)
    es.addEventListener(t, (e) => got.push({ type: t, id: (e as MessageEvent).lastEventId, data: JSON.parse(String((e as MessageEvent).data)) }));
  es.addEventListener('error', (e) => errors.push({ code: (e as unknown as { code?: number }).code, message: (e as unknown as { message?: string }).message }));
  const opened = new Promise<void>((resolve, reject) => {
    es.addEventListener('open', () => resolve());
    es.addEventListener('error', (e) => {
      if (es.readyState === es.CLOSED)
        reject(Object.assign(new Error(`SSE failed: ${(e as unknown as { message?: string }).message}`), { code: (e as unknown as { code?: number }).code }));
    });
  });
  return { es, got, errors, opened };
}

/** A WebSocket client that collects every message and sends requests with ids. */
async function openWs(url: string, headers: Record<string, string> = { authorization: `Bearer ${AGENT_TOKEN}` }) {
  const ws = new WebSocket(url, { headers });
  openClients.push({ close: () => ws.terminate() });
  const messages: any[] = [];
  const waiters = new Map<unknown, (m: any) => void>();
  ws.on('message', (raw) => {
    const m = JSON.parse(raw.toString());
    messages.push(m);
    if (m.type === 'reply' && waiters.has(m.id)) {
      waiters.get(m.id)!(m);
      waiters.delete(m.id);
    }
  });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  let next = 0;
  return {
    ws,
    messages,
    events: () => messages.filter((m) => m.type === 'event'),
    send(msg: Record<string, unknown>): Promise<any> {
      const id = `m${++next}`;
      return new Promise((resolve) => {
        waiters.set(id, resolve);
        ws.send(JSON.stringify({ id, ...msg }));
      });
    },
    close(): Promise<void> {
      return new Promise((resolve) => {
        if (ws.readyState === WebSocket.CLOSED) return resolve();
        ws.once('close', () => resolve());
        ws.close();
      });
    },
  };
}

/** The status and body of a refused WebSocket handshake. */
function wsRefusal(url: string, headers: Record<string, string>): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    ws.on('unexpected-response', (_req, res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
    });
    ws.on('open', () => reject(new Error('the handshake should have been refused')));
    ws.on('error', () => undefined);
  });
}

async function waitFor<T>(what: string, probe: () => T | undefined | false, ms = 10_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = probe();
    if (v) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Writes `.marginalia/config.yaml` beside a new project and returns the project path. */
function newProject(config?: string): string {
  const dir = tmpDir('marginalia-rest-');
  if (config !== undefined) {
    fs.mkdirSync(path.join(dir, '.marginalia'), { recursive: true });
    fs.writeFileSync(path.join(dir, '.marginalia', 'config.yaml'), config);
  }
  return path.join(dir, 'study.qda');
}

interface AuditLine {
  tool: string;
  decision: string;
  session_id: string;
  client_name: string;
  error_code?: string;
  correlation_id?: string;
  trust_level?: string;
  request_id?: string;
}

function readAudit(projectPath: string): AuditLine[] {
  const file = path.join(path.dirname(projectPath), '.marginalia', 'audit.jsonl');
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as AuditLine);
}

/** Every audited request the tests sent, with what its answer implies for the audit line. */
const sent: { correlation: string; status: number; code?: string; label: string; project: string }[] = [];
let seq = 0;

/** An audited request (tools, commands, state, approval decisions, refusals) with a unique correlation id. */
async function api(project: string, base: string, method: string, urlPath: string, body?: unknown, headers: Record<string, string> = {}): Promise<HttpResult> {
  const correlation = `corr-${process.pid}-${++seq}`;
  const res = await request(base, method, urlPath, body, { 'x-correlation-id': correlation, ...headers });
  sent.push({ correlation, status: res.status, code: res.body?.error_code, label: `${method} ${urlPath}`, project });
  return res;
}

/** The audit decisions an answer allows. */
function decisionsFor(status: number, code: string | undefined): string[] {
  if (status === 200) return ['permitted', 'notified'];
  if (status === 202) return ['pending'];
  if (
    ['UNAUTHORIZED', 'FORBIDDEN_HOST', 'UNSUPPORTED_MEDIA_TYPE', 'RATE_LIMITED', 'APPROVAL_QUEUE_FULL', 'APPROVAL_FORBIDDEN', 'SESSION_NOT_FOUND'].includes(
      code ?? '',
    )
  )
    return ['denied'];
  return ['failed'];
}

const agentAs = (client: string) => ({ authorization: `Bearer ${AGENT_TOKEN}`, 'x-marginalia-client': client });
const researcher = { authorization: `Bearer ${REVIEWER_TOKEN}`, 'x-marginalia-client': 'researcher' };
const RED = '#E15759';

describe('REST + SSE and WebSocket adapters end to end (real clients)', function () {
  this.timeout(120_000);
  afterEach(() => {
    for (const c of openClients.splice(0)) c.close();
  });

  describe('server A: the default trust table', () => {
    const project = newProject(
      'agent_context:\n  sessions:\n    max_concurrent: 100\n  rate_limits:\n    requests_per_minute: 100000\n    mutations_per_minute: 100000\n',
    );
    let server: ServerProcess | undefined;
    let base = '';
    let wsBase = '';
    let sourceId = 0;
    let codeId = 0;
    const call = (method: string, urlPath: string, body?: unknown, headers: Record<string, string> = researcher) =>
      api(project, base, method, urlPath, body, headers);
    const head = async () => (await request(base, 'GET', '/events/history?limit=1', undefined, researcher)).body.data.head_seq as number;

    before(async () => {
      server = await startServer(project);
      base = server.base;
      wsBase = base.replace('http:', 'ws:');
      const src = await call('POST', '/commands/source/add_text_source', {
        name: 'Interview 1',
        content: 'We share the water rota and the tools. Trust grows slowly.',
      });
      assert.equal(src.status, 200, JSON.stringify(src.body));
      sourceId = src.body.data.source_id;
      const code = await call('POST', '/commands/coding/create_code', { name: 'Sharing', color: RED });
      assert.equal(code.status, 200, 'the researcher runs at auto');
      codeId = code.body.data.code_id;
      const seg = await call('POST', '/commands/coding/batch_apply_codes', {
        operations: [{ code_id: codeId, source_id: sourceId, start_position: 3, end_position: 8 }],
      });
      assert.equal(seg.status, 200, JSON.stringify(seg.body));
    });

    after(async () => {
      if (server && server.child.exitCode === null && server.child.signalCode === null) await server.stop();
    });

    const pendingIds: string[] = [];
    const rejectAll = async (ids: string[], reason = 'test cleanup') => {
      for (const id of ids.splice(0)) {
        const r = await call('POST', `/approvals/${id}/reject`, { reason });
        assert.equal(r.status, 200, JSON.stringify(r.body));
      }
    };

    it('applies the default trust level of each category to an agent-token client', async () => {
      const as = agentAs('trust-table');
      const read = await call('POST', '/commands/coding/list_codes', {}, as);
      assert.equal(read.status, 200);
      assert.equal(read.body.data.count, 1);
      const search = await call('POST', '/commands/search/search_text', { query: 'water' }, as);
      assert.equal(search.status, 200, 'search is Autonomous');
      const state = await call('GET', '/state/codes', undefined, as);
      assert.equal(state.status, 200);
      assert.deepEqual(
        state.body.data.codes.map((c: { name: string }) => c.name),
        ['Sharing'],
      );

      const expectPending = async (urlPath: string, body: unknown, level: string) => {
        const r = await call('POST', urlPath, body, as);
        assert.equal(r.status, 202, `${urlPath}: ${JSON.stringify(r.body)}`);
        assert.equal(r.body.success, true);
        assert.equal(r.body.data.status, 'pending_approval');
        assert.equal(r.headers['retry-after'], String(r.body.data.poll_after_ms / 1000), `${urlPath}: Retry-After is poll_after_ms in seconds`);
        assert.equal(r.body.data.trust_level, level, urlPath);
        assert.match(r.body.data.request_id, /^[0-9a-f-]{36}$/);
        pendingIds.push(r.body.data.request_id);
        return r.body.data.request_id as string;
      };
      await expectPending('/commands/coding/create_code', { name: 'Hope', color: RED }, 'suggest'); // Create code: Suggest
      await expectPending(
        '/commands/coding/batch_apply_codes',
        { operations: [{ code_id: codeId, source_id: sourceId, start_position: 10, end_position: 15 }] },
        'require',
      ); // Bulk: Require
      await expectPending('/commands/coding/delete_code', { code_id: codeId, delete_segments: true }, 'require'); // Delete: Require
      // Merge: Require (the named route); a merge into itself would fail, so its dry run refuses it at once (issue 14 item 5)
      const same = await call('POST', '/commands/coding/merge_codes', { source_code_id: codeId, target_code_id: codeId }, as);
      assert.deepEqual([same.status, same.body.error_code], [400, 'MERGE_SAME_CODE'], JSON.stringify(same.body));
      await expectPending('/commands/coding/rename_code', { code_id: codeId, new_name: 'Sharing things' }, 'suggest'); // Rename: Suggest
      await expectPending('/commands/case/create', { name: 'P01' }, 'suggest'); // other creations: trust.default_level (suggest)

      // Apply code is Notify: it runs (and the researcher is told); delete_segment is in that category
      const segs = await call('GET', `/state/segments?filter=source_id:${sourceId}`, undefined, as);
      assert.equal(segs.status, 200);
      assert.equal(segs.body.data.total, 1);
      const del = await call('POST', '/commands/coding/delete_segment', { segment_id: segs.body.data.segments[0].segment_id }, as);
      assert.equal(del.status, 200, JSON.stringify(del.body));

      // nothing pending ran
      const codes = await call('GET', '/state/codes', undefined, as);
      assert.deepEqual(
        codes.body.data.codes.map((c: { name: string }) => c.name),
        ['Sharing'],
      );

      const mine = readAudit(project).filter((l) => l.client_name === 'trust-table');
      const decision = (tool: string) => mine.filter((l) => l.tool === tool).map((l) => `${l.decision}/${l.trust_level}`);
      assert.deepEqual(decision('list_codes'), ['permitted/auto', 'permitted/auto', 'permitted/auto']);
      assert.deepEqual(decision('create_code'), ['pending/suggest']);
      assert.deepEqual(decision('batch_apply_codes'), ['pending/require']);
      assert.deepEqual(decision('delete_code'), ['pending/require']);
      assert.deepEqual(decision('merge_codes'), ['failed/require']);
      assert.deepEqual(decision('delete_segment'), ['notified/notify']);
      await rejectAll(pendingIds);
    });

    it('pending -> approved by the researcher -> executed, with approval.granted and coding.code_created on the SSE stream', async () => {
      const sse = openSse(`${base}/events/stream?patterns=coding.*,approval.*`);
      await sse.opened;
      const asked = await call('POST', '/commands/coding/create_code', { name: 'Hope', color: '#59A14F' }, agentAs('approve-flow'));
      assert.equal(asked.status, 202);
      const id = asked.body.data.request_id as string;
      const listed = await request(base, 'GET', '/approvals?status=pending', undefined, researcher);
      assert.deepEqual(
        listed.body.data.approvals.map((a: { request_id: string }) => a.request_id),
        [id],
      );

      const approved = await call('POST', `/approvals/${id}/approve`, {}, researcher);
      assert.equal(approved.status, 200, JSON.stringify(approved.body));
      assert.equal(approved.body.data.status, 'completed');
      const newCode = approved.body.data.result.code_id;
      assert.ok(Number.isInteger(newCode) && newCode > codeId);

      await waitFor('the code_created event', () => sse.got.some((e) => e.type === 'coding.code_created'));
      sse.es.close();
      const mine = sse.got.filter((e) => e.data.metadata.correlation_id === id || e.data.payload.request_id === id);
      assert.deepEqual(
        mine.map((e) => e.type),
        ['approval.requested', 'approval.granted', 'coding.code_created'],
      );
      const created = mine[2]!;
      assert.equal(created.data.payload.name, 'Hope');
      assert.equal(created.data.payload.code_id, newCode);
      assert.equal(created.id, String(created.data.metadata.sequence_number), 'SSE id is the sequence number');
      const ids = mine.map((e) => Number(e.id));
      assert.deepEqual(
        [...ids].sort((a, b) => a - b),
        ids,
        'in sequence order',
      );
      const state = await call('GET', `/state/codes/${newCode}`, undefined, agentAs('approve-flow'));
      assert.equal(state.status, 200);
      assert.equal(state.body.data.name, 'Hope');
    });

    it('reject with a reason -> approval.denied carrying the reason', async () => {
      const since = await head();
      const asked = await call('POST', '/commands/coding/create_code', { name: 'Despair', color: RED }, agentAs('reject-flow'));
      const id = asked.body.data.request_id as string;
      const r = await call('POST', `/approvals/${id}/reject`, { reason: 'not a code we need' }, researcher);
      assert.equal(r.status, 200);
      assert.equal(r.body.data.status, 'rejected');
      const hist = await request(base, 'GET', `/events/history?since=${since}&patterns=approval.denied`, undefined, agentAs('reject-flow'));
      assert.equal(hist.status, 200);
      assert.equal(hist.body.data.count, 1);
      const ev = hist.body.data.events[0];
      assert.equal(ev.event_type, 'approval.denied');
      assert.equal(ev.payload.request_id, id);
      assert.equal(ev.payload.reason, 'not a code we need');
      assert.equal(ev.payload.approved, false);
      const again = await call('POST', `/approvals/${id}/approve`, {}, researcher);
      assert.equal(again.status, 409);
      assert.equal(again.body.error_code, 'APPROVAL_NOT_PENDING');
      const codes = await call('GET', '/state/codes', undefined, researcher);
      assert.ok(!codes.body.data.codes.some((c: { name: string }) => c.name === 'Despair'));
    });

    it('an agent-token session may not approve (403 APPROVAL_FORBIDDEN), over REST or WebSocket', async () => {
      const asked = await call('POST', '/commands/coding/create_code', { name: 'Self-approved', color: RED }, agentAs('self-approver'));
      const id = asked.body.data.request_id as string;
      const own = await call('POST', `/approvals/${id}/approve`, {}, agentAs('self-approver'));
      assert.equal(own.status, 403);
      assert.equal(own.body.error_code, 'APPROVAL_FORBIDDEN');
      const other = await call('POST', `/approvals/${id}/reject`, { reason: 'x' }, agentAs('another-agent'));
      assert.equal(other.status, 403);
      const ws = await openWs(`${wsBase}/ws`);
      const viaWs = await ws.send({ op: 'approve', request_id: id });
      assert.equal(viaWs.ok, false);
      assert.equal(viaWs.error_code, 'APPROVAL_FORBIDDEN');
      await ws.close();
      const still = await request(base, 'GET', `/approvals/${id}`, undefined, researcher);
      assert.equal(still.body.data.status, 'pending');
      await rejectAll([id]);
    });

    it('sessions: create (capabilities), heartbeat, calls in the session, destroy', async () => {
      const created = await request(
        base,
        'POST',
        '/session/create',
        { client_type: 'ASSISTANT_A_CLI', client_name: 'claude-code', user: 'agent-7' },
        agentAs('x'),
      );
      assert.equal(created.status, 200, JSON.stringify(created.body));
      const s = created.body.data;
      assert.match(s.session_id, /^[0-9a-f-]{36}$/);
      assert.equal(s.status, 'ACTIVE');
      assert.equal(s.heartbeat_interval_seconds, 30);
      assert.ok(s.capabilities.tools.includes('create_code') && s.capabilities.tools.includes('list_segments'));
      assert.ok(s.capabilities.resources.includes('qda://codes'));
      assert.ok(s.capabilities.protocols.includes('websocket'));
      const inSession = { authorization: `Bearer ${AGENT_TOKEN}`, 'x-marginalia-session': s.session_id };
      const r = await call('GET', '/state/project', undefined, inSession);
      assert.equal(r.status, 200);
      assert.equal(r.body.data.code_count, 2);
      const beat = await request(base, 'POST', '/session/heartbeat', { session_id: s.session_id }, agentAs('x'));
      assert.equal(beat.status, 200);
      assert.equal(beat.body.data.status, 'ACTIVE');
      // another agent's credential does not own it (issue 14 item 3; the researcher may end any session, see test/security/agentCredentials.test.ts)
      const otherAgent = await request(base, 'POST', '/agents', { name: 'other-agent' }, researcher);
      assert.equal(otherAgent.status, 201, JSON.stringify(otherAgent.body));
      const foreign = await request(base, 'POST', '/session/destroy', { session_id: s.session_id }, { authorization: `Bearer ${otherAgent.body.data.token}` });
      assert.equal(foreign.status, 403);
      assert.equal(foreign.body.error_code, 'SESSION_FORBIDDEN');
      const bad = await request(base, 'POST', '/session/create', { client_type: 'LOCAL_UI', client_name: 'fake ui' }, agentAs('x'));
      assert.equal(bad.status, 400, "LOCAL_UI is the researcher's own session");
      const gone = await request(base, 'POST', '/session/destroy', { session_id: s.session_id }, agentAs('x'));
      assert.equal(gone.status, 200);
      assert.equal(gone.body.data.status, 'ended');
      const after = await request(base, 'POST', '/session/heartbeat', { session_id: s.session_id }, agentAs('x'));
      assert.equal(after.status, 401);
      assert.equal(after.body.error_code, 'SESSION_NOT_FOUND');
      const audited = readAudit(project).find((l) => l.session_id === s.session_id && l.tool === 'get_project_context');
      assert.ok(audited, 'the call ran in the created session');
      const hist = await request(base, 'GET', `/events/history?patterns=session.*&since=0&limit=1000`, undefined, researcher);
      const disc = hist.body.data.events.find((e: any) => e.event_type === 'session.disconnected' && e.payload.session_id === s.session_id);
      assert.equal(disc?.payload.reason, 'client_disconnected');
    });

    it('state routes: sources with coded=, content pages, the segment filter in both syntaxes, cases', async () => {
      const as = agentAs('state-reader');
      const two = await call('POST', '/commands/source/add_text_source', { name: 'Interview 2', content: 'Nobody coded this one yet.' }, researcher);
      await call(
        'POST',
        '/commands/coding/batch_apply_codes',
        { operations: [{ code_id: codeId, source_id: sourceId, start_position: 0, end_position: 2 }] },
        researcher,
      );
      const uncoded = await call('GET', '/state/sources?coded=false', undefined, as);
      assert.deepEqual(
        uncoded.body.data.sources.map((s: { name: string }) => s.name),
        ['Interview 2'],
      );
      const coded = await call('GET', '/state/sources?coded=true&type=text', undefined, as);
      assert.deepEqual(
        coded.body.data.sources.map((s: { name: string }) => s.name),
        ['Interview 1'],
      );
      const badCoded = await call('GET', '/state/sources?coded=maybe', undefined, as);
      assert.equal(badCoded.status, 400);
      const page = await call('GET', `/state/sources/${sourceId}/content?start_pos=3&max_length=5`, undefined, as);
      assert.equal(page.status, 200);
      assert.equal(page.body.data.content, 'share');
      assert.equal(page.body.data.has_more, true);
      const missing = await call('GET', '/state/sources/999/content', undefined, as);
      assert.equal(missing.status, 404);
      assert.equal(missing.body.error_code, 'SOURCE_NOT_FOUND');
      const a = await call('GET', `/state/segments?filter=code_id:${codeId},source_id:${sourceId}`, undefined, as);
      const b = await call('GET', `/state/segments?code_id=${codeId}&source_id=${sourceId}`, undefined, as);
      assert.equal(a.status, 200);
      assert.deepEqual(a.body.data, b.body.data);
      assert.equal(a.body.data.total, 1);
      assert.equal(a.body.data.segments[0].text, 'We');
      const none = await call('GET', `/state/segments?source_id=${two.body.data.source_id}`, undefined, as);
      assert.equal(none.body.data.total, 0);
      const unknownKey = await call('GET', '/state/segments?filter=colour:3', undefined, as);
      assert.equal(unknownKey.status, 400);
      const conflict = await call('GET', '/state/segments?filter=code_id:1&code_id=2', undefined, as);
      assert.equal(conflict.status, 400);
      const cases = await call('GET', '/state/cases', undefined, as);
      assert.equal(cases.status, 200);
      assert.equal(cases.body.data.count, 0);
      const proj = await call('GET', '/state/project', undefined, as);
      assert.equal(proj.body.data.source_count, 2);
    });

    it('command routes: the generic route checks the category, a missing tool is 501, the envelope of create_code has the code id', async () => {
      const wrongCategory = await call('POST', '/commands/source/list_codes', {}, agentAs('commands'));
      assert.equal(wrongCategory.status, 404);
      assert.equal(wrongCategory.body.details.path, '/commands/coding/list_codes');
      const unknown = await call('POST', '/commands/coding/no_such_tool', {}, agentAs('commands'));
      assert.equal(unknown.status, 404);
      assert.equal(unknown.body.error_code, 'TOOL_NOT_FOUND');
      const listing = await request(base, 'GET', '/commands', undefined, agentAs('commands'));
      const route = (p: string) => listing.body.data.routes.find((r: { path: string }) => r.path === p);
      assert.equal(route('/commands/coding/create_code').tool, 'create_code');
      for (const [p, body] of [
        ['/commands/coding/apply_code', { code_id: codeId, source_id: sourceId, start_position: 0, end_position: 2 }],
        ['/commands/analysis/generate_report', { report_type: 'frequency' }],
      ] as const) {
        const r = await call('POST', p, body, agentAs('commands'));
        if (route(p).available) assert.notEqual(r.status, 501, p);
        else {
          assert.equal(r.status, 501, `${p}: ${JSON.stringify(r.body)}`);
          assert.equal(r.body.error_code, 'HANDLER_NOT_FOUND');
        }
      }
      const badReport = await call('POST', '/commands/analysis/generate_report', { report_type: 'pie' }, agentAs('commands'));
      assert.equal(badReport.status, 400);
      // the researcher's create_code runs at once: success returns the new code id; {"arguments": ...} works too
      const made = await call('POST', '/commands/coding/create_code', { arguments: { name: 'Care', color: RED } }, researcher);
      assert.equal(made.status, 200);
      assert.ok(Number.isInteger(made.body.data.code_id));
    });

    it('SSE resume by Last-Event-ID loses nothing: every event exactly once, in order', async () => {
      const start = await head();
      const create = (name: string) => call('POST', '/commands/coding/create_code', { name, color: RED }, researcher);
      for (const n of ['R1', 'R2', 'R3']) await create(n);
      const first = openSse(`${base}/events/stream?patterns=coding.*&since=${start}`);
      await first.opened;
      await waitFor('R1..R3', () => first.got.length >= 3);
      first.es.close(); // disconnect mid-stream
      const lastId = first.got[first.got.length - 1]!.id;
      for (const n of ['R4', 'R5', 'R6', 'R7']) await create(n);
      await call('POST', '/commands/source/add_text_source', { name: 'Not coding', content: 'x' }, researcher);
      // reconnect with the last id; ?since= stays in the URL as EventSource keeps it, and the header wins
      const second = openSse(`${base}/events/stream?patterns=coding.*&since=${start}`, AGENT_TOKEN, { 'Last-Event-ID': lastId });
      await second.opened;
      await waitFor('R4..R7', () => second.got.length >= 4);
      await create('R8');
      await waitFor('R8 live', () => second.got.length >= 5);
      await sleep(200);
      second.es.close();
      const names = [...first.got, ...second.got].map((e) => e.data.payload.name);
      assert.deepEqual(names, ['R1', 'R2', 'R3', 'R4', 'R5', 'R6', 'R7', 'R8']);
      const ids = [...first.got, ...second.got].map((e) => Number(e.id));
      assert.deepEqual(
        [...ids].sort((x, y) => x - y),
        ids,
      );
      assert.equal(new Set(ids).size, ids.length);
      assert.ok([...first.got, ...second.got].every((e) => e.type === 'coding.code_created'));
    });

    it('WebSocket: replay from a sequence, then live, reply before replayed events; unsubscribe stops delivery; close ends the session', async () => {
      const start = await head();
      const create = (name: string) => call('POST', '/commands/coding/create_code', { name, color: RED }, researcher);
      for (const n of ['W1', 'W2']) await create(n);
      const c = await openWs(`${wsBase}/ws?client_name=ws-test`);
      const welcome = await waitFor('welcome', () => c.messages.find((m) => m.type === 'welcome'));
      assert.equal(welcome.role, 'agent');
      const sub = await c.send({ op: 'subscribe', patterns: ['coding.*'], since: start });
      assert.equal(sub.ok, true, JSON.stringify(sub));
      const subId = sub.data.subscription_id;
      await waitFor('W1, W2 replayed', () => c.events().length >= 2);
      const replyIndex = c.messages.indexOf(sub);
      assert.ok(c.messages.findIndex((m) => m.type === 'event') > replyIndex, 'the reply comes before the replayed events');
      await create('W3');
      await waitFor('W3 live', () => c.events().length >= 3);
      assert.deepEqual(
        c.events().map((m) => m.event.payload.name),
        ['W1', 'W2', 'W3'],
      );
      assert.ok(c.events().every((m) => m.subscription_id === subId));
      // a tool call over the socket, in the socket's own session
      const listed = await c.send({ op: 'call', tool: 'list_codes', arguments: {} });
      assert.equal(listed.ok, true);
      assert.equal(listed.status, 'ok');
      const pending = await c.send({ op: 'call', tool: 'create_code', arguments: { name: 'From WS', color: RED } });
      assert.equal(pending.ok, true);
      assert.equal(pending.status, 'pending');
      assert.equal(pending.data.status, 'pending_approval');
      await rejectAll([pending.data.request_id]);
      const bad = await c.send({ op: 'call', tool: 'create_code', arguments: { name: '' } });
      assert.equal(bad.ok, false);
      assert.equal(bad.error_code, 'INVALID_ARGUMENTS');
      const beat = await c.send({ op: 'heartbeat' });
      assert.equal(beat.data.session_id, welcome.session_id);
      const un = await c.send({ op: 'unsubscribe', subscription_id: subId });
      assert.equal(un.ok, true);
      await create('W4');
      await sleep(300);
      assert.equal(c.events().length, 3, 'nothing after unsubscribe');
      await c.close();
      const audit = readAudit(project)
        .filter((l) => l.session_id === welcome.session_id)
        .map((l) => `${l.tool}:${l.decision}`);
      assert.deepEqual(audit, ['list_codes:permitted', 'create_code:pending', 'create_code:failed']);
      let kinds: string[] = [];
      for (let i = 0; i < 50 && kinds.length < 2; i++) {
        const hist = await request(base, 'GET', `/events/history?since=${start}&patterns=session.*`, undefined, researcher);
        kinds = hist.body.data.events.filter((e: any) => e.payload.session_id === welcome.session_id).map((e: any) => e.event_type);
        if (kinds.length < 2) await sleep(50);
      }
      assert.deepEqual(kinds, ['session.connected', 'session.disconnected'], 'the socket was its own session, ended on close');
    });

    it('pattern filtering: subscribers to source.* get no coding events (SSE and WebSocket)', async () => {
      const sse = openSse(`${base}/events/stream?patterns=source.*`);
      await sse.opened;
      const c = await openWs(`${wsBase}/ws`);
      await c.send({ op: 'subscribe', patterns: 'source.*' });
      const all = await openWs(`${wsBase}/ws`);
      await all.send({ op: 'subscribe', patterns: ['coding.code_created', 'source.*'] });
      await call('POST', '/commands/coding/create_code', { name: 'Filtered out', color: RED }, researcher);
      await call('POST', '/commands/source/add_text_source', { name: 'Filtered in', content: 'y' }, researcher);
      // the source event comes after the coding one, and delivery is in sequence order
      await waitFor('source.imported on SSE', () => sse.got.some((e) => e.type === 'source.imported'));
      await waitFor('source.imported on WS', () => c.events().length >= 1);
      await waitFor('both on the wider subscription', () => all.events().length >= 2);
      sse.es.close();
      assert.deepEqual(
        sse.got.map((e) => e.type),
        ['source.imported'],
      );
      assert.deepEqual(
        c.events().map((m) => m.event.event_type),
        ['source.imported'],
      );
      assert.deepEqual(
        all.events().map((m) => m.event.event_type),
        ['coding.code_created', 'source.imported'],
      );
      const bad = await c.send({ op: 'subscribe', patterns: ['coding.**'] });
      assert.equal(bad.error_code, 'INVALID_ARGUMENTS');
      await c.close();
      await all.close();
      const badSse = await request(base, 'GET', '/events/stream?patterns=not%20a%20pattern', undefined, agentAs('x'));
      assert.equal(badSse.status, 400);
    });

    it('refuses no token and a bad token (401), a bad Host or Origin (403) and text/plain bodies (415), everywhere', async () => {
      for (const p of ['/state/codes', '/events/history']) {
        assert.equal((await call('GET', p, undefined, { authorization: '' })).status, 401, p);
        assert.equal((await call('GET', p, undefined, { authorization: 'Bearer wrong-token' })).status, 401, p);
      }
      for (const p of ['/commands/coding/list_codes', '/session/create']) {
        const r = await call('POST', p, {}, { authorization: '' });
        assert.equal(r.status, 401, p);
        assert.equal(r.body.error_code, 'UNAUTHORIZED');
      }
      // a token in the query string counts only for the stream routes
      assert.equal((await call('GET', `/state/codes?token=${AGENT_TOKEN}`, undefined, { authorization: '' })).status, 401);
      const noToken = openSse(`${base}/events/stream`, 'wrong-token');
      await assert.rejects(noToken.opened, (e: { code?: number }) => e.code === 401);
      noToken.es.close();
      const queryToken = new EventSource(`${base}/events/stream?token=${AGENT_TOKEN}`);
      openClients.push(queryToken);
      await new Promise<void>((resolve, reject) => {
        queryToken.addEventListener('open', () => resolve());
        queryToken.addEventListener('error', () => reject(new Error('?token= should open the stream')));
      });
      queryToken.close();
      assert.equal((await wsRefusal(`${wsBase}/ws`, {})).status, 401);
      assert.equal((await wsRefusal(`${wsBase}/ws?token=wrong`, {})).status, 401);
      const evilHost = await call('GET', '/state/codes', undefined, { ...agentAs('x'), host: 'evil.example:80' });
      assert.equal(evilHost.status, 403);
      assert.equal(evilHost.body.error_code, 'FORBIDDEN_HOST');
      const evilOrigin = await call('POST', '/commands/coding/list_codes', {}, { ...agentAs('x'), origin: 'http://evil.example' });
      assert.equal(evilOrigin.status, 403);
      const wsOrigin = await wsRefusal(`${wsBase}/ws`, { authorization: `Bearer ${AGENT_TOKEN}`, origin: 'http://evil.example' });
      assert.equal(wsOrigin.status, 403);
      assert.equal(wsOrigin.body.error_code, 'FORBIDDEN_HOST');
      const wsHost = await wsRefusal(`${wsBase}/ws`, { authorization: `Bearer ${AGENT_TOKEN}`, host: 'evil.example' });
      assert.equal(wsHost.status, 403);
      for (const p of ['/tools/list_codes', '/commands/coding/create_code', '/session/create', '/session/heartbeat']) {
        const r = await call('POST', p, '{"arguments":{}}', { ...agentAs('x'), 'content-type': 'text/plain' });
        assert.equal(r.status, 415, p);
        assert.equal(r.body.error_code, 'UNSUPPORTED_MEDIA_TYPE');
      }
      const refusals = readAudit(project).filter((l) => l.decision === 'denied' && l.session_id === '');
      assert.ok(refusals.some((l) => l.tool === 'POST /commands/coding/create_code' && l.error_code === 'UNSUPPORTED_MEDIA_TYPE'));
      assert.ok(refusals.some((l) => l.tool === 'GET /ws' && l.error_code === 'FORBIDDEN_HOST'));
      assert.ok(
        !fs.readFileSync(path.join(path.dirname(project), '.marginalia', 'audit.jsonl'), 'utf8').includes(AGENT_TOKEN),
        'a token is never written to the audit log',
      );
    });

    it('refuses the 11th pending request with 429 APPROVAL_QUEUE_FULL', async () => {
      // two agents (credentials) fill it, five each (approvals.max_pending_per_agent); the eleventh comes from a third
      const filler = async (name: string) => ({
        authorization: `Bearer ${(await request(base, 'POST', '/agents', { name }, researcher)).body.data.token}`,
        'x-marginalia-client': 'queue-filler',
      });
      const fillers = [await filler('queue-filler-1'), await filler('queue-filler-2')];
      const as = agentAs('queue-filler');
      for (let i = 0; i < 10; i++) {
        const r = await call('POST', '/commands/coding/create_code', { name: `Queued ${i}`, color: RED }, fillers[i < 5 ? 0 : 1] as Record<string, string>);
        assert.equal(r.status, 202, `request ${i + 1}: ${JSON.stringify(r.body)}`);
        pendingIds.push(r.body.data.request_id);
      }
      const eleventh = await call('POST', '/commands/coding/create_code', { name: 'Queued 10', color: RED }, as);
      assert.equal(eleventh.status, 429);
      assert.equal(eleventh.body.error_code, 'APPROVAL_QUEUE_FULL');
      const viaWs = await openWs(`${wsBase}/ws`);
      const wsEleventh = await viaWs.send({ op: 'call', tool: 'create_code', arguments: { name: 'Queued 11', color: RED } });
      assert.equal(wsEleventh.error_code, 'APPROVAL_QUEUE_FULL');
      await viaWs.close();
    });

    it('pending requests survive a restart; an SSE client reconnects by itself with Last-Event-ID and misses nothing', async () => {
      const port = server!.port;
      const start = await head();
      const sse = openSse(`${base}/events/stream?patterns=coding.*,approval.*&since=${start}`);
      await sse.opened;
      const before = await request(base, 'GET', '/approvals?status=pending', undefined, researcher);
      assert.equal(before.body.data.count, 10);
      // an event the stream gets before the drop: replayed again after the reconnect, it would show up twice
      await call('POST', '/commands/coding/create_code', { name: 'Before restart', color: RED }, researcher);
      await waitFor('the event before the restart', () => sse.got.some((e) => e.data.payload.name === 'Before restart'));
      assert.equal(await server!.stop(), 0, 'SIGTERM: exit 0');
      server = await startServer(project, ['--port', String(port)]);
      assert.equal(server.base, base);
      const after = await request(base, 'GET', '/approvals?status=pending', undefined, researcher);
      assert.deepEqual(after.body.data.approvals.map((a: { request_id: string }) => a.request_id).sort(), [...pendingIds].sort());
      assert.ok(after.body.data.approvals.every((a: { status: string; tool: string }) => a.status === 'pending' && a.tool === 'create_code'));
      const first = after.body.data.approvals.find((a: { arguments: { name: string } }) => a.arguments.name === 'Queued 0').request_id as string;
      pendingIds.splice(pendingIds.indexOf(first), 1);
      const approved = await call('POST', `/approvals/${first}/approve`, {}, researcher);
      assert.equal(approved.status, 200, JSON.stringify(approved.body));
      assert.equal(approved.body.data.result.name, 'Queued 0');
      await waitFor('the reconnected stream', () => sse.got.some((e) => e.type === 'coding.code_created' && e.data.payload.name === 'Queued 0'), 20_000);
      sse.es.close();
      assert.ok(sse.errors.length > 0, 'the stream did drop');
      const ids = sse.got.map((e) => Number(e.id));
      assert.equal(new Set(ids).size, ids.length, 'no event twice');
      assert.equal(sse.got.filter((e) => e.data.payload.name === 'Before restart').length, 1, 'resumed after the last id it had, not from ?since=');
      assert.deepEqual(
        [...ids].sort((a, b) => a - b),
        ids,
      );
      const mine = sse.got.filter((e) => e.data.metadata.correlation_id === first).map((e) => e.type);
      assert.deepEqual(mine, ['approval.granted', 'coding.code_created']);
      await rejectAll(pendingIds, 'restart test done');
    });

    it('every audited request of these tests is in the audit log with its decision', async () => {
      const lines = readAudit(project);
      const byCorrelation = new Map<string, AuditLine[]>();
      for (const l of lines) if (l.correlation_id) byCorrelation.set(l.correlation_id, [...(byCorrelation.get(l.correlation_id) ?? []), l]);
      const mine = sent.filter((s) => s.project === project);
      assert.ok(mine.length > 50, `${mine.length} requests`);
      for (const s of mine) {
        const found = byCorrelation.get(s.correlation) ?? [];
        assert.ok(found.length > 0, `${s.label} (${s.status} ${s.code ?? ''}) is not in the audit log`);
        const allowed = decisionsFor(s.status, s.code);
        assert.ok(
          found.some((l) => allowed.includes(l.decision)),
          `${s.label} answered ${s.status} ${s.code ?? ''} but was audited as ${found.map((l) => l.decision).join(', ')}`,
        );
      }
    });
  });

  describe('server B: a trust override and rate limits from .marginalia/config.yaml', () => {
    const project = newProject('agent_context:\n  trust:\n    overrides:\n      create_code: auto\n  rate_limits:\n    requests_per_minute: 5\n');
    let server: ServerProcess | undefined;
    before(async () => {
      server = await startServer(project);
    });
    after(async () => {
      if (server) await server.stop();
    });

    it("create_code: auto runs an agent's create_code at once; success returns the new code id", async () => {
      const r = await api(project, server!.base, 'POST', '/commands/coding/create_code', { name: 'Hope', color: RED }, agentAs('override'));
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.ok(Number.isInteger(r.body.data.code_id));
      const line = readAudit(project).find((l) => l.client_name === 'override' && l.tool === 'create_code');
      assert.equal(line?.decision, 'permitted');
      assert.equal(line?.trust_level, 'auto');
      // other levels keep their defaults
      const del = await api(project, server!.base, 'POST', '/commands/coding/delete_code', { code_id: r.body.data.code_id }, agentAs('override'));
      assert.equal(del.status, 202);
    });

    it('requests_per_minute: 5 -> the 6th call is 429 RATE_LIMITED with Retry-After (REST and WebSocket)', async () => {
      // the budget is per credential (issue 14 item 4): a credential of its own for each surface, so each starts whole
      const credential = async (name: string) => `Bearer ${(await request(server!.base, 'POST', '/agents', { name }, researcher)).body.data.token}`;
      const rest = { authorization: await credential('rate-rest'), 'x-marginalia-client': 'rate' };
      const wsToken = await credential('rate-ws');
      for (let i = 1; i <= 5; i++) assert.equal((await api(project, server!.base, 'POST', '/commands/coding/list_codes', {}, rest)).status, 200, `call ${i}`);
      const sixth = await api(project, server!.base, 'POST', '/commands/coding/list_codes', {}, rest);
      assert.equal(sixth.status, 429);
      assert.equal(sixth.body.error_code, 'RATE_LIMITED');
      const retry = Number(sixth.headers['retry-after']);
      assert.ok(Number.isInteger(retry) && retry >= 1 && retry <= 60, `Retry-After ${sixth.headers['retry-after']}`);
      const state = await api(project, server!.base, 'GET', '/state/cases', undefined, rest);
      assert.equal(state.status, 429, 'state reads count too');
      const c = await openWs(`${server!.base.replace('http:', 'ws:')}/ws`, { authorization: wsToken });
      for (let i = 1; i <= 5; i++) assert.equal((await c.send({ op: 'call', tool: 'list_codes' })).ok, true);
      const wsSixth = await c.send({ op: 'call', tool: 'list_codes' });
      assert.equal(wsSixth.error_code, 'RATE_LIMITED');
      assert.ok(wsSixth.details.retry_after_ms > 0);
      await c.close();
      const denied = readAudit(project).filter((l) => l.client_name === 'rate' && l.decision === 'denied');
      assert.deepEqual(
        denied.map((l) => l.error_code),
        ['RATE_LIMITED', 'RATE_LIMITED'],
      );
    });
  });

  describe('server C: a locked trust level', () => {
    it('delete_code: auto in config.yaml -> the server refuses to start with INVALID_CONFIG naming the key (exit 2)', async () => {
      const project = newProject('agent_context:\n  trust:\n    overrides:\n      delete_code: auto\n');
      await assert.rejects(startServer(project), (e: Error) => {
        assert.match(e.message, /exited with 2 before listening/);
        assert.match(e.message, /INVALID_CONFIG/);
        assert.match(e.message, /agent_context\.trust\.overrides\.delete_code/);
        assert.match(e.message, /locked/);
        return true;
      });
    });
  });
});
