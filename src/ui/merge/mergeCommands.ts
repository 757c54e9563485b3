import * as vscode from 'vscode';
import { choicesFor, type MergeConflictChoice } from '../../domain/mergeConflicts';
import { resolveMergeConflictTool } from '../../tools/mergeConflictTools';
import type { Workbench } from '../workbench';
import { choiceTitle, type ConflictItem, type MergeConflictsView } from './mergeConflictsView';

/**
 * The Merge Conflicts view's actions (issue 16 item 4): Keep Mine, Keep Theirs, Keep Both, Edit… (an input box
 * prefilled with yours: a name, a memo, a passage; a category or folder id for moves, empty for none) and Compare
 * (text conflicts). Each takes the view's row or a conflict id (tests, keybindings) and resolves through
 * `resolve_merge_conflict` as the researcher (errors shown by the workbench); the view is read again afterwards.
 * Each returns the tool's result ({conflict, applied}), or undefined when cancelled or refused.
 */
export function mergeCommands(deps: { wb: Workbench; view: MergeConflictsView }): Record<string, (...args: unknown[]) => Promise<unknown>> {
  const { wb, view } = deps;
  const pick = async (arg: unknown): Promise<ConflictItem | undefined> => {
    if (arg && typeof arg === 'object' && 'conflict_id' in arg) return arg as ConflictItem;
    if (view.all().length === 0) await view.refresh();
    if (typeof arg === 'string') return view.all().find((c) => c.conflict_id === arg);
    const open = view.all();
    if (open.length === 0) return void vscode.window.showInformationMessage('No merge conflicts to resolve.');
    const chosen = await vscode.window.showQuickPick(
      open.map((c) => ({ label: view.label(c), c })),
      { title: 'Resolve Merge Conflict', placeHolder: 'Which conflict?' },
    );
    return chosen?.c;
  };
  const resolve = async (c: ConflictItem, choice: MergeConflictChoice, value?: string | number | null): Promise<unknown> => {
    if (!(c.choices ?? choicesFor(c.kind)).includes(choice)) {
      return void vscode.window.showInformationMessage(`${choiceTitle(choice)} is not a choice for this conflict (${c.kind.replace(/_/g, ' ')}).`);
    }
    const r = await wb.call(resolveMergeConflictTool, { conflict_id: c.conflict_id, choice, ...(value === undefined ? {} : { value }) });
    if (r) vscode.window.setStatusBarMessage(`Merge conflict resolved: ${r.applied}`, 4000);
    await view.refresh();
    return r;
  };
  const keep = (choice: MergeConflictChoice) => async (arg?: unknown) => {
    const c = await pick(arg);
    return c ? resolve(c, choice) : undefined;
  };
  return {
    'marginalia.merge.keepMine': keep('ours'),
    'marginalia.merge.keepTheirs': keep('theirs'),
    'marginalia.merge.keepBoth': keep('both'),
    'marginalia.merge.edit': async (arg?: unknown, given?: unknown) => {
      const c = await pick(arg);
      if (!c) return undefined;
      const value = given !== undefined ? (given as string | number | null) : await askValue(c, wb);
      return value === undefined ? undefined : resolve(c, 'edit', value);
    },
    'marginalia.merge.compare': async (arg?: unknown) => {
      const c = await pick(arg);
      if (!c) return undefined;
      if (c.kind !== 'source_text_overlap') return void vscode.window.showInformationMessage('Compare shows transcript passages edited on both sides.');
      return view.compare(c);
    },
    'marginalia.merge.refresh': () => view.refresh(),
  };
}

/** Asks for an Edit… value, prefilled with yours (a move: a pick of the categories or folders); undefined when cancelled. */
async function askValue(c: ConflictItem, wb: Workbench): Promise<string | number | null | undefined> {
  const moved = c.kind === 'code_moved_both' || c.kind === 'source_moved_both';
  const repo = wb.repo();
  if (moved && repo) {
    const places =
      c.kind === 'code_moved_both'
        ? repo.listCategories().map((x) => ({ id: x.category_id, name: x.name }))
        : repo.listFolders().map((x) => ({ id: x.folder_id, name: x.name }));
    const picked = await vscode.window.showQuickPick(
      [
        { label: '(top level)', id: null as number | null },
        ...places.map((p) => ({ label: p.name, description: p.id === c.ours ? 'yours' : p.id === c.theirs ? 'theirs' : undefined, id: p.id as number | null })),
      ],
      { title: `Resolve: move ${c.entity.name} to…` },
    );
    return picked === undefined ? undefined : picked.id;
  }
  const ours = c.kind === 'source_text_overlap' ? (c.ours as { text: string }).text : c.ours;
  const answer = await vscode.window.showInputBox({
    title: `Resolve: ${c.entity.name}`,
    prompt: moved
      ? `The ${c.kind === 'code_moved_both' ? 'category' : 'folder'} id to move it to (empty: the top level)`
      : c.kind === 'memo_edited_both'
        ? 'The memo to keep (yours, prefilled; edit it into one)'
        : c.kind === 'source_text_overlap'
          ? 'The passage as it should read (yours, prefilled)'
          : 'The value to keep (yours, prefilled)',
    value: ours === null || ours === undefined ? '' : String(ours),
    validateInput: (v) => (moved && v.trim() !== '' && !/^\d+$/.test(v.trim()) ? 'A number, or empty for the top level' : undefined),
  });
  if (answer === undefined) return undefined;
  if (moved) return answer.trim() === '' ? null : Number(answer.trim());
  return answer;
}
