/**
 * Hybrid mode (issue 14 item 9, src/ui/observer/): the editor follows agents (`marginalia.mode`), notify-level
 * calls show as messages with Undo and Show, and Pause / Resume Agents.
 */
import * as vscode from 'vscode';
import { undoAgentActionTool } from '../../tools/editorTools';
import { settings } from '../host/settings';
import { AgentFollower, readMode } from '../observer/agentFollower';
import { AgentNotices } from '../observer/agentNotices';
import { PauseCommands } from '../observer/pauseCommands';
import type { AgentCore } from './agentCore';
import type { Views } from './views';

/** The observer's parts (MarginaliaApi.observer). */
export interface Observer {
  follower: AgentFollower;
  notices: AgentNotices;
  pause: PauseCommands;
}

/** Sets the agent context's mode from the settings, makes the observer's parts and pushes them, with the mode's settings watcher. */
export function startObserver(context: vscode.ExtensionContext, core: AgentCore, views: Views): Observer {
  const { agent } = core;
  const { wb, docs, decorations } = views;
  agent.mode = readMode();
  const follower = new AgentFollower({
    open: (id, range) => docs.open(id, range, true),
    flash: (seg, ms) => decorations.flash(seg, ms),
    mode: readMode,
    flashMs: settings.flashMs,
  });
  const notices = new AgentNotices({
    undo: async (correlation_id) => {
      let problem: string | undefined;
      await wb.call(undoAgentActionTool, { correlation_id }, { onFailure: (_code, message) => (problem = message) });
      return problem;
    },
    show: async (n) => {
      const coded = n.correlation_id
        ? wb
            .repo()
            ?.listEventsByCorrelation(n.correlation_id)
            .find((e) => e.event_type === 'coding.segment_coded')
        : undefined;
      if (coded) await docs.open(coded.payload.source_id as number, { start: coded.payload.start as number, end: coded.payload.end as number });
      else if (n.source_id !== null) await docs.open(n.source_id);
      else await vscode.commands.executeCommand('marginalia.activity.focus');
    },
    showActivity: () => vscode.commands.executeCommand('marginalia.activity.focus'),
  });
  const pause = new PauseCommands({ agent, caller: () => wb.caller(), mode: readMode });
  context.subscriptions.push(
    follower,
    notices,
    pause,
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (!e.affectsConfiguration('marginalia.mode')) return;
      agent.mode = readMode();
      pause.update();
    }),
  );
  return { follower, notices, pause };
}
