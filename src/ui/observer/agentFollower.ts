/**
 * Hybrid mode's observer (issue 14 item 9; setting `marginalia.mode: hybrid`): VS Code follows the active agent.
 * When an agent codes a passage (`coding.segment_coded` caused by an agent), the follower opens that source
 * without taking the focus, reveals the range and flashes it; when an agent's request arrives
 * (`approval.requested`) it brings the Pending Approvals view to the front. Several codings in one batch of
 * events: the last one is followed (the newest place the agent works). In desktop mode it does nothing.
 */
import * as vscode from 'vscode';
import type { EventRecord } from '../../domain/events';
import { causedByAgent } from '../workbench';

/** The working mode of the extension (`marginalia.mode`). */
export type MarginaliaMode = 'desktop' | 'hybrid';

/** What the follower needs: open a source at a range, flash a range, and the mode and flash time. */
export interface FollowerDeps {
  /** opens a source's editor at a range (SourceDocuments.open with preserveFocus) */
  open(sourceId: number, range: { start: number; end: number }): Promise<unknown>;
  /** flashes a range in the visible editors of its source (CodedSegmentDecorations.flash) */
  flash(segment: { source_id: number; start_pos: number; end_pos: number }, ms: number): void;
  mode(): MarginaliaMode;
  /** how long a flash lasts, ms (`marginalia.coding.flashMs`; at least 800 ms are used so a followed coding is seen) */
  flashMs(): number;
  /** brings the Pending Approvals view to the front (default: the view's focus command) */
  showApprovals?(): Thenable<unknown> | Promise<unknown>;
}

/** A coding the follower went to (for tests and the status line). */
export interface FollowedCoding {
  source_id: number;
  start: number;
  end: number;
  /** the agent's name as the event names it (coder, else client, else user) */
  agent: string;
  at: number;
}

/** The agent coding an event records, or undefined when it is not one. */
export function agentCodingOf(e: EventRecord): Omit<FollowedCoding, 'at'> | undefined {
  if (e.event_type !== 'coding.segment_coded' || !causedByAgent(e.caused_by)) return undefined;
  const p = e.payload;
  if (typeof p.source_id !== 'number' || typeof p.start !== 'number' || typeof p.end !== 'number') return undefined;
  const by = e.caused_by as EventRecord['caused_by'] & { coder?: string; client?: string };
  return { source_id: p.source_id, start: p.start, end: p.end, agent: by.coder || by.client || by.user };
}

/** Follows agents in hybrid mode; feed it every batch of published events ({@link onEvents}). */
export class AgentFollower implements vscode.Disposable {
  /** the coding followed last (undefined: none yet) */
  lastFollowed: FollowedCoding | undefined;
  private chain: Promise<unknown> = Promise.resolve();
  private disposed = false;

  constructor(private readonly deps: FollowerDeps) {}

  /** Handles a batch of events (the extension's flushEvents); resolves once the followed editor is shown. */
  onEvents(events: readonly EventRecord[]): Promise<void> {
    if (this.disposed || this.deps.mode() !== 'hybrid') return Promise.resolve();
    let target: Omit<FollowedCoding, 'at'> | undefined;
    let requested = false;
    for (const e of events) {
      target = agentCodingOf(e) ?? target;
      if (e.event_type === 'approval.requested' && causedByAgent(e.caused_by)) requested = true;
    }
    if (requested)
      void Promise.resolve(this.deps.showApprovals ? this.deps.showApprovals() : vscode.commands.executeCommand('marginalia.approvals.focus')).then(
        undefined,
        () => undefined,
      );
    if (!target) return Promise.resolve();
    const t = target;
    // one editor change at a time, in event order
    const step = this.chain.then(async () => {
      if (this.disposed) return;
      await this.deps.open(t.source_id, { start: t.start, end: t.end });
      this.deps.flash({ source_id: t.source_id, start_pos: t.start, end_pos: t.end }, Math.max(800, this.deps.flashMs()));
      this.lastFollowed = { ...t, at: Date.now() };
    });
    this.chain = step.catch(() => undefined);
    return step.then(
      () => undefined,
      () => undefined,
    );
  }

  dispose(): void {
    this.disposed = true;
  }
}

/** The `marginalia.mode` setting: `hybrid`, else `desktop`. */
export function readMode(): MarginaliaMode {
  return vscode.workspace.getConfiguration('marginalia').get<string>('mode', 'desktop') === 'hybrid' ? 'hybrid' : 'desktop';
}
