/**
 * Unit tests for src/core/strictJson.ts (issue 15, items 6 and 8): every class of ill-formed UTF-8, lone
 * surrogate escapes, duplicated keys at any depth, byte offsets, byte-order marks, declared charsets, and
 * the line splitter the CLI and the MCP stdio forwarder share. Expected offsets are counted by hand from the
 * bytes written in each test.
 */
import assert from 'node:assert/strict';
import { ToolError } from '../../../src/core/errors';
import {
  charsetOf,
  firstInvalidUtf8,
  parseStrictJson,
  parseStrictJsonText,
  readStrictLines,
  type StrictJsonErrorDetails,
  type StrictLineItem,
} from '../../../src/core/strictJson';

/** `{"a":"` + bytes + `"}`: the bytes start at offset 6. */
function inString(...bytes: number[]): Buffer {
  return Buffer.concat([Buffer.from('{"a":"'), Buffer.from(bytes), Buffer.from('"}')]);
}

function refusal(fn: () => unknown): ToolError & { details: StrictJsonErrorDetails } {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof ToolError, `expected a ToolError, got ${String(e)}`);
    return e as ToolError & { details: StrictJsonErrorDetails };
  }
  assert.fail('expected a refusal');
}

describe('core/strictJson', () => {
  describe('invalid UTF-8 is INVALID_JSON with the byte offset', () => {
    const cases: [string, Buffer, number][] = [
      ['a byte that never occurs (0xFF)', inString(0x41, 0xff), 7],
      ['a stray continuation byte', inString(0x80), 6],
      ['an overlong slash (C0 AF)', inString(0xc0, 0xaf), 6],
      ['an overlong 3-byte form (E0 80 AF)', inString(0x41, 0x42, 0xe0, 0x80, 0xaf), 8],
      ['an overlong 4-byte form (F0 80 80 AF)', inString(0xf0, 0x80, 0x80, 0xaf), 6],
      ['a high surrogate in CESU-8 (ED A0 80)', inString(0xed, 0xa0, 0x80), 6],
      ['a low surrogate in CESU-8 (ED B0 80)', inString(0x41, 0xed, 0xb0, 0x80), 7],
      ['a surrogate pair in CESU-8', inString(0xed, 0xa0, 0xbd, 0xed, 0xb8, 0x80), 6],
      ['a code point above U+10FFFF (F4 90 80 80)', inString(0xf4, 0x90, 0x80, 0x80), 6],
      ['a 5-byte form (F8 88 80 80 80)', inString(0xf8, 0x88, 0x80, 0x80, 0x80), 6],
      ['a truncated 3-byte sequence before the quote', inString(0xe2, 0x82), 6],
      ['a Latin-1 é (cp1252 bytes sent as UTF-8)', Buffer.from('{"name":"Caf\xe9"}', 'latin1'), 12],
    ];
    for (const [what, bytes, offset] of cases) {
      it(what, () => {
        const e = refusal(() => parseStrictJson(bytes));
        assert.equal(e.code, 'INVALID_JSON');
        assert.equal(e.details.reason, 'invalid_utf8');
        assert.equal(e.details.byte_offset, offset);
        assert.match(e.message, new RegExp(`byte offset ${offset}\\b`));
      });
    }

    it('a truncated sequence at the very end of the bytes', () => {
      const p = firstInvalidUtf8(Buffer.from([0x7b, 0xf0, 0x9f, 0x98]));
      assert.deepEqual(p, { offset: 1, problem: 'an incomplete sequence at the end' });
    });

    it('accepts every well-formed sequence length, U+10FFFF included', () => {
      const text = '{"a":"A é € 😀 \u{10FFFF}"}';
      assert.deepEqual(parseStrictJson(Buffer.from(text)), { a: 'A é € 😀 \u{10FFFF}' });
      assert.equal(firstInvalidUtf8(Buffer.from(text)), undefined);
    });
  });

  describe('lone surrogate escapes', () => {
    const cases: [string, string, number][] = [
      ['a high surrogate alone', '{"a":"\\ud800"}', 6],
      ['a high surrogate followed by a letter', '{"a":"x\\uD83Dy"}', 7],
      ['a low surrogate alone', '{"a":"\\udc00"}', 6],
      ['two high surrogates', '{"a":"\\ud83d\\ud83d"}', 6],
      ['a pair followed by a low surrogate', '{"a":"\\ud83d\\ude00\\ude00"}', 18],
      ['a lone surrogate in a key', '{"\\udfff":1}', 2],
      ['after multi-byte characters (offset counts bytes)', '{"é":"😀\\ud800"}', 11],
    ];
    for (const [what, text, offset] of cases) {
      it(`${what} is INVALID_JSON at byte offset ${offset}`, () => {
        const e = refusal(() => parseStrictJson(Buffer.from(text)));
        assert.equal(e.code, 'INVALID_JSON');
        assert.equal(e.details.reason, 'lone_surrogate');
        assert.equal(e.details.byte_offset, offset);
      });
    }

    it('a pair of escapes, an escaped backslash before "ud800" and a raw emoji are accepted', () => {
      assert.deepEqual(parseStrictJson(Buffer.from('{"a":"\\ud83d\\ude00","b":"\\\\ud800","c":"😀"}')), { a: '😀', b: '\\ud800', c: '😀' });
    });

    it('parseStrictJsonText refuses a raw lone surrogate in a string it is given', () => {
      const e = refusal(() => parseStrictJsonText('{"a":"é\ud800"}', 'arguments_json'));
      assert.equal(e.details.reason, 'lone_surrogate');
      assert.equal(e.details.byte_offset, 8);
      assert.match(e.message, /^arguments_json /);
    });
  });

  describe('duplicated keys', () => {
    const cases: [string, string, string, number][] = [
      ['at the top', '{"arguments":{},"arguments":{}}', 'arguments', 16],
      ['in a nested object', '{"arguments":{"name":"a","name":"b"}}', 'name', 25],
      ['inside an array', '{"a":[{"x":1},{"x":1,"y":2,"x":3}]}', 'x', 27],
      ['spelled with an escape', '{"a":1,"\\u0061":2}', 'a', 7],
      ['empty keys', '{"":1,"":2}', '', 6],
    ];
    for (const [what, text, key, offset] of cases) {
      it(`${what} is INVALID_JSON naming the key`, () => {
        const e = refusal(() => parseStrictJson(Buffer.from(text)));
        assert.equal(e.code, 'INVALID_JSON');
        assert.equal(e.details.reason, 'duplicate_key');
        assert.equal(e.details.key, key);
        assert.equal(e.details.byte_offset, offset);
        assert.ok(e.message.includes(JSON.stringify(key)), e.message);
      });
    }

    it('a repeat among many keys (past the linear search, in the Set) and after a closed sibling object', () => {
      const keys = Array.from({ length: 40 }, (_, i) => `"k${i}":${i}`).join(',');
      const text = `{"a":{${keys},"k3":0}}`;
      const e = refusal(() => parseStrictJson(Buffer.from(text)));
      assert.deepEqual([e.details.key, e.details.byte_offset], ['k3', text.lastIndexOf('"k3"')]);
      const siblings = `[{${keys}},{${keys}},{"x":{"k1":1},"k1":2}]`;
      assert.equal((parseStrictJson(Buffer.from(siblings)) as unknown[]).length, 3);
    });

    it('the same key in sibling objects, and keys equal to values, are fine', () => {
      assert.deepEqual(parseStrictJson(Buffer.from('{"a":{"a":"a"},"b":[{"a":1},{"a":2}],"c":"a"}')), { a: { a: 'a' }, b: [{ a: 1 }, { a: 2 }], c: 'a' });
    });

    it('checks 100,000 levels of nesting without recursion', () => {
      const deep = `${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`;
      assert.ok(parseStrictJson(Buffer.from(deep)));
      const dup = `${'{"a":'.repeat(50_000)}{"b":1,"b":2}${'}'.repeat(50_000)}`;
      assert.equal(refusal(() => parseStrictJson(Buffer.from(dup))).details.key, 'b');
    });
  });

  describe('syntax errors give the byte offset', () => {
    const cases: [string, string, number][] = [
      ['a trailing comma', '{"a":1,}', 7],
      ['a raw control character', '{"a":"b\u0001"}', 7],
      ['an invalid escape', '{"é":"\\x41"}', 7],
      ['garbage after the value', '{"a":1}x', 7],
      ['a truncated body', '{"arguments":', 13],
      ['whitespace only', '  ', 2],
    ];
    for (const [what, text, offset] of cases) {
      it(what, () => {
        const e = refusal(() => parseStrictJson(Buffer.from(text)));
        assert.equal(e.code, 'INVALID_JSON');
        assert.equal(e.details.reason, 'syntax');
        assert.equal(e.details.byte_offset, offset);
      });
    }
  });

  describe('byte-order marks', () => {
    it('one leading UTF-8 BOM is skipped; U+FEFF inside a string is kept', () => {
      const body = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"a":"\uFEFFx"}')]);
      assert.deepEqual(parseStrictJson(body), { a: '\uFEFFx' });
    });

    it('a second BOM is a syntax error at byte offset 3', () => {
      const e = refusal(() => parseStrictJson(Buffer.from([0xef, 0xbb, 0xbf, 0xef, 0xbb, 0xbf, 0x7b, 0x7d])));
      assert.equal(e.details.reason, 'syntax');
      assert.equal(e.details.byte_offset, 3);
    });

    it('a UTF-16 BOM (FF FE) is not UTF-8', () => {
      const e = refusal(() => parseStrictJson(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('{}', 'utf16le')])));
      assert.equal(e.details.reason, 'invalid_utf8');
      assert.equal(e.details.byte_offset, 0);
    });

    it('an empty body or a BOM alone is undefined (the caller decides)', () => {
      assert.equal(parseStrictJson(Buffer.alloc(0)), undefined);
      assert.equal(parseStrictJson(Buffer.from([0xef, 0xbb, 0xbf])), undefined);
    });
  });

  describe('declared charsets', () => {
    const cp1252 = Buffer.from([
      ...Buffer.from('{"name":"Caf'),
      0xe9,
      0x20,
      0x6e,
      0x61,
      0xef,
      0x76,
      0x65,
      0x20,
      0x96,
      0x20,
      0x93,
      0x71,
      0x94,
      ...Buffer.from('"}'),
    ]);

    it('charsetOf reads the parameter, quoted or not, in any case', () => {
      assert.equal(charsetOf('application/json; charset="Windows-1252"'), 'windows-1252');
      assert.equal(charsetOf('application/json;CHARSET=utf-8'), 'utf-8');
      assert.equal(charsetOf('application/json'), undefined);
    });

    it('windows-1252 is decoded exactly', () => {
      assert.deepEqual(parseStrictJson(cp1252, { charset: 'windows-1252' }), { name: 'Café naïve – “q”' });
    });

    it('the same bytes declared as UTF-8 (or undeclared) are INVALID_JSON at the é', () => {
      for (const charset of [undefined, 'utf-8']) {
        const e = refusal(() => parseStrictJson(cp1252, { charset }));
        assert.equal(e.details.reason, 'invalid_utf8');
        assert.equal(e.details.byte_offset, 12);
      }
    });

    it('iso-8859-1 and UTF-16LE with a BOM are decoded', () => {
      assert.deepEqual(parseStrictJson(Buffer.from('{"a":"\xe9"}', 'latin1'), { charset: 'iso-8859-1' }), { a: 'é' });
      assert.deepEqual(parseStrictJson(Buffer.from('\uFEFF{"a":"😀"}', 'utf16le'), { charset: 'utf-16le' }), { a: '😀' });
    });

    it('a byte that is no character of the declared charset is INVALID_JSON, never U+FFFD', () => {
      const e = refusal(() => parseStrictJson(Buffer.from([...Buffer.from('{"a":"x'), 0x81, ...Buffer.from('"}')]), { charset: 'windows-1252' }));
      assert.equal(e.details.reason, 'invalid_charset_bytes');
      assert.equal(e.details.byte_offset, 7);
    });

    it('a raw lone surrogate in UTF-16 is INVALID_JSON', () => {
      const e = refusal(() => parseStrictJson(Buffer.from('{"a":"\ud800"}', 'utf16le'), { charset: 'utf-16le' }));
      assert.equal(e.details.reason, 'lone_surrogate');
      assert.equal(e.details.byte_offset, 12);
    });

    it('an unknown charset is UNSUPPORTED_MEDIA_TYPE', () => {
      assert.equal(refusal(() => parseStrictJson(Buffer.from('{}'), { charset: 'x-unknown' })).code, 'UNSUPPORTED_MEDIA_TYPE');
    });
  });

  describe('readStrictLines', () => {
    async function collect(chunks: Buffer[], max = 1000): Promise<StrictLineItem[]> {
      const out: StrictLineItem[] = [];
      async function* gen() {
        yield* chunks;
      }
      for await (const item of readStrictLines(gen(), max)) out.push(item);
      return out;
    }

    it('reports a line that is not UTF-8 with its offset in the line and goes on', async () => {
      const items = await collect([Buffer.from('{"a":1}\n{"b":"'), Buffer.from([0xc3, 0x28]), Buffer.from('"}\r\n{"c":3}')]);
      assert.deepEqual(items[0], { line: '{"a":1}' });
      const bad = items[1] as { invalid: ToolError };
      assert.equal(bad.invalid.code, 'INVALID_JSON');
      assert.equal((bad.invalid.details as StrictJsonErrorDetails).byte_offset, 6);
      assert.deepEqual(items[2], { line: '{"c":3}' });
    });
  });
});
