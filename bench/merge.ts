/**
 * Merging two histories (issue 16 item 3): section of `npm run bench`, or alone with `npx tsx bench/merge.ts [N]`.
 *
 * Setup (not timed): a base project of N segments (100,000 with BENCH_FULL=1, 20,000 without, 10,000 with
 * BENCH_QUICK=1) on 1 source per 100 segments, 50 codes; two copies of it each add N/2 new segments, ours by coder
 * `alice`, theirs by coder `bob`, every other one of bob's on exactly the text, code and source of one of alice's
 * (double coding: both are kept). The three dumps are what the sync reads: `canonicalDump(readProjectTables(..))`
 * of each project (src/vcs/remote.ts reads base and theirs from git and dumps ours from the project).
 *
 * Measured, per repetition, on a fresh copy of the ours project (what RemoteSync.syncOnce does between reading
 * the dumps and moving the git branch; the git plumbing around it is not counted):
 * 1. parseForMerge of the three dumps (src/vcs/syncMerge.ts: rows identical in all three are left out unparsed);
 * 2. mergeDumps(base, ours, theirs, {now, idFloor}) with the idFloor from sqlite_sequence, as src/cli/compose.ts;
 * 3. the apply, as RemoteSync.apply: one journaled store transaction that checks the project is unchanged since its
 *    dump (the store's write generation), plans the changes from ours (planMergeChanges) and applies them, with the
 *    commit's follow-up that journals the GUIDs the insert triggers drew (StoreDumpAccess, TriggerGuids).
 * The goal figure is 1 + 2 + 3. Cross-check: the project then holds 2 x N segments (base + both sides' new ones),
 * every GUID once, and the merge reported no conflict.
 *
 * Floor: `git merge --no-edit theirs` of the same dumps' files in a real git repository (base committed, branches
 * ours and theirs each with their dump written and committed), timed on the ours branch, in the same run.
 * Both sides' new segments get the same local ids (each copy counts on from the base), so git sees both sides
 * append different lines at the end of tables/segments.jsonl: a textual conflict it stops at (it does the whole
 * textual merge first; the figure is that work).
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { nameKey } from '../src/domain/rules';
import { ProjectStore } from '../src/store/projectStore';
import { StoreDumpAccess } from '../src/store/dumpAccess';
import { canonicalDump, isDumpedTable, readProjectTables } from '../src/vcs/canonicalDump';
import { parseForMerge, planMergeChanges } from '../src/vcs/syncMerge';
import { mergeDumps } from '../src/vcs/merge/mergeDumps';
import { mulberry32 } from './lib/generate';
import { FULL, QUICK, machineLine, sectionMain, type SectionResult } from './lib/section';
import { ms, stats, table } from './lib/stats';

const BASE = Number(process.argv.slice(2).find((a) => /^\d+$/.test(a)) ?? (FULL ? 100_000 : QUICK ? 10_000 : 20_000));
const ADDED = BASE / 2;
const REPS = QUICK || process.env.MERGE_REPS === '1' ? 1 : 3;
const GOAL_MS = 5_000;
const NOW = '2026-01-01T00:00:00.000Z';

function log(msg: string): void {
  process.stderr.write(`[merge] ${msg}\n`);
}

const SEGMENT_SQL =
  'INSERT INTO segments(code_id, source_id, start_pos, end_pos, text, memo, importance, owner, session_id, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)';

interface Coding {
  code: number;
  source: number;
  start: number;
  end: number;
}

/** The base project: BASE/100 sources of ~5,000 characters, 50 codes, BASE segments by coder `lead`. */
async function makeBase(file: string, rnd: () => number): Promise<{ texts: Map<number, string>; codes: number[] }> {
  const store = await ProjectStore.open(file, { create: true, checkpointIdleMs: 0, journalMaxBytes: Number.MAX_SAFE_INTEGER });
  const texts = new Map<number, string>();
  const codes: number[] = [];
  const words = ['food', 'beans', 'neighbours', 'market', 'rain', 'school', 'work', 'family', 'river', 'price', 'harvest', 'we', 'the', 'and', 'shared'];
  try {
    store.transaction(() => {
      for (let i = 0; i < 50; i++) {
        const name = `code ${String(i + 1).padStart(3, '0')}`;
        codes.push(
          store.run('INSERT INTO codes(name, name_key, color, owner, session_id, created_at, updated_at) VALUES (?,?,?,?,?,?,?)', [
            name,
            nameKey(name),
            '#4E79A7',
            'lead',
            'bench',
            NOW,
            NOW,
          ]).lastId,
        );
      }
      for (let s = 0; s < BASE / 100; s++) {
        const parts: string[] = [];
        for (let n = 0; n < 5_000;) {
          const w = words[Math.floor(rnd() * words.length)] as string;
          parts.push(w);
          n += w.length + 1;
        }
        const content = `${parts.join(' ')}.`;
        const id = store.run(
          'INSERT INTO sources(name, type, content, content_length, origin, mime, size_bytes, owner, session_id, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)',
          [
            `interview-${String(s + 1).padStart(5, '0')}.txt`,
            'text',
            content,
            content.length,
            'bench',
            'text/plain',
            content.length,
            'lead',
            'bench',
            NOW,
            NOW,
          ],
        ).lastId;
        texts.set(id, content);
      }
    });
    addSegments(store, randomCodings(rnd, texts, codes, BASE), texts, 'lead');
    store.checkpoint();
  } finally {
    await store.close();
  }
  return { texts, codes };
}

