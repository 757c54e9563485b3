/**
 * Strict JSON for request bodies: only well-formed Unicode gets in (issue 15, item 6), and an object may
 * name a key once (item 8). Every adapter (HTTP fast path and express routes, REST, MCP over HTTP and stdio,
 * WebSocket, gRPC `*_json` fields, CLI stdin) parses what it receives with {@link parseStrictJson}, so a
 * body is refused the same way everywhere, before anything runs, and nothing is written.
 *
 * Refused, as ToolError `INVALID_JSON` with the byte offset in the message and in `details.byte_offset`:
 * - bytes that are not well-formed UTF-8 (Unicode 15, section 3.9, table 3-7 "Well-Formed UTF-8 Byte
 *   Sequences"): invalid bytes (C0, C1, F5..FF), stray continuation bytes, overlong forms, surrogate code
 *   points encoded in UTF-8 (CESU-8, ED A0..BF xx), code points above U+10FFFF and truncated sequences;
 * - JSON text that does not parse (ECMA-404 / RFC 8259, by the engine's `JSON.parse`);
 * - a string escape of a lone surrogate (RFC 8259 section 8.2: such a string's behaviour is unpredictable):
 *   `\ud800` not followed by an escaped low surrogate, or a low surrogate escape `\udc00` on its own;
 * - an object that names a key twice, at any depth (RFC 8259 section 4: names SHOULD be unique; we refuse
 *   rather than keep the last one), keys compared after unescaping (`"a"` and `"\u0061"` are the same key).
 * A leading UTF-8 byte-order mark (EF BB BF) is skipped (RFC 8259 section 8.1 lets parsers ignore it);
 * U+FEFF anywhere else is what JSON says it is: a character inside a string, an error outside one.
 *
 * A declared charset other than UTF-8 (`Content-Type: application/json; charset=windows-1252`) is decoded
 * with iconv-lite (the decoder express's body-parser uses) when iconv-lite knows it and every byte is a
 * character of it (the decoded text encodes back to the same bytes; iconv-lite would otherwise put U+FFFD
 * where an undefined byte was), else refused: INVALID_JSON naming the first byte that is not a character of
 * that charset, UNSUPPORTED_MEDIA_TYPE for a charset iconv-lite does not know.
 */
import iconv from 'iconv-lite';
import { ToolError } from './errors';

/** Why a body was refused: `details.reason` of the INVALID_JSON error. */
export type StrictJsonReason = 'invalid_utf8' | 'invalid_charset_bytes' | 'syntax' | 'lone_surrogate' | 'duplicate_key';

/** `details` of an INVALID_JSON error thrown here. */
export interface StrictJsonErrorDetails {
  reason: StrictJsonReason;
  /** byte offset (0-based, in the bytes as received) of the offending byte, escape or key */
  byte_offset: number;
  /** the duplicated key, for `duplicate_key` */
  key?: string;
  /** the declared charset, when not UTF-8 */
  charset?: string;
}

/** Options of {@link parseStrictJson} and {@link decodeStrictText}. */
export interface StrictJsonOptions {
  /**
   * What the bytes are, for messages: "The body" (default), "The line", "The message", "arguments_json" ...
   * Messages read `${what} is not valid UTF-8: ...`.
   */
  what?: string;
  /** the declared charset (from Content-Type); absent, `utf-8` or `utf8` mean UTF-8 */
  charset?: string;
}

/** The decoded text of a body and how its character positions map back to bytes. */
export interface DecodedText {
  /** the text, without a leading byte-order mark */
  text: string;
  /** bytes of the skipped byte-order mark (0 or its length in the charset) */
  bomBytes: number;
  /** the charset used, lower case (`utf-8` for UTF-8) */
  charset: string;
}

const UTF8_NAMES = new Set(['utf-8', 'utf8']);
const fatalUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * The charset parameter of a Content-Type header value, lower case and unquoted (`'windows-1252'`), or
 * undefined when there is none. `application/json; charset="UTF-8"` gives `'utf-8'`.
 */
