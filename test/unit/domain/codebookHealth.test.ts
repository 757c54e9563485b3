/**
 * src/domain/codebookHealth.ts: each of the four problem kinds on hand-made inputs (the coded ranges written
 * out as the repository orders them), and once on a real project built through the pipeline.
 */
import assert from 'node:assert/strict';
import { codebookHealth, overlapsTruncatedMessage, projectCodebookHealth } from '../../../src/domain/codebookHealth';
import type { CodeWithCounts, CodedRanges } from '../../../src/domain/ports';
import { ALICE, openFixture } from './projectFixture';

function code(code_id: number, name: string, memo: string | null, segment_count = 2, av_segment_count = 0): CodeWithCounts {
  return {
    code_id,
    name,
    memo,
    segment_count,
    av_segment_count,
    color: '#808080',
    category_id: null,
    owner: 'alice',
    session_id: null,
    created_at: '',
    updated_at: '',
  } as unknown as CodeWithCounts;
}

/** Coded ranges from rows [source, code, start, end, owner], which must already be in source/start order. */
function ranges(rows: [number, number, number, number, string][]): CodedRanges {
  const owners = [...new Set(rows.map((r) => r[4]))];
  return {
    source_id: Int32Array.from(rows.map((r) => r[0])),
    code_id: Int32Array.from(rows.map((r) => r[1])),
    start_pos: Int32Array.from(rows.map((r) => r[2])),
    end_pos: Int32Array.from(rows.map((r) => r[3])),
    owner: Int32Array.from(rows.map((r) => owners.indexOf(r[4]))),
    owners,
  };
}

const NONE = ranges([]);

