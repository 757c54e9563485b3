// The Reports webview's agreement views (issue 16 items 6 and 7): coder agreement of two or more coders
// with every measure's 95% interval, the disagreements side by side on their passages (one column per coder,
// the words each coded highlighted), and each agent against the human coders with its suggestion outcomes
// per code and per week (a Chart.js line chart). Every text is set with textContent, colours only as rgb()
// computed from a #RRGGBB code colour, so names and passages with markup in them show as text.
import { Chart, Legend, LineController, LineElement, PointElement, type ChartConfiguration } from 'chart.js';
import type {
  AgentCodeRow,
  AgreementRow,
  AgreementUnit,
  DisagreementPassageView,
  DrillTarget,
  IntervalValue,
  PassageSpanView,
  ReportRequest,
  ReportsViewId,
  SuggestionOutcomeRow,
  ToReportsWebview,
} from '../../src/protocol/reports';

Chart.register(LineController, LineElement, PointElement, Legend);
// the legend is for the weekly lines only: the other charts of the page have none
Chart.defaults.plugins.legend.display = false;

/** What the agreement views need of the page (reports.ts owns the page and its state). */
export interface ReportsUi {
  el<K extends keyof HTMLElementTagNameMap>(tag: K, text?: string, cls?: string): HTMLElementTagNameMap[K];
  countOf(n: number, singular: string): string;
  css(name: string, fallback: string): string;
  ask(r: ReportRequest): void;
  drill(t: DrillTarget): void;
  openSource(source_id: number, start_pos: number, end_pos: number): void;
  rendered(view: ReportsViewId, items: number): void;
  /** a chart drawn outside the main canvas, destroyed with the view */
  keepChart(c: Chart): void;
  summary: HTMLElement;
  controls: HTMLElement;
  table: HTMLTableElement;
  details: HTMLElement | null;
}

type AgreementMsg = Extract<ToReportsWebview, { type: 'agreement' }>;
type DisagreementsMsg = Extract<ToReportsWebview, { type: 'disagreements' }>;
type HumanAiMsg = Extract<ToReportsWebview, { type: 'human_ai' }>;

const UNITS: readonly AgreementUnit[] = ['character', 'segment', 'sentence', 'paragraph'];

/** `v` with `digits` decimals ("–" for null); a value that rounds to zero shows without a minus sign. */
function fmt(v: number | null, digits: number, suffix = ''): string {
  if (v === null) return '–';
  const text = v.toFixed(digits);
  return `${Number(text) === 0 ? (0).toFixed(digits) : text}${suffix}`;
}

function interval(low: number | null | undefined, high: number | null | undefined, digits = 3): string {
  return low === null || low === undefined || high === null || high === undefined ? '–' : `[${fmt(low, digits)}, ${fmt(high, digits)}]`;
}

function percent(v: number | null): string {
  return v === null ? '–' : `${Math.round(v * 100)}%`;
}

/** `#RRGGBB` as its three channels; anything else (a hostile colour) is undefined. */
export function hexToRgb(color: string): [number, number, number] | undefined {
  const m = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(color);
  return m ? [parseInt(m[1] as string, 16), parseInt(m[2] as string, 16), parseInt(m[3] as string, 16)] : undefined;
}

function rgba(color: string, alpha: number): string {
  const [r, g, b] = hexToRgb(color) ?? [128, 128, 128];
  return `rgba(${r}, ${g}, ${b}, ${alpha})`;
}

/** A table with a header row and body rows of cells (text, optional class). */
function makeTable(ui: ReportsUi, head: string[], rows: { cells: [string, string?][]; cls?: string }[], cls: string): HTMLTableElement {
  const t = ui.el('table', undefined, cls);
  const thead = ui.el('thead');
  const hr = ui.el('tr');
  for (const h of head) hr.append(ui.el('th', h));
  thead.append(hr);
  const body = ui.el('tbody');
  for (const r of rows) {
    const tr = ui.el('tr', undefined, r.cls);
    for (const [text, c] of r.cells) tr.append(ui.el('td', text, c));
    body.append(tr);
  }
  t.append(thead, body);
  return t;
}

