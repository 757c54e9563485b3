/**
 * The Reports panel's agreement views' data (src/domain/agreementViews.ts and the messages of
 * src/ui/reports/agreementData.ts, issue 16 items 6 and 7) on real project files: disagreements as passages with each coder's codings side by side, and each agent against
 * each human per code. Positions come from searching the test's own strings; the passages' windows, the 2x2
 * counts, Cohen's kappa and Krippendorff's alpha are worked out by hand in the comments.
 */
import assert from 'node:assert/strict';
import type { Caller } from '../../../src/agent/pipeline';
import { codersByRole, disagreementPassages, humanAiAgreement } from '../../../src/domain/agreementViews';
import { coderComparisonReport } from '../../../src/domain/coderComparison';
import { agreementView, disagreementsView, humanAiView, pickCoders } from '../../../src/ui/reports/agreementData';
import { openFixture, type Fixture } from './projectFixture';

const DANA: Caller = { session_id: 'sess-dana', client_type: 'LOCAL_UI', client_name: 'vscode', user: 'dana' };
const RUI: Caller = { session_id: 'sess-rui', client_type: 'LOCAL_UI', client_name: 'vscode', user: 'rui' };
const CLAUDE: Caller = { session_id: 'sess-claude', client_type: 'REST_CLIENT', client_name: 'Claude', user: 'claude-coder' };
const GPT: Caller = { session_id: 'sess-gpt', client_type: 'REST_CLIENT', client_name: 'GPT', user: 'gpt-suggester' };

function close(actual: number | null, expected: number, what: string): void {
  assert.equal(typeof actual, 'number', `${what}: ${String(actual)}`);
  assert.ok(Math.abs((actual as number) - expected) < 1e-9, `${what}: ${actual as number} is not ${expected}`);
}

