import * as vscode from 'vscode';

/**
 * Loads a webview's page: scripts enabled, only the extension's `dist/webview` folder readable, and the HTML
 * `html(cspSource, scriptUri)` builds around the bundled script `dist/webview/<script>` (see webviewHtml.ts for
 * the page's Content-Security-Policy).
 */
export function loadWebviewScript(
  webview: vscode.Webview,
  extensionUri: vscode.Uri,
  script: string,
  html: (cspSource: string, scriptUri: string) => string,
): void {
  const root = vscode.Uri.joinPath(extensionUri, 'dist', 'webview');
  webview.options = { enableScripts: true, localResourceRoots: [root] };
  webview.html = html(webview.cspSource, webview.asWebviewUri(vscode.Uri.joinPath(root, script)).toString());
}
