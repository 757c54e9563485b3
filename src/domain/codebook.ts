import { ToolError } from '../core/errors';
import { nextCodeColour } from './codeColours';
import type { DomainContext } from './events';
import type { Category, Code } from './model';
import type { CategoryWithCount, CodeWithCounts, ProjectRepository, Stamp } from './ports';
import { cleanName, COLOR_PATTERN, MAX_CODE_NAME, nameKey } from './rules';

type Ctx = DomainContext<ProjectRepository>;

/** The owner/session/time stamp of the current change. */
export function stampOf(ctx: Ctx): Stamp {
  return { owner: ctx.actor.user, session_id: ctx.actor.session_id, now: ctx.now, coder_role: ctx.actor.role ?? null };
}

/** The code with id `id`, or CODE_NOT_FOUND. */
export function requireCode(ctx: Ctx, id: number): CodeWithCounts {
  const c = ctx.repo.getCode(id);
  if (!c) throw new ToolError('CODE_NOT_FOUND', `No code with code_id ${id}`);
  return c;
}

/** The category with id `id`, or CATEGORY_NOT_FOUND. */
export function requireCategory(ctx: Ctx, id: number): Category {
  const c = ctx.repo.getCategory(id);
  if (!c) throw new ToolError('CATEGORY_NOT_FOUND', `No category with category_id ${id}`);
  return c;
}

/**
 * Creates a code. Names are unique case-insensitively (rule 1), 1-100 code points; colour `#RRGGBB`, or when
 * omitted the palette colour no other code uses (see {@link nextCodeColour}: while one is free, then the least
 * used). A chosen colour another code already has is kept (see {@link colourNoteFor} for telling the caller).
 * Emits coding.code_created. Errors: DUPLICATE_NAME, CATEGORY_NOT_FOUND, INVALID_ARGUMENTS (name, colour).
 */
export function createCode(ctx: Ctx, input: { name: string; color?: string | null; memo?: string | null; category_id?: number | null }): CodeWithCounts {
  const name = cleanName(input.name, MAX_CODE_NAME, 'code', 'INVALID_ARGUMENTS');
  const color = input.color ?? nextCodeColour(ctx.repo);
  if (!COLOR_PATTERN.test(color)) throw new ToolError('INVALID_ARGUMENTS', `The colour "${color}" is not #RRGGBB`);
  const key = nameKey(name);
  const clash = ctx.repo.findCodeByKey(key);
  if (clash) throw new ToolError('DUPLICATE_NAME', `A code named "${clash.name}" already exists (code_id ${clash.code_id})`);
  const categoryId = input.category_id ?? null;
  if (categoryId !== null) requireCategory(ctx, categoryId);
  const memo = input.memo ?? null;
  const id = ctx.repo.insertCode({ name, color: color.toUpperCase(), memo, category_id: categoryId }, key, stampOf(ctx));
  ctx.events.emit({
    event_type: 'coding.code_created',
    aggregate_type: 'code',
    aggregate_id: String(id),
    payload: { code_id: id, name, color: color.toUpperCase(), memo, category_id: categoryId },
  });
  return requireCode(ctx, id);
}

/** Renames a code. Emits coding.code_renamed. Errors: CODE_NOT_FOUND, DUPLICATE_NAME, INVALID_ARGUMENTS. */
export function renameCode(ctx: Ctx, id: number, newName: string): { code: Code; old_name: string } {
  const code = requireCode(ctx, id);
  const name = cleanName(newName, MAX_CODE_NAME, 'code', 'INVALID_ARGUMENTS');
  const key = nameKey(name);
  const clash = ctx.repo.findCodeByKey(key);
  if (clash && clash.code_id !== id) throw new ToolError('DUPLICATE_NAME', `A code named "${clash.name}" already exists (code_id ${clash.code_id})`);
  ctx.repo.updateCode(id, { name }, key, ctx.now);
  ctx.events.emit({
    event_type: 'coding.code_renamed',
    aggregate_type: 'code',
    aggregate_id: String(id),
    payload: { code_id: id, old_name: code.name, new_name: name },
  });
  return { code: requireCode(ctx, id), old_name: code.name };
}

