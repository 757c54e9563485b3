/**
 * REFI-QDA on fixtures built here with jszip, one per defect class of issue 15 (items 3, 4, 5 and 10): qc-style
 * plain-text paths without `internal://`; missing source files (import succeeds with a report; `strict: true`
 * refuses); a codable parent code with children whose names the import must keep apart (export -> re-import:
 * same number of `Code` elements, same GUIDs); names over 100 characters; a selection outside its text; ATLAS.ti-
 * style selections whose offsets drifted from the quote in their `name` (or `Description`); source
 * `VariableValue`s of every type (document attributes, imported and exported typed); texts beginning with one and two U+FEFF. Every export is validated against the
 * official Project.xsd with xmllint.
 *
 * Expected values come from the fixture's own text (indexOf, spread into code points), never from the importer.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import JSZip from 'jszip';
import { openFixture, snapshot, type Fixture } from '../domain/projectFixture';
import { readRefiQda } from '../../../src/exchange/refiQda/refiImport';
import { PROJECT_XSD, requireXmllint, xmllintValidate } from './xmlSchema';

/** A GUID made from a number, so fixtures can refer to their items. */
const g = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

/** A project.qde around `body`, written by `origin`. */
function qde(body: string, origin = 'qc 1.3.2'): string {
  return `<?xml version="1.0" encoding="utf-8"?><Project xmlns="urn:QDA-XML:project:1.0" name="fixture" origin="${origin}">${body}</Project>`;
}

/** XML-escapes an attribute value or text; CR as a character reference, which XML's line-end handling would drop (XML 1.0 section 2.11). */
function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/\r/g, '&#13;');
}

/** Writes a .qdpx holding `project.qde` and `files` (entry -> text, UTF-8, or bytes) at `file`. */
async function writeQdpx(file: string, xml: string, files: Record<string, string | Buffer> = {}): Promise<string> {
  const zip = new JSZip();
  zip.file('project.qde', xml);
  for (const [entry, data] of Object.entries(files)) zip.file(entry, data);
  fs.writeFileSync(file, await zip.generateAsync({ type: 'nodebuffer' }));
  return file;
}

/** Code point range `[start, end)` of `needle` in `text` (searching from UTF-16 index `from`). */
function cpRange(text: string, needle: string, from = 0): [number, number] {
  const u = text.indexOf(needle, from);
  assert.ok(u >= 0, `"${needle}" is not in the text`);
  const start = [...text.slice(0, u)].length;
  return [start, start + [...needle].length];
}

/** A selection of `codeGuids` at `[start, end)`, with optional `name` and `Description`. */
function selection(guid: string, [start, end]: [number, number], codeGuids: string[], opts: { name?: string; description?: string } = {}): string {
  const name = opts.name === undefined ? '' : ` name="${esc(opts.name)}"`;
  const desc = opts.description === undefined ? '' : `<Description>${esc(opts.description)}</Description>`;
  const codings = codeGuids.map((c, i) => `<Coding guid="${guid.slice(0, -3)}${String(900 + i)}"><CodeRef targetGUID="${c}"/></Coding>`).join('');
  return `<PlainTextSelection guid="${guid}"${name} startPosition="${start}" endPosition="${end}">${desc}${codings}</PlainTextSelection>`;
}

/** Exports the fixture's project as REFI-QDA, validates project.qde against Project.xsd, and returns the zip and its XML. */
async function exportValid(fx: Fixture, name = 'out.qdpx'): Promise<{ file: string; zip: JSZip; xml: string; result: any }> {
  const file = path.join(fx.dir, name);
  const result = await fx.ok('export_data', { format: 'refi_qda', output_path: file });
  const zip = await JSZip.loadAsync(fs.readFileSync(file));
  const xml = await zip.file('project.qde')!.async('string');
  const v = xmllintValidate(xml, PROJECT_XSD);
  assert.ok(v.ok, `the export validates against Project.xsd:\n${v.output}`);
  return { file, zip, xml, result };
}

/** The `Code` elements of a document: GUID, name, codable flag and the parent element's GUID, in document order. */
function codeElements(xml: string): { guid: string; name: string; codable: boolean; parent: string | null }[] {
  const out: { guid: string; name: string; codable: boolean; parent: string | null }[] = [];
  const stack: string[] = [];
  for (const m of xml.matchAll(/<Code\b([^>]*?)(\/?)>|<\/Code>/g)) {
    if (m[0] === '</Code>') {
      stack.pop();
      continue;
    }
    const a = m[1] as string;
    const guid = (/\bguid="([^"]+)"/.exec(a)?.[1] as string).toLowerCase();
    const name = (/\bname="([^"]*)"/.exec(a)?.[1] ?? '')
      .replace(/&quot;/g, '"')
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&amp;/g, '&');
    out.push({ guid, name, codable: /\bisCodable="true"/.test(a), parent: stack.length > 0 ? (stack[stack.length - 1] as string) : null });
    if (m[2] !== '/') stack.push(guid);
  }
  return out;
}

