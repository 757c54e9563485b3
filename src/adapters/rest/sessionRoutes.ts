/** The REST adapter's session routes: `POST /session/create|destroy|heartbeat`. */
import type express from 'express';
import type { Request } from 'express';
import { ok } from '../../core/envelope';
import { ToolError } from '../../core/errors';
import { TRUST_LEVELS, type TrustLevel } from '../../agent/config';
import { CLIENT_TYPES, type ClientType } from '../../agent/sessions';
import { send } from '../http/httpServer';
import { RESOURCE_URIS, type RestKit } from './restKit';

/** `POST /session/create|destroy|heartbeat`. */
export function mountSessions(app: express.Express, kit: RestKit): void {
  const { agent, pipeline, route, opts, json } = kit;
  // ---- sessions ----------------------------------------------------------------------------------

  const bodyOf = (req: Request): Record<string, unknown> => {
    const body: unknown = req.body ?? {};
    if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new ToolError('INVALID_ARGUMENTS', 'The body must be a JSON object');
    return body as Record<string, unknown>;
  };
  const sessionIdOf = (req: Request): string => {
    const body = bodyOf(req);
    const extra = Object.keys(body).filter((k) => k !== 'session_id');
    if (extra.length > 0) throw new ToolError('INVALID_ARGUMENTS', `Unexpected body member(s) ${extra.join(', ')}: send {"session_id": "..."}`);
    const id = body.session_id ?? req.get('x-marginalia-session');
    if (typeof id !== 'string' || !id) throw new ToolError('INVALID_ARGUMENTS', 'session_id is required (a string from POST /session/create)');
    return id;
  };

  app.post(
    '/session/create',
    ...json,
    route((req, res) => {
      const body = bodyOf(req);
      const allowed = ['client_type', 'client_name', 'user', 'trust_level', 'model'];
      const extra = Object.keys(body).filter((k) => !allowed.includes(k));
      if (extra.length > 0) throw new ToolError('INVALID_ARGUMENTS', `Unexpected body member(s) ${extra.join(', ')}; send ${allowed.join(', ')}`);
      const types = CLIENT_TYPES.filter((t) => t !== 'LOCAL_UI');
      const clientType = body.client_type ?? 'REST_CLIENT';
      if (typeof clientType !== 'string' || !(types as readonly string[]).includes(clientType))
        throw new ToolError('INVALID_ARGUMENTS', `client_type must be one of ${types.join(', ')}`);
      const name = body.client_name;
      if (typeof name !== 'string' || name.trim().length === 0 || name.length > 100)
        throw new ToolError('INVALID_ARGUMENTS', 'client_name is required: 1-100 characters naming the client');
      if (body.user !== undefined && (typeof body.user !== 'string' || body.user.length === 0 || body.user.length > 100))
        throw new ToolError('INVALID_ARGUMENTS', 'user must be 1-100 characters');
      if (body.model !== undefined && (typeof body.model !== 'string' || body.model.length === 0 || body.model.length > 200))
        throw new ToolError('INVALID_ARGUMENTS', 'model must be 1-200 characters naming the model the client runs');
      const level = body.trust_level;
      if (level !== undefined && !(TRUST_LEVELS as readonly unknown[]).includes(level))
        throw new ToolError('INVALID_ARGUMENTS', `trust_level must be one of ${TRUST_LEVELS.join(', ')}`);
      const { session } = agent.openSession({
        authorization: req.get('authorization'),
        client_type: clientType as ClientType,
        client_name: name.trim(),
        user: body.user as string | undefined,
        trust_level: level as TrustLevel | undefined,
        model: (body.model as string | undefined) ?? req.get('x-marginalia-model')?.slice(0, 200),
      });
      const cfg = agent.config;
      send(
        res,
        200,
        ok({
          session_id: session.session_id,
          client_type: session.client_type,
          client_name: session.client_name,
          user: session.context.user_id,
          status: session.status,
          created_at: session.created_at,
          trust_level: session.context.trust_level,
          role: session.context.preferences.role,
          agent: session.owner === 'researcher' ? null : session.owner,
          model: session.model ?? null,
          heartbeat_interval_seconds: cfg.sessions.heartbeat_interval_seconds,
          timeout_minutes: cfg.sessions.timeout_minutes,
          capabilities: {
            tools: pipeline.listTools().map((t) => t.name),
            resources: RESOURCE_URIS,
            protocols: opts.protocols ?? ['http', 'rest', 'sse', 'websocket'],
            default_subscriptions: cfg.events.default_subscriptions,
          },
        }),
      );
    }, false),
  );

  app.post(
    '/session/destroy',
    ...json,
    route((req, res) => {
      const id = sessionIdOf(req);
      // its own credential, or the researcher (any session); another agent's: 403 SESSION_FORBIDDEN
      const { session: s, reason } = agent.endSessionAs(id, req.get('authorization'));
      send(res, 200, ok({ session_id: s.session_id, status: 'ended', reason }));
    }, false),
  );

  app.post(
    '/session/heartbeat',
    ...json,
    route((req, res) => {
      const id = sessionIdOf(req);
      const { session, heartbeat_interval_seconds } = agent.heartbeatAs(id, req.get('authorization'));
      send(
        res,
        200,
        ok({
          session_id: session.session_id,
          status: session.status,
          last_activity: session.last_activity,
          heartbeat_interval_seconds,
          timeout_minutes: agent.config.sessions.timeout_minutes,
        }),
      );
    }, false),
  );
}
