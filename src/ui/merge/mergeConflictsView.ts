import { execFile } from 'node:child_process';
import * as vscode from 'vscode';
import { choicesFor, type StoredMergeConflict } from '../../domain/mergeConflicts';
import { codePointLength, sliceCp } from '../../core/text';
import { listMergeConflictsTool } from '../../tools/mergeConflictTools';
import { gitDirOf } from '../../vcs/historyRepo';
import { historyDirFor } from '../../vcs/snapshotter';
import type { Workbench } from '../workbench';
import { conflictInWords, nounOf, short } from './conflictWords';

/** A conflict as list_merge_conflicts returns it (the stored record plus the choices its kind takes). */
export type ConflictItem = StoredMergeConflict & { choices?: string[] };

/** Read-only virtual documents of a text conflict's two versions (vscode.diff). */
export const CONFLICT_SCHEME = 'marginalia-conflict';

/** Tools after whose success the list is asked again (sync_project's merge stores conflicts without events). */
const CHANGING = new Set(['sync_project', 'resolve_merge_conflict', 'restore_snapshot']);

/**
 * The Merge Conflicts view (`marginalia.mergeConflicts`, issue 16 item 4): one row per open conflict a merge of
 * two histories left (sync_project), in words ("'Trust' renamed on both sides: 'Trust' ← you: 'Mutual trust',
 * Ana: 'Trust in neighbours'"; the other side is named by the author of the remote snapshot merged), with Keep
 * Mine, Keep Theirs, Keep Both (memos, passages) and Edit… (src/ui/merge/mergeCommands.ts). A transcript passage
 * edited on both sides also offers Compare: VS Code's diff editor between the source as the project holds it and
 * the source with the other side's passage (read-only `marginalia-conflict:` documents); its tooltip lists the
 * codings in the passage's paragraph and whose they are. The list is read again after a sync, a resolution (from any
 * session: an agent's waits for approval) and a project change.
 */
