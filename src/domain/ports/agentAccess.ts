/** What a researcher can close to agents: a source, a folder (with its sub-folders) or a case. */
export type AgentAccessKind = 'source' | 'folder' | 'case';

/** One closed target: a source, a folder (with its sub-folders) or a case (its member sources and ranges' sources). */
export interface AgentAccessRule {
  target_kind: AgentAccessKind;
  target_id: number;
  /** the target's name (source name, folder name, case name), or null when it no longer exists */
  target_name: string | null;
  access: 'closed';
  /** the agents it is closed to, by name; null: every agent */
  agents: string[] | null;
  /** the coder who closed it */
  set_by: string;
  /** ISO 8601 UTC time it was closed */
  set_at: string;
}

/** A source closed to agents, and through which rule (a source closed directly and via a folder appears once per rule). */
export interface ClosedSourceRow {
  source_id: number;
  /** the source's name (its title) */
  source_name: string;
  /** the agents it is closed to; null: every agent */
  agents: string[] | null;
  via_kind: AgentAccessKind;
  via_id: number;
}

/** Sources, folders and cases a researcher closed to agents (table `agent_access`; enforced by src/agent/agentAccess.ts). */
export interface AgentAccessRepository {
  /** Every closed target, sources first, then folders, then cases, each by id. */
  listAgentAccess(): AgentAccessRule[];
  /**
   * Closes a target to `agents` (null: every agent), replacing an earlier rule of the same target, or opens it
   * again (`access` open: the rule is deleted; nothing written when there was none). Runs inside the caller's
   * transaction.
   */
  setAgentAccess(kind: AgentAccessKind, id: number, access: 'closed' | 'open', agents: string[] | null, setBy: string, now: string): void;
  /**
   * Every source closed by a rule, by source id: directly, through a closed folder or an ancestor of its folder,
   * or a closed case it (or a range of it) belongs to.
   */
  listClosedSources(): ClosedSourceRow[];
}
