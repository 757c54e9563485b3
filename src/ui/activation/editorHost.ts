/**
 * The pipeline's host in VS Code (HostPort, src/tools/context.ts): what the editor tells agents about the
 * researcher's screen, `navigate_to` opening a passage in an editor, the workspace folders agents' paths may lie
 * in, and observer mode's question before an agent changes a source the researcher is editing.
 */
import * as vscode from 'vscode';
import type { HostPort, NavigationTarget, OpenProject } from '../../tools/context';
import type { CodedSegmentDecorations } from '../decorations/codedSegmentDecorations';
import type { EditTracker } from '../documents/editTracker';
import type { SourceDocuments } from '../documents/sourceDocuments';
import { settings } from '../host/settings';

/** The editor parts the host drives; they are made after the pipeline (they need the workbench, which needs the pipeline). */
export interface HostEditors {
  docs: SourceDocuments;
  editTracker: EditTracker;
  decorations: CodedSegmentDecorations;
}

/** How long observer mode's question waits for the researcher before the agent is refused (milliseconds). */
const ACCESS_QUESTION_MS = 30_000;
/** How long `navigate_to` with `highlight` flashes the passage (milliseconds). */
const NAVIGATION_FLASH_MS = 1500;

/** Who asks for a source: the agent's session, its client's name, and the tool it called. */
type Asker = { session_id: string; client_name: string; tool: string };

/** The desktop host and how to hand it the editor parts once they exist (until then it cannot navigate, and lets agents work). */
export interface EditorHost {
  host: HostPort;
  attach(editors: HostEditors): void;
}

/**
 * Makes the desktop host. Its functions are closures (the pipeline may call them detached from the object).
 * @param project the open project (source names in observer mode's question), null when none
 */
export function createEditorHost(project: () => OpenProject | null): EditorHost {
  let editors: HostEditors | undefined;
  /** sessions the researcher let work on a source they are editing (observer mode), as `session:source` */
  const observed = new Set<string>();
  /**
   * Observer mode: when the agent's call touches sources the researcher is editing, asks whether the agent may
   * work on them (Allow / Not Now; no answer within {@link ACCESS_QUESTION_MS} is Not Now). Allowed sources stay
   * allowed for that session.
   */
  const requestSourceAccess = async (ids: readonly number[], who: Asker): Promise<boolean> => {
    const tracker = editors?.editTracker;
    if (!tracker) return true;
    const busy = ids.filter((id) => tracker.isBeingEdited(id) && !observed.has(`${who.session_id}:${id}`));
    if (busy.length === 0) return true;
    const names = busy.map((id) => project()?.repo.getSource(id)?.name ?? `source ${id}`).join(', ');
    const answer = await Promise.race([
      vscode.window.showWarningMessage(
        `${who.client_name} wants to ${who.tool.replace(/_/g, ' ')} in ${names}, which you are editing. Let the agent work on it?`,
        'Allow',
        'Not Now',
      ),
      new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), ACCESS_QUESTION_MS)),
    ]);
    if (answer !== 'Allow') return false;
    for (const id of busy) observed.add(`${who.session_id}:${id}`);
    return true;
  };
  const host: HostPort = {
    mode: 'desktop',
    currentScreen: () => {
      const ed = vscode.window.activeTextEditor;
      return ed ? `editor: ${vscode.workspace.asRelativePath(ed.document.uri)}` : 'workbench';
    },
    navigate: (t: NavigationTarget) => {
      const shown = editors;
      if (!shown) return { navigated: false, detail: 'The editor is not ready.' };
      void shown.docs.open(t.source_id, { start: t.start_pos, end: t.end_pos }, true).then((ed) => {
        if (ed && t.highlight) shown.decorations.flash({ source_id: t.source_id, start_pos: t.start_pos, end_pos: t.end_pos }, NAVIGATION_FLASH_MS);
      });
      return { navigated: true, detail: `Opened "${t.source_name}" in the researcher's editor.` };
    },
    get transcriptionEndpoint() {
      return settings.transcriptionEndpoint();
    },
    // agents' import and export paths may lie in the workspace folders too (src/core/pathPolicy.ts)
    allowedRoots: () => (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file').map((f) => f.uri.fsPath),
    requestSourceAccess,
  };
  return { host, attach: (e) => (editors = e) };
}
