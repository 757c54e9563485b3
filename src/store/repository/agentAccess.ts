import type { AgentAccessKind, AgentAccessRepository, AgentAccessRule, ClosedSourceRow } from '../../domain/ports';
import type { ProjectStore } from '../projectStore';

/** {@link AgentAccessRepository} over a {@link ProjectStore}: table `agent_access`. */
export class SqlAgentAccessRepository implements AgentAccessRepository {
  constructor(private readonly db: ProjectStore) {}

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
