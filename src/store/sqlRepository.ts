import type { EventRecord, EventType } from '../domain/events';
import type { Category, Code, Folder, Segment, SegmentMark, SourceInfo, SourceType } from '../domain/model';
import type {
  ApprovalRecord,
  CategoryWithCount,
  CodeWithCounts,
  NewCode,
  NewSegment,
  NewSource,
  ProjectRepository,
  SourceWithCounts,
  Stamp,
} from '../domain/ports';
import type {
  AttributeType,
  AttributeValue,
  CaseAttribute,
  CaseCoding,
  CaseRecord,
  CaseSegment,
  CaseSourceLink,
  CaseWithCounts,
  NewCaseSegment,
} from '../domain/ports';
import type { AvSegment, NewAvSegment } from '../domain/ports';
import type { SearchFilter, SearchSegment, SearchSourceHit, SearchSourceOffsets } from '../domain/ports';
import type { ExchangeGuid, ExchangeGuidKind } from '../domain/ports';
import type { SourceAttribute } from '../domain/ports';
import type { StoredBriefing } from '../domain/ports';
import type { CoderScope, StoredTeamSettings } from '../domain/ports';
import type { AgentAccessKind, AgentAccessRule, ClosedSourceRow } from '../domain/ports';
import type { MergeConflict, MergeConflictChoice, StoredMergeConflict } from '../domain/mergeConflicts';
import type { EntityRef, EntityVersion } from '../domain/ports';
import type { CodedRanges, ReportFilter, ReportRecord, ReportStatus, ReportType } from '../domain/ports';
import { ToolError } from '../core/errors';
import { nameKey } from '../domain/rules';
import { EventIdDeriver, payloadFromStored, payloadToStored, timestampFromStored, timestampToStored, uuidFromStored, uuidParams } from './eventRows';
import type {
  NewSuggestion,
  NewSuggestionBatch,
  SegmentProvenance,
  SuggestionBatchRecord,
  SuggestionDecision,
  SuggestionFilter,
  SuggestionKind,
  SuggestionRecord,
} from '../domain/ports';
import type { ProjectStore } from './projectStore';

const CODE_COLS = `c.id AS code_id, c.name, c.color, c.memo, c.category_id, c.owner, c.session_id, c.coder_role, c.created_at, c.updated_at, c.version,
  (SELECT count(*) FROM segments s WHERE s.code_id = c.id) AS segment_count,
  (SELECT count(*) FROM av_segments a WHERE a.code_id = c.id) AS av_segment_count`;

const SOURCE_COLS = `s.id AS source_id, s.name, s.type, s.memo, s.origin, s.file_path, s.mime, s.size_bytes, s.folder_id,
  s.content_length AS length, s.owner, s.session_id, s.coder_role, s.created_at,
  (SELECT count(*) FROM segments g WHERE g.source_id = s.id) AS segment_count,
  (SELECT count(*) FROM av_segments a WHERE a.source_id = s.id) AS av_segment_count`;

const SEGMENT_COLS = `id AS segment_id, code_id, source_id, start_pos, end_pos, text, memo, importance, owner, session_id, coder_role, created_at`;
/** A coder's codings (a CoderScope's role as `?`): a NULL role (from before roles) counts as the researcher's. */
const CODER_ROLE_MATCH = `(CASE WHEN coder_role = 'agent' THEN 'agent' ELSE 'researcher' END) = ?`;
/** {@link SEGMENT_COLS} without the text. */
const SEGMENT_MARK_COLS = `id AS segment_id, code_id, source_id, start_pos, end_pos, memo, importance, owner, session_id, coder_role, created_at`;

/** A row of `events` as stored since migration 9 (src/store/eventRows.ts). */
interface StoredEventRow {
  seq: number;
  event_id: string | null;
  event_type: string;
  timestamp: number | string;
  aggregate_type: string;
  aggregate_id: string;
  session_id: Uint8Array | string | null;
  client_type: string | null;
  user: string | null;
  correlation_id: Uint8Array | string | null;
  payload: string;
  /** migration 14: the coder's role, its name where it differs from `user`, an agent's client name and model */
  role?: string | null;
  coder?: string | null;
  client?: string | null;
  model?: string | null;
}

/** The `caused_by` of a stored event: the coder defaults to `user`; role, client and model only where stored (migration 14). */
function causedByFromRow(r: StoredEventRow): EventRecord['caused_by'] {
  const user = r.user ?? '';
  const out: EventRecord['caused_by'] = { session_id: uuidFromStored(r.session_id) ?? '', client_type: r.client_type ?? '', user };
  if (r.role === 'researcher' || r.role === 'agent') {
    out.role = r.role;
    out.coder = r.coder ?? user;
  }
  if (r.client) out.client = r.client;
  if (r.model) out.model = r.model;
  return out;
}

/** One fixed query per entity kind of {@link SqlProjectRepository.entityVersions}: the row's name (a segment has none), or no row. */
const ENTITY_NAME_SQL: Readonly<Record<EntityRef['kind'], string>> = {
  code: 'SELECT name FROM codes WHERE id = ?',
  category: 'SELECT name FROM categories WHERE id = ?',
  source: 'SELECT name FROM sources WHERE id = ?',
  segment: 'SELECT NULL AS name FROM segments WHERE id = ?',
};

/**
 * {@link ProjectRepository} over a {@link ProjectStore}: plain SQL on the schema of migrations.ts.
 * Writes must run inside `store.transaction`.
 */
export class SqlProjectRepository implements ProjectRepository {
  /**
   * The codebook as {@link listCodes} last read it, valid while the store's
   * {@link ProjectStore.writeGeneration} is still `generation` (any write, commit or rollback
   * invalidates it). The per-code counts are two correlated subqueries per code, about 0.4 ms for 50 codes
   * (bench/RESULTS.md); list_codes and the agent context read the codebook on most calls. The code
   * objects are frozen and shared between callers; each call gets a fresh array.
   */
  private codebook: { generation: number; list: readonly CodeWithCounts[]; byId: Map<number, CodeWithCounts> } | undefined;

  /** The categories as {@link listCategories} last read them, valid while the write generation is unchanged. */
  private categories: { generation: number; list: readonly CategoryWithCount[] } | undefined;

  constructor(private readonly db: ProjectStore) {}

  /** Every code with its segment counts, by name (case-insensitive). Served from a cache between writes. */
  listCodes(): CodeWithCounts[] {
    const generation = this.db.writeGeneration;
    let cb = this.codebook;
    if (cb?.generation !== generation) {
      const list = this.db.all<CodeWithCounts>(`SELECT ${CODE_COLS} FROM codes c ORDER BY c.name COLLATE NOCASE`).map((c) => Object.freeze(c));
      cb = { generation, list, byId: new Map(list.map((c) => [c.code_id, c])) };
      this.codebook = cb;
    }
    return [...cb.list];
  }
  /** One code with its counts (frozen when it comes from the codebook cache). */
  getCode(id: number): CodeWithCounts | undefined {
    const cb = this.codebook;
    if (cb?.generation === this.db.writeGeneration && Number.isInteger(id)) return cb.byId.get(id);
    return this.db.get<CodeWithCounts>(`SELECT ${CODE_COLS} FROM codes c WHERE c.id = ?`, [id]);
  }
  findCodeByKey(key: string): Code | undefined {
    return this.db.get<Code>(
      'SELECT id AS code_id, name, color, memo, category_id, owner, session_id, created_at, updated_at, version FROM codes WHERE name_key = ?',
      [key],
    );
  }
  insertCode(code: NewCode, key: string, st: Stamp): number {
    return this.db.run(
      'INSERT INTO codes(name, name_key, color, memo, category_id, owner, session_id, coder_role, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?)',
      [code.name, key, code.color, code.memo, code.category_id, st.owner, st.session_id, st.coder_role ?? null, st.now, st.now],
    ).lastId;
  }
  updateCode(id: number, fields: Partial<Pick<Code, 'name' | 'color' | 'memo' | 'category_id'>>, key: string | null, now: string): void {
    const { sets, params } = setClause(fields, key);
    sets.push('updated_at = ?', 'version = version + 1');
    params.push(now, id);
    this.db.run(`UPDATE codes SET ${sets.join(', ')} WHERE id = ?`, params);
  }
  deleteCode(id: number): void {
    this.db.run('DELETE FROM orphan_segments WHERE code_id = ?', [id]);
    this.db.run('DELETE FROM codes WHERE id = ?', [id]);
  }

  /**
   * Every category with its code count, by name (case-insensitive). Served from a cache between writes,
   * like {@link listCodes} (list_codes reads the categories on every call); the objects are frozen.
   */
  listCategories(): CategoryWithCount[] {
    const generation = this.db.writeGeneration;
    let cached = this.categories;
    if (cached?.generation !== generation) {
      const list = this.db
        .all<CategoryWithCount>(
          `SELECT k.id AS category_id, k.name, k.parent_id, k.memo, k.owner, k.created_at,
            (SELECT count(*) FROM codes c WHERE c.category_id = k.id) AS code_count
           FROM categories k ORDER BY k.name COLLATE NOCASE`,
        )
        .map((c) => Object.freeze(c));
      cached = { generation, list };
      this.categories = cached;
    }
    return [...cached.list];
  }
  getCategory(id: number): Category | undefined {
    return this.db.get<Category>('SELECT id AS category_id, name, parent_id, memo, owner, created_at FROM categories WHERE id = ?', [id]);
  }
  findCategoryByKey(key: string): Category | undefined {
    return this.db.get<Category>('SELECT id AS category_id, name, parent_id, memo, owner, created_at FROM categories WHERE name_key = ?', [key]);
  }
  insertCategory(name: string, key: string, parentId: number | null, memo: string | null, st: Stamp): number {
    return this.db.run('INSERT INTO categories(name, name_key, parent_id, memo, owner, session_id, coder_role, created_at) VALUES (?,?,?,?,?,?,?,?)', [
      name,
      key,
      parentId,
      memo,
      st.owner,
      st.session_id,
      st.coder_role ?? null,
      st.now,
    ]).lastId;
  }

  updateCategory(id: number, fields: Partial<Pick<Category, 'name' | 'memo' | 'parent_id'>>, key: string | null): void {
    const { sets, params } = setClause(fields, key);
    if (sets.length === 0) return;
    this.db.run(`UPDATE categories SET ${sets.join(', ')} WHERE id = ?`, [...params, id]);
  }
  deleteCategory(id: number): void {
    this.db.run('DELETE FROM categories WHERE id = ?', [id]);
  }

