/**
 * Reports by document attribute on a real sql.js project built through the pipeline: the code-by-document-
 * attribute matrix (src/domain/codeMatrices.ts, the shape of the code-by-case-attribute one), the segments
 * behind one of its cells, and the report tools' `filters.source_attributes`. Expected counts are worked out
 * in the comments.
 */
import assert from 'node:assert/strict';
import { codeByDocumentAttributeMatrix, documentAttributeNames, sourceCellSegments, UNSET_LABEL } from '../../../src/domain/codeMatrices';
import { openFixture, type Fixture } from './projectFixture';

describe('reports by document attribute', () => {
  let fx: Fixture;
  // A = "0123456789" {Site: "Lagos", Wave: 2}, B = "abcdefghij" {Site: "Nairobi", Wave: "2" (text)}, C = "klmnopqrst" {}
  let a: number, b: number, c: number;
  let x: number, y: number;
  before(async () => {
    fx = await openFixture();
    a = (await fx.ok('import_text', { name: 'A', content: '0123456789' })).source_id;
    b = (await fx.ok('import_text', { name: 'B', content: 'abcdefghij' })).source_id;
    c = (await fx.ok('import_text', { name: 'C', content: 'klmnopqrst' })).source_id;
    x = (await fx.ok('create_code', { name: 'x-code', color: '#E15759' })).code_id;
    y = (await fx.ok('create_code', { name: 'Y-code', color: '#4E79A7' })).code_id;
    await fx.ok('create_code', { name: 'unused', color: '#000000' });
    await fx.ok('set_source_attribute', { source_id: a, attribute_name: 'Site', value: 'Lagos' });
    await fx.ok('set_source_attribute', { source_id: a, attribute_name: 'Wave', value: 2 });
    await fx.ok('set_source_attribute', { source_id: b, attribute_name: 'Site', value: 'Nairobi' });
    await fx.ok('set_source_attribute', { source_id: b, attribute_name: 'Wave', value: '2' });
    // x: A [0,2) [4,6), B [0,3); y: A [1,3), C [0,1)
    for (const [code, source, start, end] of [
      [x, a, 0, 2],
      [x, a, 4, 6],
      [x, b, 0, 3],
      [y, a, 1, 3],
      [y, c, 0, 1],
    ] as const) {
      await fx.ok('apply_code', { code_id: code, source_id: source, start_pos: start, end_pos: end });
    }
  });
  after(async () => {
    await fx.close();
  });

  it("code x document attribute: a column per typed value, then (not set); each cell counts the code's segments on the column's sources", () => {
    assert.deepEqual(documentAttributeNames(fx.handle.repo), ['Site', 'Wave']);
    const m = codeByDocumentAttributeMatrix(fx.handle.repo, 'Site');
    assert.equal(m.kind, 'code_by_document_attribute');
    assert.equal(m.attribute_name, 'Site');
    // rows by name, case-insensitive: "x-code" before "Y-code"; the unused code is left out
    assert.deepEqual(
      m.codes.map((k) => k.name),
      ['x-code', 'Y-code'],
    );
    assert.deepEqual(
      m.columns.map((col) => [col.key, col.label, col.source_ids, col.segment_count]),
      [
        ['value:text:"Lagos"', 'Lagos', [a], 3],
        ['value:text:"Nairobi"', 'Nairobi', [b], 1],
        ['unset', UNSET_LABEL, [c], 1],
      ],
    );
    assert.deepEqual(m.matrix, [
      [2, 1, 0],
      [1, 0, 1],
    ]);
  });

  it('keeps the number 2 and the text "2" apart (number before text), and an attribute no source has gives one (not set) column', () => {
    const wave = codeByDocumentAttributeMatrix(fx.handle.repo, 'Wave');
    assert.deepEqual(
      wave.columns.map((col) => [col.key, col.label, col.source_ids]),
      [
        ['value:number:2', '2', [a]],
        ['value:text:"2"', '2', [b]],
        ['unset', UNSET_LABEL, [c]],
      ],
    );
    assert.deepEqual(wave.matrix, [
      [2, 1, 0],
      [1, 0, 1],
    ]);
    const none = codeByDocumentAttributeMatrix(fx.handle.repo, 'site');
    assert.deepEqual(
      none.columns.map((col) => [col.key, col.source_ids, col.segment_count]),
      [['unset', [a, b, c], 5]],
    );
    assert.deepEqual(none.matrix, [[3], [2]]);
  });

  it('lists the segments behind a cell, by source and position', () => {
    assert.deepEqual(
      sourceCellSegments(fx.handle.repo, x, [a]).map((s) => [s.source_id, s.start_pos, s.end_pos, s.text]),
      [
        [a, 0, 2, '01'],
        [a, 4, 6, '45'],
      ],
    );
    assert.deepEqual(sourceCellSegments(fx.handle.repo, y, [b]), []);
  });

  it('filters.source_attributes narrows the report tools by typed values and records the sources it matched', async () => {
    const freq = async (filters: unknown) => {
      const job = await fx.ok('generate_frequency_report', { filters });
      return {
        counts: (job.result.codes as { name: string; segment_count: number }[]).filter((k) => k.name !== 'unused').map((k) => `${k.name}:${k.segment_count}`),
        filters: job.result.filters,
      };
    };
    assert.deepEqual(await freq({ source_attributes: { Site: 'Lagos' } }), {
      counts: ['x-code:2', 'Y-code:1'],
      filters: { source_attributes: { Site: 'Lagos' }, source_ids: [a] },
    });
    assert.deepEqual((await freq({ source_attributes: { Wave: 2 } })).counts, ['x-code:2', 'Y-code:1'], 'the number 2: source A only');
    assert.deepEqual((await freq({ source_attributes: { Wave: '2' } })).counts, ['x-code:1', 'Y-code:0'], 'the text "2": source B only');
    assert.deepEqual(await freq({ source_attributes: { Site: 'Lagos', Wave: '2' } }), {
      counts: ['x-code:0', 'Y-code:0'],
      filters: { source_attributes: { Site: 'Lagos', Wave: '2' }, source_ids: [] },
    });
    assert.deepEqual((await freq({ source_ids: [b, c], source_attributes: { Site: 'Nairobi' } })).filters, {
      source_ids: [b],
      source_attributes: { Site: 'Nairobi' },
    });
    const co = await fx.ok('generate_cooccurrence_report', { filters: { source_attributes: { Site: 'Lagos' } } });
    // on A: x [0,2) overlaps y [1,3)
    assert.equal(co.result.total_overlaps, 1);
    await fx.fails('generate_frequency_report', { filters: { source_attributes: { Site: { nested: 1 } } } }, 'INVALID_ARGUMENTS');
    await fx.fails('generate_frequency_report', { filters: { source_attributes: { '': 'x' } } }, 'INVALID_ARGUMENTS');
  });
});
