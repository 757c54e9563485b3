/**
 * Provenance on every surface (issue 14, items 1 and 8). The whole server in process (test/security/stack.ts:
 * real HTTP on 127.0.0.1, MCP over Streamable HTTP with the official MCP SDK client, REST, WebSocket, gRPC with
 * mutual TLS, the CLI adapter), a real sql.js project on disk. On each of the six surfaces the researcher
 * (reviewer token, or a researcher certificate for gRPC) and an agent (the named credential "alice", or an agent
 * certificate) each code one passage:
 * - the segments listed back carry `coder_role` researcher vs agent, and `coder` is the owner;
 * - the events' `caused_by.role` says the same, with `coder`; an agent's carry its `client`;
 * - the audit log's line of each call carries the role and coder.
 * Then undo_agent_action on each surface: refused to the agent (APPROVAL_FORBIDDEN, nothing changes), and the
 * researcher's call removes an agent coding.
 */
import assert from 'node:assert/strict';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import WebSocket from 'ws';
import { LocalCliBackend, runCommand } from '../../src/adapters/cli/cliAdapter';
import type { EventRecord } from '../../src/domain/events';
import { AS_RESEARCHER, clientCert, grpcClient, grpcUnary, raw, startStack, type GrpcClient, type Stack } from './stack';

type Who = 'researcher' | 'agent';
interface Answer {
  success: boolean;
  data?: any;
  error_code?: string;
}
type Surface = 'http' | 'rest' | 'mcp' | 'ws' | 'grpc' | 'cli';
const SURFACES: readonly Surface[] = ['http', 'rest', 'mcp', 'ws', 'grpc', 'cli'];
const TEXT = 'one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty';

