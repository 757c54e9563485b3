/**
 * Retrieval of coded passages (issue 13, item 7): the passages coded with one or several codes, combined
 * with OR, AND (same source) or overlapping, narrowed by source, folder, case, document attribute, case
 * attribute and coder, each with its whole text, its source's name and where it is (the speaker of the turn
 * it starts in, and the paragraph number). One mechanism for the researcher's Retrieval view and the
 * `retrieve_segments` tool. Free of `vscode`.
 *
 * Positions count Unicode code points; ranges are half-open `[start, end)`: two ranges overlap when
 * `a.start < b.end && b.start < a.end` (touching ranges do not), as the co-occurrence report counts them.
 * Only text codings: audio/video codings have no text passage.
 *
 * The combinations, as desktop QDA tools name them (MAXQDA's "Complex Coding Query", NVivo's coding query,
 * QualCoder's "Code text" report with AND/OR):
 * - `or`: every segment of any of the codes;
 * - `and`: the segments of the codes, only in sources holding a segment of every one of them (AND within
 *   one source, as QualCoder's file-level AND);
 * - `overlap`: the places where a segment of every code overlaps the others; each passage spans the whole
 *   segments that take part (their union), not only the shared characters, so it reads as the passages the
 *   researcher coded. Passages that would overlap are merged into one.
 * In `or` and `and` segments of several codes on exactly the same range are one passage carrying every code.
 */
import { ToolError } from '../core/errors';
import { codePointLength, sliceCp } from '../core/text';
import { requireCase } from './cases';
import { requireCode } from './codebook';
import type { DomainContext } from './events';
import type { Segment } from './model';
import type { AttributeValue, ProjectRepository } from './ports';
import { requireFolder, requireSource } from './sources';
import { speakerTurns } from './speakers';

type Ctx = DomainContext<ProjectRepository>;

/** How several codes combine (see the module comment). */
export const RETRIEVAL_COMBINATIONS = ['or', 'and', 'overlap'] as const;
/** One of {@link RETRIEVAL_COMBINATIONS}. */
export type RetrievalCombination = (typeof RETRIEVAL_COMBINATIONS)[number];

/** What narrows a retrieval; every given field narrows further. */
export interface RetrievalFilters {
  /** only segments in these sources */
  source_ids?: readonly number[];
  /** only segments in sources of this folder or its sub-folders */
  folder_id?: number;
  /** only segments belonging to one of these cases (a linked source, or overlapping one of the case's ranges) */
  case_ids?: readonly number[];
  /** only segments in sources whose document attributes have these values (`{name: value}`, every pair; typed: 2 ≠ "2") */
  source_attributes?: Readonly<Record<string, AttributeValue>>;
  /** only segments belonging to a case whose attributes have these values (`{name: value}`, every pair; typed) */
  case_attributes?: Readonly<Record<string, AttributeValue>>;
  /** only segments coded by this coder (the segment owner, exact) */
  coder?: string;
}

/** A retrieval: the codes, how they combine, and the filters. */
export interface RetrievalQuery {
  /** one or more codes (duplicates ignored) */
  code_ids: readonly number[];
  /** default `or`; with one code every combination gives that code's passages */
  combine?: RetrievalCombination;
  filters?: RetrievalFilters;
}

/** A code as a passage carries it. */
export interface PassageCode {
  code_id: number;
  name: string;
  color: string;
}

/** One coded segment inside a passage. */
export interface PassageSegment {
  segment_id: number;
  code_id: number;
  start_pos: number;
  end_pos: number;
  /** the coder (segment owner) */
  owner: string;
  /** the coder's name and role (issue 14 item 1): `agent` marks an AI coding; null when unknown (from before roles) */
  coder: string;
  coder_role: 'researcher' | 'agent' | null;
  memo: string | null;
}

