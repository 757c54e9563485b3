/**
 * Merge conflicts the researcher resolves (issue 16 item 4). A merge of two histories (src/vcs/merge) keeps ours
 * wherever both sides disagree and reports a {@link MergeConflict} for each disagreement; they are stored in table
 * `merge_conflicts` (migration 18), so they survive restarts, until the researcher resolves each one with
 * {@link resolveMergeConflict}: keep ours, take theirs, keep both, or write a value of their own. Resolving goes
 * through the same domain operations the tools use (renaming a code, moving it, writing a memo, editing a
 * transcript with the editor's edit tracking, deleting), so it emits their events and is undoable like them.
 */
import { ToolError } from '../core/errors';
import { codePointLength, sliceCp } from '../core/text';
import { deleteCategory, renameCategory, updateCategoryMemo } from './categories';
import { deleteCase, renameCase } from './cases';
import { deleteCode, moveCodeToCategory, renameCode, setCodeColor, updateCodeMemo } from './codebook';
import { updateSegmentMemo } from './coding';
import type { DomainContext } from './events';
import { updateCaseMemo } from './memos';
import type { ProjectRepository } from './ports';
import { applySourceEdits } from './sourceEdits';
import { deleteFolder, deleteSource, moveSourceToFolder, renameFolder, renameSource, updateSourceMemo } from './sources';

type Ctx = DomainContext<ProjectRepository>;

/** The kinds of merge conflict (see {@link MergeConflict}). */
export type MergeConflictKind =
  /** renamed on both sides to different names */
  | 'code_renamed_both'
  | 'category_renamed_both'
  | 'source_renamed_both'
  | 'case_renamed_both'
  | 'folder_renamed_both'
  /** deleted on one side while the other side uses it (a code with new codings, a category with codes, ...): kept */
  | 'code_deleted_used'
  | 'category_deleted_used'
  | 'source_deleted_used'
  | 'folder_deleted_used'
  | 'case_deleted_used'
  /** deleted on one side and edited (not used) on the other: the merged project keeps ours */
  | 'deleted_edited'
  /** moved to different places on both sides (a code's category, a category's parent, a source's folder); also a code created on both sides in different categories */
  | 'code_moved_both'
  | 'category_moved_both'
  | 'source_moved_both'
  /** a memo (code, category, source, segment, case) edited on both sides */
  | 'memo_edited_both'
  /** the same passage of a transcript edited differently on both sides */
  | 'source_text_overlap'
  /** a coding given different codes on both sides */
  | 'segment_recoded_both'
  /** two different entities that would share a name that must be unique: the non-ours one was renamed "name (2)" */
  | 'name_clash'
  /** any other field edited on both sides (a colour, an attribute value) */
  | 'field_edited_both';

/**
 * One disagreement a merge found. `ours`, `theirs` and `base` are JSON values (null where a side has none: a
 * deletion, or no common ancestor); for `source_text_overlap` each is `{text, start_pos, end_pos}` (code points:
 * ours' in the merged text, theirs' in theirs' text; base has `text` only); for deletions each is the entity's
 * row (without a source's text) or null.
 */
export interface MergeConflict {
  /** stable: the same disagreement about the same entity has the same id in every merge (24 hex digits) */
  conflict_id: string;
  kind: MergeConflictKind;
  entity: {
    /** the table of the entity (codes, categories, sources, segments, ...) */
    table: string;
    /** its GUID (for an entity without one, its merge key) */
    guid: string;
    /** its name, or a coding's text */
    name: string;
    /** its integer id in the merged project; null when it is not in it */
    local_id: number | null;
    /** the column in conflict, for field conflicts */
    field?: string;
  };
  /** what the merged project holds, except for delete versus use (where the used entity is kept) */
  ours: unknown;
  theirs: unknown;
  base: unknown;
}

/** How a conflict is resolved: keep ours, take theirs, keep both (memos, texts), or a value of the researcher's own. */
export type MergeConflictChoice = 'ours' | 'theirs' | 'both' | 'edit';

