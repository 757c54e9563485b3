/**
 * Crash test of the project store: the real server (`bin/marginalia.js serve`, run `npm run build` first)
 * takes mutations from several concurrent callers and is SIGKILLed at random moments. After every kill the
 * project must open, pass `PRAGMA integrity_check`, hold every mutation whose success response arrived, and
 * hold nothing of a call that got a failure response. Then the next round restarts the server on the same
 * project.
 *
 * Environment: CRASH_KILLS (rounds of the load test, default 50), CRASH_SEED (PRNG seed, default random and
 * printed), CRASH_REPLAY_ENTRIES (journal length of the replay variant, default 1500), CRASH_REPLAY_KILLS
 * (kills during open in the replay variant, default 8), CRASH_VERBOSE=1 (a line per round).
 *
 * How "present" is decided without trusting the server: every call carries a unique `X-Correlation-Id`, which
 * the pipeline stores with the call's events in the same transaction. The test keeps its own model of the
 * codes and segments built only from success responses. Calls cut off by the kill (no response) are
 * "unknown": they may or may not have committed; the events table says which, and committed ones are added
 * to the model. Locks in the load generator keep in-flight calls on disjoint codes (a merge or a
 * delete_segment never runs beside another call on the same code), so the order of commits among in-flight
 * calls never matters. After reconciling, the project's codes (id -> name) and segments (id -> code, range)
 * must equal the model exactly.
 *
 * Besides code creation, batches (some failing as a whole), merges and segment deletions, the load imports
 * code lists (import_data; the imported codes must all be there or none), and has the agent propose codes
 * (create_code with the agent's token waits for approval) that the researcher approves (POST
 * /approvals/:id/approve; an approval committed when its stored request says `completed`). Version control is
 * on: automatic snapshots are committed while the load runs (a short snapshot debounce in some rounds), so
 * kills also land inside git commits; after every restart list_snapshots must still answer, and at the end a
 * new change must still be snapshotted.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { uuidFromStored } from '../../src/store/eventRows';
import { ProjectStore, journalPath } from '../../src/store/projectStore';
import { AS_AGENT, AS_RESEARCHER, callTool, REPO_ROOT, request, startServer, tmpDir, type ServerProcess } from '../helpers/serverProcess';
import { mulberry32 as prng } from '../../src/core/random';

/** 200 kills locally; CI runs a smaller count (issue 7: crash and load within ten minutes together). */
const KILLS = Number(process.env.CRASH_KILLS ?? (process.env.CI === 'true' ? 40 : 200));
const SEED = Number(process.env.CRASH_SEED ?? Math.floor(Math.random() * 2 ** 31));
const REPLAY_ENTRIES = Number(process.env.CRASH_REPLAY_ENTRIES ?? 1500);
const REPLAY_KILLS = Number(process.env.CRASH_REPLAY_KILLS ?? 8);
/** Coding ranges of failing (poison) batches lie in the last POISON_REGION code points; normal ones never do. */
const POISON_REGION = 1000;
const VERBOSE = process.env.CRASH_VERBOSE === '1';
const HEADERS = { 'x-marginalia-client': 'crash-test' };

const rnd = prng(SEED);
const int = (lo: number, hi: number) => lo + Math.floor(rnd() * (hi - lo + 1)); // inclusive
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** A text of about `n` code points with accents and astral characters (positions count code points). */
function makeText(n: number): string {
  const words = ['garden', 'trust', 'neighbour', 'soil', 'café', 'naïve', 'water', 'rota', '🌱', 'compost', 'fence', 'harvest', '日本'];
  const out: string[] = [];
  let len = 0;
  while (len < n) {
    const w = words[int(0, words.length - 1)] ?? 'x';
    out.push(w);
    len += [...w].length + 1;
  }
  return out.join(' ');
}

interface Seg {
  code_id: number;
  start: number;
  end: number;
}

type Kind = 'create_code' | 'batch' | 'poison_batch' | 'merge' | 'delete_segment' | 'import' | 'approval';

/** One call the test sent, and what became of it. */
interface Op {
  kind: Kind;
  tool: string;
  corr: string;
  args: Record<string, unknown>;
  /** pending: sent; ok/failed: a response arrived; unknown: the kill cut it off */
  state: 'pending' | 'ok' | 'failed' | 'unknown';
  /** whether a success changed something (so it has events) */
  effect?: boolean;
  /** for unknown calls after the kill: whether the project shows it committed */
  committed?: boolean;
  /** import and approval: the names of the codes it creates (resolved to ids from the project in verify) */
  names?: string[];
  /** approval: the request id (the approval's events carry it as their correlation id) */
  requestId?: string;
  /** import and approval: the created codes have been added to the model */
  resolved?: boolean;
  locksShared: number[];
  locksExcl: number[];
}

/** The expected project content, built from success responses (and reconciled unknown calls). */
class Model {
  readonly codes = new Map<number, string>();
  readonly segments = new Map<number, Seg>();
  /** ids ever seen, for cheap random picks (entries may be gone from the maps) */
  codeIds: number[] = [];
  segIds: number[] = [];

