/**
 * End-to-end test of the case management tools of issue 13 item 5 (src/tools/caseManagementTools.ts:
 * rename_case, remove_source_from_case, remove_case_attribute, list_case_attributes, rename_case_attribute)
 * over HTTP against the real built CLI (`bin/marginalia.js serve`; run `npm run build` first). One server for
 * the file; the `it` blocks run in order and build on each other.
 *
 * Covered: each tool succeeding for the researcher with its events; idempotent repeats (changed/removed
 * false) writing no event; the agent's rename_case and rename_case_attribute held for approval (trust
 * category rename: Suggest) and its remove_source_from_case and remove_case_attribute running and audited
 * as notified (apply_code: Notify), list_case_attributes running (read: Auto); every error code with its
 * HTTP status (CASE_NOT_FOUND 404, SOURCE_NOT_FOUND 404, DUPLICATE_NAME 409, INVALID_ARGUMENTS 400), each
 * failing call leaving the cases as they were; and CASES_NOT_LISTED/NO_CONTEXT (503) without an open project
 * (the in-process server of test/e2e/cases.test.ts).
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { startHttpServer } from '../../src/adapters/http/httpServer';
import { createAgentContextFor, createPipeline, headlessHost, openProjectHandle, type ProjectHandle } from '../../src/cli/compose';
import { silentLogger } from '../../src/core/log';
import { AGENT_TOKEN, AS_AGENT, callTool, REVIEWER_TOKEN, startServer, tmpDir, type ServerProcess } from '../helpers/serverProcess';
import { toolClient } from '../helpers/toolClient';

const UNKNOWN = 987654;

describe('case management tools over HTTP (real CLI)', function () {
  this.timeout(120_000);
  let server: ServerProcess | undefined;
  let dir = '';
  let base = '';
  const t = toolClient(() => base);
  const src: Record<string, number> = {};
  const kase: Record<string, number> = {};

  /** What a failing call must leave unchanged: every case in full. */
  const cases = async () => {
    const list = (await t.ok('list_cases')).cases as { case_id: number }[];
    return Promise.all(list.map((c) => t.ok('get_case', { case_id: c.case_id })));
  };

  before(async () => {
    dir = tmpDir('marginalia-case-management-e2e-');
    server = await startServer(path.join(dir, 'study.qda'));
    base = server.base;
    src.ana = (await t.ok('add_text_source', { name: 'Interview Ana', content: 'Ana talks about the garden.' })).source_id;
    src.ben = (await t.ok('add_text_source', { name: 'Interview Ben', content: 'Ben talks about the market.' })).source_id;
    kase.p1 = (await t.ok('create_case', { name: 'P1' })).case_id;
    kase.p2 = (await t.ok('create_case', { name: 'P2' })).case_id;
    for (const s of [src.ana, src.ben]) await t.ok('add_source_to_case', { case_id: kase.p1, source_id: s });
    await t.ok('set_case_attribute', { case_id: kase.p1, attribute_name: 'Age', value: 34 });
    await t.ok('set_case_attribute', { case_id: kase.p1, attribute_name: 'Interviewed', value: '2024-03-05' });
    await t.ok('set_case_attribute', { case_id: kase.p2, attribute_name: 'Age', value: 51 });
    await t.ok('set_case_attribute', { case_id: kase.p2, attribute_name: 'Urban', value: true });
  });

  after(async () => {
    await server?.stop();
  });

  it('rename_case renames for the researcher (case.renamed); the same name again changes nothing', async () => {
    const seq = await t.headSeq();
    assert.deepEqual(await t.ok('rename_case', { case_id: kase.p1, new_name: 'Participant 1' }), {
      case_id: kase.p1,
      old_name: 'P1',
      new_name: 'Participant 1',
      changed: true,
    });
    const got = await t.ok('get_case', { case_id: kase.p1 });
    assert.deepEqual([got.name, got.sources.length, got.attributes.length], ['Participant 1', 2, 2], 'its sources and attributes stay');
    assert.deepEqual(await t.ok('rename_case', { case_id: kase.p1, new_name: 'Participant 1' }), {
      case_id: kase.p1,
      old_name: 'Participant 1',
      new_name: 'Participant 1',
      changed: false,
    });
    assert.deepEqual(
      (await t.events(seq, 'case.*')).map((e) => [e.event_type, e.aggregate_id, e.payload]),
      [['case.renamed', String(kase.p1), { case_id: kase.p1, old_name: 'P1', new_name: 'Participant 1' }]],
    );
  });

  it('list_case_attributes lists the definitions by name with type and case count', async () => {
    assert.deepEqual(await t.ok('list_case_attributes'), {
      count: 3,
      attributes: [
        { name: 'Age', type: 'number', types: { number: 2 }, case_count: 2 },
        { name: 'Interviewed', type: 'date', types: { date: 1 }, case_count: 1 },
        { name: 'Urban', type: 'boolean', types: { boolean: 1 }, case_count: 1 },
      ],
    });
  });

  it('rename_case_attribute renames on every case keeping types and values (case.attribute_renamed)', async () => {
    const seq = await t.headSeq();
    const r = await t.ok('rename_case_attribute', { attribute_name: 'Age', new_name: 'Age at interview' });
    assert.deepEqual(r, {
      old_name: 'Age',
      new_name: 'Age at interview',
      case_ids: [kase.p1, kase.p2].sort((a, b) => (a as number) - (b as number)),
      case_count: 2,
      changed: true,
    });
    const listed = (await t.ok('list_cases')).cases;
    assert.deepEqual(
      listed.map((c: any) => [c.name, c.attributes]),
      [
        ['P2', { 'Age at interview': 51, Urban: true }],
        ['Participant 1', { 'Age at interview': 34, Interviewed: '2024-03-05' }],
      ],
    );
    const [e] = await t.events(seq, 'case.*');
    assert.deepEqual([e.event_type, e.payload.old_name, e.payload.new_name], ['case.attribute_renamed', 'Age', 'Age at interview']);
  });

  it('remove_source_from_case takes one source out (case.member_removed); again: removed false, no event', async () => {
    const seq = await t.headSeq();
    const r = await t.ok('remove_source_from_case', { case_id: kase.p1, source_id: src.ben });
    assert.deepEqual(r, { case_id: kase.p1, source_id: src.ben, source_name: 'Interview Ben', removed: true, source_count: 1 });
    assert.deepEqual(
      (await t.ok('get_case', { case_id: kase.p1 })).sources.map((s: any) => s.name),
      ['Interview Ana'],
    );
    assert.equal((await t.ok('list_sources')).sources.length, 2, 'the source itself stays');
    assert.equal((await t.ok('remove_source_from_case', { case_id: kase.p1, source_id: src.ben })).removed, false);
    const events = await t.events(seq, 'case.*');
    assert.deepEqual(
      events.map((e) => [e.event_type, e.payload.source_id, e.payload.segment_range]),
      [['case.member_removed', src.ben, null]],
    );
  });

  it('remove_case_attribute removes one value (case.attribute_set with type null); again: removed false', async () => {
    const seq = await t.headSeq();
    assert.deepEqual(await t.ok('remove_case_attribute', { case_id: kase.p2, attribute_name: 'Urban' }), {
      case_id: kase.p2,
      name: 'Urban',
      removed: true,
      old_type: 'boolean',
      old_value: true,
    });
    assert.deepEqual((await t.ok('get_case', { case_id: kase.p2 })).attribute_values, { 'Age at interview': 51 });
    assert.equal((await t.ok('remove_case_attribute', { case_id: kase.p2, attribute_name: 'Urban' })).removed, false);
    const events = await t.events(seq, 'case.*');
    assert.deepEqual(
      events.map((e) => [e.event_type, e.payload.type, e.payload.value, e.payload.old_value]),
      [['case.attribute_set', null, null, true]],
    );
  });

  it('errors with their HTTP statuses; each writes nothing', async () => {
    const failsCleanly = (name: string, args: Record<string, unknown>, code: string) =>
      t.writesNothing(cases, () => t.fails(name, args, code), `${name} ${code}`);
    await failsCleanly('rename_case', { case_id: UNKNOWN, new_name: 'X' }, 'CASE_NOT_FOUND');
    await failsCleanly('rename_case', { case_id: kase.p2, new_name: 'participant 1' }, 'DUPLICATE_NAME');
    await failsCleanly('rename_case', { case_id: kase.p2, new_name: '  ' }, 'INVALID_ARGUMENTS');
    await failsCleanly('remove_source_from_case', { case_id: UNKNOWN, source_id: src.ana }, 'CASE_NOT_FOUND');
    await failsCleanly('remove_source_from_case', { case_id: kase.p1, source_id: UNKNOWN }, 'SOURCE_NOT_FOUND');
    await failsCleanly('remove_case_attribute', { case_id: UNKNOWN, attribute_name: 'Age at interview' }, 'CASE_NOT_FOUND');
    await failsCleanly('remove_case_attribute', { case_id: kase.p1 }, 'INVALID_ARGUMENTS');
    await failsCleanly('rename_case_attribute', { attribute_name: 'Nobody has this', new_name: 'Y' }, 'ATTRIBUTE_NOT_FOUND');
    await failsCleanly('rename_case_attribute', { attribute_name: 'Interviewed', new_name: 'Age at interview' }, 'DUPLICATE_NAME');
    const dup = await t.fails('rename_case_attribute', { attribute_name: 'Interviewed', new_name: 'Age at interview' }, 'DUPLICATE_NAME');
    assert.deepEqual(
      dup.details?.case_ids,
      [kase.p1, kase.p2].sort((a, b) => (a as number) - (b as number)),
    );
    const taken = await t.fails('rename_case', { case_id: kase.p2, new_name: 'PARTICIPANT 1' }, 'DUPLICATE_NAME');
    assert.match(taken.error, /"Participant 1" already exists/);
  });

  it("an agent's renames wait for approval (rename: suggest); its removals run and are audited as notified (apply_code: notify)", async () => {
    const listing = await callTool(base, 'list_case_attributes', {}, AS_AGENT);
    assert.equal(listing.status, 200, 'list_case_attributes runs for an agent (read)');
    const before = await cases();
    const renameCase = await t.pending('rename_case', { case_id: kase.p2, new_name: 'Participant 2' }, AS_AGENT);
    const renameAttr = await t.pending('rename_case_attribute', { attribute_name: 'Interviewed', new_name: 'Interview date' }, AS_AGENT);
    const held = (await callTool(base, 'list_pending_approvals', {})).body.data;
    const levels = Object.fromEntries(held.approvals.map((p: any) => [p.request_id, p.trust_level]));
    assert.deepEqual([levels[renameCase], levels[renameAttr]], ['suggest', 'suggest']);
    assert.deepEqual(await cases(), before, 'nothing ran before approval');
    assert.equal((await t.approve(renameCase)).new_name, 'Participant 2');
    assert.equal((await t.approve(renameAttr)).new_name, 'Interview date');

    await t.ok('add_source_to_case', { case_id: kase.p2, source_id: src.ben });
    const removed = await t.ok('remove_source_from_case', { case_id: kase.p2, source_id: src.ben }, AS_AGENT);
    assert.equal(removed.removed, true);
    const attr = await t.ok('remove_case_attribute', { case_id: kase.p2, attribute_name: 'Age at interview' }, AS_AGENT);
    assert.equal(attr.removed, true);
    const audit = fs
      .readFileSync(path.join(dir, '.marginalia', 'audit.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    for (const tool of ['remove_source_from_case', 'remove_case_attribute']) {
      const notified = audit.filter((l) => l.tool === tool && l.decision === 'notified');
      assert.equal(notified.length, 1, `${tool}: ${JSON.stringify(audit.filter((l) => l.tool === tool))}`);
      assert.equal(notified[0].trust_level, 'notify');
    }
  });

  it("undo reverses the researcher's rename_case, rename_case_attribute and remove_source_from_case, newest first", async () => {
    await t.ok('add_source_to_case', { case_id: kase.p1, source_id: src.ben });
    await t.ok('rename_case', { case_id: kase.p1, new_name: 'Ana' });
    await t.ok('rename_case_attribute', { attribute_name: 'Interview date', new_name: 'Date' });
    await t.ok('remove_source_from_case', { case_id: kase.p1, source_id: src.ben });
    const linked = async () => (await t.ok('get_case', { case_id: kase.p1 })).sources.map((s: any) => s.name).sort();
    assert.deepEqual(await linked(), ['Interview Ana']);
    const u1 = await t.ok('undo');
    assert.match(JSON.stringify(u1), /Interview Ben/);
    assert.deepEqual(await linked(), ['Interview Ana', 'Interview Ben']);
    const u2 = await t.ok('undo');
    assert.match(JSON.stringify(u2), /renamed the case attribute 'Interview date' to 'Date'/);
    assert.deepEqual(
      (await t.ok('list_case_attributes')).attributes.map((a: any) => a.name),
      ['Age at interview', 'Interview date'],
    );
    const u3 = await t.ok('undo');
    assert.match(JSON.stringify(u3), /renamed the case 'Participant 1' to 'Ana'/);
    assert.equal((await t.ok('get_case', { case_id: kase.p1 })).name, 'Participant 1');
    // and redo renames it again
    await t.ok('redo');
    assert.equal((await t.ok('get_case', { case_id: kase.p1 })).name, 'Ana');
  });
});

