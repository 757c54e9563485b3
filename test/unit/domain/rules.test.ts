/**
 * The rules of the HTTP tool interface, section 2 (shared/spec/http-tool-interface.md):
 *   1. code and category names are unique (DUPLICATE_NAME);
 *   2. source names are unique in the project (SOURCE_DUPLICATE_NAME);
 *   3. folder names are unique within their parent, 1 to 255 characters, no slash;
 *   4. a code cannot be merged into itself (MERGE_SAME_CODE).
 * (Rule 5, AV time ranges, has no tool among the 28 yet.)
 *
 * First the pure helpers of src/domain/rules.ts, then every rule through the real pipeline over a real
 * sql.js project file.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ToolError } from '../../../src/core/errors';
import { cleanFolderName, cleanName, COLOR_PATTERN, nameKey } from '../../../src/domain/rules';
import { openFixture, snapshot, type Fixture } from './projectFixture';

const RED = '#E15759';
const BLUE = '#4E79A7';
/** "Ärger" with the umlaut precomposed (U+00C4) and decomposed (A + U+0308). */
const AERGER_NFC = '\u00C4rger';
const AERGER_NFD = 'A\u0308rger';
const CLEF = '\u{1D11E}';

function throwsCode(fn: () => unknown, code: string): void {
  assert.throws(fn, (e: unknown) => e instanceof ToolError && e.code === code);
}

describe('domain/rules (pure helpers)', () => {
  it('nameKey folds case (also non-ASCII), trims and NFC-normalises', () => {
    assert.equal(nameKey('Trust'), nameKey('trust'));
    assert.equal(nameKey('  TRUST \t'), 'trust');
    assert.equal(nameKey(AERGER_NFC), nameKey('\u00E4rger'));
    assert.equal(nameKey(AERGER_NFD), nameKey('\u00E4rger'));
    assert.equal(nameKey('\u00C9COLE'), '\u00E9cole');
    assert.notEqual(nameKey('Trust'), nameKey('Trusting'));
    assert.notEqual(nameKey('Arger'), nameKey(AERGER_NFC), 'diacritics are not stripped');
  });

  it('cleanName trims, NFC-normalises and bounds the length in code points', () => {
    assert.equal(cleanName('  Trust  ', 100, 'code', 'INVALID_ARGUMENTS'), 'Trust');
    assert.equal(cleanName(AERGER_NFD, 100, 'code', 'INVALID_ARGUMENTS'), AERGER_NFC);
    assert.equal(cleanName('x'.repeat(100), 100, 'code', 'INVALID_ARGUMENTS').length, 100);
    // 100 astral characters are 200 UTF-16 units but 100 code points: allowed
    assert.equal(cleanName(CLEF.repeat(100), 100, 'code', 'INVALID_ARGUMENTS'), CLEF.repeat(100));
    throwsCode(() => cleanName('x'.repeat(101), 100, 'code', 'INVALID_ARGUMENTS'), 'INVALID_ARGUMENTS');
    throwsCode(() => cleanName(CLEF.repeat(101), 100, 'code', 'INVALID_ARGUMENTS'), 'INVALID_ARGUMENTS');
    throwsCode(() => cleanName('', 100, 'code', 'INVALID_ARGUMENTS'), 'INVALID_ARGUMENTS');
    throwsCode(() => cleanName(' \t\n ', 100, 'code', 'INVALID_ARGUMENTS'), 'INVALID_ARGUMENTS');
    throwsCode(() => cleanName('a\u0000b', 100, 'code', 'INVALID_ARGUMENTS'), 'INVALID_ARGUMENTS');
    throwsCode(() => cleanName('', 100, 'folder', 'FOLDER_NOT_CREATED'), 'FOLDER_NOT_CREATED');
    // an unpaired surrogate cannot be stored as UTF-8: it becomes U+FFFD
    assert.equal(cleanName('a\uD83Db', 100, 'code', 'INVALID_ARGUMENTS'), 'a\uFFFDb');
  });

  it('cleanFolderName enforces 1-255 characters and no slash, with the caller-chosen error code', () => {
    assert.equal(cleanFolderName('a', 'FOLDER_NOT_CREATED'), 'a');
    assert.equal(cleanFolderName('f'.repeat(255), 'FOLDER_NOT_CREATED').length, 255);
    throwsCode(() => cleanFolderName('f'.repeat(256), 'FOLDER_NOT_CREATED'), 'FOLDER_NOT_CREATED');
    throwsCode(() => cleanFolderName('', 'FOLDER_NOT_CREATED'), 'FOLDER_NOT_CREATED');
    throwsCode(() => cleanFolderName('a/b', 'FOLDER_NOT_CREATED'), 'FOLDER_NOT_CREATED');
    throwsCode(() => cleanFolderName('/', 'FOLDER_RENAME_FAILED'), 'FOLDER_RENAME_FAILED');
  });

  it('COLOR_PATTERN accepts #RRGGBB only', () => {
    assert.ok(COLOR_PATTERN.test('#4E79A7'));
    assert.ok(COLOR_PATTERN.test('#abcdef'));
    for (const bad of ['4E79A7', '#4E79A', '#4E79A7F', '#GGGGGG', 'red', '#4e79a7 ']) assert.ok(!COLOR_PATTERN.test(bad), bad);
  });
});

