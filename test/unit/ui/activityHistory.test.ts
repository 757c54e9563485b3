/**
 * Agent Activity in words and rebuilt from the event log (issue 13, item 8), on a real project file with
 * the real agent layer and HTTP server in-process: an agent (agent token, client "Claude") creates codes,
 * codes passages and asks to merge two codes (held for approval); the researcher (reviewer token, and the
 * UI's session `local`) acts too. rebuildActivity, as after a window reload, lists only the agent's calls,
 * by names and excerpts, with statuses and Undo where undo_agent_action applies.
 */
import assert from 'node:assert/strict';
import type { Caller } from '../../../src/agent/pipeline';
import type { ProjectHandle } from '../../../src/cli/compose';
import { describeCall, rebuildActivity } from '../../../src/ui/activity/activityHistory';
import { startInProcessStack, type InProcessStack } from '../../helpers/inProcessStack';
import { AS_AGENT, AS_RESEARCHER, callTool } from '../../helpers/serverProcess';

const TEXT = 'We felt at home in the garden. Nobody trusted the council after the flood.';
const LOCAL: Caller = { session_id: 'local', client_type: 'LOCAL_UI', client_name: 'vscode', user: 'Ana', researcher: true };
const CLAUDE = { ...AS_AGENT, 'x-marginalia-client': 'Claude' };

