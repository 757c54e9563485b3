/**
 * Case and document attributes as REFI-QDA `Variable`s (REFI-QDA 1.5 section 12, Project.xsd's
 * `VariableValueType`): the variable type an attribute gets from its values, and one value as its XML element.
 * Used by refiExport.ts.
 */
import type { AttributeType, AttributeValue } from '../../domain/ports';
import { toXsdDecimal, toXsdInteger } from './xml';

/** The REFI variable type of an attribute from the types and values it has across cases. */
export function variableType(values: { type: AttributeType; value: AttributeValue }[]): { type: string; mixed: boolean } {
  const types = new Set(values.map((v) => v.type));
  if (types.size > 1) return { type: 'Text', mixed: true };
  switch ([...types][0]) {
    case 'boolean':
      return { type: 'Boolean', mixed: false };
    case 'number':
      return { type: values.every((v) => Number.isInteger(v.value)) ? 'Integer' : 'Float', mixed: false };
    case 'date':
      return { type: values.every((v) => /^\d{4}-\d{2}-\d{2}$/.test(String(v.value))) ? 'Date' : 'DateTime', mixed: false };
    default:
      return { type: 'Text', mixed: false };
  }
}

/** An attribute value as the `VariableValue` child of a variable of `type`: [element name, literal]. */
export function variableValue(type: string, value: AttributeValue): [string, string] {
  switch (type) {
    case 'Boolean':
      return ['BooleanValue', value === true ? 'true' : 'false'];
    case 'Integer':
      return ['IntegerValue', toXsdInteger(Number(value))];
    case 'Float':
      return ['FloatValue', toXsdDecimal(Number(value))];
    case 'Date':
      return ['DateValue', String(value)];
    case 'DateTime': {
      const v = String(value);
      // xsd:dateTime needs a time with seconds: complete a date or an HH:MM time
      const full = /^\d{4}-\d{2}-\d{2}$/.test(v) ? `${v}T00:00:00` : v.replace(/^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2})(?=$|Z|[+-]\d{2}:\d{2}$)/, '$1:00');
      return ['DateTimeValue', full];
    }
    default:
      return ['TextValue', String(value)];
  }
}
