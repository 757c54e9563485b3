import type { Migration } from './migration';

/** Migrations 1 to 3: the first schema (meta, folders, sources, the codebook, text and AV segments, events), orphaned segments, cases. */
export const VERSIONS_1_TO_3: readonly Migration[] = [
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
];
