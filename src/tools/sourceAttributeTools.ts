import { z } from 'zod';
import { MAX_ATTRIBUTE_NAME } from '../domain/cases';
import { setSourceAttribute } from '../domain/sourceAttributes';
import { defineTool } from './defineTool';
import { args, id, nameText, text } from './schemas';

/**
 * Document (source) attributes (issue 13 item 5; src/domain/sourceAttributes.ts): the one writer,
 * `set_source_attribute`. Sources are read with their attributes by list_sources and read_source_content.
 *
 * Trust: effect `modify` with the `apply_code` category, as set_case_attribute (the capability table's
 * Notify): the spec's risk mapping puts creating at Notify, and an agent's call runs and is reported to the
 * researcher (trust level notify) unless the researcher overrides it.
 */
export const setSourceAttributeTool = defineTool({
  name: 'set_source_attribute',
  group: 'source',
  title: 'Set Document Attribute',
  description:
    "Set a typed document attribute of a source (types: text, number, date, boolean), e.g. a participant's age group or the interview date. " +
    'Without type, an existing attribute keeps its type and a new one is inferred from the JSON value: true/false -> boolean, a number -> number, a string -> text. ' +
    'Pass type to convert ("42" as number; "2024-05-01" as date: dates are ISO 8601 YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ) or to change the type. ' +
    "value null deletes the attribute. Setting the same value again changes nothing (changed: false). list_sources and read_source_content return a source's attributes. " +
    'Returns {source_id, source_name, attribute_name, type, value, old_type, old_value, changed, inferred}. ' +
    'Errors: SOURCE_NOT_FOUND, INVALID_ARGUMENTS (a bad name, or a value not of the type, such as a date that is not ISO 8601).',
  input: args({
    source_id: id('the source'),
    attribute_name: nameText(MAX_ATTRIBUTE_NAME).describe(
      `attribute name, 1-${MAX_ATTRIBUTE_NAME} characters (exact: "Age" and "age" are different attributes)`,
    ),
    value: z.union([text(10_000), z.number(), z.boolean(), z.null()]).describe('the value: a string, a number or a boolean; null deletes the attribute'),
    type: z
      .enum(['text', 'number', 'date', 'boolean'])
      .optional()
      .describe("text, number, date or boolean; default: the attribute's current type, or inferred from the value"),
  }),
  effect: 'modify',
  trust: 'apply_code',
  run: (ctx, input) => {
    const r = setSourceAttribute(ctx.domain, input);
    return {
      source_id: r.source_id,
      source_name: r.source_name,
      attribute_name: r.attribute_name,
      type: r.type,
      value: r.value,
      old_type: r.previous?.type ?? null,
      old_value: r.previous?.value ?? null,
      changed: r.changed,
      inferred: r.inferred,
    };
  },
});
