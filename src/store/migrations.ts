import type { SqlValue } from 'sql.js';
import { deriveGuid } from '../domain/exchangeIds';

/**
 * Numbered schema migrations, run on open while `PRAGMA user_version` is below their number.
 * Never edit a released migration: add a new one.
 *
 * Text positions (`start_pos`, `end_pos`) count Unicode code points of `sources.content`;
 * AV positions (`start_ms`, `end_ms`) are integer milliseconds; timestamps are ISO 8601 UTC strings.
 */
export interface Migration {
  version: number;
  description: string;
  sql: string;
  /**
   * SQL functions the migration's `sql` calls, registered on the connection (sql.js `create_function`) just
   * before it runs: for a step SQLite cannot compute, such as a SHA-1 based GUID (migration 11). Each must be
   * deterministic, so a migration run again on the same file (a crash before its checkpoint) gives the same result.
   */
  functions?: Readonly<Record<string, (...args: SqlValue[]) => SqlValue>>;
}

/** GLOB pattern of a UUID as `crypto.randomUUID` writes it: lower-case hex, hyphenated (migration 9). */
const UUID_GLOB = `${'[0-9a-f]'.repeat(8)}-${'[0-9a-f]'.repeat(4)}-${'[0-9a-f]'.repeat(4)}-${'[0-9a-f]'.repeat(4)}-${'[0-9a-f]'.repeat(12)}`;

