/**
 * End-to-end test of erase_source (issue 15, item 9) against the real built CLI (`npm run build` first):
 * a participant's transcript carrying a unique marker is added, coded, snapshotted, exported and recorded
 * in the audit log (with `audit.include_payload: full` for the first part, the default hashed form after a
 * restart); then the researcher erases it. Afterwards every file under the project folder (the .qda, its
 * journal, `.marginalia/**`, raw bytes) and every object of the history (`git cat-file --batch-all-objects`,
 * which reads packed and loose objects decompressed) is searched for the marker: it is only in the export
 * files the report lists. A second transcript's marker survives everywhere (the search is not vacuous). An
 * agent is refused (403 APPROVAL_FORBIDDEN), a call without `confirm: true` is an error that erases nothing,
 * and the history keeps working afterwards (its messages kept, new snapshots, view_diff).
 *
 * Not erased, by design (the tool's report says so): a memo the researcher wrote that quotes the transcript.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import initSqlJs from 'sql.js';
import { AS_AGENT, callTool, request, startServer, tmpDir, type ServerProcess } from '../helpers/serverProcess';

/** The withdrawn participant's marker: lower case ASCII, so the search index would store it as this very token. */
const MARKER = 'zqvwithdrawnmarker7731';
/** A second participant's marker, which must survive. */
const KEPT = 'kelpkeptcontrol5520';

const TEXT = [
  'Interview P07',
  '',
  '[00:00:01] INTERVIEWER: Tell me about the allotment.',
  '',
  `[00:00:04] P07: My neighbours call me ${MARKER} since the flood; we rebuilt the shed together and argued about water.`,
  '',
  '[00:00:12] INTERVIEWER: And the council?',
  '',
  '[00:00:15] P07: The council wanted three forms before anything could be built, and the permission took months and months.',
  '',
].join('\n');
const OTHER = `Interview P08\n\n[00:00:02] P08: I grow beans near the ${KEPT} fence and never argue with anyone about the water tank.\n`;

function span(text: string, part: string): { start_position: number; end_position: number } {
  const i = text.indexOf(part);
  assert.ok(i >= 0, part);
  return { start_position: i, end_position: i + part.length };
}

/** Every file under `dir`, recursively (symbolic links not followed). */
function allFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const abs = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...allFiles(abs));
    else if (e.isFile()) out.push(abs);
  }
  return out;
}

/** The files under `dir` whose bytes hold `needle` as UTF-8 or UTF-16LE. */
function filesHolding(dir: string, needle: string): string[] {
  const utf8 = Buffer.from(needle, 'utf8');
  const utf16 = Buffer.from(needle, 'utf16le');
  return allFiles(dir).filter((f) => {
    const b = fs.readFileSync(f);
    return b.includes(utf8) || b.includes(utf16);
  });
}

/** Every object of the git repository at `gitDir`, decompressed by git (`cat-file --batch-all-objects --batch`). */
function allGitObjects(gitDir: string): Buffer {
  return execFileSync('git', ['--git-dir', gitDir, 'cat-file', '--batch-all-objects', '--batch'], {
    maxBuffer: 1 << 30,
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1' },
  });
}

