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

/** An index with no codes or categories (before a project is open). */
export function emptyIndex(): CodebookIndex {
  return { codes: new Map(), categories: new Map(), children: new Map(), paths: new Map() };
}

/**
 * Indexes the codebook in one pass over each list. Children keep the repository's order, categories
 * before codes. A category whose parent is missing, or that sits in a parent cycle (the domain refuses
 * both: CATEGORY_CYCLE), is shown at the top level rather than lost; so is a code in a missing category.
 * With `reuse`, a code or category that `reuse` already has keeps its node object (its record replaced), so
 * VS Code, which knows tree elements by identity, can be told to redraw just that node ({@link reindex}).
 */
export function buildIndex(codes: readonly CodeWithCounts[], categories: readonly CategoryWithCount[], reuse?: CodebookIndex): CodebookIndex {
  const index = emptyIndex();
  for (const category of categories) {
    const node = reuse?.categories.get(category.category_id);
    if (node) node.category = category;
    index.categories.set(category.category_id, node ?? { kind: 'category', category });
  }
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
    const old = reuse?.codes.get(code.code_id);
    if (old) old.code = code;
    const node = old ?? { kind: 'code' as const, code };
    index.codes.set(code.code_id, node);
    push(code.category_id !== null && index.categories.has(code.category_id) ? code.category_id : null, node);
  }
  return index;
}

/** What {@link reindex} tells the view to redraw: everything, or these nodes (each with its children). */
export type Redraw = 'all' | CodesNode[];

/**
 * The codebook reloaded from new lists, and the least the Codes view must redraw to show it, so a change to a
 * 2,000-code codebook does not make VS Code fetch and draw every expanded category again.
 * Returns the new index (nodes of `previous` kept, see {@link buildIndex}) and `redraw`: `'all'` when the top
 * level's rows changed (added, removed, moved or reordered); otherwise the categories whose children changed and
 * the nodes whose own record changed (name, colour, counts, memo, maker...), leaving out any node inside a
 * category that is redrawn anyway (VS Code redraws a node's children with it). Empty when nothing changed. The nodes
 * redrawn keep their objects; everything under them, and the whole index when `'all'`, is new (see freshInside).
 * `previous` is updated in place (its nodes' records); do not use it afterwards. O(n) for n codes and categories.
 */
export function reindex(
  previous: CodebookIndex,
  codes: readonly CodeWithCounts[],
  categories: readonly CategoryWithCount[],
): { index: CodebookIndex; redraw: Redraw } {
  const key = (n: CodesNode) => (n.kind === 'category' ? `k${n.category.category_id}` : `c${n.code.code_id}`);
  const oldChildren = new Map<number | null, string>();
  for (const [parent, kids] of previous.children) oldChildren.set(parent, kids.map(key).join(','));
  const oldRecords = new Map<CodesNode, object>();
  for (const n of previous.categories.values()) oldRecords.set(n, n.category);
  for (const n of previous.codes.values()) oldRecords.set(n, n.code);
  const index = buildIndex(codes, categories, previous);
  const marked = new Set<CodesNode>();
  const parents = new Set<number | null>([...oldChildren.keys(), ...index.children.keys()]);
  for (const parent of parents) {
    const now = (index.children.get(parent) ?? []).map(key).join(',');
    if (now === (oldChildren.get(parent) ?? '')) continue;
    if (parent === null) return { index: buildIndex(codes, categories), redraw: 'all' };
    const node = index.categories.get(parent);
    // a category that is gone: its own parent's children changed too, and that redraws it
    if (node) marked.add(node);
  }
  for (const [node, record] of oldRecords) {
    const now = node.kind === 'category' ? node.category : node.code;
    const stillThere = node.kind === 'category' ? index.categories.get(node.category.category_id) === node : index.codes.get(node.code.code_id) === node;
    if (stillThere && !sameRecord(record, now)) marked.add(node);
  }
  const insideMarked = (n: CodesNode): boolean => {
    const seen = new Set<number>();
    let parent = n.kind === 'category' ? n.category.parent_id : n.code.category_id;
    while (parent !== null && !seen.has(parent)) {
      seen.add(parent);
      const p = index.categories.get(parent);
      if (!p) return false;
      if (marked.has(p)) return true;
      parent = p.category.parent_id;
    }
    return false;
  };
  const redraw = [...marked].filter((n) => !insideMarked(n));
  return { index: freshInside(index, redraw, codes, categories, key), redraw };
}

/**
 * `index` with new node objects for everything inside the categories in `redraw`. VS Code's extension host forgets
 * the nodes under a redrawn element only after it has registered what the provider answers again, and it forgets
 * them by element: an element object answered again would be forgotten right after (its category then shows no
 * children). So only the redrawn nodes themselves keep their objects (VS Code finds them by those), and what is
 * under them is new. Same for a whole redraw ({@link reindex} answers a fresh index then).
 */
function freshInside(
  index: CodebookIndex,
  redraw: readonly CodesNode[],
  codes: readonly CodeWithCounts[],
  categories: readonly CategoryWithCount[],
  key: (n: CodesNode) => string,
): CodebookIndex {
  const inside = new Set<string>();
  const stack = redraw.flatMap((n) => (n.kind === 'category' ? [n.category.category_id] : []));
  while (stack.length > 0) {
    for (const child of index.children.get(stack.pop() as number) ?? []) {
      const k = key(child);
      if (inside.has(k)) continue;
      inside.add(k);
      if (child.kind === 'category') stack.push(child.category.category_id);
    }
  }
  if (inside.size === 0) return index;
  const fresh = buildIndex(codes, categories);
  const pick = (n: CodesNode): CodesNode => {
    if (!inside.has(key(n))) return n;
    return (n.kind === 'category' ? fresh.categories.get(n.category.category_id) : fresh.codes.get(n.code.code_id)) ?? n;
  };
  return {
    codes: new Map([...index.codes].map(([id, n]) => [id, pick(n) as CodesNode & { kind: 'code' }])),
    categories: new Map([...index.categories].map(([id, n]) => [id, pick(n) as CodesNode & { kind: 'category' }])),
    children: new Map([...index.children].map(([parent, list]) => [parent, list.map(pick)])),
    paths: index.paths,
  };
}

/** Shallow equality of two records (own enumerable keys, `===` values). */
function sameRecord(a: object, b: object): boolean {
  if (a === b) return true;
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  for (const k of ka) if ((a as Record<string, unknown>)[k] !== (b as Record<string, unknown>)[k]) return false;
  return true;
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