  addCode(id: number, name: string): void {
    const had = this.codes.get(id);
    assert.ok(had === undefined || had === name, `code ${id} is "${had}" in the model but the server says "${name}"`);
    if (had === undefined) this.codeIds.push(id);
    this.codes.set(id, name);
  }
  addSegment(id: number, s: Seg): void {
    const had = this.segments.get(id);
    if (had) assert.deepEqual(had, s, `segment ${id} differs from the model`);
    else this.segIds.push(id);
    this.segments.set(id, s);
  }
  /** merge_codes: segments of `src` move to `tgt`, exact duplicates on `tgt` keep the smallest id, `src` goes. Returns duplicates removed. */
  merge(src: number, tgt: number): number {
    for (const s of this.segments.values()) if (s.code_id === src) s.code_id = tgt;
    const keep = new Map<string, number>();
    for (const [id, s] of this.segments) {
      if (s.code_id !== tgt) continue;
      const k = `${s.start}:${s.end}`;
      const cur = keep.get(k);
      if (cur === undefined || id < cur) keep.set(k, id);
    }
    let removed = 0;
    for (const [id, s] of [...this.segments]) {
      if (s.code_id === tgt && keep.get(`${s.start}:${s.end}`) !== id) {
        this.segments.delete(id);
        removed++;
      }
    }
    this.codes.delete(src);
    return removed;
  }
  compact(): void {
    this.codeIds = this.codeIds.filter((id) => this.codes.has(id));
    this.segIds = this.segIds.filter((id) => this.segments.has(id));
  }
}

/** Everything the test needs across rounds. */
class Harness {
  readonly model = new Model();
  readonly ops: Op[] = [];
  readonly errors: string[] = [];
  sourceId = 0;
  textLength = 0;
  private n = 0;
  private shared = new Map<number, number>();
  private excl = new Set<number>();
  stats = {
    acked: 0,
    ackedCodes: 0,
    ackedSegments: 0,
    ackedImports: 0,
    ackedApprovals: 0,
    failedAsExpected: 0,
    unknown: 0,
    unknownCommitted: 0,
    checkedCodes: 0,
    checkedSegments: 0,
    checks: 0,
    tornTails: 0,
    leftoverApprovals: 0,
    replayed: 0,
    snapshotChecks: 0,
  };

  constructor(readonly project: string) {}

  /** Where import files are written (beside the project, inside its folder). */
  private importDir(): string {
    const dir = path.join(path.dirname(this.project), 'imports');
    fs.mkdirSync(dir, { recursive: true });
    return dir;
  }

  private corr(kind: string): string {
    return `${kind}-${SEED}-${++this.n}`;
  }

  resetLocks(): void {
    this.shared.clear();
    this.excl.clear();
  }
  private canShare(c: number): boolean {
    return !this.excl.has(c);
  }
  private canExcl(c: number): boolean {
    return !this.excl.has(c) && !(this.shared.get(c) ?? 0);
  }

  /** A random code of the model usable under `ok`, or undefined. */
  private pickCode(ok: (c: number) => boolean, not?: number): number | undefined {
    const ids = this.model.codeIds;
    for (let i = 0; i < 12 && ids.length > 0; i++) {
      const c = ids[int(0, ids.length - 1)] ?? 0;
      if (c !== not && this.model.codes.has(c) && ok(c)) return c;
    }
    return undefined;
  }

  private range(): [number, number] {
    const start = int(0, this.textLength - POISON_REGION - 80);
    return [start, start + int(1, 60)];
  }

  /** The next call to send, with its locks taken. */
  next(): Op {
    const roll = rnd();
    if (roll < 0.03) return this.importCodes();
    if (roll < 0.05) return this.approval();
    if (roll < 0.08) return this.poisonBatch() ?? this.createCode();
    if (roll < 0.14) return this.merge() ?? this.createCode();
    if (roll < 0.26) return this.deleteSegment() ?? this.createCode();
    if (roll < 0.62) return this.batch() ?? this.createCode();
    return this.createCode();
  }

  private op(kind: Kind, tool: string, args: Record<string, unknown>, shared: number[] = [], excl: number[] = []): Op {
    for (const c of shared) this.shared.set(c, (this.shared.get(c) ?? 0) + 1);
    for (const c of excl) this.excl.add(c);
    const op: Op = { kind, tool, corr: this.corr(kind), args, state: 'pending', locksShared: shared, locksExcl: excl };
    this.ops.push(op);
    return op;
  }

  release(op: Op): void {
    for (const c of op.locksShared) this.shared.set(c, (this.shared.get(c) ?? 1) - 1);
    for (const c of op.locksExcl) this.excl.delete(c);
    op.locksShared = [];
    op.locksExcl = [];
  }

  createCode(): Op {
    const name = `c${this.n + 1}-${int(0, 1e6).toString(36)}`;
    const color = `#${int(0, 0xffffff).toString(16).padStart(6, '0')}`;
    return this.op('create_code', 'create_code', { name, color, memo: rnd() < 0.3 ? `memo of ${name}\nline 2 é🌱` : undefined });
  }

  /** import_data of a code list of 1-4 new code names (flat: every line a code). */
  importCodes(): Op {
    const names = Array.from({ length: int(1, 4) }, (_, i) => `imp${this.n + 1}-${i}-${int(0, 1e6).toString(36)}`);
    const file = path.join(this.importDir(), `codes-${SEED}-${this.n + 1}.txt`);
    fs.writeFileSync(file, `${names.join('\n')}\n`);
    const op = this.op('import', 'import_data', { format: 'code_list', source_path: file });
    op.names = names;
    return op;
  }

  /** The agent proposes a code (pending), the researcher approves it: two calls, one op. */
  approval(): Op {
    const name = `ai${this.n + 1}-${int(0, 1e6).toString(36)}`;
    const op = this.op('approval', 'create_code', { name, color: '#59A14F', memo: rnd() < 0.5 ? 'proposed by the agent' : undefined });
    op.names = [name];
    return op;
  }

