/**
 * Bench section: the researcher's waits, measured in the REAL VS Code extension host (issue 13's checks).
 * Bundles bench/rig/suite.ts, starts the rig of test/integration/run.mjs (the VS Code server from code-server
 * and headless Chromium; `scripts/setup-vscode-host.sh` installs it) on a workspace holding a copy of the
 * cached ~100 MB bench project (bench/lib/generate.ts), and reads back the figures the suite measured:
 * activation to populated trees (goal 1.5 s), a Codes tree refresh with 2,000 codes (100 ms), coding a
 * selection until painted on a 5,000-segment transcript (p50 50 ms) and undo of that coding (50 ms).
 * Each has its floor measured in the same host in the same run (see the suite's header).
 * Runs alone (`npx tsx bench/rig.ts`) or as a child of bench/run.ts. Without the rig it reports why.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as esbuild from 'esbuild';
import { copyProject, ensureProject, specForSize } from './lib/generate';
import { QUICK, machineLine, sectionMain, type Figure, type SectionResult } from './lib/section';
import { LATENCY_HEADER, latencyCells, mb, ratio, stats, table } from './lib/stats';
import type { RigResult } from './rig/suite';

const ROOT = path.resolve(__dirname, '..');
const DATA = path.join(__dirname, '.data');
const RIG_SERVER = path.join(ROOT, '.vscode-rig', 'node_modules', 'code-server', 'lib', 'vscode', 'out', 'server-main.js');

// the full redraw has no goal of its own: VS Code's main thread draws every expanded row again, which the provider
// cannot shorten; what a researcher's change costs is codesTreeChange (issue 13's "Codes tree refresh")
const GOALS: Record<RigResult['figures'][number]['key'], number | undefined> = {
  activation: 1500,
  codesTree: 100,
  codesTreeView: undefined,
  codesTreeChange: 100,
  codingPaint: 50,
  undoPaint: 50,
};
const LABELS = {
  activation: ['activation to populated trees, ~100 MB project', 'read the file + open it in sql.js'],
  codesTree: ['Codes tree refresh, 2,000 codes in 100 categories: the provider (every node and item)', '2,000 plain TreeItems from the rows'],
  codesTreeView: [
    'Codes tree full redraw as the view draws it (opening, Refresh, clearing a filter: every expanded category)',
    'the same view filtered to one code (2 rows), drawn the same way',
  ],
  codesTreeChange: ['Codes tree after a change: a new code in one of 100 categories, from the call until the view drew it', 'the create_code call alone'],
  codingPaint: ['code a selection until painted, 5,000-segment transcript', 'one durable apply_code, nothing drawn'],
  undoPaint: ['undo that coding until painted', 'one durable apply_code, nothing drawn'],
} as const;

async function run(): Promise<SectionResult> {
  const title = '16. The researcher in VS Code: activation, Codes tree, coding and undo (real extension host)';
  if (!fs.existsSync(RIG_SERVER)) {
    return { title, body: ['The VS Code rig is not installed (scripts/setup-vscode-host.sh); nothing measured.'], figures: [], error: 'no VS Code rig' };
  }
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'marginalia-rig-bench-'));
  try {
    const big = await ensureProject(DATA, specForSize('large', QUICK ? 10e6 : 100e6, 50, 22));
    const workspace = path.join(work, 'workspace');
    fs.mkdirSync(workspace);
    copyProject(big.file, path.join(workspace, 'study.qda'));
    const bundleDir = path.join(work, 'suite');
    await esbuild.build({
      entryPoints: [path.join(__dirname, 'rig', 'suite.ts')],
      outfile: path.join(bundleDir, 'index.js'),
      bundle: true,
      platform: 'node',
      format: 'cjs',
      target: 'node20',
      logLevel: 'warning',
      external: ['vscode'],
    });
    fs.copyFileSync(path.join(ROOT, 'node_modules', 'sql.js', 'dist', 'sql-wasm.wasm'), path.join(bundleDir, 'sql-wasm.wasm'));
    const build = spawnSync(process.execPath, [path.join(ROOT, 'esbuild.mjs')], { cwd: ROOT, encoding: 'utf8' });
    if (build.status !== 0) throw new Error(`esbuild.mjs failed: ${build.stderr}`);
    const resultFile = path.join(work, 'result.json');
    const r = spawnSync(
      process.execPath,
      [
        path.join(ROOT, 'test', 'integration', 'run.mjs'),
        'test',
        `--extensionTestsPath=${path.join(bundleDir, 'index.js')}`,
        `--workspace=${workspace}`,
        '--timeout=900',
      ],
      {
        cwd: ROOT,
        encoding: 'utf8',
        env: { ...process.env, MARGINALIA_BENCH_RESULT: resultFile, MARGINALIA_BENCH_REPS: QUICK ? '10' : '30' },
        maxBuffer: 64 * 1024 * 1024,
      },
    );
    if (!fs.existsSync(resultFile)) throw new Error(`the rig wrote no result (exit ${r.status}):\n${(r.stdout + r.stderr).split('\n').slice(-30).join('\n')}`);
    const result = JSON.parse(fs.readFileSync(resultFile, 'utf8')) as RigResult;
    const rows: string[][] = [];
    const figures: Figure[] = [];
    for (const f of result.figures) {
      const s = stats(f.samples);
      const fl = stats(f.floorSamples);
      const [label, floorLabel] = LABELS[f.key];
      rows.push([label, ...latencyCells(s), ratio(s.p50, fl.p50)], [`  floor: ${floorLabel}`, ...latencyCells(fl), '1.00x']);
      figures.push({
        name: `${label} p50`,
        value: s.p50,
        unit: 'ms',
        goal: GOALS[f.key],
        goalSource: GOALS[f.key] === undefined ? undefined : 'issue 13',
        floor: { label: floorLabel, value: fl.p50 },
        atGoalSize: f.key === 'activation' ? result.projectBytes >= 95e6 : true,
      });
    }
    return {
      title,
      body: [
        machineLine(),
        '',
        `Project opened at activation: ${mb(result.projectBytes)} (${big.sources} sources, ${big.segments} segments). Then a new project with ${result.codes} codes and a transcript of ${result.segments} segments.`,
        '',
        table(['', ...LATENCY_HEADER, 'p50 / floor'], rows),
        '',
        ...result.figures.filter((f) => f.note).map((f) => `${LABELS[f.key][0]}: ${f.note}`),
        '',
        ...(result.error ? ['', 'The suite stopped early (the figures above are what it measured before):', result.error] : []),
        'Activation is one sample (one start of the extension host). Painting is observed through CodedSegmentDecorations.lastPaint: the time setDecorations was called for the editor, not the renderer drawing it.',
      ],
      figures,
      error: result.error?.split('\n')[0],
    };
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

sectionMain(run);
