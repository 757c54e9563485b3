import * as vscode from 'vscode';
import type { EventRecord } from '../../domain/events';
import type { Logger } from '../../core/log';
import { causedByAgent } from '../workbench';
import { KIND_WORDS, MEMO_SCHEME, memoKey, parseMemoUri, type MemoAccess, type MemoTarget } from './memoTargets';

/** The URI scheme of the read-only "theirs" side of a memo comparison. */
export const MEMO_THEIRS_SCHEME = 'marginalia-memo-theirs';

/** What the researcher chose when a memo changed elsewhere since their tab read it. */
export type MemoConflictChoice = 'compare' | 'overwrite' | 'keepTheirs';

/** A save that would overwrite a change made elsewhere. */
export interface MemoConflict {
  uri: vscode.Uri;
  target: MemoTarget;
  /** e.g. `code "Food security"` */
  what: string;
  /** the stored memo now */
  theirs: string;
  /** the tab's text being saved */
  yours: string;
  /** who changed it (a client name, or "someone else" when unknown) */
  changedBy: string;
}

/** Asks the researcher what to do with a conflict; undefined: cancel the save. */
export type MemoConflictResolver = (c: MemoConflict) => Promise<MemoConflictChoice | undefined>;

interface Tracked {
  /** the memo the tab shows */
  target: MemoTarget;
  /** the memo text the tab last read or saved */
  baseline: string;
  /** the tab's modification time (milliseconds): raised when the stored memo changed and the tab may reload */
  mtime: number;
  /** who changed it last while tracked */
  changedBy?: string;
  /** the stored text the researcher was last told about (so one change gives one message) */
  announced?: string;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

/**
 * Memos as Markdown documents (issue 13, item 6): a FileSystemProvider for `marginalia-memo:` tabs
 * (memoTargets.ts gives the URI shape), so Ctrl+S saves a memo through the pipeline as the researcher.
 *
 * A change made elsewhere while a tab is open (an agent's memo update, an undo) is shown, never silently
 * overwritten: after every batch of events, each open memo whose stored text differs from what its tab read
 * is either reloaded (tab not dirty: its modification time is raised and onDidChangeFile fires, so VS Code
 * reads it again) or, when the tab has unsaved edits, announced in a message with "Compare". Saving a tab
 * whose memo changed since the tab read it asks (see {@link resolveConflict}): "Compare" opens a diff of theirs
 * and yours and does not save (saving again then stores yours), "Overwrite" stores yours, "Keep theirs" stores
 * nothing and reloads the tab with theirs; no answer cancels the save (the tab stays dirty).
 *
 * Errors: reading a memo whose owner is gone (or with no project open) is FileNotFound; a failed save rejects
 * with the tool's message (or the briefing's missing-heading message), so VS Code reports it and keeps the tab dirty.
 */
export class MemoFileSystem implements vscode.FileSystemProvider, vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<vscode.FileChangeEvent[]>();
  readonly onDidChangeFile = this.changed.event;
  private readonly tracked = new Map<string, Tracked>();
  /** memo keys being saved right now (their own events are not "changes made elsewhere") */
  private readonly saving = new Set<string>();
  /** snapshots of "theirs" for open comparisons, by URI */
  private readonly theirs = new Map<string, string>();
  private readonly theirsChanged = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.theirsChanged.event;
  private readonly disposables: vscode.Disposable[] = [];
  private compareCount = 0;

  /**
   * Decides a save conflict. The default asks with a modal message ("Compare", "Overwrite", "Keep theirs");
   * tests and other extensions may replace it.
   */
  resolveConflict: MemoConflictResolver = async (c) => {
    const pick = await vscode.window.showWarningMessage(
      `The memo of ${c.what} was changed by ${c.changedBy} since you opened it. Save yours over theirs?`,
      { modal: true, detail: 'Compare shows both versions side by side; your text stays in the tab until you save again.' },
      'Compare',
      'Overwrite',
      'Keep theirs',
    );
    return pick === 'Compare' ? 'compare' : pick === 'Overwrite' ? 'overwrite' : pick === 'Keep theirs' ? 'keepTheirs' : undefined;
  };

