import type { ApprovalRecord, ApprovalRepository, EntityRef, EntityVersion } from '../../domain/ports';
import type { ProjectStore } from '../projectStore';

/** One fixed query per entity kind of {@link SqlApprovalRepository.entityVersions}: the row's name (a segment has none), or no row. */
const ENTITY_NAME_SQL: Readonly<Record<EntityRef['kind'], string>> = {
  code: 'SELECT name FROM codes WHERE id = ?',
  category: 'SELECT name FROM categories WHERE id = ?',
  source: 'SELECT name FROM sources WHERE id = ?',
  segment: 'SELECT NULL AS name FROM segments WHERE id = ?',
};

/** {@link ApprovalRepository} over a {@link ProjectStore}: tables `approval_requests` and `entity_versions`. */
export class SqlApprovalRepository implements ApprovalRepository {
  constructor(private readonly db: ProjectStore) {}

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
  /** Versions of `refs` (migration 13): 1 + the changes the triggers counted; null for an entity that does not exist. */
  entityVersions(refs: readonly EntityRef[]): EntityVersion[] {
    return refs.map((r) => {
      const row = this.db.get<{ name: string | null }>(ENTITY_NAME_SQL[r.kind], [r.id]);
      if (!row) return { kind: r.kind, id: r.id, version: null, name: null };
      const v = this.db.get<{ version: number }>('SELECT version FROM entity_versions WHERE kind = ? AND id = ?', [r.kind, r.id]);
      return { kind: r.kind, id: r.id, version: v?.version ?? 1, name: row.name };
    });
  }
}
