/**
 * End-to-end test of the agent-context design's source and coding capabilities over HTTP against the real
 * built CLI (`bin/marginalia.js serve`; run `npm run build` first): import_text, import_source,
 * rename_source, update_memo, delete_source, remove_code and move_code (apply_code makes the codings they
 * work on). One server for the file; the `it` blocks run in order.
 *
 * Covered: what each call changes, read back through the list tools, read_source_content and the stored
 * events (GET /events/history); the design's trust levels for an agent (import_text and import_source
 * suggest: HTTP 202 until the researcher approves; rename_source, remove_code and move_code notify and
 * update_memo auto: they run; delete_source require: 202); every failing call leaving sources, codes,
 * categories, segments, cases and the event log as they were. Error codes with their HTTP statuses:
 * SOURCE_DUPLICATE_NAME 409, SOURCE_NOT_FOUND 404, SOURCE_IMPORT_FAILED 422, SEGMENT_NOT_FOUND 404,
 * CODE_NOT_FOUND 404, CATEGORY_NOT_FOUND 404, INVALID_ARGUMENTS 400.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { AS_AGENT, startServer, tmpDir, type ServerProcess } from '../helpers/serverProcess';
import { toolClient } from '../helpers/toolClient';

/** A text with a character outside the BMP: its length counts code points. */
const FIELD = 'We met at the plot 🌱 on Sunday.\nThe hose leaked again.\n';
const UNKNOWN = 987654;

