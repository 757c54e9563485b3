/**
 * The researcher's routes over agents' work: approval decisions (through the adapter kit, src/agent/kit/approvals.ts)
 * and Pause agents.
 */
import express, { type Request, type Response } from 'express';
import { fail } from '../../core/envelope';
import { ToolError } from '../../core/errors';
import type { AgentContext } from '../../agent/agentContext';
import { decideApproval, listApprovals, type CallLogSink } from '../../agent/kit';
import type { Caller } from '../../agent/pipeline';
import { approvalOut } from '../../tools/approvalTools';
import { send, sendError, statusOf, strictJsonBody } from './guards';
import { callerOf } from './toolCall';

/**
 * The approval routes (the spec's abstract operations approve and reject): `GET /approvals?status=`,
 * `GET /approvals/{id}`, `POST /approvals/{id}/approve` with optional `{"arguments": {...}}` (an edit
 * before approval), `POST /approvals/{id}/reject` with optional `{"reason": "..."}`. Only the researcher's
 * token may decide, never on its own session's request (403 APPROVAL_FORBIDDEN).
 */
export function mountApprovals(app: express.Express, agent: AgentContext, onCall?: CallLogSink): void {
  const withCaller = (handler: (req: Request, res: Response, caller: Caller) => Promise<void> | void) => async (req: Request, res: Response) => {
    try {
      await handler(req, res, callerOf(req, agent));
    } catch (e) {
      sendError(res, e);
    }
  };
  const body = strictJsonBody();
  const log = { sink: onCall, status: statusOf };
  app.get(
    '/approvals',
    withCaller((req, res) => {
      const list = listApprovals(agent, req.query.status).map(approvalOut);
      send(res, 200, { success: true, data: { count: list.length, approvals: list } });
    }),
  );
  app.get(
    '/approvals/:id',
    withCaller((req, res) => {
      const found = agent.listApprovals().find((a) => a.request_id === req.params.id);
      if (!found) send(res, 404, fail('APPROVAL_NOT_FOUND', `No approval request ${String(req.params.id)}`));
      else send(res, 200, { success: true, data: approvalOut(found) });
    }),
  );
  app.post(
    '/approvals/:id/approve',
    ...body,
    withCaller(async (req, res, caller) => {
      const edited = (req.body as { arguments?: unknown } | undefined)?.arguments;
      const outcome = await decideApproval(agent, caller, { decision: 'approve', request_id: String(req.params.id), arguments: edited }, log);
      send(res, statusOf(outcome), outcome.envelope);
    }),
  );
  app.post(
    '/approvals/:id/reject',
    ...body,
    withCaller(async (req, res, caller) => {
      const reason = (req.body as { reason?: unknown } | undefined)?.reason;
      const outcome = await decideApproval(agent, caller, { decision: 'reject', request_id: String(req.params.id), reason }, log);
      send(res, statusOf(outcome), outcome.envelope);
    }),
  );
}

/**
 * Pause agents (issue 14 item 9), reviewer token only (403 APPROVAL_FORBIDDEN for an agent): `POST /agents/pause`
 * -> `{paused: true, since, by, changed}`; `POST /agents/resume` -> `{paused: false, changed, ran, failed,
 * still_pending, requests}` (the calls the pause held run now; AgentContext.resume); `GET /agents/pause` ->
 * `{paused, since, by}`. Bodies are ignored (`{}` or none).
 */
export function mountPause(app: express.Express, agent: AgentContext): void {
  const researcher = (req: Request): Caller => {
    const caller = callerOf(req, agent);
    if (!caller.researcher) throw new ToolError('APPROVAL_FORBIDDEN', 'Only the researcher (the reviewer token) may pause or resume agents');
    return caller;
  };
  const route = (fn: (caller: Caller) => unknown) => async (req: Request, res: Response) => {
    try {
      send(res, 200, { success: true, data: await fn(researcher(req)) });
    } catch (e) {
      sendError(res, e);
    }
  };
  app.get(
    '/agents/pause',
    route(() => ({ paused: agent.paused, ...(agent.pauseInfo ?? { since: null, by: null }) })),
  );
  app.post(
    '/agents/pause',
    ...strictJsonBody(),
    route((caller) => agent.pause(caller)),
  );
  app.post(
    '/agents/resume',
    ...strictJsonBody(),
    route((caller) => agent.resume(caller)),
  );
}
