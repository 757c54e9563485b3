/**
 * Entities of a Marginalia project. Ids are positive integers. Text positions count Unicode code
 * points of the source's stored text (half-open `[start_pos, end_pos)`); AV positions are integer
 * milliseconds. Timestamps are ISO 8601 UTC strings with milliseconds.
 */

/** The five kinds of source the spec names. */
export const SOURCE_TYPES = ['text', 'audio', 'video', 'image', 'pdf'] as const;
/** One of {@link SOURCE_TYPES}. */
export type SourceType = (typeof SOURCE_TYPES)[number];

/** Who performs a change: the coder (owner) recorded on what it makes, and the session it came through. */
/**
 * Who a coder is (issue 14, item 1): the researcher (the local UI, or any call made with the reviewer token) or
 * an agent (any other credential). Stored as `coder_role` on codes, categories, sources and segments (migration
 * 14) and on every event's `caused_by.role`; `agent` marks an AI action.
 */
export type CoderRole = 'researcher' | 'agent';

export interface Actor {
  /** the coder's name, stored as `owner` on every code, segment and source it creates */
  user: string;
  /** the coder's role, stored as `coder_role` on what it creates; undefined: unknown (stored NULL) */
  role?: CoderRole;
  /** the session id; `local` for the researcher's own UI */
  session_id: string;
  /** the spec's ClientType (ASSISTANT_A_CLI, ASSISTANT_B_CLI, REST_CLIENT, LOCAL_UI, CUSTOM) */
  client_type: string;
  /**
   * true when the actor may approve what agents propose: the researcher's own UI, or a session
   * authenticated as the researcher (reviewer token). Approval rules also forbid approving one's own
   * proposal (see `session_id`). Undefined counts as false.
   */
  can_approve?: boolean;
  /**
   * The researcher's session that approved this very call, when it runs after approval (a pending request
   * of an agent). Such a call acts for the researcher's decision: approval rules treat it as the
   * researcher's (see `checkApprover`), while what it creates keeps the agent as its session.
   */
  approved_by?: string;
}

/** A code of the codebook. */
export interface Code {
  code_id: number;
  name: string;
  /** `#RRGGBB` */
  color: string;
  memo: string | null;
  category_id: number | null;
  owner: string;
  session_id: string | null;
  /** the owner's role (migration 14); null: recorded before roles were (and not derivable) */
  coder_role?: CoderRole | null;
  created_at: string;
  updated_at: string;
  /** optimistic-locking version, incremented on each change */
  version: number;
}

/** A category (code group); categories nest through `parent_id`. */
export interface Category {
  category_id: number;
  name: string;
  parent_id: number | null;
  memo: string | null;
  owner: string;
  created_at: string;
}

/** A source's record without its text. `length` is the text's length in code points (0 for media). */
export interface SourceInfo {
  source_id: number;
  name: string;
  type: SourceType;
  memo: string | null;
  origin: string | null;
  file_path: string | null;
  mime: string | null;
  size_bytes: number | null;
  folder_id: number | null;
  length: number;
  owner: string;
  /** the session that added it (`local` for the researcher's UI) */
  session_id: string | null;
  /** the owner's role (migration 14); null when unknown */
  coder_role?: CoderRole | null;
  created_at: string;
}

/** A segment without its text: what drawing it in the editor needs (ProjectRepository.listSegmentMarksForSource). */
export type SegmentMark = Omit<Segment, 'text'>;

/** A folder of sources; folders nest through `parent_id`. */
export interface Folder {
  folder_id: number;
  name: string;
  parent_id: number | null;
  owner: string;
  created_at: string;
}

/** A coded text segment: `code_id` applied to `[start_pos, end_pos)` of `source_id`, with the text it covers. */
export interface Segment {
  segment_id: number;
  code_id: number;
  source_id: number;
  start_pos: number;
  end_pos: number;
  text: string;
  memo: string | null;
  /** 0 to 2, 2 most important */
  importance: number;
  owner: string;
  session_id: string | null;
  /** the owner's role (migration 14); null: recorded before roles were (and not derivable) */
  coder_role?: CoderRole | null;
  created_at: string;
}
