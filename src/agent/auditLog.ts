import { createHash } from 'node:crypto';
import type { AuditRedaction, TextRedactor } from '../domain/erasure';
import type { AgentContextConfig } from './config';

/**
 * Strings in recorded arguments longer than this many code points are recorded as `{length, sha256}` unless
 * `audit.include_payload` is `full`.
 */
export const AUDIT_TEXT_MAX_CODE_POINTS = 200;

/** How a long string is recorded: its length in code points and the SHA-256 (hex) of its UTF-8 bytes. */
export interface HashedText {
  length: number;
  sha256: string;
}

/**
 * `v` (parsed JSON arguments) with every string longer than `max` code points replaced by its
 * {@link HashedText}; other values as they are. A new value when something was replaced, else `v`. Throws
 * RangeError on values nested deeper than the stack allows (the caller records the call without arguments).
 */
export function hashLongStrings(v: unknown, max = AUDIT_TEXT_MAX_CODE_POINTS): unknown {
  if (typeof v === 'string') {
    if (v.length <= max) return v;
    let n = 0;
    for (const _ of v) n++;
    return n > max ? ({ length: n, sha256: createHash('sha256').update(v, 'utf8').digest('hex') } satisfies HashedText) : v;
  }
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) {
    let changed = false;
    const out = v.map((x) => {
      const r = hashLongStrings(x, max);
      changed ||= r !== x;
      return r;
    });
    return changed ? out : v;
  }
  let changed = false;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
    const r = hashLongStrings(x, max);
    changed ||= r !== x;
    out[k] = r;
  }
  return changed ? out : v;
}

/** The last own enumerable key of `o` (JSON.stringify's order), without allocating a key list. */
function lastKey(o: object): string | undefined {
  let last: string | undefined;
  for (const k in o) if (Object.prototype.hasOwnProperty.call(o, k)) last = k;
  return last;
}

/** How a call ended, as the audit log records it. */
export type AuditDecision = 'permitted' | 'notified' | 'pending' | 'denied' | 'failed';

/** One line of the audit log (JSONL). Times ISO 8601 UTC; duration in milliseconds. */
export interface AuditEntry {
  timestamp: string;
  session_id: string;
  client_type: string;
  client_name: string;
  user: string;
  /**
   * The coder's role (issue 14, item 1): `researcher` (local UI, reviewer token) or `agent`; absent on refusals
   * before a session was known and on lines written before roles were recorded.
   */
  role?: 'researcher' | 'agent';
  /** the coder's name: the researcher's coder name, or the agent's credential name (else its client name) */
  coder?: string;
  /** the model an agent's client stated, when it did */
  model?: string;
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
  /**
   * Replaces the whole log by `transform(current text)` atomically (temporary file, fsync, rename), appends
   * made meanwhile included; returns the file's path. Absent: the log cannot be rewritten (erase_source then
   * reports it).
   */
  rewrite?(transform: (text: string) => string): string | null;
}

/** Filters of {@link AuditLog.query}; all optional; times ISO 8601. */
export interface AuditFilter {
  session_id?: string;
  client_name?: string;
  /** only lines of this coder role */
  role?: 'researcher' | 'agent';
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
export class AuditLog implements AuditRedaction {
  constructor(
    private readonly storage: AuditStorage,
    private readonly config: () => AgentContextConfig,
  ) {}

  /**
   * Appends an entry: without its arguments when `include_payload` is false, with them exactly when it is
   * `full`, else with strings over {@link AUDIT_TEXT_MAX_CODE_POINTS} code points as `{length, sha256}`.
   */
  record(entry: AuditEntry): void {
    const cfg = this.config().audit;
    if (!cfg.enabled) return;
    const { arguments: args, ...rest } = entry;
    let line: string;
    try {
      const recorded = cfg.include_payload === 'full' ? args : hashLongStrings(args);
      // the entry as it is when that writes the same text (nothing hashed, `arguments` last or absent): no copies
      if (args === undefined || (cfg.include_payload !== false && recorded === args && lastKey(entry) === 'arguments')) line = JSON.stringify(entry);
      else line = JSON.stringify(cfg.include_payload !== false && args !== undefined ? { ...rest, arguments: recorded } : rest);
    } catch (e) {
      // arguments JSON cannot write (nested deeper than the stack allows): the call is still audited, without them
      line = JSON.stringify({ ...rest, arguments_omitted: `the arguments could not be recorded: ${e instanceof Error ? e.message : String(e)}` });
    }
    this.storage.append(line);
  }

  /**
   * Rewrites every line whose arguments hold the erased source's text ({@link TextRedactor.redactValue}), in
   * one synchronous rewrite of the file (no append is lost or interleaved). Lines that are not JSON are searched
   * as plain text. See {@link AuditRedaction.redactAudit}.
   */
  async redactAudit(redactor: TextRedactor): Promise<{ lines: number; lines_rewritten: number; path: string | null }> {
    let lines = 0;
    let rewritten = 0;
    const transform = (text: string): string => {
      lines = 0;
      rewritten = 0;
      const out = text.split('\n').map((line) => {
        if (line.length === 0) return line;
        lines++;
        let entry: unknown;
        try {
          entry = JSON.parse(line);
        } catch {
          const r = redactor.redactString(line);
          if (r !== line) rewritten++;
          return r;
        }
        const r = redactor.redactValue(entry);
        if (!r.changed) return line;
        rewritten++;
        return JSON.stringify(r.value);
      });
      return out.join('\n');
    };
    if (!this.storage.rewrite) {
      // read-only storage: count what would need rewriting, so the report can say so
      transform(await this.storage.read());
      return { lines, lines_rewritten: 0, path: null };
    }
    const path = this.storage.rewrite(transform);
    return { lines, lines_rewritten: rewritten, path };
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
      if (filter.role && e.role !== filter.role) continue;
      if (filter.tool && e.tool !== filter.tool) continue;
      if (filter.decision && e.decision !== filter.decision) continue;
      if (filter.since && e.timestamp < filter.since) continue;
      if (filter.until && e.timestamp > filter.until) continue;
      out.push(e);
    }
    return out;
  }
}
