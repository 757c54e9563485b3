/**
 * Held calls are real proposals (issue 14, items 5 and 6; issue 13, item 8), in process on real sql.js
 * projects with a fake clock: before an agent's call is queued for approval it runs as a dry run in a
 * transaction that is always rolled back, so a call that would fail answers at once with its own error and
 * nothing (no request, no event, no journal line, no row) is left; the request's words count what the dry
 * run did; get_approval_status long-polls with wait_ms and polling one's own request at the advised pace
 * never spends the rate budget; deciding suggestions is the researcher's alone.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { AgentContext } from '../../../src/agent/agentContext';
import { dryRunMode, type Caller, type InvokeOutcome, type ToolPipeline } from '../../../src/agent/pipeline';
import { ALL_TOOLS, createPipeline, headlessHost, openProjectHandle, type ProjectHandle } from '../../../src/cli/compose';
import { silentLogger } from '../../../src/core/log';
import type { EventRecord } from '../../../src/domain/events';
import { journalPath } from '../../../src/store/projectStore';
import { StoreDumpAccess } from '../../../src/store/dumpAccess';
import { SqlProjectRepository } from '../../../src/store/sqlRepository';

const TOKENS = { agent: 'agent-token-for-held-calls', reviewer: 'reviewer-token-for-held-calls' };
const TEXT = 'P04: The workshops brought people in.\nP04: There was tension about the water.\nP07: We argued about the shed for months.';

/** Code points [start, end) of `needle` in TEXT, as the tools' position arguments. */
function cp(needle: string): { start_position: number; end_position: number } {
  const at = Array.from(TEXT.slice(0, TEXT.indexOf(needle))).length;
  return { start_position: at, end_position: at + Array.from(needle).length };
}

