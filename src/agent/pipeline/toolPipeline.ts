/**
 * The {@link ToolPipeline} class: the one call pipeline every surface uses. It holds the pipeline's state
 * ({@link PipelineCore}) and runs a call through the stages, each in a file of its own in this folder
 * (docs/architecture.md, "The call pipeline").
 */
import { ok, type Envelope } from '../../core/envelope';
import type { Disposable } from '../../core/lifecycle';
import { toDisposable } from '../../core/lifecycle';
import type { PathPolicy } from '../../core/pathPolicy';
import type { CausedBy, DomainEvent, EventRecord } from '../../domain/events';
import type { CoderRole } from '../../domain/model';
import { readScopeFor, teamSettingsOf, type ReadScope } from '../../domain/teamSettings';
import type { ApprovalRecord } from '../../domain/ports';
import type { AnyTool } from '../../tools/defineTool';
import type { AgentView } from '../agentAccess';
import type { AuditDecision } from '../auditLog';
import type { TrustLevel } from '../config';
import { lookupTool, resolveSession, validateInput } from './admission';
import { AgentTurns } from './agentTurns';
import { awaitDecision, listApprovals, sweepApprovals } from './approvalQueue';
import { approve, reject, requestApproval, withdraw } from './approvals';
import { audit } from './audit';
import { createCore, type PipelineCore } from './core';
import { dryRun } from './dryRun';
import { emitSystemEvents, publish } from './events';
import { execute } from './execute';
import { listTools, viewerOf } from './listing';
import { notifyResearcher } from './notify';
import { checkPaths, pathPolicy } from './paths';
import { heldByPause, resumeHeld } from './pause';
import { auditCoder, causedBy, roleOf } from './provenance';
import { checkRateLimit } from './rateLimit';
import { checkClosedSources, closedSourcesOf, redactEvent, redactFor } from './redaction';
import { isDenial, toFailure } from './stageFailure';
import { checkSourceAccess, checkTrust } from './trust';
import type { CallRecord, Caller, InvokeOptions, InvokeOutcome, PipelineOptions, ToolListing, ToolViewer } from './types';

/**
 * The one call pipeline every surface uses (docs/architecture.md, "One registry of tools"):
 * resolve session -> look up tool -> validate input once -> rate limit -> trust check -> prepare ->
 * run in one store transaction (events stored in the same transaction, journal fsync'd) -> audit ->
 * publish events -> envelope.
 *
 * Without `agent` the session, rate-limit and trust stages allow everything. With it (createAgentLayer):
 * calls need a live session, are rate-limited per session, and run (auto, notify) or wait for the
 * researcher's approval (suggest, require) by the trust layer's decision; every call is audited.
 */
export class ToolPipeline {
  private readonly core: PipelineCore;
  private readonly agentTurns = new AgentTurns();

  constructor(opts: PipelineOptions) {
    this.core = createCore(opts);
  }

  /**
   * Every tool with its JSON Schema (draft 2020-12, from `z.toJSONSchema`), in registry order. With `viewer`
   * (issue 14 item 6), each tool also says the trust level that applies to that caller (`trust_level`), and
   * for an agent the description of a tool it would see held ends with what the pending answer looks like.
   */
  listTools(viewer?: ToolViewer): ToolListing[] {
    return listTools(this.core, viewer);
  }

  /**
   * The viewer of {@link listTools} for `caller`: the researcher, or an agent with its session's own trust
   * floor (`context.trust_level`; auto when the session is unknown). Reads only: touches no session.
   */
  viewerOf(caller: Caller): ToolViewer {
    return viewerOf(this.core, caller);
  }

  /** Subscribes to the events of every successful call, delivered after the commit is durable. */
  onEvents(listener: (events: EventRecord[]) => void): Disposable {
    this.core.listeners.add(listener);
    return toDisposable(() => void this.core.listeners.delete(listener));
  }

  /** Subscribes to every finished call (after audit), e.g. to count active agent sessions. */
  onDidCall(listener: (call: CallRecord) => void): Disposable {
    this.core.callListeners.add(listener);
    return toDisposable(() => void this.core.callListeners.delete(listener));
  }