/** Segment texts of the project, with their code and source names, sorted. */
function segmentRows(fx: Fixture): { source: string; code: string; start_pos: number; end_pos: number; text: string; memo: string | null }[] {
  return fx.handle.store.all(
    'SELECT s.name AS source, c.name AS code, g.start_pos, g.end_pos, g.text, g.memo FROM segments g JOIN sources s ON s.id = g.source_id JOIN codes c ON c.id = g.code_id ORDER BY s.name, g.start_pos, c.name',
  );
}

describe('exchange/refiQda fixtures (issue 15)', function () {
  this.timeout(120_000);
  let fx: Fixture;
  let other: Fixture | undefined;
  beforeEach(async () => {
    fx = await openFixture();
  });
  afterEach(async () => {
    await fx?.close();
    await other?.close();
    other = undefined;
  });

  describe('qc-style plain-text paths', () => {
    const A = 'First interview: the garden started in spring.';
    const B = 'Second interview: nobody waters on Sundays.';
    const C = 'Third: a text at the archive root.';
    const body = () =>
      `<CodeBook><Codes><Code guid="${g(1)}" name="Garden" isCodable="true"/></Codes></CodeBook><Sources>` +
      `<TextSource guid="${g(10)}" name="A" plainTextPath="sources/a.txt">${selection(g(11), cpRange(A, 'the garden'), [g(1)])}</TextSource>` +
      `<TextSource guid="${g(20)}" name="B" plainTextPath="b.txt">${selection(g(21), cpRange(B, 'nobody waters'), [g(1)])}</TextSource>` +
      `<TextSource guid="${g(30)}" name="C" plainTextPath="./root.txt">${selection(g(31), cpRange(C, 'archive root'), [g(1)])}</TextSource>` +
      `</Sources>`;

    it('reads paths without internal:// from the archive, relative to its root or to its sources folder', async () => {
      const file = await writeQdpx(path.join(fx.dir, 'qc.qdpx'), qde(body()), { 'sources/a.txt': A, 'sources/b.txt': B, 'root.txt': C });
      const r = await fx.ok('import_data', { format: 'refi_qda', source_path: file });
      assert.equal(r.created.sources, 3);
      assert.deepEqual(r.missing_sources, []);
      assert.deepEqual(
        segmentRows(fx).map((s) => s.text),
        ['the garden', 'nobody waters', 'archive root'],
      );
      assert.equal(fx.handle.store.get<{ content: string }>("SELECT content FROM sources WHERE name = 'B'")?.content, B);
    });

    it('reads them beside a bare .qde too (the path relative to its folder or to its sources folder)', async () => {
      const dir = path.join(fx.dir, 'bare');
      fs.mkdirSync(path.join(dir, 'sources'), { recursive: true });
      fs.writeFileSync(path.join(dir, 'project.qde'), qde(body()));
      fs.writeFileSync(path.join(dir, 'sources', 'a.txt'), A);
      fs.writeFileSync(path.join(dir, 'sources', 'b.txt'), B);
      fs.writeFileSync(path.join(dir, 'root.txt'), C);
      const r = await fx.ok('import_data', { format: 'refi_qda', source_path: path.join(dir, 'project.qde') });
      assert.equal(r.created.sources, 3);
      assert.equal(r.created.segments, 3);
    });
  });

  describe('missing source files', () => {
    const TEXT = 'Present text about buses and trains.';
    /** Two text sources, one of them missing, with everything else a project holds around them. */
    const xml = () =>
      qde(
        `<Users><User guid="${g(90)}" name="Ana"/></Users>` +
          `<CodeBook><Codes><Code guid="${g(1)}" name="Transport" isCodable="true"><Description>moving around</Description><Code guid="${g(2)}" name="Bus" isCodable="true"/></Code>` +
          `<Code guid="${g(3)}" name="Rail" isCodable="true"><NoteRef targetGUID="${g(70)}"/></Code></Codes></CodeBook>` +
          `<Variables><Variable guid="${g(60)}" name="age" typeOfVariable="Integer"/></Variables>` +
          `<Cases><Case guid="${g(50)}" name="P01"><VariableValue><VariableRef targetGUID="${g(60)}"/><IntegerValue>44</IntegerValue></VariableValue>` +
          `<SourceRef targetGUID="${g(10)}"/><SourceRef targetGUID="${g(20)}"/></Case></Cases>` +
          `<Sources>` +
          `<TextSource guid="${g(10)}" name="Present" plainTextPath="internal://present.txt">${selection(g(11), cpRange(TEXT, 'buses'), [g(2)])}</TextSource>` +
          `<TextSource guid="${g(20)}" name="Gone interview" plainTextPath="internal://gone.txt">` +
          `${selection(g(21), [5, 17], [g(2), g(3)])}${selection(g(22), [30, 41], [g(1)])}<Coding guid="${g(29)}"><CodeRef targetGUID="${g(3)}"/></Coding></TextSource>` +
          `</Sources>` +
          `<Notes><Note guid="${g(70)}" name="rail memo"><PlainTextContent>trains are late</PlainTextContent></Note></Notes>` +
          `<Sets><Set guid="${g(80)}" name="a set"><MemberCode guid="${g(1)}"/></Set></Sets>`,
      );

    it('imports everything else and lists the missing source with the codings it could not place', async () => {
      const file = await writeQdpx(path.join(fx.dir, 'gone.qdpx'), xml(), { 'sources/present.txt': TEXT });
      const r = await fx.ok('import_data', { format: 'refi_qda', source_path: file });
      assert.deepEqual(r.created, { categories: 1, codes: 3, folders: 0, sources: 1, segments: 1, cases: 1 });
      assert.equal(r.missing_sources.length, 1);
      const m = r.missing_sources[0];
      assert.equal(m.source, 'Gone interview');
      assert.equal(m.guid, g(20));
      assert.equal(m.file_missing, true);
      assert.match(m.where, /gone\.txt/);
      assert.deepEqual(m.selections, [
        { selection_guid: g(21), start_position: 5, end_position: 17, codes: ['Bus', 'Rail'] },
        { selection_guid: g(22), start_position: 30, end_position: 41, codes: ['Transport'] },
        { selection_guid: null, start_position: null, end_position: null, codes: ['Rail'] },
      ]);
      assert.ok(
        r.warnings.some((w: string) => w.includes("'Gone interview'") && w.includes("'Bus'") && w.includes("'Rail'") && w.includes("'Transport'")),
        r.warnings.join('\n'),
      );
      assert.equal(r.skipped.codings_of_sources_without_text, 4);
      // the rest is there: codebook with its memos (description, note), the present source and its coding, the case with its attribute and source
      assert.equal(fx.handle.store.get<{ memo: string }>("SELECT memo FROM codes WHERE name = 'Transport'")?.memo, 'moving around');
      assert.equal(fx.handle.store.get<{ memo: string }>("SELECT memo FROM codes WHERE name = 'Rail'")?.memo, 'trains are late');
      assert.deepEqual(
        segmentRows(fx).map((s) => [s.source, s.code, s.text]),
        [['Present', 'Bus', 'buses']],
      );
      assert.equal(fx.handle.store.get<{ value_number: number }>("SELECT value_number FROM case_attributes WHERE name = 'age'")?.value_number, 44);
      assert.deepEqual(
        fx.handle.store.all<{ source: string }>('SELECT s.name AS source FROM case_sources m JOIN sources s ON s.id = m.source_id').map((x) => x.source),
        ['Present'],
      );
      assert.equal(
        fx.handle.store.get<{ guid: string }>("SELECT guid FROM exchange_guids WHERE kind = 'user' AND local_id = 'Ana'")?.guid,
        g(90),
        "the file's coder keeps its GUID",
      );
    });

    it('strict: true refuses the whole import with IMPORT_FAILED and writes nothing', async () => {
      const file = await writeQdpx(path.join(fx.dir, 'gone.qdpx'), xml(), { 'sources/present.txt': TEXT });
      const before = await snapshot(fx);
      const out = await fx.fails('import_data', { format: 'refi_qda', source_path: file, strict: true }, 'IMPORT_FAILED');
      assert.match(out.envelope.success ? '' : out.envelope.error, /missing.*gone\.txt/);
      assert.deepEqual(await snapshot(fx), before);
      await fx.fails('import_data', { format: 'qualcoder', source_path: file, strict: true }, 'INVALID_ARGUMENTS');
    });
  });

  describe('a codable parent code with children', () => {
    const TEXT = 'Parents talk about teachers and other parents.';
    /** Two codable parents whose names clash across branches (the import must rename them) and a leaf of the same name. */
    const xml = () =>
      qde(
        `<CodeBook><Codes>` +
          `<Code guid="${g(1)}" name="Parents" isCodable="true" color="#112233"><Description>about parents</Description>` +
          `<Code guid="${g(2)}" name="Other" isCodable="true"><Code guid="${g(3)}" name="x" isCodable="true"/></Code></Code>` +
          `<Code guid="${g(4)}" name="Teachers" isCodable="true">` +
          `<Code guid="${g(5)}" name="Other" isCodable="true"><Code guid="${g(6)}" name="y" isCodable="true"/></Code></Code>` +
          `<Code guid="${g(7)}" name="Folder" isCodable="false"><Code guid="${g(8)}" name="Other" isCodable="true"/></Code>` +
          `</Codes></CodeBook>` +
          `<Sources><TextSource guid="${g(10)}" name="S"><PlainTextContent>${TEXT}</PlainTextContent>` +
          `${selection(g(11), cpRange(TEXT, 'Parents'), [g(1)])}${selection(g(12), cpRange(TEXT, 'teachers'), [g(4), g(5)])}${selection(g(13), cpRange(TEXT, 'other parents'), [g(2), g(8)])}` +
          `</TextSource></Sources>`,
        'MAXQDA 24',
      );

    it('exports as one Code each (same count, same GUIDs, same nesting), and imports back the same', async function () {
      requireXmllint(this);
      const file = path.join(fx.dir, 'parents.qde');
      fs.writeFileSync(file, xml());
      const inTree = codeElements(xml());
      const r = await fx.ok('import_data', { format: 'refi_qda', source_path: file });
      assert.equal(r.created.segments, 5);
      const first = await exportValid(fx);
      const outTree = codeElements(first.xml);
      assert.equal(outTree.length, inTree.length, 'as many Code elements out as in');
      const shape = (t: typeof inTree) => t.map((c) => `${c.guid} ${c.codable} ${c.parent ?? '-'}`).sort();
      assert.deepEqual(shape(outTree), shape(inTree), 'the same GUIDs, codable flags and parents');
      // the codings still name the parents' GUIDs
      for (const guid of [g(1), g(4), g(5), g(2), g(8)]) assert.match(first.xml, new RegExp(`<CodeRef targetGUID="${guid}"/>`));

      other = await openFixture();
      const again = await other.ok('import_data', { format: 'refi_qda', source_path: first.file });
      assert.equal(again.created.codes, 7);
      assert.equal(again.created.segments, 5);
      const second = await exportValid(other, 'again.qdpx');
      assert.deepEqual(shape(codeElements(second.xml)), shape(inTree), 'and again after a second round');
      assert.deepEqual(
        codeElements(second.xml)
          .map((c) => c.name)
          .sort(),
        codeElements(first.xml)
          .map((c) => c.name)
          .sort(),
      );
    });
  });

  describe('a codable parent edited after import', () => {
    it('still exports as one Code with its GUID: a category memo is added to the Description, a code name that differs is said', async function () {
      requireXmllint(this);
      const file = path.join(fx.dir, 'p.qde');
      fs.writeFileSync(
        file,
        qde(
          `<CodeBook><Codes><Code guid="${g(1)}" name="Parents" isCodable="true"><Description>code memo</Description><Code guid="${g(2)}" name="Kid" isCodable="true"/></Code></Codes></CodeBook>`,
        ),
      );
      await fx.ok('import_data', { format: 'refi_qda', source_path: file });
      const category = fx.handle.store.get<{ id: number }>("SELECT id FROM categories WHERE name = 'Parents'")!;
      const code = fx.handle.store.get<{ id: number }>("SELECT id FROM codes WHERE name = 'Parents'")!;
      await fx.ok('update_category_memo', { category_id: category.id, memo: 'folder memo' });
      await fx.ok('rename_code', { code_id: code.id, new_name: 'Parents (as a code)' });
      const out = await exportValid(fx);
      const codes = codeElements(out.xml);
      assert.deepEqual(
        codes.map((c) => [c.guid, c.name, c.codable, c.parent]),
        [
          [g(1), 'Parents', true, null],
          [g(2), 'Kid', true, g(1)],
        ],
      );
      assert.match(out.xml, /<Description>code memo\n\nfolder memo<\/Description>/);
      assert.ok(
        out.result.warnings.some((w: string) => /category 'Parents' and its code 'Parents \(as a code\)'.*memo/.test(w)),
        out.result.warnings.join('\n'),
      );
      assert.ok(
        out.result.warnings.some((w: string) => /written with the category's name/.test(w)),
        out.result.warnings.join('\n'),
      );
    });
  });

  describe('names over 100 characters', () => {
    it("are cut to the codebook's 100 code points with a warning naming them and an entry in renamed", async function () {
      requireXmllint(this);
      // 150 code points, astral characters among them (UTF-16 length differs)
      const long = [...'Experiences of waiting for the bus 🚌 and what people do meanwhile; '.repeat(3)].slice(0, 150).join('');
      const parent = [...`P ${long}`].slice(0, 150).join('');
      assert.equal([...long].length, 150);
      assert.equal([...parent].length, 150);
      const cut = (s: string) => [...s].slice(0, 100).join('').trim();
      const TEXT = 'waiting and waiting';
      const file = path.join(fx.dir, 'long.qde');
      fs.writeFileSync(
        file,
        qde(
          `<CodeBook><Codes><Code guid="${g(1)}" name="${esc(parent)}" isCodable="true"><Code guid="${g(2)}" name="${esc(long)}" isCodable="true"/></Code></Codes></CodeBook>` +
            `<Sources><TextSource guid="${g(10)}" name="S"><PlainTextContent>${TEXT}</PlainTextContent>${selection(g(11), [0, 7], [g(2)])}${selection(g(12), [12, 19], [g(1)])}</TextSource></Sources>`,
        ),
      );
      const r = await fx.ok('import_data', { format: 'refi_qda', source_path: file });
      assert.deepEqual(
        r.renamed.filter((x: any) => x.from === long),
        [{ kind: 'code', from: long, to: cut(long) }],
      );
      assert.deepEqual(
        r.renamed.filter((x: any) => x.from === parent).sort((a: any, b: any) => a.kind.localeCompare(b.kind)),
        [
          { kind: 'category', from: parent, to: cut(parent) },
          { kind: 'code', from: parent, to: cut(parent) },
        ],
      );
      const named = r.warnings.filter((w: string) => /has 150 characters, more than the 100/.test(w));
      assert.equal(named.length, 3, r.warnings.join('\n'));
      assert.ok(named.some((w: string) => w.startsWith("The code name 'Experiences of waiting")));
      assert.deepEqual(
        fx.handle.store.all<{ name: string }>('SELECT name FROM codes ORDER BY name').map((c) => c.name),
        [cut(long), cut(parent)].sort(),
      );
      // the cut parent still exports as one element
      const out = await exportValid(fx);
      assert.equal(codeElements(out.xml).length, 2);
    });
  });

  describe('warnings name their source and code', () => {
    it('a selection outside its text, with invalid positions or invalid times', async () => {
      const file = path.join(fx.dir, 'outside.qde');
      fs.writeFileSync(
        file,
        qde(
          `<CodeBook><Codes><Code guid="${g(1)}" name="Weather" isCodable="true"/><Code guid="${g(2)}" name="Mood" isCodable="true"/></Codes></CodeBook>` +
            `<Sources><TextSource guid="${g(10)}" name="Diary 3"><PlainTextContent>rainy day 🌧 again</PlainTextContent>` +
            `${selection(g(11), [6, 40], [g(1), g(2)])}${selection(g(12), [0, 5], [g(1)])}${selection(g(13), [3, 'x' as unknown as number], [g(2)])}</TextSource>` +
            `<AudioSource guid="${g(20)}" name="Walk"><AudioSelection guid="${g(21)}" begin="5000" end="4000"><Coding guid="${g(22)}"><CodeRef targetGUID="${g(2)}"/></Coding></AudioSelection></AudioSource></Sources>`,
        ),
      );
      const r = await fx.ok('import_data', { format: 'refi_qda', source_path: file });
      assert.equal(r.created.segments, 1);
      assert.ok(
        r.warnings.some((w: string) => w.startsWith(`selection ${g(11)} of codes 'Weather', 'Mood' in source 'Diary 3' is outside its text (17 code points)`)),
        r.warnings.join('\n'),
      );
      assert.ok(
        r.warnings.some((w: string) => w.startsWith(`selection ${g(13)} of code 'Mood' in source 'Diary 3' has invalid positions`)),
        r.warnings.join('\n'),
      );
      assert.ok(
        r.warnings.some((w: string) => w.startsWith(`audio selection ${g(21)} of code 'Mood' in source 'Walk' has invalid times`)),
        r.warnings.join('\n'),
      );
      assert.deepEqual(
        r.anchoring.unplaceable.map((e: any) => [e.source, e.code, e.stored_start_pos, e.stored_end_pos]),
        [
          ['Diary 3', 'Weather', 6, 40],
          ['Diary 3', 'Mood', 6, 40],
        ],
      );
      assert.equal(r.anchoring_counts.unplaceable, 2);
    });
  });

  describe('re-anchoring by quote (ATLAS.ti selection names, quoting Descriptions)', () => {
    // the text as coded, then edited: words inserted before the codings moved every later position
    const ORIGINAL = 'Intro.\nThe bus never comes on time, she said.\nWe shared a\r\nshed later. Then the rain came.';
    const EDITED = 'Intro (edited, 22 ch).\nThe bus never comes on time, she said.\nWe shared a\r\nshed later. Then the rain came.';

    it('moves a selection to its quote, reports it with source and code names, and leaves non-quotes alone', async () => {
      const quote1 = 'The bus never comes on time';
      const drifted1 = cpRange(ORIGINAL, quote1);
      const quote2 = 'shared a shed'; // the text has a CRLF where the quote has a space
      const drifted2 = cpRange(ORIGINAL, 'shared a\r\nshed');
      const notFound = 'The tram is always late!!!'; // as long as its selection, but nowhere in the text
      const stay = cpRange(EDITED, 'Then the rain');
      const file = path.join(fx.dir, 'atlas.qde');
      fs.writeFileSync(
        file,
        qde(
          `<CodeBook><Codes><Code guid="${g(1)}" name="Transport" isCodable="true"/><Code guid="${g(2)}" name="Sharing" isCodable="true"/><Code guid="${g(3)}" name="Weather" isCodable="true"/></Codes></CodeBook>` +
            `<Sources><TextSource guid="${g(10)}" name="Interview 7"><PlainTextContent>${esc(EDITED)}</PlainTextContent>` +
            selection(g(11), drifted1, [g(1)], { name: quote1 }) +
            selection(g(12), drifted2, [g(2)], { description: quote2 }) +
            selection(g(13), [drifted1[0], drifted1[0] + [...notFound].length], [g(3)], { name: notFound }) +
            selection(g(14), stay, [g(3)], { name: 'Q7', description: 'memo: she laughs' }) +
            `</TextSource></Sources>`,
          'ATLAS.ti 8.4',
        ),
      );
      const r = await fx.ok('import_data', { format: 'refi_qda', source_path: file });
      const [s1, e1] = cpRange(EDITED, quote1);
      const [s2, e2] = cpRange(EDITED, 'shared a\r\nshed');
      assert.deepEqual(r.anchoring.reanchored, [
        { source: 'Interview 7', code: 'Transport', start_pos: s1, end_pos: e1, stored_start_pos: drifted1[0], stored_end_pos: drifted1[1], quote: quote1 },
        { source: 'Interview 7', code: 'Sharing', start_pos: s2, end_pos: e2, stored_start_pos: drifted2[0], stored_end_pos: drifted2[1], quote: quote2 },
      ]);
      assert.deepEqual(
        r.anchoring.kept_offsets.map((e: any) => [e.source, e.code, e.start_pos, e.quote]),
        [['Interview 7', 'Weather', drifted1[0], notFound]],
      );
      assert.deepEqual(r.anchoring_counts, { reanchored: 2, kept_offsets: 1, unplaceable: 0 });
      const rows = segmentRows(fx);
      // by position: the kept one (at the stored offsets, before the others), the two moved ones, the untouched one
      assert.deepEqual(
        rows.map((x) => [x.code, x.text, x.memo]),
        [
          ['Weather', [...EDITED].slice(drifted1[0], drifted1[0] + [...notFound].length).join(''), null],
          ['Transport', quote1, null],
          ['Sharing', 'shared a\r\nshed', null],
          ['Weather', 'Then the rain', 'memo: she laughs'],
        ],
      );
      assert.ok(!r.warnings.some((w: string) => /outside/.test(w)));
    });

    it('leaves a selection whose name is its text (or the start of it) where it is', async () => {
      const TEXT = 'Alpha beta gamma delta epsilon.';
      const file = path.join(fx.dir, 'exact.qde');
      fs.writeFileSync(
        file,
        qde(
          `<CodeBook><Codes><Code guid="${g(1)}" name="C" isCodable="true"/></Codes></CodeBook>` +
            `<Sources><TextSource guid="${g(10)}" name="S"><PlainTextContent>${TEXT} ${TEXT}</PlainTextContent>` +
            selection(g(11), cpRange(TEXT, 'gamma delta'), [g(1)], { name: 'gamma delta' }) +
            selection(g(12), cpRange(TEXT, 'beta gamma delta epsilon'), [g(1)], { name: 'beta gamma' }) +
            `</TextSource></Sources>`,
          'ATLAS.ti 8.4',
        ),
      );
      const r = await fx.ok('import_data', { format: 'refi_qda', source_path: file });
      assert.deepEqual(r.anchoring_counts, { reanchored: 0, kept_offsets: 0, unplaceable: 0 });
      assert.deepEqual(
        segmentRows(fx).map((x) => [x.start_pos, x.text]),
        [
          [cpRange(TEXT, 'beta')[0], 'beta gamma delta epsilon'],
          [cpRange(TEXT, 'gamma')[0], 'gamma delta'],
        ],
      );
    });
  });

  describe('document attributes (VariableValues of sources)', () => {
    /** The document attributes of a project, by source name, typed as stored. */
    const documentAttributes = (f: Fixture) =>
      f.handle.store.all(
        'SELECT s.name AS source, a.name, a.type, a.value_text, a.value_number, a.value_date, a.value_boolean FROM source_attributes a JOIN sources s ON s.id = a.source_id ORDER BY s.name, a.name',
      );
    const value = (variable: number, element: string, literal: string) =>
      `<VariableValue><VariableRef targetGUID="${g(variable)}"/><${element}>${literal}</${element}></VariableValue>`;

    it('imports every type as a typed document attribute and exports them back, typed, with their Variables', async function () {
      requireXmllint(this);
      const xml = qde(
        `<Variables><Variable guid="${g(60)}" name="interviewer" typeOfVariable="Text"/><Variable guid="${g(61)}" name="consented" typeOfVariable="Boolean"/>` +
          `<Variable guid="${g(62)}" name="age" typeOfVariable="Integer"/><Variable guid="${g(63)}" name="hours" typeOfVariable="Float"/>` +
          `<Variable guid="${g(64)}" name="recorded on" typeOfVariable="Date"/><Variable guid="${g(65)}" name="recorded at" typeOfVariable="DateTime"/></Variables>` +
          `<Cases><Case guid="${g(50)}" name="P01">${value(62, 'IntegerValue', '44')}<SourceRef targetGUID="${g(10)}"/></Case></Cases>` +
          `<Sources><TextSource guid="${g(10)}" name="Interview 1"><PlainTextContent>first</PlainTextContent>` +
          value(60, 'TextValue', 'Ana Müller &amp; Bo') +
          value(61, 'BooleanValue', 'true') +
          value(62, 'IntegerValue', '44') +
          value(63, 'FloatValue', '2.5') +
          value(64, 'DateValue', '2024-05-01') +
          value(65, 'DateTimeValue', '2024-05-01T10:30:00Z') +
          `</TextSource><TextSource guid="${g(20)}" name="Interview 2"><PlainTextContent>second</PlainTextContent>` +
          value(61, 'BooleanValue', '0') +
          value(62, 'IntegerValue', '61') +
          value(63, 'FloatValue', '0.75') +
          `</TextSource></Sources>`,
        'MAXQDA 24',
      );
      const file = path.join(fx.dir, 'vars.qde');
      fs.writeFileSync(file, xml);
      const r = await fx.ok('import_data', { format: 'refi_qda', source_path: file });
      assert.equal(r.source_attributes_set, 9);
      assert.equal(r.attributes_set, 1);
      const row = (
        source: string,
        name: string,
        type: string,
        v: Partial<Record<'value_text' | 'value_number' | 'value_date' | 'value_boolean', unknown>>,
      ) => ({
        source,
        name,
        type,
        value_text: null,
        value_number: null,
        value_date: null,
        value_boolean: null,
        ...v,
      });
      const expected = [
        row('Interview 1', 'age', 'number', { value_number: 44 }),
        row('Interview 1', 'consented', 'boolean', { value_boolean: 1 }),
        row('Interview 1', 'hours', 'number', { value_number: 2.5 }),
        row('Interview 1', 'interviewer', 'text', { value_text: 'Ana Müller & Bo' }),
        row('Interview 1', 'recorded at', 'date', { value_date: '2024-05-01T10:30:00Z' }),
        row('Interview 1', 'recorded on', 'date', { value_date: '2024-05-01' }),
        row('Interview 2', 'age', 'number', { value_number: 61 }),
        row('Interview 2', 'consented', 'boolean', { value_boolean: 0 }),
        row('Interview 2', 'hours', 'number', { value_number: 0.75 }),
      ];
      assert.deepEqual(documentAttributes(fx), expected);
      assert.deepEqual(fx.handle.store.all('SELECT name FROM cases'), [{ name: 'P01' }], 'no case is made for a source');

      const out = await exportValid(fx);
      const variables = [...out.xml.matchAll(/<Variable guid="([^"]+)" name="([^"]+)" typeOfVariable="([^"]+)"\/>/g)].map((m) => [m[1], m[2], m[3]]);
      assert.deepEqual(
        variables.sort((a, b) => (a[1] as string).localeCompare(b[1] as string)),
        [
          [g(62), 'age', 'Integer'],
          [g(61), 'consented', 'Boolean'],
          [g(63), 'hours', 'Float'],
          [g(60), 'interviewer', 'Text'],
          [g(65), 'recorded at', 'DateTime'],
          [g(64), 'recorded on', 'Date'],
        ],
        'one Variable per name, typed, with the GUID the file gave it',
      );
      // the element's content with the writer's indentation between tags removed
      const interview1 = (/<TextSource\b[^>]*name="Interview 1"[^>]*>([\s\S]*?)<\/TextSource>/.exec(out.xml)?.[1] ?? '').replace(/>\s+</g, '><');
      for (const literal of [
        `${value(60, 'TextValue', 'Ana Müller &amp; Bo')}`,
        `${value(61, 'BooleanValue', 'true')}`,
        `${value(62, 'IntegerValue', '44')}`,
        `${value(63, 'FloatValue', '2.5')}`,
        `${value(64, 'DateValue', '2024-05-01')}`,
        `${value(65, 'DateTimeValue', '2024-05-01T10:30:00Z')}`,
      ]) {
        assert.ok(interview1.includes(literal), `Interview 1 carries ${literal}`);
      }

      other = await openFixture();
      const again = await other.ok('import_data', { format: 'refi_qda', source_path: out.file });
      assert.equal(again.source_attributes_set, 9);
      assert.deepEqual(documentAttributes(other), expected, 'the same attributes, typed, after export and import');
    });

    it('drops the values of a source whose text is missing, and counts them', async () => {
      const xml = qde(
        `<Variables><Variable guid="${g(62)}" name="age" typeOfVariable="Integer"/></Variables>` +
          `<Sources><TextSource guid="${g(10)}" name="Gone" plainTextPath="internal://gone.txt">${value(62, 'IntegerValue', '44')}</TextSource></Sources>`,
      );
      const file = await writeQdpx(path.join(fx.dir, 'gone.qdpx'), xml);
      const r = await fx.ok('import_data', { format: 'refi_qda', source_path: file });
      assert.equal(r.skipped.variable_values_of_sources_without_text, 1);
      assert.deepEqual(documentAttributes(fx), []);
    });
  });

  describe('texts beginning with U+FEFF', () => {
    const ONE = '\uFEFFOne mark, then words.';
    const TWO = '\uFEFF\uFEFFTwo marks, then words.';

    it('a text file whose text begins with one or two U+FEFF after its signature keeps them, and the coded text is exact', async () => {
      const body = qde(
        `<CodeBook><Codes><Code guid="${g(1)}" name="C" isCodable="true"/></Codes></CodeBook><Sources>` +
          `<TextSource guid="${g(10)}" name="One" plainTextPath="internal://one.txt">${selection(g(11), cpRange(ONE, 'words'), [g(1)])}${selection(g(12), [0, 4], [g(1)])}</TextSource>` +
          `<TextSource guid="${g(20)}" name="Two" plainTextPath="internal://two.txt">${selection(g(21), cpRange(TWO, 'words'), [g(1)])}${selection(g(22), [0, 5], [g(1)])}</TextSource>` +
          `<TextSource guid="${g(30)}" name="Inline"><PlainTextContent>${TWO}</PlainTextContent>${selection(g(31), cpRange(TWO, 'marks'), [g(1)])}</TextSource>` +
          `</Sources>`,
        'ATLAS.ti 8.4',
      );
      // the files: UTF-8 signature (EF BB BF), then the text, whose own U+FEFF are further EF BB BF
      const file = await writeQdpx(path.join(fx.dir, 'bom.qdpx'), body, {
        'sources/one.txt': Buffer.from(`\uFEFF${ONE}`, 'utf8'),
        'sources/two.txt': Buffer.from(`\uFEFF${TWO}`, 'utf8'),
      });
      const plan = await readRefiQda(file);
      assert.deepEqual(
        plan.sources.map((s) => s.text),
        [ONE, TWO, TWO],
      );
      assert.deepEqual(
        plan.segments.map((s) => [...(plan.sources.find((x) => x.ref === s.source)?.text ?? '')].slice(s.start_pos, s.end_pos).join('')),
        ['words', '\uFEFFOne', 'words', '\uFEFF\uFEFFTwo', 'marks'],
      );
      const r = await fx.ok('import_data', { format: 'refi_qda', source_path: file });
      assert.equal(r.created.segments, 5);
      const stored = fx.handle.store.all<{ name: string; content: string }>('SELECT name, content FROM sources ORDER BY name');
      assert.deepEqual(stored, [
        { name: 'Inline', content: TWO },
        { name: 'One', content: ONE },
        { name: 'Two', content: TWO },
      ]);
      assert.deepEqual(
        segmentRows(fx).map((x) => [x.source, x.text]),
        [
          ['Inline', 'marks'],
          ['One', '\uFEFFOne'],
          ['One', 'words'],
          ['Two', '\uFEFF\uFEFFTwo'],
          ['Two', 'words'],
        ],
      );
    });

    it("round-trips through export and import: the text files carry a signature before the text's own marks", async function () {
      requireXmllint(this);
      const code = await fx.ok('create_code', { name: 'C', color: '#4E79A7' });
      for (const [name, text] of [
        ['One', ONE],
        ['Two', TWO],
      ] as const) {
        const s = await fx.ok('add_text_source', { name, content: text });
        const [a, b] = cpRange(text, 'words');
        await fx.ok('apply_code', { code_id: code.code_id, source_id: s.source_id, start_pos: 0, end_pos: [...text].indexOf(' ') });
        await fx.ok('apply_code', { code_id: code.code_id, source_id: s.source_id, start_pos: a, end_pos: b });
      }
      const before = segmentRows(fx);
      assert.deepEqual(
        before.map((x) => x.text),
        ['\uFEFFOne', 'words', '\uFEFF\uFEFFTwo', 'words'],
      );
      const out = await exportValid(fx);
      for (const [name, text] of [
        ['One', ONE],
        ['Two', TWO],
      ] as const) {
        const guid = new RegExp(`<TextSource guid="([^"]+)" name="${name}"`).exec(out.xml)?.[1];
        const bytes = await out.zip.file(`sources/${guid}.txt`)!.async('nodebuffer');
        assert.deepEqual(bytes, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text, 'utf8')]), `${name}: signature + text`);
      }
      other = await openFixture();
      await other.ok('import_data', { format: 'refi_qda', source_path: out.file });
      assert.deepEqual(other.handle.store.all<{ name: string; content: string }>('SELECT name, content FROM sources ORDER BY name'), [
        { name: 'One', content: ONE },
        { name: 'Two', content: TWO },
      ]);
      assert.deepEqual(segmentRows(other), before);
    });
  });
});
