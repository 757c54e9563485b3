import * as vscode from 'vscode';
import type { CaseAttributesModel, FromCaseAttributesWebview, ToCaseAttributesWebview } from '../../protocol/caseAttributes';
import { replacesProjectState } from '../../domain/events';
import { removeCaseAttributeTool } from '../../tools/caseManagementTools';
import { setCaseAttributeTool } from '../../tools/caseTools';
import type { Workbench } from '../workbench';
import { caseAttributesModel } from './caseAttributesModel';
import { caseAttributesHtml } from './caseAttributesPage';
import { renameAttributeInteractively, setCaseAttributeInteractively } from './casesCommands';

/**
 * The Case Attributes panel (`marginalia.cases.openAttributes`, issue 13 item 5): a webview table with the
 * cases as rows and the attribute definitions as columns. Cells are typed (text, number, date, boolean) and
 * edited inline; a saved cell goes through the pipeline as set_case_attribute (or remove_case_attribute when
 * cleared) as the researcher, and a tool error is shown in the cell. Below, the definitions with their type
 * and case count, each renamable (rename_case_attribute). The data is {@link caseAttributesModel}; the page
 * follows every `case.*` event. Nonce CSP via src/ui/webviewHtml.ts; the page renders names as text only.
 */
export class CaseAttributesPanel implements vscode.Disposable {
  static readonly viewType = 'marginalia.caseAttributes';
  private panel: vscode.WebviewPanel | undefined;
  private readonly subscriptions: vscode.Disposable[] = [];
  private panelSubscriptions: vscode.Disposable[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly wb: Workbench,
  ) {
    this.subscriptions.push(
      wb.pipeline.onEvents((events) => {
        if (events.some((e) => e.event_type.startsWith('case.') || replacesProjectState(e.event_type))) this.schedulePost();
      }),
      wb.controller.onDidChangeProject(() => this.schedulePost()),
    );
  }

  /** The table's data as the webview receives it (empty without a project). */
  model(): CaseAttributesModel {
    const repo = this.wb.repo();
    return repo ? caseAttributesModel(repo) : { columns: [], rows: [] };
  }

  /** Whether the panel is open. */
  get isOpen(): boolean {
    return this.panel !== undefined;
  }

  /** Opens (or reveals) the panel. */
  open(): void {
    if (this.panel) {
      this.panel.reveal(undefined, false);
      return;
    }
    const root = vscode.Uri.joinPath(this.extensionUri, 'dist', 'webview');
    const panel = vscode.window.createWebviewPanel(CaseAttributesPanel.viewType, 'Case Attributes', vscode.ViewColumn.Active, {
      enableScripts: true,
      localResourceRoots: [root],
      retainContextWhenHidden: false,
    });
    this.panel = panel;
    const script = panel.webview.asWebviewUri(vscode.Uri.joinPath(root, 'caseAttributes.js'));
    panel.webview.html = caseAttributesHtml(panel.webview.cspSource, script.toString());
    this.panelSubscriptions = [
      panel.webview.onDidReceiveMessage(
        (m: FromCaseAttributesWebview) => void this.onMessage(m).catch((e: unknown) => this.wb.logger.error('case attributes: message failed', e)),
      ),
      panel.onDidChangeViewState(() => {
        if (panel.visible) this.post();
      }),
      panel.onDidDispose(() => {
        this.panel = undefined;
        for (const s of this.panelSubscriptions) s.dispose();
        this.panelSubscriptions = [];
      }),
    ];
  }

  private schedulePost(): void {
    if (!this.panel) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => this.post(), 100);
  }

  private post(): void {
    void this.panel?.webview.postMessage({ type: 'model', model: this.model() } satisfies ToCaseAttributesWebview);
  }

  /**
   * Saves one cell as the researcher: set_case_attribute with the column's type, or remove_case_attribute for
   * null. Resolves with the tool's error message, or null when it was saved. Exposed for tests: it is what the
   * webview's `setCell` message runs.
   */
  async saveCell(
    caseId: number,
    attribute: string,
    type: 'text' | 'number' | 'date' | 'boolean',
    value: string | number | boolean | null,
  ): Promise<string | null> {
    let error: string | null = null;
    const onFailure = (_code: string, message: string) => {
      error = message;
    };
    if (value === null) await this.wb.call(removeCaseAttributeTool, { case_id: caseId, attribute_name: attribute }, { onFailure });
    else await this.wb.call(setCaseAttributeTool, { case_id: caseId, attribute_name: attribute, value, type }, { onFailure });
    return error;
  }

  private async onMessage(m: FromCaseAttributesWebview): Promise<void> {
    switch (m.type) {
      case 'ready':
        this.post();
        return;
      case 'setCell': {
        const error = await this.saveCell(m.case_id, m.attribute, m.attribute_type, m.value);
        void this.panel?.webview.postMessage({ type: 'cellResult', case_id: m.case_id, attribute: m.attribute, error } satisfies ToCaseAttributesWebview);
        if (error) this.post();
        return;
      }
      case 'renameAttribute':
        await renameAttributeInteractively(this.wb, m.attribute);
        return;
      case 'addAttribute':
        await setCaseAttributeInteractively(this.wb);
        return;
    }
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.panel?.dispose();
    for (const s of this.subscriptions) s.dispose();
  }
}
