import * as fs from 'node:fs';
import * as path from 'node:path';
import type { PeerCertificate } from 'node:tls';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import type { Envelope } from '../../core/envelope';
import { isToolError, ToolError } from '../../core/errors';
import type { Logger } from '../../core/log';
import { firstInvalidUtf8, parseStrictJsonText, type Utf8Problem } from '../../core/strictJson';
import type { EventRecord } from '../../domain/events';
import type { AgentContext, Role, Tokens } from '../../agent/agentContext';
import type { TrustLevel } from '../../agent/config';
import { TRUST_LEVELS } from '../../agent/config';
import type { Caller, InvokeOutcome, ToolPipeline } from '../../agent/pipeline';
import { CLIENT_TYPES, type ClientType } from '../../agent/sessions';
import { parsePatterns, ResumableSubscription } from '../rest/eventStreams';

/** The proto package and service (proto/marginalia.proto). */
export const GRPC_SERVICE = 'marginalia.v1.Marginalia';
/** Largest message a client may send, bytes (the HTTP server's body limit). */
export const GRPC_MAX_RECEIVE_BYTES = 64 * 1024 * 1024;
/** Most Subscribe streams open at once per server. */
export const MAX_GRPC_STREAMS = 100;
/** While a Subscribe stream is open its session is touched this often, milliseconds. */
export const GRPC_STREAM_TOUCH_MS = 15_000;
/** The certificate roles (subject OU) and what they map to. */
export const CERT_ROLES: readonly Role[] = ['agent', 'researcher'];

/**
 * Where `proto/marginalia.proto` is: beside the bundle (`dist/cli.js`, `dist/extension.js` -> `../proto`)
 * or, when running from source (tests under tsx), three folders up from this file. The vsix ships
 * `proto/**` (.vscodeignore). Errors: a plain Error naming the places looked in.
 */
export function protoPath(): string {
  const candidates = [path.resolve(__dirname, '..', 'proto', 'marginalia.proto'), path.resolve(__dirname, '..', '..', '..', 'proto', 'marginalia.proto')];
  const found = candidates.find((p) => fs.existsSync(p));
  if (!found) throw new Error(`proto/marginalia.proto not found (looked in ${candidates.join(', ')})`);
  return found;
}

/**
 * The options Marginalia loads the proto with (clients should use the same): field names as written
 * (snake_case), 64-bit integers as JS numbers (sequence numbers stay below 2^53), enums as their names,
 * defaults filled in, and the name of the set member of each oneof (`message`) and proto3 optional
 * (`_since`).
 */
export const PROTO_OPTIONS: protoLoader.Options = { keepCase: true, longs: Number, enums: String, defaults: true, oneofs: true };

/** Loads proto/marginalia.proto as a grpc-js package definition. Errors: as {@link protoPath}, or a parse error. */
export function loadMarginaliaProto(): grpc.GrpcObject {
  return grpc.loadPackageDefinition(protoLoader.loadSync(protoPath(), PROTO_OPTIONS));
}

/** The service definition of `marginalia.v1.Marginalia`. */
export function marginaliaService(): grpc.ServiceDefinition {
  const pkg = loadMarginaliaProto() as unknown as { marginalia: { v1: { Marginalia: grpc.ServiceClientConstructor } } };
  return pkg.marginalia.v1.Marginalia.service;
}

/** PEM material of the server side of mutual TLS. */
export interface GrpcTls {
  /** the install's CA certificate: client certificates must chain to it */
  ca: Buffer;
  /** the server certificate (for 127.0.0.1 / localhost) and its private key */
  cert: Buffer;
  key: Buffer;
}

