import { coerceAttributeValue, MAX_ATTRIBUTE_NAME } from './cases';
import { stampOf } from './codebook';
import type { DomainContext } from './events';
import type { AttributeType, AttributeValue, ProjectRepository, SourceAttribute } from './ports';
import { cleanName } from './rules';
import { requireSource } from './sources';

/**
 * Document (source) attributes: typed values attached to a source, as NVivo's classifications, MAXQDA's
 * document variables, QualCoder's and RQDA's file attributes and REFI-QDA's `VariableValue`s on sources
 * hold them (issue 13 item 5, issue 15 item 5). They are typed like case attributes (HTTP spec, section 2:
 * text, number, date, boolean; src/domain/cases.ts) and stored in `source_attributes` (migration 10).
 *
 * Names are 1-100 code points, compared exactly ("Age" and "age" are two attributes). Dates are ISO 8601
 * strings: a date `YYYY-MM-DD` or a datetime `YYYY-MM-DDTHH:MM[:SS[.fff]][Z|±HH:MM]` (see `isIsoDate`).
 */

type Ctx = DomainContext<ProjectRepository>;

/** What {@link setSourceAttribute} did. */
export interface SourceAttributeSet {
  source_id: number;
  source_name: string;
  attribute_name: string;
  /** the type now stored; null when the attribute was deleted (value null) */
  type: AttributeType | null;
  /** the value now stored; null when the attribute was deleted */
  value: AttributeValue | null;
  /** the attribute before the call, or null when the source had none of this name */
  previous: SourceAttribute | null;
  /** false: nothing was written (the same type and value again, or deleting an attribute the source lacks) */
  changed: boolean;
  /** true when the type was inferred from the value (a new attribute and no type given) */
  inferred: boolean;
}

/**
 * The type a new document attribute gets when none is given: a JSON boolean is `boolean`, a number
 * `number`, any string `text` (a date string stays text unless `type: "date"` is passed; a CSV or foreign
 * file that knows its column types passes them).
 */
export function inferSourceAttributeType(value: AttributeValue): AttributeType {
  if (typeof value === 'boolean') return 'boolean';
  if (typeof value === 'number') return 'number';
  return 'text';
}

/** The emitted `source.attribute_set` payload for one change. */
function eventPayload(
  source: { source_id: number; name: string },
  name: string,
  type: AttributeType | null,
  value: AttributeValue | null,
  previous: SourceAttribute | null,
) {
  return {
    source_id: source.source_id,
    source_name: source.name,
    attribute_name: name,
    type,
    value,
    old_type: previous?.type ?? null,
    old_value: previous?.value ?? null,
  };
}

/**
 * Sets document attribute `attribute_name` of a source to a typed value, or deletes it when `value` is null.
 * The type is, in order: `type` when given (changing an attribute's type is allowed this way); the
 * attribute's current type on this source (an attribute keeps its type); else inferred from the JSON value
 * ({@link inferSourceAttributeType}: number, boolean, otherwise text). The value is then converted to that
 * type by the case attributes' rules (`coerceAttributeValue`: a number or decimal string for number, an
 * ISO 8601 date or datetime for date, true/false for boolean, anything for text).
 * Setting the same type and value again, or deleting an attribute the source does not have, writes nothing
 * and emits nothing (`changed: false`). Otherwise emits source.attribute_set
 * {source_id, source_name, attribute_name, type, value, old_type, old_value} (type and value null: deleted).
 *
 * Errors: SOURCE_NOT_FOUND, INVALID_ARGUMENTS (empty, overlong or control characters in the name; a value
 * that is not of the type, e.g. a date that is not ISO 8601; nothing is written).
 */
export function setSourceAttribute(
  ctx: Ctx,
  input: { source_id: number; attribute_name: string; value: AttributeValue | null; type?: AttributeType },
): SourceAttributeSet {
  const source = requireSource(ctx, input.source_id);
  const name = cleanName(input.attribute_name, MAX_ATTRIBUTE_NAME, 'attribute', 'INVALID_ARGUMENTS');
  const previous = ctx.repo.listSourceAttributes(input.source_id).find((a) => a.name === name) ?? null;
  const base = { source_id: source.source_id, source_name: source.name, attribute_name: name, previous, inferred: false };
  if (input.value === null) {
    if (!previous) return { ...base, type: null, value: null, changed: false };
    ctx.repo.deleteSourceAttribute(source.source_id, name);
    ctx.events.emit({
      event_type: 'source.attribute_set',
      aggregate_type: 'source',
      aggregate_id: String(source.source_id),
      payload: eventPayload(source, name, null, null, previous),
    });
    return { ...base, type: null, value: null, changed: true };
  }
  const type = input.type ?? previous?.type ?? inferSourceAttributeType(input.value);
  const what =
    input.type === undefined && previous
      ? `The document attribute "${name}" of source ${source.source_id} is of type ${previous.type} (pass type to change it); the value`
      : `The value of "${name}"`;
  const value = coerceAttributeValue(input.value, type, what);
  const inferred = input.type === undefined && previous === null;
  if (previous && previous.type === type && previous.value === value) return { ...base, type, value, changed: false, inferred };
  ctx.repo.setSourceAttribute(source.source_id, name, type, value, stampOf(ctx));
  ctx.events.emit({
    event_type: 'source.attribute_set',
    aggregate_type: 'source',
    aggregate_id: String(source.source_id),
    payload: eventPayload(source, name, type, value, previous),
  });
  return { ...base, type, value, changed: true, inferred };
}

