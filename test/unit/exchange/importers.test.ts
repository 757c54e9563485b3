/**
 * The code_list, csv, rqda, qualcoder and taguette importers (src/exchange/importers/) through import_data and
 * the one tool pipeline, on real project files: the corpus files are read from ../shared/corpus (never copied);
 * expected values come from the foreign databases themselves, queried here with sql.js, or are worked out by
 * hand. Also: merging by name, soft deletes, one case.attributes_set event per case, and all-or-nothing imports
 * (a broken file, or a failure while writing, leaves the project as it was).
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse } from 'parse5';
import { z } from 'zod';
import { ToolPipeline } from '../../../src/agent/pipeline';
import { ALL_TOOLS, headlessHost } from '../../../src/cli/compose';
import { setCaseAttributes } from '../../../src/domain/cases';
import type { DomainEvent } from '../../../src/domain/events';
import { applyImportPlan } from '../../../src/exchange/importers/applyPlan';
import { emptyPlan, type ImportPlan } from '../../../src/exchange/importers/plan';
import { taguetteHtmlToText, taguetteTagPrefixes } from '../../../src/exchange/importers/taguette';
import { loadSqlJs } from '../../../src/store/sqljs';
import { defineTool } from '../../../src/tools/defineTool';
import { ALICE, FIXED_ISO, fixedClock, openFixture, snapshot, storedEvents, type Fixture } from '../domain/projectFixture';
import { requireCorpus } from '../../helpers/serverProcess';
import { query, type Row } from './sqliteFixtures';

/** Copies the SQLite file `from` to `to` after running `statements` on it (in memory). */
async function modifiedCopy(from: string, to: string, statements: string): Promise<void> {
  const SQL = await loadSqlJs();
  const db = new SQL.Database(fs.readFileSync(from));
  try {
    db.exec(statements);
    fs.writeFileSync(to, db.export());
  } finally {
    db.close();
  }
}

/** Every coded segment of the project, through list_segments (paged). */
async function allSegments(fx: Fixture): Promise<Row[]> {
  const out: Row[] = [];
  for (let offset = 0; ;) {
    const page = await fx.ok('list_segments', { limit: 5000, offset });
    out.push(...page.segments);
    if (!page.has_more) return out;
    offset += page.count;
  }
}

/** Codes by name: {category name or null, colour, memo, owner}. */
async function codesByName(fx: Fixture): Promise<Map<string, Row>> {
  return new Map((await fx.ok('list_codes')).codes.map((c: Row) => [c.name, c]));
}

/** Categories by name, with their parent's name. */
async function categoriesByName(fx: Fixture): Promise<Map<string, Row & { parent_name: string | null }>> {
  const cats: Row[] = (await fx.ok('list_categories')).categories;
  const names = new Map(cats.map((c) => [c.category_id, c.name]));
  return new Map(cats.map((c) => [c.name, { ...c, parent_name: c.parent_id === null ? null : (names.get(c.parent_id) ?? '?') }]));
}

/** Every case with its attributes ({name: {type, value}}) and its linked sources' and ranges' names. */
async function casesInFull(fx: Fixture): Promise<Map<string, Row>> {
  const out = new Map<string, Row>();
  for (const c of (await fx.ok('list_cases')).cases) {
    const d = await fx.ok('get_case', { case_id: c.case_id });
    out.set(c.name, {
      attributes: Object.fromEntries(d.attributes.map((a: Row) => [a.name, { type: a.type, value: a.value }])),
      sources: d.sources.map((s: Row) => s.name).sort(),
      ranges: d.segments.map((s: Row) => ({ source: s.source_name, start_pos: s.start_pos, end_pos: s.end_pos, text: s.text })),
    });
  }
  return out;
}

/** Text content of an HTML fragment (what a reader sees of a Taguette snippet). */
function htmlText(html: string): string {
  let out = '';
  const visit = (n: any) => {
    if (n.nodeName === '#text') out += n.value;
    for (const c of n.childNodes ?? []) visit(c);
  };
  visit(parse(html));
  return out;
}

const squash = (s: string) => s.replace(/\s+/g, ' ').trim();

