/**
 * The CLI's subscriptions go through the adapter kit (src/agent/kit/subscriptions.ts) like SSE, WebSocket and gRPC:
 * while blind coding is on (issue 16 item 5), an agent's `subscribe` on a CLI that owns the project delivers its own
 * codings' events and never another coder's, and the subscription is listed in its session (GET /sessions/{id})
 * until it ends. In-process server (test/security/stack.ts); the CLI's local backend runs the line protocol over
 * in-memory streams; the agents hold named credentials and code over HTTP.
 */
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { LocalCliBackend, runLineProtocol } from '../../src/adapters/cli/cliAdapter';
import { AS_RESEARCHER, startStack, type Stack } from '../security/stack';

const TEXT = 'We grew beans together every spring. The council never came. Water was scarce.';

async function post(s: Stack, route: string, token: string, body: unknown): Promise<any> {
  const r = await fetch(`${s.base}${route}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'x-marginalia-client': 'blind-cli-test' },
    body: JSON.stringify(body),
  });
  const out = (await r.json()) as { data: any };
  assert.equal(r.status, 200, JSON.stringify(out));
  return out.data;
}

async function waitFor(what: string, check: () => boolean, ms = 5000): Promise<void> {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('e2e: the CLI subscribes through the adapter kit (blind coding, session listing)', function () {
  this.timeout(60_000);
  let s: Stack;

  before(async () => {
    s = await startStack({ config: ['  trust:', '    overrides:', '      apply_code: auto'] });
  });
  after(async () => {
    await s?.close();
  });

  it("with blind coding on, alpha's CLI subscription carries alpha's codings only, and is listed in its session", async () => {
    const alpha = s.agent.credentials.issue('alpha').token;
    const beta = s.agent.credentials.issue('beta').token;
    const sourceId = (await s.asResearcher('add_text_source', { name: 'interview-07', content: TEXT })).source_id as number;
    const codeId = (await s.asResearcher('create_code', { name: 'Belonging' })).code_id as number;
    await s.asResearcher('set_blind_coding', { enabled: true });

    const backend = new LocalCliBackend({
      agent: s.agent,
      pipeline: s.pipeline,
      authorization: `Bearer ${alpha}`,
      clientName: 'alpha-cli',
      clientType: 'CUSTOM',
    });
    const input = new PassThrough();
    const responses = new PassThrough();
    const events = new PassThrough();
    const answers: any[] = [];
    const coded: string[] = [];
    responses.on('data', (d: Buffer) =>
      answers.push(
        ...d
          .toString('utf8')
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l)),
      ),
    );
    let buffered = '';
    events.on('data', (d: Buffer) => {
      buffered += d.toString('utf8');
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const l of lines) {
        const m = JSON.parse(l);
        if (m.type === 'event' && m.event.event_type === 'coding.segment_coded') coded.push(`${m.event.caused_by.coder}:${m.event.payload.segment_id}`);
      }
    });
    const running = runLineProtocol(input, backend, responses, events);
    try {
      input.write(`${JSON.stringify({ id: 1, op: 'subscribe', patterns: ['coding.*'] })}\n`);
      await waitFor('the subscribe answer', () => answers.some((a) => a.id === 1));
      const subscribed = answers.find((a) => a.id === 1);
      assert.equal(subscribed.success, true, JSON.stringify(subscribed));
      const sid = subscribed.data.subscription_id as string;

      // the session lists the subscription (the researcher's view of connected agents)
      const listed = await fetch(`${s.base}/sessions/${backend.sessionId}`, { headers: AS_RESEARCHER });
      const session = ((await listed.json()) as { data: { subscriptions: { subscription_id: string; event_patterns: string[] }[] } }).data;
      assert.deepEqual(
        session.subscriptions.map((x) => [x.subscription_id, x.event_patterns]),
        [[sid, ['coding.*']]],
      );

      const theirs = (await post(s, '/tools/apply_code', beta, { arguments: { code_id: codeId, source_id: sourceId, start_position: 0, end_position: 23 } }))
        .segment_id as number;
      const mine = (await post(s, '/tools/apply_code', alpha, { arguments: { code_id: codeId, source_id: sourceId, start_position: 8, end_position: 23 } }))
        .segment_id as number;
      // alpha's own coding comes after beta's: once it arrived, beta's would have too
      await waitFor("alpha's event on the CLI", () => coded.includes(`alpha:${mine}`));
      assert.deepEqual(coded, [`alpha:${mine}`]);
      assert.ok(theirs > 0);

      input.write(`${JSON.stringify({ id: 2, op: 'unsubscribe', subscription_id: sid })}\n`);
      await waitFor('the unsubscribe answer', () => answers.some((a) => a.id === 2));
      const after = await fetch(`${s.base}/sessions/${backend.sessionId}`, { headers: AS_RESEARCHER });
      assert.deepEqual(((await after.json()) as { data: { subscriptions: unknown[] } }).data.subscriptions, []);
    } finally {
      input.end();
      await running;
      await backend.close();
      await s.asResearcher('end_blind_coding', {});
    }
  });
});
