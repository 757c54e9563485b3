/**
 * Stage 8 and the event records: a raised domain event as its stored envelope, storing a call's events in
 * its transaction, handing committed events to subscribers (waking long polls on approval decisions), and
 * events no tool call raised.
 */
import { isoTime } from '../../core/clock';
import { newUuid } from '../../core/ids';
import type { DomainEvent, EventRecord } from '../../domain/events';
import type { OpenProject } from '../../tools/context';
import type { PipelineCore } from './core';
import { causedBy } from './provenance';
import type { Caller } from './types';

/** The envelope of `e`; `eventId` is a random UUID for an event that is not stored, else set by the store. */
export function toRecord(core: PipelineCore, e: DomainEvent, caller: Caller, correlation: string, now: number, eventId: string): EventRecord {
  return {
    event_id: eventId,
    event_type: e.event_type,
    timestamp: isoTime(now),
    aggregate_type: e.aggregate_type,
    aggregate_id: e.aggregate_id,
    caused_by: causedBy(core, caller),
    payload: e.payload,
    metadata: { correlation_id: correlation, sequence_number: 0 },
  };
}

/** Stores events in the current transaction; the store gives each its sequence number and id. */
export function storeEvents(core: PipelineCore, project: OpenProject, caller: Caller, correlation: string, now: number, raised: DomainEvent[]): EventRecord[] {
  return raised.map((e) => {
    const record = toRecord(core, e, caller, correlation, now, '');
    const stored = project.repo.insertEvent(record);
    record.metadata.sequence_number = stored.seq;
    record.event_id = stored.event_id;
    return record;
  });
}

/** Stage 8: hand the committed events to subscribers (trees, SSE, WebSocket, ...). */
export function publish(core: PipelineCore, events: EventRecord[]): void {
  if (core.decisionWaiters.size > 0) {
    for (const e of events) {
      if (e.aggregate_type !== 'approval' || e.event_type === 'approval.requested') continue;
      for (const wake of [...(core.decisionWaiters.get(e.aggregate_id) ?? [])]) wake();
    }
  }
  for (const l of core.listeners) {
    try {
      l(events);
    } catch (e) {
      core.logger.error('event listener failed', e);
    }
  }
}

/**
 * Stores and publishes events that no tool call raised (session.connected, session.disconnected).
 * Without an open project they are published unstored, with sequence number 0.
 */
export function emitSystemEvents(core: PipelineCore, caller: Caller, raised: DomainEvent[]): EventRecord[] {
  const project = core.opts.project();
  const now = core.clock.now();
  let events: EventRecord[];
  if (project) events = project.transaction(() => storeEvents(core, project, caller, newUuid(), now, raised));
  else events = raised.map((e) => toRecord(core, e, caller, newUuid(), now, newUuid()));
  publish(core, events);
  return events;
}
