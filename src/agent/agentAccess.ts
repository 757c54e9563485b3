import { ToolError } from '../core/errors';
import type { ClosedSourceRow, ProjectRepository } from '../domain/ports';
import type { OpenProject } from '../tools/context';
import type { AnyTool } from '../tools/defineTool';
import { forEachArgumentKey } from './pipeline/arguments';

/**
 * Sources closed to agents (issue 14 item 11). The researcher closes a source, a folder (with its
 * sub-folders) or a case (its member sources and the sources of its member ranges) to every agent or to
 * named agents (`set_agent_access`, table `agent_access`). The pipeline enforces it once for every agent
 * call, on every surface (HTTP, REST, WebSocket, MCP tools, resources and prompts, gRPC, CLI, LM tools):
 *
 * - **Refused** (SOURCE_CLOSED, HTTP 403, before the trust stage, so never queued): a call whose arguments
 *   name a closed source (`source_id`, `source_ids`), a text or AV segment of one (`segment_id`,
 *   `segment_ids`), and a call that writes a file (a tool path with access `write`: export_data,
 *   export_report) while any source is closed to that agent (the file would hold its words, and an agent
 *   could import it back).
 * - **Redacted** (every other result an agent receives, lists, search hits, reports, case members, approval
 *   results): in every object that belongs to a closed source (its `source_id`, or the source of its
 *   `segment_id`), every string except names, ids, types and times becomes {@link closedMarker}, which names
 *   the source. As a safety net, any string of the result that belongs to no source (no `source_id` or
 *   `segment_id` around it) and repeats {@link FRAGMENT_CODE_UNITS} or more consecutive characters of a closed
 *   source's text is replaced by the marker too; so is a string of an open source that repeats
 *   {@link COPY_CODE_UNITS} characters of one (a copy of a closed transcript imported again by an agent).
 *
 * - **Event streams** (SSE, WebSocket, gRPC, MCP notifications, the CLI, `GET /events/history`:
 *   EventHub.redactor): an event's payload about a source closed to any agent (a coding's `text`) carries the
 *   marker instead, on every stream (a stream's events are shared; the researcher reads the text in the project).
 *
 * The researcher's calls (the VS Code UI, the reviewer token) are never refused or redacted.
 */

/** The agent name a caller acts as: its credential's agent name when it has one, else its client name. */
export function agentNameOf(caller: { agent?: string; client_name: string }): string {
  return caller.agent ?? caller.client_name;
}

/** The marker that replaces a closed source's words in an agent's results. */
export function closedMarker(sourceName: string): string {
  return `[closed to agents: source "${sourceName}"]`;
}

/** Length of the text fragments (UTF-16 code units) the safety net looks for in an agent's results. */
export const FRAGMENT_CODE_UNITS = 24;

/** Length of the verbatim run (UTF-16 code units) that marks a string of an open source as a copy of a closed text. */
export const COPY_CODE_UNITS = 48;

/** Most code units of closed text the safety net indexes (beyond it, only the structural redaction applies). */
const MAX_INDEXED_CODE_UNITS = 8_000_000;

/** One source closed to an agent: its name and what closed it. */
export interface ClosedSource {
  source_id: number;
  source_name: string;
  /** the rules that close it: `source`, `folder` or `case` with the target's id */
  via: { kind: ClosedSourceRow['via_kind']; id: number }[];
}

/**
 * Keys whose string values stay visible in an object of a closed source: its identity (names, ids, types),
 * times and provenance, never its words (text, content, context, snippet, memo, ...).
 */
const KEEP_KEY =
  /(^|_)(id|ids|name|names|title|type|kind|color|at|owner|coder|role|status|user|format|unit|mime_type|client_type|session_id|model|access|agents|by)$/;

/** The marker of a value that belongs to a source open to the agent (AgentView.walk). */
const OPEN = Symbol('open source');

/** The closed sources of one project at one write generation, and per agent the view of them. */
interface Snapshot {
  generation: number | undefined;
  rows: ClosedSourceRow[];
  views: Map<string, AgentView | null>;
}

const snapshots = new WeakMap<OpenProject, Snapshot>();
/** text indexes by the closed sources' ids and versions (a few agents share one) */
const indexes = new Map<string, FragmentIndex>();

/**
 * What `agent` may not read in `project`, or null when nothing is closed to it (the common case: no
 * work at all). `agent` null: every source closed to any agent (the event streams, which every agent may
 * read). Cached per project and write generation.
 */
