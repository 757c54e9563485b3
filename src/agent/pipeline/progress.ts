/**
 * Progress of long calls (long imports): the words of a progress report, and the reporter a call's `prepare`
 * and `run` get, which forwards to the caller at a bounded pace and logs at most once a second.
 */
import type { Logger } from '../../core/log';
import type { ToolProgress } from '../../tools/context';
import type { AnyTool } from '../../tools/defineTool';
import type { Caller } from './types';

/** Least time between two progress reports forwarded to a caller, in milliseconds. */
export const PROGRESS_INTERVAL_MS = 200;
/** Least time between two progress lines in the log, in milliseconds. */
const PROGRESS_LOG_INTERVAL_MS = 1000;

/** One line for a progress report, e.g. `Reading file: 45% (94.1 of 209.7 MB)` or `Writing: 1000 of 2400 items`. */
export function describeProgress(p: ToolProgress): string {
  if (p.unit === 'bytes') {
    const mb = (n: number) => (n / 1e6).toFixed(1);
    return p.total ? `${p.message}: ${Math.floor((100 * p.done) / p.total)}% (${mb(p.done)} of ${mb(p.total)} MB)` : `${p.message}: ${mb(p.done)} MB`;
  }
  return p.total !== null ? `${p.message}: ${p.done} of ${p.total} items` : `${p.message}: ${p.done} items`;
}

/**
 * The progress function a call's `prepare` and `run` get: forwards to `sink` at most every
 * {@link PROGRESS_INTERVAL_MS} (a step's last report, done = total, always), and logs at most once a second.
 */
export function progressReporter(logger: Logger, tool: AnyTool, caller: Caller, sink: ((p: ToolProgress) => void) | undefined): (p: ToolProgress) => void {
  let lastSent = -Infinity;
  let lastLogged = -Infinity;
  return (p) => {
    const now = performance.now();
    const final = p.total !== null && p.done >= p.total;
    if (sink && (final || now - lastSent >= PROGRESS_INTERVAL_MS)) {
      lastSent = now;
      try {
        sink(p);
      } catch (e) {
        logger.warn(`progress listener of ${tool.name} failed: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
    if (now - lastLogged >= PROGRESS_LOG_INTERVAL_MS) {
      lastLogged = now;
      logger.info(`${tool.name} (${caller.client_name}): ${describeProgress(p)}`);
    }
  };
}
