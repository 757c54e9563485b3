/**
 * End-to-end test of the gRPC adapter (agent-context spec, section 4: gRPC with mTLS) against the built
 * CLI (`npm run build` first), through a real client: @grpc/grpc-js with the repository's
 * proto/marginalia.proto loaded by @grpc/proto-loader.
 *
 * Certificates are made with `marginalia certs` into the server's temporary MARGINALIA_HOME: an agent
 * certificate (`bot`), a second agent (`bot2`), a researcher certificate (`me`), and, in another folder
 * (another CA), a researcher certificate that must not get in.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { REPO_ROOT, RESEARCHER_CODER, startServer, tmpDir, type ServerProcess } from '../helpers/serverProcess';

const PROTO = path.join(REPO_ROOT, 'proto', 'marginalia.proto');
const LOADER_OPTIONS: protoLoader.Options = { keepCase: true, longs: Number, enums: String, defaults: true, oneofs: true };
const BIN = path.join(REPO_ROOT, 'bin', 'marginalia.js');

type Client = grpc.Client & Record<string, any>;

/** One unary call with a 15 s deadline; rejects with the grpc ServiceError. */
function unary<T = any>(client: Client, method: string, req: Record<string, unknown>): Promise<T> {
  return new Promise((resolve, reject) => {
    client[method](req, { deadline: Date.now() + 15_000 }, (err: grpc.ServiceError | null, res: T) => (err ? reject(err) : resolve(res)));
  });
}

/** A Subscribe stream collecting every message; `waitFor` resolves once `pred` holds for the messages so far. */
function subscribe(client: Client, req: Record<string, unknown>) {
  const messages: any[] = [];
  const waiters: { pred: (m: any[]) => boolean; resolve: () => void }[] = [];
  let error: grpc.ServiceError | undefined;
  let ended = false;
  const call = client.Subscribe(req) as grpc.ClientReadableStream<any>;
  const check = () => {
    for (const w of [...waiters]) {
      if (w.pred(messages)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    }
  };
  call.on('data', (m: any) => {
    messages.push(m);
    check();
  });
  call.on('error', (e: grpc.ServiceError) => {
    error = e;
    check();
  });
  call.on('end', () => {
    ended = true;
    check();
  });
  return {
    call,
    messages,
    get error() {
      return error;
    },
    get ended() {
      return ended;
    },
    events: () => messages.filter((m) => m.message === 'event').map((m) => m.event),
    waitFor(pred: (m: any[]) => boolean, what: string, ms = 10_000): Promise<void> {
      if (pred(messages)) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const t = setTimeout(
          () =>
            reject(
              new Error(
                `timed out waiting for ${what}; got ${JSON.stringify(messages.map((m) => m.event?.event_type ?? m.message))} ${error ? `error ${error.message}` : ''}`,
              ),
            ),
          ms,
        );
        waiters.push({
          pred,
          resolve: () => {
            clearTimeout(t);
            resolve();
          },
        });
      });
    },
  };
}

