/**
 * Progress of long tool calls (src/agent/pipeline.ts `InvokeOptions.onProgress`, src/tools/importProgress.ts):
 * the pipeline forwards a tool's reports to the caller at most every PROGRESS_INTERVAL_MS (a step's last
 * report always), logs at most one line a second, and survives a listener that throws; import_data and
 * import_analytics report reading (bytes, from 0 to the file's size) and writing (items, up to the plan's
 * size). Real sql.js project files; the GA4 file is made by scripts/generateGa4.ts.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { describeProgress, ToolPipeline } from '../../../src/agent/pipeline';
import { headlessHost } from '../../../src/cli/compose';
import type { ToolProgress } from '../../../src/tools/context';
import { defineTool } from '../../../src/tools/defineTool';
import { args } from '../../../src/tools/schemas';
import { generateGa4 } from '../../../scripts/generateGa4';
import { ALICE, openFixture, type Fixture } from '../domain/projectFixture';

/** A read tool whose prepare reports `n` steps of 1 item, as fast as it can, then returns n. */
const countTool = defineTool({
  name: 'count_slowly',
  group: 'project',
  title: 'Count',
  description: 'test tool',
  input: args({ n: z.number().int() }),
  effect: 'read',
  trust: 'read',
  needsProject: false,
  prepare: async (input, pctx) => {
    for (let i = 0; i <= input.n; i++) pctx.progress?.({ message: 'Counting', done: i, total: input.n, unit: 'items' });
    return input.n;
  },
  run: (_ctx, _input, n) => ({ n }),
});

describe('agent/pipeline progress of long calls', () => {
  it('forwards the first and the last report of a step, throttles the rest, logs, and ignores a listener that throws', async () => {
    const logged: string[] = [];
    const pipeline = new ToolPipeline({
      tools: [countTool],
      project: () => null,
      host: headlessHost,
      logger: { info: (m) => void logged.push(m), warn: (m) => void logged.push(`warn ${m}`), error: () => {} },
    });
    const seen: ToolProgress[] = [];
    const out = await pipeline.invoke('count_slowly', { n: 100_000 }, ALICE, { onProgress: (p) => void seen.push({ ...p }) });
    assert.equal(out.envelope.success, true);
    // 100,001 reports within far less than a second or two: throttled to a handful
    assert.ok(seen.length >= 2 && seen.length < 1000, `${seen.length} reports forwarded`);
    assert.deepEqual(seen[0], { message: 'Counting', done: 0, total: 100_000, unit: 'items' });
    assert.deepEqual(seen.at(-1), { message: 'Counting', done: 100_000, total: 100_000, unit: 'items' });
    assert.ok(
      logged.some((l) => l === 'count_slowly (unit-test): Counting: 0 of 100000 items'),
      logged.join('\n'),
    );

    const throwing = await pipeline.invoke('count_slowly', { n: 3 }, ALICE, {
      onProgress: () => {
        throw new Error('listener broke');
      },
    });
    assert.deepEqual(throwing.envelope, { success: true, data: { n: 3 } });
    assert.ok(
      logged.some((l) => l.startsWith('warn progress listener of count_slowly failed: listener broke')),
      logged.join('\n'),
    );
  });

  it('describes a report in one line', () => {
    assert.equal(describeProgress({ message: 'Reading x', done: 50_000_000, total: 200_000_000, unit: 'bytes' }), 'Reading x: 25% (50.0 of 200.0 MB)');
    assert.equal(describeProgress({ message: 'Reading x', done: 1_500_000, total: null, unit: 'bytes' }), 'Reading x: 1.5 MB');
    assert.equal(describeProgress({ message: 'Writing', done: 7, total: 9, unit: 'items' }), 'Writing: 7 of 9 items');
  });

  describe('imports', function () {
    this.timeout(120_000);
    let fx: Fixture;
    beforeEach(async () => {
      fx = await openFixture();
    });
    afterEach(async () => {
      await fx.close();
    });

    it('import_data reports reading the file (0 to its size in bytes) and then writing the plan (items)', async () => {
      const file = path.join(fx.dir, 'codebook.txt');
      fs.writeFileSync(file, 'Belonging\n  Home\n  Welcome\nConflict\n');
      const seen: ToolProgress[] = [];
      const out = await fx.pipeline.invoke('import_data', { format: 'code_list', source_path: file }, ALICE, { onProgress: (p) => void seen.push({ ...p }) });
      assert.equal(out.envelope.success, true, JSON.stringify(out.envelope));
      const size = fs.statSync(file).size;
      assert.deepEqual(seen, [
        { message: 'Reading code_list file codebook.txt', done: 0, total: size, unit: 'bytes' },
        { message: 'Reading code_list file codebook.txt', done: size, total: size, unit: 'bytes' },
        // one category (Belonging) and three codes (Home, Welcome, Conflict)
        { message: 'Writing code_list import', done: 4, total: 4, unit: 'items' },
      ]);
    });

    it('import_analytics streams a 40 MB export, reporting bytes read as it goes', async () => {
      const file = path.join(fx.dir, 'events.ndjson');
      await generateGa4(file, { targetBytes: 40 * 1024 * 1024, seed: 7 });
      const size = fs.statSync(file).size;
      const seen: ToolProgress[] = [];
      const out = await fx.pipeline.invoke('import_analytics', { source_path: file }, ALICE, { onProgress: (p) => void seen.push({ ...p }) });
      assert.equal(out.envelope.success, true, JSON.stringify(out.envelope));
      const reading = seen.filter((p) => p.unit === 'bytes');
      assert.equal(reading[0]?.done, 0);
      assert.equal(reading.at(-1)?.done, size);
      // the importer reports every 16 MiB: at least one report between the start and the end
      assert.ok(
        reading.some((p) => p.done > 0 && p.done < size),
        JSON.stringify(reading),
      );
      for (let i = 1; i < reading.length; i++) assert.ok(reading[i]!.done >= reading[i - 1]!.done);
      const writing = seen.filter((p) => p.unit === 'items');
      const cases = (out.envelope as { data: { cases_created: number } }).data.cases_created;
      assert.ok(cases > 0);
      assert.deepEqual(writing.at(-1), { message: 'Writing analytics_json import', done: cases, total: cases, unit: 'items' });
    });
  });
});