describe('security: provenance (coder and role) and undo_agent_action on every surface', function () {
  this.timeout(120_000);
  let s: Stack;
  let aliceToken = '';
  let sourceId = 0;
  let codeId = 0;
  const closers: (() => Promise<void> | void)[] = [];
  const mcp = new Map<Who, Client>();
  const ws = new Map<Who, WebSocket>();
  const grpc = new Map<Who, GrpcClient>();
  let wsSeq = 0;

  const auth = (who: Who) => (who === 'researcher' ? AS_RESEARCHER.authorization : `Bearer ${aliceToken}`);
  const clientName = (surface: Surface, who: Who) => `${surface}-${who}`;

  async function call(surface: Surface, who: Who, tool: string, args: Record<string, unknown>): Promise<Answer> {
    const headers = { authorization: auth(who), 'content-type': 'application/json', 'x-marginalia-client': clientName(surface, who) };
    switch (surface) {
      case 'http': {
        const r = await raw(s.port, 'POST', `/tools/${tool}`, { headers, body: { arguments: args } });
        return r.body;
      }
      case 'rest': {
        const r = await raw(s.port, 'POST', `/commands/coding/${tool}`, { headers, body: args });
        return r.body;
      }
      case 'mcp': {
        const r = await mcp.get(who)!.callTool({ name: tool, arguments: args });
        const text = JSON.stringify(r.content);
        if (r.isError)
          return { success: false, error_code: /"?error_code"?\W+([A-Z_]+)/.exec(text.replace(/\\"/g, '"'))?.[1] ?? /([A-Z]+_[A-Z_]+)/.exec(text)?.[1] };
        return { success: true, data: r.structuredContent ?? JSON.parse((r.content as { text: string }[])[0]!.text) };
      }
      case 'ws': {
        const socket = ws.get(who)!;
        const id = ++wsSeq;
        const m = await new Promise<any>((resolve) => {
          const onMessage = (d: WebSocket.RawData) => {
            const msg = JSON.parse(String(d));
            if (msg.type !== 'reply' || msg.id !== id) return;
            socket.off('message', onMessage);
            resolve(msg);
          };
          socket.on('message', onMessage);
          socket.send(JSON.stringify({ id, op: 'call', tool, arguments: args }));
        });
        return { success: m.ok === true, data: m.data, error_code: m.error_code };
      }
      case 'grpc': {
        const r = await grpcUnary(grpc.get(who)!, 'CallTool', { tool, arguments_json: JSON.stringify(args) });
        return { success: r.success, data: r.data_json ? JSON.parse(r.data_json) : undefined, error_code: r.error_code || undefined };
      }
      case 'cli': {
        const backend = new LocalCliBackend({
          agent: s.agent,
          pipeline: s.pipeline,
          authorization: auth(who),
          clientName: clientName(surface, who),
          clientType: 'CUSTOM',
        });
        const sink = () => ({ event: () => true, overflow: () => undefined, ended: () => undefined });
        return (await runCommand(backend, { op: 'call', tool, arguments: args }, sink)) as Answer;
      }
    }
  }

  const events = (): EventRecord[] => s.handle.repo.listEventsSince(0, 100_000);

  before(async () => {
    s = await startStack({ grpc: true, config: ['  trust:', '    default_level: auto'] });
    aliceToken = s.agent.credentials.issue('alice').token;
    sourceId = (await s.asResearcher('add_text_source', { name: 'Interview 12', content: TEXT })).source_id;
    codeId = (await s.asResearcher('create_code', { name: 'Counting', color: '#4E79A7' })).code_id;
    for (const who of ['researcher', 'agent'] as const) {
      const client = new Client({ name: clientName('mcp', who), version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${s.base}/mcp`), {
          requestInit: { headers: { authorization: auth(who), 'x-marginalia-client': clientName('mcp', who) } },
        }),
      );
      mcp.set(who, client);
      closers.push(() => client.close());
      const socket = new WebSocket(`ws://127.0.0.1:${s.port}/ws`, { headers: { authorization: auth(who), 'x-marginalia-client': clientName('ws', who) } });
      await new Promise<void>((resolve, reject) => {
        socket.once('message', () => resolve());
        socket.once('error', reject);
      });
      ws.set(who, socket);
      closers.push(() => socket.close());
      const g = grpcClient(s.grpc!.port, s.grpc!.dir, clientCert(s.grpc!.dir, clientName('grpc', who), who));
      grpc.set(who, g);
      closers.push(() => g.close());
    }
  });
  after(async () => {
    for (const c of closers.splice(0)) await c();
    await s?.close();
  });

  it('segments, events and audit lines record the coder and the role the credential proves, on all six surfaces', async () => {
    const mark = s.auditMark();
    const since = s.handle.repo.lastEventSeq();
    const made = new Map<number, { surface: Surface; who: Who }>();
    let at = 0;
    for (const surface of SURFACES) {
      for (const who of ['researcher', 'agent'] as const) {
        const r = await call(surface, who, 'apply_code', { code_id: codeId, source_id: sourceId, start_position: at, end_position: at + 3 });
        assert.equal(r.success, true, `${surface}/${who}: ${JSON.stringify(r)}`);
        made.set(r.data.segment_id as number, { surface, who });
        at += 5;
      }
    }
    assert.equal(made.size, 12);

    // the segments as a tool lists them: coder_role from the credential, coder the owner
    const listed = (await s.asResearcher('list_segments_for_source', { source_id: sourceId })).segments as {
      segment_id: number;
      owner: string;
      coder: string;
      coder_role: string;
    }[];
    for (const seg of listed) {
      const m = made.get(seg.segment_id);
      if (!m) continue;
      assert.equal(seg.coder_role, m.who, `${m.surface}/${m.who}: segment ${seg.segment_id}`);
      assert.equal(seg.coder, seg.owner);
    }
    assert.equal(listed.filter((x) => made.has(x.segment_id)).length, 12);

    // the events: caused_by.role and coder; an agent's also its client
    const coded = events().filter((e) => e.metadata.sequence_number > since && e.event_type === 'coding.segment_coded');
    assert.equal(coded.length, 12);
    for (const e of coded) {
      const m = made.get(e.payload.segment_id as number)!;
      assert.equal(e.caused_by.role, m.who, `${m.surface}/${m.who}: ${JSON.stringify(e.caused_by)}`);
      assert.ok(e.caused_by.coder, 'a coder name');
      if (m.who === 'agent') {
        assert.ok(e.caused_by.client, `${m.surface}: the agent's client`);
        assert.notEqual(
          e.caused_by.coder,
          listed.find((x) => made.get(x.segment_id)?.who === 'researcher')?.owner,
          'an agent is never named as the researcher',
        );
      } else assert.equal(e.caused_by.client, undefined);
    }
    // the named credential names the agent on the token surfaces
    for (const e of coded) {
      const m = made.get(e.payload.segment_id as number)!;
      if (m.who === 'agent' && m.surface !== 'grpc') assert.equal(e.caused_by.coder, 'alice', `${m.surface}: the credential's name`);
    }

    // the audit log: one permitted apply_code line per call, with its role
    const lines = s.auditSince(mark).filter((l) => l.tool === 'apply_code' && l.decision !== 'denied');
    assert.equal(lines.length, 12, JSON.stringify(lines.map((l) => [l.client_name, l.decision])));
    assert.deepEqual(lines.map((l) => l.role).sort(), [...Array(6).fill('agent'), ...Array(6).fill('researcher')]);
    for (const l of lines) assert.ok(l.coder, `an audit line names its coder: ${JSON.stringify(l)}`);
  });

  it('undo_agent_action: refused to the agent and the researcher undoes an agent coding, on all six surfaces', async () => {
    let at = 100;
    for (const surface of SURFACES) {
      const before = s.handle.repo.lastEventSeq();
      const coded = await call('http', 'agent', 'apply_code', { code_id: codeId, source_id: sourceId, start_position: at, end_position: at + 4 });
      assert.equal(coded.success, true, JSON.stringify(coded));
      at += 5;
      const segId = coded.data.segment_id as number;
      const correlation = events().find((e) => e.metadata.sequence_number > before && e.event_type === 'coding.segment_coded')!.metadata.correlation_id;

      const refused = await call(surface, 'agent', 'undo_agent_action', { correlation_id: correlation });
      assert.equal(refused.success, false, `${surface}: ${JSON.stringify(refused)}`);
      assert.equal(refused.error_code, 'APPROVAL_FORBIDDEN', surface);
      assert.ok(s.handle.repo.getSegment(segId), `${surface}: the refused undo changed nothing`);

      const done = await call(surface, 'researcher', 'undo_agent_action', { correlation_id: correlation });
      assert.equal(done.success, true, `${surface}: ${JSON.stringify(done)}`);
      assert.deepEqual(done.data.undone, [{ kind: 'segment', id: segId }], surface);
      assert.equal(s.handle.repo.getSegment(segId), undefined, `${surface}: the agent coding is gone`);
    }
  });
});
