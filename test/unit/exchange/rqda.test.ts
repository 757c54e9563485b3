/**
 * The RQDA importer (src/exchange/importers/rqda.ts) as RQDA shows a project (issue 15, items 1, 2, 3, 5):
 * texts that begin with U+FEFF, only `status = 1` rows, negative `selfirst`, R's "NA" memos, file attributes
 * as document attributes, and codings re-anchored by their `seltext`. Fixtures are RQDA 0.2.2 databases
 * built here with sql.js (the schema is RQDA's, as the corpus project robertour_db.rqda holds it); the
 * corpus project itself is read from ../shared/corpus. Expected values are written by hand or queried from
 * the fixture database, never computed by the importer.
 */
import assert from 'node:assert/strict';
import * as path from 'node:path';
import type { Database } from 'sql.js';
import { requireCorpus } from '../../helpers/serverProcess';
import { openFixture, type Fixture } from '../domain/projectFixture';
import { allSegments, cpLength, cpSlice, query, run, sqliteFile, type Row } from './sqliteFixtures';

/** RQDA 0.2.2's tables (as `sqlite_master` of the corpus project robertour_db.rqda lists them). */
const RQDA_SCHEMA = `
CREATE TABLE source (name text, id integer, file text, memo text, owner text, date text, dateM text, status integer);
CREATE TABLE freecode (name text, memo text, owner text, date text, dateM text, id integer, status integer, color text);
CREATE TABLE treecode (cid integer, catid integer, date text, dateM text, memo text, status integer, owner text);
CREATE TABLE treefile (fid integer, catid integer, date text, dateM text, memo text, status integer, owner text);
CREATE TABLE filecat (name text, fid integer, catid integer, owner text, date text, dateM text, memo text, status integer);
CREATE TABLE codecat (name text, cid integer, catid integer, owner text, date text, dateM text, memo text, status integer);
CREATE TABLE coding (cid integer, fid integer, seltext text, selfirst real, selend real, status integer, owner text, date text, memo text);
CREATE TABLE coding2 (cid integer, fid integer, seltext text, selfirst real, selend real, status integer, owner text, date text, memo text);
CREATE TABLE project (databaseversion text, date text, dateM text, memo text, about text, imageDir text);
CREATE TABLE cases (name text, memo text, owner text, date text, dateM text, id integer, status integer);
CREATE TABLE caselinkage (caseid integer, fid integer, selfirst real, selend real, status integer, owner text, date text, memo text);
CREATE TABLE attributes (name text, status integer, date text, dateM text, owner text, memo text, class text);
CREATE TABLE caseAttr (variable text, value text, caseID integer, date text, dateM text, owner text, status integer);
CREATE TABLE fileAttr (variable text, value text, fileID integer, date text, dateM text, owner text, status integer);
CREATE TABLE journal (name text, journal text, date text, dateM text, owner text, status integer);
CREATE TABLE annotation (fid integer, position integer, annotation text, owner text, date text, dateM text, status integer);
CREATE TABLE image (name text, id integer, date text, dateM text, owner text, status integer);
CREATE TABLE imageCoding (cid integer, iid integer, x1 integer, y1 integer, x2 integer, y2 integer, memo text, date text, dateM text, owner text, status integer);
INSERT INTO project VALUES ('0.2.2', 'Thu Nov 26 08:00:00 2026', NULL, NULL, 'Database created by RQDA (http://rqda.r-forge.r-project.org/)', NULL);
`;

/** A new RQDA project file `name` in `dir`, with `fill` run on it (rows given as SQL with bound parameters). */
const rqdaFile = (dir: string, name: string, fill: (db: Database) => void) => sqliteFile(dir, name, RQDA_SCHEMA, fill);

const SOURCE = 'INSERT INTO source (name, id, file, memo, owner, status) VALUES (?, ?, ?, ?, ?, ?)';
const CODE = 'INSERT INTO freecode (name, memo, owner, id, status, color) VALUES (?, ?, ?, ?, ?, ?)';
const CODING = 'INSERT INTO coding (cid, fid, seltext, selfirst, selend, status, owner, memo) VALUES (?, ?, ?, ?, ?, ?, ?, ?)';

/** The whole text of a source, read page by page through read_source_content; checks total_length against the pages. */
async function readWhole(fx: Fixture, sourceId: number): Promise<{ text: string; total_length: number }> {
  let text = '';
  let total: number;
  for (let start = 0; ;) {
    const page = await fx.ok('read_source_content', { source_id: sourceId, start_pos: start, max_length: 7 });
    text += page.content;
    total = page.total_length;
    if (!page.has_more) break;
    start = page.end_pos;
  }
  return { text, total_length: total };
}

