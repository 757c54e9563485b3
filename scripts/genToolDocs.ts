/**
 * Writes docs/reference/tools.md from the tool registry (name, group, effect, description, parameters from the
 * JSON Schema). `--check` exits 1 when the file differs from what the registry gives (CI drift check).
 * Usage: tsx scripts/genToolDocs.ts [--check]
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { renderToolDocs } from '../src/tools/docs';

const target = path.resolve(__dirname, '..', 'docs', 'reference', 'tools.md');
const text = renderToolDocs();
if (process.argv.includes('--check')) {
  const current = fs.existsSync(target) ? fs.readFileSync(target, 'utf8') : '';
  if (current !== text) {
    console.error('docs/reference/tools.md is out of date: run `npm run gen:docs`');
    process.exit(1);
  }
  console.log('docs/reference/tools.md matches the registry');
} else {
  fs.writeFileSync(target, text);
  console.log(`wrote ${path.relative(process.cwd(), target)}`);
}
