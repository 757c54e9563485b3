import type { MergeConflict, MergeConflictChoice, StoredMergeConflict } from '../mergeConflicts';

/**
 * The conflicts a merge of two histories left for the researcher to resolve (table `merge_conflicts`;
 * src/domain/mergeConflicts.ts). `ours`, `theirs`, `base` and a resolution are stored as JSON.
 */
export interface MergeConflictRepository {
  /** Stores the conflicts of one merge; a stored conflict with the same id is opened again with the new values. Runs inside the caller's transaction. */
  saveMergeConflicts(conflicts: readonly MergeConflict[], mergeRef: string | null, now: string): void;
  /** The stored conflicts, open ones first, each group oldest first; `status` narrows to open or resolved ones. */
  listMergeConflicts(status?: 'open' | 'resolved'): StoredMergeConflict[];
  /** One stored conflict, or undefined. */
  getMergeConflict(conflictId: string): StoredMergeConflict | undefined;
  /** Marks a conflict resolved (`resolution` is stored as JSON). Runs inside the caller's transaction. */
  markMergeConflictResolved(conflictId: string, r: { choice: MergeConflictChoice; resolution: unknown; resolved_by: string; resolved_at: string }): void;
}
