/**
 * Report benchmark: section 3 of `npm run bench`, or alone with `npx tsx bench/reports.ts`. BENCH_FULL=1
 * runs the issue's size (10,000 sources / 1,000,000 segments / 2,000 codes, a 1.2 GB project); without it
 * 500 sources / 50,000 segments / 500 codes. `--generate-only` builds the cached project and stops.
 *
 * The project is the large one of shared/notes/perf-anchors.md section 1 ("10k sources / 1M segments"):
 * text sources of 5-20 KB pseudo-words, and 100 coded segments per source of 50-1000 characters at uniform
 * positions with uniformly chosen codes (which produces natural overlaps), owned by four coders. It is
 * generated with sql.js directly (the app's migrations, triggers and FTS4 indexes; prepared statements in
 * transactions of 200 sources; then one export), which takes a few minutes at full size where writing it
 * through ProjectStore's journal took 13; and cached in bench/.data/ (gitignored) with a sidecar naming the
 * migrations it was made with, so a changed migration regenerates it. Each run works on a private copy.
 *
 * Measures, through the one tool pipeline (validation, trust-free headless pipeline, one transaction that
 * stores the report row and its two events, journal fsync), generate_frequency_report and
 * generate_cooccurrence_report on the whole project, against floors on the same database in the same run:
 * - frequency: `SELECT code_id, count(*) FROM segments GROUP BY code_id` (covered by the segments_code
 *   index; the least any frequency report must pay);
 * - co-occurrence: reading every segment's source, code and range into JavaScript (the least any
 *   co-occurrence computed outside SQL must pay); and, once, the plain SQL self-join grouped by code pair
 *   (the anchors' 25.9 s "full co-occurrence matrix"), which also cross-checks the pair count.
 * Goal (issue 5): each report under 1 s.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Caller } from '../src/agent/pipeline';
import { createPipeline, headlessHost, openProjectHandle, type ProjectHandle } from '../src/cli/compose';
import { silentLogger } from '../src/core/log';
import { nameKey } from '../src/domain/rules';
import { MIGRATIONS } from '../src/store/migrations';
import { journalPath } from '../src/store/projectStore';
import { migratedDatabase } from './lib/schema';
import { copyProject, mulberry32 } from './lib/generate';
import { FULL, QUICK, machineLine, sectionMain, type Figure, type SectionResult } from './lib/section';
import { mb, ms, stats, table } from './lib/stats';

const SOURCES = FULL ? 10_000 : 500;
const CODES = FULL ? 2_000 : 500;
const SEGMENTS_PER_SOURCE = 100;
const MIN_TEXT = 5_000;
const MAX_TEXT = 20_000;
const MIN_SEG = 50;
const MAX_SEG = 1_000;
const CODERS = ['ana', 'ben', 'chen', 'dara'];
const SOURCES_PER_TXN = 200;
const REPS = FULL ? (QUICK ? 3 : 5) : 7;
const GOAL_MS = 1_000;
const DATA = path.join(__dirname, '.data');
const caller: Caller = { session_id: 'bench', client_type: 'CUSTOM', client_name: 'bench', user: 'bench' };
const T0 = performance.now();

function log(msg: string): void {
  process.stderr.write(`[reports +${((performance.now() - T0) / 1000).toFixed(1)}s] ${msg}\n`);
}

/** Bump when the generator's output (the rows) changes. */
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

