/**
 * Plain-text files that are not UTF-8 imported as sources (issue 15, item 6): src/exchange/textEncoding.ts
 * directly, then import_file_source through the pipeline on a real project (the stored text read back with
 * read_source_content). Every fixture is written by the test: the legacy encodings by hand as bytes (the
 * expected text is the literal the bytes were written from), so the decoder under test computes nothing
 * the assertions compare with.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createPipeline, headlessHost, openProjectHandle, type ProjectHandle } from '../../../src/cli/compose';
import { ToolError } from '../../../src/core/errors';
import { silentLogger } from '../../../src/core/log';
import { decodeTextFile } from '../../../src/exchange/textEncoding';
import { extractFile } from '../../../src/exchange/textExtraction';

/** "Café naïve – “quoted”" in windows-1252, byte by byte (é E9, ï EF, en dash 96, curly quotes 93/94). */
const CP1252 = Buffer.from([0x43, 0x61, 0x66, 0xe9, 0x20, 0x6e, 0x61, 0xef, 0x76, 0x65, 0x20, 0x96, 0x20, 0x93, 0x71, 0x75, 0x6f, 0x74, 0x65, 0x64, 0x94]);
const CP1252_TEXT = 'Café naïve – “quoted”';
/** A French sentence in ISO-8859-1 (ç E7, é E9, è E8, û FB, à E0, ô F4). */
const LATIN1_TEXT = "Le garçon a mangé une crème brûlée à côté de l'hôtel.\n";
const LATIN1 = Buffer.from(LATIN1_TEXT, 'latin1');
/** "Café 😀" in UTF-16LE with its BOM FF FE: é is E9 00, the emoji the pair 3D D8 00 DE. */
const UTF16LE = Buffer.from([0xff, 0xfe, 0x43, 0x00, 0x61, 0x00, 0x66, 0x00, 0xe9, 0x00, 0x20, 0x00, 0x3d, 0xd8, 0x00, 0xde]);

describe('exchange/textEncoding: plain-text files that are not UTF-8', () => {
  it('a cp1252 file is detected as windows-1252 and decoded exactly', () => {
    const d = decodeTextFile(CP1252);
    assert.equal(d.text, CP1252_TEXT);
    assert.equal(d.encoding, 'windows-1252');
    assert.equal(d.bom, false);
    assert.ok(typeof d.confidence === 'number' && d.confidence >= 15, `confidence ${d.confidence}`);
    assert.ok(!d.text.includes('\uFFFD'));
  });

  it('a Latin-1 file is detected as ISO-8859-1', () => {
    const d = decodeTextFile(LATIN1);
    assert.equal(d.text, LATIN1_TEXT);
    assert.equal(d.encoding, 'ISO-8859-1');
  });

  it('a UTF-16LE file with a BOM is decoded, the BOM removed, the surrogate pair kept', () => {
    const d = decodeTextFile(UTF16LE);
    assert.deepEqual(d, { text: 'Café 😀', encoding: 'UTF-16LE', bom: true });
  });

  it('a UTF-8 file with a BOM: the BOM removed (as before, and as VS Code shows the file), a second U+FEFF kept', () => {
    const d = decodeTextFile(Buffer.from([0xef, 0xbb, 0xbf, 0xef, 0xbb, 0xbf, 0x41]));
    assert.deepEqual(d, { text: '\uFEFFA', encoding: 'UTF-8', bom: true });
  });

  it('a UTF-16 BOM followed by a lone surrogate is refused, not decoded with U+FFFD', () => {
    assert.throws(
      () => decodeTextFile(Buffer.from([0xff, 0xfe, 0x41, 0x00, 0x00, 0xd8, 0x42, 0x00])),
      (e: unknown) => e instanceof ToolError && e.code === 'SOURCE_IMPORT_FAILED' && /UTF-16LE/.test(e.message),
    );
  });

  it('too little text to tell ("Café" in cp1252) is refused naming the first bad byte and a likely encoding', () => {
    assert.throws(
      () => decodeTextFile(Buffer.from([0x43, 0x61, 0x66, 0xe9])),
      (e: unknown) =>
        e instanceof ToolError &&
        e.code === 'SOURCE_IMPORT_FAILED' &&
        /byte offset 3/.test(e.message) &&
        /looks like/.test(e.message) &&
        (e.details as { byte_offset: number }).byte_offset === 3,
    );
  });

  it('a byte that is no character of the likely encoding (0x81 in cp1252 text) is refused, never U+FFFD', () => {
    const bytes = Buffer.concat([CP1252, Buffer.from([0x20, 0x81, 0x0a]), CP1252]);
    assert.throws(
      () => decodeTextFile(bytes),
      (e: unknown) => e instanceof ToolError && e.code === 'SOURCE_IMPORT_FAILED' && /not valid UTF-8/.test(e.message),
    );
  });

  it('binary bytes are refused', () => {
    assert.throws(
      () => decodeTextFile(Buffer.from([0, 1, 2, 3, 0xff, 0xfe, 0, 0, 9, 8, 0xc8, 0x64, 0, 0])),
      (e: unknown) => e instanceof ToolError && e.code === 'SOURCE_IMPORT_FAILED',
    );
  });
});

