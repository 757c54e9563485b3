import * as vscode from 'vscode';

/**
 * The language id of transcripts: package.json `contributes.languages`, its grammar
 * (syntaxes/transcript.tmLanguage.json: speaker labels, timestamps) and its prose editor defaults
 * (`contributes.configurationDefaults["[marginalia-transcript]"]`: word wrap on, no minimap, no line numbers,
 * no suggestions or occurrence highlights). No file extension maps to it: only documents Marginalia opens
 * as sources get it ({@link TranscriptLanguage.apply}), never other `.txt` files.
 */
export const TRANSCRIPT_LANGUAGE_ID = 'marginalia-transcript';

/** The languages a source document is switched from: plain text (`.txt`, `.vtt`, `.srt` and `qda:` documents). */
const PROSE_LANGUAGES = new Set(['plaintext']);

/**
 * Gives source documents the transcript language and keeps the `marginalia.transcript.*` settings applied.
 *
 * - {@link apply}: a source document in plain text becomes a transcript (VS Code keeps the document object;
 *   it fires close then open for it). Called where Marginalia opens a source, and for every document VS
 *   Code opens that is an imported source (e.g. from the Explorer). While it stays open, a document the
 *   researcher switched to another language is left as they chose (until Marginalia opens it again).
 * - `marginalia.transcript.fontFamily` (string, empty = the editor font) and `marginalia.transcript.lineNumbers`
 *   (`on` | `off`) are written to the user settings (the workspace settings when they are set there) as
 *   `editor.fontFamily` / `editor.lineNumbers` of the `[marginalia-transcript]` language (VS Code's documented way to set a language's editor options:
 *   `WorkspaceConfiguration.update(section, value, ConfigurationTarget.Global, overrideInLanguage = true)`),
 *   on activation when they differ and whenever they change. Clearing the font or turning line numbers off
 *   removes the override again (back to the editor font and the contributed default `off`).
 */
export class TranscriptLanguage implements vscode.Disposable {
  private readonly disposables: vscode.Disposable[] = [];
  /** Documents given the transcript language in this window (uri strings). */
  private readonly switched = new Set<string>();

  /** `isSource` tells whether a document shows a Marginalia source (SourceDocuments.sourceIdFor). */
  constructor(private readonly isSource: (doc: vscode.TextDocument) => boolean) {
    this.disposables.push(
      vscode.workspace.onDidOpenTextDocument((doc) => {
        if (!this.switched.has(doc.uri.toString()) && this.isSource(doc)) void this.apply(doc).catch(() => undefined);
      }),
      // a language change also fires close (then open) but leaves the document open: forget only real closes
      vscode.workspace.onDidCloseTextDocument((doc) => {
        if (doc.isClosed) this.switched.delete(doc.uri.toString());
      }),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration('marginalia.transcript'))
          void this.syncSettings((key) => e.affectsConfiguration(`marginalia.transcript.${key}`)).catch(reportSettingError);
      }),
    );
    void this.syncSettings(() => false).catch(reportSettingError);
  }

  /**
   * `doc` in the transcript language when it is in plain text (else unchanged: a Markdown source stays
   * Markdown). Returns the document to show (the same object VS Code keeps for the URI).
   */
  async apply(doc: vscode.TextDocument): Promise<vscode.TextDocument> {
    if (!PROSE_LANGUAGES.has(doc.languageId)) return doc;
    this.switched.add(doc.uri.toString());
    return vscode.languages.setTextDocumentLanguage(doc, TRANSCRIPT_LANGUAGE_ID);
  }

  /**
   * Writes the `marginalia.transcript.*` settings as language overrides at the level (user, workspace)
   * where the researcher set them: each level's override mirrors that level's setting. `changed(key)`: the
   * researcher just changed that setting (an empty font / `off` then removes the override, back to the editor
   * font / the contributed `off`); an override of a setting not changed is only ever added or updated.
   */
  private async syncSettings(changed: (key: string) => boolean): Promise<void> {
    const mine = vscode.workspace.getConfiguration('marginalia.transcript');
    const editor = vscode.workspace.getConfiguration('editor', { languageId: TRANSCRIPT_LANGUAGE_ID });
    const fontOf = (v: unknown) => (typeof v === 'string' && v.trim() ? v.trim() : undefined);
    const lineNumbersOf = (v: unknown) => (v === 'on' ? 'on' : undefined);
    for (const [key, map] of [
      ['fontFamily', fontOf],
      ['lineNumbers', lineNumbersOf],
    ] as const) {
      const set = mine.inspect(key);
      const seen = editor.inspect(key);
      for (const [target, wanted, current] of [
        [vscode.ConfigurationTarget.Global, map(set?.globalValue), seen?.globalLanguageValue],
        [vscode.ConfigurationTarget.Workspace, map(set?.workspaceValue), seen?.workspaceLanguageValue],
      ] as const) {
        if (wanted !== undefined ? current !== wanted : changed(key) && current !== undefined) await editor.update(key, wanted, target, true);
      }
    }
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}

function reportSettingError(err: unknown): void {
  void vscode.window.showWarningMessage(`Marginalia could not apply the transcript settings: ${err instanceof Error ? err.message : String(err)}`);
}
