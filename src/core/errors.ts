/**
 * Error codes and the one error type every layer throws.
 *
 * The codes are the HTTP tool interface's (`shared/spec/http-tool-interface.md`, section 7), plus the few
 * the spec leaves to us (marked "Marginalia"). Adapters map codes to transport statuses; no adapter ever
 * parses a message.
 */

/** Every error code a tool call can fail with. */
export const ERROR_CODES = [
  'NO_PROJECT',
  'CODE_NOT_FOUND',
  'SOURCE_NOT_FOUND',
  'SEGMENT_NOT_FOUND', // Marginalia: delete_segment on an unknown segment_id
  'FOLDER_NOT_FOUND',
  'FOLDER_NOT_CREATED',
  'FOLDER_NOT_EMPTY',
  'FOLDER_RENAME_FAILED',
  'SOURCE_IMPORT_FAILED',
  'SOURCE_DUPLICATE_NAME',
  'CATEGORY_NOT_FOUND',
  'DUPLICATE_NAME',
  'MERGE_SAME_CODE',
  'CODE_HAS_SEGMENTS', // Marginalia: delete_code without delete_segments on a code that has segments
  'CATEGORY_CYCLE', // Marginalia: a category cannot become its own ancestor
  'INVALID_POSITION', // Marginalia: text offsets outside the source or end before start
  'INVALID_ARGUMENTS', // Marginalia: arguments do not match the tool's input schema
  'CASE_NOT_FOUND',
  'CASES_NOT_LISTED/NO_CONTEXT',
  'AV_SEGMENT_NOT_CODED/CODE_NOT_FOUND',
  'AV_SEGMENT_NOT_CODED/INVALID_TIME_RANGE',
  'AV_SEGMENT_NOT_CODED/OVERLAPPING_SEGMENT',
  'AV_SEGMENT_NOT_REMOVED/NOT_FOUND',
  'TOOL_NOT_FOUND',
  'UNKNOWN_FORMAT',
  'EXPORT_FAILED',
  'IMPORT_FAILED',
  'ANALYTICS_NOT_IMPORTED/FILE_NOT_FOUND',
  'ANALYTICS_NOT_IMPORTED/NO_PROFILES',
  'HANDLER_NOT_FOUND',
  'TOOL_EXECUTION_ERROR',
  'PROJECT_LOCKED', // Marginalia: another process owns the project (lock file)
  'PROJECT_CORRUPT', // Marginalia: the project file or its journal cannot be read
  'INVALID_JSON', // Marginalia: the request body is not JSON
  'UNSUPPORTED_MEDIA_TYPE', // Marginalia: the request body is not application/json
  'FORBIDDEN_HOST', // Marginalia: Host header is not a loopback name (DNS rebinding guard)
] as const;

/** One of {@link ERROR_CODES}. */
export type ErrorCode = (typeof ERROR_CODES)[number];

/**
 * The error every layer throws for an expected failure. `code` is the spec's `error_code`; `details` is
 * optional structured context (for example the validation issues of INVALID_ARGUMENTS) returned to the
 * caller beside the message.
 */
export class ToolError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
    this.name = 'ToolError';
  }
}

/** True when `e` is a {@link ToolError}. */
export function isToolError(e: unknown): e is ToolError {
  return e instanceof ToolError;
}
