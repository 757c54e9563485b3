/** The gRPC handlers of tool calls and approvals: ListTools, CallTool, Approve, Reject, ListApprovals. */
import type * as grpc from '@grpc/grpc-js';
import { ToolError } from '../../core/errors';
import { failure, parseJsonObject, toCallResponse, type ApproveRequest, type CallToolRequest, type CallToolResponse, type RejectRequest } from './messages';
import { callerOf, grpcStatusWord, logCall, unary, type GrpcServerContext } from './serverContext';
import { decideApproval, listApprovals } from '../../agent/kit';
import type { InvokeOutcome } from '../../agent/pipeline';

/** The handlers of tool calls and approvals; every call goes through the agent context (AgentContext.call/approve/reject). */
export function callHandlers(ctx: GrpcServerContext): grpc.UntypedServiceImplementation {
  const agent = ctx.agent;
  const pipeline = ctx.opts.pipeline;
  const decisionLog = { sink: ctx.opts.onCall, status: (o: InvokeOutcome) => `grpc:${grpcStatusWord(o)}` };
  return {
    ListTools: unary<Record<string, never>, { tools: unknown[] }>(ctx, () => ({
      tools: pipeline.listTools().map((t) => ({
        name: t.name,
        title: t.title,
        description: t.description,
        group: t.group,
        effect: t.effect,
        trust_category: t.trust_category,
        input_schema_json: JSON.stringify(t.inputSchema),
      })),
    })),

    CallTool: unary<CallToolRequest, CallToolResponse>(
      ctx,
      async (req, id) => {
        const caller = callerOf(ctx, id, req.session_id, req.correlation_id);
        if (!req.tool) throw new ToolError('INVALID_ARGUMENTS', 'tool is required (a name from ListTools)');
        const args = parseJsonObject(req.arguments_json, 'arguments_json', {});
        const outcome = await agent.call(caller, req.tool, args);
        logCall(ctx, caller, req.tool, outcome);
        return toCallResponse(outcome);
      },
      failure,
    ),

    Approve: unary<ApproveRequest, CallToolResponse>(
      ctx,
      async (req, id) => {
        const caller = callerOf(ctx, id, req.session_id);
        if (!req.request_id) throw new ToolError('INVALID_ARGUMENTS', 'request_id is required');
        const edited = parseJsonObject(req.arguments_json, 'arguments_json', undefined);
        const outcome = await decideApproval(agent, caller, { decision: 'approve', request_id: req.request_id, arguments: edited }, decisionLog);
        return { ...toCallResponse(outcome), request_id: req.request_id };
      },
      failure,
    ),

    Reject: unary<RejectRequest, CallToolResponse>(
      ctx,
      async (req, id) => {
        const caller = callerOf(ctx, id, req.session_id);
        if (!req.request_id) throw new ToolError('INVALID_ARGUMENTS', 'request_id is required');
        const outcome = await decideApproval(agent, caller, { decision: 'reject', request_id: req.request_id, reason: req.reason || undefined }, decisionLog);
        return { ...toCallResponse(outcome), request_id: req.request_id };
      },
      failure,
    ),

    ListApprovals: unary<{ status: string }, { approvals: unknown[] }>(ctx, (req) => {
      const list = listApprovals(agent, req.status);
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
          decided_by_coder: a.decided_by_coder ?? '',
          decided_by_role: a.decided_by_role ?? '',
          reason: a.reason ?? '',
          result_json: a.result ?? '',
          error_code: a.error_code ?? '',
        })),
      };
    }),
  };
}