export function charsetOf(contentType: string | undefined): string | undefined {
  if (!contentType) return undefined;
  const params = contentType.split(';');
  for (let i = 1; i < params.length; i++) {
    const p = params[i] as string;
    const eq = p.indexOf('=');
    if (eq < 0 || p.slice(0, eq).trim().toLowerCase() !== 'charset') continue;
    return p
      .slice(eq + 1)
      .trim()
      .replace(/^"(.*)"$/, '$1')
      .toLowerCase();
  }
  return undefined;
}

/** True when `charset` (as {@link charsetOf} gives it) is absent or names UTF-8. */
export function isUtf8Charset(charset: string | undefined): boolean {
  return charset === undefined || UTF8_NAMES.has(charset);
}

/** One ill-formed UTF-8 sequence: where it starts and what is wrong with it. */
export interface Utf8Problem {
  /** byte offset of the first byte of the ill-formed sequence */
  offset: number;
  /** e.g. "overlong encoding", "an incomplete sequence at the end" */
  problem: string;
}

/**
 * The first ill-formed UTF-8 sequence in `bytes` (Unicode 15, table 3-7), or undefined when `bytes` is
 * well-formed UTF-8. Offsets are bytes from the start of `bytes`.
 */
export function firstInvalidUtf8(bytes: Uint8Array): Utf8Problem | undefined {
  const n = bytes.length;
  let i = 0;
  while (i < n) {
    const b = bytes[i] as number;
    if (b < 0x80) {
      i++;
      continue;
    }
    if (b >= 0x80 && b <= 0xbf) return { offset: i, problem: `continuation byte 0x${hex(b)} without a lead byte` };
    if (b === 0xc0 || b === 0xc1) return { offset: i, problem: `overlong encoding (lead byte 0x${hex(b)})` };
    if (b >= 0xf5)
      return { offset: i, problem: b >= 0xf8 ? `byte 0x${hex(b)} never occurs in UTF-8` : `lead byte 0x${hex(b)} would encode a code point above U+10FFFF` };
    const len = b < 0xe0 ? 2 : b < 0xf0 ? 3 : 4;
    // the allowed range of the second byte (table 3-7)
    let lo = 0x80;
    let hi = 0xbf;
    if (b === 0xe0) lo = 0xa0;
    else if (b === 0xed) hi = 0x9f;
    else if (b === 0xf0) lo = 0x90;
    else if (b === 0xf4) hi = 0x8f;
    for (let k = 1; k < len; k++) {
      if (i + k >= n) return { offset: i, problem: 'an incomplete sequence at the end' };
      const c = bytes[i + k] as number;
      const min = k === 1 ? lo : 0x80;
      const max = k === 1 ? hi : 0xbf;
      if (c < min || c > max) {
        if (c >= 0x80 && c <= 0xbf && k === 1) {
          if (b === 0xe0 || b === 0xf0) return { offset: i, problem: 'overlong encoding' };
          if (b === 0xed) return { offset: i, problem: 'a surrogate code point encoded in UTF-8 (CESU-8)' };
          return { offset: i, problem: 'a code point above U+10FFFF' };
        }
        return { offset: i, problem: `an incomplete sequence (lead byte 0x${hex(b)} without its ${len - 1} continuation bytes)` };
      }
    }
    i += len;
  }
  return undefined;
}

/** A character for a message: itself in quotes when printable ASCII, else its code point (`U+FEFF`). */
function describeChar(cp: number): string {
  return cp > 0x20 && cp < 0x7f ? JSON.stringify(String.fromCodePoint(cp)) : `U+${cp.toString(16).toUpperCase().padStart(4, '0')}`;
}

function hex(b: number): string {
  return b.toString(16).toUpperCase().padStart(2, '0');
}

function invalid(message: string, details: StrictJsonErrorDetails): ToolError {
  return new ToolError('INVALID_JSON', message, details);
}

/**
 * Decodes `bytes` strictly: UTF-8 unless `opts.charset` names another charset (see the module comment); a
 * leading byte-order mark is skipped and counted in `bomBytes`.
 * Errors: INVALID_JSON (`invalid_utf8`, `invalid_charset_bytes`, `lone_surrogate` for a raw lone surrogate
 * a UTF-16 or UTF-32 body can hold), UNSUPPORTED_MEDIA_TYPE (a charset iconv-lite does not know).
 */
