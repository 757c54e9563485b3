import * as vscode from 'vscode';
import { countOf } from '../../core/plural';
import type { CategoryWithCount, CodeWithCounts } from '../../domain/ports';
import { moveCodeToCategoryTool } from '../../tools/codeTools';
import { madeByAgent, type Workbench } from '../workbench';
import { buildIndex, emptyIndex, foldForMatch, matching, reindex, type CodebookIndex, type CodesNode } from '../codebook/codebookIndex';
import type { ColorIcons } from './colorIcons';
import { researcherRepo } from '../teamScope';

export type { CodesNode } from '../codebook/codebookIndex';
export { foldForMatch };

/** The context key true while a filter narrows the Codes tree (shows the "Clear Filter" title button). */
export const CODES_FILTERED_CONTEXT = 'marginalia.codesFiltered';

/**
 * What {@link CodesTreeProvider.refreshAndWait} measured: `ms` from the refresh until VS Code's view has drawn it
 * (or, for a hidden view, until the provider computed the last tree item; milliseconds, `performance.now()`), `rows` tree items computed, whether VS Code's own view
 * asked for them (`drawnByView`; false when the view was hidden and the provider walked the tree itself),
 * and `complete`: false when the time limit ended the wait before every expanded category was asked for.
 */
export interface CodesTreeTiming {
  ms: number;
  rows: number;
  drawnByView: boolean;
  complete: boolean;
  /** milliseconds from the refresh to VS Code's first request; undefined when not drawn by the view */
  firstCallMs?: number;
  /** when VS Code asked for children, grouped into bursts: "n@ms" (calls, ms after the refresh) */
  trace?: string;
}

const MIME = 'application/vnd.code.tree.marginalia.codes';
/**
 * VS Code's extension host debounces a tree's onDidChangeTreeData by 200 ms with a leading edge (ExtHostTreeView in
 * src/vs/workbench/api/common/extHostTreeViews.ts: `Event.debounce(..., 200, true)`): a change within 200 ms of the
 * previous one waits for the window to close. A timed refresh starts this long after the provider's last change, so
 * it measures one refresh, not VS Code's coalescing of a burst (milliseconds).
 */
const VSCODE_TREE_DEBOUNCE_MS = 200;
/** Silence after which a timed refresh stops waiting for categories VS Code has not asked about (milliseconds). */
const GIVE_UP_MS = 1000;

/** What a timed refresh notes of the calls VS Code makes. */
interface RefreshProbe {
  /** `performance.now()` of the last call */
  last: number;
  rows: number;
  rootAsked: boolean;
  /** categories whose row VS Code asked for, and those whose children it asked for */
  categoryRows: Set<number>;
  categoryChildren: Set<number>;
  /** `performance.now()` of each getChildren call (for the trace) */
  childCalls: number[];
}

/**
 * The Codes view (`marginalia.codes`): categories nested, codes with their colour, segment count
 * (description), memo (tooltip) and an AI badge when an agent made them. Dragging a code onto a category
 * moves it there (onto empty space: uncategorised) through the pipeline.
 *
 * A filter ({@link setFilter}) narrows the tree to the codes whose name, or whose category's name or
 * path, contains the filter text (case- and accent-insensitive), with their ancestor categories; the
 * view's description shows the filter and the context key {@link CODES_FILTERED_CONTEXT} is true.
 */
export class CodesTreeProvider implements vscode.TreeDataProvider<CodesNode>, vscode.TreeDragAndDropController<CodesNode>, vscode.Disposable {
  readonly dropMimeTypes = [MIME];
  readonly dragMimeTypes = [MIME];
  private readonly changed = new vscode.EventEmitter<CodesNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private codes: CodeWithCounts[] = [];
  private categories: CategoryWithCount[] = [];
  private index: CodebookIndex = emptyIndex();
  /** nodes shown under the filter (codes and their ancestor categories); undefined: no filter */
  private shown: Set<CodesNode> | undefined;
  private filterText: string | undefined;
  private loaded = false;
  /** colour icon files by `#RRGGBB`, once made */
  private readonly iconUris = new Map<string, vscode.Uri>();
  /** set by refreshAndWait: notes each call VS Code makes while a timed refresh runs */
  private probe: RefreshProbe | undefined;
  /** categories the researcher collapsed in this session (VS Code asks for no children of those) */
  private readonly collapsed = new Set<number>();
  private readonly subscriptions: vscode.Disposable[] = [];
  /** `performance.now()` of the last change sent to the view */
  private lastChange = -Infinity;
  readonly view: vscode.TreeView<CodesNode>;

