/**
 * Agreement benchmark (issue 16 item 6): the coder comparison with 1,000 bootstrap draws on 1,000,000
 * segments and 5 coders under 2 s at BENCH_FULL=1 (10,000 sources of 5-20 K characters, 200 codes);
 * without it 500 sources / 50,000 segments. Alone: `npx tsx bench/agreement.ts`.
 *
 * Measures the computation of generate_coder_comparison after the project's rows are read
 * (src/domain/coderComparison.ts comparisonSources, then src/domain/agreement/comparison.ts compareCoders:
 * per-code unions, character pattern histograms, every coefficient with 1,000 multinomial bootstrap draws,
 * the unitizing alpha) on coded ranges generated in memory as the repository returns them (by source). Per
 * source 20 "true" passages of 50-1,000 characters with uniformly chosen codes; each of the 5 coders codes
 * each passage with probability 0.8 (else skips it) with boundaries moved by up to ±20 characters. Reading the
 * rows from SQLite is the reports bench's business (bench/reports.ts); this is the statistics' cost.
 * Floor, same run: one pass over the 1,000,000 ranges summing the coded length per code and coder (the least
 * any comparison reading every range pays). Also reported: the CPU time of the comparison (user + system: on
 * a loaded machine the wall time also counts waiting for a core), and the unitizing alpha alone
 * (unitizingAlpha per code over the sources where it occurs, with every source's length as background, as
 * compareCoders computes it when its bootstrap budget leaves the unitizing interval out, which it does at
 * this size).
 */
import type { ComparisonSource } from '../src/domain/agreement/comparison';
import { compareCoders } from '../src/domain/agreement/comparison';
import { sortedLengths, unitizingAlpha, type Continuum, type SortedLengths } from '../src/domain/agreement/unitizing';
import { comparisonSources } from '../src/domain/coderComparison';
import type { CodedRanges } from '../src/domain/ports';
import { mulberry32 } from './lib/generate';
import { FULL, QUICK, machineLine, sectionMain, type SectionResult } from './lib/section';
import { ms, stats, table } from './lib/stats';

const SOURCES = FULL ? 10_000 : 500;
const CODES = 200;
const CODERS = 5;
const PASSAGES = 20;
const DRAWS = 1_000;
const REPS = QUICK ? 2 : FULL ? 3 : 5;
const GOAL_MS = 2_000;

/** Coded ranges of CODERS coders as reportCodedRanges returns them (grouped by source), and each source's length. */
function generate(): { ranges: CodedRanges; lengths: Map<number, number> } {
  const rand = mulberry32(16);
  const rows: number[][] = [[], [], [], [], []];
  const lengths = new Map<number, number>();
  for (let s = 1; s <= SOURCES; s++) {
    const len = 5_000 + Math.floor(rand() * 15_000);
    lengths.set(s, len);
    for (let p = 0; p < PASSAGES; p++) {
      const size = 50 + Math.floor(rand() * 950);
      const start = Math.floor(rand() * (len - size));
      const code = 1 + Math.floor(rand() * CODES);
      for (let c = 0; c < CODERS; c++) {
        // every coder keeps 5 segments per passage on average (0.8 x 5 coders x 20 passages x 1.25 = 100 per source)
        const copies = rand() < 0.8 ? (rand() < 0.25 ? 2 : 1) : 0;
        for (let k = 0; k < copies; k++) {
          const a = Math.max(0, start + Math.floor(rand() * 41) - 20);
          const b = Math.min(len, Math.max(a + 1, start + size + Math.floor(rand() * 41) - 20));
          rows[0]!.push(s);
          rows[1]!.push(code);
          rows[2]!.push(a);
          rows[3]!.push(b);
          rows[4]!.push(c);
        }
      }
    }
  }
  const ranges: CodedRanges = {
    source_id: Int32Array.from(rows[0]!),
    code_id: Int32Array.from(rows[1]!),
    start_pos: Int32Array.from(rows[2]!),
    end_pos: Int32Array.from(rows[3]!),
    owner: Int32Array.from(rows[4]!),
    owners: ['ana', 'ben', 'chen', 'dara', 'eli'],
  };
  return { ranges, lengths };
}

/** The floor: one pass summing coded length per (code, coder). */
function floor(r: CodedRanges): number {
  const sums = new Float64Array((CODES + 1) * CODERS);
  for (let k = 0; k < r.source_id.length; k++) {
    const i = (r.code_id[k] as number) * CODERS + (r.owner[k] as number);
    sums[i] = (sums[i] as number) + (r.end_pos[k] as number) - (r.start_pos[k] as number);
  }
  return sums.reduce((a, b) => a + b, 0);
}

function codesOf(x: { codeIds: number[] } | undefined): number {
  return x?.codeIds.length ?? 0;
}

function comparison(
  r: CodedRanges,
  lengths: Map<number, number>,
): { sources: ComparisonSource[]; codeIds: number[]; fleiss: number | null; intervals: number } {
  const extents = new Map([...lengths].map(([s, len]) => [s, [0, len]]));
  const input = comparisonSources(r, [0, 1, 2, 3, 4], CODERS, extents, 'character', undefined, () => []);
  const out = compareCoders(input.sources, input.codeIds, CODERS, { draws: DRAWS, seed: 1, maxDisagreements: 25 });
  let intervals = 0;
  for (const c of out.codes.values()) if (c.measures.fleiss_kappa.ci_low !== null) intervals++;
  return { sources: input.sources, codeIds: input.codeIds, fleiss: out.overall?.fleiss_kappa.value ?? null, intervals };
}

