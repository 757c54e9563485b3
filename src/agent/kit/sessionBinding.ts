/**
 * Session binding (adapter kit, issue 14 items 3 and 12): which session a call belongs to, given the credential it
 * presented, an explicit session id (if any) and the client name it states. One function for every surface, so a
 * session id seen in an event grants nothing anywhere (403 SESSION_FORBIDDEN, audited by the agent context).
 */
import { ToolError } from '../../core/errors';
import type { AgentContext } from '../agentContext';
import type { Caller } from '../pipeline';
import { CLIENT_TYPES, type ClientType } from '../sessions';

/** The client types a remote client may state (every ClientType but LOCAL_UI, which is VS Code's own). */
export const REMOTE_CLIENT_TYPES: readonly ClientType[] = CLIENT_TYPES.filter((t) => t !== 'LOCAL_UI');

/** What a request says about who it is. Strings are cut to the lengths sessions keep (client, user: 100; model: 200). */
export interface BindRequest {
  /** the raw `Authorization` value (`Bearer <token>`) or the bare token; undefined: none presented */
  authorization: string | undefined;
  /** an explicit session (`X-Marginalia-Session`, a gRPC `session_id`); empty or undefined: the credential's implicit session */
  session_id?: string;
  /** the client's name (`X-Marginalia-Client`); labels the implicit session when it is created */
  client_name: string;
  /** the client type of a new implicit session (default REST_CLIENT) */
  client_type?: ClientType;
  /** an explicit coder (`X-Marginalia-User`) */
  user?: string;
  /** the model the client states (`X-Marginalia-Model`) */
  model?: string;
  /** ties the call's events together (`X-Correlation-Id`) */
  correlation_id?: string;
}

/**
 * The caller of a request (AgentContext.callerFor / implicitCaller): the explicit session when one is named (its
 * credential must be the one presented), else the credential's one implicit session, whatever client name it
 * states. Errors: UNAUTHORIZED (no or a wrong token), SESSION_NOT_FOUND, SESSION_FORBIDDEN (another credential's
 * session), SESSION_EXPIRED, SESSION_LIMIT; each audited by the agent context.
 */
export function bindCaller(agent: AgentContext, req: BindRequest): Caller {
  const caller = req.session_id
    ? agent.callerFor(req.session_id, req.authorization)
    : agent.implicitCaller(
        req.authorization,
        req.client_name.slice(0, 100),
        req.client_type ?? 'REST_CLIENT',
        req.user?.slice(0, 100),
        req.model?.slice(0, 200),
      );
  const correlation = req.correlation_id?.slice(0, 100);
  return correlation ? { ...caller, correlation_id: correlation } : caller;
}

/** `text` as a remote client type, or `fallback` when absent (empty). Errors: INVALID_ARGUMENTS (not one of {@link REMOTE_CLIENT_TYPES}). */
export function remoteClientType(text: string | undefined, fallback: ClientType): ClientType {
  if (!text) return fallback;
  if (!(REMOTE_CLIENT_TYPES as readonly string[]).includes(text))
    throw new ToolError('INVALID_ARGUMENTS', `client_type must be one of ${REMOTE_CLIENT_TYPES.join(', ')}`);
  return text as ClientType;
}
