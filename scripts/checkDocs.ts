/**
 * The documentation check of `npm run check`. Exits 1, listing every problem, when:
 * - README.md is longer than {@link README_MAX_LINES} lines (the README is one screen; the rest is in docs/);
 * - a relative link or image in README.md, CONTRIBUTING.md or docs/**\/*.md points at a file that does not
 *   exist, or its `#anchor` names no heading of the target Markdown file (GitHub's slugs: lower case,
 *   punctuation dropped, spaces to hyphens, `-1`, `-2` for repeats);
 * - an error code of `ERROR_CODES` (src/core/errors.ts) is missing from docs/reference/error-codes.md, or is
 *   not listed in the table row of the HTTP status `STATUS_BY_CODE` gives it (400 when absent).
 * Links inside fenced code blocks and inline code are ignored; absolute URLs (`https:`, `mailto:`) are not
 * fetched. Usage: tsx scripts/checkDocs.ts
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { STATUS_BY_CODE } from '../src/adapters/http/httpServer';
import { ERROR_CODES } from '../src/core/errors';

/** The README's line budget (issue 17). */
export const README_MAX_LINES = 150;

const ROOT = path.resolve(__dirname, '..');

/** The Markdown files checked: README.md, CONTRIBUTING.md and every .md under docs/. */
function docFiles(): string[] {
  const out = ['README.md', 'CONTRIBUTING.md'].filter((f) => fs.existsSync(path.join(ROOT, f)));
  const walk = (dir: string): void => {
    for (const e of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
      const rel = path.posix.join(dir, e.name);
      if (e.isDirectory()) walk(rel);
      else if (e.name.endsWith('.md')) out.push(rel);
    }
  };
  if (fs.existsSync(path.join(ROOT, 'docs'))) walk('docs');
  return out;
}

/** The text with fenced code blocks blanked (line numbers kept) and inline code spans removed (kept, as text, with `keepInlineCode`). */
export function proseOf(markdown: string, keepInlineCode = false): string[] {
  let fence: string | null = null;
  return markdown.split('\n').map((line) => {
    const m = /^\s*(`{3,}|~{3,})/.exec(line);
    if (fence !== null) {
      if (m && m[1]!.startsWith(fence)) fence = null;
      return '';
    }
    if (m) {
      fence = m[1]!;
      return '';
    }
    return keepInlineCode ? line : line.replace(/`+[^`]*`+/g, '');
  });
}

/** GitHub's anchor slug of a heading's text: lower case, markup and punctuation dropped, spaces to hyphens. */
export function slugOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[`*~]/g, '')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** Every anchor a Markdown file defines: its headings' slugs (repeats get -1, -2, ...). */
export function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const line of proseOf(markdown, true)) {
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = slugOf(m[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

/** The link targets of a file's prose, with their 1-based line numbers: `[text](target)` and `![alt](target)`. */
export function linksOf(markdown: string): { line: number; target: string }[] {
  const out: { line: number; target: string }[] = [];
  proseOf(markdown).forEach((line, i) => {
    for (const m of line.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) out.push({ line: i + 1, target: m[1]! });
  });
  return out;
}

/** Broken relative links and anchors in one file (paths relative to the repository root). */
function checkLinks(file: string): string[] {
  const problems: string[] = [];
  const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
  for (const { line, target } of linksOf(text)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:, ...
    const [rawPath, anchor] = target.split('#', 2) as [string, string | undefined];
    const resolved = rawPath === '' ? path.join(ROOT, file) : path.resolve(path.dirname(path.join(ROOT, file)), decodeURI(rawPath));
    const where = `${file}:${line}: ${target}`;
    if (!resolved.startsWith(ROOT + path.sep) && resolved !== ROOT) {
      problems.push(`${where}: leaves the repository`);
      continue;
    }
    if (!fs.existsSync(resolved)) {
      problems.push(`${where}: no such file`);
      continue;
    }
    if (anchor !== undefined && anchor !== '' && resolved.endsWith('.md')) {
      if (!anchorsOf(fs.readFileSync(resolved, 'utf8')).has(anchor)) problems.push(`${where}: no heading with anchor #${anchor}`);
    }
  }
  return problems;
}

/** Error codes missing from docs/reference/error-codes.md, or listed only under another status. */
function checkErrorCodes(): string[] {
  const file = 'docs/reference/error-codes.md';
  const p = path.join(ROOT, file);
  if (!fs.existsSync(p)) return [`${file}: missing`];
  const rows = new Map<number, string>();
  for (const line of fs.readFileSync(p, 'utf8').split('\n')) {
    const m = /^\|\s*(\d{3})\s*\|(.*)$/.exec(line);
    if (m) rows.set(Number(m[1]), (rows.get(Number(m[1])) ?? '') + m[2]!);
  }
  const problems: string[] = [];
  for (const code of ERROR_CODES) {
    const status = STATUS_BY_CODE[code] ?? 400;
    const row = rows.get(status);
    if (row === undefined || !row.includes(`\`${code}\``)) {
      const elsewhere = [...rows].filter(([, r]) => r.includes(`\`${code}\``)).map(([s]) => s);
      problems.push(
        `${file}: \`${code}\` must be listed in the ${status} row (STATUS_BY_CODE)${elsewhere.length > 0 ? `; it is under ${elsewhere.join(', ')}` : ''}`,
      );
    }
  }
  return problems;
}

function main(): void {
  const problems: string[] = [];
  const readmeLines = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8').replace(/\n$/, '').split('\n').length;
  if (readmeLines > README_MAX_LINES) problems.push(`README.md: ${readmeLines} lines, at most ${README_MAX_LINES} (move detail into docs/)`);
  const files = docFiles();
  for (const f of files) problems.push(...checkLinks(f));
  problems.push(...checkErrorCodes());
  if (problems.length > 0) {
    console.error(`docs check: ${problems.length} problem(s)\n${problems.map((p) => `  ${p}`).join('\n')}`);
    process.exit(1);
  }
  console.log(
    `docs check: README.md ${readmeLines}/${README_MAX_LINES} lines; links and anchors of ${files.length} files resolve; every error code documented under its status`,
  );
}

if (require.main === module) main();
