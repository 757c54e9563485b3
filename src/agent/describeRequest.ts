/**
 * Approval requests in words (issue 13, item 8): the description stored with each pending request and shown
 * by GET /approvals, list_pending_approvals, get_approval_status, the approval.requested event and VS Code's
 * notifications ("mcp-client asks to " + description). It names codes, categories, sources, cases and folders
 * by their names, quotes a short excerpt of a passage, and says what a destructive request would do with
 * counts read from the project as it is when the request is made ("merge 'Tension' (12 passages) into
 * 'Conflict'", "delete 'Belonging' and its 4 passages"; for a held call the counts come from its dry run, the
 * same pipeline run rolled back). Ids appear only for things that do not exist
 * ("code 999 (not found)").
 *
 * One table of describers by tool name; every other tool gets the generic form: its title in lower case and
 * its arguments, with each id argument (code_id, source_id, category_id, segment_id, case_id, folder_id and
 * their kin) replaced by the name it stands for. Reads only (cheap repository lookups, no writes); a lookup
 * that throws falls back to the generic form, so describing never fails a request.
 */
import { sliceCp } from '../core/text';
import { sameColour } from '../domain/codeColours';
import type { ProjectRepository } from '../domain/ports';
import { oneLineExcerpt } from '../core/text';

/** The part of a tool a description needs: its registry name and title ("merge_codes", "Merge Codes"). */
export interface DescribedTool {
  name: string;
  title: string;
}

/** Longest excerpt of a passage, in code points, the ellipsis included. */
export const MAX_EXCERPT = 80;
/** Longest name quoted in a description, in code points, the ellipsis included. */
const MAX_NAME = 60;

type Args = Record<string, unknown>;
type Describer = (repo: ProjectRepository, a: Args, outcome?: RequestOutcome) => string;

/**
 * What the dry run of a held call found (the pipeline's DryRunOutcome): the data it would return and the
 * events it would raise, in order. Destructive requests are described from it ("merge 'A' (12 passages) into
 * 'B'" counts what the merge would really move).
 */
export interface RequestOutcome {
  data: unknown;
  events: readonly { event_type: string; payload: Record<string, unknown> }[];
}

/** The payload of the first event of `type` in `outcome`, or undefined. */
function eventOf(outcome: RequestOutcome | undefined, type: string): Record<string, unknown> | undefined {
  return outcome?.events.find((e) => e.event_type === type)?.payload;
}

/** `text` shortened to at most `max` code points (white space runs made one space), with "…" when cut. */
export function shorten(text: string, max: number): string {
  return oneLineExcerpt(text, max);
}

/** `'text…'`: an excerpt of at most {@link MAX_EXCERPT} code points inside single quotes. */
function excerpt(text: string): string {
  return `'${shorten(text, MAX_EXCERPT)}'`;
}

const quoted = (name: string): string => `'${shorten(name, MAX_NAME)}'`;
const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** "the code 'X'" for a found name (quoted), or the not-found phrase as it is ("code 999 (not found)"). */
function the(kind: string, name: string): string {
  return name.startsWith("'") ? `the ${kind} ${name}` : name;
}

function missing(kind: string, id: unknown): string {
  return `${kind} ${id === undefined ? '(none given)' : JSON.stringify(id)} (not found)`;
}

// -- names of things, by id ("'Tension'", or "code 999 (not found)")

function codeName(repo: ProjectRepository, id: unknown): string {
  const c = num(id) === undefined ? undefined : repo.getCode(id as number);
  return c ? quoted(c.name) : missing('code', id);
}

function codePassages(repo: ProjectRepository, id: unknown): { text: string; passages: number | undefined } {
  const c = num(id) === undefined ? undefined : repo.getCode(id as number);
  if (!c) return { text: missing('code', id), passages: undefined };
  return { text: quoted(c.name), passages: c.segment_count + c.av_segment_count };
}

function sourceName(repo: ProjectRepository, id: unknown, quote = true): string {
  const s = num(id) === undefined ? undefined : repo.getSource(id as number);
  if (!s) return missing('source', id);
  return quote ? quoted(s.name) : shorten(s.name, MAX_NAME);
}