/** Per code its continua (the sources where it occurs, whole: one continuum each), and every source's length as background. */
function unitizingInput(sources: readonly ComparisonSource[], codeIds: readonly number[]): { perCode: Continuum[][]; background: SortedLengths } {
  const index = new Map(codeIds.map((code, i) => [code, i]));
  const perCode: Continuum[][] = codeIds.map(() => []);
  for (const s of sources) for (const [code, coders] of s.codes) perCode[index.get(code) as number]?.push({ length: s.extent[1] as number, coders });
  return { perCode, background: sortedLengths(sources.map((s) => (s.extent[1] as number) - (s.extent[0] as number))) };
}

/** The unitizing alpha of every code (as compareCoders computes it when its bootstrap budget leaves the unitizing interval out); how many are defined. */
function unitizingOnly(input: ReturnType<typeof unitizingInput>): number {
  let defined = 0;
  for (const cs of input.perCode) if (unitizingAlpha(cs, input.background).alpha !== null) defined++;
  return defined;
}

/** Draws of the unitizing bootstrap timed (one code over every source): enough for a per-draw cost. */
const UNITIZING_DRAWS = 20;

/**
 * One unitizing bootstrap draw of the code used on most sources, resampling every source (the interval compareCoders
 * leaves out when draws x work exceeds its budget, as at the full size): milliseconds per draw.
 */
function unitizingDraw(sources: readonly ComparisonSource[], codeIds: readonly number[]): number {
  const uses = new Map<number, number>();
  for (const s of sources) for (const code of s.codes.keys()) uses.set(code, (uses.get(code) ?? 0) + 1);
  const code = [...codeIds].sort((a, b) => (uses.get(b) ?? 0) - (uses.get(a) ?? 0))[0] as number;
  const t = performance.now();
  const out = compareCoders(sources, [code], CODERS, { draws: UNITIZING_DRAWS, seed: 1, maxDisagreements: 0, unitizingBudget: Infinity });
  if (out.codes.get(code)?.measures.unitizing_alpha.value === null) throw new Error('no unitizing alpha');
  return (performance.now() - t) / UNITIZING_DRAWS;
}

/** Milliseconds of CPU (user + system) since `start`. */
function cpuMs(start: NodeJS.CpuUsage): number {
  const u = process.cpuUsage(start);
  return (u.user + u.system) / 1000;
}

async function run(): Promise<SectionResult> {
  const { ranges, lengths } = generate();
  const segments = ranges.source_id.length;
  const floors: number[] = [];
  const times: number[] = [];
  const cpus: number[] = [];
  const unitizingTimes: number[] = [];
  const unitizingCpus: number[] = [];
  let last: ReturnType<typeof comparison> | undefined;
  let unitizingDefined = 0;
  for (let i = 0; i < REPS; i++) {
    let t = performance.now();
    floor(ranges);
    floors.push(performance.now() - t);
    t = performance.now();
    const cpu = process.cpuUsage();
    last = comparison(ranges, lengths);
    times.push(performance.now() - t);
    cpus.push(cpuMs(cpu));
    const input = unitizingInput(last.sources, last.codeIds);
    t = performance.now();
    const cpu2 = process.cpuUsage();
    unitizingDefined = unitizingOnly(input);
    unitizingTimes.push(performance.now() - t);
    unitizingCpus.push(cpuMs(cpu2));
  }
  const t = stats(times);
  const c = stats(cpus);
  const f = stats(floors);
  const un = stats(unitizingTimes);
  const perDraw = last ? unitizingDraw(last.sources, last.codeIds) : 0;
  const uc = stats(unitizingCpus);
  const size = `${SOURCES.toLocaleString('en')} sources, ${segments.toLocaleString('en')} segments, ${CODERS} coders, ${CODES} codes, ${DRAWS} draws`;
  const error = last && last.intervals === 0 ? 'no code got a bootstrap interval' : undefined;
  return {
    title: 'Coder comparison (agreement statistics with bootstrap intervals)',
    body: [
      machineLine(),
      '',
      table(
        ['what', 'min ms', 'median ms', 'p90 ms', 'runs'],
        [
          [`compare ${size}`, ms(t.min), ms(t.p50), ms(t.p90), String(REPS)],
          ['  the same, CPU time (user + system)', ms(c.min), ms(c.p50), ms(c.p90), String(REPS)],
          [`unitizing alpha alone, ${codesOf(last)} codes (point estimates)`, ms(un.min), ms(un.p50), ms(un.p90), String(REPS)],
          ['  the same, CPU time (user + system)', ms(uc.min), ms(uc.p50), ms(uc.p90), String(REPS)],
          ['floor: one pass summing coded length per code and coder', ms(f.min), ms(f.p50), ms(f.p90), String(REPS)],
        ],
      ),
      '',
      `overall Fleiss' kappa ${last?.fleiss?.toFixed(4) ?? 'null'}; codes with intervals ${last?.intervals ?? 0} of ${CODES}; codes with a unitizing alpha ${unitizingDefined}`,
      `unitizing bootstrap (left out at this size by compareCoders' budget): ${ms(perDraw)} ms per draw for one code over all ${SOURCES.toLocaleString('en')} sources ` +
        `(${UNITIZING_DRAWS} draws timed; ${DRAWS} draws x ${codesOf(last)} codes would take about ${((perDraw * DRAWS * codesOf(last)) / 1000).toFixed(0)} s)`,
    ],
    figures: [
      {
        name: `generate_coder_comparison's statistics (${size})`,
        value: t.p50,
        unit: 'ms',
        goal: GOAL_MS,
        goalSource: 'issue 16',
        floor: { label: 'one pass over the ranges', value: f.p50 },
        atGoalSize: FULL,
      },
      {
        name: `the unitizing alpha alone (${size})`,
        value: un.p50,
        unit: 'ms',
        atGoalSize: FULL,
      },
    ],
    ...(error ? { error } : {}),
  };
}

sectionMain(run);
