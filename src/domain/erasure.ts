/**
 * Erasure of a source when a participant withdraws consent (issue 15, item 9; `erase_source`).
 *
 * The source's rows go, and every other place that holds its text is redacted in place: stored event
 * payloads, approval requests, the audit log, the version history. This module holds what every layer shares:
 * the {@link TextRedactor} that finds the source's texts inside other values and replaces them by
 * {@link ERASED}, and the ports the store, the history and the audit log implement.
 *
 * What counts as the source's text (the "needles"): its content, the text of each of its segments (text and
 * AV transcripts) and of its orphaned and case segments and coding suggestions, each when it is at least
 * {@link MIN_NEEDLE_CODE_POINTS} code points long. Shorter pieces ("yes", "I see") are not searched for in
 * other places: they would also erase other participants' words. Values tied to the source itself (an object
 * whose `source_id` is the erased source, such as a `coding.segment_coded` payload) lose every text field
 * ({@link TEXT_KEYS}) whatever its length. Memos the researcher wrote (code, case and segment memos) are not
 * searched: they are the researcher's notes, not the participant's text, and a memo quoting the transcript
 * keeps its quote (the tool's report says so).
 */
import { codePointLength } from '../core/text';

/** What replaces erased text. */
export const ERASED = '[erased]';

/** Shortest text (in code points) searched for outside the source's own records. */
export const MIN_NEEDLE_CODE_POINTS = 16;

/** Keys whose string values are text of the source when their object belongs to it (`source_id` equal). */
export const TEXT_KEYS: ReadonlySet<string> = new Set(['text', 'transcript', 'content', 'seltext', 'quote', 'sample_contexts']);

/** Width of the rolling-hash window, in UTF-16 units (at most MIN_NEEDLE_CODE_POINTS: every needle is at least this long). */
const WINDOW = MIN_NEEDLE_CODE_POINTS;
const BASE = 0x01000193;
/** BASE^(WINDOW-1) mod 2^32: the weight of the character leaving the window. */
const TOP = (() => {
  let p = 1;
  for (let i = 0; i < WINDOW - 1; i++) p = Math.imul(p, BASE);
  return p >>> 0;
})();

function windowHash(s: string, at: number): number {
  let h = 0;
  for (let i = 0; i < WINDOW; i++) h = (Math.imul(h, BASE) + s.charCodeAt(at + i)) >>> 0;
  return h;
}

/** Nesting depth below which {@link TextRedactor.redactValue} recurses; deeper values are searched iteratively. */
const MAX_REDACT_DEPTH = 200;

/**
 * Finds the texts of one erased source inside other strings and JSON values, and replaces them by
 * {@link ERASED}.
 *
 * Search: a Rabin-Karp rolling hash (Karp and Rabin, "Efficient randomized pattern-matching algorithms",
 * 1987) over windows of {@link MIN_NEEDLE_CODE_POINTS} UTF-16 units, keyed by each needle's first window; a
 * hit is confirmed with `startsWith`, longest needle first. Linear in the length of the searched string
 * whatever the number of needles.
 */
export class TextRedactor {
  /** needles by the hash of their first window, longest first */
  private readonly byAnchor = new Map<number, string[]>();
  /** the needles, longest first */
  readonly needles: readonly string[];

  /** ids of the erased source's segments (text and AV): a request naming one quotes its passage ({@link mentions}) */
  readonly segmentIds: ReadonlySet<number>;

  /**
   * @param sourceId the erased source: objects with this `source_id` lose their {@link TEXT_KEYS} values
   * @param texts the source's texts; those shorter than {@link MIN_NEEDLE_CODE_POINTS} code points and
   *   duplicates are dropped
   * @param segmentIds the ids of the source's text and AV segments (default none)
   */
  constructor(
    readonly sourceId: number,
    texts: Iterable<string>,
    segmentIds: Iterable<number> = [],
  ) {
    this.segmentIds = new Set(segmentIds);
    const unique = new Set<string>();
    for (const t of texts) if (typeof t === 'string' && t.length >= WINDOW && codePointLength(t) >= MIN_NEEDLE_CODE_POINTS) unique.add(t);
    this.needles = [...unique].sort((a, b) => b.length - a.length);
    for (const n of this.needles) {
      const h = windowHash(n, 0);
      const list = this.byAnchor.get(h);
      if (list) list.push(n);
      else this.byAnchor.set(h, [n]);
    }
  }

  /** The needle starting at `at` in `s` (the longest), or undefined. */
  private needleAt(s: string, at: number, h: number): string | undefined {
    const list = this.byAnchor.get(h);
    if (!list) return undefined;
    for (const n of list) if (s.startsWith(n, at)) return n;
    return undefined;
  }

