import * as vscode from 'vscode';
import type { AgentContext, Tokens } from '../../agent/agentContext';
import { TRUST_LEVELS, type TrustLevel } from '../../agent/config';
import { CATEGORY_RULES, LOCKED_TOOLS, strength } from '../../agent/trust';
import type { ApprovalRecord } from '../../domain/ports';
import type { ApprovalsView } from '../approvals/approvalsView';
import type { AgentTokenSecrets } from '../host/tokens';
import { connectedAgentsCommands } from './connectAgent';
import type { ConnectedAgentsView } from './connectedAgentsView';
import type { ProjectController } from '../projectController';
import type { Workbench } from '../workbench';

/** What the agent commands use. */
export interface AgentCommandDeps {
  wb: Workbench;
  agent: AgentContext;
  approvals: ApprovalsView;
  tokens: Tokens;
  controller: ProjectController;
  /** the extension's folder (for the bundled `bin/marginalia.js`) */
  extensionPath: string;
  /** the Connected Agents view (redrawn after Connect, End Session, Revoke) */
  connectedAgents: ConnectedAgentsView;
  /** where the tokens of the agent credentials Connect an Agent issued are kept */
  agentSecrets: AgentTokenSecrets;
}

function requestIdOf(arg: string | ApprovalRecord | undefined): string | undefined {
  return typeof arg === 'string' ? arg : arg?.request_id;
}

/**
 * The levels a tool may be set to in the settings: its category's default and allowed overrides, never
 * below a lock (spec section 5).
 */
export function allowedLevels(category: keyof typeof CATEGORY_RULES, tool: string, defaultLevel: TrustLevel): TrustLevel[] {
  const rule = CATEGORY_RULES[category];
  const def = rule.default === 'config_default' ? defaultLevel : rule.default;
  const lock = LOCKED_TOOLS[tool];
  return TRUST_LEVELS.filter((l) => (l === def || rule.overridable.includes(l)) && (!lock || strength(l) >= strength(lock)));
}

/** Command handlers of the agent-context UI, keyed by command id (merged into the one command table). */
export function registerAgentCommands(d: AgentCommandDeps): Record<string, (...args: any[]) => unknown> {
  return {
    'marginalia.approvals.approve': (arg?: string | ApprovalRecord) => {
      const id = requestIdOf(arg);
      return id ? d.approvals.approve(id) : undefined;
    },
    'marginalia.approvals.reject': (arg?: string | ApprovalRecord, reason?: string) => {
      const id = requestIdOf(arg);
      return id ? d.approvals.reject(id, reason ?? '') : undefined;
    },
    'marginalia.approvals.edit': (arg?: string | ApprovalRecord) => {
      const id = requestIdOf(arg);
      return id ? d.approvals.edit(id) : undefined;
    },
    'marginalia.trust.edit': async () => {
      const cfg = d.agent.config;
      const rows = d.agent.trust.table();
      const pick = await vscode.window.showQuickPick(
        rows.map((r) => ({
          label: `${r.locked ? '$(lock) ' : ''}${r.tool}`,
          description: `${r.level}${r.source !== 'default' ? ` (${r.source})` : ''}`,
          detail: `category ${r.category}; may be ${allowedLevels(r.category, r.tool, cfg.trust.default_level).join(', ')}${r.locked ? ` — locked at ${LOCKED_TOOLS[r.tool]} or stricter` : ''}`,
          row: r,
        })),
        { title: 'Marginalia trust levels: pick a tool to change', matchOnDetail: true },
      );
      if (!pick) return undefined;
      const levels = allowedLevels(pick.row.category, pick.row.tool, cfg.trust.default_level);
      if (levels.length <= 1) {
        void vscode.window.showInformationMessage(`${pick.row.tool} is fixed at ${pick.row.level}: its category (${pick.row.category}) cannot be overridden.`);
        return undefined;
      }
      const level = await vscode.window.showQuickPick(levels, { title: `Trust level of ${pick.row.tool}` });
      if (!level) return undefined;
      const conf = vscode.workspace.getConfiguration('marginalia');
      const overrides = { ...conf.get<Record<string, TrustLevel>>('trust.overrides', {}), [pick.row.tool]: level as TrustLevel };
      await conf.update('trust.overrides', overrides, vscode.ConfigurationTarget.Workspace);
      return level;
    },
    ...connectedAgentsCommands(d),
  };
}

/**
 * Offers Marginalia's MCP server to VS Code (opt-in, `marginalia.mcp.provideServerDefinition`): off by
 * default because Copilot already gets every tool as a language-model tool and would see them twice.
 * Uses `lm.registerMcpServerDefinitionProvider` (VS Code 1.101+) when it exists.
 */
export function registerMcpProvider(d: { controller: ProjectController; tokens: Tokens; enabled: () => boolean; version: string }): vscode.Disposable {
  const lm = vscode.lm as unknown as { registerMcpServerDefinitionProvider?: (id: string, provider: unknown) => vscode.Disposable };
  const Def = (
    vscode as unknown as { McpHttpServerDefinition?: new (label: string, uri: vscode.Uri, headers: Record<string, string>, version: string) => unknown }
  ).McpHttpServerDefinition;
  if (!lm.registerMcpServerDefinitionProvider || !Def) return new vscode.Disposable(() => undefined);
  const changed = new vscode.EventEmitter<void>();
  const subs = [
    d.controller.onDidChangeServer(() => changed.fire()),
    vscode.workspace.onDidChangeConfiguration((e) => e.affectsConfiguration('marginalia.mcp') && changed.fire()),
  ];
  const registration = lm.registerMcpServerDefinitionProvider('marginalia.mcp', {
    onDidChangeMcpServerDefinitions: changed.event,
    provideMcpServerDefinitions: () => {
      const s = d.controller.serverState;
      if (!d.enabled() || s.state !== 'running') return [];
      return [
        new Def(
          'Marginalia',
          vscode.Uri.parse(`http://127.0.0.1:${s.port}/mcp`),
          { Authorization: `Bearer ${d.tokens.agent}`, 'X-Marginalia-Client': 'VS Code MCP' },
          d.version,
        ),
      ];
    },
    resolveMcpServerDefinition: (server: unknown) => server,
  });
  return vscode.Disposable.from(registration, changed, ...subs);
}
