/**
 * import_analytics benchmark (`npx tsx bench/analytics.ts`; `BENCH_QUICK=1` for a 20 MB run; `BENCH_GA4_MB=N`
 * for another size).
 *
 * Generates a 200 MB GA4 export with scripts/generateGa4.ts (seed 1; cached in bench/.data/, gitignored), then,
 * in a fresh child process so that generation does not count, opens a new project and runs import_analytics
 * through the one tool pipeline (validation, the streamed read in `prepare`, one transaction writing every case
 * and attribute with its events, the journal fsync), then closes the project (a checkpoint writes the database
 * file). Prints the elapsed time of each step and the peak resident set size: the process's maxRSS
 * (`process.resourceUsage()`), and RSS sampled every 50 ms. Goal (issue 6): peak memory under 300 MB.
 */
import { fork } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Caller } from '../src/agent/pipeline';
import { createPipeline, headlessHost, openProjectHandle } from '../src/cli/compose';
import { silentLogger } from '../src/core/log';
import { generateGa4 } from '../scripts/generateGa4';

const MB = 1024 * 1024;
const SIZE_MB = Number(process.env.BENCH_GA4_MB ?? (process.env.BENCH_QUICK === '1' ? 20 : 200));
const GOAL_MB = 300;
const DATA = path.join(__dirname, '.data');
const FILE = path.join(DATA, `ga4-${SIZE_MB}mb-seed1.ndjson`);
const caller: Caller = { session_id: 'bench', client_type: 'CUSTOM', client_name: 'bench', user: 'bench' };

function log(msg: string): void {
  process.stderr.write(`[analytics bench] ${msg}\n`);
}

async function parent(): Promise<void> {
  if (!fs.existsSync(FILE)) {
    log(`generating ${SIZE_MB} MB of GA4 events into ${path.relative(process.cwd(), FILE)} (once; cached)`);
    const t = performance.now();
    const tmp = `${FILE}.tmp`;
    const truth = await generateGa4(tmp, { targetBytes: SIZE_MB * MB, seed: 1 });
    fs.renameSync(tmp, FILE);
    log(`generated ${(truth.bytes / MB).toFixed(1)} MB, ${truth.events} events, ${truth.users.size} users in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  }
  const child = fork(__filename, ['--measure'], { stdio: 'inherit' });
  const code = await new Promise<number>((resolve) => child.on('exit', (c) => resolve(c ?? 1)));
  process.exitCode = code;
}

async function measure(): Promise<void> {
  let sampledPeak = process.memoryUsage().rss;
  const timer = setInterval(() => {
    sampledPeak = Math.max(sampledPeak, process.memoryUsage().rss);
  }, 50);
  const baseline = process.memoryUsage().rss;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'marginalia-bench-ga4-'));
  try {
    const handle = await openProjectHandle(path.join(dir, 'analytics.qda'), { create: true, checkpointIdleMs: 0 });
    const pipeline = createPipeline({ project: () => handle, host: headlessHost, logger: silentLogger, embeddings: null });
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
    const lines = [
      `file               ${(size / MB).toFixed(1)} MB, ${data.events} events, ${data.profiles} users`,
      `import_analytics   ${(importMs / 1000).toFixed(1)} s (${(size / MB / (importMs / 1000)).toFixed(1)} MB/s): ${data.cases_created} cases, ${data.attributes_set} attributes, journal ${(journal / MB).toFixed(1)} MB`,
      `close (checkpoint) ${(closeMs / 1000).toFixed(1)} s, project file ${(dbBytes / MB).toFixed(1)} MB`,
      `baseline RSS       ${(baseline / MB).toFixed(0)} MB`,
      `peak RSS, import   ${(Math.max(importPeak, maxRssAfterImport) / MB).toFixed(0)} MB (maxRSS ${(maxRssAfterImport / MB).toFixed(0)} MB, sampled ${(importPeak / MB).toFixed(0)} MB)`,
      `peak RSS, overall  ${(maxRss / MB).toFixed(0)} MB (maxRSS, including the checkpoint)`,
      `goal               peak under ${GOAL_MB} MB: ${maxRss / MB < GOAL_MB ? 'met' : 'NOT met'}`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
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
} else {
  parent().catch((e) => {
    process.stderr.write(`${(e as Error).stack ?? String(e)}\n`);
    process.exit(1);
  });
}
