/**
 * End-to-end test of the CLI adapter (`marginalia cli --project P`: stdin commands, stdout responses,
 * stderr events) against the built CLI (`npm run build` first), spawned with piped stdio as an agent's
 * harness would: in local mode (the CLI opens the project itself) and in forwarding mode (a
 * `marginalia serve` owns the project, and the CLI forwards to it over HTTP and SSE).
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { AGENT_TOKEN, REPO_ROOT, REVIEWER_TOKEN, request, startServer, tmpDir, type ServerProcess } from '../helpers/serverProcess';

const BIN = path.join(REPO_ROOT, 'bin', 'marginalia.js');
const SAMPLE = path.join(REPO_ROOT, 'samples', 'community-gardens');

/** The environment of a CLI process: no inherited Marginalia variables, a private home, then `extra`. */
function cliEnv(home: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('MARGINALIA_')) env[k] = v;
  return { ...env, MARGINALIA_HOME: home, ...extra };
}

/** A spawned `marginalia cli`: send commands, await responses by id, read stderr JSON lines. */
class CliProcess {
  readonly child: ChildProcessWithoutNullStreams;
  readonly responses: any[] = [];
  readonly stderrLines: any[] = [];
  readonly rawStderr: string[] = [];
  readonly exited: Promise<number | null>;
  private out = '';
  private err = '';
  private waiters: (() => void)[] = [];

  constructor(project: string, env: NodeJS.ProcessEnv, args: string[] = []) {
    this.child = spawn(process.execPath, [BIN, 'cli', '--project', project, ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    this.exited = new Promise((resolve) => this.child.once('exit', (code) => resolve(code)));
    this.child.stdout.on('data', (d: Buffer) => {
      this.out += d.toString();
      let nl: number;
      while ((nl = this.out.indexOf('\n')) >= 0) {
        this.responses.push(JSON.parse(this.out.slice(0, nl)));
        this.out = this.out.slice(nl + 1);
      }
      this.wake();
    });
    this.child.stderr.on('data', (d: Buffer) => {
      this.err += d.toString();
      let nl: number;
      while ((nl = this.err.indexOf('\n')) >= 0) {
        const line = this.err.slice(0, nl);
        this.err = this.err.slice(nl + 1);
        this.rawStderr.push(line);
        // every stderr line of the CLI adapter is JSON
        this.stderrLines.push(JSON.parse(line));
      }
      this.wake();
    });
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  /** Writes one raw line to stdin. */
  line(text: string): void {
    this.child.stdin.write(`${text}\n`);
  }

  /** Writes a command and resolves with its response (matched by id). */
  async send(cmd: Record<string, unknown>): Promise<any> {
    this.line(JSON.stringify(cmd));
    return this.until(() => this.responses.find((r) => r.id === cmd.id), `the response to ${JSON.stringify(cmd)}`);
  }

  /** Resolves with `pick()` once it is defined. */
  until<T>(pick: () => T | undefined, what: string, ms = 15_000): Promise<T> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`timed out waiting for ${what}; stdout ${JSON.stringify(this.responses)}; stderr ${this.rawStderr.join('\n')}`)),
        ms,
      );
      const check = () => {
        const v = pick();
        if (v !== undefined) {
          clearTimeout(timer);
          resolve(v);
        } else this.waiters.push(check);
      };
      check();
    });
  }

  /** The events delivered so far (stderr `type: event` lines). */
  events(subscriptionId?: string): any[] {
    return this.stderrLines.filter((l) => l.type === 'event' && (subscriptionId === undefined || l.subscription_id === subscriptionId)).map((l) => l.event);
  }

  ready(): Promise<any> {
    return this.until(() => this.stderrLines.find((l) => l.type === 'ready' || l.type === 'error'), 'the ready line');
  }

  /** Ends stdin (EOF) and resolves with the exit code. */
  end(): Promise<number | null> {
    this.child.stdin.end();
    return this.exited;
  }
}

