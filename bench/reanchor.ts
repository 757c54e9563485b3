/**
 * Bench section: what re-anchoring by quote (src/exchange/reanchor.ts) adds to an import (issue 15: "re-anchoring
 * adds at most 2x to the import time of the QualCoder corpus project"). The QualCoder corpus project is
 * imported whole (read the database, plan, write through the domain in one transaction) into a new empty
 * project, through the in-process pipeline, by a stand-in tool that is import_data's qualcoder path with the
 * importer's `reanchor` option: on (what import_data does) and off (the stored offsets taken unchecked: the
 * floor, measured in the same run). The goal is on < 2 x off.
 *
 * Two files: the corpus project as it is (every quote agrees with its offsets, so re-anchoring only checks
 * them), and a copy of it with every coding's offsets moved 3 characters later (written here with sql.js),
 * so that every coding needs the search outward from its offsets (the worst realistic case: a text edited
 * at its start after coding). The reading step alone (database read and plan, where re-anchoring runs) is
 * timed too, on and off, as information. Runs alone (`npx tsx bench/reanchor.ts`) or as a child of bench/run.ts.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { z } from 'zod';
import type { Caller } from '../src/agent/pipeline';
import { ToolPipeline } from '../src/agent/pipeline';
import { ALL_TOOLS, headlessHost, openProjectHandle } from '../src/cli/compose';
import { silentLogger } from '../src/core/log';
import { applyImportPlan } from '../src/exchange/importers/applyPlan';
import type { ImportPlan } from '../src/exchange/importers/plan';
import { qualcoderImporter } from '../src/exchange/importers/qualcoder';
import { loadSqlJs } from '../src/store/sqljs';
import { defineTool } from '../src/tools/defineTool';
import { QUICK, machineLine, sectionMain, type Figure, type SectionResult } from './lib/section';
import { LATENCY_HEADER, latencyCells, ratio, stats, table } from './lib/stats';

const CORPUS = process.env.BENCH_QUALCODER_QDA ?? path.resolve(__dirname, '..', '..', 'shared', 'corpus', 'qualcoder', 'mannheimer_recoded_data.qda');
const REPS = QUICK ? 3 : 7;
const caller: Caller = { session_id: 'bench', client_type: 'CUSTOM', client_name: 'bench', user: 'bench' };

/** import_data's qualcoder path (plan, then apply in the call's transaction) with `reanchor` as an argument. */
const benchImport = defineTool({
  name: 'bench_import_qualcoder',
  group: 'exchange',
  title: 'Bench: QualCoder import',
  description: 'bench only',
  input: z.object({ source_path: z.string(), reanchor: z.boolean() }),
  effect: 'bulk',
  trust: 'bulk',
  prepare: (input): Promise<ImportPlan> => qualcoderImporter.plan(input.source_path, { reanchor: input.reanchor }),
  run: (ctx, _input, plan) => applyImportPlan(ctx.domain, plan),
});

/** A copy of the corpus project with every coding's offsets 3 characters later (as after an edit at each text's start). */
async function driftedCopy(to: string): Promise<void> {
  const SQL = await loadSqlJs();
  const db = new SQL.Database(fs.readFileSync(CORPUS));
  try {
    db.exec('UPDATE code_text SET pos0 = pos0 + 3, pos1 = pos1 + 3');
    fs.writeFileSync(to, db.export());
  } finally {
    db.close();
  }
}

/** One full import of `file` into a new project in `dir`; milliseconds and the result's counts. */
async function importOnce(dir: string, file: string, reanchor: boolean): Promise<{ ms: number; segments: number; anchoring: Record<string, number> }> {
  fs.mkdirSync(dir);
  const handle = await openProjectHandle(path.join(dir, 'import.qda'), { create: true, checkpointIdleMs: 0, logger: silentLogger });
  try {
    const pipeline = new ToolPipeline({ tools: [...ALL_TOOLS, benchImport], project: () => handle, host: headlessHost, logger: silentLogger });
    const t0 = performance.now();
    const out = await pipeline.invoke('bench_import_qualcoder', { source_path: file, reanchor }, caller);
    const ms = performance.now() - t0;
    if (!out.envelope.success) throw new Error(`import failed: ${JSON.stringify(out.envelope).slice(0, 500)}`);
    const data = out.envelope.data as { created: { segments: number }; reused: { segments: number }; anchoring_counts?: Record<string, number> };
    return { ms, segments: data.created.segments + data.reused.segments, anchoring: data.anchoring_counts ?? {} };
  } finally {
    await handle.close();
  }
}

