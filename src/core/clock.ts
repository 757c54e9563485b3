/** A source of time, injectable so tests can move it (approval timeouts, idle checkpoints). */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
}

/** The real clock. */
export const systemClock: Clock = { now: () => Date.now() };

/** ISO 8601 UTC with milliseconds, e.g. `2026-11-21T23:37:04.123Z`. */
export function isoTime(ms: number): string {
  // several stamps per call fall in the same millisecond (audit, events, the call log): format once
  if (ms !== lastIso.ms) {
    lastIso.text = new Date(ms).toISOString();
    lastIso.ms = ms;
  }
  return lastIso.text;
}
const lastIso = { ms: NaN, text: '' };
