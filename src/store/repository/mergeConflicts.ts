import type { MergeConflict, MergeConflictChoice, StoredMergeConflict } from '../../domain/mergeConflicts';
import type { MergeConflictRepository } from '../../domain/ports';
import type { ProjectStore } from '../projectStore';

/** {@link MergeConflictRepository} over a {@link ProjectStore}: table `merge_conflicts`. */
export class SqlMergeConflictRepository implements MergeConflictRepository {
  constructor(private readonly db: ProjectStore) {}

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
