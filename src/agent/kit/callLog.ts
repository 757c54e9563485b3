/**
 * The one-line call log every surface writes (adapter kit, issue 14 item 12): one line per tool call or approval
 * decision, `<ISO time> <client name> <tool> <status> <ok | error code> <duration>ms`, handed to the host's sink
 * (`marginalia serve` batches the lines to stderr; VS Code writes them to its output channel).
 */
import type { Caller, InvokeOutcome } from '../pipeline';

/** Where call-log lines go: the line, and the outcome it describes. */
export type CallLogSink = (line: string, outcome: InvokeOutcome) => void;

let lastMs = -1;
let lastIso = '';

/** `Date.now()` as ISO 8601 UTC with milliseconds, formatted once per millisecond (calls in the same millisecond share it). */
function isoNow(): string {
  const now = Date.now();
  if (now !== lastMs) {
    lastMs = now;
    lastIso = new Date(now).toISOString();
  }
  return lastIso;
}

/**
 * The call-log line of `outcome`: `status` is the surface's own word for it (the HTTP status, `ws`,
 * `grpc:OK` ...); `caller` undefined logs `fallbackClient` as the client.
 */
export function callLogLine(
  caller: Pick<Caller, 'client_name'> | undefined,
  tool: string,
  status: string | number,
  outcome: InvokeOutcome,
  fallbackClient = '-',
): string {
  const env = outcome.envelope;
  return `${isoNow()} ${caller?.client_name ?? fallbackClient} ${tool} ${status} ${env.success ? 'ok' : env.error_code} ${outcome.durationMs.toFixed(2)}ms`;
}

/** Writes {@link callLogLine} to `sink` (nothing when there is no sink). */
export function logCall(
  sink: CallLogSink | undefined,
  caller: Pick<Caller, 'client_name'> | undefined,
  tool: string,
  status: string | number,
  outcome: InvokeOutcome,
  fallbackClient?: string,
): void {
  if (sink) sink(callLogLine(caller, tool, status, outcome, fallbackClient), outcome);
}
