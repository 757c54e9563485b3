import * as vscode from 'vscode';
import type { Folder } from '../../domain/model';
import type { SourceWithCounts } from '../../domain/ports';
import { moveSourceToFolderTool } from '../../tools/folderTools';
import { madeByAgent, type Workbench } from '../workbench';
import { researcherRepo } from '../teamScope';

/** A node of the Sources tree: a folder or a source. */
export type SourcesNode = { kind: 'folder'; folder: Folder & { source_count: number } } | { kind: 'source'; source: SourceWithCounts };

const MIME = 'application/vnd.code.tree.marginalia.sources';
const TYPE_ICONS: Record<string, string> = { text: 'file-text', audio: 'file-media', video: 'device-camera-video', image: 'file-media', pdf: 'file-pdf' };

/**
 * The Sources view (`marginalia.sources`): folders nested, sources with a type icon and whether they are
 * coded. Dragging sources onto a folder moves them (onto empty space: to the root).
 */
export class SourcesTreeProvider implements vscode.TreeDataProvider<SourcesNode>, vscode.TreeDragAndDropController<SourcesNode>, vscode.Disposable {
  readonly dropMimeTypes = [MIME];
  readonly dragMimeTypes = [MIME];
  private readonly changed = new vscode.EventEmitter<SourcesNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private folders: (Folder & { source_count: number })[] = [];
  private sources: SourceWithCounts[] = [];
  /** each source's document attributes as `name: value` lines, by name */
  private attributes = new Map<number, string[]>();
  /** sources closed to agents (issue 14 item 11): source id -> who is shut out and through what */
  private closed = new Map<number, { agents: string[] | null; via: string[] }>();
  /** folders closed to agents themselves: folder id -> the agents (null: every agent) */
  private closedFolders = new Map<number, string[] | null>();
  private loaded = false;
  readonly view: vscode.TreeView<SourcesNode>;
  /** redraws the locks when the researcher closes or opens something to agents from any surface (set_agent_access raises no event) */
  private readonly accessCalls: { dispose(): void };

  constructor(private readonly wb: Workbench) {
    this.view = vscode.window.createTreeView('marginalia.sources', {
      treeDataProvider: this,
      dragAndDropController: this,
      showCollapseAll: true,
      canSelectMany: true,
    });
    this.accessCalls = wb.pipeline.onDidCall((call) => {
      if (call.tool === 'set_agent_access' && call.status === 'ok') this.refresh();
    });
  }

  /** Reloads from the project and redraws. */
  refresh(): void {
    this.loaded = false;
    this.changed.fire(undefined);
  }

  private load(): void {
    if (this.loaded) return;
    // blind coding: the coded counts are the researcher's own (src/ui/teamScope.ts)
    const repo = researcherRepo(this.wb);
    this.folders = repo ? repo.listFolders() : [];
    this.sources = repo ? repo.listSources() : [];
    this.attributes = new Map();
    for (const at of repo ? repo.listSourceAttributes() : []) {
      let list = this.attributes.get(at.source_id);
      if (!list) this.attributes.set(at.source_id, (list = []));
      list.push(`${at.name}: ${String(at.value)}`);
    }
    this.loadAgentAccess(repo);
    this.loaded = true;
  }

  /** Which sources and folders are closed to agents (set_agent_access), for the lock and the tooltip. */
  private loadAgentAccess(repo: ReturnType<Workbench['repo']>): void {
    this.closed = new Map();
    this.closedFolders = new Map();
    if (!repo || typeof repo.listClosedSources !== 'function') return;
    const names = new Map<string, string>();
    for (const r of repo.listAgentAccess()) {
      names.set(`${r.target_kind}:${r.target_id}`, r.target_name ?? `${r.target_kind} ${r.target_id}`);
      if (r.target_kind === 'folder') this.closedFolders.set(r.target_id, r.agents);
    }
    for (const r of repo.listClosedSources()) {
      let c = this.closed.get(r.source_id);
      if (!c) this.closed.set(r.source_id, (c = { agents: [], via: [] }));
      c.agents = c.agents === null || r.agents === null ? null : [...new Set([...c.agents, ...r.agents])];
      c.via.push(r.via_kind === 'source' ? 'closed directly' : `through ${r.via_kind} "${names.get(`${r.via_kind}:${r.via_id}`) ?? r.via_id}"`);
    }
  }

  /** Whether source `id` is closed to agents (directly, or through its folder or a case). */
  isClosedToAgents(sourceId: number): boolean {
    this.load();
    return this.closed.has(sourceId);
  }

