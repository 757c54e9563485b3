import { z } from 'zod';
import { MAX_RESEARCH_QUESTION, MAX_RESEARCH_QUESTIONS, updateCaseMemo, updateProjectBriefing } from '../domain/memos';
import { defineTool } from './defineTool';
import { args, id, memo, text } from './schemas';

/**
 * Memo tools the memo tabs need beyond update_code_memo, update_category_memo, update_segment_memo and
 * update_memo (issue 13, item 6; domain: src/domain/memos.ts).
 *
 * Trust. `update_case_memo` is `memo`, like the spec's update_memo of a source (agent-context spec, section
 * 5, capability table: Auto, overridable to notify or suggest): a case, like a source, is data the researcher
 * describes, not the codebook. `update_project_briefing` is researcher only (agents get APPROVAL_FORBIDDEN,
 * HTTP 403, and their call is never queued): the spec lists the briefing (section 2) as what agents read to
 * learn the study's description, research questions and methodology, and gives no tool and no trust category
 * that writes it; an agent that rewrote it would change the instructions every other agent works from, so
 * only the researcher (the UI, or a client holding the reviewer token) sets it.
 */

/** A case memo's no-project code, as every case tool (HTTP spec, section 1). */
const CASES_NO_PROJECT = 'CASES_NOT_LISTED/NO_CONTEXT' as const;

export const updateCaseMemoTool = defineTool({
  name: 'update_case_memo',
  group: 'case',
  title: 'Update Case Memo',
  description:
    'Set a case\'s memo (what the case is, notes on it); memo is required, null or "" clears it. Returns {case_id, name, old_memo, new_memo}. ' +
    'Errors: CASE_NOT_FOUND, INVALID_ARGUMENTS (memo missing), CASES_NOT_LISTED/NO_CONTEXT (no project open).',
  input: args({ case_id: id('the case'), memo: memo.nullable().describe('the new memo (required); null or "" clears it') }),
  effect: 'modify',
  trust: 'memo',
  noProjectCode: CASES_NO_PROJECT,
  run: (ctx, input) => {
    const r = updateCaseMemo(ctx.domain, input.case_id, input.memo ?? null);
    return { case_id: r.case.case_id, name: r.case.name, old_memo: r.old_memo, new_memo: r.new_memo };
  },
});

export const updateProjectBriefingTool = defineTool({
  name: 'update_project_briefing',
  group: 'project',
  title: 'Update Project Briefing',
  description:
    'Researcher only (agents get APPROVAL_FORBIDDEN): set the research frame that the resource qda://project/briefing reports: ' +
    'description, research_questions (a list, one question per item) and methodology. Fields left out keep their value; texts are stored ' +
    'exactly as given; "" or [] stores an empty value. The stored frame takes precedence over .marginalia/project.yaml beside the project, field by field. ' +
    'Returns {description, research_questions, methodology, updated_at, updated_by} (fields never saved are absent). ' +
    'Errors: INVALID_ARGUMENTS (no field given, an empty research question), APPROVAL_FORBIDDEN, NO_PROJECT.',
  input: args({
    description: memo.optional().describe('what the study is about'),
    research_questions: z
      .array(text(MAX_RESEARCH_QUESTION, 1).describe('one research question'))
      .max(MAX_RESEARCH_QUESTIONS)
      .optional()
      .describe(`the research questions, in order (at most ${MAX_RESEARCH_QUESTIONS})`),
    methodology: memo.optional().describe('how the data is analysed, e.g. "Reflexive thematic analysis (Braun & Clarke)"'),
  }),
  effect: 'modify',
  trust: 'rename',
  researcherOnly: true,
  run: (ctx, input) => updateProjectBriefing(ctx.domain, input),
});

/** The memo tools of this file. */
export const MEMO_TOOLS = [updateCaseMemoTool, updateProjectBriefingTool];
