/**
 * Cross-surface conformance (issue 14, item 12): one scenario table run against all six protocol surfaces
 * of ONE real `marginalia serve` (built CLI, `node esbuild.mjs` first), asserting the same outcome kind
 * (ok | pending | error) and the same error code on each:
 * - HTTP tool interface: `POST /tools/{name}`;
 * - REST: `POST /commands/{category}/{tool}` (the paths `GET /commands` lists), decisions on `/approvals`;
 * - WebSocket: the `ws` client on `/ws`, `{op: 'call' | 'approve'}` messages;
 * - MCP: the official SDK client (`@modelcontextprotocol/client`) over Streamable HTTP on `/mcp`;
 * - gRPC: @grpc/grpc-js with proto/marginalia.proto over mutual TLS (certificates from `marginalia certs`);
 * - CLI: `marginalia cli --project P` processes forwarding to the server (JSON lines on stdin/stdout).
 *
 * Each driver returns a normalised {@link Outcome}. Rows a surface cannot express name the surface and the
 * reason in the table (`na`), and the test prints them; nothing is skipped silently. Rows that write use a
 * fresh code per row and surface, made by the researcher over HTTP in the row's setup; pending approvals are
 * rejected after every row so the queue limits start empty. Expected values are written out in the table.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import WebSocket from 'ws';
import { AGENT_TOKEN, REPO_ROOT, REVIEWER_TOKEN, request, startServer, tmpDir, type ServerProcess } from '../helpers/serverProcess';

const BIN = path.join(REPO_ROOT, 'bin', 'marginalia.js');
const PROTO = path.join(REPO_ROOT, 'proto', 'marginalia.proto');
const SAMPLE = path.join(REPO_ROOT, 'samples', 'community-gardens');

/** The six surfaces. */
const SURFACES = ['http', 'rest', 'ws', 'mcp', 'grpc', 'cli'] as const;
type Surface = (typeof SURFACES)[number];

/** Who calls: the default agent credential (MARGINALIA_TOKEN; gRPC certificate `bot`), a second agent, the researcher, or nobody. */
type As = 'agent' | 'agentB' | 'researcher' | 'anonymous';

/** A surface's answer, normalised. */
interface Outcome {
  kind: 'ok' | 'pending' | 'error';
  error_code?: string;
  data?: any;
  /** HTTP status where the surface has one (HTTP, REST) */
  http?: number;
  /** the JSON-RPC error code when MCP answered with a protocol error */
  rpc?: number;
}

/** One step a row runs on a surface: a tool call, or a decision on a held request. */
type Step = { call: string; args: Record<string, unknown>; as: As; session?: string } | { approve: string; as: As };

/** Values the rows use, made once in `before`. */
interface Fixture {
  sourceId: number;
  closedSourceId: number;
  codedCodeId: number;
  existingCodeName: string;
  categoryId: number;
  /** an explicit session of the default agent (POST /session/create; gRPC: OpenSession of `bot`) per surface */
  agentSession: Record<Surface, string>;
}

/** One scenario: what to set up, the step, the expected outcome, the surfaces that cannot express it. */
interface Row {
  name: string;
  /** runs before the step (over HTTP as the researcher); its result is handed to `step` */
  setup?: (surface: Surface) => Promise<any>;
  step: (f: Fixture, surface: Surface, prepared: any) => Step;
  expect: { kind: Outcome['kind']; error_code?: string };
  /** extra checks of the outcome on a surface */
  check?: (o: Outcome, surface: Surface) => void;
  /** surfaces that cannot express the case, with the reason */
  na?: Partial<Record<Surface, string>>;
}

let seq = 0;
/** A name no other row uses. */
const fresh = (what: string) => `${what} ${Date.now().toString(36)}-${++seq}`;

