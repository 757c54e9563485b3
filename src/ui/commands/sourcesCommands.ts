/**
 * The Sources view's commands: Import Sources, open a source (at a range), folders (create, rename, delete),
 * Remove Source, Erase Source (withdrawn consent), Set Attribute and Refresh. Writes go through the pipeline as
 * the researcher (Workbench.call).
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { AttributeType, AttributeValue } from '../../domain/ports';
import { eraseSourceTool } from '../../tools/erasureTools';
import { createFolderTool, deleteFolderTool, renameFolderTool } from '../../tools/folderTools';
import { importFileSource, removeSource } from '../../tools/sourceTools';
import type { SourcesNode } from '../trees/sourcesTreeProvider';
import type { Workbench } from '../workbench';
import type { CommandDeps } from './deps';
import { setDocumentAttribute } from './sourceAttributeCommands';
import type { CommandTable } from './table';

/** File extensions the Import Sources dialog offers (text, documents, audio, video, images). */
const IMPORT_EXTENSIONS = ['txt', 'md', 'docx', 'pdf', 'odt', 'rtf', 'mp3', 'wav', 'm4a', 'mp4', 'mov', 'webm', 'png', 'jpg', 'jpeg'];

/** Imports the files (asked for when not given) one by one under a cancellable progress; resolves to the new source ids. */
async function importSources(wb: Workbench, files?: vscode.Uri[]): Promise<number[]> {
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
}

/** Removes a source after the tool's preview and a modal confirmation. */
async function removeSourceConfirmed(wb: Workbench, sourceId: number): Promise<unknown> {
  const preview = await wb.call(removeSource, { source_id: sourceId });
  if (!preview || !preview.preview) return undefined;
  const ok = await vscode.window.showWarningMessage(`${preview.message.replace(/ Call again.*$/, '')} This cannot be undone.`, { modal: true }, 'Remove');
  if (ok !== 'Remove') return undefined;
  return wb.call(removeSource, { source_id: sourceId, confirm: true });
}

/**
 * Erases a source for good (a participant withdrew consent) after a modal confirmation, then reports what was
 * erased and lists the files under the project folder that still hold its text (they are not deleted).
 */
async function eraseSource(wb: Workbench, s: { source_id: number; name: string }): Promise<unknown> {
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
}

/** The Sources view's commands (`marginalia.sources.*`; Close to / Open to Agents are in agentAccessCommands.ts). */
export function sourcesCommands(d: CommandDeps): CommandTable {
  const { wb } = d;
  return {
    'marginalia.sources.import': (files?: vscode.Uri[]) => importSources(wb, files),
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
    'marginalia.sources.remove': async (node?: SourcesNode) => (node?.kind === 'source' ? removeSourceConfirmed(wb, node.source.source_id) : undefined),
    'marginalia.sources.erase': async (node?: SourcesNode) => (node?.kind === 'source' ? eraseSource(wb, node.source) : undefined),
    'marginalia.sources.setAttribute': (node?: SourcesNode | number, name?: string, value?: AttributeValue | null, type?: AttributeType) =>
      setDocumentAttribute(wb, node, name, value, type),
    'marginalia.sources.refresh': () => d.sourcesTree.refresh(),
  };
}
