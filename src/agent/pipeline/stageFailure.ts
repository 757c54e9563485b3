/**
 * How a stage ends a call early: {@link StageFailure} (an error envelope, audited as denied when a stage
 * refused it), {@link isDenial} (what the audit calls a refusal) and {@link toFailure} (any thrown value as
 * the spec's error envelope).
 */
import { fail, type Envelope } from '../../core/envelope';
import { isToolError, type ErrorCode } from '../../core/errors';
import type { Logger } from '../../core/log';

/** Internal: a failure that ends the pipeline early with an envelope. */
export class StageFailure {
  constructor(
    readonly code: ErrorCode,
    readonly message: string,
    readonly details?: unknown,
    /** refused by the session, rate-limit or trust stage (audited as denied) */
    readonly denied = false,
  ) {}
}

/**
 * True when a failure is a refusal (audited as `denied`): a stage's (session, rate limit, path, trust,
 * source access, the approval rule) or a tool's own APPROVAL_FORBIDDEN (an approval tool called by someone
 * who may not decide, src/domain/suggestions.ts checkApprover).
 */
export function isDenial(e: unknown): boolean {
  return e instanceof StageFailure ? e.denied : isToolError(e) && e.code === 'APPROVAL_FORBIDDEN';
}

/**
 * The error envelope of `e`, thrown while calling `tool`: a stage's or the tool's own code, else
 * TOOL_EXECUTION_ERROR (the unexpected failure is logged to `logger`).
 */
export function toFailure(logger: Logger, tool: string, e: unknown): Envelope {
  if (e instanceof StageFailure) return fail(e.code, e.message, e.details);
  if (isToolError(e)) return fail(e.code, e.message, e.details);
  logger.error(`${tool} failed unexpectedly`, e);
  return fail('TOOL_EXECUTION_ERROR', `${tool} failed unexpectedly; nothing was changed. The server log has the details.`);
}
