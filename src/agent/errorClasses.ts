/**
 * The one error classification of every surface (issue 14, item 12): for each {@link ErrorCode}, the HTTP
 * status (HTTP tool interface, REST, SSE, the WebSocket upgrade), the gRPC status code, the MCP error shape
 * and the exit code of the command-line tools. Adapters look a code up here; none keeps its own table.
 *
 * Sources of the mappings:
 * - HTTP: the HTTP tool interface specification (`shared/spec/http-tool-interface.md`, section 7) and
 *   docs/reference/error-codes.md (scripts/checkDocs.ts keeps that table and {@link STATUS_BY_CODE} in step).
 * - gRPC: the status codes of `grpc/grpc` doc/statuscodes.md, as plain numbers (so the agent layer does not
 *   import @grpc/grpc-js; {@link GRPC_STATUS} names them). The gRPC adapter answers CallTool, Approve, Reject
 *   and the session RPCs with an envelope (`success: false, error_code`), and uses these codes only where it
 *   fails the RPC itself (a Subscribe it refuses, a ListApprovals with bad arguments), with the error code
 *   in the `error_code` trailer.
 * - MCP: the MCP specification (2025-11-25 "Tools: Error Handling"; basic/transports for HTTP): an unknown
 *   tool is a JSON-RPC protocol error (InvalidParams, -32602), a body that is not JSON a parse error
 *   (-32700); refusals of the HTTP guards (Host, bearer token) happen before any JSON-RPC message and are
 *   HTTP answers; every other failure of a `tools/call` is a result with `isError: true` whose
 *   `structuredContent` is `{error, error_code, details?}` (mcpServer.ts errorResult), so the model sees it.
 * - CLI: 0 success; 1 an unexpected failure (a bug: the log has the stack); 2 a refusal the caller can fix
 *   (arguments, credentials, configuration, an id that does not exist, the project's state); 3 refused for
 *   now, retry later (rate limits, full session table or approval queue). `marginalia cli` answers each
 *   command on stdout with its envelope and exits with these codes only when it cannot start.
 */
import { ERROR_CODES, type ErrorCode } from '../core/errors';

/** gRPC status codes by name (grpc/grpc doc/statuscodes.md; the numbers of @grpc/grpc-js `status`). */
export const GRPC_STATUS = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  OUT_OF_RANGE: 11,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  DATA_LOSS: 15,
  UNAUTHENTICATED: 16,
} as const;

/** JSON-RPC 2.0 error codes MCP uses (JSON-RPC 2.0 section 5.1). */
export const JSONRPC_ERROR = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
} as const;

/** CLI exit codes (see the module comment). */
export const CLI_EXIT = { OK: 0, FAILED: 1, REFUSED: 2, RETRY_LATER: 3 } as const;

/**
 * How an MCP client sees a failed `tools/call`:
 * - `tool_result`: a result with `isError: true` and `structuredContent` `{error, error_code, details?}`;
 * - `jsonrpc`: a JSON-RPC error with `code` (and `data.error_code` where Marginalia raises it itself);
 * - `http`: the HTTP answer of the Streamable HTTP endpoint's guards with `status`, before any JSON-RPC
 *   message is read (the body is the envelope; stdio has no such step).
 */
export type McpErrorShape = { kind: 'tool_result' } | { kind: 'jsonrpc'; code: number } | { kind: 'http'; status: number };

/** The classes of failure; each fixes the defaults of every surface. */
export type ErrorClass =
  | 'invalid' // the request is malformed or its arguments are wrong
  | 'unauthenticated' // no credential, a wrong one, or a session that is gone
  | 'forbidden' // the caller is known but may not do this
  | 'not_found' // the tool, route or id does not exist
  | 'conflict' // the project's state does not allow it now
  | 'unsupported_media' // the body is not application/json
  | 'unprocessable' // a file could not be imported or exported
  | 'retry_later' // a rate limit or a full queue; the same call may succeed later
  | 'upstream' // a service Marginalia calls failed
  | 'no_project' // no project is open
  | 'internal'; // an unexpected failure

/** Everything a surface needs to answer one error code. */
export interface ErrorClassification {
  class: ErrorClass;
  /** HTTP status (docs/reference/error-codes.md) */
  http: number;
  /** gRPC status code ({@link GRPC_STATUS}) */
  grpc: number;
  /** the MCP form of a failed tools/call */
  mcp: McpErrorShape;
  /** exit code of a CLI command that fails to start with this code ({@link CLI_EXIT}) */
  cliExit: number;
}

const TOOL_RESULT: McpErrorShape = { kind: 'tool_result' };

