import * as vscode from 'vscode';
import { replacesProjectState } from '../../domain/events';
import type { Workbench } from '../workbench';

/** The context key true while the open project has at least one source (the walkthrough's import step completes on it). */
export const HAS_SOURCES_CONTEXT = 'marginalia.hasSources';

/** Events after which the project may have gained its first source or lost its last (not edits: those are frequent); also every event that replaces the project's state (replacesProjectState). */
const CHANGES_SOURCE_LIST = new Set(['source.imported', 'source.deleted', 'source.erased']);

/**
 * Keeps {@link HAS_SOURCES_CONTEXT} true exactly while the open project has a source: set on project open
 * and close and after every import, removal, erasure or restore. The walkthrough's
 * "Import a transcript" step completes on `onContext:marginalia.hasSources`, so it ticks only once
 * something was imported, not when the import dialog was merely opened (issue 13, item 11).
 */
export class HasSourcesContext implements vscode.Disposable {
  private readonly subscriptions: vscode.Disposable[];
  private value: boolean | undefined;

  constructor(private readonly wb: Workbench) {
    this.subscriptions = [
      wb.controller.onDidChangeProject(() => void this.update()),
      wb.pipeline.onEvents((events) => {
        if (events.some((e) => CHANGES_SOURCE_LIST.has(e.event_type) || replacesProjectState(e.event_type))) void this.update();
      }),
    ];
    void this.update();
  }

  /** Whether the open project has a source, as last set. */
  get hasSources(): boolean {
    return this.value === true;
  }

  /** Recomputes the key (only sets it when it changes). */
  async update(): Promise<void> {
    const repo = this.wb.repo();
    const has = !!repo && repo.listSources().length > 0;
    if (has === this.value) return;
    this.value = has;
    await vscode.commands.executeCommand('setContext', HAS_SOURCES_CONTEXT, has);
  }

  dispose(): void {
    for (const s of this.subscriptions) s.dispose();
  }
}