export function decodeStrictText(bytes: Uint8Array, opts: StrictJsonOptions = {}): DecodedText {
  const what = opts.what ?? 'The body';
  if (isUtf8Charset(opts.charset)) {
    let text: string;
    try {
      text = fatalUtf8.decode(bytes);
    } catch {
      const p = firstInvalidUtf8(bytes) ?? { offset: 0, problem: 'ill-formed' };
      throw invalid(
        `${what} is not valid UTF-8: at byte offset ${p.offset}${p.offset < bytes.length ? ` (0x${hex(bytes[p.offset] as number)})` : ''}: ${p.problem}. Send JSON encoded as UTF-8.`,
        {
          reason: 'invalid_utf8',
          byte_offset: p.offset,
        },
      );
    }
    if (text.charCodeAt(0) === 0xfeff) return { text: text.slice(1), bomBytes: 3, charset: 'utf-8' };
    return { text, bomBytes: 0, charset: 'utf-8' };
  }
  const charset = opts.charset as string;
  if (!iconv.encodingExists(charset)) {
    throw new ToolError(
      'UNSUPPORTED_MEDIA_TYPE',
      `${what} declares charset "${charset}", which this server cannot decode: send UTF-8 JSON (Content-Type: application/json)`,
      { charset },
    );
  }
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let text = iconv.decode(buf, charset, { stripBOM: false });
  const back = iconv.encode(text, charset, { addBOM: false });
  if (!back.equals(buf)) {
    // the first byte whose decoding does not encode back (a byte that is no character of the charset)
    let at = 0;
    while (at < buf.length && at < back.length && buf[at] === back[at]) at++;
    throw invalid(
      `${what} is not valid ${charset}: byte offset ${at}${at < buf.length ? ` (0x${hex(buf[at] as number)})` : ''} is not a character of ${charset}. Send JSON encoded as UTF-8.`,
      {
        reason: 'invalid_charset_bytes',
        byte_offset: at,
        charset,
      },
    );
  }
  let bomBytes = 0;
  if (text.charCodeAt(0) === 0xfeff) {
    bomBytes = iconv.encode('\ufeff', charset, { addBOM: false }).length;
    text = text.slice(1);
  }
  const at = firstLoneSurrogate(text);
  if (at >= 0) {
    const offset = bomBytes + iconv.encode(text.slice(0, at), charset, { addBOM: false }).length;
    throw invalid(
      `${what} holds a lone surrogate (U+${text.charCodeAt(at).toString(16).toUpperCase()}) at byte offset ${offset}: it is not a Unicode character.`,
      { reason: 'lone_surrogate', byte_offset: offset, charset },
    );
  }
  return { text, bomBytes, charset };
}

/**
 * Parses `bytes` as strict JSON (see the module comment): decoded by {@link decodeStrictText}, parsed by
 * `JSON.parse`, then checked for lone surrogate escapes and duplicated keys by one pass over the text.
 * Returns the parsed value, or `undefined` when the body is empty (zero bytes, or only a byte-order mark):
 * callers decide what an empty body means. Whitespace alone is a syntax error.
 * Errors: INVALID_JSON (`details`: {@link StrictJsonErrorDetails}), UNSUPPORTED_MEDIA_TYPE.
 */
export function parseStrictJson(bytes: Uint8Array, opts: StrictJsonOptions = {}): unknown {
  const decoded = decodeStrictText(bytes, opts);
  if (decoded.text.length === 0) return undefined;
  return parseDecoded(decoded, opts.what ?? 'The body');
}

/**
 * {@link parseStrictJson} for text that is already a JavaScript string (a protobuf `string` field whose
 * bytes were checked as UTF-8): lone surrogates (raw or escaped), syntax and duplicated keys are checked;
 * byte offsets count the text's UTF-8 bytes. A leading U+FEFF is not skipped. Returns undefined for ''.
 * Errors: INVALID_JSON.
 */