/** SQL expression of a random UUID version 4, lower case, hyphenated: the GUID of a new entity row (migration 17). */
const SQL_RANDOM_UUID =
  "lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' || substr(lower(hex(randomblob(2))), 2) || '-' || " +
  "substr('89ab', 1 + (abs(random()) % 4), 1) || substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6)))";

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'codebook, sources, folders, segments, events',
    sql: `
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE folders (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL,
  parent_id INTEGER REFERENCES folders(id),
  owner TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE UNIQUE INDEX folders_parent_name ON folders(COALESCE(parent_id, 0), name);
CREATE TABLE sources (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL UNIQUE,
  type TEXT NOT NULL CHECK (type IN ('text','audio','video','image','pdf')),
  content TEXT,
  content_length INTEGER NOT NULL DEFAULT 0,
  memo TEXT,
  origin TEXT,
  file_path TEXT,
  mime TEXT,
  size_bytes INTEGER,
  folder_id INTEGER REFERENCES folders(id),
  owner TEXT NOT NULL,
  session_id TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE TABLE source_metadata_hints (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  source_id INTEGER NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
  language TEXT,
  topics TEXT,
  organization_suggestion TEXT,
  owner TEXT NOT NULL,
  session_id TEXT,
  created_at TEXT NOT NULL
);
CREATE TABLE categories (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL,
  name_key TEXT NOT NULL UNIQUE,
  parent_id INTEGER REFERENCES categories(id),
  memo TEXT,
  owner TEXT NOT NULL,
  session_id TEXT,
  created_at TEXT NOT NULL
);
CREATE TABLE codes (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL,
  name_key TEXT NOT NULL UNIQUE,
  color TEXT NOT NULL,
  memo TEXT,
  category_id INTEGER REFERENCES categories(id),
  owner TEXT NOT NULL,
  session_id TEXT,
  version INTEGER NOT NULL DEFAULT 1,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE TABLE segments (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  code_id INTEGER NOT NULL REFERENCES codes(id),
  source_id INTEGER NOT NULL REFERENCES sources(id),
  start_pos INTEGER NOT NULL CHECK (start_pos >= 0),
  end_pos INTEGER NOT NULL CHECK (end_pos > start_pos),
  text TEXT NOT NULL,
  memo TEXT,
  importance INTEGER NOT NULL DEFAULT 0,
  owner TEXT NOT NULL,
  session_id TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX segments_source ON segments(source_id, start_pos);
CREATE INDEX segments_code ON segments(code_id);
CREATE TABLE av_segments (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  code_id INTEGER NOT NULL REFERENCES codes(id),
  source_id INTEGER NOT NULL REFERENCES sources(id),
  start_ms INTEGER NOT NULL CHECK (start_ms >= 0),
  end_ms INTEGER NOT NULL CHECK (end_ms > start_ms),
  transcript TEXT,
  memo TEXT,
  owner TEXT NOT NULL,
  session_id TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX av_segments_source ON av_segments(source_id, start_ms);
CREATE INDEX av_segments_code ON av_segments(code_id);
CREATE TABLE events (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  event_id TEXT NOT NULL UNIQUE,
  event_type TEXT NOT NULL,
  timestamp TEXT NOT NULL,
  aggregate_type TEXT NOT NULL,
  aggregate_id TEXT NOT NULL,
  session_id TEXT,
  client_type TEXT,
  user TEXT,
  correlation_id TEXT,
  payload TEXT NOT NULL
);
`,
  },
  {
    version: 2,
    description: 'segments that lost their anchor when a source changed outside the editor',
    sql: `
CREATE TABLE orphan_segments (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  segment_id INTEGER NOT NULL,
  code_id INTEGER NOT NULL,
  source_id INTEGER NOT NULL,
  start_pos INTEGER NOT NULL,
  end_pos INTEGER NOT NULL,
  text TEXT NOT NULL,
  memo TEXT,
  importance INTEGER NOT NULL DEFAULT 0,
  owner TEXT NOT NULL,
  session_id TEXT,
  created_at TEXT NOT NULL,
  orphaned_at TEXT NOT NULL,
  reason TEXT NOT NULL
);
CREATE INDEX orphan_segments_source ON orphan_segments(source_id);
`,
  },
  {
    version: 3,
    description: 'cases: member sources, member ranges of sources, typed attributes',
    // Member rows cascade with their case and source; the repository also deletes them explicitly, so a
    // database opened without foreign keys stays consistent. `case_attributes` keeps exactly the value
    // column of its type: text -> value_text, number -> value_number (REAL), date -> value_date (ISO 8601
    // date YYYY-MM-DD or datetime), boolean -> value_boolean (0 or 1).
    sql: `
CREATE TABLE cases (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL,
  name_key TEXT NOT NULL UNIQUE,
  memo TEXT,
  owner TEXT NOT NULL,
  session_id TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE TABLE case_sources (
  case_id INTEGER NOT NULL REFERENCES cases(id) ON DELETE CASCADE,
  source_id INTEGER NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
  owner TEXT NOT NULL,
  session_id TEXT,
  created_at TEXT NOT NULL,
  PRIMARY KEY (case_id, source_id)
);
CREATE INDEX case_sources_source ON case_sources(source_id);
CREATE TABLE case_segments (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  case_id INTEGER NOT NULL REFERENCES cases(id) ON DELETE CASCADE,
  source_id INTEGER NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
  start_pos INTEGER NOT NULL CHECK (start_pos >= 0),
  end_pos INTEGER NOT NULL CHECK (end_pos > start_pos),
  text TEXT NOT NULL,
  owner TEXT NOT NULL,
  session_id TEXT,
  created_at TEXT NOT NULL
);
CREATE INDEX case_segments_case ON case_segments(case_id, source_id, start_pos);
CREATE INDEX case_segments_source ON case_segments(source_id, start_pos);
CREATE TABLE case_attributes (
  case_id INTEGER NOT NULL REFERENCES cases(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  type TEXT NOT NULL CHECK (type IN ('text','number','date','boolean')),
  value_text TEXT,
  value_number REAL,
  value_date TEXT,
  value_boolean INTEGER CHECK (value_boolean IN (0, 1)),
  updated_at TEXT NOT NULL,
  PRIMARY KEY (case_id, name),
  CHECK ((type = 'text') = (value_text IS NOT NULL)),
  CHECK ((type = 'number') = (value_number IS NOT NULL)),
  CHECK ((type = 'date') = (value_date IS NOT NULL)),
  CHECK ((type = 'boolean') = (value_boolean IS NOT NULL))
);
CREATE INDEX case_attributes_name ON case_attributes(name);
`,
  },
  {
    version: 6,
    description: 'approval requests of the trust layer (they survive a restart)',
    sql: `
CREATE TABLE approval_requests (
  request_id TEXT PRIMARY KEY,
  tool TEXT NOT NULL,
  arguments TEXT NOT NULL,
  session_id TEXT NOT NULL,
  client_type TEXT NOT NULL,
  client_name TEXT NOT NULL,
  user TEXT NOT NULL,
  trust_level TEXT NOT NULL CHECK (trust_level IN ('suggest','require')),
  description TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('pending','completed','failed','rejected')),
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  decided_at TEXT,
  decided_by TEXT,
  reason TEXT,
  result TEXT,
  error_code TEXT
);
CREATE INDEX approval_requests_status ON approval_requests(status, created_at);
`,
  },
  {
    version: 5,
    description: 'search: FTS4 indexes over source texts, segment texts and code names and memos; embedding cache',
    // External-content FTS4 tables (https://sqlite.org/fts3.html#_external_content_fts4_tables_): the text
    // stays in sources/segments/codes and only the index is stored; docid = the row's id. The triggers keep
    // each index in sync inside the writing statement's transaction, so the journal (which records the
    // statements) rebuilds the same index on replay by firing them again. The BEFORE triggers delete while
    // the old text is still in the row: FTS4 reads it from the content table to find the entries to remove.
    // Only the indexed columns fire the update triggers (renaming a source re-indexes nothing).
    // Tokenizer: unicode61 with remove_diacritics=2 (case- and accent-insensitive; emoji and punctuation are
    // separators). `search_tokenizer` (fts3tokenize) exposes the same tokenizer to the query parser.
    // `segment_embeddings` caches one vector per (model, SHA-256 of a segment's text): base64 of little-endian
    // float32 (TEXT, because the journal carries bound values as JSON).
    sql: `
CREATE VIRTUAL TABLE source_fts USING fts4(content="sources", content, tokenize=unicode61 "remove_diacritics=2");
INSERT INTO source_fts(source_fts) VALUES ('rebuild');
CREATE TRIGGER source_fts_bd BEFORE DELETE ON sources BEGIN DELETE FROM source_fts WHERE docid = old.id; END;
CREATE TRIGGER source_fts_bu BEFORE UPDATE OF content ON sources BEGIN DELETE FROM source_fts WHERE docid = old.id; END;
CREATE TRIGGER source_fts_au AFTER UPDATE OF content ON sources BEGIN INSERT INTO source_fts(docid, content) VALUES (new.id, new.content); END;
CREATE TRIGGER source_fts_ai AFTER INSERT ON sources BEGIN INSERT INTO source_fts(docid, content) VALUES (new.id, new.content); END;
CREATE VIRTUAL TABLE segment_fts USING fts4(content="segments", text, tokenize=unicode61 "remove_diacritics=2");
INSERT INTO segment_fts(segment_fts) VALUES ('rebuild');
CREATE TRIGGER segment_fts_bd BEFORE DELETE ON segments BEGIN DELETE FROM segment_fts WHERE docid = old.id; END;
CREATE TRIGGER segment_fts_bu BEFORE UPDATE OF text ON segments BEGIN DELETE FROM segment_fts WHERE docid = old.id; END;
CREATE TRIGGER segment_fts_au AFTER UPDATE OF text ON segments BEGIN INSERT INTO segment_fts(docid, text) VALUES (new.id, new.text); END;
CREATE TRIGGER segment_fts_ai AFTER INSERT ON segments BEGIN INSERT INTO segment_fts(docid, text) VALUES (new.id, new.text); END;
CREATE VIRTUAL TABLE code_fts USING fts4(content="codes", name, memo, tokenize=unicode61 "remove_diacritics=2");
INSERT INTO code_fts(code_fts) VALUES ('rebuild');
CREATE TRIGGER code_fts_bd BEFORE DELETE ON codes BEGIN DELETE FROM code_fts WHERE docid = old.id; END;
CREATE TRIGGER code_fts_bu BEFORE UPDATE OF name, memo ON codes BEGIN DELETE FROM code_fts WHERE docid = old.id; END;
CREATE TRIGGER code_fts_au AFTER UPDATE OF name, memo ON codes BEGIN INSERT INTO code_fts(docid, name, memo) VALUES (new.id, new.name, new.memo); END;
CREATE TRIGGER code_fts_ai AFTER INSERT ON codes BEGIN INSERT INTO code_fts(docid, name, memo) VALUES (new.id, new.name, new.memo); END;
CREATE VIRTUAL TABLE search_tokenizer USING fts3tokenize('unicode61', 'remove_diacritics=2');
CREATE TABLE segment_embeddings (
  model TEXT NOT NULL,
  text_hash TEXT NOT NULL,
  dims INTEGER NOT NULL CHECK (dims > 0),
  vector TEXT NOT NULL,
  created_at TEXT NOT NULL,
  PRIMARY KEY (model, text_hash)
) WITHOUT ROWID;
`,
  },
  {
    version: 4,
    description: 'suggestions (new codes, codings, merges), suggestion batches, provenance of approved codings',
    // One table for the three kinds of suggestion, so their ids are one sequence and their states one
    // machine (see src/domain/suggestions.ts): status pending -> approved (code, merge) | applied (coding) |
    // rejected | failed. `result` keeps the JSON the approval returned, so approving again returns it.
    // No foreign keys to codes, sources or segments: a suggestion is history and must not block deleting
    // what it names (approving one whose code or source is gone fails with CODE_NOT_FOUND / SOURCE_NOT_FOUND).
    // A batch's status is derived from its items' statuses, never stored.
    sql: `
CREATE TABLE suggestion_batches (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  kind TEXT NOT NULL CHECK (kind IN ('range','auto','batch_coding')),
  source_id INTEGER,
  code_id INTEGER,
  start_pos INTEGER,
  end_pos INTEGER,
  rationale TEXT,
  params TEXT,
  response TEXT CHECK (response IN ('accept','reject')),
  response_reason TEXT,
  responded_by TEXT,
  responded_by_session TEXT,
  responded_at TEXT,
  owner TEXT NOT NULL,
  session_id TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE TABLE suggestions (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  kind TEXT NOT NULL CHECK (kind IN ('code','coding','merge')),
  status TEXT NOT NULL CHECK (status IN ('pending','approved','applied','rejected','failed')),
  batch_id INTEGER REFERENCES suggestion_batches(id),
  name TEXT,
  name_key TEXT,
  color TEXT,
  memo TEXT,
  category_id INTEGER,
  sample_contexts TEXT,
  code_id INTEGER,
  target_code_id INTEGER,
  source_id INTEGER,
  start_pos INTEGER CHECK (start_pos >= 0),
  end_pos INTEGER CHECK (end_pos > start_pos),
  text TEXT,
  rationale TEXT NOT NULL,
  confidence INTEGER NOT NULL CHECK (confidence BETWEEN 0 AND 100),
  details TEXT,
  suggested_by TEXT NOT NULL,
  suggested_by_session TEXT,
  created_at TEXT NOT NULL,
  approved_by TEXT,
  approved_by_session TEXT,
  approved_at TEXT,
  rejected_by TEXT,
  rejected_by_session TEXT,
  rejected_at TEXT,
  reason TEXT,
  feedback TEXT,
  result TEXT,
  error_code TEXT,
  error TEXT,
  CHECK (kind <> 'code' OR (name IS NOT NULL AND name_key IS NOT NULL AND color IS NOT NULL)),
  CHECK (kind <> 'coding' OR (code_id IS NOT NULL AND source_id IS NOT NULL AND start_pos IS NOT NULL AND end_pos IS NOT NULL)),
  CHECK (kind <> 'merge' OR (code_id IS NOT NULL AND target_code_id IS NOT NULL))
);
CREATE INDEX suggestions_status ON suggestions(kind, status, id);
CREATE INDEX suggestions_batch ON suggestions(batch_id, id);
CREATE INDEX suggestions_source ON suggestions(source_id, start_pos);
CREATE TABLE segment_provenance (
  segment_id INTEGER PRIMARY KEY,
  suggestion_id INTEGER NOT NULL,
  batch_id INTEGER,
  rationale TEXT,
  confidence INTEGER,
  suggested_by TEXT,
  suggested_by_session TEXT,
  approved_by TEXT NOT NULL,
  approved_by_session TEXT,
  created_at TEXT NOT NULL
);
CREATE INDEX segment_provenance_suggestion ON segment_provenance(suggestion_id);
`,
  },
  {
    version: 7,
    description: 'reports: the jobs of generate_frequency_report, generate_cooccurrence_report, generate_coder_comparison',
    // One row per report job (src/domain/reports.ts). `filters` and `params` are JSON text (`params` holds what
    // is not a filter, e.g. the coder_ids of a coder comparison); `result` is the JSON of the finished report.
    // status: running -> completed | failed. A job runs inside the call that starts it, so a committed row is
    // never left running; the state exists for the events' order and for a future background runner.
    // The two segment indexes are widened (same names, same leading columns, so every existing plan stays) to
    // cover the reports: segments_source (source_id, start_pos, end_pos, code_id, owner) feeds the
    // co-occurrence sweep and the coder comparison, segments_code (code_id, owner, source_id) the frequency
    // aggregates, without visiting table rows (which hold the segment text). On 1M segments (bench/reports.ts)
    // this took the frequency aggregates from 3-4 s to 0.3-0.6 s and the ordered read of all segments from
    // 1.5 s to 0.75 s (sql.js, loaded 2-vCPU VM), for about 10 MB more index per million segments.
    sql: `
DROP INDEX segments_source;
CREATE INDEX segments_source ON segments(source_id, start_pos, end_pos, code_id, owner);
DROP INDEX segments_code;
CREATE INDEX segments_code ON segments(code_id, owner, source_id);
CREATE TABLE reports (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  type TEXT NOT NULL CHECK (type IN ('frequency','cooccurrence','coder_comparison')),
  filters TEXT NOT NULL,
  params TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('running','completed','failed')),
  result TEXT,
  error_code TEXT,
  error TEXT,
  owner TEXT NOT NULL,
  session_id TEXT,
  created_at TEXT NOT NULL,
  completed_at TEXT
);
`,
  },
  {
    version: 8,
    description: 'exchange: the project GUID and the GUIDs REFI-QDA files gave to imported items',
    // REFI-QDA names every item by a GUID, and other tools match a re-imported project by those GUIDs, so they
    // must be stable across exports (src/exchange/refiQda). Marginalia derives an item's GUID from the
    // project's own GUID (meta `project_guid`, random, made here once) and the item's kind and id (a UUID v5;
    // src/domain/exchangeIds.ts); ids are never reused (AUTOINCREMENT). An item imported from a REFI-QDA file
    // keeps the GUID that file gave it: those are stored here, by kind and local id (an id as decimal text, or
    // a coder's name for kind 'user'), and win over the derived ones. No foreign keys: a row of a deleted item
    // is harmless, since ids are never reused. Several items may share a GUID (one REFI selection holding
    // several codings becomes several segments with the selection's GUID).
    sql: `
CREATE TABLE exchange_guids (
  kind TEXT NOT NULL,
  local_id TEXT NOT NULL,
  guid TEXT NOT NULL,
  PRIMARY KEY (kind, local_id)
);
CREATE INDEX exchange_guids_guid ON exchange_guids(kind, guid);
INSERT OR IGNORE INTO meta(key, value) VALUES ('project_guid', lower(hex(randomblob(16))));
`,
  },
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
  {
    version: 13,
    description: 'entity versions (codes, categories, sources, text segments) and the versions a held call read, for the version check on approval',
    // Issue 14 item 5: a held call records the version of every entity it names; approving re-checks them
    // (VERSION_CONFLICT). A version is 1 + the number of changes of the row: an absent entity_versions row is
    // version 1, and triggers count every update of the columns that matter and every delete. The count lives
    // in its own small table, not in a column of each table, so counting a change of a source never rewrites
    // the source's text a second time. Ids are AUTOINCREMENT (never reused), so rows are kept after a delete.
    // Number 13: 12 is left to the project briefing's migration, written at the same time.
    sql: `
CREATE TABLE entity_versions (
  kind TEXT NOT NULL CHECK (kind IN ('code','category','source','segment')),
  id INTEGER NOT NULL,
  version INTEGER NOT NULL,
  PRIMARY KEY (kind, id)
) WITHOUT ROWID;
ALTER TABLE approval_requests ADD COLUMN read_versions TEXT;
CREATE TRIGGER codes_version_au AFTER UPDATE OF name, color, memo, category_id ON codes BEGIN
  INSERT INTO entity_versions(kind, id, version) VALUES ('code', new.id, 2) ON CONFLICT(kind, id) DO UPDATE SET version = version + 1;
END;
CREATE TRIGGER codes_version_ad AFTER DELETE ON codes BEGIN
  INSERT INTO entity_versions(kind, id, version) VALUES ('code', old.id, 2) ON CONFLICT(kind, id) DO UPDATE SET version = version + 1;
END;
CREATE TRIGGER categories_version_au AFTER UPDATE OF name, memo, parent_id ON categories BEGIN
  INSERT INTO entity_versions(kind, id, version) VALUES ('category', new.id, 2) ON CONFLICT(kind, id) DO UPDATE SET version = version + 1;
END;
CREATE TRIGGER categories_version_ad AFTER DELETE ON categories BEGIN
  INSERT INTO entity_versions(kind, id, version) VALUES ('category', old.id, 2) ON CONFLICT(kind, id) DO UPDATE SET version = version + 1;
END;
CREATE TRIGGER sources_version_au AFTER UPDATE OF name, content, memo, folder_id ON sources BEGIN
  INSERT INTO entity_versions(kind, id, version) VALUES ('source', new.id, 2) ON CONFLICT(kind, id) DO UPDATE SET version = version + 1;
END;
CREATE TRIGGER sources_version_ad AFTER DELETE ON sources BEGIN
  INSERT INTO entity_versions(kind, id, version) VALUES ('source', old.id, 2) ON CONFLICT(kind, id) DO UPDATE SET version = version + 1;
END;
CREATE TRIGGER segments_version_au AFTER UPDATE OF code_id, memo, start_pos, end_pos ON segments BEGIN
  INSERT INTO entity_versions(kind, id, version) VALUES ('segment', new.id, 2) ON CONFLICT(kind, id) DO UPDATE SET version = version + 1;
END;
CREATE TRIGGER segments_version_ad AFTER DELETE ON segments BEGIN
  INSERT INTO entity_versions(kind, id, version) VALUES ('segment', old.id, 2) ON CONFLICT(kind, id) DO UPDATE SET version = version + 1;
END;
`,
  },
  {
    version: 14,
    description: 'coder roles: researcher or agent on codes, categories, sources, segments and events',
    // Issue 14 item 1: every record says whether a researcher or an agent made it (`coder_role`), and every event's
    // caused_by its role, the coder's name, and for agents the client name and model. Existing rows are mapped
    // where the record allows: the researcher's own UI (session `local`, owner `agent:local`), a session whose
    // session.connected event says role researcher, or an owner that also owns something made in the local UI →
    // researcher; a session whose session.connected event says role agent → agent; anything else stays NULL
    // (unknown). Events store `coder` only where it differs from `user`, and `client` only for agents.
    sql: `
ALTER TABLE codes ADD COLUMN coder_role TEXT;
ALTER TABLE categories ADD COLUMN coder_role TEXT;
ALTER TABLE sources ADD COLUMN coder_role TEXT;
ALTER TABLE segments ADD COLUMN coder_role TEXT;
ALTER TABLE av_segments ADD COLUMN coder_role TEXT;
ALTER TABLE events ADD COLUMN role TEXT;
ALTER TABLE events ADD COLUMN coder TEXT;
ALTER TABLE events ADD COLUMN client TEXT;
ALTER TABLE events ADD COLUMN model TEXT;
CREATE TEMP TABLE m14_sessions (sid TEXT PRIMARY KEY, role TEXT NOT NULL, client TEXT);
INSERT OR REPLACE INTO m14_sessions(sid, role, client)
  SELECT lower(replace(aggregate_id, '-', '')), json_extract(payload, '$.role'), json_extract(payload, '$.client_name')
  FROM events
  WHERE event_type = 'session.connected' AND substr(payload, 1, 1) = '{' AND json_valid(payload)
    AND json_extract(payload, '$.role') IN ('researcher', 'agent')
  ORDER BY seq;
CREATE TEMP TABLE m14_researchers (owner TEXT PRIMARY KEY);
INSERT OR IGNORE INTO m14_researchers(owner)
  SELECT owner FROM codes WHERE session_id = 'local' OR owner = 'agent:local'
  UNION SELECT owner FROM categories WHERE session_id = 'local' OR owner = 'agent:local'
  UNION SELECT owner FROM sources WHERE session_id = 'local' OR owner = 'agent:local'
  UNION SELECT owner FROM segments WHERE session_id = 'local' OR owner = 'agent:local'
  UNION SELECT owner FROM av_segments WHERE session_id = 'local' OR owner = 'agent:local'
  UNION SELECT s.owner FROM segments s JOIN m14_sessions m ON m.sid = lower(replace(s.session_id, '-', '')) WHERE m.role = 'researcher';
UPDATE codes SET coder_role = CASE
    WHEN session_id = 'local' OR owner = 'agent:local' THEN 'researcher'
    WHEN (SELECT role FROM m14_sessions WHERE sid = lower(replace(codes.session_id, '-', ''))) IS NOT NULL
      THEN (SELECT role FROM m14_sessions WHERE sid = lower(replace(codes.session_id, '-', '')))
    WHEN owner IN (SELECT owner FROM m14_researchers) THEN 'researcher' END;
UPDATE categories SET coder_role = CASE
    WHEN session_id = 'local' OR owner = 'agent:local' THEN 'researcher'
    WHEN (SELECT role FROM m14_sessions WHERE sid = lower(replace(categories.session_id, '-', ''))) IS NOT NULL
      THEN (SELECT role FROM m14_sessions WHERE sid = lower(replace(categories.session_id, '-', '')))
    WHEN owner IN (SELECT owner FROM m14_researchers) THEN 'researcher' END;
UPDATE sources SET coder_role = CASE
    WHEN session_id = 'local' OR owner = 'agent:local' THEN 'researcher'
    WHEN (SELECT role FROM m14_sessions WHERE sid = lower(replace(sources.session_id, '-', ''))) IS NOT NULL
      THEN (SELECT role FROM m14_sessions WHERE sid = lower(replace(sources.session_id, '-', '')))
    WHEN owner IN (SELECT owner FROM m14_researchers) THEN 'researcher' END;
UPDATE segments SET coder_role = CASE
    WHEN session_id = 'local' OR owner = 'agent:local' THEN 'researcher'
    WHEN (SELECT role FROM m14_sessions WHERE sid = lower(replace(segments.session_id, '-', ''))) IS NOT NULL
      THEN (SELECT role FROM m14_sessions WHERE sid = lower(replace(segments.session_id, '-', '')))
    WHEN owner IN (SELECT owner FROM m14_researchers) THEN 'researcher' END;
UPDATE av_segments SET coder_role = CASE
    WHEN session_id = 'local' OR owner = 'agent:local' THEN 'researcher'
    WHEN (SELECT role FROM m14_sessions WHERE sid = lower(replace(av_segments.session_id, '-', ''))) IS NOT NULL
      THEN (SELECT role FROM m14_sessions WHERE sid = lower(replace(av_segments.session_id, '-', '')))
    WHEN owner IN (SELECT owner FROM m14_researchers) THEN 'researcher' END;
UPDATE events SET role = CASE
    WHEN session_id IN ('local', 'marginalia') OR client_type = 'LOCAL_UI' THEN 'researcher'
    ELSE (SELECT role FROM m14_sessions
          WHERE sid = CASE WHEN typeof(events.session_id) = 'blob' THEN lower(hex(events.session_id)) ELSE lower(replace(events.session_id, '-', '')) END) END;
UPDATE events SET client = (SELECT client FROM m14_sessions
    WHERE sid = CASE WHEN typeof(events.session_id) = 'blob' THEN lower(hex(events.session_id)) ELSE lower(replace(events.session_id, '-', '')) END)
  WHERE role = 'agent';
DROP TABLE m14_sessions;
DROP TABLE m14_researchers;
`,
  },
  {
    version: 15,
    description: 'agent access: sources, folders and cases the researcher closed to agents (all, or named ones)',
    // Issue 14 item 11 (src/agent/agentAccess.ts): one row per closed target; opening it again deletes the row.
    // `agents` is a JSON array of agent names, or NULL for every agent. A closed folder closes its sources and
    // those of its sub-folders; a closed case closes its member sources and the sources of its member ranges.
    // Number 15: 14 is left to the coder-identity migration, written at the same time.
    sql: `
CREATE TABLE agent_access (
  target_kind TEXT NOT NULL CHECK (target_kind IN ('source','folder','case')),
  target_id INTEGER NOT NULL,
  access TEXT NOT NULL CHECK (access IN ('closed','open')),
  agents TEXT,
  set_by TEXT NOT NULL,
  set_at TEXT NOT NULL,
  PRIMARY KEY (target_kind, target_id)
) WITHOUT ROWID;
`,
  },
  {
    version: 16,
    description: 'who decided an approval request: the deciding coder name and role',
    // Issue 14 item 1: an approval decision records the coder's name and role, not only the deciding session.
    // Requests decided before: only the researcher may decide, so a decision by a session other than the
    // pipeline's own (`marginalia`, timeouts) is the researcher's, named as its decision event's user.
    sql: `
ALTER TABLE approval_requests ADD COLUMN decided_by_coder TEXT;
ALTER TABLE approval_requests ADD COLUMN decided_by_role TEXT;
UPDATE approval_requests SET
    decided_by_role = 'researcher',
    decided_by_coder = (SELECT user FROM events
      WHERE aggregate_type = 'approval' AND aggregate_id = approval_requests.request_id
        AND event_type IN ('approval.granted', 'approval.denied')
      ORDER BY seq DESC LIMIT 1)
  WHERE decided_by IS NOT NULL AND decided_by <> 'marginalia';
`,
  },
  {
    version: 17,
    description: 'stable entity GUIDs: a guid column on codes, categories, sources, folders, segments, AV segments, cases and case ranges',
    // Issue 16 item 1 (src/vcs/identity.ts): an entity's GUID is stored in its own row, so it is in the canonical
    // dump and travels with the history to every copy of the project (meta.project_guid, which derived GUIDs
    // depend on, is not dumped: a clone would derive other GUIDs). Existing rows get the GUID REFI-QDA exports
    // already gave them (the stored exchange GUID, else the derived one; a segment's is its REFI coding's), so
    // exports keep naming them the same. A row inserted without a GUID gets a random UUID v4 from a trigger
    // (every insert path, and restores of dumps written before this migration); a row inserted with one keeps it.
    sql: `
ALTER TABLE codes ADD COLUMN guid TEXT;
ALTER TABLE categories ADD COLUMN guid TEXT;
ALTER TABLE sources ADD COLUMN guid TEXT;
ALTER TABLE folders ADD COLUMN guid TEXT;
ALTER TABLE segments ADD COLUMN guid TEXT;
ALTER TABLE av_segments ADD COLUMN guid TEXT;
ALTER TABLE cases ADD COLUMN guid TEXT;
ALTER TABLE case_segments ADD COLUMN guid TEXT;
UPDATE codes SET guid = coalesce((SELECT guid FROM exchange_guids WHERE kind = 'code' AND local_id = CAST(codes.id AS TEXT)),
    migration17_derived_guid((SELECT value FROM meta WHERE key = 'project_guid'), 'code', CAST(codes.id AS TEXT)));
UPDATE categories SET guid = coalesce((SELECT guid FROM exchange_guids WHERE kind = 'category' AND local_id = CAST(categories.id AS TEXT)),
    migration17_derived_guid((SELECT value FROM meta WHERE key = 'project_guid'), 'category', CAST(categories.id AS TEXT)));
UPDATE sources SET guid = coalesce((SELECT guid FROM exchange_guids WHERE kind = 'source' AND local_id = CAST(sources.id AS TEXT)),
    migration17_derived_guid((SELECT value FROM meta WHERE key = 'project_guid'), 'source', CAST(sources.id AS TEXT)));
UPDATE folders SET guid = coalesce((SELECT guid FROM exchange_guids WHERE kind = 'folder' AND local_id = CAST(folders.id AS TEXT)),
    migration17_derived_guid((SELECT value FROM meta WHERE key = 'project_guid'), 'folder', CAST(folders.id AS TEXT)));
UPDATE segments SET guid = coalesce((SELECT guid FROM exchange_guids WHERE kind = 'coding' AND local_id = CAST(segments.id AS TEXT)),
    migration17_derived_guid((SELECT value FROM meta WHERE key = 'project_guid'), 'coding', CAST(segments.id AS TEXT)));
UPDATE av_segments SET guid = coalesce((SELECT guid FROM exchange_guids WHERE kind = 'av_coding' AND local_id = CAST(av_segments.id AS TEXT)),
    migration17_derived_guid((SELECT value FROM meta WHERE key = 'project_guid'), 'av_coding', CAST(av_segments.id AS TEXT)));
UPDATE cases SET guid = coalesce((SELECT guid FROM exchange_guids WHERE kind = 'case' AND local_id = CAST(cases.id AS TEXT)),
    migration17_derived_guid((SELECT value FROM meta WHERE key = 'project_guid'), 'case', CAST(cases.id AS TEXT)));
UPDATE case_segments SET guid = coalesce((SELECT guid FROM exchange_guids WHERE kind = 'case_selection' AND local_id = CAST(case_segments.id AS TEXT)),
    migration17_derived_guid((SELECT value FROM meta WHERE key = 'project_guid'), 'case_selection', CAST(case_segments.id AS TEXT)));
CREATE TRIGGER codes_guid_ai AFTER INSERT ON codes WHEN new.guid IS NULL BEGIN UPDATE codes SET guid = ${SQL_RANDOM_UUID} WHERE id = new.id; END;
CREATE TRIGGER categories_guid_ai AFTER INSERT ON categories WHEN new.guid IS NULL BEGIN UPDATE categories SET guid = ${SQL_RANDOM_UUID} WHERE id = new.id; END;
CREATE TRIGGER sources_guid_ai AFTER INSERT ON sources WHEN new.guid IS NULL BEGIN UPDATE sources SET guid = ${SQL_RANDOM_UUID} WHERE id = new.id; END;
CREATE TRIGGER folders_guid_ai AFTER INSERT ON folders WHEN new.guid IS NULL BEGIN UPDATE folders SET guid = ${SQL_RANDOM_UUID} WHERE id = new.id; END;
CREATE TRIGGER segments_guid_ai AFTER INSERT ON segments WHEN new.guid IS NULL BEGIN UPDATE segments SET guid = ${SQL_RANDOM_UUID} WHERE id = new.id; END;
CREATE TRIGGER av_segments_guid_ai AFTER INSERT ON av_segments WHEN new.guid IS NULL BEGIN UPDATE av_segments SET guid = ${SQL_RANDOM_UUID} WHERE id = new.id; END;
CREATE TRIGGER cases_guid_ai AFTER INSERT ON cases WHEN new.guid IS NULL BEGIN UPDATE cases SET guid = ${SQL_RANDOM_UUID} WHERE id = new.id; END;
CREATE TRIGGER case_segments_guid_ai AFTER INSERT ON case_segments WHEN new.guid IS NULL BEGIN UPDATE case_segments SET guid = ${SQL_RANDOM_UUID} WHERE id = new.id; END;
`,
    functions: {
      // deriveGuid of src/domain/exchangeIds.ts, as migration 11
      migration17_derived_guid: (projectGuid, kind, localId) => deriveGuid(String(projectGuid), String(kind), String(localId)),
    },
  },
  {
    version: 18,
    description: 'merge conflicts: what a merge of two histories could not decide, until the researcher resolves it',
    // Issue 16 item 4 (src/domain/mergeConflicts.ts, src/vcs/merge): one row per conflict a merge found, by its stable
    // conflict_id (a hash of kind, table, GUID and field: merging the same disagreement again finds the same row).
    // entity_* name the entity (its table, GUID, name and local id in this project); ours/theirs/base hold the three
    // values as JSON text (null for a side without one). status open -> resolved; a resolution records the choice
    // (ours, theirs, both, edit), the value applied (JSON), who resolved it and when. merge_ref names the merge
    // (e.g. the remote commit merged), free text. No foreign keys: a conflict outlives the entity it names.
    sql: `
CREATE TABLE merge_conflicts (
  conflict_id TEXT PRIMARY KEY,
  kind TEXT NOT NULL,
  entity_table TEXT NOT NULL,
  entity_guid TEXT NOT NULL,
  entity_name TEXT NOT NULL,
  entity_local_id INTEGER,
  field TEXT,
  ours TEXT NOT NULL,
  theirs TEXT NOT NULL,
  base TEXT NOT NULL,
  merge_ref TEXT,
  status TEXT NOT NULL CHECK (status IN ('open','resolved')),
  created_at TEXT NOT NULL,
  choice TEXT CHECK (choice IN ('ours','theirs','both','edit')),
  resolution TEXT,
  resolved_by TEXT,
  resolved_at TEXT
);
CREATE INDEX merge_conflicts_status ON merge_conflicts(status, created_at);
`,
  },
];

/** The schema version a fully migrated project has. */
export const LATEST_VERSION = Math.max(0, ...MIGRATIONS.map((m) => m.version));
