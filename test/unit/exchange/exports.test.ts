/**
 * export_data's plain formats (codebook, html, segments_csv, qdc), its output-path checks and
 * suggest_export_format (src/exchange/exports.ts, src/tools/exchangeTools.ts), through the tool pipeline on a
 * real project file.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { csvField, escapeHtml } from '../../../src/exchange/exports';
import { openFixture, type Fixture } from '../domain/projectFixture';
import { requireXmllint, writeCodebookXsd, xmllintValidate } from './xmlSchema';

/** A source text with every character HTML and CSV care about, line breaks of both kinds and emoji. */
const TEXT = 'Intro, "quoted" & <b>bold</b> it\'s\r\n<script>alert("x")</script>\nemoji 👩🏽‍🌾 then tail.';

function cpRange(text: string, needle: string): { start_pos: number; end_pos: number } {
  const u = text.indexOf(needle);
  assert.ok(u >= 0, needle);
  const start = [...text.slice(0, u)].length;
  return { start_pos: start, end_pos: start + [...needle].length };
}

/** Parses RFC 4180 CSV (quoted fields, doubled quotes, CRLF records). */
function parseCsv(csv: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < csv.length; i++) {
    const c = csv[i] as string;
    if (quoted) {
      if (c === '"' && csv[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\r' && csv[i + 1] === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      i++;
    } else field += c;
  }
  assert.equal(field, '', 'the file ends with CRLF');
  return rows;
}

/** Codes and categories, a source with tricky text, overlapping codings with memos. */
async function build(fx: Fixture) {
  const feelings = await fx.ok('create_category', { name: 'Feelings', memo: 'How people feel\nabout the garden' });
  const calm = await fx.ok('create_category', { name: 'Calm', parent_id: feelings.category_id });
  const joy = await fx.ok('create_code', { name: 'Joy <b>', color: '#59A14F', memo: 'Delight, "fun"', category_id: feelings.category_id });
  const peace = await fx.ok('create_code', { name: 'Peace', color: '#4E79A7', category_id: calm.category_id });
  const risk = await fx.ok('create_code', { name: 'Risk', color: '#E15759' });
  const src = await fx.ok('add_text_source', { name: 'Interview <1>', content: TEXT });
  await fx.ok('batch_apply_codes', {
    operations: [
      { code_id: joy.code_id, source_id: src.source_id, ...cpRange(TEXT, '"quoted" & <b>bold</b>'), memo: 'memo, with comma\r\nand "quotes"' },
      { code_id: peace.code_id, source_id: src.source_id, ...cpRange(TEXT, "<b>bold</b> it's") },
      { code_id: risk.code_id, source_id: src.source_id, ...cpRange(TEXT, '<script>alert("x")</script>') },
      { code_id: joy.code_id, source_id: src.source_id, ...cpRange(TEXT, '👩🏽‍🌾 then') },
    ],
  });
  return { joy, peace, risk, src };
}

describe('exchange/exports', function () {
  this.timeout(60_000);
  let fx: Fixture;
  beforeEach(async () => {
    fx = await openFixture();
  });
  afterEach(async () => {
    await fx.close();
  });
  const out = (name: string) => path.join(fx.dir, name);

  describe('codebook', () => {
    it('indents categories and codes, with colours, counts and memos (include_memos defaults to true)', async () => {
      await build(fx);
      const r = await fx.ok('export_data', { format: 'codebook', output_path: out('book.txt') });
      assert.equal(r.counts.codes, 3);
      const lines = fs.readFileSync(out('book.txt'), 'utf8').split('\n');
      assert.equal(lines[0], 'Codebook: p');
      assert.match(lines[1] as string, /^3 code\(s\) in 2 categories; exported .* by alice from Marginalia$/);
      assert.deepEqual(lines.slice(3), [
        'Feelings/',
        '  Memo: How people feel',
        '        about the garden',
        '  Calm/',
        '    Peace  [#4E79A7]  (1 coding)',
        '  Joy <b>  [#59A14F]  (2 codings)',
        '    Memo: Delight, "fun"',
        'Risk  [#E15759]  (1 coding)',
        '',
      ]);
    });

    it('leaves memos out with include_memos false, and fails with EXPORT_FAILED "no codes" on an empty codebook', async () => {
      const empty = await fx.fails('export_data', { format: 'codebook', output_path: out('empty.txt') }, 'EXPORT_FAILED');
      assert.match(empty.envelope.success ? '' : empty.envelope.error, /no codes/);
      await fx.fails('export_data', { format: 'qdc', output_path: out('empty.qdc') }, 'EXPORT_FAILED');
      assert.equal(fs.existsSync(out('empty.txt')), false);
      await build(fx);
      await fx.ok('export_data', { format: 'codebook', output_path: out('book.txt'), include_memos: false });
      const text = fs.readFileSync(out('book.txt'), 'utf8');
      assert.doesNotMatch(text, /Memo:/);
      assert.match(text, /^ {2}Joy <b> {2}\[#59A14F\]/m);
    });
  });

  describe('html', () => {
    it('shows a source containing <script> as text: every character escaped, no script anywhere', async () => {
      await build(fx);
      await fx.ok('export_data', { format: 'html', output_path: out('coded.html') });
      const html = fs.readFileSync(out('coded.html'), 'utf8');
      assert.doesNotMatch(html, /<script/i, 'no script element, not even the one in the source');
      assert.match(html, /&lt;script&gt;alert\(&quot;x&quot;\)&lt;\/script&gt;/);
      assert.match(html, /<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">/);
      // the source's text, tags removed and entities decoded, is exactly the stored text
      const body = /<div class="text">([\s\S]*?)<\/div>/.exec(html)?.[1];
      assert.ok(body);
      assert.doesNotMatch(body.replace(/<\/?mark\b[^>]*>/g, ''), /[<>]/, 'only <mark> tags inside the text');
      const decoded = body
        .replace(/<\/?mark\b[^>]*>/g, '')
        .replace(/&(amp|lt|gt|quot|#39);/g, (_, e: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" })[e] as string);
      assert.equal(decoded, TEXT);
      // overlapping codings: the overlap is one run carrying both codes
      assert.match(html, /<mark style="[^"]*box-shadow:inset 0 -3px 0 #4E79A7[^"]*" title="Joy &lt;b&gt;; Peace">&lt;b&gt;bold&lt;\/b&gt;<\/mark>/);
      assert.match(html, /title="Risk">&lt;script&gt;/);
    });

    it('has a legend of every code with its colour, and fails without sources', async () => {
      await fx.fails('export_data', { format: 'html', output_path: out('none.html') }, 'EXPORT_FAILED');
      await build(fx);
      await fx.ok('export_data', { format: 'html', output_path: out('coded.htm') });
      const html = fs.readFileSync(out('coded.htm'), 'utf8');
      const legend = /<section class="legend">([\s\S]*?)<\/section>/.exec(html)?.[1] ?? '';
      for (const [name, color] of [
        ['Joy &lt;b&gt;', '#59A14F'],
        ['Peace', '#4E79A7'],
        ['Risk', '#E15759'],
      ]) {
        assert.match(legend, new RegExp(`background-color:${color}"></span><strong>${name}</strong>`), name);
      }
      assert.match(legend, /Feelings \/ Calm/, 'with its category path');
      assert.match(html, /<h2>Interview &lt;1&gt;<\/h2>/);
    });

    it('escapeHtml escapes the five characters HTML gives a meaning to', () => {
      assert.equal(escapeHtml(`<a href="x">Tom & 'Jerry'</a>`), '&lt;a href=&quot;x&quot;&gt;Tom &amp; &#39;Jerry&#39;&lt;/a&gt;');
    });
  });

  describe('segments_csv', () => {
    it('writes one RFC 4180 row per segment that reads back to exactly the stored values', async () => {
      await fx.fails('export_data', { format: 'segments_csv', output_path: out('none.csv') }, 'EXPORT_FAILED');
      await build(fx);
      const r = await fx.ok('export_data', { format: 'segments_csv', output_path: out('segments.csv') });
      assert.equal(r.counts.rows, 4);
      const csv = fs.readFileSync(out('segments.csv'), 'utf8');
      assert.ok(!csv.startsWith('\uFEFF'));
      const rows = parseCsv(csv);
      assert.deepEqual(rows[0], [
        'source',
        'code',
        'start',
        'end',
        'text',
        'memo',
        'coder',
        'created_at',
        'category',
        'unit',
        'segment_id',
        'source_id',
        'code_id',
      ]);
      const stored = fx.handle.store.all<Record<string, string | number | null>>(
        `SELECT s.name AS source, c.name AS code, g.start_pos, g.end_pos, g.text, g.memo, g.owner, g.created_at, g.id
         FROM segments g JOIN sources s ON s.id = g.source_id JOIN codes c ON c.id = g.code_id ORDER BY g.start_pos, g.end_pos, g.id`,
      );
      assert.equal(rows.length - 1, stored.length);
      for (const [i, g] of stored.entries()) {
        const row = rows[i + 1] as string[];
        assert.deepEqual(row.slice(0, 8), [g.source, g.code, String(g.start_pos), String(g.end_pos), g.text, g.memo ?? '', g.owner, g.created_at]);
        assert.equal(row[9], 'code_points');
        assert.equal(row[10], String(g.id));
      }
      assert.equal(rows[1]![8], 'Feelings', "the code's category path");
    });

    it('quotes exactly the fields that need it', () => {
      assert.equal(csvField('plain'), 'plain');
      assert.equal(csvField('a,b'), '"a,b"');
      assert.equal(csvField('say "hi"'), '"say ""hi"""');
      assert.equal(csvField('two\r\nlines'), '"two\r\nlines"');
      assert.equal(csvField('lf\nonly'), '"lf\nonly"');
      assert.equal(csvField(null), '');
      assert.equal(csvField(42), '42');
    });
  });

  describe('qdc', () => {
    it('validates against Codebook.xsd (REFI-QDA 1.5, section 5.2) in the exact namespace', async function () {
      requireXmllint(this);
      await build(fx);
      const r = await fx.ok('export_data', { format: 'qdc', output_path: out('book.qdc') });
      assert.deepEqual(r.counts, { codes: 3, categories: 2 });
      const xml = fs.readFileSync(out('book.qdc'), 'utf8');
      assert.match(xml, /<CodeBook xmlns="urn:QDA-XML:codebook:1\.0" origin="Marginalia">/);
      const v = xmllintValidate(xml, writeCodebookXsd(fx.dir));
      assert.ok(v.ok, v.output);
      assert.match(xml, /<Code guid="[^"]+" name="Feelings" isCodable="false">\s*<Description>How people feel\nabout the garden<\/Description>/);
      assert.match(xml, /<Code guid="[^"]+" name="Joy &lt;b&gt;" isCodable="true" color="#59A14F">/);
    });
  });

  describe('output paths and formats', () => {
    it('refuses bad paths with EXPORT_FAILED and the reason, writing nothing', async () => {
      const { src } = await build(fx);
      void src;
      const file = path.join(fx.dir, 'transcript.txt');
      fs.writeFileSync(file, 'hello');
      await fx.ok('import_file_source', { file_path: file });
      fs.mkdirSync(path.join(fx.dir, 'node_modules'));
      fs.mkdirSync(path.join(fx.dir, 'folder.html'));
      fs.mkdirSync(path.join(fx.dir, '.marginalia'), { recursive: true });
      const cases: [string, string, RegExp][] = [
        ['codebook', 'relative/book.txt', /absolute/],
        ['codebook', out('book.csv'), /must end with \.txt/],
        ['refi_qda', out('project.zip'), /\.qdpx/],
        ['html', path.join(fx.dir, 'node_modules', 'x.html'), /node_modules/],
        ['html', path.join(fx.dir, 'missing', 'x.html'), /does not exist/],
        ['html', path.join(fx.dir, 'folder.html'), /folder/],
        ['codebook', file, /source of the project/],
        ['codebook', path.join(fx.dir, '.marginalia', 'book.txt'), /\.marginalia/],
      ];
      for (const [format, output_path, why] of cases) {
        const r = await fx.fails('export_data', { format, output_path }, 'EXPORT_FAILED');
        assert.match(r.envelope.success ? '' : r.envelope.error, why, output_path);
      }
      assert.equal(fs.readFileSync(file, 'utf8'), 'hello', 'the source file is untouched');
      assert.equal(fs.existsSync(path.join(fx.dir, 'node_modules', 'x.html')), false);
      await fx.fails('export_data', { format: 'pdf', output_path: out('x.pdf') }, 'UNKNOWN_FORMAT');
      await fx.fails('export_data', { format: 'docx', output_path: out('x.docx') }, 'UNKNOWN_FORMAT');
    });

    it('replaces an existing file atomically, leaving no temporary file behind', async () => {
      await build(fx);
      fs.writeFileSync(out('book.txt'), 'old');
      await fx.ok('export_data', { format: 'codebook', output_path: out('book.txt') });
      assert.match(fs.readFileSync(out('book.txt'), 'utf8'), /^Codebook: p/);
      assert.deepEqual(
        fs.readdirSync(fx.dir).filter((f) => f.endsWith('.tmp')),
        [],
      );
    });
  });

  describe('suggest_export_format', () => {
    const cases: [string, string][] = [
      ['send the whole project to a colleague who uses NVivo', 'refi_qda'],
      ['open it in ATLAS.ti', 'refi_qda'],
      ['MAXQDA', 'refi_qda'],
      ['codebook review with my supervisor', 'codebook'],
      ['import the codebook into another tool as qdc', 'qdc'],
      ['print the coded interviews to read them on paper', 'html'],
      ['statistics in R', 'segments_csv'],
      ['count codes per participant with Python and pandas', 'segments_csv'],
      ['open the codings in Excel', 'segments_csv'],
      ['something else entirely', 'refi_qda'],
    ];
    for (const [useCase, format] of cases) {
      it(`"${useCase}" -> ${format}`, async () => {
        const r = await fx.ok('suggest_export_format', { use_case: useCase });
        assert.equal(r.recommended, format);
        assert.ok(r.reasons.length > 0 && r.reasons.every((x: string) => x.length > 20));
        assert.equal(r.formats.length, 5);
      });
    }

    it('says why, names the alternatives and what this project would give', async () => {
      const r = await fx.ok('suggest_export_format', { use_case: 'review the codebook, then analyse frequencies in R' });
      assert.ok(['codebook', 'segments_csv'].includes(r.recommended));
      assert.deepEqual(
        r.alternatives.map((a: { format: string }) => a.format).sort(),
        ['codebook', 'segments_csv'].filter((f) => f !== r.recommended),
      );
      assert.ok(
        r.notes.some((n: string) => /no codes yet/.test(n)),
        'the empty project is noted',
      );
      // "r" only as a word: "report" or "read" do not mean R
      const read = await fx.ok('suggest_export_format', { use_case: 'read the report' });
      assert.ok(!read.matched.includes('r'));
    });
  });
});