describe('ui/activity: Agent Activity in words, rebuilt from the event log', function () {
  this.timeout(60_000);
  let stack: InProcessStack | undefined;
  let handle: ProjectHandle | undefined;
  let agent: InProcessStack['agent'] | undefined;
  let pipeline: InProcessStack['pipeline'];
  let base = '';
  const ids: Record<string, number> = {};

  before(async () => {
    stack = await startInProcessStack('marginalia-activity-');
    ({ handle, agent, pipeline, base } = stack);

    const local = async (tool: string, args: unknown) => {
      const out = await pipeline.invoke(tool, args, LOCAL);
      assert.ok(out.envelope.success, JSON.stringify(out.envelope));
      return out.envelope.data as Record<string, number>;
    };
    ids.source = (await local('add_text_source', { name: 'interview-04', content: TEXT })).source_id!;
    ids.belonging = (await local('create_code', { name: 'Belonging', color: '#4E79A7' })).code_id!;
    // the researcher's own calls, from the UI and with the reviewer token: never agent activity
    await local('create_code', { name: 'Researcher only', color: '#59A14F' });
    assert.equal((await callTool(base, 'create_category', { name: 'Themes' }, AS_RESEARCHER)).status, 200);

    // the agent: a code (its trust level may hold it: approve as the researcher), two codings, a merge request
    const created = await callTool(base, 'create_code', { name: 'Trust', color: '#E15759' }, CLAUDE);
    if (created.body.data.status === 'pending_approval') {
      const ok = await agent.approve(LOCAL, created.body.data.request_id);
      assert.ok(ok.envelope.success, JSON.stringify(ok.envelope));
      ids.trust = (ok.envelope as { data: { result: { code_id: number } } }).data.result.code_id;
    } else ids.trust = created.body.data.code_id;
    const start = TEXT.indexOf('Nobody trusted');
    const coded = await callTool(
      base,
      'batch_apply_codes',
      {
        operations: [
          { code_id: ids.trust, source_id: ids.source, start_position: start, end_position: TEXT.length },
          { code_id: ids.trust, source_id: ids.source, start_position: 0, end_position: 29 },
        ],
      },
      CLAUDE,
    );
    assert.ok(coded.body.success, JSON.stringify(coded.body));
    if (coded.body.data.status === 'pending_approval') assert.ok((await agent.approve(LOCAL, coded.body.data.request_id)).envelope.success);
    const merge = await callTool(base, 'merge_codes', { source_code_id: ids.trust, target_code_id: ids.belonging }, CLAUDE);
    assert.equal(merge.body.data?.status, 'pending_approval', `merge_codes is held (trust level require): ${JSON.stringify(merge.body)} ${merge.status}`);
  });

  after(async () => {
    await stack?.close();
  });

  it("lists only the agent's calls, newest first, by names and excerpts, never bare ids", () => {
    const items = rebuildActivity(handle!.repo);
    const text = items.map((i) => `${i.status} ${i.title} | ${i.description} | ${i.client_name}`);
    assert.ok(items.length >= 3, text.join('\n'));
    for (const i of items) {
      assert.equal(i.client_name, 'Claude', `${i.description}: the agent's name`);
      assert.doesNotMatch(i.description, /_id\b|\bid[= ]\d|code \d+\b/, 'no bare ids');
      assert.doesNotMatch(i.description, /Researcher only|Themes/, "the researcher's own calls are not agent activity");
    }
    const [merge] = items;
    assert.equal(merge!.status, 'PENDING_APPROVAL');
    assert.equal(merge!.title, 'Merge Codes');
    assert.match(merge!.description, /^Merge 'Trust' \(2 passages\) into 'Belonging'/);
    const coding = items.find((i) => /passages/.test(i.description) && i.status === 'COMPLETED');
    assert.ok(coding, text.join('\n'));
    assert.equal(coding.description, "Coded 2 passages with 'Trust' in interview-04");
    assert.equal(coding.undoable, true, 'codings can be undone with undo_agent_action');
    assert.ok(coding.correlation_id);
    const created = items.find((i) => i.description === "Created the code 'Trust'");
    assert.ok(created, text.join('\n'));
  });

  it('after undo_agent_action the item keeps its words and Undo no longer applies; a merged (deleted) code keeps its name', async () => {
    const before = rebuildActivity(handle!.repo).find((i) => i.description.startsWith('Coded 2 passages'))!;
    const undone = await pipeline.invoke('undo_agent_action', { correlation_id: before.correlation_id }, LOCAL);
    assert.ok(undone.envelope.success, JSON.stringify(undone.envelope));
    const after = rebuildActivity(handle!.repo).find((i) => i.id === before.id)!;
    assert.equal(after.undoable, false, 'nothing left to undo');
    assert.equal(after.description, "Coded 2 passages with 'Trust' in interview-04");
    assert.equal(
      rebuildActivity(handle!.repo).some((i) => /Undo an Agent Action/.test(i.title ?? '')),
      false,
      "the researcher's undo is not agent activity",
    );

    // the researcher approves the merge: 'Trust' is gone from the project, its name stays in the activity
    const pending = rebuildActivity(handle!.repo).find((i) => i.status === 'PENDING_APPROVAL')!;
    assert.ok((await agent!.approve(LOCAL, pending.request_id!)).envelope.success);
    assert.equal(handle!.repo.getCode(ids.trust!), undefined);
    const items = rebuildActivity(handle!.repo);
    const merged = items.find((i) => i.id === pending.id)!;
    assert.equal(merged.status, 'COMPLETED');
    assert.equal(merged.description, "Merged the code 'Trust' into 'Belonging'");
    assert.equal(merged.undoable, false, 'a merge cannot be undone by undo_agent_action');
    assert.ok(
      items.some((i) => i.description === "Created the code 'Trust'"),
      'the deleted code is named from its events',
    );
  });

  it('describes a call by names, and replaces a stored description in the developer form', () => {
    const repo = handle!.repo;
    assert.equal(
      describeCall(repo, 'rename_code', JSON.stringify({ code_id: ids.belonging, new_name: 'Home' }), 'Rename Code: code_id=8, new_name="Home"'),
      "Rename the code 'Belonging' to 'Home'",
    );
    assert.equal(describeCall(repo, 'update_code_memo', { code_id: ids.belonging, memo: '' }), "Change the memo of the code 'Belonging' (clear it)");
    assert.equal(describeCall(repo, 'rename_code', {}, "rename the code 'A' to 'B'"), "Rename the code 'A' to 'B'", 'a stored description in words is kept');
  });
});
