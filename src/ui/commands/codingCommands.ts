/**
 * Coding in the editor: Code Selection (with a picked code, the last code, or in vivo), Remove Coding at Cursor,
 * Segment Memo, and Reveal Segment. Positions are converted from the editor's UTF-16 offsets to code points
 * of the source (core/offsets); writes go through the pipeline as the researcher (Workbench.call).
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import { OffsetMap } from '../../core/offsets';
import type { Segment } from '../../domain/model';
import { batchApplyCodes, deleteSegmentTool, updateSegmentMemoTool } from '../../tools/coreTools';
import { importFileSource } from '../../tools/sourceTools';
import { showStatusFeedback } from '../codebook/statusFeedback';
import { createCodeInteractively, LAST_CODE, pickCode } from './codePicker';
import type { CommandDeps } from './deps';
import type { CommandTable } from './table';

/**
 * The selection of the active editor in code points of its source, or undefined after telling the researcher
 * why there is none. A workspace file that is not a source yet is imported first when the researcher agrees.
 */
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

/** Codes the active editor's selection with `codeId` and remembers it as the last code; resolves to the new segment. */
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
  // callers flushed pending edits first
  const editor = vscode.window.activeTextEditor;
  const repo = d.wb.repo();
  if (!editor || !repo) return [];
  const sourceId = d.docs.sourceIdFor(editor.document);
  if (sourceId === undefined) return [];
  const cp = new OffsetMap(editor.document.getText()).toCp(editor.document.offsetAt(editor.selection.active));
  return repo.listSegmentsForSource(sourceId).filter((s) => s.start_pos <= cp && cp <= s.end_pos);
}

/** The one segment, or the one the researcher picks among several (by code name and excerpt). */
async function pickSegment(d: CommandDeps, segments: Segment[], title: string): Promise<Segment | undefined> {
  if (segments.length <= 1) return segments[0];
  const codes = new Map(d.codesTree.allCodes.map((c) => [c.code_id, c.name]));
  const pick = await vscode.window.showQuickPick(
    segments.map((s) => ({ label: codes.get(s.code_id) ?? `code ${s.code_id}`, description: s.text.replace(/\s+/g, ' ').slice(0, 80), s })),
    { title },
  );
  return pick?.s;
}

/** Code Selection with the last code (the keybinding): falls back to the picker when there is none; says in the status bar what it did. */
async function codeSelectionWithLastCode(d: CommandDeps): Promise<unknown> {
  const { wb } = d;
  const last = d.state.get<number>(LAST_CODE);
  if (last === undefined || !wb.repo()?.getCode(last)) return vscode.commands.executeCommand('marginalia.coding.codeSelection');
  const seg = await applyToSelection(d, last);
  // the keybinding shows no picker: say which code it applied, and where
  if (seg)
    showStatusFeedback(`$(tag) Coded with '${wb.repo()?.getCode(last)?.name ?? seg.code_id}' in ${wb.repo()?.getSource(seg.source_id)?.name ?? 'the source'}`);
  return seg;
}

/** In vivo coding: the selected words (at most 100 characters) name the code, an existing one of that name or a new one. */
async function inVivoCode(d: CommandDeps): Promise<Segment | undefined> {
  const editor = vscode.window.activeTextEditor;
  const words = editor?.document.getText(editor.selection).replace(/\s+/g, ' ').trim() ?? '';
  if (!words) return void vscode.window.showInformationMessage('Select the words that should name the code.');
  const name = [...words].length > 100 ? `${[...words].slice(0, 99).join('')}…` : words;
  const existing = d.codesTree.allCodes.find((c) => c.name.toLowerCase() === name.toLowerCase());
  const codeId = existing?.code_id ?? (await createCodeInteractively(d, name));
  if (codeId !== undefined) return applyToSelection(d, codeId);
  return undefined;
}

/** Asks for the memo of the coding under the cursor (empty clears it). */
async function addSegmentMemo(d: CommandDeps): Promise<unknown> {
  await d.flushEdits();
  const seg = await pickSegment(d, segmentsAtCursor(d), 'Memo for which coding?');
  if (!seg) return void vscode.window.showInformationMessage('No coding at the cursor.');
  const memo = await vscode.window.showInputBox({ title: 'Segment memo', value: seg.memo ?? '', prompt: 'Empty clears the memo' });
  if (memo === undefined) return undefined;
  return d.wb.call(updateSegmentMemoTool, { segment_id: seg.segment_id, memo: memo || null });
}

/** The coding commands (`marginalia.coding.*`) and Reveal Segment (`marginalia.segments.reveal(segmentId)`). */
export function codingCommands(d: CommandDeps): CommandTable {
  const { wb } = d;
  return {
    // a keybinding may pass {codeId} (or a number) to code with one particular code without the quick pick
    'marginalia.coding.codeSelection': async (arg?: number | { codeId?: number }) => {
      const given = typeof arg === 'number' ? arg : arg?.codeId;
      const codeId = given ?? (await pickCode(d, 'Code selection with…'));
      if (codeId !== undefined) return applyToSelection(d, codeId);
      return undefined;
    },
    'marginalia.coding.codeSelectionWithLastCode': () => codeSelectionWithLastCode(d),
    'marginalia.coding.inVivoCode': () => inVivoCode(d),
    'marginalia.coding.removeCodingAtCursor': async () => {
      await d.flushEdits();
      const seg = await pickSegment(d, segmentsAtCursor(d), 'Remove which coding?');
      if (!seg) return void vscode.window.showInformationMessage('No coding at the cursor.');
      return wb.call(deleteSegmentTool, { segment_id: seg.segment_id });
    },
    'marginalia.coding.addSegmentMemo': () => addSegmentMemo(d),
    'marginalia.segments.reveal': async (segmentId: number) => {
      const seg = wb.repo()?.getSegment(segmentId);
      if (!seg) return void vscode.window.showWarningMessage(`Segment ${segmentId} no longer exists.`);
      const editor = await d.docs.open(seg.source_id, { start: seg.start_pos, end: seg.end_pos });
      if (editor) d.decorations.flash(seg, 500);
      return editor;
    },
  };
}
