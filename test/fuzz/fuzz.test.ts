/**
 * Fuzz suite (issue 7, part 3): property-based tests with fast-check whose arbitraries are generated from
 * the registry's zod schemas (their JSON Schema, `toJsonSchema`; see schemaArbitrary.ts), sent to the real
 * HTTP tool server (`startHttpServer` over the pipeline and agent-context layer of src/cli/compose.ts, in a
 * worker thread: see serverWorker.ts) on a seeded project (the sample study plus unicode text, folders,
 * cases, an audio source with AV codings, suggestions, batches, reports, snapshots). Per tool group,
 * FUZZ_RUNS inputs (default 10,000), valid and invalid mixed (mutations.ts: wrong types, huge strings,
 * negative and out-of-range offsets, unknown ids, unicode edge cases, deeply nested JSON, unknown
 * properties, malformed bodies, charsets and encodings, unknown tools, bad tokens, foreign hosts), most
 * with the researcher's token (calls run), some with the agent's (calls may wait for approval), plus one
 * body over the server's 64 MB limit per group.
 *
 * Every answer must be a spec envelope (`{success: true, data}` or `{success: false, error, error_code}`
 * with an error code of src/core/errors.ts) with the status STATUS_BY_CODE documents (413 for a body over
 * the limit, 202 only for a call held for approval); never a 500 or TOOL_EXECUTION_ERROR, never an error in
 * the server log, never a hang (per-request timeout) or a dead worker. Arguments that do not match the
 * tool's schema must fail with INVALID_ARGUMENTS. A failed call writes nothing: the project's journal (every
 * committed transaction appends to it; idle checkpoints are off) has the same length before and after every
 * failed call, and every FUZZ_DUMP_EVERY failed calls and at the end of each group the canonical dump
 * (src/vcs/canonicalDump.ts) is compared file by file before and after a failed call. The one write a failed
 * call may cause is the `session.connected` event of a session its request opened (the HTTP layer opens it
 * before the call; the dump leaves events out): the journal's new lines are read to tell. A read tool that
 * succeeds writes nothing either.
 *
 * The project is a fresh copy of the seed every FUZZ_EPOCH inputs (default 500), so deletions and merges
 * early in a group do not leave the rest of it without rows to hit. Paths given to import and export tools
 * all point into the suite's temporary folder (fixture files, missing files, an output folder), which is in
 * /dev/shm when the machine has it (FUZZ_DIR chooses another).
 *
 * Environment: FUZZ_RUNS (inputs per group), FUZZ_SEED (replays a run: each group's seed is derived from
 * it and printed), FUZZ_GROUPS (comma-separated groups to run), FUZZ_COLLECT=1 (go on after a failing input
 * and list every distinct problem at the end of the group), FUZZ_LANES (servers running groups side by side,
 * default 2), FUZZ_EPOCH, FUZZ_DUMP_EVERY, FUZZ_VERBOSE=1 (a line per input) or 2 (with error messages),
 * FUZZ_KEEP=1 (keep the folder), FUZZ_MUTATIONS (comma-separated mutation kinds drawn alone, without valid
 * inputs: `FUZZ_MUTATIONS=bytes` runs the byte-level bodies of issue 15: invalid UTF-8, overlong forms,
 * CESU-8, BOMs, NUL, lone surrogates and duplicated keys, each refused with 400 INVALID_JSON).
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import fc from 'fast-check';
import { STATUS_BY_CODE } from '../../src/adapters/http/httpServer';
import { toJsonSchema } from '../../src/agent/pipeline';
import { ERROR_CODES } from '../../src/core/errors';
import type { AnyTool } from '../../src/tools/defineTool';
import { TOOLS } from '../../src/tools/registry';
import { REPO_ROOT, tmpDir } from '../helpers/serverProcess';
import { FuzzServer, TOKENS, type RawResponse } from './harness';
import { buildRequest, MUTATION_KINDS, mutationArb, type BuiltRequest, type Mutation, type MutationKind } from './mutations';
import { resolveRefs, schemaArb, type JsonSchema } from './schemaArbitrary';
import type { DumpDigest, FixtureFiles, Pools } from './serverWorker';

const RUNS = Number(process.env.FUZZ_RUNS ?? 10_000);
const SEED = process.env.FUZZ_SEED !== undefined ? Number(process.env.FUZZ_SEED) : Math.floor(Math.random() * 2 ** 31);
const ONLY = process.env.FUZZ_GROUPS?.split(',')
  .map((g) => g.trim())
  .filter(Boolean);
const COLLECT = process.env.FUZZ_COLLECT === '1';
const EPOCH = Number(process.env.FUZZ_EPOCH ?? 500);
const DUMP_EVERY = Number(process.env.FUZZ_DUMP_EVERY ?? 250);
const VERBOSE = process.env.FUZZ_VERBOSE === '1' || process.env.FUZZ_VERBOSE === '2';
const VERBOSE_ERRORS = process.env.FUZZ_VERBOSE === '2';
const LANES = Math.max(1, Number(process.env.FUZZ_LANES ?? 2));
const ONLY_MUTATIONS = process.env.FUZZ_MUTATIONS?.split(',')
  .map((k) => k.trim())
  .filter((k): k is MutationKind => (MUTATION_KINDS as readonly string[]).includes(k));
/** Groups whose valid calls are slow (git; erase_source rewrites the history), started first on separate lanes; version control is sent fewer valid inputs (see VALID_WEIGHT_BY_GROUP). */
const SLOW_GROUPS = ['version_control', 'source'];
/**
 * The weight of a valid (unmutated) input per group, against the mutations' (mutations.ts); default
 * VALID_WEIGHT (about 35% valid). Version control's valid calls run git (100-200 ms each): about 5% there.
 */
