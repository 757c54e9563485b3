/**
 * The Codes view's context commands on one code: Recolor, Edit Memo, Merge Into…, Delete, Show Segments and
 * Refresh. Create, Create Category and Rename live in src/ui/codebook/codebookCommands.ts.
 */
import * as vscode from 'vscode';
import { countOf } from '../../core/plural';
import { CODE_PALETTE } from '../../domain/codeColours';
import { deleteCodeTool, mergeCodesTool, setCodeColorTool, updateCodeMemoTool } from '../../tools/codeTools';
import type { CodesNode } from '../trees/codesTreeProvider';
import { pickCode } from './codePicker';
import type { CommandDeps } from './deps';
import type { CommandTable } from './table';

/** The palette of distinct code colours (Tableau 20, domain/codeColours) offered when recolouring a code. */
export const PALETTE: readonly string[] = CODE_PALETTE;

type CodeNode = CodesNode & { kind: 'code' };

function codeOf(node: CodesNode | undefined): CodeNode | undefined {
  return node?.kind === 'code' ? node : undefined;
}

/** Asks for a palette colour or a typed `#RRGGBB` and sets it; shows the tool's note on a colour close to another code's. */
async function recolor(d: CommandDeps, c: CodeNode): Promise<unknown> {
  const pick = await vscode.window.showQuickPick([...PALETTE.map((p) => ({ label: p })), { label: 'Other…' }], { title: `Colour of "${c.code.name}"` });
  if (!pick) return undefined;
  const color =
    pick.label === 'Other…'
      ? await vscode.window.showInputBox({
          title: 'Colour as #RRGGBB',
          value: c.code.color,
          validateInput: (v) => (/^#[0-9A-Fa-f]{6}$/.test(v) ? undefined : 'Use #RRGGBB'),
        })
      : pick.label;
  if (!color) return undefined;
  const done = await d.wb.call(setCodeColorTool, { code_id: c.code.code_id, color });
  if (done?.colour_note) void vscode.window.showInformationMessage(done.colour_note);
  return done;
}

/** Merges the code into one the researcher picks, after a modal warning that Undo stops at a merge. */
async function mergeInto(d: CommandDeps, c: CodeNode): Promise<unknown> {
  const target = await pickCode(d, `Merge "${c.code.name}" into…`, c.code.code_id);
  if (target === undefined) return undefined;
  const targetName = d.codesTree.allCodes.find((x) => x.code_id === target)?.name ?? String(target);
  // merges are not undoable (src/domain/undoRedo.ts): Marginalia: Undo stops at them
  const ok = await vscode.window.showWarningMessage(
    `Merge "${c.code.name}" into "${targetName}"?`,
    {
      modal: true,
      detail: `Its ${countOf(c.code.segment_count, 'coding')} move to "${targetName}" and "${c.code.name}" is deleted. This cannot be undone: Marginalia: Undo stops at a merge and does not go back past it.`,
    },
    'Merge',
  );
  if (ok !== 'Merge') return undefined;
  return d.wb.call(mergeCodesTool, { source_code_id: c.code.code_id, target_code_id: target });
}

/** Deletes the code and its codings after a modal confirmation saying whether Undo can bring it back. */
async function deleteCode(d: CommandDeps, c: CodeNode): Promise<unknown> {
  const n = c.code.segment_count + c.code.av_segment_count;
  // deleting an unused code is undoable; with its codings it is not (src/domain/undoRedo.ts)
  const ok = await vscode.window.showWarningMessage(
    `Delete the code "${c.code.name}"${n ? ` and its ${countOf(n, 'coding')}` : ''}?`,
    {
      modal: true,
      detail: n
        ? `The ${countOf(n, 'passage')} coded with it lose this coding. This cannot be undone: Marginalia: Undo stops here and does not go back past it.`
        : 'It is not used anywhere. You can undo this with Marginalia: Undo (Ctrl+Z in a source editor).',
    },
    'Delete',
  );
  if (ok !== 'Delete') return undefined;
  return d.wb.call(deleteCodeTool, { code_id: c.code.code_id, delete_segments: true });
}

/** The Codes view's commands on a code node (`marginalia.codes.*`); each does nothing without a code node. */
export function codesCommands(d: CommandDeps): CommandTable {
  /** The handler run only with a code node (menus pass the clicked node; the Command Palette passes nothing). */
  const onCode =
    (run: (c: CodeNode) => Promise<unknown>) =>
    async (node?: CodesNode): Promise<unknown> => {
      const c = codeOf(node);
      return c ? run(c) : undefined;
    };
  return {
    'marginalia.codes.recolor': onCode((c) => recolor(d, c)),
    'marginalia.codes.editMemo': onCode(async (c) => {
      const memo = await vscode.window.showInputBox({
        title: `Memo of "${c.code.name}"`,
        value: c.code.memo ?? '',
        prompt: 'When to apply this code. Empty clears the memo.',
      });
      if (memo === undefined) return undefined;
      return d.wb.call(updateCodeMemoTool, { code_id: c.code.code_id, memo: memo || null });
    }),
    'marginalia.codes.merge': onCode((c) => mergeInto(d, c)),
    'marginalia.codes.delete': onCode((c) => deleteCode(d, c)),
    'marginalia.codes.showSegments': async (node?: CodesNode) => d.retrieval.show(codeOf(node)?.code.code_id),
    'marginalia.codes.refresh': () => d.codesTree.refresh(),
  };
}
