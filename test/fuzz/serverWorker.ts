/**
 * The fuzz suite's server, run in a worker thread (test/fuzz/harness.ts starts it): the real HTTP tool
 * server (`startHttpServer`) over the real pipeline and agent-context layer (`src/cli/compose.ts`) on a real
 * project file, the same wiring as `marginalia serve`. A worker keeps the server in this process (fast)
 * while giving it its own event loop, so a tool that never returns shows up as a request timeout in the
 * main thread instead of freezing the test, and the worker can be terminated.
 *
 * Messages from the main thread (each answered with `{id, ok, value | error}`):
 * - `init {root, samples, tokens}`: seeds a small realistic project (the sample study of
 *   samples/community-gardens plus a source with emoji, RTL and combining marks, folders, cases with
 *   attributes, an audio source with a WebVTT sidecar and AV codings, suggestions, batches, reports, a
 *   pending approval) and import fixtures, then starts the server. Two seeds: `plain`, and `vcs` (the same
 *   with version control initialised and three snapshots).
 * - `reset {variant}`: closes the open project and opens a fresh copy of a seed (an "epoch").
 * - `pools`: the ids, names and refs that exist now, so generated inputs can hit real rows.
 * - `dump`: the canonical dump (src/vcs/canonicalDump.ts) of the open project as sha256 per file.
 * Errors the server logs are posted as `{type: 'log'}` messages.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parentPort } from 'node:worker_threads';
import type { AgentContext } from '../../src/agent/agentContext';
import type { Caller, ToolPipeline } from '../../src/agent/pipeline';
import { startHttpServer, type RunningHttpServer } from '../../src/adapters/http/httpServer';
import { createAgentContextFor, createPipeline, headlessHost, openProjectHandle, type ProjectHandle } from '../../src/cli/compose';
import { seedProject } from '../../src/cli/seed';
import type { Logger } from '../../src/core/log';
import { StoreDumpAccess } from '../../src/store/dumpAccess';
import { canonicalDump, readProjectTables } from '../../src/vcs/canonicalDump';

/** What the main thread can ask for. */
export type WorkerRequest =
  | { id: number; type: 'init'; root: string; samples: string; tokens: { agent: string; reviewer: string } }
  | { id: number; type: 'reset'; variant: SeedVariant }
  | { id: number; type: 'pools'; refs: boolean }
  | { id: number; type: 'dump' }
  | { id: number; type: 'stop' };

/** The two seeds an epoch starts from. */
export type SeedVariant = 'plain' | 'vcs';

/** What `init` answers. */
export interface InitInfo {
  port: number;
  files: FixtureFiles;
}

/** Where the fixture files are (all inside the fuzz root). */
export interface FixtureFiles {
  /** files an import may read: by import format, the files of that format; `any` holds the rest */
  inputs: Record<string, string[]>;
  /** folders exports may write into */
  outDir: string;
  /** an existing folder that is not a file */
  aDir: string;
  /** a path in a folder that does not exist */
  missingDir: string;
  /** the media files of the seed (their sources' file paths) */
  media: string[];
  root: string;
}

/** What `reset` answers. */
export interface EpochInfo {
  projectPath: string;
  journalPath: string;
}

/** Ids, names and refs that exist in the open project (see the module comment). */
export interface Pools {
  code: number[];
  category: number[];
  source: number[];
  textSource: number[];
  avSource: number[];
  /** code points of each source's text, by source id */
  lengths: Record<number, number>;
  segment: number[];
  av_segment: number[];
  folder: number[];
  case: number[];
  suggestion: number[];
  /** code suggestions (approve_suggestion), pending first */
  codeSuggestion: number[];
  /** coding suggestions (approve_coding_suggestion, reject_coding_suggestion), pending first */
  codingSuggestion: number[];
  merge: number[];
  batch: number[];
  report: number[];
  approval: string[];
  coders: string[];
  names: string[];
  attributes: string[];
  refs: string[];
}

/** What `dump` answers: sha256 of every file of the canonical dump. */
export interface DumpDigest {
  files: Record<string, string>;
  bytes: number;
}

