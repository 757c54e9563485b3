/**
 * End-to-end test of the suggestion tools that test/e2e/suggestions.test.ts does not drive, over HTTP against
 * the real built CLI (`bin/marginalia.js serve`; run `npm run build` first): analyze_uncoded_text,
 * analyze_content_for_codes, auto_suggest_codes, detect_duplicate_codes, suggest_merge_codes, approve_merge
 * and find_similar_content. One server for the file; the `it` blocks run in order.
 *
 * Expectations come from the test's own texts: the uncoded ranges are the speaker turns' texts (found with the
 * test's own regular expression), cut around what the test codes; a long unlabelled paragraph is cut at sentence
 * ends into parts of at most 800 code points; duplicate codes are the name pairs the test made alike (with
 * the memo weighing 40% when both codes have one); a merge moves exactly the segments the test applied.
 * Agent behaviour follows the default trust table: recording suggestions (suggest_merge_codes,
 * auto_suggest_codes) runs at once, approve_merge by an agent is refused (APPROVAL_FORBIDDEN: deciding is the researcher's).
 *
 * Error codes with their HTTP statuses: MERGE_SAME_CODE 400, CODE_NOT_FOUND 404, SOURCE_NOT_FOUND 404,
 * SUGGESTION_NOT_FOUND 404, SUGGESTION_ALREADY_DECIDED 409, INVALID_POSITION 400 (a source without text),
 * INVALID_ARGUMENTS 400. Failing calls are checked to leave codes, suggestions, segments and the event log as
 * they were. The texts are ASCII, so UTF-16 indices are code points.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { AS_AGENT, startServer, tmpDir, type ServerProcess } from '../helpers/serverProcess';
import { toolClient } from '../helpers/toolClient';

const TEXT = [
  'Interview 12',
  '',
  'INTERVIEWER: How is the watering going?',
  '',
  'ROSA: We argue about the hose rota every week and the water tank runs dry.',
  '',
  'INTERVIEWER: And the council?',
  '',
  'ROSA: The council wants three forms before we can build a shed, and permission takes months.',
  '',
  'INTERVIEWER: Anything else?',
  '',
  'ROSA: The shed roof of the neighbours leaks when it rains, so the seedlings rot.',
  '',
].join('\n');

/** Twelve sentences of 83 characters in one paragraph without speaker labels: 1,007 characters. */
const ESSAY = Array.from(
  { length: 12 },
  (_, i) => `Sentence ${String(i + 1).padStart(2, '0')} tells how the community garden changed the street over many years.`,
).join(' ');

const UNKNOWN = 987654;

/** The speaker turns of `text`: the range of each turn's words after "NAME: ". */
function turns(text: string): { speaker: string; start_pos: number; end_pos: number; text: string }[] {
  const out = [];
  for (const m of text.matchAll(/^([A-Z]+): (.+)$/gm)) {
    const start = (m.index as number) + (m[1] as string).length + 2;
    out.push({ speaker: m[1] as string, start_pos: start, end_pos: start + (m[2] as string).length, text: m[2] as string });
  }
  return out;
}

function at(text: string, part: string): { start_pos: number; end_pos: number } {
  const i = text.indexOf(part);
  assert.ok(i >= 0, `"${part}" not in the text`);
  return { start_pos: i, end_pos: i + part.length };
}

