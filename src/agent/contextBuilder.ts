import type { Clock } from '../core/clock';
import { isoTime, systemClock } from '../core/clock';
import { ToolError } from '../core/errors';
import type { Disposable } from '../core/lifecycle';
import type { EventRecord } from '../domain/events';
import type { Segment } from '../domain/model';
import type { CodeWithCounts, ProjectRepository, SourceWithCounts } from '../domain/ports';
import { textSegmentNotFound } from '../domain/segmentKinds';
import { isVisible, scopeKey, scopedRepository, type ReadScope } from '../domain/teamSettings';
import type { OpenProject } from '../tools/context';
import { segmentOut } from '../tools/present';
import type { EventHub, EventSubscription } from './eventHub';

/**
 * The research frame of a project: what the study is about. Saved in the project through
 * update_project_briefing (src/domain/memos.ts); for fields never saved there the composition root reads it
 * from `.marginalia/project.yaml` beside the project (src/cli/projectInfo.ts); absent fields are empty.
 */
export interface ProjectInfo {
  description: string;
  research_questions: string[];
  methodology: string;
}

/**
 * The research frame the briefing reports, field by field: the value stored in the project (`stored`, saved
 * with update_project_briefing) wins; a field never saved there comes from `fallback` (`.marginalia/project.yaml`
 * beside the project); absent or mistyped fields are empty. Pure.
 */
export function researchFrame(stored: Partial<ProjectInfo> | undefined, fallback: Partial<ProjectInfo> | undefined): ProjectInfo {
  const i = fallback ?? {};
  const description = typeof stored?.description === 'string' ? stored.description : i.description;
  const questions = Array.isArray(stored?.research_questions) ? stored.research_questions : i.research_questions;
  const methodology = typeof stored?.methodology === 'string' ? stored.methodology : i.methodology;
  return {
    description: typeof description === 'string' ? description : '',
    research_questions: Array.isArray(questions) ? questions.filter((q): q is string => typeof q === 'string') : [],
    methodology: typeof methodology === 'string' ? methodology : '',
  };
}

/**
 * The project briefing of the agent-context spec (section 2, "Project briefing (app://project/briefing)"),
 * served as `qda://project/briefing`. `total_segments` counts text and AV codings; a source is coded
 * when it has at least one of either.
 */
export interface ProjectBriefing {
  project_name: string;
  description: string;
  research_questions: string[];
  methodology: string;
  coding_progress: { total_sources: number; coded_sources: number; total_codes: number; total_segments: number };
  code_summary: { top_codes: { name: string; count: number }[]; recent_codes: string[] };
  /**
   * newest first; `action` is the dotted event type (e.g. `coding.segment_coded`), `source`/`code`/`case`
   * the names involved, `tool` the tool an approval event concerns, `by` the coder (user) who caused it
   */
  recent_activity: { action: string; source?: string; code?: string; case?: string; tool?: string; by: string; timestamp: string }[];
}

/**
 * The state summary (spec: Context Builder `build_state_summary`; State Cache `cache_codes`,
 * `cache_sources`): every code, category, source and case with its counts, served as `qda://project/state`.
 */
export interface StateSummary {
  project_name: string;
  project_path: string;
  counts: {
    sources: number;
    coded_sources: number;
    codes: number;
    categories: number;
    segments: number;
    av_segments: number;
    folders: number;
    cases: number;
    pending_approvals: number;
  };
  codes: { code_id: number; name: string; color: string; category_id: number | null; segment_count: number; av_segment_count: number }[];
  categories: { category_id: number; name: string; parent_id: number | null; code_count: number }[];
  sources: {
    source_id: number;
    name: string;
    type: string;
    length: number;
    folder_id: number | null;
    segment_count: number;
    av_segment_count: number;
    coded: boolean;
  }[];
  cases: { case_id: number; name: string; source_count: number; segment_count: number; attribute_count: number }[];
  /** the sequence number of the last stored event this summary reflects */
  last_event_seq: number;
  generated_at: string;
}

