/**
 * Hybrid mode and the headless observer (issue 14, items 9 and 10) against the real server on 127.0.0.1
 * (`marginalia serve --ai-primary`): the researcher pauses agents (`POST /agents/pause`, reviewer token only) and
 * an agent's auto-level apply_code then answers 202 pending and writes nothing; Resume runs it; a notify-level
 * call raises `agent.notified` while an auto-level one does not; get_project_context and `qda://project/settings` (MCP) report mode hybrid; `marginalia watch` (its session function driven through streams, and the built command
 * through its stdin and stdout) shows an agent's call and approves a pending request; SSE honours
 * `rate_limits.events_per_second`. The project's `.marginalia/config.yaml` makes apply_code auto, create_code
 * notify and rename_code suggest, and sets 20 events per second. Needs the built CLI (`node esbuild.mjs`).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { PassThrough } from 'node:stream';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { watchSession } from '../../src/cli/watchCommand';
import {
  AGENT_TOKEN,
  AS_AGENT,
  AS_RESEARCHER,
  REPO_ROOT,
  REVIEWER_TOKEN,
  callTool,
  request,
  startServer,
  tmpDir,
  type ServerProcess,
} from '../helpers/serverProcess';

const TEXT = 'P04: The workshops brought people in.\nP04: There was tension about the water.\nP07: We argued about the shed for months.';
const EVENTS_PER_SECOND = 20;

/** Resolves when `predicate` holds (checked every 20 ms), or rejects after `ms` naming `what`. */
async function until(predicate: () => boolean | Promise<boolean>, what: string | (() => string), ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await predicate())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${typeof what === 'string' ? what : what()}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Opens an SSE stream and collects its events (parsed data) with their arrival times. */
function openSse(url: string, token: string): { events: { at: number; type: string; data: any }[]; close: () => void } {
  const events: { at: number; type: string; data: any }[] = [];
  let buffer = '';
  const req = http.get(url, { headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' } }, (res) => {
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      buffer += chunk;
      let i: number;
      while ((i = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, i);
        buffer = buffer.slice(i + 2);
        const type = /^event: (.*)$/m.exec(block)?.[1];
        const data = /^data: (.*)$/m.exec(block)?.[1];
        if (type && data) events.push({ at: Date.now(), type, data: JSON.parse(data) });
      }
    });
  });
  req.on('error', () => undefined);
  return { events, close: () => req.destroy() };
}