/**
 * One retrieved passage: its whole text, where it is, and the codings it is made of. `speaker` is the
 * speaker of the turn the passage starts in (the last speaker label at or before `start_pos`, by the spec's
 * detect_speakers rules, src/domain/speakers.ts), null when the source is not a transcript (fewer than two
 * labels) or the passage starts before the first label. `paragraph` is the 1-based number of the paragraph
 * (a run of non-blank lines; blank lines separate paragraphs) the passage starts in.
 */
export interface RetrievedPassage {
  source_id: number;
  source_name: string;
  /** code points, end exclusive */
  start_pos: number;
  end_pos: number;
  text: string;
  speaker: string | null;
  paragraph: number;
  /** the codes of the query found in this passage, in the query's order */
  codes: PassageCode[];
  /** the distinct coders of its segments, sorted */
  coders: string[];
  /** its segments, by position then id */
  segments: PassageSegment[];
}

/** The answer of {@link retrievePassages}. */
export interface RetrievalResult {
  combine: RetrievalCombination;
  /** the query's codes, in the order given (duplicates dropped) */
  codes: PassageCode[];
  /** in source order (by source name, then id), then by position */
  passages: RetrievedPassage[];
  /** distinct sources among the passages */
  source_count: number;
}

/**
 * Retrieves the passages of `query` (see the module comment for the combinations and
 * {@link RetrievedPassage} for speaker and paragraph). Reads only.
 * Errors: INVALID_ARGUMENTS (no code, an unknown combination), CODE_NOT_FOUND, SOURCE_NOT_FOUND,
 * FOLDER_NOT_FOUND, CASE_NOT_FOUND (an id that does not exist; the first one named).
 */
export function retrievePassages(ctx: Ctx, query: RetrievalQuery): RetrievalResult {
  const repo = ctx.repo;
  const codeIds = [...new Set(query.code_ids)];
  if (codeIds.length === 0) throw new ToolError('INVALID_ARGUMENTS', 'Give at least one code (code_ids)');
  const combine = query.combine ?? 'or';
  if (!RETRIEVAL_COMBINATIONS.includes(combine))
    throw new ToolError('INVALID_ARGUMENTS', `combine must be one of ${RETRIEVAL_COMBINATIONS.join(', ')} (got "${String(combine)}")`);
  const codes: PassageCode[] = codeIds.map((id) => {
    const c = requireCode(ctx, id);
    return { code_id: c.code_id, name: c.name, color: c.color };
  });
  const keep = segmentFilter(ctx, query.filters ?? {});

  // the filtered segments of each code, per source
  const bySource = new Map<number, Segment[]>();
  for (const id of codeIds) {
    for (const s of repo.listSegmentsForCode(id)) {
      if (!keep(s)) continue;
      let list = bySource.get(s.source_id);
      if (!list) bySource.set(s.source_id, (list = []));
      list.push(s);
    }
  }

  const codeById = new Map(codes.map((c) => [c.code_id, c]));
  const passages: RetrievedPassage[] = [];
  for (const [sourceId, segments] of bySource) {
    const present = new Set(segments.map((s) => s.code_id));
    if (combine !== 'or' && codeIds.some((id) => !present.has(id))) continue;
    const source = repo.getSource(sourceId);
    if (!source) continue;
    const groups = combine === 'overlap' ? overlapGroups(segments, codeIds) : sameRangeGroups(segments);
    if (groups.length === 0) continue;
    const text = repo.getSourceText(sourceId) ?? '';
    const locate = locator(text);
    for (const g of groups) {
      const start = Math.min(...g.map((s) => s.start_pos));
      const end = Math.max(...g.map((s) => s.end_pos));
      g.sort((a, b) => a.start_pos - b.start_pos || a.end_pos - b.end_pos || a.segment_id - b.segment_id);
      const at = locate(start);
      const same = g.every((s) => s.start_pos === start && s.end_pos === end);
      passages.push({
        source_id: sourceId,
        source_name: source.name,
        start_pos: start,
        end_pos: end,
        text: same ? g[0]!.text : sliceCp(text, start, end),
        speaker: at.speaker,
        paragraph: at.paragraph,
        codes: codes.filter((c) => g.some((s) => s.code_id === c.code_id)).map((c) => codeById.get(c.code_id)!),
        coders: [...new Set(g.map((s) => s.owner))].sort(),
        segments: g.map((s) => ({
          segment_id: s.segment_id,
          code_id: s.code_id,
          start_pos: s.start_pos,
          end_pos: s.end_pos,
          owner: s.owner,
          coder: s.owner,
          coder_role: s.coder_role ?? null,
          memo: s.memo,
        })),
      });
    }
  }
  passages.sort((a, b) => compareNames(a.source_name, b.source_name) || a.source_id - b.source_id || a.start_pos - b.start_pos || a.end_pos - b.end_pos);
  return { combine, codes, passages, source_count: new Set(passages.map((p) => p.source_id)).size };
}