describe('codebook health (src/domain/codebookHealth.ts)', () => {
  it('finds codes without a memo (empty or blank)', () => {
    const h = codebookHealth([code(1, 'A', null), code(2, 'B', '   '), code(3, 'C', 'what C means')], NONE);
    assert.deepEqual(
      h.problems.map((p) => [p.kind, p.code_ids, p.severity]),
      [
        ['code_without_memo', [1], 'information'],
        ['code_without_memo', [2], 'information'],
      ],
    );
    assert.match(h.problems[0]!.message, /"A" has no memo/);
  });

  it('finds codes used exactly once, text and AV segments together (usedOnceAfter 0: always)', () => {
    const h = codebookHealth([code(1, 'Once', 'm', 1), code(2, 'Never', 'm', 0), code(3, 'Av once', 'm', 0, 1), code(4, 'Twice', 'm', 1, 1)], NONE, {
      usedOnceAfter: 0,
    });
    assert.deepEqual(
      h.problems.map((p) => [p.kind, p.code_ids]),
      [
        ['code_used_once', [1]],
        ['code_used_once', [3]],
      ],
    );
  });

  it('names codes used once only after usedOnceAfter coded passages in the project (default 50), counting text and AV segments once each', () => {
    // 1 + 0 + 1 + 2 = 4 passages in these codes
    const few = [code(1, 'Once', 'm', 1), code(2, 'Never', 'm', 0), code(3, 'Av once', 'm', 0, 1), code(4, 'Twice', 'm', 1, 1)];
    const usedOnce = (h: ReturnType<typeof codebookHealth>) => h.problems.filter((p) => p.kind === 'code_used_once').map((p) => p.code_ids[0]);
    assert.deepEqual(usedOnce(codebookHealth(few, NONE)), [], 'default: quiet below 50 passages');
    assert.equal(codebookHealth(few, NONE).counts.code_used_once, 0);
    assert.deepEqual(usedOnce(codebookHealth(few, NONE, { usedOnceAfter: 5 })), []);
    assert.deepEqual(usedOnce(codebookHealth(few, NONE, { usedOnceAfter: 4 })), [1, 3], 'exactly at the threshold');
    // 49 passages: still quiet by default; 50: named
    const at49 = [...few, code(5, 'Busy', 'm', 45)];
    assert.deepEqual(usedOnce(codebookHealth(at49, NONE)), []);
    const at50 = [...few, code(5, 'Busy', 'm', 44, 2)];
    assert.deepEqual(usedOnce(codebookHealth(at50, NONE)), [1, 3]);
    assert.match(codebookHealth(at50, NONE).problems.find((p) => p.kind === 'code_used_once')!.message, /"Once" is used only once/);
  });

  it('says the truncated overlap count with plurals', () => {
    assert.equal(overlapsTruncatedMessage(2, 1), '2 same-code overlaps in all; the first 1 is listed.');
    assert.equal(overlapsTruncatedMessage(1001, 1000), '1001 same-code overlaps in all; the first 1000 are listed.');
    assert.equal(overlapsTruncatedMessage(1, 0), '1 same-code overlap in all; the first 0 are listed.');
  });

  it('finds near-duplicate names as detect_duplicate_codes does (stemmed tokens), older code first', () => {
    const h = codebookHealth([code(7, 'Community gardens', 'm'), code(3, 'community garden', 'm'), code(9, 'Food security', 'm')], NONE);
    const dup = h.problems.filter((p) => p.kind === 'near_duplicate_names');
    assert.equal(dup.length, 1);
    assert.deepEqual(dup[0]!.code_ids, [3, 7]);
    assert.equal(dup[0]!.severity, 'warning');
    assert.match(dup[0]!.message, /"community garden" and "Community gardens"/);
    assert.equal(h.counts.near_duplicate_names, 1);
  });

  it('finds same-code overlaps of one coder, not of two coders, nor touching ranges, nor other codes', () => {
    const h = codebookHealth(
      [code(1, 'Joy', 'm'), code(2, 'Fear', 'm')],
      ranges([
        [10, 1, 0, 10, 'alice'], // earlier
        [10, 2, 2, 4, 'alice'], // another code: fine
        [10, 1, 5, 15, 'bob'], // another coder: fine (coder comparison)
        [10, 1, 8, 12, 'alice'], // overlaps [0,10) on [8,10)
        [10, 1, 12, 20, 'alice'], // touches [8,12): fine
        [10, 1, 14, 16, 'alice'], // inside [12,20): overlap [14,16)
        [11, 1, 0, 5, 'alice'], // another source: starts fresh
        [11, 1, 5, 9, 'alice'], // touching: fine
      ]),
    );
    const o = h.problems.filter((p) => p.kind === 'same_code_overlap');
    assert.deepEqual(
      o.map((p) => [p.source_id, p.start_pos, p.end_pos, p.ranges, p.coder, p.code_ids]),
      [
        [
          10,
          8,
          10,
          [
            [0, 10],
            [8, 12],
          ],
          'alice',
          [1],
        ],
        [
          10,
          14,
          16,
          [
            [12, 20],
            [14, 16],
          ],
          'alice',
          [1],
        ],
      ],
    );
    assert.match(o[0]!.message, /Two segments of "Joy" by alice overlap/);
    assert.equal(h.overlaps_truncated, false);
  });

  it('a chain of three overlapping segments gives two problems; past maxOverlaps they are only counted', () => {
    const rows: [number, number, number, number, string][] = [
      [1, 1, 0, 10, 'a'],
      [1, 1, 2, 4, 'a'], // inside [0,10)
      [1, 1, 6, 12, 'a'], // overlaps [0,10), still the furthest-reaching earlier one
    ];
    const all = codebookHealth([code(1, 'X', 'm')], ranges(rows));
    assert.deepEqual(
      all.problems.map((p) => [p.start_pos, p.end_pos]),
      [
        [2, 4],
        [6, 10],
      ],
    );
    const capped = codebookHealth([code(1, 'X', 'm')], ranges(rows), { maxOverlaps: 1 });
    assert.equal(capped.problems.length, 1);
    assert.equal(capped.counts.same_code_overlap, 2);
    assert.equal(capped.overlaps_truncated, true);
  });

  it('reads a real project (projectCodebookHealth): codes from listCodes, ranges with their coders from reportCodedRanges', async () => {
    const fx = await openFixture();
    try {
      const s = (await fx.ok('import_text', { name: 'S', content: 'The garden is where we meet.' })).source_id;
      const a = (await fx.ok('create_code', { name: 'Meeting places', color: '#E15759', memo: 'where people meet' })).code_id;
      const b = (await fx.ok('create_code', { name: 'meeting place', color: '#4E79A7' })).code_id;
      await fx.ok('apply_code', { code_id: a, source_id: s, start_pos: 0, end_pos: 10 });
      await fx.ok('apply_code', { code_id: a, source_id: s, start_pos: 4, end_pos: 16 });
      await fx.ok('apply_code', { code_id: b, source_id: s, start_pos: 0, end_pos: 3 }, { ...ALICE, user: 'bob' });
      // bob's segment of "Meeting places" overlaps alice's: two coders, not a problem
      await fx.ok('apply_code', { code_id: a, source_id: s, start_pos: 2, end_pos: 8 }, { ...ALICE, user: 'bob' });
      const repo = fx.handle.repo;
      const h = projectCodebookHealth(repo, { usedOnceAfter: 4 }); // 4 passages: at the threshold
      assert.deepEqual(
        h.problems.map((p) => [p.kind, p.code_ids]),
        [
          ['code_without_memo', [b]],
          ['code_used_once', [b]],
          ['near_duplicate_names', [a, b]],
          ['same_code_overlap', [a]],
        ],
      );
      const o = h.problems[3]!;
      assert.deepEqual([o.source_id, o.start_pos, o.end_pos, o.coder], [s, 4, 10, 'alice']);
      assert.ok(!projectCodebookHealth(repo).problems.some((p) => p.kind === 'code_used_once'), 'by default (50) 4 passages are too few');
    } finally {
      await fx.close();
    }
  });
});
