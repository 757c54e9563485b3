// Builds the workspace the screenshots show: a copy of the sample study with a project seeded by the
// real CLI (`marginalia serve --seed`; its codings are then the researcher Priya's, who is also the
// workspace's marginalia.coder.name), then, through the real tool server (`marginalia serve` again, its HTTP
// tools), an agent's (Claude Code's) coding suggestions over four weeks that Priya accepts, edits or rejects.
// OUT_DIR/.marginalia/team-project.qda-copy (not a .qda, so the workspace keeps one project) is the same
// project after a team's work: a second human coder (Sam) and the agent code Priya's passages again, with
// some differences. The screenshot run shows the single-coder
// features on the first and switches to the second for the team's reports (screenshots.mjs, "team coding").
// The workspace's .marginalia/config.yaml lets agents code on their own (apply_code notifies) and call
// quickly. The server is stopped with SIGTERM each time, which checkpoints.
// Usage: node test/integration/prepareScreenshotWorkspace.mjs OUT_DIR   (run `node esbuild.mjs` first)
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const out = resolve(process.argv[2] ?? join(root, '.test-tmp', 'screenshot-workspace'));
rmSync(out, { recursive: true, force: true });
cpSync(join(root, 'samples', 'community-gardens'), out, { recursive: true });
const project = join(out, 'community-gardens.qda');
// transcripts wrap and have no minimap by the transcript language's own defaults (package.json
// configurationDefaults), so the images show what a researcher gets; the tool server takes any free port;
// codebook health reports "used only once" from the first coded passage (default: after 50), so the small
// sample study has problems to show
mkdirSync(join(out, '.vscode'), { recursive: true });
writeFileSync(
  join(out, '.vscode', 'settings.json'),
  JSON.stringify({ 'marginalia.server.port': 0, 'marginalia.codebookHealth.usedOnceAfter': 0, 'marginalia.coder.name': 'Priya' }, null, 2),
);
// the seeding's own Marginalia home (its tokens), thrown away at the end
const home = mkdtempSync(join(tmpdir(), 'marginalia-screenshot-home-'));

/** Runs `marginalia serve` on the project with `args`; resolves with its base URL once it serves. */
function serve(args) {
  const child = spawn(process.execPath, [join(root, 'bin', 'marginalia.js'), 'serve', '--project', project, '--port', '0', '--coder', 'Priya', ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, MARGINALIA_HOME: home },
  });
  const exited = new Promise((res) => child.on('exit', (code) => res(code)));
  return new Promise((res, rej) => {
    let text = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      rej(new Error('the CLI did not start within 30 s'));
    }, 30_000);
    child.stdout.on('data', (d) => {
      text += d;
      const m = /is serving .* at (http:\/\/\S+) /.exec(text);
      if (m) {
        clearTimeout(timer);
        res({
          base: m[1],
          async stop() {
            child.kill('SIGTERM');
            const code = await exited;
            if (code !== 0) throw new Error(`serve exited with ${code}`);
          },
        });
      }
    });
    exited.then((code) => rej(new Error(`serve exited with ${code} before serving`)));
  });
}

/** Calls a tool; `as` picks the token and the coder: researcher (Priya), sam (the researcher's token naming Sam) or agent (Claude Code). */
async function call(base, as, name, args) {
  const tokens = JSON.parse(readFileSync(join(home, 'credentials.json'), 'utf8'));
  const headers = { 'content-type': 'application/json' };
  if (as === 'agent')
    Object.assign(headers, { authorization: `Bearer ${tokens.agent_token}`, 'x-marginalia-client': 'Claude Code', 'x-marginalia-model': 'claude-opus-4-5' });
  else if (as === 'sam')
    Object.assign(headers, { authorization: `Bearer ${tokens.reviewer_token}`, 'x-marginalia-client': 'Sam (entered by Priya)', 'x-marginalia-user': 'Sam' });
  else Object.assign(headers, { authorization: `Bearer ${tokens.reviewer_token}`, 'x-marginalia-client': 'screenshot seeding' });
  const res = await fetch(`${base}/tools/${name}`, { method: 'POST', headers, body: JSON.stringify({ arguments: args }) });
  const body = await res.json();
  if (res.status !== 200 || !body.success) throw new Error(`${name} as ${as}: ${res.status} ${JSON.stringify(body)}`);
  return body.data;
}

/** `[start, end)` of about the first half of the passage, ending at a space. */
function firstHalf(s) {
  const i = s.text.lastIndexOf(' ', Math.floor(s.text.length / 2));
  return i > 8 ? [s.start_pos, s.start_pos + i] : [s.start_pos, s.end_pos];
}

/** Opens the project file with sql.js, runs `edit(db)` and writes the file back (the server is stopped). */
async function editProject(edit) {
  const require = createRequire(import.meta.url);
  const SQL = await require('sql.js')({ wasmBinary: readFileSync(require.resolve('sql.js/dist/sql-wasm.wasm')) });
  const db = new SQL.Database(readFileSync(project));
  edit(db);
  writeFileSync(`${project}.tmp`, Buffer.from(db.export()));
  db.close();
  cpSync(`${project}.tmp`, project);
  rmSync(`${project}.tmp`);
}

