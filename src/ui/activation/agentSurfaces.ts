/**
 * Where agents reach the extension: the tool server of the open project (the same composition of protocol
 * surfaces as `marginalia serve`, src/cli/surfaces.ts, with the discovery file that `marginalia mcp` finds it
 * by), the chat's language-model tools, and the MCP server definition VS Code offers to its chat.
 */
import type * as vscode from 'vscode';
import type { AgentContext, Tokens } from '../../agent/agentContext';
import type { ToolPipeline } from '../../agent/pipeline';
import { LM_CLIENT_NAME, registerLmTools } from '../../adapters/lm/lmTools';
import { writeDiscovery } from '../../cli/credentials';
import { VERSION } from '../../cli/main';
import { startSurfaces } from '../../cli/surfaces';
import { EDITOR_TOOLS } from '../../tools/editorTools';
import type { OpenProject } from '../../tools/context';
import { TOOLS } from '../../tools/registry';
import { registerMcpProvider } from '../agents/agentCommands';
import type { OutputLogger } from '../host/outputLogger';
import { settings } from '../host/settings';
import type { ProjectController, ServerHandle } from '../projectController';

/** What the tool server and the chat surfaces use. */
export interface SurfaceDeps {
  agent: AgentContext;
  pipeline: ToolPipeline;
  tokens: Tokens;
  logger: OutputLogger;
}

/**
 * Starts the surfaces `agent_context.protocols` turns on for the project open now (`current`) on 127.0.0.1:`port` and writes
 * the discovery file (removed on close). Rejects with the server's error (EADDRINUSE when the port is taken).
 */
export async function startToolServer(d: SurfaceDeps, current: () => OpenProject | null, port: number): Promise<ServerHandle> {
  const project = current();
  const server = await startSurfaces({
    agent: d.agent,
    pipeline: d.pipeline,
    project: current,
    projectPath: project?.path ?? '',
    tokens: d.tokens,
    logger: d.logger,
    version: VERSION,
    port,
    onCall: (line: string) => d.logger.line(line),
  });
  const base = `http://127.0.0.1:${server.port}`;
  const removeDiscovery = project
    ? writeDiscovery({
        project: project.path,
        pid: process.pid,
        url: base,
        port: server.port,
        token: d.tokens.agent,
        mcp_url: `${base}/mcp`,
        started_at: new Date().toISOString(),
      })
    : () => undefined;
  return {
    port: server.port,
    close: async () => {
      removeDiscovery();
      await server.close();
    },
  };
}

/**
 * Registers the registry's tools as VS Code language-model tools (called as the install's agent, client
 * `vscode-chat-agent`) and the MCP server definition provider (marginalia.provideMcpServer); pushes both to
 * `context.subscriptions`.
 */
export function registerChatSurfaces(context: vscode.ExtensionContext, core: SurfaceDeps & { controller: ProjectController }): void {
  const { pipeline, agent, tokens } = core;
  context.subscriptions.push(
    registerLmTools(pipeline, [...TOOLS, ...EDITOR_TOOLS], () => agent.implicitCaller(`Bearer ${tokens.agent}`, LM_CLIENT_NAME, 'CUSTOM', 'vscode-chat-agent')),
    registerMcpProvider({ controller: core.controller, tokens, enabled: settings.provideMcpServer, version: VERSION }),
  );
}
