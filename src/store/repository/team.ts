import type { CoderScope, StoredTeamSettings, TeamRepository } from '../../domain/ports';
import type { ProjectStore } from '../projectStore';

/** A coder's codings (a CoderScope's role as `?`): a NULL role (from before roles) counts as the researcher's. */
const CODER_ROLE_MATCH = `(CASE WHEN coder_role = 'agent' THEN 'agent' ELSE 'researcher' END) = ?`;

/** {@link TeamRepository} over a {@link ProjectStore}: meta row `team_settings`, and one coder's rows of `segments` and `av_segments`. */
export class SqlTeamRepository implements TeamRepository {
  constructor(private readonly db: ProjectStore) {}

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
}