  getChildren(node?: SourcesNode): SourcesNode[] {
    this.load();
    if (!this.wb.repo()) return [];
    if (node?.kind === 'source') return [];
    const parentId = node?.kind === 'folder' ? node.folder.folder_id : null;
    return [
      ...this.folders.filter((f) => f.parent_id === parentId).map((folder): SourcesNode => ({ kind: 'folder', folder })),
      ...this.sources.filter((s) => s.folder_id === parentId).map((source): SourcesNode => ({ kind: 'source', source })),
    ];
  }

  getParent(node: SourcesNode): SourcesNode | undefined {
    const parentId = node.kind === 'folder' ? node.folder.parent_id : node.source.folder_id;
    const f = parentId === null ? undefined : this.folders.find((x) => x.folder_id === parentId);
    return f ? { kind: 'folder', folder: f } : undefined;
  }

  getTreeItem(node: SourcesNode): vscode.TreeItem {
    if (node.kind === 'folder') {
      const f = node.folder;
      const item = new vscode.TreeItem(f.name, vscode.TreeItemCollapsibleState.Expanded);
      item.id = `folder:${f.folder_id}`;
      item.contextValue = 'folder';
      item.iconPath = vscode.ThemeIcon.Folder;
      item.description = `${f.source_count}`;
      if (this.closedFolders.has(f.folder_id)) {
        const agents = this.closedFolders.get(f.folder_id) ?? null;
        item.iconPath = new vscode.ThemeIcon('lock');
        item.description = `${f.source_count} · closed to ${agents ? agents.join(', ') : 'agents'}`;
        item.tooltip = new vscode.MarkdownString(
          `$(lock) ${f.name}: closed to ${agents ? `the agents ${agents.join(', ')}` : 'every agent'}, with its sub-folders`,
          true,
        );
      }
      return item;
    }
    const s = node.source;
    const item = new vscode.TreeItem(s.name, vscode.TreeItemCollapsibleState.None);
    item.id = `source:${s.source_id}`;
    item.contextValue = `source.${s.type}`;
    item.iconPath = new vscode.ThemeIcon(TYPE_ICONS[s.type] ?? 'file');
    const coded = s.segment_count + s.av_segment_count;
    const ai = madeByAgent(s.session_id, s.coder_role);
    // document attributes: in the tooltip, one per line (`name: value`)
    const attributes = this.attributes.get(s.source_id) ?? [];
    item.description = `${coded > 0 ? `${coded} coded` : 'uncoded'}${ai ? ' · ✦ AI' : ''}`;
    item.tooltip = new vscode.MarkdownString().appendText(
      `${s.name}\n${s.type}${s.length ? `, ${s.length.toLocaleString()} characters` : ''}\n${coded} coded segment(s)${attributes.length > 0 ? `\n\n${attributes.join('\n')}` : ''}${s.memo ? `\n\n${s.memo}` : ''}`,
    );
    const closed = this.closed.get(s.source_id);
    if (closed) {
      // closed to agents: a lock instead of the type icon, and who is shut out in the description and tooltip
      item.iconPath = new vscode.ThemeIcon('lock');
      item.contextValue = `source.${s.type}.closedToAgents`;
      const who = closed.agents ? closed.agents.join(', ') : 'agents';
      item.description = `${item.description} · closed to ${who}`;
      const tip = new vscode.MarkdownString(`$(lock) Closed to ${closed.agents ? `the agents ${who}` : 'every agent'} (${closed.via.join('; ')})\n\n`, true);
      if (item.tooltip instanceof vscode.MarkdownString) tip.appendMarkdown(item.tooltip.value);
      item.tooltip = tip;
    }
    if (s.type === 'text' || s.type === 'pdf') item.command = { command: 'marginalia.sources.open', title: 'Open Source', arguments: [node] };
    return item;
  }

  handleDrag(source: readonly SourcesNode[], data: vscode.DataTransfer): void {
    const ids = source.filter((n) => n.kind === 'source').map((n) => (n.kind === 'source' ? n.source.source_id : 0));
    if (ids.length > 0) data.set(MIME, new vscode.DataTransferItem(ids));
  }

  async handleDrop(target: SourcesNode | undefined, data: vscode.DataTransfer): Promise<void> {
    const item = data.get(MIME);
    if (!item) return;
    const folderId = target === undefined ? null : target.kind === 'folder' ? target.folder.folder_id : target.source.folder_id;
    for (const id of item.value as number[]) await this.wb.call(moveSourceToFolderTool, { source_id: id, folder_id: folderId });
  }

  dispose(): void {
    this.accessCalls.dispose();
    this.view.dispose();
    this.changed.dispose();
  }
}
