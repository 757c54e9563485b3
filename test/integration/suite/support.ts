// Helpers shared by the integration suites (bundled into each suite by build.mjs; not a suite itself).

/**
 * Polls `probe` every 50 ms until it answers something other than undefined or false, and resolves with that.
 * Rejects after `ms` milliseconds (default 15 s) with "timed out waiting for <what>"; `what` may be a function
 * so the message can say what was seen last.
 */
export async function until<T>(what: string | (() => string), probe: () => T | undefined | false | Promise<T | undefined | false>, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined && v !== false) return v as T;
    if (Date.now() > end) throw new Error(`timed out waiting for ${typeof what === 'string' ? what : what()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
