import * as fs from 'node:fs';
import { ToolError } from '../../core/errors';
import { MAX_CODE_NAME } from '../../domain/rules';
import { checkImportFile, emptyPlan, fitName, skip, type Importer, type ImportPlan } from './plan';

/**
 * Code list import: an indented plain-text codebook, one name per line (UTF-8, a byte-order mark ignored).
 *
 * ```
 * # a comment
 * Relationships
 *     - Trust
 *     - Conflict
 *         Open conflict
 * Place
 * ```
 * - Indentation by tabs or spaces (2, 4 or any consistent width; a tab counts as 4 columns). A line indented
 *   deeper than the line before is its child; a line at the indentation of an earlier line is that line's
 *   sibling (a line between two known depths goes under the shallower one).
 * - A leading `- `, `* ` or `+ ` bullet is removed. Blank lines and lines starting with `#` are ignored.
 * - Every line with children becomes a category (nesting kept); every line without children a code, in the
 *   category of its parent line (a top-level leaf is an uncategorised code). So "Conflict" above is a
 *   category inside "Relationships", holding the code "Open conflict".
 * - Merging: existing categories and codes of the same name (case-insensitive) are used (see applyPlan.ts).
 *
 * Errors: IMPORT_FAILED (no file, not UTF-8 text, no names in it).
 */
export const codeListImporter: Importer = {
  format: 'code_list',
  extensions: ['.txt', '.md'],
  description: 'indented text file of code names (tabs or spaces, "- " bullets allowed): lines with children become categories, leaves become codes',
  plan: async (filePath) => {
    const size = checkImportFile(filePath);
    if (size > 20 * 1024 * 1024) throw new ToolError('IMPORT_FAILED', `${filePath} is ${Math.round(size / 1048576)} MB; a code list is at most 20 MB`);
    const bytes = fs.readFileSync(filePath);
    let text: string;
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      throw new ToolError('IMPORT_FAILED', `${filePath} is not UTF-8 text`);
    }
    if (text.includes('\u0000')) throw new ToolError('IMPORT_FAILED', `${filePath} is not a text file (it holds NUL characters)`);
    return planCodeList(text, filePath);
  },
};

/** One named line of the list. */
interface Entry {
  line: number;
  depth: number;
  name: string;
  parent: Entry | null;
  children: Entry[];
}

/** The plan of a code list `text` (see {@link codeListImporter}); exported for tests. Errors: IMPORT_FAILED (no names). */
export function planCodeList(text: string, filePath: string): ImportPlan {
  const plan = emptyPlan('code_list', filePath);
  const entries: Entry[] = [];
  const stack: { width: number; entry: Entry }[] = [];
  const lines = text.replace(/^\uFEFF/, '').split(/\r\n|\r|\n/);
  lines.forEach((raw, i) => {
    if (raw.trim() === '' || raw.trim().startsWith('#')) return;
    const indent = /^[ \t]*/.exec(raw)?.[0] ?? '';
    let width = 0;
    for (const ch of indent) width = ch === '\t' ? width + 4 - (width % 4) : width + 1;
    const name = fitName(raw.trim().replace(/^[-*+]\s+/, ''), MAX_CODE_NAME, '');
    if (name === '') {
      skip(plan, 'empty_lines');
      return;
    }
    while (stack.length > 0 && (stack[stack.length - 1] as { width: number }).width >= width) stack.pop();
    const parent = stack.length > 0 ? (stack[stack.length - 1] as { entry: Entry }).entry : null;
    const entry: Entry = { line: i + 1, depth: parent ? parent.depth + 1 : 0, name, parent, children: [] };
    parent?.children.push(entry);
    entries.push(entry);
    stack.push({ width, entry });
  });
  if (entries.length === 0) throw new ToolError('IMPORT_FAILED', `${filePath} holds no code names (empty, or only comments)`);
  const refOf = (e: Entry) => `line:${e.line}`;
  for (const e of entries) {
    const parent = e.parent ? refOf(e.parent) : null;
    if (e.children.length > 0) plan.categories.push({ ref: refOf(e), name: e.name, parent, memo: null });
    else plan.codes.push({ ref: refOf(e), name: e.name, color: null, memo: null, category: parent });
  }
  return plan;
}
