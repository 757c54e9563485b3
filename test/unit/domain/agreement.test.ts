/**
 * src/domain/agreement: every coefficient against published worked examples and independent implementations,
 * never against values the code under test produced.
 *
 * - Krippendorff's alpha: K. Krippendorff, "Computing Krippendorff's Alpha-Reliability" (2011), the reliability
 *   data of 4 observers x 12 units with missing values: nominal 0.743, ordinal 0.815, interval 0.849.
 * - Fleiss' kappa: the worked example of Wikipedia's "Fleiss' kappa" article (10 subjects, 14 raters, 5
 *   categories; P-bar 0.378, P-bar-e 0.213, kappa 0.210), computed there by Fleiss' (1971) equations.
 * - Cohen's kappa, Gwet's AC1, Brennan-Prediger, percent agreement and Krippendorff's alpha of two raters:
 *   K. L. Gwet, Handbook of Inter-Rater Reliability (4th ed., 2014), the 3x3 table of 100 pregnancies by two
 *   abstractors, as the irrCAC R package's vignette prints it (cont3x3abstractors: kappa 0.7964094, AC1
 *   0.8493305, BP 0.835, alpha 0.7972585, percent agreement 0.89).
 * - Unitizing alpha: K. Krippendorff, "Measuring the reliability of qualitative text analysis data", Quality &
 *   Quantity 38 (2004), the two observers on a continuum of 300: category c Do = .0144, De = .0532; category k
 *   coded identically (alpha 1, De = .0490).
 * - Cohen's kappa of generated data against scikit-learn's cohen_kappa_score, and the binary many-coder
 *   coefficients against statsmodels' fleiss_kappa (methods fleiss and randolph, Randolph's free-marginal kappa =
 *   Brennan-Prediger for many raters), spawning the system's python3 (Debian packages python3-sklearn,
 *   python3-statsmodels): skipped with the reason when missing, failing under CI=true.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { binaryAgreement, binaryAgreementInto, coderPairs } from '../../../src/domain/agreement/binary';
import { bootstrapIntervals, binomial, mulberry32 } from '../../../src/domain/agreement/bootstrap';
import { brennanPrediger, cohensKappa, fleissKappa, gwetAC1, percentAgreement, type Ratings } from '../../../src/domain/agreement/coefficients';
import { compareCoders } from '../../../src/domain/agreement/comparison';
import { krippendorffAlpha, sortedLengths, unitizingAlpha } from '../../../src/domain/agreement/krippendorff';
import { renderReport } from '../../../src/exchange/reportFormats';
import { ALICE, openFixture, type Fixture } from './projectFixture';

function close(actual: number | null, expected: number, tolerance: number, what: string): void {
  assert.equal(typeof actual, 'number', `${what}: ${String(actual)}`);
  assert.ok(Math.abs((actual as number) - expected) <= tolerance, `${what}: ${actual as number} is not ${expected} ± ${tolerance}`);
}

// Krippendorff (2011), p. 3: rows are observers A-D, columns units 1-12, null = missing
const K2011 = [
  [1, 2, 3, 3, 2, 1, 4, 1, 2, null, null, null],
  [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, null, 3],
  [null, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, null],
  [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, null],
];
/** units x coders */
const K2011_UNITS = K2011[0]!.map((_, u) => K2011.map((row) => row[u] ?? null));

// Wikipedia, "Fleiss' kappa", worked example: n_ij, 10 subjects x 5 categories, 14 raters each
const FLEISS_TABLE = [
  [0, 0, 0, 0, 14],
  [0, 2, 6, 4, 2],
  [0, 0, 3, 5, 6],
  [0, 3, 9, 2, 0],
  [2, 2, 8, 1, 1],
  [7, 7, 0, 0, 0],
  [3, 2, 6, 3, 0],
  [2, 5, 3, 2, 2],
  [6, 5, 2, 1, 0],
  [0, 2, 2, 3, 7],
];