describe('the Reports agreement views (agreementViews.ts)', () => {
  let fx: Fixture;
  beforeEach(async () => {
    fx = await openFixture();
  });
  afterEach(async () => {
    await fx.close();
  });

  const code = async (name: string) => (await fx.ok<{ code_id: number }>('create_code', { name, color: '#4E79A7' })).code_id;
  const apply = (who: Caller, codeId: number, source: number, text: string, part: string) => {
    const start = text.indexOf(part);
    assert.ok(start >= 0, part);
    return fx.ok('apply_code', { code_id: codeId, source_id: source, start_position: start, end_position: start + part.length }, who);
  };

  it('shows each disagreement on its passage (widened within the line, cut at spaces), close ones of a code merged, with every coder’s codings', async () => {
    const T = 'We water on Mondays. The hose broke again, so we carried buckets.\nNext line.';
    const s = (await fx.ok<{ source_id: number }>('import_text', { name: 'Hose', content: T })).source_id;
    const water = await code('Water');
    const labour = await code('Labour');
    await apply(DANA, water, s, T, 'The hose broke again');
    await apply(RUI, water, s, T, 'hose broke');
    await apply(RUI, labour, s, T, 'again, so');
    const r = coderComparisonReport(fx.handle.repo, ['dana', 'rui'], {}, { draws: 0 });
    // characters: Water has "The " and " again" coded by dana only; Labour "again, so" by rui only (codes by name)
    assert.deepEqual(
      r.disagreements.map((d) => [d.code, d.text, d.coded_by]),
      [
        ['Labour', 'again, so', ['rui']],
        ['Water', 'The ', ['dana']],
        ['Water', ' again', ['dana']],
      ],
    );
    const p = disagreementPassages(fx.handle.repo, ['dana', 'rui'], r.disagreements, { context: 10 });
    const at = (part: string) => T.indexOf(part);
    // Labour [36, 45): 10 back is 26, inside "hose": from the next word, "broke" (30);
    // 10 on is 55, inside "carried": back to the space before it, so the passage ends after "we" (48)
    // Water [21, 25): 10 back is 11, a space: from "Mondays" (12); 10 on is 35, a space ending "broke": after "hose" (29);
    // Water [35, 41) starts 6 after that end (<= 10): the same passage, now to 48
    assert.equal(p.length, 2);
    const [lab, wat] = p as [(typeof p)[number], (typeof p)[number]];
    assert.equal(lab.text, 'broke again, so we');
    assert.equal(lab.start_pos, at('broke'));
    assert.equal(lab.end_pos, at(' carried'));
    assert.deepEqual(lab.disputed, [{ start: 6, end: 15 }]);
    assert.deepEqual(lab.coders, [
      { coder: 'dana', coded: false, spans: [{ start: 0, end: 11, code_id: water, code: 'Water', disputed: false }] },
      {
        coder: 'rui',
        coded: true,
        spans: [
          { start: 0, end: 5, code_id: water, code: 'Water', disputed: false },
          { start: 6, end: 15, code_id: labour, code: 'Labour', disputed: true },
        ],
      },
    ]);
    assert.equal(wat.text, 'Mondays. The hose broke again, so we');
    assert.equal(wat.start_pos, at('Mondays'));
    assert.deepEqual(wat.disputed, [
      { start: 9, end: 13 },
      { start: 23, end: 29 },
    ]);
    assert.equal(wat.text.slice(9, 13), 'The ');
    assert.deepEqual(wat.coders, [
      { coder: 'dana', coded: true, spans: [{ start: 9, end: 29, code_id: water, code: 'Water', disputed: true }] },
      {
        coder: 'rui',
        coded: false,
        spans: [
          { start: 13, end: 23, code_id: water, code: 'Water', disputed: true },
          { start: 24, end: 33, code_id: labour, code: 'Labour', disputed: false },
        ],
      },
    ]);
    // a passage stops at the line's end, and `max` bounds the passages
    assert.equal(disagreementPassages(fx.handle.repo, ['dana', 'rui'], r.disagreements, { context: 500 })[1]!.text, T.split('\n')[0]);
    assert.equal(disagreementPassages(fx.handle.repo, ['dana', 'rui'], r.disagreements, { max: 1 }).length, 1);
  });

  it('compares each agent with each human per code (kappa, alpha, percent with intervals) and tells the roles apart', async () => {
    const T = 'One. Two. Three. Four. Five. Six. Seven. Eight. Nine. Ten.';
    const s = (await fx.ok<{ source_id: number }>('import_text', { name: 'Ten', content: T })).source_id;
    const other = (await fx.ok<{ source_id: number }>('import_text', { name: 'Other', content: 'Elsewhere entirely.' })).source_id;
    const x = await code('X');
    for (const w of ['One.', 'Two.', 'Three.', 'Four.']) await apply(DANA, x, s, T, w);
    for (const w of ['One.', 'Two.', 'Five.']) await apply(CLAUDE, x, s, T, w);
    await apply(RUI, x, other, 'Elsewhere entirely.', 'Elsewhere');
    await fx.ok('suggest_code_application', { source_id: s, code_id: x, start_pos: 0, end_pos: 4 }, GPT);

    assert.deepEqual(codersByRole(fx.handle.repo), { agents: ['claude-coder', 'gpt-suggester'], humans: ['dana', 'rui'] });
    const r = humanAiAgreement(fx.handle.repo, { unit: 'sentence', draws: 200, seed: 5 });
    assert.deepEqual(r.agents, ['claude-coder', 'gpt-suggester']);
    // only the agent with segments is compared, with each human separately
    assert.deepEqual(
      r.pairs.map((p) => [p.agent, p.human, p.sources, p.note]),
      [
        ['claude-coder', 'dana', 1, null],
        ['claude-coder', 'rui', 0, 'claude-coder and rui have not coded any source in common.'],
      ],
    );
    const xd = r.pairs[0]!.codes[0]!;
    // 10 sentences: both 2 (One, Two), dana only 2 (Three, Four), claude only 1 (Five), neither 5.
    // po = 7/10; pe = .4 x .3 + .6 x .7 = .54; kappa = (.7 - .54) / (1 - .54) = .16 / .46
    // alpha (nominal, 2 coders, no missing): n = 20 values, 7 ones and 13 zeros, 3 disagreeing units give o01 = o10 = 3:
    // 1 - (n - 1) o01 / (n0 n1) = 1 - 19 x 3 / (13 x 7) = 34 / 91
    assert.equal(xd.code, 'X');
    assert.equal(xd.units, 10);
    close(xd.percent_agreement.value, 70, 'percent agreement');
    close(xd.cohen_kappa.value, 0.16 / 0.46, "Cohen's kappa");
    close(xd.krippendorff_alpha.value, 34 / 91, "Krippendorff's alpha");
    for (const m of [xd.percent_agreement, xd.cohen_kappa, xd.krippendorff_alpha]) {
      assert.ok(m.ci_low !== null && m.ci_high !== null && m.ci_low <= (m.value as number) && (m.value as number) <= m.ci_high, JSON.stringify(m));
    }
    // one code: all codes pooled is the same table
    close(r.pairs[0]!.overall!.cohen_kappa.value, 0.16 / 0.46, 'overall kappa');
    // the suggester's outcome: one pending suggestion
    assert.deepEqual(
      r.suggestions.by_code.map((c) => [c.coder, c.code, c.suggested, c.pending]),
      [['gpt-suggester', 'X', 1, 1]],
    );
  });
});

