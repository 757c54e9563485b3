/**
 * Size check over `src/**\/*.ts` (issue 17 item 3: files that hold one idea):
 *
 * - no source file over {@link MAX_FILE_LINES} lines (physical lines, the count `wc -l` gives for a file that
 *   ends in a newline);
 * - no function body over {@link MAX_FUNCTION_LINES} lines: every function-like node the TypeScript compiler API
 *   finds (function declarations and expressions, arrow functions, methods, constructors, get/set accessors), its
 *   span counted from the line of its first token to the line of its last, both included.
 *
 *   npx tsx scripts/checkSize.ts        # part of `npm run check`; exit 1 on any offender outside the allowlist
 *
 * Offenders print as `path:line: ...` (1-based line of the file or function start) with the size and the limit.
 *
 * Generated code is exempt, recognised by a marker comment in the file's first 10 lines: `@generated` or
 * "do not edit" (the conventions protoc, the MCP SDK and our own generators write); no such file is under src/
 * today. Nested functions are measured on their own; an outer function's span includes its nested ones.
 *
 * {@link ALLOWLIST}: files still over a limit while another change splits them. Their offences print as warnings
 * and do not fail the check; an allowlisted file that is no longer over any limit is warned about too (remove its
 * entry), so the list only shrinks.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import ts from 'typescript';

/** Most lines a source file under src/ may have. */
export const MAX_FILE_LINES = 600;
/** Most lines a single function-like node may span. */
export const MAX_FUNCTION_LINES = 120;

/**
 * Files (paths relative to the repository root, `/`-separated) still over a limit, with the reason. Every entry
 * is temporary: remove it when the file is split (the check warns about an entry that is no longer needed).
 */
export const ALLOWLIST: ReadonlyMap<string, string> = new Map([]);

/** One place over a limit. */
export interface SizeOffence {
  /** Repository-relative path, `/`-separated. */
  file: string;
  /** 1-based line where the file (1) or the function starts. */
  line: number;
  /** 'file' for a file over {@link MAX_FILE_LINES}, 'function' for a function over {@link MAX_FUNCTION_LINES}. */
  kind: 'file' | 'function';
  /** The function's name as written (`Class.method`, `<arrow>` for anonymous), or the file name. */
  name: string;
  /** Size in lines. */
  lines: number;
  /** The limit it is over. */
  limit: number;
}

/** Whether `text` is generated code: `@generated` or "do not edit" in its first 10 lines (case-insensitive). */
export function isGenerated(text: string): boolean {
  const head = text.split('\n', 10).join('\n');
  return /@generated\b|do not edit/i.test(head);
}

/** Physical line count: `wc -l` for text that ends in a newline, one more for text that does not. */
export function lineCount(text: string): number {
  if (text.length === 0) return 0;
  const newlines = text.split('\n').length - 1;
  return text.endsWith('\n') ? newlines : newlines + 1;
}

function nameOf(node: ts.SignatureDeclaration, sf: ts.SourceFile): string {
  const own = node.name && !ts.isComputedPropertyName(node.name) ? node.name.getText(sf) : undefined;
  let label = own;
  if (!label && ts.isConstructorDeclaration(node)) label = 'constructor';
  if (!label) {
    const parent = node.parent;
    if (parent && (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent))) {
      label = parent.name.getText(sf);
    }
  }
  label ??= ts.isArrowFunction(node) ? '<arrow>' : '<function>';
  const owner = node.parent && (ts.isClassLike(node.parent) ? node.parent.name?.getText(sf) : undefined);
  return owner ? `${owner}.${label}` : label;
}

/**
 * Function-like nodes of `text` spanning more than `limit` lines, in source order. `file` is only used to name
 * offences and to choose TypeScript's parsing (`.tsx` parses JSX).
 */
export function longFunctions(file: string, text: string, limit = MAX_FUNCTION_LINES): SizeOffence[] {
  const kind = file.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS;
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, kind);
  const out: SizeOffence[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const start = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line;
      const end = sf.getLineAndCharacterOfPosition(node.getEnd()).line;
      const lines = end - start + 1;
      if (lines > limit) {
        out.push({ file, line: start + 1, kind: 'function', name: nameOf(node, sf), lines, limit });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

/** Every offence of one file's text: the file's length, then its long functions. Generated text has none. */
export function offencesOf(file: string, text: string): SizeOffence[] {
  if (isGenerated(text)) return [];
  const out: SizeOffence[] = [];
  const lines = lineCount(text);
  if (lines > MAX_FILE_LINES) {
    out.push({ file, line: 1, kind: 'file', name: path.posix.basename(file), lines, limit: MAX_FILE_LINES });
  }
  out.push(...longFunctions(file, text));
  return out;
}

/** One offence as `path:line: ...` text. */
export function formatOffence(o: SizeOffence): string {
  return o.kind === 'file'
    ? `${o.file}:${o.line}: file has ${o.lines} lines (limit ${o.limit})`
    : `${o.file}:${o.line}: function ${o.name} spans ${o.lines} lines (limit ${o.limit})`;
}

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sourceFiles(full));
    else if (/\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts')) out.push(full);
  }
  return out.sort();
}

/** Runs the check over `root`/src; returns the exit code (0 clean or only allowlisted offences, 1 otherwise). */
export function main(root: string): number {
  const errors: string[] = [];
  const warnings: string[] = [];
  const offending = new Set<string>();
  for (const full of sourceFiles(path.join(root, 'src'))) {
    const rel = path.relative(root, full).split(path.sep).join('/');
    for (const o of offencesOf(rel, fs.readFileSync(full, 'utf8'))) {
      offending.add(rel);
      const reason = ALLOWLIST.get(rel);
      if (reason) warnings.push(`warning: ${formatOffence(o)} [allowlisted: ${reason}]`);
      else errors.push(formatOffence(o));
    }
  }
  for (const file of ALLOWLIST.keys()) {
    if (!offending.has(file)) warnings.push(`warning: ${file}: no longer over any size limit; remove it from ALLOWLIST in scripts/checkSize.ts`);
  }
  for (const w of warnings) console.warn(w);
  for (const e of errors) console.error(e);
  if (errors.length > 0) {
    console.error(`checkSize: ${errors.length} problem(s); split the file or function (see CONTRIBUTING.md)`);
    return 1;
  }
  console.log(`checkSize: ok (${warnings.length} allowlisted warning(s))`);
  return 0;
}

if (require.main === module) {
  process.exitCode = main(path.resolve(__dirname, '..'));
}
