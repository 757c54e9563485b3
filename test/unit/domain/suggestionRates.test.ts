/**
 * src/domain/suggestionRates.ts over time (issue 16 item 7): the ISO week of a timestamp, and an agent's
 * coding suggestions made on different days of a real project (a clock the test moves), decided through the
 * pipeline, counted per week. Expected weeks come from the calendar (Python's date.weekday() gave the
 * Mondays), expected counts and rates from the decisions the test makes.
 */
import assert from 'node:assert/strict';
import type { Caller } from '../../../src/agent/pipeline';
import { suggestionRates, weekOf } from '../../../src/domain/suggestionRates';
import { openFixture, type Fixture } from './projectFixture';

describe('suggestion outcomes per week (suggestionRates.by_week)', () => {
  it('weekOf gives the Monday of the ISO week in UTC, across month and year ends', () => {
    assert.equal(weekOf('2026-01-01T00:00:00.000Z'), '2025-12-29'); // a Thursday
    assert.equal(weekOf('2024-02-29T12:00:00Z'), '2024-02-26'); // leap day, a Thursday
    assert.equal(weekOf('1970-01-01T00:00:00Z'), '1969-12-29');
    assert.equal(weekOf('2026-11-29T23:59:59.999Z'), '2026-11-23'); // a Sunday belongs to the week before
    assert.equal(weekOf('2026-11-30T00:00:00.000Z'), '2026-11-30'); // a Monday starts its own
    assert.equal(weekOf('2026-11-30T00:30:00+01:00'), '2026-11-23'); // still Sunday in UTC
    assert.equal(weekOf('not a date'), 'not a date');
  });

  let fx: Fixture;
  let now = 0;
  beforeEach(async () => {
    fx = await openFixture({ clock: { now: () => now } });
  });
  afterEach(async () => {
    await fx.close();
  });

  it('counts each week accepted, edited, rejected and pending, with rates of the decided', async () => {
    now = Date.UTC(2025, 11, 1);
    const text = 'One. Two. Three. Four. Five.';
    const s = (await fx.ok<{ source_id: number }>('import_text', { name: 'Five', content: text })).source_id;
    const x = (await fx.ok<{ code_id: number }>('create_code', { name: 'X', color: '#E15759' })).code_id;
    const agent: Caller = { session_id: 'sess-claude', client_type: 'REST_CLIENT', client_name: 'Claude', user: 'claude' };
    const researcher: Caller = { session_id: 'sess-dana', client_type: 'LOCAL_UI', client_name: 'vscode', user: 'dana' };
    const suggest = async (iso: string, word: string) => {
      now = Date.parse(iso);
      const start = text.indexOf(word);
      return (
        await fx.ok<{ suggestion_id: number }>('suggest_code_application', { source_id: s, code_id: x, start_pos: start, end_pos: start + word.length }, agent)
      ).suggestion_id;
    };
    // week of Monday 2025-12-29: one pending (Wednesday 31 December)
    await suggest('2025-12-31T10:00:00Z', 'One.');
    // week of Monday 2026-01-05: accepted on the Monday, rejected on the Sunday
    const kept = await suggest('2026-01-05T08:00:00Z', 'Two.');
    const refused = await suggest('2026-01-11T23:59:00Z', 'Three.');
    // week of Monday 2026-01-12: approved, then the researcher removes the segment (edited)
    const changed = await suggest('2026-01-12T00:00:00Z', 'Four.');
    now = Date.parse('2026-01-20T09:00:00Z');
    await fx.ok('approve_coding_suggestion', { suggestion_id: kept }, researcher);
    await fx.ok('reject_coding_suggestion', { suggestion_id: refused, reason: 'not X' }, researcher);
    const applied = await fx.ok<{ segment_id: number }>('approve_coding_suggestion', { suggestion_id: changed }, researcher);
    await fx.ok('delete_segment', { segment_id: applied.segment_id }, researcher);

    const r = suggestionRates(fx.handle.repo);
    const none = { acceptance_rate: null, edit_rate: null, rejection_rate: null };
    assert.deepEqual(r.by_week, [
      { coder: 'claude', week: '2025-12-29', suggested: 1, accepted: 0, edited: 0, rejected: 0, pending: 1, ...none },
      {
        coder: 'claude',
        week: '2026-01-05',
        suggested: 2,
        accepted: 1,
        edited: 0,
        rejected: 1,
        pending: 0,
        acceptance_rate: 0.5,
        edit_rate: 0,
        rejection_rate: 0.5,
      },
      {
        coder: 'claude',
        week: '2026-01-12',
        suggested: 1,
        accepted: 0,
        edited: 1,
        rejected: 0,
        pending: 0,
        acceptance_rate: 0,
        edit_rate: 1,
        rejection_rate: 0,
      },
    ]);
    // the months split the same suggestions differently: December's one, January's three
    assert.deepEqual(
      r.by_month.map((m) => [m.month, m.suggested, m.accepted, m.edited, m.rejected, m.pending]),
      [
        ['2025-12', 1, 0, 0, 0, 1],
        ['2026-01', 3, 1, 1, 1, 0],
      ],
    );
    // and per code all four, a third each of the three decided
    assert.equal(r.by_code.length, 1);
    assert.equal(r.by_code[0]!.suggested, 4);
    assert.equal(r.by_code[0]!.acceptance_rate, 1 / 3);
  });
});