/** A conflict as stored (table `merge_conflicts`). Times are ISO 8601 UTC. */
export interface StoredMergeConflict extends MergeConflict {
  status: 'open' | 'resolved';
  /** the merge that found it (e.g. the remote commit merged), free text; null when not given */
  merge_ref: string | null;
  created_at: string;
  choice: MergeConflictChoice | null;
  /** the value the resolution applied (JSON), null for open conflicts */
  resolution: unknown;
  resolved_by: string | null;
  resolved_at: string | null;
}

/**
 * Stores the conflicts of one merge (inside the caller's transaction): a conflict already stored (same id) is
 * opened again with the new values. Returns how many were stored.
 */
export function recordMergeConflicts(ctx: Ctx, conflicts: readonly MergeConflict[], mergeRef: string | null): number {
  ctx.repo.saveMergeConflicts(conflicts, mergeRef, ctx.now);
  return conflicts.length;
}

/** Id of an entity named by a conflict, or INVALID_ARGUMENTS when the merged project does not hold it. */
function localId(c: StoredMergeConflict): number {
  if (typeof c.entity.local_id !== 'number')
    throw new ToolError('INVALID_ARGUMENTS', `The ${c.entity.table} entity "${c.entity.name}" of conflict ${c.conflict_id} is not in the project`);
  return c.entity.local_id;
}

function unsupported(c: StoredMergeConflict, choice: MergeConflictChoice): never {
  throw new ToolError(
    'INVALID_ARGUMENTS',
    `Conflict ${c.conflict_id} (${c.kind}) cannot be resolved with "${choice}"; choose ${choicesFor(c.kind).join(', ')}`,
  );
}

/** The choices a conflict kind accepts. */
export function choicesFor(kind: MergeConflictKind): MergeConflictChoice[] {
  if (kind === 'memo_edited_both' || kind === 'source_text_overlap') return ['ours', 'theirs', 'both', 'edit'];
  if (kind.endsWith('_deleted_used') || kind === 'deleted_edited') return ['ours', 'theirs'];
  return ['ours', 'theirs', 'edit'];
}

/**
 * Resolves conflict `conflictId` with `choice` (`value` for `edit`: a name, a memo, a passage's text, a
 * category id or null): applies it to the project and marks the conflict resolved. `ours` changes nothing but
 * the conflict (the merged project holds ours), except for delete versus use when ours deleted the entity (then
 * it is deleted, with its codings). Returns the resolved conflict and what was done, in words.
 *
 * Errors: MERGE_CONFLICT_NOT_FOUND (no conflict with that id, or it is resolved already); INVALID_ARGUMENTS (a
 * choice the kind does not take, `edit` without a value of the right type, the entity no longer in the project);
 * VERSION_CONFLICT (a text passage changed since the merge); plus the errors of the operation applied
 * (DUPLICATE_NAME, CATEGORY_NOT_FOUND, ...). Nothing is written on error.
 */
export function resolveMergeConflict(
  ctx: Ctx,
  conflictId: string,
  choice: MergeConflictChoice,
  value?: unknown,
): { conflict: StoredMergeConflict; applied: string } {
  const c = ctx.repo.getMergeConflict(conflictId);
  if (!c) throw new ToolError('MERGE_CONFLICT_NOT_FOUND', `No merge conflict with conflict_id "${conflictId}" (list_merge_conflicts lists them)`);
  if (c.status !== 'open')
    throw new ToolError(
      'MERGE_CONFLICT_NOT_FOUND',
      `Merge conflict "${conflictId}" was resolved already (${c.choice ?? ''} by ${c.resolved_by ?? 'someone'} at ${c.resolved_at ?? '?'})`,
    );
  if (!choicesFor(c.kind).includes(choice)) unsupported(c, choice);
  if (choice === 'edit' && value === undefined) throw new ToolError('INVALID_ARGUMENTS', `choice "edit" needs a value`);
  const { resolution, applied } = applyChoice(ctx, c, choice, value);
  ctx.repo.markMergeConflictResolved(conflictId, { choice, resolution, resolved_by: ctx.actor.user, resolved_at: ctx.now });
  return { conflict: ctx.repo.getMergeConflict(conflictId)!, applied };
}

