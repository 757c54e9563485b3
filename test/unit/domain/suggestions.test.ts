/**
 * Suggestions (src/domain/suggestions.ts, suggestionDecisions.ts, codeRanking.ts, similarContent.ts, duplicateCodes.ts,
 * ranking/, textUnits.ts; src/tools/suggestionTools.ts)
 * through the one pipeline on real project files: the life cycle of each kind (new code, coding, merge,
 * batches), the same life cycle across closing and reopening the project, batch status after partial
 * approval, idempotent approval, rejection feedback, provenance, every error code, the ranking measures
 * on hand-built examples, and meaning units split at speaker turns. Expected values are worked out by
 * hand (positions by searching the test's own strings).
 */
import assert from 'node:assert/strict';
import type { Caller, InvokeOutcome } from '../../../src/agent/pipeline';
import { createPipeline, headlessHost, openProjectHandle, type ProjectHandle } from '../../../src/cli/compose';
import { silentLogger } from '../../../src/core/log';
import { checkApprover } from '../../../src/domain/suggestions';
import type { SuggestionRecord } from '../../../src/domain/ports';
import { Bm25Index, bm25Idf, bm25TermWeight } from '../../../src/domain/ranking/bm25';
import { cosine, tfidfVector } from '../../../src/domain/ranking/similarity';
import { tokenize } from '../../../src/domain/ranking/stemmer';
import { dice, diceAtLeast, similarPairs, type SimilarityItem } from '../../../src/domain/ranking/tokenSets';
import { splitUnits } from '../../../src/domain/textUnits';
import { ALICE, FIXED_ISO, fixedClock, openFixture, snapshot, storedEvents, type Fixture } from './projectFixture';

const BOB: Caller = { session_id: 'sess-bob', client_type: 'LOCAL_UI', client_name: 'unit-test', user: 'bob' };
const BLUE = '#4E79A7';

const HEADER = 'Interview 07 — test transcript';
const Q1 = 'How is the watering going this summer?';
const A1 = 'We keep arguing about who waters the beds. Someone left the hose running all night and the water tank was empty by morning.';
const Q2 = 'And the council?';
const A2 = 'The council wants three forms before we can put up a shed. Permission takes months.';
const TRANSCRIPT = `${HEADER}\n\n[00:00:01] INTERVIEWER: ${Q1}\n\n[00:00:05] AMARA: ${A1}\n\n[00:00:20] INTERVIEWER: ${Q2}\n\n[00:00:24] AMARA: ${A2}\n`;

/** [start, end) of `part` in `text` (no astral characters in these texts, so UTF-16 = code points). */
function at(text: string, part: string): [number, number] {
  const i = text.indexOf(part);
  assert.ok(i >= 0, `"${part}" is in the text`);
  return [i, i + part.length];
}

interface Study {
  source: number;
  water: number;
  council: number;
}

/** One transcript and two codes with memos. */
async function study(fx: Fixture): Promise<Study> {
  const source = (await fx.ok('add_text_source', { name: 'Garden talk', content: TRANSCRIPT })).source_id;
  const water = (await fx.ok('create_code', { name: 'Water disputes', color: BLUE, memo: 'Arguments about watering rotas, hoses and the water tank.' }))
    .code_id;
  const council = (await fx.ok('create_code', { name: 'Council bureaucracy', color: BLUE, memo: 'Forms, permissions and delays from the city council.' }))
    .code_id;
  return { source, water, council };
}

/** Calls `name` expecting `code`, and checks that nothing a caller can see changed and nothing was journaled. */
async function failsCleanly(fx: Fixture, name: string, a: unknown, code: string): Promise<InvokeOutcome> {
  const before = await snapshot(fx);
  const rows = fx.handle.store.all('SELECT * FROM suggestions ORDER BY id');
  // decisions come from the researcher (BOB, another session); the suggesting agent is ALICE
  const out = await fx.fails(name, a, code, /^(approve_|respond_to_code_suggestion)/.test(name) ? BOB : undefined);
  assert.deepEqual(await snapshot(fx), before, `${name} failing with ${code} must write nothing`);
  assert.deepEqual(fx.handle.store.all('SELECT * FROM suggestions ORDER BY id'), rows);
  return out;
}

/** Approves with `tool` twice: the second answer is the first with already: true, and writes and emits nothing. */
async function approveTwice(fx: Fixture, tool: string, a: unknown): Promise<{ first: InvokeOutcome; data: any }> {
  const first = await fx.call(tool, a, BOB);
  assert.ok(first.envelope.success, JSON.stringify(first.envelope));
  const firstData = first.envelope.data as any;
  assert.equal(firstData.already, false);
  const journal = fx.handle.store.journalSeq;
  const second = await fx.call(tool, a, BOB);
  assert.ok(second.envelope.success, JSON.stringify(second.envelope));
  const secondData = second.envelope.data as any;
  assert.equal(secondData.already, true);
  assert.deepEqual(second.events, [], 'a repeated approval emits nothing');
  assert.equal(fx.handle.store.journalSeq, journal, 'a repeated approval writes nothing');
  const strip = (d: any) => ({ ...d, already: undefined });
  assert.deepEqual(strip(secondData), strip(firstData), 'the same result');
  return { first, data: firstData };
}

