import * as vscode from 'vscode';
import { countOf } from '../../core/plural';
import { locator, passagePlace } from '../../domain/retrieval';
import { RETRIEVAL_FORMATS, type RetrievalFormat } from '../../exchange/retrievalFormats';
import type { RetrievalQueryMsg } from '../../protocol/retrieval';
import { batchApplyCodes, MAX_BATCH_OPERATIONS } from '../../tools/coreTools';
import { MAX_SEARCH_LIMIT, searchTextTool } from '../../tools/searchTools';
import type { SourceDocuments } from '../documents/sourceDocuments';
import type { Workbench } from '../workbench';
import type { RetrievalView } from './retrievalView';

/** Most hits a search lists (and "Code All Hits" can code, which is also one batch_apply_codes call at most). */
export const MAX_SEARCH_HITS = MAX_BATCH_OPERATIONS;

/** One search hit as the researcher sees it: the source, the speaker or paragraph, the text around it. */
export interface SearchHit {
  source_id: number;
  source_name: string;
  /** the speaker, else "¶ n" */
  place: string;
  /** code points, end exclusive: what "Code All Hits" codes and a click selects */
  start_pos: number;
  end_pos: number;
  text: string;
  /** the text around the hit, the hit marked «like this» */
  snippet: string;
}

/** What `marginalia.search` returns. */
export interface SearchOutcome {
  query: string;
  hits: SearchHit[];
  /** every occurrence in the project; more than `hits.length` when the list stopped at {@link MAX_SEARCH_HITS} */
  total: number;
}

/** What `marginalia.search.codeAllHits` returns. */
export interface CodeAllHitsOutcome {
  query: string;
  code_id: number;
  code_name: string;
  hits: number;
  /** codings made (hits already coded with the code by the researcher count as existing) */
  created: number;
  existing: number;
}

interface Deps {
  wb: Workbench;
  docs: SourceDocuments;
  retrieval: RetrievalView;
}

/**
 * The Retrieval view's and Search's commands. Every command takes optional arguments so that tests,
 * keybindings and scripts run it without prompts:
 * - `marginalia.retrieval.retrieve(query)`: retrieve (codes, combination, filters; see RetrievalQueryMsg) and show it;
 * - `marginalia.retrieval.open(index)`: open passage `index` of the current result;
 * - `marginalia.retrieval.export(format?, targetPath?)`: csv, md or html; asks for both when missing;
 * - `marginalia.search(query?, {show?})`: search_text over every source; lists the hits with their context in
 *   a quick pick (unless `show` is false) whose first item codes them all;
 * - `marginalia.search.codeAllHits(query?, codeId?)`: codes every hit of `query` with one code in ONE
 *   batch_apply_codes call, so one Undo removes them all.
 */
export function retrievalCommands(d: Deps): Record<string, (...args: any[]) => unknown> {
  return {
    'marginalia.retrieval.retrieve': (query?: RetrievalQueryMsg) => (query ? d.retrieval.retrieve(query) : d.retrieval.refresh()),
    'marginalia.retrieval.open': (index?: number) => (typeof index === 'number' ? d.retrieval.open(index) : undefined),
    'marginalia.retrieval.refresh': () => d.retrieval.refresh(),
    'marginalia.retrieval.export': async (format?: RetrievalFormat, target?: string) => {
      let f = format;
      if (!f) {
        const pick = await vscode.window.showQuickPick(
          [
            { label: 'CSV', description: 'a table for spreadsheets', format: 'csv' as const },
            { label: 'Markdown', description: 'passages grouped by source', format: 'md' as const },
            { label: 'HTML', description: 'a page to read or print', format: 'html' as const },
          ],
          { title: 'Export Retrieval', placeHolder: 'Export the passages as' },
        );
        f = pick?.format;
      }
      if (!f) return undefined;
      if (!RETRIEVAL_FORMATS.includes(f)) throw new Error(`Unknown export format "${String(f)}"; the formats are ${RETRIEVAL_FORMATS.join(', ')}`);
      return d.retrieval.export(f, target);
    },
    'marginalia.search': async (query?: string, options?: { show?: boolean }) => {
      const q = query ?? (await askQuery());
      if (!q) return undefined;
      const outcome = await search(d.wb, q);
      if (!outcome) return undefined;
      if (options?.show !== false) void showHits(d, outcome);
      return outcome;
    },
    'marginalia.search.codeAllHits': async (query?: string, codeId?: number) => {
      const q = query ?? (await askQuery());
      if (!q) return undefined;
      const outcome = await search(d.wb, q);
      return outcome ? codeAllHits(d, outcome, codeId) : undefined;
    },
  };
}

async function askQuery(): Promise<string | undefined> {
  const q = await vscode.window.showInputBox({
    title: 'Search the Sources',
    prompt: 'Words, "a phrase", garden* (prefix), water OR well, trust NOT church',
    placeHolder: 'Search text',
  });
  return q?.trim() ? q.trim() : undefined;
}

