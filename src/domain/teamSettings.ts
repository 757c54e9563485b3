import { ToolError } from '../core/errors';
import type { CoderRole } from './model';
import type { CodedRanges, CoderScope, ProjectRepository, StoredTeamSettings } from './ports';

/**
 * Blind coding (issue 16 item 5). A per-project team setting, stored in the project (meta row `team_settings`, so it
 * travels with the project file and its history): while `blind` is on, every coder sees only their own codings: the
 * segment-reading tools, search hits, code and source counts, retrieval, and in VS Code the Codes tree's counts and
 * the editor's decorations. The lead (a researcher's coder name) sees all and ends blind coding when reconciling.
 *
 * It is implemented once: {@link readScopeFor} turns (setting, caller) into a {@link ReadScope}, and
 * {@link scopedRepository} wraps the project's repository so every segment read through it is that coder's only. The
 * pipeline hands read tools the wrapped repository (ToolContext.domain.repo, ToolContext.scope); the VS Code views read
 * through the same wrapper for the researcher's coder name. Writes never go through it (re-anchoring on text edits,
 * merges and deletions keep working on every coder's codings).
 */

/** The team setting as tools return it (get_team_settings). */
export interface TeamSettings {
  blind: boolean;
  /** the researcher's coder name who leads (sees all, may end blind coding); null: nobody named */
  lead: string | null;
  /** ISO 8601 UTC time blind coding was last switched on; null while it never was */
  blind_since: string | null;
  /** ISO 8601 UTC time of the last change; null: never set */
  updated_at: string | null;
  /** the coder who changed it last; null: never set */
  updated_by: string | null;
}

/**
 * What a caller may read: null, everything; a {@link CoderScope}, only that coder's codings (text and AV segments).
 * Computed per call by {@link readScopeFor}.
 */
export type ReadScope = CoderScope | null;

/** Who is asking: the coder name recorded as owner of what they make, and their role. */
export interface ScopeCaller {
  user: string;
  role?: CoderRole;
}

/** The setting of a project that never saved one: blind coding off. */
export const DEFAULT_TEAM_SETTINGS: TeamSettings = Object.freeze({ blind: false, lead: null, blind_since: null, updated_at: null, updated_by: null });

const cached = new WeakMap<object, { generation: number; settings: TeamSettings }>();

/**
 * The project's team setting (the default when none was saved; a stored row with wrong field types counts as off).
 * `generation`: the project's write generation (OpenProject.writeGeneration); when given, the setting read at the
 * same generation is reused (the pipeline asks on every call).
 */
export function teamSettingsOf(repo: Pick<ProjectRepository, 'teamSettings'>, generation?: number): TeamSettings {
  if (generation === undefined) return readTeamSettings(repo);
  const hit = cached.get(repo);
  if (hit?.generation === generation) return hit.settings;
  const settings = readTeamSettings(repo);
  cached.set(repo, { generation, settings });
  return settings;
}

function readTeamSettings(repo: Pick<ProjectRepository, 'teamSettings'>): TeamSettings {
  const s = repo.teamSettings();
  if (!s) return DEFAULT_TEAM_SETTINGS;
  return {
    blind: s.blind === true,
    lead: typeof s.lead === 'string' && s.lead.length > 0 ? s.lead : null,
    blind_since: typeof s.blind_since === 'string' ? s.blind_since : null,
    updated_at: typeof s.updated_at === 'string' ? s.updated_at : null,
    updated_by: typeof s.updated_by === 'string' ? s.updated_by : null,
  };
}

/** True when `caller` leads: a researcher whose coder name is the setting's lead. */
export function isLead(settings: TeamSettings, caller: ScopeCaller): boolean {
  return settings.lead !== null && (caller.role ?? 'researcher') === 'researcher' && caller.user === settings.lead;
}

/**
 * The read scope of `caller` under `settings`: null (everything) while blind coding is off or for the lead; else the
 * caller's own codings (owner `caller.user`, role `caller.role`, researcher when absent).
 */
export function readScopeFor(settings: TeamSettings, caller: ScopeCaller): ReadScope {
  if (!settings.blind || isLead(settings, caller)) return null;
  return { coder: caller.user, role: caller.role ?? 'researcher' };
}

/** A stable text of a scope (memo keys, cache keys): empty for null. */
export function scopeKey(scope: ReadScope): string {
  return scope === null ? '' : `${scope.role}\u0000${scope.coder}`;
}

