import { fail, ok, type Envelope } from '../../core/envelope';
import { isToolError, ToolError } from '../../core/errors';
import { parseStrictJsonText, readStrictLines, type StrictLineItem } from '../../core/strictJson';
import type { EventRecord } from '../../domain/events';
import type { AgentContext } from '../../agent/agentContext';
import type { Caller, ToolPipeline } from '../../agent/pipeline';
import type { ClientType } from '../../agent/sessions';
import {
  approvalStatusOf,
  decideApproval,
  logCall,
  MAX_REASON_LENGTH,
  openSubscription,
  parsePatterns,
  parseSeq,
  type ApprovalStatus,
  type CallLogSink,
  type KitSubscription,
} from '../../agent/kit';
import { approvalOut } from '../../tools/approvalTools';

/** Longest accepted command line, bytes (the HTTP server's body limit). */
export const CLI_MAX_LINE_BYTES = 64 * 1024 * 1024;
/** Most subscriptions one CLI session may hold. */
export const MAX_CLI_SUBSCRIPTIONS = 20;

/** Where a subscription's deliveries go (stderr, as JSON lines). */
export interface CliEventSink {
  /** one event; false when the output's buffer is full (delivery pauses until {@link CliBackend.resumeAll}) */
  event(e: EventRecord): boolean;
  /** the server's buffer overflowed; the subscription replays the gap by itself */
  overflow(notice: { last_delivered_seq: number; dropped: number }): void;
  /** the subscription ended without an unsubscribe (the owner went away) */
  ended(reason: string): void;
}

/** What a subscribe answers. */
export interface CliSubscription {
  subscription_id: string;
  /** the patterns in force (the configured defaults when none were given) */
  patterns: readonly string[];
  /** replay started after this sequence number (null: live events only) */
  since: number | null;
}

/**
 * What the CLI line protocol runs against: the agent context of a project this process opened itself
 * ({@link LocalCliBackend}), or the HTTP server of the process that owns the project (forwardBackend.ts).
 * Every method answers the spec's envelope; none throws except {@link subscribe} (ToolError).
 */
export interface CliBackend {
  readonly mode: 'local' | 'forward';
  /** the session the commands run in */
  readonly sessionId: string;
  call(tool: string, args: Record<string, unknown>): Promise<Envelope>;
  approve(requestId: string, editedArguments?: Record<string, unknown>): Promise<Envelope>;
  reject(requestId: string, reason?: string): Promise<Envelope>;
  listTools(): Promise<Envelope>;
  listApprovals(status?: ApprovalStatus): Promise<Envelope>;
  heartbeat(): Promise<Envelope>;
  /**
   * Subscribes; `sinkFor` is called once with the new subscription's id. Delivery starts with
   * {@link startDelivery} (after the subscribe response is written), or, for a stream the owner runs, as
   * soon as it opens.
   * Errors (thrown ToolError): INVALID_ARGUMENTS, SESSION_NOT_FOUND, SESSION_EXPIRED, UNAUTHORIZED, NO_PROJECT.
   */
  subscribe(patterns: string[], since: number | undefined, sinkFor: (subscriptionId: string) => CliEventSink): Promise<CliSubscription>;
  /** starts delivering a subscription's events (replay first); no-op when running or unknown */
  startDelivery(subscriptionId: string): void;
  /** false when unknown */
  unsubscribe(subscriptionId: string): boolean;
  /** resumes subscriptions paused because the event output was full */
  resumeAll(): void;
  /** true while a subscription waits for the event output to drain (events are held back) */
  hasPaused(): boolean;
  /** ends every subscription and the session */
  close(): Promise<void>;
}

/** A writable the protocol writes lines to (process.stdout, process.stderr, or a test stream). */
export interface LineOutput {
  write(chunk: string): boolean;
  once(event: 'drain', listener: () => void): unknown;
  on(event: 'drain', listener: () => void): unknown;
  off(event: 'drain', listener: () => void): unknown;
}

