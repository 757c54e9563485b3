// The Retrieval webview: pick codes, combine them, filter, and read whole passages grouped by source.
// Renders with textContent only (never innerHTML), so no passage, code or source name can run as markup.
// Long passages start collapsed ("Show more"). A click (or Enter) on a passage asks the extension to open it.
import type {
  AttributeChoice,
  AttributeValueMsg,
  FromRetrievalWebview,
  PassageView,
  RetrievalOptions,
  RetrievalQueryMsg,
  ToRetrievalWebview,
} from '../src/protocol/retrieval';

declare function acquireVsCodeApi(): { postMessage(m: FromRetrievalWebview): void };

const vscode = acquireVsCodeApi();
/** passages longer than this many characters start collapsed */
const LONG = 600;

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const codesBox = $<HTMLDivElement>('codes');
const addCode = $<HTMLSelectElement>('addCode');
const combine = $<HTMLSelectElement>('combine');
const source = $<HTMLSelectElement>('source');
const folder = $<HTMLSelectElement>('folder');
const caseSel = $<HTMLSelectElement>('case');
const sourceAttribute = $<HTMLSelectElement>('sourceAttribute');
const caseAttribute = $<HTMLSelectElement>('caseAttribute');
const coder = $<HTMLSelectElement>('coder');
const summary = $<HTMLDivElement>('summary');
const filtersLine = $<HTMLDivElement>('filters');
const passagesBox = $<HTMLDivElement>('passages');
const filterCount = $<HTMLSpanElement>('filterCount');

let options: RetrievalOptions = { codes: [], sources: [], folders: [], cases: [], source_attributes: [], case_attributes: [], coders: [] };
let query: RetrievalQueryMsg = { code_ids: [], combine: 'or' };
/** attribute pairs behind the attribute selects' option values (their index) */
let sourcePairs: { name: string; value: AttributeValueMsg }[] = [];
let casePairs: { name: string; value: AttributeValueMsg }[] = [];

function el<K extends keyof HTMLElementTagNameMap>(tag: K, cls?: string, text?: string): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function fillSelect(sel: HTMLSelectElement, items: { value: string; label: string }[], selected: string): void {
  const any = el('option', undefined, 'Any');
  any.value = '';
  sel.replaceChildren(
    any,
    ...items.map((i) => {
      const o = el('option', undefined, i.label);
      o.value = i.value;
      return o;
    }),
  );
  sel.value = items.some((i) => i.value === selected) ? selected : '';
}

function pairs(choices: AttributeChoice[]): { name: string; value: AttributeValueMsg }[] {
  return choices.flatMap((c) => c.values.map((value) => ({ name: c.name, value })));
}

function pairIndex(list: { name: string; value: AttributeValueMsg }[], p: { name: string; value: AttributeValueMsg } | undefined): string {
  if (!p) return '';
  const i = list.findIndex((x) => x.name === p.name && x.value === p.value);
  return i < 0 ? '' : String(i);
}

/** The selected codes as chips (each with a remove button) and the others in the "Add a code" list. */
function renderCodes(): void {
  const chips = query.code_ids
    .map((id) => options.codes.find((c) => c.code_id === id))
    .filter((c): c is RetrievalOptions['codes'][number] => c !== undefined)
    .map((c) => {
      const chip = el('span', 'chip');
      chip.setAttribute('role', 'listitem');
      const swatch = el('span', 'swatch');
      swatch.style.background = c.color;
      const remove = el('button', undefined, '×');
      remove.type = 'button';
      remove.title = `Remove ${c.name}`;
      remove.setAttribute('aria-label', `Remove ${c.name}`);
      remove.addEventListener('click', () => {
        query.code_ids = query.code_ids.filter((id) => id !== c.code_id);
        send();
      });
      chip.append(swatch, el('span', undefined, c.name), remove);
      return chip;
    });
  codesBox.replaceChildren(...chips);
  const first = el('option', undefined, options.codes.length === 0 ? 'No codes yet' : query.code_ids.length === 0 ? 'Pick a code…' : 'Add a code…');
  first.value = '';
  const rest = options.codes
    .filter((c) => !query.code_ids.includes(c.code_id))
    .map((c) => {
      const o = el('option', undefined, `${c.category ? `${c.category} / ` : ''}${c.name} (${c.count})`);
      o.value = String(c.code_id);
      return o;
    });
  addCode.replaceChildren(first, ...rest);
  addCode.value = '';
}

