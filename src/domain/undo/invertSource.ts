/** Undo's inverses of source, folder and project-briefing events. */
import type { EventType } from '../events';
import { updateProjectBriefing, type BriefingFields } from '../memos';
import type { AttributeType, AttributeValue } from '../ports';
import { setSourceAttribute } from '../sourceAttributes';
import { createFolder, deleteFolder, moveSourceToFolder, renameFolder, renameSource, updateSourceMemo } from '../sources';
import { formatValue, num, quoteMemo, str } from '../undoWords';
import { blocked, nullableStr, ownedBy, type Inversion } from './inversion';

/** Inverse of a source, folder or project-briefing event; false for other events. */
export function invertSourceEvent(x: Inversion, type: EventType): boolean {
  const { ctx, p, repo, ids, what, names, changedSince } = x;
  switch (type) {
    case 'source.renamed': {
      const id = num(p.source_id);
      const source = repo.getSource(id);
      if (!source) throw blocked(what, `the source ${str(p.new_name)} has been deleted since`);
      if (source.name !== p.new_name) throw changedSince(`the source ${str(p.new_name)}`, `named ${source.name}`);
      renameSource(ctx, id, str(p.old_name));
      return true;
    }
    case 'source.moved': {
      const id = num(p.source_id);
      const source = repo.getSource(id);
      if (!source) throw blocked(what, `the source ${names.source(id)} has been deleted since`);
      if (source.folder_id !== ids.opt('folder', p.new_folder_id)) throw changedSince(`the folder of ${source.name}`, names.folderPlace(source.folder_id));
      const back = ids.opt('folder', p.old_folder_id);
      if (back !== null && !repo.getFolder(back)) throw blocked(what, `the folder '${names.folder(back)}' has been deleted since`);
      moveSourceToFolder(ctx, id, back);
      return true;
    }
    case 'project.briefing_updated': {
      // the fields this save changed must still hold what it stored; then each gets its value from before (null: never saved)
      const stored = repo.projectBriefing() as Record<string, unknown> | undefined;
      const changed = (p.changed as string[]).filter(
        (f) => JSON.stringify(stored?.[f] ?? null) !== JSON.stringify((p.new as Record<string, unknown>)[f] ?? null),
      );
      if (changed.length > 0) throw blocked(what, `the project briefing's ${changed.join(', ').replace(/_/g, ' ')} has been changed since`);
      updateProjectBriefing(ctx, p.old as BriefingFields);
      return true;
    }
    case 'source.updated': {
      const id = num(p.source_id);
      const source = repo.getSource(id);
      if (!source) throw blocked(what, `the source ${names.source(id)} has been deleted since`);
      if (source.memo !== p.new_value) throw changedSince(`the memo of ${source.name}`, quoteMemo(source.memo));
      updateSourceMemo(ctx, id, nullableStr(p.old_value));
      return true;
    }
    case 'source.attribute_set': {
      const id = num(p.source_id);
      const source = repo.getSource(id);
      if (!source) throw blocked(what, `the source ${names.source(id)} has been deleted since`);
      const name = str(p.attribute_name);
      const now = repo.listSourceAttributes(id).find((a) => a.name === name) ?? null;
      if ((now?.type ?? null) !== p.type || (now?.value ?? null) !== p.value)
        throw changedSince(`the document attribute '${name}' of ${source.name}`, now ? formatValue(now.value) : 'not set');
      setSourceAttribute(ctx, {
        source_id: id,
        attribute_name: name,
        value: p.old_value as AttributeValue | null,
        ...(p.old_type === null ? {} : { type: p.old_type as AttributeType }),
      });
      return true;
    }
    case 'source.folder_created': {
      const id = ids.get('folder', num(p.folder_id));
      const folder = repo.getFolder(id);
      if (!folder) throw blocked(what, `the folder '${str(p.name)}' has been deleted since`);
      if (folder.name !== p.name) throw changedSince(`the folder '${str(p.name)}'`, `named '${folder.name}'`);
      deleteFolder(ctx, id);
      return true;
    }
    case 'source.folder_deleted': {
      const parent = ids.opt('folder', p.parent_id);
      if (parent !== null && !repo.getFolder(parent)) throw blocked(what, `its parent folder has been deleted since`);
      const folder = createFolder(ownedBy(ctx, p), str(p.name), parent);
      ids.set('folder', num(p.folder_id), folder.folder_id);
      return true;
    }
    case 'source.folder_renamed': {
      const id = ids.get('folder', num(p.folder_id));
      const folder = repo.getFolder(id);
      if (!folder) throw blocked(what, `the folder '${str(p.new_name)}' has been deleted since`);
      if (folder.name !== p.new_name) throw changedSince(`the folder '${str(p.new_name)}'`, `named '${folder.name}'`);
      renameFolder(ctx, id, str(p.old_name));
      return true;
    }
    default:
      return false;
  }
}