  constructor(
    private readonly access: MemoAccess,
    private readonly logger: Logger,
    onEvents: (listener: (events: readonly EventRecord[]) => void) => vscode.Disposable,
  ) {
    this.disposables.push(
      vscode.workspace.registerFileSystemProvider(MEMO_SCHEME, this, { isCaseSensitive: true }),
      vscode.workspace.registerTextDocumentContentProvider(MEMO_THEIRS_SCHEME, this),
      onEvents((events) => this.onEvents(events)),
      vscode.workspace.onDidCloseTextDocument((doc) => {
        if (doc.uri.scheme === MEMO_THEIRS_SCHEME) this.theirs.delete(doc.uri.toString());
        const key = memoKey(doc.uri);
        if (key !== undefined && !this.openDocument(key)) this.tracked.delete(key);
      }),
    );
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
    this.changed.dispose();
    this.theirsChanged.dispose();
  }

  /** `code "Food security"`, `the project briefing`: the memo's owner in words. */
  describe(t: MemoTarget): string {
    if (t.kind === 'project') return 'the project briefing';
    const name = this.access.label(t);
    return name === undefined ? `${KIND_WORDS[t.kind]} ${t.id}` : `${KIND_WORDS[t.kind]} "${name}"`;
  }

  /** The memo of a tab URI and its key; FileNotFound when it is not a memo's. */
  private targetOf(uri: vscode.Uri): { t: MemoTarget; key: string } {
    const t = parseMemoUri(uri);
    const key = memoKey(uri);
    if (!t || key === undefined) throw vscode.FileSystemError.FileNotFound(uri);
    return { t, key };
  }

  /** The stored memo text; FileNotFound when its owner is gone or the tab belongs to another project than the open one. */
  private current(uri: vscode.Uri, t: MemoTarget): string {
    if (uri.authority !== this.access.projectId()) throw vscode.FileSystemError.FileNotFound(uri);
    const text = this.access.read(t);
    if (text === undefined) throw vscode.FileSystemError.FileNotFound(uri);
    return text;
  }

  private openDocument(key: string): vscode.TextDocument | undefined {
    return vscode.workspace.textDocuments.find((d) => !d.isClosed && memoKey(d.uri) === key);
  }

  // --- FileSystemProvider ---------------------------------------------------------------------------

  watch(): vscode.Disposable {
    // changes are reported for every tracked memo (see onEvents)
    return new vscode.Disposable(() => undefined);
  }

  stat(uri: vscode.Uri): vscode.FileStat {
    const { t, key } = this.targetOf(uri);
    const text = this.current(uri, t);
    const tr = this.tracked.get(key);
    return { type: vscode.FileType.File, ctime: 0, mtime: tr?.mtime ?? 1, size: encoder.encode(text).byteLength };
  }

  readFile(uri: vscode.Uri): Uint8Array {
    const { t, key } = this.targetOf(uri);
    const text = this.current(uri, t);
    const tr = this.tracked.get(key);
    if (tr) {
      tr.baseline = text;
      tr.announced = undefined;
    } else this.tracked.set(key, { target: t, baseline: text, mtime: 1 });
    return encoder.encode(text);
  }

  async writeFile(uri: vscode.Uri, content: Uint8Array): Promise<void> {
    const { t, key } = this.targetOf(uri);
    let yours: string;
    try {
      yours = decoder.decode(content);
    } catch {
      throw new Error('A memo must be UTF-8 text.');
    }
    const theirs = this.current(uri, t);
    const tr = this.tracked.get(key) ?? { target: t, baseline: theirs, mtime: 1 };
    this.tracked.set(key, tr);
    if (theirs !== tr.baseline && theirs !== yours) {
      const choice = await this.resolveConflict({ uri, target: t, what: this.describe(t), theirs, yours, changedBy: tr.changedBy ?? 'someone else' });
      if (choice === 'compare') {
        tr.baseline = theirs;
        tr.announced = theirs;
        await this.compare(uri, t, theirs);
        throw new Error(`Not saved: the memo of ${this.describe(t)} changed elsewhere. Compare the two versions, then save again to store yours.`);
      }
      if (choice === 'keepTheirs') {
        tr.baseline = theirs;
        // once VS Code has taken the save as done, tell it the file changed, so the tab reloads theirs
        this.afterSaved(uri, tr);
        return;
      }
      if (choice !== 'overwrite') throw new Error(`Not saved: the memo of ${this.describe(t)} changed elsewhere since you opened it.`);
    }
    this.saving.add(key);
    try {
      await this.access.write(t, yours);
    } finally {
      this.saving.delete(key);
    }
    // what the tab now shows is what is stored (a briefing is stored as parsed; its next read renders it)
    tr.baseline = this.current(uri, t);
    tr.changedBy = undefined;
    tr.announced = undefined;
    if (tr.baseline !== yours) this.afterSaved(uri, tr);
  }

