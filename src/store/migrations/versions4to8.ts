import type { Migration } from './migration';

/** Migrations 4 to 8: suggestions, search indexes, approval requests, reports, exchange GUIDs. Listed 6, 5, 4, 7, 8 as they were first written; the store runs them by version. */
export const VERSIONS_4_TO_8: readonly Migration[] = [
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
];
