/**
 * The Cases view's commands (issue 13 item 5): new case from sources (a multi-select quick pick, or the
 * Sources view's selection), rename, delete (confirmed, saying what is kept), add and remove sources, add the
 * editor's selected passage to a case, set/remove a typed attribute, rename an attribute definition, and open
 * the Case Attributes table. Every write goes through the one pipeline as the researcher (Workbench.call), so
 * it is undoable, audited and evented like an agent's. Every command takes its answers as optional arguments
 * (tests, keybindings, other extensions), which skip the dialogs; a case is given as a Cases view node or a
 * case id, sources as Sources view nodes or source ids.
 */
import * as vscode from 'vscode';
import { OffsetMap } from '../../core/offsets';
import { countOf } from '../../core/plural';
import type { AttributeType, AttributeValue, CaseWithCounts } from '../../domain/ports';
import { addSegmentToCaseTool, addSourceToCaseTool, createCaseTool, deleteCaseTool, setCaseAttributeTool } from '../../tools/caseTools';
import { removeCaseAttributeTool, removeSourceFromCaseTool, renameCaseAttributeTool, renameCaseTool } from '../../tools/caseManagementTools';
import { askAttributeValue } from '../commands/sourceAttributeCommands';
import type { SourceDocuments } from '../documents/sourceDocuments';
import type { CasesNode, CasesTreeProvider } from '../trees/casesTreeProvider';
import type { SourcesNode } from '../trees/sourcesTreeProvider';
import type { Workbench } from '../workbench';
import type { CaseAttributesPanel } from './caseAttributesPanel';

/** What the case commands use. */
export interface CasesCommandDeps {
  wb: Workbench;
  docs: SourceDocuments;
  casesTree: CasesTreeProvider;
  attributesPanel: CaseAttributesPanel;
  /** stores typed edits before a command reads positions */
  flushEdits: () => Promise<void>;
}

const TYPES: readonly AttributeType[] = ['text', 'number', 'date', 'boolean'];

/** The case id a command argument names: a Cases view node (a case, or any child of one) or a number. */
export function caseIdOf(target: unknown): number | undefined {
  if (typeof target === 'number') return target;
  const n = target as CasesNode | undefined;
  if (!n || typeof n !== 'object' || !('kind' in n)) return undefined;
  return n.item.case_id;
}

/** Source ids from command arguments: numbers, Sources view source nodes, Cases view source nodes, or arrays of them. */
function sourceIdsOf(...targets: unknown[]): number[] {
  const ids = new Set<number>();
  const visit = (t: unknown) => {
    if (Array.isArray(t)) t.forEach(visit);
    else if (typeof t === 'number') ids.add(t);
    else if (t && typeof t === 'object' && 'kind' in t) {
      const n = t as SourcesNode | CasesNode;
      if (n.kind === 'source' && 'source' in n) ids.add(n.source.source_id);
      else if (n.kind === 'source' && 'item' in n) ids.add(n.item.source_id);
    }
  };
  targets.forEach(visit);
  return [...ids];
}

/** Asks for a case with a quick pick (by name), unless `given` names one. */
async function pickCase(wb: Workbench, given: unknown, title: string): Promise<CaseWithCounts | undefined> {
  const repo = wb.repo();
  if (!repo) return undefined;
  const id = caseIdOf(given);
  if (id !== undefined) return repo.getCase(id);
  const cases = repo.listCases();
  if (cases.length === 0) {
    void vscode.window.showInformationMessage('There are no cases yet. Use "New Case from Sources..." in the Cases view.');
    return undefined;
  }
  const picked = await vscode.window.showQuickPick(
    cases.map((c) => ({ label: c.name, description: `${countOf(c.source_count, 'source')} · ${countOf(c.attribute_count, 'attribute')}`, c })),
    { title, placeHolder: 'Pick a case' },
  );
  return picked?.c;
}

