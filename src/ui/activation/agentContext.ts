/**
 * The agent context of the extension (src/agent/agentContext.ts): sessions, trust, rate limits, audit and
 * credentials of the open project, configured from `.marginalia/config.yaml` beside the project with the VS Code
 * settings (`marginalia.trust`, `marginalia.rateLimits`, `marginalia.audit`) on top.
 */
import * as vscode from 'vscode';
import { AgentContext, type Tokens } from '../../agent/agentContext';
import { TrustPolicy } from '../../agent/trust';
import { ALL_TOOLS } from '../../cli/compose';
import { fileAgentCredentialStorage, fileAuditStorage, readConfigText } from '../../cli/credentials';
import type { OpenProject } from '../../tools/context';
import { openProjectCredentialStorage } from '../agents/credentialStore';
import type { OutputLogger } from '../host/outputLogger';
import { applySettingOverrides, settings } from '../host/settings';

/** The agent context and how to reload its configuration for a project file. */
export interface ExtensionAgent {
  agent: AgentContext;
  /** Loads `.marginalia/config.yaml` beside `file` with the settings on top; problems are shown in an error message, defaults kept. */
  reloadConfig(file: string): void;
}

/**
 * Makes the agent context: the open project's agent credentials are in the file `marginalia agent
 * add|list|revoke --project P` uses, its audit log is the project's (none while no project is open).
 */
export function createAgentContext(d: { tokens: Tokens; logger: OutputLogger; project: () => OpenProject | null }): ExtensionAgent {
  const configProblems: string[] = [];
  const auditOf = (current: OpenProject) => fileAuditStorage(current.path, () => agent.config.audit.log_path);
  const agent: AgentContext = new AgentContext({
    tools: ALL_TOOLS,
    project: d.project,
    tokens: d.tokens,
    researcherName: () => settings.coderName(),
    credentials: openProjectCredentialStorage(() => d.project()?.path, fileAgentCredentialStorage),
    overrides: (cfg) =>
      applySettingOverrides(
        cfg,
        (p, l) => TrustPolicy.checkOverride(ALL_TOOLS, p, l, cfg.trust.default_level),
        (m) => configProblems.push(m),
      ),
    audit: {
      append: (line) => {
        const current = d.project();
        if (current) auditOf(current).append(line);
      },
      read: async () => {
        const current = d.project();
        return current ? auditOf(current).read() : '';
      },
      rewrite: (transform) => {
        const current = d.project();
        return current ? (auditOf(current).rewrite?.(transform) ?? null) : null;
      },
    },
    logger: d.logger,
  });
  const reloadConfig = (file: string) => {
    configProblems.length = 0;
    try {
      agent.reload(readConfigText(file));
    } catch (e) {
      configProblems.push((e as Error).message);
      agent.reload(undefined);
    }
    if (configProblems.length > 0) void vscode.window.showErrorMessage(`Marginalia configuration: ${configProblems.join('; ')}`);
  };
  return { agent, reloadConfig };
}

/** Reloads the open project's configuration when a setting that overrides it changes. */
export function watchAgentSettings(project: () => OpenProject | null, reloadConfig: (file: string) => void): vscode.Disposable {
  return vscode.workspace.onDidChangeConfiguration((e) => {
    const current = project();
    if (
      current &&
      (e.affectsConfiguration('marginalia.trust') || e.affectsConfiguration('marginalia.rateLimits') || e.affectsConfiguration('marginalia.audit'))
    )
      reloadConfig(current.path);
  });
}