/** The unit picker; `change` asks for the view again with the new unit. */
function unitPicker(ui: ReportsUi, current: AgreementUnit, change: (u: AgreementUnit) => void): HTMLSelectElement {
  const unit = ui.el('select');
  unit.id = 'agreement-unit';
  for (const u of UNITS) {
    const o = ui.el('option', u);
    o.value = u;
    o.selected = current === u;
    unit.append(o);
  }
  unit.addEventListener('change', () => change(unit.value as AgreementUnit));
  const label = ui.el('label', 'Unit ');
  label.append(unit);
  ui.controls.append(label);
  return unit;
}

/** The coder check boxes (two or more) and the unit picker of the agreement and disagreements views. */
function coderControls(ui: ReportsUi, view: 'agreement' | 'disagreements', coders: string[], selected: string[], current: AgreementUnit): void {
  const chosen = new Set(selected);
  const boxes: HTMLInputElement[] = [];
  const change = () => {
    const picked = boxes.filter((b) => b.checked).map((b) => b.value);
    if (picked.length >= 2) ui.ask({ view, coders: picked, unit: unit.value as AgreementUnit });
    else ui.summary.textContent = 'Pick two coders or more.';
  };
  for (const c of coders) {
    const label = ui.el('label');
    const box = ui.el('input');
    box.type = 'checkbox';
    box.value = c;
    box.checked = chosen.has(c);
    box.addEventListener('change', change);
    boxes.push(box);
    label.append(box, document.createTextNode(` ${c}`));
    ui.controls.append(label);
  }
  // the check boxes' handler reads the picker made after them (events come later)
  const unit = unitPicker(ui, current, change);
}

// ------------------------------------------------------------------------------------------ agreement

/** Per code (then all codes) every measure with its 95% interval, below the main table; a link to the disagreements. */
function drawAgreementDetails(ui: ReportsUi, m: AgreementMsg, selected: string[]): void {
  if (!ui.details) return;
  const parts: HTMLElement[] = [];
  const n = m.disagreements?.length ?? 0;
  if (n > 0) {
    const b = ui.el('button', `Show the ${ui.countOf(n, 'disagreement')} side by side on the text`, 'link');
    b.type = 'button';
    b.addEventListener('click', () => ui.ask({ view: 'disagreements', coders: selected, unit: m.unit ?? 'character' }));
    parts.push(b);
  }
  for (const t of m.tables ?? []) {
    parts.push(ui.el('h3', `${t.name} (${ui.countOf(t.units, m.unit ?? 'character')})`));
    const rows = t.measures.map((r) => ({
      cells: [[r.measure], [r.coders], [fmt(r.value, 3), 'n'], [interval(r.ci_low, r.ci_high), 'n']] as [string, string?][],
    }));
    parts.push(makeTable(ui, ['Measure', 'Coders', 'Value', '95% interval'], rows, 'measures'));
  }
  ui.details.replaceChildren(...parts);
}

export function drawAgreement(ui: ReportsUi, m: AgreementMsg): void {
  const selected = m.selected ?? m.pair ?? [];
  if (m.coders.length >= 2) coderControls(ui, 'agreement', m.coders, selected, m.unit ?? 'character');
  if (m.note || !m.pair) {
    ui.summary.textContent = m.note ?? 'Pick two coders.';
    return ui.rendered('agreement', 0);
  }
  const two = selected.length === 2;
  const [a, b] = m.pair;
  const unit = m.unit ?? 'character';
  ui.summary.textContent = `Agreement of ${selected.join(', ')} by ${unit} over ${ui.countOf(m.total_characters, 'character')} of ${ui.countOf(m.source_count, 'source')} coded by at least two of them; intervals: seeded bootstrap 95%. Click a row for the coders' segments of the code.`;
  ui.summary.title = m.method;
  const head = ui.el('tr');
  const names = two
    ? ['Code', '% agreement', "Cohen's κ", '95% interval', 'both', `only ${a}`, `only ${b}`]
    : ['Code', '% agreement', "Fleiss' κ", '95% interval'];
  for (const h of names) head.append(ui.el('th', h));
  const thead = ui.el('thead');
  thead.append(head);
  const body = ui.el('tbody');
  const row = (r: AgreementRow, total: boolean) => {
    const tr = ui.el('tr', undefined, total ? 'total' : 'clickable');
    tr.append(ui.el('td', r.name), ui.el('td', fmt(r.percent_agreement, 1, '%'), 'n'), ui.el('td', fmt(r.kappa, 3), 'n'));
    tr.append(ui.el('td', interval(r.kappa_low, r.kappa_high), 'n'));
    if (two) tr.append(ui.el('td', String(r.both), 'n'), ui.el('td', String(r.only_a), 'n'), ui.el('td', String(r.only_b), 'n'));
    if (!total) {
      tr.tabIndex = 0;
      const go = () => ui.drill({ kind: 'coders', code_id: r.code_id, coders: selected });
      tr.addEventListener('click', go);
      tr.addEventListener('keydown', (e) => {
        if (e.key === 'Enter' || e.key === ' ') go();
      });
    }
    return tr;
  };
  for (const r of m.rows) body.append(row(r, false));
  if (m.overall) body.append(row(m.overall, true));
  ui.table.replaceChildren(thead, body);
  ui.table.style.display = 'table';
  drawAgreementDetails(ui, m, selected);
  ui.rendered('agreement', m.rows.length);
}

