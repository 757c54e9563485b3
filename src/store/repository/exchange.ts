import type { ExchangeGuid, ExchangeGuidKind, ExchangeRepository } from '../../domain/ports';
import type { ProjectStore } from '../projectStore';

/** {@link ExchangeRepository} over a {@link ProjectStore}: meta row `project_guid`, table `exchange_guids`, and every entity table's `guid`. */
export class SqlExchangeRepository implements ExchangeRepository {
  constructor(private readonly db: ProjectStore) {}

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
}