  /**
   * True when a request's arguments (parsed JSON) name the erased source or one of its segments: an object
   * anywhere in `v` with `source_id` the erased source or `segment_id` one of {@link segmentIds}. Such a
   * request's description may quote a passage of the text (agent/describeRequest.ts quotes up to 80 code
   * points, too short and reflowed to be found as a needle), so it is erased whole.
   */
  mentions(v: unknown, depth = 0): boolean {
    if (v === null || typeof v !== 'object' || depth > 32) return false;
    if (Array.isArray(v)) return v.some((x) => this.mentions(x, depth + 1));
    const o = v as Record<string, unknown>;
    if (o.source_id === this.sourceId) return true;
    if (typeof o.segment_id === 'number' && this.segmentIds.has(o.segment_id)) return true;
    return Object.values(o).some((x) => this.mentions(x, depth + 1));
  }

  /** True when `s` contains one of the needles. */
  contains(s: string): boolean {
    if (this.needles.length === 0 || s.length < WINDOW) return false;
    let h = windowHash(s, 0);
    for (let i = 0; ; i++) {
      if (this.byAnchor.has(h) && this.needleAt(s, i, h) !== undefined) return true;
      if (i + WINDOW >= s.length) return false;
      h = (Math.imul((h - Math.imul(s.charCodeAt(i), TOP)) >>> 0, BASE) + s.charCodeAt(i + WINDOW)) >>> 0;
    }
  }

  /** `s` with every occurrence of a needle (longest first, left to right) replaced by {@link ERASED}. */
  redactString(s: string): string {
    if (!this.contains(s)) return s;
    let out = '';
    let from = 0;
    let i = 0;
    let h = windowHash(s, 0);
    while (i + WINDOW <= s.length) {
      const n = this.byAnchor.has(h) ? this.needleAt(s, i, h) : undefined;
      if (n !== undefined) {
        out += s.slice(from, i) + ERASED;
        i += n.length;
        from = i;
        if (i + WINDOW <= s.length) h = windowHash(s, i);
        continue;
      }
      if (i + WINDOW < s.length) h = (Math.imul((h - Math.imul(s.charCodeAt(i), TOP)) >>> 0, BASE) + s.charCodeAt(i + WINDOW)) >>> 0;
      i++;
    }
    return out + s.slice(from);
  }

  /**
   * A JSON-like value (parsed JSON: objects, arrays, strings, numbers, booleans, null) with the source's
   * text erased: in an object whose `source_id` is the erased source (and everything inside it), every
   * {@link TEXT_KEYS} string becomes {@link ERASED}; anywhere, a string holding a needle becomes {@link ERASED}
   * whole (what surrounds a quote is usually more of the participant's words); an object
   * in which something was erased also loses its `description` string (approval requests describe their
   * arguments with the first 80 characters of each). Returns a new value when something changed (`changed`),
   * else the value itself.
   */
  redactValue(v: unknown, inSource = false, depth = 0): { value: unknown; changed: boolean } {
    if (depth >= MAX_REDACT_DEPTH && v !== null && typeof v === 'object') {
      // deeper than any value Marginalia writes (a hostile argument nested thousands deep): searched without
      // recursion, and replaced whole when it holds the text
      return this.holdsNeedle(v) ? { value: ERASED, changed: true } : { value: v, changed: false };
    }
    if (typeof v === 'string') {
      // a value that quotes the text is the participant's words around it too: replaced whole
      return this.contains(v) ? { value: ERASED, changed: true } : { value: v, changed: false };
    }
    if (v === null || typeof v !== 'object') return { value: v, changed: false };
    if (Array.isArray(v)) {
      let changed = false;
      const out = v.map((x) => {
        const r = this.redactValue(x, inSource, depth + 1);
        changed ||= r.changed;
        return r.value;
      });
      return changed ? { value: out, changed } : { value: v, changed };
    }
    const o = v as Record<string, unknown>;
    const about = inSource || o.source_id === this.sourceId;
    let changed = false;
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(o)) {
      if (about && TEXT_KEYS.has(k) && typeof x === 'string' && x !== ERASED && x !== '') {
        out[k] = ERASED;
        changed = true;
        continue;
      }
      if (about && TEXT_KEYS.has(k) && Array.isArray(x)) {
        // sample_contexts and similar lists of quotes
        out[k] = x.map((e) => (typeof e === 'string' ? ERASED : e));
        changed = true;
        continue;
      }
      const r = this.redactValue(x, about, depth + 1);
      out[k] = r.value;
      changed ||= r.changed;
    }
    // an approval.requested payload whose arguments name the source or one of its segments: its description
    // may quote a passage (see mentions)
    if (!changed && typeof o.description === 'string' && o.description !== ERASED && o.payload !== undefined && this.mentions(o.payload)) changed = true;
    if (!changed) return { value: v, changed };
    if (typeof out.description === 'string' && out.description !== ERASED) out.description = ERASED;
    return { value: out, changed };
  }

  /** Whether any string inside `v` (at any depth, walked with an explicit stack) holds a needle. */
  private holdsNeedle(v: unknown): boolean {
    const stack: unknown[] = [v];
    while (stack.length > 0) {
      const x = stack.pop();
      if (typeof x === 'string') {
        if (this.contains(x)) return true;
      } else if (x !== null && typeof x === 'object') {
        for (const y of Array.isArray(x) ? x : Object.values(x as Record<string, unknown>)) stack.push(y);
      }
    }
    return false;
  }

  /**
   * A JSON text with the source's text erased ({@link redactValue}), or null when nothing changed. Text that
   * is not JSON and holds a needle becomes {@link ERASED} whole. Key order and number forms are kept
   * (JSON.parse/stringify).
   */
  redactJsonText(text: string): string | null {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return this.contains(text) ? ERASED : null;
    }
    const r = this.redactValue(parsed);
    if (!r.changed) return null;
    try {
      return JSON.stringify(r.value);
    } catch {
      // a value too deep to write back (JSON.stringify recurses): the whole text goes
      return ERASED;
    }
  }
}