export function parseStrictJsonText(text: string, what = 'The body'): unknown {
  if (text.length === 0) return undefined;
  const at = firstLoneSurrogate(text);
  if (at >= 0) {
    const offset = Buffer.byteLength(text.slice(0, at), 'utf8');
    throw invalid(
      `${what} holds a lone surrogate (U+${text.charCodeAt(at).toString(16).toUpperCase()}) at byte offset ${offset}: it is not a Unicode character.`,
      { reason: 'lone_surrogate', byte_offset: offset },
    );
  }
  return parseDecoded({ text, bomBytes: 0, charset: 'utf-8' }, what);
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** UTF-16 index of the first unpaired surrogate code unit of `text`, or -1 when it is well-formed. */
export function firstLoneSurrogate(text: string): number {
  const m = LONE_SURROGATE.exec(text);
  return m ? m.index : -1;
}

/** JSON.parse plus the scan; errors carry byte offsets in the original bytes. */
function parseDecoded(decoded: DecodedText, what: string): unknown {
  const { text } = decoded;
  const byteOffset = (index: number): number =>
    decoded.bomBytes +
    (decoded.charset === 'utf-8'
      ? Buffer.byteLength(text.slice(0, index), 'utf8')
      : iconv.encode(text.slice(0, index), decoded.charset, { addBOM: false }).length);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    const found = syntaxErrorAt(text);
    const offset = byteOffset(found?.index ?? text.length);
    const why = found ? found.why : message.replace(/\s*\(line \d+ column \d+\)/, '');
    throw invalid(`${what} is not valid JSON: ${why} at byte offset ${offset}`, { reason: 'syntax', byte_offset: offset });
  }
  const found = scanJson(text);
  if (found) {
    const offset = byteOffset(found.index);
    if (found.kind === 'lone_surrogate') {
      throw invalid(
        `${what} holds a lone surrogate escape ${text.slice(found.index, found.index + 6)} at byte offset ${offset}: a high surrogate escape (\\ud800-\\udbff) must be followed by a low one (\\udc00-\\udfff), and a low one may not stand alone.`,
        {
          reason: 'lone_surrogate',
          byte_offset: offset,
        },
      );
    }
    const shown = JSON.stringify(found.key).slice(0, 200);
    throw invalid(`${what} names the key ${shown} twice in one object (again at byte offset ${offset}): each key may appear once.`, {
      reason: 'duplicate_key',
      byte_offset: offset,
      key: found.key,
    });
  }
  return value;
}

/** What {@link scanJson} found: a lone surrogate escape or a repeated key, at a UTF-16 index of the text. */
interface ScanFinding {
  kind: 'lone_surrogate' | 'duplicate_key';
  /** index of the escape's backslash, or of the repeated key's opening quote */
  index: number;
  key?: string;
}

/** Keys of one object compared by a linear search up to this many, then through a Set. */
const LINEAR_KEYS = 16;

function isHighEscape(text: string, at: number): boolean {
  // at: index of "\" of a "\uXXXX" escape
  const c = text.charCodeAt(at + 2) | 0x20;
  const d = text.charCodeAt(at + 3) | 0x20;
  return c === 0x64 /* d */ && d >= 0x38 /* 8 */ && (d <= 0x39 || (d >= 0x61 && d <= 0x62)); // d8..db
}

function isLowEscape(text: string, at: number): boolean {
  const c = text.charCodeAt(at + 2) | 0x20;
  const d = text.charCodeAt(at + 3) | 0x20;
  return c === 0x64 && d >= 0x63 && d <= 0x66; // dc..df
}

/**
 * One pass over JSON text that `JSON.parse` accepted: finds the first lone surrogate escape or repeated
 * object key. String contents are skipped with `indexOf` (quote and backslash), so long strings cost
 * little; the stack is explicit, so depth costs no recursion.
 */
