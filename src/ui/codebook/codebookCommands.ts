/**
 * Commands that manage the codebook from the Codes view (issue 13, item 4): categories renamed, deleted
 * (an empty one after a confirmation; a non-empty one after choosing where its codes go), given a memo,
 * a sub-category or a code; "New Code" from the title bar asking where the code goes; "Go to Code..."; a
 * filter over the tree; and revealing a code (codebook health uses it).
 *
 * Every command takes optional arguments that answer its prompts, so a test, a keybinding or another
 * extension can run it without any: the first argument names the object (a tree node or an id), the
 * next ones the answers (see each entry). Writes go through the pipeline as the researcher
 * (Workbench.call), never to the repository.
 */
import * as vscode from 'vscode';
import { countOf } from '../../core/plural';
import type { CategoryWithCount, CodeWithCounts } from '../../domain/ports';
import { deleteCategoryTool, renameCategoryTool, updateCategoryMemoTool } from '../../tools/categoryTools';
import { createCategoryTool, renameCodeTool } from '../../tools/codeTools';
import { createCodeTool } from '../../tools/coreTools';
import { foldForMatch, type CodesNode, type CodesTreeProvider } from '../trees/codesTreeProvider';
import type { Workbench } from '../workbench';

/** What the codebook commands use. */
export interface CodebookCommandDeps {
  wb: Workbench;
  codesTree: CodesTreeProvider;
}

/** A category named by a tree node or by its id. */
export type CategoryArg = CodesNode | number | undefined;
/** Where a new code or the codes of a deleted category go: a category id, or null for the top level. */
export type Location = number | null;

const TOP_LEVEL_LABEL = '$(root-folder) Top level';
const nonEmpty = (v: string) => (v.trim() ? undefined : 'Enter a name');

/** The category an argument names (a category node or a category id), as last loaded. */
function categoryOf(tree: CodesTreeProvider, arg: unknown): CategoryWithCount | undefined {
  if (typeof arg === 'number') return tree.categoryNode(arg)?.category;
  if (isNode(arg) && arg.kind === 'category') return tree.categoryNode(arg.category.category_id)?.category ?? arg.category;
  return undefined;
}

/** The code an argument names (a code node, a code id, or `{codeId}`), as last loaded. */
function codeOf(tree: CodesTreeProvider, arg: unknown): CodeWithCounts | undefined {
  if (typeof arg === 'number') return tree.codeNode(arg)?.code;
  if (isNode(arg) && arg.kind === 'code') return tree.codeNode(arg.code.code_id)?.code ?? arg.code;
  if (arg && typeof arg === 'object' && typeof (arg as { codeId?: unknown }).codeId === 'number')
    return tree.codeNode((arg as { codeId: number }).codeId)?.code;
  return undefined;
}

function isNode(arg: unknown): arg is CodesNode {
  return !!arg && typeof arg === 'object' && ((arg as CodesNode).kind === 'category' || (arg as CodesNode).kind === 'code');
}

/** A location answer given as an argument: a category id or null; anything else (a node VS Code passed, an array) is no answer. */
function givenLocation(arg: unknown): Location | undefined {
  return arg === null || typeof arg === 'number' ? arg : undefined;
}

/**
 * Asks where something goes: "Top level" first, then every category by its path ("Outer / Inner"),
 * without the ids in `exclude`. Resolves to a category id, null for the top level, or undefined when
 * the researcher cancelled. With no category to offer, resolves to null without asking.
 */
export async function pickLocation(tree: CodesTreeProvider, title: string, exclude: ReadonlySet<number> = new Set()): Promise<Location | undefined> {
  const categories = tree.allCategories.filter((c) => !exclude.has(c.category_id));
  if (categories.length === 0) return null;
  type Item = vscode.QuickPickItem & { id: Location };
  const items: Item[] = [
    { label: TOP_LEVEL_LABEL, description: 'in no category', id: null },
    ...categories
      .map((c) => ({ label: `$(folder) ${tree.categoryPath(c.category_id) ?? c.name}`, description: countOf(c.code_count, 'code'), id: c.category_id }))
      .sort((a, b) => a.label.localeCompare(b.label)),
  ];
  const pick = await vscode.window.showQuickPick(items, { title, placeHolder: 'Type to filter categories', matchOnDescription: false });
  return pick?.id;
}

/** Creates a code named `name` (asked for when undefined) in `where`; resolves to its id, or undefined. */
async function createCode(deps: CodebookCommandDeps, where: Location, name?: string): Promise<number | undefined> {
  const inName = where === null ? undefined : deps.codesTree.categoryPath(where);
  const chosen =
    name ??
    (await vscode.window.showInputBox({
      title: inName ? `New code in "${inName}"` : 'New code',
      prompt: 'Name of the code (unique, 1-100 characters)',
      validateInput: nonEmpty,
    }));
  if (!chosen?.trim()) return undefined;
  // no colour: create_code gives a palette colour no other code uses (domain/codeColours)
  const created = await deps.wb.call(createCodeTool, { name: chosen, category_id: where });
  return created?.code_id;
}