describe('CLI adapter (marginalia cli: stdin commands, stdout responses, stderr events)', function () {
  this.timeout(120_000);
  let dir: string;
  let home: string;
  let project: string;
  const spawned: CliProcess[] = [];
  const cli = (env: Record<string, string> = {}, p = project) => {
    const c = new CliProcess(p, cliEnv(home, env));
    spawned.push(c);
    return c;
  };

  before(async () => {
    dir = tmpDir('marginalia-cli-');
    home = path.join(dir, 'home');
    project = path.join(dir, 'local', 'study.qda');
    // a project with the sample study's codebook, made by a server that then stops
    const seeded = await startServer(project, ['--seed', SAMPLE], { MARGINALIA_HOME: home });
    // one round trip first: serve installs its SIGTERM handler just after printing its address
    await request(seeded.base, 'GET', '/');
    const code = await seeded.stop();
    assert.equal(code, 0, seeded.stderr());
  });

  after(() => {
    for (const c of spawned) if (c.child.exitCode === null) c.child.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
  });

  describe('local mode (the CLI opens the project itself)', () => {
    it('answers calls on stdout with the envelope plus id, survives bad lines, and exits 0 at EOF after a checkpoint', async () => {
      const c = cli();
      const ready = await c.ready();
      assert.equal(ready.type, 'ready', JSON.stringify(ready));
      assert.equal(ready.mode, 'local');
      assert.equal(ready.role, 'agent');
      const listed = await c.send({ id: 1, op: 'call', tool: 'list_codes', arguments: {} });
      assert.equal(listed.success, true);
      assert.equal(listed.data.codes.length, 17);
      c.line('this is not json');
      c.line('');
      c.line('[1,2]');
      await c.until(() => (c.responses.length >= 3 ? true : undefined), 'two error responses');
      assert.deepEqual(
        c.responses.slice(1, 3).map((r) => [r.id, r.success, r.error_code]),
        [
          [null, false, 'INVALID_JSON'],
          [null, false, 'INVALID_ARGUMENTS'],
        ],
      );
      const unknownOp = await c.send({ id: 'x', op: 'explode' });
      assert.equal(unknownOp.error_code, 'INVALID_ARGUMENTS');
      const extra = await c.send({ id: 'y', op: 'call', tool: 'list_codes', argumnets: {} });
      assert.equal(extra.error_code, 'INVALID_ARGUMENTS');
      assert.match(extra.error, /argumnets/);
      const unknownTool = await c.send({ id: 2, op: 'call', tool: 'no_such_tool' });
      assert.equal(unknownTool.error_code, 'TOOL_NOT_FOUND');
      // processing continued after the bad lines
      const tools = await c.send({ id: 3, op: 'list_tools' });
      assert.ok(tools.data.tools.some((t: any) => t.name === 'create_code' && t.inputSchema.type === 'object'));
      // each with the trust level that applies to this caller (issue 14 item 6)
      assert.ok(
        tools.data.tools.every((t: any) => ['auto', 'notify', 'suggest', 'require', 'researcher_only'].includes(t.trust_level)),
        JSON.stringify(tools.data.tools[0]),
      );
      const beat = await c.send({ id: 4, op: 'heartbeat' });
      assert.equal(beat.data.session_id, ready.session_id);
      assert.equal(await c.end(), 0);
      // checkpointed: the journal is empty and the lock is gone, so the next process opens the project
      assert.equal(fs.statSync(`${project}-journal`).size, 0);
    });

    it("an agent: a Suggest call waits (pending_approval), approval.requested arrives on stderr, it may not approve, the researcher approves over the CLI's HTTP server, and a second CLI forwards to it", async () => {
      // in local mode MARGINALIA_TOKEN is both the install's agent token and the one presented
      const c = cli({ MARGINALIA_TOKEN: 'local-agent-token' });
      const ready = await c.ready();
      assert.equal(ready.role, 'agent');
      const sub = await c.send({ id: 1, op: 'subscribe', patterns: ['approval.*', 'coding.*'] });
      assert.equal(sub.success, true);
      assert.deepEqual(sub.data.patterns, ['approval.*', 'coding.*']);
      const pending = await c.send({ id: 2, op: 'call', tool: 'create_code', arguments: { name: 'Waiting', color: '#76B7B2' } });
      assert.equal(pending.success, true);
      assert.equal(pending.data.status, 'pending_approval');
      const requested = await c.until(() => c.events(sub.data.subscription_id).find((e) => e.event_type === 'approval.requested'), 'approval.requested');
      assert.equal(requested.payload.request_id, pending.data.request_id);
      assert.equal(requested.caused_by.session_id, ready.session_id);
      const approve = await c.send({ id: 3, op: 'approve', request_id: pending.data.request_id });
      assert.equal(approve.success, false);
      assert.equal(approve.error_code, 'APPROVAL_FORBIDDEN');

      // while the CLI owns the project it serves HTTP: the researcher approves another request there
      assert.match(ready.url, /^http:\/\/127\.0\.0\.1:\d+$/);
      const second = await c.send({ id: 6, op: 'call', tool: 'create_code', arguments: { name: 'Approved over HTTP', color: '#FF9DA7' } });
      assert.equal(second.data.status, 'pending_approval');
      const reviewer = JSON.parse(fs.readFileSync(path.join(home, 'credentials.json'), 'utf8')).reviewer_token as string;
      const byResearcher = await request(ready.url, 'POST', `/approvals/${second.data.request_id}/approve`, {}, { authorization: `Bearer ${reviewer}` });
      assert.equal(byResearcher.status, 200, JSON.stringify(byResearcher.body));
      await c.until(
        () => c.events(sub.data.subscription_id).find((e) => e.event_type === 'coding.code_created'),
        'coding.code_created after the HTTP approval',
      );
      assert.deepEqual(
        c.events(sub.data.subscription_id).map((e) => e.event_type),
        ['approval.requested', 'approval.requested', 'approval.granted', 'coding.code_created'],
      );
      // a second CLI finds this one through its discovery file and forwards to it instead of failing on the lock
      const other = cli({ MARGINALIA_TOKEN: 'local-agent-token' });
      const otherReady = await other.ready();
      assert.equal(otherReady.mode, 'forward');
      assert.equal(otherReady.owner.pid, c.child.pid);
      const seen = await other.send({ id: 1, op: 'call', tool: 'list_codes', arguments: {} });
      assert.ok(seen.data.codes.some((x: any) => x.name === 'Approved over HTTP'));
      assert.equal(await other.end(), 0);

      const unsub = await c.send({ id: 4, op: 'unsubscribe', subscription_id: sub.data.subscription_id });
      assert.equal(unsub.success, true);
      const again = await c.send({ id: 5, op: 'unsubscribe', subscription_id: sub.data.subscription_id });
      assert.equal(again.error_code, 'INVALID_ARGUMENTS');
      assert.equal(await c.end(), 0);
    });

    it('the researcher (MARGINALIA_REVIEWER_TOKEN): subscribe with since replays, then live events arrive in order on stderr', async () => {
      // in local mode the install's tokens are the environment's, so the reviewer token is the researcher's
      const c = cli({ MARGINALIA_REVIEWER_TOKEN: 'local-reviewer-token' });
      const ready = await c.ready();
      assert.equal(ready.role, 'researcher');
      const pendingList = await c.send({ id: 1, op: 'list_approvals', status: 'pending' });
      const waiting = pendingList.data.approvals.find((a: any) => a.tool === 'create_code');
      assert.ok(waiting, 'the agent request of the previous test survived the restart');
      const replay = await c.send({ id: 2, op: 'subscribe', patterns: ['approval.requested'], since: 0 });
      await c.until(() => c.events(replay.data.subscription_id).find((e) => e.payload.request_id === waiting.request_id), 'the replayed approval.requested');
      const live = await c.send({ id: 3, op: 'subscribe', patterns: ['coding.*', 'approval.*'] });
      const rejected = await c.send({ id: 4, op: 'reject', request_id: waiting.request_id, reason: 'not now' });
      assert.equal(rejected.success, true);
      assert.equal(rejected.data.status, 'rejected');
      const made = await c.send({ id: 5, op: 'call', tool: 'create_code', arguments: { name: 'Stewardship', color: '#EDC948' } });
      assert.equal(made.success, true, JSON.stringify(made));
      assert.ok(made.data.code_id > 0);
      await c.until(() => c.events(live.data.subscription_id).find((e) => e.event_type === 'coding.code_created'), 'coding.code_created');
      const types = c.events(live.data.subscription_id).map((e) => e.event_type);
      assert.deepEqual(types, ['approval.denied', 'coding.code_created']);
      const seqs = c.events(live.data.subscription_id).map((e) => e.metadata.sequence_number);
      assert.ok((seqs[1] as number) > (seqs[0] as number));
      assert.equal(await c.end(), 0);
      // what was acknowledged is in the project: a new process sees it
      const check = cli();
      await check.ready();
      const codes = await check.send({ id: 1, op: 'call', tool: 'list_codes' });
      assert.ok(codes.data.codes.some((x: any) => x.name === 'Stewardship'));
      assert.equal(await check.end(), 0);
    });
  });

  describe('forwarding mode (a marginalia serve owns the project)', () => {
    let server: ServerProcess;
    let owned: string;

    before(async () => {
      owned = path.join(dir, 'owned', 'study.qda');
      server = await startServer(owned, ['--seed', SAMPLE], { MARGINALIA_HOME: home });
    });

    after(async () => {
      if (server) await server.stop();
    });

    it('forwards calls, approvals and events to the owner, whose trust layer and audit log apply', async () => {
      const agent = cli({ MARGINALIA_TOKEN: AGENT_TOKEN }, owned);
      const ready = await agent.ready();
      assert.equal(ready.type, 'ready', JSON.stringify(ready));
      assert.equal(ready.mode, 'forward');
      assert.equal(ready.owner.pid, server.child.pid);
      assert.ok(ready.session_id, 'a session on the owner');
      const researcher = cli({ MARGINALIA_REVIEWER_TOKEN: REVIEWER_TOKEN }, owned);
      const rReady = await researcher.ready();
      assert.equal(rReady.mode, 'forward');
      assert.equal(rReady.role, 'researcher');

      const listed = await agent.send({ id: 1, op: 'call', tool: 'list_codes', arguments: {} });
      assert.equal(listed.data.codes.length, 17);
      const sub = await agent.send({ id: 2, op: 'subscribe', patterns: ['approval.*', 'coding.*'] });
      assert.equal(sub.success, true, JSON.stringify(sub));
      assert.deepEqual(sub.data.patterns, ['approval.*', 'coding.*']);
      const sessions = await researcher.send({ id: 1, op: 'subscribe', patterns: ['session.*'] });
      assert.equal(sessions.success, true);

      const pending = await agent.send({ id: 3, op: 'call', tool: 'create_code', arguments: { name: 'Forwarded', color: '#B07AA1' } });
      assert.equal(pending.success, true);
      assert.equal(pending.data.status, 'pending_approval');
      const forbidden = await agent.send({ id: 4, op: 'approve', request_id: pending.data.request_id });
      assert.equal(forbidden.error_code, 'APPROVAL_FORBIDDEN');
      const approved = await researcher.send({ id: 2, op: 'approve', request_id: pending.data.request_id });
      assert.equal(approved.success, true, JSON.stringify(approved));
      assert.equal(approved.data.status, 'completed');

      await agent.until(() => agent.events(sub.data.subscription_id).find((e) => e.event_type === 'coding.code_created'), 'coding.code_created over SSE');
      assert.deepEqual(
        agent.events(sub.data.subscription_id).map((e) => e.event_type),
        ['approval.requested', 'approval.granted', 'coding.code_created'],
      );
      const created = agent.events(sub.data.subscription_id)[2];
      assert.equal(created.payload.name, 'Forwarded');
      assert.equal(created.caused_by.session_id, ready.session_id);

      // the owner's audit log (beside the project) has the forwarded calls in the CLI's session
      const audit = fs
        .readFileSync(path.join(path.dirname(owned), '.marginalia', 'audit.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      assert.ok(audit.some((l) => l.tool === 'create_code' && l.decision === 'pending' && l.session_id === ready.session_id && l.client_name === 'cli'));
      assert.ok(audit.some((l) => l.tool === 'list_codes' && l.session_id === ready.session_id));
      assert.ok(audit.some((l) => l.tool === 'approve:create_code' && l.session_id === rReady.session_id && l.decision === 'permitted'));
      // the owner's call log shows them too (written in batches every 25 ms)
      for (const end = Date.now() + 2000; !/cli create_code 202/.test(server.stderr()) && Date.now() < end;) await new Promise((r) => setTimeout(r, 20));
      assert.match(server.stderr(), /cli create_code 202/);

      // EOF ends the agent's session on the owner (session.disconnected), and the CLI exits 0
      assert.equal(await agent.end(), 0);
      const gone = await researcher.until(
        () =>
          researcher.events(sessions.data.subscription_id).find((e) => e.event_type === 'session.disconnected' && e.payload.session_id === ready.session_id),
        'session.disconnected of the agent CLI',
      );
      assert.equal(gone.payload.reason, 'client_disconnected');
      assert.equal(await researcher.end(), 0);
      // the owner keeps running
      assert.equal(server.child.exitCode, null);
    });

    it('a wrong token is refused by the owner: UNAUTHORIZED, exit 2', async () => {
      const c = cli({ MARGINALIA_TOKEN: 'not-the-token' }, owned);
      const line = await c.ready();
      assert.equal(line.type, 'error');
      assert.equal(line.error_code, 'UNAUTHORIZED');
      assert.equal(await c.exited, 2);
    });
  });
});