/** Counts for `qda://project/statistics`: totals, coding coverage, and codings per code, source, category and coder. */
export interface ProjectStatistics {
  totals: StateSummary['counts'];
  coverage: { coded_sources: number; uncoded_sources: number; coded_code_points: number; text_code_points: number; coded_ratio: number };
  segments_per_code: { code_id: number; name: string; segments: number; av_segments: number; sources: number }[];
  segments_per_source: { source_id: number; name: string; segments: number; av_segments: number; codes: number }[];
  codes_per_category: { category_id: number | null; name: string; codes: number }[];
  segments_per_coder: { owner: string; segments: number }[];
  last_event_seq: number;
  generated_at: string;
}

/** Two codes whose text segments overlap in the same source, with the number of overlapping segment pairs. */
export interface CodeCooccurrence {
  code_a: { code_id: number; name: string };
  code_b: { code_id: number; name: string };
  count: number;
  /** sources in which they overlap */
  sources: number;
}

/** Options of {@link ContextBuilder}. */
export interface ContextBuilderOptions {
  /** the open project, or null */
  project: () => OpenProject | null;
  /** the agent context's event hub: every event invalidates the cache (spec: "State Cache ... invalidate") */
  hub?: Pick<EventHub, 'subscribe'>;
  /** the project's research frame (description, research questions, methodology) */
  info?: () => Partial<ProjectInfo> | undefined;
  clock?: Clock;
  /** how many codes `top_codes` names (default 10) */
  topCodes?: number;
  /** how many events `recent_activity` shows (default 20) */
  recentActivity?: number;
}

/** The summaries of one read scope (blind coding: each coder's own; everyone's under the key of null). */
interface Views {
  state?: StateSummary;
  briefing?: ProjectBriefing;
  /**
   * the research frame the cached briefing was built with (project.yaml may change without an event; a save
   * through update_project_briefing raises project.briefing_updated, which invalidates the cache)
   */
  briefingInfo?: string;
  statistics?: ProjectStatistics;
  cooccurrences?: CodeCooccurrence[];
}

interface Cache {
  project: OpenProject;
  seq: number;
  /** by scopeKey of the read scope */
  views: Map<string, Views>;
}

/** What one read works on: the cache entry, the scope's summaries, and the repository as the scope sees it. */
interface View {
  c: Cache;
  v: Views;
  repo: ProjectRepository;
  scope: ReadScope;
}

/** Answers a builder made for everyone (read scope null), each with how to make it for another scope ({@link inScope}). */
const everyone = new WeakMap<object, (scope: ReadScope) => unknown>();

/**
 * `data` as a coder in `scope` may see it (blind coding, src/domain/teamSettings.ts): an answer a
 * {@link ContextBuilder} made for everyone (no scope given) is made again for `scope`, from that coder's codings
 * only (or SEGMENT_NOT_FOUND for another coder's segment); anything else, and everything for scope null, is
 * returned as it is. AgentContext.redactFor applies it to what the MCP resources and prompts read on a caller's
 * behalf, so a blind coder never sees the other coders' counts, segments or coding events through them.
 */
export function inScope<T>(data: T, scope: ReadScope): T {
  if (scope === null || typeof data !== 'object' || data === null) return data;
  const remake = everyone.get(data);
  return remake ? (remake(scope) as T) : data;
}

/** Event types about one coding (a text or AV segment): under blind coding only its coder sees them. */
const CODING_EVENT = /^coding\.(av_)?segment_/;

/** True when `scope` may see event `e`: every event but another coder's coding event (owner and role from the payload, else who caused it). */
function eventVisible(scope: ReadScope, e: EventRecord): boolean {
  if (scope === null || !CODING_EVENT.test(e.event_type)) return true;
  const p = e.payload;
  return isVisible(scope, {
    owner: typeof p.owner === 'string' ? p.owner : e.caused_by.user,
    coder_role: p.coder_role === 'agent' || p.coder_role === 'researcher' ? p.coder_role : (e.caused_by.role ?? null),
  });
}

