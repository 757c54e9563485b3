/**
 * Choosing a code in the Command Palette: a quick pick over the codes, last used first, with "New code..." inline.
 * Shared by Code Selection and Merge Code.
 */
import * as vscode from 'vscode';
import { createCodeTool } from '../../tools/coreTools';
import type { CommandDeps } from './deps';

/** The workspace-state key of the last code applied (a code id). */
export const LAST_CODE = 'marginalia.lastCodeId';

/** Asks for a new code's name (unless given) and creates it with a palette colour; resolves to its id, undefined when cancelled. */
export async function createCodeInteractively(d: CommandDeps, name?: string, categoryId?: number): Promise<number | undefined> {
  const chosen =
    name ??
    (await vscode.window.showInputBox({
      title: 'New code',
      prompt: 'Name of the code (unique, 1-100 characters)',
      validateInput: (v) => (v.trim() ? undefined : 'Enter a name'),
    }));
  if (!chosen) return undefined;
  // no colour: create_code gives a palette colour no other code uses (domain/codeColours)
  const created = await d.wb.call(createCodeTool, { name: chosen, category_id: categoryId });
  return created?.code_id;
}

/**
 * Quick pick over codes, last used first (without `exclude`), with "New code..." inline when `exclude` is not
 * given (typed text becomes its name). Resolves to the chosen or created code's id, undefined when cancelled.
 */
export async function pickCode(d: CommandDeps, title: string, exclude?: number): Promise<number | undefined> {
  const last = d.state.get<number>(LAST_CODE);
  const codes = [...d.codesTree.allCodes].filter((c) => c.code_id !== exclude).sort((a, b) => (a.code_id === last ? -1 : b.code_id === last ? 1 : 0));
  type Item = vscode.QuickPickItem & { codeId?: number; create?: boolean };
  const qp = vscode.window.createQuickPick<Item>();
  qp.title = title;
  qp.placeholder = 'Type to filter, or type a new name and choose "New code"';
  const base: Item[] = codes.map((c) => ({ label: c.name, description: `${c.segment_count}`, detail: c.memo ?? undefined, codeId: c.code_id }));
  const refreshItems = () => {
    const typed = qp.value.trim();
    const exact = codes.some((c) => c.name.toLowerCase() === typed.toLowerCase());
    qp.items = exclude === undefined && typed && !exact ? [...base, { label: `$(add) New code "${typed}"`, create: true, alwaysShow: true }] : base;
  };
  refreshItems();
  const disposables = [qp.onDidChangeValue(refreshItems)];
  const picked = await new Promise<Item | undefined>((resolve) => {
    disposables.push(
      qp.onDidAccept(() => resolve(qp.selectedItems[0])),
      qp.onDidHide(() => resolve(undefined)),
    );
    qp.show();
  });
  const typed = qp.value.trim();
  qp.dispose();
  for (const x of disposables) x.dispose();
  if (!picked) return undefined;
  if (picked.create) return createCodeInteractively(d, typed);
  return picked.codeId;
}
