/**
 * The audit log file (fileAuditStorage, src/cli/credentials.ts): appended through a descriptor kept open
 * between lines, yet every line lands in the file the path names now: after the file is deleted, moved
 * away (log rotation) or replaced, and when its folder is missing (checked before every line with
 * recheckMs 0; by default at most every AUDIT_RECHECK_MS, and at once after its own rewrite). Real files.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { AUDIT_RECHECK_MS, fileAuditStorage } from '../../../src/cli/credentials';

describe('cli/fileAuditStorage', () => {
  let dir: string;
  let logPath: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'marginalia-audit-file-'));
    logPath = '.marginalia/audit.jsonl';
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const file = () => path.join(dir, logPath);
  const lines = (f = file()) => fs.readFileSync(f, 'utf8').trim().split('\n');

  it('creates the folder and a user-only file, and appends one line per entry', async () => {
    const storage = fileAuditStorage(path.join(dir, 'p.qda'), () => logPath, 0);
    storage.append('{"n":1}');
    storage.append('{"n":2}');
    assert.deepEqual(lines(), ['{"n":1}', '{"n":2}']);
    assert.equal(fs.statSync(file()).mode & 0o777, 0o600);
    assert.equal(await storage.read(), '{"n":1}\n{"n":2}\n');
  });

  it('a deleted file is created again on the next line', () => {
    const storage = fileAuditStorage(path.join(dir, 'p.qda'), () => logPath, 0);
    storage.append('{"n":1}');
    fs.rmSync(file());
    storage.append('{"n":2}');
    assert.deepEqual(lines(), ['{"n":2}']);
  });

  it('a deleted folder is created again on the next line', () => {
    const storage = fileAuditStorage(path.join(dir, 'p.qda'), () => logPath, 0);
    storage.append('{"n":1}');
    fs.rmSync(path.dirname(file()), { recursive: true });
    storage.append('{"n":2}');
    assert.deepEqual(lines(), ['{"n":2}']);
  });

  it('after rotation (the file moved away) new lines go to a new file at the path', () => {
    const storage = fileAuditStorage(path.join(dir, 'p.qda'), () => logPath, 0);
    storage.append('{"n":1}');
    fs.renameSync(file(), `${file()}.1`);
    storage.append('{"n":2}');
    assert.deepEqual(lines(`${file()}.1`), ['{"n":1}']);
    assert.deepEqual(lines(), ['{"n":2}']);
  });

  it('a file replaced by another is appended to, not the old one', () => {
    const storage = fileAuditStorage(path.join(dir, 'p.qda'), () => logPath, 0);
    storage.append('{"n":1}');
    fs.writeFileSync(`${file()}.new`, '{"kept":true}\n');
    fs.renameSync(`${file()}.new`, file());
    storage.append('{"n":2}');
    assert.deepEqual(lines(), ['{"kept":true}', '{"n":2}']);
  });

  it('follows a changed audit.log_path', () => {
    const storage = fileAuditStorage(path.join(dir, 'p.qda'), () => logPath, 0);
    storage.append('{"n":1}');
    logPath = 'logs/other.jsonl';
    storage.append('{"n":2}');
    assert.deepEqual(lines(path.join(dir, '.marginalia/audit.jsonl')), ['{"n":1}']);
    assert.deepEqual(lines(), ['{"n":2}']);
  });

  it('by default a rotation is noticed within AUDIT_RECHECK_MS: meanwhile lines go to the moved-away file', async () => {
    const storage = fileAuditStorage(path.join(dir, 'p.qda'), () => logPath);
    storage.append('{"n":1}');
    storage.append('{"n":2}'); // the first line after opening checks the path: now checked for AUDIT_RECHECK_MS
    fs.renameSync(file(), `${file()}.1`);
    storage.append('{"n":3}');
    await new Promise((r) => setTimeout(r, AUDIT_RECHECK_MS + 20));
    storage.append('{"n":4}');
    assert.deepEqual(lines(`${file()}.1`), ['{"n":1}', '{"n":2}', '{"n":3}']);
    assert.deepEqual(lines(), ['{"n":4}']);
  });

  it('its own rewrite (erase_source) is followed at once, whatever the interval', () => {
    const storage = fileAuditStorage(path.join(dir, 'p.qda'), () => logPath, 60_000);
    storage.append('{"n":1}');
    storage.append('{"n":2}');
    storage.rewrite?.((t) => t.replace('"n":1', '"n":"one"'));
    storage.append('{"n":3}');
    assert.deepEqual(lines(), ['{"n":"one"}', '{"n":2}', '{"n":3}']);
  });
});
