/**
 * The QualCoder importer (src/exchange/importers/qualcoder.ts) on issue 15's defect classes (items 1, 3, 5):
 * texts that begin with one and with two U+FEFF, file attributes as document attributes, and codings
 * re-anchored by their `seltext`. Fixtures are QualCoder v8 databases built here with sql.js (the tables as
 * the corpus project mannheimer_recoded_data.qda holds them); the corpus project itself is read from
 * ../shared/corpus. Expected values are written by hand or queried from the fixture, never computed by the
 * importer.
 */
import assert from 'node:assert/strict';
import * as path from 'node:path';
import type { Database } from 'sql.js';
import { qualcoderImporter } from '../../../src/exchange/importers/qualcoder';
import { requireCorpus } from '../../helpers/serverProcess';
import { openFixture, type Fixture } from '../domain/projectFixture';
import { allSegments, cpLength, cpSlice, query, run, sqliteFile, type Row } from './sqliteFixtures';

/** QualCoder v8's tables the importer reads (as `sqlite_master` of the corpus project lists them). */
const QUALCODER_SCHEMA = `
CREATE TABLE project (databaseversion text, date text, memo text, about text, bookmarkfile integer, bookmarkpos integer, codername text);
CREATE TABLE source (id integer primary key, name text, fulltext text, mediapath text, memo text, owner text, date text, av_text_id integer, risid integer, unique(name));
CREATE TABLE code_name (cid integer primary key, name text, memo text, catid integer, owner text, date text, color text, unique(name));
CREATE TABLE code_cat (catid integer primary key, name text, owner text, date text, memo text, supercatid integer, unique(name));
CREATE TABLE code_text (ctid integer primary key, cid integer, fid integer, seltext text, pos0 integer, pos1 integer, owner text, date text, memo text, avid integer, important integer, unique(cid, fid, pos0, pos1, owner));
CREATE TABLE cases (caseid integer primary key, name text, memo text, owner text, date text, constraint ucm unique(name));
CREATE TABLE case_text (id integer primary key, caseid integer, fid integer, pos0 integer, pos1 integer, owner text, date text, memo text);
CREATE TABLE attribute_type (name text primary key, date text, owner text, memo text, caseOrFile text, valuetype text);
CREATE TABLE attribute (attrid integer primary key, name text, attr_type text, value text, id integer, date text, owner text, unique(name, attr_type, id));
CREATE TABLE annotation (anid integer primary key, fid integer, pos0 integer, pos1 integer, memo text, owner text, date text, unique(fid, pos0, pos1, owner));
CREATE TABLE journal (jid integer primary key, name text, jentry text, date text, owner text, unique(name));
CREATE TABLE code_image (imid integer primary key, id integer, x1 integer, y1 integer, width integer, height integer, cid integer, memo text, date text, owner text, important integer);
CREATE TABLE code_av (avid integer primary key, id integer, pos0 integer, pos1 integer, cid integer, memo text, date text, owner text, important integer);
INSERT INTO project VALUES ('v8', '2026-11-26 08:00:00', NULL, 'QualCoder 3.6', NULL, NULL, 'default');
`;

/** A new QualCoder project database `name` in `dir`, with `fill` run on it. */
const qualcoderFile = (dir: string, name: string, fill: (db: Database) => void) => sqliteFile(dir, name, QUALCODER_SCHEMA, fill);

const SOURCE = 'INSERT INTO source (id, name, fulltext, mediapath, memo, owner) VALUES (?, ?, ?, ?, ?, ?)';
const CODE = 'INSERT INTO code_name (cid, name, memo, catid, owner, color) VALUES (?, ?, ?, ?, ?, ?)';
const CODING = 'INSERT INTO code_text (cid, fid, seltext, pos0, pos1, owner, memo, important) VALUES (?, ?, ?, ?, ?, ?, ?, ?)';