export function agentViewOf(project: OpenProject, agent: string | null): AgentView | null {
  const generation = project.writeGeneration;
  let snap = snapshots.get(project);
  if (!snap || generation === undefined || snap.generation !== generation) {
    const rows = typeof project.repo.listClosedSources === 'function' ? project.repo.listClosedSources() : [];
    snap = { generation, rows, views: new Map() };
    snapshots.set(project, snap);
  }
  if (snap.rows.length === 0) return null;
  const key = agent ?? '\u0000any agent';
  if (snap.views.has(key)) return snap.views.get(key) ?? null;
  const closed = new Map<number, ClosedSource>();
  for (const r of snap.rows) {
    if (agent !== null && r.agents !== null && !r.agents.includes(agent)) continue;
    let c = closed.get(r.source_id);
    if (!c) closed.set(r.source_id, (c = { source_id: r.source_id, source_name: r.source_name, via: [] }));
    c.via.push({ kind: r.via_kind, id: r.via_id });
  }
  const view = closed.size === 0 ? null : new AgentView(project.repo, closed);
  snap.views.set(key, view);
  return view;
}

/** The error an agent gets for reading a closed source: SOURCE_CLOSED naming it. */
export function sourceClosedError(source: ClosedSource, what?: string): ToolError {
  const reason = source.via.map((v) => (v.kind === 'source' ? 'the source itself' : `its ${v.kind} (${v.kind}_id ${v.id})`)).join(', ');
  return new ToolError(
    'SOURCE_CLOSED',
    `The researcher closed source "${source.source_name}" (source_id ${source.source_id}) to agents${what ? `: ${what}` : ''}; agents may not read it or work on it (closed through ${reason}). Ask the researcher.`,
    { source_id: source.source_id, source_name: source.source_name, closed_via: source.via },
  );
}

/** The sources closed to one agent, with the checks and the redaction the pipeline applies to its calls. */
export class AgentView {
  constructor(
    private readonly repo: ProjectRepository,
    /** closed source id -> source */
    readonly closed: ReadonlyMap<number, ClosedSource>,
  ) {}

  /**
   * Refuses a call that names a closed source or a segment of one, or that writes a file while any source is
   * closed to this agent. Errors: SOURCE_CLOSED.
   */
  check(tool: AnyTool, input: unknown): void {
    if (tool.paths?.some((p) => p.access === 'write')) {
      const first = this.closed.values().next().value as ClosedSource;
      const names = [...this.closed.values()].map((c) => `"${c.source_name}"`).join(', ');
      throw new ToolError(
        'SOURCE_CLOSED',
        `${tool.name} writes a file that would hold the words of sources the researcher closed to agents (${names}); agents may not export while a source is closed to them. Ask the researcher to export.`,
        { source_id: first.source_id, source_name: first.source_name, closed_source_ids: [...this.closed.keys()] },
      );
    }
    const { sources, segments } = idsOf(input);
    for (const id of sources) {
      const c = this.closed.get(id);
      if (c) throw sourceClosedError(c, tool.name);
    }
    for (const id of segments) {
      const sourceId = this.sourceOfSegment(id);
      const c = sourceId === undefined ? undefined : this.closed.get(sourceId);
      if (c) throw sourceClosedError(c, `${tool.name} of segment ${id}`);
    }
  }

  /**
   * `data` as this agent may see it: the words of closed sources replaced by {@link closedMarker}. Never
   * changes `data` (results may be shared and frozen): changed parts are copied; unchanged data is returned
   * as is.
   */
  redact(data: unknown): unknown {
    return this.walk(data, null, '', 0);
  }

  private sourceOfSegment(id: number): number | undefined {
    return this.repo.getSegment(id)?.source_id ?? (typeof this.repo.getAvSegment === 'function' ? this.repo.getAvSegment(id)?.source_id : undefined);
  }

  /**
   * `inside`: the closed source the value belongs to, OPEN when it belongs to a source open to this agent, or
   * null when no source is known. The fragment check looks for {@link FRAGMENT_CODE_UNITS} characters of a
   * closed text in a string of no source, and for {@link COPY_CODE_UNITS} in a string of an open source (a
   * copy of a closed text imported again), so phrases two participants share never blank an open passage.
   */
  private walk(v: unknown, inside: ClosedSource | typeof OPEN | null, key: string, depth: number): unknown {
    if (typeof v === 'string') {
      if (inside && inside !== OPEN && !KEEP_KEY.test(key)) return v.length === 0 ? v : closedMarker(inside.source_name);
      const hit = this.fragments().find(v, inside === OPEN ? COPY_CODE_UNITS : FRAGMENT_CODE_UNITS);
      return hit ? closedMarker(hit.source_name) : v;
    }
    if (v === null || typeof v !== 'object' || depth > 64) return v;
    if (Array.isArray(v)) {
      let out: unknown[] | undefined;
      for (let i = 0; i < v.length; i++) {
        const x = this.walk(v[i], inside, key, depth + 1);
        if (x !== v[i]) (out ??= v.slice())[i] = x;
      }
      return out ?? v;
    }
    const o = v as Record<string, unknown>;
    let own = inside;
    // an object of a source decides for its strings; within a closed source's object everything stays closed
    if (own === null || own === OPEN) {
      const sid =
        typeof o.source_id === 'number'
          ? o.source_id
          : typeof o.segment_id === 'number' && o.source_id === undefined
            ? this.sourceOfSegment(o.segment_id)
            : undefined;
      if (sid !== undefined) own = this.closed.get(sid) ?? OPEN;
    }
    let out: Record<string, unknown> | undefined;
    for (const [k, x] of Object.entries(o)) {
      const y = this.walk(x, own, k, depth + 1);
      if (y !== x) (out ??= { ...o })[k] = y;
    }
    return out ?? v;
  }