/**
 * The Context Builder and State Cache of the agent-context spec (section 1, components): builds the
 * project briefing (`build_project_briefing`) and the state summary (`build_state_summary`) from the
 * open project's repository, and keeps them (plus statistics and code co-occurrences) in a cache that
 * every published event invalidates. A read also checks the store's last event sequence number, so a
 * change whose events are still queued in the hub is never served stale.
 *
 * Blind coding (issue 16 item 5): every read takes the asker's read scope (ToolPipeline.readScopeOf; null or
 * absent: everyone's codings). A scope reads through scopedRepository, so counts, coverage, co-occurrences,
 * segments and coding events are that coder's own, and is cached apart from the others. An answer made for
 * everyone can be made again for a scope with {@link inScope}.
 *
 * Reads run outside any transaction and never write. Errors: NO_PROJECT when no project is open;
 * {@link segment} throws SEGMENT_NOT_FOUND.
 */
export class ContextBuilder implements Disposable {
  private cache: Cache | undefined;
  private readonly clock: Clock;
  private readonly subscription: EventSubscription | undefined;
  private invalidationCount = 0;

  constructor(private readonly opts: ContextBuilderOptions) {
    this.clock = opts.clock ?? systemClock;
    this.subscription = opts.hub?.subscribe(() => this.invalidate(), { patterns: ['*'] });
  }

  /** How often the cache was invalidated by events (for tests and diagnostics). */
  get invalidations(): number {
    return this.invalidationCount;
  }

  /** Drops every cached summary (the State Cache's `invalidate`). */
  invalidate(): void {
    this.cache = undefined;
    this.invalidationCount++;
  }

  /**
   * The research frame with empty defaults, field by field: the value stored in the project (saved with
   * update_project_briefing, src/domain/memos.ts) wins; a field never saved there comes from `opts.info`
   * (`.marginalia/project.yaml` beside the project, the fallback and import for existing projects).
   */
  projectInfo(): ProjectInfo {
    return researchFrame(this.opts.project()?.repo.projectBriefing(), this.opts.info?.());
  }

  private project(): OpenProject {
    const p = this.opts.project();
    if (!p) throw new ToolError('NO_PROJECT', 'No project is open. Ask the researcher to open one (Marginalia: Open Project).');
    return p;
  }

  /** The cache entry for the open project, reset when the project or its last event changed. */
  private entry(): Cache {
    const project = this.project();
    const seq = project.repo.lastEventSeq();
    if (!this.cache || this.cache.project !== project || this.cache.seq !== seq) this.cache = { project, seq, views: new Map() };
    return this.cache;
  }

  /** The cache entry and the summaries of `scope`, with the repository as `scope` sees it. */
  private view(scope: ReadScope): View {
    const c = this.entry();
    const key = scopeKey(scope);
    let v = c.views.get(key);
    if (!v) c.views.set(key, (v = {}));
    return { c, v, repo: scopedRepository(c.project.repo, scope), scope };
  }

  /** `answer`, remembered (when made for everyone) with how to make it for another scope. */
  private shared<T extends object>(answer: T, scope: ReadScope, remake: (scope: ReadScope) => T): T {
    if (scope === null) everyone.set(answer, remake);
    return answer;
  }

