/**
 * The adapter kit (issue 14 item 12): what every surface (HTTP, REST/SSE, WebSocket, gRPC, MCP, CLI) does the same
 * way, once: session binding (./sessionBinding.ts), subscriptions (./subscriptions.ts), approval decisions
 * (./approvals.ts) and the call log (./callLog.ts). Error classification is ../errorClasses.ts.
 */
export {
  APPROVAL_STATUSES,
  approvalStatusOf,
  decideApproval,
  listApprovals,
  MAX_REASON_LENGTH,
  type ApprovalDecision,
  type ApprovalStatus,
  type DecisionLog,
} from './approvals';
export { callLogLine, logCall, type CallLogSink } from './callLog';
export { bindCaller, remoteClientType, REMOTE_CLIENT_TYPES, type BindRequest } from './sessionBinding';
export {
  blindFilter,
  MAX_PATTERNS,
  openSubscription,
  parsePatterns,
  parseSeq,
  ResumableSubscription,
  type KitSubscription,
  type OpenSubscriptionOptions,
  type StreamSink,
} from './subscriptions';
