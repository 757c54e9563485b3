import type {
  AttributeType,
  AttributeValue,
  CaseAttribute,
  CaseCoding,
  CaseRecord,
  CaseRepository,
  CaseSegment,
  CaseSourceLink,
  CaseWithCounts,
  NewCaseSegment,
  Stamp,
} from '../../domain/ports';
import type { ProjectStore } from '../projectStore';
import { attributeValueOf, attributeValueParams, type AttributeValueColumns } from './shared';

const CASE_COLS = `k.id AS case_id, k.name, k.memo, k.owner, k.session_id, k.created_at, k.updated_at,
  (SELECT count(*) FROM case_sources m WHERE m.case_id = k.id) AS source_count,
  (SELECT count(*) FROM case_segments g WHERE g.case_id = k.id) AS segment_count,
  (SELECT count(*) FROM case_attributes a WHERE a.case_id = k.id) AS attribute_count`;

const CASE_SEGMENT_COLS = `g.id AS case_segment_id, g.case_id, g.source_id, s.name AS source_name, g.start_pos, g.end_pos, g.text, g.owner, g.session_id, g.created_at
  FROM case_segments g JOIN sources s ON s.id = g.source_id`;

/** {@link CaseRepository} over a {@link ProjectStore}: tables `cases`, `case_sources`, `case_segments`, `case_attributes`. */
export class SqlCaseRepository implements CaseRepository {
  constructor(private readonly db: ProjectStore) {}

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
  updateCaseMemo(id: number, memo: string | null, now: string): void {
    this.db.run('UPDATE cases SET memo = ?, updated_at = ? WHERE id = ?', [memo, now, id]);
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
  updateCaseSegmentRange(id: number, start: number, end: number, text: string): void {
    this.db.run('UPDATE case_segments SET start_pos = ?, end_pos = ?, text = ? WHERE id = ?', [start, end, text, id]);
  }
  deleteCaseSegment(id: number): void {
    this.db.run('DELETE FROM case_segments WHERE id = ?', [id]);
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
      [caseId, name, type, ...attributeValueParams(type, value), now],
    );
  }
  deleteCaseAttribute(caseId: number, name: string): boolean {
    if (!this.db.get('SELECT 1 AS x FROM case_attributes WHERE case_id = ? AND name = ?', [caseId, name])) return false;
    this.db.run('DELETE FROM case_attributes WHERE case_id = ? AND name = ?', [caseId, name]);
    return true;
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
}

const ATTRIBUTE_COLS = 'case_id, name, type, value_text, value_number, value_date, value_boolean, updated_at';

/** A row of `case_attributes`. */
interface AttributeRow extends AttributeValueColumns {
  case_id: number;
  name: string;
  updated_at: string;
}

/** A stored attribute row as the domain's typed value (the column its type names). */
function attributeOf(r: AttributeRow): CaseAttribute {
  return { case_id: r.case_id, name: r.name, type: r.type, value: attributeValueOf(r), updated_at: r.updated_at };
}
