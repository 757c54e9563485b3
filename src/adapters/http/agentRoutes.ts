import type express from 'express';
import type { Request, Response } from 'express';
import { fail, ok } from '../../core/envelope';
import { isToolError, ToolError } from '../../core/errors';
import type { AgentContext } from '../../agent/agentContext';
import type { Caller, ToolPipeline } from '../../agent/pipeline';
// a cycle with httpServer.ts, used only inside handlers (after both modules have loaded)
import { callerOf, send, sendError, statusOf, strictJsonBody } from './httpServer';

/**
 * The researcher's routes for agents and sessions (issue 14 items 2 and 3), reviewer token only (403
 * APPROVAL_FORBIDDEN for an agent's token, audited as denied):
 * - `POST /agents {"name"}` → 201 `{name, token}`: issues a credential (the token is shown this once);
 *   400 INVALID_ARGUMENTS, 409 AGENT_EXISTS.
 * - `GET /agents` → `{count, agents: [{name, created_at, last_used_at}]}` (never a token).
 * - `DELETE /agents/{name}` → `{name, revoked: true, sessions_ended}`: the agent's sessions end at once and
 *   their streams close; 404 AGENT_NOT_FOUND.
 * - `GET /sessions`, `GET /sessions/{id}`, `DELETE /sessions/{id}`: the tools list_sessions, get_session and
 *   end_session through the pipeline (audited like any call).
 */
export function mountAgentRoutes(app: express.Express, agent: AgentContext, pipeline: ToolPipeline): void {
  /** The researcher's routes: anything else is refused (and audited) before the handler runs. */
  const researcherOnly = (handler: (req: Request, res: Response) => void) => (req: Request, res: Response) => {
    try {
      if (agent.identify(req.get('authorization'))?.role !== 'researcher') {
        agent.auditRefusal({ route: `${req.method} ${req.path}`.slice(0, 300), error_code: 'APPROVAL_FORBIDDEN', client_name: req.get('x-marginalia-client') });
        throw new ToolError('APPROVAL_FORBIDDEN', "Agent credentials are the researcher's to issue, list and revoke: send the reviewer token");
      }
      handler(req, res);
    } catch (e) {
      if (!isToolError(e)) throw e;
      sendError(res, e);
    }
  };

  app.post(
    '/agents',
    ...strictJsonBody(),
    researcherOnly((req, res) => {
      const body: unknown = req.body ?? {};
      if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new ToolError('INVALID_ARGUMENTS', 'Send {"name": "..."}');
      const extra = Object.keys(body).filter((k) => k !== 'name');
      if (extra.length > 0) throw new ToolError('INVALID_ARGUMENTS', `Unexpected body member(s) ${extra.join(', ')}: send {"name": "..."}`);
      const name = (body as { name?: unknown }).name;
      if (typeof name !== 'string') throw new ToolError('INVALID_ARGUMENTS', "name is required: the agent's name (1-64 characters)");
      const issued = agent.credentials.issue(name);
      send(res, 201, ok({ name: issued.name, token: issued.token }));
    }),
  );

  app.get(
    '/agents',
    researcherOnly((_req, res) => {
      const agents = agent.credentials.list();
      send(res, 200, ok({ count: agents.length, agents }));
    }),
  );

  app.delete(
    '/agents/:name',
    researcherOnly((req, res) => {
      const name = String(req.params.name);
      const before = agent.sessions.list().filter((s) => s.owner === name && s.client_type !== 'LOCAL_UI').length;
      if (!agent.credentials.revoke(name)) {
        send(res, 404, fail('AGENT_NOT_FOUND', `No agent credential named "${name.slice(0, 100)}" (GET /agents lists them)`));
        return;
      }
      send(res, 200, ok({ name, revoked: true, sessions_ended: before }));
    }),
  );

  /** Runs a session tool as the researcher (agents: 403 APPROVAL_FORBIDDEN, audited, as the tool's own researcher-only stage would). */
  const viaTool = (tool: string, argsOf: (req: Request) => Record<string, unknown>) => async (req: Request, res: Response) => {
    let caller: Caller;
    try {
      // an agent is refused before any session is opened for it (so a full table answers APPROVAL_FORBIDDEN, not SESSION_LIMIT)
      if (agent.identify(req.get('authorization'))?.role !== 'researcher') {
        agent.auditRefusal({ route: `${req.method} ${req.path}`.slice(0, 300), error_code: 'APPROVAL_FORBIDDEN', client_name: req.get('x-marginalia-client') });
        throw new ToolError('APPROVAL_FORBIDDEN', `${tool} is the researcher's alone: send the reviewer token`);
      }
      caller = callerOf(req, agent);
    } catch (e) {
      sendError(res, e);
      return;
    }
    const outcome = await pipeline.invoke(tool, argsOf(req), caller);
    send(res, statusOf(outcome), outcome.envelope);
  };
  app.get(
    '/sessions',
    viaTool('list_sessions', (req) => (typeof req.query.role === 'string' ? { role: req.query.role } : {})),
  );
  app.get(
    '/sessions/:id',
    viaTool('get_session', (req) => ({ session_id: String(req.params.id) })),
  );
  app.delete(
    '/sessions/:id',
    viaTool('end_session', (req) => ({ session_id: String(req.params.id) })),
  );
}