async function run(): Promise<SectionResult> {
  const load0 = os.loadavg();
  if (!fs.existsSync(CORPUS)) throw new Error(`the QualCoder corpus project ${CORPUS} is missing (BENCH_QUALCODER_QDA names another)`);
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'marginalia-bench-reanchor-'));
  try {
    const drifted = path.join(root, 'drifted.qda');
    await driftedCopy(drifted);
    const rows: string[][] = [];
    const figures: Figure[] = [];
    const notes: string[] = [];
    let error: string | undefined;
    for (const [label, file] of [
      ['corpus project', CORPUS],
      ['every coding drifted by 3', drifted],
    ] as const) {
      const on: number[] = [];
      const off: number[] = [];
      const planOn: number[] = [];
      const planOff: number[] = [];
      let counts = '';
      // alternate on and off so that a change of load hits both alike; the first pair warms up
      for (let r = 0; r < REPS + 1; r++) {
        const a = await importOnce(path.join(root, `${label.replace(/\W+/g, '-')}-on-${r}`), file, true);
        const b = await importOnce(path.join(root, `${label.replace(/\W+/g, '-')}-off-${r}`), file, false);
        if (a.segments !== b.segments) error = `${label}: ${a.segments} segments with re-anchoring, ${b.segments} without`;
        counts = `${a.segments} segments; anchoring ${JSON.stringify(a.anchoring)}`;
        // the reading step alone (where re-anchoring runs): the database read and the plan, nothing written
        let t0 = performance.now();
        await qualcoderImporter.plan(file, { reanchor: true });
        const p1 = performance.now() - t0;
        t0 = performance.now();
        await qualcoderImporter.plan(file, { reanchor: false });
        const p0 = performance.now() - t0;
        if (r > 0) {
          on.push(a.ms);
          off.push(b.ms);
          planOn.push(p1);
          planOff.push(p0);
        }
      }
      const ps = stats(planOn);
      const pf = stats(planOff);
      const s = stats(on);
      const f = stats(off);
      notes.push(`${label}: ${counts}`);
      rows.push([`${label}: re-anchoring off (FLOOR)`, ...latencyCells(f), '1.00x']);
      rows.push([`${label}: re-anchoring on (import_data)`, ...latencyCells(s), ratio(s.p50, f.p50)]);
      rows.push([`${label}: read + plan only, re-anchoring off`, ...latencyCells(pf), '']);
      rows.push([`${label}: read + plan only, re-anchoring on`, ...latencyCells(ps), ratio(ps.p50, pf.p50)]);
      figures.push({
        name: `QualCoder import with re-anchoring, ${label} (p50)`,
        value: s.p50,
        unit: 'ms',
        goal: 2 * f.p50,
        goalSource: 'issue 15: at most 2x the import without it',
        floor: { label: 'the same import, re-anchoring off', value: f.p50 },
      });
      figures.push({
        name: `QualCoder read + plan with re-anchoring, ${label} (p50; no goal: the step re-anchoring adds to)`,
        value: ps.p50,
        unit: 'ms',
        floor: { label: 'read + plan, re-anchoring off', value: pf.p50 },
      });
    }
    return {
      title: '12. Re-anchoring by quote: QualCoder corpus import with and without it',
      body: [
        machineLine(),
        `load average at start ${load0.map((l) => l.toFixed(2)).join(' ')}`,
        '',
        `${path.basename(CORPUS)} (${(fs.statSync(CORPUS).size / 2 ** 20).toFixed(1)} MB)`,
        ...notes,
        '',
        table(['', ...LATENCY_HEADER, 'p50 / floor'], rows),
        '',
        `${REPS} repetitions after one warm-up pair, on and off alternating, each into a new project in a fresh folder.`,
      ],
      figures,
      ...(error ? { error } : {}),
    };
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}

sectionMain(run);
