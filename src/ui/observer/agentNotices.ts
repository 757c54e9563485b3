/**
 * Trust level notify, as the researcher sees it in VS Code (issue 14 item 9): every `agent.notified` event (an
 * agent's notify-level call ran; src/agent/pipeline.ts) becomes an information message, "claude: code 'I felt…'
 * in interview-04 with 'Isolation'", with **Undo** (undo_agent_action on the call's correlation id) and **Show**
 * (opens the source at what it did). Notices arriving within {@link NOTICE_COALESCE_MS} are coalesced: one agent's
 * several calls make one message ("claude: 4 actions: …") whose Show opens Agent Activity.
 */
import * as vscode from 'vscode';
import type { EventRecord } from '../../domain/events';

/** How long notices are gathered before one message is shown, in milliseconds. */
export const NOTICE_COALESCE_MS = 1500;

/** One notice as the event carries it. */
export interface AgentNotice {
  agent: string;
  tool: string;
  summary: string;
  correlation_id: string | null;
  source_id: number | null;
}

/** What the notices need from the extension. */
export interface NoticeDeps {
  /** undoes a call by its correlation id (undo_agent_action); resolves to an error message, or undefined when done */
  undo(correlationId: string): Promise<string | undefined>;
  /** shows what a call did: the source at its range when known */
  show(notice: AgentNotice): Promise<void>;
  /** shows Agent Activity (for coalesced notices) */
  showActivity(): Thenable<unknown> | Promise<unknown>;
}

/** The notice an `agent.notified` event carries, or undefined for any other event. */
export function noticeOf(e: EventRecord): AgentNotice | undefined {
  if (e.event_type !== 'agent.notified') return undefined;
  const p = e.payload;
  return {
    agent: String(p.agent ?? e.caused_by.user),
    tool: String(p.tool ?? ''),
    summary: String(p.summary ?? p.title ?? p.tool ?? ''),
    correlation_id: typeof p.correlation_id === 'string' ? p.correlation_id : null,
    source_id: typeof p.source_id === 'number' ? p.source_id : null,
  };
}

/** The message for one agent's notices gathered in one window. */
export function noticeMessage(agent: string, notices: readonly AgentNotice[]): string {
  if (notices.length === 1) return `${agent}: ${(notices[0] as AgentNotice).summary}`;
  const words = [...new Set(notices.map((n) => n.summary))];
  const shown = words.slice(0, 3).join('; ');
  return `${agent}: ${notices.length} actions: ${shown}${words.length > 3 ? ` and ${words.length - 3} more` : ''}`;
}

/** Shows agent.notified events as coalesced information messages with Undo and Show. */
export class AgentNotices implements vscode.Disposable {
  /** the last message shown (for tests) */
  lastMessage: { text: string; actions: string[] } | undefined;
  private readonly gathered = new Map<string, AgentNotice[]>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly deps: NoticeDeps) {}

  /** Handles a batch of published events. */
  onEvents(events: readonly EventRecord[]): void {
    for (const e of events) {
      const n = noticeOf(e);
      if (!n) continue;
      this.gathered.set(n.agent, [...(this.gathered.get(n.agent) ?? []), n]);
    }
    if (this.gathered.size > 0) this.timer ??= setTimeout(() => this.flush(), NOTICE_COALESCE_MS);
  }

  private flush(): void {
    this.timer = undefined;
    for (const [agent, notices] of this.gathered) void this.showOne(agent, notices);
    this.gathered.clear();
  }

  private async showOne(agent: string, notices: AgentNotice[]): Promise<void> {
    const single = notices.length === 1 ? notices[0] : undefined;
    const actions = single?.correlation_id ? ['Undo', 'Show'] : ['Show'];
    const text = noticeMessage(agent, notices);
    this.lastMessage = { text, actions };
    const answer = await vscode.window.showInformationMessage(text, ...actions);
    if (answer === 'Undo' && single?.correlation_id) {
      const problem = await this.deps.undo(single.correlation_id);
      if (problem) void vscode.window.showWarningMessage(`Could not undo: ${problem}`);
    } else if (answer === 'Show') {
      if (single) await this.deps.show(single);
      else await this.deps.showActivity();
    }
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
  }
}