/** Asks for sources with a multi-select quick pick; `exclude` are left out (already in the case). */
async function pickSources(wb: Workbench, title: string, exclude: ReadonlySet<number> = new Set()): Promise<number[] | undefined> {
  const repo = wb.repo();
  if (!repo) return undefined;
  const sources = repo.listSources().filter((s) => !exclude.has(s.source_id));
  if (sources.length === 0) {
    void vscode.window.showInformationMessage(exclude.size > 0 ? 'Every source is in this case already.' : 'There are no sources yet. Import a source first.');
    return undefined;
  }
  const picked = await vscode.window.showQuickPick(
    sources.map((s) => ({ label: s.name, description: s.type, id: s.source_id })),
    { title, placeHolder: 'Select sources (Space toggles, Enter confirms)', canPickMany: true },
  );
  return picked && picked.length > 0 ? picked.map((p) => p.id) : undefined;
}

/**
 * New Case from Sources: creates a case named `name` (asked, suggested from the first source) and links
 * `sources` to it (asked with a multi-select when none are given). From the Sources view's context menu VS
 * Code passes the clicked node and the whole selection. Resolves with the new case's id, or undefined.
 */
export async function newCaseFromSources(wb: Workbench, sources?: unknown, selection?: unknown, name?: string): Promise<number | undefined> {
  const repo = wb.repo();
  if (!repo) return undefined;
  let ids = sourceIdsOf(selection ?? [], sources ?? []);
  if (ids.length === 0) ids = (await pickSources(wb, 'New case: its sources')) ?? [];
  if (ids.length === 0) return undefined;
  const first = repo.getSource(ids[0] as number)?.name ?? '';
  const chosen =
    name ??
    (await vscode.window.showInputBox({
      title: `New case from ${countOf(ids.length, 'source')}`,
      prompt: 'Name of the case (a participant, a household, a site; unique)',
      value: ids.length === 1 ? first.replace(/\.[^.]+$/, '') : '',
      validateInput: (v) =>
        !v.trim() ? 'Enter a name' : repo.listCases().some((c) => c.name.toLowerCase() === v.trim().toLowerCase()) ? 'A case of that name exists' : undefined,
    }));
  if (!chosen) return undefined;
  const created = await wb.call(createCaseTool, { name: chosen });
  if (!created) return undefined;
  for (const id of ids) await wb.call(addSourceToCaseTool, { case_id: created.case_id, source_id: id });
  return created.case_id;
}

/**
 * The Cases commands, id to handler, joined into the one command table by commandTable (src/ui/commands/index.ts). Command ids
 * are `marginalia.cases.*`; see package.json for titles and menus.
 */
