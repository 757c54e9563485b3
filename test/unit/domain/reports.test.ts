/**
 * src/domain/reports.ts and the design's remaining capabilities (src/tools/capabilityTools.ts, src/tools/reportTools.ts)
 * through the pipeline, on real sql.js project files: every design tool with its errors, the three reports on a
 * small project whose expected values are worked out by hand in the comments, Cohen's kappa against hand-computed
 * examples, the jobs' events, a failed job, and export_report in its three formats.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { defaultConfig } from '../../../src/agent/config';
import { TrustPolicy } from '../../../src/agent/trust';
import type { ProjectRepository } from '../../../src/domain/ports';
import { cooccurrenceReport, sweepOverlaps } from '../../../src/domain/reports';
import { TOOLS, TOOLS_BY_NAME } from '../../../src/tools/registry';
import { ALICE, FIXED_ISO, openFixture, snapshot, storedEvents, type Fixture } from './projectFixture';
import { mulberry32 as rng } from '../../../src/core/random';

const RED = '#E15759';
const BOB = { ...ALICE, session_id: 'sess-bob', user: 'bob' };
const EMOJI = '\u{1F600}';

/** Asserts |actual - expected| < 1e-9 (the statistics are floating point). */
function near(actual: unknown, expected: number, what: string): void {
  assert.equal(typeof actual, 'number', `${what} should be a number, got ${JSON.stringify(actual)}`);
  assert.ok(Math.abs((actual as number) - expected) < 1e-9, `${what}: ${actual as number} is not ${expected}`);
}

