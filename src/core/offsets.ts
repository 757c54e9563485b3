/**
 * Fast conversion between code point offsets (what Marginalia stores) and UTF-16 offsets (what
 * JavaScript strings and VS Code documents use) for one text. Building costs one scan; each conversion
 * is O(1) for texts without astral characters and O(log n) otherwise (n = astral characters).
 */
export class OffsetMap {
  /** UTF-16 index of each astral (surrogate-pair) character, ascending */
  private readonly astral: number[] = [];

  constructor(readonly text: string) {
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
        const d = text.charCodeAt(i + 1);
        if (d >= 0xdc00 && d <= 0xdfff) {
          this.astral.push(i);
          i++;
        }
      }
    }
  }

  /** Length of the text in code points. */
  get cpLength(): number {
    return this.text.length - this.astral.length;
  }

  /** UTF-16 offset of code point offset `cp` (clamped to the text). */
  toUtf16(cp: number): number {
    if (this.astral.length === 0) return Math.min(Math.max(cp, 0), this.text.length);
    // the k-th astral char (0-based) sits at code point astral[k] - k; count those before cp
    let lo = 0;
    let hi = this.astral.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((this.astral[mid] as number) - mid < cp) lo = mid + 1;
      else hi = mid;
    }
    return Math.min(Math.max(cp, 0) + lo, this.text.length);
  }

  /** Code point offset of UTF-16 offset `u`; an offset inside a surrogate pair maps to the pair's start. */
  toCp(u: number): number {
    if (this.astral.length === 0) return Math.min(Math.max(u, 0), this.text.length);
    let lo = 0;
    let hi = this.astral.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((this.astral[mid] as number) < u - 1) lo = mid + 1;
      else hi = mid;
    }
    // lo = astral chars starting before u-1, i.e. fully before u (a pair starting at u-1 straddles u)
    const straddles = lo < this.astral.length && this.astral[lo] === u - 1;
    return Math.max(u, 0) - lo - (straddles ? 1 : 0);
  }
}
