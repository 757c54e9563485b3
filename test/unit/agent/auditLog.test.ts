/**
 * The JSONL audit log (src/agent/auditLog.ts): regressions found by the fuzz suite (test/fuzz).
 */
import assert from 'node:assert/strict';
import { AuditLog, type AuditEntry } from '../../../src/agent/auditLog';
import { defaultConfig } from '../../../src/agent/config';

function memoryLog(includePayload = true) {
  const lines: string[] = [];
  const cfg = defaultConfig();
  const log = new AuditLog({ append: (l) => void lines.push(l), read: async () => lines.join('\n') }, () => ({ ...cfg, audit: { ...cfg.audit, include_payload: includePayload } }));
  return { log, lines };
}

const ENTRY: AuditEntry = { timestamp: '2026-01-02T03:04:05.678Z', session_id: 's', client_type: 'REST_CLIENT', client_name: 'c', user: 'u', tool: 'get_code', decision: 'failed', error_code: 'INVALID_ARGUMENTS', duration_ms: 1 };

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
});