/** Source names in reading order ("interview-2" before "interview-10"), case and accents aside; ties by code unit. */
const NAMES = new Intl.Collator('en', { numeric: true, sensitivity: 'base' });

function compareNames(a: string, b: string): number {
  return a === b ? 0 : NAMES.compare(a, b) || (a < b ? -1 : 1);
}

/** Segments on exactly the same range form one group. */
function sameRangeGroups(segments: readonly Segment[]): Segment[][] {
  const groups = new Map<string, Segment[]>();
  for (const s of segments) {
    const key = `${s.start_pos}:${s.end_pos}`;
    const g = groups.get(key);
    if (g) g.push(s);
    else groups.set(key, [s]);
  }
  return [...groups.values()];
}

/**
 * The overlap groups of one source: the regions where every code has a segment (the intersection of each
 * code's coverage), each with the segments that overlap it; groups sharing a segment or overlapping are
 * merged. Segments that take part in no such region are dropped.
 */
function overlapGroups(segments: readonly Segment[], codeIds: readonly number[]): Segment[][] {
  // regions covered by every code: intersect the codes' merged coverages one after the other
  let regions: { start: number; end: number }[] | null = null;
  for (const id of codeIds) {
    const cover = merge(segments.filter((s) => s.code_id === id).map((s) => ({ start: s.start_pos, end: s.end_pos })));
    regions = regions === null ? cover : intersect(regions, cover);
    if (regions.length === 0) return [];
  }
  // each region's segments (a binary search finds a segment's first region; regions are sorted and disjoint),
  // then groups whose spans overlap merge
  const rs = regions ?? [];
  const raw: Segment[][] = rs.map(() => []);
  for (const s of segments) {
    let lo = 0;
    let hi = rs.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (rs[mid]!.end <= s.start_pos) lo = mid + 1;
      else hi = mid;
    }
    for (let i = lo; i < rs.length && rs[i]!.start < s.end_pos; i++) raw[i]!.push(s);
  }
  const spans = raw
    .map((g) => ({ start: Math.min(...g.map((s) => s.start_pos)), end: Math.max(...g.map((s) => s.end_pos)), segs: g }))
    .sort((a, b) => a.start - b.start);
  const out: { end: number; segs: Map<number, Segment> }[] = [];
  for (const sp of spans) {
    const last = out[out.length - 1];
    if (last && sp.start < last.end) {
      last.end = Math.max(last.end, sp.end);
      for (const s of sp.segs) last.segs.set(s.segment_id, s);
    } else out.push({ end: sp.end, segs: new Map(sp.segs.map((s) => [s.segment_id, s])) });
  }
  return out.map((g) => [...g.segs.values()]);
}

/** Half-open ranges merged into sorted, disjoint ones (touching ranges join). */
function merge(ranges: { start: number; end: number }[]): { start: number; end: number }[] {
  const sorted = ranges.filter((r) => r.end > r.start).sort((a, b) => a.start - b.start);
  const out: { start: number; end: number }[] = [];
  for (const r of sorted) {
    const last = out[out.length - 1];
    if (last && r.start <= last.end) last.end = Math.max(last.end, r.end);
    else out.push({ ...r });
  }
  return out;
}

