import { isoTime } from '../core/clock';
import { guidBytes, guidText, uuidV5 } from '../domain/exchangeIds';

/**
 * How an event's envelope fields are stored in the `events` table since migration 9, and read back.
 * The stored form is smaller; the envelope read back is the one that was stored, character for character.
 *
 * - `event_id`: NULL, the id being derived ({@link EventIdDeriver}); a row from before migration 9 keeps its
 *   stored id.
 * - `timestamp`: integer milliseconds since the Unix epoch when the text is exactly `Date#toISOString` of
 *   them (`2026-11-25T14:53:39.235Z`), else the text.
 * - `session_id`, `correlation_id`: a UUID written as `crypto.randomUUID` writes it (lower-case hex,
 *   hyphenated) as its 16 bytes (a blob), anything else (a caller's own correlation id) as text.
 * - `payload`: JSON; the payloads of the most frequent events as an array of their values after the index
 *   of their key list in {@link PAYLOAD_SHAPES}, any other payload (and every payload stored before) as its
 *   JSON object.
 */

const CANONICAL_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * The two parameters that store `value` through `coalesce(unhex(?), ?)`: its 32 hex digits when it is a
 * canonical UUID (stored as a 16-byte blob), else the value itself (stored as text, or NULL).
 */
export function uuidParams(value: string | null | undefined): [string | null, string | null] {
  if (value === null || value === undefined) return [null, null];
  return CANONICAL_UUID.test(value) ? [value.replace(/-/g, ''), null] : [null, value];
}

/** A stored `session_id` or `correlation_id` (16-byte blob or text) as the text it was stored from. */
export function uuidFromStored(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (value instanceof Uint8Array && value.length === 16) return guidText(value);
  return String(value);
}

/** The value that stores timestamp `iso`: its milliseconds when `iso` is exactly their ISO 8601 text, else `iso`. */
export function timestampToStored(iso: string): number | string {
  const ms = Date.parse(iso);
  return Number.isFinite(ms) && isoTime(ms) === iso ? ms : iso;
}

/** A stored timestamp (milliseconds or text) as ISO 8601 text. */
export function timestampFromStored(value: unknown): string {
  return typeof value === 'number' ? isoTime(value) : String(value);
}

/**
 * Derives the id of a stored event: a name-based UUID version 5 (RFC 9562, section 5.5) with the project's
 * GUID as the namespace and `event:<sequence number>` as the name, the same derivation as exchanged items'
 * GUIDs (src/domain/exchangeIds.ts `deriveGuid(projectGuid, 'event', seq)`). Sequence numbers are never
 * reused (AUTOINCREMENT), so an event's id is its own for good, and two projects never share one.
 */
export class EventIdDeriver {
  private readonly namespace: Buffer;

  /** `projectGuid`: the project's GUID (meta `project_guid`, 32 hex digits or any form normalizeGuid accepts). */
  constructor(projectGuid: string) {
    this.namespace = guidBytes(projectGuid);
  }

  /** The id of the event with sequence number `seq`. */
  eventId(seq: number): string {
    return uuidV5(this.namespace, `event:${seq}`);
  }
}

/**
 * The key lists of the most frequent event payloads, in the order the domain writes them. A payload whose
 * keys are exactly one of these, in this order, is stored as the JSON array `[index, ...values]`: its keys
 * were 40-60 bytes of a payload of about 120. Append only: a stored payload names its shape by index, so an
 * entry is never changed or removed.
 */
export const PAYLOAD_SHAPES: readonly (readonly string[])[] = [
  /* 0: coding.segment_coded */ ['segment_id', 'code_id', 'source_id', 'start', 'end', 'text'],
  /* 1: coding.code_created */ ['code_id', 'name', 'color', 'memo', 'category_id'],
  /* 2: source.updated, and other field changes */ ['source_id', 'field', 'old_value', 'new_value'],
  /* 3: coding.segment_uncoded */ ['segment_id', 'code_id', 'source_id'],
  /* 4: coding.segment_updated */ ['segment_id', 'code_id', 'source_id', 'field', 'old_value', 'new_value'],
  /* 5: coding.segment_uncoded since undo (src/domain/coding.ts deleteSegment) */ [
    'segment_id',
    'code_id',
    'source_id',
    'start',
    'end',
    'text',
    'memo',
    'importance',
    'owner',
    'session_id',
  ],
];

const SHAPE_OF = new Map(PAYLOAD_SHAPES.map((keys, i) => [keys.join('\u0000'), i]));

/** The stored JSON of `payload`: `[shape, ...values]` when its keys are a {@link PAYLOAD_SHAPES} entry in order, else the object. */
export function payloadToStored(payload: Record<string, unknown>): string {
  const keys = Object.keys(payload);
  const shape = SHAPE_OF.get(keys.join('\u0000'));
  // an undefined value is left out of an object's JSON but would be null in an array: keep the object
  if (shape === undefined || keys.some((k) => payload[k] === undefined)) return JSON.stringify(payload);
  return JSON.stringify([shape, ...keys.map((k) => payload[k])]);
}

/**
 * A stored payload as the object it was stored from. A shape this version does not know (a project written
 * by a later one) reads as `{ payload_shape, values }`. Throws SyntaxError (JSON.parse) on text that is not
 * JSON, which only a damaged row holds.
 */
export function payloadFromStored(text: string): Record<string, unknown> {
  const parsed = JSON.parse(text) as unknown;
  if (!Array.isArray(parsed)) return parsed as Record<string, unknown>;
  const keys = PAYLOAD_SHAPES[parsed[0] as number];
  if (!keys || parsed.length !== keys.length + 1) return { payload_shape: parsed[0], values: parsed.slice(1) };
  const out: Record<string, unknown> = {};
  keys.forEach((k, i) => (out[k] = parsed[i + 1]));
  return out;
}
