/**
 * The extension's core, made first: the install's tokens, the agent context, the one tool pipeline every
 * surface calls through, and the project controller that owns the open project's lifetime (its tool server
 * included). Everything else (views, commands, observers) is built on it.
 */
import * as vscode from 'vscode';
import type { AgentContext, Tokens } from '../../agent/agentContext';
import type { ToolPipeline } from '../../agent/pipeline';
import { createPipeline, openProjectHandle } from '../../cli/compose';
import type { OpenProject } from '../../tools/context';
import type { OutputLogger } from '../host/outputLogger';
import { settings } from '../host/settings';
import { loadSecretTokens } from '../host/tokens';
import { ProjectController } from '../projectController';
import { createAgentContext, watchAgentSettings } from './agentContext';
import { startToolServer } from './agentSurfaces';
import { createEditorHost, type EditorHost } from './editorHost';

/** The core parts of the running extension. */
export interface AgentCore {
  logger: OutputLogger;
  /** the install's tokens (agent, reviewer), from VS Code's SecretStorage */
  tokens: Tokens;
  agent: AgentContext;
  pipeline: ToolPipeline;
  controller: ProjectController;
  /** the pipeline's host; attach the editors once they exist */
  editorHost: EditorHost;
}

/** How often expired sessions end and unanswered approval requests are rejected (milliseconds). */
const SWEEP_MS = 1000;

/**
 * Makes the core and pushes what it must release to `context.subscriptions`: the agent context, the settings
 * watcher and the sweeper (the controller is released by the views' step, after the views).
 */
export async function startAgentCore(context: vscode.ExtensionContext, logger: OutputLogger): Promise<AgentCore> {
  // the agent context, the host and the pipeline are made before the controller: they ask it for the open project later
  const made: { controller?: ProjectController } = {};
  const project = (): OpenProject | null => made.controller?.current() ?? null;
  const editorHost = createEditorHost(project);
  const tokens = await loadSecretTokens(context.secrets);
  const { agent, reloadConfig } = createAgentContext({ tokens, logger, project });
  context.subscriptions.push(agent);
  const pipeline = createPipeline({ project, host: editorHost.host, logger, agent });
  const controller = new ProjectController(
    async (file, create) => {
      const handle = await openProjectHandle(file, { create, logger });
      reloadConfig(file);
      return handle;
    },
    (port) => startToolServer({ agent, pipeline, tokens, logger }, project, port),
    logger,
    { serverEnabled: settings.serverEnabled, serverPort: settings.serverPort },
  );
  made.controller = controller;
  context.subscriptions.push(watchAgentSettings(project, reloadConfig));
  // expired sessions end and unanswered approval requests are rejected on time
  const sweeper = setInterval(() => {
    agent.sessions.sweep();
    pipeline.sweepApprovals();
  }, SWEEP_MS);
  context.subscriptions.push({ dispose: () => clearInterval(sweeper) });
  return { logger, tokens, agent, pipeline, controller, editorHost };
}