const VALID_WEIGHT_BY_GROUP: Record<string, number> = { version_control: 12 };

const KNOWN_CODES: ReadonlySet<string> = new Set(ERROR_CODES);

/** The tools agents see (the editor's own are not reachable over HTTP), by group in registry order. */
function groups(): Map<string, AnyTool[]> {
  const out = new Map<string, AnyTool[]>();
  for (const t of TOOLS) {
    if ((t.audience ?? 'agents') !== 'agents') continue;
    const list = out.get(t.group) ?? [];
    list.push(t);
    out.set(t.group, list);
  }
  return out;
}

/** What one group's run saw. */
class GroupStats {
  inputs = 0;
  valid = 0;
  invalid = 0;
  successes = 0;
  pending = 0;
  journalChecks = 0;
  /** failed calls whose request opened a session (its session.connected event is stored; see sessionOnly) */
  sessionEvents = 0;
  dumpChecks = 0;
  epochs = 0;
  readonly codes = new Map<string, number>();
  readonly statuses = new Map<number, number>();
  readonly mutations = new Map<string, number>();
  readonly tools = new Map<string, number>();
  /** successful calls per tool */
  readonly toolOk = new Map<string, number>();
  /** milliseconds per tool, summed */
  readonly toolMs = new Map<string, number>();
  readonly problems = new Map<string, { count: number; example: string }>();
  slowest = { ms: 0, what: '' };
  /** milliseconds spent sending, refreshing pools, dumping, and everywhere else (generation) */
  readonly time = { send: 0, pools: 0, dump: 0, build: 0, epoch: 0 };
  started = performance.now();
  /** wall time of the group's run */
  ms = 0;

  add<K>(m: Map<K, number>, k: K): void {
    m.set(k, (m.get(k) ?? 0) + 1);
  }
}

/** One generated input: a tool, its (placeholder) arguments, a mutation or none, and who calls. */
interface FuzzInput {
  tool: string;
  args: unknown;
  mutation: Mutation | null;
  /** 0..99: under 12 the agent's token, else the researcher's */
  who: number;
}

function fmt(m: Map<string | number, number>): string {
  return [...m.entries()]
    .sort((a, b) => b[1] - a[1])
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');
}

/**
 * The problems with one answer (empty when it is as the spec says). `oversize`: the body was over the
 * server's limit (413 is the documented status of INVALID_ARGUMENTS then).
 */
