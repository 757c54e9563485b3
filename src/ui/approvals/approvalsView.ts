import * as vscode from 'vscode';
import type { AgentContext } from '../../agent/agentContext';
import type { ApprovalRecord } from '../../domain/ports';
import { escapeMd } from '../trees/codesTreeProvider';
import type { Workbench } from '../workbench';

/**
 * The Pending Approvals view (`marginalia.approvals`) and the approval notification: every request an
 * agent makes at trust level suggest or require shows as a notification with Approve / Reject / Edit and
 * stays in this view until decided (requests survive a restart, so the view reloads them on open).
 * Decisions go through the pipeline as the researcher; a session can never approve its own request.
 */
export class ApprovalsView implements vscode.TreeDataProvider<ApprovalRecord>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<ApprovalRecord | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  readonly view: vscode.TreeView<ApprovalRecord>;
  private readonly notified = new Set<string>();

  constructor(
    private readonly wb: Workbench,
    private readonly agent: AgentContext,
  ) {
    this.view = vscode.window.createTreeView('marginalia.approvals', { treeDataProvider: this });
  }

  /** Redraws, and updates the badge with the number of pending requests. */
  refresh(): void {
    this.changed.fire(undefined);
    const n = this.pending().length;
    this.view.badge = n > 0 ? { value: n, tooltip: `${n} agent request(s) wait for your approval` } : undefined;
  }

  /** Pending requests, oldest first. */
  pending(): ApprovalRecord[] {
    return this.wb.repo() ? this.agent.listApprovals('pending') : [];
  }

  getChildren(node?: ApprovalRecord): ApprovalRecord[] {
    return node ? [] : this.pending();
  }

  getTreeItem(a: ApprovalRecord): vscode.TreeItem {
    const item = new vscode.TreeItem(a.description);
    item.id = `approval:${a.request_id}`;
    item.contextValue = 'approval';
    item.iconPath = new vscode.ThemeIcon(a.trust_level === 'require' ? 'shield' : 'lightbulb');
    item.description = `${a.client_name} · ${a.trust_level} · until ${a.expires_at.slice(11, 19)}`;
    // the client name is the agent's own claim: rendered as text, never as Markdown (links, images, HTML)
    item.tooltip = new vscode.MarkdownString().appendMarkdown(`**${escapeMd(a.tool)}** requested by `).appendText(`${a.client_name} (session ${a.session_id})`).appendMarkdown('\n\n').appendCodeblock(prettyArgs(a.arguments), 'json');
    return item;
  }

  /** Shows a notification for a new request: Approve, Reject, or Edit (change the arguments, then approve). */
  async notify(requestId: string): Promise<void> {
    if (this.notified.has(requestId)) return;
    this.notified.add(requestId);
    const a = this.pending().find((x) => x.request_id === requestId);
    if (!a) return;
    const choice = await vscode.window.showInformationMessage(`${a.client_name} asks to ${a.description}`, 'Approve', 'Reject', 'Edit…');
    if (choice === 'Approve') await this.approve(requestId);
    else if (choice === 'Reject') await this.reject(requestId);
    else if (choice === 'Edit…') await this.edit(requestId);
  }

  /** Approves and runs a request. Returns whether it ran. */
  async approve(requestId: string, editedArguments?: unknown): Promise<boolean> {
    const outcome = await this.agent.approve(this.wb.caller(), requestId, editedArguments);
    this.refresh();
    if (!outcome.envelope.success) {
      void vscode.window.showErrorMessage(`Approval failed: ${outcome.envelope.error}`);
      return false;
    }
    return true;
  }

  /** Rejects a request, asking for an optional reason unless one is given. */
  async reject(requestId: string, reason?: string): Promise<boolean> {
    const why = reason ?? (await vscode.window.showInputBox({ title: 'Reason for rejecting (optional)', prompt: 'The agent is told this reason' }));
    if (why === undefined && reason === undefined) return false;
    const outcome = this.agent.reject(this.wb.caller(), requestId, why || undefined);
    this.refresh();
    if (!outcome.envelope.success) void vscode.window.showErrorMessage(`Rejecting failed: ${outcome.envelope.error}`);
    return outcome.envelope.success;
  }

  /** Opens the request's arguments as JSON for change; approving runs it with the edited arguments. */
  async edit(requestId: string): Promise<void> {
    const a = this.pending().find((x) => x.request_id === requestId);
    if (!a) return;
    const doc = await vscode.workspace.openTextDocument({ language: 'json', content: prettyArgs(a.arguments) });
    await vscode.window.showTextDocument(doc);
    const choice = await vscode.window.showInformationMessage(`Edit the arguments of "${a.tool}", then approve.`, 'Approve Edited', 'Cancel');
    if (choice !== 'Approve Edited') return;
    let edited: unknown;
    try {
      edited = JSON.parse(doc.getText());
    } catch (e) {
      void vscode.window.showErrorMessage(`The arguments are not valid JSON: ${(e as Error).message}`);
      return;
    }
    await this.approve(requestId, edited);
  }

  dispose(): void {
    this.view.dispose();
    this.changed.dispose();
  }
}

function prettyArgs(json: string): string {
  try {
    return JSON.stringify(JSON.parse(json), null, 2);
  } catch {
    return json;
  }
}
