/**
 * Re-anchoring by quote (src/exchange/reanchor.ts, issue 15 item 3), on texts built here. Expected positions
 * are worked out by hand (or with String.prototype.indexOf on texts without astral characters, where UTF-16
 * and code point positions agree), never by the module under test.
 */
import assert from 'node:assert/strict';
import { anchoringCounts, anchoringWarnings, ImportAnchoring, QuoteAnchorer, reanchorByQuote, type AnchorResult } from '../../../src/exchange/reanchor';

const at = (status: AnchorResult['status'], start_pos: number, end_pos: number): AnchorResult => ({ status, start_pos, end_pos });

describe('exchange reanchorByQuote', () => {
  const text = 'The biggest issues were funding and time. Funding came late; the biggest issues stayed.';
  //            0         1         2         3         4         5         6         7         8
  //            0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567

  it('exact: the text at the offsets equals the quote, offsets unchanged', () => {
    assert.deepEqual(reanchorByQuote(text, 'biggest issues', 4, 18), at('exact', 4, 18));
    assert.deepEqual(reanchorByQuote(text, 'funding', 24, 31), at('exact', 24, 31));
  });

  it('a quote drifted by 1 to 5 characters either way lands back on its words', () => {
    for (const d of [-5, -3, -1, 1, 2, 5]) {
      assert.deepEqual(reanchorByQuote(text, 'funding and time', 24 + d, 40 + d), at('reanchored', 24, 40), `drift ${d}`);
    }
    // a drift that cut the first letter, as the BOM bug did ("he biggest issues")
    assert.deepEqual(reanchorByQuote(text, 'The biggest issues', 1, 19), at('reanchored', 0, 18));
  });

  it('a quote that occurs twice lands on the occurrence nearest to the offsets', () => {
    const first = text.indexOf('biggest issues');
    const second = text.indexOf('biggest issues', first + 1);
    assert.equal(first, 4);
    assert.equal(second, 65);
    assert.deepEqual(reanchorByQuote(text, 'biggest issues', 62, 76), at('reanchored', 65, 79), 'near the second');
    assert.deepEqual(reanchorByQuote(text, 'biggest issues', 8, 22), at('reanchored', 4, 18), 'near the first');
    assert.deepEqual(reanchorByQuote(text, 'biggest issues', 30, 44), at('reanchored', 4, 18), '26 before, 35 after: the first');
    assert.deepEqual(reanchorByQuote(text, 'biggest issues', 40, 54), at('reanchored', 65, 79), '36 before, 25 after: the second');
    // the same distance both ways: the earlier one
    assert.deepEqual(reanchorByQuote('ab xx ab', 'ab', 3, 5), at('reanchored', 0, 2));
  });

  it('white space normalised: runs of white space count as one, positions mapped back to the original text', () => {
    const t = 'Intro.\r\n\r\nWe  talked\tabout\n funding.';
    // "We" starts at 10; "funding." ends at 36
    assert.equal(t.indexOf('We'), 10);
    assert.equal(t.length, 36);
    assert.deepEqual(reanchorByQuote(t, 'We talked about funding.', 12, 36), at('reanchored', 10, 36));
    assert.deepEqual(reanchorByQuote(t, 'We talked about\nfunding.', 10, 34), at('reanchored', 10, 36));
    assert.deepEqual(reanchorByQuote(t, 'Intro. We', 0, 9), at('reanchored', 0, 12));
    // a quote that ends in white space covers the whole run ("talked" at 14, "funding" at 28)
    assert.deepEqual(reanchorByQuote(t, 'talked about ', 0, 13), at('reanchored', 14, 28));
    // the exact occurrence wins over a normalised one nearer to the offsets
    const u = 'a  b .......... a b';
    assert.deepEqual(reanchorByQuote(u, 'a b', 1, 4), at('reanchored', 16, 19));
  });

  it('a quote not in the text keeps the offsets inside the text; outside it the coding is unplaceable', () => {
    assert.deepEqual(reanchorByQuote(text, 'budget cuts', 10, 21), at('kept_offsets', 10, 21));
    assert.deepEqual(reanchorByQuote(text, 'budget cuts', 80, 91), at('unplaceable', 80, 91));
    assert.deepEqual(reanchorByQuote(text, 'budget cuts', -2, 5), at('unplaceable', -2, 5));
    assert.deepEqual(reanchorByQuote(text, 'budget cuts', 7, 7), at('unplaceable', 7, 7), 'an empty range');
    // offsets outside the text, but the quote is there: found
    assert.deepEqual(reanchorByQuote(text, 'stayed.', 200, 207), at('reanchored', 80, 87));
    // white space alone is no evidence of a place
    assert.deepEqual(reanchorByQuote(text, '  ', 3, 5), at('kept_offsets', 3, 5));
  });

  it('no quote: the offsets stand when inside the text', () => {
    assert.deepEqual(reanchorByQuote(text, null, 3, 9), at('exact', 3, 9));
    assert.deepEqual(reanchorByQuote(text, '', 3, 9), at('exact', 3, 9));
    assert.deepEqual(reanchorByQuote(text, null, 3, 300), at('unplaceable', 3, 300));
  });

  it('counts code points: astral characters and leading U+FEFF', () => {
    const t = '\u{1F600}\u{1F600} hello \u{1F44B} world';
    // code points: 0,1 emoji; 2 space; 3-7 hello; 8 space; 9 wave; 10 space; 11-15 world
    assert.deepEqual(reanchorByQuote(t, 'hello', 3, 8), at('exact', 3, 8));
    assert.deepEqual(reanchorByQuote(t, 'hello', 5, 10), at('reanchored', 3, 8));
    assert.deepEqual(reanchorByQuote(t, '\u{1F44B} world', 7, 14), at('reanchored', 9, 16));
    assert.deepEqual(reanchorByQuote(t, 'hello \u{1F44B}  world', 0, 5), at('reanchored', 3, 16));
    const bom = '\uFEFF\uFEFFAnswer: yes.';
    assert.deepEqual(reanchorByQuote(bom, 'Answer', 2, 8), at('exact', 2, 8));
    assert.deepEqual(reanchorByQuote(bom, 'Answer', 0, 6), at('reanchored', 2, 8), 'offsets that did not count the two BOMs');
  });

  it('never splits a surrogate pair: a quote that is half of a pair is not found there', () => {
    const t = 'x\u{1F600}y';
    assert.deepEqual(reanchorByQuote(t, '\uDE00y', 0, 2), at('kept_offsets', 0, 2));
  });

  it('one anchorer serves many codings of a long text (each a few native searches)', () => {
    const words = Array.from({ length: 20_000 }, (_, i) => `w${i}`);
    const long = words.join(' ');
    const starts: number[] = [];
    for (let i = 0, p = 0; i < words.length; p += words[i]!.length + 1, i++) starts.push(p);
    const anchorer = new QuoteAnchorer(long);
    for (const i of [0, 777, 12_345, 19_998]) {
      const quote = `${words[i]} ${words[i + 1]}`;
      const start = starts[i]!;
      assert.deepEqual(anchorer.anchor(quote, start, start + quote.length), at('exact', start, start + quote.length), words[i]);
      assert.deepEqual(anchorer.anchor(quote, start + 3, start + 3 + quote.length), at('reanchored', start, start + quote.length), words[i]);
      assert.deepEqual(anchorer.anchor(quote.replace(' ', '\n  '), start - 2, start + 4), at('reanchored', start, start + quote.length), words[i]);
    }
    assert.deepEqual(anchorer.anchor('not there at all', 10, 20), at('kept_offsets', 10, 20));
  });
});

