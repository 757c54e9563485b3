/**
 * What the handlers of one gRPC server share: the options, the sessions each certificate opened, the open
 * Subscribe streams, and the steps every handler takes (the certificate's identity, the caller of a request,
 * the call log line, a unary handler's error mapping).
 */
import type { PeerCertificate } from 'node:tls';
import * as grpc from '@grpc/grpc-js';
import type { AgentContext, Role } from '../../agent/agentContext';
import { RESEARCHER_OWNER } from '../../agent/agentCredentials';
import { bindCaller, logCall as logKitCall } from '../../agent/kit';
import { grpcStatusOf } from '../../agent/errorClasses';
import type { Caller, InvokeOutcome } from '../../agent/pipeline';
import { isToolError, ToolError } from '../../core/errors';
import { identityOfCertificate, type CertIdentity } from './certIdentity';
import type { GrpcOptions } from './grpcAdapter';

/** The state of one running gRPC server, handed to every handler. */
export interface GrpcServerContext {
  readonly opts: GrpcOptions;
  readonly agent: AgentContext;
  /** explicit sessions -> the fingerprint of the certificate that opened them */
  readonly owners: Map<string, string>;
  /** open Subscribe streams by subscription id -> who opened it and how to end it */
  readonly streams: Map<string, { fingerprint: string; end: () => void }>;
}

/** The install's token a certificate role opens sessions with: the reviewer token for `researcher`, else the agent token. */
export function tokenOf(ctx: GrpcServerContext, role: Role): string {
  return role === 'researcher' ? ctx.opts.tokens.reviewer : ctx.opts.tokens.agent;
}

/**
 * Who calls (issue 14 item 3: one credential on every surface): with `authorization: Bearer <token>` in the call's
 * metadata, the credential the token proves, looked up as HTTP looks it up (AgentContext.identify: the reviewer
 * token, the install's agent token or a named agent credential); without it, the verified client certificate.
 * A bearer identity's `fingerprint` is `bearer:<owner>` (the agent's name, or `researcher`), so its streams and
 * sessions belong to the credential, whichever certificate carries the connection.
 */
export interface GrpcIdentity extends CertIdentity {
  /** what the agent layer authenticates: the presented `Bearer <token>`, or the install token of the certificate's role */
  authorization: string;
  /** true when the identity is a bearer token's (sessions then belong to the credential, checked by the agent context) */
  bearer: boolean;
}

/**
 * The caller's identity ({@link GrpcIdentity}); a refusal is audited with the RPC's path. Errors: UNAUTHORIZED (a
 * bearer token that proves nothing, as over HTTP; or no certificate of a known role).
 */
export function identity(
  ctx: GrpcServerContext,
  call: { getAuthContext(): { sslPeerCertificate?: PeerCertificate } | null; getPath?(): string; metadata?: grpc.Metadata },
): GrpcIdentity {
  const cert = call.getAuthContext()?.sslPeerCertificate;
  const presented = call.metadata?.get('authorization')[0];
  const route = `grpc ${call.getPath?.() ?? ''}`.trim();
  if (presented !== undefined) {
    const auth = typeof presented === 'string' ? presented : presented.toString('utf8');
    const who = ctx.agent.identify(auth);
    if (who === null) {
      ctx.agent.auditRefusal({ route, error_code: 'UNAUTHORIZED', client_name: 'grpc:bearer' });
      throw new ToolError('UNAUTHORIZED', 'The bearer token in the metadata is not a credential of this project: send authorization: Bearer <token>');
    }
    const name = who.role === 'researcher' ? RESEARCHER_OWNER : who.agent;
    return { role: who.role, name, fingerprint: `bearer:${name}`, authorization: auth, bearer: true };
  }
  try {
    const id = identityOfCertificate(cert);
    return { ...id, authorization: `Bearer ${tokenOf(ctx, id.role)}`, bearer: false };
  } catch (e) {
    const cn = cert?.subject?.CN;
    ctx.agent.auditRefusal({ route, error_code: isToolError(e) ? e.code : 'UNAUTHORIZED', client_name: typeof cn === 'string' ? `grpc:${cn}` : undefined });
    throw e;
  }
}

/**
 * The caller of a request (the adapter kit's session binding): its explicit session or the identity's implicit one
 * (client name `grpc:<CN>`, or the credential's implicit session shared with every surface). A certificate's
 * explicit session must be one it opened (several certificates of a role share the install's token); a bearer
 * token's is checked by the agent context like HTTP's. Errors: UNAUTHORIZED, SESSION_NOT_FOUND, SESSION_FORBIDDEN,
 * SESSION_EXPIRED, SESSION_LIMIT.
 */
export function callerOf(ctx: GrpcServerContext, id: GrpcIdentity, sessionId: string, correlation?: string): Caller {
  const { agent, owners } = ctx;
  if (sessionId && !id.bearer) {
    const owner = owners.get(sessionId);
    if (owner !== undefined && !agent.sessions.get(sessionId)) owners.delete(sessionId);
    if (owner !== id.fingerprint || !agent.sessions.get(sessionId)) {
      // another certificate's session (SESSION_FORBIDDEN, as on every surface) or none: refused and audited like the agent context's session refusals
      const code = agent.sessions.get(sessionId) ? 'SESSION_FORBIDDEN' : 'SESSION_NOT_FOUND';
      agent.auditRefusal({ route: 'session:resume', error_code: code, session_id: sessionId.slice(0, 100), client_name: `grpc:${id.name}` });
      throw new ToolError(
        code,
        code === 'SESSION_FORBIDDEN'
          ? `Session ${sessionId.slice(0, 100)} belongs to another certificate: use your own session (or none)`
          : `No session ${sessionId.slice(0, 100)} of this certificate: open one with OpenSession, or leave session_id empty`,
      );
    }
  }
  return bindCaller(agent, {
    authorization: id.authorization,
    session_id: sessionId,
    client_name: `grpc:${id.name}`,
    client_type: 'CUSTOM',
    correlation_id: correlation,
  });
}

/** The one-line call log (GrpcOptions.onCall, through the adapter kit): time, client, tool, gRPC status, outcome and duration. */
export function logCall(ctx: GrpcServerContext, caller: Caller | undefined, name: string, outcome: InvokeOutcome): void {
  logKitCall(ctx.opts.onCall, caller, name, `grpc:${grpcStatusWord(outcome)}`, outcome, 'grpc');
}

/** The call-log status word of an outcome: PENDING_APPROVAL, OK or FAILED. */
export function grpcStatusWord(outcome: InvokeOutcome): string {
  return outcome.status === 'pending' ? 'PENDING_APPROVAL' : outcome.envelope.success ? 'OK' : 'FAILED';
}

/**
 * A unary handler: authenticates the certificate (UNAUTHENTICATED otherwise) and turns ToolErrors into
 * `onError`'s response, or, without `onError`, into INVALID_ARGUMENT with the code in the `error_code` trailer.
 */
export function unary<Req, Res>(ctx: GrpcServerContext, fn: (req: Req, id: GrpcIdentity) => Promise<Res> | Res, onError?: (e: ToolError) => Res) {
  return (call: grpc.ServerUnaryCall<Req, Res>, callback: grpc.sendUnaryData<Res>) => {
    let id: GrpcIdentity;
    try {
      id = identity(ctx, call);
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
            callback({ code: grpcStatusOf(e.code), details: e.message, metadata });
          } else {
            ctx.opts.logger.error('gRPC call failed', e);
            callback({ code: grpc.status.INTERNAL, details: 'The call failed unexpectedly; the server log has the details' });
          }
        },
      );
  };
}
