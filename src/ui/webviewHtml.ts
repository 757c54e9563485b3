import { randomBytes } from 'node:crypto';

/**
 * The HTML shell every Marginalia webview uses (docs/architecture.md, Security: "Webviews use a nonce CSP and escape
 * everything they render"). Free of `vscode` so tests render it (test/security/webviews.test.ts).
 *
 * The page has one Content-Security-Policy: nothing by default (`default-src 'none'`), scripts only with this
 * page's nonce (`script-src 'nonce-…'`: no inline handlers, no `eval`, no other script), styles from the
 * webview's own resources or with the nonce, no images, frames, fonts or connections. The only
 * script is the bundled one at `scriptUri`; everything the extension sends later arrives by `postMessage` and
 * the bundles render it as text (`textContent`, never `innerHTML`). The static `body` is the caller's own
 * markup: it must hold no text that came from a project or an agent.
 */
export interface WebviewPage {
  /** `webview.cspSource` (the origin of the webview's local resources) */
  cspSource: string;
  /** the page's nonce (see {@link newNonce}) */
  nonce: string;
  /** `webview.asWebviewUri(...)` of the bundled script, as a string */
  scriptUri: string;
  /** the page's CSS (inlined with the nonce) */
  style: string;
  /** the static body markup (the caller's own, never project text) */
  body: string;
  /** the document title (escaped) */
  title?: string;
}

/** A fresh nonce for one page: 16 random bytes, base64. */
export function newNonce(): string {
  return randomBytes(16).toString('base64');
}

/** Escapes `&`, `<`, `>`, `"` and `'` for HTML text and attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);
}

/** The Content-Security-Policy of a webview page with `nonce` whose resources come from `cspSource`. */
export function webviewCsp(cspSource: string, nonce: string): string {
  return `default-src 'none'; style-src ${cspSource} 'nonce-${nonce}'; script-src 'nonce-${nonce}'; base-uri 'none'; form-action 'none';`;
}

/** The whole HTML document of a webview page (see {@link WebviewPage}). */
export function webviewDocument(page: WebviewPage): string {
  if (!/^[A-Za-z0-9+/=]{16,}$/.test(page.nonce)) throw new Error('webviewDocument: the nonce must be base64 of at least 16 characters');
  const csp = webviewCsp(page.cspSource, page.nonce);
  return `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="${escapeHtml(csp)}">
<meta name="viewport" content="width=device-width, initial-scale=1">${page.title === undefined ? '' : `<title>${escapeHtml(page.title)}</title>`}<style nonce="${page.nonce}">${page.style}</style></head>
<body>${page.body}
<script nonce="${page.nonce}" src="${escapeHtml(page.scriptUri)}"></script></body></html>`;
}