/** Options of {@link startGrpcServer}. */
export interface GrpcOptions {
  agent: AgentContext;
  /** only for the tool listing (ListTools); every call goes through `agent` */
  pipeline: ToolPipeline;
  /** the install's tokens: a certificate's role opens sessions with the matching token, so the agent layer's rules apply unchanged */
  tokens: Tokens;
  tls: GrpcTls;
  /** 0 picks a free port */
  port: number;
  /** loopback only: 127.0.0.1 (default), ::1 or localhost */
  host?: string;
  logger: Logger;
  /** called once per call, for the one-line call log */
  onCall?: (line: string, outcome: InvokeOutcome) => void;
  /** how often an open Subscribe stream touches its session (default {@link GRPC_STREAM_TOUCH_MS}) */
  touchMs?: number;
}

/** A running gRPC server. */
export interface RunningGrpcServer {
  readonly port: number;
  readonly host: string;
  /** open Subscribe streams */
  readonly streams: number;
  /** ends every stream and stops the server (forcibly after 2 s) */
  close(): Promise<void>;
}

/** Who a verified client certificate names. */
export interface CertIdentity {
  role: Role;
  /** the subject CN */
  name: string;
  /** SHA-256 fingerprint of the certificate: explicit sessions belong to it */
  fingerprint: string;
}

/**
 * The identity of a client certificate that TLS has already verified against the install's CA: its
 * subject OU must be `agent` or `researcher`, its CN names the client (1-64 characters).
 * Errors: UNAUTHORIZED (no certificate, no or unknown role, no name).
 */
export function identityOfCertificate(cert: PeerCertificate | undefined | null): CertIdentity {
  if (!cert || !cert.subject || Object.keys(cert).length === 0) throw new ToolError('UNAUTHORIZED', 'No client certificate: the gRPC adapter requires mutual TLS (marginalia certs --client NAME --role agent|researcher)');
  const ou = (cert.subject as unknown as Record<string, string | string[] | undefined>).OU;
  const roles = (Array.isArray(ou) ? ou : ou === undefined ? [] : [ou]).filter((r): r is Role => (CERT_ROLES as readonly string[]).includes(r));
  if (roles.length !== 1) throw new ToolError('UNAUTHORIZED', `The client certificate must carry exactly one role in its subject OU (${CERT_ROLES.join(' or ')})`);
  const cn = (cert.subject as unknown as Record<string, string | string[] | undefined>).CN;
  const name = Array.isArray(cn) ? cn[0] : cn;
  if (!name || name.length > 64) throw new ToolError('UNAUTHORIZED', 'The client certificate must name the client in its subject CN (1-64 characters)');
  return { role: roles[0] as Role, name, fingerprint: cert.fingerprint256 };
}

// ---- message shapes (proto/marginalia.proto, as loaded with PROTO_OPTIONS) ------------------------------

interface CallToolRequest {
  session_id: string;
  tool: string;
  arguments_json: string;
  correlation_id: string;
}
interface CallToolResponse {
  success: boolean;
  data_json: string;
  error: string;
  error_code: string;
  status: 'OK' | 'PENDING_APPROVAL' | 'FAILED';
  request_id: string;
  details_json: string;
}
interface SubscribeRequest {
  session_id: string;
  patterns: string[];
  since?: number | null;
}
interface ApproveRequest {
  session_id: string;
  request_id: string;
  arguments_json: string;
}
interface RejectRequest {
  session_id: string;
  request_id: string;
  reason: string;
}
interface OpenSessionRequest {
  client_name: string;
  client_type: string;
  user: string;
  trust_level: string;
}
interface SessionResponse {
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
    caused_by: { session_id: e.caused_by.session_id, client_type: e.caused_by.client_type, user: e.caused_by.user },
    payload_json: JSON.stringify(e.payload ?? {}),
    sequence_number: e.metadata.sequence_number,
    correlation_id: e.metadata.correlation_id,
  };
}

/** The proto CallToolResponse of a pipeline outcome (the envelope with JSON text for data and details). */
export function toCallResponse(outcome: InvokeOutcome): CallToolResponse {
  return envelopeResponse(outcome.envelope, outcome.status);
}

