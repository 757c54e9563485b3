/**
 * The source steps of the applier (../applyPlan.ts): every source name is checked before anything is written
 * (so a clash fails the import first), then folders, then sources (text, then media), each followed by its
 * document attributes.
 */
import { ToolError } from '../../../core/errors';
import { toWellFormed } from '../../../core/text';
import { cleanFolderName, cleanName, MAX_SOURCE_NAME } from '../../../domain/rules';
import { setSourceAttributes } from '../../../domain/sourceAttributes';
import { addSource, createFolder, type AddSourceInput } from '../../../domain/sources';
import { fitName, type PlannedAttribute, type PlanRef } from '../plan';
import { NameKeeper, stamped, type Applying } from './state';

/** A planned source of either kind, as the name check sees it: `text` null for a media source. */
interface Candidate {
  ref: PlanRef;
  name: string;
  guid: string | null | undefined;
  type: string;
  text: string | null;
}

/**
 * Decides, before anything is written, which planned source is an existing one and what name each new one gets.
 * A source is an existing one when the project knows its GUID, or has a source of its name with exactly its text
 * (a media source: of its type). Under `merge` a name twice in the plan with the same text is one source; any
 * other clash, listed all at once, fails the import. Errors: IMPORT_FAILED (details.clashes lists them).
 */
export function checkSources(a: Applying): void {
  const { ctx, plan } = a;
  a.at = () => 'sources';
  const all: Candidate[] = [
    ...plan.sources.map((s) => ({ ref: s.ref, name: s.name, guid: s.guid, type: s.type ?? 'text', text: toWellFormed(s.text) })),
    ...(plan.media_sources ?? []).map((s) => ({ ref: s.ref, name: s.name, guid: s.guid, type: s.type, text: null })),
  ];
  const names = a.keepApart ? new NameKeeper(MAX_SOURCE_NAME) : null;
  /** merge: the text of each name met in the plan */
  const planned = new Map<string, string | null>();
  const clashes: string[] = [];
  const existingItems = { has: (id: number) => ctx.repo.getSource(id) !== undefined, ids: () => ctx.repo.listSources().map((s) => s.source_id) };
  const same = (id: number, s: Candidate) => (s.text === null ? ctx.repo.getSource(id)?.type === s.type : ctx.repo.getSourceText(id) === s.text);
  for (const s of all) {
    const byGuid = a.guids.find('source', s.guid, existingItems);
    const match = byGuid !== undefined ? ctx.repo.getSource(byGuid) : undefined;
    if (match && same(match.source_id, s)) {
      a.sourceIds.set(s.ref, match.source_id);
      names?.take(match.name, null);
      continue;
    }
    let name: string;
    if (names) {
      name = names.take(fitName(s.name, MAX_SOURCE_NAME, 'Unnamed source'), null);
      a.renamed('source', s.name, name, MAX_SOURCE_NAME);
    } else {
      name = cleanName(s.name, MAX_SOURCE_NAME, 'source', 'IMPORT_FAILED');
      const inPlan = planned.get(name);
      if (inPlan !== undefined) {
        if (inPlan !== s.text) clashes.push(`"${name}" (twice in the file, with different texts)`);
        a.sourceNames.set(s.ref, name);
        continue;
      }
      planned.set(name, s.text);
    }
    a.sourceNames.set(s.ref, name);
    const existing = ctx.repo.findSourceByName(name);
    if (!existing) continue;
    if (same(existing.source_id, s)) a.sourceIds.set(s.ref, existing.source_id);
    else clashes.push(`"${name}" (source_id ${existing.source_id}, different ${s.text === null ? 'type' : 'text'})`);
  }
  if (clashes.length > 0) {
    throw new ToolError(
      'IMPORT_FAILED',
      `${clashes.length} source name(s) of the file already exist in the project with other content: ${clashes.slice(0, 20).join(', ')}${clashes.length > 20 ? ', ...' : ''}. ` +
        'Rename or remove those sources, or import into another project; nothing was imported.',
      { clashes },
    );
  }
}

/** Writes the plan's folders: an existing folder of the same name within the same parent is used. Errors: IMPORT_FAILED (a folder before its parent). */
export function applyFolders(a: Applying): void {
  const { ctx, report } = a;
  for (const f of a.plan.folders) {
    a.at = () => `folder "${f.name}"`;
    const parentId = f.parent === null ? null : a.folderIds.get(f.parent);
    if (parentId === undefined) throw new ToolError('IMPORT_FAILED', `The folder "${f.name}" comes before its parent ${f.parent}`);
    const name = cleanFolderName(fitName(f.name, 255, 'Unnamed folder').replace(/\//g, '-'), 'IMPORT_FAILED');
    const existing = ctx.repo.findFolder(parentId, name);
    if (existing) {
      a.folderIds.set(f.ref, existing.folder_id);
      report.reused.folders++;
    } else {
      a.folderIds.set(f.ref, createFolder(ctx, name, parentId).folder_id);
      report.created.folders++;
    }
    a.tick();
  }
}

/** What every planned source has, text or media. */
interface AnySource {
  ref: PlanRef;
  name: string;
  memo: string | null;
  origin: string | null;
  owner?: string | null;
  created_at?: string | null;
  guid?: string | null;
  note_guid?: string | null;
  attributes?: PlannedAttribute[];
}

/** Writes the plan's sources, text then media (after {@link checkSources}), each with its document attributes. */
export function applySources(a: Applying): void {
  for (const s of a.plan.sources) {
    const folderId = s.folder === null ? null : (a.folderIds.get(s.folder) ?? null);
    writeSource(a, s, { type: s.type ?? 'text', text: s.text, file_path: s.file_path, mime: s.mime, folder_id: folderId });
  }
  for (const s of a.plan.media_sources ?? []) writeSource(a, s, { type: s.type, text: null, file_path: s.file_path, mime: s.mime, size_bytes: s.size_bytes });
}

/**
 * Writes one source (created by the file's coder at the file's time), or uses the existing one decided by
 * {@link checkSources} or met earlier in the plan under the same name; stores its GUIDs; then writes its
 * document attributes in one step (`setSourceAttributes`: one source.attributes_set event; attributes of the
 * same name are overwritten, others kept).
 */
function writeSource(a: Applying, s: AnySource, input: Omit<AddSourceInput, 'name' | 'memo' | 'origin'>): void {
  const { ctx, report } = a;
  a.at = () => `source "${s.name}"`;
  let id = a.sourceIds.get(s.ref);
  let created = false;
  if (id !== undefined) report.reused.sources++;
  else {
    const name = a.sourceNames.get(s.ref) as string;
    const again = ctx.repo.findSourceByName(name); // the same name twice in the plan, with the same text
    if (again) {
      id = again.source_id;
      report.reused.sources++;
    } else {
      id = addSource(stamped(ctx, s.owner, s.created_at), { name, memo: s.memo, origin: s.origin, ...input }).source_id;
      created = true;
      report.created.sources++;
    }
    a.sourceIds.set(s.ref, id);
  }
  a.guids.keep('source', id, s.guid, created);
  a.guids.keep('note', `source:${id}`, s.note_guid, created);
  if (s.attributes && s.attributes.length > 0) {
    a.at = () => `the document attributes of source "${s.name}"`;
    report.source_attributes_set += setSourceAttributes(ctx, id, a.attributeValues(s.attributes)).changed;
  }
  a.tick();
}
