import * as vscode from 'vscode';
import { initializeVersionControlTool, listSnapshotsTool, restoreSnapshotTool, viewDiffTool } from '../../tools/vcsTools';
import type { Workbench } from '../workbench';

/** A snapshot as the History view shows it (list_snapshots' items). */
export interface SnapshotItem {
  ref: string;
  short_ref: string;
  message: string;
  author: string;
  date: string;
}

const DIFF_SCHEME = 'marginalia-diff';

/**
 * The History view (`marginalia.history`): the project's snapshots in `.marginalia/history`, newest
 * first, with Show Changes (the summary and raw diff against the snapshot before it) and Restore
 * (destructive: it snapshots the current state first, so the restore can itself be undone). Every action
 * runs through the pipeline as the researcher.
 */
export class HistoryView implements vscode.TreeDataProvider<SnapshotItem>, vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<SnapshotItem | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  readonly view: vscode.TreeView<SnapshotItem>;
  private readonly diffs = new Map<string, string>();
  private readonly registration: vscode.Disposable;
  private snapshots: SnapshotItem[] = [];
  private initialized = false;

  constructor(private readonly wb: Workbench) {
    this.view = vscode.window.createTreeView('marginalia.history', { treeDataProvider: this });
    this.registration = vscode.workspace.registerTextDocumentContentProvider(DIFF_SCHEME, this);
  }

  /** Reloads the snapshot list (quietly: a project without history shows the welcome text). */
  async refresh(): Promise<void> {
    if (!this.wb.repo()) {
      this.snapshots = [];
      this.initialized = false;
    } else {
      const r = await this.wb.call(listSnapshotsTool, { limit: 100 }, { quiet: true });
      this.initialized = r !== undefined;
      this.snapshots = (r?.snapshots as SnapshotItem[] | undefined) ?? [];
    }
    await vscode.commands.executeCommand('setContext', 'marginalia.historyInitialized', this.initialized);
    this.changed.fire(undefined);
  }

  getChildren(node?: SnapshotItem): SnapshotItem[] {
    return node ? [] : this.snapshots;
  }

  getTreeItem(s: SnapshotItem): vscode.TreeItem {
    const item = new vscode.TreeItem(s.message.split('\n')[0] ?? s.short_ref);
    item.id = `snapshot:${s.ref}`;
    item.contextValue = 'snapshot';
    item.iconPath = new vscode.ThemeIcon(s.author.startsWith('agent:') ? 'hubot' : 'git-commit');
    item.description = `${s.short_ref} · ${s.date.slice(0, 16).replace('T', ' ')}`;
    item.tooltip = new vscode.MarkdownString().appendText(`${s.message}\n\n${s.author} · ${s.date}\n${s.ref}`);
    item.command = { command: 'marginalia.history.showChanges', title: 'Show Changes', arguments: [s] };
    return item;
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.diffs.get(uri.path) ?? '';
  }

  /** Starts the project's history (initialize_version_control). */
  async initialize(): Promise<void> {
    const r = await this.wb.call(initializeVersionControlTool, {});
    if (r) void vscode.window.showInformationMessage('Version history started: every change is snapshotted in .marginalia/history.');
    await this.refresh();
  }

  /** Opens what a snapshot changed: the summary of view_diff and its raw diff, read-only. */
  async showChanges(s: SnapshotItem): Promise<void> {
    const at = this.snapshots.findIndex((x) => x.ref === s.ref);
    const older = this.snapshots[at + 1];
    if (!older) return void vscode.window.showInformationMessage('This is the first snapshot: there is nothing before it to compare with.');
    const d = await this.wb.call(viewDiffTool, { from_ref: older.ref, to_ref: s.ref });
    if (!d) return;
    const { raw_diff: raw, ...summary } = d as unknown as Record<string, unknown> & { raw_diff?: string };
    const text = `# ${s.message}\n# ${older.short_ref} -> ${s.short_ref}\n\n${JSON.stringify(summary, null, 2)}\n\n${raw ?? ''}`;
    const path = `/${s.short_ref}.diff`;
    this.diffs.set(path, text);
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.from({ scheme: DIFF_SCHEME, path }));
    await vscode.languages.setTextDocumentLanguage(doc, 'diff');
    await vscode.window.showTextDocument(doc, { preview: true });
  }

  /** Restores a snapshot after a modal confirmation. */
  async restore(s: SnapshotItem): Promise<boolean> {
    const ok = await vscode.window.showWarningMessage(
      `Restore the project to "${s.message.split('\n')[0]}" (${s.short_ref})? The current state is snapshotted first, so you can restore it again.`,
      { modal: true },
      'Restore',
    );
    if (ok !== 'Restore') return false;
    const r = await this.wb.call(restoreSnapshotTool, { ref: s.ref });
    await this.refresh();
    return r !== undefined;
  }

  dispose(): void {
    this.view.dispose();
    this.registration.dispose();
    this.changed.dispose();
  }
}
