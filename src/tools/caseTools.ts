import { z } from 'zod';
import { compareCases, DEFAULT_MIN_GROUP_SIZE, suggestCaseGroupings } from '../domain/caseAnalysis';
import {
  addSegmentToCase,
  addSourceToCase,
  createCase,
  deleteCase,
  getCase,
  listCases,
  MAX_ATTRIBUTE_NAME,
  MAX_CASE_NAME,
  setCaseAttribute,
  type CaseSummary,
} from '../domain/cases';
import type { CaseSegment, CaseWithCounts } from '../domain/ports';
import { defineTool } from './defineTool';
import { args, id, memo, nameText, position, requiredAliases, text } from './schemas';

/**
 * Case management: the HTTP spec's four case tools (section 4, "Case management") and the agent-context
 * spec's five case writers (section 4, capability registry). Every case tool fails with
 * CASES_NOT_LISTED/NO_CONTEXT when no project is open (HTTP spec, section 1).
 */

const NO_PROJECT = 'CASES_NOT_LISTED/NO_CONTEXT' as const;

/** A case as tools return it (summary fields). */
function caseOut(c: CaseWithCounts) {
  return {
    case_id: c.case_id,
    id: c.case_id,
    name: c.name,
    memo: c.memo,
    source_count: c.source_count,
    segment_count: c.segment_count,
    attribute_count: c.attribute_count,
    owner: c.owner,
    session_id: c.session_id,
    created_at: c.created_at,
    updated_at: c.updated_at,
  };
}

/** A case range as tools return it (positions in code points). */
function caseSegmentOut(s: CaseSegment) {
  return {
    case_segment_id: s.case_segment_id,
    case_id: s.case_id,
    source_id: s.source_id,
    source_name: s.source_name,
    start_pos: s.start_pos,
    end_pos: s.end_pos,
    text: s.text,
    owner: s.owner,
    session_id: s.session_id,
    created_at: s.created_at,
  };
}

const attributeType = z.enum(['text', 'number', 'date', 'boolean']);

export const listCasesTool = defineTool({
  name: 'list_cases',
  group: 'case',
  title: 'List Cases',
  description:
    'All cases with summary info, by name. Returns {count, cases: [{case_id, name, memo, source_count (whole sources linked), ' +
    'segment_count (source ranges held), attribute_count, attributes: {name: value}, owner, created_at, updated_at}]}. ' +
    'Attribute values are typed: text and date (ISO 8601) as strings, numbers as numbers, booleans as booleans. Errors: CASES_NOT_LISTED/NO_CONTEXT.',
  input: args({}),
  effect: 'read',
  trust: 'read',
  noProjectCode: NO_PROJECT,
  run: (ctx) => {
    const cases = listCases(ctx.domain).map((c: CaseSummary) => ({ ...caseOut(c), attributes: c.attributes }));
    return { count: cases.length, cases };
  },
});

export const getCaseTool = defineTool({
  name: 'get_case',
  group: 'case',
  title: 'Get Case',
  description:
    'One case in detail: {case_id, name, memo, counts, attributes: [{name, type, value, updated_at}] (type is text, number, date or boolean), ' +
    'attribute_values: {name: value}, sources: [{source_id, name, type, added_at}] (whole sources linked to the case), ' +
    'segments: [{case_segment_id, source_id, source_name, start_pos, end_pos, text}] (source ranges the case holds; positions in code points, end exclusive)}. ' +
    'Errors: CASE_NOT_FOUND, CASES_NOT_LISTED/NO_CONTEXT.',
  input: args({ case_id: id('the case') }),
  effect: 'read',
  trust: 'read',
  noProjectCode: NO_PROJECT,
  run: (ctx, input) => {
    const d = getCase(ctx.domain, input.case_id);
    return {
      ...caseOut(d.case),
      attributes: d.attributes.map((a) => ({ name: a.name, type: a.type, value: a.value, updated_at: a.updated_at })),
      attribute_values: Object.fromEntries(d.attributes.map((a) => [a.name, a.value])),
      sources: d.sources.map((s) => ({ source_id: s.source_id, name: s.name, type: s.type, added_at: s.created_at, added_by: s.owner })),
      segments: d.segments.map(caseSegmentOut),
    };
  },
});