/** Sets (or with null clears) a code's memo. Emits coding.code_updated. Errors: CODE_NOT_FOUND. */
export function updateCodeMemo(ctx: Ctx, id: number, memo: string | null): { old_memo: string | null; new_memo: string | null } {
  const code = requireCode(ctx, id);
  const next = memo === null || memo === '' ? null : memo;
  ctx.repo.updateCode(id, { memo: next }, null, ctx.now);
  ctx.events.emit({
    event_type: 'coding.code_updated',
    aggregate_type: 'code',
    aggregate_id: String(id),
    payload: { code_id: id, field: 'memo', old_value: code.memo, new_value: next },
  });
  return { old_memo: code.memo, new_memo: next };
}

/** Sets a code's colour (`#RRGGBB`). Emits coding.code_updated. Errors: CODE_NOT_FOUND, INVALID_ARGUMENTS. */
export function setCodeColor(ctx: Ctx, id: number, color: string): { old_color: string; new_color: string } {
  const code = requireCode(ctx, id);
  if (!COLOR_PATTERN.test(color)) throw new ToolError('INVALID_ARGUMENTS', `The colour "${color}" is not #RRGGBB`);
  const next = color.toUpperCase();
  ctx.repo.updateCode(id, { color: next }, null, ctx.now);
  ctx.events.emit({
    event_type: 'coding.code_updated',
    aggregate_type: 'code',
    aggregate_id: String(id),
    payload: { code_id: id, field: 'color', old_value: code.color, new_value: next },
  });
  return { old_color: code.color, new_color: next };
}

/**
 * Puts a code into a category, or with null takes it out of any. Emits coding.code_moved.
 * Errors: CODE_NOT_FOUND, CATEGORY_NOT_FOUND.
 */
export function moveCodeToCategory(ctx: Ctx, id: number, categoryId: number | null): { old_category_id: number | null } {
  const code = requireCode(ctx, id);
  if (categoryId !== null) requireCategory(ctx, categoryId);
  ctx.repo.updateCode(id, { category_id: categoryId }, null, ctx.now);
  ctx.events.emit({
    event_type: 'coding.code_moved',
    aggregate_type: 'code',
    aggregate_id: String(id),
    payload: { code_id: id, old_category_id: code.category_id, new_category_id: categoryId },
  });
  return { old_category_id: code.category_id };
}

/**
 * Merges `sourceId` into `targetId`: every text and AV segment of the source code moves to the target
 * (exact duplicates that result are dropped), the source code's memo is appended to the target's, and
 * the source code is deleted. Emits coding.codes_merged. Errors: MERGE_SAME_CODE (rule 4), CODE_NOT_FOUND.
 */
export function mergeCodes(
  ctx: Ctx,
  sourceId: number,
  targetId: number,
): { source: CodeWithCounts; target: CodeWithCounts; segments_moved: number; duplicates_removed: number } {
  if (sourceId === targetId) throw new ToolError('MERGE_SAME_CODE', `A code cannot be merged into itself (code_id ${sourceId})`);
  const source = requireCode(ctx, sourceId);
  const target = requireCode(ctx, targetId);
  const moved = ctx.repo.reassignSegments(sourceId, targetId, ctx.now);
  const dupes = ctx.repo.dedupeSegments(targetId);
  if (source.memo) {
    const memo = target.memo ? `${target.memo}\n\n[Merged from "${source.name}"] ${source.memo}` : source.memo;
    ctx.repo.updateCode(targetId, { memo }, null, ctx.now);
  }
  ctx.repo.deleteCode(sourceId);
  ctx.events.emit({
    event_type: 'coding.codes_merged',
    aggregate_type: 'code',
    aggregate_id: String(targetId),
    payload: { source_code_id: sourceId, target_code_id: targetId, segments_moved: moved, source_code_name: source.name },
  });
  return { source, target: requireCode(ctx, targetId), segments_moved: moved, duplicates_removed: dupes };
}

