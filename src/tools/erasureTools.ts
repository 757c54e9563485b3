import * as path from 'node:path';
import { z } from 'zod';
import { ToolError } from '../core/errors';
import { TextRedactor, type AuditRedaction, type HistoryErasureResult, type SourceTexts } from '../domain/erasure';
import { findCopiesOfText, type FoundCopy } from '../exchange/erasureScan';
import { defineTool } from './defineTool';
import { args, id } from './schemas';

/**
 * erase_source (issue 15, item 9): when a participant withdraws consent, the researcher removes the transcript
 * and every trace of its text that Marginalia keeps. The work is split by the pipeline's stages:
 * - `prepare` (asynchronous, before anything in the database changes): reads the source's texts, rewrites the
 *   version history without them (src/vcs/historyErasure.ts; snapshots taken meanwhile leave the source out
 *   too) and, while git works, rewrites the audit log lines that hold them (src/agent/auditLog.ts) and looks
 *   for copies under the project's folder (src/exchange/erasureScan.ts).
 * - `run` (one transaction): deletes the source and every row keyed by it and redacts its text in event
 *   payloads, approval requests and reports (src/store/erasureStore.ts), then, once the transaction is
 *   durable, VACUUM and a checkpoint rewrite the project file and empty the journal.
 * The history and the audit log before the database: git is the step most likely to fail, and when it fails
 * the source is still there (at most its audit lines are already redacted) and the call can be repeated.
 */

/** What `prepare` hands to `run`. */
interface Prepared {
  texts: SourceTexts;
  redactor: TextRedactor;
  history: HistoryErasureResult | null;
  audit: Awaited<ReturnType<AuditRedaction['redactAudit']>> | null;
  copies: FoundCopy[];
}

/** What erase_source leaves in place, said in every report. */
const NOT_ERASED = [
  'copies listed in `copies_found` (exports, the file a source was imported from): review and delete them yourself',
  'memos written by the researcher (code, case, segment and source memos of other sources), even when they quote the transcript',
  "pieces of the text shorter than 16 code points found outside the source (they would erase other participants' words too)",
  'the source name in the event log (source.imported, source.deleted) and in snapshot messages',
  'lengths and SHA-256 hashes of long arguments in the audit log (no text)',
  'backups, copies of the project made elsewhere, clones of the history, and disk blocks the file system has not reused',
];

export const eraseSourceOutput = z.object({
  erased: z.literal(true),
  source_id: z.number(),
  source_name: z.string(),
  source_type: z.string(),
  database: z.object({
    segments: z.number(),
    av_segments: z.number(),
    orphan_segments: z.number(),
    case_segments: z.number(),
    case_memberships: z.number(),
    suggestions: z.number(),
    segment_provenance: z.number(),
    embeddings: z.number(),
    source_attributes: z.number(),
    metadata_hints: z.number(),
    exchange_guids: z.number(),
    events_redacted: z.number().describe('events whose payload held the text: redacted in place, kept in sequence'),
    approvals_redacted: z.number(),
    reports_redacted: z.number(),
    suggestions_redacted: z.number(),
    file_rewritten: z.boolean().describe('VACUUM and a checkpoint after the transaction: no free page and no journal line keeps the text'),
  }),
  audit_log: z
    .object({ path: z.string().nullable(), lines: z.number(), lines_rewritten: z.number() })
    .nullable()
    .describe('null when the audit log is not reachable from this host (no agent layer)'),
  history: z
    .object({
      initialized: z.boolean(),
      snapshots: z.number(),
      snapshots_rewritten: z.number(),
      files_rewritten: z.number(),
      duration_ms: z.number(),
      prune_ms: z.number(),
    })
    .nullable()
    .describe('null when the host keeps no history'),
  copies_found: z
    .array(z.object({ path: z.string(), relative: z.string(), bytes: z.number(), entries: z.array(z.string()).optional() }))
    .describe('files under the project folder that still hold the text: listed, not deleted'),
  not_erased: z.array(z.string()),
});

