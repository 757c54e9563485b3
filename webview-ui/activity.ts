// The Agent Activity webview: a virtualised list of at most 1000 agent actions (agent-context spec,
// section 8: activity log items in the UI 1000, virtual scrolling). Only the rows in view are in the
// DOM. Renders with textContent only (never innerHTML), so nothing an agent sends can run as markup.
import type { ActivityItem, FromActivityWebview, ToActivityWebview } from '../src/protocol/activity';

declare function acquireVsCodeApi(): { postMessage(m: FromActivityWebview): void };

const vscode = acquireVsCodeApi();
const ROW = 46;
const MAX = 1000;
let items: ActivityItem[] = [];

const viewport = document.getElementById('viewport') as HTMLDivElement;
const spacer = document.getElementById('spacer') as HTMLDivElement;
const rows = document.getElementById('rows') as HTMLDivElement;
const empty = document.getElementById('empty') as HTMLDivElement;

function el<K extends keyof HTMLElementTagNameMap>(tag: K, cls: string, text?: string): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function button(label: string, msg: FromActivityWebview): HTMLButtonElement {
  const b = el('button', 'act', label);
  b.addEventListener('click', () => vscode.postMessage(msg));
  return b;
}

function rowFor(item: ActivityItem, index: number): HTMLDivElement {
  const r = el('div', `row status-${item.status.toLowerCase()}`);
  r.style.top = `${index * ROW}px`;
  r.dataset.id = item.id;
  const head = el('div', 'head');
  head.append(
    el('span', 'badge', item.status.replace('_', ' ')),
    el('span', 'tool', item.title ?? item.tool),
    el('span', 'who', `${item.client_name} · ${item.time.slice(11, 19)}`),
  );
  const desc = el('div', 'desc', item.error_code ? `${item.description} — ${item.error_code}` : item.description);
  desc.title = item.description;
  r.append(head, desc);
  const actions = el('div', 'actions');
  if (item.status === 'PENDING_APPROVAL' && item.request_id)
    actions.append(button('Approve', { type: 'approve', request_id: item.request_id }), button('Reject', { type: 'reject', request_id: item.request_id }));
  if (item.status === 'COMPLETED' && item.undoable) actions.append(button('Undo', { type: 'undo', id: item.id }));
  r.append(actions);
  return r;
}

function render(): void {
  empty.style.display = items.length === 0 ? 'block' : 'none';
  spacer.style.height = `${items.length * ROW}px`;
  const first = Math.max(0, Math.floor(viewport.scrollTop / ROW) - 5);
  const last = Math.min(items.length, Math.ceil((viewport.scrollTop + viewport.clientHeight) / ROW) + 5);
  rows.replaceChildren(...items.slice(first, last).map((it, i) => rowFor(it, first + i)));
}

window.addEventListener('message', (e: MessageEvent<ToActivityWebview>) => {
  const m = e.data;
  if (m.type === 'items') items = m.items.slice(0, MAX);
  else {
    const at = items.findIndex((x) => x.id === m.item.id);
    if (at >= 0) items[at] = m.item;
    else items = [m.item, ...items].slice(0, MAX);
  }
  render();
});
viewport.addEventListener('scroll', () => render());
window.addEventListener('resize', () => render());
vscode.postMessage({ type: 'ready' });
