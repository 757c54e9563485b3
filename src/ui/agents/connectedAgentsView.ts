import * as vscode from 'vscode';
import type { AgentContext } from '../../agent/agentContext';
import { BUILTIN_AGENT, RESEARCHER_OWNER } from '../../agent/agentCredentials';
import { isAgentSession, type Session } from '../../agent/sessions';
import type { Disposable } from '../../core/lifecycle';
import type { EventRecord } from '../../domain/events';
import { agentDescription, agentState, relativeTime, sessionDescription, type AgentState, type SessionFacts } from './clientConfig';

/** A row of Connected Agents: an agent credential, or one of its live sessions. */
export type AgentsNode = { kind: 'agent'; name: string } | { kind: 'session'; agent: string; session_id: string };

/** An agent as the view shows it: its credential, its live sessions, its pending requests. */
export interface AgentRow {
  name: string;
  /** true for the install's own token (`MARGINALIA_TOKEN`, the discovery file): listed while it has sessions, never revoked here */
  builtin: boolean;
  created_at: string | null;
  last_used_at: string | null;
  state: AgentState;
  sessions: Session[];
  /** approval requests of this agent still pending */
  pending: number;
}

/** How long (ms) refreshes are gathered into one redraw. */
const THROTTLE_MS = 200;
/** How often (ms) the visible view redraws, so relative times and idle states stay true without events. */
const TICK_MS = 15_000;

function facts(s: Session): SessionFacts {
  return { session_id: s.session_id, client_name: s.client_name, status: s.status, last_activity: s.last_activity, model: s.model ?? null };
}

/**
 * The Connected Agents view (`marginalia.agents`, Marginalia Supervision; issue 14 items 2 and 3): one row per
 * agent credential of the open project (description: state connected / idle / not connected, client, model,
 * last activity in words, pending request count) with its live sessions as children; context menu End Session
 * and Revoke Agent (src/ui/agents/agentCommands.ts). Redraws, at most every 200 ms, when a session connects or
 * disconnects, an approval request changes, a credential is revoked, or {@link refresh} is called; every 15 s
 * while visible.
 */
