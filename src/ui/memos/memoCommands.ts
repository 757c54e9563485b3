/**
 * Memos as documents (issue 13, item 6), wired for the extension: the `marginalia-memo:` file system, the
 * Memos view, and the commands that open a memo tab:
 * - `marginalia.memos.open (target?)`: the memo of a code, category, source or case tree item, a Memos view
 *   item, or a `{kind, id}` target; without one, a quick pick over every owner.
 * - `marginalia.memos.openAtCursor (segmentId?)`: the memo of the coded passage under the cursor (a quick pick
 *   when several overlap there; `segmentId` skips it).
 * - `marginalia.memos.openBriefing`: the project briefing's research frame.
 * Every command resolves with the memo tab's editor, or undefined when there was nothing to open.
 */
import * as vscode from 'vscode';
import type { ProjectInfo } from '../../agent/contextBuilder';
import type { Logger } from '../../core/log';
import { OffsetMap } from '../../core/offsets';
import type { EventRecord } from '../../domain/events';
import type { SourceDocuments } from '../documents/sourceDocuments';
import type { Workbench } from '../workbench';
import { MemoFileSystem } from './memoFileSystem';
import { MemoAccess, memoUri, type MemoKind, type MemoTarget } from './memoTargets';
import { MemosTreeProvider, oneLine } from './memosTreeProvider';

/** What {@link createMemos} needs. */
export interface MemosDeps {
  wb: Workbench;
  docs: SourceDocuments;
  logger: Logger;
  /** the pipeline's event subscription (ToolPipeline.onEvents) */
  onEvents: (listener: (events: readonly EventRecord[]) => void) => vscode.Disposable;
  /** the research frame `.marginalia/project.yaml` beside the project gives (the briefing's fallback) */
  briefingFallback?: (projectPath: string) => Partial<ProjectInfo> | undefined;
  /** stores typed edits before a command reads cursor positions */
  flushEdits?: () => Promise<void>;
}

/** The memo parts of the extension (see the module comment). */
export interface Memos extends vscode.Disposable {
  access: MemoAccess;
  files: MemoFileSystem;
  tree: MemosTreeProvider;
  /** the commands, for registerCommands */
  commands: Record<string, (...args: any[]) => unknown>;
  /** opens the memo tab of `target` (see `marginalia.memos.open`) */
  open(target: MemoTarget): Promise<vscode.TextEditor | undefined>;
}

const KINDS: readonly MemoKind[] = ['code', 'category', 'source', 'case', 'segment', 'project'];

/**
 * The memo target of a command argument: a `{kind, id}` target, a Codes tree node (code or category), a
 * Sources tree node (source), a Cases tree node (case, or a source linked to a case), or a Memos view node.
 */
export function memoTargetOf(arg: unknown): MemoTarget | undefined {
  if (!arg || typeof arg !== 'object') return undefined;
  const a = arg as Record<string, any>;
  if (KINDS.includes(a.kind) && typeof a.id === 'number') return { kind: a.kind, id: a.id };
  if (a.kind === 'memo' && a.entry?.target) return memoTargetOf(a.entry.target);
  if (a.kind === 'code' && typeof a.code?.code_id === 'number') return { kind: 'code', id: a.code.code_id };
  if (a.kind === 'category' && typeof a.category?.category_id === 'number') return { kind: 'category', id: a.category.category_id };
  if (a.kind === 'source' && typeof a.source?.source_id === 'number') return { kind: 'source', id: a.source.source_id };
  if (a.kind === 'source' && typeof a.item?.source_id === 'number') return { kind: 'source', id: a.item.source_id };
  if (a.kind === 'case' && typeof a.item?.case_id === 'number') return { kind: 'case', id: a.item.case_id };
  return undefined;
}

