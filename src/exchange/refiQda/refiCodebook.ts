/**
 * The codebook as REFI-QDA `Code` elements, shared by the project export (`project.qde` in a `.qdpx`) and the
 * codebook export (`.qdc`), both in refiExport.ts: categories become non-codable `Code`s nesting their
 * sub-categories and codes, codes codable `Code`s with their colour and memo (standard section 11).
 */
import { deriveGuid } from '../../domain/exchangeIds';
import type { CategoryWithCount, CodeWithCounts } from '../../domain/ports';
import { nameKey } from '../../domain/rules';
import type { ProjectSnapshot } from '../projectSnapshot';
import type { XmlWriter } from './xml';

/**
 * Writes the `Code` elements of the codebook (shared by project.qde and .qdc). Returns the codes (codable `Code`
 * elements) and categories (non-codable ones) written, and warnings about what one element could not hold.
 *
 * A category and a code are written as ONE codable `Code` with children (the category's sub-categories and other
 * codes inside it) when they are twins: the code sits in the category and shares its stored GUID (what importing
 * a codable `Code` with children made, whatever names the import had to give them), or, for pairs made in
 * Marginalia, has the category's name (case-insensitive) and no conflicting memo. The element takes the code's
 * GUID, colour and memo and the category's name; a category memo that differs from the code's is appended to the
 * `Description` (warning), as is a code name that differs from the category's (warning).
 */
export function writeCodes(w: XmlWriter, s: ProjectSnapshot): { codes: number; categories: number; warnings: string[] } {
  const warnings: string[] = [];
  const codesByCategory = new Map<number | null, CodeWithCounts[]>();
  for (const c of s.codes) {
    const list = codesByCategory.get(c.category_id) ?? [];
    list.push(c);
    codesByCategory.set(c.category_id, list);
  }
  const children = new Map<number | null, CategoryWithCount[]>();
  const known = new Set(s.categories.map((c) => c.category_id));
  for (const c of s.categories) {
    const parent = c.parent_id !== null && known.has(c.parent_id) ? c.parent_id : null;
    const list = children.get(parent) ?? [];
    list.push(c);
    children.set(parent, list);
  }
  const byName = <T extends { name: string }>(a: T, b: T) => a.name.localeCompare(b.name);
  let codes = 0;
  let categories = 0;
  // a category imported from a codable parent Code shares that Code's GUID with its twin code; written apart from
  // the code (when their memos differ), it takes its derived GUID so that no two elements share one
  const codeGuids = new Set(s.codes.map((c) => s.guids.guid('code', c.code_id)));
  const categoryGuid = (k: CategoryWithCount) => {
    const g = s.guids.guid('category', k.category_id);
    return codeGuids.has(g) ? deriveGuid(s.guids.projectGuid, 'category', k.category_id) : g;
  };
  const code = (c: CodeWithCounts) => {
    codes++;
    if (c.memo)
      w.start('Code', { guid: s.guids.guid('code', c.code_id), name: c.name, isCodable: true, color: c.color })
        .text('Description', c.memo)
        .end();
    else w.empty('Code', { guid: s.guids.guid('code', c.code_id), name: c.name, isCodable: true, color: c.color });
  };
  const visited = new Set<number>();
  const category = (k: CategoryWithCount) => {
    if (visited.has(k.category_id)) return;
    visited.add(k.category_id);
    const own = codesByCategory.get(k.category_id) ?? [];
    const storedGuid = s.guids.guid('category', k.category_id);
    const twin =
      own.find((c) => s.guids.guid('code', c.code_id) === storedGuid) ??
      own.find((c) => nameKey(c.name) === nameKey(k.name) && (k.memo === null || k.memo === c.memo));
    const subs = [...(children.get(k.category_id) ?? [])].sort(byName);
    const rest = own.filter((c) => c !== twin).sort(byName);
    if (twin) codes++;
    else categories++;
    const attrs = twin
      ? { guid: s.guids.guid('code', twin.code_id), name: k.name, isCodable: true, color: twin.color }
      : { guid: categoryGuid(k), name: k.name, isCodable: false };
    let memo = twin ? (twin.memo ?? k.memo) : k.memo;
    if (twin && twin.memo !== null && k.memo !== null && twin.memo !== k.memo) {
      memo = `${twin.memo}\n\n${k.memo}`;
      warnings.push(
        `The category '${k.name}' and its code '${twin.name}' are one codable Code in REFI-QDA: the category's memo is written after the code's in its Description`,
      );
    }
    if (twin && nameKey(twin.name) !== nameKey(k.name)) {
      warnings.push(`The category '${k.name}' and its code '${twin.name}' are one codable Code in REFI-QDA: it is written with the category's name`);
    }
    if (!memo && subs.length === 0 && rest.length === 0) {
      w.empty('Code', attrs);
      return;
    }
    w.start('Code', attrs);
    if (memo) w.text('Description', memo);
    for (const sub of subs) category(sub);
    for (const c of rest) code(c);
    w.end();
  };
  for (const k of [...(children.get(null) ?? [])].sort(byName)) category(k);
  // categories left out by a parent cycle (not possible through the domain rules, but never lose one)
  for (const k of [...s.categories].sort(byName)) category(k);
  for (const c of [...(codesByCategory.get(null) ?? [])].sort(byName)) code(c);
  for (const [id, list] of codesByCategory) if (id !== null && !known.has(id)) for (const c of [...list].sort(byName)) code(c);
  return { codes, categories, warnings };
}
