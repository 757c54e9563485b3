/**
 * Blind coding on the event streams (issue 16 item 5, through the adapter kit's subscriptions,
 * src/agent/kit/subscriptions.ts): while blind coding is on, an agent's SSE stream, WebSocket subscription and gRPC
 * Subscribe stream deliver its own codings' events and never another coder's; `GET /events/history` likewise; the
 * lead (the researcher) still gets everyone's. In-process server (test/security/stack.ts) with the gRPC adapter;
 * the agents hold named credentials and code over HTTP.
 */
import assert from 'node:assert/strict';
import * as http from 'node:http';
import * as grpc from '@grpc/grpc-js';
import WebSocket from 'ws';
import { AS_RESEARCHER, clientCert, grpcClient, startStack, type GrpcClient, type Stack } from '../security/stack';

const TEXT = 'We grew beans together every spring. The council never came. Water was scarce.';

async function post(s: Stack, path: string, token: string, body: unknown): Promise<any> {
  const r = await fetch(`${s.base}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'x-marginalia-client': 'blind-test' },
    body: JSON.stringify(body),
  });
  const out = (await r.json()) as { data: any };
  assert.equal(r.status, 200, JSON.stringify(out));
  return out.data;
}

/** The segment events (`coding.segment_coded`) a stream received, as `coder:segment_id`. */
type Seen = { coded: string[] };

function openSse(s: Stack, token: string, seen: Seen, extra: Record<string, string> = {}): Promise<() => void> {
  return new Promise((resolve, reject) => {
    const req = http.get(
      {
        host: '127.0.0.1',
        port: s.port,
        path: '/events/stream?patterns=coding.*',
        headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream', ...extra },
      },
      (res) => {
        if (res.statusCode !== 200) return reject(new Error(`SSE ${res.statusCode}`));
        let buf = '';
        res.on('data', (d: Buffer) => {
          buf += d.toString('utf8');
          let i: number;
          while ((i = buf.indexOf('\n\n')) >= 0) {
            const block = buf.slice(0, i);
            buf = buf.slice(i + 2);
            const data = block.split('\n').find((l) => l.startsWith('data: '));
            if (!data) continue;
            const e = JSON.parse(data.slice(6));
            if (e.event_type === 'coding.segment_coded') seen.coded.push(`${e.caused_by.coder}:${e.payload.segment_id}`);
          }
        });
        resolve(() => req.destroy());
      },
    );
    req.on('error', () => undefined);
  });
}

function openWs(s: Stack, token: string, seen: Seen): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${s.port}/ws`, { headers: { authorization: `Bearer ${token}` } });
    ws.on('message', (raw) => {
      const m = JSON.parse(raw.toString());
      if (m.type === 'welcome') ws.send(JSON.stringify({ id: 1, op: 'subscribe', patterns: ['coding.*'] }));
      else if (m.type === 'reply' && m.id === 1) resolve(ws);
      else if (m.type === 'event' && m.event.event_type === 'coding.segment_coded') seen.coded.push(`${m.event.caused_by.coder}:${m.event.payload.segment_id}`);
    });
    ws.on('error', reject);
  });
}

function openGrpc(client: GrpcClient, token: string, seen: Seen): Promise<grpc.ClientReadableStream<any>> {
  const md = new grpc.Metadata();
  md.set('authorization', `Bearer ${token}`);
  const stream = client.Subscribe({ patterns: ['coding.*'] }, md) as grpc.ClientReadableStream<any>;
  return new Promise((resolve, reject) => {
    stream.on('data', (m: any) => {
      if (m.subscribed) resolve(stream);
      if (m.event && m.event.event_type === 'coding.segment_coded') {
        const payload = JSON.parse(m.event.payload_json);
        seen.coded.push(`${m.event.caused_by?.coder}:${payload.segment_id}`);
      }
    });
    stream.on('error', (e: grpc.ServiceError) => {
      if (e.code !== grpc.status.CANCELLED) reject(e);
    });
  });
}

