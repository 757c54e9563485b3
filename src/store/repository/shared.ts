import type { AttributeType, AttributeValue } from '../../domain/ports';

/** A value bound to a `?` of a statement. */
export type SqlParam = string | number | null;

/**
 * The typed value columns of an attribute row (`case_attributes`, `source_attributes`): the column its type names
 * holds the value (a boolean as 0 or 1), the others are null.
 */
export interface AttributeValueColumns {
  type: AttributeType;
  value_text: string | null;
  value_number: number | null;
  value_date: string | null;
  value_boolean: number | null;
}

/** A stored attribute's value as the domain's typed value (the column its type names). */
export function attributeValueOf(r: AttributeValueColumns): AttributeValue {
  return r.type === 'number'
    ? Number(r.value_number)
    : r.type === 'boolean'
      ? r.value_boolean === 1
      : r.type === 'date'
        ? String(r.value_date)
        : String(r.value_text);
}

/** The value columns `value_text, value_number, value_date, value_boolean` that store `value` of `type`, in that order. */
export function attributeValueParams(type: AttributeType, value: AttributeValue): [string | null, number | null, string | null, number | null] {
  return [
    type === 'text' ? String(value) : null,
    type === 'number' ? Number(value) : null,
    type === 'date' ? String(value) : null,
    type === 'boolean' ? (value === true ? 1 : 0) : null,
  ];
}