  batch(): Op | undefined {
    const count = int(1, 6);
    const codes = new Set<number>();
    for (let i = 0; i < count; i++) {
      const c = this.pickCode((x) => this.canShare(x));
      if (c !== undefined) codes.add(c);
    }
    if (codes.size === 0) return undefined;
    const oneRange = rnd() < 0.3 ? this.range() : undefined;
    const operations = [...codes].map((code_id) => {
      let r = oneRange ?? this.range();
      if (!oneRange && rnd() < 0.1) {
        // re-apply an existing coding: the call must answer created: false with the same segment
        const id = this.model.segIds[int(0, this.model.segIds.length - 1)];
        const s = id === undefined ? undefined : this.model.segments.get(id);
        if (s && s.code_id === code_id) r = [s.start, s.end];
      }
      return { code_id, source_id: this.sourceId, start_position: r[0], end_position: r[1], importance: int(0, 2) };
    });
    return this.op('batch', 'batch_apply_codes', { operations }, [...codes]);
  }

  poisonBatch(): Op | undefined {
    const codes = new Set<number>();
    for (let i = 0; i < int(1, 4); i++) {
      const c = this.pickCode((x) => this.canShare(x));
      if (c !== undefined) codes.add(c);
    }
    if (codes.size === 0) return undefined;
    const operations = [...codes].map((code_id) => {
      const start = int(this.textLength - POISON_REGION, this.textLength - 20);
      return { code_id, source_id: this.sourceId, start_position: start, end_position: start + int(1, 19) };
    });
    // The last operation ends past the text: the whole batch must fail with nothing applied.
    const last = [...codes][0] ?? 0;
    operations.push({ code_id: last, source_id: this.sourceId, start_position: this.textLength - 5, end_position: this.textLength + 5 });
    return this.op('poison_batch', 'batch_apply_codes', { operations }, [...codes]);
  }

  merge(): Op | undefined {
    const src = this.pickCode((c) => this.canExcl(c));
    if (src === undefined) return undefined;
    const tgt = this.pickCode((c) => this.canExcl(c), src);
    if (tgt === undefined) return undefined;
    return this.op('merge', 'merge_codes', { source_code_id: src, target_code_id: tgt }, [], [src, tgt]);
  }

  deleteSegment(): Op | undefined {
    const ids = this.model.segIds;
    for (let i = 0; i < 12 && ids.length > 0; i++) {
      const id = ids[int(0, ids.length - 1)] ?? 0;
      const s = this.model.segments.get(id);
      if (s && this.canExcl(s.code_id)) return this.op('delete_segment', 'delete_segment', { segment_id: id }, [], [s.code_id]);
    }
    return undefined;
  }

  /** Applies a response to the model (success) or records it (failure). */
  onResponse(op: Op, status: number, body: any): void {
    const where = `${op.tool} ${op.corr} ${JSON.stringify(op.args).slice(0, 300)}`;
    if (!body || typeof body !== 'object' || typeof body.success !== 'boolean') {
      this.errors.push(`${where}: not an envelope (HTTP ${status}): ${JSON.stringify(body).slice(0, 300)}`);
      op.state = 'failed';
      return;
    }
    if (!body.success) {
      op.state = 'failed';
      if (op.kind === 'poison_batch' && body.error_code === 'INVALID_POSITION') this.stats.failedAsExpected++;
      else this.errors.push(`${where}: unexpected failure ${body.error_code}: ${body.error}`);
      return;
    }
    if (op.kind === 'poison_batch') {
      op.state = 'ok';
      this.errors.push(`${where}: a batch with an operation past the text succeeded`);
      return;
    }
    op.state = 'ok';
    this.stats.acked++;
    const d = body.data;
    switch (op.kind) {
      case 'create_code':
        assert.equal(d.name, op.args.name);
        this.model.addCode(d.code_id, d.name);
        op.effect = true;
        this.stats.ackedCodes++;
        break;
      case 'batch': {
        const ops = op.args.operations as { code_id: number; start_position: number; end_position: number }[];
        for (const r of d.results as { index: number; segment_id: number; created: boolean }[]) {
          const o = ops[r.index];
          assert.ok(o);
          this.model.addSegment(r.segment_id, { code_id: o.code_id, start: o.start_position, end: o.end_position });
        }
        op.effect = d.created > 0;
        this.stats.ackedSegments += d.created;
        break;
      }
      case 'merge': {
        const src = op.args.source_code_id as number;
        const tgt = op.args.target_code_id as number;
        const removed = this.model.merge(src, tgt);
        if (d.duplicates_removed !== removed) this.errors.push(`${where}: server removed ${d.duplicates_removed} duplicates, the model ${removed}`);
        const count = [...this.model.segments.values()].filter((s) => s.code_id === tgt).length;
        if (d.target.segment_count !== count) this.errors.push(`${where}: target has ${d.target.segment_count} segments, the model ${count}`);
        op.effect = true;
        break;
      }
      case 'delete_segment':
        this.model.segments.delete(op.args.segment_id as number);
        op.effect = true;
        break;
      case 'import':
        // the ids come from the project in verify (import_data reports counts, not ids)
        if (d.created?.codes !== op.names?.length) this.errors.push(`${where}: created ${JSON.stringify(d.created)}, expected ${op.names?.length} codes`);
        op.effect = true;
        this.stats.ackedImports++;
        break;
      case 'approval':
        if (d.status !== 'completed' || d.result?.name !== op.names?.[0]) this.errors.push(`${where}: approval answered ${JSON.stringify(d).slice(0, 300)}`);
        else this.model.addCode(d.result.code_id, d.result.name);
        op.resolved = true;
        op.effect = true;
        this.stats.ackedApprovals++;
        break;
    }
  }

