import * as vscode from 'vscode';
import type { CaseAttribute, CaseSegment, CaseSourceLink, CaseWithCounts } from '../../domain/ports';
import { countOf } from '../../core/plural';
import { madeByAgent, type Workbench } from '../workbench';

/** A node of the Cases tree: a case, one of its typed attributes, a linked source, or a range it holds. */
export type CasesNode =
  | { kind: 'case'; item: CaseWithCounts }
  | { kind: 'attribute'; item: CaseAttribute }
  | { kind: 'source'; item: CaseSourceLink }
  | { kind: 'range'; item: CaseSegment };

const TYPE_ICONS: Record<string, string> = { text: 'symbol-string', number: 'symbol-number', date: 'calendar', boolean: 'symbol-boolean' };

/**
 * The Cases view (`marginalia.cases`): cases by name with their typed attributes (name = value, type
 * icon), the sources linked to them and the source ranges they hold. Clicking a source opens it; clicking
 * a range opens the source at it. Context values for menus (package.json): `case`, `caseAttribute`,
 * `caseSource`, `caseRange`; the commands are in src/ui/cases/casesCommands.ts. With no case the view shows
 * its welcome content (package.json viewsWelcome), which offers "New Case from Sources...".
 */
export class CasesTreeProvider implements vscode.TreeDataProvider<CasesNode>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<CasesNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  readonly view: vscode.TreeView<CasesNode>;

  constructor(private readonly wb: Workbench) {
    this.view = vscode.window.createTreeView('marginalia.cases', { treeDataProvider: this, showCollapseAll: true, canSelectMany: false });
  }

  refresh(): void {
    this.changed.fire(undefined);
  }

  getChildren(node?: CasesNode): CasesNode[] {
    const repo = this.wb.repo();
    if (!repo) return [];
    if (!node) return repo.listCases().map((item): CasesNode => ({ kind: 'case', item }));
    if (node.kind !== 'case') return [];
    const id = node.item.case_id;
    return [
      ...repo.listCaseAttributes(id).map((item): CasesNode => ({ kind: 'attribute', item })),
      ...repo.listCaseSources(id).map((item): CasesNode => ({ kind: 'source', item })),
      ...repo.listCaseSegments(id).map((item): CasesNode => ({ kind: 'range', item })),
    ];
  }

  getTreeItem(node: CasesNode): vscode.TreeItem {
    switch (node.kind) {
      case 'case': {
        const c = node.item;
        const item = new vscode.TreeItem(c.name, vscode.TreeItemCollapsibleState.Collapsed);
        item.id = `case:${c.case_id}`;
        item.contextValue = 'case';
        item.iconPath = new vscode.ThemeIcon('person');
        const members = [countOf(c.source_count, 'source'), ...(c.segment_count > 0 ? [countOf(c.segment_count, 'passage')] : [])];
        item.description = `${members.join(', ')} · ${countOf(c.attribute_count, 'attribute')}${madeByAgent(c.session_id) ? ' · ✦ AI' : ''}`;
        const tip = new vscode.MarkdownString().appendText(`${c.name}: ${item.description}`);
        if (c.memo) tip.appendText(`\n\n${c.memo}`);
        item.tooltip = tip;
        return item;
      }
      case 'attribute': {
        const a = node.item;
        const item = new vscode.TreeItem(`${a.name} = ${String(a.value)}`);
        item.id = `case:${a.case_id}:attr:${a.name}`;
        item.contextValue = 'caseAttribute';
        item.iconPath = new vscode.ThemeIcon(TYPE_ICONS[a.type] ?? 'symbol-field');
        item.description = a.type;
        return item;
      }
      case 'source': {
        const s = node.item;
        const item = new vscode.TreeItem(s.name);
        item.id = `case:${s.case_id}:source:${s.source_id}`;
        item.contextValue = 'caseSource';
        item.iconPath = new vscode.ThemeIcon('file-text');
        item.command = { command: 'marginalia.sources.open', title: 'Open Source', arguments: [s.source_id] };
        return item;
      }
      case 'range': {
        const r = node.item;
        const oneLine = r.text.replace(/\s+/g, ' ').trim();
        const item = new vscode.TreeItem(oneLine.length > 60 ? `${oneLine.slice(0, 59)}…` : oneLine);
        item.id = `case:${r.case_id}:range:${r.case_segment_id}`;
        item.contextValue = 'caseRange';
        item.iconPath = new vscode.ThemeIcon('quote');
        item.description = `passage of ${r.source_name}`;
        item.tooltip = new vscode.MarkdownString().appendText(r.text);
        item.command = { command: 'marginalia.sources.openAt', title: 'Open Source', arguments: [r.source_id, r.start_pos, r.end_pos] };
        return item;
      }
    }
  }

  dispose(): void {
    this.view.dispose();
    this.changed.dispose();
  }
}
