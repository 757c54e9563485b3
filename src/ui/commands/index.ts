import * as path from 'node:path';
import * as vscode from 'vscode';
import { OffsetMap } from '../../core/offsets';
import { countOf } from '../../core/plural';
import type { Segment } from '../../domain/model';
import { CODE_PALETTE } from '../../domain/codeColours';
import type { AttributeType, AttributeValue } from '../../domain/ports';
import { batchApplyCodes, createCodeTool, deleteSegmentTool, updateSegmentMemoTool } from '../../tools/coreTools';
import { deleteCodeTool, mergeCodesTool, setCodeColorTool, updateCodeMemoTool } from '../../tools/codeTools';
import { createFolderTool, deleteFolderTool, renameFolderTool } from '../../tools/folderTools';
import { importFileSource, removeSource } from '../../tools/sourceTools';
import { eraseSourceTool } from '../../tools/erasureTools';
import { showStatusFeedback } from '../codebook/statusFeedback';
import type { CodedSegmentDecorations } from '../decorations/codedSegmentDecorations';
import type { SourceDocuments } from '../documents/sourceDocuments';
import type { RetrievalView } from '../retrieval/retrievalView';
import type { CodesNode, CodesTreeProvider } from '../trees/codesTreeProvider';
import type { SourcesNode, SourcesTreeProvider } from '../trees/sourcesTreeProvider';
import type { Workbench } from '../workbench';
import { exportData, importData } from './exchangeCommands';
import { setDocumentAttribute } from './sourceAttributeCommands';
import { agentAccessCommands } from './agentAccessCommands';

/** Everything the commands use. */
export interface CommandDeps {
  wb: Workbench;
  docs: SourceDocuments;
  codesTree: CodesTreeProvider;
  sourcesTree: SourcesTreeProvider;
  retrieval: RetrievalView;
  decorations: CodedSegmentDecorations;
  /** stores typed edits before a command reads positions */
  flushEdits: () => Promise<void>;
  state: vscode.Memento;
  showLog: () => void;
}

/** The palette of distinct code colours (Tableau 20, domain/codeColours) offered when recolouring a code. */
export const PALETTE: readonly string[] = CODE_PALETTE;

const LAST_CODE = 'marginalia.lastCodeId';
const IMPORT_EXTENSIONS = ['txt', 'md', 'docx', 'pdf', 'odt', 'rtf', 'mp3', 'wav', 'm4a', 'mp4', 'mov', 'webm', 'png', 'jpg', 'jpeg'];

/** The selection of the active editor in code points of its source, or a message why there is none. */
async function selectionInSource(d: CommandDeps): Promise<{ sourceId: number; start: number; end: number; text: string } | undefined> {
  await d.flushEdits();
  const editor = vscode.window.activeTextEditor;
  if (!editor || editor.selection.isEmpty) {
    void vscode.window.showInformationMessage('Select the text to code first.');
    return undefined;
  }
  let sourceId = d.docs.sourceIdFor(editor.document);
  if (sourceId === undefined) {
    if (editor.document.uri.scheme !== 'file') {
      void vscode.window.showWarningMessage('This document is not a source of the open project.');
      return undefined;
    }
    const name = path.basename(editor.document.uri.fsPath);
    const pick = await vscode.window.showInformationMessage(`"${name}" is not a source of the project yet. Import it to code it?`, 'Import', 'Cancel');
    if (pick !== 'Import') return undefined;
    if (editor.document.isDirty) await editor.document.save();
    const imported = await d.wb.call(importFileSource, { file_path: editor.document.uri.fsPath });
    if (!imported || imported.dry_run) return undefined;
    sourceId = imported.source_id;
    d.sourcesTree.refresh();
  }
  const map = new OffsetMap(editor.document.getText());
  const start = map.toCp(editor.document.offsetAt(editor.selection.start));
  const end = map.toCp(editor.document.offsetAt(editor.selection.end));
  return { sourceId, start, end, text: editor.document.getText(editor.selection) };
}

