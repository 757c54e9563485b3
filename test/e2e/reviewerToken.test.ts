/**
 * The reviewer token is the researcher's: `marginalia serve` never prints it (issue 14, item 7); the agent
 * token is still printed, and `marginalia token --reviewer` prints the reviewer token on request. Real CLI
 * processes with a private MARGINALIA_HOME holding generated tokens (no MARGINALIA_*_TOKEN in the environment).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { REPO_ROOT, startServer, tmpDir, type ServerProcess } from '../helpers/serverProcess';

const BIN = path.join(REPO_ROOT, 'bin', 'marginalia.js');

describe('e2e: the reviewer token is not printed by serve', function () {
  this.timeout(60_000);
  let dir: string;
  let home: string;
  let server: ServerProcess | undefined;
  const env = () => {
    const e: NodeJS.ProcessEnv = {};
    for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('MARGINALIA_')) e[k] = v;
    return { ...e, MARGINALIA_HOME: home };
  };

  before(() => {
    dir = tmpDir('marginalia-reviewer-token-');
    home = path.join(dir, 'home');
  });
  after(async () => {
    await server?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('prints the agent token and how to get the reviewer token, never the reviewer token itself', async () => {
    // startServer sets test tokens in the environment: unset them, so the install's stored tokens are used
    server = await startServer(path.join(dir, 'p.qda'), [], { MARGINALIA_TOKEN: '', MARGINALIA_REVIEWER_TOKEN: '', MARGINALIA_HOME: home });
    const stored = JSON.parse(fs.readFileSync(path.join(home, 'credentials.json'), 'utf8')) as { agent_token: string; reviewer_token: string };
    await new Promise((r) => setTimeout(r, 300)); // the rest of the banner
    const banner = server.stdout();
    assert.ok(banner.includes(stored.agent_token), 'the agent token is printed');
    assert.ok(!banner.includes(stored.reviewer_token), 'the reviewer token must not be printed');
    assert.match(banner, /marginalia token --reviewer/);
    assert.ok(!server.stderr().includes(stored.reviewer_token), 'nor logged');

    const printed = execFileSync(process.execPath, [BIN, 'token', '--reviewer'], { env: env(), encoding: 'utf8' });
    assert.equal(printed, `${stored.reviewer_token}\n`);
    assert.equal(execFileSync(process.execPath, [BIN, 'token'], { env: env(), encoding: 'utf8' }), `${stored.agent_token}\n`);
  });
});