/** The defaults of each class. */
const BY_CLASS: Record<ErrorClass, ErrorClassification> = {
  invalid: { class: 'invalid', http: 400, grpc: GRPC_STATUS.INVALID_ARGUMENT, mcp: TOOL_RESULT, cliExit: CLI_EXIT.REFUSED },
  unauthenticated: { class: 'unauthenticated', http: 401, grpc: GRPC_STATUS.UNAUTHENTICATED, mcp: TOOL_RESULT, cliExit: CLI_EXIT.REFUSED },
  forbidden: { class: 'forbidden', http: 403, grpc: GRPC_STATUS.PERMISSION_DENIED, mcp: TOOL_RESULT, cliExit: CLI_EXIT.REFUSED },
  not_found: { class: 'not_found', http: 404, grpc: GRPC_STATUS.NOT_FOUND, mcp: TOOL_RESULT, cliExit: CLI_EXIT.REFUSED },
  conflict: { class: 'conflict', http: 409, grpc: GRPC_STATUS.FAILED_PRECONDITION, mcp: TOOL_RESULT, cliExit: CLI_EXIT.REFUSED },
  unsupported_media: {
    class: 'unsupported_media',
    http: 415,
    grpc: GRPC_STATUS.INVALID_ARGUMENT,
    mcp: { kind: 'jsonrpc', code: JSONRPC_ERROR.PARSE_ERROR },
    cliExit: CLI_EXIT.REFUSED,
  },
  unprocessable: { class: 'unprocessable', http: 422, grpc: GRPC_STATUS.FAILED_PRECONDITION, mcp: TOOL_RESULT, cliExit: CLI_EXIT.REFUSED },
  retry_later: { class: 'retry_later', http: 429, grpc: GRPC_STATUS.RESOURCE_EXHAUSTED, mcp: TOOL_RESULT, cliExit: CLI_EXIT.RETRY_LATER },
  upstream: { class: 'upstream', http: 502, grpc: GRPC_STATUS.UNAVAILABLE, mcp: TOOL_RESULT, cliExit: CLI_EXIT.REFUSED },
  no_project: { class: 'no_project', http: 503, grpc: GRPC_STATUS.FAILED_PRECONDITION, mcp: TOOL_RESULT, cliExit: CLI_EXIT.REFUSED },
  internal: { class: 'internal', http: 500, grpc: GRPC_STATUS.INTERNAL, mcp: TOOL_RESULT, cliExit: CLI_EXIT.FAILED },
};

/** A class's defaults with `over` replacing some columns. */
function of(cls: ErrorClass, over: Partial<Omit<ErrorClassification, 'class'>> = {}): ErrorClassification {
  return { ...BY_CLASS[cls], ...over };
}

/**
 * The classification of every error code. A `Record` over {@link ErrorCode}, so a new code in
 * src/core/errors.ts does not compile until it is classified here.
 */
