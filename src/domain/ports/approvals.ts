/**
 * A call the trust layer holds for the researcher's decision (agent-context spec, "Approval flow").
 * `arguments` is the JSON of the call's arguments (as approved, after any edit); `result` the JSON data of
 * the executed call. Statuses: pending -> completed | failed (approved and executed), or rejected (by the
 * researcher, or automatically at `expires_at`). Times are ISO 8601 UTC.
 */
export interface ApprovalRecord {
  request_id: string;
  tool: string;
  arguments: string;
  session_id: string;
  client_type: string;
  client_name: string;
  user: string;
  trust_level: 'suggest' | 'require';
  description: string;
  status: 'pending' | 'completed' | 'failed' | 'rejected';
  created_at: string;
  expires_at: string;
  decided_at: string | null;
  decided_by: string | null;
  /** the deciding coder's name and role; null while pending, for timeouts, and when unknown */
  decided_by_coder?: string | null;
  decided_by_role?: 'researcher' | 'agent' | null;
  reason: string | null;
  result: string | null;
  error_code: string | null;
  /**
   * JSON `{"seq": n, "versions": {"code:12": 3, ...}}`: the newest event's sequence number and the version of
   * every entity the call named when it was held ({@link ApprovalRepository.entityVersions}); approving
   * re-checks them (VERSION_CONFLICT). Null or absent for requests stored before versions existed.
   */
  read_versions?: string | null;
}

/** An entity whose version a held call records: a code, category, source or text segment by id. */
export interface EntityRef {
  kind: 'code' | 'category' | 'source' | 'segment';
  id: number;
}

/** An entity's version now: 1 + the number of changes of its row; null when it does not exist (deleted). */
export interface EntityVersion extends EntityRef {
  version: number | null;
  /** its name (a segment: null), null when it does not exist */
  name: string | null;
}

/**
 * Calls held for approval (table `approval_requests`), and the entity versions a held call records so that
 * approving it can tell whether what it named changed meanwhile (table `entity_versions`, counted by triggers).
 */
export interface ApprovalRepository {
  /** Stores a new request (as given, usually pending). */
  insertApproval(a: ApprovalRecord): void;
  /** One request; undefined for an unknown id. */
  getApproval(requestId: string): ApprovalRecord | undefined;
  /** Requests with `status` (all when undefined), oldest first, at most `limit` (default 1,000). */
  listApprovals(status?: ApprovalRecord['status'], limit?: number): ApprovalRecord[];
  /** Records a decision and its outcome (and the arguments as approved). */
  decideApproval(
    requestId: string,
    d: Pick<ApprovalRecord, 'status' | 'decided_at' | 'decided_by' | 'decided_by_coder' | 'decided_by_role' | 'reason' | 'result' | 'error_code' | 'arguments'>,
  ): void;
  /** The version of each entity of `refs`, in order (an entity never changed is version 1). */
  entityVersions(refs: readonly EntityRef[]): EntityVersion[];
}
