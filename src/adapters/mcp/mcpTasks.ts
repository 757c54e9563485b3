/**
 * MCP tasks for held calls (issue 14 item 6; MCP 2025-11-25 "basic/utilities/tasks", experimental): a client that
 * declares the `tasks` capability may augment a `tools/call` with `params.task`; the answer is then a task
 * (`CreateTaskResult`) instead of the tool result. A call the trust layer holds for the researcher's approval
 * becomes a task in status `working` (its `pollInterval` is the pending answer's `poll_after_ms`) that completes
 * with the tool's real result when the researcher approves, and fails (an `isError` result) when the researcher
 * rejects it, it times out, or the approved call fails. A call that runs at once becomes a task already completed
 * (or failed) with its result. `tasks/get`, `tasks/result` (waits for the decision), `tasks/list` and
 * `tasks/cancel` (withdraws the pending request: AgentContext.withdraw) serve the tasks of the caller's own
 * credential only; another credential's task id is unknown (-32602).
 *
 * The v2 SDK (2.4.0) keeps the 2025-11-25 task messages as wire vocabulary only, with no task runtime, so the
 * store is ours. The decision comes from the pipeline's approval records (the adapter kit's listApprovals) and its
 * `approval.*` events; nothing here decides anything. Tasks live in memory, in the store of one MCP endpoint
 * (all its stateless HTTP requests share it) or of one stdio connection.
 */
import { randomUUID } from 'node:crypto';
import {
  ProtocolError,
  ProtocolErrorCode,
  RELATED_TASK_META_KEY,
  type CallToolResult,
  type McpServer,
  type ServerContext,
  type Task,
} from '@modelcontextprotocol/server';
import { isoTime } from '../../core/clock';
import type { ApprovalRecord } from '../../domain/ports';
import type { AgentContext } from '../../agent/agentContext';
import type { EventSubscription } from '../../agent/eventHub';
import { listApprovals } from '../../agent/kit';
import type { Caller, PendingApproval } from '../../agent/pipeline';

/** The server's `capabilities.tasks` (2025-11-25): task-augmented `tools/call`, `tasks/list` and `tasks/cancel`. */
export const MCP_TASKS_CAPABILITY = { list: {}, cancel: {}, requests: { tools: { call: {} } } };

/** The `_meta` key of a task answer naming the approval request behind it (for get_approval_status and GET /approvals). */
export const TASK_REQUEST_META_KEY = 'marginalia/request_id';

/** How long a task is kept after it was created when the client asks for no `ttl`, in milliseconds (1 hour). */
export const DEFAULT_TASK_TTL_MS = 60 * 60_000;
/** The longest `ttl` granted, in milliseconds (24 hours). */
export const MAX_TASK_TTL_MS = 24 * 60 * 60_000;
/** Tasks kept at most per store; past it the oldest finished task (else the oldest) is forgotten. */
export const MAX_TASKS = 1000;
/** Tasks per `tasks/list` page. */
const PAGE_SIZE = 100;
/** How often a waiting `tasks/result` re-reads its request even without an approval event, in milliseconds. */
const RECHECK_MS = 5000;

interface Entry {
  task: Task;
  /** the credential the task belongs to ({@link ownerKey}) */
  owner: string;
  /** the approval request of a held call; absent for a call that ran at once */
  requestId?: string;
  /** the tool result once the task is terminal */
  result?: CallToolResult;
}

/** Who a task belongs to: the researcher, or an agent credential (its sessions share its tasks), else the session. */
export function ownerKey(caller: Caller): string {
  if (caller.researcher) return 'researcher';
  return caller.agent !== undefined ? `agent:${caller.agent}` : `session:${caller.session_id}`;
}

/** A value as structuredContent: objects as they are, anything else under `value` (MCP wants an object). */
export function asStructured(data: unknown): Record<string, unknown> {
  return data !== null && typeof data === 'object' && !Array.isArray(data) ? (data as Record<string, unknown>) : { value: data };
}

