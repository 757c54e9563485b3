/**
 * Synthetic QDA projects for the bench: text sources of Zipf-distributed pseudo-words (5-20 KB, about
 * 12.5 KB on average, like the anchors in shared/notes/perf-anchors.md), a codebook, and segments whose
 * text is the coded range of their source. Written straight through ProjectStore (same schema, triggers
 * and FTS indexes, same journal and checkpoint path as the app), in large transactions, until the
 * database reaches the target size; then checkpointed and closed.
 *
 * Generated files are cached under bench/.data/ keyed by the spec and a hash of the migrations, so
 * reruns skip generation and a schema change regenerates. Callers get a private copy
 * ({@link copyProject}) because opening a project rewrites it on close.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ProjectStore, journalPath } from '../../src/store/projectStore';
import { nameKey } from '../../src/domain/rules';
import { MIGRATIONS } from '../../src/store/migrations';
export { mulberry32 } from '../../src/core/random';
import { mulberry32 } from '../../src/core/random';

export interface ProjectSpec {
  /** short label used in the cache file name */
  label: string;
  /** sources are added until the database image reaches this many bytes */
  targetBytes: number;
  codes: number;
  segmentsPerSource: number;
  /** source text length range in characters (ASCII, so also code points and bytes) */
  minText: number;
  maxText: number;
  /** segment length range in characters */
  minSeg: number;
  maxSeg: number;
  seed: number;
}

export interface GeneratedProject {
  file: string;
  spec: ProjectSpec;
  bytes: number;
  sources: number;
  segments: number;
  /** generation time in ms; 0 when the file came from the cache */
  generatedMs: number;
  cached: boolean;
}

/** Bump when the generator's output changes, so stale cache files are not reused. */
const GENERATOR_VERSION = 2;

/** The spec of a project of `targetBytes` with `codes` codes. */
export function specForSize(label: string, targetBytes: number, codes: number, seed: number): ProjectSpec {
  return { label, targetBytes, codes, segmentsPerSource: 10, minText: 5_000, maxText: 20_000, minSeg: 50, maxSeg: 400, seed };
}

/** A short hash of the schema (every migration's version and SQL). */
export function schemaHash(): string {
  return createHash('sha1')
    .update(MIGRATIONS.map((m) => `${m.version}\n${m.sql}`).join('\n--\n'))
    .digest('hex')
    .slice(0, 8);
}

export function cacheFileOf(dir: string, spec: ProjectSpec): string {
  const s = spec;
  const mbTarget = (s.targetBytes / 1e6).toFixed(1).replace(/\.0$/, '');
  return path.join(
    dir,
    `${s.label}-${mbTarget}MB-gen${GENERATOR_VERSION}-schema_${schemaHash()}-c${s.codes}-g${s.segmentsPerSource}-t${s.minText}_${s.maxText}-seed${s.seed}.qda`,
  );
}

/** The cached project for `spec` under `dir`, generating it first when missing. */
export async function ensureProject(dir: string, spec: ProjectSpec): Promise<GeneratedProject> {
  fs.mkdirSync(dir, { recursive: true });
  const file = cacheFileOf(dir, spec);
  const infoFile = `${file}.json`;
  if (fs.existsSync(file) && fs.existsSync(infoFile)) {
    const info = JSON.parse(fs.readFileSync(infoFile, 'utf8')) as { sources: number; segments: number; generatedMs: number };
    return { file, spec, bytes: fs.statSync(file).size, sources: info.sources, segments: info.segments, generatedMs: info.generatedMs, cached: true };
  }
  // Stale cache files of this label and size (older generator or schema) would only fill the disk.
  const base = path.basename(file);
  const sameSize = base.slice(0, base.indexOf('-gen') + 1);
  for (const f of fs.readdirSync(dir)) if (f.startsWith(sameSize) && !f.startsWith(base)) fs.rmSync(path.join(dir, f), { recursive: true, force: true });
  const building = file.replace(/\.qda$/, '.building.qda');
  for (const f of [building, journalPath(building), `${building}.lock`]) fs.rmSync(f, { force: true });
  const t0 = performance.now();
  const counts = await generate(building, spec);
  const generatedMs = performance.now() - t0;
  fs.renameSync(building, file);
  fs.rmSync(journalPath(building), { force: true }); // empty after the closing checkpoint
  fs.writeFileSync(infoFile, JSON.stringify({ ...counts, generatedMs }));
  return { file, spec, bytes: fs.statSync(file).size, ...counts, generatedMs, cached: false };
}

/** Copies a cached project to `dest` (the .qda only; the copy starts with an empty journal). */
export function copyProject(src: string, dest: string): void {
  fs.rmSync(journalPath(dest), { force: true });
  fs.copyFileSync(src, dest);
}

