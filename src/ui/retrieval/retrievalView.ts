import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { loadWebviewScript } from '../webviewScript';
import { countOf } from '../../core/plural';
import type { AttributeValue } from '../../domain/ports';
import { describeRetrieval, passagePlace, type RetrievalQuery, type RetrievalResult } from '../../domain/retrieval';
import { RETRIEVAL_FORMATS, renderRetrieval, type RetrievalFormat } from '../../exchange/retrievalFormats';
import type { AttributeChoice, FromRetrievalWebview, RetrievalOptions, RetrievalQueryMsg, ToRetrievalWebview } from '../../protocol/retrieval';
import { RETRIEVE_MAX_LIMIT, retrieveSegmentsTool } from '../../tools/retrievalTools';
import type { SourceDocuments } from '../documents/sourceDocuments';
import { madeByAgent, type Workbench } from '../workbench';
import { retrievalHtml } from './retrievalPage';
import { researcherRepo } from '../teamScope';

/** What {@link RetrievalView.current} returns: the last retrieval and how it reads. */
export interface RetrievalState {
  query: RetrievalQueryMsg;
  result: RetrievalResult | undefined;
  title: string;
  filters: string[];
}

const FORMAT_NAMES: Record<RetrievalFormat, string> = { csv: 'CSV', md: 'Markdown', html: 'HTML' };

/**
 * The Retrieval view (`marginalia.retrieval`, replacing Coded Segments): a webview where the researcher
 * picks one or several codes, combines them (OR, AND in the same source, overlapping), filters by source,
 * folder, case, document attribute, case attribute and coder, and reads the whole passages with their
 * source and speaker or paragraph. A click opens the passage in its source; Export writes the result as
 * CSV, Markdown or HTML. The query runs through the `retrieve_segments` tool as the researcher, the same
 * mechanism agents use. Strict CSP with a nonce; the page renders text only.
 */