const port = parentPort;
if (!port) throw new Error('serverWorker.ts runs in a worker thread');

const logger: Logger = {
  info: () => undefined,
  warn: () => undefined,
  error: (msg, e) =>
    port.postMessage({ type: 'log', level: 'error', msg, stack: e instanceof Error ? (e.stack ?? e.message) : e === undefined ? undefined : String(e) }),
};

let root = '';
let current: ProjectHandle | null = null;
let pipeline: ToolPipeline | undefined;
let agent: AgentContext | undefined;
let server: RunningHttpServer | undefined;
let epoch = 0;
let epochDir = '';
let files: FixtureFiles | undefined;
let agentToken = '';

const SEEDER: Caller = { session_id: 'local', client_type: 'LOCAL_UI', client_name: 'fuzz-seed', user: 'coder-a', researcher: true };
const SECOND_CODER: Caller = { session_id: 'local-b', client_type: 'LOCAL_UI', client_name: 'fuzz-seed-b', user: 'coder-b', researcher: true };

async function call(tool: string, args: Record<string, unknown>, caller: Caller = SEEDER): Promise<any> {
  const out = await (pipeline as ToolPipeline).invoke(tool, args, caller);
  if (!out.envelope.success)
    throw new Error(`fuzz seed: ${tool} ${JSON.stringify(args).slice(0, 200)} failed: ${out.envelope.error_code} ${out.envelope.error}`);
  return out.envelope.data;
}

/** A text with the unicode a transcript can hold: emoji (astral, ZWJ sequences), combining marks, RTL text and marks, CJK, CRLF line ends. */
const UNICODE_TRANSCRIPT = [
  'INTERVIEWER: Welcome 👋 to the garden interview.\r\n',
  'AMARA: The tomatoes 🍅🍅 grew well; the café down the road (café with e\u0301) buys them.\r\n',
  'AMARA: My grandmother 👩🏽‍🌾 says שלום and مرحبا to everyone \u200Fevery morning\u200F.\r\n',
  'INTERVIEWER: 水やり is shared? Z̤͔ͧ̑̓ä͖̭̈̇lͮ̒ͫǧ̗͚̚o text too.\r\n',
  'AMARA: Yes, 𝕨𝕒𝕥𝕖𝕣 rota every week; conflicts about water are rare.\r\n',
].join('');

const VTT = [
  'WEBVTT',
  '',
  '00:00:01.000 --> 00:00:04.500',
  '<v Rosa>We argue about the hose rota every week.',
  '',
  '00:00:05.000 --> 00:00:09.250',
  '<v Interviewer>And the council?',
  '',
  '00:00:10.000 --> 00:00:14.000',
  '<v Rosa>The Council wants three forms before we build a shed 🛖.',
  '',
].join('\n');

const GA4 = [
  '{"event_date":"20201101","event_timestamp":"1604188800000000","event_name":"session_start","user_pseudo_id":"100.1","event_params":[{"key":"ga_session_id","value":{"int_value":"1604188800"}}]}',
  '{"event_date":"20201101","event_timestamp":"1604188810500000","event_name":"page_view","user_pseudo_id":"100.1","event_params":[{"key":"ga_session_id","value":{"int_value":"1604188800"}}]}',
  '{"event_date":"20201102","event_timestamp":"1604275200123456","event_name":"page_view","user_pseudo_id":"200.2"}',
  'not json',
  '',
].join('\n');