async function generate(file: string, spec: ProjectSpec): Promise<{ sources: number; segments: number }> {
  const rnd = mulberry32(spec.seed);
  const words = vocabulary(rnd, 6000);
  const zipf = zipfTable(words.length, 1 << 16);
  const pick = () => words[zipf[(rnd() * zipf.length) | 0] as number] as string;
  const between = (lo: number, hi: number) => lo + Math.floor(rnd() * (hi - lo + 1));

  const text = (len: number): string => {
    const parts: string[] = [];
    let n = 0;
    let inSentence = 0;
    while (n < len) {
      let w = pick();
      if (inSentence === 0) w = w.charAt(0).toUpperCase() + w.slice(1);
      parts.push(w);
      n += w.length + 1;
      if (++inSentence >= between(6, 22)) {
        parts.push(rnd() < 0.15 ? '.\n\n' : '. ');
        n += 2;
        inSentence = 0;
      } else parts.push(' ');
    }
    return parts.join('').slice(0, len);
  };

  const store = await ProjectStore.open(file, { create: true, checkpointIdleMs: 0, journalMaxBytes: Number.MAX_SAFE_INTEGER });
  try {
    const now = '2026-01-01T00:00:00.000Z';
    const codeIds: number[] = [];
    store.transaction(() => {
      for (let i = 0; i < spec.codes; i++) {
        const name = `${pick()} ${pick()} ${String(i + 1).padStart(3, '0')}`;
        const color = `#${Math.floor(rnd() * 0xffffff)
          .toString(16)
          .padStart(6, '0')
          .toUpperCase()}`;
        const memo = rnd() < 0.5 ? text(between(40, 300)) : null;
        codeIds.push(
          store.run('INSERT INTO codes(name, name_key, color, memo, category_id, owner, session_id, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?)', [
            name,
            nameKey(name),
            color,
            memo,
            null,
            'bench',
            'bench',
            now,
            now,
          ]).lastId,
        );
      }
    });
    // Add sources in transactions until the database image reaches the target size. About 60 checks
    // over the run (at least 5 sources per transaction) keep the overshoot near 2%.
    const dbBytes = () => Number(store.get<{ n: number }>('SELECT page_count * page_size AS n FROM pragma_page_count(), pragma_page_size()')?.n ?? 0);
    const batch = Math.max(5, Math.min(200, Math.round(spec.targetBytes / 25_000 / 60)));
    let sources = 0;
    while (dbBytes() < spec.targetBytes) {
      store.transaction(() => {
        for (let j = 0; j < batch; j++) {
          const i = sources++;
          const len = between(spec.minText, spec.maxText);
          const content = text(len);
          const sourceId = store.run(
            'INSERT INTO sources(name, type, content, content_length, memo, origin, mime, size_bytes, owner, session_id, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)',
            [
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
            ],
          ).lastId;
          for (let k = 0; k < spec.segmentsPerSource; k++) {
            const segLen = Math.min(between(spec.minSeg, spec.maxSeg), content.length - 1);
            const start = between(0, content.length - segLen);
            store.run(
              'INSERT INTO segments(code_id, source_id, start_pos, end_pos, text, memo, importance, owner, session_id, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)',
              [
                codeIds[between(0, codeIds.length - 1)] as number,
                sourceId,
                start,
                start + segLen,
                content.slice(start, start + segLen),
                null,
                0,
                'bench',
                'bench',
                now,
                now,
              ],
            );
          }
        }
      });
    }
    store.checkpoint();
    return { sources, segments: sources * spec.segmentsPerSource };
  } finally {
    await store.close();
  }
}

/** `n` distinct pronounceable pseudo-words of 2-10 letters. */
function vocabulary(rnd: () => number, n: number): string[] {
  const cons = 'bcdfghjklmnprstvwz';
  const vow = 'aeiou';
  const out = new Set<string>();
  while (out.size < n) {
    const syl = 1 + Math.floor(rnd() * 4);
    let w = '';
    for (let i = 0; i < syl; i++) w += cons[Math.floor(rnd() * cons.length)] + (vow[Math.floor(rnd() * vow.length)] as string);
    if (rnd() < 0.3) w += cons[Math.floor(rnd() * cons.length)];
    out.add(w);
  }
  return [...out];
}

/** A lookup table of word ranks drawn from Zipf(s=1): picking a uniform entry gives a Zipf-distributed rank. */
function zipfTable(words: number, size: number): Uint16Array {
  const weights = Array.from({ length: words }, (_, r) => 1 / (r + 1));
  const total = weights.reduce((a, b) => a + b, 0);
  const table = new Uint16Array(size);
  let pos = 0;
  let acc = 0;
  for (let r = 0; r < words; r++) {
    acc += (weights[r] as number) / total;
    const end = Math.min(size, Math.round(acc * size));
    while (pos < end) table[pos++] = r;
  }
  while (pos < size) table[pos++] = words - 1;
  return table;
}
