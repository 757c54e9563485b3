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
 * - `.odt`: OpenDocument 1.3 (OASIS), `content.xml` read with `jszip` + `fast-xml-parser`, see odtText.ts.
 * - `.rtf`: Rich Text Format 1.9.1 (Microsoft, 2008), our own extractor, see rtfText.ts.
 * - `.pdf`: text content by Mozilla's `pdfjs-dist` (legacy build, pure JavaScript), see pdfText.ts.
 * - audio / video / image: no text; MIME types from the IANA Media Types registry (the `x-` ones are the
 *   de-facto names browsers and `mime-db` use).
 *
 * Every failure is a `ToolError('SOURCE_IMPORT_FAILED', message)` whose message names the file and the cause.
 */
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import mammoth from 'mammoth';
import { ToolError } from '../core/errors';
import { odtText } from './odtText';
import { pdfText } from './pdfText';
import { rtfText } from './rtfText';
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
      `Unsupported file type "${ext || '(no extension)'}" for "${path.basename(absPath)}". ` + `Supported: ${SUPPORTED_EXTENSIONS.join(' ')}.`,
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