describe('agent-context capability tools (sources and codings) over HTTP (real CLI)', function () {
  this.timeout(120_000);
  let dir = '';
  let files = '';
  let server: ServerProcess | undefined;
  let base = '';
  const t = toolClient(() => base);
  const src: Record<string, any> = {};
  const code: Record<string, any> = {};
  const cat: Record<string, any> = {};
  const seg: Record<string, any> = {};

  /** Everything these tools touch, as the list tools report it. */
  const snapshot = async () => {
    const sources = await t.ok('list_sources');
    const segments: unknown[] = [];
    for (const s of sources.sources) segments.push(await t.ok('list_segments_for_source', { source_id: s.source_id }));
    return { sources, segments, codes: await t.ok('list_codes'), categories: await t.ok('list_categories'), cases: await t.ok('list_cases') };
  };
  const sourceNamed = async (name: string) => (await t.ok('list_sources')).sources.find((s: any) => s.name === name);

  before(async () => {
    dir = tmpDir('marginalia-design-e2e-');
    files = path.join(dir, 'files');
    fs.mkdirSync(files);
    fs.writeFileSync(path.join(files, 'diary.txt'), 'Day 1. Planted beans.\nDay 2. Slugs.\n');
    fs.writeFileSync(path.join(files, 'notes.md'), '# Notes\n\nThe *council* replied.\n');
    fs.writeFileSync(path.join(files, 'walk.mp3'), 'ID3 stand-in');
    fs.writeFileSync(path.join(files, 'table.xyz'), 'unsupported');
    server = await startServer(path.join(dir, 'study.qda'));
    base = server.base;
    for (const [key, name] of [
      ['water', 'Water'],
      ['pests', 'Pests'],
    ] as const)
      code[key] = (await t.ok('create_code', { name, color: '#4E79A7' })).code_id;
    for (const [key, name] of [
      ['nature', 'Nature'],
      ['people', 'People'],
    ] as const)
      cat[key] = (await t.ok('create_category', { name })).category_id;
  });

  after(async () => {
    if (server) await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('import_text adds a text source stored exactly, its length in code points (source.imported)', async () => {
    const seq = await t.headSeq();
    const s = await t.ok('import_text', { name: 'Field notes', content: FIELD });
    src.field = s.source_id;
    assert.deepEqual([s.name, s.type, s.length, s.memo, s.segment_count], ['Field notes', 'text', [...FIELD].length, null, 0]);
    assert.notEqual(s.length, FIELD.length, 'the emoji is one code point, two UTF-16 units');
    const read = await t.ok('read_source_content', { source_id: src.field });
    assert.equal(read.content ?? read.text, FIELD);
    const events = await t.events(seq, 'source.*');
    assert.deepEqual(
      events.map((e) => [e.event_type, e.payload.source_id, e.payload.name]),
      [['source.imported', src.field, 'Field notes']],
    );
    // an empty text is a source too
    src.empty = (await t.ok('import_text', { name: 'Empty', content: '' })).source_id;
  });

  it('import_source imports text files by absolute path and registers media; name defaults to the file name', async () => {
    const d = await t.ok('import_source', { file_path: path.join(files, 'diary.txt') });
    src.diary = d.source_id;
    assert.deepEqual([d.name, d.type, d.length], ['diary.txt', 'text', 'Day 1. Planted beans.\nDay 2. Slugs.\n'.length]);
    assert.equal(d.dry_run, undefined, 'import_source has no dry_run');
    const md = await t.ok('import_source', { file_path: path.join(files, 'notes.md'), name: 'Council notes' });
    src.md = md.source_id;
    assert.equal(md.name, 'Council notes');
    assert.equal((await t.ok('read_source_content', { source_id: src.md })).content, '# Notes\n\nThe *council* replied.\n');
    const audio = await t.ok('import_source', { file_path: path.join(files, 'walk.mp3') });
    src.audio = audio.source_id;
    assert.deepEqual([audio.type, audio.length, audio.file_path], ['audio', 0, path.join(files, 'walk.mp3')]);
  });

  it('refuses duplicate names (409), bad files (422) and bad arguments (400), writing nothing', async () => {
    await t.writesNothing(
      snapshot,
      async () => {
        // names compare case-insensitively after trimming
        await t.fails('import_text', { name: 'field NOTES ', content: 'x' }, 'SOURCE_DUPLICATE_NAME');
        await t.fails('import_source', { file_path: path.join(files, 'diary.txt') }, 'SOURCE_DUPLICATE_NAME');
        await t.fails('import_source', { file_path: path.join(files, 'walk.mp3'), name: 'Council Notes' }, 'SOURCE_DUPLICATE_NAME');
        await t.fails('import_source', { file_path: 'files/diary.txt' }, 'SOURCE_IMPORT_FAILED');
        await t.fails('import_source', { file_path: path.join(files, 'missing.txt') }, 'SOURCE_IMPORT_FAILED');
        await t.fails('import_source', { file_path: path.join(files, 'table.xyz') }, 'SOURCE_IMPORT_FAILED');
        await t.fails('import_source', { file_path: files }, 'SOURCE_IMPORT_FAILED');
        await t.fails('import_text', { name: '', content: 'x' }, 'INVALID_ARGUMENTS');
        await t.fails('import_text', { content: 'x' }, 'INVALID_ARGUMENTS');
        await t.fails('import_source', { file_path: path.join(files, 'diary.txt'), dry_run: true }, 'INVALID_ARGUMENTS');
        await t.fails('rename_source', { source_id: src.diary, new_name: 'Field Notes' }, 'SOURCE_DUPLICATE_NAME');
        await t.fails('rename_source', { source_id: UNKNOWN, new_name: 'X' }, 'SOURCE_NOT_FOUND');
        await t.fails('rename_source', { source_id: src.diary, new_name: '   ' }, 'INVALID_ARGUMENTS');
        await t.fails('update_memo', { source_id: UNKNOWN, memo: 'x' }, 'SOURCE_NOT_FOUND');
        await t.fails('update_memo', { source_id: src.diary }, 'INVALID_ARGUMENTS');
        await t.fails('delete_source', { source_id: UNKNOWN }, 'SOURCE_NOT_FOUND');
        await t.fails('remove_code', { segment_id: UNKNOWN }, 'SEGMENT_NOT_FOUND');
        await t.fails('move_code', { code_id: UNKNOWN, category_id: cat.nature }, 'CODE_NOT_FOUND');
        await t.fails('move_code', { code_id: code.water, category_id: UNKNOWN }, 'CATEGORY_NOT_FOUND');
        await t.fails('move_code', { code_id: code.water }, 'INVALID_ARGUMENTS');
        await t.fails('apply_code', { code_id: code.water, source_id: src.field, start_pos: 0, end_pos: [...FIELD].length + 1 }, 'INVALID_POSITION');
        await t.fails('apply_code', { code_id: UNKNOWN, source_id: src.field, start_pos: 0, end_pos: 2 }, 'CODE_NOT_FOUND');
      },
      'failing design-tool calls',
    );
  });

  it('rename_source renames, keeping text and codings (source.renamed); a case change of its own name is allowed', async () => {
    const hose = FIELD.indexOf('The hose leaked again.');
    // code points: the emoji before it counts once
    const start = [...FIELD.slice(0, hose)].length;
    const coded = await t.ok('apply_code', { code_id: code.water, source_id: src.field, start_pos: start, end_pos: start + 'The hose leaked again.'.length });
    assert.equal(coded.text, 'The hose leaked again.');
    seg.hose = coded.segment_id;
    const seq = await t.headSeq();
    const r = await t.ok('rename_source', { source_id: src.field, new_name: 'Plot diary' });
    assert.deepEqual(r, { source_id: src.field, old_name: 'Field notes', new_name: 'Plot diary' });
    const events = await t.events(seq);
    assert.deepEqual(
      events.map((e) => [e.event_type, e.payload.old_name, e.payload.new_name]),
      [['source.renamed', 'Field notes', 'Plot diary']],
    );
    assert.equal((await t.ok('read_source_content', { source_id: src.field })).content, FIELD);
    const segs = await t.ok('list_segments_for_source', { source_id: src.field });
    assert.deepEqual(
      segs.segments.map((s: any) => s.segment_id),
      [seg.hose],
    );
    assert.equal((await t.ok('rename_source', { source_id: src.field, new_name: 'PLOT diary' })).new_name, 'PLOT diary');
    // the old name is free again
    const again = await t.ok('import_text', { name: 'Field notes', content: 'second' });
    src.second = again.source_id;
    // an agent's rename runs at once (notify)
    assert.equal((await t.ok('rename_source', { source_id: src.second, new_name: 'Second notes' }, AS_AGENT)).new_name, 'Second notes');
    assert.ok(await sourceNamed('Second notes'));
    assert.equal(await sourceNamed('Field notes'), undefined);
  });

  it('update_memo sets a source memo and clears it with null or "" (source.updated); an agent may (auto)', async () => {
    const seq = await t.headSeq();
    let r = await t.ok('update_memo', { source_id: src.diary, memo: 'kept by Ana' });
    assert.deepEqual(r, { source_id: src.diary, old_memo: null, new_memo: 'kept by Ana' });
    assert.equal((await sourceNamed('diary.txt')).memo, 'kept by Ana');
    r = await t.ok('update_memo', { source_id: src.diary, memo: null });
    assert.deepEqual([r.old_memo, r.new_memo], ['kept by Ana', null]);
    assert.equal((await sourceNamed('diary.txt')).memo, null);
    r = await t.ok('update_memo', { source_id: src.diary, memo: 'by the agent' }, AS_AGENT);
    assert.equal(r.new_memo, 'by the agent');
    r = await t.ok('update_memo', { source_id: src.diary, memo: '' });
    assert.deepEqual([r.old_memo, r.new_memo], ['by the agent', null]);
    const events = await t.events(seq, 'source.*');
    assert.deepEqual(
      events.map((e) => [e.event_type, e.payload.field, e.payload.old_value, e.payload.new_value]),
      [
        ['source.updated', 'memo', null, 'kept by Ana'],
        ['source.updated', 'memo', 'kept by Ana', null],
        ['source.updated', 'memo', null, 'by the agent'],
        ['source.updated', 'memo', 'by the agent', null],
      ],
    );
  });

  it('move_code moves a code into a category and out again (coding.code_moved); an agent may (notify)', async () => {
    let r = await t.ok('move_code', { code_id: code.pests, category_id: cat.nature });
    assert.deepEqual(r, { code_id: code.pests, old_category_id: null, new_category_id: cat.nature });
    const pests = async () => (await t.ok('get_code', { code_id: code.pests })).category_id;
    assert.equal(await pests(), cat.nature);
    const counts = async () => Object.fromEntries((await t.ok('list_categories')).categories.map((c: any) => [c.name, c.code_count]));
    assert.deepEqual(await counts(), { Nature: 1, People: 0 });
    r = await t.ok('move_code', { code_id: code.pests, category_id: cat.people }, AS_AGENT);
    assert.deepEqual([r.old_category_id, r.new_category_id], [cat.nature, cat.people]);
    const seq = await t.headSeq();
    r = await t.ok('move_code', { code_id: code.pests, category_id: null });
    assert.deepEqual([r.old_category_id, r.new_category_id], [cat.people, null]);
    assert.equal(await pests(), null);
    assert.deepEqual(await counts(), { Nature: 0, People: 0 });
    const events = await t.events(seq, 'coding.*');
    assert.deepEqual(
      events.map((e) => [e.event_type, e.payload.code_id]),
      [['coding.code_moved', code.pests]],
    );
  });

  it('remove_code removes one coding and keeps the text (coding.segment_uncoded); a second time is SEGMENT_NOT_FOUND', async () => {
    const slugs = 'Day 2. Slugs.';
    const diary = 'Day 1. Planted beans.\nDay 2. Slugs.\n';
    const a = await t.ok('apply_code', {
      code_id: code.pests,
      source_id: src.diary,
      start_pos: diary.indexOf(slugs),
      end_pos: diary.indexOf(slugs) + slugs.length,
    });
    const b = await t.ok('apply_code', { code_id: code.water, source_id: src.diary, start_pos: 0, end_pos: 6 });
    const seq = await t.headSeq();
    const r = await t.ok('remove_code', { segment_id: a.segment_id });
    assert.deepEqual(r, { removed: true, segment_id: a.segment_id, code_id: code.pests, source_id: src.diary, start_pos: a.start_pos, end_pos: a.end_pos });
    assert.deepEqual(
      (await t.ok('list_segments_for_source', { source_id: src.diary })).segments.map((s: any) => s.segment_id),
      [b.segment_id],
    );
    assert.equal((await t.ok('read_source_content', { source_id: src.diary })).content, diary);
    assert.deepEqual(
      (await t.events(seq, 'coding.*')).map((e) => [e.event_type, e.payload.segment_id]),
      [['coding.segment_uncoded', a.segment_id]],
    );
    await t.fails('remove_code', { segment_id: a.segment_id }, 'SEGMENT_NOT_FOUND');
    // an agent's remove_code runs at once (notify)
    assert.equal((await t.ok('remove_code', { segment_id: b.segment_id }, AS_AGENT)).removed, true);
    assert.equal((await t.ok('get_code', { code_id: code.pests })).segment_count, 0);
  });

  it("an agent's import_text and import_source wait for approval (202); approved, they run as the agent's call", async () => {
    const before = await snapshot();
    const text = await t.pending('import_text', { name: 'Agent notes', content: 'Proposed by the agent.' }, AS_AGENT);
    const file = await t.pending('import_source', { file_path: path.join(files, 'notes.md'), name: 'Agent markdown' }, AS_AGENT);
    assert.deepEqual(await snapshot(), before, 'nothing imported yet');
    const created = await t.approve(text);
    assert.deepEqual([created.name, created.type, created.length], ['Agent notes', 'text', 'Proposed by the agent.'.length]);
    assert.equal((await t.approve(file)).name, 'Agent markdown');
    assert.ok(await sourceNamed('Agent notes'));
    assert.ok(await sourceNamed('Agent markdown'));
  });

  it('delete_source deletes a source with its text and AV codings and its case links (source.deleted); an agent must wait (202)', async () => {
    // a source with two text codings, linked to a case
    const c1 = await t.ok('apply_code', { code_id: code.pests, source_id: src.md, start_pos: 0, end_pos: 7 });
    await t.ok('apply_code', { code_id: code.water, source_id: src.md, start_pos: 9, end_pos: 22 });
    const kase = (await t.ok('create_case', { name: 'Site 1' })).case_id;
    await t.ok('add_source_to_case', { case_id: kase, source_id: src.md });
    await t.ok('apply_av_code', { code_id: code.water, source_id: src.audio, start_ms: 0, end_ms: 1500 });

    const held = await t.pending('delete_source', { source_id: src.md }, AS_AGENT);
    assert.ok(await sourceNamed('Council notes'), 'not deleted before approval');

    const seq = await t.headSeq();
    const r = await t.approve(held);
    assert.deepEqual([r.deleted, r.source_id, r.name, r.type, r.segments_removed], [true, src.md, 'Council notes', 'text', 2]);
    assert.equal(await sourceNamed('Council notes'), undefined);
    await t.fails('list_segments_for_source', { source_id: src.md }, 'SOURCE_NOT_FOUND');
    await t.fails('read_source_content', { source_id: src.md }, 'SOURCE_NOT_FOUND');
    await t.fails('remove_code', { segment_id: c1.segment_id }, 'SEGMENT_NOT_FOUND');
    assert.equal((await t.ok('get_code', { code_id: code.pests })).segment_count, 0, 'the code stays, without the segment');
    const c = await t.ok('get_case', { case_id: kase });
    assert.deepEqual([c.source_count, c.sources], [0, []], 'the case no longer lists the source');
    assert.deepEqual(
      (await t.events(seq, 'source.*')).map((e) => [e.event_type, e.payload.source_id]),
      [['source.deleted', src.md]],
    );

    // the audio source: its AV coding goes with it
    const a = await t.ok('delete_source', { source_id: src.audio });
    assert.deepEqual([a.type, a.segments_removed], ['audio', 1]);
    await t.fails('delete_source', { source_id: src.audio }, 'SOURCE_NOT_FOUND');
    assert.equal((await t.ok('get_code', { code_id: code.water })).av_segment_count, 0);
  });

  it('has answered every error code it set out to', () => {
    for (const c of [
      'SOURCE_DUPLICATE_NAME',
      'SOURCE_NOT_FOUND',
      'SOURCE_IMPORT_FAILED',
      'SEGMENT_NOT_FOUND',
      'CODE_NOT_FOUND',
      'CATEGORY_NOT_FOUND',
      'INVALID_ARGUMENTS',
      'INVALID_POSITION',
    ])
      assert.ok(t.seen.has(c), c);
  });
});
