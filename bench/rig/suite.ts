// The extension-host side of bench/rig.ts: runs inside the REAL VS Code extension host (test/integration/
// run.mjs loads this bundle as the extension tests) and measures what a researcher waits for, each beside a
// floor measured here in the same run:
//   1. activation to populated trees on the workspace's ~100 MB project (MarginaliaApi.activation), against
//      reading the file and opening it in sql.js;
//   2. a Codes tree refresh with 2,000 codes in 100 categories (every node's children and tree item), against
//      building 2,000 plain TreeItems from the same rows;
//   3. coding a selection (the command, as a keybinding runs it) until the editor's decorations are painted,
//      on a 5,000-segment transcript, against one durable apply_code through the pipeline;
//   4. undo of that coding (the `marginalia.undo` command) until painted, against the same floor.
// The figures go to the JSON file named by MARGINALIA_BENCH_RESULT; run.mjs gets the usual test summary.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { MarginaliaApi } from '../../src/extension';
import { loadSqlJs } from '../../src/store/sqljs';
import type { CodesNode } from '../../src/ui/codebook/codebookIndex';

/** One measured figure: milliseconds per repetition, and the floor's. */
export interface RigFigure {
  key: 'activation' | 'codesTree' | 'codesTreeView' | 'codesTreeChange' | 'codingPaint' | 'undoPaint';
  samples: number[];
  floorSamples: number[];
  note?: string;
}

/** What the suite writes to MARGINALIA_BENCH_RESULT. */
export interface RigResult {
  figures: RigFigure[];
  projectBytes: number;
  segments: number;
  codes: number;
  error?: string;
}

const REPS = Number(process.env.MARGINALIA_BENCH_REPS ?? 30);

async function until<T>(what: string, probe: () => T | undefined | false | Promise<T | undefined | false>, ms = 60_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined && v !== false) return v as T;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

function ok<T>(outcome: { envelope: { success: boolean; data?: unknown; error?: string } }): T {
  if (!outcome.envelope.success) throw new Error(outcome.envelope.error ?? 'tool failed');
  return outcome.envelope.data as T;
}

/**
 * Resolves once the decorations of `sourceId` in the visible editors have been painted after `since`
 * (performance.now()), by CodedSegmentDecorations.lastPaint.
 */
function painted(api: MarginaliaApi, sourceId: number, since: number): Promise<number> {
  return until(
    'the decorations to be painted',
    () => {
      const t = api.decorations.lastPaint(sourceId);
      return t !== undefined && t >= since ? t : undefined;
    },
    10_000,
  );
}