export class MergeConflictsView implements vscode.TreeDataProvider<ConflictItem>, vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<ConflictItem | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly docChanged = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.docChanged.event;
  readonly view: vscode.TreeView<ConflictItem>;
  private readonly subscriptions: vscode.Disposable[] = [];
  private conflicts: ConflictItem[] = [];
  /** author of each merged remote snapshot (merge_ref), read from the history's git */
  private readonly authors = new Map<string, string>();
  private readonly documents = new Map<string, string>();

  constructor(private readonly wb: Workbench) {
    this.view = vscode.window.createTreeView('marginalia.mergeConflicts', { treeDataProvider: this });
    this.subscriptions.push(
      this.view,
      vscode.workspace.registerTextDocumentContentProvider(CONFLICT_SCHEME, this),
      wb.controller.onDidChangeProject(() => void this.refresh()),
      wb.pipeline.onDidCall((call) => {
        if (CHANGING.has(call.tool) && call.status === 'ok') void this.refresh();
      }),
    );
    void this.refresh();
  }

  /** The open conflicts listed. */
  all(): readonly ConflictItem[] {
    return this.conflicts;
  }

  /** The row's text of a conflict (as the tree shows it). */
  label(c: ConflictItem): string {
    return conflictInWords(c, {
      them: c.merge_ref ? this.authors.get(c.merge_ref) : undefined,
      placeName: (table, id) => this.placeName(table, id),
    });
  }

  /** Reads the open conflicts again (quietly: a project without merges has none) and redraws. */
  async refresh(): Promise<void> {
    if (!this.wb.repo()) this.conflicts = [];
    else {
      const r = await this.wb.call(listMergeConflictsTool, { status: 'open' }, { quiet: true });
      this.conflicts = (r?.conflicts as ConflictItem[] | undefined) ?? [];
      await Promise.all(
        [...new Set(this.conflicts.map((c) => c.merge_ref).filter((x): x is string => !!x && !this.authors.has(x)))].map((ref) => this.readAuthor(ref)),
      );
    }
    this.view.badge =
      this.conflicts.length > 0 ? { value: this.conflicts.length, tooltip: `${this.conflicts.length} merge conflict(s) to resolve` } : undefined;
    await vscode.commands.executeCommand('setContext', 'marginalia.hasMergeConflicts', this.conflicts.length > 0);
    this.changed.fire(undefined);
  }

  getChildren(node?: ConflictItem): ConflictItem[] {
    return node ? [] : this.conflicts;
  }

  getTreeItem(c: ConflictItem): vscode.TreeItem {
    const item = new vscode.TreeItem(this.label(c));
    item.id = `conflict:${c.conflict_id}`;
    const choices = c.choices ?? choicesFor(c.kind);
    const text = c.kind === 'source_text_overlap';
    item.contextValue = ['mergeConflict', ...choices, ...(text ? ['text'] : [])].join('-');
    item.iconPath = new vscode.ThemeIcon(text ? 'diff' : c.kind.includes('deleted') ? 'trash' : 'git-merge');
    item.description = `${nounOf(c.entity.table)} · ${c.kind.replace(/_/g, ' ')}`;
    let tip = `${this.label(c)}\n\nThe project holds yours until you resolve it. Choices: ${choices.map(choiceTitle).join(', ')}.`;
    if (text) {
      const codings = this.codingsOn(c);
      item.description = codings.length > 0 ? `${codings.length} coding(s) in its paragraph` : 'no codings in its paragraph';
      tip += `\n\nCodings in the passage's paragraph now: ${codings.length > 0 ? codings.join('; ') : 'none'}.\nCompare opens both versions side by side.`;
      item.command = { command: 'marginalia.merge.compare', title: 'Compare', arguments: [c] };
    }
    item.tooltip = tip;
    return item;
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.documents.get(uri.path) ?? '';
  }

  /**
   * The two versions of a text conflict's source: the text as the project holds it (yours) and the same text with
   * the other side's passage in place of yours; only the passages when the text changed since the merge.
   */
  versions(c: ConflictItem): { ours: string; theirs: string } {
    const ours = c.ours as { text: string; start_pos: number; end_pos: number };
    const theirs = c.theirs as { text: string };
    const id = c.entity.local_id;
    const current = id === null ? null : (this.wb.repo()?.getSourceText(id) ?? null);
    if (current === null || ours.end_pos > codePointLength(current) || sliceCp(current, ours.start_pos, ours.end_pos) !== ours.text)
      return { ours: ours.text, theirs: theirs.text };
    return { ours: current, theirs: sliceCp(current, 0, ours.start_pos) + theirs.text + sliceCp(current, ours.end_pos, codePointLength(current)) };
  }

  /** Opens VS Code's diff editor between a text conflict's two versions (read-only); returns the two URIs. */
  async compare(c: ConflictItem): Promise<{ left: vscode.Uri; right: vscode.Uri } | undefined> {
    if (c.kind !== 'source_text_overlap') return undefined;
    const v = this.versions(c);
    const them = (c.merge_ref && this.authors.get(c.merge_ref)) || 'theirs';
    const base = `/${c.conflict_id}`;
    const left = vscode.Uri.from({ scheme: CONFLICT_SCHEME, path: `${base}/yours/${safe(c.entity.name)}.txt` });
    const right = vscode.Uri.from({ scheme: CONFLICT_SCHEME, path: `${base}/${safe(them)}/${safe(c.entity.name)}.txt` });
    this.documents.set(left.path, v.ours);
    this.documents.set(right.path, v.theirs);
    this.docChanged.fire(left);
    this.docChanged.fire(right);
    await vscode.commands.executeCommand('vscode.diff', left, right, `${c.entity.name}: yours ↔ ${them}`, { preview: true });
    return { left, right };
  }

  /**
   * The codings in the paragraph (line) of a text conflict's passage in the project, as "'Code' (coder)": a coding
   * across the passage may have been cut back to the words both sides agree on, so its neighbours are listed too.
   */
  private codingsOn(c: ConflictItem): string[] {
    const repo = this.wb.repo();
    const ours = c.ours as { start_pos?: number; end_pos?: number } | null;
    if (!repo || c.entity.local_id === null || typeof ours?.start_pos !== 'number' || typeof ours.end_pos !== 'number') return [];
    const text = repo.getSourceText(c.entity.local_id) ?? '';
    const cps = [...text];
    let s = Math.min(ours.start_pos, cps.length);
    let e = Math.min(ours.end_pos, cps.length);
    while (s > 0 && cps[s - 1] !== '\n') s--;
    while (e < cps.length && cps[e] !== '\n') e++;
    return repo
      .listSegmentsForSource(c.entity.local_id)
      .filter((g) => g.start_pos < Math.max(e, s + 1) && g.end_pos > s)
      .map((g) => `'${short(repo.getCode(g.code_id)?.name ?? `code ${g.code_id}`, 40)}' (${g.owner})`);
  }

  private placeName(table: string, id: number): string | undefined {
    const repo = this.wb.repo();
    if (!repo) return undefined;
    if (table === 'categories') return repo.getCategory(id)?.name;
    if (table === 'folders') return repo.getFolder(id)?.name;
    if (table === 'codes') return repo.getCode(id)?.name;
    return undefined;
  }

  private readAuthor(ref: string): Promise<void> {
    const file = this.wb.controller.current()?.path;
    if (!file || !/^[0-9a-f]{7,64}$/i.test(ref)) return Promise.resolve();
    return new Promise((resolve) => {
      execFile('git', ['--git-dir', gitDirOf(historyDirFor(file)), 'log', '-1', '--format=%an', ref], { timeout: 5000 }, (err, out) => {
        const name = String(out ?? '').trim();
        if (!err && name) this.authors.set(ref, name);
        resolve();
      });
    });
  }

  dispose(): void {
    for (const s of this.subscriptions) s.dispose();
    this.changed.dispose();
    this.docChanged.dispose();
  }
}

/** A choice as the view's actions name it. */
export function choiceTitle(choice: string): string {
  return choice === 'ours' ? 'Keep Mine' : choice === 'theirs' ? 'Keep Theirs' : choice === 'both' ? 'Keep Both' : 'Edit…';
}

function safe(s: string): string {
  return (
    s
      .replace(/[\\/:*?"<>|#%]/g, ' ')
      .trim()
      .slice(0, 60) || 'source'
  );
}
