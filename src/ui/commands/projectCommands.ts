/**
 * The project's commands: New Project, Open Project, Close Project, Import Data, Export Data, and Show Server
 * Log. New and Open take an optional path (tests, other extensions) that skips the dialog.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { ProjectController } from '../projectController';
import type { Workbench } from '../workbench';
import { exportData, importData } from './exchangeCommands';
import type { CommandTable } from './table';

/**
 * Creates a project at `file` (asked for with a save dialog when not given; `.qda` appended when missing) and
 * opens it. Resolves to its path, undefined when cancelled or when the file exists (said in an error message).
 */
async function newProject(controller: ProjectController, file?: string): Promise<string | undefined> {
  let target = file;
  if (!target) {
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
    const uri = await vscode.window.showSaveDialog({
      title: 'New Marginalia project',
      filters: { 'Marginalia project': ['qda'] },
      defaultUri: folder ? vscode.Uri.joinPath(folder, 'study.qda') : undefined,
    });
    target = uri?.fsPath;
  }
  if (!target) return undefined;
  if (!target.endsWith('.qda')) target += '.qda';
  if (fs.existsSync(target)) {
    void vscode.window.showErrorMessage(`${path.basename(target)} already exists: use Marginalia: Open Project.`);
    return undefined;
  }
  await controller.open(target, true);
  return target;
}

/** Opens the project at `file` (asked for with an open dialog when not given); resolves to its path, undefined when cancelled. */
async function openProject(controller: ProjectController, file?: string): Promise<string | undefined> {
  let target = file;
  if (!target) {
    const uris = await vscode.window.showOpenDialog({ title: 'Open Marginalia project', canSelectMany: false, filters: { 'Marginalia project': ['qda'] } });
    target = uris?.[0]?.fsPath;
  }
  if (!target) return undefined;
  await controller.open(target, false);
  return target;
}

/** The project's commands (`marginalia.project.*`) and `marginalia.server.showLog` (the Marginalia output channel). */
export function projectCommands(d: { controller: ProjectController; wb: Workbench; showLog: () => void }): CommandTable {
  return {
    'marginalia.project.new': (file?: string) => newProject(d.controller, file),
    'marginalia.project.open': (file?: string) => openProject(d.controller, file),
    'marginalia.project.close': () => d.controller.close(),
    'marginalia.project.importData': (format?: string, file?: string, nameColumn?: string) => importData(d.wb, format, file, nameColumn),
    'marginalia.project.exportData': (format?: string, file?: string) => exportData(d.wb, format, file),
    'marginalia.server.showLog': () => d.showLog(),
  };
}
