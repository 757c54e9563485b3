/**
 * Bench section: coded-segment decorations for a 5,000-segment transcript (issue 7, part 5, and issue 13,
 * item 2; goal under 50 ms). Measures the pure computation the editor runs on every redraw in the default
 * display "both" (src/ui/decorations/codingLayout.ts: offsets, lines, underline lanes and stripe columns,
 * the never-blended tints, labels and stripes for the visible lines and their 200-line margins) plus the
 * position conversion per range (LineIndex, what the editor side uses), and the whole redraw's data side:
 * reading the source's segments and the codebook from the project, then the same. Floor: one pass over the
 * segments building a plain {start, end} per segment (the least any drawing needs).
 * Runs alone (`npx tsx bench/decorations.ts`) or as a child of bench/run.ts.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ProjectStore } from '../src/store/projectStore';
import { SqlProjectRepository } from '../src/store/sqlRepository';
import { nameKey } from '../src/domain/rules';
import { LineIndex } from '../src/ui/decorations/segmentDecorationModel';
import { layoutCodings, marksForLines, tintPieces, type CodeLook } from '../src/ui/decorations/codingLayout';
import { mulberry32 } from './lib/generate';
import { QUICK, machineLine, sectionMain, type SectionResult } from './lib/section';
import { LATENCY_HEADER, latencyCells, ms, ratio, stats, table } from './lib/stats';

const SEGMENTS = 5000;
const CODES = 60;
const REPS = QUICK ? 20 : 60;
const GOAL_MS = 50;

async function run(): Promise<SectionResult> {
  const load0 = os.loadavg();
  const rnd = mulberry32(7);
  const words = [
    'garden',
    'water',
    'council',
    'we',
    'the',
    'harvest',
    'shed',
    'belong',
    'argue',
    'rota',
    'forms',
    'quit',
    'vegetables',
    'and',
    'I',
    'it',
    'was',
  ];
  // a transcript of speaker turns (one per line), with an emoji now and then (astral characters)
  const lines: string[] = [];
  let len = 0;
  while (len < 600_000) {
    const n = 10 + Math.floor(rnd() * 60);
    const turn = `${rnd() < 0.5 ? 'Interviewer' : 'Amara'}: ${Array.from({ length: n }, () => (rnd() < 0.01 ? '🌱' : words[Math.floor(rnd() * words.length)])).join(' ')}.`;
    lines.push(turn);
    len += turn.length + 1;
  }
  const text = lines.join('\n');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'marginalia-bench-deco-'));
  const store = await ProjectStore.open(path.join(dir, 'deco.qda'), { create: true, checkpointIdleMs: 0 });
  try {
    const now = new Date().toISOString();
    const cpLen = [...text].length;
    let sourceId = 0;
    store.transaction(() => {
      const codeIds: number[] = [];
      for (let i = 0; i < CODES; i++) {
        const name = `code ${i}`;
        const color = `#${Math.floor(rnd() * 0xffffff)
          .toString(16)
          .padStart(6, '0')}`;
        codeIds.push(
          store.run('INSERT INTO codes(name, name_key, color, memo, category_id, owner, session_id, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?)', [
            name,
            nameKey(name),
            color,
            rnd() < 0.5 ? 'what this code means (a memo)' : null,
            null,
            'bench',
            'local',
            now,
            now,
          ]).lastId,
        );
      }
      sourceId = store.run(
        'INSERT INTO sources(name, type, content, content_length, memo, origin, mime, size_bytes, owner, session_id, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)',
        ['transcript.txt', 'text', text, cpLen, null, 'bench', 'text/plain', text.length, 'bench', 'local', now, now],
      ).lastId;
      const cps = [...text];
      for (let k = 0; k < SEGMENTS; k++) {
        const segLen = 20 + Math.floor(rnd() * 400);
        const start = Math.floor(rnd() * (cpLen - segLen));
        store.run(
          'INSERT INTO segments(code_id, source_id, start_pos, end_pos, text, memo, importance, owner, session_id, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)',
          [
            codeIds[Math.floor(rnd() * CODES)] as number,
            sourceId,
            start,
            start + segLen,
            cps.slice(start, start + segLen).join(''),
            rnd() < 0.2 ? 'a segment memo' : null,
            0,
            'bench',
            rnd() < 0.3 ? 'agent-session-1' : 'local',
            now,
            now,
          ],
        );
      }
    });
    const repo = new SqlProjectRepository(store);
    const floor: number[] = [];
    const pure: number[] = [];
    const full: number[] = [];
    const read: number[] = [];
    let drawn = 0;
    let labels = 0;
    for (let r = 0; r < REPS + 5; r++) {
      let t0 = performance.now();
      const segments = repo.listSegmentMarksForSource(sourceId);
      const codes = new Map<number, CodeLook>(repo.listCodeLabels().map((c) => [c.code_id, c]));
      const dRead = performance.now() - t0;
      t0 = performance.now();
      const plain = segments.map((s) => ({ start: s.start_pos, end: s.end_pos }));
      const dFloor = performance.now() - t0;
      t0 = performance.now();
      const index = new LineIndex(text);
      const layout = layoutCodings(text, segments, codes, index);
      let n = 0;
      for (const d of layout.segments) n += index.positionAt(d.start).line + index.positionAt(d.end).character >= 0 ? 1 : 0;
      for (const t of tintPieces(layout)) if (index.positionAt(t.start).line + index.positionAt(t.end).character < 0) n = -1;
      const top = Math.floor(layout.lineCount / 2);
      labels = marksForLines(layout, top - 200, top + 250, (l) => index.lineEnd(l) === index.lineStart(l)).reduce((k, m) => k + m.labels.length, 0);
      const dPure = performance.now() - t0;
      if (plain.length !== SEGMENTS || n !== SEGMENTS) throw new Error(`expected ${SEGMENTS} decorations, got ${n}`);
      drawn = n;
      if (r >= 5) {
        read.push(dRead);
        floor.push(dFloor);
        pure.push(dPure);
        full.push(dRead + dPure);
      }
    }
    const [f, p, d, a] = [stats(floor), stats(pure), stats(read), stats(full)];
    return {
      title: '10. Decorations: one redraw of a 5,000-segment transcript',
      body: [
        machineLine(),
        `load average at start ${load0.map((l) => l.toFixed(2)).join(' ')}`,
        '',
        `Transcript: ${(text.length / 1000).toFixed(0)} k UTF-16 units on ${lines.length} lines, with astral characters; ${drawn} segments of ${CODES} codes (30% by an agent, 20% with a memo); ${labels} labels in the 450-line window.`,
        '',
        table(
          ['', ...LATENCY_HEADER, 'p50 / floor'],
          [
            ['one pass building {start, end} per segment (FLOOR)', ...latencyCells(f), '1.00x'],
            ['layoutCodings + tints + labels/stripes of 450 lines + positions (pure, what the editor computes)', ...latencyCells(p), ratio(p.p50, f.p50)],
            ['(info) read the segments and the codebook (sql.js)', ...latencyCells(d), ratio(d.p50, f.p50)],
            ['read + compute (the whole data side of one redraw)', ...latencyCells(a), ratio(a.p50, f.p50)],
          ],
        ),
        '',
        `${REPS} repetitions after 5 warm-up. Not included: VS Code applying the decorations (setDecorations) in the renderer; hovers are computed when shown, not per redraw.`,
      ],
      figures: [
        {
          name: `decorations, 5,000 segments, read + compute p50 (pure compute ${ms(p.p50)} ms)`,
          value: a.p50,
          unit: 'ms',
          goal: GOAL_MS,
          goalSource: 'issue 7',
          floor: { label: 'one pass over the segments', value: f.p50 },
        },
      ],
    };
  } finally {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

sectionMain(run);
