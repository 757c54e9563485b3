/**
 * Strict JSON parsing (src/core/strictJson.ts, issue 15): section of `npm run bench`, or alone with
 * `npx tsx bench/strictJson.ts`. Every request body on every surface goes through `parseStrictJson`
 * (strict UTF-8 decoding, `JSON.parse`, then one scan for lone surrogate escapes and duplicated keys), so its
 * cost over the engine's own parse is what the HTTP fast path pays for the checks.
 *
 * Bodies: a small tool call (~100 bytes, what the fast path mostly serves), a 1 MB and a 10 MB
 * `add_text_source` text with accented words and curly quotes, 1,000,000 escaped NUL characters (an
 * escape every 6 bytes: the scan's worst case), and an array of 100,000 small objects (keys to compare).
 * Floor: `Buffer.toString('utf8')` + `JSON.parse` of the same bytes (what the server did before, with no
 * checks), measured in alternating blocks with the strict parse. Goal: at most 3x the floor for each body
 * (the small call's absolute cost is also shown: microseconds against the HTTP round trip's ~300).
 */
import { parseStrictJson } from '../src/core/strictJson';
import { QUICK, machineLine, sectionMain, type Figure, type SectionResult } from './lib/section';
import { ms, stats, table } from './lib/stats';

const GOAL_FACTOR = 3;

/** The bodies measured, with repetitions per block (more for the small ones). */
function bodies(): { name: string; bytes: Buffer; reps: number }[] {
  const words = 'Café naïve – “quoted” interview transcript, the participant said: ';
  const text = (bytes: number) => words.repeat(Math.ceil(bytes / Buffer.byteLength(words))).slice(0, bytes);
  const call = { arguments: { code_id: 3, source_id: 7, start_pos: 10, end_pos: 20, memo: 'a short memo about the coding' } };
  return [
    { name: 'small tool call', bytes: Buffer.from(JSON.stringify(call)), reps: QUICK ? 2000 : 20_000 },
    { name: '1 MB text', bytes: Buffer.from(JSON.stringify({ arguments: { name: 'Interview 1', text: text(1_000_000) } })), reps: QUICK ? 5 : 20 },
    { name: '10 MB text', bytes: Buffer.from(JSON.stringify({ arguments: { name: 'Interview 2', text: text(10_000_000) } })), reps: QUICK ? 2 : 5 },
    { name: '1,000,000 escaped NULs', bytes: Buffer.from(JSON.stringify({ arguments: { name: 'x', memo: '\u0000'.repeat(1_000_000) } })), reps: QUICK ? 2 : 5 },
    {
      name: '100,000 objects',
      bytes: Buffer.from(
        JSON.stringify({
          arguments: { applications: Array.from({ length: 100_000 }, (_, i) => ({ source_id: 1 + (i % 7), start_pos: i, end_pos: i + 5, code_id: 2 })) },
        }),
      ),
      reps: QUICK ? 2 : 5,
    },
  ];
}

async function run(): Promise<SectionResult> {
  const rows: string[][] = [];
  const figures: Figure[] = [];
  const blocks = QUICK ? 5 : 11;
  for (const b of bodies()) {
    const strict: number[] = [];
    const floor: number[] = [];
    // warm-up, and a cross-check: both parse to the same value
    if (JSON.stringify(parseStrictJson(b.bytes)) !== JSON.stringify(JSON.parse(b.bytes.toString('utf8'))))
      throw new Error(`${b.name}: strict and plain parses differ`);
    for (let k = 0; k < blocks; k++) {
      let t = performance.now();
      for (let i = 0; i < b.reps; i++) JSON.parse(b.bytes.toString('utf8'));
      floor.push((performance.now() - t) / b.reps);
      t = performance.now();
      for (let i = 0; i < b.reps; i++) parseStrictJson(b.bytes);
      strict.push((performance.now() - t) / b.reps);
    }
    const s = stats(strict);
    const f = stats(floor);
    rows.push([b.name, `${(b.bytes.length / 1e6).toFixed(b.bytes.length < 1e4 ? 4 : 1)} MB`, ms(f.p50), ms(s.p50), (s.p50 / f.p50).toFixed(2)]);
    figures.push({
      name: `parseStrictJson, ${b.name}`,
      value: s.p50,
      unit: 'ms',
      goal: f.p50 * GOAL_FACTOR,
      goalSource: `issue 15: at most ${GOAL_FACTOR}x the unchecked parse`,
      floor: { label: 'toString + JSON.parse', value: f.p50 },
    });
  }
  return {
    title: 'Strict JSON bodies (parseStrictJson vs toString + JSON.parse)',
    body: [machineLine(), '', table(['body', 'size', 'floor p50 ms', 'strict p50 ms', 'strict / floor'], rows)],
    figures,
  };
}

sectionMain(run);
