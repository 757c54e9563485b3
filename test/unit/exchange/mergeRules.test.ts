/**
 * The one import applier (src/exchange/importers/applyPlan.ts) under each set of merge rules: the same hand-made
 * plan written with the default rules (the formats named by name) and with REFI-QDA's (items told apart by GUID),
 * through a stand-in tool over the real pipeline on a real project file. Expected values are worked out by hand.
 */
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { z } from 'zod';
import { ToolPipeline } from '../../../src/agent/pipeline';
import { ALL_TOOLS, headlessHost } from '../../../src/cli/compose';
import { applyImportPlan } from '../../../src/exchange/importers/applyPlan';
import { emptyPlan, type ImportPlan, type ImportProgress, type MergeRules } from '../../../src/exchange/importers/plan';
import { REFI_RULES } from '../../../src/exchange/refiQda/refiImport';
import { defineTool } from '../../../src/tools/defineTool';
import { ALICE, fixedClock, openFixture, storedEvents, type Fixture } from '../domain/projectFixture';

/** Two categories each holding a code named "Theme", a source, a coding of a code the plan lacks, a case whose "age" is not a number. */
function plan(dir: string, rules?: MergeRules): ImportPlan {
  const p = emptyPlan('test', path.join(dir, 'x'));
  if (rules) p.rules = rules;
  p.categories.push({ ref: 'a', name: 'A', parent: null, memo: null }, { ref: 'b', name: 'B', parent: null, memo: null });
  p.codes.push({ ref: 'c1', name: 'Theme', color: null, memo: null, category: 'a' }, { ref: 'c2', name: 'Theme', color: null, memo: null, category: 'b' });
  p.sources.push({ ref: 's', name: 'Text', text: 'hello world', memo: null, origin: null, folder: null });
  p.segments.push({ code: 'c1', source: 's', start_pos: 0, end_pos: 5, memo: null, importance: 0 });
  p.segments.push({ code: 'c2', source: 's', start_pos: 6, end_pos: 11, memo: null, importance: 0 });
  p.segments.push({ code: 'missing', source: 's', start_pos: 0, end_pos: 11, memo: null, importance: 0 });
  p.cases.push({
    name: 'P1',
    memo: null,
    sources: ['s'],
    ranges: [],
    attributes: [
      { name: 'age', type: 'number', value: 'old' },
      { name: 'site', type: 'text', value: 'north' },
    ],
  });
  return p;
}

describe('exchange/importers: one applier, merge rules on the plan', () => {
  let fx: Fixture;
  let pipeline: ToolPipeline;
  let current: ImportPlan;
  let progress: ImportProgress[];
  beforeEach(async () => {
    fx = await openFixture();
    progress = [];
    const tool = defineTool({
      name: 'apply_test_plan',
      group: 'exchange',
      title: 'Apply a test plan',
      description: 'test only',
      input: z.object({}),
      effect: 'bulk',
      trust: 'bulk',
      run: (ctx) => applyImportPlan(ctx.domain, current, (p) => progress.push(p)),
    });
    pipeline = new ToolPipeline({ tools: [...ALL_TOOLS, tool], project: () => fx.handle, host: headlessHost, clock: fixedClock });
  });
  afterEach(async () => {
    await fx.close();
  });

  const codes = () =>
    fx.handle.store.all<{ name: string; category: string | null }>(
      'SELECT c.name AS name, k.name AS category FROM codes c LEFT JOIN categories k ON k.id = c.category_id ORDER BY c.name',
    );

  it('default rules: a coding of a code the plan lacks fails the whole import; a value not of its type too; names merge', async () => {
    current = plan(fx.dir);
    const out = await pipeline.invoke('apply_test_plan', {}, ALICE);
    assert.ok(!out.envelope.success && out.envelope.error_code === 'IMPORT_FAILED' && /code missing/.test(out.envelope.error), JSON.stringify(out.envelope));
    assert.deepEqual(codes(), []);
    current.segments.pop();
    const typed = await pipeline.invoke('apply_test_plan', {}, ALICE);
    assert.ok(!typed.envelope.success && typed.envelope.error_code === 'IMPORT_FAILED' && /"age"/.test(typed.envelope.error), JSON.stringify(typed.envelope));
    current.cases[0]!.attributes.shift();
    const ok = await pipeline.invoke('apply_test_plan', {}, ALICE);
    assert.equal(ok.envelope.success, true, JSON.stringify(ok.envelope));
    const r = (ok.envelope as { data: any }).data;
    // the second "Theme" is the first one (it stays in category A, with a warning)
    assert.deepEqual(codes(), [{ name: 'Theme', category: 'A' }]);
    assert.deepEqual([r.created.codes, r.reused.codes, r.created.segments], [1, 1, 2]);
    assert.ok(
      r.warnings.some((w: string) => /"Theme" stays in its category/.test(w)),
      JSON.stringify(r.warnings),
    );
    assert.equal(r.renamed, undefined, 'formats named by name report no renames');
    const types = storedEvents(fx.handle).map((e) => e.event_type);
    assert.equal(types.filter((t) => t === 'case.attributes_set').length, 1, 'one event for the case');
    assert.equal(types.filter((t) => t === 'case.attribute_set').length, 0);
    // 2 categories + 2 codes + 1 source + 2 codings + 1 case
    assert.deepEqual(progress[progress.length - 1], { phase: 'apply', done: 8, total: 8, unit: 'items' });
  });

  it("REFI-QDA's rules: the same names kept apart, unknown references skipped and counted, a mistyped value kept as text, one event per value", async () => {
    current = plan(fx.dir, REFI_RULES);
    const out = await pipeline.invoke('apply_test_plan', {}, ALICE);
    assert.equal(out.envelope.success, true, JSON.stringify(out.envelope));
    const r = (out.envelope as { data: any }).data;
    assert.deepEqual(codes(), [
      { name: 'Theme', category: 'A' },
      { name: 'Theme (B)', category: 'B' },
    ]);
    assert.deepEqual([r.created.codes, r.created.segments, r.skipped.codings_of_unknown_codes_or_sources], [2, 2, 1]);
    const attributes = fx.handle.store.all<{ name: string; type: string; value_text: string | null }>(
      'SELECT name, type, value_text FROM case_attributes ORDER BY name',
    );
    assert.deepEqual(attributes, [
      { name: 'age', type: 'text', value_text: 'old' },
      { name: 'site', type: 'text', value_text: 'north' },
    ]);
    const types = storedEvents(fx.handle).map((e) => e.event_type);
    assert.equal(types.filter((t) => t === 'case.attribute_set').length, 2);
    assert.equal(types.filter((t) => t === 'case.attributes_set').length, 0);
    // a second import finds everything by name: nothing new
    const again = await pipeline.invoke('apply_test_plan', {}, ALICE);
    const r2 = (again.envelope as { data: any }).data;
    assert.deepEqual([r2.created.codes, r2.reused.codes, r2.created.segments, r2.reused.segments, r2.created.sources, r2.reused.sources], [0, 2, 0, 2, 0, 1]);
  });
});