function randomCodings(rnd: () => number, texts: Map<number, string>, codes: number[], n: number): Coding[] {
  const ids = [...texts.keys()];
  const out: Coding[] = [];
  for (let i = 0; i < n; i++) {
    const source = ids[Math.floor(rnd() * ids.length)] as number;
    const len = (texts.get(source) as string).length;
    const segLen = 20 + Math.floor(rnd() * 180);
    const start = Math.floor(rnd() * (len - segLen));
    out.push({ code: codes[Math.floor(rnd() * codes.length)] as number, source, start, end: start + segLen });
  }
  return out;
}

function addSegments(store: ProjectStore, codings: readonly Coding[], texts: Map<number, string>, coder: string): void {
  store.transaction(() => {
    for (const c of codings) {
      store.run(SEGMENT_SQL, [
        c.code,
        c.source,
        c.start,
        c.end,
        (texts.get(c.source) as string).slice(c.start, c.end),
        null,
        0,
        coder,
        `bench-${coder}`,
        NOW,
        NOW,
      ]);
    }
  });
}

/** The project's canonical dump, as the sync takes it (Snapshotter's currentDump). */
async function dumpOf(file: string): Promise<Map<string, string>> {
  const store = await ProjectStore.open(file, { checkpointIdleMs: 0 });
  try {
    return canonicalDump(readProjectTables(new StoreDumpAccess(store)));
  } finally {
    await store.close();
  }
}

function git(dir: string, args: string[]): { ms: number; status: number | null; out: string } {
  const t = performance.now();
  const r = spawnSync('git', args, {
    cwd: dir,
    encoding: 'utf8',
    maxBuffer: 1 << 28,
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 'bench',
      GIT_AUTHOR_EMAIL: 'bench@example.invalid',
      GIT_COMMITTER_NAME: 'bench',
      GIT_COMMITTER_EMAIL: 'bench@example.invalid',
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
    },
  });
  return { ms: performance.now() - t, status: r.status, out: `${r.stdout}${r.stderr}` };
}