export class RetrievalView implements vscode.WebviewViewProvider, vscode.Disposable {
  static readonly viewType = 'marginalia.retrieval';
  private view: vscode.WebviewView | undefined;
  private ready = false;
  private readonly subscriptions: vscode.Disposable[] = [];
  private query: RetrievalQueryMsg = { code_ids: [], combine: 'or' };
  private result: RetrievalResult | undefined;
  private heading = { title: '', filters: [] as string[] };
  private running: Promise<RetrievalState> | undefined;
  private rerun = false;
  /** changes happened while the view was hidden */
  private stale = false;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly wb: Workbench,
    private readonly docs: SourceDocuments,
  ) {
    this.subscriptions.push(vscode.window.registerWebviewViewProvider(RetrievalView.viewType, this, { webviewOptions: { retainContextWhenHidden: true } }));
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    this.ready = false;
    loadWebviewScript(view.webview, this.extensionUri, 'retrieval.js', retrievalHtml);
    this.subscriptions.push(
      view.webview.onDidReceiveMessage((m: FromRetrievalWebview) => void this.onMessage(m)),
      view.onDidChangeVisibility(() => {
        if (view.visible && this.stale) void this.refresh();
      }),
      view.onDidDispose(() => {
        this.view = undefined;
        this.ready = false;
      }),
    );
  }

  /** The current query, result and its title and filters in words. */
  current(): RetrievalState {
    return { query: { ...this.query }, result: this.result, title: this.heading.title, filters: [...this.heading.filters] };
  }

  /**
   * Retrieves `query` (codes, combination, filters; ids of the open project) and shows it. Resolves with the
   * result (undefined without codes or project; a failed query shows its error and keeps the query).
   */
  async retrieve(query: RetrievalQueryMsg): Promise<RetrievalState> {
    this.query = { ...query, code_ids: [...new Set(query.code_ids)] };
    this.sendOptions();
    return this.run();
  }

  /** Shows the passages of one code (Codes view: Retrieve Coded Passages), keeping the filters, and reveals the view. */
  async show(codeId: number | undefined): Promise<RetrievalState> {
    if (codeId === undefined) {
      this.query = { code_ids: [], combine: 'or' };
      this.sendOptions();
      return this.run();
    }
    void vscode.commands.executeCommand(`${RetrievalView.viewType}.focus`);
    return this.retrieve({ ...this.query, code_ids: [codeId] });
  }

  /**
   * Runs the query again and refreshes the pickers (after codings, codes, sources or cases change). While
   * the view is hidden nothing is redrawn: the view catches up when it shows again.
   */
  async refresh(): Promise<RetrievalState> {
    if (!this.view?.visible) {
      this.stale = true;
      return this.current();
    }
    this.stale = false;
    this.sendOptions();
    return this.run();
  }

  private run(): Promise<RetrievalState> {
    if (this.running) {
      this.rerun = true;
      return this.running;
    }
    this.running = (async () => {
      try {
        do {
          this.rerun = false;
          await this.runOnce();
        } while (this.rerun);
      } finally {
        this.running = undefined;
      }
      return this.current();
    })();
    return this.running;
  }

  private async runOnce(): Promise<void> {
    // blind coding: the passages of the researcher's own codings (src/ui/teamScope.ts)
    const repo = researcherRepo(this.wb);
    const query = toDomainQuery(this.query);
    if (!repo || query.code_ids.length === 0) {
      this.result = undefined;
      this.heading = { title: '', filters: [] };
      this.post({ type: 'result', title: '', filters: [], summary: repo ? 'Pick one or more codes.' : 'No project is open.', passages: [] });
      return;
    }
    // drop ids that no longer exist (a deleted code, source, folder or case) rather than failing every refresh
    this.query.code_ids = this.query.code_ids.filter((id) => repo.getCode(id));
    if (this.query.source_id !== undefined && !repo.getSource(this.query.source_id)) delete this.query.source_id;
    if (this.query.folder_id !== undefined && !repo.getFolder(this.query.folder_id)) delete this.query.folder_id;
    if (this.query.case_id !== undefined && !repo.getCase(this.query.case_id)) delete this.query.case_id;
    const q = toDomainQuery(this.query);
    if (q.code_ids.length === 0) return this.runOnce();
    const data = await this.wb.call(
      retrieveSegmentsTool,
      { code_ids: [...q.code_ids], combine: q.combine, filters: q.filters as never, limit: RETRIEVE_MAX_LIMIT },
      { quiet: true },
    );
    if (!data) {
      this.result = undefined;
      this.post({ type: 'error', message: 'The passages could not be retrieved; see the Marginalia output.' });
      return;
    }
    this.result = { combine: data.combine, codes: data.codes, passages: data.passages, source_count: data.source_count };
    this.heading = describeRetrieval(repo, q);
    const more = data.has_more ? ` (the first ${data.count} of ${data.total})` : '';
    this.post({
      type: 'result',
      title: this.heading.title,
      filters: this.heading.filters,
      summary: `${countOf(data.total, 'passage')} in ${countOf(data.source_count, 'source')}${more}`,
      passages: data.passages.map((p) => {
        const made = p.segments.map((s) => repo.getSegment(s.segment_id));
        return {
          source_name: p.source_name,
          place: passagePlace(p),
          codes: p.codes.map((c) => ({ name: c.name, color: c.color })),
          coders: p.coders,
          text: p.text,
          by_agent: made.some((s) => !!s && madeByAgent(s.session_id, s.coder_role)),
        };
      }),
    });
  }

  /** Opens passage `index` of the last result in its source, selected. */
  async open(index: number): Promise<vscode.TextEditor | undefined> {
    const p = this.result?.passages[index];
    if (!p) return undefined;
    return this.docs.open(p.source_id, { start: p.start_pos, end: p.end_pos });
  }

  /**
   * Writes the last result as `format` (csv, md, html) to `target`, or where a save dialog says. Returns the
   * file written, or undefined (nothing retrieved, dialog cancelled).
   */
  async export(format: RetrievalFormat, target?: string): Promise<string | undefined> {
    if (!RETRIEVAL_FORMATS.includes(format)) throw new Error(`Unknown export format "${String(format)}"; the formats are ${RETRIEVAL_FORMATS.join(', ')}`);
    if (!this.result) {
      void vscode.window.showInformationMessage('Retrieve some passages first: pick one or more codes in the Retrieval view.');
      return undefined;
    }
    let file = target;
    if (!file) {
      const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
      const base =
        (this.heading.title || 'retrieval')
          .replace(/[\\/:*?"<>|]+/g, ' ')
          .trim()
          .slice(0, 80) || 'retrieval';
      const uri = await vscode.window.showSaveDialog({
        title: `Export Retrieval as ${FORMAT_NAMES[format]}`,
        filters: { [FORMAT_NAMES[format]]: [format] },
        defaultUri: folder ? vscode.Uri.joinPath(folder, `${base}.${format}`) : undefined,
      });
      file = uri?.fsPath;
    }
    if (!file) return undefined;
    const text = renderRetrieval(this.result, this.heading, format);
    await fs.promises.writeFile(file, text, 'utf8');
    void vscode.window.showInformationMessage(`Exported ${countOf(this.result.passages.length, 'passage')} to ${path.basename(file)}.`);
    return file;
  }

  private async onMessage(m: FromRetrievalWebview): Promise<void> {
    if (m.type === 'ready') {
      this.ready = true;
      await this.refresh();
    } else if (m.type === 'query') await this.retrieve(m.query);
    else if (m.type === 'open') await this.open(m.index);
    else if (m.type === 'export') await vscode.commands.executeCommand('marginalia.retrieval.export', m.format);
    else if (m.type === 'search') await vscode.commands.executeCommand('marginalia.search');
  }

  private sendOptions(): void {
    if (!this.view || !this.ready) return;
    this.post({ type: 'options', options: optionsOf(this.wb), query: this.query, project: !!this.wb.repo() });
  }

  private post(m: ToRetrievalWebview): void {
    if (this.view && this.ready) void this.view.webview.postMessage(m);
  }

  dispose(): void {
    for (const s of this.subscriptions) s.dispose();
  }
}

/** The page's query as the domain's (one source, folder, case and attribute pair at most). */
export function toDomainQuery(q: RetrievalQueryMsg): RetrievalQuery {
  const filters: NonNullable<RetrievalQuery['filters']> = {};
  if (q.source_id !== undefined) filters.source_ids = [q.source_id];
  if (q.folder_id !== undefined) filters.folder_id = q.folder_id;
  if (q.case_id !== undefined) filters.case_ids = [q.case_id];
  if (q.source_attribute) filters.source_attributes = { [q.source_attribute.name]: q.source_attribute.value };
  if (q.case_attribute) filters.case_attributes = { [q.case_attribute.name]: q.case_attribute.value };
  if (q.coder) filters.coder = q.coder;
  return { code_ids: q.code_ids, combine: q.combine, filters };
}

/** The project's codes, text sources, folders (as paths), cases, attribute values and coders, by name. */
function optionsOf(wb: Workbench): RetrievalOptions {
  const repo = researcherRepo(wb);
  if (!repo) return { codes: [], sources: [], folders: [], cases: [], source_attributes: [], case_attributes: [], coders: [] };
  const byName = <T extends { name: string }>(xs: T[]) => xs.sort((a, b) => a.name.localeCompare(b.name, undefined, { numeric: true, sensitivity: 'base' }));
  const categories = new Map(repo.listCategories().map((c) => [c.category_id, c.name]));
  const folders = repo.listFolders();
  const folderById = new Map(folders.map((f) => [f.folder_id, f]));
  const folderPath = (id: number): string => {
    const names: string[] = [];
    for (let f = folderById.get(id), guard = 0; f && guard < 100; f = f.parent_id === null ? undefined : folderById.get(f.parent_id), guard++)
      names.unshift(f.name);
    return names.join(' / ');
  };
  const choices = (rows: { name: string; value: AttributeValue }[]): AttributeChoice[] => {
    const m = new Map<string, Map<string, AttributeValue>>();
    for (const r of rows) {
      let vs = m.get(r.name);
      if (!vs) m.set(r.name, (vs = new Map()));
      vs.set(`${typeof r.value}:${String(r.value)}`, r.value);
    }
    return byName(
      [...m].map(([name, vs]) => ({ name, values: [...vs.values()].sort((a, b) => String(a).localeCompare(String(b), undefined, { numeric: true })) })),
    );
  };
  return {
    codes: byName(
      repo.listCodes().map((c) => ({
        code_id: c.code_id,
        name: c.name,
        color: c.color,
        category: c.category_id === null ? null : (categories.get(c.category_id) ?? null),
        count: c.segment_count,
      })),
    ),
    sources: byName(repo.listSources('text').map((s) => ({ source_id: s.source_id, name: s.name }))),
    folders: byName(folders.map((f) => ({ folder_id: f.folder_id, name: folderPath(f.folder_id) }))),
    cases: byName(repo.listCases().map((c) => ({ case_id: c.case_id, name: c.name }))),
    source_attributes: choices(repo.listSourceAttributes()),
    case_attributes: choices(repo.listCaseAttributes()),
    coders: repo.listCoders().map((c) => c.coder),
  };
}
