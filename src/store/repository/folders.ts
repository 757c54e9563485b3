import type { Folder } from '../../domain/model';
import type { FolderRepository, Stamp } from '../../domain/ports';
import type { ProjectStore } from '../projectStore';

/** {@link FolderRepository} over a {@link ProjectStore}: table `folders`. */
export class SqlFolderRepository implements FolderRepository {
  constructor(private readonly db: ProjectStore) {}

  listFolders(): (Folder & { source_count: number })[] {
    return this.db.all<Folder & { source_count: number }>(
      `SELECT f.id AS folder_id, f.name, f.parent_id, f.owner, f.created_at,
        (SELECT count(*) FROM sources s WHERE s.folder_id = f.id) AS source_count
       FROM folders f ORDER BY f.name COLLATE NOCASE`,
    );
  }
  getFolder(id: number): Folder | undefined {
    return this.db.get<Folder>('SELECT id AS folder_id, name, parent_id, owner, created_at FROM folders WHERE id = ?', [id]);
  }
  findFolder(parentId: number | null, name: string): Folder | undefined {
    return this.db.get<Folder>('SELECT id AS folder_id, name, parent_id, owner, created_at FROM folders WHERE COALESCE(parent_id, 0) = ? AND name = ?', [
      parentId ?? 0,
      name,
    ]);
  }
  insertFolder(name: string, parentId: number | null, st: Stamp): number {
    return this.db.run('INSERT INTO folders(name, parent_id, owner, created_at) VALUES (?,?,?,?)', [name, parentId, st.owner, st.now]).lastId;
  }
  renameFolder(id: number, name: string): void {
    this.db.run('UPDATE folders SET name = ? WHERE id = ?', [name, id]);
  }
  deleteFolder(id: number): void {
    this.db.run('DELETE FROM folders WHERE id = ?', [id]);
  }
  folderContents(id: number): { sources: number; folders: number } {
    const r = this.db.get<{ sources: number; folders: number }>(
      'SELECT (SELECT count(*) FROM sources WHERE folder_id = ?) AS sources, (SELECT count(*) FROM folders WHERE parent_id = ?) AS folders',
      [id, id],
    );
    return r ?? { sources: 0, folders: 0 };
  }
}
