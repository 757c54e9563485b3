// The Case Attributes webview (src/ui/cases/caseAttributesPanel.ts): cases as rows, attribute definitions as
// columns, typed cells edited inline, and the definitions with their type and case count. Every text is set
// with textContent (never innerHTML). Keyboard: arrow keys move between cells (a roving tabindex: one cell
// is in the tab order), Enter or F2 edits, Enter saves, Escape cancels, Delete clears a value; a boolean
// cell toggles with Space or Enter. The host saves through the pipeline and answers each save with
// 'cellResult': an error is shown in the cell, a success by the next 'model'.
import type { CaseAttributesModel, CaseAttributeType, FromCaseAttributesWebview, ToCaseAttributesWebview } from '../src/protocol/caseAttributes';

declare function acquireVsCodeApi(): { postMessage(m: FromCaseAttributesWebview): void; getState(): unknown; setState(s: unknown): void };

const vscode = acquireVsCodeApi();
const grid = document.getElementById('grid') as HTMLTableElement;
const defs = document.getElementById('defs') as HTMLTableElement;
const status = document.getElementById('status') as HTMLDivElement;
const ISO_DATE = /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2})?)?$/;
const NUMERIC = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

let model: CaseAttributesModel = { columns: [], rows: [] };
/** the focused cell: row and column index (0-based; column 0 is the case name) */
let focus = { row: 0, col: 1 };
/** cell errors kept until the cell is saved again: key `${case_id}\u0000${attribute}` */
const errors = new Map<string, string>();
let editing: HTMLInputElement | HTMLSelectElement | null = null;

function el<K extends keyof HTMLElementTagNameMap>(tag: K, text?: string, cls?: string): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (text !== undefined) e.textContent = text;
  if (cls) e.className = cls;
  return e;
}

const keyOf = (caseId: number, attribute: string) => `${caseId}\u0000${attribute}`;

function countOf(n: number, singular: string): string {
  return `${n} ${n === 1 ? singular : `${singular}s`}`;
}

/** The problem with `raw` as a `type` value, or null (the tool checks again). */
function problem(raw: string, type: CaseAttributeType): string | null {
  const v = raw.trim();
  if (type === 'number' && !(NUMERIC.test(v) && Number.isFinite(Number(v)))) return 'Enter a number, e.g. 42 or 3.5';
  if (type === 'date' && !ISO_DATE.test(v)) return 'Enter a date as YYYY-MM-DD';
  return null;
}

function render(): void {
  grid.replaceChildren();
  const head = grid.createTHead().insertRow();
  head.appendChild(el('th', 'Case')).setAttribute('scope', 'col');
  for (const c of model.columns) {
    const th = el('th', c.name);
    th.setAttribute('scope', 'col');
    th.appendChild(el('span', c.type, 'type'));
    head.appendChild(th);
  }
  const body = grid.createTBody();
  if (model.rows.length === 0) {
    const r = body.insertRow();
    const td = r.insertCell();
    td.colSpan = model.columns.length + 1;
    td.textContent = 'There are no cases yet. Create one with "New Case from Sources..." in the Cases view.';
  }
  focus.row = Math.min(focus.row, Math.max(0, model.rows.length - 1));
  focus.col = Math.min(focus.col, model.columns.length);
  model.rows.forEach((row, ri) => {
    const tr = body.insertRow();
    const name = el('th', row.name);
    name.setAttribute('scope', 'row');
    prepareCell(name, ri, 0);
    tr.appendChild(name);
    model.columns.forEach((col, ci) => {
      const td = tr.insertCell();
      const v = row.values[col.name];
      td.textContent = v === undefined ? '—' : String(v.value);
      if (v === undefined) td.classList.add('empty');
      if (col.type === 'number') td.classList.add('num');
      td.setAttribute('aria-label', `${row.name}, ${col.name} (${col.type}): ${v === undefined ? 'no value' : String(v.value)}`);
      const err = errors.get(keyOf(row.case_id, col.name));
      if (err) {
        td.classList.add('error');
        td.appendChild(el('span', err, 'msg'));
      }
      prepareCell(td, ri, ci + 1);
    });
  });
  if (model.columns.length === 0 && model.rows.length > 0) status.textContent = 'No case has an attribute yet. Use "Add Attribute…".';
  else status.textContent = `${countOf(model.rows.length, 'case')}, ${countOf(model.columns.length, 'attribute')}`;

  defs.replaceChildren();
  const dh = defs.createTHead().insertRow();
  for (const h of ['Attribute', 'Type', 'Cases with a value', '']) dh.appendChild(el('th', h));
  const db = defs.createTBody();
  for (const c of model.columns) {
    const r = db.insertRow();
    r.insertCell().textContent = c.name;
    r.insertCell().textContent = c.type;
    r.insertCell().textContent = String(c.case_count);
    const b = el('button', 'Rename…', 'link');
    b.type = 'button';
    b.setAttribute('aria-label', `Rename the attribute ${c.name}`);
    b.addEventListener('click', () => vscode.postMessage({ type: 'renameAttribute', attribute: c.name }));
    r.insertCell().appendChild(b);
  }
}