function mustGit(dir: string, args: string[]): void {
  const r = git(dir, args);
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.out}`);
}

/** Replaces the working tree's dump files by `dump`. */
function writeDump(dir: string, dump: ReadonlyMap<string, string>): void {
  for (const sub of ['tables', 'sources']) fs.rmSync(path.join(dir, sub), { recursive: true, force: true });
  for (const [p, text] of dump) {
    fs.mkdirSync(path.dirname(path.join(dir, p)), { recursive: true });
    fs.writeFileSync(path.join(dir, p), text);
  }
}

/** A git repository with base on main, branches ours and theirs; returns its directory (on branch ours). */
function gitRepo(dir: string, base: Map<string, string>, ours: Map<string, string>, theirs: Map<string, string>): void {
  fs.mkdirSync(dir, { recursive: true });
  mustGit(dir, ['init', '--quiet', '-b', 'main']);
  mustGit(dir, ['config', 'gc.auto', '0']);
  writeDump(dir, base);
  mustGit(dir, ['add', '--all']);
  mustGit(dir, ['commit', '--quiet', '-m', 'base']);
  mustGit(dir, ['checkout', '--quiet', '-b', 'theirs']);
  writeDump(dir, theirs);
  mustGit(dir, ['add', '--all']);
  mustGit(dir, ['commit', '--quiet', '-m', 'theirs']);
  mustGit(dir, ['checkout', '--quiet', '-b', 'ours', 'main']);
  writeDump(dir, ours);
  mustGit(dir, ['add', '--all']);
  mustGit(dir, ['commit', '--quiet', '-m', 'ours']);
}

async function run(): Promise<SectionResult> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'marginalia-bench-merge-'));
  try {
    const rnd = mulberry32(16);
    const baseFile = path.join(dir, 'base.qda');
    const oursFile = path.join(dir, 'ours.qda');
    const theirsFile = path.join(dir, 'theirs.qda');
    log(`base project: ${BASE.toLocaleString('en')} segments; ours and theirs add ${ADDED.toLocaleString('en')} each`);
    let t = performance.now();
    const { texts, codes } = await makeBase(baseFile, rnd);
    fs.copyFileSync(baseFile, oursFile);
    fs.copyFileSync(baseFile, theirsFile);
    const aliceCodings = randomCodings(rnd, texts, codes, ADDED);
    const fresh = randomCodings(rnd, texts, codes, ADDED);
    // every other one of bob's codings is on alice's text with alice's code (double coding)
    const bobCodings = fresh.map((c, i) => (i % 2 === 0 ? (aliceCodings[i] as Coding) : c));
    for (const [file, codings, coder] of [
      [oursFile, aliceCodings, 'alice'],
      [theirsFile, bobCodings, 'bob'],
    ] as const) {
      const store = await ProjectStore.open(file, { checkpointIdleMs: 0, journalMaxBytes: Number.MAX_SAFE_INTEGER });
      try {
        addSegments(store, codings, texts, coder);
        store.checkpoint();
      } finally {
        await store.close();
      }
    }
    const baseDump = await dumpOf(baseFile);
    const oursDump = await dumpOf(oursFile);
    const theirsDump = await dumpOf(theirsFile);
    const dumpBytes = (d: Map<string, string>) => [...d.values()].reduce((n, s) => n + Buffer.byteLength(s), 0);
    log(`projects and dumps made in ${((performance.now() - t) / 1000).toFixed(1)} s (ours dump ${(dumpBytes(oursDump) / 1e6).toFixed(1)} MB); git repository`);

    t = performance.now();
    const repo = path.join(dir, 'git');
    gitRepo(repo, baseDump, oursDump, theirsDump);
    log(`git repository made in ${((performance.now() - t) / 1000).toFixed(1)} s`);

    const parse: number[] = [];
    const merge: number[] = [];
    const apply: number[] = [];
    const total: number[] = [];
    const floor: number[] = [];
    /** this process's CPU (user + system) per step, ms: the work itself, whatever else the machine runs */
    const cpu = { parse: [] as number[], merge: [] as number[], apply: [] as number[], total: [] as number[] };
    const cpuMs = () => {
      const c = process.cpuUsage();
      return (c.user + c.system) / 1000;
    };
    let gitStatus: number | null = null;
    let error: string | undefined;
    let summary = '';
    for (let r = 0; r < REPS; r++) {
      // floor: git's textual merge of the same files, on a fresh ours branch each time
      mustGit(repo, ['checkout', '--quiet', '-f', '-B', 'ours-try', 'ours']);
      const g = git(repo, ['merge', '--no-edit', '--quiet', 'theirs']);
      floor.push(g.ms);
      gitStatus = g.status;
      mustGit(repo, ['reset', '--quiet', '--hard', 'ours']);

      const work = path.join(dir, `work-${r}.qda`);
      fs.copyFileSync(oursFile, work);
      const store = await ProjectStore.open(work, { checkpointIdleMs: 0, journalMaxBytes: Number.MAX_SAFE_INTEGER });
      try {
        const rows = new StoreDumpAccess(store);
        // the generation the sync reads with its dump of ours
        const generation = rows.writeGeneration;
        const c0 = cpuMs();
        const t0 = performance.now();
        const { base, ours, theirs, skipped } = parseForMerge(baseDump, oursDump, theirsDump);
        const t1 = performance.now();
        const c1 = cpuMs();
        const idFloor = Object.fromEntries(
          store.all<{ name: string; seq: number }>('SELECT name, seq FROM sqlite_sequence').map((x) => [x.name, Number(x.seq)]),
        );
        const outcome = mergeDumps(base, ours, theirs, { now: new Date().toISOString(), idFloor });
        const t2 = performance.now();
        const c2 = cpuMs();
        // RemoteSync.apply: one journaled transaction, only if the project still equals the snapshot
        const applied = store.transaction(() => {
          if (rows.writeGeneration !== generation) return false;
          rows.applyChanges(
            planMergeChanges(
              rows.tables().filter((x) => isDumpedTable(x.name)),
              ours,
              outcome.merged,
            ),
          );
          return true;
        });
        const t3 = performance.now();
        const c3 = cpuMs();
        cpu.parse.push(c1 - c0);
        cpu.merge.push(c2 - c1);
        cpu.apply.push(c3 - c2);
        cpu.total.push(c3 - c0);
        parse.push(t1 - t0);
        merge.push(t2 - t1);
        apply.push(t3 - t2);
        total.push(t3 - t0);
        log(
          `rep ${r + 1}/${REPS}: parse ${ms(t1 - t0)} ms, mergeDumps ${ms(t2 - t1)} ms, apply ${ms(t3 - t2)} ms (CPU ${ms(c3 - c0)} ms); git merge ${ms(g.ms)} ms (exit ${g.status})`,
        );

        // cross-check: every segment of both sides, each GUID once, no conflict
        const want = BASE + 2 * ADDED;
        const c = store.get<{ n: number; g: number; alice: number; bob: number }>(
          "SELECT count(*) AS n, count(DISTINCT guid) AS g, sum(owner = 'alice') AS alice, sum(owner = 'bob') AS bob FROM segments",
        ) as { n: number; g: number; alice: number; bob: number };
        const mergedRows = (outcome.merged.get('segments')?.rows.length ?? 0) + (skipped.segments ?? 0);
        const problems = [
          !applied ? 'the project differed from the ours dump' : '',
          c.n !== want ? `${c.n} segments in the project, expected ${want}` : '',
          c.g !== c.n ? `${c.n - c.g} duplicate segment GUIDs` : '',
          c.alice !== ADDED || c.bob !== ADDED ? `alice ${c.alice}, bob ${c.bob} segments, expected ${ADDED} each` : '',
          mergedRows !== want ? `${mergedRows} segments in the merged dump and left out as unchanged` : '',
          outcome.conflicts.length > 0 ? `${outcome.conflicts.length} conflicts (none expected)` : '',
        ].filter(Boolean);
        if (problems.length > 0) error = `cross-check failed: ${problems.join('; ')}`;
        summary = `${c.n.toLocaleString('en')} segments after the merge (${c.g.toLocaleString('en')} distinct GUIDs), ${outcome.summary.renumbered.toLocaleString('en')} of theirs' rows renumbered, ${outcome.conflicts.length} conflicts`;
      } finally {
        await store.close();
        fs.rmSync(work, { force: true });
      }
    }
    const s = { parse: stats(parse), merge: stats(merge), apply: stats(apply), total: stats(total), floor: stats(floor) };
    const row = (label: string, x: ReturnType<typeof stats>, c?: number[]) => [
      label,
      ms(x.p50),
      ms(x.min),
      ms(x.max),
      (x.p50 / s.floor.p50).toFixed(2),
      c ? ms(stats(c).p50) : 'n/a (child process)',
    ];
    return {
      title: `Merging two histories: ${ADDED.toLocaleString('en')} new segments on each side into a ${BASE.toLocaleString('en')}-segment project`,
      body: [
        machineLine(),
        '',
        table(
          ['step', `median ms (n=${REPS})`, 'min ms', 'max ms', '/ floor', 'CPU ms, median'],
          [
            row('parseForMerge of base, ours and theirs (unchanged rows left out)', s.parse, cpu.parse),
            row('mergeDumps', s.merge, cpu.merge),
            row('apply: one journaled transaction (generation check, planMergeChanges, row changes, GUID follow-up)', s.apply, cpu.apply),
            row('total: parse + merge + apply (the goal figure)', s.total, cpu.total),
            row(
              `FLOOR: git merge --no-edit of the same dump files (exit ${gitStatus}${gitStatus === 1 ? ': textual conflict in tables/segments.jsonl, both sides append rows with the same new ids' : ''})`,
              s.floor,
            ),
          ],
        ),
        '',
        `Cross-check: ${summary}. Ours dump ${(dumpBytes(oursDump) / 1e6).toFixed(1)} MB in ${oursDump.size} files.`,
      ],
      figures: [
        {
          name: `merge of two copies with ${ADDED.toLocaleString('en')} new segments each into a ${BASE.toLocaleString('en')}-segment project (parse + mergeDumps + apply in one transaction)`,
          value: s.total.p50,
          unit: 'ms',
          goal: GOAL_MS,
          goalSource: 'issue 16',
          floor: { label: 'git merge of the two dumps', value: s.floor.p50 },
          atGoalSize: BASE >= 100_000,
        },
      ],
      ...(error ? { error } : {}),
    };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

sectionMain(run);
