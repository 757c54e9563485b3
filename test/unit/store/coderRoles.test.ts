/**
 * Coder roles (issue 14 item 1, migration 14): a schema-13 project, built on disk with sql.js as an earlier
 * Marginalia left it, is opened; the migration gives codes, categories, sources, text and AV segments a
 * `coder_role` and events a `caused_by.role` where the record allows: the local UI's session (`local`), the
 * owner `agent:local`, and sessions whose session.connected event names role researcher are the researcher's;
 * sessions whose session.connected names role agent are an agent's (its session wins over a shared owner name);
 * an owner with work in the local UI is the researcher elsewhere too; anything else stays unknown (NULL). The
 * expected roles are written out by hand from the rows below. Migration 16 then names who decided each approval
 * request (only the researcher decides; the pipeline's own timeouts name nobody).
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { openProjectHandle, type ProjectHandle } from '../../../src/cli/compose';
import { loadSqlJs } from '../../../src/store/sqljs';
import { MIGRATIONS } from '../../../src/store/migrations';
import { FIXED_MS } from '../domain/projectFixture';

const ISO = '2025-06-01T10:00:00.000Z';
const AGENT_SESSION = 'aaaaaaaa-1111-4222-8333-444455556666';
const RESEARCHER_SESSION = 'bbbbbbbb-1111-4222-8333-444455556666';
const TEXT = 'We argue about the hose rota every week.';

/** A database with migrations 1-13 applied (their SQL functions registered), as a schema-13 Marginalia wrote it. */
async function databaseAt13() {
  const SQL = await loadSqlJs();
  const db = new SQL.Database();
  for (const m of MIGRATIONS.filter((x) => x.version <= 13).sort((x, y) => x.version - y.version)) {
    for (const [name, fn] of Object.entries(m.functions ?? {})) db.create_function(name, fn);
    db.exec(m.sql);
  }
  db.exec('PRAGMA user_version = 13');
  return db;
}