/** True when a coding (a text or AV segment) is visible in `scope`: null sees all; else owner and role must match (a NULL role is the researcher's). */
export function isVisible(scope: ReadScope, seg: { owner: string; coder_role?: CoderRole | null }): boolean {
  if (scope === null) return true;
  return seg.owner === scope.coder && (seg.coder_role === 'agent' ? 'agent' : 'researcher') === scope.role;
}

/** The segment-reading methods {@link scopedRepository} replaces; every other method passes through unchanged. */
type Scoped = Pick<
  ProjectRepository,
  | 'listSegmentsForSource'
  | 'listSegmentMarksForSource'
  | 'listSegmentsForCode'
  | 'getSegment'
  | 'segmentsOverlapping'
  | 'listOrphans'
  | 'listAvSegmentsForSource'
  | 'getAvSegment'
  | 'avSegmentsOverlapping'
  | 'listCodes'
  | 'getCode'
  | 'listSources'
  | 'getSource'
  | 'searchSegmentRows'
  | 'listSegmentsForSearch'
  | 'getSegmentsForSearch'
  | 'counts'
  | 'reportCodedRanges'
  | 'reportCodeSources'
>;

/** The rows of `r` whose index passes `keep`, as new column arrays (the owners list as it is). */
function keepRanges(r: CodedRanges, keep: (i: number) => boolean): CodedRanges {
  const at: number[] = [];
  for (let i = 0; i < r.source_id.length; i++) if (keep(i)) at.push(i);
  const pick = (col: Int32Array) => Int32Array.from(at, (i) => col[i] as number);
  return {
    source_id: pick(r.source_id),
    code_id: pick(r.code_id),
    start_pos: pick(r.start_pos),
    end_pos: pick(r.end_pos),
    owner: pick(r.owner),
    owners: r.owners,
  };
}

/**
 * `repo` as `scope` sees it: null returns `repo` itself; else a view whose segment reads (lists, lookups by id,
 * overlaps, orphans, AV segments, full-text and similarity search rows) hold only the scope's codings, and whose
 * codes' and sources' `segment_count` / `av_segment_count` and the project's totals (`counts`) count only them; the
 * reports' column reads (`reportCodedRanges`, `reportCodeSources`) hold only the text segments the scope's coder owns. A hidden segment looked up by id is
 * undefined (tools then answer SEGMENT_NOT_FOUND). Every other method is the repository's own. For reads only:
 * writes through the view would not see the other coders' codings.
 */
