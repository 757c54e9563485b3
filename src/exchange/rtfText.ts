/**
 * Plain text of a Rich Text Format document (RTF 1.9.1, Microsoft, 2008): our own extractor (groups, control
 * words and symbols, code pages, Unicode, skipped destinations). Used by textExtraction.ts (source import).
 */
import { TextDecoder } from 'node:util';
import { ToolError } from '../core/errors';

/**
 * Destinations whose text is not document body text (RTF 1.9.1, "Destinations"; header/footer, footnotes,
 * annotations, pictures, objects, fields' instructions, document tables and metadata). A group starting one of
 * these is skipped whole. Any other destination marked with `\*` is skipped too (the spec's rule for
 * destinations a reader does not know).
 */
const RTF_SKIP_DESTINATIONS = new Set([
  'aftncn',
  'aftnsep',
  'aftnsepc',
  'annotation',
  'atnauthor',
  'atndate',
  'atnicn',
  'atnid',
  'atnparent',
  'atnref',
  'atntime',
  'atrfend',
  'atrfstart',
  'author',
  'bkmkend',
  'bkmkstart',
  'buptim',
  'category',
  'colortbl',
  'comment',
  'company',
  'creatim',
  'doccomm',
  'docvar',
  'falt',
  'ffdeftext',
  'ffentrymcr',
  'ffexitmcr',
  'ffformat',
  'ffhelptext',
  'ffl',
  'ffname',
  'ffstattext',
  'file',
  'filetbl',
  'fldinst',
  'fontemb',
  'fontfile',
  'footer',
  'footerf',
  'footerl',
  'footerr',
  'footnote',
  'ftncn',
  'ftnsep',
  'ftnsepc',
  'header',
  'headerf',
  'headerl',
  'headerr',
  'info',
  'keywords',
  'levelnumbers',
  'leveltext',
  'list',
  'listoverridetable',
  'listpicture',
  'listtable',
  'manager',
  'nonshppict',
  'object',
  'objdata',
  'operator',
  'panose',
  'pict',
  'pn',
  'printim',
  'private',
  'revtbl',
  'revtim',
  'rsidtbl',
  'stylesheet',
  'subject',
  'tc',
  'template',
  'title',
  'txe',
  'xe',
  'xmlnstbl',
  'userprops',
  'themedata',
  'colorschememapping',
  'latentstyles',
  'datastore',
  'generator',
  'pgdsctbl',
  'protusertbl',
  'mmathPr',
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
  0: 1252,
  77: 10000,
  128: 932,
  129: 949,
  134: 936,
  136: 950,
  161: 1253,
  162: 1254,
  163: 1258,
  177: 1255,
  178: 1256,
  186: 1257,
  204: 1251,
  222: 874,
  238: 1250,
};

/** Windows code page number to a WHATWG Encoding label TextDecoder accepts; unknown pages fall back to 1252. */
function codepageLabel(cp: number): string {
  if (cp >= 1250 && cp <= 1258) return `windows-${cp}`;
  switch (cp) {
    case 874:
      return 'windows-874';
    case 866:
      return 'ibm866';
    case 932:
      return 'shift_jis';
    case 936:
      return 'gbk';
    case 949:
      return 'euc-kr';
    case 950:
      return 'big5';
    case 10000:
      return 'macintosh';
    case 20866:
      return 'koi8-r';
    case 28591:
      return 'iso-8859-1';
    case 28592:
      return 'iso-8859-2';
    case 28605:
      return 'iso-8859-15';
    case 54936:
      return 'gb18030';
    case 65001:
      return 'utf-8';
    default:
      return 'windows-1252';
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
export function rtfText(bytes: Uint8Array): string {
  let pos = 0;
  const n = bytes.length;
  // Tolerate a UTF-8 BOM or leading white space before the opening brace.
  if (n >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) pos = 3;
  while (pos < n && (bytes[pos] === 0x20 || bytes[pos] === 0x0d || bytes[pos] === 0x0a || bytes[pos] === 0x09)) pos++;
  const header = String.fromCharCode(...bytes.subarray(pos, pos + 5));
  if (header !== '{\\rtf') {
    throw new ToolError('SOURCE_IMPORT_FAILED', 'not an RTF file (it does not start with "{\\rtf").');
  }
  return new RtfReader(bytes, pos + 1).read(); // the '{' of the outer group is opened by the reader
}

/** Whether byte `c` is an ASCII letter (the characters of a control word). */
function isAsciiLetter(c: number): boolean {
  return (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
}

/** Whether byte `c` is an ASCII digit. */
function isAsciiDigit(c: number | undefined): boolean {
  return c !== undefined && c >= 0x30 && c <= 0x39;
}

/** The token loop of {@link rtfText}: reads `bytes` from `pos` (just after the outer `{`) to its closing `}`. */
class RtfReader {
  private readonly n: number;
  /** the document's code page (`\ansicpgN`, `\ansi`, `\mac`, ...) */
  private docCodepage = 1252;
  /** `\deffN` */
  private defaultFont = -1;
  /** font number to its code page, from the font table */
  private readonly fontCodepage = new Map<number, number>();
  /** font being defined in the font table */
  private fontDef = -1;

  private readonly out: string[] = [];
  /** 8-bit bytes not yet decoded, all in code page {@link pendingCp} */
  private pendingBytes: number[] = [];
  private pendingCp = 0;
  private readonly decoders = new Map<number, TextDecoder>();

  private readonly stack: RtfGroupState[] = [];
  private state: RtfGroupState = { skip: false, fonttbl: false, uc: 1, font: -1, hidden: false, upr: false };
  /** fallback characters still to skip after a \uN */
  private ucPending = 0;
  /** the last token was \* */
  private starNext = false;
  private depth = 1;

  constructor(
    private readonly bytes: Uint8Array,
    private pos: number,
  ) {
    this.n = bytes.length;
    this.stack.push(this.state);
    this.state = { ...this.state };
  }

  /** The document's text. */
  read(): string {
    while (this.pos < this.n && this.depth > 0) {
      const b = this.bytes[this.pos]!;
      if (b === 0x7b /* { */) this.openGroup();
      else if (b === 0x7d /* } */) this.closeGroup();
      else if (b === 0x0d || b === 0x0a) this.pos++;
      else if (b !== 0x5c /* \ */) this.textByte(b);
      else this.control();
    }
    this.flush();
    return this.out.join('');
  }

  private flush(): void {
    if (this.pendingBytes.length === 0) return;
    let dec = this.decoders.get(this.pendingCp);
    if (!dec) {
      dec = new TextDecoder(codepageLabel(this.pendingCp));
      this.decoders.set(this.pendingCp, dec);
    }
    this.out.push(dec.decode(Uint8Array.from(this.pendingBytes)));
    this.pendingBytes = [];
  }

  private emit(s: string): void {
    this.flush();
    if (s) this.out.push(s);
  }

  private visible(): boolean {
    return !this.state.skip && !this.state.fonttbl && !this.state.hidden;
  }

  private currentCodepage(): number {
    const font = this.state.font >= 0 ? this.state.font : this.defaultFont;
    return this.fontCodepage.get(font) ?? this.docCodepage;
  }

  private emitByte(b: number): void {
    const cp = this.currentCodepage();
    if (this.pendingBytes.length > 0 && cp !== this.pendingCp) this.flush();
    this.pendingCp = cp;
    this.pendingBytes.push(b);
  }

  /** True when the token is eaten as a \uN fallback character. */
  private consumedAsFallback(): boolean {
    if (this.ucPending > 0) {
      this.ucPending--;
      return true;
    }
    return false;
  }

  private openGroup(): void {
    this.pos++;
    this.ucPending = 0;
    this.starNext = false;
    this.stack.push(this.state);
    const parentUpr = this.state.upr;
    this.state = { ...this.state, upr: false };
    if (parentUpr) {
      // the first sub-group of \upr is the ANSI copy of the text; the \ud group that follows replaces it
      this.state.skip = true;
      this.stack[this.stack.length - 1] = { ...this.stack[this.stack.length - 1]!, upr: false };
    }
    this.depth++;
  }

  private closeGroup(): void {
    this.pos++;
    this.ucPending = 0;
    this.starNext = false;
    this.state = this.stack.pop()!;
    this.depth--;
  }

  /** A byte of text outside any control (8-bit bytes decoded with the code page in force). */
  private textByte(b: number): void {
    this.pos++;
    this.starNext = false;
    if (this.consumedAsFallback()) return;
    if (b === 0x00) return;
    if (this.visible()) this.emitByte(b);
  }

  /** A backslash: control word, control symbol or \'hh. */
  private control(): void {
    this.pos++;
    if (this.pos >= this.n) return;
    const c = this.bytes[this.pos]!;
    if (isAsciiLetter(c)) this.controlWord();
    else this.controlSymbol(c);
  }

  private controlSymbol(c: number): void {
    const bytes = this.bytes;
    this.pos++;
    const sym = String.fromCharCode(c);
    if (sym === '*') {
      this.starNext = true;
      return;
    }
    this.starNext = false;
    if (sym === "'") {
      const hex = String.fromCharCode(bytes[this.pos] ?? 0, bytes[this.pos + 1] ?? 0);
      if (/^[0-9a-fA-F]{2}$/.test(hex)) this.pos += 2;
      if (this.consumedAsFallback()) return;
      if (/^[0-9a-fA-F]{2}$/.test(hex) && this.visible()) this.emitByte(Number.parseInt(hex, 16));
      return;
    }
    if (this.consumedAsFallback()) return;
    const ch = RTF_CHAR_SYMBOLS[sym];
    if (ch !== undefined && this.visible()) this.emit(ch);
  }

  /** Control word: letters, optional signed number, optional single space delimiter. */
  private controlWord(): void {
    const bytes = this.bytes;
    const n = this.n;
    let pos = this.pos;
    let wEnd = pos;
    while (wEnd < n && wEnd - pos < 32 && isAsciiLetter(bytes[wEnd]!)) wEnd++;
    const word = String.fromCharCode(...bytes.subarray(pos, wEnd));
    pos = wEnd;
    let param: number | undefined;
    const numStart = pos;
    if (bytes[pos] === 0x2d /* - */ && pos + 1 < n && isAsciiDigit(bytes[pos + 1])) pos++;
    while (pos < n && isAsciiDigit(bytes[pos]) && pos - numStart < 11) pos++;
    if (pos > numStart && !(pos === numStart + 1 && bytes[numStart] === 0x2d)) {
      param = Number.parseInt(String.fromCharCode(...bytes.subarray(numStart, pos)), 10);
    } else {
      pos = numStart;
    }
    if (bytes[pos] === 0x20) pos++;
    this.pos = pos;

    const starred = this.starNext;
    this.starNext = false;

    if (word === 'bin') {
      // \binN: N bytes of binary data follow the delimiter.
      this.pos += Math.max(0, param ?? 0);
      this.consumedAsFallback();
      return;
    }
    if (this.consumedAsFallback()) return;

    if (starred) {
      if (word === 'ud') return; // Unicode copy of a \upr group: keep it
      this.state.skip = true;
      return;
    }
    if (word === 'fonttbl') {
      this.state.fonttbl = true;
      return;
    }
    if (word === 'upr') {
      this.state.upr = true;
      return;
    }
    if (RTF_SKIP_DESTINATIONS.has(word)) {
      this.state.skip = true;
      return;
    }
    this.applyWord(word, param);
  }

  /** The effect of a control word that is not a destination: code pages, fonts, Unicode, hidden text, characters. */
  private applyWord(word: string, param: number | undefined): void {
    const state = this.state;
    switch (word) {
      case 'ansi':
        this.docCodepage = 1252;
        return;
      case 'mac':
        this.docCodepage = 10000;
        return;
      case 'pc':
        this.docCodepage = 437;
        return;
      case 'pca':
        this.docCodepage = 850;
        return;
      case 'ansicpg':
        if (param !== undefined && param > 0) this.docCodepage = param;
        return;
      case 'deff':
        if (param !== undefined) this.defaultFont = param;
        return;
      case 'f':
        if (param === undefined) return;
        if (state.fonttbl) this.fontDef = param;
        else state.font = param;
        return;
      case 'fcharset':
        if (state.fonttbl && this.fontDef >= 0 && param !== undefined) {
          const cp = RTF_CHARSET_CODEPAGE[param];
          if (cp !== undefined && !this.fontCodepage.has(this.fontDef)) this.fontCodepage.set(this.fontDef, cp);
        }
        return;
      case 'cpg':
        if (state.fonttbl && this.fontDef >= 0 && param !== undefined && param > 0) this.fontCodepage.set(this.fontDef, param);
        return;
      case 'uc':
        if (param !== undefined && param >= 0) state.uc = param;
        return;
      case 'u':
        if (param === undefined) return;
        if (this.visible()) this.emit(String.fromCharCode(param < 0 ? param + 65536 : param & 0xffff));
        this.ucPending = state.uc;
        return;
      case 'v':
        state.hidden = param !== 0;
        return;
      case 'plain':
        state.hidden = false;
        return;
      default: {
        const ch = RTF_CHAR_WORDS[word];
        if (ch !== undefined && this.visible()) this.emit(ch);
      }
    }
  }
}
