/**
 * src/agent/pipeline.ts: tool lookup, input validation, project gating, the transaction around run
 * (rollback on unexpected errors), event publication and the tool listing. Real sql.js project files.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { z } from 'zod';
import { ToolPipeline, type CallRecord, type Caller } from '../../../src/agent/pipeline';
import { createPipeline, headlessHost, openProjectHandle, type ProjectHandle } from '../../../src/cli/compose';
import { ToolError } from '../../../src/core/errors';
import type { Logger } from '../../../src/core/log';
import { silentLogger } from '../../../src/core/log';
import type { EventRecord } from '../../../src/domain/events';
import { defineTool, type AnyTool } from '../../../src/tools/defineTool';
import { args } from '../../../src/tools/schemas';
import { ALICE, openFixture, snapshot, storedEvents, type Fixture } from '../domain/projectFixture';

const RED = '#E15759';

interface Issue {
  path: string;
  message: string;
  code: string;
}

function issuesOf(out: { envelope: { success: boolean } }): Issue[] {
  const env = out.envelope as { success: false; error_code: string; details?: { issues?: Issue[] } };
  assert.equal(env.error_code, 'INVALID_ARGUMENTS');
  assert.ok(Array.isArray(env.details?.issues), `details.issues missing: ${JSON.stringify(env)}`);
  return env.details!.issues!;
}

describe('agent/pipeline', () => {
  let fx: Fixture;
  beforeEach(async () => {
    fx = await openFixture();
  });
  afterEach(async () => {
    await fx.close();
  });

  describe('tool lookup', () => {
    it('fails with TOOL_NOT_FOUND for unknown names, including Object.prototype members', async () => {
      for (const name of ['no_such_tool', 'constructor', '__proto__', 'toString', 'hasOwnProperty', '', 'list_codes ', 'qda_list_codes']) {
        const out = await fx.fails(name, {}, 'TOOL_NOT_FOUND');
        assert.equal(out.tool, name);
      }
    });
  });

  describe('input validation', () => {
    it('reports wrong types with INVALID_ARGUMENTS and details.issues naming the field', async () => {
      const out = await fx.fails('create_code', { name: 5, color: RED }, 'INVALID_ARGUMENTS');
      const issues = issuesOf(out);
      assert.ok(
        issues.some((i) => i.path === 'name'),
        JSON.stringify(issues),
      );
      assert.ok(!out.envelope.success && out.envelope.error.includes('name'));

      const typed = issuesOf(await fx.fails('read_source_content', { source_id: 1, start_pos: 'zero' }, 'INVALID_ARGUMENTS'));
      assert.ok(
        typed.some((i) => i.path === 'start_pos'),
        JSON.stringify(typed),
      );
      const bool = issuesOf(await fx.fails('remove_source', { source_id: 1, confirm: 'yes' }, 'INVALID_ARGUMENTS'));
      assert.ok(
        bool.some((i) => i.path === 'confirm'),
        JSON.stringify(bool),
      );
    });

    it('rejects unknown keys (a misspelt parameter is an error, not ignored)', async () => {
      const issues = issuesOf(await fx.fails('list_codes', { bogus: 1 }, 'INVALID_ARGUMENTS'));
      assert.ok(
        issues.some((i) => i.code === 'unrecognized_keys'),
        JSON.stringify(issues),
      );
      // color is optional since issue 13 (a free palette colour): the misspelt colour is refused, not taken as "no colour"
      const misspelt = issuesOf(await fx.fails('create_code', { colour: RED }, 'INVALID_ARGUMENTS'));
      assert.ok(misspelt.length >= 2, 'both the unknown colour and the missing name are reported');
      assert.ok(
        misspelt.some((i) => i.path === 'name'),
        JSON.stringify(misspelt),
      );
      assert.ok(
        misspelt.some((i) => i.code === 'unrecognized_keys'),
        JSON.stringify(misspelt),
      );
      assert.equal((await fx.ok('list_codes')).count, 0);
    });

    it('reports every missing required parameter', async () => {
      const issues = issuesOf(await fx.fails('navigate_to_segment', {}, 'INVALID_ARGUMENTS'));
      assert.deepEqual(issues.map((i) => i.path).sort(), ['end_pos', 'source_id', 'start_pos']);
      assert.deepEqual(
        issuesOf(await fx.fails('get_code', {}, 'INVALID_ARGUMENTS')).map((i) => i.path),
        ['code_id'],
      );
      assert.deepEqual(
        issuesOf(await fx.fails('open_project', {}, 'INVALID_ARGUMENTS')).map((i) => i.path),
        ['path'],
      );
    });

    it('gives nested paths for array items', async () => {
      const issues = issuesOf(
        await fx.fails(
          'batch_apply_codes',
          {
            operations: [
              { code_id: 1, source_id: 1, start_position: 0, end_position: 1 },
              { code_id: 1, source_id: 1, start_position: 0 },
              { code_id: 'x', source_id: 1, start_position: 0, end_position: 1 },
            ],
          },
          'INVALID_ARGUMENTS',
        ),
      );
      const paths = issues.map((i) => i.path).sort();
      assert.deepEqual(paths, ['operations.1.end_position', 'operations.2.code_id']);
      await fx.fails('batch_apply_codes', { operations: [] }, 'INVALID_ARGUMENTS');
    });

    it('rejects arguments that are not an object, and treats undefined and null as {}', async () => {
      for (const bad of ['x', 3, [1], true]) await fx.fails('list_codes', bad, 'INVALID_ARGUMENTS');
      assert.equal((await fx.ok('list_codes', undefined)).count, 0);
      assert.equal((await fx.ok('list_codes', null)).count, 0);
      await fx.fails('get_code', null, 'INVALID_ARGUMENTS');
    });

    it('accepts ids as numeric strings and rejects strings that are not positive integers', async () => {
      const id = (await fx.ok('create_code', { name: 'Trust', color: RED })).code_id as number;
      const got = await fx.ok('get_code', { code_id: String(id) });
      assert.equal(got.code_id, id);
      assert.equal(got.name, 'Trust');
      const renamed = await fx.ok('rename_code', { code_id: String(id), new_name: 'Faith' });
      assert.equal(renamed.code_id, id);
      for (const bad of ['abc', '0', '-1', '3.5', ' 3', '1e2', '', 0, -2, 1.5]) {
        await fx.fails('get_code', { code_id: bad }, 'INVALID_ARGUMENTS');
      }
    });
  });

  describe('project gating', () => {
    /** Valid arguments for every tool that needs a project, so only the missing project can fail them. */
    const VALID_ARGS: Record<string, unknown> = {
      list_codes: {},
      get_code: { code_id: 1 },
      create_code: { name: 'X', color: RED },
      list_segments_for_source: { source_id: 1 },
      list_segments: { code_id: 1 },
      retrieve_segments: { code_ids: [1] },
      delete_segment: { segment_id: 1 },
      batch_apply_codes: { operations: [{ code_id: 1, source_id: 1, start_position: 0, end_position: 1 }] },
      get_project_context: {},
      list_sources: {},
      read_source_content: { source_id: 1 },
      navigate_to_segment: { source_id: 1, start_pos: 0, end_pos: 1 },
      suggest_source_metadata: { source_id: 1, language: 'en' },
      add_text_source: { name: 'S', content: 'x' },
      remove_source: { source_id: 1 },
      erase_source: { source_id: 1, confirm: true },
      set_agent_access: { source_id: 1, access: 'closed' },
      get_agent_access: {},
      set_blind_coding: { enabled: true },
      end_blind_coding: {},
      get_team_settings: {},
      import_file_source: { file_path: '/tmp/x.txt' },
      set_source_attribute: { source_id: 1, attribute_name: 'Site', value: 'Lagos' },
      undo: {},
      redo: {},
      undo_agent_action: { correlation_id: 'c-1' },
      rename_category: { category_id: 1, new_name: 'C' },
      delete_category: { category_id: 1 },
      update_category_memo: { category_id: 1, memo: 'm' },
      list_folders: {},
      create_folder: { name: 'F' },
      rename_folder: { folder_id: 1, new_name: 'G' },
      delete_folder: { folder_id: 1 },
      move_source_to_folder: { source_id: 1 },
      rename_code: { code_id: 1, new_name: 'Y' },
      update_code_memo: { code_id: 1, memo: null },
      create_category: { name: 'K' },
      move_code_to_category: { code_id: 1 },
      merge_codes: { source_code_id: 1, target_code_id: 2 },
      delete_code: { code_id: 1 },
      list_categories: {},
      // AI code suggestions, AI text coding and batch operations
      analyze_content_for_codes: { source_id: 1 },
      suggest_new_code: { name: 'N', rationale: 'r' },
      list_pending_suggestions: {},
      approve_suggestion: { suggestion_id: 1 },
      detect_duplicate_codes: {},
      suggest_merge_codes: { source_code_id: 1, target_code_id: 2, rationale: 'r' },
      approve_merge: { merge_suggestion_id: 1 },
      suggest_code_application: { source_id: 1, code_id: 1, start_pos: 0, end_pos: 1 },
      list_pending_coding_suggestions: {},
      approve_coding_suggestion: { suggestion_id: 1 },
      reject_coding_suggestion: { suggestion_id: 1 },
      analyze_uncoded_text: { source_id: 1 },
      suggest_codes_for_range: { source_id: 1, start_pos: 0, end_pos: 1 },
      auto_suggest_codes: { source_id: 1 },
      get_suggestion_batch_status: { batch_id: 1 },
      respond_to_code_suggestion: { suggestion_batch_id: 1, response: 'accept' },
      approve_batch_coding: { batch_id: 1 },
      find_similar_content: { search_text: 'water' },
      suggest_batch_coding: { code_id: 1, segments: [{ source_id: 1, start_pos: 0, end_pos: 1 }], rationale: 'r' },
      // Marginalia's extras beyond the spec
      update_segment_memo: { segment_id: 1, memo: 'm' },
      set_code_color: { code_id: 1, color: RED },
      // case management (these fail with CASES_NOT_LISTED/NO_CONTEXT instead, HTTP spec section 1)
      list_cases: {},
      get_case: { case_id: 1 },
      suggest_case_groupings: {},
      compare_cases: { case_ids: [1, 2] },
      create_case: { name: 'P01' },
      delete_case: { case_id: 1 },
      add_source_to_case: { case_id: 1, source_id: 1 },
      add_segment_to_case: { case_id: 1, source_id: 1, start_pos: 0, end_pos: 1 },
      set_case_attribute: { case_id: 1, attribute_name: 'age', value: 30 },
      update_case_memo: { case_id: 1, memo: 'm' },
      update_project_briefing: { description: 'd' },
      rename_case: { case_id: 1, new_name: 'P02' },
      remove_source_from_case: { case_id: 1, source_id: 1 },
      remove_case_attribute: { case_id: 1, attribute_name: 'age' },
      list_case_attributes: {},
      rename_case_attribute: { attribute_name: 'age', new_name: 'Age' },
      // AV coding
      apply_av_code: { code_id: 1, source_id: 1, start_ms: 0, end_ms: 1000 },
      list_av_segments: { source_id: 1 },
      remove_av_segment: { segment_id: 1 },
      transcribe_media: { source_id: 1 },
      detect_speakers: { source_id: 1 },
      suggest_codes_for_transcript: { source_id: 1 },
      // version control
      initialize_version_control: {},
      list_snapshots: {},
      view_diff: { from_ref: 'HEAD~1', to_ref: 'HEAD' },
      restore_snapshot: { ref: 'HEAD' },
      list_merge_conflicts: {},
      resolve_merge_conflict: { conflict_id: 'c1', choice: 'ours' },
      configure_remote: { url: '/tmp/marginalia-remote.git' },
      sync_project: {},
      get_remote_status: {},
      // exchange
      suggest_export_format: { use_case: 'share with NVivo' },
      export_data: { format: 'codebook', output_path: '/tmp/marginalia-codebook.txt' },
      import_data: { format: 'refi_qda', source_path: '/tmp/marginalia-project.qdpx' },
      import_analytics: { source_path: '/tmp/marginalia-events.ndjson' },
      // search
      search_text: { query: 'water' },
      search_semantic: { query: 'water' },
      search_codes: { query: 'water' },
      find_similar_segments: { segment_id: 1 },
      // approvals
      get_approval_status: { request_id: 'r-1' },
      list_pending_approvals: {},
      // the design's remaining capabilities and reports
      apply_code: { code_id: 1, source_id: 1, start_position: 0, end_position: 1 },
      remove_code: { segment_id: 1 },
      move_code: { code_id: 1, category_id: null },
      import_source: { file_path: '/tmp/x.txt' },
      import_text: { content: 'x', name: 'S' },
      rename_source: { source_id: 1, new_name: 'T' },
      delete_source: { source_id: 1 },
      update_memo: { source_id: 1, memo: 'm' },
      generate_frequency_report: {},
      generate_cooccurrence_report: { filters: { code_ids: [1] } },
      generate_coder_comparison: { coder_ids: ['alice', 'bob'] },
      get_report: { report_id: 1 },
      list_reports: {},
      export_report: { report_id: 1, format: 'csv' },
    };
    /** The error code of a call without a project: the case tools' own, NO_PROJECT for the rest. */
    const noProjectCode = (name: string) => (/_case(s|_|$)/.test(name) ? 'CASES_NOT_LISTED/NO_CONTEXT' : 'NO_PROJECT');

    it('fails every project tool with NO_PROJECT when no project is open', async () => {
      const none = createPipeline({ project: () => null, host: headlessHost, logger: silentLogger });
      const names = none.listTools().map((t) => t.name);
      // the session tools work without a project (the researcher's view of who is connected)
      assert.deepEqual(names.filter((n) => !(n in VALID_ARGS)).sort(), ['close_project', 'end_session', 'get_session', 'list_sessions', 'open_project']);
      for (const [name, a] of Object.entries(VALID_ARGS)) {
        const out = await none.invoke(name, a, ALICE);
        assert.equal(out.status, 'failed', name);
        assert.ok(!out.envelope.success && out.envelope.error_code === noProjectCode(name), `${name}: ${JSON.stringify(out.envelope)}`);
      }
    });

    it('open_project and close_project work without a project and return guidance naming the commands', async () => {
      const none = createPipeline({ project: () => null, host: headlessHost, logger: silentLogger });
      const open = await none.invoke('open_project', { path: '/tmp/study.qda' }, ALICE);
      assert.ok(open.envelope.success, JSON.stringify(open.envelope));
      const od = open.envelope.data as Record<string, unknown>;
      assert.equal(od.opened, false);
      assert.equal(od.command, 'marginalia.project.open');
      assert.match(String(od.guidance), /marginalia\.project\.open/);
      assert.equal(od.requested_path, '/tmp/study.qda');

      const close = await none.invoke('close_project', {}, ALICE);
      assert.ok(close.envelope.success, JSON.stringify(close.envelope));
      const cd = close.envelope.data as Record<string, unknown>;
      assert.equal(cd.closed, false);
      assert.equal(cd.command, 'marginalia.project.close');
      assert.match(String(cd.guidance), /marginalia\.project\.close/);
    });

    it('open_project and close_project with a project open only give guidance; the project stays usable', async () => {
      await fx.ok('create_code', { name: 'A', color: RED });
      const o = await fx.ok('open_project', { path: path.join(fx.dir, 'other.qda') });
      assert.equal(o.opened, false);
      assert.equal(fs.existsSync(path.join(fx.dir, 'other.qda')), false, 'nothing is created');
      const c = await fx.ok('close_project');
      assert.equal(c.closed, false);
      assert.equal((await fx.ok('list_codes')).count, 1);
    });

    it('checks the project again after prepare: a project closed meanwhile is NO_PROJECT', async () => {
      let current: ProjectHandle | null = fx.handle;
      const gate = defineTool({
        name: 'slow_create',
        group: 'core',
        title: 'Slow',
        description: 'test tool',
        input: args({}),
        effect: 'create',
        trust: 'create',
        prepare: async () => {
          current = null;
        },
        run: () => ({ ran: true }),
      });
      const p = new ToolPipeline({ tools: [gate as AnyTool], project: () => current, host: headlessHost, logger: silentLogger });
      const out = await p.invoke('slow_create', {}, ALICE);
      assert.ok(!out.envelope.success && out.envelope.error_code === 'NO_PROJECT', JSON.stringify(out.envelope));
    });
  });

  describe('unexpected errors', () => {
    const errors: unknown[] = [];
    const capture: Logger = { info: () => {}, warn: () => {}, error: (_m, e) => void errors.push(e) };
    beforeEach(() => {
      errors.length = 0;
    });

    /** A tool that writes a code, raises its event, then throws `failure`. */
    function writeThenThrow(name: string, failure: () => Error): AnyTool {
      return defineTool({
        name,
        group: 'core',
        title: name,
        description: 'test tool that writes and then throws',
        input: args({}),
        effect: 'create',
        trust: 'create',
        run: (ctx) => {
          const id = ctx.domain.repo.insertCode({ name: 'Ghost', color: RED, memo: null, category_id: null }, 'ghost', {
            owner: 'x',
            session_id: 's',
            now: ctx.domain.now,
          });
          ctx.domain.events.emit({ event_type: 'coding.code_created', aggregate_type: 'code', aggregate_id: String(id), payload: { code_id: id } });
          assert.equal(ctx.domain.repo.listCodes().length, 1, 'the write happened inside the transaction');
          throw failure();
        },
      }) as AnyTool;
    }

    it('an unexpected Error becomes TOOL_EXECUTION_ERROR and the transaction is rolled back', async () => {
      const p = new ToolPipeline({
        tools: [writeThenThrow('explode', () => new TypeError('secret internal detail'))],
        project: () => fx.handle,
        host: headlessHost,
        logger: capture,
      });
      let heard = 0;
      p.onEvents(() => heard++);
      const journal = fx.handle.store.journalSeq;
      const out = await p.invoke('explode', {}, ALICE);
      assert.equal(out.status, 'failed');
      assert.ok(!out.envelope.success);
      assert.equal(out.envelope.error_code, 'TOOL_EXECUTION_ERROR');
      assert.ok(!out.envelope.error.includes('secret internal detail'), 'internal messages are logged, not returned');
      assert.deepEqual(out.events, []);
      assert.equal(heard, 0);
      assert.equal(errors.length, 1);
      assert.ok(errors[0] instanceof TypeError);
      // nothing written: no code, no event, nothing journaled, and the store is usable afterwards
      assert.deepEqual(fx.handle.store.all('SELECT * FROM codes'), []);
      assert.deepEqual(storedEvents(fx.handle), []);
      assert.equal(fx.handle.store.journalSeq, journal);
      assert.equal(fx.handle.store.inTransaction, false);
      const created = await fx.ok('create_code', { name: 'Ghost', color: RED });
      assert.equal(created.name, 'Ghost', 'the rolled-back name is free');
    });

    it('a ToolError thrown after a write keeps its code and is rolled back too', async () => {
      const p = new ToolPipeline({
        tools: [writeThenThrow('refuse', () => new ToolError('CODE_NOT_FOUND', 'no such code'))],
        project: () => fx.handle,
        host: headlessHost,
        logger: capture,
      });
      const out = await p.invoke('refuse', {}, ALICE);
      assert.ok(!out.envelope.success);
      assert.equal(out.envelope.error_code, 'CODE_NOT_FOUND');
      assert.equal(out.envelope.error, 'no such code');
      assert.deepEqual(fx.handle.store.all('SELECT * FROM codes'), []);
      assert.deepEqual(storedEvents(fx.handle), []);
      assert.equal(errors.length, 0, 'expected failures are not logged as errors');
    });

    it('an unexpected Error in a read tool is TOOL_EXECUTION_ERROR as well', async () => {
      const broken = defineTool({
        name: 'broken_read',
        group: 'core',
        title: 'Broken',
        description: 'test tool',
        input: args({ n: z.number().optional() }),
        effect: 'read',
        trust: 'read',
        run: () => {
          throw new Error('boom');
        },
      }) as AnyTool;
      const p = new ToolPipeline({ tools: [broken], project: () => fx.handle, host: headlessHost, logger: capture });
      const out = await p.invoke('broken_read', {}, ALICE);
      assert.ok(!out.envelope.success && out.envelope.error_code === 'TOOL_EXECUTION_ERROR');
      assert.equal(errors.length, 1);
    });
  });

  describe('events and audit', () => {
    it('onEvents listeners receive the events after the commit, in order; dispose stops delivery', async () => {
      const batches: { events: EventRecord[]; inTransaction: boolean; stored: number }[] = [];
      const sub = fx.pipeline.onEvents((events) =>
        batches.push({ events, inTransaction: fx.handle.store.inTransaction, stored: storedEvents(fx.handle).length }),
      );
      const out = await fx.call('create_code', { name: 'A', color: RED });
      assert.equal(batches.length, 1);
      assert.equal(batches[0]!.inTransaction, false, 'delivered after the transaction ended');
      assert.equal(batches[0]!.stored, 1, 'the event is already in the events table');
      assert.deepEqual(batches[0]!.events, out.events);

      const s = (await fx.ok('add_text_source', { name: 'S', content: 'hello world' })).source_id;
      await fx.ok('batch_apply_codes', {
        operations: [
          { code_id: out.events[0]!.payload.code_id, source_id: s, start_position: 0, end_position: 5 },
          { code_id: out.events[0]!.payload.code_id, source_id: s, start_position: 6, end_position: 11 },
        ],
      });
      assert.equal(batches.length, 3, 'one delivery per call');
      assert.deepEqual(
        batches[2]!.events.map((e) => e.payload.text),
        ['hello', 'world'],
      );

      await fx.ok('list_codes');
      assert.equal(batches.length, 3, 'read calls deliver nothing');
      await sub.dispose();
      await fx.ok('create_code', { name: 'B', color: RED });
      assert.equal(batches.length, 3, 'no delivery after dispose');
    });

    it('a throwing listener does not fail the call or starve other listeners', async () => {
      const seen: string[] = [];
      fx.pipeline.onEvents(() => {
        throw new Error('listener bug');
      });
      fx.pipeline.onEvents((events) => seen.push(...events.map((e) => e.event_type)));
      const out = await fx.call('create_code', { name: 'A', color: RED });
      assert.ok(out.envelope.success);
      assert.deepEqual(seen, ['coding.code_created']);
      assert.equal((await fx.ok('list_codes')).count, 1);
    });

    it('records every call, successful or not, with the audit sink', async () => {
      const calls: CallRecord[] = [];
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'marginalia-audit-'));
      const h = await openProjectHandle(path.join(dir, 'p.qda'), { create: true, checkpointIdleMs: 0 });
      try {
        const p = createPipeline({ project: () => h, host: headlessHost, logger: silentLogger, audit: { record: (c) => void calls.push(c) } });
        const bob: Caller = { session_id: 'b', client_type: 'CUSTOM', client_name: 'bob', user: 'bob' };
        await p.invoke('create_code', { name: 'A', color: RED }, bob);
        await p.invoke('get_code', { code_id: 99 }, bob);
        await p.invoke('nope', {}, bob);
        assert.deepEqual(
          calls.map((c) => [c.tool, c.status, c.error_code, c.caller.user]),
          [
            ['create_code', 'ok', undefined, 'bob'],
            ['get_code', 'failed', 'CODE_NOT_FOUND', 'bob'],
            ['nope', 'failed', 'TOOL_NOT_FOUND', 'bob'],
          ],
        );
        assert.deepEqual(calls[1]!.arguments, { code_id: 99 });
      } finally {
        await h.close();
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });

    it('a failed mutation leaves the project exactly as it was', async () => {
      await fx.ok('create_code', { name: 'A', color: RED });
      const before = await snapshot(fx);
      await fx.fails('create_code', { name: 'a', color: RED }, 'DUPLICATE_NAME');
      assert.deepEqual(await snapshot(fx), before);
    });
  });

  describe('listTools', () => {
    /**
     * The error codes each tool can fail with beyond the pipeline's own (TOOL_NOT_FOUND, INVALID_ARGUMENTS,
     * NO_PROJECT, TOOL_EXECUTION_ERROR), from the spec's error table and the tools' behaviour; its description
     * must name them.
     */
    const TOOL_ERRORS: Record<string, string[]> = {
      list_codes: [],
      get_code: ['CODE_NOT_FOUND'],
      create_code: ['DUPLICATE_NAME', 'CATEGORY_NOT_FOUND'],
      list_segments_for_source: ['SOURCE_NOT_FOUND'],
      list_segments: ['CODE_NOT_FOUND', 'SOURCE_NOT_FOUND', 'CASE_NOT_FOUND'],
      retrieve_segments: ['CODE_NOT_FOUND', 'SOURCE_NOT_FOUND', 'FOLDER_NOT_FOUND', 'CASE_NOT_FOUND'],
      delete_segment: ['SEGMENT_NOT_FOUND'],
      batch_apply_codes: ['CODE_NOT_FOUND', 'SOURCE_NOT_FOUND', 'INVALID_POSITION'],
      get_project_context: ['NO_PROJECT'],
      open_project: [],
      close_project: [],
      list_sources: [],
      read_source_content: ['SOURCE_NOT_FOUND', 'INVALID_POSITION'],
      navigate_to_segment: ['SOURCE_NOT_FOUND', 'INVALID_POSITION'],
      suggest_source_metadata: ['SOURCE_NOT_FOUND'],
      add_text_source: ['SOURCE_DUPLICATE_NAME'],
      remove_source: ['SOURCE_NOT_FOUND'],
      erase_source: ['SOURCE_NOT_FOUND', 'INVALID_ARGUMENTS', 'APPROVAL_FORBIDDEN', 'TOOL_EXECUTION_ERROR'],
      set_agent_access: ['INVALID_ARGUMENTS', 'SOURCE_NOT_FOUND', 'FOLDER_NOT_FOUND', 'CASE_NOT_FOUND', 'APPROVAL_FORBIDDEN'],
      get_agent_access: [],
      set_blind_coding: ['INVALID_ARGUMENTS', 'APPROVAL_FORBIDDEN'],
      end_blind_coding: ['APPROVAL_FORBIDDEN'],
      get_team_settings: [],
      import_file_source: ['SOURCE_IMPORT_FAILED', 'SOURCE_DUPLICATE_NAME'],
      set_source_attribute: ['SOURCE_NOT_FOUND', 'INVALID_ARGUMENTS'],
      undo: ['NOTHING_TO_UNDO', 'NOT_UNDOABLE', 'APPROVAL_FORBIDDEN'],
      redo: ['NOTHING_TO_REDO', 'NOT_UNDOABLE', 'APPROVAL_FORBIDDEN'],
      undo_agent_action: ['NOT_UNDOABLE', 'APPROVAL_FORBIDDEN'],
      rename_category: ['CATEGORY_NOT_FOUND', 'DUPLICATE_NAME', 'INVALID_ARGUMENTS'],
      delete_category: ['CATEGORY_NOT_FOUND', 'CATEGORY_NOT_EMPTY', 'CATEGORY_CYCLE', 'INVALID_ARGUMENTS'],
      update_category_memo: ['CATEGORY_NOT_FOUND', 'INVALID_ARGUMENTS'],
      list_folders: [],
      create_folder: ['FOLDER_NOT_CREATED'],
      rename_folder: ['FOLDER_NOT_FOUND', 'FOLDER_RENAME_FAILED'],
      delete_folder: ['FOLDER_NOT_FOUND', 'FOLDER_NOT_EMPTY'],
      move_source_to_folder: ['SOURCE_NOT_FOUND', 'FOLDER_NOT_FOUND'],
      rename_code: ['CODE_NOT_FOUND', 'DUPLICATE_NAME'],
      update_code_memo: ['CODE_NOT_FOUND'],
      create_category: ['DUPLICATE_NAME', 'CATEGORY_NOT_FOUND'],
      move_code_to_category: ['CODE_NOT_FOUND', 'CATEGORY_NOT_FOUND'],
      merge_codes: ['MERGE_SAME_CODE', 'CODE_NOT_FOUND'],
      delete_code: ['CODE_NOT_FOUND', 'CODE_HAS_SEGMENTS'],
      list_categories: [],
      // AI code suggestions, AI text coding and batch operations (the HTTP spec's three tables)
      analyze_content_for_codes: ['SOURCE_NOT_FOUND', 'INVALID_POSITION'],
      suggest_new_code: ['DUPLICATE_NAME', 'CATEGORY_NOT_FOUND', 'INVALID_ARGUMENTS'],
      list_pending_suggestions: [],
      approve_suggestion: ['SUGGESTION_NOT_FOUND', 'SUGGESTION_ALREADY_DECIDED', 'DUPLICATE_NAME', 'CATEGORY_NOT_FOUND'],
      detect_duplicate_codes: [],
      suggest_merge_codes: ['MERGE_SAME_CODE', 'CODE_NOT_FOUND'],
      approve_merge: ['SUGGESTION_NOT_FOUND', 'SUGGESTION_ALREADY_DECIDED', 'CODE_NOT_FOUND'],
      suggest_code_application: ['CODE_NOT_FOUND', 'SOURCE_NOT_FOUND', 'INVALID_POSITION'],
      list_pending_coding_suggestions: ['SOURCE_NOT_FOUND', 'BATCH_NOT_FOUND'],
      approve_coding_suggestion: ['SUGGESTION_NOT_FOUND', 'SUGGESTION_ALREADY_DECIDED', 'CODE_NOT_FOUND', 'SOURCE_NOT_FOUND', 'INVALID_POSITION'],
      reject_coding_suggestion: ['SUGGESTION_NOT_FOUND', 'SUGGESTION_ALREADY_DECIDED'],
      analyze_uncoded_text: ['SOURCE_NOT_FOUND', 'INVALID_POSITION'],
      suggest_codes_for_range: ['SOURCE_NOT_FOUND', 'INVALID_POSITION'],
      auto_suggest_codes: ['SOURCE_NOT_FOUND', 'INVALID_POSITION'],
      get_suggestion_batch_status: ['BATCH_NOT_FOUND'],
      respond_to_code_suggestion: ['BATCH_NOT_FOUND', 'INVALID_ARGUMENTS'],
      approve_batch_coding: ['BATCH_NOT_FOUND'],
      find_similar_content: ['CODE_NOT_FOUND', 'SOURCE_NOT_FOUND'],
      suggest_batch_coding: ['CODE_NOT_FOUND', 'SOURCE_NOT_FOUND', 'INVALID_POSITION'],
      // Marginalia's extras beyond the spec
      update_segment_memo: ['SEGMENT_NOT_FOUND'],
      set_code_color: ['CODE_NOT_FOUND'],
      // case management: the HTTP spec's case table and the agent-context capability table's case writers
      list_cases: ['CASES_NOT_LISTED/NO_CONTEXT'],
      get_case: ['CASE_NOT_FOUND', 'CASES_NOT_LISTED/NO_CONTEXT'],
      suggest_case_groupings: ['CASES_NOT_LISTED/NO_CONTEXT'],
      compare_cases: ['CASE_NOT_FOUND', 'CODE_NOT_FOUND', 'CASES_NOT_LISTED/NO_CONTEXT'],
      create_case: ['DUPLICATE_NAME', 'CASES_NOT_LISTED/NO_CONTEXT'],
      delete_case: ['CASE_NOT_FOUND', 'CASES_NOT_LISTED/NO_CONTEXT'],
      add_source_to_case: ['CASE_NOT_FOUND', 'SOURCE_NOT_FOUND', 'CASES_NOT_LISTED/NO_CONTEXT'],
      add_segment_to_case: ['CASE_NOT_FOUND', 'SOURCE_NOT_FOUND', 'INVALID_POSITION', 'CASES_NOT_LISTED/NO_CONTEXT'],
      set_case_attribute: ['CASE_NOT_FOUND', 'INVALID_ARGUMENTS', 'CASES_NOT_LISTED/NO_CONTEXT'],
      update_case_memo: ['CASE_NOT_FOUND', 'INVALID_ARGUMENTS', 'CASES_NOT_LISTED/NO_CONTEXT'],
      update_project_briefing: ['INVALID_ARGUMENTS', 'APPROVAL_FORBIDDEN', 'NO_PROJECT'],
      // managing cases from the workbench (src/tools/caseManagementTools.ts)
      rename_case: ['CASE_NOT_FOUND', 'DUPLICATE_NAME', 'INVALID_ARGUMENTS', 'CASES_NOT_LISTED/NO_CONTEXT'],
      remove_source_from_case: ['CASE_NOT_FOUND', 'SOURCE_NOT_FOUND', 'CASES_NOT_LISTED/NO_CONTEXT'],
      remove_case_attribute: ['CASE_NOT_FOUND', 'INVALID_ARGUMENTS', 'CASES_NOT_LISTED/NO_CONTEXT'],
      list_case_attributes: ['CASES_NOT_LISTED/NO_CONTEXT'],
      rename_case_attribute: ['INVALID_ARGUMENTS', 'ATTRIBUTE_NOT_FOUND', 'DUPLICATE_NAME', 'CASES_NOT_LISTED/NO_CONTEXT'],
      // AV coding (the HTTP spec's AV table)
      apply_av_code: [
        'AV_SEGMENT_NOT_CODED/CODE_NOT_FOUND',
        'SOURCE_NOT_FOUND',
        'INVALID_ARGUMENTS',
        'AV_SEGMENT_NOT_CODED/INVALID_TIME_RANGE',
        'AV_SEGMENT_NOT_CODED/OVERLAPPING_SEGMENT',
      ],
      list_av_segments: ['SOURCE_NOT_FOUND'],
      remove_av_segment: ['AV_SEGMENT_NOT_REMOVED/NOT_FOUND'],
      transcribe_media: ['SOURCE_NOT_FOUND', 'INVALID_ARGUMENTS', 'TRANSCRIPT_NOT_FOUND', 'TRANSCRIPTION_FAILED'],
      detect_speakers: ['SOURCE_NOT_FOUND', 'INVALID_ARGUMENTS', 'TRANSCRIPT_NOT_FOUND', 'TRANSCRIPTION_FAILED'],
      suggest_codes_for_transcript: ['SOURCE_NOT_FOUND', 'INVALID_ARGUMENTS', 'TRANSCRIPT_NOT_FOUND', 'TRANSCRIPTION_FAILED'],
      // version control (the HTTP spec's version control table)
      initialize_version_control: ['VERSION_CONTROL_NOT_INITIALIZED', 'TOOL_EXECUTION_ERROR', 'NO_PROJECT'],
      list_snapshots: ['VERSION_CONTROL_NOT_INITIALIZED', 'NO_PROJECT'],
      view_diff: ['SNAPSHOT_NOT_FOUND', 'VERSION_CONTROL_NOT_INITIALIZED', 'NO_PROJECT'],
      restore_snapshot: ['SNAPSHOT_NOT_FOUND', 'VERSION_CONTROL_NOT_INITIALIZED', 'TOOL_EXECUTION_ERROR', 'NO_PROJECT'],
      list_merge_conflicts: [],
      resolve_merge_conflict: ['MERGE_CONFLICT_NOT_FOUND', 'INVALID_ARGUMENTS', 'VERSION_CONFLICT'],
      configure_remote: ['INVALID_ARGUMENTS', 'VERSION_CONTROL_NOT_INITIALIZED', 'APPROVAL_FORBIDDEN', 'NO_PROJECT'],
      sync_project: ['REMOTE_NOT_CONFIGURED', 'SYNC_DIVERGED', 'VERSION_CONTROL_NOT_INITIALIZED', 'TOOL_EXECUTION_ERROR', 'NO_PROJECT'],
      get_remote_status: ['VERSION_CONTROL_NOT_INITIALIZED', 'NO_PROJECT'],
      // exchange (the HTTP spec's exchange table)
      suggest_export_format: [],
      export_data: ['UNKNOWN_FORMAT', 'EXPORT_FAILED'],
      import_data: ['UNKNOWN_FORMAT', 'IMPORT_FAILED', 'INVALID_ARGUMENTS'],
      import_analytics: ['ANALYTICS_NOT_IMPORTED/FILE_NOT_FOUND', 'ANALYTICS_NOT_IMPORTED/NO_PROFILES', 'IMPORT_FAILED'],
      // search (the agent-context spec's capability table)
      search_text: ['INVALID_ARGUMENTS', 'SOURCE_NOT_FOUND', 'FOLDER_NOT_FOUND'],
      search_semantic: ['SOURCE_NOT_FOUND', 'FOLDER_NOT_FOUND', 'CODE_NOT_FOUND'],
      search_codes: ['INVALID_ARGUMENTS'],
      find_similar_segments: ['SEGMENT_NOT_FOUND'],
      // approvals (what became of a call held for the researcher)
      get_approval_status: ['APPROVAL_NOT_FOUND'],
      list_pending_approvals: [],
      list_sessions: ['APPROVAL_FORBIDDEN'],
      get_session: ['SESSION_NOT_FOUND', 'APPROVAL_FORBIDDEN'],
      end_session: ['SESSION_NOT_FOUND', 'APPROVAL_FORBIDDEN'],
      // the design's remaining capabilities (agent-context capability table) and reports
      apply_code: ['CODE_NOT_FOUND', 'SOURCE_NOT_FOUND', 'INVALID_POSITION', 'INVALID_ARGUMENTS'],
      remove_code: ['SEGMENT_NOT_FOUND'],
      move_code: ['CODE_NOT_FOUND', 'CATEGORY_NOT_FOUND'],
      import_source: ['SOURCE_IMPORT_FAILED', 'SOURCE_DUPLICATE_NAME'],
      import_text: ['SOURCE_DUPLICATE_NAME', 'INVALID_ARGUMENTS'],
      rename_source: ['SOURCE_NOT_FOUND', 'SOURCE_DUPLICATE_NAME', 'INVALID_ARGUMENTS'],
      delete_source: ['SOURCE_NOT_FOUND'],
      update_memo: ['SOURCE_NOT_FOUND'],
      generate_frequency_report: ['SOURCE_NOT_FOUND', 'CODE_NOT_FOUND', 'CASE_NOT_FOUND'],
      generate_cooccurrence_report: ['SOURCE_NOT_FOUND', 'CODE_NOT_FOUND', 'CASE_NOT_FOUND'],
      generate_coder_comparison: ['INVALID_ARGUMENTS', 'SOURCE_NOT_FOUND', 'CODE_NOT_FOUND', 'CASE_NOT_FOUND'],
      get_report: ['REPORT_NOT_FOUND'],
      list_reports: [],
      export_report: ['REPORT_NOT_FOUND', 'UNKNOWN_FORMAT', 'EXPORT_FAILED'],
    };
    /** Every agent-facing tool has an entry in TOOL_ERRORS (a new tool must add its error codes there). */
    const TOOL_COUNT = Object.keys(TOOL_ERRORS).length;

    it('lists the 28 spec tools (plus the declared extras) with unique names, object input schemas and non-empty descriptions', () => {
      const tools = fx.pipeline.listTools();
      assert.equal(tools.length, TOOL_COUNT);
      assert.equal(new Set(tools.map((t) => t.name)).size, TOOL_COUNT);
      for (const t of tools) {
        assert.match(t.name, /^[a-z][a-z_]*$/, t.name);
        assert.equal(t.inputSchema.type, 'object', t.name);
        assert.equal(t.inputSchema.additionalProperties, false, `${t.name} rejects unknown keys`);
        assert.equal(typeof t.description, 'string');
        assert.ok(t.description.trim().length >= 20, `${t.name} has a real description`);
        assert.ok(t.title.trim().length > 0, t.name);
      }
    });

    it("every tool's description names the errors it can fail with", () => {
      const tools = fx.pipeline.listTools();
      assert.deepEqual(tools.map((t) => t.name).sort(), Object.keys(TOOL_ERRORS).sort());
      for (const t of tools) {
        for (const code of TOOL_ERRORS[t.name]!) assert.ok(t.description.includes(code), `${t.name} description should mention ${code}: ${t.description}`);
      }
    });

    it('the listing is JSON-serialisable and stable across calls', () => {
      const a = fx.pipeline.listTools();
      const b = fx.pipeline.listTools();
      assert.deepEqual(JSON.parse(JSON.stringify(a)), JSON.parse(JSON.stringify(b)));
      assert.equal(JSON.parse(JSON.stringify(a)).length, TOOL_COUNT);
    });
  });
});