  /**
   * `build_state_summary`: codes, categories, sources and cases with their counts, and the number of
   * pending approval requests, the counts of `scope`'s codings (default: everyone's). Cached until the next
   * event. Errors: NO_PROJECT.
   */
  buildStateSummary(scope: ReadScope = null): StateSummary {
    const { c, v, repo } = this.view(scope);
    if (v.state) return v.state;
    const counts = repo.counts();
    const sources = repo.listSources();
    const cases = repo.listCases();
    const coded = sources.filter((s) => s.segment_count + s.av_segment_count > 0).length;
    v.state = {
      project_name: c.project.name,
      project_path: c.project.path,
      counts: { ...counts, coded_sources: coded, cases: cases.length, pending_approvals: repo.listApprovals('pending').length },
      codes: repo.listCodes().map((k) => ({
        code_id: k.code_id,
        name: k.name,
        color: k.color,
        category_id: k.category_id,
        segment_count: k.segment_count,
        av_segment_count: k.av_segment_count,
      })),
      categories: repo.listCategories().map((k) => ({ category_id: k.category_id, name: k.name, parent_id: k.parent_id, code_count: k.code_count })),
      sources: sources.map((s) => ({
        source_id: s.source_id,
        name: s.name,
        type: s.type,
        length: s.length,
        folder_id: s.folder_id,
        segment_count: s.segment_count,
        av_segment_count: s.av_segment_count,
        coded: s.segment_count + s.av_segment_count > 0,
      })),
      cases: cases.map((k) => ({
        case_id: k.case_id,
        name: k.name,
        source_count: k.source_count,
        segment_count: k.segment_count,
        attribute_count: k.attribute_count,
      })),
      last_event_seq: c.seq,
      generated_at: isoTime(this.clock.now()),
    };
    return this.shared(v.state, scope, (s) => this.buildStateSummary(s));
  }

  /**
   * `build_project_briefing`: the spec's briefing shape (see {@link ProjectBriefing}): the research frame,
   * coding progress, the most used and the newest codes, and recent activity from the stored events
   * (session connects and disconnects left out), counting `scope`'s codings (default: everyone's) and leaving out
   * the other coders' coding events. Cached until the next event. Errors: NO_PROJECT.
   */
  buildProjectBriefing(scope: ReadScope = null): ProjectBriefing {
    const view = this.view(scope);
    const { c, v, repo } = view;
    const info = this.projectInfo();
    const infoKey = JSON.stringify(info);
    if (v.briefing && v.briefingInfo === infoKey) return v.briefing;
    const state = this.buildStateSummary(scope);
    const codes = repo.listCodes();
    const top = [...codes]
      .map((k) => ({ name: k.name, count: k.segment_count + k.av_segment_count }))
      .sort((a, b) => b.count - a.count || a.name.localeCompare(b.name))
      .slice(0, this.opts.topCodes ?? 10);
    const recent = [...codes]
      .sort((a, b) => (a.created_at < b.created_at ? 1 : a.created_at > b.created_at ? -1 : b.code_id - a.code_id))
      .slice(0, this.opts.topCodes ?? 10)
      .map((k) => k.name);
    v.briefingInfo = infoKey;
    v.briefing = {
      project_name: c.project.name,
      description: info.description,
      research_questions: info.research_questions,
      methodology: info.methodology,
      coding_progress: {
        total_sources: state.counts.sources,
        coded_sources: state.counts.coded_sources,
        total_codes: state.counts.codes,
        total_segments: state.counts.segments + state.counts.av_segments,
      },
      code_summary: { top_codes: top, recent_codes: recent },
      recent_activity: this.recentActivity(view, codes, repo.listSources()),
    };
    return this.shared(v.briefing, scope, (s) => this.buildProjectBriefing(s));
  }

