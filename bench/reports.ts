/**
 * Report benchmark (`npx tsx bench/reports.ts`; `BENCH_QUICK=1` for a small, fast run; `--generate-only`
 * builds the cached project and stops).
 *
 * The project is the large one of shared/notes/perf-anchors.md section 1 ("10k sources / 1M segments"):
 * 10,000 text sources of 5-20 KB pseudo-words, 2,000 codes, and 100 coded segments per source of 50-1000
 * characters at uniform positions with uniformly chosen codes (which produces natural overlaps), owned by
 * four coders. With BENCH_QUICK=1: 500 sources, 500 codes. It is written through {@link ProjectStore}
 * transactions of 200 sources (the app's schema, triggers and FTS4 indexes, journal and checkpoint), like
 * bench/lib/generate.ts, and cached in bench/.data/ (gitignored) under a name with the schema hash, so a
 * new migration regenerates it. The run works on a private copy.
 *
 * Measures, through the one tool pipeline (validation, trust-free headless pipeline, one transaction that
 * stores the report row and its two events, journal fsync), generate_frequency_report and
 * generate_cooccurrence_report on the whole project, against floors of raw SQL on the same database:
 * - frequency: `SELECT code_id, count(*) FROM segments GROUP BY code_id` (covered by the segments_code
 *   index; the least any frequency report must pay), and the full aggregate with distinct sources and
 *   coders in SQL;
 * - co-occurrence: the plain SQL self-join of segments by source with half-open overlap, grouped by code
 *   pair (the anchors' 25.9 s "full co-occurrence matrix"), run once.
 * Goal (issue 5): each report under 1 s.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Caller } from '../src/agent/pipeline';
import { createPipeline, headlessHost, openProjectHandle, type ProjectHandle } from '../src/cli/compose';
import { silentLogger } from '../src/core/log';
import { nameKey } from '../src/domain/rules';
import { MIGRATIONS } from '../src/store/migrations';
import { journalPath, ProjectStore } from '../src/store/projectStore';
import { copyProject, mulberry32 } from './lib/generate';
import { mb, ms, stats, table } from './lib/stats';

const QUICK = process.env.BENCH_QUICK === '1';
const SOURCES = QUICK ? 500 : 10_000;
const CODES = QUICK ? 500 : 2_000;
const SEGMENTS_PER_SOURCE = 100;
const MIN_TEXT = 5_000;
const MAX_TEXT = 20_000;
const MIN_SEG = 50;
const MAX_SEG = 1_000;
const CODERS = ['ana', 'ben', 'chen', 'dara'];
const SOURCES_PER_TXN = 200;
const REPS = QUICK ? 7 : 5;
const GOAL_MS = 1_000;
const DATA = path.join(__dirname, '.data');
const caller: Caller = { session_id: 'bench', client_type: 'CUSTOM', client_name: 'bench', user: 'bench' };
const T0 = performance.now();

function log(msg: string): void {
  process.stderr.write(`[reports bench +${((performance.now() - T0) / 1000).toFixed(1)}s] ${msg}\n`);
}

/** Bump when the generator's output changes. */
const GENERATOR_VERSION = 1;

/** Each migration's version and a hash of its SQL. */
function migrationHashes(): Record<string, string> {
  return Object.fromEntries(MIGRATIONS.map((m) => [String(m.version), createHash('sha1').update(m.sql).digest('hex').slice(0, 12)]));
}

/**
 * The cached project of this size: `reports-<size>-gen<N>-<k>.qda` with a sidecar `.json` naming the
 * migrations it was generated with. A cached file is reused while every one of those migrations is
 * unchanged (migrations added since are applied when the copy is opened, as for any user's project);
 * otherwise the next free name is generated.
 */
function cacheFile(): { file: string; fresh: boolean } {
  const base = `reports-${SOURCES}s-${CODES}c-${SEGMENTS_PER_SOURCE}g-seg${MIN_SEG}_${MAX_SEG}-gen${GENERATOR_VERSION}`;
  const now = migrationHashes();
  let free: string | undefined;
  for (let k = 1; k < 100; k++) {
    const file = path.join(DATA, `${base}-${k}.qda`);
    if (!fs.existsSync(file) || !fs.existsSync(`${file}.json`)) {
      free ??= file;
      continue;
    }
    const had = (JSON.parse(fs.readFileSync(`${file}.json`, 'utf8')) as { migrations: Record<string, string> }).migrations;
    if (Object.entries(had).every(([v, h]) => now[v] === h)) return { file, fresh: false };
  }
  return { file: free ?? path.join(DATA, `${base}-new.qda`), fresh: true };
}

