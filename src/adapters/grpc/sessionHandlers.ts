/** The gRPC handlers of explicit sessions: OpenSession, CloseSession, Heartbeat (a session belongs to the certificate that opened it). */
import type * as grpc from '@grpc/grpc-js';
import type { TrustLevel } from '../../agent/config';
import { TRUST_LEVELS } from '../../agent/config';
import { CLIENT_TYPES, type ClientType } from '../../agent/sessions';
import { ToolError } from '../../core/errors';
import type { OpenSessionRequest, SessionResponse } from './messages';
import { unary, type GrpcIdentity, type GrpcServerContext } from './serverContext';

/** The SessionResponse of session `sessionId` as it is now (status ENDED when it is gone) for a certificate of `role`. */
function sessionResponse(ctx: GrpcServerContext, sessionId: string, role: string): SessionResponse {
  const agent = ctx.agent;
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
}

/** The SessionResponse of a refused session request. */
const sessionFailure = (e: ToolError): SessionResponse => ({
  success: false,
  error: e.message,
  error_code: e.code,
  session_id: '',
  client_type: '',
  client_name: '',
  status: '',
  role: '',
  heartbeat_interval_seconds: 0,
  timeout_minutes: 0,
});

/**
 * An explicit session of this caller: a certificate's own (the one that opened it), or, for a bearer token, one its
 * credential opened on any surface (AgentContext checks it, audited). Errors: SESSION_NOT_FOUND, SESSION_FORBIDDEN
 * (another certificate's or credential's), UNAUTHORIZED, INVALID_ARGUMENTS (none given).
 */
function ownSession(ctx: GrpcServerContext, sessionId: string, id: GrpcIdentity): string {
  if (!sessionId) throw new ToolError('INVALID_ARGUMENTS', 'session_id is required (from OpenSession)');
  if (id.bearer) {
    ctx.agent.callerFor(sessionId, id.authorization);
    return sessionId;
  }
  if (!ctx.agent.sessions.get(sessionId)) throw new ToolError('SESSION_NOT_FOUND', `No session ${sessionId.slice(0, 100)} of this certificate`);
  if (ctx.owners.get(sessionId) !== id.fingerprint)
    throw new ToolError('SESSION_FORBIDDEN', `Session ${sessionId.slice(0, 100)} belongs to another certificate`);
  return sessionId;
}

/** The handlers of explicit sessions; a refusal is a SessionResponse with `success: false`. */
export function sessionHandlers(ctx: GrpcServerContext): grpc.UntypedServiceImplementation {
  const agent = ctx.agent;
  return {
    OpenSession: unary<OpenSessionRequest, SessionResponse>(
      ctx,
      (req, id) => {
        const types = CLIENT_TYPES.filter((t) => t !== 'LOCAL_UI');
        const clientType = (req.client_type || 'CUSTOM') as ClientType;
        if (!(types as readonly string[]).includes(clientType)) throw new ToolError('INVALID_ARGUMENTS', `client_type must be one of ${types.join(', ')}`);
        if (req.trust_level && !(TRUST_LEVELS as readonly string[]).includes(req.trust_level))
          throw new ToolError('INVALID_ARGUMENTS', `trust_level must be one of ${TRUST_LEVELS.join(', ')}`);
        const name = (req.client_name || `grpc:${id.name}`).slice(0, 100);
        const { session } = agent.openSession({
          authorization: id.authorization,
          client_type: clientType,
          client_name: name,
          user: req.user ? req.user.slice(0, 100) : undefined,
          trust_level: (req.trust_level || undefined) as TrustLevel | undefined,
        });
        ctx.owners.set(session.session_id, id.fingerprint);
        return sessionResponse(ctx, session.session_id, id.role);
      },
      sessionFailure,
    ),

    CloseSession: unary<{ session_id: string }, SessionResponse>(
      ctx,
      (req, id) => {
        const sid = ownSession(ctx, req.session_id, id);
        const res = sessionResponse(ctx, sid, id.role);
        agent.sessions.destroy(sid, 'client_disconnected');
        ctx.owners.delete(sid);
        return { ...res, status: 'ENDED' };
      },
      sessionFailure,
    ),

    Heartbeat: unary<{ session_id: string }, SessionResponse>(
      ctx,
      (req, id) => {
        const sid = ownSession(ctx, req.session_id, id);
        agent.sessions.heartbeat(sid);
        return sessionResponse(ctx, sid, id.role);
      },
      sessionFailure,
    ),
  };
}