// ------------------------------------------------------------------------------------------ disagreements

/** The passage as pieces: each stretch covered by the same codings is one span, highlighted in its code's colour when the disputed code covers it. */
function passageText(ui: ReportsUi, text: string, spans: PassageSpanView[], disputed: { start: number; end: number }[]): HTMLElement {
  const chars = Array.from(text);
  const cuts = new Set<number>([0, chars.length]);
  for (const s of [...spans, ...disputed]) {
    cuts.add(Math.max(0, Math.min(chars.length, s.start)));
    cuts.add(Math.max(0, Math.min(chars.length, s.end)));
  }
  const at = [...cuts].sort((x, y) => x - y);
  const out = ui.el('div', undefined, 'passage');
  for (let k = 0; k + 1 < at.length; k++) {
    const a = at[k] as number;
    const b = at[k + 1] as number;
    if (a >= b) continue;
    const piece = ui.el('span', chars.slice(a, b).join(''));
    const over = spans.filter((s) => s.start < b && a < s.end);
    const main = over.find((s) => s.disputed);
    if (main) {
      piece.className = 'hl';
      piece.style.backgroundColor = rgba(main.color, 0.45);
    } else if (over.length > 0) {
      piece.className = 'other';
      piece.style.borderBottomColor = rgba((over[0] as PassageSpanView).color, 1);
    }
    if (disputed.some((d) => d.start < b && a < d.end)) piece.classList.add('dispute');
    if (over.length > 0) piece.title = over.map((s) => s.code).join(', ');
    out.append(piece);
  }
  return out;
}

function passageCard(ui: ReportsUi, p: DisagreementPassageView): HTMLElement {
  const card = ui.el('section', undefined, 'disagreement');
  const head = ui.el('div', undefined, 'dhead');
  const swatch = ui.el('span', undefined, 'swatch');
  swatch.style.backgroundColor = rgba(p.color, 1);
  const open = ui.el('button', 'Open in source');
  open.type = 'button';
  open.title = `Open ${p.source} at ${p.start_pos}–${p.end_pos}`;
  open.addEventListener('click', () => ui.openSource(p.source_id, p.start_pos, p.end_pos));
  head.append(swatch, ui.el('strong', p.code), ui.el('span', ` · ${p.source} · ${p.start_pos}–${p.end_pos} `, 'where'), open);
  const grid = ui.el('div', undefined, 'sidebyside');
  grid.style.gridTemplateColumns = `repeat(${p.coders.length}, minmax(0, 1fr))`;
  for (const c of p.coders) {
    const col = ui.el('div', undefined, c.coded ? 'coder coded' : 'coder');
    const title = ui.el('div', undefined, 'ctitle');
    title.append(ui.el('strong', c.coder), ui.el('span', c.coded ? ` coded "${p.code}"` : ` did not code "${p.code}"`, c.coded ? 'yes' : 'no'));
    const codes = [...new Set(c.spans.map((s) => s.code))];
    const chips = ui.el('div', undefined, 'chips');
    chips.textContent = codes.length > 0 ? `Codes here: ${codes.join(', ')}` : 'No coding here';
    col.append(title, passageText(ui, p.text, c.spans, p.disputed), chips);
    grid.append(col);
  }
  card.append(head, grid);
  return card;
}