  constructor(
    private readonly wb: Workbench,
    private readonly icons: ColorIcons,
  ) {
    this.view = vscode.window.createTreeView('marginalia.codes', {
      treeDataProvider: this,
      dragAndDropController: this,
      showCollapseAll: true,
      canSelectMany: false,
    });
    this.subscriptions.push(
      this.view.onDidCollapseElement((e) => {
        if (e.element.kind === 'category') this.collapsed.add(e.element.category.category_id);
      }),
      this.view.onDidExpandElement((e) => {
        if (e.element.kind === 'category') this.collapsed.delete(e.element.category.category_id);
      }),
      // another project's codebook starts unfiltered
      wb.controller.onDidChangeProject(() => {
        if (this.filterText !== undefined) void this.setFilter(undefined);
      }),
    );
  }

  /** Reloads from the project and redraws. */
  refresh(): void {
    this.loaded = false;
    this.fire(undefined);
  }

  /**
   * Shows a codebook change (codes or categories created, renamed, recoloured, moved, merged or deleted) by
   * redrawing only what changed ({@link reindex}): the categories whose children changed and the rows that
   * changed, so VS Code does not fetch and draw every expanded category of a large codebook again. The whole tree
   * is redrawn when the top level changed, when the tree is not loaded yet, or under a filter.
   */
  update(): void {
    const repo = researcherRepo(this.wb);
    if (!this.loaded || !repo || this.filterText !== undefined) return this.refresh();
    const codes = repo.listCodes();
    const categories = repo.listCategories();
    const { index, redraw } = reindex(this.index, codes, categories);
    this.codes = codes;
    this.categories = categories;
    this.index = index;
    this.lastRedraw = redraw === 'all' ? 'all' : redraw.length;
    if (redraw === 'all') this.fire(undefined);
    else for (const node of redraw) this.fire(node);
  }

  /** What the last {@link update} redrew: `'all'`, or how many nodes (each with its children). For the bench. */
  lastRedraw: 'all' | number | undefined;

  /**
   * {@link update}, then resolves once VS Code's view has drawn the change (see {@link refreshAndWait}); `ms` from
   * the call to then (milliseconds). For the bench "a codebook change in a 2,000-code Codes tree".
   */
  async updateAndWait(): Promise<number> {
    const settle = this.lastChange + VSCODE_TREE_DEBOUNCE_MS + 10 - performance.now();
    if (settle > 0) await sleep(settle);
    const start = performance.now();
    this.update();
    const first = this.getChildrenQuietly(undefined)[0];
    if (first && this.view.visible) await this.view.reveal(first, { select: false, focus: false, expand: false });
    return performance.now() - start;
  }

  private fire(node: CodesNode | undefined): void {
    this.lastChange = performance.now();
    this.changed.fire(node);
  }

  /**
   * Redraws only the rows of `codeIds` after their passages changed (a coding added, removed or moved): each
   * row's code is read again and only that row is sent to the view, so a coding does not make VS Code fetch
   * every expanded category again (about 100 round trips with 2,000 codes in 100 categories). Falls back to
   * {@link refresh} when the tree is not loaded, a code is unknown to it, or a filter is active (a count change
   * cannot change what matches, but a refresh is cheap then).
   */
  refreshCodeRows(codeIds: Iterable<number>): void {
    const repo = researcherRepo(this.wb);
    if (!this.loaded || !repo) return this.refresh();
    const nodes: (CodesNode & { kind: 'code' })[] = [];
    for (const id of new Set(codeIds)) {
      const node = this.index.codes.get(id);
      const fresh = repo.getCode(id);
      if (!node || !fresh || fresh.category_id !== node.code.category_id || fresh.name !== node.code.name || fresh.color !== node.code.color)
        return this.refresh();
      nodes.push(node);
      node.code = fresh;
      const at = this.codes.findIndex((c) => c.code_id === id);
      if (at >= 0) this.codes[at] = fresh;
    }
    for (const node of nodes) this.fire(node);
  }

