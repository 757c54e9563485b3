import * as path from 'node:path';
import * as vscode from 'vscode';
import { replacesProjectState, type EventRecord } from '../../domain/events';
import type { Segment } from '../../domain/model';
import {
  attributeNames,
  bySourceAndPosition,
  caseCellSegments,
  codeByAttributeMatrix,
  codeByCaseMatrix,
  codeByDocumentAttributeMatrix,
  codedBySegments,
  cooccurringSegments,
  documentAttributeNames,
  sourceCellSegments,
  type CodeMatrixResult,
  type DocumentAttributeMatrixResult,
} from '../../domain/codeMatrices';
import { cooccurrenceReport, frequencyReport } from '../../domain/reports';
import type {
  AgreementUnit,
  DrillTarget,
  ExportFormat,
  FromReportsWebview,
  HeatMap,
  ReportRequest,
  ReportsViewId,
  ToReportsWebview,
} from '../../protocol/reports';
import { exportReportTool, generateCoderComparisonTool, generateCooccurrenceReportTool, generateFrequencyReportTool } from '../../tools/reportTools';
import type { CodedSegmentDecorations } from '../decorations/codedSegmentDecorations';
import type { SourceDocuments } from '../documents/sourceDocuments';
import type { Workbench } from '../workbench';
import { agreementView, disagreementsView, humanAiView } from './agreementData';
import { reportsHtml } from './reportsPage';
import { researcherRepo } from '../teamScope';

/** Most codes (rows) and columns a heat map shows: the most used are kept, in their order. */
export const HEAT_MAX_ROWS = 40;
export const HEAT_MAX_COLUMNS = 40;
/** How long after the last project change the open view is recomputed (milliseconds). */
const REFRESH_DEBOUNCE_MS = 400;

/** What the webview reported after drawing a view. */
export interface RenderedReport {
  view: ReportsViewId;
  /** bars, heat-map cells or table rows drawn */
  items: number;
  /** canvas pixels painted (0 for the agreement table) */
  painted: number;
}

/** One coded passage behind a bar, cell or row, as the drill-down lists it. */
export interface DrillItem {
  source_id: number;
  source_name: string;
  start_pos: number;
  end_pos: number;
  text: string;
  /** what else the item says: coder, the other segment of an overlap */
  note: string;
  segment_id?: number;
}

const VIEWS: readonly unknown[] = [
  'frequency',
  'cooccurrence',
  'agreement',
  'disagreements',
  'human_ai',
  'case',
  'attribute',
  'document_attribute',
] satisfies ReportsViewId[];

/** Whether `v` names a view of the Reports panel (command arguments and webview messages are checked). */
export function isReportsView(v: unknown): v is ReportsViewId {
  return VIEWS.includes(v);
}
const EXPORTABLE: Partial<Record<ReportsViewId, string>> = {
  frequency: 'frequency',
  cooccurrence: 'cooccurrence',
  agreement: 'coder-comparison',
  disagreements: 'coder-comparison',
};
const FORMAT_LABELS: Record<ExportFormat, string> = { csv: 'CSV', json: 'JSON', html: 'HTML' };

/**
 * The Reports panel (`marginalia.reports.open`): a webview with code frequencies (bar chart), code
 * co-occurrence, code-by-case and code-by-attribute heat maps, coder agreement of two or more coders (every
 * measure with its 95% interval), the disagreements side by side on their passages (an "Open in source"
 * button opens each), and each agent against the human coders with its suggestion outcomes (agreementData.ts). Data comes from the domain's report functions reading the open project directly (UI reads do not
 * go through the pipeline); exports go through the generate_* and export_report tools as the researcher.
 * A click on a bar, cell or row lists the coded segments behind it in a quick pick that opens the source
 * at the segment. Strict CSP with a nonce; the page renders names as text or on the canvas only. The open
 * view follows project changes (debounced).
 */