describe('domain/suggestions through the pipeline', () => {
  let fx: Fixture;
  beforeEach(async () => {
    fx = await openFixture();
  });
  afterEach(async () => {
    await fx.close();
  });

  describe('new-code suggestions', () => {
    it('suggest -> list pending -> approve creates the code through createCode; approving again is idempotent', async () => {
      const out = await fx.call('suggest_new_code', {
        name: ' Shared tools ',
        rationale: 'People lend mattocks and hoses',
        memo: 'Lending and borrowing tools',
        confidence: 85,
        sample_contexts: ['borrowed tools'],
      });
      assert.ok(out.envelope.success);
      const s = out.envelope.data as any;
      assert.deepEqual(
        [s.status, s.requires_approval, s.name, s.color, s.rationale, s.confidence, s.created],
        // no colour given: the first palette colour no code uses (the codebook is empty), not QualCoder's #808080
        ['pending_approval', true, 'Shared tools', '#4E79A7', 'People lend mattocks and hoses', 85, true],
      );
      assert.deepEqual(
        out.events.map((e) => [e.event_type, e.aggregate_type, e.aggregate_id]),
        [['suggestion.code_suggested', 'suggestion', String(s.suggestion_id)]],
      );
      assert.equal((await fx.ok('list_codes')).count, 0, 'nothing is in the codebook yet');

      const again = await fx.ok('suggest_new_code', { name: 'shared TOOLS', rationale: 'again' });
      assert.deepEqual([again.suggestion_id, again.created], [s.suggestion_id, false], 'a pending suggestion of the same name is returned');

      const pending = await fx.ok('list_pending_suggestions');
      assert.equal(pending.count, 1);
      const p = pending.suggestions[0];
      assert.deepEqual(
        [p.suggestion_id, p.kind, p.status, p.name, p.memo, p.sample_contexts, p.suggested_by, p.suggested_by_session, p.suggested_at],
        [s.suggestion_id, 'code', 'pending', 'Shared tools', 'Lending and borrowing tools', ['borrowed tools'], 'alice', 'sess-alice', FIXED_ISO],
      );

      const { first, data } = await approveTwice(fx, 'approve_suggestion', { suggestion_id: s.suggestion_id });
      assert.equal(data.status, 'created');
      assert.deepEqual(
        first.events.map((e) => e.event_type),
        ['coding.code_created', 'suggestion.approved'],
      );
      assert.equal(first.events[1]!.payload.code_id, data.code_id);
      assert.equal(first.events[1]!.payload.approved_by_session, 'sess-bob');
      const code = await fx.ok('get_code', { code_id: data.code_id });
      assert.deepEqual(
        [code.name, code.memo, code.color, code.owner, code.session_id],
        ['Shared tools', 'Lending and borrowing tools', '#4E79A7', 'bob', 'sess-bob'],
      );
      assert.equal(data.suggestion.status, 'approved');
      assert.deepEqual([data.suggestion.approved_by, data.suggestion.approved_by_session], ['bob', 'sess-bob']);
      assert.equal((await fx.ok('list_pending_suggestions')).count, 0);
    });

    it('DUPLICATE_NAME when the code exists (at suggestion and at approval), CATEGORY_NOT_FOUND, SUGGESTION_NOT_FOUND', async () => {
      await fx.ok('create_code', { name: 'Trust', color: BLUE });
      await failsCleanly(fx, 'suggest_new_code', { name: 'trust', rationale: 'r' }, 'DUPLICATE_NAME');
      await failsCleanly(fx, 'suggest_new_code', { name: 'Hope', rationale: 'r', category_id: 99 }, 'CATEGORY_NOT_FOUND');
      const s = await fx.ok('suggest_new_code', { name: 'Hope', rationale: 'r' });
      await fx.ok('create_code', { name: 'HOPE', color: BLUE });
      await failsCleanly(fx, 'approve_suggestion', { suggestion_id: s.suggestion_id }, 'DUPLICATE_NAME');
      assert.equal((await fx.ok('list_pending_suggestions')).count, 1, 'a failed approval leaves it pending');
      await failsCleanly(fx, 'approve_suggestion', { suggestion_id: 999 }, 'SUGGESTION_NOT_FOUND');
    });
  });

  describe('merge suggestions', () => {
    it('suggest -> listed -> approve merges through mergeCodes; idempotent; MERGE_SAME_CODE, CODE_NOT_FOUND, SUGGESTION_NOT_FOUND', async () => {
      const { source, water, council } = await study(fx);
      const dup = (await fx.ok('create_code', { name: 'Hose arguments', color: BLUE })).code_id;
      const [s0, e0] = at(TRANSCRIPT, A1);
      await fx.ok('batch_apply_codes', { operations: [{ code_id: dup, source_id: source, start_position: s0, end_position: e0 }] });

      await failsCleanly(fx, 'suggest_merge_codes', { source_code_id: water, target_code_id: water, rationale: 'r' }, 'MERGE_SAME_CODE');
      await failsCleanly(fx, 'suggest_merge_codes', { source_code_id: dup, target_code_id: 404, rationale: 'r' }, 'CODE_NOT_FOUND');
      const out = await fx.call('suggest_merge_codes', { source_code_id: dup, target_code_id: water, rationale: 'Both are about the hose rota' });
      const m = out.envelope.success ? (out.envelope.data as any) : assert.fail('suggest_merge_codes failed');
      assert.deepEqual(
        [m.status, m.merge_source_id, m.merge_target_id, m.source_code_name, m.target_code_name, m.created],
        ['pending_approval', dup, water, 'Hose arguments', 'Water disputes', true],
      );
      assert.deepEqual(
        out.events.map((e) => e.event_type),
        ['suggestion.merge_suggested'],
      );
      const listed = await fx.ok('list_pending_suggestions');
      assert.deepEqual([listed.count, listed.merge_count, listed.merge_suggestions[0].merge_suggestion_id], [0, 1, m.merge_suggestion_id]);
      await failsCleanly(fx, 'approve_merge', { merge_suggestion_id: 12345 }, 'SUGGESTION_NOT_FOUND');
      const wrongKind = await failsCleanly(fx, 'approve_suggestion', { suggestion_id: m.merge_suggestion_id }, 'SUGGESTION_NOT_FOUND');
      assert.match(wrongKind.envelope.success ? '' : wrongKind.envelope.error, /approve_merge/, 'the message names the right tool');

      const { first, data } = await approveTwice(fx, 'approve_merge', { merge_suggestion_id: m.merge_suggestion_id });
      assert.deepEqual([data.status, data.merged_from, data.merged_into, data.segments_moved], ['merged', dup, water, 1]);
      assert.deepEqual(
        first.events.map((e) => e.event_type),
        ['coding.codes_merged', 'suggestion.approved'],
      );
      await fx.fails('get_code', { code_id: dup }, 'CODE_NOT_FOUND');
      assert.equal((await fx.ok('get_code', { code_id: water })).segment_count, 1);

      // a merge suggestion whose code is gone cannot be approved, and stays pending
      const stale = await fx.ok('suggest_merge_codes', { source_code_id: council, target_code_id: water, rationale: 'r' });
      await fx.ok('delete_code', { code_id: council });
      await failsCleanly(fx, 'approve_merge', { merge_suggestion_id: stale.merge_suggestion_id }, 'CODE_NOT_FOUND');
    });
  });

  describe('coding suggestions', () => {
    it('suggest -> list pending -> approve applies through applyCode with memo = rationale and records provenance; idempotent', async () => {
      const { source, water } = await study(fx);
      const [start, end] = at(TRANSCRIPT, A1);
      const out = await fx.call('suggest_code_application', {
        source_id: source,
        code_id: water,
        start_pos: start,
        end_pos: end,
        rationale: 'About the hose',
        confidence: 90,
        include_text: true,
      });
      const s = out.envelope.success ? (out.envelope.data as any) : assert.fail('suggest failed');
      assert.deepEqual(
        [s.status, s.start_pos, s.end_pos, s.rationale, s.confidence, s.text_excerpt],
        ['pending_approval', start, end, 'About the hose', 90, A1],
      );
      assert.deepEqual(out.events[0]!.payload, {
        suggestion_id: s.suggestion_id,
        code_id: water,
        source_id: source,
        start,
        end,
        rationale: 'About the hose',
        confidence: 90,
      });
      assert.equal((await fx.ok('list_segments_for_source', { source_id: source })).count, 0, 'nothing is coded yet');

      const pending = await fx.ok('list_pending_coding_suggestions', { source_id: source });
      assert.equal(pending.count, 1);
      assert.deepEqual(
        [pending.suggestions[0].code_name, pending.suggestions[0].source_name, pending.suggestions[0].text, pending.suggestions[0].batch_id],
        ['Water disputes', 'Garden talk', A1, null],
      );
      const other = await fx.ok('add_text_source', { name: 'Other', content: 'nothing here' });
      assert.equal((await fx.ok('list_pending_coding_suggestions', { source_id: other.source_id })).count, 0);

      const { first, data } = await approveTwice(fx, 'approve_coding_suggestion', { suggestion_id: s.suggestion_id });
      assert.deepEqual([data.status, data.created, data.code_id, data.start_pos, data.end_pos], ['applied', true, water, start, end]);
      assert.deepEqual(
        first.events.map((e) => e.event_type),
        ['coding.segment_coded', 'suggestion.approved'],
      );
      const segs = await fx.ok('list_segments_for_source', { source_id: source });
      assert.equal(segs.count, 1);
      assert.deepEqual(
        [segs.segments[0].segment_id, segs.segments[0].text, segs.segments[0].memo, segs.segments[0].owner],
        [data.segment_id, A1, 'About the hose', 'bob'],
      );
      const prov = fx.handle.store.get<Record<string, unknown>>('SELECT * FROM segment_provenance WHERE segment_id = ?', [data.segment_id]);
      assert.deepEqual(prov, {
        segment_id: data.segment_id,
        suggestion_id: s.suggestion_id,
        batch_id: null,
        rationale: 'About the hose',
        confidence: 90,
        suggested_by: 'alice',
        suggested_by_session: 'sess-alice',
        approved_by: 'bob',
        approved_by_session: 'sess-bob',
        created_at: FIXED_ISO,
      });
      assert.deepEqual(
        [data.suggestion.suggested_by_session, data.suggestion.approved_by_session, data.suggestion.status],
        ['sess-alice', 'sess-bob', 'applied'],
      );
      assert.equal((await fx.ok('list_pending_coding_suggestions')).count, 0);
    });

    it('reject stores reason and feedback; rejecting again is idempotent; approving a rejected one is SUGGESTION_ALREADY_DECIDED', async () => {
      const { source, water } = await study(fx);
      const [start, end] = at(TRANSCRIPT, Q1);
      const s = await fx.ok('suggest_code_application', { source_id: source, code_id: water, start_pos: start, end_pos: end });
      const out = await fx.call(
        'reject_coding_suggestion',
        { suggestion_id: s.suggestion_id, reason: 'a question, not data', feedback: 'Code the answers, not the questions' },
        BOB,
      );
      const r = out.envelope.success ? (out.envelope.data as any) : assert.fail('reject failed');
      assert.deepEqual(
        [r.status, r.reason, r.feedback, r.already, r.suggestion.rejected_by_session],
        ['rejected', 'a question, not data', 'Code the answers, not the questions', false, 'sess-bob'],
      );
      assert.deepEqual(out.events[0]!.payload, {
        suggestion_id: s.suggestion_id,
        kind: 'coding',
        batch_id: null,
        reason: 'a question, not data',
        feedback: 'Code the answers, not the questions',
        suggested_by_session: 'sess-alice',
        rejected_by_session: 'sess-bob',
      });
      const row = fx.handle.store.get<Record<string, unknown>>('SELECT status, reason, feedback, rejected_by, rejected_at FROM suggestions WHERE id = ?', [
        s.suggestion_id,
      ]);
      assert.deepEqual(row, {
        status: 'rejected',
        reason: 'a question, not data',
        feedback: 'Code the answers, not the questions',
        rejected_by: 'bob',
        rejected_at: FIXED_ISO,
      });

      const journal = fx.handle.store.journalSeq;
      const again = await fx.ok('reject_coding_suggestion', { suggestion_id: s.suggestion_id, reason: 'other' });
      assert.deepEqual([again.already, again.reason], [true, 'a question, not data']);
      assert.equal(fx.handle.store.journalSeq, journal);
      await failsCleanly(fx, 'approve_coding_suggestion', { suggestion_id: s.suggestion_id }, 'SUGGESTION_ALREADY_DECIDED');

      // an applied suggestion cannot be rejected; reject takes new-code suggestions too
      const [a, b] = at(TRANSCRIPT, A1);
      const t = await fx.ok('suggest_code_application', { source_id: source, code_id: water, start_pos: a, end_pos: b });
      await fx.ok('approve_coding_suggestion', { suggestion_id: t.suggestion_id }, BOB);
      await failsCleanly(fx, 'reject_coding_suggestion', { suggestion_id: t.suggestion_id }, 'SUGGESTION_ALREADY_DECIDED');
      const code = await fx.ok('suggest_new_code', { name: 'Hoses', rationale: 'r' });
      assert.equal((await fx.ok('reject_coding_suggestion', { suggestion_id: code.suggestion_id, feedback: 'too narrow' })).kind, 'code');
      assert.equal((await fx.ok('list_pending_suggestions')).count, 0);
      await failsCleanly(fx, 'reject_coding_suggestion', { suggestion_id: 777 }, 'SUGGESTION_NOT_FOUND');
    });

    it('CODE_NOT_FOUND, SOURCE_NOT_FOUND and INVALID_POSITION at suggestion; a changed text or a deleted code fails approval and keeps it pending', async () => {
      const { source, water } = await study(fx);
      await failsCleanly(fx, 'suggest_code_application', { source_id: source, code_id: 404, start_pos: 0, end_pos: 5 }, 'CODE_NOT_FOUND');
      await failsCleanly(fx, 'suggest_code_application', { source_id: 404, code_id: water, start_pos: 0, end_pos: 5 }, 'SOURCE_NOT_FOUND');
      await failsCleanly(fx, 'suggest_code_application', { source_id: source, code_id: water, start_pos: 5, end_pos: 5 }, 'INVALID_POSITION');
      await failsCleanly(
        fx,
        'suggest_code_application',
        { source_id: source, code_id: water, start_pos: 0, end_pos: TRANSCRIPT.length + 1 },
        'INVALID_POSITION',
      );
      await failsCleanly(fx, 'list_pending_coding_suggestions', { source_id: 404 }, 'SOURCE_NOT_FOUND');

      const [start, end] = at(TRANSCRIPT, A2);
      const s = await fx.ok('suggest_code_application', { source_id: source, code_id: water, start_pos: start, end_pos: end });
      // the transcript changes under the suggestion (as an edit in the editor would): same length, other text
      fx.handle.transaction(() => fx.handle.repo.replaceSourceText(source, TRANSCRIPT.replace(A2, A2.toUpperCase()), TRANSCRIPT.length, FIXED_ISO));
      const stale = await failsCleanly(fx, 'approve_coding_suggestion', { suggestion_id: s.suggestion_id }, 'INVALID_POSITION');
      assert.match(stale.envelope.success ? '' : stale.envelope.error, /changed since suggestion/);
      const [a, b] = at(TRANSCRIPT, A1);
      const t = await fx.ok('suggest_code_application', { source_id: source, code_id: water, start_pos: a, end_pos: b });
      await fx.ok('delete_code', { code_id: water });
      await failsCleanly(fx, 'approve_coding_suggestion', { suggestion_id: t.suggestion_id }, 'CODE_NOT_FOUND');
      assert.equal((await fx.ok('list_pending_coding_suggestions')).count, 2, 'both stay pending');
    });
  });

  describe('batches', () => {
    it('suggest_batch_coding: status pending_review -> partially_reviewed -> completed, counts after each step, idempotent approve_batch_coding', async () => {
      const { source, water } = await study(fx);
      const ranges = [A1, Q1, A2].map((p) => at(TRANSCRIPT, p));
      const out = await fx.call('suggest_batch_coding', {
        code_id: water,
        rationale: 'Water again',
        segments: [
          ...ranges.map(([s, e]) => ({ source_id: source, start_pos: s, end_pos: e })),
          { source_id: source, start_pos: ranges[0]![0], end_pos: ranges[0]![1] },
        ],
      });
      const b = out.envelope.success ? (out.envelope.data as any) : assert.fail('suggest_batch_coding failed');
      assert.deepEqual([b.status, b.segment_count, b.duplicates_dropped], ['pending_approval', 3, 1]);
      assert.deepEqual(
        out.events.map((e) => [e.event_type, e.payload.count]),
        [['suggestion.batch_created', 3]],
      );
      const [i1, i2, i3] = b.suggestions.map((s: any) => s.suggestion_id);
      const status = async () => fx.ok('get_suggestion_batch_status', { batch_id: b.batch_id });

      let st = await status();
      assert.deepEqual(
        [st.status, st.total_count, st.pending_count, st.reviewed_count, st.applied_count, st.rejected_count],
        ['pending_review', 3, 3, 0, 0, 0],
      );

      await fx.ok('approve_coding_suggestion', { suggestion_id: i1 }, BOB);
      st = await status();
      assert.deepEqual(
        [st.status, st.pending_count, st.reviewed_count, st.applied_count],
        ['partially_reviewed', 2, 1, 1],
        'the batch reflects the item approved on its own',
      );
      const applied = st.suggestions.find((s: any) => s.suggestion_id === i1);
      assert.deepEqual(
        [applied.status, applied.provenance.suggestion_id, applied.provenance.batch_id, applied.provenance.approved_by_session],
        ['applied', i1, b.batch_id, 'sess-bob'],
      );

      await fx.ok('reject_coding_suggestion', { suggestion_id: i2, reason: 'question' });
      st = await status();
      assert.deepEqual([st.status, st.pending_count, st.reviewed_count, st.applied_count, st.rejected_count], ['partially_reviewed', 1, 2, 1, 1]);

      const { data } = await approveTwice(fx, 'approve_batch_coding', { batch_id: b.batch_id });
      assert.deepEqual(
        [data.status, data.batch_status, data.applied_count, data.rejected_count, data.failed_count, data.errors],
        ['applied', 'completed', 2, 1, 0, null],
      );
      st = await status();
      assert.deepEqual([st.status, st.pending_count, st.reviewed_count], ['completed', 0, 3]);
      assert.deepEqual(
        st.suggestions.map((s: any) => [s.suggestion_id, s.status]),
        [
          [i1, 'applied'],
          [i2, 'rejected'],
          [i3, 'applied'],
        ],
      );
      const segs = await fx.ok('list_segments_for_source', { source_id: source });
      assert.deepEqual(
        segs.segments.map((s: any) => [s.text, s.memo]),
        [
          [A1, 'Water again'],
          [A2, 'Water again'],
        ],
      );
    });

    it('approve_batch_coding marks items that cannot be applied as failed, applies the rest, and says partial', async () => {
      const { source, water, council } = await study(fx);
      const [a, b] = at(TRANSCRIPT, A1);
      const [c, d] = at(TRANSCRIPT, A2);
      const one = await fx.ok('suggest_batch_coding', { code_id: water, rationale: 'w', segments: [{ source_id: source, start_pos: a, end_pos: b }] });
      const two = await fx.ok('suggest_batch_coding', { code_id: council, rationale: 'c', segments: [{ source_id: source, start_pos: c, end_pos: d }] });
      // the water batch's code is deleted before approval: its item cannot be applied
      await fx.ok('delete_code', { code_id: water });
      const out = await fx.call('approve_batch_coding', { batch_id: one.batch_id }, BOB);
      const r = out.envelope.success ? (out.envelope.data as any) : assert.fail('approve failed');
      assert.deepEqual([r.status, r.failed_count, r.applied_count, r.batch_status], ['partial', 1, 0, 'completed']);
      assert.deepEqual(
        r.errors.map((e: any) => [e.suggestion_id, e.error_code]),
        [[one.suggestions[0].suggestion_id, 'CODE_NOT_FOUND']],
      );
      assert.deepEqual(
        out.events.map((e) => [e.event_type, e.payload.status]),
        [['suggestion.approved', 'failed']],
      );
      const again = await fx.ok('approve_coding_suggestion', { suggestion_id: one.suggestions[0].suggestion_id }, BOB);
      assert.deepEqual([again.already, again.status, again.error_code], [true, 'failed', 'CODE_NOT_FOUND'], 'a failed item returns its failure');
      const ok = await fx.ok('approve_batch_coding', { batch_id: two.batch_id }, BOB);
      assert.deepEqual([ok.status, ok.applied_count], ['applied', 1]);
    });

    it('suggest_codes_for_range ranks "Water disputes" above "Council bureaucracy" for a range about watering; respond_to_code_suggestion accepts the selected codes and rejects the rest', async () => {
      const { source, water, council } = await study(fx);
      const text = 'We argue about watering and the hose every single week, the tank runs dry and nobody fills it; the council said nothing.';
      const s2 = (await fx.ok('add_text_source', { name: 'Hand-built', content: text })).source_id;
      const out = await fx.call('suggest_codes_for_range', { source_id: s2, start_pos: 0, end_pos: text.length });
      const r = out.envelope.success ? (out.envelope.data as any) : assert.fail('suggest_codes_for_range failed');
      assert.deepEqual(
        r.suggestions.map((x: any) => x.code_name),
        ['Water disputes', 'Council bureaucracy'],
      );
      const [w, c] = r.suggestions;
      assert.ok(w.confidence > c.confidence, `${w.confidence} > ${c.confidence}`);
      assert.ok(w.bm25 > c.bm25);
      assert.deepEqual([...w.matched_terms].sort(), ['hose', 'tank', 'watering'], '"watering" meets "watering"/"water" through the stemmer');
      assert.deepEqual(c.matched_terms, ['council']);
      assert.equal(r.suggestion_batch_id, r.batch_id);
      assert.deepEqual(
        out.events.map((e) => e.event_type),
        ['suggestion.batch_created'],
      );
      void source;

      await failsCleanly(
        fx,
        'respond_to_code_suggestion',
        { suggestion_batch_id: r.batch_id, response: 'accept', selected_code_ids: [999] },
        'INVALID_ARGUMENTS',
      );
      await failsCleanly(fx, 'respond_to_code_suggestion', { suggestion_batch_id: r.batch_id, response: 'maybe' }, 'INVALID_ARGUMENTS');
      const resp = await fx.call('respond_to_code_suggestion', { suggestion_batch_id: r.batch_id, response: 'accept', selected_code_ids: [water] }, BOB);
      const d = resp.envelope.success ? (resp.envelope.data as any) : assert.fail('respond failed');
      assert.deepEqual([d.status, d.applied_count, d.rejected_count, d.batch_status, d.already], ['accepted', 1, 1, 'completed', false]);
      assert.deepEqual(
        resp.events.map((e) => e.event_type),
        ['coding.segment_coded', 'suggestion.approved', 'suggestion.rejected'],
      );
      const st = await fx.ok('get_suggestion_batch_status', { batch_id: r.batch_id });
      assert.deepEqual([st.response, st.responded_by_session], ['accept', 'sess-bob']);
      assert.deepEqual(
        st.suggestions.map((x: any) => [x.code_id, x.status, x.reason]),
        [
          [water, 'applied', null],
          [council, 'rejected', 'not selected'],
        ],
      );
      const journal = fx.handle.store.journalSeq;
      const again = await fx.ok('respond_to_code_suggestion', { suggestion_batch_id: r.batch_id, response: 'reject' }, BOB);
      assert.deepEqual([again.already, again.status, again.applied_count], [true, 'accepted', 1]);
      assert.equal(fx.handle.store.journalSeq, journal);

      // the same range again: the applied code is left out (it covers the range), nothing else qualifies anew
      const next = await fx.ok('suggest_codes_for_range', { source_id: s2, start_pos: 0, end_pos: text.length });
      assert.deepEqual(next.already_coded, [water]);
      assert.deepEqual(
        next.suggestions.map((x: any) => x.code_name),
        ['Council bureaucracy'],
      );
      const rej = await fx.ok('respond_to_code_suggestion', { suggestion_batch_id: next.batch_id, response: 'reject', reason: 'not about the council' }, BOB);
      assert.deepEqual([rej.status, rej.rejected_count, rej.reason], ['rejected', 1, 'not about the council']);
    });

    it('auto_suggest_codes proposes per uncoded turn, never the whole document, and skips short turns', async () => {
      const { source, water, council } = await study(fx);
      const out = await fx.call('auto_suggest_codes', { source_id: source, min_confidence: 1 });
      const r = out.envelope.success ? (out.envelope.data as any) : assert.fail('auto_suggest_codes failed');
      const byCode = r.suggestions.map((s: any) => [s.code_id, s.start_pos, s.end_pos, s.speaker]);
      assert.deepEqual(byCode, [
        [water, ...at(TRANSCRIPT, Q1), 'INTERVIEWER'],
        [water, ...at(TRANSCRIPT, A1), 'AMARA'],
        [council, ...at(TRANSCRIPT, A2), 'AMARA'],
      ]);
      assert.equal(r.skipped_short, 1, '"And the council?" has one content word');
      assert.ok(r.suggestions.every((s: any) => s.end_pos - s.start_pos < TRANSCRIPT.length / 2));
      const st = await fx.ok('get_suggestion_batch_status', { batch_id: r.batch_id });
      assert.deepEqual([st.kind, st.status, st.total_count], ['auto', 'pending_review', 3]);
      const again = await fx.ok('auto_suggest_codes', { source_id: source, min_confidence: 1 });
      assert.deepEqual([again.batch_id, again.total_suggested, again.skipped_pending], [null, 0, 3], 'pending ones are not proposed twice');
      const high = await fx.ok('auto_suggest_codes', { source_id: source, min_confidence: 100 });
      assert.equal(high.batch_id, null);
    });

    it('BATCH_NOT_FOUND, and batch suggestion errors name the failing range', async () => {
      const { source, water } = await study(fx);
      await failsCleanly(fx, 'get_suggestion_batch_status', { batch_id: 5 }, 'BATCH_NOT_FOUND');
      await failsCleanly(fx, 'approve_batch_coding', { batch_id: 5 }, 'BATCH_NOT_FOUND');
      await failsCleanly(fx, 'respond_to_code_suggestion', { suggestion_batch_id: 5, response: 'accept' }, 'BATCH_NOT_FOUND');
      await failsCleanly(fx, 'list_pending_coding_suggestions', { batch_id: 5 }, 'BATCH_NOT_FOUND');
      const bad = await failsCleanly(
        fx,
        'suggest_batch_coding',
        {
          code_id: water,
          rationale: 'r',
          segments: [
            { source_id: source, start_pos: 0, end_pos: 5 },
            { source_id: source, start_pos: 10, end_pos: 9 },
          ],
        },
        'INVALID_POSITION',
      );
      assert.equal(bad.envelope.success ? -1 : (bad.envelope as any).details.index, 1);
      await failsCleanly(
        fx,
        'suggest_batch_coding',
        { code_id: water, rationale: 'r', segments: [{ source_id: 404, start_pos: 0, end_pos: 5 }] },
        'SOURCE_NOT_FOUND',
      );
      await failsCleanly(
        fx,
        'suggest_batch_coding',
        { code_id: 404, rationale: 'r', segments: [{ source_id: source, start_pos: 0, end_pos: 5 }] },
        'CODE_NOT_FOUND',
      );
      await failsCleanly(fx, 'suggest_codes_for_range', { source_id: source, start_pos: 0, end_pos: TRANSCRIPT.length + 1 }, 'INVALID_POSITION');
      await failsCleanly(fx, 'suggest_codes_for_range', { source_id: 404, start_pos: 0, end_pos: 1 }, 'SOURCE_NOT_FOUND');
      await failsCleanly(fx, 'auto_suggest_codes', { source_id: 404 }, 'SOURCE_NOT_FOUND');
    });
  });

  describe('across a restart', () => {
    it('pending suggestions, batches and their status survive closing and reopening; approval after the restart records provenance', async () => {
      const { source, water, council } = await study(fx);
      const code = await fx.ok('suggest_new_code', { name: 'Shared tools', rationale: 'r1' });
      const [a, b] = at(TRANSCRIPT, A1);
      const coding = await fx.ok('suggest_code_application', { source_id: source, code_id: water, start_pos: a, end_pos: b, rationale: 'hose' });
      const merge = await fx.ok('suggest_merge_codes', { source_code_id: council, target_code_id: water, rationale: 'r3' });
      const batch = await fx.ok('suggest_batch_coding', {
        code_id: council,
        rationale: 'forms',
        segments: [at(TRANSCRIPT, A2), at(TRANSCRIPT, Q2)].map(([s, e]) => ({ source_id: source, start_pos: s, end_pos: e })),
      });
      await fx.ok('approve_coding_suggestion', { suggestion_id: batch.suggestions[0].suggestion_id }, BOB);
      const before = {
        codes: await fx.ok('list_pending_suggestions'),
        codings: await fx.ok('list_pending_coding_suggestions'),
        batch: await fx.ok('get_suggestion_batch_status', { batch_id: batch.batch_id }),
      };
      assert.equal(before.batch.status, 'partially_reviewed');

      const file = fx.handle.path;
      await fx.handle.close();
      let handle: ProjectHandle = await openProjectHandle(file, { checkpointIdleMs: 0 });
      try {
        let pipeline = createPipeline({ project: () => handle, host: headlessHost, logger: silentLogger, clock: fixedClock });
        const ok = async (name: string, args: unknown, caller: Caller = ALICE) => {
          const out = await pipeline.invoke(name, args, caller);
          assert.ok(out.envelope.success, JSON.stringify(out.envelope));
          return out.envelope.data as any;
        };
        assert.deepEqual(await ok('list_pending_suggestions', {}), before.codes);
        assert.deepEqual(await ok('list_pending_coding_suggestions', {}), before.codings);
        assert.deepEqual(await ok('get_suggestion_batch_status', { batch_id: batch.batch_id }), before.batch);
        assert.deepEqual(
          before.codes.suggestions.map((s: any) => s.suggestion_id),
          [code.suggestion_id],
        );
        assert.deepEqual(
          before.codes.merge_suggestions.map((s: any) => s.merge_suggestion_id),
          [merge.merge_suggestion_id],
        );

        const applied = await ok('approve_coding_suggestion', { suggestion_id: coding.suggestion_id }, BOB);
        assert.equal((await ok('approve_batch_coding', { batch_id: batch.batch_id }, BOB)).batch_status, 'completed');
        const created = await ok('approve_suggestion', { suggestion_id: code.suggestion_id }, BOB);
        assert.equal((await ok('get_code', { code_id: created.code_id })).name, 'Shared tools');

        await handle.close();
        handle = await openProjectHandle(file, { checkpointIdleMs: 0 });
        pipeline = createPipeline({ project: () => handle, host: headlessHost, logger: silentLogger, clock: fixedClock });
        const again = await ok('approve_coding_suggestion', { suggestion_id: coding.suggestion_id }, BOB);
        assert.deepEqual([again.already, again.segment_id], [true, applied.segment_id], 'idempotent across a restart');
        const prov = handle.repo.getSegmentProvenance(applied.segment_id);
        assert.deepEqual(
          [prov?.suggestion_id, prov?.suggested_by_session, prov?.approved_by_session, prov?.rationale],
          [coding.suggestion_id, 'sess-alice', 'sess-bob', 'hose'],
        );
        const st = await ok('get_suggestion_batch_status', { batch_id: batch.batch_id });
        assert.deepEqual([st.status, st.applied_count, st.pending_count], ['completed', 2, 0]);
        assert.equal((await ok('list_pending_suggestions', {})).merge_count, 1);
      } finally {
        await handle.close();
      }
    });
  });

  describe('material for the agent', () => {
    it('analyze_uncoded_text splits at speaker turns (labels and timestamps excluded) and around coded segments', async () => {
      const { source, water } = await study(fx);
      const [cs, ce] = at(TRANSCRIPT, 'Someone left the hose running all night');
      await fx.ok('batch_apply_codes', { operations: [{ code_id: water, source_id: source, start_position: cs, end_position: ce }] });
      const r = await fx.ok('analyze_uncoded_text', { source_id: source });
      const expected = [
        [...at(TRANSCRIPT, HEADER), 'paragraph', null],
        [...at(TRANSCRIPT, Q1), 'turn', 'INTERVIEWER'],
        [...at(TRANSCRIPT, 'We keep arguing about who waters the beds.'), 'turn', 'AMARA'],
        [...at(TRANSCRIPT, 'and the water tank was empty by morning.'), 'turn', 'AMARA'],
        [...at(TRANSCRIPT, Q2), 'turn', 'INTERVIEWER'],
        [...at(TRANSCRIPT, A2), 'turn', 'AMARA'],
      ];
      assert.deepEqual(
        r.uncoded_ranges.map((u: any) => [u.start_pos, u.end_pos, u.unit, u.speaker]),
        expected,
      );
      assert.deepEqual([r.total_length, r.coded_length, r.segment_count, r.range_count, r.has_more], [TRANSCRIPT.length, ce - cs, 1, 6, false]);
      const paged = await fx.ok('analyze_uncoded_text', { source_id: source, offset: 2, limit: 2 });
      assert.deepEqual(
        paged.uncoded_ranges.map((u: any) => u.start_pos),
        [expected[2]![0], expected[3]![0]],
      );
      assert.equal(paged.has_more, true);

      const content = await fx.ok('analyze_content_for_codes', { source_id: source });
      assert.deepEqual(
        content.uncoded_segments.map((u: any) => u.start_pos),
        expected.map((e) => e[0]),
      );
      assert.equal(content.uncoded_segments[5].best_code.code_name, 'Council bureaucracy', 'forms, permission, council');
      assert.match(content.analysis, /uncoded/);
      await failsCleanly(fx, 'analyze_uncoded_text', { source_id: 404 }, 'SOURCE_NOT_FOUND');
      await failsCleanly(fx, 'analyze_content_for_codes', { source_id: 404 }, 'SOURCE_NOT_FOUND');
    });

    it('find_similar_content ranks passages by BM25 and leaves out those already coded with code_id', async () => {
      const { source, water } = await study(fx);
      const r = await fx.ok('find_similar_content', { search_text: 'arguments over the hose and the water tank' });
      assert.equal(r.method, 'bm25');
      assert.deepEqual([r.matches[0].source_id, r.matches[0].start_pos, r.matches[0].end_pos], [source, ...at(TRANSCRIPT, A1)]);
      // Porter: "arguments" -> argument, "arguing" -> argu: no match; "water" meets "waters" and "water"
      assert.deepEqual([...r.matches[0].matched_terms].sort(), ['hose', 'tank', 'water']);
      assert.ok(r.matches.every((m: any, i: number) => i === 0 || m.score <= r.matches[i - 1].score));
      const [a, b] = at(TRANSCRIPT, A1);
      await fx.ok('batch_apply_codes', { operations: [{ code_id: water, source_id: source, start_position: a, end_position: b }] });
      const coded = await fx.ok('find_similar_content', { search_text: 'arguments over the hose and the water tank' });
      assert.deepEqual(coded.matches[0].coded_with, [{ code_id: water, name: 'Water disputes' }]);
      const excluded = await fx.ok('find_similar_content', { search_text: 'arguments over the hose and the water tank', code_id: water });
      assert.ok(excluded.matches.every((m: any) => m.start_pos !== a));
      assert.equal((await fx.ok('find_similar_content', { search_text: 'the and of' })).match_count, 0, 'stop words alone find nothing');
      await failsCleanly(fx, 'find_similar_content', { search_text: 'x', code_id: 404 }, 'CODE_NOT_FOUND');
      await failsCleanly(fx, 'find_similar_content', { search_text: 'x', source_id: 404 }, 'SOURCE_NOT_FOUND');
    });

    it('detect_duplicate_codes is token-level (stemmed, order-free) and memo-aware (60/40), with a threshold', async () => {
      const make = async (name: string, memo?: string) => (await fx.ok('create_code', { name, color: BLUE, ...(memo ? { memo } : {}) })).code_id;
      const a = await make('Water dispute');
      const b = await make('Disputes over water');
      const t1 = await make('Trust', 'Confidence in other gardeners');
      const t2 = await make('Trust in council', 'Confidence in other gardeners');
      await make('Council bureaucracy');
      const r = await fx.ok('detect_duplicate_codes');
      // Water dispute / Disputes over water: {water, disput} both -> Dice 1.
      // Trust / Trust in council: names {trust} vs {trust, council}: Dice 2x1/(1+2) = 2/3; memos equal: 1;
      // 0.6 x 2/3 + 0.4 x 1 = 0.8, exactly the default threshold.
      assert.deepEqual(
        r.candidates.map((c: any) => [c.code_a_id, c.code_b_id, c.similarity, c.name_similarity, c.memo_similarity]),
        [
          [a, b, 1, 1, null],
          [t1, t2, 0.8, 0.667, 1],
        ],
      );
      assert.deepEqual([r.codes_analyzed, r.threshold, r.candidates[0].similarity_percent], [5, 0.8, 100]);
      assert.deepEqual([...r.candidates[0].shared_terms].sort(), ['dispute', 'water']);
      const strict = await fx.ok('detect_duplicate_codes', { threshold: 0.9 });
      assert.equal(strict.candidate_count, 1);
      const loose = await fx.ok('detect_duplicate_codes', { threshold: 0.5 });
      // Trust in council / Council bureaucracy: {trust, council} vs {council, bureaucraci}: 2x1/4 = 0.5
      assert.equal(loose.candidate_count, 3);
      await fx.fails('detect_duplicate_codes', { threshold: 0 }, 'INVALID_ARGUMENTS');
    });

    it('detect_duplicate_codes flags near-identical memos under different names on their own, but not short memos (issue 13 item 11)', async () => {
      const make = async (name: string, memo: string) => (await fx.ok('create_code', { name, color: BLUE, memo })).code_id;
      // memo terms (stemmed, stop words out), 11 each: garden describ water tank run dry leak hose valv drought + letter / rule;
      // 10 shared: Dice 2 x 10 / 22 = 0.909. Names share nothing: the 60/40 weighting alone gives 0.4 x 0.909 = 0.364
      const shortage = await make('Water shortage', 'Gardeners describe the water tank running dry, leaking hoses, valves and drought letters.');
      const troubles = await make('Irrigation troubles', 'Gardeners describe the water tank running dry, leaking hoses, valves and drought rules.');
      // short memos: unrelated ones, and identical ones of two terms ({confid, garden}), under unrelated names
      await make('Safety', 'Feeling safe at the market');
      await make('Costs', 'Prices went up');
      await make('Trust', 'Confidence in other gardeners');
      await make('Reliance', 'Confidence in other gardeners');
      const r = await fx.ok('detect_duplicate_codes');
      assert.deepEqual(
        r.candidates.map((c: any) => [c.code_a_id, c.code_b_id, c.similarity, c.name_similarity, c.memo_similarity]),
        [[shortage, troubles, 0.909, 0, 0.909]],
      );
      assert.match(r.candidates[0].rationale, /^The memos are 91% alike/);
      assert.deepEqual(r.candidates[0].shared_terms, []);
      // at a threshold above 0.909 the pair is gone; the short identical memos score 0.4 x 1 = 0.4 at most
      assert.equal((await fx.ok('detect_duplicate_codes', { threshold: 0.92 })).candidate_count, 0);
      const low = await fx.ok('detect_duplicate_codes', { threshold: 0.4 });
      const trust = low.candidates.find((c: any) => c.code_a_name === 'Trust');
      assert.deepEqual([trust.code_b_name, trust.similarity, trust.memo_similarity], ['Reliance', 0.4, 1]);
      assert.ok(!low.candidates.some((c: any) => [c.code_a_name, c.code_b_name].includes('Costs')), JSON.stringify(low.candidates));
    });
  });

  it('checkApprover: only the researcher may approve (APPROVAL_FORBIDDEN), a suggestion of their own session too (self_approval recorded)', async () => {
    const { source, water } = await study(fx);
    const [a, b] = at(TRANSCRIPT, A1);
    const s = await fx.ok('suggest_code_application', { source_id: source, code_id: water, start_pos: a, end_pos: b });
    const rec = fx.handle.repo.getSuggestion(s.suggestion_id) as SuggestionRecord;
    assert.deepEqual(checkApprover(rec, { user: 'alice', session_id: 'sess-alice', client_type: 'REST_CLIENT', can_approve: true }), { self_approval: true });
    assert.throws(() => checkApprover(rec, { user: 'mallory', session_id: 'sess-mallory', client_type: 'REST_CLIENT' }), /Only the researcher/);
    assert.deepEqual(checkApprover(rec, { user: 'bob', session_id: 'sess-bob', client_type: 'LOCAL_UI', can_approve: true }), { self_approval: false });
    // issue 14 item 6: the researcher decides suggestions made under their own credential
    const self = await fx.call('approve_coding_suggestion', { suggestion_id: s.suggestion_id });
    assert.ok(self.envelope.success, JSON.stringify(self.envelope));
    const out = await fx.call('approve_coding_suggestion', { suggestion_id: s.suggestion_id }, BOB);
    assert.ok(out.envelope.success && (out.envelope.data as { already: boolean }).already, 'decided once');
    const decided = storedEvents(fx.handle).filter((e) => e.event_type.startsWith('suggestion.'));
    assert.deepEqual(
      decided.map((e) => e.event_type),
      ['suggestion.coding_suggested', 'suggestion.approved'],
    );
    assert.equal(decided[1]?.payload.self_approval, true);
  });
});