function categoryName(repo: ProjectRepository, id: unknown): string {
  const c = num(id) === undefined ? undefined : repo.getCategory(id as number);
  return c ? quoted(c.name) : missing('category', id);
}

function caseName(repo: ProjectRepository, id: unknown): string {
  const c = num(id) === undefined ? undefined : repo.getCase(id as number);
  return c ? quoted(c.name) : missing('case', id);
}

function folderName(repo: ProjectRepository, id: unknown): string {
  const f = num(id) === undefined ? undefined : repo.getFolder(id as number);
  return f ? quoted(f.name) : missing('folder', id);
}

/** "'the workshops were…'" for code points [start, end) of a text source, or '' when out of range or not text. */
function passage(repo: ProjectRepository, sourceId: unknown, start: unknown, end: unknown): string {
  const s = num(start);
  const e = num(end);
  if (num(sourceId) === undefined || s === undefined || e === undefined || e <= s) return '';
  const text = repo.getSourceText(sourceId as number);
  if (text === null) return '';
  const part = sliceCp(text, s, e);
  return part.trim() === '' ? '' : excerpt(part);
}

/** "the coding 'X' from interview-04: 'the workshops were…'" (or "coding 12 (not found)"). */
function coding(repo: ProjectRepository, segmentId: unknown, prep = 'from'): string {
  const seg = num(segmentId) === undefined ? undefined : repo.getSegment(segmentId as number);
  if (!seg) return missing('coding', segmentId);
  const text = seg.text.trim() === '' ? '' : `: ${excerpt(seg.text)}`;
  return `the coding ${codeName(repo, seg.code_id)} ${prep} ${sourceName(repo, seg.source_id, false)}${text}`;
}

/** "m:ss" (or "h:mm:ss") of a time in milliseconds (a position in audio or video; whole seconds, rounded down). */
export function clock(ms: number): string {
  const t = Math.floor(ms / 1000);
  const [h, m, s] = [Math.floor(t / 3600), Math.floor((t % 3600) / 60), t % 60];
  const two = (n: number): string => String(n).padStart(2, '0');
  return h > 0 ? `${h}:${two(m)}:${two(s)}` : `${m}:${two(s)}`;
}

function avCoding(repo: ProjectRepository, segmentId: unknown): string {
  const seg = num(segmentId) === undefined ? undefined : repo.getAvSegment(segmentId as number);
  if (!seg) return missing('coding', segmentId);
  return `the coding ${codeName(repo, seg.code_id)} from ${sourceName(repo, seg.source_id, false)} at ${clock(seg.start_ms)}-${clock(seg.end_ms)}`;
}

function startOf(a: Args): unknown {
  return a.start_position ?? a.start_pos ?? a.start;
}
function endOf(a: Args): unknown {
  return a.end_position ?? a.end_pos ?? a.end;
}

/** "code interview-04 with 'X': 'excerpt'". */
function codingOf(repo: ProjectRepository, a: Args, verb: string): string {
  const text = passage(repo, a.source_id, startOf(a), endOf(a));
  return `${verb} ${sourceName(repo, a.source_id, false)} with ${codeName(repo, a.code_id)}${text ? `: ${text}` : ''}`;
}

function sourceRemoval(repo: ProjectRepository, a: Args, verb: string, extra = ''): string {
  const s = num(a.source_id) === undefined ? undefined : repo.getSource(a.source_id as number);
  if (!s) return `${verb} ${missing('source', a.source_id)}`;
  const n = s.segment_count + s.av_segment_count;
  return `${verb} source ${quoted(s.name)} and its ${plural(n, 'coding')}${extra}`;
}

/** The suggestion with id `id`, or undefined. */
function suggestion(repo: ProjectRepository, id: unknown): ReturnType<ProjectRepository['getSuggestion']> {
  return num(id) === undefined ? undefined : repo.getSuggestion(id as number);
}

/** " (#4E79A7)", or " (#4E79A7, also the colour of 'Food security' and 2 more)" when other codes have it. */
function colourWords(repo: ProjectRepository, colour: unknown): string {
  const c = str(colour);
  if (!c) return '';
  const others = repo.listCodeLabels().filter((x) => sameColour(x.color, c));
  if (others.length === 0) return ` (${c.toUpperCase()})`;
  const more = others.length > 1 ? ` and ${others.length - 1} more` : '';
  return ` (${c.toUpperCase()}, also the colour of ${quoted((others[0] as (typeof others)[number]).name)}${more})`;
}

