/**
 * Bench section: project open time at 1M segments (issue 7, part 5; goal under 2 s): openProjectHandle
 * (ProjectStore.open: read the file, sql.js init, journal replay, migrations check; plus the snapshotter)
 * on a private copy of the 10,000-source / 1,000,000-segment project that bench/reports.ts caches in
 * bench/.data (about 1.2 GB; made by `BENCH_FULL=1`, which runs the reports section first). Without it,
 * the 500-source / 50,000-segment reports project, marked as reduced size. Floors, same run: reading the
 * file (`fs.readFileSync`), and reading it into a bare sql.js Database (the least sql.js can open in).
 * The copy is in the page cache when timed (a cold read from disk is slower).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { openProjectHandle } from '../src/cli/compose';
import { silentLogger } from '../src/core/log';
import { loadSqlJs } from '../src/store/sqljs';
import { copyProject } from './lib/generate';
import { QUICK, machineLine, sectionMain, type SectionResult } from './lib/section';
import { mb, ms, ratio, stats, table } from './lib/stats';

const DATA = path.join(__dirname, '.data');
const FULL_FILE = path.join(DATA, 'reports-10000s-2000c-100g-seg50_1000-gen1-1.qda');
const SMALL_FILE = path.join(DATA, 'reports-500s-500c-100g-seg50_1000-gen1-1.qda');
const REPS = QUICK ? 2 : 3;
const GOAL_MS = 2000;

async function run(): Promise<SectionResult> {
  const load0 = os.loadavg();
  const full = fs.existsSync(FULL_FILE);
  const src = full ? FULL_FILE : SMALL_FILE;
  if (!fs.existsSync(src))
    throw new Error(`no cached reports project in ${DATA}: run \`npx tsx bench/reports.ts\` (BENCH_FULL=1 for the 1M-segment one) first`);
  const file = path.join(DATA, `open-bench-${process.pid}.qda`);
  copyProject(src, file);
  try {
    const SQL = await loadSqlJs();
    // one untimed open: applies any newer migration to the copy (and checkpoints), warms the code paths
    let handle = await openProjectHandle(file, { checkpointIdleMs: 0, logger: silentLogger });
    const segments = Number(handle.store.get<{ n: number }>('SELECT count(*) AS n FROM segments')?.n ?? 0);
    const sources = Number(handle.store.get<{ n: number }>('SELECT count(*) AS n FROM sources')?.n ?? 0);
    await handle.close();
    const bytes = fs.statSync(file).size;
    const read: number[] = [];
    const bare: number[] = [];
    const open: number[] = [];
    for (let r = 0; r < REPS; r++) {
      let t0 = performance.now();
      let buf: Buffer | undefined = fs.readFileSync(file);
      read.push(performance.now() - t0);
      t0 = performance.now();
      const db = new SQL.Database(buf);
      db.exec('PRAGMA schema_version');
      bare.push((read[read.length - 1] as number) + performance.now() - t0);
      db.close();
      buf = undefined;
      t0 = performance.now();
      handle = await openProjectHandle(file, { checkpointIdleMs: 0, logger: silentLogger });
      open.push(performance.now() - t0);
      await handle.close();
    }
    const [rd, br, op] = [stats(read), stats(bare), stats(open)];
    return {
      title: '9. Project open at 1M segments (openProjectHandle)',
      body: [
        machineLine(),
        `load average at start ${load0.map((l) => l.toFixed(2)).join(' ')}`,
        '',
        `${path.basename(src)}: ${mb(bytes)}, ${sources} sources, ${segments} segments${full ? '' : ' [reduced size: BENCH_FULL=1 makes the 1M-segment project]'}; a private copy, in the page cache.`,
        '',
        table(
          ['', 'n', 'median ms', 'min ms', 'max ms', 'median / read floor'],
          [
            ['fs.readFileSync of the file (FLOOR)', String(rd.n), ms(rd.p50), ms(rd.min), ms(rd.max), '1.00x'],
            ['readFileSync + new SQL.Database (bare sql.js open)', String(br.n), ms(br.p50), ms(br.min), ms(br.max), ratio(br.p50, rd.p50)],
            [
              'openProjectHandle (lock, read, sql.js, journal, migrations check, snapshotter)',
              String(op.n),
              ms(op.p50),
              ms(op.min),
              ms(op.max),
              ratio(op.p50, rd.p50),
            ],
          ],
        ),
      ],
      figures: [
        {
          name: `open ${mb(bytes)} / ${segments} segments, median (bare sql.js open ${ms(br.p50)} ms)`,
          value: op.p50,
          unit: 'ms',
          goal: GOAL_MS,
          goalSource: 'issue 7',
          floor: { label: 'readFileSync of the file', value: rd.p50 },
          atGoalSize: full && segments >= 1_000_000,
        },
      ],
    };
  } finally {
    fs.rmSync(file, { force: true });
    for (const f of fs.readdirSync(DATA)) if (f.startsWith(path.basename(file))) fs.rmSync(path.join(DATA, f), { recursive: true, force: true });
  }
}

sectionMain(run);
