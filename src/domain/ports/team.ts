import type { CoderRole } from '../model';

/** The team setting as the project stores it (meta row `team_settings`, a JSON object). */
export interface StoredTeamSettings {
  /** true while blind coding is on: each coder sees only their own codings, the lead sees all */
  blind: boolean;
  /** the researcher's coder name who leads (sees all, may end blind coding); null: nobody named */
  lead: string | null;
  /** ISO 8601 UTC time blind coding was last switched on; null while it never was */
  blind_since: string | null;
  /** ISO 8601 UTC time of the last change */
  updated_at: string;
  /** the coder who changed it last */
  updated_by: string;
}

/**
 * A coder whose own codings a read is limited to: `coder` is the segment owner (the coder name), `role` the coder's
 * role. A segment is that coder's when its owner is `coder` and its `coder_role` is `role` (a NULL role, from before
 * roles, counts as the researcher's), so an agent naming a human's coder name does not see the human's codings.
 */
export interface CoderScope {
  coder: string;
  role: CoderRole;
}

/**
 * Blind coding (src/domain/teamSettings.ts): the project's team setting, and the reads that limit a coder to their
 * own codings.
 */
export interface TeamRepository {
  /** The stored team setting, or undefined when none was ever saved (or the row is not a JSON object). */
  teamSettings(): StoredTeamSettings | undefined;
  /** Stores the team setting (replacing the stored one). Runs inside the caller's transaction. */
  setTeamSettings(settings: StoredTeamSettings): void;
  /**
   * The codings of one coder (text and AV segments) counted per code and source: one row per (code_id, source_id)
   * with `text` and `av` counts. `codeId` / `sourceId` narrow it to one code or one source.
   */
  coderCodingCounts(scope: CoderScope, only?: { codeId?: number; sourceId?: number }): { code_id: number; source_id: number; text: number; av: number }[];
  /** The ids of one coder's text segments, ascending. */
  coderSegmentIds(scope: CoderScope): number[];
}
