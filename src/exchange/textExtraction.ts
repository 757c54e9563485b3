/**
 * Source import: read one file from disk and turn it into what a source holds, its kind, MIME type and
 * plain text (for documents) or nothing (for media, which are registered by path).
 *
 * Formats and where their rules come from:
 * - `.txt`, `.md`: strict UTF-8 (WHATWG Encoding Standard, "utf-8 decode" with `fatal`), else the encoding a
 *   byte-order mark names or `chardet` detects, decoded exactly with `iconv-lite` (see textEncoding.ts); the
 *   BOM removed, every other character kept as is (CRLF stays CRLF), because later segment offsets count the
 *   text's code points.
 * - `.docx`: Office Open XML (ECMA-376), text by `mammoth`'s `extractRawText`.
 * - `.odt`: OpenDocument 1.3 (OASIS), `content.xml` read with `jszip` + `fast-xml-parser`, see {@link odtText}.
 * - `.rtf`: Rich Text Format 1.9.1 (Microsoft, 2008), our own extractor, see {@link rtfText}.
 * - `.pdf`: text content by Mozilla's `pdfjs-dist` (legacy build, pure JavaScript), see {@link pdfText}.
 * - audio / video / image: no text; MIME types from the IANA Media Types registry (the `x-` ones are the
 *   de-facto names browsers and `mime-db` use).
 *
 * Every failure is a `ToolError('SOURCE_IMPORT_FAILED', message)` whose message names the file and the cause.
 */
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { TextDecoder } from 'node:util';
import JSZip from 'jszip';
import mammoth from 'mammoth';
import { XMLParser } from 'fast-xml-parser';
import { ToolError } from '../core/errors';
import { decodeTextFile } from './textEncoding';

/** Kind of a source: `text` (plain or word-processor documents), `pdf`, or a media kind. */
export type SourceType = 'text' | 'audio' | 'video' | 'image' | 'pdf';

/** What {@link extractFile} returns for one file. */
export interface ExtractedFile {
  /** text for .txt/.md/.docx/.odt/.rtf; pdf for .pdf; audio/video/image for media files */
  type: SourceType;
  /** MIME type, e.g. 'text/plain', 'application/pdf', 'audio/mpeg' */
  mime: string;
  /** extracted text (code points are what later offsets count). null for audio/video/image */
  text: string | null;
  /** file size in bytes */
  sizeBytes: number;
  /**
   * `.txt`/`.md` only: the encoding the text was decoded from (`UTF-8`, `UTF-16LE`, a detected `windows-1252`
   * ...), whether the file began with a byte-order mark (removed from `text`), and chardet's confidence
   * (0-100) when the encoding was detected rather than known.
   */
  encoding?: { name: string; bom: boolean; confidence?: number };
}

/** How one extension is handled: its source kind, MIME type and, for documents, how its text is read. */
interface FormatEntry {
  type: SourceType;
  mime: string;
  extract: ((bytes: Uint8Array) => Promise<string | PlainText>) | null;
}

/**
 * Extension (lower case, with dot) to format. MIME types: IANA Media Types registry (RFC 3003 audio/mpeg,
 * RFC 4337 audio/mp4 and video/mp4, RFC 5334 audio/ogg, RFC 9639 audio/flac, RFC 2046 text/plain,
 * RFC 7763 text/markdown, RFC 8118 application/pdf, ECMA-376 and OASIS ODF for the office types);
 * `audio/wav`, `video/x-matroska`, `video/x-msvideo` and `image/bmp` are the de-facto names.
 */
const FORMATS: Readonly<Record<string, FormatEntry>> = {
  '.txt': { type: 'text', mime: 'text/plain', extract: async (b) => plainText(b) },
  '.md': { type: 'text', mime: 'text/markdown', extract: async (b) => plainText(b) },
  '.docx': {
    type: 'text',
    mime: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
    extract: docxText,
  },
  '.odt': { type: 'text', mime: 'application/vnd.oasis.opendocument.text', extract: odtText },
  '.rtf': { type: 'text', mime: 'application/rtf', extract: async (b) => rtfText(b) },
  '.pdf': { type: 'pdf', mime: 'application/pdf', extract: pdfText },

  '.mp3': { type: 'audio', mime: 'audio/mpeg', extract: null },
  '.wav': { type: 'audio', mime: 'audio/wav', extract: null },
  '.m4a': { type: 'audio', mime: 'audio/mp4', extract: null },
  '.ogg': { type: 'audio', mime: 'audio/ogg', extract: null },
  '.flac': { type: 'audio', mime: 'audio/flac', extract: null },
  '.aac': { type: 'audio', mime: 'audio/aac', extract: null },

  '.mp4': { type: 'video', mime: 'video/mp4', extract: null },
  '.mov': { type: 'video', mime: 'video/quicktime', extract: null },
  '.webm': { type: 'video', mime: 'video/webm', extract: null },
  '.mkv': { type: 'video', mime: 'video/x-matroska', extract: null },
  '.avi': { type: 'video', mime: 'video/x-msvideo', extract: null },

  '.png': { type: 'image', mime: 'image/png', extract: null },
  '.jpg': { type: 'image', mime: 'image/jpeg', extract: null },
  '.jpeg': { type: 'image', mime: 'image/jpeg', extract: null },
  '.gif': { type: 'image', mime: 'image/gif', extract: null },
  '.webp': { type: 'image', mime: 'image/webp', extract: null },
  '.tif': { type: 'image', mime: 'image/tiff', extract: null },
  '.tiff': { type: 'image', mime: 'image/tiff', extract: null },
  '.bmp': { type: 'image', mime: 'image/bmp', extract: null },
};