/** The intersection of two sorted lists of disjoint half-open ranges (empty intersections dropped). */
function intersect(a: readonly { start: number; end: number }[], b: readonly { start: number; end: number }[]): { start: number; end: number }[] {
  const out: { start: number; end: number }[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const start = Math.max(a[i]!.start, b[j]!.start);
    const end = Math.min(a[i]!.end, b[j]!.end);
    if (start < end) out.push({ start, end });
    if (a[i]!.end < b[j]!.end) i++;
    else j++;
  }
  return out;
}

/**
 * The predicate a segment must pass for `filters`, after checking every id.
 * Errors: SOURCE_NOT_FOUND, FOLDER_NOT_FOUND, CASE_NOT_FOUND.
 */
function segmentFilter(ctx: Ctx, f: RetrievalFilters): (s: Segment) => boolean {
  const repo = ctx.repo;
  const tests: ((s: Segment) => boolean)[] = [];
  if (f.source_ids && f.source_ids.length > 0) {
    for (const id of f.source_ids) requireSource(ctx, id);
    const ids = new Set(f.source_ids);
    tests.push((s) => ids.has(s.source_id));
  }
  if (f.folder_id !== undefined) {
    requireFolder(ctx, f.folder_id);
    const folders = new Set([f.folder_id]);
    const all = repo.listFolders();
    for (let grew = true; grew;) {
      grew = false;
      for (const x of all) {
        if (x.parent_id !== null && folders.has(x.parent_id) && !folders.has(x.folder_id)) {
          folders.add(x.folder_id);
          grew = true;
        }
      }
    }
    const inFolder = new Set(
      repo
        .listSources()
        .filter((s) => s.folder_id !== null && folders.has(s.folder_id))
        .map((s) => s.source_id),
    );
    tests.push((s) => inFolder.has(s.source_id));
  }
  if (f.case_ids && f.case_ids.length > 0) {
    for (const id of f.case_ids) requireCase(ctx, id);
    const ids = caseSegments(repo, f.case_ids);
    tests.push((s) => ids.has(s.segment_id));
  }
  const wantedSource = attributePairs(f.source_attributes);
  if (wantedSource.length > 0) {
    const values = new Map<number, Map<string, AttributeValue>>();
    for (const a of repo.listSourceAttributes()) {
      let m = values.get(a.source_id);
      if (!m) values.set(a.source_id, (m = new Map()));
      m.set(a.name, a.value);
    }
    const ok = new Set([...values].filter(([, m]) => wantedSource.every(([n, v]) => m.get(n) === v)).map(([id]) => id));
    tests.push((s) => ok.has(s.source_id));
  }
  const wantedCase = attributePairs(f.case_attributes);
  if (wantedCase.length > 0) {
    const values = new Map<number, Map<string, AttributeValue>>();
    for (const a of repo.listCaseAttributes()) {
      let m = values.get(a.case_id);
      if (!m) values.set(a.case_id, (m = new Map()));
      m.set(a.name, a.value);
    }
    const cases = [...values].filter(([, m]) => wantedCase.every(([n, v]) => m.get(n) === v)).map(([id]) => id);
    const ids = caseSegments(repo, cases);
    tests.push((s) => ids.has(s.segment_id));
  }
  const coder = f.coder?.trim();
  if (coder) tests.push((s) => s.owner === coder);
  return (s) => tests.every((t) => t(s));
}

/** `{name: value}` as pairs with names NFC-normalised and trimmed (as document attributes are stored). */
function attributePairs(a: Readonly<Record<string, AttributeValue>> | undefined): [string, AttributeValue][] {
  return Object.entries(a ?? {}).map(([n, v]) => [n.normalize('NFC').trim(), v]);
}

/** The text segment ids belonging to any of `caseIds` (repo.listCaseCodings). */
function caseSegments(repo: ProjectRepository, caseIds: readonly number[]): Set<number> {
  const out = new Set<number>();
  for (const id of caseIds) for (const k of repo.listCaseCodings(id)) if (k.kind === 'text') out.add(k.segment_id);
  return out;
}

