/**
 * The audit log holds every refused call (docs/reference/http.md, "Audit log"): besides the refusals the other files of this
 * suite check where they happen (Host/Origin, tokens, content types, paths, approvals), the ones of the
 * pipeline's stages and of the adapters before it — a body that is not JSON or not `{"arguments": {...}}`, an
 * unknown tool, invalid arguments, the session limit, an expired or unknown session, the rate limit — each
 * with its decision (`denied` for a refusal of who or how much, `failed` for a malformed call), the session
 * when one is known, and never a token. `audit.include_payload: false` leaves the arguments out.
 */
import assert from 'node:assert/strict';
import { AS_AGENT, TOKENS, raw, startStack, type Stack } from './stack';

describe('security: the audit log holds every refused call', function () {
  this.timeout(60_000);
  let s: Stack;

  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    raw(s.port, 'POST', path, { headers: { ...AS_AGENT, 'content-type': 'application/json', ...headers }, body });

  before(async () => {
    s = await startStack({
      base: [
        'agent_context:',
        '  sessions:',
        '    max_concurrent: 4',
        '  rate_limits:',
        '    requests_per_minute: 5',
        '    mutations_per_minute: 5',
        '  audit:',
        '    include_payload: false',
      ],
    });
  });
  after(async () => {
    await s?.close();
  });

  it('malformed calls: not JSON, not an object, unknown members, an unknown tool, invalid arguments (failed)', async () => {
    const cases: [string, unknown, number, string, string][] = [
      ['/tools/list_codes', '{"arguments": {', 400, 'INVALID_JSON', 'POST /tools/list_codes'],
      ['/tools/list_codes', '[1,2]', 400, 'INVALID_ARGUMENTS', 'POST /tools/list_codes'],
      ['/tools/list_codes', { arguments: {}, extra: 1 }, 400, 'INVALID_ARGUMENTS', 'POST /tools/list_codes'],
      ['/tools/list_codes', { arguments: [] }, 400, 'INVALID_ARGUMENTS', 'POST /tools/list_codes'],
      ['/tools/no_such_tool', { arguments: {} }, 404, 'TOOL_NOT_FOUND', 'no_such_tool'],
      ['/tools/create_code', { arguments: { name: '', color: 'red' } }, 400, 'INVALID_ARGUMENTS', 'create_code'],
    ];
    for (const [path, body, status, code, tool] of cases) {
      const mark = s.auditMark();
      const r = await post(path, body, { 'x-marginalia-client': 'malformed' });
      assert.equal(r.status, status, `${path} ${JSON.stringify(body)}: ${r.text}`);
      assert.equal(r.body.error_code, code);
      assert.deepEqual(
        s.auditSince(mark).map((e) => [e.tool, e.decision, e.error_code]),
        [[tool, 'failed', code]],
        `${path} ${JSON.stringify(body)}`,
      );
    }
  });

  it('the rate limit (denied, naming the session), the session limit, unknown sessions (denied)', async () => {
    const mark = s.auditMark();
    let limited = 0;
    // a credential of its own: the budget is per credential (issue 14 item 4), and its one implicit session is named by its first call
    const hasty = { authorization: `Bearer ${s.agent.credentials.issue('hasty').token}`, 'x-marginalia-client': 'hasty' };
    for (let i = 0; i < 8; i++) {
      const r = await post('/tools/list_codes', { arguments: {} }, hasty);
      if (r.status === 429) limited++;
    }
    assert.ok(limited >= 2, 'the limit bit');
    const denied = s.auditSince(mark).filter((e) => e.error_code === 'RATE_LIMITED');
    assert.equal(denied.length, limited);
    assert.ok(denied.every((e) => e.decision === 'denied' && e.session_id && e.client_name === 'hasty'));

    // four agent sessions at most (the researcher's never count): further agents (credentials) are refused, and audited
    const mark2 = s.auditMark();
    const statuses: number[] = [];
    for (const name of ['c1', 'c2', 'c3', 'c4'])
      statuses.push(
        (
          await post(
            '/tools/get_project_context',
            { arguments: {} },
            { authorization: `Bearer ${s.agent.credentials.issue(name).token}`, 'x-marginalia-client': name },
          )
        ).status,
      );
    assert.ok(statuses.includes(429), `statuses ${statuses.join(',')}`);
    assert.ok(
      s.auditSince(mark2).some((e) => e.error_code === 'SESSION_LIMIT' && e.decision === 'denied' && e.tool === 'session:open'),
      JSON.stringify(s.auditSince(mark2)),
    );

    const mark3 = s.auditMark();
    const unknown = await post('/tools/list_codes', { arguments: {} }, { 'x-marginalia-session': 'forged-session-id' });
    assert.equal(unknown.body.error_code, 'SESSION_NOT_FOUND');
    assert.deepEqual(
      s.auditSince(mark3).map((e) => [e.tool, e.decision, e.error_code, e.session_id]),
      [['session:resume', 'denied', 'SESSION_NOT_FOUND', 'forged-session-id']],
    );
  });

  it('an ended session is refused and audited; the log never holds a token or (include_payload: false) arguments', async () => {
    for (const x of s.agent.sessions.list()) if (x.session_id !== s.researcher.session_id) s.agent.sessions.destroy(x.session_id, 'client_disconnected');
    const session = s.agent.openSession({ authorization: AS_AGENT.authorization, client_type: 'CUSTOM', client_name: 'short-lived' }).session;
    s.agent.sessions.destroy(session.session_id, 'client_disconnected');
    const mark = s.auditMark();
    const r = await post('/tools/list_codes', { arguments: {} }, { 'x-marginalia-session': session.session_id });
    assert.equal(r.status, 401);
    assert.equal(s.auditSince(mark).length, 1);
    const text = s.audit.join('\n');
    assert.ok(!text.includes(TOKENS.agent) && !text.includes(TOKENS.reviewer), 'no token');
    assert.ok(
      s.auditSince(0).every((e) => e.arguments === undefined),
      'no arguments with include_payload: false',
    );
  });
});