/**
 * The file extensions {@link extractFile} accepts: lower case, with the leading dot (`'.txt'`, `'.pdf'`, ...).
 * Matching is case-insensitive, so `NOTES.TXT` is accepted too.
 */
export const SUPPORTED_EXTENSIONS: readonly string[] = Object.freeze(Object.keys(FORMATS));

/**
 * Reads the file at `absPath` and extracts what a source needs.
 *
 * - `.txt`/`.md`: the exact characters of the file decoded as UTF-8, or in the encoding its BOM names or
 *   chardet detects (`encoding` says which; textEncoding.ts), a leading BOM removed, nothing else changed:
 *   line ends, spaces and Unicode normalization are kept.
 * - `.docx`: mammoth's raw text (each paragraph followed by `"\n\n"`).
 * - `.odt`: paragraphs (`text:p`, `text:h`) joined with `"\n"`.
 * - `.rtf`: the document text, paragraphs (`\par`) ended by `"\n"`.
 * - `.pdf`: each page's text, pages joined with `"\n\n"`; `type` is `'pdf'`.
 * - media (audio/video/image): `text` is `null`; the file's content is not read.
 *
 * `sizeBytes` is the file's size in bytes (`stat` for media, which are never read; the bytes read otherwise).
 *
 * @param absPath absolute path of the file.
 * @throws ToolError `SOURCE_IMPORT_FAILED` when the path is relative, the file does not exist or cannot be
 *   read, it is a directory (or not a regular file), its extension is not in {@link SUPPORTED_EXTENSIONS},
 *   a `.txt`/`.md` is neither UTF-8 nor in an encoding detected confidently and decoded exactly (the
 *   message gives the byte offset and the likely encoding), or a document fails to parse.
 */
export async function extractFile(absPath: string): Promise<ExtractedFile> {
  if (typeof absPath !== 'string' || absPath.length === 0) {
    throw new ToolError('SOURCE_IMPORT_FAILED', 'No file path given.');
  }
  if (!path.isAbsolute(absPath)) {
    throw new ToolError('SOURCE_IMPORT_FAILED', `Path must be absolute: "${absPath}".`);
  }
  let stat;
  try {
    stat = await fsp.stat(absPath);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') {
      throw new ToolError('SOURCE_IMPORT_FAILED', `File not found: "${absPath}".`);
    }
    throw new ToolError('SOURCE_IMPORT_FAILED', `Cannot access "${absPath}": ${errorText(e)}`);
  }
  if (stat.isDirectory()) {
    throw new ToolError('SOURCE_IMPORT_FAILED', `"${absPath}" is a directory, not a file.`);
  }
  if (!stat.isFile()) {
    throw new ToolError('SOURCE_IMPORT_FAILED', `"${absPath}" is not a regular file.`);
  }
  const ext = path.extname(absPath).toLowerCase();
  const format = Object.prototype.hasOwnProperty.call(FORMATS, ext) ? FORMATS[ext] : undefined;
  if (!format) {
    throw new ToolError(
      'SOURCE_IMPORT_FAILED',
      `Unsupported file type "${ext || '(no extension)'}" for "${path.basename(absPath)}". ` +
        `Supported: ${SUPPORTED_EXTENSIONS.join(' ')}.`,
    );
  }
  if (!format.extract) {
    return { type: format.type, mime: format.mime, text: null, sizeBytes: stat.size };
  }
  let bytes: Uint8Array;
  try {
    bytes = await fsp.readFile(absPath);
  } catch (e) {
    throw new ToolError('SOURCE_IMPORT_FAILED', `Cannot read "${absPath}": ${errorText(e)}`);
  }
  let text: string;
  let encoding: ExtractedFile['encoding'];
  try {
    const out = await format.extract(bytes);
    if (typeof out === 'string') text = out;
    else ({ text, encoding } = out);
  } catch (e) {
    if (e instanceof ToolError) {
      throw new ToolError(e.code, `Cannot import "${path.basename(absPath)}": ${e.message}`, e.details);
    }
    throw new ToolError(
      'SOURCE_IMPORT_FAILED',
      `Cannot import "${path.basename(absPath)}": not a readable ${ext.slice(1).toUpperCase()} file (${errorText(e)}).`,
    );
  }
  return { type: format.type, mime: format.mime, text, sizeBytes: bytes.byteLength, ...(encoding ? { encoding } : {}) };
}