  listSegmentsForSource(sourceId: number): Segment[] {
    return this.db.all<Segment>(`SELECT ${SEGMENT_COLS} FROM segments WHERE source_id = ? ORDER BY start_pos, end_pos, id`, [sourceId]);
  }
  listSegmentMarksForSource(sourceId: number): SegmentMark[] {
    return this.db.all<SegmentMark>(`SELECT ${SEGMENT_MARK_COLS} FROM segments WHERE source_id = ? ORDER BY start_pos, end_pos, id`, [sourceId]);
  }
  listSegmentsForCode(codeId: number): Segment[] {
    return this.db.all<Segment>(`SELECT ${SEGMENT_COLS} FROM segments WHERE code_id = ? ORDER BY source_id, start_pos, id`, [codeId]);
  }
  getSegment(id: number): Segment | undefined {
    return this.db.get<Segment>(`SELECT ${SEGMENT_COLS} FROM segments WHERE id = ?`, [id]);
  }
  findSegment(codeId: number, sourceId: number, start: number, end: number, owner: string): Segment | undefined {
    return this.db.get<Segment>(`SELECT ${SEGMENT_COLS} FROM segments WHERE source_id = ? AND start_pos = ? AND end_pos = ? AND code_id = ? AND owner = ?`, [
      sourceId,
      start,
      end,
      codeId,
      owner,
    ]);
  }
  codingCodersOfCode(codeId: number): { owner: string; session_id: string | null; coder_role: 'researcher' | 'agent' | null; count: number }[] {
    return this.db.all(
      `SELECT owner, session_id, coder_role, sum(n) AS count FROM (
         SELECT owner, session_id, coder_role, count(*) AS n FROM segments WHERE code_id = ? GROUP BY owner, session_id, coder_role
         UNION ALL
         SELECT owner, session_id, coder_role, count(*) AS n FROM av_segments WHERE code_id = ? GROUP BY owner, session_id, coder_role)
       GROUP BY owner, session_id, coder_role ORDER BY count DESC, owner`,
      [codeId, codeId],
    );
  }
  insertSegment(seg: NewSegment, st: Stamp): number {
    return this.db.run(
      'INSERT INTO segments(code_id, source_id, start_pos, end_pos, text, memo, importance, owner, session_id, coder_role, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)',
      [
        seg.code_id,
        seg.source_id,
        seg.start_pos,
        seg.end_pos,
        seg.text,
        seg.memo,
        seg.importance,
        st.owner,
        st.session_id,
        st.coder_role ?? null,
        st.now,
        st.now,
      ],
    ).lastId;
  }
  setSegmentMemo(id: number, memo: string | null, now: string): void {
    this.db.run('UPDATE segments SET memo = ?, updated_at = ? WHERE id = ?', [memo, now, id]);
  }
  deleteSegment(id: number): void {
    this.db.run('DELETE FROM segments WHERE id = ?', [id]);
  }
  reassignSegments(fromCode: number, toCode: number, now: string): number {
    const a = this.db.run('UPDATE segments SET code_id = ?, updated_at = ? WHERE code_id = ?', [toCode, now, fromCode]).changes;
    const b = this.db.run('UPDATE av_segments SET code_id = ?, updated_at = ? WHERE code_id = ?', [toCode, now, fromCode]).changes;
    this.db.run('UPDATE orphan_segments SET code_id = ? WHERE code_id = ?', [toCode, fromCode]);
    return a + b;
  }
  dedupeSegments(codeId: number): number {
    const a = this.db.run(
      `DELETE FROM segments WHERE code_id = ? AND id NOT IN
        (SELECT min(id) FROM segments WHERE code_id = ? GROUP BY source_id, start_pos, end_pos)`,
      [codeId, codeId],
    ).changes;
    const b = this.db.run(
      `DELETE FROM av_segments WHERE code_id = ? AND id NOT IN
        (SELECT min(id) FROM av_segments WHERE code_id = ? GROUP BY source_id, start_ms, end_ms)`,
      [codeId, codeId],
    ).changes;
    return a + b;
  }
  deleteSegmentsOfCode(codeId: number): number {
    return this.db.run('DELETE FROM segments WHERE code_id = ?', [codeId]).changes + this.db.run('DELETE FROM av_segments WHERE code_id = ?', [codeId]).changes;
  }
  deleteSegmentsOfSource(sourceId: number): number {
    return (
      this.db.run('DELETE FROM segments WHERE source_id = ?', [sourceId]).changes +
      this.db.run('DELETE FROM av_segments WHERE source_id = ?', [sourceId]).changes
    );
  }