  /** The newest stored events other than session.* (and other coders' coding events for a scope), newest first, with the names they concern. */
  private recentActivity({ c, scope }: View, codes: CodeWithCounts[], sources: SourceWithCounts[]): ProjectBriefing['recent_activity'] {
    const want = this.opts.recentActivity ?? 20;
    const codeName = new Map(codes.map((k) => [k.code_id, k.name]));
    const sourceName = new Map(sources.map((s) => [s.source_id, s.name]));
    const caseName = new Map(c.project.repo.listCases().map((k) => [k.case_id, k.name]));
    const picked: EventRecord[] = [];
    let upper = c.seq;
    const window = 200;
    while (picked.length < want && upper > 0) {
      const from = Math.max(0, upper - window);
      const page = c.project.repo.listEventsSince(from, upper - from).filter((e) => e.metadata.sequence_number <= upper);
      for (let i = page.length - 1; i >= 0 && picked.length < want; i--) {
        const e = page[i] as EventRecord;
        if (!e.event_type.startsWith('session.') && eventVisible(scope, e)) picked.push(e);
      }
      upper = from;
    }
    const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : undefined);
    return picked.map((e) => {
      const p = e.payload;
      const item: ProjectBriefing['recent_activity'][number] = { action: e.event_type, by: e.caused_by.user, timestamp: e.timestamp };
      const codeId = num(p.code_id) ?? num(p.target_code_id);
      const sourceId = num(p.source_id);
      const caseId = num(p.case_id);
      const name = typeof p.name === 'string' ? p.name : typeof p.new_name === 'string' ? p.new_name : undefined;
      if (codeId !== undefined) item.code = codeName.get(codeId) ?? (e.aggregate_type === 'code' ? name : undefined) ?? `#${codeId}`;
      else if (e.aggregate_type === 'code' && name) item.code = name;
      if (sourceId !== undefined) item.source = sourceName.get(sourceId) ?? (e.aggregate_type === 'source' ? name : undefined) ?? `#${sourceId}`;
      else if (e.aggregate_type === 'source' && name) item.source = name;
      if (typeof p.action_type === 'string') item.tool = p.action_type;
      if (caseId !== undefined) item.case = caseName.get(caseId) ?? (e.aggregate_type === 'case' ? name : undefined) ?? `#${caseId}`;
      return item;
    });
  }

  /**
   * Statistics for `qda://project/statistics`: totals, coverage of text sources by codings (code points
   * covered by at least one text segment over all text code points), codings per code, source, category
   * and coder (owner), of `scope`'s codings (default: everyone's). Cached until the next event. Errors: NO_PROJECT.
   */
  buildStatistics(scope: ReadScope = null): ProjectStatistics {
    const { c, v, repo } = this.view(scope);
    if (v.statistics) return v.statistics;
    const state = this.buildStateSummary(scope);
    const codes = repo.listCodes();
    const sources = repo.listSources();
    const codeSources = new Map<number, Set<number>>();
    const perSource: ProjectStatistics['segments_per_source'] = [];
    const perOwner = new Map<string, number>();
    let covered = 0;
    let textPoints = 0;
    for (const s of sources) {
      const segs = repo.listSegmentsForSource(s.source_id);
      const distinct = new Set<number>();
      for (const g of segs) {
        distinct.add(g.code_id);
        let set = codeSources.get(g.code_id);
        if (!set) codeSources.set(g.code_id, (set = new Set()));
        set.add(s.source_id);
        perOwner.set(g.owner, (perOwner.get(g.owner) ?? 0) + 1);
      }
      if (s.type === 'text') {
        textPoints += s.length;
        covered += coveredLength(segs);
      }
      perSource.push({ source_id: s.source_id, name: s.name, segments: s.segment_count, av_segments: s.av_segment_count, codes: distinct.size });
    }
    const byCategory = new Map<number | null, number>();
    for (const k of codes) byCategory.set(k.category_id, (byCategory.get(k.category_id) ?? 0) + 1);
    const categories = repo.listCategories();
    v.statistics = {
      totals: state.counts,
      coverage: {
        coded_sources: state.counts.coded_sources,
        uncoded_sources: state.counts.sources - state.counts.coded_sources,
        coded_code_points: covered,
        text_code_points: textPoints,
        coded_ratio: textPoints === 0 ? 0 : Math.round((covered / textPoints) * 10_000) / 10_000,
      },
      segments_per_code: codes
        .map((k) => ({
          code_id: k.code_id,
          name: k.name,
          segments: k.segment_count,
          av_segments: k.av_segment_count,
          sources: codeSources.get(k.code_id)?.size ?? 0,
        }))
        .sort((a, b) => b.segments + b.av_segments - (a.segments + a.av_segments) || a.name.localeCompare(b.name)),
      segments_per_source: perSource,
      codes_per_category: [
        ...categories.map((k) => ({ category_id: k.category_id as number | null, name: k.name, codes: byCategory.get(k.category_id) ?? 0 })),
        { category_id: null, name: '(uncategorized)', codes: byCategory.get(null) ?? 0 },
      ],
      segments_per_coder: [...perOwner]
        .map(([owner, segments]) => ({ owner, segments }))
        .sort((a, b) => b.segments - a.segments || a.owner.localeCompare(b.owner)),
      last_event_seq: c.seq,
      generated_at: isoTime(this.clock.now()),
    };
    return this.shared(v.statistics, scope, (s) => this.buildStatistics(s));
  }

  /**
   * Code co-occurrence: pairs of codes whose text segments overlap in the same source
   * (`a.start_pos < b.end_pos && b.start_pos < a.end_pos`), counted once per overlapping segment pair,
   * most frequent first, among `scope`'s codings (default: everyone's). Cached until the next event. Errors: NO_PROJECT.
   */
  cooccurrences(scope: ReadScope = null): CodeCooccurrence[] {
    const { v, repo } = this.view(scope);
    if (v.cooccurrences) return v.cooccurrences;
    const names = new Map(repo.listCodes().map((k) => [k.code_id, k.name]));
    const pairs = new Map<string, { a: number; b: number; count: number; sources: Set<number> }>();
    for (const s of repo.listSources('text')) {
      const segs = [...repo.listSegmentsForSource(s.source_id)].sort((x, y) => x.start_pos - y.start_pos);
      const open: Segment[] = [];
      for (const g of segs) {
        for (let i = open.length - 1; i >= 0; i--) if ((open[i] as Segment).end_pos <= g.start_pos) open.splice(i, 1);
        for (const o of open) {
          if (o.code_id === g.code_id || o.end_pos <= g.start_pos) continue;
          const [a, b] = o.code_id < g.code_id ? [o.code_id, g.code_id] : [g.code_id, o.code_id];
          const key = `${a}:${b}`;
          let p = pairs.get(key);
          if (!p) pairs.set(key, (p = { a, b, count: 0, sources: new Set() }));
          p.count++;
          p.sources.add(s.source_id);
        }
        open.push(g);
      }
    }
    v.cooccurrences = [...pairs.values()]
      .map((p) => ({
        code_a: { code_id: p.a, name: names.get(p.a) ?? `#${p.a}` },
        code_b: { code_id: p.b, name: names.get(p.b) ?? `#${p.b}` },
        count: p.count,
        sources: p.sources.size,
      }))
      .sort((x, y) => y.count - x.count || x.code_a.name.localeCompare(y.code_a.name) || x.code_b.name.localeCompare(y.code_b.name));
    return this.shared(v.cooccurrences, scope, (s) => this.cooccurrences(s));
  }

  /**
   * One text segment with its code's and source's names, when `scope` may see it (default: everyone's). Errors:
   * NO_PROJECT, SEGMENT_NOT_FOUND (also for an AV segment's id, naming list_av_segments, and for another coder's
   * segment under blind coding).
   */
  segment(segmentId: number, scope: ReadScope = null): ReturnType<typeof segmentOut> & { source_name: string | null } {
    const repo = scopedRepository(this.project().repo, scope);
    const s = repo.getSegment(segmentId);
    if (!s) throw textSegmentNotFound(repo, segmentId, 'list_av_segments lists the AV segments of a source');
    const code = repo.getCode(s.code_id);
    return this.shared({ ...segmentOut(s, code), source_name: repo.getSource(s.source_id)?.name ?? null }, scope, (x) => this.segment(segmentId, x));
  }

  dispose(): void {
    this.subscription?.close();
    this.cache = undefined;
  }
}

/** Code points of a source covered by at least one of `segs` (overlaps counted once). */
function coveredLength(segs: readonly Segment[]): number {
  const sorted = [...segs].sort((a, b) => a.start_pos - b.start_pos);
  let total = 0;
  let end = -1;
  let start = -1;
  for (const s of sorted) {
    if (s.start_pos >= end) {
      if (end > start) total += end - start;
      start = s.start_pos;
      end = s.end_pos;
    } else if (s.end_pos > end) end = s.end_pos;
  }
  if (end > start) total += end - start;
  return total;
}
