/**
 * Unit tests for src/core/text.ts: code point <-> UTF-16 conversion. Expected values are written by hand;
 * the property tests compare against the spread operator (`[...t]`), which iterates code points.
 */
import assert from 'node:assert/strict';
import { codePointLength, cpToUtf16, hasAstral, sliceCp, toWellFormed, utf16ToCp } from '../../../src/core/text';
import { mulberry32 as rng } from '../../../src/core/random';

const EMOJI = '\u{1F600}'; // 😀, two UTF-16 units
const CLEF = '\u{1D11E}'; // 𝄞, two UTF-16 units
const E_ACUTE = '\u00E9'; // é, one unit
const LQ = '\u201C'; // “
const RQ = '\u201D'; // ”

function randomString(next: () => number, alphabet: readonly string[], maxLen: number): string {
  const n = Math.floor(next() * (maxLen + 1));
  let s = '';
  for (let i = 0; i < n; i++) s += alphabet[Math.floor(next() * alphabet.length)];
  return s;
}

describe('core/text', () => {
  describe('codePointLength', () => {
    it('counts ASCII like String.length', () => {
      assert.equal(codePointLength(''), 0);
      assert.equal(codePointLength('hello'), 5);
    });

    it('counts BMP non-ASCII characters once each', () => {
      assert.equal(codePointLength(`h${E_ACUTE}llo`), 5);
      assert.equal(codePointLength(`${LQ}quoted${RQ}`), 8);
    });

    it('counts astral characters once each, not per UTF-16 unit', () => {
      assert.equal(EMOJI.length, 2);
      assert.equal(codePointLength(EMOJI), 1);
      assert.equal(codePointLength(CLEF), 1);
      assert.equal(codePointLength(`a${EMOJI}b${CLEF}c`), 5);
      assert.equal(codePointLength(EMOJI.repeat(10)), 10);
    });

    it('counts a mix of ASCII, BMP and astral characters', () => {
      // “ G r ü ß e 😀 ” 𝄞  -> 9 code points, 11 UTF-16 units
      const t = `${LQ}Gr\u00FC\u00DFe${EMOJI}${RQ}${CLEF}`;
      assert.equal(t.length, 11);
      assert.equal(codePointLength(t), 9);
    });

    it('counts a lone surrogate as one code point (as string iteration does)', () => {
      assert.equal(codePointLength('a\uD83Db'), 3);
      assert.equal(codePointLength('\uDE00x'), 2);
      assert.equal(codePointLength('x\uD83D'), 2);
    });
  });

  describe('hasAstral', () => {
    it('is false for ASCII and BMP text and true once a surrogate appears', () => {
      assert.equal(hasAstral(`plain ${E_ACUTE} ${LQ}${RQ}`), false);
      assert.equal(hasAstral(`x${CLEF}`), true);
    });
  });

  describe('cpToUtf16', () => {
    it('is the identity on ASCII and BMP text, clamped at the end', () => {
      const t = `h${E_ACUTE}llo`;
      assert.equal(cpToUtf16(t, 0), 0);
      assert.equal(cpToUtf16(t, 2), 2);
      assert.equal(cpToUtf16(t, 5), 5);
      assert.equal(cpToUtf16(t, 6), 5);
      assert.equal(cpToUtf16(t, 1000), 5);
    });

    it('skips both units of an astral character', () => {
      const t = `a${EMOJI}b${CLEF}c`; // units: a, D83D, DE00, b, D834, DD1E, c
      assert.equal(cpToUtf16(t, 0), 0);
      assert.equal(cpToUtf16(t, 1), 1);
      assert.equal(cpToUtf16(t, 2), 3);
      assert.equal(cpToUtf16(t, 3), 4);
      assert.equal(cpToUtf16(t, 4), 6);
      assert.equal(cpToUtf16(t, 5), 7);
      assert.equal(cpToUtf16(t, 6), 7, 'past the end maps to text.length');
      assert.equal(cpToUtf16(t, 99), 7);
    });

    it('handles text that starts and ends with astral characters', () => {
      const t = `${CLEF}${EMOJI}`;
      assert.equal(cpToUtf16(t, 0), 0);
      assert.equal(cpToUtf16(t, 1), 2);
      assert.equal(cpToUtf16(t, 2), 4);
    });
  });

  describe('utf16ToCp', () => {
    it('is the identity on BMP text, clamped at the end', () => {
      const t = `${LQ}ab${RQ}`;
      assert.equal(utf16ToCp(t, 0), 0);
      assert.equal(utf16ToCp(t, 3), 3);
      assert.equal(utf16ToCp(t, 4), 4);
      assert.equal(utf16ToCp(t, 50), 4);
    });

    it('maps UTF-16 indices after astral characters back to code points', () => {
      const t = `a${EMOJI}b${CLEF}c`;
      assert.equal(utf16ToCp(t, 0), 0);
      assert.equal(utf16ToCp(t, 1), 1);
      assert.equal(utf16ToCp(t, 3), 2);
      assert.equal(utf16ToCp(t, 4), 3);
      assert.equal(utf16ToCp(t, 6), 4);
      assert.equal(utf16ToCp(t, 7), 5);
      assert.equal(utf16ToCp(t, 70), 5, 'past the end maps to the code point length');
    });

    it('counts a pair once when the index falls between its two units', () => {
      const t = `a${EMOJI}b`;
      assert.equal(utf16ToCp(t, 2), 2);
      assert.equal(utf16ToCp(t, 3), 2);
    });
  });

  describe('sliceCp', () => {
    it('slices ASCII and BMP text like String.slice', () => {
      assert.equal(sliceCp('hello world', 6, 11), 'world');
      assert.equal(sliceCp(`${LQ}caf${E_ACUTE}${RQ}`, 1, 5), `caf${E_ACUTE}`);
      assert.equal(sliceCp(`${LQ}caf${E_ACUTE}${RQ}`, 5, 6), RQ);
    });

    it('slices by code points around astral characters', () => {
      const t = `a${EMOJI}b${CLEF}c`;
      assert.equal(sliceCp(t, 1, 2), EMOJI);
      assert.equal(sliceCp(t, 0, 3), `a${EMOJI}b`);
      assert.equal(sliceCp(t, 3, 4), CLEF);
      assert.equal(sliceCp(t, 2, 5), `b${CLEF}c`);
      assert.equal(sliceCp(t, 4, 5), 'c');
    });

    it('handles the boundaries: empty ranges, the whole text, and ranges past the end', () => {
      const t = `${EMOJI}x${CLEF}`;
      assert.equal(sliceCp(t, 0, 0), '');
      assert.equal(sliceCp(t, 3, 3), '');
      assert.equal(sliceCp(t, 0, 3), t);
      assert.equal(sliceCp(t, 0, 100), t);
      assert.equal(sliceCp(t, 2, 100), CLEF);
      assert.equal(sliceCp(t, 3, 100), '');
      assert.equal(sliceCp(t, 7, 9), '');
      assert.equal(sliceCp('abc', 5, 9), '');
      assert.equal(sliceCp(t, 2, 1), '', 'end before start is empty');
    });

    it('never splits a surrogate pair', () => {
      const t = `${EMOJI}${EMOJI}${CLEF}`;
      for (let a = 0; a <= 3; a++) {
        for (let b = a; b <= 3; b++) {
          const s = sliceCp(t, a, b);
          assert.equal(s.length, 2 * (b - a), `sliceCp(t, ${a}, ${b})`);
          assert.doesNotMatch(s, /^[\uDC00-\uDFFF]|[\uD800-\uDBFF]$/);
        }
      }
    });
  });

  describe('toWellFormed', () => {
    it('replaces unpaired surrogates with U+FFFD and keeps pairs and other text', () => {
      assert.equal(toWellFormed('plain caf\u00E9'), 'plain caf\u00E9');
      assert.equal(toWellFormed(`a${EMOJI}b${CLEF}`), `a${EMOJI}b${CLEF}`);
      assert.equal(toWellFormed('ab\uD83Dcd'), 'ab\uFFFDcd');
      assert.equal(toWellFormed('ab\uDE00cd'), 'ab\uFFFDcd');
      assert.equal(toWellFormed('x\uD83D'), 'x\uFFFD');
      assert.equal(toWellFormed('\uDE00\uD83D'), '\uFFFD\uFFFD', 'a low then a high surrogate are not a pair');
      assert.equal(toWellFormed(`\uD83D${EMOJI}\uDE00`), `\uFFFD${EMOJI}\uFFFD`);
    });

    it('keeps every code point position (one code point for one)', () => {
      const next = rng(5);
      const alphabet = ['a', E_ACUTE, EMOJI, CLEF, '\uD83D', '\uDE00', '\uDBFF', '\uDC00'];
      for (let n = 0; n < 300; n++) {
        const t = randomString(next, alphabet, 16);
        const w = toWellFormed(t);
        assert.equal(codePointLength(w), codePointLength(t), JSON.stringify(t));
        assert.equal(Buffer.from(w, 'utf8').toString('utf8'), w, `${JSON.stringify(t)} survives a UTF-8 round trip`);
        const a = [...t];
        const b = [...w];
        for (let i = 0; i < a.length; i++) assert.equal(b[i], a[i]!.length === 1 && /[\uD800-\uDFFF]/.test(a[i]!) ? '\uFFFD' : a[i]);
      }
    });
  });

  describe('properties', () => {
    const ALPHABET = ['a', 'Z', ' ', '\n', '0', E_ACUTE, '\u00FC', LQ, RQ, '\u4E2D', EMOJI, CLEF, '\u{1F331}', '\u{20000}'];

    it('sliceCp(t, a, b) equals [...t].slice(a, b).join("") for random mixed strings', () => {
      const next = rng(20260102);
      for (let n = 0; n < 400; n++) {
        const t = randomString(next, ALPHABET, 24);
        const cps = [...t];
        assert.equal(codePointLength(t), cps.length, JSON.stringify(t));
        for (let k = 0; k < 12; k++) {
          const a = Math.floor(next() * (cps.length + 3));
          const b = Math.floor(next() * (cps.length + 3));
          assert.equal(sliceCp(t, a, b), cps.slice(a, b).join(''), `sliceCp(${JSON.stringify(t)}, ${a}, ${b})`);
        }
      }
    });

    it('cpToUtf16 and utf16ToCp agree with string iteration and invert each other', () => {
      const next = rng(7);
      for (let n = 0; n < 300; n++) {
        const t = randomString(next, ALPHABET, 20);
        const cps = [...t];
        for (let cp = 0; cp <= cps.length + 1; cp++) {
          const expected = cps.slice(0, cp).join('').length;
          const u = cpToUtf16(t, cp);
          assert.equal(u, expected, `cpToUtf16(${JSON.stringify(t)}, ${cp})`);
          assert.equal(utf16ToCp(t, u), Math.min(cp, cps.length), `utf16ToCp(${JSON.stringify(t)}, ${u})`);
        }
      }
    });

    it('sliceCp agrees with string iteration even with lone surrogates in the text', () => {
      const next = rng(99);
      const withLone = [...ALPHABET, '\uD83D', '\uDE00', '\uDBFF', '\uDC00'];
      for (let n = 0; n < 300; n++) {
        const t = randomString(next, withLone, 16);
        const cps = [...t];
        assert.equal(codePointLength(t), cps.length, JSON.stringify(t));
        for (let a = 0; a <= cps.length; a++) {
          const b = a + Math.floor(next() * (cps.length - a + 2));
          assert.equal(sliceCp(t, a, b), cps.slice(a, b).join(''), `sliceCp(${JSON.stringify(t)}, ${a}, ${b})`);
        }
      }
    });
  });
});