export async function run(): Promise<void> {
  const out = process.env.MARGINALIA_BENCH_RESULT;
  const summary = process.env.MARGINALIA_TEST_RESULT;
  const result: RigResult = { figures: [], projectBytes: 0, segments: 0, codes: 0 };
  try {
    const ext = vscode.extensions.getExtension<MarginaliaApi>('marginalia.marginalia');
    if (!ext) throw new Error('the extension is not installed in the host');
    const api = await ext.activate();
    const pipeline = api.workbench.pipeline;
    const caller = api.workbench.caller();
    const call = async <T>(tool: string, args: unknown) => ok<T>(await pipeline.invoke(tool, args, caller));

    // 1. activation to populated trees (the workspace holds exactly one project, opened automatically)
    const activationMs = await api.activation.projectReadyMs;
    if (activationMs === undefined) throw new Error('the workspace project was not opened automatically');
    const bigFile = api.controller.current()?.path;
    if (!bigFile) throw new Error('no project open');
    result.projectBytes = fs.statSync(bigFile).size;
    const SQL = await loadSqlJs();
    const openFloor: number[] = [];
    for (let i = 0; i < 3; i++) {
      const t0 = performance.now();
      const db = new SQL.Database(fs.readFileSync(bigFile));
      db.exec('SELECT count(*) FROM codes');
      openFloor.push(performance.now() - t0);
      db.close();
    }
    result.figures.push({ key: 'activation', samples: [activationMs], floorSamples: openFloor, note: path.basename(bigFile) });
    await vscode.commands.executeCommand('marginalia.project.close');

    // a fresh project for the rest
    const ws = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    if (!ws) throw new Error('no workspace folder');
    await vscode.commands.executeCommand('marginalia.project.new', path.join(ws, 'rig-bench.qda'));
    await until('the new project', () => api.controller.current());

    // 2. Codes tree with 2,000 codes in 100 categories
    const categories: number[] = [];
    for (let c = 0; c < 100; c++) categories.push((await call<{ category_id: number }>('create_category', { name: `Theme ${c}` })).category_id);
    // distinct names (two words of 50 x 40): "Code 1" ... "Code 2000" would all be near-duplicates to codebook health
    const FIRST = [
      'Quiet',
      'Shared',
      'Hidden',
      'Early',
      'Late',
      'Local',
      'Public',
      'Private',
      'Daily',
      'Seasonal',
      'Urban',
      'Rural',
      'Formal',
      'Informal',
      'Mutual',
      'Personal',
      'Civic',
      'Domestic',
      'Material',
      'Moral',
      'Social',
      'Spatial',
      'Temporal',
      'Bodily',
      'Digital',
      'Economic',
      'Emotional',
      'Familial',
      'Financial',
      'Collective',
      'Individual',
      'Practical',
      'Symbolic',
      'Cultural',
      'Ecological',
      'Political',
      'Religious',
      'Medical',
      'Legal',
      'Technical',
      'Seasoned',
      'Novice',
      'Absent',
      'Present',
      'Distant',
      'Nearby',
      'Hopeful',
      'Anxious',
      'Tired',
      'Proud',
    ];
    const SECOND = [
      'harvest',
      'waiting list',
      'water rota',
      'tool shed',
      'seed swap',
      'compost',
      'allotment',
      'council letter',
      'bench',
      'gate code',
      'rain',
      'drought',
      'frost',
      'neighbour',
      'grandchild',
      'recipe',
      'market',
      'budget',
      'meeting',
      'rule',
      'conflict',
      'friendship',
      'trust',
      'grief',
      'memory',
      'migration',
      'language',
      'belonging',
      'exclusion',
      'labour',
      'knowledge',
      'care',
      'health',
      'rest',
      'pride',
      'shame',
      'gift',
      'debt',
      'habit',
      'future',
    ];
    const codeIds: number[] = [];
    for (let i = 0; i < 2000; i++) {
      const name = `${FIRST[i % 50]} ${SECOND[Math.floor(i / 50)]}`;
      codeIds.push((await call<{ code_id: number }>('create_code', { name, category_id: categories[i % 100] })).code_id);
    }
    result.codes = codeIds.length;
    await api.settled();
    const tree = api.codesTree;
    const walk = async (node?: CodesNode): Promise<number> => {
      let n = 0;
      for (const child of await tree.getChildren(node)) {
        await tree.getTreeItem(child);
        n += 1 + (await walk(child));
      }
      return n;
    };
    const treeSamples: number[] = [];
    const treeFloor: number[] = [];
    for (let r = 0; r < REPS; r++) {
      const t0 = performance.now();
      tree.refresh();
      const nodes = await walk();
      treeSamples.push(performance.now() - t0);
      if (nodes < 2100) throw new Error(`the Codes tree showed ${nodes} nodes, expected at least 2,100`);
      const f0 = performance.now();
      const rows = api.workbench.repo()?.listCodes() ?? [];
      const items = rows.map((c) => new vscode.TreeItem(c.name, vscode.TreeItemCollapsibleState.None));
      treeFloor.push(performance.now() - f0);
      if (items.length !== 2000) throw new Error(`floor saw ${items.length} codes`);
    }
    result.figures.push({ key: 'codesTree', samples: treeSamples, floorSamples: treeFloor });
    // the same refresh as VS Code's own view draws it (every expanded category asked for by the workbench)
    await vscode.commands.executeCommand('workbench.view.extension.marginalia');
    await vscode.commands.executeCommand('marginalia.codes.focus');
    await until('the Codes view to be visible', () => api.codesTree.view.visible, 10_000);
    await new Promise((r) => setTimeout(r, 500));
    const viewSamples: number[] = [];
    const firstCalls: number[] = [];
    let viewNote = '';
    for (let r = 0; r < Math.min(REPS, 10); r++) {
      const t = await api.codesTree.refreshAndWait(10_000);
      viewSamples.push(t.ms);
      if (t.firstCallMs !== undefined) firstCalls.push(t.firstCallMs);
      viewNote = `${t.rows} rows, drawn by the view: ${t.drawnByView}, complete: ${t.complete}${process.env.MARGINALIA_BENCH_TRACE ? `, getChildren bursts: ${t.trace}` : ''}`;
    }
    // its floor: the same view, filtered to one code (two rows), redrawn the same way: VS Code's own round trip
    // from a change to its requests and back, which no provider can shorten
    await api.codesTree.setFilter(`${FIRST[0]} ${SECOND[0]}`);
    const viewFloor: number[] = [];
    let floorRows = 0;
    for (let r = 0; r < Math.min(REPS, 10); r++) {
      const t = await api.codesTree.refreshAndWait(10_000);
      viewFloor.push(t.ms);
      floorRows = t.rows;
    }
    await api.codesTree.setFilter(undefined);
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
    viewNote += `; VS Code's first request came ${median(firstCalls).toFixed(0)} ms (median) after the refresh; the floor view showed ${floorRows} rows`;
    result.figures.push({ key: 'codesTreeView', samples: viewSamples, floorSamples: viewFloor, note: viewNote });
    // what a researcher waits for after changing the codebook: a new code in one of the 100 categories, from the
    // call to VS Code's view having drawn it (the provider redraws only that category: CodesTreeProvider.update)
    const changeSamples: number[] = [];
    const changeFloor: number[] = [];
    const redraws = new Set<string>();
    const splits: string[] = [];
    for (let r = 0; r < Math.min(REPS, 10); r++) {
      await new Promise((res) => setTimeout(res, 260)); // past VS Code's 200 ms tree-change debounce
      const t0 = performance.now();
      const made = await call<{ code_id: number }>('create_code', { name: `Bench idea ${r}`, category_id: categories[(r * 7) % 100] });
      const called = performance.now();
      await api.settled();
      const settledAt = performance.now();
      const first = api.codesTree.getChildren(undefined)[0];
      if (first) await api.codesTree.view.reveal(first, { select: false, focus: false, expand: false });
      changeSamples.push(performance.now() - t0);
      splits.push(`${(settledAt - t0).toFixed(0)}+${(performance.now() - settledAt).toFixed(0)}`);
      changeFloor.push(called - t0);
      redraws.add(String(api.codesTree.lastRedraw));
      if (!api.codesTree.codeNode(made.code_id)) throw new Error('the new code is not in the Codes tree');
    }
    result.figures.push({
      key: 'codesTreeChange',
      samples: changeSamples,
      floorSamples: changeFloor,
      note: `nodes redrawn per change (each with its children): ${[...redraws].join(', ')}; ms to the views updated + ms until drawn: ${splits.join(' ')}`,
    });

    // 3. a 5,000-segment transcript: 2,500 lines, two codings per line
    const lines = Array.from(
      { length: 2500 },
      (_, i) => `P${i % 7}: line ${i} of the interview, about gardens, neighbours, food and the long walk to the allotment on Saturdays.`,
    );
    const text = `${lines.join('\n')}\n`;
    const source = await call<{ source_id: number }>('import_text', { name: 'long interview', content: text });
    const lineStart: number[] = [];
    {
      let at = 0;
      for (const l of lines) {
        lineStart.push(at);
        at += [...l].length + 1;
      }
    }
    const ops = lines.flatMap((l, i) => [
      { code_id: codeIds[i % 60] as number, source_id: source.source_id, start_pos: lineStart[i] as number, end_pos: (lineStart[i] as number) + 40 },
      {
        code_id: codeIds[(i + 7) % 60] as number,
        source_id: source.source_id,
        start_pos: (lineStart[i] as number) + 20,
        end_pos: (lineStart[i] as number) + [...l].length,
      },
    ]);
    for (let i = 0; i < ops.length; i += 1000) await call('batch_apply_codes', { operations: ops.slice(i, i + 1000) });
    result.segments = api.workbench.repo()?.listSegmentsForSource(source.source_id).length ?? 0;
    await api.settled();
    const editor = await api.documents.open(source.source_id);
    if (!editor) throw new Error('the source did not open');
    await painted(api, source.source_id, 0);

    const codingSamples: number[] = [];
    const undoSamples: number[] = [];
    const writeFloor: number[] = [];
    const codeForBench = codeIds[100] as number;
    for (let r = 0; r < REPS; r++) {
      const line = 100 + r * 50;
      editor.selection = new vscode.Selection(line, 5, line, 60);
      const t0 = performance.now();
      await vscode.commands.executeCommand('marginalia.coding.codeSelection', { codeId: codeForBench });
      const p1 = await painted(api, source.source_id, t0);
      codingSamples.push(p1 - t0);
      const u0 = performance.now();
      await vscode.commands.executeCommand('marginalia.undo');
      const p2 = await painted(api, source.source_id, u0);
      undoSamples.push(p2 - u0);
      // floor: one durable write through the same pipeline, nothing drawn
      const f0 = performance.now();
      const seg = await call<{ segment_id: number }>('apply_code', {
        code_id: codeForBench,
        source_id: source.source_id,
        start_pos: (lineStart[line + 1] as number) + 2,
        end_pos: (lineStart[line + 1] as number) + 30,
      });
      writeFloor.push(performance.now() - f0);
      await call('delete_segment', { segment_id: seg.segment_id });
      await api.settled();
    }
    const after = api.workbench.repo()?.listSegmentsForSource(source.source_id).length ?? 0;
    if (after !== result.segments) throw new Error(`undo left ${after} segments, expected ${result.segments}`);
    result.figures.push({ key: 'codingPaint', samples: codingSamples, floorSamples: writeFloor });
    result.figures.push({ key: 'undoPaint', samples: undoSamples, floorSamples: writeFloor });
  } catch (e) {
    result.error = e instanceof Error ? `${e.message}\n${e.stack ?? ''}` : String(e);
  }
  if (out) fs.writeFileSync(out, JSON.stringify(result));
  const failed = result.error !== undefined;
  if (summary) {
    fs.writeFileSync(
      summary,
      JSON.stringify({
        passes: failed ? 0 : 1,
        failures: failed ? 1 : 0,
        pending: 0,
        tests: [{ title: 'rig bench', state: failed ? 'failed' : 'passed', error: result.error }],
      }),
    );
  }
  if (failed) throw new Error(result.error);
}
