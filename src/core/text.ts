/**
 * Text positions. Marginalia counts Unicode code points of the stored text (as QualCoder and REFI-QDA do);
 * JavaScript strings index UTF-16 code units. These helpers convert between the two.
 */

const SURROGATE = /[\uD800-\uDFFF]/;

/** True when the string holds characters outside the Basic Multilingual Plane (where the units differ). */
export function hasAstral(text: string): boolean {
  return SURROGATE.test(text);
}

/** An unpaired surrogate: a high one not followed by a low one, or a low one not preceded by a high one. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * `text` with every unpaired surrogate replaced by U+FFFD (as `String.prototype.toWellFormed`). Such text
 * cannot be stored as UTF-8: SQLite would keep invalid bytes that read back as three U+FFFD each, moving
 * every later position. The replacement keeps code point positions unchanged (one code point for one).
 */
export function toWellFormed(text: string): string {
  return hasAstral(text) ? text.replace(LONE_SURROGATE, '\uFFFD') : text;
}

/** Length of `text` in code points. */
export function codePointLength(text: string): number {
  if (!hasAstral(text)) return text.length;
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}

/**
 * UTF-16 index of code point `cp` in `text`. `cp` past the end maps to `text.length`.
 * Linear in `cp` when the text has astral characters, O(1) otherwise.
 */
export function cpToUtf16(text: string, cp: number): number {
  if (!hasAstral(text)) return Math.min(cp, text.length);
  let i = 0;
  let n = 0;
  while (n < cp && i < text.length) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1);
      i += d >= 0xdc00 && d <= 0xdfff ? 2 : 1;
    } else i++;
    n++;
  }
  return i;
}

/** Code point index of UTF-16 index `u` in `text` (a `u` inside a surrogate pair counts the pair once). */
export function utf16ToCp(text: string, u: number): number {
  if (!hasAstral(text)) return Math.min(u, text.length);
  return codePointLength(text.slice(0, u));
}

/** The substring between code point offsets `[start, end)`. */
export function sliceCp(text: string, start: number, end: number): string {
  if (!hasAstral(text)) return text.slice(start, end);
  const s = cpToUtf16(text, start);
  const e = s + cpToUtf16(text.slice(s), end - start);
  return text.slice(s, e);
}

/**
 * `text` on one line for a label or a sentence: runs of white space (line breaks included) become one space, the
 * ends are trimmed, and a result longer than `max` code points is cut to `max - 1` code points plus "…".
 * Cuts fall between code points, never inside a surrogate pair.
 */
export function oneLineExcerpt(text: string, max: number): string {
  const flat = text.replace(/\s+/gu, ' ').trim();
  const cps = Array.from(flat);
  return cps.length <= max
    ? flat
    : `${cps
        .slice(0, max - 1)
        .join('')
        .trimEnd()}…`;
}
