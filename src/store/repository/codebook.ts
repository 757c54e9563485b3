import type { Category, Code } from '../../domain/model';
import type { CategoryWithCount, CodebookRepository, CodeWithCounts, NewCode, Stamp } from '../../domain/ports';
import type { ProjectStore } from '../projectStore';

const CODE_COLS = `c.id AS code_id, c.name, c.color, c.memo, c.category_id, c.owner, c.session_id, c.coder_role, c.created_at, c.updated_at, c.version,
  (SELECT count(*) FROM segments s WHERE s.code_id = c.id) AS segment_count,
  (SELECT count(*) FROM av_segments a WHERE a.code_id = c.id) AS av_segment_count`;

/**
 * {@link CodebookRepository} over a {@link ProjectStore}: tables `codes` and `categories`. The code and category
 * lists are served from a cache between writes (see {@link SqlCodebookRepository.listCodes}).
 */
export class SqlCodebookRepository implements CodebookRepository {
  /**
   * The codebook as {@link listCodes} last read it, valid while the store's
   * {@link ProjectStore.writeGeneration} is still `generation` (any write, commit or rollback
   * invalidates it). The per-code counts are two correlated subqueries per code, about 0.4 ms for 50 codes
   * (bench/RESULTS.md); list_codes and the agent context read the codebook on most calls. The code
   * objects are frozen and shared between callers; each call gets a fresh array.
   */
  private codebook: { generation: number; list: readonly CodeWithCounts[]; byId: Map<number, CodeWithCounts> } | undefined;
  /** The categories as {@link listCategories} last read them, valid while the write generation is unchanged. */
  private categories: { generation: number; list: readonly CategoryWithCount[] } | undefined;
  constructor(private readonly db: ProjectStore) {}

  /** Every code with its segment counts, by name (case-insensitive). Served from a cache between writes. */
  listCodes(): CodeWithCounts[] {
    const generation = this.db.writeGeneration;
    let cb = this.codebook;
    if (cb?.generation !== generation) {
      const list = this.db.all<CodeWithCounts>(`SELECT ${CODE_COLS} FROM codes c ORDER BY c.name COLLATE NOCASE`).map((c) => Object.freeze(c));
      cb = { generation, list, byId: new Map(list.map((c) => [c.code_id, c])) };
      this.codebook = cb;
    }
    return [...cb.list];
  }
  /** One code with its counts (frozen when it comes from the codebook cache). */
  getCode(id: number): CodeWithCounts | undefined {
    const cb = this.codebook;
    if (cb?.generation === this.db.writeGeneration && Number.isInteger(id)) return cb.byId.get(id);
    return this.db.get<CodeWithCounts>(`SELECT ${CODE_COLS} FROM codes c WHERE c.id = ?`, [id]);
  }
  findCodeByKey(key: string): Code | undefined {
    return this.db.get<Code>(
      'SELECT id AS code_id, name, color, memo, category_id, owner, session_id, created_at, updated_at, version FROM codes WHERE name_key = ?',
      [key],
    );
  }
  insertCode(code: NewCode, key: string, st: Stamp): number {
    return this.db.run(
      'INSERT INTO codes(name, name_key, color, memo, category_id, owner, session_id, coder_role, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?)',
      [code.name, key, code.color, code.memo, code.category_id, st.owner, st.session_id, st.coder_role ?? null, st.now, st.now],
    ).lastId;
  }
  updateCode(id: number, fields: Partial<Pick<Code, 'name' | 'color' | 'memo' | 'category_id'>>, key: string | null, now: string): void {
    const { sets, params } = setClause(fields, key);
    sets.push('updated_at = ?', 'version = version + 1');
    params.push(now, id);
    this.db.run(`UPDATE codes SET ${sets.join(', ')} WHERE id = ?`, params);
  }
  deleteCode(id: number): void {
    this.db.run('DELETE FROM orphan_segments WHERE code_id = ?', [id]);
    this.db.run('DELETE FROM codes WHERE id = ?', [id]);
  }
  listCodeLabels(): { code_id: number; name: string; color: string; category_id: number | null }[] {
    return this.db.all('SELECT id AS code_id, name, color, category_id FROM codes ORDER BY id');
  }
  codeColourCounts(): { color: string; count: number }[] {
    return this.db.all('SELECT color, COUNT(*) AS count FROM codes GROUP BY color ORDER BY color');
  }
  codesWithColours(colours: readonly string[], exceptCodeId: number, limit: number): { code_id: number; name: string; color: string }[] {
    if (colours.length === 0 || limit <= 0) return [];
    const marks = colours.map(() => '?').join(', ');
    return this.db.all(`SELECT id AS code_id, name, color FROM codes WHERE color IN (${marks}) AND id <> ? ORDER BY id LIMIT ?`, [
      ...colours,
      exceptCodeId,
      limit,
    ]);
  }
  /**
   * Every category with its code count, by name (case-insensitive). Served from a cache between writes,
   * like {@link listCodes} (list_codes reads the categories on every call); the objects are frozen.
   */
  listCategories(): CategoryWithCount[] {
    const generation = this.db.writeGeneration;
    let cached = this.categories;
    if (cached?.generation !== generation) {
      const list = this.db
        .all<CategoryWithCount>(
          `SELECT k.id AS category_id, k.name, k.parent_id, k.memo, k.owner, k.created_at,
            (SELECT count(*) FROM codes c WHERE c.category_id = k.id) AS code_count
           FROM categories k ORDER BY k.name COLLATE NOCASE`,
        )
        .map((c) => Object.freeze(c));
      cached = { generation, list };
      this.categories = cached;
    }
    return [...cached.list];
  }
  getCategory(id: number): Category | undefined {
    return this.db.get<Category>('SELECT id AS category_id, name, parent_id, memo, owner, created_at FROM categories WHERE id = ?', [id]);
  }
  findCategoryByKey(key: string): Category | undefined {
    return this.db.get<Category>('SELECT id AS category_id, name, parent_id, memo, owner, created_at FROM categories WHERE name_key = ?', [key]);
  }
  insertCategory(name: string, key: string, parentId: number | null, memo: string | null, st: Stamp): number {
    return this.db.run('INSERT INTO categories(name, name_key, parent_id, memo, owner, session_id, coder_role, created_at) VALUES (?,?,?,?,?,?,?,?)', [
      name,
      key,
      parentId,
      memo,
      st.owner,
      st.session_id,
      st.coder_role ?? null,
      st.now,
    ]).lastId;
  }
  updateCategory(id: number, fields: Partial<Pick<Category, 'name' | 'memo' | 'parent_id'>>, key: string | null): void {
    const { sets, params } = setClause(fields, key);
    if (sets.length === 0) return;
    this.db.run(`UPDATE categories SET ${sets.join(', ')} WHERE id = ?`, [...params, id]);
  }
  deleteCategory(id: number): void {
    this.db.run('DELETE FROM categories WHERE id = ?', [id]);
  }
}

/**
 * The `SET` assignments of an UPDATE of a code or category: one `column = ?` per given field (the keys are
 * column names the caller's type restricts), plus `name_key = ?` when `key` is not null. Returns the
 * assignments and their bound values, in order; the caller appends its own and the WHERE parameter.
 */
function setClause(fields: Record<string, unknown>, key: string | null): { sets: string[]; params: (string | number | null)[] } {
  const sets: string[] = [];
  const params: (string | number | null)[] = [];
  for (const [k, v] of Object.entries(fields)) {
    sets.push(`${k} = ?`);
    params.push(v as string | number | null);
  }
  if (key !== null) {
    sets.push('name_key = ?');
    params.push(key);
  }
  return { sets, params };
}