  /**
   * Calls tool `name` with `args` (an object; undefined counts as `{}`) on behalf of `caller`.
   * Never throws: every failure is an envelope with the spec's error code (TOOL_NOT_FOUND,
   * INVALID_ARGUMENTS, NO_PROJECT, the tool's own codes, TOOL_EXECUTION_ERROR for the unexpected).
   */
  async invoke(name: string, args: unknown, caller: Caller, options: InvokeOptions = {}): Promise<InvokeOutcome> {
    const core = this.core;
    // agents take turns; the researcher goes ahead of every agent call still waiting (src/agent/pipeline/agentTurns.ts)
    if (roleOf(caller) === 'agent') await this.agentTurns.next();
    const started = performance.now();
    let events: EventRecord[] = [];
    let envelope: Envelope;
    let status: InvokeOutcome['status'] = 'ok';
    let decision: AuditDecision = 'permitted';
    let level: TrustLevel | undefined;
    let requestId: string | undefined;
    let notice: { tool: AnyTool; input: unknown; data: unknown; events: EventRecord[] } | undefined;
    // sources closed to this agent (issue 14 item 11): null for the researcher and when nothing is closed to it
    let closed: AgentView | null = null;
    try {
      const session = resolveSession(core, caller);
      const tool = lookupTool(core, name, caller);
      const input = validateInput(tool, args);
      checkRateLimit(core, caller, tool, input);
      const paths = pathPolicy(core, caller); // one policy for every stage of the call: each path resolved once
      checkPaths(tool, input, paths);
      closed = checkClosedSources(core, caller, tool, input);
      level = checkTrust(core, caller, tool, session);
      // pause agents (issue 14 item 9): a call that would run now waits like a suggestion until the researcher resumes
      const pausedHold = (level === 'auto' || level === 'notify') && heldByPause(core, caller, tool);
      if (level === 'suggest' || level === 'require' || pausedHold) {
        // a held call is a real proposal: one that would fail answers now with its own error (issue 14 item 5)
        const preview = dryRun(core, tool, input, caller, paths);
        const pending = requestApproval(core, tool, input, caller, level === 'require' ? 'require' : 'suggest', preview, pausedHold);
        events = pending.events;
        requestId = pending.data.request_id;
        envelope = ok(pending.data);
        status = 'pending';
        decision = 'pending';
      } else {
        await checkSourceAccess(core, tool, input, caller);
        const result = await execute(core, tool, input, caller, undefined, options.onProgress, paths);
        events = result.events;
        envelope = ok(result.data);
        if (level === 'notify') decision = 'notified';
        if (level === 'notify') notice = { tool, input, data: result.data, events: result.events };
      }
    } catch (e) {
      status = 'failed';
      decision = isDenial(e) ? 'denied' : 'failed';
      envelope = toFailure(core.logger, name, e);
    }
    if (closed) envelope = closed.redact(envelope) as Envelope;
    const durationMs = performance.now() - started;
    audit(core, {
      tool: name,
      caller,
      status,
      decision,
      trust_level: level,
      request_id: requestId,
      error_code: envelope.success ? undefined : envelope.error_code,
      durationMs,
      arguments: args,
    });
    if (events.length > 0) publish(core, events);
    if (notice) notifyResearcher(core, notice.tool, notice.input, caller, notice.data, notice.events);
    return { envelope, status, tool: name, durationMs, events };
  }

  /**
   * Resume after a pause (issue 14 item 9): runs every pending request held only because agents were paused,
   * oldest first, as if `approver` approved it, when its tool's trust level for that agent is still auto or
   * notify; see ./pause.ts {@link resumeHeld} for the whole rule. Returns the counts and each request's outcome.
   */
  resumeHeld(approver: Caller): ReturnType<typeof resumeHeld> {
    return resumeHeld(this.core, approver);
  }

  /**
   * Where `caller`'s file paths may lie (docs/agents.md, "File paths"; src/core/pathPolicy.ts): unrestricted for
   * the researcher and without the agent layer; see ./paths.ts {@link pathPolicy}.
   */
  pathPolicy(caller: Caller): PathPolicy {
    return pathPolicy(this.core, caller);
  }

  /** The sources closed to `caller` in the open project (agentViewOf), or null: the researcher, no agent layer, no project, nothing closed to it. */
  closedSourcesOf(caller: Caller): AgentView | null {
    return closedSourcesOf(this.core, caller);
  }

  /**
   * `data` as `caller` may see it: the words of sources closed to it replaced by a marker naming the source
   * ({@link AgentView.redact}); unchanged for the researcher. For reads made outside {@link invoke} on an agent's
   * behalf (the MCP resources and prompts the ContextBuilder answers).
   */
  redactFor<T>(caller: Caller, data: T): T {
    return redactFor(this.core, caller, data);
  }