async function waitFor(what: string, check: () => boolean, ms = 5000): Promise<void> {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('e2e: blind coding on the event streams (SSE, WebSocket, gRPC, history)', function () {
  this.timeout(60_000);
  let s: Stack;
  let carrier: GrpcClient;
  let alpha = '';
  let beta = '';
  let sourceId = 0;
  let codeId = 0;

  before(async () => {
    s = await startStack({ grpc: true, config: ['  trust:', '    overrides:', '      apply_code: auto'] });
    carrier = grpcClient(s.grpc!.port, s.grpc!.dir, clientCert(s.grpc!.dir, 'carrier', 'agent'));
    alpha = s.agent.credentials.issue('alpha').token;
    beta = s.agent.credentials.issue('beta').token;
    sourceId = (await s.asResearcher('add_text_source', { name: 'interview-07', content: TEXT })).source_id;
    codeId = (await s.asResearcher('create_code', { name: 'Belonging' })).code_id;
  });
  after(async () => {
    carrier?.close();
    await s?.close();
  });

  it("with blind coding on, alpha's streams carry alpha's codings only; the lead's carry both", async () => {
    await s.asResearcher('set_blind_coding', { enabled: true });
    const sse: Seen = { coded: [] };
    const ws: Seen = { coded: [] };
    const rpc: Seen = { coded: [] };
    const lead: Seen = { coded: [] };
    const closeSse = await openSse(s, alpha, sse);
    // the lead: the researcher who switched blind coding on (its coder name, stated as the reviewer token's user)
    const closeLead = await openSse(s, AS_RESEARCHER.authorization.slice(7), lead, { 'x-marginalia-user': s.researcher.user });
    const socket = await openWs(s, alpha, ws);
    const stream = await openGrpc(carrier, alpha, rpc);
    try {
      const head = s.agent.headSeq();
      const theirs = (await post(s, '/tools/apply_code', beta, { arguments: { code_id: codeId, source_id: sourceId, start_position: 0, end_position: 23 } }))
        .segment_id as number;
      const mine = (await post(s, '/tools/apply_code', alpha, { arguments: { code_id: codeId, source_id: sourceId, start_position: 8, end_position: 23 } }))
        .segment_id as number;
      const own = `alpha:${mine}`;
      // alpha's own coding comes after beta's: once it arrived, beta's would have too
      await waitFor('alpha’s event on SSE', () => sse.coded.includes(own));
      await waitFor('alpha’s event on the WebSocket', () => ws.coded.includes(own));
      await waitFor('alpha’s event on gRPC', () => rpc.coded.includes(own));
      await waitFor('both events on the lead’s stream', () => lead.coded.length >= 2);
      assert.deepEqual(sse.coded, [own]);
      assert.deepEqual(ws.coded, [own]);
      assert.deepEqual(rpc.coded, [own]);
      assert.deepEqual(lead.coded, [`beta:${theirs}`, own]);

      // the history answers alpha the same way; the lead sees both
      const history = async (token: string, extra: Record<string, string> = {}) => {
        const r = await fetch(`${s.base}/events/history?since=${head}&patterns=coding.*`, { headers: { authorization: `Bearer ${token}`, ...extra } });
        return ((await r.json()) as { data: { events: any[] } }).data.events
          .filter((e) => e.event_type === 'coding.segment_coded')
          .map((e) => `${e.caused_by.coder}:${e.payload.segment_id}`);
      };
      assert.deepEqual(await history(alpha), [own]);
      assert.deepEqual(await history(AS_RESEARCHER.authorization.slice(7), { 'x-marginalia-user': s.researcher.user }), [`beta:${theirs}`, own]);
    } finally {
      closeSse();
      closeLead();
      socket.close();
      stream.cancel();
    }
  });

  it('with blind coding off, every coder’s codings reach the stream again', async () => {
    await s.asResearcher('end_blind_coding', {});
    const sse: Seen = { coded: [] };
    const closeSse = await openSse(s, alpha, sse);
    try {
      const theirs = (await post(s, '/tools/apply_code', beta, { arguments: { code_id: codeId, source_id: sourceId, start_position: 24, end_position: 35 } }))
        .segment_id as number;
      await waitFor('beta’s event on alpha’s stream', () => sse.coded.includes(`beta:${theirs}`));
    } finally {
      closeSse();
    }
  });
});
