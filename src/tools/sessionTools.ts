import { z } from 'zod';
import { ToolError } from '../core/errors';
import type { ApprovalRecord } from '../domain/ports';
import { defineTool, type SessionInfo } from './defineTool';
import { args, text } from './schemas';

/**
 * The researcher's view of who is connected (issue 14 item 3; agent-context spec, section 2 `get_session`):
 * every live session with its credential, client, model, state, subscriptions and pending requests, and a
 * way to end one (its SSE and WebSocket streams close at once). Researcher only: an agent calling them is
 * refused with APPROVAL_FORBIDDEN (403) before anything runs. HTTP: `GET /sessions`, `GET /sessions/{id}`,
 * `DELETE /sessions/{id}` run these tools.
 */

/** A session as get_session and list_sessions show it: the spec's SessionInfo plus who and what it is. */
export const sessionOutput = z.object({
  session_id: z.string(),
  client_type: z.string().describe('ASSISTANT_A_CLI, ASSISTANT_B_CLI, REST_CLIENT, LOCAL_UI or CUSTOM'),
  client_name: z.string(),
  created_at: z.string(),
  last_activity: z.string(),
  status: z.string().describe('ACTIVE, IDLE (no activity for two heartbeat intervals) or EXPIRED'),
  subscriptions: z.array(z.object({ subscription_id: z.string(), event_patterns: z.array(z.string()), created_at: z.string() })),
  context: z.object({ project_id: z.string(), user_id: z.string(), trust_level: z.string(), preferences: z.record(z.string(), z.unknown()) }),
  role: z.enum(['researcher', 'agent']),
  agent: z.string().nullable().describe("the agent credential's name (`agent`: the install's own token); null for the researcher's sessions"),
  model: z.string().nullable().describe('the model the client stated (session/create `model`, X-Marginalia-Model, MCP clientInfo), or null'),
  implicit: z.boolean().describe('true for the one session a credential gets when it names none'),
  pending_requests: z.number().int().describe("this session's calls waiting for the researcher's approval"),
});

/** One session in the shape of {@link sessionOutput}; `pending` are the pending approval requests (for the count). */
export function sessionView(s: SessionInfo, pending: readonly Pick<ApprovalRecord, 'session_id'>[]): z.output<typeof sessionOutput> {
  const researcher = s.owner === 'researcher';
  return {
    session_id: s.session_id,
    client_type: s.client_type,
    client_name: s.client_name,
    created_at: s.created_at,
    last_activity: s.last_activity,
    status: s.status,
    subscriptions: s.subscriptions.map((x) => ({ subscription_id: x.subscription_id, event_patterns: [...x.event_patterns], created_at: x.created_at })),
    context: { project_id: s.context.project_id, user_id: s.context.user_id, trust_level: s.context.trust_level, preferences: { ...s.context.preferences } },
    role: researcher ? 'researcher' : 'agent',
    agent: researcher ? null : s.owner,
    model: s.model ?? null,
    implicit: s.implicit,
    pending_requests: pending.filter((a) => a.session_id === s.session_id).length,
  };
}

/** A copy of a live session, taken in `prepare` (sessions change between prepare and run). */
function snapshot(s: SessionInfo): SessionInfo {
  return {
    ...s,
    subscriptions: s.subscriptions.map((x) => ({ ...x, event_patterns: [...x.event_patterns] })),
    context: { ...s.context, preferences: { ...s.context.preferences } },
  };
}

function noLayer(): never {
  throw new ToolError('SESSION_NOT_FOUND', 'This host has no agent sessions (no agent layer is running)');
}

const sessionId = text(100, 1).describe("a session_id from list_sessions (or an event's caused_by)");