export function drawDisagreements(ui: ReportsUi, m: DisagreementsMsg): void {
  if (m.coders.length >= 2) coderControls(ui, 'disagreements', m.coders, m.selected ?? [], m.unit);
  if (m.note || !m.selected) {
    ui.summary.textContent = m.note ?? 'Pick two coders.';
    return ui.rendered('disagreements', 0);
  }
  ui.summary.textContent =
    m.passages.length === 0
      ? `${m.selected.join(', ')} agree on every ${m.unit} they coded.`
      : `${ui.countOf(m.total, 'disagreement')} of ${m.selected.join(', ')} by ${m.unit} (at most 25 per code) on ${ui.countOf(m.passages.length, 'passage')}: each coder's codings side by side, the code in question highlighted in its colour, the disputed words underlined.`;
  ui.details?.replaceChildren(...m.passages.map((p) => passageCard(ui, p)));
  ui.rendered('disagreements', m.passages.length);
}

// ------------------------------------------------------------------------------------------ human vs AI

/** A value with its interval in one cell: "0.67 [0.41, 0.88]". */
function withInterval(m: IntervalValue, digits: number): string {
  return m.value === null ? '–' : `${fmt(m.value, digits)} ${interval(m.ci_low, m.ci_high, digits)}`;
}

/** One row per code, per human two columns (Cohen's kappa and Krippendorff's alpha, each with its interval), the pooled row last. */
function agentAgreementTable(ui: ReportsUi, pairs: HumanAiMsg['pairs'], unit: AgreementUnit): HTMLTableElement {
  const t = ui.el('table', undefined, 'measures human-ai');
  const top = ui.el('tr');
  const second = ui.el('tr');
  top.append(ui.el('th', 'Code'));
  second.append(ui.el('th', ''));
  for (const p of pairs) {
    const units = p.codes[0]?.units ?? 0;
    const h = ui.el('th', `vs ${p.human}${units > 0 ? ` (${ui.countOf(units, unit)})` : ''}`, 'group');
    h.colSpan = 2;
    top.append(h);
    second.append(ui.el('th', "Cohen's κ [95%]", 'n'), ui.el('th', "Krippendorff's α [95%]", 'n'));
  }
  const thead = ui.el('thead');
  thead.append(top, second);
  const body = ui.el('tbody');
  const names = [...new Set(pairs.flatMap((p) => p.codes.map((c) => c.code)))].sort((a, b) => a.localeCompare(b));
  const line = (name: string, pick: (p: HumanAiMsg['pairs'][number]) => AgentCodeRow | null | undefined, cls?: string) => {
    const tr = ui.el('tr', undefined, cls);
    tr.append(ui.el('td', name));
    for (const p of pairs) {
      const r = pick(p);
      if (p.note && cls === 'total') {
        const td = ui.el('td', p.note, 'note');
        td.colSpan = 2;
        tr.append(td);
        continue;
      }
      tr.append(ui.el('td', r ? withInterval(r.cohen_kappa, 2) : '–', 'n'), ui.el('td', r ? withInterval(r.krippendorff_alpha, 2) : '–', 'n'));
    }
    body.append(tr);
  };
  for (const name of names) line(name, (p) => p.codes.find((c) => c.code === name));
  line('All codes', (p) => p.overall, 'total');
  t.append(thead, body);
  return t;
}

function outcomeTable(ui: ReportsUi, first: string, rows: SuggestionOutcomeRow[]): HTMLTableElement {
  return makeTable(
    ui,
    [first, 'Suggested', 'Accepted', 'Edited', 'Rejected', 'Pending', 'Accepted %', 'Edited %', 'Rejected %'],
    rows.map((r) => ({
      cells: [
        [r.label],
        [String(r.suggested), 'n'],
        [String(r.accepted), 'n'],
        [String(r.edited), 'n'],
        [String(r.rejected), 'n'],
        [String(r.pending), 'n'],
        [percent(r.acceptance_rate), 'n'],
        [percent(r.edit_rate), 'n'],
        [percent(r.rejection_rate), 'n'],
      ],
    })),
    'measures',
  );
}

