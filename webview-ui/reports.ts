// The Reports webview: code frequencies (bar chart), co-occurrence, code-by-case and code-by-attribute
// matrices (heat maps); coder agreement, disagreements side by side and human vs AI (reports/agreement.ts). Charts are Chart.js 4 with the chartjs-chart-matrix plugin,
// drawn on a canvas; every other text is set with textContent (never innerHTML), so names with markup in
// them show as text. A click on a bar, a cell or a table row asks the extension for the coded segments
// behind it. After each view is drawn the page reports what it drew ('rendered').
import {
  BarController,
  BarElement,
  CategoryScale,
  Chart,
  LinearScale,
  Tooltip,
  type ChartConfiguration,
  type ChartEvent,
  type ActiveElement,
  type Plugin,
  type Scale,
} from 'chart.js';
import { MatrixController, MatrixElement } from 'chartjs-chart-matrix';
import { drawAgreement, drawDisagreements, drawHumanAi, type ReportsUi } from './reports/agreement';
import type { DrillTarget, ExportFormat, FromReportsWebview, HeatMap, ReportRequest, ReportsViewId, ToReportsWebview } from '../src/protocol/reports';

/** "1 overlap", "2 overlaps": a count with its noun (the webview imports no src code but protocol types; src/core/plural.ts is the same rule). */
function countOf(n: number, singular: string): string {
  return `${n} ${n === 1 ? singular : `${singular}s`}`;
}

declare function acquireVsCodeApi(): { postMessage(m: FromReportsWebview): void; getState(): unknown; setState(s: unknown): void };

Chart.register(BarController, BarElement, CategoryScale, LinearScale, Tooltip, MatrixController, MatrixElement);

const vscode = acquireVsCodeApi();
const TABS: { view: ReportsViewId; label: string }[] = [
  { view: 'frequency', label: 'Frequencies' },
  { view: 'cooccurrence', label: 'Co-occurrence' },
  { view: 'agreement', label: 'Coder agreement' },
  { view: 'disagreements', label: 'Disagreements' },
  { view: 'human_ai', label: 'Human vs AI' },
  { view: 'case', label: 'Code × case' },
  { view: 'attribute', label: 'Code × case attribute' },
  { view: 'document_attribute', label: 'Code × document attribute' },
];
/** Views whose report export_report can write. */
const EXPORTABLE = new Set<ReportsViewId>(['frequency', 'cooccurrence', 'agreement', 'disagreements']);

const byId = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const tabs = byId<HTMLDivElement>('tabs');
const controls = byId<HTMLDivElement>('controls');
const summary = byId<HTMLDivElement>('summary');
const box = byId<HTMLDivElement>('chart-box');
const canvas = byId<HTMLCanvasElement>('chart');
const table = byId<HTMLTableElement>('table');
const exportBar = byId<HTMLDivElement>('export');
/** below the table: the agreement view's per-code measures and disagreements (absent from older pages) */
const details = document.getElementById('details') as HTMLDivElement | null;

let request: ReportRequest = restoreRequest();
let chart: Chart | undefined;
/** charts on canvases of their own (the human-vs-AI view's weekly lines) */
const extraCharts: Chart[] = [];

function restoreRequest(): ReportRequest {
  const s = vscode.getState() as { request?: ReportRequest } | undefined;
  return s?.request && TABS.some((t) => t.view === s.request?.view) ? s.request : { view: 'frequency' };
}

function el<K extends keyof HTMLElementTagNameMap>(tag: K, text?: string, cls?: string): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (text !== undefined) e.textContent = text;
  if (cls) e.className = cls;
  return e;
}

function css(name: string, fallback: string): string {
  return getComputedStyle(document.body).getPropertyValue(name).trim() || fallback;
}

function ask(r: ReportRequest): void {
  request = r;
  vscode.setState({ request });
  drawTabs();
  vscode.postMessage({ type: 'request', request: r });
}

