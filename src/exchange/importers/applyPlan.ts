/**
 * THE import applier: writes an import plan (plan.ts) of any format (QualCoder, RQDA, Taguette, CSV, code
 * lists, analytics, REFI-QDA) through the domain services, in the caller's one transaction (a tool's `run`),
 * and reports what it created and reused. The steps, one file each under apply/: source names checked first
 * (sources.ts: a clash fails before anything is written), categories and codes (codebook.ts), folders and
 * sources (sources.ts), text and AV codings (segments.ts), cases (cases.ts).
 *
 * Merge rules, by GUID first (formats that carry them) and then by name as the spec's rules compare names:
 * - an item whose GUID the project already knows (stored from an earlier import, or derived from the project's
 *   own GUID: a Marginalia export imported back) is that item; the file's GUIDs are stored for what the import
 *   created, and for what it reused when that had no stored GUID yet;
 * - categories, codes and cases: an existing one with the same name (case-insensitive) is used as it is; an
 *   existing uncategorised code is put into the planned category; a code in another category stays there
 *   (warning). New codes without a colour take the next palette colour no code uses yet.
 * - folders: an existing folder of the same name within the same parent is used.
 * - sources: an existing source of the same name is used only when its text is exactly the planned text (media:
 *   of the same type), so re-importing a file is harmless; any other clash fails the whole import, listing
 *   every clash.
 * - segments: an identical coding (same code, source and range) is kept, not duplicated.
 * - cases get the planned sources, ranges and attributes; attributes of the same name are overwritten, others
 *   kept; document attributes of a source (created or reused) are written in one step after it.
 * - the plan's {@link MergeRules} say what differs by format: two items of the file with the same name merged
 *   or kept apart (renamed, reported in `renamed`), unknown references failing or skipped, mistyped attribute
 *   values failing or kept as text, one case attribute event per case or per value.
 * Coders and creation times named by the file are kept on what is created; the session is always the importing
 * one. Progress: an `apply` report every 1000 items and at the end.
 *
 * Every domain error is turned into IMPORT_FAILED naming the item, and thrown: the caller's transaction then
 * rolls back, so nothing of the plan stays. Errors: IMPORT_FAILED (details.cause_code holds the domain code).
 */
import { isToolError, ToolError } from '../../core/errors';
import { fitName, type ImportPlan, type ImportProgress } from './plan';
import { anchoringCounts, emptyAnchoringReport } from '../reanchor';
import { applyCases } from './apply/cases';
import { applyCategories, applyCodes } from './apply/codebook';
import { applyAvSegments, applySegments, reportAnchoring } from './apply/segments';
import { applyFolders, applySources, checkSources } from './apply/sources';
import { Applying, zeroCounts, type Ctx, type ImportReport } from './apply/state';

export type { ImportCounts, ImportReport, RenamedKind } from './apply/state';

/** Writes `plan` into the project (see the module comment for the rules). Runs inside the caller's transaction. Errors: IMPORT_FAILED. */
export function applyImportPlan(ctx: Ctx, plan: ImportPlan, onProgress?: (p: ImportProgress) => void): ImportReport {
  const a = new Applying(ctx, plan, newReport(plan), onProgress);
  try {
    for (const u of plan.users ?? []) {
      const name = fitName(u.name, 100, u.name);
      a.renamed('coder', u.name, name, 100);
      a.guids.keep('user', name, u.guid, false);
    }
    checkSources(a);
    applyCodes(a, applyCategories(a));
    applyFolders(a);
    applySources(a);
    const names = applySegments(a);
    applyAvSegments(a, names);
    applyCases(a);
    reportAnchoring(a, names);
  } catch (e) {
    if (isToolError(e) && e.code === 'IMPORT_FAILED') throw e;
    if (isToolError(e)) {
      const item = a.at();
      throw new ToolError('IMPORT_FAILED', `Import failed at ${item}: ${e.message} (${e.code}); nothing was imported`, { cause_code: e.code, item });
    }
    throw e;
  }
  return a.report;
}

/** The report before anything is written: the plan's skips and warnings, and REFI-QDA's account of the file. */
function newReport(plan: ImportPlan): ImportReport {
  const report: ImportReport = {
    format: plan.format,
    file: plan.file,
    created: zeroCounts(),
    reused: zeroCounts(),
    codes_moved: 0,
    case_sources_linked: 0,
    case_ranges_added: 0,
    attributes_set: 0,
    source_attributes_set: 0,
    skipped: { ...plan.skipped },
    warnings: [...plan.warnings],
  };
  if (plan.refi) {
    Object.assign(report, {
      producer: plan.refi.producer,
      offset_convention: plan.refi.offset_convention,
      file_counts: plan.refi.file_counts,
      av_segments: { created: 0, reused: 0 },
      renamed: [],
      media_dir: plan.refi.media_dir,
      missing_sources: plan.refi.missing_sources,
    });
  }
  if (plan.anchoring) Object.assign(report, { anchoring: plan.anchoring, anchoring_counts: anchoringCounts(plan.anchoring) });
  else if (plan.quote_anchoring)
    Object.assign(report, { anchoring: emptyAnchoringReport(), anchoring_counts: { reanchored: 0, kept_offsets: 0, unplaceable: 0 } });
  return report;
}