describe('conformance: one scenario table on all six surfaces', function () {
  this.timeout(180_000);
  let dir: string;
  let home: string;
  let project: string;
  let server: ServerProcess;
  let agentBToken: string;
  let f: Fixture;
  const cleanup: (() => Promise<void> | void)[] = [];

  // ---- helpers over HTTP (setup and cleanup, as the researcher unless told) ---------------------------------

  const tokenOf = (as: As): string | undefined =>
    as === 'agent' ? AGENT_TOKEN : as === 'agentB' ? agentBToken : as === 'researcher' ? REVIEWER_TOKEN : undefined;
  const authOf = (as: As): Record<string, string> => (as === 'anonymous' ? { authorization: '' } : { authorization: `Bearer ${tokenOf(as)}` });
  /** A tool call over HTTP that must succeed; its data. */
  async function setupCall(tool: string, args: Record<string, unknown>, as: As = 'researcher'): Promise<any> {
    const r = await request(server.base, 'POST', `/tools/${tool}`, { arguments: args }, authOf(as));
    assert.ok(r.status === 200 || r.status === 202, `setup ${tool}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body.data;
  }
  const freshCode = async () => (await setupCall('create_code', { name: fresh('Code'), color: '#4E79A7' })).code_id as number;
  /** A request held for the researcher: the agent's create_code of a new name. */
  const heldRequest = async () => {
    const d = await setupCall('create_code', { name: fresh('Held'), color: '#E15759' }, 'agent');
    assert.equal(d.status, 'pending_approval', JSON.stringify(d));
    return d.request_id as string;
  };
  /** Rejects every pending request (as the researcher), so queue limits start empty for the next row. */
  async function rejectAllPending(): Promise<void> {
    const r = await request(server.base, 'GET', '/approvals?status=pending');
    for (const a of (r.body.data?.approvals ?? r.body.data ?? []) as { request_id: string }[]) {
      await request(server.base, 'POST', `/approvals/${a.request_id}/reject`, { reason: 'conformance cleanup' });
    }
  }

  // ---- drivers ------------------------------------------------------------------------------------------

  /** HTTP tool interface. */
  async function viaHttp(step: Step): Promise<Outcome> {
    if ('approve' in step) return fromHttp(await request(server.base, 'POST', `/approvals/${step.approve}/approve`, {}, authOf(step.as)));
    const headers = { ...authOf(step.as), ...(step.session ? { 'x-marginalia-session': step.session } : {}) };
    return fromHttp(await request(server.base, 'POST', `/tools/${step.call}`, { arguments: step.args }, headers));
  }
  function fromHttp(r: { status: number; body: any }): Outcome {
    if (r.status === 202) return { kind: 'pending', data: r.body.data, http: r.status };
    if (r.status === 200 && r.body.success) return { kind: 'ok', data: r.body.data, http: r.status };
    return { kind: 'error', error_code: r.body?.error_code, http: r.status, data: r.body };
  }

  /** REST: the command routes `GET /commands` lists. */
  let restPaths: Map<string, string>;
  async function viaRest(step: Step): Promise<Outcome> {
    if ('approve' in step) return fromHttp(await request(server.base, 'POST', `/approvals/${step.approve}/approve`, {}, authOf(step.as)));
    const headers = { ...authOf(step.as), ...(step.session ? { 'x-marginalia-session': step.session } : {}) };
    // an unknown tool: the generic route of a real category with a name no tool has
    const route = restPaths.get(step.call) ?? `/commands/codes/${step.call}`;
    return fromHttp(await request(server.base, 'POST', route, { arguments: step.args }, headers));
  }

  /** WebSocket: one connection per caller (a connection is its own session). */
  const sockets = new Map<As, { ws: WebSocket; replies: Map<number, any>; waiters: Map<number, (m: any) => void> }>();
  let wsId = 0;
  function wsConnect(as: As): Promise<{ ws: WebSocket; replies: Map<number, any>; waiters: Map<number, (m: any) => void> } | Outcome> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(`ws://127.0.0.1:${server.port}/ws?client_name=conformance-${as}`, {
        headers: as === 'anonymous' ? {} : { authorization: `Bearer ${tokenOf(as)}` },
      });
      const conn = { ws, replies: new Map<number, any>(), waiters: new Map<number, (m: any) => void>() };
      ws.on('message', (raw) => {
        const m = JSON.parse(raw.toString());
        if (m.type === 'welcome') resolve(conn);
        else if (m.type === 'error') resolve({ kind: 'error', error_code: m.error_code });
        else if (m.type === 'reply') conn.waiters.get(m.id)?.(m);
      });
      ws.once('unexpected-response', (_req, res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve({ kind: 'error', error_code: JSON.parse(text).error_code, http: res.statusCode }));
      });
      ws.once('error', reject);
    });
  }
  async function viaWs(step: Step): Promise<Outcome> {
    let conn = sockets.get(step.as);
    if (!conn) {
      const c = await wsConnect(step.as);
      if ('kind' in c) return c;
      conn = c;
      sockets.set(step.as, conn);
      cleanup.push(() => c.ws.close());
    }
    const id = ++wsId;
    const reply = await new Promise<any>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`no WebSocket reply to ${JSON.stringify(step)}`)), 30_000);
      conn.waiters.set(id, (m) => {
        clearTimeout(t);
        resolve(m);
      });
      conn.ws.send(
        JSON.stringify('approve' in step ? { id, op: 'approve', request_id: step.approve } : { id, op: 'call', tool: step.call, arguments: step.args }),
      );
    });
    if (!reply.ok) return { kind: 'error', error_code: reply.error_code, data: reply };
    return { kind: reply.status === 'pending' || reply.data?.status === 'pending_approval' ? 'pending' : 'ok', data: reply.data };
  }

  /** MCP: the official SDK client, one per caller and session header. */
  const mcpClients = new Map<string, Client>();
  async function viaMcp(step: Step): Promise<Outcome> {
    if ('approve' in step) throw new Error('MCP has no decision on held calls (declared n/a in the table)');
    const key = `${step.as}|${step.session ?? ''}`;
    let client = mcpClients.get(key);
    try {
      if (!client) {
        const c = new Client({ name: `conformance-${step.as}`, version: '1.0.0' });
        const headers: Record<string, string> = {
          ...(step.as === 'anonymous' ? {} : { authorization: `Bearer ${tokenOf(step.as)}` }),
          ...(step.session ? { 'x-marginalia-session': step.session } : {}),
        };
        await c.connect(new StreamableHTTPClientTransport(new URL(`${server.base}/mcp`), { requestInit: { headers } }));
        mcpClients.set(key, c);
        cleanup.push(() => c.close());
        client = c;
      }
      const result: any = await client.callTool({ name: step.call, arguments: step.args });
      if (result.isError) return { kind: 'error', error_code: result.structuredContent?.error_code, data: result };
      const data = result.structuredContent;
      return { kind: data?.status === 'pending_approval' ? 'pending' : 'ok', data };
    } catch (e) {
      // a protocol error (JSON-RPC code, data.error_code where Marginalia raised it), or the HTTP guard's refusal
      const err = e as { code?: number; message: string; data?: { error_code?: string } };
      const inBody = /"error_code":"([A-Z_/]+)"/.exec(err.message)?.[1];
      const sdkNotFound = err.code === -32602 && /Tool \S+ not found/.test(err.message) ? 'TOOL_NOT_FOUND' : undefined;
      return {
        kind: 'error',
        error_code: err.data?.error_code ?? inBody ?? sdkNotFound ?? `unmapped: ${err.code} ${err.message}`,
        rpc: typeof err.code === 'number' && err.code < 0 ? err.code : undefined,
      };
    }
  }

  /** gRPC: certificates `bot` (the default agent), `bot2` (a second agent), `me` (the researcher). */
  let grpcPort: number;
  let GrpcCtor: grpc.ServiceClientConstructor;
  const grpcClients = new Map<As, grpc.Client & Record<string, any>>();
  function grpcClient(as: As): grpc.Client & Record<string, any> {
    let c = grpcClients.get(as);
    if (!c) {
      const name = as === 'agent' ? 'bot' : as === 'agentB' ? 'bot2' : 'me';
      const certs = path.join(home, 'certs');
      const creds = grpc.credentials.createSsl(
        fs.readFileSync(path.join(certs, 'ca.pem')),
        fs.readFileSync(path.join(certs, `client-${name}-key.pem`)),
        fs.readFileSync(path.join(certs, `client-${name}.pem`)),
      );
      c = new GrpcCtor(`127.0.0.1:${grpcPort}`, creds, { 'grpc.ssl_target_name_override': 'localhost' }) as unknown as grpc.Client & Record<string, any>;
      grpcClients.set(as, c);
      const made = c;
      cleanup.push(() => made.close());
    }
    return c;
  }
  function grpcUnary(as: As, method: string, req: Record<string, unknown>): Promise<any> {
    return new Promise((resolve, reject) =>
      grpcClient(as)[method](req, { deadline: Date.now() + 30_000 }, (err: grpc.ServiceError | null, res: any) => (err ? reject(err) : resolve(res))),
    );
  }
  async function viaGrpc(step: Step): Promise<Outcome> {
    if (step.as === 'anonymous') throw new Error('gRPC has no call without a certificate (declared n/a in the table)');
    let res: any;
    try {
      res =
        'approve' in step
          ? await grpcUnary(step.as, 'Approve', { request_id: step.approve })
          : await grpcUnary(step.as, 'CallTool', { tool: step.call, arguments_json: JSON.stringify(step.args), session_id: step.session ?? '' });
    } catch (e) {
      const err = e as grpc.ServiceError;
      return { kind: 'error', error_code: String(err.metadata?.get('error_code')[0] ?? `grpc status ${err.code}`) };
    }
    if (res.status === 'FAILED') return { kind: 'error', error_code: res.error_code, data: res };
    return { kind: res.status === 'PENDING_APPROVAL' ? 'pending' : 'ok', data: res.data_json ? JSON.parse(res.data_json) : undefined };
  }

  /** CLI: one `marginalia cli` process per caller, forwarding to the server. */
  class CliProcess {
    readonly child: ChildProcessWithoutNullStreams;
    readonly lines: any[] = [];
    readonly stderrLines: any[] = [];
    readonly exited: Promise<number | null>;
    private out = '';
    private err = '';
    private wake: (() => void)[] = [];
    constructor(env: Record<string, string>) {
      const base: NodeJS.ProcessEnv = {};
      for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('MARGINALIA_')) base[k] = v;
      this.child = spawn(process.execPath, [BIN, 'cli', '--project', project, '--client', 'conformance-cli'], {
        env: { ...base, MARGINALIA_HOME: home, ...env },
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      this.exited = new Promise((resolve) => this.child.once('exit', (code) => resolve(code)));
      const split = (which: 'out' | 'err', into: any[]) => (d: Buffer) => {
        this[which] += d.toString();
        let nl: number;
        while ((nl = this[which].indexOf('\n')) >= 0) {
          into.push(JSON.parse(this[which].slice(0, nl)));
          this[which] = this[which].slice(nl + 1);
        }
        for (const w of this.wake.splice(0)) w();
      };
      this.child.stdout.on('data', split('out', this.lines));
      this.child.stderr.on('data', split('err', this.stderrLines));
    }
    until<T>(pick: () => T | undefined, what: string): Promise<T> {
      return new Promise((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`CLI: timed out waiting for ${what}; stderr ${JSON.stringify(this.stderrLines)}`)), 30_000);
        const check = () => {
          const v = pick();
          if (v !== undefined) {
            clearTimeout(t);
            resolve(v);
          } else this.wake.push(check);
        };
        check();
      });
    }
    ready(): Promise<any> {
      return this.until(() => this.stderrLines.find((l) => l.type === 'ready' || l.type === 'error'), 'the ready line');
    }
    async send(cmd: Record<string, unknown>): Promise<any> {
      this.child.stdin.write(`${JSON.stringify(cmd)}\n`);
      return this.until(() => this.lines.find((r) => r.id === cmd.id), `the answer to ${JSON.stringify(cmd)}`);
    }
  }
  const clis = new Map<As, CliProcess>();
  let cliId = 0;
  async function viaCli(step: Step): Promise<Outcome> {
    let cli = clis.get(step.as);
    if (!cli) {
      const env: Record<string, string> =
        step.as === 'researcher'
          ? { MARGINALIA_REVIEWER_TOKEN: REVIEWER_TOKEN }
          : { MARGINALIA_TOKEN: step.as === 'anonymous' ? 'not-a-token-of-this-server' : (tokenOf(step.as) as string) };
      const c = new CliProcess(env);
      const ready = await c.ready();
      if (ready.type === 'error') {
        // a CLI that cannot start: one error line and the classified exit code
        const code = await c.exited;
        return { kind: 'error', error_code: ready.error_code, data: { exit: code } };
      }
      clis.set(step.as, c);
      cleanup.push(async () => {
        c.child.stdin.end();
        await c.exited;
      });
      cli = c;
    }
    const id = ++cliId;
    const r = await cli.send('approve' in step ? { id, op: 'approve', request_id: step.approve } : { id, op: 'call', tool: step.call, arguments: step.args });
    if (!r.success) return { kind: 'error', error_code: r.error_code, data: r };
    return { kind: r.data?.status === 'pending_approval' ? 'pending' : 'ok', data: r.data };
  }

  const DRIVERS: Record<Surface, (step: Step) => Promise<Outcome>> = { http: viaHttp, rest: viaRest, ws: viaWs, mcp: viaMcp, grpc: viaGrpc, cli: viaCli };

  // ---- the scenario table ------------------------------------------------------------------------------

  const NO_SESSION_WS = 'a WebSocket connection is its own session, opened on connect; no message names another session';
  const NO_SESSION_CLI = 'marginalia cli runs in the one session it opened at start; no command names another session';
  const NO_DECISION_MCP = 'MCP offers no decision on held calls: the researcher decides on HTTP /approvals, WebSocket, gRPC Approve or the CLI';
  const pendingHasPoll = (o: Outcome, s: Surface) => {
    assert.equal(o.data?.status, 'pending_approval', `${s}: ${JSON.stringify(o.data)}`);
    assert.equal(typeof o.data?.request_id, 'string', s);
    // every surface carries the envelope's data, so the poll interval reaches each one
    assert.ok(Number.isInteger(o.data?.poll_after_ms) && o.data.poll_after_ms > 0, `${s}: poll_after_ms in ${JSON.stringify(o.data)}`);
  };

  const ROWS: Row[] = [
    // trust outcomes
    {
      name: 'auto read: list_codes',
      step: () => ({ call: 'list_codes', args: {}, as: 'agent' }),
      expect: { kind: 'ok' },
      check: (o) => assert.ok(Array.isArray(o.data.codes)),
    },
    {
      name: 'auto read: get_code of a code that exists',
      step: (fx) => ({ call: 'get_code', args: { code_id: fx.codedCodeId }, as: 'agent' }),
      expect: { kind: 'ok' },
    },
    { name: 'auto search: search_text', step: () => ({ call: 'search_text', args: { query: 'garden' }, as: 'agent' }), expect: { kind: 'ok' } },
    {
      name: 'auto write (override create_category: auto): create_category runs at once',
      step: () => ({ call: 'create_category', args: { name: fresh('Category') }, as: 'agent' }),
      expect: { kind: 'ok' },
      check: (o) => assert.ok(o.data.category_id > 0),
    },
    {
      name: 'notify write: apply_code runs at once',
      setup: freshCode,
      step: (fx, _s, codeId) => ({ call: 'apply_code', args: { code_id: codeId, source_id: fx.sourceId, start_position: 0, end_position: 12 }, as: 'agent' }),
      expect: { kind: 'ok' },
    },
    {
      name: 'suggest: create_code by an agent is held (pending, poll_after_ms)',
      step: () => ({ call: 'create_code', args: { name: fresh('Suggested'), color: '#59A14F' }, as: 'agent' }),
      expect: { kind: 'pending' },
      check: pendingHasPoll,
    },
    {
      name: 'suggest: rename_code by an agent is held',
      setup: freshCode,
      step: (_fx, _s, codeId) => ({ call: 'rename_code', args: { code_id: codeId, new_name: fresh('Renamed') }, as: 'agent' }),
      expect: { kind: 'pending' },
      check: pendingHasPoll,
    },
    {
      name: 'locked suggest: delete_code of an unused code by an agent is held',
      setup: freshCode,
      step: (_fx, _s, codeId) => ({ call: 'delete_code', args: { code_id: codeId }, as: 'agent' }),
      expect: { kind: 'pending' },
      check: pendingHasPoll,
    },
    {
      name: 'the researcher is never held: create_code runs at once',
      step: () => ({ call: 'create_code', args: { name: fresh('Researcher'), color: '#76B7B2' }, as: 'researcher' }),
      expect: { kind: 'ok' },
    },
    // approvals
    {
      name: 'approve_suggestion by an agent: APPROVAL_FORBIDDEN',
      step: () => ({ call: 'approve_suggestion', args: { suggestion_id: 1 }, as: 'agent' }),
      expect: { kind: 'error', error_code: 'APPROVAL_FORBIDDEN' },
    },
    {
      name: 'approve_coding_suggestion by an agent: APPROVAL_FORBIDDEN',
      step: () => ({ call: 'approve_coding_suggestion', args: { suggestion_id: 1 }, as: 'agent' }),
      expect: { kind: 'error', error_code: 'APPROVAL_FORBIDDEN' },
    },
    {
      name: 'approve_merge by an agent: APPROVAL_FORBIDDEN',
      step: () => ({ call: 'approve_merge', args: { merge_suggestion_id: 1 }, as: 'agent' }),
      expect: { kind: 'error', error_code: 'APPROVAL_FORBIDDEN' },
    },
    {
      name: 'approve_batch_coding by an agent: APPROVAL_FORBIDDEN',
      step: () => ({ call: 'approve_batch_coding', args: { batch_id: 1 }, as: 'agent' }),
      expect: { kind: 'error', error_code: 'APPROVAL_FORBIDDEN' },
    },
    {
      name: 'reject_coding_suggestion by an agent: APPROVAL_FORBIDDEN',
      step: () => ({ call: 'reject_coding_suggestion', args: { suggestion_id: 1 }, as: 'agent' }),
      expect: { kind: 'error', error_code: 'APPROVAL_FORBIDDEN' },
    },
    {
      name: 'respond_to_code_suggestion by an agent: APPROVAL_FORBIDDEN',
      step: () => ({ call: 'respond_to_code_suggestion', args: { suggestion_batch_id: 1, response: 'accept' }, as: 'agent' }),
      expect: { kind: 'error', error_code: 'APPROVAL_FORBIDDEN' },
    },
    {
      name: 'an agent approving a held request: APPROVAL_FORBIDDEN',
      setup: heldRequest,
      step: (_fx, _s, rid) => ({ approve: rid, as: 'agent' }),
      expect: { kind: 'error', error_code: 'APPROVAL_FORBIDDEN' },
      na: { mcp: NO_DECISION_MCP },
    },
    {
      name: 'the researcher approves a held request',
      setup: heldRequest,
      step: (_fx, _s, rid) => ({ approve: rid, as: 'researcher' }),
      expect: { kind: 'ok' },
      check: (o) => assert.equal(o.data.status, 'completed'),
      na: { mcp: NO_DECISION_MCP },
    },
    {
      name: 'the researcher approves a request already rejected: APPROVAL_NOT_PENDING',
      setup: async () => {
        const rid = await heldRequest();
        await request(server.base, 'POST', `/approvals/${rid}/reject`, { reason: 'no' });
        return rid;
      },
      step: (_fx, _s, rid) => ({ approve: rid, as: 'researcher' }),
      expect: { kind: 'error', error_code: 'APPROVAL_NOT_PENDING' },
      na: { mcp: NO_DECISION_MCP },
    },
    {
      name: 'a researcher-only tool (list_sessions) by an agent: APPROVAL_FORBIDDEN',
      step: () => ({ call: 'list_sessions', args: {}, as: 'agent' }),
      expect: { kind: 'error', error_code: 'APPROVAL_FORBIDDEN' },
    },
    {
      name: 'a researcher-only tool (list_sessions) by the researcher: ok',
      step: () => ({ call: 'list_sessions', args: {}, as: 'researcher' }),
      expect: { kind: 'ok' },
    },
    {
      name: 'set_agent_access by an agent: APPROVAL_FORBIDDEN',
      step: (fx) => ({ call: 'set_agent_access', args: { source_id: fx.closedSourceId, access: 'open' }, as: 'agent' }),
      expect: { kind: 'error', error_code: 'APPROVAL_FORBIDDEN' },
    },
    {
      name: 'get_approval_status of an unknown request: APPROVAL_NOT_FOUND',
      step: () => ({ call: 'get_approval_status', args: { request_id: 'no-such-request' }, as: 'agent' }),
      expect: { kind: 'error', error_code: 'APPROVAL_NOT_FOUND' },
    },
    {
      name: 'an agent with max_pending_per_agent (5) requests held: APPROVAL_QUEUE_FULL at once',
      setup: async () => {
        for (let i = 0; i < 5; i++) await heldRequest();
      },
      step: () => ({ call: 'create_code', args: { name: fresh('Overflow'), color: '#EDC948' }, as: 'agent' }),
      expect: { kind: 'error', error_code: 'APPROVAL_QUEUE_FULL' },
    },
    // refusals
    {
      name: 'unknown tool: TOOL_NOT_FOUND',
      step: () => ({ call: 'no_such_tool', args: {}, as: 'agent' }),
      expect: { kind: 'error', error_code: 'TOOL_NOT_FOUND' },
      check: (o, s) => s === 'mcp' && assert.equal(o.rpc, -32602, 'MCP: an unknown tool is a protocol error (InvalidParams)'),
    },
    {
      name: 'invalid arguments (researcher): INVALID_ARGUMENTS',
      step: () => ({ call: 'create_code', args: { name: '' }, as: 'researcher' }),
      expect: { kind: 'error', error_code: 'INVALID_ARGUMENTS' },
    },
    {
      name: 'invalid arguments of a held tool (agent): INVALID_ARGUMENTS at once, not pending',
      step: () => ({ call: 'create_code', args: { name: 7 }, as: 'agent' }),
      expect: { kind: 'error', error_code: 'INVALID_ARGUMENTS' },
    },
    {
      name: 'get_code of an unknown id: CODE_NOT_FOUND',
      step: () => ({ call: 'get_code', args: { code_id: 999999 }, as: 'agent' }),
      expect: { kind: 'error', error_code: 'CODE_NOT_FOUND' },
    },
    {
      name: 'read_source_content of an unknown id: SOURCE_NOT_FOUND',
      step: () => ({ call: 'read_source_content', args: { source_id: 999999 }, as: 'agent' }),
      expect: { kind: 'error', error_code: 'SOURCE_NOT_FOUND' },
    },
    {
      name: 'delete_segment of an unknown id: SEGMENT_NOT_FOUND',
      step: () => ({ call: 'delete_segment', args: { segment_id: 999999 }, as: 'researcher' }),
      expect: { kind: 'error', error_code: 'SEGMENT_NOT_FOUND' },
    },
    {
      name: 'rename_category of an unknown id: CATEGORY_NOT_FOUND',
      step: () => ({ call: 'rename_category', args: { category_id: 999999, new_name: 'x' }, as: 'researcher' }),
      expect: { kind: 'error', error_code: 'CATEGORY_NOT_FOUND' },
    },
    {
      name: 'get_case of an unknown id: CASE_NOT_FOUND',
      step: () => ({ call: 'get_case', args: { case_id: 999999 }, as: 'agent' }),
      expect: { kind: 'error', error_code: 'CASE_NOT_FOUND' },
    },
    {
      name: 'a held rename of an unknown code (agent): CODE_NOT_FOUND at once',
      step: () => ({ call: 'rename_code', args: { code_id: 999999, new_name: fresh('Ghost') }, as: 'agent' }),
      expect: { kind: 'error', error_code: 'CODE_NOT_FOUND' },
    },
    {
      name: 'merge a code into itself (researcher): MERGE_SAME_CODE',
      setup: freshCode,
      step: (_fx, _s, id) => ({ call: 'merge_codes', args: { source_code_id: id, target_code_id: id }, as: 'researcher' }),
      expect: { kind: 'error', error_code: 'MERGE_SAME_CODE' },
    },
    {
      name: 'a held merge of a code into itself (agent): MERGE_SAME_CODE at once',
      setup: freshCode,
      step: (_fx, _s, id) => ({ call: 'merge_codes', args: { source_code_id: id, target_code_id: id }, as: 'agent' }),
      expect: { kind: 'error', error_code: 'MERGE_SAME_CODE' },
    },
    {
      name: 'create_code with a name in use (researcher): DUPLICATE_NAME',
      step: (fx) => ({ call: 'create_code', args: { name: fx.existingCodeName, color: '#FF9DA7' }, as: 'researcher' }),
      expect: { kind: 'error', error_code: 'DUPLICATE_NAME' },
    },
    {
      name: 'a held create_code with a name in use (agent): DUPLICATE_NAME at once',
      step: (fx) => ({ call: 'create_code', args: { name: fx.existingCodeName, color: '#FF9DA7' }, as: 'agent' }),
      expect: { kind: 'error', error_code: 'DUPLICATE_NAME' },
    },
    {
      name: 'delete_code of a code with segments: CODE_HAS_SEGMENTS',
      step: (fx) => ({ call: 'delete_code', args: { code_id: fx.codedCodeId }, as: 'researcher' }),
      expect: { kind: 'error', error_code: 'CODE_HAS_SEGMENTS' },
    },
    {
      name: 'apply_code past the end of the source: INVALID_POSITION',
      setup: freshCode,
      step: (fx, _s, id) => ({
        call: 'apply_code',
        args: { code_id: id, source_id: fx.sourceId, start_position: 0, end_position: 50_000_000 },
        as: 'researcher',
      }),
      expect: { kind: 'error', error_code: 'INVALID_POSITION' },
    },
    {
      name: 'list_snapshots before version control: VERSION_CONTROL_NOT_INITIALIZED',
      step: () => ({ call: 'list_snapshots', args: {}, as: 'researcher' }),
      expect: { kind: 'error', error_code: 'VERSION_CONTROL_NOT_INITIALIZED' },
    },
    {
      name: 'an agent reading a source closed to agents: SOURCE_CLOSED',
      step: (fx) => ({ call: 'read_source_content', args: { source_id: fx.closedSourceId }, as: 'agent' }),
      expect: { kind: 'error', error_code: 'SOURCE_CLOSED' },
    },
    {
      name: 'the researcher reads the closed source',
      step: (fx) => ({ call: 'read_source_content', args: { source_id: fx.closedSourceId }, as: 'researcher' }),
      expect: { kind: 'ok' },
    },
    {
      name: 'import_file_source of a file that does not exist: SOURCE_IMPORT_FAILED',
      step: () => ({ call: 'import_file_source', args: { file_path: path.join(dir, 'no-such-file.txt') }, as: 'researcher' }),
      expect: { kind: 'error', error_code: 'SOURCE_IMPORT_FAILED' },
    },
    // authentication and sessions
    {
      name: 'a call without a valid credential: UNAUTHORIZED',
      step: () => ({ call: 'list_codes', args: {}, as: 'anonymous' }),
      expect: { kind: 'error', error_code: 'UNAUTHORIZED' },
      check: (o, s) => {
        if (s === 'http' || s === 'rest') assert.equal(o.http, 401);
        if (s === 'cli') assert.equal(o.data.exit, 2, 'the CLI cannot start: exit 2');
      },
      na: { grpc: 'gRPC authenticates by the TLS handshake: a client without a certificate of the local CA never reaches a handler' },
    },
    {
      name: "a second agent using the first agent's session: SESSION_FORBIDDEN",
      step: (fx, s) => ({ call: 'list_codes', args: {}, as: 'agentB', session: fx.agentSession[s] }),
      expect: { kind: 'error', error_code: 'SESSION_FORBIDDEN' },
      na: { ws: NO_SESSION_WS, cli: NO_SESSION_CLI },
    },
    {
      name: 'the researcher using an agent session: SESSION_FORBIDDEN (the researcher ends sessions, never acts in them)',
      step: (fx, s) => ({ call: 'list_codes', args: {}, as: 'researcher', session: fx.agentSession[s] }),
      expect: { kind: 'error', error_code: 'SESSION_FORBIDDEN' },
      na: { ws: NO_SESSION_WS, cli: NO_SESSION_CLI },
    },
    {
      name: 'an unknown session id: SESSION_NOT_FOUND',
      step: () => ({ call: 'list_codes', args: {}, as: 'agent', session: 'no-such-session' }),
      expect: { kind: 'error', error_code: 'SESSION_NOT_FOUND' },
      na: { ws: NO_SESSION_WS, cli: NO_SESSION_CLI },
    },
    {
      name: 'an agent in its own explicit session: ok',
      step: (fx, s) => ({ call: 'list_codes', args: {}, as: 'agent', session: fx.agentSession[s] }),
      expect: { kind: 'ok' },
      na: { ws: NO_SESSION_WS, cli: NO_SESSION_CLI },
    },
  ];

  /**
   * Error classes of src/agent/errorClasses.ts no tool call against a running `marginalia serve` can produce,
   * and why (the table above covers every other class: invalid, unauthenticated, forbidden, not_found,
   * conflict, unprocessable, retry_later).
   */
  const CLASSES_NOT_REACHABLE: Record<string, string> = {
    unsupported_media: 'a property of an HTTP body: MCP, gRPC, WebSocket and the CLI carry no content type (covered by test/e2e/http.test.ts)',
    upstream: 'TRANSCRIPTION_FAILED needs an audio source and a failing transcription server (covered by the transcription tests)',
    no_project: 'serve always has its project open; NO_PROJECT is the VS Code server without a project',
    internal: 'an unexpected failure is a bug; no scenario produces one on purpose',
  };

  // ---- the server ----------------------------------------------------------------------------------------

  before(async () => {
    dir = tmpDir('marginalia-conformance-');
    home = path.join(dir, 'home');
    project = path.join(dir, 'study', 'study.qda');
    fs.mkdirSync(path.join(dir, 'study', '.marginalia'), { recursive: true });
    fs.writeFileSync(
      path.join(dir, 'study', '.marginalia', 'config.yaml'),
      'agent_context:\n  sessions:\n    max_concurrent: 50\n  trust:\n    overrides:\n      create_category: auto\n  rate_limits:\n    requests_per_minute: 100000\n    mutations_per_minute: 100000\n',
    );
    const env = { ...process.env, MARGINALIA_HOME: home };
    for (const [name, role] of [
      ['bot', 'agent'],
      ['bot2', 'agent'],
      ['me', 'researcher'],
    ] as const)
      execFileSync(process.execPath, [BIN, 'certs', '--client', name, '--role', role], { env });
    server = await startServer(project, ['--seed', SAMPLE, '--grpc-port', '0'], { MARGINALIA_HOME: home });
    const m = /gRPC \(mutual TLS\) at 127\.0\.0\.1:(\d+)/.exec(server.stdout());
    assert.ok(m, `serve printed no gRPC line:\n${server.stdout()}`);
    grpcPort = Number(m[1]);
    GrpcCtor = (grpc.loadPackageDefinition(protoLoader.loadSync(PROTO, { keepCase: true, longs: Number, enums: String, defaults: true, oneofs: true })) as any)
      .marginalia.v1.Marginalia;

    // a second agent credential (issue 14 item 2)
    const added = await request(server.base, 'POST', '/agents', { name: 'conformance-b' });
    assert.equal(added.status, 201, JSON.stringify(added.body));
    agentBToken = added.body.data.token;

    const commands = await request(server.base, 'GET', '/commands', undefined, authOf('agent'));
    restPaths = new Map((commands.body.data.generic.paths as string[]).map((p) => [p.split('/').pop() as string, p]));

    const sources = (await setupCall('list_sources', {})).sources as { source_id: number }[];
    assert.ok(sources.length >= 2, 'the sample has sources');
    const codes = (await setupCall('list_codes', {})).codes as { code_id: number; name: string }[];
    const codedCodeId = await freshCode();
    await setupCall('apply_code', { code_id: codedCodeId, source_id: sources[0]!.source_id, start_position: 0, end_position: 10 });
    const categoryId = (await setupCall('create_category', { name: fresh('Fixture category') })).category_id;
    const closedSourceId = sources[sources.length - 1]!.source_id;
    await setupCall('set_agent_access', { source_id: closedSourceId, access: 'closed' });
    // an explicit session of the default agent for each surface (gRPC sessions belong to the certificate)
    const agentSession = {} as Record<Surface, string>;
    for (const s of SURFACES) {
      if (s === 'grpc') {
        const opened = await grpcUnary('agent', 'OpenSession', { client_name: 'conformance-grpc', client_type: 'CUSTOM' });
        assert.equal(opened.success, true, opened.error);
        agentSession[s] = opened.session_id;
      } else {
        const created = await request(server.base, 'POST', '/session/create', { client_type: 'CUSTOM', client_name: `conformance-${s}` }, authOf('agent'));
        assert.equal(created.status, 200, JSON.stringify(created.body));
        agentSession[s] = created.body.data.session_id;
      }
    }
    f = { sourceId: sources[0]!.source_id, closedSourceId, codedCodeId, existingCodeName: codes[0]?.name ?? 'Fixture', categoryId, agentSession };
  });

  after(async () => {
    for (const c of cleanup.reverse()) await Promise.resolve(c()).catch(() => undefined);
    if (server) assert.equal(await server.stop(), 0, server.stderr().slice(-2000));
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it(`the table has at least 25 rows and declares every surface it does not run (${ROWS.length} rows)`, () => {
    assert.ok(ROWS.length >= 25);
    for (const r of ROWS)
      for (const [s, why] of Object.entries(r.na ?? {}))
        assert.ok(SURFACES.includes(s as Surface) && typeof why === 'string' && why.length > 20, `${r.name}: ${s}`);
    for (const [cls, why] of Object.entries(CLASSES_NOT_REACHABLE)) console.log(`      class ${cls} not in the table: ${why}`);
  });

  it("a session opened with a client_type outside the spec's ClientType enum is refused alike: INVALID_ARGUMENTS (REST, WebSocket, gRPC, CLI)", async () => {
    // HTTP tool interface and MCP open no explicit session: their X-Marginalia-Client-Type header only names the implicit session's type
    const rest = await request(server.base, 'POST', '/session/create', { client_type: 'NOT_A_TYPE', client_name: 'conformance' }, authOf('agent'));
    const ws = await wsConnectRaw(`ws://127.0.0.1:${server.port}/ws?client_type=NOT_A_TYPE`);
    const rpc = await grpcUnary('agent', 'OpenSession', { client_name: 'conformance', client_type: 'NOT_A_TYPE' });
    const cli = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const base: NodeJS.ProcessEnv = {};
      for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('MARGINALIA_')) base[k] = v;
      const child = spawn(process.execPath, [BIN, 'cli', '--project', project, '--client-type', 'NOT_A_TYPE'], {
        env: { ...base, MARGINALIA_HOME: home, MARGINALIA_TOKEN: AGENT_TOKEN },
        stdio: ['pipe', 'ignore', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.once('exit', (code) => resolve({ code, stderr }));
    });
    assert.deepEqual(
      { rest: [rest.status, rest.body.error_code], ws: ws.error_code, grpc: rpc.error_code, cli: [cli.code, /INVALID_ARGUMENTS/.test(cli.stderr)] },
      { rest: [400, 'INVALID_ARGUMENTS'], ws: 'INVALID_ARGUMENTS', grpc: 'INVALID_ARGUMENTS', cli: [2, true] },
    );
  });

  /** Opens a WebSocket as the default agent and resolves with the first message (welcome or error). */
  function wsConnectRaw(url: string): Promise<any> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, { headers: { authorization: `Bearer ${AGENT_TOKEN}` } });
      ws.once('message', (raw) => {
        resolve(JSON.parse(raw.toString()));
        ws.close();
      });
      ws.once('error', reject);
    });
  }

  for (const row of ROWS) {
    const title = `${row.name}${row.na ? ` (not on ${Object.keys(row.na).join(', ')})` : ''}`;
    it(title, async () => {
      const got: Partial<Record<Surface, Outcome>> = {};
      try {
        for (const surface of SURFACES) {
          const why = row.na?.[surface];
          if (why) {
            console.log(`      ${surface}: not expressible: ${why}`);
            continue;
          }
          const prepared = row.setup ? await row.setup(surface) : undefined;
          const outcome = await DRIVERS[surface](row.step(f, surface, prepared));
          got[surface] = outcome;
          await rejectAllPending();
        }
      } finally {
        await rejectAllPending();
      }
      assert.deepEqual(
        Object.keys(got),
        SURFACES.filter((x) => !row.na?.[x]),
        'every surface not declared n/a answered',
      );
      const summary = Object.fromEntries(Object.entries(got).map(([s, o]) => [s, o.kind === 'error' ? `error ${o.error_code}` : o.kind]));
      const expected = row.expect.kind === 'error' ? `error ${row.expect.error_code}` : row.expect.kind;
      for (const [s, line] of Object.entries(summary))
        assert.equal(line, expected, `${s} disagrees: ${JSON.stringify(summary)}; ${s} answered ${JSON.stringify(got[s as Surface]?.data)?.slice(0, 400)}`);
      for (const [s, o] of Object.entries(got)) row.check?.(o, s as Surface);
      // HTTP and REST are one server: the same status for the same outcome
      if (got.http && got.rest) assert.equal(got.rest.http, got.http.http, 'HTTP and REST statuses');
    });
  }
});
