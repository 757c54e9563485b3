import * as vscode from 'vscode';
import type { ProjectController, ServerState } from './projectController';

/**
 * The status bar item: the open project, the tool server's state (port, or why it is not running) and
 * how many agents were active in the last five minutes. Click: the server log.
 */
export class MarginaliaStatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('marginalia.status', vscode.StatusBarAlignment.Left, 50);
  private readonly seen = new Map<string, number>();
  private readonly timer: NodeJS.Timeout;
  private readonly subscriptions: vscode.Disposable[] = [];

  constructor(private readonly controller: ProjectController) {
    this.item.name = 'Marginalia';
    this.item.command = 'marginalia.server.showLog';
    this.subscriptions.push(
      controller.onDidChangeProject(() => this.render()),
      controller.onDidChangeServer(() => this.render()),
    );
    this.timer = setInterval(() => this.render(), 30_000);
    this.render();
  }

  /** Notes activity from an agent session (any session but the researcher's). */
  agentActive(sessionId: string): void {
    const known = this.seen.has(sessionId);
    this.seen.set(sessionId, Date.now());
    if (!known) this.render();
  }

  /** Agents with a call in the last five minutes. */
  get connectedAgents(): number {
    const cutoff = Date.now() - 5 * 60_000;
    for (const [k, t] of this.seen) if (t < cutoff) this.seen.delete(k);
    return this.seen.size;
  }

  /** The text currently shown (for tests). */
  get text(): string {
    return this.item.text;
  }

  private noticeItem: vscode.StatusBarItem | undefined;
  private noticeTimer: NodeJS.Timeout | undefined;

  /**
   * Shows a short message beside the project (e.g. "Undid: coded 'Food security' in interview-04") for
   * `ms` milliseconds (default 5000), replacing any message still shown.
   */
  showNotice(message: string, ms = 5000, icon = '$(discard)'): void {
    this.noticeItem ??= vscode.window.createStatusBarItem('marginalia.notice', vscode.StatusBarAlignment.Left, 49);
    this.noticeItem.name = 'Marginalia: last undo or redo';
    this.noticeItem.text = `${icon} ${message}`;
    this.noticeItem.tooltip = message;
    this.noticeItem.show();
    if (this.noticeTimer) clearTimeout(this.noticeTimer);
    this.noticeTimer = setTimeout(() => {
      this.noticeTimer = undefined;
      this.noticeItem?.hide();
    }, ms);
  }

  /** The message {@link showNotice} shows now, without its icon; undefined when none (for tests). */
  get notice(): string | undefined {
    return this.noticeTimer && this.noticeItem ? this.noticeItem.text.replace(/^\$\([a-z-]+\) /, '') : undefined;
  }

  private render(): void {
    const project = this.controller.current();
    if (!project) {
      this.item.text = '$(book) Marginalia: no project';
      this.item.tooltip = 'Open or create a project (Marginalia: Open Project / New Project)';
      this.item.show();
      return;
    }
    const s: ServerState = this.controller.serverState;
    const server = s.state === 'running' ? `$(radio-tower) :${s.port}` : s.state === 'failed' ? '$(warning) server off' : '$(circle-slash) server off';
    const agents = this.connectedAgents;
    this.item.text = `$(book) ${project.name}  ${server}  $(hubot) ${agents}`;
    this.item.tooltip = new vscode.MarkdownString(
      `**${project.name}**\n\n${project.path}\n\nTool server: ${s.state === 'running' ? `http://127.0.0.1:${s.port}` : s.state === 'failed' ? `not running (${s.reason})` : 'not running'}\n\nAgents active in the last 5 minutes: ${agents}`,
    );
    this.item.show();
  }

  dispose(): void {
    clearInterval(this.timer);
    if (this.noticeTimer) clearTimeout(this.noticeTimer);
    this.noticeItem?.dispose();
    for (const s of this.subscriptions) s.dispose();
    this.item.dispose();
  }
}