function text(v: unknown, what: string): string {
  if (typeof v !== 'string') throw new ToolError('INVALID_ARGUMENTS', `${what} must be a string`);
  return v;
}

function applyChoice(ctx: Ctx, c: StoredMergeConflict, choice: MergeConflictChoice, value: unknown): { resolution: unknown; applied: string } {
  if (choice === 'ours' && !c.kind.endsWith('_deleted_used') && c.kind !== 'deleted_edited')
    return { resolution: c.ours, applied: 'kept ours (nothing changed)' };
  switch (c.kind) {
    case 'code_renamed_both':
    case 'category_renamed_both':
    case 'source_renamed_both':
    case 'case_renamed_both':
    case 'folder_renamed_both':
    case 'name_clash': {
      const name = text(choice === 'edit' ? value : c.kind === 'name_clash' ? c.ours : c.theirs, 'The name');
      if (c.kind === 'name_clash' && choice === 'theirs') return { resolution: c.theirs, applied: 'kept the new name' };
      rename(ctx, c.entity.table, localId(c), name);
      return { resolution: name, applied: `renamed to "${name}"` };
    }
    case 'code_moved_both':
    case 'source_moved_both': {
      const target = choice === 'edit' ? value : c.theirs;
      if (target !== null && typeof target !== 'number') throw new ToolError('INVALID_ARGUMENTS', 'The value must be an id or null');
      if (c.kind === 'code_moved_both') moveCodeToCategory(ctx, localId(c), target);
      else moveSourceToFolder(ctx, localId(c), target);
      return {
        resolution: target,
        applied: target === null ? 'moved to the top level' : `moved to ${c.kind === 'code_moved_both' ? 'category' : 'folder'} ${target}`,
      };
    }
    case 'memo_edited_both': {
      const memo =
        choice === 'edit'
          ? value === null
            ? null
            : text(value, 'The memo')
          : choice === 'theirs'
            ? (c.theirs as string | null)
            : [c.ours, c.theirs].filter((m) => typeof m === 'string' && m !== '').join('\n\n');
      setMemo(ctx, c.entity.table, localId(c), memo);
      return { resolution: memo, applied: choice === 'both' ? 'kept both memos' : 'memo written' };
    }
    case 'source_text_overlap':
      return resolveText(ctx, c, choice, value);
    case 'field_edited_both': {
      if (c.entity.table === 'codes' && c.entity.field === 'color') {
        const color = text(choice === 'edit' ? value : c.theirs, 'The colour');
        setCodeColor(ctx, localId(c), color);
        return { resolution: color, applied: `colour set to ${color}` };
      }
      throw new ToolError(
        'INVALID_ARGUMENTS',
        `Conflict ${c.conflict_id} on ${c.entity.table}.${c.entity.field ?? '?'} can only be kept as ours; change the field with its own tool, then resolve with "ours"`,
      );
    }
    case 'segment_recoded_both':
      throw new ToolError(
        'INVALID_ARGUMENTS',
        `Conflict ${c.conflict_id} can only be kept as ours; re-code the segment with its tools, then resolve with "ours"`,
      );
    default: {
      // delete versus use, deleted versus edited: the side whose value is null deleted the entity
      const chosen = choice === 'ours' ? c.ours : c.theirs;
      if (chosen !== null) {
        if (c.entity.local_id === null)
          throw new ToolError(
            'INVALID_ARGUMENTS',
            `The ${c.entity.table} entity "${c.entity.name}" was deleted by the merge; restore it from the history (restore_snapshot) to keep it`,
          );
        return { resolution: chosen, applied: 'kept it' };
      }
      if (c.entity.local_id === null) return { resolution: null, applied: 'kept it deleted' };
      remove(ctx, c.entity.table, c.entity.local_id);
      return { resolution: null, applied: 'deleted it' };
    }
  }
}

