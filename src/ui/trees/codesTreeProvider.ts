import * as vscode from 'vscode';
import type { CategoryWithCount, CodeWithCounts } from '../../domain/ports';
import { moveCodeToCategoryTool } from '../../tools/codeTools';
import { madeByAgent, type Workbench } from '../workbench';
import type { ColorIcons } from './colorIcons';

/** A node of the Codes tree: a category or a code. */
export type CodesNode = { kind: 'category'; category: CategoryWithCount } | { kind: 'code'; code: CodeWithCounts };

const MIME = 'application/vnd.code.tree.marginalia.codes';

/**
 * The Codes view (`marginalia.codes`): categories nested, codes with their colour, segment count
 * (description), memo (tooltip) and an AI badge when an agent made them. Dragging a code onto a category
 * moves it there (onto empty space: uncategorised) through the pipeline.
 */
export class CodesTreeProvider implements vscode.TreeDataProvider<CodesNode>, vscode.TreeDragAndDropController<CodesNode>, vscode.Disposable {
  readonly dropMimeTypes = [MIME];
  readonly dragMimeTypes = [MIME];
  private readonly changed = new vscode.EventEmitter<CodesNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private codes: CodeWithCounts[] = [];
  private categories: CategoryWithCount[] = [];
  private loaded = false;
  readonly view: vscode.TreeView<CodesNode>;

  constructor(
    private readonly wb: Workbench,
    private readonly icons: ColorIcons,
  ) {
    this.view = vscode.window.createTreeView('marginalia.codes', { treeDataProvider: this, dragAndDropController: this, showCollapseAll: true, canSelectMany: false });
  }

  /** Reloads from the project and redraws. */
  refresh(): void {
    this.loaded = false;
    this.changed.fire(undefined);
  }

  /** The codes as last loaded (for tests and quick picks). */
  get allCodes(): readonly CodeWithCounts[] {
    this.load();
    return this.codes;
  }

  private load(): void {
    if (this.loaded) return;
    const repo = this.wb.repo();
    this.codes = repo ? repo.listCodes() : [];
    this.categories = repo ? repo.listCategories() : [];
    this.loaded = true;
  }

  getChildren(node?: CodesNode): CodesNode[] {
    this.load();
    if (!this.wb.repo()) return [];
    const parentId = node === undefined ? null : node.kind === 'category' ? node.category.category_id : undefined;
    if (parentId === undefined) return [];
    const cats: CodesNode[] = this.categories.filter((c) => c.parent_id === parentId).map((category) => ({ kind: 'category', category }));
    const codes: CodesNode[] = this.codes.filter((c) => c.category_id === parentId).map((code) => ({ kind: 'code', code }));
    return [...cats, ...codes];
  }

  getParent(node: CodesNode): CodesNode | undefined {
    const parentId = node.kind === 'category' ? node.category.parent_id : node.code.category_id;
    const parent = parentId === null ? undefined : this.categories.find((c) => c.category_id === parentId);
    return parent ? { kind: 'category', category: parent } : undefined;
  }

  async getTreeItem(node: CodesNode): Promise<vscode.TreeItem> {
    if (node.kind === 'category') {
      const c = node.category;
      const item = new vscode.TreeItem(c.name, vscode.TreeItemCollapsibleState.Expanded);
      item.id = `category:${c.category_id}`;
      item.contextValue = 'category';
      item.iconPath = new vscode.ThemeIcon('folder');
      item.description = `${c.code_count} code${c.code_count === 1 ? '' : 's'}`;
      if (c.memo) item.tooltip = new vscode.MarkdownString().appendMarkdown(`**${escapeMd(c.name)}**\n\n`).appendText(c.memo);
      return item;
    }
    const c = node.code;
    const item = new vscode.TreeItem(c.name, vscode.TreeItemCollapsibleState.None);
    item.id = `code:${c.code_id}`;
    const ai = madeByAgent(c.session_id);
    item.contextValue = ai ? 'code.ai' : 'code';
    item.iconPath = await this.icons.icon(c.color);
    const count = c.segment_count + c.av_segment_count;
    item.description = `${count}${ai ? ' · ✦ AI' : ''}`;
    const tip = new vscode.MarkdownString(undefined, true);
    tip.appendMarkdown(`**${escapeMd(c.name)}** · ${count} segment${count === 1 ? '' : 's'}\n\n`);
    if (c.memo) tip.appendText(c.memo).appendMarkdown('\n\n');
    tip.appendMarkdown(`*${ai ? `$(sparkle) made by an agent (session ${escapeMd(c.session_id ?? '')})` : `by ${escapeMd(c.owner)}`}*`);
    item.tooltip = tip;
    item.command = { command: 'marginalia.codes.showSegments', title: 'Show Coded Segments', arguments: [node] };
    return item;
  }

  handleDrag(source: readonly CodesNode[], data: vscode.DataTransfer): void {
    const codes = source.filter((n) => n.kind === 'code').map((n) => (n.kind === 'code' ? n.code.code_id : 0));
    if (codes.length > 0) data.set(MIME, new vscode.DataTransferItem(codes));
  }

  async handleDrop(target: CodesNode | undefined, data: vscode.DataTransfer): Promise<void> {
    const item = data.get(MIME);
    if (!item) return;
    const ids = item.value as number[];
    const categoryId = target === undefined ? null : target.kind === 'category' ? target.category.category_id : target.code.category_id;
    for (const id of ids) await this.wb.call(moveCodeToCategoryTool, { code_id: id, category_id: categoryId });
  }

  dispose(): void {
    this.view.dispose();
    this.changed.dispose();
  }
}

/** Escapes Markdown special characters in user text shown in tooltips. */
export function escapeMd(text: string): string {
  return text.replace(/[\\`*_{}[\]()#+\-.!|<>]/g, (c) => `\\${c}`);
}
