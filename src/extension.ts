/**
 * The VS Code entry point. activate() is the list of activation steps, each in its own module under
 * src/ui/activation/ (with cli/, the only code that wires the layers together). It owns the two lifetimes of
 * docs/architecture.md: the extension's (everything pushed to `context.subscriptions`) and the open project's
 * (ProjectController's scope).
 */
import * as vscode from 'vscode';
import { startAgentCore } from './ui/activation/agentCore';
import { registerChatSurfaces } from './ui/activation/agentSurfaces';
import { marginaliaApi, openWorkspaceProject, type MarginaliaApi } from './ui/activation/api';
import { registerCommandTable } from './ui/activation/commands';
import { followProject, routeEvents } from './ui/activation/eventRouting';
import { startObserver } from './ui/activation/observer';
import { createViews } from './ui/activation/views';
import { OutputLogger } from './ui/host/outputLogger';
import type { ProjectController } from './ui/projectController';

export type { MarginaliaApi } from './ui/activation/api';

/** The project controller of the running extension, closed by deactivate(). */
let controllerRef: ProjectController | undefined;

/**
 * Activates the extension, in this order: the output channel and global storage; the core (tokens, agent
 * context, pipeline, project controller); the views; the observer (hybrid mode); event routing; following the
 * open project; the chat surfaces (LM tools, MCP provider); THE command table (after the views its commands
 * reveal); then the workspace's one `.qda` project is opened in the background. Resolves to the API.
 */
export async function activate(context: vscode.ExtensionContext): Promise<MarginaliaApi> {
  const activationStarted = performance.now();
  const logger = new OutputLogger();
  context.subscriptions.push(logger);
  await vscode.workspace.fs.createDirectory(context.globalStorageUri);

  const core = await startAgentCore(context, logger);
  controllerRef = core.controller;
  const views = createViews(context, core);
  core.editorHost.attach(views);
  const observer = startObserver(context, core, views);
  const events = routeEvents(context, core, views, observer);
  followProject(context, core, views);
  registerChatSurfaces(context, core);
  registerCommandTable(context, core, views, observer);

  const api = marginaliaApi(core, views, observer, events);
  await vscode.commands.executeCommand('setContext', 'marginalia.projectOpen', false);
  api.activation.projectReadyMs = openWorkspaceProject(core, views, activationStarted);
  return api;
}

/** Closes the open project (checkpointing its store); VS Code then disposes `context.subscriptions`. */
export async function deactivate(): Promise<void> {
  await controllerRef?.close();
}
