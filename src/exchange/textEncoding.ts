/**
 * The character encoding of a plain-text file (`.txt`, `.md`) imported as a source (issue 15, item 6):
 * UTF-8 when the bytes are valid UTF-8; else the encoding its byte-order mark names; else the encoding
 * `chardet` (ICU's charset detectors ported to TypeScript) finds most likely, decoded with `iconv-lite`,
 * only when the detection is confident enough and every byte decodes to a character that encodes back to
 * the same bytes; otherwise the import is refused naming the likely encoding. No U+FFFD is ever stored
 * where the file had a character.
 *
 * Byte-order marks: a leading BOM is the encoding's signature, not text, and is removed (as VS Code's
 * document model does, so the source text and the editor's document agree on every offset); docs/reference/http.md's
 * "Text is stored exactly as imported (... a UTF-8 byte-order mark dropped)". A U+FEFF after the first
 * character is text and kept. Sources: Unicode 15 section 23.8 "Specials" (BOM), WHATWG Encoding Standard
 * (labels `iso-8859-1` and `latin1` decode as windows-1252).
 */
import { analyse } from 'chardet';
import iconv from 'iconv-lite';
import { ToolError } from '../core/errors';
import { firstInvalidUtf8 } from '../core/strictJson';

/**
 * Least chardet confidence (0-100) at which a detected legacy encoding is used. Below it the import is
 * refused naming the likely encoding. Measured: a 21-character cp1252 line ("Café naïve – “quoted”") scores
 * 15 for windows-1252; a French Latin-1 sentence 50; random bytes 10 (and fail the control-character check).
 */
export const MIN_ENCODING_CONFIDENCE = 15;

/** What {@link decodeTextFile} found and decoded. */
export interface DecodedTextFile {
  /** the text, without a leading byte-order mark */
  text: string;
  /** the encoding decoded from: `UTF-8`, `UTF-16LE`, `UTF-16BE`, `UTF-32LE`, `UTF-32BE` or a detected one (`windows-1252`, `ISO-8859-2`, `Shift_JIS`, ...) */
  encoding: string;
  /** true when the file began with a byte-order mark (removed from `text`) */
  bom: boolean;
  /** chardet's confidence (0-100) when the encoding was detected; absent for UTF-8 and BOM-marked files */
  confidence?: number;
}

const BOMS: { bytes: number[]; encoding: string; iconv: string }[] = [
  // UTF-32LE before UTF-16LE: FF FE 00 00 starts with FF FE
  { bytes: [0xff, 0xfe, 0x00, 0x00], encoding: 'UTF-32LE', iconv: 'utf-32le' },
  { bytes: [0x00, 0x00, 0xfe, 0xff], encoding: 'UTF-32BE', iconv: 'utf-32be' },
  { bytes: [0xff, 0xfe], encoding: 'UTF-16LE', iconv: 'utf-16le' },
  { bytes: [0xfe, 0xff], encoding: 'UTF-16BE', iconv: 'utf-16be' },
];

/** True when `text` holds a C0 control other than tab, line feed, vertical tab, form feed and carriage return, or a C1 control. */
function hasControl(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x09 || (c > 0x0d && c < 0x20) || (c >= 0x80 && c <= 0x9f)) return true;
  }
  return false;
}
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** `bytes` decoded with iconv-lite when the decoding is exact (encodes back to the same bytes), else undefined. */
function exactDecode(bytes: Buffer, encoding: string): string | undefined {
  if (!iconv.encodingExists(encoding)) return undefined;
  const text = iconv.decode(bytes, encoding, { stripBOM: false });
  if (!iconv.encode(text, encoding, { addBOM: false }).equals(bytes)) return undefined;
  if (LONE_SURROGATE.test(text)) return undefined;
  return text;
}

/**
 * Decodes the bytes of a plain-text file (see the module comment for the order of the rules).
 * @param bytes the whole file.
 * @param fileName for messages.
 * @throws ToolError `SOURCE_IMPORT_FAILED` when the file is not UTF-8 and its encoding cannot be decoded
 *   exactly or was detected with a confidence under {@link MIN_ENCODING_CONFIDENCE} (the message names the
 *   likely encoding, the confidence and the first byte that is not UTF-8; `details` has them as
 *   `likely_encoding`, `confidence`, `byte_offset`), or a BOM-marked file does not decode in its encoding.
 */
export function decodeTextFile(bytes: Uint8Array, fileName = 'the file'): DecodedTextFile {
  try {
    const text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
    if (text.charCodeAt(0) === 0xfeff) return { text: text.slice(1), encoding: 'UTF-8', bom: true };
    return { text, encoding: 'UTF-8', bom: false };
  } catch {
    // not UTF-8: a BOM, then detection
  }
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const bom = BOMS.find((b) => b.bytes.every((x, i) => buf[i] === x));
  if (bom) {
    const text = exactDecode(buf.subarray(bom.bytes.length), bom.iconv);
    if (text === undefined) {
      throw new ToolError(
        'SOURCE_IMPORT_FAILED',
        `${fileName} begins with a ${bom.encoding} byte-order mark but is not valid ${bom.encoding}. Save it as UTF-8 and import again.`,
        { likely_encoding: bom.encoding },
      );
    }
    return { text, encoding: bom.encoding, bom: true };
  }
  const invalid = firstInvalidUtf8(bytes);
  // UTF-8 itself was ruled out above
  const candidates = analyse(buf).filter((c) => c.name !== 'UTF-8');
  const top = candidates[0];
  for (const c of candidates) {
    if (c.confidence < MIN_ENCODING_CONFIDENCE) break;
    // WHATWG: the iso-8859-1 label decodes as windows-1252 (its C1 bytes 0x80-0x9F are printable there)
    const name = c.name === 'ISO-8859-1' && buf.some((b) => b >= 0x80 && b <= 0x9f) ? 'windows-1252' : c.name;
    const text = exactDecode(buf, name);
    if (text === undefined || hasControl(text)) continue;
    return { text, encoding: name, bom: false, confidence: c.confidence };
  }
  const where = invalid ? ` (byte offset ${invalid.offset}: ${invalid.problem})` : '';
  const likely = !top
    ? '; no other encoding was recognised'
    : top.confidence >= MIN_ENCODING_CONFIDENCE
      ? `; it looks like ${top.name} (confidence ${top.confidence} of 100), but does not decode exactly as ${top.name} (a byte that is no character of it, or control characters)`
      : `; it looks like ${top.name} (confidence ${top.confidence} of 100), too uncertain to decode without changing characters`;
  throw new ToolError('SOURCE_IMPORT_FAILED', `${fileName} is not valid UTF-8${where}${likely}. Save it as UTF-8 and import again.`, {
    likely_encoding: top?.name ?? null,
    confidence: top?.confidence ?? null,
    byte_offset: invalid?.offset ?? null,
  });
}
