import { ToolError } from '../core/errors';
import { requireCase } from './cases';
import type { DomainContext } from './events';
import type { CaseWithCounts, ProjectRepository, StoredBriefing } from './ports';

/**
 * Memos as documents (issue 13, item 6): the writes the memo tabs need that no other service offers: a
 * case's memo, and the project's research frame (the briefing's description, research questions and
 * methodology, agent-context spec section 2, "Project briefing"), stored in the project database (meta row
 * `project_briefing`, so it is journalled, in the version history and in the event log) instead of only in
 * `.marginalia/project.yaml` beside the project.
 */

type Ctx = DomainContext<ProjectRepository>;

/** Longest research question, in code points (the input schema enforces it). */
export const MAX_RESEARCH_QUESTION = 2000;
/** Most research questions a briefing holds (the input schema enforces it). */
export const MAX_RESEARCH_QUESTIONS = 100;

/**
 * Sets a case's memo; null or the empty string clears it (stored as null). Emits case.updated
 * {case_id, name, field: 'memo', old_value, new_value} (like source.updated of update_memo), also when the
 * memo is unchanged, so every save is recorded. Errors: CASE_NOT_FOUND.
 */
export function updateCaseMemo(ctx: Ctx, id: number, memo: string | null): { case: CaseWithCounts; old_memo: string | null; new_memo: string | null } {
  const c = requireCase(ctx, id);
  const next = memo === null || memo === '' ? null : memo;
  ctx.repo.updateCaseMemo(id, next, ctx.now);
  ctx.events.emit({
    event_type: 'case.updated',
    aggregate_type: 'case',
    aggregate_id: String(id),
    payload: { case_id: id, name: c.name, field: 'memo', old_value: c.memo, new_value: next },
  });
  return { case: requireCase(ctx, id), old_memo: c.memo, new_memo: next };
}

/**
 * The fields of the research frame a briefing save may set; null removes the saved value, so the field comes
 * from `.marginalia/project.yaml` again (what undo of a first save does; the tool's schema offers no null).
 */
export interface BriefingFields {
  description?: string | null;
  research_questions?: string[] | null;
  methodology?: string | null;
}

/** The research frame fields, in the briefing's order. */
export const BRIEFING_FIELDS = ['description', 'research_questions', 'methodology'] as const;

/**
 * Stores the fields given of the project's research frame, exactly as given (no trimming); fields not given
 * keep their stored value (or, never stored, keep coming from `.marginalia/project.yaml`). An empty text or
 * list is a saved, empty value (it hides the yaml file's); null removes the saved value. Emits
 * project.briefing_updated {changed: [field names given], old: {field: stored value or null}, new: {field: value
 * or null}} with aggregate `project`/`briefing`.
 * Returns the stored frame.
 * Errors: INVALID_ARGUMENTS (no field given; a research question that is empty or only white space).
 */
export function updateProjectBriefing(ctx: Ctx, input: BriefingFields): StoredBriefing {
  const given = BRIEFING_FIELDS.filter((f) => input[f] !== undefined);
  if (given.length === 0) throw new ToolError('INVALID_ARGUMENTS', 'Give at least one of description, research_questions, methodology.');
  const before = ctx.repo.projectBriefing();
  const next: StoredBriefing = { ...(before ?? {}), updated_at: ctx.now, updated_by: ctx.actor.user };
  const oldValues: Record<string, unknown> = {};
  const newValues: Record<string, unknown> = {};
  for (const f of given) {
    oldValues[f] = before?.[f] ?? null;
    if (input[f] === null) {
      delete next[f];
      newValues[f] = null;
      continue;
    }
    if (f === 'research_questions') {
      const qs = input.research_questions ?? [];
      const blank = qs.findIndex((q) => q.trim() === '');
      if (blank >= 0) throw new ToolError('INVALID_ARGUMENTS', `Research question ${blank + 1} is empty; leave it out instead.`, { index: blank });
      next.research_questions = [...qs];
    } else {
      next[f] = input[f] ?? '';
    }
    newValues[f] = next[f];
  }
  ctx.repo.setProjectBriefing(next);
  ctx.events.emit({
    event_type: 'project.briefing_updated',
    aggregate_type: 'project',
    aggregate_id: 'briefing',
    payload: { changed: given, old: oldValues, new: newValues },
  });
  return next;
}
