/**
 * "Agents propose, the researcher decides; a session never approves its own request" (agent-context spec;
 * docs/agents.md, "Approvals"; docs/reference/suggestions.md), on every adapter. QualCoder-v2's defect is exactly this: an AI session suggests and then approves its own
 * suggestion. Through plain HTTP tool calls, REST commands, MCP, WebSocket, gRPC and the CLI adapter (local
 * and forwarding):
 * - the researcher's own session suggests a code, a coding, a merge and a batch, then decides each with the
 *   approval tools (approve_suggestion, approve_coding_suggestion, approve_merge, approve_batch_coding,
 *   respond_to_code_suggestion): the researcher may decide suggestions made under their own credential
 *   (issue 14 item 6);
 * - an agent session does the same: every approval-deciding tool (and reject_coding_suggestion) is refused
 *   at once with 403 APPROVAL_FORBIDDEN, audited as denied, never queued; nothing is decided;
 * - the trust layer's own queue: a request is never decided by its own session, even by a caller claiming
 *   the researcher's rights in it, and agents' approve/reject operations on every adapter are refused
 *   (test/security/auth.test.ts covers those per adapter).
 */
import assert from 'node:assert/strict';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import WebSocket from 'ws';
import { LocalCliBackend, runCommand, type CliBackend } from '../../src/adapters/cli/cliAdapter';
import { ForwardCliBackend } from '../../src/adapters/cli/forwardBackend';
import type { Envelope } from '../../src/core/envelope';
import { AS_AGENT, AS_RESEARCHER, TOKENS, clientCert, grpcClient, grpcUnary, raw, startStack, type GrpcClient, type Stack } from './stack';

/** One call's outcome, whatever the adapter. */
interface Outcome {
  status: 'ok' | 'pending' | 'failed';
  data?: any;
  error_code?: string;
}

/** A session on one adapter. */
interface Session {
  call(tool: string, args: Record<string, unknown>): Promise<Outcome>;
  close(): Promise<void>;
}

type Role = 'researcher' | 'agent';
const ADAPTERS = ['http', 'rest', 'mcp', 'websocket', 'grpc', 'cli-local', 'cli-forward'] as const;
type Adapter = (typeof ADAPTERS)[number];

function fromEnvelope(env: Envelope, httpStatus?: number): Outcome {
  if (!env.success) return { status: 'failed', error_code: env.error_code };
  // a call held by the trust layer answers pending_approval with a request_id (a suggestion's own answer has no request_id)
  const data = env.data as { status?: string; request_id?: unknown } | null;
  const pending = httpStatus === 202 || (data?.status === 'pending_approval' && typeof data.request_id === 'string');
  return { status: pending ? 'pending' : 'ok', data: env.data };
}