/** Writes the files imports read and the media of the seed; returns where they are. */
function writeFixtures(dir: string): FixtureFiles {
  const inDir = path.join(dir, 'in');
  const media = path.join(dir, 'media');
  const outDir = path.join(dir, 'out');
  const aDir = path.join(inDir, 'a-folder.txt');
  for (const d of [inDir, media, outDir, aDir]) fs.mkdirSync(d, { recursive: true });
  const w = (name: string, content: string | Buffer) => {
    const p = path.join(inDir, name);
    fs.writeFileSync(p, content);
    return p;
  };
  const garbage = Buffer.from(Array.from({ length: 2048 }, (_, i) => (i * 7919 + 13) % 256));
  const inputs: Record<string, string[]> = {
    code_list: [w('codes.txt', 'Water\n  Access\n  Conflict 💧\nCommunity\n\tTrust\n  Belonging\n'), w('codes-crlf.txt', 'Food\r\n  Harvest\r\n  Sharing\r\n')],
    csv: [
      w(
        'survey.csv',
        'id,name,age,comment\r\n1,Ana,34,"Loves the garden 🌱, comes every week and brings her grandchildren to water the beds on Sunday."\r\n2,Bo,51,"Ça va"\r\n',
      ),
      w('blank.csv', '\n'),
    ],
    analytics_csv: [w('analytics.csv', 'user_pseudo_id,sessions,first_seen\n100.1,3,2020-11-01\n200.2,1,2020-11-02\n')],
    analytics_json: [w('analytics.ndjson', GA4), w('no-profiles.ndjson', '{"a":1}\n[1,2]\n')],
    text: [
      w('note.md', '# Notes\n\nThe *garden* meeting 🌻.\n'),
      w('bom.txt', '\uFEFFA transcript with a byte-order mark.\r\n'),
      w('latin1.txt', Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a])),
      w('empty.txt', ''),
      w('nul.txt', 'before\u0000after\n'),
    ],
    broken: [
      w('garbage.docx', garbage),
      w('garbage.pdf', garbage),
      w('garbage.odt', garbage),
      w('garbage.rtf', garbage),
      w('garbage.qdpx', garbage),
      w('garbage.rqda', garbage),
      w('truncated.qdpx', Buffer.from('PK\u0003\u0004')),
    ],
    any: [aDir, path.join(inDir, 'missing.txt'), path.join(inDir, 'missing.qdpx')],
  };
  fs.writeFileSync(path.join(media, 'interview.mp3'), Buffer.concat([Buffer.from('ID3'), garbage]));
  fs.writeFileSync(path.join(media, 'interview.vtt'), VTT);
  fs.writeFileSync(path.join(media, 'focus-group.mp4'), garbage);
  fs.writeFileSync(
    path.join(media, 'garden.png'),
    Buffer.from(
      '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8cfc0f01f0005000201a5f9d6a50000000049454e44ae426082',
      'hex',
    ),
  );
  return {
    inputs,
    outDir,
    aDir,
    missingDir: path.join(dir, 'no-such-folder', 'deeper'),
    media: ['interview.mp3', 'focus-group.mp4', 'garden.png'].map((f) => path.join(media, f)),
    root: dir,
  };
}

