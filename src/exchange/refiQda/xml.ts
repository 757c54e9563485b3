/**
 * A small XML 1.0 writer for the REFI-QDA exports: elements in the order they are written (the schema's
 * sequences fix that order), two-space indentation between elements, text content written exactly.
 *
 * Escaping (XML 1.0, sections 2.2, 2.4, 2.11 and 3.3.3): `&`, `<`, `>` always, `"` in attribute values; a
 * carriage return as `&#13;` everywhere, and a tab or line feed inside an attribute value as `&#9;` / `&#10;`,
 * so that a conforming reader's line-end and attribute-value normalisation gives back exactly the text written.
 * Characters XML 1.0 cannot carry at all (C0 controls other than tab, line feed and carriage return, U+FFFE,
 * U+FFFF, unpaired surrogates) become U+FFFD; {@link XmlWriter.replaced} counts them.
 */

/** Characters XML 1.0 does not allow, even as character references. */
// eslint-disable-next-line no-control-regex -- these are exactly the characters XML forbids
const NOT_XML = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** An attribute value; null and undefined leave the attribute out. */
export type AttrValue = string | number | boolean | null | undefined;

/** Writes one XML document into a string. */
export class XmlWriter {
  private readonly parts: string[] = [];
  private readonly stack: string[] = [];
  /** how many characters XML cannot carry were replaced by U+FFFD */
  replaced = 0;

  /** Starts a document with the XML declaration (UTF-8). */
  constructor() {
    this.parts.push('<?xml version="1.0" encoding="utf-8"?>\n');
  }

  /** Opens element `name` with `attrs` (in the given order). Close it with {@link end}. */
  start(name: string, attrs: Record<string, AttrValue> = {}): this {
    this.parts.push(`${this.indent()}<${name}${this.attrs(attrs)}>\n`);
    this.stack.push(name);
    return this;
  }

  /** Writes an empty element `<name .../>`. */
  empty(name: string, attrs: Record<string, AttrValue> = {}): this {
    this.parts.push(`${this.indent()}<${name}${this.attrs(attrs)}/>\n`);
    return this;
  }

  /** Writes `<name ...>text</name>` with the text exactly as given (escaped). */
  text(name: string, content: string, attrs: Record<string, AttrValue> = {}): this {
    this.parts.push(`${this.indent()}<${name}${this.attrs(attrs)}>${this.escapeText(content)}</${name}>\n`);
    return this;
  }

  /** Closes the innermost open element. */
  end(): this {
    const name = this.stack.pop();
    if (name === undefined) throw new Error('XmlWriter.end without an open element');
    this.parts.push(`${this.indent()}</${name}>\n`);
    return this;
  }

  /** The document; every element must be closed. */
  toString(): string {
    if (this.stack.length > 0) throw new Error(`XmlWriter: unclosed elements ${this.stack.join(' > ')}`);
    return this.parts.join('');
  }

  private indent(): string {
    return '  '.repeat(this.stack.length);
  }

  private attrs(attrs: Record<string, AttrValue>): string {
    let out = '';
    for (const [k, v] of Object.entries(attrs)) {
      if (v === null || v === undefined) continue;
      out += ` ${k}="${this.escapeAttr(String(v))}"`;
    }
    return out;
  }

  private clean(s: string): string {
    return s.replace(NOT_XML, () => {
      this.replaced++;
      return '\uFFFD';
    });
  }

  /** `s` escaped for element content. */
  escapeText(s: string): string {
    return this.clean(s).replace(/[&<>\r]/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : c === '>' ? '&gt;' : '&#13;'));
  }

  /** `s` escaped for a double-quoted attribute value. */
  escapeAttr(s: string): string {
    return this.clean(s).replace(/[&<>"\t\n\r]/g, (c) => ATTR_ESCAPES[c] as string);
  }
}

const ATTR_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', '\t': '&#9;', '\n': '&#10;', '\r': '&#13;' };

/**
 * A finite number as an `xsd:decimal` literal: plain digits with an optional fraction, never exponent notation
 * (XML Schema Part 2, 3.2.3). JavaScript's shortest round-trip digits are kept, so parsing the literal gives the
 * same number back.
 */
export function toXsdDecimal(n: number): string {
  if (!Number.isFinite(n)) throw new Error(`not a finite number: ${n}`);
  const s = String(n);
  const m = /^(-?)(\d+)(?:\.(\d+))?e([+-]\d+)$/i.exec(s);
  if (!m) return s;
  const sign = m[1] as string;
  const digits = `${m[2]}${m[3] ?? ''}`;
  const point = (m[2] as string).length + Number(m[4]);
  let out: string;
  if (point <= 0) out = `0.${'0'.repeat(-point)}${digits}`;
  else if (point >= digits.length) out = `${digits}${'0'.repeat(point - digits.length)}`;
  else out = `${digits.slice(0, point)}.${digits.slice(point)}`;
  out = out.replace(/^0+(?=\d)/, '');
  if (out.includes('.')) out = out.replace(/\.?0+$/, '');
  return `${sign}${out}`;
}

/** A finite integer as an `xsd:integer` literal (exact digits, no exponent). */
export function toXsdInteger(n: number): string {
  if (!Number.isInteger(n)) throw new Error(`not an integer: ${n}`);
  return BigInt(n).toString();
}