describe('exchange QualCoder importer: exact text, file attributes, re-anchoring', function () {
  this.timeout(120_000);
  let fx: Fixture;
  beforeEach(async () => {
    fx = await openFixture();
  });
  afterEach(async () => {
    await fx.close();
  });

  it('texts beginning with one and with two U+FEFF: every coding has its seltext, lengths equal, and a second import reuses the sources', async () => {
    const one = '\uFEFFQ: How do you store the data?\nA: On a shared drive.';
    const two = '\uFEFF\uFEFF\nQR02: We reuse data when the consent allows it.';
    const file = await qualcoderFile(fx.dir, 'bom.qda', (db) => {
      run(db, SOURCE, [1, 'one BOM', one, null, null, 'default'], [2, 'two BOMs', two, null, null, 'default']);
      run(db, CODE, [1, 'storage', null, null, 'default', '#AABBCC'], [2, 'consent', null, null, 'default', '#112233']);
      // QualCoder counts Python characters: the BOMs are counted
      run(
        db,
        CODING,
        [1, 1, 'Q: How', 1, 7, 'default', null, 0],
        [1, 1, 'On a shared drive.', 34, 52, 'default', null, 1],
        [2, 2, 'QR02', 3, 7, 'default', null, 0],
        [2, 2, 'when the consent allows it', 23, 49, 'default', null, 0],
      );
    });
    assert.equal(cpSlice(one, 34, 52), 'On a shared drive.');
    assert.equal(cpSlice(two, 23, 49), 'when the consent allows it');
    const r = await fx.ok('import_data', { format: 'qualcoder', source_path: file });
    assert.equal(r.created.segments, 4);
    assert.deepEqual(r.anchoring_counts, { reanchored: 0, kept_offsets: 0, unplaceable: 0 });
    assert.deepEqual(r.warnings, []);
    const stored = await query(file, 'SELECT seltext, pos0, pos1 FROM code_text ORDER BY ctid');
    assert.deepEqual((await allSegments(fx)).map((s) => [s.start_pos, s.end_pos, s.text]).sort(), stored.map((c) => [c.pos0, c.pos1, c.seltext]).sort());
    for (const s of (await fx.ok('list_sources')).sources as Row[]) {
      const expected = s.name === 'one BOM' ? one : two;
      assert.equal(s.length, cpLength(expected), s.name);
      const page = await fx.ok('read_source_content', { source_id: s.source_id });
      assert.equal(page.content, expected);
      assert.equal(page.total_length, cpLength(page.content));
    }
    const again = await fx.ok('import_data', { format: 'qualcoder', source_path: file });
    assert.equal(again.reused.sources, 2, 'the same file again: same text, not "different text"');
    assert.equal(again.reused.segments, 4);
  });

  it('file attributes (attribute_type caseOrFile = file, attribute attr_type = file) become typed document attributes', async () => {
    const file = await qualcoderFile(fx.dir, 'attrs.qda', (db) => {
      run(
        db,
        SOURCE,
        [1, 'QR02', 'first transcript', null, null, 'default'],
        [2, 'BSR01', 'second transcript', null, null, 'default'],
        [3, 'audio', null, '/media/a.mp3', null, 'default'],
      );
      run(
        db,
        'INSERT INTO attribute_type (name, caseOrFile, valuetype) VALUES (?, ?, ?)',
        ['year', 'file', 'numeric'],
        ['discipline', 'file', 'character'],
        ['duration', 'file', 'numeric'],
        ['age', 'case', 'numeric'],
      );
      run(
        db,
        'INSERT INTO attribute (name, attr_type, value, id) VALUES (?, ?, ?, ?)',
        ['year', 'file', '2023', 1],
        ['discipline', 'file', 'Sociology', 1],
        ['duration', 'file', '', 1],
        ['year', 'file', '2022', 2],
        ['discipline', 'file', 'Computer science', 2],
        ['duration', 'file', 'about an hour', 2],
        ['year', 'file', '2021', 3],
        ['year', 'file', '2020', 9],
        ['age', 'case', '40', 1],
      );
    });
    const r = await fx.ok('import_data', { format: 'qualcoder', source_path: file });
    assert.equal(r.created.sources, 2);
    assert.equal(r.source_attributes_set, 5);
    assert.equal(r.skipped.file_attributes, undefined, 'no longer merely counted');
    assert.equal(r.skipped.file_attributes_of_media_sources, 1);
    assert.equal(r.skipped.file_attributes_of_missing_sources, 1);
    const sources = new Map(((await fx.ok('list_sources')).sources as Row[]).map((s) => [s.name, s]));
    assert.deepEqual(sources.get('QR02')!.attributes, { year: 2023, discipline: 'Sociology' });
    assert.deepEqual(sources.get('QR02')!.attribute_types, { year: 'number', discipline: 'text' });
    assert.deepEqual(sources.get('BSR01')!.attributes, { year: 2022, discipline: 'Computer science', duration: 'about an hour' });
    assert.deepEqual(sources.get('BSR01')!.attribute_types, { year: 'number', discipline: 'text', duration: 'text' });
  });

  it('codings whose seltext drifted are re-anchored (nearest occurrence, white space normalised), others keep their offsets or are not imported; all named', async () => {
    const text = 'Interviewer: Tell me about reuse.\n\nParticipant: Reuse  is hard.\tReuse needs context.';
    const file = await qualcoderFile(fx.dir, 'drift.qda', (db) => {
      run(db, SOURCE, [1, 'QR06', text, null, null, 'default']);
      run(db, CODE, [1, 'reuse', null, null, 'default', null], [2, 'context', null, null, 'default', null], [3, 'missing', null, null, 'default', null]);
      run(
        db,
        CODING,
        [1, 1, 'Reuse is hard.', 47, 61, 'default', null, 0], // white space differs ("Reuse  is hard." at 48)
        [1, 1, 'Reuse', 63, 68, 'default', null, 0], // drifted by 1: the second "Reuse" is at 64
        [2, 1, 'needs context', 72, 85, 'default', null, 0], // drifted by 2 (and past the end): at 70
        [3, 1, 'data sharing', 0, 12, 'default', null, 0], // not in the text: kept
        [3, 1, 'data sharing', 80, 95, 'default', null, 0], // not in the text, past its end
      );
    });
    assert.equal(text.indexOf('Reuse  is hard.'), 48);
    assert.equal(text.indexOf('Reuse', 50), 64);
    assert.equal(text.indexOf('needs context'), 70);
    assert.equal(text.length, 84);
    const r = await fx.ok('import_data', { format: 'qualcoder', source_path: file });
    assert.equal(r.created.segments, 4);
    assert.equal(r.skipped.codings_outside_their_source, 1);
    assert.deepEqual(r.anchoring_counts, { reanchored: 3, kept_offsets: 1, unplaceable: 1 });
    assert.deepEqual(
      r.anchoring.reanchored.map((e: Row) => [e.source, e.code, e.stored_start_pos, e.stored_end_pos, e.start_pos, e.end_pos, e.quote]),
      [
        ['QR06', 'reuse', 47, 61, 48, 63, 'Reuse is hard.'],
        ['QR06', 'reuse', 63, 68, 64, 69, 'Reuse'],
        ['QR06', 'context', 72, 85, 70, 83, 'needs context'],
      ],
    );
    assert.deepEqual(r.anchoring.kept_offsets, [
      { source: 'QR06', code: 'missing', start_pos: 0, end_pos: 12, stored_start_pos: 0, stored_end_pos: 12, quote: 'data sharing' },
    ]);
    assert.deepEqual(r.anchoring.unplaceable, [
      { source: 'QR06', code: 'missing', start_pos: 80, end_pos: 95, stored_start_pos: 80, stored_end_pos: 95, quote: 'data sharing' },
    ]);
    for (const w of r.warnings) assert.match(w, /"QR06" \/ "(reuse|context|missing)"/, 'every warning names source and code');
    assert.ok(!r.warnings.some((w: string) => /differs from the source text at their offsets; the offsets were kept/.test(w)), 'the old warning is gone');
    assert.deepEqual((await allSegments(fx)).map((s) => [s.code_name, s.start_pos, s.end_pos, s.text]).sort(), [
      ['context', 70, 83, 'needs context'],
      ['missing', 0, 12, 'Interviewer:'],
      ['reuse', 48, 63, 'Reuse  is hard.'],
      ['reuse', 64, 69, 'Reuse'],
    ]);
  });

  it('the corpus project mannheimer_recoded_data.qda: every coding whose seltext is in its source lands on it', async function () {
    const file = path.join(requireCorpus(this, 'qualcoder'), 'mannheimer_recoded_data.qda');
    const r = await fx.ok('import_data', { format: 'qualcoder', source_path: file });
    const codings = await query(
      file,
      'SELECT t.seltext, s.name AS source, n.name AS code, s.fulltext FROM code_text t JOIN source s ON s.id = t.fid JOIN code_name n ON n.cid = t.cid WHERE s.fulltext IS NOT NULL',
    );
    const found = codings.filter((c) => String(c.fulltext).includes(c.seltext));
    const segments = await allSegments(fx);
    console.log(
      `      mannheimer: ${codings.length} codings, ${found.length} quotes found in their source; imported ${segments.length} segments; anchoring ${JSON.stringify(r.anchoring_counts)}`,
    );
    assert.equal(segments.length, codings.length);
    const have = new Map<string, number>();
    const key = (source: string, code: string, t: string) => `${source}|${code}|${t}`;
    for (const s of segments) have.set(key(s.source_name, s.code_name, s.text), (have.get(key(s.source_name, s.code_name, s.text)) ?? 0) + 1);
    for (const c of found) {
      const k = key(c.source, c.code, c.seltext);
      assert.ok((have.get(k) ?? 0) > 0, `a segment of ${c.code} on ${c.source} holds "${String(c.seltext).slice(0, 40)}"`);
      have.set(k, have.get(k)! - 1);
    }
  });

  it('reanchor: false (the bench baseline) keeps every stored offset inside the text unchecked', async () => {
    const file = await qualcoderFile(fx.dir, 'off.qda', (db) => {
      run(db, SOURCE, [1, 'S', 'alpha beta', null, null, 'default']);
      run(db, CODE, [1, 'c', null, null, 'default', null]);
      run(db, CODING, [1, 1, 'beta', 5, 9, 'default', null, 0]);
    });
    const on = await qualcoderImporter.plan(file, {});
    const off = await qualcoderImporter.plan(file, { reanchor: false });
    assert.deepEqual(
      on.segments.map((s) => [s.start_pos, s.end_pos]),
      [[6, 10]],
    );
    assert.deepEqual(
      off.segments.map((s) => [s.start_pos, s.end_pos]),
      [[5, 9]],
    );
    assert.equal(off.anchoring?.reanchored.length, 0);
  });
});
