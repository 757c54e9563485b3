/**
 * src/domain/sources.ts through the pipeline: adding, reading, removing and filing sources, and the
 * folder tree, on a real sql.js project file.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { FIXED_ISO, openFixture, snapshot, type Fixture } from './projectFixture';

const RED = '#E15759';
const EMOJI = '\u{1F600}';

describe('domain/sources through the pipeline', () => {
  let fx: Fixture;
  beforeEach(async () => {
    fx = await openFixture();
  });
  afterEach(async () => {
    await fx.close();
  });

  describe('add_text_source and read_source_content', () => {
    it('stores the text exactly (line ends, astral characters) and reports its length in code points', async () => {
      const content = `line one\r\n  ${EMOJI} two\n\ttr\u00E8s\r\n`;
      const s = await fx.ok('add_text_source', { name: 'Exact', content, memo: 'm', origin: 'typed' });
      assert.equal(s.type, 'text');
      assert.equal(s.length, 25);
      assert.equal(s.memo, 'm');
      assert.equal(s.origin, 'typed');
      assert.equal(s.owner, 'alice');
      assert.equal(s.created_at, FIXED_ISO);
      assert.equal(s.folder_id, null);
      const page = await fx.ok('read_source_content', { source_id: s.source_id });
      assert.equal(page.content, content);
      assert.equal(page.total_length, 25);
      assert.equal(page.has_more, false);
    });

    it('pages by code points: following end_pos as the next start_pos rebuilds the text', async () => {
      const content = `ab${EMOJI}cd${EMOJI}${EMOJI}ef\u00E9`; // 10 code points
      const s = await fx.ok('add_text_source', { name: 'Paged', content });
      const pages: string[] = [];
      let start = 0;
      for (let guard = 0; guard < 20; guard++) {
        const p = await fx.ok('read_source_content', { source_id: s.source_id, start_pos: start, max_length: 3 });
        assert.equal(p.start_pos, start);
        pages.push(p.content);
        if (!p.has_more) break;
        assert.equal(p.end_pos, start + 3);
        start = p.end_pos;
      }
      assert.deepEqual(pages, [`ab${EMOJI}`, `cd${EMOJI}`, `${EMOJI}ef`, '\u00E9']);
      assert.equal(pages.join(''), content);
    });

    it('reads a window and rejects start_pos past the end or end_pos before start_pos', async () => {
      const s = await fx.ok('add_text_source', { name: 'W', content: 'hello world' });
      const p = await fx.ok('read_source_content', { source_id: s.source_id, start_pos: 6, end_pos: 99 });
      assert.equal(p.content, 'world');
      assert.equal(p.end_pos, 11);
      const atEnd = await fx.ok('read_source_content', { source_id: s.source_id, start_pos: 11 });
      assert.equal(atEnd.content, '');
      assert.equal(atEnd.has_more, false);
      await fx.fails('read_source_content', { source_id: s.source_id, start_pos: 12 }, 'INVALID_POSITION');
      await fx.fails('read_source_content', { source_id: s.source_id, start_pos: 5, end_pos: 4 }, 'INVALID_POSITION');
      await fx.fails('read_source_content', { source_id: 999 }, 'SOURCE_NOT_FOUND');
    });

    it('list_sources filters by type', async () => {
      await fx.ok('add_text_source', { name: 'T', content: 'x' });
      const mp3 = path.join(fx.dir, 'a.mp3');
      fs.writeFileSync(mp3, 'not really audio');
      await fx.ok('import_file_source', { file_path: mp3 });
      assert.equal((await fx.ok('list_sources')).count, 2);
      assert.deepEqual(
        (await fx.ok('list_sources', { source_type: 'audio' })).sources.map((s: { name: string }) => s.name),
        ['a.mp3'],
      );
      assert.equal((await fx.ok('list_sources', { source_type: 'video' })).count, 0);
      await fx.fails('list_sources', { source_type: 'movie' }, 'INVALID_ARGUMENTS');
    });
  });

  describe('import_file_source', () => {
    it('imports a .txt file keeping its text and rejects a relative or missing path', async () => {
      const file = path.join(fx.dir, 'Field notes.txt');
      fs.writeFileSync(file, `Gr\u00FC\u00DFe ${EMOJI}\n`);
      const dry = await fx.ok('import_file_source', { file_path: file, dry_run: true });
      assert.equal(dry.dry_run, true);
      assert.equal(dry.would_import.name, 'Field notes.txt');
      assert.equal(dry.would_import.length, 8);
      assert.equal((await fx.ok('list_sources')).count, 0, 'a dry run writes nothing');
      const s = await fx.ok('import_file_source', { file_path: file });
      assert.equal(s.name, 'Field notes.txt');
      assert.equal(s.length, 8);
      assert.equal((await fx.ok('read_source_content', { source_id: s.source_id })).content, `Gr\u00FC\u00DFe ${EMOJI}\n`);
      await fx.fails('import_file_source', { file_path: 'relative/notes.txt' }, 'SOURCE_IMPORT_FAILED');
      await fx.fails('import_file_source', { file_path: path.join(fx.dir, 'missing.txt') }, 'SOURCE_IMPORT_FAILED');
      assert.equal((await fx.ok('list_sources')).count, 1);
    });
  });

  describe('remove_source', () => {
    it('previews without deleting, then deletes the source and its segments with confirm', async () => {
      const s = await fx.ok('add_text_source', { name: 'Doomed', content: 'hello world' });
      const keep = await fx.ok('add_text_source', { name: 'Keep', content: 'hello world' });
      const c = await fx.ok('create_code', { name: 'C', color: RED });
      await fx.ok('batch_apply_codes', {
        operations: [
          { code_id: c.code_id, source_id: s.source_id, start_position: 0, end_position: 5 },
          { code_id: c.code_id, source_id: s.source_id, start_position: 6, end_position: 11 },
          { code_id: c.code_id, source_id: keep.source_id, start_position: 0, end_position: 5 },
        ],
      });
      const before = await snapshot(fx);
      for (const args of [{ source_id: s.source_id }, { source_id: s.source_id, confirm: false }]) {
        const preview = await fx.ok('remove_source', args);
        assert.equal(preview.preview, true);
        assert.equal(preview.removed, false);
        assert.equal(preview.source_name, 'Doomed');
        assert.equal(preview.source_type, 'text');
        assert.equal(preview.coded_segments_count, 2);
      }
      assert.deepEqual(await snapshot(fx), before, 'a preview changes nothing');

      const r = await fx.ok('remove_source', { source_id: s.source_id, confirm: true });
      assert.equal(r.removed, true);
      assert.equal(r.segments_removed, 2);
      await fx.fails('read_source_content', { source_id: s.source_id }, 'SOURCE_NOT_FOUND');
      await fx.fails('list_segments_for_source', { source_id: s.source_id }, 'SOURCE_NOT_FOUND');
      assert.equal((await fx.ok('get_code', { code_id: c.code_id })).segment_count, 1);
      assert.equal((await fx.ok('list_segments_for_source', { source_id: keep.source_id })).count, 1);
      // the name is free again
      await fx.ok('add_text_source', { name: 'Doomed', content: 'again' });
      await fx.fails('remove_source', { source_id: 999, confirm: true }, 'SOURCE_NOT_FOUND');
      await fx.fails('remove_source', { source_id: 999 }, 'SOURCE_NOT_FOUND');
    });
  });

  describe('folders and move_source_to_folder', () => {
    it('moves a source into a folder and back to the root with null, 0, "0" or omission', async () => {
      const s = await fx.ok('add_text_source', { name: 'S', content: 'x' });
      const f = await fx.ok('create_folder', { name: 'Wave 1' });
      for (const root of [{ folder_id: null }, { folder_id: 0 }, { folder_id: '0' }, {}]) {
        const into = await fx.ok('move_source_to_folder', { source_id: s.source_id, folder_id: f.folder_id });
        assert.deepEqual(into, { source_id: s.source_id, old_folder_id: null, new_folder_id: f.folder_id });
        const folders = await fx.ok('list_folders');
        assert.equal(folders.folders[0].source_count, 1);
        assert.equal(folders.root_source_count, 0);
        const out = await fx.ok('move_source_to_folder', { source_id: s.source_id, ...root });
        assert.deepEqual(out, { source_id: s.source_id, old_folder_id: f.folder_id, new_folder_id: null }, JSON.stringify(root));
        assert.equal((await fx.ok('list_sources')).sources[0].folder_id, null);
      }
      await fx.fails('move_source_to_folder', { source_id: s.source_id, folder_id: 999 }, 'FOLDER_NOT_FOUND');
      await fx.fails('move_source_to_folder', { source_id: 999, folder_id: f.folder_id }, 'SOURCE_NOT_FOUND');
    });

    it('deletes only empty folders (no sources, no sub-folders)', async () => {
      const parent = await fx.ok('create_folder', { name: 'P' });
      const child = await fx.ok('create_folder', { name: 'C', parent_id: parent.folder_id });
      const s = await fx.ok('add_text_source', { name: 'S', content: 'x' });
      await fx.ok('move_source_to_folder', { source_id: s.source_id, folder_id: child.folder_id });
      await fx.fails('delete_folder', { folder_id: parent.folder_id }, 'FOLDER_NOT_EMPTY');
      await fx.fails('delete_folder', { folder_id: child.folder_id }, 'FOLDER_NOT_EMPTY');
      await fx.ok('move_source_to_folder', { source_id: s.source_id });
      const d = await fx.ok('delete_folder', { folder_id: child.folder_id });
      assert.deepEqual(d, { deleted: true, folder_id: child.folder_id, name: 'C' });
      await fx.ok('delete_folder', { folder_id: parent.folder_id });
      assert.equal((await fx.ok('list_folders')).count, 0);
      await fx.fails('delete_folder', { folder_id: parent.folder_id }, 'FOLDER_NOT_FOUND');
    });

    it('list_folders reports the tree, paths and depths', async () => {
      const a = await fx.ok('create_folder', { name: 'b-second' });
      const b = await fx.ok('create_folder', { name: 'a-first' });
      await fx.ok('create_folder', { name: 'inner', parent_id: a.folder_id });
      assert.equal(b.parent_id, null);
      const list = await fx.ok('list_folders');
      assert.deepEqual(
        list.folders.map((f: { path: string; depth: number }) => [f.path, f.depth]),
        [
          ['a-first', 0],
          ['b-second', 0],
          ['b-second/inner', 1],
        ],
      );
      assert.equal(list.tree.length, 2);
      assert.equal(list.tree[1].children[0].name, 'inner');
    });
  });

  describe('suggest_source_metadata', () => {
    it('records a hint without changing the source', async () => {
      const s = await fx.ok('add_text_source', { name: 'S', content: 'hola' });
      const before = await fx.ok('list_sources');
      const r = await fx.ok('suggest_source_metadata', { source_id: s.source_id, language: 'es', topics: ['greeting'], organization_suggestion: 'Wave 1' });
      assert.equal(r.status, 'recorded');
      assert.deepEqual(r.suggested, { language: 'es', topics: ['greeting'], organization_suggestion: 'Wave 1' });
      assert.deepEqual(await fx.ok('list_sources'), before);
      const hints = fx.handle.store.all<{ source_id: number; language: string; owner: string }>('SELECT source_id, language, owner FROM source_metadata_hints');
      assert.deepEqual(hints, [{ source_id: s.source_id, language: 'es', owner: 'alice' }]);
      await fx.fails('suggest_source_metadata', { source_id: 999, language: 'es' }, 'SOURCE_NOT_FOUND');
    });
  });
});
