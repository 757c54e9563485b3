/**
 * End-to-end test of the memo tools of issue 13, item 6 (update_case_memo, update_project_briefing) over HTTP
 * against the real built CLI (`bin/marginalia.js serve`; run `npm run build` first), and of the briefing they
 * feed: `qda://project/briefing` read with the official MCP client (@modelcontextprotocol/client) over the
 * server's Streamable HTTP endpoint. One server for the file; the `it` blocks run in order and build on each other.
 *
 * Covered: update_case_memo sets and clears a case memo (case.updated events); update_project_briefing stores
 * the research frame field by field (project.briefing_updated events) and the briefing resource returns it,
 * the stored value winning over `.marginalia/project.yaml` field by field while fields never saved still come
 * from the file; texts kept byte for byte; the error codes with their HTTP statuses (CASE_NOT_FOUND 404,
 * INVALID_ARGUMENTS 400 for a missing memo, no field, an empty question, a question that is not text), each
 * failure writing nothing; an agent's update_project_briefing refused with APPROVAL_FORBIDDEN (403) and never
 * queued, an agent's update_case_memo run at the memo trust level (auto) like update_memo; the stored frame
 * survives a server restart (journal and checkpoint); the researcher's undo and redo take back a case memo and a
 * briefing save (a field saved for the first time falls back to the file again).
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { AGENT_TOKEN, AS_AGENT, callTool, RESEARCHER_CODER, startServer, tmpDir, type ServerProcess } from '../helpers/serverProcess';
import { toolClient } from '../helpers/toolClient';

const UNKNOWN = 987654;

describe('memo tools over HTTP (real CLI)', function () {
  this.timeout(120_000);
  let server: ServerProcess | undefined;
  let base = '';
  let project = '';
  const t = toolClient(() => base);
  let caseId = 0;

  /** qda://project/briefing read with the official MCP client, as an agent. */
  async function briefing(): Promise<any> {
    const client = new Client({ name: 'memo-e2e', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${AGENT_TOKEN}` } } }));
    try {
      const r = await client.readResource({ uri: 'qda://project/briefing' });
      const content = r.contents[0] as { uri: string; text: string };
      assert.equal(content.uri, 'qda://project/briefing');
      return JSON.parse(content.text);
    } finally {
      await client.close();
    }
  }

  const cases = async () => (await t.ok('list_cases')).cases;

  before(async () => {
    const dir = tmpDir('marginalia-memos-e2e-');
    project = path.join(dir, 'study.qda');
    // an existing project's research frame in the file beside it
    fs.mkdirSync(path.join(dir, '.marginalia'), { recursive: true });
    fs.writeFileSync(
      path.join(dir, '.marginalia', 'project.yaml'),
      'description: Gardens in the city (from the file)\nresearch_questions:\n  - Why do people stay?\nmethodology: Thematic analysis (from the file)\n',
    );
    server = await startServer(project);
    base = server.base;
    caseId = (await t.ok('create_case', { name: 'Participant A' })).case_id;
  });

  after(async () => {
    await server?.stop();
  });

  it('before any save the briefing reports the frame of .marginalia/project.yaml', async () => {
    const b = await briefing();
    assert.deepEqual(
      [b.description, b.research_questions, b.methodology],
      ['Gardens in the city (from the file)', ['Why do people stay?'], 'Thematic analysis (from the file)'],
    );
  });

  it('update_case_memo sets and clears a case memo for the researcher; case.updated events', async () => {
    const seq = await t.headSeq();
    const memo = 'Retired teacher, **joined 2019**.\r\nTalks about \u{1F345} a lot.';
    assert.deepEqual(await t.ok('update_case_memo', { case_id: caseId, memo }), { case_id: caseId, name: 'Participant A', old_memo: null, new_memo: memo });
    assert.equal((await cases()).find((c: any) => c.case_id === caseId).memo, memo, 'stored byte for byte');
    assert.deepEqual(await t.ok('update_case_memo', { case_id: caseId, memo: '' }), { case_id: caseId, name: 'Participant A', old_memo: memo, new_memo: null });
    assert.equal((await cases()).find((c: any) => c.case_id === caseId).memo, null);
    const events = await t.events(seq);
    assert.deepEqual(
      events.map((e) => [e.event_type, e.aggregate_type, e.aggregate_id, e.payload]),
      [
        ['case.updated', 'case', String(caseId), { case_id: caseId, name: 'Participant A', field: 'memo', old_value: null, new_value: memo }],
        ['case.updated', 'case', String(caseId), { case_id: caseId, name: 'Participant A', field: 'memo', old_value: memo, new_value: null }],
      ],
    );
  });

  it('update_project_briefing stores the fields given; the briefing returns them, the file filling the fields never saved', async () => {
    const seq = await t.headSeq();
    const description = 'How community gardens make neighbours.\n\nSecond paragraph with *emphasis*.';
    const r = await t.ok('update_project_briefing', { description, research_questions: ['How do gardens build trust?', 'Who stays, and why?'] });
    assert.equal(r.description, description);
    assert.deepEqual(r.research_questions, ['How do gardens build trust?', 'Who stays, and why?']);
    assert.equal(r.methodology, undefined, 'never saved');
    assert.equal(r.updated_by, RESEARCHER_CODER, "the researcher's coder name (MARGINALIA_CODER), not the client's name");
    const b = await briefing();
    assert.equal(b.description, description, 'the stored description wins over the file');
    assert.deepEqual(b.research_questions, ['How do gardens build trust?', 'Who stays, and why?']);
    assert.equal(b.methodology, 'Thematic analysis (from the file)', 'a field never saved still comes from the file');
    assert.equal(b.project_name, 'study');
    const events = await t.events(seq);
    assert.deepEqual(
      events.map((e) => [e.event_type, e.aggregate_type, e.aggregate_id, e.payload]),
      [
        [
          'project.briefing_updated',
          'project',
          'briefing',
          {
            changed: ['description', 'research_questions'],
            old: { description: null, research_questions: null },
            new: { description, research_questions: ['How do gardens build trust?', 'Who stays, and why?'] },
          },
        ],
      ],
    );
    // a second save of one field keeps the others
    await t.ok('update_project_briefing', { methodology: '' });
    const again = await briefing();
    assert.deepEqual(
      [again.description, again.research_questions.length, again.methodology],
      [description, 2, ''],
      'an empty saved methodology hides the file',
    );
  });

  it('errors: unknown case, missing memo, no field, an empty or non-text question; each writes nothing', async () => {
    const snapshot = async () => ({ cases: await cases(), briefing: await briefing() });
    const failsCleanly = (name: string, args: Record<string, unknown>, code: string) =>
      t.writesNothing(snapshot, () => t.fails(name, args, code), `${name} ${code}`);
    await failsCleanly('update_case_memo', { case_id: UNKNOWN, memo: 'x' }, 'CASE_NOT_FOUND');
    await failsCleanly('update_case_memo', { case_id: caseId }, 'INVALID_ARGUMENTS');
    await failsCleanly('update_project_briefing', {}, 'INVALID_ARGUMENTS');
    await failsCleanly('update_project_briefing', { research_questions: ['Fine?', '   '] }, 'INVALID_ARGUMENTS');
    await failsCleanly('update_project_briefing', { research_questions: ['Fine?', 42] }, 'INVALID_ARGUMENTS');
    await failsCleanly('update_project_briefing', { research_questions: 'one question, not a list' }, 'INVALID_ARGUMENTS');
    const none = await t.fails('update_project_briefing', {}, 'INVALID_ARGUMENTS');
    assert.match(none.error, /description, research_questions, methodology/);
  });

  it("an agent's update_project_briefing is refused with APPROVAL_FORBIDDEN (403) and never queued; its update_case_memo runs (memo: auto)", async () => {
    await t.ok('list_cases', {}, AS_AGENT); // the agent's session exists (its session.connected is stored)
    const before = await briefing();
    const seq = await t.headSeq();
    const refused = await t.fails('update_project_briefing', { description: 'An agent rewrites the study' }, 'APPROVAL_FORBIDDEN', AS_AGENT);
    assert.match(refused.error, /researcher/i);
    assert.equal(await t.headSeq(), seq, 'a refused call stores no event');
    const pending = (await callTool(base, 'list_pending_approvals', {})).body.data;
    assert.equal(pending.approvals.length, 0, 'nothing queued for approval');
    assert.deepEqual(await briefing(), before, 'the briefing is as it was');
    const byAgent = await t.ok('update_case_memo', { case_id: caseId, memo: 'Seen by the agent' }, AS_AGENT);
    assert.equal(byAgent.new_memo, 'Seen by the agent');
    const events = await t.events(seq, 'case.*');
    assert.deepEqual(
      events.map((e) => [e.event_type, e.caused_by.session_id === 'local']),
      [['case.updated', false]],
    );
  });

  it("the researcher's undo takes back a case memo and a briefing save (a field first saved falls back to the file again)", async () => {
    await t.ok('update_case_memo', { case_id: caseId, memo: 'The researcher rewrote it' });
    const first = (await t.ok('undo', {})).undone;
    assert.equal(first.description, "changed the memo of the case 'Participant A'");
    assert.equal((await cases()).find((c: any) => c.case_id === caseId).memo, 'Seen by the agent', "back to the agent's memo");
    // the researcher's action before it: methodology saved as "" (first save of that field)
    const second = (await t.ok('undo', {})).undone;
    assert.equal(second.description, 'changed the project briefing (methodology)');
    const b = await briefing();
    assert.equal(b.methodology, 'Thematic analysis (from the file)', 'never saved again: the file gives it');
    assert.deepEqual(b.research_questions, ['How do gardens build trust?', 'Who stays, and why?'], 'the other fields keep their saved values');
    // redo stores it again
    assert.equal((await t.ok('redo', {})).redone.description, 'changed the project briefing (methodology)');
    assert.equal((await briefing()).methodology, '');
  });

  it('the stored frame survives a restart of the server', async () => {
    const before = await briefing();
    await server?.stop();
    server = await startServer(project);
    base = server.base;
    const after = await briefing();
    assert.deepEqual([after.description, after.research_questions, after.methodology], [before.description, before.research_questions, before.methodology]);
  });
});
