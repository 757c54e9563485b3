/**
 * The coding steps of the applier (../applyPlan.ts): text codings, audio and video codings, and the report of
 * what re-anchoring by quote did, named as imported.
 */
import { applyAvCode } from '../../../domain/av';
import { applyCode } from '../../../domain/coding';
import { anchoringCounts, recordAnchoring } from '../../reanchor';
import type { PlanRef } from '../plan';
import { stamped, type Applying } from './state';

/** The names of sources and codes as imported, for messages and the anchoring report; looked up once per item (a lookup is a query). */
class Names {
  private readonly sources = new Map<PlanRef, string>();
  private readonly codes = new Map<PlanRef, string>();
  private readonly planSources: Map<PlanRef, string>;
  private readonly planCodes: Map<PlanRef, string>;
  constructor(private readonly a: Applying) {
    this.planSources = new Map([...a.plan.sources, ...(a.plan.media_sources ?? [])].map((s) => [s.ref, s.name]));
    this.planCodes = new Map(a.plan.codes.map((c) => [c.ref, c.name]));
  }

  source(ref: PlanRef): string {
    let name = this.sources.get(ref);
    if (name === undefined) {
      const id = this.a.sourceIds.get(ref);
      name = (id !== undefined ? this.a.ctx.repo.getSource(id)?.name : undefined) ?? this.a.sourceNames.get(ref) ?? this.planSources.get(ref) ?? ref;
      this.sources.set(ref, name);
    }
    return name;
  }

  /** The code's name as imported; `fallback` (default: its name in the plan, else the ref) for a code the import did not write. */
  code(ref: PlanRef | null, fallback?: string): string {
    if (ref === null) return fallback ?? '';
    let name = this.codes.get(ref);
    if (name === undefined) {
      const id = this.a.codeIds.get(ref);
      name = (id !== undefined ? this.a.ctx.repo.getCode(id)?.name : undefined) ?? fallback ?? this.planCodes.get(ref) ?? ref;
      this.codes.set(ref, name);
    }
    return name;
  }
}

/**
 * Writes the plan's text codings (each by the file's coder at the file's time): an identical coding (same code,
 * source and range) is kept, not duplicated. A coding of a code or source the plan does not hold fails the
 * import, or under the `skip` rule is counted in `codings_of_unknown_codes_or_sources`.
 */
export function applySegments(a: Applying): Names {
  const { ctx, report } = a;
  const names = new Names(a);
  const textCache = new Map<number, string | null>();
  for (const g of a.plan.segments) {
    const codeId = a.codeIds.get(g.code);
    const sourceId = a.sourceIds.get(g.source);
    a.at = () => `the coding [${g.start_pos}, ${g.end_pos}) of code '${names.code(g.code)}' in source '${names.source(g.source)}'`;
    if (codeId === undefined || sourceId === undefined) {
      a.unknownRef(
        'codings_of_unknown_codes_or_sources',
        () => `A coding refers to ${codeId === undefined ? `code ${g.code}` : `source ${g.source}`}, which the file does not hold`,
      );
      continue;
    }
    const r = applyCode(
      stamped(ctx, g.owner, g.created_at),
      { code_id: codeId, source_id: sourceId, start_pos: g.start_pos, end_pos: g.end_pos, memo: g.memo, importance: g.importance },
      textCache,
    );
    if (r.created) {
      report.created.segments++;
      a.guids.keep('coding', r.segment.segment_id, g.guid, true);
      a.guids.keep('selection', r.segment.segment_id, g.selection_guid, true);
      a.guids.keep('note', `segment:${r.segment.segment_id}`, g.note_guid, true);
    } else report.reused.segments++;
    a.tick();
  }
  return names;
}

/**
 * Writes the plan's audio and video codings `[start_ms, end_ms)`: an identical one is kept once; one overlapping
 * another of the same code on the same source is left out (Marginalia's rule 5) and counted, as are codings of
 * sources that are not audio or video and (under `skip`) of codes or sources the plan does not hold.
 */
export function applyAvSegments(a: Applying, names: Names): void {
  const { ctx } = a;
  const counts = a.report.av_segments ?? { created: 0, reused: 0 };
  for (const g of a.plan.av_segments ?? []) {
    const codeId = a.codeIds.get(g.code);
    const sourceId = a.sourceIds.get(g.source);
    a.at = () => `the AV coding [${g.start_ms}, ${g.end_ms}) ms of code '${names.code(g.code)}' in source '${names.source(g.source)}'`;
    a.tick();
    if (codeId === undefined || sourceId === undefined) {
      a.unknownRef(
        'codings_of_unknown_codes_or_sources',
        () => `An AV coding refers to ${codeId === undefined ? `code ${g.code}` : `source ${g.source}`}, which the file does not hold`,
      );
      continue;
    }
    const source = ctx.repo.getSource(sourceId);
    if (source?.type !== 'audio' && source?.type !== 'video') {
      a.skip('av_codings_of_non_media_sources');
      continue;
    }
    const overlapping = ctx.repo.avSegmentsOverlapping(codeId, sourceId, g.start_ms, g.end_ms);
    if (overlapping.some((o) => o.start_ms === g.start_ms && o.end_ms === g.end_ms)) {
      counts.reused++;
      continue;
    }
    if (overlapping.length > 0) {
      a.skip('av_codings_overlapping_the_same_code');
      continue;
    }
    const seg = applyAvCode(stamped(ctx, g.owner, g.created_at), {
      code_id: codeId,
      source_id: sourceId,
      start_ms: g.start_ms,
      end_ms: g.end_ms,
      transcript: g.transcript,
      memo: g.memo,
    });
    counts.created++;
    a.guids.keep('av_coding', seg.segment_id, g.guid, true);
    a.guids.keep('av_selection', seg.segment_id, g.selection_guid, true);
    a.guids.keep('note', `av_segment:${seg.segment_id}`, g.note_guid, true);
  }
}

/** Names the plan's `quote_anchoring` (by refs) as imported, into the report's `anchoring` and `anchoring_counts`. */
export function reportAnchoring(a: Applying, names: Names): void {
  const report = a.report;
  if (!a.plan.quote_anchoring || !report.anchoring) return;
  for (const x of a.plan.quote_anchoring) {
    recordAnchoring(
      report.anchoring,
      { status: x.status, start_pos: x.start_pos, end_pos: x.end_pos },
      { source: names.source(x.source), code: names.code(x.code, x.code_name) },
      { start_pos: x.stored_start_pos, end_pos: x.stored_end_pos },
      x.quote,
    );
  }
  report.anchoring_counts = anchoringCounts(report.anchoring);
}
