import type { Envelope } from './envelope';

/**
 * Results shared between calls: a memoized read (ToolDef.memo) answers many calls with the same object,
 * so it is deep-frozen (a consumer that tried to change it would throw instead of changing every later
 * answer) and its JSON text is written once, on first use, and reused by every adapter that sends it.
 */
const texts = new WeakMap<object, string>();
const shared = new WeakSet<object>();

/** Deep-freezes `value` (plain objects and arrays) and marks it shared; returns it. */
export function shareResult<T>(value: T): T {
  if (value !== null && typeof value === 'object') {
    deepFreeze(value);
    shared.add(value);
  }
  return value;
}

/** Freezes `value` and every object below it that is not frozen yet (results are JSON-like: no cycles). */
function deepFreeze(value: object): void {
  Object.freeze(value);
  for (const v of Object.values(value)) if (v !== null && typeof v === 'object' && !Object.isFrozen(v)) deepFreeze(v as object);
}

/** `JSON.stringify(value)`, written once per shared result ({@link shareResult}). */
export function jsonText(value: unknown): string {
  if (value !== null && typeof value === 'object' && shared.has(value)) {
    let text = texts.get(value);
    if (text === undefined) {
      text = JSON.stringify(value);
      texts.set(value, text);
    }
    return text;
  }
  return JSON.stringify(value);
}

/**
 * `JSON.stringify(envelope)`, byte for byte, reusing the JSON text of a shared `data`
 * (`{"success":true,"data":...}` is the key order {@link ok} builds).
 */
export function envelopeText(envelope: Envelope | Record<string, unknown>): string {
  if (envelope.success === true && 'data' in envelope) {
    const data = (envelope as { data: unknown }).data;
    if (data !== null && typeof data === 'object' && shared.has(data) && Object.keys(envelope).length === 2) return `{"success":true,"data":${jsonText(data)}}`;
  }
  return JSON.stringify(envelope);
}
