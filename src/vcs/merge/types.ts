/**
 * The conflict model of a merge of two histories (issue 16, items 3 and 4). A conflict names the entity by its
 * table and GUID (see src/vcs/merge/mergeDumps.ts for where GUIDs come from), keeps the three values (base,
 * ours, theirs; JSON values, null where a side has none), and says which value the merged project holds: always
 * ours, except for delete versus use, where the used entity is kept (deleting it would lose the other side's
 * codings).
 */

export type { MergeConflict, MergeConflictKind } from '../../domain/mergeConflicts';

/** What a merge did, in counts. */
export interface MergeSummary {
  /** rows taken from theirs (new there, or changed there only), by table */
  from_theirs: Record<string, number>;
  /** rows deleted because one side deleted them, by table */
  deleted: Record<string, number>;
  /** entities created on both sides that became one (codes, categories, folders, cases, sources) */
  unified: number;
  /** sources whose text both sides edited and that were merged */
  texts_merged: number;
  /** codings moved onto the merged text */
  segments_reanchored: number;
  /** codings whose text was deleted by the merge (moved to orphan_segments) */
  segments_orphaned: number;
  /** theirs' rows given a new local id */
  renumbered: number;
  conflicts: number;
}
