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