export class ReportsPanel implements vscode.Disposable {
  static readonly viewType = 'marginalia.reports';
  private panel: vscode.WebviewPanel | undefined;
  private panelSubscriptions: vscode.Disposable[] = [];
  private readonly subscriptions: vscode.Disposable[] = [];
  private request: ReportRequest = { view: 'frequency' };
  private stale = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly renderedEmitter = new vscode.EventEmitter<RenderedReport>();
  /** Fires each time the webview has drawn a view. */
  readonly onDidRender = this.renderedEmitter.event;
  /** The last drawing of each view. */
  readonly rendered = new Map<ReportsViewId, RenderedReport>();

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly wb: Workbench,
    private readonly docs: SourceDocuments,
    private readonly decorations: CodedSegmentDecorations,
  ) {
    this.subscriptions.push(
      this.renderedEmitter,
      wb.pipeline.onEvents((events) => {
        if (events.some(changesReports)) this.scheduleRefresh();
      }),
      wb.controller.onDidChangeProject(() => this.scheduleRefresh(0)),
    );
  }

  /** Whether the panel exists (open in some editor group). */
  get isOpen(): boolean {
    return this.panel !== undefined;
  }

  /** Opens (or reveals) the panel, on `view` when given. */
  open(view?: ReportsViewId): void {
    if (view) this.request = { view } as ReportRequest;
    if (this.panel) {
      this.panel.reveal(undefined, false);
      if (view) {
        // a hidden panel's page is reloaded by reveal (retainContextWhenHidden is off) and misses this message:
        // the view is also kept until the page asks for it, or shown when the reloaded page says it is ready
        this.pendingView = view;
        void this.panel.webview.postMessage({ type: 'show', view } satisfies ToReportsWebview);
      }
      return;
    }
    const root = vscode.Uri.joinPath(this.extensionUri, 'dist', 'webview');
    const panel = vscode.window.createWebviewPanel(ReportsPanel.viewType, 'Marginalia Reports', vscode.ViewColumn.Active, {
      enableScripts: true,
      localResourceRoots: [root],
      retainContextWhenHidden: false,
    });
    panel.iconPath = vscode.Uri.joinPath(this.extensionUri, 'media', 'marginalia.svg');
    this.panel = panel;
    const script = panel.webview.asWebviewUri(vscode.Uri.joinPath(root, 'reports.js'));
    // the webview restores its own last view (setState); a requested view is passed as the initial state.
    // The page (nonce CSP, static markup) is built in reportsPage.ts, which tests render without vscode.
    panel.webview.html = reportsHtml(panel.webview.cspSource, script.toString(), STYLE);
    this.panelSubscriptions = [
      panel.webview.onDidReceiveMessage(
        (m: FromReportsWebview) => void this.onMessage(m).catch((e: unknown) => this.wb.logger.error('reports: message failed', e)),
      ),
      panel.onDidChangeViewState(() => {
        if (panel.visible && this.stale) this.scheduleRefresh(0);
      }),
      panel.onDidDispose(() => {
        this.panel = undefined;
        for (const s of this.panelSubscriptions) s.dispose();
        this.panelSubscriptions = [];
      }),
    ];
    this.pendingView = view;
  }

  /** The view asked for before the webview was ready. */
  private pendingView: ReportsViewId | undefined;

  /** Resolves with the next drawing of `view` (or the last one, when `view` was drawn after `since`). */
  whenRendered(view: ReportsViewId, timeoutMs = 20_000): Promise<RenderedReport> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        sub.dispose();
        reject(new Error(`the Reports view "${view}" was not drawn within ${timeoutMs} ms`));
      }, timeoutMs);
      const sub = this.onDidRender((r) => {
        if (r.view !== view) return;
        clearTimeout(timer);
        sub.dispose();
        resolve(r);
      });
    });
  }

  private async onMessage(m: FromReportsWebview): Promise<void> {
    switch (m.type) {
      case 'ready':
        if (this.pendingView) {
          void this.panel?.webview.postMessage({ type: 'show', view: this.pendingView } satisfies ToReportsWebview);
          this.pendingView = undefined;
        }
        return;
      case 'request':
        if (!isReportsView(m.request?.view)) return;
        if (m.request.view === this.pendingView) this.pendingView = undefined;
        this.request = m.request;
        return this.send();
      case 'drill':
        return this.drill(m.target);
      case 'export':
        if (!(m.format in FORMAT_LABELS) || !isReportsView(m.request?.view)) return;
        await this.exportReport(m.format, m.request);
        return;
      case 'openSource':
        return this.openSource(m.source_id, m.start_pos, m.end_pos);
      case 'caseCommand':
        if (m.command === 'newFromSources' || m.command === 'openAttributes') await vscode.commands.executeCommand(`marginalia.cases.${m.command}`);
        return;
      case 'rendered': {
        const r: RenderedReport = { view: m.view, items: Number(m.items) || 0, painted: Number(m.painted) || 0 };
        this.rendered.set(r.view, r);
        this.renderedEmitter.fire(r);
        return;
      }
    }
  }

  /** Draws the open Reports again now (when hidden: on its next showing), e.g. after the researcher's scope changed. */
  refresh(): void {
    this.scheduleRefresh(0);
  }

  private scheduleRefresh(ms = REFRESH_DEBOUNCE_MS): void {
    if (!this.panel) return;
    if (!this.panel.visible) {
      this.stale = true;
      return;
    }
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.send();
    }, ms);
  }

  /** Computes the requested view and sends it to the webview. */
  private send(): void {
    if (!this.panel) return;
    this.stale = false;
    let message: ToReportsWebview;
    try {
      message = this.compute(this.request);
    } catch (e) {
      this.wb.logger.error('reports: computing failed', e);
      void vscode.window.showErrorMessage(`Marginalia Reports: ${(e as Error).message}`);
      return;
    }
    void this.panel.webview.postMessage(message);
  }

  /** The data of one view of the open project (exposed for tests). */
  compute(request: ReportRequest): ToReportsWebview {
    const project = this.wb.controller.current();
    if (!project) return { type: 'noProject' };
    // blind coding: the researcher's own codings unless they lead (src/ui/teamScope.ts)
    const repo = researcherRepo(this.wb) ?? project.repo;
    const name = project.name;
    switch (request.view) {
      case 'frequency': {
        const f = frequencyReport(repo, {});
        return {
          type: 'frequency',
          project: name,
          codes: f.codes.map((c) => ({ code_id: c.code_id, name: c.name, color: c.color, segment_count: c.segment_count, source_count: c.source_count })),
          unused: f.totals.codes - f.totals.codes_used,
          segments: f.totals.segments,
          sources: f.totals.sources,
        };
      }
      case 'cooccurrence': {
        const used = frequencyReport(repo, {}).codes.filter((c) => c.segment_count > 0);
        const capped = used.length > HEAT_MAX_ROWS;
        const r = cooccurrenceReport(repo, capped ? { code_ids: used.slice(0, HEAT_MAX_ROWS).map((c) => c.code_id) } : {});
        const heat: HeatMap = {
          rows: r.codes,
          columns: r.codes.map((c) => ({ key: `code:${c.code_id}`, label: c.name, code_id: c.code_id })),
          matrix: r.matrix,
        };
        if (capped) heat.total_rows = heat.total_columns = used.length;
        return { type: 'cooccurrence', project: name, heat, total_overlaps: r.total_overlaps, same_code_overlaps: r.same_code_overlaps };
      }
      case 'agreement':
        return agreementView(repo, name, request.coders, request.unit);
      case 'disagreements':
        return disagreementsView(repo, name, request.coders, request.unit);
      case 'human_ai':
        return humanAiView(repo, name, request.unit);
      case 'case':
        return { type: 'case', project: name, heat: capHeat(codeByCaseMatrix(repo)) };
      case 'attribute': {
        const attributes = attributeNames(repo);
        const attribute = request.attribute && attributes.includes(request.attribute) ? request.attribute : (attributes[0] ?? null);
        const heat = attribute === null ? { rows: [], columns: [], matrix: [] } : capHeat(codeByAttributeMatrix(repo, attribute));
        return { type: 'attribute', project: name, attributes, attribute, heat };
      }
      case 'document_attribute': {
        const attributes = documentAttributeNames(repo);
        const attribute = request.attribute && attributes.includes(request.attribute) ? request.attribute : (attributes[0] ?? null);
        const heat = attribute === null ? { rows: [], columns: [], matrix: [] } : capHeat(codeByDocumentAttributeMatrix(repo, attribute));
        return { type: 'document_attribute', project: name, attributes, attribute, heat };
      }
    }
  }

  // ---------------------------------------------------------------------------------------- drill-down

  /** The coded passages behind a bar, cell or row, and a title for them (exposed for tests). */
  segmentsBehind(target: DrillTarget): { title: string; items: DrillItem[] } {
    const repo = researcherRepo(this.wb);
    if (!repo) return { title: '', items: [] };
    const codeName = (id: number) => repo.getCode(id)?.name ?? `code ${id}`;
    const sourceNames = new Map<number, string>();
    const sourceName = (id: number) => {
      let n = sourceNames.get(id);
      if (n === undefined) sourceNames.set(id, (n = repo.getSource(id)?.name ?? `source ${id}`));
      return n;
    };
    const ofSegment = (s: Segment, note: string): DrillItem => ({
      source_id: s.source_id,
      source_name: sourceName(s.source_id),
      start_pos: s.start_pos,
      end_pos: s.end_pos,
      text: s.text,
      note,
      segment_id: s.segment_id,
    });
    switch (target.kind) {
      case 'code':
        return {
          title: `Segments of "${codeName(target.code_id)}"`,
          items: repo
            .listSegmentsForCode(target.code_id)
            .sort(bySourceAndPosition)
            .map((s) => ofSegment(s, s.owner)),
        };
      case 'coders':
        return {
          title: `Segments of "${codeName(target.code_id)}" by ${target.coders.join(' and ')}`,
          items: codedBySegments(repo, target.code_id, target.coders.map(String)).map((s) => ofSegment(s, s.owner)),
        };
      case 'cases':
        return {
          title: `Segments of "${codeName(target.code_id)}" in ${target.column}`,
          items: caseCellSegments(repo, target.code_id, target.case_ids.map(Number)).map((s) => ofSegment(s, s.owner)),
        };
      case 'sources':
        return {
          title: `Segments of "${codeName(target.code_id)}" in sources with ${target.column}`,
          items: sourceCellSegments(repo, target.code_id, target.source_ids.map(Number)).map((s) => ofSegment(s, s.owner)),
        };
      case 'pair': {
        const same = target.code_a === target.code_b;
        const title = same ? `Overlapping segments of "${codeName(target.code_a)}"` : `"${codeName(target.code_a)}" overlapping "${codeName(target.code_b)}"`;
        const items = cooccurringSegments(repo, target.code_a, target.code_b).map((o) => {
          const chars = [...o.a.text];
          const text = chars.slice(o.start_pos - o.a.start_pos, o.end_pos - o.a.start_pos).join('');
          return {
            source_id: o.source_id,
            source_name: sourceName(o.source_id),
            start_pos: o.start_pos,
            end_pos: o.end_pos,
            text,
            note: `${o.a.start_pos}–${o.a.end_pos} × ${o.b.start_pos}–${o.b.end_pos}`,
          };
        });
        return { title, items };
      }
    }
  }

  /** Lists the passages behind `target` in a quick pick; the chosen one opens at its range. */
  async drill(target: DrillTarget): Promise<void> {
    const { title, items } = this.segmentsBehind(target);
    if (items.length === 0) return void vscode.window.showInformationMessage(`${title || 'This cell'}: no coded segments.`);
    type Item = vscode.QuickPickItem & { item: DrillItem };
    const picks: Item[] = items.map((it) => {
      const oneLine = it.text.replace(/\s+/g, ' ').trim();
      return {
        label: noIcons(oneLine.length > 100 ? `${oneLine.slice(0, 99)}…` : oneLine || '(empty)'),
        description: noIcons(`${it.source_name} · ${it.start_pos}–${it.end_pos}${it.note ? ` · ${it.note}` : ''}`),
        item: it,
      };
    });
    const chosen = await vscode.window.showQuickPick(picks, {
      title: `${title} (${items.length})`,
      matchOnDescription: true,
      placeHolder: 'Open a passage in its source',
    });
    if (!chosen) return;
    const it = chosen.item;
    const editor = await this.docs.open(it.source_id, { start: it.start_pos, end: it.end_pos });
    if (editor) this.decorations.flash({ source_id: it.source_id, start_pos: it.start_pos, end_pos: it.end_pos }, 500);
  }

  /** Opens a source at a range the webview names (a disagreement's passage), when the numbers are sound and the source exists. */
  async openSource(sourceId: unknown, start: unknown, end: unknown): Promise<void> {
    const ok = (n: unknown): n is number => typeof n === 'number' && Number.isInteger(n) && n >= 0;
    if (!ok(sourceId) || !ok(start) || !ok(end) || end < start || !this.wb.repo()?.getSource(sourceId)) return;
    const editor = await this.docs.open(sourceId, { start, end });
    if (editor) this.decorations.flash({ source_id: sourceId, start_pos: start, end_pos: end }, 500);
  }

  // ---------------------------------------------------------------------------------------- export

  /**
   * Exports the report of a view through generate_* and export_report (as the researcher): asks where to
   * save unless `target` (an absolute path) is given. Returns the written file, or undefined.
   */
  async exportReport(format: ExportFormat, request: ReportRequest, target?: string): Promise<string | undefined> {
    const kind = EXPORTABLE[request.view];
    const project = this.wb.controller.current();
    if (!project) return undefined;
    if (!kind) {
      void vscode.window.showInformationMessage('export_report writes frequency, co-occurrence and coder agreement reports; this matrix has no export yet.');
      return undefined;
    }
    let coders: string[] | undefined;
    let unit: AgreementUnit | undefined;
    if (request.view === 'agreement' || request.view === 'disagreements') {
      const data = agreementView(project.repo, project.name, request.coders, request.unit, 0);
      if (data.type !== 'agreement' || !data.pair)
        return void vscode.window.showWarningMessage(data.type === 'agreement' && data.note ? data.note : 'Pick two coders first.');
      coders = data.selected ?? data.pair;
      unit = data.unit;
    }
    let file = target;
    if (!file) {
      const stem = path.basename(project.path, path.extname(project.path));
      const uri = await vscode.window.showSaveDialog({
        title: `Export the ${kind.replace('-', ' ')} report as ${FORMAT_LABELS[format]}`,
        defaultUri: vscode.Uri.file(path.join(path.dirname(project.path), `${stem}-${kind}.${format}`)),
        filters: { [FORMAT_LABELS[format]]: [format] },
      });
      file = uri?.fsPath;
    }
    if (!file) return undefined;
    if (path.extname(file).toLowerCase() !== `.${format}` && !(format === 'html' && path.extname(file).toLowerCase() === '.htm')) file = `${file}.${format}`;
    const job =
      request.view === 'frequency'
        ? await this.wb.call(generateFrequencyReportTool, {})
        : request.view === 'cooccurrence'
          ? await this.wb.call(generateCooccurrenceReportTool, {})
          : await this.wb.call(generateCoderComparisonTool, { coder_ids: coders as string[], ...(unit ? { unit } : {}) });
    if (!job) return undefined;
    if (job.status !== 'completed') return void vscode.window.showErrorMessage(`The report failed: ${job.error ?? job.error_code ?? 'unknown error'}`);
    // the save dialog already asked before replacing a file
    const out = await this.wb.call(exportReportTool, { report_id: job.report_id, format, output_path: file, overwrite: true });
    if (!out) return undefined;
    if (!target) {
      void vscode.window.showInformationMessage(`Exported report ${out.report_id} to ${path.basename(out.file_path)}.`, 'Open').then((a) => {
        if (a === 'Open') void vscode.commands.executeCommand('vscode.open', vscode.Uri.file(out.file_path));
      });
    }
    return out.file_path;
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.panel?.dispose();
    for (const s of this.subscriptions) s.dispose();
  }
}