function envelopeResponse(env: Envelope, status: InvokeOutcome['status']): CallToolResponse {
  if (env.success) {
    const data = env.data as { request_id?: unknown } | null | undefined;
    const requestId = data && typeof data === 'object' && typeof data.request_id === 'string' ? data.request_id : '';
    return { success: true, data_json: JSON.stringify(env.data ?? null), error: '', error_code: '', status: status === 'pending' ? 'PENDING_APPROVAL' : 'OK', request_id: requestId, details_json: '' };
  }
  return { success: false, data_json: '', error: env.error, error_code: env.error_code, status: 'FAILED', request_id: '', details_json: env.details === undefined ? '' : JSON.stringify(env.details) };
}

function failure(e: ToolError): CallToolResponse {
  return envelopeResponse({ success: false, error: e.message, error_code: e.code, ...(e.details === undefined ? {} : { details: e.details }) }, 'failed');
}

/**
 * Parses a `*_json` field holding an object; '' gives `empty`. Strict (src/core/strictJson.ts): a lone
 * surrogate escape or a duplicated key is INVALID_JSON like a syntax error, with the byte offset in the field.
 * Errors: INVALID_JSON, INVALID_ARGUMENTS.
 */
function parseJsonObject(text: string, field: string, empty: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (text === '') return empty;
  const v = parseStrictJsonText(text, field);
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new ToolError('INVALID_ARGUMENTS', `${field} must be a JSON object`);
  return v as Record<string, unknown>;
}

/** Marks a request whose raw bytes held a string field that is not UTF-8 (see {@link strictUtf8Service}). */
const BAD_UTF8 = Symbol('marginalia.grpc.invalidUtf8');

/** The first string field of a protobuf message whose bytes are not valid UTF-8. */
export interface InvalidStringField {
  /** the field's name in the proto */
  field: string;
  /** byte offset of the ill-formed sequence within the field's value */
  offset: number;
  /** byte offset of the same byte within the whole message */
  messageOffset: number;
  problem: string;
}

/**
 * Walks the protobuf wire format of one message (protobuf encoding guide: varint tags, wire types 0, 1, 2,
 * 5) and returns the first field of `stringFields` (field number -> name; repeated fields too) whose bytes
 * are not well-formed UTF-8 (proto3 requires string fields to be UTF-8; protobufjs, which grpc-js's
 * proto-loader decodes with, would put U+FFFD instead). Other fields are skipped, not decoded. Returns
 * undefined when every string is UTF-8, and also for a message it cannot walk (the decoder then reports it).
 */
export function firstInvalidStringField(bytes: Uint8Array, stringFields: ReadonlyMap<number, string>): InvalidStringField | undefined {
  let i = 0;
  const n = bytes.length;
  const varint = (): number | undefined => {
    let v = 0;
    let mul = 1;
    for (let k = 0; k < 10 && i < n; k++) {
      const b = bytes[i++] as number;
      v += (b & 0x7f) * mul;
      if (b < 0x80) return v;
      mul *= 128;
    }
    return undefined;
  };
  while (i < n) {
    const tag = varint();
    if (tag === undefined) return undefined;
    const wire = tag % 8;
    const number = Math.floor(tag / 8);
    if (wire === 0) {
      if (varint() === undefined) return undefined;
    } else if (wire === 1) i += 8;
    else if (wire === 5) i += 4;
    else if (wire === 2) {
      const len = varint();
      if (len === undefined || i + len > n) return undefined;
      const name = stringFields.get(number);
      if (name !== undefined) {
        const p: Utf8Problem | undefined = firstInvalidUtf8(bytes.subarray(i, i + len));
        if (p) return { field: name, offset: p.offset, messageOffset: i + p.offset, problem: p.problem };
      }
      i += len;
    } else return undefined;
  }
  return undefined;
}

/**
 * `service` with each method's request deserializer checking the raw bytes first
 * ({@link firstInvalidStringField} over the request type's string fields): a request with a string that is
 * not UTF-8 is not decoded but marked, and {@link refuseInvalidUtf8} answers it INVALID_ARGUMENT (trailer
 * `error_code: INVALID_JSON`) before any handler runs.
 */
