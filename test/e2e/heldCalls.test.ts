/**
 * Held calls over HTTP against the real server on 127.0.0.1 (issue 14, items 5 and 6): an agent's call at
 * trust level suggest or require is dry-run before it is queued, so create_code with an existing name,
 * rename_code of code 999999 and merge_codes 4 -> 4 answer at once with their own error codes (never 202)
 * and leave the project file and its journal byte for byte as they were; a valid held call answers 202 with
 * poll_after_ms and a Retry-After header; get_approval_status with wait_ms returns when the researcher
 * approves; polling one's own request 100 times at the advised pace is never refused; an agent's approve_*
 * is 403 APPROVAL_FORBIDDEN; GET /approvals gives a request's arguments as an object; approving a held rename
 * after the researcher renamed the code is 409 VERSION_CONFLICT; GET /tools states each caller's trust level.
 * The project's `.marginalia/config.yaml` sets a fast poll pace (20 ms) and a small request budget (30 a
 * minute), so the 100 polls would be refused if they were counted. Needs the built CLI (`npm run build`).
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { AS_AGENT, AS_RESEARCHER, callTool, request, startServer, tmpDir, type ServerProcess } from '../helpers/serverProcess';

const TEXT = 'P04: The workshops brought people in.\nP04: There was tension about the water.\nP07: We argued about the shed for months.';
const POLL_MS = 20;

describe('e2e: held calls are real proposals (HTTP)', function () {
  this.timeout(120_000);
  let dir: string;
  let project: string;
  let server: ServerProcess | undefined;
  let base: string;
  const ids = { tension: 0, conflict: 0, source: 0 };

  before(async () => {
    dir = tmpDir('marginalia-held-calls-');
    project = path.join(dir, 'study.qda');
    fs.mkdirSync(path.join(dir, '.marginalia'), { recursive: true });
    fs.writeFileSync(
      path.join(dir, '.marginalia', 'config.yaml'),
      `agent_context:\n  approvals:\n    poll_after_ms: ${POLL_MS}\n  rate_limits:\n    requests_per_minute: 30\n    mutations_per_minute: 30\n`,
    );
    // no idle checkpoint: the project file and its journal change only when something is committed
    server = await startServer(project, ['--checkpoint-idle-ms', '0']);
    base = server.base;
    const asResearcher = async (name: string, args: Record<string, unknown>): Promise<any> => {
      const r = await callTool(base, name, args, AS_RESEARCHER);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return r.body.data;
    };
    ids.tension = (await asResearcher('create_code', { name: 'Tension' })).code_id;
    ids.conflict = (await asResearcher('create_code', { name: 'Conflict' })).code_id;
    ids.source = (await asResearcher('add_text_source', { name: 'interview-04', content: TEXT })).source_id;
    const at = Array.from(TEXT.slice(0, TEXT.indexOf('tension about'))).length;
    await asResearcher('apply_code', { code_id: ids.tension, source_id: ids.source, start_position: at, end_position: at + 13 });
  });
  after(async () => {
    await server?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const bytes = (): { file: Buffer; journal: Buffer } => ({ file: fs.readFileSync(project), journal: fs.readFileSync(`${project}-journal`) });

  it('create_code with an existing name, rename_code of 999999 and merge_codes 4 -> 4 answer their own errors at once, not 202, and write nothing', async () => {
    // the agent's first call opens its session (session.connected is stored): before the bytes are read
    assert.equal((await callTool(base, 'list_codes', {}, AS_AGENT)).status, 200);
    const before = bytes();
    const pendingBefore = (await request(base, 'GET', '/approvals?status=pending', undefined, AS_RESEARCHER)).body.data.count as number;
    const cases: [string, Record<string, unknown>, number, string][] = [
      ['create_code', { name: 'TENSION' }, 409, 'DUPLICATE_NAME'],
      ['rename_code', { code_id: 999999, new_name: 'Anything' }, 404, 'CODE_NOT_FOUND'],
      ['merge_codes', { source_code_id: ids.tension, target_code_id: ids.tension }, 400, 'MERGE_SAME_CODE'],
    ];
    for (const [tool, args, status, code] of cases) {
      const r = await callTool(base, tool, args, AS_AGENT);
      assert.deepEqual([r.status, r.body.success, r.body.error_code], [status, false, code], `${tool}: ${JSON.stringify(r.body)}`);
      assert.equal(typeof r.body.error, 'string');
    }
    const pendingAfter = (await request(base, 'GET', '/approvals?status=pending', undefined, AS_RESEARCHER)).body.data.count as number;
    assert.equal(pendingAfter, pendingBefore, 'nothing was queued');
    const after = bytes();
    assert.ok(after.file.equals(before.file), 'the project file is byte for byte as it was');
    assert.ok(after.journal.equals(before.journal), 'the journal is byte for byte as it was');
  });

  it('a valid held call answers 202 with poll_after_ms and Retry-After; wait_ms returns when the researcher approves; GET /approvals arguments is an object', async () => {
    const asked = await callTool(base, 'rename_code', { code_id: ids.conflict, new_name: 'Dispute' }, AS_AGENT);
    assert.equal(asked.status, 202, JSON.stringify(asked.body));
    assert.equal(asked.body.data.status, 'pending_approval');
    assert.equal(asked.body.data.poll_after_ms, POLL_MS);
    assert.equal(asked.headers['retry-after'], '1', 'whole seconds, at least 1');
    const requestId = asked.body.data.request_id as string;

    const listed = await request(base, 'GET', '/approvals?status=pending', undefined, AS_RESEARCHER);
    const mine = (listed.body.data.approvals as { request_id: string; arguments: unknown; description: string }[]).find((a) => a.request_id === requestId);
    assert.deepEqual(mine?.arguments, { code_id: ids.conflict, new_name: 'Dispute' });
    assert.equal(mine?.description, "rename the code 'Conflict' to 'Dispute'");
    const one = await request(base, 'GET', `/approvals/${requestId}`, undefined, AS_RESEARCHER);
    assert.deepEqual(one.body.data.arguments, { code_id: ids.conflict, new_name: 'Dispute' });

    // the long poll waits; the researcher approves; the poll answers with the outcome
    let answered = false;
    const polling = callTool(base, 'get_approval_status', { request_id: requestId, wait_ms: 30_000 }, AS_AGENT).then((r) => {
      answered = true;
      return r;
    });
    const still = await callTool(base, 'get_approval_status', { request_id: requestId }, AS_AGENT);
    assert.equal(still.body.data.status, 'pending');
    assert.equal(answered, false, 'the long poll waits while the request is pending');
    const approved = await request(base, 'POST', `/approvals/${requestId}/approve`, {}, AS_RESEARCHER);
    assert.equal(approved.status, 200, JSON.stringify(approved.body));
    const r = await polling;
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual([r.body.data.status, r.body.data.decision, r.body.data.result.new_name], ['completed', 'approved', 'Dispute']);

    const decided = await request(base, 'GET', '/approvals?status=completed', undefined, AS_RESEARCHER);
    const done = (decided.body.data.approvals as { request_id: string; arguments: unknown; result: unknown }[]).find((a) => a.request_id === requestId);
    assert.deepEqual(done?.arguments, { code_id: ids.conflict, new_name: 'Dispute' });
    assert.equal((done?.result as { new_name: string }).new_name, 'Dispute');
  });

  it('polling its own request 100 times at the advised pace is never refused, though the budget is 30 requests a minute', async () => {
    const asked = await callTool(base, 'create_code', { name: 'Belonging' }, AS_AGENT);
    assert.equal(asked.status, 202, JSON.stringify(asked.body));
    const { request_id: requestId, poll_after_ms: pace } = asked.body.data as { request_id: string; poll_after_ms: number };
    for (let i = 0; i < 100; i++) {
      await new Promise((r) => setTimeout(r, pace));
      const r = await callTool(base, 'get_approval_status', { request_id: requestId }, AS_AGENT);
      assert.equal(r.status, 200, `poll ${i + 1}: ${JSON.stringify(r.body)}`);
      assert.equal(r.body.data.status, 'pending');
    }
    const rejected = await request(base, 'POST', `/approvals/${requestId}/reject`, { reason: 'not now' }, AS_RESEARCHER);
    assert.equal(rejected.status, 200, JSON.stringify(rejected.body));
  });

  it("a stale approval: the agent's held rename, approved after the researcher renamed the code, is 409 VERSION_CONFLICT naming the change and its author; the researcher's name stays", async () => {
    const code = (await callTool(base, 'create_code', { name: 'Water' }, AS_RESEARCHER)).body.data.code_id as number;
    const asked = await callTool(base, 'rename_code', { code_id: code, new_name: 'Water access' }, AS_AGENT);
    assert.equal(asked.status, 202, JSON.stringify(asked.body));
    const renamed = await callTool(base, 'rename_code', { code_id: code, new_name: 'Water rights' }, AS_RESEARCHER);
    assert.equal(renamed.status, 200, JSON.stringify(renamed.body));
    const approved = await request(base, 'POST', `/approvals/${asked.body.data.request_id}/approve`, {}, AS_RESEARCHER);
    assert.deepEqual([approved.status, approved.body.error_code], [409, 'VERSION_CONFLICT'], JSON.stringify(approved.body));
    // who renamed it, as the event log records the researcher's rename
    const log = await request(base, 'GET', '/events/history?patterns=coding.code_renamed&limit=1000', undefined, AS_RESEARCHER);
    const rename = (log.body.data.events as { aggregate_id: string; payload: { new_name?: string }; caused_by: { user: string; client_type: string } }[]).find(
      (e) => e.aggregate_id === String(code) && e.payload.new_name === 'Water rights',
    );
    assert.ok(rename, JSON.stringify(log.body));
    assert.ok(
      approved.body.error.includes(
        `code 'Water rights' changed (version 1 -> 2: coding.code_renamed) by ${rename.caused_by.user} (${rename.caused_by.client_type})`,
      ),
      approved.body.error,
    );
    assert.deepEqual(
      [approved.body.details.changes[0].changed_by.event_type, approved.body.details.changes[0].changed_by.user],
      ['coding.code_renamed', rename.caused_by.user],
    );
    assert.equal((await callTool(base, 'get_code', { code_id: code }, AS_RESEARCHER)).body.data.name, 'Water rights');
    const status = await callTool(base, 'get_approval_status', { request_id: asked.body.data.request_id }, AS_AGENT);
    assert.equal(status.body.data.status, 'pending', 'it still waits for an edited approval or a rejection');
    const rejected = await request(base, 'POST', `/approvals/${asked.body.data.request_id}/reject`, { reason: 'renamed meanwhile' }, AS_RESEARCHER);
    assert.equal(rejected.status, 200);
  });

  it('GET /tools tells each caller the trust level that applies to it, and an agent what a held answer looks like', async () => {
    const asAgent = await request(base, 'GET', '/tools', undefined, AS_AGENT);
    assert.equal(asAgent.status, 200);
    const byName = new Map((asAgent.body.tools as { name: string; trust_level: string; description: string }[]).map((t) => [t.name, t]));
    assert.deepEqual(
      ['list_codes', 'apply_code', 'create_code', 'merge_codes', 'approve_merge', 'erase_source'].map((n) => byName.get(n)?.trust_level),
      ['auto', 'notify', 'suggest', 'require', 'researcher_only', 'researcher_only'],
    );
    assert.match(
      byName.get('create_code')?.description ?? '',
      /Trust level for you: suggest\. Your call is held .*HTTP 202 .*"pending_approval", request_id.*poll_after_ms: 20/,
    );
    assert.doesNotMatch(byName.get('list_codes')?.description ?? '', /Trust level for you/);
    const asResearcher = await request(base, 'GET', '/tools', undefined, AS_RESEARCHER);
    assert.ok((asResearcher.body.tools as { trust_level: string }[]).every((t) => t.trust_level === 'auto'));
  });

  it("an agent's approve_* and respond_to_code_suggestion answer 403 APPROVAL_FORBIDDEN and queue nothing", async () => {
    const merge = await callTool(base, 'suggest_merge_codes', { source_code_id: ids.tension, target_code_id: ids.conflict, rationale: 'same' }, AS_AGENT);
    assert.equal(merge.status, 200, JSON.stringify(merge.body));
    const code = await callTool(base, 'suggest_new_code', { name: 'Home', rationale: 'it recurs' }, AS_AGENT);
    const pendingBefore = (await request(base, 'GET', '/approvals?status=pending', undefined, AS_RESEARCHER)).body.data.count as number;
    for (const [tool, args] of [
      ['approve_merge', { merge_suggestion_id: merge.body.data.merge_suggestion_id }],
      ['approve_suggestion', { suggestion_id: code.body.data.suggestion_id }],
      ['approve_batch_coding', { batch_id: 1 }],
      ['respond_to_code_suggestion', { suggestion_batch_id: 1, response: 'accept' }],
    ] as const) {
      const r = await callTool(base, tool, args, AS_AGENT);
      assert.deepEqual([r.status, r.body.error_code], [403, 'APPROVAL_FORBIDDEN'], `${tool}: ${JSON.stringify(r.body)}`);
    }
    assert.equal((await request(base, 'GET', '/approvals?status=pending', undefined, AS_RESEARCHER)).body.data.count, pendingBefore);
    // the researcher decides the agent's suggestion
    const ok = await callTool(base, 'approve_suggestion', { suggestion_id: code.body.data.suggestion_id }, AS_RESEARCHER);
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
  });
});
