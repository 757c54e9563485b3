import { randomUUID } from 'node:crypto';

/** A random UUID v4 string, used for event ids, session ids and request ids. */
export function newUuid(): string {
  return randomUUID();
}