describe('import_file_source of files that are not UTF-8 (pipeline, real project)', () => {
  let dir: string;
  let handle: ProjectHandle;
  let pipeline: ReturnType<typeof createPipeline>;
  const caller = { session_id: 'test', client_type: 'LOCAL_UI' as const, client_name: 'test', user: 'test' };

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'marginalia-encoding-'));
    handle = await openProjectHandle(path.join(dir, 'p.qda'), { create: true, checkpointIdleMs: 0, logger: silentLogger });
    pipeline = createPipeline({ project: () => handle, host: headlessHost, logger: silentLogger, embeddings: null });
  });
  after(async () => {
    await handle.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const fixtures: [string, Buffer, string, string, boolean][] = [
    ['cp1252.txt', CP1252, CP1252_TEXT, 'windows-1252', false],
    ['latin1.txt', LATIN1, LATIN1_TEXT, 'ISO-8859-1', false],
    ['utf16.txt', UTF16LE, 'Café 😀', 'UTF-16LE', true],
    ['utf8-bom.md', Buffer.from([0xef, 0xbb, 0xbf, ...Buffer.from('# Café\n')]), '# Café\n', 'UTF-8', true],
  ];
  for (const [name, bytes, text, encoding, bom] of fixtures) {
    it(`${name}: stored exactly, the encoding (${encoding}) in the result`, async () => {
      const file = path.join(dir, name);
      fs.writeFileSync(file, bytes);
      const extracted = await extractFile(file);
      assert.equal(extracted.encoding?.name, encoding);
      const out = await pipeline.invoke('import_file_source', { file_path: file }, caller);
      assert.ok(out.envelope.success, JSON.stringify(out.envelope));
      const data = out.envelope.data as { source_id: number; encoding: { name: string; bom: boolean } };
      assert.equal(data.encoding.name, encoding);
      assert.equal(data.encoding.bom, bom);
      const read = await pipeline.invoke('read_source_content', { source_id: data.source_id }, caller);
      assert.ok(read.envelope.success, JSON.stringify(read.envelope));
      const content = read.envelope.data as { content?: string; text?: string; total_length: number };
      assert.equal(content.content ?? content.text, text);
      assert.equal(content.total_length, [...text].length);
    });
  }

  it('a file too short to detect is refused and nothing is written', async () => {
    const file = path.join(dir, 'cafe.txt');
    fs.writeFileSync(file, Buffer.from([0x43, 0x61, 0x66, 0xe9]));
    const before = await pipeline.invoke('list_sources', {}, caller);
    const out = await pipeline.invoke('import_file_source', { file_path: file }, caller);
    assert.equal(out.envelope.success, false);
    assert.equal(!out.envelope.success && out.envelope.error_code, 'SOURCE_IMPORT_FAILED');
    const after = await pipeline.invoke('list_sources', {}, caller);
    assert.deepEqual(after.envelope, before.envelope);
  });
});