describe('gRPC adapter (mutual TLS, real @grpc/grpc-js client)', function () {
  this.timeout(120_000);
  let dir: string;
  let home: string;
  let server: ServerProcess;
  let port: number;
  let Ctor: grpc.ServiceClientConstructor;
  const clients: Client[] = [];
  let bot: Client;
  let bot2: Client;
  let me: Client;
  const certs = () => path.join(home, 'certs');
  const read = (f: string) => fs.readFileSync(f);

  /** A client with the given credentials on the server's port. */
  const connect = (creds: grpc.ChannelCredentials): Client => {
    // the server certificate names 127.0.0.1 and localhost; TLS SNI takes a host name, not an IP address
    const c = new Ctor(`127.0.0.1:${port}`, creds, { 'grpc.ssl_target_name_override': 'localhost' }) as unknown as Client;
    clients.push(c);
    return c;
  };
  const withCert = (name: string, folder = certs()): Client =>
    connect(
      grpc.credentials.createSsl(
        read(path.join(certs(), 'ca.pem')),
        read(path.join(folder, `client-${name}-key.pem`)),
        read(path.join(folder, `client-${name}.pem`)),
      ),
    );

  before(async () => {
    dir = tmpDir('marginalia-grpc-');
    home = path.join(dir, 'home');
    const env = { ...process.env, MARGINALIA_HOME: home };
    execFileSync(process.execPath, [BIN, 'certs', '--client', 'bot', '--role', 'agent'], { env });
    execFileSync(process.execPath, [BIN, 'certs', '--client', 'bot2', '--role', 'agent'], { env });
    execFileSync(process.execPath, [BIN, 'certs', '--client', 'me', '--role', 'researcher'], { env });
    execFileSync(process.execPath, [BIN, 'certs', '--out', path.join(dir, 'other-ca'), '--client', 'intruder', '--role', 'researcher'], { env });
    server = await startServer(path.join(dir, 'study.qda'), ['--grpc-port', '0'], { MARGINALIA_HOME: home });
    const m = /gRPC \(mutual TLS\) at 127\.0\.0\.1:(\d+)/.exec(server.stdout());
    assert.ok(m, `serve printed no gRPC line:\n${server.stdout()}`);
    port = Number(m[1]);
    const pkg = grpc.loadPackageDefinition(protoLoader.loadSync(PROTO, LOADER_OPTIONS)) as any;
    Ctor = pkg.marginalia.v1.Marginalia;
    bot = withCert('bot');
    bot2 = withCert('bot2');
    me = withCert('me');
  });

  after(async () => {
    for (const c of clients) c.close();
    if (server) assert.equal(await server.stop(), 0);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('writes every certificate file user-only (0600) and gives roles in the subject OU', () => {
    for (const f of fs.readdirSync(certs())) assert.equal(fs.statSync(path.join(certs(), f)).mode & 0o777, 0o600, f);
    assert.equal(fs.statSync(certs()).mode & 0o777, 0o700);
    const { X509Certificate } = require('node:crypto') as typeof import('node:crypto');
    const ca = new X509Certificate(read(path.join(certs(), 'ca.pem')));
    const researcher = new X509Certificate(read(path.join(certs(), 'client-me.pem')));
    assert.match(researcher.subject, /OU=researcher/);
    assert.match(new X509Certificate(read(path.join(certs(), 'client-bot.pem'))).subject, /OU=agent/);
    assert.ok(researcher.verify(ca.publicKey), 'issued by the local CA');
    const serverCert = new X509Certificate(read(path.join(certs(), 'server.pem')));
    assert.ok(serverCert.checkIP('127.0.0.1') && serverCert.checkHost('localhost'));
    const foreign = new X509Certificate(read(path.join(dir, 'other-ca', 'client-intruder.pem')));
    assert.ok(!foreign.verify(ca.publicKey), 'the other CA is really another CA');
  });

  it('ListTools lists the registry with JSON Schemas as JSON text', async () => {
    const res = await unary(bot, 'ListTools', {});
    const names = res.tools.map((t: any) => t.name);
    assert.ok(names.includes('list_codes') && names.includes('create_code'), names.join(','));
    const create = res.tools.find((t: any) => t.name === 'create_code');
    const schema = JSON.parse(create.input_schema_json);
    assert.equal(schema.type, 'object');
    assert.ok(schema.properties.name, 'create_code takes a name');
    assert.equal(create.effect, 'create');
  });

  it('CallTool runs an Autonomous tool (list_codes) at once', async () => {
    const res = await unary(bot, 'CallTool', { tool: 'list_codes', arguments_json: '{}' });
    assert.equal(res.status, 'OK');
    assert.equal(res.success, true);
    assert.equal(res.error_code, '');
    const data = JSON.parse(res.data_json);
    assert.ok(Array.isArray(data.codes));
    assert.equal(data.codes.length, 0);
  });

  it('refuses malformed arguments as envelopes (INVALID_JSON, INVALID_ARGUMENTS, TOOL_NOT_FOUND)', async () => {
    const bad = await unary(bot, 'CallTool', { tool: 'list_codes', arguments_json: '{nope' });
    assert.equal(bad.status, 'FAILED');
    assert.equal(bad.error_code, 'INVALID_JSON');
    const notObject = await unary(bot, 'CallTool', { tool: 'list_codes', arguments_json: '[1]' });
    assert.equal(notObject.error_code, 'INVALID_ARGUMENTS');
    const invalid = await unary(bot, 'CallTool', { tool: 'create_code', arguments_json: JSON.stringify({ name: '' }) });
    assert.equal(invalid.error_code, 'INVALID_ARGUMENTS');
    assert.ok(JSON.parse(invalid.details_json).issues.length > 0);
    const unknown = await unary(bot, 'CallTool', { tool: 'no_such_tool', arguments_json: '' });
    assert.equal(unknown.error_code, 'TOOL_NOT_FOUND');
  });

  it('an agent certificate gets PENDING_APPROVAL for a Suggest call; only a researcher certificate may approve; the stream shows approval.granted then coding.code_created', async () => {
    const stream = subscribe(me, { patterns: ['approval.*', 'coding.*'] });
    await stream.waitFor((m) => m.some((x) => x.message === 'subscribed'), 'the subscribed message');
    const subscribed = stream.messages[0];
    assert.equal(subscribed.message, 'subscribed');
    assert.deepEqual(subscribed.subscribed.patterns, ['approval.*', 'coding.*']);
    assert.ok(subscribed.subscribed.subscription_id);

    const pending = await unary(bot, 'CallTool', { tool: 'create_code', arguments_json: JSON.stringify({ name: 'Belonging', color: '#4E79A7' }) });
    assert.equal(pending.status, 'PENDING_APPROVAL');
    assert.equal(pending.success, true);
    assert.ok(pending.request_id);
    const data = JSON.parse(pending.data_json);
    assert.equal(data.status, 'pending_approval');
    assert.equal(data.request_id, pending.request_id);
    // nothing was created yet
    const before = JSON.parse((await unary(bot, 'CallTool', { tool: 'list_codes' })).data_json);
    assert.equal(before.codes.length, 0);

    const byAgent = await unary(bot, 'Approve', { request_id: pending.request_id });
    assert.equal(byAgent.status, 'FAILED');
    assert.equal(byAgent.error_code, 'APPROVAL_FORBIDDEN');
    const byOtherAgent = await unary(bot2, 'Approve', { request_id: pending.request_id });
    assert.equal(byOtherAgent.error_code, 'APPROVAL_FORBIDDEN');

    const approved = await unary(me, 'Approve', { request_id: pending.request_id });
    assert.equal(approved.status, 'OK', approved.error);
    assert.equal(approved.request_id, pending.request_id);
    const result = JSON.parse(approved.data_json);
    assert.equal(result.status, 'completed');
    assert.ok(result.result.code_id > 0);
    const after = JSON.parse((await unary(bot, 'CallTool', { tool: 'list_codes' })).data_json);
    assert.deepEqual(
      after.codes.map((c: any) => c.name),
      ['Belonging'],
    );

    await stream.waitFor((m) => m.some((x) => x.event?.event_type === 'coding.code_created'), 'coding.code_created');
    const events = stream.events();
    const types = events.map((e: any) => e.event_type);
    assert.deepEqual(types, ['approval.requested', 'approval.granted', 'coding.code_created']);
    const seqs = events.map((e: any) => e.sequence_number);
    assert.ok(
      seqs.every((s: number, i: number) => i === 0 || s > (seqs[i - 1] as number)),
      `ascending sequence numbers ${seqs}`,
    );
    const created = events[2];
    assert.equal(JSON.parse(created.payload_json).name, 'Belonging');
    assert.equal(created.correlation_id, pending.request_id);
    assert.equal(created.aggregate_type, 'code');
    assert.match(created.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    // the action ran on behalf of the agent that asked, approved by the researcher's session
    assert.equal(created.caused_by.session_id, events[0].caused_by.session_id);
    assert.notEqual(JSON.parse(events[1].payload_json).approved_by, events[0].caused_by.session_id);
    stream.call.cancel();
  });

  it('Reject with a reason denies the request (approval.denied), and an agent cannot reject', async () => {
    const stream = subscribe(bot2, { patterns: ['approval.denied'] });
    await stream.waitFor((m) => m.length > 0, 'subscribed');
    const pending = await unary(bot, 'CallTool', { tool: 'create_code', arguments_json: JSON.stringify({ name: 'Distrust', color: '#E15759' }) });
    assert.equal(pending.status, 'PENDING_APPROVAL');
    const byAgent = await unary(bot2, 'Reject', { request_id: pending.request_id, reason: 'no' });
    assert.equal(byAgent.error_code, 'APPROVAL_FORBIDDEN');
    const rejected = await unary(me, 'Reject', { request_id: pending.request_id, reason: 'too vague' });
    assert.equal(rejected.status, 'OK');
    assert.equal(JSON.parse(rejected.data_json).status, 'rejected');
    const again = await unary(me, 'Approve', { request_id: pending.request_id });
    assert.equal(again.error_code, 'APPROVAL_NOT_PENDING');
    await stream.waitFor((m) => m.some((x) => x.event?.event_type === 'approval.denied'), 'approval.denied');
    const denied = stream.events()[0];
    assert.equal(JSON.parse(denied.payload_json).reason, 'too vague');
    assert.equal(JSON.parse(denied.payload_json).request_id, pending.request_id);
    const listed = await unary(me, 'ListApprovals', { status: 'rejected' });
    assert.deepEqual(
      listed.approvals.map((a: any) => [a.request_id, a.reason, a.decided_by_coder, a.decided_by_role]),
      [[pending.request_id, 'too vague', RESEARCHER_CODER, 'researcher']],
      'who decided: the researcher (coder name and role)',
    );
    const codes = JSON.parse((await unary(bot, 'CallTool', { tool: 'list_codes' })).data_json);
    assert.ok(!codes.codes.some((c: any) => c.name === 'Distrust'));
    stream.call.cancel();
  });

  it('Subscribe with `since` replays stored events in order, filtered by pattern, then continues live', async () => {
    const all = subscribe(bot, { patterns: ['coding.*', 'approval.granted'], since: 0 });
    await all.waitFor((m) => m.filter((x) => x.message === 'event').length >= 2, 'the replay');
    const replayed = all.events();
    assert.deepEqual(
      replayed.map((e: any) => e.event_type),
      ['approval.granted', 'coding.code_created'],
    );
    assert.equal(all.messages[0].subscribed.from_sequence, 0);
    const granted = replayed[0].sequence_number;
    // from just after approval.granted: only the code
    const tail = subscribe(bot, { patterns: ['coding.*', 'approval.granted'], since: granted });
    await tail.waitFor((m) => m.some((x) => x.message === 'event'), 'the tail');
    assert.deepEqual(
      tail.events().map((e: any) => e.event_type),
      ['coding.code_created'],
    );
    // live: a researcher's own call runs at once (no approval) and reaches both streams
    const made = await unary(me, 'CallTool', { tool: 'create_code', arguments_json: JSON.stringify({ name: 'Hope', color: '#59A14F' }) });
    assert.equal(made.status, 'OK', made.error);
    await all.waitFor((m) => m.filter((x) => x.message === 'event').length >= 3, 'the live event');
    assert.equal(JSON.parse(all.events()[2].payload_json).name, 'Hope');
    all.call.cancel();
    tail.call.cancel();
  });

  it('refuses a bad pattern with INVALID_ARGUMENT', async () => {
    const s = subscribe(bot, { patterns: ['not a pattern!'] });
    await s.waitFor(() => s.error !== undefined, 'the error');
    assert.equal(s.error?.code, grpc.status.INVALID_ARGUMENT);
    assert.equal(s.error?.metadata.get('error_code')[0], 'INVALID_ARGUMENTS');
  });

  it('Unsubscribe ends a stream, and only for the certificate that opened it', async () => {
    const s = subscribe(bot, {});
    await s.waitFor((m) => m.length > 0, 'subscribed');
    const id = s.messages[0].subscribed.subscription_id;
    assert.deepEqual(s.messages[0].subscribed.patterns, ['coding.*', 'source.*', 'analysis.*'], 'the configured default subscriptions');
    await assert.rejects(unary(bot2, 'Unsubscribe', { subscription_id: id }), (e: grpc.ServiceError) => e.code === grpc.status.NOT_FOUND);
    const res = await unary(bot, 'Unsubscribe', { subscription_id: id });
    assert.equal(res.subscription_id, id);
    await s.waitFor(() => s.ended, 'the end of the stream');
  });

  it('explicit sessions: OpenSession, calls in it, no use by another certificate, CloseSession', async () => {
    const opened = await unary(bot, 'OpenSession', { client_name: 'grpc-e2e', client_type: 'ASSISTANT_A_CLI' });
    assert.equal(opened.success, true, opened.error);
    assert.equal(opened.role, 'agent');
    assert.equal(opened.status, 'ACTIVE');
    const sid = opened.session_id;
    const call = await unary(bot, 'CallTool', { session_id: sid, tool: 'list_codes' });
    assert.equal(call.status, 'OK');
    const stolen = await unary(me, 'CallTool', { session_id: sid, tool: 'list_codes' });
    assert.equal(stolen.error_code, 'SESSION_FORBIDDEN');
    const beat = await unary(bot, 'Heartbeat', { session_id: sid });
    assert.equal(beat.success, true);
    assert.equal(beat.heartbeat_interval_seconds, 30);
    // a Suggest call in the session waits, and its request names the session
    const pending = await unary(bot, 'CallTool', { session_id: sid, tool: 'create_code', arguments_json: JSON.stringify({ name: 'Care', color: '#F28E2B' }) });
    assert.equal(pending.status, 'PENDING_APPROVAL');
    const listed = await unary(me, 'ListApprovals', { status: 'pending' });
    const req = listed.approvals.find((a: any) => a.request_id === pending.request_id);
    assert.equal(req.session_id, sid);
    assert.equal(req.client_name, 'grpc-e2e');
    assert.equal((await unary(me, 'Reject', { request_id: pending.request_id })).status, 'OK');
    const closed = await unary(bot, 'CloseSession', { session_id: sid });
    assert.equal(closed.success, true);
    const late = await unary(bot, 'CallTool', { session_id: sid, tool: 'list_codes' });
    assert.equal(late.error_code, 'SESSION_NOT_FOUND');
    const bad = await unary(bot, 'OpenSession', { client_type: 'LOCAL_UI' });
    assert.equal(bad.error_code, 'INVALID_ARGUMENTS');
  });

  it('a client without a certificate cannot connect, nor one whose certificate comes from another CA', async () => {
    // the server writes its call log in batches (every 25 ms): let earlier calls' lines arrive first
    await new Promise((r) => setTimeout(r, 250));
    const logBefore = server.stderr().length;
    const anonymous = connect(grpc.credentials.createSsl(read(path.join(certs(), 'ca.pem'))));
    await assert.rejects(unary(anonymous, 'CallTool', { tool: 'list_codes' }), (e: grpc.ServiceError) => e.code === grpc.status.UNAVAILABLE);
    await assert.rejects(unary(anonymous, 'ListTools', {}), (e: grpc.ServiceError) => e.code === grpc.status.UNAVAILABLE);
    const intruder = withCert('intruder', path.join(dir, 'other-ca'));
    await assert.rejects(unary(intruder, 'Approve', { request_id: 'x' }), (e: grpc.ServiceError) => e.code === grpc.status.UNAVAILABLE);
    const s = subscribe(intruder, {});
    await s.waitFor(() => s.error !== undefined, 'the refusal');
    assert.equal(s.error?.code, grpc.status.UNAVAILABLE);
    assert.equal(s.messages.length, 0);
    // plaintext gets nowhere either
    const plain = connect(grpc.credentials.createInsecure());
    await assert.rejects(unary(plain, 'ListTools', {}), (e: grpc.ServiceError) => e.code === grpc.status.UNAVAILABLE);
    // none of them reached a handler: no call was logged
    assert.doesNotMatch(server.stderr().slice(logBefore), /grpc:/);
    // and the real clients still work
    assert.equal((await unary(bot, 'CallTool', { tool: 'list_codes' })).status, 'OK');
  });

  it('every gRPC call is in the audit log with its certificate and decision', async () => {
    // the audit log is appended synchronously per call
    const lines = fs
      .readFileSync(path.join(dir, '.marginalia', 'audit.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const grpcLines = lines.filter((l) => String(l.client_name).startsWith('grpc:') || l.client_name === 'grpc-e2e');
    assert.ok(grpcLines.some((l) => l.client_name === 'grpc:bot' && l.tool === 'create_code' && l.decision === 'pending'));
    assert.ok(grpcLines.some((l) => l.client_name === 'grpc:me' && l.tool === 'approve:create_code' && l.decision === 'permitted'));
    assert.ok(grpcLines.some((l) => l.client_name === 'grpc:bot' && String(l.tool).startsWith('approve') && l.error_code === 'APPROVAL_FORBIDDEN'));
    assert.ok(grpcLines.some((l) => l.client_name === 'grpc-e2e' && l.tool === 'list_codes'));
  });
});
