import { ToolError } from '../core/errors';
import { codePointLength, toWellFormed } from '../core/text';
import type { DomainContext } from './events';
import type { Folder, SourceType } from './model';
import type { ProjectRepository, SourceWithCounts, Stamp } from './ports';
import { cleanFolderName, cleanName, MAX_SOURCE_NAME } from './rules';

type Ctx = DomainContext<ProjectRepository>;

function stamp(ctx: Ctx): Stamp {
  return { owner: ctx.actor.user, session_id: ctx.actor.session_id, now: ctx.now, coder_role: ctx.actor.role ?? null };
}

/** The source with id `id`, or SOURCE_NOT_FOUND. */
export function requireSource(ctx: Ctx, id: number): SourceWithCounts {
  const s = ctx.repo.getSource(id);
  if (!s) throw new ToolError('SOURCE_NOT_FOUND', `No source with source_id ${id}`);
  return s;
}

/**
 * Checks that `[start, end)` (code points) is a non-empty range inside `source`'s text.
 * Errors: INVALID_POSITION naming the source and its length (details: start_pos, end_pos, source_length).
 */
export function requireRangeInside(source: SourceWithCounts, start: number, end: number): void {
  if (!Number.isInteger(start) || !Number.isInteger(end) || start < 0 || end <= start || end > source.length) {
    throw new ToolError(
      'INVALID_POSITION',
      `The range [${start}, ${end}) is not inside the source "${source.name}" (0..${source.length} code points, end after start)`,
      { start_pos: start, end_pos: end, source_length: source.length },
    );
  }
}

/** The folder with id `id`, or FOLDER_NOT_FOUND. */
export function requireFolder(ctx: Ctx, id: number): Folder {
  const f = ctx.repo.getFolder(id);
  if (!f) throw new ToolError('FOLDER_NOT_FOUND', `No folder with folder_id ${id}`);
  return f;
}

/**
 * Checks a new source's name: 1-255 code points, unique in the project (rule 2).
 * Errors: SOURCE_DUPLICATE_NAME, INVALID_ARGUMENTS.
 */
export function checkSourceName(ctx: Ctx, name: string): string {
  const n = cleanName(name, MAX_SOURCE_NAME, 'source', 'INVALID_ARGUMENTS');
  const clash = ctx.repo.findSourceByName(n);
  if (clash) throw new ToolError('SOURCE_DUPLICATE_NAME', `A source named "${n}" already exists (source_id ${clash.source_id})`);
  return n;
}

/** Input of {@link addSource}. `text` is null for audio, video and image sources. */
export interface AddSourceInput {
  name: string;
  type: SourceType;
  text: string | null;
  memo?: string | null;
  origin?: string | null;
  file_path?: string | null;
  mime?: string | null;
  size_bytes?: number | null;
  folder_id?: number | null;
}

/**
 * Adds a source with its text (stored exactly as given; positions count its code points).
 * Emits source.imported. Errors: SOURCE_DUPLICATE_NAME, FOLDER_NOT_FOUND, INVALID_ARGUMENTS.
 */
export function addSource(ctx: Ctx, input: AddSourceInput): SourceWithCounts {
  const name = checkSourceName(ctx, input.name);
  const folderId = input.folder_id ?? null;
  if (folderId !== null) requireFolder(ctx, folderId);
  // unpaired surrogates cannot be stored as UTF-8; U+FFFD keeps every code point position
  const text = input.text === null ? null : toWellFormed(input.text);
  const length = text === null ? 0 : codePointLength(text);
  const id = ctx.repo.insertSource(
    {
      name,
      type: input.type,
      text,
      length,
      memo: input.memo ?? null,
      origin: input.origin ?? null,
      file_path: input.file_path ?? null,
      mime: input.mime ?? (input.type === 'text' ? 'text/plain' : null),
      size_bytes: input.size_bytes ?? (text === null ? null : Buffer.byteLength(text, 'utf8')),
      folder_id: folderId,
    },
    stamp(ctx),
  );
  ctx.events.emit({
    event_type: 'source.imported',
    aggregate_type: 'source',
    aggregate_id: String(id),
    payload: { source_id: id, name, type: input.type, size: length },
  });
  return requireSource(ctx, id);
}