function drawTabs(): void {
  tabs.replaceChildren(
    ...TABS.map((t) => {
      const b = el('button', t.label, t.view === request.view ? 'tab active' : 'tab');
      b.setAttribute('role', 'tab');
      b.setAttribute('aria-selected', String(t.view === request.view));
      b.dataset.view = t.view;
      b.addEventListener('click', () => ask({ view: t.view } as ReportRequest));
      return b;
    }),
  );
  const exportable = EXPORTABLE.has(request.view);
  for (const b of exportBar.querySelectorAll('button')) {
    b.disabled = !exportable;
    b.title = exportable
      ? `Export this report as ${b.textContent ?? ''} (export_report)`
      : 'export_report writes frequency, co-occurrence and coder agreement reports';
  }
}

function drill(target: DrillTarget): void {
  vscode.postMessage({ type: 'drill', target });
}

/** Clears the chart and the table. */
function reset(): void {
  chart?.destroy();
  chart = undefined;
  for (const c of extraCharts.splice(0)) c.destroy();
  box.style.display = 'none';
  table.replaceChildren();
  table.style.display = 'none';
  details?.replaceChildren();
  controls.replaceChildren();
  summary.textContent = '';
  summary.title = '';
}

/** Counts the canvas pixels that are not transparent (how much the chart painted). */
function painted(): number {
  const ctx = canvas.getContext('2d');
  if (!ctx || canvas.width === 0 || canvas.height === 0) return 0;
  const data = ctx.getImageData(0, 0, canvas.width, canvas.height).data;
  let n = 0;
  for (let i = 3; i < data.length; i += 4) if ((data[i] as number) > 0) n++;
  return n;
}

function rendered(view: ReportsViewId, items: number): void {
  vscode.postMessage({ type: 'rendered', view, items, painted: chart ? painted() : 0 });
}

function showChart(config: ChartConfiguration, height: number): void {
  box.style.display = 'block';
  box.style.height = `${height}px`;
  chart = new Chart(canvas, config);
}

const baseOptions = () => ({
  responsive: true,
  maintainAspectRatio: false,
  animation: false as const,
  color: css('--vscode-foreground', '#ccc'),
  font: { family: css('--vscode-font-family', 'sans-serif') },
});

function axisColors() {
  return { ticks: { color: css('--vscode-foreground', '#ccc') }, grid: { color: css('--vscode-panel-border', 'rgba(128,128,128,0.3)') } };
}

// ------------------------------------------------------------------------------------------ frequencies

function drawFrequency(m: Extract<ToReportsWebview, { type: 'frequency' }>): void {
  const used = m.codes.filter((c) => c.segment_count > 0);
  summary.textContent = `${countOf(m.segments, 'coded segment')} in ${countOf(m.sources, 'source')}; ${countOf(used.length, 'code')} used${m.unused > 0 ? `, ${m.unused} unused (not shown)` : ''}. Click a bar for its segments.`;
  if (used.length === 0) {
    summary.textContent = 'Nothing is coded yet.';
    return rendered('frequency', 0);
  }
  const axes = axisColors();
  showChart(
    {
      type: 'bar',
      data: {
        labels: used.map((c) => c.name),
        datasets: [{ label: 'segments', data: used.map((c) => c.segment_count), backgroundColor: used.map((c) => c.color), borderWidth: 0 }],
      },
      options: {
        ...baseOptions(),
        indexAxis: 'y',
        scales: {
          x: { ...axes, beginAtZero: true, ticks: { ...axes.ticks, precision: 0 } },
          y: { ...axes, grid: { display: false }, ticks: { ...axes.ticks, autoSkip: false } },
        },
        plugins: {
          tooltip: { callbacks: { label: (ctx) => ` ${countOf(ctx.parsed.x, 'segment')} in ${countOf(used[ctx.dataIndex]?.source_count ?? 0, 'source')}` } },
        },
        onClick: (_e: ChartEvent, els: ActiveElement[]) => {
          const c = els[0] ? used[els[0].index] : undefined;
          if (c) drill({ kind: 'code', code_id: c.code_id });
        },
        onHover: (e: ChartEvent, els: ActiveElement[]) => hoverCursor(e, els),
      },
    },
    Math.max(160, used.length * 24 + 60),
  );
  rendered('frequency', chart?.getDatasetMeta(0).data.length ?? 0);
}