/** Events after which the reports may show something else. */
function changesReports(e: EventRecord): boolean {
  return e.event_type.startsWith('coding.') || e.event_type.startsWith('source.') || e.event_type.startsWith('case.') || replacesProjectState(e.event_type);
}

/** A code matrix (of cases, or of sources for document attributes) as a heat map, keeping the most used rows and columns (in their order) when there are many. */
export function capHeat(m: CodeMatrixResult | DocumentAttributeMatrixResult, maxRows = HEAT_MAX_ROWS, maxColumns = HEAT_MAX_COLUMNS): HeatMap {
  const rowSums = m.matrix.map((r) => r.reduce((a, b) => a + b, 0));
  const colSums = m.columns.map((_c, j) => m.matrix.reduce((a, r) => a + (r[j] ?? 0), 0));
  const keep = (sums: number[], max: number) => {
    if (sums.length <= max) return sums.map((_s, i) => i);
    return sums
      .map((s, i) => [s, i] as const)
      .sort((a, b) => b[0] - a[0] || a[1] - b[1])
      .slice(0, max)
      .map(([, i]) => i)
      .sort((a, b) => a - b);
  };
  const rows = keep(rowSums, maxRows);
  const cols = keep(colSums, maxColumns);
  const heat: HeatMap = {
    rows: rows.map((i) => m.codes[i] as CodeMatrixResult['codes'][number]),
    columns: cols.map((j) => {
      const c = m.columns[j] as CodeMatrixResult['columns'][number] | DocumentAttributeMatrixResult['columns'][number];
      return 'source_ids' in c ? { key: c.key, label: c.label, source_ids: c.source_ids } : { key: c.key, label: c.label, case_ids: c.case_ids };
    }),
    matrix: rows.map((i) => cols.map((j) => m.matrix[i]?.[j] ?? 0)),
  };
  if (rows.length < m.codes.length) heat.total_rows = m.codes.length;
  if (cols.length < m.columns.length) heat.total_columns = m.columns.length;
  return heat;
}