function memoChange(memo: unknown): string {
  const m = str(memo);
  return m === undefined || m === '' ? ' (clear it)' : `: ${excerpt(m)}`;
}

/** The describers of tools whose generic form would not say enough (destructive ones say what they remove). */
const DESCRIBERS: Readonly<Record<string, Describer>> = {
  merge_codes: (repo, a, outcome) => {
    const merged = eventOf(outcome, 'coding.codes_merged');
    const moved = num(merged?.segments_moved);
    if (merged && moved !== undefined) {
      const name = str(merged.source_code_name);
      const dropped = num((outcome?.data as Args | null | undefined)?.duplicates_removed) ?? 0;
      const into = codeName(repo, a.target_code_id);
      const dupes = dropped > 0 ? `; ${plural(dropped, 'passage')} already coded with ${into} ${dropped === 1 ? 'is' : 'are'} dropped` : '';
      return `merge ${name === undefined ? codeName(repo, a.source_code_id) : quoted(name)} (${plural(moved, 'passage')}) into ${into}${dupes}`;
    }
    const from = codePassages(repo, a.source_code_id);
    const into = codePassages(repo, a.target_code_id);
    const count = from.passages === undefined ? '' : ` (${plural(from.passages, 'passage')})`;
    return `merge ${from.text}${count} into ${into.text}`;
  },
  delete_code: (repo, a, outcome) => {
    const deleted = eventOf(outcome, 'coding.code_deleted');
    const removed = num(deleted?.segment_count);
    if (deleted && removed !== undefined) {
      const name = quoted(str(deleted.name) ?? '');
      return removed === 0 ? `delete ${name} (no passages are coded with it)` : `delete ${name} and its ${plural(removed, 'passage')}`;
    }
    const c = codePassages(repo, a.code_id);
    if (c.passages === undefined) return `delete ${c.text}`;
    if (c.passages === 0) return `delete ${c.text} (no passages are coded with it)`;
    if (a.delete_segments === true) return `delete ${c.text} and its ${plural(c.passages, 'passage')}`;
    return `delete ${c.text}, which codes ${plural(c.passages, 'passage')} (refused without delete_segments: true)`;
  },
  delete_category: (repo, a, outcome) => {
    const deleted = eventOf(outcome, 'coding.category_deleted');
    if (deleted && Array.isArray(deleted.code_ids) && Array.isArray(deleted.sub_category_ids)) {
      const name = quoted(str(deleted.name) ?? '');
      const [codes, subs] = [deleted.code_ids.length, deleted.sub_category_ids.length];
      const what = [codes > 0 ? plural(codes, 'code') : '', subs > 0 ? plural(subs, 'sub-category', 'sub-categories') : ''].filter(Boolean).join(' and ');
      if (!what) return `delete the empty category ${name}`;
      const to = deleted.moved_to == null ? 'the top level' : categoryName(repo, deleted.moved_to);
      return `delete category ${name} and move its ${what} to ${to}`;
    }
    const cat = num(a.category_id) === undefined ? undefined : repo.getCategory(a.category_id as number);
    if (!cat) return `delete ${missing('category', a.category_id)}`;
    const codes = repo.listCodeLabels().filter((c) => c.category_id === cat.category_id).length;
    const subs = repo.listCategories().filter((c) => c.parent_id === cat.category_id).length;
    const what = [codes > 0 ? plural(codes, 'code') : '', subs > 0 ? plural(subs, 'sub-category', 'sub-categories') : ''].filter(Boolean).join(' and ');
    if (!what) return `delete the empty category ${quoted(cat.name)}`;
    if (a.move_codes_to === undefined) return `delete category ${quoted(cat.name)}, which holds ${what} (refused without move_codes_to)`;
    const to = a.move_codes_to === null ? 'the top level' : categoryName(repo, a.move_codes_to);
    return `delete category ${quoted(cat.name)} and move its ${what} to ${to}`;
  },
  remove_source: (repo, a) => sourceRemoval(repo, a, 'remove'),
  delete_source: (repo, a) => sourceRemoval(repo, a, 'remove'),
  erase_source: (repo, a) => sourceRemoval(repo, a, 'erase', ', its text and every trace of it in the history'),
  delete_segment: (repo, a) => `remove ${coding(repo, a.segment_id)}`,
  remove_code: (repo, a) => `remove ${coding(repo, a.segment_id)}`,
  remove_av_segment: (repo, a) => `remove ${avCoding(repo, a.segment_id)}`,
  update_segment_memo: (repo, a) => `change the memo of ${coding(repo, a.segment_id, 'in')}${memoChange(a.memo)}`,
  apply_code: (repo, a) => codingOf(repo, a, 'code'),
  suggest_code_application: (repo, a) => codingOf(repo, a, 'suggest coding'),
  apply_av_code: (repo, a) => {
    const [s, e] = [num(a.start_ms), num(a.end_ms)];
    const at = s !== undefined && e !== undefined ? ` at ${clock(s)}-${clock(e)}` : '';
    return `code ${sourceName(repo, a.source_id, false)}${at} with ${codeName(repo, a.code_id)}`;
  },
  batch_apply_codes: (repo, a) => {
    const ops = Array.isArray(a.operations) ? (a.operations as Args[]) : [];
    const byCode = new Map<unknown, number>();
    for (const op of ops) byCode.set(op.code_id, (byCode.get(op.code_id) ?? 0) + 1);
    const sources = new Set(ops.map((op) => op.source_id));
    const codes = [...byCode].slice(0, 3).map(([id, n]) => `${codeName(repo, id)} (${n})`);
    const more = byCode.size > 3 ? ` and ${plural(byCode.size - 3, 'more code')}` : '';
    const where = sources.size === 1 ? ` in ${sourceName(repo, ops[0]?.source_id, false)}` : ` in ${plural(sources.size, 'source')}`;
    const first = ops.length === 1 ? passage(repo, ops[0]?.source_id, startOf(ops[0] as Args), endOf(ops[0] as Args)) : '';
    return `code ${plural(ops.length, 'passage')}${where} with ${codes.join(', ')}${more}${first ? `: ${first}` : ''}`;
  },
  suggest_batch_coding: (repo, a) => {
    const n = Array.isArray(a.segments) ? a.segments.length : 0;
    return `suggest coding ${plural(n, 'passage')} with ${codeName(repo, a.code_id)}`;
  },
  create_code: (repo, a) =>
    `create the code ${quoted(str(a.name) ?? '')}${a.category_id == null ? '' : ` in ${categoryName(repo, a.category_id)}`}${colourWords(repo, a.color)}`,
  approve_suggestion: (repo, a) => {
    const s = suggestion(repo, a.suggestion_id);
    return s
      ? `create the suggested code ${quoted(s.name ?? '')}${s.category_id == null ? '' : ` in ${categoryName(repo, s.category_id)}`}`
      : `approve ${missing('suggestion', a.suggestion_id)}`;
  },
  approve_merge: (repo, a) => {
    const s = suggestion(repo, a.merge_suggestion_id);
    if (!s) return `approve ${missing('merge suggestion', a.merge_suggestion_id)}`;
    return `${DESCRIBERS.merge_codes!(repo, { source_code_id: s.code_id, target_code_id: s.target_code_id })} (as suggested)`;
  },
  approve_coding_suggestion: (repo, a) => {
    const s = suggestion(repo, a.suggestion_id);
    if (!s) return `approve ${missing('coding suggestion', a.suggestion_id)}`;
    return `${codingOf(repo, { code_id: s.code_id, source_id: s.source_id, start_position: s.start_pos, end_position: s.end_pos }, 'code')} (as suggested)`;
  },
  undo: () => 'undo its own last action',
  redo: () => 'redo its own last undone action',
  suggest_new_code: (repo, a) => `suggest the new code ${quoted(str(a.name) ?? '')}${a.category_id == null ? '' : ` in ${categoryName(repo, a.category_id)}`}`,
  rename_code: (repo, a) => `rename ${the('code', codeName(repo, a.code_id))} to ${quoted(str(a.new_name) ?? '')}`,
  set_code_color: (repo, a) => {
    const c = num(a.code_id) === undefined ? undefined : repo.getCode(a.code_id as number);
    return c ? `recolour the code ${quoted(c.name)} from ${c.color} to ${String(a.color).toUpperCase()}` : `recolour ${missing('code', a.code_id)}`;
  },
  update_code_memo: (repo, a) => `change the memo of ${the('code', codeName(repo, a.code_id))}${memoChange(a.memo)}`,
  move_code_to_category: (repo, a) =>
    `move ${the('code', codeName(repo, a.code_id))} ${a.category_id == null ? 'out of its category (to the top level)' : `into ${categoryName(repo, a.category_id)}`}`,
  move_code: (repo, a) =>
    `move ${the('code', codeName(repo, a.code_id))} ${a.category_id == null ? 'out of its category (to the top level)' : `into ${categoryName(repo, a.category_id)}`}`,
  create_category: (repo, a) => `create the category ${quoted(str(a.name) ?? '')}${a.parent_id == null ? '' : ` under ${categoryName(repo, a.parent_id)}`}`,
  rename_category: (repo, a) => `rename ${the('category', categoryName(repo, a.category_id))} to ${quoted(str(a.new_name) ?? '')}`,
  update_category_memo: (repo, a) => `change the memo of ${the('category', categoryName(repo, a.category_id))}${memoChange(a.memo)}`,
  rename_source: (repo, a) => `rename ${the('source', sourceName(repo, a.source_id))} to ${quoted(str(a.new_name) ?? '')}`,
  update_memo: (repo, a) => `change the memo of ${the('source', sourceName(repo, a.source_id))}${memoChange(a.memo)}`,
  move_source_to_folder: (repo, a) =>
    `move ${the('source', sourceName(repo, a.source_id))} ${a.folder_id == null ? 'to the top level' : `into ${the('folder', folderName(repo, a.folder_id))}`}`,
  set_source_attribute: (repo, a) =>
    `set ${quoted(str(a.attribute_name) ?? '')} of ${the('source', sourceName(repo, a.source_id))} to ${JSON.stringify(a.value)}`,
  create_folder: (repo, a) => `create the folder ${quoted(str(a.name) ?? '')}${a.parent_id == null ? '' : ` in ${folderName(repo, a.parent_id)}`}`,
  rename_folder: (repo, a) => `rename ${the('folder', folderName(repo, a.folder_id))} to ${quoted(str(a.new_name) ?? '')}`,
  delete_folder: (repo, a) => {
    const f = num(a.folder_id) === undefined ? undefined : repo.listFolders().find((x) => x.folder_id === a.folder_id);
    return f ? `delete the folder ${quoted(f.name)} (${plural(f.source_count, 'source')} in it)` : `delete ${missing('folder', a.folder_id)}`;
  },
  add_text_source: (_repo, a) => `add the text source ${quoted(str(a.name) ?? '')} (${plural(Array.from(str(a.content) ?? '').length, 'character')})`,
  create_case: (_repo, a) => `create the case ${quoted(str(a.name) ?? '')}`,
  delete_case: (repo, a) => {
    const c = num(a.case_id) === undefined ? undefined : repo.getCase(a.case_id as number);
    if (!c) return `delete ${missing('case', a.case_id)}`;
    return `delete the case ${quoted(c.name)} with its ${plural(c.source_count, 'linked source')}, ${plural(c.segment_count, 'passage')} and ${plural(c.attribute_count, 'attribute')} (the sources stay)`;
  },
  add_source_to_case: (repo, a) => `add ${the('source', sourceName(repo, a.source_id))} to ${the('case', caseName(repo, a.case_id))}`,
  add_segment_to_case: (repo, a) => {
    const text = passage(repo, a.source_id, startOf(a), endOf(a));
    return `add a passage of ${sourceName(repo, a.source_id, false)} to ${the('case', caseName(repo, a.case_id))}${text ? `: ${text}` : ''}`;
  },
  set_case_attribute: (repo, a) => `set ${quoted(str(a.attribute_name) ?? '')} of ${the('case', caseName(repo, a.case_id))} to ${JSON.stringify(a.value)}`,
  rename_case: (repo, a) => `rename ${the('case', caseName(repo, a.case_id))} to ${quoted(str(a.new_name) ?? '')}`,
  remove_source_from_case: (repo, a) =>
    `take ${the('source', sourceName(repo, a.source_id))} out of ${the('case', caseName(repo, a.case_id))} (the source stays)`,
  remove_case_attribute: (repo, a) => `remove ${quoted(str(a.attribute_name) ?? '')} from ${the('case', caseName(repo, a.case_id))}`,
  rename_case_attribute: (repo, a) => {
    const name = str(a.attribute_name) ?? '';
    const n = repo.listCaseAttributes().filter((x) => x.name === name).length;
    return `rename the case attribute ${quoted(name)} to ${quoted(str(a.new_name) ?? '')} (on ${plural(n, 'case')})`;
  },
  restore_snapshot: (_repo, a) => `restore the whole project to the snapshot ${String(a.ref).slice(0, 12)} (later changes are undone)`,
};