export function casesCommands(d: CasesCommandDeps): Record<string, (...args: any[]) => unknown> {
  const { wb } = d;
  return {
    'marginalia.cases.newFromSources': (sources?: unknown, selection?: unknown, name?: string) => newCaseFromSources(wb, sources, selection, name),

    'marginalia.cases.rename': async (target?: unknown, newName?: string) => {
      const c = await pickCase(wb, target, 'Rename case');
      if (!c) return undefined;
      const chosen =
        newName ??
        (await vscode.window.showInputBox({
          title: `Rename the case "${c.name}"`,
          value: c.name,
          validateInput: (v) => (v.trim() ? undefined : 'Enter a name'),
        }));
      if (!chosen || chosen === c.name) return undefined;
      return wb.call(renameCaseTool, { case_id: c.case_id, new_name: chosen });
    },

    'marginalia.cases.delete': async (target?: unknown, confirmed?: boolean) => {
      const c = await pickCase(wb, target, 'Delete case');
      if (!c) return undefined;
      if (confirmed !== true) {
        const detail =
          `The case loses its ${countOf(c.source_count, 'source link')}, ${countOf(c.segment_count, 'passage')} and ${countOf(c.attribute_count, 'attribute')}. ` +
          'The sources themselves and all their codings are kept. Marginalia: Undo brings the case back.';
        const answer = await vscode.window.showWarningMessage(`Delete the case "${c.name}"?`, { modal: true, detail }, 'Delete Case');
        if (answer !== 'Delete Case') return undefined;
      }
      return wb.call(deleteCaseTool, { case_id: c.case_id });
    },

    'marginalia.cases.addSources': async (target?: unknown, sources?: unknown) => {
      const c = await pickCase(wb, target, 'Add sources to a case');
      if (!c) return undefined;
      const linked = new Set(
        wb
          .repo()
          ?.listCaseSources(c.case_id)
          .map((l) => l.source_id) ?? [],
      );
      const ids = sources !== undefined ? sourceIdsOf(sources) : ((await pickSources(wb, `Add sources to "${c.name}"`, linked)) ?? []);
      let added = 0;
      for (const id of ids) if ((await wb.call(addSourceToCaseTool, { case_id: c.case_id, source_id: id }))?.added) added++;
      return added;
    },

    /** From the Sources view: the selected sources go into a case picked from a list. */
    'marginalia.cases.addSelectedSourcesToCase': async (node?: unknown, selection?: unknown, target?: unknown) => {
      const ids = sourceIdsOf(selection ?? [], node ?? []);
      if (ids.length === 0) return 0;
      const c = await pickCase(wb, target, `Add ${countOf(ids.length, 'source')} to a case`);
      if (!c) return 0;
      let added = 0;
      for (const id of ids) if ((await wb.call(addSourceToCaseTool, { case_id: c.case_id, source_id: id }))?.added) added++;
      return added;
    },

    'marginalia.cases.removeSource': async (target?: unknown, sourceId?: number) => {
      const caseId = caseIdOf(target);
      const repo = wb.repo();
      if (caseId === undefined || !repo) return undefined;
      let id = sourceId ?? sourceIdsOf(target)[0];
      if (id === undefined) {
        const linked = repo.listCaseSources(caseId);
        const picked = await vscode.window.showQuickPick(
          linked.map((l) => ({ label: l.name, id: l.source_id })),
          { title: `Remove a source from "${repo.getCase(caseId)?.name ?? ''}"` },
        );
        id = picked?.id;
      }
      if (id === undefined) return undefined;
      return wb.call(removeSourceFromCaseTool, { case_id: caseId, source_id: id });
    },

    'marginalia.cases.addSelectedPassage': async (target?: unknown) => {
      await d.flushEdits();
      const editor = vscode.window.activeTextEditor;
      const sourceId = editor ? d.docs.sourceIdFor(editor.document) : undefined;
      if (!editor || editor.selection.isEmpty || sourceId === undefined) {
        void vscode.window.showInformationMessage('Select a passage of a source first.');
        return undefined;
      }
      const c = await pickCase(wb, target, 'Add the selected passage to a case');
      if (!c) return undefined;
      const map = new OffsetMap(editor.document.getText());
      const start = map.toCp(editor.document.offsetAt(editor.selection.start));
      const end = map.toCp(editor.document.offsetAt(editor.selection.end));
      const r = await wb.call(addSegmentToCaseTool, { case_id: c.case_id, source_id: sourceId, start_pos: start, end_pos: end });
      if (r)
        vscode.window.setStatusBarMessage(r.created ? `Added the passage to the case '${c.name}'` : `The passage is in the case '${c.name}' already`, 4000);
      return r;
    },

    'marginalia.cases.setAttribute': async (target?: unknown, name?: string, value?: AttributeValue | null, type?: AttributeType) =>
      setCaseAttributeInteractively(wb, target, name, value, type),

    'marginalia.cases.removeAttribute': async (target?: unknown, name?: string) => {
      const caseId = caseIdOf(target);
      const attr =
        name ?? ((target as CasesNode | undefined)?.kind === 'attribute' ? (target as Extract<CasesNode, { kind: 'attribute' }>).item.name : undefined);
      if (caseId === undefined || attr === undefined) return undefined;
      return wb.call(removeCaseAttributeTool, { case_id: caseId, attribute_name: attr });
    },

    'marginalia.cases.renameAttribute': async (attribute?: unknown, newName?: string) => renameAttributeInteractively(wb, attribute, newName),

    'marginalia.cases.openAttributes': () => d.attributesPanel.open(),
  };
}

/**
 * Renames an attribute definition on every case (rename_case_attribute): `attribute` is its name or a Cases
 * view attribute node (asked when missing), `newName` the new name (asked when missing).
 */