describe("the Reports panel's agreement messages (src/ui/reports/agreementData.ts)", () => {
  let fx: Fixture;
  beforeEach(async () => {
    fx = await openFixture();
  });
  afterEach(async () => {
    await fx.close();
  });

  it('picks the coders asked for (else the two with most segments), checks the unit, and passes colours, intervals and notes', async () => {
    const T = 'One. Two. Three. Four.';
    const s = (await fx.ok<{ source_id: number }>('import_text', { name: 'Four', content: T })).source_id;
    const x = (await fx.ok<{ code_id: number }>('create_code', { name: 'X', color: '#E15759' })).code_id;
    const apply = (who: Caller, part: string) => {
      const start = T.indexOf(part);
      return fx.ok('apply_code', { code_id: x, source_id: s, start_position: start, end_position: start + part.length }, who);
    };
    // one coder: nothing to compare, said in words
    await apply(DANA, 'One.');
    const alone = disagreementsView(fx.handle.repo, 'p', undefined, undefined);
    assert.equal(alone.type, 'disagreements');
    assert.ok(alone.type === 'disagreements' && alone.selected === null && /one coder \(dana\)/.test(alone.note ?? ''), JSON.stringify(alone));
    await apply(DANA, 'Two.');
    await apply(RUI, 'One.');
    await apply(CLAUDE, 'Three.');
    // dana has 2 segments, rui and claude-coder 1 each: by default dana and the first of the others by name
    const picked = pickCoders(fx.handle.repo, 'not a list', 'word');
    assert.deepEqual(picked, { coders: ['claude-coder', 'dana', 'rui'], selected: ['dana', 'claude-coder'], unit: 'character' });
    // an unknown coder or a repeated one falls back to the default
    assert.deepEqual(pickCoders(fx.handle.repo, ['dana', 'nobody'], 'sentence').selected, ['dana', 'claude-coder']);
    assert.deepEqual(pickCoders(fx.handle.repo, ['rui', 'rui'], 'sentence').selected, ['dana', 'claude-coder']);
    assert.deepEqual(pickCoders(fx.handle.repo, ['rui', 'dana'], 'sentence'), {
      coders: ['claude-coder', 'dana', 'rui'],
      selected: ['rui', 'dana'],
      unit: 'sentence',
    });

    // dana and rui by sentence: both coded One, dana alone Two; 4 sentences: po = 3/4, pa = 1/2, pb = 1/4,
    // pe = 1/8 + 3/8 = 1/2, kappa = (3/4 - 1/2) / (1/2) = 1/2
    const a = agreementView(fx.handle.repo, 'p', ['dana', 'rui'], 'sentence', 100);
    assert.ok(a.type === 'agreement');
    assert.equal(a.rows.length, 1);
    const row = a.rows[0]!;
    assert.deepEqual([row.name, row.both, row.only_a, row.only_b], ['X', 1, 1, 0]);
    close(row.kappa, 0.5, 'kappa');
    assert.ok(
      row.kappa_low !== null &&
        row.kappa_low !== undefined &&
        row.kappa_high !== null &&
        row.kappa_high !== undefined &&
        row.kappa_low <= 0.5 &&
        0.5 <= row.kappa_high,
    );
    // three coders: Fleiss' kappa with its interval in the row
    const three = agreementView(fx.handle.repo, 'p', ['dana', 'rui', 'claude-coder'], 'sentence', 100);
    assert.ok(three.type === 'agreement');
    close(three.rows[0]!.kappa, three.tables![0]!.measures.find((m) => m.measure === "Fleiss' κ")!.value as number, "the row's kappa is Fleiss'");
    assert.equal(three.rows[0]!.kappa_low, three.tables![0]!.measures.find((m) => m.measure === "Fleiss' κ")!.ci_low);

    // the disagreement on "Two." as a passage with each coder's column and the code's colour
    const d = disagreementsView(fx.handle.repo, 'p', ['dana', 'rui'], 'sentence');
    assert.ok(d.type === 'disagreements');
    assert.equal(d.total, 1);
    assert.equal(d.passages[0]!.color, '#E15759');
    assert.equal(d.passages[0]!.text, T);
    assert.deepEqual(
      d.passages[0]!.coders.map((c) => [c.coder, c.coded, c.spans.map((x) => [T.slice(x.start, x.end), x.color, x.disputed])]),
      [
        [
          'dana',
          true,
          [
            ['One.', '#E15759', true],
            ['Two.', '#E15759', true],
          ],
        ],
        ['rui', false, [['One.', '#E15759', true]]],
      ],
    );

    // human vs AI: claude-coder against dana and rui, with a note when no agent suggested
    const h = humanAiView(fx.handle.repo, 'p', 'sentence', 50);
    assert.ok(h.type === 'human_ai');
    assert.deepEqual(h.agents, ['claude-coder']);
    assert.deepEqual(
      h.pairs.map((p) => [p.agent, p.human, p.codes.length]),
      [
        ['claude-coder', 'dana', 1],
        ['claude-coder', 'rui', 1],
      ],
    );
    assert.deepEqual([h.by_code, h.by_week], [[], []]);
    assert.equal(h.note, undefined);
  });
});