function checkAnswer(
  res: RawResponse,
  req: Pick<BuiltRequest, 'expect'>,
  schemaInvalid: boolean,
  oversize = false,
  agentOnResearcherTool = false,
): { problems: string[]; body?: any } {
  const problems: string[] = [];
  const ct = String(res.headers['content-type'] ?? '');
  if (!ct.startsWith('application/json')) problems.push(`content-type is "${ct}", not application/json`);
  let body: any;
  try {
    body = JSON.parse(res.text);
  } catch {
    problems.push(`the body is not JSON: ${res.text.slice(0, 200)}`);
    return { problems };
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    problems.push(`the body is not an object: ${res.text.slice(0, 200)}`);
    return { problems };
  }
  if (body.success === true) {
    const keys = Object.keys(body).sort().join(',');
    if (keys !== 'data,success') problems.push(`success envelope has keys ${keys}`);
    if (body.data === null || typeof body.data !== 'object') problems.push('success envelope without a data object');
    // held by the trust layer (202) versus a suggestion tool's own pending suggestion (200)
    const pending = body.data?.status === 'pending_approval' && typeof body.data?.request_id === 'string';
    if (res.status !== (pending ? 202 : 200)) problems.push(`success answered with HTTP ${res.status} (expected ${pending ? 202 : 200})`);
  } else if (body.success === false) {
    const extra = Object.keys(body).filter((k) => !['success', 'error', 'error_code', 'details'].includes(k));
    if (extra.length > 0) problems.push(`failure envelope has extra keys ${extra.join(',')}`);
    if (typeof body.error !== 'string' || body.error.length === 0) problems.push('failure envelope without an error message');
    const code = body.error_code;
    if (typeof code !== 'string' || !KNOWN_CODES.has(code)) problems.push(`error_code ${JSON.stringify(code)} is not a documented code`);
    else {
      if (code === 'TOOL_EXECUTION_ERROR') problems.push('TOOL_EXECUTION_ERROR (an unexpected exception)');
      const documented = code === 'INVALID_ARGUMENTS' && oversize ? 413 : (STATUS_BY_CODE[code as keyof typeof STATUS_BY_CODE] ?? 400);
      if (res.status !== documented) problems.push(`${code} answered with HTTP ${res.status} (documented: ${documented})`);
      if (code === 'RATE_LIMITED' && res.headers['retry-after'] === undefined) problems.push('RATE_LIMITED without Retry-After');
      if (res.status === 401 && res.headers['www-authenticate'] === undefined) problems.push('401 without WWW-Authenticate');
    }
  } else problems.push(`not an envelope: ${res.text.slice(0, 200)}`);
  // 5xx only for the documented failures of something outside the server (502: the transcription server, the git remote)
  const upstream = body.success === false && (body.error_code === 'TRANSCRIPTION_FAILED' || body.error_code === 'REMOTE_UNREACHABLE') && res.status === 502;
  if (res.status >= 500 && !upstream) problems.push(`HTTP ${res.status}`);
  if (req.expect && (res.status !== req.expect.status || body.error_code !== req.expect.code)) {
    problems.push(`expected HTTP ${req.expect.status} ${req.expect.code}, got HTTP ${res.status} ${body.error_code ?? 'success'}`);
  } else if (agentOnResearcherTool && body.success === true) {
    problems.push('an agent ran a researcher-only tool');
  } else if (!req.expect && schemaInvalid && body.error_code !== 'INVALID_ARGUMENTS' && !(agentOnResearcherTool && body.error_code === 'APPROVAL_FORBIDDEN')) {
    // (a researcher-only tool refuses an agent before it looks at the arguments)
    problems.push(`arguments that do not match the schema answered HTTP ${res.status} ${body.error_code ?? 'success'} (expected 400 INVALID_ARGUMENTS)`);
  }
  return { problems, body };
}

/**
 * True when every statement of the journal slice stores a session lifecycle event (`session.connected` when
 * a request opens an implicit session, `session.disconnected`), which the HTTP layer records before the
 * call runs, whatever the call's outcome; else a short account of what was written. The canonical dump
 * leaves the events table out, so these never change it.
 */
