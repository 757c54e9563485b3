import { createHash } from 'node:crypto';
import type { ExchangeGuidKind } from './ports';

/**
 * GUIDs of exchanged items (REFI-QDA, `urn:QDA-XML:project:1.0`). Every REFI item carries a GUID, and other
 * tools recognise a re-imported item by it, so an item's GUID must not change between exports.
 *
 * - An item that came from a REFI-QDA file keeps that file's GUID (stored in `exchange_guids`, migration 8).
 * - Any other item's GUID is derived: a name-based UUID version 5 (RFC 9562, section 5.5: SHA-1 over the
 *   namespace's 16 bytes followed by the name's UTF-8 bytes) with the project's own GUID as the namespace and
 *   `<kind>:<local id>` as the name. Ids are never reused, so the GUID of an item stays its own for good, and
 *   two projects never share one.
 *
 * GUIDs are written in lower case with hyphens (NVivo writes lower case, ATLAS.ti upper case; the REFI schema
 * allows both and a braced form) and compared after {@link normalizeGuid}.
 */

const GUID = /^\{?([0-9a-fA-F]{8})-?([0-9a-fA-F]{4})-?([0-9a-fA-F]{4})-?([0-9a-fA-F]{4})-?([0-9a-fA-F]{12})\}?$/;

/**
 * `raw` as a canonical GUID (lower case, hyphenated, braces dropped), or null when it is not a GUID.
 * Accepts the REFI schema's two forms (`xxxxxxxx-xxxx-...` and `{xxxxxxxx-...}`), in any case, and 32 bare hex digits.
 */
export function normalizeGuid(raw: unknown): string | null {
  if (typeof raw !== 'string') return null;
  const m = GUID.exec(raw.trim());
  if (!m) return null;
  return `${m[1]}-${m[2]}-${m[3]}-${m[4]}-${m[5]}`.toLowerCase();
}

/**
 * The derived GUID of item `<kind>:<localId>` of the project whose GUID is `projectGuid` (32 hex digits, or any
 * form {@link normalizeGuid} accepts): a UUID version 5, lower case. Deterministic: the same inputs always give
 * the same GUID.
 */
export function deriveGuid(projectGuid: string, kind: ExchangeGuidKind | string, localId: string | number): string {
  return uuidV5(guidBytes(projectGuid), `${kind}:${localId}`);
}

/** The 16 bytes of a GUID in any form {@link normalizeGuid} accepts; throws (a programming error) on anything else. */
export function guidBytes(guid: string): Buffer {
  const ns = normalizeGuid(guid);
  if (ns === null) throw new Error(`not a project GUID: ${guid}`);
  return Buffer.from(ns.replace(/-/g, ''), 'hex');
}

/**
 * A name-based UUID version 5 (RFC 9562, section 5.5): SHA-1 over `namespace` (16 bytes) and `name`'s UTF-8
 * bytes, version and variant bits set, lower case, hyphenated.
 */
export function uuidV5(namespace: Uint8Array, name: string): string {
  const b = createHash('sha1').update(namespace).update(name, 'utf8').digest().subarray(0, 16);
  b[6] = ((b[6] as number) & 0x0f) | 0x50;
  b[8] = ((b[8] as number) & 0x3f) | 0x80;
  return guidText(b);
}

/** 16 bytes as a GUID: lower-case hex, hyphenated 8-4-4-4-12. */
export function guidText(bytes: Uint8Array): string {
  const h = Buffer.from(bytes.buffer, bytes.byteOffset, 16).toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

/**
 * Resolves item GUIDs of one project: the stored GUID of `(kind, localId)` when the item came from a REFI-QDA
 * file, else the derived one ({@link deriveGuid}).
 */
export class GuidResolver {
  private readonly stored = new Map<string, string>();

  /** `stored`: the rows of `exchange_guids` (any order). */
  constructor(
    readonly projectGuid: string,
    stored: readonly { kind: string; local_id: string; guid: string }[],
  ) {
    for (const s of stored) this.stored.set(`${s.kind}\u0000${s.local_id}`, s.guid);
  }

  /** The GUID of item `(kind, localId)`. */
  guid(kind: ExchangeGuidKind, localId: string | number): string {
    return this.stored.get(`${kind}\u0000${localId}`) ?? deriveGuid(this.projectGuid, kind, localId);
  }

  /** The stored GUID of `(kind, localId)`, or undefined when the item has only a derived one. */
  storedGuid(kind: ExchangeGuidKind, localId: string | number): string | undefined {
    return this.stored.get(`${kind}\u0000${localId}`);
  }
}
