import type { EventRecord } from '../events';

/**
 * The event log (table `events`): every domain event, stored in the transaction of the change that raised it and
 * numbered by a sequence the store gives (`metadata.sequence_number`, ascending, never reused).
 */
export interface EventRepository {
  /**
   * Stores an event and returns its sequence number and its id, both given by the store (the event's own
   * `event_id` and `metadata.sequence_number` are ignored).
   */
  insertEvent(event: EventRecord): { seq: number; event_id: string };
  /** The highest stored sequence number (0 when none). */
  lastEventSeq(): number;
  /** Stored events with a sequence number above `afterSeq`, in order, at most `limit`. */
  listEventsSince(afterSeq: number, limit: number): EventRecord[];
  /** Stored events with one correlation id (the events of one call), in order. */
  listEventsByCorrelation(correlationId: string): EventRecord[];
  /**
   * Stored events raised by one caller (`caused_by.client_type` and `caused_by.user`, exact) with a sequence
   * number below `beforeSeq`, NEWEST FIRST, at most `limit`, leaving out the editor's text edits (events
   * source.text_edited and source.text_reconciled, and coding.segment_uncoded with reason "text deleted",
   * which a text edit raises): the history undo and redo walk back through (src/domain/undoRedo.ts).
   */
  listUndoHistoryBefore(clientType: string, user: string, beforeSeq: number, limit: number): EventRecord[];
  /** The newest `session.connected` event of session `sessionId` with a sequence number below `beforeSeq`, if any. */
  findSessionConnected(sessionId: string, beforeSeq: number): EventRecord | undefined;
}
