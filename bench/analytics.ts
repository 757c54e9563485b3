/**
 * import_analytics benchmark: section 6 of `npm run bench`, or alone with `npx tsx bench/analytics.ts`.
 * BENCH_FULL=1 imports a 200 MB GA4 export (the size issue 6 sets the goal for); without it 20 MB;
 * `BENCH_GA4_MB=N` for another size.
 *
 * Generates the GA4 export with scripts/generateGa4.ts (seed 1; cached in bench/.data/, gitignored), then,
 * in a fresh child process so that generation does not count, opens a new project and runs import_analytics
 * through the one tool pipeline (validation, the streamed read in `prepare`, one transaction writing every case
 * and attribute with its events, the journal fsync), then closes the project (a checkpoint writes the database
 * file). Reports the elapsed time of each step and the peak resident set size: the process's maxRSS
 * (`process.resourceUsage()`), and RSS sampled every 50 ms; the floor is the same process's RSS with the app
 * loaded and the empty project open, just before the import. Goal (issue 6): peak memory under 300 MB.
 */
import { fork } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Caller } from '../src/agent/pipeline';
import { createPipeline, headlessHost, openProjectHandle } from '../src/cli/compose';
import { silentLogger } from '../src/core/log';
import { generateGa4 } from '../scripts/generateGa4';
import { FULL, machineLine, sectionMain, type SectionResult } from './lib/section';
import { table } from './lib/stats';

const MB = 1024 * 1024;
const GOAL_SIZE_MB = 200;
const SIZE_MB = Number(process.env.BENCH_GA4_MB ?? (FULL ? GOAL_SIZE_MB : 20));
const GOAL_MB = 300;
const DATA = path.join(__dirname, '.data');
const FILE = path.join(DATA, `ga4-${SIZE_MB}mb-seed1.ndjson`);
const caller: Caller = { session_id: 'bench', client_type: 'CUSTOM', client_name: 'bench', user: 'bench' };

function log(msg: string): void {
  process.stderr.write(`[analytics] ${msg}\n`);
}

/** What the measuring child reports (bytes and ms). */
interface Measured {
  size: number;
  events: number;
  profiles: number;
  cases: number;
  attributes: number;
  journal: number;
  importMs: number;
  closeMs: number;
  dbBytes: number;
  /** RSS with the app loaded and the empty project open, before the import */
  baseline: number;
  /** the largest RSS seen during the import (sampled every 50 ms, and maxRSS right after it) */
  importPeak: number;
  /** maxRSS of the whole child, including the closing checkpoint */
  maxRss: number;
}

async function run(): Promise<SectionResult> {
  if (!fs.existsSync(FILE)) {
    log(`generating ${SIZE_MB} MB of GA4 events into ${path.relative(process.cwd(), FILE)} (once; cached)`);
    const t = performance.now();
    const tmp = `${FILE}.tmp`;
    const truth = await generateGa4(tmp, { targetBytes: SIZE_MB * MB, seed: 1 });
    fs.renameSync(tmp, FILE);
    log(`generated ${(truth.bytes / MB).toFixed(1)} MB, ${truth.events} events, ${truth.users.size} users in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  }
  log(`importing ${SIZE_MB} MB in a fresh child process`);
  const child = fork(__filename, ['--measure'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  let m: Measured | undefined;
  child.on('message', (msg) => {
    m = msg as Measured;
  });
  const code = await new Promise<number>((resolve) => child.on('exit', (c) => resolve(c ?? 1)));
  if (code !== 0 || !m) throw new Error(`the measuring child exited with code ${code}`);
  const mib = (b: number) => (b / MB).toFixed(1);
  const body = [
    table(
      ['step', 'figure'],
      [
        ['file', `${mib(m.size)} MB, ${m.events} events, ${m.profiles} users`],
        [
          'import_analytics',
          `${(m.importMs / 1000).toFixed(1)} s (${(m.size / MB / (m.importMs / 1000)).toFixed(1)} MB/s): ${m.cases} cases, ${m.attributes} attributes, journal ${mib(m.journal)} MB`,
        ],
        ['close (checkpoint)', `${(m.closeMs / 1000).toFixed(1)} s, project file ${mib(m.dbBytes)} MB`],
        ['FLOOR RSS with the app loaded and the empty project open', `${mib(m.baseline)} MB`],
        ['peak RSS during the import (maxRSS, and sampled every 50 ms)', `${mib(m.importPeak)} MB`],
        ['peak RSS overall (maxRSS, including the closing checkpoint)', `${mib(m.maxRss)} MB`],
      ],
    ),
    '',
    `MB here are MiB (2^20 bytes). ${machineLine()}`,
  ];
  return {
    title: `6. import_analytics of a ${SIZE_MB} MB GA4 export (peak memory)`,
    body,
    figures: [
      {
        name: `import_analytics peak RSS, ${SIZE_MB} MB GA4 export`,
        value: m.maxRss / MB,
        unit: 'MB',
        goal: GOAL_MB,
        goalSource: 'issue 6',
        floor: { label: 'RSS with the app and an empty project, before the import', value: m.baseline / MB },
        atGoalSize: SIZE_MB >= GOAL_SIZE_MB,
      },
    ],
  };
}

async function measure(): Promise<void> {
  let sampledPeak = process.memoryUsage().rss;
  const timer = setInterval(() => {
    sampledPeak = Math.max(sampledPeak, process.memoryUsage().rss);
  }, 50);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'marginalia-bench-ga4-'));
  try {
    const handle = await openProjectHandle(path.join(dir, 'analytics.qda'), { create: true, checkpointIdleMs: 0 });
    const pipeline = createPipeline({ project: () => handle, host: headlessHost, logger: silentLogger, embeddings: null });
    const baseline = process.memoryUsage().rss;
    const size = fs.statSync(FILE).size;
    const t0 = performance.now();
    const out = await pipeline.invoke('import_analytics', { source_path: FILE }, caller);
    const importMs = performance.now() - t0;
    if (!out.envelope.success) throw new Error(`import_analytics failed: ${out.envelope.error_code}: ${out.envelope.error}`);
    const importPeak = Math.max(sampledPeak, process.memoryUsage().rss);
    const maxRssAfterImport = process.resourceUsage().maxRSS * 1024;
    const data = out.envelope.data as { profiles: number; events: number; cases_created: number; attributes_set: number };
    const journal = handle.store.journalSize;
    const t1 = performance.now();
    await handle.close();
    const closeMs = performance.now() - t1;
    clearInterval(timer);
    const maxRss = process.resourceUsage().maxRSS * 1024;
    const dbBytes = fs.statSync(path.join(dir, 'analytics.qda')).size;
    const result: Measured = {
      size,
      events: data.events,
      profiles: data.profiles,
      cases: data.cases_created,
      attributes: data.attributes_set,
      journal,
      importMs,
      closeMs,
      dbBytes,
      baseline,
      importPeak: Math.max(importPeak, maxRssAfterImport),
      maxRss,
    };
    await new Promise<void>((resolve, reject) => process.send?.(result, undefined, {}, (e) => (e ? reject(e) : resolve())));
    process.disconnect?.();
  } finally {
    clearInterval(timer);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv.includes('--measure')) {
  measure().catch((e) => {
    process.stderr.write(`${(e as Error).stack ?? String(e)}\n`);
    process.exit(1);
  });
} else if (require.main === module) {
  sectionMain(run);
}
