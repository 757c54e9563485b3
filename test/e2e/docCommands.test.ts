/**
 * The documentation's runnable commands run (issue 17, item 4): every fenced `bash` block that an HTML comment
 * `<!-- runnable expect="..." ... -->` marks, in README.md and docs/agents.md, is run with bash (`-e -o
 * pipefail`) from the repository root against a fresh `marginalia serve` (the built CLI; run `npm run build`
 * first) on a new project seeded with the sample study, as the README's quick start has it. The environment
 * gives what the docs tell the reader to export: `BASE` (the server's URL) and `TOKEN` (the agent token), and
 * the server's install (`MARGINALIA_HOME`, its tokens), so `npx marginalia token --reviewer` prints its reviewer
 * token. Blocks run in the order they appear, on one server (an approval block lists what an earlier one asked).
 * A block passes when it exits 0 and its standard output holds every `expect` string of its marker.
 * `npx` runs offline (`npm_config_offline`), so it can only use the repository's own `bin`.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { AGENT_TOKEN, REPO_ROOT, REVIEWER_TOKEN, startServer, tmpDir, type ServerProcess } from '../helpers/serverProcess';

/** A runnable block: where it is, its commands, and the strings its output must hold. */
interface RunnableBlock {
  file: string;
  line: number;
  script: string;
  expect: string[];
}

/** The runnable blocks of a Markdown file: a `<!-- runnable ... -->` line, then a ```bash fence. */
function runnableBlocks(file: string): RunnableBlock[] {
  const lines = fs.readFileSync(path.join(REPO_ROOT, file), 'utf8').split('\n');
  const out: RunnableBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const marker = /^<!--\s*runnable\b(.*?)-->\s*$/.exec(lines[i]!);
    if (!marker) continue;
    assert.match(lines[i + 1] ?? '', /^```(bash|sh)\s*$/, `${file}:${i + 1}: a runnable marker must stand right before a \`\`\`bash block`);
    const end = lines.findIndex((l, k) => k > i + 1 && /^```\s*$/.test(l));
    assert.ok(end > 0, `${file}:${i + 2}: unclosed code block`);
    // expect="..." values; \" inside is a quote
    const expect = [...marker[1]!.matchAll(/expect="((?:[^"\\]|\\.)*)"/g)].map((m) => m[1]!.replace(/\\"/g, '"'));
    out.push({ file, line: i + 2, script: lines.slice(i + 2, end).join('\n'), expect });
    i = end;
  }
  return out;
}

describe('docs: runnable command blocks of README.md and docs/agents.md (real CLI)', function () {
  this.timeout(120_000);
  const blocks = ['README.md', 'docs/agents.md'].flatMap(runnableBlocks);
  let server: ServerProcess;
  let dir: string;

  before(async () => {
    dir = tmpDir('marginalia-doc-');
    server = await startServer(path.join(dir, 'study.qda'), ['--seed', path.join(REPO_ROOT, 'samples', 'community-gardens')]);
  });
  after(async () => {
    await server?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('finds the marked blocks: a handful, each with an expectation', () => {
    assert.ok(blocks.length >= 4, `expected at least 4 runnable blocks, found ${blocks.length}`);
    for (const b of blocks) assert.ok(b.expect.length > 0, `${b.file}:${b.line}: a runnable block names what its output must hold (expect="...")`);
    assert.ok(
      blocks.some((b) => b.file === 'README.md'),
      'README.md has a runnable block',
    );
  });

  for (const block of blocks) {
    it(`${block.file}:${block.line} runs and prints ${block.expect.map((e) => JSON.stringify(e)).join(', ')}`, () => {
      const r = spawnSync('bash', ['-e', '-o', 'pipefail', '-c', block.script], {
        cwd: REPO_ROOT,
        // the server's own install: its tokens (as serve's environment gives them) and its MARGINALIA_HOME
        env: {
          ...process.env,
          BASE: server.base,
          TOKEN: AGENT_TOKEN,
          MARGINALIA_TOKEN: AGENT_TOKEN,
          MARGINALIA_REVIEWER_TOKEN: REVIEWER_TOKEN,
          MARGINALIA_HOME: path.join(dir, '.marginalia-home'),
          npm_config_offline: 'true',
          npm_config_update_notifier: 'false',
        },
        encoding: 'utf8',
        timeout: 60_000,
      });
      assert.equal(r.status, 0, `exit ${r.status}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}\n--- server log\n${server.stderr().slice(-2000)}`);
      for (const e of block.expect)
        assert.ok(r.stdout.includes(e), `output lacks ${JSON.stringify(e)}:\n${r.stdout}\n--- server log\n${server.stderr().slice(-2000)}`);
    });
  }
});
