/**
 * Writes package.json `contributes.languageModelTools` from the tool registry. `--check` exits 1 when
 * package.json differs from what the registry gives (CI drift check).
 * Usage: tsx scripts/genContributes.ts [--check]
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { lmContributions } from '../src/tools/lmContributions';

const file = path.resolve(__dirname, '..', 'package.json');
const pkg = JSON.parse(fs.readFileSync(file, 'utf8')) as { contributes: Record<string, unknown> };
const wanted = lmContributions();
if (process.argv.includes('--check')) {
  if (JSON.stringify(pkg.contributes.languageModelTools) !== JSON.stringify(wanted)) {
    console.error('package.json contributes.languageModelTools differs from the registry: run `npm run gen:contributes`');
    process.exit(1);
  }
  console.log(`package.json contributes ${wanted.length} language-model tools, matching the registry`);
} else {
  pkg.contributes.languageModelTools = wanted;
  fs.writeFileSync(file, `${JSON.stringify(pkg, null, 2)}\n`);
  console.log(`wrote ${wanted.length} language-model tools into package.json`);
}