function parseJson(text: string | null): unknown {
  if (text === null) return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function failure(text: string, structured: Record<string, unknown>): CallToolResult {
  return { isError: true, content: [{ type: 'text', text }], structuredContent: structured };
}

/**
 * The tool result and task status of a decided approval request: completed: the data the approved call returned;
 * failed: `{error, error_code}` of the approved call; rejected (by the researcher, by timeout, or withdrawn):
 * `{error, status: "rejected", request_id, reason, timed_out}` with isError (nothing ran, so no error code).
 */
export function settledOf(record: ApprovalRecord): { status: Task['status']; message: string; result: CallToolResult } {
  if (record.status === 'completed') {
    const data = parseJson(record.result);
    return {
      status: 'completed',
      message: `Approved${record.decided_by_coder ? ` by ${record.decided_by_coder}` : ''} and run.`,
      result: { content: [{ type: 'text', text: JSON.stringify(data) }], structuredContent: asStructured(data) },
    };
  }
  if (record.status === 'failed') {
    const code = record.error_code ?? 'TOOL_EXECUTION_ERROR';
    const error = record.reason ?? `${record.tool} failed after it was approved`;
    return { status: 'failed', message: `Approved, but the call failed: ${code}`, result: failure(`${code}: ${error}`, { error, error_code: code }) };
  }
  const timedOut = record.reason === 'timeout';
  const error = timedOut
    ? `Nobody decided ${record.tool} in time: the request was rejected automatically`
    : `The request to run ${record.tool} was rejected${record.decided_by_coder ? ` by ${record.decided_by_coder}` : ''}${record.reason ? `: ${record.reason}` : ''}`;
  return {
    status: 'failed',
    message: error,
    result: failure(`REJECTED: ${error}. Nothing changed.`, {
      error,
      status: 'rejected',
      request_id: record.request_id,
      reason: record.reason,
      timed_out: timedOut,
    }),
  };
}

/**
 * The tasks of one MCP endpoint or stdio connection (see the file comment). Every method takes the caller of the
 * request and serves only that credential's tasks. Errors are MCP protocol errors: -32602 for an unknown task id,
 * an invalid cursor, or cancelling a finished task.
 */
export class McpTaskStore {
  private readonly entries = new Map<string, Entry>();
  private readonly waiters = new Set<() => void>();
  private readonly subscription: EventSubscription;
  private readonly statusListeners = new Set<(owner: string, task: Task) => void>();
  private statusCheck: NodeJS.Immediate | undefined;

  constructor(private readonly agent: AgentContext) {
    // any decision (approval.granted, .denied, .failed; a timeout sweep) or a lost event wakes the waiting tasks/result
    this.subscription = agent.hub.subscribe(() => this.onDecision(), { patterns: ['approval.*'] });
  }

  /**
   * Calls `listener` with each held call's task once it finished (decided, timed out, withdrawn; with its credential's
   * {@link ownerKey} and the task as tasks/get answers it), for `notifications/tasks/status` where the transport can
   * push (stdio). Returns the function that stops it.
   */
  onStatus(listener: (owner: string, task: Task) => void): () => void {
    this.statusListeners.add(listener);
    return () => void this.statusListeners.delete(listener);
  }

  /** A `working` task for a held call (its pending answer `pending`). `ttl`: the client's wish, in milliseconds. */
  held(caller: Caller, pending: PendingApproval, ttl: number | undefined): Task {
    const untilExpiry = Date.parse(pending.expires_at) - Date.now();
    const entry = this.add(caller, 'working', pending.message, ttl, Number.isFinite(untilExpiry) ? untilExpiry + 60_000 : 0);
    entry.requestId = pending.request_id;
    entry.task.pollInterval = pending.poll_after_ms;
    return { ...entry.task };
  }

  /** A task already finished with `result` (a call that was not held): completed, or failed for an `isError` result. */
  finished(caller: Caller, result: CallToolResult, ttl: number | undefined): Task {
    const entry = this.add(caller, result.isError ? 'failed' : 'completed', result.isError ? 'The call failed' : 'Done', ttl, 0);
    entry.result = result;
    return { ...entry.task };
  }

  /** The approval request behind task `taskId` (undefined for a call that was not held). */
  requestOf(taskId: string): string | undefined {
    return this.entries.get(taskId)?.requestId;
  }

  /** tasks/get. Errors: -32602 unknown task. */
  get(caller: Caller, taskId: string): Task {
    return { ...this.refreshed(this.own(caller, taskId)).task };
  }

  /**
   * tasks/result: the tool result once the task is terminal, waiting for the researcher's decision until then
   * (or until `signal` aborts). The result's `_meta` relates it to the task. Errors: -32602 unknown task.
   */
  async result(caller: Caller, taskId: string, signal?: AbortSignal): Promise<CallToolResult> {
    let entry = this.refreshed(this.own(caller, taskId));
    while (entry.result === undefined) {
      await this.nextWake(signal);
      if (signal?.aborted) throw new ProtocolError(ProtocolErrorCode.InternalError, 'tasks/result was cancelled before the task finished');
      entry = this.refreshed(this.own(caller, taskId));
    }
    return { ...entry.result, _meta: { ...entry.result._meta, [RELATED_TASK_META_KEY]: { taskId } } };
  }

  /** tasks/list: the caller's tasks, oldest first, {@link PAGE_SIZE} a page. Errors: -32602 invalid cursor. */
  list(caller: Caller, cursor: string | undefined): { tasks: Task[]; nextCursor?: string } {
    this.reap();
    const owner = ownerKey(caller);
    const mine = [...this.entries.values()].filter((e) => e.owner === owner);
    const start = cursor === undefined ? 0 : Number(cursor);
    if (!Number.isInteger(start) || start < 0 || start > mine.length)
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Invalid cursor: ${String(cursor)}`);
    const page = mine.slice(start, start + PAGE_SIZE).map((e) => ({ ...this.refreshed(e).task }));
    return start + PAGE_SIZE < mine.length ? { tasks: page, nextCursor: String(start + PAGE_SIZE) } : { tasks: page };
  }

  /**
   * tasks/cancel: withdraws the pending request behind a working task (AgentContext.withdraw: rejected with the
   * reason `withdrawn by the agent`, approval.denied) and marks the task cancelled. Errors: -32602 unknown task, or
   * a task already finished (also one decided a moment before the withdrawal).
   */
  cancel(caller: Caller, taskId: string): Task {
    const entry = this.refreshed(this.own(caller, taskId));
    if (entry.result === undefined && entry.requestId !== undefined) {
      const out = this.agent.withdraw(caller, entry.requestId);
      if (out.envelope.success) {
        const reason = 'Cancelled: the request was withdrawn before the researcher decided';
        this.settle(
          entry,
          'cancelled',
          reason,
          failure(`CANCELLED: ${reason}. Nothing changed.`, { error: reason, status: 'cancelled', request_id: entry.requestId }),
        );
        return { ...entry.task };
      }
      if (out.envelope.error_code !== 'APPROVAL_NOT_PENDING')
        throw new ProtocolError(ProtocolErrorCode.InvalidParams, `${out.envelope.error_code}: ${out.envelope.error}`);
      this.refreshed(entry);
    }
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Cannot cancel task ${taskId}: it is already ${entry.task.status}`);
  }

  /** Forgets every task and stops following the approval events. */
  dispose(): void {
    this.subscription.close();
    if (this.statusCheck) clearImmediate(this.statusCheck);
    this.statusListeners.clear();
    this.entries.clear();
    this.wake();
  }

  private add(caller: Caller, status: Task['status'], message: string, ttl: number | undefined, atLeast: number): Entry {
    this.reap();
    const now = isoTime(Date.now());
    const granted = Math.min(MAX_TASK_TTL_MS, Math.max(ttl ?? DEFAULT_TASK_TTL_MS, atLeast, 60_000));
    const entry: Entry = {
      owner: ownerKey(caller),
      task: { taskId: randomUUID(), status, statusMessage: message, createdAt: now, lastUpdatedAt: now, ttl: granted },
    };
    this.entries.set(entry.task.taskId, entry);
    if (this.entries.size > MAX_TASKS) {
      const oldest = [...this.entries.values()].find((e) => e.result !== undefined) ?? this.entries.values().next().value;
      if (oldest) this.entries.delete(oldest.task.taskId);
    }
    return entry;
  }

  /** Task `taskId` of the caller's credential. Errors: -32602 (unknown, expired, or another credential's). */
  private own(caller: Caller, taskId: string): Entry {
    this.reap();
    const entry = this.entries.get(taskId);
    if (!entry || entry.owner !== ownerKey(caller))
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Failed to retrieve task: no task ${taskId.slice(0, 100)}`);
    return entry;
  }

  /** `entry` with the state of its approval request: settled once the request is no longer pending. */
  private refreshed(entry: Entry): Entry {
    if (entry.result !== undefined || entry.requestId === undefined) return entry;
    const id = entry.requestId;
    if (listApprovals(this.agent, 'pending').some((a) => a.request_id === id)) return entry;
    const record = listApprovals(this.agent).find((a) => a.request_id === id);
    if (!record) {
      this.settle(
        entry,
        'failed',
        'The approval request is gone',
        failure('The approval request behind this task no longer exists', { error: 'gone', request_id: id }),
      );
      return entry;
    }
    const settled = settledOf(record);
    this.settle(entry, settled.status, settled.message, settled.result);
    return entry;
  }

  /** Finishes a held call's task with `result` and tells the {@link onStatus} listeners. */
  private settle(entry: Entry, status: Task['status'], message: string, result: CallToolResult): void {
    entry.task = { ...entry.task, status, statusMessage: message, lastUpdatedAt: isoTime(Date.now()) };
    delete entry.task.pollInterval;
    entry.result = result;
    for (const l of this.statusListeners) l(entry.owner, { ...entry.task });
  }

  /** Forgets tasks older than their ttl. */
  private reap(): void {
    const now = Date.now();
    for (const [id, e] of this.entries) if (Date.parse(e.task.createdAt) + (e.task.ttl ?? DEFAULT_TASK_TTL_MS) <= now) this.entries.delete(id);
  }

  /** An approval event: wakes the waiting tasks/result and, once the publishing is over, tells listeners of the tasks it finished. */
  private onDecision(): void {
    this.wake();
    if (this.statusListeners.size === 0 || this.statusCheck) return;
    this.statusCheck = setImmediate(() => {
      this.statusCheck = undefined;
      // settling tells the listeners (settle); tasks a waiting tasks/result settled already told them
      for (const entry of [...this.entries.values()]) this.refreshed(entry);
    });
  }

  private wake(): void {
    for (const w of [...this.waiters]) w();
  }

  /** Resolves at the next approval event, after {@link RECHECK_MS}, or when `signal` aborts. */
  private nextWake(signal: AbortSignal | undefined): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.waiters.delete(done);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, RECHECK_MS);
      this.waiters.add(done);
      signal?.addEventListener('abort', done, { once: true });
    });
  }
}

/** What {@link registerTaskHandlers} needs from the MCP server instance it serves. */
export interface TaskHandlerDeps {
  store: McpTaskStore;
  /** the caller of a request; throws the MCP protocol error of a caller that cannot be resolved */
  caller(ctx: ServerContext): Caller;
  /** whether the instance serves tool `name` */
  hasTool(name: string): boolean;
  /** one tools/call of `who` through the pipeline: the tool result, and the pending answer of a held call */
  run(who: Caller, name: string, args: unknown, ctx: ServerContext): Promise<{ result: CallToolResult; pending?: PendingApproval }>;
}

type RawHandler = (request: unknown, ctx: ServerContext) => Promise<unknown>;

/**
 * Whether the client of `server` declared the `tasks` capability: in its `initialize` (stdio, and the HTTP request
 * that carried the handshake); a stateless 2025 HTTP request after the handshake arrives without it, and then the
 * task augmentation itself is the client's word that it understands tasks.
 */
function clientDeclaresTasks(server: McpServer): boolean {
  const caps = server.server.getClientCapabilities() as { tasks?: unknown } | undefined;
  return caps === undefined || caps.tasks !== undefined;
}

/**
 * Serves MCP tasks on a 2025-era server instance (see the file comment): a task-augmented `tools/call` from a
 * client that declared the capability is answered with a task (held: `working`; otherwise already finished), every
 * other `tools/call` by the SDK's own handler as before; `tasks/get`, `tasks/result`, `tasks/list` and
 * `tasks/cancel` from the store. The SDK's 2025 wire seam checks every `tools/call` answer as a CallToolResult,
 * so the CreateTaskResult also carries an empty `content`; its `_meta` names the approval request of a held call.
 */
export function registerTaskHandlers(server: McpServer, deps: TaskHandlerDeps): void {
  // the SDK's own tools/call handler (McpServer's: input and output checks), kept for calls that are not tasks
  const plain = (server.server as unknown as { _getRequestHandler(method: string): RawHandler | undefined })._getRequestHandler('tools/call');
  if (!plain) throw new Error('registerTaskHandlers: register the tools first');
  server.server.setRequestHandler('tools/call', async (request, ctx) => {
    const wish = request.params.task as { ttl?: number } | undefined;
    if (wish === undefined || !clientDeclaresTasks(server)) return (await plain(request, ctx)) as CallToolResult;
    if (!deps.hasTool(request.params.name)) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Tool ${request.params.name} not found`);
    const who = deps.caller(ctx);
    const out = await deps.run(who, request.params.name, request.params.arguments, ctx);
    const task = out.pending ? deps.store.held(who, out.pending, wish.ttl) : deps.store.finished(who, out.result, wish.ttl);
    const meta = out.pending
      ? { [TASK_REQUEST_META_KEY]: out.pending.request_id, 'io.modelcontextprotocol/model-immediate-response': out.pending.message }
      : undefined;
    return { task, content: [], ...(meta ? { _meta: meta } : {}) } as unknown as CallToolResult;
  });
  const withRequest = (taskId: string, task: Task) => {
    const requestId = deps.store.requestOf(taskId);
    return requestId ? { ...task, _meta: { [TASK_REQUEST_META_KEY]: requestId } } : task;
  };
  // the 2025 task methods are wire vocabulary of the SDK's 2025 codec (validated there) but absent from its public types
  const on = server.server.setRequestHandler.bind(server.server) as unknown as (
    method: string,
    handler: (request: { params?: { taskId?: string; cursor?: string } }, ctx: ServerContext) => unknown,
  ) => void;
  const idOf = (request: { params?: { taskId?: string } }): string => request.params?.taskId ?? '';
  on('tasks/get', (request, ctx) => withRequest(idOf(request), deps.store.get(deps.caller(ctx), idOf(request))));
  on('tasks/result', (request, ctx) => deps.store.result(deps.caller(ctx), idOf(request), ctx.mcpReq.signal));
  on('tasks/list', (request, ctx) => deps.store.list(deps.caller(ctx), request.params?.cursor));
  on('tasks/cancel', (request, ctx) => withRequest(idOf(request), deps.store.cancel(deps.caller(ctx), idOf(request))));
}