describe('spec section 2 rules through the pipeline', () => {
  let fx: Fixture;
  beforeEach(async () => {
    fx = await openFixture();
  });
  afterEach(async () => {
    await fx.close();
  });

  describe('rule 1: code names are unique (case-insensitive, trimmed)', () => {
    it('rejects a duplicate differing only in ASCII case or surrounding space', async () => {
      const trust = await fx.ok('create_code', { name: 'Trust', color: RED });
      for (const name of ['Trust', 'trust', 'TRUST', '  Trust  ', 'tRuSt\t']) {
        const out = await fx.fails('create_code', { name, color: BLUE }, 'DUPLICATE_NAME');
        if (!out.envelope.success) assert.match(out.envelope.error, /Trust/);
      }
      const list = await fx.ok('list_codes');
      assert.equal(list.count, 1);
      assert.equal(list.codes[0].code_id, trust.code_id);
    });

    it('rejects a duplicate differing in non-ASCII case or Unicode normalisation', async () => {
      await fx.ok('create_code', { name: AERGER_NFC, color: RED });
      await fx.fails('create_code', { name: '\u00E4rger', color: BLUE }, 'DUPLICATE_NAME');
      await fx.fails('create_code', { name: '\u00C4RGER', color: BLUE }, 'DUPLICATE_NAME');
      await fx.fails('create_code', { name: AERGER_NFD, color: BLUE }, 'DUPLICATE_NAME');
      await fx.fails('create_code', { name: 'a\u0308rger', color: BLUE }, 'DUPLICATE_NAME');
      // a different word is not a duplicate
      await fx.ok('create_code', { name: 'Arger', color: BLUE });
      assert.equal((await fx.ok('list_codes')).count, 2);
    });

    it('stores the trimmed name', async () => {
      const c = await fx.ok('create_code', { name: '  Hope \n', color: RED });
      assert.equal(c.name, 'Hope');
      assert.equal((await fx.ok('get_code', { code_id: c.code_id })).name, 'Hope');
    });

    it('rejects empty, whitespace-only and over-long names (1-100 characters)', async () => {
      await fx.fails('create_code', { name: '', color: RED }, 'INVALID_ARGUMENTS');
      await fx.fails('create_code', { name: '   ', color: RED }, 'INVALID_ARGUMENTS');
      await fx.fails('create_code', { name: 'n'.repeat(101), color: RED }, 'INVALID_ARGUMENTS');
      await fx.ok('create_code', { name: 'n'.repeat(100), color: RED });
      await fx.ok('create_code', { name: CLEF.repeat(100), color: RED });
      assert.equal((await fx.ok('list_codes')).count, 2);
    });

    it('rename_code enforces the same uniqueness but may change the case of the code itself', async () => {
      const a = await fx.ok('create_code', { name: 'Trust', color: RED });
      const b = await fx.ok('create_code', { name: AERGER_NFC, color: BLUE });
      await fx.fails('rename_code', { code_id: b.code_id, new_name: ' trust ' }, 'DUPLICATE_NAME');
      await fx.fails('rename_code', { code_id: a.code_id, new_name: '\u00E4RGER' }, 'DUPLICATE_NAME');
      await fx.fails('rename_code', { code_id: a.code_id, new_name: '  ' }, 'INVALID_ARGUMENTS');
      const r = await fx.ok('rename_code', { code_id: a.code_id, new_name: 'TRUST' });
      assert.deepEqual(r, { code_id: a.code_id, old_name: 'Trust', new_name: 'TRUST' });
      // the old key is released: a new code may take a name only the renamed code used to clash with
      await fx.ok('rename_code', { code_id: a.code_id, new_name: 'Confidence' });
      await fx.ok('create_code', { name: 'trust', color: RED });
      const names = (await fx.ok('list_codes')).codes.map((c: { name: string }) => c.name).sort();
      assert.deepEqual(names, ['Confidence', 'trust', AERGER_NFC].sort());
    });
  });

  describe('rule 1: category names are unique (case-insensitive, trimmed)', () => {
    it('rejects duplicates, including non-ASCII case variants, at any nesting level', async () => {
      const root = await fx.ok('create_category', { name: 'Emotions' });
      await fx.fails('create_category', { name: 'emotions' }, 'DUPLICATE_NAME');
      await fx.fails('create_category', { name: ' EMOTIONS ' }, 'DUPLICATE_NAME');
      await fx.ok('create_category', { name: AERGER_NFC, parent_id: root.category_id });
      await fx.fails('create_category', { name: '\u00E4rger' }, 'DUPLICATE_NAME');
      await fx.fails('create_category', { name: AERGER_NFD, parent_id: root.category_id }, 'DUPLICATE_NAME');
      await fx.fails('create_category', { name: '' }, 'INVALID_ARGUMENTS');
      await fx.fails('create_category', { name: 'c'.repeat(101) }, 'INVALID_ARGUMENTS');
      assert.equal((await fx.ok('list_categories')).count, 2);
    });

    it('stores the trimmed name and rejects an unknown parent', async () => {
      const c = await fx.ok('create_category', { name: '  Place  ' });
      assert.equal(c.name, 'Place');
      await fx.fails('create_category', { name: 'Orphan', parent_id: 999 }, 'CATEGORY_NOT_FOUND');
    });
  });

  describe('rule 2: source names are unique in the project', () => {
    it('add_text_source rejects an exact, a space-padded and a differently normalised duplicate', async () => {
      await fx.ok('add_text_source', { name: 'Interview 1', content: 'one' });
      await fx.fails('add_text_source', { name: 'Interview 1', content: 'two' }, 'SOURCE_DUPLICATE_NAME');
      await fx.fails('add_text_source', { name: '  Interview 1 ', content: 'two' }, 'SOURCE_DUPLICATE_NAME');
      await fx.ok('add_text_source', { name: `${AERGER_NFC} im Garten`, content: 'x' });
      await fx.fails('add_text_source', { name: `${AERGER_NFD} im Garten`, content: 'y' }, 'SOURCE_DUPLICATE_NAME');
      const list = await fx.ok('list_sources');
      assert.equal(list.count, 2);
      assert.deepEqual(list.sources.map((s: { name: string }) => s.name).sort(), [`${AERGER_NFC} im Garten`, 'Interview 1'].sort());
    });

    it('compares source names case-insensitively, as code names (add, import_text, rename_source)', async () => {
      const one = await fx.ok('add_text_source', { name: 'Interview 1', content: 'one' });
      await fx.fails('add_text_source', { name: 'INTERVIEW 1', content: 'two' }, 'SOURCE_DUPLICATE_NAME');
      await fx.fails('import_text', { name: 'interview 1 ', content: 'two' }, 'SOURCE_DUPLICATE_NAME');
      await fx.ok('add_text_source', { name: 'Ärger', content: 'x' });
      await fx.fails('add_text_source', { name: 'ÄRGER', content: 'y' }, 'SOURCE_DUPLICATE_NAME');
      const two = await fx.ok('add_text_source', { name: 'Interview 2', content: 'two' });
      await fx.fails('rename_source', { source_id: two.source_id, new_name: 'interview 1' }, 'SOURCE_DUPLICATE_NAME');
      // a source may change the case of its own name
      assert.equal((await fx.ok('rename_source', { source_id: one.source_id, new_name: 'INTERVIEW 1' })).new_name, 'INTERVIEW 1');
      assert.equal((await fx.ok('list_sources')).count, 3);
    });

    it('import_file_source (and its dry run) rejects a name already taken', async () => {
      const file = path.join(fx.dir, 'Interview 2.txt');
      fs.writeFileSync(file, 'file text');
      await fx.ok('add_text_source', { name: 'Interview 2.txt', content: 'typed' });
      await fx.fails('import_file_source', { file_path: file }, 'SOURCE_DUPLICATE_NAME');
      await fx.fails('import_file_source', { file_path: file, dry_run: true }, 'SOURCE_DUPLICATE_NAME');
      const imported = await fx.ok('import_file_source', { file_path: file, name: 'Interview 2 (file)' });
      assert.equal(imported.name, 'Interview 2 (file)');
      assert.equal((await fx.ok('list_sources')).count, 2);
    });

    it('rejects empty and over-long source names (255 characters at most)', async () => {
      await fx.fails('add_text_source', { name: '   ', content: 'x' }, 'INVALID_ARGUMENTS');
      await fx.fails('add_text_source', { name: 's'.repeat(256), content: 'x' }, 'INVALID_ARGUMENTS');
      await fx.ok('add_text_source', { name: 's'.repeat(255), content: 'x' });
    });
  });

  describe('rule 3: folder names are 1-255 characters, contain no slash, and are unique within their parent', () => {
    it('accepts 1 and 255 characters (counted in code points) and rejects 0 and 256', async () => {
      await fx.ok('create_folder', { name: 'a' });
      await fx.ok('create_folder', { name: 'f'.repeat(255) });
      await fx.ok('create_folder', { name: CLEF.repeat(255) });
      await fx.fails('create_folder', { name: '' }, 'FOLDER_NOT_CREATED');
      await fx.fails('create_folder', { name: '   ' }, 'FOLDER_NOT_CREATED');
      await fx.fails('create_folder', { name: 'f'.repeat(256) }, 'FOLDER_NOT_CREATED');
      await fx.fails('create_folder', { name: CLEF.repeat(256) }, 'FOLDER_NOT_CREATED');
      assert.equal((await fx.ok('list_folders')).count, 3);
    });

    it('rejects a slash anywhere in the name', async () => {
      for (const name of ['a/b', '/a', 'a/', '/']) await fx.fails('create_folder', { name }, 'FOLDER_NOT_CREATED');
      assert.equal((await fx.ok('list_folders')).count, 0);
    });

    it('rejects a duplicate within the same parent but allows the same name under different parents', async () => {
      const a = await fx.ok('create_folder', { name: 'Wave 1' });
      const b = await fx.ok('create_folder', { name: 'Wave 2' });
      await fx.fails('create_folder', { name: 'Wave 1' }, 'FOLDER_NOT_CREATED');
      await fx.fails('create_folder', { name: ' Wave 1 ' }, 'FOLDER_NOT_CREATED');
      const inA = await fx.ok('create_folder', { name: 'Transcripts', parent_id: a.folder_id });
      const inB = await fx.ok('create_folder', { name: 'Transcripts', parent_id: b.folder_id });
      const atRoot = await fx.ok('create_folder', { name: 'Transcripts' });
      assert.equal(new Set([inA.folder_id, inB.folder_id, atRoot.folder_id]).size, 3);
      await fx.fails('create_folder', { name: 'Transcripts', parent_id: a.folder_id }, 'FOLDER_NOT_CREATED');
      const list = await fx.ok('list_folders');
      assert.equal(list.count, 5);
      assert.deepEqual(list.folders.map((f: { path: string }) => f.path).sort(), [
        'Transcripts',
        'Wave 1',
        'Wave 1/Transcripts',
        'Wave 2',
        'Wave 2/Transcripts',
      ]);
    });

    it('rejects an unknown parent with FOLDER_NOT_CREATED', async () => {
      await fx.fails('create_folder', { name: 'x', parent_id: 404 }, 'FOLDER_NOT_CREATED');
    });

    it("rename_folder applies the same rules within the folder's parent", async () => {
      const a = await fx.ok('create_folder', { name: 'A' });
      const b = await fx.ok('create_folder', { name: 'B' });
      const child = await fx.ok('create_folder', { name: 'C', parent_id: a.folder_id });
      await fx.fails('rename_folder', { folder_id: b.folder_id, new_name: 'A' }, 'FOLDER_RENAME_FAILED');
      await fx.fails('rename_folder', { folder_id: b.folder_id, new_name: 'x/y' }, 'FOLDER_RENAME_FAILED');
      await fx.fails('rename_folder', { folder_id: b.folder_id, new_name: '' }, 'FOLDER_RENAME_FAILED');
      await fx.fails('rename_folder', { folder_id: b.folder_id, new_name: 'r'.repeat(256) }, 'FOLDER_RENAME_FAILED');
      await fx.fails('rename_folder', { folder_id: 999, new_name: 'Z' }, 'FOLDER_NOT_FOUND');
      // "C" lives under A, so the root folder B may take that name, and C may take "B" under A
      const r = await fx.ok('rename_folder', { folder_id: b.folder_id, new_name: 'C' });
      assert.equal(r.name, 'C');
      assert.equal(r.old_name, 'B');
      await fx.ok('rename_folder', { folder_id: child.folder_id, new_name: 'B' });
      // renaming a folder to its own name is not a clash
      await fx.ok('rename_folder', { folder_id: a.folder_id, new_name: 'A' });
      const paths = (await fx.ok('list_folders')).folders.map((f: { path: string }) => f.path).sort();
      assert.deepEqual(paths, ['A', 'A/B', 'C']);
    });
  });

  describe('rule 4: a code cannot be merged into itself', () => {
    it('fails with MERGE_SAME_CODE and changes nothing, also when one id is a numeric string', async () => {
      const c = await fx.ok('create_code', { name: 'Trust', color: RED, memo: 'm' });
      const src = await fx.ok('add_text_source', { name: 'S', content: 'hello world' });
      await fx.ok('batch_apply_codes', { operations: [{ code_id: c.code_id, source_id: src.source_id, start_position: 0, end_position: 5 }] });
      const before = await snapshot(fx);
      await fx.fails('merge_codes', { source_code_id: c.code_id, target_code_id: c.code_id }, 'MERGE_SAME_CODE');
      await fx.fails('merge_codes', { source_code_id: String(c.code_id), target_code_id: c.code_id }, 'MERGE_SAME_CODE');
      assert.deepEqual(await snapshot(fx), before);
    });
  });
});