  /**
   * Reconciles the calls the kill cut off with what `store` holds, then checks the store against the model
   * and every call ever made against the events table.
   */
  verify(store: ProjectStore, label: string): void {
    assert.equal(store.integrityCheck(), 'ok', `${label}: integrity_check`);
    assert.deepEqual(store.all('PRAGMA foreign_key_check'), [], `${label}: foreign_key_check`);
    const committed = new Set(
      // a UUID is stored as its 16 bytes (migration 9): read back as the text the call sent
      store.all<{ c: unknown }>('SELECT DISTINCT correlation_id AS c FROM events WHERE correlation_id IS NOT NULL').map((r) => uuidFromStored(r.c)),
    );
    const segAt = (code: number, start: number, end: number) =>
      store.get<{ id: number }>('SELECT id FROM segments WHERE code_id = ? AND source_id = ? AND start_pos = ? AND end_pos = ?', [
        code,
        this.sourceId,
        start,
        end,
      ]);

    const codeNamed = (name: string) => store.get<{ id: number; name: string }>('SELECT id, name FROM codes WHERE name = ?', [name]);
    // acknowledged imports: every imported code is there (all or nothing), and joins the model
    for (const op of this.ops) {
      if (op.kind !== 'import' || op.state !== 'ok' || op.resolved) continue;
      for (const name of op.names ?? []) {
        const row = codeNamed(name);
        assert.ok(row, `${label}: acknowledged import ${op.corr} lost its code "${name}"`);
        this.model.addCode(row.id, row.name);
      }
      op.resolved = true;
    }
    for (const op of this.ops) {
      if (op.state !== 'unknown' || op.committed !== undefined) continue;
      // an approval commits when its request is stored as completed (the request itself is stored too, under
      // the same correlation id, when only the asking got through)
      op.committed =
        op.kind === 'approval'
          ? op.requestId !== undefined &&
            store.get<{ status: string }>('SELECT status FROM approval_requests WHERE request_id = ?', [op.requestId])?.status === 'completed'
          : committed.has(op.corr);
      if (!op.committed) continue;
      this.stats.unknownCommitted++;
      switch (op.kind) {
        case 'create_code': {
          const row = store.get<{ id: number; name: string }>('SELECT id, name FROM codes WHERE name = ?', [op.args.name as string]);
          assert.ok(row, `${label}: create_code ${op.corr} has events but no code "${String(op.args.name)}"`);
          this.model.addCode(row.id, row.name);
          break;
        }
        case 'batch':
          for (const o of op.args.operations as { code_id: number; start_position: number; end_position: number }[]) {
            const row = segAt(o.code_id, o.start_position, o.end_position);
            assert.ok(row, `${label}: batch ${op.corr} committed, but its coding ${JSON.stringify(o)} is missing (not all-or-nothing)`);
            this.model.addSegment(row.id, { code_id: o.code_id, start: o.start_position, end: o.end_position });
          }
          break;
        case 'merge':
          this.model.merge(op.args.source_code_id as number, op.args.target_code_id as number);
          break;
        case 'delete_segment':
          this.model.segments.delete(op.args.segment_id as number);
          break;
        case 'poison_batch':
          assert.fail(`${label}: a failing batch ${op.corr} has events`);
          break;
        case 'import':
        case 'approval': {
          const rows = (op.names ?? []).map(codeNamed);
          assert.ok(rows.every(Boolean), `${label}: ${op.kind} ${op.corr} committed, but not all of its codes are there (not all-or-nothing)`);
          for (const row of rows) if (row) this.model.addCode(row.id, row.name);
          op.resolved = true;
          break;
        }
      }
    }
    // an approval whose request or approval was cut off and left no trace must not have created its code
    for (const op of this.ops) {
      if (op.kind === 'approval' && op.state === 'unknown' && !op.committed)
        assert.equal(codeNamed(op.names?.[0] ?? ''), undefined, `${label}: uncommitted approval ${op.corr} created its code`);
    }

    for (const op of this.ops) {
      if (op.state === 'ok' && op.effect)
        assert.ok(
          committed.has(op.requestId ?? op.corr),
          `${label}: acknowledged ${op.tool} ${op.corr} has no events: ${JSON.stringify(op.args).slice(0, 200)}`,
        );
      if (op.state === 'failed') assert.ok(!committed.has(op.corr), `${label}: failed ${op.tool} ${op.corr} left events`);
    }

    const codes = store.all<{ id: number; name: string }>('SELECT id, name FROM codes ORDER BY id');
    const byId = new Map(codes.map((c) => [c.id, c.name]));
    const missingCodes = [...this.model.codes].filter(([id, name]) => byId.get(id) !== name);
    assert.deepEqual(missingCodes, [], `${label}: acknowledged codes missing`);
    assert.deepEqual(
      codes.map((c) => [c.id, c.name]),
      [...this.model.codes].sort((a, b) => a[0] - b[0]),
      `${label}: codes differ from the model`,
    );
    const segs = store.all<{ id: number; code_id: number; source_id: number; start_pos: number; end_pos: number }>(
      'SELECT id, code_id, source_id, start_pos, end_pos FROM segments ORDER BY id',
    );
    const segIds = new Set(segs.map((s) => s.id));
    const missingSegs = [...this.model.segments.keys()].filter((id) => !segIds.has(id));
    assert.deepEqual(missingSegs.slice(0, 20), [], `${label}: ${missingSegs.length} acknowledged segments missing`);
    assert.deepEqual(
      segs.map((s) => [s.id, s.code_id, s.start_pos, s.end_pos]),
      [...this.model.segments].sort((a, b) => a[0] - b[0]).map(([id, s]) => [id, s.code_id, s.start, s.end]),
      `${label}: segments differ from the model`,
    );
    assert.ok(segs.every((s) => s.source_id === this.sourceId));
    const poisoned = segs.filter((s) => s.end_pos > this.textLength - POISON_REGION);
    assert.deepEqual(poisoned, [], `${label}: segments from failed batches are present`);
    const src = store.get<{ content_length: number }>('SELECT content_length FROM sources WHERE id = ?', [this.sourceId]);
    assert.equal(src?.content_length, this.textLength, `${label}: the source is intact`);

    this.stats.checks++;
    this.stats.checkedCodes += codes.length;
    this.stats.checkedSegments += segs.length;
    this.model.compact();
  }