export const suggestCaseGroupingsTool = defineTool({
  name: 'suggest_case_groupings',
  group: 'case',
  title: 'Suggest Case Groupings',
  description:
    'Suggests groups of cases that share an attribute value, per attribute: cases with exactly the same typed value form a group ' +
    `(numbers by exact value); groups smaller than min_group_size (default ${DEFAULT_MIN_GROUP_SIZE}) are dropped. attribute_names narrows the analysis to those attributes (exact names). ` +
    'Writes nothing. Returns {min_group_size, case_count, group_count, groupings: [{attribute_name, case_count, groups: [{label, type, value, size, case_ids, cases}], ' +
    'ungrouped_case_ids}], unknown_attributes}. Errors: CASES_NOT_LISTED/NO_CONTEXT, INVALID_ARGUMENTS.',
  input: args({
    attribute_names: z.array(text(1000, 1)).max(1000).optional().describe('only these attributes (exact names); omitted or empty: all attributes'),
    min_group_size: z.number().int().min(1).max(1_000_000).optional().describe(`smallest group to report (default ${DEFAULT_MIN_GROUP_SIZE})`),
  }),
  effect: 'read',
  trust: 'read',
  noProjectCode: NO_PROJECT,
  run: (ctx, input) => suggestCaseGroupings(ctx.domain, input),
});

export const compareCasesTool = defineTool({
  name: 'compare_cases',
  group: 'case',
  title: 'Compare Cases',
  description:
    "Identifies themes unique to each case and themes common to all. A case's themes are the codes applied to its whole sources and to text " +
    'overlapping its source ranges; counts are coded segments. code_ids narrows the comparison to those codes. Writes nothing. ' +
    'Returns {case_ids, code_ids, cases: [{case_id, name, coding_count, theme_count, themes: [{code_id, name, color, segment_count}], unique_themes: [...]}], ' +
    'common_themes: [{code_id, name, color, total_segment_count, counts: [{case_id, segment_count}]}], common_theme_count, unique_theme_count}. ' +
    'Errors: CASE_NOT_FOUND, CODE_NOT_FOUND, INVALID_ARGUMENTS (fewer than 2 distinct cases), CASES_NOT_LISTED/NO_CONTEXT.',
  input: args({
    case_ids: z.array(id('a case')).min(2).max(1000).describe('the cases to compare (at least 2)'),
    code_ids: z.array(id('a code')).max(10_000).optional().describe('only these codes (omitted or empty: all codes)'),
  }),
  effect: 'read',
  trust: 'read',
  noProjectCode: NO_PROJECT,
  run: (ctx, input) => compareCases(ctx.domain, input),
});

export const createCaseTool = defineTool({
  name: 'create_case',
  group: 'case',
  title: 'Create Case',
  description:
    'Create a case (a unit of analysis such as a participant or site). Names are unique (case-insensitive), 1-255 characters. ' +
    'Returns {case_id, name, memo, ...}. Errors: DUPLICATE_NAME, INVALID_ARGUMENTS, CASES_NOT_LISTED/NO_CONTEXT.',
  input: args({
    name: nameText(MAX_CASE_NAME).describe(`case name, e.g. a participant id; 1-${MAX_CASE_NAME} characters`),
    memo: memo.optional().describe('what the case is'),
  }),
  effect: 'create',
  trust: 'create',
  noProjectCode: NO_PROJECT,
  run: (ctx, input) => caseOut(createCase(ctx.domain, input)),
});

export const deleteCaseTool = defineTool({
  name: 'delete_case',
  group: 'case',
  title: 'Delete Case',
  description:
    'Delete a case with its attributes and memberships; its sources and their codings stay. Returns {deleted: true, case_id, name, source_count, segment_count, attribute_count}. ' +
    'Errors: CASE_NOT_FOUND, CASES_NOT_LISTED/NO_CONTEXT.',
  input: args({ case_id: id('the case') }),
  effect: 'destroy',
  trust: 'delete',
  noProjectCode: NO_PROJECT,
  run: (ctx, input) => {
    const c = deleteCase(ctx.domain, input.case_id);
    return {
      deleted: true,
      case_id: c.case_id,
      name: c.name,
      source_count: c.source_count,
      segment_count: c.segment_count,
      attribute_count: c.attribute_count,
    };
  },
});