export const listSessionsTool = defineTool({
  name: 'list_sessions',
  group: 'project',
  title: 'List Sessions',
  description:
    "Every connected session, the researcher's own and each agent's, oldest first: who (role, agent: the credential's name), the client " +
    '(client_type, client_name, model), state (status ACTIVE|IDLE, created_at, last_activity), subscriptions and pending_requests. ' +
    'role: "agent" only lists agents\' sessions. Returns {count, sessions: [{session_id, client_type, client_name, created_at, last_activity, status, ' +
    "subscriptions, context, role, agent, model, implicit, pending_requests}]}. The researcher's alone (APPROVAL_FORBIDDEN for agents).",
  input: args({ role: z.enum(['researcher', 'agent']).optional().describe('only sessions of this role (default: all)') }),
  output: z.object({ count: z.number().int(), sessions: z.array(sessionOutput) }),
  effect: 'read',
  trust: 'read',
  researcherOnly: true,
  needsProject: false,
  dryRun: 'none',
  prepare: async (_input, pctx) => (pctx.sessions ? pctx.sessions.list().map(snapshot) : []),
  run: (ctx, input, live) => {
    const pending = ctx.project ? ctx.domain.repo.listApprovals('pending') : [];
    const sessions = live.map((s) => sessionView(s, pending)).filter((s) => !input.role || s.role === input.role);
    return { count: sessions.length, sessions };
  },
});

export const getSessionTool = defineTool({
  name: 'get_session',
  group: 'project',
  title: 'Get Session',
  description:
    'One connected session (agent-context spec, get_session): {session_id, client_type, client_name, created_at, last_activity, status, ' +
    'subscriptions [{subscription_id, event_patterns, created_at}], context {project_id, user_id, trust_level, preferences}, role, agent, model, implicit, ' +
    "pending_requests}. The researcher's alone (APPROVAL_FORBIDDEN for agents). Errors: SESSION_NOT_FOUND (unknown or ended).",
  input: args({ session_id: sessionId }),
  output: sessionOutput,
  effect: 'read',
  trust: 'read',
  researcherOnly: true,
  needsProject: false,
  dryRun: 'none',
  prepare: async (input, pctx) => {
    const s = pctx.sessions ? pctx.sessions.get(input.session_id) : noLayer();
    if (!s) throw new ToolError('SESSION_NOT_FOUND', `No session ${input.session_id}: it has ended, or never existed (list_sessions lists the live ones)`);
    return snapshot(s);
  },
  run: (ctx, _input, s) => sessionView(s, ctx.project ? ctx.domain.repo.listApprovals('pending') : []),
});

export const endSessionTool = defineTool({
  name: 'end_session',
  group: 'project',
  title: 'End Session',
  description:
    "Ends a connected session (an agent's, or another of the researcher's): its event streams (SSE, WebSocket) close at once and it is " +
    'announced as session.disconnected with reason ended_by_researcher. Its pending requests stay for the researcher to decide. The agent may ' +
    'connect again while its credential is valid (revoke the credential to stop it: DELETE /agents/{name}, `marginalia agent revoke`). Returns ' +
    '{session_id, status: "ended", reason}. The researcher\'s alone (APPROVAL_FORBIDDEN for agents). Errors: SESSION_NOT_FOUND.',
  input: args({ session_id: sessionId }),
  output: z.object({ session_id: z.string(), status: z.literal('ended'), reason: z.literal('ended_by_researcher') }),
  effect: 'modify',
  trust: 'approval',
  researcherOnly: true,
  needsProject: false,
  dryRun: 'none',
  prepare: async (input, pctx) => {
    const sessions = pctx.sessions ?? noLayer();
    if (!sessions.get(input.session_id))
      throw new ToolError('SESSION_NOT_FOUND', `No session ${input.session_id}: it has ended, or never existed (list_sessions lists the live ones)`);
    sessions.end(input.session_id, 'ended_by_researcher');
    return input.session_id;
  },
  run: (_ctx, _input, id) => ({ session_id: id, status: 'ended' as const, reason: 'ended_by_researcher' as const }),
});

/** The session tools, in registry order. */
export const SESSION_TOOLS = [listSessionsTool, getSessionTool, endSessionTool] as const;
