import { newNonce, webviewDocument } from '../webviewHtml';

/**
 * The Retrieval page: the static shell with a fresh nonce (src/ui/webviewHtml.ts); the pickers and the
 * passages arrive by postMessage and webview-ui/retrieval.ts renders them as text.
 */
export function retrievalHtml(cspSource: string, scriptUri: string, nonce = newNonce()): string {
  return webviewDocument({
    cspSource,
    nonce,
    scriptUri,
    style: STYLE,
    body: `<div id="query">
<div id="codeRow"><span id="codes" role="list" aria-label="Codes retrieved"></span><select id="addCode" aria-label="Add a code"></select></div>
<div class="row"><label for="combine">Combine</label><select id="combine">
<option value="or" title="every passage of any of the codes">OR: any of the codes</option>
<option value="and" title="only in sources holding every one of the codes">AND: all in one source</option>
<option value="overlap" title="only where passages of every code overlap">Overlapping</option>
</select></div>
<details id="filtersBox"><summary>Filters <span id="filterCount"></span></summary>
<div class="row"><label for="source">Source</label><select id="source"></select></div>
<div class="row"><label for="folder">Folder</label><select id="folder"></select></div>
<div class="row"><label for="case">Case</label><select id="case"></select></div>
<div class="row"><label for="sourceAttribute">Document attribute</label><select id="sourceAttribute"></select></div>
<div class="row"><label for="caseAttribute">Case attribute</label><select id="caseAttribute"></select></div>
<div class="row"><label for="coder">Coder</label><select id="coder"></select></div>
</details>
</div>
<div id="head"><div id="summary"></div><div id="exports"><span>Export</span>
<button type="button" data-format="csv" title="Export the passages as CSV">CSV</button>
<button type="button" data-format="md" title="Export the passages as Markdown">Markdown</button>
<button type="button" data-format="html" title="Export the passages as HTML">HTML</button>
</div></div>
<div id="filters"></div>
<div id="passages"></div>`,
  });
}

const STYLE = `
body { padding: 0 8px 8px; font-family: var(--vscode-font-family); font-size: var(--vscode-font-size); color: var(--vscode-foreground); }
.row { display: flex; gap: 6px; align-items: center; margin: 4px 0; }
.row label { flex: 0 0 7.5em; color: var(--vscode-descriptionForeground); }
select { flex: 1; min-width: 0; color: var(--vscode-dropdown-foreground); background: var(--vscode-dropdown-background); border: 1px solid var(--vscode-dropdown-border, transparent); padding: 2px 4px; }
#codeRow { display: flex; flex-wrap: wrap; gap: 4px; align-items: center; margin: 6px 0 4px; }
#codes { display: contents; }
#addCode { flex: 1 1 8em; }
.chip { display: inline-flex; gap: 4px; align-items: center; padding: 1px 2px 1px 6px; border-radius: 10px; background: var(--vscode-badge-background); color: var(--vscode-badge-foreground); }
.chip button { border: none; background: none; color: inherit; cursor: pointer; padding: 0 4px; font-size: 1em; line-height: 1; }
.swatch { display: inline-block; flex: 0 0 10px; width: 10px; height: 10px; border-radius: 2px; }
details { margin: 4px 0; }
summary { cursor: pointer; }
#head { margin-top: 8px; border-top: 1px solid var(--vscode-panel-border); padding-top: 6px; }
#summary { font-weight: 600; }
#exports { display: flex; gap: 4px; align-items: center; margin-top: 4px; color: var(--vscode-descriptionForeground); font-size: 0.9em; }
#exports button, .more { font-size: 0.85em; padding: 1px 6px; color: var(--vscode-button-secondaryForeground); background: var(--vscode-button-secondaryBackground); border: none; border-radius: 2px; cursor: pointer; }
#filters { color: var(--vscode-descriptionForeground); font-size: 0.9em; }
.source { margin: 10px 0 2px; font-weight: 600; }
.passage { margin: 4px 0 8px; padding: 4px 6px; border-left: 3px solid var(--vscode-panel-border); cursor: pointer; }
.passage:hover, .passage:focus { background: var(--vscode-list-hoverBackground); outline: none; }
.meta { display: flex; flex-wrap: wrap; gap: 4px 8px; align-items: baseline; font-size: 0.9em; }
.place { font-weight: 600; }
.code { display: inline-flex; gap: 3px; align-items: center; }
.coder { color: var(--vscode-descriptionForeground); }
.text { white-space: pre-wrap; overflow-wrap: anywhere; margin-top: 2px; }
.collapsed .text { max-height: 7.5em; overflow: hidden; -webkit-mask-image: linear-gradient(to bottom, black 60%, transparent); mask-image: linear-gradient(to bottom, black 60%, transparent); }
.error { color: var(--vscode-errorForeground); }
`;