/** Fills the open (empty) project: see the module comment. */
async function seed(samples: string, fx: FixtureFiles): Promise<void> {
  const seeded = await seedProject(pipeline as ToolPipeline, samples);
  if (!seeded) throw new Error('fuzz seed: the project was not empty');
  const codes = (await call('list_codes', {})).codes as { code_id: number; name: string }[];
  const sources = (await call('list_sources', {})).sources as { source_id: number }[];
  const [c1, c2, c3, c4] = codes.map((c) => c.code_id) as [number, number, number, number];
  const s1 = (sources[0] as { source_id: number }).source_id;
  const uni = (
    await call('add_text_source', {
      name: 'Interview 05 – Amara 👩🏽‍🌾 (RTL, emoji)',
      content: UNICODE_TRANSCRIPT,
      memo: 'unicode edge cases',
      origin: 'fuzz seed',
    })
  ).source_id as number;
  const uniLength = [...UNICODE_TRANSCRIPT].length;
  await call('batch_apply_codes', {
    operations: [
      { code_id: c1, source_id: uni, start_position: 0, end_position: 40 },
      { code_id: c2, source_id: uni, start_position: 45, end_position: 120, memo: 'café e\u0301' },
      { code_id: c3, source_id: uni, start_position: 120, end_position: uniLength },
    ],
  });
  await call('apply_code', { code_id: c4, source_id: s1, start_position: 10, end_position: 60 }, SECOND_CODER);
  await call('apply_code', { code_id: c1, source_id: s1, start_position: 30, end_position: 90 }, SECOND_CODER);
  const f1 = (await call('create_folder', { name: 'Interviews 2024' })).folder_id as number;
  const f2 = (await call('create_folder', { name: 'Unicode ✨', parent_id: f1 })).folder_id as number;
  await call('create_folder', { name: 'Empty folder' });
  await call('move_source_to_folder', { source_id: s1, folder_id: f1 });
  await call('move_source_to_folder', { source_id: uni, folder_id: f2 });
  const case1 = (await call('create_case', { name: 'Amara (fuzz)', memo: 'gardener' })).case_id as number;
  const case2 = (await call('create_case', { name: 'Jonas 🚲' })).case_id as number;
  await call('create_case', { name: 'Mei (fuzz)' });
  await call('add_source_to_case', { case_id: case1, source_id: uni });
  await call('add_segment_to_case', { case_id: case2, source_id: s1, start_pos: 0, end_pos: 100 });
  await call('set_case_attribute', { case_id: case1, attribute_name: 'age', value: 67, type: 'number' });
  await call('set_case_attribute', { case_id: case1, attribute_name: 'joined', value: '2019-04-01', type: 'date' });
  await call('set_case_attribute', { case_id: case2, attribute_name: 'age', value: 34, type: 'number' });
  await call('set_case_attribute', { case_id: case2, attribute_name: 'volunteer', value: true, type: 'boolean' });
  const [mp3, mp4, png] = fx.media as [string, string, string];
  const audio = (await call('import_file_source', { file_path: mp3, name: 'Garden walk (audio)' })).source_id as number;
  await call('import_file_source', { file_path: mp4, name: 'Focus group (video)' });
  await call('import_file_source', { file_path: png, name: 'Garden photo' });
  await call('apply_av_code', { code_id: c1, source_id: audio, start_ms: 1000, end_ms: 4500, transcript: 'We argue about the hose rota every week.' });
  await call('apply_av_code', { code_id: c2, source_id: audio, start_ms: 10000, end_ms: 14000, memo: 'council' });
  await call('suggest_source_metadata', { source_id: uni, language: 'en', topics: ['water', 'family'] });
  await call('suggest_new_code', { name: 'Grandparents', rationale: 'family members come up often', color: '#AA3377' });
  await call('suggest_new_code', { name: 'Shed building', rationale: 'the council and the shed' });
  await call('suggest_merge_codes', { source_code_id: c3, target_code_id: c4, rationale: 'overlap' });
  await call('suggest_code_application', { source_id: s1, code_id: c2, start_pos: 100, end_pos: 180, rationale: 'water' });
  const rejected = (await call('suggest_code_application', { source_id: s1, code_id: c3, start_pos: 200, end_pos: 260, rationale: 'maybe' }))
    .suggestion_id as number;
  await call('reject_coding_suggestion', { suggestion_id: rejected, reason: 'not quite' });
  await call('suggest_codes_for_range', { source_id: s1, start_pos: 0, end_pos: 400 });
  await call('suggest_batch_coding', {
    code_id: c1,
    segments: [
      { source_id: uni, start_pos: 0, end_pos: 20 },
      { source_id: s1, start_pos: 300, end_pos: 350 },
    ],
    rationale: 'same theme',
  });
  await call('generate_frequency_report', {});
  await call('generate_cooccurrence_report', { filters: { source_ids: [s1, uni] } });
  await call('generate_coder_comparison', { coder_ids: ['coder-a', 'coder-b'] });
  // an agent's call held for approval (the trust layer: creating a code is "suggest")
  const seedAgent = (agent as AgentContext).implicitCaller(`Bearer ${agentToken}`, 'fuzz-seed-agent');
  const pending = await (pipeline as ToolPipeline).invoke('create_code', { name: 'Agent idea', color: '#123456' }, seedAgent);
  if (pending.status !== 'pending') throw new Error(`fuzz seed: the agent's create_code did not wait for approval: ${JSON.stringify(pending.envelope)}`);
}