function sessionOnly(slice: { sql: string; params: unknown[] }[][] | undefined): true | string {
  if (!slice) return 'the journal was cut';
  const others = slice
    .flat()
    .filter((st) => !(/^\s*INSERT INTO events\b/i.test(st.sql) && (st.params.includes('session.connected') || st.params.includes('session.disconnected'))));
  if (others.length === 0) return true;
  return others
    .slice(0, 3)
    .map((st) => `${st.sql.replace(/\s+/g, ' ').slice(0, 80)} ${JSON.stringify(st.params).slice(0, 120)}`)
    .join(' ; ');
}

/** Files whose digests differ between two dumps. */
function dumpDifferences(a: DumpDigest, b: DumpDigest): string[] {
  const names = new Set([...Object.keys(a.files), ...Object.keys(b.files)]);
  return [...names].filter((n) => a.files[n] !== b.files[n]).sort();
}

describe('fuzz: every tool group over HTTP (issue 7, part 3)', function () {
  this.timeout(0);
  const servers: FuzzServer[] = [];
  let root = '';
  const summary: string[] = [];
  const results = new Map<string, Promise<GroupStats>>();
  const byGroup = groups();
  const selected = [...byGroup.keys()].filter((g) => !ONLY || ONLY.includes(g));
  const seeds = new Map([...byGroup.keys()].map((g, i) => [g, (SEED + i * 7919) % 2 ** 31]));
  const started = performance.now();

  before(async function () {
    this.timeout(300_000);
    // in memory where the machine has it (/dev/shm): durability is not what this suite tests, and fsync per commit would dominate its time
    const shm = '/dev/shm';
    const base = process.env.FUZZ_DIR ?? (fs.existsSync(shm) && fs.statSync(shm).isDirectory() ? shm : undefined);
    root = base ? fs.mkdtempSync(path.join(base, 'marginalia-fuzz-')) : tmpDir('marginalia-fuzz-');
    const lanes = Math.min(LANES, Math.max(1, selected.length));
    for (let i = 0; i < lanes; i++) servers.push(new FuzzServer());
    await Promise.all(servers.map((s, i) => s.start(path.join(root, `lane-${i}`), path.join(REPO_ROOT, 'samples', 'community-gardens'))));
    console.log(
      `      fuzz: seed ${SEED} (FUZZ_SEED=${SEED} replays), ${RUNS} inputs per group, ${lanes} lane(s) (a server each), a fresh copy of the seeded project every ${EPOCH} inputs, folder ${root}`,
    );
    // the lanes run the groups in the background, the slowest first; each test below waits for its group
    const queue = [...selected].sort((a, b) => SLOW_GROUPS.indexOf(b) - SLOW_GROUPS.indexOf(a));
    const settle = new Map<string, { resolve: (s: GroupStats) => void; reject: (e: unknown) => void }>();
    for (const g of selected) {
      const p = new Promise<GroupStats>((resolve, reject) => settle.set(g, { resolve, reject }));
      p.catch(() => undefined); // awaited by the group's test; no unhandled rejection meanwhile
      results.set(g, p);
    }
    for (const server of servers) {
      void (async () => {
        for (let g = queue.shift(); g !== undefined; g = queue.shift()) {
          const s = settle.get(g) as { resolve: (s: GroupStats) => void; reject: (e: unknown) => void };
          try {
            s.resolve(await runGroup(server, g, byGroup.get(g) as AnyTool[], seeds.get(g) as number));
          } catch (e) {
            s.reject(e);
          }
        }
      })();
    }
  });

  after(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    if (summary.length > 0)
      console.log(
        `\n      fuzz summary (seed ${SEED}, ${((performance.now() - started) / 1000).toFixed(0)} s in all):\n${summary.map((l) => `        ${l}`).join('\n')}`,
      );
    if (root && !process.env.FUZZ_KEEP) fs.rmSync(root, { recursive: true, force: true });
  });

  for (const group of selected) {
    const tools = byGroup.get(group) as AnyTool[];
    it(`${group}: ${RUNS} generated inputs (${tools.map((t) => t.name).join(', ')})`, async () => {
      const seed = seeds.get(group) as number;
      const stats = await (results.get(group) as Promise<GroupStats>);
      const secs = (stats.ms / 1000).toFixed(1);
      const line = `${group}: ${stats.inputs} inputs (${stats.valid} valid, ${stats.invalid} invalid), ${stats.successes} successes (${stats.pending} held for approval), ${secs} s, seed ${seed}`;
      summary.push(line);
      console.log(`      ${line}`);
      console.log(`        error codes: ${fmt(stats.codes) || 'none'}`);
      console.log(`        HTTP statuses: ${fmt(stats.statuses)}`);
      console.log(`        mutations: ${fmt(stats.mutations)}`);
      console.log(`        per tool (inputs/successes): ${[...stats.tools.entries()].map(([t, n]) => `${t} ${n}/${stats.toolOk.get(t) ?? 0}`).join(', ')}`);
      if (VERBOSE) {
        console.log(
          `        ms per tool: ${[...stats.toolMs.entries()]
            .sort((a, b) => b[1] - a[1])
            .map(([k, v]) => `${k} ${v.toFixed(0)}`)
            .join(', ')}`,
        );
        console.log(
          `        time (ms): ${Object.entries(stats.time)
            .map(([k, v]) => `${k} ${v.toFixed(0)}`)
            .join(', ')}`,
        );
      }
      console.log(
        `        write checks: journal unchanged after ${stats.journalChecks} failed calls, canonical dump compared ${stats.dumpChecks} times, ${stats.sessionEvents} failed calls opened a session, ${stats.epochs} epochs; slowest ${stats.slowest.ms.toFixed(0)} ms (${stats.slowest.what})`,
      );
      if (stats.problems.size > 0) {
        const list = [...stats.problems.entries()].map(([sig, p]) => `- ${sig} (x${p.count})\n    ${p.example}`).join('\n');
        assert.fail(
          `${stats.problems.size} distinct problem(s) in group ${group} (seed ${seed}; replay with FUZZ_SEED=${SEED} FUZZ_GROUPS=${group}):\n${list}`,
        );
      }
      assert.ok(stats.inputs >= RUNS, `sent ${stats.inputs} inputs, fewer than ${RUNS}`);
    });
  }
});