describe('exchange importers through import_data', function () {
  this.timeout(120_000);
  let fx: Fixture;
  beforeEach(async () => {
    fx = await openFixture();
  });
  afterEach(async () => {
    await fx.close();
  });

  const write = (name: string, content: string | Buffer) => {
    const file = path.join(fx.dir, name);
    fs.writeFileSync(file, content);
    return file;
  };

  describe('code_list', () => {
    const LIST = [
      '# Codebook of the garden study',
      'Relationships',
      '\t- Trust',
      '\t- Conflict',
      '\t\tOpen conflict',
      '\t\tHidden conflict',
      'Place',
      '  * Allotment',
      '  * Home garden',
      '    Balcony',
      '',
      'Uncategorised idea',
      'Food',
      '    Sharing',
      '    Selling',
    ].join('\r\n');

    it('turns an indented list into nested categories and codes (tabs, 2 and 4 spaces, bullets, comments, CRLF)', async () => {
      const r = await fx.ok('import_data', { format: 'code_list', source_path: write('codes.txt', `\uFEFF${LIST}\r\n`) });
      assert.equal(r.created.categories, 5);
      assert.equal(r.created.codes, 8);
      const cats = await categoriesByName(fx);
      assert.deepEqual(Object.fromEntries([...cats].map(([n, c]) => [n, c.parent_name])), {
        Relationships: null,
        Conflict: 'Relationships',
        Place: null,
        'Home garden': 'Place',
        Food: null,
      });
      const codes = await codesByName(fx);
      assert.deepEqual(Object.fromEntries([...codes].map(([n, c]) => [n, c.category?.name ?? null])), {
        Trust: 'Relationships',
        'Open conflict': 'Conflict',
        'Hidden conflict': 'Conflict',
        Allotment: 'Place',
        Balcony: 'Home garden',
        'Uncategorised idea': null,
        Sharing: 'Food',
        Selling: 'Food',
      });
      for (const c of codes.values()) assert.match(c.color, /^#[0-9A-F]{6}$/);
      assert.equal(new Set([...codes.values()].map((c) => c.color)).size, 8, 'new codes take distinct palette colours');
    });

    it('merges by name into an existing codebook, and a second import changes nothing', async () => {
      const trust = await fx.ok('create_code', { name: 'trust', color: '#112233' });
      const place = await fx.ok('create_category', { name: 'PLACE' });
      const file = write('codes.txt', LIST);
      const r = await fx.ok('import_data', { format: 'code_list', source_path: file });
      assert.equal(r.reused.codes, 1);
      assert.equal(r.reused.categories, 1);
      assert.equal(r.codes_moved, 1, 'the uncategorised "trust" goes into Relationships');
      assert.equal(r.created.codes, 7);
      assert.equal(r.created.categories, 4);
      const codes = await codesByName(fx);
      assert.equal(codes.get('trust')!.code_id, trust.code_id);
      assert.equal(codes.get('trust')!.color, '#112233', 'an existing code keeps its colour');
      assert.equal(codes.get('trust')!.category.name, 'Relationships');
      assert.equal(codes.get('Allotment')!.category.id, place.category_id);
      const again = await fx.ok('import_data', { format: 'code_list', source_path: file });
      assert.deepEqual(again.created, { categories: 0, codes: 0, folders: 0, sources: 0, segments: 0, cases: 0 });
      assert.equal((await fx.ok('list_codes')).count, 8);
    });

    it('IMPORT_FAILED for a list without names or a binary file, writing nothing', async () => {
      await fx.ok('create_code', { name: 'Existing', color: '#000000' });
      const before = await snapshot(fx);
      await fx.fails('import_data', { format: 'code_list', source_path: write('comments.txt', '# only a comment\n\n   \n') }, 'IMPORT_FAILED');
      await fx.fails(
        'import_data',
        { format: 'code_list', source_path: write('binary.txt', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0xff, 0xfe])) },
        'IMPORT_FAILED',
      );
      assert.deepEqual(await snapshot(fx), before);
    });
  });

  describe('csv (survey)', () => {
    it('survey456: one case per row, typed attributes, the free-text column as sources linked to their cases', async function () {
      const dir = requireCorpus(this, 'surveys');
      const r = await fx.ok('import_data', { format: 'csv', source_path: path.join(dir, 'qualcoder_survey456.csv') });
      assert.equal(r.created.cases, 3);
      assert.equal(r.created.sources, 3);
      assert.equal(r.created.folders, 1);
      const cases = await casesInFull(fx);
      assert.deepEqual([...cases.keys()], ['ID4', 'ID5', 'ID6']);
      assert.deepEqual(cases.get('ID4')!.attributes, {
        Age: { type: 'number', value: 24 },
        Gender: { type: 'text', value: 'f' },
        Interest: { type: 'text', value: 'shopping' },
      });
      assert.deepEqual(
        cases.get('ID5')!.attributes,
        { Gender: { type: 'text', value: 'm' }, Interest: { type: 'text', value: 'golf' } },
        'the empty Age cell sets nothing',
      );
      assert.deepEqual(cases.get('ID6')!.attributes.Age, { type: 'number', value: 67 });
      for (const id of ['ID4', 'ID5', 'ID6']) assert.deepEqual(cases.get(id)!.sources, [`${id} - freetext`]);
      const folders = (await fx.ok('list_folders')).folders;
      assert.deepEqual(
        folders.map((f: Row) => [f.name, f.source_count]),
        [['qualcoder_survey456', 3]],
      );
      const sources = (await fx.ok('list_sources')).sources as Row[];
      const text = async (name: string) => (await fx.ok('read_source_content', { source_id: sources.find((s) => s.name === name)!.source_id })).content;
      assert.equal(await text('ID4 - freetext'), 'I wanted to do some more studies but after leaving school and start working, I really lost the interest.');
      assert.equal(
        await text('ID5 - freetext'),
        'I needed to upskill in some areas for my work. But work and family life have prevented me from having enough time.',
      );
      assert.ok((await text('ID6 - freetext')).endsWith('doing my gardening. '), 'the answer is kept exactly, its trailing space too');
      // one event per case for its attributes
      const attributeEvents = storedEvents(fx.handle).filter((e) => e.event_type === 'case.attributes_set');
      assert.equal(attributeEvents.length, 3);
      assert.deepEqual(
        (attributeEvents[0]!.payload.attributes as Row[]).map((a) => [a.name, a.type, a.value, a.old_value]),
        [
          ['Age', 'number', 24, null],
          ['Gender', 'text', 'f', null],
          ['Interest', 'text', 'shopping', null],
        ],
      );
      assert.equal(storedEvents(fx.handle).filter((e) => e.event_type === 'case.attribute_set').length, 0);
    });

    it('name_column picks the case name; an unknown column or repeated names fail with IMPORT_FAILED, writing nothing', async function () {
      const file = path.join(requireCorpus(this, 'surveys'), 'qualcoder_cases123.csv');
      const before = await snapshot(fx);
      const unknown = await fx.fails('import_data', { format: 'csv', source_path: file, name_column: 'participant' }, 'IMPORT_FAILED');
      assert.ok(!unknown.envelope.success && /case, Age, gender, interest/.test(unknown.envelope.error), 'the message lists the columns');
      await fx.fails('import_data', { format: 'csv', source_path: file, name_column: 'gender' }, 'IMPORT_FAILED');
      assert.deepEqual(await snapshot(fx), before);
      assert.equal((await fx.ok('list_cases')).count, 0);
      await fx.ok('import_data', { format: 'csv', source_path: file, name_column: 'INTEREST' });
      const cases = await casesInFull(fx);
      assert.deepEqual([...cases.keys()].sort(), ['performing arts', 'politics', 'science']);
      assert.deepEqual(cases.get('science')!.attributes, {
        case: { type: 'text', value: 'ID1' },
        Age: { type: 'number', value: 20 },
        gender: { type: 'text', value: 'f' },
      });
    });

    it('infers number, date, boolean and text per column, sniffs the delimiter, keeps leading-zero ids as text', async () => {
      const long = 'Mostly on Saturdays; we share seeds, tools and the harvest, and argue about slugs. "It is our place", she said.';
      const csv =
        '\uFEFFrespondent;zip;score;joined;member;city;comment\r\n' +
        `R1;02139;4.5;2024-03-01;TRUE;Leeds;"${long.replace(/"/g, '""')}"\r\n` +
        'R2;10115;-1;2024-03-02T09:30:00Z;false;Berlin;"Short,\nbut on two lines"\r\n' +
        ';;;;;;\r\n' +
        'R3;75001;1e3;;true;Paris;\r\n';
      await fx.ok('import_data', { format: 'csv', source_path: write('garden survey.csv', csv) });
      const cases = await casesInFull(fx);
      assert.deepEqual([...cases.keys()], ['R1', 'R2', 'R3'], 'an empty row is skipped');
      assert.deepEqual(cases.get('R1')!.attributes, {
        zip: { type: 'text', value: '02139' },
        score: { type: 'number', value: 4.5 },
        joined: { type: 'date', value: '2024-03-01' },
        member: { type: 'boolean', value: true },
        city: { type: 'text', value: 'Leeds' },
      });
      assert.deepEqual(cases.get('R2')!.attributes.joined, { type: 'date', value: '2024-03-02T09:30:00Z' });
      assert.deepEqual(cases.get('R3')!.attributes.score, { type: 'number', value: 1000 });
      assert.equal(cases.get('R3')!.attributes.joined, undefined);
      assert.deepEqual(cases.get('R1')!.sources, ['R1 - comment'], 'mean length over 60: open-ended');
      assert.deepEqual(cases.get('R2')!.sources, ['R2 - comment']);
      assert.deepEqual(cases.get('R3')!.sources, [], 'no answer, no source');
      const src = (await fx.ok('list_sources')).sources.find((s: Row) => s.name === 'R2 - comment');
      assert.equal((await fx.ok('read_source_content', { source_id: src.source_id })).content, 'Short,\nbut on two lines');
      assert.deepEqual(
        (await fx.ok('list_folders')).folders.map((f: Row) => f.name),
        ['garden survey'],
      );
    });

    it('re-importing a survey reuses its sources; a source name holding other text fails the import, writing nothing', async function () {
      const file = path.join(requireCorpus(this, 'surveys'), 'qualcoder_survey456.csv');
      await fx.ok('import_data', { format: 'csv', source_path: file });
      const again = await fx.ok('import_data', { format: 'csv', source_path: file });
      assert.deepEqual(again.created, { categories: 0, codes: 0, folders: 0, sources: 0, segments: 0, cases: 0 });
      assert.equal(again.reused.sources, 3);
      assert.equal(again.reused.cases, 3);
      assert.equal(again.attributes_set, 0);

      const other = await openFixture();
      try {
        await other.ok('add_text_source', { name: 'ID5 - freetext', content: 'something else entirely' });
        const before = await snapshot(other);
        const out = await other.fails('import_data', { format: 'csv', source_path: file }, 'IMPORT_FAILED');
        assert.ok(!out.envelope.success && out.envelope.error.includes('"ID5 - freetext"'), 'the message names the clash');
        assert.deepEqual(await snapshot(other), before);
        assert.equal((await other.ok('list_cases')).count, 0);
      } finally {
        await other.close();
      }
    });
  });

  describe('rqda', () => {
    it('imports the corpus project with its 121 active codings and their texts', async function () {
      const file = path.join(requireCorpus(this, 'rqda'), 'robertour_db.rqda');
      const r = await fx.ok('import_data', { format: 'rqda', source_path: file });
      const dbSources = await query(file, 'SELECT id, name, file FROM source WHERE status = 1');
      const dbCodes = await query(file, 'SELECT id, name FROM freecode WHERE status = 1');
      const dbCodings = await query(
        file,
        'SELECT c.seltext, c.selfirst, c.selend, s.name AS source, f.name AS code FROM coding c JOIN source s ON s.id = c.fid JOIN freecode f ON f.id = c.cid WHERE c.status = 1',
      );
      assert.equal(dbCodings.length, 121);
      assert.equal(r.created.sources, dbSources.length);
      assert.equal(r.created.codes, dbCodes.length);
      assert.equal(r.created.categories, 4);
      assert.equal(r.created.segments, 121);
      assert.equal(r.skipped.soft_deleted_attribute_definitions, 7);
      const segments = await allSegments(fx);
      const key = (source: string, code: string, start: number, end: number) => `${source}|${code}|${start}|${end}`;
      const got = new Map(segments.map((s) => [key(s.source_name, s.code_name, s.start_pos, s.end_pos), s]));
      for (const c of dbCodings) {
        const s = got.get(key(c.source, c.code, c.selfirst, c.selend));
        assert.ok(s, `coding ${c.code} [${c.selfirst}, ${c.selend}) of ${c.source}`);
        assert.equal(s.text, c.seltext);
        assert.equal(s.owner, 'hedgehog', 'the RQDA coder is the owner');
      }
      // categories from codecat/treecode, folders from filecat/treefile
      const expectedCategory = await query(
        file,
        'SELECT f.name AS code, k.name AS category FROM treecode t JOIN freecode f ON f.id = t.cid JOIN codecat k ON k.catid = t.catid WHERE t.status = 1',
      );
      const codes = await codesByName(fx);
      for (const e of expectedCategory) assert.equal(codes.get(e.code)!.category.name, e.category, e.code);
      const folders = new Map(((await fx.ok('list_folders')).folders as Row[]).map((f) => [f.folder_id, f.name]));
      const expectedFolder = await query(
        file,
        'SELECT s.name AS source, k.name AS folder FROM treefile t JOIN source s ON s.id = t.fid JOIN filecat k ON k.catid = t.catid WHERE t.status = 1',
      );
      const sources = (await fx.ok('list_sources')).sources as Row[];
      for (const e of expectedFolder) assert.equal(folders.get(sources.find((s) => s.name === e.source)!.folder_id), e.folder, e.source);
      for (const s of dbSources) assert.equal(sources.find((x) => x.name === s.name)!.length, [...s.file].length);
    });

    it('honours soft deletes (status = 0) and reads cases, case ranges and typed case attributes', async function () {
      const corpus = path.join(requireCorpus(this, 'rqda'), 'robertour_db.rqda');
      const file = path.join(fx.dir, 'edited.rqda');
      await modifiedCopy(
        corpus,
        file,
        `UPDATE freecode SET status = 0 WHERE id = 12;
         UPDATE source SET status = 0 WHERE id = 6;
         UPDATE coding SET status = 0 WHERE rowid = (SELECT MIN(rowid) FROM coding WHERE fid = 1);
         UPDATE codecat SET status = 0 WHERE catid = 2;
         INSERT INTO cases(name, memo, owner, date, dateM, id, status) VALUES ('reader A', 'first reader', 'tico', '', '', 1, 1), ('reader B', NULL, 'tico', '', '', 2, 0);
         INSERT INTO caselinkage(caseid, fid, selfirst, selend, status) VALUES (1, 1, 0, 779, 1), (1, 2, 10.0, 50.0, 1), (1, 6, 0, 10, 1), (2, 3, 0, 10, 1), (1, 3, 0, 5, 0);
         INSERT INTO attributes(name, status, class) VALUES ('age', 1, 'numeric'), ('city', 1, 'character'), ('gone', 0, 'numeric');
         INSERT INTO caseAttr(variable, value, caseID, status) VALUES ('age', '42', 1, 1), ('city', 'Leeds', 1, 1), ('gone', '1', 1, 1), ('age', '99', 1, 0), ('age', '7', 2, 1);`,
      );
      const expectedCodings = await query(
        file,
        `SELECT c.seltext, c.selfirst, c.selend, s.name AS source, f.name AS code FROM coding c JOIN source s ON s.id = c.fid JOIN freecode f ON f.id = c.cid
         WHERE c.status = 1 AND s.status = 1 AND f.status = 1`,
      );
      assert.ok(expectedCodings.length < 121 && expectedCodings.length > 60, `${expectedCodings.length} live codings`);
      const r = await fx.ok('import_data', { format: 'rqda', source_path: file });
      assert.equal(r.created.sources, 5);
      assert.equal(r.created.codes, 11);
      assert.equal(r.created.categories, 3);
      assert.equal(r.created.segments, expectedCodings.length);
      assert.equal(r.skipped.soft_deleted_codings, 1);
      assert.equal(r.skipped.codings_of_deleted_codes + r.skipped.codings_of_deleted_sources, 121 - 1 - expectedCodings.length);
      const sources = (await fx.ok('list_sources')).sources.map((s: Row) => s.name);
      assert.ok(!sources.includes('in_wonderland'));
      const codes = await codesByName(fx);
      assert.ok(!codes.has('sentence_exclamation'));
      assert.equal(codes.get('sentence_question')!.category, null, 'its category was deleted');
      const segments = await allSegments(fx);
      assert.deepEqual(
        segments.map((s) => `${s.source_name}|${s.code_name}|${s.start_pos}|${s.end_pos}|${s.text}`).sort(),
        expectedCodings.map((c) => `${c.source}|${c.code}|${c.selfirst}|${c.selend}|${c.seltext}`).sort(),
      );
      const cases = await casesInFull(fx);
      assert.deepEqual([...cases.keys()], ['reader A']);
      const a = cases.get('reader A')!;
      assert.deepEqual(a.attributes, { age: { type: 'number', value: 42 }, city: { type: 'text', value: 'Leeds' } });
      assert.deepEqual(a.sources, ['lost_mine'], 'a range over the whole text links the source');
      const romance = (await query(file, 'SELECT file FROM source WHERE id = 2'))[0]!.file as string;
      assert.deepEqual(a.ranges, [{ source: 'romance_toronto', start_pos: 10, end_pos: 50, text: [...romance].slice(10, 50).join('') }]);
    });
  });

  describe('qualcoder', () => {
    it('imports the corpus project: 230 codes, 55 categories, 30 sources and 753 codings, each with its stored seltext', async function () {
      const file = path.join(requireCorpus(this, 'qualcoder'), 'mannheimer_recoded_data.qda');
      const r = await fx.ok('import_data', { format: 'qualcoder', source_path: file });
      assert.deepEqual(r.created, { categories: 55, codes: 230, folders: 0, sources: 30, segments: 753, cases: 0 });
      assert.deepEqual(r.warnings, []);
      assert.equal((await fx.ok('list_codes')).count, 230);
      assert.equal((await fx.ok('list_categories')).count, 55);
      assert.equal((await fx.ok('list_sources')).count, 30);
      const segments = await allSegments(fx);
      assert.equal(segments.length, 753);
      const dbCodings = await query(
        file,
        'SELECT t.seltext, t.pos0, t.pos1, t.owner, s.name AS source, n.name AS code FROM code_text t JOIN source s ON s.id = t.fid JOIN code_name n ON n.cid = t.cid',
      );
      const got = new Map(segments.map((s) => [`${s.source_name}|${s.code_name}|${s.start_pos}|${s.end_pos}`, s]));
      for (const c of dbCodings) {
        const s = got.get(`${c.source}|${c.code}|${c.pos0}|${c.pos1}`);
        assert.ok(s, `${c.code} [${c.pos0}, ${c.pos1}) of ${c.source}`);
        assert.equal(s.text, c.seltext);
        assert.equal(s.owner, c.owner);
      }
      // nesting, code categories and colours as QualCoder holds them
      const cats = await categoriesByName(fx);
      for (const c of await query(file, 'SELECT c.name, p.name AS parent FROM code_cat c LEFT JOIN code_cat p ON p.catid = c.supercatid')) {
        assert.equal(cats.get(c.name)!.parent_name, c.parent ?? null, c.name);
      }
      assert.ok(
        [...cats.values()].some((c) => c.depth >= 2),
        'nesting deeper than one level is kept',
      );
      const codes = await codesByName(fx);
      for (const c of await query(file, 'SELECT n.name, n.color, k.name AS category FROM code_name n LEFT JOIN code_cat k ON k.catid = n.catid')) {
        assert.equal(codes.get(c.name)!.category?.name ?? null, c.category ?? null, c.name);
        assert.equal(codes.get(c.name)!.color, String(c.color).toUpperCase(), c.name);
      }
      // the text is stored exactly
      const src = (await fx.ok('list_sources')).sources.find((s: Row) => s.name === 'BSR01_transcript_deidentified');
      const fulltext = (await query(file, "SELECT fulltext FROM source WHERE name = 'BSR01_transcript_deidentified'"))[0]!.fulltext as string;
      assert.equal((await fx.ok('read_source_content', { source_id: src.source_id, max_length: 1_000_000 })).content, fulltext);
    });

    it('reads cases (whole sources and ranges) and typed case attributes; file attributes become document attributes', async function () {
      const corpus = path.join(requireCorpus(this, 'qualcoder'), 'mannheimer_recoded_data.qda');
      const file = path.join(fx.dir, 'with-cases.qda');
      const len = (await query(corpus, 'SELECT length(fulltext) AS n FROM source WHERE id = 2'))[0]!.n as number;
      await modifiedCopy(
        corpus,
        file,
        `INSERT INTO cases(caseid, name, memo, owner, date) VALUES (1, 'BSR01', 'participant', 'saramannheimer', ''), (2, 'BSR02', NULL, 'saramannheimer', '');
         INSERT INTO case_text(caseid, fid, pos0, pos1, owner, date) VALUES (1, 2, 0, ${len}, 'saramannheimer', ''), (2, 8, 100, 250, 'saramannheimer', '');
         INSERT INTO attribute_type(name, caseOrFile, valuetype) VALUES ('age', 'case', 'numeric'), ('role', 'case', 'character'), ('year', 'file', 'numeric');
         INSERT INTO attribute(name, attr_type, value, id) VALUES ('age', 'case', '38', 1), ('role', 'case', 'librarian', 1), ('age', 'case', '', 2), ('year', 'file', '2023', 2);`,
      );
      const r = await fx.ok('import_data', { format: 'qualcoder', source_path: file });
      assert.equal(r.created.cases, 2);
      assert.equal(r.skipped.file_attributes, undefined, 'file attributes are imported (test/unit/exchange/qualcoder.test.ts checks them)');
      assert.equal(r.source_attributes_set, 1);
      const cases = await casesInFull(fx);
      const bsr01 = (await query(file, 'SELECT name FROM source WHERE id = 2'))[0]!.name;
      const bsr02 = (await query(file, 'SELECT name, substr(fulltext, 101, 150) AS t FROM source WHERE id = 8'))[0]!;
      assert.deepEqual(cases.get('BSR01'), {
        attributes: { age: { type: 'number', value: 38 }, role: { type: 'text', value: 'librarian' } },
        sources: [bsr01],
        ranges: [],
      });
      assert.deepEqual(cases.get('BSR02'), { attributes: {}, sources: [], ranges: [{ source: bsr02.name, start_pos: 100, end_pos: 250, text: bsr02.t }] });
    });
  });

  describe('taguette', () => {
    it('imports the project with its documents, tags and highlights, counted against the database itself', async function () {
      const file = path.join(requireCorpus(this, 'taguette'), 'carpentries_sample-project.sqlite3');
      const r = await fx.ok('import_data', { format: 'taguette', source_path: file });
      const docs = await query(file, 'SELECT id, name, description FROM documents');
      const tags = await query(file, 'SELECT id, path, description FROM tags');
      const links = await query(
        file,
        'SELECT h.id, h.snippet, d.name AS document, t.path AS tag FROM highlight_tags ht JOIN highlights h ON h.id = ht.highlight_id JOIN documents d ON d.id = h.document_id JOIN tags t ON t.id = ht.tag_id',
      );
      assert.equal(r.created.sources, docs.length);
      assert.equal(r.created.codes, tags.length);
      assert.equal(r.created.segments, links.length);
      assert.equal(r.created.folders, 1);
      assert.equal((await fx.ok('list_sources')).count, docs.length);
      const folders = (await fx.ok('list_folders')).folders;
      assert.deepEqual(
        folders.map((f: Row) => [f.name, f.source_count]),
        [['Social media privacy project', docs.length]],
      );
      // tags: full paths as code names, descriptions as memos, path prefixes as categories
      const codes = await codesByName(fx);
      for (const t of tags) {
        assert.equal(codes.get(t.path)!.memo, t.description === '' ? null : t.description, t.path);
        assert.equal(codes.get(t.path)!.category?.name ?? null, t.path.includes(':') ? t.path.split(':')[0] : null, t.path);
      }
      assert.deepEqual([...(await categoriesByName(fx)).keys()].sort(), ['deductive', 'in vivo', 'open']);
      // each highlight covers what Taguette's own snippet shows
      const segments = await allSegments(fx);
      assert.equal(segments.length, links.length);
      for (const l of links) {
        const s = segments.filter((x) => x.source_name === l.document && x.code_name === l.tag && squash(x.text) === squash(htmlText(l.snippet)));
        assert.equal(s.length, 1, `highlight ${l.id} (${l.tag}) in ${l.document}: ${squash(htmlText(l.snippet)).slice(0, 60)}`);
        assert.equal(s[0]!.owner, 'admin', 'the user who wrote the highlight');
      }
      // the document text is the HTML's text, paragraphs on their own lines
      const bsr05 = (await fx.ok('list_sources')).sources.find((s: Row) => s.name === 'BSR_05');
      const content = (await fx.ok('read_source_content', { source_id: bsr05.source_id, max_length: 200 })).content;
      assert.ok(content.startsWith(' BSR05_transcript_deidentified\n\nSUMMARY KEYWORDS \ntweets, data, twitter'), JSON.stringify(content));
    });

    it('maps Taguette offsets (UTF-8 bytes of text nodes, tags not counted) to code points, with breaks between blocks', () => {
      const html = '<h1>Caf&eacute; ☕</h1><p>Zo&euml; said: <b>🌱 grow</b> it</p><!-- note --><p>end</p>';
      const t = taguetteHtmlToText(html);
      assert.equal(t.text, 'Café ☕\nZoë said: 🌱 grow it\nend');
      // "Café ☕" is 5 + 1 + 3 = 10 bytes in UTF-8 (é 2, ☕ 3); the comment counts 6 bytes; "🌱" is 4 bytes
      const bytes = (s: string) => Buffer.byteLength(s, 'utf8');
      const growAt = bytes('Café ☕') + bytes('Zoë said: ') + bytes('🌱 ');
      const slice = (a: number, b: number) => [...t.text].slice(t.toCodePoint(a, 'start'), t.toCodePoint(b, 'end')).join('');
      assert.equal(slice(growAt, growAt + 4), 'grow');
      assert.equal(slice(0, bytes('Café ☕')), 'Café ☕', 'an end at a block boundary stays before the inserted break');
      const endAt = bytes('Café ☕Zoë said: 🌱 grow it') + bytes(' note ');
      assert.equal(slice(endAt, endAt + 3), 'end', 'comment bytes count in offsets but are not text');
      assert.deepEqual(taguetteTagPrefixes('deductive: autonomy'), ['deductive']);
      assert.deepEqual(taguetteTagPrefixes('interesting.quote.long'), ['interesting', 'interesting.quote']);
      assert.deepEqual(taguetteTagPrefixes('Dr. Smith'), []);
      assert.deepEqual(taguetteTagPrefixes('ends with:'), []);
    });
  });

  describe('all or nothing', () => {
    it('a broken file writes nothing: a truncated database, a file that is not one, broken CSV quoting', async function () {
      const corpus = requireCorpus(this);
      await fx.ok('import_data', { format: 'code_list', source_path: write('codes.txt', 'A\n  a1\nB\n') });
      const before = await snapshot(fx);
      const qc = fs.readFileSync(path.join(corpus, 'qualcoder', 'mannheimer_recoded_data.qda'));
      const truncated = write('truncated.qda', qc.subarray(0, Math.floor(qc.length / 3)));
      await fx.fails('import_data', { format: 'qualcoder', source_path: truncated }, 'IMPORT_FAILED');
      await fx.fails('import_data', { format: 'rqda', source_path: path.join(corpus, 'surveys', 'qualcoder_survey456.csv') }, 'IMPORT_FAILED');
      await fx.fails('import_data', { format: 'taguette', source_path: path.join(corpus, 'rqda', 'robertour_db.rqda') }, 'IMPORT_FAILED');
      await fx.fails('import_data', { format: 'csv', source_path: write('broken.csv', 'name,comment\nP1,"open quote\nP2,fine\n') }, 'IMPORT_FAILED');
      await fx.fails('import_data', { format: 'csv', source_path: write('ragged.csv', 'name,age\nP1,30,extra\n') }, 'IMPORT_FAILED');
      assert.deepEqual(await snapshot(fx), before);
    });

    it('a failure while writing a plan rolls back everything the plan wrote before it', async () => {
      // a stand-in tool over the same pipeline writes a hand-made plan whose last coding names a code the plan lacks
      const plan: ImportPlan = emptyPlan('test', path.join(fx.dir, 'x'));
      plan.categories.push({ ref: 'k', name: 'Cat', parent: null, memo: null });
      plan.codes.push({ ref: 'c', name: 'Code', color: null, memo: null, category: 'k' });
      plan.sources.push({ ref: 's', name: 'Text', text: 'hello world', memo: null, origin: null, folder: null });
      plan.cases.push({ name: 'P1', memo: null, sources: ['s'], ranges: [], attributes: [{ name: 'age', type: 'number', value: 3 }] });
      plan.segments.push({ code: 'c', source: 's', start_pos: 0, end_pos: 5, memo: null, importance: 0 });
      plan.segments.push({ code: 'missing', source: 's', start_pos: 6, end_pos: 11, memo: null, importance: 0 });
      const tool = defineTool({
        name: 'apply_test_plan',
        group: 'exchange',
        title: 'Apply a test plan',
        description: 'test only',
        input: z.object({}),
        effect: 'bulk',
        trust: 'bulk',
        run: (ctx) => applyImportPlan(ctx.domain, plan),
      });
      const pipeline = new ToolPipeline({ tools: [...ALL_TOOLS, tool], project: () => fx.handle, host: headlessHost, clock: fixedClock });
      await fx.ok('create_code', { name: 'Before', color: '#000000' });
      const before = await snapshot(fx);
      const out = await pipeline.invoke('apply_test_plan', {}, ALICE);
      assert.equal(out.envelope.success, false);
      assert.ok(!out.envelope.success && out.envelope.error_code === 'IMPORT_FAILED' && /code missing/.test(out.envelope.error), JSON.stringify(out.envelope));
      assert.deepEqual(await snapshot(fx), before);
      assert.equal((await fx.ok('list_cases')).count, 0);
      // without the bad coding the same plan applies whole
      plan.segments.pop();
      const ok = await pipeline.invoke('apply_test_plan', {}, ALICE);
      assert.equal(ok.envelope.success, true, JSON.stringify(ok.envelope));
      assert.equal((await allSegments(fx)).length, 1);
    });
  });
});