describe('the design capabilities and reports through the pipeline', () => {
  let fx: Fixture;
  beforeEach(async () => {
    fx = await openFixture();
  });
  afterEach(async () => {
    await fx.close();
  });

  const text = (name: string, content: string) => fx.ok<{ source_id: number }>('import_text', { name, content }).then((s) => s.source_id);
  const code = (name: string) => fx.ok<{ code_id: number }>('create_code', { name, color: RED }).then((c) => c.code_id);

  describe('apply_code', () => {
    it('codes [start_position, end_position) in code points, with memo and importance, and emits coding.segment_coded', async () => {
      const s = await text('S', `ab${EMOJI}cdef`); // 7 code points: a b 😀 c d e f
      const c = await code('Joy');
      const out = await fx.call('apply_code', { code_id: c, source_id: s, start_position: 1, end_position: 4, memo: 'smile', importance: 2 });
      assert.ok(out.envelope.success);
      const d = out.envelope.data as Record<string, unknown>;
      assert.deepEqual(d, {
        segment_id: d.segment_id,
        created: true,
        code_id: c,
        source_id: s,
        start_pos: 1,
        end_pos: 4,
        text: `b${EMOJI}c`,
        memo: 'smile',
        importance: 2,
      });
      assert.deepEqual(
        out.events.map((e) => [e.event_type, e.payload]),
        [['coding.segment_coded', { segment_id: d.segment_id, code_id: c, source_id: s, start: 1, end: 4, text: `b${EMOJI}c` }]],
      );
      const listed = await fx.ok('list_segments_for_source', { source_id: s });
      assert.equal(listed.count, 1);
      assert.equal(listed.segments[0].importance, 2);
      assert.equal(listed.segments[0].owner, 'alice');
    });

    it('accepts start_pos/end_pos as aliases, and applying the same range again returns the existing segment', async () => {
      const s = await text('S', 'hello world');
      const c = await code('Greeting');
      const first = await fx.ok('apply_code', { code_id: c, source_id: s, start_pos: 0, end_pos: 5 });
      const again = await fx.call('apply_code', { code_id: String(c), source_id: s, start_position: 0, end_pos: 5 });
      assert.ok(again.envelope.success);
      assert.deepEqual(again.envelope.data, { ...first, created: false });
      assert.deepEqual(again.events, [], 'nothing new, no event');
    });

    it('fails with CODE_NOT_FOUND, SOURCE_NOT_FOUND, INVALID_POSITION and INVALID_ARGUMENTS, changing nothing', async () => {
      const s = await text('S', 'hello');
      const c = await code('C');
      const before = await snapshot(fx);
      await fx.fails('apply_code', { code_id: 99, source_id: s, start_position: 0, end_position: 1 }, 'CODE_NOT_FOUND');
      await fx.fails('apply_code', { code_id: c, source_id: 99, start_position: 0, end_position: 1 }, 'SOURCE_NOT_FOUND');
      await fx.fails('apply_code', { code_id: c, source_id: s, start_position: 2, end_position: 6 }, 'INVALID_POSITION'); // past the end (5)
      await fx.fails('apply_code', { code_id: c, source_id: s, start_position: 3, end_position: 3 }, 'INVALID_POSITION'); // empty
      await fx.fails('apply_code', { code_id: c, source_id: s, start_position: 0 }, 'INVALID_ARGUMENTS'); // no end
      await fx.fails('apply_code', { code_id: c, source_id: s, start_position: 0, end_position: 1, importance: 3 }, 'INVALID_ARGUMENTS');
      await fx.fails('apply_code', { code_id: c, source_id: s, start_position: 0, start_pos: 1, end_position: 2 }, 'INVALID_ARGUMENTS'); // alias disagrees
      assert.deepEqual(await snapshot(fx), before);
    });
  });

  describe('remove_code and move_code', () => {
    it('remove_code removes one coding (coding.segment_uncoded); an unknown segment is SEGMENT_NOT_FOUND', async () => {
      const s = await text('S', 'hello world');
      const c = await code('C');
      const seg = await fx.ok('apply_code', { code_id: c, source_id: s, start_position: 6, end_position: 11 });
      const out = await fx.call('remove_code', { segment_id: seg.segment_id });
      assert.deepEqual(out.envelope, {
        success: true,
        data: { removed: true, segment_id: seg.segment_id, code_id: c, source_id: s, start_pos: 6, end_pos: 11 },
      });
      assert.deepEqual(
        out.events.map((e) => [e.event_type, e.payload]),
        [
          // everything needed to put the coding back (undo)
          [
            'coding.segment_uncoded',
            {
              segment_id: seg.segment_id,
              code_id: c,
              source_id: s,
              start: 6,
              end: 11,
              text: 'world',
              memo: null,
              importance: 0,
              owner: 'alice',
              session_id: 'sess-alice',
            },
          ],
        ],
      );
      assert.equal((await fx.ok('list_segments_for_source', { source_id: s })).count, 0);
      await fx.fails('remove_code', { segment_id: seg.segment_id }, 'SEGMENT_NOT_FOUND');
    });

    it('move_code puts a code into a category and with null takes it out (coding.code_moved); CODE_NOT_FOUND, CATEGORY_NOT_FOUND', async () => {
      const c = await code('C');
      const k = (await fx.ok('create_category', { name: 'K' })).category_id as number;
      const out = await fx.call('move_code', { code_id: c, category_id: k });
      assert.deepEqual(out.envelope, { success: true, data: { code_id: c, old_category_id: null, new_category_id: k } });
      assert.deepEqual(
        out.events.map((e) => [e.event_type, e.payload]),
        [['coding.code_moved', { code_id: c, old_category_id: null, new_category_id: k }]],
      );
      assert.equal((await fx.ok('get_code', { code_id: c })).category_id, k);
      assert.deepEqual(await fx.ok('move_code', { code_id: c, category_id: null }), { code_id: c, old_category_id: k, new_category_id: null });
      await fx.fails('move_code', { code_id: 99, category_id: k }, 'CODE_NOT_FOUND');
      await fx.fails('move_code', { code_id: c, category_id: 99 }, 'CATEGORY_NOT_FOUND');
      await fx.fails('move_code', { code_id: c }, 'INVALID_ARGUMENTS'); // category_id is required (null to uncategorise)
    });
  });

  describe('import_source and import_text', () => {
    it('import_source reads a file (name defaults to the file name); SOURCE_IMPORT_FAILED and SOURCE_DUPLICATE_NAME', async () => {
      const file = path.join(fx.dir, 'interview one.txt');
      fs.writeFileSync(file, 'first line\r\nsecond line\n');
      const out = await fx.call('import_source', { file_path: file });
      assert.ok(out.envelope.success, JSON.stringify(out.envelope));
      const s = out.envelope.data as Record<string, unknown>;
      assert.equal(s.name, 'interview one.txt');
      assert.equal(s.type, 'text');
      assert.equal(s.length, 24);
      assert.equal(s.file_path, file);
      assert.equal('dry_run' in s, false);
      assert.deepEqual(
        out.events.map((e) => e.event_type),
        ['source.imported'],
      );
      assert.equal((await fx.ok('read_source_content', { source_id: s.source_id })).content, 'first line\r\nsecond line\n');
      const named = await fx.ok('import_source', { file_path: file, name: 'Second copy' });
      assert.equal(named.name, 'Second copy');
      await fx.fails('import_source', { file_path: file }, 'SOURCE_DUPLICATE_NAME');
      await fx.fails('import_source', { file_path: 'relative.txt' }, 'SOURCE_IMPORT_FAILED');
      await fx.fails('import_source', { file_path: path.join(fx.dir, 'missing.txt') }, 'SOURCE_IMPORT_FAILED');
      await fx.fails('import_source', { file_path: file, memo: 'not a parameter of the design' }, 'INVALID_ARGUMENTS');
    });

    it('import_text stores the text exactly (source.imported); a taken name is SOURCE_DUPLICATE_NAME', async () => {
      const out = await fx.call('import_text', { content: `tr\u00E8s ${EMOJI}\n`, name: 'Notes' });
      assert.ok(out.envelope.success);
      const s = out.envelope.data as Record<string, unknown>;
      assert.equal(s.length, 7);
      assert.deepEqual(
        out.events.map((e) => [e.event_type, e.payload]),
        [['source.imported', { source_id: s.source_id, name: 'Notes', type: 'text', size: 7 }]],
      );
      assert.equal((await fx.ok('read_source_content', { source_id: s.source_id })).content, `tr\u00E8s ${EMOJI}\n`);
      await fx.fails('import_text', { content: 'x', name: 'Notes' }, 'SOURCE_DUPLICATE_NAME');
      await fx.fails('import_text', { content: 'x', name: '   ' }, 'INVALID_ARGUMENTS');
      await fx.fails('import_text', { content: 'x' }, 'INVALID_ARGUMENTS');
    });
  });

  describe('rename_source, delete_source, update_memo', () => {
    it('rename_source renames (source.renamed with both names); its own name is no clash; SOURCE_DUPLICATE_NAME, SOURCE_NOT_FOUND', async () => {
      const a = await text('Alpha', 'aaa');
      await text('Beta', 'bbb');
      const c = await code('C');
      await fx.ok('apply_code', { code_id: c, source_id: a, start_position: 0, end_position: 2 });
      const out = await fx.call('rename_source', { source_id: a, new_name: '  Gamma ' });
      assert.deepEqual(out.envelope, { success: true, data: { source_id: a, old_name: 'Alpha', new_name: 'Gamma' } });
      assert.deepEqual(
        out.events.map((e) => [e.event_type, e.aggregate_id, e.payload]),
        [['source.renamed', String(a), { source_id: a, old_name: 'Alpha', new_name: 'Gamma' }]],
      );
      const listed = (await fx.ok('list_sources')).sources.find((s: { source_id: number }) => s.source_id === a);
      assert.equal(listed.name, 'Gamma');
      assert.equal(listed.segment_count, 1, 'codings stay');
      assert.equal((await fx.ok('rename_source', { source_id: a, new_name: 'Gamma' })).new_name, 'Gamma');
      await fx.fails('rename_source', { source_id: a, new_name: 'Beta' }, 'SOURCE_DUPLICATE_NAME');
      await fx.fails('rename_source', { source_id: 99, new_name: 'Delta' }, 'SOURCE_NOT_FOUND');
      await fx.fails('rename_source', { source_id: a, new_name: ' ' }, 'INVALID_ARGUMENTS');
    });

    it('delete_source deletes a source with its segments at once (source.deleted); SOURCE_NOT_FOUND', async () => {
      const s = await text('Doomed', 'hello world');
      const keep = await text('Kept', 'hello');
      const c = await code('C');
      await fx.ok('apply_code', { code_id: c, source_id: s, start_position: 0, end_position: 5 });
      await fx.ok('apply_code', { code_id: c, source_id: s, start_position: 6, end_position: 11 });
      await fx.ok('apply_code', { code_id: c, source_id: keep, start_position: 0, end_position: 5 });
      const out = await fx.call('delete_source', { source_id: s });
      assert.deepEqual(out.envelope, { success: true, data: { deleted: true, source_id: s, name: 'Doomed', type: 'text', segments_removed: 2 } });
      assert.deepEqual(
        out.events.map((e) => [e.event_type, e.payload]),
        [['source.deleted', { source_id: s, name: 'Doomed' }]],
      );
      assert.deepEqual(
        (await fx.ok('list_sources')).sources.map((x: { name: string }) => x.name),
        ['Kept'],
      );
      assert.equal((await fx.ok('get_code', { code_id: c })).segment_count, 1);
      await fx.fails('delete_source', { source_id: s }, 'SOURCE_NOT_FOUND');
    });

    it("update_memo sets and clears a source's memo (source.updated with old and new value); SOURCE_NOT_FOUND", async () => {
      const s = await text('S', 'x');
      const out = await fx.call('update_memo', { source_id: s, memo: 'first interview' });
      assert.deepEqual(out.envelope, { success: true, data: { source_id: s, old_memo: null, new_memo: 'first interview' } });
      assert.deepEqual(
        out.events.map((e) => [e.event_type, e.aggregate_type, e.payload]),
        [['source.updated', 'source', { source_id: s, field: 'memo', old_value: null, new_value: 'first interview' }]],
      );
      assert.equal((await fx.ok('list_sources')).sources[0].memo, 'first interview');
      assert.deepEqual(await fx.ok('update_memo', { source_id: s, memo: '' }), { source_id: s, old_memo: 'first interview', new_memo: null });
      assert.deepEqual(await fx.ok('update_memo', { source_id: s, memo: null }), { source_id: s, old_memo: null, new_memo: null });
      await fx.fails('update_memo', { source_id: 99, memo: 'x' }, 'SOURCE_NOT_FOUND');
      await fx.fails('update_memo', { source_id: s }, 'INVALID_ARGUMENTS');
    });
  });

  describe('trust levels of the capability table', () => {
    const policy = new TrustPolicy(defaultConfig, TOOLS);
    const level = (name: string) => policy.decide(TOOLS_BY_NAME.get(name)!).level;

    it('apply_code, remove_code, move_code, rename_source notify; import_* suggest; delete_source require; update_memo and the reports auto', () => {
      const want: Record<string, string> = {
        apply_code: 'notify',
        remove_code: 'notify',
        move_code: 'notify',
        rename_source: 'notify',
        import_source: 'suggest',
        import_text: 'suggest',
        delete_source: 'require',
        update_memo: 'auto',
        generate_frequency_report: 'auto',
        generate_cooccurrence_report: 'auto',
        generate_coder_comparison: 'auto',
        export_report: 'auto',
        get_report: 'auto',
        list_reports: 'auto',
      };
      assert.deepEqual(Object.fromEntries(Object.keys(want).map((n) => [n, level(n)])), want);
    });

    it('update_memo (category memo) may be set to notify or suggest, never require', () => {
      assert.equal(TrustPolicy.checkOverride(TOOLS, 'update_memo', 'notify'), undefined);
      assert.equal(TrustPolicy.checkOverride(TOOLS, 'update_memo', 'suggest'), undefined);
      assert.match(String(TrustPolicy.checkOverride(TOOLS, 'update_memo', 'require')), /update_memo \(memo\) may be auto, notify, suggest/);
      assert.match(String(TrustPolicy.checkOverride(TOOLS, 'generate_frequency_report', 'suggest')), /may be auto, notify/);
    });
  });

  /**
   * The small project of the report tests (positions in code points, half-open):
   *
   *   S1 "abcdefghijklmnopqrst" (20)   S2 "0123456789" (10)   S3 "not coded at all" (16, no segments)
   *   codes A, B, C, D (D unused)
   *
   *   alice: a1 A S1 [0,10)   a2 B S1 [8,12)   a3 C S1 [12,15)   a4 A S2 [0,5)   a5 B S2 [5,10)
   *   bob:   b1 A S1 [5,15)   b2 B S2 [3,7)
   */
  async function buildProject() {
    const s1 = await text('S1', 'abcdefghijklmnopqrst');
    const s2 = await text('S2', '0123456789');
    const s3 = await text('S3', 'not coded at all');
    const A = await code('A');
    const B = await code('B');
    const C = await code('C');
    const D = await code('D');
    const apply = (c: number, s: number, start: number, end: number, who = ALICE) =>
      fx.ok('apply_code', { code_id: c, source_id: s, start_position: start, end_position: end }, who);
    await apply(A, s1, 0, 10);
    await apply(B, s1, 8, 12);
    await apply(C, s1, 12, 15);
    await apply(A, s2, 0, 5);
    await apply(B, s2, 5, 10);
    await apply(A, s1, 5, 15, BOB);
    await apply(B, s2, 3, 7, BOB);
    return { s1, s2, s3, A, B, C, D };
  }

  /**
   * A random project: 4 sources of 60 characters, codes "code a" to "code g" created in another order than
   * their names sort ("code g" never used), and 90 codings by each of alice and bob, short ranges at random
   * starts (ties, nested, identical and touching ranges all occur). Returns the stored segments.
   */
  async function randomProject() {
    const rand = rng(20261122);
    const between = (lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo + 1));
    const sources: number[] = [];
    for (let s = 0; s < 4; s++) sources.push(await text(`R${s}`, 'x'.repeat(60)));
    const codes: number[] = [];
    for (const n of ['code f', 'code c', 'code e', 'code a', 'code d', 'code b', 'code g']) codes.push(await code(n));
    for (const who of [ALICE, BOB]) {
      const operations = Array.from({ length: 90 }, () => {
        const start = between(0, 57);
        return { code_id: codes[between(0, 5)], source_id: sources[between(0, 3)], start_position: start, end_position: Math.min(60, start + between(1, 12)) };
      });
      await fx.ok('batch_apply_codes', { operations }, who);
    }
    const segments = fx.handle.store.all<{ code_id: number; source_id: number; start_pos: number; end_pos: number; owner: string }>(
      'SELECT code_id, source_id, start_pos, end_pos, owner FROM segments ORDER BY id',
    );
    const names = new Map(fx.handle.store.all<{ id: number; name: string }>('SELECT id, name FROM codes').map((c) => [c.id, c.name]));
    return { sources, codes, segments, names };
  }

  describe('generate_frequency_report', () => {
    it('counts segments, distinct sources and coders per code (hand-counted)', async () => {
      const p = await buildProject();
      const job = await fx.ok('generate_frequency_report', {});
      assert.equal(job.status, 'completed');
      // A: a1, a4, b1 = 3 segments in S1, S2; alice 2 (S1, S2), bob 1 (S1). B: a2, a5, b2 = 3 in S1, S2; alice 2, bob 1 (S2).
      // C: a3 = 1 in S1 (alice). D: none. Ties (A, B: 3) by name. Coded sources: S1, S2 (S3 has none).
      assert.deepEqual(job.result, {
        report_type: 'frequency',
        filters: {},
        totals: { codes: 4, codes_used: 3, segments: 7, sources: 2, coders: ['alice', 'bob'] },
        codes: [
          {
            code_id: p.A,
            name: 'A',
            color: RED,
            category_id: null,
            segment_count: 3,
            source_count: 2,
            coders: [
              { coder: 'alice', segment_count: 2, source_count: 2 },
              { coder: 'bob', segment_count: 1, source_count: 1 },
            ],
          },
          {
            code_id: p.B,
            name: 'B',
            color: RED,
            category_id: null,
            segment_count: 3,
            source_count: 2,
            coders: [
              { coder: 'alice', segment_count: 2, source_count: 2 },
              { coder: 'bob', segment_count: 1, source_count: 1 },
            ],
          },
          {
            code_id: p.C,
            name: 'C',
            color: RED,
            category_id: null,
            segment_count: 1,
            source_count: 1,
            coders: [{ coder: 'alice', segment_count: 1, source_count: 1 }],
          },
          { code_id: p.D, name: 'D', color: RED, category_id: null, segment_count: 0, source_count: 0, coders: [] },
        ],
      });
    });

    it('narrows by source_ids, code_ids, coder and case_ids', async () => {
      const p = await buildProject();
      const counts = async (filters: unknown) =>
        ((await fx.ok('generate_frequency_report', { filters })).result.codes as { name: string; segment_count: number; source_count: number }[]).map(
          (c) => `${c.name}:${c.segment_count}/${c.source_count}`,
        );
      // S2 only: A a4; B a5, b2
      assert.deepEqual(await counts({ source_ids: [p.s2] }), ['B:2/1', 'A:1/1', 'C:0/0', 'D:0/0']);
      // codes B and D only, listed even when unused
      assert.deepEqual(await counts({ code_ids: [p.D, p.B] }), ['B:3/2', 'D:0/0']);
      // bob: b1 A S1, b2 B S2
      assert.deepEqual(await counts({ coder: 'bob' }), ['A:1/1', 'B:1/1', 'C:0/0', 'D:0/0']);
      // a case holding S2 whole, and one holding the range [12, 20) of S1: b1 [5,15) and a3 [12,15) overlap it, a2 [8,12) only touches it
      const whole = (await fx.ok('create_case', { name: 'P1' })).case_id;
      await fx.ok('add_source_to_case', { case_id: whole, source_id: p.s2 });
      const range = (await fx.ok('create_case', { name: 'P2' })).case_id;
      await fx.ok('add_segment_to_case', { case_id: range, source_id: p.s1, start_pos: 12, end_pos: 20 });
      assert.deepEqual(await counts({ case_ids: [whole] }), ['B:2/1', 'A:1/1', 'C:0/0', 'D:0/0']);
      assert.deepEqual(await counts({ case_ids: [range] }), ['A:1/1', 'C:1/1', 'B:0/0', 'D:0/0']);
      // alice within both cases: a4 A and a5 B in S2, a3 C in [12, 20) of S1 (ties by name)
      assert.deepEqual(await counts({ case_ids: [whole, range], coder: 'alice' }), ['A:1/1', 'B:1/1', 'C:1/1', 'D:0/0']);
    });

    it('equals a naive count on a random project (all codes, a code subset, one coder, some sources)', async () => {
      const { sources, codes, segments, names } = await randomProject();
      const naive = (filter: { code_ids?: number[]; coder?: string; source_ids?: number[] }) => {
        const segs = segments.filter(
          (g) =>
            (!filter.code_ids || filter.code_ids.includes(g.code_id)) &&
            (!filter.coder || g.owner === filter.coder) &&
            (!filter.source_ids || filter.source_ids.includes(g.source_id)),
        );
        const rows = [...names.keys()]
          .filter((id) => !filter.code_ids || filter.code_ids.includes(id))
          .map((id) => {
            const mine = segs.filter((g) => g.code_id === id);
            const coders = [...new Set(mine.map((g) => g.owner))].sort().map((coder) => {
              const theirs = mine.filter((g) => g.owner === coder);
              return { coder, segment_count: theirs.length, source_count: new Set(theirs.map((g) => g.source_id)).size };
            });
            return {
              code_id: id,
              name: names.get(id),
              color: RED,
              category_id: null,
              segment_count: mine.length,
              source_count: new Set(mine.map((g) => g.source_id)).size,
              coders,
            };
          })
          .sort((a, b) => b.segment_count - a.segment_count || ((a.name as string) < (b.name as string) ? -1 : 1));
        return {
          totals: {
            codes: rows.length,
            codes_used: rows.filter((r) => r.segment_count > 0).length,
            segments: segs.length,
            sources: new Set(segs.map((g) => g.source_id)).size,
            coders: [...new Set(segs.map((g) => g.owner))].sort(),
          },
          codes: rows,
        };
      };
      const byId = (xs: (number | undefined)[]) => (xs as number[]).sort((a, b) => a - b);
      for (const filters of [{}, { code_ids: byId([codes[1], codes[4], codes[6]]) }, { coder: 'alice' }, { source_ids: byId([sources[0], sources[3]]) }]) {
        const { report_type, filters: echoed, ...result } = (await fx.ok('generate_frequency_report', { filters })).result;
        assert.equal(report_type, 'frequency');
        assert.deepEqual(echoed, filters);
        assert.deepEqual(result, naive(filters), `filters ${JSON.stringify(filters)}`);
      }
    });

    it('an id in filters that does not exist fails the call before any job: nothing stored, no event', async () => {
      const p = await buildProject();
      const before = storedEvents(fx.handle).length;
      await fx.fails('generate_frequency_report', { filters: { code_ids: [p.A, 99] } }, 'CODE_NOT_FOUND');
      await fx.fails('generate_frequency_report', { filters: { source_ids: [99] } }, 'SOURCE_NOT_FOUND');
      await fx.fails('generate_cooccurrence_report', { filters: { case_ids: [99] } }, 'CASE_NOT_FOUND');
      await fx.fails('generate_frequency_report', { filters: { codes: [1] } }, 'INVALID_ARGUMENTS');
      assert.equal(storedEvents(fx.handle).length, before);
      assert.equal((await fx.ok('list_reports')).total, 0);
    });
  });

  describe('generate_cooccurrence_report', () => {
    it('counts overlapping pairs of segments per pair of codes on the same source (hand-counted)', async () => {
      const p = await buildProject();
      // S1 by start: a1 A[0,10) b1 A[5,15) a2 B[8,12) a3 C[12,15)
      //   a1-b1 A-A (5 < 10), a1-a2 A-B (8 < 10), b1-a2 A-B (8 < 15), b1-a3 A-C (12 < 15); a1-a3 no (12 >= 10); a2-a3 touch at 12: no
      // S2 by start: a4 A[0,5) b2 B[3,7) a5 B[5,10)
      //   a4-b2 A-B (3 < 5), b2-a5 B-B (5 < 7); a4-a5 touch at 5: no
      // A-A 1, A-B 3, A-C 1, B-B 1, B-C 0, C-C 0; D has no segment, so it is not on the axis.
      const job = await fx.ok('generate_cooccurrence_report', {});
      assert.deepEqual(job.result, {
        report_type: 'cooccurrence',
        filters: {},
        codes: [
          { code_id: p.A, name: 'A', color: RED },
          { code_id: p.B, name: 'B', color: RED },
          { code_id: p.C, name: 'C', color: RED },
        ],
        matrix: [
          [1, 3, 1],
          [3, 1, 0],
          [1, 0, 0],
        ],
        total_overlaps: 4,
        same_code_overlaps: 2,
        top_pairs: [
          { code_a_id: p.A, code_a_name: 'A', code_b_id: p.B, code_b_name: 'B', count: 3 },
          { code_a_id: p.A, code_a_name: 'A', code_b_id: p.C, code_b_name: 'C', count: 1 },
        ],
      });
    });

    it('narrows by code_ids (the axis is exactly those codes), coder, sources and cases', async () => {
      const p = await buildProject();
      const matrix = async (filters: unknown) => {
        const r = (await fx.ok('generate_cooccurrence_report', { filters })).result;
        return { axis: r.codes.map((c: { name: string }) => c.name), matrix: r.matrix };
      };
      // A and C (and unused D): S1 a1 A, b1 A, a3 C -> a1-b1 A-A, b1-a3 A-C
      assert.deepEqual(await matrix({ code_ids: [p.A, p.C, p.D] }), {
        axis: ['A', 'C', 'D'],
        matrix: [
          [1, 1, 0],
          [1, 0, 0],
          [0, 0, 0],
        ],
      });
      // alice only: a1-a2 A-B; nothing else overlaps
      assert.deepEqual(await matrix({ coder: 'alice' }), {
        axis: ['A', 'B', 'C'],
        matrix: [
          [0, 1, 0],
          [1, 0, 0],
          [0, 0, 0],
        ],
      });
      // S2 only: a4-b2 A-B, b2-a5 B-B
      assert.deepEqual(await matrix({ source_ids: [p.s2] }), {
        axis: ['A', 'B'],
        matrix: [
          [0, 1],
          [1, 1],
        ],
      });
      // the case range [12, 20) of S1 holds b1 and a3: b1-a3 A-C
      const k = (await fx.ok('create_case', { name: 'P' })).case_id;
      await fx.ok('add_segment_to_case', { case_id: k, source_id: p.s1, start_pos: 12, end_pos: 20 });
      assert.deepEqual(await matrix({ case_ids: [k] }), {
        axis: ['A', 'C'],
        matrix: [
          [0, 1],
          [1, 0],
        ],
      });
    });

    it('sweepOverlaps visits each overlapping pair once, skips touching ranges and codes off the axis', () => {
      // source 1: [0,4) code 7, [2,6) code 8, [4,9) code 7, [4,5) code 9 (off the axis); source 2: [0,3) code 8, [1,2) code 8
      // pairs: [0,4)-[2,6) 7-8; [2,6)-[4,9) 8-7; [2,6)-[4,5) (9: skipped); [4,9)-[4,5) (skipped); [0,4)-[4,9) touch: no
      //        source 2: [0,3)-[1,2) 8-8; nothing across sources
      const ranges = {
        source_id: Int32Array.from([1, 1, 1, 1, 2, 2]),
        code_id: Int32Array.from([7, 8, 7, 9, 8, 8]),
        start_pos: Int32Array.from([0, 2, 4, 4, 0, 1]),
        end_pos: Int32Array.from([4, 6, 9, 5, 3, 2]),
        owner: Int32Array.from([-1, -1, -1, -1, -1, -1]),
        owners: [],
      };
      const seen: string[] = [];
      sweepOverlaps(
        ranges,
        new Map([
          [7, 0],
          [8, 1],
        ]),
        (i, j) => seen.push(`${i}-${j}`),
      );
      assert.deepEqual(seen, ['0-1', '0-1', '1-1']);
    });

    it('equals a naive count over every pair of segments on a random project (all codes, a code subset, one coder)', async () => {
      const { codes, segments, names } = await randomProject();
      /** The report computed the slow way: every pair of segments compared, the axis and top pairs sorted by plain name order. */
      const naive = (filter: { code_ids?: number[]; coder?: string }) => {
        const segs = segments.filter((g) => (!filter.code_ids || filter.code_ids.includes(g.code_id)) && (!filter.coder || g.owner === filter.coder));
        const axis = (filter.code_ids ?? [...new Set(segs.map((g) => g.code_id))])
          .slice()
          .sort((a, b) => ((names.get(a) as string) < (names.get(b) as string) ? -1 : 1));
        const at = new Map(axis.map((id, i) => [id, i]));
        const matrix = axis.map(() => axis.map(() => 0));
        for (let x = 0; x < segs.length; x++) {
          for (let y = x + 1; y < segs.length; y++) {
            const a = segs[x] as (typeof segs)[number];
            const b = segs[y] as (typeof segs)[number];
            if (a.source_id !== b.source_id || !(a.start_pos < b.end_pos && b.start_pos < a.end_pos)) continue;
            const i = at.get(a.code_id) as number;
            const j = at.get(b.code_id) as number;
            const row = matrix[i] as number[];
            row[j] = (row[j] as number) + 1;
            if (i !== j) {
              const mirrored = matrix[j] as number[];
              mirrored[i] = (mirrored[i] as number) + 1;
            }
          }
        }
        const cells: { i: number; j: number; count: number }[] = [];
        let total = 0;
        let same = 0;
        axis.forEach((_, i) => {
          same += (matrix[i] as number[])[i] as number;
          for (let j = i + 1; j < axis.length; j++) {
            const count = (matrix[i] as number[])[j] as number;
            total += count;
            if (count > 0) cells.push({ i, j, count });
          }
        });
        cells.sort((p, q) => q.count - p.count || p.i - q.i || p.j - q.j); // axis order is name order
        return {
          codes: axis.map((id) => ({ code_id: id, name: names.get(id), color: RED })),
          matrix,
          total_overlaps: total,
          same_code_overlaps: same,
          top_pairs: cells.slice(0, 50).map((p) => ({
            code_a_id: axis[p.i],
            code_a_name: names.get(axis[p.i] as number),
            code_b_id: axis[p.j],
            code_b_name: names.get(axis[p.j] as number),
            count: p.count,
          })),
        };
      };
      for (const filters of [
        {},
        { code_ids: [codes[0], codes[2], codes[3], codes[6]].sort((a, b) => (a as number) - (b as number)) as number[] },
        { coder: 'bob' },
      ]) {
        const { report_type, filters: echoed, ...result } = (await fx.ok('generate_cooccurrence_report', { filters })).result;
        assert.equal(report_type, 'cooccurrence');
        assert.deepEqual(echoed, filters);
        const expected = naive(filters);
        assert.ok(expected.total_overlaps > 50, `the random project should overlap a lot (${expected.total_overlaps} pairs)`);
        assert.deepEqual(result, expected, `filters ${JSON.stringify(filters)}`);
      }
    });

    it('counts a cell past 65,535 pairs exactly (the 16-bit counts are widened)', () => {
      // one source: 300 segments of code 1 and 300 of code 2, all over [0, 10): 90,000 pairs 1-2, 44,850 of each code with itself
      const n = 600;
      const ranges = {
        source_id: new Int32Array(n).fill(1),
        code_id: Int32Array.from({ length: n }, (_, k) => (k % 2 === 0 ? 1 : 2)),
        start_pos: new Int32Array(n),
        end_pos: new Int32Array(n).fill(10),
        owner: new Int32Array(n).fill(-1),
        owners: [],
      };
      const repo = {
        reportCodedRanges: () => ranges,
        listCodeLabels: () => [1, 2].map((id) => ({ code_id: id, name: `c${id}`, color: RED, category_id: null })),
      } as unknown as ProjectRepository;
      const r = cooccurrenceReport(repo, {});
      assert.deepEqual(r.matrix, [
        [44_850, 90_000],
        [90_000, 44_850],
      ]);
      assert.equal(r.total_overlaps, 90_000);
      assert.equal(r.same_code_overlaps, 89_700);
    });

    it('an empty project gives an empty matrix', async () => {
      const job = await fx.ok('generate_cooccurrence_report', {});
      assert.deepEqual(job.result, {
        report_type: 'cooccurrence',
        filters: {},
        codes: [],
        matrix: [],
        total_overlaps: 0,
        same_code_overlaps: 0,
        top_pairs: [],
      });
    });
  });

  describe("generate_coder_comparison: Cohen's kappa, character by character", () => {
    /** One 20-character source and code X; `a` and `b` are alice's and bob's ranges of X. */
    async function twoCoders(a: [number, number][], b: [number, number][]) {
      const s = await text('Twenty', 'abcdefghijklmnopqrst');
      const x = await code('X');
      for (const [start, end] of a) await fx.ok('apply_code', { code_id: x, source_id: s, start_position: start, end_position: end }, ALICE);
      for (const [start, end] of b) await fx.ok('apply_code', { code_id: x, source_id: s, start_position: start, end_position: end }, BOB);
      return { s, x };
    }
    const row = async (args: unknown) => (await fx.ok('generate_coder_comparison', args)).result.codes[0];

    it('the worked example: A codes [0,10), B codes [5,15) of 20 characters -> po 0.5, pe 0.5, kappa 0', async () => {
      await twoCoders([[0, 10]], [[5, 15]]);
      // characters 0-4: A only (5); 5-9: both (5); 10-14: B only (5); 15-19: neither (5)
      // po = (both + neither) / n = (5 + 5) / 20 = 0.5
      // pA = 10/20 = 0.5, pB = 10/20 = 0.5; pe = pA*pB + (1-pA)(1-pB) = 0.25 + 0.25 = 0.5
      // kappa = (po - pe) / (1 - pe) = (0.5 - 0.5) / 0.5 = 0; percent agreement 50
      const r = await row({ coder_ids: ['alice', 'bob'] });
      assert.deepEqual([r.both, r.only_a, r.only_b, r.neither, r.characters, r.coded_a, r.coded_b], [5, 5, 5, 5, 20, 10, 10]);
      near(r.po, 0.5, 'po');
      near(r.pe, 0.5, 'pe');
      near(r.kappa, 0, 'kappa');
      near(r.percent_agreement, 50, 'percent agreement');
    });

    it('A codes [0,10), B codes [2,10) -> po 0.9, pe 0.5, kappa 0.8; a character A coded twice counts once', async () => {
      // A also codes [3,6), inside [0,10): the union is still [0,10)
      await twoCoders(
        [
          [0, 10],
          [3, 6],
        ],
        [[2, 10]],
      );
      // both 2-9 (8), A only 0-1 (2), B only none (0), neither 10-19 (10); n = 20
      // po = (8 + 10) / 20 = 0.9; pA = 10/20 = 0.5, pB = 8/20 = 0.4
      // pe = 0.5*0.4 + 0.5*0.6 = 0.2 + 0.3 = 0.5; kappa = (0.9 - 0.5) / (1 - 0.5) = 0.8
      const r = await row({ coder_ids: ['alice', 'bob'] });
      assert.deepEqual([r.both, r.only_a, r.only_b, r.neither], [8, 2, 0, 10]);
      near(r.po, 0.9, 'po');
      near(r.pe, 0.5, 'pe');
      near(r.kappa, 0.8, 'kappa');
      near(r.percent_agreement, 90, 'percent agreement');
    });

    it('the order of coder_ids names A and B', async () => {
      await twoCoders([[0, 10]], [[2, 10]]);
      const r = await row({ coder_ids: ['bob', 'alice'] });
      assert.deepEqual([r.both, r.only_a, r.only_b, r.neither, r.coded_a, r.coded_b], [8, 0, 2, 10, 8, 10]);
      near(r.kappa, 0.8, 'kappa is symmetric');
    });

    it('pe = 1 (both coders code every character, or a listed code neither used) gives kappa null with po 1', async () => {
      // bob's two halves cover what alice covers in one (the same code on exactly alice's range would be her segment again:
      // apply_code is idempotent per code and range, whoever calls it)
      const { x } = await twoCoders(
        [[0, 20]],
        [
          [0, 10],
          [10, 20],
        ],
      );
      const unused = await code('Unused');
      const r = (await fx.ok('generate_coder_comparison', { coder_ids: ['alice', 'bob'], filters: { code_ids: [x, unused] } })).result;
      const [unusedRow, xRow] = r.codes; // by name: Unused, X
      // X: both 20, pA = pB = 1, pe = 1*1 + 0*0 = 1 -> kappa undefined
      assert.deepEqual([xRow.name, xRow.both, xRow.neither, xRow.po, xRow.pe, xRow.kappa, xRow.percent_agreement], ['X', 20, 0, 1, 1, null, 100]);
      // Unused: neither 20, pA = pB = 0, pe = 0*0 + 1*1 = 1 -> kappa undefined
      assert.deepEqual([unusedRow.name, unusedRow.both, unusedRow.neither, unusedRow.po, unusedRow.pe, unusedRow.kappa], ['Unused', 0, 20, 1, 1, null]);
      // pooled: both 20, neither 20 of 40; pA = pB = 0.5, pe = 0.5, po = 1 -> kappa 1
      near(r.overall.kappa, 1, 'overall kappa');
    });

    it('a case range limits the characters compared: [0,12) with A [0,10), B [5,15) -> kappa -0.3125', async () => {
      const { s } = await twoCoders([[0, 10]], [[5, 15]]);
      const k = (await fx.ok('create_case', { name: 'P' })).case_id;
      await fx.ok('add_segment_to_case', { case_id: k, source_id: s, start_pos: 0, end_pos: 12 });
      // within [0,12): A 0-9 (10), B 5-11 (7), both 5-9 (5), A only 0-4 (5), B only 10-11 (2), neither 0; n = 12
      // po = 5/12; pA = 10/12, pB = 7/12; pe = (10*7 + 2*5) / 144 = 80/144 = 5/9
      // kappa = (5/12 - 5/9) / (1 - 5/9) = (15/36 - 20/36) / (16/36) = -5/16 = -0.3125
      const r = (await fx.ok('generate_coder_comparison', { coder_ids: ['alice', 'bob'], filters: { case_ids: [k] } })).result;
      assert.equal(r.total_characters, 12);
      const x = r.codes[0];
      assert.deepEqual([x.both, x.only_a, x.only_b, x.neither], [5, 5, 2, 0]);
      near(x.po, 5 / 12, 'po');
      near(x.pe, 5 / 9, 'pe');
      near(x.kappa, -0.3125, 'kappa');
    });

    it('on the report project: per code and pooled, over the sources both coders coded (hand-computed)', async () => {
      const p = await buildProject();
      // both coders coded S1 and S2 (S3: nobody), so n = 20 + 10 = 30 characters per code
      // A: alice S1 [0,10) + S2 [0,5) = 15, bob S1 [5,15) = 10, both S1 [5,10) = 5
      //    only_a 10, only_b 5, neither 30 - (15 + 10 - 5) = 10; po = 15/30 = 0.5; pA = 0.5, pB = 1/3
      //    pe = 0.5*(1/3) + 0.5*(2/3) = 0.5; kappa = 0
      // B: alice S1 [8,12) + S2 [5,10) = 9, bob S2 [3,7) = 4, both S2 [5,7) = 2
      //    only_a 7, only_b 2, neither 30 - 11 = 19; po = 21/30 = 0.7; pA = 9/30 = 0.3, pB = 4/30
      //    pe = 0.3*(4/30) + 0.7*(26/30) = 1.2/30 + 18.2/30 = 19.4/30; kappa = (21 - 19.4) / (30 - 19.4) = 1.6/10.6 = 0.150943...
      // C: alice S1 [12,15) = 3, bob 0; only_a 3, neither 27; po = 0.9; pA = 0.1, pB = 0; pe = 0.9; kappa = 0
      // pooled (n = 90): both 7, only_a 20, only_b 7, neither 56; po = 63/90 = 0.7; pA = 27/90 = 0.3, pB = 14/90
      //    pe = 0.3*(14/90) + 0.7*(76/90) = (4.2 + 53.2)/90 = 57.4/90; kappa = (63 - 57.4) / (90 - 57.4) = 5.6/32.6 = 0.171779...
      const job = await fx.ok('generate_coder_comparison', { coder_ids: ['alice', 'bob'] });
      const r = job.result;
      assert.deepEqual(r.coders, ['alice', 'bob']);
      assert.deepEqual(r.sources, [
        { source_id: p.s1, name: 'S1', characters: 20, units: 20 },
        { source_id: p.s2, name: 'S2', characters: 10, units: 10 },
      ]);
      assert.equal(r.total_characters, 30);
      assert.deepEqual(
        r.codes.map((c: Record<string, number>) => [c.name, c.both, c.only_a, c.only_b, c.neither]),
        [
          ['A', 5, 10, 5, 10],
          ['B', 2, 7, 2, 19],
          ['C', 0, 3, 0, 27],
        ],
      );
      near(r.codes[0].kappa, 0, 'A kappa');
      near(r.codes[1].kappa, 1.6 / 10.6, 'B kappa');
      near(r.codes[1].pe, 19.4 / 30, 'B pe');
      near(r.codes[2].kappa, 0, 'C kappa');
      near(r.codes[2].pe, 0.9, 'C pe');
      assert.deepEqual([r.overall.both, r.overall.only_a, r.overall.only_b, r.overall.neither, r.overall.characters], [7, 20, 7, 56, 90]);
      near(r.overall.po, 0.7, 'overall po');
      near(r.overall.kappa, 5.6 / 32.6, 'overall kappa');
      assert.match(r.method, /QualCoder/);
      assert.deepEqual(job.result.filters, {});
      assert.deepEqual((await fx.ok('get_report', { report_id: job.report_id })).params, {
        coder_ids: ['alice', 'bob'],
        unit: 'character',
        bootstrap: { draws: 1000, seed: 1 },
      });
    });

    it('fails with INVALID_ARGUMENTS for one coder twice, a coder without segments, or filters.coder; nothing is stored', async () => {
      await twoCoders([[0, 10]], [[5, 15]]);
      await fx.fails('generate_coder_comparison', { coder_ids: ['alice', 'alice'] }, 'INVALID_ARGUMENTS');
      await fx.fails('generate_coder_comparison', { coder_ids: ['alice'] }, 'INVALID_ARGUMENTS');
      const nobody = await fx.fails('generate_coder_comparison', { coder_ids: ['alice', 'carol'] }, 'INVALID_ARGUMENTS');
      assert.match(!nobody.envelope.success ? nobody.envelope.error : '', /"carol".*"alice", "bob"/);
      await fx.fails('generate_coder_comparison', { coder_ids: ['alice', 'bob'], filters: { coder: 'alice' } }, 'INVALID_ARGUMENTS');
      await fx.fails('generate_coder_comparison', { coder_ids: ['alice', 'bob'], filters: { code_ids: [99] } }, 'CODE_NOT_FOUND');
      assert.equal((await fx.ok('list_reports')).total, 0);
    });
  });

  describe('report jobs', () => {
    it('store the report and emit analysis.report_started then analysis.report_completed in the same transaction', async () => {
      const p = await buildProject();
      const seqBefore = fx.handle.store.journalSeq;
      const out = await fx.call('generate_cooccurrence_report', { filters: { code_ids: [p.B, p.A] } });
      assert.ok(out.envelope.success);
      const d = out.envelope.data as Record<string, any>;
      assert.equal(fx.handle.store.journalSeq, seqBefore + 1, 'one durable transaction');
      assert.equal(d.job_id, d.report_id);
      assert.equal(d.result_uri, `qda://reports/${d.report_id}`);
      assert.deepEqual(
        out.events.map((e) => [e.event_type, e.aggregate_type, e.aggregate_id, e.payload]),
        [
          [
            'analysis.report_started',
            'report',
            String(d.job_id),
            { job_id: d.job_id, report_id: d.job_id, report_type: 'cooccurrence', filters: { code_ids: [p.A, p.B] } },
          ],
          [
            'analysis.report_completed',
            'report',
            String(d.job_id),
            { job_id: d.job_id, report_id: d.job_id, report_type: 'cooccurrence', result_uri: `qda://reports/${d.job_id}` },
          ],
        ],
      );
      const [started, completed] = out.events;
      assert.equal(completed!.metadata.sequence_number, started!.metadata.sequence_number + 1);
      assert.equal(completed!.metadata.correlation_id, started!.metadata.correlation_id);
      const stored = storedEvents(fx.handle).slice(-2);
      assert.deepEqual(
        stored.map((e) => e.event_type),
        ['analysis.report_started', 'analysis.report_completed'],
      );

      const got = await fx.ok('get_report', { report_id: d.report_id });
      assert.deepEqual(got, {
        report_id: d.report_id,
        job_id: d.report_id,
        report_type: 'cooccurrence',
        status: 'completed',
        filters: { code_ids: [p.A, p.B] },
        params: {},
        result_uri: `qda://reports/${d.report_id}`,
        owner: 'alice',
        session_id: 'sess-alice',
        created_at: FIXED_ISO,
        completed_at: FIXED_ISO,
        error_code: null,
        error: null,
        result: d.result,
      });
    });

    it('list_reports lists newest first without results, by type and status, with paging; get_report of an unknown id is REPORT_NOT_FOUND', async () => {
      await buildProject();
      const f = await fx.ok('generate_frequency_report', {});
      const c = await fx.ok('generate_cooccurrence_report', {});
      const k = await fx.ok('generate_coder_comparison', { coder_ids: ['alice', 'bob'] });
      const all = await fx.ok('list_reports');
      assert.equal(all.total, 3);
      assert.deepEqual(
        all.reports.map((r: { report_id: number }) => r.report_id),
        [k.report_id, c.report_id, f.report_id],
      );
      assert.equal('result' in all.reports[0], false);
      assert.deepEqual(
        (await fx.ok('list_reports', { report_type: 'frequency' })).reports.map((r: { report_id: number }) => r.report_id),
        [f.report_id],
      );
      const page = await fx.ok('list_reports', { limit: 2, offset: 1 });
      assert.deepEqual([page.count, page.offset, page.has_more, page.reports[0].report_id], [2, 1, false, c.report_id]);
      assert.equal((await fx.ok('list_reports', { status: 'failed' })).total, 0);
      await fx.fails('get_report', { report_id: 99 }, 'REPORT_NOT_FOUND');
    });

    it('a job that fails while computing is stored as failed and reported with analysis.report_failed', async () => {
      await buildProject();
      const repo = fx.handle.repo as unknown as Record<string, unknown>;
      const original = repo.reportCodedRanges;
      repo.reportCodedRanges = () => {
        throw new Error('the disk caught fire');
      };
      let out;
      try {
        out = await fx.call('generate_cooccurrence_report', {});
      } finally {
        repo.reportCodedRanges = original;
      }
      assert.ok(out.envelope.success, 'the job started, so the call succeeds and reports the failure');
      const d = out.envelope.data as Record<string, any>;
      assert.deepEqual([d.status, d.result, d.error_code, d.error], ['failed', null, 'TOOL_EXECUTION_ERROR', 'the disk caught fire']);
      assert.deepEqual(
        out.events.map((e) => [e.event_type, e.payload]),
        [
          ['analysis.report_started', { job_id: d.job_id, report_id: d.job_id, report_type: 'cooccurrence', filters: {} }],
          [
            'analysis.report_failed',
            { job_id: d.job_id, report_id: d.job_id, report_type: 'cooccurrence', error_code: 'TOOL_EXECUTION_ERROR', error: 'the disk caught fire' },
          ],
        ],
      );
      const got = await fx.ok('get_report', { report_id: d.report_id });
      assert.deepEqual(
        [got.status, got.result, got.error_code, got.error, got.completed_at],
        ['failed', null, 'TOOL_EXECUTION_ERROR', 'the disk caught fire', FIXED_ISO],
      );
      assert.equal((await fx.ok('list_reports', { status: 'failed' })).total, 1);
      const exp = await fx.fails('export_report', { report_id: d.report_id, format: 'json' }, 'EXPORT_FAILED');
      assert.match(!exp.envelope.success ? exp.envelope.error : '', /status failed: the disk caught fire/);
      // the next report runs normally
      assert.equal((await fx.ok('generate_cooccurrence_report', {})).status, 'completed');
    });
  });

  describe('export_report', () => {
    async function frequencyOf(names: string[]) {
      const s = await text('S', 'abcdefghij');
      for (const [i, n] of names.entries()) {
        const c = await code(n);
        for (let k = 0; k <= i; k++) await fx.ok('apply_code', { code_id: c, source_id: s, start_position: k, end_position: k + 1 });
      }
      return (await fx.ok('generate_frequency_report', {})).report_id as number;
    }

    it('csv: RFC 4180 with CRLF, quoted fields, formulas neutralised; written under .marginalia/reports by default', async () => {
      const id = await frequencyOf(['Plain', 'Comma, "quoted"', '=SUM(A1)']);
      const out = await fx.ok('export_report', { report_id: id, format: 'csv' });
      assert.equal(out.file_path, path.join(fx.dir, '.marginalia', 'reports', `report-${id}-frequency.csv`));
      const csv = fs.readFileSync(out.file_path, 'utf8');
      // =SUM(A1) has 3 segments, Comma 2, Plain 1; all by alice in the one source
      assert.equal(
        csv,
        'code_id,code,segments,sources,coders\r\n' + "3,'=SUM(A1),3,1,alice (3)\r\n" + '2,"Comma, ""quoted""",2,1,alice (2)\r\n' + '1,Plain,1,1,alice (1)\r\n',
      );
      assert.equal(out.bytes, Buffer.byteLength(csv));
      assert.deepEqual(out.format, 'csv');
    });

    it('json: the report exactly as get_report returns it', async () => {
      await buildProject();
      const job = await fx.ok('generate_coder_comparison', { coder_ids: ['alice', 'bob'] });
      const target = path.join(fx.dir, 'agreement.json');
      const out = await fx.ok('export_report', { report_id: job.report_id, format: 'json', output_path: target });
      assert.equal(out.file_path, target);
      assert.deepEqual(JSON.parse(fs.readFileSync(target, 'utf8')), await fx.ok('get_report', { report_id: job.report_id }));
    });

    it('html: a standalone page without scripts in which every name is escaped', async () => {
      await buildProject();
      await fx.ok('rename_code', { code_id: 1, new_name: '<script>alert("x")</script>' });
      const job = await fx.ok('generate_cooccurrence_report', {});
      const out = await fx.ok('export_report', { report_id: job.report_id, format: 'html', output_path: path.join(fx.dir, 'matrix.htm') });
      const html = fs.readFileSync(out.file_path, 'utf8');
      assert.match(html, /^<!DOCTYPE html>/);
      assert.match(html, /Content-Security-Policy" content="default-src 'none'/);
      assert.ok(!/<script/i.test(html), 'no script element');
      assert.ok(html.includes('<th>&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;</th>'), 'the code name as escaped text in the header');
      // the matrix row of the renamed code A (sorted first: "<" before "B"): A-A 1, A-B 3, A-C 1
      assert.ok(
        html.includes('<tr><td>&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;</td><td class="n">1</td><td class="n">3</td><td class="n">1</td></tr>'),
        html,
      );
    });

    it('checks output_path: absolute, matching extension, existing folder, no overwrite unless asked; REPORT_NOT_FOUND', async () => {
      const id = await frequencyOf(['Plain']);
      const bad = async (output_path: string, why: RegExp) => {
        const out = await fx.fails('export_report', { report_id: id, format: 'csv', output_path }, 'EXPORT_FAILED');
        assert.match(!out.envelope.success ? out.envelope.error : '', why);
      };
      await bad('report.csv', /absolute/);
      await bad(path.join(fx.dir, 'report.html'), /\.csv/);
      await bad(path.join(fx.dir, 'no-such-folder', 'report.csv'), /does not exist/);
      const target = path.join(fx.dir, 'report.csv');
      fs.writeFileSync(target, 'keep me');
      await bad(target, /overwrite/);
      assert.equal(fs.readFileSync(target, 'utf8'), 'keep me');
      const out = await fx.ok('export_report', { report_id: id, format: 'csv', output_path: target, overwrite: true });
      assert.match(fs.readFileSync(out.file_path, 'utf8'), /^code_id,code,segments/);
      await fx.fails('export_report', { report_id: 99, format: 'csv' }, 'REPORT_NOT_FOUND');
      await fx.fails('export_report', { report_id: id, format: 'pdf' }, 'UNKNOWN_FORMAT');
    });
  });
});