function hoverCursor(e: ChartEvent, els: ActiveElement[]): void {
  const target = e.native?.target as HTMLElement | undefined;
  if (target) target.style.cursor = els.length > 0 ? 'pointer' : 'default';
}

// ------------------------------------------------------------------------------------------ heat maps

/** Writes each cell's count in the cell when it fits. */
const cellLabels: Plugin<'matrix'> = {
  id: 'marginaliaCellLabels',
  afterDatasetsDraw(c) {
    const meta = c.getDatasetMeta(0);
    const data = c.data.datasets[0]?.data as { v?: number }[] | undefined;
    if (!data) return;
    const ctx = c.ctx;
    ctx.save();
    ctx.textAlign = 'center';
    ctx.textBaseline = 'middle';
    ctx.font = `11px ${css('--vscode-font-family', 'sans-serif')}`;
    meta.data.forEach((cell, i) => {
      const v = data[i]?.v ?? 0;
      const { x, y, width, height } = cell.getProps(['x', 'y', 'width', 'height'], true) as { x: number; y: number; width: number; height: number };
      if (v === 0 || width < 16 || height < 12) return;
      ctx.fillStyle = css('--vscode-editor-foreground', '#fff');
      ctx.fillText(String(v), x + width / 2, y + height / 2);
    });
    ctx.restore();
  },
};

/** A linear axis' ticks: one at each index 0..n-1 (the cells' centres), whatever the axis' bounds. */
function onePerIndex(labels: string[]) {
  return (axis: Scale) => {
    axis.ticks = labels.map((_l, i) => ({ value: i }));
  };
}

/** Draws `heat` as a matrix chart; `target(i, j)` says what a click on row i, column j shows. */
function drawHeatMap(view: ReportsViewId, heat: HeatMap, target: (i: number, j: number) => DrillTarget | undefined): void {
  const points: { x: number; y: number; v: number }[] = [];
  let max = 0;
  heat.rows.forEach((_r, i) =>
    heat.columns.forEach((_c, j) => {
      const v = heat.matrix[i]?.[j] ?? 0;
      max = Math.max(max, v);
      points.push({ x: j, y: i, v });
    }),
  );
  if (points.length === 0) return rendered(view, 0);
  const rgb = hexToRgb(css('--vscode-charts-blue', '#3794ff')) ?? [55, 148, 255];
  const axes = axisColors();
  const cols = heat.columns.map((c) => c.label);
  const rows = heat.rows.map((r) => r.name);
  const tick = (labels: string[]) => ({
    ...axes.ticks,
    stepSize: 1,
    autoSkip: false,
    callback: (v: string | number) => (Number.isInteger(Number(v)) ? truncate(labels[Number(v)] ?? '', 28) : ''),
  });
  const config: ChartConfiguration<'matrix'> = {
    type: 'matrix',
    data: {
      datasets: [
        {
          label: 'segments',
          data: points,
          backgroundColor: (ctx) => {
            const v = (ctx.raw as { v?: number } | undefined)?.v ?? 0;
            return `rgba(${rgb[0]}, ${rgb[1]}, ${rgb[2]}, ${v === 0 ? 0.06 : 0.2 + 0.8 * (v / (max || 1))})`;
          },
          borderWidth: 1,
          borderColor: css('--vscode-editor-background', '#1e1e1e'),
          width: ({ chart: c }) => (c.chartArea ? c.chartArea.width / cols.length : 0),
          height: ({ chart: c }) => (c.chartArea ? c.chartArea.height / rows.length : 0),
        },
      ],
    },
    options: {
      ...baseOptions(),
      scales: {
        x: {
          type: 'linear',
          position: 'top',
          min: -0.5,
          max: cols.length - 0.5,
          offset: false,
          grid: { display: false },
          afterBuildTicks: onePerIndex(cols),
          ticks: { ...tick(cols), maxRotation: 60, minRotation: 0 },
        },
        y: {
          type: 'linear',
          reverse: true,
          min: -0.5,
          max: rows.length - 0.5,
          offset: false,
          grid: { display: false },
          afterBuildTicks: onePerIndex(rows),
          ticks: tick(rows),
        },
      },
      plugins: {
        tooltip: {
          callbacks: {
            title: () => '',
            label: (ctx) => {
              const p = ctx.raw as { x: number; y: number; v: number };
              return `${rows[p.y] ?? ''} × ${cols[p.x] ?? ''}: ${p.v}`;
            },
          },
        },
      },
      onClick: (_e: ChartEvent, els: ActiveElement[]) => {
        const p = els[0] ? points[els[0].index] : undefined;
        const t = p ? target(p.y, p.x) : undefined;
        if (t) drill(t);
      },
      onHover: (e: ChartEvent, els: ActiveElement[]) => hoverCursor(e, els),
    },
    plugins: [cellLabels],
  };
  showChart(config as unknown as ChartConfiguration, Math.max(180, rows.length * 24 + 140));
  rendered(view, chart?.getDatasetMeta(0).data.length ?? 0);
}