/** Gwet's cont3x3abstractors: rows abstractor 1, columns abstractor 2 (Ectopic, AIU, NIU), 100 subjects, as weighted units. */
const GWET_3X3 = [
  [13, 0, 0],
  [0, 20, 7],
  [0, 4, 56],
];
function fromTable(t: number[][]): Ratings {
  const values: number[][] = [];
  const weights: number[] = [];
  t.forEach((row, i) =>
    row.forEach((n, j) => {
      if (n > 0) {
        values.push([i, j]);
        weights.push(n);
      }
    }),
  );
  return { values, weights };
}

describe('agreement statistics (src/domain/agreement)', () => {
  it("Krippendorff's alpha on Krippendorff's (2011) reliability data: nominal 0.743, ordinal 0.815, interval 0.849", () => {
    close(krippendorffAlpha(K2011_UNITS, 'nominal'), 0.743, 0.0005, 'nominal');
    close(krippendorffAlpha(K2011_UNITS, 'ordinal'), 0.815, 0.0005, 'ordinal');
    close(krippendorffAlpha(K2011_UNITS, 'interval'), 0.849, 0.0005, 'interval');
  });

  it("Fleiss' kappa on the Wikipedia worked example: 0.210 (P-bar 0.378)", () => {
    // each subject's 14 ratings, in any rater order (Fleiss' kappa ignores rater identity)
    const values = FLEISS_TABLE.map((counts) => counts.flatMap((n, k) => new Array<number>(n).fill(k)));
    close(fleissKappa({ values }), 0.21, 0.0005, 'kappa');
    close(percentAgreement({ values }), 37.8, 0.05, 'P-bar in percent');
  });

  it("Gwet's Handbook 3x3 table (irrCAC cont3x3abstractors): kappa 0.7964094, AC1 0.8493305, BP 0.835, alpha 0.7972585, agreement 0.89", () => {
    const r = fromTable(GWET_3X3);
    close(cohensKappa(r, 0, 1), 0.7964094, 5e-8, 'Cohen');
    close(gwetAC1(r, 3), 0.8493305, 5e-8, 'AC1');
    close(brennanPrediger(r, 3), 0.835, 1e-12, 'Brennan-Prediger');
    close(krippendorffAlpha(r.values, 'nominal', r.weights), 0.7972585, 5e-8, 'alpha');
    close(percentAgreement(r), 89, 1e-9, 'percent agreement');
  });

  it("the unitizing alpha on Krippendorff's (2004) example: Do .0144 and De .0532 for c; k coded alike gives 1 (De .0490)", () => {
    // observers i and j on [150, 450): units of c at [225,295), [370,400) and [220,300), [355,375), [400,420); shifted by 150
    const c = unitizingAlpha([
      {
        length: 300,
        coders: [
          [75, 145, 220, 250],
          [70, 150, 205, 225, 250, 270],
        ],
      },
    ]);
    close(c.observed, 0.0144, 0.00005, 'Do(c)');
    close(c.expected, 0.0532, 0.00005, 'De(c)');
    close(c.alpha, 1 - 0.0144 / 0.0532, 0.002, 'alpha(c) from the rounded published parts');
    // uncoded continua (sources without the code) given as a background of lengths count as whole gaps, as if listed
    const withEmpty = unitizingAlpha([
      {
        length: 300,
        coders: [
          [75, 145, 220, 250],
          [70, 150, 205, 225, 250, 270],
        ],
      },
      { length: 120, coders: [[], []] },
      { length: 40, coders: [[], []] },
    ]);
    const background = unitizingAlpha(
      [
        {
          length: 300,
          coders: [
            [75, 145, 220, 250],
            [70, 150, 205, 225, 250, 270],
          ],
        },
      ],
      sortedLengths([300, 120, 40]),
    );
    close(background.observed, withEmpty.observed, 1e-15, 'Do with a background');
    close(background.expected, withEmpty.expected, 1e-12, 'De with a background');
    assert.ok(withEmpty.expected !== c.expected, 'the uncoded continua change De');
    // a 100,000-character uncoded continuum: listed, the gaps' table is a sorted list (too long for one indexed by
    // length); given as background, the coded continuum's table is indexed by length: both count it as m whole gaps
    const coded = {
      length: 300,
      coders: [
        [75, 145, 220, 250],
        [70, 150, 205, 225, 250, 270],
      ],
    };
    const listedLong = unitizingAlpha([coded, { length: 100_000, coders: [[], []] }]);
    const backgroundLong = unitizingAlpha([coded], sortedLengths([300, 100_000]));
    close(backgroundLong.observed, listedLong.observed, 1e-15, 'Do, long continuum');
    close(backgroundLong.expected, listedLong.expected, 1e-15, 'De, long continuum');
    assert.ok(listedLong.expected < withEmpty.expected / 10, 'a long uncoded text makes chance agreement far likelier');
    const k = unitizingAlpha([
      {
        length: 300,
        coders: [
          [30, 90, 150, 200],
          [30, 90, 150, 200],
        ],
      },
    ]);
    close(k.expected, 0.049, 0.00005, 'De(k)');
    assert.equal(k.alpha, 1);
  });

  it('undefined coefficients are null: one category throughout, no pairable values', () => {
    assert.equal(
      cohensKappa(
        {
          values: [
            [1, 1],
            [1, 1],
          ],
        },
        0,
        1,
      ),
      null,
    );
    assert.equal(
      krippendorffAlpha([
        [1, null],
        [null, 2],
      ]),
      null,
    );
    assert.equal(fleissKappa({ values: [[0, 0, 0]] }), null);
  });

  it('binomial deviates have the mean n·p and the variance n·p·(1-p), on both sides of the normal threshold', () => {
    for (const [n, p] of [
      [40, 0.3],
      [1_000_000, 0.00002],
      [100_000, 0.4],
    ] as const) {
      const rand = mulberry32(7);
      const xs = Array.from({ length: 4000 }, () => binomial(n, p, rand));
      const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
      const variance = xs.reduce((a, b) => a + (b - mean) ** 2, 0) / (xs.length - 1);
      const sd = Math.sqrt(n * p * (1 - p));
      assert.ok(Math.abs(mean - n * p) < (4 * sd) / Math.sqrt(xs.length), `mean ${mean} vs ${n * p}`);
      assert.ok(Math.abs(variance / (n * p * (1 - p)) - 1) < 0.1, `variance ${variance} vs ${n * p * (1 - p)}`);
    }
  });

  it('the bootstrap interval is seeded (same seed, same interval), brackets the estimate and narrows with more units', () => {
    const stat = (b: Float64Array): (number | null)[] => [binaryAgreement(b, 2).cohen[0] ?? null];
    const small = Float64Array.from([30, 10, 10, 50]); // neither, only 0, only 1, both
    const large = Float64Array.from([3000, 1000, 1000, 5000]);
    const a = bootstrapIntervals(small, stat, 1, 500, 42)[0]!;
    const b = bootstrapIntervals(small, stat, 1, 500, 42)[0]!;
    assert.deepEqual(a, b);
    const kappa = binaryAgreement(small, 2).cohen[0]!;
    assert.ok(a.low < kappa && kappa < a.high, `${a.low} < ${kappa} < ${a.high}`);
    const wide = bootstrapIntervals(large, stat, 1, 500, 42)[0]!;
    assert.ok(wide.high - wide.low < (a.high - a.low) / 5);
    // the normal-theory 95% interval of kappa here is about ±0.17 (n = 100); the percentile interval is of that size
    assert.ok(a.high - a.low > 0.2 && a.high - a.low < 0.5, `${a.high - a.low}`);
  });

  it('compareCoders: characters, units and disagreements of three coders on a 20-character source', () => {
    // coder 0 [0,10), coder 1 [5,15), coder 2 [0,10): patterns by hand
    // [0,5): coders 0 and 2 -> mask 5, 5 characters; [5,10): all -> mask 7, 5; [10,15): coder 1 -> mask 2, 5; [15,20): none -> 0, 5
    const src = {
      source_id: 1,
      extent: [0, 20],
      units: null,
      codes: new Map([
        [
          9,
          [
            [0, 10],
            [5, 15],
            [0, 10],
          ],
        ],
      ]),
    };
    const r = compareCoders([src], [9], 3, { draws: 0, seed: 1, maxDisagreements: 10 });
    assert.deepEqual([...r.codes.get(9)!.counts], [5, 0, 5, 0, 0, 5, 0, 5]);
    assert.deepEqual(
      r.disagreements.map((d) => [d.start, d.end, d.mask]),
      [
        [0, 5, 5],
        [10, 15, 2],
      ],
    );
    // sentence units [0,4), [6,12), [16,20): masks 5, 7, 0
    const units = compareCoders([{ ...src, units: [0, 4, 6, 12, 16, 20] }], [9], 3, { draws: 0, seed: 1, maxDisagreements: 10 });
    assert.deepEqual([...units.codes.get(9)!.counts], [1, 0, 0, 0, 0, 1, 0, 1]);
    // pairwise kappa of coders 0 and 2 over characters: identical -> 1
    assert.equal(r.codes.get(9)!.measures.cohen_kappa[coderPairs(3).findIndex(([i, j]) => i === 0 && j === 2)]!.value, 1);
  });
});

