/**
 * The pipeline's public shapes (src/agent/pipeline.ts re-exports them): who calls ({@link Caller}), what a call
 * answers ({@link InvokeOutcome}, {@link PendingApproval}), the tool listing, the audit record, the options and
 * agent layer a {@link ToolPipeline} is built from, and the constants of pausing and approval waits.
 */
import type { Clock } from '../../core/clock';
import type { Envelope } from '../../core/envelope';
import type { ErrorCode } from '../../core/errors';
import type { Logger } from '../../core/log';
import type { DomainEvent, EventRecord } from '../../domain/events';
import type { EmbeddingsPort } from '../../domain/ports';
import type { HostPort, OpenProject, ToolProgress } from '../../tools/context';
import type { AnyTool, Effect, ToolGroup, TrustCategory } from '../../tools/defineTool';
import type { AuditDecision, AuditLog } from '../auditLog';
import type { AgentContextConfig, TrustLevel } from '../config';
import type { RateLimiter } from '../rateLimits';
import type { SessionManager } from '../sessions';
import type { TrustPolicy } from '../trust';

/** Who is calling: the session and client a call arrives through. */
export interface Caller {
  session_id: string;
  /** the spec's ClientType: ASSISTANT_A_CLI, ASSISTANT_B_CLI, REST_CLIENT, LOCAL_UI, CUSTOM */
  client_type: string;
  client_name: string;
  /** the coder recorded as owner of what this call creates */
  user: string;
  /** ties the events of one request together; generated when absent */
  correlation_id?: string;
  /** set by {@link ToolPipeline.approve}: the researcher's session that approved this pending call (see `Actor.approved_by`) */
  approved_by?: string;
  /**
   * true for the researcher: the local UI, or a client authenticated with the reviewer token. The
   * researcher's calls skip the trust layer and rate limits, and only the researcher may approve.
   */
  researcher?: boolean;
  /**
   * The agent credential's name for an agent's call (`agent` for the install's own token; issue 14 item 2);
   * absent for the researcher. Rate budgets and the per-agent approval cap are per credential.
   */
  agent?: string;
}

/** The result of one {@link ToolPipeline.invoke}: the spec envelope plus what the adapters need. */
export interface InvokeOutcome {
  envelope: Envelope;
  /** ok: ran; failed: an error envelope; pending: waiting for the researcher's approval */
  status: 'ok' | 'failed' | 'pending';
  tool: string;
  durationMs: number;
  /** the events this call stored, in sequence order */
  events: EventRecord[];
}

/** One entry of a tool listing (`GET /tools`, MCP `tools/list`): `inputSchema` is JSON Schema. */
export interface ToolListing {
  name: string;
  title: string;
  description: string;
  group: ToolGroup;
  effect: Effect;
  trust_category: TrustCategory;
  inputSchema: Record<string, unknown>;
  /**
   * The trust level that applies to the caller who asked for the listing ({@link ToolPipeline.listTools}
   * with a viewer): auto and notify run, suggest and require are held for the researcher's approval (HTTP
   * 202 pending_approval), `researcher_only`: refused to agents (403 APPROVAL_FORBIDDEN). Absent in a
   * listing made for nobody in particular.
   */
  trust_level?: TrustLevel | 'researcher_only';
}

/** Who a tool listing is for ({@link ToolPipeline.listTools}): the researcher, or an agent with its session's trust floor. */
export interface ToolViewer {
  researcher: boolean;
  /** the agent session's own trust level (`context.trust_level`), the least level of every tool; default auto */
  floor?: TrustLevel;
}

/** A call as the audit stage sees it. */
export interface CallRecord {
  tool: string;
  caller: Caller;
  status: InvokeOutcome['status'];
  /** permitted, notified (ran at trust level notify), pending (held for approval), denied (by a session, rate-limit or trust check), failed */
  decision: AuditDecision;
  trust_level?: TrustLevel;
  request_id?: string;
  error_code?: ErrorCode;
  durationMs: number;
  arguments: unknown;
}

/** Per-call options of {@link ToolPipeline.invoke}. */
export interface InvokeOptions {
  /**
   * Receives the call's progress (long imports), at most every {@link PROGRESS_INTERVAL_MS} plus the final
   * report of each step. The pipeline also logs progress at most once a second. A listener that throws is
   * logged and ignored.
   */
  onProgress?: (p: ToolProgress) => void;
}

/** An extra observer of finished calls (the agent layer's JSONL audit log is built in). */
export interface AuditSink {
  record(call: CallRecord): void;
}

/** Options of the pipeline: the registry, how to reach the open project, and the host. */
export interface PipelineOptions {
  tools: readonly AnyTool[];
  /** the open project, or null when none is open */
  project: () => OpenProject | null;
  host: HostPort;
  clock?: Clock;
  logger?: Logger;
  audit?: AuditSink;
  /**
   * The agent-context layer: sessions, trust, rate limits, approvals. Without it every stage permits
   * everything (unit tests of tools, the seeding of a sample study).
   */
  agent?: AgentLayer;
  /** the text-embedding model handed to `prepare` (search_semantic, find_similar_segments); none when absent */
  embeddings?: EmbeddingsPort | null;
}

/** The agent-context services the pipeline's stages use (built by createAgentLayer). */
export interface AgentLayer {
  config: () => AgentContextConfig;
  sessions: SessionManager;
  trust: TrustPolicy;
  limiter: RateLimiter;
  audit?: AuditLog;
  /**
   * Pause agents (issue 14 item 9, AgentContext.pause): true while the researcher has paused every agent. An
   * agent's call that would run now (auto, notify) is then held as a pending request with the reason
   * {@link PAUSED_REASON}; Resume ({@link ToolPipeline.resumeHeld}) runs those. Absent: never paused.
   */
  paused?: () => boolean;
}

/** The reason stored on a request held only because the researcher paused agents (its status stays pending). */
export const PAUSED_REASON = 'agents paused';
/** Tools an agent uses to follow its held calls: never held by a pause (else following one would queue another). */
export const PAUSE_EXEMPT_TOOLS: ReadonlySet<string> = new Set(['get_approval_status', 'list_pending_approvals']);

/** What an agent learns when its call waits for approval (`data` of the envelope, HTTP 202). */
export interface PendingApproval {
  status: 'pending_approval';
  request_id: string;
  tool: string;
  trust_level: 'suggest' | 'require';
  expires_at: string;
  /**
   * How long to wait before asking get_approval_status, in milliseconds (`approvals.poll_after_ms`, default
   * 2000; HTTP also sends it as `Retry-After` in whole seconds, at least 1). Polling one's own request at
   * this pace never spends the rate budget; `wait_ms` (up to {@link MAX_APPROVAL_WAIT_MS}) makes one call
   * wait for the decision instead.
   */
  poll_after_ms: number;
  message: string;
  /** true when the call was held only because the researcher paused agents: it runs when they resume */
  held_by_pause?: boolean;
}

/** Longest `wait_ms` of get_approval_status (a long poll), in milliseconds. */
export const MAX_APPROVAL_WAIT_MS = 30_000;

/**
 * What the dry run of a held call found ({@link ToolDef.dryRun} `full`): the data the call would return
 * and the events it would raise, in order, against the project as it was when the call was held.
 */
export interface DryRunOutcome {
  data: unknown;
  events: DomainEvent[];
}
