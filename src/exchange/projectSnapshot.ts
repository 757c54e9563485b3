import { GuidResolver } from '../domain/exchangeIds';
import type { Folder, Segment } from '../domain/model';
import type {
  AvSegment,
  CaseAttribute,
  CaseSegment,
  CaseSourceLink,
  CaseWithCounts,
  CategoryWithCount,
  CodeWithCounts,
  ProjectRepository,
  SourceAttribute,
  SourceWithCounts,
} from '../domain/ports';

/**
 * One consistent, in-memory copy of a project for the exports (src/exchange/exports.ts, src/exchange/refiQda):
 * read synchronously in one go, so no write can fall between two of its reads, then rendered asynchronously.
 * Positions are code points of the stored texts; AV positions integer milliseconds; times ISO 8601 UTC.
 */

/** The repository reads a snapshot needs (the tool's `prepare` gets them as its reader). */
export type SnapshotReader = Pick<
  ProjectRepository,
  | 'listCodes'
  | 'listCategories'
  | 'listFolders'
  | 'listSources'
  | 'getSourceText'
  | 'listSegmentsForSource'
  | 'listAvSegmentsForSource'
  | 'listCases'
  | 'listCaseSources'
  | 'listCaseSegments'
  | 'listCaseAttributes'
  | 'listSourceAttributes'
  | 'listOrphans'
  | 'projectGuid'
  | 'listExchangeGuids'
  | 'listEntityGuids'
>;

/** A source with its stored text (null for media). */
export interface SnapshotSource extends SourceWithCounts {
  text: string | null;
}

/** The whole project as the exports see it; every list in a stable order (by name, then position). */
export interface ProjectSnapshot {
  /** the project's display name (its file name without `.qda`) */
  name: string;
  /** when the snapshot was taken, ISO 8601 UTC */
  taken_at: string;
  /** the coder who exports */
  user: string;
  codes: CodeWithCounts[];
  categories: CategoryWithCount[];
  folders: Folder[];
  sources: SnapshotSource[];
  /** text segments, by source (in `sources` order), then start, end, id */
  segments: Segment[];
  /** AV segments, by source, then start, end, id */
  av_segments: AvSegment[];
  cases: CaseWithCounts[];
  case_sources: CaseSourceLink[];
  case_segments: CaseSegment[];
  attributes: CaseAttribute[];
  /** document attributes (typed values of sources), by source_id then name */
  source_attributes: SourceAttribute[];
  /** segments set aside because their text could not be found again after an outside edit (never exported) */
  orphan_count: number;
  /** the GUIDs of the project's items (stored from imports, else derived) */
  guids: GuidResolver;
}

/**
 * Reads the whole project through `reader` (synchronously: one consistent state). `meta` names the project,
 * the time and the exporting coder.
 */
export function readProjectSnapshot(reader: SnapshotReader, meta: { name: string; now: string; user: string }): ProjectSnapshot {
  const sources = reader.listSources().map((s) => ({ ...s, text: reader.getSourceText(s.source_id) }));
  const segments: Segment[] = [];
  const av: AvSegment[] = [];
  for (const s of sources) {
    segments.push(...reader.listSegmentsForSource(s.source_id));
    av.push(...reader.listAvSegmentsForSource(s.source_id));
  }
  const cases = reader.listCases();
  const caseSources: CaseSourceLink[] = [];
  const caseSegments: CaseSegment[] = [];
  for (const c of cases) {
    caseSources.push(...reader.listCaseSources(c.case_id));
    caseSegments.push(...reader.listCaseSegments(c.case_id));
  }
  return {
    name: meta.name,
    taken_at: meta.now,
    user: meta.user,
    codes: reader.listCodes(),
    categories: reader.listCategories(),
    folders: reader.listFolders(),
    sources,
    segments,
    av_segments: av,
    cases,
    case_sources: caseSources,
    case_segments: caseSegments,
    attributes: reader.listCaseAttributes(),
    source_attributes: reader.listSourceAttributes(),
    orphan_count: reader.listOrphans().length,
    // an exchange GUID a REFI file gave wins over the entity's own GUID (which a copy of the project shares), which wins over the derived one
    guids: new GuidResolver(reader.projectGuid(), [...reader.listEntityGuids(), ...reader.listExchangeGuids()]),
  };
}

/** The category path of a code (`Parent / Child`), or '' when it has no category. */
export function categoryPath(snapshot: Pick<ProjectSnapshot, 'categories'>, categoryId: number | null): string {
  const byId = new Map(snapshot.categories.map((c) => [c.category_id, c]));
  const names: string[] = [];
  const seen = new Set<number>();
  for (let id = categoryId; id !== null && !seen.has(id);) {
    seen.add(id);
    const c = byId.get(id);
    if (!c) break;
    names.unshift(c.name);
    id = c.parent_id;
  }
  return names.join(' / ');
}