describe('AI suggestion tools over HTTP (real CLI)', function () {
  this.timeout(120_000);
  let dir = '';
  let server: ServerProcess | undefined;
  let base = '';
  const t = toolClient(() => base);
  const src: Record<string, any> = {};
  const code: Record<string, any> = {};

  /** Codes, pending suggestions and the sources' segments: what a failing call must leave unchanged. */
  const snapshot = async () => ({
    codes: await t.ok('list_codes'),
    suggestions: await t.ok('list_pending_suggestions'),
    codings: await t.ok('list_pending_coding_suggestions'),
    rosa: await t.ok('list_segments_for_source', { source_id: src.rosa }),
    essay: await t.ok('list_segments_for_source', { source_id: src.essay }),
  });

  before(async () => {
    dir = tmpDir('marginalia-ai-e2e-');
    server = await startServer(path.join(dir, 'study.qda'));
    base = server.base;
    src.rosa = (await t.ok('add_text_source', { name: 'Rosa', content: TEXT })).source_id;
    src.essay = (await t.ok('add_text_source', { name: 'Essay', content: ESSAY })).source_id;
    fs.writeFileSync(path.join(dir, 'walk.mp3'), 'ID3 stand-in');
    src.audio = (await t.ok('import_source', { file_path: path.join(dir, 'walk.mp3') })).source_id;
    for (const [key, name, memo] of [
      ['water', 'Water', 'watering, hoses and the water tank'],
      ['council', 'Council', 'forms and permission from the council'],
      ['waterDisputes', 'Water disputes', null],
      ['disputesOverWater', 'Disputes over water', null],
      ['tankRepairs', 'Tank repairs', 'fixing the tank'],
      ['repairsOfTank', 'Repairs of tank', 'money for the council'],
    ] as const) {
      code[key] = (await t.ok('create_code', { name, color: '#4E79A7', ...(memo ? { memo } : {}) })).code_id;
    }
  });

  after(async () => {
    if (server) await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('analyze_uncoded_text returns the heading paragraph and one range per speaker turn (labels excluded), never the whole document', async () => {
    const a = await t.ok('analyze_uncoded_text', { source_id: src.rosa });
    const expected = [
      { speaker: null, start_pos: 0, end_pos: 'Interview 12'.length, text: 'Interview 12', unit: 'paragraph' },
      ...turns(TEXT).map((x) => ({ ...x, unit: 'turn' })),
    ];
    assert.equal(expected.length, 7);
    assert.deepEqual(
      a.uncoded_ranges.map((r: any) => [r.start_pos, r.end_pos, r.speaker, r.unit]),
      expected.map((x) => [x.start_pos, x.end_pos, x.speaker, x.unit]),
    );
    for (const [i, r] of a.uncoded_ranges.entries()) assert.equal(r.text_excerpt, expected[i]?.text);
    assert.deepEqual([a.total_length, a.coded_length, a.uncoded_percentage, a.segment_count, a.range_count], [TEXT.length, 0, 100, 0, 7]);
    // paging
    const page = await t.ok('analyze_uncoded_text', { source_id: src.rosa, offset: 4, limit: 1 });
    assert.deepEqual([page.uncoded_ranges.length, page.uncoded_ranges[0].start_pos, page.has_more], [1, expected[4]?.start_pos, true]);
  });

  it('analyze_uncoded_text cuts a paragraph longer than 800 code points at sentence ends', async () => {
    assert.ok(ESSAY.length > 800);
    const a = await t.ok('analyze_uncoded_text', { source_id: src.essay });
    assert.ok(a.uncoded_ranges.length >= 2, 'more than one range');
    let covered = '';
    for (const r of a.uncoded_ranges) {
      assert.equal(r.unit, 'sentences');
      assert.ok(r.length <= 800, `${r.length} code points`);
      const part = ESSAY.slice(r.start_pos, r.end_pos);
      assert.match(part, /^Sentence \d\d .*years\.$/, 'starts and ends at a sentence boundary');
      covered += `${covered ? ' ' : ''}${part}`;
    }
    assert.equal(covered, ESSAY, 'the ranges cover the paragraph in order');
  });

  it('after coding part of a turn, only the rest of it is uncoded', async () => {
    await t.ok('apply_code', { code_id: code.waterDisputes, source_id: src.rosa, ...at(TEXT, 'We argue about the hose rota every week') });
    const a = await t.ok('analyze_uncoded_text', { source_id: src.rosa });
    assert.deepEqual([a.coded_length, a.segment_count, a.range_count], ['We argue about the hose rota every week'.length, 1, 7]);
    const coded = at(TEXT, 'We argue about the hose rota every week');
    const rest = a.uncoded_ranges.find((r: any) => r.start_pos >= coded.end_pos && r.end_pos <= at(TEXT, 'and the water tank runs dry.').end_pos);
    assert.ok(rest, JSON.stringify(a.uncoded_ranges));
    assert.equal(TEXT.slice(rest.start_pos, rest.end_pos).trim(), 'and the water tank runs dry.');
    assert.ok(
      a.uncoded_ranges.every((r: any) => r.end_pos <= coded.start_pos || r.start_pos >= coded.end_pos),
      'no range overlaps the coding',
    );
  });

  it('analyze_content_for_codes pairs each uncoded range with its best code and lists frequent words no code covers', async () => {
    const a = await t.ok('analyze_content_for_codes', { source_id: src.rosa });
    const best = (part: string) => a.uncoded_segments.find((s: any) => TEXT.slice(s.start_pos, s.end_pos).includes(part))?.best_code?.code_name ?? null;
    assert.equal(best('The council wants three forms'), 'Council');
    // "watering" is stemmed to "water": one of the codes named with it
    assert.ok(['Water', 'Water disputes', 'Disputes over water'].includes(best('How is the watering going?')), best('How is the watering going?'));
    assert.equal(best('Anything else?'), null, 'no code fits');
    // "shed" is in two turns and in no code's name or memo; "council" and "water" are covered
    const terms = a.uncovered_terms.map((x: any) => x.term);
    assert.deepEqual(
      a.uncovered_terms.find((x: any) => x.term === 'shed'),
      { term: 'shed', unit_count: 2 },
    );
    for (const covered of ['council', 'water', 'forms', 'tank']) assert.ok(!terms.includes(covered), covered);
    assert.equal(a.segment_count, 1);
    // writes nothing
    assert.deepEqual((await t.ok('list_pending_suggestions')).suggestions ?? [], []);
  });

  it('refuses unknown sources (404) and sources without text (INVALID_POSITION, 400), writing nothing', async () => {
    await t.writesNothing(
      snapshot,
      async () => {
        for (const tool of ['analyze_uncoded_text', 'analyze_content_for_codes', 'auto_suggest_codes']) {
          await t.fails(tool, { source_id: UNKNOWN }, 'SOURCE_NOT_FOUND');
          await t.fails(tool, { source_id: src.audio }, 'INVALID_POSITION');
        }
        await t.fails('auto_suggest_codes', { source_id: src.rosa, min_confidence: 101 }, 'INVALID_ARGUMENTS');
        await t.fails('find_similar_content', { search_text: 'water', code_id: UNKNOWN }, 'CODE_NOT_FOUND');
        await t.fails('find_similar_content', { search_text: 'water', source_id: UNKNOWN }, 'SOURCE_NOT_FOUND');
        await t.fails('find_similar_content', { search_text: '' }, 'INVALID_ARGUMENTS');
        await t.fails('suggest_merge_codes', { source_code_id: code.water, target_code_id: code.water, rationale: 'same' }, 'MERGE_SAME_CODE');
        await t.fails('suggest_merge_codes', { source_code_id: UNKNOWN, target_code_id: code.water, rationale: 'x' }, 'CODE_NOT_FOUND');
        await t.fails('suggest_merge_codes', { source_code_id: code.water, target_code_id: UNKNOWN, rationale: 'x' }, 'CODE_NOT_FOUND');
        await t.fails('approve_merge', { merge_suggestion_id: UNKNOWN }, 'SUGGESTION_NOT_FOUND');
        await t.fails('detect_duplicate_codes', { threshold: 0 }, 'INVALID_ARGUMENTS');
      },
      'failing suggestion calls',
    );
  });

  it('auto_suggest_codes proposes the best code per uncoded turn as one pending batch, skipping short parts; again, it skips what is pending', async () => {
    const seq = await t.headSeq();
    const a = await t.ok('auto_suggest_codes', { source_id: src.rosa }, AS_AGENT);
    assert.ok(a.batch_id, 'a batch was made');
    const byRange = Object.fromEntries(a.suggestions.map((s: any) => [TEXT.slice(s.start_pos, s.end_pos), s.code_name]));
    assert.equal(byRange[turns(TEXT)[3]?.text as string], 'Council');
    const units = turns(TEXT);
    for (const s of a.suggestions) {
      assert.ok(
        units.some((u) => s.start_pos >= u.start_pos && s.end_pos <= u.end_pos),
        `each suggestion lies in one turn: ${JSON.stringify(s)}`,
      );
      assert.ok(s.confidence >= 30, 'the default min_confidence');
      assert.ok(s.rationale.length > 0);
    }
    assert.ok(!a.suggestions.some((s: any) => s.end_pos - s.start_pos >= TEXT.length / 2), 'never the whole document');
    // "And the council?" and "Anything else?" have fewer than three content words
    assert.ok(a.skipped_short >= 2);
    const st = await t.ok('get_suggestion_batch_status', { batch_id: a.batch_id });
    assert.deepEqual([st.status, st.total_count, st.pending_count], ['pending_review', a.total_suggested, a.total_suggested]);
    assert.ok(st.suggestions.every((s: any) => s.suggested_by_session && s.approved_by_session === null));
    const created = (await t.events(seq, 'suggestion.*')).filter((e) => e.event_type === 'suggestion.batch_created');
    assert.deepEqual(
      created.map((e) => e.aggregate_id),
      [String(a.batch_id)],
    );
    // nothing is coded yet
    assert.equal((await t.ok('list_segments_for_source', { source_id: src.rosa })).count, 1);
    const again = await t.ok('auto_suggest_codes', { source_id: src.rosa });
    assert.deepEqual([again.batch_id, again.total_suggested, again.skipped_pending], [null, 0, a.total_suggested]);
    // the researcher approves the batch: the uncoded ranges shrink accordingly
    const before = await t.ok('analyze_uncoded_text', { source_id: src.rosa });
    const done = await t.ok('approve_batch_coding', { batch_id: a.batch_id });
    assert.equal(done.applied_count, a.total_suggested);
    const after = await t.ok('analyze_uncoded_text', { source_id: src.rosa });
    assert.equal(after.segment_count, 1 + a.total_suggested);
    assert.ok(after.coded_length > before.coded_length);
  });

  it('detect_duplicate_codes finds token-level duplicates (stemmed, any word order) and weighs memos', async () => {
    await t.ok('apply_code', { code_id: code.waterDisputes, source_id: src.rosa, ...at(TEXT, 'water tank runs dry') });
    const pairs = (r: any) => r.candidates.map((c: any) => [[c.code_a_name, c.code_b_name].sort().join(' ~ '), c.similarity]);
    // default threshold 0.8: "Water disputes" = "Disputes over water" (same stems, "over" a stop word)
    const d = await t.ok('detect_duplicate_codes');
    assert.equal(d.threshold, 0.8);
    assert.deepEqual(pairs(d), [['Disputes over water ~ Water disputes', 1]]);
    assert.deepEqual(d.candidates[0].shared_terms.sort(), ['disputes', 'water']);
    // the less used code goes into the more used one ("Water disputes" has 2 segments)
    assert.deepEqual(d.candidates[0].suggested_merge, { source_code_id: code.disputesOverWater, target_code_id: code.waterDisputes });
    assert.equal(d.codes_analyzed, 6);
    // "Tank repairs" and "Repairs of tank" have the same name words but unrelated memos: 0.6 x 1 + 0.4 x 0 = 0.6
    const low = await t.ok('detect_duplicate_codes', { threshold: 0.6 });
    const tank = low.candidates.find((c: any) => [c.code_a_id, c.code_b_id].includes(code.tankRepairs));
    assert.ok(tank, JSON.stringify(low.candidates));
    assert.deepEqual([tank.name_similarity, tank.memo_similarity], [1, 0]);
    assert.ok(Math.abs(tank.similarity - 0.6) < 1e-9, String(tank.similarity));
    assert.equal(
      (await t.ok('detect_duplicate_codes', { threshold: 0.61 })).candidates.some((c: any) => [c.code_a_id, c.code_b_id].includes(code.tankRepairs)),
      false,
    );
    assert.equal((await t.ok('detect_duplicate_codes', { threshold: 0.6, limit: 1 })).candidates.length, 1);
  });

  it('suggest_merge_codes records a merge for approval; approve_merge moves the segments and deletes the merged code', async () => {
    const seq = await t.headSeq();
    // an agent records the suggestion at once (approval category: auto); nothing is merged yet
    const s = await t.ok(
      'suggest_merge_codes',
      { source_code_id: code.disputesOverWater, target_code_id: code.waterDisputes, rationale: 'same idea, two names' },
      AS_AGENT,
    );
    assert.deepEqual(
      [s.status, s.requires_approval, s.created, s.merge_source_id, s.merge_target_id],
      ['pending_approval', true, true, code.disputesOverWater, code.waterDisputes],
    );
    const same = await t.ok(
      'suggest_merge_codes',
      { source_code_id: code.disputesOverWater, target_code_id: code.waterDisputes, rationale: 'again' },
      AS_AGENT,
    );
    assert.deepEqual([same.created, same.merge_suggestion_id], [false, s.merge_suggestion_id]);
    assert.equal((await t.ok('get_code', { code_id: code.disputesOverWater })).name, 'Disputes over water');
    const pending = await t.ok('list_pending_suggestions');
    assert.deepEqual(
      pending.merge_suggestions.map((x: any) => [x.merge_suggestion_id, x.source_code_id, x.target_code_id, x.status, x.rationale]),
      [[s.merge_suggestion_id, code.disputesOverWater, code.waterDisputes, 'pending', 'same idea, two names']],
    );

    // give the merged code two segments, one of them a duplicate of a target segment: both move, the duplicate is dropped
    const dup = at(TEXT, 'water tank runs dry');
    await t.ok('apply_code', { code_id: code.disputesOverWater, source_id: src.rosa, ...dup });
    const moved = await t.ok('apply_code', { code_id: code.disputesOverWater, source_id: src.rosa, ...at(TEXT, 'How is the watering going?') });

    // the agent may not approve: deciding a suggestion is the researcher's alone (403, never queued; issue 14 item 6)
    await t.fails('approve_merge', { merge_suggestion_id: s.merge_suggestion_id }, 'APPROVAL_FORBIDDEN', AS_AGENT);
    assert.equal((await t.ok('get_code', { code_id: code.disputesOverWater })).segment_count, 2, 'not merged');

    const m = await t.ok('approve_merge', { merge_suggestion_id: s.merge_suggestion_id });
    assert.deepEqual(
      [m.status, m.merged_from, m.merged_into, m.segments_moved, m.duplicates_removed, m.already],
      ['merged', code.disputesOverWater, code.waterDisputes, 2, 1, false],
    );
    await t.fails('get_code', { code_id: code.disputesOverWater }, 'CODE_NOT_FOUND');
    const segs = (await t.ok('list_segments_for_source', { source_id: src.rosa })).segments;
    const target = segs
      .filter((x: any) => x.code_id === code.waterDisputes)
      .map((x: any) => x.text)
      .sort();
    assert.deepEqual(target, ['How is the watering going?', 'We argue about the hose rota every week', 'water tank runs dry'].sort());
    assert.ok(
      segs.some((x: any) => x.segment_id === moved.segment_id && x.code_id === code.waterDisputes),
      'the segment itself moved',
    );
    const types = (await t.events(seq)).map((e) => e.event_type);
    assert.ok(types.includes('suggestion.merge_suggested'));
    assert.ok(types.includes('coding.codes_merged'));
    assert.ok(types.includes('suggestion.approved'));

    // approving again writes nothing and returns the stored result
    const seq2 = await t.headSeq();
    const again = await t.ok('approve_merge', { merge_suggestion_id: s.merge_suggestion_id });
    assert.deepEqual([again.already, again.segments_moved], [true, 2]);
    assert.equal(await t.headSeq(), seq2, 'no event');
  });

  it('approve_merge: a rejected suggestion is SUGGESTION_ALREADY_DECIDED (409), a coding suggestion is not a merge (404), a deleted code is CODE_NOT_FOUND (404) and the suggestion stays pending', async () => {
    // the agent suggests, the researcher decides (a session may not approve its own suggestion)
    const r = await t.ok('suggest_merge_codes', { source_code_id: code.repairsOfTank, target_code_id: code.tankRepairs, rationale: 'same words' }, AS_AGENT);
    await t.ok('reject_coding_suggestion', { suggestion_id: r.merge_suggestion_id, reason: 'different memos' });
    await t.writesNothing(
      snapshot,
      () => t.fails('approve_merge', { merge_suggestion_id: r.merge_suggestion_id }, 'SUGGESTION_ALREADY_DECIDED'),
      'approving a rejected merge',
    );

    const coding = await t.ok('suggest_code_application', { source_id: src.rosa, code_id: code.council, ...at(TEXT, 'And the council?') });
    await t.fails('approve_merge', { merge_suggestion_id: coding.suggestion_id }, 'SUGGESTION_NOT_FOUND');

    const gone = (await t.ok('create_code', { name: 'Temporary', color: '#000000' })).code_id;
    const s = await t.ok('suggest_merge_codes', { source_code_id: gone, target_code_id: code.water, rationale: 'tmp' }, AS_AGENT);
    await t.ok('delete_code', { code_id: gone });
    await t.fails('approve_merge', { merge_suggestion_id: s.merge_suggestion_id }, 'CODE_NOT_FOUND');
    const still = (await t.ok('list_pending_suggestions')).merge_suggestions.find((x: any) => x.merge_suggestion_id === s.merge_suggestion_id);
    assert.equal(still?.status, 'pending');
  });

  it('find_similar_content ranks meaning units by BM25; code_id leaves out passages already coded with it', async () => {
    const units = turns(TEXT);
    const councilTurn = units[3] as (typeof units)[number];
    const f = await t.ok('find_similar_content', { search_text: 'council forms permission' });
    assert.equal(f.method, 'bm25');
    assert.deepEqual(
      [f.matches[0].source_id, f.matches[0].start_pos, f.matches[0].end_pos, f.matches[0].text],
      [src.rosa, councilTurn.start_pos, councilTurn.end_pos, councilTurn.text],
    );
    assert.deepEqual(f.matches[0].matched_terms.sort(), ['council', 'forms', 'permission']);
    assert.equal(f.matches[1].text, 'And the council?', 'one matched word ranks lower');
    assert.equal(f.match_count, 2, `no other passage mentions these words: ${JSON.stringify(f.matches.map((m: any) => m.text))}`);
    const scores = f.matches.map((m: any) => m.score);
    assert.deepEqual(
      scores,
      [...scores].sort((a: number, b: number) => b - a),
    );

    // the essay matches only with its own words, and only in its own source
    // every sentence has the words, so every meaning unit of the essay (its parts of at most 800 code points) matches
    const e = await t.ok('find_similar_content', { search_text: 'community garden street', source_id: src.essay, limit: 50 });
    assert.ok(e.matches.length >= 2);
    assert.ok(e.matches.every((m: any) => m.source_id === src.essay && m.text === ESSAY.slice(m.start_pos, m.end_pos) && m.end_pos - m.start_pos <= 800));
    const parts = [...e.matches].sort((a: any, b: any) => a.start_pos - b.start_pos).map((m: any) => m.text);
    assert.equal(parts.join(' '), ESSAY);
    assert.equal((await t.ok('find_similar_content', { search_text: 'community garden street', source_id: src.essay, limit: 1 })).matches.length, 1);
    assert.equal((await t.ok('find_similar_content', { search_text: 'community garden street', source_id: src.rosa })).match_count, 0);

    // once the council turn is coded with Council, code_id Council leaves it out
    await t.ok('apply_code', { code_id: code.council, source_id: src.rosa, start_pos: councilTurn.start_pos, end_pos: councilTurn.end_pos });
    const without = await t.ok('find_similar_content', { search_text: 'council forms permission', code_id: code.council });
    assert.ok(!without.matches.some((m: any) => m.start_pos === councilTurn.start_pos), JSON.stringify(without.matches));
    const withIt = await t.ok('find_similar_content', { search_text: 'council forms permission' });
    assert.deepEqual(
      withIt.matches[0].coded_with.map((c: any) => c.code_id),
      [code.council],
    );
  });

  it('has answered every error code it set out to', () => {
    for (const c of [
      'MERGE_SAME_CODE',
      'CODE_NOT_FOUND',
      'SOURCE_NOT_FOUND',
      'SUGGESTION_NOT_FOUND',
      'SUGGESTION_ALREADY_DECIDED',
      'INVALID_POSITION',
      'INVALID_ARGUMENTS',
    ])
      assert.ok(t.seen.has(c), c);
  });
});
