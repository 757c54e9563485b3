import * as vscode from 'vscode';
import type { ProjectRepository } from '../domain/ports';
import { readScopeFor, scopedRepository, scopeKey, teamSettingsOf, type ReadScope } from '../domain/teamSettings';
import { endBlindCodingTool, setBlindCodingTool } from '../tools/teamTools';
import type { Workbench } from './workbench';

/**
 * Blind coding in VS Code (issue 16 item 5; src/domain/teamSettings.ts): the researcher's views read the project
 * through the same scoped repository the pipeline gives read tools, for the researcher's coder name
 * (`marginalia.coder.name`). While blind coding is on and the researcher is not the lead, the Codes tree's counts and
 * the editor's decorations show only the researcher's own codings.
 */

/** The read scope of the researcher in VS Code (null: everything, or no project). */
export function researcherScope(wb: Workbench): ReadScope {
  const repo = wb.repo();
  if (!repo) return null;
  return readScopeFor(teamSettingsOf(repo, wb.controller.current()?.writeGeneration), { user: wb.caller().user, role: 'researcher' });
}

const views = new WeakMap<ProjectRepository, { key: string; view: ProjectRepository }>();

/**
 * The open project's repository as the researcher may read it: the repository itself while everything is visible,
 * else the scoped view. The same object is returned while the project and the scope stay the same (the views cache
 * by repository identity), a new one when blind coding or the coder name changes.
 */
export function researcherRepo(wb: Workbench): ProjectRepository | null {
  const repo = wb.repo();
  if (!repo) return null;
  const scope = readScopeFor(teamSettingsOf(repo, wb.controller.current()?.writeGeneration), { user: wb.caller().user, role: 'researcher' });
  if (scope === null) return repo;
  const key = scopeKey(scope);
  const known = views.get(repo);
  if (known?.key === key) return known.view;
  const view = scopedRepository(repo, scope);
  views.set(repo, { key, view });
  return view;
}

/** Tools that change the team setting: after one of them the views are drawn again. */
const TEAM_TOOLS = new Set(['set_blind_coding', 'end_blind_coding']);

/**
 * The status bar hint while blind coding is on: "Blind coding: you see your codings only" (or, for the lead, that
 * they see everyone's). Calls `onChange` (redraw the Codes tree and the decorations) when the setting or the
 * researcher's coder name changes.
 */
export class BlindCodingStatus implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('marginalia.blindCoding', vscode.StatusBarAlignment.Left, 49);
  private readonly subscriptions: vscode.Disposable[] = [];
  private last = '';
  private readonly changed = new vscode.EventEmitter<void>();
  /** Fires after `onChange` whenever the researcher's scope may have changed (blind coding or the coder name): for views made later. */
  readonly onDidChange = this.changed.event;

  constructor(
    private readonly wb: Workbench,
    private readonly onChange: () => void,
  ) {
    this.item.name = 'Marginalia: Blind Coding';
    this.subscriptions.push(
      this.item,
      this.changed,
      wb.controller.onDidChangeProject(() => this.render()),
      wb.pipeline.onDidCall((call) => {
        if (TEAM_TOOLS.has(call.tool) && call.status === 'ok') this.render(true);
      }),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration('marginalia.coder.name')) this.render(true);
      }),
    );
    this.render();
  }

  /**
   * The command table entries (registered by the extension with the others): **Start Blind Coding…** (asks for the
   * lead's coder name, default yours; a `lead` argument skips the question) and **End Blind Coding** (the lead's).
   * Each returns the tool's result, or undefined when cancelled or refused (the error is shown).
   */
  commands(): Record<string, (...args: unknown[]) => Promise<unknown>> {
    return {
      'marginalia.team.startBlindCoding': async (lead?: unknown) => {
        const name =
          typeof lead === 'string'
            ? lead
            : await vscode.window.showInputBox({
                title: 'Start Blind Coding',
                prompt: "The lead's coder name: the lead sees every coder's codings and ends blind coding",
                value: this.wb.caller().user,
                validateInput: (v) => (v.trim() ? undefined : 'A coder name'),
              });
        if (name === undefined) return undefined;
        const r = await this.wb.call(setBlindCodingTool, { enabled: true, lead: name.trim() });
        if (r) void vscode.window.showInformationMessage(`Blind coding is on: each coder sees only their own codings until ${r.lead ?? 'the lead'} ends it.`);
        return r;
      },
      'marginalia.team.endBlindCoding': async () => {
        const r = await this.wb.call(endBlindCodingTool, {});
        if (r) void vscode.window.showInformationMessage('Blind coding ended: every coder sees every coding again.');
        return r;
      },
    };
  }

  /** The text shown, empty while hidden (for tests). */
  get text(): string {
    return this.last;
  }

  private render(changed = false): void {
    const repo = this.wb.repo();
    const settings = repo ? teamSettingsOf(repo, this.wb.controller.current()?.writeGeneration) : undefined;
    if (!settings?.blind) {
      this.last = '';
      this.item.hide();
    } else {
      const mine = researcherScope(this.wb) !== null;
      this.last = mine ? '$(eye-closed) Blind coding: you see your codings only' : "$(eye) Blind coding: you lead and see every coder's";
      this.item.text = this.last;
      this.item.command = mine ? undefined : 'marginalia.team.endBlindCoding';
      this.item.tooltip = mine
        ? `Blind coding is on (lead: ${settings.lead ?? 'nobody named'}): the Codes tree and the editor show only the codings of "${this.wb.caller().user}" until the lead ends it.`
        : 'Blind coding is on: the other coders see only their own codings until you end it (end_blind_coding).';
      this.item.show();
    }
    if (changed) {
      this.onChange();
      this.changed.fire();
    }
  }

  dispose(): void {
    for (const s of this.subscriptions) s.dispose();
  }
}
