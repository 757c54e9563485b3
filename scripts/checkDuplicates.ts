/**
 * Copy-paste check over `src/` (issue 17 item 4: "no pair of identical runs of six or more lines outside
 * generated code and declarative tool or proto boilerplate"), run by `npm run check:duplicates` inside
 * `npm run check`. The detector is jscpd (https://github.com/kucherenko/jscpd, the standard copy-paste detector
 * for JavaScript/TypeScript; a devDependency so CI needs nothing else):
 *
 * - a clone is a run of at least {@link MIN_LINES} lines and {@link MIN_TOKENS} tokens that stands again,
 *   token for token, elsewhere in src/ (jscpd's "mild" mode: white space and blank lines do not count; names,
 *   values and comments must be the same, so this finds identical runs, not merely alike ones). The token floor keeps six
 *   lines of closing brackets or one-word lines from counting;
 * - exempt: generated code (files whose first 10 lines say `@generated` or "do not edit", as in checkSize.ts,
 *   and {@link IGNORED}; none in src/ today) and proto boilerplate (`.proto` files are not scanned: only
 *   TypeScript is). Declarative tool definitions (`defineTool({...})` in src/tools) need no exemption at these
 *   thresholds: their zod schemas differ in names and descriptions, so no identical run reaches the floor.
 *
 *   npx tsx scripts/checkDuplicates.ts     # exit 1 on a clone not in KNOWN
 *
 * {@link KNOWN}: clones already in the tree, each with who removes it (another change of issue 17, or "to merge":
 * still to do), as file pairs. They print as warnings; a new clone fails the check; a KNOWN pair no longer found is warned about
 * so its entry is removed.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { detectClones } from 'jscpd';
import { isGenerated } from './checkSize';

/** Fewest lines of a reported clone. */
export const MIN_LINES = 6;
/** Fewest tokens of a reported clone (jscpd's default). */
export const MIN_TOKENS = 50;
/** Globs (relative to src/) never scanned: generated code. */
export const IGNORED = ['**/generated/**', '**/*.generated.ts', '**/*.d.ts'];

/**
 * Known clones, as `fileA|fileB` (repository-relative, sorted) -> reason. Temporary: each is owned by a change
 * under way; remove an entry when its clone is gone.
 */
export const KNOWN: ReadonlyMap<string, string> = new Map([
  // Still to merge (issue 17 item 4).
]);

/** One clone: two places, 1-based inclusive line ranges, repository-relative paths. */
export interface Clone {
  a: { file: string; start: number; end: number };
  b: { file: string; start: number; end: number };
  lines: number;
}

/** The KNOWN key of a clone: its two files, sorted, joined with `|`. */
export function pairKey(c: Clone): string {
  return [c.a.file, c.b.file].sort().join('|');
}

/** One clone as `a:start-end ~ b:start-end (N lines)`. */
export function formatClone(c: Clone): string {
  return `${c.a.file}:${c.a.start}-${c.a.end} ~ ${c.b.file}:${c.b.start}-${c.b.end} (${c.lines} lines)`;
}

/** The clones jscpd finds in `root`/src, generated files left out. */
export async function findClones(root: string): Promise<Clone[]> {
  const src = path.join(root, 'src');
  const generated = listFiles(src).filter((f) => isGenerated(fs.readFileSync(f, 'utf8').split('\n', 10).join('\n')));
  const clones = await detectClones({
    path: [src],
    format: ['typescript'],
    minLines: MIN_LINES,
    minTokens: MIN_TOKENS,
    mode: 'mild',
    ignore: [...IGNORED.map((g) => path.join(src, g)), ...generated],
    reporters: [],
    silent: true,
    absolute: true,
    gitignore: false,
  });
  const rel = (f: string): string => path.relative(root, path.resolve(root, f)).split(path.sep).join('/');
  return clones.map((c) => ({
    a: { file: rel(c.duplicationA.sourceId), start: c.duplicationA.start.line, end: c.duplicationA.end.line },
    b: { file: rel(c.duplicationB.sourceId), start: c.duplicationB.start.line, end: c.duplicationB.end.line },
    lines: c.duplicationA.end.line - c.duplicationA.start.line + 1,
  }));
}

function listFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...listFiles(full));
    else if (e.name.endsWith('.ts')) out.push(full);
  }
  return out;
}

/** Runs the check; resolves to the exit code (0: no clone outside KNOWN). */
export async function main(root: string): Promise<number> {
  const clones = await findClones(root);
  const seen = new Set<string>();
  const errors: string[] = [];
  for (const c of clones) {
    const key = pairKey(c);
    seen.add(key);
    const reason = KNOWN.get(key);
    if (reason) console.warn(`warning: ${formatClone(c)} [known: ${reason}]`);
    else errors.push(formatClone(c));
  }
  for (const key of KNOWN.keys()) {
    if (!seen.has(key)) console.warn(`warning: ${key}: no clone left; remove it from KNOWN in scripts/checkDuplicates.ts`);
  }
  for (const e of errors) console.error(e);
  if (errors.length > 0) {
    console.error(`checkDuplicates: ${errors.length} copied run(s) of ${MIN_LINES}+ lines; make one piece of code serve both places`);
    return 1;
  }
  console.log(`checkDuplicates: ok (${clones.length - errors.length} known clone(s))`);
  return 0;
}

if (require.main === module) {
  void main(path.resolve(__dirname, '..')).then((code) => {
    process.exitCode = code;
  });
}
