/**
 * Category tools beyond create_category and list_categories (codeTools.ts): rename, memo, delete (issue 13,
 * item 4). Trust from the agent-context spec's "Default trust by category" (section 5): a rename is `rename`
 * (Suggest, overridable to Notify); a category memo is a change to the codebook like update_code_memo, so
 * `rename` too (Suggest); deleting is `delete` (Require, overridable to Suggest) although it never deletes a
 * code. Domain logic: src/domain/categories.ts.
 */
import { deleteCategory, renameCategory, updateCategoryMemo } from '../domain/categories';
import { MAX_CODE_NAME } from '../domain/rules';
import { defineTool } from './defineTool';
import { args, id, memo, nameText } from './schemas';

export const renameCategoryTool = defineTool({
  name: 'rename_category',
  group: 'code',
  title: 'Rename Category',
  description:
    'Rename a code category (names unique among categories, case-insensitive, 1-100 characters; its codes and sub-categories stay). ' +
    'Returns {category_id, old_name, new_name}. Errors: CATEGORY_NOT_FOUND, DUPLICATE_NAME, INVALID_ARGUMENTS.',
  input: args({ category_id: id('the category'), new_name: nameText(MAX_CODE_NAME).describe(`the new name, 1-${MAX_CODE_NAME} characters`) }),
  effect: 'modify',
  trust: 'rename',
  run: (ctx, input) => {
    const r = renameCategory(ctx.domain, input.category_id, input.new_name);
    return { category_id: r.category.category_id, old_name: r.old_name, new_name: r.category.name };
  },
});

export const updateCategoryMemoTool = defineTool({
  name: 'update_category_memo',
  group: 'code',
  title: 'Update Category Memo',
  description:
    "Set a code category's memo (what the category groups); memo is required, null clears it. Returns {category_id, old_memo, new_memo}. Errors: CATEGORY_NOT_FOUND, INVALID_ARGUMENTS (memo missing).",
  input: args({ category_id: id('the category'), memo: memo.nullable().describe('the new memo (required); null clears it') }),
  effect: 'modify',
  trust: 'rename',
  run: (ctx, input) => ({ category_id: input.category_id, ...updateCategoryMemo(ctx.domain, input.category_id, input.memo ?? null) }),
});

export const deleteCategoryTool = defineTool({
  name: 'delete_category',
  group: 'code',
  title: 'Delete Category',
  description:
    'Delete a code category. Codes are never deleted with it. An empty category (no codes, no sub-categories) is deleted as it is; ' +
    'a category that holds codes or sub-categories only with move_codes_to: the category that receives its codes and sub-categories, or null for the root ' +
    '(codes uncategorised, sub-categories at the top level); sub-categories keep their own contents. ' +
    'Returns {deleted: true, category_id, name, moved_to (category_id, or null: the root or nothing to move), code_ids, codes_moved, sub_category_ids, sub_categories_moved}. ' +
    'Errors: CATEGORY_NOT_FOUND (the category or move_codes_to), CATEGORY_NOT_EMPTY (codes or sub-categories and no move_codes_to; details: code_count, sub_category_count), ' +
    'CATEGORY_CYCLE (move_codes_to is inside the category), INVALID_ARGUMENTS (move_codes_to is the category itself).',
  input: args({
    category_id: id('the category'),
    move_codes_to: id('the category that receives the codes and sub-categories; null: the root').nullable().optional(),
  }),
  effect: 'destroy',
  trust: 'delete',
  run: (ctx, input) => {
    const r = deleteCategory(ctx.domain, input.category_id, input.move_codes_to);
    return {
      deleted: true,
      category_id: r.category.category_id,
      name: r.category.name,
      moved_to: r.moved_to ?? null,
      code_ids: r.code_ids,
      codes_moved: r.code_ids.length,
      sub_category_ids: r.sub_category_ids,
      sub_categories_moved: r.sub_category_ids.length,
    };
  },
});
