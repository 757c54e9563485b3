import * as vscode from 'vscode';
import type { CaseAttribute, CaseSegment, CaseSourceLink, CaseWithCounts } from '../../domain/ports';
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
 * a range opens the source at it.
 */
export class CasesTreeProvider implements vscode.TreeDataProvider<CasesNode>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<CasesNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  readonly view: vscode.TreeView<CasesNode>;

  constructor(private readonly wb: Workbench) {
    this.view = vscode.window.createTreeView('marginalia.cases', { treeDataProvider: this, showCollapseAll: true });
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
        item.description = `${c.attribute_count} attribute${c.attribute_count === 1 ? '' : 's'} · ${c.source_count + c.segment_count} member${c.source_count + c.segment_count === 1 ? '' : 's'}${madeByAgent(c.session_id) ? ' · ✦ AI' : ''}`;
        if (c.memo) item.tooltip = new vscode.MarkdownString().appendText(c.memo);
        return item;
      }
      case 'attribute': {
        const a = node.item;
        const item = new vscode.TreeItem(`${a.name} = ${String(a.value)}`);
        item.id = `case:${a.case_id}:attr:${a.name}`;
        item.iconPath = new vscode.ThemeIcon(TYPE_ICONS[a.type] ?? 'symbol-field');
        item.description = a.type;
        return item;
      }
      case 'source': {
        const s = node.item;
        const item = new vscode.TreeItem(s.name);
        item.id = `case:${s.case_id}:source:${s.source_id}`;
        item.iconPath = new vscode.ThemeIcon('file-text');
        item.command = { command: 'marginalia.sources.open', title: 'Open Source', arguments: [s.source_id] };
        return item;
      }
      case 'range': {
        const r = node.item;
        const oneLine = r.text.replace(/\s+/g, ' ').trim();
        const item = new vscode.TreeItem(oneLine.length > 60 ? `${oneLine.slice(0, 59)}…` : oneLine);
        item.id = `case:${r.case_id}:range:${r.case_segment_id}`;
        item.iconPath = new vscode.ThemeIcon('quote');
        item.description = `${r.source_name} ${r.start_pos}–${r.end_pos}`;
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
