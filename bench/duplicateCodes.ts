/**
 * detect_duplicate_codes on a 5,000-code codebook (issue 5: "stays fast for thousands of codes"): section 5
 * of `npm run bench`, or alone with `npx tsx bench/duplicateCodes.ts [N]` (default 5000, at every bench size).
 *
 * The codebook is generated deterministically: names of 1-4 words drawn from a 700-word vocabulary
 * (Zipf-like, so some words are in hundreds of names: the hard case for blocking), memos of 8-40 words for
 * two codes in three, and 5% planted near-duplicates (a plural, a reordering, an added stop word) of
 * earlier codes. It measures:
 * 1. the tool through the pipeline on a real project file (listing the codes from SQLite included), against
 *    the floor of listing the same codes (`repo.listCodes`, what the tool reads before comparing);
 * 2. the domain function `detectDuplicateCodes` (tokenise + stem + prefix-filtered join + verify), cold
 *    (empty stem cache) and warm (median of 5);
 * 3. for reference, the naive all-pairs comparison of the same token sets (which also checks the result).
 * Issue 5 sets no number; the goal line uses 1 s, the limit of an interactive call.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createPipeline, headlessHost, openProjectHandle } from '../src/cli/compose';
import { silentLogger } from '../src/core/log';
import type { CodeWithCounts } from '../src/domain/ports';
import { detectDuplicateCodes } from '../src/domain/duplicateCodes';
import { tokenize } from '../src/domain/ranking/stemmer';
import { dice, similarPairs, tokenSet, Vocabulary } from '../src/domain/ranking/tokenSets';
import { nameKey } from '../src/domain/rules';
import { machineLine, sectionMain, type SectionResult } from './lib/section';
import { ms, stats, table } from './lib/stats';

const N = Number(process.argv.slice(2).find((a) => /^\d+$/.test(a)) ?? 5000);
const GOAL_MS = 1_000;

/** A small deterministic PRNG (mulberry32). */
function rng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SYLLABLES = ['ka', 'lo', 'mi', 'ten', 'ra', 'vo', 'sun', 'pel', 'dor', 'fi', 'gal', 'hu', 'ne', 'sto', 'wer', 'bli', 'cra', 'min', 'tor', 'zu'];

function generate(n: number): CodeWithCounts[] {
  const rand = rng(42);
  const vocab: string[] = [];
  while (vocab.length < 700) {
    const w = Array.from({ length: 2 + Math.floor(rand() * 2) }, () => SYLLABLES[Math.floor(rand() * SYLLABLES.length)]).join('');
    if (!vocab.includes(w)) vocab.push(w);
  }
  const zipf = () => vocab[Math.min(vocab.length - 1, Math.floor(vocab.length * rand() ** 2.2))]!;
  const codes: CodeWithCounts[] = [];
  const names = new Set<string>();
  const add = (name: string, memo: string | null) => {
    if (names.has(nameKey(name))) return;
    names.add(nameKey(name));
    const id = codes.length + 1;
    codes.push({
      code_id: id,
      name,
      color: '#808080',
      memo,
      category_id: null,
      owner: 'bench',
      session_id: null,
      created_at: '2026-01-01T00:00:00.000Z',
      updated_at: '2026-01-01T00:00:00.000Z',
      version: 1,
      segment_count: Math.floor(rand() * 20),
      av_segment_count: 0,
    });
  };
  while (codes.length < n) {
    if (codes.length > 20 && rand() < 0.05) {
      const base = codes[Math.floor(rand() * codes.length)]!;
      const words = base.name.split(' ');
      const variant =
        rand() < 0.4 ? `${base.name}s` : rand() < 0.5 ? [...words].reverse().join(' ') : `${words[0]} of the ${words.slice(1).join(' ') || 'kind'}`;
      add(variant, base.memo);
      continue;
    }
    const name = Array.from({ length: 1 + Math.floor(rand() * 4) }, zipf).join(' ');
    const memo = rand() < 0.66 ? Array.from({ length: 8 + Math.floor(rand() * 33) }, zipf).join(' ') : null;
    add(name.charAt(0).toUpperCase() + name.slice(1), memo);
  }
  return codes;
}

function median(xs: number[]): number {
  return stats(xs).p50;
}

function log(msg: string): void {
  process.stderr.write(`[duplicates] ${msg}\n`);
}

