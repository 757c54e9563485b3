/**
 * What the handlers of one gRPC server share: the options, the sessions each certificate opened, the open
 * Subscribe streams, and the steps every handler takes (the certificate's identity, the caller of a request,
 * the call log line, a unary handler's error mapping).
 */
import type { PeerCertificate } from 'node:tls';
import * as grpc from '@grpc/grpc-js';
import type { AgentContext, Role } from '../../agent/agentContext';
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

/** The verified certificate's identity; a refusal (UNAUTHORIZED: no known role) is audited with the RPC's path. */
export function identity(
  ctx: GrpcServerContext,
  call: { getAuthContext(): { sslPeerCertificate?: PeerCertificate } | null; getPath?(): string },
): CertIdentity {
  const cert = call.getAuthContext()?.sslPeerCertificate;
  try {
    return identityOfCertificate(cert);
  } catch (e) {
    const cn = cert?.subject?.CN;
    ctx.agent.auditRefusal({
      route: `grpc ${call.getPath?.() ?? ''}`.trim(),
      error_code: isToolError(e) ? e.code : 'UNAUTHORIZED',
      client_name: typeof cn === 'string' ? `grpc:${cn}` : undefined,
    });
    throw e;
  }
}

/** The caller of a request: its explicit session (owned by this certificate) or the certificate's implicit one. Errors: UNAUTHORIZED, SESSION_NOT_FOUND, SESSION_FORBIDDEN (another certificate's session), SESSION_EXPIRED, SESSION_LIMIT. */
export function callerOf(ctx: GrpcServerContext, id: CertIdentity, sessionId: string, correlation?: string): Caller {
  const { agent, owners } = ctx;
  const auth = `Bearer ${tokenOf(ctx, id.role)}`;
  let caller: Caller;
  if (sessionId) {
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
    caller = agent.callerFor(sessionId, auth);
  } else {
    caller = agent.implicitCaller(auth, `grpc:${id.name}`, 'CUSTOM');
  }
  return correlation ? { ...caller, correlation_id: correlation.slice(0, 100) } : caller;
}

/** The one-line call log (GrpcOptions.onCall): time, client, tool, gRPC status, outcome and duration. */
export function logCall(ctx: GrpcServerContext, caller: Caller | undefined, name: string, outcome: InvokeOutcome): void {
  const status = outcome.status === 'pending' ? 'PENDING_APPROVAL' : outcome.envelope.success ? 'OK' : 'FAILED';
  ctx.opts.onCall?.(
    `${new Date().toISOString()} ${caller?.client_name ?? 'grpc'} ${name} grpc:${status} ${outcome.envelope.success ? 'ok' : outcome.envelope.error_code} ${outcome.durationMs.toFixed(2)}ms`,
    outcome,
  );
}

/**
 * A unary handler: authenticates the certificate (UNAUTHENTICATED otherwise) and turns ToolErrors into
 * `onError`'s response, or, without `onError`, into INVALID_ARGUMENT with the code in the `error_code` trailer.
 */
export function unary<Req, Res>(ctx: GrpcServerContext, fn: (req: Req, id: CertIdentity) => Promise<Res> | Res, onError?: (e: ToolError) => Res) {
  return (call: grpc.ServerUnaryCall<Req, Res>, callback: grpc.sendUnaryData<Res>) => {
    let id: CertIdentity;
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