/** The message of an unknown thrown value. */
function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

// ---------------------------------------------------------------------------------------------------------
// Plain text

/** The text of a plain-text file and the encoding it was decoded from. */
interface PlainText {
  text: string;
  encoding: NonNullable<ExtractedFile['encoding']>;
}

/**
 * A `.txt`/`.md` file's text: UTF-8, or the encoding its BOM names or chardet detects (textEncoding.ts
 * `decodeTextFile`); a leading BOM removed.
 * @throws ToolError `SOURCE_IMPORT_FAILED` naming the first byte that is not UTF-8 and the likely encoding.
 */
function plainText(bytes: Uint8Array): PlainText {
  const d = decodeTextFile(bytes);
  return { text: d.text, encoding: { name: d.encoding, bom: d.bom, ...(d.confidence !== undefined ? { confidence: d.confidence } : {}) } };
}

// ---------------------------------------------------------------------------------------------------------
// DOCX

/** Raw text of an Office Open XML document by mammoth (paragraphs each followed by `"\n\n"`). */
async function docxText(bytes: Uint8Array): Promise<string> {
  const result = await mammoth.extractRawText({ buffer: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) });
  return result.value;
}

// ---------------------------------------------------------------------------------------------------------
// ODT

/** A node of fast-xml-parser's `preserveOrder` output: `{ tag: children, ':@'?: attributes }` or `{ '#text' }`. */
type XmlNode = Record<string, unknown>;

/** Elements inside a paragraph whose content is not part of the running text (notes, comments, shapes). */
const ODT_SKIP_IN_PARAGRAPH = new Set([
  'office:annotation',
  'office:annotation-end',
  'text:note',
  'text:ruby-text',
  'draw:frame',
  'draw:custom-shape',
  'draw:a',
  'draw:g',
  'text:tracked-changes',
]);

/** Elements outside paragraphs whose descendants are not body text (deleted changes, declarations, forms). */
const ODT_SKIP_IN_BODY = new Set([
  'text:tracked-changes',
  'text:sequence-decls',
  'text:variable-decls',
  'text:user-field-decls',
  'office:forms',
  'office:annotation',
]);

/**
 * Text of an OpenDocument text document (OASIS OpenDocument 1.3, part 3, section 6: "Paragraph Elements
 * Content"): every `text:p` and `text:h` under `office:body/office:text`, in document order (lists, tables and
 * sections included), joined with `"\n"`.
 *
 * Inside a paragraph: `text:s` gives `text:c` spaces (default 1), `text:tab` a tab, `text:line-break` a `"\n"`;
 * spans, links and other inline elements contribute their text. Literal white space follows section 6.1.2:
 * TAB/CR/LF/SPACE count as a space, a space after white space or at the start of the paragraph is dropped
 * (a `text:s`, `text:tab` or `text:line-break` ends a white-space run, as LibreOffice reads it).
 * Notes, annotations and drawing frames inside a paragraph are left out.
 *
 * @throws Error (from jszip) when the bytes are not a ZIP; ToolError `SOURCE_IMPORT_FAILED` when the archive
 *   has no `content.xml` or it has no `office:text` body.
 */
async function odtText(bytes: Uint8Array): Promise<string> {
  const zip = await JSZip.loadAsync(bytes);
  const entry = zip.file('content.xml');
  if (!entry) throw new ToolError('SOURCE_IMPORT_FAILED', 'not an OpenDocument text file (no content.xml).');
  const xml = await entry.async('string');
  const parser = new XMLParser({
    preserveOrder: true,
    ignoreAttributes: false,
    attributeNamePrefix: '',
    trimValues: false,
    parseTagValue: false,
    parseAttributeValue: false,
    processEntities: true,
    // Needed for numeric character references (&#233;); XML's five named entities are decoded either way.
    htmlEntities: true,
    ignoreDeclaration: true,
    ignorePiTags: true,
  });
  const doc = parser.parse(xml) as XmlNode[];
  const body = findElement(doc, 'office:document-content', 'office:body', 'office:text');
  if (!body) throw new ToolError('SOURCE_IMPORT_FAILED', 'not an OpenDocument text file (no office:text in content.xml).');
  const paragraphs: string[] = [];
  collectParagraphs(body, paragraphs);
  return paragraphs.join('\n');
}

