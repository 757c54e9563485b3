import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import type { FromActivityWebview, ToActivityWebview } from '../../protocol/activity';
import { undoAgentActionTool } from '../../tools/editorTools';
import type { ApprovalsView } from '../approvals/approvalsView';
import type { Workbench } from '../workbench';
import type { ActivityLog } from './activityLog';

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
      log.onDidChange((item) => (item ? this.post({ type: 'upsert', item }) : this.post({ type: 'items', items: [...log.all()] }))),
    );
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    this.ready = false;
    const root = vscode.Uri.joinPath(this.extensionUri, 'dist', 'webview');
    view.webview.options = { enableScripts: true, localResourceRoots: [root] };
    const nonce = randomBytes(16).toString('base64');
    const script = view.webview.asWebviewUri(vscode.Uri.joinPath(root, 'activity.js'));
    const csp = `default-src 'none'; style-src ${view.webview.cspSource} 'nonce-${nonce}'; script-src 'nonce-${nonce}';`;
    view.webview.html = `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1"><style nonce="${nonce}">${STYLE}</style></head>
<body><div id="empty">No agent activity yet. Connect an agent (Marginalia: Connect an Agent...) and its actions show here.</div>
<div id="viewport"><div id="spacer"></div><div id="rows"></div></div><script nonce="${nonce}" src="${script}"></script></body></html>`;
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

const STYLE = `
body { padding: 0; margin: 0; font-family: var(--vscode-font-family); font-size: var(--vscode-font-size); color: var(--vscode-foreground); }
#empty { padding: 8px 12px; color: var(--vscode-descriptionForeground); }
#viewport { position: absolute; inset: 0; overflow-y: auto; }
#spacer { position: relative; }
#rows { position: absolute; top: 0; left: 0; right: 0; }
.row { position: absolute; left: 0; right: 0; height: 46px; box-sizing: border-box; padding: 3px 8px; border-bottom: 1px solid var(--vscode-panel-border); }
.head { display: flex; gap: 6px; align-items: baseline; white-space: nowrap; overflow: hidden; }
.badge { font-size: 0.8em; padding: 0 4px; border-radius: 3px; background: var(--vscode-badge-background); color: var(--vscode-badge-foreground); }
.status-failed .badge, .status-rejected .badge { background: var(--vscode-inputValidation-errorBackground); }
.status-pending_approval .badge, .status-queued .badge { background: var(--vscode-inputValidation-warningBackground); }
.tool { font-weight: 600; }
.who { color: var(--vscode-descriptionForeground); margin-left: auto; }
.desc { white-space: nowrap; overflow: hidden; text-overflow: ellipsis; color: var(--vscode-descriptionForeground); }
.actions { position: absolute; right: 6px; bottom: 3px; display: flex; gap: 4px; }
.act { font-size: 0.85em; padding: 0 6px; color: var(--vscode-button-foreground); background: var(--vscode-button-background); border: none; border-radius: 2px; cursor: pointer; }
`;