async function seedTeam() {
  // 1. the sample study; the seeder's codings become the researcher Priya's (the seeder's name is fixed)
  await (await serve(['--seed', out])).stop();
  await editProject((db) => db.run("UPDATE segments SET owner = 'Priya' WHERE owner = 'sample-study'"));
  // 2. agents may code on their own in this project (apply_code notifies instead of asking), and the seeding's
  //    and the screenshot run's calls come faster than the default rate limits allow
  mkdirSync(join(out, '.marginalia'), { recursive: true });
  writeFileSync(
    join(out, '.marginalia', 'config.yaml'),
    'agent_context:\n  trust:\n    overrides: { apply_code: notify }\n  rate_limits: { requests_per_minute: 1000, mutations_per_minute: 1000 }\n',
  );
  const server = await serve([]);
  const { base } = server;
  const codes = (await call(base, 'researcher', 'list_codes', {})).codes;
  const priya = (await call(base, 'researcher', 'list_segments', { limit: 1000 })).segments.sort(
    (a, b) => a.source_id - b.source_id || a.start_pos - b.start_pos,
  );
  const otherCode = (id) => (codes.find((c) => c.code_id > id) ?? codes[0]).code_id;
  // 3. Claude Code's suggestions over four weeks, Priya deciding each: more accepted as the weeks go by
  const plan = [
    ['accept', 'reject', 'reject', 'edit'],
    ['accept', 'accept', 'reject', 'edit'],
    ['accept', 'accept', 'accept', 'reject'],
    ['accept', 'accept', 'accept', 'accept'],
  ];
  const made = [];
  let k = 0;
  for (const [week, decisions] of plan.entries()) {
    for (const decision of decisions) {
      const s = priya[k++ % priya.length];
      // accepted: the passage and code Priya had coded (no new segment); rejected: another code; edited: half the passage, approved, then removed
      const [start_pos, end_pos] = decision === 'edit' ? firstHalf(s) : [s.start_pos, s.end_pos];
      const code_id = decision === 'reject' ? otherCode(s.code_id) : s.code_id;
      const r = await call(base, 'agent', 'suggest_code_application', {
        source_id: s.source_id,
        code_id,
        start_pos,
        end_pos,
        rationale: 'the passage speaks to this code',
      });
      made.push({ id: r.suggestion_id, week });
      if (decision === 'reject')
        await call(base, 'researcher', 'reject_coding_suggestion', { suggestion_id: r.suggestion_id, reason: 'another code fits better' });
      else {
        const a = await call(base, 'researcher', 'approve_coding_suggestion', { suggestion_id: r.suggestion_id });
        if (decision === 'edit') await call(base, 'researcher', 'delete_segment', { segment_id: a.segment_id });
      }
    }
  }
  await server.stop();
  // 4. the suggestions as made over the four weeks before today (the tool server stamps the present): the
  //    human-vs-AI view's weekly lines need more than one week; nothing else reads these dates
  const now = Date.now();
  await editProject((db) => {
    for (const { id, week } of made)
      db.run('UPDATE suggestions SET created_at = ? WHERE id = ?', [new Date(now - (3 - week) * 7 * 86_400_000 - 3_600_000).toISOString(), id]);
  });
  // 5. the team's copy: Sam and Claude Code code Priya's passages again (on the project's own path, then moved
  //    into .marginalia and the single-coder project put back)
  const single = `${out}-single.qda`;
  cpSync(project, single);
  const team = await serve([]);
  const apply = (as, code_id, g, [start_pos, end_pos]) => call(team.base, as, 'apply_code', { code_id, source_id: g.source_id, start_pos, end_pos });
  for (const [i, g] of priya.entries()) {
    const space = g.text.indexOf(' ');
    const whole = [g.start_pos, g.end_pos];
    // Sam leaves out every fifth passage, starts every fifth a word later, reads every fifth as another code
    if (i % 5 === 1 && space > 0 && space < g.text.length - 8) await apply('sam', g.code_id, g, [g.start_pos + space + 1, g.end_pos]);
    else if (i % 5 === 2) await apply('sam', otherCode(g.code_id), g, whole);
    else if (i % 5 !== 0) await apply('sam', g.code_id, g, whole);
    // Claude Code codes three passages in four, one of those only its first half
    if (i % 4 === 1) await apply('agent', g.code_id, g, firstHalf(g));
    else if (i % 4 !== 2) await apply('agent', g.code_id, g, whole);
  }
  await team.stop();
  cpSync(project, join(out, '.marginalia', 'team-project.qda-copy'));
  cpSync(single, project);
  rmSync(single);
}

try {
  await seedTeam();
  if (!existsSync(project)) throw new Error('no project');
  console.log(`screenshot workspace ready: ${out}`);
} catch (e) {
  console.error(`seeding failed: ${e.stack ?? e}`);
  process.exitCode = 1;
} finally {
  rmSync(home, { recursive: true, force: true });
}
