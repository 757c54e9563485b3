import * as vscode from 'vscode';
import { researchFrame, type ProjectInfo } from '../../agent/contextBuilder';
import type { ProjectRepository } from '../../domain/ports';
import { updateCategoryMemoTool } from '../../tools/categoryTools';
import { updateCodeMemoTool } from '../../tools/codeTools';
import { updateSegmentMemoTool } from '../../tools/coreTools';
import { updateMemoTool } from '../../tools/capabilityTools';
import { updateCaseMemoTool, updateProjectBriefingTool } from '../../tools/memoTools';
import type { Workbench } from '../workbench';
import { parseBriefing, renderBriefing } from './briefingMarkdown';

/**
 * What a memo belongs to (issue 13, item 6): a code, a code category, a source, a case, a coded passage
 * (segment), or the project (its briefing's research frame; id 0). Ids are the project's.
 */
export type MemoKind = 'code' | 'category' | 'source' | 'case' | 'segment' | 'project';

/** One memo's owner. */
export interface MemoTarget {
  kind: MemoKind;
  id: number;
}

/**
 * The URI scheme of memo tabs: `marginalia-memo:/<group>/<name>.md?<kind>=<id>`, e.g.
 * `marginalia-memo:/Codes/Food security.md?code=12`: the path is what the tab title and breadcrumbs show (names,
 * not ids); the query names the memo.
 */
export const MEMO_SCHEME = 'marginalia-memo';

/** The folder a memo tab's breadcrumbs show, per kind. */
const GROUP_FOLDERS: Record<string, string> = {
  code: 'Codes',
  category: 'Categories',
  source: 'Sources',
  case: 'Cases',
  segment: 'Coded passages',
  project: 'Project',
};

const KINDS: readonly MemoKind[] = ['code', 'category', 'source', 'case', 'segment', 'project'];

/** The field term of each kind, for messages ("the memo of code 'Food security'"). */
export const KIND_WORDS: Record<MemoKind, string> = {
  code: 'code',
  category: 'category',
  source: 'source',
  case: 'case',
  segment: 'coded passage',
  project: 'project',
};

/** A name made safe as one path segment of a tab title (no slashes, no control characters, at most 80 code points). */
function fileNameOf(label: string): string {
  const clean = label
    .replace(/[/\\]/g, '-')
    .replace(/\p{Cc}/gu, ' ')
    .trim();
  const cps = [...clean];
  return (cps.length > 80 ? `${cps.slice(0, 79).join('')}…` : clean) || 'memo';
}

/**
 * The tab URI of a memo, e.g. `marginalia-memo://<project>/Codes/Food security.md?code=12`; `label` names the
 * owner; `project` (the project's GUID, see MemoAccess.projectId) keeps a tab from another project from ever
 * reading or writing the open one's memo of the same id.
 */
export function memoUri(target: MemoTarget, label: string, project = ''): vscode.Uri {
  return vscode.Uri.from({
    scheme: MEMO_SCHEME,
    authority: project,
    path: `/${GROUP_FOLDERS[target.kind]}/${fileNameOf(label)}.md`,
    query: `${target.kind}=${target.id}`,
  });
}

/** The memo a tab URI stands for (its query), or undefined when it is not one (wrong scheme, unknown kind, bad id). */
export function parseMemoUri(uri: vscode.Uri): MemoTarget | undefined {
  if (uri.scheme !== MEMO_SCHEME) return undefined;
  const m = /^([a-z]+)=(0|[1-9][0-9]{0,15})$/.exec(uri.query);
  if (!m || !KINDS.includes(m[1] as MemoKind)) return undefined;
  return { kind: m[1] as MemoKind, id: Number(m[2]) };
}

/** A key for a memo tab: its project and target (`<project>|code/12`), or undefined when the URI is not a memo's. */
export function memoKey(uri: vscode.Uri): string | undefined {
  const t = parseMemoUri(uri);
  return t ? `${uri.authority}|${t.kind}/${t.id}` : undefined;
}

/**
 * Reads memos from the open project and writes them through the pipeline as the researcher (Workbench.call),
 * each kind with its own tool: update_code_memo, update_category_memo, update_memo (source),
 * update_case_memo, update_segment_memo, update_project_briefing (the project's research frame, as the
 * Markdown document of briefingMarkdown.ts).
 */