export function scopedRepository<R extends ProjectRepository>(repo: R, scope: ReadScope): R {
  if (scope === null) return repo;
  const seen = <T extends { owner: string; coder_role?: CoderRole | null }>(list: T[]) => list.filter((s) => isVisible(scope, s));
  const one = <T extends { owner: string; coder_role?: CoderRole | null }>(s: T | undefined) => (s && isVisible(scope, s) ? s : undefined);
  const countsBy = (key: 'code_id' | 'source_id', only?: { codeId?: number; sourceId?: number }) => {
    const m = new Map<number, { text: number; av: number }>();
    for (const r of repo.coderCodingCounts(scope, only)) {
      const c = m.get(r[key]) ?? { text: 0, av: 0 };
      c.text += r.text;
      c.av += r.av;
      m.set(r[key], c);
    }
    return m;
  };
  const recount = <T extends { segment_count: number; av_segment_count: number }>(x: T, c: { text: number; av: number } | undefined): T => ({
    ...x,
    segment_count: c?.text ?? 0,
    av_segment_count: c?.av ?? 0,
  });
  const ids = () => new Set(repo.coderSegmentIds(scope));
  const overrides: Scoped = {
    listSegmentsForSource: (id) => seen(repo.listSegmentsForSource(id)),
    listSegmentMarksForSource: (id) => seen(repo.listSegmentMarksForSource(id)),
    listSegmentsForCode: (id) => seen(repo.listSegmentsForCode(id)),
    getSegment: (id) => one(repo.getSegment(id)),
    segmentsOverlapping: (sid, start, end) => seen(repo.segmentsOverlapping(sid, start, end)),
    listOrphans: (sid) => seen(repo.listOrphans(sid)),
    listAvSegmentsForSource: (id) => seen(repo.listAvSegmentsForSource(id)),
    getAvSegment: (id) => one(repo.getAvSegment(id)),
    avSegmentsOverlapping: (cid, sid, a, b) => seen(repo.avSegmentsOverlapping(cid, sid, a, b)),
    listCodes: () => {
      const counts = countsBy('code_id');
      return repo.listCodes().map((c) => recount(c, counts.get(c.code_id)));
    },
    getCode: (id) => {
      const c = repo.getCode(id);
      return c && recount(c, countsBy('code_id', { codeId: id }).get(id));
    },
    listSources: (type) => {
      const counts = countsBy('source_id');
      return repo.listSources(type).map((s) => recount(s, counts.get(s.source_id)));
    },
    getSource: (id) => {
      const s = repo.getSource(id);
      return s && recount(s, countsBy('source_id', { sourceId: id }).get(id));
    },
    searchSegmentRows: (match, filter) => {
      const mine = ids();
      return repo.searchSegmentRows(match, filter).filter((r) => mine.has(r.segment_id));
    },
    listSegmentsForSearch: (filter) => {
      const mine = ids();
      return repo.listSegmentsForSearch(filter).filter((r) => mine.has(r.segment_id));
    },
    getSegmentsForSearch: (list) => {
      const mine = ids();
      return repo.getSegmentsForSearch(list.filter((id) => mine.has(id)));
    },
    // the reports' column reads: only the scope's coder's text segments (by owner, as the reports group them)
    reportCodedRanges: (filter, owners) => {
      if (owners) {
        const r = repo.reportCodedRanges(filter, owners);
        return keepRanges(r, (i) => r.owners[r.owner[i] as number] === scope.coder);
      }
      const r = repo.reportCodedRanges(filter, [scope.coder]);
      return { ...r, owner: new Int32Array(r.source_id.length).fill(-1), owners: [] };
    },
    reportCodeSources: (filter) => {
      const all = repo.reportCodeSources(filter);
      const groups: typeof all.groups = [];
      const sources: number[] = [];
      let at = 0;
      for (const g of all.groups) {
        if (g.owner === scope.coder) {
          groups.push(g);
          for (let i = at; i < at + g.segments; i++) sources.push(all.source_id[i] as number);
        }
        at += g.segments;
      }
      return { groups, source_id: Int32Array.from(sources) };
    },
    counts: () => {
      let text = 0;
      let av = 0;
      for (const r of repo.coderCodingCounts(scope)) {
        text += r.text;
        av += r.av;
      }
      return { ...repo.counts(), segments: text, av_segments: av };
    },
  };
  return new Proxy(repo, {
    get(target, prop, receiver) {
      if (Object.prototype.hasOwnProperty.call(overrides, prop)) return (overrides as Record<string | symbol, unknown>)[prop];
      const v = Reflect.get(target, prop, receiver) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

/** The longest coder name a team setting takes (a lead), in code points. */
export const MAX_CODER_NAME = 255;

/**
 * Switches blind coding on or off (set_blind_coding, end_blind_coding). `caller` is a researcher (the tool is
 * researcher-only). On: `lead` names the researcher who leads (default: the caller, or the lead already set).
 * Off (reconciling): only the lead may, while blind coding is on and a lead is set; the lead stays recorded.
 * Returns the new setting. Errors: INVALID_ARGUMENTS (a blank lead), APPROVAL_FORBIDDEN (ending blind coding by
 * someone other than the lead).
 */
export function setBlindCoding(repo: ProjectRepository, caller: ScopeCaller, input: { enabled: boolean; lead?: string }, now: string): TeamSettings {
  const old = teamSettingsOf(repo);
  const lead = input.lead === undefined ? undefined : input.lead.trim();
  if (lead !== undefined && (lead.length === 0 || [...lead].length > MAX_CODER_NAME))
    throw new ToolError('INVALID_ARGUMENTS', `lead is a coder name of 1-${MAX_CODER_NAME} characters (code points), not blank`);
  if (old.blind && old.lead !== null && !isLead(old, caller) && (!input.enabled || (lead !== undefined && lead !== old.lead))) {
    throw new ToolError('APPROVAL_FORBIDDEN', `Blind coding is led by "${old.lead}": only the lead may end it or hand the lead on (you are "${caller.user}")`);
  }
  const next: StoredTeamSettings = input.enabled
    ? { blind: true, lead: lead ?? old.lead ?? caller.user, blind_since: old.blind ? old.blind_since : now, updated_at: now, updated_by: caller.user }
    : { blind: false, lead: old.lead, blind_since: old.blind_since, updated_at: now, updated_by: caller.user };
  repo.setTeamSettings(next);
  return teamSettingsOf(repo);
}
