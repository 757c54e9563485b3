// Entry point of the integration suite: the REAL VS Code extension host require()s the bundle of this
// file (payload `extensionTestsPath`, see test/integration/run.mjs) and awaits `run()`. The workbench
// then reports 0 (resolved) or 1 (rejected) to the driver through window.codeAutomationExit.
//
// Env (inherited from the VS Code server that run.mjs starts):
//   MARGINALIA_TEST_RESULT  if set, a JSON summary of the run is written to this path;
//   MARGINALIA_TEST_GREP    if set, only tests whose full title matches this pattern run.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { format } from 'node:util';

// The workbench sends its own log AND this extension host's console to run.mjs through one channel
// (codeAutomationLog). Tag this host's console output (mocha's reporter, the tests, the extension once
// the suite is loaded) so run.mjs can print it and drop the workbench's noise. The extension host locks
// the methods of `console` (their setters are no-ops), so the global `console` itself is replaced by a
// tagging copy. Done before mocha loads: its reporters capture console.log at load time.
const EXTHOST_MARK = '\u2063'; // INVISIBLE SEPARATOR, stripped by run.mjs
const hostConsole = globalThis.console;
const taggingConsole = Object.create(hostConsole) as Console;
for (const level of ['log', 'info', 'warn', 'error', 'debug', 'trace'] as const) {
  const original = hostConsole[level].bind(hostConsole);
  Object.defineProperty(taggingConsole, level, {
    value: (...args: unknown[]) => original(EXTHOST_MARK + format(...args)),
    writable: true,
    configurable: true,
  });
}
Object.defineProperty(globalThis, 'console', { value: taggingConsole, writable: true, configurable: true });

// mocha 12 is ESM: require() (Node's require(esm)) returns its namespace, not the constructor.
const mochaModule = require('mocha');
const Mocha = mochaModule.default ?? mochaModule.Mocha ?? mochaModule;

interface TestRecord {
  title: string;
  state: 'passed' | 'failed' | 'pending';
  durationMs?: number;
  error?: string;
}

/** Every `*.test.js` bundle under this directory (build.mjs keeps the suite's layout), sorted. */
function testFiles(dir: string): string[] {
  return fs
    .readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.test.js'))
    .sort()
    .map((f) => path.join(dir, f));
}

export function run(): Promise<void> {
  const mocha = new Mocha({
    ui: 'bdd',
    reporter: 'spec',
    color: false,
    timeout: 30_000,
    ...(process.env.MARGINALIA_TEST_GREP ? { grep: process.env.MARGINALIA_TEST_GREP } : {}),
  });
  const files = testFiles(__dirname);
  for (const f of files) mocha.addFile(f);

  const resultFile = process.env.MARGINALIA_TEST_RESULT;
  const tests: TestRecord[] = [];
  const started = Date.now();

  return new Promise<void>((resolve, reject) => {
    let runner: any;
    try {
      runner = mocha.run((failures: number) => {
        const summary = {
          files: files.map((f) => path.relative(__dirname, f)),
          passes: tests.filter((t) => t.state === 'passed').length,
          failures,
          pending: tests.filter((t) => t.state === 'pending').length,
          durationMs: Date.now() - started,
          tests,
        };
        if (resultFile) {
          try {
            fs.writeFileSync(resultFile, JSON.stringify(summary, null, 2));
          } catch (err) {
            console.error(`could not write ${resultFile}: ${String(err)}`);
          }
        }
        if (failures > 0) reject(new Error(`${failures} integration test(s) failed.`));
        else resolve();
      });
    } catch (err) {
      // e.g. a test file that throws while loading
      reject(err instanceof Error ? err : new Error(String(err)));
      return;
    }
    runner.on('pass', (t: any) => tests.push({ title: t.fullTitle(), state: 'passed', durationMs: t.duration }));
    runner.on('fail', (t: any, err: any) => tests.push({ title: t.fullTitle(), state: 'failed', durationMs: t.duration, error: String(err?.stack ?? err) }));
    runner.on('pending', (t: any) => tests.push({ title: t.fullTitle(), state: 'pending' }));
  });
}