  /**
   * Verifies the project on disk as a crash left it. `inPlace` opens the project itself (taking over the dead
   * server's lock, replaying, cutting a torn tail, checkpointing on close); otherwise a copy is opened, which
   * leaves the real journal for the next server start to replay.
   */
  async verifyOnDisk(label: string, inPlace: boolean): Promise<void> {
    let file = this.project;
    let copyDir: string | undefined;
    if (!inPlace) {
      copyDir = tmpDir('marginalia-crash-copy-');
      file = path.join(copyDir, path.basename(this.project));
      fs.copyFileSync(this.project, file);
      if (fs.existsSync(journalPath(this.project))) fs.copyFileSync(journalPath(this.project), journalPath(file));
    }
    const lines: string[] = [];
    const logger = { info: (m: string) => lines.push(m), warn: (m: string) => lines.push(m), error: (m: string) => lines.push(m) };
    const store = await ProjectStore.open(file, { checkpointIdleMs: 0, noLock: !inPlace, logger });
    try {
      this.verify(store, label);
    } finally {
      await store.close();
      if (copyDir) fs.rmSync(copyDir, { recursive: true, force: true });
    }
    if (lines.some((l) => /torn journal tail/.test(l))) this.stats.tornTails++;
    for (const l of lines) {
      const m = /replayed (\d+) journal entries/.exec(l);
      if (m) this.stats.replayed += Number(m[1]);
    }
  }

  /** After a kill: every call still pending is unknown. */
  markUnknown(): number {
    let n = 0;
    for (const op of this.ops) {
      if (op.state === 'pending') {
        op.state = 'unknown';
        this.release(op);
        n++;
      }
    }
    this.stats.unknown += n;
    return n;
  }

  /**
   * After a restart the researcher rejects the agent proposals a kill left waiting (asked, never decided): they are
   * stored, so over many kills they would fill the approval queue (approvals.max_pending, 10) and refuse every new
   * proposal. A rejected proposal creates nothing, which is what verify expects of an undecided one.
   */
  async rejectLeftoverApprovals(base: string, label: string): Promise<void> {
    const listed = await request<{ success: boolean; data: { approvals: { request_id: string }[] } }>(base, 'GET', '/approvals?status=pending', undefined, {
      ...HEADERS,
      ...AS_RESEARCHER,
    });
    assert.ok(listed.body.success, `${label}: GET /approvals failed: ${JSON.stringify(listed.body).slice(0, 300)}`);
    for (const { request_id: id } of listed.body.data.approvals) {
      const res = await request(base, 'POST', `/approvals/${id}/reject`, { reason: 'left waiting by a kill' }, { ...HEADERS, ...AS_RESEARCHER });
      assert.equal(res.status, 200, `${label}: rejecting ${id} answered ${res.status}: ${JSON.stringify(res.body).slice(0, 300)}`);
      this.stats.leftoverApprovals++;
    }
  }

  /** The server's own view after it replayed: the same codes and segments as the model. */
  async checkServer(base: string, label: string): Promise<void> {
    const codes = await callTool<{ count: number; codes: { code_id: number; name: string }[] }>(base, 'list_codes', {}, HEADERS);
    assert.ok(codes.body.success, `${label}: list_codes failed`);
    assert.deepEqual(
      codes.body.data.codes.map((c) => [c.code_id, c.name]).sort((a, b) => Number(a[0]) - Number(b[0])),
      [...this.model.codes].sort((a, b) => a[0] - b[0]),
      `${label}: the restarted server's codes differ from the model`,
    );
    const segs = await callTool<{ count: number }>(base, 'list_segments_for_source', { source_id: this.sourceId }, HEADERS);
    assert.ok(segs.body.success, `${label}: list_segments_for_source failed`);
    assert.equal(segs.body.data.count, this.model.segments.size, `${label}: the restarted server's segment count differs from the model`);
    // a kill inside a git commit must not break the version history
    const snaps = await callTool<{ snapshots: unknown[] }>(base, 'list_snapshots', { limit: 5 }, HEADERS);
    assert.ok(snaps.body.success, `${label}: list_snapshots failed: ${JSON.stringify(snaps.body).slice(0, 300)}`);
    this.stats.snapshotChecks++;
  }