/** Runs one group: FUZZ_RUNS generated inputs, then the end-of-group dump check and the oversized body. */
async function runGroup(server: FuzzServer, group: string, tools: AnyTool[], seed: number): Promise<GroupStats> {
  const stats = new GroupStats();
  const schemas = new Map(tools.map((t) => [t.name, toJsonSchema(t.input) as JsonSchema]));
  const byName = new Map(tools.map((t) => [t.name, t]));
  const variant = group === 'version_control' ? 'vcs' : 'plain';
  let pools: Pools | undefined;
  let poolsDirty = true;
  let armed = false;
  let failures = 0;
  let cache: { journal: number; key: string; digest: DumpDigest } | undefined;
  let run = 0;
  let refsAt = -1000;
  let poolsAt = -1000;

  const newEpoch = async () => {
    refsAt = -1000;
    poolsAt = -1000;
    const t0 = performance.now();
    await server.reset(variant);
    stats.time.epoch += performance.now() - t0;
    stats.epochs++;
    poolsDirty = true;
    cache = undefined;
  };

  const problem = (signature: string, example: string) => {
    const p = stats.problems.get(signature);
    if (p) p.count++;
    else stats.problems.set(signature, { count: 1, example });
    if (!COLLECT) throw new Error(`${signature}\n${example}`);
  };

  /** Sends one built request and checks everything about its answer; returns whether the call failed. */
  const exchange = async (
    tool: string,
    req: BuiltRequest,
    opts: { schemaInvalid: boolean; oversize?: boolean; label: string; effect?: string; agentOnResearcherTool?: boolean },
  ): Promise<{ failed: boolean; body?: any }> => {
    if (armed && (!cache || cache.key !== server.changeKey())) {
      const t = performance.now();
      cache = { journal: server.journalBytes(), key: server.changeKey(), digest: await server.dump() };
      stats.time.dump += performance.now() - t;
    }
    const before = server.journalBytes();
    let res: RawResponse;
    const describe = () =>
      `input ${run} of the group, tool ${tool}, ${opts.label}; ${req.note}; body ${typeof req.body === 'string' ? (req.body.length > 400 ? `${req.body.slice(0, 400)}... (${req.body.length} chars)` : req.body) : '<bytes>'}`;
    const t0 = performance.now();
    try {
      res = await server.send('POST', req.path, req.headers, req.body, req.timeoutMs);
    } catch (e) {
      problem(`no answer (${(e as Error).message.slice(0, 80)})`, `${describe()}${server.crashed ? `; worker: ${server.crashed}` : ''}`);
      return { failed: true };
    }
    stats.time.send += performance.now() - t0;
    stats.toolMs.set(tool, (stats.toolMs.get(tool) ?? 0) + res.ms);
    if (res.ms > stats.slowest.ms) stats.slowest = { ms: res.ms, what: `${tool} ${req.note.slice(0, 60)}` };
    stats.add(stats.statuses, res.status);
    const after = server.journalBytes();
    const { problems, body } = checkAnswer(res, req, opts.schemaInvalid, opts.oversize, opts.agentOnResearcherTool);
    const logs = server.takeLogs();
    for (const l of logs) problems.push(`server logged: ${l.msg}${l.stack ? ` ${l.stack.split('\n').slice(0, 4).join(' | ')}` : ''}`);
    const failed = body?.success !== true;
    if (body?.success === true) {
      stats.successes++;
      stats.add(stats.toolOk, tool);
      if (res.status === 202) stats.pending++;
      if (after !== before) {
        poolsDirty = true;
        // a read tool (it runs outside any transaction) never writes; a call held for approval stores its request
        if (opts.effect === 'read' && res.status === 200) {
          const written = sessionOnly(server.journalSlice(before, after));
          if (written !== true) problems.push(`a read tool wrote to the project (journal ${before} -> ${after} bytes: ${written})`);
        }
      }
    } else if (body) stats.add(stats.codes, String(body.error_code));
    if (failed) {
      stats.journalChecks++;
      if (after !== before) {
        const written = sessionOnly(server.journalSlice(before, after));
        if (written !== true) problems.push(`a failed call wrote to the project (journal ${before} -> ${after} bytes: ${written})`);
        else stats.sessionEvents++;
      }
    }
    for (const p of problems)
      problem(`${tool}: ${p.replace(/\d{3,}/g, 'N').slice(0, 160)}`, `${p}\n    ${describe()}\n    answer: HTTP ${res.status} ${res.text.slice(0, 300)}`);
    if (failed && armed && cache && cache.journal === after && cache.key === server.changeKey()) {
      const t = performance.now();
      const now = await server.dump();
      stats.time.dump += performance.now() - t;
      stats.dumpChecks++;
      const diff = dumpDifferences(cache.digest, now);
      if (diff.length > 0) problem(`${tool}: a failed call changed the canonical dump`, `files ${diff.join(', ')}; ${describe()}`);
      armed = false;
    }
    if (failed) {
      failures++;
      if (failures % DUMP_EVERY === 0) armed = true;
    }
    if (VERBOSE)
      console.log(
        `        ${run} ${tool} ${req.note.slice(0, 80)} -> ${res.status} ${body?.error_code ?? 'ok'} ${res.ms.toFixed(1)}ms ${res.text.length}B${VERBOSE_ERRORS && body?.success === false ? ` | ${String(body.error).slice(0, 200)}` : ''}`,
      );
    return { failed, body };
  };

  const argArbs = new Map(tools.map((t) => [t.name, schemaArb(schemas.get(t.name) as JsonSchema, { tool: t.name, group })]));
  const mutation = mutationArb(VALID_WEIGHT_BY_GROUP[group], ONLY_MUTATIONS);
  const who = fc.nat(99);
  const inputArb: fc.Arbitrary<FuzzInput> = fc.oneof(
    ...tools.map((t) => fc.record({ tool: fc.constant(t.name), args: argArbs.get(t.name) as fc.Arbitrary<unknown>, mutation, who })),
  );

  await newEpoch();
  const property = fc.asyncProperty(inputArb, async (input) => {
    if (run > 0 && run % EPOCH === 0) await newEpoch();
    run++;
    const t0 = performance.now();
    // the pools are refreshed after a call changed the project, at most every 4 inputs (stale ids only make more NOT_FOUNDs)
    if (poolsDirty && (pools === undefined || run - poolsAt >= 4)) {
      poolsAt = run;
      // snapshot refs cost a git call: at most every 100 inputs
      const refs = variant === 'vcs' && run - refsAt >= 100;
      const fresh = await server.pools(refs);
      if (refs) refsAt = run;
      else fresh.refs = pools?.refs ?? [];
      pools = fresh;
      poolsDirty = false;
    }
    stats.time.pools += performance.now() - t0;
    const t1 = performance.now();
    const p = pools as Pools;
    const schema = schemas.get(input.tool) as JsonSchema;
    const args = resolveRefs(input.args, { pools: p, files: server.files!, projectPath: server.epoch!.projectPath }, input.tool) as Record<string, unknown>;
    const agent = input.who < 12;
    const req = buildRequest({
      tool: input.tool,
      schema,
      args,
      mutation: input.mutation,
      authorization: `Bearer ${agent ? TOKENS.agent : TOKENS.reviewer}`,
      clientName: agent ? 'fuzz-agent' : 'fuzz-researcher',
      lengths: p.lengths,
      port: server.port,
      fenceRoot: (server.files as FixtureFiles).root.replace(/[\\/]files$/, ''),
    });
    const parsed = req.parsedArgs ? (byName.get(input.tool) as AnyTool).input.safeParse(req.parsedArgs.value) : undefined;
    const schemaInvalid = parsed !== undefined && !parsed.success;
    const valid = parsed?.success === true && !req.expect;
    stats.time.build += performance.now() - t1;
    stats.inputs++;
    if (valid) stats.valid++;
    else stats.invalid++;
    stats.add(stats.mutations, input.mutation?.kind ?? 'none');
    stats.add(stats.tools, input.tool);
    await exchange(input.tool, req, {
      schemaInvalid,
      label: `${agent ? 'agent' : 'researcher'} token, ${valid ? 'valid' : 'invalid'}`,
      effect: (byName.get(input.tool) as AnyTool).effect,
      agentOnResearcherTool: agent && (byName.get(input.tool) as AnyTool).researcherOnly === true,
    });
  });
  const details = await fc.check(property, { numRuns: RUNS, seed, endOnFailure: true });
  if (details.failed && stats.problems.size === 0) throw new Error(fc.defaultReportMessage(details) ?? 'fast-check failed');

  if (stats.problems.size === 0 || COLLECT) {
    // end of group: a canonical dump compared across failed calls, then a body over the server's limit
    armed = true;
    const tool = tools[seed % tools.length] as AnyTool;
    for (let i = 0; i < 3 && armed; i++) {
      await exchange(
        tool.name,
        {
          path: `/tools/${tool.name}`,
          headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKENS.reviewer}`, host: `127.0.0.1:${server.port}` },
          body: JSON.stringify({ arguments: { __fuzz_end_of_group__: i } }),
          timeoutMs: 60_000,
          note: 'end-of-group dump check',
        },
        { schemaInvalid: true, label: 'end of group' },
      );
      stats.inputs++;
      stats.invalid++;
    }
    if (armed) problem('end of group: no failed call to compare the canonical dump across', `group ${group}`);
    const chunk = Buffer.alloc(1 << 20, 'a');
    await exchange(
      tool.name,
      {
        path: `/tools/${tool.name}`,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKENS.reviewer}`, host: `127.0.0.1:${server.port}` },
        body: {
          chunk: Buffer.concat([Buffer.from('{"arguments":{"name":"'), chunk]),
          repeat: 1,
          tail: Buffer.concat([...Array.from({ length: 64 }, () => chunk), Buffer.from('"}}')]),
        },
        expect: { status: 413, code: 'INVALID_ARGUMENTS' },
        timeoutMs: 120_000,
        note: 'oversized body (65 MB, limit 64 MB)',
      },
      { schemaInvalid: false, oversize: true, label: 'oversized body' },
    );
    stats.inputs++;
    stats.invalid++;
    stats.add(stats.mutations, 'oversized_body');
  }
  stats.ms = performance.now() - stats.started;
  return stats;
}
