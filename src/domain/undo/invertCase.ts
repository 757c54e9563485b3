/** Undo's inverses of case events (created, deleted, members, attributes, renamed, memo). */
import { addSegmentToCase, addSourceToCase, createCase, deleteCase, renameCase, renameCaseAttribute, setCaseAttribute } from '../cases';
import type { EventType } from '../events';
import { updateCaseMemo } from '../memos';
import type { AttributeType, AttributeValue } from '../ports';
import { formatValue, num, quoteMemo, str } from '../undoWords';
import { blocked, nullableStr, ownedBy, type Inversion } from './inversion';

/** Inverse of a case event (created, deleted, members, attributes, renamed, memo); false for other events. */
export function invertCaseEvent(x: Inversion, type: EventType): boolean {
  const { ctx, p, repo, ids, what, names, changedSince } = x;
  switch (type) {
    case 'case.created': {
      const id = ids.get('case', num(p.case_id));
      const c = repo.getCase(id);
      if (!c) throw blocked(what, `the case '${str(p.name)}' has been deleted since`);
      if (c.name !== p.name) throw changedSince(`the case '${str(p.name)}'`, `named '${c.name}'`);
      if (c.source_count + c.segment_count + c.attribute_count > 0) {
        throw blocked(
          what,
          `the case '${c.name}' has since been given ${c.source_count} source(s), ${c.segment_count} passage(s) and ${c.attribute_count} attribute(s)`,
        );
      }
      deleteCase(ctx, id);
      return true;
    }
    case 'case.deleted': {
      const c = createCase(ownedBy(ctx, p), { name: str(p.name), memo: nullableStr(p.memo) });
      ids.set('case', num(p.case_id), c.case_id);
      for (const m of p.sources as { source_id: number; owner: string; session_id: string | null }[]) addSourceToCase(ownedBy(ctx, m), c.case_id, m.source_id);
      for (const g of p.segments as { source_id: number; start: number; end: number; owner: string; session_id: string | null }[]) {
        addSegmentToCase(ownedBy(ctx, g), { case_id: c.case_id, source_id: g.source_id, start_pos: g.start, end_pos: g.end });
      }
      for (const a of p.attributes as { name: string; type: AttributeType; value: AttributeValue }[])
        setCaseAttribute(ctx, { case_id: c.case_id, attribute_name: a.name, value: a.value, type: a.type });
      return true;
    }
    case 'case.member_added':
      removeAddedMember(x);
      return true;
    case 'case.member_removed': {
      const caseId = ids.get('case', num(p.case_id));
      if (!repo.getCase(caseId)) throw blocked(what, `the case '${names.caseName(caseId)}' has been deleted since`);
      const range = p.segment_range as { start: number; end: number } | null;
      if (range === null) {
        if (!addSourceToCase(ownedBy(ctx, p), caseId, num(p.source_id)).added)
          throw blocked(what, `${names.source(num(p.source_id))} has been added to that case again since`);
      } else {
        const added = addSegmentToCase(ownedBy(ctx, p), { case_id: caseId, source_id: num(p.source_id), start_pos: range.start, end_pos: range.end });
        if (!added.created) throw blocked(what, 'that passage has been added to the case again since');
        ids.set('case_segment', num(p.case_segment_id), added.segment.case_segment_id);
      }
      return true;
    }
    case 'case.attribute_set':
      restoreCaseAttribute(x);
      return true;
    case 'case.renamed': {
      const id = ids.get('case', num(p.case_id));
      const c = repo.getCase(id);
      if (!c) throw blocked(what, `the case '${str(p.new_name)}' has been deleted since`);
      if (c.name !== p.new_name) throw changedSince(`the case '${str(p.new_name)}'`, `named '${c.name}'`);
      renameCase(ctx, id, str(p.old_name));
      return true;
    }
    case 'case.attribute_renamed': {
      const caseIds = (p.case_ids as number[]).map((id) => ids.get('case', id));
      const holders = new Set(
        repo
          .listCaseAttributes()
          .filter((a) => a.name === p.new_name)
          .map((a) => a.case_id),
      );
      if (holders.size !== caseIds.length || caseIds.some((id) => !holders.has(id))) {
        throw changedSince(`the attribute '${str(p.new_name)}'`, `held by ${holders.size} case(s), not the ${caseIds.length} it was renamed on`);
      }
      renameCaseAttribute(ctx, str(p.new_name), str(p.old_name));
      return true;
    }
    case 'case.updated': {
      const id = ids.get('case', num(p.case_id));
      const c = repo.getCase(id);
      if (!c) throw blocked(what, `the case '${str(p.name)}' has been deleted since`);
      if (c.memo !== p.new_value) throw changedSince(`the memo of the case '${c.name}'`, quoteMemo(c.memo));
      updateCaseMemo(ctx, id, nullableStr(p.old_value));
      return true;
    }
    default:
      return false;
  }
}

