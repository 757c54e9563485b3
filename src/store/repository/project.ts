import type { ProjectInfoRepository, StoredBriefing } from '../../domain/ports';
import type { ProjectStore } from '../projectStore';

/** {@link ProjectInfoRepository} over a {@link ProjectStore}: the tables' row counts and meta row `project_briefing`. */
export class SqlProjectInfoRepository implements ProjectInfoRepository {
  constructor(private readonly db: ProjectStore) {}

  counts(): { sources: number; codes: number; categories: number; segments: number; av_segments: number; folders: number } {
    const r = this.db.get<{ sources: number; codes: number; categories: number; segments: number; av_segments: number; folders: number }>(
      `SELECT (SELECT count(*) FROM sources) AS sources, (SELECT count(*) FROM codes) AS codes,
        (SELECT count(*) FROM categories) AS categories, (SELECT count(*) FROM segments) AS segments,
        (SELECT count(*) FROM av_segments) AS av_segments, (SELECT count(*) FROM folders) AS folders`,
    );
    if (!r) throw new Error('count query returned nothing');
    return r;
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
}
