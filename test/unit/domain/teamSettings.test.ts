/**
 * Blind coding (issue 16 item 5; src/domain/teamSettings.ts): the read scope computed from the team setting and
 * the caller, and the scoped repository every read tool gets, on a real sql.js project through the one pipeline.
 * Three coders code the same passage: the researcher Ana (the local UI), a second human coder Bo (the reviewer
 * token's researcher role under another coder name) and an agent that calls itself "Ana". The expected counts and
 * owners are written out by hand from the codings made here.
 */
import assert from 'node:assert/strict';
import type { Caller } from '../../../src/agent/pipeline';
import { DEFAULT_TEAM_SETTINGS, isVisible, readScopeFor, type TeamSettings } from '../../../src/domain/teamSettings';
import { openFixture, type Fixture } from './projectFixture';

const ANA: Caller = { session_id: 'local', client_type: 'LOCAL_UI', client_name: 'vscode', user: 'Ana' };
const BO: Caller = { session_id: 'sess-bo', client_type: 'REST_CLIENT', client_name: 'curl', user: 'Bo', researcher: true };
/** an agent whose coder name collides with the researcher's: its role keeps it apart */
const AGENT_ANA: Caller = { session_id: 'sess-agent', client_type: 'ASSISTANT_A_CLI', client_name: 'claude-code', user: 'Ana' };
const TEXT = 'We grew beans together every spring. The council never came.';

describe('blind coding: read scope (src/domain/teamSettings.ts)', () => {
  const on = (lead: string | null): TeamSettings => ({ ...DEFAULT_TEAM_SETTINGS, blind: true, lead });

  it("is everything while blind coding is off, and for the lead; else the caller's own codings", () => {
    assert.equal(readScopeFor(DEFAULT_TEAM_SETTINGS, { user: 'Bo', role: 'researcher' }), null);
    assert.equal(readScopeFor(on('Ana'), { user: 'Ana', role: 'researcher' }), null);
    assert.deepEqual(readScopeFor(on('Ana'), { user: 'Bo', role: 'researcher' }), { coder: 'Bo', role: 'researcher' });
    assert.deepEqual(readScopeFor(on('Ana'), { user: 'Bo' }), { coder: 'Bo', role: 'researcher' }, 'no role: the researcher');
    // an agent named like the lead does not lead
    assert.deepEqual(readScopeFor(on('Ana'), { user: 'Ana', role: 'agent' }), { coder: 'Ana', role: 'agent' });
    assert.deepEqual(readScopeFor(on(null), { user: 'Ana', role: 'researcher' }), { coder: 'Ana', role: 'researcher' }, 'no lead: nobody sees all');
  });

  it("a coding is visible when owner and role match; a coding from before roles is the researcher's", () => {
    const scope = { coder: 'Ana', role: 'researcher' as const };
    assert.equal(isVisible(scope, { owner: 'Ana', coder_role: 'researcher' }), true);
    assert.equal(isVisible(scope, { owner: 'Ana', coder_role: null }), true);
    assert.equal(isVisible(scope, { owner: 'Ana', coder_role: 'agent' }), false);
    assert.equal(isVisible(scope, { owner: 'Bo', coder_role: 'researcher' }), false);
    assert.equal(isVisible({ coder: 'Ana', role: 'agent' }, { owner: 'Ana', coder_role: null }), false);
    assert.equal(isVisible(null, { owner: 'anyone', coder_role: 'agent' }), true);
  });
});

