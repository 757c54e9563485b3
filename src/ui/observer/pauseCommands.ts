/**
 * Pause Agents / Resume Agents in VS Code (issue 14 item 9): commands `marginalia.agents.pause`,
 * `marginalia.agents.resume` and `marginalia.agents.togglePause`, and a status bar item that says whether agents
 * are paused ("$(debug-pause) Agents paused", click resumes) or, in hybrid mode, that VS Code observes them
 * ("$(eye) Observing agents", click pauses). Pausing holds every agent call as pending until Resume
 * (AgentContext.pause); the item follows pauses made elsewhere too (`marginalia watch`, `POST /agents/pause`).
 */
import * as vscode from 'vscode';
import type { AgentContext } from '../../agent/agentContext';
import type { Caller } from '../../agent/pipeline';
import type { MarginaliaMode } from './agentFollower';

/** What the pause commands need. */
export interface PauseDeps {
  agent: AgentContext;
  /** the researcher's caller (Workbench.caller) */
  caller(): Caller;
  mode(): MarginaliaMode;
}

/** The pause commands and their status bar item. */
export class PauseCommands implements vscode.Disposable {
  readonly item: vscode.StatusBarItem;
  private readonly subscription: { dispose(): void };

  constructor(private readonly deps: PauseDeps) {
    this.item = vscode.window.createStatusBarItem('marginalia.agentsPaused', vscode.StatusBarAlignment.Left, 40);
    this.item.name = 'Marginalia: Agents';
    this.subscription = deps.agent.onDidChangePaused(() => this.update());
    this.update();
  }

  /** The command table entries (registered by the extension with the others). */
  commands(): Record<string, () => Promise<unknown>> {
    return {
      'marginalia.agents.pause': () => this.pause(),
      'marginalia.agents.resume': () => this.resume(),
      'marginalia.agents.togglePause': () => (this.deps.agent.paused ? this.resume() : this.pause()),
    };
  }

  /** Pauses every agent; returns the pause. */
  async pause(): Promise<{ paused: true; changed: boolean }> {
    const r = this.deps.agent.pause(this.deps.caller());
    this.update();
    if (r.changed)
      void vscode.window
        .showInformationMessage('Agents paused: every agent call now waits in Pending Approvals until you resume.', 'Resume Agents')
        .then((a) => (a ? this.resume() : undefined));
    return r;
  }

  /** Resumes agents: what the pause held runs now (suggestions stay pending). */
  async resume(): Promise<{ ran: number; failed: number; still_pending: number }> {
    const r = await this.deps.agent.resume(this.deps.caller());
    this.update();
    if (r.changed || r.requests.length > 0) {
      const failed = r.failed > 0 ? `, ${r.failed} failed` : '';
      void vscode.window.showInformationMessage(`Agents resumed: ${r.ran} held call${r.ran === 1 ? '' : 's'} ran${failed}.`);
    }
    return r;
  }

  /** Redraws the status bar item (also on a pause made elsewhere, and when the mode setting changes). */
  update(): void {
    const paused = this.deps.agent.paused;
    const hybrid = this.deps.mode() === 'hybrid';
    if (paused) {
      this.item.text = '$(debug-pause) Agents paused';
      this.item.tooltip = 'Every agent call waits in Pending Approvals. Click to resume agents.';
      this.item.command = 'marginalia.agents.resume';
      this.item.backgroundColor = new vscode.ThemeColor('statusBarItem.warningBackground');
      this.item.show();
    } else if (hybrid) {
      this.item.text = '$(eye) Observing agents';
      this.item.tooltip = 'Hybrid mode: VS Code follows what agents do. Click to pause agents.';
      this.item.command = 'marginalia.agents.pause';
      this.item.backgroundColor = undefined;
      this.item.show();
    } else this.item.hide();
  }

  dispose(): void {
    this.subscription.dispose();
    this.item.dispose();
  }
}