/** Tag name of a preserve-order node (`'#text'` for text nodes), or undefined. */
function tagOf(node: XmlNode): string | undefined {
  for (const k of Object.keys(node)) if (k !== ':@') return k;
  return undefined;
}

/** Children of a preserve-order element node. */
function childrenOf(node: XmlNode, tag: string): XmlNode[] {
  const c = node[tag];
  return Array.isArray(c) ? (c as XmlNode[]) : [];
}

/** Follows a path of element names from a list of nodes; returns the last element's children. */
function findElement(nodes: XmlNode[], ...names: string[]): XmlNode[] | undefined {
  let current = nodes;
  for (const name of names) {
    const next = current.find((n) => tagOf(n) === name);
    if (!next) return undefined;
    current = childrenOf(next, name);
  }
  return current;
}

/** Walks body-level content; each `text:p`/`text:h` found becomes one entry of `out`. */
function collectParagraphs(nodes: XmlNode[], out: string[]): void {
  for (const node of nodes) {
    const tag = tagOf(node);
    if (!tag || tag === '#text' || ODT_SKIP_IN_BODY.has(tag)) continue;
    if (tag === 'text:p' || tag === 'text:h') {
      const state = { text: '', ignoreSpace: true };
      paragraphText(childrenOf(node, tag), state);
      out.push(state.text);
    } else {
      collectParagraphs(childrenOf(node, tag), out);
    }
  }
}

/** Appends the text of paragraph content to `state.text` (white-space rules in {@link odtText}). */
function paragraphText(nodes: XmlNode[], state: { text: string; ignoreSpace: boolean }): void {
  for (const node of nodes) {
    const tag = tagOf(node);
    if (!tag) continue;
    if (tag === '#text') {
      const raw = String(node['#text'] ?? '');
      for (const ch of raw) {
        if (ch === ' ' || ch === '\t' || ch === '\n' || ch === '\r') {
          if (!state.ignoreSpace) {
            state.text += ' ';
            state.ignoreSpace = true;
          }
        } else {
          state.text += ch;
          state.ignoreSpace = false;
        }
      }
    } else if (tag === 'text:s') {
      const attrs = (node[':@'] ?? {}) as Record<string, unknown>;
      const c = Number.parseInt(String(attrs['text:c'] ?? '1'), 10);
      state.text += ' '.repeat(Number.isFinite(c) && c > 0 ? Math.min(c, 100_000) : 1);
      state.ignoreSpace = false;
    } else if (tag === 'text:tab') {
      state.text += '\t';
      state.ignoreSpace = false;
    } else if (tag === 'text:line-break') {
      state.text += '\n';
      state.ignoreSpace = false;
    } else if (!ODT_SKIP_IN_PARAGRAPH.has(tag)) {
      paragraphText(childrenOf(node, tag), state);
    }
  }
}

// ---------------------------------------------------------------------------------------------------------
// PDF

/** The part of pdfjs-dist's API this module uses (its own typings are ESM-only declaration files). */
interface PdfjsModule {
  getDocument(params: Record<string, unknown>): {
    promise: Promise<{
      numPages: number;
      getPage(n: number): Promise<{
        getTextContent(): Promise<{ items: Array<{ str?: string; hasEOL?: boolean }> }>;
        cleanup(): void;
      }>;
    }>;
    destroy(): Promise<void>;
  };
}

let pdfjsPromise: Promise<PdfjsModule> | undefined;

/**
 * The 2-D subset of the Geometry Interfaces' `DOMMatrix` (W3C Geometry Interfaces Module Level 1) that pdf.js
 * touches outside rendering: its display module builds one at load time, and its worker maps Type3 bitmap
 * glyphs with `new DOMMatrix().scaleSelf(..).translateSelf(..)`. pdf.js takes `DOMMatrix` from the optional
 * native `@napi-rs/canvas` package when Node lacks it; this stand-in lets text extraction work without that
 * package (or inside a bundle, where pdf.js cannot `require` it). It is only installed on `globalThis` while
 * pdf.js is loading or extracting, and only when no `DOMMatrix` exists.
 */
class MiniDomMatrix {
  a = 1;
  b = 0;
  c = 0;
  d = 1;
  e = 0;
  f = 0;
  readonly is2D = true;

  constructor(init?: ArrayLike<number>) {
    if (init && init.length === 6) {
      const [a, b, c, d, e, f] = Array.from(init) as [number, number, number, number, number, number];
      Object.assign(this, { a, b, c, d, e, f });
    }
  }

  /** this = this x m (m given as a..f). */
  multiplySelf(m: { a: number; b: number; c: number; d: number; e: number; f: number }): this {
    const { a, b, c, d, e, f } = this;
    this.a = a * m.a + c * m.b;
    this.b = b * m.a + d * m.b;
    this.c = a * m.c + c * m.d;
    this.d = b * m.c + d * m.d;
    this.e = a * m.e + c * m.f + e;
    this.f = b * m.e + d * m.f + f;
    return this;
  }