export async function renameAttributeInteractively(wb: Workbench, attribute?: unknown, newName?: string) {
  const repo = wb.repo();
  if (!repo) return undefined;
  let name =
    typeof attribute === 'string'
      ? attribute
      : (attribute as CasesNode | undefined)?.kind === 'attribute'
        ? (attribute as Extract<CasesNode, { kind: 'attribute' }>).item.name
        : undefined;
  if (name === undefined) {
    const names = [...new Set(repo.listCaseAttributes().map((a) => a.name))].sort();
    if (names.length === 0) {
      void vscode.window.showInformationMessage('No case has an attribute yet.');
      return undefined;
    }
    name = await vscode.window.showQuickPick(names, { title: 'Rename a case attribute' });
  }
  if (!name) return undefined;
  const chosen =
    newName ??
    (await vscode.window.showInputBox({
      title: `Rename the attribute "${name}" on every case`,
      value: name,
      validateInput: (v) => (v.trim() ? undefined : 'Enter a name'),
    }));
  if (!chosen || chosen === name) return undefined;
  return wb.call(renameCaseAttributeTool, { attribute_name: name, new_name: chosen });
}

/**
 * Sets a typed attribute of a case through set_case_attribute (value null: remove_case_attribute). Asks for
 * whatever is not given: the case, the attribute (its existing names or a new one), the type (the
 * attribute's current type first) and the value (checked for the type before it is sent; the tool checks
 * again and its INVALID_ARGUMENTS message is shown).
 */
export async function setCaseAttributeInteractively(wb: Workbench, target?: unknown, name?: string, value?: AttributeValue | null, type?: AttributeType) {
  const repo = wb.repo();
  if (!repo) return undefined;
  const c = await pickCase(wb, target, 'Set a case attribute');
  if (!c) return undefined;
  const all = repo.listCaseAttributes();
  const mine = new Map(all.filter((a) => a.case_id === c.case_id).map((a) => [a.name, a]));
  const typeElsewhere = new Map(all.map((a) => [a.name, a.type]));
  let attribute =
    name ?? ((target as CasesNode | undefined)?.kind === 'attribute' ? (target as Extract<CasesNode, { kind: 'attribute' }>).item.name : undefined);
  if (attribute === undefined) {
    const NEW = '$(add) New attribute...';
    const names = [...new Set([...mine.keys(), ...typeElsewhere.keys()])].sort();
    const picked = await vscode.window.showQuickPick(
      [
        ...names.map((n) => ({
          label: n,
          description: mine.has(n) ? `${String(mine.get(n)?.value)} (${mine.get(n)?.type})` : `not set (${typeElsewhere.get(n)})`,
        })),
        { label: NEW, description: '' },
      ],
      { title: `Attribute of the case "${c.name}"` },
    );
    if (!picked) return undefined;
    attribute =
      picked.label === NEW
        ? await vscode.window.showInputBox({
            title: 'New case attribute: name',
            placeHolder: 'e.g. Age, Interview date, Urban',
            validateInput: (v) => (v.trim() ? undefined : 'Enter a name'),
          })
        : picked.label;
    if (!attribute) return undefined;
  }
  const current = mine.get(attribute);
  let kind = type;
  if (kind === undefined && value === undefined) {
    const preferred = current?.type ?? typeElsewhere.get(attribute) ?? 'text';
    const picked = await vscode.window.showQuickPick(
      [...TYPES].sort((a, b) => (a === preferred ? -1 : b === preferred ? 1 : 0)).map((t) => ({ label: t, description: t === preferred ? 'current' : '' })),
      { title: `"${attribute}": type` },
    );
    if (!picked) return undefined;
    kind = picked.label as AttributeType;
  }
  let answer = value;
  if (answer === undefined) {
    answer = await askAttributeValue({
      title: `"${attribute}" of "${c.name}"`,
      type: kind ?? 'text',
      current,
      removable: false,
      removePrompt: current ? 'Leave empty to remove the value' : undefined,
    });
    if (answer === undefined) return undefined;
  }
  if (answer === null) return wb.call(removeCaseAttributeTool, { case_id: c.case_id, attribute_name: attribute });
  return wb.call(setCaseAttributeTool, { case_id: c.case_id, attribute_name: attribute, value: answer, ...(kind ? { type: kind } : {}) });
}
