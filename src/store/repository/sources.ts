import type { SourceInfo, SourceType } from '../../domain/model';
import type { AttributeType, AttributeValue, NewSource, SourceAttribute, SourceRepository, SourceWithCounts, Stamp } from '../../domain/ports';
import { nameKey } from '../../domain/rules';
import type { ProjectStore } from '../projectStore';
import { attributeValueOf, attributeValueParams, type AttributeValueColumns } from './shared';

const SOURCE_COLS = `s.id AS source_id, s.name, s.type, s.memo, s.origin, s.file_path, s.mime, s.size_bytes, s.folder_id,
  s.content_length AS length, s.owner, s.session_id, s.coder_role, s.created_at,
  (SELECT count(*) FROM segments g WHERE g.source_id = s.id) AS segment_count,
  (SELECT count(*) FROM av_segments a WHERE a.source_id = s.id) AS av_segment_count`;

/** {@link SourceRepository} over a {@link ProjectStore}: tables `sources`, `source_metadata_hints`, `source_attributes`. */
export class SqlSourceRepository implements SourceRepository {
  constructor(private readonly db: ProjectStore) {}

  listSources(type?: SourceType): SourceWithCounts[] {
    return type
      ? this.db.all<SourceWithCounts>(`SELECT ${SOURCE_COLS} FROM sources s WHERE s.type = ? ORDER BY s.name COLLATE NOCASE`, [type])
      : this.db.all<SourceWithCounts>(`SELECT ${SOURCE_COLS} FROM sources s ORDER BY s.name COLLATE NOCASE`);
  }
  getSource(id: number): SourceWithCounts | undefined {
    return this.db.get<SourceWithCounts>(`SELECT ${SOURCE_COLS} FROM sources s WHERE s.id = ?`, [id]);
  }
  getSourceText(id: number): string | null {
    const row = this.db.get<{ content: string | null }>('SELECT content FROM sources WHERE id = ?', [id]);
    return row?.content ?? null;
  }
  findSourceByName(name: string): SourceInfo | undefined {
    // Source names are unique by nameKey (NFC, trimmed, case-insensitive), as code and category names are:
    // the exact name first (the UNIQUE index), else every name compared by its key (names only, no content).
    const exact = this.db.get<SourceInfo>(`SELECT s.id AS source_id, s.name, s.type FROM sources s WHERE s.name = ?`, [name]);
    if (exact) return exact;
    const key = nameKey(name);
    return this.db.all<SourceInfo>(`SELECT s.id AS source_id, s.name, s.type FROM sources s ORDER BY s.id`).find((s) => nameKey(s.name) === key);
  }
  findSourceByPath(filePath: string): SourceInfo | undefined {
    return this.db.get<SourceInfo>(`SELECT s.id AS source_id, s.name, s.type, s.file_path FROM sources s WHERE s.file_path = ? ORDER BY s.id LIMIT 1`, [
      filePath,
    ]);
  }
  textSourceLengths(sourceIds?: readonly number[]): { source_id: number; name: string; length: number }[] {
    return sourceIds
      ? this.db.all(
          "SELECT id AS source_id, name, content_length AS length FROM sources WHERE type = 'text' AND id IN (SELECT value FROM json_each(?)) ORDER BY id",
          [JSON.stringify(sourceIds)],
        )
      : this.db.all("SELECT id AS source_id, name, content_length AS length FROM sources WHERE type = 'text' ORDER BY id");
  }
  insertSource(src: NewSource, st: Stamp): number {
    return this.db.run(
      `INSERT INTO sources(name, type, content, content_length, memo, origin, file_path, mime, size_bytes, folder_id, owner, session_id, coder_role, created_at, updated_at)
       VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
      [
        src.name,
        src.type,
        src.text,
        src.length,
        src.memo,
        src.origin,
        src.file_path,
        src.mime,
        src.size_bytes,
        src.folder_id,
        st.owner,
        st.session_id,
        st.coder_role ?? null,
        st.now,
        st.now,
      ],
    ).lastId;
  }
  deleteSource(id: number): void {
    this.db.run('DELETE FROM source_metadata_hints WHERE source_id = ?', [id]);
    this.db.run('DELETE FROM orphan_segments WHERE source_id = ?', [id]);
    this.db.run('DELETE FROM source_attributes WHERE source_id = ?', [id]);
    this.db.run('DELETE FROM sources WHERE id = ?', [id]);
    // cases: the source's memberships go with it (the foreign keys cascade too; this keeps it explicit)
    this.db.run('DELETE FROM case_sources WHERE source_id = ?', [id]);
    this.db.run('DELETE FROM case_segments WHERE source_id = ?', [id]);
  }
  setSourceFolder(id: number, folderId: number | null, now: string): void {
    this.db.run('UPDATE sources SET folder_id = ?, updated_at = ? WHERE id = ?', [folderId, now, id]);
  }
  renameSource(id: number, name: string, now: string): void {
    this.db.run('UPDATE sources SET name = ?, updated_at = ? WHERE id = ?', [name, now, id]);
  }
  setSourceMemo(id: number, memo: string | null, now: string): void {
    this.db.run('UPDATE sources SET memo = ?, updated_at = ? WHERE id = ?', [memo, now, id]);
  }
  insertMetadataHint(sourceId: number, hint: { language: string | null; topics: string[] | null; organization_suggestion: string | null }, st: Stamp): number {
    return this.db.run(
      'INSERT INTO source_metadata_hints(source_id, language, topics, organization_suggestion, owner, session_id, created_at) VALUES (?,?,?,?,?,?,?)',
      [sourceId, hint.language, hint.topics ? JSON.stringify(hint.topics) : null, hint.organization_suggestion, st.owner, st.session_id, st.now],
    ).lastId;
  }
  spliceSourceText(id: number, start: number, end: number, text: string, insertedLength: number, now: string): void {
    // SQLite's substr() counts characters (code points) of TEXT values, as Marginalia's positions do.
    this.db.run(
      'UPDATE sources SET content = substr(content, 1, ?) || ? || substr(content, ?), content_length = content_length - ? + ?, updated_at = ? WHERE id = ?',
      [start, text, end + 1, end - start, insertedLength, now, id],
    );
  }
  replaceSourceText(id: number, text: string, length: number, now: string): void {
    this.db.run('UPDATE sources SET content = ?, content_length = ?, updated_at = ? WHERE id = ?', [text, length, now, id]);
  }
  listSourceAttributes(sourceId?: number): SourceAttribute[] {
    const rows =
      sourceId === undefined
        ? this.db.all<SourceAttributeRow>(`SELECT ${SOURCE_ATTRIBUTE_COLS} FROM source_attributes ORDER BY source_id, name`)
        : this.db.all<SourceAttributeRow>(`SELECT ${SOURCE_ATTRIBUTE_COLS} FROM source_attributes WHERE source_id = ? ORDER BY name`, [sourceId]);
    return rows.map(sourceAttributeOf);
  }
  setSourceAttribute(sourceId: number, name: string, type: AttributeType, value: AttributeValue, st: Stamp): void {
    this.db.run(
      `INSERT INTO source_attributes(source_id, name, type, value_text, value_number, value_date, value_boolean, updated_at, owner, session_id) VALUES (?,?,?,?,?,?,?,?,?,?)
       ON CONFLICT(source_id, name) DO UPDATE SET type = excluded.type, value_text = excluded.value_text, value_number = excluded.value_number,
         value_date = excluded.value_date, value_boolean = excluded.value_boolean, updated_at = excluded.updated_at, owner = excluded.owner, session_id = excluded.session_id`,
      [sourceId, name, type, ...attributeValueParams(type, value), st.now, st.owner, st.session_id],
    );
  }
  deleteSourceAttribute(sourceId: number, name: string): boolean {
    // read first, so deleting an absent attribute journals no statement
    if (!this.db.get('SELECT 1 AS x FROM source_attributes WHERE source_id = ? AND name = ?', [sourceId, name])) return false;
    this.db.run('DELETE FROM source_attributes WHERE source_id = ? AND name = ?', [sourceId, name]);
    return true;
  }
}

const SOURCE_ATTRIBUTE_COLS = 'source_id, name, type, value_text, value_number, value_date, value_boolean, updated_at, owner, session_id';

/** A row of `source_attributes`. */
interface SourceAttributeRow extends AttributeValueColumns {
  source_id: number;
  name: string;
  updated_at: string;
  owner: string;
  session_id: string | null;
}

/** A stored document attribute row as the domain's typed value (the column its type names). */
function sourceAttributeOf(r: SourceAttributeRow): SourceAttribute {
  return { source_id: r.source_id, name: r.name, type: r.type, value: attributeValueOf(r), updated_at: r.updated_at, owner: r.owner, session_id: r.session_id };
}
