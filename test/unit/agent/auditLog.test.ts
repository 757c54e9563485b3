/**
 * The JSONL audit log (src/agent/auditLog.ts): regressions found by the fuzz suite (test/fuzz).
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { AuditLog, type AuditEntry } from '../../../src/agent/auditLog';
import { defaultConfig } from '../../../src/agent/config';
import { TextRedactor } from '../../../src/domain/erasure';

function memoryLog(includePayload: boolean | 'full' = true) {
  const lines: string[] = [];
  const cfg = defaultConfig();
  const log = new AuditLog(
    {
      append: (l) => void lines.push(l),
      read: async () => lines.join('\n'),
      rewrite: (transform) => {
        const next = transform(lines.join('\n')).split('\n');
        lines.splice(0, lines.length, ...next);
        return '/memory/audit.jsonl';
      },
    },
    () => ({ ...cfg, audit: { ...cfg.audit, include_payload: includePayload } }),
  );
  return { log, lines };
}

const sha256 = (s: string) => createHash('sha256').update(Buffer.from(s, 'utf8')).digest('hex');

const ENTRY: AuditEntry = {
  timestamp: '2026-01-02T03:04:05.678Z',
  session_id: 's',
  client_type: 'REST_CLIENT',
  client_name: 'c',
  user: 'u',
  tool: 'get_code',
  decision: 'failed',
  error_code: 'INVALID_ARGUMENTS',
  duration_ms: 1,
};

describe('agent/auditLog', () => {
  it('records the arguments with include_payload', () => {
    const { log, lines } = memoryLog();
    log.record({ ...ENTRY, arguments: { code_id: 'x' } });
    assert.deepEqual(JSON.parse(lines[0] as string).arguments, { code_id: 'x' });
  });

  it('still records a call whose arguments are nested too deeply for JSON.stringify, without them', async () => {
    // found by fuzzing: {"arguments": {"code_id": [[[[...]]]]}} 100,000 levels deep (JSON.parse takes it, the
    // schema refuses it) made JSON.stringify throw RangeError, and the call was missing from the audit log
    const { log, lines } = memoryLog();
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = [deep];
    log.record({ ...ENTRY, arguments: { code_id: deep } });
    assert.equal(lines.length, 1);
    const e = JSON.parse(lines[0] as string) as AuditEntry;
    assert.equal(e.tool, 'get_code');
    assert.equal(e.error_code, 'INVALID_ARGUMENTS');
    assert.equal(e.arguments, undefined);
    assert.match(String(e.arguments_omitted), /could not be recorded/);
    assert.equal((await log.query({})).length, 1);
  });

  describe('long text arguments (issue 15: a transcript is not copied into the log by default)', () => {
    const long = 'Transcript. '.repeat(20); // 240 code points
    const astral200 = '\u{1F600}'.repeat(200); // 200 code points, 400 UTF-16 units
    const astral201 = '\u{1F600}'.repeat(201);

    it('records strings over 200 code points as {length, sha256} by default, nested ones too', () => {
      const { log, lines } = memoryLog();
      log.record({ ...ENTRY, tool: 'add_text_source', arguments: { name: 'P07', content: long, items: [{ text: long }] } });
      const args = JSON.parse(lines[0] as string).arguments;
      assert.equal(args.name, 'P07');
      assert.deepEqual(args.content, { length: 240, sha256: sha256(long) });
      assert.deepEqual(args.items[0].text, { length: 240, sha256: sha256(long) });
      assert.equal((lines[0] as string).includes('Transcript.'), false);
    });

    it('counts code points, not UTF-16 units: 200 astral characters are kept, 201 are hashed', () => {
      const { log, lines } = memoryLog();
      log.record({ ...ENTRY, arguments: { a: astral200, b: astral201 } });
      const args = JSON.parse(lines[0] as string).arguments;
      assert.equal(args.a, astral200);
      assert.deepEqual(args.b, { length: 201, sha256: sha256(astral201) });
    });

    it('keeps them whole with include_payload: full, and records no arguments with false', () => {
      const full = memoryLog('full');
      full.log.record({ ...ENTRY, arguments: { content: long } });
      assert.equal(JSON.parse(full.lines[0] as string).arguments.content, long);
      const none = memoryLog(false);
      none.log.record({ ...ENTRY, arguments: { content: long } });
      assert.equal(JSON.parse(none.lines[0] as string).arguments, undefined);
    });

    it('redactAudit rewrites only the lines that hold the erased text, every other line byte for byte', async () => {
      const { log, lines } = memoryLog('full');
      const text = 'My neighbours call me by a name nobody else knows, since the flood.';
      log.record({ ...ENTRY, tool: 'add_text_source', arguments: { name: 'P07', content: text } });
      log.record({ ...ENTRY, tool: 'apply_code', arguments: { source_id: 7, code_id: 1, start_position: 0, end_position: 5 } });
      log.record({ ...ENTRY, tool: 'add_text_source', arguments: { name: 'P08', content: 'Someone else entirely, about beans and the water tank.' } });
      const before = [...lines];
      const r = await log.redactAudit(new TextRedactor(7, [text]));
      assert.deepEqual(r, { lines: 3, lines_rewritten: 1, path: '/memory/audit.jsonl' });
      assert.deepEqual(JSON.parse(lines[0] as string).arguments, { name: 'P07', content: '[erased]' });
      assert.equal(lines[1], before[1]);
      assert.equal(lines[2], before[2]);
    });
  });
});