/** The weekly acceptance, edit and rejection rates of one agent as a line chart on a canvas of its own. */
function weeklyChart(ui: ReportsUi, weeks: SuggestionOutcomeRow[]): HTMLElement {
  const holder = ui.el('div', undefined, 'linechart');
  const canvas = ui.el('canvas');
  canvas.setAttribute('role', 'img');
  canvas.setAttribute('aria-label', 'Suggestion outcomes per week');
  holder.append(canvas);
  const fg = ui.css('--vscode-foreground', '#ccc');
  const grid = ui.css('--vscode-panel-border', 'rgba(128,128,128,0.3)');
  const line = (label: string, color: string, pick: (r: SuggestionOutcomeRow) => number | null) => ({
    label,
    data: weeks.map((w) => {
      const v = pick(w);
      return v === null ? null : Math.round(v * 1000) / 10;
    }),
    borderColor: color,
    backgroundColor: color,
    spanGaps: true,
    tension: 0.2,
  });
  const config: ChartConfiguration<'line'> = {
    type: 'line',
    data: {
      labels: weeks.map((w) => `week of ${w.label}`),
      datasets: [
        line('accepted %', ui.css('--vscode-charts-green', '#89d185'), (w) => w.acceptance_rate),
        line('edited %', ui.css('--vscode-charts-yellow', '#cca700'), (w) => w.edit_rate),
        line('rejected %', ui.css('--vscode-charts-red', '#f14c4c'), (w) => w.rejection_rate),
      ],
    },
    options: {
      responsive: true,
      maintainAspectRatio: false,
      animation: false,
      color: fg,
      scales: {
        x: { ticks: { color: fg }, grid: { color: grid } },
        y: { min: 0, max: 100, ticks: { color: fg, callback: (v) => `${v}%` }, grid: { color: grid } },
      },
      plugins: { legend: { display: true, labels: { color: fg } } },
    },
  };
  // drawn once the holder is in the page (Chart.js measures its parent)
  queueMicrotask(() => ui.keepChart(new Chart(canvas, config)));
  return holder;
}

export function drawHumanAi(ui: ReportsUi, m: HumanAiMsg): void {
  unitPicker(ui, m.unit, (unit) => ui.ask({ view: 'human_ai', unit }));
  ui.summary.textContent =
    m.note ??
    `Each agent against each human coder separately (${m.humans.join(', ')}), by ${m.unit}: Cohen's κ and Krippendorff's α of the pair with seeded bootstrap 95% intervals; and what became of each agent's coding suggestions (edited: approved, then changed or removed).`;
  const parts: HTMLElement[] = [];
  let items = 0;
  for (const agent of m.agents) {
    const section = ui.el('section', undefined, 'agent');
    section.append(ui.el('h2', `${agent} (agent)`));
    const pairs = m.pairs.filter((p) => p.agent === agent);
    if (pairs.length > 0) {
      section.append(ui.el('h3', 'Agreement with each human coder, per code'), agentAgreementTable(ui, pairs, m.unit));
      items += pairs.reduce((n, p) => n + p.codes.length, 0);
    } else section.append(ui.el('p', `${agent} has no coded segments of its own to compare.`, 'muted'));
    const codes = m.by_code.filter((r) => r.coder === agent);
    const weeks = m.by_week.filter((r) => r.coder === agent);
    if (codes.length === 0) section.append(ui.el('p', `${agent} has made no coding suggestions.`, 'muted'));
    else {
      section.append(ui.el('h3', 'Suggestions per code'), outcomeTable(ui, 'Code', codes));
      section.append(ui.el('h3', 'Suggestions over time (per week, by the day they were made)'));
      if (weeks.some((w) => w.acceptance_rate !== null)) section.append(weeklyChart(ui, weeks));
      section.append(outcomeTable(ui, 'Week of', weeks));
      items += codes.length;
    }
    parts.push(section);
  }
  ui.details?.replaceChildren(...parts);
  ui.rendered('human_ai', items);
}
