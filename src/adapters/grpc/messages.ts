/**
 * The gRPC messages (proto/marginalia.proto, as loaded with PROTO_OPTIONS) and the conversions between them and
 * the pipeline's shapes: events, call outcomes, refusals, and the `*_json` fields parsed strictly.
 */
import type { InvokeOutcome } from '../../agent/pipeline';
import type { Envelope } from '../../core/envelope';
import { ToolError } from '../../core/errors';
import { parseStrictJsonText } from '../../core/strictJson';
import type { EventRecord } from '../../domain/events';

/** CallTool: a tool call (`arguments_json` an object as JSON text, '' for none). */
export interface CallToolRequest {
  session_id: string;
  tool: string;
  arguments_json: string;
  correlation_id: string;
}
/** The answer of CallTool, Approve and Reject: the envelope with JSON text for data and details. */
export interface CallToolResponse {
  success: boolean;
  data_json: string;
  error: string;
  error_code: string;
  status: 'OK' | 'PENDING_APPROVAL' | 'FAILED';
  request_id: string;
  details_json: string;
}
/** Subscribe: event patterns and the sequence number to replay from (absent: from now). */
export interface SubscribeRequest {
  session_id: string;
  patterns: string[];
  since?: number | null;
}
/** Approve: a pending request, with edited arguments as JSON text ('' for the held ones). */
export interface ApproveRequest {
  session_id: string;
  request_id: string;
  arguments_json: string;
}
/** Reject: a pending request and an optional reason. */
export interface RejectRequest {
  session_id: string;
  request_id: string;
  reason: string;
}
/** OpenSession: the client's name and type, the coder, and an optional trust floor. */
export interface OpenSessionRequest {
  client_name: string;
  client_type: string;
  user: string;
  trust_level: string;
}
/** The answer of OpenSession, CloseSession and Heartbeat. */
export interface SessionResponse {
  success: boolean;
  error: string;
  error_code: string;
  session_id: string;
  client_type: string;
  client_name: string;
  status: string;
  role: string;
  heartbeat_interval_seconds: number;
  timeout_minutes: number;
}

/** The proto Event of an event record (payload as JSON text, metadata flattened). */
export function toProtoEvent(e: EventRecord): Record<string, unknown> {
  return {
    event_id: e.event_id,
    event_type: e.event_type,
    timestamp: e.timestamp,
    aggregate_type: e.aggregate_type,
    aggregate_id: e.aggregate_id,
    caused_by: { ...e.caused_by },
    payload_json: JSON.stringify(e.payload ?? {}),
    sequence_number: e.metadata.sequence_number,
    correlation_id: e.metadata.correlation_id,
  };
}

/** The proto CallToolResponse of a pipeline outcome (the envelope with JSON text for data and details). */
export function toCallResponse(outcome: InvokeOutcome): CallToolResponse {
  return envelopeResponse(outcome.envelope, outcome.status);
}

/** The CallToolResponse of an envelope; `status` pending gives PENDING_APPROVAL with the request id of `data`. */
function envelopeResponse(env: Envelope, status: InvokeOutcome['status']): CallToolResponse {
  if (env.success) {
    const data = env.data as { request_id?: unknown } | null | undefined;
    const requestId = data && typeof data === 'object' && typeof data.request_id === 'string' ? data.request_id : '';
    return {
      success: true,
      data_json: JSON.stringify(env.data ?? null),
      error: '',
      error_code: '',
      status: status === 'pending' ? 'PENDING_APPROVAL' : 'OK',
      request_id: requestId,
      details_json: '',
    };
  }
  return {
    success: false,
    data_json: '',
    error: env.error,
    error_code: env.error_code,
    status: 'FAILED',
    request_id: '',
    details_json: env.details === undefined ? '' : JSON.stringify(env.details),
  };
}

/** The CallToolResponse of a refused request (INVALID_ARGUMENTS, INVALID_JSON, a session refusal). */
export function failure(e: ToolError): CallToolResponse {
  return envelopeResponse({ success: false, error: e.message, error_code: e.code, ...(e.details === undefined ? {} : { details: e.details }) }, 'failed');
}

/**
 * Parses a `*_json` field holding an object; '' gives `empty`. Strict (src/core/strictJson.ts): a lone
 * surrogate escape or a duplicated key is INVALID_JSON like a syntax error, with the byte offset in the field.
 * Errors: INVALID_JSON, INVALID_ARGUMENTS.
 */
export function parseJsonObject(text: string, field: string, empty: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (text === '') return empty;
  const v = parseStrictJsonText(text, field);
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new ToolError('INVALID_ARGUMENTS', `${field} must be a JSON object`);
  return v as Record<string, unknown>;
}
