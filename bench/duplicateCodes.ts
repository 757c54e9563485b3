/**
 * detect_duplicate_codes on a 5,000-code codebook (issue 5: "stays fast for thousands of codes").
 * Run: `npx tsx bench/duplicateCodes.ts [N]` (default 5000). Not a test: it prints timings.
 *
 * The codebook is generated deterministically: names of 1-4 words drawn from a 700-word vocabulary
 * (Zipf-like, so some words are in hundreds of names: the hard case for blocking), memos of 8-40 words for
 * two codes in three, and 5% planted near-duplicates (a plural, a reordering, an added stop word) of
 * earlier codes. It measures:
 * 1. the domain function `detectDuplicateCodes` (tokenise + stem + prefix-filtered join + verify), cold
 *    (empty stem cache) and warm (median of 5);
 * 2. the tool through the pipeline on a real project file (listing the codes from SQLite included);
 * 3. for reference, the naive all-pairs comparison of the same token sets.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createPipeline, headlessHost, openProjectHandle } from '../src/cli/compose';
import { silentLogger } from '../src/core/log';
import type { CodeWithCounts } from '../src/domain/ports';
import { detectDuplicateCodes } from '../src/domain/suggestions';
import { dice, similarPairs, tokenize, tokenSet, Vocabulary } from '../src/domain/textRanking';
import { nameKey } from '../src/domain/rules';

const N = Number(process.argv[2] ?? 5000);

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
      const variant = rand() < 0.4 ? `${base.name}s` : rand() < 0.5 ? [...words].reverse().join(' ') : `${words[0]} of the ${words.slice(1).join(' ') || 'kind'}`;
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
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

async function main(): Promise<void> {
  const codes = generate(N);
  console.log(`${codes.length} codes, ${codes.filter((c) => c.memo).length} with memos; node ${process.version}, ${os.cpus()[0]?.model ?? 'cpu'}`);

  // wall time, and this process's CPU time (user + system), which a busy shared machine distorts less
  const cpuMs = (since: NodeJS.CpuUsage) => {
    const d = process.cpuUsage(since);
    return (d.user + d.system) / 1000;
  };
  console.log(`load average ${os.loadavg().map((x) => x.toFixed(1)).join(' ')} on ${os.cpus().length} CPUs`);
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
  console.log(
    `detectDuplicateCodes (threshold 0.8): ${cold.length} pairs; cold ${coldMs.toFixed(1)} ms (CPU ${coldCpu.toFixed(1)} ms), ` +
      `warm median ${median(warm).toFixed(1)} ms (CPU ${median(warmCpu).toFixed(1)} ms)`,
  );
  t = performance.now();
  const low = detectDuplicateCodes(codes, 0.3);
  console.log(`detectDuplicateCodes (threshold 0.3, memo prefixes indexed too): ${low.length} pairs in ${(performance.now() - t).toFixed(1)} ms`);

  // the naive all-pairs reference on the same token sets (exactness check and the cost blocking avoids)
  const vocab = new Vocabulary();
  const sets = codes.map((c) => ({
    name: tokenSet(
      tokenize(c.name).map((x) => x.term),
      vocab,
    ),
    memo: c.memo
      ? tokenSet(
          tokenize(c.memo).map((x) => x.term),
          vocab,
        )
      : null,
  }));
  const stats = { candidates: 0 };
  t = performance.now();
  similarPairs(sets, 0.8, stats);
  const joinMs = performance.now() - t;
  console.log(`similarity join alone (token sets prepared): ${joinMs.toFixed(1)} ms, ${stats.candidates.toLocaleString('en')} candidate pairs verified`);
  t = performance.now();
  let naive = 0;
  for (let i = 0; i < sets.length; i++) {
    for (let j = i + 1; j < sets.length; j++) {
      const a = sets[i]!;
      const b = sets[j]!;
      const name = dice(a.name, b.name);
      const sim = a.memo && b.memo ? 0.6 * name + 0.4 * dice(a.memo, b.memo) : name;
      if (sim + 1e-12 >= 0.8) naive++;
    }
  }
  console.log(`naive all-pairs reference: ${naive} pairs in ${(performance.now() - t).toFixed(1)} ms (${((sets.length * (sets.length - 1)) / 2).toLocaleString('en')} comparisons)`);
  if (naive !== cold.length) console.log(`MISMATCH: the join found ${cold.length} pairs, all-pairs ${naive}`);

  // through the pipeline on a real project file
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'marginalia-dupbench-'));
  const handle = await openProjectHandle(path.join(dir, 'p.qda'), { create: true, checkpointIdleMs: 0 });
  try {
    handle.transaction(() => {
      for (const c of codes) handle.repo.insertCode({ name: c.name, color: c.color, memo: c.memo, category_id: null }, nameKey(c.name), { owner: 'bench', session_id: 'bench', now: c.created_at });
    });
    const pipeline = createPipeline({ project: () => handle, host: headlessHost, logger: silentLogger });
    const caller = { session_id: 'bench', client_type: 'CUSTOM', client_name: 'bench', user: 'bench' };
    const times: number[] = [];
    let pairs = 0;
    for (let i = 0; i < 5; i++) {
      t = performance.now();
      const out = await pipeline.invoke('detect_duplicate_codes', {}, caller);
      times.push(performance.now() - t);
      if (!out.envelope.success) throw new Error(out.envelope.error);
      pairs = (out.envelope.data as { candidate_count: number }).candidate_count;
    }
    console.log(`detect_duplicate_codes tool via the pipeline (listing ${codes.length} codes from SQLite included): ${pairs} pairs (limit 500), median ${median(times).toFixed(1)} ms`);
  } finally {
    await handle.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

void main();