async function writeSchema13Project(file: string): Promise<void> {
  const db = await databaseAt13();
  db.run(
    "INSERT INTO sources(id, name, type, content, content_length, owner, session_id, created_at, updated_at) VALUES (1, 'Interview', 'text', ?, ?, 'Ana', 'local', ?, ?)",
    [TEXT, [...TEXT].length, ISO, ISO],
  );
  db.run(
    "INSERT INTO sources(id, name, type, file_path, mime, owner, session_id, created_at, updated_at) VALUES (2, 'talk.mp3', 'audio', '/nowhere/talk.mp3', 'audio/mpeg', 'claude', ?, ?, ?)",
    [AGENT_SESSION, ISO, ISO],
  );
  db.run("INSERT INTO categories(id, name, name_key, owner, session_id, created_at) VALUES (1, 'Place', 'place', 'claude', ?, ?)", [AGENT_SESSION, ISO]);
  const code = (id: number, name: string, owner: string, session: string | null) =>
    db.run('INSERT INTO codes(id, name, name_key, color, owner, session_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)', [
      id,
      name,
      name.toLowerCase(),
      '#4E79A7',
      owner,
      session,
      ISO,
      ISO,
    ]);
  code(1, 'Local', 'Ana', 'local');
  code(2, 'Agent', 'claude', AGENT_SESSION);
  code(3, 'Reviewer', 'Ana', RESEARCHER_SESSION);
  code(4, 'Mystery', 'ghost', 'sess-unknown');
  const seg = (id: number, s: number, e: number, owner: string, session: string | null) =>
    db.run(
      'INSERT INTO segments(id, code_id, source_id, start_pos, end_pos, text, owner, session_id, created_at, updated_at) VALUES (?, 1, 1, ?, ?, ?, ?, ?, ?, ?)',
      [id, s, e, TEXT.slice(s, e), owner, session, ISO, ISO],
    );
  seg(1, 0, 2, 'Ana', 'local'); // the local UI
  seg(2, 3, 8, 'claude', AGENT_SESSION); // a known agent session
  seg(3, 9, 14, 'Ana', null); // no session: an owner who worked in the local UI
  seg(4, 15, 18, 'agent:local', null); // the researcher as earlier versions authored them
  seg(5, 19, 23, 'ghost', 'sess-unknown'); // nothing to go by
  seg(6, 24, 28, 'Ana', AGENT_SESSION); // an agent that called itself Ana: its session decides
  seg(7, 29, 34, 'Ana', RESEARCHER_SESSION); // the reviewer token's session
  db.run(
    "INSERT INTO av_segments(id, code_id, source_id, start_ms, end_ms, owner, session_id, created_at, updated_at) VALUES (8, 2, 2, 0, 1000, 'claude', ?, ?, ?)",
    [AGENT_SESSION, ISO, ISO],
  );
  db.run("UPDATE sqlite_sequence SET seq = 8 WHERE name IN ('segments', 'av_segments')");

  const ev = (seq: number, type: string, aggType: string, aggId: string, session: string, clientType: string, user: string, payload: unknown) =>
    db.run(
      `INSERT INTO events(seq, event_id, event_type, timestamp, aggregate_type, aggregate_id, session_id, client_type, user, correlation_id, payload)
       VALUES (?, NULL, ?, ?, ?, ?, coalesce(unhex(?), ?), ?, ?, NULL, ?)`,
      [
        seq,
        type,
        FIXED_MS,
        aggType,
        aggId,
        /^[0-9a-f-]{36}$/.test(session) ? session.replace(/-/g, '') : null,
        session,
        clientType,
        user,
        JSON.stringify(payload),
      ],
    );
  ev(1, 'session.connected', 'session', AGENT_SESSION, AGENT_SESSION, 'ASSISTANT_A_CLI', 'claude', {
    session_id: AGENT_SESSION,
    client_type: 'ASSISTANT_A_CLI',
    client_name: 'Claude Code',
    role: 'agent',
  });
  ev(2, 'session.connected', 'session', RESEARCHER_SESSION, RESEARCHER_SESSION, 'REST_CLIENT', 'curl', {
    session_id: RESEARCHER_SESSION,
    client_type: 'REST_CLIENT',
    client_name: 'curl',
    role: 'researcher',
  });
  ev(3, 'coding.code_created', 'code', '2', AGENT_SESSION, 'ASSISTANT_A_CLI', 'claude', { code_id: 2, name: 'Agent' });
  ev(4, 'coding.code_created', 'code', '1', 'local', 'LOCAL_UI', 'Ana', { code_id: 1, name: 'Local' });
  ev(5, 'coding.code_created', 'code', '3', RESEARCHER_SESSION, 'REST_CLIENT', 'Ana', { code_id: 3, name: 'Reviewer' });
  ev(6, 'coding.code_created', 'code', '4', 'sess-unknown', 'REST_CLIENT', 'ghost', { code_id: 4, name: 'Mystery' });
  ev(7, 'approval.granted', 'approval', 'req-1', RESEARCHER_SESSION, 'REST_CLIENT', 'Ana', {
    request_id: 'req-1',
    approved: true,
    action_type: 'create_code',
    approved_by: RESEARCHER_SESSION,
  });
  const approval = (id: string, status: string, decidedBy: string | null) =>
    db.run(
      `INSERT INTO approval_requests(request_id, tool, arguments, session_id, client_type, client_name, user, trust_level, description, status, created_at, expires_at, decided_at, decided_by)
       VALUES (?, 'create_code', '{"name":"X"}', ?, 'ASSISTANT_A_CLI', 'Claude Code', 'claude', 'require', 'Create Code: name=X', ?, ?, ?, ?, ?)`,
      [id, AGENT_SESSION, status, ISO, ISO, decidedBy ? ISO : null, decidedBy],
    );
  approval('req-1', 'completed', RESEARCHER_SESSION);
  approval('req-2', 'rejected', 'marginalia'); // timed out
  approval('req-3', 'pending', null);
  fs.writeFileSync(file, db.export());
  db.close();
}