/** Picks a code by a query given as an argument: an exact name (any case), else a name or path containing it, else a fuzzy match. */
export function findCodeByQuery(tree: CodesTreeProvider, query: string): CodeWithCounts | undefined {
  const q = foldForMatch(query.trim());
  const codes = tree.allCodes;
  const label = (c: CodeWithCounts) => foldForMatch(c.category_id === null ? c.name : `${tree.categoryPath(c.category_id) ?? ''} / ${c.name}`);
  return (
    codes.find((c) => foldForMatch(c.name) === q) ??
    codes.find((c) => foldForMatch(c.name).includes(q)) ??
    codes.find((c) => label(c).includes(q)) ??
    codes.find((c) => isSubsequence(q, foldForMatch(c.name))) ??
    codes.find((c) => isSubsequence(q, label(c)))
  );
}

/** True when the characters of `needle` appear in `hay` in order (a fuzzy match). */
function isSubsequence(needle: string, hay: string): boolean {
  let i = 0;
  for (const ch of hay) if (ch === needle[i]) i++;
  return i === needle.length;
}

/**
 * The codebook commands, id to handler (joined into the one command table by commandTable in src/ui/commands/index.ts). Arguments:
 * - `marginalia.codes.create(name?, where?)`: title-bar New Code; `where` a category id or null (top level), asked for when absent.
 * - `marginalia.codes.createCategory(name?, where?)`: title-bar New Category; `where` a category id or null (top level);
 *   asked for when the name was asked for, else the top level.
 * - `marginalia.codes.rename(code, newName?)`: a code (a category node is passed on to the category rename).
 * - `marginalia.categories.rename(category, newName?)`, `.editMemo(category, memo?)` (empty or null clears),
 *   `.newSubcategory(category, name?)`, `.newCode(category, name?)`,
 *   `.delete(category, moveCodesTo?)`: `moveCodesTo` a category id or null (top level) answers the question
 *   (for an empty category, any of them confirms).
 * - `marginalia.codes.goto(query?)`: a code id or a name to find; reveals and selects the code.
 * - `marginalia.codes.filter(text?)`, `marginalia.codes.clearFilter()`, `marginalia.codes.reveal(codeId | {codeId, focus?})`
 *   (focus false: the keyboard focus stays where it is).
 * Each resolves to what it made or changed (the tool's result, an id), or undefined when cancelled.
 */
export function codebookCommands(deps: CodebookCommandDeps): Record<string, (...args: any[]) => unknown> {
  const { wb, codesTree: tree } = deps;

  const renameCategory = async (arg?: CategoryArg, newName?: string) => {
    const k = categoryOf(tree, arg);
    if (!k) return undefined;
    const name = newName ?? (await vscode.window.showInputBox({ title: `Rename category "${k.name}"`, value: k.name, validateInput: nonEmpty }));
    if (!name || name === k.name) return undefined;
    return wb.call(renameCategoryTool, { category_id: k.category_id, new_name: name });
  };

  return {
    'marginalia.codes.create': async (name?: unknown, where?: unknown) => {
      const chosen =
        typeof name === 'string'
          ? name
          : await vscode.window.showInputBox({ title: 'New code', prompt: 'Name of the code (unique, 1-100 characters)', validateInput: nonEmpty });
      if (!chosen?.trim()) return undefined;
      const given = givenLocation(where);
      const location = given !== undefined ? given : await pickLocation(tree, `Where does "${chosen}" go?`);
      if (location === undefined) return undefined;
      return createCode(deps, location, chosen);
    },
    'marginalia.codes.createCategory': async (name?: unknown, where?: unknown) => {
      const asked = typeof name !== 'string';
      const chosen = !asked ? name : await vscode.window.showInputBox({ title: 'New category', prompt: 'Name of the category', validateInput: nonEmpty });
      if (!chosen?.trim()) return undefined;
      // asked for where it goes when the researcher typed the name; a name given as an argument means the top level
      const given = givenLocation(where);
      const location = given !== undefined ? given : asked ? await pickLocation(tree, `Where does the category "${chosen}" go?`) : null;
      if (location === undefined) return undefined;
      return wb.call(createCategoryTool, location === null ? { name: chosen } : { name: chosen, parent_id: location });
    },
    'marginalia.codes.rename': async (arg?: CodesNode | number, newName?: string) => {
      if (isNode(arg) && arg.kind === 'category') return renameCategory(arg, newName);
      const c = codeOf(tree, arg);
      if (!c) return undefined;
      const name = newName ?? (await vscode.window.showInputBox({ title: `Rename "${c.name}"`, value: c.name, validateInput: nonEmpty }));
      if (!name || name === c.name) return undefined;
      return wb.call(renameCodeTool, { code_id: c.code_id, new_name: name });
    },
    'marginalia.categories.rename': renameCategory,
    'marginalia.categories.editMemo': async (arg?: CategoryArg, memo?: string | null) => {
      const k = categoryOf(tree, arg);
      if (!k) return undefined;
      const text =
        memo !== undefined
          ? memo
          : await vscode.window.showInputBox({
              title: `Memo of category "${k.name}"`,
              value: k.memo ?? '',
              prompt: 'What this category groups. Empty clears the memo.',
            });
      if (text === undefined) return undefined;
      return wb.call(updateCategoryMemoTool, { category_id: k.category_id, memo: text ? text : null });
    },
    'marginalia.categories.newSubcategory': async (arg?: CategoryArg, name?: string) => {
      const k = categoryOf(tree, arg);
      if (!k) return undefined;
      const chosen = name ?? (await vscode.window.showInputBox({ title: `New sub-category in "${k.name}"`, validateInput: nonEmpty }));
      if (!chosen?.trim()) return undefined;
      return wb.call(createCategoryTool, { name: chosen, parent_id: k.category_id });
    },
    'marginalia.categories.newCode': async (arg?: CategoryArg, name?: string) => {
      const k = categoryOf(tree, arg);
      if (!k) return undefined;
      return createCode(deps, k.category_id, name);
    },
    'marginalia.categories.delete': (arg?: CategoryArg, moveCodesTo?: Location) => deleteCategory(deps, arg, moveCodesTo),
    'marginalia.codes.goto': (query?: string | number) => gotoCode(tree, query),
    'marginalia.codes.filter': async (text?: string) => {
      const chosen =
        typeof text === 'string'
          ? text
          : await vscode.window.showInputBox({
              title: 'Filter Codes',
              value: tree.filter ?? '',
              prompt: 'Show the codes whose name or category contains this text. Empty shows every code.',
            });
      if (chosen === undefined) return tree.filter;
      await tree.setFilter(chosen);
      return tree.filter;
    },
    'marginalia.codes.clearFilter': async () => {
      await tree.setFilter(undefined);
      return undefined;
    },
    'marginalia.codes.reveal': async (arg?: number | { codeId: number; focus?: boolean }) => {
      const code = codeOf(tree, arg);
      if (!code) {
        void vscode.window.showWarningMessage('That code no longer exists.');
        return false;
      }
      const focus = typeof arg === 'object' && arg !== null && typeof arg.focus === 'boolean' ? arg.focus : true;
      return tree.reveal(code.code_id, { focus });
    },
  };
}