describe('domain/ranking', () => {
  it('tokenize lower-cases, drops stop words, numbers and possessives, and Porter-stems', () => {
    // "the", "at", "isn't" are stop words; 10 and 30 are numbers; "amara's" loses its possessive
    assert.deepEqual(
      tokenize("The Gardeners' watering rota at 10:30 isn't Amara's job").map((t) => [t.term, t.word]),
      [
        ['garden', 'gardeners'],
        ['water', 'watering'],
        ['rota', 'rota'],
        ['amara', 'amara'],
        ['job', 'job'],
      ],
    );
  });

  it('the one BM25 term weight is the formula both rankers use (hand computation, R&Z 2009 eq. 3.15)', () => {
    // N = 2, df = 1: idf = ln(1 + 1.5 / 1.5) = ln 2; tf = 1 in a document of length 2, avgdl 1.5:
    // ln 2 x 2.2 / (1 + 1.2 x (0.25 + 0.75 x 2 / 1.5)) = 0.693147 x 2.2 / 2.5 = 0.609970
    assert.ok(Math.abs(bm25Idf(2, 1) - Math.LN2) < 1e-12);
    assert.ok(Math.abs(bm25TermWeight(Math.LN2, 1, 2, 1.5) - 0.60997) < 1e-5);
    // a longer document weighs the same count less; a second occurrence adds less than the first
    assert.ok(bm25TermWeight(1, 1, 4, 2) < bm25TermWeight(1, 1, 2, 2));
    assert.ok(bm25TermWeight(1, 2, 2, 2) - bm25TermWeight(1, 1, 2, 2) < bm25TermWeight(1, 1, 2, 2));
  });

  it('the one cosine agrees for dense and sparse vectors and refuses mixed or mismatched ones', () => {
    // (1, 2, 0) . (2, 1, 1) = 4; |a| = sqrt 5, |b| = sqrt 6: 4 / sqrt 30 = 0.730297
    assert.ok(Math.abs(cosine([1, 2, 0], [2, 1, 1]) - 0.730297) < 1e-6);
    assert.ok(Math.abs(cosine(new Float32Array([1, 2, 0]), [2, 1, 1]) - 0.730297) < 1e-6);
    const a = new Map([
      ['x', 1],
      ['y', 2],
    ]);
    const b = new Map([
      ['x', 2],
      ['y', 1],
      ['z', 1],
    ]);
    assert.ok(Math.abs(cosine(a, b) - 0.730297) < 1e-6);
    assert.equal(cosine([1, 0], [-1, 0]), -1);
    assert.equal(cosine([1, 2], [1, 2, 3]), 0, 'dimensions differ');
    assert.equal(cosine([0, 0], [1, 1]), 0, 'all zeros');
    assert.equal(cosine(a, [1, 2]), 0, 'sparse against dense');
    // TF-IDF vectors are unit length: a vector's cosine with itself is 1
    const v = tfidfVector(['water', 'water', 'rota'], (t) => (t === 'water' ? 1 : 2));
    assert.ok(Math.abs(cosine(v, v) - 1) < 1e-12);
    assert.ok(Math.abs((v.get('water') ?? 0) - 2 / Math.sqrt(8)) < 1e-12);
  });

  it('BM25 matches a hand computation (Robertson & Zaragoza 2009, k1 = 1.2, b = 0.75)', () => {
    // docs: d0 = [apple, pear], d1 = [apple]; N = 2, avgdl = 1.5.
    // idf(apple) = ln(1 + (2 - 2 + 0.5) / (2 + 0.5)) = ln 1.2 = 0.182322; idf(pear) = ln(1 + 1.5 / 1.5) = ln 2 = 0.693147.
    // score(pear, d0) = 0.693147 x 1 x 2.2 / (1 + 1.2 x (0.25 + 0.75 x 2 / 1.5)) = 0.693147 x 2.2 / 2.5 = 0.609970.
    // score(apple, d1) = 0.182322 x 2.2 / (1 + 1.2 x (0.25 + 0.75 x 1 / 1.5)) = 0.182322 x 2.2 / 1.9 = 0.211110.
    // score(apple, d0) = 0.182322 x 2.2 / 2.5 = 0.160443.
    const index = new Bm25Index([['apple', 'pear'], ['apple']]);
    assert.ok(Math.abs(index.idf('apple') - 0.182322) < 1e-6);
    const pear = index.search(['pear']);
    assert.deepEqual(
      pear.map((h) => h.doc),
      [0],
    );
    assert.ok(Math.abs(pear[0]!.score - 0.60997) < 1e-5);
    const apple = index.search(['apple']);
    assert.deepEqual(
      apple.map((h) => h.doc),
      [1, 0],
      'the shorter document ranks first',
    );
    assert.ok(Math.abs(apple[0]!.score - 0.21111) < 1e-5);
    assert.ok(Math.abs(apple[1]!.score - 0.160443) < 1e-5);
    assert.ok(Math.abs(index.selfScore(['apple', 'pear'], 0) - (0.160443 + 0.60997)) < 1e-5);
  });

  it('diceAtLeast answers the Dice coefficient when it reaches the minimum, else -1', () => {
    const a = Int32Array.from([1, 2, 3, 4]);
    const b = Int32Array.from([2, 3, 4, 5]);
    // |A n B| = 3: Dice 2 x 3 / 8 = 0.75
    assert.equal(diceAtLeast(a, b, 0.75), 0.75);
    assert.equal(diceAtLeast(a, b, 0.5), 0.75);
    assert.equal(diceAtLeast(a, b, 0.76), -1);
    assert.equal(diceAtLeast(a, Int32Array.from([7, 8, 9]), 0.1), -1);
    assert.equal(diceAtLeast(a, Int32Array.from([7, 8, 9]), 0), 0);
    assert.equal(diceAtLeast(new Int32Array(0), b, 0.1), -1);
    assert.equal(diceAtLeast(a, a, 1), 1);
  });

  it('the similarity join finds exactly the pairs an all-pairs comparison finds', () => {
    let seed = 7;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    const set = (n: number, v: number) => Int32Array.from(new Set(Array.from({ length: n }, () => Math.floor(rand() * v)))).sort();
    const items: SimilarityItem[] = Array.from({ length: 300 }, () => ({
      name: set(1 + Math.floor(rand() * 4), 12),
      memo: rand() < 0.6 ? set(2 + Math.floor(rand() * 9), 20) : null,
    }));
    for (const threshold of [1, 0.8, 0.6, 0.4, 0.25]) {
      const expected: string[] = [];
      for (let i = 0; i < items.length; i++) {
        for (let j = i + 1; j < items.length; j++) {
          const x = items[i]!;
          const y = items[j]!;
          const name = dice(x.name, y.name);
          let sim = x.memo && y.memo ? 0.6 * name + 0.4 * dice(x.memo, y.memo) : name;
          // memos of at least 6 distinct terms each also count on their own
          if (x.memo && y.memo && x.memo.length >= 6 && y.memo.length >= 6) sim = Math.max(sim, dice(x.memo, y.memo));
          if (sim + 1e-12 >= threshold) expected.push(`${i}-${j}`);
        }
      }
      const got = similarPairs(items, threshold).map((p) => `${p.a}-${p.b}`);
      assert.deepEqual([...got].sort(), expected.sort(), `threshold ${threshold}`);
      if (threshold === 0.8)
        assert.ok(
          similarPairs(items, threshold).some((p) => p.basis === 'memo'),
          'some pairs reach 0.8 through their memos alone',
        );
    }
  });
});