function prepareCell(cell: HTMLTableCellElement, row: number, col: number): void {
  cell.dataset.row = String(row);
  cell.dataset.col = String(col);
  cell.tabIndex = row === focus.row && col === focus.col ? 0 : -1;
  cell.addEventListener('click', () => moveTo(row, col));
  cell.addEventListener('dblclick', () => col > 0 && startEdit());
}

function cellAt(row: number, col: number): HTMLTableCellElement | null {
  return grid.querySelector(`[data-row="${row}"][data-col="${col}"]`);
}

function moveTo(row: number, col: number): void {
  const r = Math.max(0, Math.min(model.rows.length - 1, row));
  const c = Math.max(0, Math.min(model.columns.length, col));
  cellAt(focus.row, focus.col)?.setAttribute('tabindex', '-1');
  focus = { row: r, col: c };
  const cell = cellAt(r, c);
  if (cell) {
    cell.tabIndex = 0;
    cell.focus();
  }
}

function save(value: string | number | boolean | null): void {
  const row = model.rows[focus.row];
  const col = model.columns[focus.col - 1];
  if (!row || !col) return;
  errors.delete(keyOf(row.case_id, col.name));
  cellAt(focus.row, focus.col)?.classList.add('saving');
  vscode.postMessage({ type: 'setCell', case_id: row.case_id, attribute: col.name, attribute_type: col.type, value });
}

function startEdit(initial?: string): void {
  const row = model.rows[focus.row];
  const col = model.columns[focus.col - 1];
  const cell = cellAt(focus.row, focus.col);
  if (!row || !col || !cell || editing) return;
  const current = row.values[col.name];
  let input: HTMLInputElement | HTMLSelectElement;
  if (col.type === 'boolean') {
    const s = el('select');
    for (const o of ['', 'true', 'false']) s.appendChild(el('option', o === '' ? '(no value)' : o)).setAttribute('value', o);
    s.value = current === undefined ? '' : String(current.value);
    input = s;
  } else {
    const i = el('input');
    i.type = 'text';
    i.value = initial ?? (current === undefined ? '' : String(current.value));
    if (col.type === 'date') i.placeholder = 'YYYY-MM-DD';
    input = i;
  }
  input.setAttribute('aria-label', `${row.name}, ${col.name} (${col.type})`);
  editing = input;
  cell.replaceChildren(input);
  input.focus();
  const finish = (commit: boolean) => {
    if (editing !== input) return;
    editing = null;
    if (commit) {
      const raw = input.value.trim();
      if (raw === '') save(null);
      else if (col.type === 'boolean') save(raw === 'true');
      else {
        const p = problem(raw, col.type);
        if (p) {
          errors.set(keyOf(row.case_id, col.name), p);
          render();
          moveTo(focus.row, focus.col);
          return;
        }
        save(col.type === 'number' ? Number(raw) : raw);
      }
    }
    render();
    moveTo(focus.row, focus.col);
  };
  input.addEventListener('keydown', (e) => {
    const k = (e as KeyboardEvent).key;
    if (k === 'Enter') {
      e.preventDefault();
      finish(true);
    } else if (k === 'Escape') {
      e.preventDefault();
      finish(false);
    }
    e.stopPropagation();
  });
  input.addEventListener('blur', () => finish(true));
}

grid.addEventListener('keydown', (e) => {
  if (editing) return;
  const moves: Record<string, [number, number]> = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };
  const m = moves[e.key];
  if (m) {
    e.preventDefault();
    moveTo(focus.row + m[0], focus.col + m[1]);
    return;
  }
  if (focus.col === 0) return;
  const col = model.columns[focus.col - 1];
  const row = model.rows[focus.row];
  if (!col || !row) return;
  if (e.key === 'Enter' || e.key === 'F2') {
    e.preventDefault();
    if (col.type === 'boolean' && e.key === 'Enter') startEdit();
    else startEdit();
  } else if (e.key === ' ' && col.type === 'boolean') {
    e.preventDefault();
    const v = row.values[col.name];
    save(!(v?.value === true));
  } else if (e.key === 'Delete' || e.key === 'Backspace') {
    e.preventDefault();
    if (row.values[col.name] !== undefined) save(null);
  } else if (e.key.length === 1 && !e.ctrlKey && !e.metaKey && !e.altKey && col.type !== 'boolean') {
    e.preventDefault();
    startEdit(e.key);
  }
});

(document.getElementById('add') as HTMLButtonElement).addEventListener('click', () => vscode.postMessage({ type: 'addAttribute' }));

window.addEventListener('message', (ev: MessageEvent<ToCaseAttributesWebview>) => {
  const m = ev.data;
  if (m.type === 'model') {
    model = m.model;
    const hadFocus = grid.contains(document.activeElement);
    if (!editing) {
      render();
      if (hadFocus) moveTo(focus.row, focus.col);
    }
  } else if (m.type === 'cellResult') {
    if (m.error) errors.set(keyOf(m.case_id, m.attribute), m.error);
    else errors.delete(keyOf(m.case_id, m.attribute));
    if (!editing) {
      render();
      if (m.error) moveTo(focus.row, focus.col);
    }
  }
});

vscode.postMessage({ type: 'ready' });