  /**
   * Refreshes and resolves once the view has all its rows again: VS Code asked for the top level, for the
   * children of every category row it received that the researcher has not collapsed in this session, and its
   * main thread has finished the refresh (a reveal of the first row answers only then). `ms` runs from the refresh
   * to that answer.
   * When the view is not visible (or stops being visible) VS Code asks for nothing: the provider then
   * computes every node's children and row itself, as the view would with every category expanded.
   * `timeoutMs` bounds the wait (`complete` false). The refresh starts once {@link VSCODE_TREE_DEBOUNCE_MS} have
   * passed since the provider's last change (that wait is not counted), so VS Code draws it at once rather than at
   * the end of its debounce window. For the bench "Codes tree refresh with 2,000 codes" (issue 13).
   */
  async refreshAndWait(timeoutMs = 10_000): Promise<CodesTreeTiming> {
    const settle = this.lastChange + VSCODE_TREE_DEBOUNCE_MS + 10 - performance.now();
    if (settle > 0) await sleep(settle);
    const start = performance.now();
    const walked = async (): Promise<CodesTreeTiming> => {
      const t0 = performance.now();
      this.refresh();
      const rows = await this.walk();
      return { ms: performance.now() - t0, rows, drawnByView: false, complete: true };
    };
    if (!this.view.visible) return walked();
    const probe: RefreshProbe = { last: start, rows: 0, rootAsked: false, categoryRows: new Set(), categoryChildren: new Set(), childCalls: [] };
    this.probe = probe;
    this.refresh();
    try {
      const deadline = start + timeoutMs;
      while (!probe.rootAsked && this.view.visible && performance.now() < deadline) await sleep(5);
      if (!probe.rootAsked) {
        this.probe = undefined;
        return walked();
      }
      const waiting = () => [...probe.categoryRows].some((id) => !probe.categoryChildren.has(id) && !this.collapsed.has(id));
      // a category collapsed some other way (Collapse All, a state VS Code restored) is never asked for:
      // a second of silence ends the wait for it
      const quiet = () => performance.now() - probe.last;
      while (waiting() && quiet() < GIVE_UP_MS && performance.now() < deadline) await sleep(5);
      // VS Code's view has asked for every row, but its main thread may still be diffing and drawing them: a reveal
      // of the first row is answered only after the main thread has finished this refresh (ExtHostTreeView chains
      // reveal on its refresh promise), so the time ends when the researcher sees the tree
      const first = this.getChildrenQuietly(undefined)[0];
      if (first) await this.view.reveal(first, { select: false, focus: false, expand: false });
      return {
        ms: performance.now() - start,
        rows: probe.rows,
        drawnByView: true,
        complete: !waiting(),
        firstCallMs: (probe.childCalls[0] ?? probe.last) - start,
        trace: bursts(probe.childCalls, start),
      };
    } finally {
      this.probe = undefined;
    }
  }

  /** Computes every node's children and tree item, as a view with everything expanded would. Returns the number of items. */
  private async walk(): Promise<number> {
    let rows = 0;
    const stack: (CodesNode | undefined)[] = [undefined];
    while (stack.length > 0) {
      const children = this.getChildren(stack.pop());
      for (const c of children) {
        const item = this.getTreeItem(c);
        if (item instanceof Promise) await item;
        rows++;
        if (c.kind === 'category') stack.push(c);
      }
    }
    return rows;
  }

  /** The codes as last loaded (for tests and quick picks). */
  get allCodes(): readonly CodeWithCounts[] {
    this.load();
    return this.codes;
  }

  /** The categories as last loaded, in the repository's order. */
  get allCategories(): readonly CategoryWithCount[] {
    this.load();
    return this.categories;
  }

  /** A category's path from the top level, "Outer / Inner" (its own name last); undefined for an unknown id. */
  categoryPath(categoryId: number): string | undefined {
    this.load();
    return this.index.paths.get(categoryId);
  }

  /** The ids of a category and of every category inside it (any depth). */
  categoryAndDescendants(categoryId: number): Set<number> {
    this.load();
    const out = new Set<number>([categoryId]);
    const stack = [categoryId];
    while (stack.length > 0) {
      for (const child of this.index.children.get(stack.pop() as number) ?? []) {
        if (child.kind === 'category' && !out.has(child.category.category_id)) {
          out.add(child.category.category_id);
          stack.push(child.category.category_id);
        }
      }
    }
    return out;
  }

