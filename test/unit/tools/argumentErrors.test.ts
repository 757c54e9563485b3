/**
 * src/tools/argumentErrors.ts through the real pipeline on a real project file: an invalid argument's
 * message says what was expected ("code_id must be a positive integer"), never zod's "Invalid input", under
 * the spec's INVALID_ARGUMENTS, with details.issues naming each argument. The expected sentences are written
 * out by hand here.
 */
import assert from 'node:assert/strict';
import { openFixture, type Fixture } from '../domain/projectFixture';

interface Issue {
  path: string;
  message: string;
  code: string;
}

/** The message and issues of a refusal that must be INVALID_ARGUMENTS. */
async function refusal(fx: Fixture, tool: string, args: unknown): Promise<{ error: string; issues: Issue[] }> {
  const out = await fx.fails(tool, args, 'INVALID_ARGUMENTS');
  const env = out.envelope as { success: false; error: string; details?: { issues?: Issue[] } };
  assert.ok(Array.isArray(env.details?.issues), JSON.stringify(env));
  assert.doesNotMatch(env.error, /Invalid input|Too big|Too small|Unrecognized key|Invalid option/, 'no zod wording');
  return { error: env.error, issues: env.details!.issues! };
}

describe('tools/argumentErrors: messages that say what was expected', () => {
  let fx: Fixture;
  beforeEach(async () => {
    fx = await openFixture();
  });
  afterEach(async () => {
    await fx.close();
  });

  it('ids: a negative, zero, fractional, non-numeric or missing code_id', async () => {
    for (const bad of [-1, 0, 1.5, 'abc', '0', '-3', true, null, { id: 1 }]) {
      const r = await refusal(fx, 'get_code', { code_id: bad });
      assert.equal(r.error, 'Invalid arguments for get_code: code_id must be a positive integer', JSON.stringify(bad));
      assert.deepEqual(
        r.issues.map((i) => i.path),
        ['code_id'],
      );
    }
    assert.equal((await refusal(fx, 'get_code', {})).error, 'Invalid arguments for get_code: code_id is required');
  });

  it('names: the limit the server enforces, counted in characters (code points)', async () => {
    const long = await refusal(fx, 'create_code', { name: 'x'.repeat(101), color: '#4E79A7' });
    assert.equal(long.error, 'Invalid arguments for create_code: name must be at most 100 characters (got 101)');
    // 100 astral characters are 200 UTF-16 units and still 100 characters: accepted
    const astral = await fx.ok('create_code', { name: '🌱'.repeat(100), color: '#4E79A7' });
    assert.equal([...astral.name].length, 100);
    assert.equal(
      (await refusal(fx, 'create_code', { name: '🌱'.repeat(101), color: '#4E79A7' })).error,
      'Invalid arguments for create_code: name must be at most 100 characters (got 101)',
    );
    assert.equal((await refusal(fx, 'create_code', { name: '', color: '#4E79A7' })).error, 'Invalid arguments for create_code: name must not be empty');
    assert.equal(
      (await refusal(fx, 'create_code', { name: '   ', color: '#4E79A7' })).error,
      'Invalid arguments for create_code: name must not be empty or only white space',
    );
    assert.equal(
      (await refusal(fx, 'create_code', { name: 'a\u0000b', color: '#4E79A7' })).error,
      'Invalid arguments for create_code: name must not contain control characters (U+0000-U+001F, U+007F)',
    );
    assert.equal(
      (await refusal(fx, 'add_text_source', { name: 's'.repeat(256), content: 'x' })).error,
      'Invalid arguments for add_text_source: name must be at most 255 characters (got 256)',
    );
    assert.equal(
      (await refusal(fx, 'create_case', { name: 'c'.repeat(256) })).error,
      'Invalid arguments for create_case: name must be at most 255 characters (got 256)',
    );
  });

  it('types, patterns, enums, bounds and array sizes', async () => {
    assert.equal(
      (await refusal(fx, 'create_code', { name: 5, color: '#4E79A7' })).error,
      'Invalid arguments for create_code: name must be a string (got an integer)',
    );
    assert.equal(
      (await refusal(fx, 'create_code', { name: 'A', color: 'red' })).error,
      'Invalid arguments for create_code: color must be a hex colour #RRGGBB, e.g. #4E79A7',
    );
    assert.equal(
      (await refusal(fx, 'list_sources', { source_type: 'movie' })).error,
      'Invalid arguments for list_sources: source_type must be one of "text", "audio", "video", "image", "pdf" (got "movie")',
    );
    assert.equal(
      (await refusal(fx, 'remove_source', { source_id: 1, confirm: 'yes' })).error,
      'Invalid arguments for remove_source: confirm must be true or false (got a string)',
    );
    assert.equal(
      (await refusal(fx, 'read_source_content', { source_id: 1, start_pos: -1 })).error,
      'Invalid arguments for read_source_content: start_pos must be a non-negative integer (a position in code points)',
    );
    assert.equal(
      (await refusal(fx, 'compare_cases', { case_ids: [1] })).error,
      'Invalid arguments for compare_cases: case_ids must have at least 2 items (got 1)',
    );
    assert.equal(
      (await refusal(fx, 'batch_apply_codes', { operations: [] })).error,
      'Invalid arguments for batch_apply_codes: operations must have at least 1 item (got 0)',
    );
    assert.equal((await refusal(fx, 'list_snapshots', { limit: 'ten' })).error, 'Invalid arguments for list_snapshots: limit must be a number (got a string)');
    assert.equal((await refusal(fx, 'get_code', [1])).error, 'Invalid arguments for get_code: arguments must be an object (got an array)');
  });

  it('a value nested 20,000 deep or megabytes long is refused in words, never serialised into the message', async () => {
    let deepArray: unknown = 1;
    for (let i = 0; i < 20_000; i++) deepArray = [{ a: deepArray }];
    let deepObject: unknown = 1;
    for (let i = 0; i < 20_000; i++) deepObject = { a: deepObject };
    assert.equal(
      (await refusal(fx, 'list_reports', { report_type: deepArray })).error,
      'Invalid arguments for list_reports: report_type must be one of "frequency", "cooccurrence", "coder_comparison" (got an array)',
    );
    assert.equal(
      (await refusal(fx, 'move_source_to_folder', { source_id: 1, folder_id: deepObject })).error,
      'Invalid arguments for move_source_to_folder: folder_id must be 0, "0" or a positive integer (got an object)',
    );
    const long = await refusal(fx, 'list_sources', { source_type: 'm'.repeat(1_000_000) });
    assert.equal(
      long.error,
      `Invalid arguments for list_sources: source_type must be one of "text", "audio", "video", "image", "pdf" (got "${'m'.repeat(40)}"...)`,
    );
  });

  it('unknown parameters and every missing one are each named', async () => {
    // color is optional since issue 13 (a free palette colour), so the missing parameter here is the name
    const r = await refusal(fx, 'create_code', { colour: '#4E79A7' });
    assert.equal(r.error, 'Invalid arguments for create_code: name is required; unknown parameter "colour" (a misspelt parameter is refused, not ignored)');
    assert.deepEqual(
      r.issues.map((i) => [i.path, i.code]),
      [
        ['name', 'invalid_type'],
        ['', 'unrecognized_keys'],
      ],
    );
  });

  it('apply_code and batch operations name the missing positions and their aliases', async () => {
    const r = await refusal(fx, 'apply_code', { code_id: 1, source_id: 1 });
    assert.equal(
      r.error,
      'Invalid arguments for apply_code: start_position is required (or its alias start_pos); end_position is required (or its alias end_pos)',
    );
    const b = await refusal(fx, 'batch_apply_codes', {
      operations: [
        { code_id: 1, source_id: 1, start_pos: 0, end_pos: 3 },
        { code_id: 1, source_id: 1, start_pos: 2 },
      ],
    });
    assert.equal(b.error, 'Invalid arguments for batch_apply_codes: operations[1].end_position is required (or its alias end_pos)');
    const d = await refusal(fx, 'apply_code', { code_id: 1, source_id: 1, start_position: 0, start_pos: 1, end_pos: 4 });
    assert.equal(d.error, 'Invalid arguments for apply_code: start_pos must equal start_position when both are given (got 1 and 0)');
    const c = await refusal(fx, 'add_segment_to_case', { case_id: 1, source_id: 1, start: 0 });
    assert.equal(c.error, 'Invalid arguments for add_segment_to_case: end_pos is required (or its alias end)');
  });

  it('update_code_memo and update_segment_memo: memo is required; null clears', async () => {
    const src = await fx.ok('add_text_source', { name: 'S', content: 'water rota' });
    const code = await fx.ok('create_code', { name: 'Water', color: '#4E79A7', memo: 'keep me' });
    assert.equal((await refusal(fx, 'update_code_memo', { code_id: code.code_id })).error, 'Invalid arguments for update_code_memo: memo is required');
    assert.equal((await fx.ok('get_code', { code_id: code.code_id })).memo, 'keep me');
    assert.deepEqual(await fx.ok('update_code_memo', { code_id: code.code_id, memo: null }), { code_id: code.code_id, old_memo: 'keep me', new_memo: null });
    const seg = await fx.ok('apply_code', { code_id: code.code_id, source_id: src.source_id, start_position: 0, end_position: 5, memo: 'seg memo' });
    assert.equal(
      (await refusal(fx, 'update_segment_memo', { segment_id: seg.segment_id })).error,
      'Invalid arguments for update_segment_memo: memo is required',
    );
    assert.equal((await fx.ok('list_segments_for_source', { source_id: src.source_id })).segments[0].memo, 'seg memo');
    assert.equal((await fx.ok('update_segment_memo', { segment_id: seg.segment_id, memo: null })).new_memo, null);
    assert.equal((await refusal(fx, 'update_memo', { source_id: src.source_id })).error, 'Invalid arguments for update_memo: memo is required');
  });
});
