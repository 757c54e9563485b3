// Builds the workspace the screenshots show: a copy of the sample study with a project seeded by the
// real CLI (`marginalia serve --seed`, stopped with SIGTERM once it serves, which checkpoints).
// Usage: node test/integration/prepareScreenshotWorkspace.mjs OUT_DIR   (run `node esbuild.mjs` first)
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
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
writeFileSync(join(out, '.vscode', 'settings.json'), JSON.stringify({ 'marginalia.server.port': 0, 'marginalia.codebookHealth.usedOnceAfter': 0 }, null, 2));

const child = spawn(process.execPath, [join(root, 'bin', 'marginalia.js'), 'serve', '--project', project, '--seed', out, '--port', '0'], {
  stdio: ['ignore', 'pipe', 'inherit'],
});
let text = '';
const timer = setTimeout(() => {
  child.kill('SIGKILL');
  console.error('the CLI did not start within 30 s');
  process.exit(2);
}, 30_000);
child.stdout.on('data', (d) => {
  text += d;
  if (text.includes('is serving')) child.kill('SIGTERM');
});
child.on('exit', (code) => {
  clearTimeout(timer);
  if (code !== 0 || !existsSync(project)) {
    console.error(`seeding failed (exit ${code})`);
    process.exit(1);
  }
  console.log(`screenshot workspace ready: ${out}`);
});
