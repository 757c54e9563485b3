import * as vscode from 'vscode';
import type { AgentContext } from '../../agent/agentContext';
import { countOf } from '../../core/plural';
import type { ApprovalRecord } from '../../domain/ports';
import { describeCall, toolTitle } from '../activity/activityHistory';
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
    // the badge shows on the Marginalia Supervision icon in the activity bar too (issue 13, item 10)
    this.view.badge = n > 0 ? { value: n, tooltip: `${countOf(n, 'agent request')} ${n === 1 ? 'waits' : 'wait'} for your approval` } : undefined;
  }

  /** Pending requests, oldest first. */
  pending(): ApprovalRecord[] {
    return this.wb.repo() ? this.agent.listApprovals('pending') : [];
  }

  getChildren(node?: ApprovalRecord): ApprovalRecord[] {
    return node ? [] : this.pending();
  }

  /** A request in words ("Merge 'Trust' (12 passages) into 'Belonging'"): its stored description, or one made now when it was stored in the developer form. */
  words(a: ApprovalRecord): string {
    return describeCall(this.wb.repo(), a.tool, a.arguments, a.description);
  }

  getTreeItem(a: ApprovalRecord): vscode.TreeItem {
    const words = this.words(a);
    const item = new vscode.TreeItem(words);
    item.id = `approval:${a.request_id}`;
    item.contextValue = 'approval';
    item.iconPath = new vscode.ThemeIcon(a.trust_level === 'require' ? 'shield' : 'lightbulb');
    item.description = `${a.client_name} · ${a.trust_level === 'require' ? 'needs approval' : 'suggestion'} · until ${a.expires_at.slice(11, 16)}`;
    // the client name and the words (names, excerpts) come from agents: rendered as text, never as Markdown
    item.tooltip = new vscode.MarkdownString()
      .appendText(`${a.client_name} asks to ${lowerFirst(words)}`)
      .appendMarkdown(
        `\n\n*${escapeMd(toolTitle(a.tool))}* · trust level ${escapeMd(a.trust_level)} · asked ${escapeMd(a.created_at.slice(11, 16))} UTC, expires ${escapeMd(a.expires_at.slice(11, 16))} UTC`,
      )
      .appendMarkdown('\n\nApprove or Reject from the notification or this item; *Edit…* opens the arguments to change before approving.');
    item.accessibilityInformation = { label: `${a.client_name} asks to ${lowerFirst(words)}` };
    return item;
  }

  /** Shows a notification for a new request: Approve, Reject, or Edit (change the arguments, then approve). */
  async notify(requestId: string): Promise<void> {
    if (this.notified.has(requestId)) return;
    this.notified.add(requestId);
    const a = this.pending().find((x) => x.request_id === requestId);
    if (!a) return;
    const choice = await vscode.window.showInformationMessage(`${a.client_name} asks to ${lowerFirst(this.words(a))}`, 'Approve', 'Reject', 'Edit…');
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
    const choice = await vscode.window.showInformationMessage(
      `Edit the arguments of "${lowerFirst(this.words(a))}", then approve.`,
      'Approve Edited',
      'Cancel',
    );
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

/** `s` with its first letter in lower case: a request in words after "Claude asks to" (they start with a verb). */
function lowerFirst(s: string): string {
  return s.charAt(0).toLowerCase() + s.slice(1);
}

function prettyArgs(json: string): string {
  try {
    return JSON.stringify(JSON.parse(json), null, 2);
  } catch {
    return json;
  }
}