describe('blind coding through the pipeline (set_blind_coding, get_team_settings, scoped reads)', () => {
  let fx: Fixture;
  let sourceId = 0;
  let belonging = 0;
  let place = 0;

  before(async () => {
    fx = await openFixture();
    sourceId = (await fx.ok('add_text_source', { name: 'interview-01', content: TEXT }, ANA)).source_id;
    belonging = (await fx.ok('create_code', { name: 'Belonging' }, ANA)).code_id;
    place = (await fx.ok('create_code', { name: 'Place' }, ANA)).code_id;
    // the same passage "We grew beans together", coded differently by each coder
    await fx.ok('apply_code', { code_id: belonging, source_id: sourceId, start_position: 0, end_position: 23 }, ANA);
    await fx.ok('apply_code', { code_id: place, source_id: sourceId, start_position: 0, end_position: 23 }, BO);
    await fx.ok('apply_code', { code_id: place, source_id: sourceId, start_position: 3, end_position: 14 }, BO);
    await fx.ok('apply_code', { code_id: belonging, source_id: sourceId, start_position: 8, end_position: 23 }, AGENT_ANA);
  });
  after(() => fx.close());

  const owners = async (caller: Caller) =>
    ((await fx.ok('list_segments', {}, caller)).segments as { start_pos: number; end_pos: number; coder: string; coder_role: string }[]).map(
      (s) => `${s.coder}/${s.coder_role} ${s.start_pos}-${s.end_pos}`,
    );
  const counts = async (caller: Caller) =>
    Object.fromEntries(((await fx.ok('list_codes', {}, caller)).codes as { name: string; segment_count: number }[]).map((c) => [c.name, c.segment_count]));

  it('before blind coding everyone sees every coding', async () => {
    assert.equal((await fx.ok('get_team_settings', {}, BO)).blind_coding, false);
    for (const caller of [ANA, BO, AGENT_ANA]) {
      assert.deepEqual(await owners(caller), ['Ana/researcher 0-23', 'Bo/researcher 0-23', 'Bo/researcher 3-14', 'Ana/agent 8-23']);
      assert.deepEqual(await counts(caller), { Belonging: 2, Place: 2 });
    }
  });

  it('with blind coding on, each coder sees only their own codings; the lead sees all', async () => {
    const set = await fx.ok('set_blind_coding', { enabled: true, lead: 'Ana' }, ANA);
    assert.deepEqual([set.blind_coding, set.lead, set.updated_by, set.you.is_lead, set.you.sees], [true, 'Ana', 'Ana', true, 'all']);
    assert.equal(set.blind_since, '2026-01-02T03:04:05.678Z');

    assert.deepEqual(await owners(BO), ['Bo/researcher 0-23', 'Bo/researcher 3-14']);
    assert.deepEqual(await owners(AGENT_ANA), ['Ana/agent 8-23']);
    assert.deepEqual(await owners(ANA), ['Ana/researcher 0-23', 'Bo/researcher 0-23', 'Bo/researcher 3-14', 'Ana/agent 8-23']);
    // list_codes is memoized: the answer differs per coder all the same
    assert.deepEqual(await counts(BO), { Belonging: 0, Place: 2 });
    assert.deepEqual(await counts(AGENT_ANA), { Belonging: 1, Place: 0 });
    assert.deepEqual(await counts(ANA), { Belonging: 2, Place: 2 });
    assert.equal((await fx.ok('get_code', { code_id: place }, AGENT_ANA)).segment_count, 0);
    assert.equal((await fx.ok('list_segments_for_source', { source_id: sourceId }, BO)).count, 2);
    const boSource = ((await fx.ok('list_sources', {}, BO)).sources as { segment_count: number }[])[0]!;
    assert.equal(boSource.segment_count, 2);

    const retrieved = await fx.ok('retrieve_segments', { code_ids: [belonging, place] }, BO);
    assert.deepEqual(
      (retrieved.passages as { coders: string[]; start_pos: number; end_pos: number }[]).map((p) => [p.start_pos, p.end_pos, p.coders]),
      [
        [0, 23, ['Bo']],
        [3, 14, ['Bo']],
      ],
    );
    // search hits: the lexical similarity search over coded segments finds only the caller's own
    const hits = async (caller: Caller) =>
      ((await fx.ok('search_semantic', { query: 'beans' }, caller)).matches as { start_pos: number; end_pos: number; codes: { code_name: string }[] }[])
        .map(
          (m) =>
            `${m.start_pos}-${m.end_pos} ${m.codes
              .map((c) => c.code_name)
              .sort()
              .join('+')}`,
        )
        .sort();
    assert.deepEqual(await hits(AGENT_ANA), ['8-23 Belonging']);
    assert.deepEqual(await hits(BO), ['0-23 Place', '3-14 Place']);
    assert.deepEqual(await hits(ANA), ['0-23 Belonging+Place', '3-14 Place', '8-23 Belonging']);
    // another coder's segment named by id is not found
    const boSegment = ((await fx.ok('list_segments', {}, BO)).segments as { segment_id: number }[])[0]!.segment_id;
    await fx.fails('find_similar_segments', { segment_id: boSegment }, 'SEGMENT_NOT_FOUND', AGENT_ANA);
    assert.equal((await fx.ok('find_similar_segments', { segment_id: boSegment }, BO)).segment.segment_id, boSegment);
    const context = await fx.ok('get_project_context', {}, BO);
    assert.equal(context.segment_count, 2, "the project's totals count Bo's codings only");
    const mine = await fx.ok('get_team_settings', {}, BO);
    assert.deepEqual(mine.you, { coder: 'Bo', coder_role: 'researcher', is_lead: false, sees: 'own_codings' });
  });

  it("writes still see every coding: Bo coding Ana's exact range adds a coding of Bo's and keeps Ana's", async () => {
    // Bo applies Belonging to Ana's exact range: a new coding of Bo's, Ana's stays
    await fx.ok('apply_code', { code_id: belonging, source_id: sourceId, start_position: 0, end_position: 23 }, BO);
    assert.deepEqual(await counts(BO), { Belonging: 1, Place: 2 });
    assert.deepEqual(await counts(ANA), { Belonging: 3, Place: 2 });
  });

  it('only the lead ends blind coding or hands the lead on; ending it restores every view', async () => {
    await fx.fails('set_blind_coding', { enabled: false }, 'APPROVAL_FORBIDDEN', BO);
    await fx.fails('end_blind_coding', {}, 'APPROVAL_FORBIDDEN', BO);
    await fx.fails('set_blind_coding', { enabled: true, lead: 'Bo' }, 'APPROVAL_FORBIDDEN', BO);
    await fx.fails('set_blind_coding', { enabled: true, lead: '   ' }, 'INVALID_ARGUMENTS', ANA);
    assert.equal((await fx.ok('get_team_settings', {}, ANA)).blind_coding, true, 'the refused calls changed nothing');

    const ended = await fx.ok('end_blind_coding', {}, ANA);
    assert.deepEqual([ended.blind_coding, ended.lead], [false, 'Ana']);
    assert.deepEqual(await counts(BO), { Belonging: 3, Place: 2 });
    assert.equal((await owners(AGENT_ANA)).length, 5);
  });
});