function shownOf(heat: HeatMap): string {
  const parts: string[] = [];
  if (heat.total_rows !== undefined && heat.total_rows > heat.rows.length) parts.push(`the ${heat.rows.length} most used of ${heat.total_rows} codes`);
  if (heat.total_columns !== undefined && heat.total_columns > heat.columns.length)
    parts.push(`the ${heat.columns.length} largest of ${heat.total_columns} columns`);
  return parts.length > 0 ? ` Showing ${parts.join(' and ')}.` : '';
}

function drawCooccurrence(m: Extract<ToReportsWebview, { type: 'cooccurrence' }>): void {
  summary.textContent =
    m.heat.rows.length === 0
      ? 'No coded segments yet.'
      : `${countOf(m.total_overlaps, 'overlap')} of two different codes, ${m.same_code_overlaps} of the same code (diagonal).${shownOf(m.heat)} Click a cell for its segments.`;
  drawHeatMap('cooccurrence', m.heat, (i, j) => {
    const a = m.heat.rows[i];
    const b = m.heat.columns[j];
    return a && b?.code_id !== undefined ? { kind: 'pair', code_a: a.code_id, code_b: b.code_id } : undefined;
  });
}

function caseTarget(heat: HeatMap) {
  return (i: number, j: number): DrillTarget | undefined => {
    const r = heat.rows[i];
    const c = heat.columns[j];
    return r && c?.case_ids ? { kind: 'cases', code_id: r.code_id, case_ids: c.case_ids, column: c.label } : undefined;
  };
}

/** A button under the summary that runs a Cases view command (the empty case views point there, never to a tool). */
function caseButton(label: string, command: 'newFromSources' | 'openAttributes'): void {
  const b = el('button', label);
  b.type = 'button';
  b.addEventListener('click', () => vscode.postMessage({ type: 'caseCommand', command }));
  controls.append(b);
}

function drawCase(m: Extract<ToReportsWebview, { type: 'case' }>): void {
  if (m.heat.columns.length === 0) caseButton('New Case from Sources...', 'newFromSources');
  summary.textContent =
    m.heat.columns.length === 0
      ? 'No cases yet. Create a case from its sources in the Cases view ("New Case from Sources...").'
      : m.heat.rows.length === 0
        ? 'None of the cases holds a coded segment yet.'
        : `Coded segments of each code in each case.${shownOf(m.heat)} Click a cell for its segments.`;
  if (m.heat.rows.length === 0) return rendered('case', 0);
  drawHeatMap('case', m.heat, caseTarget(m.heat));
}

/** The attribute picker of the two code × attribute views. */
function attributePicker(view: 'attribute' | 'document_attribute', attributes: string[], current: string | null): void {
  const label = el('label', 'Attribute ');
  const select = el('select');
  select.id = 'attribute';
  for (const a of attributes) {
    const o = el('option', a);
    o.value = a;
    o.selected = a === current;
    select.append(o);
  }
  select.addEventListener('change', () => ask({ view, attribute: select.value }));
  label.append(select);
  controls.append(label);
}

