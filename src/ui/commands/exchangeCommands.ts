/**
 * Import and export of whole projects, codebooks and surveys from the editor ("Marginalia: Import Data...",
 * "Marginalia: Export Data..."): the researcher picks a format and a file, and the call goes through the one
 * pipeline (import_data, export_data) as the researcher. Imports show a progress notification fed by the
 * tool's progress reports (reading the file in bytes, then writing the plan in items). Both commands take
 * their answers as optional arguments too (format, path), which skips the dialogs (tests, keybindings).
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import { describeProgress } from '../../agent/pipeline';
import { EXPORT_FORMATS, isExportFormat, type ExportFormat } from '../../exchange/exports';
import type { ImportReport } from '../../exchange/importers/applyPlan';
import { IMPORTERS } from '../../exchange/importers/index';
import type { ToolProgress } from '../../tools/context';
import { exportDataTool, importDataTool } from '../../tools/exchangeTools';
import type { Workbench } from '../workbench';

/** Formats whose import takes the column holding each case's name. */
const NAME_COLUMN_FORMATS = new Set(['csv', 'analytics_csv']);

/** Share of the progress bar (percent) the reading step fills; writing fills the rest. */
const READ_SHARE = 60;

/**
 * Imports a file with import_data. `format` (an IMPORTERS key) and `file` (an absolute path) are asked for
 * when absent; `nameColumn` is asked for (optional) for csv formats when `file` was not given. Resolves with
 * import_data's result, or undefined when cancelled or failed (the error was shown).
 */
export async function importData(wb: Workbench, format?: string, file?: string, nameColumn?: string): Promise<ImportReport | undefined> {
  const fmt =
    format ??
    (
      await vscode.window.showQuickPick(
        Object.entries(IMPORTERS).map(([name, imp]) => ({ label: name, description: imp.extensions.join(' '), detail: imp.description })),
        { title: 'Import data: format', matchOnDetail: true },
      )
    )?.label;
  if (!fmt) return undefined;
  const importer = Object.prototype.hasOwnProperty.call(IMPORTERS, fmt) ? IMPORTERS[fmt] : undefined;
  let target = file;
  if (target === undefined) {
    const picked = await vscode.window.showOpenDialog({
      canSelectMany: false,
      title: `Import ${fmt}`,
      filters: importer ? { [fmt]: importer.extensions.map((e) => e.slice(1)), 'All files': ['*'] } : { 'All files': ['*'] },
    });
    target = picked?.[0]?.fsPath;
    if (!target) return undefined;
    if (NAME_COLUMN_FORMATS.has(fmt) && nameColumn === undefined) {
      const answer = await vscode.window.showInputBox({
        title: "Column holding each case's name",
        prompt: "Leave empty for the default (see the format's description)",
      });
      if (answer === undefined) return undefined;
      nameColumn = answer.trim() || undefined;
    }
  }
  const source_path = target;
  const result = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: `Importing ${path.basename(source_path)}` },
    async (progress) =>
      wb.call(importDataTool, { format: fmt, source_path, ...(nameColumn ? { name_column: nameColumn } : {}) }, { onProgress: progressBar(progress) }),
  );
  if (result) {
    const r = result;
    const made = Object.entries(r.created as unknown as Record<string, number>)
      .filter(([, n]) => n > 0)
      .map(([k, n]) => `${n} ${k}`);
    const skipped = Object.values(r.skipped).reduce((a, n) => a + n, 0);
    wb.logger.info(`import_data ${fmt} ${source_path}: ${JSON.stringify(result)}`);
    void vscode.window.showInformationMessage(
      `Imported ${path.basename(source_path)}: ${made.length > 0 ? made.join(', ') : 'nothing new'}` +
        `${skipped > 0 ? `; ${skipped} item(s) left out` : ''}${r.warnings.length > 0 ? `; ${r.warnings.length} warning(s) in the Marginalia log` : ''}.`,
    );
  }
  return result;
}

/**
 * Exports with export_data. `format` (an EXPORT_FORMATS key) and `file` (an absolute path with the format's
 * extension) are asked for when absent. Resolves with export_data's result, or undefined when cancelled or
 * failed (the error was shown).
 */
export async function exportData(wb: Workbench, format?: string, file?: string): Promise<unknown> {
  const fmt =
    format ??
    (
      await vscode.window.showQuickPick(
        Object.entries(EXPORT_FORMATS).map(([name, f]) => ({ label: name, description: f.extensions.join(' '), detail: f.description })),
        { title: 'Export data: format', matchOnDetail: true },
      )
    )?.label;
  if (!fmt) return undefined;
  let target = file;
  if (target === undefined) {
    const extensions = isExportFormat(fmt) ? EXPORT_FORMATS[fmt as ExportFormat].extensions : [];
    const project = wb.controller.current();
    const base = project ? project.name : 'project';
    const folder = project ? path.dirname(project.path) : vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    const picked = await vscode.window.showSaveDialog({
      title: `Export ${fmt}`,
      defaultUri: folder ? vscode.Uri.file(path.join(folder, `${base}${extensions[0] ?? ''}`)) : undefined,
      filters: extensions.length > 0 ? { [fmt]: extensions.map((e) => e.slice(1)) } : undefined,
    });
    target = picked?.fsPath;
    if (!target) return undefined;
  }
  const output_path = target;
  const result = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `Exporting ${path.basename(output_path)}` }, () =>
    wb.call(exportDataTool, { format: fmt, output_path }),
  );
  if (result && file === undefined) {
    const warnings = (result as { warnings?: string[] }).warnings ?? [];
    if (warnings.length > 0) wb.logger.info(`export_data ${fmt} ${output_path}: ${warnings.join('; ')}`);
    void vscode.window
      .showInformationMessage(
        `Exported ${path.basename(output_path)}${warnings.length > 0 ? ` (${warnings.length} warning(s) in the Marginalia log)` : ''}.`,
        'Reveal',
      )
      .then((choice) => (choice === 'Reveal' ? vscode.commands.executeCommand('revealFileInOS', vscode.Uri.file(output_path)) : undefined));
  }
  return result;
}

/**
 * Maps a call's progress reports onto a VS Code progress notification: the reading step fills the bar up to
 * {@link READ_SHARE} percent, the writing step the rest; the message names the step and how far it is.
 */
function progressBar(progress: vscode.Progress<{ message?: string; increment?: number }>): (p: ToolProgress) => void {
  let filled = 0;
  return (p) => {
    const fraction = p.total ? Math.min(1, p.done / p.total) : 0;
    const target = p.unit === 'bytes' ? READ_SHARE * fraction : READ_SHARE + (100 - READ_SHARE) * fraction;
    const increment = Math.max(0, target - filled);
    filled += increment;
    progress.report({ message: describeProgress(p), increment });
  };
}
