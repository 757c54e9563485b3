/**
 * Approval requests in words over HTTP (issue 13, item 8), against the real server on 127.0.0.1: an agent
 * (agent token) asks to merge two codes; GET /approvals with the reviewer token and get_approval_status
 * show both code names and the number of passages the merge would move, never "source_code_id="; a destructive
 * request's words come from its dry run, and one that would fail is refused at once (issue 14 item 5).
 * Needs the built CLI (`npm run build`).
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { AS_AGENT, AS_RESEARCHER, callTool, request, startServer, tmpDir, type ServerProcess } from '../helpers/serverProcess';

const TEXT = 'P04: The workshops brought people in.\nP04: There was tension about the water.\nP07: We argued about the shed for months.';

describe('e2e: approval requests name things (HTTP)', function () {
  this.timeout(60_000);
  let dir: string;
  let server: ServerProcess | undefined;
  let base: string;

  before(async () => {
    dir = tmpDir('marginalia-approval-words-');
    server = await startServer(path.join(dir, 'study.qda'));
    base = server.base;
  });
  after(async () => {
    await server?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const asResearcher = async (name: string, args: Record<string, unknown>): Promise<any> => {
    const r = await callTool(base, name, args, AS_RESEARCHER);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body.data;
  };
  const cp = (needle: string): { start_position: number; end_position: number } => {
    const at = Array.from(TEXT.slice(0, TEXT.indexOf(needle))).length;
    return { start_position: at, end_position: at + Array.from(needle).length };
  };

  it("an agent's merge_codes request reads \"merge 'Tension' (2 passages) into 'Conflict'\" for the reviewer", async () => {
    const tension = (await asResearcher('create_code', { name: 'Tension' })).code_id as number;
    const conflict = (await asResearcher('create_code', { name: 'Conflict' })).code_id as number;
    const source = (await asResearcher('add_text_source', { name: 'interview-04', content: TEXT })).source_id as number;
    await asResearcher('batch_apply_codes', {
      operations: [
        { code_id: tension, source_id: source, ...cp('tension about the water') },
        { code_id: tension, source_id: source, ...cp('We argued about the shed') },
        { code_id: conflict, source_id: source, ...cp('We argued') },
      ],
    });

    const asked = await callTool(base, 'merge_codes', { source_code_id: tension, target_code_id: conflict }, AS_AGENT);
    assert.equal(asked.status, 202, JSON.stringify(asked.body));
    const requestId = asked.body.data.request_id as string;

    const listed = await request(base, 'GET', '/approvals?status=pending', undefined, AS_RESEARCHER);
    assert.equal(listed.status, 200, JSON.stringify(listed.body));
    const mine = (listed.body.data.approvals as { request_id: string; description: string }[]).find((a) => a.request_id === requestId);
    assert.ok(mine, JSON.stringify(listed.body));
    assert.equal(mine.description, "merge 'Tension' (2 passages) into 'Conflict'");
    assert.doesNotMatch(JSON.stringify(listed.body.data.approvals.map((a: { description: string }) => a.description)), /_id=/);

    const status = await callTool(base, 'get_approval_status', { request_id: requestId }, AS_AGENT);
    assert.equal(status.status, 200, JSON.stringify(status.body));
    assert.match(JSON.stringify(status.body.data), /merge 'Tension' \(2 passages\) into 'Conflict'/);

    // nothing ran: both codes and their passages are as they were
    const codes = (await asResearcher('list_codes', {})).codes as { name: string; segment_count: number }[];
    assert.deepEqual(codes.map((c) => [c.name, c.segment_count]).sort(), [
      ['Conflict', 1],
      ['Tension', 2],
    ]);
  });

  it('a destructive request says what its dry run did: "delete \'Conflict\' and its 1 passage"; one that would fail is refused at once and never reaches the researcher', async () => {
    const codes = (await asResearcher('list_codes', {})).codes as { code_id: number; name: string }[];
    const conflict = codes.find((c) => c.name === 'Conflict')?.code_id as number;
    const refused = await callTool(base, 'delete_code', { code_id: conflict }, AS_AGENT);
    assert.deepEqual([refused.status, refused.body.error_code], [409, 'CODE_HAS_SEGMENTS'], JSON.stringify(refused.body));
    const asked = await callTool(base, 'delete_code', { code_id: conflict, delete_segments: true }, AS_AGENT);
    assert.equal(asked.status, 202, JSON.stringify(asked.body));
    const listed = await request(base, 'GET', '/approvals?status=pending', undefined, AS_RESEARCHER);
    const descriptions = (listed.body.data.approvals as { tool: string; description: string }[])
      .filter((a) => a.tool === 'delete_code')
      .map((a) => a.description);
    assert.deepEqual(descriptions, ["delete 'Conflict' and its 1 passage"]);
    // the dry run left the code and its passage where they were
    const after = (await asResearcher('list_codes', {})).codes as { name: string; segment_count: number }[];
    assert.deepEqual(after.map((c) => [c.name, c.segment_count]).sort(), [
      ['Conflict', 1],
      ['Tension', 2],
    ]);
  });
});
