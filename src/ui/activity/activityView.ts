import * as vscode from 'vscode';
import { loadWebviewScript } from '../webviewScript';
import type { FromActivityWebview, ToActivityWebview } from '../../protocol/activity';
import { undoAgentActionTool } from '../../tools/editorTools';
import type { ApprovalsView } from '../approvals/approvalsView';
import type { Workbench } from '../workbench';
import type { ActivityLog } from './activityLog';
import { activityHtml } from './activityPage';

/**
 * The Agent Activity view (`marginalia.activity`): a webview listing the agents' actions with their
 * statuses, Approve/Reject for pending ones and Undo where the spec allows it. Strict CSP with a nonce;
 * scripts only from `dist/webview`; the page renders text only.
 */
export class ActivityView implements vscode.WebviewViewProvider, vscode.Disposable {
  static readonly viewType = 'marginalia.activity';
  private view: vscode.WebviewView | undefined;
  private ready = false;
  private readonly subscriptions: vscode.Disposable[] = [];

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly log: ActivityLog,
    private readonly wb: Workbench,
    private readonly approvals: ApprovalsView,
  ) {
    this.subscriptions.push(
      vscode.window.registerWebviewViewProvider(ActivityView.viewType, this),
      // the whole list only while the view shows (reading it may rebuild it from the event log)
      log.onDidChange((item) =>
        item ? this.post({ type: 'upsert', item }) : this.view && this.ready ? this.post({ type: 'items', items: [...log.all()] }) : undefined,
      ),
    );
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    this.ready = false;
    loadWebviewScript(view.webview, this.extensionUri, 'activity.js', activityHtml);
    this.subscriptions.push(
      view.webview.onDidReceiveMessage((m: FromActivityWebview) => void this.onMessage(m)),
      view.onDidDispose(() => {
        this.view = undefined;
        this.ready = false;
      }),
    );
  }

  private async onMessage(m: FromActivityWebview): Promise<void> {
    if (m.type === 'ready') {
      this.ready = true;
      this.post({ type: 'items', items: [...this.log.all()] });
    } else if (m.type === 'approve') await this.approvals.approve(m.request_id);
    else if (m.type === 'reject') await this.approvals.reject(m.request_id);
    else if (m.type === 'undo') {
      const item = this.log.all().find((x) => x.id === m.id);
      if (!item?.correlation_id) return void vscode.window.showWarningMessage('This action cannot be undone.');
      const r = await this.wb.call(undoAgentActionTool, { correlation_id: item.correlation_id });
      if (r) this.log.markUndone(item.id);
    }
  }

  private post(m: ToActivityWebview): void {
    if (this.view && this.ready) void this.view.webview.postMessage(m);
  }

  dispose(): void {
    for (const s of this.subscriptions) s.dispose();
  }
}