async function waitFor<T>(what: string, poll: () => Promise<T | undefined>, ms = 30_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await poll();
    if (v !== undefined) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('erase_source over HTTP (real CLI, real git)', function () {
  this.timeout(120_000);
  let dir = '';
  let project = '';
  let server: ServerProcess | undefined;
  let base = '';
  const configPath = () => path.join(dir, '.marginalia', 'config.yaml');
  const writeConfig = (payload: 'full' | 'default') =>
    fs.writeFileSync(
      configPath(),
      [
        'agent_context:',
        '  rate_limits:',
        '    requests_per_minute: 100000',
        '    mutations_per_minute: 100000',
        ...(payload === 'full' ? ['  audit:', '    include_payload: full'] : []),
        '',
      ].join('\n'),
    );

  const call = async (name: string, args: Record<string, unknown>, opts: { agent?: boolean; status?: number } = {}) => {
    const r = await callTool(base, name, args, opts.agent ? AS_AGENT : {});
    assert.equal(r.status, opts.status ?? 200, `${name}: ${JSON.stringify(r.body).slice(0, 800)}`);
    return r.body;
  };
  const start = async () => {
    server = await startServer(project, ['--snapshot-debounce-ms', '0']);
    base = server.base;
  };
  const snapshots = async () =>
    (await call('list_snapshots', { limit: 100 })).data.snapshots as { ref: string; message: string; author: string; date: string }[];
  /** Calls a mutating tool and waits for the automatic snapshot it causes, so each change is a snapshot of its own. */
  const mutate = async (name: string, args: Record<string, unknown>, opts: { agent?: boolean } = {}) => {
    const n = (await snapshots()).length;
    const body = await call(name, args, opts);
    await waitFor(`the snapshot after ${name}`, async () => ((await snapshots()).length > n ? true : undefined));
    return body;
  };

  before(async () => {
    dir = tmpDir('marginalia-erasure-e2e-');
    project = path.join(dir, 'study.qda');
    fs.mkdirSync(path.join(dir, '.marginalia'), { recursive: true });
    writeConfig('full');
    await start();
  });

  after(async () => {
    if (server) await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('erases every trace of the text except the exports it lists; agents are refused; confirm is required; the history still works', async () => {
    // ---- part 1: include_payload full, so the audit log holds the text as sent
    await call('initialize_version_control', {});
    const code = (await mutate('create_code', { name: 'Community', color: '#4E79A7' })).data.code_id as number;
    const p07 = (await mutate('add_text_source', { name: 'P07 interview', content: TEXT })).data.source_id as number;
    const p08 = (await mutate('add_text_source', { name: 'P08 interview', content: OTHER })).data.source_id as number;
    await mutate('apply_code', { code_id: code, source_id: p07, ...span(TEXT, `call me ${MARKER} since the flood`) });
    await mutate('apply_code', { code_id: code, source_id: p08, ...span(OTHER, `near the ${KEPT} fence`) });
    // an agent codes the transcript too (trust notify): its call and its event name the source
    await mutate('apply_code', { code_id: code, source_id: p07, ...span(TEXT, 'the permission took months and months') }, { agent: true });
    // an agent asks to add the transcript again (trust suggest): the held request stores the text; the researcher rejects it
    const held = await callTool(base, 'add_text_source', { name: 'P07 again', content: TEXT }, AS_AGENT);
    assert.equal(held.status, 202, JSON.stringify(held.body));
    const requestId = (held.body.data as { request_id: string }).request_id;
    const rejected = await request(base, 'POST', `/approvals/${requestId}/reject`, { reason: 'duplicate' });
    assert.equal(rejected.status, 200, JSON.stringify(rejected.body));
    // a memo quoting the transcript: the researcher's own note, not erased (said in the report)
    await mutate('create_code', { name: 'Nicknames', color: '#E15759', memo: 'P07 calls themself by a nickname' });

    // exports under the project folder: listed by erase_source, never deleted
    fs.mkdirSync(path.join(dir, 'exports'));
    for (const [format, file] of [
      ['html', 'exports/study.html'],
      ['refi_qda', 'exports/study.qdpx'],
      ['segments_csv', 'exports/segments.csv'],
    ]) {
      await call('export_data', { format, output_path: path.join(dir, file as string) });
    }

    // ---- part 2: restart with the default audit form (long strings as length + hash)
    await server!.stop();
    server = undefined;
    // git's own auto-gc packs a history now and then: the snapshots so far go into a pack, the later ones stay
    // loose, so the erasure must rewrite a pack as well as drop loose objects
    execFileSync('git', ['--git-dir', path.join(dir, '.marginalia', 'history.git'), 'gc', '--quiet'], { env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1' } });
    writeConfig('default');
    await start();
    const longKept = `${OTHER}${'More words from P08 about beans and the weather. '.repeat(6)}`;
    await mutate('add_text_source', { name: 'P08 follow-up', content: longKept });
    await mutate('apply_code', { code_id: code, source_id: p07, ...span(TEXT, 'we rebuilt the shed together') });
    const audit = path.join(dir, '.marginalia', 'audit.jsonl');
    const auditLines = fs
      .readFileSync(audit, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const hashed = auditLines.find((e) => e.tool === 'add_text_source' && e.arguments?.name === 'P08 follow-up');
    assert.equal(typeof hashed.arguments.content.sha256, 'string', 'the default audit form hashes a long text');
    assert.equal(hashed.arguments.content.length, [...longKept].length);
    const fullLine = auditLines.find((e) => e.tool === 'add_text_source' && e.arguments?.name === 'P07 interview');
    assert.equal(fullLine.arguments.content, TEXT, 'include_payload: full kept the text as sent');

    // the marker is really there before the erasure: the search below can find it
    const gitDir = path.join(dir, '.marginalia', 'history.git');
    assert.ok(allGitObjects(gitDir).includes(Buffer.from(MARKER)), 'the history holds the marker before the erasure');
    assert.ok(
      filesHolding(dir, MARKER).some((f) => f.endsWith('audit.jsonl')),
      'the audit log holds the marker before the erasure',
    );
    const messagesBefore = (await snapshots()).map((s) => `${s.message}\u0000${s.author}\u0000${s.date}`);

    // ---- refusals: nothing is erased
    const denied = await call('erase_source', { source_id: p07, confirm: true }, { agent: true, status: 403 });
    assert.equal(denied.error_code, 'APPROVAL_FORBIDDEN');
    const noConfirm = await call('erase_source', { source_id: p07 }, { status: 400 });
    assert.equal(noConfirm.error_code, 'INVALID_ARGUMENTS');
    assert.match(String(noConfirm.error), /confirm must be true/);
    assert.equal((await call('erase_source', { source_id: p07, confirm: false }, { status: 400 })).error_code, 'INVALID_ARGUMENTS');
    assert.equal((await call('erase_source', { source_id: 999, confirm: true }, { status: 404 })).error_code, 'SOURCE_NOT_FOUND');
    const still = (await call('read_source_content', { source_id: p07 })).data;
    assert.ok(String(still.content).includes(MARKER), 'nothing was erased by the refused calls');
    assert.ok(allGitObjects(gitDir).includes(Buffer.from(MARKER)), 'the history is untouched by the refused calls');

    // ---- the erasure
    const report = (await call('erase_source', { source_id: p07, confirm: true })).data;
    assert.equal(report.erased, true);
    assert.equal(report.source_name, 'P07 interview');
    assert.equal(report.database.segments, 3);
    assert.ok(report.database.events_redacted >= 3, `events redacted: ${report.database.events_redacted}`);
    assert.equal(report.database.file_rewritten, true);
    assert.equal(report.database.approvals_redacted, 1, 'the held add_text_source request');
    assert.ok(report.audit_log.lines_rewritten >= 1, JSON.stringify(report.audit_log));
    assert.equal(report.history.initialized, true);
    assert.ok(report.history.snapshots >= 9, JSON.stringify(report.history));
    assert.ok(report.history.snapshots_rewritten >= 1 && report.history.snapshots_rewritten < report.history.snapshots, JSON.stringify(report.history));
    const listed = (report.copies_found as { relative: string; path: string }[]).map((c) => c.relative).sort();
    assert.deepEqual(listed, ['exports/segments.csv', 'exports/study.html', 'exports/study.qdpx']);
    assert.ok(report.not_erased.some((n: string) => /memos/.test(n)));
    assert.equal((await call('read_source_content', { source_id: p07 }, { status: 404 })).error_code, 'SOURCE_NOT_FOUND');
    // stop: the last snapshot is committed, the project checkpointed
    await server!.stop();
    server = undefined;

    // ---- the search: every file under the project folder, every git object
    const holding = filesHolding(dir, MARKER)
      .map((f) => path.relative(dir, f).split(path.sep).join('/'))
      .sort();
    // the .qdpx is a ZIP (deflated): its bytes need not show the marker; the listed exports are allowed
    assert.deepEqual(
      holding.filter((f) => !listed.includes(f)),
      [],
      `files still holding the marker: ${holding.join(', ')}`,
    );
    assert.ok(holding.includes('exports/study.html') && holding.includes('exports/segments.csv'), 'the exports were not deleted');
    const objects = allGitObjects(gitDir);
    assert.equal(objects.includes(Buffer.from(MARKER)), false, 'no git object holds the marker');
    assert.ok(objects.includes(Buffer.from(KEPT)), 'the other transcript is still in the history');
    assert.ok(
      filesHolding(dir, KEPT).some((f) => f === project),
      'the other transcript is still in the project file',
    );
    assert.deepEqual(fs.readdirSync(path.join(gitDir, 'logs', 'refs', 'heads')), ['main']);
    // the search index: no term of the marker (fts4aux lists every term the index holds)
    const SQL = await initSqlJs();
    const db = new SQL.Database(fs.readFileSync(project));
    db.exec('CREATE VIRTUAL TABLE temp.terms USING fts4aux(main, source_fts); CREATE VIRTUAL TABLE temp.segterms USING fts4aux(main, segment_fts)');
    const terms = (t: string) => new Set((db.exec(`SELECT DISTINCT term FROM temp.${t}`)[0]?.values ?? []).map((r) => String(r[0])));
    assert.equal(terms('terms').has(MARKER), false);
    assert.equal(terms('segterms').has(MARKER), false);
    assert.equal(terms('terms').has(KEPT), true);
    assert.equal(String(db.exec('PRAGMA freelist_count')[0]?.values[0]?.[0]), '0', 'VACUUM left no free page');
    const seqs = (db.exec('SELECT seq FROM events ORDER BY seq')[0]?.values ?? []).map((r) => Number(r[0]));
    assert.deepEqual(
      seqs,
      seqs.map((_, i) => i + 1),
      'events are kept in sequence',
    );
    const redacted = (db.exec("SELECT payload FROM events WHERE payload LIKE '%[erased]%'")[0]?.values ?? []).length;
    assert.ok(redacted >= 3);
    db.close();

    // ---- the history still works: messages, authors and dates kept; new snapshots; view_diff
    await start();
    const after = await snapshots();
    const messagesAfter = after.map((s) => `${s.message}\u0000${s.author}\u0000${s.date}`);
    assert.deepEqual(messagesAfter.slice(-messagesBefore.length), messagesBefore, 'every earlier snapshot kept its message, author and date');
    await call('create_code', { name: 'After erasure', color: '#59A14F' });
    const newest = await waitFor('a snapshot after the erasure', async () => {
      const s = await snapshots();
      return s.length > after.length ? s : undefined;
    });
    assert.match(newest[0]!.message, /^Created the code 'After erasure'$/);
    const diff = (await call('view_diff', { from_ref: newest[1]!.ref, to_ref: newest[0]!.ref })).data;
    assert.deepEqual(diff.codes.added, ['After erasure']);
    const firstDiff = (await call('view_diff', { from_ref: newest[newest.length - 1]!.ref, to_ref: newest[0]!.ref })).data;
    assert.equal(String(firstDiff.raw_diff).includes(MARKER), false);
    assert.deepEqual(firstDiff.sources.added.sort(), ['P08 follow-up', 'P08 interview']);
  });
});
