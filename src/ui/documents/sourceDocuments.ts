import * as fs from 'node:fs';
import * as vscode from 'vscode';
import { OffsetMap } from '../../core/offsets';
import type { SourceInfo } from '../../domain/model';
import type { Workbench } from '../workbench';
import { TranscriptLanguage } from './transcriptLanguage';

/** The URI scheme of read-only source documents that have no workspace file. */
export const QDA_SCHEME = 'qda';

/**
 * Maps sources to editor documents and back. A source imported from a file that still exists opens as
 * that file (so the researcher can edit it and codings move with the edits); any other source opens as a
 * read-only `qda:/<source_id>/<name>` document whose text is the stored text.
 */
export class SourceDocuments implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly registration: vscode.Disposable;
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;
  /** Source documents in plain text open in the transcript language (word wrap, speaker colours). */
  readonly transcripts: TranscriptLanguage;

  constructor(private readonly wb: Workbench) {
    this.registration = vscode.workspace.registerTextDocumentContentProvider(QDA_SCHEME, this);
    this.transcripts = new TranscriptLanguage((doc) => this.sourceIdFor(doc) !== undefined);
  }

  /** The stored text of a `qda:` document. */
  provideTextDocumentContent(uri: vscode.Uri): string {
    const id = sourceIdOfQdaUri(uri);
    return id === undefined ? '' : (this.wb.repo()?.getSourceText(id) ?? '');
  }

  /** The document URI of a source: its file when it still exists, else a `qda:` URI. */
  uriFor(source: Pick<SourceInfo, 'source_id' | 'name' | 'file_path'>): vscode.Uri {
    if (source.file_path && fs.existsSync(source.file_path)) return vscode.Uri.file(source.file_path);
    return vscode.Uri.from({ scheme: QDA_SCHEME, path: `/${source.source_id}/${source.name}` });
  }

  /** The source a document shows, or undefined. */
  sourceIdFor(doc: vscode.TextDocument | vscode.Uri): number | undefined {
    const uri = doc instanceof vscode.Uri ? doc : doc.uri;
    if (uri.scheme === QDA_SCHEME) return sourceIdOfQdaUri(uri);
    if (uri.scheme !== 'file') return undefined;
    return this.wb.repo()?.findSourceByPath(uri.fsPath)?.source_id;
  }

  /**
   * Opens a source (a plain-text one in the transcript language, see {@link TranscriptLanguage}) and, when
   * given, selects and reveals `[start, end)` (code points). Returns the editor.
   * Errors: SOURCE_NOT_FOUND when the id is unknown.
   */
  async open(sourceId: number, range?: { start: number; end: number }, preserveFocus = false): Promise<vscode.TextEditor | undefined> {
    const source = this.wb.repo()?.getSource(sourceId);
    if (!source) {
      void vscode.window.showErrorMessage(`Source ${sourceId} does not exist.`);
      return undefined;
    }
    const doc = await this.transcripts.apply(await vscode.workspace.openTextDocument(this.uriFor(source)));
    const editor = await vscode.window.showTextDocument(doc, { preview: false, preserveFocus });
    if (range) {
      const sel = toVsRange(doc, range.start, range.end);
      editor.selection = new vscode.Selection(sel.start, sel.end);
      editor.revealRange(sel, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
    }
    return editor;
  }

  /**
   * Tells every open `qda:` document to read its text again: after another project opened, a document with the
   * same source id and name would otherwise keep the previous project's text (and every range computed on it
   * would be off).
   */
  refreshAll(): void {
    for (const d of vscode.workspace.textDocuments) if (d.uri.scheme === QDA_SCHEME) this.changed.fire(d.uri);
  }

  /** Tells open `qda:` documents of a source that its text changed. */
  refresh(sourceId: number, name: string): void {
    this.changed.fire(vscode.Uri.from({ scheme: QDA_SCHEME, path: `/${sourceId}/${name}` }));
  }

  dispose(): void {
    this.registration.dispose();
    this.changed.dispose();
    this.transcripts.dispose();
  }
}

function sourceIdOfQdaUri(uri: vscode.Uri): number | undefined {
  const m = /^\/(\d+)\//.exec(uri.path);
  return m ? Number(m[1]) : undefined;
}

/** The editor range of code point offsets `[start, end)` in `doc`. */
export function toVsRange(doc: vscode.TextDocument, start: number, end: number, map = new OffsetMap(doc.getText())): vscode.Range {
  return new vscode.Range(doc.positionAt(map.toUtf16(start)), doc.positionAt(map.toUtf16(end)));
}
