import * as vscode from 'vscode';
import { wordsToMarkdown, type WordsSection } from '../../vcs/diffInWords';
import { initializeVersionControlTool, listSnapshotsTool, restoreSnapshotTool, viewDiffTool } from '../../tools/vcsTools';
import type { Workbench } from '../workbench';

/** A snapshot as the History view shows it (list_snapshots' items). */
export interface SnapshotItem {
  ref: string;
  short_ref: string;
  message: string;
  author: string;
  /** true when an agent made the change */
  by_agent?: boolean;
  date: string;
}

/** Raw diffs (read-only, language diff). */
const DIFF_SCHEME = 'marginalia-diff';
/** A snapshot's changes in words (read-only Markdown); its editor title offers Show Raw Diff. */
const WORDS_SCHEME = 'marginalia-history';

/**
 * The History view (`marginalia.history`): the project's snapshots in `.marginalia/history`, newest
 * first, titled in words and by who made them (the researcher's coder name, an agent's name), with Show
 * Changes (what changed since the snapshot before, in words: codes, categories, sources, passages with
 * their text; view_diff's `in_words`), Show Raw Diff one click away (inline, and in the title of the
 * changes tab) and Restore (destructive: it snapshots the current state first, so the restore can itself
 * be undone). Every action runs through the pipeline as the researcher.
 */
export class HistoryView implements vscode.TreeDataProvider<SnapshotItem>, vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<SnapshotItem | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  readonly view: vscode.TreeView<SnapshotItem>;
  private readonly diffs = new Map<string, string>();
  private readonly registration: vscode.Disposable;
  private readonly wordsRegistration: vscode.Disposable;
  /** the snapshot each words tab shows (by its URI path), for Show Raw Diff from that tab's title */
  private readonly shownIn = new Map<string, SnapshotItem>();
  private snapshots: SnapshotItem[] = [];
  private initialized = false;

  constructor(private readonly wb: Workbench) {
    this.view = vscode.window.createTreeView('marginalia.history', { treeDataProvider: this });
    this.registration = vscode.workspace.registerTextDocumentContentProvider(DIFF_SCHEME, this);
    this.wordsRegistration = vscode.workspace.registerTextDocumentContentProvider(WORDS_SCHEME, this);
  }

  /** The snapshots listed, newest first. */
  all(): readonly SnapshotItem[] {
    return this.snapshots;
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
    const agent = s.by_agent ?? s.author.startsWith('agent:');
    item.iconPath = new vscode.ThemeIcon(agent ? 'hubot' : 'git-commit');
    item.description = `${s.author} · ${localTime(s.date)}`;
    item.tooltip = new vscode.MarkdownString().appendText(
      `${s.message}\n\n${agent ? 'By the agent' : 'By'} ${s.author}, ${localTime(s.date)}\nSnapshot ${s.short_ref}`,
    );
    item.command = { command: 'marginalia.history.showChanges', title: 'Show Changes', arguments: [s] };
    return item;
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.diffs.get(`${uri.scheme}:${uri.path}`) ?? '';
  }

  /** Starts the project's history (initialize_version_control). */
  async initialize(): Promise<void> {
    const r = await this.wb.call(initializeVersionControlTool, {});
    if (r) void vscode.window.showInformationMessage('Version history started: every change is snapshotted in .marginalia/history.');
    await this.refresh();
  }

  /**
   * Opens what a snapshot changed since the one before, in words (a read-only Markdown tab: a heading per
   * kind of change, a line per code, category, source or passage with its text). Returns the tab's text, or
   * undefined for the first snapshot (nothing before it) and on failure (shown).
   */
  async showChanges(s: SnapshotItem): Promise<string | undefined> {
    const older = this.before(s);
    if (!older) return void vscode.window.showInformationMessage('This is the first snapshot: there is nothing before it to compare with.');
    const d = (await this.wb.call(viewDiffTool, { from_ref: older.ref, to_ref: s.ref })) as unknown as { in_words?: WordsSection[] } | undefined;
    if (!d) return undefined;
    const who = `${s.by_agent ? 'By the agent ' : 'By '}${s.author}, ${localTime(s.date)}`;
    const text = `# ${s.message.split('\n')[0]}\n\n${who}. Changes since "${older.message.split('\n')[0]}" (${localTime(older.date)}).\n\n${wordsToMarkdown(d.in_words ?? [])}\nThe raw diff of the project files: Show Raw Diff (the title bar of this tab).\n`;
    const path = `/${s.short_ref} ${safeTitle(s.message)}.md`;
    this.diffs.set(`${WORDS_SCHEME}:${path}`, text);
    this.shownIn.set(path, s);
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.from({ scheme: WORDS_SCHEME, path }));
    await vscode.languages.setTextDocumentLanguage(doc, 'markdown');
    await vscode.window.showTextDocument(doc, { preview: true });
    return text;
  }

  /**
   * Opens the raw `git diff` of a snapshot's project files against the one before (read-only, language
   * diff). Without `s`: the snapshot of the active changes tab. Returns the diff's text, or undefined.
   */
  async showRawDiff(s?: SnapshotItem): Promise<string | undefined> {
    const active = vscode.window.activeTextEditor?.document.uri;
    const snap = s ?? (active?.scheme === WORDS_SCHEME ? this.shownIn.get(active.path) : undefined);
    if (!snap) return void vscode.window.showInformationMessage('Choose a snapshot in the History view to see its raw diff.');
    const older = this.before(snap);
    if (!older) return void vscode.window.showInformationMessage('This is the first snapshot: there is nothing before it to compare with.');
    const d = await this.wb.call(viewDiffTool, { from_ref: older.ref, to_ref: snap.ref });
    if (!d) return undefined;
    const raw = (d as unknown as { raw_diff?: string; raw_diff_truncated?: boolean }).raw_diff ?? '';
    const cut = (d as unknown as { raw_diff_truncated?: boolean }).raw_diff_truncated ? '\n# (cut: the diff is longer)\n' : '';
    const text = `# ${snap.message.split('\n')[0]}\n# ${older.short_ref} -> ${snap.short_ref}\n\n${raw}${cut}`;
    const path = `/${snap.short_ref}.diff`;
    this.diffs.set(`${DIFF_SCHEME}:${path}`, text);
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.from({ scheme: DIFF_SCHEME, path }));
    await vscode.languages.setTextDocumentLanguage(doc, 'diff');
    await vscode.window.showTextDocument(doc, { preview: true });
    return text;
  }

  /** The snapshot listed before `s` (older), or undefined. */
  private before(s: SnapshotItem): SnapshotItem | undefined {
    const at = this.snapshots.findIndex((x) => x.ref === s.ref);
    return at < 0 ? undefined : this.snapshots[at + 1];
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
    this.wordsRegistration.dispose();
    this.changed.dispose();
  }
}

/** An ISO 8601 time as the researcher's clock shows it ("2026-11-26 10:42"). */
function localTime(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const two = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())} ${two(d.getHours())}:${two(d.getMinutes())}`;
}

/** A snapshot title usable in a tab's name: at most 60 characters, no path separators. */
function safeTitle(message: string): string {
  const t = (message.split('\n')[0] ?? '').replace(/[\\/:*?"<>|#%]/g, ' ').trim();
  return t.length > 60 ? `${t.slice(0, 59)}…` : t;
}