export function strictUtf8Service(service: grpc.ServiceDefinition): grpc.ServiceDefinition {
  const out: Record<string, grpc.MethodDefinition<unknown, unknown>> = {};
  for (const [name, def] of Object.entries(service)) {
    const type = (def as unknown as { requestType?: { type?: { field?: { name: string; number: number; type: string }[] } } }).requestType?.type;
    const fields = new Map((type?.field ?? []).filter((f) => f.type === 'TYPE_STRING').map((f) => [f.number, f.name] as const));
    out[name] = {
      ...def,
      requestDeserialize: (buf: Buffer) => {
        const bad = fields.size > 0 ? firstInvalidStringField(buf, fields) : undefined;
        if (!bad) return def.requestDeserialize(buf);
        return {
          [BAD_UTF8]: new ToolError('INVALID_JSON', `${bad.field} is not valid UTF-8: at byte offset ${bad.offset} of the field (${bad.messageOffset} of the message): ${bad.problem}. Strings must be UTF-8.`, {
            reason: 'invalid_utf8',
            field: bad.field,
            byte_offset: bad.offset,
            message_byte_offset: bad.messageOffset,
          }),
        };
      },
    };
  }
  return out as grpc.ServiceDefinition;
}

/**
 * `handlers` with every call whose request {@link strictUtf8Service} marked refused first: INVALID_ARGUMENT
 * with the message and an `error_code: INVALID_JSON` trailer (unary calls through the callback, streams by
 * their error), audited as failed; nothing runs.
 */
function refuseInvalidUtf8(handlers: grpc.UntypedServiceImplementation, agent: AgentContext): grpc.UntypedServiceImplementation {
  const out: grpc.UntypedServiceImplementation = {};
  for (const [name, handler] of Object.entries(handlers)) {
    out[name] = ((call: { request?: Record<PropertyKey, unknown>; emit(event: 'error', e: unknown): boolean; getPath?(): string }, callback?: grpc.sendUnaryData<unknown>) => {
      const bad = call.request?.[BAD_UTF8];
      if (bad instanceof ToolError) {
        agent.auditRefusal({ route: `grpc ${call.getPath?.() ?? name}`, error_code: bad.code, decision: 'failed' });
        const metadata = new grpc.Metadata();
        metadata.set('error_code', bad.code);
        const error = { code: grpc.status.INVALID_ARGUMENT, details: bad.message, metadata };
        if (callback) callback(error);
        else call.emit('error', error);
        return;
      }
      return (handler as (c: unknown, cb?: unknown) => unknown)(call, callback);
    }) as grpc.UntypedHandleCall;
  }
  return out;
}

/**
 * Starts the gRPC adapter (proto/marginalia.proto, service `marginalia.v1.Marginalia`) on
 * `host:port` with mutual TLS: the server presents `tls.cert` and requires a client certificate signed by
 * `tls.ca` (a client without one, or with one from another CA, fails the TLS handshake and never reaches
 * a handler). The certificate's subject OU is its role: `agent` calls open sessions with the agent token,
 * `researcher` with the reviewer token, so the agent context's rules apply unchanged (only the researcher
 * may approve; agents' Suggest/Require calls wait). Calls without a `session_id` run in one implicit
 * session per certificate name and role (client name `grpc:<CN>`, client type CUSTOM); explicit sessions
 * (OpenSession) belong to the certificate that opened them. Every call goes through `agent`
 * (AgentContext.call/approve/reject), so sessions, validation, rate limits, trust and audit all apply.
 *
 * Only loopback hosts are accepted. Resolves once bound; rejects with the bind error (e.g. the port is in use).
 */
