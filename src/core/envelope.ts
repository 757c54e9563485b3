import type { ErrorCode } from './errors';

/**
 * The response envelope of the HTTP tool interface (spec section 7):
 * success `{success: true, data}`; failure `{success: false, error, error_code}`.
 * `details` is Marginalia's addition for machine-readable context (validation issues, ids).
 */
export type Envelope<T = unknown> = SuccessEnvelope<T> | FailureEnvelope;

/** `{success: true, data}`. */
export interface SuccessEnvelope<T = unknown> {
  success: true;
  data: T;
}

/** `{success: false, error, error_code, details?}`. */
export interface FailureEnvelope {
  success: false;
  error: string;
  error_code: ErrorCode;
  details?: unknown;
}

/** Builds a success envelope. */
export function ok<T>(data: T): SuccessEnvelope<T> {
  return { success: true, data };
}

/** Builds a failure envelope; `details` is omitted when undefined. */
export function fail(error_code: ErrorCode, error: string, details?: unknown): FailureEnvelope {
  return details === undefined ? { success: false, error, error_code } : { success: false, error, error_code, details };
}