describe('case management tools without an open project (in-process server)', function () {
  this.timeout(60_000);
  let dir = '';
  const current: ProjectHandle | null = null;
  let server: Awaited<ReturnType<typeof startHttpServer>> | undefined;
  let agent: ReturnType<typeof createAgentContextFor> | undefined;
  let base = '';
  const t = toolClient(() => base);

  before(async () => {
    dir = tmpDir('marginalia-case-management-noproject-');
    const file = path.join(dir, 'closed.qda');
    const handle = await openProjectHandle(file, { create: true, logger: silentLogger });
    agent = createAgentContextFor(file, { project: () => current, logger: silentLogger, tokens: { agent: AGENT_TOKEN, reviewer: REVIEWER_TOKEN } });
    const pipeline = createPipeline({ project: () => current, host: headlessHost, logger: silentLogger, agent, embeddings: null });
    server = await startHttpServer({ pipeline, port: 0, logger: silentLogger, version: 'test', agent });
    base = `http://127.0.0.1:${server.port}`;
    await handle.close();
  });

  after(async () => {
    await server?.close();
    agent?.dispose();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('every case management tool answers CASES_NOT_LISTED/NO_CONTEXT (503)', async () => {
    const calls: [string, Record<string, unknown>][] = [
      ['rename_case', { case_id: 1, new_name: 'X' }],
      ['remove_source_from_case', { case_id: 1, source_id: 1 }],
      ['remove_case_attribute', { case_id: 1, attribute_name: 'Age' }],
      ['list_case_attributes', {}],
      ['rename_case_attribute', { attribute_name: 'Age', new_name: 'Years' }],
    ];
    for (const [name, args] of calls) await t.fails(name, args, 'CASES_NOT_LISTED/NO_CONTEXT');
    const agentCall = await callTool(base, 'rename_case', { case_id: 1, new_name: 'X' }, AS_AGENT);
    assert.deepEqual([agentCall.status, agentCall.body.error_code], [503, 'CASES_NOT_LISTED/NO_CONTEXT']);
  });
});
