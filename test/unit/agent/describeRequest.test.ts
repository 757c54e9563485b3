/**
 * src/agent/describeRequest.ts on a real sql.js project: approval requests in words (issue 13, item 8) —
 * names instead of ids, counts for destructive requests, a short passage excerpt, readable unknown ids; and
 * the description an agent's held request stores, lists and emits (approval.requested).
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { AgentContext } from '../../../src/agent/agentContext';
import { describeRequest, MAX_EXCERPT } from '../../../src/agent/describeRequest';
import type { Caller, ToolPipeline } from '../../../src/agent/pipeline';
import { ALL_TOOLS, createPipeline, headlessHost, openProjectHandle, type ProjectHandle } from '../../../src/cli/compose';
import { silentLogger } from '../../../src/core/log';
import type { EventRecord } from '../../../src/domain/events';

const TOKENS = { agent: 'agent-token-for-describe-tests', reviewer: 'reviewer-token-for-describe-tests' };
const TEXT =
  'Interviewer: How did the garden start?\n' +
  'P04: Honestly the workshops were what brought people in, week after week, long before anyone planted a single seed in the beds.\n' +
  'P04: There was tension about the water at first.';

describe('agent/describeRequest: approval requests in words', () => {
  let dir: string;
  let handle: ProjectHandle;
  let agent: AgentContext;
  let pipeline: ToolPipeline;
  let researcher: Caller;
  let events: EventRecord[];
  let ids: { tension: number; conflict: number; empty: number; source: number; category: number; other: number; segment: number };

  const ok = async (name: string, args: unknown, caller: Caller = researcher): Promise<any> => {
    const out = await pipeline.invoke(name, args, caller);
    assert.ok(out.envelope.success, JSON.stringify(out.envelope));
    return (out.envelope as { data: unknown }).data;
  };
  const words = (tool: string, args: unknown): string => {
    const t = ALL_TOOLS.find((x) => x.name === tool);
    assert.ok(t, tool);
    return describeRequest(handle.repo, t, args);
  };
  const span = (needle: string) => {
    const at = Array.from(TEXT.slice(0, TEXT.indexOf(needle))).length;
    return { start_position: at, end_position: at + Array.from(needle).length };
  };

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'marginalia-describe-'));
    handle = await openProjectHandle(path.join(dir, 'p.qda'), { create: true, checkpointIdleMs: 0 });
    // delete_segment (trust category apply_code, notify by default) held for the researcher, so its words are stored
    agent = new AgentContext({
      tools: ALL_TOOLS,
      project: () => handle,
      tokens: TOKENS,
      logger: silentLogger,
      configText: 'agent_context:\n  trust:\n    overrides:\n      delete_segment: suggest\n',
    });
    pipeline = createPipeline({ project: () => handle, host: headlessHost, logger: silentLogger, agent, embeddings: null });
    events = [];
    pipeline.onEvents((e) => events.push(...e));
    researcher = agent.openSession({ authorization: `Bearer ${TOKENS.reviewer}`, client_type: 'REST_CLIENT', client_name: 'researcher' }).caller;

    const category = (await ok('create_category', { name: 'Relations' })).category_id;
    const other = (await ok('create_category', { name: 'Place' })).category_id;
    const tension = (await ok('create_code', { name: 'Tension', category_id: category })).code_id;
    const conflict = (await ok('create_code', { name: 'Conflict', category_id: category })).code_id;
    const empty = (await ok('create_code', { name: 'Unused idea' })).code_id;
    const source = (await ok('add_text_source', { name: 'interview-04', content: TEXT })).source_id;
    const workshops = 'the workshops were what brought people in, week after week, long before anyone planted a single seed in the beds.';
    const applied = await ok('batch_apply_codes', {
      operations: [
        { code_id: tension, source_id: source, ...span(workshops) },
        { code_id: tension, source_id: source, ...span('tension about the water') },
        { code_id: tension, source_id: source, ...span('How did the garden start?') },
        { code_id: conflict, source_id: source, ...span('There was tension') },
      ],
    });
    ids = { tension, conflict, empty, source, category, other, segment: applied.results[0].segment_id };
  });

  afterEach(async () => {
    agent.dispose();
    await handle.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('merge_codes names both codes and the passages that would move', () => {
    assert.equal(words('merge_codes', { source_code_id: ids.tension, target_code_id: ids.conflict }), "merge 'Tension' (3 passages) into 'Conflict'");
    assert.equal(words('merge_codes', { source_code_id: ids.conflict, target_code_id: ids.tension }), "merge 'Conflict' (1 passage) into 'Tension'");
  });

  it('delete_code says how many passages go with it, or that it would be refused', () => {
    assert.equal(words('delete_code', { code_id: ids.tension, delete_segments: true }), "delete 'Tension' and its 3 passages");
    assert.equal(words('delete_code', { code_id: ids.tension }), "delete 'Tension', which codes 3 passages (refused without delete_segments: true)");
    assert.equal(words('delete_code', { code_id: ids.empty }), "delete 'Unused idea' (no passages are coded with it)");
  });

  it('delete_category counts its codes and says where they go', () => {
    assert.equal(
      words('delete_category', { category_id: ids.category, move_codes_to: ids.other }),
      "delete category 'Relations' and move its 2 codes to 'Place'",
    );
    assert.equal(
      words('delete_category', { category_id: ids.category, move_codes_to: null }),
      "delete category 'Relations' and move its 2 codes to the top level",
    );
    assert.equal(words('delete_category', { category_id: ids.category }), "delete category 'Relations', which holds 2 codes (refused without move_codes_to)");
    assert.equal(words('delete_category', { category_id: ids.other }), "delete the empty category 'Place'");
  });

  it('remove_source and erase_source name the source and count its codings', () => {
    assert.equal(words('remove_source', { source_id: ids.source, confirm: true }), "remove source 'interview-04' and its 4 codings");
    assert.equal(
      words('erase_source', { source_id: ids.source, confirm: true }),
      "erase source 'interview-04' and its 4 codings, its text and every trace of it in the history",
    );
  });

  it('the case management tools name the case, the source and the attribute (and on how many cases it is renamed)', async () => {
    const kase = (await ok('create_case', { name: 'P04' })).case_id;
    await ok('set_case_attribute', { case_id: kase, attribute_name: 'Age', value: 61 });
    assert.equal(words('rename_case', { case_id: kase, new_name: 'Participant 4' }), "rename the case 'P04' to 'Participant 4'");
    assert.equal(
      words('remove_source_from_case', { case_id: kase, source_id: ids.source }),
      "take the source 'interview-04' out of the case 'P04' (the source stays)",
    );
    assert.equal(words('remove_case_attribute', { case_id: kase, attribute_name: 'Age' }), "remove 'Age' from the case 'P04'");
    assert.equal(
      words('rename_case_attribute', { attribute_name: 'Age', new_name: 'Age at interview' }),
      "rename the case attribute 'Age' to 'Age at interview' (on 1 case)",
    );
  });

  it('apply_code and delete_segment quote the passage, at most 80 characters', () => {
    const applied = words('apply_code', { code_id: ids.conflict, source_id: ids.source, ...span('tension about the water') });
    assert.equal(applied, "code interview-04 with 'Conflict': 'tension about the water'");
    const removed = words('delete_segment', { segment_id: ids.segment });
    assert.equal(removed, "remove the coding 'Tension' from interview-04: 'the workshops were what brought people in, week after week, long before anyone…'");
    const quote = /: '(.*)'$/u.exec(removed)?.[1] ?? '';
    assert.ok(Array.from(quote).length <= MAX_EXCERPT, `${Array.from(quote).length} code points`);
  });

  it("create_code says when its colour is already another code's; approve_merge reads like the merge", async () => {
    const tensionColour = handle.repo.getCode(ids.tension)!.color;
    assert.equal(
      words('create_code', { name: 'Hope', color: tensionColour.toLowerCase() }),
      `create the code 'Hope' (${tensionColour}, also the colour of 'Tension')`,
    );
    assert.equal(words('create_code', { name: 'Hope', color: '#123456', category_id: ids.other }), "create the code 'Hope' in 'Place' (#123456)");
    assert.equal(words('create_code', { name: 'Hope' }), "create the code 'Hope'");
    const merge = await ok('suggest_merge_codes', { source_code_id: ids.tension, target_code_id: ids.conflict, rationale: 'same idea' });
    assert.equal(words('approve_merge', { merge_suggestion_id: merge.merge_suggestion_id }), "merge 'Tension' (3 passages) into 'Conflict' (as suggested)");
    assert.equal(words('approve_merge', { merge_suggestion_id: 999 }), 'approve merge suggestion 999 (not found)');
  });

  it('an unknown id still reads: "code 999 (not found)"', () => {
    assert.equal(words('merge_codes', { source_code_id: 999, target_code_id: ids.conflict }), "merge code 999 (not found) into 'Conflict'");
    assert.equal(words('delete_code', { code_id: 999, delete_segments: true }), 'delete code 999 (not found)');
    assert.equal(words('delete_segment', { segment_id: 4242 }), 'remove coding 4242 (not found)');
    assert.equal(words('remove_source', { source_id: 77, confirm: true }), 'remove source 77 (not found)');
  });

  it('a tool without its own words: its title and arguments, ids named', () => {
    assert.equal(words('add_source_to_case', { case_id: 5, source_id: ids.source }), "add the source 'interview-04' to case 5 (not found)");
    assert.equal(
      words('suggest_codes_for_range', { source_id: ids.source, start_pos: 0, end_pos: 5, limit: 3 }),
      "suggest codes for a range: source 'interview-04', start pos 0, end pos 5, limit 3",
    );
    assert.equal(words('rename_code', { code_id: 999, new_name: 'Hope' }), "rename code 999 (not found) to 'Hope'");
    assert.equal(words('rename_code', { code_id: ids.empty, new_name: 'Hope' }), "rename the code 'Unused idea' to 'Hope'");
  });

  it('erase_source erases the descriptions that quote its passages (held requests and approval.requested events)', async () => {
    const bot = agent.openSession({ authorization: `Bearer ${TOKENS.agent}`, client_type: 'ASSISTANT_A_CLI', client_name: 'mcp-client' }).caller;
    const quote = 'the workshops were what brought people in';
    await agent.call(bot, 'delete_segment', { segment_id: ids.segment });
    await agent.call(bot, 'merge_codes', { source_code_id: ids.tension, target_code_id: ids.conflict });
    const held = agent.listApprovals('pending');
    assert.equal(held.length, 2);
    assert.ok(
      held.some((r) => r.description.includes(quote)),
      JSON.stringify(held.map((r) => r.description)),
    );
    await ok('erase_source', { source_id: ids.source, confirm: true });
    const after = [...agent.listApprovals('pending'), ...agent.listApprovals('rejected'), ...agent.listApprovals('failed')].map((r) => r.description).sort();
    assert.deepEqual(after, ["merge 'Tension' (3 passages) into 'Conflict'", 'remove the coding: [erased]']);
    const stored = handle.repo
      .listEventsSince(0, 10_000)
      .filter((e) => e.event_type === 'approval.requested')
      .map((e) => e.payload.description);
    assert.deepEqual(stored, ['[erased]', "merge 'Tension' (3 passages) into 'Conflict'"]);
  });

  it("an agent's held merge stores, lists and emits the words, not the ids", async () => {
    const bot = agent.openSession({ authorization: `Bearer ${TOKENS.agent}`, client_type: 'ASSISTANT_A_CLI', client_name: 'mcp-client' }).caller;
    const out = await agent.call(bot, 'merge_codes', { source_code_id: ids.tension, target_code_id: ids.conflict });
    assert.equal(out.status, 'pending', JSON.stringify(out.envelope));
    const [pending] = agent.listApprovals('pending');
    assert.equal(pending?.description, "merge 'Tension' (3 passages) into 'Conflict'");
    const requested = events.find((e) => e.event_type === 'approval.requested');
    assert.equal(requested?.payload.description, "merge 'Tension' (3 passages) into 'Conflict'");
    const listed = await ok('list_pending_approvals', {});
    assert.equal(JSON.stringify(listed).includes("merge 'Tension' (3 passages) into 'Conflict'"), true, JSON.stringify(listed));
    assert.equal(JSON.stringify(listed).includes('source_code_id='), false);
  });

  it('a held destructive request is described from its dry run; one that would fail is never described: it answers its error at once', async () => {
    const bot = agent.openSession({ authorization: `Bearer ${TOKENS.agent}`, client_type: 'ASSISTANT_A_CLI', client_name: 'mcp-client' }).caller;
    const refused = await agent.call(bot, 'delete_category', { category_id: ids.category });
    assert.equal(refused.envelope.success ? 'ok' : refused.envelope.error_code, 'CATEGORY_NOT_EMPTY');
    const held = await agent.call(bot, 'delete_category', { category_id: ids.category, move_codes_to: ids.other });
    assert.equal(held.status, 'pending', JSON.stringify(held.envelope));
    const del = await agent.call(bot, 'delete_code', { code_id: ids.tension, delete_segments: true });
    assert.deepEqual(
      agent.listApprovals('pending').map((a) => a.description),
      ["delete category 'Relations' and move its 2 codes to 'Place'", "delete 'Tension' and its 3 passages"],
    );
    assert.equal(del.status, 'pending');
    // from a dry-run outcome alone (what the events say), whatever the project holds now
    const t = ALL_TOOLS.find((x) => x.name === 'delete_code');
    assert.ok(t);
    const outcome = { data: {}, events: [{ event_type: 'coding.code_deleted', payload: { code_id: 77, name: 'Gone', segment_count: 12 } }] };
    assert.equal(describeRequest(handle.repo, t, { code_id: 77, delete_segments: true }, outcome), "delete 'Gone' and its 12 passages");
  });
});
