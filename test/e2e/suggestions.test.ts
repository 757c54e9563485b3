/**
 * End-to-end test of the suggestion tools (HTTP spec, section 4: AI code suggestions, AI text coding,
 * batch operations) over HTTP against the real built CLI (`npm run build` first): an agent records
 * suggestions, the researcher decides them, the suggestion life cycle survives a server restart, batch
 * status follows partial approval, a second approval is idempotent, and each new error code comes with
 * its HTTP status. Positions are found in the test's own text (no astral characters: UTF-16 = code points).
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { AS_AGENT, callTool, startServer, tmpDir, type ServerProcess } from '../helpers/serverProcess';

const TEXT = [
  'Interview 09',
  '',
  '[00:00:01] INTERVIEWER: How is the watering going?',
  '',
  '[00:00:04] ROSA: We argue about the hose rota every week and the water tank runs dry.',
  '',
  '[00:00:12] INTERVIEWER: And the council?',
  '',
  '[00:00:15] ROSA: The council wants three forms before we can build a shed, and permission takes months.',
  '',
].join('\n');

function at(part: string): { start_pos: number; end_pos: number } {
  const i = TEXT.indexOf(part);
  assert.ok(i >= 0, part);
  return { start_pos: i, end_pos: i + part.length };
}

describe('suggestions over HTTP (real CLI), across a restart', function () {
  this.timeout(120_000);
  let dir = '';
  let project = '';
  let server: ServerProcess | undefined;
  let base = '';

  /** Calls a tool as the researcher (or as the agent) and returns the envelope's data, asserting `status`. */
  const call = async (name: string, args: Record<string, unknown>, opts: { agent?: boolean; status?: number } = {}) => {
    const r = await callTool(base, name, args, opts.agent ? AS_AGENT : {});
    assert.equal(r.status, opts.status ?? 200, `${name}: ${JSON.stringify(r.body)}`);
    return r.body;
  };

  before(async () => {
    dir = tmpDir('marginalia-suggestions-e2e-');
    project = path.join(dir, 'study.qda');
    server = await startServer(project);
    base = server.base;
  });

  after(async () => {
    if (server) await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("records an agent's suggestions, applies the researcher's approvals, and keeps everything across a restart", async () => {
    const source = (await call('add_text_source', { name: 'Rosa', content: TEXT })).data.source_id;
    const water = (await call('create_code', { name: 'Water disputes', color: '#4E79A7', memo: 'Arguments about watering, hoses and the tank' })).data.code_id;
    const council = (await call('create_code', { name: 'Council bureaucracy', color: '#E15759', memo: 'Forms and permission from the council' })).data.code_id;

    // the agent proposes
    const code = (await call('suggest_new_code', { name: 'Shared tools', rationale: 'tools are lent' }, { agent: true })).data;
    assert.deepEqual([code.status, code.requires_approval], ['pending_approval', true]);
    const single = (
      await call(
        'suggest_code_application',
        { source_id: source, code_id: water, ...at('We argue about the hose rota every week and the water tank runs dry.'), rationale: 'hose rota' },
        { agent: true },
      )
    ).data;
    const range = at('The council wants three forms before we can build a shed, and permission takes months.');
    const ranked = (await call('suggest_codes_for_range', { source_id: source, ...range }, { agent: true })).data;
    assert.equal(ranked.suggestions[0].code_id, council, 'forms, permission, council');
    const batch = (
      await call(
        'suggest_batch_coding',
        {
          code_id: water,
          rationale: 'watering',
          segments: [at('How is the watering going?'), at('We argue about the hose rota every week')].map((r) => ({ source_id: source, ...r })),
        },
        { agent: true },
      )
    ).data;

    // the researcher decides part of it
    await call('approve_coding_suggestion', { suggestion_id: batch.suggestions[1].suggestion_id });
    let st = (await call('get_suggestion_batch_status', { batch_id: batch.batch_id })).data;
    assert.deepEqual([st.status, st.pending_count, st.applied_count], ['partially_reviewed', 1, 1]);
    await call('reject_coding_suggestion', { suggestion_id: single.suggestion_id, reason: 'too long', feedback: 'code the clause' });

    // error codes and their HTTP statuses
    const nf = await callTool(base, 'approve_suggestion', { suggestion_id: 987654 });
    assert.deepEqual([nf.status, nf.body.error_code], [404, 'SUGGESTION_NOT_FOUND']);
    const bnf = await callTool(base, 'get_suggestion_batch_status', { batch_id: 987654 });
    assert.deepEqual([bnf.status, bnf.body.error_code], [404, 'BATCH_NOT_FOUND']);
    const decided = await callTool(base, 'approve_coding_suggestion', { suggestion_id: single.suggestion_id });
    assert.deepEqual([decided.status, decided.body.error_code], [409, 'SUGGESTION_ALREADY_DECIDED']);
    const pos = await callTool(base, 'suggest_code_application', { source_id: source, code_id: water, start_pos: 0, end_pos: TEXT.length + 5 });
    assert.deepEqual([pos.status, pos.body.error_code], [400, 'INVALID_POSITION']);

    const before = {
      codes: (await call('list_pending_suggestions', {})).data,
      codings: (await call('list_pending_coding_suggestions', {})).data,
      batch: (await call('get_suggestion_batch_status', { batch_id: batch.batch_id })).data,
      range: (await call('get_suggestion_batch_status', { batch_id: ranked.batch_id })).data,
    };

    // restart the server on the same project
    assert.equal(await server!.stop(), 0);
    server = await startServer(project);
    base = server.base;
    assert.deepEqual((await call('list_pending_suggestions', {})).data, before.codes);
    assert.deepEqual((await call('list_pending_coding_suggestions', {})).data, before.codings);
    assert.deepEqual((await call('get_suggestion_batch_status', { batch_id: batch.batch_id })).data, before.batch);
    assert.deepEqual((await call('get_suggestion_batch_status', { batch_id: ranked.batch_id })).data, before.range);
    assert.equal(before.codes.suggestions[0].suggestion_id, code.suggestion_id);

    // decisions after the restart, and their idempotence
    const first = (await call('approve_batch_coding', { batch_id: batch.batch_id })).data;
    assert.deepEqual([first.status, first.batch_status, first.applied_count, first.already], ['applied', 'completed', 2, false]);
    const second = (await call('approve_batch_coding', { batch_id: batch.batch_id })).data;
    assert.deepEqual([second.applied_count, second.already], [2, true]);
    const accepted = (await call('respond_to_code_suggestion', { suggestion_batch_id: ranked.batch_id, response: 'accept', selected_code_ids: [council] }))
      .data;
    assert.deepEqual([accepted.status, accepted.applied_count], ['accepted', 1]);
    const created = (await call('approve_suggestion', { suggestion_id: code.suggestion_id })).data;
    assert.equal(created.status, 'created');
    const segs = (await call('list_segments_for_source', { source_id: source })).data;
    assert.deepEqual(
      segs.segments.map((s: any) => [s.code_id, s.text, s.memo]),
      [
        [water, 'How is the watering going?', 'watering'],
        [water, 'We argue about the hose rota every week', 'watering'],
        [council, 'The council wants three forms before we can build a shed, and permission takes months.', ranked.suggestions[0].rationale],
      ],
    );
    st = (await call('get_suggestion_batch_status', { batch_id: batch.batch_id })).data;
    assert.ok(st.suggestions.every((s: any) => s.suggested_by_session && s.approved_by_session && s.provenance?.suggestion_id === s.suggestion_id));
    assert.notEqual(st.suggestions[0].suggested_by_session, st.suggestions[0].approved_by_session, 'the agent suggested, the researcher approved');
  });
});