describe('domain setCaseAttributes (used by the importers)', () => {
  let fx: Fixture;
  beforeEach(async () => {
    fx = await openFixture();
  });
  afterEach(async () => {
    await fx.close();
  });

  const run = <T>(fn: (ctx: Parameters<typeof setCaseAttributes>[0], raised: DomainEvent[]) => T): { result: T; raised: DomainEvent[] } => {
    const raised: DomainEvent[] = [];
    const result = fx.handle.transaction(() =>
      fn(
        {
          repo: fx.handle.repo,
          events: { emit: (e) => void raised.push(e) },
          actor: { user: 'alice', session_id: 'sess-alice', client_type: 'REST_CLIENT' },
          now: FIXED_ISO,
        },
        raised,
      ),
    );
    return { result, raised };
  };

  it('writes the values that change in one step, with one event listing them; the last value of a repeated name wins', async () => {
    const c = await fx.ok('create_case', { name: 'P1' });
    await fx.ok('set_case_attribute', { case_id: c.case_id, attribute_name: 'age', value: 30 });
    await fx.ok('set_case_attribute', { case_id: c.case_id, attribute_name: 'site', value: 'north' });
    const { result, raised } = run((ctx) =>
      setCaseAttributes(ctx, c.case_id, [
        { attribute_name: 'age', value: 30 },
        { attribute_name: 'site', value: 'south' },
        { attribute_name: 'joined', value: '2024-01-05' },
        { attribute_name: 'score', value: '7', type: 'number' },
        { attribute_name: 'score', value: '8', type: 'number' },
      ]),
    );
    assert.equal(result.changed, 3);
    assert.deepEqual(
      result.set.map((s) => s.changed),
      [false, true, true, true, true],
    );
    assert.equal(raised.length, 1);
    assert.equal(raised[0]!.event_type, 'case.attributes_set');
    assert.deepEqual(raised[0]!.payload, {
      case_id: c.case_id,
      attributes: [
        { name: 'site', type: 'text', value: 'south', old_type: 'text', old_value: 'north' },
        { name: 'joined', type: 'date', value: '2024-01-05', old_type: null, old_value: null },
        { name: 'score', type: 'number', value: 8, old_type: null, old_value: null },
      ],
    });
    const d = await fx.ok('get_case', { case_id: c.case_id });
    assert.deepEqual(d.attribute_values, { age: 30, joined: '2024-01-05', score: 8, site: 'south' });
    const same = run((ctx) => setCaseAttributes(ctx, c.case_id, [{ attribute_name: 'age', value: 30 }]));
    assert.equal(same.result.changed, 0);
    assert.deepEqual(same.raised, [], 'nothing changed: no event');
  });

  it('checks every value before writing any: a bad one fails with INVALID_ARGUMENTS and nothing is written', async () => {
    const c = await fx.ok('create_case', { name: 'P1' });
    const raised: DomainEvent[] = [];
    fx.handle.transaction(() => {
      assert.throws(
        () =>
          setCaseAttributes(
            {
              repo: fx.handle.repo,
              events: { emit: (e) => void raised.push(e) },
              actor: { user: 'alice', session_id: 's', client_type: 'REST_CLIENT' },
              now: FIXED_ISO,
            },
            c.case_id,
            [
              { attribute_name: 'ok', value: 'fine' },
              { attribute_name: 'n', value: 'not a number', type: 'number' },
            ],
          ),
        (e: any) => e.code === 'INVALID_ARGUMENTS' && /"n"/.test(e.message),
      );
    });
    assert.deepEqual(raised, []);
    assert.deepEqual((await fx.ok('get_case', { case_id: c.case_id })).attributes, []);
    assert.throws(
      () => run((ctx) => setCaseAttributes(ctx, 999, [])),
      (e: any) => e.code === 'CASE_NOT_FOUND',
    );
  });
});