describe('e2e: hybrid mode, pause agents, notify, marginalia watch, SSE events_per_second', function () {
  this.timeout(120_000);
  let dir: string;
  let project: string;
  let server: ServerProcess | undefined;
  let base: string;
  const ids = { tension: 0, source: 0 };
  const at = Array.from(TEXT.slice(0, TEXT.indexOf('tension about'))).length;
  const agentAs = (name: string) => ({ ...AS_AGENT, 'x-marginalia-client': name });

  before(async () => {
    dir = tmpDir('marginalia-hybrid-');
    project = path.join(dir, 'study.qda');
    fs.mkdirSync(path.join(dir, '.marginalia'), { recursive: true });
    fs.writeFileSync(
      path.join(dir, '.marginalia', 'config.yaml'),
      'agent_context:\n' +
        '  trust:\n    overrides:\n      apply_code: auto\n      create_code: notify\n      rename_code: suggest\n' +
        `  rate_limits:\n    requests_per_minute: 1000\n    mutations_per_minute: 1000\n    events_per_second: ${EVENTS_PER_SECOND}\n`,
    );
    server = await startServer(project, ['--ai-primary']);
    base = server.base;
    const r1 = await callTool(base, 'create_code', { name: 'Tension' }, AS_RESEARCHER);
    assert.equal(r1.status, 200, JSON.stringify(r1.body));
    ids.tension = r1.body.data.code_id;
    const r2 = await callTool(base, 'add_text_source', { name: 'interview-04', content: TEXT }, AS_RESEARCHER);
    assert.equal(r2.status, 200, JSON.stringify(r2.body));
    ids.source = r2.body.data.source_id;
  });
  after(async () => {
    await server?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const segmentsOf = async (): Promise<number> => {
    const r = await callTool(base, 'list_segments_for_source', { source_id: ids.source }, AS_RESEARCHER);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return (r.body.data as { segments: unknown[] }).segments.length;
  };

  it('--ai-primary: the banner, get_project_context and qda://project/settings say hybrid', async () => {
    assert.match(server!.stdout(), /Mode:\s+hybrid/);
    const ctx = await callTool(base, 'get_project_context', {}, agentAs('claude'));
    assert.equal(ctx.status, 200, JSON.stringify(ctx.body).slice(0, 400));
    assert.equal(ctx.body.data.mode, 'hybrid', JSON.stringify(ctx.body).slice(0, 400));
    const client = new Client({ name: 'hybrid-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { authorization: `Bearer ${REVIEWER_TOKEN}` } } }),
    );
    try {
      const read = await client.readResource({ uri: 'qda://project/settings' });
      const settings = JSON.parse((read.contents[0] as { text: string }).text) as { mode: string };
      assert.equal(settings.mode, 'hybrid');
    } finally {
      await client.close();
    }
  });

  it('only the reviewer token may pause or resume agents (403 APPROVAL_FORBIDDEN for an agent)', async () => {
    const r = await request(base, 'POST', '/agents/pause', {}, agentAs('sneaky'));
    assert.deepEqual([r.status, r.body.error_code], [403, 'APPROVAL_FORBIDDEN'], JSON.stringify(r.body));
    const state = await request(base, 'GET', '/agents/pause', undefined, AS_RESEARCHER);
    assert.equal(state.body.data.paused, false);
  });

  it('paused: an auto-level apply_code answers 202 pending and writes nothing; resume runs it', async () => {
    const before = await segmentsOf();
    const paused = await request(base, 'POST', '/agents/pause', {}, AS_RESEARCHER);
    assert.equal(paused.status, 200, JSON.stringify(paused.body));
    assert.deepEqual([paused.body.data.paused, paused.body.data.changed], [true, true]);
    try {
      const asked = await callTool(
        base,
        'apply_code',
        { code_id: ids.tension, source_id: ids.source, start_position: at, end_position: at + 7 },
        agentAs('claude'),
      );
      assert.equal(asked.status, 202, JSON.stringify(asked.body));
      assert.equal(asked.body.data.status, 'pending_approval');
      assert.equal(asked.body.data.held_by_pause, true);
      assert.equal(await segmentsOf(), before, 'nothing was written while paused');
      // a read is held too; get_approval_status (following a held call) is not
      assert.equal((await callTool(base, 'list_codes', {}, agentAs('claude'))).status, 202);
      const status = await callTool(base, 'get_approval_status', { request_id: asked.body.data.request_id }, agentAs('claude'));
      assert.equal(status.status, 200, JSON.stringify(status.body));
      assert.equal(status.body.data.status, 'pending');
      // the researcher is never held
      assert.equal((await callTool(base, 'list_codes', {}, AS_RESEARCHER)).status, 200);
    } finally {
      const resumed = await request(base, 'POST', '/agents/resume', {}, AS_RESEARCHER);
      assert.equal(resumed.status, 200, JSON.stringify(resumed.body));
      assert.equal(resumed.body.data.paused, false);
      assert.equal(resumed.body.data.ran, 2, JSON.stringify(resumed.body.data));
    }
    assert.equal(await segmentsOf(), before + 1, 'resume ran the held apply_code');
    const pending = await request(base, 'GET', '/approvals?status=pending', undefined, AS_RESEARCHER);
    assert.equal(pending.body.data.count, 0, 'nothing the pause held is left waiting');
    const history = await request(base, 'GET', '/events/history?patterns=agents.*', undefined, AS_RESEARCHER);
    assert.deepEqual(
      (history.body.data.events as { event_type: string }[]).map((e) => e.event_type),
      ['agents.paused', 'agents.resumed'],
    );
  });

  it('a suggestion held during a pause stays pending after resume', async () => {
    await request(base, 'POST', '/agents/pause', {}, AS_RESEARCHER);
    const asked = await callTool(base, 'rename_code', { code_id: ids.tension, new_name: 'Strain' }, agentAs('claude'));
    assert.equal(asked.status, 202);
    assert.equal(asked.body.data.held_by_pause, undefined, 'a suggestion is held as ever, not by the pause');
    const resumed = await request(base, 'POST', '/agents/resume', {}, AS_RESEARCHER);
    assert.equal(resumed.body.data.ran, 0);
    const r = await request(base, 'POST', `/approvals/${asked.body.data.request_id}/reject`, { reason: 'keep the name' }, AS_RESEARCHER);
    assert.equal(r.status, 200, JSON.stringify(r.body));
  });

  it('a notify-level call raises agent.notified; an auto-level call does not', async () => {
    const since = (await request(base, 'GET', '/events/history?limit=1&since=0', undefined, AS_RESEARCHER)).body.data.head_seq as number;
    const auto = await callTool(base, 'apply_code', { code_id: ids.tension, source_id: ids.source, start_position: 0, end_position: 3 }, agentAs('claude'));
    assert.equal(auto.status, 200, JSON.stringify(auto.body));
    const notify = await callTool(base, 'create_code', { name: 'Hope' }, agentAs('claude'));
    assert.equal(notify.status, 200, JSON.stringify(notify.body));
    const h = await request(base, 'GET', `/events/history?since=${since}&patterns=agent.*,coding.*`, undefined, AS_RESEARCHER);
    const events = h.body.data.events as { event_type: string; payload: any; metadata: { correlation_id: string } }[];
    const notified = events.filter((e) => e.event_type === 'agent.notified');
    assert.equal(notified.length, 1, JSON.stringify(events.map((e) => e.event_type)));
    const n = notified[0]!;
    assert.equal(n.payload.tool, 'create_code');
    assert.equal(n.payload.agent, 'claude');
    assert.equal(n.payload.outcome, 'ok');
    assert.match(n.payload.summary, /Hope/);
    const created = events.find((e) => e.event_type === 'coding.code_created' && e.payload.name === 'Hope');
    assert.ok(created);
    assert.equal(n.payload.correlation_id, created.metadata.correlation_id, 'it names the call to undo');
    assert.notEqual(n.metadata.correlation_id, created.metadata.correlation_id, 'its own correlation: undoing the call never meets it');
    // undo of the notified call works (agent.notified is bookkeeping)
    const undo = await callTool(base, 'undo_agent_action', { correlation_id: created.metadata.correlation_id }, AS_RESEARCHER);
    assert.equal(undo.status, 200, JSON.stringify(undo.body));
    const codes = await callTool(base, 'list_codes', {}, AS_RESEARCHER);
    assert.ok(!(codes.body.data.codes as { name: string }[]).some((c) => c.name === 'Hope'), 'the notified create_code was undone');
  });

  it('watch (the session function): shows an agent call and approves a pending request', async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    let text = '';
    output.on('data', (d: Buffer) => (text += d.toString()));
    const session = watchSession({ url: base, token: REVIEWER_TOKEN, input, output });
    await until(() => text.includes('Watching'), 'the banner');
    const coded = await callTool(base, 'apply_code', { code_id: ids.tension, source_id: ids.source, start_position: 5, end_position: 14 }, agentAs('gemini'));
    assert.equal(coded.status, 200, JSON.stringify(coded.body));
    await until(
      () => /\d\d:\d\d:\d\d {2}\S+\s+coding\.segment_coded\s+coded "The works" in interview-04 with 'Tension'\s+ok/.test(text),
      () => `the action line in:\n${text}`,
    );
    const asked = await callTool(base, 'rename_code', { code_id: ids.tension, new_name: 'Friction' }, agentAs('gemini'));
    assert.equal(asked.status, 202);
    await until(
      () => /\? \S+ asks: rename the code/.test(text) && text.includes('[a]pprove'),
      () => `the prompt in:\n${text}`,
    );
    input.write('a\n');
    await until(
      async () => (await request(base, 'GET', `/approvals/${asked.body.data.request_id}`, undefined, AS_RESEARCHER)).body.data.status === 'completed',
      'the approval',
    );
    await until(
      () => /rename_code request \S+ approved/.test(text),
      () => `the decision line in:\n${text}`,
    );
    // an edited approval from a JSON line, then pause and resume from the prompt
    const again = await callTool(base, 'rename_code', { code_id: ids.tension, new_name: 'Frictionn' }, agentAs('gemini'));
    await until(() => text.split(' asks: rename the code').length === 3, 'the second prompt');
    input.write(`e ${JSON.stringify({ code_id: ids.tension, new_name: 'Friction 2' })}\n`);
    await until(
      async () => (await request(base, 'GET', `/approvals/${again.body.data.request_id}`, undefined, AS_RESEARCHER)).body.data.status === 'completed',
      'the edited approval',
    );
    const codes = await callTool(base, 'list_codes', {}, AS_RESEARCHER);
    assert.ok((codes.body.data.codes as { name: string }[]).some((c) => c.name === 'Friction 2'));
    input.write('p\n');
    await until(() => /agents PAUSED by/.test(text), 'the pause line');
    input.write('u\n');
    await until(() => /agents RESUMED by/.test(text), 'the resume line');
    input.write('q\n');
    await session;
  });

  it('marginalia watch --project P (the built command): shows a notify call and rejects a request from stdin', async () => {
    const child = spawn(process.execPath, [path.join(REPO_ROOT, 'bin', 'marginalia.js'), 'watch', '--project', project], {
      env: {
        ...process.env,
        MARGINALIA_TOKEN: AGENT_TOKEN,
        MARGINALIA_REVIEWER_TOKEN: REVIEWER_TOKEN,
        MARGINALIA_HOME: path.join(path.dirname(project), '.marginalia-home'),
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    try {
      await until(
        () => out.includes('Watching'),
        () => `the banner (stderr: ${err})`,
      );
      const made = await callTool(base, 'create_code', { name: 'Belonging' }, agentAs('copilot'));
      assert.equal(made.status, 200, JSON.stringify(made.body));
      await until(
        () => /\S+\s+create_code\s+.*Belonging.*\(notify\)\s+NOTIFY/.test(out),
        () => `the notify line in:\n${out}`,
      );
      const asked = await callTool(base, 'rename_code', { code_id: made.body.data.code_id, new_name: 'Belongings' }, agentAs('copilot'));
      await until(
        () => /\? \S+ asks: rename the code/.test(out),
        () => `the prompt in:\n${out}`,
      );
      child.stdin.write('r not that name\n');
      await until(
        async () => (await request(base, 'GET', `/approvals/${asked.body.data.request_id}`, undefined, AS_RESEARCHER)).body.data.status === 'rejected',
        'the rejection',
      );
      child.stdin.write('q\n');
      assert.equal(await exited, 0, err);
    } finally {
      child.kill();
    }
  });

  it('SSE honours rate_limits.events_per_second (a replay of many events is paced)', async () => {
    for (let i = 0; i < 70; i++) assert.equal((await callTool(base, 'create_code', { name: `Burst ${i}` }, AS_RESEARCHER)).status, 200);
    const head = (await request(base, 'GET', '/events/history?limit=1', undefined, AS_RESEARCHER)).body.data.head_seq as number;
    assert.ok(head > 3 * EVENTS_PER_SECOND, `enough stored events (${head})`);
    const sse = openSse(`${base}/events/stream?patterns=*&since=0`, REVIEWER_TOKEN);
    try {
      await until(() => sse.events.length > 0, 'the first event');
      const start = sse.events[0]!.at;
      await new Promise((r) => setTimeout(r, 2_300));
      const inWindow = sse.events.filter((e) => e.at - start < 2_000).length;
      // two one-second windows at most: 2 x 20 (a little slack for the window edge)
      assert.ok(inWindow <= 2 * EVENTS_PER_SECOND + 2, `${inWindow} events in 2 s at ${EVENTS_PER_SECOND} per second`);
      assert.ok(inWindow >= EVENTS_PER_SECOND, `${inWindow} events in 2 s: the stream still flows`);
    } finally {
      sse.close();
    }
  });
});