/** Writes the project through ProjectStore transactions (see the file's docstring). */
async function generate(file: string): Promise<void> {
  const rnd = mulberry32(7);
  const between = (lo: number, hi: number) => lo + Math.floor(rnd() * (hi - lo + 1));
  const cons = 'bcdfghjklmnprstvwz';
  const vow = 'aeiou';
  const words: string[] = [];
  const seen = new Set<string>();
  while (words.length < 6000) {
    let w = '';
    for (let i = between(1, 4); i > 0; i--) w += (cons[between(0, cons.length - 1)] as string) + (vow[between(0, vow.length - 1)] as string);
    if (!seen.has(w)) {
      seen.add(w);
      words.push(w);
    }
  }
  // Zipf(1) over word ranks through a lookup table
  const zipf = new Uint16Array(1 << 16);
  const total = words.reduce((a, _w, r) => a + 1 / (r + 1), 0);
  for (let r = 0, pos = 0, acc = 0; r < words.length; r++) {
    acc += 1 / (r + 1) / total;
    const end = r === words.length - 1 ? zipf.length : Math.min(zipf.length, Math.round(acc * zipf.length));
    while (pos < end) zipf[pos++] = r;
  }
  const text = (len: number): string => {
    const parts: string[] = [];
    let n = 0;
    while (n < len) {
      const w = words[zipf[(rnd() * zipf.length) | 0] as number] as string;
      parts.push(w);
      n += w.length + 1;
    }
    return parts.join(' ').slice(0, len);
  };

  for (const f of [file, journalPath(file), `${file}.lock`]) fs.rmSync(f, { force: true });
  const store = await ProjectStore.open(file, { create: true, checkpointIdleMs: 0, journalMaxBytes: Number.MAX_SAFE_INTEGER });
  try {
    const now = '2026-01-01T00:00:00.000Z';
    const codeIds: number[] = [];
    store.transaction(() => {
      for (let i = 0; i < CODES; i++) {
        const name = `${words[between(0, 999)]} ${String(i + 1).padStart(4, '0')}`;
        codeIds.push(
          store.run('INSERT INTO codes(name, name_key, color, memo, category_id, owner, session_id, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?)', [
            name,
            nameKey(name),
            '#4E79A7',
            null,
            null,
            'bench',
            'bench',
            now,
            now,
          ]).lastId,
        );
      }
    });
    for (let first = 0; first < SOURCES; first += SOURCES_PER_TXN) {
      store.transaction(() => {
        for (let i = first; i < Math.min(SOURCES, first + SOURCES_PER_TXN); i++) {
          const content = text(between(MIN_TEXT, MAX_TEXT));
          const sourceId = store.run(
            'INSERT INTO sources(name, type, content, content_length, memo, origin, mime, size_bytes, owner, session_id, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)',
            [`interview-${String(i + 1).padStart(5, '0')}.txt`, 'text', content, content.length, null, 'bench', 'text/plain', content.length, 'bench', 'bench', now, now],
          ).lastId;
          for (let k = 0; k < SEGMENTS_PER_SOURCE; k++) {
            const len = Math.min(between(MIN_SEG, MAX_SEG), content.length - 1);
            const start = between(0, content.length - len);
            store.run('INSERT INTO segments(code_id, source_id, start_pos, end_pos, text, memo, importance, owner, session_id, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)', [
              codeIds[between(0, codeIds.length - 1)] as number,
              sourceId,
              start,
              start + len,
              content.slice(start, start + len),
              null,
              0,
              CODERS[between(0, CODERS.length - 1)] as string,
              'bench',
              now,
              now,
            ]);
          }
        }
      });
      log(`generated ${Math.min(SOURCES, first + SOURCES_PER_TXN)} of ${SOURCES} sources`);
    }
    store.checkpoint();
  } finally {
    await store.close();
  }
  fs.rmSync(journalPath(file), { force: true }); // empty after the closing checkpoint
}

