import { deriveGuid } from '../../domain/exchangeIds';
import type { Migration } from './migration';

/** GLOB pattern of a UUID as `crypto.randomUUID` writes it: lower-case hex, hyphenated (migration 9). */
const UUID_GLOB = `${'[0-9a-f]'.repeat(8)}-${'[0-9a-f]'.repeat(4)}-${'[0-9a-f]'.repeat(4)}-${'[0-9a-f]'.repeat(4)}-${'[0-9a-f]'.repeat(12)}`;

/** Migrations 9 to 11: the leaner event log, document attributes, one id space for text and AV segments. */
export const VERSIONS_9_TO_11: readonly Migration[] = [
  {
    version: 9,
    description: 'a leaner event log: derived event ids, timestamps as integers, UUIDs as 16-byte blobs',
    // The event log is append-only and was two thirds of a busy project (about 380 bytes an event, 49 of
    // them in the UNIQUE index on event_id that nothing reads). Stored from here on (src/store/eventRows.ts):
    // - event_id NULL: the event's id is derived from the project GUID and its sequence number (a UUID v5,
    //   like exchanged items' GUIDs), so it is stable and unique without being stored or indexed; an id
    //   stored before this migration is kept and wins.
    // - timestamp: milliseconds since the Unix epoch (UTC) when the ISO text is exactly what
    //   Date#toISOString gives for them, else the text as it was.
    // - session_id, correlation_id: a lower-case hyphenated UUID as its 16 bytes, anything else as text.
    // - payload: the most frequent payloads as JSON arrays of their values (written from here on; the rows
    //   copied below keep their JSON objects, which read back as before).
    // Read back, every event is the same envelope as before. The rebuild keeps sqlite_sequence, so a
    // sequence number is never given out twice.
    sql: `
CREATE TABLE events_v9 (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  event_id TEXT,
  event_type TEXT NOT NULL,
  timestamp NOT NULL,
  aggregate_type TEXT NOT NULL,
  aggregate_id TEXT NOT NULL,
  session_id,
  client_type TEXT,
  user TEXT,
  correlation_id,
  payload TEXT NOT NULL
);
INSERT INTO events_v9(seq, event_id, event_type, timestamp, aggregate_type, aggregate_id, session_id, client_type, user, correlation_id, payload)
  SELECT seq, event_id, event_type,
    CASE WHEN timestamp GLOB '[0-9][0-9][0-9][0-9]-[0-1][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-5][0-9].[0-9][0-9][0-9]Z'
          AND strftime('%Y-%m-%dT%H:%M:%fZ', timestamp) = timestamp
      THEN CAST(strftime('%s', timestamp) AS INTEGER) * 1000 + CAST(substr(timestamp, 21, 3) AS INTEGER)
      ELSE timestamp END,
    aggregate_type, aggregate_id,
    CASE WHEN session_id GLOB '${UUID_GLOB}' THEN unhex(replace(session_id, '-', '')) ELSE session_id END,
    client_type, user,
    CASE WHEN correlation_id GLOB '${UUID_GLOB}' THEN unhex(replace(correlation_id, '-', '')) ELSE correlation_id END,
    payload
  FROM events ORDER BY seq;
INSERT INTO sqlite_sequence(name, seq)
  SELECT 'events_v9', 0 WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'events_v9');
UPDATE sqlite_sequence
  SET seq = max(seq, coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'events'), 0))
  WHERE name = 'events_v9';
DROP TABLE events;
ALTER TABLE events_v9 RENAME TO events;
`,
  },
  {
    version: 10,
    description: 'document (source) attributes, typed like case attributes',
    // Issue 13 item 5, issue 15 item 5 (src/domain/sourceAttributes.ts): NVivo classifications, MAXQDA document
    // variables, QualCoder file attributes, RQDA file attributes and REFI-QDA VariableValues on sources. Same
    // design as case_attributes (migration 3): one row per source and name, keeping exactly the value column of
    // its type (text -> value_text, number -> value_number REAL, date -> value_date ISO 8601 date or datetime,
    // boolean -> value_boolean 0 or 1), plus who set it. Rows cascade with their source; the repository also
    // deletes them explicitly, so a database opened without foreign keys stays consistent.
    sql: `
CREATE TABLE source_attributes (
  source_id INTEGER NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  type TEXT NOT NULL CHECK (type IN ('text','number','date','boolean')),
  value_text TEXT,
  value_number REAL,
  value_date TEXT,
  value_boolean INTEGER CHECK (value_boolean IN (0, 1)),
  updated_at TEXT NOT NULL,
  owner TEXT NOT NULL,
  session_id TEXT,
  PRIMARY KEY (source_id, name),
  CHECK ((type = 'text') = (value_text IS NOT NULL)),
  CHECK ((type = 'number') = (value_number IS NOT NULL)),
  CHECK ((type = 'date') = (value_date IS NOT NULL)),
  CHECK ((type = 'boolean') = (value_boolean IS NOT NULL))
);
CREATE INDEX source_attributes_name ON source_attributes(name);
`,
  },
  {
    version: 11,
    description: 'one id space for text and AV segments: AV segments renumbered above every text segment id, one sequence from here on',
    // Issue 15 item 7: text segments (`segments`) and AV segments (`av_segments`) share the name segment_id but took
    // their ids from two AUTOINCREMENT sequences, so one id could name a text coding and an AV coding, and
    // delete_segment with an AV segment's id deleted an unrelated text coding.
    //
    // Renumbering. When the AV segments' ids reach into the range text segments have used (the lowest AV id is
    // at most the text high-water mark: max of sqlite_sequence 'segments' and the largest text id), every AV
    // segment gets a new id: the highest id either kind has ever used plus its rank by old id, so the new ids
    // keep their order and lie above every id given out before. The AV set is the one renumbered, whatever
    // its size: its ids are referenced from few places, all updated here, while a text segment's id is also the
    // docid of its search index entry (segment_fts), the key of segment_provenance, the segment_id of
    // orphan_segments and suggestions' results, and is read back from stored events by undo_action. Text
    // segment ids never change. References that follow each renumbered AV segment (m11_av_ids, old -> new):
    // - events: aggregate_type 'av_segment' with its aggregate_id, and the payload's segment_id (AV events are
    //   stored as JSON objects: no PAYLOAD_SHAPES entry of src/store/eventRows.ts has their keys); and
    //   approval.requested events of remove_av_segment (payload.payload.segment_id, payload.description).
    // - approval_requests: arguments and description of remove_av_segment, results of apply_av_code and
    //   remove_av_segment (segment_id).
    // - exchange_guids: rows of kinds av_coding and av_selection (local_id = the id) and note
    //   ('av_segment:<id>'). An AV segment exported before got GUIDs derived from its old id
    //   (src/domain/exchangeIds.ts): those are stored for the new id where no stored GUID existed, so its
    //   exported GUIDs stay the same (the note's only for a segment with a memo: only those have a note).
    // Nothing else stores an AV segment's id: segment_provenance, orphan_segments, suggestions and case_segments
    // concern text; segment_fts and segment_embeddings index text. Outside the database, the audit log and
    // history snapshots taken before keep the ids they recorded.
    //
    // One sequence from here on. Both sqlite_sequence rows are set to the highest id either kind has used, and
    // a trigger on each table raises both rows to every inserted id, so an AUTOINCREMENT id (max of the
    // table's sqlite_sequence row and its largest id, plus one) is above every id either kind has ever had.
    // The triggers run inside the inserting statement: replaying the journal (which records the statements
    // and their bound values) allocates the same ids, and sqlite_sequence is part of a checkpoint's file.
    // An insert with an explicit id (a snapshot restore) raises the sequence too.
    sql: `
CREATE TEMP TABLE m11_av_ids (old_id INTEGER PRIMARY KEY, new_id INTEGER NOT NULL UNIQUE);
INSERT INTO m11_av_ids(old_id, new_id)
  SELECT a.id, top.id + row_number() OVER (ORDER BY a.id)
  FROM av_segments a, (SELECT max(
      coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'segments'), 0),
      coalesce((SELECT max(id) FROM segments), 0),
      coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'av_segments'), 0),
      coalesce((SELECT max(id) FROM av_segments), 0)) AS id) AS top
  WHERE (SELECT min(id) FROM av_segments) <= max(
      coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'segments'), 0),
      coalesce((SELECT max(id) FROM segments), 0));

UPDATE OR REPLACE exchange_guids
  SET local_id = CAST((SELECT new_id FROM m11_av_ids WHERE old_id = CAST(exchange_guids.local_id AS INTEGER)) AS TEXT)
  WHERE kind IN ('av_coding', 'av_selection') AND local_id IN (SELECT CAST(old_id AS TEXT) FROM m11_av_ids);
UPDATE OR REPLACE exchange_guids
  SET local_id = 'av_segment:' || (SELECT new_id FROM m11_av_ids WHERE old_id = CAST(substr(exchange_guids.local_id, 12) AS INTEGER))
  WHERE kind = 'note' AND local_id IN (SELECT 'av_segment:' || old_id FROM m11_av_ids);
INSERT OR IGNORE INTO exchange_guids(kind, local_id, guid)
  SELECT k.kind, CAST(m.new_id AS TEXT), migration11_derived_guid(g.value, k.kind, CAST(m.old_id AS TEXT))
  FROM m11_av_ids m, (SELECT 'av_coding' AS kind UNION ALL SELECT 'av_selection') k, meta g
  WHERE g.key = 'project_guid';
INSERT OR IGNORE INTO exchange_guids(kind, local_id, guid)
  SELECT 'note', 'av_segment:' || m.new_id, migration11_derived_guid(g.value, 'note', 'av_segment:' || m.old_id)
  FROM m11_av_ids m JOIN av_segments a ON a.id = m.old_id, meta g
  WHERE g.key = 'project_guid' AND a.memo IS NOT NULL AND a.memo <> '';

UPDATE av_segments SET id = (SELECT new_id FROM m11_av_ids WHERE old_id = av_segments.id)
  WHERE id IN (SELECT old_id FROM m11_av_ids);

UPDATE events SET
    aggregate_id = CAST((SELECT new_id FROM m11_av_ids WHERE old_id = CAST(events.aggregate_id AS INTEGER)) AS TEXT),
    payload = CASE WHEN (CASE WHEN json_valid(payload) THEN json_extract(payload, '$.segment_id') END) = CAST(aggregate_id AS INTEGER)
      THEN json_set(payload, '$.segment_id', (SELECT new_id FROM m11_av_ids WHERE old_id = CAST(events.aggregate_id AS INTEGER)))
      ELSE payload END
  WHERE aggregate_type = 'av_segment' AND aggregate_id IN (SELECT CAST(old_id AS TEXT) FROM m11_av_ids);
UPDATE events SET payload = json_set(payload,
    '$.payload.segment_id', (SELECT new_id FROM m11_av_ids WHERE old_id = json_extract(events.payload, '$.payload.segment_id')),
    '$.description', CASE WHEN json_extract(payload, '$.description') = 'Remove AV Segment: segment_id=' || json_extract(payload, '$.payload.segment_id')
      THEN 'Remove AV Segment: segment_id=' || (SELECT new_id FROM m11_av_ids WHERE old_id = json_extract(events.payload, '$.payload.segment_id'))
      ELSE json_extract(payload, '$.description') END)
  WHERE aggregate_type = 'approval' AND event_type = 'approval.requested'
    AND (CASE WHEN json_valid(payload) THEN json_extract(payload, '$.action_type') END) = 'remove_av_segment'
    AND (CASE WHEN json_valid(payload) THEN json_extract(payload, '$.payload.segment_id') END) IN (SELECT old_id FROM m11_av_ids);

UPDATE approval_requests SET
    arguments = json_set(arguments, '$.segment_id', (SELECT new_id FROM m11_av_ids WHERE old_id = json_extract(approval_requests.arguments, '$.segment_id'))),
    description = CASE WHEN description = 'Remove AV Segment: segment_id=' || json_extract(arguments, '$.segment_id')
      THEN 'Remove AV Segment: segment_id=' || (SELECT new_id FROM m11_av_ids WHERE old_id = json_extract(approval_requests.arguments, '$.segment_id'))
      ELSE description END
  WHERE tool = 'remove_av_segment'
    AND (CASE WHEN json_valid(arguments) THEN json_extract(arguments, '$.segment_id') END) IN (SELECT old_id FROM m11_av_ids);
UPDATE approval_requests
  SET result = json_set(result, '$.segment_id', (SELECT new_id FROM m11_av_ids WHERE old_id = json_extract(approval_requests.result, '$.segment_id')))
  WHERE tool IN ('apply_av_code', 'remove_av_segment')
    AND (CASE WHEN json_valid(result) THEN json_extract(result, '$.segment_id') END) IN (SELECT old_id FROM m11_av_ids);

INSERT INTO sqlite_sequence(name, seq) SELECT 'segments', 0 WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'segments');
INSERT INTO sqlite_sequence(name, seq) SELECT 'av_segments', 0 WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'av_segments');
UPDATE sqlite_sequence SET seq = (
    SELECT max(max(seq), coalesce((SELECT max(id) FROM segments), 0), coalesce((SELECT max(id) FROM av_segments), 0))
    FROM sqlite_sequence WHERE name IN ('segments', 'av_segments'))
  WHERE name IN ('segments', 'av_segments');
CREATE TRIGGER segments_one_id_space AFTER INSERT ON segments BEGIN
  UPDATE sqlite_sequence SET seq = new.id WHERE name IN ('segments', 'av_segments') AND seq < new.id;
END;
CREATE TRIGGER av_segments_one_id_space AFTER INSERT ON av_segments BEGIN
  UPDATE sqlite_sequence SET seq = new.id WHERE name IN ('segments', 'av_segments') AND seq < new.id;
END;
DROP TABLE m11_av_ids;
`,
    functions: {
      // deriveGuid of src/domain/exchangeIds.ts: the GUID an export gave an item that had no stored GUID
      migration11_derived_guid: (projectGuid, kind, localId) => deriveGuid(String(projectGuid), String(kind), String(localId)),
    },
  },
];