/** One item of {@link readLines} (see `StrictLineItem` in src/core/strictJson.ts). */
export type LineItem = StrictLineItem;

/**
 * Splits a byte stream into strictly decoded UTF-8 lines: `readStrictLines` of src/core/strictJson.ts (one
 * implementation for the CLI and the MCP stdio forwarder), at most `maxBytes` per line.
 */
export function readLines(input: AsyncIterable<Buffer | string>, maxBytes = CLI_MAX_LINE_BYTES): AsyncGenerator<LineItem> {
  return readStrictLines(input, maxBytes);
}

/** The members each op accepts besides `id` and `op`. */
const OPS: Record<string, readonly string[]> = {
  call: ['tool', 'arguments'],
  subscribe: ['patterns', 'since'],
  unsubscribe: ['subscription_id'],
  approve: ['request_id', 'arguments'],
  reject: ['request_id', 'reason'],
  list_tools: [],
  list_approvals: ['status'],
  heartbeat: [],
};

function objectArg(v: unknown, what: string): Record<string, unknown> | undefined {
  if (v === undefined) return undefined;
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new ToolError('INVALID_ARGUMENTS', `"${what}" must be a JSON object`);
  return v as Record<string, unknown>;
}

function requestIdArg(v: unknown, op: string): string {
  if (typeof v !== 'string' || v.length === 0 || v.length > 200)
    throw new ToolError('INVALID_ARGUMENTS', `${op} needs "request_id" (a string from a pending_approval answer)`);
  return v;
}

/**
 * Runs one command object against `backend` and returns its envelope. Commands (`id` is echoed by the
 * caller): `{op:'call', tool, arguments?}`, `{op:'subscribe', patterns?, since?}`,
 * `{op:'unsubscribe', subscription_id}`, `{op:'approve', request_id, arguments?}`,
 * `{op:'reject', request_id, reason?}`, `{op:'list_tools'}`, `{op:'list_approvals', status?}`,
 * `{op:'heartbeat'}`. Never throws: a bad command is an INVALID_ARGUMENTS envelope. After a successful
 * subscribe, call `backend.startDelivery(data.subscription_id)` once the response is out.
 */
export async function runCommand(backend: CliBackend, msg: Record<string, unknown>, sinkFor: (subscriptionId: string) => CliEventSink): Promise<Envelope> {
  try {
    const op = msg.op;
    if (typeof op !== 'string' || !Object.prototype.hasOwnProperty.call(OPS, op))
      throw new ToolError('INVALID_ARGUMENTS', `"op" must be one of ${Object.keys(OPS).join(', ')}`);
    const extra = Object.keys(msg).filter((k) => k !== 'id' && k !== 'op' && !(OPS[op] as readonly string[]).includes(k));
    if (extra.length > 0)
      throw new ToolError(
        'INVALID_ARGUMENTS',
        `Unexpected member(s) ${extra.join(', ')} for op ${op}; it takes ${['id', ...(OPS[op] as readonly string[])].join(', ')}`,
      );
    switch (op) {
      case 'call': {
        if (typeof msg.tool !== 'string' || !msg.tool) throw new ToolError('INVALID_ARGUMENTS', 'call needs "tool" (a name from list_tools)');
        return await backend.call(msg.tool, objectArg(msg.arguments, 'arguments') ?? {});
      }
      case 'approve':
        return await backend.approve(requestIdArg(msg.request_id, op), objectArg(msg.arguments, 'arguments'));
      case 'reject': {
        if (msg.reason !== undefined && typeof msg.reason !== 'string') throw new ToolError('INVALID_ARGUMENTS', '"reason" must be a string');
        return await backend.reject(requestIdArg(msg.request_id, op), msg.reason === undefined ? undefined : msg.reason.slice(0, MAX_REASON_LENGTH));
      }
      case 'subscribe': {
        const patterns = parsePatterns(msg.patterns);
        const since = parseSeq(msg.since, 'since');
        return ok(await backend.subscribe(patterns, since, sinkFor));
      }
      case 'unsubscribe': {
        const sid = msg.subscription_id;
        if (typeof sid !== 'string' || !backend.unsubscribe(sid))
          throw new ToolError('INVALID_ARGUMENTS', `No subscription ${String(sid).slice(0, 100)} in this session`);
        return ok({ subscription_id: sid, unsubscribed: true });
      }
      case 'list_tools':
        return await backend.listTools();
      case 'list_approvals':
        return await backend.listApprovals(approvalStatusOf(msg.status));
      default:
        return await backend.heartbeat();
    }
  } catch (e) {
    if (isToolError(e)) return fail(e.code, e.message, e.details);
    return fail('TOOL_EXECUTION_ERROR', `The command failed unexpectedly: ${(e as Error).message}`);
  }
}