  /** The node of a code, or undefined when no such code exists. */
  codeNode(codeId: number): (CodesNode & { kind: 'code' }) | undefined {
    this.load();
    return this.index.codes.get(codeId);
  }

  /** The node of a category, or undefined when no such category exists. */
  categoryNode(categoryId: number): (CodesNode & { kind: 'category' }) | undefined {
    this.load();
    return this.index.categories.get(categoryId);
  }

  /** The active filter text, or undefined. */
  get filter(): string | undefined {
    return this.filterText;
  }

  /**
   * Narrows the tree to codes matching `text` (see the class comment); empty or undefined clears the
   * filter. Updates the view's description and the {@link CODES_FILTERED_CONTEXT} context key.
   */
  async setFilter(text: string | undefined): Promise<void> {
    const t = text?.trim() ? text.trim() : undefined;
    this.filterText = t;
    this.view.description = t === undefined ? undefined : `Filter: ${t}`;
    await vscode.commands.executeCommand('setContext', CODES_FILTERED_CONTEXT, t !== undefined);
    this.refresh();
  }

  /**
   * Shows a code in the tree: expands its categories, selects and focuses it. A filter that hides the
   * code is cleared first. Returns false (and shows nothing) when the code does not exist.
   */
  async reveal(codeId: number, opts: { focus?: boolean } = {}): Promise<boolean> {
    this.load();
    if (!this.index.codes.has(codeId)) return false;
    if (this.filterText !== undefined && !this.shown?.has(this.index.codes.get(codeId) as CodesNode)) await this.setFilter(undefined);
    this.load();
    const node = this.index.codes.get(codeId);
    if (!node) return false;
    await this.view.reveal(node, { select: true, focus: opts.focus ?? true, expand: true });
    return true;
  }

  /**
   * The rows the tree shows now (filter applied, every category expanded), depth-first, each as its path:
   * "Category / Sub / Code". For tests and logs.
   */
  rows(): string[] {
    const out: string[] = [];
    const visit = (parent: CodesNode | undefined, prefix: string) => {
      for (const n of this.getChildren(parent)) {
        const name = n.kind === 'category' ? n.category.name : n.code.name;
        out.push(prefix + name);
        if (n.kind === 'category') visit(n, `${prefix}${name} / `);
      }
    };
    visit(undefined, '');
    return out;
  }

  private load(): void {
    if (this.loaded) return;
    const repo = researcherRepo(this.wb);
    this.codes = repo ? repo.listCodes() : [];
    this.categories = repo ? repo.listCategories() : [];
    // new node objects: after a whole refresh VS Code's extension host forgets the elements it had, by object (see
    // reindex); update() then keeps these objects for the rows it names to VS Code
    this.index = buildIndex(this.codes, this.categories);
    this.shown = this.filterText === undefined ? undefined : matching(this.index, this.filterText);
    this.loaded = true;
  }

  /** {@link getChildren} without noting the call in a timed refresh's probe. */
  private getChildrenQuietly(node: CodesNode | undefined): CodesNode[] {
    const probe = this.probe;
    this.probe = undefined;
    try {
      return this.getChildren(node);
    } finally {
      this.probe = probe;
    }
  }

  getChildren(node?: CodesNode): CodesNode[] {
    if (this.probe) {
      this.probe.last = performance.now();
      this.probe.childCalls.push(this.probe.last);
      if (node === undefined) this.probe.rootAsked = true;
      else if (node.kind === 'category') this.probe.categoryChildren.add(node.category.category_id);
    }
    this.load();
    if (!this.wb.repo()) return [];
    if (node !== undefined && node.kind !== 'category') return [];
    const all = this.index.children.get(node === undefined ? null : node.category.category_id) ?? [];
    const shown = this.shown;
    return shown ? all.filter((n) => shown.has(n)) : all;
  }

  getParent(node: CodesNode): CodesNode | undefined {
    this.load();
    const parentId = node.kind === 'category' ? node.category.parent_id : node.code.category_id;
    return parentId === null ? undefined : this.index.categories.get(parentId);
  }

