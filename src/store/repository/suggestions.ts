import type {
  NewSuggestion,
  NewSuggestionBatch,
  SegmentProvenance,
  Stamp,
  SuggestionBatchRecord,
  SuggestionDecision,
  SuggestionFilter,
  SuggestionKind,
  SuggestionRecord,
  SuggestionRepository,
} from '../../domain/ports';
import type { ProjectStore } from '../projectStore';

/** Columns of a suggestion row as the domain's {@link SuggestionRecord}. */
const SUGGESTION_COLS = `id AS suggestion_id, kind, status, batch_id, name, color, memo, category_id, sample_contexts, code_id, target_code_id, source_id,
  start_pos, end_pos, text, rationale, confidence, details, suggested_by, suggested_by_session, created_at, approved_by, approved_by_session, approved_at,
  rejected_by, rejected_by_session, rejected_at, reason, feedback, result, error_code, error`;

/** {@link SuggestionRepository} over a {@link ProjectStore}: tables `suggestions`, `suggestion_batches`, `segment_provenance`. */
export class SqlSuggestionRepository implements SuggestionRepository {
  constructor(private readonly db: ProjectStore) {}

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
}
