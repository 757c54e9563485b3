import * as vscode from 'vscode';
import type { EventRecord } from '../../domain/events';
import type { Segment } from '../../domain/model';
import type { Workbench } from '../workbench';
import { memoUri, type MemoAccess, type MemoKind, type MemoTarget } from './memoTargets';
import { oneLineExcerpt } from '../../core/text';

/** The groups of the Memos view, in order. */
export type MemoGroup = 'project' | 'codes' | 'categories' | 'sources' | 'cases' | 'passages';

const GROUPS: readonly { group: MemoGroup; label: string; icon: string }[] = [
  { group: 'project', label: 'Project', icon: 'book' },
  { group: 'codes', label: 'Codes', icon: 'symbol-constant' },
  { group: 'categories', label: 'Categories', icon: 'folder' },
  { group: 'sources', label: 'Sources', icon: 'file-text' },
  { group: 'cases', label: 'Cases', icon: 'person' },
  { group: 'passages', label: 'Coded passages', icon: 'quote' },
];

/** One memo as the view lists it: what it belongs to (`label`), its owner, and the memo's first line. */
export interface MemoEntry {
  target: MemoTarget;
  /** the owner in words: a code, category, source or case name; "<code> in <source>" for a passage */
  label: string;
  /** the memo's text ('' for an empty briefing) */
  memo: string;
  /** a coded passage's text, shortened (passages only) */
  excerpt?: string;
}

/** A node of the Memos view: a group, or one memo. */
export type MemosNode = { kind: 'group'; group: MemoGroup; label: string; icon: string; entries: MemoEntry[] } | { kind: 'memo'; entry: MemoEntry };

/** `text` on one line, at most `max` code points (an ellipsis marks a cut). */
export function oneLine(text: string, max: number): string {
  return oneLineExcerpt(text, max);
}

/**
 * The Memos view (`marginalia.memos`): every memo of the project with what it belongs to, grouped: Project
 * (the briefing, always listed), Codes, Categories, Sources, Cases, Coded passages (with a short excerpt of
 * the passage). Only owners with a non-empty memo are listed; empty groups are left out. Clicking a memo
 * opens its tab (`marginalia.memos.open`). Refreshes after every batch of events that may change a memo.
 */
export class MemosTreeProvider implements vscode.TreeDataProvider<MemosNode>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<MemosNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  readonly view: vscode.TreeView<MemosNode>;
  private readonly disposables: vscode.Disposable[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly wb: Workbench,
    private readonly access: MemoAccess,
    onEvents: (listener: (events: readonly EventRecord[]) => void) => vscode.Disposable,
  ) {
    this.view = vscode.window.createTreeView('marginalia.memos', { treeDataProvider: this, showCollapseAll: true });
    this.disposables.push(
      this.view,
      onEvents((events) => {
        if (events.some((e) => !e.event_type.startsWith('session.') && !e.event_type.startsWith('approval.'))) this.refreshSoon();
      }),
      wb.controller.onDidChangeProject(() => this.refresh()),
    );
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    for (const d of this.disposables) d.dispose();
    this.changed.dispose();
  }

  /** Redraws the whole view (its children are read from the project again). */
  refresh(): void {
    this.changed.fire(undefined);
  }

  private refreshSoon(): void {
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      this.refresh();
    }, 50);
  }

  /** Every memo of the open project by group (the briefing always; the rest only when non-empty), names sorted. */
  entries(): Map<MemoGroup, MemoEntry[]> {
    const out = new Map<MemoGroup, MemoEntry[]>();
    const repo = this.wb.repo();
    if (!repo) return out;
    const byName = (a: MemoEntry, b: MemoEntry) => a.label.localeCompare(b.label, undefined, { sensitivity: 'base' }) || a.target.id - b.target.id;
    const frame = this.access.frame();
    const briefing = [frame.description, ...frame.research_questions, frame.methodology].filter((x) => x.trim() !== '').join(' · ');
    out.set('project', [{ target: { kind: 'project', id: 0 }, label: 'Project briefing', memo: briefing }]);
    const add = (group: MemoGroup, kind: MemoKind, items: { id: number; name: string; memo: string | null }[]) => {
      const list = items.filter((i) => i.memo !== null && i.memo.trim() !== '').map((i) => ({ target: { kind, id: i.id }, label: i.name, memo: i.memo ?? '' }));
      if (list.length > 0) out.set(group, list.sort(byName));
    };
    add(
      'codes',
      'code',
      repo.listCodes().map((c) => ({ id: c.code_id, name: c.name, memo: c.memo })),
    );
    add(
      'categories',
      'category',
      repo.listCategories().map((c) => ({ id: c.category_id, name: c.name, memo: c.memo })),
    );
    const sources = repo.listSources();
    add(
      'sources',
      'source',
      sources.map((s) => ({ id: s.source_id, name: s.name, memo: s.memo })),
    );
    add(
      'cases',
      'case',
      repo.listCases().map((c) => ({ id: c.case_id, name: c.name, memo: c.memo })),
    );
    const codeNames = new Map(repo.listCodes().map((c) => [c.code_id, c.name]));
    const passages: MemoEntry[] = [];
    for (const s of sources) {
      if (s.segment_count === 0) continue;
      for (const seg of repo.listSegmentsForSource(s.source_id) as Segment[]) {
        if (seg.memo === null || seg.memo.trim() === '') continue;
        passages.push({
          target: { kind: 'segment', id: seg.segment_id },
          label: `${codeNames.get(seg.code_id) ?? 'a code'} in ${s.name}`,
          memo: seg.memo,
          excerpt: oneLine(seg.text, 60),
        });
      }
    }
    if (passages.length > 0) out.set('passages', passages.sort(byName));
    return out;
  }

  getChildren(node?: MemosNode): MemosNode[] {
    if (node?.kind === 'memo') return [];
    if (node?.kind === 'group') return node.entries.map((entry) => ({ kind: 'memo', entry }));
    const entries = this.entries();
    return GROUPS.filter((g) => entries.has(g.group)).map((g) => ({ kind: 'group', ...g, entries: entries.get(g.group) ?? [] }));
  }

  getTreeItem(node: MemosNode): vscode.TreeItem {
    if (node.kind === 'group') {
      const item = new vscode.TreeItem(node.label, vscode.TreeItemCollapsibleState.Expanded);
      item.id = `group:${node.group}`;
      item.iconPath = new vscode.ThemeIcon(node.icon);
      item.description = node.group === 'project' ? undefined : String(node.entries.length);
      item.contextValue = 'memoGroup';
      return item;
    }
    const e = node.entry;
    const item = new vscode.TreeItem(e.label, vscode.TreeItemCollapsibleState.None);
    item.id = `memo:${e.target.kind}/${e.target.id}`;
    item.resourceUri = memoUri(e.target, e.label, this.access.projectId());
    item.iconPath = new vscode.ThemeIcon(e.target.kind === 'project' ? 'book' : 'note');
    item.description = e.excerpt !== undefined ? `“${e.excerpt}”` : e.memo.trim() === '' ? '(empty: click to write)' : oneLine(e.memo, 80);
    const tip = new vscode.MarkdownString();
    if (e.excerpt !== undefined) tip.appendMarkdown(`> ${e.excerpt.replace(/[\\`*_{}[\]()#+\-.!|<>]/g, '\\$&')}\n\n`);
    tip.appendText(oneLine(e.memo, 600));
    item.tooltip = tip;
    item.contextValue = `memo.${e.target.kind}`;
    item.command = { command: 'marginalia.memos.open', title: 'Open Memo', arguments: [e.target] };
    return item;
  }
}