// ---------------------------------------------------------------------------------------------------
// Independent implementations: scikit-learn and statsmodels through the system's python3

const PYTHON = '/usr/bin/python3';

/** Whether `module` imports in the system's python3; the reason when not. */
function pythonHas(module: string): string | null {
  if (!fs.existsSync(PYTHON)) return `${PYTHON} does not exist`;
  const r = spawnSync(PYTHON, ['-c', `import ${module}`], { encoding: 'utf8' });
  return r.status === 0
    ? null
    : `${PYTHON} cannot import ${module} (install the Debian package python3-${module === 'sklearn' ? 'sklearn' : 'statsmodels'}): ${r.stderr.trim().split('\n').pop() ?? ''}`;
}

function skipOrFail(ctx: Mocha.Context, why: string): void {
  if (process.env.CI === 'true') assert.fail(`CI=true and ${why}`);
  console.log(`      skipped: ${why}`);
  ctx.skip();
}

function python(script: string, input: unknown): unknown {
  const r = spawnSync(PYTHON, ['-c', script], { input: JSON.stringify(input), encoding: 'utf8', maxBuffer: 1 << 26 });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}

describe('agreement statistics against independent implementations (python3)', () => {
  it("Cohen's kappa equals scikit-learn's cohen_kappa_score on 40 generated data sets", function () {
    const why = pythonHas('sklearn');
    if (why) return skipOrFail(this, why);
    const rand = mulberry32(2026);
    const sets = Array.from({ length: 40 }, (_, s) => {
      const n = 5 + Math.floor(rand() * 300);
      const q = 2 + (s % 4);
      const a = Array.from({ length: n }, () => Math.floor(rand() * q));
      // b agrees with a with probability 0.6, else random
      const b = a.map((x) => (rand() < 0.6 ? x : Math.floor(rand() * q)));
      return { a, b };
    });
    const expected = python(
      'import sys, json\nfrom sklearn.metrics import cohen_kappa_score\nprint(json.dumps([cohen_kappa_score(s["a"], s["b"]) for s in json.load(sys.stdin)]))',
      sets,
    ) as number[];
    sets.forEach((s, i) => {
      const got = cohensKappa({ values: s.a.map((x, u) => [x, s.b[u] as number]) }, 0, 1);
      close(got, expected[i] as number, 1e-9, `set ${i}`);
    });
  });

  it("the binary many-coder coefficients equal statsmodels' fleiss_kappa (fleiss, randolph) and scikit-learn per pair", function () {
    const why = pythonHas('statsmodels') ?? pythonHas('sklearn');
    if (why) return skipOrFail(this, why);
    const rand = mulberry32(99);
    const sets = Array.from({ length: 20 }, (_, s) => {
      const m = 2 + (s % 4);
      const n = 20 + Math.floor(rand() * 200);
      const rows = Array.from({ length: n }, () => {
        const truth = rand() < 0.4 ? 1 : 0;
        return Array.from({ length: m }, () => (rand() < 0.8 ? truth : 1 - truth));
      });
      return { m, rows };
    });
    const script = [
      'import sys, json',
      'from statsmodels.stats.inter_rater import fleiss_kappa, aggregate_raters',
      'from sklearn.metrics import cohen_kappa_score',
      'out = []',
      'for s in json.load(sys.stdin):',
      '    table, _ = aggregate_raters(s["rows"], n_cat=2)',
      '    m = s["m"]',
      '    pairs = [cohen_kappa_score([r[i] for r in s["rows"]], [r[j] for r in s["rows"]]) for i in range(m) for j in range(i + 1, m)]',
      '    out.append([fleiss_kappa(table, method="fleiss"), fleiss_kappa(table, method="randolph"), pairs])',
      'print(json.dumps(out))',
    ].join('\n');
    const expected = python(script, sets) as [number, number, number[]][];
    sets.forEach((s, i) => {
      const counts = new Float64Array(1 << s.m);
      for (const row of s.rows) {
        let mask = 0;
        row.forEach((v, c) => (mask |= v << c));
        counts[mask] = (counts[mask] as number) + 1;
      }
      const got = binaryAgreement(counts, s.m);
      const [fleiss, randolph, pairs] = expected[i]!;
      close(got.fleiss_kappa, fleiss, 1e-9, `set ${i} Fleiss`);
      close(got.brennan_prediger, randolph, 1e-9, `set ${i} Brennan-Prediger`);
      pairs.forEach((k, p) => close(got.cohen[p] ?? null, k, 1e-9, `set ${i} pair ${p}`));
      // AC1 and alpha: the histogram's shortcut against the general functions checked on published data above
      const values = s.rows.map((r) => r.map((v) => v as number | null));
      close(got.gwet_ac1, gwetAC1({ values }, 2)!, 1e-9, `set ${i} AC1`);
      close(got.krippendorff_alpha, krippendorffAlpha(values)!, 1e-9, `set ${i} alpha`);
      // the bootstrap's allocation-free variant gives the same numbers
      const into = new Float64Array(5 + pairs.length);
      binaryAgreementInto(counts, s.m, into);
      close(into[1]!, fleiss, 1e-9, `set ${i} Fleiss (into)`);
      close(into[2]!, randolph, 1e-9, `set ${i} Brennan-Prediger (into)`);
      close(into[3]!, gwetAC1({ values }, 2)!, 1e-9, `set ${i} AC1 (into)`);
      close(into[4]!, krippendorffAlpha(values)!, 1e-9, `set ${i} alpha (into)`);
      pairs.forEach((k, p) => close(into[5 + p]!, k, 1e-9, `set ${i} pair ${p} (into)`));
    });
  });
});

