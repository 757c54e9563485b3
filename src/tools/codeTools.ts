import { z } from 'zod';
import { categoryTree, createCategory, deleteCode, mergeCodes, moveCodeToCategory, renameCode, setCodeColor, updateCodeMemo } from '../domain/codebook';
import { colourNoteFor } from '../domain/codeColours';
import { defineTool } from './defineTool';
import { codeOut } from './present';
import { MAX_CODE_NAME } from '../domain/rules';
import { args, color, id, memo, nameText } from './schemas';

export const renameCodeTool = defineTool({
  name: 'rename_code',
  group: 'code',
  title: 'Rename Code',
  description:
    'Rename a code (unique, case-insensitive, 1-100 characters). Returns {code_id, old_name, new_name}. Errors: CODE_NOT_FOUND, DUPLICATE_NAME, INVALID_ARGUMENTS.',
  input: args({ code_id: id('the code'), new_name: nameText(MAX_CODE_NAME).describe(`the new name, 1-${MAX_CODE_NAME} characters`) }),
  effect: 'modify',
  trust: 'rename',
  run: (ctx, input) => {
    const r = renameCode(ctx.domain, input.code_id, input.new_name);
    return { code_id: r.code.code_id, old_name: r.old_name, new_name: r.code.name };
  },
});

export const updateCodeMemoTool = defineTool({
  name: 'update_code_memo',
  group: 'code',
  title: 'Update Code Memo',
  description:
    "Set a code's memo; memo is required, null clears it. Returns {code_id, old_memo, new_memo}. Errors: CODE_NOT_FOUND, INVALID_ARGUMENTS (memo missing).",
  input: args({ code_id: id('the code'), memo: memo.nullable().describe('the new memo (required); null clears it') }),
  effect: 'modify',
  trust: 'rename',
  run: (ctx, input) => ({ code_id: input.code_id, ...updateCodeMemo(ctx.domain, input.code_id, input.memo ?? null) }),
});

export const createCategoryTool = defineTool({
  name: 'create_category',
  group: 'code',
  title: 'Create Category',
  description:
    'Create a code category, nested under parent_id when given. Names are unique (case-insensitive), 1-100 characters. ' +
    'Returns {category_id, name, parent_id, memo}. Errors: DUPLICATE_NAME, CATEGORY_NOT_FOUND (parent), INVALID_ARGUMENTS.',
  input: args({
    name: nameText(MAX_CODE_NAME).describe(`category name, 1-${MAX_CODE_NAME} characters`),
    parent_id: id('parent category (omit for a root category)').nullable().optional(),
    memo: memo.optional().describe('what the category groups'),
  }),
  effect: 'create',
  trust: 'create_code',
  run: (ctx, input) => {
    const c = createCategory(ctx.domain, input);
    return { category_id: c.category_id, name: c.name, parent_id: c.parent_id, memo: c.memo, owner: c.owner, created_at: c.created_at };
  },
});

export const moveCodeToCategoryTool = defineTool({
  name: 'move_code_to_category',
  group: 'code',
  title: 'Move Code to Category',
  description:
    'Put a code into a category; category_id null or omitted takes it out of any category. Returns {code_id, old_category_id, new_category_id}. Errors: CODE_NOT_FOUND, CATEGORY_NOT_FOUND.',
  input: args({ code_id: id('the code'), category_id: id('target category; null uncategorises').nullable().optional() }),
  effect: 'modify',
  trust: 'apply_code',
  run: (ctx, input) => {
    const target = input.category_id ?? null;
    const r = moveCodeToCategory(ctx.domain, input.code_id, target);
    return { code_id: input.code_id, old_category_id: r.old_category_id, new_category_id: target };
  },
});

export const mergeCodesTool = defineTool({
  name: 'merge_codes',
  group: 'code',
  title: 'Merge Codes',
  description:
    'Merge one code into another: every segment of source_code_id is reassigned to target_code_id (exact duplicates are dropped), ' +
    "its memo is appended to the target's, then source_code_id is deleted. Cannot be undone. " +
    'Returns {source_code_id, target_code_id, source_code_name, target_code_name, segments_moved, duplicates_removed, target}. Errors: MERGE_SAME_CODE, CODE_NOT_FOUND.',
  input: args({ source_code_id: id('the code to merge away'), target_code_id: id('the code that receives the segments') }),
  effect: 'destroy',
  trust: 'merge',
  run: (ctx, input) => {
    const r = mergeCodes(ctx.domain, input.source_code_id, input.target_code_id);
    return {
      source_code_id: r.source.code_id,
      target_code_id: r.target.code_id,
      source_code_name: r.source.name,
      target_code_name: r.target.name,
      segments_moved: r.segments_moved,
      duplicates_removed: r.duplicates_removed,
      target: codeOut(r.target, ctx.domain.repo),
    };
  },
});

export const deleteCodeTool = defineTool({
  name: 'delete_code',
  group: 'code',
  title: 'Delete Code',
  description:
    'Delete a code. A code with coded segments is deleted only with delete_segments true, which deletes its segments too. Cannot be undone. ' +
    'Returns {deleted: true, code_id, name, segments_removed}. Errors: CODE_NOT_FOUND, CODE_HAS_SEGMENTS.',
  input: args({ code_id: id('the code'), delete_segments: z.boolean().optional().describe('also delete its coded segments (default false)') }),
  effect: 'destroy',
  trust: 'delete',
  run: (ctx, input) => {
    const r = deleteCode(ctx.domain, input.code_id, input.delete_segments ?? false);
    return { deleted: true, code_id: r.code.code_id, name: r.code.name, segments_removed: r.segments_removed };
  },
});

export const listCategories = defineTool({
  name: 'list_categories',
  group: 'code',
  title: 'List Categories',
  description:
    'All code categories with their hierarchy and code counts. Returns {count, categories: [{category_id, name, parent_id, memo, code_count (direct), ' +
    'total_code_count (with sub-categories), depth, path}] in tree order, tree: the same nested under children, uncategorized_code_count}.',
  input: args({}),
  effect: 'read',
  trust: 'read',
  memo: true,
  run: (ctx) => {
    const repo = ctx.domain.repo;
    const { roots, flat } = categoryTree(repo.listCategories());
    const categories = flat.map(({ children: _children, ...rest }) => rest);
    const uncategorized = repo.listCodes().filter((c) => c.category_id === null).length;
    return { count: categories.length, categories, tree: roots, uncategorized_code_count: uncategorized };
  },
});

export const setCodeColorTool = defineTool({
  name: 'set_code_color',
  group: 'code',
  title: 'Set Code Colour',
  description:
    "Change a code's colour (#RRGGBB), used to highlight its segments. Returns {code_id, old_color, new_color}; when another code already has that colour " +
    'the change is still made and the result adds colour_note (which code has it), other_codes_with_colour and free_colours (palette colours no code uses). Errors: CODE_NOT_FOUND, INVALID_ARGUMENTS.',
  input: args({ code_id: id('the code'), color }),
  effect: 'modify',
  trust: 'rename',
  run: (ctx, input) => {
    const changed = setCodeColor(ctx.domain, input.code_id, input.color);
    return { code_id: input.code_id, ...changed, ...colourNoteFor(ctx.domain.repo, changed.new_color, input.code_id) };
  },
});