describe('domain/textUnits', () => {
  const units = (text: string) => splitUnits(text).map((u) => [text.slice(u.start, u.end), u.kind, u.speaker]);

  it('recognises the transcript formats of the shared corpus', () => {
    assert.deepEqual(units('Researcher 1: How do you collect data?\nAna: Interviews, mostly.\nResearcher 1: The methods.'), [
      ['How do you collect data?', 'turn', 'Researcher 1'],
      ['Interviews, mostly.', 'turn', 'Ana'],
      ['The methods.', 'turn', 'Researcher 1'],
    ]);
    assert.deepEqual(units('[id1] hello, I like the course.\n\n[id2] I am struggling with the slides.'), [
      ['hello, I like the course.', 'turn', 'id1'],
      ['I am struggling with the slides.', 'turn', 'id2'],
    ]);
    assert.deepEqual(units('[id1] I like it.\n[laughs] so do I.\n[id2] Not me.'), [
      ['I like it.\n[laughs] so do I.', 'turn', 'id1'],
      ['Not me.', 'turn', 'id2'],
    ]);
    assert.deepEqual(units('[00:00:00:03]\nP: Roger. The clock is operating.\n\n[00:00:00:07]\nCC: Hear loud and clear.\n'), [
      ['Roger. The clock is operating.', 'turn', 'P'],
      ['Hear loud and clear.', 'turn', 'CC'],
    ]);
    assert.deepEqual(
      units('SPEAKERS\nBSR01, Sara\n\nBSR01  00:00\nI have not looked.\nOkay, great.\n\nSara Mannheimer  00:13\nDo you want to follow along?\n'),
      [
        ['SPEAKERS\nBSR01, Sara', 'paragraph', null],
        ['I have not looked.\nOkay, great.', 'turn', 'BSR01'],
        ['Do you want to follow along?', 'turn', 'Sara Mannheimer'],
      ],
    );
  });

  it('splits plain text at paragraphs and long units at sentence boundaries, counting code points', () => {
    const sentence = 'The hose was left on again and the tank ran dry overnight 🌱. ';
    const long = sentence.repeat(30).trim();
    const text = `Short first paragraph.\n\n${long}`;
    const got = splitUnits(text, { maxLength: 200 });
    assert.equal(got[0]!.kind, 'paragraph');
    const cps = Array.from(text);
    assert.equal(cps.slice(got[0]!.start, got[0]!.end).join(''), 'Short first paragraph.');
    const rest = got.slice(1);
    assert.ok(rest.length >= 10);
    const len = Array.from(sentence.trim()).length;
    for (const u of rest) {
      assert.equal(u.kind, 'sentences');
      assert.ok(u.end - u.start <= 200);
      assert.equal((u.end - u.start + 1) % (len + 1), 0, 'whole sentences only');
      assert.ok(cps.slice(u.start, u.end).join('').endsWith('🌱.'));
    }
    assert.equal(rest[rest.length - 1]!.end, cps.length);
  });
});