describe('exchange ImportAnchoring', () => {
  it('reports every coding that was not exact, with source and code names, stored and placed offsets and the quote cut to 80 code points', () => {
    const a = new ImportAnchoring();
    const t = 'one two three four';
    const long = 'x'.repeat(100);
    assert.equal(a.place('s1', t, { source: 'Interview 1', code: 'numbers' }, 'two', 4, 7).status, 'exact');
    assert.deepEqual(a.place('s1', t, { source: 'Interview 1', code: 'numbers' }, 'three', 6, 11), at('reanchored', 8, 13));
    assert.deepEqual(a.place('s1', t, { source: 'Interview 1', code: 'other' }, long, 0, 3), at('kept_offsets', 0, 3));
    assert.deepEqual(a.place('s2', 'short', { source: 'Notes', code: 'numbers' }, 'gone', 10, 14), at('unplaceable', 10, 14));
    assert.deepEqual(a.report.reanchored, [
      { source: 'Interview 1', code: 'numbers', start_pos: 8, end_pos: 13, stored_start_pos: 6, stored_end_pos: 11, quote: 'three' },
    ]);
    assert.deepEqual(a.report.kept_offsets, [
      { source: 'Interview 1', code: 'other', start_pos: 0, end_pos: 3, stored_start_pos: 0, stored_end_pos: 3, quote: 'x'.repeat(80) },
    ]);
    assert.deepEqual(a.report.unplaceable, [
      { source: 'Notes', code: 'numbers', start_pos: 10, end_pos: 14, stored_start_pos: 10, stored_end_pos: 14, quote: 'gone' },
    ]);
    assert.deepEqual(anchoringCounts(a.report), { reanchored: 1, kept_offsets: 1, unplaceable: 1 });
    const warnings = anchoringWarnings(a.report);
    assert.equal(warnings.length, 3);
    assert.match(warnings[0]!, /^1 coding\(s\) were placed where their stored quote is.*"Interview 1" \/ "numbers" 6-11 -> 8-13$/);
    assert.match(warnings[1]!, /"Interview 1" \/ "other" 0-3$/);
    assert.match(warnings[2]!, /"Notes" \/ "numbers" 10-14$/);
    for (const w of warnings) assert.doesNotMatch(w, /file/i, 'no blame on the file');
  });

  it('switched off, quotes are ignored: offsets inside the text stand, others are unplaceable', () => {
    const a = new ImportAnchoring(false);
    assert.deepEqual(a.place('s', 'abc def', { source: 's', code: 'c' }, 'def', 0, 3), at('exact', 0, 3));
    assert.deepEqual(a.place('s', 'abc def', { source: 's', code: 'c' }, 'def', 5, 9), at('unplaceable', 5, 9));
    assert.equal(a.report.reanchored.length, 0);
    assert.equal(a.report.unplaceable.length, 1);
  });
});
