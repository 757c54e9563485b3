import type { EventRecord, EventType } from '../../domain/events';
import type { EventRepository, ExchangeRepository } from '../../domain/ports';
import { EventIdDeriver, payloadFromStored, payloadToStored, timestampFromStored, timestampToStored, uuidFromStored, uuidParams } from '../eventRows';
import type { ProjectStore } from '../projectStore';

/** A row of `events` as stored since migration 9 (src/store/eventRows.ts). */
interface StoredEventRow {
  seq: number;
  event_id: string | null;
  event_type: string;
  timestamp: number | string;
  aggregate_type: string;
  aggregate_id: string;
  session_id: Uint8Array | string | null;
  client_type: string | null;
  user: string | null;
  correlation_id: Uint8Array | string | null;
  payload: string;
  /** migration 14: the coder's role, its name where it differs from `user`, an agent's client name and model */
  role?: string | null;
  coder?: string | null;
  client?: string | null;
  model?: string | null;
}

/** The `caused_by` of a stored event: the coder defaults to `user`; role, client and model only where stored (migration 14). */
function causedByFromRow(r: StoredEventRow): EventRecord['caused_by'] {
  const user = r.user ?? '';
  const out: EventRecord['caused_by'] = { session_id: uuidFromStored(r.session_id) ?? '', client_type: r.client_type ?? '', user };
  if (r.role === 'researcher' || r.role === 'agent') {
    out.role = r.role;
    out.coder = r.coder ?? user;
  }
  if (r.client) out.client = r.client;
  if (r.model) out.model = r.model;
  return out;
}

/**
 * {@link EventRepository} over a {@link ProjectStore}: table `events` in its stored form (src/store/eventRows.ts).
 * Event ids are derived from the sequence number and the project GUID, read once from `project`.
 */
export class SqlEventRepository implements EventRepository {
  private eventIdDeriver: EventIdDeriver | undefined;
  constructor(
    private readonly db: ProjectStore,
    private readonly project: Pick<ExchangeRepository, 'projectGuid'>,
  ) {}

  insertEvent(e: EventRecord): { seq: number; event_id: string } {
    // the stored form (migration 9, src/store/eventRows.ts): no event id, the timestamp as milliseconds,
    // UUIDs as 16 bytes, frequent payloads as arrays of values
    const seq = this.db.run(
      `INSERT INTO events(event_type, timestamp, aggregate_type, aggregate_id, session_id, client_type, user, correlation_id, payload, role, coder, client, model)
       VALUES (?,?,?,?,coalesce(unhex(?), ?),?,?,coalesce(unhex(?), ?),?,?,?,?,?)`,
      [
        e.event_type,
        timestampToStored(e.timestamp),
        e.aggregate_type,
        e.aggregate_id,
        ...uuidParams(e.caused_by.session_id),
        e.caused_by.client_type,
        e.caused_by.user,
        ...uuidParams(e.metadata.correlation_id),
        payloadToStored(e.payload),
        e.caused_by.role ?? null,
        e.caused_by.coder !== undefined && e.caused_by.coder !== e.caused_by.user ? e.caused_by.coder : null,
        e.caused_by.client ?? null,
        e.caused_by.model ?? null,
      ],
    ).lastId;
    return { seq, event_id: this.eventIds().eventId(seq) };
  }
  lastEventSeq(): number {
    return Number(this.db.get<{ n: number | null }>('SELECT max(seq) AS n FROM events')?.n ?? 0);
  }
  listEventsSince(afterSeq: number, limit: number): EventRecord[] {
    return this.db.all<StoredEventRow>('SELECT * FROM events WHERE seq > ? ORDER BY seq LIMIT ?', [afterSeq, limit]).map((r) => this.eventFromRow(r));
  }
  listEventsByCorrelation(correlationId: string): EventRecord[] {
    return this.db
      .all<StoredEventRow>('SELECT * FROM events WHERE correlation_id = coalesce(unhex(?), ?) ORDER BY seq', uuidParams(correlationId))
      .map((r) => this.eventFromRow(r));
  }
  listUndoHistoryBefore(clientType: string, user: string, beforeSeq: number, limit: number): EventRecord[] {
    // backwards along the primary key: the scan stops after `limit` matches; text edits are left out unread
    // (a payload stored as an array of a shape has no reason: json_extract gives NULL)
    return this.db
      .all<StoredEventRow>(
        `SELECT * FROM events WHERE seq < ? AND client_type = ? AND user = ?
           AND event_type NOT IN ('source.text_edited', 'source.text_reconciled')
           AND NOT (event_type = 'coding.segment_uncoded' AND substr(payload, 1, 1) = '{' AND json_extract(payload, '$.reason') IS 'text deleted')
         ORDER BY seq DESC LIMIT ?`,
        [beforeSeq, clientType, user, limit],
      )
      .map((r) => this.eventFromRow(r));
  }
  findSessionConnected(sessionId: string, beforeSeq: number): EventRecord | undefined {
    const r = this.db.get<StoredEventRow>(
      "SELECT * FROM events WHERE seq < ? AND event_type = 'session.connected' AND aggregate_id = ? ORDER BY seq DESC LIMIT 1",
      [beforeSeq, sessionId],
    );
    return r ? this.eventFromRow(r) : undefined;
  }
  /** An `events` row as the envelope it was stored from. */
  private eventFromRow(r: StoredEventRow): EventRecord {
    return {
      event_id: r.event_id ?? this.eventIds().eventId(r.seq),
      event_type: r.event_type as EventType,
      timestamp: timestampFromStored(r.timestamp),
      aggregate_type: r.aggregate_type,
      aggregate_id: r.aggregate_id,
      caused_by: causedByFromRow(r),
      payload: payloadFromStored(r.payload),
      metadata: { correlation_id: uuidFromStored(r.correlation_id) ?? '', sequence_number: r.seq },
    };
  }
  /** Derives stored events' ids (the project GUID never changes, so it is read once). */
  private eventIds(): EventIdDeriver {
    return (this.eventIdDeriver ??= new EventIdDeriver(this.project.projectGuid()));
  }
}
