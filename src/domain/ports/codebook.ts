import type { Category, Code } from '../model';
import type { Stamp } from './common';

/** A code with the number of text and AV segments coded with it. */
export interface CodeWithCounts extends Code {
  segment_count: number;
  av_segment_count: number;
}

/** A category with the number of codes directly in it (not counting sub-categories). */
export interface CategoryWithCount extends Category {
  code_count: number;
}

/** Fields of a new code. */
export interface NewCode {
  name: string;
  /** `#RRGGBB` */
  color: string;
  memo: string | null;
  category_id: number | null;
}

/**
 * The codebook: codes and the categories that group them (tables `codes`, `categories`). Names are unique by
 * `name_key` (`nameKey` of src/domain/rules.ts: NFC, trimmed, case-insensitive); the caller computes the key and
 * checks it is free, a clash fails on the table's UNIQUE index.
 */
export interface CodebookRepository {
  /** Every code with its segment counts, by name (case-insensitive). The objects are read-only: the store may share them between callers. */
  listCodes(): CodeWithCounts[];
  /** One code with its segment counts (read-only, as {@link listCodes}); undefined for an unknown id. */
  getCode(id: number): CodeWithCounts | undefined;
  /** The code whose `name_key` is `key`, without counts. */
  findCodeByKey(key: string): Code | undefined;
  /** Inserts a code (version 1) and returns its id. */
  insertCode(code: NewCode, key: string, stamp: Stamp): number;
  /**
   * Changes the given fields of a code, with its `name_key` when `key` is not null (a rename), sets `updated_at`
   * to `now` and increments its `version`.
   */
  updateCode(id: number, fields: Partial<Pick<Code, 'name' | 'color' | 'memo' | 'category_id'>>, key: string | null, now: string): void;
  /** Deletes a code and its orphaned segments; the caller has removed or moved its segments first (foreign keys). */
  deleteCode(id: number): void;
  /** Every code's id, name, colour and category, without counts (cheap for thousands of codes), by id. */
  listCodeLabels(): { code_id: number; name: string; color: string; category_id: number | null }[];
  /** How many codes have each colour: one row per distinct `#RRGGBB` text as stored, by colour. */
  codeColourCounts(): { color: string; count: number }[];
  /** Up to `limit` codes other than `exceptCodeId` whose colour text is one of `colours` (as stored), by id. */
  codesWithColours(colours: readonly string[], exceptCodeId: number, limit: number): { code_id: number; name: string; color: string }[];
  /** Every category with its code count, by name (case-insensitive); the objects are read-only, as {@link listCodes}. */
  listCategories(): CategoryWithCount[];
  /** One category; undefined for an unknown id. */
  getCategory(id: number): Category | undefined;
  /** The category whose `name_key` is `key`. */
  findCategoryByKey(key: string): Category | undefined;
  /** Inserts a category under `parentId` (null: top level) and returns its id. */
  insertCategory(name: string, key: string, parentId: number | null, memo: string | null, stamp: Stamp): number;
  /** Changes a category's name (with its `name_key`), memo or parent; `key` is null unless the name changes. No fields: nothing written. */
  updateCategory(id: number, fields: Partial<Pick<Category, 'name' | 'memo' | 'parent_id'>>, key: string | null): void;
  /** Deletes a category row; the caller has moved its codes and sub-categories first (foreign keys). */
  deleteCategory(id: number): void;
}