  /**
   * The row of a node. Synchronous once the code's colour icon exists (a refresh of 2,000 codes then
   * costs no promise per row); tooltips are built only when the researcher hovers ({@link resolveTreeItem}).
   */
  getTreeItem(node: CodesNode): vscode.TreeItem | Promise<vscode.TreeItem> {
    if (node.kind === 'code' && !this.iconUris.has(node.code.color)) {
      return this.icons.icon(node.code.color).then((uri) => {
        this.iconUris.set(node.code.color, uri);
        return this.getTreeItem(node);
      });
    }
    const item = this.treeItem(node);
    if (this.probe) {
      this.probe.last = performance.now();
      this.probe.rows++;
      if (node.kind === 'category') this.probe.categoryRows.add(node.category.category_id);
    }
    return item;
  }

  /** Fills in a row's tooltip when it is hovered: the name, counts and memo, and who made a code. */
  resolveTreeItem(item: vscode.TreeItem, node: CodesNode): vscode.TreeItem {
    item.tooltip = tooltipOf(node);
    return item;
  }

  private treeItem(node: CodesNode): vscode.TreeItem {
    if (node.kind === 'category') {
      const c = node.category;
      const item = new vscode.TreeItem(c.name, vscode.TreeItemCollapsibleState.Expanded);
      // under a filter the categories get other ids, so VS Code shows them expanded whatever the
      // researcher collapsed before; clearing the filter brings the remembered states back
      item.id = this.filterText === undefined ? `category:${c.category_id}` : `category:${c.category_id}:filtered`;
      item.contextValue = 'category';
      item.iconPath = new vscode.ThemeIcon('folder');
      item.description = countOf(c.code_count, 'code');
      return item;
    }
    const c = node.code;
    const item = new vscode.TreeItem(c.name, vscode.TreeItemCollapsibleState.None);
    item.id = `code:${c.code_id}`;
    const ai = madeByAgent(c.session_id, c.coder_role);
    item.contextValue = ai ? 'code.ai' : 'code';
    item.iconPath = this.iconUris.get(c.color);
    const count = c.segment_count + c.av_segment_count;
    item.description = `${count}${ai ? ' · ✦ AI' : ''}`;
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
    for (const s of this.subscriptions) s.dispose();
    this.view.dispose();
    this.changed.dispose();
  }
}

/** The Markdown tooltip of a row: a category's name, code count and memo; a code's name, passages, memo and maker. */
export function tooltipOf(node: CodesNode): vscode.MarkdownString {
  if (node.kind === 'category') {
    const c = node.category;
    const tip = new vscode.MarkdownString().appendMarkdown(`**${escapeMd(c.name)}** · ${countOf(c.code_count, 'code')}\n\n`);
    if (c.memo) tip.appendText(c.memo);
    else tip.appendMarkdown('*No memo yet: right-click, Edit Category Memo.*');
    return tip;
  }
  const c = node.code;
  const ai = madeByAgent(c.session_id, c.coder_role);
  const count = c.segment_count + c.av_segment_count;
  const tip = new vscode.MarkdownString(undefined, true);
  tip.appendMarkdown(`**${escapeMd(c.name)}** · ${countOf(count, 'segment')}\n\n`);
  if (c.memo) tip.appendText(c.memo).appendMarkdown('\n\n');
  tip.appendMarkdown(`*${ai ? `$(sparkle) made by an agent (session ${escapeMd(c.session_id ?? '')})` : `by ${escapeMd(c.owner)}`}*`);
  return tip;
}

/** Call times grouped into bursts (a gap over 2 ms starts a new one), as "calls@ms after start" joined by spaces. */
function bursts(times: number[], start: number): string {
  const out: string[] = [];
  let n = 0;
  let first = 0;
  let prev = -Infinity;
  for (const t of times) {
    if (t - prev > 2 && n > 0) {
      out.push(`${n}@${(first - start).toFixed(0)}`);
      n = 0;
    }
    if (n === 0) first = t;
    n++;
    prev = t;
  }
  if (n > 0) out.push(`${n}@${(first - start).toFixed(0)}`);
  return out.join(' ');
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Escapes Markdown special characters in user text shown in tooltips. */
export function escapeMd(text: string): string {
  return text.replace(/[\\`*_{}[\]()#+\-.!|<>]/g, (c) => `\\${c}`);
}
