/** Undo's inverses of category events (created, renamed, memo or place changed, deleted). */
import { deleteCategory, renameCategory, updateCategoryMemo } from '../categories';
import { createCategory } from '../codebook';
import type { EventType } from '../events';
import { num, quoteMemo, str, type Names } from '../undoWords';
import { blocked, nullableStr, ownedBy, type Ctx, type Inversion } from './inversion';

/** Inverse of a category event (created, renamed, memo or place changed, deleted); false for other events. */
export function invertCategoryEvent(x: Inversion, type: EventType): boolean {
  const { ctx, p, repo, ids, what, names, changedSince } = x;
  switch (type) {
    case 'coding.category_created': {
      const id = ids.get('category', num(p.category_id));
      const category = repo.getCategory(id);
      if (!category) throw blocked(what, `the category '${str(p.name)}' has been deleted since`);
      if (category.name !== p.name) throw changedSince(`the category '${str(p.name)}'`, `named '${category.name}'`);
      const codes = repo.listCodes().filter((c) => c.category_id === id);
      const subs = repo.listCategories().filter((c) => c.parent_id === id);
      if (codes.length > 0 || subs.length > 0) {
        const held = [...codes.map((c) => `the code '${c.name}'`), ...subs.map((c) => `the category '${c.name}'`)];
        throw blocked(
          what,
          `the category '${category.name}' has since been given ${held.slice(0, 3).join(', ')}${held.length > 3 ? ` and ${held.length - 3} more` : ''}`,
        );
      }
      deleteCategory(ctx, id, undefined);
      return true;
    }
    case 'coding.category_renamed': {
      const id = ids.get('category', num(p.category_id));
      const category = repo.getCategory(id);
      if (!category) throw blocked(what, `the category '${str(p.new_name)}' has been deleted since`);
      if (category.name !== p.new_name) throw changedSince(`the category '${str(p.new_name)}'`, `named '${category.name}'`);
      renameCategory(ctx, id, str(p.old_name));
      return true;
    }
    case 'coding.category_updated': {
      const id = ids.get('category', num(p.category_id));
      const category = repo.getCategory(id);
      if (!category) throw blocked(what, `the category '${names.category(id)}' has been deleted since`);
      if (p.field === 'memo') {
        if (category.memo !== p.new_value) throw changedSince(`the memo of the category '${category.name}'`, quoteMemo(category.memo));
        updateCategoryMemo(ctx, id, nullableStr(p.old_value));
        return true;
      }
      // parent_id: raised by the undo of a category deletion (its sub-categories going back into it)
      if (category.parent_id !== ids.opt('category', p.new_value))
        throw changedSince(`the place of the category '${category.name}'`, names.place(category.parent_id));
      moveCategory(ctx, id, ids.opt('category', p.old_value), what, names);
      return true;
    }
    case 'coding.category_deleted': {
      const parent = ids.opt('category', p.parent_id);
      if (parent !== null && !repo.getCategory(parent)) throw blocked(what, `its parent category '${names.category(parent)}' has been deleted since`);
      const category = createCategory(ownedBy(ctx, p), { name: str(p.name), parent_id: parent, memo: nullableStr(p.memo) });
      ids.set('category', num(p.category_id), category.category_id);
      const movedTo = ids.opt('category', p.moved_to);
      for (const subId of (p.sub_category_ids as number[] | undefined) ?? []) {
        const sid = ids.get('category', subId);
        const sub = repo.getCategory(sid);
        if (!sub) throw blocked(what, `its sub-category '${names.category(sid)}' has been deleted since`);
        if (sub.parent_id !== movedTo) throw changedSince(`the place of the category '${sub.name}'`, names.place(sub.parent_id));
        moveCategory(ctx, sid, category.category_id, what, names);
      }
      return true;
    }
    default:
      return false;
  }
}

/**
 * Moves category `id` under `parentId` (null: the top level), refusing a move into its own subtree, and
 * emits coding.category_updated {category_id, field: 'parent_id', old_value, new_value}.
 */
function moveCategory(ctx: Ctx, id: number, parentId: number | null, what: string, names: Names): void {
  const category = ctx.repo.getCategory(id);
  if (!category) throw blocked(what, `the category '${names.category(id)}' has been deleted since`);
  if (parentId !== null) {
    const parentOf = new Map(ctx.repo.listCategories().map((c) => [c.category_id, c.parent_id]));
    const seen = new Set<number>();
    for (let at: number | null | undefined = parentId; at != null && !seen.has(at); at = parentOf.get(at)) {
      seen.add(at);
      if (at === id) throw blocked(what, `the category '${category.name}' would end up inside itself`);
    }
    if (!ctx.repo.getCategory(parentId)) throw blocked(what, `the category '${names.category(parentId)}' has been deleted since`);
  }
  ctx.repo.updateCategory(id, { parent_id: parentId }, null);
  ctx.events.emit({
    event_type: 'coding.category_updated',
    aggregate_type: 'category',
    aggregate_id: String(id),
    payload: { category_id: id, field: 'parent_id', old_value: category.parent_id, new_value: parentId },
  });
}