  /** this = this x scale(sx, sy). */
  scaleSelf(sx = 1, sy = sx): this {
    return this.multiplySelf({ a: sx, b: 0, c: 0, d: sy, e: 0, f: 0 });
  }

  /** this = this x translate(tx, ty). */
  translateSelf(tx = 0, ty = 0): this {
    return this.multiplySelf({ a: 1, b: 0, c: 0, d: 1, e: tx, f: ty });
  }
}

/** How many loads/extractions currently rely on {@link MiniDomMatrix} being installed. */
let miniDomMatrixUsers = 0;

/** Runs `fn` with a `DOMMatrix` on `globalThis` (ours, if there is none), removing ours afterwards. */
async function withDomMatrix<T>(fn: () => Promise<T>): Promise<T> {
  const g = globalThis as { DOMMatrix?: unknown };
  const ours = miniDomMatrixUsers > 0 && g.DOMMatrix === MiniDomMatrix;
  if (!ours && g.DOMMatrix !== undefined) return fn();
  g.DOMMatrix = MiniDomMatrix;
  miniDomMatrixUsers++;
  try {
    return await fn();
  } finally {
    miniDomMatrixUsers--;
    if (miniDomMatrixUsers === 0 && g.DOMMatrix === MiniDomMatrix) delete g.DOMMatrix;
  }
}

