import { createHash } from 'node:crypto';
import type { ErasedRows, ProjectErasure, SourceTexts, TextRedactor } from '../domain/erasure';
import type { Logger } from '../core/log';
import { silentLogger } from '../core/log';
import { PAYLOAD_SHAPES, payloadFromStored, payloadToStored } from './eventRows';
import type { ProjectStore } from './projectStore';

/** The `meta` key set by an erasure's transaction and cleared once the database file is rewritten. */
const PENDING_KEY = 'erasure_pending';

/** Exchange GUID kinds keyed by a text or AV segment id (migration 8). */
const SEGMENT_GUID_KINDS = ['selection', 'coding', 'av_selection', 'av_coding'];

/** SHA-256 (hex) of a text as the embedding cache keys it (src/tools/searchTools.ts textHash). */
function textHash(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** A JSON array of ids, bound to `json_each(?)` (no text in the journal). */
function idList(ids: readonly number[]): string {
  return JSON.stringify(ids);
}

/**
 * The store's part of erase_source ({@link ProjectErasure}): reads a source's texts, deletes it with every row
 * keyed by it, redacts its text in event payloads, approval requests and reports, and rewrites the database
 * file once the transaction is durable (VACUUM and checkpoint: no free page and no journal line keeps the
 * text).
 *
 * The journal records the statements and their bound values; none of them binds the text: rows are deleted by
 * id, and redacted values are bound in their redacted form.
 */
export class StoreErasure implements ProjectErasure {
  private compactPending = false;

  /**
   * Hooks the rewrite after an erasure's commit into `store`; when the project was closed (or the process
   * died) between an erasure's commit and that rewrite (meta `erasure_pending` is set), rewrites it now.
   */
  constructor(
    private readonly store: ProjectStore,
    private readonly logger: Logger = silentLogger,
  ) {
    store.onDidCommit(() => {
      if (!this.compactPending) return;
      this.compactPending = false;
      this.compactNow();
    });
    if (store.get(`SELECT 1 AS x FROM meta WHERE key = '${PENDING_KEY}'`)) {
      this.logger.info('an erasure was not followed by its database rewrite: rewriting now');
      this.compactNow();
    }
  }

  /** VACUUM and checkpoint, then clears the pending mark (a journaled write: the next checkpoint stores it). */
  private compactNow(): void {
    try {
      this.store.vacuum();
      this.store.transaction(() => this.store.run(`DELETE FROM meta WHERE key = '${PENDING_KEY}'`));
    } catch (e) {
      this.logger.error('the database rewrite after erase_source failed; it is tried again when the project is next opened', e);
    }
  }

  /** The texts of source `sourceId` (content, segment texts, transcripts, orphan, case segment and suggestion texts) and its segment ids. */
  sourceTexts(sourceId: number): SourceTexts | undefined {
    const src = this.store.get<{ name: string; type: string; content: string | null }>('SELECT name, type, content FROM sources WHERE id = ?', [sourceId]);
    if (!src) return undefined;
    const texts: string[] = [];
    if (src.content) texts.push(src.content);
    const segs = this.store.all<{ id: number; text: string }>('SELECT id, text FROM segments WHERE source_id = ?', [sourceId]);
    const av = this.store.all<{ id: number; transcript: string | null }>('SELECT id, transcript FROM av_segments WHERE source_id = ?', [sourceId]);
    for (const s of segs) texts.push(s.text);
    for (const a of av) if (a.transcript) texts.push(a.transcript);
    for (const table of ['orphan_segments', 'case_segments', 'suggestions']) {
      for (const r of this.store.all<{ text: string | null }>(`SELECT text FROM ${table} WHERE source_id = ?`, [sourceId])) if (r.text) texts.push(r.text);
    }
    return { source_id: sourceId, name: src.name, type: src.type, texts, segment_ids: segs.map((s) => s.id), av_segment_ids: av.map((a) => a.id) };
  }

  /** See {@link ProjectErasure.eraseSource}. Runs inside the caller's transaction. */
  eraseSource(sourceId: number, redactor: TextRedactor): ErasedRows {
    const db = this.store;
    const texts = this.sourceTexts(sourceId);
    const segIds = texts?.segment_ids ?? [];
    const avIds = texts?.av_segment_ids ?? [];
    db.setSecureDelete(true);
    try {
      const count = (sql: string, params: (string | number)[]) => db.run(sql, params).changes;
      // embeddings of its segment texts, unless another segment has the same text
      let dropHashes: string[] = [];
      if (db.get('SELECT 1 AS x FROM segment_embeddings LIMIT 1')) {
        const hashes = [...new Set(db.all<{ text: string }>('SELECT text FROM segments WHERE source_id = ?', [sourceId]).map((s) => textHash(s.text)))];
        const kept = new Set(db.all<{ text: string }>('SELECT text FROM segments WHERE source_id <> ?', [sourceId]).map((s) => textHash(s.text)));
        dropHashes = hashes.filter((h) => !kept.has(h));
      }
      const embeddings =
        dropHashes.length > 0 ? count('DELETE FROM segment_embeddings WHERE text_hash IN (SELECT value FROM json_each(?))', [JSON.stringify(dropHashes)]) : 0;
      const provenance = segIds.length > 0 ? count('DELETE FROM segment_provenance WHERE segment_id IN (SELECT value FROM json_each(?))', [idList(segIds)]) : 0;
      const guids =
        count("DELETE FROM exchange_guids WHERE kind = 'source' AND local_id = ?", [String(sourceId)]) +
        (segIds.length + avIds.length > 0
          ? count(
              `DELETE FROM exchange_guids WHERE kind IN (${SEGMENT_GUID_KINDS.map(() => '?').join(',')}) AND local_id IN (SELECT CAST(value AS TEXT) FROM json_each(?))`,
              [...SEGMENT_GUID_KINDS, idList([...segIds, ...avIds])],
            )
          : 0);
      const suggestions = count('DELETE FROM suggestions WHERE source_id = ?', [sourceId]);
      // a batch of this source that no longer holds a suggestion goes with them
      count('DELETE FROM suggestion_batches WHERE source_id = ? AND NOT EXISTS (SELECT 1 FROM suggestions s WHERE s.batch_id = suggestion_batches.id)', [
        sourceId,
      ]);
      const rows: ErasedRows = {
        segments: count('DELETE FROM segments WHERE source_id = ?', [sourceId]),
        av_segments: count('DELETE FROM av_segments WHERE source_id = ?', [sourceId]),
        orphan_segments: count('DELETE FROM orphan_segments WHERE source_id = ?', [sourceId]),
        case_segments: count('DELETE FROM case_segments WHERE source_id = ?', [sourceId]),
        case_memberships: count('DELETE FROM case_sources WHERE source_id = ?', [sourceId]),
        suggestions,
        segment_provenance: provenance,
        embeddings,
        source_attributes: this.hasTable('source_attributes') ? count('DELETE FROM source_attributes WHERE source_id = ?', [sourceId]) : 0,
        metadata_hints: count('DELETE FROM source_metadata_hints WHERE source_id = ?', [sourceId]),
        exchange_guids: guids,
        events_redacted: 0,
        approvals_redacted: 0,
        reports_redacted: 0,
        suggestions_redacted: 0,
      };
      db.run('DELETE FROM sources WHERE id = ?', [sourceId]);
      // until the file is rewritten (compactAfterCommit), a reopened project must rewrite it (see the constructor)
      db.run(`INSERT INTO meta(key, value) VALUES ('${PENDING_KEY}', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value`, [String(sourceId)]);
      // FTS4 keeps deleted terms in its older index segments until they are merged: merge them all
      db.run("INSERT INTO source_fts(source_fts) VALUES ('optimize')");
      db.run("INSERT INTO segment_fts(segment_fts) VALUES ('optimize')");
      rows.events_redacted = this.redactEvents(redactor);
      rows.approvals_redacted = this.redactApprovals(redactor);
      rows.reports_redacted = this.redactReports(redactor);
      // suggestions and batches of other sources or of none (code suggestions quote sample contexts)
      rows.suggestions_redacted =
        this.redactColumns(
          'suggestions',
          'id',
          ['text', 'sample_contexts', 'rationale', 'details', 'memo', 'feedback', 'result', 'reason', 'error'],
          redactor,
        ) + this.redactColumns('suggestion_batches', 'id', ['rationale', 'params', 'response_reason'], redactor);
      return rows;
    } finally {
      db.setSecureDelete(false);
    }
  }

  /** See {@link ProjectErasure.compactAfterCommit}. */
  compactAfterCommit(): void {
    if (this.store.inTransaction) this.compactPending = true;
    else this.store.vacuum();
  }

  private hasTable(name: string): boolean {
    return this.store.get("SELECT 1 AS x FROM sqlite_master WHERE type = 'table' AND name = ?", [name]) !== undefined;
  }

  /**
   * Redacts every stored event payload that holds the text, in place (same sequence number, same stored
   * form: an array-shaped payload stays an array of its shape). Reads the log in pages of 5,000 events.
   */
  private redactEvents(redactor: TextRedactor): number {
    let n = 0;
    let after = 0;
    for (;;) {
      const page = this.store.all<{ seq: number; payload: string }>('SELECT seq, payload FROM events WHERE seq > ? ORDER BY seq LIMIT 5000', [after]);
      if (page.length === 0) return n;
      for (const r of page) {
        const next = redactPayload(r.payload, redactor);
        if (next !== null) {
          this.store.run('UPDATE events SET payload = ? WHERE seq = ?', [next, r.seq]);
          n++;
        }
      }
      after = page[page.length - 1]!.seq;
    }
  }

  private redactApprovals(redactor: TextRedactor): number {
    let n = 0;
    for (const r of this.store.all<{ request_id: string; arguments: string; result: string | null; description: string }>(
      'SELECT request_id, arguments, result, description FROM approval_requests',
    )) {
      const args = redactor.redactJsonText(r.arguments);
      const result = r.result === null ? null : redactor.redactJsonText(r.result);
      const description = redactor.redactString(r.description);
      // a request naming the source or one of its segments may quote a passage in its description (TextRedactor.mentions)
      let named = false;
      try {
        named = redactor.mentions(JSON.parse(r.arguments));
      } catch {
        // arguments that are not JSON: the needle search above is all there is
      }
      if (args === null && result === null && description === r.description && !named) continue;
      // the description quotes arguments or a passage: only its opening words are kept (up to the first ':' or
      // quoted name), "merge 'A' (2 passages)..." -> "merge: [erased]", "Apply Code: text=..." -> "Apply Code: [erased]"
      const desc = args !== null || result !== null || named ? `${r.description.split(/[:']/u)[0]!.trimEnd()}: [erased]` : description;
      this.store.run('UPDATE approval_requests SET arguments = ?, result = ?, description = ? WHERE request_id = ?', [
        args ?? r.arguments,
        result ?? r.result,
        desc,
        r.request_id,
      ]);
      n++;
    }
    return n;
  }

  /** Redacts the text in `columns` of every row of `table` (JSON or plain text); returns the rows changed. */
  private redactColumns(table: string, key: string, columns: readonly string[], redactor: TextRedactor): number {
    let n = 0;
    for (const r of this.store.all<Record<string, string | number | null>>(`SELECT ${key} AS k, ${columns.join(', ')} FROM ${table}`)) {
      const changed: [string, string][] = [];
      for (const c of columns) {
        const v = r[c];
        if (typeof v !== 'string' || v.length < 16) continue;
        const next = redactor.redactJsonText(v);
        if (next !== null) changed.push([c, next]);
      }
      if (changed.length === 0) continue;
      this.store.run(`UPDATE ${table} SET ${changed.map(([c]) => `${c} = ?`).join(', ')} WHERE ${key} = ?`, [...changed.map(([, v]) => v), r.k as number]);
      n++;
    }
    return n;
  }

  private redactReports(redactor: TextRedactor): number {
    let n = 0;
    for (const r of this.store.all<{ id: number; result: string | null; filters: string; params: string }>('SELECT id, result, filters, params FROM reports')) {
      const result = r.result === null ? null : redactor.redactJsonText(r.result);
      const filters = redactor.redactJsonText(r.filters);
      const params = redactor.redactJsonText(r.params);
      if (result === null && filters === null && params === null) continue;
      this.store.run('UPDATE reports SET result = ?, filters = ?, params = ? WHERE id = ?', [
        result ?? r.result,
        filters ?? r.filters,
        params ?? r.params,
        r.id,
      ]);
      n++;
    }
    return n;
  }
}

/**
 * A stored event payload (src/store/eventRows.ts) with the text redacted, in the same stored form, or null when
 * it holds none. A payload of a known shape is redacted as the object it reads back as (so `source_id` is seen),
 * then stored in its shape again; any other JSON is redacted as it is.
 */
export function redactPayload(stored: string, redactor: TextRedactor): string | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(stored);
  } catch {
    const r = redactor.redactString(stored);
    return r === stored ? null : r;
  }
  if (Array.isArray(parsed) && typeof parsed[0] === 'number' && PAYLOAD_SHAPES[parsed[0]]?.length === parsed.length - 1) {
    const r = redactor.redactValue(payloadFromStored(stored));
    return r.changed ? payloadToStored(r.value as Record<string, unknown>) : null;
  }
  const r = redactor.redactValue(parsed);
  return r.changed ? JSON.stringify(r.value) : null;
}