/** Writes `text` and waits for 'drain' when the output's buffer is full. */
async function writeLine(out: LineOutput, value: unknown): Promise<void> {
  if (!out.write(`${JSON.stringify(value)}\n`)) await new Promise<void>((resolve) => out.once('drain', resolve));
}

/**
 * The CLI adapter's line protocol (agent-context spec, section 4: "stdin commands, stdout responses,
 * stderr events"): reads one JSON command per line from `input`, runs them one after another against
 * `backend`, and writes one response per line to `responses`: the spec envelope plus the command's `id`
 * (`{"id":1,"success":true,"data":...}`; `id` is null when the command had none). A line that is not strict
 * JSON (not UTF-8, a lone surrogate escape, a duplicated key, a syntax error: src/core/strictJson.ts) gets an
 * INVALID_JSON envelope with the byte offset in `details`, one that is not an object or names an unknown op an INVALID_ARGUMENTS
 * envelope; processing continues. Blank lines are ignored. Events of subscriptions are written to
 * `events` as `{"type":"event","subscription_id":...,"event":{...}}` lines (overflow notices as
 * `{"type":"overflow",...}`, a subscription that ended by itself as `{"type":"subscription_ended",...}`);
 * when `events` is full, delivery pauses and resumes from the event store once it drains, losing nothing.
 * Resolves at the end of `input` (EOF), after the last response is written and the events held back by a
 * full `events` output have been written (waiting at most `flushMs`, default 5000); the caller then
 * closes the backend.
 */
export async function runLineProtocol(
  input: AsyncIterable<Buffer | string>,
  backend: CliBackend,
  responses: LineOutput,
  events: LineOutput,
  flushMs = 5000,
): Promise<void> {
  const onDrain = () => backend.resumeAll();
  events.on('drain', onDrain);
  const sinkFor = (subscription_id: string): CliEventSink => ({
    event: (event) => events.write(`${JSON.stringify({ type: 'event', subscription_id, event })}\n`),
    overflow: (n) => void events.write(`${JSON.stringify({ type: 'overflow', subscription_id, ...n, resumed: true })}\n`),
    ended: (reason) => void events.write(`${JSON.stringify({ type: 'subscription_ended', subscription_id, reason })}\n`),
  });
  try {
    for await (const item of readLines(input)) {
      if ('tooLong' in item) {
        await writeLine(responses, {
          id: null,
          ...fail('INVALID_ARGUMENTS', `The command line is ${item.tooLong} bytes; at most ${CLI_MAX_LINE_BYTES} are accepted`),
        });
        continue;
      }
      if ('invalid' in item) {
        await writeLine(responses, { id: null, ...fail(item.invalid.code, item.invalid.message, item.invalid.details) });
        continue;
      }
      if (item.line.trim() === '') continue;
      let msg: unknown;
      try {
        // strict: no lone surrogate escape, no duplicated key (src/core/strictJson.ts)
        msg = parseStrictJsonText(item.line, 'The line');
      } catch (e) {
        const err = isToolError(e) ? e : new ToolError('INVALID_JSON', `The line is not valid JSON: ${(e as Error).message}`);
        await writeLine(responses, { id: null, ...fail(err.code, err.message, err.details) });
        continue;
      }
      if (msg === null || typeof msg !== 'object' || Array.isArray(msg)) {
        await writeLine(responses, {
          id: null,
          ...fail('INVALID_ARGUMENTS', 'Each line must be a JSON object such as {"id":1,"op":"call","tool":"list_codes","arguments":{}}'),
        });
        continue;
      }
      const id = (msg as { id?: unknown }).id ?? null;
      const envelope = await runCommand(backend, msg as Record<string, unknown>, sinkFor);
      await writeLine(responses, { id, ...envelope });
      // the client knows the subscription's id before its first event
      if (envelope.success && (msg as { op?: unknown }).op === 'subscribe') backend.startDelivery((envelope.data as CliSubscription).subscription_id);
    }
    // EOF: let events held back by a full output through (each drain resumes delivery), for a while
    const deadline = Date.now() + flushMs;
    while (backend.hasPaused() && Date.now() < deadline) {
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, 50);
        events.once('drain', () => {
          clearTimeout(t);
          setImmediate(resolve);
        });
      });
    }
  } finally {
    events.off('drain', onDrain);
  }
}