function renderOptions(project: boolean): void {
  sourcePairs = pairs(options.source_attributes);
  casePairs = pairs(options.case_attributes);
  combine.value = query.combine;
  fillSelect(
    source,
    options.sources.map((s) => ({ value: String(s.source_id), label: s.name })),
    String(query.source_id ?? ''),
  );
  fillSelect(
    folder,
    options.folders.map((f) => ({ value: String(f.folder_id), label: f.name })),
    String(query.folder_id ?? ''),
  );
  fillSelect(
    caseSel,
    options.cases.map((c) => ({ value: String(c.case_id), label: c.name })),
    String(query.case_id ?? ''),
  );
  fillSelect(
    sourceAttribute,
    sourcePairs.map((p, i) => ({ value: String(i), label: `${p.name} = ${String(p.value)}` })),
    pairIndex(sourcePairs, query.source_attribute),
  );
  fillSelect(
    caseAttribute,
    casePairs.map((p, i) => ({ value: String(i), label: `${p.name} = ${String(p.value)}` })),
    pairIndex(casePairs, query.case_attribute),
  );
  fillSelect(
    coder,
    options.coders.map((c) => ({ value: c, label: c })),
    query.coder ?? '',
  );
  renderCodes();
  countFilters();
  if (!project) summary.textContent = 'No project is open.';
}

function countFilters(): void {
  const n = [query.source_id, query.folder_id, query.case_id, query.source_attribute, query.case_attribute, query.coder].filter(
    (x) => x !== undefined && x !== '',
  ).length;
  filterCount.textContent = n > 0 ? `(${n})` : '';
}

/** Reads the pickers into the query and asks the extension to retrieve it. */
function send(): void {
  const num = (s: HTMLSelectElement) => (s.value === '' ? undefined : Number(s.value));
  query = {
    code_ids: query.code_ids,
    combine: combine.value as RetrievalQueryMsg['combine'],
    source_id: num(source),
    folder_id: num(folder),
    case_id: num(caseSel),
    source_attribute: sourceAttribute.value === '' ? undefined : sourcePairs[Number(sourceAttribute.value)],
    case_attribute: caseAttribute.value === '' ? undefined : casePairs[Number(caseAttribute.value)],
    coder: coder.value === '' ? undefined : coder.value,
  };
  countFilters();
  renderCodes();
  vscode.postMessage({ type: 'query', query });
}

function passageRow(p: PassageView, index: number): HTMLDivElement {
  const row = el('div', 'passage');
  row.tabIndex = 0;
  row.title = `Open in ${p.source_name}`;
  row.setAttribute('role', 'button');
  const meta = el('div', 'meta');
  meta.append(el('span', 'place', p.place));
  for (const c of p.codes) {
    const chip = el('span', 'code');
    const swatch = el('span', 'swatch');
    swatch.style.background = c.color;
    chip.append(swatch, el('span', undefined, c.name));
    meta.append(chip);
  }
  meta.append(el('span', 'coder', `by ${p.coders.join(', ')}${p.by_agent ? ' · ✦ AI' : ''}`));
  row.style.borderLeftColor = p.codes[0]?.color ?? '';
  row.append(meta, el('div', 'text', p.text));
  if (p.text.length > LONG) {
    row.classList.add('collapsed');
    const more = el('button', 'more', 'Show more');
    more.type = 'button';
    more.addEventListener('click', (e) => {
      e.stopPropagation();
      const collapsed = row.classList.toggle('collapsed');
      more.textContent = collapsed ? 'Show more' : 'Show less';
    });
    row.append(more);
  }
  const open = () => vscode.postMessage({ type: 'open', index });
  row.addEventListener('click', () => {
    // selecting text to copy is not a click on the passage
    if (!window.getSelection()?.toString()) open();
  });
  row.addEventListener('keydown', (e) => {
    if (e.key === 'Enter') open();
  });
  return row;
}

function renderResult(m: Extract<ToRetrievalWebview, { type: 'result' }>): void {
  summary.textContent = m.title ? `${m.title}: ${m.summary}` : m.summary;
  summary.classList.remove('error');
  filtersLine.textContent = m.filters.length > 0 ? `Filtered by ${m.filters.join('; ')}` : '';
  const out: HTMLElement[] = [];
  let last: string | undefined;
  m.passages.forEach((p, i) => {
    if (p.source_name !== last) out.push(el('div', 'source', p.source_name));
    last = p.source_name;
    out.push(passageRow(p, i));
  });
  passagesBox.replaceChildren(...out);
}

window.addEventListener('message', (e: MessageEvent<ToRetrievalWebview>) => {
  const m = e.data;
  if (m.type === 'options') {
    options = m.options;
    query = m.query;
    renderOptions(m.project);
  } else if (m.type === 'result') renderResult(m);
  else {
    summary.textContent = m.message;
    summary.classList.add('error');
  }
});
for (const s of [combine, source, folder, caseSel, sourceAttribute, caseAttribute, coder]) s.addEventListener('change', send);
addCode.addEventListener('change', () => {
  if (addCode.value === '') return;
  query.code_ids = [...query.code_ids, Number(addCode.value)];
  send();
});
for (const b of Array.from(document.querySelectorAll<HTMLButtonElement>('#exports button'))) {
  b.addEventListener('click', () => vscode.postMessage({ type: 'export', format: b.dataset.format as 'csv' | 'md' | 'html' }));
}
vscode.postMessage({ type: 'ready' });