/** Inverse of case.member_added: the source or passage taken out of the case again (case.member_removed keeps who linked it). */
function removeAddedMember(x: Inversion): void {
  const { ctx, p, repo, ids, what, names } = x;
  const caseId = ids.get('case', num(p.case_id));
  const c = repo.getCase(caseId);
  if (!c) throw blocked(what, `the case '${names.caseName(caseId)}' has been deleted since`);
  const range = p.segment_range as { start: number; end: number } | null;
  const segmentId = range === null ? null : ids.get('case_segment', num(p.case_segment_id));
  // who linked it, so that undoing this keeps them
  let owner: { owner: string; session_id: string | null };
  if (segmentId === null) {
    const link = repo.listCaseSources(caseId).find((l) => l.source_id === p.source_id);
    if (!link) throw blocked(what, `${names.source(num(p.source_id))} has been taken out of the case '${c.name}' since`);
    owner = link;
    repo.deleteCaseSource(caseId, num(p.source_id));
  } else {
    const g = repo.getCaseSegment(segmentId);
    if (!g) throw blocked(what, `that passage has been taken out of the case '${c.name}' since`);
    owner = g;
    repo.deleteCaseSegment(segmentId);
  }
  repo.touchCase(caseId, ctx.now);
  const payload: Record<string, unknown> = { case_id: caseId, source_id: p.source_id, segment_range: range };
  if (segmentId !== null) Object.assign(payload, { case_segment_id: segmentId, text: p.text });
  Object.assign(payload, { owner: owner.owner, session_id: owner.session_id });
  ctx.events.emit({ event_type: 'case.member_removed', aggregate_type: 'case', aggregate_id: String(caseId), payload });
}

/** Inverse of case.attribute_set: the attribute's value before (removed when it had none), if it still holds the value set. */
function restoreCaseAttribute(x: Inversion): void {
  const { ctx, p, repo, ids, what, names, changedSince } = x;
  const caseId = ids.get('case', num(p.case_id));
  const c = repo.getCase(caseId);
  if (!c) throw blocked(what, `the case '${names.caseName(caseId)}' has been deleted since`);
  const name = str(p.name);
  const now = repo.listCaseAttributes(caseId).find((a) => a.name === name) ?? null;
  if ((now?.type ?? null) !== p.type || (now?.value ?? null) !== p.value)
    throw changedSince(`the attribute '${name}' of the case '${c.name}'`, now ? formatValue(now.value) : 'not set');
  if (p.old_type === null) {
    repo.deleteCaseAttribute(caseId, name);
    repo.touchCase(caseId, ctx.now);
    ctx.events.emit({
      event_type: 'case.attribute_set',
      aggregate_type: 'case',
      aggregate_id: String(caseId),
      payload: { case_id: caseId, name, type: null, value: null, old_type: p.type, old_value: p.value },
    });
  } else {
    setCaseAttribute(ctx, { case_id: caseId, attribute_name: name, value: p.old_value as AttributeValue, type: p.old_type as AttributeType });
  }
}
