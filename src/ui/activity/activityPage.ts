import { newNonce, webviewDocument } from '../webviewHtml';
import { badgeCss } from './badgeColours';

/**
 * The Agent Activity page: the static shell (status badges in fixed colour pairs that meet WCAG AA,
 * badgeColours.ts) with a fresh nonce (src/ui/webviewHtml.ts); the rows arrive by
 * postMessage and webview-ui/activity.ts renders them as text.
 */
export function activityHtml(cspSource: string, scriptUri: string, nonce = newNonce()): string {
  return webviewDocument({
    cspSource,
    nonce,
    scriptUri,
    style: STYLE,
    body: `<div id="empty">No agent activity yet. Connect an agent (Marginalia: Connect an Agent...) and its actions show here.</div>
<div id="viewport"><div id="spacer"></div><div id="rows"></div></div>`,
  });
}

const STYLE = `
body { padding: 0; margin: 0; font-family: var(--vscode-font-family); font-size: var(--vscode-font-size); color: var(--vscode-foreground); }
#empty { padding: 8px 12px; color: var(--vscode-descriptionForeground); }
#viewport { position: absolute; inset: 0; overflow-y: auto; }
#spacer { position: relative; }
#rows { position: absolute; top: 0; left: 0; right: 0; }
.row { position: absolute; left: 0; right: 0; height: 46px; box-sizing: border-box; padding: 3px 8px; border-bottom: 1px solid var(--vscode-panel-border); }
.head { display: flex; gap: 6px; align-items: baseline; white-space: nowrap; overflow: hidden; }
.badge { font-size: 0.8em; font-weight: 600; padding: 0 4px; border-radius: 3px; border: 1px solid var(--vscode-contrastBorder, transparent); }
${badgeCss()}
.tool { font-weight: 600; }
.who { color: var(--vscode-descriptionForeground); margin-left: auto; }
.desc { white-space: nowrap; overflow: hidden; text-overflow: ellipsis; color: var(--vscode-descriptionForeground); }
.actions { position: absolute; right: 6px; bottom: 3px; display: flex; gap: 4px; }
.act { font-size: 0.85em; padding: 0 6px; color: var(--vscode-button-foreground); background: var(--vscode-button-background); border: none; border-radius: 2px; cursor: pointer; }
`;