function seedDir(variant: SeedVariant): string {
  return path.join(root, `seed-${variant}`);
}

async function openEpoch(variant: SeedVariant): Promise<EpochInfo> {
  if (current) await current.close();
  current = null;
  if (epochDir) fs.rmSync(epochDir, { recursive: true, force: true });
  epoch++;
  epochDir = path.join(root, `epoch-${epoch}`);
  fs.cpSync(seedDir(variant), epochDir, { recursive: true });
  fs.rmSync(path.join(epochDir, '.marginalia', 'audit.jsonl'), { force: true });
  const projectPath = path.join(epochDir, 'project.qda');
  // no idle checkpoints: the journal only changes when a transaction commits
  current = await openProjectHandle(projectPath, { create: false, logger, checkpointIdleMs: 0 });
  return { projectPath, journalPath: `${projectPath}-journal` };
}

async function init(msg: Extract<WorkerRequest, { type: 'init' }>): Promise<InitInfo> {
  root = msg.root;
  agentToken = msg.tokens.agent;
  files = writeFixtures(path.join(root, 'files'));
  // the sample study, copied so every source's file is inside the fuzz root
  const samples = path.join(root, 'samples');
  fs.cpSync(msg.samples, samples, { recursive: true });
  const serverHome = path.join(root, 'server', 'project.qda');
  fs.mkdirSync(path.dirname(serverHome), { recursive: true });
  agent = createAgentContextFor(serverHome, {
    project: () => current,
    logger,
    tokens: msg.tokens,
    overrides: (c) => ({
      ...c,
      // fuzzing sends thousands of calls a minute through one agent session, and must not see requests expire mid-run
      rate_limits: { ...c.rate_limits, requests_per_minute: 1_000_000, mutations_per_minute: 1_000_000 },
      sessions: { ...c.sessions, timeout_minutes: 24 * 60, max_concurrent: 100 },
      approvals: { ...c.approvals, timeout_minutes: 24 * 60 },
    }),
  });
  pipeline = createPipeline({ project: () => current, host: headlessHost, logger, agent, embeddings: null });

  const plain = seedDir('plain');
  fs.mkdirSync(plain, { recursive: true });
  current = await openProjectHandle(path.join(plain, 'project.qda'), { create: true, logger, checkpointIdleMs: 0 });
  await seed(samples, files);
  // import fixtures made by the product itself: a REFI-QDA project and codebook, a codebook as text
  const refi = path.join(files.root, 'in', 'project.qdpx');
  const qdc = path.join(files.root, 'in', 'codebook.qdc');
  await call('export_data', { format: 'refi_qda', output_path: refi });
  await call('export_data', { format: 'qdc', output_path: qdc });
  await call('export_data', { format: 'codebook', output_path: path.join(files.root, 'in', 'codebook-export.txt') });
  files.inputs.refi_qda = [refi, qdc];
  await current.close();
  current = null;
  // a QDA project file that is no RQDA, QualCoder or Taguette database
  const otherDb = path.join(files.root, 'in', 'other.qda');
  fs.copyFileSync(path.join(plain, 'project.qda'), otherDb);
  files.inputs.sqlite = [otherDb];

  const vcs = seedDir('vcs');
  fs.cpSync(plain, vcs, { recursive: true });
  current = await openProjectHandle(path.join(vcs, 'project.qda'), { create: false, logger, checkpointIdleMs: 0 });
  await call('initialize_version_control', {});
  await call('create_code', { name: 'Snapshot two', color: '#00AA00' });
  await current.snapshotter.flush();
  await call('rename_code', { code_id: 1, new_name: 'Snapshot three' });
  await current.snapshotter.flush();
  await current.close();
  current = null;

  server = await startHttpServer({ pipeline, port: 0, logger, version: 'fuzz', agent });
  return { port: server.port, files };
}