/**
 * Writes the project with sql.js (see the file's docstring): the same rows, in the same order and with the
 * same ids, as generation version 1 wrote through ProjectStore.
 */
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

  const now = '2026-01-01T00:00:00.000Z';
  // the schema exactly as ProjectStore.open creates it: every migration in order, recorded
  const db = await migratedDatabase(now);
  try {
    const insCode = db.prepare(
      'INSERT INTO codes(name, name_key, color, memo, category_id, owner, session_id, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?)',
    );
    const insSource = db.prepare(
      'INSERT INTO sources(name, type, content, content_length, memo, origin, mime, size_bytes, owner, session_id, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)',
    );
    const insSegment = db.prepare(
      'INSERT INTO segments(code_id, source_id, start_pos, end_pos, text, memo, importance, owner, session_id, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)',
    );
    // a fresh AUTOINCREMENT table numbers rows 1, 2, ... (checked below)
    db.exec('BEGIN');
    for (let i = 0; i < CODES; i++) {
      const name = `${words[between(0, 999)]} ${String(i + 1).padStart(4, '0')}`;
      insCode.run([name, nameKey(name), '#4E79A7', null, null, 'bench', 'bench', now, now]);
    }
    db.exec('COMMIT');
    const t0 = performance.now();
    for (let first = 0; first < SOURCES; first += SOURCES_PER_TXN) {
      db.exec('BEGIN');
      for (let i = first; i < Math.min(SOURCES, first + SOURCES_PER_TXN); i++) {
        const content = text(between(MIN_TEXT, MAX_TEXT));
        const sourceId = i + 1;
        insSource.run([
          `interview-${String(i + 1).padStart(5, '0')}.txt`,
          'text',
          content,
          content.length,
          null,
          'bench',
          'text/plain',
          content.length,
          'bench',
          'bench',
          now,
          now,
        ]);
        for (let k = 0; k < SEGMENTS_PER_SOURCE; k++) {
          const len = Math.min(between(MIN_SEG, MAX_SEG), content.length - 1);
          const start = between(0, content.length - len);
          insSegment.run([
            between(1, CODES),
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
      db.exec('COMMIT');
      const done = Math.min(SOURCES, first + SOURCES_PER_TXN);
      const perSource = (performance.now() - t0) / done;
      log(
        `generated ${done} of ${SOURCES} sources (${done * SEGMENTS_PER_SOURCE} segments); about ${((perSource * (SOURCES - done)) / 1000).toFixed(0)} s to go`,
      );
    }
    insCode.free();
    insSource.free();
    insSegment.free();
    const check = db.exec('SELECT (SELECT max(id) FROM codes), (SELECT max(id) FROM sources), (SELECT count(*) FROM segments)')[0]?.values[0];
    if (!check || check[0] !== CODES || check[1] !== SOURCES || check[2] !== SOURCES * SEGMENTS_PER_SOURCE)
      throw new Error(`generated ids are not 1..n: ${JSON.stringify(check)}`);
    log('writing the database file');
    fs.writeFileSync(file, db.export());
  } finally {
    db.close();
  }
}

/** The cached project, generated first when missing. */
async function ensureProject(): Promise<{ file: string; generatedMs?: number }> {
  fs.mkdirSync(DATA, { recursive: true });
  const { file, fresh } = cacheFile();
  if (!fresh) return { file };
  log(`generating ${SOURCES} sources, ${SOURCES * SEGMENTS_PER_SOURCE} segments, ${CODES} codes into ${path.relative(process.cwd(), file)} (once; cached)`);
  const building = file.replace(/\.qda$/, '.building.qda');
  const t = performance.now();
  await generate(building);
  fs.renameSync(building, file);
  const generatedMs = performance.now() - t;
  fs.writeFileSync(`${file}.json`, JSON.stringify({ migrations: migrationHashes(), generated_ms: Math.round(generatedMs) }));
  log(`generated ${mb(fs.statSync(file).size)} in ${(generatedMs / 1000).toFixed(0)} s`);
  return { file, generatedMs };
}

async function run(): Promise<SectionResult> {
  const project = await ensureProject();
  const size = `${SOURCES.toLocaleString('en')} sources / ${(SOURCES * SEGMENTS_PER_SOURCE).toLocaleString('en')} segments / ${CODES.toLocaleString('en')} codes`;
  const title = `3. Reports on ${size}`;
  if (process.argv.includes('--generate-only')) return { title, body: [`generated ${project.file}`], figures: [] };

  // a private copy: opening migrates it to the current schema, and the reports written below change it
  const work = path.join(DATA, `reports-run-${process.pid}.qda`);
  log(`copying ${mb(fs.statSync(project.file).size)} to a private copy`);
  copyProject(project.file, work);
  const t0 = performance.now();
  // The journal is never checkpointed during the run (a checkpoint writes the whole image, about 2 ms per
  // MB, and would land inside whichever call crossed the threshold); its growth per call is shown.
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
    const counts = h.store.get<{ s: number; g: number; c: number }>(
      'SELECT (SELECT count(*) FROM sources) AS s, (SELECT count(*) FROM segments) AS g, (SELECT count(*) FROM codes) AS c',
    )!;
    log(`opened ${mb(fs.statSync(work).size)} project (${counts.s} sources, ${counts.g} segments, ${counts.c} codes) in ${ms(openMs)} ms`);

    /** Runs `fn` once; wall ms and this process's CPU ms. */
    const time = async (fn: () => unknown): Promise<{ wall: number; cpu: number }> => {
      const c0 = process.cpuUsage();
      const t = performance.now();
      await fn();
      const wall = performance.now() - t;
      const c = process.cpuUsage(c0);
      return { wall, cpu: (c.user + c.system) / 1000 };
    };
    type Series = { wall: number[]; cpu: number[] };
    const series = (): Series => ({ wall: [], cpu: [] });
    const add = (s: Series, x: { wall: number; cpu: number }) => {
      s.wall.push(x.wall);
      s.cpu.push(x.cpu);
    };
    const med = (xs: number[]) => stats(xs).p50;

    // --- frequency: floor and tool alternate, so load from other processes hits both alike
    log(`frequency: warm-up, then ${REPS} x (floor, tool)`);
    const freqFloorSql = 'SELECT code_id, count(*) AS n FROM segments GROUP BY code_id';
    await call('generate_frequency_report', {}); // warm-up (statement cache, page cache)
    const journal0 = h.store.journalSize;
    const freq = await call('generate_frequency_report', {});
    const freqJournal = h.store.journalSize - journal0;
    const fFloor = series();
    const fRead = series();
    const fTool = series();
    for (let i = 0; i < REPS; i++) {
      add(fFloor, await time(() => h.store.all(freqFloorSql)));
      add(fRead, await time(() => h.repo.reportCodeSources({})));
      add(fTool, await time(() => call('generate_frequency_report', {})));
    }

    // --- co-occurrence
    log(`co-occurrence: warm-up, then ${REPS} x (floor, tool)`);
    await call('generate_cooccurrence_report', {}); // warm-up (its first write also grows the in-memory file)
    const journal1 = h.store.journalSize;
    const co = await call('generate_cooccurrence_report', {});
    const coJournal = h.store.journalSize - journal1;
    const cRead = series();
    const cTool = series();
    for (let i = 0; i < REPS; i++) {
      add(cRead, await time(() => h.repo.reportCodedRanges({})));
      add(cTool, await time(() => call('generate_cooccurrence_report', {})));
    }
    // the plain SQL self-join (each unordered overlapping pair once: b starts inside a, ties by id), run once
    log(`running the SQL self-join co-occurrence once${FULL ? ' (the anchors measured 25.9 s for theirs)' : ''}`);
    const joinSql = `SELECT a.code_id AS x, b.code_id AS y, count(*) AS n FROM segments a JOIN segments b
      ON b.source_id = a.source_id AND b.start_pos >= a.start_pos AND b.start_pos < a.end_pos AND (b.start_pos > a.start_pos OR b.id > a.id)
      GROUP BY x, y`;
    let joinRows: { x: number; y: number; n: number }[] = [];
    const join = await time(() => (joinRows = h.store.all<{ x: number; y: number; n: number }>(joinSql)));
    const joinPairs = joinRows.reduce((acc, r) => acc + r.n, 0);
    const toolPairs = (co.result.total_overlaps as number) + (co.result.same_code_overlaps as number);

    // --- for information: a coder comparison of two of the four coders
    const cmp = await time(() => call('generate_coder_comparison', { coder_ids: [CODERS[0], CODERS[1]] }));

    const row = (label: string, x: Series) => [label, `${ms(med(x.wall))} (${ms(stats(x.wall).min)})`, ms(med(x.cpu))];
    const once = (label: string, x: { wall: number; cpu: number }) => [label, ms(x.wall), ms(x.cpu)];
    const body = [
      `${counts.s} sources, ${counts.g} segments, ${counts.c} codes (${mb(fs.statSync(work).size)}, opened in ${ms(openMs)} ms${project.generatedMs ? `; generated this run in ${(project.generatedMs / 1000).toFixed(0)} s` : ', cached'}); median (min) of ${REPS} runs, wall ms; CPU ms of this process per run`,
      '',
      table(
        ['measurement', 'wall ms, median (min)', 'CPU ms, median'],
        [
          row('FLOOR frequency: SELECT code_id, count(*) GROUP BY code_id (index only)', fFloor),
          row("(info) the frequency report's read: groups by code and coder, every segment's source (reportCodeSources)", fRead),
          row('generate_frequency_report through the pipeline', fTool),
          row("FLOOR co-occurrence: reading every segment's source, code and range (reportCodedRanges)", cRead),
          row('generate_cooccurrence_report through the pipeline', cTool),
          once('(info) co-occurrence as a plain SQL self-join grouped by code pair (once)', join),
          once(`(info) generate_coder_comparison ${CODERS[0]} / ${CODERS[1]} (once)`, cmp),
        ],
      ),
      '',
      `frequency: ${freq.result.totals.codes_used} codes used, ${freq.result.totals.segments} segments; stored report ${mb(freqJournal)} of journal per call.`,
      `co-occurrence: ${co.result.codes.length} x ${co.result.codes.length} matrix, ${co.result.total_overlaps} overlapping pairs of different codes + ${co.result.same_code_overlaps} of the same code; stored report ${mb(coJournal)} of journal per call.`,
      `cross-check: the SQL self-join counts ${joinPairs} overlapping pairs, the report ${toolPairs} (${joinPairs === toolPairs ? 'equal' : 'DIFFERENT'}).`,
      machineLine(),
    ];
    const figures: Figure[] = [
      {
        name: `generate_frequency_report, ${size}`,
        value: med(fTool.wall),
        unit: 'ms',
        goal: GOAL_MS,
        goalSource: 'issue 5',
        floor: { label: 'SELECT code_id, count(*) GROUP BY code_id', value: med(fFloor.wall) },
        atGoalSize: FULL,
      },
      {
        name: `generate_cooccurrence_report, ${size}`,
        value: med(cTool.wall),
        unit: 'ms',
        goal: GOAL_MS,
        goalSource: 'issue 5',
        floor: { label: "reading every segment's source, code and range", value: med(cRead.wall) },
        atGoalSize: FULL,
      },
    ];
    return {
      title,
      body,
      figures,
      error: joinPairs === toolPairs ? undefined : `co-occurrence cross-check failed: self-join ${joinPairs} pairs, report ${toolPairs}`,
    };
  } finally {
    log('closing (checkpoints the private copy) and removing it');
    await h.close();
    for (const f of [work, journalPath(work), `${work}.lock`]) fs.rmSync(f, { force: true });
  }
}

if (require.main === module) sectionMain(run);
