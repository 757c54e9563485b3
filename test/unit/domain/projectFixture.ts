/**
 * A real sql.js project on disk plus the one pipeline over it, for the domain, agent and tool unit tests.
 * Not a test file itself (no `.test.ts`), so mocha does not run it.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Caller, InvokeOutcome, ToolPipeline } from '../../../src/agent/pipeline';
import { createPipeline, headlessHost, openProjectHandle, type ProjectHandle } from '../../../src/cli/compose';
import type { Clock } from '../../../src/core/clock';
import { silentLogger } from '../../../src/core/log';
import { MIGRATIONS } from '../../../src/store/migrations';
import { loadSqlJs } from '../../../src/store/sqljs';

/** A fixed instant, so stored timestamps can be asserted literally. */
export const FIXED_MS = Date.UTC(2026, 0, 2, 3, 4, 5, 678);
export const FIXED_ISO = '2026-01-02T03:04:05.678Z';
export const fixedClock: Clock = { now: () => FIXED_MS };

/** The caller most tests use. */
export const ALICE: Caller = { session_id: 'sess-alice', client_type: 'REST_CLIENT', client_name: 'unit-test', user: 'alice' };

export interface Fixture {
  dir: string;
  handle: ProjectHandle;
  pipeline: ToolPipeline;
  /** invoke on behalf of `caller` (default ALICE) */
  call(name: string, args?: unknown, caller?: Caller): Promise<InvokeOutcome>;
  /** invoke and assert success; returns `data` */
  ok<T = any>(name: string, args?: unknown, caller?: Caller): Promise<T>;
  /** invoke and assert failure with `code`; returns the outcome */
  fails(name: string, args: unknown, code: string, caller?: Caller): Promise<InvokeOutcome>;
  close(): Promise<void>;
}

/**
 * A new in-memory database at the schema a project had before migration `version`: every migration below it
 * applied in order and `user_version` set, as an earlier Marginalia left it. The caller adds rows, writes
 * `db.export()` to a file and opens it, which runs the migrations from `version` on.
 */
export async function databaseBeforeMigration(version: number) {
  const SQL = await loadSqlJs();
  const db = new SQL.Database();
  const before = MIGRATIONS.filter((m) => m.version < version).sort((x, y) => x.version - y.version);
  for (const m of before) db.exec(m.sql);
  db.exec(`PRAGMA user_version = ${before[before.length - 1]!.version}`);
  return db;
}

/** Creates a fresh project `p.qda` in a new temp directory and a pipeline over it. */
export async function openFixture(opts: { clock?: Clock } = {}): Promise<Fixture> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'marginalia-unit-'));
  const handle = await openProjectHandle(path.join(dir, 'p.qda'), { create: true, checkpointIdleMs: 0 });
  const pipeline = createPipeline({ project: () => handle, host: headlessHost, logger: silentLogger, clock: opts.clock ?? fixedClock });
  let closed = false;
  const call = (name: string, args: unknown = {}, caller: Caller = ALICE) => pipeline.invoke(name, args, caller);
  return {
    dir,
    handle,
    pipeline,
    call,
    async ok(name, args = {}, caller = ALICE) {
      const out = await call(name, args, caller);
      if (!out.envelope.success) assert.fail(`${name} failed: ${out.envelope.error_code}: ${out.envelope.error}`);
      assert.equal(out.status, 'ok');
      return out.envelope.data as any;
    },
    async fails(name, args, code, caller = ALICE) {
      const out = await call(name, args, caller);
      assert.equal(out.envelope.success, false, `${name} should fail with ${code} but succeeded: ${JSON.stringify(out.envelope)}`);
      if (!out.envelope.success) assert.equal(out.envelope.error_code, code, out.envelope.error);
      assert.equal(out.status, 'failed');
      assert.deepEqual(out.events, [], 'a failed call reports no events');
      return out;
    },
    async close() {
      if (closed) return;
      closed = true;
      try {
        await handle.close();
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

/**
 * The stored events in sequence order, as the repository reads them back (the envelope's fields flattened:
 * `seq`, `session_id`, `correlation_id`, ...). The raw rows are in a leaner form (migration 9).
 */
export function storedEvents(handle: ProjectHandle): {
  seq: number;
  event_id: string;
  event_type: string;
  aggregate_type: string;
  aggregate_id: string;
  session_id: string;
  client_type: string;
  user: string;
  role?: 'researcher' | 'agent';
  coder?: string;
  client?: string;
  model?: string;
  correlation_id: string;
  timestamp: string;
  payload: Record<string, unknown>;
}[] {
  return handle.repo.listEventsSince(0, Number.MAX_SAFE_INTEGER).map((e) => ({
    seq: e.metadata.sequence_number,
    event_id: e.event_id,
    event_type: e.event_type,
    aggregate_type: e.aggregate_type,
    aggregate_id: e.aggregate_id,
    ...e.caused_by,
    correlation_id: e.metadata.correlation_id,
    timestamp: e.timestamp,
    payload: e.payload,
  }));
}

/**
 * Everything a caller can see of the project, through the read tools: codes, categories, sources,
 * folders and every source's segments. Used to show that a failed call changed nothing.
 */
export async function snapshot(fx: Fixture): Promise<unknown> {
  const sources = await fx.ok<{ sources: { source_id: number }[] }>('list_sources');
  const segments: unknown[] = [];
  for (const s of sources.sources) segments.push(await fx.ok('list_segments_for_source', { source_id: s.source_id }));
  return {
    codes: await fx.ok('list_codes'),
    categories: await fx.ok('list_categories'),
    sources,
    folders: await fx.ok('list_folders'),
    segments,
    events: storedEvents(fx.handle),
    journalSeq: fx.handle.store.journalSeq,
  };
}