function pools(): Pools {
  const store = (current as ProjectHandle).store;
  const ids = (sql: string) => store.all<{ id: number }>(sql).map((r) => Number(r.id));
  const strings = (sql: string) => store.all<{ v: string }>(sql).map((r) => String(r.v));
  const lengths: Record<number, number> = {};
  for (const r of store.all<{ id: number; n: number }>('SELECT id, content_length AS n FROM sources')) lengths[Number(r.id)] = Number(r.n);
  return {
    code: ids('SELECT id FROM codes ORDER BY id'),
    category: ids('SELECT id FROM categories ORDER BY id'),
    source: ids('SELECT id FROM sources ORDER BY id'),
    textSource: ids("SELECT id FROM sources WHERE type = 'text' ORDER BY id"),
    avSource: ids("SELECT id FROM sources WHERE type IN ('audio', 'video') ORDER BY id"),
    lengths,
    segment: ids('SELECT id FROM segments ORDER BY id LIMIT 200'),
    av_segment: ids('SELECT id FROM av_segments ORDER BY id LIMIT 200'),
    folder: ids('SELECT id FROM folders ORDER BY id'),
    case: ids('SELECT id FROM cases ORDER BY id'),
    suggestion: ids("SELECT id FROM suggestions WHERE kind IN ('code', 'coding') ORDER BY id LIMIT 200"),
    codeSuggestion: ids("SELECT id FROM suggestions WHERE kind = 'code' ORDER BY status <> 'pending', id LIMIT 200"),
    codingSuggestion: ids("SELECT id FROM suggestions WHERE kind = 'coding' ORDER BY status <> 'pending', id LIMIT 200"),
    merge: ids("SELECT id FROM suggestions WHERE kind = 'merge' ORDER BY id LIMIT 200"),
    batch: ids('SELECT id FROM suggestion_batches ORDER BY id LIMIT 200'),
    report: ids('SELECT id FROM reports ORDER BY id LIMIT 200'),
    approval: strings('SELECT request_id AS v FROM approval_requests ORDER BY created_at LIMIT 50'),
    coders: strings('SELECT DISTINCT owner AS v FROM segments ORDER BY owner LIMIT 20'),
    names: strings(
      'SELECT name AS v FROM codes UNION ALL SELECT name FROM categories UNION ALL SELECT name FROM sources UNION ALL SELECT name FROM folders UNION ALL SELECT name FROM cases LIMIT 200',
    ),
    attributes: strings('SELECT DISTINCT name AS v FROM case_attributes ORDER BY name LIMIT 50'),
    refs: [],
  };
}

async function poolsWithRefs(refs: boolean): Promise<Pools> {
  const p = pools();
  const vcs = (current as ProjectHandle).snapshotter;
  if (refs && vcs.isInitialized()) {
    const snaps = await vcs.listSnapshots(10);
    p.refs = [...snaps.flatMap((s) => [s.ref, s.short_ref]), 'HEAD', 'HEAD~1', 'HEAD~2', 'HEAD^'];
  }
  return p;
}

function dump(): DumpDigest {
  const files = canonicalDump(readProjectTables(new StoreDumpAccess((current as ProjectHandle).store)));
  const out: Record<string, string> = {};
  let bytes = 0;
  for (const [p, content] of files) {
    out[p] = createHash('sha256').update(content, 'utf8').digest('hex');
    bytes += Buffer.byteLength(content, 'utf8');
  }
  return { files: out, bytes };
}

async function handle(msg: WorkerRequest): Promise<unknown> {
  switch (msg.type) {
    case 'init':
      return init(msg);
    case 'reset':
      return openEpoch(msg.variant);
    case 'pools':
      return poolsWithRefs(msg.refs);
    case 'dump':
      return dump();
    case 'stop':
      await server?.close();
      agent?.dispose();
      if (current) await current.close();
      current = null;
      return null;
  }
}

port.on('message', (msg: WorkerRequest) => {
  handle(msg).then(
    (value) => port.postMessage({ id: msg.id, ok: true, value }),
    (e: unknown) => port.postMessage({ id: msg.id, ok: false, error: e instanceof Error ? (e.stack ?? e.message) : String(e) }),
  );
});
