/**
 * Unit tests for src/exchange/textExtraction.ts. Every fixture is written to a temporary directory at test time
 * (the .docx and .odt with jszip, the .pdf with pdf-lib), so no binary fixture is committed.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import JSZip from 'jszip';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { ToolError } from '../../../src/core/errors';
import { extractFile, SUPPORTED_EXTENSIONS } from '../../../src/exchange/textExtraction';

const REPO_ROOT = path.resolve(__dirname, '../../..');
const CORPUS_DIR = path.resolve(REPO_ROOT, '../shared/corpus/transcripts');

/** Asserts that `promise` rejects with a ToolError SOURCE_IMPORT_FAILED whose message matches `pattern`. */
async function assertImportFails(promise: Promise<unknown>, pattern?: RegExp): Promise<void> {
  await assert.rejects(promise, (e: unknown) => {
    assert.ok(e instanceof ToolError, `expected a ToolError, got ${String(e)}`);
    assert.equal(e.code, 'SOURCE_IMPORT_FAILED');
    if (pattern) assert.match(e.message, pattern);
    return true;
  });
}

/**
 * A one-page PDF written by hand whose text "aba" uses a Type3 font with 1-bit bitmap glyphs (as old TeX
 * output does). pdf.js turns such glyphs into paths with `DOMMatrix` while extracting text.
 */
function type3BitmapPdf(): Buffer {
  const glyph = Buffer.concat([
    Buffer.from('1000 0 0 0 1000 1000 d1\nq 1000 0 0 1000 0 0 cm\nBI /IM true /W 8 /H 8 /BPC 1 ID ', 'latin1'),
    Buffer.from([0x3c, 0x42, 0x81, 0x81, 0x81, 0x81, 0x42, 0x3c]),
    Buffer.from('\nEI Q\n', 'latin1'),
  ]);
  const content = Buffer.from('BT /F1 24 Tf 72 700 Td (aba) Tj ET\n', 'latin1');
  const stream = (data: Buffer): Buffer => Buffer.concat([Buffer.from(`<< /Length ${data.length} >>\nstream\n`, 'latin1'), data, Buffer.from('endstream')]);
  const objects: Buffer[] = [
    Buffer.from('<< /Type /Catalog /Pages 2 0 R >>'),
    Buffer.from('<< /Type /Pages /Kids [3 0 R] /Count 1 >>'),
    Buffer.from('<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>'),
    stream(content),
    Buffer.from(
      '<< /Type /Font /Subtype /Type3 /FontBBox [0 0 1000 1000] /FontMatrix [0.001 0 0 0.001 0 0] ' +
        '/CharProcs << /a 6 0 R /b 6 0 R >> /Encoding << /Type /Encoding /Differences [97 /a /b] >> ' +
        '/FirstChar 97 /LastChar 98 /Widths [1000 1000] /Resources << >> >>',
    ),
    stream(glyph),
  ];
  const parts: Buffer[] = [Buffer.from('%PDF-1.4\n')];
  let length = parts[0]!.length;
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(length);
    const obj = Buffer.concat([Buffer.from(`${i + 1} 0 obj\n`), body, Buffer.from('\nendobj\n')]);
    parts.push(obj);
    length += obj.length;
  });
  const xref =
    `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n` +
    offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('') +
    `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${length}\n%%EOF\n`;
  parts.push(Buffer.from(xref, 'latin1'));
  return Buffer.concat(parts);
}