function drawAttribute(m: Extract<ToReportsWebview, { type: 'attribute' }>): void {
  if (m.attributes.length === 0) {
    caseButton('Open Case Attributes', 'openAttributes');
    summary.textContent = 'No case has an attribute yet. Give cases typed attributes (age, group, site) in the Case Attributes table of the Cases view.';
    return rendered('attribute', 0);
  }
  attributePicker('attribute', m.attributes, m.attribute);
  summary.textContent =
    m.heat.rows.length === 0
      ? 'No coded segment belongs to a case yet.'
      : `Coded segments of each code in the cases with each value.${shownOf(m.heat)} Click a cell for its segments.`;
  if (m.heat.rows.length === 0) return rendered('attribute', 0);
  drawHeatMap('attribute', m.heat, caseTarget(m.heat));
}

function drawDocumentAttribute(m: Extract<ToReportsWebview, { type: 'document_attribute' }>): void {
  if (m.attributes.length === 0) {
    summary.textContent = 'No source has a document attribute yet: set_source_attribute gives sources typed attributes (site, wave, interview date).';
    return rendered('document_attribute', 0);
  }
  attributePicker('document_attribute', m.attributes, m.attribute);
  summary.textContent =
    m.heat.rows.length === 0
      ? 'No coded segments yet.'
      : `Coded segments of each code in the sources with each value.${shownOf(m.heat)} Click a cell for its segments.`;
  if (m.heat.rows.length === 0) return rendered('document_attribute', 0);
  drawHeatMap('document_attribute', m.heat, (i, j) => {
    const r = m.heat.rows[i];
    const c = m.heat.columns[j];
    return r && c?.source_ids ? { kind: 'sources', code_id: r.code_id, source_ids: c.source_ids, column: `${m.attribute ?? ''} = ${c.label}` } : undefined;
  });
}

// ------------------------------------------------------------------------------------------ agreement views (reports/agreement.ts)

const ui: ReportsUi = {
  el,
  countOf,
  css,
  ask,
  drill,
  openSource: (source_id, start_pos, end_pos) => vscode.postMessage({ type: 'openSource', source_id, start_pos, end_pos }),
  rendered,
  keepChart: (c) => extraCharts.push(c),
  summary,
  controls,
  table,
  details,
};

// ------------------------------------------------------------------------------------------ plumbing

function truncate(s: string, n: number): string {
  return s.length > n ? `${s.slice(0, n - 1)}…` : s;
}

function hexToRgb(color: string): [number, number, number] | undefined {
  const m = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})/i.exec(color);
  return m ? [parseInt(m[1] as string, 16), parseInt(m[2] as string, 16), parseInt(m[3] as string, 16)] : undefined;
}

for (const b of exportBar.querySelectorAll('button')) {
  b.addEventListener('click', () => vscode.postMessage({ type: 'export', format: b.dataset.format as ExportFormat, request }));
}

window.addEventListener('message', (e: MessageEvent<ToReportsWebview>) => {
  const m = e.data;
  if (m.type === 'show') {
    if (m.view !== request.view) ask({ view: m.view } as ReportRequest);
    return;
  }
  if (m.type !== 'noProject' && m.type !== request.view) return; // an answer to an earlier request
  reset();
  switch (m.type) {
    case 'noProject':
      summary.textContent = 'No Marginalia project is open.';
      return;
    case 'frequency':
      return drawFrequency(m);
    case 'cooccurrence':
      return drawCooccurrence(m);
    case 'agreement':
      return drawAgreement(ui, m);
    case 'disagreements':
      return drawDisagreements(ui, m);
    case 'human_ai':
      return drawHumanAi(ui, m);
    case 'case':
      return drawCase(m);
    case 'attribute':
      return drawAttribute(m);
    case 'document_attribute':
      return drawDocumentAttribute(m);
  }
});

drawTabs();
vscode.postMessage({ type: 'ready' });
vscode.postMessage({ type: 'request', request });
