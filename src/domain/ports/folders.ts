import type { Folder } from '../model';
import type { Stamp } from './common';

/** Folders of sources (table `folders`): a tree through `parent_id`; names are unique among siblings (exact). */
export interface FolderRepository {
  /** Every folder with the number of sources directly in it, by name (case-insensitive). */
  listFolders(): (Folder & { source_count: number })[];
  /** One folder; undefined for an unknown id. */
  getFolder(id: number): Folder | undefined;
  /** The folder named exactly `name` under `parentId` (null: the top level). */
  findFolder(parentId: number | null, name: string): Folder | undefined;
  /** Inserts a folder under `parentId` (null: the top level) and returns its id. */
  insertFolder(name: string, parentId: number | null, stamp: Stamp): number;
  /** Sets a folder's name (the caller checked it is free among its siblings). */
  renameFolder(id: number, name: string): void;
  /** Deletes a folder row; the caller has emptied it first (see {@link folderContents}). */
  deleteFolder(id: number): void;
  /** How many sources and sub-folders are directly inside a folder (0 and 0 for an unknown id). */
  folderContents(id: number): { sources: number; folders: number };
}
