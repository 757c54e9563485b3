/**
 * The codebook as the Codes tree shows it, without VS Code: nodes by id, children by parent category,
 * category paths, and the nodes a filter shows. Pure functions of the code and category lists, O(n) for n
 * codes and categories (plus the depth of the category tree), so a refresh of 2,000 codes stays cheap.
 */
import type { CategoryWithCount, CodeWithCounts } from '../../domain/ports';

/** A node of the Codes tree: a category or a code. */
export type CodesNode = { kind: 'category'; category: CategoryWithCount } | { kind: 'code'; code: CodeWithCounts };

/**
 * The codebook as loaded once per refresh: nodes by id (the same objects for the whole generation, so
 * `reveal` and selection find them), children by parent category (null: the top level), category paths.
 * Built in O(n) for n codes and categories (the tree used to filter the whole list for every parent).
 */
export interface CodebookIndex {
  codes: Map<number, CodesNode & { kind: 'code' }>;
  categories: Map<number, CodesNode & { kind: 'category' }>;
  children: Map<number | null, CodesNode[]>;
  /** "Parent / Child" names of every category, outermost first */
  paths: Map<number, string>;
}

export function emptyIndex(): CodebookIndex {
  return { codes: new Map(), categories: new Map(), children: new Map(), paths: new Map() };
}

/**
 * Indexes the codebook in one pass over each list. Children keep the repository's order, categories
 * before codes. A category whose parent is missing, or that sits in a parent cycle (the domain refuses
 * both: CATEGORY_CYCLE), is shown at the top level rather than lost; so is a code in a missing category.
 */
export function buildIndex(codes: readonly CodeWithCounts[], categories: readonly CategoryWithCount[]): CodebookIndex {
  const index = emptyIndex();
  for (const category of categories) index.categories.set(category.category_id, { kind: 'category', category });
  const push = (parent: number | null, node: CodesNode) => {
    let list = index.children.get(parent);
    if (!list) index.children.set(parent, (list = []));
    list.push(node);
  };
  const path = (id: number): string => {
    const known = index.paths.get(id);
    if (known !== undefined) return known;
    // iterative walk to the top (no recursion depth limit), guarding against a cycle
    const chain: CategoryWithCount[] = [];
    const seen = new Set<number>();
    let cur = index.categories.get(id)?.category;
    while (cur && !seen.has(cur.category_id) && !index.paths.has(cur.category_id)) {
      seen.add(cur.category_id);
      chain.push(cur);
      cur = cur.parent_id === null ? undefined : index.categories.get(cur.parent_id)?.category;
    }
    let prefix = cur && index.paths.has(cur.category_id) ? (index.paths.get(cur.category_id) as string) : undefined;
    for (let i = chain.length - 1; i >= 0; i--) {
      const c = chain[i] as CategoryWithCount;
      prefix = prefix === undefined ? c.name : `${prefix} / ${c.name}`;
      index.paths.set(c.category_id, prefix);
    }
    return index.paths.get(id) ?? '';
  };
  for (const node of index.categories.values()) {
    const c = node.category;
    path(c.category_id);
    const parentOk = c.parent_id !== null && index.categories.has(c.parent_id) && !inCycle(index, c.category_id);
    push(parentOk ? c.parent_id : null, node);
  }
  for (const code of codes) {
    const node = { kind: 'code' as const, code };
    index.codes.set(code.code_id, node);
    push(code.category_id !== null && index.categories.has(code.category_id) ? code.category_id : null, node);
  }
  return index;
}

/** True when following parents from `id` comes back to `id`. */
function inCycle(index: CodebookIndex, id: number): boolean {
  const seen = new Set<number>();
  let cur = index.categories.get(id)?.category.parent_id ?? null;
  while (cur !== null && !seen.has(cur)) {
    if (cur === id) return true;
    seen.add(cur);
    cur = index.categories.get(cur)?.category.parent_id ?? null;
  }
  return false;
}

/** Text folded for matching: lower case, without accents (NFD, combining marks removed). */
export function foldForMatch(text: string): string {
  return text.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase();
}

/**
 * The nodes a filter shows: codes whose name, or whose category path, contains `text` (folded, see
 * {@link foldForMatch}), categories whose own path contains it, and every ancestor category of those.
 */
export function matching(index: CodebookIndex, text: string): Set<CodesNode> {
  const q = foldForMatch(text);
  const shown = new Set<CodesNode>();
  const addAncestors = (categoryId: number | null) => {
    let cur = categoryId === null ? undefined : index.categories.get(categoryId);
    while (cur && !shown.has(cur)) {
      shown.add(cur);
      cur = cur.category.parent_id === null ? undefined : index.categories.get(cur.category.parent_id);
    }
  };
  const pathMatches = new Map<number, boolean>();
  const categoryMatches = (id: number) => {
    let m = pathMatches.get(id);
    if (m === undefined) pathMatches.set(id, (m = foldForMatch(index.paths.get(id) ?? '').includes(q)));
    return m;
  };
  for (const node of index.categories.values()) if (categoryMatches(node.category.category_id)) addAncestors(node.category.category_id);
  for (const node of index.codes.values()) {
    const cat = node.code.category_id;
    if (foldForMatch(node.code.name).includes(q) || (cat !== null && categoryMatches(cat))) {
      shown.add(node);
      addAncestors(cat);
    }
  }
  return shown;
}