async function main(): Promise<void> {
  fs.mkdirSync(DATA, { recursive: true });
  const { file, fresh } = cacheFile();
  if (fresh) {
    log(`generating ${SOURCES} sources, ${SOURCES * SEGMENTS_PER_SOURCE} segments, ${CODES} codes into ${path.relative(process.cwd(), file)} (once; cached)`);
    const building = file.replace(/\.qda$/, '.building.qda');
    const t = performance.now();
    await generate(building);
    fs.renameSync(building, file);
    fs.writeFileSync(`${file}.json`, JSON.stringify({ migrations: migrationHashes(), generated_ms: Math.round(performance.now() - t) }));
    log(`generated ${mb(fs.statSync(file).size)}`);
  }
  if (process.argv.includes('--generate-only')) return;

  // a private copy: opening migrates it to the current schema, and the reports written below change it
  const work = path.join(DATA, `reports-run-${process.pid}.qda`);
  copyProject(file, work);
  const t0 = performance.now();
  // The journal is never checkpointed during the run (a checkpoint writes the whole ~1.2 GB image, about
  // 2 ms per MB, and would land inside whichever call crossed the threshold); its growth per call is shown.
  const h: ProjectHandle = await openProjectHandle(work, { checkpointIdleMs: 0, journalMaxBytes: Number.MAX_SAFE_INTEGER });
  const openMs = performance.now() - t0;
  try {
    const pipeline = createPipeline({ project: () => h, host: headlessHost, logger: silentLogger });
    const call = async (tool: string, args: unknown) => {
      const out = await pipeline.invoke(tool, args, caller);
      if (!out.envelope.success) throw new Error(`${tool}: ${out.envelope.error_code} ${out.envelope.error}`);
      const d = out.envelope.data as { status: string; error?: string };
      if (d.status !== 'completed') throw new Error(`${tool}: job ${d.status}: ${d.error}`);
      return out.envelope.data as any;
    };
    const counts = h.store.get<{ s: number; g: number; c: number }>('SELECT (SELECT count(*) FROM sources) AS s, (SELECT count(*) FROM segments) AS g, (SELECT count(*) FROM codes) AS c')!;
    log(`opened ${mb(fs.statSync(work).size)} project (${counts.s} sources, ${counts.g} segments, ${counts.c} codes) in ${ms(openMs)} ms`);

    /** Runs `fn` `reps` times; wall ms per run and this process's CPU ms per run. */
    const time = async (reps: number, fn: () => unknown): Promise<{ wall: number[]; cpu: number }> => {
      const wall: number[] = [];
      const c0 = process.cpuUsage();
      for (let i = 0; i < reps; i++) {
        const t = performance.now();
        await fn();
        wall.push(performance.now() - t);
      }
      const c = process.cpuUsage(c0);
      return { wall, cpu: (c.user + c.system) / 1000 / reps };
    };
    const med = (xs: number[]) => stats(xs).p50;
    const lo = (xs: number[]) => stats(xs).min;

    // --- frequency
    const freqFloorSql = 'SELECT code_id, count(*) AS n FROM segments GROUP BY code_id';
    const freqSql = () => {
      h.repo.reportCodeCounts({});
      h.repo.reportCoderCounts({});
      h.repo.reportSourceCount({});
    };
    await call('generate_frequency_report', {}); // warm-up (statement cache, page cache)
    const journal0 = h.store.journalSize;
    const freq = await call('generate_frequency_report', {});
    const freqJournal = h.store.journalSize - journal0;
    const fFloor = { wall: [] as number[], cpu: 0 };
    const fSql = { wall: [] as number[], cpu: 0 };
    const fTool = { wall: [] as number[], cpu: 0 };
    for (let i = 0; i < REPS; i++) {
      // floor, SQL aggregates and tool alternate, so load from other processes hits all alike
      const a = await time(1, () => h.store.all(freqFloorSql));
      const b = await time(1, freqSql);
      const c = await time(1, () => call('generate_frequency_report', {}));
      fFloor.wall.push(...a.wall);
      fFloor.cpu += a.cpu / REPS;
      fSql.wall.push(...b.wall);
      fSql.cpu += b.cpu / REPS;
      fTool.wall.push(...c.wall);
      fTool.cpu += c.cpu / REPS;
    }

    // --- co-occurrence
    await call('generate_cooccurrence_report', {}); // warm-up
    const journal1 = h.store.journalSize;
    const co = await call('generate_cooccurrence_report', {});
    const coJournal = h.store.journalSize - journal1;
    const cRead = { wall: [] as number[], cpu: 0 };
    const cTool = { wall: [] as number[], cpu: 0 };
    for (let i = 0; i < REPS; i++) {
      const a = await time(1, () => h.repo.reportCodedRanges({}));
      const b = await time(1, () => call('generate_cooccurrence_report', {}));
      cRead.wall.push(...a.wall);
      cRead.cpu += a.cpu / REPS;
      cTool.wall.push(...b.wall);
      cTool.cpu += b.cpu / REPS;
    }
    // the plain SQL self-join (each unordered overlapping pair once: b starts inside a, ties by id), run once
    log('running the SQL self-join co-occurrence once (the anchors measured 25.9 s for theirs)');
    const joinSql = `SELECT a.code_id AS x, b.code_id AS y, count(*) AS n FROM segments a JOIN segments b
      ON b.source_id = a.source_id AND b.start_pos >= a.start_pos AND b.start_pos < a.end_pos AND (b.start_pos > a.start_pos OR b.id > a.id)
      GROUP BY x, y`;
    let joinRows: { x: number; y: number; n: number }[] = [];
    const join = await time(1, () => (joinRows = h.store.all<{ x: number; y: number; n: number }>(joinSql)));
    const joinPairs = joinRows.reduce((acc, r) => acc + r.n, 0);
    const toolPairs = (co.result.total_overlaps as number) + (co.result.same_code_overlaps as number);

    // --- for information: a coder comparison of two of the four coders
    const cmp = await time(1, () => call('generate_coder_comparison', { coder_ids: [CODERS[0], CODERS[1]] }));

    const row = (label: string, x: { wall: number[]; cpu: number }) => [label, `${ms(med(x.wall))} (${ms(lo(x.wall))})`, ms(x.cpu)];
    console.log(`\nreports on ${counts.s} sources, ${counts.g} segments, ${counts.c} codes (${mb(fs.statSync(work).size)}); median (min) of ${REPS} runs, wall ms; CPU ms of this process per run\n`);
    console.log(
      table(
        ['measurement', 'wall ms, median (min)', 'CPU ms'],
        [
          row('frequency floor: SELECT code_id, count(*) GROUP BY code_id (index only)', fFloor),
          row("frequency: the report's SQL aggregates (per code, per code and coder, distinct sources)", fSql),
          row('generate_frequency_report through the pipeline', fTool),
          row('co-occurrence: reading every segment in source order (reportCodedRanges)', cRead),
          row('generate_cooccurrence_report through the pipeline', cTool),
          row('co-occurrence floor: plain SQL self-join grouped by code pair (once)', join),
          row(`generate_coder_comparison ${CODERS[0]} / ${CODERS[1]} (once, for information)`, cmp),
        ],
      ),
    );
    console.log(`\nfrequency: ${freq.result.totals.codes_used} codes used, ${freq.result.totals.segments} segments; stored report ${mb(freqJournal)} of journal per call`);
    console.log(`co-occurrence: ${co.result.codes.length} x ${co.result.codes.length} matrix, ${co.result.total_overlaps} overlapping pairs of different codes + ${co.result.same_code_overlaps} of the same code; stored report ${mb(coJournal)} of journal per call`);
    console.log(`cross-check: the SQL self-join counts ${joinPairs} overlapping pairs, the report ${toolPairs} (${joinPairs === toolPairs ? 'equal' : 'DIFFERENT'})`);
    console.log(`\nmachine: ${os.cpus().length} x ${os.cpus()[0]?.model ?? '?'}, Node ${process.version}, load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}, ${new Date().toISOString()}`);
    for (const [name, x] of [
      ['generate_frequency_report', fTool],
      ['generate_cooccurrence_report', cTool],
    ] as const) {
      const m = med(x.wall);
      console.log(`${m < GOAL_MS ? 'PASS' : 'MISS'} ${name}: ${ms(m)} ms median wall (${ms(x.cpu)} ms CPU), goal < ${GOAL_MS} ms`);
    }
    if (joinPairs !== toolPairs) process.exitCode = 1;
  } finally {
    await h.close();
    for (const f of [work, journalPath(work), `${work}.lock`]) fs.rmSync(f, { force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