  /**
   * `event` as the event streams deliver it (EventHub.redactor): the words of sources closed to any agent
   * replaced by a marker; unchanged when nothing is closed or no project is open.
   */
  redactEvent(event: EventRecord): EventRecord {
    return redactEvent(this.core, event);
  }

  /**
   * What `caller` may read of other coders' codings now (blind coding, src/domain/teamSettings.ts readScopeFor):
   * null (everything) while blind coding is off, for the lead, or with no project open; else the caller's own.
   */
  readScopeOf(caller: Caller): ReadScope {
    const project = this.core.opts.project();
    return project ? readScopeFor(teamSettingsOf(project.repo, project.writeGeneration), { user: caller.user, role: roleOf(caller) }) : null;
  }

  /**
   * Resolves once approval request `requestId` is decided, after `waitMs` milliseconds (at most
   * MAX_APPROVAL_WAIT_MS), or when it expires, whichever comes first; at once when it is unknown or not
   * pending. Never rejects. get_approval_status's `wait_ms` long poll (./approvalQueue.ts).
   */
  awaitDecision(requestId: string, waitMs: number): Promise<void> {
    return awaitDecision(this.core, requestId, waitMs);
  }

  /**
   * Approves a pending request and runs the stored call (with `editedArguments` when the researcher
   * changed them) on behalf of the agent that asked, in one transaction with approval.granted. Only the
   * researcher may approve, and never a request of their own session.
   * Errors: APPROVAL_NOT_FOUND, APPROVAL_NOT_PENDING, APPROVAL_FORBIDDEN, INVALID_ARGUMENTS (edited
   * arguments), VERSION_CONFLICT, and the tool's own errors (the request is then marked failed and
   * approval.failed emitted).
   */
  approve(requestId: string, approver: Caller, editedArguments?: unknown): Promise<InvokeOutcome> {
    return approve(this.core, requestId, approver, editedArguments);
  }

  /**
   * Rejects a pending request with an optional reason (approval.denied). Same permission rules as
   * {@link approve}. Errors: APPROVAL_NOT_FOUND, APPROVAL_NOT_PENDING, APPROVAL_FORBIDDEN.
   */
  reject(requestId: string, approver: Caller, reason?: string): InvokeOutcome {
    return reject(this.core, requestId, approver, reason);
  }

  /**
   * Withdraws a pending request on behalf of the agent that asked it (an MCP task's `tasks/cancel`): rejected
   * with the reason `withdrawn by the agent` (approval.denied). Errors: APPROVAL_NOT_FOUND, APPROVAL_NOT_PENDING,
   * APPROVAL_FORBIDDEN (not the asking agent's request).
   */
  withdraw(requestId: string, asker: Caller): InvokeOutcome {
    return withdraw(this.core, requestId, asker);
  }

  /**
   * Rejects every pending request whose time is up (approvals.timeout_minutes, spec: 5 minutes) with the
   * reason `timeout`; requests held by a pause never time out. Hosts call it on a timer; the pipeline also
   * calls it before queueing. Returns how many.
   */
  sweepApprovals(): number {
    return sweepApprovals(this.core);
  }

  /** Stored approval requests (all, or with one status), oldest first. */
  listApprovals(status?: ApprovalRecord['status']): ApprovalRecord[] {
    return listApprovals(this.core, status);
  }

  /**
   * Stores and publishes events that no tool call raised (session.connected, session.disconnected).
   * Without an open project they are published unstored, with sequence number 0.
   */
  emitSystemEvents(caller: Caller, raised: DomainEvent[]): EventRecord[] {
    return emitSystemEvents(this.core, caller, raised);
  }

  /**
   * The coder's role of `caller` (issue 14, item 1): the researcher for the local UI (client type LOCAL_UI, also
   * the pipeline's own housekeeping) and the reviewer token (`caller.researcher`); every other caller is an agent.
   */
  roleOf(caller: Caller): CoderRole {
    return roleOf(caller);
  }

  /**
   * An event's `caused_by` for `caller`: the session, client type and owner (`user`), the coder's role and name,
   * and for an agent its client name and the model its session stated (./provenance.ts).
   */
  causedBy(caller: Caller): CausedBy {
    return causedBy(this.core, caller);
  }

  /** The coder fields of an audit line (role, coder, and an agent's model): see {@link causedBy}. */
  auditCoder(caller: Caller): { role: CoderRole; coder: string; model?: string } {
    return auditCoder(this.core, caller);
  }
}
