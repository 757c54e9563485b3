/**
 * src/domain/codeMatrices.ts on a real sql.js project built through the pipeline: the code-by-case and
 * code-by-attribute matrices (expected counts worked out in the comments) and the segments behind a cell of
 * each report (what the Reports view lists on a click).
 */
import assert from 'node:assert/strict';
import {
  attributeNames,
  caseCellSegments,
  codeByAttributeMatrix,
  codeByCaseMatrix,
  codedBySegments,
  cooccurringSegments,
  UNSET_LABEL,
} from '../../../src/domain/codeMatrices';
import { cooccurrenceReport } from '../../../src/domain/reports';
import { ALICE, openFixture, type Fixture } from './projectFixture';

const BOB = { ...ALICE, session_id: 'sess-bob', user: 'bob' };

describe('code matrices and report cells (src/domain/codeMatrices.ts)', () => {
  let fx: Fixture;
  // S1 = "0123456789" (10), S2 = "abcdefghij" (10), S3 = "klmnopqrst" (10)
  let s1: number, s2: number, s3: number;
  let joy: number, fear: number, hope: number, unused: number;
  let p1: number, p2: number, p3: number;
  const seg: Record<string, number> = {};

  const apply = async (name: string, code: number, source: number, start: number, end: number, caller = ALICE) => {
    const r = await fx.ok<{ segment_id: number }>('apply_code', { code_id: code, source_id: source, start_pos: start, end_pos: end }, caller);
    seg[name] = r.segment_id;
  };

  before(async () => {
    fx = await openFixture();
    s1 = (await fx.ok('import_text', { name: 'S1', content: '0123456789' })).source_id;
    s2 = (await fx.ok('import_text', { name: 'S2', content: 'abcdefghij' })).source_id;
    s3 = (await fx.ok('import_text', { name: 'S3', content: 'klmnopqrst' })).source_id;
    joy = (await fx.ok('create_code', { name: 'Joy', color: '#E15759' })).code_id;
    fear = (await fx.ok('create_code', { name: 'fear <b>', color: '#4E79A7' })).code_id;
    hope = (await fx.ok('create_code', { name: 'Hope', color: '#59A14F' })).code_id;
    unused = (await fx.ok('create_code', { name: 'Unused', color: '#59A14F' })).code_id;
    // S1: joy [0,4) alice, fear [2,6) alice, joy [3,5) bob, hope [8,10) alice
    await apply('j1', joy, s1, 0, 4);
    await apply('f1', fear, s1, 2, 6);
    await apply('j1b', joy, s1, 3, 5, BOB);
    await apply('h1', hope, s1, 8, 10);
    // S2: joy [0,2), fear [5,7)   (no overlap)
    await apply('j2', joy, s2, 0, 2);
    await apply('f2', fear, s2, 5, 7);
    // S3: hope [1,3)
    await apply('h3', hope, s3, 1, 3);
    // cases: P1 holds S1 whole; P2 holds S2 whole and the range [0,5) of S1 (overlapping j1, f1, j1b);
    // P3 holds S3 whole. Attributes: P1 group=A, age=30; P2 group=A; P3 group=B, age "30" (text)
    p1 = (await fx.ok('create_case', { name: 'P1' })).case_id;
    p2 = (await fx.ok('create_case', { name: 'P2' })).case_id;
    p3 = (await fx.ok('create_case', { name: 'P3' })).case_id;
    await fx.ok('add_source_to_case', { case_id: p1, source_id: s1 });
    await fx.ok('add_source_to_case', { case_id: p2, source_id: s2 });
    await fx.ok('add_segment_to_case', { case_id: p2, source_id: s1, start_pos: 0, end_pos: 5 });
    await fx.ok('add_source_to_case', { case_id: p3, source_id: s3 });
    await fx.ok('set_case_attribute', { case_id: p1, attribute_name: 'group', value: 'A' });
    await fx.ok('set_case_attribute', { case_id: p2, attribute_name: 'group', value: 'A' });
    await fx.ok('set_case_attribute', { case_id: p3, attribute_name: 'group', value: 'B' });
    await fx.ok('set_case_attribute', { case_id: p1, attribute_name: 'age', value: 30 });
    await fx.ok('set_case_attribute', { case_id: p3, attribute_name: 'age', value: '30' });
  });
  after(async () => {
    await fx.close();
  });

  const repo = () => fx.handle.repo;

  it('lists the attribute names', () => {
    assert.deepEqual(attributeNames(repo()), ['age', 'group']);
  });

  it('code by case: a column per case, a row per code used in a case, by name', () => {
    const m = codeByCaseMatrix(repo());
    assert.equal(m.kind, 'code_by_case');
    assert.deepEqual(
      m.columns.map((c) => [c.label, c.case_ids, c.segment_count]),
      [
        ['P1', [p1], 4], // S1 whole: j1, f1, j1b, h1
        ['P2', [p2], 5], // S2 whole: j2, f2; S1 [0,5): j1, f1, j1b (h1 at [8,10) is outside)
        ['P3', [p3], 1], // S3 whole: h3
      ],
    );
    // rows by name, case-insensitive: "fear <b>", Hope, Joy; Unused is in no case
    assert.deepEqual(
      m.codes.map((c) => c.name),
      ['fear <b>', 'Hope', 'Joy'],
    );
    assert.deepEqual(m.matrix, [
      [1, 2, 0], // fear: f1 | f1, f2 | -
      [1, 0, 1], // hope: h1 | - | h3
      [2, 3, 0], // joy: j1, j1b | j1, j1b, j2 | -
    ]);
    assert.ok(!m.codes.some((c) => c.code_id === unused));
  });

  it('code by attribute: a column per typed value, "(not set)" last, each segment once per cell', () => {
    const g = codeByAttributeMatrix(repo(), 'group');
    assert.equal(g.attribute_name, 'group');
    assert.deepEqual(
      g.columns.map((c) => [c.label, c.case_ids]),
      [
        ['A', [p1, p2]],
        ['B', [p3]],
      ],
    );
    // group A = P1 + P2: S1's j1, f1, j1b, h1 (P2's range repeats j1, f1, j1b: counted once) + S2's j2, f2
    assert.deepEqual(
      g.columns.map((c) => c.segment_count),
      [6, 1],
    );
    assert.deepEqual(
      g.codes.map((c) => c.name),
      ['fear <b>', 'Hope', 'Joy'],
    );
    assert.deepEqual(g.matrix, [
      [2, 0], // fear: f1, f2
      [1, 1], // hope: h1 | h3
      [3, 0], // joy: j1, j1b, j2
    ]);
    // age: the number 30 (P1) and the text "30" (P3) are different values (types ordered by name: number < text); P2 has no age
    const a = codeByAttributeMatrix(repo(), 'age');
    assert.deepEqual(
      a.columns.map((c) => [c.key, c.label, c.case_ids]),
      [
        ['value:number:30', '30', [p1]],
        ['value:text:"30"', '30', [p3]],
        ['unset', UNSET_LABEL, [p2]],
      ],
    );
    assert.deepEqual(a.matrix, [
      [1, 0, 2],
      [1, 1, 0],
      [2, 0, 3],
    ]);
  });

  it('an attribute no case has gives one "(not set)" column of every case', () => {
    const m = codeByAttributeMatrix(repo(), 'nope');
    assert.deepEqual(
      m.columns.map((c) => [c.label, c.case_ids]),
      [[UNSET_LABEL, [p1, p2, p3]]],
    );
  });

  it('the segments behind a case cell, each once, by source and position', () => {
    assert.deepEqual(
      caseCellSegments(repo(), joy, [p1, p2]).map((s) => s.segment_id),
      [seg.j1, seg.j1b, seg.j2],
    );
    assert.deepEqual(caseCellSegments(repo(), hope, [p2]), []);
  });

  it('the segments behind an agreement row: the code, by the given coders', () => {
    assert.deepEqual(
      codedBySegments(repo(), joy, ['bob']).map((s) => s.segment_id),
      [seg.j1b],
    );
    assert.deepEqual(
      codedBySegments(repo(), joy, ['alice', 'bob']).map((s) => s.segment_id),
      [seg.j1, seg.j1b, seg.j2],
    );
  });

  it('the overlapping pairs behind a co-occurrence cell match the report count', () => {
    const report = cooccurrenceReport(repo(), {});
    const at = (code: number) => report.codes.findIndex((c) => c.code_id === code);
    // joy x fear on S1: j1 [0,4) & f1 [2,6) overlap [2,4); j1b [3,5) & f1 overlap [3,5)
    const pairs = cooccurringSegments(repo(), joy, fear);
    assert.deepEqual(
      pairs.map((p) => [p.a.segment_id, p.b.segment_id, p.source_id, p.start_pos, p.end_pos]),
      [
        [seg.j1, seg.f1, s1, 2, 4],
        [seg.j1b, seg.f1, s1, 3, 5],
      ],
    );
    assert.equal(pairs.length, report.matrix[at(joy)]?.[at(fear)]);
    // the diagonal: j1 [0,4) and j1b [3,5) overlap on [3,4), once
    const diag = cooccurringSegments(repo(), joy, joy);
    assert.deepEqual(
      diag.map((p) => [p.a.segment_id, p.b.segment_id, p.start_pos, p.end_pos]),
      [[seg.j1, seg.j1b, 3, 4]],
    );
    assert.equal(diag.length, report.matrix[at(joy)]?.[at(joy)]);
    // every cell agrees with the report
    for (const a of report.codes)
      for (const b of report.codes)
        assert.equal(cooccurringSegments(repo(), a.code_id, b.code_id).length, report.matrix[at(a.code_id)]?.[at(b.code_id)], `${a.name} x ${b.name}`);
    assert.deepEqual(cooccurringSegments(repo(), hope, joy), []);
  });
});
