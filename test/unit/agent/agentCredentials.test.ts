/**
 * AgentCredentials (issue 14 item 2): one bearer token per named agent, stored as a SHA-256 hash only,
 * identified in constant time, revoked with listeners told; the file store of `marginalia agent` shared
 * by two instances (a running server and the CLI) through its stamp.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { AgentCredentials, memoryCredentialStorage, type StoredAgentCredential } from '../../../src/agent/agentCredentials';
import { AgentContext, identityOf } from '../../../src/agent/agentContext';
import { isToolError, ToolError } from '../../../src/core/errors';
import { defaultConfig } from '../../../src/agent/config';
import { SessionManager } from '../../../src/agent/sessions';
import { agentCredentialsPath, fileAgentCredentialStorage } from '../../../src/cli/credentials';

function code(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (e) {
    return isToolError(e) ? e.code : `not a ToolError: ${String(e)}`;
  }
  return undefined;
}

/** A clock the test moves. */
function clock(start = Date.parse('2026-01-01T00:00:00Z')) {
  const c = { t: start, now: () => c.t };
  return c;
}

describe('AgentCredentials', () => {
  it('issues a 32-byte base64url token once and stores only its SHA-256', () => {
    let stored: StoredAgentCredential[] = [];
    const storage = { read: () => stored.map((c) => ({ ...c })), write: (l: StoredAgentCredential[]) => void (stored = l.map((c) => ({ ...c }))) };
    const creds = new AgentCredentials(storage);
    const { name, token } = creds.issue('  coder-bot  ');
    assert.equal(name, 'coder-bot');
    assert.match(token, /^[A-Za-z0-9_-]{43}$/, '32 bytes in base64url are 43 characters');
    assert.equal(Buffer.from(token, 'base64url').length, 32);
    assert.equal(stored.length, 1);
    const expected = createHash('sha256').update(token).digest('hex');
    assert.equal(stored[0]?.token_sha256, expected);
    assert.ok(!JSON.stringify(stored).includes(token), 'the token itself is never stored');
    assert.deepEqual(Object.keys(creds.list()[0] ?? {}).sort(), ['created_at', 'last_used_at', 'name']);
    assert.equal(creds.list()[0]?.last_used_at, null);
    const second = creds.issue('other');
    assert.notEqual(second.token, token);
  });

  it('identifies each agent by its own token, and nothing else', () => {
    const creds = new AgentCredentials(memoryCredentialStorage());
    const a = creds.issue('A');
    const b = creds.issue('B');
    assert.equal(creds.identify(a.token), 'A');
    assert.equal(creds.identify(b.token), 'B');
    for (const wrong of ['', 'x', a.token.slice(0, -1), `${a.token}x`, a.token.toUpperCase(), createHash('sha256').update(a.token).digest('hex')]) {
      assert.equal(creds.identify(wrong), null, `"${wrong.slice(0, 12)}..." is nobody`);
    }
  });

  it('compares every stored hash with timingSafeEqual, with no early exit (constant time in which one matches)', () => {
    const crypto = require('node:crypto') as typeof import('node:crypto');
    const real = crypto.timingSafeEqual;
    const creds = new AgentCredentials(memoryCredentialStorage());
    const tokens = ['a1', 'a2', 'a3', 'a4'].map((n) => creds.issue(n).token);
    let calls = 0;
    (crypto as { timingSafeEqual: typeof real }).timingSafeEqual = (x, y) => {
      calls++;
      return real(x, y);
    };
    try {
      for (const t of [tokens[0] as string, tokens[3] as string, 'nobody']) {
        calls = 0;
        creds.identify(t);
        assert.equal(calls >= 4, true, `all 4 hashes compared for ${t.slice(0, 4)} (got ${calls})`);
      }
    } finally {
      (crypto as { timingSafeEqual: typeof real }).timingSafeEqual = real;
    }
  });

  it('hashes a token once until the list changes (a request identifies it twice); a revocation, here or by another process, forgets it', () => {
    const crypto = require('node:crypto') as typeof import('node:crypto');
    const real = crypto.createHash;
    let hashes = 0;
    (crypto as { createHash: typeof real }).createHash = ((...args: Parameters<typeof real>) => {
      hashes++;
      return real(...args);
    }) as typeof real;
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'marginalia-creds-recent-'));
    const prevHome = process.env.MARGINALIA_HOME;
    process.env.MARGINALIA_HOME = home;
    try {
      const c = clock();
      const creds = new AgentCredentials(memoryCredentialStorage(), c);
      const a = creds.issue('A');
      const b = creds.issue('B');
      hashes = 0;
      assert.equal(creds.identify(a.token), 'A');
      assert.equal(creds.identify(a.token), 'A');
      assert.equal(creds.identify(b.token), 'B');
      assert.equal(creds.identify(b.token), 'B');
      assert.equal(hashes, 2, 'one SHA-256 per token, not per check');
      assert.equal(creds.identify(`${a.token.slice(0, -1)}x`), null, 'a near-miss is not recognised from memory');
      assert.equal(creds.revoke('A'), true);
      assert.equal(creds.identify(a.token), null, 'revoked: forgotten at once');
      assert.equal(creds.identify(b.token), 'B');
      // another process (the CLI) revokes: the server notices within 250 ms as before
      const project = path.join(home, 'study.qda');
      const server = new AgentCredentials(fileAgentCredentialStorage(project), c);
      const cli = new AgentCredentials(fileAgentCredentialStorage(project));
      const { token } = cli.issue('late');
      assert.equal(server.identify(token), 'late');
      assert.equal(server.identify(token), 'late');
      cli.revoke('late');
      c.t += 250;
      assert.equal(server.identify(token), null);
    } finally {
      (crypto as { createHash: typeof real }).createHash = real;
      if (prevHome === undefined) delete process.env.MARGINALIA_HOME;
      else process.env.MARGINALIA_HOME = prevHome;
      fs.rmSync(home, { recursive: true, force: true });
    }
  });

  it('refuses an empty, malformed, reserved or duplicate name', () => {
    const creds = new AgentCredentials(memoryCredentialStorage());
    creds.issue('Claude');
    assert.equal(
      code(() => creds.issue('')),
      'INVALID_ARGUMENTS',
    );
    assert.equal(
      code(() => creds.issue('   ')),
      'INVALID_ARGUMENTS',
    );
    assert.equal(
      code(() => creds.issue('a/b')),
      'INVALID_ARGUMENTS',
    );
    assert.equal(
      code(() => creds.issue('x'.repeat(65))),
      'INVALID_ARGUMENTS',
    );
    assert.equal(
      code(() => creds.issue(42 as unknown as string)),
      'INVALID_ARGUMENTS',
    );
    assert.equal(
      code(() => creds.issue('Claude')),
      'AGENT_EXISTS',
    );
    assert.equal(
      code(() => creds.issue('claude')),
      'AGENT_EXISTS',
      'names differ by more than case',
    );
    assert.equal(
      code(() => creds.issue('agent')),
      'AGENT_EXISTS',
      "the install's own token is the agent 'agent'",
    );
    assert.equal(
      code(() => creds.issue('researcher')),
      'AGENT_EXISTS',
    );
    assert.deepEqual(
      creds.list().map((c) => c.name),
      ['Claude'],
    );
  });

  it('revokes: the token stops working at once and listeners hear the name; an unknown name is false', () => {
    const creds = new AgentCredentials(memoryCredentialStorage());
    const a = creds.issue('A');
    const b = creds.issue('B');
    const heard: string[] = [];
    creds.onRevoked((n) => heard.push(n));
    assert.equal(creds.revoke('A'), true);
    assert.equal(creds.identify(a.token), null);
    assert.equal(creds.identify(b.token), 'B');
    assert.deepEqual(heard, ['A']);
    assert.equal(creds.revoke('A'), false);
    assert.equal(creds.revoke('nobody'), false);
    assert.deepEqual(heard, ['A']);
    assert.deepEqual(
      creds.list().map((c) => c.name),
      ['B'],
    );
  });

  it('records the last use (in memory at once, in the store at most once a minute)', () => {
    let writes = 0;
    const inner = memoryCredentialStorage();
    const storage = { read: inner.read, write: (l: StoredAgentCredential[]) => (writes++, inner.write(l)) };
    const c = clock();
    const creds = new AgentCredentials(storage, c);
    const a = creds.issue('A');
    const afterIssue = writes;
    c.t += 1000;
    creds.identify(a.token);
    assert.equal(creds.list()[0]?.last_used_at, '2026-01-01T00:00:01.000Z');
    const afterFirstUse = writes;
    assert.equal(afterFirstUse, afterIssue + 1);
    c.t += 5000;
    creds.identify(a.token);
    assert.equal(writes, afterFirstUse, 'a use 5 s later is not written');
    assert.equal(creds.list()[0]?.last_used_at, '2026-01-01T00:00:06.000Z');
    c.t += 61_000;
    creds.identify(a.token);
    assert.equal(writes, afterFirstUse + 1);
  });

  describe('the file store (marginalia agent and a running server)', () => {
    let home: string;
    const saved = process.env.MARGINALIA_HOME;
    beforeEach(() => {
      home = fs.mkdtempSync(path.join(os.tmpdir(), 'marginalia-creds-'));
      process.env.MARGINALIA_HOME = home;
    });
    afterEach(() => {
      if (saved === undefined) delete process.env.MARGINALIA_HOME;
      else process.env.MARGINALIA_HOME = saved;
      fs.rmSync(home, { recursive: true, force: true });
    });

    it('is one 0600 file per project, keyed by the hash of its path, holding hashes only', () => {
      const project = path.join(home, 'study.qda');
      const creds = new AgentCredentials(fileAgentCredentialStorage(project));
      const { token } = creds.issue('A');
      const file = agentCredentialsPath(project);
      assert.equal(path.dirname(file), path.join(home, 'agents'));
      assert.match(path.basename(file), /^[0-9a-f]{16}\.json$/);
      assert.notEqual(agentCredentialsPath(path.join(home, 'other.qda')), file);
      assert.equal(fs.statSync(file).mode & 0o777, 0o600);
      const text = fs.readFileSync(file, 'utf8');
      assert.ok(!text.includes(token));
      assert.ok(text.includes(createHash('sha256').update(token).digest('hex')));
    });

    it('a second instance (the server) sees an addition at once and a revocation on refresh, telling its listeners', () => {
      const project = path.join(home, 'study.qda');
      const c = clock();
      const server = new AgentCredentials(fileAgentCredentialStorage(project), c);
      const cli = new AgentCredentials(fileAgentCredentialStorage(project));
      const { token } = cli.issue('late');
      assert.equal(server.identify(token), 'late', 'an unknown token re-reads the store');
      const heard: string[] = [];
      server.onRevoked((n) => heard.push(n));
      assert.equal(cli.revoke('late'), true);
      server.refresh();
      assert.deepEqual(heard, ['late']);
      assert.equal(server.identify(token), null);
      // the server's writes (last use) never drop what the CLI added meanwhile
      const one = cli.issue('one');
      c.t += 120_000;
      const two = cli.issue('two');
      assert.equal(server.identify(one.token), 'one');
      assert.deepEqual(
        cli.list().map((x) => x.name),
        ['one', 'two'],
      );
      assert.equal(server.identify(two.token), 'two');
    });
  });

  describe('in the agent context', () => {
    const tokens = { agent: 'install-agent-token-0123456789', reviewer: 'reviewer-token-0123456789abcdef' };

    it("maps the reviewer token to the researcher, the install's token to the agent 'agent', an issued one to its name", () => {
      const creds = new AgentCredentials(memoryCredentialStorage());
      const { token } = creds.issue('Bot');
      assert.deepEqual(identityOf(tokens, creds, `Bearer ${tokens.reviewer}`), { role: 'researcher' });
      assert.deepEqual(identityOf(tokens, creds, `Bearer ${tokens.agent}`), { role: 'agent', agent: 'agent' });
      assert.deepEqual(identityOf(tokens, creds, `Bearer ${token}`), { role: 'agent', agent: 'Bot' });
      assert.equal(identityOf(tokens, creds, 'Bearer nope'), null);
      assert.equal(identityOf(tokens, creds, undefined), null);
    });

    it('revoking ends every session of the credential, and only those', () => {
      const ctx = new AgentContext({ tools: [], project: () => null, tokens });
      try {
        const a = ctx.credentials.issue('A');
        const b = ctx.credentials.issue('B');
        const s1 = ctx.openSession({ authorization: `Bearer ${a.token}`, client_type: 'CUSTOM', client_name: 'a1' }).session;
        const s2 = ctx.openSession({ authorization: `Bearer ${a.token}`, client_type: 'CUSTOM', client_name: 'a2' }).session;
        const s3 = ctx.openSession({ authorization: `Bearer ${b.token}`, client_type: 'CUSTOM', client_name: 'b' }).session;
        const ended: string[] = [];
        ctx.sessions.watch(s1.session_id, (r) => ended.push(`${s1.session_id}:${r}`));
        assert.equal(s1.owner, 'A');
        ctx.credentials.revoke('A');
        assert.equal(ctx.sessions.get(s1.session_id), undefined);
        assert.equal(ctx.sessions.get(s2.session_id), undefined);
        assert.ok(ctx.sessions.get(s3.session_id));
        assert.deepEqual(ended, [`${s1.session_id}:revoked`]);
        assert.equal(
          code(() => ctx.callerFor(s3.session_id, `Bearer ${a.token}`)),
          'UNAUTHORIZED',
        );
      } finally {
        ctx.dispose();
      }
    });

    it("refuses another credential's session with SESSION_FORBIDDEN; the researcher may end it", () => {
      const ctx = new AgentContext({ tools: [], project: () => null, tokens });
      try {
        const a = ctx.credentials.issue('A');
        const b = ctx.credentials.issue('B');
        const s = ctx.openSession({ authorization: `Bearer ${a.token}`, client_type: 'CUSTOM', client_name: 'a' }).session;
        assert.equal(ctx.callerFor(s.session_id, `Bearer ${a.token}`).agent, 'A');
        assert.equal(
          code(() => ctx.callerFor(s.session_id, `Bearer ${b.token}`)),
          'SESSION_FORBIDDEN',
        );
        assert.equal(
          code(() => ctx.callerFor(s.session_id, `Bearer ${tokens.agent}`)),
          'SESSION_FORBIDDEN',
        );
        assert.equal(
          code(() => ctx.heartbeatAs(s.session_id, `Bearer ${b.token}`)),
          'SESSION_FORBIDDEN',
        );
        assert.equal(
          code(() => ctx.endSessionAs(s.session_id, `Bearer ${b.token}`)),
          'SESSION_FORBIDDEN',
        );
        assert.equal(
          code(() => ctx.callerFor(s.session_id, `Bearer ${tokens.reviewer}`)),
          'SESSION_FORBIDDEN',
          'the researcher ends sessions, never acts in them',
        );
        assert.equal(ctx.endSessionAs(s.session_id, `Bearer ${tokens.reviewer}`).reason, 'ended_by_researcher');
        assert.equal(ctx.sessions.get(s.session_id), undefined);
      } finally {
        ctx.dispose();
      }
    });

    it('gives a credential one implicit session whatever client name it states', () => {
      const ctx = new AgentContext({ tools: [], project: () => null, tokens });
      try {
        const a = ctx.credentials.issue('A');
        const ids = new Set(['x', 'y', 'z', 'w', 'v', 'u'].map((n) => ctx.implicitCaller(`Bearer ${a.token}`, n).session_id));
        assert.equal(ids.size, 1);
        const other = ctx.implicitCaller(`Bearer ${tokens.agent}`, 'x');
        assert.ok(!ids.has(other.session_id));
        assert.equal(other.agent, 'agent');
      } finally {
        ctx.dispose();
      }
    });
  });

  describe('the session table (sessions.max_concurrent counts agent sessions only)', () => {
    const make = () => {
      const c = clock();
      const cfg = defaultConfig(); // max_concurrent 5, heartbeat 30 s: idle after 60 s
      const ended: string[] = [];
      const m = new SessionManager(
        () => cfg,
        c,
        () => 'p',
        { connected: () => undefined, disconnected: (s, r) => void ended.push(`${s.client_name}:${r}`) },
      );
      const open = (owner: string, name: string) => m.create({ client_type: 'CUSTOM', client_name: name, authenticated: true, owner });
      return { c, m, open, ended };
    };

    it('never refuses or counts the researcher; a sixth agent is refused with retry_after_ms while none is idle', () => {
      const { c, m, open } = make();
      for (let i = 0; i < 5; i++) open(`agent-${i}`, `a${i}`);
      for (let i = 0; i < 20; i++) open('researcher', `r${i}`);
      c.t += 10_000;
      let refusal: ToolError | undefined;
      try {
        open('agent-5', 'a5');
      } catch (e) {
        refusal = e as ToolError;
      }
      assert.equal(refusal?.code, 'SESSION_LIMIT');
      // the first session becomes idle 60 s after its last activity: 50 s from now
      assert.deepEqual(refusal?.details, { limit: 5, retry_after_ms: 50_000 });
      assert.equal(m.list().length, 25);
    });

    it('reclaims the agent session idle longest for a newcomer, never a researcher session', () => {
      const { c, m, open, ended } = make();
      const first = open('agent-0', 'a0');
      c.t += 1000;
      const second = open('agent-1', 'a1');
      for (let i = 2; i < 5; i++) open(`agent-${i}`, `a${i}`);
      open('researcher', 'r');
      c.t += 61_000; // every agent session idle now; a0 the longest
      for (let i = 2; i < 5; i++) m.touch(m.list().find((s) => s.client_name === `a${i}`)!.session_id);
      const newcomer = open('agent-5', 'a5');
      assert.ok(m.get(newcomer.session_id));
      assert.equal(m.get(first.session_id), undefined);
      assert.ok(m.get(second.session_id), 'only one is reclaimed');
      assert.deepEqual(ended, ['a0:reclaimed']);
      assert.equal(m.ownerOf(first.session_id), 'agent-0', "an ended session's owner is remembered (its pending requests)");
    });

    it("endOwnedBy ends exactly one credential's sessions and tells their watchers", () => {
      const { m, open } = make();
      const a1 = open('A', 'a1');
      const a2 = open('A', 'a2');
      const b = open('B', 'b');
      const heard: string[] = [];
      m.watch(a1.session_id, (r) => heard.push(r));
      m.watch(b.session_id, (r) => heard.push(`b:${r}`));
      assert.equal(m.endOwnedBy('A', 'revoked'), 2);
      assert.equal(m.get(a2.session_id), undefined);
      assert.ok(m.get(b.session_id));
      assert.deepEqual(heard, ['revoked']);
    });
  });
});