function rename(ctx: Ctx, table: string, id: number, name: string): void {
  if (table === 'codes') renameCode(ctx, id, name);
  else if (table === 'categories') renameCategory(ctx, id, name);
  else if (table === 'sources') renameSource(ctx, id, name);
  else if (table === 'cases') renameCase(ctx, id, name);
  else if (table === 'folders') renameFolder(ctx, id, name);
  else throw new ToolError('INVALID_ARGUMENTS', `Entities of ${table} have no name to set`);
}

function setMemo(ctx: Ctx, table: string, id: number, memo: string | null): void {
  if (table === 'codes') updateCodeMemo(ctx, id, memo);
  else if (table === 'categories') updateCategoryMemo(ctx, id, memo);
  else if (table === 'sources') updateSourceMemo(ctx, id, memo);
  else if (table === 'segments') updateSegmentMemo(ctx, id, memo);
  else if (table === 'cases') updateCaseMemo(ctx, id, memo);
  else throw new ToolError('INVALID_ARGUMENTS', `Entities of ${table} have no memo to set`);
}

function remove(ctx: Ctx, table: string, id: number): void {
  if (table === 'codes') deleteCode(ctx, id, true);
  else if (table === 'categories') deleteCategory(ctx, id, undefined);
  else if (table === 'sources') deleteSource(ctx, id);
  else if (table === 'folders') deleteFolder(ctx, id);
  else if (table === 'cases') deleteCase(ctx, id);
  else throw new ToolError('INVALID_ARGUMENTS', `Entities of ${table} cannot be deleted from here`);
}

/**
 * A transcript passage both sides edited: the merged text holds ours' passage at `ours.start_pos..end_pos`;
 * theirs / both / edit replace it through the editor's edit tracking (codings on it move or are orphaned as in
 * the editor). VERSION_CONFLICT when the passage is no longer there as the merge left it.
 */
function resolveText(ctx: Ctx, c: StoredMergeConflict, choice: MergeConflictChoice, value: unknown): { resolution: unknown; applied: string } {
  const ours = c.ours as { text: string; start_pos: number; end_pos: number };
  const theirs = c.theirs as { text: string };
  const id = localId(c);
  const current = ctx.repo.getSourceText(id) ?? '';
  if (ours.end_pos > codePointLength(current) || sliceCp(current, ours.start_pos, ours.end_pos) !== ours.text) {
    throw new ToolError(
      'VERSION_CONFLICT',
      `The passage "${ours.text.slice(0, 80)}" of "${c.entity.name}" changed since the merge; edit the source by hand, then resolve with "ours"`,
    );
  }
  let replacement: string;
  if (choice === 'both') {
    // theirs' passage goes right after ours', so codings on ours' passage stay where they are
    const gap = /\s$/.test(ours.text) || /^\s/.test(theirs.text) || ours.text === '' || theirs.text === '' ? '' : ' ';
    replacement = `${ours.text}${gap}${theirs.text}`;
    applySourceEdits(ctx, id, [{ start_pos: ours.end_pos, end_pos: ours.end_pos, text: `${gap}${theirs.text}` }]);
  } else {
    replacement = choice === 'theirs' ? theirs.text : text(value, 'The passage');
    if (replacement !== ours.text) applySourceEdits(ctx, id, [{ start_pos: ours.start_pos, end_pos: ours.end_pos, text: replacement }]);
  }
  return {
    resolution: { text: replacement, start_pos: ours.start_pos, end_pos: ours.start_pos + codePointLength(replacement) },
    applied: choice === 'both' ? 'kept both passages' : 'passage replaced',
  };
}
