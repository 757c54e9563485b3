/**
 * Case tools beyond the spec's (caseTools.ts), for managing cases from the researcher's workbench and by
 * agents (issue 13 item 5): rename a case, take a source out of a case, remove an attribute value, list the
 * attribute definitions and rename an attribute across cases. Domain logic: src/domain/cases.ts.
 *
 * Trust from the agent-context spec's "Default trust by category" (section 5): renaming a case or an
 * attribute is `rename` (Suggest for agents, like rename_code and rename_category); taking a source out of a
 * case and removing an attribute value are the inverses of add_source_to_case and set_case_attribute and
 * share their category (`apply_code`); listing is `read`. Every tool fails with CASES_NOT_LISTED/NO_CONTEXT
 * when no project is open, as the spec's case tools do (HTTP spec, section 1).
 */
import {
  listCaseAttributeDefinitions,
  MAX_ATTRIBUTE_NAME,
  MAX_CASE_NAME,
  removeCaseAttribute,
  removeSourceFromCase,
  renameCase,
  renameCaseAttribute,
} from '../domain/cases';
import { defineTool } from './defineTool';
import { args, id, nameText } from './schemas';

const NO_PROJECT = 'CASES_NOT_LISTED/NO_CONTEXT' as const;

export const renameCaseTool = defineTool({
  name: 'rename_case',
  group: 'case',
  title: 'Rename Case',
  description:
    'Rename a case (names unique among cases, case-insensitive, 1-255 characters; its sources, passages and attributes stay). ' +
    'The same name again changes nothing (changed: false). Returns {case_id, old_name, new_name, changed}. ' +
    'Errors: CASE_NOT_FOUND, DUPLICATE_NAME, INVALID_ARGUMENTS, CASES_NOT_LISTED/NO_CONTEXT.',
  input: args({ case_id: id('the case'), new_name: nameText(MAX_CASE_NAME).describe(`the new name, 1-${MAX_CASE_NAME} characters`) }),
  effect: 'modify',
  trust: 'rename',
  noProjectCode: NO_PROJECT,
  run: (ctx, input) => {
    const r = renameCase(ctx.domain, input.case_id, input.new_name);
    return { case_id: r.case.case_id, old_name: r.old_name, new_name: r.case.name, changed: r.changed };
  },
});

export const removeSourceFromCaseTool = defineTool({
  name: 'remove_source_from_case',
  group: 'case',
  title: 'Remove Source from Case',
  description:
    'Take a whole source out of a case (the inverse of add_source_to_case). The source, its codings and any passages of it the case holds stay. ' +
    'A source that is not linked changes nothing (removed: false). Returns {case_id, source_id, source_name, removed, source_count}. ' +
    'Errors: CASE_NOT_FOUND, SOURCE_NOT_FOUND, CASES_NOT_LISTED/NO_CONTEXT.',
  input: args({ case_id: id('the case'), source_id: id('the source') }),
  effect: 'modify',
  trust: 'apply_code',
  noProjectCode: NO_PROJECT,
  run: (ctx, input) => {
    const r = removeSourceFromCase(ctx.domain, input.case_id, input.source_id);
    return { case_id: r.case.case_id, source_id: r.source.source_id, source_name: r.source.name, removed: r.removed, source_count: r.case.source_count };
  },
});

export const removeCaseAttributeTool = defineTool({
  name: 'remove_case_attribute',
  group: 'case',
  title: 'Remove Case Attribute',
  description:
    'Remove one attribute value from a case (exact attribute name; other cases keep theirs). An attribute the case does not have changes nothing (removed: false). ' +
    'Returns {case_id, name, removed, old_type, old_value}. Errors: CASE_NOT_FOUND, INVALID_ARGUMENTS, CASES_NOT_LISTED/NO_CONTEXT.',
  input: args({
    case_id: id('the case'),
    attribute_name: nameText(MAX_ATTRIBUTE_NAME).describe(`attribute name, 1-${MAX_ATTRIBUTE_NAME} characters (exact)`),
  }),
  effect: 'modify',
  trust: 'apply_code',
  noProjectCode: NO_PROJECT,
  run: (ctx, input) => {
    const r = removeCaseAttribute(ctx.domain, input.case_id, input.attribute_name);
    return { case_id: input.case_id, name: r.name, removed: r.removed !== null, old_type: r.removed?.type ?? null, old_value: r.removed?.value ?? null };
  },
});

export const listCaseAttributesTool = defineTool({
  name: 'list_case_attributes',
  group: 'case',
  title: 'List Case Attributes',
  description:
    'The attribute definitions of the project: every attribute name a case has, by name, with its type (the type the cases give it; the most used one ' +
    'when they differ, and types counts cases per type) and how many cases have a value. Returns {count, attributes: [{name, type, types: {text?, number?, date?, boolean?}, case_count}]}. ' +
    'Errors: CASES_NOT_LISTED/NO_CONTEXT.',
  input: args({}),
  effect: 'read',
  trust: 'read',
  noProjectCode: NO_PROJECT,
  run: (ctx) => {
    const attributes = listCaseAttributeDefinitions(ctx.domain);
    return { count: attributes.length, attributes };
  },
});

export const renameCaseAttributeTool = defineTool({
  name: 'rename_case_attribute',
  group: 'case',
  title: 'Rename Case Attribute',
  description:
    'Rename an attribute on every case that has it (exact names; each case keeps its type and value). The same name again changes nothing (changed: false). ' +
    'Returns {old_name, new_name, case_ids, case_count, changed}. Errors: INVALID_ARGUMENTS (a bad name), ATTRIBUTE_NOT_FOUND (no case has attribute_name), ' +
    'DUPLICATE_NAME (some case already has an attribute named new_name; details.case_ids), CASES_NOT_LISTED/NO_CONTEXT.',
  input: args({
    attribute_name: nameText(MAX_ATTRIBUTE_NAME).describe('the attribute to rename (exact name)'),
    new_name: nameText(MAX_ATTRIBUTE_NAME).describe(`the new name, 1-${MAX_ATTRIBUTE_NAME} characters`),
  }),
  effect: 'modify',
  trust: 'rename',
  noProjectCode: NO_PROJECT,
  run: (ctx, input) => {
    const r = renameCaseAttribute(ctx.domain, input.attribute_name, input.new_name);
    return { old_name: r.old_name, new_name: r.new_name, case_ids: r.case_ids, case_count: r.case_ids.length, changed: r.changed };
  },
});
