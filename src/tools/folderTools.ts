import { z } from 'zod';
import type { Folder } from '../domain/model';
import { createFolder, deleteFolder, moveSourceToFolder, renameFolder } from '../domain/sources';
import { defineTool } from './defineTool';
import { folderOut } from './present';
import { args, folderName, id } from './schemas';

/** A folder in the hierarchy, with its path from the root and its children. */
interface FolderNode {
  folder_id: number;
  name: string;
  parent_id: number | null;
  path: string;
  depth: number;
  source_count: number;
  children: FolderNode[];
}

function folderTree(folders: (Folder & { source_count: number })[]): { roots: FolderNode[]; flat: Omit<FolderNode, 'children'>[] } {
  const nodes = new Map<number, FolderNode>();
  for (const f of folders)
    nodes.set(f.folder_id, {
      folder_id: f.folder_id,
      name: f.name,
      parent_id: f.parent_id,
      path: f.name,
      depth: 0,
      source_count: f.source_count,
      children: [],
    });
  const roots: FolderNode[] = [];
  for (const n of nodes.values()) {
    const p = n.parent_id === null ? undefined : nodes.get(n.parent_id);
    if (p) p.children.push(n);
    else roots.push(n);
  }
  const flat: Omit<FolderNode, 'children'>[] = [];
  const walk = (n: FolderNode, depth: number, prefix: string) => {
    n.depth = depth;
    n.path = prefix ? `${prefix}/${n.name}` : n.name;
    const { children: _children, ...rest } = n;
    flat.push(rest);
    n.children.sort((a, b) => a.name.localeCompare(b.name));
    for (const c of n.children) walk(c, depth + 1, n.path);
  };
  roots.sort((a, b) => a.name.localeCompare(b.name));
  for (const r of roots) walk(r, 0, '');
  return { roots, flat };
}

export const listFolders = defineTool({
  name: 'list_folders',
  group: 'folder',
  title: 'List Folders',
  description:
    'All source folders with their hierarchy. Returns {count, folders: [{folder_id, name, parent_id, path, depth, source_count}] in tree order, ' +
    'tree: the same folders nested under children, root_source_count: sources not in any folder}.',
  input: args({}),
  effect: 'read',
  trust: 'read',
  run: (ctx) => {
    const repo = ctx.domain.repo;
    const { roots, flat } = folderTree(repo.listFolders());
    const rootSources = repo.listSources().filter((s) => s.folder_id === null).length;
    return { count: flat.length, folders: flat, tree: roots, root_source_count: rootSources };
  },
});

export const createFolderTool = defineTool({
  name: 'create_folder',
  group: 'folder',
  title: 'Create Folder',
  description:
    'Create a source folder, at the root or inside parent_id. Names are 1-255 characters, contain no slash, and are unique within their parent. ' +
    'Returns {folder_id, name, parent_id}. Errors: FOLDER_NOT_CREATED (bad or duplicate name, unknown parent).',
  input: args({
    name: folderName().describe('folder name: 1-255 characters, no slash'),
    parent_id: id('parent folder (omit for the root)').nullable().optional(),
  }),
  effect: 'create',
  trust: 'create',
  run: (ctx, input) => folderOut(createFolder(ctx.domain, input.name, input.parent_id ?? null)),
});

export const renameFolderTool = defineTool({
  name: 'rename_folder',
  group: 'folder',
  title: 'Rename Folder',
  description:
    'Rename a folder (1-255 characters, no slash, unique within its parent). Returns {folder_id, name, old_name}. Errors: FOLDER_NOT_FOUND, FOLDER_RENAME_FAILED.',
  input: args({ folder_id: id('the folder'), new_name: folderName().describe('the new name: 1-255 characters, no slash') }),
  effect: 'modify',
  trust: 'rename',
  run: (ctx, input) => {
    const r = renameFolder(ctx.domain, input.folder_id, input.new_name);
    return { ...folderOut(r.folder), old_name: r.old_name };
  },
});

export const deleteFolderTool = defineTool({
  name: 'delete_folder',
  group: 'folder',
  title: 'Delete Folder',
  description:
    'Delete an empty folder (no sources and no sub-folders in it). Returns {deleted: true, folder_id, name}. Errors: FOLDER_NOT_FOUND, FOLDER_NOT_EMPTY.',
  input: args({ folder_id: id('the folder') }),
  effect: 'destroy',
  trust: 'delete',
  run: (ctx, input) => {
    const f = deleteFolder(ctx.domain, input.folder_id);
    return { deleted: true, folder_id: f.folder_id, name: f.name };
  },
});

export const moveSourceToFolderTool = defineTool({
  name: 'move_source_to_folder',
  group: 'folder',
  title: 'Move Source to Folder',
  description:
    'Move a source into a folder; folder_id null, 0 or omitted moves it to the root. Returns {source_id, old_folder_id, new_folder_id}. Errors: SOURCE_NOT_FOUND, FOLDER_NOT_FOUND.',
  input: args({
    source_id: id('the source'),
    folder_id: z
      .union([z.literal(0), z.literal('0'), id('target folder')])
      .nullable()
      .optional()
      .describe('target folder; null, 0 or omitted means the root'),
  }),
  effect: 'modify',
  trust: 'apply_code',
  run: (ctx, input) => {
    const target = input.folder_id === undefined || input.folder_id === null || input.folder_id === 0 || input.folder_id === '0' ? null : input.folder_id;
    const r = moveSourceToFolder(ctx.domain, input.source_id, target);
    return { source_id: input.source_id, old_folder_id: r.old_folder_id, new_folder_id: target };
  },
});
