/**
 * Bench section: REFI-QDA import of the NVivo 12 sample (issue 7, part 5; goal under 1 s): `import_data
 * {format: "refi_qda"}` through the in-process pipeline into a new empty project, each repetition in a
 * fresh folder (embedded media are extracted beside the file). Floor, measured in the same run: reading
 * the .qdpx and inflating every entry with JSZip (what any importer of the file must do before parsing).
 * Runs alone (`npx tsx bench/refiImport.ts`) or as a child of bench/run.ts.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import JSZip from 'jszip';
import { createPipeline, headlessHost, openProjectHandle } from '../src/cli/compose';
import type { Caller } from '../src/agent/pipeline';
import { silentLogger } from '../src/core/log';
import { QUICK, machineLine, sectionMain, type SectionResult } from './lib/section';
import { LATENCY_HEADER, latencyCells, mb, ms, ratio, stats, table } from './lib/stats';

const SAMPLE = process.env.BENCH_NVIVO_QDPX ?? path.resolve(__dirname, '..', '..', 'shared', 'corpus', 'refi-qda', 'qdpx', 'nvivo12_oltas0517.qdpx');
const REPS = QUICK ? 3 : 7;
const GOAL_MS = 1000;
const caller: Caller = { session_id: 'bench', client_type: 'CUSTOM', client_name: 'bench', user: 'bench' };

async function run(): Promise<SectionResult> {
  const load0 = os.loadavg();
  if (!fs.existsSync(SAMPLE)) throw new Error(`the NVivo sample ${SAMPLE} is missing (BENCH_NVIVO_QDPX names another)`);
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'marginalia-bench-refi-'));
  try {
    const floor: number[] = [];
    const imp: number[] = [];
    let summary = '';
    for (let r = 0; r < REPS + 1; r++) {
      let t0 = performance.now();
      const zip = await JSZip.loadAsync(fs.readFileSync(SAMPLE));
      let unzipped = 0;
      for (const f of Object.values(zip.files)) if (!f.dir) unzipped += (await f.async('uint8array')).length;
      const f1 = performance.now() - t0;

      const dir = path.join(root, `rep-${r}`);
      fs.mkdirSync(dir);
      const file = path.join(dir, path.basename(SAMPLE));
      fs.copyFileSync(SAMPLE, file);
      const handle = await openProjectHandle(path.join(dir, 'import.qda'), { create: true, checkpointIdleMs: 0, logger: silentLogger });
      try {
        const pipeline = createPipeline({ project: () => handle, host: headlessHost, logger: silentLogger });
        t0 = performance.now();
        const out = await pipeline.invoke('import_data', { format: 'refi_qda', source_path: file }, caller);
        const d = performance.now() - t0;
        if (!out.envelope.success) throw new Error(`import_data failed: ${JSON.stringify(out.envelope).slice(0, 500)}`);
        if (r > 0) {
          imp.push(d);
          floor.push(f1);
        }
        const data = out.envelope.data as Record<string, unknown>;
        summary = `${mb(fs.statSync(SAMPLE).size)} file, ${mb(unzipped)} unzipped; created ${JSON.stringify(data.created ?? data.counts ?? {})}`;
      } finally {
        await handle.close();
      }
    }
    const s = stats(imp);
    const f = stats(floor);
    return {
      title: '11. REFI-QDA import of the NVivo 12 sample (import_data through the pipeline)',
      body: [
        machineLine(),
        `load average at start ${load0.map((l) => l.toFixed(2)).join(' ')}`,
        '',
        `${path.basename(SAMPLE)}: ${summary}`,
        '',
        table(
          ['', ...LATENCY_HEADER, 'p50 / floor'],
          [
            ['read + unzip every entry with JSZip (FLOOR)', ...latencyCells(f), '1.00x'],
            ['import_data refi_qda into a new project (in-process pipeline)', ...latencyCells(s), ratio(s.p50, f.p50)],
          ],
        ),
        '',
        `${REPS} repetitions after one warm-up, each into a new project in a fresh folder.`,
      ],
      figures: [
        {
          name: `NVivo 12 sample import p50 (max ${ms(s.max)} ms)`,
          value: s.p50,
          unit: 'ms',
          goal: GOAL_MS,
          goalSource: 'issue 7',
          floor: { label: 'read + unzip with JSZip', value: f.p50 },
        },
      ],
    };
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}

sectionMain(run);