export const ERROR_CLASSES: Readonly<Record<ErrorCode, ErrorClassification>> = {
  INVALID_ARGUMENTS: of('invalid'),
  // a body that is not JSON: on MCP a JSON-RPC parse error, before any method runs
  INVALID_JSON: of('invalid', { mcp: { kind: 'jsonrpc', code: JSONRPC_ERROR.PARSE_ERROR } }),
  INVALID_POSITION: of('invalid', { grpc: GRPC_STATUS.OUT_OF_RANGE }),
  MERGE_SAME_CODE: of('invalid'),
  UNKNOWN_FORMAT: of('invalid'),
  'AV_SEGMENT_NOT_CODED/INVALID_TIME_RANGE': of('invalid', { grpc: GRPC_STATUS.OUT_OF_RANGE }),

  UNAUTHORIZED: of('unauthenticated', { mcp: { kind: 'http', status: 401 } }),
  SESSION_NOT_FOUND: of('unauthenticated'),
  SESSION_EXPIRED: of('unauthenticated'),

  // the DNS-rebinding guard answers before any protocol runs
  FORBIDDEN_HOST: of('forbidden', { mcp: { kind: 'http', status: 403 } }),
  APPROVAL_FORBIDDEN: of('forbidden'),
  SESSION_FORBIDDEN: of('forbidden'),
  SOURCE_CLOSED: of('forbidden'),

  // MCP: "Unknown tools" are protocol errors (2025-11-25 Tools, Error Handling; the SDK's InvalidParams)
  TOOL_NOT_FOUND: of('not_found', { mcp: { kind: 'jsonrpc', code: JSONRPC_ERROR.INVALID_PARAMS } }),
  CODE_NOT_FOUND: of('not_found'),
  SOURCE_NOT_FOUND: of('not_found'),
  SEGMENT_NOT_FOUND: of('not_found'),
  FOLDER_NOT_FOUND: of('not_found'),
  CATEGORY_NOT_FOUND: of('not_found'),
  CASE_NOT_FOUND: of('not_found'),
  SNAPSHOT_NOT_FOUND: of('not_found'),
  ATTRIBUTE_NOT_FOUND: of('not_found'),
  SUGGESTION_NOT_FOUND: of('not_found'),
  BATCH_NOT_FOUND: of('not_found'),
  REPORT_NOT_FOUND: of('not_found'),
  AGENT_NOT_FOUND: of('not_found'),
  MERGE_CONFLICT_NOT_FOUND: of('not_found'),
  APPROVAL_NOT_FOUND: of('not_found'),
  'AV_SEGMENT_NOT_CODED/CODE_NOT_FOUND': of('not_found'),
  'AV_SEGMENT_NOT_REMOVED/NOT_FOUND': of('not_found'),
  TRANSCRIPT_NOT_FOUND: of('not_found'),
  'ANALYTICS_NOT_IMPORTED/FILE_NOT_FOUND': of('not_found'),

  DUPLICATE_NAME: of('conflict', { grpc: GRPC_STATUS.ALREADY_EXISTS }),
  SOURCE_DUPLICATE_NAME: of('conflict', { grpc: GRPC_STATUS.ALREADY_EXISTS }),
  AGENT_EXISTS: of('conflict', { grpc: GRPC_STATUS.ALREADY_EXISTS }),
  FOLDER_NOT_CREATED: of('conflict'),
  FOLDER_NOT_EMPTY: of('conflict'),
  FOLDER_RENAME_FAILED: of('conflict'),
  CODE_HAS_SEGMENTS: of('conflict'),
  CATEGORY_CYCLE: of('conflict'),
  CATEGORY_NOT_EMPTY: of('conflict'),
  PROJECT_LOCKED: of('conflict'),
  VERSION_CONTROL_NOT_INITIALIZED: of('conflict'),
  REMOTE_NOT_CONFIGURED: of('conflict'),
  SYNC_DIVERGED: of('conflict', { grpc: GRPC_STATUS.ABORTED }),
  'AV_SEGMENT_NOT_CODED/OVERLAPPING_SEGMENT': of('conflict'),
  SUGGESTION_ALREADY_DECIDED: of('conflict'),
  APPROVAL_NOT_PENDING: of('conflict'),
  // a concurrency conflict: gRPC's ABORTED ("typically due to a concurrency issue such as a sequencer check failure")
  VERSION_CONFLICT: of('conflict', { grpc: GRPC_STATUS.ABORTED }),
  NOT_UNDOABLE: of('conflict'),
  NOTHING_TO_UNDO: of('conflict'),
  NOTHING_TO_REDO: of('conflict'),
  SOURCE_BUSY: of('conflict', { grpc: GRPC_STATUS.ABORTED }),

  UNSUPPORTED_MEDIA_TYPE: of('unsupported_media'),

  SOURCE_IMPORT_FAILED: of('unprocessable'),
  IMPORT_FAILED: of('unprocessable'),
  EXPORT_FAILED: of('unprocessable'),
  'ANALYTICS_NOT_IMPORTED/NO_PROFILES': of('unprocessable'),

  RATE_LIMITED: of('retry_later'),
  SESSION_LIMIT: of('retry_later'),
  APPROVAL_QUEUE_FULL: of('retry_later'),

  TRANSCRIPTION_FAILED: of('upstream'),
  REMOTE_UNREACHABLE: of('upstream'),

  NO_PROJECT: of('no_project'),
  'CASES_NOT_LISTED/NO_CONTEXT': of('no_project'),

  TOOL_EXECUTION_ERROR: of('internal'),
  // a REST route whose tool this build does not have: HTTP 501 Not Implemented, gRPC UNIMPLEMENTED
  HANDLER_NOT_FOUND: of('internal', { http: 501, grpc: GRPC_STATUS.UNIMPLEMENTED }),
  // the configuration or the project file cannot be used: the researcher fixes it (exit 2, not a bug)
  INVALID_CONFIG: of('internal', { cliExit: CLI_EXIT.REFUSED }),
  PROJECT_CORRUPT: of('internal', { cliExit: CLI_EXIT.REFUSED }),
};

/** The classification of `code`; an unknown string (a newer peer's code) is classed `invalid`. */
export function classify(code: ErrorCode | string): ErrorClassification {
  return (ERROR_CLASSES as Record<string, ErrorClassification | undefined>)[code] ?? BY_CLASS.invalid;
}

/** HTTP status of `code` (docs/reference/error-codes.md). */
export function httpStatusOf(code: ErrorCode | string): number {
  return classify(code).http;
}

/** gRPC status code of `code` ({@link GRPC_STATUS}). */
export function grpcStatusOf(code: ErrorCode | string): number {
  return classify(code).grpc;
}

/** The MCP form of a tools/call failing with `code`. */
export function mcpErrorOf(code: ErrorCode | string): McpErrorShape {
  return classify(code).mcp;
}

/** Exit code of a CLI command that fails to start with `code` ({@link CLI_EXIT}). */
export function cliExitOf(code: ErrorCode | string): number {
  return classify(code).cliExit;
}

/**
 * HTTP status for each failure code; success is 200, a call waiting for approval 202. The HTTP column of
 * {@link ERROR_CLASSES}, re-exported by src/adapters/http/httpServer.ts.
 */
export const STATUS_BY_CODE: Readonly<Record<ErrorCode, number>> = Object.fromEntries(ERROR_CODES.map((c) => [c, ERROR_CLASSES[c].http])) as Record<
  ErrorCode,
  number
>;
