import * as path from 'node:path';
import * as vscode from 'vscode';
import { DisposableStore } from '../core/lifecycle';
import type { Logger } from '../core/log';
import type { OpenProject } from '../tools/context';

/** An open project as the UI holds it: the tool-facing port plus close. */
export interface ProjectHandleLike extends OpenProject {
  close(): Promise<void>;
}

/** Opens (or with `create`, creates) a project file; injected by startAgentCore (src/ui/activation/agentCore.ts), where the store is opened. */
export type ProjectOpener = (filePath: string, create: boolean) => Promise<ProjectHandleLike>;

/** A running tool server, as the UI sees it. */
export interface ServerHandle {
  readonly port: number;
  close(): Promise<void>;
}

/** Starts the HTTP tool server on a port; rejects with EADDRINUSE when taken. Injected by startAgentCore (src/ui/activation/agentCore.ts). */
export type ServerStarter = (port: number) => Promise<ServerHandle>;

/** State of the HTTP tool server, shown in the status bar. */
export type ServerState = { state: 'stopped' } | { state: 'running'; port: number } | { state: 'failed'; reason: string };

/**
 * Owns the open project's lifetime (docs/architecture.md "two lifetimes"): opening creates a project-scoped
 * DisposableStore (server, trees' project data, ...), closing disposes it and checkpoints the store.
 * Sets the context key `marginalia.projectOpen`.
 */
export class ProjectController implements vscode.Disposable {
  private handle: ProjectHandleLike | undefined;
  private projectScope = new DisposableStore();
  private server: ServerHandle | undefined;
  private _serverState: ServerState = { state: 'stopped' };
  private readonly changed = new vscode.EventEmitter<ProjectHandleLike | undefined>();
  private readonly serverChanged = new vscode.EventEmitter<ServerState>();
  /** Fires after a project opened (with it) or closed (with undefined). */
  readonly onDidChangeProject = this.changed.event;
  private readonly willClose = new vscode.EventEmitter<ProjectHandleLike>();
  /** Fires while the project is still open and current, right before it closes (project.closed is recorded then). */
  readonly onWillClose = this.willClose.event;
  /** Fires when the HTTP server starts, stops or fails. */
  readonly onDidChangeServer = this.serverChanged.event;

  constructor(
    private readonly opener: ProjectOpener,
    private readonly startServer: ServerStarter,
    private readonly logger: Logger,
    private readonly options: { serverEnabled: () => boolean; serverPort: () => number },
  ) {}

  /** The open project, or null. */
  current(): ProjectHandleLike | null {
    return this.handle ?? null;
  }

  get serverState(): ServerState {
    return this._serverState;
  }

  /** Resources that live as long as the open project; disposed on close. */
  get scope(): DisposableStore {
    return this.projectScope;
  }

  /**
   * Opens `filePath` (closing any open project first), starts the HTTP tool server when enabled, and
   * fires onDidChangeProject. Errors from the store (PROJECT_LOCKED, PROJECT_CORRUPT) propagate.
   */
  async open(filePath: string, create = false): Promise<ProjectHandleLike> {
    await this.close();
    const handle = await this.opener(filePath, create);
    this.handle = handle;
    this.projectScope = new DisposableStore();
    await vscode.commands.executeCommand('setContext', 'marginalia.projectOpen', true);
    this.logger.info(`${create ? 'created' : 'opened'} project ${handle.name} (${handle.path})`);
    this.changed.fire(handle);
    if (this.options.serverEnabled()) await this.startServerOnConfiguredPort();
    return handle;
  }

  /** Stops the server, checkpoints and closes the project. Safe when none is open. */
  async close(): Promise<void> {
    const handle = this.handle;
    if (!handle) return;
    try {
      this.willClose.fire(handle);
    } catch (e) {
      this.logger.error('a close listener failed', e);
    }
    this.handle = undefined;
    await this.stopServer();
    await this.projectScope.dispose();
    await handle.close();
    await vscode.commands.executeCommand('setContext', 'marginalia.projectOpen', false);
    this.logger.info(`closed project ${handle.name}`);
    this.changed.fire(undefined);
  }

  /**
   * Starts the server on the configured port. When the port is taken, asks the researcher: use a free
   * port, or do not serve (no crash either way).
   */
  async startServerOnConfiguredPort(): Promise<void> {
    const port = this.options.serverPort();
    try {
      await this.startOn(port);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      const reason = code === 'EADDRINUSE' ? `port ${port} is in use` : (e as Error).message;
      this.setServer({ state: 'failed', reason });
      this.logger.warn(`HTTP tool server not started: ${reason}`);
      const free = 'Use a Free Port';
      const choice = await vscode.window.showWarningMessage(
        `Marginalia could not start its tool server: ${reason}. Agents cannot reach this project until it runs.`,
        free,
        'Do Not Serve',
      );
      if (choice === free) {
        try {
          await this.startOn(0);
        } catch (e2) {
          this.setServer({ state: 'failed', reason: (e2 as Error).message });
        }
      }
    }
  }

  private async startOn(port: number): Promise<void> {
    this.server = await this.startServer(port);
    this.setServer({ state: 'running', port: this.server.port });
    this.logger.info(`HTTP tool server on http://127.0.0.1:${this.server.port}`);
  }

  private async stopServer(): Promise<void> {
    const s = this.server;
    this.server = undefined;
    if (s) await s.close();
    this.setServer({ state: 'stopped' });
  }

  private setServer(state: ServerState): void {
    this._serverState = state;
    this.serverChanged.fire(state);
  }

  /** The project's display name for messages. */
  static displayName(filePath: string): string {
    return path.basename(filePath).replace(/\.qda$/i, '');
  }

  async dispose(): Promise<void> {
    await this.close();
    this.changed.dispose();
    this.serverChanged.dispose();
  }
}
