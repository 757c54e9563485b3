// Bundles the CLI (dist/cli.js) and, once it exists, the VS Code extension host (dist/extension.js).
// sql.js's wasm is copied beside the bundles; src/store/sqljs.ts finds it there.
import * as esbuild from 'esbuild';
import * as fs from 'node:fs';

const production = process.argv.includes('--production');
fs.mkdirSync('dist', { recursive: true });
// a production build (the .vsix) ships no source maps: drop those an earlier development build left in dist/
if (production) {
  for (const dir of ['dist', 'dist/webview']) {
    if (fs.existsSync(dir)) for (const f of fs.readdirSync(dir)) if (f.endsWith('.map')) fs.rmSync(`${dir}/${f}`);
  }
}
fs.copyFileSync('node_modules/sql.js/dist/sql-wasm.wasm', 'dist/sql-wasm.wasm');

const common = {
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  sourcemap: !production,
  minify: production,
  logLevel: 'warning',
  external: ['vscode'],
};

const entries = [{ in: 'src/cli/index.ts', out: 'cli' }];
if (fs.existsSync('src/extension.ts')) entries.push({ in: 'src/extension.ts', out: 'extension' });

// webviews: every webview-ui/<name>.ts is a browser bundle dist/webview/<name>.js (iife)
const webviews = fs.existsSync('webview-ui')
  ? fs
      .readdirSync('webview-ui')
      .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
      .map((f) => ({ in: `webview-ui/${f}`, out: f.replace(/\.ts$/, '') }))
  : [];

await Promise.all([
  esbuild.build({ ...common, entryPoints: entries, outdir: 'dist' }),
  webviews.length > 0
    ? esbuild.build({
        bundle: true,
        platform: 'browser',
        format: 'iife',
        target: 'es2022',
        sourcemap: !production,
        minify: production,
        logLevel: 'warning',
        entryPoints: webviews,
        outdir: 'dist/webview',
      })
    : Promise.resolve(),
]);
console.log(`built ${[...entries.map((e) => `dist/${e.out}.js`), ...webviews.map((w) => `dist/webview/${w.out}.js`)].join(', ')}`);
