/**
 * The codebook steps of the applier (../applyPlan.ts): categories (parents first, whatever the plan's order),
 * then codes. An item is found by GUID, then by name (case-insensitive), else created.
 */
import { ToolError } from '../../../core/errors';
import { createCategory, createCode, moveCodeToCategory } from '../../../domain/codebook';
import { CodeColourPicker } from '../../../domain/codeColours';
import { MAX_CODE_NAME, nameKey } from '../../../domain/rules';
import { fitName, type PlanRef, type PlannedCode } from '../plan';
import { NameKeeper, stamped, type Applying } from './state';

/**
 * Writes the plan's categories, parents first, and returns the function that gives a category ref its id.
 * Errors: IMPORT_FAILED (a parent the plan does not hold, categories nested in a cycle); the domain's.
 */
export function applyCategories(a: Applying): (ref: PlanRef) => number {
  const { ctx, plan, report } = a;
  const byRef = new Map(plan.categories.map((c) => [c.ref, c]));
  const names = a.keepApart ? new NameKeeper(MAX_CODE_NAME) : null;
  const existingItems = { has: (id: number) => ctx.repo.getCategory(id) !== undefined, ids: () => ctx.repo.listCategories().map((c) => c.category_id) };
  const resolving = new Set<PlanRef>();
  const resolve = (ref: PlanRef): number => {
    const known = a.categoryIds.get(ref);
    if (known !== undefined) return known;
    const c = byRef.get(ref);
    if (!c) throw new ToolError('IMPORT_FAILED', `The file refers to a category ${ref} it does not hold`);
    if (resolving.has(ref)) throw new ToolError('IMPORT_FAILED', `The categories of the file nest in a cycle (at "${c.name}")`);
    resolving.add(ref);
    const parentId = c.parent === null ? null : resolve(c.parent);
    a.at = () => `category "${c.name}"`;
    const byGuid = a.guids.find('category', c.guid, existingItems);
    let id: number;
    if (byGuid !== undefined) {
      id = byGuid;
      names?.take(ctx.repo.getCategory(id)?.name ?? c.name, null);
      report.reused.categories++;
    } else {
      const wanted = fitName(c.name, MAX_CODE_NAME, 'Unnamed category');
      const name = names ? names.take(wanted, c.parent === null ? null : (byRef.get(c.parent)?.name ?? null)) : wanted;
      a.renamed('category', c.name, name, MAX_CODE_NAME);
      const existingId = ctx.repo.findCategoryByKey(nameKey(name))?.category_id;
      id = a.existingOrNew(
        'categories',
        'category',
        c.guid,
        existingId,
        () => createCategory(stamped(ctx, c.owner), { name, parent_id: parentId, memo: c.memo }).category_id,
      );
    }
    a.guids.keep('category', id, c.guid, false);
    resolving.delete(ref);
    a.categoryIds.set(ref, id);
    a.tick();
    return id;
  };
  for (const c of plan.categories) resolve(c.ref);
  return resolve;
}

/**
 * Writes the plan's codes. An existing code (by GUID or name) is used as it is: put into the planned category
 * when it has none, else left in its own (with a warning). A new code without a colour takes the next palette
 * colour no code uses yet (then the least used). Under `keep_apart` a code whose name another code of the file
 * took gets its category's name in brackets; the code of a REFI-QDA codable `Code` with children (`twin_of`)
 * takes the name its category got, so the two stay one element when exported.
 */
export function applyCodes(a: Applying, resolveCategory: (ref: PlanRef) => number): void {
  const { ctx, plan, report } = a;
  const categoryByRef = new Map(plan.categories.map((c) => [c.ref, c]));
  const names = a.keepApart ? new NameKeeper(MAX_CODE_NAME) : null;
  const existingItems = { has: (id: number) => ctx.repo.getCode(id) !== undefined, ids: () => ctx.repo.listCodes().map((c) => c.code_id) };
  const colours = CodeColourPicker.of(ctx.repo);
  const nameOf = (c: PlannedCode, categoryId: number | null): string => {
    const twinCategory = c.twin_of !== undefined && categoryId !== null ? ctx.repo.getCategory(categoryId) : undefined;
    const wanted = twinCategory ? twinCategory.name : fitName(c.name, MAX_CODE_NAME, 'Unnamed code');
    if (!names) return wanted;
    const hint = c.category === null ? null : (categoryByRef.get(c.category)?.name ?? null);
    return names.take(wanted, hint && nameKey(hint) !== nameKey(wanted) ? hint : null);
  };
  for (const c of plan.codes) {
    a.at = () => `code "${c.name}"`;
    const categoryId = c.category === null ? null : resolveCategory(c.category);
    const byGuid = a.guids.find('code', c.guid, existingItems);
    let existing = byGuid !== undefined ? ctx.repo.getCode(byGuid) : undefined;
    if (existing) names?.take(existing.name, null);
    else {
      const name = nameOf(c, categoryId);
      a.renamed('code', c.name, name, MAX_CODE_NAME);
      existing = ctx.repo.findCodeByKey(nameKey(name)) as typeof existing;
      if (!existing) {
        const color = c.color ?? colours.next();
        if (c.color) colours.take(c.color);
        const id = createCode(stamped(ctx, c.owner), { name, color, memo: c.memo, category_id: categoryId }).code_id;
        report.created.codes++;
        a.guids.keep('code', id, c.guid, true);
        a.codeIds.set(c.ref, id);
        a.tick();
        continue;
      }
    }
    a.codeIds.set(c.ref, existing.code_id);
    report.reused.codes++;
    if (categoryId !== null && existing.category_id === null) {
      moveCodeToCategory(ctx, existing.code_id, categoryId);
      report.codes_moved++;
    } else if (categoryId !== null && existing.category_id !== categoryId) {
      a.warn(`The existing code "${existing.name}" stays in its category (the file puts it in another one)`);
    }
    a.guids.keep('code', existing.code_id, c.guid, false);
    a.tick();
  }
}
