// Bundles the integration suite (test/integration/suite/**/*.ts) for the REAL VS Code extension host:
// one CommonJS bundle per file in dist-test/integration/suite/ (same relative layout), so each test file
// can import from ../../../src/... freely. `vscode` is provided by the extension host and `mocha` is
// require()d from the repository's node_modules, so both stay external.
// sql.js's wasm is copied beside the bundles, where src/store/sqljs.ts looks first.
import * as esbuild from 'esbuild';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const srcDir = path.join(root, 'test', 'integration', 'suite');
const outDir = path.join(root, 'dist-test', 'integration', 'suite');

const entryPoints = fs
  .readdirSync(srcDir, { recursive: true, encoding: 'utf8' })
  .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
  .sort()
  .map((f) => path.join(srcDir, f));
if (!entryPoints.some((f) => path.basename(f) === 'index.ts')) {
  console.error(`error: ${path.relative(root, srcDir)}/index.ts is missing`);
  process.exit(1);
}

fs.mkdirSync(outDir, { recursive: true });
// no stale bundles of deleted tests; the others are overwritten in place, so a run started meanwhile (by
// another terminal) never finds the directory empty
const wanted = new Set(entryPoints.map((f) => path.relative(srcDir, f).replace(/\.ts$/, '.js')));
for (const f of fs.readdirSync(outDir, { recursive: true, encoding: 'utf8' })) {
  if (f.endsWith('.js') && !wanted.has(f)) fs.rmSync(path.join(outDir, f), { force: true });
}
fs.copyFileSync(path.join(root, 'node_modules', 'sql.js', 'dist', 'sql-wasm.wasm'), path.join(outDir, 'sql-wasm.wasm'));

await esbuild.build({
  entryPoints,
  outbase: srcDir,
  outdir: outDir,
  bundle: true, // without `splitting`, every entry point is a self-contained bundle
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  sourcemap: 'inline',
  sourcesContent: false,
  logLevel: 'warning',
  external: ['vscode', 'mocha'],
});
console.log(`built ${entryPoints.length} integration bundle(s) into ${path.relative(root, outDir)}/`);
