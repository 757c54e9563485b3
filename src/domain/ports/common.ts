/** Who and when, written on every row a change creates (`owner`, `session_id`, `coder_role`, `created_at`). */
export interface Stamp {
  /** the coder's name, stored as `owner` */
  owner: string;
  /** the session the change came through (`local` for the researcher's own UI) */
  session_id: string;
  /** ISO 8601 UTC time of the change, stored as `created_at` (and `updated_at` where the table has one) */
  now: string;
  /** the owner's coder role, stored as `coder_role`; absent: unknown (stored NULL) */
  coder_role?: 'researcher' | 'agent' | null;
}

/** The four attribute types of a case or a source (HTTP spec, section 2). */
export type AttributeType = 'text' | 'number' | 'date' | 'boolean';
/** An attribute value: a string for text and date (ISO 8601), a finite number, or a boolean. */
export type AttributeValue = string | number | boolean;
