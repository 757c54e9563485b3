import * as vscode from 'vscode';
import type { Segment } from '../../domain/model';
import { madeByAgent, type Workbench } from '../workbench';

/**
 * The Coded Segments view (`marginalia.codedSegments`): the segments of the selected code, grouped by
 * nothing, one line each with the quoted text and the source; a click jumps to the segment.
 */
export class CodedSegmentsTreeProvider implements vscode.TreeDataProvider<Segment>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<Segment | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private codeId: number | undefined;
  readonly view: vscode.TreeView<Segment>;

  constructor(private readonly wb: Workbench) {
    this.view = vscode.window.createTreeView('marginalia.codedSegments', { treeDataProvider: this });
  }

  /** Shows the segments of `codeId` (undefined: none). */
  show(codeId: number | undefined, codeName?: string): void {
    this.codeId = codeId;
    this.view.description = codeName;
    this.changed.fire(undefined);
  }

  /** The code whose segments are shown. */
  get selectedCode(): number | undefined {
    return this.codeId;
  }

  refresh(): void {
    this.changed.fire(undefined);
  }

  getChildren(node?: Segment): Segment[] {
    const repo = this.wb.repo();
    if (node || !repo || this.codeId === undefined) return [];
    return repo.listSegmentsForCode(this.codeId);
  }

  getTreeItem(s: Segment): vscode.TreeItem {
    const repo = this.wb.repo();
    const source = repo?.getSource(s.source_id);
    const oneLine = s.text.replace(/\s+/g, ' ').trim();
    const item = new vscode.TreeItem(oneLine.length > 80 ? `${oneLine.slice(0, 79)}…` : oneLine);
    item.id = `segment:${s.segment_id}`;
    item.description = `${source?.name ?? `source ${s.source_id}`} ${s.start_pos}–${s.end_pos}${madeByAgent(s.session_id) ? ' · ✦ AI' : ''}`;
    item.tooltip = new vscode.MarkdownString().appendText(`${s.text}\n\n— ${s.owner}${s.memo ? `\n\nMemo: ${s.memo}` : ''}`);
    item.iconPath = new vscode.ThemeIcon('quote');
    item.command = { command: 'marginalia.segments.reveal', title: 'Go to Segment', arguments: [s.segment_id] };
    return item;
  }

  dispose(): void {
    this.view.dispose();
    this.changed.dispose();
  }
}