export class ConnectedAgentsView implements vscode.TreeDataProvider<AgentsNode>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<AgentsNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  readonly view: vscode.TreeView<AgentsNode>;
  private timer: NodeJS.Timeout | undefined;
  private ticker: NodeJS.Timeout | undefined;
  private readonly subs: (Disposable | vscode.Disposable)[] = [];
  /** the rows of the last root listing: the items and children of one redraw read the same state */
  private rows: AgentRow[] | undefined;

  constructor(
    private readonly agent: AgentContext,
    private readonly projectOpen: () => boolean,
    onEvents: (listener: (events: EventRecord[]) => void) => Disposable,
  ) {
    this.view = vscode.window.createTreeView('marginalia.agents', { treeDataProvider: this, showCollapseAll: false });
    this.subs.push(
      onEvents((events) => {
        if (events.some((e) => e.event_type.startsWith('session.') || e.event_type.startsWith('approval.') || e.event_type.startsWith('agent.')))
          this.refresh();
      }),
      this.agent.credentials.onRevoked(() => this.refresh()),
      this.view.onDidChangeVisibility((e) => this.tick(e.visible)),
      this.view,
      this.changed,
    );
    this.tick(this.view.visible);
  }

  private tick(visible: boolean): void {
    if (this.ticker) clearInterval(this.ticker);
    this.ticker = visible ? setInterval(() => this.refresh(), TICK_MS) : undefined;
  }

  /** Redraws the view soon (refreshes within 200 ms make one redraw). */
  refresh(): void {
    this.rows = undefined;
    this.timer ??= setTimeout(() => {
      this.rows = undefined;
      this.timer = undefined;
      // no badge of its own: Pending Approvals' badge counts the same requests on the Supervision icon
      this.changed.fire(undefined);
    }, THROTTLE_MS);
  }

  /**
   * The agents of the open project, by name (case-insensitive): every credential, and the install's own
   * token (`agent`) while it has live sessions. Empty while no project is open.
   */
  agents(): AgentRow[] {
    if (!this.projectOpen()) return [];
    const sessions = this.agent.sessions.list();
    const byOwner = new Map<string, Session[]>();
    for (const s of sessions) {
      if (!isAgentSession(s)) continue;
      byOwner.set(s.owner, [...(byOwner.get(s.owner) ?? []), s]);
    }
    const pending = this.pendingByAgent();
    const rows: AgentRow[] = this.agent.credentials.list().map((c) => {
      const mine = byOwner.get(c.name) ?? [];
      byOwner.delete(c.name);
      return {
        name: c.name,
        builtin: false,
        created_at: c.created_at,
        last_used_at: c.last_used_at,
        state: agentState(mine),
        sessions: mine,
        pending: pending.get(c.name) ?? 0,
      };
    });
    // sessions of the install's own token, or of a credential revoked a moment ago by another process
    for (const [owner, mine] of byOwner) {
      rows.push({
        name: owner,
        builtin: owner === BUILTIN_AGENT,
        created_at: null,
        last_used_at: null,
        state: agentState(mine),
        sessions: mine,
        pending: pending.get(owner) ?? 0,
      });
    }
    return rows.sort((a, b) => a.name.localeCompare(b.name, undefined, { sensitivity: 'base' }));
  }

  /** Pending approval requests per agent: the owner of the session that made each (also when it has ended since). */
  private pendingByAgent(): Map<string, number> {
    const out = new Map<string, number>();
    for (const a of this.agent.listApprovals('pending')) {
      const owner = this.agent.sessions.ownerOf(a.session_id);
      if (owner && owner !== RESEARCHER_OWNER) out.set(owner, (out.get(owner) ?? 0) + 1);
    }
    return out;
  }

  getChildren(node?: AgentsNode): AgentsNode[] {
    if (!node) {
      this.rows = this.agents();
      return this.rows.map((a) => ({ kind: 'agent', name: a.name }));
    }
    if (node.kind === 'session') return [];
    const row = this.row(node.name);
    return (row?.sessions ?? []).map((s) => ({ kind: 'session', agent: node.name, session_id: s.session_id }));
  }

  private row(name: string): AgentRow | undefined {
    return (this.rows ?? (this.rows = this.agents())).find((a) => a.name === name);
  }

  getParent(node: AgentsNode): AgentsNode | undefined {
    return node.kind === 'session' ? { kind: 'agent', name: node.agent } : undefined;
  }

  getTreeItem(node: AgentsNode): vscode.TreeItem {
    const now = Date.now();
    if (node.kind === 'session') {
      const s = this.agent.sessions.get(node.session_id);
      const item = new vscode.TreeItem(s?.client_name || 'session', vscode.TreeItemCollapsibleState.None);
      item.id = `agent-session:${node.session_id}`;
      item.contextValue = 'agentSession';
      if (!s) {
        item.description = 'ended';
        return item;
      }
      item.description = sessionDescription(facts(s), now);
      item.iconPath = new vscode.ThemeIcon('plug', s.status === 'ACTIVE' ? new vscode.ThemeColor('charts.green') : undefined);
      // client names and models come from agents: text, never Markdown
      item.tooltip = new vscode.MarkdownString().appendText(
        [
          `${s.client_name} (${s.client_type}) as ${node.agent}`,
          `Session ${s.session_id}`,
          `Status ${s.status.toLowerCase()}; connected ${s.created_at.slice(0, 16).replace('T', ' ')} UTC; last activity ${relativeTime(s.last_activity, now)}`,
          s.model ? `Model ${s.model}` : '',
          s.subscriptions.length > 0 ? `${s.subscriptions.length} event subscription${s.subscriptions.length === 1 ? '' : 's'}` : '',
        ]
          .filter(Boolean)
          .join('\n\n'),
      );
      item.accessibilityInformation = { label: `Session of ${node.agent} with ${s.client_name}, ${item.description}` };
      return item;
    }
    const row = this.row(node.name);
    const item = new vscode.TreeItem(
      node.name,
      row && row.sessions.length > 0 ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.None,
    );
    item.id = `agent:${node.name}`;
    item.contextValue = row?.builtin ? 'agentBuiltin' : 'agent';
    if (!row) {
      item.description = 'revoked';
      return item;
    }
    item.description = agentDescription(row, row.sessions.map(facts), row.pending, now);
    const color = row.state === 'connected' ? 'charts.green' : row.state === 'idle' ? 'charts.yellow' : undefined;
    item.iconPath = new vscode.ThemeIcon(row.state === 'not connected' ? 'circle-outline' : 'hubot', color ? new vscode.ThemeColor(color) : undefined);
    item.tooltip = new vscode.MarkdownString().appendText(
      [
        row.builtin ? `${row.name}: the install's own agent token (MARGINALIA_TOKEN, discovery file)` : `Agent ${row.name}`,
        `State ${row.state}${row.sessions.length > 0 ? ` (${row.sessions.length} session${row.sessions.length === 1 ? '' : 's'})` : ''}`,
        row.created_at ? `Credential issued ${row.created_at.slice(0, 16).replace('T', ' ')} UTC; last used ${relativeTime(row.last_used_at, now)}` : '',
        row.pending > 0 ? `${row.pending} request${row.pending === 1 ? '' : 's'} wait${row.pending === 1 ? 's' : ''} in Pending Approvals` : '',
      ]
        .filter(Boolean)
        .join('\n\n'),
    );
    item.accessibilityInformation = { label: `Agent ${row.name}, ${item.description}` };
    return item;
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    if (this.ticker) clearInterval(this.ticker);
    for (const s of this.subs) void s.dispose();
  }
}