  private index: FragmentIndex | undefined;

  /** The safety net's index of the closed sources' texts (shared between views of the same sources and versions). */
  private fragments(): FragmentIndex {
    if (this.index) return this.index;
    const ids = [...this.closed.keys()].sort((a, b) => a - b);
    const versions = typeof this.repo.entityVersions === 'function' ? this.repo.entityVersions(ids.map((id) => ({ kind: 'source' as const, id }))) : [];
    const key = JSON.stringify([ids, versions.map((v) => v.version)]);
    let index = versions.length === ids.length ? indexes.get(key) : undefined;
    if (!index) {
      index = new FragmentIndex(ids.map((id) => ({ source: this.closed.get(id) as ClosedSource, text: this.repo.getSourceText(id) ?? '' })));
      if (versions.length === ids.length) {
        if (indexes.size >= 16) indexes.clear();
        indexes.set(key, index);
      }
    }
    this.index = index;
    return index;
  }
}

/** The source ids and segment ids a call's arguments name (`source_id`, `source_ids`, `segment_id`, `segment_ids`), at most 4 levels deep. */
function idsOf(input: unknown): { sources: Set<number>; segments: Set<number> } {
  const sources = new Set<number>();
  const segments = new Set<number>();
  const add = (set: Set<number>, x: unknown) => {
    if (typeof x === 'number') set.add(x);
    else if (Array.isArray(x)) for (const y of x) if (typeof y === 'number') set.add(y);
  };
  forEachArgumentKey(input, 4, (k, x) => {
    if (k === 'source_id' || k === 'source_ids') add(sources, x);
    else if (k === 'segment_id' || k === 'segment_ids') add(segments, x);
    else return false;
    return true;
  });
  return { sources, segments };
}

/**
 * Every {@link FRAGMENT_CODE_UNITS}-long window of the closed texts, by a 32-bit rolling hash; a hash hit is
 * confirmed against the text, so a string is flagged only when it really repeats such a window.
 */
class FragmentIndex {
  private readonly hashes = new Set<number>();
  private readonly texts: { source: ClosedSource; text: string }[];

  constructor(texts: { source: ClosedSource; text: string }[]) {
    let budget = MAX_INDEXED_CODE_UNITS;
    this.texts = [];
    for (const t of texts) {
      if (t.text.length < FRAGMENT_CODE_UNITS || t.text.length > budget) continue;
      budget -= t.text.length;
      this.texts.push(t);
      forEachWindow(t.text, (h) => void this.hashes.add(h));
    }
  }

  /**
   * The closed source whose text `s` repeats `length` (at least {@link FRAGMENT_CODE_UNITS}) consecutive code
   * units of, or undefined: a run of indexed windows that long, confirmed against the text.
   */
  find(s: string, length: number = FRAGMENT_CODE_UNITS): ClosedSource | undefined {
    if (this.hashes.size === 0 || s.length < length) return undefined;
    const windows = length - FRAGMENT_CODE_UNITS + 1;
    let run = 0;
    let found: ClosedSource | undefined;
    forEachWindow(s, (h, end) => {
      run = this.hashes.has(h) ? run + 1 : 0;
      if (run < windows) return false;
      const piece = s.slice(end - length, end);
      found = this.texts.find((t) => t.text.includes(piece))?.source;
      return found !== undefined;
    });
    return found;
  }
}

/** Calls `f` with the rolling hash of every window of {@link FRAGMENT_CODE_UNITS} code units of `s` and the window's end; stops when `f` returns true. */
function forEachWindow(s: string, f: (hash: number, end: number) => boolean | void): void {
  const B = 31;
  let pow = 1;
  for (let i = 0; i < FRAGMENT_CODE_UNITS - 1; i++) pow = Math.imul(pow, B);
  let h = 0;
  for (let i = 0; i < s.length; i++) {
    if (i >= FRAGMENT_CODE_UNITS) h = (h - Math.imul(s.charCodeAt(i - FRAGMENT_CODE_UNITS), pow)) | 0;
    h = (Math.imul(h, B) + s.charCodeAt(i)) | 0;
    if (i >= FRAGMENT_CODE_UNITS - 1 && f(h, i + 1) === true) return;
  }
}
