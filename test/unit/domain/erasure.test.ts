/**
 * The pieces of erase_source below the tool (issue 15, item 9): the TextRedactor (domain), the stored-payload
 * redaction (store), and the dump-file transform of the history rewrite (vcs). The end-to-end search for the
 * marker is test/e2e/erasure.test.ts.
 */
import assert from 'node:assert/strict';
import { ERASED, MIN_NEEDLE_CODE_POINTS, TextRedactor } from '../../../src/domain/erasure';
import { payloadToStored } from '../../../src/store/eventRows';
import { redactPayload } from '../../../src/store/erasureStore';
import { eraseFromDump, eraseFromTableBytes, eraseFromTableFile } from '../../../src/vcs/historyErasure';
import { mulberry32 as rng } from '../../../src/core/random';

const TEXT = 'My neighbours call me Zed since the flood; we rebuilt the shed together.';
const SEGMENT = 'we rebuilt the shed together';

describe('domain/erasure TextRedactor', () => {
  it('replaces every occurrence of the texts inside longer strings, the longest first', () => {
    const r = new TextRedactor(7, [SEGMENT, TEXT]);
    assert.equal(r.redactString(`quoted: "${TEXT}" and again ${SEGMENT}.`), `quoted: "${ERASED}" and again ${ERASED}.`);
    assert.equal(r.redactString('nothing of it here, only beans and the water tank'), 'nothing of it here, only beans and the water tank');
  });

  it(`never searches for pieces shorter than ${MIN_NEEDLE_CODE_POINTS} code points (other participants say "yes" too)`, () => {
    const r = new TextRedactor(7, ['yes, I agree', '\u{1F600}'.repeat(MIN_NEEDLE_CODE_POINTS - 1)]);
    assert.equal(r.needles.length, 0);
    assert.equal(r.redactString('yes, I agree with that'), 'yes, I agree with that');
    assert.equal(new TextRedactor(7, ['\u{1F600}'.repeat(MIN_NEEDLE_CODE_POINTS)]).needles.length, 1);
  });

  it('finds exactly what a naive search finds (randomized, seeded)', () => {
    const next = rng(15);
    const alphabet = 'ab c\u00e9\u{1F600}\n"';
    const word = (n: number) => Array.from({ length: n }, () => [...alphabet][Math.floor(next() * [...alphabet].length)]).join('');
    for (let round = 0; round < 300; round++) {
      const needles = Array.from({ length: 1 + Math.floor(next() * 4) }, () => word(16 + Math.floor(next() * 10)));
      const r = new TextRedactor(1, needles);
      let hay = word(Math.floor(next() * 120));
      if (next() < 0.5) hay = hay.slice(0, 30) + needles[0] + hay.slice(30);
      const expected = r.needles.some((n) => hay.includes(n));
      assert.equal(r.contains(hay), expected, `round ${round}`);
      const redacted = r.redactString(hay);
      assert.equal(r.needles.some((n) => redacted.includes(n)) && !expected, false);
      if (expected) assert.ok(redacted.includes(ERASED));
      else assert.equal(redacted, hay);
    }
  });

  it('a value nested 20,000 deep (a hostile argument kept in the audit log) is searched without overflowing the stack', () => {
    const r = new TextRedactor(7, [TEXT]);
    let clean: unknown = 'only beans and the water tank';
    let dirty: unknown = `they said: ${TEXT}`;
    for (let i = 0; i < 20_000; i++) {
      clean = { a: [clean] };
      dirty = { a: [dirty] };
    }
    assert.deepEqual(r.redactValue({ keep: 1, deep: clean }), { value: { keep: 1, deep: clean }, changed: false });
    const out = r.redactValue({ keep: 1, deep: dirty });
    assert.equal(out.changed, true);
    assert.ok(!JSON.stringify(out.value).includes(TEXT), 'the text is gone');
    assert.equal((out.value as { keep: number }).keep, 1, 'what surrounds the deep value stays');
    const line = r.redactJsonText(JSON.stringify({ deep: 'x' }).replace('"x"', '['.repeat(5000) + JSON.stringify(TEXT) + ']'.repeat(5000)));
    assert.ok(line !== null && !line.includes(TEXT) && line.includes(ERASED), 'an audit line 5,000 deep is rewritten without the text');
    assert.doesNotThrow(() => JSON.parse(line!));
  });

  it('erases the text fields of objects that belong to the source, and the description beside them', () => {
    const r = new TextRedactor(7, [TEXT]);
    const approval = { request_id: 'r1', description: 'Apply Code: text="we rebuilt…"', payload: { source_id: 7, start: 1, end: 9, text: 'rebuilt' } };
    const out = r.redactValue(approval);
    assert.equal(out.changed, true);
    assert.deepEqual(out.value, { request_id: 'r1', description: ERASED, payload: { source_id: 7, start: 1, end: 9, text: ERASED } });
    // another source's short text is its own
    const other = { source_id: 8, text: 'rebuilt' };
    assert.equal(r.redactValue(other).value, other);
    assert.equal(r.redactValue(other).changed, false);
  });
});