export class MemoAccess {
  constructor(
    private readonly wb: Workbench,
    /** the research frame `.marginalia/project.yaml` beside the project gives (the briefing's fallback), or undefined */
    private readonly briefingFallback: (projectPath: string) => Partial<ProjectInfo> | undefined = () => undefined,
  ) {}

  private repo(): ProjectRepository | undefined {
    return this.wb.repo() ?? undefined;
  }

  /** The open project's identity for memo URIs (its GUID, lower-case hex), or '' when none is open. */
  projectId(): string {
    return this.wb.repo()?.projectGuid() ?? '';
  }

  /** The owner's name in words ("Food security", "Food security in interview-04", "Project briefing"), or undefined when it is gone. */
  label(t: MemoTarget): string | undefined {
    const repo = this.repo();
    if (!repo) return undefined;
    switch (t.kind) {
      case 'code':
        return repo.getCode(t.id)?.name;
      case 'category':
        return repo.getCategory(t.id)?.name;
      case 'source':
        return repo.getSource(t.id)?.name;
      case 'case':
        return repo.getCase(t.id)?.name;
      case 'segment': {
        const s = repo.getSegment(t.id);
        if (!s) return undefined;
        return `${repo.getCode(s.code_id)?.name ?? 'a code'} in ${repo.getSource(s.source_id)?.name ?? 'a source'}`;
      }
      case 'project':
        return t.id === 0 ? 'Project briefing' : undefined;
    }
  }

  /** The research frame the briefing reports now (stored value, else the yaml file's). */
  frame(): ProjectInfo {
    const current = this.wb.controller.current();
    return researchFrame(current?.repo.projectBriefing(), current ? this.briefingFallback(current.path) : undefined);
  }

  /**
   * The memo's text as its tab shows it: the stored memo ('' when none), or the briefing document; undefined
   * when the owner does not exist (or no project is open).
   */
  read(t: MemoTarget): string | undefined {
    const repo = this.repo();
    if (!repo) return undefined;
    switch (t.kind) {
      case 'code': {
        const c = repo.getCode(t.id);
        return c ? (c.memo ?? '') : undefined;
      }
      case 'category': {
        const c = repo.getCategory(t.id);
        return c ? (c.memo ?? '') : undefined;
      }
      case 'source': {
        const s = repo.getSource(t.id);
        return s ? (s.memo ?? '') : undefined;
      }
      case 'case': {
        const c = repo.getCase(t.id);
        return c ? (c.memo ?? '') : undefined;
      }
      case 'segment': {
        const s = repo.getSegment(t.id);
        return s ? (s.memo ?? '') : undefined;
      }
      case 'project':
        return t.id === 0 ? renderBriefing(this.frame()) : undefined;
    }
  }

  /**
   * Stores `text` as the memo (the empty text clears it) through the pipeline as the researcher. Resolves
   * when stored; rejects with the tool's message when the tool fails, or with the briefing parser's message
   * (a missing heading) before anything is sent.
   */
  async write(t: MemoTarget, text: string): Promise<void> {
    const memo = text === '' ? null : text;
    let failure: string | undefined;
    const onFailure = (_code: string, message: string) => void (failure = message);
    let done: unknown;
    switch (t.kind) {
      case 'code':
        done = await this.wb.call(updateCodeMemoTool, { code_id: t.id, memo }, { onFailure });
        break;
      case 'category':
        done = await this.wb.call(updateCategoryMemoTool, { category_id: t.id, memo }, { onFailure });
        break;
      case 'source':
        done = await this.wb.call(updateMemoTool, { source_id: t.id, memo }, { onFailure });
        break;
      case 'case':
        done = await this.wb.call(updateCaseMemoTool, { case_id: t.id, memo }, { onFailure });
        break;
      case 'segment':
        done = await this.wb.call(updateSegmentMemoTool, { segment_id: t.id, memo }, { onFailure });
        break;
      case 'project':
        done = await this.wb.call(updateProjectBriefingTool, parseBriefing(text), { onFailure });
        break;
    }
    if (done === undefined) throw new Error(failure ?? 'the memo could not be saved');
  }
}