/** pdf.js load-time warnings about its optional canvas package (rendering only; we never render). */
const PDFJS_CANVAS_WARNING = /^Warning: Cannot (load "@napi-rs\/canvas"|polyfill `|access the `require`)/;

/**
 * Loads pdfjs-dist's legacy (Node-compatible) build once. Its worker module is installed as
 * `globalThis.pdfjsWorker`, so pdf.js runs the worker code in this thread and never has to resolve the
 * worker file by URL (which also keeps it working when bundled). While it loads, its warnings about the
 * missing optional canvas package are not printed.
 */
function loadPdfjs(): Promise<PdfjsModule> {
  pdfjsPromise ??= withDomMatrix(async () => {
    const warn = console.warn;
    console.warn = (...args: unknown[]): void => {
      if (typeof args[0] === 'string' && PDFJS_CANVAS_WARNING.test(args[0])) return;
      warn.apply(console, args);
    };
    try {
      const g = globalThis as { pdfjsWorker?: unknown };
      if (!g.pdfjsWorker) {
        g.pdfjsWorker = await import('pdfjs-dist/legacy/build/pdf.worker.mjs' as string);
      }
      return (await import('pdfjs-dist/legacy/build/pdf.mjs' as string)) as PdfjsModule;
    } finally {
      if (console.warn !== warn) console.warn = warn;
    }
  });
  pdfjsPromise.catch(() => {
    pdfjsPromise = undefined;
  });
  return pdfjsPromise;
}

/**
 * Text of a PDF (ISO 32000) by pdf.js: for each page, its text items in content order, an item's `hasEOL`
 * giving a `"\n"`; trailing newlines of a page are dropped and pages are joined with `"\n\n"`.
 * A scanned PDF without a text layer yields empty pages (no OCR).
 *
 * @throws Error (from pdf.js) when the file is not a PDF, is damaged, or is password-protected.
 */
async function pdfText(bytes: Uint8Array): Promise<string> {
  const pdfjs = await loadPdfjs();
  return withDomMatrix(() => pdfPages(pdfjs, bytes));
}

/** The page loop of {@link pdfText}. */
async function pdfPages(pdfjs: PdfjsModule, bytes: Uint8Array): Promise<string> {
  // pdf.js may transfer (detach) the buffer it is given, so hand it a copy.
  const task = pdfjs.getDocument({
    data: new Uint8Array(bytes),
    isEvalSupported: false,
    disableFontFace: true,
    useSystemFonts: false,
    stopAtErrors: false,
    verbosity: 0,
  });
  try {
    const doc = await task.promise;
    const pages: string[] = [];
    for (let n = 1; n <= doc.numPages; n++) {
      const page = await doc.getPage(n);
      const content = await page.getTextContent();
      let text = '';
      for (const item of content.items) {
        if (typeof item.str !== 'string') continue; // marked-content markers carry no text
        text += item.str;
        if (item.hasEOL) text += '\n';
      }
      pages.push(text.replace(/\n+$/, ''));
      page.cleanup();
    }
    return pages.join('\n\n');
  } finally {
    await task.destroy();
  }
}

// ---------------------------------------------------------------------------------------------------------
// RTF

/**
 * Destinations whose text is not document body text (RTF 1.9.1, "Destinations"; header/footer, footnotes,
 * annotations, pictures, objects, fields' instructions, document tables and metadata). A group starting one of
 * these is skipped whole. Any other destination marked with `\*` is skipped too (the spec's rule for
 * destinations a reader does not know).
 */
const RTF_SKIP_DESTINATIONS = new Set([
  'aftncn', 'aftnsep', 'aftnsepc', 'annotation', 'atnauthor', 'atndate', 'atnicn', 'atnid', 'atnparent',
  'atnref', 'atntime', 'atrfend', 'atrfstart', 'author', 'bkmkend', 'bkmkstart', 'buptim', 'category',
  'colortbl', 'comment', 'company', 'creatim', 'doccomm', 'docvar', 'falt', 'ffdeftext', 'ffentrymcr',
  'ffexitmcr', 'ffformat', 'ffhelptext', 'ffl', 'ffname', 'ffstattext', 'file', 'filetbl', 'fldinst',
  'fontemb', 'fontfile', 'footer', 'footerf', 'footerl', 'footerr', 'footnote', 'ftncn', 'ftnsep',
  'ftnsepc', 'header', 'headerf', 'headerl', 'headerr', 'info', 'keywords', 'levelnumbers', 'leveltext',
  'list', 'listoverridetable', 'listpicture', 'listtable', 'manager', 'nonshppict', 'object', 'objdata',
  'operator', 'panose', 'pict', 'pn', 'printim', 'private', 'revtbl', 'revtim', 'rsidtbl', 'stylesheet',
  'subject', 'tc', 'template', 'title', 'txe', 'xe', 'xmlnstbl', 'userprops', 'themedata',
  'colorschememapping', 'latentstyles', 'datastore', 'generator', 'pgdsctbl', 'protusertbl', 'mmathPr',
]);

/** Control words that stand for characters (RTF 1.9.1, "Special Characters"). */
const RTF_CHAR_WORDS: Readonly<Record<string, string>> = {
  par: '\n',
  line: '\n',
  sect: '\n',
  row: '\n',
  cell: '\t',
  nestcell: '\t',
  tab: '\t',
  emdash: '\u2014',
  endash: '\u2013',
  emspace: '\u2003',
  enspace: '\u2002',
  qmspace: '\u2005',
  bullet: '\u2022',
  lquote: '\u2018',
  rquote: '\u2019',
  ldblquote: '\u201C',
  rdblquote: '\u201D',
  zwj: '\u200D',
  zwnj: '\u200C',
  zwbo: '\u200B',
  zwnbo: '\uFEFF',
  ltrmark: '\u200E',
  rtlmark: '\u200F',
};

/** Control symbols that stand for characters (`\~` no-break space, `\_` no-break hyphen, `\-` soft hyphen). */
const RTF_CHAR_SYMBOLS: Readonly<Record<string, string>> = {
  '~': '\u00A0',
  _: '\u2011',
  '-': '',
  '\\': '\\',
  '{': '{',
  '}': '}',
  '\n': '\n',
  '\r': '\n',
  '\t': '\t',
};

/** `\fcharsetN` (RTF 1.9.1, font table) to Windows code page. 1 (DEFAULT) and unknown use the document's. */
const RTF_CHARSET_CODEPAGE: Readonly<Record<number, number>> = {
  0: 1252, 77: 10000, 128: 932, 129: 949, 134: 936, 136: 950, 161: 1253, 162: 1254, 163: 1258,
  177: 1255, 178: 1256, 186: 1257, 204: 1251, 222: 874, 238: 1250,
};

/** Windows code page number to a WHATWG Encoding label TextDecoder accepts; unknown pages fall back to 1252. */
function codepageLabel(cp: number): string {
  if (cp >= 1250 && cp <= 1258) return `windows-${cp}`;
  switch (cp) {
    case 874: return 'windows-874';
    case 866: return 'ibm866';
    case 932: return 'shift_jis';
    case 936: return 'gbk';
    case 949: return 'euc-kr';
    case 950: return 'big5';
    case 10000: return 'macintosh';
    case 20866: return 'koi8-r';
    case 28591: return 'iso-8859-1';
    case 28592: return 'iso-8859-2';
    case 28605: return 'iso-8859-15';
    case 54936: return 'gb18030';
    case 65001: return 'utf-8';
    default: return 'windows-1252';
  }
}

/** Per-group parser state (pushed on `{`, restored on `}`). */
interface RtfGroupState {
  /** the group's text is dropped */
  skip: boolean;
  /** inside the font table: font definitions are recorded, text dropped */
  fonttbl: boolean;
  /** `\ucN`: characters to skip after a `\uN` */
  uc: number;
  /** current font number (`\fN`), or -1 for the default font */
  font: number;
  /** hidden text (`\v`) */
  hidden: boolean;
  /** inside `\upr`: its first sub-group (the ANSI copy) is skipped in favour of `\ud` */
  upr: boolean;
}

/**
 * Plain text of an RTF document, following the Rich Text Format specification 1.9.1 (Microsoft, 2008).
 *
 * Handled: groups; control words with their optional numeric parameter and the one delimiting space;
 * control symbols (`\\`, `\{`, `\}`, `\~`, `\_`, `\-`, backslash-newline = `\par`); `\par`, `\line`, `\sect`
 * and `\row` as `"\n"`; `\tab` and `\cell` as `"\t"`; the special-character words (`\emdash`, `\lquote`, ...);
 * `\'hh` bytes and raw 8-bit bytes decoded with the code page in force: the font's (`\fcharsetN` or `\cpgN` in
 * `\fonttbl`, selected by `\fN`, default `\deffN`), else the document's (`\ansicpgN`; `\ansi` = 1252,
 * `\mac` = 10000, `\pc` = 437, `\pca` = 850; code pages TextDecoder lacks fall back to windows-1252);
 * `\uN` Unicode (signed 16-bit, surrogate pairs as two `\u`) followed by `\ucN` fallback characters skipped;
 * `\binN` binary data skipped; hidden text (`\v`) dropped; `\upr`/`\ud` pairs (the Unicode copy kept).
 * Skipped: `\*` destinations, and the destinations in {@link RTF_SKIP_DESTINATIONS} (`\fonttbl`,
 * `\colortbl`, `\stylesheet`, `\info`, headers, footers, footnotes, pictures, field instructions, ...);
 * a field's result (`\fldrslt`) is kept. CR and LF in the file are not text. Formatting is ignored.
 *
 * @throws ToolError `SOURCE_IMPORT_FAILED` when the data does not start with `{\rtf`.
 */