/**
 * Sets several document attributes of one source in one step, for imports (a survey row gives a source a
 * dozen): each as {@link setSourceAttribute} would (name rules, type resolution, coercion, no write when type
 * and value are unchanged, null deletes; a name given twice keeps its last value), but every value is checked
 * before anything is written, and ONE event covers them all: source.attributes_set
 * {source_id, source_name, attributes: [{attribute_name, type, value, old_type, old_value}]} listing the
 * attributes that changed (none: nothing written, no event), as case.attributes_set does for cases.
 * Returns how many attributes changed.
 *
 * Errors: SOURCE_NOT_FOUND, INVALID_ARGUMENTS (a bad name, or a value that is not of its type; nothing is written).
 */
export function setSourceAttributes(
  ctx: Ctx,
  sourceId: number,
  attributes: readonly { attribute_name: string; value: AttributeValue | null; type?: AttributeType }[],
): { changed: number } {
  const source = requireSource(ctx, sourceId);
  const original = new Map(ctx.repo.listSourceAttributes(sourceId).map((a) => [a.name, a]));
  const next = new Map<string, { type: AttributeType; value: AttributeValue } | null>([...original].map(([k, a]) => [k, { type: a.type, value: a.value }]));
  for (const input of attributes) {
    const name = cleanName(input.attribute_name, MAX_ATTRIBUTE_NAME, 'attribute', 'INVALID_ARGUMENTS');
    if (input.value === null) {
      next.set(name, null);
      continue;
    }
    const current = next.get(name) ?? null;
    const type = input.type ?? current?.type ?? inferSourceAttributeType(input.value);
    const what =
      input.type === undefined && current
        ? `The document attribute "${name}" of source ${sourceId} is of type ${current.type} (pass type to change it); the value`
        : `The value of "${name}"`;
    next.set(name, { type, value: coerceAttributeValue(input.value, type, what) });
  }
  const changes: ReturnType<typeof eventPayload>[] = [];
  for (const [name, after] of next) {
    const before = original.get(name) ?? null;
    if (after === null ? before === null : before !== null && before.type === after.type && before.value === after.value) continue;
    if (after === null) ctx.repo.deleteSourceAttribute(sourceId, name);
    else ctx.repo.setSourceAttribute(sourceId, name, after.type, after.value, stampOf(ctx));
    changes.push(eventPayload(source, name, after?.type ?? null, after?.value ?? null, before));
  }
  if (changes.length === 0) return { changed: 0 };
  ctx.events.emit({
    event_type: 'source.attributes_set',
    aggregate_type: 'source',
    aggregate_id: String(sourceId),
    payload: {
      source_id: sourceId,
      source_name: source.name,
      attributes: changes.map(({ attribute_name, type, value, old_type, old_value }) => ({ attribute_name, type, value, old_type, old_value })),
    },
  });
  return { changed: changes.length };
}

/**
 * The document attributes of a source as `{name: value}` (names in binary order; values typed: string for
 * text and date, number, boolean). The typed rows, with type and who set them, are {@link listSourceAttributesTyped}.
 * Errors: SOURCE_NOT_FOUND.
 */
export function listSourceAttributes(ctx: Ctx, sourceId: number): Record<string, AttributeValue> {
  return attributeRecord(listSourceAttributesTyped(ctx, sourceId));
}

/** The document attributes of a source as typed rows (name, type, value, updated_at, owner), by name. Errors: SOURCE_NOT_FOUND. */
export function listSourceAttributesTyped(ctx: Ctx, sourceId: number): SourceAttribute[] {
  requireSource(ctx, sourceId);
  return ctx.repo.listSourceAttributes(sourceId);
}

/** Typed rows as `{name: value}`, in the rows' order. */
function attributeRecord(rows: readonly SourceAttribute[]): Record<string, AttributeValue> {
  const o: Record<string, AttributeValue> = {};
  for (const a of rows) o[a.name] = a.value;
  return o;
}
