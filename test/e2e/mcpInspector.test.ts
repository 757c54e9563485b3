/**
 * The MCP Inspector CLI (@modelcontextprotocol/inspector 2.12.0 `--cli`, a real third-party client) lists
 * and calls Marginalia's tools over stdio (`marginalia mcp --project P`) and over Streamable HTTP
 * (`marginalia serve`, /mcp with the bearer token), in both protocol eras. Needs `npm run build`.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { AGENT_TOKEN, REPO_ROOT, REVIEWER_TOKEN, startServer, tmpDir, type ServerProcess } from '../helpers/serverProcess';

const INSPECTOR = path.join(REPO_ROOT, 'node_modules', '.bin', 'inspector');
const BIN = path.join(REPO_ROOT, 'bin', 'marginalia.js');
const SAMPLE = path.join(REPO_ROOT, 'samples', 'community-gardens');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `inspector --cli ARGS` with HOME in `home` (the inspector keeps its files there), resolving with its output. */
function inspector(args: string[], home: string): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(INSPECTOR, ['--cli', ...args], { env: { ...process.env, HOME: home }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 100_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/**
 * The `result` of an `--format json` run; fails with the output when the run failed. The inspector exits
 * 5 when a tool answers `isError: true` (`expectToolError`), printing the result all the same.
 */
function resultOf(run: Run, expectToolError = false): any {
  assert.equal(run.code, expectToolError ? 5 : 0, `inspector exited ${run.code}\nstdout: ${run.stdout.slice(0, 2000)}\nstderr: ${run.stderr.slice(0, 2000)}`);
  return (JSON.parse(run.stdout) as { result: unknown }).result;
}

describe('MCP Inspector CLI against marginalia', function () {
  this.timeout(180_000);
  let dir: string;

  beforeEach(() => {
    dir = tmpDir('marginalia-inspector-');
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  describe('over stdio (marginalia mcp --project P)', () => {
    const stdio = (project: string, home: string, args: string[]) => [
      '-e',
      `MARGINALIA_HOME=${home}`,
      '-e',
      `MARGINALIA_TOKEN=${AGENT_TOKEN}`,
      '-e',
      `MARGINALIA_REVIEWER_TOKEN=${REVIEWER_TOKEN}`,
      '--format',
      'json',
      '-q',
      ...args,
      '--',
      process.execPath,
      BIN,
      'mcp',
      '--project',
      project,
      '--create',
    ];

    for (const era of ['legacy', 'modern'] as const) {
      it(`lists the tools and calls them (${era} era)`, async () => {
        const project = path.join(dir, `${era}.qda`);
        const home = path.join(dir, '.marginalia-home');
        const list = resultOf(await inspector(stdio(project, home, ['--protocol-era', era, '--method', 'tools/list']), dir));
        const names = (list.tools as { name: string }[]).map((t) => t.name);
        assert.ok(names.includes('list_codes') && names.includes('create_code') && names.includes('get_approval_status'), names.join(' '));
        const createCode = (list.tools as { name: string; annotations: { destructiveHint: boolean }; outputSchema: { type: string } }[]).find(
          (t) => t.name === 'create_code',
        )!;
        assert.equal(createCode.annotations.destructiveHint, false);
        assert.equal(createCode.outputSchema.type, 'object');

        const listed = resultOf(await inspector(stdio(project, home, ['--protocol-era', era, '--method', 'tools/call', '--tool-name', 'list_codes']), dir));
        assert.deepEqual(listed.structuredContent, { count: 0, codes: [] });

        const created = resultOf(
          await inspector(
            stdio(project, home, ['--protocol-era', era, '--method', 'tools/call', '--tool-name', 'create_code', '--tool-arg', 'name=Hope', 'color=#59A14F']),
            dir,
          ),
        );
        assert.notEqual(created.isError, true);
        assert.equal(created.structuredContent.status, 'pending_approval', 'the agent token gets the trust layer: create_code is Suggest');
        assert.match(created.content[0].text, /get_approval_status/);

        const failed = resultOf(
          await inspector(
            stdio(project, home, ['--protocol-era', era, '--method', 'tools/call', '--tool-name', 'get_code', '--tool-args-json', '{"code_id": 42}']),
            dir,
          ),
          true,
        );
        assert.equal(failed.isError, true);
        assert.equal(failed.structuredContent.error_code, 'CODE_NOT_FOUND');
      });
    }

    it('passes the inspector --strict schema portability check', async () => {
      const project = path.join(dir, 'strict.qda');
      const run = await inspector(
        [
          '-e',
          `MARGINALIA_HOME=${path.join(dir, '.marginalia-home')}`,
          '--strict',
          '--method',
          'tools/list',
          '--',
          process.execPath,
          BIN,
          'mcp',
          '--project',
          project,
          '--create',
        ],
        dir,
      );
      assert.equal(run.code, 0, `--strict exits 6 on error-severity schema problems\n${run.stderr.slice(-3000)}`);
      assert.match(run.stderr + run.stdout, /0 errors/);
    });
  });

  describe('over Streamable HTTP (marginalia serve, /mcp)', () => {
    let server: ServerProcess;
    beforeEach(async () => {
      server = await startServer(path.join(dir, 'http.qda'), ['--seed', SAMPLE]);
    });
    afterEach(async () => {
      await server.stop();
    });

    const http = (args: string[], token = AGENT_TOKEN) => [
      `${server.base}/mcp`,
      '--header',
      `Authorization: Bearer ${token}`,
      '--format',
      'json',
      '-q',
      ...args,
    ];

    for (const era of ['legacy', 'modern'] as const) {
      it(`lists and calls tools, reads resources and gets prompts (${era} era)`, async () => {
        const list = resultOf(await inspector(http(['--protocol-era', era, '--method', 'tools/list']), dir));
        assert.ok((list.tools as unknown[]).length >= 70);
        const codes = resultOf(await inspector(http(['--protocol-era', era, '--method', 'tools/call', '--tool-name', 'list_codes']), dir));
        assert.equal(codes.structuredContent.count, 17, 'the sample codebook');
        const pending = resultOf(
          await inspector(
            http(['--protocol-era', era, '--method', 'tools/call', '--tool-name', 'create_code', '--tool-arg', `name=Inspector ${era}`, 'color=#59A14F']),
            dir,
          ),
        );
        assert.equal(pending.structuredContent.status, 'pending_approval');
        const approvals = await fetch(`${server.base}/approvals?status=pending`, { headers: { authorization: `Bearer ${REVIEWER_TOKEN}` } });
        const waiting = ((await approvals.json()) as { data: { approvals: { request_id: string }[] } }).data.approvals;
        assert.ok(
          waiting.some((a) => a.request_id === pending.structuredContent.request_id),
          'the researcher sees the request',
        );
        const briefing = resultOf(await inspector(http(['--protocol-era', era, '--method', 'resources/read', '--uri', 'qda://project/briefing']), dir));
        const b = JSON.parse(briefing.contents[0].text);
        assert.deepEqual(b.coding_progress, { total_sources: 4, coded_sources: 4, total_codes: 17, total_segments: 19 });
        const prompt = resultOf(
          await inspector(http(['--protocol-era', era, '--method', 'prompts/get', '--prompt-name', 'summarize_code', '--prompt-args', 'code_id=1']), dir),
        );
        assert.match(prompt.messages[0].content.text, /Summarise the code/);
      });
    }

    it('is refused without the token', async () => {
      const run = await inspector([`${server.base}/mcp`, '--stored-auth-only', '--format', 'json', '-q', '--method', 'tools/list'], dir);
      assert.notEqual(run.code, 0);
      assert.match(run.stderr + run.stdout, /auth/i, 'our 401 (WWW-Authenticate: Bearer) sends it looking for credentials');
      assert.ok(!/"tools"/.test(run.stdout), 'no tool list');
    });
  });
});