function rtfText(bytes: Uint8Array): string {
  let pos = 0;
  const n = bytes.length;
  // Tolerate a UTF-8 BOM or leading white space before the opening brace.
  if (n >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) pos = 3;
  while (pos < n && (bytes[pos] === 0x20 || bytes[pos] === 0x0d || bytes[pos] === 0x0a || bytes[pos] === 0x09)) pos++;
  const header = String.fromCharCode(...bytes.subarray(pos, pos + 5));
  if (header !== '{\\rtf') {
    throw new ToolError('SOURCE_IMPORT_FAILED', 'not an RTF file (it does not start with "{\\rtf").');
  }

  let docCodepage = 1252;
  let defaultFont = -1;
  const fontCodepage = new Map<number, number>();
  let fontDef = -1; // font being defined in the font table

  const out: string[] = [];
  let pendingBytes: number[] = [];
  let pendingCp = 0;
  const decoders = new Map<number, TextDecoder>();
  const flush = (): void => {
    if (pendingBytes.length === 0) return;
    let dec = decoders.get(pendingCp);
    if (!dec) {
      dec = new TextDecoder(codepageLabel(pendingCp));
      decoders.set(pendingCp, dec);
    }
    out.push(dec.decode(Uint8Array.from(pendingBytes)));
    pendingBytes = [];
  };
  const emit = (s: string): void => {
    flush();
    if (s) out.push(s);
  };

  const stack: RtfGroupState[] = [];
  let state: RtfGroupState = { skip: false, fonttbl: false, uc: 1, font: -1, hidden: false, upr: false };
  let ucPending = 0; // fallback characters still to skip after a \uN
  let starNext = false; // the last token was \*

  const visible = (): boolean => !state.skip && !state.fonttbl && !state.hidden;
  const currentCodepage = (): number => {
    const font = state.font >= 0 ? state.font : defaultFont;
    return fontCodepage.get(font) ?? docCodepage;
  };
  const emitByte = (b: number): void => {
    const cp = currentCodepage();
    if (pendingBytes.length > 0 && cp !== pendingCp) flush();
    pendingCp = cp;
    pendingBytes.push(b);
  };
  /** True when the token is eaten as a \uN fallback character. */
  const consumedAsFallback = (): boolean => {
    if (ucPending > 0) {
      ucPending--;
      return true;
    }
    return false;
  };

  pos += 1; // the '{' of the outer group is opened below
  stack.push(state);
  state = { ...state };
  let depth = 1;

  while (pos < n && depth > 0) {
    const b = bytes[pos]!;
    if (b === 0x7b /* { */) {
      pos++;
      ucPending = 0;
      starNext = false;
      stack.push(state);
      const parentUpr = state.upr;
      state = { ...state, upr: false };
      if (parentUpr) {
        // the first sub-group of \upr is the ANSI copy of the text; the \ud group that follows replaces it
        state.skip = true;
        stack[stack.length - 1] = { ...stack[stack.length - 1]!, upr: false };
      }
      depth++;
      continue;
    }
    if (b === 0x7d /* } */) {
      pos++;
      ucPending = 0;
      starNext = false;
      state = stack.pop()!;
      depth--;
      continue;
    }
    if (b === 0x0d || b === 0x0a) {
      pos++;
      continue;
    }
    if (b !== 0x5c /* \ */) {
      pos++;
      starNext = false;
      if (consumedAsFallback()) continue;
      if (b === 0x00) continue;
      if (visible()) emitByte(b);
      continue;
    }

    // A backslash: control word, control symbol or \'hh.
    pos++;
    if (pos >= n) break;
    const c = bytes[pos]!;
    const isLetter = (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
    if (!isLetter) {
      pos++;
      const sym = String.fromCharCode(c);
      if (sym === '*') {
        starNext = true;
        continue;
      }
      starNext = false;
      if (sym === "'") {
        const hex = String.fromCharCode(bytes[pos] ?? 0, bytes[pos + 1] ?? 0);
        if (/^[0-9a-fA-F]{2}$/.test(hex)) pos += 2;
        if (consumedAsFallback()) continue;
        if (/^[0-9a-fA-F]{2}$/.test(hex) && visible()) emitByte(Number.parseInt(hex, 16));
        continue;
      }
      if (consumedAsFallback()) continue;
      const ch = RTF_CHAR_SYMBOLS[sym];
      if (ch !== undefined && visible()) emit(ch);
      continue;
    }

    // Control word: letters, optional signed number, optional single space delimiter.
    let wEnd = pos;
    while (wEnd < n && wEnd - pos < 32) {
      const d = bytes[wEnd]!;
      if (!((d >= 0x41 && d <= 0x5a) || (d >= 0x61 && d <= 0x7a))) break;
      wEnd++;
    }
    const word = String.fromCharCode(...bytes.subarray(pos, wEnd));
    pos = wEnd;
    let param: number | undefined;
    const numStart = pos;
    if (bytes[pos] === 0x2d /* - */ && pos + 1 < n && bytes[pos + 1]! >= 0x30 && bytes[pos + 1]! <= 0x39) pos++;
    while (pos < n && bytes[pos]! >= 0x30 && bytes[pos]! <= 0x39 && pos - numStart < 11) pos++;
    if (pos > numStart && !(pos === numStart + 1 && bytes[numStart] === 0x2d)) {
      param = Number.parseInt(String.fromCharCode(...bytes.subarray(numStart, pos)), 10);
    } else {
      pos = numStart;
    }
    if (bytes[pos] === 0x20) pos++;

    const starred = starNext;
    starNext = false;

    if (word === 'bin') {
      // \binN: N bytes of binary data follow the delimiter.
      pos += Math.max(0, param ?? 0);
      consumedAsFallback();
      continue;
    }
    if (consumedAsFallback()) continue;

    if (starred) {
      if (word === 'ud') continue; // Unicode copy of a \upr group: keep it
      state.skip = true;
      continue;
    }
    if (word === 'fonttbl') {
      state.fonttbl = true;
      continue;
    }
    if (word === 'upr') {
      state.upr = true;
      continue;
    }
    if (RTF_SKIP_DESTINATIONS.has(word)) {
      state.skip = true;
      continue;
    }

    switch (word) {
      case 'ansi':
        docCodepage = 1252;
        continue;
      case 'mac':
        docCodepage = 10000;
        continue;
      case 'pc':
        docCodepage = 437;
        continue;
      case 'pca':
        docCodepage = 850;
        continue;
      case 'ansicpg':
        if (param !== undefined && param > 0) docCodepage = param;
        continue;
      case 'deff':
        if (param !== undefined) defaultFont = param;
        continue;
      case 'f':
        if (param === undefined) continue;
        if (state.fonttbl) fontDef = param;
        else state.font = param;
        continue;
      case 'fcharset':
        if (state.fonttbl && fontDef >= 0 && param !== undefined) {
          const cp = RTF_CHARSET_CODEPAGE[param];
          if (cp !== undefined && !fontCodepage.has(fontDef)) fontCodepage.set(fontDef, cp);
        }
        continue;
      case 'cpg':
        if (state.fonttbl && fontDef >= 0 && param !== undefined && param > 0) fontCodepage.set(fontDef, param);
        continue;
      case 'uc':
        if (param !== undefined && param >= 0) state.uc = param;
        continue;
      case 'u':
        if (param === undefined) continue;
        if (visible()) emit(String.fromCharCode(param < 0 ? param + 65536 : param & 0xffff));
        ucPending = state.uc;
        continue;
      case 'v':
        state.hidden = param !== 0;
        continue;
      case 'plain':
        state.hidden = false;
        continue;
      default: {
        const ch = RTF_CHAR_WORDS[word];
        if (ch !== undefined && visible()) emit(ch);
      }
    }
  }
  flush();
  return out.join('');
}