// ---- the local backend: this process owns the project ----------------------------------------------

/** Options of {@link LocalCliBackend}. */
export interface LocalBackendOptions {
  agent: AgentContext;
  /** for list_tools and the blind-coding filter of subscriptions; every call goes through `agent` */
  pipeline: ToolPipeline;
  /** `Bearer <token>`: the agent token, or the reviewer token for the researcher */
  authorization: string;
  clientName: string;
  clientType: ClientType;
  /** the call log (adapter kit): one line per call and decision, with the status `cli` (the CLI writes none on stderr; hosts and tests may listen) */
  onCall?: CallLogSink;
}

/**
 * The backend of a CLI process that opened the project itself: one session opened through the agent
 * context with the presented token (so an agent's Suggest/Require calls wait for approval and only the
 * researcher's token may approve), heartbeats while the process runs, subscriptions on the event hub.
 * Errors of the constructor: UNAUTHORIZED (bad token), SESSION_LIMIT.
 */
export class LocalCliBackend implements CliBackend {
  readonly mode = 'local' as const;
  readonly sessionId: string;
  private readonly caller: Caller;
  private readonly subs = new Map<string, KitSubscription>();
  private readonly beat: NodeJS.Timeout;

  constructor(private readonly opts: LocalBackendOptions) {
    const { session, caller } = opts.agent.openSession({ authorization: opts.authorization, client_type: opts.clientType, client_name: opts.clientName });
    this.sessionId = session.session_id;
    this.caller = caller;
    // a CLI session lives as long as the process: keep it from expiring while the user thinks
    this.beat = setInterval(() => {
      try {
        opts.agent.sessions.heartbeat(this.sessionId);
      } catch {
        // ended: the next command says so
      }
    }, opts.agent.config.sessions.heartbeat_interval_seconds * 1000);
    this.beat.unref();
  }

  /** Calls a tool through the agent context (every stage applies). */
  async call(tool: string, args: Record<string, unknown>): Promise<Envelope> {
    const outcome = await this.opts.agent.call(this.caller, tool, args);
    logCall(this.opts.onCall, this.caller, tool, 'cli', outcome);
    return outcome.envelope;
  }

  /** Approves a request (only with the reviewer token): the adapter kit's decision. */
  async approve(requestId: string, editedArguments?: Record<string, unknown>): Promise<Envelope> {
    this.opts.agent.sessions.touch(this.sessionId);
    const decision = { decision: 'approve' as const, request_id: requestId, arguments: editedArguments };
    return (await decideApproval(this.opts.agent, this.caller, decision, { sink: this.opts.onCall, status: () => 'cli' })).envelope;
  }

