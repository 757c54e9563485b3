/**
 * Regressions found by the fuzz suite (test/fuzz) in export_report (src/tools/reportTools.ts).
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { openFixture, snapshot, type Fixture } from '../domain/projectFixture';

describe('export_report (fuzz regressions)', () => {
  let fx: Fixture;
  beforeEach(async () => {
    fx = await openFixture();
  });
  afterEach(async () => {
    await fx.close();
  });

  it('an output_path whose file name is too long for the file system is EXPORT_FAILED, not TOOL_EXECUTION_ERROR', async () => {
    // found by fuzzing: the write failed with ENAMETOOLONG, and so did removing the temporary file in the
    // error path, which escaped as an unexpected error (HTTP 500)
    const c = (await fx.ok('create_code', { name: 'Water', color: '#4E79A7' })).code_id as number;
    const s = (await fx.ok('add_text_source', { name: 'S', content: 'abcdefghij' })).source_id as number;
    await fx.ok('apply_code', { code_id: c, source_id: s, start_position: 0, end_position: 3 });
    const id = (await fx.ok('generate_frequency_report', {})).report_id as number;
    const before = await snapshot(fx);
    const target = path.join(fx.dir, `${'long'.repeat(80)}.json`);
    const out = await fx.fails('export_report', { report_id: id, format: 'json', output_path: target, overwrite: true }, 'EXPORT_FAILED');
    assert.match(out.envelope.success ? '' : out.envelope.error, /ENAMETOOLONG/);
    assert.deepEqual(await snapshot(fx), before);
    assert.deepEqual(
      fs.readdirSync(fx.dir).filter((f) => f.includes('longlong')),
      [],
    );
  });
});
