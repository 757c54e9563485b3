/**
 * What every bench section returns, how its figures are judged, and how a section runs: standalone
 * (`npx tsx bench/<section>.ts` prints its tables and goal lines) or as a child process of bench/run.ts
 * (`--child`: the result goes back over the IPC channel, so each section has a fresh heap and its own RSS).
 *
 * Sizes: BENCH_FULL=1 selects the issue's full sizes (10,000 sources / 1,000,000 segments for the reports,
 * ~120 MB of text for search_text, a 200 MB GA4 export); without it the sections run reduced sizes that
 * finish in a few minutes on a fresh machine. BENCH_QUICK=1 also cuts repetitions.
 */
import { fork } from 'node:child_process';
import * as os from 'node:os';
import { ms } from './stats';

export const FULL = process.env.BENCH_FULL === '1';
export const QUICK = process.env.BENCH_QUICK === '1';

/** One figure of the bench: a measured value, its goal, and the floor measured beside it in the same run. */
export interface Figure {
  /** what was measured, with the size it was measured at */
  name: string;
  value: number;
  unit: 'ms' | 'MB';
  /** the value must be below this to meet the goal; undefined: reported only */
  goal?: number;
  /** where the goal comes from (issue 5, issue 6, ...) */
  goalSource?: string;
  /** the least the same work can cost on this machine, measured in the same run */
  floor?: { label: string; value: number };
  /** false when the run was not at the size the goal is set for (BENCH_FULL unset): judged, but not the issue's figure */
  atGoalSize?: boolean;
}

/** What a section hands back: its title, the lines of its report (tables), and its figures. */
export interface SectionResult {
  title: string;
  body: string[];
  figures: Figure[];
  /** set when a cross-check failed (the figure then means nothing) */
  error?: string;
}

function value(v: number, unit: Figure['unit']): string {
  return unit === 'ms' ? `${ms(v)} ms` : `${v.toFixed(0)} MB`;
}

/** `MET`, `MISS` or `INFO` (no goal), then the figure with its goal and its floor. */
export function goalLine(f: Figure): string {
  const verdict = f.goal === undefined ? 'INFO' : f.value < f.goal ? 'MET ' : 'MISS';
  const goal = f.goal === undefined ? 'no goal set' : `goal < ${value(f.goal, f.unit)}${f.goalSource ? ` (${f.goalSource})` : ''}`;
  const floor = f.floor
    ? `; floor ${value(f.floor.value, f.unit)} (${f.floor.label}), ${f.floor.value > 0 ? (f.value / f.floor.value).toFixed(2) : 'n/a'}x floor`
    : '';
  const size = f.atGoalSize === false ? ' [reduced size: BENCH_FULL=1 for the goal size]' : '';
  return `${verdict}  ${f.name}: ${value(f.value, f.unit)}; ${goal}${floor}${size}`;
}

/** Machine and load, one line. */
export function machineLine(): string {
  const cpus = os.cpus();
  return `machine: ${cpus.length} x ${cpus[0]?.model ?? '?'}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}, load average ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}, ${new Date().toISOString()}`;
}

/**
 * Runs a section's `run` as the module's entry point: with `--child` it sends the result to the parent
 * (bench/run.ts), otherwise it prints the report and one goal line per figure. A failed cross-check sets
 * the exit code.
 */
export function sectionMain(run: () => Promise<SectionResult>): void {
  const child = process.argv.includes('--child');
  run()
    .then(async (r) => {
      if (child && process.send) {
        await new Promise<void>((resolve, reject) => process.send?.(r, undefined, {}, (e) => (e ? reject(e) : resolve())));
        process.disconnect?.();
        return;
      }
      process.stdout.write(`\n## ${r.title}\n\n${r.body.join('\n')}\n\n${r.figures.map(goalLine).join('\n')}\n${r.error ? `ERROR: ${r.error}\n` : ''}`);
      if (r.error) process.exitCode = 1;
    })
    .catch((e: unknown) => {
      process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
      process.exit(1);
    });
}

/**
 * Runs the section script `file` in a child process (the tsx loader is inherited through execArgv) and
 * returns what it sent. Its stderr (progress) and stdout pass through.
 */
export function runSectionChild(file: string): Promise<SectionResult> {
  return new Promise((resolve, reject) => {
    const child = fork(file, ['--child'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    let result: SectionResult | undefined;
    child.on('message', (m) => {
      result = m as SectionResult;
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (result) resolve(result);
      else reject(new Error(`${file} exited with ${signal ?? `code ${code}`} without a result`));
    });
  });
}