/** The texts an erasure searches for, read from the project before its rows go. */
export interface SourceTexts {
  source_id: number;
  name: string;
  type: string;
  /** the content, segment texts, AV transcripts, orphan and case segment texts, coding suggestion texts */
  texts: string[];
  /** the ids of its text and AV segments (segment provenance and exchange GUIDs are keyed by them) */
  segment_ids: number[];
  av_segment_ids: number[];
}

/** Rows removed and values redacted in the project database by {@link ProjectErasure.eraseSource}. */
export interface ErasedRows {
  segments: number;
  av_segments: number;
  orphan_segments: number;
  case_segments: number;
  case_memberships: number;
  suggestions: number;
  segment_provenance: number;
  embeddings: number;
  source_attributes: number;
  metadata_hints: number;
  exchange_guids: number;
  /** events whose payload held the text, redacted in place (kept, so the log stays sequential) */
  events_redacted: number;
  /** approval requests whose arguments, result or description held the text */
  approvals_redacted: number;
  /** reports (report jobs) whose stored result or filters held the text */
  reports_redacted: number;
  /** suggestions and suggestion batches of other sources (or of none) whose texts quoted it */
  suggestions_redacted: number;
}

/**
 * The store's part of an erasure (implemented by src/store/erasureStore.ts, handed to tools as
 * `OpenProject.erasure`).
 */
export interface ProjectErasure {
  /** The texts of source `sourceId` and its segment ids, or undefined when there is no such source. */
  sourceTexts(sourceId: number): SourceTexts | undefined;
  /**
   * Inside the caller's transaction: deletes the source and every row keyed by it, redacts the text in
   * event payloads, approval requests and reports, with SQLite's `secure_delete` on (freed space is
   * zeroed), and purges the search indexes of the deleted text (FTS4 `optimize`). No bound parameter of
   * its statements holds the text, so the journal never receives it.
   */
  eraseSource(sourceId: number, redactor: TextRedactor): ErasedRows;
  /**
   * Arranges for the database to be rewritten right after the current transaction commits: VACUUM (no
   * free page keeps old text) and a checkpoint (the file on disk is the erased database; the journal is
   * emptied). Outside a transaction: at once.
   */
  compactAfterCommit(): void;
}

/** What {@link HistoryErasure.eraseFromHistory} is asked to do. */
export interface HistoryErasureRequest {
  source_id: number;
  /** the source's text and AV segment ids (segment provenance rows are keyed by them) */
  segment_ids: readonly number[];
  redactor: TextRedactor;
}

/** What rewriting the version history did. */
export interface HistoryErasureResult {
  /** false when the project has no history */
  initialized: boolean;
  /** snapshots (commits) in the history */
  snapshots: number;
  /** snapshots whose content changed (their ids changed with it; messages, authors and dates are kept) */
  snapshots_rewritten: number;
  /** dump files (blobs) rewritten */
  files_rewritten: number;
  /** milliseconds spent, and of them in pruning (reflog expiry, repack, prune) */
  duration_ms: number;
  prune_ms: number;
}

/** The version history's part of an erasure (implemented by src/vcs/historyErasure.ts through the Snapshotter). */
export interface HistoryErasure {
  /**
   * Rewrites every snapshot without the source's text file and rows, with its text redacted elsewhere,
   * then expires the reflogs and prunes, so no git object holds the text. Snapshots taken while the
   * erasure runs leave the source out too. Errors: TOOL_EXECUTION_ERROR (git failing; nothing changed).
   */
  eraseFromHistory(request: HistoryErasureRequest): Promise<HistoryErasureResult>;
}

/** The audit log's part of an erasure (implemented by src/agent/auditLog.ts). */
export interface AuditRedaction {
  /**
   * Rewrites every audit line whose arguments hold the text with it redacted ({@link TextRedactor.redactValue}),
   * keeping every other byte. Returns the lines read and rewritten and the file's path (null when the log is
   * not a file).
   */
  redactAudit(redactor: TextRedactor): Promise<{ lines: number; lines_rewritten: number; path: string | null }>;
}

/** What erase_source's `prepare` reaches (PrepareContext.erasure): each part null when the host has none. */
export interface ErasurePorts {
  store: ProjectErasure | null;
  history: HistoryErasure | null;
  audit: AuditRedaction | null;
}