export async function startGrpcServer(opts: GrpcOptions): Promise<RunningGrpcServer> {
  const host = opts.host ?? '127.0.0.1';
  if (!['127.0.0.1', '::1', 'localhost'].includes(host)) throw new Error(`Refusing to listen on ${host}: Marginalia serves loopback addresses only`);
  const { agent, pipeline, tokens } = opts;
  const server = new grpc.Server({ 'grpc.max_receive_message_length': GRPC_MAX_RECEIVE_BYTES, 'grpc.max_send_message_length': -1 });
  /** explicit sessions -> the fingerprint of the certificate that opened them */
  const owners = new Map<string, string>();
  /** open Subscribe streams by subscription id -> who opened it and how to end it */
  const streams = new Map<string, { fingerprint: string; end: () => void }>();

  const tokenOf = (role: Role) => (role === 'researcher' ? tokens.reviewer : tokens.agent);
  /** The verified certificate's identity; a refusal (UNAUTHORIZED: no known role) is audited with the RPC's path. */
  const identity = (call: { getAuthContext(): { sslPeerCertificate?: PeerCertificate } | null; getPath?(): string }): CertIdentity => {
    const cert = call.getAuthContext()?.sslPeerCertificate;
    try {
      return identityOfCertificate(cert);
    } catch (e) {
      const cn = cert?.subject?.CN;
      agent.auditRefusal({ route: `grpc ${call.getPath?.() ?? ''}`.trim(), error_code: isToolError(e) ? e.code : 'UNAUTHORIZED', client_name: typeof cn === 'string' ? `grpc:${cn}` : undefined });
      throw e;
    }
  };

  /** The caller of a request: its explicit session (owned by this certificate) or the certificate's implicit one. Errors: UNAUTHORIZED, SESSION_NOT_FOUND, SESSION_EXPIRED, SESSION_LIMIT. */
  const callerOf = (id: CertIdentity, sessionId: string, correlation?: string): Caller => {
    const auth = `Bearer ${tokenOf(id.role)}`;
    let caller: Caller;
    if (sessionId) {
      const owner = owners.get(sessionId);
      if (owner !== undefined && !agent.sessions.get(sessionId)) owners.delete(sessionId);
      if (owner !== id.fingerprint || !agent.sessions.get(sessionId)) {
        // another certificate's session (or none): refused and audited like the agent context's session refusals
        agent.auditRefusal({ route: 'session:resume', error_code: 'SESSION_NOT_FOUND', session_id: sessionId.slice(0, 100), client_name: `grpc:${id.name}` });
        throw new ToolError('SESSION_NOT_FOUND', `No session ${sessionId.slice(0, 100)} of this certificate: open one with OpenSession, or leave session_id empty`);
      }
      caller = agent.callerFor(sessionId, auth);
    } else {
      caller = agent.implicitCaller(auth, `grpc:${id.name}`, 'CUSTOM');
    }
    return correlation ? { ...caller, correlation_id: correlation.slice(0, 100) } : caller;
  };

  const log = (caller: Caller | undefined, name: string, outcome: InvokeOutcome) => {
    const status = outcome.status === 'pending' ? 'PENDING_APPROVAL' : outcome.envelope.success ? 'OK' : 'FAILED';
    opts.onCall?.(`${new Date().toISOString()} ${caller?.client_name ?? 'grpc'} ${name} grpc:${status} ${outcome.envelope.success ? 'ok' : outcome.envelope.error_code} ${outcome.durationMs.toFixed(2)}ms`, outcome);
  };

  /**
   * A unary handler: authenticates the certificate (UNAUTHENTICATED otherwise) and turns ToolErrors into
   * `onError`'s response, or, without `onError`, into INVALID_ARGUMENT with the code in the `error_code` trailer.
   */
  function unary<Req, Res>(fn: (req: Req, id: CertIdentity) => Promise<Res> | Res, onError?: (e: ToolError) => Res) {
    return (call: grpc.ServerUnaryCall<Req, Res>, callback: grpc.sendUnaryData<Res>) => {
      let id: CertIdentity;
      try {
        id = identity(call);
      } catch (e) {
        callback({ code: grpc.status.UNAUTHENTICATED, details: (e as Error).message });
        return;
      }
      Promise.resolve()
        .then(() => fn(call.request, id))
        .then(
          (res) => callback(null, res),
          (e: unknown) => {
            if (isToolError(e) && onError) callback(null, onError(e));
            else if (isToolError(e)) {
              const metadata = new grpc.Metadata();
              metadata.set('error_code', e.code);
              callback({ code: grpc.status.INVALID_ARGUMENT, details: e.message, metadata });
            } else {
              opts.logger.error('gRPC call failed', e);
              callback({ code: grpc.status.INTERNAL, details: 'The call failed unexpectedly; the server log has the details' });
            }
          },
        );
    };
  }

  const sessionResponse = (sessionId: string, role: string): SessionResponse => {
    const s = agent.sessions.get(sessionId);
    return {
      success: true,
      error: '',
      error_code: '',
      session_id: sessionId,
      client_type: s?.client_type ?? '',
      client_name: s?.client_name ?? '',
      status: s?.status ?? 'ENDED',
      role,
      heartbeat_interval_seconds: agent.config.sessions.heartbeat_interval_seconds,
      timeout_minutes: agent.config.sessions.timeout_minutes,
    };
  };
  const sessionFailure = (e: ToolError): SessionResponse => ({ success: false, error: e.message, error_code: e.code, session_id: '', client_type: '', client_name: '', status: '', role: '', heartbeat_interval_seconds: 0, timeout_minutes: 0 });
  /** An explicit session of this certificate. Errors: SESSION_NOT_FOUND, INVALID_ARGUMENTS. */
  const ownSession = (sessionId: string, id: CertIdentity): string => {
    if (!sessionId) throw new ToolError('INVALID_ARGUMENTS', 'session_id is required (from OpenSession)');
    if (owners.get(sessionId) !== id.fingerprint || !agent.sessions.get(sessionId)) throw new ToolError('SESSION_NOT_FOUND', `No session ${sessionId.slice(0, 100)} of this certificate`);
    return sessionId;
  };

  const handlers: grpc.UntypedServiceImplementation = {
    ListTools: unary<Record<string, never>, { tools: unknown[] }>(
      () => ({
        tools: pipeline.listTools().map((t) => ({ name: t.name, title: t.title, description: t.description, group: t.group, effect: t.effect, trust_category: t.trust_category, input_schema_json: JSON.stringify(t.inputSchema) })),
      }),
    ),

    CallTool: unary<CallToolRequest, CallToolResponse>(async (req, id) => {
      const caller = callerOf(id, req.session_id, req.correlation_id);
      if (!req.tool) throw new ToolError('INVALID_ARGUMENTS', 'tool is required (a name from ListTools)');
      const args = parseJsonObject(req.arguments_json, 'arguments_json', {});
      const outcome = await agent.call(caller, req.tool, args);
      log(caller, req.tool, outcome);
      return toCallResponse(outcome);
    }, failure),

    Approve: unary<ApproveRequest, CallToolResponse>(async (req, id) => {
      const caller = callerOf(id, req.session_id);
      if (!req.request_id) throw new ToolError('INVALID_ARGUMENTS', 'request_id is required');
      const edited = parseJsonObject(req.arguments_json, 'arguments_json', undefined);
      const outcome = await agent.approve(caller, req.request_id, edited);
      log(caller, outcome.tool === 'approve' ? 'approve' : `approve:${outcome.tool}`, outcome);
      const res = toCallResponse(outcome);
      return { ...res, request_id: req.request_id };
    }, failure),

    Reject: unary<RejectRequest, CallToolResponse>((req, id) => {
      const caller = callerOf(id, req.session_id);
      if (!req.request_id) throw new ToolError('INVALID_ARGUMENTS', 'request_id is required');
      const outcome = agent.reject(caller, req.request_id, req.reason ? req.reason.slice(0, 2000) : undefined);
      log(caller, 'reject', outcome);
      return { ...toCallResponse(outcome), request_id: req.request_id };
    }, failure),

    ListApprovals: unary<{ status: string }, { approvals: unknown[] }>(
      (req) => {
        const valid = ['pending', 'completed', 'failed', 'rejected'] as const;
        if (req.status && !(valid as readonly string[]).includes(req.status)) throw new ToolError('INVALID_ARGUMENTS', `status must be one of ${valid.join(', ')}`);
        const list = agent.listApprovals((req.status || undefined) as (typeof valid)[number] | undefined);
        return {
          approvals: list.map((a) => ({
            request_id: a.request_id,
            tool: a.tool,
            arguments_json: a.arguments,
            session_id: a.session_id,
            client_type: a.client_type,
            client_name: a.client_name,
            user: a.user,
            trust_level: a.trust_level,
            description: a.description,
            status: a.status,
            created_at: a.created_at,
            expires_at: a.expires_at,
            decided_at: a.decided_at ?? '',
            decided_by: a.decided_by ?? '',
            reason: a.reason ?? '',
            result_json: a.result ?? '',
            error_code: a.error_code ?? '',
          })),
        };
      },
    ),

    OpenSession: unary<OpenSessionRequest, SessionResponse>((req, id) => {
      const types = CLIENT_TYPES.filter((t) => t !== 'LOCAL_UI');
      const clientType = (req.client_type || 'CUSTOM') as ClientType;
      if (!(types as readonly string[]).includes(clientType)) throw new ToolError('INVALID_ARGUMENTS', `client_type must be one of ${types.join(', ')}`);
      if (req.trust_level && !(TRUST_LEVELS as readonly string[]).includes(req.trust_level)) throw new ToolError('INVALID_ARGUMENTS', `trust_level must be one of ${TRUST_LEVELS.join(', ')}`);
      const name = (req.client_name || `grpc:${id.name}`).slice(0, 100);
      const { session } = agent.openSession({
        authorization: `Bearer ${tokenOf(id.role)}`,
        client_type: clientType,
        client_name: name,
        user: req.user ? req.user.slice(0, 100) : undefined,
        trust_level: (req.trust_level || undefined) as TrustLevel | undefined,
      });
      owners.set(session.session_id, id.fingerprint);
      return sessionResponse(session.session_id, id.role);
    }, sessionFailure),

    CloseSession: unary<{ session_id: string }, SessionResponse>((req, id) => {
      const sid = ownSession(req.session_id, id);
      const res = sessionResponse(sid, id.role);
      agent.sessions.destroy(sid, 'client_disconnected');
      owners.delete(sid);
      return { ...res, status: 'ENDED' };
    }, sessionFailure),

    Heartbeat: unary<{ session_id: string }, SessionResponse>((req, id) => {
      const sid = ownSession(req.session_id, id);
      agent.sessions.heartbeat(sid);
      return sessionResponse(sid, id.role);
    }, sessionFailure),

    Unsubscribe: (call: grpc.ServerUnaryCall<{ subscription_id: string }, { subscription_id: string }>, callback: grpc.sendUnaryData<{ subscription_id: string }>) => {
      let id: CertIdentity;
      try {
        id = identity(call);
      } catch (e) {
        callback({ code: grpc.status.UNAUTHENTICATED, details: (e as Error).message });
        return;
      }
      const s = streams.get(call.request.subscription_id);
      if (!s || s.fingerprint !== id.fingerprint) {
        callback({ code: grpc.status.NOT_FOUND, details: `No subscription ${call.request.subscription_id.slice(0, 100)} of this certificate` });
        return;
      }
      s.end();
      callback(null, { subscription_id: call.request.subscription_id });
    },

    Subscribe: (call: grpc.ServerWritableStream<SubscribeRequest, Record<string, unknown>>) => {
      const refuse = (code: grpc.status, e: ToolError | Error) => {
        const metadata = new grpc.Metadata();
        if (isToolError(e)) metadata.set('error_code', e.code);
        call.emit('error', { code, details: e.message, metadata });
      };
      let id: CertIdentity;
      let caller: Caller;
      let patterns: string[];
      try {
        id = identity(call);
      } catch (e) {
        refuse(grpc.status.UNAUTHENTICATED, e as Error);
        return;
      }
      try {
        caller = callerOf(id, call.request.session_id);
        agent.sessions.touch(caller.session_id);
        patterns = parsePatterns(call.request.patterns);
        if (streams.size >= MAX_GRPC_STREAMS) throw new ToolError('SESSION_LIMIT', `At most ${MAX_GRPC_STREAMS} event streams may be open at once; close one first`);
      } catch (e) {
        if (!isToolError(e)) throw e;
        const code = e.code === 'SESSION_LIMIT' ? grpc.status.RESOURCE_EXHAUSTED : e.code === 'INVALID_ARGUMENTS' ? grpc.status.INVALID_ARGUMENT : grpc.status.UNAUTHENTICATED;
        refuse(code, e);
        return;
      }
      const since = call.request.since;
      const from = since === undefined || since === null ? agent.headSeq() : Number(since);
      let ended = false;
      const write = (msg: Record<string, unknown>): boolean => {
        if (ended || call.cancelled) return false;
        return call.write(msg);
      };
      const sub = new ResumableSubscription(
        agent.hub,
        patterns,
        from,
        {
          event: (e) => write({ event: toProtoEvent(e) }),
          overflow: (n) => void write({ overflow: { last_delivered_seq: n.last_delivered_seq, dropped: n.dropped } }),
        },
        agent.config.events.default_subscriptions,
      );
      const session = agent.sessions.get(caller.session_id);
      const record = { subscription_id: sub.id, event_patterns: [...sub.effectivePatterns], created_at: new Date().toISOString() };
      session?.subscriptions.push(record);
      const onDrain = () => sub.resume();
      call.on('drain', onDrain);
      const touch = setInterval(() => {
        // an open stream is activity; a session that ended (closed, expired) ends its streams
        try {
          agent.sessions.touch(caller.session_id);
        } catch {
          end(true);
        }
      }, opts.touchMs ?? GRPC_STREAM_TOUCH_MS);
      touch.unref();
      const end = (finish: boolean) => {
        if (ended) return;
        ended = true;
        clearInterval(touch);
        sub.close();
        streams.delete(sub.id);
        call.off('drain', onDrain);
        if (session) session.subscriptions = session.subscriptions.filter((s) => s !== record);
        if (finish && !call.cancelled) call.end();
      };
      streams.set(sub.id, { fingerprint: id.fingerprint, end: () => end(true) });
      call.on('cancelled', () => end(false));
      call.on('close', () => end(false));
      call.on('error', () => end(false));
      // the client learns the subscription id before replayed events arrive
      write({ subscribed: { subscription_id: sub.id, patterns: [...sub.effectivePatterns], from_sequence: from, session_id: caller.session_id } });
      sub.open();
    },
  };

  server.addService(strictUtf8Service(marginaliaService()), refuseInvalidUtf8(handlers, agent));
  const credentials = grpc.ServerCredentials.createSsl(opts.tls.ca, [{ private_key: opts.tls.key, cert_chain: opts.tls.cert }], true);
  const address = host === '::1' ? `[::1]:${opts.port}` : `${host}:${opts.port}`;
  const port = await new Promise<number>((resolve, reject) => server.bindAsync(address, credentials, (err, p) => (err ? reject(err) : resolve(p))));
  return {
    port,
    host,
    get streams() {
      return streams.size;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of [...streams.values()]) s.end();
        const force = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, 2000);
        force.unref();
        server.tryShutdown(() => {
          clearTimeout(force);
          resolve();
        });
      }),
  };
}
