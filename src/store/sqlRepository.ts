import type { EventRecord } from '../domain/events';
import type { Category, Code, Folder, Segment, SourceInfo, SourceType } from '../domain/model';
import type {
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
import type { ProjectStore } from './projectStore';

const CODE_COLS = `c.id AS code_id, c.name, c.color, c.memo, c.category_id, c.owner, c.session_id, c.created_at, c.updated_at, c.version,
  (SELECT count(*) FROM segments s WHERE s.code_id = c.id) AS segment_count,
  (SELECT count(*) FROM av_segments a WHERE a.code_id = c.id) AS av_segment_count`;

const SOURCE_COLS = `s.id AS source_id, s.name, s.type, s.memo, s.origin, s.file_path, s.mime, s.size_bytes, s.folder_id,
  s.content_length AS length, s.owner, s.session_id, s.created_at,
  (SELECT count(*) FROM segments g WHERE g.source_id = s.id) AS segment_count,
  (SELECT count(*) FROM av_segments a WHERE a.source_id = s.id) AS av_segment_count`;

const SEGMENT_COLS = `id AS segment_id, code_id, source_id, start_pos, end_pos, text, memo, importance, owner, session_id, created_at`;

/**
 * {@link ProjectRepository} over a {@link ProjectStore}: plain SQL on the schema of migrations.ts.
 * Writes must run inside `store.transaction`.
 */
export class SqlProjectRepository implements ProjectRepository {
  constructor(private readonly db: ProjectStore) {}

  listCodes(): CodeWithCounts[] {
    return this.db.all<CodeWithCounts>(`SELECT ${CODE_COLS} FROM codes c ORDER BY c.name COLLATE NOCASE`);
  }
  getCode(id: number): CodeWithCounts | undefined {
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
      'INSERT INTO codes(name, name_key, color, memo, category_id, owner, session_id, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?)',
      [code.name, key, code.color, code.memo, code.category_id, st.owner, st.session_id, st.now, st.now],
    ).lastId;
  }
  updateCode(id: number, fields: Partial<Pick<Code, 'name' | 'color' | 'memo' | 'category_id'>>, key: string | null, now: string): void {
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
    sets.push('updated_at = ?', 'version = version + 1');
    params.push(now, id);
    this.db.run(`UPDATE codes SET ${sets.join(', ')} WHERE id = ?`, params);
  }
  deleteCode(id: number): void {
    this.db.run('DELETE FROM orphan_segments WHERE code_id = ?', [id]);
    this.db.run('DELETE FROM codes WHERE id = ?', [id]);
  }

  listCategories(): CategoryWithCount[] {
    return this.db.all<CategoryWithCount>(
      `SELECT k.id AS category_id, k.name, k.parent_id, k.memo, k.owner, k.created_at,
        (SELECT count(*) FROM codes c WHERE c.category_id = k.id) AS code_count
       FROM categories k ORDER BY k.name COLLATE NOCASE`,
    );
  }
  getCategory(id: number): Category | undefined {
    return this.db.get<Category>('SELECT id AS category_id, name, parent_id, memo, owner, created_at FROM categories WHERE id = ?', [id]);
  }
  findCategoryByKey(key: string): Category | undefined {
    return this.db.get<Category>('SELECT id AS category_id, name, parent_id, memo, owner, created_at FROM categories WHERE name_key = ?', [key]);
  }
  insertCategory(name: string, key: string, parentId: number | null, memo: string | null, st: Stamp): number {
    return this.db.run('INSERT INTO categories(name, name_key, parent_id, memo, owner, session_id, created_at) VALUES (?,?,?,?,?,?,?)', [
      name,
      key,
      parentId,
      memo,
      st.owner,
      st.session_id,
      st.now,
    ]).lastId;
  }

  listSegmentsForSource(sourceId: number): Segment[] {
    return this.db.all<Segment>(`SELECT ${SEGMENT_COLS} FROM segments WHERE source_id = ? ORDER BY start_pos, end_pos, id`, [sourceId]);
  }
  listSegmentsForCode(codeId: number): Segment[] {
    return this.db.all<Segment>(`SELECT ${SEGMENT_COLS} FROM segments WHERE code_id = ? ORDER BY source_id, start_pos, id`, [codeId]);
  }
  getSegment(id: number): Segment | undefined {
    return this.db.get<Segment>(`SELECT ${SEGMENT_COLS} FROM segments WHERE id = ?`, [id]);
  }
  findSegment(codeId: number, sourceId: number, start: number, end: number): Segment | undefined {
    return this.db.get<Segment>(`SELECT ${SEGMENT_COLS} FROM segments WHERE source_id = ? AND start_pos = ? AND end_pos = ? AND code_id = ?`, [
      sourceId,
      start,
      end,
      codeId,
    ]);
  }
  insertSegment(seg: NewSegment, st: Stamp): number {
    return this.db.run(
      'INSERT INTO segments(code_id, source_id, start_pos, end_pos, text, memo, importance, owner, session_id, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)',
      [seg.code_id, seg.source_id, seg.start_pos, seg.end_pos, seg.text, seg.memo, seg.importance, st.owner, st.session_id, st.now, st.now],
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
    return (
      this.db.run('DELETE FROM segments WHERE code_id = ?', [codeId]).changes +
      this.db.run('DELETE FROM av_segments WHERE code_id = ?', [codeId]).changes
    );
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
    return this.db.get<SourceInfo>(`SELECT s.id AS source_id, s.name, s.type FROM sources s WHERE s.name = ?`, [name]);
  }
  findSourceByPath(filePath: string): SourceInfo | undefined {
    return this.db.get<SourceInfo>(`SELECT s.id AS source_id, s.name, s.type, s.file_path FROM sources s WHERE s.file_path = ? ORDER BY s.id LIMIT 1`, [filePath]);
  }
  insertSource(src: NewSource, st: Stamp): number {
    return this.db.run(
      `INSERT INTO sources(name, type, content, content_length, memo, origin, file_path, mime, size_bytes, folder_id, owner, session_id, created_at, updated_at)
       VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
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
        st.now,
        st.now,
      ],
    ).lastId;
  }
  deleteSource(id: number): void {
    this.db.run('DELETE FROM source_metadata_hints WHERE source_id = ?', [id]);
    this.db.run('DELETE FROM orphan_segments WHERE source_id = ?', [id]);
    this.db.run('DELETE FROM sources WHERE id = ?', [id]);
    // cases: the source's memberships go with it (the foreign keys cascade too; this keeps it explicit)
    this.db.run('DELETE FROM case_sources WHERE source_id = ?', [id]);
    this.db.run('DELETE FROM case_segments WHERE source_id = ?', [id]);
  }
  setSourceFolder(id: number, folderId: number | null, now: string): void {
    this.db.run('UPDATE sources SET folder_id = ?, updated_at = ? WHERE id = ?', [folderId, now, id]);
  }
  insertMetadataHint(
    sourceId: number,
    hint: { language: string | null; topics: string[] | null; organization_suggestion: string | null },
    st: Stamp,
  ): number {
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
    return this.db.run('UPDATE segments SET start_pos = start_pos + ?, end_pos = end_pos + ? WHERE source_id = ? AND start_pos >= ?', [delta, delta, sourceId, from])
      .changes;
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
      [seg.segment_id, seg.code_id, seg.source_id, seg.start_pos, seg.end_pos, seg.text, seg.memo, seg.importance, seg.owner, seg.session_id, seg.created_at, now, reason],
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

  insertEvent(e: EventRecord): number {
    return this.db.run(
      `INSERT INTO events(event_id, event_type, timestamp, aggregate_type, aggregate_id, session_id, client_type, user, correlation_id, payload)
       VALUES (?,?,?,?,?,?,?,?,?,?)`,
      [
        e.event_id,
        e.event_type,
        e.timestamp,
        e.aggregate_type,
        e.aggregate_id,
        e.caused_by.session_id,
        e.caused_by.client_type,
        e.caused_by.user,
        e.metadata.correlation_id,
        JSON.stringify(e.payload),
      ],
    ).lastId;
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
    this.db.run('INSERT INTO case_sources(case_id, source_id, owner, session_id, created_at) VALUES (?,?,?,?,?)', [caseId, sourceId, st.owner, st.session_id, st.now]);
    return true;
  }
  listCaseSegments(caseId: number): CaseSegment[] {
    return this.db.all<CaseSegment>(`SELECT ${CASE_SEGMENT_COLS} WHERE g.case_id = ? ORDER BY s.name COLLATE NOCASE, g.source_id, g.start_pos, g.end_pos, g.id`, [caseId]);
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
    return this.db.get<CaseSegment>(`SELECT ${CASE_SEGMENT_COLS} WHERE g.case_id = ? AND g.source_id = ? AND g.start_pos = ? AND g.end_pos = ?`, [caseId, sourceId, start, end]);
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
    r.type === 'number' ? Number(r.value_number) : r.type === 'boolean' ? r.value_boolean === 1 : r.type === 'date' ? String(r.value_date) : String(r.value_text);
  return { case_id: r.case_id, name: r.name, type: r.type, value, updated_at: r.updated_at };
}
