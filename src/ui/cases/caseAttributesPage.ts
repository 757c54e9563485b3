import { newNonce, webviewDocument } from '../webviewHtml';

/** The page's static markup: the places webview-ui/caseAttributes.ts fills (as text). */
export const CASE_ATTRIBUTES_BODY = `<header><h1>Case Attributes</h1><button id="add" type="button">Add Attribute…</button></header>
<p id="help">Arrow keys move between cells; Enter or F2 edits a cell, Enter saves, Escape cancels; Delete clears a value. A date is YYYY-MM-DD.</p>
<div id="status" role="status" aria-live="polite"></div>
<table id="grid" role="grid" aria-label="Cases and their attributes"></table>
<h2>Attribute definitions</h2>
<table id="defs" aria-label="Attribute definitions"></table>`;

/** The page's CSS (theme colours; the focused cell outlined). */
export const CASE_ATTRIBUTES_STYLE = `body{font-family:var(--vscode-font-family);color:var(--vscode-foreground);padding:0 12px}
header{display:flex;align-items:center;gap:12px}h1{font-size:1.2em}h2{font-size:1.05em;margin-top:1.6em}
table{border-collapse:collapse;margin-top:6px}th,td{border:1px solid var(--vscode-panel-border,#8884);padding:3px 8px;text-align:left;min-width:6em}
th .type{opacity:.7;font-weight:normal;margin-left:4px}td.num{text-align:right}td.empty{opacity:.5}
td:focus,button:focus{outline:2px solid var(--vscode-focusBorder);outline-offset:-2px}
td.error{background:var(--vscode-inputValidation-errorBackground,#5a1d1d);}
td .msg{display:block;font-size:.85em;color:var(--vscode-errorForeground)}
td.saving{opacity:.6}input,select{font:inherit;color:var(--vscode-input-foreground);background:var(--vscode-input-background);border:1px solid var(--vscode-input-border,#8886);width:100%}
button{font:inherit;color:var(--vscode-button-foreground);background:var(--vscode-button-background);border:none;padding:3px 10px;cursor:pointer}
button.link{background:none;color:var(--vscode-textLink-foreground);padding:0}
#help{opacity:.8;font-size:.9em}`;

/**
 * The Case Attributes panel's page: the shell of src/ui/webviewHtml.ts (nonce CSP, the one bundled script at
 * `scriptUri`) with {@link CASE_ATTRIBUTES_BODY}. Free of `vscode` so tests render it.
 */
export function caseAttributesHtml(cspSource: string, scriptUri: string, nonce = newNonce()): string {
  return webviewDocument({ cspSource, nonce, scriptUri, style: CASE_ATTRIBUTES_STYLE, body: CASE_ATTRIBUTES_BODY, title: 'Case Attributes' });
}