describe('generate_coder_comparison with three coders, through the pipeline on a real project file', () => {
  let fx: Fixture;
  beforeEach(async () => {
    fx = await openFixture();
  });
  afterEach(async () => {
    await fx.close();
  });

  /** Source "One. Two. Three. Four." (22 code points; sentences [0,4), [5,9), [10,16), [17,22)) and code X coded by alice, bob and carol. */
  async function threeCoders(): Promise<{ s: number; x: number }> {
    const s = (await fx.ok<{ source_id: number }>('import_text', { name: 'Four', content: 'One. Two. Three. Four.' })).source_id;
    const x = (await fx.ok<{ code_id: number }>('create_code', { name: 'X', color: '#E15759' })).code_id;
    const apply = (caller: typeof ALICE, start: number, end: number) =>
      fx.ok('apply_code', { code_id: x, source_id: s, start_position: start, end_position: end }, caller);
    await apply(ALICE, 0, 4); // "One."
    await apply(ALICE, 10, 16); // "Three."
    await apply({ ...ALICE, session_id: 'sess-bob', user: 'bob' }, 0, 4);
    await apply({ ...ALICE, session_id: 'sess-carol', user: 'carol' }, 0, 4);
    await apply({ ...ALICE, session_id: 'sess-carol', user: 'carol' }, 10, 16);
    return { s, x };
  }

  it('by sentence: Fleiss, Brennan-Prediger, AC1, alpha and each pair, as computed by hand; the disagreement with its text', async () => {
    await threeCoders();
    const job = await fx.ok('generate_coder_comparison', { coder_ids: ['alice', 'bob', 'carol'], unit: 'sentence', bootstrap: { draws: 200, seed: 7 } });
    const r = job.result;
    assert.deepEqual([r.coders, r.unit, r.bootstrap], [['alice', 'bob', 'carol'], 'sentence', { draws: 200, seed: 7 }]);
    const m = r.codes[0].measures;
    // units: One. (all three), Two. (none), Three. (alice, carol), Four. (none): 4 sentences, ratings per unit (ones of 3):
    // 3, 0, 2, 0. Pa per unit: 1, 1, (2*1 + 1*0)/6 = 1/3, 1 -> P = (3 + 1/3)/4 = 10/12 = 0.8333...
    // p1 = 5/12; Fleiss pe = (5/12)^2 + (7/12)^2 = 74/144; kappa = (120/144 - 74/144)/(70/144) = 46/70
    assert.equal(m.units, 4);
    close(m.percent_agreement.value, 100 * (10 / 12), 1e-9, 'percent agreement');
    close(m.fleiss_kappa.value, 46 / 70, 1e-9, 'Fleiss');
    // Brennan-Prediger (q = 2): 2 * 10/12 - 1 = 2/3; AC1: pe = 2 * 5/12 * 7/12 = 70/144; (120 - 70)/(144 - 70) = 50/74
    close(m.brennan_prediger.value, 2 / 3, 1e-9, 'Brennan-Prediger');
    close(m.gwet_ac1.value, 50 / 74, 1e-9, 'AC1');
    // alpha: n = 12 values, o_11 = 3*2/2 + 2*1/2 = 4, o_00 = 2*3*2/2 + 1*0 = 6, o_01 = o_10 = 2*1/2 = 1; n1 = 5, n0 = 7
    // alpha = 1 - (n - 1) * o_01 * 2 / (2 * n0 * n1) = 1 - 11 * 2 / 70 = 48/70
    close(m.krippendorff_alpha.value, 48 / 70, 1e-9, 'alpha');
    // pairs: alice-bob: units 1,0,1,0 vs 1,0,0,0 -> po 3/4, pA 1/2, pB 1/4, pe 1/8 + 3/8 = 1/2, kappa 1/2; alice-carol identical -> 1;
    // bob-carol as alice-bob -> 1/2
    assert.deepEqual(
      m.cohen_kappa.map((k: { coders: string[] }) => k.coders),
      [
        ['alice', 'bob'],
        ['alice', 'carol'],
        ['bob', 'carol'],
      ],
    );
    close(m.cohen_kappa[0].value, 0.5, 1e-9, 'alice-bob');
    close(m.cohen_kappa[1].value, 1, 1e-9, 'alice-carol');
    close(m.cohen_kappa[2].value, 0.5, 1e-9, 'bob-carol');
    // intervals: present, ordered, and the same on a second run with the same seed
    assert.ok(m.fleiss_kappa.ci_low !== null && m.fleiss_kappa.ci_low <= m.fleiss_kappa.ci_high);
    const again = await fx.ok('generate_coder_comparison', { coder_ids: ['alice', 'bob', 'carol'], unit: 'sentence', bootstrap: { draws: 200, seed: 7 } });
    assert.deepEqual(again.result.codes[0].measures, m);
    // no 2x2 table with three coders; the one disagreement is "Three." which bob did not code
    assert.equal(r.codes[0].both, undefined);
    assert.deepEqual(
      r.disagreements.map((d: Record<string, unknown>) => [d.text, d.start_pos, d.end_pos, d.coded_by, d.not_coded_by]),
      [['Three.', 10, 16, ['alice', 'carol'], ['bob']]],
    );
  });

  it('refuses fewer than two coders and the same coder twice (INVALID_ARGUMENTS), and an unknown unit', async () => {
    await threeCoders();
    await fx.fails('generate_coder_comparison', { coder_ids: ['alice'] }, 'INVALID_ARGUMENTS');
    await fx.fails('generate_coder_comparison', { coder_ids: ['alice', 'bob', 'alice'] }, 'INVALID_ARGUMENTS');
    await fx.fails('generate_coder_comparison', { coder_ids: ['alice', 'bob'], unit: 'word' }, 'INVALID_ARGUMENTS');
    assert.equal((await fx.ok('list_reports')).total, 0);
  });

  it('the CSV export lists every measure with its interval and the disagreements', async () => {
    await threeCoders();
    const job = await fx.ok('generate_coder_comparison', { coder_ids: ['alice', 'bob', 'carol'], unit: 'segment', bootstrap: { draws: 50, seed: 3 } });
    const view = await fx.ok('get_report', { report_id: job.report_id });
    const csv = renderReport(view, 'csv').split('\r\n');
    assert.equal(csv[0], 'code_id,code,measure,coders,units,value,ci_low,ci_high');
    assert.ok(
      csv.some((l) => l.startsWith(`${job.result.codes[0].code_id},X,cohen_kappa,alice & bob,2,`)),
      csv.join('\n'),
    );
    assert.ok(csv.includes('code,source,start_pos,end_pos,coded_by,not_coded_by,text'));
    assert.ok(csv.includes('X,Four,10,16,alice; carol,bob,Three.'), csv.join('\n'));
  });
});

