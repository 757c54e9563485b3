/**
 * Managing code categories after they exist: rename, memo, delete (issue 13, item 4). Creation and the tree
 * are in codebook.ts. A category is a folder of the codebook: deleting one never deletes a code; its codes
 * and sub-categories go where the caller says (another category, or the root).
 */
import { ToolError } from '../core/errors';
import { countOf } from '../core/plural';
import { requireCategory } from './codebook';
import type { DomainContext } from './events';
import type { Category } from './model';
import type { ProjectRepository } from './ports';
import { cleanName, MAX_CODE_NAME, nameKey } from './rules';

type Ctx = DomainContext<ProjectRepository>;

/**
 * Renames a category. Names are unique among categories case-insensitively (the HTTP spec's rule 1, the
 * same `name_key` as create_category), 1-100 code points after NFC and trimming; the same name in another
 * case is a rename. Emits coding.category_renamed {category_id, old_name, new_name}.
 * Errors: CATEGORY_NOT_FOUND, DUPLICATE_NAME (another category has the name), INVALID_ARGUMENTS (empty or too long).
 */
export function renameCategory(ctx: Ctx, id: number, newName: string): { category: Category; old_name: string } {
  const category = requireCategory(ctx, id);
  const name = cleanName(newName, MAX_CODE_NAME, 'category', 'INVALID_ARGUMENTS');
  const key = nameKey(name);
  const clash = ctx.repo.findCategoryByKey(key);
  if (clash && clash.category_id !== id)
    throw new ToolError('DUPLICATE_NAME', `A category named "${clash.name}" already exists (category_id ${clash.category_id})`);
  ctx.repo.updateCategory(id, { name }, key);
  ctx.events.emit({
    event_type: 'coding.category_renamed',
    aggregate_type: 'category',
    aggregate_id: String(id),
    payload: { category_id: id, old_name: category.name, new_name: name },
  });
  return { category: requireCategory(ctx, id), old_name: category.name };
}

/**
 * Sets a category's memo; null or the empty string clears it. Emits coding.category_updated
 * {category_id, field: 'memo', old_value, new_value} (as update_code_memo emits coding.code_updated).
 * Errors: CATEGORY_NOT_FOUND.
 */
export function updateCategoryMemo(ctx: Ctx, id: number, memo: string | null): { old_memo: string | null; new_memo: string | null } {
  const category = requireCategory(ctx, id);
  const next = memo === null || memo === '' ? null : memo;
  ctx.repo.updateCategory(id, { memo: next }, null);
  ctx.events.emit({
    event_type: 'coding.category_updated',
    aggregate_type: 'category',
    aggregate_id: String(id),
    payload: { category_id: id, field: 'memo', old_value: category.memo, new_value: next },
  });
  return { old_memo: category.memo, new_memo: next };
}

/** What {@link deleteCategory} did. */
export interface CategoryDeleted {
  category: Category;
  /** where the codes and sub-categories went: a category id, null for the root, undefined when there were none to move */
  moved_to: number | null | undefined;
  /** the codes that were directly in the category, by id */
  code_ids: number[];
  /** the direct sub-categories, by id (their own codes and sub-categories stay in them) */
  sub_category_ids: number[];
}

/**
 * Deletes a category; never a code. An empty category (no codes, no sub-categories) is simply deleted. A
 * non-empty one is deleted only when `moveTo` says where its direct codes and direct sub-categories go:
 * a category id, or null for the root (codes uncategorised, sub-categories at the top level); the
 * sub-categories keep their own contents. `moveTo` undefined means "not said".
 *
 * Emits one coding.code_moved {code_id, old_category_id, new_category_id} per moved code (as
 * move_code_to_category does), then coding.category_deleted {category_id, name, parent_id, memo, moved_to,
 * code_ids, sub_category_ids, owner}.
 *
 * Errors (nothing is changed): CATEGORY_NOT_FOUND (the category, or `moveTo`), CATEGORY_NOT_EMPTY (codes or
 * sub-categories and no `moveTo`; the message and `details` give both counts), INVALID_ARGUMENTS (`moveTo` is
 * the category itself), CATEGORY_CYCLE (`moveTo` is inside the category: its sub-categories would become
 * their own ancestors).
 */
export function deleteCategory(ctx: Ctx, id: number, moveTo: number | null | undefined): CategoryDeleted {
  const category = requireCategory(ctx, id);
  const categories = ctx.repo.listCategories();
  if (moveTo !== undefined && moveTo !== null) {
    requireCategory(ctx, moveTo);
    if (moveTo === id)
      throw new ToolError(
        'INVALID_ARGUMENTS',
        `move_codes_to names the category being deleted ("${category.name}", category_id ${id}); name another category, or null for the root`,
      );
    const parentOf = new Map(categories.map((c) => [c.category_id, c.parent_id]));
    const seen = new Set<number>();
    for (let at: number | null | undefined = parentOf.get(moveTo); at != null && !seen.has(at); at = parentOf.get(at)) {
      seen.add(at);
      if (at === id) {
        throw new ToolError(
          'CATEGORY_CYCLE',
          `move_codes_to (category_id ${moveTo}) is inside "${category.name}", the category being deleted; name a category outside it, or null for the root`,
        );
      }
    }
  }
  const codeIds = ctx.repo
    .listCodes()
    .filter((c) => c.category_id === id)
    .map((c) => c.code_id)
    .sort((a, b) => a - b);
  const subIds = categories
    .filter((c) => c.parent_id === id)
    .map((c) => c.category_id)
    .sort((a, b) => a - b);
  if ((codeIds.length > 0 || subIds.length > 0) && moveTo === undefined) {
    const parts = [countOf(codeIds.length, 'code'), countOf(subIds.length, 'sub-category', 'sub-categories')].filter((p) => !p.startsWith('0 '));
    throw new ToolError(
      'CATEGORY_NOT_EMPTY',
      `The category "${category.name}" holds ${parts.join(' and ')}; pass move_codes_to (a category_id, or null for the root) to say where they go. Codes are never deleted with a category.`,
      { code_count: codeIds.length, sub_category_count: subIds.length },
    );
  }
  const target = moveTo ?? null;
  for (const codeId of codeIds) {
    ctx.repo.updateCode(codeId, { category_id: target }, null, ctx.now);
    ctx.events.emit({
      event_type: 'coding.code_moved',
      aggregate_type: 'code',
      aggregate_id: String(codeId),
      payload: { code_id: codeId, old_category_id: id, new_category_id: target },
    });
  }
  for (const subId of subIds) ctx.repo.updateCategory(subId, { parent_id: target }, null);
  ctx.repo.deleteCategory(id);
  const movedTo = codeIds.length > 0 || subIds.length > 0 ? target : undefined;
  ctx.events.emit({
    event_type: 'coding.category_deleted',
    aggregate_type: 'category',
    aggregate_id: String(id),
    // owner: who made it, kept when undo makes it again (src/domain/undoRedo.ts)
    payload: {
      category_id: id,
      name: category.name,
      parent_id: category.parent_id,
      memo: category.memo,
      moved_to: movedTo ?? null,
      code_ids: codeIds,
      sub_category_ids: subIds,
      owner: category.owner,
    },
  });
  return { category, moved_to: movedTo, code_ids: codeIds, sub_category_ids: subIds };
}