  /** Rejects a request (only with the reviewer token): the adapter kit's decision. */
  async reject(requestId: string, reason?: string): Promise<Envelope> {
    this.opts.agent.sessions.touch(this.sessionId);
    const decision = { decision: 'reject' as const, request_id: requestId, reason };
    return (await decideApproval(this.opts.agent, this.caller, decision, { sink: this.opts.onCall, status: () => 'cli' })).envelope;
  }

  /** `{count, tools}` as `GET /tools` lists them, with the trust level that applies to this caller. */
  async listTools(): Promise<Envelope> {
    this.opts.agent.sessions.touch(this.sessionId);
    const tools = this.opts.pipeline.listTools(this.opts.pipeline.viewerOf(this.caller));
    return ok({ count: tools.length, tools });
  }

  /** `{count, approvals}`, oldest first. */
  async listApprovals(status?: ApprovalStatus): Promise<Envelope> {
    this.opts.agent.sessions.touch(this.sessionId);
    const list = this.opts.agent.listApprovals(status).map(approvalOut);
    return ok({ count: list.length, approvals: list });
  }

  /** Marks the session active. Errors (envelope): SESSION_NOT_FOUND, SESSION_EXPIRED. */
  async heartbeat(): Promise<Envelope> {
    const { session, heartbeat_interval_seconds } = this.opts.agent.sessions.heartbeat(this.sessionId);
    return ok({ session_id: session.session_id, status: session.status, last_activity: session.last_activity, heartbeat_interval_seconds });
  }

  /**
   * Subscribes on the hub through the adapter kit (the configured default patterns, the events_per_second pace,
   * the blind-coding filter, the entry in the session's subscriptions); replays after `since` first when given.
   * Errors: INVALID_ARGUMENTS, SESSION_NOT_FOUND, SESSION_EXPIRED.
   */
  async subscribe(patterns: string[], since: number | undefined, sinkFor: (subscriptionId: string) => CliEventSink): Promise<CliSubscription> {
    const { agent, pipeline } = this.opts;
    agent.sessions.touch(this.sessionId);
    if (this.subs.size >= MAX_CLI_SUBSCRIPTIONS)
      throw new ToolError('INVALID_ARGUMENTS', `At most ${MAX_CLI_SUBSCRIPTIONS} subscriptions per session; unsubscribe one first`);
    // the sink needs the subscription's id, which exists once the subscription does (nothing is delivered before open)
    const ref: { sink?: CliEventSink } = {};
    const k = openSubscription(agent, pipeline, {
      caller: this.caller,
      patterns,
      fromSeq: since ?? agent.headSeq(),
      sink: { event: (e) => (ref.sink as CliEventSink).event(e), overflow: (n) => ref.sink?.overflow(n) },
    });
    ref.sink = sinkFor(k.sub.id);
    this.subs.set(k.sub.id, k);
    return { subscription_id: k.sub.id, patterns: k.sub.effectivePatterns, since: since ?? null };
  }

  /** Opens a subscription made by {@link subscribe}: replays after `since`, then goes live. */
  startDelivery(subscriptionId: string): void {
    this.subs.get(subscriptionId)?.sub.open();
  }

  /** Ends a subscription (and its entry in the session); false when unknown. */
  unsubscribe(subscriptionId: string): boolean {
    const k = this.subs.get(subscriptionId);
    if (!k) return false;
    k.close();
    this.subs.delete(subscriptionId);
    return true;
  }

  /** Resumes subscriptions paused by a full event output. */
  resumeAll(): void {
    for (const k of this.subs.values()) k.sub.resume();
  }

  /** True while a subscription is paused by a full event output. */
  hasPaused(): boolean {
    return [...this.subs.values()].some((k) => k.sub.isPaused);
  }

  /** Ends the subscriptions and the session (session.disconnected). */
  async close(): Promise<void> {
    clearInterval(this.beat);
    for (const id of [...this.subs.keys()]) this.unsubscribe(id);
    if (this.opts.agent.sessions.get(this.sessionId)) this.opts.agent.sessions.destroy(this.sessionId, 'client_disconnected');
  }
}