/**
 * Where a position of `text` is: the speaker of the turn it is in and its paragraph number (see
 * {@link RetrievedPassage}). Built once per source; each lookup is a binary search.
 */
export function locator(text: string): (pos: number) => { speaker: string | null; paragraph: number } {
  const { turns } = speakerTurns(text);
  const labels = turns.length >= 2 ? turns : [];
  // paragraph starts in code points: the first non-blank line after the start or after a blank line
  const starts: number[] = [];
  let cp = 0;
  let blank = true;
  for (const line of text.split('\n')) {
    const isBlank = line.trim() === '';
    if (!isBlank && blank) starts.push(cp);
    blank = isBlank;
    cp += codePointLength(line) + 1;
  }
  const lastAtOrBefore = (xs: readonly number[], pos: number) => {
    let lo = 0;
    let hi = xs.length - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (xs[mid]! <= pos) {
        found = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found;
  };
  const labelStarts = labels.map((t) => t.start);
  return (pos) => {
    const t = lastAtOrBefore(labelStarts, pos);
    const p = lastAtOrBefore(starts, pos);
    return { speaker: t >= 0 ? labels[t]!.speaker : null, paragraph: Math.max(1, p + 1) };
  };
}

/** Words for how `combine` joins code names: "Water OR Trust", "Water AND Trust (same source)", "Water overlapping Trust". */
export const COMBINATION_WORDS: Readonly<Record<RetrievalCombination, { join: string; label: string }>> = {
  or: { join: ' OR ', label: 'any of the codes (OR)' },
  and: { join: ' AND ', label: 'all of the codes in the same source (AND)' },
  overlap: { join: ' overlapping ', label: 'codes overlapping each other' },
};

/**
 * A retrieval in words, for titles and exports: `title` joins the code names ("Water AND Trust"), `filters`
 * names each filter by what the researcher knows (source, folder and case names, `Site = Lagos`, coder), in
 * the order of {@link RetrievalFilters}. Unknown ids are named by their id (the query itself reports them).
 */
export function describeRetrieval(repo: ProjectRepository, query: RetrievalQuery): { title: string; filters: string[] } {
  const combine = query.combine ?? 'or';
  const names = [...new Set(query.code_ids)].map((id) => repo.getCode(id)?.name ?? `code ${id}`);
  const f = query.filters ?? {};
  const out: string[] = [];
  const value = (v: AttributeValue) => (typeof v === 'string' ? v : String(v));
  if (f.source_ids?.length)
    out.push(`${f.source_ids.length === 1 ? 'source' : 'sources'}: ${f.source_ids.map((id) => repo.getSource(id)?.name ?? `source ${id}`).join(', ')}`);
  if (f.folder_id !== undefined) out.push(`folder: ${repo.getFolder(f.folder_id)?.name ?? `folder ${f.folder_id}`} (with its sub-folders)`);
  if (f.case_ids?.length)
    out.push(`${f.case_ids.length === 1 ? 'case' : 'cases'}: ${f.case_ids.map((id) => repo.getCase(id)?.name ?? `case ${id}`).join(', ')}`);
  for (const [n, v] of Object.entries(f.source_attributes ?? {})) out.push(`document attribute ${n} = ${value(v)}`);
  for (const [n, v] of Object.entries(f.case_attributes ?? {})) out.push(`case attribute ${n} = ${value(v)}`);
  if (f.coder?.trim()) out.push(`coder: ${f.coder.trim()}`);
  return { title: names.join(COMBINATION_WORDS[combine].join), filters: out };
}

/** Where a passage is, in words: its speaker, else its paragraph ("ROSA", "¶ 3"). */
export function passagePlace(p: Pick<RetrievedPassage, 'speaker' | 'paragraph'>): string {
  return p.speaker ?? `¶ ${p.paragraph}`;
}
