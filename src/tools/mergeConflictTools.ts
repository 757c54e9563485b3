import { z } from 'zod';
import { choicesFor, resolveMergeConflict, type StoredMergeConflict } from '../domain/mergeConflicts';
import { defineTool } from './defineTool';
import { args } from './schemas';

/**
 * Conflicts of a merge of two histories (issue 16 item 4; src/domain/mergeConflicts.ts). A merge keeps ours where
 * both sides disagree and stores each disagreement; the researcher lists them and resolves each one. Agents may
 * list them (to explain them, or to propose a resolution), but resolving is the researcher's: trust `merge`,
 * locked at Require (src/agent/trust.ts LOCKED_TOOLS), so an agent's resolve waits for the researcher's approval.
 */

/** A conflict as the tools return it: the stored record plus the choices its kind accepts. */
function conflictOut(c: StoredMergeConflict) {
  return { ...c, choices: choicesFor(c.kind) };
}

const CONFLICT_SHAPE =
  '{conflict_id, kind, entity: {table, guid, name, local_id, field?}, ours, theirs, base, status: open | resolved, merge_ref, created_at, choice, resolution, resolved_by, resolved_at, choices}';

export const listMergeConflictsTool = defineTool({
  name: 'list_merge_conflicts',
  group: 'version_control',
  title: 'List Merge Conflicts',
  description:
    'The conflicts merges of two histories left for the researcher (sync_project): a code renamed, moved or deleted-while-used on both sides, a memo or a ' +
    'transcript passage edited on both sides, two entities given one name. The project holds ours; ours, theirs and base show the three values ' +
    '(a text conflict: {text, start_pos, end_pos}, code points). Open conflicts first. ' +
    `Returns {conflicts: [${CONFLICT_SHAPE}], open, resolved}.`,
  input: args({ status: z.enum(['open', 'resolved', 'all']).optional().describe('which conflicts: open (default), resolved, or all') }),
  effect: 'read',
  trust: 'read',
  run: (ctx, input) => {
    const all = ctx.domain.repo.listMergeConflicts();
    const status = input.status ?? 'open';
    const conflicts = status === 'all' ? all : all.filter((c) => c.status === status);
    return {
      conflicts: conflicts.map(conflictOut),
      open: all.filter((c) => c.status === 'open').length,
      resolved: all.filter((c) => c.status === 'resolved').length,
    };
  },
});

export const resolveMergeConflictTool = defineTool({
  name: 'resolve_merge_conflict',
  group: 'version_control',
  title: 'Resolve Merge Conflict',
  description:
    "Resolve one merge conflict (list_merge_conflicts): ours keeps what the project holds; theirs applies the other side's value (a rename, a move, a memo, a " +
    'transcript passage, a deletion); both keeps both memos (joined by a blank line) or both passages (theirs right after ours); edit applies `value` ' +
    '(a name, a memo, a passage text, a category or folder id or null). Changes go through the usual operations (their events, undo; text through the ' +
    "editor's edit tracking, so codings move with it). For agents this always waits for the researcher's approval. " +
    `Returns {conflict: ${CONFLICT_SHAPE}, applied}. Errors: MERGE_CONFLICT_NOT_FOUND (unknown or resolved already), INVALID_ARGUMENTS (a choice the ` +
    'kind does not take; edit without value), VERSION_CONFLICT (the passage changed since the merge), and those of the operation applied (DUPLICATE_NAME, CATEGORY_NOT_FOUND, ...).',
  input: args({
    conflict_id: z.string().min(1).max(64).describe('the conflict, from list_merge_conflicts'),
    choice: z.enum(['ours', 'theirs', 'both', 'edit']).describe('ours | theirs | both | edit (the conflict lists the choices its kind takes)'),
    value: z
      .union([z.string().max(1_000_000), z.number().int(), z.null()])
      .optional()
      .describe('for edit: the name, memo, passage text, or category / folder id (null: none)'),
  }),
  effect: 'modify',
  trust: 'merge',
  run: (ctx, input) => {
    const { conflict, applied } = resolveMergeConflict(ctx.domain, input.conflict_id, input.choice, input.value);
    return { conflict: conflictOut(conflict), applied };
  },
});

/** The merge conflict tools, in registry order. */
export const MERGE_CONFLICT_TOOLS = [listMergeConflictsTool, resolveMergeConflictTool];