/** Deletes a source and all its text and AV segments. Emits source.deleted. Errors: SOURCE_NOT_FOUND. */
export function deleteSource(ctx: Ctx, id: number): { source: SourceWithCounts; segments_removed: number } {
  const source = requireSource(ctx, id);
  const removed = ctx.repo.deleteSegmentsOfSource(id);
  ctx.repo.deleteSource(id);
  ctx.events.emit({ event_type: 'source.deleted', aggregate_type: 'source', aggregate_id: String(id), payload: { source_id: id, name: source.name } });
  return { source, segments_removed: removed };
}

/**
 * Moves a source into a folder, or with null into the root. Emits source.moved.
 * Errors: SOURCE_NOT_FOUND, FOLDER_NOT_FOUND.
 */
export function moveSourceToFolder(ctx: Ctx, sourceId: number, folderId: number | null): { old_folder_id: number | null } {
  const source = requireSource(ctx, sourceId);
  if (folderId !== null) requireFolder(ctx, folderId);
  ctx.repo.setSourceFolder(sourceId, folderId, ctx.now);
  ctx.events.emit({
    event_type: 'source.moved',
    aggregate_type: 'source',
    aggregate_id: String(sourceId),
    payload: { source_id: sourceId, old_folder_id: source.folder_id, new_folder_id: folderId },
  });
  return { old_folder_id: source.folder_id };
}

/**
 * Creates a folder (rule 3: 1-255 characters, no slash, unique within its parent).
 * Emits source.folder_created. Errors: FOLDER_NOT_CREATED (bad name, duplicate, or unknown parent).
 */
export function createFolder(ctx: Ctx, name: string, parentId: number | null): Folder {
  const n = cleanFolderName(name, 'FOLDER_NOT_CREATED');
  if (parentId !== null && !ctx.repo.getFolder(parentId)) {
    throw new ToolError('FOLDER_NOT_CREATED', `The parent folder ${parentId} does not exist`);
  }
  if (ctx.repo.findFolder(parentId, n)) {
    throw new ToolError('FOLDER_NOT_CREATED', `A folder named "${n}" already exists in ${parentId === null ? 'the root' : `folder ${parentId}`}`);
  }
  const id = ctx.repo.insertFolder(n, parentId, stamp(ctx));
  ctx.events.emit({
    event_type: 'source.folder_created',
    aggregate_type: 'folder',
    aggregate_id: String(id),
    payload: { folder_id: id, name: n, parent_id: parentId },
  });
  return requireFolder(ctx, id);
}

/**
 * Renames a folder (rule 3). Emits source.folder_renamed.
 * Errors: FOLDER_NOT_FOUND, FOLDER_RENAME_FAILED (bad name or duplicate within the parent).
 */
export function renameFolder(ctx: Ctx, id: number, newName: string): { folder: Folder; old_name: string } {
  const folder = requireFolder(ctx, id);
  const n = cleanFolderName(newName, 'FOLDER_RENAME_FAILED');
  const clash = ctx.repo.findFolder(folder.parent_id, n);
  if (clash && clash.folder_id !== id) throw new ToolError('FOLDER_RENAME_FAILED', `A folder named "${n}" already exists beside it`);
  ctx.repo.renameFolder(id, n);
  ctx.events.emit({
    event_type: 'source.folder_renamed',
    aggregate_type: 'folder',
    aggregate_id: String(id),
    payload: { folder_id: id, old_name: folder.name, new_name: n },
  });
  return { folder: requireFolder(ctx, id), old_name: folder.name };
}

