/** Undo's inverses of segment and code events (coding, memo, code created, deleted, renamed, recoloured, moved). */
import { sliceCp } from '../../core/text';
import { createCode, deleteCode, moveCodeToCategory, renameCode, setCodeColor, updateCodeMemo } from '../codebook';
import { deleteSegment, updateSegmentMemo } from '../coding';
import type { EventType } from '../events';
import { num, quoteMemo, str } from '../undoWords';
import { blocked, nullableStr, ownedBy, roleOfSession, type Inversion } from './inversion';

/** Inverse of a segment or code event (coding, memo, code created/deleted/renamed/recoloured/moved); false for other events. */
export function invertCodingEvent(x: Inversion, type: EventType): boolean {
  const { ctx, p, repo, ids, what, names, changedSince } = x;
  switch (type) {
    case 'coding.segment_coded': {
      const id = ids.get('segment', num(p.segment_id));
      const seg = repo.getSegment(id);
      if (!seg) throw blocked(what, `the coding '${names.code(num(p.code_id))}' in ${names.source(num(p.source_id))} has been removed since`);
      if (seg.code_id !== ids.get('code', num(p.code_id)))
        throw blocked(what, `that coding now carries the code '${names.code(seg.code_id)}' (merged or moved since)`);
      deleteSegment(ctx, id);
      return true;
    }
    case 'coding.segment_uncoded':
      codeAgain(x);
      return true;
    case 'coding.segment_updated': {
      const id = ids.get('segment', num(p.segment_id));
      const seg = repo.getSegment(id);
      if (!seg) throw blocked(what, `the coded passage has been removed since`);
      if (seg.memo !== p.new_value) throw changedSince(`the memo of that coded passage`, quoteMemo(seg.memo));
      updateSegmentMemo(ctx, id, nullableStr(p.old_value));
      return true;
    }
    case 'coding.code_created':
      deleteCreatedCode(x);
      return true;
    case 'coding.code_deleted': {
      const categoryId = ids.opt('category', p.category_id);
      if (categoryId !== null && !repo.getCategory(categoryId)) throw blocked(what, `its category '${names.category(categoryId)}' has been deleted since`);
      const code = createCode(ownedBy(ctx, p), { name: str(p.name), color: str(p.color), memo: nullableStr(p.memo), category_id: categoryId });
      ids.set('code', num(p.code_id), code.code_id);
      return true;
    }
    case 'coding.code_renamed': {
      const id = ids.get('code', num(p.code_id));
      const code = repo.getCode(id);
      if (!code) throw blocked(what, `the code '${str(p.new_name)}' has been deleted since`);
      if (code.name !== p.new_name) throw changedSince(`the code '${str(p.new_name)}'`, `named '${code.name}'`);
      renameCode(ctx, id, str(p.old_name));
      return true;
    }
    case 'coding.code_updated': {
      const id = ids.get('code', num(p.code_id));
      const code = repo.getCode(id);
      if (!code) throw blocked(what, `the code '${names.code(id)}' has been deleted since`);
      if (p.field === 'memo') {
        if (code.memo !== p.new_value) throw changedSince(`the memo of the code '${code.name}'`, quoteMemo(code.memo));
        updateCodeMemo(ctx, id, nullableStr(p.old_value));
      } else {
        if (code.color.toUpperCase() !== String(p.new_value).toUpperCase()) throw changedSince(`the colour of the code '${code.name}'`, code.color);
        setCodeColor(ctx, id, str(p.old_value));
      }
      return true;
    }
    case 'coding.code_moved': {
      const id = ids.get('code', num(p.code_id));
      const code = repo.getCode(id);
      if (!code) throw blocked(what, `the code '${names.code(id)}' has been deleted since`);
      if (code.category_id !== ids.opt('category', p.new_category_id))
        throw changedSince(`the place of the code '${code.name}'`, names.place(code.category_id));
      const back = ids.opt('category', p.old_category_id);
      if (back !== null && !repo.getCategory(back)) throw blocked(what, `the category '${names.category(back)}' has been deleted since`);
      moveCodeToCategory(ctx, id, back);
      return true;
    }
    default:
      return false;
  }
}

/** Inverse of coding.segment_uncoded: the coding made again at its positions, by its coder, if the text there is still the same. */
function codeAgain(x: Inversion): void {
  const { ctx, p, repo, ids, what, names } = x;
  const codeId = ids.get('code', num(p.code_id));
  const sourceId = num(p.source_id);
  const code = repo.getCode(codeId);
  if (!code) throw blocked(what, `the code '${names.code(codeId)}' has been deleted since`);
  const source = repo.getSource(sourceId);
  if (!source) throw blocked(what, `the source ${names.source(sourceId)} has been deleted since`);
  const start = num(p.start);
  const end = num(p.end);
  const text = repo.getSourceText(sourceId);
  if (text === null || end > source.length || sliceCp(text, start, end) !== p.text) {
    throw blocked(what, `the text of ${source.name} at [${start}, ${end}) has changed since (the editor's own undo may put it back first)`);
  }
  const owner = str(p.owner);
  if (repo.findSegment(codeId, sourceId, start, end, owner)) throw blocked(what, `${owner} has coded the same passage with '${code.name}' again since`);
  const id = repo.insertSegment(
    {
      code_id: codeId,
      source_id: sourceId,
      start_pos: start,
      end_pos: end,
      text: str(p.text),
      memo: nullableStr(p.memo),
      importance: num(p.importance ?? 0),
    },
    {
      owner,
      session_id: typeof p.session_id === 'string' ? p.session_id : ctx.actor.session_id,
      now: ctx.now,
      coder_role: roleOfSession(ctx, typeof p.session_id === 'string' ? p.session_id : ctx.actor.session_id),
    },
  );
  ctx.events.emit({
    event_type: 'coding.segment_coded',
    aggregate_type: 'segment',
    aggregate_id: String(id),
    payload: { segment_id: id, code_id: codeId, source_id: sourceId, start, end, text: p.text },
  });
  ids.set('segment', num(p.segment_id), id);
}

/** Inverse of coding.code_created: the code deleted, unless it has been applied since (undo never deletes codings). */
function deleteCreatedCode(x: Inversion): void {
  const { ctx, p, repo, ids, what, changedSince } = x;
  const id = ids.get('code', num(p.code_id));
  const code = repo.getCode(id);
  if (!code) throw blocked(what, `the code '${str(p.name)}' has been deleted since`);
  if (code.name !== p.name) throw changedSince(`the code '${str(p.name)}'`, `named '${code.name}'`);
  const used = code.segment_count + code.av_segment_count;
  if (used > 0) {
    const coders = new Map<string, number>();
    for (const s of repo.listSegmentsForCode(id)) coders.set(s.owner, (coders.get(s.owner) ?? 0) + 1);
    const who = [...coders].map(([o, n]) => `${o} (${n})`).join(', ');
    throw blocked(
      what,
      `the code '${code.name}' has since been applied ${used} time(s)${who ? ` by ${who}` : ''}; remove those codings first (undo never deletes codings)`,
      { segment_count: code.segment_count, av_segment_count: code.av_segment_count },
    );
  }
  deleteCode(ctx, id, false);
}