describe('exchange/textExtraction', () => {
  let dir: string;

  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'marginalia-extract-'));
  });

  after(() => {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** Writes `data` to `name` in the temp dir and returns the absolute path. */
  function write(name: string, data: string | Uint8Array): string {
    const p = path.join(dir, name);
    fs.writeFileSync(p, data);
    return p;
  }

  describe('plain text', () => {
    it('returns a .txt exactly: CRLF, non-ASCII and an emoji kept', async () => {
      const text = 'Interviewer: Grüß Gott, señora.\r\nRespondent: Ça va 😀 — 北京\r\n\r\n  indented line  \n';
      const p = write('crlf.txt', text);
      const r = await extractFile(p);
      assert.equal(r.type, 'text');
      assert.equal(r.mime, 'text/plain');
      assert.equal(r.text, text);
      assert.equal(r.sizeBytes, Buffer.byteLength(text, 'utf8'));
    });

    it('strips a UTF-8 BOM from a .txt', async () => {
      const p = write('bom.txt', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('after BOM\n')]));
      const r = await extractFile(p);
      assert.equal(r.text, 'after BOM\n');
      assert.equal(r.sizeBytes, 13);
    });

    it('reads .md as text/markdown and matches the extension case-insensitively', async () => {
      const md = '# Title\n\n*emphasis*\n';
      const r = await extractFile(write('NOTES.MD', md));
      assert.equal(r.type, 'text');
      assert.equal(r.mime, 'text/markdown');
      assert.equal(r.text, md);
      const t = await extractFile(write('UPPER.TXT', 'x'));
      assert.equal(t.mime, 'text/plain');
      assert.equal(t.text, 'x');
    });

    it('rejects invalid UTF-8 and names the byte offset', async () => {
      const p = write('latin1.txt', Buffer.from([0x61, 0x62, 0x63, 0xe9, 0x74, 0xe9]));
      await assertImportFails(extractFile(p), /not valid UTF-8.*offset 3/);
    });

    it('rejects a lone surrogate encoded in UTF-8 (CESU) and a truncated sequence', async () => {
      await assertImportFails(extractFile(write('cesu.md', Buffer.from([0x41, 0xed, 0xa0, 0x80]))), /offset 1/);
      await assertImportFails(extractFile(write('trunc.txt', Buffer.from([0x41, 0x42, 0xf0, 0x9f, 0x98]))), /offset 2/);
    });
  });

  describe('docx', () => {
    it('extracts the paragraphs with mammoth', async () => {
      const zip = new JSZip();
      zip.file(
        '[Content_Types].xml',
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>' +
          '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">' +
          '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>' +
          '<Default Extension="xml" ContentType="application/xml"/>' +
          '<Override PartName="/word/document.xml" ' +
          'ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>' +
          '</Types>',
      );
      zip.file(
        '_rels/.rels',
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>' +
          '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">' +
          '<Relationship Id="rId1" ' +
          'Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" ' +
          'Target="word/document.xml"/></Relationships>',
      );
      zip.file(
        'word/document.xml',
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>' +
          '<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>' +
          '<w:p><w:r><w:t>First paragraph</w:t></w:r></w:p>' +
          '<w:p><w:r><w:t xml:space="preserve">Second — café </w:t></w:r><w:r><w:t>😀 &amp; more</w:t></w:r></w:p>' +
          '</w:body></w:document>',
      );
      const p = write('doc.docx', await zip.generateAsync({ type: 'uint8array' }));
      const r = await extractFile(p);
      assert.equal(r.type, 'text');
      assert.equal(r.mime, 'application/vnd.openxmlformats-officedocument.wordprocessingml.document');
      assert.equal(r.text, 'First paragraph\n\nSecond — café 😀 & more\n\n');
      assert.equal(r.sizeBytes, fs.statSync(p).size);
    });

    it('rejects a .docx that is not a ZIP', async () => {
      await assertImportFails(extractFile(write('broken.docx', 'not a zip at all')), /broken\.docx/);
    });
  });

  describe('odt', () => {
    it('joins text:p and text:h with newlines and expands text:s, text:tab, text:line-break', async () => {
      const zip = new JSZip();
      zip.file('mimetype', 'application/vnd.oasis.opendocument.text', { compression: 'STORE' });
      zip.file(
        'content.xml',
        '<?xml version="1.0" encoding="UTF-8"?>\n' +
          '<office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" ' +
          'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" office:version="1.3">\n' +
          ' <office:body>\n  <office:text>\n' +
          '   <text:sequence-decls><text:sequence-decl text:display-outline-level="0" text:name="Table"/></text:sequence-decls>\n' +
          '   <text:h text:outline-level="1">Heading</text:h>\n' +
          '   <text:p text:style-name="P1">Hello<text:s text:c="3"/>world<text:tab/>tabbed<text:line-break/>' +
          'next &amp; <text:span text:style-name="T1">span</text:span> caf&#233;</text:p>\n' +
          '   <text:list><text:list-item><text:p>Item one</text:p></text:list-item></text:list>\n' +
          '   <text:p>  leading   collapsed\n   spaces <text:note text:note-class="footnote">' +
          '<text:note-citation>1</text:note-citation><text:note-body><text:p>footnote</text:p></text:note-body>' +
          '</text:note>end</text:p>\n' +
          '   <text:p/>\n' +
          '   <text:p>a <text:s/> b</text:p>\n' +
          '  </office:text>\n </office:body>\n</office:document-content>\n',
      );
      const p = write('doc.odt', await zip.generateAsync({ type: 'uint8array' }));
      const r = await extractFile(p);
      assert.equal(r.type, 'text');
      assert.equal(r.mime, 'application/vnd.oasis.opendocument.text');
      assert.equal(r.text, 'Heading\nHello   world\ttabbed\nnext & span café\nItem one\nleading collapsed spaces end\n\na   b');
    });

    it('rejects an .odt without content.xml', async () => {
      const zip = new JSZip();
      zip.file('mimetype', 'application/vnd.oasis.opendocument.text');
      const p = write('empty.odt', await zip.generateAsync({ type: 'uint8array' }));
      await assertImportFails(extractFile(p), /content\.xml/);
    });
  });

  describe('pdf', () => {
    it('extracts the text of two pages joined with a blank line', async () => {
      const pdf = await PDFDocument.create();
      const font = await pdf.embedFont(StandardFonts.Helvetica);
      pdf.addPage([400, 300]).drawText('Hello from page one', { x: 40, y: 200, size: 14, font });
      pdf.addPage([400, 300]).drawText('Second page text', { x: 40, y: 200, size: 14, font });
      const p = write('two-pages.pdf', await pdf.save());
      const r = await extractFile(p);
      assert.equal(r.type, 'pdf');
      assert.equal(r.mime, 'application/pdf');
      assert.equal(r.text, 'Hello from page one\n\nSecond page text');
      assert.equal(r.sizeBytes, fs.statSync(p).size);
    });

    it('extracts text set in a Type3 bitmap font and leaves globalThis.DOMMatrix as it was', async () => {
      const before = (globalThis as { DOMMatrix?: unknown }).DOMMatrix;
      const r = await extractFile(write('type3.pdf', type3BitmapPdf()));
      assert.equal(r.type, 'pdf');
      assert.equal(r.text, 'aba');
      assert.equal((globalThis as { DOMMatrix?: unknown }).DOMMatrix, before);
    });

    it('rejects a .pdf that is not a PDF', async () => {
      await assertImportFails(extractFile(write('fake.pdf', 'hello, I am not a PDF')), /fake\.pdf/);
    });
  });

  describe('rtf', () => {
    it("extracts text with \\'hh and \\u escapes and skips the font table", async () => {
      const rtf =
        '{\\rtf1\\ansi\\ansicpg1252\\deff0{\\fonttbl{\\f0\\fswiss\\fcharset0 Arial;}{\\f1\\froman\\fcharset0 Times New Roman;}}\r\n' +
        '{\\colortbl ;\\red255\\green0\\blue0;}{\\*\\generator Hand 1.0;}\r\n' +
        "\\viewkind4\\uc1\\pard\\f0\\fs20 Caf\\'e9 costs 5\\u8364? today.\\par\r\n" +
        'Second {\\b bold} line\\par\r\n}';
      const p = write('note.rtf', rtf);
      const r = await extractFile(p);
      assert.equal(r.type, 'text');
      assert.equal(r.mime, 'application/rtf');
      assert.equal(r.text, 'Café costs 5€ today.\nSecond bold line\n');
    });

    it('honours font charsets, surrogate pairs, \\ucN, fields, footnotes, hidden text and escapes', async () => {
      const rtf =
        '{\\rtf1\\ansi\\ansicpg1252\\deff0{\\fonttbl{\\f0\\fnil\\fcharset204 Arial Cyr;}{\\f1\\fnil\\fcharset0 Arial;}}' +
        '{\\info{\\title Secret title}{\\author Someone}}' +
        "\\f0 \\'cf\\'f0\\'e8\\'e2\\'e5\\'f2 {\\f1 caf\\'e9}\\par " +
        "\\uc1\\u-10179?\\u-8704?{\\uc2\\u8364\\'80\\'80}\\uc0\\u8364 \\tab x\\~y\\emdash " +
        '{\\field{\\*\\fldinst HYPERLINK "http://example.org"}{\\fldrslt link}}' +
        '{\\footnote {\\fs16 a footnote}}{\\v hidden}{\\*\\unknowndest junk}\\par\n' +
        '\\{braces\\} back\\\\slash\\line end}';
      const r = await extractFile(write('rich.rtf', rtf));
      assert.equal(r.text, 'Привет café\n😀€€\tx\u00A0y—link\n{braces} back\\slash\nend');
    });

    it('decodes a double-byte document code page (\\ansicpg932)', async () => {
      const r = await extractFile(write('sjis.rtf', "{\\rtf1\\ansi\\ansicpg932\\deff0 \\'82\\'a0\\'82\\'a2}"));
      assert.equal(r.text, 'あい');
    });

    it('rejects a .rtf that is not RTF', async () => {
      await assertImportFails(extractFile(write('plain.rtf', 'just text')), /not an RTF file/);
    });
  });

  describe('media', () => {
    it('registers an .mp3 as audio with no text', async () => {
      const p = write('clip.mp3', Buffer.from([0x49, 0x44, 0x33, 0x04, 0x00, 0x00, 0xff, 0xfb]));
      const r = await extractFile(p);
      assert.deepEqual(r, { type: 'audio', mime: 'audio/mpeg', text: null, sizeBytes: 8 });
    });

    it('gives video and image kinds and MIME types by extension, case-insensitively', async () => {
      const cases: Array<[string, string, string]> = [
        ['a.MOV', 'video', 'video/quicktime'],
        ['b.mkv', 'video', 'video/x-matroska'],
        ['c.JPG', 'image', 'image/jpeg'],
        ['d.tif', 'image', 'image/tiff'],
        ['e.m4a', 'audio', 'audio/mp4'],
      ];
      for (const [name, type, mime] of cases) {
        const r = await extractFile(write(name, 'xx'));
        assert.deepEqual(r, { type, mime, text: null, sizeBytes: 2 }, name);
      }
    });

    it('lists every supported extension in lower case with a dot', () => {
      for (const ext of SUPPORTED_EXTENSIONS) assert.match(ext, /^\.[a-z0-9]+$/);
      for (const ext of [
        '.txt',
        '.md',
        '.docx',
        '.odt',
        '.rtf',
        '.pdf',
        '.mp3',
        '.wav',
        '.m4a',
        '.ogg',
        '.flac',
        '.aac',
        '.mp4',
        '.mov',
        '.webm',
        '.mkv',
        '.avi',
        '.png',
        '.jpg',
        '.jpeg',
        '.gif',
        '.webp',
        '.tif',
        '.tiff',
        '.bmp',
      ]) {
        assert.ok(SUPPORTED_EXTENSIONS.includes(ext), ext);
      }
      assert.equal(SUPPORTED_EXTENSIONS.length, 25);
    });
  });

  describe('errors', () => {
    it('rejects an unsupported extension', async () => {
      await assertImportFails(extractFile(write('data.xyz', 'abc')), /Unsupported file type "\.xyz"/);
    });

    it('rejects a missing file', async () => {
      await assertImportFails(extractFile(path.join(dir, 'does-not-exist.txt')), /File not found/);
    });

    it('rejects a relative path', async () => {
      await assertImportFails(extractFile('relative/notes.txt'), /must be absolute/);
    });

    it('rejects a directory', async () => {
      const sub = path.join(dir, 'folder.txt');
      fs.mkdirSync(sub, { recursive: true });
      await assertImportFails(extractFile(sub), /is a directory/);
    });
  });

  describe('shared corpus transcripts', () => {
    it('extracts every .txt exactly as fs reads it (minus a BOM)', async function () {
      if (!fs.existsSync(CORPUS_DIR)) {
        if (process.env.CI === 'true') {
          assert.fail(`corpus directory ${CORPUS_DIR} is missing (required when CI=true)`);
        }
        console.log(`    skipped: corpus directory ${CORPUS_DIR} does not exist`);
        this.skip();
      }
      const files = fs.readdirSync(CORPUS_DIR).filter((f) => f.toLowerCase().endsWith('.txt'));
      assert.ok(files.length > 0, `no .txt files in ${CORPUS_DIR}`);
      for (const f of files) {
        const p = path.join(CORPUS_DIR, f);
        const expected = fs.readFileSync(p, 'utf8').replace(/^\uFEFF/, '');
        const r = await extractFile(p);
        assert.equal(r.type, 'text', f);
        assert.equal(r.text, expected, f);
        assert.equal(r.sizeBytes, fs.statSync(p).size, f);
      }
    });
  });
});