/** Deletes a category: an empty one after a confirmation, else after choosing where its codes and sub-categories go. */
async function deleteCategory(deps: CodebookCommandDeps, arg?: CategoryArg, moveCodesTo?: Location) {
  const { wb, codesTree: tree } = deps;
  const k = categoryOf(tree, arg);
  if (!k) return undefined;
  const inside = tree.categoryAndDescendants(k.category_id);
  const subs = tree.allCategories.filter((c) => c.parent_id === k.category_id).length;
  const codes = tree.allCodes.filter((c) => c.category_id === k.category_id).length;
  const answer = givenLocation(moveCodesTo);
  if (codes === 0 && subs === 0) {
    if (answer === undefined) {
      const ok = await vscode.window.showWarningMessage(`Delete the empty category "${k.name}"?`, { modal: true }, 'Delete');
      if (ok !== 'Delete') return undefined;
    }
    return wb.call(deleteCategoryTool, { category_id: k.category_id });
  }
  const what = [countOf(codes, 'code'), countOf(subs, 'sub-category', 'sub-categories')].filter((p) => !p.startsWith('0 ')).join(' and ');
  const to = answer !== undefined ? answer : await pickLocation(tree, `Delete "${k.name}": move its ${what} to…`, inside);
  if (to === undefined) return undefined;
  const done = await wb.call(deleteCategoryTool, { category_id: k.category_id, move_codes_to: to });
  if (done) {
    const where = to === null ? 'the top level' : `"${tree.categoryPath(to) ?? to}"`;
    void vscode.window.showInformationMessage(`Deleted the category "${k.name}"; its ${what} moved to ${where}. No code was deleted.`);
  }
  return done;
}

/** Reveals and selects a code given by id or name, or picked from every code; its id, or undefined. */
async function gotoCode(tree: CodebookCommandDeps['codesTree'], query?: string | number) {
  let code: CodeWithCounts | undefined;
  if (typeof query === 'number') code = codeOf(tree, query);
  else if (typeof query === 'string') code = findCodeByQuery(tree, query);
  else {
    type Item = vscode.QuickPickItem & { codeId: number };
    const items: Item[] = tree.allCodes.map((c) => ({
      label: c.name,
      description: c.category_id === null ? '' : tree.categoryPath(c.category_id),
      detail: c.memo ? c.memo.replace(/\s+/g, ' ').slice(0, 120) : undefined,
      codeId: c.code_id,
    }));
    const pick = await vscode.window.showQuickPick(items, {
      title: 'Go to Code',
      placeHolder: 'Code name or category',
      matchOnDescription: true,
      matchOnDetail: false,
    });
    code = pick ? codeOf(tree, pick.codeId) : undefined;
  }
  if (!code) {
    if (query !== undefined) void vscode.window.showInformationMessage(`No code matches "${String(query)}".`);
    return undefined;
  }
  return (await tree.reveal(code.code_id)) ? code.code_id : undefined;
}