  readDirectory(): [string, vscode.FileType][] {
    return [];
  }
  createDirectory(uri: vscode.Uri): void {
    throw vscode.FileSystemError.NoPermissions(uri);
  }
  delete(uri: vscode.Uri): void {
    throw vscode.FileSystemError.NoPermissions(uri);
  }
  rename(uri: vscode.Uri): void {
    throw vscode.FileSystemError.NoPermissions(uri);
  }

  // --- "theirs" of a comparison ---------------------------------------------------------------------

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.theirs.get(uri.toString()) ?? '';
  }

  /** Opens a diff: the stored memo (theirs, read-only) on the left, the tab (yours) on the right. */
  async compare(uri: vscode.Uri, t: MemoTarget, theirs: string): Promise<void> {
    const left = vscode.Uri.from({ scheme: MEMO_THEIRS_SCHEME, path: uri.path, query: `${uri.query}&compare=${++this.compareCount}` });
    this.theirs.set(left.toString(), theirs);
    await vscode.commands.executeCommand('vscode.diff', left, uri, `Memo of ${this.describe(t)}: theirs ↔ yours`);
  }

  // --- changes made elsewhere -----------------------------------------------------------------------

  /**
   * Reports a change of `uri` once VS Code has finished the save in progress (a change reported while the
   * tab is still being saved is ignored by VS Code), or after two seconds at the latest.
   */
  private afterSaved(uri: vscode.Uri, tr: Tracked): void {
    const key = uri.toString();
    let done = false;
    const fire = () => {
      if (done) return;
      done = true;
      saved.dispose();
      clearTimeout(timer);
      // the save's own bookkeeping (stat after write) runs right after the event; report after it
      setTimeout(() => this.fireChanged(uri, tr), 50);
    };
    const saved = vscode.workspace.onDidSaveTextDocument((d) => {
      if (d.uri.toString() === key) fire();
    });
    const timer = setTimeout(fire, 2000);
  }

  /**
   * After a project was opened: asks VS Code to read again every clean memo tab of it (tabs restored after a
   * reload could not be read before the project was open).
   */
  reloadOpenTabs(): void {
    const project = this.access.projectId();
    for (const doc of vscode.workspace.textDocuments) {
      const key = memoKey(doc.uri);
      if (key === undefined || doc.isDirty || doc.uri.authority !== project) continue;
      const tr = this.tracked.get(key);
      if (tr) this.fireChanged(doc.uri, tr);
      else this.changed.fire([{ type: vscode.FileChangeType.Changed, uri: doc.uri }]);
    }
  }

  private fireChanged(uri: vscode.Uri, tr: Tracked): void {
    tr.mtime = Math.max(tr.mtime + 1, Date.now());
    this.changed.fire([{ type: vscode.FileChangeType.Changed, uri }]);
  }

  private onEvents(events: readonly EventRecord[]): void {
    if (this.tracked.size === 0) return;
    const by = [...events].reverse().find((e) => causedByAgent(e.caused_by))?.caused_by;
    for (const [key, tr] of this.tracked) {
      if (this.saving.has(key)) continue;
      const t = tr.target;
      const doc = this.openDocument(key);
      if (!doc) {
        this.tracked.delete(key);
        continue;
      }
      if (doc.uri.authority !== this.access.projectId()) continue; // a tab of a project no longer open
      const now = this.access.read(t);
      if (now === undefined || now === tr.baseline) continue;
      tr.changedBy = by ? `${by.user || by.session_id}` : 'you, elsewhere';
      if (!doc.isDirty) {
        this.fireChanged(doc.uri, tr);
      } else if (tr.announced !== now) {
        tr.announced = now;
        const what = this.describe(t);
        void vscode.window
          .showWarningMessage(
            `${tr.changedBy} changed the memo of ${what} while you are editing it. Your tab keeps your text; saving asks which to keep.`,
            'Compare',
          )
          .then((pick) => (pick === 'Compare' ? this.compare(doc.uri, t, this.access.read(t) ?? '') : undefined))
          .then(undefined, (e: unknown) => this.logger.warn(`memo comparison failed: ${(e as Error).message}`));
      }
    }
  }
}