/**
 * Deletes a code. A code that has segments is deleted only with `deleteSegments` (its segments go with
 * it). Emits coding.code_deleted {code_id, name, segment_count, color, memo, category_id, owner, session_id}. Errors: CODE_NOT_FOUND, CODE_HAS_SEGMENTS.
 */
export function deleteCode(ctx: Ctx, id: number, deleteSegments: boolean): { code: CodeWithCounts; segments_removed: number } {
  const code = requireCode(ctx, id);
  const used = code.segment_count + code.av_segment_count;
  if (used > 0 && !deleteSegments) {
    throw new ToolError('CODE_HAS_SEGMENTS', `The code "${code.name}" has ${used} coded segment(s); pass delete_segments: true to delete them with it`, {
      segment_count: code.segment_count,
      av_segment_count: code.av_segment_count,
    });
  }
  const removed = used > 0 ? ctx.repo.deleteSegmentsOfCode(id) : 0;
  ctx.repo.deleteCode(id);
  ctx.events.emit({
    event_type: 'coding.code_deleted',
    aggregate_type: 'code',
    aggregate_id: String(id),
    // color, memo, category_id, owner, session_id: what re-creating the code needs (undo, src/domain/undoRedo.ts)
    payload: {
      code_id: id,
      name: code.name,
      segment_count: removed,
      color: code.color,
      memo: code.memo,
      category_id: code.category_id,
      owner: code.owner,
      session_id: code.session_id,
    },
  });
  return { code, segments_removed: removed };
}

/**
 * Creates a category, nested under `parentId` when given. Names are unique case-insensitively (rule 1).
 * Emits coding.category_created. Errors: DUPLICATE_NAME, CATEGORY_NOT_FOUND, INVALID_ARGUMENTS.
 */
export function createCategory(ctx: Ctx, input: { name: string; parent_id?: number | null; memo?: string | null }): Category {
  const name = cleanName(input.name, MAX_CODE_NAME, 'category', 'INVALID_ARGUMENTS');
  const key = nameKey(name);
  const clash = ctx.repo.findCategoryByKey(key);
  if (clash) throw new ToolError('DUPLICATE_NAME', `A category named "${clash.name}" already exists (category_id ${clash.category_id})`);
  const parentId = input.parent_id ?? null;
  if (parentId !== null) requireCategory(ctx, parentId);
  const id = ctx.repo.insertCategory(name, key, parentId, input.memo ?? null, stampOf(ctx));
  ctx.events.emit({
    event_type: 'coding.category_created',
    aggregate_type: 'category',
    aggregate_id: String(id),
    payload: { category_id: id, name, parent_id: parentId },
  });
  return requireCategory(ctx, id);
}

/** A category in the hierarchy: its direct code count, the count with all descendants, depth and path. */
export interface CategoryNode extends CategoryWithCount {
  total_code_count: number;
  depth: number;
  /** names from the root, joined with " / " */
  path: string;
  children: CategoryNode[];
}

/** The categories as a forest (roots first, children sorted by name) and as a flat list in tree order. */
export function categoryTree(categories: CategoryWithCount[]): { roots: CategoryNode[]; flat: CategoryNode[] } {
  const nodes = new Map<number, CategoryNode>();
  for (const c of categories) nodes.set(c.category_id, { ...c, total_code_count: c.code_count, depth: 0, path: c.name, children: [] });
  const roots: CategoryNode[] = [];
  for (const n of nodes.values()) {
    const parent = n.parent_id === null ? undefined : nodes.get(n.parent_id);
    if (parent) parent.children.push(n);
    else roots.push(n);
  }
  const flat: CategoryNode[] = [];
  const byName = (a: CategoryNode, b: CategoryNode) => a.name.localeCompare(b.name);
  const walk = (n: CategoryNode, depth: number, prefix: string): number => {
    n.depth = depth;
    n.path = prefix ? `${prefix} / ${n.name}` : n.name;
    flat.push(n);
    n.children.sort(byName);
    let total = n.code_count;
    for (const ch of n.children) total += walk(ch, depth + 1, n.path);
    n.total_code_count = total;
    return total;
  };
  roots.sort(byName);
  for (const r of roots) walk(r, 0, '');
  return { roots, flat };
}