describe("the coder comparison's suggestion outcomes per agent and code (issue 16 item 7)", () => {
  let fx: Fixture;
  beforeEach(async () => {
    fx = await openFixture();
  });
  afterEach(async () => {
    await fx.close();
  });

  it('counts accepted, edited (changed or removed after approval), rejected and pending coding suggestions, with rates of the decided ones', async () => {
    const s = (await fx.ok<{ source_id: number }>('import_text', { name: 'Four', content: 'One. Two. Three. Four.' })).source_id;
    const x = (await fx.ok<{ code_id: number }>('create_code', { name: 'X', color: '#E15759' })).code_id;
    const bob = { ...ALICE, session_id: 'sess-bob', user: 'bob' };
    await fx.ok('apply_code', { code_id: x, source_id: s, start_position: 0, end_position: 4 });
    await fx.ok('apply_code', { code_id: x, source_id: s, start_position: 0, end_position: 4 }, bob);
    const agent = { ...ALICE, session_id: 'sess-claude', user: 'claude' };
    const suggest = (start: number, end: number) =>
      fx.ok<{ suggestion_id: number }>('suggest_code_application', { source_id: s, code_id: x, start_pos: start, end_pos: end }, agent);
    const kept = await suggest(0, 4);
    const changed = await suggest(5, 9);
    const refused = await suggest(10, 16);
    await suggest(17, 22);
    await fx.ok('approve_coding_suggestion', { suggestion_id: kept.suggestion_id });
    await fx.ok('approve_coding_suggestion', { suggestion_id: changed.suggestion_id });
    await fx.ok('reject_coding_suggestion', { suggestion_id: refused.suggestion_id, reason: 'not about X' });
    // the researcher removes the segment the second suggestion became: accepted, then edited
    const segs = (await fx.ok<{ segments: { segment_id: number; start_pos: number }[] }>('list_segments_for_source', { source_id: s })).segments;
    await fx.ok('delete_segment', { segment_id: segs.find((g) => g.start_pos === 5)!.segment_id });
    const r = (await fx.ok('generate_coder_comparison', { coder_ids: ['alice', 'bob'], bootstrap: { draws: 0 } })).result;
    const third = 1 / 3;
    assert.deepEqual(r.suggestions.by_code, [
      {
        coder: 'claude',
        code_id: x,
        code: 'X',
        suggested: 4,
        accepted: 1,
        edited: 1,
        rejected: 1,
        pending: 1,
        acceptance_rate: third,
        edit_rate: third,
        rejection_rate: third,
      },
    ]);
    assert.deepEqual(r.suggestions.by_month, [
      {
        coder: 'claude',
        month: '2026-01',
        suggested: 4,
        accepted: 1,
        edited: 1,
        rejected: 1,
        pending: 1,
        acceptance_rate: third,
        edit_rate: third,
        rejection_rate: third,
      },
    ]);
  });
});