/** Every hit of `query` (search_text, paged) up to {@link MAX_SEARCH_HITS}, each with its speaker or paragraph. */
async function search(wb: Workbench, query: string): Promise<SearchOutcome | undefined> {
  const repo = wb.repo();
  if (!repo) {
    void vscode.window.showInformationMessage('Open a Marginalia project first.');
    return undefined;
  }
  const hits: SearchHit[] = [];
  let total = 0;
  const places = new Map<number, ReturnType<typeof locator>>();
  for (let offset = 0; hits.length < MAX_SEARCH_HITS;) {
    const page = await wb.call(searchTextTool, { query, limit: Math.min(MAX_SEARCH_LIMIT, MAX_SEARCH_HITS - hits.length), offset });
    if (!page) return undefined;
    total = page.total;
    for (const m of page.matches) {
      let at = places.get(m.source_id);
      if (!at) places.set(m.source_id, (at = locator(repo.getSourceText(m.source_id) ?? '')));
      hits.push({
        source_id: m.source_id,
        source_name: m.source_name,
        place: passagePlace(at(m.start_pos)),
        start_pos: m.start_pos,
        end_pos: m.end_pos,
        text: m.text,
        snippet: m.snippet,
      });
    }
    if (!page.has_more || page.next_offset === null) break;
    offset = page.next_offset;
  }
  return { query, hits, total };
}

/** The hits in a quick pick: the first item codes them all, the others open a hit. */
async function showHits(d: Deps, s: SearchOutcome): Promise<void> {
  type Item = vscode.QuickPickItem & { hit?: SearchHit; codeAll?: true };
  const shown = s.total > s.hits.length ? `the first ${s.hits.length} of ${s.total} hits` : countOf(s.hits.length, 'hit');
  const items: Item[] =
    s.hits.length === 0
      ? [{ label: `No hits for "${s.query}"`, alwaysShow: true }]
      : [
          {
            label: `$(tag) Code All ${countOf(s.hits.length, 'Hit')} With...`,
            description: 'one action: one Undo removes them all',
            codeAll: true,
            alwaysShow: true,
          },
          { label: '', kind: vscode.QuickPickItemKind.Separator },
          ...s.hits.map((h) => ({ label: h.source_name, description: h.place, detail: shortSnippet(h.snippet), hit: h })),
        ];
  const picked = await vscode.window.showQuickPick(items, {
    title: `Search "${s.query}": ${shown}`,
    matchOnDescription: true,
    matchOnDetail: true,
    placeHolder: 'Open a hit, or code them all',
  });
  if (!picked) return;
  if (picked.codeAll) await codeAllHits(d, s);
  else if (picked.hit) await d.docs.open(picked.hit.source_id, { start: picked.hit.start_pos, end: picked.hit.end_pos });
}

/** A snippet on one line with at most {@link SNIPPET_LEAD} characters before the hit, so the hit shows in a quick pick row. */
function shortSnippet(snippet: string): string {
  const line = snippet.replace(/\s+/g, ' ');
  const at = line.indexOf('«');
  return at > SNIPPET_LEAD ? `…${line.slice(at - SNIPPET_LEAD).replace(/^\S*\s/, '')}` : line;
}

/** Characters of context kept before a hit in the quick pick. */
const SNIPPET_LEAD = 30;

/** Codes every hit with one code (asked for when `codeId` is missing) in one batch_apply_codes call. */
async function codeAllHits(d: Deps, s: SearchOutcome, codeId?: number): Promise<CodeAllHitsOutcome | undefined> {
  const repo = d.wb.repo();
  if (!repo) return undefined;
  if (s.hits.length === 0) {
    void vscode.window.showInformationMessage(`No hits for "${s.query}" to code.`);
    return undefined;
  }
  if (s.total > s.hits.length) {
    void vscode.window.showWarningMessage(`"${s.query}" has ${s.total} hits; Code All Hits codes at most ${MAX_SEARCH_HITS} at once. Narrow the search.`);
    return undefined;
  }
  let id = codeId;
  if (id === undefined) {
    const pick = await vscode.window.showQuickPick(
      repo.listCodes().map((c) => ({ label: c.name, description: countOf(c.segment_count, 'passage'), code_id: c.code_id })),
      { title: `Code ${countOf(s.hits.length, 'hit')} of "${s.query}" with`, placeHolder: 'Code' },
    );
    id = pick?.code_id;
  }
  if (id === undefined) return undefined;
  const code = repo.getCode(id);
  const r = await d.wb.call(batchApplyCodes, {
    operations: s.hits.map((h) => ({ code_id: id, source_id: h.source_id, start_position: h.start_pos, end_position: h.end_pos })),
  });
  if (!r) return undefined;
  const sources = new Set(s.hits.map((h) => h.source_id)).size;
  void vscode.window.showInformationMessage(
    `Coded ${countOf(r.created, 'hit')} of "${s.query}" in ${countOf(sources, 'source')} with "${code?.name ?? id}"${r.existing ? ` (${r.existing} already coded)` : ''}. One Undo removes them all.`,
  );
  return { query: s.query, code_id: id, code_name: code?.name ?? String(id), hits: s.hits.length, created: r.created, existing: r.existing };
}