  /** Sends one call; the response (if any arrives while `live()`) goes to the model. */
  async send(base: string, op: Op, live: () => boolean): Promise<void> {
    try {
      if (op.kind === 'approval') {
        const asked = await callTool<{ status: string; request_id: string }>(base, op.tool, op.args, { ...HEADERS, ...AS_AGENT, 'x-correlation-id': op.corr });
        if (!live()) return;
        if (asked.status !== 202 || !asked.body.success || asked.body.data.status !== 'pending_approval') {
          this.onResponse(
            op,
            asked.status,
            asked.body.success ? { success: false, error_code: 'NOT_PENDING', error: JSON.stringify(asked.body).slice(0, 200) } : asked.body,
          );
          return;
        }
        op.requestId = asked.body.data.request_id;
        const res = await request(base, 'POST', `/approvals/${op.requestId}/approve`, {}, { ...HEADERS, ...AS_RESEARCHER });
        if (live()) this.onResponse(op, res.status, res.body);
        return;
      }
      const res = await callTool(base, op.tool, op.args, { ...HEADERS, 'x-correlation-id': op.corr });
      if (live()) this.onResponse(op, res.status, res.body);
    } catch {
      // connection reset by the kill: the call stays pending and becomes unknown
    } finally {
      if (live() && op.state !== 'pending') this.release(op);
    }
  }

  /**
   * Sets up the project, all acknowledged: the text source the calls code, a few codes, and a large source
   * nobody codes that makes every checkpoint write a few MB (so kills land inside checkpoints too).
   */
  async setup(base: string, paddingBytes = 0): Promise<void> {
    if (paddingBytes > 0) {
      const pad = await callTool(base, 'add_text_source', { name: 'padding.txt', content: 'lorem ipsum '.repeat(Math.ceil(paddingBytes / 12)) }, HEADERS);
      assert.ok(pad.body.success, JSON.stringify(pad.body).slice(0, 300));
    }
    const text = makeText(20_000);
    const res = await callTool(base, 'add_text_source', { name: 'interview.txt', content: text }, HEADERS);
    assert.ok(res.body.success, JSON.stringify(res.body).slice(0, 300));
    this.sourceId = res.body.data.source_id;
    this.textLength = [...text].length;
    assert.equal(res.body.data.length, this.textLength);
    for (let i = 0; i < 8; i++) {
      const op = this.createCode();
      await this.send(base, op, () => true);
      assert.equal(op.state, 'ok');
    }
    const vcs = await callTool(base, 'initialize_version_control', {}, HEADERS);
    assert.ok(vcs.body.success, JSON.stringify(vcs.body).slice(0, 300));
  }
}

/**
 * The project's `.marginalia/config.yaml` for the crash test: the agent may make many calls (its create_code
 * still waits for approval, the default).
 */
function writeAgentConfig(project: string): void {
  const dir = path.join(path.dirname(project), '.marginalia');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(
    path.join(dir, 'config.yaml'),
    [
      'agent_context:',
      '  sessions:',
      '    max_concurrent: 1000',
      '  rate_limits:',
      '    requests_per_minute: 1000000',
      '    mutations_per_minute: 1000000',
      '',
    ].join('\n'),
  );
}

/** Resolves when `child` has exited (at once if it already has). */
function exited(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
}

// ServerProcess.kill()/stop() of the helper wait on an 'exit' listener that startServer removes once the
// server listens (removeAllListeners('exit')), so they never resolve; these wait on the child directly.

/** SIGKILL and wait for the exit. */
async function kill(s: ServerProcess): Promise<void> {
  const done = exited(s.child);
  s.child.kill('SIGKILL');
  await done;
}

/** SIGTERM (checkpoint and close) and wait for the exit; resolves with the exit code. */
async function stop(s: ServerProcess): Promise<number | null> {
  const done = exited(s.child);
  s.child.kill('SIGTERM');
  return (await done).code;
}

/** The server's temp files left by a checkpoint the kill interrupted. */
function tmpLeftovers(project: string): string[] {
  const base = path.basename(project);
  return fs.readdirSync(path.dirname(project)).filter((f) => f.startsWith(`${base}.tmp-`));
}