  listSources(type?: SourceType): SourceWithCounts[] {
    return type
      ? this.db.all<SourceWithCounts>(`SELECT ${SOURCE_COLS} FROM sources s WHERE s.type = ? ORDER BY s.name COLLATE NOCASE`, [type])
      : this.db.all<SourceWithCounts>(`SELECT ${SOURCE_COLS} FROM sources s ORDER BY s.name COLLATE NOCASE`);
  }
  getSource(id: number): SourceWithCounts | undefined {
    return this.db.get<SourceWithCounts>(`SELECT ${SOURCE_COLS} FROM sources s WHERE s.id = ?`, [id]);
  }
  getSourceText(id: number): string | null {
    const row = this.db.get<{ content: string | null }>('SELECT content FROM sources WHERE id = ?', [id]);
    return row?.content ?? null;
  }
  findSourceByName(name: string): SourceInfo | undefined {
    // Source names are unique by nameKey (NFC, trimmed, case-insensitive), as code and category names are:
    // the exact name first (the UNIQUE index), else every name compared by its key (names only, no content).
    const exact = this.db.get<SourceInfo>(`SELECT s.id AS source_id, s.name, s.type FROM sources s WHERE s.name = ?`, [name]);
    if (exact) return exact;
    const key = nameKey(name);
    return this.db.all<SourceInfo>(`SELECT s.id AS source_id, s.name, s.type FROM sources s ORDER BY s.id`).find((s) => nameKey(s.name) === key);
  }
  findSourceByPath(filePath: string): SourceInfo | undefined {
    return this.db.get<SourceInfo>(`SELECT s.id AS source_id, s.name, s.type, s.file_path FROM sources s WHERE s.file_path = ? ORDER BY s.id LIMIT 1`, [
      filePath,
    ]);
  }
  insertSource(src: NewSource, st: Stamp): number {
    return this.db.run(
      `INSERT INTO sources(name, type, content, content_length, memo, origin, file_path, mime, size_bytes, folder_id, owner, session_id, coder_role, created_at, updated_at)
       VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
      [
        src.name,
        src.type,
        src.text,
        src.length,
        src.memo,
        src.origin,
        src.file_path,
        src.mime,
        src.size_bytes,
        src.folder_id,
        st.owner,
        st.session_id,
        st.coder_role ?? null,
        st.now,
        st.now,
      ],
    ).lastId;
  }
  deleteSource(id: number): void {
    this.db.run('DELETE FROM source_metadata_hints WHERE source_id = ?', [id]);
    this.db.run('DELETE FROM orphan_segments WHERE source_id = ?', [id]);
    this.db.run('DELETE FROM source_attributes WHERE source_id = ?', [id]);
    this.db.run('DELETE FROM sources WHERE id = ?', [id]);
    // cases: the source's memberships go with it (the foreign keys cascade too; this keeps it explicit)
    this.db.run('DELETE FROM case_sources WHERE source_id = ?', [id]);
    this.db.run('DELETE FROM case_segments WHERE source_id = ?', [id]);
  }
  setSourceFolder(id: number, folderId: number | null, now: string): void {
    this.db.run('UPDATE sources SET folder_id = ?, updated_at = ? WHERE id = ?', [folderId, now, id]);
  }
  insertMetadataHint(sourceId: number, hint: { language: string | null; topics: string[] | null; organization_suggestion: string | null }, st: Stamp): number {
    return this.db.run(
      'INSERT INTO source_metadata_hints(source_id, language, topics, organization_suggestion, owner, session_id, created_at) VALUES (?,?,?,?,?,?,?)',
      [sourceId, hint.language, hint.topics ? JSON.stringify(hint.topics) : null, hint.organization_suggestion, st.owner, st.session_id, st.now],
    ).lastId;
  }

  listFolders(): (Folder & { source_count: number })[] {
    return this.db.all<Folder & { source_count: number }>(
      `SELECT f.id AS folder_id, f.name, f.parent_id, f.owner, f.created_at,
        (SELECT count(*) FROM sources s WHERE s.folder_id = f.id) AS source_count
       FROM folders f ORDER BY f.name COLLATE NOCASE`,
    );
  }
  getFolder(id: number): Folder | undefined {
    return this.db.get<Folder>('SELECT id AS folder_id, name, parent_id, owner, created_at FROM folders WHERE id = ?', [id]);
  }
  findFolder(parentId: number | null, name: string): Folder | undefined {
    return this.db.get<Folder>('SELECT id AS folder_id, name, parent_id, owner, created_at FROM folders WHERE COALESCE(parent_id, 0) = ? AND name = ?', [
      parentId ?? 0,
      name,
    ]);
  }
  insertFolder(name: string, parentId: number | null, st: Stamp): number {
    return this.db.run('INSERT INTO folders(name, parent_id, owner, created_at) VALUES (?,?,?,?)', [name, parentId, st.owner, st.now]).lastId;
  }
  renameFolder(id: number, name: string): void {
    this.db.run('UPDATE folders SET name = ? WHERE id = ?', [name, id]);
  }
  deleteFolder(id: number): void {
    this.db.run('DELETE FROM folders WHERE id = ?', [id]);
  }
  folderContents(id: number): { sources: number; folders: number } {
    const r = this.db.get<{ sources: number; folders: number }>(
      'SELECT (SELECT count(*) FROM sources WHERE folder_id = ?) AS sources, (SELECT count(*) FROM folders WHERE parent_id = ?) AS folders',
      [id, id],
    );
    return r ?? { sources: 0, folders: 0 };
  }

  spliceSourceText(id: number, start: number, end: number, text: string, insertedLength: number, now: string): void {
    // SQLite's substr() counts characters (code points) of TEXT values, as Marginalia's positions do.
    this.db.run(
      'UPDATE sources SET content = substr(content, 1, ?) || ? || substr(content, ?), content_length = content_length - ? + ?, updated_at = ? WHERE id = ?',
      [start, text, end + 1, end - start, insertedLength, now, id],
    );
  }
  replaceSourceText(id: number, text: string, length: number, now: string): void {
    this.db.run('UPDATE sources SET content = ?, content_length = ?, updated_at = ? WHERE id = ?', [text, length, now, id]);
  }
  shiftSegments(sourceId: number, from: number, delta: number): number {
    if (delta === 0) return 0;
    return this.db.run('UPDATE segments SET start_pos = start_pos + ?, end_pos = end_pos + ? WHERE source_id = ? AND start_pos >= ?', [
      delta,
      delta,
      sourceId,
      from,
    ]).changes;
  }
  segmentsOverlapping(sourceId: number, start: number, end: number): Segment[] {
    return this.db.all<Segment>(`SELECT ${SEGMENT_COLS} FROM segments WHERE source_id = ? AND start_pos < ? AND end_pos > ? ORDER BY start_pos, id`, [
      sourceId,
      end,
      start,
    ]);
  }
  updateSegmentRange(id: number, start: number, end: number, text: string, now: string): void {
    this.db.run('UPDATE segments SET start_pos = ?, end_pos = ?, text = ?, updated_at = ? WHERE id = ?', [start, end, text, now, id]);
  }
  orphanSegment(seg: Segment, reason: string, now: string): number {
    const id = this.db.run(
      `INSERT INTO orphan_segments(segment_id, code_id, source_id, start_pos, end_pos, text, memo, importance, owner, session_id, created_at, orphaned_at, reason)
       VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)`,
      [
        seg.segment_id,
        seg.code_id,
        seg.source_id,
        seg.start_pos,
        seg.end_pos,
        seg.text,
        seg.memo,
        seg.importance,
        seg.owner,
        seg.session_id,
        seg.created_at,
        now,
        reason,
      ],
    ).lastId;
    this.db.run('DELETE FROM segments WHERE id = ?', [seg.segment_id]);
    return id;
  }
  listOrphans(sourceId?: number): (Segment & { orphan_id: number; reason: string; orphaned_at: string })[] {
    const cols = `id AS orphan_id, segment_id, code_id, source_id, start_pos, end_pos, text, memo, importance, owner, session_id, created_at, orphaned_at, reason`;
    return sourceId === undefined
      ? this.db.all(`SELECT ${cols} FROM orphan_segments ORDER BY source_id, start_pos`)
      : this.db.all(`SELECT ${cols} FROM orphan_segments WHERE source_id = ? ORDER BY start_pos`, [sourceId]);
  }

  insertApproval(a: ApprovalRecord): void {
    this.db.run(
      `INSERT INTO approval_requests(request_id, tool, arguments, session_id, client_type, client_name, user, trust_level, description, status, created_at, expires_at, decided_at, decided_by, reason, result, error_code, read_versions)
       VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
      [
        a.request_id,
        a.tool,
        a.arguments,
        a.session_id,
        a.client_type,
        a.client_name,
        a.user,
        a.trust_level,
        a.description,
        a.status,
        a.created_at,
        a.expires_at,
        a.decided_at,
        a.decided_by,
        a.reason,
        a.result,
        a.error_code,
        a.read_versions ?? null,
      ],
    );
  }
  getApproval(requestId: string): ApprovalRecord | undefined {
    return this.db.get<ApprovalRecord>('SELECT * FROM approval_requests WHERE request_id = ?', [requestId]);
  }
  listApprovals(status?: ApprovalRecord['status'], limit = 1000): ApprovalRecord[] {
    return status
      ? this.db.all<ApprovalRecord>('SELECT * FROM approval_requests WHERE status = ? ORDER BY created_at, request_id LIMIT ?', [status, limit])
      : this.db.all<ApprovalRecord>('SELECT * FROM approval_requests ORDER BY created_at, request_id LIMIT ?', [limit]);
  }
  decideApproval(
    requestId: string,
    d: Pick<ApprovalRecord, 'status' | 'decided_at' | 'decided_by' | 'decided_by_coder' | 'decided_by_role' | 'reason' | 'result' | 'error_code' | 'arguments'>,
  ): void {
    this.db.run(
      'UPDATE approval_requests SET status = ?, decided_at = ?, decided_by = ?, decided_by_coder = ?, decided_by_role = ?, reason = ?, result = ?, error_code = ?, arguments = ? WHERE request_id = ?',
      [d.status, d.decided_at, d.decided_by, d.decided_by_coder ?? null, d.decided_by_role ?? null, d.reason, d.result, d.error_code, d.arguments, requestId],
    );
  }
  listEventsSince(afterSeq: number, limit: number): EventRecord[] {
    return this.db.all<StoredEventRow>('SELECT * FROM events WHERE seq > ? ORDER BY seq LIMIT ?', [afterSeq, limit]).map((r) => this.eventFromRow(r));
  }
  listEventsByCorrelation(correlationId: string): EventRecord[] {
    return this.db
      .all<StoredEventRow>('SELECT * FROM events WHERE correlation_id = coalesce(unhex(?), ?) ORDER BY seq', uuidParams(correlationId))
      .map((r) => this.eventFromRow(r));
  }
  listUndoHistoryBefore(clientType: string, user: string, beforeSeq: number, limit: number): EventRecord[] {
    // backwards along the primary key: the scan stops after `limit` matches; text edits are left out unread
    // (a payload stored as an array of a shape has no reason: json_extract gives NULL)
    return this.db
      .all<StoredEventRow>(
        `SELECT * FROM events WHERE seq < ? AND client_type = ? AND user = ?
           AND event_type NOT IN ('source.text_edited', 'source.text_reconciled')
           AND NOT (event_type = 'coding.segment_uncoded' AND substr(payload, 1, 1) = '{' AND json_extract(payload, '$.reason') IS 'text deleted')
         ORDER BY seq DESC LIMIT ?`,
        [beforeSeq, clientType, user, limit],
      )
      .map((r) => this.eventFromRow(r));
  }
  findSessionConnected(sessionId: string, beforeSeq: number): EventRecord | undefined {
    const r = this.db.get<StoredEventRow>(
      "SELECT * FROM events WHERE seq < ? AND event_type = 'session.connected' AND aggregate_id = ? ORDER BY seq DESC LIMIT 1",
      [beforeSeq, sessionId],
    );
    return r ? this.eventFromRow(r) : undefined;
  }
  lastEventSeq(): number {
    return Number(this.db.get<{ n: number | null }>('SELECT max(seq) AS n FROM events')?.n ?? 0);
  }

  /** Versions of `refs` (migration 13): 1 + the changes the triggers counted; null for an entity that does not exist. */
  entityVersions(refs: readonly EntityRef[]): EntityVersion[] {
    return refs.map((r) => {
      const row = this.db.get<{ name: string | null }>(ENTITY_NAME_SQL[r.kind], [r.id]);
      if (!row) return { kind: r.kind, id: r.id, version: null, name: null };
      const v = this.db.get<{ version: number }>('SELECT version FROM entity_versions WHERE kind = ? AND id = ?', [r.kind, r.id]);
      return { kind: r.kind, id: r.id, version: v?.version ?? 1, name: row.name };
    });
  }

  insertEvent(e: EventRecord): { seq: number; event_id: string } {
    // the stored form (migration 9, src/store/eventRows.ts): no event id, the timestamp as milliseconds,
    // UUIDs as 16 bytes, frequent payloads as arrays of values
    const seq = this.db.run(
      `INSERT INTO events(event_type, timestamp, aggregate_type, aggregate_id, session_id, client_type, user, correlation_id, payload, role, coder, client, model)
       VALUES (?,?,?,?,coalesce(unhex(?), ?),?,?,coalesce(unhex(?), ?),?,?,?,?,?)`,
      [
        e.event_type,
        timestampToStored(e.timestamp),
        e.aggregate_type,
        e.aggregate_id,
        ...uuidParams(e.caused_by.session_id),
        e.caused_by.client_type,
        e.caused_by.user,
        ...uuidParams(e.metadata.correlation_id),
        payloadToStored(e.payload),
        e.caused_by.role ?? null,
        e.caused_by.coder !== undefined && e.caused_by.coder !== e.caused_by.user ? e.caused_by.coder : null,
        e.caused_by.client ?? null,
        e.caused_by.model ?? null,
      ],
    ).lastId;
    return { seq, event_id: this.eventIds().eventId(seq) };
  }

  /** An `events` row as the envelope it was stored from. */
  private eventFromRow(r: StoredEventRow): EventRecord {
    return {
      event_id: r.event_id ?? this.eventIds().eventId(r.seq),
      event_type: r.event_type as EventType,
      timestamp: timestampFromStored(r.timestamp),
      aggregate_type: r.aggregate_type,
      aggregate_id: r.aggregate_id,
      caused_by: causedByFromRow(r),
      payload: payloadFromStored(r.payload),
      metadata: { correlation_id: uuidFromStored(r.correlation_id) ?? '', sequence_number: r.seq },
    };
  }

  private eventIdDeriver: EventIdDeriver | undefined;
  /** Derives stored events' ids (the project GUID never changes, so it is read once). */
  private eventIds(): EventIdDeriver {
    return (this.eventIdDeriver ??= new EventIdDeriver(this.projectGuid()));
  }

  counts(): { sources: number; codes: number; categories: number; segments: number; av_segments: number; folders: number } {
    const r = this.db.get<{ sources: number; codes: number; categories: number; segments: number; av_segments: number; folders: number }>(
      `SELECT (SELECT count(*) FROM sources) AS sources, (SELECT count(*) FROM codes) AS codes,
        (SELECT count(*) FROM categories) AS categories, (SELECT count(*) FROM segments) AS segments,
        (SELECT count(*) FROM av_segments) AS av_segments, (SELECT count(*) FROM folders) AS folders`,
    );
    if (!r) throw new Error('count query returned nothing');
    return r;
  }

  // cases
  listCases(): CaseWithCounts[] {
    return this.db.all<CaseWithCounts>(`SELECT ${CASE_COLS} FROM cases k ORDER BY k.name COLLATE NOCASE, k.id`);
  }
  getCase(id: number): CaseWithCounts | undefined {
    return this.db.get<CaseWithCounts>(`SELECT ${CASE_COLS} FROM cases k WHERE k.id = ?`, [id]);
  }
  findCaseByKey(key: string): CaseRecord | undefined {
    return this.db.get<CaseRecord>('SELECT id AS case_id, name, memo, owner, session_id, created_at, updated_at FROM cases WHERE name_key = ?', [key]);
  }
  insertCase(name: string, key: string, memo: string | null, st: Stamp): number {
    return this.db.run('INSERT INTO cases(name, name_key, memo, owner, session_id, created_at, updated_at) VALUES (?,?,?,?,?,?,?)', [
      name,
      key,
      memo,
      st.owner,
      st.session_id,
      st.now,
      st.now,
    ]).lastId;
  }
  touchCase(id: number, now: string): void {
    this.db.run('UPDATE cases SET updated_at = ? WHERE id = ?', [now, id]);
  }
  renameCase(id: number, name: string, key: string, now: string): void {
    this.db.run('UPDATE cases SET name = ?, name_key = ?, updated_at = ? WHERE id = ?', [name, key, now, id]);
  }
  deleteCase(id: number): void {
    this.db.run('DELETE FROM case_attributes WHERE case_id = ?', [id]);
    this.db.run('DELETE FROM case_segments WHERE case_id = ?', [id]);
    this.db.run('DELETE FROM case_sources WHERE case_id = ?', [id]);
    this.db.run('DELETE FROM cases WHERE id = ?', [id]);
  }
  listCaseSources(caseId: number): CaseSourceLink[] {
    return this.db.all<CaseSourceLink>(
      `SELECT m.case_id, m.source_id, s.name, s.type, m.owner, m.session_id, m.created_at
       FROM case_sources m JOIN sources s ON s.id = m.source_id WHERE m.case_id = ? ORDER BY s.name COLLATE NOCASE, s.id`,
      [caseId],
    );
  }
  insertCaseSource(caseId: number, sourceId: number, st: Stamp): boolean {
    // read first, so linking again journals no statement at all
    if (this.db.get('SELECT 1 AS x FROM case_sources WHERE case_id = ? AND source_id = ?', [caseId, sourceId])) return false;
    this.db.run('INSERT INTO case_sources(case_id, source_id, owner, session_id, created_at) VALUES (?,?,?,?,?)', [
      caseId,
      sourceId,
      st.owner,
      st.session_id,
      st.now,
    ]);
    return true;
  }
  deleteCaseSource(caseId: number, sourceId: number): boolean {
    // read first, so unlinking an absent link journals no statement
    if (!this.db.get('SELECT 1 AS x FROM case_sources WHERE case_id = ? AND source_id = ?', [caseId, sourceId])) return false;
    this.db.run('DELETE FROM case_sources WHERE case_id = ? AND source_id = ?', [caseId, sourceId]);
    return true;
  }
  listCaseSegments(caseId: number): CaseSegment[] {
    return this.db.all<CaseSegment>(
      `SELECT ${CASE_SEGMENT_COLS} WHERE g.case_id = ? ORDER BY s.name COLLATE NOCASE, g.source_id, g.start_pos, g.end_pos, g.id`,
      [caseId],
    );
  }
  listCaseSegmentsOfSource(sourceId: number): CaseSegment[] {
    return this.db.all<CaseSegment>(`SELECT ${CASE_SEGMENT_COLS} WHERE g.source_id = ? ORDER BY g.start_pos, g.id`, [sourceId]);
  }
  updateCaseSegmentRange(id: number, start: number, end: number, text: string): void {
    this.db.run('UPDATE case_segments SET start_pos = ?, end_pos = ?, text = ? WHERE id = ?', [start, end, text, id]);
  }
  deleteCaseSegment(id: number): void {
    this.db.run('DELETE FROM case_segments WHERE id = ?', [id]);
  }
  getCaseSegment(id: number): CaseSegment | undefined {
    return this.db.get<CaseSegment>(`SELECT ${CASE_SEGMENT_COLS} WHERE g.id = ?`, [id]);
  }
  findCaseSegment(caseId: number, sourceId: number, start: number, end: number): CaseSegment | undefined {
    return this.db.get<CaseSegment>(`SELECT ${CASE_SEGMENT_COLS} WHERE g.case_id = ? AND g.source_id = ? AND g.start_pos = ? AND g.end_pos = ?`, [
      caseId,
      sourceId,
      start,
      end,
    ]);
  }
  insertCaseSegment(seg: NewCaseSegment, st: Stamp): number {
    return this.db.run('INSERT INTO case_segments(case_id, source_id, start_pos, end_pos, text, owner, session_id, created_at) VALUES (?,?,?,?,?,?,?,?)', [
      seg.case_id,
      seg.source_id,
      seg.start_pos,
      seg.end_pos,
      seg.text,
      st.owner,
      st.session_id,
      st.now,
    ]).lastId;
  }
  deleteCaseAttribute(caseId: number, name: string): boolean {
    if (!this.db.get('SELECT 1 AS x FROM case_attributes WHERE case_id = ? AND name = ?', [caseId, name])) return false;
    this.db.run('DELETE FROM case_attributes WHERE case_id = ? AND name = ?', [caseId, name]);
    return true;
  }
  listCaseAttributes(caseId?: number): CaseAttribute[] {
    const rows =
      caseId === undefined
        ? this.db.all<AttributeRow>(`SELECT ${ATTRIBUTE_COLS} FROM case_attributes ORDER BY case_id, name`)
        : this.db.all<AttributeRow>(`SELECT ${ATTRIBUTE_COLS} FROM case_attributes WHERE case_id = ? ORDER BY name`, [caseId]);
    return rows.map(attributeOf);
  }
  setCaseAttribute(caseId: number, name: string, type: AttributeType, value: AttributeValue, now: string): void {
    this.db.run(
      `INSERT INTO case_attributes(case_id, name, type, value_text, value_number, value_date, value_boolean, updated_at) VALUES (?,?,?,?,?,?,?,?)
       ON CONFLICT(case_id, name) DO UPDATE SET type = excluded.type, value_text = excluded.value_text, value_number = excluded.value_number,
         value_date = excluded.value_date, value_boolean = excluded.value_boolean, updated_at = excluded.updated_at`,
      [
        caseId,
        name,
        type,
        type === 'text' ? String(value) : null,
        type === 'number' ? Number(value) : null,
        type === 'date' ? String(value) : null,
        type === 'boolean' ? (value === true ? 1 : 0) : null,
        now,
      ],
    );
  }
  listCaseCodings(caseId: number): CaseCoding[] {
    return this.db.all<CaseCoding>(
      `SELECT 'text' AS kind, s.id AS segment_id, s.code_id, s.source_id FROM segments s
         WHERE s.source_id IN (SELECT source_id FROM case_sources WHERE case_id = ?)
       UNION
       SELECT 'text' AS kind, s.id AS segment_id, s.code_id, s.source_id FROM segments s
         JOIN case_segments g ON g.source_id = s.source_id AND s.start_pos < g.end_pos AND s.end_pos > g.start_pos
         WHERE g.case_id = ?
       UNION
       SELECT 'av' AS kind, a.id AS segment_id, a.code_id, a.source_id FROM av_segments a
         WHERE a.source_id IN (SELECT source_id FROM case_sources WHERE case_id = ?)
       ORDER BY kind DESC, segment_id`,
      [caseId, caseId, caseId],
    );
  }

  // AV segments (integer milliseconds, half-open)
  listAvSegmentsForSource(sourceId: number): AvSegment[] {
    return this.db.all<AvSegment>(`SELECT ${AV_SEGMENT_COLS} FROM av_segments WHERE source_id = ? ORDER BY start_ms, end_ms, id`, [sourceId]);
  }
  getAvSegment(id: number): AvSegment | undefined {
    return this.db.get<AvSegment>(`SELECT ${AV_SEGMENT_COLS} FROM av_segments WHERE id = ?`, [id]);
  }
  avSegmentsOverlapping(codeId: number, sourceId: number, startMs: number, endMs: number): AvSegment[] {
    return this.db.all<AvSegment>(
      `SELECT ${AV_SEGMENT_COLS} FROM av_segments WHERE source_id = ? AND code_id = ? AND start_ms < ? AND end_ms > ? ORDER BY start_ms, end_ms, id`,
      [sourceId, codeId, endMs, startMs],
    );
  }
  insertAvSegment(seg: NewAvSegment, st: Stamp): number {
    return this.db.run(
      'INSERT INTO av_segments(code_id, source_id, start_ms, end_ms, transcript, memo, owner, session_id, coder_role, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)',
      [seg.code_id, seg.source_id, seg.start_ms, seg.end_ms, seg.transcript, seg.memo, st.owner, st.session_id, st.coder_role ?? null, st.now, st.now],
    ).lastId;
  }
  deleteAvSegment(id: number): void {
    this.db.run('DELETE FROM av_segments WHERE id = ?', [id]);
  }

  // search (migration 5). Every statement has a fixed text (lists travel as one JSON parameter through
  // json_each), so the store's statement cache stays small.
  /** Decoded embedding vectors by `model\ntext_hash`; entries never change once cached (content-addressed). */
  private readonly vectorMemo = new Map<string, Float32Array>();

  searchTokenize(text: string): string[] {
    return this.db.all<{ token: string }>('SELECT token FROM search_tokenizer WHERE input = ? ORDER BY position', [text]).map((r) => r.token);
  }
  searchSourceHits(match: string, filter: SearchFilter): SearchSourceHit[] {
    const rows = ftsQuery(() =>
      hasSourceFilter(filter)
        ? this.db.all<{ source_id: number; mi: Uint8Array }>(
            `SELECT source_fts.docid AS source_id, matchinfo(source_fts, 'y') AS mi FROM source_fts JOIN sources s ON s.id = source_fts.docid
             WHERE source_fts MATCH ? AND ${SOURCE_FILTER} ORDER BY source_fts.docid`,
            [match, ...sourceFilterParams(filter)],
          )
        : this.db.all<{ source_id: number; mi: Uint8Array }>(
            `SELECT docid AS source_id, matchinfo(source_fts, 'y') AS mi FROM source_fts WHERE source_fts MATCH ? ORDER BY docid`,
            [match],
          ),
    );
    return rows.map((r) => ({ source_id: r.source_id, hits: sumUint32s(r.mi) }));
  }
  searchSourceOffsets(match: string, sourceIds: readonly number[]): SearchSourceOffsets[] {
    if (sourceIds.length === 0) return [];
    return ftsQuery(() =>
      this.db.all<SearchSourceOffsets>(
        `SELECT source_fts.docid AS source_id, s.name AS name, s.content AS content, s.content_length AS length, offsets(source_fts) AS offsets
         FROM source_fts JOIN sources s ON s.id = source_fts.docid
         WHERE source_fts MATCH ? AND source_fts.docid BETWEEN ? AND ? AND source_fts.docid IN (SELECT value FROM json_each(?))
         ORDER BY source_fts.docid`,
        [match, Math.min(...sourceIds), Math.max(...sourceIds), JSON.stringify(sourceIds)],
      ),
    );
  }
  getSourceTextsForSearch(sourceIds: readonly number[]): { source_id: number; name: string; content: string; length: number }[] {
    if (sourceIds.length === 0) return [];
    return this.db.all<{ source_id: number; name: string; content: string; length: number }>(
      `SELECT id AS source_id, name, COALESCE(content, '') AS content, content_length AS length FROM sources WHERE id IN (SELECT value FROM json_each(?)) ORDER BY id`,
      [JSON.stringify(sourceIds)],
    );
  }
  searchCodeRows(match: string): { code_id: number; matchinfo: number[] }[] {
    return ftsQuery(() =>
      this.db.all<{ code_id: number; mi: Uint8Array }>(`SELECT docid AS code_id, matchinfo(code_fts, 'pcnx') AS mi FROM code_fts WHERE code_fts MATCH ?`, [
        match,
      ]),
    ).map((r) => ({ code_id: r.code_id, matchinfo: uint32s(r.mi) }));
  }
  searchSegmentRows(match: string, filter: SearchFilter): { segment_id: number; matchinfo: number[] }[] {
    const rows = ftsQuery(() =>
      hasSourceFilter(filter) || (filter.code_ids?.length ?? 0) > 0
        ? this.db.all<{ segment_id: number; mi: Uint8Array }>(
            `SELECT segment_fts.docid AS segment_id, matchinfo(segment_fts, 'pcnalx') AS mi
             FROM segment_fts JOIN segments g ON g.id = segment_fts.docid JOIN sources s ON s.id = g.source_id
             WHERE segment_fts MATCH ? AND ${SOURCE_FILTER} AND ${CODE_FILTER}`,
            [match, ...sourceFilterParams(filter), ...codeFilterParams(filter)],
          )
        : this.db.all<{ segment_id: number; mi: Uint8Array }>(
            `SELECT docid AS segment_id, matchinfo(segment_fts, 'pcnalx') AS mi FROM segment_fts WHERE segment_fts MATCH ?`,
            [match],
          ),
    );
    return rows.map((r) => ({ segment_id: r.segment_id, matchinfo: uint32s(r.mi) }));
  }
  searchSegmentStats(match: string): number[] | undefined {
    const row = ftsQuery(() =>
      this.db.get<{ mi: Uint8Array }>(`SELECT matchinfo(segment_fts, 'pcnx') AS mi FROM segment_fts WHERE segment_fts MATCH ? LIMIT 1`, [match]),
    );
    return row ? uint32s(row.mi) : undefined;
  }
  listSegmentsForSearch(filter: SearchFilter): SearchSegment[] {
    return this.db.all<SearchSegment>(`SELECT ${SEARCH_SEGMENT_COLS} WHERE ${SOURCE_FILTER} AND ${CODE_FILTER} ORDER BY g.id`, [
      ...sourceFilterParams(filter),
      ...codeFilterParams(filter),
    ]);
  }
  getSegmentsForSearch(ids: readonly number[]): SearchSegment[] {
    if (ids.length === 0) return [];
    return this.db.all<SearchSegment>(`SELECT ${SEARCH_SEGMENT_COLS} WHERE g.id IN (SELECT value FROM json_each(?)) ORDER BY g.id`, [JSON.stringify(ids)]);
  }
  embeddedHashes(model: string): Set<string> {
    return new Set(this.db.all<{ h: string }>('SELECT text_hash AS h FROM segment_embeddings WHERE model = ?', [model]).map((r) => r.h));
  }
  getEmbeddings(model: string, hashes: readonly string[]): Map<string, Float32Array> {
    const out = new Map<string, Float32Array>();
    const missing: string[] = [];
    for (const h of new Set(hashes)) {
      const v = this.vectorMemo.get(`${model}\n${h}`);
      if (v) out.set(h, v);
      else missing.push(h);
    }
    for (let i = 0; i < missing.length; i += 1000) {
      const rows = this.db.all<{ h: string; v: string }>(
        'SELECT text_hash AS h, vector AS v FROM segment_embeddings WHERE model = ? AND text_hash IN (SELECT value FROM json_each(?))',
        [model, JSON.stringify(missing.slice(i, i + 1000))],
      );
      for (const r of rows) {
        const v = decodeVector(r.v);
        if (this.vectorMemo.size >= VECTOR_MEMO_MAX) this.vectorMemo.clear();
        this.vectorMemo.set(`${model}\n${r.h}`, v);
        out.set(r.h, v);
      }
    }
    return out;
  }
  putEmbeddings(model: string, vectors: readonly { hash: string; vector: readonly number[] }[], now: string): number {
    let n = 0;
    for (const { hash, vector } of vectors) {
      n += this.db.run(
        'INSERT INTO segment_embeddings(model, text_hash, dims, vector, created_at) VALUES (?,?,?,?,?) ON CONFLICT(model, text_hash) DO NOTHING',
        [model, hash, vector.length, encodeVector(vector), now],
      ).changes;
    }
    return n;
  }

  // suggestions (src/domain/suggestions.ts)
  insertSuggestion(s: NewSuggestion, st: Stamp): number {
    return this.db.run(
      `INSERT INTO suggestions(kind, status, batch_id, name, name_key, color, memo, category_id, sample_contexts, code_id, target_code_id, source_id,
         start_pos, end_pos, text, rationale, confidence, details, suggested_by, suggested_by_session, created_at)
       VALUES (?, 'pending', ?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
      [
        s.kind,
        s.batch_id,
        s.name,
        s.name_key,
        s.color,
        s.memo,
        s.category_id,
        s.sample_contexts,
        s.code_id,
        s.target_code_id,
        s.source_id,
        s.start_pos,
        s.end_pos,
        s.text,
        s.rationale,
        s.confidence,
        s.details,
        st.owner,
        st.session_id,
        st.now,
      ],
    ).lastId;
  }
  getSuggestion(id: number): SuggestionRecord | undefined {
    return this.db.get<SuggestionRecord>(`SELECT ${SUGGESTION_COLS} FROM suggestions WHERE id = ?`, [id]);
  }
  listSuggestions(filter: SuggestionFilter): SuggestionRecord[] {
    const where: string[] = [];
    const params: (string | number)[] = [];
    for (const key of ['kind', 'status', 'source_id', 'batch_id'] as const) {
      const v = filter[key];
      if (v === undefined) continue;
      where.push(`${key} = ?`);
      params.push(v);
    }
    return this.db.all<SuggestionRecord>(
      `SELECT ${SUGGESTION_COLS} FROM suggestions ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id`,
      params,
    );
  }
  findPendingSuggestion(
    kind: SuggestionKind,
    match: { name_key?: string; code_id?: number; target_code_id?: number; source_id?: number; start_pos?: number; end_pos?: number },
  ): SuggestionRecord | undefined {
    const where = ['kind = ?', "status = 'pending'"];
    const params: (string | number)[] = [kind];
    for (const [k, v] of Object.entries(match)) {
      if (v === undefined) continue;
      where.push(`${k} = ?`);
      params.push(v);
    }
    return this.db.get<SuggestionRecord>(`SELECT ${SUGGESTION_COLS} FROM suggestions WHERE ${where.join(' AND ')} ORDER BY id LIMIT 1`, params);
  }
  decideSuggestion(id: number, d: SuggestionDecision): void {
    if (d.status === 'rejected') {
      this.db.run(
        `UPDATE suggestions SET status = 'rejected', rejected_by = ?, rejected_by_session = ?, rejected_at = ?, reason = ?, feedback = ? WHERE id = ?`,
        [d.by, d.session_id, d.at, d.reason, d.feedback, id],
      );
      return;
    }
    this.db.run(
      'UPDATE suggestions SET status = ?, approved_by = ?, approved_by_session = ?, approved_at = ?, result = ?, error_code = ?, error = ? WHERE id = ?',
      [d.status, d.by, d.session_id, d.at, d.result, d.error_code, d.error, id],
    );
  }
  insertSuggestionBatch(b: NewSuggestionBatch, st: Stamp): number {
    return this.db.run(
      'INSERT INTO suggestion_batches(kind, source_id, code_id, start_pos, end_pos, rationale, params, owner, session_id, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)',
      [b.kind, b.source_id, b.code_id, b.start_pos, b.end_pos, b.rationale, b.params, st.owner, st.session_id, st.now, st.now],
    ).lastId;
  }
  getSuggestionBatch(id: number): SuggestionBatchRecord | undefined {
    return this.db.get<SuggestionBatchRecord>(
      `SELECT b.id AS batch_id, b.kind, b.source_id, b.code_id, b.start_pos, b.end_pos, b.rationale, b.params, b.response, b.response_reason,
         b.responded_by, b.responded_by_session, b.responded_at, b.owner, b.session_id, b.created_at, b.updated_at,
         count(s.id) AS total_count,
         coalesce(sum(s.status = 'pending'), 0) AS pending_count,
         coalesce(sum(s.status = 'applied'), 0) AS applied_count,
         coalesce(sum(s.status = 'approved'), 0) AS approved_count,
         coalesce(sum(s.status = 'rejected'), 0) AS rejected_count,
         coalesce(sum(s.status = 'failed'), 0) AS failed_count
       FROM suggestion_batches b LEFT JOIN suggestions s ON s.batch_id = b.id WHERE b.id = ? GROUP BY b.id`,
      [id],
    );
  }
  respondToSuggestionBatch(id: number, r: { response: 'accept' | 'reject'; reason: string | null; by: string; session_id: string; at: string }): void {
    this.db.run(
      'UPDATE suggestion_batches SET response = ?, response_reason = ?, responded_by = ?, responded_by_session = ?, responded_at = ?, updated_at = ? WHERE id = ?',
      [r.response, r.reason, r.by, r.session_id, r.at, r.at, id],
    );
  }
  touchSuggestionBatch(id: number, now: string): void {
    this.db.run('UPDATE suggestion_batches SET updated_at = ? WHERE id = ?', [now, id]);
  }
  insertSegmentProvenance(p: SegmentProvenance): void {
    this.db.run(
      `INSERT INTO segment_provenance(segment_id, suggestion_id, batch_id, rationale, confidence, suggested_by, suggested_by_session, approved_by, approved_by_session, created_at)
       VALUES (?,?,?,?,?,?,?,?,?,?)`,
      [
        p.segment_id,
        p.suggestion_id,
        p.batch_id,
        p.rationale,
        p.confidence,
        p.suggested_by,
        p.suggested_by_session,
        p.approved_by,
        p.approved_by_session,
        p.created_at,
      ],
    );
  }
  getSegmentProvenance(segmentId: number): SegmentProvenance | undefined {
    return this.db.get<SegmentProvenance>(
      `SELECT segment_id, suggestion_id, batch_id, rationale, confidence, suggested_by, suggested_by_session, approved_by, approved_by_session, created_at
       FROM segment_provenance WHERE segment_id = ?`,
      [segmentId],
    );
  }

  // the design's rename_source / update_memo, and reports (migration 7; src/domain/sources.ts, src/domain/reports.ts)
  renameSource(id: number, name: string, now: string): void {
    this.db.run('UPDATE sources SET name = ?, updated_at = ? WHERE id = ?', [name, now, id]);
  }
  setSourceMemo(id: number, memo: string | null, now: string): void {
    this.db.run('UPDATE sources SET memo = ?, updated_at = ? WHERE id = ?', [memo, now, id]);
  }
  insertReport(r: { type: ReportType; filters: string; params: string }, st: Stamp): number {
    return this.db.run("INSERT INTO reports(type, filters, params, status, owner, session_id, created_at) VALUES (?,?,?,'running',?,?,?)", [
      r.type,
      r.filters,
      r.params,
      st.owner,
      st.session_id,
      st.now,
    ]).lastId;
  }
  finishReport(
    id: number,
    e: { status: 'completed' | 'failed'; result: string | null; error_code: string | null; error: string | null; completed_at: string },
  ): void {
    // The result (8 MB of JSON for a co-occurrence matrix of 2,000 codes) goes in as its UTF-8 bytes, cast
    // back to text, and is journaled as the string (see ProjectStore.run).
    const values = [e.status, e.error_code, e.error, e.completed_at, id];
    this.db.run(
      'UPDATE reports SET result = CAST(? AS TEXT), status = ?, error_code = ?, error = ?, completed_at = ? WHERE id = ?',
      [e.result === null ? null : Buffer.from(e.result, 'utf8'), ...values],
      [e.result, ...values],
    );
  }
  getReport(id: number): ReportRecord | undefined {
    return this.db.get<ReportRecord>(`SELECT ${REPORT_COLS}, result FROM reports WHERE id = ?`, [id]);
  }
  listReports(q: { type?: ReportType; status?: ReportStatus; limit: number; offset: number }): { total: number; reports: ReportRecord[] } {
    const where = 'WHERE (? IS NULL OR type = ?) AND (? IS NULL OR status = ?)';
    const params = [q.type ?? null, q.type ?? null, q.status ?? null, q.status ?? null];
    const total = Number(this.db.get<{ n: number }>(`SELECT count(*) AS n FROM reports ${where}`, params)?.n ?? 0);
    const reports = this.db.all<ReportRecord>(`SELECT ${REPORT_COLS}, NULL AS result FROM reports ${where} ORDER BY id DESC LIMIT ? OFFSET ?`, [
      ...params,
      q.limit,
      q.offset,
    ]);
    return { total, reports };
  }
  reportCodedRanges(filter: ReportFilter, owners?: readonly string[]): CodedRanges {
    // Only the needed columns, stepped into typed arrays (ProjectStore.intColumns); segments_source covers
    // them all, so no table row (with its text) is read, and without filters its scan is already in the
    // ORDER BY's order (no sort). The owners, when asked for, come as their index in `owners` (-1: another).
    const f = reportSegmentFilter(filter, owners);
    // no owners (a project nobody has coded in yet): a constant, since CASE needs at least one WHEN
    const ownerCol = owners ? (owners.length > 0 ? `, CASE g.owner ${owners.map(() => 'WHEN ? THEN ?').join(' ')} ELSE -1 END` : ', -1') : '';
    const ownerParams: SqlParam[] = owners ? owners.flatMap((o, i) => [o, i]) : [];
    const cols = this.db.intColumns(
      `SELECT g.source_id, g.code_id, g.start_pos, g.end_pos${ownerCol} FROM segments g ${f.where} ORDER BY g.source_id, g.start_pos`,
      [...ownerParams, ...f.params],
    );
    const [source_id, code_id, start_pos, end_pos] = cols as [Int32Array, Int32Array, Int32Array, Int32Array];
    const owner = owners ? (cols[4] as Int32Array) : new Int32Array(source_id.length).fill(-1);
    return { source_id, code_id, start_pos, end_pos, owner, owners: [...(owners ?? [])] };
  }
  reportCodeSources(filter: ReportFilter): { groups: { code_id: number; owner: string; segments: number }[]; source_id: Int32Array } {
    // Both scan the covering index segments_code (code_id, owner, source_id) in its order, without a sort.
    // Counting distinct sources in JavaScript from these is about twice as fast as count(DISTINCT ...) per
    // code and per code and coder in SQL, which fills a temporary b-tree per group (bench/reports.ts).
    const f = reportSegmentFilter(filter);
    const groups = this.db.all<{ code_id: number; owner: string; segments: number }>(
      `SELECT g.code_id, g.owner, count(*) AS segments FROM segments g ${f.where} GROUP BY g.code_id, g.owner ORDER BY g.code_id, g.owner`,
      f.params,
    );
    const [source_id] = this.db.intColumns(`SELECT g.source_id FROM segments g ${f.where} ORDER BY g.code_id, g.owner, g.source_id`, f.params) as [Int32Array];
    return { groups, source_id };
  }
  listCodeLabels(): { code_id: number; name: string; color: string; category_id: number | null }[] {
    return this.db.all('SELECT id AS code_id, name, color, category_id FROM codes ORDER BY id');
  }
  listCoders(): { coder: string; segments: number }[] {
    return this.db.all<{ coder: string; segments: number }>('SELECT owner AS coder, count(*) AS segments FROM segments GROUP BY owner ORDER BY owner');
  }
  textSourceLengths(sourceIds?: readonly number[]): { source_id: number; name: string; length: number }[] {
    return sourceIds
      ? this.db.all(
          "SELECT id AS source_id, name, content_length AS length FROM sources WHERE type = 'text' AND id IN (SELECT value FROM json_each(?)) ORDER BY id",
          [JSON.stringify(sourceIds)],
        )
      : this.db.all("SELECT id AS source_id, name, content_length AS length FROM sources WHERE type = 'text' ORDER BY id");
  }
  caseExtents(caseIds: readonly number[]): { source_id: number; whole: boolean; start_pos: number; end_pos: number }[] {
    const ids = JSON.stringify(caseIds);
    return this.db
      .all<{ source_id: number; whole: number; start_pos: number; end_pos: number }>(
        `SELECT DISTINCT source_id, 1 AS whole, 0 AS start_pos, 0 AS end_pos FROM case_sources WHERE case_id IN (SELECT value FROM json_each(?))
         UNION ALL
         SELECT source_id, 0 AS whole, start_pos, end_pos FROM case_segments WHERE case_id IN (SELECT value FROM json_each(?))
         ORDER BY source_id, whole DESC, start_pos, end_pos`,
        [ids, ids],
      )
      .map((r) => ({ source_id: r.source_id, whole: r.whole === 1, start_pos: r.start_pos, end_pos: r.end_pos }));
  }

  // exchange GUIDs (migration 8; src/exchange/refiQda)
  projectGuid(): string {
    const row = this.db.get<{ value: string | null }>("SELECT value FROM meta WHERE key = 'project_guid'");
    if (!row?.value) throw new Error('the project has no project_guid (migration 8 did not run)');
    return row.value;
  }
  listExchangeGuids(kind?: ExchangeGuidKind): ExchangeGuid[] {
    return kind === undefined
      ? this.db.all<ExchangeGuid>('SELECT kind, local_id, guid FROM exchange_guids ORDER BY kind, local_id')
      : this.db.all<ExchangeGuid>('SELECT kind, local_id, guid FROM exchange_guids WHERE kind = ? ORDER BY local_id', [kind]);
  }
  listEntityGuids(): ExchangeGuid[] {
    const parts: [ExchangeGuidKind, string][] = [
      ['code', 'codes'],
      ['category', 'categories'],
      ['source', 'sources'],
      ['case', 'cases'],
      ['coding', 'segments'],
      ['av_coding', 'av_segments'],
      ['case_selection', 'case_segments'],
    ];
    return this.db.all<ExchangeGuid>(
      parts.map(([k, t]) => `SELECT '${k}' AS kind, CAST(id AS TEXT) AS local_id, guid FROM ${t} WHERE guid IS NOT NULL`).join(' UNION ALL '),
    );
  }
  setExchangeGuid(kind: ExchangeGuidKind, localId: string, guid: string): void {
    this.db.run('INSERT INTO exchange_guids(kind, local_id, guid) VALUES (?,?,?) ON CONFLICT(kind, local_id) DO UPDATE SET guid = excluded.guid', [
      kind,
      localId,
      guid,
    ]);
  }
  // memos as documents (issue 13 item 6): case memos, and the research frame in meta row `project_briefing`
  updateCaseMemo(id: number, memo: string | null, now: string): void {
    this.db.run('UPDATE cases SET memo = ?, updated_at = ? WHERE id = ?', [memo, now, id]);
  }
  projectBriefing(): StoredBriefing | undefined {
    const row = this.db.get<{ value: string | null }>("SELECT value FROM meta WHERE key = 'project_briefing'");
    if (!row?.value) return undefined;
    try {
      const v = JSON.parse(row.value) as unknown;
      return v && typeof v === 'object' && !Array.isArray(v) ? (v as StoredBriefing) : undefined;
    } catch {
      return undefined;
    }
  }
  setProjectBriefing(briefing: StoredBriefing): void {
    this.db.run("INSERT INTO meta(key, value) VALUES ('project_briefing', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value", [
      JSON.stringify(briefing),
    ]);
  }
  // blind coding (issue 16 item 5): the team setting in meta row `team_settings`, and one coder's codings
  teamSettings(): StoredTeamSettings | undefined {
    const row = this.db.get<{ value: string | null }>("SELECT value FROM meta WHERE key = 'team_settings'");
    if (!row?.value) return undefined;
    try {
      const v = JSON.parse(row.value) as unknown;
      return v && typeof v === 'object' && !Array.isArray(v) ? (v as StoredTeamSettings) : undefined;
    } catch {
      return undefined;
    }
  }
  setTeamSettings(settings: StoredTeamSettings): void {
    this.db.run("INSERT INTO meta(key, value) VALUES ('team_settings', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value", [JSON.stringify(settings)]);
  }
  coderCodingCounts(scope: CoderScope, only: { codeId?: number; sourceId?: number } = {}): { code_id: number; source_id: number; text: number; av: number }[] {
    const where = `owner = ? AND ${CODER_ROLE_MATCH}${only.codeId !== undefined ? ' AND code_id = ?' : ''}${only.sourceId !== undefined ? ' AND source_id = ?' : ''}`;
    const params = [scope.coder, scope.role, ...(only.codeId !== undefined ? [only.codeId] : []), ...(only.sourceId !== undefined ? [only.sourceId] : [])];
    return this.db.all<{ code_id: number; source_id: number; text: number; av: number }>(
      `SELECT code_id, source_id, sum(t) AS text, sum(a) AS av FROM (
         SELECT code_id, source_id, 1 AS t, 0 AS a FROM segments WHERE ${where}
         UNION ALL SELECT code_id, source_id, 0, 1 FROM av_segments WHERE ${where}
       ) GROUP BY code_id, source_id`,
      [...params, ...params],
    );
  }
  coderSegmentIds(scope: CoderScope): number[] {
    return this.db
      .all<{ id: number }>(`SELECT id FROM segments WHERE owner = ? AND ${CODER_ROLE_MATCH} ORDER BY id`, [scope.coder, scope.role])
      .map((r) => r.id);
  }
  // merge conflicts (migration 18)
  saveMergeConflicts(conflicts: readonly MergeConflict[], mergeRef: string | null, now: string): void {
    for (const c of conflicts) {
      this.db.run(
        `INSERT INTO merge_conflicts(conflict_id, kind, entity_table, entity_guid, entity_name, entity_local_id, field, ours, theirs, base, merge_ref, status, created_at)
         VALUES (?,?,?,?,?,?,?,?,?,?,?,'open',?)
         ON CONFLICT(conflict_id) DO UPDATE SET kind = excluded.kind, entity_table = excluded.entity_table, entity_guid = excluded.entity_guid,
           entity_name = excluded.entity_name, entity_local_id = excluded.entity_local_id, field = excluded.field, ours = excluded.ours,
           theirs = excluded.theirs, base = excluded.base, merge_ref = excluded.merge_ref, status = 'open', created_at = excluded.created_at,
           choice = NULL, resolution = NULL, resolved_by = NULL, resolved_at = NULL`,
        [
          c.conflict_id,
          c.kind,
          c.entity.table,
          c.entity.guid,
          c.entity.name,
          c.entity.local_id,
          c.entity.field ?? null,
          JSON.stringify(c.ours ?? null),
          JSON.stringify(c.theirs ?? null),
          JSON.stringify(c.base ?? null),
          mergeRef,
          now,
        ],
      );
    }
  }
  listMergeConflicts(status?: 'open' | 'resolved'): StoredMergeConflict[] {
    const where = status === undefined ? '' : 'WHERE status = ?';
    return this.db
      .all<MergeConflictRow>(
        `SELECT * FROM merge_conflicts ${where} ORDER BY CASE status WHEN 'open' THEN 0 ELSE 1 END, created_at, conflict_id`,
        status === undefined ? [] : [status],
      )
      .map(mergeConflictOf);
  }
  getMergeConflict(conflictId: string): StoredMergeConflict | undefined {
    const row = this.db.get<MergeConflictRow>('SELECT * FROM merge_conflicts WHERE conflict_id = ?', [conflictId]);
    return row ? mergeConflictOf(row) : undefined;
  }
  markMergeConflictResolved(conflictId: string, r: { choice: MergeConflictChoice; resolution: unknown; resolved_by: string; resolved_at: string }): void {
    this.db.run("UPDATE merge_conflicts SET status = 'resolved', choice = ?, resolution = ?, resolved_by = ?, resolved_at = ? WHERE conflict_id = ?", [
      r.choice,
      JSON.stringify(r.resolution ?? null),
      r.resolved_by,
      r.resolved_at,
      conflictId,
    ]);
  }
  // document attributes (migration 10)
  listSourceAttributes(sourceId?: number): SourceAttribute[] {
    const rows =
      sourceId === undefined
        ? this.db.all<SourceAttributeRow>(`SELECT ${SOURCE_ATTRIBUTE_COLS} FROM source_attributes ORDER BY source_id, name`)
        : this.db.all<SourceAttributeRow>(`SELECT ${SOURCE_ATTRIBUTE_COLS} FROM source_attributes WHERE source_id = ? ORDER BY name`, [sourceId]);
    return rows.map(sourceAttributeOf);
  }
  setSourceAttribute(sourceId: number, name: string, type: AttributeType, value: AttributeValue, st: Stamp): void {
    this.db.run(
      `INSERT INTO source_attributes(source_id, name, type, value_text, value_number, value_date, value_boolean, updated_at, owner, session_id) VALUES (?,?,?,?,?,?,?,?,?,?)
       ON CONFLICT(source_id, name) DO UPDATE SET type = excluded.type, value_text = excluded.value_text, value_number = excluded.value_number,
         value_date = excluded.value_date, value_boolean = excluded.value_boolean, updated_at = excluded.updated_at, owner = excluded.owner, session_id = excluded.session_id`,
      [
        sourceId,
        name,
        type,
        type === 'text' ? String(value) : null,
        type === 'number' ? Number(value) : null,
        type === 'date' ? String(value) : null,
        type === 'boolean' ? (value === true ? 1 : 0) : null,
        st.now,
        st.owner,
        st.session_id,
      ],
    );
  }
  deleteSourceAttribute(sourceId: number, name: string): boolean {
    // read first, so deleting an absent attribute journals no statement
    if (!this.db.get('SELECT 1 AS x FROM source_attributes WHERE source_id = ? AND name = ?', [sourceId, name])) return false;
    this.db.run('DELETE FROM source_attributes WHERE source_id = ? AND name = ?', [sourceId, name]);
    return true;
  }
  // sources closed to agents (migration 15, src/agent/agentAccess.ts)
  listAgentAccess(): AgentAccessRule[] {
    const rows = this.db.all<{
      target_kind: AgentAccessKind;
      target_id: number;
      target_name: string | null;
      agents: string | null;
      set_by: string;
      set_at: string;
    }>(
      `SELECT a.target_kind, a.target_id, a.agents, a.set_by, a.set_at,
         CASE a.target_kind WHEN 'source' THEN (SELECT name FROM sources WHERE id = a.target_id)
           WHEN 'folder' THEN (SELECT name FROM folders WHERE id = a.target_id)
           ELSE (SELECT name FROM cases WHERE id = a.target_id) END AS target_name
       FROM agent_access a WHERE a.access = 'closed'
       ORDER BY CASE a.target_kind WHEN 'source' THEN 0 WHEN 'folder' THEN 1 ELSE 2 END, a.target_id`,
    );
    return rows.map((r) => ({ ...r, access: 'closed' as const, agents: agentsOf(r.agents) }));
  }
  setAgentAccess(kind: AgentAccessKind, id: number, access: 'closed' | 'open', agents: string[] | null, setBy: string, now: string): void {
    if (access === 'open') {
      // read first, so opening what is open journals no statement
      if (this.db.get('SELECT 1 AS x FROM agent_access WHERE target_kind = ? AND target_id = ?', [kind, id]))
        this.db.run('DELETE FROM agent_access WHERE target_kind = ? AND target_id = ?', [kind, id]);
      return;
    }
    this.db.run(
      `INSERT INTO agent_access(target_kind, target_id, access, agents, set_by, set_at) VALUES (?,?,'closed',?,?,?)
       ON CONFLICT(target_kind, target_id) DO UPDATE SET access = 'closed', agents = excluded.agents, set_by = excluded.set_by, set_at = excluded.set_at`,
      [kind, id, agents === null ? null : JSON.stringify(agents), setBy, now],
    );
  }
  listClosedSources(): ClosedSourceRow[] {
    // a folder cycle cannot loop: UNION (not UNION ALL) stops at rows already found
    const rows = this.db.all<{ source_id: number; source_name: string; agents: string | null; via_kind: AgentAccessKind; via_id: number }>(
      `WITH RECURSIVE closed_folders(folder_id, agents, via_id) AS (
         SELECT target_id, agents, target_id FROM agent_access WHERE target_kind = 'folder' AND access = 'closed'
         UNION SELECT f.id, c.agents, c.via_id FROM folders f JOIN closed_folders c ON f.parent_id = c.folder_id
       ),
       closed(source_id, agents, via_kind, via_id) AS (
         SELECT target_id, agents, 'source', target_id FROM agent_access WHERE target_kind = 'source' AND access = 'closed'
         UNION SELECT s.id, c.agents, 'folder', c.via_id FROM sources s JOIN closed_folders c ON s.folder_id = c.folder_id
         UNION SELECT m.source_id, a.agents, 'case', a.target_id FROM case_sources m JOIN agent_access a ON a.target_kind = 'case' AND a.access = 'closed' AND a.target_id = m.case_id
         UNION SELECT m.source_id, a.agents, 'case', a.target_id FROM case_segments m JOIN agent_access a ON a.target_kind = 'case' AND a.access = 'closed' AND a.target_id = m.case_id
       )
       SELECT c.source_id, s.name AS source_name, c.agents, c.via_kind, c.via_id FROM closed c JOIN sources s ON s.id = c.source_id ORDER BY c.source_id`,
    );
    return rows.map((r) => ({ ...r, agents: agentsOf(r.agents) }));
  }
}

const CASE_COLS = `k.id AS case_id, k.name, k.memo, k.owner, k.session_id, k.created_at, k.updated_at,
  (SELECT count(*) FROM case_sources m WHERE m.case_id = k.id) AS source_count,
  (SELECT count(*) FROM case_segments g WHERE g.case_id = k.id) AS segment_count,
  (SELECT count(*) FROM case_attributes a WHERE a.case_id = k.id) AS attribute_count`;

const CASE_SEGMENT_COLS = `g.id AS case_segment_id, g.case_id, g.source_id, s.name AS source_name, g.start_pos, g.end_pos, g.text, g.owner, g.session_id, g.created_at
  FROM case_segments g JOIN sources s ON s.id = g.source_id`;

const ATTRIBUTE_COLS = 'case_id, name, type, value_text, value_number, value_date, value_boolean, updated_at';

interface AttributeRow {
  case_id: number;
  name: string;
  type: AttributeType;
  value_text: string | null;
  value_number: number | null;
  value_date: string | null;
  value_boolean: number | null;
  updated_at: string;
}

/** A stored attribute row as the domain's typed value (the column its type names). */
function attributeOf(r: AttributeRow): CaseAttribute {
  const value: AttributeValue =
    r.type === 'number'
      ? Number(r.value_number)
      : r.type === 'boolean'
        ? r.value_boolean === 1
        : r.type === 'date'
          ? String(r.value_date)
          : String(r.value_text);
  return { case_id: r.case_id, name: r.name, type: r.type, value, updated_at: r.updated_at };
}

const SOURCE_ATTRIBUTE_COLS = 'source_id, name, type, value_text, value_number, value_date, value_boolean, updated_at, owner, session_id';

interface SourceAttributeRow extends Omit<AttributeRow, 'case_id'> {
  source_id: number;
  owner: string;
  session_id: string | null;
}

/** A stored document attribute row as the domain's typed value (the column its type names). */
function sourceAttributeOf(r: SourceAttributeRow): SourceAttribute {
  const value: AttributeValue =
    r.type === 'number'
      ? Number(r.value_number)
      : r.type === 'boolean'
        ? r.value_boolean === 1
        : r.type === 'date'
          ? String(r.value_date)
          : String(r.value_text);
  return { source_id: r.source_id, name: r.name, type: r.type, value, updated_at: r.updated_at, owner: r.owner, session_id: r.session_id };
}

const AV_SEGMENT_COLS = 'id AS segment_id, code_id, source_id, start_ms, end_ms, transcript, memo, owner, session_id, coder_role, created_at';

// search helpers

/** Sources within a SearchFilter (alias `s`); parameters from {@link sourceFilterParams}. */
const SOURCE_FILTER = `(? IS NULL OR s.id IN (SELECT value FROM json_each(?)))
  AND (? IS NULL OR s.type = ?)
  AND (? IS NULL OR s.folder_id IN (WITH RECURSIVE sub(id) AS (SELECT ? UNION SELECT f.id FROM folders f JOIN sub ON f.parent_id = sub.id) SELECT id FROM sub))`;
/** Segments (alias `g`) of the filter's codes; parameters from {@link codeFilterParams}. */
const CODE_FILTER = `(? IS NULL OR g.code_id IN (SELECT value FROM json_each(?)))`;
const SEARCH_SEGMENT_COLS = `g.id AS segment_id, g.code_id, c.name AS code_name, g.source_id, s.name AS source_name, g.start_pos, g.end_pos, g.text
  FROM segments g JOIN codes c ON c.id = g.code_id JOIN sources s ON s.id = g.source_id`;
/** Decoded vectors kept in memory per repository (about 3 KB each at 768 dimensions). */
const VECTOR_MEMO_MAX = 200_000;

function hasSourceFilter(f: SearchFilter): boolean {
  return (f.source_ids?.length ?? 0) > 0 || f.source_type !== undefined || f.folder_id !== undefined;
}

function sourceFilterParams(f: SearchFilter): SqlParam[] {
  const ids = f.source_ids?.length ? JSON.stringify(f.source_ids) : null;
  return [ids, ids, f.source_type ?? null, f.source_type ?? null, f.folder_id ?? null, f.folder_id ?? null];
}

function codeFilterParams(f: SearchFilter): SqlParam[] {
  const ids = f.code_ids?.length ? JSON.stringify(f.code_ids) : null;
  return [ids, ids];
}

type SqlParam = string | number | null;

/** An FTS4 matchinfo() BLOB as its unsigned 32-bit integers (machine byte order, little-endian in WebAssembly). */
function uint32s(blob: Uint8Array): number[] {
  const view = new DataView(blob.buffer, blob.byteOffset, blob.byteLength);
  const out = new Array<number>(blob.byteLength >> 2);
  for (let i = 0; i < out.length; i++) out[i] = view.getUint32(i * 4, true);
  return out;
}

/** The sum of a blob's little-endian unsigned 32-bit integers, without a view or an array per blob (one per matching source). */
function sumUint32s(blob: Uint8Array): number {
  let n = 0;
  for (let i = 0; i + 3 < blob.length; i += 4)
    n += ((blob[i] as number) | ((blob[i + 1] as number) << 8) | ((blob[i + 2] as number) << 16) | ((blob[i + 3] as number) << 24)) >>> 0;
  return n;
}

/**
 * Runs an FTS4 query; SQLite's "malformed MATCH expression" (and other errors of the query text) become
 * INVALID_ARGUMENTS, since they describe the caller's query and not a failure of the project.
 */
function ftsQuery<T>(fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    if (/malformed MATCH|MATCH expression|unable to use function MATCH|fts/i.test(msg)) {
      throw new ToolError('INVALID_ARGUMENTS', `The search query is not valid FTS4 syntax: ${msg}`);
    }
    throw e;
  }
}

/** A vector as stored: base64 of its little-endian float32 values (TEXT, so the JSON journal carries it unchanged). */
function encodeVector(v: readonly number[]): string {
  const buf = Buffer.alloc(v.length * 4);
  for (let i = 0; i < v.length; i++) buf.writeFloatLE(v[i] as number, i * 4);
  return buf.toString('base64');
}

function decodeVector(text: string): Float32Array {
  const buf = Buffer.from(text, 'base64');
  const out = new Float32Array(buf.length >> 2);
  for (let i = 0; i < out.length; i++) out[i] = buf.readFloatLE(i * 4);
  return out;
}

/** Columns of a suggestion row as the domain's {@link SuggestionRecord}. */
const SUGGESTION_COLS = `id AS suggestion_id, kind, status, batch_id, name, color, memo, category_id, sample_contexts, code_id, target_code_id, source_id,
  start_pos, end_pos, text, rationale, confidence, details, suggested_by, suggested_by_session, created_at, approved_by, approved_by_session, approved_at,
  rejected_by, rejected_by_session, rejected_at, reason, feedback, result, error_code, error`;

// reports helpers (migration 7)

const REPORT_COLS = 'id AS report_id, type, status, filters, params, error_code, error, owner, session_id, created_at, completed_at';

/**
 * The WHERE clause (alias `g`) of the segments within a report filter, and its parameters. Only the given
 * fields become conditions (an unused `? IS NULL OR ...` would still cost a test per row on a million rows).
 * case_ids: the case's linked sources, or overlapping one of its ranges (as listCaseCodings).
 */
function reportSegmentFilter(f: ReportFilter, owners?: readonly string[]): { where: string; params: SqlParam[] } {
  const conds: string[] = [];
  const params: SqlParam[] = [];
  if (f.source_ids) {
    conds.push('g.source_id IN (SELECT value FROM json_each(?))');
    params.push(JSON.stringify(f.source_ids));
  }
  if (f.code_ids) {
    conds.push('g.code_id IN (SELECT value FROM json_each(?))');
    params.push(JSON.stringify(f.code_ids));
  }
  if (f.coder !== undefined) {
    conds.push('g.owner = ?');
    params.push(f.coder);
  }
  if (owners) {
    conds.push('g.owner IN (SELECT value FROM json_each(?))');
    params.push(JSON.stringify(owners));
  }
  if (f.case_ids) {
    const ids = JSON.stringify(f.case_ids);
    conds.push(`(g.source_id IN (SELECT source_id FROM case_sources WHERE case_id IN (SELECT value FROM json_each(?)))
      OR EXISTS (SELECT 1 FROM case_segments k WHERE k.case_id IN (SELECT value FROM json_each(?)) AND k.source_id = g.source_id AND k.start_pos < g.end_pos AND k.end_pos > g.start_pos))`);
    params.push(ids, ids);
  }
  return { where: conds.length > 0 ? `WHERE ${conds.join(' AND ')}` : '', params };
}

/**
 * The `SET` assignments of an UPDATE of a code or category: one `column = ?` per given field (the keys are
 * column names the caller's type restricts), plus `name_key = ?` when `key` is not null. Returns the
 * assignments and their bound values, in order; the caller appends its own and the WHERE parameter.
 */
function setClause(fields: Record<string, unknown>, key: string | null): { sets: string[]; params: (string | number | null)[] } {
  const sets: string[] = [];
  const params: (string | number | null)[] = [];
  for (const [k, v] of Object.entries(fields)) {
    sets.push(`${k} = ?`);
    params.push(v as string | number | null);
  }
  if (key !== null) {
    sets.push('name_key = ?');
    params.push(key);
  }
  return { sets, params };
}

/** The `agents` column of agent_access: a JSON array of names, or null (every agent); a malformed value counts as every agent. */
function agentsOf(value: string | null): string[] | null {
  if (value === null) return null;
  try {
    const v = JSON.parse(value) as unknown;
    return Array.isArray(v) && v.every((x) => typeof x === 'string') ? v : null;
  } catch {
    return null;
  }
}

/** A row of merge_conflicts (migration 18). */
interface MergeConflictRow {
  conflict_id: string;
  kind: string;
  entity_table: string;
  entity_guid: string;
  entity_name: string;
  entity_local_id: number | null;
  field: string | null;
  ours: string;
  theirs: string;
  base: string;
  merge_ref: string | null;
  status: 'open' | 'resolved';
  created_at: string;
  choice: MergeConflictChoice | null;
  resolution: string | null;
  resolved_by: string | null;
  resolved_at: string | null;
}

function mergeConflictOf(r: MergeConflictRow): StoredMergeConflict {
  const json = (v: string | null): unknown => (v === null ? null : (JSON.parse(v) as unknown));
  return {
    conflict_id: r.conflict_id,
    kind: r.kind as StoredMergeConflict['kind'],
    entity: { table: r.entity_table, guid: r.entity_guid, name: r.entity_name, local_id: r.entity_local_id, ...(r.field !== null ? { field: r.field } : {}) },
    ours: json(r.ours),
    theirs: json(r.theirs),
    base: json(r.base),
    status: r.status,
    merge_ref: r.merge_ref,
    created_at: r.created_at,
    choice: r.choice,
    resolution: json(r.resolution),
    resolved_by: r.resolved_by,
    resolved_at: r.resolved_at,
  };
}