/** Quick pick labels render `$(name)` as icons: keep text that looks like one as text. */
function noIcons(s: string): string {
  return s.replace(/\$\(/g, '$\u200b(');
}

const STYLE = `
body { font-family: var(--vscode-font-family); font-size: var(--vscode-font-size); color: var(--vscode-foreground); padding: 8px 16px; }
header { display: flex; flex-wrap: wrap; gap: 8px; align-items: center; justify-content: space-between; border-bottom: 1px solid var(--vscode-panel-border); padding-bottom: 6px; }
#tabs { display: flex; gap: 2px; flex-wrap: wrap; }
.tab { background: none; border: none; border-bottom: 2px solid transparent; color: var(--vscode-foreground); padding: 4px 10px; cursor: pointer; font: inherit; }
.tab.active { border-bottom-color: var(--vscode-focusBorder); font-weight: 600; }
.tab:hover { background: var(--vscode-toolbar-hoverBackground); }
#export { display: flex; gap: 4px; align-items: center; color: var(--vscode-descriptionForeground); }
#export button { color: var(--vscode-button-secondaryForeground); background: var(--vscode-button-secondaryBackground); border: none; border-radius: 2px; padding: 2px 8px; cursor: pointer; font: inherit; }
#export button:disabled { opacity: 0.5; cursor: default; }
#controls { margin: 8px 0 0; display: flex; gap: 8px; }
#controls:empty { display: none; }
select { color: var(--vscode-dropdown-foreground); background: var(--vscode-dropdown-background); border: 1px solid var(--vscode-dropdown-border); padding: 2px; font: inherit; }
#summary { margin: 8px 0; color: var(--vscode-descriptionForeground); }
#chart-box { position: relative; width: 100%; display: none; }
#table { border-collapse: collapse; display: none; min-width: 60%; }
#table th, #table td { border-bottom: 1px solid var(--vscode-panel-border); padding: 3px 10px; text-align: left; }
#table td.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
#table tr.clickable { cursor: pointer; }
#table tr.clickable:hover, #table tr.clickable:focus { background: var(--vscode-list-hoverBackground); outline: none; }
#table tr.total td { font-weight: 600; }
#details table { border-collapse: collapse; margin: 4px 0 12px; }
#details th, #details td { border-bottom: 1px solid var(--vscode-panel-border); padding: 2px 10px; text-align: left; }
#details td.n, #details th.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
#details th.group { text-align: center; border-bottom: none; }
#details td.quote { font-style: italic; max-width: 40em; }
#details h3 { font-size: 1em; margin: 12px 0 2px; }
#details h2 { font-size: 1.1em; margin: 16px 0 4px; border-bottom: 1px solid var(--vscode-panel-border); padding-bottom: 2px; }
#details td.note, #details p.muted { color: var(--vscode-descriptionForeground); font-style: italic; }
#details tr.total td { font-weight: 600; }
#details button, #controls button { color: var(--vscode-button-secondaryForeground); background: var(--vscode-button-secondaryBackground); border: none; border-radius: 2px; padding: 2px 8px; cursor: pointer; font: inherit; }
#details button.link { margin: 4px 0 8px; }
section.disagreement { border: 1px solid var(--vscode-panel-border); border-radius: 4px; margin: 10px 0; padding: 6px 10px; }
.dhead { display: flex; align-items: center; gap: 6px; margin-bottom: 6px; }
.dhead .where { color: var(--vscode-descriptionForeground); flex: 1; }
.swatch { display: inline-block; width: 10px; height: 10px; border-radius: 2px; }
.sidebyside { display: grid; gap: 12px; }
.coder { border-left: 3px solid var(--vscode-panel-border); padding-left: 8px; }
.coder.coded { border-left-color: var(--vscode-focusBorder); }
.ctitle { margin-bottom: 4px; }
.ctitle .no { color: var(--vscode-descriptionForeground); }
.passage { font-family: var(--vscode-editor-font-family); line-height: 1.6; white-space: pre-wrap; }
.passage .other { border-bottom: 2px dotted transparent; }
.passage .dispute { text-decoration: underline wavy var(--vscode-editorWarning-foreground, #cca700); text-underline-offset: 3px; }
.chips { color: var(--vscode-descriptionForeground); font-size: 0.9em; margin-top: 4px; }
.linechart { position: relative; height: 220px; max-width: 720px; margin: 4px 0 8px; }
`;