function scanJson(text: string): ScanFinding | undefined {
  // per open container (index = depth): whether it is an object, and its keys so far (lists reused across
  // objects at the same depth, a Set once an object has more than LINEAR_KEYS keys): no allocation per object
  const isObject: boolean[] = [];
  const keyLists: string[][] = [];
  const keySets: (Set<string> | undefined)[] = [];
  let depth = -1;
  let expectKey = false;
  // the next backslash and quote at or after the scan position, each found once (indexOf per escape would be quadratic)
  let nextBackslash = text.indexOf('\\');
  if (nextBackslash < 0) nextBackslash = Infinity;
  let nextQuote = -1;
  const n = text.length;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      const start = i;
      let j = i + 1;
      let escaped = false;
      for (;;) {
        if (nextBackslash < j) {
          nextBackslash = text.indexOf('\\', j);
          if (nextBackslash < 0) nextBackslash = Infinity;
        }
        if (nextQuote < j) {
          nextQuote = text.indexOf('"', j);
          if (nextQuote < 0) nextQuote = Infinity;
        }
        if (nextQuote < nextBackslash) {
          j = nextQuote;
          break;
        }
        // an escape before the closing quote
        escaped = true;
        const b = nextBackslash;
        if (text.charCodeAt(b + 1) === 0x75 /* u */) {
          if (isHighEscape(text, b)) {
            if (text.charCodeAt(b + 6) === 0x5c && text.charCodeAt(b + 7) === 0x75 && isLowEscape(text, b + 6)) j = b + 12;
            else return { kind: 'lone_surrogate', index: b };
          } else if (isLowEscape(text, b)) return { kind: 'lone_surrogate', index: b };
          else j = b + 6;
        } else j = b + 2;
      }
      if (expectKey) {
        const key = escaped ? (JSON.parse(text.slice(start, j + 1)) as string) : text.slice(start + 1, j);
        const set = keySets[depth];
        if (set) {
          if (set.has(key)) return { kind: 'duplicate_key', index: start, key };
          set.add(key);
        } else {
          const list = keyLists[depth] as string[];
          for (let k = 0; k < list.length; k++) if (list[k] === key) return { kind: 'duplicate_key', index: start, key };
          list.push(key);
          if (list.length > LINEAR_KEYS) keySets[depth] = new Set(list);
        }
        expectKey = false;
      }
      i = j + 1;
      continue;
    }
    if (c === 0x7b /* { */) {
      depth++;
      isObject[depth] = true;
      const list = keyLists[depth];
      if (list) list.length = 0;
      else keyLists[depth] = [];
      keySets[depth] = undefined;
      expectKey = true;
    } else if (c === 0x5b /* [ */) {
      depth++;
      isObject[depth] = false;
      expectKey = false;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      depth--;
      expectKey = false;
    } else if (c === 0x2c /* , */) {
      expectKey = isObject[depth] === true;
    }
    i++;
  }
  return undefined;
}

/**
 * Where JSON text first breaks the grammar of RFC 8259 (section 2-7), for the error message only (the
 * engine's JSON.parse decides validity; its messages do not always give a position). Returns the UTF-16
 * index and what was wrong, or undefined when this check finds nothing (then the engine's message is used).
 */
