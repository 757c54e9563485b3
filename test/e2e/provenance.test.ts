/**
 * Provenance of who acts (issue 14, items 1 and 8), against the real CLI server on 127.0.0.1 with real git:
 * the researcher (reviewer token, coder name from MARGINALIA_CODER) and an agent (agent token, client
 * "claude-code", model stated in X-Marginalia-Model) code the same source. Segments listed back say `coder` and
 * `coder_role`; events' caused_by carries `role`, `coder` and, for the agent, `client` and `model`; the audit
 * log's lines carry the role, coder and model; the history authors the researcher's snapshot with the
 * researcher's name (not by_agent) and the agent's as the agent; an approval decision names the researcher who
 * decided. undo_agent_action is the researcher's on HTTP, REST and MCP (official SDK client), refused to agents,
 * and never deletes another coder's codings: undoing an agent's created code that the researcher has coded with
 * since is refused naming the researcher, and nothing changes.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import {
  AGENT_TOKEN,
  AS_AGENT,
  AS_RESEARCHER,
  callTool,
  request,
  RESEARCHER_CODER,
  REVIEWER_TOKEN,
  startServer,
  tmpDir,
  type ServerProcess,
} from '../helpers/serverProcess';

const TEXT = 'We grew beans together every spring. The council never came. Water was scarce.';
const AGENT = { ...AS_AGENT, 'x-marginalia-client': 'claude-code', 'x-marginalia-model': 'test-model-7' };
const RESEARCHER = { ...AS_RESEARCHER, 'x-marginalia-client': 'curl' };

interface EventOut {
  event_type: string;
  aggregate_id: string;
  payload: Record<string, unknown>;
  caused_by: { session_id: string; client_type: string; user: string; role?: string; coder?: string; client?: string; model?: string };
  metadata: { correlation_id: string; sequence_number: number };
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('e2e: provenance of researcher and agent actions; undo_agent_action on every surface', function () {
  this.timeout(120_000);
  let dir = '';
  let server: ServerProcess;
  let sourceId = 0;
  let codeId = 0;

  const ok = async (name: string, args: Record<string, unknown>, headers: Record<string, string>) => {
    const r = await callTool(server.base, name, args, headers);
    assert.equal(r.status, 200, `${name}: ${JSON.stringify(r.body).slice(0, 600)}`);
    return r.body.data;
  };
  const events = async (since: number, pattern: string): Promise<EventOut[]> =>
    (await request(server.base, 'GET', `/events/history?since=${since}&patterns=${encodeURIComponent(pattern)}`, undefined, AS_RESEARCHER)).body.data.events;
  const headSeq = async () => {
    const all: EventOut[] = (await request(server.base, 'GET', '/events/history?since=0&limit=1000', undefined, AS_RESEARCHER)).body.data.events;
    return all.length === 0 ? 0 : all[all.length - 1]!.metadata.sequence_number;
  };
  const snapshots = async () => (await ok('list_snapshots', { limit: 100 }, RESEARCHER)).snapshots as { message: string; author: string; by_agent?: boolean }[];
  const segments = async () =>
    (
      (await ok('list_segments_for_source', { source_id: sourceId }, RESEARCHER)).segments as {
        segment_id: number;
        start_pos: number;
        code_id: number;
        owner: string;
        coder: string;
        coder_role: string | null;
      }[]
    ).sort((a, b) => a.start_pos - b.start_pos);

  before(async () => {
    dir = tmpDir('marginalia-provenance-');
    fs.mkdirSync(path.join(dir, '.marginalia'), { recursive: true });
    fs.writeFileSync(
      path.join(dir, '.marginalia', 'config.yaml'),
      'agent_context:\n  trust:\n    overrides:\n      create_code: auto\n      apply_code: auto\n  rate_limits:\n    requests_per_minute: 100000\n    mutations_per_minute: 100000\n',
    );
    server = await startServer(path.join(dir, 'study.qda'), ['--snapshot-debounce-ms', '0']);
    await ok('initialize_version_control', {}, RESEARCHER);
    sourceId = (await ok('import_text', { name: 'interview-07', content: TEXT }, RESEARCHER)).source_id;
    codeId = (await ok('create_code', { name: 'Belonging' }, RESEARCHER)).code_id;
  });
  after(async () => {
    await server?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('records coder and role on segments, events, audit lines and snapshot authors', async () => {
    const since = await headSeq();
    const before = (await snapshots()).length;
    await ok('apply_code', { code_id: codeId, source_id: sourceId, start_position: 0, end_position: 7 }, RESEARCHER);
    await waitFor('the snapshot of the researcher coding', async () => ((await snapshots()).length > before ? true : undefined));
    const mid = (await snapshots()).length;
    await ok('apply_code', { code_id: codeId, source_id: sourceId, start_position: 8, end_position: 13 }, AGENT);
    await waitFor("the snapshot of the agent's coding", async () => ((await snapshots()).length > mid ? true : undefined));

    // segments: coder and coder_role
    assert.deepEqual(
      (await segments()).map((s) => [s.start_pos, s.owner, s.coder, s.coder_role]),
      [
        [0, RESEARCHER_CODER, RESEARCHER_CODER, 'researcher'],
        [8, 'claude-code', 'claude-code', 'agent'],
      ],
    );

    // events: caused_by.role and coder; the agent's client
    const coded = await events(since, 'coding.segment_coded');
    assert.equal(coded.length, 2);
    assert.equal(coded[0]!.caused_by.role, 'researcher');
    assert.equal(coded[0]!.caused_by.coder, RESEARCHER_CODER);
    assert.equal(coded[0]!.caused_by.client, undefined, 'the researcher has no agent client');
    assert.equal(coded[1]!.caused_by.role, 'agent');
    assert.equal(coded[1]!.caused_by.coder, 'claude-code');
    assert.equal(coded[1]!.caused_by.client, 'claude-code');
    assert.equal(coded[1]!.caused_by.model, 'test-model-7', 'the model the agent stated (X-Marginalia-Model)');
    assert.equal(coded[0]!.caused_by.model, undefined);

    // the audit log: the role and coder of each call
    const lines = fs
      .readFileSync(path.join(dir, '.marginalia', 'audit.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { tool: string; role?: string; coder?: string; model?: string; decision: string });
    const applies = lines.filter((l) => l.tool === 'apply_code' && l.decision !== 'denied');
    assert.deepEqual(
      applies.slice(-2).map((l) => [l.role, l.coder, l.model]),
      [
        ['researcher', RESEARCHER_CODER, undefined],
        ['agent', 'claude-code', 'test-model-7'],
      ],
    );

    // the history: the researcher's snapshot by the researcher's coder name, the agent's as an agent
    const [agentSnap, researcherSnap] = await snapshots();
    assert.equal(researcherSnap!.author, RESEARCHER_CODER);
    assert.equal(researcherSnap!.by_agent, false);
    assert.equal(agentSnap!.author, 'claude-code');
    assert.equal(agentSnap!.by_agent, true);
    assert.ok(!(await snapshots()).some((s) => s.author === 'agent:local'), 'no snapshot is authored agent:local');
  });

  it("a named agent credential's codings are recorded under its name (not its client name or X-Marginalia-User)", async () => {
    const issued = await request(server.base, 'POST', '/agents', { name: 'Coder Bot' }, AS_RESEARCHER);
    assert.equal(issued.status, 201, JSON.stringify(issued.body));
    const token = (issued.body.data ?? issued.body).token as string;
    assert.ok(token, JSON.stringify(issued.body));
    const since = await headSeq();
    const named = { authorization: `Bearer ${token}`, 'x-marginalia-client': 'Cursor', 'x-marginalia-user': 'someone-else' };
    await ok('apply_code', { code_id: codeId, source_id: sourceId, start_position: 23, end_position: 28 }, named);
    const seg = (await segments()).find((s) => s.start_pos === 23);
    assert.deepEqual([seg?.owner, seg?.coder, seg?.coder_role], ['Coder Bot', 'Coder Bot', 'agent']);
    const coded = (await events(since, 'coding.segment_coded'))[0]!;
    assert.deepEqual(
      [coded.caused_by.role, coded.caused_by.coder, coded.caused_by.client, coded.caused_by.user],
      ['agent', 'Coder Bot', 'Cursor', 'Coder Bot'],
    );
  });

  it("an approval decision records the researcher's coder name and role; what the approved call made stays the agent's", async () => {
    const since = await headSeq();
    const asked = await callTool(server.base, 'rename_code', { code_id: codeId, new_name: 'Belonging (place)' }, AGENT);
    assert.equal(asked.status, 202, JSON.stringify(asked.body));
    const requestId = asked.body.data.request_id as string;
    const approved = await request(server.base, 'POST', `/approvals/${requestId}/approve`, {}, RESEARCHER);
    assert.equal(approved.status, 200, JSON.stringify(approved.body));
    const done = (
      (await request(server.base, 'GET', '/approvals?status=completed', undefined, AS_RESEARCHER)).body.data.approvals as {
        request_id: string;
        decided_by_coder: string;
        decided_by_role: string;
      }[]
    ).find((a) => a.request_id === requestId);
    assert.deepEqual([done?.decided_by_coder, done?.decided_by_role], [RESEARCHER_CODER, 'researcher']);
    const status = await ok('get_approval_status', { request_id: requestId }, AGENT);
    assert.deepEqual(
      [status.status, status.decided_by_coder, status.decided_by_role],
      ['completed', RESEARCHER_CODER, 'researcher'],
      'get_approval_status tells the agent who decided',
    );
    const renamed = (await events(since, 'coding.code_renamed'))[0]!;
    assert.deepEqual([renamed.caused_by.role, renamed.caused_by.coder], ['agent', 'claude-code'], 'the rename is the agent action the researcher approved');
    await ok('rename_code', { code_id: codeId, new_name: 'Belonging' }, RESEARCHER);
  });

  it('undo_agent_action over HTTP: refused to agents; refuses, naming the researcher, to delete a created code the researcher coded with since; then undoes', async () => {
    const since = await headSeq();
    const agentCode = (await ok('create_code', { name: 'Scarcity' }, AGENT)).code_id as number;
    await ok('apply_code', { code_id: agentCode, source_id: sourceId, start_position: 61, end_position: 66 }, AGENT);
    const [created] = await events(since, 'coding.code_created');
    assert.equal(created!.caused_by.role, 'agent');
    const correlation = created!.metadata.correlation_id;

    // an agent may not undo (researcher only)
    const refused = await callTool(server.base, 'undo_agent_action', { correlation_id: correlation }, AGENT);
    assert.equal(refused.status, 403);
    assert.equal(refused.body.error_code, 'APPROVAL_FORBIDDEN');

    // the researcher codes with the agent's code: undoing its creation would delete that coding
    const mine = await ok('apply_code', { code_id: agentCode, source_id: sourceId, start_position: 71, end_position: 77 }, RESEARCHER);
    const blocked = await callTool(server.base, 'undo_agent_action', { correlation_id: correlation }, RESEARCHER);
    assert.equal(blocked.status, 409, JSON.stringify(blocked.body));
    assert.equal(blocked.body.error_code, 'NOT_UNDOABLE');
    assert.match(String(blocked.body.error), new RegExp(`${RESEARCHER_CODER} \\(researcher, 1 coding\\)`));
    assert.deepEqual(blocked.body.details.coders, [{ coder: RESEARCHER_CODER, coder_role: 'researcher', codings: 1 }]);
    const codes = (await ok('list_codes', {}, RESEARCHER)).codes as { code_id: number; coder: string; coder_role: string }[];
    const kept = codes.find((c) => c.code_id === agentCode);
    assert.ok(kept, 'the code is still there');
    assert.deepEqual([kept.coder, kept.coder_role], ['claude-code', 'agent']);
    assert.equal((await segments()).filter((s) => s.code_id === agentCode).length, 2, 'nothing changed');

    // once the researcher's coding is gone, the undo removes the agent's code and coding
    await ok('remove_code', { segment_id: mine.segment_id }, RESEARCHER);
    const undone = (await ok('undo_agent_action', { correlation_id: correlation }, RESEARCHER)).undone as { kind: string; id: number }[];
    assert.deepEqual(undone, [{ kind: 'code', id: agentCode }]);
    assert.ok(!((await ok('list_codes', {}, RESEARCHER)).codes as { code_id: number }[]).some((c) => c.code_id === agentCode));
  });

  it('undo_agent_action over REST (POST /commands/coding/undo_agent_action): the researcher undoes an agent coding, the agent is refused', async () => {
    const since = await headSeq();
    const seg = await ok('apply_code', { code_id: codeId, source_id: sourceId, start_position: 23, end_position: 28 }, AGENT);
    const correlation = (await events(since, 'coding.segment_coded'))[0]!.metadata.correlation_id;
    const denied = await request(server.base, 'POST', '/commands/coding/undo_agent_action', { correlation_id: correlation }, AGENT);
    assert.equal(denied.status, 403);
    assert.equal(denied.body.error_code, 'APPROVAL_FORBIDDEN');
    const done = await request(server.base, 'POST', '/commands/coding/undo_agent_action', { correlation_id: correlation }, RESEARCHER);
    assert.equal(done.status, 200, JSON.stringify(done.body));
    assert.deepEqual(done.body.data.undone, [{ kind: 'segment', id: seg.segment_id }]);
    assert.ok(!(await segments()).some((s) => s.segment_id === seg.segment_id));
  });

  it('undo_agent_action over MCP (official SDK client): listed for the researcher, refused to the agent, undoes an agent coding', async () => {
    const since = await headSeq();
    const seg = await ok('apply_code', { code_id: codeId, source_id: sourceId, start_position: 37, end_position: 40 }, AGENT);
    const [coded] = await events(since, 'coding.segment_coded');
    const correlation = coded!.metadata.correlation_id;

    const connect = async (token: string, name: string) => {
      const client = new Client({ name, version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${server.base}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
      );
      return client;
    };
    const agent = await connect(AGENT_TOKEN, 'claude-code');
    const researcher = await connect(REVIEWER_TOKEN, 'researcher-inspector');
    try {
      const listed = await researcher.listTools();
      assert.ok(
        listed.tools.some((t) => t.name === 'undo_agent_action'),
        'the researcher sees undo_agent_action',
      );
      const denied = await agent.callTool({ name: 'undo_agent_action', arguments: { correlation_id: correlation } });
      assert.equal(denied.isError, true);
      assert.match(JSON.stringify(denied.content), /APPROVAL_FORBIDDEN/);
      assert.ok(
        (await segments()).some((s) => s.segment_id === seg.segment_id),
        'the refused call changed nothing',
      );

      const result = await researcher.callTool({ name: 'undo_agent_action', arguments: { correlation_id: correlation } });
      assert.notEqual(result.isError, true, JSON.stringify(result.content));
      assert.match(JSON.stringify(result.structuredContent ?? result.content), new RegExp(`"id":\\s*${seg.segment_id}`));
      assert.ok(!(await segments()).some((s) => s.segment_id === seg.segment_id), 'the agent coding is gone');
      const uncoded = await events(since, 'coding.segment_uncoded');
      assert.equal(uncoded.length, 1);
      assert.equal(uncoded[0]!.caused_by.role, 'researcher', 'the undo is recorded as the researcher');
      assert.equal(uncoded[0]!.caused_by.coder, RESEARCHER_CODER);
    } finally {
      await agent.close();
      await researcher.close();
    }
  });
});
