/**
 * Bench section: MCP `tools/call` against the SDK with a trivial tool (issue 7, part 5; goal at most 1.2x).
 *
 * - real: `node bin/marginalia.js serve` (the built CLI) in a child process, `POST /mcp` with a 2025-11-25
 *   `tools/call list_codes` (stateless, what VS Code speaks), an agent's bearer token: Host/Origin/token
 *   guards, the MCP adapter, the agent layer (session, trust, audit, call log) and the tool on a 50-code
 *   project;
 * - floor: bench/mcpFloorServer.mjs, the SDK's own serving path on the same transport (express 5,
 *   `createMcpHandler` with `legacy: 'stateless'`, `toNodeHandler`, a fresh McpServer per request) with one
 *   trivial tool returning the real call's result from memory (the same response bytes).
 * Sequential calls over one keep-alive node:http socket per server, in rotating blocks; the servers on CPU0 and
 * the client on CPU1 as the anchors measured the floor (PIN_SERVERS in bench/lib/http.ts; BENCH_PIN=0 for none).
 * Runs alone (`npx tsx bench/mcp.ts`) or as a child of bench/run.ts; `npm run bench` builds dist/ first.
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { copyProject, ensureProject, specForSize } from './lib/generate';
import { KeepAliveClient, PIN_SERVERS, pinSelf, processCpuMs, spawnServer, type ChildServer } from './lib/http';
import { QUICK, machineLine, sectionMain, type SectionResult } from './lib/section';
import { LATENCY_HEADER, latencyCells, ms, ratio, stats, table } from './lib/stats';

const ROOT = path.resolve(__dirname, '..');
const DATA = path.join(__dirname, '.data');
const CFG = QUICK ? { warm: 200, calls: 1000, block: 250 } : { warm: 500, calls: 3000, block: 250 };
const GOAL_RATIO = 1.2;
const BODY = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_codes', arguments: {} } });

function log(msg: string): void {
  process.stderr.write(`[bench mcp] ${msg}\n`);
}

/** The JSON-RPC result in an MCP HTTP answer (plain JSON or one SSE `data:` frame). */
function rpcResult(body: string): { result?: { isError?: boolean; structuredContent?: { count?: number } }; error?: unknown } {
  const data = body.trimStart().startsWith('{') ? body : (/^data: (.*)$/m.exec(body)?.[1] ?? '{}');
  return JSON.parse(data) as { result?: { isError?: boolean; structuredContent?: { count?: number } } };
}