function syntaxErrorAt(text: string): { index: number; why: string } | undefined {
  const n = text.length;
  let i = 0;
  const ws = () => {
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) i++;
      else break;
    }
  };
  const at = (why: string) => ({ index: i, why: i >= n ? 'the text ends too early' : `${why}, found ${describeChar(text.codePointAt(i) as number)}` });
  // containers open: true = object, false = array
  const stack: boolean[] = [];
  for (;;) {
    // a value
    ws();
    const c = text.charCodeAt(i);
    if (c === 0x7b || c === 0x5b) {
      const isObject = c === 0x7b;
      i++;
      ws();
      if (text.charCodeAt(i) === (isObject ? 0x7d : 0x5d)) i++;
      else {
        stack.push(isObject);
        if (isObject) {
          if (text.charCodeAt(i) !== 0x22) return at('expected a key in double quotes or "}"');
          const e = str();
          if (e) return e;
          ws();
          if (text.charCodeAt(i) !== 0x3a) return at('expected ":" after the key');
          i++;
        }
        continue;
      }
    } else if (c === 0x22) {
      const e = str();
      if (e) return e;
    } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      const m = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
      m.lastIndex = i;
      if (!m.exec(text)) return at('expected a number');
      i = m.lastIndex;
    } else if (text.startsWith('true', i)) i += 4;
    else if (text.startsWith('false', i)) i += 5;
    else if (text.startsWith('null', i)) i += 4;
    else return at('expected a value (object, array, string, number, true, false or null)');
    // after a value: close containers or go on with a comma
    for (;;) {
      ws();
      if (stack.length === 0) {
        if (i < n) return at('expected the end of the text');
        return undefined;
      }
      const isObject = stack[stack.length - 1] as boolean;
      const d = text.charCodeAt(i);
      if (d === (isObject ? 0x7d : 0x5d)) {
        stack.pop();
        i++;
        continue;
      }
      if (d !== 0x2c) return at(isObject ? 'expected "," or "}"' : 'expected "," or "]"');
      i++;
      if (isObject) {
        ws();
        if (text.charCodeAt(i) !== 0x22) return at('expected a key in double quotes');
        const e = str();
        if (e) return e;
        ws();
        if (text.charCodeAt(i) !== 0x3a) return at('expected ":" after the key');
        i++;
      }
      break;
    }
  }

  function str(): { index: number; why: string } | undefined {
    i++; // opening quote
    for (;;) {
      if (i >= n) return at('unterminated string');
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        i++;
        return undefined;
      }
      if (c < 0x20) return { index: i, why: `a raw control character U+${c.toString(16).toUpperCase().padStart(4, '0')} in a string (write it as an escape)` };
      if (c === 0x5c) {
        const e = text[i + 1];
        if (e === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) return { index: i, why: 'a \\u escape without four hex digits' };
          i += 6;
        } else if (e !== undefined && '"\\/bfnrt'.includes(e)) i += 2;
        else return { index: i, why: 'an invalid escape' };
        continue;
      }
      i++;
    }
  }
}

/**
 * One item of {@link readStrictLines}: a line (without its `\n` or `\r\n`), a line that was too long, or a line
 * that is not valid UTF-8 (`invalid`: the INVALID_JSON error naming the byte offset in the line).
 */
export type StrictLineItem = { line: string } | { tooLong: number } | { invalid: ToolError };

/**
 * Splits a byte stream into UTF-8 lines (`\n`, with a trailing `\r` dropped); the last line needs no
 * newline. Each line is decoded strictly ({@link decodeStrictText}: a leading BOM skipped); one that is not valid UTF-8 is reported as `{invalid}`, never decoded with U+FFFD. A line longer than `maxBytes` is skipped up to its newline and reported as `{tooLong: bytes}`
 * so memory stays bounded. Pulls the input as it is consumed (backpressure).
 */
export async function* readStrictLines(input: AsyncIterable<Buffer | string>, maxBytes: number): AsyncGenerator<StrictLineItem> {
  let parts: Buffer[] = [];
  let size = 0;
  let skipping = 0;
  const emit = (): StrictLineItem => {
    let buf = Buffer.concat(parts);
    parts = [];
    size = 0;
    if (buf.length > 0 && buf[buf.length - 1] === 0x0d) buf = buf.subarray(0, buf.length - 1);
    try {
      return { line: decodeStrictText(buf, { what: 'The line' }).text };
    } catch (e) {
      if (e instanceof ToolError) return { invalid: e };
      throw e;
    }
  };
  for await (const chunk of input) {
    let buf = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    while (buf.length > 0) {
      const nl = buf.indexOf(0x0a);
      const piece = nl === -1 ? buf : buf.subarray(0, nl);
      if (skipping > 0) skipping += piece.length;
      else if (size + piece.length > maxBytes) {
        skipping = size + piece.length;
        parts = [];
        size = 0;
      } else {
        parts.push(piece);
        size += piece.length;
      }
      if (nl === -1) break;
      if (skipping > 0) {
        yield { tooLong: skipping };
        skipping = 0;
      } else yield emit();
      buf = buf.subarray(nl + 1);
    }
  }
  if (skipping > 0) yield { tooLong: skipping };
  else if (size > 0) yield emit();
}
