import { deriveGuid } from '../../domain/exchangeIds';
import type { Migration } from './migration';

/** SQL expression of a random UUID version 4, lower case, hyphenated: the GUID of a new entity row (migration 17). */
const SQL_RANDOM_UUID =
  "lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' || substr(lower(hex(randomblob(2))), 2) || '-' || " +
  "substr('89ab', 1 + (abs(random()) % 4), 1) || substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6)))";

/** Migrations 13 to 19: entity versions, coder roles, agent access, who decided an approval, entity GUIDs, merge conflicts, codes by colour. */
export const VERSIONS_13_TO_19: readonly Migration[] = [
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
  {
    version: 19,
    description: 'codes by colour: the index that answers "which codes have this colour" without reading every code',
    // create_code and recolour_code tell the caller when the colour is another code's (colourNoteFor in
    // src/domain/codeColours.ts): a count per distinct colour and up to ten codes of the matching ones. Without
    // this index each was a scan of the codes table and a sort, a third of a create_code at 3,000 codes
    // (bench/RESULTS.md, issue 17).
    sql: `CREATE INDEX codes_color ON codes(color);`,
  },
];
