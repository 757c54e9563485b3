/**
 * Merge conflicts in words, for the Merge Conflicts view (src/ui/merge/mergeConflictsView.ts). Pure: no `vscode`,
 * so unit tests call it directly. The conflict shapes are those of src/domain/mergeConflicts.ts
 * (`StoredMergeConflict`): `ours` is what the project holds, `theirs` the other side's value, `base` the common
 * ancestor's (null where a side has none).
 */
import type { MergeConflict } from '../../domain/mergeConflicts';

/** How the view names the two sides and resolves ids to names (categories, folders). */
export interface WordsContext {
  /** the other side's coder name (the author of the merged remote snapshot), or undefined: "theirs" */
  them?: string;
  /** a category's (codes) or folder's (sources) name by id; undefined when unknown */
  placeName?: (table: string, id: number) => string | undefined;
}

const NOUN: Record<string, string> = {
  codes: 'code',
  categories: 'category',
  sources: 'source',
  cases: 'case',
  folders: 'folder',
  segments: 'coding',
  memos: 'memo',
};

/** The field's noun for a table ("code" for codes); the table name itself when unknown. */
export function nounOf(table: string): string {
  return NOUN[table] ?? table;
}

/** A value shortened for one line: at most `max` characters (an ellipsis where cut), line breaks as spaces. */
export function short(v: string, max = 60): string {
  const one = v.replace(/\s+/g, ' ').trim();
  return one.length > max ? `${one.slice(0, max - 1)}…` : one;
}

function quoted(v: unknown, ctx: WordsContext, table: string): string {
  if (v === null || v === undefined) return 'none';
  if (typeof v === 'string') return `'${short(v)}'`;
  if (typeof v === 'number') {
    const n = ctx.placeName?.(table, v);
    return n === undefined ? String(v) : `'${short(n)}'`;
  }
  if (typeof v === 'object' && 'text' in v && typeof (v as { text: unknown }).text === 'string') return `'${short((v as { text: string }).text)}'`;
  return short(JSON.stringify(v));
}

/**
 * One line for a conflict, naming what happened and both sides' values, e.g. "'Trust' renamed on both sides:
 * 'Trust' ← you: 'Mutual trust', Ana: 'Trust in neighbours'". `ctx.them` names the other side ("theirs" when
 * not given); moves name the category or folder through `ctx.placeName`.
 */
export function conflictInWords(c: Pick<MergeConflict, 'kind' | 'entity' | 'ours' | 'theirs' | 'base'>, ctx: WordsContext = {}): string {
  const them = ctx.them ?? 'theirs';
  const noun = nounOf(c.entity.table);
  const name = `'${short(c.entity.name)}'`;
  const sides = (place = '') => `you: ${quoted(c.ours, ctx, place)}, ${them}: ${quoted(c.theirs, ctx, place)}`;
  switch (c.kind) {
    case 'code_renamed_both':
    case 'category_renamed_both':
    case 'source_renamed_both':
    case 'case_renamed_both':
    case 'folder_renamed_both': {
      const base = typeof c.base === 'string' ? `'${short(c.base)}'` : name;
      return `${base} renamed on both sides: ${base} ← ${sides()}`;
    }
    case 'code_deleted_used':
    case 'category_deleted_used':
    case 'source_deleted_used':
    case 'folder_deleted_used':
    case 'case_deleted_used': {
      const deletedBy = c.ours === null ? 'you' : them;
      const usedBy = c.ours === null ? them : 'you';
      return `${cap(noun)} ${name} deleted by ${deletedBy} while ${usedBy} used it (kept for now)`;
    }
    case 'deleted_edited': {
      const deletedBy = c.ours === null ? 'you' : them;
      const editedBy = c.ours === null ? them : 'you';
      return `${cap(noun)} ${name} deleted by ${deletedBy} and edited by ${editedBy}`;
    }
    case 'code_moved_both':
    case 'category_moved_both':
    case 'source_moved_both':
      return `${cap(noun)} ${name} moved on both sides: ${sides(c.kind === 'source_moved_both' ? 'folders' : 'categories')}`;
    case 'memo_edited_both':
      return `Memo of ${noun} ${name} edited on both sides: ${sides()}`;
    case 'source_text_overlap':
      return `The same passage of ${name} edited on both sides: ${sides()}`;
    case 'segment_recoded_both':
      return `Coding ${name} given different codes on both sides: ${sides('codes')}`;
    case 'name_clash':
      return `Two ${noun}s named ${quoted(c.ours, ctx, '')}: ${them}'s is now ${quoted(c.theirs, ctx, '')}`;
    default:
      return `${cap(c.entity.field ?? 'value')} of ${noun} ${name} changed on both sides: ${sides()}`;
  }
}

function cap(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}