/** Deletes an empty folder. Emits source.folder_deleted {folder_id, name, parent_id, owner}. Errors: FOLDER_NOT_FOUND, FOLDER_NOT_EMPTY. */
export function deleteFolder(ctx: Ctx, id: number): Folder {
  const folder = requireFolder(ctx, id);
  const inside = ctx.repo.folderContents(id);
  if (inside.sources > 0 || inside.folders > 0) {
    throw new ToolError('FOLDER_NOT_EMPTY', `The folder "${folder.name}" holds ${inside.sources} source(s) and ${inside.folders} folder(s)`, inside);
  }
  ctx.repo.deleteFolder(id);
  // parent_id: where undo makes it again (src/domain/undoRedo.ts)
  ctx.events.emit({
    event_type: 'source.folder_deleted',
    aggregate_type: 'folder',
    aggregate_id: String(id),
    payload: { folder_id: id, name: folder.name, parent_id: folder.parent_id, owner: folder.owner },
  });
  return folder;
}

/**
 * Records an agent's metadata hints for a source (language, topics, where to file it). Nothing about the
 * source changes; the researcher sees the hint. Emits source.metadata_suggested. Errors: SOURCE_NOT_FOUND.
 */
export function suggestSourceMetadata(
  ctx: Ctx,
  sourceId: number,
  hint: { language: string | null; topics: string[] | null; organization_suggestion: string | null },
): { hint_id: number; source: SourceWithCounts } {
  const source = requireSource(ctx, sourceId);
  const id = ctx.repo.insertMetadataHint(sourceId, hint, stamp(ctx));
  ctx.events.emit({
    event_type: 'source.metadata_suggested',
    aggregate_type: 'source',
    aggregate_id: String(sourceId),
    payload: { source_id: sourceId, hint_id: id, ...hint },
  });
  return { hint_id: id, source };
}

/**
 * Renames a source (the design's rename_source): 1-255 code points, unique in the project (rule 2; the
 * source's own name is not a clash). The stored text, its file link and its segments stay as they are.
 * Emits source.renamed (payload: source_id, old_name, new_name).
 * Errors: SOURCE_NOT_FOUND, SOURCE_DUPLICATE_NAME, INVALID_ARGUMENTS (empty, too long, control characters).
 */
export function renameSource(ctx: Ctx, id: number, newName: string): { source: SourceWithCounts; old_name: string } {
  const source = requireSource(ctx, id);
  const name = cleanName(newName, MAX_SOURCE_NAME, 'source', 'INVALID_ARGUMENTS');
  const clash = ctx.repo.findSourceByName(name);
  if (clash && clash.source_id !== id) throw new ToolError('SOURCE_DUPLICATE_NAME', `A source named "${name}" already exists (source_id ${clash.source_id})`);
  ctx.repo.renameSource(id, name, ctx.now);
  ctx.events.emit({
    event_type: 'source.renamed',
    aggregate_type: 'source',
    aggregate_id: String(id),
    payload: { source_id: id, old_name: source.name, new_name: name },
  });
  return { source: requireSource(ctx, id), old_name: source.name };
}

/**
 * Sets a source's memo (the design's update_memo); null or the empty string clears it.
 * Emits source.updated (payload: source_id, field "memo", old_value, new_value). Errors: SOURCE_NOT_FOUND.
 */
export function updateSourceMemo(ctx: Ctx, id: number, memo: string | null): { old_memo: string | null; new_memo: string | null } {
  const source = requireSource(ctx, id);
  const next = memo === null || memo === '' ? null : memo;
  ctx.repo.setSourceMemo(id, next, ctx.now);
  ctx.events.emit({
    event_type: 'source.updated',
    aggregate_type: 'source',
    aggregate_id: String(id),
    payload: { source_id: id, field: 'memo', old_value: source.memo, new_value: next },
  });
  return { old_memo: source.memo, new_memo: next };
}
