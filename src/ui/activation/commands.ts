/** The commands step of activation: THE command table (src/ui/commands/index.ts) registered once, failures logged and shown. */
import * as vscode from 'vscode';
import { commandTable, registerCommands } from '../commands';
import { AgentTokenSecrets } from '../host/tokens';
import type { AgentCore } from './agentCore';
import type { Observer } from './observer';
import type { Views } from './views';

/**
 * Registers every command of the table (after the views they reveal exist) and pushes the registration to
 * `context.subscriptions`. A failing command is logged and shown as `Marginalia: <message>`, never thrown into VS Code.
 */
export function registerCommandTable(context: vscode.ExtensionContext, core: AgentCore, views: Views, observer: Observer): void {
  const { logger } = core;
  const table = commandTable({
    ...views,
    controller: core.controller,
    agent: core.agent,
    tokens: core.tokens,
    flushEdits: () => views.editTracker.flush(),
    state: context.workspaceState,
    showLog: () => logger.channel.show(),
    extensionPath: context.extensionPath,
    agentSecrets: new AgentTokenSecrets(context.secrets),
    pause: observer.pause,
  });
  context.subscriptions.push(
    registerCommands(table, (id, e) => {
      logger.error(`${id} failed`, e);
      void vscode.window.showErrorMessage(`Marginalia: ${(e as Error).message}`);
    }),
  );
}
