import * as vscode from 'vscode';
import type { z } from 'zod';
import type { Caller, InvokeOptions, InvokeOutcome, ToolPipeline } from '../agent/pipeline';
import type { Logger } from '../core/log';
import type { ProjectRepository } from '../domain/ports';
import type { ToolDef } from '../tools/defineTool';
import type { ProjectController } from './projectController';
import { settings } from './host/settings';

/** The session id of the researcher's own UI; every other session id marks an AI action. */
export const LOCAL_SESSION = 'local';

/**
 * The UI's shared services: the project controller, the one pipeline, the logger. UI writes go through
 * {@link call} (the same pipeline agents use); UI reads use {@link repo} directly.
 */
export class Workbench {
  constructor(
    readonly controller: ProjectController,
    readonly pipeline: ToolPipeline,
    readonly logger: Logger,
    readonly storageUri: vscode.Uri,
  ) {}

  /** The researcher's caller identity (session `local`, client type LOCAL_UI). */
  caller(): Caller {
    return { session_id: LOCAL_SESSION, client_type: 'LOCAL_UI', client_name: 'vscode', user: settings.coderName(), researcher: true };
  }

  /** The open project's repository for reads, or null. */
  repo(): ProjectRepository | null {
    return this.controller.current()?.repo ?? null;
  }

  /**
   * Calls a tool as the researcher. Returns its data, or undefined after showing the error (unless
   * `quiet`, or `onFailure` is given: it receives the error code and message instead of the error dialog).
   * `onProgress` receives the progress of long work (imports).
   */
  async call<S extends z.ZodType, R>(
    tool: ToolDef<S, any, R>,
    args: z.input<S>,
    opts: { quiet?: boolean; onProgress?: InvokeOptions['onProgress']; onFailure?: (code: string, message: string) => void } = {},
  ): Promise<R | undefined> {
    const outcome: InvokeOutcome = await this.pipeline.invoke(tool.name, args, this.caller(), { onProgress: opts.onProgress });
    if (outcome.envelope.success) return outcome.envelope.data as R;
    if (opts.onFailure) opts.onFailure(String(outcome.envelope.error_code), String(outcome.envelope.error));
    else if (!opts.quiet) void vscode.window.showErrorMessage(`${tool.title}: ${outcome.envelope.error}`);
    this.logger.warn(`${tool.name} failed: ${outcome.envelope.error_code} ${outcome.envelope.error}`);
    return undefined;
  }
}

/**
 * True when an event was caused by an agent: its `caused_by.role` is `agent` (issue 14, item 1); events stored before
 * roles were recorded fall back to any session but the researcher's own.
 */
export function causedByAgent(by: { session_id: string; role?: 'researcher' | 'agent' }): boolean {
  return by.role ? by.role === 'agent' : by.session_id !== LOCAL_SESSION;
}

/**
 * True when an item was made by an agent: its stored coder role is `agent` (issue 14, item 1: role agent marks an AI
 * action, whatever the session); for items from before roles were recorded (role null/absent), any session but
 * the researcher's own.
 */
export function madeByAgent(sessionId: string | null | undefined, role?: 'researcher' | 'agent' | null): boolean {
  if (role) return role === 'agent';
  return !!sessionId && sessionId !== LOCAL_SESSION;
}