/** Which kind of thing an id argument names, by argument name (`parent_id` depends on the tool). */
function idKind(tool: string, key: string): 'code' | 'source' | 'category' | 'segment' | 'case' | 'folder' | undefined {
  if (key === 'code_id' || key === 'source_code_id' || key === 'target_code_id') return 'code';
  if (key === 'source_id') return 'source';
  if (key === 'category_id' || key === 'move_codes_to') return 'category';
  if (key === 'segment_id') return tool.includes('av') ? undefined : 'segment';
  if (key === 'case_id') return 'case';
  if (key === 'folder_id') return 'folder';
  if (key === 'parent_id') return tool.includes('folder') ? 'folder' : 'category';
  return undefined;
}

/** The generic form: "import data: format \"csv\", source_path \"/x.csv\"", ids given as the names they stand for. */
function generic(repo: ProjectRepository | undefined, tool: DescribedTool, a: Args): string {
  const parts = Object.entries(a).map(([k, v]) => {
    const kind = repo && typeof v === 'number' ? idKind(tool.name, k) : undefined;
    if (kind === 'code') return `${k.replace(/_id$/u, '').replace(/_/gu, ' ')} ${codeName(repo as ProjectRepository, v)}`;
    if (kind === 'source') return `source ${sourceName(repo as ProjectRepository, v)}`;
    if (kind === 'category') return `${k === 'move_codes_to' ? 'move codes to' : 'category'} ${categoryName(repo as ProjectRepository, v)}`;
    if (kind === 'segment') return coding(repo as ProjectRepository, v, 'in');
    if (kind === 'case') return `case ${caseName(repo as ProjectRepository, v)}`;
    if (kind === 'folder') return `folder ${folderName(repo as ProjectRepository, v)}`;
    const text = typeof v === 'string' ? JSON.stringify(shorten(v, MAX_EXCERPT)) : Array.isArray(v) ? plural(v.length, 'item') : JSON.stringify(v);
    return `${k.replace(/_/gu, ' ')} ${text !== undefined && text.length > 120 ? `${text.slice(0, 119)}…` : text}`;
  });
  const title = tool.title.toLowerCase();
  return parts.length > 0 ? `${title}: ${parts.join(', ')}` : title;
}

/**
 * The words of a request for the researcher: what the call would do, naming things by their names, as the
 * project `repo` is now (undefined when no project is open: the generic form without names). `args` is the
 * call's validated arguments object; `outcome`, when the pipeline dry-ran the call, what the run would do
 * (merge_codes, delete_code and delete_category count from its events). Never throws: a lookup that fails gives the generic form, and that
 * failing the tool's title. Passage excerpts are at most {@link MAX_EXCERPT} code points.
 */
export function describeRequest(repo: ProjectRepository | undefined, tool: DescribedTool, args: unknown, outcome?: RequestOutcome): string {
  const a = (args !== null && typeof args === 'object' && !Array.isArray(args) ? args : {}) as Args;
  const own = DESCRIBERS[tool.name];
  try {
    if (own && repo) return own(repo, a, outcome);
  } catch {
    // fall through to the generic form
  }
  try {
    return generic(repo, tool, a);
  } catch {
    return tool.title.toLowerCase();
  }
}