describe('crash: SIGKILL under load', function () {
  this.timeout(0);
  const dirs: string[] = [];
  const servers: ServerProcess[] = [];

  before(function () {
    if (!fs.existsSync(path.join(REPO_ROOT, 'dist', 'cli.js'))) throw new Error('dist/cli.js is missing: run `npm run build` first');
    console.log(`      CRASH_SEED=${SEED} CRASH_KILLS=${KILLS}`);
  });

  after(async () => {
    for (const s of servers) await kill(s).catch(() => undefined);
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  it(`keeps every acknowledged mutation across ${KILLS} kills`, async function () {
    const t0 = Date.now();
    const dir = tmpDir('marginalia-crash-');
    dirs.push(dir);
    const project = path.join(dir, 'crash.qda');
    const h = new Harness(project);
    writeAgentConfig(project);

    const first = await startServer(project);
    servers.push(first);
    await h.setup(first.base, 3_000_000);
    await kill(first);
    await h.verifyOnDisk('after setup', false);

    let checkpointRounds = 0;
    let midCheckpointKills = 0;
    let leftovers = new Set(tmpLeftovers(project));
    for (let round = 1; round <= KILLS; round++) {
      const label = `round ${round} (seed ${SEED})`;
      // Idle checkpoints: in about half the rounds a tiny idle time (0 disables it), else the default 2 s.
      const idle = rnd() < 0.55 ? int(0, 30) : undefined;
      // Snapshots: in about half the rounds a short debounce, so git commits run while the load does.
      const debounce = rnd() < 0.5 ? int(0, 200) : undefined;
      const server = await startServer(project, [
        ...(idle === undefined ? [] : ['--checkpoint-idle-ms', String(idle)]),
        ...(debounce === undefined ? [] : ['--snapshot-debounce-ms', String(debounce)]),
      ]);
      servers.push(server);
      if (/torn journal tail/.test(server.stderr())) h.stats.tornTails++;
      await h.checkServer(server.base, `${label}, after restart`);
      await h.rejectLeftoverApprovals(server.base, label);
      const inoAtStart = fs.statSync(project).ino;

      let live = true;
      let stop = false;
      const inflight = new Set<Promise<void>>();
      const workers = int(1, 8);
      const pauseChance = rnd() * 0.3;
      // With a tiny idle time the load comes in bursts, so idle checkpoints run between them.
      let gateUntil = 0;
      const pacer = async () => {
        while (!stop && idle) {
          await sleep(int(20, 150));
          gateUntil = Date.now() + int(0, 45);
        }
      };
      const worker = async () => {
        while (!stop) {
          while (Date.now() < gateUntil) await sleep(gateUntil - Date.now());
          const op = h.next();
          const p = h.send(server.base, op, () => live);
          inflight.add(p);
          await p;
          inflight.delete(p);
          if (rnd() < pauseChance) await sleep(int(0, 40));
        }
      };
      const running = Array.from({ length: workers }, () => worker());
      const pacing = pacer();
      const early = rnd() < 0.1;
      const killAt = early ? int(0, 10) : int(20, 700);
      // ... and not before a few acknowledgements, so a slow (loaded) machine still gets load in each round
      const minAcks = early ? 0 : int(0, 40);
      const acksBefore = h.stats.acked;
      const t = Date.now();
      await sleep(killAt);
      while (h.stats.acked - acksBefore < minAcks && Date.now() - t < 10_000) await sleep(2);
      // Some rounds aim the kill at the idle checkpoint: the load stops, and the kill comes just after the
      // idle time has passed, while the checkpoint exports the database or writes the file. Most of them
      // watch for the checkpoint's temporary file and kill as soon as it is there (a checkpoint of this
      // project takes about 20 ms, half of it writing and syncing that file), the others after a random
      // delay of up to 15 ms past the idle time.
      const aimed = idle !== undefined && idle > 0 && rnd() < 0.4;
      if (aimed) {
        stop = true;
        while (inflight.size > 0) await sleep(0);
        if (rnd() < 0.7) {
          const until = Date.now() + idle + 1000;
          // every millisecond: the file exists for about 10 ms, and a tighter loop would take a CPU from the server
          while (!tmpLeftovers(project).some((f) => !leftovers.has(f)) && Date.now() < until) await sleep(1);
        } else await sleep(idle + int(0, 15));
      }
      stop = true;
      await kill(server);
      // Responses already in our socket buffers still count (the server answers only after the commit).
      await Promise.race([Promise.allSettled([...inflight, ...running, pacing]), sleep(3000)]);
      live = false;
      h.markUnknown();
      h.resetLocks();
      assert.deepEqual(h.errors, [], `${label}: unexpected responses`);

      if (fs.statSync(project).ino !== inoAtStart) checkpointRounds++;
      const now = new Set(tmpLeftovers(project));
      const midCheckpoint = [...now].some((f) => !leftovers.has(f));
      if (midCheckpoint) midCheckpointKills++;
      leftovers = now;

      const tv = Date.now();
      await h.verifyOnDisk(label, round % 5 === 0);
      if (VERBOSE) {
        const s = h.stats;
        console.log(
          `      ${label}: idle=${idle ?? 'default'} workers=${workers} kill@${killAt}ms${aimed ? ' aimed' : ''}${midCheckpoint ? ' MID-CHECKPOINT' : ''} acked=${s.acked} cut-off=${s.unknown} verify=${Date.now() - tv}ms`,
        );
      }
    }

    // A clean restart sees everything, still snapshots a change, and a clean stop checkpoints.
    const last = await startServer(project, ['--snapshot-debounce-ms', '50']);
    servers.push(last);
    await h.checkServer(last.base, 'final restart');
    const count = async () =>
      (await callTool<{ snapshots: unknown[] }>(last.base, 'list_snapshots', { limit: 1000 }, HEADERS)).body.data?.snapshots.length ?? -1;
    const snapshotsBefore = await count();
    const finalOp = h.createCode();
    await h.send(last.base, finalOp, () => true);
    assert.equal(finalOp.state, 'ok');
    const tSnap = Date.now();
    while ((await count()) <= snapshotsBefore && Date.now() - tSnap < 30_000) await sleep(100);
    assert.ok((await count()) > snapshotsBefore, `a change after ${KILLS} kills is still snapshotted (${snapshotsBefore} snapshots before)`);
    assert.equal(await stop(last), 0);
    assert.equal(fs.statSync(journalPath(project)).size, 0, 'a clean stop checkpoints');
    await h.verifyOnDisk('after clean stop', true);

    const s = h.stats;
    console.log(
      `      crash summary: rounds=${KILLS} acknowledged=${s.acked} (codes=${s.ackedCodes}, new segments=${s.ackedSegments}, imports=${s.ackedImports}, approvals=${s.ackedApprovals}) ` +
        `snapshot-history-checks=${s.snapshotChecks} snapshots=${snapshotsBefore} ` +
        `failed-as-expected=${s.failedAsExpected} cut-off=${s.unknown} (committed=${s.unknownCommitted}) ` +
        `checks=${s.checks} checked codes=${s.checkedCodes} segments=${s.checkedSegments} ` +
        `rounds-with-checkpoint=${checkpointRounds} kills-mid-checkpoint=${midCheckpointKills} torn-tails=${s.tornTails} leftover-approvals-rejected=${s.leftoverApprovals} ` +
        `replayed-entries=${s.replayed} seed=${SEED} ${((Date.now() - t0) / 1000).toFixed(1)}s`,
    );
    assert.ok(s.acked > KILLS, 'the load acknowledged mutations');
    // aimed kills land inside a checkpoint in about one round in six (33 of 200 on 2026-11-25): at the full
    // count, some must have
    if (KILLS >= 100) assert.ok(midCheckpointKills > 0, `no kill of ${KILLS} landed inside a checkpoint`);
  });

  it(`survives ${REPLAY_KILLS} kills while a long journal is replayed on open`, async function () {
    const t0 = Date.now();
    const dir = tmpDir('marginalia-crash-replay-');
    dirs.push(dir);
    const project = path.join(dir, 'replay.qda');
    const h = new Harness(project);

    // A long journal: idle checkpoints off, so nothing but the creation is ever checkpointed.
    const server = await startServer(project, ['--checkpoint-idle-ms', '0']);
    servers.push(server);
    await h.setup(server.base);
    let sent = 0;
    const worker = async () => {
      while (sent < REPLAY_ENTRIES) {
        sent++;
        const op = sent % 4 === 0 ? (h.batch() ?? h.createCode()) : h.createCode();
        await h.send(server.base, op, () => true);
        assert.equal(op.state, 'ok', `${op.tool} failed: ${h.errors.join('; ')}`);
      }
    };
    await Promise.all(Array.from({ length: 8 }, () => worker()));
    await kill(server);
    const journalBytes = fs.statSync(journalPath(project)).size;
    const entries = fs.readFileSync(journalPath(project), 'utf8').split('\n').filter(Boolean).length;
    assert.ok(entries >= REPLAY_ENTRIES, `the journal holds ${entries} entries`);
    await h.verifyOnDisk('long journal', false);

    // How long a start with this journal takes until the server listens.
    const spawnArgs = [path.join(REPO_ROOT, 'bin', 'marginalia.js'), 'serve', '--project', project, '--port', '0', '--checkpoint-idle-ms', '0'];
    const startOnce = (killAfterMs?: number) =>
      new Promise<{ listenedMs?: number; replayLogged: boolean; exit: number | null; signal: string | null; stderr: string }>((resolve) => {
        const t = Date.now();
        // a private MARGINALIA_HOME, as startServer gives its servers, so the user's ~/.marginalia is never touched
        const child = spawn(process.execPath, spawnArgs, {
          stdio: ['ignore', 'pipe', 'pipe'],
          env: { ...process.env, MARGINALIA_HOME: path.join(dir, '.marginalia-home') },
        });
        let err = '';
        let listenedMs: number | undefined;
        child.stderr.on('data', (d: Buffer) => (err += d.toString()));
        child.stdout.on('data', (d: Buffer) => {
          if (listenedMs === undefined && /at http:\/\/127\.0\.0\.1:\d+/.test(d.toString())) {
            listenedMs = Date.now() - t;
            if (killAfterMs === undefined) child.kill('SIGKILL');
          }
        });
        if (killAfterMs !== undefined) setTimeout(() => child.kill('SIGKILL'), killAfterMs);
        // 'close', not 'exit': by then everything the child wrote has been read.
        child.once('close', (exit, signal) => resolve({ listenedMs, replayLogged: /replayed \d+ journal entries/.test(err), exit, signal, stderr: err }));
      });
    const probe = await startOnce();
    assert.ok(probe.listenedMs !== undefined && probe.replayLogged, 'the probe start replayed and listened');
    const window = probe.listenedMs;
    await h.verifyOnDisk('after probe start', false);

    let beforeReplayDone = 0;
    let afterListen = 0;
    for (let i = 0; i < REPLAY_KILLS; i++) {
      const label = `replay kill ${i + 1} (seed ${SEED})`;
      // Every third start also finds a torn tail to cut (a crash mid-append of a call never acknowledged).
      if (i % 3 === 0) fs.appendFileSync(journalPath(project), `{"s":${10 ** 9},"q":[["INSERT INTO codes(name) VALUES (?)",["torn`);
      const delay = int(Math.floor(window * 0.3), Math.ceil(window * 1.3));
      const r = await startOnce(delay);
      if (VERBOSE)
        console.log(
          `      ${label}: kill@${delay}ms replay ${r.replayLogged ? 'done' : 'not done'}, ${r.listenedMs === undefined ? 'not listening' : `listening@${r.listenedMs}ms`}`,
        );
      assert.equal(r.signal, 'SIGKILL', `${label}: the server exited on its own (code ${r.exit}); stderr:\n${r.stderr}`);
      if (!r.replayLogged) beforeReplayDone++;
      if (r.listenedMs !== undefined) afterListen++;
      await h.verifyOnDisk(label, false);
    }

    const last = await startServer(project, ['--checkpoint-idle-ms', '0']);
    servers.push(last);
    await h.checkServer(last.base, 'replay: final restart');
    assert.equal(await stop(last), 0);
    await h.verifyOnDisk('replay: after clean stop', true);
    console.log(
      `      replay summary: journal=${entries} entries (${(journalBytes / 1e6).toFixed(1)} MB), start-to-listen=${window}ms, ` +
        `kills=${REPLAY_KILLS} (before the replay finished=${beforeReplayDone}, after listening=${afterListen}), ` +
        `torn-tails cut=${h.stats.tornTails}, checks=${h.stats.checks} seed=${SEED} ${((Date.now() - t0) / 1000).toFixed(1)}s`,
    );
  });
});