export const eraseSourceTool = defineTool({
  name: 'erase_source',
  group: 'source',
  title: 'Erase Source',
  description:
    'Researcher only (agents get APPROVAL_FORBIDDEN): erase a source for good when a participant withdraws consent. Removes the source, its ' +
    'text and AV segments, case ranges, suggestions, provenance and embeddings; redacts its text ("[erased]") in stored event payloads ' +
    '(events are kept, in sequence), approval requests, reports and the audit log; rewrites every version-history snapshot without it and ' +
    'prunes git so no object holds it; rewrites the project file (VACUUM) and empties the journal. Files under the project folder that still ' +
    'hold the text (exports, the imported transcript) are listed in copies_found, never deleted. Cannot be undone: confirm must be true. ' +
    'Returns a report of what was erased and what was not. Errors: SOURCE_NOT_FOUND, INVALID_ARGUMENTS (confirm not true), APPROVAL_FORBIDDEN, ' +
    'TOOL_EXECUTION_ERROR (git failing: nothing was erased).',
  input: args({
    source_id: id('the source to erase'),
    confirm: z
      .literal(true, { error: 'confirm must be true: erasure cannot be undone (remove_source previews a source and its segments)' })
      .describe('must be true: erasure cannot be undone'),
  }),
  effect: 'destroy',
  trust: 'delete',
  researcherOnly: true,
  output: eraseSourceOutput,
  prepare: async (input, ctx): Promise<Prepared> => {
    const ports = ctx.erasure;
    if (!ports?.store || !ctx.projectPath)
      throw new ToolError('TOOL_EXECUTION_ERROR', 'This host cannot erase sources (no project store with erasure support); nothing was erased.');
    const texts = ports.store.sourceTexts(input.source_id);
    if (!texts) throw new ToolError('SOURCE_NOT_FOUND', `No source with source_id ${input.source_id}. list_sources shows the sources.`);
    const redactor = new TextRedactor(input.source_id, texts.texts, [...texts.segment_ids, ...texts.av_segment_ids]);
    ctx.progress?.({ message: 'Rewriting the version history and the audit log', done: 0, total: 2, unit: 'items' });
    // git works in child processes while the audit log and the folder are searched here
    const historyJob = ports.history
      ? ports.history.eraseFromHistory({ source_id: input.source_id, segment_ids: [...texts.segment_ids, ...texts.av_segment_ids], redactor })
      : Promise.resolve(null);
    historyJob.catch(() => undefined); // awaited below; not unhandled meanwhile
    const audit = ports.audit ? await ports.audit.redactAudit(redactor) : null;
    const project = path.resolve(ctx.projectPath);
    const dir = path.dirname(project);
    const own = new Set([
      project,
      `${project}-journal`,
      `${project}.lock`,
      path.join(dir, '.marginalia', 'history'),
      path.join(dir, '.marginalia', 'history.git'),
      ...(audit?.path ? [path.resolve(audit.path)] : []),
    ]);
    const copies = await findCopiesOfText(dir, redactor, (abs) => own.has(abs) || abs.startsWith(`${project}.tmp-`));
    const history = await historyJob;
    ctx.progress?.({ message: 'Erasing from the project', done: 1, total: 2, unit: 'items' });
    return { texts, redactor, history, audit, copies };
  },
  run: (ctx, input, prepared) => {
    const erasure = ctx.project.erasure;
    if (!erasure) throw new ToolError('TOOL_EXECUTION_ERROR', 'This host cannot erase sources; nothing was erased.');
    if (!erasure.sourceTexts(input.source_id))
      throw new ToolError('SOURCE_NOT_FOUND', `Source ${input.source_id} was removed while its erasure was being prepared.`);
    const rows = erasure.eraseSource(input.source_id, prepared.redactor);
    ctx.domain.events.emit({
      event_type: 'source.deleted',
      aggregate_type: 'source',
      aggregate_id: String(input.source_id),
      payload: { source_id: input.source_id, name: prepared.texts.name, erased: true },
    });
    erasure.compactAfterCommit();
    const h = prepared.history;
    return {
      erased: true as const,
      source_id: input.source_id,
      source_name: prepared.texts.name,
      source_type: prepared.texts.type,
      database: { ...rows, file_rewritten: true },
      audit_log: prepared.audit ? { path: prepared.audit.path, lines: prepared.audit.lines, lines_rewritten: prepared.audit.lines_rewritten } : null,
      history: h
        ? {
            initialized: h.initialized,
            snapshots: h.snapshots,
            snapshots_rewritten: h.snapshots_rewritten,
            files_rewritten: h.files_rewritten,
            duration_ms: Math.round(h.duration_ms),
            prune_ms: Math.round(h.prune_ms),
          }
        : null,
      copies_found: prepared.copies.map((c) => ({ path: c.path, relative: c.relative, bytes: c.bytes, ...(c.entries ? { entries: c.entries } : {}) })),
      not_erased: NOT_ERASED,
    };
  },
});
