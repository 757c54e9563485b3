// Bundles the CLI (dist/cli.js) and, once it exists, the VS Code extension host (dist/extension.js).
// sql.js's wasm is copied beside the bundles; src/store/sqljs.ts finds it there.
import * as esbuild from 'esbuild';
import * as fs from 'node:fs';

const production = process.argv.includes('--production');
fs.mkdirSync('dist', { recursive: true });
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

await esbuild.build({ ...common, entryPoints: entries, outdir: 'dist' });
console.log(`built ${entries.map((e) => `dist/${e.out}.js`).join(', ')}`);
