import { newNonce, webviewDocument } from '../webviewHtml';

/** The Reports page's static markup: the places webview-ui/reports.ts fills (as text, or on the canvas). */
export const REPORTS_BODY = `<header><div id="tabs" role="tablist"></div><div id="export">Export <button data-format="csv">CSV</button><button data-format="json">JSON</button><button data-format="html">HTML</button></div></header>
<div id="controls"></div><div id="summary" role="status"></div><div id="chart-box"><canvas id="chart" role="img" aria-label="Report chart"></canvas></div><table id="table"></table><div id="details"></div>`;

/**
 * The Reports panel's page: the shell of src/ui/webviewHtml.ts (nonce CSP, the one bundled script) with
 * {@link REPORTS_BODY} and the panel's `style`. Free of `vscode` so tests render it.
 */
export function reportsHtml(cspSource: string, scriptUri: string, style: string, nonce = newNonce()): string {
  return webviewDocument({ cspSource, nonce, scriptUri, style, body: REPORTS_BODY, title: 'Marginalia Reports' });
}