describe('security: no session approves its own request, on any adapter', function () {
  this.timeout(120_000);
  let s: Stack;
  const ids = { source: 0, a: 0, b: 0, c: 0 };
  const grpcClients: GrpcClient[] = [];

  before(async () => {
    // codes and codings run at once for agents (so their approval calls are refused without waiting); merges and bulk stay held
    s = await startStack({ grpc: true, config: ['  trust:', '    overrides:', '      create_code: auto', '      apply_code: auto'] });
    ids.source = (
      await s.asResearcher('add_text_source', { name: 'garden.txt', content: 'We share the water rota and argue about the shed every week.' })
    ).source_id;
    ids.a = (await s.asResearcher('create_code', { name: 'Sharing', color: '#4E79A7' })).code_id;
    ids.b = (await s.asResearcher('create_code', { name: 'Conflict', color: '#E15759' })).code_id;
    ids.c = (await s.asResearcher('create_code', { name: 'Routine', color: '#59A14F' })).code_id;
  });
  after(async () => {
    for (const c of grpcClients) c.close();
    await s?.close();
  });

  /** Opens a session of `role` on `adapter`. */
  async function open(adapter: Adapter, role: Role): Promise<Session> {
    const auth = role === 'researcher' ? AS_RESEARCHER : AS_AGENT;
    const token = role === 'researcher' ? TOKENS.reviewer : TOKENS.agent;
    const name = `${adapter}-${role}`;
    switch (adapter) {
      case 'http':
      case 'rest':
        return {
          async call(tool, args) {
            const r =
              adapter === 'http'
                ? await raw(s.port, 'POST', `/tools/${tool}`, {
                    headers: { ...auth, 'content-type': 'application/json', 'x-marginalia-client': name },
                    body: { arguments: args },
                  })
                : await raw(s.port, 'POST', `/commands/coding/${tool}`, {
                    headers: { ...auth, 'content-type': 'application/json', 'x-marginalia-client': name },
                    body: args,
                  });
            return fromEnvelope(r.body as Envelope, r.status);
          },
          close: async () => undefined,
        };
      case 'mcp': {
        const client = new Client({ name, version: '1.0.0' });
        await client.connect(
          new StreamableHTTPClientTransport(new URL(`${s.base}/mcp`), { requestInit: { headers: { ...auth, 'x-marginalia-client': name } } }),
        );
        return {
          async call(tool, args) {
            const r = (await client.callTool({ name: tool, arguments: args })) as { isError?: boolean; structuredContent?: any };
            if (r.isError) return { status: 'failed', error_code: r.structuredContent?.error_code };
            const held = r.structuredContent?.status === 'pending_approval' && typeof r.structuredContent?.request_id === 'string';
            return { status: held ? 'pending' : 'ok', data: r.structuredContent };
          },
          close: () => client.close(),
        };
      }
      case 'websocket': {
        const ws = new WebSocket(`ws://127.0.0.1:${s.port}/ws`, { headers: { ...auth, 'x-marginalia-client': name } });
        await new Promise<void>((resolve, reject) => {
          ws.once('message', () => resolve());
          ws.once('error', reject);
        });
        let next = 0;
        return {
          call(tool, args) {
            const id = ++next;
            return new Promise((resolve) => {
              const onMessage = (d: WebSocket.RawData) => {
                const m = JSON.parse(String(d));
                if (m.type !== 'reply' || m.id !== id) return;
                ws.off('message', onMessage);
                resolve(m.ok ? { status: m.status === 'pending' ? 'pending' : 'ok', data: m.data } : { status: 'failed', error_code: m.error_code });
              };
              ws.on('message', onMessage);
              ws.send(JSON.stringify({ id, op: 'call', tool, arguments: args }));
            });
          },
          close: async () => ws.close(),
        };
      }
      case 'grpc': {
        const client = grpcClient(s.grpc!.port, s.grpc!.dir, clientCert(s.grpc!.dir, name, role));
        grpcClients.push(client);
        return {
          async call(tool, args) {
            const r = await grpcUnary(client, 'CallTool', { tool, arguments_json: JSON.stringify(args) });
            if (!r.success) return { status: 'failed', error_code: r.error_code };
            return { status: r.status === 'PENDING_APPROVAL' ? 'pending' : 'ok', data: JSON.parse(r.data_json) };
          },
          close: async () => undefined,
        };
      }
      case 'cli-local':
      case 'cli-forward': {
        const backend: CliBackend =
          adapter === 'cli-local'
            ? new LocalCliBackend({ agent: s.agent, pipeline: s.pipeline, authorization: `Bearer ${token}`, clientName: name, clientType: 'CUSTOM' })
            : await ForwardCliBackend.connect({ url: s.base, token, clientName: name, clientType: 'CUSTOM' });
        const sink = () => ({ event: () => true, overflow: () => undefined, ended: () => undefined });
        return {
          async call(tool, args) {
            return fromEnvelope(await runCommand(backend, { op: 'call', tool, arguments: args }, sink));
          },
          close: () => backend.close(),
        };
      }
    }
  }

  let slot = 0;
  /**
   * What one session suggests: a new code, a coding, a merge and a batch, each its own (ranges and codes of
   * their own, so no suggestion of another session is handed back as "already suggested"). Returns the
   * approval calls for them.
   */
  async function suggestAll(session: Session, tag: string): Promise<{ tool: string; args: Record<string, unknown>; pending: () => boolean }[]> {
    const ok = async (tool: string, args: Record<string, unknown>) => {
      const r = await session.call(tool, args);
      assert.equal(r.status, 'ok', `${tag} ${tool}: ${JSON.stringify(r)}`);
      return r.data;
    };
    const k = slot++;
    const from = (await s.asResearcher('create_code', { name: `Merge from ${tag}`, color: '#76B7B2' })).code_id;
    const into = (await s.asResearcher('create_code', { name: `Merge into ${tag}`, color: '#EDC948' })).code_id;
    const code = await ok('suggest_new_code', { name: `Suggested ${tag}`, rationale: 'it recurs' });
    const coding = await ok('suggest_code_application', { source_id: ids.source, code_id: ids.a, start_pos: k, end_pos: k + 3 });
    const merge = await ok('suggest_merge_codes', { source_code_id: from, target_code_id: into, rationale: `same idea (${tag})` });
    const batch = await ok('suggest_batch_coding', {
      code_id: ids.c,
      segments: [{ source_id: ids.source, start_pos: 30 + k, end_pos: 34 + k }],
      rationale: `routine (${tag})`,
    });
    for (const [what, d] of [
      ['code', code],
      ['coding', coding],
      ['merge', merge],
      ['batch', batch],
    ] as const)
      assert.notEqual(d.created, false, `${tag}: the ${what} suggestion is this session's own`);
    const repo = s.handle.repo;
    const pending = (id: number) => () => repo.getSuggestion(id)?.status === 'pending';
    const batchPending = (id: number) => () => repo.listSuggestions({ batch_id: id }).every((x) => x.status === 'pending');
    return [
      { tool: 'approve_suggestion', args: { suggestion_id: code.suggestion_id }, pending: pending(code.suggestion_id) },
      { tool: 'approve_coding_suggestion', args: { suggestion_id: coding.suggestion_id }, pending: pending(coding.suggestion_id) },
      { tool: 'approve_merge', args: { merge_suggestion_id: merge.merge_suggestion_id }, pending: pending(merge.merge_suggestion_id) },
      { tool: 'approve_batch_coding', args: { batch_id: batch.batch_id }, pending: batchPending(batch.batch_id) },
      { tool: 'respond_to_code_suggestion', args: { suggestion_batch_id: batch.batch_id, response: 'accept' }, pending: batchPending(batch.batch_id) },
    ];
  }

  for (const adapter of ADAPTERS) {
    it(`${adapter}: the researcher's session decides the suggestions it made itself (issue 14 item 6: the researcher is never locked out of a decision)`, async () => {
      const session = await open(adapter, 'researcher');
      try {
        const approvals = await suggestAll(session, `${adapter}-researcher`);
        for (const a of approvals) {
          const r = await session.call(a.tool, a.args);
          assert.equal(r.status, 'ok', `${adapter} ${a.tool}: ${JSON.stringify(r)}`);
          assert.ok(!a.pending(), `${adapter} ${a.tool}: decided`);
        }
      } finally {
        await session.close();
      }
    });

    it(`${adapter}: an agent's session never decides a suggestion: every approval-deciding tool is refused (APPROVAL_FORBIDDEN, audited as denied) and nothing is queued`, async () => {
      const session = await open(adapter, 'agent');
      try {
        const approvals = await suggestAll(session, `${adapter}-agent`);
        const queued = s.agent.listApprovals().length;
        for (const a of [
          ...approvals,
          {
            tool: 'reject_coding_suggestion',
            args: { suggestion_id: approvals[1]?.args.suggestion_id, reason: 'mine' },
            pending: approvals[1]?.pending as () => boolean,
          },
        ]) {
          const mark = s.auditMark();
          const r = await session.call(a.tool, a.args);
          assert.deepEqual([r.status, r.error_code], ['failed', 'APPROVAL_FORBIDDEN'], `${adapter} ${a.tool}`);
          assert.ok(a.pending(), `${adapter} ${a.tool}: still pending`);
          assert.deepEqual(
            s.auditSince(mark).map((e) => [e.tool, e.decision, e.error_code]),
            [[a.tool, 'denied', 'APPROVAL_FORBIDDEN']],
            `${adapter} ${a.tool}: audited`,
          );
        }
        assert.equal(s.agent.listApprovals().length, queued, `${adapter}: nothing was queued`);
      } finally {
        await session.close();
      }
    });
  }

  it('the trust queue: a request is never decided in its own session, whatever the caller claims', async () => {
    const agentSession = s.agent.openSession({ authorization: AS_AGENT.authorization, client_type: 'CUSTOM', client_name: 'queue-bot' }).caller;
    const held = await s.agent.call(agentSession, 'delete_code', { code_id: ids.a, delete_segments: true });
    assert.equal(held.status, 'pending');
    const requestId = (held.envelope as { data: { request_id: string } }).data.request_id;
    // the agent's own session, even with the researcher flag forged in process, may not decide its request
    for (const caller of [agentSession, { ...agentSession, researcher: true }]) {
      const mark = s.auditMark();
      const a = await s.agent.approve(caller, requestId);
      const r = s.agent.reject(caller, requestId, 'mine');
      assert.equal(!a.envelope.success && a.envelope.error_code, 'APPROVAL_FORBIDDEN');
      assert.equal(!r.envelope.success && r.envelope.error_code, 'APPROVAL_FORBIDDEN');
      assert.deepEqual(
        s.auditSince(mark).map((e) => [e.decision, e.error_code]),
        [
          ['denied', 'APPROVAL_FORBIDDEN'],
          ['denied', 'APPROVAL_FORBIDDEN'],
        ],
      );
    }
    assert.equal(s.agent.listApprovals().find((x) => x.request_id === requestId)?.status, 'pending');
    const rejected = s.agent.reject(s.researcher, requestId, 'keep the code');
    assert.ok(rejected.envelope.success);
  });
});