describe('migration 14: coder roles', () => {
  const dirs: string[] = [];
  const handles: ProjectHandle[] = [];
  afterEach(async () => {
    for (const h of handles.splice(0)) await h.close().catch(() => undefined);
    for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
  });
  const open = async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'marginalia-roles-'));
    dirs.push(dir);
    const file = path.join(dir, 'old.qda');
    await writeSchema13Project(file);
    const h = await openProjectHandle(file, { checkpointIdleMs: 0 });
    handles.push(h);
    return h;
  };

  it('maps existing owners to researcher, agent or unknown where the record allows', async () => {
    const h = await open();
    const role = (table: string) =>
      Object.fromEntries(
        h.store.all<{ id: number; coder_role: string | null }>(`SELECT id, coder_role FROM ${table} ORDER BY id`).map((r) => [r.id, r.coder_role]),
      );
    assert.deepEqual(role('segments'), { 1: 'researcher', 2: 'agent', 3: 'researcher', 4: 'researcher', 5: null, 6: 'agent', 7: 'researcher' });
    assert.deepEqual(role('av_segments'), { 8: 'agent' });
    assert.deepEqual(role('codes'), { 1: 'researcher', 2: 'agent', 3: 'researcher', 4: null });
    assert.deepEqual(role('categories'), { 1: 'agent' });
    assert.deepEqual(role('sources'), { 1: 'researcher', 2: 'agent' });
    assert.deepEqual(h.store.all('PRAGMA integrity_check'), [{ integrity_check: 'ok' }]);
  });

  it("reads the roles back through the repository: segments' coder_role and events' caused_by role, coder and client", async () => {
    const h = await open();
    const segs = h.repo.listSegmentsForSource(1).map((s) => [s.segment_id, s.coder_role]);
    assert.deepEqual(
      segs.sort((a, b) => Number(a[0]) - Number(b[0])),
      [
        [1, 'researcher'],
        [2, 'agent'],
        [3, 'researcher'],
        [4, 'researcher'],
        [5, null],
        [6, 'agent'],
        [7, 'researcher'],
      ],
    );
    assert.equal(h.repo.getCode(2)?.coder_role, 'agent');
    const created = h.repo.listEventsSince(0, 100).filter((e) => e.event_type === 'coding.code_created');
    assert.deepEqual(
      created.map((e) => e.caused_by),
      [
        { session_id: AGENT_SESSION, client_type: 'ASSISTANT_A_CLI', user: 'claude', role: 'agent', coder: 'claude', client: 'Claude Code' },
        { session_id: 'local', client_type: 'LOCAL_UI', user: 'Ana', role: 'researcher', coder: 'Ana' },
        { session_id: RESEARCHER_SESSION, client_type: 'REST_CLIENT', user: 'Ana', role: 'researcher', coder: 'Ana' },
        { session_id: 'sess-unknown', client_type: 'REST_CLIENT', user: 'ghost' },
      ],
    );
  });

  it('migration 16: names the researcher who decided an approval request; timeouts and pending requests name nobody', async () => {
    const h = await open();
    assert.deepEqual(h.store.all('SELECT request_id, decided_by_coder, decided_by_role FROM approval_requests ORDER BY request_id'), [
      { request_id: 'req-1', decided_by_coder: 'Ana', decided_by_role: 'researcher' },
      { request_id: 'req-2', decided_by_coder: null, decided_by_role: null },
      { request_id: 'req-3', decided_by_coder: null, decided_by_role: null },
    ]);
  });

  it('stores the role of what is made after the migration', async () => {
    const h = await open();
    const id = h.store.transaction(() =>
      h.repo.insertSegment(
        { code_id: 2, source_id: 1, start_pos: 35, end_pos: 39, text: TEXT.slice(35, 39), memo: null, importance: 0 },
        { owner: 'claude', session_id: AGENT_SESSION, now: ISO, coder_role: 'agent' },
      ),
    );
    assert.equal(h.repo.getSegment(id)?.coder_role, 'agent');
    const { seq } = h.store.transaction(() =>
      h.repo.insertEvent({
        event_id: '',
        event_type: 'coding.segment_coded',
        timestamp: ISO,
        aggregate_type: 'segment',
        aggregate_id: String(id),
        caused_by: { session_id: AGENT_SESSION, client_type: 'CUSTOM', user: 'claude', role: 'agent', coder: 'Claude', client: 'claude-code', model: 'opus' },
        payload: { segment_id: id },
        metadata: { correlation_id: 'c', sequence_number: 0 },
      }),
    );
    const back = h.repo.listEventsSince(seq - 1, 1)[0]!;
    assert.deepEqual(back.caused_by, {
      session_id: AGENT_SESSION,
      client_type: 'CUSTOM',
      user: 'claude',
      role: 'agent',
      coder: 'Claude',
      client: 'claude-code',
      model: 'opus',
    });
  });
});