async function run(): Promise<SectionResult> {
  const codes = generate(N);
  log(`${codes.length} codes, ${codes.filter((c) => c.memo).length} with memos`);
  const lines: string[][] = [];

  // wall time, and this process's CPU time (user + system), which a busy shared machine distorts less
  const cpuMs = (since: NodeJS.CpuUsage) => {
    const d = process.cpuUsage(since);
    return (d.user + d.system) / 1000;
  };
  let t = performance.now();
  let c = process.cpuUsage();
  const cold = detectDuplicateCodes(codes, 0.8);
  const coldMs = performance.now() - t;
  const coldCpu = cpuMs(c);
  const warm: number[] = [];
  const warmCpu: number[] = [];
  for (let i = 0; i < 5; i++) {
    t = performance.now();
    c = process.cpuUsage();
    detectDuplicateCodes(codes, 0.8);
    warm.push(performance.now() - t);
    warmCpu.push(cpuMs(c));
  }
  lines.push([`(info) detectDuplicateCodes, threshold 0.8, cold (empty stem cache): ${cold.length} pairs`, ms(coldMs), ms(coldCpu)]);
  lines.push(['(info) detectDuplicateCodes, threshold 0.8, warm (median of 5)', ms(median(warm)), ms(median(warmCpu))]);
  t = performance.now();
  c = process.cpuUsage();
  const low = detectDuplicateCodes(codes, 0.3);
  lines.push([`(info) detectDuplicateCodes, threshold 0.3 (memo prefixes indexed too): ${low.length} pairs`, ms(performance.now() - t), ms(cpuMs(c))]);

  // the naive all-pairs reference on the same token sets (exactness check and the cost blocking avoids)
  log('the naive all-pairs reference');
  const vocab = new Vocabulary();
  const sets = codes.map((code) => ({
    name: tokenSet(
      tokenize(code.name).map((x) => x.term),
      vocab,
    ),
    memo: code.memo
      ? tokenSet(
          tokenize(code.memo).map((x) => x.term),
          vocab,
        )
      : null,
  }));
  const joinStats = { candidates: 0 };
  t = performance.now();
  similarPairs(sets, 0.8, joinStats);
  lines.push([
    `(info) the similarity join alone (token sets prepared): ${joinStats.candidates.toLocaleString('en')} candidate pairs verified`,
    ms(performance.now() - t),
    '',
  ]);
  t = performance.now();
  let naive = 0;
  for (let i = 0; i < sets.length; i++) {
    for (let j = i + 1; j < sets.length; j++) {
      const a = sets[i]!;
      const b = sets[j]!;
      const name = dice(a.name, b.name);
      let sim = a.memo && b.memo ? 0.6 * name + 0.4 * dice(a.memo, b.memo) : name;
      // memos of at least 6 distinct terms each count on their own too (MEMO_ALONE_MIN_TERMS)
      if (a.memo && b.memo && a.memo.length >= 6 && b.memo.length >= 6) sim = Math.max(sim, dice(a.memo, b.memo));
      if (sim + 1e-12 >= 0.8) naive++;
    }
  }
  lines.push([
    `(info) naive all-pairs reference, ${((sets.length * (sets.length - 1)) / 2).toLocaleString('en')} comparisons: ${naive} pairs`,
    ms(performance.now() - t),
    '',
  ]);

  // through the pipeline on a real project file
  log('the tool through the pipeline');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'marginalia-dupbench-'));
  const handle = await openProjectHandle(path.join(dir, 'p.qda'), { create: true, checkpointIdleMs: 0 });
  try {
    handle.transaction(() => {
      for (const code of codes)
        handle.repo.insertCode({ name: code.name, color: code.color, memo: code.memo, category_id: null }, nameKey(code.name), {
          owner: 'bench',
          session_id: 'bench',
          now: code.created_at,
        });
    });
    const pipeline = createPipeline({ project: () => handle, host: headlessHost, logger: silentLogger });
    const caller = { session_id: 'bench', client_type: 'CUSTOM', client_name: 'bench', user: 'bench' };
    const times: number[] = [];
    const floor: number[] = [];
    let pairs = 0;
    await pipeline.invoke('detect_duplicate_codes', {}, caller); // warm-up
    for (let i = 0; i < 7; i++) {
      t = performance.now();
      handle.repo.listCodes();
      floor.push(performance.now() - t);
      t = performance.now();
      const out = await pipeline.invoke('detect_duplicate_codes', {}, caller);
      times.push(performance.now() - t);
      if (!out.envelope.success) throw new Error(out.envelope.error);
      pairs = (out.envelope.data as { candidate_count: number }).candidate_count;
    }
    lines.unshift(
      [`FLOOR listing the ${codes.length} codes from SQLite (repo.listCodes, median of 7)`, ms(median(floor)), ''],
      [`detect_duplicate_codes through the pipeline (median of 7): ${pairs} pairs (limit 500)`, ms(median(times)), ''],
    );
    const body = [
      `${codes.length} codes, ${codes.filter((x) => x.memo).length} with memos; wall ms and this process's CPU ms`,
      '',
      table(['measurement', 'wall ms', 'CPU ms'], lines),
      '',
      machineLine(),
    ];
    return {
      title: `5. detect_duplicate_codes on ${codes.length.toLocaleString('en')} codes`,
      body,
      figures: [
        {
          name: `detect_duplicate_codes, ${codes.length.toLocaleString('en')} codes`,
          value: median(times),
          unit: 'ms',
          goal: GOAL_MS,
          goalSource: 'an interactive call; issue 5 asks that it stay fast for thousands of codes',
          floor: { label: 'listing the codes from SQLite', value: median(floor) },
        },
      ],
      error: naive === cold.length ? undefined : `the join found ${cold.length} pairs, all-pairs ${naive}`,
    };
  } finally {
    await handle.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (require.main === module) sectionMain(run);
