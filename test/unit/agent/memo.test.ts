/**
 * Memoized reads (ToolDef.memo, ToolPipeline.memoRead) and shared results (src/core/sharedResult.ts):
 * a memo tool runs once per input and write generation, its result is shared deep-frozen, its JSON is
 * written once and equals JSON.stringify, and any write (or another project) gives a fresh run.
 * Real sql.js project files.
 */
import assert from 'node:assert/strict';
import { z } from 'zod';
import { ToolPipeline } from '../../../src/agent/pipeline';
import { headlessHost } from '../../../src/cli/compose';
import { ok } from '../../../src/core/envelope';
import { silentLogger } from '../../../src/core/log';
import { envelopeText, jsonText, shareResult } from '../../../src/core/sharedResult';
import { defineTool, type AnyTool } from '../../../src/tools/defineTool';
import { TOOLS } from '../../../src/tools/registry';
import { args } from '../../../src/tools/schemas';
import { ALICE, openFixture, type Fixture } from '../domain/projectFixture';

describe('core/sharedResult', () => {
  it('deep-freezes a shared result: changing it throws instead of changing later answers', () => {
    const value = shareResult({ count: 1, codes: [{ name: 'A', tags: ['x'] }] });
    assert.ok(Object.isFrozen(value) && Object.isFrozen(value.codes) && Object.isFrozen(value.codes[0]) && Object.isFrozen(value.codes[0]?.tags));
    assert.throws(() => {
      (value.codes as { name: string }[]).push({ name: 'B' });
    }, TypeError);
    assert.throws(() => {
      'use strict';
      (value.codes[0] as { name: string }).name = 'changed';
    }, TypeError);
  });

  it('writes the same JSON as JSON.stringify, once per shared object', () => {
    const data = {
      count: 2,
      codes: [
        { name: 'é🌱', memo: null },
        { name: '"quoted"\n', memo: 'm' },
      ],
    };
    const shared = shareResult(structuredClone(data));
    assert.equal(jsonText(shared), JSON.stringify(data));
    assert.equal(jsonText(shared), jsonText(shared));
    assert.equal(envelopeText(ok(shared)), JSON.stringify(ok(data)));
    // not shared, other envelopes and failures: plain JSON.stringify
    assert.equal(envelopeText(ok(data)), JSON.stringify(ok(data)));
    const failure = { success: false, error: 'x', error_code: 'CODE_NOT_FOUND' };
    assert.equal(envelopeText(failure), JSON.stringify(failure));
    const extra = { success: true, data: shared, more: 1 };
    assert.equal(envelopeText(extra), JSON.stringify(extra));
  });
});

describe('agent/pipeline: memoized reads', () => {
  let fx: Fixture;
  let runs: number;
  let pipeline: ToolPipeline;
  /** A memo tool counting its runs: the codebook's names, optionally filtered by a prefix. */
  const countingTool = defineTool({
    name: 'count_names',
    group: 'core',
    title: 'count names',
    description: 'test tool: code names, counted runs',
    input: args({ prefix: z.string().optional() }),
    effect: 'read',
    trust: 'read',
    memo: true,
    run: (ctx, input) => {
      runs++;
      return {
        names: ctx.domain.repo
          .listCodes()
          .map((c) => c.name)
          .filter((n) => n.startsWith(input.prefix ?? '')),
      };
    },
  }) as AnyTool;

  beforeEach(async () => {
    fx = await openFixture();
    runs = 0;
    pipeline = new ToolPipeline({ tools: [...TOOLS, countingTool], project: () => fx.handle, host: headlessHost, logger: silentLogger });
  });
  afterEach(async () => {
    await fx.close();
  });

  const names = async (input: Record<string, unknown> = {}) => {
    const out = await pipeline.invoke('count_names', input, ALICE);
    assert.ok(out.envelope.success, JSON.stringify(out.envelope));
    return out.envelope.data as { names: string[] };
  };

  it('runs once per input until the next write, and shares one frozen result', async () => {
    await fx.ok('create_code', { name: 'Alpha', color: '#112233' });
    const first = await names();
    const second = await names();
    assert.equal(runs, 1);
    assert.equal(first, second, 'the same shared object');
    assert.ok(Object.isFrozen(first.names));
    await names({ prefix: 'A' });
    await names({ prefix: 'A' });
    assert.equal(runs, 2, 'another input is another entry');
  });

  it('a write, through any tool, gives a fresh run that sees it', async () => {
    await fx.ok('create_code', { name: 'Alpha', color: '#112233' });
    assert.deepEqual((await names()).names, ['Alpha']);
    await fx.ok('create_code', { name: 'Beta', color: '#112233' });
    assert.deepEqual((await names()).names, ['Alpha', 'Beta']);
    const alpha = (await fx.ok('list_codes')).codes[0].code_id as number;
    await fx.ok('rename_code', { code_id: alpha, new_name: 'Gamma' });
    assert.deepEqual((await names()).names, ['Beta', 'Gamma']);
    assert.equal(runs, 3);
  });

  it('a failed write (rolled back) does not leave a stale memo behind', async () => {
    await fx.ok('create_code', { name: 'Alpha', color: '#112233' });
    await names();
    await fx.fails('create_code', { name: 'alpha', color: '#112233' }, 'DUPLICATE_NAME');
    assert.deepEqual((await names()).names, ['Alpha']);
  });

  it("another project never answers from this project's memo", async () => {
    await fx.ok('create_code', { name: 'Alpha', color: '#112233' });
    assert.deepEqual((await names()).names, ['Alpha']);
    const other = await openFixture();
    try {
      let current = fx.handle;
      const switching = new ToolPipeline({ tools: [...TOOLS, countingTool], project: () => current, host: headlessHost, logger: silentLogger });
      const read = async () => ((await switching.invoke('count_names', {}, ALICE)).envelope as { data: { names: string[] } }).data.names;
      assert.deepEqual(await read(), ['Alpha']);
      current = other.handle;
      assert.deepEqual(await read(), [], 'the other project (same write generation) has no codes');
    } finally {
      await other.close();
    }
  });

  it('list_codes and list_categories are memoized and still current after writes', async () => {
    const a = await fx.ok('list_codes');
    assert.equal(await fx.ok('list_codes'), a, 'answered from the memo');
    await fx.ok('create_category', { name: 'Feelings' });
    await fx.ok('create_code', { name: 'Joy', color: '#112233' });
    const b = await fx.ok('list_codes');
    assert.equal(b.count, a.count + 1);
    const cats = await fx.ok('list_categories');
    assert.equal(cats.count, 1);
    assert.equal(cats.uncategorized_code_count, b.count);
  });
});
