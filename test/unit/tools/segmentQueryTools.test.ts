/**
 * list_segments (src/tools/segmentQueryTools.ts), which backs GET /state/segments: filters by code, source
 * and case combine; a case holds the segments of its whole sources and those overlapping its ranges;
 * pages; unknown ids fail with their NOT_FOUND codes.
 */
import assert from 'node:assert/strict';
import { openFixture, type Fixture } from '../domain/projectFixture';

describe('tools/list_segments', () => {
  let fx: Fixture;
  let s1 = 0;
  let s2 = 0;
  let a = 0;
  let b = 0;
  beforeEach(async () => {
    fx = await openFixture();
    s1 = (await fx.ok('add_text_source', { name: 'one', content: 'aaaa bbbb cccc dddd' })).source_id;
    s2 = (await fx.ok('add_text_source', { name: 'two', content: 'eeee ffff' })).source_id;
    a = (await fx.ok('create_code', { name: 'A', color: '#111111' })).code_id;
    b = (await fx.ok('create_code', { name: 'B', color: '#222222' })).code_id;
    await fx.ok('batch_apply_codes', {
      operations: [
        { code_id: a, source_id: s1, start_position: 10, end_position: 14 },
        { code_id: a, source_id: s1, start_position: 0, end_position: 4 },
        { code_id: b, source_id: s1, start_position: 5, end_position: 9 },
        { code_id: a, source_id: s2, start_position: 0, end_position: 4 },
      ],
    });
  });
  afterEach(() => fx.close());

  const texts = (d: { segments: { text: string; source_name: string }[] }) => d.segments.map((s) => `${s.source_name}:${s.text}`);

  it('lists every segment by source then position, or those of a code, a source, or both', async () => {
    assert.deepEqual(texts(await fx.ok('list_segments')), ['one:aaaa', 'one:bbbb', 'one:cccc', 'two:eeee']);
    assert.deepEqual(texts(await fx.ok('list_segments', { code_id: a })), ['one:aaaa', 'one:cccc', 'two:eeee']);
    assert.deepEqual(texts(await fx.ok('list_segments', { source_id: s1 })), ['one:aaaa', 'one:bbbb', 'one:cccc']);
    assert.deepEqual(texts(await fx.ok('list_segments', { source_id: String(s1), code_id: b })), ['one:bbbb']);
  });

  it("a case's segments: those of its whole sources plus those overlapping its ranges", async () => {
    const c = (await fx.ok('create_case', { name: 'P01' })).case_id;
    assert.equal((await fx.ok('list_segments', { case_id: c })).total, 0);
    await fx.ok('add_segment_to_case', { case_id: c, source_id: s1, start_pos: 7, end_pos: 11 });
    assert.deepEqual(texts(await fx.ok('list_segments', { case_id: c })), ['one:bbbb', 'one:cccc']);
    await fx.ok('add_source_to_case', { case_id: c, source_id: s2 });
    assert.deepEqual(texts(await fx.ok('list_segments', { case_id: c })), ['one:bbbb', 'one:cccc', 'two:eeee']);
    assert.deepEqual(texts(await fx.ok('list_segments', { case_id: c, code_id: a })), ['one:cccc', 'two:eeee']);
  });

  it('pages with limit and offset, saying whether more follow', async () => {
    const p1 = await fx.ok('list_segments', { limit: 3 });
    assert.equal(p1.total, 4);
    assert.equal(p1.count, 3);
    assert.equal(p1.has_more, true);
    const p2 = await fx.ok('list_segments', { limit: 3, offset: 3 });
    assert.deepEqual(texts(p2), ['two:eeee']);
    assert.equal(p2.has_more, false);
  });

  it('fails with CODE_NOT_FOUND, SOURCE_NOT_FOUND, CASE_NOT_FOUND for unknown ids', async () => {
    await fx.fails('list_segments', { code_id: 99 }, 'CODE_NOT_FOUND');
    await fx.fails('list_segments', { source_id: 99 }, 'SOURCE_NOT_FOUND');
    await fx.fails('list_segments', { case_id: 99 }, 'CASE_NOT_FOUND');
    await fx.fails('list_segments', { colour: 1 }, 'INVALID_ARGUMENTS');
  });
});
