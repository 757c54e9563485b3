/**
 * Undo and redo (src/domain/undoRedo.ts, issue 13 item 1) with a long event history: section of
 * `npm run bench`, or alone with `npx tsx bench/undo.ts [N]` (default 100,000 history events).
 *
 * The stacks are derived from the event log on every call (`callerTops`: the caller's history read backwards
 * until the next action to undo and to redo are known). The project holds N stored events before the
 * measured calls, alternately the researcher's and another coder's codings; then the researcher codes a
 * passage. Measured through the pipeline on a real project file, in alternating blocks:
 * - `undo` + `redo` of the researcher's last coding (each call derives the stacks, applies one inverse and
 *   commits durably);
 * - the floor: `apply_code` + `remove_code` of a passage by the other coder (the same two durable one-row
 *   writes with one event each, no history read);
 * - attribution: `callerTops` alone.
 * Then again after 10,000 text edits by the researcher (the editor's own undo owns them; the stacks walk
 * back past them to the coding).
 * Goal: an undo under 100 ms at N = 100,000 (0.1 s, the limit for a response to feel instantaneous:
 * Nielsen, Usability Engineering, 1993, ch. 5), so Ctrl+Z stays instant in a long project.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Caller } from '../src/agent/pipeline';
import { createPipeline, headlessHost, openProjectHandle } from '../src/cli/compose';
import { silentLogger } from '../src/core/log';
import { callerTops } from '../src/domain/undoRedo';
import { QUICK, machineLine, sectionMain, type SectionResult } from './lib/section';
import { ms, stats, table, type Stats } from './lib/stats';

const N = Number(process.argv.slice(2).find((a) => /^\d+$/.test(a)) ?? (QUICK ? 20_000 : 100_000));
const EDITS = QUICK ? 2_000 : 10_000;
const GOAL_MS = 100;
const ALICE: Caller = { session_id: 'bench-alice', client_type: 'REST_CLIENT', client_name: 'bench', user: 'alice' };
const BOB: Caller = { session_id: 'bench-bob', client_type: 'REST_CLIENT', client_name: 'bench', user: 'bob' };

interface Measured {
  undo: Stats;
  redo: Stats;
  floor: Stats;
  tops: Stats;
}

async function run(): Promise<SectionResult> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'marginalia-bench-undo-'));
  const handle = await openProjectHandle(path.join(dir, 'p.qda'), { create: true, checkpointIdleMs: 0 });
  try {
    const pipeline = createPipeline({ project: () => handle, host: headlessHost, logger: silentLogger });
    const ok = async (name: string, args: unknown, caller = ALICE): Promise<any> => {
      const out = await pipeline.invoke(name, args, caller);
      if (!out.envelope.success) throw new Error(`${name}: ${out.envelope.error_code} ${out.envelope.error}`);
      return out.envelope.data;
    };
    const src = (await ok('add_text_source', { name: 'interview-04', content: 'We grew beans and shared food with neighbours. '.repeat(20) }, BOB)).source_id;
    const code = (await ok('create_code', { name: 'Food security', color: '#4E79A7' }, BOB)).code_id;

    // history events in one transaction, stored as the pipeline stores them
    const now = new Date().toISOString();
    const history = (count: number, kind: 'codings' | 'text edits') =>
      handle.store.transaction(() => {
        for (let i = 0; i < count; i++) {
          const edit = kind === 'text edits';
          const who = edit || i % 2 === 0 ? ALICE : BOB;
          handle.repo.insertEvent({
            event_id: '',
            event_type: edit ? 'source.text_edited' : 'coding.segment_coded',
            timestamp: now,
            aggregate_type: edit ? 'source' : 'segment',
            aggregate_id: String(edit ? src : 1_000_000 + i),
            caused_by: { session_id: who.session_id, client_type: who.client_type, user: who.user },
            payload: edit
              ? { source_id: src, edits: 1, length: 960, moved_segments: 0, resized_segments: 0, removed_segment_ids: [] }
              : { segment_id: 1_000_000 + i, code_id: code, source_id: src, start: 0, end: 7, text: 'We grew' },
            metadata: { correlation_id: `${who.user}-${kind}-${i}`, sequence_number: 0 },
          });
        }
      });
    history(N, 'codings');
    await ok('apply_code', { code_id: code, source_id: src, start_position: 18, end_position: 29 });

    const blocks = QUICK ? 5 : 15;
    /** undo + redo of alice's last coding, alternating with the floor and the stacks alone, `blocks` times */
    const measure = async (): Promise<Measured> => {
      const undo: number[] = [];
      const redo: number[] = [];
      const floor: number[] = [];
      const tops: number[] = [];
      for (let b = 0; b < blocks; b++) {
        let t = performance.now();
        const u = await ok('undo', {});
        undo.push(performance.now() - t);
        if (!/^coded /i.test(u.undone.description)) throw new Error(`undo undid ${u.undone.description}, not the coding`);
        t = performance.now();
        await ok('redo', {});
        redo.push(performance.now() - t);
        t = performance.now();
        const seg = await ok('apply_code', { code_id: code, source_id: src, start_position: 0, end_position: 7 }, BOB);
        await ok('remove_code', { segment_id: seg.segment_id }, BOB);
        floor.push((performance.now() - t) / 2);
        t = performance.now();
        callerTops(handle.repo, ALICE);
        tops.push(performance.now() - t);
      }
      return { undo: stats(undo), redo: stats(redo), floor: stats(floor), tops: stats(tops) };
    };
    const plain = await measure();
    history(EDITS, 'text edits');
    const typed = await measure();
    const rows = (label: string, m: Measured) => [
      [`${label}: undo (stacks + remove the coding + commit)`, ms(m.undo.p50), ms(m.undo.p90), ms(m.undo.max)],
      [`${label}: redo (stacks + code it again + commit)`, ms(m.redo.p50), ms(m.redo.p90), ms(m.redo.max)],
      [`${label}: the stacks alone (callerTops)`, ms(m.tops.p50), ms(m.tops.p90), ms(m.tops.max)],
      [`${label}: floor, apply_code or remove_code (one durable one-row write)`, ms(m.floor.p50), ms(m.floor.p90), ms(m.floor.max)],
    ];
    const figure = (name: string, m: Measured) => ({
      name,
      value: m.undo.p50,
      unit: 'ms' as const,
      goal: GOAL_MS,
      goalSource: 'issue 13 item 1: Ctrl+Z answers instantly (0.1 s)',
      floor: { label: 'one durable one-row write through the pipeline', value: m.floor.p50 },
      atGoalSize: N >= 100_000,
    });
    return {
      title: `Undo and redo with ${N.toLocaleString('en')} history events`,
      body: [
        machineLine(),
        '',
        table(
          ['call', 'p50 ms', 'p90 ms', 'max ms'],
          [...rows('last action a coding', plain), ...rows(`then ${EDITS.toLocaleString('en')} text edits`, typed)],
        ),
      ],
      figures: [
        figure(`undo with ${N.toLocaleString('en')} history events`, plain),
        figure(`undo past ${EDITS.toLocaleString('en')} text edits (${N.toLocaleString('en')} history events)`, typed),
      ],
    };
  } finally {
    await handle.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

sectionMain(run);