/** Creates the memo file system, the Memos view and the memo commands. Dispose to unregister them. */
export function createMemos(d: MemosDeps): Memos {
  const access = new MemoAccess(d.wb, d.briefingFallback);
  const files = new MemoFileSystem(access, d.logger, d.onEvents);
  const tree = new MemosTreeProvider(d.wb, access, d.onEvents);
  const projectChanged = d.wb.controller.onDidChangeProject(() => files.reloadOpenTabs());

  const open = async (target: MemoTarget): Promise<vscode.TextEditor | undefined> => {
    const label = access.label(target);
    if (label === undefined) {
      void vscode.window.showWarningMessage(
        d.wb.repo() ? `That ${target.kind === 'segment' ? 'coded passage' : target.kind} no longer exists.` : 'Open a project first.',
      );
      return undefined;
    }
    const doc = await vscode.workspace.openTextDocument(memoUri(target, label, access.projectId()));
    const md = doc.languageId === 'markdown' ? doc : await vscode.languages.setTextDocumentLanguage(doc, 'markdown');
    return vscode.window.showTextDocument(md, { preview: false });
  };

  const pickAny = async (): Promise<MemoTarget | undefined> => {
    const repo = d.wb.repo();
    if (!repo) return undefined;
    type Item = vscode.QuickPickItem & { target?: MemoTarget };
    const items: Item[] = [
      { label: '$(book) Project briefing', description: 'description, research questions, methodology', target: { kind: 'project', id: 0 } },
    ];
    const section = (label: string, list: Item[]) => {
      if (list.length > 0) items.push({ label, kind: vscode.QuickPickItemKind.Separator }, ...list);
    };
    const withMemo = (memo: string | null) => (memo ? oneLine(memo, 60) : undefined);
    section(
      'Codes',
      repo.listCodes().map((c) => ({ label: c.name, description: withMemo(c.memo), target: { kind: 'code' as const, id: c.code_id } })),
    );
    section(
      'Categories',
      repo.listCategories().map((c) => ({ label: c.name, description: withMemo(c.memo), target: { kind: 'category' as const, id: c.category_id } })),
    );
    section(
      'Sources',
      repo.listSources().map((s) => ({ label: s.name, description: withMemo(s.memo), target: { kind: 'source' as const, id: s.source_id } })),
    );
    section(
      'Cases',
      repo.listCases().map((c) => ({ label: c.name, description: withMemo(c.memo), target: { kind: 'case' as const, id: c.case_id } })),
    );
    return (await vscode.window.showQuickPick(items, { title: 'Open the memo of…', matchOnDescription: true }))?.target;
  };

  const segmentAtCursor = async (): Promise<number | undefined> => {
    await d.flushEdits?.();
    const editor = vscode.window.activeTextEditor;
    const repo = d.wb.repo();
    if (!editor || !repo) return undefined;
    const sourceId = d.docs.sourceIdFor(editor.document);
    if (sourceId === undefined) {
      void vscode.window.showInformationMessage('Put the cursor in a coded passage of a source first.');
      return undefined;
    }
    const cp = new OffsetMap(editor.document.getText()).toCp(editor.document.offsetAt(editor.selection.active));
    const here = repo.listSegmentsForSource(sourceId).filter((s) => s.start_pos <= cp && cp <= s.end_pos);
    if (here.length === 0) {
      void vscode.window.showInformationMessage('No coded passage at the cursor.');
      return undefined;
    }
    if (here.length === 1) return here[0]?.segment_id;
    const pick = await vscode.window.showQuickPick(
      here.map((s) => ({
        label: repo.getCode(s.code_id)?.name ?? 'a code',
        description: oneLine(s.text, 80),
        detail: s.memo ? oneLine(s.memo, 100) : undefined,
        id: s.segment_id,
      })),
      { title: 'Memo of which coding?' },
    );
    return pick?.id;
  };

  const commands: Record<string, (...args: any[]) => unknown> = {
    'marginalia.memos.open': async (arg?: unknown) => {
      const target = memoTargetOf(arg) ?? (arg === undefined ? await pickAny() : undefined);
      return target ? open(target) : undefined;
    },
    'marginalia.memos.openAtCursor': async (segmentId?: number) => {
      const id = typeof segmentId === 'number' ? segmentId : await segmentAtCursor();
      return id === undefined ? undefined : open({ kind: 'segment', id });
    },
    'marginalia.memos.openBriefing': () => open({ kind: 'project', id: 0 }),
    'marginalia.memos.refresh': () => tree.refresh(),
  };

  return {
    access,
    files,
    tree,
    commands,
    open,
    dispose() {
      projectChanged.dispose();
      tree.dispose();
      files.dispose();
    },
  };
}
