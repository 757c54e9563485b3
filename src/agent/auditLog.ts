import type { AgentContextConfig } from './config';

/** How a call ended, as the audit log records it. */
export type AuditDecision = 'permitted' | 'notified' | 'pending' | 'denied' | 'failed';

/** One line of the audit log (JSONL). Times ISO 8601 UTC; duration in milliseconds. */
export interface AuditEntry {
  timestamp: string;
  session_id: string;
  client_type: string;
  client_name: string;
  user: string;
  tool: string;
  decision: AuditDecision;
  trust_level?: string;
  error_code?: string;
  request_id?: string;
  correlation_id?: string;
  duration_ms: number;
  /** the call's arguments, when `audit.include_payload` */
  arguments?: unknown;
  /** why `arguments` is missing although `audit.include_payload` (JSON cannot write them, e.g. nested too deep) */
  arguments_omitted?: string;
}

/** Where the audit log lives: append one line, read everything. The composition root gives a file. */
export interface AuditStorage {
  append(line: string): void;
  read(): Promise<string>;
}

/** Filters of {@link AuditLog.query}; all optional; times ISO 8601. */
export interface AuditFilter {
  session_id?: string;
  client_name?: string;
  tool?: string;
  decision?: AuditDecision;
  since?: string;
  until?: string;
  /** newest first, at most this many (default 100) */
  limit?: number;
}

/**
 * The audit log of the agent-context spec: every call, permitted, notified, pending, denied or failed,
 * one JSON line each (`audit.log_path`, default `.marginalia/audit.jsonl`), with the payload when
 * `audit.include_payload`. Disabled by `audit.enabled: false`.
 */
export class AuditLog {
  constructor(
    private readonly storage: AuditStorage,
    private readonly config: () => AgentContextConfig,
  ) {}

  /** Appends an entry (without its arguments unless `include_payload`). */
  record(entry: AuditEntry): void {
    const cfg = this.config().audit;
    if (!cfg.enabled) return;
    const { arguments: args, ...rest } = entry;
    let line: string;
    try {
      line = JSON.stringify(cfg.include_payload && args !== undefined ? { ...rest, arguments: args } : rest);
    } catch (e) {
      // arguments JSON cannot write (nested deeper than the stack allows): the call is still audited, without them
      line = JSON.stringify({ ...rest, arguments_omitted: `the arguments could not be recorded: ${e instanceof Error ? e.message : String(e)}` });
    }
    this.storage.append(line);
  }

  /** Entries matching `filter`, newest first. Unreadable lines are skipped. */
  async query(filter: AuditFilter = {}): Promise<AuditEntry[]> {
    const text = await this.storage.read();
    const out: AuditEntry[] = [];
    const lines = text.split('\n');
    const limit = filter.limit ?? 100;
    for (let i = lines.length - 1; i >= 0 && out.length < limit; i--) {
      const line = lines[i];
      if (!line) continue;
      let e: AuditEntry;
      try {
        e = JSON.parse(line) as AuditEntry;
      } catch {
        continue;
      }
      if (filter.session_id && e.session_id !== filter.session_id) continue;
      if (filter.client_name && e.client_name !== filter.client_name) continue;
      if (filter.tool && e.tool !== filter.tool) continue;
      if (filter.decision && e.decision !== filter.decision) continue;
      if (filter.since && e.timestamp < filter.since) continue;
      if (filter.until && e.timestamp > filter.until) continue;
      out.push(e);
    }
    return out;
  }
}
