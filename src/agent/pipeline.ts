/**
 * The call pipeline's public entry: every import of `src/agent/pipeline` lands here. The pipeline itself is
 * split by stage under src/agent/pipeline/ (docs/architecture.md, "The call pipeline"):
 *
 * - toolPipeline.ts: the {@link ToolPipeline} class, the order of the stages (`invoke`) and its public API
 * - types.ts: Caller, InvokeOutcome, ToolListing, CallRecord, options, AgentLayer, PendingApproval, constants
 * - core.ts: the state the stages share; stageFailure.ts: a stage's early end and the error envelope
 * - admission.ts (stages 1-3: session, tool, arguments), rateLimit.ts (4), paths.ts (4b), redaction.ts (4c and
 *   the closed-source redaction hook), trust.ts (5, 5b and the listing's trust rule), dryRun.ts (5c),
 *   execute.ts (6), memo.ts (the memo cache of reads), progress.ts, audit.ts (7), events.ts (8)
 * - approvals.ts (holding a call, approve, reject), approvalQueue.ts (timeouts, listing, long polls),
 *   versions.ts (the version check of held calls), pause.ts (pause and resume), notify.ts (trust level notify)
 * - provenance.ts (role, caused_by, decider), arguments.ts (what arguments name), listing.ts (tool listings)
 */
export { ToolPipeline } from './pipeline/toolPipeline';
export * from './pipeline/types';
export { entityRefsOf, sourceIdsOf } from './pipeline/arguments';
export { dryRunMode } from './pipeline/dryRun';
export { toJsonSchema } from './pipeline/listing';
export { MEMO_ENTRIES } from './pipeline/memo';
export { describeProgress, PROGRESS_INTERVAL_MS } from './pipeline/progress';
export { heldWords, trustForViewer } from './pipeline/trust';
export type { VersionChange } from './pipeline/versions';