describe('exchange RQDA importer as RQDA shows a project', function () {
  this.timeout(120_000);
  let fx: Fixture;
  beforeEach(async () => {
    fx = await openFixture();
  });
  afterEach(async () => {
    await fx.close();
  });

  it('texts beginning with one and with two U+FEFF: every coding has its seltext, lengths equal', async () => {
    const one = '\uFEFFThe biggest issues were funding and time.';
    const two = '\uFEFF\uFEFFAnswer: the biggest issue was time.';
    const file = await rqdaFile(fx.dir, 'bom.rqda', (db) => {
      run(db, SOURCE, ['one BOM', 1, one, null, 'tico', 1], ['two BOMs', 2, two, null, 'tico', 1]);
      run(db, CODE, ['issues', null, 'tico', 1, 1, '#FF0000']);
      // offsets count the BOMs (RQDA counts R characters): "The biggest issues" is [1, 19) of `one`
      run(
        db,
        CODING,
        [1, 1, 'The biggest issues', 1, 19, 1, 'tico', null],
        [1, 1, one, 0, cpLength(one), 1, 'tico', null],
        [1, 2, 'Answer', 2, 8, 1, 'tico', null],
        [1, 2, 'the biggest issue was time', 10, 36, 1, 'tico', null],
      );
    });
    const r = await fx.ok('import_data', { format: 'rqda', source_path: file });
    assert.equal(r.created.segments, 4);
    assert.deepEqual(r.anchoring_counts, { reanchored: 0, kept_offsets: 0, unplaceable: 0 });
    assert.deepEqual(r.warnings, []);
    const segments = await allSegments(fx);
    const stored = await query(file, 'SELECT seltext, selfirst, selend FROM coding ORDER BY rowid');
    assert.deepEqual(segments.map((s) => [s.start_pos, s.end_pos, s.text]).sort(), stored.map((c) => [c.selfirst, c.selend, c.seltext]).sort());
    assert.ok(
      segments.some((s) => s.text === 'The biggest issues'),
      'not "he biggest issues"',
    );
    for (const s of (await fx.ok('list_sources')).sources as Row[]) {
      const expected = s.name === 'one BOM' ? one : two;
      assert.equal(s.length, cpLength(expected), s.name);
      const whole = await readWhole(fx, s.source_id);
      assert.equal(whole.text, expected, `${s.name}: the pages concatenate to the text, BOMs included`);
      assert.equal(whole.total_length, cpLength(whole.text));
    }
  });

  it('only status = 1 is live: codings with status 0, -1 and NULL are skipped and counted by status; the same in every table', async () => {
    const text = 'alpha beta gamma delta epsilon';
    const file = await rqdaFile(fx.dir, 'status.rqda', (db) => {
      run(db, SOURCE, ['live', 1, text, null, 'tico', 1], ['deleted', 2, text, null, 'tico', 0], ['removed', 3, text, null, 'tico', -1]);
      run(db, CODE, ['kept', null, 'tico', 1, 1, null], ['deleted code', null, 'tico', 2, 0, null], ['unmarked code', null, 'tico', 3, -1, null]);
      run(
        db,
        CODING,
        [1, 1, 'alpha', 0, 5, 1, 'tico', null],
        [1, 1, 'beta', 6, 10, 0, 'tico', null],
        [1, 1, 'gamma', 11, 16, -1, 'tico', null],
        [1, 1, 'delta', 17, 22, -1, 'tico', null],
        [1, 1, 'epsilon', 23, 30, null, 'tico', null],
        [2, 1, 'alpha', 0, 5, 1, 'tico', null],
        [3, 1, 'alpha', 0, 5, 1, 'tico', null],
        [1, 2, 'alpha', 0, 5, 1, 'tico', null],
        [1, 3, 'alpha', 0, 5, 1, 'tico', null],
      );
      run(db, 'INSERT INTO codecat (name, catid, memo, status) VALUES (?, ?, ?, ?)', ['Group', 1, null, 1], ['Old group', 2, null, 0]);
      run(db, 'INSERT INTO treecode (cid, catid, status) VALUES (?, ?, ?)', [1, 2, 1], [1, 1, 0]);
      run(db, 'INSERT INTO cases (name, memo, id, status) VALUES (?, ?, ?, ?)', ['kept case', null, 1, 1], ['unmarked case', null, 2, -1]);
      run(db, 'INSERT INTO caselinkage (caseid, fid, selfirst, selend, status) VALUES (?, ?, ?, ?, ?)', [1, 1, 0, 5, 1], [1, 1, 6, 10, -1]);
    });
    const r = await fx.ok('import_data', { format: 'rqda', source_path: file });
    assert.equal(r.created.sources, 1);
    assert.equal(r.created.codes, 1);
    assert.equal(r.created.categories, 1);
    assert.equal(r.created.segments, 1);
    assert.equal(r.created.cases, 1);
    assert.equal(r.skipped.soft_deleted_codings, 1);
    assert.equal(r.skipped.unmarked_codings, 2);
    assert.equal(r.skipped.codings_with_unknown_status, 1);
    assert.equal(r.skipped.codings_of_deleted_codes, 2);
    assert.equal(r.skipped.codings_of_deleted_sources, 2);
    assert.equal(r.skipped.soft_deleted_sources, 1);
    assert.equal(r.skipped.unmarked_sources, 1);
    assert.equal(r.skipped.soft_deleted_codes, 1);
    assert.equal(r.skipped.unmarked_codes, 1);
    assert.equal(r.skipped.soft_deleted_categories, 1);
    assert.equal(r.skipped.soft_deleted_code_category_memberships, 1);
    assert.equal(r.skipped.unmarked_cases, 1);
    assert.equal(r.skipped.unmarked_case_links, 1);
    const segments = await allSegments(fx);
    assert.deepEqual(
      segments.map((s) => [s.source_name, s.code_name, s.start_pos, s.end_pos, s.text]),
      [['live', 'kept', 0, 5, 'alpha']],
    );
    const codes = (await fx.ok('list_codes')).codes as Row[];
    assert.equal(codes[0]!.category, null, 'its only live membership is in a deleted category');
    const c = await fx.ok('get_case', { case_id: (await fx.ok('list_cases')).cases[0].case_id });
    assert.deepEqual(
      c.segments.map((s: Row) => [s.start_pos, s.end_pos]),
      [[0, 5]],
    );
  });

  it('a negative selfirst is clamped to 0 (whole-file codings), the text exact', async () => {
    const text = 'A whole answer, coded from the start.';
    const file = await rqdaFile(fx.dir, 'negative.rqda', (db) => {
      run(db, SOURCE, ['answer', 1, text, null, 'tico', 1]);
      run(db, CODE, ['whole', null, 'tico', 1, 1, null], ['start', null, 'tico', 2, 1, null]);
      run(db, CODING, [1, 1, text, -1, cpLength(text), 1, 'tico', null], [2, 1, 'A whole', -3.0, 7, 1, 'tico', null]);
    });
    const r = await fx.ok('import_data', { format: 'rqda', source_path: file });
    assert.equal(r.created.segments, 2);
    assert.equal(r.skipped.codings_outside_their_source, undefined);
    const segments = await allSegments(fx);
    assert.deepEqual(segments.map((s) => [s.code_name, s.start_pos, s.end_pos, s.text]).sort(), [
      ['start', 0, 7, 'A whole'],
      ['whole', 0, cpLength(text), text],
    ]);
    assert.deepEqual(r.anchoring_counts, { reanchored: 0, kept_offsets: 0, unplaceable: 0 });
  });

  it('"NA" memos (R\'s missing value) are no memo: sources, codes, categories, codings, cases', async () => {
    const text = 'one two three';
    const file = await rqdaFile(fx.dir, 'na.rqda', (db) => {
      run(db, SOURCE, ['na source', 1, text, 'NA', 'tico', 1], ['memo source', 2, text, 'a real memo', 'tico', 1]);
      run(db, CODE, ['na code', 'NA', 'tico', 1, 1, null], ['memo code', 'NA is a word here', 'tico', 2, 1, null]);
      run(db, 'INSERT INTO codecat (name, catid, memo, status) VALUES (?, ?, ?, ?)', ['na group', 1, 'NA', 1]);
      run(db, 'INSERT INTO treecode (cid, catid, status) VALUES (?, ?, ?)', [1, 1, 1]);
      run(db, CODING, [1, 1, 'one', 0, 3, 1, 'tico', 'NA'], [2, 1, 'two', 4, 7, 1, 'tico', 'why two']);
      run(db, 'INSERT INTO cases (name, memo, id, status) VALUES (?, ?, ?, ?)', ['na case', 'NA', 1, 1]);
    });
    await fx.ok('import_data', { format: 'rqda', source_path: file });
    const sources = new Map(((await fx.ok('list_sources')).sources as Row[]).map((s) => [s.name, s.memo]));
    assert.deepEqual(Object.fromEntries(sources), { 'na source': null, 'memo source': 'a real memo' });
    const codes = new Map(((await fx.ok('list_codes')).codes as Row[]).map((c) => [c.name, c.memo]));
    assert.deepEqual(Object.fromEntries(codes), { 'na code': null, 'memo code': 'NA is a word here' });
    assert.equal((await fx.ok('list_categories')).categories[0].memo, null);
    const segments = new Map((await allSegments(fx)).map((s) => [s.code_name, s.memo]));
    assert.deepEqual(Object.fromEntries(segments), { 'na code': null, 'memo code': 'why two' });
    assert.equal((await fx.ok('list_cases')).cases[0].memo, null);
  });

  it('file attributes (attributes + fileAttr) become typed document attributes; deleted rows and NA values are not set', async () => {
    const file = await rqdaFile(fx.dir, 'attrs.rqda', (db) => {
      run(db, SOURCE, ['first', 1, 'text one', null, 'tico', 1], ['second', 2, 'text two', null, 'tico', 1], ['gone', 3, 'text three', null, 'tico', 0]);
      run(
        db,
        'INSERT INTO attributes (name, status, class) VALUES (?, ?, ?)',
        ['year', 1, 'numeric'],
        ['library', 1, 'character'],
        ['postcode', 1, 'character'],
        ['old', 0, 'numeric'],
      );
      run(
        db,
        'INSERT INTO fileAttr (variable, value, fileID, owner, status) VALUES (?, ?, ?, ?, ?)',
        ['year', '1865', 1, 'tico', 1],
        ['library', 'Gutenberg', 1, 'tico', 1],
        ['postcode', '01234', 1, 'tico', 1],
        ['year', 'NA', 2, 'tico', 1],
        ['library', 'Bodleian', 2, 'tico', 1],
        ['year', 'about 1900', 2, 'tico', 0],
        ['old', '3', 1, 'tico', 1],
        ['year', '1700', 3, 'tico', 1],
        ['library', 'Deleted', 1, 'tico', -1],
      );
    });
    const r = await fx.ok('import_data', { format: 'rqda', source_path: file });
    assert.equal(r.source_attributes_set, 4);
    assert.equal(r.skipped.file_attributes_of_deleted_rows, 2, "'old' is deleted, source 3 is deleted");
    assert.equal(r.skipped.soft_deleted_file_attributes, 1);
    assert.equal(r.skipped.unmarked_file_attributes, 1);
    assert.equal(r.skipped.soft_deleted_attribute_definitions, 1);
    assert.equal(r.skipped.file_attributes, undefined);
    const sources = new Map(((await fx.ok('list_sources')).sources as Row[]).map((s) => [s.name, s]));
    assert.deepEqual(sources.get('first')!.attributes, { year: 1865, library: 'Gutenberg', postcode: '01234' });
    assert.deepEqual(sources.get('first')!.attribute_types, { year: 'number', library: 'text', postcode: 'text' });
    assert.deepEqual(sources.get('second')!.attributes, { library: 'Bodleian' });
    assert.deepEqual(sources.get('second')!.attribute_types, { library: 'text' });
  });

  it('codings whose seltext drifted from their offsets are re-anchored onto their words and reported with source and code', async () => {
    const text = 'We talked about funding. Then   funding again,\nand about\ttime.';
    //            0123456789012345678901234567890123456789012345678 9012345678 90123
    const file = await rqdaFile(fx.dir, 'drift.rqda', (db) => {
      run(db, SOURCE, ['interview', 1, text, null, 'tico', 1]);
      run(
        db,
        CODE,
        ['money', null, 'tico', 1, 1, null],
        ['talk', null, 'tico', 2, 1, null],
        ['time', null, 'tico', 3, 1, null],
        ['lost', null, 'tico', 4, 1, null],
      );
      run(
        db,
        CODING,
        [2, 1, 'talked about', 3, 15, 1, 'tico', null], // exact
        [2, 1, 'talked about', 5, 17, 1, 'tico', null], // drifted by 2
        [1, 1, 'funding', 17, 24, 1, 'tico', null], // drifted by 1 (the first "funding" is at 16)
        [1, 1, 'funding', 27, 34, 1, 'tico', null], // nearest is the second one, at 32
        [3, 1, 'about time.', 50, 61, 1, 'tico', null], // white space differs: "about\ttime." at 51
        [4, 1, 'budget', 2, 8, 1, 'tico', null], // not in the text: offsets kept
        [4, 1, 'budget', 60, 70, 1, 'tico', null], // not in the text and past its end: not imported
      );
    });
    assert.equal(text.indexOf('funding'), 16);
    assert.equal(text.indexOf('funding', 17), 32);
    assert.equal(text.indexOf('about\ttime.'), 51);
    assert.equal(cpLength(text), 62);
    const r = await fx.ok('import_data', { format: 'rqda', source_path: file });
    assert.equal(r.created.segments, 5, 'the duplicate "talked about" is one coding');
    assert.equal(r.reused.segments, 1);
    assert.equal(r.skipped.codings_outside_their_source, 1);
    assert.deepEqual(r.anchoring_counts, { reanchored: 4, kept_offsets: 1, unplaceable: 1 });
    const entry = (source: string, code: string, start: number, end: number, s0: number, s1: number, quote: string) => ({
      source,
      code,
      start_pos: start,
      end_pos: end,
      stored_start_pos: s0,
      stored_end_pos: s1,
      quote,
    });
    assert.deepEqual(r.anchoring.reanchored, [
      entry('interview', 'talk', 3, 15, 5, 17, 'talked about'),
      entry('interview', 'money', 16, 23, 17, 24, 'funding'),
      entry('interview', 'money', 32, 39, 27, 34, 'funding'),
      entry('interview', 'time', 51, 62, 50, 61, 'about time.'),
    ]);
    assert.deepEqual(r.anchoring.kept_offsets, [entry('interview', 'lost', 2, 8, 2, 8, 'budget')]);
    assert.deepEqual(r.anchoring.unplaceable, [entry('interview', 'lost', 60, 70, 60, 70, 'budget')]);
    assert.equal(r.warnings.length, 3);
    assert.match(r.warnings[0], /^4 coding\(s\) were placed where their stored quote is.*"interview" \/ "talk" 5-17 -> 3-15/);
    assert.match(r.warnings[1], /^1 coding\(s\) keep their stored offsets .*"interview" \/ "lost" 2-8$/);
    assert.match(r.warnings[2], /^1 coding\(s\) were not imported.*"interview" \/ "lost" 60-70$/);
    const segments = await allSegments(fx);
    assert.deepEqual(segments.map((s) => [s.code_name, s.start_pos, s.end_pos, s.text]).sort(), [
      ['lost', 2, 8, ' talke'],
      ['money', 16, 23, 'funding'],
      ['money', 32, 39, 'funding'],
      ['talk', 3, 15, 'talked about'],
      ['time', 51, 62, 'about\ttime.'],
    ]);
  });

  it('the corpus project robertour_db.rqda: every live coding lands on its seltext', async function () {
    const file = path.join(requireCorpus(this, 'rqda'), 'robertour_db.rqda');
    const r = await fx.ok('import_data', { format: 'rqda', source_path: file });
    const codings = await query(
      file,
      `SELECT c.seltext, s.name AS source, f.name AS code FROM coding c JOIN source s ON s.id = c.fid AND s.status = 1
       JOIN freecode f ON f.id = c.cid AND f.status = 1 WHERE c.status = 1`,
    );
    const texts = new Map((await query(file, 'SELECT name, file FROM source WHERE status = 1')).map((s) => [s.name, s.file as string]));
    const segments = await allSegments(fx);
    const found = codings.filter((c) => texts.get(c.source)!.includes(c.seltext));
    console.log(
      `      robertour: ${codings.length} live codings, ${found.length} quotes found in their source; imported ${segments.length} segments; anchoring ${JSON.stringify(r.anchoring_counts)}`,
    );
    assert.equal(segments.length, codings.length);
    const have = new Map<string, number>();
    for (const s of segments) have.set(`${s.source_name}|${s.code_name}|${s.text}`, (have.get(`${s.source_name}|${s.code_name}|${s.text}`) ?? 0) + 1);
    for (const c of found) {
      const k = `${c.source}|${c.code}|${c.seltext}`;
      assert.ok((have.get(k) ?? 0) > 0, `a segment of ${c.code} on ${c.source} holds "${String(c.seltext).slice(0, 40)}"`);
      have.set(k, have.get(k)! - 1);
    }
    for (const s of segments) assert.equal(s.text, cpSlice(texts.get(s.source_name)!, s.start_pos, s.end_pos));
  });
});