/** Asks for a new code's name (prefilled) and colour, creates it, and returns its id. */
async function createCodeInteractively(d: CommandDeps, name?: string, categoryId?: number): Promise<number | undefined> {
  const chosen =
    name ??
    (await vscode.window.showInputBox({
      title: 'New code',
      prompt: 'Name of the code (unique, 1-100 characters)',
      validateInput: (v) => (v.trim() ? undefined : 'Enter a name'),
    }));
  if (!chosen) return undefined;
  // no colour: create_code gives a palette colour no other code uses (domain/codeColours)
  const created = await d.wb.call(createCodeTool, { name: chosen, category_id: categoryId });
  return created?.code_id;
}

/** Quick pick over codes, last used first, with "New code..." inline (typed text becomes its name). */
async function pickCode(d: CommandDeps, title: string, exclude?: number): Promise<number | undefined> {
  const last = d.state.get<number>(LAST_CODE);
  const codes = [...d.codesTree.allCodes].filter((c) => c.code_id !== exclude).sort((a, b) => (a.code_id === last ? -1 : b.code_id === last ? 1 : 0));
  type Item = vscode.QuickPickItem & { codeId?: number; create?: boolean };
  const qp = vscode.window.createQuickPick<Item>();
  qp.title = title;
  qp.placeholder = 'Type to filter, or type a new name and choose "New code"';
  const base: Item[] = codes.map((c) => ({ label: c.name, description: `${c.segment_count}`, detail: c.memo ?? undefined, codeId: c.code_id }));
  const refreshItems = () => {
    const typed = qp.value.trim();
    const exact = codes.some((c) => c.name.toLowerCase() === typed.toLowerCase());
    qp.items = exclude === undefined && typed && !exact ? [...base, { label: `$(add) New code "${typed}"`, create: true, alwaysShow: true }] : base;
  };
  refreshItems();
  const disposables = [qp.onDidChangeValue(refreshItems)];
  const picked = await new Promise<Item | undefined>((resolve) => {
    disposables.push(
      qp.onDidAccept(() => resolve(qp.selectedItems[0])),
      qp.onDidHide(() => resolve(undefined)),
    );
    qp.show();
  });
  const typed = qp.value.trim();
  qp.dispose();
  for (const x of disposables) x.dispose();
  if (!picked) return undefined;
  if (picked.create) return createCodeInteractively(d, typed);
  return picked.codeId;
}

async function applyToSelection(d: CommandDeps, codeId: number): Promise<Segment | undefined> {
  const sel = await selectionInSource(d);
  if (!sel) return undefined;
  const r = await d.wb.call(batchApplyCodes, { operations: [{ code_id: codeId, source_id: sel.sourceId, start_position: sel.start, end_position: sel.end }] });
  if (!r) return undefined;
  await d.state.update(LAST_CODE, codeId);
  const seg = d.wb.repo()?.getSegment(r.results[0]?.segment_id ?? 0);
  return seg;
}

/** Segments of the active editor's source under the cursor. */
function segmentsAtCursor(d: CommandDeps): Segment[] {
  // callers flushed pending edits first (see flushThen)
  const editor = vscode.window.activeTextEditor;
  const repo = d.wb.repo();
  if (!editor || !repo) return [];
  const sourceId = d.docs.sourceIdFor(editor.document);
  if (sourceId === undefined) return [];
  const cp = new OffsetMap(editor.document.getText()).toCp(editor.document.offsetAt(editor.selection.active));
  return repo.listSegmentsForSource(sourceId).filter((s) => s.start_pos <= cp && cp <= s.end_pos);
}

async function pickSegment(d: CommandDeps, segments: Segment[], title: string): Promise<Segment | undefined> {
  if (segments.length <= 1) return segments[0];
  const codes = new Map(d.codesTree.allCodes.map((c) => [c.code_id, c.name]));
  const pick = await vscode.window.showQuickPick(
    segments.map((s) => ({ label: codes.get(s.code_id) ?? `code ${s.code_id}`, description: s.text.replace(/\s+/g, ' ').slice(0, 80), s })),
    { title },
  );
  return pick?.s;
}

function codeOf(node: CodesNode | undefined): (CodesNode & { kind: 'code' }) | undefined {
  return node?.kind === 'code' ? node : undefined;
}

/**
 * THE command table (rust-analyzer style): command id -> handler factory. `registerCommands` registers
 * each one; a unit test compares the keys with package.json `contributes.commands`.
 */
