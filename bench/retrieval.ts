/**
 * retrieve_segments, the Retrieval view's query (issue 13, item 7), on a 5,000-turn transcript with 5,000
 * coded passages of two codes that overlap in half of the turns: a section of `npm run bench`, or alone with
 * `npx tsx bench/retrieval.ts`. Each combination (or, and, overlap) through the pipeline, median of 7, against
 * the floor of list_segments returning the same codes' segments through the same pipeline (the reading the
 * combination, speakers and paragraphs are added to). Issue 13 sets no number; the goal line uses 1 s, the
 * limit of an interactive call (the view reruns the query after every coding while it shows).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createPipeline, headlessHost, openProjectHandle } from '../src/cli/compose';
import { silentLogger } from '../src/core/log';
import { machineLine, sectionMain, type SectionResult } from './lib/section';
import { ms, stats, table } from './lib/stats';

const TURNS = 5000;
const GOAL_MS = 1_000;

function log(msg: string): void {
  process.stderr.write(`[retrieval] ${msg}\n`);
}

async function run(): Promise<SectionResult> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'marginalia-retrievalbench-'));
  const handle = await openProjectHandle(path.join(dir, 'p.qda'), { create: true, checkpointIdleMs: 0 });
  try {
    const pipeline = createPipeline({ project: () => handle, host: headlessHost, logger: silentLogger });
    const caller = { session_id: 'bench', client_type: 'CUSTOM', client_name: 'bench', user: 'bench', researcher: true };
    const call = async (tool: string, args: unknown) => {
      const out = await pipeline.invoke(tool, args, caller);
      if (!out.envelope.success) throw new Error(`${tool}: ${out.envelope.error}`);
      return out.envelope.data as any;
    };
    // a transcript of TURNS turns, two speakers; each turn "NAME: sentence one. sentence two."
    const lines: string[] = [];
    const turns: { start: number; mid: number; end: number }[] = [];
    let at = 0;
    for (let i = 0; i < TURNS; i++) {
      const label = `${i % 2 === 0 ? 'INTERVIEWER' : 'PARTICIPANT'}: `;
      const text = `We spoke about the garden rota number ${i} and the water. Then about neighbours and trust ${i}.`;
      turns.push({ start: at + label.length, mid: at + label.length + text.indexOf('Then'), end: at + label.length + text.length });
      lines.push(label + text);
      at += label.length + text.length + 1;
    }
    const source = (await call('add_text_source', { name: 'long interview', content: lines.join('\n') })).source_id;
    const a = (await call('create_code', { name: 'Garden' })).code_id;
    const b = (await call('create_code', { name: 'Trust' })).code_id;
    const ops = turns.flatMap((t, i) =>
      i % 2 === 0
        ? [{ code_id: a, source_id: source, start_position: t.start, end_position: t.mid + 4 }]
        : [{ code_id: b, source_id: source, start_position: t.mid, end_position: t.end }],
    );
    // half the turns get both codes (overlapping on "Then"), the other half one
    for (let i = 0; i < TURNS; i += 4) ops.push({ code_id: b, source_id: source, start_position: turns[i]!.mid, end_position: turns[i]!.end });
    for (let i = 0; i < ops.length; i += 1000) await call('batch_apply_codes', { operations: ops.slice(i, i + 1000) });
    log(`${ops.length} segments on a ${TURNS}-turn transcript`);

    const median = (xs: number[]) => stats(xs).p50;
    const time = async (f: () => Promise<unknown>) => {
      await f();
      const xs: number[] = [];
      for (let i = 0; i < 7; i++) {
        const t = performance.now();
        await f();
        xs.push(performance.now() - t);
      }
      return median(xs);
    };
    const floor = await time(async () => {
      await call('list_segments', { code_id: a, limit: 5000 });
      await call('list_segments', { code_id: b, limit: 5000 });
    });
    const rows: string[][] = [[`FLOOR list_segments of both codes (${ops.length} segments), median of 7`, ms(floor)]];
    const figures = [];
    for (const combine of ['or', 'and', 'overlap'] as const) {
      let passages = 0;
      const v = await time(async () => {
        passages = (await call('retrieve_segments', { code_ids: [a, b], combine, limit: 5000 })).total;
      });
      rows.push([`retrieve_segments ${combine}: ${passages} passages, median of 7`, ms(v)]);
      figures.push({
        name: `retrieve_segments ${combine}, ${ops.length.toLocaleString('en')} segments on one ${TURNS.toLocaleString('en')}-turn transcript`,
        value: v,
        unit: 'ms' as const,
        goal: GOAL_MS,
        goalSource: 'an interactive call',
        floor: { label: 'list_segments of the same codes', value: floor },
      });
    }
    return {
      title: `Retrieval: retrieve_segments on a ${TURNS.toLocaleString('en')}-turn transcript`,
      body: [table(['measurement', 'ms'], rows), '', machineLine()],
      figures,
    };
  } finally {
    await handle.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

sectionMain(run);