async function run(): Promise<SectionResult> {
  if (!fs.existsSync(path.join(ROOT, 'dist', 'cli.js'))) throw new Error('dist/cli.js is missing: run `node esbuild.mjs` first (npm run bench does)');
  const load0 = os.loadavg();
  fs.mkdirSync(DATA, { recursive: true });
  const small = await ensureProject(DATA, specForSize('small', 1e6, 50, 11));
  const runDir = fs.mkdtempSync(path.join(DATA, 'run-mcp-'));
  const servers: ChildServer[] = [];
  const clients: KeepAliveClient[] = [];
  // servers on CPU0, this client on CPU1, as the anchors measured the MCP floor (PIN_SERVERS)
  const cpu = PIN_SERVERS ? 0 : undefined;
  if (PIN_SERVERS) pinSelf(true);
  try {
    const dir = path.join(runDir, 'mcp');
    fs.mkdirSync(path.join(dir, '.marginalia'), { recursive: true });
    fs.writeFileSync(
      path.join(dir, '.marginalia', 'config.yaml'),
      'agent_context:\n  rate_limits:\n    requests_per_minute: 1000000\n    mutations_per_minute: 1000000\n',
    );
    const file = path.join(dir, 'bench.qda');
    copyProject(small.file, file);
    const token = randomBytes(24).toString('base64url');
    const env = { MARGINALIA_TOKEN: token, MARGINALIA_REVIEWER_TOKEN: randomBytes(24).toString('base64url'), MARGINALIA_HOME: path.join(runDir, 'home') };
    const headers = {
      authorization: `Bearer ${token}`,
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-11-25',
      'x-marginalia-client': 'bench',
    };
    const real = await spawnServer([path.join(ROOT, 'bin', 'marginalia.js'), 'serve', '--project', file, '--port', '0'], { cwd: ROOT, env, cpu });
    servers.push(real);
    const realClient = new KeepAliveClient(real.port, '/mcp', BODY, headers);
    clients.push(realClient);
    const first = await realClient.call();
    const answer = rpcResult(first.body.toString('utf8'));
    if (first.status !== 200 || !answer.result || answer.result.isError || answer.result.structuredContent?.count !== 50)
      throw new Error(`MCP list_codes answered ${first.status}: ${first.body.toString('utf8').slice(0, 300)}`);
    const resultFile = path.join(runDir, 'list_codes.result.json');
    fs.writeFileSync(resultFile, JSON.stringify(answer.result));

    const floor = await spawnServer([path.join(__dirname, 'mcpFloorServer.mjs'), resultFile], { cwd: ROOT, cpu });
    servers.push(floor);
    const floorClient = new KeepAliveClient(floor.port, '/mcp', BODY, headers);
    clients.push(floorClient);
    const floorFirst = await floorClient.call();
    if (floorFirst.status !== 200 || JSON.stringify(rpcResult(floorFirst.body.toString('utf8')).result) !== JSON.stringify(answer.result))
      throw new Error(`the MCP floor does not answer the same result: ${floorFirst.body.toString('utf8').slice(0, 300)}`);

    const targets = [
      { name: 'floor', client: floorClient, pid: floor.child.pid, bytes: floorFirst.body.length, lat: [] as number[], cpu: 0 as number | undefined },
      { name: 'real', client: realClient, pid: real.child.pid, bytes: first.body.length, lat: [] as number[], cpu: 0 as number | undefined },
    ];
    log(
      `${first.body.length} / ${floorFirst.body.length} response bytes (real / floor); warm-up ${CFG.warm} calls each, then ${CFG.calls} each in rotating blocks of ${CFG.block}`,
    );
    for (const t of targets) await t.client.run(CFG.warm, t.bytes);
    for (let done = 0, b = 0; done < CFG.calls; done += CFG.block, b++) {
      const k = Math.min(CFG.block, CFG.calls - done);
      for (let j = 0; j < targets.length; j++) {
        const t = targets[(b + j) % targets.length] as (typeof targets)[number];
        const c0 = processCpuMs(t.pid);
        t.lat.push(...(await t.client.run(k, t.bytes)));
        const c1 = processCpuMs(t.pid);
        t.cpu = t.cpu === undefined || c0 === undefined || c1 === undefined ? undefined : t.cpu + (c1 - c0);
      }
    }
    const [f, r] = targets.map((t) => stats(t.lat)) as [ReturnType<typeof stats>, ReturnType<typeof stats>];
    const [cf, cr] = targets.map((t) => (t.cpu === undefined ? undefined : t.cpu / t.lat.length));
    const cpuCell = (v: number | undefined) => (v === undefined ? 'n/a' : ms(v));
    const body = [
      machineLine(),
      `CPU pinning: ${PIN_SERVERS ? 'servers CPU0, client CPU1 (as the anchors; BENCH_PIN=0 for none)' : 'none'}`,
      `load average at start ${load0.map((l) => l.toFixed(2)).join(' ')}`,
      '',
      table(
        ['', ...LATENCY_HEADER, 'p50 / floor', 'server CPU ms/call'],
        [
          ['SDK createMcpHandler + 1 trivial tool, same result (FLOOR)', ...latencyCells(f), '1.00x', cpuCell(cf)],
          ['marginalia serve, POST /mcp tools/call list_codes (2025-11-25)', ...latencyCells(r), ratio(r.p50, f.p50), cpuCell(cr)],
        ],
      ),
      '',
      `Ratios vs floor: p50 ${ratio(r.p50, f.p50)}, p90 ${ratio(r.p90, f.p90)}, p99 ${ratio(r.p99, f.p99)}; server CPU per call ${cf !== undefined && cr !== undefined ? ratio(cr, cf) : 'n/a'}. ` +
        `Response ${first.body.length} B (real) / ${floorFirst.body.length} B (floor), SSE-framed as the SDK's stateless legacy transport answers. ${CFG.calls} calls per server after ${CFG.warm} warm-up.`,
    ];
    return {
      title: '8. MCP: tools/call list_codes (50 codes) vs the SDK with a trivial tool',
      body,
      figures: [
        {
          name: `MCP tools/call p50 (p99 ${ms(r.p99)} ms vs floor ${ms(f.p99)} ms)`,
          value: r.p50,
          unit: 'ms',
          goal: GOAL_RATIO * f.p50,
          goalSource: `${GOAL_RATIO}x the floor`,
          floor: { label: 'SDK createMcpHandler, one trivial tool, same transport and result', value: f.p50 },
        },
      ],
    };
  } finally {
    for (const c of clients) c.close();
    for (const s of servers) await s.stop();
    if (PIN_SERVERS) pinSelf(false);
    fs.rmSync(runDir, { recursive: true, force: true });
  }
}

sectionMain(run);
