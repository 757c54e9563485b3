import * as assert from 'node:assert/strict';
import { OffsetMap } from '../../../src/core/offsets';

describe('OffsetMap', () => {
  it('is the identity on text without astral characters', () => {
    const m = new OffsetMap('café “quoted” — ok');
    for (let i = 0; i <= m.text.length; i++) {
      assert.equal(m.toUtf16(i), i);
      assert.equal(m.toCp(i), i);
    }
  });

  it('converts around emoji and other astral characters', () => {
    // UTF-16: a=0, 😀=1..2, b=3, 𝄞=4..5, 🌱=6..7, c=8 ; code points: a=0 😀=1 b=2 𝄞=3 🌱=4 c=5
    const m = new OffsetMap('a😀b𝄞🌱c');
    assert.equal(m.cpLength, 6);
    assert.deepEqual(
      [0, 1, 2, 3, 4, 5, 6].map((cp) => m.toUtf16(cp)),
      [0, 1, 3, 4, 6, 8, 9],
    );
    assert.deepEqual(
      [0, 1, 2, 3, 4, 5, 6, 7, 8, 9].map((u) => m.toCp(u)),
      [0, 1, 1, 2, 3, 3, 4, 4, 5, 6],
    );
  });

  it('agrees with spreading the string into code points on random text', () => {
    const alphabet = ['a', 'é', '“', '\r\n', '😀', '𝄞', ' ', '\u{10FFFF}'];
    let seed = 7;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let round = 0; round < 200; round++) {
      const text = Array.from({ length: Math.floor(rand() * 40) }, () => alphabet[Math.floor(rand() * alphabet.length)]).join('');
      const cps = [...text];
      const m = new OffsetMap(text);
      assert.equal(m.cpLength, cps.length);
      for (let cp = 0; cp <= cps.length; cp++) {
        const u = cps.slice(0, cp).join('').length;
        assert.equal(m.toUtf16(cp), u);
        assert.equal(m.toCp(u), cp);
      }
    }
  });
});