export function commandTable(d: CommandDeps): Record<string, (...args: any[]) => unknown> {
  const { wb } = d;
  return {
    // sources closed to agents (issue 14 item 11): Close to Agents…, Open to Agents
    ...agentAccessCommands(wb, d.sourcesTree),
    // a keybinding may pass {codeId} (or a number) to code with one particular code without the quick pick
    'marginalia.coding.codeSelection': async (arg?: number | { codeId?: number }) => {
      const given = typeof arg === 'number' ? arg : arg?.codeId;
      const codeId = given ?? (await pickCode(d, 'Code selection with…'));
      if (codeId !== undefined) return applyToSelection(d, codeId);
      return undefined;
    },
    'marginalia.coding.codeSelectionWithLastCode': async () => {
      const last = d.state.get<number>(LAST_CODE);
      if (last === undefined || !wb.repo()?.getCode(last)) return vscode.commands.executeCommand('marginalia.coding.codeSelection');
      const seg = await applyToSelection(d, last);
      // the keybinding shows no picker: say which code it applied, and where
      if (seg)
        showStatusFeedback(
          `$(tag) Coded with '${wb.repo()?.getCode(last)?.name ?? seg.code_id}' in ${wb.repo()?.getSource(seg.source_id)?.name ?? 'the source'}`,
        );
      return seg;
    },
    'marginalia.coding.inVivoCode': async () => {
      const editor = vscode.window.activeTextEditor;
      const words = editor?.document.getText(editor.selection).replace(/\s+/g, ' ').trim() ?? '';
      if (!words) return void vscode.window.showInformationMessage('Select the words that should name the code.');
      const name = [...words].length > 100 ? `${[...words].slice(0, 99).join('')}…` : words;
      const existing = d.codesTree.allCodes.find((c) => c.name.toLowerCase() === name.toLowerCase());
      const codeId = existing?.code_id ?? (await createCodeInteractively(d, name));
      if (codeId !== undefined) return applyToSelection(d, codeId);
      return undefined;
    },
    'marginalia.coding.removeCodingAtCursor': async () => {
      await d.flushEdits();
      const seg = await pickSegment(d, segmentsAtCursor(d), 'Remove which coding?');
      if (!seg) return void vscode.window.showInformationMessage('No coding at the cursor.');
      return wb.call(deleteSegmentTool, { segment_id: seg.segment_id });
    },
    'marginalia.coding.addSegmentMemo': async () => {
      await d.flushEdits();
      const seg = await pickSegment(d, segmentsAtCursor(d), 'Memo for which coding?');
      if (!seg) return void vscode.window.showInformationMessage('No coding at the cursor.');
      const memo = await vscode.window.showInputBox({ title: 'Segment memo', value: seg.memo ?? '', prompt: 'Empty clears the memo' });
      if (memo === undefined) return undefined;
      return wb.call(updateSegmentMemoTool, { segment_id: seg.segment_id, memo: memo || null });
    },
    // marginalia.codes.create, .createCategory and .rename: src/ui/codebook/codebookCommands.ts
    'marginalia.codes.recolor': async (node?: CodesNode) => {
      const c = codeOf(node);
      if (!c) return undefined;
      const pick = await vscode.window.showQuickPick([...PALETTE.map((p) => ({ label: p })), { label: 'Other…' }], { title: `Colour of "${c.code.name}"` });
      if (!pick) return undefined;
      const color =
        pick.label === 'Other…'
          ? await vscode.window.showInputBox({
              title: 'Colour as #RRGGBB',
              value: c.code.color,
              validateInput: (v) => (/^#[0-9A-Fa-f]{6}$/.test(v) ? undefined : 'Use #RRGGBB'),
            })
          : pick.label;
      if (!color) return undefined;
      const done = await wb.call(setCodeColorTool, { code_id: c.code.code_id, color });
      if (done?.colour_note) void vscode.window.showInformationMessage(done.colour_note);
      return done;
    },
    'marginalia.codes.editMemo': async (node?: CodesNode) => {
      const c = codeOf(node);
      if (!c) return undefined;
      const memo = await vscode.window.showInputBox({
        title: `Memo of "${c.code.name}"`,
        value: c.code.memo ?? '',
        prompt: 'When to apply this code. Empty clears the memo.',
      });
      if (memo === undefined) return undefined;
      return wb.call(updateCodeMemoTool, { code_id: c.code.code_id, memo: memo || null });
    },
    'marginalia.codes.merge': async (node?: CodesNode) => {
      const c = codeOf(node);
      if (!c) return undefined;
      const target = await pickCode(d, `Merge "${c.code.name}" into…`, c.code.code_id);
      if (target === undefined) return undefined;
      const targetName = d.codesTree.allCodes.find((x) => x.code_id === target)?.name ?? String(target);
      // merges are not undoable (src/domain/undoRedo.ts): Marginalia: Undo stops at them
      const ok = await vscode.window.showWarningMessage(
        `Merge "${c.code.name}" into "${targetName}"?`,
        {
          modal: true,
          detail: `Its ${countOf(c.code.segment_count, 'coding')} move to "${targetName}" and "${c.code.name}" is deleted. This cannot be undone: Marginalia: Undo stops at a merge and does not go back past it.`,
        },
        'Merge',
      );
      if (ok !== 'Merge') return undefined;
      return wb.call(mergeCodesTool, { source_code_id: c.code.code_id, target_code_id: target });
    },
    'marginalia.codes.delete': async (node?: CodesNode) => {
      const c = codeOf(node);
      if (!c) return undefined;
      const n = c.code.segment_count + c.code.av_segment_count;
      // deleting an unused code is undoable; with its codings it is not (src/domain/undoRedo.ts)
      const ok = await vscode.window.showWarningMessage(
        `Delete the code "${c.code.name}"${n ? ` and its ${countOf(n, 'coding')}` : ''}?`,
        {
          modal: true,
          detail: n
            ? `The ${countOf(n, 'passage')} coded with it lose this coding. This cannot be undone: Marginalia: Undo stops here and does not go back past it.`
            : 'It is not used anywhere. You can undo this with Marginalia: Undo (Ctrl+Z in a source editor).',
        },
        'Delete',
      );
      if (ok !== 'Delete') return undefined;
      return wb.call(deleteCodeTool, { code_id: c.code.code_id, delete_segments: true });
    },
    'marginalia.codes.showSegments': async (node?: CodesNode) => {
      const c = codeOf(node);
      return d.retrieval.show(c?.code.code_id);
    },
    'marginalia.codes.refresh': () => d.codesTree.refresh(),
    'marginalia.sources.import': async (files?: vscode.Uri[]) => {
      const uris =
        files ??
        (await vscode.window.showOpenDialog({
          canSelectMany: true,
          title: 'Import sources',
          filters: { 'Transcripts and media': IMPORT_EXTENSIONS, 'All files': ['*'] },
        }));
      if (!uris || uris.length === 0) return [];
      const imported: number[] = [];
      await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: 'Importing sources', cancellable: true },
        async (progress, token) => {
          for (const [i, uri] of uris.entries()) {
            if (token.isCancellationRequested) break;
            progress.report({ message: `${path.basename(uri.fsPath)} (${i + 1} of ${uris.length})`, increment: 100 / uris.length });
            const r = await wb.call(importFileSource, { file_path: uri.fsPath });
            if (r && !r.dry_run) imported.push(r.source_id);
          }
        },
      );
      if (imported.length > 0) void vscode.window.showInformationMessage(`Imported ${imported.length} source(s).`);
      return imported;
    },
    'marginalia.sources.open': async (node?: SourcesNode | number) => {
      const id = typeof node === 'number' ? node : node?.kind === 'source' ? node.source.source_id : undefined;
      if (id !== undefined) return d.docs.open(id);
      return undefined;
    },
    'marginalia.sources.openAt': async (sourceId: number, start: number, end: number) => d.docs.open(sourceId, { start, end }),
    'marginalia.sources.createFolder': async (node?: SourcesNode) => {
      const parent = node?.kind === 'folder' ? node.folder : undefined;
      const name = await vscode.window.showInputBox({
        title: parent ? `New folder in "${parent.name}"` : 'New folder',
        validateInput: (v) => (v.includes('/') ? 'No slashes' : v.trim() ? undefined : 'Enter a name'),
      });
      if (!name) return undefined;
      return wb.call(createFolderTool, { name, parent_id: parent?.folder_id });
    },
    'marginalia.sources.renameFolder': async (node?: SourcesNode) => {
      if (node?.kind !== 'folder') return undefined;
      const name = await vscode.window.showInputBox({ title: `Rename "${node.folder.name}"`, value: node.folder.name });
      if (!name || name === node.folder.name) return undefined;
      return wb.call(renameFolderTool, { folder_id: node.folder.folder_id, new_name: name });
    },
    'marginalia.sources.deleteFolder': async (node?: SourcesNode) => {
      if (node?.kind !== 'folder') return undefined;
      return wb.call(deleteFolderTool, { folder_id: node.folder.folder_id });
    },
    'marginalia.sources.remove': async (node?: SourcesNode) => {
      if (node?.kind !== 'source') return undefined;
      const preview = await wb.call(removeSource, { source_id: node.source.source_id });
      if (!preview || !preview.preview) return undefined;
      const ok = await vscode.window.showWarningMessage(`${preview.message.replace(/ Call again.*$/, '')} This cannot be undone.`, { modal: true }, 'Remove');
      if (ok !== 'Remove') return undefined;
      return wb.call(removeSource, { source_id: node.source.source_id, confirm: true });
    },
    'marginalia.sources.erase': async (node?: SourcesNode) => {
      if (node?.kind !== 'source') return undefined;
      const s = node.source;
      const ok = await vscode.window.showWarningMessage(
        `Erase "${s.name}" for good? This cannot be undone.`,
        {
          modal: true,
          detail:
            'For a participant who withdrew consent: the source, its segments and every trace of its text are removed from the project, ' +
            'the event log (redacted), the audit log and every snapshot of the version history. Exports and other copies under the project ' +
            'folder are listed, not deleted. Memos you wrote are kept.',
        },
        'Erase Permanently',
      );
      if (ok !== 'Erase Permanently') return undefined;
      const report = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `Erasing "${s.name}"` }, () =>
        wb.call(eraseSourceTool, { source_id: s.source_id, confirm: true }),
      );
      if (!report) return undefined;
      const copies = report.copies_found.map((c) => c.relative);
      const summary =
        `Erased "${report.source_name}": ${report.database.segments + report.database.av_segments} segments, ${report.database.events_redacted} events redacted, ` +
        `${report.audit_log?.lines_rewritten ?? 0} audit lines rewritten, ${report.history?.snapshots_rewritten ?? 0} snapshots rewritten.`;
      if (copies.length > 0)
        void vscode.window.showWarningMessage(`${summary} These files still hold its text (not deleted): ${copies.join(', ')}`, { modal: true });
      else void vscode.window.showInformationMessage(summary);
      return report;
    },
    'marginalia.sources.setAttribute': (node?: SourcesNode | number, name?: string, value?: AttributeValue | null, type?: AttributeType) =>
      setDocumentAttribute(wb, node, name, value, type),
    'marginalia.sources.refresh': () => d.sourcesTree.refresh(),
    'marginalia.segments.reveal': async (segmentId: number) => {
      const seg = wb.repo()?.getSegment(segmentId);
      if (!seg) return void vscode.window.showWarningMessage(`Segment ${segmentId} no longer exists.`);
      const editor = await d.docs.open(seg.source_id, { start: seg.start_pos, end: seg.end_pos });
      if (editor) d.decorations.flash(seg, 500);
      return editor;
    },
    'marginalia.server.showLog': () => d.showLog(),
    'marginalia.project.importData': (format?: string, file?: string, nameColumn?: string) => importData(wb, format, file, nameColumn),
    'marginalia.project.exportData': (format?: string, file?: string) => exportData(wb, format, file),
  };
}

/** Registers every command of the table, reporting failures instead of throwing into VS Code. */
export function registerCommands(table: Record<string, (...args: any[]) => unknown>, onError: (id: string, e: unknown) => void): vscode.Disposable {
  return vscode.Disposable.from(
    ...Object.entries(table).map(([id, handler]) =>
      vscode.commands.registerCommand(id, async (...args: unknown[]) => {
        try {
          return await handler(...args);
        } catch (e) {
          onError(id, e);
          return undefined;
        }
      }),
    ),
  );
}
