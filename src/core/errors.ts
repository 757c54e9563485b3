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
  'CATEGORY_NOT_EMPTY', // Marginalia: delete_category on a category holding codes or sub-categories without move_codes_to (like FOLDER_NOT_EMPTY)
  'INVALID_POSITION', // Marginalia: text offsets outside the source or end before start
  'INVALID_ARGUMENTS', // Marginalia: arguments do not match the tool's input schema
  'CASE_NOT_FOUND',
  'CASES_NOT_LISTED/NO_CONTEXT',
  'AV_SEGMENT_NOT_CODED/CODE_NOT_FOUND',
  'AV_SEGMENT_NOT_CODED/INVALID_TIME_RANGE',
  'AV_SEGMENT_NOT_CODED/OVERLAPPING_SEGMENT',
  'AV_SEGMENT_NOT_REMOVED/NOT_FOUND',
  'TRANSCRIPT_NOT_FOUND', // Marginalia: an audio/video source has no sidecar transcript (.vtt, .srt, .txt) and no transcription endpoint is configured
  'TRANSCRIPTION_FAILED', // Marginalia: the configured transcription endpoint failed or answered something other than a transcript
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
  'VERSION_CONTROL_NOT_INITIALIZED', // Marginalia: version-control tools before initialize_version_control (no .marginalia/history)
  'SNAPSHOT_NOT_FOUND', // Marginalia: a ref that names no snapshot of the project history
  'ATTRIBUTE_NOT_FOUND', // Marginalia: no case has a case attribute of that name (rename_case_attribute)
  'SUGGESTION_NOT_FOUND', // Marginalia: no suggestion (of the kind the tool takes) with that suggestion_id / merge_suggestion_id
  'BATCH_NOT_FOUND', // Marginalia: no suggestion batch with that batch_id / suggestion_batch_id
  'SUGGESTION_ALREADY_DECIDED', // Marginalia: approving a rejected suggestion, or rejecting an approved one (its status is in details)
  'REPORT_NOT_FOUND', // Marginalia: no report (job) with that report_id
  // agent context (Marginalia's codes for what the agent-context spec leaves "not shown")
  'UNAUTHORIZED', // no or bad bearer token, or the trust layer denies the call (spec section 7: "Unauthorized")
  'INVALID_CONFIG', // .marginalia/config.yaml does not validate
  'SESSION_NOT_FOUND', // unknown or ended session id
  'SESSION_EXPIRED', // the session timed out (sessions.timeout_minutes without activity)
  'SESSION_LIMIT', // sessions.max_concurrent reached
  'RATE_LIMITED', // rate_limits exceeded; details.retry_after_ms says when to retry
  'APPROVAL_QUEUE_FULL', // approvals.max_pending requests are already pending
  'APPROVAL_NOT_FOUND', // unknown request_id
  'APPROVAL_NOT_PENDING', // the request was already decided (its status is in details)
  'APPROVAL_FORBIDDEN', // the caller may not approve: not the researcher or a reviewer, or its own request
  'VERSION_CONFLICT', // approving a held call whose entities changed since it was held (details.changes names what and by whom)
  'NOT_UNDOABLE', // the action cannot be undone (spec: merges and deletions cannot), or a later change by someone else depends on it
  'NOTHING_TO_UNDO', // Marginalia: undo, and the caller has no action of their own left to undo
  'NOTHING_TO_REDO', // Marginalia: redo, and the caller has undone nothing since their last action
  'SOURCE_BUSY', // the researcher is editing the source and declined the agent's change
  'SESSION_FORBIDDEN', // a session used, heartbeated or ended with a credential other than the one that opened it
  'AGENT_EXISTS', // an agent credential of that name exists already (or the name is reserved)
  'AGENT_NOT_FOUND', // no agent credential of that name
  'MERGE_CONFLICT_NOT_FOUND', // Marginalia: resolve_merge_conflict with a conflict_id that names no open merge conflict (unknown, or resolved already)
  'REMOTE_NOT_CONFIGURED', // Marginalia: sync_project before configure_remote (nothing is pushed without a remote the researcher configured)
  'SYNC_DIVERGED', // Marginalia: the history and its remote both have new snapshots and no merge is available (src/vcs/remote.ts)
  'REMOTE_UNREACHABLE', // Marginalia: git could not read or write the configured remote (not a repository, no access, no network)
  'SOURCE_CLOSED', // the researcher closed the source (directly, or its folder or case) to agents: an agent may not read it (src/agent/agentAccess.ts)
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