export const addSourceToCaseTool = defineTool({
  name: 'add_source_to_case',
  group: 'case',
  title: 'Add Source to Case',
  description:
    'Link a whole source to a case. Linking it again changes nothing (added: false). Returns {case_id, source_id, source_name, added, source_count}. ' +
    'Errors: CASE_NOT_FOUND, SOURCE_NOT_FOUND, CASES_NOT_LISTED/NO_CONTEXT.',
  input: args({ case_id: id('the case'), source_id: id('the source') }),
  effect: 'modify',
  trust: 'apply_code',
  noProjectCode: NO_PROJECT,
  run: (ctx, input) => {
    const r = addSourceToCase(ctx.domain, input.case_id, input.source_id);
    return { case_id: r.case.case_id, source_id: r.source.source_id, source_name: r.source.name, added: r.added, source_count: r.case.source_count };
  },
});

export const addSegmentToCaseTool = defineTool({
  name: 'add_segment_to_case',
  group: 'case',
  title: 'Add Segment to Case',
  description:
    'Add a range of a text source to a case (for a source that holds several cases, such as a focus group). start_pos and end_pos are required (start/end are accepted as aliases); ' +
    'positions count Unicode code points, end exclusive. Adding the same range again returns it (created: false). ' +
    'Returns {case_segment_id, case_id, source_id, source_name, start_pos, end_pos, text, created}. Errors: CASE_NOT_FOUND, SOURCE_NOT_FOUND, INVALID_POSITION, CASES_NOT_LISTED/NO_CONTEXT.',
  input: requiredAliases(
    args({
      case_id: id('the case'),
      source_id: id('the text source'),
      start_pos: position('start of the range (required, or its alias start)').optional(),
      end_pos: position('end of the range, exclusive (required, or its alias end)').optional(),
      start: position('alias of start_pos').optional(),
      end: position('alias of end_pos').optional(),
    }),
    [
      ['start_pos', 'start'],
      ['end_pos', 'end'],
    ],
  ),
  effect: 'modify',
  trust: 'apply_code',
  noProjectCode: NO_PROJECT,
  run: (ctx, input) => {
    const r = addSegmentToCase(ctx.domain, {
      case_id: input.case_id,
      source_id: input.source_id,
      start_pos: input.start_pos ?? input.start ?? 0,
      end_pos: input.end_pos ?? input.end ?? 0,
    });
    return { ...caseSegmentOut(r.segment), created: r.created };
  },
});

export const setCaseAttributeTool = defineTool({
  name: 'set_case_attribute',
  group: 'case',
  title: 'Set Case Attribute',
  description:
    'Set a typed attribute of a case (types: text, number, date, boolean). Without type, an existing attribute keeps its type and a new one ' +
    'is inferred from the value: true/false -> boolean, a JSON number -> number, an ISO 8601 date (YYYY-MM-DD) or datetime string -> date, any other string -> text. ' +
    'Pass type to convert ("42" as number) or to change the type. Setting the same value again changes nothing (changed: false). ' +
    'Returns {case_id, name, type, value, old_type, old_value, changed, inferred}. Errors: CASE_NOT_FOUND, INVALID_ARGUMENTS (value not of the type), CASES_NOT_LISTED/NO_CONTEXT.',
  input: args({
    case_id: id('the case'),
    attribute_name: nameText(MAX_ATTRIBUTE_NAME).describe(
      `attribute name, 1-${MAX_ATTRIBUTE_NAME} characters (exact: "Age" and "age" are different attributes)`,
    ),
    value: z.union([text(10_000), z.number(), z.boolean()]).describe('the value: a string, a number or a boolean'),
    type: attributeType.optional().describe("text, number, date or boolean; default: the attribute's current type, or inferred from the value"),
  }),
  effect: 'modify',
  trust: 'apply_code',
  noProjectCode: NO_PROJECT,
  run: (ctx, input) => {
    const r = setCaseAttribute(ctx.domain, input);
    return {
      case_id: input.case_id,
      name: r.attribute.name,
      type: r.attribute.type,
      value: r.attribute.value,
      old_type: r.previous?.type ?? null,
      old_value: r.previous?.value ?? null,
      changed: r.changed,
      inferred: r.inferred,
    };
  },
});
