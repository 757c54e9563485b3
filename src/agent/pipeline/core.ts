/**
 * The state one {@link ToolPipeline} shares with its stages (every stage module is functions of a
 * {@link PipelineCore}): the options, the registry by name, the clock and logger, the subscribers, the memo
 * cache and the waiters of get_approval_status long polls.
 */
import type { Clock } from '../../core/clock';
import { systemClock } from '../../core/clock';
import type { Logger } from '../../core/log';
import { silentLogger } from '../../core/log';
import type { EventRecord } from '../../domain/events';
import type { OpenProject } from '../../tools/context';
import type { AnyTool } from '../../tools/defineTool';
import type { MemoTable } from './memo';
import type { CallRecord, PipelineOptions, ToolListing } from './types';

/** What the stages of one pipeline share. */
export interface PipelineCore {
  readonly opts: PipelineOptions;
  /** the registry by tool name */
  readonly tools: ReadonlyMap<string, AnyTool>;
  readonly clock: Clock;
  readonly logger: Logger;
  /** subscribers to the events of every successful call (ToolPipeline.onEvents) */
  readonly listeners: Set<(events: EventRecord[]) => void>;
  /** subscribers to every finished call (ToolPipeline.onDidCall) */
  readonly callListeners: Set<(call: CallRecord) => void>;
  /** memoized reads (ToolDef.memo) per open project, valid for one write generation */
  readonly memos: WeakMap<OpenProject, MemoTable>;
  /** request id -> resolvers of get_approval_status long polls waiting for its decision (awaitDecision) */
  readonly decisionWaiters: Map<string, Set<() => void>>;
  /** the listing made for nobody in particular, built on first use */
  listing: ToolListing[] | undefined;
}

/** A fresh core for `opts` (clock: the system clock, logger: silent, when absent). */
export function createCore(opts: PipelineOptions): PipelineCore {
  return {
    opts,
    tools: new Map(opts.tools.map((t) => [t.name, t])),
    clock: opts.clock ?? systemClock,
    logger: opts.logger ?? silentLogger,
    listeners: new Set(),
    callListeners: new Set(),
    memos: new WeakMap(),
    decisionWaiters: new Map(),
    listing: undefined,
  };
}
