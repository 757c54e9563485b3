import * as vscode from 'vscode';

/**
 * File icons for code colours: one small SVG per `#RRGGBB` written once into the extension's global
 * storage (tree items cannot take arbitrary colours through ThemeIcon).
 */
export class ColorIcons {
  private readonly made = new Set<string>();
  constructor(private readonly dir: vscode.Uri) {}

  /** The icon for `color` (`#RRGGBB`), created on first use. */
  async icon(color: string): Promise<vscode.Uri> {
    const hex = color.replace('#', '').toUpperCase();
    const uri = vscode.Uri.joinPath(this.dir, 'colors', `${hex}.svg`);
    if (!this.made.has(hex)) {
      const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 16 16"><rect x="2" y="2" width="12" height="12" rx="3" fill="#${hex}"/></svg>`;
      await vscode.workspace.fs.writeFile(uri, Buffer.from(svg, 'utf8'));
      this.made.add(hex);
    }
    return uri;
  }
}