describe('agent/held calls: dry run before queueing, long poll, free polls', () => {
  let dir: string;
  let handle: ProjectHandle;
  let agent: AgentContext;
  let pipeline: ToolPipeline;
  let published: EventRecord[];
  const clock = {
    t: Date.UTC(2026, 10, 26, 10, 0, 0, 0),
    now(): number {
      return this.t;
    },
  };

  async function open(configText?: string): Promise<void> {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'marginalia-held-'));
    handle = await openProjectHandle(path.join(dir, 'study.qda'), { create: true, checkpointIdleMs: 0 });
    agent = new AgentContext({ tools: ALL_TOOLS, project: () => handle, tokens: TOKENS, clock, logger: silentLogger, configText });
    pipeline = createPipeline({ project: () => handle, host: headlessHost, logger: silentLogger, clock, agent, embeddings: null });
    published = [];
    pipeline.onEvents((e) => published.push(...e));
  }

  afterEach(async () => {
    agent.dispose();
    await handle.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const bot = (): Caller => agent.openSession({ authorization: `Bearer ${TOKENS.agent}`, client_type: 'ASSISTANT_A_CLI', client_name: 'bot' }).caller;
  const researcher = (): Caller =>
    agent.openSession({ authorization: `Bearer ${TOKENS.reviewer}`, client_type: 'REST_CLIENT', client_name: 'researcher' }).caller;
  const data = (o: InvokeOutcome): any => (o.envelope.success ? o.envelope.data : assert.fail(JSON.stringify(o.envelope)));
  const errorCode = (o: InvokeOutcome): string => (o.envelope.success ? `ok: ${JSON.stringify(o.envelope.data)}` : o.envelope.error_code);

  /** Two codes (Tension: 2 passages, Conflict: 1) in one source, made by the researcher. */
  async function study(): Promise<{ tension: number; conflict: number; source: number; me: Caller }> {
    const me = researcher();
    const tension = data(await agent.call(me, 'create_code', { name: 'Tension' })).code_id as number;
    const conflict = data(await agent.call(me, 'create_code', { name: 'Conflict' })).code_id as number;
    const source = data(await agent.call(me, 'add_text_source', { name: 'interview-04', content: TEXT })).source_id as number;
    data(
      await agent.call(me, 'batch_apply_codes', {
        operations: [
          { code_id: tension, source_id: source, ...cp('tension about the water') },
          { code_id: tension, source_id: source, ...cp('We argued about the shed') },
          { code_id: conflict, source_id: source, ...cp('We argued') },
        ],
      }),
    );
    return { tension, conflict, source, me };
  }

  /** Everything a refused call must leave as it was: every table's rows, and the project file and journal bytes. */
  function state(): { rows: string; file: Buffer; journal: Buffer } {
    const dump = new StoreDumpAccess(handle.store);
    const rows = JSON.stringify(dump.tables().map((t) => [t.name, dump.readRows(t.name)]));
    return { rows, file: fs.readFileSync(handle.path), journal: fs.readFileSync(journalPath(handle.path)) };
  }

  it('store.dryRun: writes inside are seen there and undone after, nothing is journaled, no commit hook runs, the codebook cache forgets them', async () => {
    await open();
    const repo = new SqlProjectRepository(handle.store);
    let commits = 0;
    handle.store.onDidCommit(() => void commits++);
    const before = state();
    const generation = handle.store.writeGeneration;
    const ghost = { name: 'Ghost', color: '#000000', memo: null, category_id: null };
    const stamp = { owner: 'tester', session_id: 'test', now: '2026-11-26T10:00:00.000Z' };
    assert.deepEqual(repo.listCodes(), [], 'the codebook is cached empty');
    const seen = handle.store.dryRun(() => {
      repo.insertCode(ghost, 'ghost', stamp);
      return repo.listCodes().map((c) => c.name);
    });
    assert.deepEqual(seen, ['Ghost'], 'the dry run sees its own write');
    assert.deepEqual(repo.listCodes(), [], 'the cached codebook of the dry run is not served after it');
    assert.ok(handle.store.writeGeneration > generation);
    assert.equal(commits, 0);
    assert.equal(handle.store.inTransaction, false);
    assert.deepEqual(state(), before);
    // an error inside propagates, after the rollback
    assert.throws(
      () =>
        handle.store.dryRun(() => {
          repo.insertCode(ghost, 'ghost', stamp);
          throw new Error('boom');
        }),
      /boom/,
    );
    assert.deepEqual(state(), before);
    // never inside a transaction: the outer transaction's writes would be undone
    assert.throws(() => handle.store.transaction(() => handle.store.dryRun(() => 1)), /inside a transaction/);
  });

  it('create_code with an existing name, rename_code of 999999, merge_codes 4 -> 4: each answers its own error at once, queues nothing and leaves every byte as it was', async () => {
    await open();
    const { tension } = await study();
    const agentSession = bot();
    const before = state();
    const seq = published.length;
    const cases: [string, Record<string, unknown>, string][] = [
      ['create_code', { name: 'tension' }, 'DUPLICATE_NAME'],
      ['rename_code', { code_id: 999999, new_name: 'Anything' }, 'CODE_NOT_FOUND'],
      ['merge_codes', { source_code_id: tension, target_code_id: tension }, 'MERGE_SAME_CODE'],
      ['delete_code', { code_id: tension }, 'CODE_HAS_SEGMENTS'],
      ['rename_code', { code_id: tension, new_name: 'Conflict' }, 'DUPLICATE_NAME'],
    ];
    for (const [tool, args, code] of cases) {
      const out = await agent.call(agentSession, tool, args);
      assert.equal(out.status, 'failed', `${tool}: ${JSON.stringify(out.envelope)}`);
      assert.equal(errorCode(out), code, tool);
    }
    assert.deepEqual(agent.listApprovals(), [], 'nothing was queued');
    assert.deepEqual(published.slice(seq), [], 'no event was published');
    assert.deepEqual(state(), before, 'rows, project file and journal are byte for byte as they were');
  });

  it('a call that would succeed waits (202 data with poll_after_ms), and its words count what the dry run did', async () => {
    await open();
    const { tension, conflict } = await study();
    const agentSession = bot();
    const before = state().rows;
    const merge = await agent.call(agentSession, 'merge_codes', { source_code_id: tension, target_code_id: conflict });
    assert.equal(merge.status, 'pending', JSON.stringify(merge.envelope));
    const held = data(merge);
    assert.equal(held.status, 'pending_approval');
    assert.equal(held.poll_after_ms, 2000);
    assert.match(held.message, /every 2000 ms/);
    assert.deepEqual(
      merge.events.map((e) => e.event_type),
      ['approval.requested'],
      'the dry run raised nothing that was stored or published',
    );
    const del = data(await agent.call(agentSession, 'delete_code', { code_id: conflict, delete_segments: true }));
    const words = Object.fromEntries(agent.listApprovals('pending').map((a) => [a.request_id, a.description]));
    assert.equal(words[held.request_id], "merge 'Tension' (2 passages) into 'Conflict'");
    assert.equal(words[del.request_id], "delete 'Conflict' and its 1 passage");
    // the project is as it was but for the two requests
    const dump = new StoreDumpAccess(handle.store);
    const rowsNow = JSON.parse(state().rows) as [string, unknown[]][];
    const rowsBefore = JSON.parse(before) as [string, unknown[]][];
    for (const [i, [table, rows]] of rowsNow.entries()) {
      if (table === 'approval_requests' || table === 'events') continue;
      assert.deepEqual(rows, rowsBefore[i]?.[1], table);
    }
    assert.equal(dump.readRows('approval_requests').length, 2);

    // a merge whose source already codes a passage of the target: the dry run counts the duplicate dropped
    const me = researcher();
    const source = handle.repo.listSources()[0]?.source_id as number;
    const a = data(await agent.call(me, 'create_code', { name: 'Argument' })).code_id as number;
    data(await agent.call(me, 'apply_code', { code_id: a, source_id: source, ...cp('We argued') }));
    const twice = data(await agent.call(agentSession, 'merge_codes', { source_code_id: a, target_code_id: conflict }));
    const described = agent.listApprovals('pending').find((r) => r.request_id === twice.request_id)?.description;
    assert.equal(described, "merge 'Argument' (1 passage) into 'Conflict'; 1 passage already coded with 'Conflict' is dropped");

    // approved, the merge does what it said
    const approved = await agent.approve(me, held.request_id);
    assert.equal(approved.status, 'ok', JSON.stringify(approved.envelope));
    assert.equal(handle.repo.getCode(tension), undefined);
  });

  it('dry-run modes: tools working outside the database are only validated (a missing file answers at once), reads are never dry-run', async () => {
    await open();
    const byName = new Map(ALL_TOOLS.map((t) => [t.name, t]));
    const mode = (name: string): string => dryRunMode(byName.get(name) as never);
    assert.deepEqual(
      [
        'create_code',
        'merge_codes',
        'batch_apply_codes',
        'import_file_source',
        'import_data',
        'import_analytics',
        'restore_snapshot',
        'export_report',
        'get_approval_status',
      ].map(mode),
      ['full', 'full', 'full', 'validate', 'validate', 'validate', 'validate', 'validate', 'none'],
    );
    const agentSession = bot();
    const missing = path.join(dir, 'no-such-interview.txt');
    const refused = await agent.call(agentSession, 'import_file_source', { file_path: missing });
    assert.equal(errorCode(refused), 'SOURCE_IMPORT_FAILED');
    assert.match(refused.envelope.success ? '' : refused.envelope.error, /no file at/);
    const analytics = await agent.call(agentSession, 'import_analytics', { source_path: path.join(dir, 'none.ndjson') });
    assert.equal(errorCode(analytics), 'ANALYTICS_NOT_IMPORTED/FILE_NOT_FOUND');
    assert.deepEqual(agent.listApprovals(), []);
    const file = path.join(dir, 'interview-07.txt');
    fs.writeFileSync(file, TEXT);
    const held = await agent.call(agentSession, 'import_file_source', { file_path: file });
    assert.equal(held.status, 'pending', JSON.stringify(held.envelope));
    assert.deepEqual(handle.repo.listSources(), [], 'validated, not imported');
  });

  it('get_approval_status wait_ms answers as soon as the researcher decides; a decided request answers at once', async () => {
    await open();
    const agentSession = bot();
    const held = data(await agent.call(agentSession, 'create_code', { name: 'Hope' }));
    let settled = false;
    const polling = agent.call(agentSession, 'get_approval_status', { request_id: held.request_id, wait_ms: 30_000 }).then((o) => {
      settled = true;
      return o;
    });
    await new Promise((r) => setImmediate(r));
    assert.equal(settled, false, 'waits while the request is pending');
    const approved = await agent.approve(researcher(), held.request_id);
    assert.equal(approved.status, 'ok', JSON.stringify(approved.envelope));
    const answer = data(await polling);
    assert.deepEqual([answer.status, answer.decision, answer.result.name], ['completed', 'approved', 'Hope']);
    const again = data(await agent.call(agentSession, 'get_approval_status', { request_id: held.request_id, wait_ms: 30_000 }));
    assert.equal(again.status, 'completed');
    const tooLong = await agent.call(agentSession, 'get_approval_status', { request_id: held.request_id, wait_ms: 30_001 });
    assert.equal(errorCode(tooLong), 'INVALID_ARGUMENTS');
  });

  it("polling one's own request 100 times at the advised pace never spends the rate budget; faster polls and others' requests do", async () => {
    await open('agent_context:\n  rate_limits:\n    requests_per_minute: 10\n');
    const agentSession = bot();
    const held = data(await agent.call(agentSession, 'create_code', { name: 'Hope' }));
    for (let i = 0; i < 100; i++) {
      clock.t += held.poll_after_ms as number;
      const out = await agent.call(agentSession, 'get_approval_status', { request_id: held.request_id });
      assert.equal(out.status, 'ok', `poll ${i}: ${JSON.stringify(out.envelope)}`);
    }
    // the budget is whole (the create_code's count left the window long ago): 10 calls this minute, the 11th refused
    for (let i = 0; i < 10; i++) assert.equal((await agent.call(agentSession, 'list_codes', {})).status, 'ok', `call ${i}`);
    assert.equal(errorCode(await agent.call(agentSession, 'list_codes', {})), 'RATE_LIMITED');

    // polls faster than the advised pace are counted like any call
    clock.t += 60_000;
    const fast: string[] = [];
    for (let i = 0; i < 12; i++) fast.push((await agent.call(agentSession, 'get_approval_status', { request_id: held.request_id })).status);
    assert.deepEqual(fast, [...Array(11).fill('ok'), 'failed'], 'the first is free, ten are counted, the twelfth is refused');

    // another agent's request (another credential) is not its own
    clock.t += 60_000;
    const other = agent.openSession({
      authorization: `Bearer ${agent.credentials.issue('Other').token}`,
      client_type: 'ASSISTANT_B_CLI',
      client_name: 'other',
    }).caller;
    const theirs = data(await agent.call(other, 'create_code', { name: 'Trust' }));
    const snoop: string[] = [];
    for (let i = 0; i < 11; i++) {
      clock.t += 2000;
      snoop.push((await agent.call(agentSession, 'get_approval_status', { request_id: theirs.request_id })).status);
    }
    assert.deepEqual(snoop, [...Array(10).fill('ok'), 'failed']);
  });

  it('entity versions count each change of a code, category, source and text segment (migration 13 triggers), null once deleted', async () => {
    await open();
    const { tension, source, me } = await study();
    const segment = handle.repo.listSegmentsForSource(source)[0]?.segment_id as number;
    const category = data(await agent.call(me, 'create_category', { name: 'Feelings' })).category_id as number;
    const refs = [
      { kind: 'code' as const, id: tension },
      { kind: 'category' as const, id: category },
      { kind: 'source' as const, id: source },
      { kind: 'segment' as const, id: segment },
    ];
    const versions = () => handle.repo.entityVersions(refs).map((v) => v.version);
    assert.deepEqual(versions(), [1, 1, 1, 1]);
    data(await agent.call(me, 'rename_code', { code_id: tension, new_name: 'Strain' }));
    data(await agent.call(me, 'move_code_to_category', { code_id: tension, category_id: category }));
    data(await agent.call(me, 'rename_category', { category_id: category, new_name: 'Emotions' }));
    data(await agent.call(me, 'rename_source', { source_id: source, new_name: 'interview-04b' }));
    data(await agent.call(me, 'update_segment_memo', { segment_id: segment, memo: 'a turning point' }));
    assert.deepEqual(versions(), [3, 2, 2, 2]);
    assert.deepEqual(
      handle.repo.entityVersions(refs).map((v) => v.name),
      ['Strain', 'Emotions', 'interview-04b', null],
    );
    data(await agent.call(me, 'delete_segment', { segment_id: segment }));
    assert.deepEqual(versions(), [3, 2, 2, null]);
  });

  it('approving a held rename after the researcher renamed the code is VERSION_CONFLICT naming what changed and by whom; the request waits for an edited approval or a rejection', async () => {
    await open();
    const { conflict, tension, me } = await study();
    const agentSession = bot();
    const held = data(await agent.call(agentSession, 'rename_code', { code_id: conflict, new_name: 'Dispute' }));
    const gone = data(await agent.call(agentSession, 'update_code_memo', { code_id: tension, memo: 'strained relations' }));
    data(await agent.call(me, 'rename_code', { code_id: conflict, new_name: 'Disagreement' }));
    data(await agent.call(me, 'delete_code', { code_id: tension, delete_segments: true }));

    const refused = await agent.approve(me, held.request_id);
    assert.equal(errorCode(refused), 'VERSION_CONFLICT');
    const env = refused.envelope as {
      error: string;
      details: {
        changes: {
          kind: string;
          id: number;
          name: string;
          read_version: number;
          version: number | null;
          changed_by: { user: string; event_type: string } | null;
        }[];
      };
    };
    assert.match(env.error, /code 'Disagreement' changed \(version 1 -> 2: coding\.code_renamed\) by researcher \(REST_CLIENT\)/);
    assert.deepEqual(
      env.details.changes.map((c) => [c.kind, c.id, c.name, c.read_version, c.version, c.changed_by?.user]),
      [['code', conflict, 'Disagreement', 1, 2, 'researcher']],
    );
    assert.equal(handle.repo.getCode(conflict)?.name, 'Disagreement', "the researcher's newer name stays");
    assert.equal(agent.listApprovals('pending').length, 2, 'both requests still wait');

    const deleted = await agent.approve(me, gone.request_id);
    assert.equal(errorCode(deleted), 'VERSION_CONFLICT');
    assert.match((deleted.envelope as { error: string }).error, /code \d+ was deleted by researcher/);
    assert.equal(agent.reject(me, gone.request_id, 'the code is gone').status, 'ok');

    // the researcher may still approve the call edited (as the project is now)
    const edited = await agent.approve(me, held.request_id, { code_id: conflict, new_name: 'Dispute' });
    assert.equal(edited.status, 'ok', JSON.stringify(edited.envelope));
    assert.equal(handle.repo.getCode(conflict)?.name, 'Dispute');
  });

  it('a text segment modified meanwhile is last write wins; one deleted meanwhile is VERSION_CONFLICT', async () => {
    await open('agent_context:\n  trust:\n    overrides:\n      update_segment_memo: suggest\n');
    const { source, me } = await study();
    const [first, second] = handle.repo.listSegmentsForSource(source).map((x) => x.segment_id);
    const agentSession = bot();
    const memo = data(await agent.call(agentSession, 'update_segment_memo', { segment_id: first, memo: "the agent's reading" }));
    data(await agent.call(me, 'update_segment_memo', { segment_id: first, memo: "the researcher's reading" }));
    assert.equal((await agent.approve(me, memo.request_id)).status, 'ok', 'last write wins');
    assert.equal(handle.repo.getSegment(first as number)?.memo, "the agent's reading");

    const late = data(await agent.call(agentSession, 'update_segment_memo', { segment_id: second, memo: 'too late' }));
    data(await agent.call(me, 'delete_segment', { segment_id: second }));
    const refused = await agent.approve(me, late.request_id);
    assert.equal(errorCode(refused), 'VERSION_CONFLICT');
    assert.match((refused.envelope as { error: string }).error, new RegExp(`segment ${second} was deleted by researcher`));
  });

  it('every approval-deciding tool called by an agent answers APPROVAL_FORBIDDEN and queues nothing; the researcher decides what they suggested', async () => {
    await open();
    const { tension, conflict, source, me } = await study();
    const agentSession = bot();
    const code = data(await agent.call(agentSession, 'suggest_new_code', { name: 'Belonging', rationale: 'it recurs' }));
    const coding = data(await agent.call(agentSession, 'suggest_code_application', { source_id: source, code_id: tension, start_pos: 0, end_pos: 3 }));
    const merge = data(await agent.call(agentSession, 'suggest_merge_codes', { source_code_id: tension, target_code_id: conflict, rationale: 'same' }));
    const batch = data(
      await agent.call(agentSession, 'suggest_batch_coding', {
        code_id: conflict,
        segments: [{ source_id: source, start_pos: 5, end_pos: 9 }],
        rationale: 'routine',
      }),
    );
    const calls: [string, Record<string, unknown>][] = [
      ['approve_suggestion', { suggestion_id: code.suggestion_id }],
      ['approve_coding_suggestion', { suggestion_id: coding.suggestion_id }],
      ['approve_merge', { merge_suggestion_id: merge.merge_suggestion_id }],
      ['reject_coding_suggestion', { suggestion_id: coding.suggestion_id, reason: 'no' }],
      ['approve_batch_coding', { batch_id: batch.batch_id }],
      ['respond_to_code_suggestion', { suggestion_batch_id: batch.batch_id, response: 'accept' }],
    ];
    for (const [tool, args] of calls) assert.equal(errorCode(await agent.call(agentSession, tool, args)), 'APPROVAL_FORBIDDEN', tool);
    assert.deepEqual(agent.listApprovals(), [], 'nothing queued');
    assert.ok(handle.repo.listSuggestions({}).every((s) => s.status === 'pending'));

    // the researcher suggests and decides under one credential
    const mine = data(await agent.call(me, 'suggest_new_code', { name: 'Home', rationale: 'mine' }));
    const decided = data(await agent.call(me, 'approve_suggestion', { suggestion_id: mine.suggestion_id }));
    assert.equal(decided.status, 'created');
  });
});
