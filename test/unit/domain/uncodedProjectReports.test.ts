/**
 * Every report over a project that has codes, sources, cases and attributes but not one coding yet (issue 13,
 * item 11: codebook health failed there with `near "ELSE": syntax error`, because `reportCodedRanges` built a
 * `CASE ... END` with no WHEN for a project without coders), and over a project with nothing at all. Each
 * report is asked for on a real sql.js project through the pipeline (tools) or the repository (domain).
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { codeByAttributeMatrix, codeByCaseMatrix, codeByDocumentAttributeMatrix } from '../../../src/domain/codeMatrices';
import { projectCodebookHealth } from '../../../src/domain/codebookHealth';
import { openFixture, type Fixture } from './projectFixture';

describe('reports on a project without codings (issue 13 item 11)', () => {
  describe('codes, sources, cases and attributes, no codings', () => {
    let fx: Fixture;
    let joy: number;
    let fear: number;
    before(async () => {
      fx = await openFixture();
      const s = (await fx.ok('import_text', { name: 'S1', content: 'Nothing coded here yet.' })).source_id;
      joy = (await fx.ok('create_code', { name: 'Joy', color: '#E15759' })).code_id;
      fear = (await fx.ok('create_code', { name: 'Fear', color: '#4E79A7', memo: 'being afraid' })).code_id;
      const p = (await fx.ok('create_case', { name: 'P1' })).case_id;
      await fx.ok('add_source_to_case', { case_id: p, source_id: s });
      await fx.ok('set_case_attribute', { case_id: p, attribute_name: 'group', value: 'A' });
      await fx.ok('set_source_attribute', { source_id: s, attribute_name: 'site', value: 'north' });
    });
    after(async () => fx.close());

    it('the repository has no coders, and the coded ranges of no coders are empty (no SQL error)', () => {
      assert.deepEqual(fx.handle.repo.listCoders(), []);
      const r = fx.handle.repo.reportCodedRanges({}, []);
      assert.equal(r.source_id.length, 0);
      assert.equal(r.owner.length, 0);
      assert.deepEqual(r.owners, []);
    });

    it('codebook health lists the code without a memo and nothing else', () => {
      const h = projectCodebookHealth(fx.handle.repo);
      assert.deepEqual(
        h.problems.map((p) => [p.kind, p.code_ids]),
        [['code_without_memo', [joy]]],
      );
      assert.equal(h.counts.same_code_overlap, 0);
    });

    it('the frequency report completes: two codes, none used', async () => {
      const r = await fx.ok('generate_frequency_report');
      assert.equal(r.status, 'completed', r.error);
      assert.deepEqual(r.result.totals, { codes: 2, codes_used: 0, segments: 0, sources: 0, coders: [] });
      assert.deepEqual(
        r.result.codes.map((c: any) => [c.code_id, c.segment_count, c.source_count, c.coders]).sort((a: any, b: any) => a[0] - b[0]),
        [
          [joy, 0, 0, []],
          [fear, 0, 0, []],
        ],
      );
    });

    it('the co-occurrence report completes with an empty matrix (no code has a segment)', async () => {
      const r = await fx.ok('generate_cooccurrence_report');
      assert.equal(r.status, 'completed', r.error);
      assert.deepEqual([r.result.codes, r.result.matrix, r.result.total_overlaps, r.result.same_code_overlaps, r.result.top_pairs], [[], [], 0, 0, []]);
      const named = await fx.ok('generate_cooccurrence_report', { filters: { code_ids: [joy, fear] } });
      assert.equal(named.status, 'completed', named.error);
      assert.deepEqual(named.result.matrix, [
        [0, 0],
        [0, 0],
      ]);
    });

    it('the coder comparison says the project has no coders (INVALID_ARGUMENTS naming "none"), and writes nothing', async () => {
      const out = await fx.fails('generate_coder_comparison', { coder_ids: ['alice', 'bob'] }, 'INVALID_ARGUMENTS');
      assert.ok(!out.envelope.success && /coders are none/.test(out.envelope.error), JSON.stringify(out.envelope));
    });

    it('the code x case, code x case attribute and code x document attribute matrices are empty, with their columns', () => {
      const byCase = codeByCaseMatrix(fx.handle.repo);
      assert.deepEqual([byCase.codes, byCase.matrix, byCase.columns.map((c) => [c.label, c.segment_count])], [[], [], [['P1', 0]]]);
      const byAttr = codeByAttributeMatrix(fx.handle.repo, 'group');
      assert.deepEqual([byAttr.codes, byAttr.matrix, byAttr.columns.map((c) => [c.label, c.segment_count])], [[], [], [['A', 0]]]);
      const byDoc = codeByDocumentAttributeMatrix(fx.handle.repo, 'site');
      assert.deepEqual([byDoc.codes, byDoc.matrix], [[], []]);
    });

    it('the empty frequency and co-occurrence reports export to CSV: a header and one row per code', async () => {
      const f = await fx.ok('generate_frequency_report');
      const out = await fx.ok('export_report', { report_id: f.report_id, format: 'csv' });
      const lines = fs.readFileSync(out.file_path, 'utf8').trim().split(/\r?\n/);
      assert.equal(lines.length, 3, lines.join('\n'));
      assert.ok(lines.slice(1).some((l) => l.includes('Joy')) && lines.slice(1).some((l) => l.includes('Fear')), lines.join('\n'));
      const c = await fx.ok('generate_cooccurrence_report');
      const cooc = await fx.ok('export_report', { report_id: c.report_id, format: 'html' });
      assert.ok(fs.statSync(cooc.file_path).size > 0);
    });
  });

  describe('a project with nothing in it', () => {
    let fx: Fixture;
    before(async () => {
      fx = await openFixture();
    });
    after(async () => fx.close());

    it('codebook health has no problems; frequency and co-occurrence complete empty', async () => {
      assert.deepEqual(projectCodebookHealth(fx.handle.repo).problems, []);
      const f = await fx.ok('generate_frequency_report');
      assert.equal(f.status, 'completed', f.error);
      assert.deepEqual(f.result.totals, { codes: 0, codes_used: 0, segments: 0, sources: 0, coders: [] });
      const c = await fx.ok('generate_cooccurrence_report');
      assert.equal(c.status, 'completed', c.error);
      assert.deepEqual(c.result.matrix, []);
      assert.deepEqual(codeByCaseMatrix(fx.handle.repo).columns, []);
    });
  });
});