describe('store/erasureStore redactPayload', () => {
  const r = new TextRedactor(7, [TEXT]);

  it('keeps an array-shaped payload in its shape, with the text erased', () => {
    const stored = payloadToStored({ segment_id: 3, code_id: 1, source_id: 7, start: 0, end: 5, text: 'My ne' });
    assert.ok(stored.startsWith('[0,'));
    assert.equal(redactPayload(stored, r), `[0,3,1,7,0,5,${JSON.stringify(ERASED)}]`);
    const other = payloadToStored({ segment_id: 4, code_id: 1, source_id: 8, start: 0, end: 5, text: 'Beans' });
    assert.equal(redactPayload(other, r), null);
  });

  it('redacts an object payload that quotes the text without naming the source', () => {
    const stored = JSON.stringify({
      request_id: 'r2',
      action_type: 'add_text_source',
      description: 'Add Text Source: content="My neighbours…"',
      payload: { name: 'P07', content: TEXT },
    });
    assert.deepEqual(JSON.parse(redactPayload(stored, r) as string), {
      request_id: 'r2',
      action_type: 'add_text_source',
      description: ERASED,
      payload: { name: 'P07', content: ERASED },
    });
  });
});

describe('vcs/historyErasure dump transform', () => {
  const r = new TextRedactor(7, [TEXT]);
  const e = { source_id: 7, segment_ids: [30], redactor: r };

  it('drops the rows keyed by the source, not those of source 70, keeping the other lines byte for byte', () => {
    const lines = [
      '{"id":29,"code_id":1,"source_id":70,"start_pos":0,"text":"sev\\"enty"}',
      '{"id":30,"code_id":1,"source_id":7,"start_pos":0,"text":"My ne"}',
      '{"id":31,"code_id":2,"source_id":7}',
      '{"id":32,"code_id":1,"source_id":8,"start_pos":0,"text":"\\"source_id\\":7,"}',
    ];
    const out = eraseFromTableFile('segments', `${lines.join('\n')}\n`, e);
    assert.equal(out, `${lines[0]}\n${lines[3]}\n`);
    assert.equal(eraseFromTableFile('segments', `${lines[0]}\n`, e), null);
    // the byte path the history rewrite takes for keyed tables gives the same bytes
    assert.equal(eraseFromTableBytes('segments', Buffer.from(`${lines.join('\n')}\n`), e)?.toString('utf8'), out);
    assert.equal(eraseFromTableBytes('segments', Buffer.from(`${lines[0]}\n`), e), null);
    const sources = '{"id":7,"name":"P07"}\n{"id":70,"name":"P70"}\n{"id":8,"name":"P08"}\n{"id":7}\n';
    assert.equal(eraseFromTableBytes('sources', Buffer.from(sources), e)?.toString('utf8'), '{"id":70,"name":"P70"}\n{"id":8,"name":"P08"}\n');
    assert.equal(eraseFromTableFile('sources', sources, e), '{"id":70,"name":"P70"}\n{"id":8,"name":"P08"}\n');
  });

  it("drops the source row, its text file and its segments' provenance; redacts quotes in other tables", () => {
    const files = new Map([
      ['manifest.json', '{}\n'],
      ['sources/7.txt', TEXT],
      ['sources/8.txt', 'Beans.'],
      ['tables/sources.jsonl', '{"id":7,"name":"P07"}\n{"id":70,"name":"P70"}\n'],
      ['tables/segment_provenance.jsonl', '{"segment_id":30,"suggestion_id":1}\n{"segment_id":300,"suggestion_id":2}\n'],
      ['tables/suggestions.jsonl', `{"id":1,"kind":"code","sample_contexts":${JSON.stringify(JSON.stringify([TEXT]))},"source_id":null}\n`],
    ]);
    const out = eraseFromDump(files, e);
    assert.deepEqual(
      [...out.keys()],
      ['manifest.json', 'sources/8.txt', 'tables/sources.jsonl', 'tables/segment_provenance.jsonl', 'tables/suggestions.jsonl'],
    );
    assert.equal(out.get('tables/sources.jsonl'), '{"id":70,"name":"P70"}\n');
    assert.equal(out.get('tables/segment_provenance.jsonl'), '{"segment_id":300,"suggestion_id":2}\n');
    assert.equal(out.get('tables/suggestions.jsonl')?.includes('flood'), false);
    assert.ok(out.get('tables/suggestions.jsonl')?.includes(ERASED));
  });
});
