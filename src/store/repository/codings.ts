import type { Segment, SegmentMark } from '../../domain/model';
import type { AvSegment, CodingRepository, NewAvSegment, NewSegment, Stamp } from '../../domain/ports';
import type { ProjectStore } from '../projectStore';

const SEGMENT_COLS = `id AS segment_id, code_id, source_id, start_pos, end_pos, text, memo, importance, owner, session_id, coder_role, created_at`;

/** {@link SEGMENT_COLS} without the text. */
const SEGMENT_MARK_COLS = `id AS segment_id, code_id, source_id, start_pos, end_pos, memo, importance, owner, session_id, coder_role, created_at`;

const AV_SEGMENT_COLS = 'id AS segment_id, code_id, source_id, start_ms, end_ms, transcript, memo, owner, session_id, coder_role, created_at';

/** {@link CodingRepository} over a {@link ProjectStore}: tables `segments`, `av_segments`, `orphan_segments`. */
export class SqlCodingRepository implements CodingRepository {
  constructor(private readonly db: ProjectStore) {}

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
  segmentsOverlapping(sourceId: number, start: number, end: number): Segment[] {
    return this.db.all<Segment>(`SELECT ${SEGMENT_COLS} FROM segments WHERE source_id = ? AND start_pos < ? AND end_pos > ? ORDER BY start_pos, id`, [
      sourceId,
      end,
      start,
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
  listCoders(): { coder: string; segments: number }[] {
    return this.db.all<{ coder: string; segments: number }>('SELECT owner AS coder, count(*) AS segments FROM segments GROUP BY owner ORDER BY owner');
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
  deleteSegment(id: number): void {
    this.db.run('DELETE FROM segments WHERE id = ?', [id]);
  }
  setSegmentMemo(id: number, memo: string | null, now: string): void {
    this.db.run('UPDATE segments SET memo = ?, updated_at = ? WHERE id = ?', [memo, now, id]);
  }
  updateSegmentRange(id: number, start: number, end: number, text: string, now: string): void {
    this.db.run('UPDATE segments SET start_pos = ?, end_pos = ?, text = ?, updated_at = ? WHERE id = ?', [start, end, text, now, id]);
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
}
