import * as vscode from 'vscode';
import { configureRemoteTool, getRemoteStatusTool, syncProjectTool } from '../../tools/remoteTools';
import type { Workbench } from '../workbench';

/** The remote status as get_remote_status answers it (src/domain/remoteSync.ts RemoteStatus). */
interface Status {
  configured: boolean;
  name: string | null;
  url: string | null;
  ahead: number;
  behind: number;
  last_sync: string | null;
  reachable: boolean;
}

/** Tools after which the sync state is asked again (without the network: the last fetch's counts). */
const CHANGING = new Set(['configure_remote', 'sync_project', 'initialize_version_control']);

/**
 * The project history's remote in VS Code (issue 16 item 2): **Configure Remote…** (asks for a git URL: a folder,
 * file://, ssh, https; the researcher's own git credentials are used, none are stored), **Sync Project** (a
 * progress notification while it runs, then the result in words; a merge's conflicts are named) and the sync
 * state in the status bar ("$(sync) origin ↑2 ↓1", click to sync; hidden while no remote is configured).
 * Every action runs through the pipeline as the researcher. `onSynced` redraws the views after a sync changed
 * the project (a sync applies its changes in one transaction of its own, without per-entity events).
 */
export class SyncCommands implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('marginalia.sync', vscode.StatusBarAlignment.Left, 48);
  private readonly subscriptions: vscode.Disposable[] = [];
  private last = '';

  constructor(
    private readonly wb: Workbench,
    private readonly onSynced: () => void,
  ) {
    this.item.name = 'Marginalia: Sync';
    this.item.command = 'marginalia.history.sync';
    this.subscriptions.push(
      this.item,
      wb.controller.onDidChangeProject(() => void this.render(false)),
      wb.pipeline.onDidCall((call) => {
        if (CHANGING.has(call.tool) && call.status === 'ok') void this.render(false);
      }),
    );
    void this.render(false);
  }

  /** The command table entries: marginalia.history.configureRemote (an optional URL argument skips the question) and marginalia.history.sync. */
  commands(): Record<string, (...args: unknown[]) => Promise<unknown>> {
    return {
      'marginalia.history.configureRemote': (url?: unknown) => this.configure(typeof url === 'string' ? url : undefined),
      'marginalia.history.sync': () => this.sync(),
    };
  }

  /** Asks for the remote's URL (unless given) and configures it; returns configure_remote's result, or undefined. */
  async configure(url?: string): Promise<unknown> {
    const current = (await this.status(false))?.url ?? '';
    const value =
      url ??
      (await vscode.window.showInputBox({
        title: 'Configure Remote',
        prompt:
          'A git repository to share the project history with: a folder (a bare repository), file://, ssh or https URL. Your own git credentials are used; none are stored.',
        value: current,
        placeHolder: 'git@github.com:lab/study-history.git',
        validateInput: (v) => (v.trim() ? undefined : 'A git URL or folder path'),
      }));
    if (value === undefined) return undefined;
    const r = await this.wb.call(configureRemoteTool, { url: value.trim() });
    if (r) void vscode.window.showInformationMessage(`Remote "${r.name}" is ${r.url}. Sync Project sends and receives snapshots.`);
    await this.render(false);
    return r;
  }

  /** Syncs with a progress notification and shows the result in words; returns sync_project's result, or undefined. */
  async sync(): Promise<unknown> {
    const r = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: 'Marginalia: syncing the project with its remote…' },
      () => this.wb.call(syncProjectTool, {}),
    );
    if (r) {
      if (Object.keys(r.changes).length > 0) this.onSynced();
      if (r.conflicts.length > 0) void vscode.window.showWarningMessage(r.in_words);
      else void vscode.window.showInformationMessage(r.in_words);
    }
    await this.render(false);
    return r;
  }

  /** The status bar text, empty while hidden (for tests). */
  get text(): string {
    return this.last;
  }

  private async status(fetch: boolean): Promise<Status | undefined> {
    if (!this.wb.repo()) return undefined;
    return (await this.wb.call(getRemoteStatusTool, { fetch }, { quiet: true })) as Status | undefined;
  }

  private async render(fetch: boolean): Promise<void> {
    const s = await this.status(fetch);
    if (!s?.configured) {
      this.last = '';
      this.item.hide();
      return;
    }
    const counts = s.ahead + s.behind === 0 ? '' : ` ↑${s.ahead} ↓${s.behind}`;
    this.last = `$(sync) ${s.name ?? 'remote'}${counts}`;
    this.item.text = this.last;
    this.item.tooltip =
      `Project history remote ${s.name}: ${s.url}\n` +
      `${s.ahead} snapshot(s) to send, ${s.behind} to receive (as of the last fetch)\n` +
      `Last sync: ${s.last_sync ? new Date(s.last_sync).toLocaleString() : 'never'}\nClick to sync.`;
    this.item.show();
  }

  dispose(): void {
    for (const s of this.subscriptions) s.dispose();
  }
}
